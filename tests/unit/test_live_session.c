/* SPDX-License-Identifier: MIT */
/*
 * test_live_session - a whole live-capture session (live.c) against a
 * fake kernel: the perf_event_open/mmap/ioctl/poll/close calls go to the
 * model below (struct strace_live_sys), everything else is real: the
 * target is a real process (tests/live/victim.c, two threads) found in
 * /proc, its vDSO read from /proc/PID/mem, its stacks unwound with
 * libunwind-ptrace.
 *
 * The fake kernel follows perf's rules as test_live_rings does (data ring
 * and AUX protocol, AUX records before aux_head, TRUNCATED + disable when
 * the AUX area is full, LOST records, overwrite mode with aux_head as an
 * offset) and plays a scenario: the traced threads run PT streams made with
 * libipt's encoder; one of them creates a new thread (a FORK record on its
 * tracking event) whose stream the session must pick up, and which later
 * exits (EXIT record, POLLHUP). Checks: every thread's PT bytes delivered
 * byte for byte, every sideband record delivered, losses counted, events
 * re-enabled after truncation, the new thread followed and closed, the
 * snapshots equal to the newest bytes at the time of each snapshot, the
 * time conversion, and the -w perf.data accepted by perf 6.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pt_backend/perf/perf.h"
#include "pt_backend/capture/capture.h"
#include "../harness.h"
#include "ptgen.h"

#define PAGE 4096
#define MAXEV 32
#define LOGCAP (64u << 20) /* bytes of records the fake kernel logs per ring */
#define NEWTID 4000000 /* the thread the fake kernel "creates" (no real tid) */

/* ---------------- the fake kernel ---------------- */

struct fev {
	int used, fd, is_pt, closed;
	pid_t tid;
	struct perf_event_attr attr;
	uint64_t id;
	uint8_t *base, *aux;
	size_t dsize, asize;
	int overwrite;
	struct fev *out; /* ring its records go to */
	int enabled, enables;
	pthread_mutex_t mu;
	/* PT producer */
	uint8_t *stream;
	size_t slen, pos;
	uint8_t *written;
	size_t wlen;
	uint64_t lost_pending, lost_total, trunc_recs, truncations;
	int hup; /* thread exited */
	uint64_t snap_total; /* overwrite: bytes written when last disabled */
	/* records written into this ring (verification) */
	uint8_t *log;
	size_t loglen;
};

struct fk {
	struct fev ev[MAXEV];
	pthread_mutex_t mu; /* table */
	pid_t pid;
	_Atomic int stop;
	int forked, exited;
	size_t stream_len;
	char filter[256];
	int opens;
	_Atomic long ksteps; /* kernel thread progress */
};

static struct fk K;

static struct fev *fd2ev(int fd)
{
	if (fd < 1000 || fd >= 1000 + MAXEV || !K.ev[fd - 1000].used)
		return NULL;
	return &K.ev[fd - 1000];
}

static struct fev *pt_of(pid_t tid)
{
	for (int i = 0; i < MAXEV; i++)
		if (K.ev[i].used && K.ev[i].is_pt && K.ev[i].tid == tid &&
		    !K.ev[i].closed)
			return &K.ev[i];
	return NULL;
}

static struct fev *track_of(pid_t tid)
{
	for (int i = 0; i < MAXEV; i++)
		if (K.ev[i].used && !K.ev[i].is_pt && K.ev[i].tid == tid &&
		    !K.ev[i].closed)
			return &K.ev[i];
	return NULL;
}

static int f_open(void *arg, struct perf_event_attr *a, pid_t pid, int cpu,
		  int group, unsigned long flags)
{
	struct fev *e = NULL;

	(void)arg;
	(void)flags;
	if (cpu != -1 || group != -1)
		return -EINVAL;
	pthread_mutex_lock(&K.mu);
	for (int i = 0; i < MAXEV; i++)
		if (!K.ev[i].used) {
			e = &K.ev[i];
			memset(e, 0, sizeof(*e));
			pthread_mutex_init(&e->mu, NULL);
			e->fd = 1000 + i;
			break;
		}
	if (!e) {
		pthread_mutex_unlock(&K.mu);
		return -EMFILE;
	}
	e->attr = *a;
	e->tid = pid;
	e->is_pt = a->type == 42;
	e->id = 500 + (uint64_t)(e->fd - 1000);
	/* enable_on_exec: as if the exec came right away */
	e->enabled = a->enable_on_exec ? 1 : 0;
	e->enables = e->enabled;
	e->out = e;
	K.opens++;
	/* published last: the kernel thread looks at used entries only */
	__atomic_store_n(&e->used, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&K.mu);
	return e->fd;
}

static void *f_map(void *arg, size_t len, int prot, int fd, off_t off, int *err)
{
	struct fev *e = fd2ev(fd);
	void *p;

	(void)arg;
	if (!e) {
		*err = -EBADF;
		return NULL;
	}
	p = aligned_alloc(PAGE, len);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(p, 0, len);
	if (off == 0) {
		struct perf_event_mmap_page *pg = p;

		e->base = p;
		e->dsize = len - PAGE;
		pg->data_offset = PAGE;
		pg->data_size = e->dsize;
		pg->cap_user_time_zero = 1;
		pg->time_shift = 10;
		pg->time_mult = 603;
		pg->time_zero = 123456789;
		e->log = malloc(LOGCAP);
	} else {
		struct perf_event_mmap_page *pg = (void *)e->base;

		if (!e->base || (uint64_t)off != pg->aux_offset ||
		    len != pg->aux_size) {
			free(p);
			*err = -EINVAL;
			return NULL;
		}
		e->asize = len;
		e->overwrite = !(prot & PROT_WRITE);
		/* published last: the kernel thread starts once aux is set */
		__atomic_store_n(&e->aux, (uint8_t *)p, __ATOMIC_RELEASE);
	}
	return p;
}

