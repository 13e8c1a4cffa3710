/* SPDX-License-Identifier: MIT */
/*
 * decoder/tnt_cache.c - the cache of recorded TNT runs: making, keeping
 * and dropping records (tnt_cache.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "decoder/internal.h"
#include "decoder/spread.h"
#include "decoder/tnt_cache.h"

/* The item array's mapping: TC_ITEMS items, then a page no access may
 * touch, right after the last item (x86-64's pages are 4 KiB). */
#define ITEMS_BYTES (TC_ITEMS * sizeof(struct tc_item))
#define GUARD_BYTES 4096
_Static_assert(ITEMS_BYTES % GUARD_BYTES == 0,
	       "the TNT run items fill whole pages");

/*
 * The item array: whole at once, no growing, in a mapping of its own.
 * Its pages are given as records first fill them (a short trace touches
 * few), and a growing array's moves (mremap) would cost every other
 * thread of the process a TLB shootdown (a parallel decode's workers each
 * have a cache). mmap() says so where malloc() need not: glibc serves a
 * 3 MiB block from its heap once one was freed (the threshold follows
 * the sizes freed), and a sanitizer's malloc() writes shadow for all of
 * it, for each walker made (half the time a fuzz input took). A write
 * past the end faults at once. NULL when out of memory.
 */
static struct tc_item *items_map(void)
{
	char *p = mmap(NULL, ITEMS_BYTES + GUARD_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + ITEMS_BYTES, GUARD_BYTES, PROT_NONE) < 0) {
		munmap(p, ITEMS_BYTES + GUARD_BYTES);
		return NULL;
	}
	return (struct tc_item *)(void *)p;
}

struct tcache *strace_dec_tc_new(void)
{
	struct tcache *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->slot = strace_dec_zalloc(1u << TC_LOG_START, sizeof(*t->slot));
	t->shift = 64 - TC_LOG_START;
	t->item = items_map();
	if (!t->slot || !t->item) {
		strace_dec_tc_free(t);
		return NULL;
	}
	return t;
}

void strace_dec_tc_free(struct tcache *t)
{
	if (t) {
		free(t->slot);
		if (t->item)
			munmap(t->item, ITEMS_BYTES + GUARD_BYTES);
	}
	free(t);
}

void strace_dec_tc_flush(struct tcache *t)
{
	if (!t)
		return;
	memset(t->slot, 0, sizeof(*t->slot) << (64 - t->shift));
	t->used = 0;
}

/* Twice the slots, the records kept (where three now meet, two): a trace
 * that makes more records than the table holds (records kept keep moving
 * others away) uses the bigger table; a short one never touches its
 * pages. No memory: the table stays as it is. */
static void tc_grow_slots(struct tcache *t)
{
	size_t n = (size_t)1 << (64 - t->shift);
	struct tc_slot *v = strace_dec_zalloc(2 * n, sizeof(*v));

	t->kept = 0;
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct tc_slot *e = &t->slot[i];
		size_t j;

		if (!e->ip)
			continue;
		j = tc_hash(e->ip, e->key) >> (t->shift - 1);
		v[v[j].ip ? j ^ 1 : j] = *e;
	}
	free(t->slot);
	t->slot = v;
	t->shift--;
}

void strace_dec_tc_rec_event(struct tc_rec *r, int in_adv, unsigned type,
			     unsigned flags, uint64_t a, uint64_t b,
			     uint64_t insns)
{
	struct tc_item *it;

	if (r->nev == TC_MAX_ITEMS || insns - r->insns0 > UINT16_MAX) {
		r->full = 1;
		return;
	}
	it = &r->ev[r->nev++];
	it->insn_off = (uint16_t)(insns - r->insns0);
	it->a = a;
	it->b = b;
	it->type = (uint16_t)type;
	it->flags = (uint16_t)flags;
	if (in_adv)
		it->cls = r->bits_done ? TC_ADV : TC_PRE;
	else
		it->cls = r->outer ? TC_DYN : TC_RES;
	r->npre += it->cls == TC_PRE;
}

/* n items from from, to the pool. */
static void put_items(struct tcache *t, const struct tc_item *from,
		      unsigned n)
{
	memcpy(&t->item[t->used], from, n * sizeof(*from));
	t->used += n;
}

/* n stack operations from ops, to the pool as items. */
static void put_ops(struct tcache *t, const uint64_t *ops, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		t->item[t->used++] = (struct tc_item){.a = ops[i]};
}

void strace_dec_tc_keep(struct tcache *t, uint64_t ip, unsigned key,
			int nbits, uint64_t end_ip, uint64_t branches,
			uint64_t insns)
{
	struct tc_rec *r = &t->rec;
	struct tc_slot *e;
	unsigned ev = 0, op = 0; /* the items put so far */

	if (t->used + r->nev + r->nops + 2 * r->nseg > TC_ITEMS)
		strace_dec_tc_flush(t);
	e = tc_slot_of(t, ip, key);
	if (e->ip && (e->ip != ip || e->key != key)) {
		/* another record there: to the pair, or a bigger table when
		 * that happens for one in four slots */
		if (++t->kept > 1u << (62 - t->shift) &&
		    t->shift > 64 - TC_LOG) {
			tc_grow_slots(t);
			e = tc_slot_of(t, ip, key);
		}
		if (e->ip)
			e[((e - t->slot) & 1) ? -1 : 1] = *e;
	}
	e->ip = ip;
	e->key = key;
	e->end_ip = end_ip;
	e->first = t->used;
	e->branches = (uint32_t)branches;
	e->insns = (uint32_t)insns;
	e->res_off = (uint16_t)r->res_off;
	e->nbits = (uint8_t)nbits;
	e->outer = (uint8_t)r->outer;
	e->npre = (uint8_t)r->npre;
	/* the last segment ends where the record does */
	r->seg[r->nseg].nev = r->nev;
	r->seg[r->nseg].nops = r->nops;
	e->nev = (uint8_t)r->seg[0].nev;
	e->nops = (uint8_t)r->seg[0].nops;
	e->flags = r->nseg ? TCS_MORE : 0;
	for (unsigned i = 0; i < r->nev; i++)
		if (spread_stops(r->ev[i].type))
			e->flags |= TCS_STOPS;
	for (unsigned j = 0; j <= r->nseg; j++) {
		/* segment j: its events and operations, then its end */
		const struct tc_rec_seg *g = &r->seg[j];

		put_items(t, &r->ev[ev], g->nev - ev);
		put_ops(t, &r->ops[op], g->nops - op);
		ev = g->nev;
		op = g->nops;
		if (j == r->nseg)
			break;
		t->item[t->used++] = (struct tc_item){
			.a = g->to,
			.b = g->ret_ip,
			.type = (uint16_t)(g[1].nev - g->nev),
			.flags = (uint16_t)(g[1].nops - g->nops),
			.insn_off = (uint16_t)g->bits,
			.cls = TC_SEG};
		t->item[t->used++] = (struct tc_item){
			.a = g->branches,
			.b = g->insns,
			.type = j + 1 < r->nseg,
			.cls = TC_SEG};
	}
}

