/* SPDX-License-Identifier: MIT */
/* cli/view/out.c - buffered output of the commands (out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view.h"

#define OUT_CAP (256u << 10) /* stays in L2; write(2) per 256 KiB */

/*
 * An existing file is emptied in place (O_TRUNC's work, done by
 * ftruncate once fstat said it is a regular file of ours with no other
 * name), not replaced by a temporary renamed over it: -o /dev/null and a
 * FIFO keep working, and a file that a reader has open is the one it
 * sees grow. The link itself is never followed (O_NOFOLLOW), so nothing
 * it points to is truncated.
 */
int out_create(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		      0600);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		return fd; /* a device or a FIFO: written as it is */
	else if (st.st_uid != geteuid())
		rc = -EPERM;
	else if (st.st_nlink > 1)
		rc = -EMLINK;
	else if (ftruncate(fd, 0) < 0 || fchmod(fd, 0600) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

void out_create_error(const char *prog, const char *path, int err)
{
	if (err == -ELOOP)
		fprintf(stderr,
			"%s: %s: is a symbolic link: an output is never "
			"written through one (whatever it points to would be "
			"overwritten); remove the link or choose another "
			"file\n",
			prog, path);
	else if (err == -EPERM)
		fprintf(stderr,
			"%s: %s: the file belongs to another user: it is not "
			"overwritten; remove it or choose another file\n",
			prog, path);
	else if (err == -EMLINK)
		fprintf(stderr,
			"%s: %s: the file has other names (hard links): "
			"writing it would change them too; remove it or "
			"choose another file\n",
			prog, path);
	else
		fprintf(stderr,
			"%s: %s: cannot create the output file: %s; check the "
			"directory exists and is writable\n",
			prog, path, strerror(-err));
}

int out_open(struct out *o, const char *prog, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->prog = prog;
	o->path = path ? path : "standard output";
	o->fd = 1;
	if (path) {
		o->fd = out_create(path);
		if (o->fd < 0) {
			out_create_error(prog, path, o->fd);
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
