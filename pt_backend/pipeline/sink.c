/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/sink.c - type filter, symbol definitions, ring writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

/* Which operands of each type are code addresses: bit 0 a, bit 1 b. */
static const uint8_t addr_fields[STRACE_EV_MAX] = {
#define ADDR_FIELDS(ID, VAL, NAME, FAM, AN, AK, BN, BK, DESC)                  \
	[VAL] = (STRACE_FK_##AK == STRACE_FK_ADDR) |                           \
		(STRACE_FK_##BK == STRACE_FK_ADDR) << 1,
	STRACE_EVENT_TYPES(ADDR_FIELDS)
#undef ADDR_FIELDS
};

static inline __attribute__((always_inline)) int
put(struct strace_sink *s, const struct strace_event *ev)
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
	rc = strace_writer_define_symbol(s->w, s->syms, s->types, ev->tid,
					 ev->time, sym.start, sym.size,
					 sym.name);
	if (rc == 1 && (!s->types ||
			strace_typeset_has(s->types, STRACE_EV_SYMBOL)))
		s->events++;
	return rc < 0 ? rc : 0;
}

/* Make sure the symbol holding addr is defined before it is used: most
 * addresses were handled lately (one probe, inline). */
static inline int define_symbol(struct strace_sink *s,
				const struct strace_event *ev, uint64_t addr)
{
	/* a multiply's high bits, of the address with its page folded in
	 * (callgrind on the benchmark trace: as few misses as a full mix
	 * of the bits, in 2 of its 6 instructions; the multiply alone
	 * missed 40 times as often) */
	size_t slot = (size_t)((addr ^ (addr >> 12)) * 0x9e3779b97f4a7c15ull >>
			       (64 - STRACE_SINK_CACHE_LOG));

	if (s->cache[slot] == addr)
		return 0;
	return define_symbol_slow(s, ev, addr, slot);
}

static inline __attribute__((always_inline)) int
emit1(struct strace_sink *s, const struct strace_event *ev)
{
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

int strace_sink_emit(void *arg, const struct strace_event *ev)
{
	return emit1(arg, ev);
}

int strace_sink_emit_batch(void *arg, const struct strace_event *ev,
			   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = emit1(arg, &ev[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}
