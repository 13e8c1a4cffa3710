/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_evvec.c - the event vector (decoder/evvec.h,
 * evvec.c), the sink a parallel decode's walkers write into: its
 * storage, its time points, and the worker's spread of its times (the
 * runs the merge may take as they are), both over a whole vector and as
 * the events come.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "decoder/evvec.h"

static struct strace_event ev_at(unsigned type, uint64_t time)
{
	struct strace_event e;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.time = time;
	return e;
}

/* Events and time points are appended in order, each event with its
 * instruction count, each time point with the index of the event after
 * it; the vector grows past what was reserved. */
TEST(vec_storage)
{
	struct evvec v;
	struct strace_event e = ev_at(STRACE_EV_CALL, 7);

	memset(&v, 0, sizeof(v));
	REQUIRE(strace_dec_vec_reserve(&v, 2) == 0);
	CHECK_INT(v.cap, ==, 2);
	for (unsigned k = 0; k < 5; k++) {
		e.a = k;
		CHECK_INT(vec_put(&v, &e, 10 * k), ==, 0);
	}
	CHECK_INT(strace_dec_vec_mark(&v, 9, 55), ==, 0);
	CHECK_INT(strace_dec_vec_push(&v, &e), ==, 0);
	REQUIRE(v.n == 6);
	CHECK(v.cap >= 6);
	CHECK_INT(v.v[3].a, ==, 3);
	CHECK_INT(v.ins[3], ==, 30);
	CHECK_INT(v.ins[5], ==, 0); /* (a callback's: no count) */
	REQUIRE(v.nmk == 1);
	CHECK_INT(v.mk[0].at, ==, 5);
	CHECK_INT(v.mk[0].time, ==, 9);
	CHECK_INT(v.mk[0].ins, ==, 55);
	CHECK_INT(v.err, ==, 0);
	strace_dec_vec_free(&v);
	CHECK(v.v == NULL && v.n == 0 && v.cap == 0 && v.nmk == 0);
	strace_dec_vec_free(&v); /* twice is fine */
}

/* Fills v with: a call at 1000 (0 instructions), a return at 1000 (50),
 * a time point 2000 (100), a call at 3000 (150). */
static void fill(struct evvec *v)
{
	struct strace_event e;

	e = ev_at(STRACE_EV_CALL, 1000);
	REQUIRE(strace_dec_vec_put(v, &e, 0) == 0);
	e = ev_at(STRACE_EV_RETURN, 1000);
	REQUIRE(strace_dec_vec_put(v, &e, 50) == 0);
	REQUIRE(strace_dec_vec_mark(v, 2000, 100) == 0);
	e = ev_at(STRACE_EV_CALL, 3000);
	REQUIRE(strace_dec_vec_put(v, &e, 150) == 0);
}

/* The worker's spread over a whole vector: the return held in the
 * interval (1000, 0) to (2000, 100) is a run, spread as the merge's
 * spreader would (1500); given back, it has its time again. */
TEST(vec_spread_whole)
{
	struct evvec v;

	memset(&v, 0, sizeof(v));
	fill(&v);
	REQUIRE(strace_dec_seg_spread(&v, 0) == 0);
	REQUIRE(v.nrun == 1);
	CHECK_INT(v.run[0].a, ==, 1);
	CHECK_INT(v.run[0].b, ==, 2);
	CHECK_INT(v.run[0].t0, ==, 1000);
	CHECK_INT(v.run[0].i0, ==, 0);
	CHECK_INT(v.v[0].time, ==, 1000);
	CHECK_INT(v.v[1].time, ==, 1500);
	CHECK_INT(v.v[2].time, ==, 3000);
	seg_run_untake(v.v, &v.run[0]);
	CHECK_INT(v.v[1].time, ==, 1000);
	/* nothing at or after from: no run */
	REQUIRE(strace_dec_seg_spread(&v, 3) == 0);
	CHECK_INT(v.nrun, ==, 0);
	strace_dec_vec_free(&v);
}

/* The same spread as the events come (the worker's), and none with the
 * spread off. */
TEST(vec_spread_as_they_come)
{
	struct evvec v;

	memset(&v, 0, sizeof(v));
	strace_dec_seg_sp_start(&v, 1);
	v.sp.from = 0;
	fill(&v);
	REQUIRE(v.nrun == 1);
	CHECK_INT(v.run[0].a, ==, 1);
	CHECK_INT(v.v[1].time, ==, 1500);
	strace_dec_vec_free(&v);

	memset(&v, 0, sizeof(v));
	strace_dec_seg_sp_start(&v, 0);
	fill(&v);
	CHECK_INT(v.nrun, ==, 0);
	CHECK_INT(v.v[1].time, ==, 1000);
	strace_dec_vec_free(&v);
}

RUN_TESTS("test_decoder_evvec")
