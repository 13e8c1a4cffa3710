/* SPDX-License-Identifier: MIT */
/*
 * events/stack.c - call stacks from events (strace/stack.h); the rules
 * are in docs/stacks.md.
 *
 * Per thread: an array of open frames (outermost first) that grows to
 * max_depth, the OCaml handlers pushed, a pending asynchronous transfer,
 * and the stack_frame events of the attach until the first flow event.
 * Threads are found through a small open-addressing map, the last one
 * cached; call targets' symbols through a direct-mapped cache. The state
 * is in stack_internal.h; set-up and the gate (which frames are shown)
 * in stack_gate.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "stack_internal.h"

/* run(), the fast path: tests/stack/stack_nofast.c builds the oracle
 * without it, tests/stack/stack_counted.c counts what it takes */
#ifdef STRACE_STACK_NO_FAST
#define FAST 0
#else
#define FAST 1
#endif
#ifndef STRACE_STACK_FAST_HIT
#define STRACE_STACK_FAST_HIT(n) ((void)(n))
#endif

/* --- names ------------------------------------------------------------- */

/* The symbol cache matches the names (checked once per feed: names only
 * grow between batches). */
static void sym_sync(struct strace_stack *s)
{
	uint64_t gen;

	if (!s->names)
		return;
	gen = strace_names_generation(s->names);
	if (gen != s->sc_gen) {
		memset(s->sc, 0, (1u << SYMCACHE_BITS) * sizeof(*s->sc));
		s->sc_gen = gen;
	}
}

/* What code is to the person's stack: a PLT entry (NAME@plt, *ABS*+0x...@plt),
 * the PLT's lazy-binding header ([plt0]; with perf 6.1's names, _init's
 * symbol reaches over .plt: code in it but at its start), or else. */
enum { FN_OTHER, FN_STUB, FN_PLT0 };

static int fn_kind(const struct strace_name *fn, uint64_t addr)
{
	if (!fn)
		return FN_OTHER;
	if (fn->len > 4 && !memcmp(fn->str + fn->len - 4, "@plt", 4))
		return FN_STUB;
	if ((fn->len == 6 && !memcmp(fn->str, "[plt0]", 6)) ||
	    (fn->len == 5 && !memcmp(fn->str, "_init", 5) && addr != fn->key))
		return FN_PLT0;
	return FN_OTHER;
}

static __attribute__((noinline)) void
sym_slow(struct strace_stack *s, struct symcache *c, uint64_t addr)
{
	const struct strace_name *fn =
		s->names ? strace_names_symbol(s->names, addr) : NULL;

	c->addr = addr;
	c->fn = (uintptr_t)fn | 1 | (uintptr_t)fn_kind(fn, addr) << 1;
}

/* sym(), and what the code at addr is to the person's stack (fn_kind(),
 * kept in the cache entry's bits 1-2: names are 8-byte aligned) */
static inline __attribute__((always_inline)) const struct strace_name *
sym_kind(struct strace_stack *s, uint64_t addr, int *kind)
{
	struct symcache *c =
		&s->sc[(addr * 0x9e3779b97f4a7c15ull) >> (64 - SYMCACHE_BITS)];

	if (__builtin_expect(c->addr != addr || !c->fn, 0))
		sym_slow(s, c, addr);
	*kind = (int)(c->fn >> 1 & 3);
	return (const struct strace_name *)(c->fn & ~(uintptr_t)7);
}

static inline __attribute__((always_inline)) const struct strace_name *
sym(struct strace_stack *s, uint64_t addr)
{
	int kind;

	return sym_kind(s, addr, &kind);
}

const char *strace_frame_name(const struct strace_frame *f)
{
	if (f->kind == STRACE_FRAME_SYSCALL)
		return "[syscall]";
	if (f->kind == STRACE_FRAME_SIGNAL)
		return "[signal]";
	return f->fn ? f->fn->str : NULL;
}

/* --- threads ----------------------------------------------------------- */

static struct thr *thread(struct strace_stack *s, uint32_t tid)
{
	uint32_t mask, i;

	if (s->last && s->last->tid == tid)
		return s->last;
	if (2 * (s->nt + 1) > s->mapcap) {
		uint32_t cap = s->mapcap ? 2 * s->mapcap : 64;
		uint32_t *m = calloc(cap, sizeof(*m));
		if (!m)
			return NULL;
		for (uint32_t k = 0; k < s->nt; k++) {
			i = (s->t[k].tid * 0x9e3779b9u) & (cap - 1);
			while (m[i])
				i = (i + 1) & (cap - 1);
			m[i] = k + 1;
		}
		free(s->map);
		s->map = m;
		s->mapcap = cap;
	}
	mask = s->mapcap - 1;
	i = (tid * 0x9e3779b9u) & mask;
	while (s->map[i]) {
		if (s->t[s->map[i] - 1].tid == tid)
			return s->last = &s->t[s->map[i] - 1];
		i = (i + 1) & mask;
	}
	if (s->nt == s->tcap) {
		size_t cap = s->tcap;
		struct thr *t = strace_grow(s->t, &cap, sizeof(*t), 16);
		if (!t)
			return NULL;
		s->t = t;
		s->tcap = (uint32_t)cap;
		s->last = NULL; /* the array moved */
	}
	memset(&s->t[s->nt], 0, sizeof(s->t[s->nt]));
	s->t[s->nt].tid = tid;
	s->map[i] = ++s->nt;
	s->st.threads = s->nt;
	return s->last = &s->t[s->nt - 1];
}

