/* SPDX-License-Identifier: MIT */
/*
 * cli/control_lines.h - a control FIFO's bytes cut into command lines,
 * with no I/O (the layer below cli/control.c, and the entry of a fuzz
 * target): a line too long for a command, or holding a NUL, is dropped
 * whole and said once; a stream that brings no line end for
 * CONTROL_UNENDED_MAX bytes is no stream of commands.
 */
#ifndef CLI_CONTROL_LINES_H
#define CLI_CONTROL_LINES_H

#include <stddef.h>

/* A command's bytes, without its newline: at most CONTROL_LINE_MAX - 1. */
#define CONTROL_LINE_MAX 1024
/* Bytes without a newline after which the stream is given up (1 MiB:
 * a thousand times the longest command). */
#define CONTROL_UNENDED_MAX ((size_t)1 << 20)

/* What a line is, as control_lines_feed() hands it over. */
enum control_line_kind {
	CONTROL_LINE_OK,   /* a command: the line, without its newline */
	CONTROL_LINE_LONG, /* over CONTROL_LINE_MAX - 1 bytes: dropped */
	CONTROL_LINE_NUL,  /* holds a NUL byte: dropped (NUL wins over LONG) */
};

/* The state between two calls: zero it to begin (a zeroed struct). */
struct control_lines {
	size_t len;      /* bytes of the unfinished line in buf */
	size_t unended;  /* bytes since the last newline */
	int bad;         /* the unfinished line's enum control_line_kind */
	char buf[CONTROL_LINE_MAX];
};

/*
 * control_lines_feed() - take n bytes of the stream (any cut: a line may
 * come in pieces over many calls, and the lines handed over do not
 * depend on where the cuts fall) and hand each line its newline ended
 * to fn(arg, line, kind): for CONTROL_LINE_OK the line without its
 * newline, NUL-terminated, valid during the call; for the others "" (the
 * dropped bytes are nobody's business). Empty lines are skipped.
 * Returns 0.
 * Returns -1 if the bytes since the last newline are more than
 * CONTROL_UNENDED_MAX (the lines before were handed over): give the
 * stream up; later calls return -1 at once.
 */
int control_lines_feed(struct control_lines *cl, const char *data, size_t n,
		       void (*fn)(void *arg, const char *line,
				  enum control_line_kind kind),
		       void *arg);

#endif /* CLI_CONTROL_LINES_H */
