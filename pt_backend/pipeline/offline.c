/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/offline.c - perf.data (intel_pt) -> ring (see pipeline.h):
 * the decode's set-up and end, the names defined before any flow event;
 * offline_int.h lists the layers it calls. */
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
#include "strace/internal/grow.h"

/* What the recording's header says of where it was made, into the ring
 * (strace_writer_name_info()): its host, kernel, processor, CPUs and
 * perf's command line (the words joined by blanks). */
static int write_info(struct ctx *c, struct strace_writer *w)
{
	static const struct {
		unsigned feat, what;
	} strs[] = {{PFMT_FEAT_HOSTNAME, STRACE_INFO_HOSTNAME},
		    {PFMT_FEAT_OSRELEASE, STRACE_INFO_OSRELEASE},
		    {PFMT_FEAT_CPUDESC, STRACE_INFO_CPUDESC}};
	const uint8_t *feat;
	uint64_t size;
	char buf[4096], word[1024];
	int rc = 0;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) && rc >= 0; i++)
		if (strace_perf_feature(&c->perf, strs[i].feat, &feat, &size) ==
			    1 &&
		    strace_perf_feature_string(feat, size, 0, buf,
					       sizeof(buf)) &&
		    buf[0])
			rc = strace_writer_name_info(w, strs[i].what, 0, buf);
	if (rc >= 0 &&
	    strace_perf_feature(&c->perf, PFMT_FEAT_NRCPUS, &feat, &size) ==
		    1 &&
	    size >= 8) {
		uint32_t avail, online;
		memcpy(&avail, feat, 4);
		memcpy(&online, feat + 4, 4);
		rc = strace_writer_name_info(w, STRACE_INFO_NRCPUS,
					     (uint64_t)online << 32 | avail,
					     "cpus");
	}
	/* CMDLINE: u32 nr, then nr perf strings */
	if (rc >= 0 &&
	    strace_perf_feature(&c->perf, PFMT_FEAT_CMDLINE, &feat, &size) ==
		    1 &&
	    size >= 4) {
		size_t used = 0;
		buf[0] = 0;
		for (unsigned k = 0;
		     strace_perf_feature_string(feat + 4, size - 4, k, word,
						sizeof(word));
		     k++) {
			size_t n = strlen(word);
			if (used + n + 2 > sizeof(buf))
				break;
			if (used)
				buf[used++] = ' ';
			memcpy(buf + used, word, n + 1);
			used += n;
		}
		if (used)
			rc = strace_writer_name_info(w, STRACE_INFO_CMDLINE, 0,
						     buf);
	}
	return rc;
}

/*
 * DSO, PROCESS and THREAD definitions, before any flow event, in the
 * order of the records that made them: written and flushed by *out, a
 * writer the caller closes when the decode is over. It keeps the stream
 * open: the decoding writers (one per queue or piece) open and close one
 * after another, and a reader following the ring that found every writer
 * closed between two of them would take it for the end.
 */
/* The recording's threads into st (as far as it has room), from their
 * PROCESS and THREAD definitions; -STRACE_E_PERF_NOTID when o->tid is
 * none of them and has no trace. */
static int list_threads(struct ctx *c, struct strace_offline_stats *st)
{
	const size_t room = sizeof(st->threads) / sizeof(st->threads[0]);
	int found = 0;

	for (size_t i = 0; i < c->defs.n; i++) {
		const struct def *d = &c->defs.v[i];
		size_t k;
		if (d->type != STRACE_EV_PROCESS && d->type != STRACE_EV_THREAD)
			continue;
		found |= d->tid == c->o->tid;
		for (k = 0; k < st->nthreads && k < room; k++)
			if (st->threads[k].tid == d->tid)
				break;
		if (k < st->nthreads && k < room) {
			/* a later name (an exec) */
			snprintf(st->threads[k].comm,
				 sizeof(st->threads[k].comm), "%s", d->name);
			continue;
		}
		if (st->nthreads < room) {
			st->threads[k].tid = d->tid;
			st->threads[k].pid = (uint32_t)d->a;
			snprintf(st->threads[k].comm,
				 sizeof(st->threads[k].comm), "%s", d->name);
		}
		st->nthreads++;
	}
	for (size_t i = 0; i < c->queues.n; i++)
		found |= c->queues.v[i].tid == c->o->tid;
	return c->o->tid && !found ? -STRACE_E_PERF_NOTID : 0;
}

