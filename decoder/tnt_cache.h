/* SPDX-License-Identifier: MIT */
/*
 * decoder/tnt_cache.h - the cache of recorded TNT runs (docs/decoder.md,
 * "The cache of recorded TNT runs"). Not installed.
 *
 * libxdc's idea, kept exact. What the walk does from one address for one
 * run of TNT bits is always the same: the same blocks, events and
 * return-stack pushes and pops, except where a return pops an address
 * pushed before the run. So the first walk of (address, up to TC_BITS
 * bits) is recorded as it runs (strace_dec_tc_rec_event() and
 * tc_rec_push()/_pop(), called from the walker's emit and return stack),
 * kept (strace_dec_tc_keep()), and later walks replay the record (the
 * walker's tnt_run(), decoder/flow.h). A return that pops an address
 * pushed before the run ends a segment of the record: the replay pops
 * the stack there as the walk did, and goes on with the next segment if
 * it popped the address the walk popped; otherwise the bits after it
 * look up the record of the address popped.
 *
 * This file is the cache: its table, its items, the record being made;
 * the walker decides what to record and replays. The lookup and the
 * stack hooks are static inline (per walk of queued TNT bits, per call
 * and return).
 *
 * Threading: a cache belongs to its walker's thread.
 */
#ifndef DECODER_TNT_CACHE_H
#define DECODER_TNT_CACHE_H

#include <stdint.h>

#define TC_BITS 24           /* TNT bits one record covers at most (the key
			      * holds them, their count and parked: at most
			      * 26; docs/decoder.md says why 24) */
#define TC_LOG 13            /* 8192 records in a two-way table, */
#define TC_LOG_START 10      /* ... which starts with 1024 and doubles
			      * when records keep moving others away */
#define TC_ITEMS (1u << 17)  /* events and stack operations of the records
			      * (3 MiB), all dropped when full */
#define TC_MAX_ITEMS 64      /* of one record: more are not kept */

enum tc_class {
	TC_RES = 0, /* resolved by a bit: this packet's time */
	TC_PRE,     /* walked on the way to the first bit: the time of the
		     * branch resolved before the run */
	TC_ADV,     /* walked on the way to a later bit: this packet's time */
	TC_DYN,     /* the return popping an address pushed before the run:
		     * its target is what the stack holds */
	TC_SEG,     /* the end of a segment: two items after its events and
		     * stack operations (struct tc_slot) */
};

_Static_assert(TC_BITS <= 26, "a record's key: its bits, their count (5 "
			       "bits) and parked (bit 31)");

struct tc_item {
	uint64_t a, b; /* an event's operands; a stack operation: a is the
			* address pushed, 0 for a pop */
	uint16_t type, flags;
	uint16_t insn_off; /* an event's instruction count, from the run's
			    * start (a run of more is not kept) */
	uint8_t cls; /* enum tc_class */
};
_Static_assert(sizeof(struct tc_item) == 24, "TNT run items are 24 bytes");

/*
 * One record: where the run starts and its key, where it ends, its items
 * from item[first], and the counts it adds to the walker's stats. The
 * items are its segments', one after the other: a segment's events (the
 * first's npre TC_PRE events first), then its stack operations, then, but
 * after the last segment, two TC_SEG items:
 *   [0] a: the address its last return popped, b: where that return's
 *       block starts, insn_off: the bits used through it, type and
 *       flags: the next segment's events and stack operations;
 *   [1] a and b: the branches and instructions through it, type: 1 when
 *       the next segment is not the last.
 * nev and nops are the first segment's; the rest of the fields, the
 * whole record's.
 */
struct tc_slot {
	uint64_t ip;     /* where the run starts; 0: empty */
	uint64_t end_ip; /* where it ends; with outer, the return popping */
	uint32_t first;  /* items: nev events, then nops stack operations */
	uint32_t branches, insns;
	uint32_t key;    /* bits | count << TC_BITS | code mode << 29 |
			  * parked << 31 */
	uint16_t res_off; /* instructions to the first bit's branch */
	uint8_t nbits, outer, nev, npre, nops;
	uint8_t flags;    /* TCS_* */
};
#define TCS_STOPS 1 /* an event after which the trace stops (spread_stops():
		     * not in the records the walk makes, but not assumed) */
#define TCS_MORE 2  /* segments follow the first */
_Static_assert(sizeof(struct tc_slot) == 40, "TNT run slots are 40 bytes");

/* The record being made, before it is kept. */
/* Where a segment of the record being made ends. */
struct tc_rec_seg {
	unsigned nev, nops;     /* events and operations up to it, in all */
	uint64_t to, ret_ip;    /* TC_SEG [0]'s a and b */
	uint32_t bits, branches, insns; /* the counts through it */
};

