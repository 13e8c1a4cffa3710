/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/live_int.h - the live session's state, shared by
 * its files (private to this folder):
 *
 *   live.c         the session: open, poll and drain, snapshots,
 *                  triggers, attach and spawn, stop and close
 *   live_thread.c  one traced thread's events and rings: open (with its
 *                  trigger probes and trace windows), enable, free
 *   live_write.c   the perf.data a session writes (-w)
 *   live_time.c    the time conversion of the session's mmap page
 *   live_access.c  what perf and ptrace settings allow
 *
 * Calls go down that list, never up.
 */
#ifndef PT_BACKEND_CAPTURE_LIVE_INT_H
#define PT_BACKEND_CAPTURE_LIVE_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "auxring.h"
#include "capture.h"
#include "pmu.h"
#include "probe.h"
#include "pt_backend/perf/perf.h"


/* Polls without AUX progress before a thread's event is enabled again. */
#define IDLE_ENABLE 256
/* A trigger probe's ring: a page of samples after the metadata page. */
#define PROBE_PAGES 2

/* One --trigger probe of a thread: its event and sample ring. */
struct lprobe {
	int fd; /* -1: not open (a breakpoint whose address is unknown) */
	void *base;
	struct strace_dring dr;
};

struct lthread {
	pid_t tid;
	int idx; /* queue number in -w output */
	int fd_pt, fd_track;
	void *base;
	size_t base_len;
	void *aux;
	size_t aux_len;
	uint64_t id_pt, id_track;
	struct strace_dring dr;
	struct strace_auxring ar;
	int need_enable; /* a TRUNCATED record disabled the event */
	uint64_t last_ahead; /* aux_head at the previous poll */
	unsigned idle_polls; /* polls since aux_head last moved */
	int gone;        /* EXIT seen or POLLHUP */
	uint64_t snap_off; /* snapshot mode: stream offset of the next chunk */
	/* -w, full trace: PT bytes not yet written, from stream offset woff */
	uint8_t *wbuf;
	size_t wlen, wcap;
	uint64_t woff;
	struct lprobe *probes; /* --trigger, l->o.ntriggers of them */
	int *fd_win;           /* --start-at/--stop-at, in fd_pt's group */
	uint64_t head_at_fire; /* aux_head when a trigger fired */
};

/* An object a -w mapping record names, for the BUILD_ID feature. */
struct wobj {
	char *path;
	uint8_t id[STRACE_BUILDID_MAX]; /* the record's (MMAP_BUILD_ID) */
	size_t n;                       /* 0: read from the file at close */
};

struct strace_live {
	struct strace_live_opts o;
	const struct strace_live_sys *sys;
	struct strace_pmu pmu;
	struct perf_event_attr pt, track;
	char filter[1024];
	size_t page, aux_bytes, data_bytes, snap_bytes;
	pid_t pid;
	int spawned, cork_fd;
	struct lthread **th;
	size_t nth, cap;
	int next_idx;
	uint8_t *snapbuf;
	volatile sig_atomic_t want_snapshot, want_stop;
	struct strace_live_stats st;
	struct strace_perfw *w;
	int wrote_info;
	uint8_t vdso_id[STRACE_BUILDID_MAX]; /* the traced vDSO's, for -w */
	size_t vdso_idlen;
	struct wobj *objs; /* -w: the objects its MMAP2 records name */
	size_t nobjs, capobjs;
	uint64_t *ids;
	size_t nids, idcap;
	/* --trigger: the uprobe PMU, or breakpoints at these run-time
	 * addresses (0: the object is not mapped yet) */
	struct strace_uprobe_pmu up;
	uint64_t *trig_rt;
	double t0;       /* when the session was opened */
	uint64_t hits;   /* counted toward trigger_count */
	int firing;      /* a trigger fired: snapshot after the tail */
	double fired_at;
	int trig_done;   /* fired, and not --trigger-next */
	char why[6144];  /* what strace_live_why() says */
};

/* A system call on perf events through the session's table (capture.h,
 * struct strace_live_sys). */
#define SYS(l, fn, ...) ((l)->sys->fn((l)->sys->arg, __VA_ARGS__))

/* ---------------- live_access.c ---------------- */

/* An int from <procfs>/rel (NULL procfs: /proc). Returns 0, -errno,
 * -EINVAL if the file holds no number. */
int strace_live_read_int(const char *procfs, const char *rel, int *v);

/* ---------------- live_write.c: the perf.data of -w ---------------- */

/*
 * The header records (attrs, AUXTRACE_INFO, TIME_CONV, ...), written once
 * the first thread t is open; then the ids, the vDSO, the mappings' objects,
 * each thread's PT (snapshot: a chunk; full trace: staged and cut at a PSB)
 * and the features at close. Each returns 0 or a negative code.
 */
int strace_livew_info(struct strace_live *l, struct lthread *t);

int strace_livew_add_id(struct strace_live *l, uint64_t id);

void strace_livew_vdso(struct strace_live *l, const void *buf, size_t len);

void strace_livew_note_mmap(struct strace_live *l,
			    const struct pfmt_event_header *rec);

int strace_livew_aux(struct strace_live *l, struct lthread *t, uint64_t off,
		     const void *p, size_t len);

int strace_livew_stage(struct strace_live *l, struct lthread *t, uint64_t off,
		       const void *p, size_t len);

int strace_livew_stage_flush(struct strace_live *l, struct lthread *t, int all);

int strace_livew_close(struct strace_live *l);

/* ---------------- live_thread.c: a traced thread ---------------- */

int strace_live_probe_open(struct strace_live *l, struct lthread *t, size_t i,
			   int enable);

void strace_live_thread_enable(struct strace_live *l, struct lthread *t);

void strace_live_thread_free(struct strace_live *l, struct lthread *t);

struct lthread *strace_live_find_thread(struct strace_live *l, pid_t tid);

int strace_live_add_thread(struct strace_live *l, pid_t tid, int enable);

#endif /* PT_BACKEND_CAPTURE_LIVE_INT_H */