static int define_names(struct ctx *c, struct strace_writer **out)
{
	struct strace_writer *w;
	int rc = strace_writer_open(c->o->ring, &w);
	if (rc < 0)
		return rc;
	*out = w;
	rc = write_info(c, w);
	for (size_t i = 0; i < c->defs.n && rc >= 0; i++) {
		const struct def *d = &c->defs.v[i];
		struct strace_definition sd = {d->type, d->tid, 0, d->a,
					       d->key, d->aux, d->name};
		if (c->o->tid && d->type != STRACE_EV_DSO &&
		    d->tid != c->o->tid)
			continue;
		rc = strace_writer_define(w, &sd, c->o->types);
	}
	/* Losses that belong to no thread (a cut-off record). */
	for (size_t i = 0; i < c->losts.n && rc >= 0; i++)
		if (c->losts.v[i].tid == UINT32_MAX)
			rc = strace_writer_emit(w, STRACE_EV_LOST,
						c->losts.v[i].flags, 0,
						c->losts.v[i].time,
						c->losts.v[i].count, 0);
	return rc < 0 ? rc : strace_writer_flush(w);
}

/* --coverage: one range of the decode's code that ran (len), or one
 * conditional branch and the ways it went (seen) */
struct cov {
	char *path;
	uint64_t vaddr, len;
	unsigned seen;
};
struct covs {
	struct cov *v;
	size_t n, cap;
};

static int cov_push(struct covs *cs, const char *path, uint64_t vaddr,
		    uint64_t len, unsigned seen)
{
	char *p;

	if (cs->n == cs->cap) {
		struct cov *v = strace_grow(cs->v, &cs->cap, sizeof(*v), 256);
		if (!v)
			return -ENOMEM;
		cs->v = v;
	}
	if (!(p = strdup(path)))
		return -ENOMEM;
	cs->v[cs->n++] = (struct cov){p, vaddr, len, seen};
	return 0;
}

static int cov_add(void *arg, const char *path, uint64_t vaddr, uint64_t len)
{
	return cov_push(arg, path, vaddr, len, 0);
}

static int cov_add_branch(void *arg, const char *path, uint64_t vaddr,
			  unsigned seen)
{
	return cov_push(arg, path, vaddr, 0, seen);
}

static int cov_cmp(const void *a, const void *b)
{
	const struct cov *x = a, *y = b;
	int d = strcmp(x->path, y->path);

	return d ? d : x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The code that ran and the ways its conditional branches went, into the
 * ring: by path and address, so that the ring says the same whichever
 * thread met an object first (-j N). */
static int write_coverage(struct ctx *c, struct strace_writer *w)
{
	struct covs cs = {0};
	int rc = strace_objcache_each_coverage(c->objects, cov_add, &cs);
	size_t nranges = cs.n;

	if (rc == 0)
		rc = strace_objcache_each_branch(c->objects, cov_add_branch,
						 &cs);
	if (rc == 0) {
		qsort(cs.v, nranges, sizeof(*cs.v), cov_cmp);
		qsort(cs.v + nranges, cs.n - nranges, sizeof(*cs.v), cov_cmp);
	}
	for (size_t i = 0; i < cs.n && rc >= 0; i++)
		rc = i < nranges
			     ? strace_writer_name_coverage(w, cs.v[i].path,
							   cs.v[i].vaddr,
							   cs.v[i].len)
			     : strace_writer_name_branch(w, cs.v[i].path,
							 cs.v[i].vaddr,
							 cs.v[i].seen);
	for (size_t i = 0; i < cs.n; i++)
		free(cs.v[i].path);
	free(cs.v);
	return rc < 0 ? rc : strace_writer_flush(w);
}

/* What both entry points end with: c and all it holds. */
static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->queues.n; i++)
		free(c->queues.v[i].v);
	free(c->queues.v);
	free(c->maps.v);
	free(c->threads.v);
	free(c->forks.v);
	free(c->execs.v);
	free(c->exits.v);
	free(c->spaces.v);
	for (size_t i = 0; i < c->slots.n; i++) {
		free(c->slots.v[i].maps);
		strace_image_free(c->slots.v[i].img);
	}
	free(c->slots.v);
	free(c->losts.v);
	free(c->defs.v);
	free(c->scheds.v);
	for (size_t i = 0; i < c->strs.n; i++)
		free(c->strs.v[i]);
	free(c->strs.v);
	if (c->opened)
		strace_perf_close(&c->perf);
	strace_objcache_free(c->own_objects);
	strace_symset_free(c->syms);
	pthread_mutex_destroy(&c->stats_lock);
	free(c);
}

/*
 * What both entry points begin with: *out for o, the file opened and its
 * records read, its objects found, the walkers' flags, processor and
 * time, its threads listed. Returns 0 or an error, with *out to free
 * (ctx_free()) either way but -ENOMEM; st (zeroed first) says what was
 * found, as strace_offline_decode() says.
 */
static int ctx_open(const struct strace_offline_opts *o, struct ctx **out,
		    struct strace_offline_stats *st, uint64_t *err_off)
{
	struct ctx *c;
	int rc;

