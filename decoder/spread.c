/* SPDX-License-Identifier: MIT */
/*
 * decoder/spread.c - times between timing packets: what the hold in
 * spread.h leaves out of line, and the named spreader of decoder.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "decoder/emit.h"
#include "decoder/spread.h"
#include "strace/internal/grow.h"

uint64_t strace_dec_spread_mtc_ns(const struct strace_time_conv *tc)
{
	uint64_t tsc;

	if (!tc->has_mtc || !tc->tsc_ctc_ratio_d || tc->mtc_period > 15)
		return 0;
	tsc = ((uint64_t)tc->tsc_ctc_ratio_n << tc->mtc_period) /
	      tc->tsc_ctc_ratio_d;
	if (!tc->time_mult)
		return tsc;
	return tc->time_shift < 64 ? (tsc * tc->time_mult) >> tc->time_shift
				   : 0;
}

/* Hand on the events held; none is held after. */
static int emit_held(struct strace_dec_spread *s,
		     const struct strace_walk_opts *o)
{
	unsigned n = s->n;

	s->n = s->gap_n = s->drop = 0;
	s->lim = s->cap;
	return sink_put_n(o, s->ev, n);
}

/* The interval from (t0, i0) ends at (t1, i1): clean (whole, no stop in
 * it), it counts in the pace, over the last million instructions or so. */
static inline void pace(struct strace_dec_spread *s, int clean, uint64_t t1,
			uint64_t i1)
{
	if (clean && i1 > s->i0 && t1 != s->t0) {
		s->rate_dt += (double)(t1 - s->t0);
		s->rate_di += (double)(i1 - s->i0);
		if (s->rate_di > 1e6) {
			s->rate_dt /= 2;
			s->rate_di /= 2;
		}
	}
}

/* The interval from (t0, i0) ends at (t1, i1): the times of the events
 * held, then hand them on. */
static int close_interval(struct strace_dec_spread *s,
			  const struct strace_walk_opts *o, uint64_t t1,
			  uint64_t i1)
{
	uint64_t t0 = s->t0, dt = t1 - t0, last = t0;
	int clean = !s->gap_n && !s->after_stop;

	if (!s->n && !s->gap_n) {
		/* nothing held (a parallel decode's merge, after a run it
		 * took as it was): the pace only */
		pace(s, clean, t1, i1);
		s->after_stop = 0;
		s->drop = 0;
		s->lim = s->cap;
		return 0;
	}
	if (s->gap_n) {
		/* up to where the trace stopped: at the pace of the recent
		 * whole intervals, at most stop_cap after t0 (what follows
		 * the stop may be another thread's, on a CPU's trace) */
		uint64_t lim = s->stop_cap < dt ? s->stop_cap : dt;
		double rate = s->rate_di > 0 ? s->rate_dt / s->rate_di : 0;

		if (lim && rate > 0) {
			double end = rate * (double)(s->gap_i - s->i0);
			uint64_t tg = t0 + at_most(end, lim);

			last = share(s, 0, s->gap_n, t0, s->i0, tg, s->gap_i,
				     last, 1, t0);
		} else {
			share(s, 0, s->gap_n, t0, 0, t0, 0, last, 1, t0);
		}
		/* the rest: from there to t1 */
		last = share(s, s->gap_n, s->n, last, s->gap_i, t1, i1, last,
			     1, t0);
	} else {
		last = share(s, 0, s->n, t0, s->i0, t1, i1, last, 1, t0);
	}
	pace(s, clean, t1, i1);
	s->after_stop = s->gap_n != 0;
	return emit_held(s, o);
}

/* Room for more events held (up to SPREAD_MAX). Returns 0, -1. */
static int grow(struct strace_dec_spread *s)
{
	size_t capev = s->cap, capins = s->cap;
	unsigned nc;
	struct strace_event *ev;
	uint64_t *ins;

	if (s->n + s->drop >= SPREAD_MAX || s->cap >= SPREAD_MAX)
		return -1;
	ev = strace_grow(s->ev, &capev, sizeof(*ev), 256);
	if (!ev)
		return -1;
	s->ev = ev;
	ins = strace_grow(s->ins, &capins, sizeof(*ins), 256);
	if (!ins)
		return -1;
	s->ins = ins;
	nc = (unsigned)capev; /* (at most 2 * SPREAD_MAX) */
	s->cap = nc;
	s->lim = nc < SPREAD_MAX - s->drop ? nc : SPREAD_MAX - s->drop;
	return 0;
}