/* --- frames ------------------------------------------------------------ */


static void enter_cb(struct strace_stack *s, const struct strace_frame *f)
{
	s->st.frames++;
	if (s->cb.enter)
		s->cb.enter(s->cb.arg, f);
}

/* Room for one more frame at the top (or at the bottom): NULL when the
 * thread is at max_depth (the frame is then counted in t->extra). */
static __attribute__((noinline)) struct strace_frame *
grow_slow(struct strace_stack *s, struct thr *t)
{
	{
		uint32_t cap = t->cap ? 2 * t->cap : 32;
		struct strace_frame *v;
		if (cap > s->max_depth)
			cap = s->max_depth;
		if (t->n >= cap)
			return NULL;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			s->err = -ENOMEM;
			return NULL;
		}
		t->v = v;
		t->cap = cap;
	}
	return &t->v[t->n];
}

static inline struct strace_frame *grow(struct strace_stack *s, struct thr *t)
{
	if (__builtin_expect(t->n < t->cap, 1))
		return &t->v[t->n];
	return grow_slow(s, t);
}

/* A frame entered at depth of thread tid: its fields (fn: its symbol) */
static inline void frame_set(struct strace_frame *f, uint32_t tid,
			     uint32_t depth, uint16_t kind, uint16_t flags,
			     const struct strace_name *fn, uint64_t addr,
			     uint64_t call_site, uint64_t time)
{
	f->fn = fn;
	f->addr = addr;
	f->call_site = call_site;
	f->begin = time;
	f->end = 0;
	f->tid = tid;
	f->depth = depth;
	f->kind = kind;
	f->flags = flags;
	f->handlers = 0;
	f->user[0] = f->user[1] = 0;
}

/* f was entered, the top of its thread: the deepest stack, the callback */
static inline void entered(struct strace_stack *s,
			   const struct strace_frame *f)
{
	if (f->depth + 1 > s->st.max_depth)
		s->st.max_depth = f->depth + 1;
	enter_cb(s, f);
}

/* A frame for addr on top of t; pending: a PLT stub's, entered once it
 * reaches its function (t->pend), not now. */
static inline void push_frame(struct strace_stack *s, struct thr *t,
			      uint16_t kind, uint16_t flags, uint64_t addr,
			      uint64_t call_site, uint64_t time, int pending)
{
	struct strace_frame *f;

	if (t->extra || !(f = grow(s, t))) {
		t->extra++;
		s->st.truncated++;
		if (t->n)
			t->v[t->n - 1].flags |= STRACE_FRAME_TRUNCATED;
		return;
	}
	frame_set(f, t->tid, t->n, kind, flags,
		  kind == STRACE_FRAME_SYSCALL || kind == STRACE_FRAME_SIGNAL
			  ? NULL
			  : sym(s, addr),
		  addr, call_site, time);
	t->syscalls += kind == STRACE_FRAME_SYSCALL;
	t->n++;
	if (pending)
		t->pend = 1;
	else
		entered(s, f);
}

static inline void push(struct strace_stack *s, struct thr *t, uint16_t kind,
			uint16_t flags, uint64_t addr, uint64_t call_site,
			uint64_t time)
{
	push_frame(s, t, kind, flags, addr, call_site, time, 0);
}

/* f, the top frame of t, leaves at time with flags added: depth frames
 * remain */
static inline void left(struct strace_stack *s, struct thr *t,
			struct strace_frame *f, uint32_t depth, uint64_t time,
			uint16_t flags)
{
	t->n = depth;
	/* its OCaml handlers go with it */
	while (t->nh && t->h[t->nh - 1].frame >= depth)
		t->nh--;
	f->end = time < f->begin ? f->begin : time;
	f->flags |= flags;
	if (s->cb.leave)
		s->cb.leave(s->cb.arg, f);
}

/* The top frame leaves at time, with flags added. */
static void pop(struct strace_stack *s, struct thr *t, uint64_t time,
		uint16_t flags)
{
	struct strace_frame *f;

	if (t->extra) {
		t->extra--;
		return;
	}
	if (!t->n)
		return;
	f = &t->v[t->n - 1];
	t->syscalls -= f->kind == STRACE_FRAME_SYSCALL;
	left(s, t, f, t->n - 1, time, flags);
}

/* --- the person's stack: PLT stubs and lazy binding ---------------------- */