	*err_off = 0;
	memset(st, 0, sizeof(*st));
	*out = c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = o;
	pthread_mutex_init(&c->stats_lock, NULL);
	if (strace_symset_new(&c->syms) < 0)
		return -ENOMEM;
	c->objects = o->objects;
	if (!c->objects) {
		rc = strace_objcache_new(&c->own_objects);
		if (rc == 0)
			rc = strace_objcache_set_dir(c->own_objects,
						     o->cache_dir);
		if (rc < 0)
			return rc;
		c->objects = c->own_objects;
	}
	if (o->coverage)
		strace_objcache_set_coverage(c->objects, 1);
	rc = strace_perf_open(o->perf_path, &c->perf, err_off);
	if (rc < 0)
		return rc;
	c->opened = 1;
	st->file_size = c->st.file_size = c->perf.size;
	rc = offline_scan(c, err_off);
	if (rc < 0)
		return rc;
	rc = offline_find_vdso(c);
	if (rc == 0)
		rc = offline_resolve_objects(c);
	if (rc < 0) {
		*st = c->st;
		return rc;
	}
	offline_find_cpu(c);
	offline_find_walk_flags(c);
	rc = list_threads(c, &c->st);
	if (rc < 0)
		*st = c->st;
	return rc;
}

int strace_offline_decode(const struct strace_offline_opts *o,
			  struct strace_offline_stats *st, uint64_t *err_off)
{
	struct ctx *c;
	struct strace_writer *names = NULL;
	int rc;

	rc = ctx_open(o, &c, st, err_off);
	if (rc < 0)
		goto out;
	rc = define_names(c, &names);
	if (rc < 0)
		goto out;
	if (c->perf.per_cpu) {
		rc = offline_decode_percpu(c);
		goto done;
	}

	/* -j N: N threads' traces at once; with fewer threads than N, each
	 * trace is also cut at its PSBs and decoded by N / threads */
	int jobs = o->jobs > 0 ? o->jobs : 1, nq = 0;
	for (size_t i = 0; i < c->queues.n; i++)
		nq += !o->tid || c->queues.v[i].tid == o->tid;
	if (jobs > nq) {
		c->seg_threads = (unsigned)(nq ? jobs / nq : 1);
		jobs = nq ? nq : 1;
	}
	/* (several writers in place would publish in turns, a batch each:
	 * one at a time) */
	c->direct = jobs == 1;
	pthread_t th[64];
	int started = 0;
	for (int i = 1; i < jobs && i < 64; i++)
		if (pthread_create(&th[started], NULL, offline_job_main, c) ==
		    0)
			started++;
	offline_job_main(c);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	rc = c->err;
done:
	if (rc >= 0 && o->coverage)
		rc = write_coverage(c, names);
	c->st.queues = c->queues.n;
	c->st.per_cpu = c->perf.per_cpu;
	c->st.lost += c->losts.n;
	*st = c->st;
out:
	if (!c)
		return rc;
	if (names) { /* every decoding writer has closed: the end */
		int crc = strace_writer_close(names);
		if (rc >= 0 && crc < 0)
			rc = crc;
	}
	if (c->opened) {
		/* Errors that only zeros read in the file's lost pages
		 * made are that loss; the events decoded are in the ring. */
		uint64_t cut = strace_perf_cut(&c->perf, 1, NULL);
		if (cut != UINT64_MAX) {
			*err_off = cut;
			rc = -STRACE_E_PERF_SHRANK;
		} else if (strace_perf_modified(&c->perf)) {
			offline_warn(
				c,
				"%s was written to while it was read: the "
				"events may not be those of the recording; "
				"decode a copy that nothing writes to",
				c->perf.path);
		}
		if (c->own_objects && o->cache_dir)
			(void)strace_objcache_save(c->own_objects, &st->cache);
	}
	ctx_free(c);
	return rc;
}

int strace_offline_walker(const struct strace_offline_opts *o,
			  strace_emit_fn emit, void *arg,
			  struct strace_walker **w, struct strace_image **img)
{
	struct strace_offline_stats st;
	struct strace_walk_opts wo;
	struct ctx *c;
	uint64_t off, missing = 0;
	int rc;

	*w = NULL;
	*img = NULL;
	if (!o->tid)
		return -STRACE_E_BADARG;
	rc = ctx_open(o, &c, &st, &off);
	if (rc == 0 && c->perf.per_cpu)
		rc = -EOPNOTSUPP;
	if (rc == 0)
		rc = offline_new_image(c, img);
	if (rc == 0) {
		offline_add_maps(c, *img, offline_pid_of(c, o->tid), 0,
				 &missing);
		strace_sink_walk_opts(&wo, &c->walk, o->tid, NULL);
		wo.emit = emit;
		wo.emit_arg = arg;
		wo.types = o->types;
		rc = strace_walker_new(*img, &wo, w);
	}
	if (c)
		ctx_free(c);
	if (rc < 0) {
		strace_image_free(*img);
		*img = NULL;
	}
	return rc;
}
