/* SPDX-License-Identifier: MIT */
/*
 * decoder/spread.h - the spreader: times between timing packets, a sink
 * the decoders write their events into before the caller's (emit.h).
 * Private to decoder/: other folders use the strace_dec_spreader_* API
 * of decoder.h. Knows nothing of the walker or of segments.
 */
#ifndef DECODER_SPREAD_H
#define DECODER_SPREAD_H

#include <stdint.h>

#include "decoder/decoder.h"

/*
 * Times between timing packets (docs/decoder.md): the spreader, used by
 * both decoders and the dlfilter.
 *
 * A trace says the time only now and then: at a TSC, an MTC (every few
 * hundred nanoseconds) or a CYC packet. Every event resolved between two
 * of them has the time of the earlier, so short calls would last 0 ns.
 * The spreader holds the events that share their time with the event
 * before them, each with the thread's instruction count when it ran, until
 * an event with a later time comes (or a time point without an event:
 * a branch that makes none, strace_dec_spread_mark()); then it spreads
 * the events held over the interval by instruction count and hands them
 * on:
 *
 *   t = t0 + (t1 - t0) * (insns - insns0) / (insns1 - insns0)
 *
 * so that no time goes backwards and none reaches past t1. An event with
 * STRACE_F_TIME_EXACT that the spreading moves loses the flag (the
 * branch the timing packet came before made no event). Where the
 * trace stopped in between (a syscall, an interrupt, a trace end, an
 * overflow, an error, a lost stretch: the time out of the trace is not
 * in the instruction count), the events up to the stop go at the pace of
 * the recent whole intervals (ns per instruction), at most stop_cap after
 * t0 (the walker's: one MTC period, within which the stop came since no
 * MTC came between; on a CPU's trace what follows the stop may be another
 * thread's), and those after it spread from there to t1. Events without a
 * time (0) are held too, and pass as they are (a sink with emit_batch
 * takes them a buffer at a time); a time earlier than the interval's start (damaged trace: timing.h) ends
 * it with the events held unspread, as does a full buffer and the end of
 * a decode call (strace_dec_spread_flush()).
 *
 * The hold is static inline (per event); the rest is in spread.c.
 *
 * Threading: a spreader belongs to its decoder's thread.
 */
#define SPREAD_MAX 4096 /* events held at most (160 KiB) */

struct strace_dec_spread {
	struct strace_event *ev; /* the events held, cap of them */
	uint64_t *ins;           /* the instruction count at each */
	unsigned n, cap;
	unsigned drop; /* events held and dropped (strace_dec_spread_drop():
			* not kept, but counted as the hold's) */
	unsigned lim;  /* events that may be held at once: cap, and no
			* more than SPREAD_MAX with the dropped ones */
	unsigned gap_n; /* events held up to the last stop of the trace, and
			 * the instruction count there (gap_i); 0: none */
	int open;       /* t0, i0: where the interval starts */
	uint64_t t0, i0, gap_i;
	int after_stop; /* the interval began at a stop (not a whole one) */
	double rate_dt, rate_di; /* ns and instructions of recent whole
				  * intervals */
	uint64_t stop_cap; /* how far after t0 the events before a stop may
			    * go: 0 not at all, UINT64_MAX up to t1 */
};

/* strace_dec_spread_mtc_ns() - the MTC period of tc in perf time (ns), a
 * decoder's stop_cap; 0 when tc has no MTC timing. */
uint64_t strace_dec_spread_mtc_ns(const struct strace_time_conv *tc);

/* strace_dec_spread_slow() - what spread_put() does not hold at once. */
int strace_dec_spread_slow(struct strace_dec_spread *s,
			   const struct strace_walk_opts *o,
			   const struct strace_event *ev, uint64_t ins);

/* strace_dec_spread_drop_slow() - what spread_drop() does not count at
 * once. */
int strace_dec_spread_drop_slow(struct strace_dec_spread *s,
				const struct strace_walk_opts *o, uint64_t time,
				uint64_t ins);

/* strace_dec_spread_mark() - the trace says the time was t when the
 * thread had run ins instructions, with no event there (a branch that
 * makes none): a time point as an event's would be. Returns 0 or what
 * the sink said. */
int strace_dec_spread_mark(struct strace_dec_spread *s,
			   const struct strace_walk_opts *o, uint64_t t,
			   uint64_t ins);

static inline int spread_mark(struct strace_dec_spread *s,
			      const struct strace_walk_opts *o, uint64_t t,
			      uint64_t ins)
{
	if (s->open && t == s->t0)
		return 0;
	return strace_dec_spread_mark(s, o, t, ins);
}

/* strace_dec_spread_flush() - hand on the events held, with the times
 * they have (the end of a decode call: what comes next is not known).
 * Returns 0 or what the sink said (as sink_put()). */
int strace_dec_spread_flush(struct strace_dec_spread *s,
			    const struct strace_walk_opts *o);

/* strace_dec_spread_free() - its buffers (the events held are dropped:
 * flush first). */
void strace_dec_spread_free(struct strace_dec_spread *s);

/* Whether the trace stops after an event of this type for a time that
 * the instruction count does not see. */
