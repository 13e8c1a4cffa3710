/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/live_run.h - a live capture from open to close: the
 * session over pt_backend/capture (strace_live_*), attached to a process
 * or starting a command, polled until it ends, its data into the
 * callbacks (strace_live_decoder_callbacks(), live_decode.h).
 *
 * The command keeps what belongs to it through the hooks: its messages
 * (failed), its control FIFO and signals (opened, turn, ended), its
 * summary (ended).
 */
#ifndef PT_BACKEND_PIPELINE_LIVE_RUN_H
#define PT_BACKEND_PIPELINE_LIVE_RUN_H

#include <sys/types.h>

#include "pt_backend/capture/capture.h"

struct strace_live_hooks {
	/* The session is open, before any data. Returns 0 to go on, or an
	 * exit status: the session closes and strace_live_capture() returns
	 * it (ended is not called). NULL: go on. */
	int (*opened)(void *arg, struct strace_live *l);
	/* Each turn of the poll loop, before the stop request is read.
	 * Returns nonzero to end the capture (e.g. its duration is over). */
	int (*turn)(void *arg, struct strace_live *l);
	/* A failure (code < 0, pid, detail or NULL): says it, and returns
	 * the exit status (nonzero). */
	int (*failed)(void *arg, int code, pid_t pid, const char *detail);
	/* The end of an open session that went on after opened, with its
	 * counts, before it closes. NULL: none. */
	void (*ended)(void *arg, const struct strace_live_stats *st);
	void *arg;
};

/*
 * strace_live_capture() - trace pid (> 0) or the command argv (pid 0)
 * with the options lo until the process ends, a stop request
 * (strace_live_request_stop()), turn's end or a failure; everything
 * captured goes to cb. A command it started keeps running (it is reaped
 * if it has ended). Returns 0 or the exit status from failed or opened.
 */
int strace_live_capture(const struct strace_live_opts *lo, pid_t pid,
			char **argv, const struct strace_live_cb *cb,
			const struct strace_live_hooks *h);

#endif /* PT_BACKEND_PIPELINE_LIVE_RUN_H */
