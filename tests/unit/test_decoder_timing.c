/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_timing.c - the walker's time (decoder/timing.h,
 * timing.c) alone: TSC to perf time against perf's tsc_to_perf_time()
 * worked by hand, the estimate that TSC, TMA, MTC, CYC and CBR packets
 * move, the rule that keeps times from going backwards, and what the
 * layer must refuse or ignore (a TMA without its TSC, an MTC without a
 * TMA or with a period a corrupt file gives, a CYC before a CBR).
 */
#include <string.h>

#include "harness.h"
#include "decoder/timing.h"

/*
 * perf's tools/perf/util/tsc.c:
 *
 *	quot = cyc >> time_shift;
 *	rem  = cyc & (((u64)1 << time_shift) - 1);
 *	return time_zero + quot * time_mult +
 *	       ((rem * time_mult) >> time_shift);
 *
 * A 3 GHz TSC: time_mult / 2^time_shift = 1/3 ns a tick, shift 31,
 * mult 2^31 / 3 rounded up = 715827883; time_zero 1000. One second of
 * ticks, 3000000000:
 *	quot = 3000000000 >> 31 = 1
 *	rem  = 3000000000 - 2147483648 = 852516352
 *	quot * mult = 715827883
 *	(rem * mult) >> 31 = 610254975475042816 >> 31 = 284172117
 *	time = 1000 + 715827883 + 284172117 = 1000001000 (1 s after zero)
 */
TEST(tsc_to_perf_time_by_hand)
{
	struct strace_time_conv tc;

	memset(&tc, 0, sizeof(tc));
	tc.time_shift = 31;
	tc.time_mult = 715827883;
	tc.time_zero = 1000;
	tc.cap_user_time_zero = 1;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 3000000000ull), ==,
		  1000001000ull);
	CHECK_U64(strace_tsc_to_perf_time(&tc, 0), ==, 1000);
	/* 3 ticks: rem 3, (3 * 715827883) >> 31 = 2147483649 >> 31 = 1 */
	CHECK_U64(strace_tsc_to_perf_time(&tc, 3), ==, 1001);
	/*
	 * Why perf splits quot and rem: 2^62 + 12345 ticks; tsc * mult
	 * would overflow 64 bits. quot = 2^31, rem = 12345:
	 *	quot * mult = 2^31 * 715827883 = 1537228673524957184
	 *	(12345 * 715827883) >> 31 = 8836895215635 >> 31 = 4115
	 *	time = 1000 + 1537228673524957184 + 4115
	 */
	CHECK_U64(strace_tsc_to_perf_time(&tc, (1ull << 62) + 12345), ==,
		  1537228673524962299ull);
}

/* cap_user_time_short: the TSC counts in time_mask's bits from
 * time_cycles (perf: cyc = time_cycles + ((cyc - time_cycles) & mask)).
 * time_cycles 0xffffff00, mask 0xffffffff, TSC 0x300000010:
 * (0x300000010 - 0xffffff00) & 0xffffffff = 0x110, cyc = 0x100000010;
 * shift 1, mult 2 (1 ns a tick), zero 5: 5 + 0x100000010. */
TEST(tsc_to_perf_time_short)
{
	struct strace_time_conv tc;

	memset(&tc, 0, sizeof(tc));
	tc.time_shift = 1;
	tc.time_mult = 2;
	tc.time_zero = 5;
	tc.cap_user_time_short = 1;
	tc.time_cycles = 0xffffff00;
	tc.time_mask = 0xffffffff;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 0x300000010ull), ==,
		  5 + 0x100000010ull);
	tc.cap_user_time_short = 0;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 0x300000010ull), ==,
		  5 + 0x300000010ull);
	/* no conversion (mult 0): raw TSC; a shift no kernel gives: zero */
	tc.time_mult = 0;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 77), ==, 77);
	tc.time_mult = 2;
	tc.time_shift = 64;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 77), ==, 5);
}

/* Backwards by no more than perf's TSC slip (0x10000 ticks, in perf time
 * through the conversion): raised to the last; by more: believed. */
TEST(time_forward_slip)
{
	struct strace_time_conv tc;
	uint64_t last = 0;

	memset(&tc, 0, sizeof(tc));
	CHECK_U64(time_forward(&tc, &last, 200000), ==, 200000);
	CHECK_U64(time_forward(&tc, &last, 200000 - 0x10000), ==, 200000);
	CHECK_U64(last, ==, 200000);
	CHECK_U64(time_forward(&tc, &last, 200000 - 0x10001), ==,
		  200000 - 0x10001);
	CHECK_U64(last, ==, 200000 - 0x10001);
	/* mult 512, shift 10: 0x10000 ticks are 0x8000 ns */
	tc.time_mult = 512;
	tc.time_shift = 10;
	last = 100000;
	CHECK_U64(time_forward(&tc, &last, 100000 - 0x8000), ==, 100000);
	CHECK_U64(time_forward(&tc, &last, 100000 - 0x8001), ==,
		  100000 - 0x8001);
	/* a shift no kernel gives: no slip */
	tc.time_shift = 64;
	last = 100000;
	CHECK_U64(time_forward(&tc, &last, 99999), ==, 99999);
}

static void conv(struct strace_time_conv *tc)
{
	memset(tc, 0, sizeof(*tc));
	tc->time_shift = 10;
	tc->time_mult = 512; /* 0.5 ns a tick */
	tc->time_zero = 7000;
	tc->cap_user_time_zero = 1;
	tc->tsc_ctc_ratio_n = 2; /* 2 TSC ticks a CTC tick */
	tc->tsc_ctc_ratio_d = 1;
	tc->mtc_period = 3; /* MTC payload: CTC bits [10:3] */
	tc->max_nonturbo_ratio = 40;
}

