/* SPDX-License-Identifier: MIT */
/* pt_backend/perf/tar.c - ustar archives: writer and safe extraction
 * (perf.h, tar.h). */
#include "tar.h" /* and perf.h */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "strace/error.h"
#include "strace/internal/grow.h"
#include "perf_write.h" /* strace_perf_pwrite_all() */

#define BLOCK STRACE_TAR_BLOCK
#define RECORD (20 * BLOCK) /* tar's default blocking factor */

/* The ustar header's fields: offset and width. */
enum {
	H_NAME = 0, H_NAME_W = 100,
	H_MODE = 100, H_MODE_W = 8,
	H_UID = 108, H_GID = 116, H_ID_W = 8,
	H_SIZE = 124, H_SIZE_W = 12,
	H_MTIME = 136, H_MTIME_W = 12,
	H_CHKSUM = 148, H_CHKSUM_W = 8,
	H_TYPE = 156,
	H_LINK = 157,
	H_MAGIC = 257,
	H_VERSION = 263,
	H_UNAME = 265, H_GNAME = 297,
	H_PREFIX = 345, H_PREFIX_W = 155,
};

/*
 * A member name both sides accept: relative, components neither empty
 * nor '.' nor '..', printable bytes (UTF-8 passes). Returns 0 or
 * -STRACE_E_TAR_NAME.
 */
static int name_safe(const char *name)
{
	const char *p = name;

	if (!*p || *p == '/')
		return -STRACE_E_TAR_NAME;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (!n || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return -STRACE_E_TAR_NAME;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
				return -STRACE_E_TAR_NAME;
		if (!e)
			break;
		p = e + 1;
		if (!*p)
			return -STRACE_E_TAR_NAME; /* a trailing '/' */
	}
	return 0;
}

static unsigned checksum(const uint8_t *h)
{
	unsigned sum = 0;

	for (int i = 0; i < BLOCK; i++)
		sum += i >= H_CHKSUM && i < H_CHKSUM + H_CHKSUM_W ? ' ' : h[i];
	return sum;
}

/* The same, each byte as a signed char: what some old tars wrote. */
static int checksum_signed(const uint8_t *h)
{
	int sum = 0;

	for (int i = 0; i < BLOCK; i++)
		sum += i >= H_CHKSUM && i < H_CHKSUM + H_CHKSUM_W
			       ? ' '
			       : (int)(signed char)h[i];
	return sum;
}

/* ------------------------------------------------------------- writer */

struct strace_tarw {
	int fd;
	uint64_t pos;
};

