/* SPDX-License-Identifier: MIT */
/*
 * events/stack_internal.h - the call-stack builder's state, shared by
 * events/stack.c (the per-event rules) and events/stack_gate.c (set-up and
 * the gate): the builder, its threads, their frames, handlers and seeds,
 * the symbol cache, and the thread lookup both inline. Internal.
 */
#ifndef EVENTS_STACK_INTERNAL_H
#define EVENTS_STACK_INTERNAL_H

#include <stdint.h>

#include "strace/stack.h"

#define DEFAULT_DEPTH 4096
/* the longest x86 instruction: a return lands at most this far after its
 * call's first byte */
#define CALL_MAX 15
#define SYMCACHE_BITS 14

struct seed {
	uint64_t ip;
	uint64_t depth;
};

struct handler {
	uint64_t addr;  /* where a raise lands */
	uint32_t frame; /* the frame it was pushed in (its index) */
};

struct thr {
	uint32_t tid;
	int started; /* a flow event was seen: no more seeds */
	int plain;   /* started, first known, no syscall frame, no frame
		      * beyond max_depth: run() may take its events */
	int syscalls; /* [syscall] frames open */
	struct strace_frame *v;
	uint32_t n, cap;
	uint64_t extra; /* frames entered beyond max_depth, still open */
	uint64_t first, last;
	uint64_t async_ip, async_time;
	int async;
	struct handler *h;
	uint32_t nh, hcap;
	struct seed *seeds;
	uint32_t nseeds, seeds_cap;
	/* the person's stack (not opts.machine): the top frame is a PLT
	 * stub's, not entered yet, until it reaches its function (pend);
	 * its lazy binding: 1 once the stub went to the PLT's header, 2 once
	 * that went into the resolver (lazy_fn, at lazy_addr), whose own
	 * calls are lazy_depth deep; the binding began at lazy_begin */
	int pend, lazy;
	uint32_t lazy_depth;
	uint64_t lazy_begin, lazy_addr;
	const struct strace_name *lazy_fn;
	/* the gate (opts.from, ...): frames [0, shown) were entered (the
	 * callbacks saw them); those above are held, or never shown */
	uint32_t shown;
	/* opts.inlines (stack_inline.c): the frames the callbacks see, v's
	 * entered ones (real of them) with the inlined frames on them */
	struct strace_frame *iv;
	uint32_t in, icap, real;
};

/* an address and its symbol, the entry valid when bit 0 of fn is set
 * (names are aligned) */
struct symcache {
	uint64_t addr;
	uintptr_t fn;
};

struct strace_stack {
	struct strace_names *names;
	/* the frames' callbacks: the caller's, or with a gate (opts.from, to,
	 * min_time, select) the gate's, in front of the caller's (user) */
	struct strace_stack_cb cb, user;
	uint32_t max_depth;
	int machine; /* opts.machine */
	struct thr *t;
	uint32_t nt, tcap;
	uint32_t *map; /* tid -> index + 1 in t, open addressing */
	uint32_t mapcap;
	struct thr *last;
	/* opts.from, to, min_time, select: which frames are shown */
	uint64_t from, to, min_time;
	int (*select)(void *arg, const struct strace_frame *f);
	void *select_arg;
	struct symcache *sc;
	uint64_t sc_gen;
	struct strace_stack_stats st;
	int err;
	/* opts.inlines: the inlined frames' state (stack_inline.c), or NULL */
	struct inl *inl;
};

/* whether f's function covers addr */
static inline int covers(const struct strace_frame *f, uint64_t addr)
{
	const struct strace_name *fn = f->fn;

	if (!fn || f->kind == STRACE_FRAME_SYSCALL ||
	    f->kind == STRACE_FRAME_SIGNAL)
		return 0;
	return addr >= fn->key && (addr - fn->key < fn->aux || addr == fn->key);
}

/* stack_inline.c: opts.inlines (set-up: its callbacks go in front of
 * s->cb; -ENOMEM), freeing, the events around the rules of stack.c, and
 * the frames the callbacks see */
int stack_inline_new(struct strace_stack *s,
		     const struct strace_stack_opts *o);
void stack_inline_free(struct strace_stack *s);
void stack_inline_before(struct strace_stack *s, const struct strace_event *e);
void stack_inline_after(struct strace_stack *s, const struct strace_event *e);
static inline struct strace_frame *frames_of(const struct strace_stack *s,
					     const struct thr *t)
{
	return s->inl ? t->iv : t->v;
}

/* The thread of tid, if it has been seen, without making it the last. */
static inline struct thr *thread_of(const struct strace_stack *s, uint32_t tid)
{
	uint32_t mask, i;

	if (s->last && s->last->tid == tid)
		return s->last;
	if (!s->mapcap)
		return NULL;
	mask = s->mapcap - 1;
	for (i = (tid * 0x9e3779b9u) & mask; s->map[i]; i = (i + 1) & mask)
		if (s->t[s->map[i] - 1].tid == tid)
			return &s->t[s->map[i] - 1];
	return NULL;
}

#endif /* EVENTS_STACK_INTERNAL_H */
