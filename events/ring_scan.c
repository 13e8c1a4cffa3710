/* SPDX-License-Identifier: MIT */
/*
 * events/ring_scan.c - finding rings: the default directory, inspecting a
 * file without trusting it, the directory scan, and removing stale
 * rings (docs/design.md, "Stale rings").
 * See events/ring_internal.h for the protocol.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "ring_internal.h"
#include "strace/internal/grow.h"

int strace_ring_default_dir(char *buf, size_t len)
{
	const char *env = getenv("STRACE_RING");
	const char *d = "/dev/shm";
	size_t n = 8;

	if (env && *env) {
		const char *slash = strrchr(env, '/');
		if (!slash) {
			d = ".";
			n = 1;
		} else if (slash == env) {
			d = "/";
			n = 1;
		} else {
			d = env;
			n = (size_t)(slash - env);
		}
	}
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, d, n);
	buf[n] = '\0';
	return (int)n;
}

/* The last component of $STRACE_RING, or NULL when it is not set. */
static const char *env_ring_name(void)
{
	const char *env = getenv("STRACE_RING");
	const char *slash;

	if (!env || !*env)
		return NULL;
	slash = strrchr(env, '/');
	return slash ? slash + 1 : env;
}

/* Named as strace_ring_default_path() names rings: strace_<pid>_<id>.srb,
 * or the name $STRACE_RING gives. */
