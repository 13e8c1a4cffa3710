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

/* A call, return or jump whose addresses this sink named before, a
 * parallel decode says (STRACE_F_NAMED, which the sink clears). */
static inline int named(const struct strace_event *ev)
{
	return (ev->flags & STRACE_F_NAMED) && strace_named_type(ev->type);
}

static inline __attribute__((always_inline)) int
put(struct strace_sink *s, const struct strace_event *ev)
{
	struct strace_event *e = strace_writer_slot(s->w);
	if (!e)
		return strace_writer_error(s->w);
	*e = *ev;
	s->events++;
	return 0;
}

/* The other names of the symbol just defined at start (the image's
 * aliases: _IO_puts for puts), right after it. */
static int name_aliases(struct strace_sink *s, uint64_t start)
{
	const char *al[STRACE_ALIASES_MAX];
	size_t n = strace_image_aliases(s->img, start, al,
					STRACE_ALIASES_MAX);
	int rc = 0;

	for (size_t i = 0; i < n && i < STRACE_ALIASES_MAX && rc >= 0;
	     i++)
		rc = strace_writer_name_alias(s->w, start, al[i]);
	return rc < 0 ? rc : 0;
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
	if (strace_image_symbol(s->img, addr, &sym) < 0) {
		/* readers name it "[dso]+0xOFF": OFF in the object's own
		 * addresses, from where its mapping lies in it */
		uint64_t start, vaddr;
		if (strace_image_elf_base(s->img, addr, &start, &vaddr) < 0)
			return 0;
		rc = strace_writer_name_dso_base(s->w, s->syms, start, vaddr);
		return rc < 0 ? rc : 0;
	}
	rc = strace_writer_define_symbol(s->w, s->syms, s->types, ev->tid,
					 ev->time, sym.start, sym.size,
					 sym.name);
	if (rc == 1 && (!s->types ||
			strace_typeset_has(s->types, STRACE_EV_SYMBOL)))
		s->events++;
	return rc == 1 ? name_aliases(s, sym.start) : rc < 0 ? rc : 0;
}

/* The slot of addr in the sink's cache of addresses handled: a
 * multiply's high bits, of the address with its page folded in
 * (callgrind on the benchmark trace: as few misses as a full mix of the
 * bits, in 2 of its 6 instructions; the multiply alone missed 40 times
 * as often). */
static inline size_t cache_slot(uint64_t addr)
{
	return (size_t)((addr ^ (addr >> 12)) * 0x9e3779b97f4a7c15ull >>
			(64 - STRACE_SINK_CACHE_LOG));
}

/* Make sure the symbol holding addr is defined before it is used: most
 * addresses were handled lately (one probe, inline). */
static inline int define_symbol(struct strace_sink *s,
				const struct strace_event *ev, uint64_t addr)
{
	size_t slot = cache_slot(addr);

	if (s->cache[slot] == addr)
		return 0;
	return define_symbol_slow(s, ev, addr, slot);
}

/* The name of the system call the syscall at ev->a makes, before its
 * first syscall event (the shared set keeps it to once). */
static __attribute__((noinline)) int
name_syscall(struct strace_sink *s, const struct strace_event *ev)
{
	uint64_t *site = &s->sites[(ev->a ^ ev->a >> 6) & 63];
	const char *name;
	long nr;
	int rc;

	if (*site == ev->a || !ev->a || !s->img)
		return 0;
	*site = ev->a;
	nr = strace_syscall_nr(s->img, ev->a);
	if (nr < 0 || !(name = strace_syscall_name(nr)))
		return 0;
	rc = strace_writer_name_syscall(s->w, s->syms, ev->a, (uint64_t)nr,
					name);
	return rc < 0 ? rc : 0;
}

static inline __attribute__((always_inline)) int
emit1(struct strace_sink *s, const struct strace_event *ev)
{
	int rc;

	if (s->types && !strace_typeset_has(s->types, ev->type))
		return 0;
	if (ev->type == STRACE_EV_SYSCALL && (rc = name_syscall(s, ev)) < 0)
		return rc;
	if (s->hints && named(ev)) {
		struct strace_event e = *ev;

		e.flags &= (uint16_t)~STRACE_F_NAMED;
		return put(s, &e);
	}
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

/*
 * With no type filter: emit1() on each event, its state in locals (the
 * batch's room, the count; the stores into the slots could alias the
 * sink's fields, which would make the compiler load them again per
 * event), written back around a definition or a refill.
 */
static inline __attribute__((always_inline)) int
emit_all(struct strace_sink *s, const struct strace_event *ev, size_t n,
	 int hints)
{
	struct strace_wbuf *b = strace_writer_buf(s->w);
	const uint64_t *cache = s->cache;
	struct strace_event *pos = b->pos, *end = b->end;
	uint64_t events = s->events;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		const struct strace_event *e = &ev[i];
		unsigned f;
		int slow;

		if (hints && named(e) && pos != end) {
			*pos = *e;
			pos++->flags &= (uint16_t)~STRACE_F_NAMED;
			events++;
			continue;
		}
		f = e->type < STRACE_EV_MAX ? addr_fields[e->type] : 0;
		slow = ((f & 1) && cache[cache_slot(e->a)] != e->a) ||
			   ((f & 2) && cache[cache_slot(e->b)] != e->b) ||
			   pos == end || e->type == STRACE_EV_SYSCALL;

		if (__builtin_expect(slow, 0)) {
			/* a definition first, or a full batch: the slow way */
			b->pos = pos;
			s->events = events;
			if ((rc = emit1(s, e)) < 0)
				return rc;
			pos = b->pos;
			end = b->end;
			events = s->events;
			continue;
		}
		*pos++ = *e;
		events++;
	}
	b->pos = pos;
	s->events = events;
	return 0;
}

int strace_sink_emit_batch(void *arg, const struct strace_event *ev,
			   size_t n)
{
	struct strace_sink *s = arg;

	if (!s->types)
		return s->hints ? emit_all(s, ev, n, 1) : emit_all(s, ev, n, 0);
	for (size_t i = 0; i < n; i++) {
		int rc = emit1(s, &ev[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void strace_sink_walk_opts(struct strace_walk_opts *wo,
			   const struct strace_walk_base *b, uint32_t tid,
			   struct strace_sink *s)
{
	memset(wo, 0, sizeof(*wo));
	wo->size = sizeof(*wo);
	wo->flags = b->flags;
	wo->tid = tid;
	wo->time = b->time;
	wo->has_time = b->has_time;
	wo->cpu = b->cpu;
	if (s) {
		wo->emit = strace_sink_emit;
		wo->emit_batch = strace_sink_emit_batch;
		wo->emit_arg = s;
		wo->types = s->types;
	}
}
