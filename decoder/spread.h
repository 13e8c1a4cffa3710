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

#endif
