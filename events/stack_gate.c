/* SPDX-License-Identifier: MIT */
/*
 * events/stack_gate.c - a call-stack builder's set-up (strace_stack_new,
 * _free) and its gate: which frames the caller's callbacks see
 * (opts.from, to, min_time, select), in front of them. The per-event
 * rules are events/stack.c's.
 */
#include <errno.h>
#include <stdlib.h>

#include "stack_internal.h"

/*
 * The gate (opts.from, to, min_time, select): which frames are shown.
 * The shown frames of a thread are always its outermost ones, t->shown
 * of them: showing a frame shows the frames under it first. A frame is
 * held (not entered yet) while it is not known whether it will be shown:
 * it is shown at once when it begins inside the window and select()
 * takes it (and no min_time); else when it is left, if it overlapped
 * the window, lasted min_time and select() takes it; and before then if
 * a frame it calls is shown. A held frame not shown by then never is.
 */

/* t's frames from t->shown up to i are entered, begun at from at the
 * earliest */
static void show(struct strace_stack *s, struct thr *t, uint32_t i)
{
	for (; t->shown <= i; t->shown++) {
		struct strace_frame *f = &frames_of(s, t)[t->shown];
		if (f->begin < s->from)
			f->begin = s->from;
		if (s->user.enter)
			s->user.enter(s->user.arg, f);
	}
}

/* the gate's enter: f, of its thread, was entered: on top, or a root
 * under shown frames */
static void gate_enter(void *arg, const struct strace_frame *cf)
{
	struct strace_stack *s = arg;
	struct strace_frame *f = (struct strace_frame *)(uintptr_t)cf;
	struct thr *t = thread_of(s, f->tid);

	if (!t)
		return;
	if (f->depth < t->shown) {
		/* a root found late under shown frames (root()): their
		 * caller */
		if (f->begin < s->from)
			f->begin = s->from;
		if (s->user.enter)
			s->user.enter(s->user.arg, f);
	} else if (f->begin >= s->from && f->begin <= s->to &&
		   (!s->select || s->select(s->select_arg, f)) &&
		   !s->min_time) {
		show(s, t, f->depth);
	}
}

/* the gate's leave: f, of its thread, is left (f->end set); the caller
 * sees it when it is shown */
static void gate_leave(void *arg, const struct strace_frame *cf)
{
	struct strace_stack *s = arg;
	struct strace_frame *f = (struct strace_frame *)(uintptr_t)cf;
	struct thr *t = thread_of(s, f->tid);

	if (!t)
		return;
	if (f->depth >= t->shown) {
		/* held: shown now if it passes */
		uint64_t b = f->begin > s->from ? f->begin : s->from;
		uint64_t e = f->end < s->to ? f->end : s->to;
		if (f->begin > s->to || (f->begin < s->from && e <= s->from) ||
		    (s->select && !s->select(s->select_arg, f)) ||
		    e - b < s->min_time)
			return;
		show(s, t, f->depth);
	}
	t->shown = f->depth;
	if (f->end > s->to)
		f->end = s->to;
	if (s->user.leave)
		s->user.leave(s->user.arg, f);
}

int strace_stack_new(struct strace_names *names,
		     const struct strace_stack_opts *opts,
		     const struct strace_stack_cb *cb,
		     struct strace_stack **out)
{
	struct strace_stack_opts o;
	struct strace_stack *s;
	int rc = strace_opts_load(&o, sizeof(o), opts);

	if (rc < 0)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->names = names;
	if (cb)
		s->cb = *cb;
	s->max_depth = o.max_depth ? o.max_depth : DEFAULT_DEPTH;
	s->machine = o.machine;
	if (o.to && o.to < o.from) {
		free(s);
		return -STRACE_E_BADARG;
	}
	if (o.from || o.to || o.min_time || o.select) {
		s->user = s->cb;
		s->cb = (struct strace_stack_cb){gate_enter, gate_leave, s};
	}
	s->from = o.from;
	s->to = o.to ? o.to : UINT64_MAX;
	s->min_time = o.min_time;
	s->select = o.select;
	s->select_arg = o.select_arg;
	s->sc = calloc(1u << SYMCACHE_BITS, sizeof(*s->sc));
	if (!s->sc || (o.inlines && stack_inline_new(s, &o) < 0)) {
		free(s->sc);
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void strace_stack_free(struct strace_stack *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nt; i++) {
		free(s->t[i].v);
		free(s->t[i].h);
		free(s->t[i].seeds);
	}
	stack_inline_free(s);
	free(s->t);
	free(s->map);
	free(s->sc);
	free(s);
}
