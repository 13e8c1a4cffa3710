/* SPDX-License-Identifier: MIT */
/*
 * cli/capture_live.h - the live-capture part of ptrace-capture: its
 * options, its error messages, its probes and its run: the session and
 * poll loop are pt_backend/pipeline/pipeline.h's strace_live_capture(),
 * the command's control FIFO, signals and messages its hooks.
 *
 * ptrace-capture appends capture_live_longopts to its getopt_long table,
 * passes each option whose val is >= CAPTURE_LIVE_OPT_BASE (and 'w') to
 * capture_live_option(), and for -p PID or -- CMD calls
 * capture_live_run() with callbacks that feed the decoder.
 */
#ifndef CLI_CAPTURE_LIVE_H
#define CLI_CAPTURE_LIVE_H

#include <getopt.h>
#include <stdio.h>
#include <sys/types.h>

#include "pt_backend/capture/capture.h"

#define CAPTURE_LIVE_OPT_BASE 0x4c00
#define CAPTURE_LIVE_PROBES 16

/* ptrace-capture's exit status when tracing cannot run here: no Intel
 * PT, or no permission (perf_event_paranoid, ptrace_scope, ownership,
 * the locked-memory limit). 2 is a usage error. */
#define CAPTURE_EXIT_NOTRACE 4
/* ptrace-capture's exit status when the decode lost code: decode errors,
 * or mappings whose code could not be read (the ring has error events
 * where; the summary counts them). */
#define CAPTURE_EXIT_PARTIAL 3

struct capture_live_opts {
	struct strace_live_opts lo; /* passed to strace_live_open() */
	char terms[512];            /* event terms built from the options */
	const char *event;          /* --event as given */
	const char *control;        /* --control FIFO or fifo:CTL[,ACK] */
	double duration;            /* --duration SECONDS; 0: until the end */
	int quiet;
	/* --trigger, --start-at, --stop-at as given (up to CAPTURE_LIVE_PROBES
	 * each), --start-event/--stop-event (tracepoints) and --list-symbols */
	const char *trigger[CAPTURE_LIVE_PROBES], *start_at[CAPTURE_LIVE_PROBES],
		*stop_at[CAPTURE_LIVE_PROBES];
	const char *start_event[CAPTURE_LIVE_PROBES],
		*stop_event[CAPTURE_LIVE_PROBES];
	size_t ntrigger, nstart_at, nstop_at, nstart_event, nstop_event;
	const char *list_symbols;
	/* Called once the session is open (before any data), e.g. to read
	 * its time conversion; NULL: not called. */
	void (*opened)(void *arg, struct strace_live *l);
	void *opened_arg;
};

/* Zero-terminated; vals CAPTURE_LIVE_OPT_BASE + n. -w is 'w' (short). */
extern const struct option capture_live_longopts[];

/* Set the defaults (everything off, real /sys and /proc). */
void capture_live_init(struct capture_live_opts *o);

/*
 * Handle one option from getopt_long (val, optarg). Returns 1 if it was
 * a live option, 0 if not, -1 for a bad argument (message on err).
 */
int capture_live_option(struct capture_live_opts *o, int val,
			const char *arg, FILE *err);

/* The live options' help text. */
void capture_live_usage(FILE *f);

/*
 * Print the message for a live-capture error code, naming what to do
 * (sysctl for perf_event_paranoid and ptrace_scope, how to record with
 * perf elsewhere and decode with -i when there is no Intel PT).
 * procfs_root: NULL for /proc (where the sysctl values are read).
 * Returns the exit status to use: CAPTURE_EXIT_NOTRACE for "cannot trace
 * here" (no Intel PT, no permission), 2 for bad options, 1 otherwise
 * (no such process, a failure while tracing).
 */
int capture_live_error(FILE *err, int code, pid_t pid, const char *detail,
		       const char *procfs_root);

/*
 * --list-symbols: print the functions of pid (> 0) or of the command argv
 * and the shared objects it loads whose names match the option's regular
 * expression, one per line: address (as objdump prints it), size, name,
 * object. Needs no Intel PT. Returns the exit status.
 */
int capture_live_list(const struct capture_live_opts *o, pid_t pid,
		      char **argv, FILE *out, FILE *err);

/*
 * Trace pid (> 0) or argv (a command, pid 0) until the process ends,
 * Ctrl-C/SIGTERM, `stop` on the control FIFO or the duration; snapshots
 * on SIGUSR2, `snapshot` on the control FIFO and at the end (with
 * --snapshot). Everything captured goes to cb (and to -w's perf.data);
 * the counts are printed on err unless quiet, and returned in *stats
 * (may be NULL). The traced process keeps running.
 * Returns the exit status (0 ok; see capture_live_error()).
 */
int capture_live_run(struct capture_live_opts *o, pid_t pid, char **argv,
		     const struct strace_live_cb *cb,
		     struct strace_live_stats *stats, FILE *err);

#endif