static int f_unmap(void *arg, void *p, size_t len)
{
	(void)arg;
	(void)p;
	(void)len;
	return 0; /* kept for verification; freed at the end */
}

static int f_ioctl(void *arg, int fd, unsigned long req, unsigned long val)
{
	struct fev *e = fd2ev(fd);

	(void)arg;
	if (!e)
		return -EBADF;
	switch (req) {
	case PERF_EVENT_IOC_ENABLE:
		pthread_mutex_lock(&e->mu);
		e->enabled = 1;
		e->enables++;
		pthread_mutex_unlock(&e->mu);
		return 0;
	case PERF_EVENT_IOC_DISABLE:
		/* Synchronous like the kernel: the producer is out of its write. */
		pthread_mutex_lock(&e->mu);
		e->enabled = 0;
		e->snap_total = e->pos;
		pthread_mutex_unlock(&e->mu);
		return 0;
	case PERF_EVENT_IOC_SET_OUTPUT: {
		struct fev *o = fd2ev((int)val);

		if (!o || !o->base)
			return -EINVAL;
		e->out = o;
		return 0;
	}
	case PERF_EVENT_IOC_ID:
		memcpy((void *)(uintptr_t)val, &e->id, 8);
		return 0;
	case PERF_EVENT_IOC_SET_FILTER:
		snprintf(K.filter, sizeof(K.filter), "%s",
			 (const char *)(uintptr_t)val);
		return 0;
	default:
		return -ENOTTY;
	}
}

static int f_close(void *arg, int fd)
{
	struct fev *e = fd2ev(fd);

	(void)arg;
	if (!e)
		return -EBADF;
	pthread_mutex_lock(&e->mu);
	e->closed = 1;
	e->enabled = 0;
	pthread_mutex_unlock(&e->mu);
	return 0;
}

static int f_poll(void *arg, struct pollfd *p, unsigned long n, int timeout)
{
	struct timespec ts = {0, 200000};
	int ready = 0;

	(void)arg;
	if (timeout > 0)
		nanosleep(&ts, NULL);
	for (unsigned long i = 0; i < n; i++) {
		struct fev *e = fd2ev(p[i].fd);
		struct perf_event_mmap_page *pg;

		p[i].revents = 0;
		if (!e || !e->base)
			continue;
		pg = (void *)e->base;
		if (__atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) != pg->data_tail ||
		    (!e->overwrite && pg->aux_head != pg->aux_tail))
			p[i].revents |= POLLIN;
		if (e->hup)
			p[i].revents |= POLLHUP;
		ready += !!p[i].revents;
	}
	return ready;
}

static const struct strace_live_sys fake_sys = {
	NULL, f_open, f_map, f_unmap, f_ioctl, f_close, f_poll,
};

/* Write a record into e->out's data ring (perf_output_begin/end). */
static int k_output(struct fev *src, uint32_t type, uint16_t misc,
		    const void *body, size_t blen, pid_t pid, pid_t tid)
{
	struct fev *e = src->out;
	struct perf_event_mmap_page *pg = (void *)e->base;
	uint8_t rec[512], lrec[64];
	size_t n = 8 + ((blen + 7) & ~(size_t)7), lsize = 0;
	uint64_t head = pg->data_head, tail, space;
	struct pfmt_event_header h = {type, misc, 0};
	uint32_t pt[2] = {(uint32_t)pid, (uint32_t)tid};

	memset(rec, 0, sizeof(rec));
	memcpy(rec + 8, body, blen);
	memcpy(rec + n, pt, 8);
	memcpy(rec + n + 8, &src->id, 8);
	n += 16;
	h.size = (uint16_t)n;
	memcpy(rec, &h, 8);
	if (e->lost_pending) {
		struct pfmt_event_header lh = {PFMT_RECORD_LOST, 0, 40};
		uint64_t lb[2] = {src->id, e->lost_pending};

		memcpy(lrec, &lh, 8);
		memcpy(lrec + 8, lb, 16);
		memcpy(lrec + 24, pt, 8);
		memcpy(lrec + 32, &src->id, 8);
		lsize = 40;
	}
	tail = __atomic_load_n(&pg->data_tail, __ATOMIC_ACQUIRE); /* A */
	space = e->dsize - (head - tail);
	if (n + lsize > space) {
		e->lost_pending++;
		e->lost_total++;
		return 0;
	}
	for (size_t i = 0; i < lsize; i++)
		e->base[PAGE + ((head + i) & (e->dsize - 1))] = lrec[i];
	head += lsize;
	for (size_t i = 0; i < n; i++)
		e->base[PAGE + ((head + i) & (e->dsize - 1))] = rec[i];
	if (lsize) {
		if (e->loglen + lsize > LOGCAP)
			abort();
		memcpy(e->log + e->loglen, lrec, lsize);
		e->loglen += lsize;
		e->lost_pending = 0;
	}
	if (e->loglen + n > LOGCAP) {
		fprintf(stderr, "fake kernel: record log full\n");
		abort();
	}
	memcpy(e->log + e->loglen, rec, n);
	e->loglen += n;
	__atomic_store_n(&pg->data_head, head + n, __ATOMIC_RELEASE); /* B */
	return 1;
}

static void start_stream(struct fev *e)
{
	uint8_t *st = malloc(K.stream_len);

	e->slen = make_pt(st, K.stream_len, NULL);
	e->written = malloc(K.stream_len);
	/* published last: the test's loops read slen once stream is set */
	__atomic_store_n(&e->stream, st, __ATOMIC_RELEASE);
}

