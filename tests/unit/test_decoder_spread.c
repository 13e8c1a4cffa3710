/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_spread.c - the spreader (decoder/spread.h,
 * spread.c): times between timing packets spread by instruction count,
 * through the decoders' inline hold into a callback, and through the
 * named API of decoder.h (strace_dec_spreader_*, the dlfilter's) into a
 * ring writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "decoder/spread.h"
#include "strace/ring.h"

struct evs {
	struct strace_event v[16];
	size_t n;
};

static int collect(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;

	if (e->n == 16)
		return -1;
	e->v[e->n++] = *ev;
	return 0;
}

static struct strace_event ev_at(unsigned type, uint64_t time)
{
	struct strace_event e;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.time = time;
	return e;
}

/* Events that share the time of the one before them go out spread over
 * the interval up to the next time, by their instruction counts; a time
 * point without an event (spread_mark()) ends an interval as an event
 * would. */
TEST(spread_by_instructions)
{
	struct strace_dec_spread sp = {0};
	struct strace_walk_opts o = {0};
	struct evs got = {0};
	struct strace_event e;

	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = &got;
	e = ev_at(STRACE_EV_CALL, 1000);
	CHECK_INT(spread_put(&sp, &o, &e, 0), ==, 0);
	e = ev_at(STRACE_EV_CALL, 1000);
	CHECK_INT(spread_put(&sp, &o, &e, 25), ==, 0);
	e = ev_at(STRACE_EV_RETURN, 1000);
	CHECK_INT(spread_put(&sp, &o, &e, 75), ==, 0);
	/* held until the interval closes */
	CHECK_INT(got.n, ==, 1);
	CHECK_INT(spread_mark(&sp, &o, 2000, 100), ==, 0);
	REQUIRE(got.n == 3);
	CHECK_INT(got.v[0].time, ==, 1000);
	CHECK_INT(got.v[1].time, ==, 1250);
	CHECK_INT(got.v[2].time, ==, 1750);
	/* a time earlier than the interval's start ends it unspread */
	e = ev_at(STRACE_EV_CALL, 2000);
	CHECK_INT(spread_put(&sp, &o, &e, 150), ==, 0);
	e = ev_at(STRACE_EV_CALL, 1500);
	CHECK_INT(spread_put(&sp, &o, &e, 160), ==, 0);
	CHECK_INT(strace_dec_spread_flush(&sp, &o), ==, 0);
	REQUIRE(got.n == 5);
	CHECK_INT(got.v[3].time, ==, 2000);
	CHECK_INT(got.v[4].time, ==, 1500);
	strace_dec_spread_free(&sp);
}

/* The stop types: the trace stops after them for a time the instruction
 * count does not see. */
TEST(spread_stop_types)
{
	CHECK(spread_stops(STRACE_EV_SYSCALL));
	CHECK(spread_stops(STRACE_EV_TRACE_END));
	CHECK(spread_stops(STRACE_EV_ERROR));
	CHECK(!spread_stops(STRACE_EV_CALL));
	CHECK(!spread_stops(STRACE_EV_RETURN));
}

/* The named API into a ring: the same times as the hold gives. */
TEST(spreader_into_ring)
{
	char dir[] = "/tmp/test_decoder_spread.XXXXXX", path[64];
	struct strace_ring_opts ro = {sizeof(ro), 1 << 12, 1 << 16,
				      STRACE_RING_LOSSLESS, 0, 0};
	struct strace_ring *ring = NULL;
	struct strace_writer *w = NULL;
	struct strace_reader *rd = NULL;
	struct strace_dec_spreader *s = NULL;
	struct strace_batch b;
	struct strace_event e;
	long n;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ring", dir);
	REQUIRE(strace_ring_create(path, &ro, &ring) == 0);
	REQUIRE(strace_writer_open(ring, &w) == 0);
	REQUIRE(strace_dec_spreader_new(w, UINT64_MAX, &s) == 0);
	e = ev_at(STRACE_EV_CALL, 1000);
	CHECK_INT(strace_dec_spreader_put(s, &e, 0), ==, 0);
	e = ev_at(STRACE_EV_RETURN, 1000);
	CHECK_INT(strace_dec_spreader_put(s, &e, 40), ==, 0);
	CHECK_INT(strace_dec_spreader_mark(s, 1400, 80), ==, 0);
	e = ev_at(STRACE_EV_CALL, 1400);
	CHECK_INT(strace_dec_spreader_put(s, &e, 100), ==, 0);
	CHECK_INT(strace_dec_spreader_flush(s), ==, 0);
	strace_dec_spreader_free(s);
	strace_dec_spreader_free(NULL);
	CHECK_INT(strace_writer_flush(w), ==, 0);
	REQUIRE(strace_reader_open(ring, 0, &rd) == 0);
	n = strace_reader_next(rd, &b, 0, 0);
	REQUIRE(n == 3);
	CHECK_INT(b.ev[0].time, ==, 1000);
	CHECK_INT(b.ev[1].time, ==, 1200);
	CHECK_INT(b.ev[1].type, ==, STRACE_EV_RETURN);
	CHECK_INT(b.ev[2].time, ==, 1400);
	strace_reader_release(rd, &b);
	strace_reader_close(rd);
	strace_writer_close(w);
	strace_ring_close(ring);
	unlink(path);
	rmdir(dir);
}

RUN_TESTS("test_decoder_spread")
