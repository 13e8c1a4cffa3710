/* SPDX-License-Identifier: MIT */
/*
 * decoder/emit.h - what both decoders (the walker and ref.c) share about
 * the events they make: handing an event to the caller's sink, which taken
 * jumps give an event, and the return-compression stack. Not installed.
 *
 * Everything here is static inline: the walker's hot path calls it per
 * event and per call/return.
 *
 * Threading: each object belongs to the decoder (and so the thread) that
 * holds it.
 */
#ifndef DECODER_EMIT_H
#define DECODER_EMIT_H

#include <stdint.h>

#include "decoder/internal.h"
#include "strace/error.h"
#include "strace/ring.h"

/*
 * sink_put() - hand ev to o's sink: the callback o->emit, else the ring
 * writer o->writer, else nowhere (0). Returns 0, or what the sink said
 * when it failed (the decoder's error for it: sink_error()).
 */
static inline __attribute__((always_inline)) int
sink_put(const struct strace_walk_opts *o, const struct strace_event *ev)
{
	if (o->emit)
		return o->emit(o->emit_arg, ev);
	if (o->writer)
		return strace_writer_emit(o->writer, ev->type, ev->flags,
					  ev->tid, ev->time, ev->a, ev->b);
	return 0;
}

/* sink_put_n() - n events to o's sink, in order, as sink_put() on each
 * (one call to o->emit_batch when there is one). Returns 0, or what the
 * sink said. */
static inline int sink_put_n(const struct strace_walk_opts *o,
			     const struct strace_event *ev, size_t n)
{
	if (o->emit_batch)
		return n ? o->emit_batch(o->emit_arg, ev, n) : 0;
	for (size_t k = 0; k < n; k++) {
		int err = sink_put(o, &ev[k]);
		if (err)
			return err;
	}
	return 0;
}

/* sink_error() - the error a decode returns after sink_put() said err
 * (non-zero): the writer's or callback's negative error, -STRACE_E_EMIT
 * for a callback's positive value. */
static inline int sink_error(int err)
{
	return err < 0 ? err : -STRACE_E_EMIT;
}

/*
 * jump_kept() - whether a taken jump gives a jump event. same: the jump
 * stays in one symbol (strace_dec_same_symbol(), or STRACE_BF_SAME_SYM);
 * walk_flags: strace_walk_opts.flags. A jump between symbols always gives
 * one; one inside a symbol only with STRACE_WALK_ALL_BRANCHES, and then
 * *flags gets STRACE_F_INTRA. Returns 1 if the jump gives an event, 0 if
 * it gives none.
 */
static inline int jump_kept(int same, unsigned walk_flags, unsigned *flags)
{
	if (!same)
		return 1;
	if (!(walk_flags & STRACE_WALK_ALL_BRANCHES))
		return 0;
	*flags |= STRACE_F_INTRA;
	return 1;
}

/*
 * Indirect or taken jumps lately, in a table of 1 << log: whether each
 * stayed in one symbol (two symbol lookups else). from 0: empty. Both
 * decoders keep one (the walker's is of one image generation, the
 * reference's of one decode: the image does not change meanwhile).
 */
struct jump_memo {
	uint64_t from, to;
	int same;
};

/* jump_same() - whether the jump from from to to stays in one symbol of
 * img, remembered in tab (1 << log entries). */
static inline int jump_same(struct jump_memo *tab, unsigned log,
			    struct strace_image *img, uint64_t from,
			    uint64_t to)
{
	size_t i = (size_t)((from * 0x9e3779b97f4a7c15ull) ^
			    (to * 0xc2b2ae3d27d4eb4full)) >>
		   (64 - log);
	struct jump_memo *e = &tab[i];

	if (__builtin_expect(e->from != from || e->to != to || !from, 0)) {
		e->from = from;
		e->to = to;
		e->same = strace_dec_same_symbol(img, from, to);
	}
	return e->same;
}

/*
 * The return-compression stack, as the hardware keeps it: every call
 * pushes its return address, a compressed return (a taken TNT bit) pops
 * it. 64 entries; a push on a full stack drops the oldest.
 */
#define RETSTACK_SIZE 64

struct retstack {
	uint64_t a[RETSTACK_SIZE];
	unsigned top, n;
};

/* call_pushes() - whether a call to target whose next instruction is at
 * next pushes a return address: not a call to the next instruction (PIC
 * code reading its address, a noreturn call to the function that
 * follows), as the hardware, libipt and perf do (SDM). */
static inline int call_pushes(uint64_t target, uint64_t next)
{
	return target != next;
}

static inline void retstack_push(struct retstack *s, uint64_t ret)
{
	s->top = (s->top + 1) % RETSTACK_SIZE;
	s->a[s->top] = ret;
	if (s->n < RETSTACK_SIZE)
		s->n++;
}

/* retstack_pop() - the last address pushed, in *ret. Returns 0, or -1 if
 * the stack is empty (*ret unchanged). */
static inline int retstack_pop(struct retstack *s, uint64_t *ret)
{
	if (!s->n)
		return -1;
	*ret = s->a[s->top];
	s->top = (s->top + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	s->n--;
	return 0;
}

/* retstack_clear() - empty it (a PSB, an overflow, lost sync). */
static inline void retstack_clear(struct retstack *s)
{
	s->n = 0;
}

/* --- OCaml exceptions ----------------------------------------------------- */

/* The events of an OCaml try entered or left in block b, in order, for
 * both decoders: *n of them (0-2) into type[] and a[], b[] (an exc_push
 * names its handler). */
static inline unsigned ocaml_trap_events(const struct strace_block *b,
					 unsigned type[2], uint64_t a[2],
					 uint64_t bb[2])
{
	unsigned n = 0;

	if (b->flags & STRACE_BF_OCAML_PUSH) {
		type[n] = STRACE_EV_EXC_PUSH;
		a[n] = b->start;
		bb[n++] = b->handler ? b->start + (uint64_t)(int64_t)b->handler
				     : 0;
	}
	if (b->flags & STRACE_BF_OCAML_POP) {
		type[n] = STRACE_EV_EXC_POP;
		a[n] = b->start;
		bb[n++] = 0;
	}
	return n;
}

#endif
