/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_walk_vec.c - the packet loop compiled for a
 * parallel decode's workers (decoder/walk_vec.c: loop.h with WALK_VEC,
 * its events straight to an event vector), alone on a small program's
 * trace (loopgen.h), against its oracle: the same loop compiled for a
 * callback (walk.c). The same events (but for the workers' SEG_F_ADV
 * mark), each with the instruction count it ran at, never going back;
 * the time points kept; the same counts; damaged the same.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loopgen.h"
#include "decoder/evvec.h"

#define MAXEV (1 << 18)

struct evs {
	struct strace_event *v;
	size_t n;
};

static int collect(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;

	if (e->n < MAXEV)
		e->v[e->n++] = *ev;
	return 0;
}

static uint8_t pt[1 << 17];
static size_t ptlen;

/* buf decoded to a callback (vec NULL) or into vec; *st the counts. */
static long decode(const uint8_t *buf, size_t len, struct evs *out,
		   struct evvec *vec, struct strace_walk_stats *st)
{
	struct strace_walk_opts o;
	struct strace_image *img = NULL;
	struct strace_walker *w = NULL;
	long r = -1000;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.emit = vec ? strace_dec_vec_push : collect;
	o.emit_arg = vec ? (void *)vec : (void *)out;
	o.tid = 7;
	o.flags = STRACE_WALK_EXACT_TIMES; /* no spreader: times as made */
	o.has_time = 1;
	o.time.time_mult = 1;
	o.time.cap_user_time_zero = 1;
	if (out)
		out->n = 0;
	if (!lg_image(&img) && !strace_walker_new(img, &o, &w)) {
		r = strace_walker_decode(w, buf, len);
		strace_walker_stats(w, st);
	}
	strace_walker_free(w);
	strace_image_free(img);
	return r;
}

/* Returns the decode errors seen. */
static uint64_t against_callback(const uint8_t *buf, const char *what)
{
	struct evs cb = {malloc(MAXEV * sizeof(struct strace_event)), 0};
	struct strace_walk_stats s0, s1;
	struct evvec v;
	size_t diff = SIZE_MAX;
	long r;

	memset(&v, 0, sizeof(v));
	memset(&s0, 0, sizeof(s0));
	if (!cb.v || decode(buf, ptlen, &cb, NULL, &s0) <= 0) {
		th_failed_checks++;
		free(cb.v);
		return 0;
	}
	r = decode(buf, ptlen, NULL, &v, &s1);
	CHECK_INT(r, ==, (long)cb.n);
	if (v.n != cb.n)
		diff = v.n < cb.n ? v.n : cb.n;
	for (size_t i = 0; i < v.n && i < cb.n && diff == SIZE_MAX; i++) {
		struct strace_event e = v.v[i];
		e.flags &= (uint16_t)~SEG_F_ADV;
		if (memcmp(&e, &cb.v[i], sizeof(e)))
			diff = i;
		if (i && v.ins[i] && v.ins[i] < v.ins[i - 1])
			diff = i;
	}
	if (diff != SIZE_MAX)
		fprintf(stderr, "  %s: differs at %zu\n", what, diff);
	CHECK(diff == SIZE_MAX);
	CHECK_U64(v.err, ==, 0);
	/* each turn's instructions (call, je, [syscall, nop,] ret, jmp) */
	CHECK(v.n && v.ins[v.n - 1] > 4 * v.n / 3);
	CHECK(v.nmk > 0); /* the TSCs' time points */
	for (size_t m = 1; m < v.nmk; m++)
		CHECK(v.mk[m].at >= v.mk[m - 1].at);
	CHECK_U64(s1.events, ==, s0.events);
	CHECK_U64(s1.branches, ==, s0.branches);
	CHECK_U64(s1.insns, ==, s0.insns);
	CHECK_U64(s1.errors, ==, s0.errors);
	strace_dec_vec_free(&v);
	free(cb.v);
	return s0.errors;
}

TEST(vector_equals_callback)
{
	ptlen = lg_make(pt, sizeof(pt), 0x77);
	REQUIRE(ptlen > 50000);
	CHECK_U64(against_callback(pt, "clean"), ==, 0);
}

TEST(damaged_equals_callback)
{
	static uint8_t bad[sizeof(pt)];

	REQUIRE(ptlen);
	memcpy(bad, pt, ptlen);
	for (size_t k = 1; k < 30; k++)
		bad[(k * 4099) % ptlen] ^= 0xa5;
	CHECK(against_callback(bad, "damaged") > 0);
}

RUN_TESTS("test_decoder_walk_vec")
