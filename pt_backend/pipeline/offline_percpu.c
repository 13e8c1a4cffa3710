/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/offline_percpu.c - per-CPU recordings: each CPU's
 * stream cut where its task or image changes, decoded a piece at a time, the
 * CPUs' events merged by time through one sink.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offline_int.h"

/* --- per-CPU recordings ------------------------------------------------- */

/*
 * A CPU's AUX data is one stream that runs the threads scheduled there, one
 * after the other: one walker decodes it as one stream (as perf does), and
 * each event goes to the thread that ran on that CPU at its time (the last
 * ITRACE_START or switch-in before it). The CPUs' events are merged by
 * time into the ring, so that a thread that moved between CPUs has its
 * events in order. Each CPU's stream is decoded a piece at a time, when
 * the merge has taken all its events so far: memory holds a piece's
 * events per CPU, not the trace's.
 */
#define PERCPU_PIECE (256u << 10) /* default strace_offline_opts.piece_bytes */

/* Which task, in which image, a CPU's stream runs from a time on. */
struct epoch {
	uint64_t time;
	int slot;
	uint32_t tid;
};

/* A piece of a run of a CPU's stream decoded against one image: [from,
 * to), after the neutralised [psb, from) when from is not a sync point
 * (ctxcut.h), its first TIP.PGE made whole. */
struct seg {
	uint64_t from, to, psb, pge_off, pge_end, pge_ip;
	int slot;
	uint32_t tid;
};

struct slot_walker {
	int slot;
	struct strace_walker *w;
};

struct cpu_events {
	const struct sched *s; /* this CPU's, by time */
	size_t ns;
	uint32_t tid; /* when no record says */
	VEC(struct strace_event) ev;
	VEC(struct strace_image *) evimg; /* the image of each event */
	size_t at; /* merge cursor */
	/* the images over time, and a walker for each image met */
	VEC(struct epoch) ep;
	VEC(struct slot_walker) walkers;
	struct strace_walker *walker; /* the current segment's */
	struct strace_image *img;     /* its image */
	uint32_t seg_tid;             /* its task (with several epochs) */
	/* the feed: q's runs of buffers, cut into segments, decoded as
	 * streams in pieces */
	struct queue *q;
	size_t next;      /* q's next buffer */
	uint8_t *joined;  /* the run, when it spans buffers */
	const uint8_t *run;
	uint64_t run_len;
	VEC(struct seg) segs; /* the run's */
	size_t seg_at;
	uint8_t *spliced; /* the segment, when it is not the run's bytes */
	const uint8_t *data;
	uint64_t len, used; /* the segment, and how much is decoded */
	uint64_t seg_bytes; /* its bytes in the run, for the progress */
	size_t window;    /* bytes offered to the next decode call */
	int in_seg;
};

