/* SPDX-License-Identifier: MIT */
/* cli/view/out.c - buffered output of the commands (out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"

#define OUT_CAP (256u << 10) /* stays in L2; write(2) per 256 KiB */

int out_open(struct out *o, const char *prog, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->prog = prog;
	o->path = path ? path : "standard output";
	o->fd = 1;
	if (path) {
		o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);
		if (o->fd < 0) {
			fprintf(stderr,
				"%s: %s: cannot create the output file: %s; "
				"check the directory exists and is writable\n",
				prog, path, strerror(errno));
			return -1;
		}
	}
	o->cap = OUT_CAP + FMT_LINE_MAX;
	o->buf = malloc(o->cap);
	if (!o->buf) {
		fprintf(stderr, "%s: out of memory for the output buffer\n",
			prog);
		return -1;
	}
	o->p = o->buf;
	o->limit = o->buf + OUT_CAP;
	return 0;
}

int out_write(struct out *o, const void *data, size_t len)
{
	const char *s = data;

	while (len && !o->failed) {
		ssize_t n = write(o->fd, s, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr,
				"%s: %s: write failed: %s; check free space "
				"and that the reader of the output is still "
				"running\n",
				o->prog, o->path, strerror(errno));
			o->failed = 1;
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return o->failed ? -1 : 0;
}

int out_flush(struct out *o)
{
	size_t len = (size_t)(o->p - o->buf);

	o->p = o->buf;
	return len ? out_write(o, o->buf, len) : 0;
}

int out_close(struct out *o)
{
	int rc = out_flush(o);

	if (o->fd > 2 && close(o->fd) < 0 && !o->failed) {
		fprintf(stderr, "%s: %s: close failed: %s\n", o->prog, o->path,
			strerror(errno));
		rc = -1;
	}
	free(o->buf);
	o->buf = NULL;
	return rc;
}
