/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_stack_inline.c - inlined functions as frames
 * (strace_stack_opts.inlines, docs/stacks.md "Inlined frames") on a
 * made-up program and a fake resolver, checked by the log of enter and
 * leave callbacks ("+depth name@begin" / "-depth name@end"; an inlined
 * frame's name ends in "~", a gap's leave in "?").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "strace/names.h"
#include "strace/ring.h"
#include "strace/stack.h"

/* The made-up program: functions of 0x100 bytes each. */
enum { MAIN = 0x1000, F = 0x1100, G = 0x1200 };

/*
 * Its inlined code: in main, a [0x1040, 0x1080) (inlined at line 10),
 * in it b [0x1050, 0x1060) (line 20); in f, c [0x1120, 0x1130) (line 30)
 * and, at 0x1160, c again from another line (31): another instance.
 */
static const struct strace_stack_inline A = {"a", 0x1040, 0x1080, "m.c", 10};
static const struct strace_stack_inline B = {"b", 0x1050, 0x1060, "m.c", 20};
static const struct strace_stack_inline C = {"c", 0x1120, 0x1130, "f.c", 30};
static const struct strace_stack_inline C2 = {"c", 0x1160, 0x1170, "f.c", 31};

static unsigned asked;

static int fake(void *arg, uint32_t tid, uint64_t addr,
		const struct strace_stack_inline **out)
{
	static struct strace_stack_inline chain[2];

	(void)arg;
	(void)tid;
	asked++;
	if (addr >= B.lo && addr < B.hi) {
		chain[0] = B;
		chain[1] = A;
		*out = chain;
		return 2;
	}
	if (addr >= A.lo && addr < A.hi) {
		*out = &A;
		return 1;
	}
	if (addr >= C.lo && addr < C.hi) {
		*out = &C;
		return 1;
	}
	if (addr >= C2.lo && addr < C2.hi) {
		*out = &C2;
		return 1;
	}
	return addr == MAIN + 0xf0 ? -5 : 0; /* (an error is no chain) */
}

static struct strace_ring *ring;
static struct strace_names *names;
static char path[64];
static char log_buf[4096];

__attribute__((constructor)) static void setup(void)
{
	static const struct {
		uint64_t a;
		const char *n;
	} syms[] = {{MAIN, "main"}, {F, "f"}, {G, "g"}};
	struct strace_ring_opts o = {sizeof(o), 1024, 1 << 16,
				     STRACE_RING_ARCHIVE, 1, 0};
	uint64_t off;

	snprintf(path, sizeof(path), "/dev/shm/test_stack_inline_%d.srb",
		 (int)getpid());
	unlink(path);
	if (strace_ring_create(path, &o, &ring) < 0)
		return;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		strace_ring_add_string(ring, STRACE_EV_SYMBOL, syms[i].a, 0x100,
				       syms[i].n, strlen(syms[i].n), &off);
	strace_names_new(ring, &names);
	strace_names_update(names);
}

__attribute__((destructor)) static void teardown(void)
{
	strace_names_free(names);
	strace_ring_close(ring);
	unlink(path);
}

static void timed(const struct strace_frame *f, const char *sign, uint64_t t)
{
	char one[64];
	int inl = !!(f->flags & STRACE_FRAME_INLINED);

	snprintf(one, sizeof(one), "%s%u %s%s%s@%u ", sign, f->depth,
		 strace_frame_name(f), inl ? "~" : "",
		 *sign == '-' && (f->flags & STRACE_FRAME_GAP) ? "?" : "",
		 (unsigned)t);
	strncat(log_buf, one, sizeof(log_buf) - strlen(log_buf) - 1);
}

static void on_enter(void *arg, const struct strace_frame *f)
{
	(void)arg;
	timed(f, "+", f->begin);
}

static void on_leave(void *arg, const struct strace_frame *f)
{
	(void)arg;
	/* the callers under f are its open frames, f[-1] ... */
	for (uint32_t k = 1; k <= f->depth; k++)
		if (f[-(long)k].depth != f->depth - k || f[-(long)k].end)
			strncat(log_buf, "BAD ", sizeof(log_buf) - strlen(log_buf) - 1);
	timed(f, "-", f->end);
}

#define E(type, a, b) {STRACE_EV_##type, 0, 7, 0, a, b}
#define N(ev) (sizeof(ev) / sizeof(ev[0]))

