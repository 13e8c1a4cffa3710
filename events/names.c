/* SPDX-License-Identifier: MIT */
/*
 * events/names.c - reader-side names from a ring's string table
 * (strace/names.h).
 *
 * Entries live in chunks that never move, so that pointers to them stay
 * valid. Symbols and DSOs are kept as address ranges, sorted when a
 * lookup first follows an update; threads, processes and offsets are
 * open-addressing hash maps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "strace/names.h"

#define CHUNK_BITS 10
#define CHUNK (1u << CHUNK_BITS)

/* [start, end); end == start for a symbol of size 0 */
struct range {
	uint64_t start, end;
	const struct strace_name *e;
};

struct ranges {
	struct range *v;
	size_t n, cap;
	int sorted;
	size_t last; /* index of the last hit */
};

/* u64 -> entry; key 0 is the empty slot, so keys are stored + 1 */
struct map {
	struct slot {
		uint64_t key;
		const struct strace_name *e;
	} *slots;
	size_t count, cap;
};

struct strace_names {
	const struct strace_ring *ring;
	uint64_t next_off; /* where the next unread entry starts */
	struct strace_name **chunks;
	size_t count, nchunks;
	struct ranges syms, dsos;
	struct ranges aliases; /* by the start of their symbol */
	struct map threads, procs, offs;
	/* syscall sites -> the first entry of their number (sysnr) */
	struct map syssites, sysnr;
	/* DSO starts -> their base entries (aux: the ELF address there) */
	struct map dsobase;
	struct map info; /* enum strace_info -> its last entry */
	uint64_t gen;
	int corrupt;
	/* the last thread looked up: events come in runs of one thread */
	uint32_t last_tid;
	int last_valid;
	const struct strace_name *last_thread;
};

int strace_names_new(const struct strace_ring *ring, struct strace_names **out)
{
	struct strace_names *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->ring = ring;
	*out = n;
	return 0;
}

void strace_names_free(struct strace_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nchunks; i++)
		free(n->chunks[i]);
	free(n->chunks);
	free(n->syms.v);
	free(n->dsos.v);
	free(n->aliases.v);
	free(n->threads.slots);
	free(n->procs.slots);
	free(n->offs.slots);
	free(n->syssites.slots);
	free(n->sysnr.slots);
	free(n->dsobase.slots);
	free(n->info.slots);
	free(n);
}

/* --- maps ---------------------------------------------------------------- */

static struct slot *map_slot(const struct map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;

	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & mask;
	return &m->slots[i];
}

static const struct strace_name *map_get(const struct map *m, uint64_t key)
{
	const struct slot *s;

	if (!m->cap)
		return NULL;
	s = map_slot(m, key + 1);
	return s->key ? s->e : NULL;
}

