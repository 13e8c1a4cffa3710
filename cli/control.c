/* SPDX-License-Identifier: MIT */
/*
 * cli/control.c - a control FIFO (cli/control.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "control.h"

int control_open(struct control *c, const char *spec)
{
	char ctl[512];
	char *comma;

	memset(c, 0, sizeof(*c));
	c->ack = -1;
	if (!strncmp(spec, "fifo:", 5))
		spec += 5;
	snprintf(ctl, sizeof(ctl), "%s", spec);
	comma = strchr(ctl, ',');
	if (comma) {
		*comma = '\0';
		c->ack = open(comma + 1, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (c->ack < 0) {
			c->fd = -1;
			return -errno;
		}
	}
	/* O_RDWR: the FIFO stays open when writers come and go. */
	c->fd = open(ctl, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0) {
		int e = errno;
		if (c->ack >= 0)
			close(c->ack);
		c->ack = -1;
		return -e;
	}
	c->open = 1;
	return 0;
}

static void answer(struct control *c, int ok, const char *reply)
{
	char out[sizeof(((struct control *)0)->buf) + 4096];
	size_t n = strlen(reply);
	int len;

	if (c->ack < 0)
		return;
	if (ok)
		len = snprintf(out, sizeof(out), "%s%sack\n", reply,
			       n && reply[n - 1] != '\n' ? "\n" : "");
	else
		len = snprintf(out, sizeof(out), "err%s%.*s\n", n ? " " : "",
			       (int)(n && reply[n - 1] == '\n' ? n - 1 : n),
			       reply);
	if (len > (int)sizeof(out) - 1)
		len = (int)sizeof(out) - 1;
	/* the ACK FIFO is the user's: a reader that went away loses it */
	if (write(c->ack, out, (size_t)len) < 0)
		return;
}

int control_poll(struct control *c,
		 int (*fn)(void *arg, const char *line, char *reply,
			   size_t len),
		 void *arg)
{
	int done = 0;
	ssize_t n;

	if (!c->open)
		return 0;
	while ((n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len)) >
	       0) {
		char *line = c->buf, *nl;

		c->len += (size_t)n;
		c->buf[c->len] = '\0';
		while ((nl = strchr(line, '\n'))) {
			char reply[4096] = "";

			*nl = '\0';
			if (*line) {
				answer(c, fn(arg, line, reply, sizeof(reply)) == 0,
				       reply);
				done++;
			}
			line = nl + 1;
		}
		c->len = (size_t)(c->buf + c->len - line);
		memmove(c->buf, line, c->len);
		if (c->len == sizeof(c->buf) - 1)
			c->len = 0; /* a line longer than the buffer: dropped */
	}
	return done;
}

void control_close(struct control *c)
{
	if (!c->open)
		return;
	close(c->fd);
	if (c->ack >= 0)
		close(c->ack);
	c->open = 0;
}
