/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/offline_int.h - the offline decoder's own header
 * (private to pt_backend/pipeline/): what its files share, one layer each,
 * each calling only the ones below it in this list:
 *
 *   offline.c          strace_offline_decode(): set-up, names, the end
 *   offline_percpu.c   per-CPU recordings: decode and merge by time
 *   offline_jobs.c     per-thread recordings: one job per queue
 *   offline_space.c    objects and address spaces, their images
 *   offline_scan.c     the pass over the records (sideband, AUX)
 *
 * (offline_warn(), in offline_scan.c, is the warning every layer gives.)
 */
#ifndef PT_BACKEND_PIPELINE_OFFLINE_INT_H
#define PT_BACKEND_PIPELINE_OFFLINE_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "pipeline.h"
#include "ctxcut.h"
#include "pt_backend/perf/perf.h"
#include "sink.h"
#include "strace/internal/grow.h"

struct mapping {
	uint32_t pid;
	uint64_t start, len, pgoff;
	const char *path; /* a copy (struct ctx.strs) */
	uint64_t time;    /* the record's (UINT64_MAX: not known) */
	int space;        /* the address space it went into (spaces) */
	const char *file; /* the file read for it (resolve_objects()) */
	int has_id;       /* the recording names its build-id */
};

struct thread {
	uint32_t tid, pid;
	const char *comm; /* a copy (struct ctx.strs), or NULL */
};

/* A name definition (DSO, PROCESS, THREAD), in the order of the records
 * that made it, as the live decoder emits them too. */
struct def {
	uint16_t type;
	uint32_t tid;
	uint64_t a, key, aux;
	const char *name; /* a copy (struct ctx.strs) */
};

struct fork_rec {
	uint32_t pid, ppid;
	uint64_t time; /* UINT64_MAX: not known */
	size_t seq;    /* record order */
};

/* An exec (COMM with PERF_RECORD_MISC_COMM_EXEC): a new image for pid. */
struct exec_rec {
	uint32_t pid;
	uint64_t time;
	size_t seq;
};

struct exit_rec {
	uint32_t pid, tid;
	uint64_t time;
};

/*
 * An address space: a process between two of its execs. A forked
 * child's starts as a copy of its parent's at the fork (the parent's
 * mappings up to then), an exec's as the process's before it (perf keeps
 * them too; the new program's mappings replace what they overlap); the
 * mappings recorded for the pid from its start on go into it.
 */
struct space {
	uint32_t pid;
	uint64_t from;   /* time it starts */
	int parent;      /* the space it was forked from, or -1 */
	uint64_t forked; /* the fork's or exec's time (the parent's mappings
			  * up to it) */
	int slot;        /* its image (struct imgslot), -1: not made yet */
};

/* An image, shared by the spaces whose mappings are the same (a parent
 * and its forked child before either maps more; threads). */
struct imgslot {
	size_t *maps; /* indices into ctx.maps, in the order they apply */
	size_t n;
	struct strace_image *img; /* made when a CPU first runs it */
	uint32_t pid;             /* the first space's, for messages */
	int warned;
};

struct abuf {
	const uint8_t *data;
	uint64_t size, offset;
};

struct queue {
	uint32_t idx, tid, cpu;
	struct abuf *v; /* AUX buffers, a VEC */
	size_t n, cap;
	uint64_t bytes;
};

/* Which thread runs on a CPU from a time on (per-CPU recordings): from
 * ITRACE_START and context-switch records. */
struct sched {
	uint32_t cpu, pid, tid;
	uint64_t time;
	size_t seq; /* record order, for a stable sort */
	int traced; /* a traced task's own record (not a CPU-wide switch) */
};

struct lost_rec {
	uint32_t tid;
	uint16_t flags;
	uint64_t time, count;
};

/* A growable array: v (elements), n, cap. */
#define VEC(T)                                                                 \
	struct {                                                               \
		T *v;                                                          \
		size_t n, cap;                                                 \
	}

static inline int vec_grow(void **v, size_t *cap, size_t n, size_t esz)
{
	void *p;

	if (n < *cap)
		return 0;
	if (!(p = strace_grow(*v, cap, esz, 16)))
		return -ENOMEM;
	*v = p;
	return 0;
}
#define VEC_PUSH(vec, val)                                                     \
	(vec_grow((void **)&(vec).v, &(vec).cap, (vec).n, sizeof(*(vec).v)) ? \
		 -ENOMEM :                                                     \
		 ((vec).v[(vec).n++] = (val), 0))

