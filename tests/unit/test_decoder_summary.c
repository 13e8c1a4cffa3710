/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_summary.c - the block summarizer alone
 * (decoder/summary.c): summaries of hand-made code bytes, no image and
 * no cache; the modes; the branches newer than Capstone 4.
 */
#include "harness.h"
#include "decoder/internal.h"
#include "decoder/summary.h"

TEST(ends_at_the_first_branch)
{
	/* push %rbp; sub $0x20,%rsp; call rel32 +0x10; nop */
	static const uint8_t c[] = {0x55, 0x48, 0x83, 0xec, 0x20, 0xe8,
				    0x10, 0x00, 0x00, 0x00, 0x90};
	struct strace_block b;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	CHECK_INT(strace_block_decode(c, sizeof(c), 0x1000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_CALL);
	CHECK_U64(b.start, ==, 0x1000);
	CHECK_INT(b.len, ==, 10);
	CHECK_INT(b.ninsn, ==, 3);
	CHECK_INT(b.term_len, ==, 5);
	CHECK_U64(b.target, ==, 0x1000 + 10 + 0x10);
	CHECK_INT(b.sp_delta, ==, -8 - 0x20);
}

TEST(limits_and_no_code)
{
	static const uint8_t nops[] = {0x90, 0x90, 0x90, 0x90};
	struct strace_block b;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	/* cut after max_insn: kind NONE, go on at start + len */
	CHECK_INT(strace_block_decode(nops, sizeof(nops), 0x2000, 2, &b), ==,
		  0);
	CHECK_INT(b.kind, ==, STRACE_BK_NONE);
	CHECK_INT(b.ninsn, ==, 2);
	CHECK_INT(b.len, ==, 2);
	/* the bytes end: kind NONE too */
	CHECK_INT(strace_block_decode(nops, sizeof(nops), 0x2000, 0, &b), ==,
		  0);
	CHECK_INT(b.kind, ==, STRACE_BK_NONE);
	CHECK_INT(b.len, ==, 4);
	CHECK_INT(strace_block_decode(NULL, 0, 0x2000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_NOCODE);
}

TEST(the_mode_decides_the_instructions)
{
	/* 64-bit: REX ret (one instruction); 32-bit: inc %eax; ret */
	static const uint8_t c[] = {0x40, 0xc3};
	struct strace_block b;

	if (strace_block_engine() < 0)
		SKIP("no Capstone");
	CHECK_INT(strace_block_decode_mode(c, sizeof(c), 0x3000, 0,
					   STRACE_MODE_64, &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_RET);
	CHECK_INT(b.ninsn, ==, 1);
	CHECK_INT(strace_block_decode_mode(c, sizeof(c), 0x3000, 0,
					   STRACE_MODE_32, &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_RET);
	CHECK_INT(b.ninsn, ==, 2);
	CHECK_INT(b.term_len, ==, 1);
}

TEST(newer_branches_by_their_bytes)
{
	static const uint8_t uiret[] = {0xf3, 0x0f, 0x01, 0xec};
	static const uint8_t erets[] = {0xf2, 0x0f, 0x01, 0xca};
	static const uint8_t clac[] = {0x0f, 0x01, 0xca};
	static const uint8_t nop[] = {0x90, 0x90, 0x90};
	int len = 0;

	CHECK_INT(strace_dec_newer_branch(uiret, sizeof(uiret), &len), ==,
		  STRACE_BK_IRET);
	CHECK_INT(len, ==, 4);
	CHECK_INT(strace_dec_newer_branch(erets, sizeof(erets), &len), ==,
		  STRACE_BK_IRET);
	/* without F2 or F3 it is CLAC, no branch */
	CHECK_INT(strace_dec_newer_branch(clac, sizeof(clac), &len), ==,
		  STRACE_BK_NONE);
	CHECK_INT(strace_dec_newer_branch(nop, sizeof(nop), &len), ==,
		  STRACE_BK_NONE);
	/* too short to tell */
	CHECK_INT(strace_dec_newer_branch(uiret, 2, &len), ==, STRACE_BK_NONE);
}

RUN_TESTS("test_decoder_summary")
