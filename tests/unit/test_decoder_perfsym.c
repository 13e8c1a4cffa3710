/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_perfsym.c - perf 6.1's symbol lookup replayed
 * (decoder/perfsym.c: strace_dec_perf61_index(),
 * strace_dec_perf_choose_best(), strace_dec_prefix_underscores()) alone,
 * on symbols made by hand.
 *
 * The answers are perf 6.1's rules worked by hand: choose_best_symbol()'s
 * order; symbols__fixup_end() (a size-0 symbol reaches the next, the last
 * one the page after its own); symbols__fixup_duplicate(); and the
 * red-black tree's shape after the PLT entries are inserted, drawn below,
 * which decides what symbols__find() answers where an extended _init and
 * the PLT entries overlap (and where it answers nothing).
 * (test_decoder_image compares whole objects with perf itself.)
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "decoder/internal.h"
#include "decoder/perfsym.h"

TEST(prefix_underscores)
{
	CHECK_INT(strace_dec_prefix_underscores("main"), ==, 0);
	CHECK_INT(strace_dec_prefix_underscores("_start"), ==, 1);
	CHECK_INT(strace_dec_prefix_underscores("__libc_start_main"), ==, 2);
	CHECK_INT(strace_dec_prefix_underscores("___"), ==, 3);
	CHECK_INT(strace_dec_prefix_underscores(""), ==, 0);
}

/* perf's choose_best_symbol(): a sized one over a size-0 one, then not
 * weak, then global, then fewer leading underscores, then the longer
 * name; all equal, the first stays (0). */
TEST(choose_best)
{
	CHECK_INT(strace_dec_perf_choose_best(8, STB_GLOBAL, "a", 0,
					      STB_GLOBAL, "b"),
		  ==, 0);
	CHECK_INT(strace_dec_perf_choose_best(0, STB_GLOBAL, "a", 8,
					      STB_WEAK, "b"),
		  ==, 1);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_WEAK, "a", 8, STB_LOCAL,
					      "b"),
		  ==, 1);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_GLOBAL, "a", 8,
					      STB_WEAK, "b"),
		  ==, 0);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_LOCAL, "a", 8,
					      STB_GLOBAL, "b"),
		  ==, 1);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_GLOBAL, "__x", 8,
					      STB_GLOBAL, "_x"),
		  ==, 1);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_GLOBAL, "_x", 8,
					      STB_GLOBAL, "__x"),
		  ==, 0);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_GLOBAL, "read", 8,
					      STB_GLOBAL, "read64"),
		  ==, 1);
	CHECK_INT(strace_dec_perf_choose_best(8, STB_GLOBAL, "read", 8,
					      STB_GLOBAL, "open"),
		  ==, 0);
}

static void sym(struct perf_sym *s, uint64_t start, uint64_t size, int bind,
		const char *name)
{
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->end = start + size;
	s->bind = (uint8_t)bind;
	s->name = name;
}

/*
 * .symtab: _init (0x1000, size 0), main (0x2000, 0x10); the fix-ups make
 * _init [0x1000, 0x2000). Then the PLT: foo@plt 0x1020, bar@plt 0x1030
 * (0x10 each). The tree, by rbtree's insertion:
 *   _init; main right of it (red);
 *   foo@plt: left of main, red under red, uncle nil: rotate right at
 *     main, left at _init: foo@plt the root, _init and main its children;
 *   bar@plt: left of main, red under red, uncle _init red: recoloured.
 *
 *            foo@plt [1020,1030)
 *           /                   \
 *   _init [1000,2000)      main [2000,2010)
 *                          /
 *                 bar@plt [1030,1040)
 *
 * symbols__find() walks down: at 0x1040 it goes right of foo@plt, left of
 * main, right of bar@plt (0x1040 is its end): nothing, though _init
 * covers it.
 */