int strace_tarw_open(struct strace_tarw **out, const char *path)
{
	struct strace_tarw *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int err = -errno;
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

/* An octal number field of width w (w - 1 digits and a NUL); a value too
 * big for them in GNU tar's base-256 form (only sizes get that big). */
static void put_num(uint8_t *f, size_t w, uint64_t v)
{
	if (w - 1 < 22 && v >> (3 * (w - 1))) {
		memset(f, 0, w);
		f[0] = 0x80;
		for (size_t i = w; i-- > 1 && v; v >>= 8)
			f[i] = (uint8_t)v;
		return;
	}
	for (size_t i = w - 1; i-- > 0; v >>= 3)
		f[i] = (uint8_t)('0' + (v & 7));
	f[w - 1] = 0;
}

/* name into the header's name and prefix fields; dirs get a trailing '/'.
 * Returns 0, -EINVAL, -ENAMETOOLONG. */
static int put_name(uint8_t *h, const char *name, int dir)
{
	size_t n = strlen(name), k;

	if (name_safe(name) < 0)
		return -EINVAL;
	if (n + (size_t)dir <= H_NAME_W) {
		memcpy(h + H_NAME, name, n);
		if (dir)
			h[H_NAME + n] = '/';
		return 0;
	}
	/* prefix '/' name: the last '/' that leaves both parts short enough */
	for (k = n; k-- > 0;) {
		if (name[k] != '/')
			continue;
		if (n - k - 1 + (size_t)dir > H_NAME_W)
			break; /* the rest is too long for the name field */
		if (k <= H_PREFIX_W) {
			memcpy(h + H_PREFIX, name, k);
			memcpy(h + H_NAME, name + k + 1, n - k - 1);
			if (dir)
				h[H_NAME + n - k - 1] = '/';
			return 0;
		}
	}
	return -ENAMETOOLONG;
}

static int header(struct strace_tarw *w, const char *name, char type,
		  unsigned mode, uint64_t size, int64_t mtime)
{
	uint8_t h[BLOCK];
	int err;

	memset(h, 0, sizeof(h));
	if ((err = put_name(h, name, type == '5')) < 0)
		return err;
	put_num(h + H_MODE, H_MODE_W, mode & 07777);
	put_num(h + H_UID, H_ID_W, 0);
	put_num(h + H_GID, H_ID_W, 0);
	put_num(h + H_SIZE, H_SIZE_W, size);
	put_num(h + H_MTIME, H_MTIME_W, mtime > 0 ? (uint64_t)mtime : 0);
	h[H_TYPE] = (uint8_t)type;
	memcpy(h + H_MAGIC, "ustar", 6);
	memcpy(h + H_VERSION, "00", 2);
	memcpy(h + H_UNAME, "root", 4);
	memcpy(h + H_GNAME, "root", 4);
	/* checksum: six octal digits, NUL, space */
	snprintf((char *)h + H_CHKSUM, H_CHKSUM_W, "%06o", checksum(h));
	h[H_CHKSUM + 7] = ' ';
	return strace_perf_pwrite_all(w->fd, h, sizeof(h), &w->pos);
}

static int pad(struct strace_tarw *w, uint64_t size)
{
	static const uint8_t zero[BLOCK];
	size_t n = (size_t)(-size & (BLOCK - 1));

	return n ? strace_perf_pwrite_all(w->fd, zero, n, &w->pos) : 0;
}

int strace_tarw_dir(struct strace_tarw *w, const char *name, int64_t mtime)
{
	return header(w, name, '5', 0755, 0, mtime);
}

int strace_tarw_bytes(struct strace_tarw *w, const char *name,
		      const void *buf, size_t len, int64_t mtime)
{
	uint64_t at = w->pos;
	int err = header(w, name, '0', 0644, len, mtime);

	if (!err)
		err = strace_perf_pwrite_all(w->fd, buf, len, &w->pos);
	if (!err)
		err = pad(w, len);
	if (err)
		w->pos = at; /* (the next member overwrites what was written) */
	return err;
}

int strace_tarw_file(struct strace_tarw *w, const char *name,
		     const char *src, uint64_t *size)
{
	uint8_t *buf;
	uint64_t at = w->pos, left;
	struct stat st;
	int fd, err;

	if (stat(src, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENODEV;
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err = S_ISREG(st.st_mode) ? -errno : -ENODEV;
		close(fd);
		return err;
	}
	buf = malloc(1 << 16);
	err = buf ? header(w, name, '0', st.st_mode & 0755,
			   (uint64_t)st.st_size, (int64_t)st.st_mtime)
		  : -ENOMEM;
	for (left = (uint64_t)st.st_size; !err && left;) {
		ssize_t n = read(fd, buf, left < (1 << 16) ? (size_t)left : (1 << 16));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -ESTALE;
			break;
		}
		err = strace_perf_pwrite_all(w->fd, buf, (size_t)n, &w->pos);
		left -= (uint64_t)n;
	}
	close(fd);
	free(buf);
	if (!err)
		err = pad(w, (uint64_t)st.st_size);
	if (err) {
		w->pos = at;
		(void)!ftruncate(w->fd, (off_t)at);
		return err;
	}
	if (size)
		*size = (uint64_t)st.st_size;
	return 0;
}

uint64_t strace_tarw_size(const struct strace_tarw *w)
{
	return w->pos;
}

int strace_tarw_close(struct strace_tarw *w)
{
	static const uint8_t zero[RECORD];
	uint64_t end = (w->pos + 2 * BLOCK + RECORD - 1) / RECORD * RECORD;
	int err;

	err = strace_perf_pwrite_all(w->fd, zero, (size_t)(end - w->pos), &w->pos);
	if (!err && ftruncate(w->fd, (off_t)w->pos) < 0)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	free(w);
	return err;
}

void strace_tarw_free(struct strace_tarw *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w);
}

/* ------------------------------------------------------------- reader */

static int has_magic(const uint8_t *h)
{
	return !memcmp(h + H_MAGIC, "ustar\0" "00", 8) ||
	       !memcmp(h + H_MAGIC, "ustar  \0", 8);
}

/*
 * A number field: octal digits after optional spaces, ended by NUL, a
 * space or the field's end; or GNU's base-256 (first byte 0x80). Returns
 * 0 and *v, or -STRACE_E_TAR_FIELD.
 */
static int get_num(const uint8_t *f, size_t w, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (f[0] == 0x80) {
		for (i = 1; i < w; i++) {
			if (*v >> 55)
				return -STRACE_E_TAR_FIELD;
			*v = *v << 8 | f[i];
		}
		return *v >> 63 ? -STRACE_E_TAR_FIELD : 0;
	}
	while (i < w && f[i] == ' ')
		i++;
	if (i == w || f[i] < '0' || f[i] > '7')
		return -STRACE_E_TAR_FIELD;
	for (; i < w && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v >> 60)
			return -STRACE_E_TAR_FIELD;
		*v = *v << 3 | (uint64_t)(f[i] - '0');
	}
	if (i < w && f[i] != 0 && f[i] != ' ')
		return -STRACE_E_TAR_FIELD;
	return 0;
}

