/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_stream.c - the streaming decode (decoder/
 * stream.c, strace_walker_decode_stream() in decoder.h) alone, against
 * its oracle, the sequential decode of the whole stream
 * (strace_walker_decode()): a trace of a small program (loopgen.h) fed
 * in pieces of many sizes gives the same events, times included; what a
 * piece without a complete PSB+ consumes (nothing); a stream without any
 * PSB (all consumed, no event: a live capture's piece that never syncs is
 * no error, where the sequential decode says -STRACE_E_NOSYNC); a second
 * stream on the same walker.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loopgen.h"

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

static struct strace_image *img;
static uint8_t pt[1 << 18];
static size_t ptlen;

static struct strace_walker *walker(struct evs *out)
{
	struct strace_walk_opts o;
	struct strace_walker *w = NULL;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = out;
	o.tid = 7;
	o.has_time = 1;
	o.time.time_mult = 1; /* perf time = TSC */
	o.time.cap_user_time_zero = 1;
	out->n = 0;
	if (!img && lg_image(&img))
		return NULL;
	return strace_walker_new(img, &o, &w) ? NULL : w;
}

static int same(const struct evs *a, const struct evs *b, const char *what)
{
	size_t i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (memcmp(&a->v[i], &b->v[i], sizeof(a->v[i])))
			break;
	if (i == a->n && i == b->n)
		return 1;
	fprintf(stderr, "  %s: differs at %zu of %zu / %zu\n", what, i, a->n,
		b->n);
	if (i < a->n && i < b->n)
		fprintf(stderr, "    type %u/%u a %llx/%llx b %llx/%llx "
				"time %llu/%llu flags %x/%x\n",
			a->v[i].type, b->v[i].type,
			(unsigned long long)a->v[i].a,
			(unsigned long long)b->v[i].a,
			(unsigned long long)a->v[i].b,
			(unsigned long long)b->v[i].b,
			(unsigned long long)a->v[i].time,
			(unsigned long long)b->v[i].time, a->v[i].flags,
			b->v[i].flags);
	return 0;
}

/* the sequential decode of pt */
static long sequential(struct evs *out)
{
	struct strace_walker *w = walker(out);
	long r;

	if (!w)
		return -1000;
	r = strace_walker_decode(w, pt, ptlen);
	strace_walker_free(w);
	return r;
}

/* pt in pieces of piece bytes (0: random sizes up to 8 KiB), on w.
 * Returns the events in all, or the first error. */
static long streamed(struct strace_walker *w, size_t piece, uint64_t seed)
{
	uint8_t *acc = malloc(ptlen);
	size_t have = 0, at = 0, used;
	long r, all = 0;

	if (!acc)
		return -1000;
	for (;;) {
		size_t add = piece ? piece : 1 + (size_t)(seed % 8192);
		int final;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		seed ^= seed >> 29;
		if (add > ptlen - at)
			add = ptlen - at;
		final = at + add == ptlen;
		memcpy(acc + have, pt + at, add);
		have += add;
		at += add;
		used = 0;
		r = strace_walker_decode_stream(w, acc, have, final, &used);
		if (r < 0) {
			all = r;
			break;
		}
		all += r;
		if (used > have) {
			all = -2000;
			break;
		}
		memmove(acc, acc + used, have - used);
		have -= used;
		if (final)
			break;
	}
	free(acc);
	return all;
}

static void setup(void)
{
	if (!ptlen)
		ptlen = lg_make(pt, sizeof(pt), 0x5eed);
}

