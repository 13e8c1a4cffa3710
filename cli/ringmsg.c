/* SPDX-License-Identifier: MIT */
/* cli/ringmsg.c - messages about ring files that cannot be made (ringmsg.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ringmsg.h"

/* The directory part of path into buf ("." when it has none). */
static const char *dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return ".";
	if (slash == path)
		return "/";
	snprintf(buf, len, "%.*s", (int)(slash - path), path);
	return buf;
}

/* Whether dir is on tmpfs, whose files are memory */
static int on_tmpfs(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

int ringmsg_create(const char *prog, const char *path, const char *opt,
		   const struct strace_ring_opts *ro, struct strace_ring **out)
{
	char buf[PATH_MAX], dbuf[PATH_MAX], from[64];
	const char *dir;
	int rc;

	if (path) {
		snprintf(from, sizeof(from), "%s", opt);
	} else if (getenv("STRACE_RING") && *getenv("STRACE_RING")) {
		snprintf(from, sizeof(from), "from $STRACE_RING");
	} else {
		snprintf(from, sizeof(from), "the default path");
	}
	if (!path) {
		rc = strace_ring_default_path(buf, sizeof(buf));
		if (rc < 0) {
			fprintf(stderr,
				"%s: cannot make a ring path: %s: give one with "
				"%s PATH\n",
				prog, strace_strerror(rc), opt);
			return rc;
		}
		path = buf;
	}
	rc = strace_ring_create(path, ro, out);
	if (rc >= 0)
		return rc;
	dir = dir_of(path, dbuf, sizeof(dbuf));
	fprintf(stderr, "%s: cannot create the ring %s (%s): ", prog, path,
		from);
	switch (-rc) {
	case EEXIST:
		fprintf(stderr,
			"a file is there already, and a ring is never written "
			"over one: remove it, or name a new file with %s PATH%s\n",
			opt, path == buf ? " (or in $STRACE_RING)" : "");
		break;
	case ELOOP:
		fprintf(stderr,
			"it is a symbolic link, which a ring is never made "
			"through (it could point at another user's file): "
			"name a new file with %s PATH\n",
			opt);
		break;
	case ENOENT:
	case ENOTDIR: {
		struct stat st;
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			fprintf(stderr,
				"%s: files cannot be created in %s: name a ring "
				"elsewhere with %s PATH\n",
				strerror(-rc), dir, opt);
		else
			fprintf(stderr,
				"the directory %s does not exist: create it, or "
				"name a ring in an existing directory with %s "
				"PATH\n",
				dir, opt);
		break;
	}
	case EACCES:
	case EPERM:
	case EROFS:
		if (-rc == EROFS || access(dir, W_OK) < 0)
			fprintf(stderr,
				"you cannot create files in %s (%s): name a "
				"ring in a directory you can write to with %s "
				"PATH\n",
				dir, strerror(-rc), opt);
		else
			fprintf(stderr, "%s: check the path\n", strerror(-rc));
		break;
	case ENOSPC:
	case EDQUOT:
	case ENOMEM:
		fprintf(stderr,
			"%s: %s has no room for it%s: free some, or name a ring "
			"elsewhere with %s PATH\n",
			strerror(-rc), dir,
			on_tmpfs(dir) ? " (it is memory; 'ptrace-read --gc' "
					"removes stale rings)"
				      : "",
			opt);
		break;
	default:
		fprintf(stderr, "%s\n", strace_strerror(rc));
	}
	return rc;
}

void ringmsg_write_error(const char *prog, const char *path, int err,
			 const char *opt, const char *grow_hint)
{
	char dbuf[PATH_MAX];
	const char *dir = dir_of(path, dbuf, sizeof(dbuf));

	fprintf(stderr, "%s: cannot write the ring %s: %s", prog, path,
		strace_strerror(err));
	if (err == -ENOSPC || err == -EDQUOT || err == -EFBIG)
		fprintf(stderr, ": %s has no room for more%s: free some, or "
				"write the ring elsewhere with %s PATH%s\n",
			dir,
			on_tmpfs(dir) ? " (it is memory; 'ptrace-read --gc' "
					"removes stale rings)"
				      : "",
			opt, grow_hint ? grow_hint : "");
	else
		fputc('\n', stderr);
}
