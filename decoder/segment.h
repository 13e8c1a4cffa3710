/* SPDX-License-Identifier: MIT */
/*
 * decoder/segment.h - decoding a stream in segments cut at PSBs, and
 * joining their events into what one sequential decode gives
 * (docs/decoder.md, "Parallel decode"). The parallel decode (parallel.c)
 * and the streaming decode (stream.c) are built on it. Not installed.
 *
 * A segment decodes on its own because the hardware compresses no return
 * across a PSB. What it cannot know is the state the sequential decode
 * would have at its start: its walker notes where its first trace_begin
 * is and what came before it (struct seg_notes), and the merge replaces
 * that trace_begin with what the sequential decode would have said there.
 *
 * Threading: a job and its walker belong to one thread at a time; the
 * merge runs on the caller's.
 */
#ifndef DECODER_SEGMENT_H
#define DECODER_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/evvec.h"
#include "decoder/walker.h"

/* What the sequential decode knows at a segment boundary. */
struct seg_state {
	int have_ip, enabled, pending_syscall, pending_ovf, begin_reason;
	int psb_off; /* walk_flow's */
	uint64_t ovf_offset;
};

struct seg_job {
	/* each job on its own cache lines: workers bump ev.n per event */
	_Alignas(128) size_t start, end;
	int last, has_next_fup;
	int spread; /* the worker spreads what it can
		     * (strace_dec_seg_spread()): the merge spreads times */
	uint64_t next_fup;
	size_t fup_at;
	struct evvec ev;
	long ret;
	/* from the segment's walker */
	struct seg_notes notes;
	struct seg_state end_state;
	struct strace_walk_stats st;
};

/*
 * strace_dec_seg_decode() - decode the segment [j->start, j->end) of buf
 * (len bytes in all) with w, a walker made with strace_dec_vec_push(),
 * into j->ev, from a fresh state (time, stats, begin reason): to the end
 * (a trace_end) if j->last, else on to the next PSB+'s FUP
 * (j->has_next_fup, j->next_fup at j->fup_at). Sets j->ret as
 * strace_walker_decode() returns (or the vector's -ENOMEM), j->notes,
 * j->end_state and j->st.
 */
void strace_dec_seg_decode(struct strace_walker *w, const uint8_t *buf,
			   size_t len, struct seg_job *j);

/*
 * strace_dec_seg_settle() - after strace_dec_seg_decode(), on the
 * worker's thread: what the merge would do to j's events that does not
 * depend on the segments before it, done (flags; runs marked plain, as
 * a sequential decode has them once taken), so that the merge, the one
 * thread every worker waits for, hands them on as they are. With named
 * (SEG_NAMED_SLOTS addresses, zero at first, one table per worker for
 * the segments it takes in order): STRACE_F_NAMED where it holds, for a
 * sink of these types (NULL: all) that asked (STRACE_WALK_NAMED_HINTS).
 */
#define SEG_NAMED_LOG 12
#define SEG_NAMED_SLOTS (1u << SEG_NAMED_LOG)
void strace_dec_seg_settle(struct seg_job *j, uint64_t *named,
			   const struct strace_typeset *types);

/*
 * strace_dec_seg_merge() - hand segment j's events to w's sink, its first
 * begin fixed up to what the sequential decode says given the state *S
 * at the segment's start (first_seg: the stream's first segment, taken as
 * it is); then *S becomes the state at its end, and j's stats are added
 * to w's. Times go through time_forward() of w.
 * Returns 0 or the sink's error.
 */
int strace_dec_seg_merge(struct strace_walker *w, struct seg_job *j,
			 int first_seg, struct seg_state *S);

/*
 * strace_dec_seg_end_overflow() - after the last segment j: an overflow
 * an earlier segment left pending in *S, with nothing after it, told as
 * the sequential decode tells it. Returns 0 or the sink's error.
 */
int strace_dec_seg_end_overflow(struct strace_walker *w,
				const struct seg_job *j, struct seg_state *S);

#endif
