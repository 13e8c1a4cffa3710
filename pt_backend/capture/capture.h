/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/capture.h - live capture of a process with Intel PT through
 * perf_event_open, one event and AUX area per thread.
 *
 * A session: strace_live_open() (finds the PMU, builds the attrs), then
 * strace_live_attach() (a running process: every thread, its vDSO and its
 * stacks) or strace_live_spawn() + strace_live_go() (a command, traced
 * from its exec), then strace_live_poll() in a loop (and
 * strace_live_snapshot() on demand in snapshot mode), then
 * strace_live_stop() and strace_live_close(). The traced process keeps
 * running when the session ends.
 *
 * Per thread the session opens, like `perf record --per-thread`:
 *  - the intel_pt event (attr from pmu.h), its data ring (1 + 2^n pages)
 *    and its AUX area (read-write: full trace; read-only: snapshot);
 *  - a dummy tracking event (MMAP2, COMM, FORK, EXIT, ...) whose records
 *    go to the same data ring (PERF_EVENT_IOC_SET_OUTPUT).
 * Threads created later are seen as FORK records of their creator and get
 * their events then (the few instructions in between are not traced).
 *
 * What the session hands to its callbacks, per thread (tid):
 *  - sideband: every record of the data ring, raw and parsed (MMAP2,
 *    COMM, FORK, EXIT, ITRACE_START, AUX with its TRUNCATED, PARTIAL,
 *    COLLISION, OVERWRITE flags, LOST, SWITCH), in ring order;
 *  - aux: the PT bytes, in order, with their offset in that thread's AUX
 *    stream (full trace: kernel positions, contiguous unless an AUX record
 *    said TRUNCATED; snapshot: each snapshot is a new chunk whose flags
 *    say if the buffer had wrapped, i.e. the chunk starts mid-stream and
 *    the decoder must sync at a PSB). For one thread, the AUX records
 *    describing bytes are delivered before those bytes;
 *  - vdso: the traced process's vDSO bytes (attach and spawn);
 *  - stack: each thread's stack at attach (strace_unwound_events() turns it
 *    into STACK_FRAME events).
 * Time: strace_live_time_conv() gives the mmap page's conversion from TSC
 * (PT's TSC/MTC/CYC packets) to perf time (sideband sample time).
 *
 * This header is the folder's API: the session, and what its callbacks
 * and the command's options hand over (records, stacks, probes). The
 * rings (auxring.h), the PMU (pmu.h), the unwinder (unwind.h), the vDSO
 * and maps (vdso.h) and breakpoint attrs (probe.h) are its internals.
 *
 * Not thread-safe: one thread drives a session; strace_live_request_*()
 * are the only calls that are async-signal-safe (they set flags that the
 * next poll acts on).
 */
#ifndef PT_BACKEND_CAPTURE_CAPTURE_H
#define PT_BACKEND_CAPTURE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <strace/error.h>
#include <strace/event.h>
#include "pt_backend/perf/perf.h" /* struct pfmt_event_header */
#include "strace/internal/perf_time.h" /* struct strace_time_conv */

struct strace_live;
struct pollfd;
struct strace_symbol; /* decoder/decoder.h */

/* ---------------- sideband records, snapshots (auxring.c) ---------------- */

/* A parsed kernel record (what the decoder needs). */
struct strace_sb {
	uint32_t type;   /* PFMT_RECORD_* */
	uint16_t misc;
	uint32_t pid, tid;       /* of the record's body (or sample_id) */
	uint32_t ppid, ptid;     /* FORK/EXIT */
	uint64_t addr, len, pgoff; /* MMAP/MMAP2 */
	uint32_t prot, flags;      /* MMAP2 */
	const char *name;          /* MMAP*: path, COMM: command (in rec) */
	uint64_t aux_offset, aux_size, aux_flags; /* AUX */
	uint64_t lost;             /* LOST: records lost */
	uint64_t id;               /* LOST: event id; else sample_id id */
	/* sample_id trailer (valid if has_sample_id) */
	int has_sample_id;
	uint32_t sid_pid, sid_tid, sid_cpu;
	uint64_t sid_time, sid_id;
};

/* Snapshot result flags. */
#define STRACE_AUX_SNAP_WRAPPED 0x1 /* the buffer has wrapped: oldest bytes lost */
#define STRACE_AUX_SNAP_TORN 0x2    /* aux_head moved while copying: the
				       producer was not stopped; the oldest
				       bytes of the copy may be newer data */

/* ---------------- stacks at attach (unwind.c) ---------------- */

#define STRACE_UNWOUND_MAX 128

/* One thread's stack; ip[0] is the innermost frame (where it stopped). */
struct strace_unwound {
	pid_t tid;
	int err; /* 0, or why this thread has no stack (negative code) */
	unsigned nframes;
	uint64_t ip[STRACE_UNWOUND_MAX];
};

/*
 * The STACK_FRAME events of a stack, outermost frame first (depth 0 =
 * innermost, as docs/events.md says), at time `time`. Returns the number
 * of events written (at most max).
 */
size_t strace_unwound_events(const struct strace_unwound *st, uint64_t time,
			     struct strace_event *ev, size_t max);

/* ---------------- probes: --trigger, --start-at, --stop-at (probe.c) --- */

/* Objects to look in, canonical paths (as the kernel's MMAP2 names them). */
struct strace_objlist {
	char **v;
	size_t n, cap;
};

/*
 * strace_objlist_pid() - the files process pid maps executable, the one
 * mapped first (its executable) first. Returns 0, -STRACE_E_NOPID, -ENOMEM.
 */
int strace_objlist_pid(struct strace_objlist *l, const char *procfs_root,
		       pid_t pid);

/*
 * strace_objlist_cmd() - the executable argv0 (PATH searched when it has no
 * '/') and the shared objects it needs. A needed object that is not found
 * is left out. Returns 0, -ENOENT (no such executable), -ENOMEM.
 */
int strace_objlist_cmd(struct strace_objlist *l, const char *argv0);

void strace_objlist_fini(struct strace_objlist *l);

/* One probed instruction. */
struct strace_probe {
	char spec[256];  /* as the user wrote it */
	char path[4096]; /* the object, canonical */
	char name[256];  /* the function; "" for an address */
	uint64_t off;    /* file offset of the instruction */
	uint64_t vaddr;  /* its address as objdump prints it */
	uint64_t size;   /* the function's bytes; 0 for an address */
	int ret;         /* at the function's return (a uretprobe) */
};

/*
 * strace_probe_resolve() - find spec in objs: "SYM[+OFF][@OBJ][:ret]" or
 * "0xADDR[@OBJ]". SYM matches a function's name as the decoder prints it
 * (STRACE_PLT_PLAIN, demangled), its name in the ELF file, or the
 * demangled name without its parameters. @OBJ (a path, or a file name
 * such as libc.so.6) picks the object; without it the first object that
 * has SYM. An address with @OBJ is OBJ's, as objdump prints it; without,
 * it is a run-time address in process pid when pid > 0 (found through
 * its maps), else an address of the executable (objs->v[0]) as objdump
 * prints it. ":ret" probes the function's return (not with +OFF).
 * err receives what went wrong and what to do (-STRACE_E_BADARG).
 * Returns 0, -STRACE_E_BADARG (bad syntax, not found, ambiguous: two
 * functions of that name in one object), -ENOMEM.
 */
int strace_probe_resolve(const char *spec, const struct strace_objlist *objs,
			 const char *procfs_root, pid_t pid,
			 struct strace_probe *out, char *err, size_t errlen);

/*
 * strace_probe_list() - the functions of objs whose names match the POSIX
 * extended regular expression re (NULL or "": all): fn(arg, obj, sym,
 * vaddr) with sym's start and size as file offset and bytes, vaddr the
 * address objdump prints; fn's non-zero return stops. Returns 0, fn's
 * value, -STRACE_E_BADARG (a bad re; err says why), -ENOMEM.
 */
typedef int (*strace_probe_list_fn)(void *arg, const char *obj,
				    const struct strace_symbol *sym,
				    uint64_t vaddr);
int strace_probe_list(const struct strace_objlist *objs, const char *re,
		      strace_probe_list_fn fn, void *arg, char *err,
		      size_t errlen);

/* The kernel's uprobe PMU: its type and the config bit of "retprobe". */
struct strace_uprobe_pmu {
	uint32_t type;
	uint64_t retprobe;
};

/*
 * strace_uprobe_pmu_load() - read <sysfs_root>/bus/event_source/devices/
 * uprobe (NULL: /sys). Returns 0, or -ENOENT when the kernel has none.
 */
int strace_uprobe_pmu_load(const char *sysfs_root, struct strace_uprobe_pmu *u);

/*
 * strace_probe_uprobe_attr() - the attr of a uprobe at p (uretprobe if
 * p->ret) that samples every hit (sample_period 1, a wakeup each); it
 * points at p->path, which must outlive perf_event_open.
 */
void strace_probe_uprobe_attr(const struct strace_uprobe_pmu *u,
			      const struct strace_probe *p,
			      struct perf_event_attr *a);

/* ---------------- the session (live.c) ---------------- */

/*
 * The system calls a session makes on perf events. NULL in the options
 * means the real ones; tests pass a fake kernel (tests/unit/
 * test_live_session.c) to run the whole session without Intel PT.
 * Each returns like the system call but with -errno instead of -1/errno
 * (mmap: NULL and *err).
 */
struct strace_live_sys {
	void *arg;
	int (*event_open)(void *arg, struct perf_event_attr *attr, pid_t pid,
			  int cpu, int group_fd, unsigned long flags);
	void *(*map)(void *arg, size_t len, int prot, int fd, off_t off,
		     int *err);
	int (*unmap)(void *arg, void *p, size_t len);
	int (*ioctl)(void *arg, int fd, unsigned long req, unsigned long val);
	int (*close)(void *arg, int fd);
	int (*poll)(void *arg, struct pollfd *fds, unsigned long n,
		    int timeout_ms);
};

struct strace_live_opts {
	const char *sysfs_root;  /* NULL: /sys */
	const char *procfs_root; /* NULL: /proc */
	const char *event;       /* "intel_pt/cyc,mtc=0/u" or "cyc,mtc=0"; NULL: default */
	const char *filter;      /* perf --filter syntax; NULL: none */
	int snapshot;            /* AUX as an overwrite ring */
	size_t aux_bytes;        /* power of two; 0: perf's default */
	size_t data_bytes;       /* power of two; 0: perf's default */
	size_t snapshot_bytes;   /* bytes per snapshot; 0: the AUX size */
	int sideband_time;       /* PERF_SAMPLE_TIME|CPU on sideband (perf: no) */
	int context_switch;      /* PERF_RECORD_SWITCH records (perf: no) */
	int no_stacks;           /* skip the libunwind pass at attach */
	const char *write_path;  /* -w: also write a perf.data here */
	const char *buildid_dir; /* with -w: perf's build-id cache, where the
				  * vDSO goes (as perf record puts it) */
	/*
	 * Snapshot triggers (--trigger): in snapshot mode, a snapshot when
	 * one of these instructions runs in a traced thread: uprobes (the
	 * kernel's uprobe PMU under sysfs_root), else hardware execute
	 * breakpoints, opened per thread once a mapping of the object puts
	 * the instruction at a run-time address (no :ret probes then).
	 * The probes must live as long as the session.
	 */
	const struct strace_probe *triggers;
	size_t ntriggers;
	uint64_t trigger_count; /* the Nth hit takes the snapshot; 0: 1 */
	double trigger_after;   /* hits in the first SEC seconds do not count */
	int trigger_next;       /* after it, count again; 0: stop the session */
	size_t trigger_tail;    /* before the snapshot, wait (at most
				 * STRACE_TRIGGER_TAIL_WAIT s) until this many
				 * more bytes of trace were written */
	/*
	 * Trace windows (--start-at, --stop-at): the PT event is opened
	 * paused (aux_start_paused) with these events in its group, which
	 * resume or pause it (aux_action, Linux 6.13). The attrs (uprobes,
	 * tracepoints) are per thread copies' templates and must live as
	 * long as the session; strace_live_aux_action() says if the kernel
	 * has the fields.
	 */
	const struct strace_live_window *windows;
	size_t nwindows;
	const struct strace_live_sys *sys; /* NULL: the real system calls */
};

/* The longest --trigger-tail waits for its bytes, seconds. */
#define STRACE_TRIGGER_TAIL_WAIT 1.0

struct strace_live_window {
	struct perf_event_attr attr; /* the event; its aux_action is set */
	int resume;                  /* 1: it resumes the trace; 0: pauses */
};

struct strace_live_cb {
	void *arg;
	int (*sideband)(void *arg, pid_t tid, const struct pfmt_event_header *rec,
			const struct strace_sb *sb);
	int (*aux)(void *arg, pid_t tid, uint64_t offset, const void *p,
		   size_t len, unsigned flags /* STRACE_AUX_SNAP_* */);
	int (*vdso)(void *arg, pid_t pid, uint64_t start, const void *p,
		    size_t len);
	int (*stack)(void *arg, const struct strace_unwound *st);
};

struct strace_live_stats {
	uint64_t threads;      /* threads traced so far */
	uint64_t aux_bytes;    /* PT bytes delivered */
	uint64_t records;      /* sideband records delivered */
	uint64_t lost_records; /* sum of PERF_RECORD_LOST */
	uint64_t truncated;    /* AUX records with TRUNCATED (data lost) */
	uint64_t partial;      /* AUX records with PARTIAL */
	uint64_t collisions;   /* AUX records with COLLISION */
	uint64_t snapshots;    /* snapshots taken */
	uint64_t torn;         /* snapshots where the producer had not stopped */
	uint64_t reenabled;    /* events re-enabled after a truncation */
	uint64_t trigger_hits;   /* times a --trigger probe ran */
	uint64_t trigger_early;  /* ... of them before --trigger-after */
	uint64_t trigger_snapshots; /* snapshots the triggers took */
	uint64_t trigger_lost;   /* hits the kernel could not report (counted
				  * in trigger_hits, not in the count) */
	int trigger_bp;          /* the triggers are hardware breakpoints */
};


/*
 * Set up a session: load the PMU, parse event and filter, check the
 * permission settings that can be checked before trying.
 * errbuf receives details for -STRACE_E_BADARG.
 * Returns 0, -STRACE_E_NOPT (no intel_pt PMU), -STRACE_E_BADARG,
 * -STRACE_E_PARANOID (perf_event_paranoid > 2 and not privileged),
 * -ENOMEM.
 */
int strace_live_open(const struct strace_live_opts *o, struct strace_live **out,
		     char *errbuf, size_t errlen);

/*
 * Whether perf and ptrace settings allow tracing pid (pid 0: a child we
 * start). privileged: root or CAP_PERFMON/CAP_SYS_ADMIN. Reads
 * <procfs>/sys/kernel/perf_event_paranoid and .../yama/ptrace_scope.
 * Returns 0, -STRACE_E_NOPID, -STRACE_E_PARANOID, -STRACE_E_PTRACE_SCOPE.
 */
int strace_live_check_access(const char *procfs_root, pid_t pid,
			     int privileged);

/* Whether this process counts as privileged for perf (euid 0 or caps). */
int strace_live_privileged(void);

/*
 * strace_live_pt_present() - whether the machine has the intel_pt PMU
 * under sysfs_root (NULL: /sys), for a message that says so.
 * Returns 0, -STRACE_E_NOPT, or another code of reading the PMU.
 */
int strace_live_pt_present(const char *sysfs_root);

/*
 * Trace every thread of running process pid: events, rings, vDSO (cb->vdso),
 * stacks (cb->stack), then enable.
 * Returns 0, -STRACE_E_NOPID, -STRACE_E_PARANOID, -STRACE_E_PTRACE_SCOPE,
 * -STRACE_E_PERM, -STRACE_E_AUXMAP, -errno.
 */
int strace_live_attach(struct strace_live *l, pid_t pid,
		       const struct strace_live_cb *cb);

/*
 * Start argv[0] (PATH searched) held before exec; its events are opened
 * with enable_on_exec. strace_live_go() lets it exec. *pid: the child.
 * Returns 0 or like strace_live_attach(); on an exec failure the child
 * exits 127.
 */
int strace_live_spawn(struct strace_live *l, char *const argv[], pid_t *pid);
int strace_live_go(struct strace_live *l);

/*
 * Wait up to timeout_ms for data (poll on the events), then consume every
 * thread's rings into cb; opens events for new threads (FORK), closes
 * exited ones, re-enables an event after a truncation, takes a snapshot
 * when one was requested. Returns the number of threads still traced
 * (0: the process is gone), or a negative code.
 */
int strace_live_poll(struct strace_live *l, int timeout_ms,
		     const struct strace_live_cb *cb);

/*
 * Snapshot mode: stop each thread's event, deliver its newest AUX bytes
 * (at most snapshot_bytes) and pending sideband, restart it.
 * Returns the number of threads snapshotted or a negative code.
 */
int strace_live_snapshot(struct strace_live *l, const struct strace_live_cb *cb);

/*
 * strace_live_aux_action() - whether the kernel knows perf_event_attr's
 * aux_action (aux_start_paused, aux_pause, aux_resume; Linux 6.13): it
 * opens a software event with aux_start_paused, which such a kernel
 * refuses with EOPNOTSUPP (no AUX area there) and an older one with
 * EINVAL (a reserved bit). sys: NULL for the real system calls.
 * Returns 1 or 0.
 */
int strace_live_aux_action(const struct strace_live_sys *sys);

/*
 * strace_live_why() - what the last -STRACE_E_BADARG of attach, spawn or
 * poll was about (a trigger or window event the kernel refused), as a
 * sentence; "" if nothing. Valid until the session is closed.
 */
const char *strace_live_why(const struct strace_live *l);

/* Async-signal-safe requests (SIGUSR2, SIGINT handlers). */
void strace_live_request_snapshot(struct strace_live *l);
void strace_live_request_stop(struct strace_live *l);
int strace_live_stop_requested(const struct strace_live *l);

/*
 * Disable every event, drain what is left (and take the final snapshot in
 * snapshot mode), unmap and close. The traced threads keep running.
 * Returns 0 or the first error met while draining.
 */
int strace_live_stop(struct strace_live *l, const struct strace_live_cb *cb);

/*
 * The time conversion (strace/internal/perf_time.h): time_shift,
 * time_mult, time_zero, cap_user_time_zero/short, time_cycles, time_mask
 * from the first thread's mmap page (read under its sequence lock), the
 * TSC/CTC ratio from CPUID leaf 0x15, mtc_period from the PT config and
 * max_nonturbo_ratio from sysfs. Returns 0, -ENOENT before any thread,
 * -ERANGE if the page's time_shift is 64 or more (a broken page: *tc is
 * then all zeros, no conversion, and the perf.data the session writes
 * says so too).
 */
int strace_live_time_conv(const struct strace_live *l,
			  struct strace_time_conv *tc);
/* 1 when the session's intel_pt event has the ptw bit (intel_pt/ptw/u:
 * the hardware writes the payloads of ptwrite instructions, PTW
 * packets), else 0. */
int strace_live_has_ptw(const struct strace_live *l);
/* perf time of a TSC value (perf's tsc_to_perf_time, without the
 * cap_user_time_short wrap-around that strace_tsc_to_perf_time() adds);
 * time_zero for a time_shift of 64 or more, as that function. */
uint64_t strace_live_tsc_to_perf(const struct strace_time_conv *tc,
				 uint64_t tsc);

void strace_live_get_stats(const struct strace_live *l,
			   struct strace_live_stats *st);

/* The PT attr used (for a perf.data writer or the decoder's config). */
const struct perf_event_attr *strace_live_pt_attr(const struct strace_live *l);

/* Free the session (strace_live_stop() first to drain); NULL is fine. */
void strace_live_close(struct strace_live *l);

#endif