/* One step of PT output for event e (called with e->mu held). */
static void k_pt_step(struct fev *e)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	size_t want = 1 + rnd() % 2000, fit;
	uint64_t head, flags = 0;

	if (!e->stream)
		start_stream(e);
	if (e->pos >= e->slen)
		return;
	if (want > e->slen - e->pos)
		want = e->slen - e->pos;
	if (e->overwrite) {
		for (size_t i = 0; i < want; i++)
			e->aux[(e->pos + i) & (e->asize - 1)] = e->stream[e->pos + i];
		e->pos += want;
		__atomic_store_n(&pg->aux_head, e->pos & (e->asize - 1),
				 __ATOMIC_RELEASE);
		return;
	}
	head = pg->aux_head;
	fit = (size_t)(e->asize - (head - __atomic_load_n(&pg->aux_tail,
							  __ATOMIC_ACQUIRE)));
	if (fit > want)
		fit = want;
	for (size_t i = 0; i < fit; i++)
		e->aux[(head + i) & (e->asize - 1)] = e->stream[e->pos + i];
	memcpy(e->written + e->wlen, e->stream + e->pos, fit);
	e->wlen += fit;
	e->pos += want;
	if (fit < want) {
		flags = PERF_AUX_FLAG_TRUNCATED;
		e->truncations++;
	}
	if (fit || flags) {
		uint64_t b[3] = {head, fit, flags};

		if (k_output(e, PFMT_RECORD_AUX, 0, b, 24, K.pid, e->tid) &&
		    flags)
			e->trunc_recs++;
	}
	__atomic_store_n(&pg->aux_head, head + fit, __ATOMIC_RELEASE);
	if (flags)
		e->enabled = 0; /* perf_event_disable_inatomic() */
}

static void *kernel_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&K.stop)) {
		int busy = 0;

		for (int i = 0; i < MAXEV; i++) {
			struct fev *e = &K.ev[i], *tr;

			if (!__atomic_load_n(&e->used, __ATOMIC_ACQUIRE) ||
			    !e->is_pt || !__atomic_load_n(&e->aux, __ATOMIC_ACQUIRE) ||
			    e->closed)
				continue;
			pthread_mutex_lock(&e->mu);
			if (e->enabled) {
				k_pt_step(e);
				atomic_fetch_add(&K.ksteps, 1);
				busy = 1;
			}
			tr = track_of(e->tid);
			/* Sideband of this thread, now and then. */
			/* (only while the thread runs: its stream is not done) */
			if (e->enabled && !e->hup && tr && tr->enabled &&
			    e->stream && e->pos < e->slen && rnd() % 8 == 0) {
				char body[64] = {0};
				uint32_t pt[2] = {(uint32_t)K.pid, (uint32_t)e->tid};

				memcpy(body, pt, 8);
				snprintf(body + 8, 24, "thr-%d", (int)(rnd() % 100));
				k_output(tr, PFMT_RECORD_COMM, 0, body, 8 + 16,
					 K.pid, e->tid);
			}
			/* The first thread creates NEWTID a third of the way in. */
			if (e->enabled && tr && tr->enabled && !K.forked &&
			    e->tid == K.pid && e->pos > e->slen / 3) {
				uint32_t f[6] = {(uint32_t)K.pid, (uint32_t)K.pid,
						 NEWTID, (uint32_t)e->tid, 7, 0};

				if (k_output(tr, PFMT_RECORD_FORK, 0, f, 24, K.pid,
					     e->tid))
					K.forked = 1;
			}
			/* NEWTID exits when its stream is done (started: slen
			 * and pos are 0 until its first step). */
			if (e->tid == NEWTID && e->stream && e->pos >= e->slen &&
			    !K.exited &&
			    tr && !e->overwrite) {
				uint32_t f[6] = {(uint32_t)K.pid, (uint32_t)K.pid,
						 NEWTID, NEWTID, 9, 0};

				if (k_output(tr, PFMT_RECORD_EXIT, 0, f, 24, K.pid,
					     NEWTID)) {
					K.exited = 1;
					e->hup = 1;
				}
			}
			pthread_mutex_unlock(&e->mu);
		}
		if (!busy)
			sched_yield();
	}
	return NULL;
}

/* What the fake kernel's events look like (when a session stalls). */
static void dump_kernel(void)
{
	for (int i = 0; i < MAXEV; i++) {
		struct fev *e = &K.ev[i];
		struct perf_event_mmap_page *pg = (void *)e->base;

		if (!e->used || !pg)
			continue;
		fprintf(stderr,
			"  event %d: tid %d %s enabled %d (%d enables) closed %d "
			"hup %d, stream %zu of %zu, aux head %llu tail %llu, "
			"data head %llu tail %llu\n",
			i, (int)e->tid, e->is_pt ? "PT" : "track", e->enabled,
			e->enables, e->closed, e->hup, e->pos, e->slen,
			(unsigned long long)pg->aux_head,
			(unsigned long long)pg->aux_tail,
			(unsigned long long)pg->data_head,
			(unsigned long long)pg->data_tail);
	}
	fprintf(stderr, "  forked %d exited %d, %ld kernel steps\n", K.forked,
		K.exited, (long)K.ksteps);
}

/* ---------------- the consumer side ---------------- */

struct got {
	pid_t tid;
	uint8_t *aux;
	size_t alen;
	uint64_t next;
	int gaps;
	uint8_t *log;
	size_t loglen;
	int snaps, snap_bad;
	int chunks;
};

