/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_tar.c - the tar files of ptrace-capture --archive
 * (pt_backend/perf/tar.h): what the writer makes, the reader extracts
 * byte for byte (names that need ustar's prefix field, empty files, a
 * file of exactly one block, folders, modification times), and nothing
 * else: each hostile or damaged archive in a table is refused with its
 * code, the member's offset and name, before a byte of the member is
 * written, and never writes outside the folder; what was made before
 * the refusal is listed and removed. (GNU tar reads what the writer
 * makes: tests/e2e/capture-archive.sh.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pt_backend/perf/perf.h"
#include "pt_backend/perf/tar.h" /* the writer, the extractor */
#include "strace/error.h"

static char work[] = "/tmp/test_tar.XXXXXX";

static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	size_t n = fwrite(buf, 1, len, f);
	return fclose(f) == 0 && n == len ? 0 : -1;
}

/* The bytes of path into a malloc'd buffer, *len. NULL if unreadable. */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static int same_file(const char *path, const void *want, size_t len)
{
	size_t n;
	uint8_t *got = read_all(path, &n);
	int ok = got && n == len && !memcmp(got, want, len);

	free(got);
	return ok;
}

/* The number of entries of a folder (0 when empty or missing). */
static int entries(const char *dir)
{
	char cmd[512], out[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' 2>/dev/null | wc -l", dir);
	p = popen(cmd, "r");
	if (p && !fgets(out, sizeof(out), p))
		out[0] = 0;
	if (p)
		pclose(p);
	return atoi(out);
}

/* A fresh empty folder under work. */
static void fresh(const char *name, char *out, size_t len)
{
	char cmd[600];

	snprintf(out, len, "%s/%s", work, name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
	if (system(cmd) != 0 || mkdir(out, 0700) < 0)
		out[0] = 0;
}

TEST(write_then_extract)
{
	char tar[256], src[256], dir[256], p[700];
	char longname[300], deep[300];
	uint8_t block[512], big[70000];
	struct strace_tarw *w = NULL;
	struct strace_tar_made made = {0};
	struct strace_tar_fault f;
	uint64_t size = 0;
	struct stat st;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	memset(block, 'b', sizeof(block));
	snprintf(src, sizeof(src), "%s/src.bin", work);
	REQUIRE(write_file(src, big, sizeof(big)) == 0);
	/* a name of 100 bytes (the name field, no NUL) and one of 230
	 * (prefix / name) */
	memset(longname, 'n', 100);
	longname[100] = 0;
	memcpy(longname, "top/", 4);
	snprintf(deep, sizeof(deep), "top/%0150d/%070d.so", 1, 2);
	snprintf(tar, sizeof(tar), "%s/a.tar", work);
	REQUIRE(strace_tarw_open(&w, tar) == 0);
	CHECK_INT(strace_tarw_dir(w, "top", 1000000000), ==, 0);
	CHECK_INT(strace_tarw_bytes(w, "top/empty", "", 0, 1000000000), ==, 0);
	CHECK_INT(strace_tarw_bytes(w, "top/block", block, sizeof(block),
				    1000000000),
		  ==, 0);
	CHECK_INT(strace_tarw_file(w, "top/sub/dir/src.bin", src, &size), ==, 0);
	CHECK_U64(size, ==, sizeof(big));
	CHECK_INT(strace_tarw_bytes(w, longname, "L", 1, 0), ==, 0);
	CHECK_INT(strace_tarw_bytes(w, deep, "D", 1, 0), ==, 0);
	/* refused by the writer, the archive unchanged */
	CHECK_INT(strace_tarw_bytes(w, "/abs", "x", 1, 0), ==, -EINVAL);
	CHECK_INT(strace_tarw_bytes(w, "top/../x", "x", 1, 0), ==, -EINVAL);
	CHECK_INT(strace_tarw_bytes(w, "top/./x", "x", 1, 0), ==, -EINVAL);
	snprintf(p, sizeof(p), "top/%0120d", 3); /* a last part over 100 */
	CHECK_INT(strace_tarw_bytes(w, p, "x", 1, 0), ==, -ENAMETOOLONG);
	snprintf(p, sizeof(p), "%s/nothing", work);
	CHECK_INT(strace_tarw_file(w, "top/nothing", p, NULL), ==, -ENOENT);
	CHECK_INT(strace_tarw_file(w, "top/dev", "/dev/null", NULL), ==,
		  -ENODEV);
	CHECK_INT(strace_tarw_close(w), ==, 0);
	REQUIRE(stat(tar, &st) == 0);
	CHECK_INT(st.st_size % 10240, ==, 0); /* whole records, as tar */

	fresh("x1", dir, sizeof(dir));
	REQUIRE(dir[0]);
	CHECK_INT(strace_tar_extract(tar, dir, &made, &f), ==, 6);
	snprintf(p, sizeof(p), "%s/top/empty", dir);
	CHECK(same_file(p, "", 0));
	snprintf(p, sizeof(p), "%s/top/block", dir);
	CHECK(same_file(p, block, sizeof(block)));
	CHECK(stat(p, &st) == 0 && st.st_mtime == 1000000000);
	snprintf(p, sizeof(p), "%s/top/sub/dir/src.bin", dir);
	CHECK(same_file(p, big, sizeof(big)));
	snprintf(p, sizeof(p), "%s/%s", dir, longname);
	CHECK(same_file(p, "L", 1));
	snprintf(p, sizeof(p), "%s/%s", dir, deep);
	CHECK(same_file(p, "D", 1));
	/* top, top/sub, top/sub/dir, the long name's folder, its files */
	CHECK_INT(made.n, >=, 9);
	CHECK_INT(strace_tar_made_remove(&made), ==, 0);
	CHECK_INT(entries(dir), ==, 0);
	strace_tar_made_free(&made);
	{
		size_t n;
		uint8_t *b = read_all(tar, &n);
		CHECK(b && strace_tar_probe(b, n));
		free(b);
		memset(block, 0, sizeof(block));
		CHECK(!strace_tar_probe(block, sizeof(block)));
		memcpy(block, "PERFILE2", 8);
		CHECK(!strace_tar_probe(block, sizeof(block)));
	}
}

/* --- hostile and damaged archives, made header by header ---------------- */

struct arc {
	uint8_t b[16384];
	size_t n;
};

/* A ustar header (POSIX magic unless gnu) for name, type, size, with a
 * good checksum unless bad_sum; size_field, when set, is written as is. */
static void member(struct arc *a, const char *name, char type, uint64_t size,
		   const char *size_field, int gnu, int bad_sum)
{
	uint8_t *h = a->b + a->n;
	unsigned sum = 0;

	memset(h, 0, 512);
	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	if (size_field && (uint8_t)size_field[0] == 0x80)
		memcpy(h + 124, size_field, 12); /* base-256: binary */
	else if (size_field)
		memcpy(h + 124, size_field, strlen(size_field));
	else
		snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (uint8_t)type;
	if (type == '2' || type == '1')
		memcpy(h + 157, "/etc/passwd", 11);
	memcpy(h + 257, gnu ? "ustar  \0" : "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum + (bad_sum ? 1 : 0));
	h[155] = ' ';
	a->n += 512;
}

static void data(struct arc *a, const char *s, size_t len)
{
	memset(a->b + a->n, 0, (len + 511) / 512 * 512);
	memcpy(a->b + a->n, s, len);
	a->n += (len + 511) / 512 * 512;
}

static void end(struct arc *a)
{
	memset(a->b + a->n, 0, 1024);
	a->n += 1024;
}

/* A good member, then bad things; each case's archive. */
enum hostile_kind {
	H_ABS, H_DOTDOT, H_DOT, H_EMPTYPART, H_CTRL, H_SYMLINK, H_HARDLINK,
	H_CHARDEV, H_FIFO, H_PAX, H_GNULONG, H_CHECKSUM, H_V7, H_FIELD,
	H_BEYOND, H_BASE256, H_CUT_DATA, H_NO_END, H_ONE_ZERO, H_DUP,
	H_FILE_UNDER_FILE, H_DIR_OVER_FILE,
};

static const struct hostile {
	enum hostile_kind kind;
	const char *what;
	int want;
	const char *name; /* the fault's member name */
} hostile[] = {
	{H_ABS, "absolute name", STRACE_E_TAR_NAME, "/tmp/test_tar_escape"},
	{H_DOTDOT, "a name with ..", STRACE_E_TAR_NAME, "b/../../test_tar_escape"},
	{H_DOT, "a name with .", STRACE_E_TAR_NAME, "b/./x"},
	{H_EMPTYPART, "a name with //", STRACE_E_TAR_NAME, "b//x"},
	{H_CTRL, "a name with a line break", STRACE_E_TAR_NAME, "b/x?y"},
	{H_SYMLINK, "a symbolic link", STRACE_E_TAR_TYPE, "b/link"},
	{H_HARDLINK, "a hard link", STRACE_E_TAR_TYPE, "b/hard"},
	{H_CHARDEV, "a character device", STRACE_E_TAR_TYPE, "b/null"},
	{H_FIFO, "a FIFO", STRACE_E_TAR_TYPE, "b/fifo"},
	{H_PAX, "a pax header", STRACE_E_TAR_TYPE, "b/PaxHeader"},
	{H_GNULONG, "a GNU long name", STRACE_E_TAR_TYPE, "././@LongLink"},
	{H_CHECKSUM, "a wrong checksum", STRACE_E_TAR_HEADER, "b/y"},
	{H_V7, "no ustar magic", STRACE_E_TAR_HEADER, "b/y"},
	{H_FIELD, "a size that is no number", STRACE_E_TAR_FIELD, "b/y"},
	{H_BEYOND, "a size beyond the file", STRACE_E_TAR_TRUNCATED, "b/y"},
	{H_BASE256, "a base-256 size of 2^60", STRACE_E_TAR_TRUNCATED, "b/y"},
	{H_CUT_DATA, "the file cut inside a member", STRACE_E_TAR_TRUNCATED,
	 "b/y"},
	{H_NO_END, "no end blocks", STRACE_E_TAR_TRUNCATED, ""},
	{H_ONE_ZERO, "one end block of two", STRACE_E_TAR_TRUNCATED, ""},
	{H_DUP, "a name twice", STRACE_E_TAR_DUP, "b/x"},
	{H_FILE_UNDER_FILE, "a file under a file", STRACE_E_TAR_DUP, "b/x/y"},
	{H_DIR_OVER_FILE, "a folder over a file", STRACE_E_TAR_DUP, "b/x/"},
};

static void build(enum hostile_kind k, struct arc *a)
{
	a->n = 0;
	member(a, "b/x", '0', 5, NULL, 0, 0); /* a good member first */
	data(a, "hello", 5);
	switch (k) {
	case H_ABS:
		member(a, "/tmp/test_tar_escape", '0', 1, NULL, 0, 0);
		break;
	case H_DOTDOT:
		member(a, "b/../../test_tar_escape", '0', 1, NULL, 0, 0);
		break;
	case H_DOT:
		member(a, "b/./x", '0', 1, NULL, 0, 0);
		break;
	case H_EMPTYPART:
		member(a, "b//x", '0', 1, NULL, 0, 0);
		break;
	case H_CTRL:
		member(a, "b/x\ny", '0', 1, NULL, 0, 0);
		break;
	case H_SYMLINK:
		member(a, "b/link", '2', 0, NULL, 0, 0);
		break;
	case H_HARDLINK:
		member(a, "b/hard", '1', 0, NULL, 0, 0);
		break;
	case H_CHARDEV:
		member(a, "b/null", '3', 0, NULL, 0, 0);
		break;
	case H_FIFO:
		member(a, "b/fifo", '6', 0, NULL, 0, 0);
		break;
	case H_PAX:
		member(a, "b/PaxHeader", 'x', 0, NULL, 0, 0);
		break;
	case H_GNULONG:
		member(a, "././@LongLink", 'L', 0, NULL, 1, 0);
		break;
	case H_CHECKSUM:
		member(a, "b/y", '0', 1, NULL, 0, 1);
		break;
	case H_V7:
		member(a, "b/y", '0', 1, NULL, 0, 0);
		memset(a->b + a->n - 512 + 257, 0, 8);
		{
			/* (a v7 header's checksum, still right) */
			uint8_t *h = a->b + a->n - 512;
			unsigned sum = 0;
			memset(h + 148, ' ', 8);
			for (int i = 0; i < 512; i++)
				sum += h[i];
			snprintf((char *)h + 148, 8, "%06o", sum);
			h[155] = ' ';
		}
		break;
	case H_FIELD:
		member(a, "b/y", '0', 0, "zz", 0, 0);
		break;
	case H_BEYOND:
		member(a, "b/y", '0', 1 << 20, NULL, 0, 0);
		break;
	case H_BASE256:
		member(a, "b/y", '0', 0, "\x80\0\0\0\x10\0\0\0\0\0\0\0", 0, 0);
		break;
	case H_CUT_DATA:
		member(a, "b/y", '0', 3000, NULL, 0, 0);
		data(a, "abc", 3);
		return; /* (ends 2 blocks into 6) */
	case H_NO_END:
		return;
	case H_ONE_ZERO:
		memset(a->b + a->n, 0, 512);
		a->n += 512;
		return;
	case H_DUP:
		member(a, "b/x", '0', 1, NULL, 0, 0);
		data(a, "Z", 1);
		break;
	case H_FILE_UNDER_FILE:
		member(a, "b/x/y", '0', 1, NULL, 0, 0);
		data(a, "Z", 1);
		break;
	case H_DIR_OVER_FILE:
		member(a, "b/x/", '5', 0, NULL, 0, 0);
		break;
	}
	if (k == H_ABS || k == H_DOTDOT || k == H_DOT || k == H_EMPTYPART ||
	    k == H_CTRL || k == H_CHECKSUM || k == H_V7)
		data(a, "E", 1);
	end(a);
}

TEST(hostile_archives_refused)
{
	static struct arc a;
	char tar[256], dir[256], p[700];

	snprintf(tar, sizeof(tar), "%s/h.tar", work);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *h = &hostile[i];
		struct strace_tar_made made = {0};
		struct strace_tar_fault f;
		int rc;

		build(h->kind, &a);
		REQUIRE(write_file(tar, a.b, a.n) == 0);
		fresh("in", dir, sizeof(dir));
		REQUIRE(dir[0]);
		rc = strace_tar_extract(tar, dir, &made, &f);
		if (rc != -h->want || strcmp(f.name, h->name))
			fprintf(stderr, "  %s: %d (%s), member '%s' at %llu\n",
				h->what, rc, strace_strerror(rc), f.name,
				(unsigned long long)f.offset);
		CHECK_INT(rc, ==, -h->want);
		CHECK_STR(f.name, h->name);
		/* the bad member's header follows the good one (the end's
		 * after the last) */
		CHECK_U64(f.offset, >=, 1024);
		/* the good member was made, nothing of the bad one */
		snprintf(p, sizeof(p), "%s/b/x", dir);
		if (h->kind != H_DIR_OVER_FILE && h->kind != H_FILE_UNDER_FILE &&
		    h->kind != H_DUP)
			CHECK(same_file(p, "hello", 5));
		snprintf(p, sizeof(p), "%s/b/y", dir);
		CHECK(access(p, F_OK) != 0 || h->kind == H_CUT_DATA);
		CHECK(access("/tmp/test_tar_escape", F_OK) != 0);
		snprintf(p, sizeof(p), "%s/test_tar_escape", work);
		CHECK(access(p, F_OK) != 0);
		/* what it made is listed: removed, the folder is empty */
		strace_tar_made_remove(&made);
		CHECK_INT(entries(dir), ==, 0);
		strace_tar_made_free(&made);
		printf("  %-32s refused: %s\n", h->what, strace_strerror(rc));
	}
}

TEST(gnu_magic_read)
{
	static struct arc a;
	char tar[256], dir[256], p[700];
	struct strace_tar_made made = {0};
	struct strace_tar_fault f;

	a.n = 0;
	member(&a, "g/file", '0', 3, NULL, 1, 0);
	data(&a, "gnu", 3);
	member(&a, "g/dir/", '5', 0, NULL, 1, 0);
	end(&a);
	snprintf(tar, sizeof(tar), "%s/g.tar", work);
	REQUIRE(write_file(tar, a.b, a.n) == 0);
	fresh("g", dir, sizeof(dir));
	CHECK_INT(strace_tar_extract(tar, dir, &made, &f), ==, 2);
	snprintf(p, sizeof(p), "%s/g/file", dir);
	CHECK(same_file(p, "gnu", 3));
	strace_tar_made_remove(&made);
	CHECK_INT(entries(dir), ==, 0);
	strace_tar_made_free(&made);
}

TEST(not_a_regular_file)
{
	struct strace_tar_fault f;
	char dir[256];

	fresh("nr", dir, sizeof(dir));
	CHECK_INT(strace_tar_extract("/dev/null", dir, NULL, &f), ==, -ENODEV);
	CHECK_INT(strace_tar_extract(work, dir, NULL, &f), ==, -ENODEV);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
	if (!mkdtemp(work))
		exit(1);
}

static void cleanup(void) __attribute__((destructor));
static void cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", work);
}

RUN_TESTS("test_tar")
