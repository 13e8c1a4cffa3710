/* SPDX-License-Identifier: MIT */
/*
 * decoder/segment.c - one segment's decode, and the merge that joins the
 * segments' events into the sequential decode's (segment.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/segment.h"

/* The slot of addr in a worker's table of addresses named (NAMED_LOG
 * bits: 32 KiB): the sink's own hash (pipeline/sink.c). */
static inline size_t named_slot(uint64_t addr)
{
	return (size_t)((addr ^ (addr >> 12)) * 0x9e3779b97f4a7c15ull >>
			(64 - SEG_NAMED_LOG));
}

/*
 * What the merge would do to each event (seam_flags(), put_run()), where
 * it does not depend on the segments before, done here, in one pass over
 * the events while they are in the worker's cache:
 *  - SEG_F_ADV off but where TIME_EXACT of a dropped first trace_begin
 *    may go on to (from its events up to the first event resolved by a
 *    packet after them);
 *  - in each run outside that, TIME_EXACT off the one event it moved that
 *    had it (the first after a timing packet; the run keeps which, for
 *    seg_run_untake()): such a run is plain, handed on as it is;
 *  - with named, STRACE_F_NAMED on the calls, returns and jumps whose
 *    addresses an earlier one of this worker had (types: the sink's): the
 *    merge hands a worker's events to the sink in the order the worker
 *    made them (it takes its segments in order) and changes none of
 *    these, so the sink named them at that earlier event.
 * The merge, the one thread every worker waits for, then copies most
 * events as they are (docs/decoder.md, "Parallel decode").
 */
void strace_dec_seg_settle(struct seg_job *j, uint64_t *named,
			   const struct strace_typeset *types)
{
	struct evvec *v = &j->ev;
	const struct seg_notes *nt = &j->notes;
	size_t lo = nt->first_idx >= 0 ? (size_t)nt->first_idx : v->n, hi = lo;
	/* (no runs: v->run may be NULL, and NULL + 0 is undefined) */
	struct seg_run *run = v->run, *rend = v->nrun ? v->run + v->nrun : run;
	size_t x = SIZE_MAX; /* the run's moved event with TIME_EXACT */
	int plain = 0;

	if (hi < v->n) {
		hi += (size_t)nt->first_n;
		while (hi < v->n && ((v->v[hi].flags & SEG_F_ADV) ||
				     v->v[hi].type == STRACE_EV_ERROR))
			hi++;
		if (hi < v->n)
			hi++;
	}
	for (size_t k = 0; k < v->n; k++) {
		struct strace_event *e = &v->v[k];

		if (k < lo || k >= hi)
			e->flags &= (uint16_t)~SEG_F_ADV;
		if (named && strace_named_type(e->type) &&
		    (!types || strace_typeset_has(types, e->type))) {
			size_t sa = named_slot(e->a), sb = named_slot(e->b);

			if (named[sa] == e->a && named[sb] == e->b) {
				e->flags |= STRACE_F_NAMED;
			} else {
				named[sa] = e->a;
				named[sb] = e->b;
			}
		}
		if (run == rend || k < run->a)
			continue;
		if (k == run->a) {
			plain = run->b <= lo || run->a >= hi;
			x = SIZE_MAX;
		}
		if (plain && (e->flags & STRACE_F_TIME_EXACT) &&
		    e->time != run->t0) {
			plain = x == SIZE_MAX;
			x = k;
		}
		if (k + 1 == run->b) {
			run->plain = plain;
			if (plain && x != SIZE_MAX) {
				v->v[x].flags &= (uint16_t)~STRACE_F_TIME_EXACT;
				run->exact_at = x;
			}
			run++;
		}
	}
}

void strace_dec_seg_decode(struct strace_walker *w, const uint8_t *buf,
			   size_t len, struct seg_job *j)
{
	memset(&w->st, 0, sizeof(w->st));
	w->o.emit_arg = &j->ev;
	w->flow.begin_reason = STRACE_REASON_START;
	w->flow.pending_syscall = w->flow.pending_ovf = 0;
	w->time.have_tsc = w->time.have_ctc = 0;
	w->time.cbr = 0;
	w->time.last_time = 0;
	w->out.events = 0;
	w->time.time_exact = 0;
	w->time.tsc = w->time.tsc_ref = w->time.cyc = 0;
	w->out.anchor_t = 0;
	w->seg.fup_at = j->fup_at;
	/* the times of what lies after the first trace_begin (the merge may
	 * change that one; none: tracing was off throughout), spread as the
	 * events come (strace_dec_begin() says where it is) */
	strace_dec_seg_sp_start(&j->ev, j->spread);
	j->ret = strace_dec_decode_range(w, buf, j->start, j->end, len,
					 j->last, j->has_next_fup,
					 j->next_fup);
	if (!j->ret && j->ev.err)
		j->ret = j->ev.err;
	j->notes = w->seg;
	j->end_state = (struct seg_state){
		.have_ip = w->flow.have_ip,
		.enabled = w->flow.enabled,
		.pending_syscall = w->flow.pending_syscall,
		.pending_ovf = w->flow.pending_ovf,
		.begin_reason = w->flow.begin_reason,
		.psb_off = w->flow.psb_off,
		.ovf_offset = w->flow.ovf_offset,
	};
	j->st = w->st;
}

