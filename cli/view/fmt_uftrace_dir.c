/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_uftrace_dir.c - ptrace-read -f uftrace -o DIR: the directory
 * (made, or an old uftrace data directory in it cleared), its small
 * files written whole, and the string builder they are made in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strace/internal/grow.h"
#include "fmt_uftrace.h"

int uft_fail_file(struct view *v, const char *path, const char *what)
{
	fprintf(stderr, "%s: %s: %s: %s\n", PROG, path, what, strerror(errno));
	view_fail(v, -1);
	return -1;
}

int uft_fail_create(struct view *v, const char *path, int err)
{
	out_create_error(PROG, path, err);
	view_fail(v, -1);
	return -1;
}

int uft_write_all(int fd, const void *data, size_t len)
{
	const char *s = data;

	while (len) {
		ssize_t n = write(fd, s, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *uft_in_dir(struct uft *u, const char *name)
{
	snprintf(u->path, sizeof(u->path), "%s/%s", u->dir, name);
	return u->path;
}

/* A whole small file: DIR/name. */
int uft_put_file(struct view *v, struct uft *u, const char *name,
		 const void *data, size_t len)
{
	const char *path = uft_in_dir(u, name);
	int fd = out_create(path);

	if (fd < 0)
		return uft_fail_create(v, path, fd);
	if (uft_write_all(fd, data, len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return uft_fail_file(v, path, "write failed; check free space");
	}
	if (close(fd) < 0)
		return uft_fail_file(v, path, "close failed");
	return 0;
}

/* Whether name is one of the files a uftrace data directory holds. */
static int uftrace_file(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "info") || !strcmp(name, "task.txt") ||
	    !strcmp(name, "task") || !strcmp(name, "default.opts") ||
	    !strcmp(name, "events.txt") || !strcmp(name, "extern.dat"))
		return 1;
	if (n > 4 && (!strcmp(name + n - 4, ".sym") ||
		      !strcmp(name + n - 4, ".dbg") ||
		      !strcmp(name + n - 4, ".map")))
		return 1;
	return n > 4 && !strcmp(name + n - 4, ".dat");
}

/*
 * DIR ready for the files: made when missing; an empty directory is
 * used as it is; one holding a uftrace data directory (an "info" file
 * that begins with uftrace's magic) has that data removed first, as a
 * new recording replaces an old one; anything else is left alone.
 */
int uft_prepare_dir(struct view *v, struct uft *u)
{
	DIR *d;
	struct dirent *de;
	char magic[8];
	int fd, other = 0, is_uft = 0;

	struct stat st;

	/* 0700, as its files are 0600 (out_create()) */
	if (mkdir(u->dir, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return uft_fail_file(v, u->dir,
				     "cannot create the directory (-o)");
	if (lstat(u->dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return uft_fail_create(v, u->dir, -ELOOP);
	}
	d = opendir(u->dir);
	if (!d)
		return uft_fail_file(v, u->dir,
				     "not a directory that can be read (-o)");
	fd = open(uft_in_dir(u, "info"), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		is_uft = read(fd, magic, 8) == 8 && !memcmp(magic, "Ftrace!", 8);
		close(fd);
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			other = 1;
	if (other && !is_uft) {
		closedir(d);
		fprintf(stderr,
			"%s: %s: the directory is not empty and holds no uftrace "
			"data (-o): name a new or empty directory\n",
			PROG, u->dir);
		view_fail(v, -1);
		return -1;
	}
	rewinddir(d);
	while (is_uft && (de = readdir(d)) != NULL)
		if (uftrace_file(de->d_name) &&
		    unlink(uft_in_dir(u, de->d_name)) < 0 && errno != ENOENT) {
			closedir(d);
			return uft_fail_file(v, u->path,
					     "cannot remove the old file");
		}
	closedir(d);
	return 0;
}

/* --- the string builder ---------------------------------------------------- */

char *uft_sb_room(struct sb *b, size_t n)
{
	/* doubled until the n bytes fit */
	while (b->len + n > b->cap) {
		char *p = strace_grow(b->p, &b->cap, 1, 65536);
		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->p = p;
	}
	return b->p + b->len;
}

void uft_sb_add(struct sb *b, const char *s, size_t n)
{
	char *p = uft_sb_room(b, n);

	if (p) {
		memcpy(p, s, n);
		b->len += n;
	}
}

void uft_sb_str(struct sb *b, const char *s)
{
	uft_sb_add(b, s, strlen(s));
}

void uft_sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	char *p = uft_sb_room(b, 512);
	int n;

	if (!p)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p, 512, fmt, ap);
	va_end(ap);
	if (n >= 512) { /* long: again with room */
		p = uft_sb_room(b, (size_t)n + 1);
		if (!p)
			return;
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (n > 0)
		b->len += (size_t)n;
}