struct sink {
	struct got g[MAXEV];
	int ng;
	int vdso_ok, stacks, stack_frames;
	int overwrite;
	/* MMAP2 records the session made from /proc/PID/maps at attach */
	int mmaps, mmap_exe, mmap_vdso;
	uint8_t *vdso; /* the vDSO the session read */
	size_t vdso_len;
};

static struct got *got_of(struct sink *s, pid_t tid)
{
	for (int i = 0; i < s->ng; i++)
		if (s->g[i].tid == tid)
			return &s->g[i];
	s->g[s->ng].tid = tid;
	s->g[s->ng].aux = malloc(8 << 20);
	s->g[s->ng].log = malloc(64 << 20);
	return &s->g[s->ng++];
}

static int cb_sideband(void *arg, pid_t tid, const struct pfmt_event_header *rec,
		       const struct strace_sb *sb)
{
	struct sink *s = arg;
	struct got *g;

	if (rec->type == PFMT_RECORD_MMAP2) {
		/* the fake kernel makes none: these are the synthesized ones */
		const struct pfmt_mmap2 *m = (const void *)(rec + 1);
		char exe[512], link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)K.pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		s->mmaps++;
		if ((m->prot & PROT_EXEC) && m->pid == (uint32_t)K.pid &&
		    sb->pid == (uint32_t)K.pid && !strcmp(m->filename, exe))
			s->mmap_exe++;
		if (!strcmp(m->filename, "[vdso]"))
			s->mmap_vdso++;
		return 0;
	}
	g = got_of(arg, tid);
	memcpy(g->log + g->loglen, rec, rec->size);
	g->loglen += rec->size;
	return 0;
}

static int cb_aux(void *arg, pid_t tid, uint64_t off, const void *p, size_t len,
		  unsigned flags)
{
	struct sink *s = arg;
	struct got *g = got_of(s, tid);

	if (s->overwrite) {
		/* Must be the newest len bytes at the time of the DISABLE. */
		struct fev *e = pt_of(tid);

		g->snaps++;
		if (!e || len > e->snap_total ||
		    memcmp(p, e->stream + e->snap_total - len, len) ||
		    !!(flags & STRACE_AUX_SNAP_WRAPPED) != (e->snap_total > e->asize))
			g->snap_bad++;
		return 0;
	}
	/* Full trace: contiguous per thread except after a truncation. */
	(void)off;
	g->chunks++;
	memcpy(g->aux + g->alen, p, len);
	g->alen += len;
	return 0;
}

static int cb_vdso(void *arg, pid_t pid, uint64_t start, const void *p,
		   size_t len)
{
	struct sink *s = arg;

	s->vdso_ok = pid == K.pid && start && len >= 4096 &&
		     !memcmp(p, "\177ELF", 4);
	free(s->vdso);
	s->vdso = malloc(len);
	if (s->vdso)
		memcpy(s->vdso, p, len);
	s->vdso_len = s->vdso ? len : 0;
	return 0;
}

static int cb_stack(void *arg, const struct strace_unwound *st)
{
	struct sink *s = arg;

	s->stacks++;
	s->stack_frames += (int)st->nframes;
	return 0;
}

static pid_t start_victim(void)
{
	int fd[2];
	pid_t p;
	char buf[256];
	FILE *f;
	const char *o = getenv("O");

	if (pipe(fd) < 0)
		return -1;
	p = fork();
	if (!p) {
		char path[512];

		snprintf(path, sizeof(path), "%s/tests/live_victim",
			 o ? o : "build");
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		dup2(fd[1], 1);
		close(fd[0]);
		execl(path, "live_victim", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "ready", 5))
			break;
	if (f)
		fclose(f);
	usleep(20000);
	return p;
}

static void reset_kernel(size_t stream_len)
{
	for (int i = 0; i < MAXEV; i++) {
		free(K.ev[i].base);
		free(K.ev[i].aux);
		free(K.ev[i].stream);
		free(K.ev[i].written);
		free(K.ev[i].log);
	}
	memset(&K, 0, sizeof(K));
	pthread_mutex_init(&K.mu, NULL);
	K.stream_len = stream_len;
}

static void free_sink(struct sink *s)
{
	free(s->vdso);
	for (int i = 0; i < s->ng; i++) {
		free(s->g[i].aux);
		free(s->g[i].log);
	}
}

/* Output of a shell command into out; its exit status. */
static int run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	return pclose(p);
}

static int perf_accepts(const char *path, char *out, size_t outlen)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd),
		 "bash -c 'set -o pipefail; "
		 "perf report -D -i %s 2>&1 | grep -c \"PERF_RECORD_AUXTRACE size\" && "
		 "perf report --stats -i %s 2>&1 | grep -E \"AUXTRACE|COMM|FORK|EXIT|AUX |MMAP2\"'",
		 path, path);
	return run_cmd(cmd, out, outlen);
}

/*
 * The vDSO of a -w file, as perf record keeps it: its bytes in the
 * build-id cache (bdir), its build-id in the file's BUILD_ID feature,
 * which perf reads; ptrace-capture -i finds it there, and names the path
 * it looked at when it is not.
 */
