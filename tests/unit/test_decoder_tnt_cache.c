/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_tnt_cache.c - the cache of recorded TNT runs
 * (decoder/tnt_cache.h, tnt_cache.c) alone, without a walker: a record
 * made by hand (its events' classes, its stack operations, its segments)
 * is kept and found with its items laid out as tnt_cache.h says; two
 * records meeting in a slot both stay; the table grows and keeps them;
 * what is not kept (a record with too many items) and what drops all
 * (a flush, the items full).
 */
#include <string.h>

#include "harness.h"
#include "decoder/internal.h"
#include "decoder/tnt_cache.h"

/* A record of one segment: a call walked on the way to the first bit
 * (TC_PRE), a jump resolved by a bit (TC_RES), a call on the way to the
 * next bit (TC_ADV), a push, a pop of it, and a return popping an
 * address pushed before the run (TC_DYN). */
static void record_one(struct tc_rec *r)
{
	tc_rec_start(r, 1000);
	strace_dec_tc_rec_event(r, 1, STRACE_EV_CALL, 0, 0x10, 0x20, 1003);
	r->bits_done = 1;
	strace_dec_tc_rec_event(r, 0, STRACE_EV_JUMP, 0, 0x30, 0x40, 1010);
	strace_dec_tc_rec_event(r, 1, STRACE_EV_CALL, 7, 0x50, 0x60, 1020);
	tc_rec_push(r, 0x1234);
	tc_rec_pop(r);
	tc_rec_pop(r); /* nothing of the run's: outer */
	strace_dec_tc_rec_event(r, 0, STRACE_EV_RETURN, 0, 0x70, 0, 1030);
}

TEST(record_kept_and_found)
{
	struct tcache *t = strace_dec_tc_new();
	struct tc_slot *e;
	const struct tc_item *it;

	REQUIRE(t);
	CHECK_U64(t->shift, ==, 64 - TC_LOG_START);
	record_one(&t->rec);
	CHECK_INT(t->rec.nev, ==, 4);
	CHECK_INT(t->rec.nops, ==, 2);
	CHECK_INT(t->rec.npre, ==, 1);
	CHECK_INT(t->rec.outer, ==, 1);
	CHECK_INT(t->rec.depth, ==, 0);
	CHECK(tc_find(t, 0x401000, 5) == NULL);
	strace_dec_tc_keep(t, 0x401000, 5, 3, 0x401100, 9, 30);
	e = tc_find(t, 0x401000, 5);
	REQUIRE(e);
	CHECK(tc_find(t, 0x401000, 6) == NULL);
	CHECK(tc_find(t, 0x401001, 5) == NULL);
	CHECK_U64(e->end_ip, ==, 0x401100);
	CHECK_INT(e->nbits, ==, 3);
	CHECK_INT(e->branches, ==, 9);
	CHECK_INT(e->insns, ==, 30);
	CHECK_INT(e->nev, ==, 4);
	CHECK_INT(e->nops, ==, 2);
	CHECK_INT(e->npre, ==, 1);
	CHECK_INT(e->outer, ==, 1);
	CHECK_INT(e->flags, ==, 0);
	CHECK_U64(t->used, ==, 6);
	it = &t->item[e->first];
	CHECK_INT(it[0].cls, ==, TC_PRE);
	CHECK_INT(it[0].insn_off, ==, 3);
	CHECK_INT(it[1].cls, ==, TC_RES);
	CHECK_INT(it[1].type, ==, STRACE_EV_JUMP);
	CHECK_INT(it[2].cls, ==, TC_ADV);
	CHECK_INT(it[2].flags, ==, 7);
	CHECK_U64(it[2].b, ==, 0x60);
	CHECK_INT(it[3].cls, ==, TC_DYN);
	CHECK_INT(it[3].insn_off, ==, 30);
	/* the stack operations: the push's address, a pop's 0 */
	CHECK_U64(it[4].a, ==, 0x1234);
	CHECK_U64(it[5].a, ==, 0);
	/* kept again: the same slot, its items after the first's */
	record_one(&t->rec);
	strace_dec_tc_keep(t, 0x401000, 5, 3, 0x401200, 9, 30);
	CHECK(tc_find(t, 0x401000, 5) == e);
	CHECK_U64(e->end_ip, ==, 0x401200);
	CHECK_U64(e->first, ==, 6);
	strace_dec_tc_flush(t);
	CHECK(tc_find(t, 0x401000, 5) == NULL);
	CHECK_U64(t->used, ==, 0);
	strace_dec_tc_free(t);
	strace_dec_tc_free(NULL);
	strace_dec_tc_flush(NULL);
}

/* Two segments: the first ends where a return popped an address pushed
 * before the run, with two TC_SEG items after its own; a trace-stopping
 * event marks the record. */
TEST(segments)
{
	struct tcache *t = strace_dec_tc_new();
	struct tc_rec *r;
	struct tc_slot *e;
	const struct tc_item *it;

	REQUIRE(t);
	r = &t->rec;
	tc_rec_start(r, 0);
	r->bits_done = 1;
	strace_dec_tc_rec_event(r, 0, STRACE_EV_CALL, 0, 1, 2, 1);
	tc_rec_push(r, 0xaa);
	tc_rec_pop(r);
	tc_rec_pop(r);
	REQUIRE(tc_rec_segment(r, 0x5000, 0x4ff0, 2, 4, 12) == 0);
	CHECK_INT(r->outer, ==, 0);
	strace_dec_tc_rec_event(r, 0, STRACE_EV_SYSCALL, 0, 3, 4, 15);
	tc_rec_push(r, 0xbb);
	strace_dec_tc_keep(t, 0x6000, 9, 4, 0x7000, 6, 20);
	e = tc_find(t, 0x6000, 9);
	REQUIRE(e);
	CHECK_INT(e->flags, ==, TCS_MORE | TCS_STOPS);
	CHECK_INT(e->nev, ==, 1); /* the first segment's */
	CHECK_INT(e->nops, ==, 2);
	/* 1 event, 2 operations, 2 TC_SEG, 1 event, 1 operation */
	CHECK_U64(t->used, ==, 7);
	it = &t->item[e->first];
	CHECK_INT(it[0].type, ==, STRACE_EV_CALL);
	CHECK_U64(it[1].a, ==, 0xaa);
	CHECK_U64(it[2].a, ==, 0);
	CHECK_INT(it[3].cls, ==, TC_SEG);
	CHECK_U64(it[3].a, ==, 0x5000);
	CHECK_U64(it[3].b, ==, 0x4ff0);
	CHECK_INT(it[3].insn_off, ==, 2); /* bits through it */
	CHECK_INT(it[3].type, ==, 1);     /* the next: 1 event */
	CHECK_INT(it[3].flags, ==, 1);    /* ... and 1 operation */
	CHECK_INT(it[4].cls, ==, TC_SEG);
	CHECK_U64(it[4].a, ==, 4);
	CHECK_U64(it[4].b, ==, 12);
	CHECK_INT(it[4].type, ==, 0); /* the next is the last */
	CHECK_INT(it[5].type, ==, STRACE_EV_SYSCALL);
	CHECK_U64(it[6].a, ==, 0xbb);
	/* no more than TC_BITS segments */
	tc_rec_start(r, 0);
	for (int i = 0; i < TC_BITS; i++)
		CHECK_INT(tc_rec_segment(r, 1, 1, 1, 1, 1), ==, 0);
	CHECK_INT(tc_rec_segment(r, 1, 1, 1, 1, 1), ==, -1);
	strace_dec_tc_free(t);
}

/* Too many events or operations, or an event too far from the start:
 * the record is full (the walker does not keep it), and a segment can
 * no more end. */
TEST(full_records)
{
	static struct tc_rec r;

	tc_rec_start(&r, 0);
	for (int i = 0; i < TC_MAX_ITEMS; i++)
		strace_dec_tc_rec_event(&r, 0, STRACE_EV_CALL, 0, 0, 0, i);
	CHECK_INT(r.full, ==, 0);
	strace_dec_tc_rec_event(&r, 0, STRACE_EV_CALL, 0, 0, 0, 99);
	CHECK_INT(r.full, ==, 1);
	CHECK_INT(r.nev, ==, TC_MAX_ITEMS);
	CHECK_INT(tc_rec_segment(&r, 1, 1, 1, 1, 1), ==, -1);
	tc_rec_start(&r, 0);
	for (int i = 0; i <= TC_MAX_ITEMS; i++)
		tc_rec_push(&r, 8);
	CHECK_INT(r.full, ==, 1);
	CHECK_INT(r.nops, ==, TC_MAX_ITEMS);
	tc_rec_start(&r, 100);
	strace_dec_tc_rec_event(&r, 0, STRACE_EV_CALL, 0, 0, 0,
				100 + UINT16_MAX);
	CHECK_INT(r.full, ==, 0);
	strace_dec_tc_rec_event(&r, 0, STRACE_EV_CALL, 0, 0, 0,
				101 + UINT16_MAX);
	CHECK_INT(r.full, ==, 1);
}

/* Records that meet in a slot: the second moves the first to the pair,
 * both are found. Many records: the table doubles (up to 1 << TC_LOG)
 * and every record still in it is found where tc_find() looks. */
TEST(collisions_and_growth)
{
	struct tcache *t = strace_dec_tc_new();
	uint64_t a = 0x1000, b;
	unsigned found = 0;

	REQUIRE(t);
	/* an ip of another key whose slot is a's */
	for (b = a + 1; tc_slot_of(t, b, 1) != tc_slot_of(t, a, 1); b++)
		;
	tc_rec_start(&t->rec, 0);
	strace_dec_tc_keep(t, a, 1, 1, 0xa, 0, 0);
	strace_dec_tc_keep(t, b, 1, 1, 0xb, 0, 0);
	REQUIRE(tc_find(t, a, 1) && tc_find(t, b, 1));
	CHECK_U64(tc_find(t, a, 1)->end_ip, ==, 0xa);
	CHECK_U64(tc_find(t, b, 1)->end_ip, ==, 0xb);
	CHECK(tc_find(t, b, 1) == tc_slot_of(t, b, 1));

	strace_dec_tc_flush(t);
	for (uint64_t ip = 1; ip <= 20000; ip++)
		strace_dec_tc_keep(t, ip << 4, 3, 1, ip, 0, 0);
	CHECK_U64(t->shift, ==, 64 - TC_LOG);
	for (uint64_t ip = 1; ip <= 20000; ip++) {
		struct tc_slot *e = tc_find(t, ip << 4, 3);
		if (e) {
			found++;
			CHECK_U64(e->end_ip, ==, ip);
		}
	}
	/* the most recent of each slot pair at least: more than half the
	 * table's slots hold a record found */
	CHECK(found > (1u << TC_LOG) / 2);
	CHECK(found <= 1u << TC_LOG);
	strace_dec_tc_free(t);
}

/* The items full: every record dropped before the next is kept. */
TEST(items_full_flush)
{
	struct tcache *t = strace_dec_tc_new();
	struct tc_rec *r;

	REQUIRE(t);
	r = &t->rec;
	tc_rec_start(r, 0);
	for (int i = 0; i < 40; i++)
		strace_dec_tc_rec_event(r, 0, STRACE_EV_CALL, 0, 0, 0, i);
	strace_dec_tc_keep(t, 0x10, 1, 1, 0, 0, 0);
	REQUIRE(tc_find(t, 0x10, 1));
	t->used = TC_ITEMS - 39; /* as if the items were nearly full */
	strace_dec_tc_keep(t, 0x20, 1, 1, 0, 0, 0);
	CHECK(tc_find(t, 0x10, 1) == NULL);
	REQUIRE(tc_find(t, 0x20, 1));
	CHECK_U64(tc_find(t, 0x20, 1)->first, ==, 0);
	CHECK_U64(t->used, ==, 40);
	strace_dec_tc_free(t);
}

RUN_TESTS("test_decoder_tnt_cache")
