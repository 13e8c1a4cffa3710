/* SPDX-License-Identifier: MIT */
/*
 * cli/control.h - a control FIFO, as perf's --control takes it:
 * "fifo:CTL[,ACK]" or a plain FIFO path. Commands are lines; each gets
 * "ack\n" on the ACK FIFO when it worked (after any reply lines), or
 * "err MESSAGE\n" when it did not.
 */
#ifndef CLI_CONTROL_H
#define CLI_CONTROL_H

#include <stddef.h>

struct control {
	int open; /* 0: never opened (a zeroed struct) */
	int fd, ack;
	size_t len;     /* bytes of an unfinished line in buf */
	char buf[1024];
};

/* control_open() - open spec's FIFOs (non-blocking, kept open while
 * writers come and go). Returns 0, or -errno (c->fd < 0 then). */
int control_open(struct control *c, const char *spec);

/*
 * control_poll() - run each complete line read so far through
 * fn(arg, line, reply, len), which returns 0 when the command worked and
 * may put reply lines (or the error) into reply; answer on the ACK FIFO.
 * Returns the number of commands run.
 */
int control_poll(struct control *c,
		 int (*fn)(void *arg, const char *line, char *reply,
			   size_t len),
		 void *arg);

/* control_close() - close the FIFOs (a control never opened is fine). */
void control_close(struct control *c);

#endif /* CLI_CONTROL_H */
