/* SPDX-License-Identifier: MIT */
/*
 * decoder/evvec.h - the event vector: a sink the walker writes into in a
 * parallel or streamed decode's segment (walk_out.to OUT_VEC), holding
 * its events, the instruction count at each and its time points, and
 * spreading the times of what it can as they come (the worker's spread).
 * The segment merge (segment.h) reads it. Knows nothing of the walker or
 * of the merge. Not installed.
 *
 * Threading: a vector belongs to one thread at a time.
 */
#ifndef DECODER_EVVEC_H
#define DECODER_EVVEC_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/decoder.h"
#include "decoder/spread.h"

/* Internal, never in a ring: marks the events of an advance (direct calls
 * and jumps walked on the way to the next packet) in a segment's vector,
 * which leave TIME_EXACT to the next event resolved by a packet; the
 * merge needs to know them and strips the mark. */
#define SEG_F_ADV 0x8000u

/* A time point without an event (spread.h), before event `at`. */
struct seg_mark {
	size_t at;
	uint64_t time, ins;
};

/* Events [a, b) of a segment, held together by the spreader in the
 * interval that began at (t0, i0) (i0 from the segment's start) and
 * closed inside the segment with no stop among them: their times as that
 * interval spreads them, set by the segment's worker
 * (strace_dec_seg_spread()). */
struct seg_run {
	size_t a, b;
	uint64_t t0, i0;
	int plain; /* its events' flags are the sequential decode's when it
		    * is taken: none has SEG_F_ADV, none moved has
		    * TIME_EXACT (strace_dec_seg_decode() settles them) */
	size_t exact_at; /* the one moved event that had TIME_EXACT (the
			  * first after a timing packet), or SIZE_MAX */
};

/* seg_run_untake() - the events of run get their time back (t0: the
 * interval's, which every event it held had), and their TIME_EXACT. */
static inline void seg_run_untake(struct strace_event *v,
				  const struct seg_run *run)
{
	for (size_t k = run->a; k < run->b; k++)
		v[k].time = run->t0;
	if (run->exact_at != SIZE_MAX)
		v[run->exact_at].flags |= STRACE_F_TIME_EXACT;
}

/* The worker's spread of a segment's times as its events and time points
 * come (strace_dec_seg_spread()): the interval open since (t0, i0), its
 * events held from index held; ok: it becomes a run if it closes inside
 * the segment; from: the index after the first trace_begin's events
 * (SIZE_MAX until they are out). */
struct seg_sp {
	int on, open, ok;
	uint64_t t0, i0;
	size_t held, from;
};

/* A segment's events, with the instruction count (from the segment's
 * start) at each, and its time points: the merge spreads times by them
 * (spread.h), but for the runs whose
 * times the worker spread. */
struct evvec {
	struct strace_event *v;
	uint64_t *ins;
	size_t n, cap;
	struct seg_mark *mk;
	size_t nmk, capmk;
	struct seg_run *run;
	size_t nrun, caprun;
	struct seg_sp sp;
	int err;
};

/* strace_dec_seg_sp_start() - the worker's spread of e starts (on: the
 * merge spreads times), with no run and no first trace_begin yet. */
void strace_dec_seg_sp_start(struct evvec *e, int on);

/* strace_dec_seg_sp_next() - the worker's spread of e at event or time
 * point i (mark) at (t, ins), where the interval open does not simply
 * hold it: the interval closes (a run if it may be one) and another may
 * begin. A run that cannot be kept (no memory) gives every run its time
 * back and turns the spread off. */
void strace_dec_seg_sp_next(struct evvec *e, size_t i, uint64_t t,
			    uint64_t ins, int mark);

/* seg_sp_event() - event i of e, ev at ins, to the worker's spread. */
static inline __attribute__((always_inline)) void
seg_sp_event(struct evvec *e, size_t i, const struct strace_event *ev,
	     uint64_t ins)
{
	struct seg_sp *p = &e->sp;

	if (p->open && ev->time == p->t0) {
		/* held; a full hold splits the interval there */
		if (i - p->held >= SPREAD_MAX || spread_stops(ev->type))
			p->ok = 0;
	} else if (p->on) {
		strace_dec_seg_sp_next(e, i, ev->time, ins, 0);
	}
}

/* strace_dec_vec_reserve() - room for n events in e (its pages touched
 * only as events fill them): a vector that need not grow need not move
 * (mremap, which costs the process's other threads a TLB shootdown).
 * Returns 0, -ENOMEM (e is then as it was). */
int strace_dec_vec_reserve(struct evvec *e, size_t n);

/* strace_dec_vec_put() - append ev, which ran at instruction count ins,
 * to the struct evvec arg. Returns 0, -ENOMEM (also kept in the vector's
 * err). */
int strace_dec_vec_put(void *arg, const struct strace_event *ev,
		       uint64_t ins);

/* vec_put() - the same, inline while the vector has room (event_copy(),
 * spread.h). */
static inline __attribute__((always_inline)) int
vec_put(struct evvec *e, const struct strace_event *ev, uint64_t ins)
{
	if (__builtin_expect(e->n == e->cap, 0))
		return strace_dec_vec_put(e, ev, ins);
	event_copy(&e->v[e->n], ev);
	e->ins[e->n] = ins;
	seg_sp_event(e, e->n++, ev, ins);
	return 0;
}

/* strace_dec_vec_mark() - append the time point (t, ins) to the struct
 * evvec arg. Returns 0, -ENOMEM (also kept in the vector's err). */
int strace_dec_vec_mark(void *arg, uint64_t t, uint64_t ins);

/* strace_dec_vec_push() - the strace_emit_fn a segment's walker is made
 * with: it marks its advance events (SEG_F_ADV) and puts its events with
 * strace_dec_vec_put(). Called as a callback, it appends ev with count 0.
 */
int strace_dec_vec_push(void *arg, const struct strace_event *ev);

/*
 * strace_dec_seg_spread() - the worker's spread of a segment: the times
 * of the events of e that the merge's spreader would hold and spread in
 * an interval that begins and ends inside the segment, at or after event
 * from (after the segment's first trace_begin, which the merge may
 * change), with no stop among them (spread_stops()), at most SPREAD_MAX:
 * spread as the merge would (the same share of the interval), each such
 * interval a run in e->run. The merge takes a run as it is when its
 * spreader is in the same interval, else gives its events their time
 * back (t0) and spreads them itself (strace_dec_seg_merge()).
 *
 * A segment's worker does this as its events come (e->sp, vec_put(),
 * strace_dec_vec_mark()), while they are in its cache; this call does it
 * over a vector made with the spread off. Returns 0, -ENOMEM (no run is
 * then kept).
 */
int strace_dec_seg_spread(struct evvec *e, size_t from);

/* strace_dec_vec_free() - the vector's storage. */
void strace_dec_vec_free(struct evvec *e);

#endif
