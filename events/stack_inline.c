/* SPDX-License-Identifier: MIT */
/*
 * events/stack_inline.c - inlined functions as frames (opts.inlines,
 * docs/stacks.md "Inlined frames"), between the rules of stack.c and the
 * callbacks.
 *
 * The rules of stack.c keep only real frames (t->v): every rule that
 * matches a return to a call, a jump to a function or an unwind to a
 * frame stays as it was. Here, each thread has a second array, t->iv:
 * the real frames the callbacks saw, with the inlined frames open on each
 * of them above it, innermost on top; its entries are what the callbacks
 * get (their depth is their index there, so f[-1] ... stay the callers).
 * A real frame entered is added on top (or, a root found late, at the
 * bottom); a real frame left first leaves the inlined frames on it. Around
 * each event, the inline chain at an address of the top real frame's
 * function (the call site before a call or jump, the target after a call,
 * return or jump) replaces the inlined frames on it: those not in it are
 * left, the new ones entered, at the event's time.
 *
 * An inlined function is one entry (struct iname, its strace_name first)
 * per name, call file and call line: the frames of one inline instance
 * share it, and two chains share a frame where, from the outermost, they
 * name the same entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "stack_internal.h"

/* the longest inline chain asked for */
#define CHAIN_MAX 64

struct iname {
	struct strace_name n; /* first: a frame's fn points here */
	char *name;           /* n.str */
	char *call_file;
	uint32_t call_line;
	uint64_t hash;
};

struct inl {
	int (*inlines)(void *arg, uint32_t tid, uint64_t addr,
		       const struct strace_stack_inline **out);
	void *arg;
	struct strace_stack_cb down; /* the callbacks after this layer */
	struct iname **tab;          /* open addressing, by hash */
	uint32_t tabcap, count;
	struct iname **byid;         /* by id - STRACE_FRAME_INLINE_ID */
	uint32_t idcap;
};

/* --- the entries of inlined functions ---------------------------------- */

static uint64_t hash_str(uint64_t h, const char *p)
{
	for (; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h;
}

static int same(const struct iname *a, const struct strace_stack_inline *x)
{
	const char *f = x->call_file ? x->call_file : "";

	return a->call_line == x->call_line &&
	       !strcmp(a->n.str, x->name ? x->name : "??") &&
	       !strcmp(a->call_file, f);
}

static int rehash(struct inl *in)
{
	uint32_t cap = in->tabcap ? 2 * in->tabcap : 256;
	struct iname **tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (uint32_t k = 0; k < in->tabcap; k++) {
		uint32_t i;
		if (!in->tab[k])
			continue;
		for (i = in->tab[k]->hash & (cap - 1); tab[i];
		     i = (i + 1) & (cap - 1))
			;
		tab[i] = in->tab[k];
	}
	free(in->tab);
	in->tab = tab;
	in->tabcap = cap;
	return 0;
}

/* The entry of x (made the first time), or NULL (no memory). */
static const struct iname *intern(struct inl *in,
				  const struct strace_stack_inline *x)
{
	uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull, x->name),
			      x->call_file) ^
		     x->call_line;
	struct iname *a;
	uint32_t i;

	if (2 * (in->count + 1) > in->tabcap && rehash(in) < 0)
		return NULL;
	for (i = h & (in->tabcap - 1); in->tab[i]; i = (i + 1) & (in->tabcap - 1))
		if (in->tab[i]->hash == h && same(in->tab[i], x))
			return in->tab[i];
	if (in->count == in->idcap) {
		uint32_t cap = in->idcap ? 2 * in->idcap : 256;
		struct iname **b = realloc(in->byid, cap * sizeof(*b));
		if (!b || cap > STRACE_FRAME_INLINE_ID) {
			free(b == in->byid ? NULL : b);
			return NULL;
		}
		in->byid = b;
		in->idcap = cap;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->n.str = a->name = strdup(x->name ? x->name : "??");
	a->call_file = strdup(x->call_file ? x->call_file : "");
	if (!a->name || !a->call_file) {
		free(a->name);
		free(a->call_file);
		free(a);
		return NULL;
	}
	a->n.len = (uint32_t)strlen(a->n.str);
	a->n.id = STRACE_FRAME_INLINE_ID + in->count;
	a->n.kind = STRACE_EV_SYMBOL;
	a->n.key = x->lo;
	a->n.aux = x->hi > x->lo ? x->hi - x->lo : 0;
	a->call_line = x->call_line;
	a->hash = h;
	in->tab[i] = a;
	in->byid[in->count++] = a;
	return a;
}