struct tc_rec {
	int bits_done; /* a bit of the run resolved */
	int outer;     /* a return popped an address pushed before the run
			* (or the last segment) */
	unsigned nseg; /* segments ended (all but the last) */
	struct tc_rec_seg seg[TC_BITS + 1]; /* and the last's end, when kept */
	int depth;     /* pushes of the run not popped */
	int full;      /* too many items: the record is not kept */
	unsigned nev, nops, npre;
	uint64_t insns0; /* the walker's instruction count at the start */
	uint32_t res_off; /* ... at the first bit's branch, from insns0 */
	struct tc_item ev[TC_MAX_ITEMS];
	uint64_t ops[TC_MAX_ITEMS];
};

struct tcache {
	struct tc_slot *slot; /* 1 << (64 - shift) of them */
	unsigned shift;
	uint32_t kept;        /* records kept since the table last grew that
			       * moved another away */
	struct tc_item *item; /* TC_ITEMS of them */
	uint32_t used;
	struct tc_rec rec;
};

/* strace_dec_tc_new() - an empty cache. Returns it, or NULL (no memory). */
struct tcache *strace_dec_tc_new(void);

/* strace_dec_tc_free() - NULL is fine. */
void strace_dec_tc_free(struct tcache *t);

/* strace_dec_tc_flush() - drop every record (the image changed); NULL is
 * fine. */
void strace_dec_tc_flush(struct tcache *t);

/*
 * strace_dec_tc_keep() - keep the record t->rec, made from ip with key,
 * as slot: nbits bits, ending at end_ip, adding branches and insns to the
 * stats. When the items are full, every record is dropped first.
 */
void strace_dec_tc_keep(struct tcache *t, uint64_t ip, unsigned key,
			int nbits, uint64_t end_ip, uint64_t branches,
			uint64_t insns);

static inline uint64_t tc_hash(uint64_t ip, unsigned key)
{
	return ip * 0x9e3779b97f4a7c15ull + key * 0xc2b2ae3d27d4eb4full;
}

/* tc_slot_of() - the first of the two slots for (ip, key) (the other is
 * its pair: index ^ 1). */
static inline struct tc_slot *tc_slot_of(struct tcache *t, uint64_t ip,
					 unsigned key)
{
	return &t->slot[tc_hash(ip, key) >> t->shift];
}

/* tc_find() - the record of (ip, key), or NULL. Two ways: a record kept
 * where another stood moves that one to the pair (strace_dec_tc_keep()),
 * so that two runs of one loop that meet in a slot both stay. */
static inline struct tc_slot *tc_find(struct tcache *t, uint64_t ip,
				      unsigned key)
{
	size_t i = tc_hash(ip, key) >> t->shift;
	struct tc_slot *e = &t->slot[i];

	if (__builtin_expect(e->ip == ip && e->key == key, 1))
		return e;
	e = &t->slot[i ^ 1];
	return e->ip == ip && e->key == key ? e : NULL;
}

/* tc_rec_start() - start recording a run into r, the walker's
 * instruction count being insns. */
static inline void tc_rec_start(struct tc_rec *r, uint64_t insns)
{
	r->bits_done = r->outer = r->depth = r->full = 0;
	r->nseg = 0;
	r->nev = r->nops = r->npre = 0;
	r->insns0 = insns;
}

/* strace_dec_tc_rec_event() - the walk emitted an event into the record
 * r; in_adv: on the way to the next bit (a direct branch); insns: the
 * walker's instruction count at it. Out of line: only a walk being
 * recorded (a cache miss) calls it. */
void strace_dec_tc_rec_event(struct tc_rec *r, int in_adv, unsigned type,
			     unsigned flags, uint64_t a, uint64_t b,
			     uint64_t insns);

static inline void tc_rec_op(struct tc_rec *r, uint64_t a)
{
	if (r->nops == TC_MAX_ITEMS)
		r->full = 1;
	else
		r->ops[r->nops++] = a;
}

/* tc_rec_segment() - the walk's return to `to`, from the block at
 * ret_ip, popped an address pushed before the run, after bits bits,
 * branches branches and insns instructions from the start: a segment
 * ends there, and the record goes on. Returns 0, or -1 when the record
 * holds no more segments (it ends here). */
static inline int tc_rec_segment(struct tc_rec *r, uint64_t to,
				 uint64_t ret_ip, unsigned bits,
				 uint64_t branches, uint64_t insns)
{
	struct tc_rec_seg *g;

	if (r->nseg == TC_BITS || r->full)
		return -1;
	g = &r->seg[r->nseg++];
	g->nev = r->nev;
	g->nops = r->nops;
	g->to = to;
	g->ret_ip = ret_ip;
	g->bits = bits;
	g->branches = (uint32_t)branches;
	g->insns = (uint32_t)insns;
	r->outer = 0;
	return 0;
}

/* tc_rec_push() - the walk pushed ret on the return stack. */
static inline void tc_rec_push(struct tc_rec *r, uint64_t ret)
{
	r->depth++;
	tc_rec_op(r, ret);
}

/* tc_rec_pop() - the walk popped the return stack. */
static inline void tc_rec_pop(struct tc_rec *r)
{
	if (r->depth) {
		r->depth--;
		tc_rec_op(r, 0);
	} else {
		r->outer = 1; /* replayed by the TC_DYN event */
	}
}

#endif
