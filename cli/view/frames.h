/* SPDX-License-Identifier: MIT */
/*
 * cli/view/frames.h - the stack views' side of the viewer formats: what
 * Chrome JSON, FXT, uftrace and SVG implement (struct view_format) and
 * what they use of their view (its state, options, names, output, and
 * frames named as every view names them). Private to cli/view/.
 */
#ifndef CLI_VIEW_FRAMES_H
#define CLI_VIEW_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "view.h"

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

#endif /* CLI_VIEW_FRAMES_H */