/* --- the frames the callbacks see -------------------------------------- */

/* Room for one more entry in t->iv, or NULL (no memory). */
static struct strace_frame *room(struct strace_stack *s, struct thr *t)
{
	if (t->in == t->icap) {
		size_t cap = t->icap;
		struct strace_frame *v =
			strace_grow(t->iv, &cap, sizeof(*v), 32);
		if (!v) {
			s->err = -ENOMEM;
			return NULL;
		}
		t->iv = v;
		t->icap = (uint32_t)cap;
	}
	return &t->iv[t->in];
}

/* The index of the top real frame in t->iv, or -1. */
static long top_real(const struct thr *t)
{
	for (long i = (long)t->in - 1; i >= 0; i--)
		if (!(t->iv[i].flags & STRACE_FRAME_INLINED))
			return i;
	return -1;
}

/* The top entry of t->iv (inlined) leaves at time with flags added. */
static void leave_top(struct strace_stack *s, struct thr *t, uint64_t time,
		      uint16_t flags)
{
	struct strace_frame *f = &t->iv[t->in - 1];

	f->end = time < f->begin ? f->begin : time;
	f->flags |= flags;
	if (s->inl->down.leave)
		s->inl->down.leave(s->inl->down.arg, f);
	t->in--;
}

/* The callbacks' enter: a real frame was entered, on top of the real
 * ones (or a root found late, under them all). */
static void inl_enter(void *arg, const struct strace_frame *f)
{
	struct strace_stack *s = arg;
	struct thr *t = thread_of(s, f->tid);
	struct strace_frame *g;

	if (!t || !(g = room(s, t)))
		return;
	if (f->depth < t->real) {
		/* root(): under every frame, which shift one deeper */
		memmove(&t->iv[1], &t->iv[0], t->in * sizeof(*t->iv));
		for (uint32_t i = 1; i <= t->in; i++)
			t->iv[i].depth = i;
		g = &t->iv[0];
	}
	*g = *f;
	g->depth = (uint32_t)(g - t->iv);
	t->in++;
	t->real++;
	if (s->inl->down.enter)
		s->inl->down.enter(s->inl->down.arg, g);
}

/* The callbacks' leave: the top real frame leaves, the inlined frames on
 * it first. */
static void inl_leave(void *arg, const struct strace_frame *f)
{
	struct strace_stack *s = arg;
	struct thr *t = thread_of(s, f->tid);
	struct strace_frame *g;
	uint16_t carry = f->flags & (STRACE_FRAME_GAP | STRACE_FRAME_UNWOUND |
				     STRACE_FRAME_CLOSED);
	long r;

	if (!t || (r = top_real(t)) < 0)
		return;
	while (t->in > (uint32_t)r + 1)
		leave_top(s, t, f->end, carry);
	g = &t->iv[r];
	/* the rules' copy has the frame's fields (fn, flags, handlers set
	 * while it was open); this one, the depth and what the callbacks
	 * wrote (begin and end clipped by the gate, user) */
	{
		uint64_t begin = g->begin, u0 = g->user[0], u1 = g->user[1];
		*g = *f;
		g->begin = begin;
		g->depth = (uint32_t)r;
		g->user[0] = u0;
		g->user[1] = u1;
	}
	if (s->inl->down.leave)
		s->inl->down.leave(s->inl->down.arg, g);
	t->in--;
	t->real--;
}

/*
 * The top real frame of t runs the code at addr (time): when its function
 * covers addr, the inlined frames on it become addr's inline chain.
 */
