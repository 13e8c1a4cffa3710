/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_segment.c - the segment layer (decoder/
 * segment.h, segment.c) alone, on jobs made by hand: the merge of a
 * segment's events into what the sequential decode says (its first begin
 * replaced by the state at the segment's start: a begin with its reason,
 * a syscall's return, an overflow, or nothing when in sync), the state
 * handed on, the stats added, a pending overflow told at the end, the
 * worker's settle (SEG_F_ADV, STRACE_F_NAMED), a sink's error, and a
 * segment without a PSB refused. (test_decoder_flow compares whole
 * parallel decodes with sequential ones.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "decoder/segment.h"

#define MAXEV 64

struct evs {
	struct strace_event v[MAXEV];
	size_t n;
	int fail_at; /* the sink's error at this event (0: none) */
};

static int collect(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;

	if (e->fail_at && e->n + 1 == (size_t)e->fail_at)
		return -EPIPE;
	if (e->n < MAXEV)
		e->v[e->n++] = *ev;
	return 0;
}

static struct strace_image *none;

/* A walker handing events to out as they come (no time, no spread). */
static struct strace_walker *walker(struct evs *out)
{
	struct strace_walk_opts o;
	struct strace_walker *w = NULL;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = out;
	o.tid = 7;
	memset(out, 0, sizeof(*out));
	if (!none && strace_image_new(NULL, &none))
		return NULL;
	if (strace_walker_new(none, &o, &w))
		return NULL;
	return w;
}

static void put(struct seg_job *j, unsigned type, uint16_t flags,
		uint64_t a, uint64_t b, uint64_t time)
{
	struct strace_event e;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.flags = flags;
	e.a = a;
	e.b = b;
	e.time = time;
	e.tid = 7;
	REQUIRE(strace_dec_vec_put(&j->ev, &e, j->ev.n * 10) == 0);
}

/* A segment: a call, its first begin at 0x1000 (index 1), a return. */
static void job(struct seg_job *j)
{
	memset(j, 0, sizeof(*j));
	put(j, STRACE_EV_CALL, 0, 0x10, 0x20, 100);
	put(j, STRACE_EV_TRACE_BEGIN, STRACE_F_TIME_EXACT, 0x1000,
	    STRACE_REASON_START, 200);
	put(j, STRACE_EV_RETURN, 0, 0x30, 0x40, 300);
	j->notes.first_idx = 1;
	j->notes.first_n = 1;
	j->notes.first_ip = 0x1000;
	j->end_state.have_ip = j->end_state.enabled = 1;
	j->end_state.begin_reason = STRACE_REASON_ERROR;
	j->st.insns = 30;
	j->st.branches = 3;
	j->st.packets = 5;
}

/* The stream's first segment: taken as it is; the state becomes its
 * end's, its stats are added. */
TEST(first_segment_as_it_is)
{
	struct evs out;
	struct strace_walker *w = walker(&out);
	struct seg_state S = {0};
	struct seg_job j;

	REQUIRE(w);
	job(&j);
	CHECK_INT(strace_dec_seg_merge(w, &j, 1, &S), ==, 0);
	REQUIRE(out.n == 3);
	CHECK_INT(out.v[1].type, ==, STRACE_EV_TRACE_BEGIN);
	CHECK_U64(out.v[1].b, ==, STRACE_REASON_START);
	CHECK_U64(out.v[2].time, ==, 300);
	CHECK_INT(S.have_ip, ==, 1);
	CHECK_INT(S.begin_reason, ==, STRACE_REASON_ERROR);
	CHECK_U64(w->st.insns, ==, 30);
	CHECK_U64(w->st.branches, ==, 3);
	CHECK_U64(w->st.packets, ==, 5);
	CHECK_U64(w->st.events, ==, 3);
	/* a second one: the stats go on adding */
	strace_dec_vec_free(&j.ev);
	job(&j);
	CHECK_INT(strace_dec_seg_merge(w, &j, 1, &S), ==, 0);
	CHECK_U64(w->st.insns, ==, 60);
	CHECK_U64(out.n, ==, 6);
	strace_dec_vec_free(&j.ev);
	strace_walker_free(w);
}

/* A later segment's first begin says what the sequential decode says at
 * the segment's start: the reason the state holds, an error before it in
 * the segment, a syscall's return, an overflow then an overflow's begin. */
TEST(first_begin_replaced)
{
	struct evs out;
	struct strace_walker *w = walker(&out);
	struct seg_state S;
	struct seg_job j;

	REQUIRE(w);
	memset(&S, 0, sizeof(S));
	S.begin_reason = STRACE_REASON_OVERFLOW;
	job(&j);
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	REQUIRE(out.n == 3);
	CHECK_INT(out.v[1].type, ==, STRACE_EV_TRACE_BEGIN);
	CHECK_U64(out.v[1].a, ==, 0x1000);
	CHECK_U64(out.v[1].b, ==, STRACE_REASON_OVERFLOW);
	CHECK_INT(out.v[1].flags, ==, STRACE_F_TIME_EXACT);
	CHECK_INT(S.begin_reason, ==, STRACE_REASON_ERROR); /* its end's */
	strace_dec_vec_free(&j.ev);

	/* an error before it in the segment */
	out.n = 0;
	memset(&S, 0, sizeof(S));
	job(&j);
	j.notes.err_before = 1;
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	CHECK_U64(out.v[1].b, ==, STRACE_REASON_ERROR);
	strace_dec_vec_free(&j.ev);

	/* a syscall pending: its return, to the begin's address */
	out.n = 0;
	memset(&S, 0, sizeof(S));
	S.pending_syscall = 1;
	job(&j);
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	REQUIRE(out.n == 3);
	CHECK_INT(out.v[1].type, ==, STRACE_EV_SYSRET);
	CHECK_U64(out.v[1].a, ==, 0);
	CHECK_U64(out.v[1].b, ==, 0x1000);
	strace_dec_vec_free(&j.ev);

	/* an overflow pending: the overflow (at the begin's address, with
	 * its offset), then a begin for the overflow, without TIME_EXACT */
	out.n = 0;
	memset(&S, 0, sizeof(S));
	S.pending_ovf = 1;
	S.ovf_offset = 0x777;
	job(&j);
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	REQUIRE(out.n == 4);
	CHECK_INT(out.v[1].type, ==, STRACE_EV_OVERFLOW);
	CHECK_U64(out.v[1].a, ==, 0x1000);
	CHECK_U64(out.v[1].b, ==, 0x777);
	CHECK_INT(out.v[2].type, ==, STRACE_EV_TRACE_BEGIN);
	CHECK_U64(out.v[2].b, ==, STRACE_REASON_OVERFLOW);
	CHECK_INT(out.v[2].flags, ==, 0);
	strace_dec_vec_free(&j.ev);
	strace_walker_free(w);
}

/* In sync (the begin came from the segment's first PSB+, and the state
 * has an address with tracing on): the begin is dropped, its TIME_EXACT
 * goes to the next event. */
TEST(in_sync_begin_dropped)
{
	struct evs out;
	struct strace_walker *w = walker(&out);
	struct seg_state S;
	struct seg_job j;

	REQUIRE(w);
	memset(&S, 0, sizeof(S));
	S.have_ip = S.enabled = 1;
	job(&j);
	j.notes.first_from_psb0 = 1;
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	REQUIRE(out.n == 2);
	CHECK_INT(out.v[0].type, ==, STRACE_EV_CALL);
	CHECK_INT(out.v[1].type, ==, STRACE_EV_RETURN);
	CHECK_INT(out.v[1].flags, ==, STRACE_F_TIME_EXACT);
	strace_dec_vec_free(&j.ev);
	/* out of sync (no address): the begin is told */
	out.n = 0;
	S.have_ip = 0;
	job(&j);
	j.notes.first_from_psb0 = 1;
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	CHECK_U64(out.n, ==, 3);
	strace_dec_vec_free(&j.ev);
	strace_walker_free(w);
}

/* A segment where tracing stayed off (no begin): the state says so, an
 * overflow in it stays pending and, after the last segment, is told;
 * not twice, nor when the decode told it at its end. */
TEST(tracing_off_and_end_overflow)
{
	struct evs out;
	struct strace_walker *w = walker(&out);
	struct seg_state S;
	struct seg_job j;

	REQUIRE(w);
	memset(&S, 0, sizeof(S));
	S.have_ip = S.enabled = 1;
	memset(&j, 0, sizeof(j));
	j.notes.first_idx = -1;
	j.notes.ovf_before = 1;
	j.notes.ovf_before_off = 0x99;
	j.notes.err_before = 1;
	CHECK_INT(strace_dec_seg_merge(w, &j, 0, &S), ==, 0);
	CHECK_U64(out.n, ==, 0);
	CHECK_INT(S.have_ip, ==, 0);
	CHECK_INT(S.enabled, ==, 0);
	CHECK_INT(S.pending_ovf, ==, 1);
	CHECK_U64(S.ovf_offset, ==, 0x99);
	CHECK_INT(S.begin_reason, ==, STRACE_REASON_ERROR);
	j.notes.ovf_at_end = 1;
	CHECK_INT(strace_dec_seg_end_overflow(w, &j, &S), ==, 0);
	CHECK_U64(out.n, ==, 0);
	j.notes.ovf_at_end = 0;
	CHECK_INT(strace_dec_seg_end_overflow(w, &j, &S), ==, 0);
	REQUIRE(out.n == 1);
	CHECK_INT(out.v[0].type, ==, STRACE_EV_OVERFLOW);
	CHECK_U64(out.v[0].b, ==, 0x99);
	CHECK_U64(out.v[0].tid, ==, 7);
	CHECK_INT(S.pending_ovf, ==, 0);
	CHECK_INT(strace_dec_seg_end_overflow(w, &j, &S), ==, 0);
	CHECK_U64(out.n, ==, 1);
	strace_walker_free(w);
}

/* The sink's error stops the merge and is its answer. */
TEST(sink_error)
{
	struct evs out;
	struct strace_walker *w = walker(&out);
	struct seg_state S = {0};
	struct seg_job j;

	REQUIRE(w);
	out.fail_at = 2;
	job(&j);
	CHECK_INT(strace_dec_seg_merge(w, &j, 1, &S), ==, -EPIPE);
	CHECK_U64(out.n, ==, 1);
	strace_dec_vec_free(&j.ev);
	strace_walker_free(w);
}

/* Settle: SEG_F_ADV off outside the first begin's reach; a call whose
 * addresses this worker named before is STRACE_F_NAMED. */
TEST(settle)
{
	static uint64_t named[SEG_NAMED_SLOTS];
	struct seg_job j;

	memset(&j, 0, sizeof(j));
	put(&j, STRACE_EV_CALL, SEG_F_ADV, 0x10, 0x20, 1);
	put(&j, STRACE_EV_TRACE_BEGIN, 0, 0x1000, 0, 2);
	put(&j, STRACE_EV_JUMP, SEG_F_ADV, 0x50, 0x60, 3);
	put(&j, STRACE_EV_CALL, 0, 0x10, 0x20, 4);
	put(&j, STRACE_EV_CALL, SEG_F_ADV, 0x10, 0x20, 5);
	j.notes.first_idx = 1;
	j.notes.first_n = 1;
	strace_dec_seg_settle(&j, named, NULL);
	/* before the begin: off; the begin's advance events and the first
	 * event resolved by a packet after them: kept; after: off */
	CHECK_INT(j.ev.v[0].flags & SEG_F_ADV, ==, 0);
	CHECK_INT(j.ev.v[2].flags & SEG_F_ADV, ==, SEG_F_ADV);
	CHECK_INT(j.ev.v[4].flags & SEG_F_ADV, ==, 0);
	CHECK_INT(j.ev.v[0].flags & STRACE_F_NAMED, ==, 0);
	CHECK_INT(j.ev.v[2].flags & STRACE_F_NAMED, ==, 0);
	CHECK_INT(j.ev.v[3].flags & STRACE_F_NAMED, ==, STRACE_F_NAMED);
	CHECK_INT(j.ev.v[4].flags & STRACE_F_NAMED, ==, STRACE_F_NAMED);
	CHECK_INT(j.ev.v[1].flags & STRACE_F_NAMED, ==, 0);
	strace_dec_vec_free(&j.ev);
	/* no table: nothing named */
	memset(&j, 0, sizeof(j));
	put(&j, STRACE_EV_CALL, SEG_F_ADV, 0x10, 0x20, 1);
	j.notes.first_idx = -1;
	strace_dec_seg_settle(&j, NULL, NULL);
	CHECK_INT(j.ev.v[0].flags, ==, 0);
	strace_dec_vec_free(&j.ev);
}

/* A segment with no PSB in it is refused (-STRACE_E_NOSYNC), with no
 * event. */
TEST(no_psb_refused)
{
	struct strace_walk_opts o;
	struct strace_walker *w = NULL;
	static uint8_t buf[4096];
	struct seg_job j;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.emit = strace_dec_vec_push;
	REQUIRE(none || strace_image_new(NULL, &none) == 0);
	REQUIRE(strace_walker_new(none, &o, &w) == 0);
	memset(&j, 0, sizeof(j));
	j.start = 0;
	j.end = sizeof(buf);
	j.last = 1;
	strace_dec_seg_decode(w, buf, sizeof(buf), &j);
	CHECK_INT(j.ret, ==, -STRACE_E_NOSYNC);
	CHECK_U64(j.ev.n, ==, 0);
	CHECK_INT(j.notes.first_idx, ==, -1);
	strace_dec_vec_free(&j.ev);
	strace_walker_free(w);
	strace_image_free(none);
	none = NULL;
}

RUN_TESTS("test_decoder_segment")