static int default_named(const char *name)
{
	const char *env = env_ring_name();
	size_t n = strlen(name);
	const char *p = name + 7;

	if (env && *env && strcmp(name, env) == 0)
		return 1;
	if (n < 7 + 1 + 1 + 1 + 4 || strncmp(name, "strace_", 7) != 0 ||
	    strcmp(name + n - 4, ".srb") != 0 || *p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == '_' && p + 1 < name + n - 4;
}

/* Whether the directory at dirfd (or path, dirfd AT_FDCWD) is the default
 * directory: the same file, however it is spelled. */
static int is_default_dir(int dirfd, const char *path)
{
	char def[PATH_MAX];
	struct stat a, b;

	if (strace_ring_default_dir(def, sizeof(def)) < 0 ||
	    stat(def, &a) < 0 || fstatat(dirfd, path, &b, 0) < 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Why a ring of this format is kept, STRACE_RING_KEEP_NONE when it is
 * stale (docs/design.md, "Stale rings"). st was filled by ring_hdr_stat() from
 * the same header, which judged the writers and readers; the creator and
 * the lock's holder are judged by the same (pid, start time) rule.
 * check_lock: 0 when the caller holds the lock itself.
 */
static int ring_keep(struct ring_hdr *h, uint32_t uid,
		     const struct strace_ring_stat *st, uint32_t rpid,
		     int check_lock, uint32_t *pids)
{
	uint64_t creator = h->creator_pid;
	uint64_t lock = atomic_load(&h->lock);

	if (uid != (uint32_t)geteuid())
		return STRACE_RING_KEEP_OWNER;
	if (st->writers_live)
		return STRACE_RING_KEEP_WRITER;
	memset(pids, 0, STRACE_RING_ENTRY_PIDS * sizeof(*pids));
	if (st->readers_live) {
		pids[0] = rpid;
		return STRACE_RING_KEEP_READER;
	}
	if (creator < (1u << LOCK_PID_BITS) &&
	    ring_proc_alive((uint32_t)creator, h->creator_starttime)) {
		pids[0] = (uint32_t)creator;
		return STRACE_RING_KEEP_CREATOR;
	}
	if (check_lock && lock && ring_owner_alive(lock)) {
		pids[0] = (uint32_t)(lock & ((1u << LOCK_PID_BITS) - 1));
		return STRACE_RING_KEEP_LOCKED;
	}
	return STRACE_RING_KEEP_NONE;
}

/*
 * Classify the file name at dirfd without following a symlink, blocking
 * on a FIFO, mapping a page or trusting a header field: lstat first, open
 * only a regular file, read the header into a private copy and check it
 * as strace_ring_open() does. Returns 0, or -errno of the lstat().
 */
static int inspect_at(int dirfd, const char *name,
		      struct strace_ring_entry *e)
{
	struct ring_hdr *h;
	struct stat st;
	struct statfs sfs;
	ssize_t n;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	e->keep = STRACE_RING_KEEP_KIND;
	e->kind = STRACE_RING_KIND_SPECIAL;
	e->file_mode = (uint32_t)st.st_mode;
	e->uid = (uint32_t)st.st_uid;
	e->size = (uint64_t)st.st_size;
	e->mem_bytes = (uint64_t)st.st_blocks * 512;
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e->kind = errno == ELOOP ? STRACE_RING_KIND_SPECIAL
					 : STRACE_RING_KIND_UNREADABLE;
		e->err = -errno;
		return 0;
	}
	/* What was opened is what counts (the name may have been replaced
	 * since the lstat). */
	if (fstat(fd, &st) < 0) {
		e->kind = STRACE_RING_KIND_UNREADABLE;
		e->err = -errno;
		close(fd);
		return 0;
	}
	e->file_mode = (uint32_t)st.st_mode;
	e->uid = (uint32_t)st.st_uid;
	e->size = (uint64_t)st.st_size;
	e->mem_bytes = (uint64_t)st.st_blocks * 512;
	if (fstatfs(fd, &sfs) == 0)
		e->in_memory = (unsigned long)sfs.f_type == TMPFS_MAGIC ||
			       (unsigned long)sfs.f_type == RAMFS_MAGIC;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		e->kind = STRACE_RING_KIND_UNREADABLE;
		e->err = -ENOMEM;
		close(fd);
		return 0;
	}
	n = pread(fd, h, sizeof(*h), 0);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc < 0) {
		e->kind = STRACE_RING_KIND_UNREADABLE;
		e->err = rc;
	} else if (n < (ssize_t)sizeof(h->magic) ||
		   memcmp(h->magic, STRACE_RING_MAGIC, 8) != 0) {
		e->kind = STRACE_RING_KIND_FOREIGN;
	} else if (n >= (ssize_t)(offsetof(struct ring_hdr, version) +
				  sizeof(h->version)) &&
		   h->version != STRACE_RING_VERSION) {
		e->kind = STRACE_RING_KIND_VERSION;
		e->stat.version = h->version;
	} else if ((rc = ring_validate(h, (uint64_t)st.st_size)) < 0) {
		e->kind = STRACE_RING_KIND_DAMAGED;
		e->err = rc;
	} else {
		uint32_t rpid = 0;
		e->kind = STRACE_RING_KIND_RING;
                ring_hdr_stat(
                    h, (int)h->mode,
                    atomic_load_explicit(&h->capacity, memory_order_relaxed),
                    h->strings_size, h->events_offset, &e->stat, e->pids,
                    &rpid);
                e->keep = ring_keep(h, e->uid, &e->stat, rpid, 1, e->pids);
	}
	free(h);
	return 0;
}

