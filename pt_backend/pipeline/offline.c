/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/offline.c - perf.data (intel_pt) -> ring (see offline.h). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offline.h"
#include "ctxcut.h"
#include "pt_backend/perf/perf.h"
#include "sink.h"

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

static int vec_grow(void **v, size_t *cap, size_t n, size_t esz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	void *p = realloc(*v, nc * esz);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = nc;
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
};

static void warnf(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(struct ctx *c, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	if (!c->o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->o->warn(c->o->cb_arg, buf);
}

/* A copy of a name the file holds: the file may change under its mapping
 * (rewritten, cut short), and a name read there again later might have
 * lost its NUL meanwhile. NULL if out of memory. */
static const char *keep_name(struct ctx *c, const char *s)
{
	char *d = strdup(s);

	if (d && VEC_PUSH(c->strs, d) == 0)
		return d;
	free(d);
	return NULL;
}

static struct thread *find_thread(struct ctx *c, uint32_t tid)
{
	for (size_t i = c->threads.n; i-- > 0;)
		if (c->threads.v[i].tid == tid)
			return &c->threads.v[i];
	return NULL;
}

static int note_thread(struct ctx *c, uint32_t pid, uint32_t tid,
		       const char *comm)
{
	struct thread *t = find_thread(c, tid);
	if (t) {
		t->pid = pid;
		if (comm)
			t->comm = comm;
		return 0;
	}
	struct thread nt = {tid, pid, comm};
	return VEC_PUSH(c->threads, nt);
}

static struct queue *find_queue(struct ctx *c, uint32_t idx, uint32_t tid,
				uint32_t cpu)
{
	for (size_t i = 0; i < c->queues.n; i++)
		if (c->queues.v[i].idx == idx && c->queues.v[i].tid == tid)
			return &c->queues.v[i];
	struct queue q = {idx, tid, cpu, NULL, 0, 0, 0};
	if (VEC_PUSH(c->queues, q))
		return NULL;
	return &c->queues.v[c->queues.n - 1];
}

/* A task runs on the record's CPU from its time on (needs both). */
static int note_sched(struct ctx *c, const struct strace_perf_rec *r,
		      uint32_t pid, uint32_t tid)
{
	if (!r->sid.has_time || !r->sid.has_cpu)
		return 0;
	struct sched sc = {r->sid.cpu, pid, tid, r->sid.time, c->scheds.n,
			   r->type != PFMT_RECORD_SWITCH_CPU_WIDE};
	return VEC_PUSH(c->scheds, sc);
}

/* A record's fixed part, copied out: a record lies where it is in the file,
 * and one after AUX data that was not padded to 8 bytes is not aligned
 * for its struct. strace_perf_next() checked the body is that long. */
#define BODY(r, var) memcpy(&(var), (r).body, sizeof(var))

/* Pass over the records: sideband and the AUX buffers of each queue. */
static int scan(struct ctx *c, uint64_t *err_off)
{
	struct strace_perf_rec r;
	int rc;

	while ((rc = strace_perf_next(&c->perf, &r)) > 0) {
		size_t blen = (size_t)r.size - 8;
		c->nrec++;
		switch (r.type) {
		case PFMT_RECORD_MMAP:
		case PFMT_RECORD_MMAP2: {
			struct strace_perf_map pm;
			const char *path;

			if (strace_perf_map_parse(r.type, r.misc, r.body, blen,
						  &pm) < 0)
				return -STRACE_E_PERF_RECORD;
			if (!pm.exec || !pm.len)
				break;
			if (!(path = keep_name(c, pm.path)))
				return -ENOMEM;
			struct mapping m = {pm.pid, pm.addr, pm.len, pm.pgoff,
					    path,
					    r.sid.has_time ? r.sid.time
							   : UINT64_MAX,
					    -1, NULL, 0};
			struct def d = {STRACE_EV_DSO, pm.pid, pm.addr,
					pm.addr, pm.len, path};
			if (VEC_PUSH(c->maps, m) || VEC_PUSH(c->defs, d))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_COMM: {
			struct pfmt_comm cm;
			const char *name = strace_perf_string(
				(const char *)r.body + sizeof(cm),
				blen - sizeof(cm));
			if (!name)
				return -STRACE_E_PERF_RECORD;
			if (!(name = keep_name(c, name)))
				return -ENOMEM;
			BODY(r, cm);
			struct def d = {cm.pid == cm.tid ? STRACE_EV_PROCESS
							 : STRACE_EV_THREAD,
					cm.tid, cm.pid, cm.tid, cm.pid, name};
			if (note_thread(c, cm.pid, cm.tid, name) ||
			    VEC_PUSH(c->defs, d))
				return -ENOMEM;
			if (r.misc & PFMT_MISC_COMM_EXEC) {
				/* a new image from here on; on its CPU the
				 * stream moves to it like at a switch */
				struct exec_rec ex = {
					cm.pid,
					r.sid.has_time ? r.sid.time : UINT64_MAX,
					c->nrec};
				if (VEC_PUSH(c->execs, ex) ||
				    note_sched(c, &r, cm.pid, cm.tid))
					return -ENOMEM;
			}
			break;
		}
		case PFMT_RECORD_FORK: {
			struct pfmt_fork f;
			BODY(r, f);
			if (note_thread(c, f.pid, f.tid, NULL))
				return -ENOMEM;
			if (f.pid != f.ppid) {
				struct fork_rec fr = {
					f.pid, f.ppid,
					r.sid.has_time ? r.sid.time : UINT64_MAX,
					c->nrec};
				if (VEC_PUSH(c->forks, fr))
					return -ENOMEM;
				/* a new process, named as its parent until
				 * it execs (perf writes no COMM for it) */
				const struct thread *pt = find_thread(c, f.ptid);
				if (!pt || !pt->comm)
					pt = find_thread(c, f.ppid);
				if (pt && pt->comm) {
					struct def d = {STRACE_EV_PROCESS, f.tid,
							f.pid, f.pid, 0,
							pt->comm};
					if (note_thread(c, f.pid, f.tid,
							pt->comm) ||
					    VEC_PUSH(c->defs, d))
						return -ENOMEM;
				}
			}
			break;
		}
		case PFMT_RECORD_EXIT: {
			struct pfmt_fork f; /* EXIT has FORK's layout */
			BODY(r, f);
			struct exit_rec ex = {
				f.pid, f.tid,
				r.sid.has_time ? r.sid.time : UINT64_MAX};
			if (VEC_PUSH(c->exits, ex))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_ITRACE_START: {
			struct pfmt_itrace_start it;
			BODY(r, it);
			if (!find_thread(c, it.tid) &&
			    note_thread(c, it.pid, it.tid, NULL))
				return -ENOMEM;
			if (note_sched(c, &r, it.pid, it.tid))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_SWITCH:
			/* the task of the record switched in (or out) */
			if (!(r.misc & PFMT_MISC_SWITCH_OUT) &&
			    note_sched(c, &r, r.sid.pid, r.sid.tid))
				return -ENOMEM;
			break;
		case PFMT_RECORD_SWITCH_CPU_WIDE: {
			struct pfmt_switch_cpu_wide sw;
			/* out: the body names the next task; in: the record's */
			int out = !!(r.misc & PFMT_MISC_SWITCH_OUT);
			if (blen < sizeof(sw))
				return -STRACE_E_PERF_RECORD;
			BODY(r, sw);
			if (note_sched(c, &r, out ? sw.next_prev_pid : r.sid.pid,
				       out ? sw.next_prev_tid : r.sid.tid))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_AUX: {
			struct pfmt_aux a;
			BODY(r, a);
			if (a.flags & PFMT_AUX_FLAG_TRUNCATED) {
				struct lost_rec l = {r.sid.tid,
						     STRACE_LOST_AUX,
						     r.sid.time, a.aux_size};
				if (VEC_PUSH(c->losts, l))
					return -ENOMEM;
			}
			break;
		}
		case PFMT_RECORD_LOST: {
			struct pfmt_lost l;
			BODY(r, l);
			struct lost_rec lr = {r.sid.tid, STRACE_LOST_PERF,
					      r.sid.time, l.lost};
			if (VEC_PUSH(c->losts, lr))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_AUXTRACE: {
			struct pfmt_auxtrace at;
			BODY(r, at);
			/* a per-thread buffer has cpu -1; a per-CPU one may
			 * carry the workload's pid as its tid */
			if (at.cpu != UINT32_MAX)
				c->perf.per_cpu = 1;
			struct queue *q = find_queue(c, at.idx, at.tid,
						     at.cpu);
			struct abuf b = {r.aux_data, r.aux_size, at.offset};
			if (!q || VEC_PUSH(*q, b))
				return -ENOMEM;
			if (r.aux_missing) {
				struct lost_rec l = {at.tid, STRACE_LOST_AUX,
						     0, r.aux_missing};
				warnf(c, "the file ends inside the AUX data of "
					 "thread %u: %llu bytes of trace are "
					 "missing (a truncated copy?)",
				      at.tid,
				      (unsigned long long)r.aux_missing);
				if (VEC_PUSH(c->losts, l))
					return -ENOMEM;
			}
			q->bytes += r.aux_size;
			c->total_bytes += r.aux_size;
			break;
		}
		default:
			break;
		}
	}
	if (rc == -STRACE_E_PERF_TRUNCATED && c->queues.n) {
		/* Decode what the file holds; say where it stops. */
		warnf(c, "the file is cut off at offset 0x%llx (inside a "
			 "record): decoding what comes before",
		      (unsigned long long)r.offset);
		struct lost_rec l = {UINT32_MAX, STRACE_LOST_PERF, 0, 1};
		return VEC_PUSH(c->losts, l);
	}
	if (rc < 0)
		*err_off = r.offset;
	return rc;
}

/* The build-id the file's BUILD_ID feature gives name, into id: its
 * length, 0 if none. */
static int recorded_id(struct ctx *c, const char *name, uint8_t *id)
{
	const uint8_t *feat;
	uint64_t size;
	int n;

	if (strace_perf_feature(&c->perf, PFMT_FEAT_BUILD_ID, &feat, &size) !=
		    1 ||
	    (n = strace_buildid_find(feat, size, name, id)) <= 0)
		return 0;
	return n;
}

/* The decode is refused: the recording's object path is another build
 * in file (its build-id got, ngot bytes). */
static int mismatch(struct ctx *c, const char *path, const char *file,
		    const uint8_t *want, size_t nwant, const uint8_t *got,
		    size_t ngot)
{
	struct strace_offline_mismatch *m = &c->st.mismatch;

	snprintf(m->path, sizeof(m->path), "%s", path);
	snprintf(m->file, sizeof(m->file), "%s", file);
	memcpy(m->want, want, nwant);
	memcpy(m->got, got, ngot);
	m->nwant = (uint8_t)nwant;
	m->ngot = (uint8_t)ngot;
	return -STRACE_E_PERF_BUILDID;
}

/* The vDSO the file names by build-id, in perf's build-id cache: its path
 * into buf; 1 if it is there. buf is "" if the file names none. Once per
 * file, before the decoding jobs (find_vdso()). */
static int vdso_cached(struct ctx *c, const uint8_t *id, int n, char *buf,
		       size_t len)
{
	buf[0] = 0;
	if (n <= 0)
		return 0;
	if (!c->o->buildid_dir ||
	    strace_buildid_vdso_path(c->o->buildid_dir, id, (size_t)n, buf,
				     len) < 0) {
		buf[0] = 0;
		return 0;
	}
	return access(buf, R_OK) == 0;
}

/* c->walk.cpu: the processor perf recorded on (the CPUID header, a perf string
 * "GenuineIntel,6,85,4"); it chooses the errata workarounds. Without one
 * (or one we cannot read), the cpu stays unknown. */
static void find_cpu(struct ctx *c)
{
	const uint8_t *feat;
	uint64_t size;
	char buf[128];

	memset(&c->walk.cpu, 0, sizeof(c->walk.cpu));
	if (strace_perf_feature(&c->perf, PFMT_FEAT_CPUID, &feat, &size) != 1 ||
	    !strace_perf_feature_string(feat, size, 0, buf, sizeof(buf)))
		return;
	if (strace_pt_cpu_parse(buf, &c->walk.cpu) < 0)
		memset(&c->walk.cpu, 0, sizeof(c->walk.cpu));
}

/* c->walk: the recording's time conversion, and the walker flags: the
 * caller's, and the PEBS-via-PT records as events when the recording
 * asked for them: an event with aux_output (perf
 * record -e intel_pt//u,cycles/aux-output/u), whose PEBS records the
 * hardware writes into the trace; and the ptwrite payloads when its
 * intel_pt event has the ptw bit (perf record -e intel_pt/ptw/u), which
 * makes the hardware write them. */
static void find_walk_flags(struct ctx *c)
{
	c->walk.time = c->perf.time; /* (AUXTRACE_INFO's, scan() saw it) */
	c->walk.has_time = c->perf.has_time;
	c->walk.flags = c->o->walk_flags;
	for (size_t i = 0; i < c->perf.nattrs; i++)
		if (c->perf.attrs[i].attr.aux_output)
			c->walk.flags |= STRACE_WALK_PEBS;
	if (c->perf.pt_config & PFMT_IPT_CFG_PTW)
		c->walk.flags |= STRACE_WALK_PTWRITE;
}

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


/* c->vdso: --vdso, else the build-id cache's copy, else NULL (and
 * c->vdso_hint, where that copy would be). Either must be the vDSO the
 * file names, when it names one: else -STRACE_E_PERF_BUILDID. */
static int find_vdso(struct ctx *c)
{
	uint8_t want[STRACE_BUILDID_MAX], got[STRACE_BUILDID_MAX];
	int n = recorded_id(c, "[vdso]", want), k;

	c->vdso = c->o->vdso_path;
	if (!c->vdso &&
	    vdso_cached(c, want, n, c->vdso_hint, sizeof(c->vdso_hint)))
		c->vdso = c->vdso_hint;
	if (!c->vdso || n <= 0)
		return 0;
	k = strace_buildid_of_file(c->vdso, got);
	if (k < 0)
		return 0; /* (cannot be read: add_one_map() says so) */
	if (k != n || memcmp(want, got, (size_t)n))
		return mismatch(c, "[vdso]", c->vdso, want, (size_t)n, got,
				(size_t)k);
	return 0;
}

static int by_path(const void *a, const void *b)
{
	const struct mapping *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/*
 * The file each mapping is read from (mapping.file): its recorded path,
 * under o->symfs if set, else the build-id cache's copy
 * (strace_buildid_locate()); an object whose file is another build is
 * refused: -STRACE_E_PERF_BUILDID. Once per object, before the decode.
 */
static int resolve_objects(struct ctx *c)
{
	struct mapping **by;
	int rc = 0;

	if (!c->maps.n)
		return 0;
	by = malloc(c->maps.n * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < c->maps.n; i++)
		by[i] = &c->maps.v[i];
	qsort(by, c->maps.n, sizeof(*by), by_path);
	for (size_t i = 0; i < c->maps.n && rc >= 0; i++) {
		struct mapping *m = by[i];
		struct strace_buildid_found fd;
		uint8_t want[STRACE_BUILDID_MAX];
		int n;

		if (i && !strcmp(by[i - 1]->path, m->path)) {
			m->file = by[i - 1]->file;
			m->has_id = by[i - 1]->has_id;
			continue;
		}
		m->file = m->path;
		if (!strcmp(m->path, "[vdso]"))
			continue; /* (find_vdso()) */
		n = recorded_id(c, m->path, want);
		m->has_id = n > 0;
		rc = strace_buildid_locate(m->path, want, (size_t)n,
					   c->o->symfs, c->o->buildid_dir, &fd);
		if (rc == -STRACE_E_PERF_BUILDID) {
			rc = mismatch(c, m->path, fd.file, want, (size_t)n,
				      fd.id, fd.n);
			break;
		}
		if (rc == -ENAMETOOLONG)
			continue; /* (read as recorded: said missing later) */
		/* found, or not (the path looked at: add_one_map() says
		 * it cannot be read) */
		rc = 0;
		if (strcmp(fd.file, m->path) && !(m->file = keep_name(c, fd.file)))
			rc = -ENOMEM;
	}
	free(by);
	return rc;
}

/* An empty image whose files come from the decode's cache. */
static int new_image(struct ctx *c, struct strace_image **img)
{
	struct strace_image_opts io;

	memset(&io, 0, sizeof(io));
	io.size = sizeof(io);
	io.objects = c->objects;
	io.plt_style = c->o->names;
	io.symfs = c->o->symfs;
	return strace_image_new(&io, img);
}

/* One mapping into img; a file that cannot be read is warned about and
 * counted in *missing (the code there becomes decode errors). */
static void add_one_map(struct ctx *c, struct strace_image *img,
			const struct mapping *m, uint64_t *missing)
{
	const char *file = m->path;
	uint32_t pid = m->pid;
	int rc;

	if (strcmp(m->path, "[vdso]") == 0) {
		if (!c->vdso) {
			warnf(c,
			      "pid %u: no vDSO image: calls into the "
			      "vDSO at 0x%llx become decode errors; "
			      "pass --vdso FILE%s%s",
			      pid, (unsigned long long)m->start,
			      c->vdso_hint[0] ? ", or put the recording "
						"machine's vDSO (perf archive "
						"and ptrace-capture --archive "
						"pack it) at "
					      : "",
			      c->vdso_hint);
			(*missing)++;
			return;
		}
		file = c->vdso;
		rc = strace_image_add_file(img, m->start, m->len, 0, file);
	} else {
		file = m->file ? m->file : m->path;
		rc = strace_image_add_file(img, m->start, m->len, m->pgoff,
					   file);
	}
	/* (where it was looked for under --symfs, and the name it has) */
	char as[4200] = "";
	if (strcmp(file, m->path) && m->file == file)
		snprintf(as, sizeof(as), " (the recording's %s)", m->path);
	if (rc == -ENODEV) {
		/* a FIFO, a device: never opened (it could block) */
		warnf(c,
		      "pid %u: cannot read %s%s: not a regular file (a "
		      "FIFO, a device or a directory): code there "
		      "cannot be decoded; put the mapped ELF file at "
		      "this path",
		      pid, file, as);
		(*missing)++;
	} else if (rc < 0) {
		warnf(c,
		      "pid %u: cannot read %s%s (%s): code there cannot "
		      "be decoded; copy the file to this path%s",
		      pid, file, as, strace_strerror(rc),
		      m->has_id ? " from the recording machine, or put it "
				  "in perf's build-id cache (perf "
				  "buildid-cache -a FILE there; ptrace-capture "
				  "--archive bundles the objects)"
				: "");
		(*missing)++;
	}
}

/* Mappings of pid, its parents' first (a forked child inherits them). */
static int add_maps(struct ctx *c, struct strace_image *img, uint32_t pid,
		    int depth, uint64_t *missing)
{
	if (depth > 16)
		return 0;
	for (size_t i = 0; i < c->forks.n; i++)
		if (c->forks.v[i].pid == pid)
			add_maps(c, img, c->forks.v[i].ppid, depth + 1, missing);
	for (size_t i = 0; i < c->maps.n; i++)
		if (c->maps.v[i].pid == pid)
			add_one_map(c, img, &c->maps.v[i], missing);
	return 0;
}

/* --- address spaces: a process's images over time ---------------------- */

/* The space of pid at time t: the latest one started at or before t;
 * -1 if none. */
static int space_at(const struct ctx *c, uint32_t pid, uint64_t t)
{
	int best = -1;

	for (size_t i = 0; i < c->spaces.n; i++) {
		const struct space *sp = &c->spaces.v[i];
		if (sp->pid == pid && sp->from <= t &&
		    (best < 0 || sp->from >= c->spaces.v[best].from))
			best = (int)i;
	}
	return best;
}

static int new_space(struct ctx *c, uint32_t pid, uint64_t from, int parent,
		     uint64_t forked)
{
	struct space sp = {pid, from, parent, forked, -1};

	if (c->spaces.n >= INT32_MAX || VEC_PUSH(c->spaces, sp))
		return -ENOMEM;
	return (int)(c->spaces.n - 1);
}

/* A pid's space from the start of the recording (its mappings before any
 * fork or exec record names it: perf's synthesized ones). */
static int base_space(struct ctx *c, uint32_t pid, uint64_t t)
{
	int s = space_at(c, pid, t);
	return s >= 0 ? s : new_space(c, pid, 0, -1, 0);
}

static int cmp_spev(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b; /* {time, seq, index} */
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * The spaces, from the fork and exec records in time order (record order
 * for equal times), and each mapping into the space of its pid at its
 * time. Without times every record counts as at the end.
 */
static int build_spaces(struct ctx *c)
{
	size_t nf = c->forks.n, ne = c->execs.n, n = nf + ne;
	uint64_t (*ev)[3] = calloc(n ? n : 1, sizeof(*ev));
	int rc = 0;

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++) {
		ev[i][0] = c->forks.v[i].time;
		ev[i][1] = c->forks.v[i].seq;
		ev[i][2] = i;
	}
	for (size_t i = 0; i < ne; i++) {
		ev[nf + i][0] = c->execs.v[i].time;
		ev[nf + i][1] = c->execs.v[i].seq;
		ev[nf + i][2] = nf + i;
	}
	qsort(ev, n, sizeof(*ev), cmp_spev);
	/* a pid mapped before any fork record made it: it was there from
	 * the start (an exec inherits that space) */
	for (size_t i = 0; i < c->maps.n && rc >= 0; i++) {
		const struct mapping *m = &c->maps.v[i];
		int forked = 0;
		for (size_t j = 0; j < nf && !forked; j++)
			forked = c->forks.v[j].pid == m->pid &&
				 c->forks.v[j].time <= m->time;
		if (!forked && space_at(c, m->pid, 0) < 0)
			rc = new_space(c, m->pid, 0, -1, 0);
	}
	for (size_t i = 0; i < n && rc >= 0; i++) {
		size_t k = (size_t)ev[i][2];
		if (k < nf) {
			const struct fork_rec *f = &c->forks.v[k];
			int known = space_at(c, f->ppid, f->time) >= 0;
			for (size_t j = 0; !known && j < c->maps.n; j++)
				known = c->maps.v[j].pid == f->ppid;
			if (!known)
				warnf(c,
				      "pid %u is forked from pid %u, of which "
				      "the recording has no mappings: the "
				      "child's image holds only the mappings "
				      "recorded for it",
				      f->pid, f->ppid);
			int par = base_space(c, f->ppid, f->time);
			rc = par < 0 ? par
				     : new_space(c, f->pid, f->time, par,
						 f->time);
		} else {
			/* As perf: the mappings recorded from the exec on
			 * replace what they overlap; the old program's
			 * others stay (and a recorder that writes the new
			 * program's MMAP2 just before its COMM|EXEC, as
			 * ptsynth did, loses nothing). */
			const struct exec_rec *e = &c->execs.v[k - nf];
			int old = space_at(c, e->pid, e->time), mapped = 0;
			for (size_t j = 0; j < c->maps.n && !mapped; j++)
				mapped = c->maps.v[j].pid == e->pid &&
					 c->maps.v[j].time >= e->time;
			if (!mapped)
				warnf(c,
				      "pid %u execs, but no MMAP record for it "
				      "follows: its new program is decoded "
				      "against its old mappings (decode errors "
				      "where they differ)",
				      e->pid);
			rc = new_space(c, e->pid, e->time, old, e->time);
		}
	}
	free(ev);
	for (size_t i = 0; i < c->maps.n && rc >= 0; i++) {
		struct mapping *m = &c->maps.v[i];
		rc = m->space = base_space(c, m->pid, m->time);
	}
	return rc < 0 ? rc : 0;
}

typedef VEC(size_t) idxvec;

/* The mappings of space s up to time tmax, in the order they apply: the
 * parent's up to the fork first. */
static int space_maps(const struct ctx *c, int s, uint64_t tmax, idxvec *out,
		      int depth)
{
	const struct space *sp = &c->spaces.v[s];

	/* a parent is always made before its child: no cycle, but a long
	 * chain of forks is cut short rather than recursed into */
	if (sp->parent >= 0 && depth < 64) {
		uint64_t t = sp->forked < tmax ? sp->forked : tmax;
		int rc = space_maps(c, sp->parent, t, out, depth + 1);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < c->maps.n; i++)
		if (c->maps.v[i].space == s &&
		    (c->maps.v[i].time <= tmax || tmax == UINT64_MAX) &&
		    VEC_PUSH(*out, i))
			return -ENOMEM;
	return 0;
}

static int same_map(const struct mapping *a, const struct mapping *b)
{
	return a->start == b->start && a->len == b->len &&
	       a->pgoff == b->pgoff && strcmp(a->path, b->path) == 0;
}

/* The image slot of space s (made on first use; spaces with the same
 * mappings share one). Returns the slot, or -ENOMEM. */
static int space_slot(struct ctx *c, int s)
{
	idxvec l = {0};
	int rc;

	if (c->spaces.v[s].slot >= 0)
		return c->spaces.v[s].slot;
	rc = space_maps(c, s, UINT64_MAX, &l, 0);
	if (rc < 0) {
		free(l.v);
		return rc;
	}
	for (size_t k = 0; k < c->slots.n; k++) {
		const struct imgslot *is = &c->slots.v[k];
		size_t j = 0;
		if (is->n != l.n)
			continue;
		while (j < l.n && same_map(&c->maps.v[is->maps[j]],
					   &c->maps.v[l.v[j]]))
			j++;
		if (j == l.n) {
			free(l.v);
			return c->spaces.v[s].slot = (int)k;
		}
	}
	struct imgslot is = {l.v, l.n, NULL, c->spaces.v[s].pid, 0};
	if (VEC_PUSH(c->slots, is)) {
		free(l.v);
		return -ENOMEM;
	}
	return c->spaces.v[s].slot = (int)(c->slots.n - 1);
}

/* The image of a slot, made on first use. */
static int slot_image(struct ctx *c, int k, uint64_t *missing,
		      struct strace_image **out)
{
	struct imgslot *is = &c->slots.v[k];
	int rc;

	if (!is->img) {
		rc = new_image(c, &is->img);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < is->n; i++)
			add_one_map(c, is->img, &c->maps.v[is->maps[i]],
				    missing);
	}
	*out = is->img;
	return 0;
}

/* --- decoding jobs ------------------------------------------------------ */

static int cmp_abuf(const void *a, const void *b)
{
	const struct abuf *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
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

static uint32_t queue_pid(struct ctx *c, const struct queue *q)
{
	const struct thread *t = find_thread(c, q->tid);
	return t ? t->pid : q->tid;
}

/* The losses of thread tid, or with all set those of every thread (that
 * --tid keeps): not those that belong to no thread (define_names()). */
static int emit_losts(struct ctx *c, struct strace_sink *s, uint32_t tid,
		      int all)
{
	for (size_t i = 0; i < c->losts.n; i++) {
		const struct lost_rec *l = &c->losts.v[i];
		if (all ? l->tid == UINT32_MAX || (c->o->tid && l->tid != c->o->tid)
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
 * The next run of contiguous AUX buffers of q from *i on (q sorted by
 * offset): *data and *len, joined into *joined when it spans buffers. A
 * gap before it (AUX data missing between two buffers) is reported and
 * passed to emit as a LOST event first. Advances *i past the run.
 */
static int next_run(struct ctx *c, struct queue *q, size_t *i,
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

		warnf(c, "%s %u: %llu bytes of AUX data missing at offset "
			 "0x%llx",
		      queue_what(q), queue_who(q), (unsigned long long)e.a,
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
static void add_done(struct ctx *c, uint64_t n)
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
		add_done(p->c, done - p->told);
		p->told = done;
	}
}

/* A run of len bytes decoded to its end, told of already: no PSB in it is
 * worth a warning; the rest of its progress. */
static void run_done(struct ctx *c, const struct queue *q, uint64_t len,
		     uint64_t told, int nosync)
{
	if (nosync)
		warnf(c, "%s %u: no PSB in %llu bytes of trace: nothing to "
			 "decode there",
		      queue_what(q), queue_who(q), (unsigned long long)len);
	add_done(c, len > told ? len - told : 0);
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
static int emit_cut(struct ctx *c, const struct queue *q, uint32_t tid,
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
 * left to decode (emit_cut() counts it). Cheap: no system call. */
static int past_cut(struct ctx *c, const struct queue *q, size_t i)
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

	qsort(q->v, q->n, sizeof(*q->v), cmp_abuf);
	for (size_t i = 0; i < q->n;) {
		size_t first = i;
		rc = next_run(c, q, &i, &joined, &data, &len, emit, arg);
		if (rc < 0)
			break;
		if (past_cut(c, q, first)) {
			add_done(c, len);
			continue;
		}
		prog->told = 0;
		long n = c->seg_threads > 1
				 ? strace_walker_decode_parallel(
					   walker, data, (size_t)len,
					   c->seg_threads, c->o->piece_bytes)
				 : strace_walker_decode(walker, data, (size_t)len);
		if (n < 0 && n != -STRACE_E_NOSYNC) {
			rc = (int)n;
			break;
		}
		run_done(c, q, len, prog->told, n == -STRACE_E_NOSYNC);
	}
	free(joined);
	return rc;
}

/* A perf EXIT record as a thread_exit event (perf records no status). */
static int put_exit(struct strace_sink *s, const struct exit_rec *x)
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
			return put_exit(s, &c->exits.v[i]);
	return 0;
}

static void add_stats(struct ctx *c, struct strace_walker *walker,
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
	rc = new_image(c, &img);
	if (rc < 0)
		goto out;
	add_maps(c, img, queue_pid(c, q), 0, &missing);
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
	rc = emit_losts(c, s, q->tid, 0);
	if (rc < 0)
		goto out;

	rc = walk_queue(c, q, walker, &prog, strace_sink_emit, s);
	if (rc < 0)
		goto out;
	rc = emit_thread_exit(c, s, q->tid);
	if (rc < 0)
		goto out;
	rc = emit_cut(c, q, q->tid, strace_sink_emit, s);
	if (rc < 0)
		goto out;
	rc = strace_writer_flush(s->w);
out:
	if (walker)
		add_stats(c, walker, s->events, missing);
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

static void *job_main(void *arg)
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
		    e->b != STRACE_REASON_START && e->b != STRACE_REASON_ENABLE) {
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
		while (pi < np && (pt[pi].off < sg.from || pt[pi].time < e->time))
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
	rc = slot_image(c, k, missing, &img);
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
		warnf(c,
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
				rc = next_run(c, ce->q, &ce->next, &ce->joined,
					      &ce->run, &ce->run_len, collect,
					      ce);
				if (rc < 0)
					return rc;
				if (past_cut(c, ce->q, first)) {
					add_done(c, ce->run_len);
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
				run_done(c, ce->q, ce->len, 0,
					 n == -STRACE_E_NOSYNC);
			else
				add_done(c, ce->seg_bytes);
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
		sp = base_space(c, sc->pid, sc->time);
		if (sp < 0 || (e.slot = space_slot(c, sp)) < 0)
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
		int rc = new_image(c, &is.img);
		if (rc < 0)
			return rc;
		add_maps(c, is.img, pid, 0, &missing);
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
		rc = put_exit(s, x);
	}
	return rc;
}

static int decode_percpu(struct ctx *c)
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
		pid = queue_pid(c, &c->queues.v[0]);
	if (!c->perf.has_time && nq > 1)
		warnf(c, "per-CPU recording without a time conversion: the "
			 "CPUs' traces cannot be ordered or split between "
			 "threads; each CPU's goes to the first thread seen "
			 "there, CPU after CPU");
	ce = calloc(nq ? nq : 1, sizeof(*ce));
	s = calloc(1, sizeof(*s));
	if (!ce || !s) {
		rc = -ENOMEM;
		goto out;
	}
	rc = build_spaces(c);
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
		qsort(q->v, q->n, sizeof(*q->v), cmp_abuf);
	}

	/* Merge by time (ties: CPU order) through one sink. */
	s->ring = o->ring;
	s->types = o->types;
	s->syms = c->syms;
	rc = strace_writer_open(o->ring, &s->w);
	if (rc < 0)
		goto out;
	strace_writer_set_direct(s->w, 1); /* the one writer of the merge */
	rc = emit_losts(c, s, 0, 1);
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
			rc = emit_cut(c, ce[i].q, ce[i].tid, strace_sink_emit,
				      s);
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
			add_stats(c, ce[i].walkers.v[k].w, 0,
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
			snprintf(st->threads[k].comm, sizeof(st->threads[k].comm),
				 "%s", d->name);
			continue;
		}
		if (st->nthreads < room) {
			st->threads[k].tid = d->tid;
			st->threads[k].pid = (uint32_t)d->a;
			snprintf(st->threads[k].comm, sizeof(st->threads[k].comm),
				 "%s", d->name);
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
		if (c->o->tid && d->type != STRACE_EV_DSO && d->tid != c->o->tid)
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

int strace_offline_decode(const struct strace_offline_opts *o,
			  struct strace_offline_stats *st, uint64_t *err_off)
{
	struct ctx *c;
	struct strace_writer *names = NULL;
	int rc;

	*err_off = 0;
	memset(st, 0, sizeof(*st));
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = o;
	if (strace_symset_new(&c->syms) < 0) {
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->stats_lock, NULL);

	c->objects = o->objects;
	if (!c->objects) {
		rc = strace_objcache_new(&c->own_objects);
		if (rc == 0)
			rc = strace_objcache_set_dir(c->own_objects,
						     o->cache_dir);
		if (rc < 0)
			goto out_free;
		c->objects = c->own_objects;
	}
	rc = strace_perf_open(o->perf_path, &c->perf, err_off);
	if (rc < 0)
		goto out_free;
	st->file_size = c->st.file_size = c->perf.size;
	rc = scan(c, err_off);
	if (rc < 0)
		goto out;
	rc = find_vdso(c);
	if (rc == 0)
		rc = resolve_objects(c);
	if (rc < 0) {
		*st = c->st;
		goto out;
	}
	find_cpu(c);
	find_walk_flags(c);
	rc = list_threads(c, &c->st);
	if (rc < 0) {
		*st = c->st;
		goto out;
	}
	rc = define_names(c, &names);
	if (rc < 0)
		goto out;
	if (c->perf.per_cpu) {
		rc = decode_percpu(c);
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
		if (pthread_create(&th[started], NULL, job_main, c) == 0)
			started++;
	job_main(c);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	rc = c->err;
done:
	c->st.queues = c->queues.n;
	c->st.per_cpu = c->perf.per_cpu;
	c->st.lost += c->losts.n;
	*st = c->st;
out:
	if (names) { /* every decoding writer has closed: the end */
		int crc = strace_writer_close(names);
		if (rc >= 0 && crc < 0)
			rc = crc;
	}
	{
		/* Errors that only zeros read in the file's lost pages
		 * made are that loss; the events decoded are in the ring. */
		uint64_t cut = strace_perf_cut(&c->perf, 1, NULL);
		if (cut != UINT64_MAX) {
			*err_off = cut;
			rc = -STRACE_E_PERF_SHRANK;
		} else if (strace_perf_modified(&c->perf)) {
			warnf(c, "%s was written to while it was read: the "
				 "events may not be those of the recording; "
				 "decode a copy that nothing writes to",
			      c->perf.path);
		}
	}
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
	if (c->own_objects && o->cache_dir)
		(void)strace_objcache_save(c->own_objects, &st->cache);
	free(c->losts.v);
	free(c->defs.v);
	free(c->scheds.v);
	for (size_t i = 0; i < c->strs.n; i++)
		free(c->strs.v[i]);
	free(c->strs.v);
	strace_perf_close(&c->perf);
out_free:
	strace_objcache_free(c->own_objects);
	strace_symset_free(c->syms);
	pthread_mutex_destroy(&c->stats_lock);
	free(c);
	return rc;
}
