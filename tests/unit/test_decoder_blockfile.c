/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_blockfile.c - the persistent cache's files
 * (decoder/blockfile.h, blockfile.c) alone: the path of a file, its
 * write and load (blocks, symbols, lookup points and names as they went
 * in), the merge, the directory by the XDG rules, and what a file must
 * refuse: another object's, a byte changed anywhere, cut short, and a
 * forged file (a checksum that holds) whose records break their bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "decoder/blockfile.h"

/* a cache file's header (docs/cache.md) */
#define HDR 192

static const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef, 0x01};

static struct strace_blockfile_key key_of(uint64_t mtime, uint32_t symopts)
{
	struct strace_blockfile_key k = {.id = build_id,
					 .idn = sizeof(build_id),
					 .size = 4096,
					 .mtime_sec = mtime,
					 .mtime_nsec = 7,
					 .symopts = symopts};
	return k;
}

/* A file's contents: three blocks, two symbols (names "main" and
 * "f"), one lookup point. */
static struct strace_blockfile_block blocks[3];
static struct strace_blockfile_sym syms[2];
static struct strace_blockfile_point iv[1];
static const char pool[] = "main\0f"; /* 7 bytes with the last NUL */

static struct strace_blockfile contents(void)
{
	struct strace_blockfile c;

	memset(blocks, 0, sizeof(blocks));
	for (int i = 0; i < 3; i++) {
		blocks[i].key = 1 + 16 * (uint64_t)i;
		blocks[i].b.len = 5;
		blocks[i].b.ninsn = 2;
		blocks[i].b.term_len = 1;
		blocks[i].b.kind = STRACE_BK_RET;
	}
	blocks[1].b.kind = STRACE_BK_CALL;
	blocks[1].b.target = 0x40;
	blocks[1].has_target = 1;
	memset(syms, 0, sizeof(syms));
	syms[0].start = 0, syms[0].end = 32, syms[0].name = 0;
	syms[1].start = 32, syms[1].end = 48, syms[1].name = 5;
	iv[0].at = 0, iv[0].point = 0, iv[0].after = 1;
	memset(&c, 0, sizeof(c));
	c.blocks = blocks, c.nblocks = 3;
	c.syms = syms, c.nsyms = 2;
	c.iv = iv, c.niv = 1;
	c.pool = pool, c.pool_len = sizeof(pool);
	c.has_syms = 1;
	return c;
}

