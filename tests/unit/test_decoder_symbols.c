/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_symbols.c - an object's symbols alone
 * (decoder/symbols.c): this test's own program mapped as ld.so maps it,
 * its functions found by name and by address, and the name@plt entries
 * synthesized for its PLT in each style. (test_decoder_image.c checks
 * every symbol of libc against binutils and perf.)
 */
#include <errno.h>

#include "harness.h"
#include "decoder_testlib.h"
#include "decoder/internal.h"

#define SELF "/proc/self/exe"
#define BIAS 0x555500000000ull

struct seen {
	const char *want;
	uint64_t start, size;
	size_t plt, plt0;
};

static int look(void *arg, const struct strace_symbol *s, uint64_t off)
{
	struct seen *v = arg;
	size_t n = strlen(s->name);

	(void)off;
	if (!strcmp(s->name, v->want)) {
		v->start = s->start;
		v->size = s->size;
	}
	if (n > 4 && !strcmp(s->name + n - 4, "@plt"))
		v->plt++;
	if (!strcmp(s->name, "[plt0]"))
		v->plt0++;
	return 0;
}

static struct strace_image *self_image(int style)
{
	struct strace_image_opts o = {.size = sizeof(o), .plt_style = style};
	struct strace_image *img;

	if (strace_image_new(&o, &img))
		return NULL;
	if (tl_map_elf(img, SELF, BIAS) <= 0) {
		strace_image_free(img);
		return NULL;
	}
	return img;
}

TEST(own_functions_by_name_and_address)
{
	struct strace_image *img = self_image(STRACE_PLT_PERF62);
	struct seen v = {"test_own_functions_by_name_and_address", 0, 0, 0, 0};
	struct strace_symbol s;
	char dbg[256];

	if (!img)
		SKIP("cannot map " SELF);
	CHECK_INT(strace_image_each_symbol(img, BIAS + 0x1000, look, &v), ==,
		  0);
	REQUIRE(v.start);
	CHECK(v.size > 0);
	CHECK_INT(strace_image_symbol(img, v.start + 1, &s), ==, 0);
	CHECK_STR(s.name, v.want);
	CHECK_U64(s.start, ==, v.start);
	/* PLT entries of the program's calls into libc */
	CHECK(v.plt > 0);
	CHECK_INT(v.plt0, ==, 0);
	/* before the first mapping: no symbol */
	CHECK_INT(strace_image_symbol(img, 0x1000, &s), ==, -ENOENT);
	/* a .symtab of its own: no separate debug file */
	CHECK_INT(strace_debug_find(SELF, NULL, dbg, sizeof(dbg)), ==, 0);
	strace_image_free(img);
}

TEST(plain_names)
{
	struct strace_image *img = self_image(STRACE_PLT_PLAIN);
	struct seen v = {"test_plain_names", 0, 0, 0, 0};
	struct strace_symbol s;

	if (!img)
		SKIP("cannot map " SELF);
	CHECK_INT(strace_image_each_symbol(img, BIAS + 0x1000, look, &v), ==,
		  0);
	REQUIRE(v.start);
	CHECK(v.plt > 0);
	CHECK_INT(strace_image_symbol(img, v.start, &s), ==, 0);
	CHECK_STR(s.name, v.want);
	strace_image_free(img);
}

TEST(perf61_answers)
{
	struct strace_image *img = self_image(STRACE_PLT_PERF61);
	struct strace_image *ref = self_image(STRACE_PLT_PERF62);
	struct seen v = {"test_perf61_answers", 0, 0, 0, 0};
	struct strace_symbol s;

	if (!img || !ref) {
		strace_image_free(img);
		strace_image_free(ref);
		SKIP("cannot map " SELF);
	}
	/* perf 6.1's table is elsewhere: found through the other style */
	CHECK_INT(strace_image_each_symbol(ref, BIAS + 0x1000, look, &v), ==,
		  0);
	REQUIRE(v.start);
	CHECK_INT(strace_image_symbol(img, v.start + 1, &s), ==, 0);
	CHECK_STR(s.name, v.want);
	strace_image_free(img);
	strace_image_free(ref);
}

RUN_TESTS("test_decoder_symbols")
