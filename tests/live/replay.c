/* SPDX-License-Identifier: MIT */
/*
 * tests/live/replay.c - replay a perf.data (made by ptsynth from a real
 * program) through the whole live-capture path: a fake kernel serves
 * perf_event_open/mmap/ioctl/poll from the file's per-thread PT bytes and
 * sideband records, following perf's ring protocol; the live session
 * (pt_backend/capture) attaches to the recorded pid (a fake procfs holds its
 * task list), follows its threads through the FORK records, consumes the
 * rings and writes a perf.data with -w. e2e-live-replay.sh then decodes
 * both files with ptrace-capture -i and requires the same events.
 *
 *   live_replay IN.data OUT.data [AUX_BYTES [RING]]
 *
 * With RING, the session's callbacks also go to the live decoder
 * (pt_backend/pipeline/pipeline.h), which decodes the PT bytes as they come into
 * a new ring at RING: what `ptrace-capture -p` does with real hardware.
 *
 * The AUX area is small by default (16 KiB) so that it wraps many times;
 * the fake kernel waits for room (a consumer that keeps up), so nothing
 * is lost and the decoding must be identical.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pt_backend/capture/auxring.h"
#include "pt_backend/capture/capture.h"
#include "pt_backend/pipeline/pipeline.h"
#include "pt_backend/perf/perf.h"

#define PAGE 4096
#define MAXT 64

/* What the file holds for one thread, in file order. */
struct item {
	int is_aux;
	uint8_t rec[1024]; /* a sideband record, trailer rewritten later */
	size_t size;       /* record bytes (without trailer) */
	uint32_t pid, tid;
	uint64_t time;
	const uint8_t *aux; /* AUXTRACE bytes */
	size_t aux_len;
};

struct fthread {
	uint32_t tid;
	struct item *items;
	size_t n, cap, next;
	size_t aux_done; /* bytes of items[next] (AUX) already written */
	/* the session's events for this tid */
	int fd_pt, fd_track, enabled;
	uint8_t *base, *aux;
	size_t dsize, asize;
	uint64_t id;
	int exited;
};

static struct fthread T[MAXT];
static int nT;
static uint64_t in_sample_type;

static struct fthread *thr(uint32_t tid, int create)
{
	for (int i = 0; i < nT; i++)
		if (T[i].tid == tid)
			return &T[i];
	if (!create || nT == MAXT)
		return NULL;
	memset(&T[nT], 0, sizeof(T[nT]));
	T[nT].tid = tid;
	T[nT].fd_pt = T[nT].fd_track = -1;
	return &T[nT++];
}

static struct item *push(struct fthread *t)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->items = realloc(t->items, t->cap * sizeof(*t->items));
		if (!t->items)
			exit(1);
	}
	memset(&t->items[t->n], 0, sizeof(t->items[0]));
	return &t->items[t->n++];
}

/* ---------------- fake kernel ---------------- */

static struct fthread *by_fd(int fd, int *is_pt)
{
	for (int i = 0; i < nT; i++) {
		if (T[i].fd_pt == fd) {
			*is_pt = 1;
			return &T[i];
		}
		if (T[i].fd_track == fd) {
			*is_pt = 0;
			return &T[i];
		}
	}
	return NULL;
}

static int next_fd = 1000;

static int f_open(void *arg, struct perf_event_attr *a, pid_t pid, int cpu,
		  int group, unsigned long flags)
{
	struct fthread *t = thr((uint32_t)pid, 0);

	(void)arg, (void)cpu, (void)group, (void)flags;
	if (!t)
		return -ESRCH;
	if (a->type == PERF_TYPE_SOFTWARE)
		return t->fd_track = next_fd++;
	t->id = 700 + (uint64_t)next_fd;
	return t->fd_pt = next_fd++;
}

static void *f_map(void *arg, size_t len, int prot, int fd, off_t off, int *err)
{
	int is_pt;
	struct fthread *t = by_fd(fd, &is_pt);
	uint8_t *p;

	(void)arg, (void)prot;
	if (!t || !is_pt) {
		*err = -EINVAL;
		return NULL;
	}
	p = aligned_alloc(PAGE, len);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(p, 0, len);
	if (!off) {
		struct perf_event_mmap_page *pg = (void *)p;

		t->base = p;
		t->dsize = len - PAGE;
		/* ptsynth's files: perf time == TSC */
		pg->cap_user_time_zero = 1;
		pg->time_shift = 0;
		pg->time_mult = 1;
		pg->time_zero = 0;
	} else {
		t->aux = p;
		t->asize = len;
	}
	return p;
}