/* the file's bytes, read into an 8-byte aligned buffer (malloc's) */
static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 8);
	if (buf && read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void spill(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return;
	if (write(fd, buf, len) != (ssize_t)len)
		fprintf(stderr, "  short write of %s\n", path);
	close(fd);
}

/* DIR/BUILDID.blocks, BUILDID.OPTS.blocks with symbol options, nothing
 * when it does not fit. */
TEST(path)
{
	struct strace_blockfile_key k = key_of(1, 0);
	char buf[64];

	CHECK_U64(strace_blockfile_path(buf, sizeof(buf), "/c", &k), ==, 20);
	CHECK_STR(buf, "/c/deadbeef01.blocks");
	k.symopts = STRACE_BLOCKFILE_SYMOPTS(1, 1, 0);
	CHECK_U64(k.symopts, ==, 0x101);
	REQUIRE(strace_blockfile_path(buf, sizeof(buf), "/c", &k));
	CHECK_STR(buf, "/c/deadbeef01.101.blocks");
	CHECK_U64(strace_blockfile_path(buf, 20, "/c", &k), ==, 0);
	CHECK_U64(strace_blockfile_path(buf, 10, "/a/long/dir", &k), ==, 0);
}

/* $XDG_CACHE_HOME/strace, else $HOME/.cache/strace, absolute only. */
TEST(default_dir)
{
	char buf[64], *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	char *sx = x ? strdup(x) : NULL, *sh = h ? strdup(h) : NULL;

	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	CHECK_STR(strace_cache_default_dir(buf, sizeof(buf)), "/xdg/strace");
	setenv("XDG_CACHE_HOME", "relative", 1);
	CHECK_STR(strace_cache_default_dir(buf, sizeof(buf)),
		  "/home/u/.cache/strace");
	unsetenv("XDG_CACHE_HOME");
	CHECK_STR(strace_cache_default_dir(buf, sizeof(buf)),
		  "/home/u/.cache/strace");
	CHECK(strace_cache_default_dir(buf, 8) == NULL); /* too small */
	unsetenv("HOME");
	CHECK(strace_cache_default_dir(buf, sizeof(buf)) == NULL);
	if (sx)
		setenv("XDG_CACHE_HOME", sx, 1);
	if (sh)
		setenv("HOME", sh, 1);
	free(sx);
	free(sh);
}

/* Written and loaded: every record as it went in; a file of another
 * object (mtime) is stale, one never written is not there. */
TEST(write_load)
{
	char dir[] = "/tmp/strace-bf-XXXXXX", sub[64], path[4200];
	struct strace_blockfile c = contents(), in;
	struct strace_blockfile_key k = key_of(1, 0), other = key_of(2, 0);
	struct strace_blockfile_key none = key_of(1, 0);
	void *buf;

	REQUIRE(mkdtemp(dir));
	/* the directory is made if missing (mkdir -p) */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	REQUIRE(strace_blockfile_write(sub, &k, &c) == 0);
	REQUIRE(strace_blockfile_load(sub, &k, &buf, &in) == 0);
	REQUIRE(buf != NULL);
	CHECK_U64(in.nblocks, ==, 3);
	CHECK_U64(in.nsyms, ==, 2);
	CHECK_U64(in.niv, ==, 1);
	CHECK_U64(in.pool_len, ==, 7);
	CHECK_INT(in.has_syms, ==, 1);
	/* 192 header + 3 * 48 + 2 * 40 + 16 + 8 (7, aligned) */
	CHECK_U64(in.bytes, ==, HDR + 144 + 80 + 16 + 8);
	CHECK(!memcmp(in.blocks, blocks, sizeof(blocks)));
	CHECK(!memcmp(in.syms, syms, sizeof(syms)));
	CHECK(!memcmp(in.iv, iv, sizeof(iv)));
	CHECK_STR(in.pool + in.syms[1].name, "f");
	CHECK_U64(strace_blockfile_find(&in, 17)->b.target, ==, 0x40);
	CHECK(strace_blockfile_find(&in, 16) == NULL);
	CHECK(strace_blockfile_find(&in, 34) == NULL);
	strace_blockfile_unload(buf, &in);

	none.idn = 4; /* another build-id */
	CHECK_INT(strace_blockfile_load(sub, &none, &buf, &in), ==, -ENOENT);
	CHECK(buf == NULL);
	/* the same path (same build-id and options), another mtime */
	REQUIRE(strace_blockfile_path(path, sizeof(path), sub, &k));
	{
		char p2[4200];
		REQUIRE(strace_blockfile_path(p2, sizeof(p2), sub, &other));
		CHECK_STR(path, p2);
	}
	CHECK_INT(strace_blockfile_load(sub, &other, &buf, &in), ==, -ESTALE);
	CHECK(buf == NULL && in.nblocks == 0);
	/* the debug file the symbols came from is in the key: one installed
	 * (or changed) since makes the file stale */
	{
		struct strace_blockfile_key dbg = k;
		dbg.debug_path_hash = 1, dbg.debug_size = 4096;
		CHECK_INT(strace_blockfile_load(sub, &dbg, &buf, &in), ==,
			  -ESTALE);
		dbg = k;
		dbg.debug_mtime_nsec = 1;
		CHECK_INT(strace_blockfile_load(sub, &dbg, &buf, &in), ==,
			  -ESTALE);
	}
	/* no symbols: none read back */
	c.nsyms = 0, c.niv = 0, c.pool_len = 0, c.has_syms = 0;
	REQUIRE(strace_blockfile_write(sub, &k, &c) == 0);
	REQUIRE(strace_blockfile_load(sub, &k, &buf, &in) == 0);
	CHECK_INT(in.has_syms, ==, 0);
	CHECK_U64(in.bytes, ==, HDR + 144);
	strace_blockfile_unload(buf, &in);
	/* a directory in the file's place is no file */
	unlink(path);
	REQUIRE(mkdir(path, 0700) == 0);
	CHECK_INT(strace_blockfile_load(sub, &k, &buf, &in), ==,
		  -STRACE_E_BADARG);
	rmdir(path);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);
	rmdir(dir);
}