/* One merged event to the sink, its time kept from going back; ins: the
 * instruction count when it ran, from the segment's start. Returns 0 or
 * the sink's error. */
static int sink(struct strace_walker *w, const struct strace_event *ev,
		uint64_t ins)
{
	struct strace_event e = *ev;
	int err;

	e.time = time_forward(&w->o.time, &w->time.last_time, e.time);
	if (e.type == STRACE_EV_ERROR)
		w->time.last_time = 0; /* time may go back: see
					* strace_dec_fail() */
	/* the segments' counts follow on from those merged before them */
	if (w->out.to == OUT_SPREAD)
		err = spread_put(&w->out.sp, &w->o, &e, w->st.insns + ins);
	else
		err = sink_put(&w->o, &e);
	if (err)
		return sink_error(err);
	w->out.events++;
	w->st.events++;
	return 0;
}

/* Whether the merge takes run's times as the worker spread them: its
 * spreader is in the interval the worker spread (begun at the same point,
 * holding nothing yet), and time_forward() keeps the run's time as it
 * keeps a held event's. Else the run's events get their time back, for
 * the spreader. */
static int run_taken(struct strace_walker *w, struct evvec *v,
		     const struct seg_run *run)
{
	const struct strace_dec_spread *sp = &w->out.sp;

	if (w->out.to == OUT_SPREAD && sp->open && !sp->n &&
	    sp->t0 == run->t0 && sp->i0 == w->st.insns + run->i0 &&
	    time_forward(&w->o.time, &w->time.last_time, run->t0) == run->t0)
		return 1;
	seg_run_untake(v->v, run);
	return 0;
}

/* The flags of a segment's event as a sequential decode has them:
 * SEG_F_ADV off, and TIME_EXACT of a dropped event (*carry) given to the
 * next event resolved by a packet. */
static inline void seam_flags(struct strace_event *e, unsigned *carry)
{
	if (e->flags & SEG_F_ADV) {
		/* as in a sequential decode, TIME_EXACT waits for an event
		 * resolved by a packet */
		e->flags &= (uint16_t)~SEG_F_ADV;
	} else if (e->type != STRACE_EV_ERROR) {
		/* (an error's flags are its code: it takes no TIME_EXACT, as
		 * in a sequential decode) */
		e->flags |= (uint16_t)*carry;
		*carry = 0;
	}
}

/* The events of a run taken, to the sink as the spreader would hand them
 * on (one it moved from t0 loses TIME_EXACT, as in close_interval()).
 * Returns 0 or the sink's error. */
static int put_run(struct strace_walker *w, struct evvec *v,
		   const struct seg_run *run, unsigned *carry)
{
	int err;

	for (size_t k = run->a; !(run->plain && !*carry) && k < run->b; k++) {
		struct strace_event *e = &v->v[k];

		seam_flags(e, carry);
		if (e->time != run->t0)
			e->flags &= (uint16_t)~STRACE_F_TIME_EXACT;
	}
	if ((err = sink_put_n(&w->o, v->v + run->a, run->b - run->a)))
		return sink_error(err);
	w->out.events += run->b - run->a;
	w->st.events += run->b - run->a;
	return 0;
}

/* A segment's time point to the spreader. Returns 0 or the sink's
 * error. */
static int mark(struct strace_walker *w, const struct seg_mark *mk)
{
	int err;

	if (w->out.to != OUT_SPREAD)
		return 0;
	err = spread_mark(&w->out.sp, &w->o, mk->time, w->st.insns + mk->ins);
	return err ? sink_error(err) : 0;
}

int strace_dec_seg_end_overflow(struct strace_walker *w,
				const struct seg_job *j, struct seg_state *S)
{
	struct strace_event e;

	if (!S->pending_ovf || j->notes.ovf_at_end)
		return 0;
	memset(&e, 0, sizeof(e));
	e.type = STRACE_EV_OVERFLOW;
	e.tid = w->o.tid;
	e.time = w->time.last_time;
	e.b = S->ovf_offset;
	S->pending_ovf = 0;
	return sink(w, &e, 0);
}

