/* SPDX-License-Identifier: MIT */
/*
 * cli/views.h - ptrace-read's stack views (docs/stacks.md): a call tree
 * with durations (like uftrace replay), a per-function report (like
 * uftrace report), collapsed stacks for flame graphs. Each is fed the
 * events of a ring through strace_stack and prints to an out buffer;
 * memory is bounded by the stack depth and the distinct functions (or
 * stacks, for folded), not by the length of the trace.
 */
#ifndef CLI_VIEWS_H
#define CLI_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"
#include "strace/filter.h"
#include "strace/names.h"
#include "strace/stack.h"

enum view_kind {
	VIEW_TREE,
	VIEW_REPORT,
	VIEW_FOLDED,
};

enum view_sort { VIEW_SORT_TOTAL, VIEW_SORT_SELF, VIEW_SORT_CALLS };
enum view_by { VIEW_BY_FUNCTION, VIEW_BY_THREAD, VIEW_BY_DSO };

struct view_opts {
	int kind;          /* enum view_kind */
	uint32_t depth;    /* tree: frames this deep and deeper are not
			    * shown (0: all) */
	int sort;          /* report: enum view_sort */
	int by;            /* report: enum view_by */
	int weight_calls;  /* folded: weigh by calls, not nanoseconds */
	int no_comm;       /* tree: no thread names */
};

struct view;

/* view_new() - a view printing to out, naming with names, keeping what
 * flt keeps (may be NULL). Returns 0, or -ENOMEM. */
int view_new(const struct view_opts *o, struct strace_names *names,
	     struct strace_filter *flt, struct out *out, struct view **v);

/* view_feed() - the next events. Returns 0, -ENOMEM, or -1 when writing
 * the output failed (a message was printed). */
int view_feed(struct view *v, const struct strace_event *ev, size_t n);

/* view_finish() - the end of the trace: every frame left; the report and
 * the folded stacks printed. Returns 0 or -1. */
int view_finish(struct view *v);

/* view_stack_stats() - the stacks' counts. */
void view_stack_stats(const struct view *v, struct strace_stack_stats *st);

void view_free(struct view *v);

#endif /* CLI_VIEWS_H */
