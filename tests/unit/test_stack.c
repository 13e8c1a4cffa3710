/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_stack.c - call stacks from events (strace/stack.h):
 * each rule of docs/stacks.md on a made-up program, checked by the log of
 * enter and leave callbacks ("+depth name" / "-depth name[flags]").
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
enum {
	MAIN = 0x1000,
	F = 0x1100,
	G = 0x1200,
	H = 0x1300,
	PLT_MALLOC = 0x1400, /* malloc@plt */
	MALLOC = 0x1500,
	HANDLER = 0x1600,
	RESTORE = 0x1700, /* __restore_rt */
	OCAML_F = 0x1800,
	OCAML_G = 0x1900,
	RAISE = 0x1a00, /* caml_raise_exn */
	START = 0x1b00,
	PLT0 = 0x1c00,     /* [plt0]: the lazy binding's way in */
	RESOLVER = 0x1d00, /* _dl_runtime_resolve_xsave */
	FIXUP = 0x1e00,    /* _dl_fixup */
	INIT = 0x1f00,     /* _init: perf 6.1's name for .plt's start too */
};

static struct strace_ring *ring;
static struct strace_names *names;
static char path[64];
static char log_buf[4096];

static void setup(void)
{
	static const struct {
		uint64_t a;
		const char *n;
	} syms[] = {{MAIN, "main"},     {F, "f"},
		    {G, "g"},           {H, "h"},
		    {PLT_MALLOC, "malloc@plt"}, {MALLOC, "malloc"},
		    {HANDLER, "on_signal"},     {RESTORE, "__restore_rt"},
		    {OCAML_F, "camlF"},         {OCAML_G, "camlG"},
		    {RAISE, "caml_raise_exn"},  {START, "_start"},
		    {PLT0, "[plt0]"},		{RESOLVER, "_dl_runtime_resolve_xsave"},
		    {FIXUP, "_dl_fixup"},	{INIT, "_init"}};
	struct strace_ring_opts o = {sizeof(o), 1024, 1 << 16,
				     STRACE_RING_ARCHIVE, 1, 0};
	uint64_t off;

	snprintf(path, sizeof(path), "/dev/shm/test_stack_%d.srb", (int)getpid());
	unlink(path);
	if (strace_ring_create(path, &o, &ring) < 0)
		return;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		strace_ring_add_string(ring, STRACE_EV_SYMBOL, syms[i].a, 0x100,
				       syms[i].n, strlen(syms[i].n), &off);
	strace_names_new(ring, &names);
	strace_names_update(names);
}

static void teardown(void)
{
	strace_names_free(names);
	strace_ring_close(ring);
	unlink(path);
}

/* the names every test uses, made before the first */
__attribute__((constructor)) static void setup_once(void)
{
	setup();
	atexit(teardown);
}

static void logf_(const char *sign, const struct strace_frame *f)
{
	char one[128];
	const char *n = strace_frame_name(f);

	snprintf(one, sizeof(one), "%s%u %s%s%s%s ", sign, f->depth,
		 n ? n : "?",
		 *sign == '-' && (f->flags & STRACE_FRAME_UNWOUND) ? "!" : "",
		 *sign == '-' && (f->flags & STRACE_FRAME_CLOSED) ? "$" : "",
		 *sign == '+' && f->kind == STRACE_FRAME_ROOT ? "^" : "");
	strncat(log_buf, one, sizeof(log_buf) - strlen(log_buf) - 1);
}

static void on_enter(void *arg, const struct strace_frame *f)
{
	(void)arg;
	logf_("+", f);
}

static void on_leave(void *arg, const struct strace_frame *f)
{
	(void)arg;
	logf_("-", f);
}

#define E(type, a, b) {STRACE_EV_##type, 0, 7, 0, a, b}

/* the machine's stack (opts.machine) in run(); else the person's */
static int machine;

/* Feed ev[] (times 1, 2, 3...) to stacks with options o and callbacks
 * cb, end the trace, return the log. */
static const char *run_with(struct strace_event *ev, size_t n,
			    struct strace_stack_opts *o,
			    const struct strace_stack_cb *cb,
			    struct strace_stack_stats *st)
{
	struct strace_stack *s;