/* The lazy binding as one frame under the top frame: the resolver's (or
 * the PLT header's, if it went no further), from the binding's start to
 * time, without the resolver's callees. */
static void lazy_frame(struct strace_stack *s, struct thr *t, uint64_t time)
{
	struct strace_frame *f;

	t->lazy = 0;
	t->lazy_depth = 0;
	if (t->extra || !(f = grow(s, t)))
		return;
	frame_set(f, t->tid, t->n, STRACE_FRAME_ENTRY, STRACE_FRAME_TAIL,
		  t->lazy_fn, t->lazy_addr, 0, t->lazy_begin);
	t->n++;
	entered(s, f);
	pop(s, t, time, 0);
}

/* The pending stub's frame (the top) reached its function: it becomes
 * fn's (at to) and is entered, with the lazy binding that led there. */
static void reach(struct strace_stack *s, struct thr *t, uint64_t to,
		  const struct strace_name *fn, uint64_t time)
{
	struct strace_frame *f = &t->v[t->n - 1];

	f->fn = fn;
	f->addr = fn ? fn->key : to;
	t->pend = 0;
	entered(s, f);
	if (t->lazy)
		lazy_frame(s, t, time);
}

/* The pending stub's frame is entered as it is, its binding cut short
 * at time (a gap, a signal, the end, a return from the stub). */
static void settle(struct strace_stack *s, struct thr *t, uint64_t time)
{
	t->pend = 0;
	entered(s, &t->v[t->n - 1]);
	if (t->lazy)
		lazy_frame(s, t, time);
}

/*
 * An event of a thread whose top frame is a pending stub's: the stub's
 * jump into the PLT's header (the lazy binding begins), the header's into
 * the resolver, the resolver's calls and returns (none a frame), its jump
 * to the function bound, or the stub's own jump to its function. Returns
 * 1 when e was that; else the stub's frame is settled and the caller
 * takes e.
 */
static int pending_event(struct strace_stack *s, struct thr *t,
			 const struct strace_event *e)
{
	const struct strace_name *fn;
	uint64_t to = e->b;
	int kind;

	switch (e->type) {
	case STRACE_EV_CALL:
		if (t->lazy != 2)
			break;
		t->lazy_depth++;
		return 1;
	case STRACE_EV_RETURN:
		if (t->lazy != 2 || !t->lazy_depth)
			break;
		t->lazy_depth--;
		return 1;
	case STRACE_EV_JUMP:
		if (e->flags & STRACE_F_INTRA)
			return 1;
		fn = sym_kind(s, to, &kind);
		if (t->lazy == 1) {
			/* the PLT's header goes into the resolver */
			t->lazy = 2;
			t->lazy_addr = to;
			t->lazy_fn = fn;
			return 1;
		}
		if (t->lazy == 2) {
			/* the resolver goes to the function it bound */
			if (!t->lazy_depth && fn && fn->key == to)
				reach(s, t, to, fn, e->time);
			return 1;
		}
		if (kind == FN_PLT0) {
			t->lazy = 1;
			t->lazy_depth = 0;
			t->lazy_begin = e->time;
			t->lazy_addr = to;
			t->lazy_fn = fn;
			return 1;
		}
		reach(s, t, to, fn, e->time);
		return 1;
	}
	settle(s, t, e->time);
	return 0;
}

/* Frames above index i leave (unwound); frame i stays the top. */
static void unwind_to(struct strace_stack *s, struct thr *t, uint32_t i,
		      uint64_t time)
{
	while (t->extra)
		pop(s, t, time, STRACE_FRAME_UNWOUND);
	while (t->n > i + 1) {
		pop(s, t, time, STRACE_FRAME_UNWOUND);
		s->st.unwinds++;
	}
}

/*
 * A ROOT frame for the function of addr under every frame of the thread
 * (they shift one deeper), begun at the thread's first event. Returns 0
 * when the thread has no room (its frames are then left as they are).
 */
static int root(struct strace_stack *s, struct thr *t, uint64_t addr)
{
	struct strace_frame *f;
	const struct strace_name *fn = sym(s, addr);

	while (t->extra)
		pop(s, t, t->last, STRACE_FRAME_UNWOUND);
	if (t->n == s->max_depth)
		pop(s, t, t->last, STRACE_FRAME_UNWOUND);
	if (!grow(s, t))
		return 0;
	memmove(&t->v[1], &t->v[0], t->n * sizeof(*t->v));
	for (uint32_t i = 1; i <= t->n; i++)
		t->v[i].depth = i;
	for (uint32_t i = 0; i < t->nh; i++)
		t->h[i].frame++;
	t->n++;
	if (t->n > s->st.max_depth)
		s->st.max_depth = t->n;
	f = &t->v[0];
	memset(f, 0, sizeof(*f));
	f->fn = fn;
	f->addr = fn ? fn->key : addr;
	f->begin = t->first;
	f->tid = t->tid;
	f->kind = STRACE_FRAME_ROOT;
	f->flags = STRACE_FRAME_LATE;
	if (t->shown) /* under frames shown: shown with them */
		t->shown++;
	enter_cb(s, f);
	return 1;
}

