/* SPDX-License-Identifier: MIT */
/*
 * cli/control.c - a control FIFO (cli/control.h): its I/O; the lines
 * are cli/control_lines.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"

/* path opened O_RDWR|O_NONBLOCK if it is a FIFO: checked before the open
 * (opening a device may do something) and on what was opened, which must
 * be the user's and writable by nobody else (whoever writes a control
 * FIFO loads plugins: runs code in this process). Returns the
 * descriptor, or -1 with err said. */
static int open_fifo(const char *path, char *err, size_t len)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && !S_ISFIFO(st.st_mode)) {
		snprintf(err, len,
			 "%s: not a FIFO (%s): create one with mkfifo and give "
			 "its path",
			 path, S_ISREG(st.st_mode)   ? "a regular file"
			       : S_ISCHR(st.st_mode) ? "a character device"
			       : S_ISDIR(st.st_mode) ? "a directory"
						     : "not a FIFO");
		return -1;
	}
	/* O_RDWR: the FIFO stays open when writers come and go. */
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, len,
			 "%s: cannot open it: %s (create the FIFO with mkfifo "
			 "first)",
			 path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		snprintf(err, len,
			 "%s: not a FIFO (it changed while it was opened): "
			 "create one with mkfifo and give its path",
			 path);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, len,
			 "%s: %s, and whoever writes it loads plugins into "
			 "this process: create your own with mkfifo -m 600",
			 path,
			 st.st_uid != geteuid() ? "another user's FIFO"
						: "others may write into it");
		close(fd);
		return -1;
	}
	return fd;
}

int control_open(struct control *c, const char *spec, const char *prog,
		 char *err, size_t len)
{
	char ctl[PATH_MAX];
	char *comma;
	int w;

	memset(c, 0, sizeof(*c));
	c->fd = c->ack = -1;
	c->prog = prog;
	c->spec = spec;
	if (!strncmp(spec, "fifo:", 5))
		spec += 5;
	w = snprintf(ctl, sizeof(ctl), "%s", spec);
	if (w < 0 || (size_t)w >= sizeof(ctl)) {
		snprintf(err, len, "%.64s...: the path is too long", spec);
		return -1;
	}
	comma = strchr(ctl, ',');
	if (comma) {
		*comma = '\0';
		c->ack = open_fifo(comma + 1, err, len);
		if (c->ack < 0)
			return -1;
	}
	c->fd = open_fifo(ctl, err, len);
	if (c->fd < 0) {
		if (c->ack >= 0)
			close(c->ack);
		c->ack = -1;
		return -1;
	}
	c->open = 1;
	return 0;
}

static void answer(struct control *c, int ok, const char *reply)
{
	char out[CONTROL_LINE_MAX + 4096];
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

/* One control_poll(): the command's handler, and how many ran. */
struct poll_run {
	struct control *c;
	int (*fn)(void *arg, const char *line, char *reply, size_t len);
	void *arg;
	int done;
};

static void on_line(void *arg, const char *line, enum control_line_kind kind)
{
	struct poll_run *r = arg;
	char reply[4096] = "";

	if (kind == CONTROL_LINE_OK) {
		answer(r->c, r->fn(r->arg, line, reply, sizeof(reply)) == 0,
		       reply);
		r->done++;
		return;
	}
	if (kind == CONTROL_LINE_LONG)
		snprintf(reply, sizeof(reply),
			 "a line longer than %d bytes: dropped whole, not run "
			 "(a command is one line)",
			 CONTROL_LINE_MAX - 1);
	else
		snprintf(reply, sizeof(reply),
			 "a line with a NUL byte: dropped whole, not run "
			 "(commands are lines of text)");
	if (r->c->ack >= 0)
		answer(r->c, 0, reply);
	else
		fprintf(stderr, "%s: --control %s: %s\n", r->c->prog,
			r->c->spec, reply);
}

int control_poll(struct control *c,
		 int (*fn)(void *arg, const char *line, char *reply,
			   size_t len),
		 void *arg)
{
	struct poll_run r = {c, fn, arg, 0};
	char chunk[4096];
	size_t left = CONTROL_POLL_MAX;
	ssize_t n;

	while (c->open && left &&
	       (n = read(c->fd, chunk,
			 left < sizeof(chunk) ? left : sizeof(chunk))) > 0) {
		left -= (size_t)n;
		if (control_lines_feed(&c->lines, chunk, (size_t)n, on_line,
				       &r) < 0) {
			fprintf(stderr,
				"%s: --control %s: more than %zu bytes without "
				"a line end: not a stream of commands; the "
				"control FIFO is closed (the rest goes on "
				"without it)\n",
				c->prog, c->spec, CONTROL_UNENDED_MAX);
			control_close(c);
		}
	}
	return r.done;
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