/*
 * TSC 10000, TMA ctc 0x1234 fc 6: the CTC edge was at 9994.
 * MTC 0x47: CTC = (0x1234 & ~0x7ff) | 0x47 << 3 = 0x1238, 4 CTC ticks,
 *	8 TSC ticks: 10002.
 * MTC 0x00: 0x1000 is before 0x1238: one wrap later, 0x1800; 0x5c8 =
 *	1480 CTC ticks, 2960 TSC ticks: 12962.
 * CBR 20, CYC 100: 100 core cycles at 20 against the TSC's 40 are 200
 *	ticks: 13162; CYC 50 more: 150 cycles, 300 ticks: 13262.
 */
TEST(packets_move_the_estimate)
{
	struct strace_time_conv tc;
	struct strace_dec_time t;

	conv(&tc);
	memset(&t, 0, sizeof(t));
	time_on_tsc(&t, 10000);
	CHECK_U64(t.tsc, ==, 10000);
	CHECK_INT(t.time_exact, ==, 1);
	REQUIRE(strace_dec_time_on_tma(&t, 0x1234, 6) == 0);
	CHECK_U64(t.tsc_ref, ==, 9994);
	t.time_exact = 0;
	time_on_mtc(&t, &tc, 0x47);
	CHECK_U64(t.tsc, ==, 10002);
	CHECK_U64(t.last_ctc, ==, 0x1238);
	CHECK_INT(t.time_exact, ==, 1);
	time_on_mtc(&t, &tc, 0x00);
	CHECK_U64(t.tsc, ==, 12962);
	CHECK_U64(t.last_ctc, ==, 0x1800);
	/* CYC before a CBR: ignored */
	time_on_cyc(&t, &tc, 100);
	CHECK_U64(t.tsc, ==, 12962);
	time_on_cbr(&t, 20);
	time_on_cyc(&t, &tc, 100);
	CHECK_U64(t.tsc, ==, 13162);
	time_on_cyc(&t, &tc, 50);
	CHECK_U64(t.tsc, ==, 13262);
	/* an MTC starts the cycles again from its reference */
	time_on_mtc(&t, &tc, 0x01); /* 0x1808: 8 CTC, 16 TSC ticks */
	CHECK_U64(t.tsc, ==, 12978);
	CHECK_U64(t.cyc, ==, 0);
	/* a TSC resets all */
	time_on_tsc(&t, 50000);
	CHECK_U64(t.tsc_ref, ==, 50000);
}

/* What the layer refuses or ignores. */
TEST(refused_and_ignored)
{
	struct strace_time_conv tc;
	struct strace_dec_time t;

	conv(&tc);
	memset(&t, 0, sizeof(t));
	/* a TMA before any TSC: damaged */
	CHECK_INT(strace_dec_time_on_tma(&t, 1, 0), ==, -1);
	CHECK_INT(t.have_ctc, ==, 0);
	/* an MTC or CYC before a TSC: ignored */
	time_on_mtc(&t, &tc, 5);
	time_on_cbr(&t, 20);
	time_on_cyc(&t, &tc, 100);
	CHECK_U64(t.tsc, ==, 0);
	time_on_tsc(&t, 1000);
	/* an MTC before a TMA (no CTC known): ignored */
	time_on_mtc(&t, &tc, 5);
	CHECK_U64(t.tsc, ==, 1000);
	REQUIRE(strace_dec_time_on_tma(&t, 0, 0) == 0);
	/* a second TMA after the same TSC: damaged */
	CHECK_INT(strace_dec_time_on_tma(&t, 0, 0), ==, -1);
	/* a period no 4-bit field holds, or no ratio: ignored */
	tc.mtc_period = 16;
	time_on_mtc(&t, &tc, 5);
	CHECK_U64(t.tsc, ==, 1000);
	tc.mtc_period = 3;
	tc.tsc_ctc_ratio_d = 0;
	time_on_mtc(&t, &tc, 5);
	CHECK_U64(t.tsc, ==, 1000);
	/* a CYC without the non-turbo ratio: ignored */
	tc.max_nonturbo_ratio = 0;
	time_on_cyc(&t, &tc, 100);
	CHECK_U64(t.tsc, ==, 1000);
}

/* time_now(): 0 before a TSC or without a conversion; else the estimate
 * in perf time, converted once per estimate, never before the last. */
TEST(time_now)
{
	struct strace_walk_opts o;
	struct strace_dec_time t;

	memset(&o, 0, sizeof(o));
	memset(&t, 0, sizeof(t));
	conv(&o.time);
	o.has_time = 1;
	CHECK_U64(time_now(&t, &o), ==, 0);
	time_on_tsc(&t, 1000000);
	/* 7000 + 1000000 * 512 / 1024 */
	CHECK_U64(time_now(&t, &o), ==, 507000);
	CHECK_U64(t.conv_tsc, ==, 1000000);
	CHECK_INT(t.conv_valid, ==, 1);
	CHECK_U64(time_now(&t, &o), ==, 507000);
	/* a TSC a little back (a damaged estimate before it): held */
	time_on_tsc(&t, 999000);
	CHECK_U64(time_now(&t, &o), ==, 507000);
	time_on_tsc(&t, 1002000);
	CHECK_U64(time_now(&t, &o), ==, 508000);
	CHECK_U64(strace_dec_time_convert(&t, &o.time), ==, 508000);
	o.has_time = 0;
	CHECK_U64(time_now(&t, &o), ==, 0);
}

RUN_TESTS("test_decoder_timing")
