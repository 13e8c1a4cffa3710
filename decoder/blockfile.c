/* SPDX-License-Identifier: MIT */
/*
 * decoder/blockfile.c - the persistent block and symbol cache's files
 * (decoder/decoder.h, docs/cache.md): DIR/BUILDID.blocks, one per ELF
 * object and symbol options, written after a decode and read by the next.
 *
 * A file is: a header (what it was made from: the object's build-id, size
 * and mtime, the symbol options, the debug file its symbols came from; the counts; a checksum of everything
 * else), then the block summaries as image_block.c keeps them, the
 * symbols, the perf 6.1 lookup points and a pool of NUL-terminated names,
 * each section 8-byte aligned. Native byte order: the file never leaves
 * the machine.
 * Nothing in it is trusted: a file that does not match the object, fails
 * its checksum or breaks any bound is not used (the caller decodes as if
 * there were none and writes a good one).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decoder/blockfile.h"
#include "decoder/cachefile.h"
#include "decoder/internal.h"

#define BC_MAGIC "STRBLKS\n"
/* 5: a block's key carries its code mode (strace_mode_key()): 32- and
 * 16-bit blocks are kept beside 64-bit ones; 6: JMPABS, ERETS, ERETU and
 * UIRET are branches (files of either 5 were made while both changes were
 * under way) */
#define BC_VERSION 8 /* 7: the debug file in the key; 8: a LOCK Jcc is bad */
#define BC_MAX_BYTES (256u << 20)
/* a temporary file older than this is a killed decode's, whatever its
 * PID (which another process may have by now) */
#define BC_TMP_STALE_SECONDS 3600

struct bc_header {
	char magic[8];
	uint32_t version, header_size;
	uint64_t checksum; /* of the file with this field zero */
	uint32_t idn, symopts;
	uint8_t id[STRACE_BLOCKFILE_ID_MAX];
	uint64_t size, mtime_sec, mtime_nsec;
	uint64_t nblocks, nsyms, niv, pool_len;
	uint32_t flags, pad;
	uint64_t debug_path_hash, debug_size, debug_mtime_sec,
		debug_mtime_nsec;
};
#define BC_HAS_SYMS 1u
_Static_assert(sizeof(struct bc_header) == 192, "docs/cache.md gives 192");
_Static_assert(sizeof(struct strace_blockfile_block) == 48 &&
		       sizeof(struct strace_blockfile_sym) == 40 &&
		       sizeof(struct strace_blockfile_point) == 16,
	       "docs/cache.md gives the records' sizes");

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static uint64_t checksum(const uint8_t *p, size_t len)
{
	return strace_dec_cache_checksum(p, len,
					 offsetof(struct bc_header, checksum));
}

size_t strace_blockfile_path(char *buf, size_t max, const char *dir,
			     const struct strace_blockfile_key *key)
{
	char hex[2 * STRACE_BLOCKFILE_ID_MAX + 1];
	int n;

	for (size_t i = 0; i < key->idn; i++)
		snprintf(hex + 2 * i, 3, "%02x", key->id[i]);
	hex[2 * key->idn] = 0;
	if (key->symopts)
		n = snprintf(buf, max, "%s/%s.%x.blocks", dir, hex,
			     key->symopts);
	else
		n = snprintf(buf, max, "%s/%s.blocks", dir, hex);
	return n < 0 || (size_t)n >= max ? 0 : (size_t)n;
}

const char *strace_cache_default_dir(char *buf, size_t max)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;

	if (x && x[0] == '/')
		n = snprintf(buf, max, "%s/strace", x);
	else if (h && h[0] == '/')
		n = snprintf(buf, max, "%s/.cache/strace", h);
	else
		return NULL;
	return n > 0 && (size_t)n < max ? buf : NULL;
}

/* the section at *off of n records of size sz, within len: its start */
static const void *section(const uint8_t *buf, size_t len, size_t *off,
			   uint64_t n, size_t sz)
{
	const void *p = buf + *off;

	if (n > (len - *off) / sz)
		return NULL;
	*off = align8(*off + (size_t)n * sz);
	if (*off > len)
		return NULL;
	return p;
}

