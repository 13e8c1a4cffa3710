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
#include "strace/ring.h"

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

int strace_dec_cache_write(const char *dir, const char *path,
			   const void *buf, size_t len)
{
	char tmp[4200];
	int fd, rc = make_dir(dir);
	size_t off;

	/* a file of our own, renamed over the old one: a reader sees the
	 * old file or the new, whole */
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = rc ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0600);
	if (fd < 0)
		return rc ? rc : -errno;
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
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int strace_dec_cache_map(const char *path, size_t min, size_t max,
			 void **buf, size_t *len)
{
	struct stat st;
	void *p;
	int fd;

	*buf = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
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