/* The innermost frame whose function covers addr, or -1. */
static long frame_covering(const struct thr *t, uint64_t addr)
{
	for (long i = (long)t->n - 1; i >= 0; i--)
		if (covers(&t->v[i], addr))
			return i;
	return -1;
}

/* The syscall on top returned: any flow event of the thread says so. */
static inline void end_syscall(struct strace_stack *s, struct thr *t,
			       uint64_t time)
{
	if (__builtin_expect(t->syscalls, 0) && !t->extra && t->n &&
	    t->v[t->n - 1].kind == STRACE_FRAME_SYSCALL)
		pop(s, t, time, 0);
}

/* The interrupted code goes on at ip: a signal frame interrupted there
 * ends (rt_sigreturn came back), with everything above it. */
static void resume(struct strace_stack *s, struct thr *t, uint64_t ip,
		   uint64_t time)
{
	for (long i = (long)t->n - 1; i >= 0; i--) {
		if (t->v[i].kind != STRACE_FRAME_SIGNAL)
			continue;
		if (t->v[i].call_site != ip)
			return; /* the innermost signal is not over */
		while (t->n > (uint32_t)i + 1)
			pop(s, t, time, 0);
		pop(s, t, time, 0);
		return;
	}
}

/* The stack_frame events of the attach become the bottom frames, the
 * outermost first, begun at the thread's first event. */
static void seed(struct strace_stack *s, struct thr *t)
{
	/* deepest (outermost) first */
	for (uint32_t i = 0; i < t->nseeds; i++)
		for (uint32_t k = i + 1; k < t->nseeds; k++)
			if (t->seeds[k].depth > t->seeds[i].depth) {
				struct seed x = t->seeds[i];
				t->seeds[i] = t->seeds[k];
				t->seeds[k] = x;
			}
	for (uint32_t i = 0; i < t->nseeds; i++) {
		const struct strace_name *fn = sym(s, t->seeds[i].ip);
		/* a frame returns to where its caller's frame stopped */
		uint64_t ret = i ? t->seeds[i - 1].ip : 0;
		push(s, t, STRACE_FRAME_SEED, 0, fn ? fn->key : t->seeds[i].ip,
		     ret, t->first);
	}
	free(t->seeds);
	t->seeds = NULL;
	t->nseeds = t->seeds_cap = 0;
}

/* --- events ------------------------------------------------------------ */

/*
 * The thread runs code at from (a branch's source): when that lies outside
 * the top frame's function, the frame went on into another function
 * without a call (it fell through into the next symbol, or jumped into
 * the middle of one: _start into _dl_start_user, foo into foo.cold). The
 * frame then is that function's: the old one is left and the new one
 * entered in its place, returning where it would have.
 */
static __attribute__((noinline)) void moved_slow(struct strace_stack *s,
						  struct thr *t,
						  struct strace_frame *f,
						  uint64_t from, uint64_t time)
{
	const struct strace_name *fn;

	if (f->kind == STRACE_FRAME_SYSCALL || f->kind == STRACE_FRAME_SIGNAL)
		return;
	fn = sym(s, from);
	if (fn == f->fn || (!fn && !f->fn))
		return;
	struct strace_frame top = *f;
	pop(s, t, time, STRACE_FRAME_TAIL);
	push(s, t, top.kind, STRACE_FRAME_TAIL, fn ? fn->key : from,
	     top.call_site, time);
	t->v[t->n - 1].handlers = top.handlers;
}

/* (usually the branch leaves from the top frame's function: inline) */
static inline __attribute__((always_inline)) void
moved(struct strace_stack *s, struct thr *t, uint64_t from, uint64_t time)
{
	struct strace_frame *f;

	if (!t->n || t->extra || !from)
		return;
	f = &t->v[t->n - 1];
	if (covers(f, from))
		return;
	/* code without a symbol (a stripped program) going on in a frame
	 * without one: the same */
	if (!f->fn && !sym(s, from))
		return;
	moved_slow(s, t, f, from, time);
}

/* Whether f, the top of n frames, is a callee a tail call entered (the
 * person's stack): it returns where the frame under it, which jumped to
 * it, would have. */
static inline int tail_callee(const struct strace_frame *f, uint32_t n)
{
	return n > 1 && (f->flags & STRACE_FRAME_TAIL) &&
	       f->kind == STRACE_FRAME_CALL && f[-1].kind == STRACE_FRAME_CALL &&
	       f->call_site && f[-1].call_site == f->call_site;
}