static int checksum_ok(const uint8_t *h)
{
	uint64_t want;

	if (get_num(h + H_CHKSUM, H_CHKSUM_W, &want) < 0)
		return 0;
	return want == checksum(h) || (int64_t)want == checksum_signed(h);
}

int strace_tar_probe(const void *head, size_t len)
{
	return len >= BLOCK && has_magic(head) && checksum_ok(head);
}

/* The member's name: prefix '/' name (POSIX ustar; GNU tar's old format
 * keeps other fields where the prefix is), into out (at least
 * STRACE_TAR_NAME_MAX bytes). */
static void get_name(const uint8_t *h, char *out)
{
	size_t n = 0, k;

	k = strnlen((const char *)h + H_PREFIX, H_PREFIX_W);
	if (k && !memcmp(h + H_MAGIC, "ustar\0", 6)) {
		memcpy(out, h + H_PREFIX, k);
		out[k] = '/';
		n = k + 1;
	}
	k = strnlen((const char *)h + H_NAME, H_NAME_W);
	memcpy(out + n, h + H_NAME, k);
	out[n + k] = 0;
}

/* A name as a message may show it: bytes that are not printable as '?'. */
static void show_name(const char *name, char *out, size_t max)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < max; i++)
		out[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f
				 ? '?'
				 : name[i];
	out[i] = 0;
}

static int made_add(struct strace_tar_made *m, const char *dir,
		    const char *rel, size_t rlen, int is_dir)
{
	size_t dl = strlen(dir);
	char *p;

	if (!m)
		return 0;
	if (m->n == m->cap) {
		/* two arrays, one count: each grows from the same cap, which
		 * moves once both have */
		size_t pc = m->cap, dc = m->cap;
		char **np = strace_grow(m->path, &pc, sizeof(*np), 64);

		if (!np)
			return -ENOMEM;
		m->path = np;
		unsigned char *nd = strace_grow(m->is_dir, &dc, 1, 64);
		if (!nd)
			return -ENOMEM;
		m->is_dir = nd;
		m->cap = pc;
	}
	p = malloc(dl + 1 + rlen + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, rel, rlen);
	p[dl + 1 + rlen] = 0;
	m->path[m->n] = p;
	m->is_dir[m->n++] = (unsigned char)is_dir;
	return 0;
}

/*
 * The directory that holds the member name (components all but the
 * last, each opened with O_NOFOLLOW, made when missing): its fd into
 * *out. Returns 0, -STRACE_E_TAR_DUP (a file where a directory must
 * be), -errno.
 */
static int open_parent(int root, const char *dir, const char *name,
		       struct strace_tar_made *made, int *out)
{
	int fd = dup(root), err = 0;
	const char *p = name;

	if (fd < 0)
		return -errno;
	for (const char *e; (e = strchr(p, '/'));) {
		char comp[STRACE_TAR_NAME_MAX];
		size_t n = (size_t)(e - p);
		int next;

		memcpy(comp, p, n);
		comp[n] = 0;
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(fd, comp, 0755) < 0) {
				err = -errno;
				break;
			}
			if ((err = made_add(made, dir, name,
					    (size_t)(e - name), 1)) < 0)
				break;
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY |
							O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			err = errno == ENOTDIR || errno == ELOOP
				      ? -STRACE_E_TAR_DUP
				      : -errno;
			break;
		}
		close(fd);
		fd = next;
		p = e + 1;
	}
	if (err) {
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* Read exactly len bytes at *pos; 0, -STRACE_E_TAR_TRUNCATED at the end
 * of the file, -errno. */
static int read_at(int fd, void *buf, size_t len, uint64_t *pos)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)*pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -STRACE_E_TAR_TRUNCATED;
		p += n;
		len -= (size_t)n;
		*pos += (uint64_t)n;
	}
	return 0;
}

/* The member's bytes (size of them at *pos, in the archive fd) into the
 * file out. */
static int copy_out(int fd, uint64_t *pos, uint64_t size, int out)
{
	static _Thread_local uint8_t buf[1 << 16];
	uint64_t wpos = 0;
	int err;

	while (size) {
		size_t n = size < sizeof(buf) ? (size_t)size : sizeof(buf);

		if ((err = read_at(fd, buf, n, pos)) < 0)
			return err;
		if ((err = strace_perf_pwrite_all(out, buf, n, &wpos)) < 0)
			return err;
		size -= n;
	}
	return 0;
}