static uint32_t tid_at(const struct cpu_events *ce, uint64_t t)
{
	size_t lo = 0, hi = ce->ns;

	if (!ce->ns)
		return ce->tid;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (ce->s[m].time <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return ce->s[lo ? lo - 1 : 0].tid;
}

static int collect(void *arg, const struct strace_event *ev)
{
	struct cpu_events *ce = arg;
	struct strace_event e = *ev;

	/* with several tasks, the segment's: the cut is where the stream
	 * moved (a TIP.PGD/PGE pair), which the events' times (the
	 * reference decoder's run ahead) may not tell */
	e.tid = ce->ep.n > 1 ? ce->seg_tid : tid_at(ce, e.time);
	if (VEC_PUSH(ce->evimg, ce->img))
		return -ENOMEM;
	return VEC_PUSH(ce->ev, e);
}

/*
 * How a thread's trace last stopped. A CPU's walker knows that CPU's
 * stream only, but a thread stopped at a syscall on one CPU resumes on
 * another: the merge makes each resume what the thread's own history says
 * (sysret after a syscall, trace_begin(enable) after a disable,
 * trace_begin(start) first), as a per-thread decode would.
 */
enum { T_NEW, T_RUNNING, T_SYSCALL, T_OFF };
struct tstate {
	uint32_t tid;
	int state;
	uint32_t cpu; /* the CPU of its last event, + 1 (0: none yet) */
};
struct tstates {
	struct tstate *v;
	size_t n, cap;
};

/* e of thread e->tid, from cpu's stream (UINT32_MAX: not known), as its
 * thread resumes there. Returns 1 when the thread's CPU changed (a cpu
 * event goes before e), 0, or -ENOMEM. */
static int thread_resumes(struct tstates *ts, struct strace_event *e,
			  uint32_t cpu)
{
	struct tstate *t = NULL;
	int moved = 0;

	for (size_t i = 0; i < ts->n && !t; i++)
		if (ts->v[i].tid == e->tid)
			t = &ts->v[i];
	if (!t) {
		struct tstate nt = {e->tid, T_NEW, 0};
		if (VEC_PUSH(*ts, nt))
			return -ENOMEM;
		t = &ts->v[ts->n - 1];
	}
	if (cpu != UINT32_MAX && t->cpu != cpu + 1) {
		t->cpu = cpu + 1;
		moved = 1;
	}
	switch (e->type) {
	case STRACE_EV_SYSCALL:
		t->state = T_SYSCALL;
		break;
	case STRACE_EV_TRACE_END:
		if (e->b == STRACE_REASON_DISABLE)
			t->state = T_OFF;
		break;
	case STRACE_EV_TRACE_BEGIN:
	case STRACE_EV_SYSRET: {
		uint64_t ip = e->type == STRACE_EV_SYSRET ? e->b : e->a;
		if (e->type == STRACE_EV_TRACE_BEGIN &&
		    e->b != STRACE_REASON_START &&
		    e->b != STRACE_REASON_ENABLE) {
			t->state = T_RUNNING; /* after an error, an overflow */
			break;
		}
		if (t->state == T_SYSCALL) {
			e->type = STRACE_EV_SYSRET;
			e->a = 0;
			e->b = ip;
		} else {
			e->type = STRACE_EV_TRACE_BEGIN;
			e->a = ip;
			e->b = t->state == T_OFF ? STRACE_REASON_ENABLE
						 : STRACE_REASON_START;
		}
		t->state = T_RUNNING;
		break;
	}
	default:
		break;
	}
	return moved;
}

static size_t cpu_piece(const struct ctx *c)
{
	return c->o->piece_bytes ? c->o->piece_bytes : PERCPU_PIECE;
}

/* The epoch at time t (the first one before them all). */
static const struct epoch *epoch_at(const struct cpu_events *ce, uint64_t t)
{
	size_t i = 0;

	while (i + 1 < ce->ep.n && ce->ep.v[i + 1].time <= t)
		i++;
	return &ce->ep.v[i];
}

static int push_seg(struct cpu_events *ce, const struct seg *sg)
{
	struct seg *last = ce->segs.n ? &ce->segs.v[ce->segs.n - 1] : NULL;

	if (sg->to <= sg->from)
		return 0;
	/* the same task again (another one ran between, traceless): one
	 * stream, no resync */
	if (last && last->slot == sg->slot && last->tid == sg->tid &&
	    last->to == sg->from) {
		last->to = sg->to;
		return 0;
	}
	return VEC_PUSH(ce->segs, *sg);
}

/*
 * ce's current run cut where its CPU moves to another task or image: at
 * each epoch's first TIP.PGE (or PSB) at or after its time, the cut made
 * just after the TIP.PGD before it (or at a PSB between). With one
 * epoch, the run is one segment and not even scanned.
 */
static int plan_run(struct ctx *c, struct cpu_events *ce)
{
	struct strace_ctx_point *pt = NULL;
	size_t np = 0, pi = 0, k;
	struct seg sg = {0, 0, STRACE_CTX_NONE, STRACE_CTX_NONE, 0, 0, 0, 0};
	int rc;

	ce->segs.n = 0;
	ce->seg_at = 0;
	sg.to = ce->run_len;
	sg.slot = ce->ep.v[0].slot;
	sg.tid = ce->ep.v[0].tid;
	if (ce->ep.n == 1)
		return push_seg(ce, &sg);
	rc = strace_ctx_scan(ce->run, (size_t)ce->run_len, &c->perf.time,
			     c->perf.has_time, &pt, &np);
	if (rc < 0)
		return rc;
	if (!np) { /* no PSB: nothing the walker can decode here */
		free(pt);
		return push_seg(ce, &sg);
	}
	sg.slot = epoch_at(ce, pt[0].time)->slot;
	sg.tid = epoch_at(ce, pt[0].time)->tid;
	for (k = 0; k < ce->ep.n && ce->ep.v[k].time <= pt[0].time; k++)
		;
	for (; k < ce->ep.n; k++) {
		const struct epoch *e = &ce->ep.v[k];
		const struct strace_ctx_point *p;
		uint64_t x = sg.from;
		int at_sync;

		if (e->slot == sg.slot && e->tid == sg.tid)
			continue;
		while (pi < np &&
		       (pt[pi].off < sg.from || pt[pi].time < e->time))
			pi++;
		if (pi == np)
			break; /* the rest of the run is the current image's */
		p = &pt[pi];
		at_sync = p->is_psb;
		if (p->is_psb) {
			x = p->off;
		} else {
			if (p->pgd != STRACE_CTX_NONE && p->pgd > x &&
			    p->pgd <= p->off)
				x = p->pgd;
			if (p->psb != STRACE_CTX_NONE && p->psb >= x &&
			    p->psb < p->off) {
				x = p->psb;
				at_sync = 1;
			}
		}
		sg.to = x;
		if ((rc = push_seg(ce, &sg)) < 0)
			break;
		sg.from = x;
		sg.to = ce->run_len;
		sg.slot = e->slot;
		sg.tid = e->tid;
		sg.psb = STRACE_CTX_NONE;
		sg.pge_off = STRACE_CTX_NONE;
		if (!at_sync && x > 0 && p->psb != STRACE_CTX_NONE &&
		    p->psb < x) {
			sg.psb = p->psb;
			sg.pge_off = p->off;
			sg.pge_end = p->end;
			sg.pge_ip = p->ip;
		}
	}
	rc = rc < 0 ? rc : push_seg(ce, &sg);
	free(pt);
	return rc;
}

/* The walker of image slot k on ce's CPU, made on first use. */
static int seg_walker(struct ctx *c, struct cpu_events *ce, int k,
		      uint64_t *missing)
{
	struct strace_image *img;
	struct strace_walk_opts wo;
	struct slot_walker sw = {k, NULL};
	int rc;

	for (size_t i = 0; i < ce->walkers.n; i++)
		if (ce->walkers.v[i].slot == k) {
			ce->walker = ce->walkers.v[i].w;
			ce->img = c->slots.v[k].img;
			return 0;
		}
	rc = offline_slot_image(c, k, missing, &img);
	if (rc < 0)
		return rc;
	strace_sink_walk_opts(&wo, &c->walk, ce->tid, NULL);
	wo.emit = collect;
	wo.emit_arg = ce;
	rc = strace_walker_new(img, &wo, &sw.w);
	if (rc < 0)
		return rc;
	if (VEC_PUSH(ce->walkers, sw)) {
		strace_walker_free(sw.w);
		return -ENOMEM;
	}
	ce->walker = sw.w;
	ce->img = img;
	return 0;
}

/* Start ce's next segment: its walker and its bytes. */
static int start_seg(struct ctx *c, struct cpu_events *ce, uint64_t *missing)
{
	const struct seg *sg = &ce->segs.v[ce->seg_at++];
	struct imgslot *is;
	int rc = seg_walker(c, ce, sg->slot, missing);

	if (rc < 0)
		return rc;
	ce->seg_tid = sg->tid;
	is = &c->slots.v[sg->slot];
	if (!is->n && !is->warned) {
		is->warned = 1;
		offline_warn(
			c,
			"CPU %u runs pid %u, of which the recording has no "
			"mappings (no MMAP record for it or a parent): its "
			"code there becomes decode errors; record the whole "
			"workload (perf record -e intel_pt//u -- CMD)",
			ce->q->cpu, is->pid);
	}
	free(ce->spliced);
	ce->spliced = NULL;
	ce->seg_bytes = sg->to - sg->from;
	if (sg->psb != STRACE_CTX_NONE) {
		size_t n;
		rc = strace_ctx_splice(ce->run, (size_t)ce->run_len, sg->psb,
				       sg->from, sg->to, sg->pge_off,
				       sg->pge_end, sg->pge_ip, &ce->spliced,
				       &n);
		if (rc < 0)
			return rc;
		ce->data = ce->spliced;
		ce->len = n;
	} else {
		ce->data = ce->run + sg->from;
		ce->len = sg->to - sg->from;
	}
	ce->used = 0;
	ce->window = cpu_piece(c);
	ce->in_seg = 1;
	return 0;
}

/* Decode ce's stream until it has an event for the merge, or ends. */
static int feed(struct ctx *c, struct cpu_events *ce, uint64_t *missing)
{
	while (ce->at == ce->ev.n) {
		size_t piece, u = 0;
		int rc, final;
		long n;

		ce->at = ce->ev.n = ce->evimg.n = 0;
		if (!ce->in_seg) {
			if (ce->seg_at == ce->segs.n) {
				size_t first = ce->next;
				if (ce->next == ce->q->n)
					return 0; /* all merged */
				rc = offline_next_run(
					c, ce->q, &ce->next, &ce->joined,
					&ce->run, &ce->run_len, collect, ce);
				if (rc < 0)
					return rc;
				if (offline_past_cut(c, ce->q, first)) {
					offline_add_done(c, ce->run_len);
					continue;
				}
				rc = plan_run(c, ce);
				if (rc < 0)
					return rc;
				if (!ce->segs.n)
					continue;
			}
			rc = start_seg(c, ce, missing);
			if (rc < 0)
				return rc;
		}
		piece = ce->len - ce->used < ce->window
				? (size_t)(ce->len - ce->used)
				: ce->window;
		final = piece == ce->len - ce->used;
		n = strace_walker_decode_stream(ce->walker, ce->data + ce->used,
						piece, final, &u);
		if (n < 0 && n != -STRACE_E_NOSYNC)
			return (int)n;
		if (final) {
			if (ce->segs.n == 1)
				offline_run_done(c, ce->q, ce->len, 0,
						 n == -STRACE_E_NOSYNC);
			else
				offline_add_done(c, ce->seg_bytes);
			ce->in_seg = 0;
		} else if (!u && ce->window < SIZE_MAX / 2) {
			ce->window *= 2; /* no whole PSB+ in the piece yet */
		} else if (u) {
			ce->window = cpu_piece(c); /* back to the bound */
		}
		ce->used += final ? piece : u;
	}
	return 0;
}

static int cmp_sched(const void *a, const void *b)
{
	const struct sched *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The first traced process (0: none named). */
static uint32_t first_pid(const struct ctx *c)
{
	for (size_t i = 0; i < c->scheds.n; i++)
		if (c->scheds.v[i].traced && c->scheds.v[i].pid)
			return c->scheds.v[i].pid;
	return 0;
}

/*
 * The images of ce's CPU over time: at each record that puts a task
 * there (or execs one), the image of its pid then. The idle task (pid 0)
 * runs no user code: the image stays. A CPU with no such record runs
 * pid's image (all its mappings, its parents' first).
 */
static int cpu_epochs(struct ctx *c, struct cpu_events *ce, uint32_t pid,
		      int *fallback)
{
	for (size_t i = 0; i < ce->ns; i++) {
		const struct sched *sc = &ce->s[i];
		struct epoch e = {sc->time, 0, sc->tid};
		int sp;
		if (!sc->pid)
			continue;
		sp = offline_base_space(c, sc->pid, sc->time);
		if (sp < 0 || (e.slot = offline_space_slot(c, sp)) < 0)
			return -ENOMEM;
		if (ce->ep.n && ce->ep.v[ce->ep.n - 1].slot == e.slot &&
		    ce->ep.v[ce->ep.n - 1].tid == e.tid)
			continue;
		if (VEC_PUSH(ce->ep, e))
			return -ENOMEM;
	}
	if (ce->ep.n)
		return 0;
	if (*fallback < 0) {
		/* the old way: pid's mappings and its parents' */
		struct imgslot is = {NULL, 0, NULL, pid, 1};
		uint64_t missing = 0;
		int rc = offline_new_image(c, &is.img);
		if (rc < 0)
			return rc;
		offline_add_maps(c, is.img, pid, 0, &missing);
		if (VEC_PUSH(c->slots, is)) {
			strace_image_free(is.img);
			return -ENOMEM;
		}
		*fallback = (int)(c->slots.n - 1);
		c->st.missing += missing;
	}
	struct epoch e = {0, *fallback, ce->tid};
	return VEC_PUSH(ce->ep, e);
}

static int cmp_exit(const void *a, const void *b)
{
	const struct exit_rec *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* thread_exit events of the exits up to time t (all: UINT64_MAX). */
static int emit_exits(struct ctx *c, struct strace_sink *s, size_t *at,
		      uint64_t t)
{
	int rc = 0;

	for (; *at < c->exits.n && rc >= 0; (*at)++) {
		const struct exit_rec *x = &c->exits.v[*at];
		if (t != UINT64_MAX && x->time > t)
			break;
		if (c->o->tid && x->tid != c->o->tid)
			continue;
		rc = offline_put_exit(s, x);
	}
	return rc;
}

int offline_decode_percpu(struct ctx *c)
{
	const struct strace_offline_opts *o = c->o;
	struct strace_sink *s = NULL;
	struct cpu_events *ce;
	struct tstates ts = {0};
	uint64_t missing = 0;
	size_t nq = c->queues.n, xat = 0;
	uint32_t pid = first_pid(c);
	int rc, fallback = -1;

	if (!pid && nq)
		pid = offline_pid_of(c, c->queues.v[0].tid);
	if (!c->perf.has_time && nq > 1)
		offline_warn(
			c, "per-CPU recording without a time conversion: the "
			   "CPUs' traces cannot be ordered or split between "
			   "threads; each CPU's goes to the first thread seen "
			   "there, CPU after CPU");
	ce = calloc(nq ? nq : 1, sizeof(*ce));
	s = calloc(1, sizeof(*s));
	if (!ce || !s) {
		rc = -ENOMEM;
		goto out;
	}
	rc = offline_build_spaces(c);
	if (rc < 0)
		goto out;
	if (c->scheds.n)
		qsort(c->scheds.v, c->scheds.n, sizeof(*c->scheds.v),
		      cmp_sched);
	if (c->exits.n)
		qsort(c->exits.v, c->exits.n, sizeof(*c->exits.v), cmp_exit);

	for (size_t i = 0; i < nq; i++) {
		struct queue *q = &c->queues.v[i];

		for (size_t k = 0; k < c->scheds.n; k++)
			if (c->scheds.v[k].cpu == q->cpu) {
				if (!ce[i].ns)
					ce[i].s = &c->scheds.v[k];
				ce[i].ns++;
			}
		ce[i].tid = q->tid != UINT32_MAX ? q->tid : pid;
		ce[i].q = q;
		rc = cpu_epochs(c, &ce[i], pid, &fallback);
		if (rc < 0)
			goto out;
		offline_sort_queue(c, q);
	}

	/* Merge by time (ties: CPU order) through one sink. */
	s->ring = o->ring;
	s->types = o->types;
	s->syms = c->syms;
	rc = strace_writer_open(o->ring, &s->w);
	if (rc < 0)
		goto out;
	strace_writer_set_direct(s->w, 1); /* the one writer of the merge */
	rc = offline_emit_losts(c, s, 0, 1);
	while (rc >= 0) {
		struct cpu_events *best = NULL;
		for (size_t i = 0; i < nq && rc >= 0; i++) {
			rc = feed(c, &ce[i], &missing);
			if (ce[i].at < ce[i].ev.n &&
			    (!best || ce[i].ev.v[ce[i].at].time <
					      best->ev.v[best->at].time))
				best = &ce[i];
		}
		if (!best || rc < 0)
			break;
		s->img = best->evimg.v[best->at];
		struct strace_event *e = &best->ev.v[best->at++];
		if (c->perf.has_time && e->time)
			rc = emit_exits(c, s, &xat, e->time - 1);
		if (rc >= 0)
			rc = thread_resumes(&ts, e, best->q->cpu);
		if (rc > 0 && (!o->tid || e->tid == o->tid)) {
			/* the thread runs on another CPU from here */
			struct strace_event ce_ev = {STRACE_EV_CPU, 0, e->tid,
						     e->time, best->q->cpu,
						     0};
			rc = strace_sink_emit(s, &ce_ev);
		}
		if (rc >= 0 && (!o->tid || e->tid == o->tid))
			rc = strace_sink_emit(s, e);
	}
	if (rc >= 0)
		rc = emit_exits(c, s, &xat, UINT64_MAX);
	for (size_t i = 0; i < nq && rc >= 0; i++)
		if (!o->tid || ce[i].tid == o->tid)
			rc = offline_emit_cut(c, ce[i].q, ce[i].tid,
					      strace_sink_emit, s);
	if (rc >= 0)
		rc = strace_writer_flush(s->w);
	pthread_mutex_lock(&c->stats_lock);
	c->st.events += s->events;
	pthread_mutex_unlock(&c->stats_lock);
out:
	if (s && s->w) {
		int crc = strace_writer_close(s->w);
		if (rc >= 0 && crc < 0)
			rc = crc;
	}
	for (size_t i = 0; ce && i < nq; i++) {
		for (size_t k = 0; k < ce[i].walkers.n; k++) {
			offline_add_stats(c, ce[i].walkers.v[k].w, 0,
					  i || k ? 0 : missing);
			strace_walker_free(ce[i].walkers.v[k].w);
		}
		free(ce[i].walkers.v);
		free(ce[i].ep.v);
		free(ce[i].segs.v);
		free(ce[i].spliced);
		free(ce[i].joined);
		free(ce[i].ev.v);
		free(ce[i].evimg.v);
	}
	free(ce);
	free(ts.v);
	free(s);
	return rc;
}