	log_buf[0] = '\0';
	o->size = sizeof(*o);
	for (size_t i = 0; i < n; i++)
		ev[i].time = 1 + i;
	if (strace_stack_new(names, o, cb, &s) < 0)
		return "(new failed)";
	strace_stack_feed(s, ev, n);
	strace_stack_end(s);
	if (st)
		strace_stack_stats(s, st);
	strace_stack_free(s);
	/* drop the trailing space */
	if (*log_buf)
		log_buf[strlen(log_buf) - 1] = '\0';
	return log_buf;
}

/* The same, logged by on_enter and on_leave. */
static const char *run(struct strace_event *ev, size_t n, uint32_t max_depth,
		       struct strace_stack_stats *st)
{
	struct strace_stack_cb cb = {on_enter, on_leave, NULL};
	struct strace_stack_opts o = {.max_depth = max_depth,
				      .machine = machine};

	return run_with(ev, n, &o, &cb, st);
}

#define RUN(ev, max) run(ev, sizeof(ev) / sizeof(ev[0]), max, NULL)

/* The same, the machine's stack. */
static const char *run_machine(struct strace_event *ev, size_t n)
{
	const char *r;

	machine = 1;
	r = run(ev, n, 0, NULL);
	machine = 0;
	return r;
}

#define RUN_MACHINE(ev) run_machine(ev, sizeof(ev) / sizeof(ev[0]))

TEST(call_return)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, MAIN, STRACE_REASON_START),
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x20, G),
		E(RETURN, G + 0x30, F + 0x25),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	REQUIRE(ring && names);
	/* the trace starts in main: its first frame, open to the end */
	CHECK_STR(RUN(ev, 0), "+0 main +1 f +2 g -2 g -1 f -0 main$");
}

/* a return past frames whose returns were not seen pops them too */
TEST(return_to_deeper_call_site)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x20, G),
		E(CALL, G + 0x20, H),
		E(RETURN, F + 0x50, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 g +2 h -2 h! -1 g! -0 f");
}

/* call malloc@plt, jmp *GOT to malloc: the stub's frame is malloc's
 * (the machine's stack: malloc replaces the stub), returning to the
 * stub's caller */
TEST(plt_tail_call)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x20, PLT_MALLOC),
		E(JUMP, PLT_MALLOC + 0x4, MALLOC),
		E(RETURN, MALLOC + 0x80, F + 0x25),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 malloc -1 malloc -0 f");
	CHECK_STR(RUN_MACHINE(ev), "+0 f +1 malloc@plt -1 malloc@plt "
				   "+1 malloc -1 malloc -0 f");
}

/* the frame of a call to a stub begins at the call, as uftrace's does */
static uint64_t malloc_begin, malloc_end;

static void times_leave(void *arg, const struct strace_frame *f)
{
	const char *n = strace_frame_name(f);

	(void)arg;
	if (n && !strcmp(n, "malloc")) {
		malloc_begin = f->begin;
		malloc_end = f->end;
	}
}

/*
 * The lazy binding of malloc: the stub jumps to the PLT's header, which
 * jumps into the dynamic linker's resolver, which calls _dl_fixup and
 * then jumps to malloc. The person's stack: malloc's frame from the call
 * to its return, the binding one frame under it (the resolver's, without
 * its callees); the machine's: each function as it ran.
 */
TEST(plt_lazy_binding)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x20, PLT_MALLOC),
		E(JUMP, PLT_MALLOC + 0xb, PLT0),
		E(JUMP, PLT0 + 0x6, RESOLVER),
		E(CALL, RESOLVER + 0x40, FIXUP),
		E(JUMP, FIXUP + 0x10, FIXUP + 0x30),
		E(RETURN, FIXUP + 0x50, RESOLVER + 0x45),
		E(JUMP, RESOLVER + 0x90, MALLOC),
		E(RETURN, MALLOC + 0x80, F + 0x25),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	struct strace_stack_cb cb = {NULL, times_leave, NULL};
	struct strace_stack *s;

	CHECK_STR(RUN(ev, 0), "+0 f +1 malloc +2 _dl_runtime_resolve_xsave "
			      "-2 _dl_runtime_resolve_xsave -1 malloc -0 f");
	CHECK_STR(RUN_MACHINE(ev),
		  "+0 f +1 malloc@plt -1 malloc@plt +1 [plt0] -1 [plt0] "
		  "+1 _dl_runtime_resolve_xsave +2 _dl_fixup -2 _dl_fixup "
		  "-1 _dl_runtime_resolve_xsave +1 malloc -1 malloc -0 f");
	/* malloc lasts from its call (time 2) to its return (9) */
	REQUIRE(strace_stack_new(names, NULL, &cb, &s) == 0);
	strace_stack_feed(s, ev, sizeof(ev) / sizeof(ev[0]));
	strace_stack_end(s);
	strace_stack_free(s);
	CHECK_U64(malloc_begin, ==, 2);
	CHECK_U64(malloc_end, ==, 9);

	/* perf 6.1's names: the PLT's header is _init+0x20 */
	ev[2].b = INIT + 0x20;
	ev[3].a = INIT + 0x26;
	CHECK_STR(RUN(ev, 0), "+0 f +1 malloc +2 _dl_runtime_resolve_xsave "
			      "-2 _dl_runtime_resolve_xsave -1 malloc -0 f");
}