int strace_blockfile_parse(const void *data, size_t len,
			   const struct strace_blockfile_key *want, int verify,
			   struct strace_blockfile *out)
{
	const uint8_t *buf = data;
	struct bc_header h;
	size_t off;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h) || ((uintptr_t)buf & 7))
		return -STRACE_E_BADARG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, BC_MAGIC, 8) || h.version != BC_VERSION ||
	    h.header_size != sizeof(h) || h.idn > STRACE_BLOCKFILE_ID_MAX ||
	    (h.flags & ~BC_HAS_SYMS))
		return -STRACE_E_BADARG;
	if (want && (h.idn != want->idn || memcmp(h.id, want->id, h.idn) ||
		     h.size != want->size ||
		     h.mtime_sec != want->mtime_sec ||
		     h.mtime_nsec != want->mtime_nsec ||
		     h.symopts != want->symopts ||
		     h.debug_path_hash != want->debug_path_hash ||
		     h.debug_size != want->debug_size ||
		     h.debug_mtime_sec != want->debug_mtime_sec ||
		     h.debug_mtime_nsec != want->debug_mtime_nsec))
		return -ESTALE;
	if (verify && checksum(buf, len) != h.checksum)
		return -STRACE_E_BADARG;
	off = sizeof(h);
	out->blocks = section(buf, len, &off, h.nblocks, sizeof(*out->blocks));
	out->syms = section(buf, len, &off, h.nsyms, sizeof(*out->syms));
	out->iv = section(buf, len, &off, h.niv, sizeof(*out->iv));
	out->pool = section(buf, len, &off, h.pool_len, 1);
	if (!out->blocks || !out->syms || !out->iv || !out->pool ||
	    off != len || (h.pool_len && out->pool[h.pool_len - 1]))
		return -STRACE_E_BADARG;
	out->nblocks = h.nblocks;
	out->nsyms = h.nsyms;
	out->niv = h.niv;
	out->pool_len = h.pool_len;
	out->has_syms = !!(h.flags & BC_HAS_SYMS);
	out->bytes = len;
	/* every record within its bounds: a summary as the decoder could
	 * have made it of a file of this size, in the order of their keys
	 * (strace_blockfile_find), symbols sorted with names in the pool,
	 * lookup points sorted and naming symbols */
	for (size_t i = 0; i < out->nblocks; i++) {
		const struct strace_blockfile_block *e = &out->blocks[i];
		const struct strace_block *b = &e->b;
		uint64_t k = e->key & ~STRACE_MODE_KEY_MASK; /* offset + 1 */
		if (!k || (e->key >> STRACE_MODE_SHIFT) > STRACE_MODE_16 ||
		    k - 1 > h.size ||
		    b->len > h.size - (k - 1) || b->kind >= STRACE_BK_MAX ||
		    b->ninsn > 1024 || b->term_len > b->len || b->start ||
		    e->has_target > 1 || (!e->has_target && b->target) ||
		    (!b->len && b->kind != STRACE_BK_BAD &&
		     b->kind != STRACE_BK_NOCODE) ||
		    (i && e->key <= out->blocks[i - 1].key))
			return -STRACE_E_BADARG;
	}
	for (size_t i = 0; i < out->nsyms; i++) {
		const struct strace_blockfile_sym *s = &out->syms[i];
		if (s->name >= h.pool_len || s->end < s->start)
			return -STRACE_E_BADARG;
	}
	for (size_t i = 0; i < out->niv; i++) {
		const struct strace_blockfile_point *v = &out->iv[i];
		if (v->point < -1 || v->after < -1 ||
		    (v->point >= 0 && (uint64_t)v->point >= h.nsyms) ||
		    (v->after >= 0 && (uint64_t)v->after >= h.nsyms) ||
		    (i && v->at < out->iv[i - 1].at))
			return -STRACE_E_BADARG;
	}
	/* perf 6.1's symbols are in table order (the points sort them);
	 * the others are looked up by binary search */
	for (size_t i = 1; !STRACE_BLOCKFILE_PERF61(h.symopts) && i < out->nsyms;
	     i++)
		if (out->syms[i].start < out->syms[i - 1].start)
			return -STRACE_E_BADARG;
	return 0;
}

