/* SPDX-License-Identifier: MIT */
/*
 * decoder/timing.c - what of the walker's time is not on its hot path
 * (timing.h has the rest; TSC to perf time: strace/internal/perf_time.h).
 */
#include "decoder/timing.h"

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