static void check_w_vdso(const struct sink *s, const char *wpath,
			 const char *bdir)
{
	uint8_t id[STRACE_BUILDID_MAX], *got;
	char path[4300], cmd[9000], hexid[2 * STRACE_BUILDID_MAX + 1],
		out[8192];
	const char *o = getenv("O") ? getenv("O") : "build";
	size_t n = strace_buildid_of(s->vdso, s->vdso_len, id), len = 0;
	FILE *f;

	CHECK_INT(n, ==, 20); /* the kernel's vDSO has a GNU build-id */
	if (n != 20)
		return;
	for (size_t i = 0; i < n; i++)
		sprintf(hexid + 2 * i, "%02x", id[i]);
	CHECK_INT(strace_buildid_vdso_path(bdir, id, n, path, sizeof(path)),
		  ==, 0);
	got = malloc(s->vdso_len + 1);
	REQUIRE(got);
	f = fopen(path, "rb");
	CHECK(f);
	if (f) {
		len = fread(got, 1, s->vdso_len + 1, f);
		fclose(f);
	}
	CHECK(len == s->vdso_len && !memcmp(got, s->vdso, len));
	free(got);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/vdso", bdir, hexid,
		 hexid + 2);
	CHECK(access(path, R_OK) == 0); /* perf's link resolves */
	snprintf(cmd, sizeof(cmd), "perf buildid-list -i %s 2>&1", wpath);
	CHECK_INT(run_cmd(cmd, out, sizeof(out)), ==, 0);
	CHECK(strstr(out, hexid) && strstr(out, "[vdso]"));
	snprintf(cmd, sizeof(cmd),
		 "PERF_BUILDID_DIR=%s %s/bin/ptrace-capture -q -i %s -o %s.srb "
		 "2>&1; rm -f %s.srb",
		 bdir, o, wpath, wpath, wpath);
	run_cmd(cmd, out, sizeof(out));
	CHECK(!strstr(out, "no vDSO image"));
	snprintf(cmd, sizeof(cmd),
		 "PERF_BUILDID_DIR=%s/none %s/bin/ptrace-capture -q -i %s -o "
		 "%s.srb 2>&1; rm -f %s.srb",
		 bdir, o, wpath, wpath, wpath);
	run_cmd(cmd, out, sizeof(out));
	CHECK(strstr(out, "no vDSO image") && strstr(out, hexid));
	if (!strstr(out, hexid))
		fprintf(stderr, "  ptrace-capture -i said: %s\n", out);
}

/*
 * Every object the -w file's mapping records name has its build-id in
 * the BUILD_ID feature, as perf record writes it for an AUX-area
 * recording: perf buildid-list lists the program (live_victim) and libc,
 * each with the build-id readelf -n reads from the file itself.
 */
static void check_w_objects(const char *wpath)
{
	char cmd[4500], out[8192], line[4200];
	int objects = 0, victim = 0, libc = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf buildid-list -i %s 2>&1", wpath);
	CHECK_INT(run_cmd(cmd, out, sizeof(out)), ==, 0);
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		char id[64], path[4096], got[64] = "";

		if (sscanf(l, "%63s %4095s", id, path) != 2 || path[0] != '/')
			continue;
		snprintf(cmd, sizeof(cmd),
			 "readelf -n '%s' 2>/dev/null | sed -n "
			 "'s/.*Build ID: *//p'",
			 path);
		p = popen(cmd, "r");
		if (p && fgets(line, sizeof(line), p))
			sscanf(line, "%63s", got);
		if (p)
			pclose(p);
		if (strcmp(id, got))
			fprintf(stderr, "  %s: BUILD_ID %s, readelf %s\n", path,
				id, got);
		CHECK_STR(id, got);
		objects++;
		victim |= strstr(path, "live_victim") != NULL;
		libc |= strstr(path, "libc.so") != NULL;
	}
	printf("  -w BUILD_ID: %d objects besides the vDSO\n", objects);
	CHECK(victim);
	CHECK(libc);
}