int strace_dec_seg_merge(struct strace_walker *w, struct seg_job *j,
			 int first_seg, struct seg_state *S)
{
	const struct seg_notes *nt = &j->notes;
	size_t i, m = 0, r = 0; /* r: the next run */
	int err;
	unsigned carry = 0; /* TIME_EXACT of a dropped event goes on */

	for (i = 0; i < j->ev.n; i++) {
		/* the time points before event i */
		for (; m < j->ev.nmk && j->ev.mk[m].at <= i; m++)
			if ((err = mark(w, &j->ev.mk[m])))
				return err;
		if (!first_seg && nt->first_idx >= 0 &&
		    i == (size_t)nt->first_idx && !nt->ovf_before) {
			struct strace_event e = j->ev.v[i];
			uint64_t ins = j->ev.ins[i];
			int reason = nt->err_before ? STRACE_REASON_ERROR
						    : S->begin_reason;
			uint64_t ip = nt->first_ip;

			i += (size_t)nt->first_n - 1;
			if (nt->first_from_psb0 && S->have_ip && S->enabled) {
				/* in sync: the PSB+ says nothing */
				carry = e.flags & STRACE_F_TIME_EXACT;
				continue;
			}
			e.flags &= STRACE_F_TIME_EXACT;
			if (nt->first_from_psb0 && !nt->err_before &&
			    !S->pending_ovf &&
			    (S->begin_reason == STRACE_REASON_ENABLE ||
			     S->psb_off)) {
				/* tracing was off by the trace's account, and
				 * the PSB+ has a FUP: an error there, as the
				 * sequential walk gives it (flow.c,
				 * strace_dec_fup()) */
				struct strace_event x = e;

				x.type = STRACE_EV_ERROR;
				x.flags = STRACE_E_DESYNC;
				x.a = 0;
				x.b = nt->first_off;
				if ((err = sink(w, &x, ins)))
					return err;
				w->st.errors++;
				S->pending_syscall = 0;
				reason = STRACE_REASON_ERROR;
			}
			if (S->pending_ovf) {
				e.type = STRACE_EV_OVERFLOW;
				e.a = ip;
				e.b = S->ovf_offset;
				if ((err = sink(w, &e, ins)))
					return err;
				e.flags = 0;
				reason = STRACE_REASON_OVERFLOW;
			}
			if (S->pending_syscall) {
				e.type = STRACE_EV_SYSRET;
				e.a = 0;
				e.b = ip;
			} else {
				e.type = STRACE_EV_TRACE_BEGIN;
				e.a = ip;
				e.b = (uint64_t)reason;
			}
			if ((err = sink(w, &e, ins)))
				return err;
			continue;
		}
		if (r < j->ev.nrun && i == j->ev.run[r].a) {
			const struct seg_run *run = &j->ev.run[r++];
			if (run_taken(w, &j->ev, run)) {
				if ((err = put_run(w, &j->ev, run, &carry)))
					return err;
				/* the time points inside it change nothing
				 * (none ended the worker's interval) */
				while (m < j->ev.nmk && j->ev.mk[m].at < run->b)
					m++;
				i = run->b - 1;
				continue;
			}
		}
		seam_flags(&j->ev.v[i], &carry);
		if ((err = sink(w, &j->ev.v[i], j->ev.ins[i])))
			return err;
	}
	for (; m < j->ev.nmk; m++)
		if ((err = mark(w, &j->ev.mk[m])))
			return err;
	if (first_seg || nt->first_idx >= 0) {
		*S = j->end_state;
	} else {
		/* tracing stayed off through the segment (its PSB+ said
		 * so, unless sync was lost after it) */
		S->have_ip = S->enabled = 0;
		S->psb_off = j->end_state.psb_off;
		if (nt->ovf_before) {
			S->pending_ovf = 1;
			S->ovf_offset = nt->ovf_before_off;
		}
		if (nt->err_before)
			S->begin_reason = STRACE_REASON_ERROR;
	}
	w->st.bytes += j->st.bytes;
	w->st.packets += j->st.packets;
	w->st.slow_packets += j->st.slow_packets;
	w->st.branches += j->st.branches;
	w->st.insns += j->st.insns;
	w->st.errors += j->st.errors;
	w->st.overflows += j->st.overflows;
	w->st.pebs_records += j->st.pebs_records;
	w->st.ptwrites += j->st.ptwrites;
	w->st.syncs += j->st.syncs;
	return 0;
}