static void on_return(struct strace_stack *s, struct thr *t,
		      const struct strace_event *e)
{
	uint64_t to = e->b;
	long i;

	if (t->extra) { /* the deepest frame, not kept, returns */
		t->extra--;
		return;
	}
	/* the frame whose call it returns after, innermost first */
	for (i = (long)t->n - 1; i >= 0; i--) {
		const struct strace_frame *f = &t->v[i];
		if (f->kind == STRACE_FRAME_SEED
			    ? f->call_site && to == f->call_site
			    : f->call_site && f->kind == STRACE_FRAME_CALL &&
				      to > f->call_site &&
				      to - f->call_site <= CALL_MAX)
			break;
	}
	if (i >= 0) {
		while (t->n > (uint32_t)i + 1) {
			pop(s, t, e->time, STRACE_FRAME_UNWOUND);
			s->st.unwinds++;
		}
		/* a tail call's callee returns with the frames that
		 * tail-called it (the person's stack) */
		while (!s->machine && !t->extra &&
		       tail_callee(&t->v[t->n - 1], t->n))
			pop(s, t, e->time, 0);
		pop(s, t, e->time, 0);
		return;
	}
	/* into a function deeper on the stack: an unwind (an OCaml raise
	 * lands with a return) */
	i = frame_covering(t, to);
	if (i >= 0 && i < (long)t->n - 1) {
		unwind_to(s, t, (uint32_t)i, e->time);
		return;
	}
	if (i >= 0)
		return; /* already there (after exc_raise) */
	/* a frame entered without a call (a handler, the first function)
	 * returns */
	if (t->n > 1 && (t->v[t->n - 1].kind == STRACE_FRAME_ENTRY ||
			 t->v[t->n - 1].kind == STRACE_FRAME_ROOT) &&
	    (covers(&t->v[t->n - 2], to) ||
	     t->v[t->n - 2].kind == STRACE_FRAME_SIGNAL)) {
		/* (a handler returns to the signal trampoline) */
		pop(s, t, e->time, 0);
		return;
	}
	/* no frame: the trace began inside the function it returns to,
	 * which becomes the thread's outermost frame; the top frame
	 * returned, and those between were left without a trace of it */
	s->st.roots++;
	if (!root(s, t, to))
		return;
	if (t->n > 1)
		pop(s, t, e->time, 0);
	while (t->n > 1) {
		pop(s, t, e->time, STRACE_FRAME_UNWOUND);
		s->st.unwinds++;
	}
}

/*
 * Whether a jump from from to to goes through the PLT, not back into a
 * caller: from a PLT stub (name@plt), or into code named _init (perf 6.1
 * extends _init's symbol over .plt, so the PLT's first entry, the lazy
 * binder's way in, and stubs it has no name for are "_init+0x..."). An
 * unwind (longjmp, a landing pad) never does either.
 */
static int through_plt(struct strace_stack *s, uint64_t from, uint64_t to)
{
	const struct strace_name *a = sym(s, from), *b = sym(s, to);

	return (a && a->len > 4 && !memcmp(a->str + a->len - 4, "@plt", 4)) ||
	       (b && b->len == 5 && !memcmp(b->str, "_init", 5));
}

/* The top frame (a call or an entry) went on into to's function by a
 * jump: it is left, and a frame for to entered, returning where it
 * would have. */
static void tail_call(struct strace_stack *s, struct thr *t, uint64_t to,
		      uint64_t time)
{
	uint16_t kind = t->v[t->n - 1].kind;
	uint64_t site = t->v[t->n - 1].call_site;

	s->st.tails++;
	pop(s, t, time, 0);
	push(s, t, kind, STRACE_FRAME_TAIL, to, site, time);
}

static void on_jump(struct strace_stack *s, struct thr *t,
		    const struct strace_event *e)
{
	uint64_t to = e->b;
	const struct strace_name *fn;
	int kind;
	long i;

	if (e->flags & STRACE_F_INTRA)
		return;
	fn = sym_kind(s, to, &kind);
	if (fn && fn->key == to && !(t->n && covers(&t->v[t->n - 1], to))) {
		/* to another function's entry: a tail call replaces the top
		 * frame and returns where it would have */
		if (t->extra || !t->n ||
		    t->v[t->n - 1].kind == STRACE_FRAME_SYSCALL ||
		    t->v[t->n - 1].kind == STRACE_FRAME_SIGNAL) {
			s->st.tails++;
			push(s, t, STRACE_FRAME_ENTRY, STRACE_FRAME_TAIL, to, 0,
			     e->time);
			return;
		}
		if (!s->machine && t->v[t->n - 1].kind == STRACE_FRAME_CALL &&
		    t->v[t->n - 1].call_site) {
			/* the person's stack: the callee of the frame that
			 * jumped, both returning where it would have (a
			 * stub's, pending until it reaches its function) */
			s->st.tails++;
			push_frame(s, t, STRACE_FRAME_CALL, STRACE_FRAME_TAIL, to,
				   t->v[t->n - 1].call_site, e->time,
				   kind == FN_STUB);
			return;
		}
		tail_call(s, t, to, e->time);
		return;
	}
	/* into the middle of a function deeper on the stack: an unwind
	 * (longjmp, a C++ landing pad); elsewhere (a .cold part) the top
	 * frame goes on in that function */
	i = frame_covering(t, to);
	if (i >= 0 && i < (long)t->n - 1 && !through_plt(s, e->a, to))
		unwind_to(s, t, (uint32_t)i, e->time);
	else if (i != (long)t->n - 1)
		moved(s, t, to, e->time);
}