TEST(session_full_trace_follow_threads)
{
	struct strace_live_opts o = {0};
	struct strace_live *l = NULL;
	struct strace_live_cb cb;
	struct strace_live_stats st;
	struct strace_time_conv tc;
	static struct sink s;
	char err[256], wpath[] = "/tmp/test_live_session.XXXXXX";
	char bdir[] = "/tmp/test_live_buildid.XXXXXX";
	pthread_t kt;
	pid_t victim;
	int rounds = 0, r, wfd;

	reset_kernel(1 << 20);
	memset(&s, 0, sizeof(s));
	wfd = mkstemp(wpath);
	REQUIRE(wfd >= 0);
	close(wfd);
	o.sysfs_root = "tests/live/sysfs";
	o.event = "intel_pt/cyc/u";
	o.filter = "filter 0x401000/0x2000@/bin/true";
	o.aux_bytes = 1 << 14; /* small: truncations happen */
	o.data_bytes = 1 << 13;
	o.sys = &fake_sys;
	o.write_path = wpath;
	REQUIRE(mkdtemp(bdir));
	o.buildid_dir = bdir;
	CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==, 0);
	REQUIRE(l);
	victim = start_victim();
	REQUIRE(victim > 0);
	K.pid = victim;
	memset(&cb, 0, sizeof(cb));
	cb.arg = &s;
	cb.sideband = cb_sideband;
	cb.aux = cb_aux;
	cb.vdso = cb_vdso;
	cb.stack = cb_stack;
	REQUIRE(pthread_create(&kt, NULL, kernel_thread, NULL) == 0);
	CHECK_INT(strace_live_attach(l, victim, &cb), ==, 0);
	CHECK_STR(K.filter, "filter 0x401000/0x2000@/bin/true");
	CHECK(s.vdso_ok);
	/* the code mapped before the attach: the program, libc, the vDSO */
	CHECK_INT(s.mmap_exe, ==, 1);
	CHECK_INT(s.mmap_vdso, ==, 1);
	CHECK_INT(s.mmaps, >=, 4);
	CHECK_INT(s.stacks, ==, 2);
	CHECK_INT(s.stack_frames, >=, 6);
	/* Run until every stream (2 real threads + NEWTID) is consumed. */
	for (long guard = 0, last = -1;; guard++) {
		int done = K.forked && K.exited;
		long progress = 0;

		/* the guard counts polls without progress of the fake kernel */
		for (int i = 0; i < MAXEV; i++)
			progress += (long)K.ev[i].pos;
		if (progress != last) {
			last = progress;
			guard = 0;
		}

		for (int i = 0; i < MAXEV && done; i++)
			if (K.ev[i].used && K.ev[i].is_pt &&
			    (!__atomic_load_n(&K.ev[i].stream, __ATOMIC_ACQUIRE) ||
			     K.ev[i].pos < K.ev[i].slen))
				done = 0;
		r = strace_live_poll(l, 10, &cb);
		CHECK_INT(r, >=, 0);
		if ((done && ++rounds > 5) || r < 0)
			break;
		/* the session re-enables an idle event every 256 polls */
		if (guard > 20000) {
			dump_kernel();
			CHECK(!"the streams were not consumed (event left disabled?)");
			break;
		}
	}
	CHECK_INT(strace_live_time_conv(l, &tc), ==, 0);
	CHECK_INT(tc.time_shift, ==, 10);
	CHECK_INT(tc.time_mult, ==, 603);
	CHECK(tc.cap_user_time_zero);
	CHECK_INT(tc.mtc_period, ==, 3); /* the default config's mtc_period */
	CHECK_INT(tc.max_nonturbo_ratio, ==, 33);
	{
		uint64_t tsc = 0x123456789abcULL;
		uint64_t want = tsc * 603; /* no overflow for this tsc */

		CHECK_U64(strace_live_tsc_to_perf(&tc, tsc), ==,
			  123456789 + (uint64_t)(want >> 10));
	}
	/* A broken page's time_shift of 64 or more: no conversion (a shift
	 * by it is undefined, and the perf.data -w writes would carry it),
	 * and the conversion functions stay defined with it. */
	for (int i = 0; i < MAXEV; i++)
		if (K.ev[i].used && K.ev[i].base)
			((struct perf_event_mmap_page *)(void *)K.ev[i].base)
				->time_shift = 64;
	CHECK_INT(strace_live_time_conv(l, &tc), ==, -ERANGE);
	CHECK_INT(tc.time_shift, ==, 0);
	CHECK_INT(tc.time_mult, ==, 0);
	CHECK(!tc.cap_user_time_zero);
	tc.time_shift = 64;
	tc.time_mult = 603;
	tc.time_zero = 5;
	CHECK_U64(strace_live_tsc_to_perf(&tc, 1000000), ==, 5);
	for (int i = 0; i < MAXEV; i++)
		if (K.ev[i].used && K.ev[i].base)
			((struct perf_event_mmap_page *)(void *)K.ev[i].base)
				->time_shift = 10;
	CHECK_INT(strace_live_stop(l, &cb), ==, 0);
	atomic_store(&K.stop, 1);
	pthread_join(kt, NULL);
	strace_live_get_stats(l, &st);

	/* Every PT event: bytes delivered equal bytes the kernel wrote. */
	{
		int pts = 0;
		uint64_t trunc = 0, lost = 0, enables_after = 0;

		for (int i = 0; i < MAXEV; i++) {
			struct fev *e = &K.ev[i];
			struct got *g;

			if (!e->used || !e->is_pt)
				continue;
			pts++;
			g = got_of(&s, e->tid);
			CHECK_U64(g->alen, ==, e->wlen);
			CHECK(g->alen == e->wlen &&
			      !memcmp(g->aux, e->written, e->wlen));
			CHECK_U64(g->loglen, ==, e->loglen);
			CHECK(g->loglen == e->loglen &&
			      !memcmp(g->log, e->log, e->loglen));
			CHECK(e->closed);
			trunc += e->trunc_recs;
			/* what is still pending was never reported (nor by perf) */
			lost += e->lost_total - e->lost_pending;
			enables_after += (uint64_t)e->enables;
		}
		CHECK_INT(pts, ==, 3); /* 2 real threads + the followed one */
		CHECK(pt_of(NEWTID) == NULL); /* closed after its EXIT */
		CHECK_U64(st.truncated, ==, trunc);
		CHECK_U64(st.lost_records, ==, lost);
		CHECK_U64(st.threads, ==, 3);
		/*
		 * each PT event: 1 initial enable + 1 per truncation seen or
		 * per poll with LOST records (a lost AUX record may have been
		 * a truncation)
		 */
		CHECK_U64(st.reenabled, >=, st.truncated);
		CHECK_U64(enables_after, ==, 3 + st.reenabled);
		fprintf(stderr,
			"  full: %llu PT bytes, %llu records, %llu truncations "
			"(re-enabled), %llu lost records, %d stacks\n",
			(unsigned long long)st.aux_bytes,
			(unsigned long long)st.records,
			(unsigned long long)st.truncated,
			(unsigned long long)st.lost_records, s.stacks);
		CHECK_U64(st.truncated, >, 0);
	}
	/* The -w file: perf 6.1 reads it. */
	{
		char out[4096] = "", cmd[600];
		int rc = perf_accepts(wpath, out, sizeof(out));

		fprintf(stderr, "  perf on -w output (rc %d):\n%s", rc, out);
		int chunks = 0;

		for (int i = 0; i < s.ng; i++)
			chunks += s.g[i].chunks;
		CHECK_INT(rc, ==, 0);
		/*
		 * AUXTRACE records: staged per thread and cut at PSBs and at
		 * gaps, so at least one and at most one per chunk delivered
		 */
		CHECK_INT(atoi(out), >, 0);
		CHECK_INT(atoi(out), <=, chunks);
		CHECK(strstr(out, "FORK events:          1"));
		CHECK(strstr(out, "EXIT events:          1"));
		CHECK(strstr(out, "AUXTRACE_INFO events:          1"));
		{
			/* the synthesized mappings are in the file */
			const char *m = strstr(out, "MMAP2 events:");
			CHECK(m && atoi(m + strlen("MMAP2 events:")) == s.mmaps);
		}
		/* perf names our events from EVENT_DESC */
		snprintf(cmd, sizeof(cmd), "perf evlist -i %s 2>&1", wpath);
		REQUIRE(run_cmd(cmd, out, sizeof(out)) != -1);
		CHECK(strstr(out, "intel_pt/cyc/u"));
		CHECK(strstr(out, "dummy:u"));
		/*
		 * perf's Intel PT decoder runs over it: the truncations show
		 * as "Lost trace data" errors (code 8) on the threads.
		 */
		snprintf(cmd, sizeof(cmd),
			 "perf script -i %s --itrace=e 2>&1 | grep -c 'code 8: Lost trace data'",
			 wpath);
		CHECK_INT(run_cmd(cmd, out, sizeof(out)), ==, 0);
		CHECK_INT(atoi(out), >, 0);
	}
	check_w_vdso(&s, wpath, bdir);
	check_w_objects(wpath);
	strace_live_close(l);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	{
		char rm[128];

		snprintf(rm, sizeof(rm), "rm -rf %s", bdir);
		CHECK_INT(system(rm), ==, 0);
	}
	if (!getenv("LIVE_KEEP_W"))
		unlink(wpath);
	else
		fprintf(stderr, "  kept %s\n", wpath);
	free_sink(&s);
}