static inline int spread_stops(unsigned type)
{
	return type == STRACE_EV_SYSCALL || type == STRACE_EV_INTERRUPT ||
	       type == STRACE_EV_TRACE_END || type == STRACE_EV_OVERFLOW ||
	       type == STRACE_EV_ERROR || type == STRACE_EV_LOST;
}

/* event_copy() - *d = *ev, field by field: the walker has just stored ev
 * field by field (on its stack), and a copy by 16-byte loads would wait
 * for those stores to retire (no store forwarding: perf annotate gave the
 * one load 17% of tnt_run). */
static inline __attribute__((always_inline)) void
event_copy(struct strace_event *d, const struct strace_event *ev)
{
	d->type = ev->type;
	d->flags = ev->flags;
	d->tid = ev->tid;
	d->time = ev->time;
	d->a = ev->a;
	d->b = ev->b;
}

/*
 * spread_put() - ev, which ran when the thread had executed ins
 * instructions, through s to o's sink (sink_put()). Returns 0 or what the
 * sink said.
 */
static inline __attribute__((always_inline)) int
spread_put(struct strace_dec_spread *s, const struct strace_walk_opts *o,
	   const struct strace_event *ev, uint64_t ins)
{
	if (__builtin_expect(s->open && ev->time == s->t0 && s->n < s->lim, 1)) {
		event_copy(&s->ev[s->n], ev);
		s->ins[s->n++] = ins;
		if (__builtin_expect(spread_stops(ev->type), 0)) {
			s->gap_n = s->n;
			s->gap_i = ins;
		}
		return 0;
	}
	return strace_dec_spread_slow(s, o, ev, ins);
}

/*
 * spread_drop() - an event at time, which ran at ins, that the sink would
 * drop (its type is not asked for), not made: the spreader counts it as
 * spread_put() would hold it, so that the events kept get the times they
 * get with it (where the hold is full, and where an interval starts).
 * Never an event of a type that stops the time (spread_stops()). Returns
 * 0 or what the sink said.
 */
static inline __attribute__((always_inline)) int
spread_drop(struct strace_dec_spread *s, const struct strace_walk_opts *o,
	    uint64_t time, uint64_t ins)
{
	if (__builtin_expect(s->open && time == s->t0 &&
				     s->n + s->drop < SPREAD_MAX,
			     1)) {
		s->drop++;
		if (s->lim > SPREAD_MAX - s->drop)
			s->lim = SPREAD_MAX - s->drop;
		return 0;
	}
	return strace_dec_spread_drop_slow(s, o, time, ins);
}

/* d (>= 0) as an integer, at most lim. */
static inline uint64_t at_most(double d, uint64_t lim)
{
	return d >= (double)lim ? lim : (uint64_t)d;
}

/* share()'s loop; below63: every count and time is below 2^63, so that
 * the conversions to and from double are signed ones, one instruction
 * each, with at_most()'s values (two copies of the loop: the test out of
 * it). */
static inline __attribute__((always_inline)) uint64_t
share_loop(struct strace_dec_spread *s, unsigned k, unsigned n, uint64_t ta,
	   uint64_t ia, double scale, uint64_t lim, uint64_t last,
	   int exact_off, uint64_t t0, int below63)
{
	double dlim = (double)(int64_t)lim;

	for (; k < n; k++) {
		struct strace_event *e = &s->ev[k];
		uint64_t c = s->ins[k] > ia ? s->ins[k] - ia : 0;
		double d = scale * (below63 ? (double)(int64_t)c : (double)c);
		uint64_t t = ta + (!below63   ? at_most(d, lim)
				   : d >= dlim ? lim
					       : (uint64_t)(int64_t)d);

		last = t > last ? t : last;
		e->time = last;
		if (exact_off && (e->flags & STRACE_F_TIME_EXACT) &&
		    last != t0 && e->type != STRACE_EV_ERROR)
			e->flags &= (uint16_t)~STRACE_F_TIME_EXACT;
	}
	return last;
}

/*
 * Events k to n - 1 held: from (ta, ia) to (tb, ib) in proportion of
 * their instruction counts, never before last. With exact_off, an event
 * that moves off t0, the interval's start, had a time from its packet no
 * more (an error's flags are its code, never TIME_EXACT); a segment's
 * run leaves that to the merge (put_run()). Returns the last time.
 */
static inline __attribute__((always_inline)) uint64_t
share(struct strace_dec_spread *s, unsigned k, unsigned n, uint64_t ta,
      uint64_t ia, uint64_t tb, uint64_t ib, uint64_t last, int exact_off,
      uint64_t t0)
{
	double scale = ib > ia && tb > ta
			       ? (double)(tb - ta) / (double)(ib - ia)
			       : 0;
	uint64_t lim = tb - ta;

	/* (the counts only grow: the last is the largest) */
	if (k < n && (int64_t)lim >= 0 && (int64_t)s->ins[n - 1] >= 0)
		return share_loop(s, k, n, ta, ia, scale, lim, last, exact_off,
				  t0, 1);
	return share_loop(s, k, n, ta, ia, scale, lim, last, exact_off, t0,
			  0);
}

#endif