static void on_begin(struct strace_stack *s, struct thr *t,
		     const struct strace_event *e)
{
	uint64_t ip = e->a;

	if (t->async) {
		t->async = 0;
		if (ip != t->async_ip) {
			/* a signal handler: the kernel entered it */
			push(s, t, STRACE_FRAME_SIGNAL, 0, ip, t->async_ip,
			     t->async_time);
			push(s, t, STRACE_FRAME_ENTRY, 0, ip, 0, e->time);
			return;
		}
	}
	resume(s, t, ip, e->time);
}

/*
 * A return from the kernel: to the instruction after the syscall (a
 * syscall instruction is 2 bytes) as usual; to code a signal interrupted
 * (rt_sigreturn ends the signal); or elsewhere: a signal was delivered as
 * the syscall returned, and its handler starts there.
 */
static void on_sysret(struct strace_stack *s, struct thr *t,
		      const struct strace_event *e)
{
	uint64_t site = 0;

	if (t->syscalls && !t->extra && t->n &&
	    t->v[t->n - 1].kind == STRACE_FRAME_SYSCALL) {
		site = t->v[t->n - 1].addr + 2;
		pop(s, t, e->time, 0);
	}
	if (!site || e->b == site)
		return;
	for (long i = (long)t->n - 1; i >= 0; i--)
		if (t->v[i].kind == STRACE_FRAME_SIGNAL) {
			if (t->v[i].call_site == e->b) {
				resume(s, t, e->b, e->time);
				return;
			}
			break;
		}
	push(s, t, STRACE_FRAME_SIGNAL, 0, e->b, site, e->time);
	push(s, t, STRACE_FRAME_ENTRY, 0, e->b, 0, e->time);
}

/* The gap events: what ran then is not in the trace. */
static void gap(struct strace_stack *s, struct thr *t)
{
	s->st.gaps++;
	for (uint32_t i = 0; i < t->n; i++)
		t->v[i].flags |= STRACE_FRAME_GAP;
}

static int add_seed(struct strace_stack *s, struct thr *t,
		    const struct strace_event *e)
{
	if (t->nseeds >= s->max_depth)
		return 0;
	if (t->nseeds == t->seeds_cap) {
		size_t cap = t->seeds_cap;
		struct seed *v = strace_grow(t->seeds, &cap, sizeof(*v), 16);
		if (!v)
			return -ENOMEM;
		t->seeds = v;
		t->seeds_cap = (uint32_t)cap;
	}
	t->seeds[t->nseeds].ip = e->a;
	t->seeds[t->nseeds].depth = e->b;
	t->nseeds++;
	return 0;
}

static void close_all(struct strace_stack *s, struct thr *t, uint64_t time)
{
	if (t->pend)
		settle(s, t, time);
	while (t->extra || t->n)
		pop(s, t, time, STRACE_FRAME_CLOSED);
	t->nh = 0;
	t->async = 0;
}

static void on_exc(struct strace_stack *s, struct thr *t,
		   const struct strace_event *e)
{
	if (e->type == STRACE_EV_EXC_PUSH) {
		if (!t->n)
			return;
		if (t->nh == t->hcap) {
			size_t cap = t->hcap;
			struct handler *h;
			/* no deeper than max_depth: the doubling past it is
			 * refused before it is asked for */
			if ((t->hcap ? 2 * (size_t)t->hcap : 16) > s->max_depth)
				return;
			h = strace_grow(t->h, &cap, sizeof(*h), 16);
			if (!h) {
				s->err = -ENOMEM;
				return;
			}
			t->h = h;
			t->hcap = (uint32_t)cap;
		}
		t->h[t->nh].addr = e->b;
		t->h[t->nh].frame = t->n - 1;
		t->nh++;
		t->v[t->n - 1].handlers++;
	} else if (e->type == STRACE_EV_EXC_POP) {
		if (t->nh) {
			t->nh--;
			if (t->h[t->nh].frame < t->n)
				t->v[t->h[t->nh].frame].handlers--;
		}
	} else if (t->nh) { /* raise: to the frame of the innermost handler */
		uint32_t f = t->h[t->nh - 1].frame;
		t->nh--;
		if (f < t->n) {
			t->v[f].handlers--;
			unwind_to(s, t, f, e->time);
		}
	}
}