static struct strace_stack_stats st;

/* Feed ev[] (times 1, 2, 3...) with the fake resolver (inline: else
 * none) and options o, end the trace, return the log. */
static const char *run_o(struct strace_event *ev, size_t n,
			 struct strace_stack_opts o, int inline_)
{
	struct strace_stack_cb cb = {on_enter, on_leave, NULL};
	struct strace_stack *s;

	log_buf[0] = '\0';
	o.size = sizeof(o);
	if (inline_)
		o.inlines = fake;
	for (size_t i = 0; i < n; i++)
		ev[i].time = 1 + i;
	if (strace_stack_new(names, &o, &cb, &s) < 0)
		return "(new failed)";
	strace_stack_feed(s, ev, n);
	strace_stack_end(s);
	strace_stack_stats(s, &st);
	strace_stack_free(s);
	if (*log_buf)
		log_buf[strlen(log_buf) - 1] = '\0';
	return log_buf;
}

static const char *run(struct strace_event *ev, size_t n)
{
	return run_o(ev, n, (struct strace_stack_opts){0}, 1);
}

/* chains open and close at the events' times, innermost on top; a call
 * from inside inlined code pushes the callee above them; its return
 * leaves the callee's inlined frames, then the callee; the caller's
 * chain is the return address's */
TEST(chain_changes)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN + 0x10, STRACE_REASON_START),
		E(JUMP, MAIN + 0x20, MAIN + 0x52), /* into b in a: 2 */
		E(CALL, MAIN + 0x55, F),           /* f from b: 3 */
		E(JUMP, F + 0x05, F + 0x25),       /* into c: 4 */
		E(RETURN, F + 0x27, MAIN + 0x5a),  /* c, f leave: 5 */
		E(JUMP, MAIN + 0x5c, MAIN + 0x45), /* b leaves: 6 */
		E(JUMP, MAIN + 0x46, MAIN + 0x90), /* a leaves: 7 */
	};

	REQUIRE(ring && names);
	CHECK_STR(run(ev, N(ev)),
		  "+0 main@1 +1 a~@2 +2 b~@2 +3 f@3 +4 c~@4 -4 c~@5 -3 f@5 "
		  "-2 b~@6 -1 a~@7 -0 main@7");
	CHECK_INT(st.frames, ==, 5);
	CHECK_INT(st.max_depth, ==, 5);
	/* without the resolver: the real frames only, as before */
	CHECK_STR(run_o(ev, N(ev), (struct strace_stack_opts){0}, 0),
		  "+0 main@1 +1 f@3 -1 f@5 -0 main@7");
}

/* a call's site opens its chain before the callee (no event inside the
 * inlined code before it); a return into other inlined code changes it */
TEST(call_site_and_return)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN + 0x10, STRACE_REASON_START),
		E(CALL, MAIN + 0x42, F),          /* from a: 2 */
		E(RETURN, F + 0x30, MAIN + 0x47), /* still a */
		E(CALL, MAIN + 0x48, F),          /* 4 */
		E(RETURN, F + 0x30, MAIN + 0x4d), /* 5 */
		E(JUMP, MAIN + 0x4e, MAIN + 0x50),/* b: 6 */
		E(JUMP, MAIN + 0x5e, MAIN + 0x20),/* both leave: 7 */
	};

	CHECK_STR(run(ev, N(ev)),
		  "+0 main@1 +1 a~@2 +2 f@2 -2 f@3 +2 f@4 -2 f@5 +2 b~@6 "
		  "-2 b~@7 -1 a~@7 -0 main@7");
}

/* the same function inlined from another line is another frame */
TEST(instances)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, F + 0x10, STRACE_REASON_START),
		E(JUMP, F + 0x10, F + 0x22),
		E(JUMP, F + 0x24, F + 0x162 - 0x100),
		E(JUMP, F + 0x64, F + 0x80),
	};

	CHECK_STR(run(ev, N(ev)), "+0 f@1 +1 c~@2 -1 c~@3 +1 c~@3 -1 c~@4 "
				  "-0 f@4");
}

/* a tail call from inlined code (the person's stack): the callee goes
 * on top, the jumper's chain stays open under it until both return */
