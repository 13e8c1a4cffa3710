/* SPDX-License-Identifier: MIT */
/*
 * decoder/evvec.c - the event vector (evvec.h): its storage, and the
 * worker's spread of its times.
 */
#include <errno.h>
#include <stdlib.h>

#include "decoder/evvec.h"
#include "strace/internal/grow.h"

int strace_dec_vec_reserve(struct evvec *e, size_t n)
{
	struct strace_event *nv;
	uint64_t *ni;

	if (n <= e->cap)
		return 0;
	if (n > SIZE_MAX / sizeof(*nv))
		return -ENOMEM;
	nv = realloc(e->v, n * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	e->v = nv;
	ni = realloc(e->ins, n * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	e->ins = ni;
	e->cap = n;
	return 0;
}

/* Room for twice the events (4096 at first), in both arrays. Returns 0,
 * -ENOMEM (e's events then as they were, cap too). */
static int vec_grow(struct evvec *e)
{
	size_t capv = e->cap, capi = e->cap;
	struct strace_event *nv = strace_grow(e->v, &capv, sizeof(*nv), 4096);
	uint64_t *ni;

	if (!nv)
		return -ENOMEM;
	e->v = nv;
	ni = strace_grow(e->ins, &capi, sizeof(*ni), 4096);
	if (!ni)
		return -ENOMEM;
	e->ins = ni;
	e->cap = capv;
	return 0;
}

int strace_dec_vec_put(void *arg, const struct strace_event *ev,
		       uint64_t ins)
{
	struct evvec *e = arg;

	if (e->n == e->cap && vec_grow(e) < 0)
		return e->err = -ENOMEM;
	event_copy(&e->v[e->n], ev);
	e->ins[e->n] = ins;
	seg_sp_event(e, e->n++, ev, ins);
	return 0;
}

int strace_dec_vec_mark(void *arg, uint64_t t, uint64_t ins)
{
	struct evvec *e = arg;

	if (e->nmk == e->capmk) {
		struct seg_mark *nv =
			strace_grow(e->mk, &e->capmk, sizeof(*nv), 256);

		if (!nv)
			return e->err = -ENOMEM;
		e->mk = nv;
	}
	e->mk[e->nmk++] = (struct seg_mark){e->n, t, ins};
	strace_dec_seg_sp_next(e, e->n, t, ins, 1);
	return 0;
}

int strace_dec_vec_push(void *arg, const struct strace_event *ev)
{
	return strace_dec_vec_put(arg, ev, 0);
}

void strace_dec_vec_free(struct evvec *e)
{
	free(e->v);
	free(e->ins);
	free(e->mk);
	free(e->run);
	e->v = NULL;
	e->ins = NULL;
	e->mk = NULL;
	e->run = NULL;
	e->n = e->cap = e->nmk = e->capmk = e->nrun = e->caprun = 0;
}

/* Events [a, b) of e, held from (t0, i0) to (t1, i1): spread as
 * close_interval() spreads an interval without a stop, and kept as a
 * run. Returns 0, -ENOMEM. */
static int seg_run(struct evvec *e, size_t a, size_t b, uint64_t t0,
		   uint64_t i0, uint64_t t1, uint64_t i1)
{
	struct strace_dec_spread s = {.ev = e->v + a, .ins = e->ins + a};

	if (e->nrun == e->caprun) {
		struct seg_run *nr =
			strace_grow(e->run, &e->caprun, sizeof(*nr), 256);
		if (!nr)
			return -ENOMEM;
		e->run = nr;
	}
	share(&s, 0, (unsigned)(b - a), t0, i0, t1, i1, t0, 0, t0);
	e->run[e->nrun++] = (struct seg_run){a, b, t0, i0, 0, SIZE_MAX};
	return 0;
}

/* Every run of e gets its time back, and e keeps none. */
static void untake_all(struct evvec *e)
{
	for (size_t r = 0; r < e->nrun; r++)
		seg_run_untake(e->v, &e->run[r]);
	e->nrun = 0;
}

void strace_dec_seg_sp_start(struct evvec *e, int on)
{
	e->nrun = 0;
	e->sp = (struct seg_sp){.on = on, .from = SIZE_MAX};
}

/* The decisions of spread_put(), strace_dec_spread_slow() and
 * strace_dec_spread_mark(), replayed over the segment's events and time
 * points as they come: where each interval begins and what it holds. */
void strace_dec_seg_sp_next(struct evvec *e, size_t i, uint64_t t,
			    uint64_t ins, int mark)
{
	struct seg_sp *p = &e->sp;

	if (!p->on || (mark && (!t || (p->open && t <= p->t0))))
		return;
	/* (an earlier time or none ends the interval unspread) */
	if (p->open && p->ok && t > p->t0 && i > p->held &&
	    seg_run(e, p->held, i, p->t0, p->i0, t, ins) < 0) {
		untake_all(e);
		p->on = p->open = 0;
		return;
	}
	p->open = mark || t != 0;
	p->t0 = t;
	p->i0 = ins;
	p->held = mark ? i : i + 1; /* an event begins it, held after it */
	p->ok = i >= p->from;
}

int strace_dec_seg_spread(struct evvec *e, size_t from)
{
	size_t m = 0;

	strace_dec_seg_sp_start(e, 1);
	e->sp.from = from;
	for (size_t i = 0; i <= e->n && e->sp.on; i++) {
		/* the time points before event i */
		for (; m < e->nmk && e->mk[m].at <= i; m++)
			strace_dec_seg_sp_next(e, i, e->mk[m].time,
					       e->mk[m].ins, 1);
		if (i < e->n)
			seg_sp_event(e, i, &e->v[i], e->ins[i]);
	}
	if (!e->sp.on)
		return -ENOMEM;
	e->sp.on = 0;
	return 0;
}
