/* SPDX-License-Identifier: MIT */
/*
 * cli/views.h - ptrace-read's stack views (docs/stacks.md): a call tree
 * with durations (like uftrace replay), a per-function report (like
 * uftrace report), collapsed stacks for flame graphs, and the viewer
 * formats (docs/viewing.md), each in a file of its own. Each is fed the
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
	VIEW_CHROME,  /* Chrome trace event JSON (cli/fmt_chrome.c) */
	VIEW_FXT,     /* Fuchsia trace format (cli/fmt_fxt.c) */
	VIEW_UFTRACE, /* a uftrace data directory (cli/fmt_uftrace.c) */
	VIEW_SVG,     /* an SVG flame graph (cli/fmt_svg.c) */
};

/* svg: the folded stacks merged (a flame graph), or every frame where it
 * ran, per thread, in time order (a flame chart) */
enum view_flame { VIEW_FLAME_MERGED, VIEW_FLAME_TIME };

enum view_sort { VIEW_SORT_TOTAL, VIEW_SORT_SELF, VIEW_SORT_CALLS };
enum view_by { VIEW_BY_FUNCTION, VIEW_BY_THREAD, VIEW_BY_DSO };

struct view_opts {
	int kind;          /* enum view_kind */
	uint32_t depth;    /* frames this deep and deeper (under the
			    * --sym scope) are not shown (0: all) */
	uint64_t min_time; /* frames shorter than this (ns) are not shown,
			    * nor their callees (uftrace -t; 0: all) */
	int sort;          /* report: enum view_sort */
	int by;            /* report: enum view_by */
	int weight_calls;  /* folded, svg merged: weigh by calls, not
			    * nanoseconds */
	int machine;       /* the machine's stack, not the person's
			    * (strace_stack_opts.machine) */
	const char *dir;   /* uftrace: the directory to write (-o) */
	int rows_only;     /* report: print nothing; view_report_rows()
			    * gives the rows */
	int flame;         /* svg: enum view_flame */
	double min_width;  /* svg: boxes narrower (in pixels of the
			    * 1200-pixel image) are left out and counted
			    * (0: only those of no width) */
	/* --inline: inlined functions as frames (strace_stack_opts.inlines;
	 * NULL: none) */
	int (*inlines)(void *arg, uint32_t tid, uint64_t addr,
		       const struct strace_stack_inline **out);
	void *inlines_arg;
};

/* svg: ptrace-read's min_width (--min-width), in pixels */
#define VIEW_MIN_WIDTH 0.1

struct view;

/* view_new() - a view printing to out, naming with names, keeping what
 * flt keeps (may be NULL). Returns 0, or -ENOMEM. */
int view_new(const struct view_opts *o, struct strace_names *names,
	     struct strace_filter *flt, struct out *out, struct view **v);

/* view_feed() - the next events, of types among seen (bit 1 << type % 64;
 * ~0: not known). Returns 0, -ENOMEM, or -1 when writing the output
 * failed (a message was printed). */
int view_feed(struct view *v, const struct strace_event *ev, size_t n,
	      uint64_t seen);

/* view_finish() - the end of the trace: every frame left; the report and
 * the folded stacks printed. Returns 0 or -1. */
int view_finish(struct view *v);

/*
 * A format of frames: what the viewer formats (Chrome JSON, FXT, uftrace,
 * SVG) implement, each in its own file; the view keeps the call stacks, the
 * filters and the names, and calls these in the order of the events:
 *   open    once, before any event; may keep state (view_set_state)
 *   event   every event, before the stacks see it (gaps, losses, thread
 *           names: what is not a frame); NULL: none. After
 *           view_set_event_types(), only the events of those types
 *   enter   a frame that is shown was entered, given the format's state
 *           (view_set_state(); the stacks call it directly when nothing
 *           is filtered). NULL (and leave NULL): the view collects the
 *           folded stacks, as -f folded, for finish to read
 *           (view_folded_each())
 *   leave   that frame is left (f->end is set; its callees have left)
 *   finish  the trace ended: every frame has left; write what remains
 *   close   free the state (after finish, or after an error)
 * open and finish return 0, or -1 after a message on stderr.
 */
struct view_format {
	int (*open)(struct view *v);
	void (*event)(struct view *v, const struct strace_event *e);
	void (*enter)(void *state, const struct strace_frame *f);
	void (*leave)(void *state, const struct strace_frame *f);
	int (*finish)(struct view *v);
	void (*close)(struct view *v);
};

