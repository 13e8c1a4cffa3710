/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_image_cache.c - the persistent cache's glue
 * (decoder/image_cache.c): a decode of this test's own program writes
 * its cache file (strace_objcache_save()), the next one reads its blocks
 * and symbols from there and writes nothing, and one under other symbol
 * options makes a file of its own. (test_decoder_block.c tests the files
 * themselves, blockfile.c.)
 */
#include <dirent.h>
#include <ftw.h>

#include "harness.h"
#include "decoder_testlib.h"
#include "decoder/internal.h"

#define SELF "/proc/self/exe"
#define BIAS 0x555500000000ull

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static size_t files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

struct found {
	uint64_t main_at;
};

static int find_main(void *arg, const struct strace_symbol *s, uint64_t off)
{
	(void)off;
	if (!strcmp(s->name, "main"))
		((struct found *)arg)->main_at = s->start;
	return 0;
}

/* One decode: map the program with the cache of dir, summarize the block
 * at main and name it, save. Returns 0 and *st, or -1. */
static int decode_once(const char *dir, int style, struct strace_block *b,
		       struct strace_objcache_stats *st)
{
	struct strace_objcache *c;
	struct strace_image_opts o = {.size = sizeof(o), .plt_style = style};
	struct strace_image *img;
	struct strace_symbol s;
	struct found f = {0};
	int rc = -1;

	if (strace_objcache_new(&c) || strace_objcache_set_dir(c, dir))
		return -1;
	o.objects = c;
	if (strace_image_new(&o, &img) == 0) {
		if (tl_map_elf(img, SELF, BIAS) > 0 &&
		    strace_image_each_symbol(img, BIAS + 0x1000, find_main,
					     &f) == 0 &&
		    f.main_at &&
		    strace_dec_image_block(img, f.main_at, STRACE_MODE_64, b) ==
			    0 &&
		    strace_image_symbol(img, f.main_at, &s) == 0 &&
		    !strcmp(s.name, "main"))
			rc = 0;
		strace_image_free(img);
	}
	if (strace_objcache_save(c, st) < 0)
		rc = -1;
	strace_objcache_free(c);
	return rc;
}

TEST(written_then_read)
{
	char dir[] = "/tmp/test_decoder_image_cache.XXXXXX";
	struct strace_objcache_stats st;
	struct strace_block first, again;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	REQUIRE(mkdtemp(dir));
	REQUIRE(decode_once(dir, STRACE_PLT_PERF62, &first, &st) == 0);
	if (!st.missed) {
		nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
		SKIP("the program has no build-id");
	}
	CHECK_U64(st.missed, ==, 1);
	CHECK_U64(st.written, ==, 1);
	CHECK_U64(files_in(dir), ==, 1);
	/* the next decode: from the file, nothing new to write */
	REQUIRE(decode_once(dir, STRACE_PLT_PERF62, &again, &st) == 0);
	CHECK_U64(st.loaded, ==, 1);
	CHECK_U64(st.missed, ==, 0);
	CHECK_U64(st.written, ==, 0);
	CHECK(!memcmp(&first, &again, sizeof(first)));
	/* other symbol options: a file of their own */
	REQUIRE(decode_once(dir, STRACE_PLT_PLAIN, &again, &st) == 0);
	CHECK_U64(st.missed, ==, 1);
	CHECK_U64(st.written, ==, 1);
	CHECK_U64(files_in(dir), ==, 2);
	CHECK(!memcmp(&first, &again, sizeof(first)));
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

RUN_TESTS("test_decoder_image_cache")