/* Merged: in key order, once each, the added one winning. */
TEST(merge)
{
	struct strace_blockfile_block old[2] = {0}, add[3] = {0}, *m;
	size_t n;

	old[0].key = 3, old[1].key = 10;
	old[1].b.len = 1;
	add[0].key = 10, add[1].key = 1, add[2].key = 10;
	add[0].b.len = add[2].b.len = 9;
	m = strace_blockfile_merge(old, 2, add, 3, &n);
	REQUIRE(m);
	REQUIRE(n == 3);
	CHECK_U64(m[0].key, ==, 1);
	CHECK_U64(m[1].key, ==, 3);
	CHECK_U64(m[2].key, ==, 10);
	CHECK_INT(m[2].b.len, ==, 9);
	free(m);
	m = strace_blockfile_merge(old, 2, NULL, 0, &n);
	REQUIRE(m);
	CHECK_U64(n, ==, 2);
	CHECK(!memcmp(m, old, sizeof(old)));
	free(m);
}

/* Every byte of a good file changed in turn: never loaded (the header's
 * key bytes make it another object's, -ESTALE; all the others are
 * damage); cut short at every 8 bytes: damaged. */
TEST(corrupt_bytes_refused)
{
	char dir[] = "/tmp/strace-bf-XXXXXX", path[4200];
	struct strace_blockfile c = contents(), in;
	struct strace_blockfile_key k = key_of(1, 0);
	size_t len, bad = 0, stale = 0;
	uint8_t *good, *b;
	void *buf;

	REQUIRE(mkdtemp(dir));
	REQUIRE(strace_blockfile_write(dir, &k, &c) == 0);
	REQUIRE(strace_blockfile_path(path, sizeof(path), dir, &k));
	good = slurp(path, &len);
	REQUIRE(good);
	b = malloc(len + 8);
	REQUIRE(b);
	CHECK_INT(strace_blockfile_parse(good, len, &k, 1, &in), ==, 0);
	for (size_t i = 0; i < len; i++) {
		int rc;
		memcpy(b, good, len);
		b[i] ^= 0x10;
		rc = strace_blockfile_parse(b, len, &k, 1, &in);
		CHECK(rc != 0);
		bad += rc == -STRACE_E_BADARG;
		stale += rc == -ESTALE;
		if (i >= HDR)
			CHECK_INT(rc, ==, -STRACE_E_BADARG);
	}
	CHECK_U64(bad + stale, ==, len);
	CHECK(stale > 0);
	/* and through a file, the same */
	memcpy(b, good, len);
	b[len - 30] ^= 1;
	spill(path, b, len);
	CHECK_INT(strace_blockfile_load(dir, &k, &buf, &in), ==,
		  -STRACE_E_BADARG);
	CHECK(buf == NULL);
	for (size_t cut = 0; cut < len; cut += 8)
		CHECK_INT(strace_blockfile_parse(good, cut, &k, 1, &in), ==,
			  -STRACE_E_BADARG);
	spill(path, good, 100);
	CHECK_INT(strace_blockfile_load(dir, &k, &buf, &in), ==,
		  -STRACE_E_BADARG);
	/* not 8-byte aligned */
	memcpy(b + 4, good, len);
	CHECK_INT(strace_blockfile_parse(b + 4, len, NULL, 0, &in), ==,
		  -STRACE_E_BADARG);
	/* any object (the fuzzer's NULL), no checksum: a good file loads */
	CHECK_INT(strace_blockfile_parse(good, len, NULL, 0, &in), ==, 0);
	free(b);
	free(good);
	unlink(path);
	rmdir(dir);
}

/* A forged file: its checksum holds (seal), but a record breaks its
 * bounds: refused all the same. off is the record's offset in the file. */
static int forged_opts(const uint8_t *good, size_t len, size_t off,
		       const void *rec, size_t n, uint32_t symopts)
{
	struct strace_blockfile_key k = key_of(1, symopts);
	struct strace_blockfile in;
	uint8_t *b = malloc(len);
	int rc;

	if (!b)
		return -ENOMEM;
	memcpy(b, good, len);
	memcpy(b + off, rec, n);
	strace_blockfile_seal(b, len, &k);
	rc = strace_blockfile_parse(b, len, &k, 1, &in);
	free(b);
	return rc;
}