static __attribute__((noinline)) void event(struct strace_stack *s,
					    const struct strace_event *e)
{
	struct thr *t;
	unsigned type = e->type;

	if (type == STRACE_EV_LOST && !e->tid) {
		/* a loss of the ring's: every thread has a gap */
		for (uint32_t i = 0; i < s->nt; i++)
			gap(s, &s->t[i]);
		return;
	}
	if (type == STRACE_EV_PAD || type == STRACE_EV_CPU ||
	    type >= STRACE_EV_MAX ||
	    (type >= STRACE_EV_PROCESS && type <= STRACE_EV_SYMBOL &&
	     type != STRACE_EV_THREAD_EXIT))
		return;
	t = thread(s, e->tid);
	if (!t) {
		s->err = -ENOMEM;
		return;
	}
	if (!t->first)
		t->first = e->time;
	if (e->time > t->last)
		t->last = e->time;
	if (type == STRACE_EV_STACK_FRAME) {
		if (!t->started && add_seed(s, t, e) < 0)
			s->err = -ENOMEM;
		return;
	}
	if (!t->started) {
		t->started = 1;
		if (t->nseeds)
			seed(s, t);
		else if (type == STRACE_EV_TRACE_BEGIN && e->a)
			/* the function the thread's trace starts in */
			push(s, t, STRACE_FRAME_ENTRY, 0, e->a, 0, e->time);
	}
	if (t->pend && pending_event(s, t, e))
		return;
	switch (type) {
	case STRACE_EV_CALL: {
		int kind;
		const struct strace_name *callee;

		end_syscall(s, t, e->time);
		t->async = 0;
		moved(s, t, e->a, e->time);
		callee = sym_kind(s, e->b, &kind);
		/* a call to the next instruction, inside one function,
		 * reads the PC: no frame */
		if (e->b > e->a && e->b - e->a <= CALL_MAX &&
		    callee == sym(s, e->a))
			return;
		/* (the person's stack: a PLT stub's frame waits to be
		 * entered as the function it reaches) */
		push_frame(s, t, STRACE_FRAME_CALL, 0, e->b, e->a, e->time,
			   !s->machine && kind != FN_OTHER);
		return;
	}
	case STRACE_EV_RETURN:
		end_syscall(s, t, e->time);
		t->async = 0;
		on_return(s, t, e);
		return;
	case STRACE_EV_JUMP:
		end_syscall(s, t, e->time);
		t->async = 0;
		moved(s, t, e->a, e->time);
		on_jump(s, t, e);
		return;
	case STRACE_EV_SYSCALL:
		end_syscall(s, t, e->time);
		t->async = 0;
		moved(s, t, e->a, e->time);
		push(s, t, STRACE_FRAME_SYSCALL, 0, e->a, e->a, e->time);
		return;
	case STRACE_EV_SYSRET:
		on_sysret(s, t, e);
		return;
	case STRACE_EV_INTERRUPT:
		end_syscall(s, t, e->time);
		t->async = 1;
		t->async_ip = e->a;
		t->async_time = e->time;
		return;
	case STRACE_EV_TRACE_BEGIN:
		end_syscall(s, t, e->time);
		on_begin(s, t, e);
		return;
	case STRACE_EV_TRACE_END:
	case STRACE_EV_OVERFLOW:
	case STRACE_EV_ERROR:
	case STRACE_EV_LOST:
		if (type != STRACE_EV_TRACE_END ||
		    e->b != STRACE_REASON_END)
			gap(s, t);
		return;
	case STRACE_EV_THREAD_EXIT:
		close_all(s, t, e->time);
		return;
	case STRACE_EV_EXC_PUSH:
	case STRACE_EV_EXC_POP:
	case STRACE_EV_EXC_RAISE:
		on_exc(s, t, e);
		return;
	}
}

/* whether a branch from from leaves from the top frame f's function
 * (moved() has nothing to do) */
static inline int stays(struct strace_stack *s, const struct strace_frame *f,
			uint64_t from)
{
	return !from || covers(f, from) || (!f->fn && !sym(s, from));
}

/*
 * The usual events of the thread of the last one, from e on, while it is
 * plain, taken without event()'s tests (the same rules, where they come
 * to nothing): a call from the top frame's function to another's, a
 * return after the top frame's call, a jump inside the top frame's
 * function or to another function's entry (a tail call). Few values live
 * across the callbacks (they stay in registers). Returns where it
 * stopped: at end, or at an event for event().
 */
