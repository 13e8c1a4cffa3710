/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/live_run.c - see pipeline.h. */
#include "pipeline.h"

#include <signal.h>
#include <sys/wait.h>

/* Poll until the process ends, a stop, turn's end or a failure; then
 * stop the session. Returns 0 or an exit status. */
static int live_loop(struct strace_live *l, pid_t pid, pid_t *child,
		     const struct strace_live_cb *cb,
		     const struct strace_live_hooks *h)
{
	int rc, status = 0;

	for (;;) {
		int n;

		if (h->turn(h->arg, l) || strace_live_stop_requested(l))
			break;
		n = strace_live_poll(l, 100, cb);
		if (n < 0) {
			status = h->failed(h->arg, n, pid, strace_live_why(l));
			break;
		}
		if (*child > 0) {
			int ws;

			if (waitpid(*child, &ws, WNOHANG) == *child) {
				*child = 0; /* the command ended */
				break;
			}
		} else if (!n || kill(pid, 0) < 0) {
			break; /* every thread of the process is gone */
		}
	}
	rc = strace_live_stop(l, cb);
	if (rc < 0 && !status)
		status = h->failed(h->arg, rc, pid, NULL);
	return status;
}

int strace_live_capture(const struct strace_live_opts *lo, pid_t pid,
			char **argv, const struct strace_live_cb *cb,
			const struct strace_live_hooks *h)
{
	struct strace_live *l = NULL;
	struct strace_live_stats st;
	char detail[512] = "";
	pid_t child = 0;
	int rc, status;

	rc = strace_live_open(lo, &l, detail, sizeof(detail));
	if (rc < 0)
		return h->failed(h->arg, rc, pid, detail);
	if (h->opened && (status = h->opened(h->arg, l))) {
		strace_live_close(l);
		return status;
	}
	if (pid > 0) {
		rc = strace_live_attach(l, pid, cb);
	} else {
		rc = strace_live_spawn(l, argv, &child);
		if (!rc)
			rc = strace_live_go(l);
		pid = child;
	}
	if (rc < 0)
		status = h->failed(h->arg, rc, pid, strace_live_why(l));
	else
		status = live_loop(l, pid, &child, cb, h);
	strace_live_get_stats(l, &st);
	if (h->ended)
		h->ended(h->arg, &st);
	strace_live_close(l);
	if (child > 0) {
		/* A command we started keeps running; reap it when it ends. */
		waitpid(child, NULL, WNOHANG);
	}
	return status;
}