/* A lazy binding cut short (an error in the resolver): the stub's frame
 * is entered as it is, the binding's up to the error */
TEST(plt_lazy_binding_cut_short)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x20, PLT_MALLOC),
		E(JUMP, PLT_MALLOC + 0xb, PLT0),
		E(JUMP, PLT0 + 0x6, RESOLVER),
		E(CALL, RESOLVER + 0x40, FIXUP),
		E(ERROR, FIXUP + 0x20, 0),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 malloc@plt "
			      "+2 _dl_runtime_resolve_xsave "
			      "-2 _dl_runtime_resolve_xsave -1 malloc@plt! "
			      "-0 f");
}

/*
 * A tail call (f jumps to g's entry): the person's stack keeps f open as
 * g's caller, and both return at g's return, as uftrace shows them; the
 * machine's stack has g replace f. Through a stub too: f jumps to
 * malloc@plt, which jumps to malloc.
 */
TEST(tail_call_keeps_its_caller)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(JUMP, F + 0x30, G),
		E(JUMP, G + 0x30, H),
		E(RETURN, H + 0x40, MAIN + 0x15),
		E(CALL, MAIN + 0x20, F),
		E(JUMP, F + 0x30, PLT_MALLOC),
		E(JUMP, PLT_MALLOC + 0x4, MALLOC),
		E(RETURN, MALLOC + 0x80, MAIN + 0x25),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 g +2 h -2 h -1 g -0 f "
			      "+0 f +1 malloc -1 malloc -0 f");
	CHECK_STR(RUN_MACHINE(ev), "+0 f -0 f +0 g -0 g +0 h -0 h "
				   "+0 f -0 f +0 malloc@plt -0 malloc@plt "
				   "+0 malloc -0 malloc");
}

/* longjmp: a jump into the middle of a function deeper on the stack */
TEST(longjmp_unwinds)
{
	struct strace_event ev[] = {
		E(CALL, START + 0x5, MAIN),
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x20, G),
		E(CALL, G + 0x20, H),
		E(JUMP, H + 0x40, MAIN + 0x60),
		E(RETURN, MAIN + 0x90, START + 0xa),
	};
	CHECK_STR(RUN(ev, 0), "+0 main +1 f +2 g +3 h -3 h! -2 g! -1 f! "
			      "-0 main");
}

/* a jump to the middle of a function not on the stack (a .cold part)
 * moves the frame into that function and back, returning where it would
 * have; so does running on into the next symbol (seen at a call from it) */
TEST(jump_elsewhere_moves_frame)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(JUMP, F + 0x10, H + 0x30),
		E(JUMP, H + 0x40, F + 0x18),
		E(RETURN, F + 0x40, MAIN + 0x15),
		E(CALL, MAIN + 0x20, F),
		E(CALL, G + 0x10, H), /* f ran on into g */
		E(RETURN, H + 0x10, G + 0x15),
		E(RETURN, G + 0x40, MAIN + 0x25),
	};
	CHECK_STR(RUN(ev, 0), "+0 f -0 f +0 h -0 h +0 f -0 f +0 f -0 f +0 g "
			      "+1 h -1 h -0 g");
}

/* The trace began inside g, called from f, called from main: g calls h,
 * then returns to f, f to main. */
#define ROOTS_EVENTS                                                         \
	{                                                                    \
		E(TRACE_BEGIN, G + 0x10, STRACE_REASON_START),               \
			E(CALL, G + 0x20, H), E(RETURN, H + 0x10, G + 0x25), \
			E(RETURN, G + 0x50, F + 0x25),                       \
			E(RETURN, F + 0x50, MAIN + 0x15),                    \
	}

