/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/live_time.c - the time conversion of a live session
 * (perf's mmap page, CPUID leaf 0x15, the PT config; see capture.h).
 */
#include "live_int.h"

#include <errno.h>
#include <string.h>

#include "strace/internal/perf_time.h"

static void cpuid_15(uint32_t *n, uint32_t *d)
{
	unsigned a = 0, b = 0, c = 0, dd = 0;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(dd)
			 : "a"(0x15), "c"(0));
	*n = b;
	*d = a;
}

int strace_live_has_ptw(const struct strace_live *l)
{
	uint64_t bits = strace_pmu_format_bits(&l->pmu, "ptw");

	return bits && (l->pt.config & bits) != 0;
}

int strace_live_time_conv(const struct strace_live *l,
			  struct strace_time_conv *tc)
{
	const struct perf_event_mmap_page *pg;
	uint32_t seq;
	uint64_t mtc_bits = strace_pmu_format_bits(&l->pmu, "mtc_period");

	memset(tc, 0, sizeof(*tc));
	if (!l->nth)
		return -ENOENT;
	pg = l->th[0]->base;
	/* The kernel updates these under a sequence count (pg->lock). */
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		tc->time_shift = pg->time_shift;
		tc->time_mult = pg->time_mult;
		tc->time_zero = pg->time_zero;
		tc->cap_user_time_zero = pg->cap_user_time_zero;
		tc->cap_user_time_short = pg->cap_user_time_short;
		tc->time_cycles = pg->time_cycles;
		tc->time_mask = pg->time_mask;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq || (seq & 1));
	if (tc->time_shift > 63) {
		/* a shift no conversion can use (the kernel's is below 64):
		 * no conversion rather than an undefined shift, and no such
		 * value in the perf.data a session writes */
		memset(tc, 0, sizeof(*tc));
		return -ERANGE;
	}
	cpuid_15(&tc->tsc_ctc_ratio_n, &tc->tsc_ctc_ratio_d);
	if (mtc_bits && (l->pt.config & strace_pmu_format_bits(&l->pmu, "mtc"))) {
		unsigned shift = (unsigned)__builtin_ctzll(mtc_bits);

		tc->mtc_period = (uint32_t)((l->pt.config & mtc_bits) >> shift);
		tc->has_mtc = 1;
	}
	tc->max_nonturbo_ratio = (uint32_t)l->pmu.max_nonturbo_ratio;
	return 0;
}

uint64_t strace_live_tsc_to_perf(const struct strace_time_conv *tc,
				 uint64_t tsc)
{
	if (tc->time_shift > 63) /* as strace_tsc_to_perf_time() */
		return tc->time_zero;
	uint64_t quot = tsc >> tc->time_shift;
	uint64_t rem = tsc & ((1ULL << tc->time_shift) - 1);

	return tc->time_zero + quot * tc->time_mult +
	       ((rem * tc->time_mult) >> tc->time_shift);
}