static void set_key(struct bc_header *h, const struct strace_blockfile_key *key)
{
	h->idn = (uint32_t)key->idn;
	memset(h->id, 0, sizeof(h->id));
	memcpy(h->id, key->id, key->idn);
	h->symopts = key->symopts;
	h->size = key->size;
	h->mtime_sec = key->mtime_sec;
	h->mtime_nsec = key->mtime_nsec;
	h->debug_path_hash = key->debug_path_hash;
	h->debug_size = key->debug_size;
	h->debug_mtime_sec = key->debug_mtime_sec;
	h->debug_mtime_nsec = key->debug_mtime_nsec;
}

int strace_blockfile_seal(void *buf, size_t len,
			  const struct strace_blockfile_key *key)
{
	struct bc_header h;

	if (len < sizeof(h) || key->idn > STRACE_BLOCKFILE_ID_MAX)
		return -STRACE_E_BADARG;
	memcpy(&h, buf, sizeof(h));
	memcpy(h.magic, BC_MAGIC, sizeof(h.magic));
	h.version = BC_VERSION;
	set_key(&h, key);
	memcpy(buf, &h, sizeof(h));
	h.checksum = checksum(buf, len);
	memcpy(buf, &h, sizeof(h));
	return 0;
}

/* the cache file of key under dir, mapped whole at *buf. Returns 0,
 * -errno, -STRACE_E_BADARG (not a regular file, too small or big). */
static int map_file(const char *dir, const struct strace_blockfile_key *key,
		    void **buf, size_t *len)
{
	char path[4096];

	*buf = NULL;
	if (!strace_blockfile_path(path, sizeof(path), dir, key))
		return -ENAMETOOLONG;
	/* mapped, not read: no copy, and only the pages a decode uses are
	 * ever touched past the checksum (docs/cache.md, "Never trusted",
	 * says what cutting the file short under the mapping would do) */
	return strace_dec_cache_map(dir, path + strlen(dir) + 1,
				    sizeof(struct bc_header), BC_MAX_BYTES,
				    buf, len);
}

int strace_blockfile_load(const char *dir,
			  const struct strace_blockfile_key *key, void **buf,
			  struct strace_blockfile *out)
{
	size_t len = 0;
	int rc = map_file(dir, key, buf, &len);

