/* SPDX-License-Identifier: MIT */
/*
 * strace/stack.h - call stacks from events: per thread, the frames that
 * are open, with their function, call site, times and depth, and a
 * callback when each frame is entered and when it is left.
 *
 * A reader feeds it the events of a ring in order (from a saved ring or
 * while following one); the rules that turn calls, returns, jumps,
 * syscalls, signals, gaps and unwinds into frames are in docs/stacks.md:
 * in short, a call pushes; a return pops to the frame whose call it
 * returns after; a jump to another function's entry (a tail call) enters
 * it as a callee of the top frame, and both return at its return (with
 * opts.machine, as the machine's stack has it: the jump's target replaces
 * the top frame); a PLT stub's frame becomes the function it reaches,
 * and the dynamic linker's lazy binding of it is one frame, the
 * resolver's (with opts.machine: frames of the stub, of the PLT's
 * header and of the resolver, as they ran); a jump or return into a
 * function deeper on the stack unwinds to it (longjmp, exceptions); a
 * return that matches no frame makes the function it returns to a new
 * root, begun at the thread's first event; exc_raise unwinds to the frame
 * of the active OCaml handler; syscalls and signals are frames of their
 * own; stack_frame events (the unwind at attach) seed the stack; gaps
 * keep it; thread_exit and strace_stack_end() close every frame.
 *
 * Memory: a thread's frames, up to max_depth; deeper frames are counted,
 * not kept (STRACE_FRAME_TRUNCATED on the frame at the cap). Nothing
 * grows with the length of the trace.
 *
 * Lifetimes: a frame passed to a callback, or returned by
 * strace_stack_frames(), is valid until the next call into the stack.
 * Its fn points into names (strace/names.h), valid until the names are
 * freed.
 *
 * Threading: one instance belongs to one thread at a time, with its
 * names.
 */
#ifndef STRACE_STACK_H
#define STRACE_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "names.h"
#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a frame was entered. */
enum strace_frame_kind {
	STRACE_FRAME_CALL = 0, /* a call; a tail call keeps the kind */
	STRACE_FRAME_ENTRY,    /* no call: a thread's first function, a signal
				* handler, a tail call on an empty stack */
	STRACE_FRAME_ROOT,     /* found by a return that matched no frame: it
				* was running before the trace began */
	STRACE_FRAME_SEED,     /* from a stack_frame event (the unwind at
				* attach); call_site is its return address */
	STRACE_FRAME_SYSCALL,  /* [syscall]: from the syscall to its return */
	STRACE_FRAME_SIGNAL,   /* [signal]: an asynchronous transfer to a
				* handler, until the interrupted code goes on */
};

/* Frame flags. */
#define STRACE_FRAME_TAIL 0x0001      /* entered by a tail call (a jump) */
#define STRACE_FRAME_GAP 0x0002       /* a gap (trace_end, overflow, error,
				       * lost) happened while it was open:
				       * what ran then is not in the trace */
#define STRACE_FRAME_UNWOUND 0x0004   /* left by an unwind (longjmp, an
				       * exception), not by its return */
#define STRACE_FRAME_CLOSED 0x0008    /* left because the thread exited or
				       * the trace ended */
#define STRACE_FRAME_TRUNCATED 0x0010 /* deeper frames were not kept */
#define STRACE_FRAME_LATE 0x0020      /* found late: a ROOT frame made by a
				       * return that matched no frame; begun
				       * at the thread's first event, it
				       * holds every frame of the thread
				       * left before it was entered */
#define STRACE_FRAME_INLINED 0x0040   /* code inlined into the frame under
				       * it (opts.inlines): fn is the
				       * stack's own entry for the inlined
				       * function (see struct strace_frame) */

/* The ids of inlined functions' entries (fn->id of an INLINED frame)
 * begin here, above the names' ids (strace_stack_inline_name()). */
#define STRACE_FRAME_INLINE_ID 0x80000000u

struct strace_frame {
	const struct strace_name *fn; /* the SYMBOL entry of addr; NULL if
				       * no symbol covers it; INLINED: the
				       * stack's entry (str: the inlined
				       * function's name, key and aux: the
				       * range it was first met in, id:
				       * STRACE_FRAME_INLINE_ID + a dense
				       * index of the stack's own), valid
				       * until strace_stack_free() */
	uint64_t addr;      /* where it was entered: the call's target;
			     * INLINED: the address whose inline chain
			     * opened it */
	uint64_t call_site; /* the call instruction; SEED: the return
			     * address; SIGNAL: the interrupted address;
			     * 0: none */
	uint64_t begin;     /* time entered (ns) */
	uint64_t end;       /* time left; 0 while open */
	uint32_t tid;
	uint32_t depth;     /* 0: the outermost frame of the thread */
	uint16_t kind;      /* enum strace_frame_kind */
	uint16_t flags;     /* STRACE_FRAME_* */
	uint32_t handlers;  /* OCaml exception handlers pushed in it */
	uint64_t user[2];   /* the caller's (a view's sums): 0 when entered,
			     * kept while the frame is open */
};

/*
 * Callbacks (each may be NULL): a frame was entered; a frame is left
 * (f->end is set; its callees have left already). In a callback, the
 * open frames under f, its callers, are f[-1], f[-2], ... f[-f->depth]
 * (the outermost); the callback may change their user fields.
 */
