/* SPDX-License-Identifier: MIT */
/*
 * tests/stack/stack_nofast.c - events/stack.c without its fast path
 * (every event through event(), the rules as docs/stacks.md states them),
 * its functions named ref_*: the oracle of tests/stack/stackfast.c.
 */
#define STRACE_STACK_NO_FAST
#define strace_stack_new ref_stack_new
#define strace_stack_free ref_stack_free
#define strace_stack_feed ref_stack_feed
#define strace_stack_end ref_stack_end
#define strace_stack_frames ref_stack_frames
#define strace_stack_stats ref_stack_stats
#define strace_frame_name ref_frame_name
#include "../../events/stack.c"
#include "../../events/stack_gate.c"