struct ctx {
	const struct strace_offline_opts *o;
	struct strace_perf perf;
	VEC(struct mapping) maps;
	VEC(struct thread) threads;
	VEC(struct fork_rec) forks;
	VEC(struct exec_rec) execs;
	VEC(struct exit_rec) exits;
	VEC(struct space) spaces;
	VEC(struct imgslot) slots;
	size_t nrec; /* records seen, for the order of equal times */
	VEC(struct queue) queues;
	VEC(struct lost_rec) losts;
	VEC(struct def) defs;
	VEC(struct sched) scheds;
	VEC(char *) strs; /* names copied out of the file */
	const char *vdso;     /* the [vdso] image to map, NULL: none */
	char vdso_hint[4096]; /* the build-id cache's path for it, or "" */
	struct strace_symset *syms;
	/* every walker's: the flags (o->walk_flags, and STRACE_WALK_PEBS
	 * when an event of the recording has aux_output,
	 * STRACE_WALK_PTWRITE when its intel_pt config has the ptw bit),
	 * the recording's time conversion and processor (its CPUID
	 * header) */
	struct strace_walk_base walk;
	struct strace_objcache *objects; /* o->objects, or our own */
	struct strace_objcache *own_objects;
	_Atomic size_t next_queue;
	int direct; /* one decoding writer: it writes in place (a lossless
		     * ring, strace_writer_set_direct()) */
	unsigned seg_threads; /* threads splitting one queue's trace at its
			       * PSBs: the jobs the queues leave over */
	_Atomic uint64_t done_bytes;
	uint64_t total_bytes;
	pthread_mutex_t stats_lock;
	struct strace_offline_stats st;
	int err;
	int opened; /* perf was opened (strace_perf_open()) */
};

/* offline_scan.c: the records */
void offline_find_cpu(struct ctx *c);
struct thread *offline_find_thread(struct ctx *c, uint32_t tid);
void offline_find_walk_flags(struct ctx *c);
const char *offline_keep_name(struct ctx *c, const char *s);
int offline_scan(struct ctx *c, uint64_t *err_off);
void offline_warn(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* offline_space.c: objects and address spaces */
int offline_add_maps(struct ctx *c, struct strace_image *img, uint32_t pid,
		     int depth, uint64_t *missing);
int offline_base_space(struct ctx *c, uint32_t pid, uint64_t t);
int offline_build_spaces(struct ctx *c);
int offline_find_vdso(struct ctx *c);
int offline_new_image(struct ctx *c, struct strace_image **img);
int offline_resolve_objects(struct ctx *c);
int offline_slot_image(struct ctx *c, int k, uint64_t *missing,
		       struct strace_image **out);
int offline_space_slot(struct ctx *c, int s);

/* offline_jobs.c: per-thread jobs, and what a queue's decode emits */
void offline_add_done(struct ctx *c, uint64_t n);
void offline_add_stats(struct ctx *c, struct strace_walker *walker,
		       uint64_t events, uint64_t missing);
void offline_sort_queue(struct ctx *c, struct queue *q);
int offline_emit_cut(struct ctx *c, const struct queue *q, uint32_t tid,
		     strace_emit_fn emit, void *arg);
int offline_emit_losts(struct ctx *c, struct strace_sink *s, uint32_t tid,
		       int all);
void *offline_job_main(void *arg);
int offline_next_run(struct ctx *c, struct queue *q, size_t *i,
		     uint8_t **joined, const uint8_t **data, uint64_t *len,
		     strace_emit_fn emit, void *arg);
int offline_past_cut(struct ctx *c, const struct queue *q, size_t i);
int offline_put_exit(struct strace_sink *s, const struct exit_rec *x);
uint32_t offline_pid_of(struct ctx *c, uint32_t tid);
void offline_run_done(struct ctx *c, const struct queue *q, uint64_t len,
		      uint64_t told, int nosync);

/* offline_percpu.c: per-CPU decode and merge */
int offline_decode_percpu(struct ctx *c);
#endif /* PT_BACKEND_PIPELINE_OFFLINE_INT_H */
