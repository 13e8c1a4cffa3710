/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_image_block.c - block summaries from the image
 * (decoder/image_block.c): an object's summaries by file offset, the
 * instruction cut by the end of a mapping, the newer branches the
 * reference decoder asks about, and the walker's block cache filled on a
 * miss and flushed when the image changes. Images of hand-made bytes: no
 * ELF file, no symbols.
 */
#include "harness.h"
#include "decoder/internal.h"

/* call rel32 to +0x20 (in the mapping), then nops for the rest */
static void code_with_call(uint8_t *c, size_t n)
{
	memset(c, 0x90, n);
	c[0] = 0x55;
	c[1] = 0xe8;
	c[2] = 0x1a;
	c[3] = c[4] = c[5] = 0;
}

TEST(summary_of_an_object)
{
	uint8_t c[64];
	struct strace_image *img;
	struct strace_block b, again;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	code_with_call(c, sizeof(c));
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(strace_image_add_bytes(img, 0x10000, c, sizeof(c), "code") ==
		0);
	CHECK_INT(strace_dec_image_block(img, 0x10000, STRACE_MODE_64, &b), ==,
		  0);
	CHECK_INT(b.kind, ==, STRACE_BK_CALL);
	CHECK_U64(b.start, ==, 0x10000);
	CHECK_U64(b.target, ==, 0x10020);
	/* both ends in the mapping: decided with the block, and with no
	 * symbol on either side, the same symbol */
	CHECK(b.flags & STRACE_BF_SYM_KNOWN);
	CHECK(b.flags & STRACE_BF_SAME_SYM);
	/* kept by the object: the same summary again */
	CHECK_INT(strace_dec_image_block(img, 0x10000, STRACE_MODE_64,
					 &again),
		  ==, 0);
	CHECK(!memcmp(&b, &again, sizeof(b)));
	/* nothing mapped there */
	CHECK_INT(strace_dec_image_block(img, 0x90000, STRACE_MODE_64, &b), ==,
		  0);
	CHECK_INT(b.kind, ==, STRACE_BK_NOCODE);
	strace_image_free(img);
}

TEST(an_instruction_across_two_mappings)
{
	/* nop, then mov %rsp,%rbp (48 89 e5) cut after its first byte */
	static const uint8_t a[] = {0x90, 0x48};
	static const uint8_t b2[] = {0x89, 0xe5, 0xc3};
	struct strace_image *img;
	struct strace_block b;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(strace_image_add_bytes(img, 0x20000, a, sizeof(a), "a") == 0);
	REQUIRE(strace_image_add_bytes(img, 0x20002, b2, sizeof(b2), "b") ==
		0);
	/* the block is cut before the instruction ... */
	CHECK_INT(strace_dec_image_block(img, 0x20000, STRACE_MODE_64, &b), ==,
		  0);
	CHECK_INT(b.kind, ==, STRACE_BK_NONE);
	CHECK_INT(b.len, ==, 1);
	/* ... which is a block of its own, from the bytes of both */
	CHECK_INT(strace_dec_image_block(img, 0x20001, STRACE_MODE_64, &b), ==,
		  0);
	CHECK_INT(b.ninsn, ==, 1);
	CHECK_INT(b.len, ==, 3);
	strace_image_free(img);
}

TEST(newer_branch_at)
{
	static const uint8_t c[] = {0x90, 0x90, 0xf3, 0x0f, 0x01, 0xec, 0x90};
	static const uint8_t nops[] = {0x90, 0x90, 0x90, 0x90};
	struct strace_image *img;

	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(strace_image_add_bytes(img, 0x30000, c, sizeof(c), "c") == 0);
	REQUIRE(strace_image_add_bytes(img, 0x40000, nops, sizeof(nops),
				       "n") == 0);
	/* UIRET at the instruction after last */
	CHECK_INT(strace_dec_newer_branch_at(img, 0x30000, 0x30001), ==, 1);
	CHECK_INT(strace_dec_newer_branch_at(img, 0x40000, 0x40002), ==, 0);
	CHECK_INT(strace_dec_newer_branch_at(img, 0x50000, 0x50000), ==, 0);
	strace_image_free(img);
}

TEST(block_cache_filled_from_the_image)
{
	uint8_t c[64];
	struct strace_image *img;
	struct strace_bcache *cache;
	struct strace_bcache_stats st;
	const struct strace_block *b;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	code_with_call(c, sizeof(c));
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(strace_image_add_bytes(img, 0x10000, c, sizeof(c), "code") ==
		0);
	REQUIRE(strace_bcache_new(0, &cache) == 0);
	b = strace_bcache_get(cache, img, 0x10000);
	CHECK_INT(b->kind, ==, STRACE_BK_CALL);
	b = strace_bcache_get(cache, img, 0x10000);
	CHECK_INT(b->kind, ==, STRACE_BK_CALL);
	b = strace_bcache_get(cache, img, 0x90000);
	CHECK_INT(b->kind, ==, STRACE_BK_NOCODE);
	strace_bcache_stats(cache, &st);
	CHECK_U64(st.misses, ==, 2);
	CHECK_U64(st.hits, ==, 1);
	CHECK_U64(st.entries, ==, 2);
	/* a mapping added: the image's generation changes, the cache
	 * starts over */
	REQUIRE(strace_image_add_bytes(img, 0x80000, c, sizeof(c), "more") ==
		0);
	b = strace_bcache_get(cache, img, 0x10000);
	CHECK_INT(b->kind, ==, STRACE_BK_CALL);
	strace_bcache_stats(cache, &st);
	CHECK_U64(st.flushes, ==, 1);
	CHECK_U64(st.misses, ==, 3);
	/* the walker's inline path: sync once, then find or miss */
	strace_dec_bcache_sync(cache, img);
	b = strace_dec_bcache_get_fast(cache, img, 0x10000);
	CHECK_INT(b->kind, ==, STRACE_BK_CALL);
	strace_bcache_stats(cache, &st);
	CHECK_U64(st.hits, ==, 2);
	strace_bcache_free(cache);
	strace_image_free(img);
}

RUN_TESTS("test_decoder_image_block")