static int forged(const uint8_t *good, size_t len, size_t off,
		  const void *rec, size_t n)
{
	return forged_opts(good, len, off, rec, n, 0);
}

TEST(forged_records_refused)
{
	char dir[] = "/tmp/strace-bf-XXXXXX", path[4200];
	struct strace_blockfile c = contents(), in;
	struct strace_blockfile_key k = key_of(1, 0);
	struct strace_blockfile_block blk;
	struct strace_blockfile_sym sym;
	struct strace_blockfile_point pt;
	const size_t ob = HDR, os = HDR + 144, op = HDR + 144 + 80;
	size_t len;
	uint8_t *good, z = 'x';

	REQUIRE(mkdtemp(dir));
	REQUIRE(strace_blockfile_write(dir, &k, &c) == 0);
	REQUIRE(strace_blockfile_path(path, sizeof(path), dir, &k));
	good = slurp(path, &len);
	REQUIRE(good);
	/* sealed as it is: good */
	CHECK_INT(forged(good, len, 0, good, 8), ==, 0);
	CHECK_INT(strace_blockfile_seal(good, 100, &k), ==, -STRACE_E_BADARG);

	blk = blocks[0];
	blk.b.len = 4097; /* past the object's 4096 bytes */
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);
	blk = blocks[0];
	blk.key = 0; /* an empty slot */
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);
	blk = blocks[0];
	blk.key = 17; /* not in key order (and twice) */
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);
	blk = blocks[0];
	blk.b.kind = STRACE_BK_MAX;
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);
	blk = blocks[0];
	blk.b.ninsn = 1025;
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);
	blk = blocks[0];
	blk.b.target = 8; /* a target without has_target */
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);
	blk = blocks[0];
	blk.b.term_len = 6; /* longer than the block */
	CHECK_INT(forged(good, len, ob, &blk, sizeof(blk)), ==,
		  -STRACE_E_BADARG);

	sym = syms[1];
	sym.name = 7; /* past the pool */
	CHECK_INT(forged(good, len, os + sizeof(sym), &sym, sizeof(sym)), ==,
		  -STRACE_E_BADARG);
	sym = syms[1];
	sym.end = 31; /* ends before it starts */
	CHECK_INT(forged(good, len, os + sizeof(sym), &sym, sizeof(sym)), ==,
		  -STRACE_E_BADARG);
	sym = syms[1];
	sym.start = 0; /* fine: same start as the first */
	CHECK_INT(forged(good, len, os + sizeof(sym), &sym, sizeof(sym)), ==,
		  0);
	{
		/* the second sorted before the first: perf 6.1's symbols
		 * are in table order (the points sort them), the others
		 * must be sorted */
		struct strace_blockfile_sym two[2] = {syms[1], syms[0]};
		uint32_t plain = STRACE_BLOCKFILE_SYMOPTS(STRACE_PLT_PLAIN, 0,
							  0);
		CHECK_INT(forged(good, len, os, two, sizeof(two)), ==, 0);
		CHECK_INT(forged_opts(good, len, os, two, sizeof(two), plain),
			  ==, -STRACE_E_BADARG);
		CHECK_INT(forged_opts(good, len, os, syms, sizeof(two), plain),
			  ==, 0);
	}

	pt = iv[0];
	pt.after = 2; /* no third symbol */
	CHECK_INT(forged(good, len, op, &pt, sizeof(pt)), ==,
		  -STRACE_E_BADARG);
	pt = iv[0];
	pt.point = -2;
	CHECK_INT(forged(good, len, op, &pt, sizeof(pt)), ==,
		  -STRACE_E_BADARG);
	pt = iv[0];
	pt.point = pt.after = -1; /* none: fine */
	CHECK_INT(forged(good, len, op, &pt, sizeof(pt)), ==, 0);

	/* the pool's last name not NUL-terminated */
	CHECK_INT(forged(good, len, op + 16 + 6, &z, 1), ==, -STRACE_E_BADARG);
	/* a count in the header past the file (nblocks at 120) */
	{
		uint64_t many = 1000;
		CHECK_INT(forged(good, len, 120, &many, 8), ==,
			  -STRACE_E_BADARG);
	}
	(void)in;
	free(good);
	unlink(path);
	rmdir(dir);
}

RUN_TESTS("test_decoder_blockfile")
