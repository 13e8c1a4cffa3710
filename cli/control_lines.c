/* SPDX-License-Identifier: MIT */
/*
 * cli/control_lines.c - a control FIFO's bytes cut into command lines
 * (cli/control_lines.h).
 *
 * A line is judged whole: the bytes of a line too long for the buffer
 * are dropped up to its newline (keeping its tail would run the tail as
 * a command), and a NUL marks its whole line bad (the string functions
 * of the layers above would stop there, and see another command).
 */
#include <string.h>

#include "control_lines.h"

int control_lines_feed(struct control_lines *cl, const char *data, size_t n,
		       void (*fn)(void *arg, const char *line,
				  enum control_line_kind kind),
		       void *arg)
{
	if (cl->unended > CONTROL_UNENDED_MAX)
		return -1;
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t seg = nl ? (size_t)(nl - data) : n;

		if (seg > CONTROL_UNENDED_MAX - cl->unended) {
			cl->unended = CONTROL_UNENDED_MAX + 1;
			return -1;
		}
		cl->unended += seg;
		if (memchr(data, '\0', seg))
			cl->bad = CONTROL_LINE_NUL;
		else if (!cl->bad && seg > CONTROL_LINE_MAX - 1 - cl->len)
			cl->bad = CONTROL_LINE_LONG;
		if (!cl->bad) {
			memcpy(cl->buf + cl->len, data, seg);
			cl->len += seg;
		}
		if (!nl)
			return 0;
		cl->buf[cl->len] = '\0';
		if (cl->bad)
			fn(arg, "", (enum control_line_kind)cl->bad);
		else if (cl->len)
			fn(arg, cl->buf, CONTROL_LINE_OK);
		cl->len = 0;
		cl->unended = 0;
		cl->bad = CONTROL_LINE_OK;
		data = nl + 1;
		n -= seg + 1;
	}
	return 0;
}