static const struct strace_event *run(struct strace_stack *s,
				      const struct strace_event *e,
				      const struct strace_event *end)
{
	struct thr *t = s->last;
	const struct strace_event *from = e;
	struct strace_frame *f;
	const struct strace_name *fn;
	int k;
	uint32_t depth, tid;

	if (!t || !t->plain || !t->n)
		return e;
	depth = t->n;
	tid = t->tid;
	f = &t->v[depth - 1]; /* the top frame (the array cannot move here) */
	for (; e < end; e++) {
		if (e->tid != tid || !depth)
			break;
		if (t->pend) {
			/* the top frame is a PLT stub's (the person's stack):
			 * its jump to a function's entry reaches it (reach());
			 * anything else (the lazy binding) is event()'s */
			if (e->type != STRACE_EV_JUMP ||
			    (e->flags & STRACE_F_INTRA))
				break;
			fn = sym_kind(s, e->b, &k);
			if (!fn || fn->key != e->b || k != FN_OTHER)
				break;
			f->fn = fn;
			f->addr = e->b;
			t->pend = 0;
			entered(s, f);
			goto next;
		}
		if (e->type == STRACE_EV_RETURN) {
			if (f->kind != STRACE_FRAME_CALL || !f->call_site ||
			    e->b <= f->call_site ||
			    e->b - f->call_site > CALL_MAX)
				break;
			/* (the person's stack: with the frames that
			 * tail-called it) */
			while (!s->machine && tail_callee(f, depth)) {
				left(s, t, f, --depth, e->time, 0);
				f--;
			}
			left(s, t, f, --depth, e->time, 0);
			if (depth)
				f--;
		} else if (e->type == STRACE_EV_CALL) {
			/* (a call to the next instruction reads the PC, and
			 * a full array grows: event()) */
			if (!stays(s, f, e->a) ||
			    (e->b > e->a && e->b - e->a <= CALL_MAX) ||
			    depth == t->cap)
				break;
			fn = sym_kind(s, e->b, &k);
			if (!s->machine && k == FN_PLT0)
				break; /* the PLT's header called: event() */
			f++;
			frame_set(f, tid, depth, STRACE_FRAME_CALL, 0, fn, e->b,
				  e->a, e->time);
			t->n = ++depth;
			/* (the person's stack: a PLT stub's frame waits to be
			 * entered as the function it reaches) */
			if (!s->machine && k == FN_STUB)
				t->pend = 1;
			else
				entered(s, f);
		} else if (e->type == STRACE_EV_JUMP) {
			uint16_t kind = f->kind;
			uint64_t site = f->call_site;
			if (!stays(s, f, e->a))
				break;
			if ((e->flags & STRACE_F_INTRA) || covers(f, e->b))
				goto next; /* inside the function */
			fn = sym_kind(s, e->b, &k);
			if (!fn || fn->key != e->b || kind == STRACE_FRAME_SIGNAL)
				break;
			if (!s->machine) {
				/* a tail call, the person's stack: the callee
				 * of the frame that jumped (on_jump()) */
				if (kind != STRACE_FRAME_CALL || !site ||
				    k != FN_OTHER ||
				    depth == t->cap)
					break;
				s->st.tails++;
				f++;
				frame_set(f, tid, depth, STRACE_FRAME_CALL,
					  STRACE_FRAME_TAIL, fn, e->b, site,
					  e->time);
				t->n = ++depth;
				entered(s, f);
				goto next;
			}
			/* a tail call (tail_call()): the frame left, its slot
			 * the new one's */
			s->st.tails++;
			left(s, t, f, --depth, e->time, 0);
			frame_set(f, tid, depth, kind, STRACE_FRAME_TAIL, fn,
				  e->b, site, e->time);
			t->n = ++depth;
			entered(s, f);
		} else {
			break;
		}
next:
		if (e->time > t->last)
			t->last = e->time;
	}
	if (e > from)
		t->async = 0;
	return e;
}

int strace_stack_feed(struct strace_stack *s, const struct strace_event *ev,
		      size_t n)
{
	const struct strace_event *e = ev, *end = ev + n;
	struct thr *t;

	sym_sync(s);
	if (s->inl) {
		/* inlined frames: around each event, no fast path */
		for (; e < end; e++) {
			stack_inline_before(s, e);
			event(s, e);
			stack_inline_after(s, e);
		}
		s->st.events += n;
		return s->err;
	}
	while (e < end) {
		if (FAST) {
			const struct strace_event *k = run(s, e, end);
			STRACE_STACK_FAST_HIT(k - e);
			if ((e = k) == end)
				break;
		}
		event(s, e++);
		if ((t = s->last) != NULL)
			t->plain = t->started && t->first && !t->syscalls &&
				   !t->extra && !t->pend;
	}
	s->st.events += n;
	return s->err;
}

void strace_stack_end(struct strace_stack *s)
{
	for (uint32_t i = 0; i < s->nt; i++)
		close_all(s, &s->t[i], s->t[i].last);
}

size_t strace_stack_frames(struct strace_stack *s, uint32_t tid,
			   const struct strace_frame **out)
{
	struct thr *t = NULL;

	for (uint32_t i = 0; i < s->nt; i++)
		if (s->t[i].tid == tid)
			t = &s->t[i];
	if (t && s->inl) {
		*out = t->iv;
		return t->in;
	}
	*out = t ? t->v : NULL;
	return t ? t->n : 0;
}

void strace_stack_stats(const struct strace_stack *s,
			struct strace_stack_stats *st)
{
	*st = s->st;
}
