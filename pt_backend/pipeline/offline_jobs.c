/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/offline_jobs.c - per-thread recordings: a queue's AUX
 * buffers decoded as runs of one stream, one queue per job (-j), into a sink
 * each; the losses, exits and cuts of a queue that the per-CPU decode
 * shares.
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

/* --- decoding jobs ------------------------------------------------------ */

/* by offset; of two at one offset the longer first, so that a repeat
 * of the shorter lies inside it */
static int cmp_abuf(const void *a, const void *b)
{
	const struct abuf *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

/* A per-thread queue is named by its thread, a per-CPU one by its CPU. */
static const char *queue_what(const struct queue *q)
{
	return q->cpu == UINT32_MAX ? "thread" : "CPU";
}

static uint32_t queue_who(const struct queue *q)
{
	return q->cpu == UINT32_MAX ? q->tid : q->cpu;
}

/* The process of thread tid (tid itself if the recording names none). */
uint32_t offline_pid_of(struct ctx *c, uint32_t tid)
{
	const struct thread *t = offline_find_thread(c, tid);
	return t ? t->pid : tid;
}

/* The losses of thread tid, or with all set those of every thread (that
 * --tid keeps): not those that belong to no thread (define_names()). */
int offline_emit_losts(struct ctx *c, struct strace_sink *s, uint32_t tid,
			      int all)
{
	for (size_t i = 0; i < c->losts.n; i++) {
		const struct lost_rec *l = &c->losts.v[i];
		if (all ? l->tid == UINT32_MAX ||
				    (c->o->tid && l->tid != c->o->tid)
			: l->tid != tid)
			continue;
		struct strace_event e = {STRACE_EV_LOST, l->flags, l->tid,
					 l->time, l->count, 0};
		int rc = strace_sink_emit(s, &e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * q's AUX buffers sorted by offset, each byte of the AUX area once: a
 * buffer that repeats bytes of those before it (an AUXTRACE record written
 * twice, or two that overlap) loses the bytes it repeats, and is dropped
 * when nothing is left, with a warning; decoding the bytes twice would
 * give their events twice, and the difference of the offsets is no gap.
 */
void offline_sort_queue(struct ctx *c, struct queue *q)
{
	uint64_t end = 0;
	size_t n = 0;

	qsort(q->v, q->n, sizeof(*q->v), cmp_abuf);
	for (size_t i = 0; i < q->n; i++) {
		struct abuf b = q->v[i];
		if (n && b.offset < end) {
			uint64_t rep = end - b.offset < b.size ? end - b.offset
							       : b.size;
			offline_warn(c,
				     "%s %u: %llu bytes of AUX data at offset "
				     "0x%llx were in the trace before (an "
				     "AUXTRACE record written twice, or two "
				     "that overlap): decoded once, the repeat "
				     "skipped",
				     queue_what(q), queue_who(q),
				     (unsigned long long)rep,
				     (unsigned long long)b.offset);
			offline_add_done(c, rep);
			if (rep == b.size)
				continue;
			b.data += rep, b.size -= rep, b.offset += rep;
		}
		if (b.offset + b.size > end)
			end = b.offset + b.size;
		q->v[n++] = b;
	}
	q->n = n;
}

/*
 * The next run of contiguous AUX buffers of q from *i on (q sorted by
 * offset): *data and *len, joined into *joined when it spans buffers. A
 * gap before it (AUX data missing between two buffers) is reported and
 * passed to emit as a LOST event first. Advances *i past the run.
 */
int offline_next_run(struct ctx *c, struct queue *q, size_t *i,
		     uint8_t **joined, const uint8_t **data, uint64_t *len,
		     strace_emit_fn emit, void *arg)
{
	size_t j = *i + 1;

	*len = q->v[*i].size;
	while (j < q->n &&
	       q->v[j].offset == q->v[j - 1].offset + q->v[j - 1].size) {
		*len += q->v[j].size;
		j++;
	}
	*data = q->v[*i].data;
	if (j > *i + 1) {
		free(*joined);
		*joined = malloc(*len);
		if (!*joined)
			return -ENOMEM;
		uint64_t at = 0;
		for (size_t k = *i; k < j; k++) {
			memcpy(*joined + at, q->v[k].data, q->v[k].size);
			at += q->v[k].size;
		}
		*data = *joined;
	}
	if (*i > 0) {
		/* AUX data between two buffers is missing. */
		uint64_t prev_end = q->v[*i - 1].offset + q->v[*i - 1].size;
		struct strace_event e = {STRACE_EV_LOST, STRACE_LOST_AUX,
					 q->tid, 0, q->v[*i].offset - prev_end,
					 0};
		int rc;

		offline_warn(c,
			     "%s %u: %llu bytes of AUX data missing at offset "
			     "0x%llx",
			     queue_what(q), queue_who(q),
			     (unsigned long long)e.a,
			     (unsigned long long)prev_end);
		pthread_mutex_lock(&c->stats_lock);
		c->st.lost++;
		pthread_mutex_unlock(&c->stats_lock);
		if ((rc = emit(arg, &e)) < 0)
			return rc;
	}
	*i = j;
	return 0;
}

/* n more bytes decoded: the progress callback. */
void offline_add_done(struct ctx *c, uint64_t n)
{
	uint64_t done = atomic_fetch_add(&c->done_bytes, n) + n;
	if (c->o->progress)
		c->o->progress(c->o->cb_arg, done, c->total_bytes);
}

/* A run's progress as its walker tells it (a long run is one decode). */
struct run_progress {
	struct ctx *c;
	uint64_t told; /* bytes of the run added to done_bytes */
};

static void on_walk_progress(void *arg, size_t done)
{
	struct run_progress *p = arg;

	if (done > p->told) {
		offline_add_done(p->c, done - p->told);
		p->told = done;
	}
}

/* A run of len bytes decoded to its end, told of already: no PSB in it is
 * worth a warning; the rest of its progress. */
void offline_run_done(struct ctx *c, const struct queue *q, uint64_t len,
			     uint64_t told, int nosync)
{
	if (nosync)
		offline_warn(c,
			     "%s %u: no PSB in %llu bytes of trace: nothing to "
			     "decode there",
			     queue_what(q), queue_who(q),
			     (unsigned long long)len);
	offline_add_done(c, len > told ? len - told : 0);
}

/* The file offset of a pointer into the perf.data mapping. */
static uint64_t file_off(const struct ctx *c, const uint8_t *p)
{
	return (uint64_t)(p - c->perf.map);
}

/*
 * The perf.data shrank under its mapping (strace_perf_sigbus(): the pages
 * it lost read as zeros, the decode went on): one LOST event through emit
 * for the bytes of q's trace at or past the cut, for readers to see that
 * the thread's (or CPU's) stream is missing its end. Nothing if the file
 * did not shrink or q's trace all lies before the cut.
 */
int offline_emit_cut(struct ctx *c, const struct queue *q, uint32_t tid,
			    strace_emit_fn emit, void *arg)
{
	uint64_t lost_end, cut = strace_perf_cut(&c->perf, 1, &lost_end);
	uint64_t n = 0;

	if (cut == UINT64_MAX)
		return 0;
	for (size_t i = 0; i < q->n; i++) {
		uint64_t off = file_off(c, q->v[i].data);
		uint64_t end = off + q->v[i].size;
		off = off > cut ? off : cut;
		end = end < lost_end ? end : lost_end;
		if (end > off)
			n += end - off;
	}
	if (!n)
		return 0;
	struct strace_event e = {STRACE_EV_LOST, STRACE_LOST_AUX, tid, 0, n, 0};
	pthread_mutex_lock(&c->stats_lock);
	c->st.lost++;
	pthread_mutex_unlock(&c->stats_lock);
	return emit(arg, &e);
}

/* Whether q's buffer i lies past where the file shrank: nothing of it is
 * left to decode (offline_emit_cut() counts it). Cheap: no system call. */
int offline_past_cut(struct ctx *c, const struct queue *q, size_t i)
{
	return file_off(c, q->v[i].data) >= strace_perf_cut(&c->perf, 0, NULL);
}

/* Decode a queue's AUX buffers with walker: contiguous buffers as one
 * stream (a packet may straddle two); a hole in the AUX offsets is a gap
 * (a LOST event through emit), decoded apart. */
static int walk_queue(struct ctx *c, struct queue *q,
		      struct strace_walker *walker, struct run_progress *prog,
		      strace_emit_fn emit, void *arg)
{
	uint8_t *joined = NULL;
	const uint8_t *data;
	uint64_t len;
	int rc = 0;

	offline_sort_queue(c, q);
	for (size_t i = 0; i < q->n;) {
		size_t first = i;
		rc = offline_next_run(c, q, &i, &joined, &data, &len, emit,
				      arg);
		if (rc < 0)
			break;
		if (offline_past_cut(c, q, first)) {
			offline_add_done(c, len);
			continue;
		}
		prog->told = 0;
		long n = c->seg_threads > 1
				 ? strace_walker_decode_parallel(
					   walker, data, (size_t)len,
					   c->seg_threads, c->o->piece_bytes)
				 : strace_walker_decode(walker, data,
							(size_t)len);
		if (n < 0 && n != -STRACE_E_NOSYNC) {
			rc = (int)n;
			break;
		}
		offline_run_done(c, q, len, prog->told, n == -STRACE_E_NOSYNC);
	}
	free(joined);
	return rc;
}

/* A perf EXIT record as a thread_exit event (perf records no status). */
int offline_put_exit(struct strace_sink *s, const struct exit_rec *x)
{
	struct strace_event e = {STRACE_EV_THREAD_EXIT, STRACE_EXIT_NO_STATUS,
				 x->tid, x->time == UINT64_MAX ? 0 : x->time,
				 x->pid, 0};
	return strace_sink_emit(s, &e);
}

/* The end of thread tid, after its trace (a per-thread decode). */
static int emit_thread_exit(struct ctx *c, struct strace_sink *s,
			    uint32_t tid)
{
	for (size_t i = 0; i < c->exits.n; i++)
		if (c->exits.v[i].tid == tid)
			return offline_put_exit(s, &c->exits.v[i]);
	return 0;
}

void offline_add_stats(struct ctx *c, struct strace_walker *walker,
			      uint64_t events, uint64_t missing)
{
	struct strace_walk_stats ws;

	strace_walker_stats(walker, &ws);
	pthread_mutex_lock(&c->stats_lock);
	c->st.pt_bytes += ws.bytes;
	c->st.branches += ws.branches;
	c->st.insns += ws.insns;
	c->st.errors += ws.errors;
	c->st.overflows += ws.overflows;
	c->st.events += events;
	c->st.missing += missing;
	pthread_mutex_unlock(&c->stats_lock);
}

static int decode_queue(struct ctx *c, struct queue *q)
{
	const struct strace_offline_opts *o = c->o;
	struct strace_image *img = NULL;
	struct strace_walker *walker = NULL;
	struct strace_sink *s;
	uint64_t missing = 0;
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ring = o->ring;
	s->types = o->types;
	s->syms = c->syms;
	s->hints = c->seg_threads >= STRACE_PARALLEL_SETTLE_FROM;
	rc = strace_writer_open(o->ring, &s->w);
	if (rc < 0)
		goto out;
	strace_writer_set_direct(s->w, c->direct);
	rc = offline_new_image(c, &img);
	if (rc < 0)
		goto out;
	offline_add_maps(c, img, offline_pid_of(c, q->tid), 0, &missing);
	s->img = img;

	struct strace_walk_opts wo;
	strace_sink_walk_opts(&wo, &c->walk, q->tid, s);
	/* (a sink's walker here always takes the hints; the sink uses
	 * them when s->hints) */
	wo.flags |= STRACE_WALK_NAMED_HINTS;
	struct run_progress prog = {c, 0};
	wo.progress = on_walk_progress;
	wo.progress_arg = &prog;
	rc = strace_walker_new(img, &wo, &walker);
	if (rc < 0)
		goto out;
	rc = offline_emit_losts(c, s, q->tid, 0);
	if (rc < 0)
		goto out;

	rc = walk_queue(c, q, walker, &prog, strace_sink_emit, s);
	if (rc < 0)
		goto out;
	rc = emit_thread_exit(c, s, q->tid);
	if (rc < 0)
		goto out;
	rc = offline_emit_cut(c, q, q->tid, strace_sink_emit, s);
	if (rc < 0)
		goto out;
	rc = strace_writer_flush(s->w);
out:
	if (walker)
		offline_add_stats(c, walker, s->events, missing);
	strace_walker_free(walker);
	strace_image_free(img);
	if (s->w) {
		int crc = strace_writer_close(s->w);
		if (rc >= 0 && crc < 0)
			rc = crc;
	}
	free(s);
	return rc;
}

void *offline_job_main(void *arg)
{
	struct ctx *c = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&c->next_queue, 1);
		if (i >= c->queues.n || c->err)
			return NULL;
		struct queue *q = &c->queues.v[i];
		if (c->o->tid && q->tid != c->o->tid)
			continue;
		int rc = decode_queue(c, q);
		if (rc < 0) {
			pthread_mutex_lock(&c->stats_lock);
			if (!c->err)
				c->err = rc;
			pthread_mutex_unlock(&c->stats_lock);
		}
	}
}