static int is_zero(const uint8_t *b)
{
	for (int i = 0; i < BLOCK; i++)
		if (b[i])
			return 0;
	return 1;
}

/* One member whose header h is at *pos (just read) into root. */
static int extract_one(int fd, const uint8_t *h, uint64_t *pos,
		       uint64_t file_size, int root, const char *dir,
		       struct strace_tar_made *made, struct strace_tar_fault *f)
{
	char name[STRACE_TAR_NAME_MAX];
	uint64_t size, mode, mtime;
	char type = (char)h[H_TYPE];
	int parent = -1, out, err;
	size_t n;

	get_name(h, name);
	show_name(name, f->name, sizeof(f->name));
	f->type = type;
	if (!has_magic(h))
		return -STRACE_E_TAR_HEADER;
	if (type != '0' && type != '\0' && type != '5')
		return -STRACE_E_TAR_TYPE;
	if ((err = get_num(h + H_SIZE, H_SIZE_W, &size)) < 0 ||
	    (err = get_num(h + H_MODE, H_MODE_W, &mode)) < 0)
		return err;
	if (type == '5')
		size = 0; /* (a directory's size means nothing) */
	/* the member and its padding must be in the file before any byte
	 * of it is written */
	if (size > file_size || (size + BLOCK - 1) / BLOCK * BLOCK >
					file_size - *pos)
		return -STRACE_E_TAR_TRUNCATED;
	n = strlen(name);
	if (type == '5' && n > 1 && name[n - 1] == '/')
		name[--n] = 0;
	if ((err = name_safe(name)) < 0)
		return err;
	if ((err = open_parent(root, dir, name, made, &parent)) < 0)
		return err;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (type == '5') {
		struct stat st;

		if (mkdirat(parent, base, 0755) == 0)
			err = made_add(made, dir, name, n, 1);
		else if (errno != EEXIST)
			err = -errno;
		else if (fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			 !S_ISDIR(st.st_mode))
			err = -STRACE_E_TAR_DUP;
		close(parent);
		return err;
	}
	out = openat(parent, base,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     (mode_t)((mode & 0755) | 0600));
	err = out < 0 ? (errno == EEXIST ? -STRACE_E_TAR_DUP : -errno) : 0;
	close(parent);
	if (err)
		return err;
	err = made_add(made, dir, name, n, 0);
	if (!err)
		err = copy_out(fd, pos, size, out);
	if (!err && get_num(h + H_MTIME, H_MTIME_W, &mtime) == 0 &&
	    mtime < (1ull << 62)) {
		/* the modification time it had, as tar restores it */
		struct timespec ts[2] = {{(time_t)mtime, 0}, {(time_t)mtime, 0}};

		(void)futimens(out, ts);
	}
	if (close(out) < 0 && !err)
		err = -errno;
	*pos += -size & (BLOCK - 1);
	return err;
}

int strace_tar_extract(const char *path, const char *dir,
		       struct strace_tar_made *made,
		       struct strace_tar_fault *f)
{
	uint8_t h[BLOCK];
	uint64_t pos = 0;
	struct stat st;
	int fd, root, err = 0, members = 0;

	memset(f, 0, sizeof(*f));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err = S_ISREG(st.st_mode) ? -errno : -ENODEV;
		close(fd);
		return err;
	}
	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		f->offset = pos;
		f->name[0] = 0;
		f->type = 0;
		if ((err = read_at(fd, h, BLOCK, &pos)) < 0)
			break;
		if (is_zero(h)) {
			/* the end: a second zero block must follow */
			err = read_at(fd, h, BLOCK, &pos);
			if (!err && !is_zero(h))
				err = -STRACE_E_TAR_HEADER;
			break;
		}
		if (!checksum_ok(h)) {
			char name[STRACE_TAR_NAME_MAX];

			get_name(h, name);
			show_name(name, f->name, sizeof(f->name));
			err = -STRACE_E_TAR_HEADER;
			break;
		}
		if ((err = extract_one(fd, h, &pos, (uint64_t)st.st_size, root,
				       dir, made, f)) < 0)
			break;
		if (members < INT32_MAX)
			members++;
	}
	close(root);
	close(fd);
	return err < 0 ? err : members;
}

int strace_tar_made_remove(const struct strace_tar_made *made)
{
	int err = 0;

	for (size_t i = made->n; i-- > 0;) {
		int r = made->is_dir[i] ? rmdir(made->path[i])
					: unlink(made->path[i]);

		if (r < 0 && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}

void strace_tar_made_free(struct strace_tar_made *made)
{
	for (size_t i = 0; i < made->n; i++)
		free(made->path[i]);
	free(made->path);
	free(made->is_dir);
	memset(made, 0, sizeof(*made));
}
