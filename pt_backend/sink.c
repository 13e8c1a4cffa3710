/* SPDX-License-Identifier: MIT */
/* pt_backend/sink.c - type filter, symbol definitions, ring writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static void init_addr_fields(void);
static pthread_once_t addr_fields_once = PTHREAD_ONCE_INIT;

void strace_symset_init(struct strace_symset *s)
{
	/* every sink has a symset: the table the sinks read is ready */
	pthread_once(&addr_fields_once, init_addr_fields);
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
}

void strace_symset_fini(struct strace_symset *s)
{
	free(s->keys);
	pthread_mutex_destroy(&s->lock);
}

/* Returns 1 if key was newly added, 0 if present, -ENOMEM. Caller locks. */
static int symset_add(struct strace_symset *s, uint64_t key)
{
	key = key ? key : 1;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		uint64_t *nk = calloc(nc, sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->keys[i])
				continue;
			size_t j = hash64(s->keys[i]) & (nc - 1);
			while (nk[j])
				j = (j + 1) & (nc - 1);
			nk[j] = s->keys[i];
		}
		free(s->keys);
		s->keys = nk;
		s->cap = nc;
	}
	size_t j = hash64(key) & (s->cap - 1);
	while (s->keys[j]) {
		if (s->keys[j] == key)
			return 0;
		j = (j + 1) & (s->cap - 1);
	}
	s->keys[j] = key;
	s->n++;
	return 1;
}

/* Which operands of each type are code addresses: bit 0 a, bit 1 b. */
static uint8_t addr_fields[STRACE_EV_MAX];

static void init_addr_fields(void)
{
	for (unsigned t = 0; t < STRACE_EV_MAX; t++) {
		const struct strace_event_info *in = strace_event_info(t);
		if (!in)
			continue;
		addr_fields[t] = (uint8_t)((in->a_kind == STRACE_FK_ADDR) |
					   (in->b_kind == STRACE_FK_ADDR) << 1);
	}
}

static int put(struct strace_sink *s, const struct strace_event *ev)
{
	struct strace_event *e = strace_writer_slot(s->w);
	if (!e)
		return ((struct strace_wbuf *)(void *)s->w)->err;
	*e = *ev;
	s->events++;
	return 0;
}

/* The symbol holding addr, unless addr was handled lately: defined. */
static __attribute__((noinline)) int
define_symbol_slow(struct strace_sink *s, const struct strace_event *ev,
		   uint64_t addr, size_t slot)
{
	struct strace_symbol sym;
	int rc;

	if (!addr || !s->img)
		return 0;
	s->cache[slot] = addr;
	if (strace_image_symbol(s->img, addr, &sym) < 0)
		return 0;
	pthread_mutex_lock(&s->syms->lock);
	rc = symset_add(s->syms, sym.start);
	pthread_mutex_unlock(&s->syms->lock);
	if (rc <= 0)
		return rc;
	uint64_t off;
	rc = strace_ring_add_string(s->ring, STRACE_EV_SYMBOL, sym.start,
				    sym.size, sym.name, strlen(sym.name), &off);
	if (rc < 0)
		return rc;
	struct strace_event d = {STRACE_EV_SYMBOL, 0, ev->tid, ev->time,
				 sym.start, off};
	return put(s, &d);
}

/* Make sure the symbol holding addr is defined before it is used: most
 * addresses were handled lately (one probe, inline). */
static inline int define_symbol(struct strace_sink *s,
				const struct strace_event *ev, uint64_t addr)
{
	size_t slot = (size_t)(hash64(addr) & (STRACE_SINK_CACHE - 1));

	if (s->cache[slot] == addr)
		return 0;
	return define_symbol_slow(s, ev, addr, slot);
}

int strace_sink_emit(void *arg, const struct strace_event *ev)
{
	struct strace_sink *s = arg;
	int rc;

	if (s->types && !strace_typeset_has(s->types, ev->type))
		return 0;
	if (ev->type < STRACE_EV_MAX && addr_fields[ev->type]) {
		if ((addr_fields[ev->type] & 1) &&
		    (rc = define_symbol(s, ev, ev->a)) < 0)
			return rc;
		if ((addr_fields[ev->type] & 2) &&
		    (rc = define_symbol(s, ev, ev->b)) < 0)
			return rc;
	}
	return put(s, ev);
}
