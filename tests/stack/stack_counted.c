/* SPDX-License-Identifier: MIT */
/*
 * tests/stack/stack_counted.c - events/stack.c with its fast path
 * counting the events it takes (stack_fast_hits), its functions named
 * cnt_*: tests/stack/stackfast.c checks that its streams exercise the
 * fast path.
 */
unsigned long stack_fast_hits;
#define STRACE_STACK_FAST_HIT(n) (stack_fast_hits += (n))
#define strace_stack_new cnt_stack_new
#define strace_stack_free cnt_stack_free
#define strace_stack_feed cnt_stack_feed
#define strace_stack_end cnt_stack_end
#define strace_stack_frames cnt_stack_frames
#define strace_stack_stats cnt_stack_stats
#define strace_frame_name cnt_frame_name
#include "../../events/stack.c"
#include "../../events/stack_gate.c"