TEST(session_snapshot)
{
	struct strace_live_opts o = {0};
	struct strace_live *l = NULL;
	struct strace_live_cb cb;
	struct strace_live_stats st;
	static struct sink s;
	char err[256];
	pthread_t kt;
	pid_t victim;

	reset_kernel(4 << 20);
	memset(&s, 0, sizeof(s));
	s.overwrite = 1;
	o.sysfs_root = "tests/live/sysfs";
	o.snapshot = 1;
	o.aux_bytes = 1 << 15;
	o.data_bytes = 1 << 13;
	o.no_stacks = 1;
	o.sys = &fake_sys;
	CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==, 0);
	REQUIRE(l);
	victim = start_victim();
	REQUIRE(victim > 0);
	K.pid = victim;
	memset(&cb, 0, sizeof(cb));
	cb.arg = &s;
	cb.sideband = cb_sideband;
	cb.aux = cb_aux;
	REQUIRE(pthread_create(&kt, NULL, kernel_thread, NULL) == 0);
	CHECK_INT(strace_live_attach(l, victim, &cb), ==, 0);
	/* Wait until both threads have written something (a loaded machine). */
	for (int i = 0; i < 100000; i++) {
		struct fev *a = pt_of(victim);
		int n = 0;

		for (int k = 0; k < MAXEV; k++)
			n += K.ev[k].used && K.ev[k].is_pt && K.ev[k].pos > 0;
		if (a && n >= 2)
			break;
		usleep(100);
	}
	/* An early snapshot (likely before the first wrap), then several. */
	for (int i = 0; i < 40; i++) {
		if (i % 8 == 0)
			strace_live_request_snapshot(l); /* what SIGUSR2 does */
		CHECK_INT(strace_live_poll(l, 1, &cb), >=, 0);
	}
	CHECK_INT(strace_live_stop(l, &cb), ==, 0); /* + the snapshot at exit */
	atomic_store(&K.stop, 1);
	pthread_join(kt, NULL);
	strace_live_get_stats(l, &st);
	CHECK_U64(st.snapshots, ==, 6);
	for (int i = 0; i < s.ng; i++) {
		if (!pt_of(s.g[i].tid) && s.g[i].snaps == 0)
			continue;
		CHECK_INT(s.g[i].snap_bad, ==, 0);
	}
	{
		int with = 0;

		for (int i = 0; i < s.ng; i++)
			with += s.g[i].snaps > 0;
		CHECK_INT(with, >=, 2);
	}
	fprintf(stderr, "  snapshot: %llu snapshots, %llu bytes\n",
		(unsigned long long)st.snapshots,
		(unsigned long long)st.aux_bytes);
	strace_live_close(l);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	free_sink(&s);
}

TEST(errors)
{
	struct strace_live_opts o = {0};
	struct strace_live *l = NULL;
	char err[256], dir[] = "/tmp/test_live_sess.XXXXXX", cmd[512];
	pid_t dead;
	FILE *f;

	/* This machine: no intel_pt under the real /sys. */
	if (access("/sys/bus/event_source/devices/intel_pt", F_OK) == 0)
		SKIP("this machine has Intel PT");
	CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==,
		  -STRACE_E_NOPT);
	/* Fake sysfs says yes, the kernel does not know type 42: NOPT too. */
	o.sysfs_root = "tests/live/sysfs";
	REQUIRE(strace_live_open(&o, &l, err, sizeof(err)) == 0);
	{
		pid_t v = start_victim();

		CHECK_INT(strace_live_attach(l, v, NULL), ==, -STRACE_E_NOPT);
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
	/* A real pid that does not exist. */
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	CHECK_INT(strace_live_attach(l, dead, NULL), ==, -STRACE_E_NOPID);
	strace_live_close(l);
	/* Bad event terms and filters. */
	o.event = "intel_pt/bogus/u";
	CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==,
		  -STRACE_E_BADARG);
	CHECK(strstr(err, "bogus"));
	o.event = NULL;
	o.filter = "filter 0x1/0x2 filter 0x3/0x4 filter 0x5/0x6";
	CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==,
		  -STRACE_E_BADARG);
	/* Fake procfs: paranoid 3, yama scope 1 and 3. */
	REQUIRE(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/kernel/yama %s/%d", dir, dir,
		 (int)getpid());
	REQUIRE(system(cmd) == 0);