/* Sets key's entry (replace: overwrite an existing one). */
static int map_put(struct map *m, uint64_t key, const struct strace_name *e,
		   int replace)
{
	struct slot *s;

	key++;
	if (2 * (m->count + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct map old = *m;
		m->slots = calloc(cap, sizeof(*m->slots));
		if (!m->slots) {
			*m = old;
			return -ENOMEM;
		}
		m->cap = cap;
		for (size_t k = 0; k < old.cap; k++)
			if (old.slots[k].key)
				*map_slot(m, old.slots[k].key) = old.slots[k];
		free(old.slots);
	}
	s = map_slot(m, key);
	if (!s->key) {
		m->count++;
		s->key = key;
		s->e = e;
	} else if (replace) {
		s->e = e;
	}
	return 0;
}

/* --- ranges -------------------------------------------------------------- */

static int range_add(struct ranges *r, const struct strace_name *e)
{
	struct range *x;

	if (r->n == r->cap) {
		struct range *v = strace_grow(r->v, &r->cap, sizeof(*v), 256);
		if (!v)
			return -ENOMEM;
		r->v = v;
	}
	x = &r->v[r->n++];
	x->start = e->key;
	x->end = e->key + e->aux < e->key ? UINT64_MAX : e->key + e->aux;
	x->e = e;
	r->sorted = 0;
	return 0;
}

static int range_cmp(const void *a_, const void *b_)
{
	const struct range *a = a_, *b = b_;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* larger first: the lookup takes the last range starting at or
	 * before an address, so of several at one start the shortest
	 * applies; then in the order read, for a stable result */
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->e->id < b->e->id ? -1 : a->e->id > b->e->id;
}

static const struct strace_name *range_find(struct ranges *r, uint64_t addr)
{
	const struct range *base, *x;
	size_t len;

	if (!r->n)
		return NULL;
	if (!r->sorted) {
		qsort(r->v, r->n, sizeof(*r->v), range_cmp);
		r->sorted = 1;
		r->last = SIZE_MAX;
	}
	if (r->last < r->n) {
		/* the last hit answers again only if it is still the last
		 * range starting at or before addr: ranges nest (a PLT stub's
		 * symbol inside _init's), and the inner one wins */
		x = &r->v[r->last];
		if (addr >= x->start && (addr < x->end || addr == x->start) &&
		    (r->last + 1 == r->n || r->v[r->last + 1].start > addr))
			return x->e;
	}
	/* the last range with start <= addr; branch-free halving */
	base = r->v;
	len = r->n;
	while (len > 1) {
		size_t half = len / 2;
		base = base[half].start <= addr ? base + half : base;
		len -= half;
	}
	if (base->start > addr || (addr >= base->end && addr != base->start))
		return NULL;
	r->last = (size_t)(base - r->v);
	return base->e;
}

/* --- update -------------------------------------------------------------- */

static struct strace_name *entry_new(struct strace_names *n)
{
	size_t c = n->count >> CHUNK_BITS;

	if (c == n->nchunks) {
		struct strace_name **v =
			realloc(n->chunks, (c + 1) * sizeof(*v));
		if (!v)
			return NULL;
		n->chunks = v;
		v[c] = malloc(CHUNK * sizeof(**v));
		if (!v[c])
			return NULL;
		n->nchunks++;
	}
	return &n->chunks[c][n->count & (CHUNK - 1)];
}

int strace_names_update(struct strace_names *n)
{
	struct strace_string s;
	int added = 0, rc;

	if (!n->ring || n->corrupt)
		return 0;
	for (;;) {
		uint64_t off = n->next_off;
		struct strace_name *e;

		rc = strace_ring_string_next(n->ring, &off, &s);
		if (rc == 0)
			break;
		if (rc < 0) {
			n->corrupt = 1;
			break;
		}
		e = entry_new(n);
		if (!e) {
			rc = -ENOMEM;
			break;
		}
		e->str = s.str;
		e->len = s.len;
		e->id = (uint32_t)n->count;
		e->kind = s.kind;
		e->key = s.key;
		e->aux = s.aux;
		e->off = n->next_off;
		rc = map_put(&n->offs, e->off, e, 1);
		if (rc == 0) {
			switch (s.kind) {
			case STRACE_EV_SYMBOL:
				rc = range_add(&n->syms, e);
				break;
			case STRACE_EV_DSO:
				rc = range_add(&n->dsos, e);
				break;
			case STRACE_EV_THREAD:
				if (s.key && s.key <= UINT32_MAX)
					rc = map_put(&n->threads, s.key, e, 1);
				break;
			case STRACE_EV_PROCESS:
				/* a later definition (an exec) renames */
				if (s.key && s.key <= UINT32_MAX)
					rc = map_put(&n->procs, s.key, e, 1);
				break;
			case STRACE_NAME_DSO_BASE:
				rc = map_put(&n->dsobase, s.key, e, 0);
				break;
			case STRACE_NAME_ALIAS:
				if (s.len)
					rc = range_add(&n->aliases, e);
				break;
			case STRACE_NAME_INFO:
				if (s.key && s.key < 256)
					rc = map_put(&n->info, s.key, e, 1);
				break;
			case STRACE_EV_SYSCALL:
				/* one entry per number: sites share it */
				if (s.aux >= 1u << 20 || !s.len)
					break;
				rc = map_put(&n->sysnr, s.aux, e, 0);
				if (rc == 0)
					rc = map_put(&n->syssites, s.key,
						     map_get(&n->sysnr, s.aux),
						     0);
				break;
			}
		}
		if (rc < 0)
			break;
		n->count++;
		n->next_off = off;
		added++;
	}
	if (added) {
		n->gen++;
		n->last_valid = 0;
	}
	if (n->corrupt)
		return -STRACE_E_CORRUPT;
	return rc < 0 ? rc : added;
}

/* --- lookups ------------------------------------------------------------- */

uint64_t strace_names_generation(const struct strace_names *n)
{
	return n->gen;
}

size_t strace_names_count(const struct strace_names *n)
{
	return n->count;
}

const struct strace_name *strace_names_symbol(struct strace_names *n,
					      uint64_t addr)
{
	return range_find(&n->syms, addr);
}

const struct strace_name *strace_names_dso(struct strace_names *n,
					   uint64_t addr)
{
	return range_find(&n->dsos, addr);
}

const struct strace_name *strace_names_info(struct strace_names *n,
					    unsigned what)
{
	return what ? map_get(&n->info, what) : NULL;
}

uint64_t strace_names_dso_offset(struct strace_names *n,
				 const struct strace_name *dso, uint64_t addr)
{
	const struct strace_name *b = map_get(&n->dsobase, dso->key);

	return addr - dso->key + (b ? b->aux : 0);
}

size_t strace_names_aliases(struct strace_names *n,
			    const struct strace_name *sym,
			    const struct strace_name **out, size_t max)
{
	struct ranges *r = &n->aliases;
	size_t lo = 0, hi = r->n, k = 0;

	if (!sym || sym->kind != STRACE_EV_SYMBOL || !r->n)
		return 0;
	if (!r->sorted) {
		qsort(r->v, r->n, sizeof(*r->v), range_cmp);
		r->sorted = 1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->v[mid].start < sym->key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->n && r->v[lo].start == sym->key; lo++, k++)
		if (k < max)
			out[k] = r->v[lo].e;
	return k;
}

const struct strace_name *strace_names_syscall(struct strace_names *n,
					       uint64_t addr)
{
	return map_get(&n->syssites, addr);
}

const struct strace_name *strace_names_thread(struct strace_names *n,
					      uint32_t tid)
{
	const struct strace_name *e;

	if (n->last_valid && n->last_tid == tid)
		return n->last_thread;
	e = map_get(&n->threads, tid);
	if (!e)
		e = map_get(&n->procs, tid);
	n->last_tid = tid;
	n->last_thread = e;
	n->last_valid = 1;
	return e;
}

const struct strace_name *strace_names_process(struct strace_names *n,
					       uint32_t pid)
{
	return map_get(&n->procs, pid);
}

const struct strace_name *strace_names_at(struct strace_names *n, uint64_t off)
{
	return map_get(&n->offs, off);
}

const struct strace_name *strace_names_get(const struct strace_names *n,
					   uint32_t id)
{
	if (id >= n->count)
		return NULL;
	return &n->chunks[id >> CHUNK_BITS][id & (CHUNK - 1)];
}

int strace_names_corrupt(const struct strace_names *n, uint64_t *off)
{
	if (off)
		*off = n->next_off;
	return n->corrupt;
}