struct strace_stack_cb {
	void (*enter)(void *arg, const struct strace_frame *f);
	void (*leave)(void *arg, const struct strace_frame *f);
	void *arg;
};

/* An inlined function at an address (strace_stack_opts.inlines). */
struct strace_stack_inline {
	const char *name;      /* the inlined function */
	uint64_t lo, hi;       /* the inline instance's range around the
				* address [lo, hi), in the thread's addresses */
	const char *call_file; /* where it was inlined (NULL: unknown) */
	uint32_t call_line;
};

struct strace_stack_opts {
	size_t size;        /* sizeof(struct strace_stack_opts) (opts.h) */
	uint32_t max_depth; /* frames kept per thread; 0: 4096 */
	int machine;        /* the machine's stack: a tail call replaces the
			     * top frame, PLT stubs and the lazy binding's
			     * functions are frames (docs/stacks.md); 0: the
			     * stack as a person reads it, as uftrace's */
	/*
	 * Which frames the callbacks see (all by default). A frame is
	 * shown when it passes all three, or when a frame it calls is
	 * shown (as uftrace's -C shows the callers of a function). A frame
	 * that is to be shown is entered once that is known: at once, or,
	 * with min_time or select, at the latest when it is left, after
	 * the frames under it that had not been entered yet.
	 */
	uint64_t from, to;  /* a time window (ns, both 0: none; to 0: no
			     * end): frames that overlap it, their begin
			     * and end clipped to it */
	uint64_t min_time;  /* frames that last this long (ns, after the
			     * clipping; 0: any), as uftrace's -t */
	int (*select)(void *arg, const struct strace_frame *f);
	void *select_arg;   /* frames select() takes (NULL: all); asked
			     * when a frame is entered and when it is left */
	/*
	 * Inlined functions as frames (NULL: none): the chain of inlined
	 * functions at the code address addr of thread tid, innermost
	 * first (addr2line -i's order), in *out (valid until the next call;
	 * the stack copies what it keeps); returns how many (0: not in
	 * inlined code; <0 is taken as 0). The stack asks at each event's
	 * address in the top frame's function and opens and closes frames
	 * flagged STRACE_FRAME_INLINED on top of it (docs/stacks.md). Its
	 * answers should be cached by the caller: they are asked for often.
	 */
	int (*inlines)(void *arg, uint32_t tid, uint64_t addr,
		       const struct strace_stack_inline **out);
	void *inlines_arg;
};

struct strace_stack;

/*
 * strace_stack_new() - stacks named by names (may be NULL: frames have no
 * fn, and the rules that need function ranges use none), calling cb
 * (may be NULL).
 * Returns 0 and *out.
 * Returns -STRACE_E_BADARG if opts break the rule of strace/opts.h, or
 * the window ends before it begins.
 * Returns -ENOMEM if memory runs out.
 */
int strace_stack_new(struct strace_names *names,
		     const struct strace_stack_opts *opts,
		     const struct strace_stack_cb *cb,
		     struct strace_stack **out);

/* strace_stack_free() - free the stacks without closing frames (NULL is
 * fine); call strace_stack_end() first to have every frame left. */
void strace_stack_free(struct strace_stack *s);

/*
 * strace_stack_feed() - the next n events, in ring order (each thread's
 * in its order). Names defined so far must be in names (the caller runs
 * strace_names_update() before each batch).
 * Returns 0.
 * Returns -ENOMEM if memory runs out (the stacks are then incomplete).
 */
int strace_stack_feed(struct strace_stack *s, const struct strace_event *ev,
		      size_t n);

/* strace_stack_end() - the trace ended: every open frame of every thread
 * is left, at that thread's last time, flagged STRACE_FRAME_CLOSED. */
void strace_stack_end(struct strace_stack *s);

/*
 * strace_stack_frames() - the open frames of thread tid, outermost first;
 * returns how many (0 for a thread not seen), *out the array (with
 * opts.inlines, the inlined frames among them).
 */
size_t strace_stack_frames(struct strace_stack *s, uint32_t tid,
			   const struct strace_frame **out);

struct strace_stack_stats {
	uint64_t events;    /* fed */
	uint64_t frames;    /* entered */
	uint64_t roots;     /* returns that matched no frame */
	uint64_t unwinds;   /* frames left by unwinds */
	uint64_t tails;     /* tail calls */
	uint64_t truncated; /* frames not kept (beyond max_depth) */
	uint64_t gaps;      /* gap events */
	uint32_t threads;
	uint32_t max_depth; /* the deepest stack seen */
};

/* strace_stack_stats() - counts so far. */
void strace_stack_stats(const struct strace_stack *s,
			struct strace_stack_stats *st);

/* strace_stack_inline_name() - the entry of the inlined function whose
 * id (>= STRACE_FRAME_INLINE_ID) an INLINED frame's fn had; NULL for
 * another id. Valid until strace_stack_free(). */
const struct strace_name *strace_stack_inline_name(const struct strace_stack *s,
						   uint32_t id);

/* strace_frame_name() - fn's name, "[syscall]", "[signal]", or NULL when
 * the frame's function has no symbol. */
const char *strace_frame_name(const struct strace_frame *f);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_STACK_H */
