/* SPDX-License-Identifier: MIT */
/*
 * decoder/timing.h - the walker's time: the TSC estimate that TSC, TMA,
 * MTC, CYC and CBR packets move, its conversion to perf time, and the
 * rule that keeps event times from going backwards (docs/decoder.md,
 * "Timestamps"). Not installed.
 *
 * The packet handlers and time_now() are static inline: the walker's
 * packet loop and its emit call them per packet and per event, as the
 * conversion itself (strace_tsc_to_perf_time(), inline in
 * strace/internal/perf_time.h). The rare packets are in timing.c.
 *
 * Threading: a struct strace_dec_time belongs to its walker's thread.
 */
#ifndef DECODER_TIMING_H
#define DECODER_TIMING_H

#include <stdint.h>

#include "decoder/internal.h"

struct strace_dec_time {
	uint64_t tsc;      /* current estimate */
	uint64_t tsc_ref;  /* at the last TSC/MTC */
	uint64_t cyc;      /* cycles since tsc_ref */
	uint32_t cbr;
	uint32_t last_ctc; /* CTC bits covered by MTC payloads */
	int have_ctc;
	int have_tsc;
	int tma_ok; /* a TSC came since the sync, and no TMA after it: a
		     * TMA may come (libipt: one TMA a TSC, none without) */
	uint64_t last_time;           /* of the last event (time_forward()) */
	uint64_t conv_tsc, conv_time; /* last conversion */
	int conv_valid;
	uint64_t adv_time; /* time of the last resolved branch */
	int time_exact;    /* a TSC/MTC came: the next branch resolved by a
			    * packet is STRACE_F_TIME_EXACT */
};

/* Event times never go backwards within a stream: a time a little
 * earlier than the last (an MTC or CYC estimate ran ahead of the next TSC)
 * is raised to it. A jump back by more than perf's TSC slip (0x10000
 * ticks) means the later times so far came from a damaged timing packet:
 * the new time is believed, as perf does. Both decoders use it. */
static inline uint64_t time_forward(const struct strace_time_conv *tc,
				    uint64_t *last, uint64_t t)
{
	if (unlikely(t < *last)) {
		uint64_t slip = !tc->time_mult ? 0x10000
				: tc->time_shift < 64
					? (0x10000ull * tc->time_mult) >>
						  tc->time_shift
					: 0; /* see strace_tsc_to_perf_time() */
		if (*last - t <= slip)
			t = *last;
	}
	*last = t;
	return t;
}

/* strace_dec_time_convert() - the estimate in perf time, converted anew
 * (it moved since the last conversion) and kept; through time_forward(). */
uint64_t strace_dec_time_convert(struct strace_dec_time *t,
				 const struct strace_time_conv *tc);

/* time_now() - the time of an event resolved now: 0 before the first TSC
 * or without a conversion (o->has_time), else the estimate in perf time,
 * never before the last event's (time_forward()). */
static inline __attribute__((always_inline)) uint64_t
time_now(struct strace_dec_time *t, const struct strace_walk_opts *o)
{
	if (!t->have_tsc || !o->has_time)
		return 0;
	/* the estimate changes per timing packet, not per event */
	if (unlikely(t->tsc != t->conv_tsc || !t->conv_valid))
		return strace_dec_time_convert(t, &o->time);
	return time_forward(&o->time, &t->last_time, t->conv_time);
}

/* A TSC packet: the estimate and the MTC reference. */
static inline void time_on_tsc(struct strace_dec_time *t, uint64_t tsc)
{
	t->tsc = t->tsc_ref = tsc;
	t->cyc = 0;
	t->have_tsc = 1;
	t->tma_ok = 1;
	t->time_exact = 1;
}

/* strace_dec_time_on_tma() - a TMA packet: the CTC value at the TSC.
 * Returns 0, or -1 when no TSC came before it since the sync or another
 * TMA came since that TSC (the trace is damaged there). */
int strace_dec_time_on_tma(struct strace_dec_time *t, uint32_t ctc,
			   uint32_t fc);

/* An MTC packet (CTC bits [mtc_period + 7 : mtc_period]); ignored without
 * a TSC, a TMA, or the TSC/CTC ratio. */
static inline void time_on_mtc(struct strace_dec_time *t,
			       const struct strace_time_conv *tc,
			       uint8_t payload)
{
	uint32_t shift = tc->mtc_period, span, cur, delta;

	/* the period is a 4-bit field: a bigger one comes of a corrupt file */
	if (!t->have_tsc || !t->have_ctc || !tc->tsc_ctc_ratio_d || shift > 15)
		return;
	/* The MTC payload is CTC bits [shift + 7 : shift]: the CTC value
	 * now is the last one known (TMA or MTC) with those bits replaced
	 * and the bits below cleared, one wrap later if that went back. */
	span = 1u << (shift + 8);
	cur = (t->last_ctc & ~(span - 1)) | ((uint32_t)payload << shift);
	if (cur < t->last_ctc)
		cur += span;
	delta = cur - t->last_ctc;
	t->last_ctc = cur & 0xffffu;
	t->tsc_ref += (uint64_t)delta * tc->tsc_ctc_ratio_n /
		      tc->tsc_ctc_ratio_d;
	t->tsc = t->tsc_ref;
	t->cyc = 0;
	t->time_exact = 1;
}

/* A CYC packet: core cycles since the last TSC/MTC; ignored before a CBR
 * or without the non-turbo ratio. */
static inline void time_on_cyc(struct strace_dec_time *t,
			       const struct strace_time_conv *tc,
			       uint64_t cycles)
{
	if (!t->have_tsc || !t->cbr || !tc->max_nonturbo_ratio)
		return;
	t->cyc += cycles;
	/* core cycles to TSC ticks: TSC runs at the non-turbo ratio */
	t->tsc = t->tsc_ref + t->cyc * tc->max_nonturbo_ratio / t->cbr;
}

/* A CBR packet: the core/bus ratio CYC packets are converted with. */
static inline void time_on_cbr(struct strace_dec_time *t, uint32_t cbr)
{
	t->cbr = cbr;
}

#endif