TEST(unmatched_return_makes_roots)
{
	struct strace_event ev[] = ROOTS_EVENTS;
	struct strace_stack_stats st;
	/* g, where it starts; f found under g, then main under f */
	CHECK_STR(run(ev, 5, 0, &st),
		  "+0 g +1 h -1 h +0 f^ -1 g +0 main^ -1 f -0 main$");
	CHECK_INT(st.roots, ==, 2);
}

/* "name:L " for each frame entered with STRACE_FRAME_LATE, "name " else */
static void late_enter(void *arg, const struct strace_frame *f)
{
	char one[64];

	snprintf(one, sizeof(one), "%s%s ", strace_frame_name(f),
		 f->flags & STRACE_FRAME_LATE ? ":L" : "");
	strncat(arg, one, 255 - strlen(arg));
}

/* the roots a return that matched nothing makes are flagged late (begun
 * at the thread's first event); a root's frame that went on into another
 * function without a call is not: it begins where it went on */
TEST(roots_found_late)
{
	struct strace_event ev[] = {
		E(TRACE_BEGIN, G + 0x10, STRACE_REASON_START),
		E(RETURN, G + 0x50, F + 0x25),
		E(CALL, H + 0x10, MAIN), /* f went on into h */
		E(RETURN, MAIN + 0x40, H + 0x15),
	};
	char log[256] = "";
	struct strace_stack_cb cb = {late_enter, NULL, log};
	struct strace_stack *s;

	for (size_t i = 0; i < 4; i++)
		ev[i].time = 1 + i;
	REQUIRE(strace_stack_new(names, NULL, &cb, &s) == 0);
	strace_stack_feed(s, ev, 4);
	strace_stack_end(s);
	strace_stack_free(s);
	CHECK_STR(log, "g f:L h main ");
}

TEST(syscall_frame)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(SYSCALL, F + 0x8, 0),
		E(SYSRET, 0, F + 0xa),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 [syscall] -1 [syscall] -0 f");
}

/* an interrupt resumed where it was is no frame; a signal is, with its
 * handler, until rt_sigreturn comes back to the interrupted code */
TEST(signal_frame)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(INTERRUPT, F + 0x30, 0),
		E(TRACE_BEGIN, F + 0x30, STRACE_REASON_ENABLE),
		E(INTERRUPT, F + 0x34, 0),
		E(TRACE_BEGIN, HANDLER, STRACE_REASON_ENABLE),
		E(CALL, HANDLER + 0x10, G),
		E(RETURN, G + 0x10, HANDLER + 0x15),
		E(RETURN, HANDLER + 0x30, RESTORE),
		E(SYSCALL, RESTORE + 0x7, 0),
		E(SYSRET, 0, F + 0x34),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 [signal] +2 on_signal +3 g -3 g "
			      "-2 on_signal +2 [syscall] -2 [syscall] "
			      "-1 [signal] -0 f");
}

/* a signal delivered as a syscall returned: the handler starts at the
 * sysret; rt_sigreturn comes back after the syscall */
TEST(signal_at_syscall_return)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(SYSCALL, F + 0x8, 0),
		E(SYSRET, 0, HANDLER),
		E(RETURN, HANDLER + 0x30, RESTORE),
		E(SYSCALL, RESTORE + 0x7, 0),
		E(SYSRET, 0, F + 0xa),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f +1 [syscall] -1 [syscall] +1 [signal] "
			      "+2 on_signal -2 on_signal +2 [syscall] "
			      "-2 [syscall] -1 [signal] -0 f");
}

/* siglongjmp out of a handler unwinds the signal frame */
TEST(siglongjmp_out_of_handler)
{
	struct strace_event ev[] = {
		E(CALL, START + 0x5, MAIN),
		E(CALL, MAIN + 0x10, F),
		E(INTERRUPT, F + 0x34, 0),
		E(TRACE_BEGIN, HANDLER, STRACE_REASON_ENABLE),
		E(JUMP, HANDLER + 0x40, MAIN + 0x70),
		E(RETURN, MAIN + 0x90, START + 0xa),
	};
	CHECK_STR(RUN(ev, 0), "+0 main +1 f +2 [signal] +3 on_signal "
			      "-3 on_signal! -2 [signal]! -1 f! -0 main");
}

/* OCaml: a raise lands in the frame that pushed the handler, however
 * deep it was raised (the ret of caml_raise_exn goes to the handler) */
