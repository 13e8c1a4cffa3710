/* SPDX-License-Identifier: MIT */
/*
 * decoder/cachefile.c - what the decoder's persistent cache files share
 * (cachefile.h): the checksum, the atomic write, the mapped read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/cachefile.h"
#include "decoder/decoder.h"

/* A 64-bit hash of the bytes (not cryptographic: it finds damage, not
 * forgery; a forged file is still bounded, see parse): four lanes of 8
 * bytes, each word added and multiplied by an odd constant (a bijection of
 * the lane: a changed word always changes the lane), so that their
 * multiplications overlap; folded into one at the end with mix(). */
static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

#define LANE(h, w) ((h) = ((h) + (w)) * 0xff51afd7ed558ccdull)

uint64_t strace_dec_cache_checksum(const uint8_t *p, size_t len,
				   size_t skip_off)
{
	const size_t skip = skip_off / 8;
	/* four lanes in registers (the compiler's SSE2 form of the 64-bit
	 * multiplies took several times the instructions) */
	uint64_t h0 = len, h1 = ~(uint64_t)len, h2 = len << 1, h3 = len >> 1;
	uint64_t w[4];
	size_t i = 0;

	if (len >= 32) {
		memcpy(w, p, 32);
		w[skip] = 0; /* the checksum's own place */
		LANE(h0, w[0]);
		LANE(h1, w[1]);
		LANE(h2, w[2]);
		LANE(h3, w[3]);
		i = 32;
	}
	for (; i + 32 <= len; i += 32) {
		uint64_t a, b, c, d;
		memcpy(&a, p + i, 8);
		memcpy(&b, p + i + 8, 8);
		memcpy(&c, p + i + 16, 8);
		memcpy(&d, p + i + 24, 8);
		LANE(h0, a);
		LANE(h1, b);
		LANE(h2, c);
		LANE(h3, d);
	}
	for (; i + 8 <= len; i += 8) {
		memcpy(w, p + i, 8);
		LANE(h0, w[0]);
	}
	w[0] = 0;
	memcpy(w, p + i, len - i);
	return mix(mix(mix(mix(h0, w[0]), h1), h2), h3);
}
/* mkdir -p of dir (0700: the cache is the user's) */
static int make_dir(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i])
			continue;
		p[i] = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		p[i] = dir[i];
	}
	return 0;
}

int strace_dec_cache_dir(const char *dir, struct stat *st)
{
	struct stat z;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (!st)
		st = &z;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	if (st->st_uid != geteuid() || (st->st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int strace_cache_dir_check(const char *dir, struct stat *st)
{
	int fd = strace_dec_cache_dir(dir, st);

	if (fd == -EPERM)
		return fd;
	if (fd >= 0)
		close(fd);
	return 0;
}

int strace_dec_cache_write(const char *dir, const char *name,
			   const void *buf, size_t len)
{
	char tmp[4200];
	int fd = -1, dfd, rc = make_dir(dir);
	size_t off;

	dfd = rc ? rc : strace_dec_cache_dir(dir, NULL);
	if (dfd < 0)
		return dfd;
	/* a file of our own, renamed over the old one: a reader sees the
	 * old file or the new, whole. Made new (O_EXCL: never a file or a
	 * link already there, which it would write through); what is at
	 * our PID's name is a dead decode's (that PID is ours now), removed
	 * (a link itself, not what it points to) for a second try */
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", name, (long)getpid());
	for (int again = 0; again < 2; again++) {
		fd = openat(dfd, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST || unlinkat(dfd, tmp, 0) < 0)
			break;
	}
	if (fd < 0) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	for (off = 0; off < len;) {
		ssize_t n = write(fd, (const uint8_t *)buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(dfd, tmp, dfd, name) < 0)
		rc = -errno;
	if (rc)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return rc;
}

int strace_dec_cache_map(const char *dir, const char *name, size_t min,
			 size_t max, void **buf, size_t *len)
{
	struct stat st;
	void *p;
	int fd, dfd;

	*buf = NULL;
	dfd = strace_dec_cache_dir(dir, NULL);
	if (dfd < 0)
		return dfd == -EPERM ? -ENOENT : dfd;
	/* a link is not followed (the file is made again: the rename
	 * replaces the link, not what it points to) */
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	close(dfd);
	if (fd < 0)
		return errno == ELOOP ? -STRACE_E_BADARG : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)min || (uint64_t)st.st_size > max) {
		close(fd);
		return -STRACE_E_BADARG;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return errno == ENOMEM ? -ENOMEM : -STRACE_E_BADARG;
	*buf = p;
	*len = (size_t)st.st_size;
	return 0;
}