TEST(pieces_equal_sequential)
{
	static const size_t pieces[] = {0, 0, 0, 64, 700, 1500, 4096, 65536,
					1 << 18};
	struct evs seq = {malloc(MAXEV * sizeof(struct strace_event)), 0};
	struct evs st = {malloc(MAXEV * sizeof(struct strace_event)), 0};
	size_t syscalls = 0, returns = 0;

	setup();
	REQUIRE(ptlen > 100000 && seq.v && st.v);
	REQUIRE(sequential(&seq) > 0);
	REQUIRE(seq.n > 5000 && seq.n < MAXEV);
	for (size_t i = 0; i < seq.n; i++) {
		CHECK_INT(seq.v[i].type, !=, STRACE_EV_ERROR);
		syscalls += seq.v[i].type == STRACE_EV_SYSCALL;
		returns += seq.v[i].type == STRACE_EV_RETURN;
	}
	/* the program ran as made: calls, returns, system calls */
	CHECK(syscalls > 1000);
	CHECK(returns > 2000);
	CHECK_INT(seq.v[0].type, ==, STRACE_EV_TRACE_BEGIN);
	CHECK_INT(seq.v[seq.n - 1].type, ==, STRACE_EV_TRACE_END);
	CHECK_U64(seq.v[1].time, >, 1000000); /* the first PSB+'s TSC on */
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		struct strace_walker *w = walker(&st);
		char what[64];
		long r;

		REQUIRE(w);
		r = streamed(w, pieces[k], 77 + k);
		snprintf(what, sizeof(what), "pieces of %zu", pieces[k]);
		CHECK_INT(r, ==, (long)st.n);
		CHECK(same(&seq, &st, what));
		strace_walker_free(w);
	}
	free(seq.v);
	free(st.v);
}

/* After a final piece the next call starts a new stream: the same trace
 * again gives the same events again. */
TEST(second_stream)
{
	struct evs seq = {malloc(MAXEV * sizeof(struct strace_event)), 0};
	struct evs st = {malloc(MAXEV * sizeof(struct strace_event)), 0};
	struct strace_walker *w;
	size_t first;

	setup();
	REQUIRE(seq.v && st.v && sequential(&seq) > 0);
	w = walker(&st);
	REQUIRE(w);
	REQUIRE(streamed(w, 3000, 1) > 0);
	first = st.n;
	CHECK(same(&seq, &st, "first stream"));
	st.n = 0;
	REQUIRE(streamed(w, 5000, 2) > 0);
	CHECK_U64(st.n, ==, first);
	CHECK(same(&seq, &st, "second stream"));
	strace_walker_free(w);
	free(seq.v);
	free(st.v);
}

/* A piece with no complete PSB+ after its start: nothing consumed, no
 * event (call again with more); a final piece without any PSB: consumed,
 * no event, no error. */
TEST(incomplete_and_no_psb)
{
	struct evs st = {malloc(MAXEV * sizeof(struct strace_event)), 0};
	struct strace_walker *w;
	static uint8_t junk[4096];
	size_t used = 99;

	setup();
	REQUIRE(st.v);
	w = walker(&st);
	REQUIRE(w);
	/* the first PSB+ cut before its end */
	CHECK_INT(strace_walker_decode_stream(w, pt, 10, 0, &used), ==, 0);
	CHECK_U64(used, ==, 0);
	CHECK_U64(st.n, ==, 0);
	/* then the whole, final: all its events */
	CHECK_INT(strace_walker_decode_stream(w, pt, ptlen, 1, &used), >, 0);
	CHECK_U64(used, ==, ptlen);
	strace_walker_free(w);

	w = walker(&st);
	REQUIRE(w);
	memset(junk, 0x55, sizeof(junk));
	CHECK_INT(strace_walker_decode_stream(w, junk, sizeof(junk), 1, &used),
		  ==, 0);
	CHECK_U64(used, ==, sizeof(junk));
	CHECK_U64(st.n, ==, 0);
	/* (where the sequential decode says -STRACE_E_NOSYNC) */
	CHECK_INT(strace_walker_decode(w, junk, sizeof(junk)), ==,
		  -STRACE_E_NOSYNC);
	strace_walker_free(w);
	strace_image_free(img);
	img = NULL;
	free(st.v);
}

RUN_TESTS("test_decoder_stream")
