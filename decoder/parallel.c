/* SPDX-License-Identifier: MIT */
/*
 * decoder/parallel.c - strace_walker_decode_parallel(): a pool of threads
 * decoding a stream's segments (segment.h), merged in order by the caller.
 *
 * A pipeline: workers take segments in order (an atomic counter) into a
 * ring of R job slots; the caller merges slot after slot in order, and
 * frees each slot for the segment R further on. Memory: R segments' events.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/packet.h"
#include "decoder/segment.h"

struct pool {
	struct seg_job *jobs; /* R slots */
	size_t R;
	const uint64_t *offs;
	size_t nseg;
	_Atomic size_t next; /* next segment to take */
	const uint8_t *buf;
	size_t len;
	struct strace_walker **walkers;
	pthread_mutex_t mu;
	pthread_cond_t cv_done, cv_free;
	size_t merged;   /* segments merged (slots below are free) */
	uint8_t *done;   /* per slot: the segment in it is decoded */
	int stop;
	int spread; /* the merge spreads times: so do the workers, where
		     * they can (segment.h, strace_dec_seg_spread()) */
	int settle; /* the workers settle their events for the merge
		     * (strace_dec_seg_settle()) */
};


struct worker_arg {
	struct pool *p;
	unsigned id;
	uint64_t *named; /* its table for strace_dec_seg_settle(), or NULL:
			  * no STRACE_F_NAMED */
};