TEST(ocaml_raise)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, OCAML_F),
		E(EXC_PUSH, OCAML_F + 0x10, OCAML_F + 0x80),
		E(CALL, OCAML_F + 0x20, OCAML_G),
		E(EXC_PUSH, OCAML_G + 0x10, OCAML_G + 0x80),
		E(EXC_POP, OCAML_G + 0x30, 0),
		E(CALL, OCAML_G + 0x40, OCAML_G), /* recursion */
		E(CALL, OCAML_G + 0x40, RAISE),
		E(EXC_RAISE, RAISE + 0x8, OCAML_F + 0x80),
		E(RETURN, RAISE + 0xa, OCAML_F + 0x80),
		E(RETURN, OCAML_F + 0x90, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 camlF +1 camlG +2 camlG +3 caml_raise_exn "
			      "-3 caml_raise_exn! -2 camlG! -1 camlG! "
			      "-0 camlF");
}

/* a frame's handlers leave with it: a raise after it returned (its pop
 * not seen), with no handler pushed since, unwinds nothing */
TEST(ocaml_handlers_leave_with_their_frame)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, OCAML_F),
		E(EXC_PUSH, OCAML_F + 0x10, OCAML_F + 0x80),
		E(RETURN, OCAML_F + 0x60, MAIN + 0x15),
		E(CALL, MAIN + 0x20, OCAML_G),
		E(CALL, OCAML_G + 0x10, H),
		E(EXC_RAISE, H + 0x10, OCAML_F + 0x80),
		E(RETURN, H + 0x20, OCAML_G + 0x15),
		E(RETURN, OCAML_G + 0x20, MAIN + 0x25),
	};
	CHECK_STR(RUN(ev, 0), "+0 camlF -0 camlF +0 camlG +1 h -1 h -0 camlG");
}

/* stack_frame events (depth 0 innermost) seed the stack: returns match
 * the return addresses they give */
TEST(seeds)
{
	struct strace_event ev[] = {
		E(STACK_FRAME, G + 0x44, 0),
		E(STACK_FRAME, F + 0x25, 1),
		E(STACK_FRAME, MAIN + 0x15, 2),
		E(TRACE_BEGIN, G + 0x44, STRACE_REASON_START),
		E(RETURN, G + 0x50, F + 0x25),
		E(RETURN, F + 0x50, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 main +1 f +2 g -2 g -1 f -0 main$");
}

TEST(thread_exit_and_threads)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		{STRACE_EV_CALL, 0, 8, 0, MAIN + 0x10, G},
		E(THREAD_EXIT, 0, 0),
		{STRACE_EV_RETURN, 0, 8, 0, G + 0x10, MAIN + 0x15},
	};
	CHECK_STR(RUN(ev, 0), "+0 f +0 g -0 f$ -0 g");
}

/* gaps keep the stack and mark the frames */
TEST(gap_marks_frames)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(OVERFLOW, F + 0x10, 0),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	struct strace_stack_cb cb = {NULL, NULL, NULL};
	struct strace_stack *s;
	const struct strace_frame *fr;

	REQUIRE(strace_stack_new(names, NULL, &cb, &s) == 0);
	strace_stack_feed(s, ev, 2);
	REQUIRE(strace_stack_frames(s, 7, &fr) == 1);
	CHECK(fr[0].flags & STRACE_FRAME_GAP);
	strace_stack_feed(s, ev + 2, 1);
	CHECK_INT(strace_stack_frames(s, 7, &fr), ==, 0);
	strace_stack_free(s);
}

/* beyond max_depth frames are counted, not kept, and still matched */
TEST(depth_cap)
{
	struct strace_event ev[12];
	struct strace_stack_stats st;
	size_t n = 0;

	for (int i = 0; i < 6; i++)
		ev[n++] = (struct strace_event)E(CALL, G + 0x40, G);
	for (int i = 0; i < 6; i++)
		ev[n++] = (struct strace_event)E(RETURN, G + 0x50, G + 0x45);
	CHECK_STR(run(ev, n, 4, &st), "+0 g +1 g +2 g +3 g -3 g -2 g -1 g -0 g");
	CHECK_INT(st.truncated, ==, 2);
	CHECK_INT(st.max_depth, ==, 4);
}

/* a call to the next instruction (reading the PC) is no frame */
TEST(pc_thunk)
{
	struct strace_event ev[] = {
		E(CALL, MAIN + 0x10, F),
		E(CALL, F + 0x10, F + 0x15),
		E(RETURN, F + 0x40, MAIN + 0x15),
	};
	CHECK_STR(RUN(ev, 0), "+0 f -0 f");
}