TEST(plt_over_extended_init)
{
	struct perf_sym s[4];
	struct perf_iv *iv;
	size_t n;
	static const struct {
		uint64_t at;
		int point, after;
	} want[] = {
		{0x1000, 0, 0},   {0x1020, 2, 2},   {0x1030, 3, 3},
		{0x1040, -1, -1}, {0x2000, 1, 1},   {0x2010, -1, -1},
	};

	sym(&s[0], 0x1000, 0, STB_GLOBAL, "_init");
	sym(&s[1], 0x2000, 0x10, STB_GLOBAL, "main");
	sym(&s[2], 0x1020, 0x10, STB_GLOBAL, "foo@plt");
	sym(&s[3], 0x1030, 0x10, STB_GLOBAL, "bar@plt");
	REQUIRE(strace_dec_perf61_index(s, 2, 2, 4, &iv, &n) == 0);
	CHECK_U64(s[0].end, ==, 0x2000);
	REQUIRE(n == sizeof(want) / sizeof(want[0]));
	for (size_t k = 0; k < n; k++) {
		CHECK_U64(iv[k].at, ==, want[k].at);
		CHECK_INT(iv[k].point, ==, want[k].point);
		CHECK_INT(iv[k].after, ==, want[k].after);
	}
	/* what each names as perf does: _init only up to foo@plt */
	CHECK_U64(s[0].vis_end, ==, 0x1020);
	CHECK_U64(s[1].vis_end, ==, 0x2010);
	CHECK_U64(s[2].vis_end, ==, 0x1030);
	CHECK_U64(s[3].vis_end, ==, 0x1040);
	free(iv);
}

/* Two symbols at one start: the better stays (a global over a weak one,
 * whichever came first); the last size-0 symbol reaches the page after
 * its own: ((0x3010 + 4095) & ~4095) + 4096 = 0x5000. */
TEST(duplicates_and_last_end)
{
	struct perf_sym s[3];
	struct perf_iv *iv;
	size_t n;

	sym(&s[0], 0x3000, 8, STB_WEAK, "foo");
	sym(&s[1], 0x3000, 8, STB_GLOBAL, "_foo");
	sym(&s[2], 0x3010, 0, STB_GLOBAL, "tail");
	REQUIRE(strace_dec_perf61_index(s, 3, 3, 3, &iv, &n) == 0);
	CHECK_U64(s[2].end, ==, 0x5000);
	REQUIRE(n == 4); /* 0x3000, 0x3008, 0x3010, 0x5000 */
	CHECK_U64(iv[0].at, ==, 0x3000);
	CHECK_INT(iv[0].point, ==, 1);
	CHECK_INT(iv[0].after, ==, 1);
	CHECK_INT(iv[1].point, ==, -1); /* 0x3008: foo's end, a gap */
	CHECK_INT(iv[1].after, ==, -1);
	CHECK_INT(iv[2].point, ==, 2);
	CHECK_INT(iv[3].point, ==, -1);
	free(iv);

	/* the other order: the global one still stays */
	sym(&s[0], 0x3000, 8, STB_GLOBAL, "_foo");
	sym(&s[1], 0x3000, 8, STB_WEAK, "foo");
	REQUIRE(strace_dec_perf61_index(s, 2, 2, 2, &iv, &n) == 0);
	REQUIRE(n == 2);
	CHECK_INT(iv[0].point, ==, 0);
	free(iv);
}

/* .dynsym's pass has its own fix-ups: a size-0 .dynsym symbol reaches
 * the next symbol of either table. */
TEST(dynsym_pass)
{
	struct perf_sym s[2];
	struct perf_iv *iv;
	size_t n;

	sym(&s[0], 0x5000, 0x10, STB_GLOBAL, "local_fn");
	sym(&s[1], 0x4000, 0, STB_GLOBAL, "dyn_fn");
	REQUIRE(strace_dec_perf61_index(s, 1, 2, 2, &iv, &n) == 0);
	CHECK_U64(s[1].end, ==, 0x5000);
	CHECK_U64(s[1].vis_end, ==, 0x5000);
	REQUIRE(n == 3);
	CHECK_INT(iv[0].point, ==, 1);
	CHECK_INT(iv[1].point, ==, 0);
	free(iv);
}

/* No symbols: no points, nothing allocated. */
TEST(empty)
{
	struct perf_iv *iv = (struct perf_iv *)1;
	size_t n = 7;

	CHECK_INT(strace_dec_perf61_index(NULL, 0, 0, 0, &iv, &n), ==, 0);
	CHECK(iv == NULL);
	CHECK_U64(n, ==, 0);
}

RUN_TESTS("test_decoder_perfsym")