	memset(out, 0, sizeof(*out));
	if (rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES)
		return -ENOENT;
	if (!rc)
		rc = strace_blockfile_parse(*buf, len, key, 1, out);
	if (rc) {
		if (*buf)
			munmap(*buf, len);
		*buf = NULL;
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

void strace_blockfile_unload(void *buf, const struct strace_blockfile *c)
{
	if (buf)
		munmap(buf, c->bytes);
}

const struct strace_blockfile_block *
strace_blockfile_find(const struct strace_blockfile *c, uint64_t key)
{
	size_t lo = 0, hi = c->nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->blocks[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nblocks && c->blocks[lo].key == key ? &c->blocks[lo]
							     : NULL;
}

static int cmp_block(const void *a, const void *b)
{
	const struct strace_blockfile_block *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

struct strace_blockfile_block *
strace_blockfile_merge(const struct strace_blockfile_block *old, size_t nold,
		       const struct strace_blockfile_block *add, size_t nadd,
		       size_t *n)
{
	struct strace_blockfile_block *v, *t;
	size_t i = 0, j = 0, k = 0, m = 0;

	*n = 0;
	v = malloc((nold + 2 * nadd + 1) * sizeof(*v));
	if (!v)
		return NULL;
	/* add, sorted and once each, at the end (a block decoded again
	 * after a cache flushed is there twice); merged into the front,
	 * which never reaches the part of t still to be read */
	t = v + nold + nadd;
	if (nadd)
		memcpy(t, add, nadd * sizeof(*t));
	qsort(t, nadd, sizeof(*t), cmp_block);
	for (size_t a = 0; a < nadd; a++)
		if (!m || t[m - 1].key != t[a].key)
			t[m++] = t[a];
	while (i < nold || j < m) {
		if (j == m || (i < nold && old[i].key < t[j].key)) {
			v[k++] = old[i++];
		} else {
			if (i < nold && old[i].key == t[j].key)
				i++; /* the new one wins */
			v[k++] = t[j++];
		}
	}
	*n = k;
	return v;
}

int strace_blockfile_write(const char *dir,
			   const struct strace_blockfile_key *key,
			   const struct strace_blockfile *c)
{
	struct bc_header h;
	size_t len, off;
	uint8_t *buf;
	char path[4096];
	int rc;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BC_MAGIC, 8);
	h.version = BC_VERSION;
	h.header_size = sizeof(h);
	set_key(&h, key);
	h.nblocks = c->nblocks;
	h.nsyms = c->nsyms;
	h.niv = c->niv;
	h.pool_len = c->pool_len;
	h.flags = c->has_syms ? BC_HAS_SYMS : 0;
	len = sizeof(h) + align8(c->nblocks * sizeof(*c->blocks)) +
	      align8(c->nsyms * sizeof(*c->syms)) +
	      align8(c->niv * sizeof(*c->iv)) + align8(c->pool_len);
	if (len > BC_MAX_BYTES)
		return -E2BIG;
	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	off = sizeof(h);
	if (c->nblocks)
		memcpy(buf + off, c->blocks, c->nblocks * sizeof(*c->blocks));
	off += align8(c->nblocks * sizeof(*c->blocks));
	if (c->nsyms)
		memcpy(buf + off, c->syms, c->nsyms * sizeof(*c->syms));
	off += align8(c->nsyms * sizeof(*c->syms));
	if (c->niv)
		memcpy(buf + off, c->iv, c->niv * sizeof(*c->iv));
	off += align8(c->niv * sizeof(*c->iv));
	if (c->pool_len)
		memcpy(buf + off, c->pool, c->pool_len);
	memcpy(buf, &h, sizeof(h));
	strace_blockfile_seal(buf, len, key);

	if (!strace_blockfile_path(path, sizeof(path), dir, key)) {
		free(buf);
		return -ENAMETOOLONG;
	}
	rc = strace_dec_cache_write(dir, path + strlen(dir) + 1, buf, len);
	free(buf);
	return rc;
}

/* name is a temporary file of ours (BUILDID[.OPTS].blocks.PID.tmp, or
 * a DWARF table's BUILDID.KIND.dwarf.PID.tmp): its PID, or 0 */
static long tmp_pid(const char *name)
{
	size_t n = strlen(name);
	const char *dot;
	char *end;
	long pid;

	if (n < 12 || strcmp(name + n - 4, ".tmp"))
		return 0;
	dot = memrchr(name, '.', n - 4);
	if (!dot || ((dot - name < 7 || memcmp(dot - 7, ".blocks", 7)) &&
		     (dot - name < 6 || memcmp(dot - 6, ".dwarf", 6))))
		return 0;
	pid = strtol(dot + 1, &end, 10);
	return end == name + n - 4 && pid > 0 ? pid : 0;
}

int strace_blockfile_sweep(const char *dir)
{
	time_t now = time(NULL);
	struct dirent *de;
	int dfd = strace_dec_cache_dir(dir, NULL), n = 0;
	DIR *d;

	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	d = fdopendir(dfd);
	if (!d) {
		int rc = -errno;
		close(dfd);
		return rc;
	}
	while ((de = readdir(d))) {
		long pid = tmp_pid(de->d_name);
		struct stat st;
		if (!pid ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* its decode is dead (a PID of ours that no process has),
		 * or it is older than any decode writes a file for */
		if ((kill((pid_t)pid, 0) < 0 && errno == ESRCH) ||
		    now - st.st_mtime > BC_TMP_STALE_SECONDS)
			if (unlinkat(dfd, de->d_name, 0) == 0)
				n++;
	}
	closedir(d);
	return n;
}