/* --- the gate (opts.from, to, min_time, select) -------------------------- */

/* "+depth name@begin" / "-depth name@end" */
static void timed(void *arg, const struct strace_frame *f, const char *sign,
		  uint64_t t)
{
	char one[64];

	(void)arg;
	snprintf(one, sizeof(one), "%s%u %s@%u ", sign, f->depth,
		 strace_frame_name(f), (unsigned)t);
	strncat(log_buf, one, sizeof(log_buf) - strlen(log_buf) - 1);
}

static void timed_enter(void *arg, const struct strace_frame *f)
{
	timed(arg, f, "+", f->begin);
}

static void timed_leave(void *arg, const struct strace_frame *f)
{
	timed(arg, f, "-", f->end);
}

static int select_g(void *arg, const struct strace_frame *f)
{
	(void)arg;
	return f->addr == G;
}

/* Feed ev[] through a gate, logged with the times. */
static const char *run_gate(struct strace_event *ev, size_t n,
			    struct strace_stack_opts *o)
{
	struct strace_stack_cb cb = {timed_enter, timed_leave, NULL};

	return run_with(ev, n, o, &cb, NULL);
}

/* main [1, 9] calls f [2, 7], which calls g [3, 4] and h [5, 6]; then
 * main calls g [8, 9] */
#define GATE_EVENTS                                                          \
	{                                                                    \
		E(TRACE_BEGIN, MAIN, STRACE_REASON_START),                   \
			E(CALL, MAIN + 0x10, F), E(CALL, F + 0x20, G),       \
			E(RETURN, G + 0x30, F + 0x25), E(CALL, F + 0x30, H), \
			E(RETURN, H + 0x30, F + 0x35),                       \
			E(RETURN, F + 0x40, MAIN + 0x15),                    \
			E(CALL, MAIN + 0x20, G),                             \
			E(RETURN, G + 0x30, MAIN + 0x25),                    \
	}

/* a window: the frames that overlap it, begun and ended inside it; a
 * frame left at its start (g at 4) is not shown, nor one begun after it */
TEST(gate_window)
{
	struct strace_event ev[] = GATE_EVENTS;
	struct strace_stack_opts o = {.from = 4, .to = 6};

	CHECK_STR(run_gate(ev, 9, &o),
		  "+0 main@4 +1 f@4 +2 h@5 -2 h@6 -1 f@6 -0 main@6");
	o = (struct strace_stack_opts){.from = 8};
	CHECK_STR(run_gate(ev, 9, &o), "+0 main@8 +1 g@8 -1 g@9 -0 main@9");
	o = (struct strace_stack_opts){.from = 10, .to = 12};
	CHECK_STR(run_gate(ev, 9, &o), "");
	o = (struct strace_stack_opts){.from = 5, .to = 4};
	CHECK_STR(run_gate(ev, 9, &o), "(new failed)");
}

/* min_time: the frames that last that long, entered once that is known */
TEST(gate_min_time)
{
	struct strace_event ev[] = GATE_EVENTS;
	struct strace_stack_opts o = {.min_time = 3};

	CHECK_STR(run_gate(ev, 9, &o), "+0 main@1 +1 f@2 -1 f@7 -0 main@9");
	/* (after the clipping) */
	o = (struct strace_stack_opts){.from = 5, .min_time = 3};
	CHECK_STR(run_gate(ev, 9, &o), "+0 main@5 -0 main@9");
}

/* select: the frames it takes and their callers, not their callees */
TEST(gate_select)
{
	struct strace_event ev[] = GATE_EVENTS;
	struct strace_stack_opts o = {.select = select_g};

	CHECK_STR(run_gate(ev, 9, &o),
		  "+0 main@1 +1 f@2 +2 g@3 -2 g@4 -1 f@7 +1 g@8 -1 g@9 "
		  "-0 main@9");
	o = (struct strace_stack_opts){.select = select_g, .min_time = 2};
	CHECK_STR(run_gate(ev, 9, &o), "");
}

/* a root found late under held frames is held with them; under shown
 * frames, it is shown at once (their caller), begun at the window */
TEST(gate_roots_found_late)
{
	struct strace_event ev[] = ROOTS_EVENTS;
	struct strace_stack_opts o = {.from = 3, .to = 5};

	CHECK_STR(run_gate(ev, 5, &o),
		  "+0 f@3 +1 g@3 -1 g@4 +0 main@3 -1 f@5 -0 main@5");
}

RUN_TESTS("test_stack")
