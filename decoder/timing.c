/* SPDX-License-Identifier: MIT */
/*
 * decoder/timing.c - TSC to perf time, and what of the walker's time is
 * not on its hot path (timing.h has the rest).
 */
#include "decoder/timing.h"

uint64_t strace_tsc_to_perf_time(const struct strace_time_conv *tc,
				 uint64_t tsc)
{
	uint64_t quot, rem;

	if (!tc->time_mult)
		return tsc;
	/* The kernel's shift is below 64; a bigger one (a damaged file) has
	 * no defined shift in C: its limit, tsc * mult / 2^64 and more,
	 * is 0. Readers refuse such values; this only keeps it defined. */
	if (tc->time_shift > 63)
		return tc->time_zero;
	if (tc->cap_user_time_short)
		tsc = tc->time_cycles +
		      ((tsc - tc->time_cycles) & tc->time_mask);
	quot = tsc >> tc->time_shift;
	rem = tsc & (((uint64_t)1 << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult +
	       ((rem * tc->time_mult) >> tc->time_shift);
}

uint64_t strace_dec_time_convert(struct strace_dec_time *t,
				 const struct strace_time_conv *tc)
{
	t->conv_tsc = t->tsc;
	t->conv_time = strace_tsc_to_perf_time(tc, t->tsc);
	t->conv_valid = 1;
	return time_forward(tc, &t->last_time, t->conv_time);
}

int strace_dec_time_on_tma(struct strace_dec_time *t, uint32_t ctc,
			   uint32_t fc)
{
	if (!t->tma_ok)
		return -1;
	t->tma_ok = 0;
	/* as perf: the CTC edge was fc TSC ticks before the TSC packet */
	t->last_ctc = ctc;
	t->have_ctc = 1;
	t->tsc_ref = t->tsc - fc;
	return 0;
}