TEST(tail_call)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN + 0x10, STRACE_REASON_START),
		E(CALL, MAIN + 0x10, F),
		E(JUMP, F + 0x10, F + 0x24), /* c: 3 */
		E(JUMP, F + 0x26, G),        /* g: 4 */
		E(RETURN, G + 0x20, MAIN + 0x15),
	};

	CHECK_STR(run(ev, N(ev)), "+0 main@1 +1 f@2 +2 c~@3 +3 g@4 -3 g@5 "
				  "-2 c~@5 -1 f@5 -0 main@5");
	/* the machine's stack: g replaces f, whose chain leaves with it */
	CHECK_STR(run_o(ev, N(ev), (struct strace_stack_opts){.machine = 1},
			1),
		  "+0 main@1 +1 f@2 +2 c~@3 -2 c~@4 -1 f@4 +1 g@4 -1 g@5 "
		  "-0 main@5");
}

/* a gap marks the inlined frames open as the real ones; a root found
 * late goes under them all */
TEST(gap_and_root)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, F + 0x22, STRACE_REASON_START), /* f, c */
		E(LOST, 0, 0),
		E(RETURN, F + 0x30, MAIN + 0x52), /* main: a root; a, b */
		E(JUMP, MAIN + 0x54, MAIN + 0x10),
	};

	CHECK_STR(run(ev, N(ev)),
		  "+0 f@1 +1 c~@1 +0 main@1 -2 c~?@3 -1 f?@3 +1 a~@3 +2 b~@3 "
		  "-2 b~@4 -1 a~@4 -0 main@4");
}

/* max_depth counts the inlined frames: deeper ones are not kept, the
 * frame at the cap is flagged; an error from the resolver is no chain */
TEST(max_depth)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN + 0x52, STRACE_REASON_START),
		E(JUMP, MAIN + 0x54, MAIN + 0x10),
	};

	CHECK_STR(run_o(ev, N(ev), (struct strace_stack_opts){.max_depth = 2},
			1),
		  "+0 main@1 +1 a~@1 -1 a~@2 -0 main@2");
	CHECK_INT(st.truncated, ==, 1);
	ev[0].a = MAIN + 0xf0; /* an error */
	ev[1].a = MAIN + 0xf0;
	CHECK_STR(run(ev, N(ev)), "+0 main@1 -0 main@2");
}

/* a window (the gate) sees the inlined frames like the others */
TEST(gate)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN + 0x10, STRACE_REASON_START),
		E(JUMP, MAIN + 0x20, MAIN + 0x52),
		E(CALL, MAIN + 0x55, F),
		E(RETURN, F + 0x27, MAIN + 0x5a),
		E(JUMP, MAIN + 0x5c, MAIN + 0x10),
	};

	CHECK_STR(run_o(ev, N(ev), (struct strace_stack_opts){.from = 3},
			1),
		  "+0 main@3 +1 a~@3 +2 b~@3 +3 f@3 -3 f@4 -2 b~@5 -1 a~@5 "
		  "-0 main@5");
	asked = 0;
	run(ev, N(ev));
	CHECK_INT(asked, >, 0);
}

/* an inlined frame's fn: the stack's entry, its id from
 * STRACE_FRAME_INLINE_ID, found again by strace_stack_inline_name() */
static uint32_t last_id;

static void id_enter(void *arg, const struct strace_frame *f)
{
	(void)arg;
	if (f->flags & STRACE_FRAME_INLINED)
		last_id = f->fn->id;
}

TEST(entries)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN + 0x52, STRACE_REASON_START),
	};
	struct strace_stack_cb cb = {id_enter, NULL, NULL};
	struct strace_stack_opts o = {.size = sizeof(o), .inlines = fake};
	const struct strace_name *n;
	struct strace_stack *s;

	REQUIRE(strace_stack_new(names, &o, &cb, &s) == 0);
	strace_stack_feed(s, ev, 1);
	CHECK_INT(last_id, ==, STRACE_FRAME_INLINE_ID + 1); /* b, after a */
	n = strace_stack_inline_name(s, last_id);
	REQUIRE(n != NULL);
	CHECK_STR(n->str, "b");
	CHECK_INT(n->key, ==, B.lo);
	CHECK(strace_stack_inline_name(s, 0) == NULL);
	CHECK(strace_stack_inline_name(s, last_id + 1) == NULL);
	strace_stack_end(s);
	strace_stack_free(s);
}

RUN_TESTS("test_stack_inline")