extern const struct view_format view_chrome, view_fxt, view_uftrace;
/* -f svg: --flame merged (folded stacks), --flame time (frames) */
extern const struct view_format view_svg, view_svg_time;

/* What a format uses of its view. */
void *view_state(const struct view *v);
void view_set_state(struct view *v, void *state);
const struct view_opts *view_opts(const struct view *v);
struct strace_names *view_names(const struct view *v);
struct out *view_out(const struct view *v);
/* view_set_event_types() - call the format's event only for events of
 * these types (VIEW_TYPE_BIT(type) each; 0: every event, the default);
 * the stacks then take the others in batches, which is faster. Types
 * 64 and above share the bit of their value modulo 64 (ptwrite, 98,
 * that of lost, 34): a format's event looks at the type it gets. */
#define VIEW_TYPE_BIT(type) (1ull << ((type) & 63))
void view_set_event_types(struct view *v, uint64_t types);
/* view_fail() - a format's write failed (or memory ran out): the view
 * stops with err (-1 after a message on stderr, or -ENOMEM). */
void view_fail(struct view *v, int err);
/*
 * view_put_name() - the frame's name at p, as every view names frames:
 * its function, else "[dso]+0xOFF", else the address; "[syscall]" and
 * "[signal]" for those frames. Writes at most FMT_NAME_MAX + 64 bytes.
 */
char *view_put_name(struct view *v, char *p, const struct strace_frame *f);
/* view_name_id() - one number per distinct name view_put_name() gives:
 * a names id; VIEW_ID_UNKNOWN with the address (no symbol); VIEW_ID_SYSCALL
 * with the names id + 1 of the system call ("[syscall write]"), or alone
 * ("[syscall]": the producer could not tell which); VIEW_ID_SIGNAL */
#define VIEW_ID_UNKNOWN (1ull << 63)
#define VIEW_ID_SYSCALL (1ull << 62)
#define VIEW_ID_SIGNAL (1ull << 61)
/* an inlined frame's (--inline): its function's id, from here below
 * 2^32 (STRACE_FRAME_INLINE_ID; names ids stay under it) */
#define VIEW_ID_INLINED ((uint64_t)STRACE_FRAME_INLINE_ID)
uint64_t view_name_id(struct view *v, const struct strace_frame *f);
/* view_put_name_id() - the name of an id from view_name_id() */
char *view_put_name_id(struct view *v, char *p, uint64_t id);

/* view_frames_shown() - with filters, --depth or --min-time: 1 when the
 * view showed a frame so far (one passed them all), else 0; without
 * them, 0 (not counted). */
int view_frames_shown(const struct view *v);

/* A row of a report: what -f report prints on one line. */
struct view_row {
	const char *name; /* as the report names the row under Function,
			   * Thread or DSO (no DSO column); NUL-terminated */
	uint64_t calls, total, self, max; /* max: the longest call (ns) */
};

/*
 * view_report_rows() - the rows of a report view made with rows_only,
 * after view_finish(): those it would print, in its order (--sort).
 * *rows (names included) is the view's, valid until view_free().
 * Returns the number of rows; -ENOMEM; -EINVAL when v is not such a
 * view or view_finish() did not succeed.
 */
long view_report_rows(struct view *v, const struct view_row **rows);

/* view_put_duration() - "  1.234 us" (10 characters for a time below
 * 1000 s) as the report prints a time. */
char *view_put_duration(char *p, uint64_t ns);
/*
 * view_folded_each() - the stacks collected for a format without enter
 * (as -f folded prints them, in no order): fn(arg, ids, n, weight) for
 * each stack of a weight above 0, ids the view_name_id() of its n frames
 * from the outermost (valid during the call), weight its self time in
 * ns or its calls (view_opts weight_calls). Stops at fn's first return
 * other than 0 and returns it; else returns 0.
 */
int view_folded_each(struct view *v,
		     int (*fn)(void *arg, const uint64_t *ids, size_t n,
			       uint64_t weight),
		     void *arg);

/* view_stack_stats() - the stacks' counts. */
void view_stack_stats(const struct view *v, struct strace_stack_stats *st);

void view_free(struct view *v);

#endif /* CLI_VIEWS_H */