#define PUT(rel, text)                                                         \
	do {                                                                   \
		snprintf(cmd, sizeof(cmd), "%s/%s", dir, rel);                 \
		f = fopen(cmd, "w");                                           \
		REQUIRE(f);                                                    \
		fputs(text, f);                                                \
		fclose(f);                                                     \
	} while (0)
	PUT("sys/kernel/perf_event_paranoid", "3\n");
	CHECK_INT(strace_live_check_access(dir, getpid(), 0), ==,
		  -STRACE_E_PARANOID);
	CHECK_INT(strace_live_check_access(dir, getpid(), 1), ==, 0);
	PUT("sys/kernel/perf_event_paranoid", "2\n");
	PUT("sys/kernel/yama/ptrace_scope", "1\n");
	CHECK_INT(strace_live_check_access(dir, getpid(), 0), ==,
		  -STRACE_E_PTRACE_SCOPE);
	CHECK_INT(strace_live_check_access(dir, 0, 0), ==, 0); /* our child */
	CHECK_INT(strace_live_check_access(dir, getpid(), 1), ==, 0);
	PUT("sys/kernel/yama/ptrace_scope", "3\n");
	CHECK_INT(strace_live_check_access(dir, getpid(), 1), ==,
		  -STRACE_E_PTRACE_SCOPE);
	CHECK_INT(strace_live_check_access(dir, 999999999, 1), ==,
		  -STRACE_E_NOPID);
	o.filter = NULL;
	o.procfs_root = dir;
	PUT("sys/kernel/perf_event_paranoid", "3\n");
	if (!strace_live_privileged())
		CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==,
			  -STRACE_E_PARANOID);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), ==, 0);
#undef PUT
}

TEST(session_spawn_command)
{
	struct strace_live_opts o = {0};
	struct strace_live *l = NULL;
	struct strace_live_cb cb;
	struct strace_live_stats st;
	static struct sink s;
	char err[256], exe[512], link[64], path[512];
	const char *odir = getenv("O");
	char *argv[4], sh[] = "/bin/sh", dash_c[] = "-c", script[600];
	pthread_t kt;
	pid_t child = 0;
	ssize_t n;
	struct fev *e;

	reset_kernel(256 << 10);
	memset(&s, 0, sizeof(s));
	o.sysfs_root = "tests/live/sysfs";
	o.aux_bytes = 1 << 16;
	o.data_bytes = 1 << 14;
	o.sys = &fake_sys;
	CHECK_INT(strace_live_open(&o, &l, err, sizeof(err)), ==, 0);
	REQUIRE(l);
	snprintf(path, sizeof(path), "%s/tests/live_victim", odir ? odir : "build");
	/* via sh so that the victim's output goes to /dev/null */
	snprintf(script, sizeof(script), "exec %s >/dev/null", path);
	argv[0] = sh;
	argv[1] = dash_c;
	argv[2] = script;
	argv[3] = NULL;
	memset(&cb, 0, sizeof(cb));
	cb.arg = &s;
	cb.sideband = cb_sideband;
	cb.aux = cb_aux;
	CHECK_INT(strace_live_spawn(l, argv, &child), ==, 0);
	REQUIRE(child > 0);
	K.pid = child;
	e = pt_of(child);
	REQUIRE(e);
	CHECK_INT(e->attr.enable_on_exec, ==, 1);
	CHECK_INT(track_of(child)->attr.enable_on_exec, ==, 1);
	REQUIRE(pthread_create(&kt, NULL, kernel_thread, NULL) == 0);
	CHECK_INT(strace_live_go(l), ==, 0);
	/*
	 * Until the command's stream is consumed. Bounded by a count, not a
	 * clock: this VM's clocks are not to be trusted under load.
	 */
	long it;

	for (it = 0; !(__atomic_load_n(&e->stream, __ATOMIC_ACQUIRE) &&
		       e->pos >= e->slen) &&
		     it < 2000000;
	     it++) {
		int r = strace_live_poll(l, 1, &cb);

		CHECK_INT(r, >=, 0);
		if (r <= 0) {
			fprintf(stderr, "  poll returned %d after %ld\n", r, it);
			break;
		}
		sched_yield();
	}
	CHECK_INT(strace_live_stop(l, &cb), ==, 0);
	atomic_store(&K.stop, 1);
	pthread_join(kt, NULL);
	strace_live_get_stats(l, &st);
	{
		struct got *g = got_of(&s, child);

		CHECK_U64(g->alen, ==, e->wlen);
		CHECK(g->alen == e->wlen && !memcmp(g->aux, e->written, e->wlen));
		CHECK_U64(e->wlen, >, 0);
		CHECK(e->pos >= e->slen); /* the whole stream went through */
		if (e->pos < e->slen)
			dump_kernel();
	}
	/* The child went on to exec the command. */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)child);
	for (int i = 0; i < 2000; i++) { /* sh execs it; slow when loaded */
		n = readlink(link, exe, sizeof(exe) - 1);
		REQUIRE(n > 0);
		exe[n] = 0;
		if (strstr(exe, "live_victim"))
			break;
		usleep(5000);
	}
	CHECK(strstr(exe, "live_victim") != NULL);
	strace_live_close(l);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free_sink(&s);
}

RUN_TESTS("test_live_session")
