/* SPDX-License-Identifier: MIT */
/*
 * strace/internal/perf_time.h - TSC to perf time: the conversion a
 * recording carries (perf's AUXTRACE_INFO of intel_pt, TIME_CONV, the
 * perf_event_mmap_page of a live session) and the PT timing ratios the
 * walker estimates time with between TSC packets. The project's own, for
 * every folder, not installed (make install copies the headers of
 * include/strace/ only): the perf codec fills it from a file, capture
 * from the mmap page, the decoder converts with it, and none of them has
 * to include another's stage header for it.
 */
#ifndef STRACE_INTERNAL_PERF_TIME_H
#define STRACE_INTERNAL_PERF_TIME_H

#include <stdint.h>

/*
 * perf time = time_zero + tsc * time_mult >> time_shift (in two halves,
 * without overflow: strace_tsc_to_perf_time()). A zeroed struct is no
 * conversion: times are raw TSC (time_mult 0) and MTC/CYC are ignored.
 */
struct strace_time_conv {
	/* perf_event_mmap_page's time_shift, time_mult, time_zero (perf.data:
	 * AUXTRACE_INFO priv[TIME_SHIFT, TIME_MULT, TIME_ZERO]) */
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	/* the page's cap_user_time_short: the TSC counts only the bits of
	 * time_mask, from time_cycles; the two below are then valid (perf.data:
	 * TIME_CONV) */
	int cap_user_time_short;
	uint64_t time_cycles;
	uint64_t time_mask;
	int cap_user_time_zero; /* 0: no conversion, times are raw TSC */
	/* MTC and CYC interpolation (0 when unknown: MTC/CYC are ignored);
	 * AUXTRACE_INFO priv[TSC_CTC_N, TSC_CTC_D] (CPUID leaf 0x15), the
	 * config's mtc_period, priv[MAX_NONTURBO_RATIO] */
	uint32_t tsc_ctc_ratio_n;
	uint32_t tsc_ctc_ratio_d;
	uint32_t mtc_period; /* log2 of CTC ticks per MTC (mtc_freq) */
	uint32_t max_nonturbo_ratio;
	int has_mtc; /* the trace has MTC packets (the config's mtc bit):
		      * the times between spread by it (decoder/decoder.h,
		      * "Times between timing packets") */
};

/*
 * strace_tsc_to_perf_time() - perf's tsc_to_perf_time(): tsc unchanged
 * without a conversion (time_mult 0). The kernel's time_shift is below 64
 * (readers of a file refuse more); a larger one gives time_zero, the
 * formula's limit, rather than an undefined shift. Inline: the walker
 * converts once per timing packet that moved the estimate.
 */
static inline uint64_t
strace_tsc_to_perf_time(const struct strace_time_conv *tc, uint64_t tsc)
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

#endif /* STRACE_INTERNAL_PERF_TIME_H */