static int f_unmap(void *arg, void *p, size_t len)
{
	(void)arg, (void)len;
	for (int i = 0; i < nT; i++) {
		if (T[i].base == p)
			T[i].base = NULL;
		if (T[i].aux == p)
			T[i].aux = NULL;
	}
	free(p);
	return 0;
}

static int f_ioctl(void *arg, int fd, unsigned long req, unsigned long val)
{
	int is_pt;
	struct fthread *t = by_fd(fd, &is_pt);

	(void)arg;
	if (!t)
		return -EBADF;
	if (req == PERF_EVENT_IOC_ENABLE && is_pt)
		t->enabled = 1;
	else if (req == PERF_EVENT_IOC_DISABLE && is_pt)
		t->enabled = 0;
	else if (req == PERF_EVENT_IOC_ID) {
		uint64_t id = t->id + (is_pt ? 0 : 1); /* ids are unique */

		memcpy((void *)(uintptr_t)val, &id, 8);
	}
	return 0;
}

static int f_close(void *arg, int fd)
{
	int is_pt;
	struct fthread *t = by_fd(fd, &is_pt);

	(void)arg;
	if (t) {
		if (is_pt)
			t->fd_pt = -1;
		else
			t->fd_track = -1;
	}
	return 0;
}

/* Write a record with our trailer {pid,tid, time, id}; 0 if no room. */
static int put_rec(struct fthread *t, const uint8_t *body, size_t size,
		   uint32_t pid, uint32_t tid, uint64_t time)
{
	struct perf_event_mmap_page *pg = (void *)t->base;
	uint8_t rec[1100];
	struct pfmt_event_header h;
	uint64_t head = pg->data_head, tail, cpu = 0;
	size_t n = size + 32;

	/* trailer: pid, tid | time | cpu, res | identifier */
	memcpy(rec, body, size);
	memcpy(rec + size, &pid, 4);
	memcpy(rec + size + 4, &tid, 4);
	memcpy(rec + size + 8, &time, 8);
	memcpy(rec + size + 16, &cpu, 8);
	memcpy(rec + size + 24, &t->id, 8);
	memcpy(&h, rec, 8);
	h.size = (uint16_t)n;
	memcpy(rec, &h, 8);
	tail = __atomic_load_n(&pg->data_tail, __ATOMIC_ACQUIRE);
	if (n > t->dsize - (head - tail))
		return 0;
	for (size_t i = 0; i < n; i++)
		t->base[PAGE + ((head + i) & (t->dsize - 1))] = rec[i];
	__atomic_store_n(&pg->data_head, head + n, __ATOMIC_RELEASE);
	return 1;
}

/* Advance thread t as far as the rings allow. */
static void produce(struct fthread *t)
{
	struct perf_event_mmap_page *pg = (void *)t->base;

	while (t->enabled && t->next < t->n) {
		struct item *it = &t->items[t->next];

		if (!it->is_aux) {
			if (!put_rec(t, it->rec, it->size, it->pid, it->tid,
				     it->time))
				return;
			if (((struct pfmt_event_header *)it->rec)->type ==
			    PFMT_RECORD_EXIT)
				t->exited = 1;
			t->next++;
			continue;
		}
		{
			uint64_t head = pg->aux_head;
			uint64_t room = t->asize - (head - __atomic_load_n(
						&pg->aux_tail, __ATOMIC_ACQUIRE));
			size_t len = it->aux_len - t->aux_done;
			uint8_t rec[32];
			struct pfmt_event_header h = {PFMT_RECORD_AUX, 0, 32};
			uint64_t b[3];

			if (len > room)
				len = (size_t)room;
			if (len > 3000) /* chunks of various sizes */
				len = 3000 - (t->aux_done % 977);
			if (!len)
				return;
			for (size_t i = 0; i < len; i++)
				t->aux[(head + i) & (t->asize - 1)] =
					it->aux[t->aux_done + i];
			b[0] = head;
			b[1] = len;
			b[2] = 0;
			memcpy(rec, &h, 8);
			memcpy(rec + 8, b, 24);
			/* the AUX record, then aux_head (perf_aux_output_end) */
			if (!put_rec(t, rec, 32, it->pid, it->tid, it->time))
				return;
			__atomic_store_n(&pg->aux_head, head + len,
					 __ATOMIC_RELEASE);
			t->aux_done += len;
			if (t->aux_done == it->aux_len) {
				t->aux_done = 0;
				t->next++;
			}
		}
	}
}

