/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_ref.c - the reference decoder (decoder/ref.c,
 * ref.h: libipt's block decoder turned into the walker's events) alone,
 * called through its own entry, on a small program's trace (loopgen.h)
 * whose contents the generator counts: the events it must give (one
 * begin, a call and a return per turn of the loop, a system call and
 * its return per syscall made, an end) with their addresses, times from
 * the PSB+s' TSCs, its counts; then what it must report or refuse: a
 * PSB+'s FUP damaged to an address without code (a desync, then a
 * resync), no PSB, a sink's error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loopgen.h"
#include "decoder/ref.h"

#define MAXEV (1 << 18)

struct evs {
	struct strace_event *v;
	size_t n, fail_at;
};

static int collect(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;

	if (e->fail_at && e->n + 1 == e->fail_at)
		return -EPIPE;
	if (e->n < MAXEV)
		e->v[e->n++] = *ev;
	return 0;
}

static uint8_t pt[1 << 17];
static size_t ptlen;
static struct lg_counts want;
static struct evs out;

static long ref(const uint8_t *buf, size_t len, struct strace_walk_stats *st)
{
	struct strace_walk_opts o;
	struct strace_image *img = NULL;
	struct strace_bcache *cache = NULL;
	long r = -1000;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = &out;
	o.tid = 7;
	o.flags = STRACE_WALK_EXACT_TIMES; /* the times as the packets say */
	o.has_time = 1;
	o.time.time_mult = 1;
	o.time.cap_user_time_zero = 1;
	out.n = 0;
	memset(st, 0, sizeof(*st));
	if (!lg_image(&img) && !strace_bcache_new(0, &cache))
		r = strace_walker_decode_ref(img, &o, cache, buf, len, st);
	strace_bcache_free(cache);
	strace_image_free(img);
	return r;
}

static void setup(void)
{
	if (!ptlen)
		ptlen = lg_make_counted(pt, sizeof(pt), 0xabc, &want);
	if (!out.v)
		out.v = malloc(MAXEV * sizeof(*out.v));
}

TEST(events_of_the_program)
{
	struct strace_walk_stats st;
	size_t n[64] = {0};
	long r;

	setup();
	REQUIRE(ptlen > 50000 && out.v);
	r = ref(pt, ptlen, &st);
	REQUIRE(r > 0);
	CHECK_INT(r, ==, (long)out.n);
	for (size_t i = 0; i < out.n; i++) {
		const struct strace_event *e = &out.v[i];
		REQUIRE(e->type < 64);
		n[e->type]++;
		CHECK_INT(e->tid, ==, 7);
		switch (e->type) {
		case STRACE_EV_CALL:
			CHECK_U64(e->a, ==, LG_A);
			CHECK_U64(e->b, ==, LG_F);
			break;
		case STRACE_EV_RETURN:
			CHECK_U64(e->a, ==, LG_F + 5);
			CHECK_U64(e->b, ==, LG_A + 5);
			break;
		case STRACE_EV_SYSCALL:
			CHECK_U64(e->a, ==, LG_F + 2);
			break;
		case STRACE_EV_SYSRET:
			CHECK_U64(e->b, ==, LG_F + 4);
			/* its system call right before */
			CHECK(i && e[-1].type == STRACE_EV_SYSCALL);
			break;
		}
		/* times: from the first PSB+'s TSC on, never back */
		CHECK_U64(e->time, >, 1000000);
		if (i)
			CHECK_U64(e->time, >=, e[-1].time);
	}
	printf("  %zu turns, %zu system calls, %zu PSBs made; %zu events\n",
	       want.turns, want.syscalls, want.psbs, out.n);
	CHECK_INT(out.v[0].type, ==, STRACE_EV_TRACE_BEGIN);
	CHECK_U64(out.v[0].a, ==, LG_A);
	CHECK_U64(out.v[0].b, ==, STRACE_REASON_START);
	CHECK_INT(out.v[out.n - 1].type, ==, STRACE_EV_TRACE_END);
	CHECK_U64(n[STRACE_EV_TRACE_BEGIN], ==, 1);
	CHECK_U64(n[STRACE_EV_TRACE_END], ==, 1);
	CHECK_U64(n[STRACE_EV_ERROR], ==, 0);
	/* the last turn may be cut by the trace's end */
	CHECK(n[STRACE_EV_CALL] + 1 >= want.turns &&
	      n[STRACE_EV_CALL] <= want.turns);
	CHECK(n[STRACE_EV_RETURN] + 1 >= want.turns &&
	      n[STRACE_EV_RETURN] <= want.turns);
	CHECK(n[STRACE_EV_SYSCALL] + 1 >= want.syscalls &&
	      n[STRACE_EV_SYSCALL] <= want.syscalls);
	CHECK_U64(n[STRACE_EV_SYSRET], ==, n[STRACE_EV_SYSCALL]);
	/* its counts: every event, the PSBs, the branches it followed (the
	 * calls, returns and system calls, and the jmp back each turn) */
	CHECK_U64(st.events, ==, out.n);
	CHECK_U64(st.errors, ==, 0);
	CHECK_U64(st.bytes, ==, ptlen);
	CHECK(st.branches >= n[STRACE_EV_CALL] + n[STRACE_EV_RETURN] +
				    n[STRACE_EV_SYSCALL]);
}

