/* SPDX-License-Identifier: MIT */
/*
 * cli/control.h - a control FIFO, as perf's --control takes it:
 * "fifo:CTL[,ACK]" or a plain FIFO path. Commands are lines; each gets
 * "ack\n" on the ACK FIFO when it worked (after any reply lines), or
 * "err MESSAGE\n" when it did not. A line too long or holding a NUL is
 * dropped whole and answered by an err; a stream without line ends is
 * given up (cli/control_lines.h).
 */
#ifndef CLI_CONTROL_H
#define CLI_CONTROL_H

#include <stddef.h>

#include "control_lines.h"

/* Bytes one control_poll() reads at most: a writer that never pauses
 * cannot keep the caller from its other work (its signals, its events). */
#define CONTROL_POLL_MAX ((size_t)64 << 10)

struct control {
	int open; /* 0: never opened (a zeroed struct), or closed */
	int fd, ack;
	const char *prog; /* who warns on stderr */
	const char *spec; /* the --control argument, for the warnings */
	struct control_lines lines;
};

/*
 * control_open() - open spec's FIFOs (non-blocking, kept open while
 * writers come and go); prog and spec must stay valid while it is open.
 * Returns 0.
 * Returns -1 if a path is not a FIFO, cannot be opened or is too long;
 * err (len bytes) says which, naming the path (c->open is 0 then).
 */
int control_open(struct control *c, const char *spec, const char *prog,
		 char *err, size_t len);

/*
 * control_poll() - run each complete line read so far (at most
 * CONTROL_POLL_MAX bytes this call) through fn(arg, line, reply, len),
 * which returns 0 when the command worked and may put reply lines (or
 * the error) into reply; answer on the ACK FIFO. A dropped line is
 * answered by an err there (on stderr without an ACK FIFO); a stream
 * given up is said on stderr, and the control closed.
 * Returns the number of commands run.
 */
int control_poll(struct control *c,
		 int (*fn)(void *arg, const char *line, char *reply,
			   size_t len),
		 void *arg);

/* control_close() - close the FIFOs (a control never opened is fine). */
void control_close(struct control *c);

#endif /* CLI_CONTROL_H */