/* An event at time, which ran at ins, that spread_put() (keep) or
 * spread_drop() (ev NULL) does not hold at once. */
static int spread_slow(struct strace_dec_spread *s,
		       const struct strace_walk_opts *o,
		       const struct strace_event *ev, uint64_t time,
		       uint64_t ins)
{
	int err;

	if (s->open && !s->t0) {
		/* events without a time held: more of them, or on as they
		 * are */
		if (!time && grow(s) == 0)
			return ev ? spread_put(s, o, ev, ins)
				  : spread_drop(s, o, time, ins);
		err = emit_held(s, o);
		if (err)
			return err;
		s->open = 0;
	}
	if (s->open && time == s->t0) {
		if (grow(s) == 0)
			return ev ? spread_put(s, o, ev, ins)
				  : spread_drop(s, o, time, ins);
		/* full (or no memory): what is held keeps the interval's
		 * start time, and the interval starts again here */
		err = emit_held(s, o);
	} else if (s->open && time >= s->t0) {
		err = close_interval(s, o, time, ins);
	} else {
		/* no time, or earlier than the interval's start */
		err = emit_held(s, o);
	}
	if (err)
		return err;
	if (!s->open)
		s->after_stop = 1; /* what came before is not known */
	/* (events without a time are held too, for a sink that takes
	 * several at once, and pass as they are) */
	s->open = 1;
	s->t0 = time;
	s->i0 = ins;
	if (!ev)
		return 0;
	if (spread_stops(ev->type))
		s->after_stop = 1;
	return sink_put(o, ev);
}

int strace_dec_spread_slow(struct strace_dec_spread *s,
			   const struct strace_walk_opts *o,
			   const struct strace_event *ev, uint64_t ins)
{
	return spread_slow(s, o, ev, ev->time, ins);
}

int strace_dec_spread_drop_slow(struct strace_dec_spread *s,
				const struct strace_walk_opts *o, uint64_t time,
				uint64_t ins)
{
	return spread_slow(s, o, NULL, time, ins);
}

int strace_dec_spread_mark(struct strace_dec_spread *s,
			   const struct strace_walk_opts *o, uint64_t t,
			   uint64_t ins)
{
	int err = 0;

	if (!t)
		return 0;
	if (s->open && !s->t0) {
		err = emit_held(s, o);
		if (err)
			return err;
		s->open = 0;
	}
	if (s->open && t > s->t0)
		err = close_interval(s, o, t, ins);
	else if (s->open)
		return 0; /* earlier: the events will say (damaged trace) */
	else
		s->after_stop = 1;
	s->open = 1;
	s->t0 = t;
	s->i0 = ins;
	return err;
}

int strace_dec_spread_flush(struct strace_dec_spread *s,
			    const struct strace_walk_opts *o)
{
	s->open = 0;
	return emit_held(s, o);
}

void strace_dec_spread_free(struct strace_dec_spread *s)
{
	free(s->ev);
	free(s->ins);
	s->ev = NULL;
	s->ins = NULL;
	s->n = s->cap = 0;
}

/* The spreader of another folder (decoder.h): the hold, and a ring
 * writer as its sink. */
struct strace_dec_spreader {
	struct strace_dec_spread sp;
	struct strace_walk_opts o;
};

int strace_dec_spreader_new(struct strace_writer *w, uint64_t stop_cap,
			    struct strace_dec_spreader **out)
{
	struct strace_dec_spreader *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->sp.stop_cap = stop_cap;
	s->o.size = sizeof(s->o);
	s->o.writer = w;
	*out = s;
	return 0;
}

int strace_dec_spreader_put(struct strace_dec_spreader *s,
			    const struct strace_event *ev, uint64_t ins)
{
	return spread_put(&s->sp, &s->o, ev, ins);
}

int strace_dec_spreader_mark(struct strace_dec_spreader *s, uint64_t t,
			     uint64_t ins)
{
	return spread_mark(&s->sp, &s->o, t, ins);
}

int strace_dec_spreader_flush(struct strace_dec_spreader *s)
{
	return strace_dec_spread_flush(&s->sp, &s->o);
}

void strace_dec_spreader_free(struct strace_dec_spreader *s)
{
	if (!s)
		return;
	strace_dec_spread_free(&s->sp);
	free(s);
}
