/* SPDX-License-Identifier: MIT */
/*
 * cli/out.h - buffered output of the commands: lines are built in place
 * (o->p, with FMT_LINE_MAX bytes of room past o->limit) and written out in
 * big chunks. Messages about failures go to stderr, naming prog and the
 * file.
 */
#ifndef CLI_OUT_H
#define CLI_OUT_H

#include <stddef.h>

struct out {
	int fd;
	const char *prog;
	const char *path; /* for messages */
	char *buf, *p, *limit;
	size_t cap;
	int failed;
};

/* out_open() - path (NULL: standard output). Returns 0, or -1 after a
 * message. */
int out_open(struct out *o, const char *prog, const char *path);

/* out_write() - data, unbuffered (after what is buffered: flush first). */
int out_write(struct out *o, const void *data, size_t len);

/* out_flush() - write what is buffered. Returns 0 or -1. */
int out_flush(struct out *o);

/* out_room() - flush when the buffer passed its limit. Returns 0 or -1. */
static inline int out_room(struct out *o)
{
	return o->p > o->limit ? out_flush(o) : 0;
}

/* out_close() - flush, close a file, free. Returns 0 or -1. */
int out_close(struct out *o);

#endif /* CLI_OUT_H */