static void *worker(void *arg)
{
	struct worker_arg *a = arg;
	struct pool *p = a->p;
	size_t k;

	while ((k = atomic_fetch_add(&p->next, 1)) < p->nseg) {
		struct seg_job *j = &p->jobs[k % p->R];

		/* wait until segment k - R has been merged */
		pthread_mutex_lock(&p->mu);
		while (k >= p->merged + p->R && !p->stop)
			pthread_cond_wait(&p->cv_free, &p->mu);
		pthread_mutex_unlock(&p->mu);
		if (p->stop)
			break;
		j->ev.n = j->ev.nmk = 0;
		j->ev.err = 0;
		j->spread = p->spread;
		j->start = (size_t)p->offs[k];
		j->end = k + 1 < p->nseg ? (size_t)p->offs[k + 1] : p->len;
		j->last = k + 1 == p->nseg;
		if (!j->last)
			strace_dec_psb_plus(p->buf, p->len, j->end,
					    &j->next_fup, &j->fup_at,
					    &j->has_next_fup);
		else
			j->has_next_fup = 0;
		strace_dec_seg_decode(p->walkers[a->id], p->buf, p->len, j);
		if (p->settle)
			strace_dec_seg_settle(j, j->ret >= 0 ? a->named : NULL,
					      p->walkers[a->id]->o.types);
		pthread_mutex_lock(&p->mu);
		p->done[k % p->R] = 1;
		pthread_cond_broadcast(&p->cv_done);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* The walkers of the workers: w's options, their events into their
 * segments' vectors. Returns 0, -ENOMEM (those made are in ws). */
static int workers_new(struct strace_walker *w, struct strace_walker **ws,
		       unsigned nthreads)
{
	for (unsigned t = 0; t < nthreads; t++) {
		struct strace_walk_opts o = w->o;
		o.emit = strace_dec_vec_push;
		o.emit_batch = NULL;
		o.writer = NULL;
		o.cache = NULL;
		o.progress = NULL; /* the merge tells it, in order */
		if (strace_walker_new(w->img, &o, &ws[t]) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The caller's part: the segments merged in order into w as they
 * complete, each slot freed for the workers after. Returns 0, a
 * segment's error or the sink's. */
static long merge_all(struct strace_walker *w, struct pool *p)
{
	struct seg_state S = {.begin_reason = STRACE_REASON_START};
	long ret = 0;

	for (size_t k = 0; k < p->nseg; k++) {
		struct seg_job *j = &p->jobs[k % p->R];
		int err;

		pthread_mutex_lock(&p->mu);
		while (!p->done[k % p->R])
			pthread_cond_wait(&p->cv_done, &p->mu);
		pthread_mutex_unlock(&p->mu);
		if (j->ret < 0 && j->ret != -STRACE_E_NOSYNC) {
			ret = j->ret;
			break;
		}
		err = strace_dec_seg_merge(w, j, k == 0, &S);
		if (!err && k + 1 == p->nseg)
			err = strace_dec_seg_end_overflow(w, j, &S);
		if (err) {
			ret = err;
			break;
		}
		if (w->o.progress && j->end - w->in.prog_at >= PROGRESS_STEP) {
			w->in.prog_at = j->end;
			w->o.progress(w->o.progress_arg, j->end);
		}
		pthread_mutex_lock(&p->mu);
		p->done[k % p->R] = 0;
		p->merged = k + 1;
		pthread_cond_broadcast(&p->cv_free);
		pthread_mutex_unlock(&p->mu);
	}
	return ret;
}

long strace_walker_decode_parallel(struct strace_walker *w,
				   const uint8_t *buf, size_t len,
				   unsigned nthreads, size_t seg_bytes)
{
	uint64_t *offs = NULL;
	size_t n, maxs, k;
	struct pool p;
	struct strace_walker **ws = NULL;
	long start_events = w->out.events;
	long ret = 0;
	pthread_t th[64];
	struct worker_arg args[64];
	unsigned t, started = 0;

	if (!seg_bytes)
		seg_bytes = 64 << 10;
	if (nthreads > 64)
		nthreads = 64;
	if ((w->o.flags & STRACE_WALK_REFERENCE) || nthreads <= 1 ||
	    len < 2 * seg_bytes)
		return strace_walker_decode(w, buf, len);
	maxs = len / seg_bytes + 2;
	offs = malloc(maxs * sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	n = strace_pt_split(buf, len, seg_bytes, offs, maxs);
	if (n <= 1) {
		free(offs);
		return strace_walker_decode(w, buf, len);
	}
	strace_dec_image_load_all_symbols(w->img);
	memset(&p, 0, sizeof(p));
	p.R = (size_t)nthreads * 2; /* each worker one segment ahead: more
				     * slots only fault in more memory */
	p.offs = offs;
	p.nseg = n;
	p.buf = buf;
	p.len = len;
	p.jobs = aligned_alloc(128, p.R * sizeof(*p.jobs));
	if (p.jobs)
		memset(p.jobs, 0, p.R * sizeof(*p.jobs));
	p.done = calloc(p.R, 1);
	ws = calloc(nthreads, sizeof(*ws));
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv_done, NULL);
	pthread_cond_init(&p.cv_free, NULL);
	if (!p.jobs || !p.done || !ws) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < p.R; k++) {
		/* an event a byte of PT, more than most segments make (the
		 * bench's traces: one every two bytes), up to 40 MiB of
		 * address space; without it the vector grows as it fills */
		(void)strace_dec_vec_reserve(&p.jobs[k].ev,
					     seg_bytes < (1u << 20) ? seg_bytes
								   : 1u << 20);
	}
	if (workers_new(w, ws, nthreads) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	p.walkers = ws;
	p.spread = w->out.to == OUT_SPREAD;
	/* (with fewer workers the merge keeps up with them: on the
	 * benchmark's trace its work is a fifth of theirs together, and
	 * settling only adds to the work of all, on 2 cores -j 2 7% more
	 * CPU time; with more, the merge is what every worker waits for, and
	 * settling halves its work: docs/decoder.md, "Parallel decode") */
	p.settle = nthreads >= STRACE_PARALLEL_SETTLE_FROM;
	w->time.last_time = 0;
	w->in.prog_at = 0;
	for (t = 0; t < nthreads; t++) {
		args[t] = (struct worker_arg){&p, t, NULL};
		/* (no memory: no hints) */
		if (p.settle && (w->o.flags & STRACE_WALK_NAMED_HINTS))
			args[t].named = strace_dec_zalloc(SEG_NAMED_SLOTS,
							  sizeof(uint64_t));
		if (pthread_create(&th[t], NULL, worker, &args[t]) != 0) {
			free(args[t].named);
			break;
		}
		started++;
	}
	if (!started) {
		ret = -EAGAIN;
		goto out;
	}
	ret = merge_all(w, &p);
	if (ret >= 0)
		ret = strace_dec_walk_flush(w, w->out.events - start_events);
	pthread_mutex_lock(&p.mu);
	p.stop = 1;
	pthread_cond_broadcast(&p.cv_free);
	pthread_mutex_unlock(&p.mu);
	for (t = 0; t < started; t++) {
		pthread_join(th[t], NULL);
		free(args[t].named);
	}
out:
	if (ws)
		for (t = 0; t < nthreads; t++)
			strace_walker_free(ws[t]);
	if (p.jobs)
		for (size_t i = 0; i < p.R; i++)
			strace_dec_vec_free(&p.jobs[i].ev);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv_done);
	pthread_cond_destroy(&p.cv_free);
	free(p.jobs);
	free(p.done);
	free(ws);
	free(offs);
	return ret;
}