static void sync(struct strace_stack *s, struct thr *t, uint64_t addr,
		 uint64_t time)
{
	const struct strace_stack_inline *x = NULL;
	const struct iname *want[CHAIN_MAX];
	long r = top_real(t);
	int n;
	uint32_t k, have;

	if (r < 0 || t->extra || !covers(&t->iv[r], addr))
		return;
	n = s->inl->inlines(s->inl->arg, t->tid, addr, &x);
	if (n < 0 || !x)
		n = 0;
	if (n > CHAIN_MAX)
		n = CHAIN_MAX;
	/* the chain outermost first, as the frames lie */
	for (k = 0; k < (uint32_t)n; k++)
		if (!(want[k] = intern(s->inl, &x[n - 1 - k]))) {
			s->err = -ENOMEM;
			return;
		}
	have = t->in - (uint32_t)r - 1;
	for (k = 0; k < have && k < (uint32_t)n; k++)
		if (t->iv[r + 1 + k].fn != &want[k]->n)
			break;
	while (t->in > (uint32_t)r + 1 + k)
		leave_top(s, t, time, 0);
	for (; k < (uint32_t)n; k++) {
		struct strace_frame *f;
		if (t->in >= s->max_depth) {
			/* deeper inlined frames are not kept (counted once
			 * per frame at the cap) */
			if (!(t->iv[t->in - 1].flags & STRACE_FRAME_TRUNCATED))
				s->st.truncated++;
			t->iv[t->in - 1].flags |= STRACE_FRAME_TRUNCATED;
			return;
		}
		if (!(f = room(s, t)))
			return;
		memset(f, 0, sizeof(*f));
		f->fn = &want[k]->n;
		f->addr = addr;
		f->call_site = 0;
		f->begin = time;
		f->tid = t->tid;
		f->depth = t->in;
		f->kind = t->iv[r].kind == STRACE_FRAME_CALL ? STRACE_FRAME_CALL
							     : STRACE_FRAME_ENTRY;
		f->flags = STRACE_FRAME_INLINED;
		t->in++;
		s->st.frames++;
		if (t->in > s->st.max_depth)
			s->st.max_depth = t->in;
		if (s->inl->down.enter)
			s->inl->down.enter(s->inl->down.arg, f);
	}
}

/* --- around the events --------------------------------------------------- */

/* Before the rules take e: the code a branch leaves from (a call's site,
 * a jump's source, a syscall, an interrupt) is the top frame's. */
void stack_inline_before(struct strace_stack *s, const struct strace_event *e)
{
	struct thr *t;

	switch (e->type) {
	case STRACE_EV_CALL:
	case STRACE_EV_JUMP:
	case STRACE_EV_SYSCALL:
	case STRACE_EV_INTERRUPT:
		if (e->a && (t = thread_of(s, e->tid)) != NULL && !t->pend)
			sync(s, t, e->a, e->time);
		break;
	}
}

/* After: the code the thread goes on at (a call's or jump's target, a
 * return's, the kernel's return, where the trace begins); a gap marks
 * the inlined frames open as the real ones. */
void stack_inline_after(struct strace_stack *s, const struct strace_event *e)
{
	struct thr *t;
	uint64_t addr = e->b;

	switch (e->type) {
	case STRACE_EV_TRACE_BEGIN:
		addr = e->a;
		/* fall through */
	case STRACE_EV_CALL:
	case STRACE_EV_JUMP:
	case STRACE_EV_RETURN:
	case STRACE_EV_SYSRET:
		if (addr && (t = thread_of(s, e->tid)) != NULL && !t->pend)
			sync(s, t, addr, e->time);
		break;
	case STRACE_EV_TRACE_END:
	case STRACE_EV_OVERFLOW:
	case STRACE_EV_ERROR:
	case STRACE_EV_LOST:
		if (e->type == STRACE_EV_TRACE_END && e->b == STRACE_REASON_END)
			break;
		for (uint32_t i = 0; i < s->nt; i++) {
			t = &s->t[i];
			if (t->tid != e->tid && (e->type != STRACE_EV_LOST || e->tid))
				continue;
			for (uint32_t k = 0; k < t->in; k++)
				t->iv[k].flags |= STRACE_FRAME_GAP;
		}
		break;
	}
}

/* --- set-up ------------------------------------------------------------- */

const struct strace_name *strace_stack_inline_name(const struct strace_stack *s,
						   uint32_t id)
{
	uint32_t k = id - STRACE_FRAME_INLINE_ID;

	if (!s || !s->inl || id < STRACE_FRAME_INLINE_ID || k >= s->inl->count)
		return NULL;
	return &s->inl->byid[k]->n;
}

int stack_inline_new(struct strace_stack *s, const struct strace_stack_opts *o)
{
	struct inl *in = calloc(1, sizeof(*in));

	if (!in)
		return -ENOMEM;
	in->inlines = o->inlines;
	in->arg = o->inlines_arg;
	in->down = s->cb;
	s->cb = (struct strace_stack_cb){inl_enter, inl_leave, s};
	s->inl = in;
	return 0;
}

void stack_inline_free(struct strace_stack *s)
{
	struct inl *in = s->inl;

	if (!in)
		return;
	for (uint32_t i = 0; i < s->nt; i++)
		free(s->t[i].iv);
	for (uint32_t k = 0; k < in->tabcap; k++)
		if (in->tab[k]) {
			free(in->tab[k]->name);
			free(in->tab[k]->call_file);
			free(in->tab[k]);
		}
	free(in->tab);
	free(in->byid);
	free(in);
	s->inl = NULL;
}