int strace_ring_inspect(const char *path, struct strace_ring_entry *e)
{
	const char *slash = strrchr(path, '/');
	int rc;

	memset(e, 0, sizeof(*e));
	e->path = path;
	e->name = slash ? slash + 1 : path;
	rc = inspect_at(AT_FDCWD, path, e);
	if (rc < 0)
		return rc;
	if (default_named(e->name)) {
		if (!slash) {
			e->default_name = is_default_dir(AT_FDCWD, ".");
		} else {
			size_t n = slash == path ? 1 : (size_t)(slash - path);
			char *d = strndup(path, n);
			e->default_name = d && is_default_dir(AT_FDCWD, d);
			free(d);
		}
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int strace_ring_scan(const char *dir,
		     int (*fn)(void *arg, const struct strace_ring_entry *e),
		     void *arg)
{
	char def[PATH_MAX];
	char **names = NULL, *path = NULL;
	size_t n = 0, cap = 0, dlen;
	struct dirent *de;
	int rc = 0, count = 0, only_default = !dir, in_default;
	int fd;
	DIR *ds;

	if (!dir) {
		rc = strace_ring_default_dir(def, sizeof(def));
		if (rc < 0)
			return rc;
		dir = def;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ds = fdopendir(fd);
	if (!ds) {
		rc = -errno;
		close(fd);
		return rc;
	}
	in_default = only_default || is_default_dir(fd, ".");
	rc = 0;
	for (;;) {
		errno = 0;
		de = readdir(ds);
		if (!de) {
			if (errno)
				rc = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (only_default && !default_named(de->d_name))
			continue;
		if (n == cap) {
			char **nn = strace_grow(names, &cap, sizeof(*nn), 64);
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	if (!rc && n)
		qsort(names, n, sizeof(*names), cmp_names);
	dlen = strlen(dir);
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	for (size_t i = 0; !rc && i < n; i++) {
		struct strace_ring_entry e;
		size_t len = dlen + 1 + strlen(names[i]) + 1;
		char *p = realloc(path, len);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		path = p;
		snprintf(path, len, "%.*s%s%s", (int)dlen, dir,
			 dir[dlen - 1] == '/' ? "" : "/", names[i]);
		memset(&e, 0, sizeof(e));
		e.path = path;
		e.name = path + len - 1 - strlen(names[i]);
		if (inspect_at(dirfd(ds), names[i], &e) < 0)
			continue; /* gone since readdir */
		e.default_name = in_default && default_named(names[i]);
		count++;
		rc = fn(arg, &e);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(path);
	closedir(ds);
	return rc < 0 ? rc : count;
}

int strace_ring_remove_stale(const char *path, struct strace_ring_entry *e)
{
	struct strace_ring *r;
	struct stat fs, ls;
	uint32_t rpid = 0;
	int rc;

	rc = strace_ring_inspect(path, e);
	if (rc < 0 || e->keep != STRACE_RING_KEEP_NONE)
		return rc;
	/* Read-write, to take the lock (O_NOFOLLOW, O_NONBLOCK, a regular
	 * file whose header holds, as the scan found it). */
	rc = strace_ring_open(path, &r);
	if (rc < 0) /* a format error now: it changed since it was judged */
		return rc < -STRACE_E_BASE ? -EAGAIN : rc;
	if (fstat(r->fd, &fs) < 0) {
		rc = -errno;
		goto out;
	}
	if (lstat(path, &ls) < 0) {
		rc = -errno;
		goto out;
	}
	if (ls.st_dev != fs.st_dev || ls.st_ino != fs.st_ino) {
		rc = -EAGAIN; /* replaced since it was opened */
		goto out;
	}
	rc = ring_lock(r->h);
	if (rc < 0)
		goto out;
        /* Under the lock no writer or reader registers: judge again, from
         * the live header, as the scan did from its copy. */
        ring_hdr_stat(r->h, r->mode, r->cap, r->strings_size, r->events_offset,
                      &e->stat, e->pids, &rpid);
        e->keep = ring_keep(r->h, (uint32_t)fs.st_uid, &e->stat, rpid, 0,
			    e->pids);
	if (e->keep != STRACE_RING_KEEP_NONE) {
		ring_unlock(r->h);
		rc = 0;
		goto out;
	}
	/* Marked before the unlink: a process that opened the file before
	 * and takes the lock after us finds it removed. */
	atomic_store(&r->h->removed, 1);
	if (fstat(r->fd, &fs) == 0)
		e->mem_bytes = (uint64_t)fs.st_blocks * 512;
	if (lstat(path, &ls) < 0 || ls.st_dev != fs.st_dev ||
	    ls.st_ino != fs.st_ino)
		rc = -EAGAIN;
	else if (unlink(path) < 0)
		rc = -errno;
	else
		rc = 1;
	if (rc < 0)
		atomic_store(&r->h->removed, 0); /* still there: usable */
	ring_unlock(r->h);
out:
	strace_ring_close(r);
	return rc;
}
