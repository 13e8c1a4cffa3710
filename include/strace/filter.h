/* SPDX-License-Identifier: MIT */
/*
 * strace/filter.h - which events and frames a reader keeps: a time range
 * (perf's --time syntax), threads, processes, thread names, functions
 * (the subtree under them, like uftrace -F; or not, like -N) and DSOs.
 *
 * A filter is set up from strings, as a command line gives them, then
 * asked about each event (strace_filter_event) and, in stack views, about
 * each frame (strace_filter_frame). Every condition that is set must
 * hold; within one condition (several tids, several patterns) one
 * match is enough.
 *
 * Patterns are globs (fnmatch): "cmp", "qsort*", "*@plt". A thread name
 * is the THREAD entry's, else its process's; a DSO is matched by its file
 * name ("libc.so.6") or its path.
 *
 * Lifetimes: the filter keeps names (strace/names.h), which must outlive
 * it. Threading: one instance belongs to one thread at a time.
 */
#ifndef STRACE_FILTER_H
#define STRACE_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "names.h"
#include "stack.h"

#ifdef __cplusplus
extern "C" {
#endif

struct strace_filter;

/* strace_filter_new() - a filter that keeps everything, naming with
 * names. Returns 0 and *out, or -ENOMEM. */
int strace_filter_new(struct strace_names *names, struct strace_filter **out);

/* strace_filter_free() - NULL is fine. */
void strace_filter_free(struct strace_filter *f);

/* What a filter can be given (strace_filter_add). */
enum strace_filter_kind {
	STRACE_FILTER_TIME,   /* perf's --time: "START,END" in seconds (perf
			       * time; either may be empty), or percentages
			       * of the trace: "A%-B%[,C%-D%...]", "P%/N" (the
			       * Nth slice of P%) */
	STRACE_FILTER_TID,    /* "TID[,TID...]" */
	STRACE_FILTER_PID,    /* "PID[,PID...]" */
	STRACE_FILTER_COMM,   /* "PATTERN[,PATTERN...]": thread names */
	STRACE_FILTER_SYM,    /* "PATTERN[,...]": the subtree under the
			       * functions that match by their name or an
			       * alias (strace_names_aliases(), as written
			       * or without @VERSION) */
	STRACE_FILTER_NO_SYM, /* "PATTERN[,...]": not the subtree under the
			       * functions that match */
	STRACE_FILTER_DSO,    /* "PATTERN[,...]": events and frames whose
			       * address lies in a matching DSO */
	STRACE_FILTER_CALLER, /* "PATTERN[,...]": stack views show the
			       * functions that match and their callers,
			       * not what they call (uftrace's -C); see
			       * strace_filter_caller() */
};

/*
 * strace_filter_add() - one more condition, from a string. Several of
 * one kind add to it.
 * Returns 0.
 * Returns -STRACE_E_BADARG if the string does not parse; err (len bytes,
 * may be NULL) receives why, e.g. "'12x': not a number of seconds".
 * Returns -ENOMEM if memory runs out.
 */
int strace_filter_add(struct strace_filter *f, enum strace_filter_kind kind,
		      const char *value, char *err, size_t len);

/*
 * strace_filter_needs_span() - 1 when the time range is given in
 * percentages: the reader must then say what the trace's time span is,
 * with strace_filter_set_span(), before asking about events.
 */
int strace_filter_needs_span(const struct strace_filter *f);
void strace_filter_set_span(struct strace_filter *f, uint64_t first,
			    uint64_t last);

/*
 * strace_filter_time_window() - the time the time range covers, from the
 * start of its first range to the end of its last (*to is UINT64_MAX
 * when it has no end): what a stack view clips its frames to
 * (strace_stack_opts.from, .to). Percentages count once the span is set.
 * Returns 1, or 0 when no time range is set.
 */
int strace_filter_time_window(const struct strace_filter *f, uint64_t *from,
			      uint64_t *to);

/* strace_filter_needs_stack() - 1 when --sym or --no-sym is set: the
 * reader then keeps call stacks and asks with strace_filter_in_scope(). */
int strace_filter_needs_stack(const struct strace_filter *f);

/*
 * strace_filter_needs_caller() - 1 when a STRACE_FILTER_CALLER is set: a
 * stack view then shows only the frames strace_filter_caller() takes and
 * their callers (strace_stack_opts.select).
 */
int strace_filter_needs_caller(const struct strace_filter *f);

/* strace_filter_caller() - 1 when frame fr's function matches a caller
 * pattern (by its name or an alias, as --sym matches). */
int strace_filter_caller(struct strace_filter *f,
			 const struct strace_frame *fr);

/* strace_filter_empty() - 1 when it keeps everything. */
int strace_filter_empty(const struct strace_filter *f);

/*
 * strace_filter_event() - 1 to keep event e by its time, thread, process,
 * thread name and DSO, else 0. Definitions and losses (events of no
 * thread's flow) are always kept; function conditions are not looked at
 * here (see strace_filter_in_scope).
 */
int strace_filter_event(struct strace_filter *f, const struct strace_event *e);

/*
 * strace_filter_in_scope() - 1 when a thread whose open frames are
 * frames[0..n) (outermost first) is inside the functions a --sym asks
 * for (or no --sym is set) and outside those of --no-sym; *depth
 * receives the depth of the outermost frame in scope (what a tree view
 * shows at depth 0).
 */
int strace_filter_in_scope(struct strace_filter *f,
			   const struct strace_frame *frames, size_t n,
			   uint32_t *depth);

/*
 * strace_filter_frame() - 1 to keep frame fr (its time, thread, process,
 * thread name and DSO); stack views ask this and strace_filter_in_scope()
 * of the frames up to it.
 */
int strace_filter_frame(struct strace_filter *f, const struct strace_frame *fr);

/*
 * strace_filter_unmatched() - the i-th (0, 1, ...) of the ids, patterns
 * and time ranges given (--tid, --pid, --comm, --sym, --no-sym, --dso,
 * --caller, --time) that matched nothing the filter was asked about so
 * far: no thread of the events, no function of the frames, no DSO of the
 * addresses, no event or frame in the range. *kind and *value (the
 * pattern; the id in decimal; the range as "START,END" in seconds, or
 * "A%-B%") are set; value is valid until the next call or the filter is
 * freed. A reader asks at the end,
 * to say which of the user's conditions found nothing.
 * Returns 1, or 0 when fewer than i + 1 matched nothing.
 */
int strace_filter_unmatched(struct strace_filter *f, size_t i,
			    enum strace_filter_kind *kind, const char **value);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_FILTER_H */