/* A PSB+'s FUP damaged to an address without code, in the middle of a
 * decode in sync: the trace and the code disagree (a desync) at the
 * FUP; tracing begins again at the next PSB, the error its reason; the
 * rest as before. */
TEST(damaged_fup_error_and_resync)
{
	struct strace_walk_stats st;
	uint64_t offs[256];
	size_t n, at = 0, errors = 0, begins = 0;
	uint8_t *bad;

	setup();
	REQUIRE(out.v);
	n = strace_pt_split(pt, ptlen, 0, offs, 256);
	REQUIRE(n > 10);
	/* the FUP of the PSB+ at the middle cut: PSB (16), MODE.Exec (2),
	 * TSC (8), FUP (0x7d: sext-48, 7): its IP's second byte */
	at = (size_t)offs[n / 2] + 16 + 2 + 8;
	REQUIRE(pt[at] == 0x7d);
	bad = malloc(ptlen);
	REQUIRE(bad);
	memcpy(bad, pt, ptlen);
	bad[at + 2] ^= 0x5a; /* 0x401000: 0x404a00 */
	REQUIRE(ref(bad, ptlen, &st) > 0);
	for (size_t i = 0; i < out.n; i++) {
		const struct strace_event *e = &out.v[i];
		if (e->type == STRACE_EV_ERROR) {
			errors++;
			CHECK_INT(e->flags, ==, STRACE_E_DESYNC);
			/* where libipt saw it: after the FUP, at the
			 * PSB+'s end */
			CHECK(e->b > at && e->b <= at + 16);
			CHECK(i + 1 < out.n &&
			      e[1].type == STRACE_EV_TRACE_BEGIN &&
			      e[1].b == STRACE_REASON_ERROR);
		}
		begins += e->type == STRACE_EV_TRACE_BEGIN;
	}
	CHECK_U64(errors, ==, 1);
	CHECK_U64(begins, ==, 2);
	CHECK_U64(st.errors, ==, 1);
	free(bad);
}

/* No PSB: refused; a sink's error: the answer, the events before it
 * given. */
TEST(refused)
{
	struct strace_walk_stats st;
	static uint8_t junk[4096];

	setup();
	REQUIRE(out.v);
	memset(junk, 0x55, sizeof(junk));
	CHECK_INT(ref(junk, sizeof(junk), &st), ==, -STRACE_E_NOSYNC);
	CHECK_U64(out.n, ==, 0);
	CHECK_INT(ref(pt, 0, &st), ==, -STRACE_E_NOSYNC);
	out.fail_at = 100;
	CHECK_INT(ref(pt, ptlen, &st), ==, -EPIPE);
	CHECK_U64(out.n, ==, 99);
	out.fail_at = 0;
	free(out.v);
	out.v = NULL;
}

RUN_TESTS("test_decoder_ref")