static int f_poll(void *arg, struct pollfd *p, unsigned long n, int timeout)
{
	(void)arg, (void)timeout;
	for (int i = 0; i < nT; i++)
		if (T[i].base && T[i].aux)
			produce(&T[i]);
	for (unsigned long i = 0; i < n; i++) {
		int is_pt;
		struct fthread *t = by_fd(p[i].fd, &is_pt);

		p[i].revents = POLLIN;
		if (t && t->exited && t->next == t->n)
			p[i].revents |= POLLHUP;
	}
	return (int)n;
}

static const struct strace_live_sys fake = {
	NULL, f_open, f_map, f_unmap, f_ioctl, f_close, f_poll,
};

/* ---------------- reading the input ---------------- */

static uint32_t route_tid(const struct strace_perf_rec *r, uint32_t *pid)
{
	const uint32_t *b = r->body;

	switch (r->type) {
	case PFMT_RECORD_FORK:
		*pid = b[0];
		return b[3]; /* the parent thread's ring */
	case PFMT_RECORD_EXIT:
		*pid = b[0];
		return b[2];
	default: /* MMAP2, COMM, ITRACE_START: pid, tid first */
		*pid = b[0];
		return b[1];
	}
}

int main(int argc, char **argv)
{
	struct strace_perf in;
	struct strace_perf_rec r;
	struct strace_live_opts o = {0};
	struct strace_live *l;
	struct strace_live_stats st;
	char err[256], terms[256], procfs[] = "/tmp/live_replay.XXXXXX",
					    path[512];
	uint64_t off, cfg;
	uint32_t pid = 0, first_tid = 0;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: live_replay IN.data OUT.data [AUX_BYTES]\n");
		return 2;
	}
	rc = strace_perf_open(argv[1], &in, &off);
	if (rc < 0 || in.pt_attr < 0) {
		fprintf(stderr, "live_replay: %s: %s\n", argv[1],
			strace_strerror(rc));
		return 1;
	}
	in_sample_type = in.attrs[in.pt_attr].attr.sample_type;
	while ((rc = strace_perf_next(&in, &r)) == 1) {
		struct fthread *t;
		struct item *it;
		uint32_t rpid = 0, tid;

		if (r.type == PFMT_RECORD_AUXTRACE) {
			const struct pfmt_auxtrace *a = r.body;

			t = thr(a->tid, 1);
			it = push(t);
			it->is_aux = 1;
			it->aux = r.aux_data;
			it->aux_len = (size_t)r.aux_size;
			it->pid = pid;
			it->tid = a->tid;
			it->time = r.sid.time;
			continue;
		}
		if (r.type != PFMT_RECORD_MMAP2 && r.type != PFMT_RECORD_COMM &&
		    r.type != PFMT_RECORD_FORK && r.type != PFMT_RECORD_EXIT &&
		    r.type != PFMT_RECORD_ITRACE_START)
			continue;
		tid = route_tid(&r, &rpid);
		if (!pid)
			pid = rpid;
		if (!first_tid)
			first_tid = tid;
		t = thr(tid, 1);
		it = push(t);
		it->size = r.size - strace_sb_sid_size(in_sample_type);
		if (it->size > sizeof(it->rec))
			return 1;
		memcpy(it->rec, (const uint8_t *)r.body - 8, it->size);
		it->pid = r.sid.pid;
		it->tid = r.sid.tid;
		it->time = r.sid.time;
	}
	/* AUXTRACE items carry the time of the thread's last record before. */
	for (int i = 0; i < nT; i++)
		for (size_t k = 0; k < T[i].n; k++)
			if (T[i].items[k].is_aux) {
				T[i].items[k].pid = pid;
				T[i].items[k].time = k ? T[i].items[k - 1].time : 0;
			}

	/* The session's event: the same PT config as the recording. */
	cfg = in.pt_config;
	snprintf(terms, sizeof(terms),
		 "intel_pt/tsc=%d,mtc=%d,mtc_period=%d,cyc=%d,noretcomp=%d,"
		 "psb_period=%d,branch=%d/u",
		 (int)(cfg >> 10 & 1), (int)(cfg >> 9 & 1),
		 (int)(cfg >> 14 & 15), (int)(cfg >> 1 & 1),
		 (int)(cfg >> 11 & 1), (int)(cfg >> 24 & 15),
		 (int)(cfg >> 13 & 1));

	/* A procfs where the recorded process exists with its first thread. */
	if (!mkdtemp(procfs))
		return 1;
	snprintf(path, sizeof(path), "mkdir -p %s/%u/task/%u %s/sys/kernel",
		 procfs, pid, first_tid, procfs);
	if (system(path) != 0)
		return 1;

	o.sysfs_root = "tests/live/sysfs";
	o.procfs_root = procfs;
	o.event = terms;
	o.aux_bytes = argc > 3 ? (size_t)strtoull(argv[3], NULL, 0) : 16384;
	o.data_bytes = 8192;
	o.sideband_time = getenv("LIVE_REPLAY_TIME") != NULL;
	o.no_stacks = 1;
	o.write_path = argv[2];
	o.sys = &fake;
	rc = strace_live_open(&o, &l, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "live_replay: %s %s\n", strace_strerror(rc),
			err);
		return 1;
	}
	/* Optionally decode live into a ring, as ptrace-capture -p does. */
	struct strace_ring *ring = NULL;
	struct strace_live_decoder *ld = NULL;
	struct strace_live_cb cb, *cbp = NULL;
	if (argc > 4) {
		struct strace_ring_opts ro = {sizeof(ro), 0, 0,
					      STRACE_RING_ARCHIVE, 0, 0};
		struct strace_time_conv tc;
		memset(&tc, 0, sizeof(tc));
		rc = strace_ring_create(argv[4], &ro, &ring);
		if (rc == 0)
			rc = strace_live_decoder_new(ring, 0, NULL, &ld);
		/* LIVE_REPLAY_CACHE: the persistent block cache's directory */
		if (rc == 0 && getenv("LIVE_REPLAY_CACHE"))
			rc = strace_live_decoder_set_cache(
				ld, getenv("LIVE_REPLAY_CACHE"));
		if (rc < 0) {
			fprintf(stderr, "live_replay: %s: %s\n", argv[4],
				strace_strerror(rc));
			return 1;
		}
		int ok = strace_live_time_conv(l, &tc) == 0;
		strace_live_decoder_set_time(ld, &tc,
					     ok && tc.cap_user_time_zero);
		strace_live_decoder_callbacks(ld, &cb);
		cbp = &cb;
	}
	rc = strace_live_attach(l, (pid_t)pid, cbp);
	for (int guard = 0; rc >= 0 && guard < 1000000; guard++) {
		int left = 0;

		rc = strace_live_poll(l, 0, cbp);
		for (int i = 0; i < nT; i++)
			left += T[i].next < T[i].n;
		if (rc >= 0 && !left)
			break;
	}
	if (rc >= 0)
		rc = strace_live_stop(l, cbp);
	if (ld) {
		int drc = strace_live_decoder_finish(ld, NULL);
		if (drc < 0)
			fprintf(stderr, "live_replay: live decoding: %s\n",
				strace_strerror(drc));
		rc = rc < 0 ? rc : drc;
		strace_ring_close(ring);
	}
	strace_live_get_stats(l, &st);
	strace_live_close(l);
	snprintf(path, sizeof(path), "rm -rf %s", procfs);
	if (system(path) != 0)
		rc = rc < 0 ? rc : -EIO;
	fprintf(stderr,
		"live_replay: %d threads in the file, %llu traced, %llu PT "
		"bytes, %llu records, %llu lost\n",
		nT, (unsigned long long)st.threads,
		(unsigned long long)st.aux_bytes,
		(unsigned long long)st.records,
		(unsigned long long)st.lost_records);
	for (int i = 0; i < nT; i++)
		if (T[i].next < T[i].n) {
			fprintf(stderr, "live_replay: thread %u not replayed "
					"completely\n", T[i].tid);
			rc = -EIO;
		}
	strace_perf_close(&in);
	if (rc < 0) {
		fprintf(stderr, "live_replay: %s\n", strace_strerror(rc));
		return 1;
	}
	return 0;
}
