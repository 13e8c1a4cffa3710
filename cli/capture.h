/* SPDX-License-Identifier: MIT */
/*
 * cli/capture.h - ptrace-capture's own header: the options as parsed
 * (ptrace-capture.c), the ring every runner writes and what is said
 * about it (capture_ring.c), and the three runners, one file each:
 *
 *   capture_offline.c   -i perf.data|BUNDLE.tar  (strace_offline_decode)
 *   capture_raw.c       --pt FILE                (strace_raw_decode)
 *   capture_run_live.c  -p PID, -- CMD           (capture_live_run)
 *
 * ptrace-capture.c parses, checks the options against each other and
 * dispatches; a runner decodes into the ring and says how it went.
 * Each returns the command's exit status (ptrace-capture.c's top
 * comment).
 */
#ifndef CLI_CAPTURE_H
#define CLI_CAPTURE_H

#include <limits.h>
#include <stdint.h>

#include "cli/capture_live.h"
#include "cli/view/view.h"
#include "pt_backend/pipeline/pipeline.h"
#include "strace/ring.h"

#define PROG "ptrace-capture"

/* What the command line asked for (ptrace-capture.c fills it). */
struct capture_opts {
	const char *input, *output, *types_arg; /* -i, -o, --types */
	const char *vdso, *archive, *symfs;     /* --vdso, --archive, --symfs */
	const char *pt, *cpu_arg;               /* --pt, --cpu as given */
	const char *view_path;                  /* --view FILE; NULL: none */
	const char *buildid_dir; /* perf's build-id cache (-i, -w) */
	int mode;                /* --mode; -1: not given */
	int jobs, quiet, wait_readers, names, no_ring, no_cache;
	int coverage;            /* --coverage (-i only) */
	int live;                /* -p PID (without --pt) or -- CMD */
	unsigned flags;          /* STRACE_WALK_* */
	long pid;                /* -p */
	uint32_t tid;            /* --tid */
	uint64_t capacity, piece;
	/* --raw/--elf: as many as given (a page dump of a kAFL or Nyx
	 * recording has hundreds of runs of pages), held to the exit */
	struct strace_raw_section *secs;
	size_t nsecs, secs_cap;
	struct strace_pt_cpu cpu;
	struct strace_typeset types; /* --types, parsed */
	const char *plugin_specs[32]; /* --plugin */
	int nplugins;
	struct capture_live_opts live_opts;
	int argc;                /* the command line (the ring's info) */
	char **argv;
	char **cmd;              /* -- CMD: argv + optind; NULL with -p */
	int has_cmd;             /* words after the options */
};

/* The decoders' warnings and progress line (-i, --pt). */
struct capture_ui {
	int tty, quiet, shown;
	double t0, last; /* start; the last progress line */
	unsigned warnings;
	struct strace_ring *ring; /* its events counted in the progress line */
};

/* Seconds on CLOCK_MONOTONIC. */
double capture_now(void);

/* capture_ui_init() - a UI on stderr for ring, started now. */
void capture_ui_init(struct capture_ui *ui, int quiet,
		     struct strace_ring *ring);

/* The decoders' warn and progress callbacks; arg is a struct capture_ui. */
void capture_on_warn(void *arg, const char *msg);
void capture_on_progress(void *arg, uint64_t done, uint64_t total);

/*
 * capture_ring_open() - the ring o asks for, with its plugins loaded, its
 * path said where it should be, and its readers waited for (or held
 * for) as --wait-readers asks. view_ring (PATH_MAX bytes) gets the
 * ring's path with --view. Returns 0 and *out, or the exit status after
 * a message.
 */
int capture_ring_open(const struct capture_opts *o, char *view_ring,
		      struct strace_ring **out);

/* capture_ring_close() - every plugin's fini runs while the ring (their
 * names) is still mapped, then the ring is closed. */
void capture_ring_close(struct strace_ring *ring);

/* capture_ring_drop() - remove the ring's file (a ring left incomplete
 * or empty), then close it as capture_ring_close(). */
void capture_ring_drop(struct strace_ring *ring);

/* The summary's last line: where the ring is and what it holds (not with
 * --view: the view is what is kept). */
void capture_say_ring(const struct capture_opts *o,
		      const struct strace_ring *ring);

/* The persistent cache's directory (docs/cache.md); NULL with
 * --no-cache. */
const char *capture_cache_dir(const struct capture_opts *o);

/* A cache that could not be written costs the next decode its time:
 * said. */
void capture_cache_warn(const struct strace_objcache_stats *st,
			const char *dir);

/* The exit status of a decode that ended: CAPTURE_EXIT_PARTIAL, said
 * (unless quiet), when it lost code; else 0. */
int capture_partial(int quiet, unsigned long long errors,
		    unsigned long long missing);

/* The live session is open: a plugin asking to stop ends it
 * (strace_live_request_stop()). */
void capture_plugins_live(struct strace_live *l);

/* The runners: each decodes into ring (which it closes) and returns the
 * exit status. */
int capture_offline(struct capture_opts *o, struct strace_ring *ring);
int capture_raw(const struct capture_opts *o, struct strace_ring *ring);
int capture_run_live(struct capture_opts *o, struct strace_ring *ring);

/*
 * capture_pipe_input() - -i -, a FIFO, or a file in perf's pipe mode:
 * copied into a perf.data file under $TMPDIR, which *input then names.
 * Returns 0 (also for a perf.data file, left as it is), or the exit
 * status after a message.
 */
int capture_pipe_input(const char **input);

#endif /* CLI_CAPTURE_H */
