/* SPDX-License-Identifier: MIT */
/*
 * decoder/walk.c - the fast flow walker.
 *
 * Packets are parsed inline from the byte buffer: PAD, short and long TNT,
 * TIP/TIP.PGE/TIP.PGD/FUP with IP compression, TSC, MTC, CYC, MODE, CBR,
 * TMA, PSB, PSBEND, OVF. libipt's packet decoder finds PSBs (initial sync
 * and resync after an error) and decodes every other packet.
 *
 * The walker is lazy: it stands at an address and moves only when a
 * packet tells it how: a TNT bit or a TIP is consumed by first advancing
 * through blocks that need no packet (straight code, direct calls and
 * jumps) to the next block that does, then resolving it. A FUP advances to
 * exactly its address. So no event is emitted ahead of an asynchronous
 * event that cuts the flow short.
 *
 * Return compression mirrors the hardware (and libipt): every call pushes
 * its return address on a 64-entry stack; a return resolved by a taken
 * TNT bit pops it; a return resolved by a TIP leaves the stack alone; a
 * PSB empties it (the hardware compresses only returns to calls made since
 * the last PSB).
 */
#include <errno.h>
#include <intel-pt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/emit.h"
#include "decoder/walk.h"

#define L0_SIZE 1024 /* blocks kept in the walker itself (40 KiB) */
#define MAX_BLOCKS_PER_ADVANCE 1000000

enum park {
	PARK_NONE = 0, /* not advanced yet */
	PARK_AT,       /* standing at a block that needs a packet */
};

struct seg_state;
struct evvec;
struct tcache;
struct tc_rec;

struct strace_walker {
	/* streaming (strace_walker_decode_stream): the segment walker, its
	 * events, and what the sequential decode knows between pieces */
	struct strace_walker *stream;
	struct evvec *stream_ev;
	struct seg_state *stream_S;
	int stream_first;
	struct strace_image *img;
	struct strace_bcache *cache;
	int own_cache;
	struct strace_walk_opts o;

	/* stream position */
	const uint8_t *buf;
	size_t len;
	size_t all; /* bytes in buf (len: where this decode stops) */
	size_t pos; /* offset of the packet being handled */
	struct pt_packet_decoder *pkt;

	/* flow state */
	uint64_t ip;
	int have_ip;
	int enabled;
	int in_psb;
	int psb_fup; /* a FUP was seen in this PSB+ */
	uint64_t last_ip;
	int have_last_ip;
	struct strace_block park; /* the block we stand at (kind needs a
				   * packet), valid when parked */
	int parked;
	struct retstack rs;
	int pending_fup;
	uint64_t fup_ip;
	int fup_binds;     /* the next FUP only says where the walk is: it
			    * binds to a MODE.TSX, PTW or EXSTOP (not an
			    * asynchronous branch) */
	int tsx_abort;     /* ... and that MODE.TSX was an abort */
	int in_tsx;        /* in a transaction (MODE.TSX InTX) */
	int pending_abort; /* the pending FUP is a TSX abort's */
	unsigned errata;   /* STRACE_ERRATUM_* of the trace's processor */
	/* a deferred TIP: TNT bits for the branches after the indirect one
	 * that waits for its TIP (SDM: TNT may precede a deferred TIP) */
	uint64_t dtnt_bits;
	int dtnt_n;
	int deferring; /* tnt_bit() stopped at an indirect branch */
	uint64_t last_direct; /* the last direct branch of an advance, 0:
			       * none (SKL014) */
	int pending_syscall; /* last disable was at a syscall */
	int pending_async;
	int pending_ovf;
	int ovf_at_end; /* this decode told a pending overflow at its end */
	uint64_t ovf_offset;
	int begin_reason; /* reason for the next trace_begin */

	/* time */
	uint64_t tsc;     /* current estimate */
	uint64_t tsc_ref; /* at the last TSC/MTC */
	uint64_t cyc;     /* cycles since tsc_ref */
	uint32_t cbr;
	uint32_t last_ctc; /* CTC bits covered by MTC payloads */
	int have_ctc;
	int have_tsc;
	uint64_t last_time;
	uint64_t conv_tsc, conv_time; /* last conversion */
	uint64_t adv_time; /* time of the last resolved branch */
	int in_adv;
	uint16_t adv_mark; /* F_ADV in a segment's walker, else 0 */
	int conv_valid;
	int time_exact;

	long events;
	int sink_err;
	struct strace_walk_stats st;

	/* the TNT run cache (allocated at the first TNT packet), and the
	 * run being recorded into it, if any */
	struct tcache *tc;
	struct tc_rec *rec;

	/* L0: a direct-mapped copy of the hottest block summaries, checked
	 * before the shared cache; loops hit a handful of blocks */
	uint64_t l0_gen;
	struct {
		uint64_t ip; /* 0: empty */
		struct strace_block b;
	} l0[L0_SIZE];

	/* segment bookkeeping (parallel decode) */
	long first_idx;     /* index of the first begin's events, or -1 */
	int first_n;        /* how many events that begin emitted */
	uint64_t first_ip;
	int first_from_psb0; /* it came from the segment's first PSB+ FUP */
	int err_before, ovf_before;
	uint64_t ovf_before_off;
	unsigned psbs;      /* PSBs seen in this decode call */
	size_t prog_at;     /* where o.progress was last told */
	size_t fup_at;      /* offset of the next segment's PSB+ FUP */
};

/* --- the TNT run cache: what is recorded --------------------------------
 *
 * libxdc's idea, kept exact. What the walk does from one address for one
 * run of TNT bits is always the same: the same blocks, events and
 * return-stack pushes and pops, except where a return pops an address
 * pushed before the run. So the first walk of (address, up to TC_BITS
 * bits) is recorded as it runs (rec_*() below, called from emit() and the
 * stack), and later walks replay the record (tnt_run()). A record stops
 * after a return that pops an address pushed before it: the replay pops
 * that address as the walk did, and the bits after it look up the record
 * of the address popped.
 */
#define TC_BITS 16            /* TNT bits one record covers at most */
#define TC_LOG 13            /* 8192 records in a direct-mapped table */
#define TC_ITEMS (1u << 17)  /* events and stack operations of the records
			      * (3 MiB), all dropped when full */
#define TC_ITEMS_START 4096  /* ... the array starts with, and doubles */
#define TC_MAX_ITEMS 64      /* of one record: more are not kept */

enum tc_class {
	TC_RES = 0, /* resolved by a bit: this packet's time */
	TC_PRE,     /* walked on the way to the first bit: the time of the
		     * branch resolved before the run */
	TC_ADV,     /* walked on the way to a later bit: this packet's time */
	TC_DYN,     /* the return popping an address pushed before the run:
		     * its target is what the stack holds */
};

struct tc_item {
	uint64_t a, b; /* an event's operands; a stack operation: a is the
			* address pushed, 0 for a pop */
	uint16_t type, flags;
	uint8_t cls; /* enum tc_class */
};

struct tc_slot {
	uint64_t ip;     /* where the run starts; 0: empty */
	uint64_t end_ip; /* where it ends; with outer, the return popping */
	uint32_t first;  /* items: nev events, then nops stack operations */
	uint32_t branches, insns;
	uint32_t key;    /* bits | count << TC_BITS | parked << 31 */
	uint8_t nbits, outer, nev, npre, nops;
};

struct tc_rec {
	int bits_done; /* a bit of the run resolved */
	int outer;     /* a return popped an address pushed before the run */
	int depth;     /* pushes of the run not popped */
	int full;      /* too many items: the record is not kept */
	unsigned nev, nops, npre;
	struct tc_item ev[TC_MAX_ITEMS];
	uint64_t ops[TC_MAX_ITEMS];
};

struct tcache {
	struct tc_slot slot[1u << TC_LOG];
	struct tc_item *item; /* cap of them, up to TC_ITEMS */
	uint32_t used, cap;
	struct tc_rec rec;
};

static void rec_event(struct tc_rec *r, int in_adv, unsigned type,
		      unsigned flags, uint64_t a, uint64_t b)
{
	struct tc_item *it;

	if (r->nev == TC_MAX_ITEMS) {
		r->full = 1;
		return;
	}
	it = &r->ev[r->nev++];
	it->a = a;
	it->b = b;
	it->type = (uint16_t)type;
	it->flags = (uint16_t)flags;
	if (in_adv)
		it->cls = r->bits_done ? TC_ADV : TC_PRE;
	else
		it->cls = r->outer ? TC_DYN : TC_RES;
	r->npre += it->cls == TC_PRE;
}

static void rec_op(struct tc_rec *r, uint64_t a)
{
	if (r->nops == TC_MAX_ITEMS)
		r->full = 1;
	else
		r->ops[r->nops++] = a;
}

static void rec_push(struct tc_rec *r, uint64_t ret)
{
	r->depth++;
	rec_op(r, ret);
}

static void rec_pop(struct tc_rec *r)
{
	if (r->depth) {
		r->depth--;
		rec_op(r, 0);
	} else {
		r->outer = 1; /* replayed by the TC_DYN event */
	}
}

/* --- events -------------------------------------------------------------- */

/* Internal, never in a ring: marks the events of an advance (direct calls
 * and jumps walked on the way to the next packet) in a segment's vector,
 * which leave TIME_EXACT to the next event resolved by a packet; merge()
 * needs to know them and strips the mark. */
#define F_ADV 0x8000u

static __attribute__((noinline)) uint64_t now_convert(struct strace_walker *w)
{
	w->conv_tsc = w->tsc;
	w->conv_time = strace_tsc_to_perf_time(&w->o.time, w->tsc);
	w->conv_valid = 1;
	return time_forward(&w->o.time, &w->last_time, w->conv_time);
}

static inline __attribute__((always_inline)) uint64_t
now(struct strace_walker *w)
{
	if (!w->have_tsc || !w->o.has_time)
		return 0;
	/* the estimate changes per timing packet, not per event */
	if (unlikely(w->tsc != w->conv_tsc || !w->conv_valid))
		return now_convert(w);
	return time_forward(&w->o.time, &w->last_time, w->conv_time);
}

/* Hand one event, its time and flags decided, to the sink. */
static inline __attribute__((always_inline)) void
put_event(struct strace_walker *w, unsigned type, unsigned flags,
	  uint64_t time, uint64_t a, uint64_t b)
{
	struct strace_event ev = {(uint16_t)type, (uint16_t)flags, w->o.tid,
				  time, a, b};
	int err;

	if (w->sink_err)
		return;
	err = sink_put(&w->o, &ev);
	if (err) {
		w->sink_err = err;
		return;
	}
	w->events++;
	w->st.events++;
}

static inline __attribute__((always_inline)) void
emit(struct strace_walker *w, unsigned type, unsigned flags,
		 uint64_t a, uint64_t b)
{
	if (unlikely(w->rec != NULL))
		rec_event(w->rec, w->in_adv, type, flags, a, b);
	if (w->in_adv) {
		/* a direct branch walked on the way to the next branch that
		 * needs a packet: it ran before the timing packets read since
		 * the last resolved branch, so it keeps that branch's time
		 * (as perf's eager walk gives it) */
		put_event(w, type, flags | w->adv_mark, w->adv_time, a, b);
	} else if (type == STRACE_EV_ERROR) {
		/* the error code, nothing else */
		put_event(w, type, flags, now(w), a, b);
	} else {
		unsigned ex = w->time_exact ? STRACE_F_TIME_EXACT : 0;
		w->time_exact = 0;
		put_event(w, type, flags | ex, now(w), a, b);
	}
}

static inline const struct strace_block *l0_get(struct strace_walker *w,
					       uint64_t ip)
{
	unsigned i = (unsigned)(ip ^ (ip >> 8)) & (L0_SIZE - 1);
	const struct strace_block *b;

	if (likely(w->l0[i].ip == ip))
		return &w->l0[i].b;
	b = strace_dec_bcache_get_fast(w->cache, w->img, ip);
	w->l0[i].ip = ip;
	w->l0[i].b = *b;
	return &w->l0[i].b;
}

/* A jump from one address to another, as jump_kept() says. */
static void emit_jump(struct strace_walker *w, uint64_t from, uint64_t to,
		      unsigned flags)
{
	if (jump_kept(strace_dec_same_symbol(w->img, from, to), w->o.flags,
		      &flags))
		emit(w, STRACE_EV_JUMP, flags, from, to);
}

static void error_event(struct strace_walker *w, int code)
{
	emit(w, STRACE_EV_ERROR, (unsigned)code, w->have_ip ? w->ip : 0,
	     w->pos);
	w->st.errors++;
}

/* --- flow ------------------------------------------------------------------ */

/* The return stack, recorded when a TNT run is. */
static void rs_push(struct strace_walker *w, uint64_t ret)
{
	if (unlikely(w->rec != NULL))
		rec_push(w->rec, ret);
	retstack_push(&w->rs, ret);
}

/* Returns 0, or -1 if the stack is empty. */
static int rs_pop(struct strace_walker *w, uint64_t *ret)
{
	if (!w->rs.n)
		return -1;
	if (unlikely(w->rec != NULL))
		rec_pop(w->rec);
	return retstack_pop(&w->rs, ret);
}

static void lose_sync(struct strace_walker *w)
{
	w->have_ip = 0;
	w->parked = 0;
	w->pending_fup = 0;
	w->fup_binds = w->tsx_abort = w->pending_abort = 0;
	w->dtnt_n = w->deferring = 0;
	retstack_clear(&w->rs);
}

static int needs_packet(unsigned kind)
{
	return kind != STRACE_BK_NONE && kind != STRACE_BK_CALL &&
	       kind != STRACE_BK_JMP && kind != STRACE_BK_MOV_CR3;
}

/* advance()'s pgd_to for a TIP.PGD without IP: stop at a MOV to CR3 too */
#define PGD_NOIP 1

/*
 * Advance from w->ip through blocks that need no packet, emitting their
 * direct calls and jumps. Stops at a block that needs a packet (parked),
 * or, when stop_at is non-zero, as soon as stop_at lies in the block at
 * hand (ip = stop_at), or, when pgd_to is non-zero, after a direct branch
 * to pgd_to (a TIP.PGD's target: returns 1, w->last_direct is the
 * branch). Returns 0, or -STRACE_E_* of the decoder (nothing is emitted for the failure
 * here; the caller reports it).
 */
static inline __attribute__((always_inline)) int
advance(struct strace_walker *w, uint64_t stop_at, uint64_t pgd_to)
{
	long n = 0;

	if (w->parked) {
		if (stop_at && stop_at >= w->park.start &&
		    stop_at < w->park.start + w->park.len) {
			w->ip = stop_at;
			w->parked = 0;
			return 0;
		}
		return stop_at ? -STRACE_E_DESYNC : 0;
	}
	for (;;) {
		const struct strace_block *b = l0_get(w, w->ip);
		uint64_t term;
		unsigned fl;

		if (stop_at && stop_at >= b->start &&
		    stop_at < b->start + b->len) {
			w->ip = stop_at;
			return 0;
		}
		if (unlikely(b->kind == STRACE_BK_NOCODE))
			return -STRACE_E_NOMAP;
		if (unlikely(b->kind == STRACE_BK_BAD))
			return -STRACE_E_BADINSN;
		w->st.insns += b->ninsn;
		if (needs_packet(b->kind)) {
			w->park = *b;
			w->parked = 1;
			return stop_at ? -STRACE_E_DESYNC : 0;
		}
		term = b->start + b->len - b->term_len;
		switch (b->kind) {
		case STRACE_BK_CALL:
			if (likely(call_pushes(b->target, b->start + b->len)))
				rs_push(w, b->start + b->len);
			w->in_adv = 1;
			emit(w, STRACE_EV_CALL, 0, term, b->target);
			w->in_adv = 0;
			w->last_direct = term;
			w->ip = b->target;
			w->st.branches++;
			if (pgd_to > PGD_NOIP && b->target == pgd_to)
				return 1;
			break;
		case STRACE_BK_JMP:
			w->in_adv = 1;
			fl = 0;
			if (jump_kept(b->flags & STRACE_BF_SAME_SYM, w->o.flags,
				      &fl))
				emit(w, STRACE_EV_JUMP, fl, term, b->target);
			w->in_adv = 0;
			w->last_direct = term;
			w->ip = b->target;
			w->st.branches++;
			if (pgd_to > PGD_NOIP && b->target == pgd_to)
				return 1;
			break;
		case STRACE_BK_MOV_CR3:
			if (pgd_to == PGD_NOIP) {
				w->park = *b;
				w->parked = 1;
				return 0;
			}
			w->ip = b->start + b->len;
			break;
		default: /* NONE: a cut block, go on */
			w->ip = b->start + b->len;
			break;
		}
		if (unlikely(++n > MAX_BLOCKS_PER_ADVANCE))
			return -STRACE_E_LOOP;
	}
}

/* Report an error and drop sync: the caller resumes at the next PSB. */
static int fail(struct strace_walker *w, int code)
{
	if (w->first_idx < 0)
		w->err_before = 1;
	error_event(w, code);
	lose_sync(w);
	/* The damage may have carried a bogus TSC: after the resync, time
	 * follows the PSB+ again, even if that is earlier. */
	w->last_time = 0;
	w->begin_reason = STRACE_REASON_ERROR;
	return -code;
}

/* One TNT bit. */
static int tnt_bit(struct strace_walker *w, int taken)
{
	const struct strace_block *b;
	uint64_t term, to;
	int err;

	if (!w->have_ip || !w->enabled)
		return 0; /* not synchronised yet: nothing to follow */
	err = advance(w, 0, 0);
	if (err)
		return fail(w, -err);
	b = &w->park;
	term = b->start + b->len - b->term_len;
	if (b->kind == STRACE_BK_JCC) {
		w->parked = 0;
		if (taken) {
			unsigned fl = STRACE_F_CONDITIONAL;

			if (jump_kept(b->flags & STRACE_BF_SAME_SYM, w->o.flags,
				      &fl))
				emit(w, STRACE_EV_JUMP, fl, term, b->target);
			w->ip = b->target;
			w->st.branches++;
		} else {
			w->ip = b->start + b->len; /* not taken: no event */
		}
		w->adv_time = now(w);
		return 0;
	}
	if (b->kind == STRACE_BK_RET) {
		if (!taken || rs_pop(w, &to))
			return fail(w, STRACE_E_DESYNC);
		w->parked = 0;
		emit(w, STRACE_EV_RETURN, 0, term, to);
		w->ip = to;
		w->st.branches++;
		w->adv_time = now(w);
		return 0;
	}
	if (!w->dtnt_n && (b->kind == STRACE_BK_CALL_IND ||
			   b->kind == STRACE_BK_JMP_IND)) {
		/* a deferred TIP: these bits are for the branches after
		 * the indirect one; tnt_run() keeps them for tip() */
		w->deferring = 1;
		return 0;
	}
	return fail(w, STRACE_E_NOTIP);
}

/* --- the TNT run cache: lookup and replay ----------------------------- */

static inline struct tc_slot *tc_slot_of(struct tcache *t, uint64_t ip,
					 unsigned key)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull + key * 0xc2b2ae3d27d4eb4full;
	return &t->slot[h >> (64 - TC_LOG)];
}

static void tc_flush(struct tcache *t)
{
	if (!t)
		return;
	memset(t->slot, 0, sizeof(t->slot));
	t->used = 0;
}

/* Room for more items: twice the array, up to TC_ITEMS (which, full, the
 * caller flushes). A short trace needs a fraction of it. Returns 0 or -1. */
static int tc_grow(struct tcache *t)
{
	uint32_t n = t->cap * 2;
	struct tc_item *v;

	if (t->cap >= TC_ITEMS)
		return -1;
	v = realloc(t->item, n * sizeof(*v));
	if (!v)
		return -1;
	t->item = v;
	t->cap = n;
	return 0;
}

/* Walk c bits (chunk's low c, the first the highest) from where w
 * stands, recording it; keep the record when it is whole. Returns the
 * bits used (fewer than c after a return that popped an address pushed
 * before the run), or the error of the bit that failed. */
static int tc_record(struct strace_walker *w, unsigned chunk, int c,
		     unsigned key)
{
	struct tcache *t = w->tc;
	struct tc_rec *r = &t->rec;
	struct tc_slot *e;
	uint64_t ip0 = w->ip, br0 = w->st.branches, in0 = w->st.insns;
	int k = 0, err = 0;

	r->bits_done = r->outer = r->depth = r->full = 0;
	r->nev = r->nops = r->npre = 0;
	w->rec = r;
	while (k < c) {
		err = tnt_bit(w, (int)(chunk >> (c - 1 - k)) & 1);
		if (w->deferring) {
			w->rec = NULL;
			return k; /* not kept: it ends at a deferred TIP */
		}
		k++;
		if (err)
			break;
		r->bits_done = 1;
		if (r->outer)
			break;
	}
	w->rec = NULL;
	if (err)
		return err;
	if (r->full || !w->have_ip || w->sink_err)
		return k; /* not whole: events the sink refused are not in it */
	if (t->used + r->nev + r->nops > t->cap && tc_grow(t) < 0)
		tc_flush(t);
	e = tc_slot_of(t, ip0, key);
	e->ip = ip0;
	e->key = key;
	e->end_ip = r->outer ? w->park.start : w->ip;
	e->first = t->used;
	e->branches = (uint32_t)(w->st.branches - br0);
	e->insns = (uint32_t)(w->st.insns - in0);
	e->nbits = (uint8_t)k;
	e->outer = (uint8_t)r->outer;
	e->nev = (uint8_t)r->nev;
	e->npre = (uint8_t)r->npre;
	e->nops = (uint8_t)r->nops;
	memcpy(&t->item[t->used], r->ev, r->nev * sizeof(r->ev[0]));
	t->used += r->nev;
	for (unsigned i = 0; i < r->nops; i++)
		t->item[t->used++] = (struct tc_item){.a = r->ops[i]};
	return k;
}

/* Do what the record e says, as tc_record() walked it. Returns the bits
 * used, or an error (the return of e found the stack empty). */
static inline __attribute__((always_inline)) int
tc_replay(struct strace_walker *w, const struct tc_slot *e)
{
	const struct tc_item *it = &w->tc->item[e->first];
	unsigned k, n = e->nev;
	uint64_t to, t_pre;

	for (k = n; k < n + e->nops; k++) {
		if (it[k].a)
			rs_push(w, it[k].a);
		else
			rs_pop(w, &to);
	}
	/* as emit() times them: the walk on to the first bit keeps the time
	 * of the branch resolved before; the rest take this packet's */
	t_pre = w->adv_time;
	w->adv_time = now(w);
	for (k = 0; k < e->npre; k++)
		put_event(w, it[k].type, it[k].flags | w->adv_mark, t_pre,
			  it[k].a, it[k].b);
	for (; k < n; k++) {
		unsigned flags = it[k].flags;
		uint64_t b = it[k].b;

		if (it[k].cls == TC_ADV) {
			flags |= w->adv_mark;
		} else {
			if (it[k].cls == TC_DYN) {
				if (rs_pop(w, &to)) {
					/* a deep recursion before the run
					 * emptied the stack: the walk failed
					 * here */
					w->ip = e->end_ip;
					w->st.branches += e->branches - 1;
					w->st.insns += e->insns;
					return fail(w, STRACE_E_DESYNC);
				}
				b = to;
			}
			if (w->time_exact)
				flags |= STRACE_F_TIME_EXACT;
			w->time_exact = 0;
		}
		put_event(w, it[k].type, flags, w->adv_time, it[k].a, b);
	}
	w->ip = e->outer ? to : e->end_ip;
	w->parked = 0;
	w->st.branches += e->branches;
	w->st.insns += e->insns;
	return e->nbits;
}

/* Keep the n bits left (bits' low n) for after the deferred TIP. */
static int defer_tnt(struct strace_walker *w, uint64_t bits, int n)
{
	w->deferring = 0;
	w->dtnt_bits = n < 64 ? bits & ((1ull << n) - 1) : bits;
	w->dtnt_n = n;
	return 0;
}

/* n TNT bits (bits' low n, the first the highest), through the run cache. */
static int tnt_run(struct strace_walker *w, uint64_t bits, int n)
{
	if (unlikely(!w->tc)) {
		if (!(w->o.flags & STRACE_WALK_BIT_BY_BIT))
			w->tc = calloc(1, sizeof(*w->tc));
		if (w->tc) {
			w->tc->item = malloc(TC_ITEMS_START *
					     sizeof(*w->tc->item));
			w->tc->cap = TC_ITEMS_START;
			if (!w->tc->item) {
				free(w->tc);
				w->tc = NULL;
			}
		}
		if (!w->tc) {
			/* asked for, or no memory for the cache */
			int err = 0;
			while (n > 0 && !err) {
				err = tnt_bit(w, (int)(bits >> (n - 1)) & 1);
				if (w->deferring)
					return defer_tnt(w, bits, n);
				n--;
			}
			return err;
		}
	}
	while (n > 0) {
		int c = n < TC_BITS ? n : TC_BITS, used;
		unsigned chunk, key;
		struct tc_slot *e;

		if (!w->have_ip || !w->enabled)
			return 0; /* not synchronised yet: nothing to follow */
		chunk = (unsigned)(bits >> (n - c)) & ((1u << c) - 1);
		key = chunk | (unsigned)c << TC_BITS | (unsigned)w->parked << 31;
		e = tc_slot_of(w->tc, w->ip, key);
		if (likely(e->ip == w->ip && e->key == key)) {
			used = tc_replay(w, e);
		} else {
			used = tc_record(w, chunk, c, key);
		}
		if (used < 0)
			return used;
		n -= used;
		if (unlikely(w->deferring))
			return defer_tnt(w, bits, n);
	}
	return 0;
}

static void begin(struct strace_walker *w, uint64_t ip, int reason);

/* --- looking ahead (errata) --------------------------------------------- */

#define PKT(t) (1ull << (t))

static int psb_plus(const uint8_t *buf, size_t len, size_t off, uint64_t *ip,
		    size_t *at, int *has_fup);

/* The first packet at or after from whose type is not in skip (a mask of
 * PKT() bits), in *p. Returns 0, or -1 at the end of the buffer, at a
 * packet libipt cannot read, or after 64 packets: what the errata look
 * for comes within a few status and timing packets, and hostile input
 * (an OVF and a FUP again and again) must not make each lookahead scan
 * far. */
static int peek_packet(struct strace_walker *w, size_t from, uint64_t skip,
		       struct pt_packet *p)
{
	if (pt_pkt_sync_set(w->pkt, from) < 0)
		return -1;
	for (int k = 0; k < 64; k++) {
		if (pt_pkt_next(w->pkt, p, sizeof(*p)) <= 0)
			return -1;
		if (!((skip >> p->type) & 1))
			return 0;
	}
	return -1;
}

/* BDM70: a PSB+ before a TIP.PGE may hold a FUP (and MODE.Exec) although
 * tracing is off. True when the FUP ending at next is one: only status,
 * timing and PSBEND stand between it and a TIP.PGE. */
static int bdm70_fup(struct strace_walker *w, size_t next)
{
	struct pt_packet p;

	return peek_packet(w, next,
			   PKT(ppt_pad) | PKT(ppt_tsc) | PKT(ppt_cbr) |
				   PKT(ppt_psbend) | PKT(ppt_pip) |
				   PKT(ppt_mode) | PKT(ppt_vmcs) |
				   PKT(ppt_tma) | PKT(ppt_mtc) | PKT(ppt_cyc) |
				   PKT(ppt_mnt),
			   &p) == 0 &&
	       p.type == ppt_tip_pge;
}

/* APL12: an overflow that resolves while the code is filtered out may be
 * followed by a FUP all the same. True when tracing is off after the FUP
 * ending at next: the next packet that tells is a TIP.PGE or STOP, or a
 * PSB+ without FUP; a TNT, TIP or TIP.PGD says it is on. */
static int apl12_fup(struct strace_walker *w, size_t next)
{
	struct pt_packet p;
	uint64_t ip;
	size_t at;
	int has_fup;

	if (peek_packet(w, next,
			~(PKT(ppt_stop) | PKT(ppt_tip_pge) | PKT(ppt_tnt_8) |
			  PKT(ppt_tnt_64) | PKT(ppt_tip) | PKT(ppt_tip_pgd) |
			  PKT(ppt_psb) | PKT(ppt_psbend) | PKT(ppt_ovf) |
			  PKT(ppt_invalid) | PKT(ppt_unknown)),
			&p) < 0)
		return 0;
	if (p.type == ppt_stop || p.type == ppt_tip_pge)
		return 1;
	if (p.type == ppt_psb) {
		uint64_t off;

		if (pt_pkt_get_offset(w->pkt, &off) < 0 ||
		    !psb_plus(w->buf, w->all, (size_t)off - 16, &ip, &at,
			      &has_fup))
			return 0;
		return !has_fup;
	}
	return 0;
}

/* The IP of an IP packet p, given the last IP. */
static uint64_t packet_ip(const struct pt_packet_ip *p, uint64_t last)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffull) | (p->ip & 0xffff);
	case pt_ipc_update_32:
		return (last & ~0xffffffffull) | (p->ip & 0xffffffff);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffull) | (p->ip & 0xffffffffffffull);
	default:
		return p->ip;
	}
}

/* Straight code (no branch) leads from a to b, within 256 instructions. */
static int contiguous(struct strace_walker *w, uint64_t a, uint64_t b)
{
	unsigned n = 0;

	while (n < 256) {
		const struct strace_block *k = l0_get(w, a);

		if (b >= k->start && b < k->start + k->len)
			return 1;
		if ((k->kind != STRACE_BK_NONE &&
		     k->kind != STRACE_BK_MOV_CR3) ||
		    !k->len)
			return 0;
		n += k->ninsn;
		a = k->start + k->len;
	}
	return 0;
}

/* BDM64: the TIP (target to) of a branch that a TSX abort follows at once
 * may be wrong. When the abort's FUP cannot be reached from to, the branch
 * went where the abort happened (libipt does the same). next: the offset
 * after the TIP. */
static uint64_t bdm64_target(struct strace_walker *w, uint64_t to, size_t next)
{
	const uint64_t timing = PKT(ppt_pad) | PKT(ppt_tsc) | PKT(ppt_mtc) |
				PKT(ppt_cyc) | PKT(ppt_cbr) | PKT(ppt_tma) |
				PKT(ppt_mnt);
	struct pt_packet p;
	uint64_t off, at;

	if (peek_packet(w, next, timing, &p) < 0 || p.type != ppt_mode ||
	    p.payload.mode.leaf != pt_mol_tsx ||
	    !p.payload.mode.bits.tsx.abrt ||
	    pt_pkt_get_offset(w->pkt, &off) < 0 ||
	    peek_packet(w, (size_t)off, timing, &p) < 0 || p.type != ppt_fup ||
	    p.payload.ip.ipc == pt_ipc_suppressed)
		return to;
	at = packet_ip(&p.payload.ip, to);
	return contiguous(w, to, at) ? to : at;
}

/* SKD022: the instruction at ip is VMLAUNCH or VMRESUME. */
static int is_vmentry(struct strace_walker *w, uint64_t ip)
{
	uint8_t c[3];

	return strace_image_read(w->img, ip, c, 3) == 3 && c[0] == 0x0f &&
	       c[1] == 0x01 && (c[2] == 0xc2 || c[2] == 0xc3);
}

/* --- flow packets -------------------------------------------------------- */

/* Tracing stops after the branch at ip (TIP.PGD). */
static void disable(struct strace_walker *w, uint64_t ip)
{
	emit(w, STRACE_EV_TRACE_END, 0, ip, STRACE_REASON_DISABLE);
	w->enabled = 0;
	w->have_ip = 0;
	w->parked = 0;
}

/* The indirect branch parked at (b, instruction at term) goes to `to`:
 * its event. Returns 0, or -1 if b is not such a branch. */
static int indirect_branch(struct strace_walker *w,
			   const struct strace_block *b, uint64_t term,
			   uint64_t to)
{
	switch (b->kind) {
	case STRACE_BK_CALL_IND:
		rs_push(w, b->start + b->len);
		emit(w, STRACE_EV_CALL, STRACE_F_INDIRECT, term, to);
		break;
	case STRACE_BK_RET:
		emit(w, STRACE_EV_RETURN, STRACE_F_INDIRECT, term, to);
		break;
	case STRACE_BK_JMP_IND:
		emit_jump(w, term, to, STRACE_F_INDIRECT);
		break;
	case STRACE_BK_SYSCALL:
	case STRACE_BK_SYSENTER:
	case STRACE_BK_INT:
		emit(w, STRACE_EV_SYSCALL, 0, term, to);
		break;
	case STRACE_BK_IRET:
	case STRACE_BK_FAR:
		emit(w, STRACE_EV_JUMP, STRACE_F_INDIRECT, term, to);
		break;
	default:
		return -1;
	}
	w->st.branches++;
	return 0;
}

/* A TIP (not PGE/PGD): the target of the indirect branch we stand at, or
 * of the asynchronous branch a FUP announced. */
static int tip(struct strace_walker *w, uint64_t to, int suppressed,
	       size_t next)
{
	const struct strace_block *b;
	int err;

	if (w->pending_fup) {
		/* asynchronous branch: interrupt, signal, fault, TSX abort */
		unsigned fl = STRACE_F_ASYNC |
			      (w->pending_abort ? STRACE_F_TX_ABORT : 0);

		w->pending_fup = w->pending_abort = 0;
		if (suppressed)
			return fail(w, STRACE_E_NOIP);
		if (w->dtnt_n) /* the deferred TIP never came */
			return fail(w, STRACE_E_NOTIP);
		emit(w, STRACE_EV_INTERRUPT, fl, w->fup_ip, to);
		w->ip = to;
		w->parked = 0;
		w->st.branches++;
		w->adv_time = now(w);
		return 0;
	}
	if (!w->have_ip || !w->enabled) {
		/* SKD010: the FUP after an overflow may be missing; a TIP
		 * says tracing is on, and where it goes on */
		if (w->pending_ovf && !suppressed &&
		    (w->errata & STRACE_ERRATUM_SKD010))
			begin(w, to, STRACE_REASON_OVERFLOW);
		return 0;
	}
	if (suppressed)
		return fail(w, STRACE_E_NOIP);
	err = advance(w, 0, 0);
	if (err)
		return fail(w, -err);
	if (unlikely(w->in_tsx) && (w->errata & STRACE_ERRATUM_BDM64)) {
		to = bdm64_target(w, to, next); /* last_ip stays the TIP's */
	}
	b = &w->park;
	w->parked = 0;
	if (indirect_branch(w, b, b->start + b->len - b->term_len, to) < 0) {
		/* a conditional branch wanted a TNT bit */
		w->parked = 1;
		return fail(w, STRACE_E_NOTNT);
	}
	w->ip = to;
	w->adv_time = now(w);
	if (w->dtnt_n) {
		/* the TNT bits that came before this deferred TIP */
		int n = w->dtnt_n;

		w->dtnt_n = 0;
		return tnt_run(w, w->dtnt_bits, n);
	}
	return 0;
}

static void begin(struct strace_walker *w, uint64_t ip, int reason)
{
	int first = w->first_idx < 0;

	if (first) {
		w->first_idx = w->events;
		w->first_ip = ip;
		w->first_from_psb0 = w->in_psb && w->psbs == 1;
	}
	if (w->pending_ovf) {
		emit(w, STRACE_EV_OVERFLOW, 0, ip, w->ovf_offset);
		w->pending_ovf = 0;
		reason = STRACE_REASON_OVERFLOW;
	}
	if (w->pending_syscall) {
		emit(w, STRACE_EV_SYSRET, 0, 0, ip);
		w->pending_syscall = 0;
	} else {
		emit(w, STRACE_EV_TRACE_BEGIN, 0, ip, (uint64_t)reason);
	}
	if (first)
		w->first_n = (int)(w->events - w->first_idx);
	w->ip = ip;
	w->have_ip = 1;
	w->enabled = 1;
	w->parked = 0;
	w->begin_reason = STRACE_REASON_ENABLE;
	w->adv_time = now(w);
}

static int pge(struct strace_walker *w, uint64_t to, int suppressed)
{
	w->pending_fup = w->pending_abort = 0;
	/* Tracing cannot be enabled while it is on, and a start with no IP
	 * loses what follows up to the next PSB (libipt: -pte_bad_context,
	 * -pte_noip). Both come of damaged trace; not in sync after an
	 * error, there is nothing more to lose. */
	if (w->enabled && w->have_ip)
		return fail(w, STRACE_E_DESYNC);
	if (suppressed) {
		if (w->enabled)
			return 0;
		return fail(w, STRACE_E_NOIP);
	}
	begin(w, to, w->begin_reason);
	return 0;
}

/*
 * TIP.PGD: tracing stops, at the branch we stand at or at the next one
 * that can stop it. With an IP, a direct branch to that IP (the branch
 * left the filtered range) or the indirect branch we stand at, which goes
 * there: either keeps its event and target. Without, a system call, a far
 * branch, a MOV to CR3, or (SKL014) a direct branch.
 */
static int pgd(struct strace_walker *w, uint64_t to, int suppressed)
{
	const struct strace_block *b;
	uint64_t term;
	int err;

	if (w->pending_fup) {
		/* asynchronous disable: an interrupt or fault into the
		 * kernel while only user space is traced, or a TSX abort
		 * to a handler outside the filter */
		unsigned fl = STRACE_F_ASYNC |
			      (w->pending_abort ? STRACE_F_TX_ABORT : 0);

		w->pending_fup = w->pending_abort = 0;
		w->dtnt_n = 0;
		if ((w->errata & STRACE_ERRATUM_SKD022) &&
		    is_vmentry(w, w->fup_ip)) {
			/* SKD022: a VM entry that clears TraceEn sends a
			 * FUP first; the disable is the VM entry's own */
			disable(w, w->fup_ip);
			return 0;
		}
		emit(w, STRACE_EV_INTERRUPT, fl, w->fup_ip,
		     suppressed ? 0 : to);
		w->st.branches++;
		w->enabled = 0;
		w->parked = 0;
		w->have_ip = 0;
		return 0;
	}
	if (!w->have_ip || !w->enabled) {
		w->enabled = 0;
		return 0;
	}
	if (w->dtnt_n)
		return fail(w, STRACE_E_NOTIP);
	w->last_direct = 0;
	err = advance(w, 0, suppressed ? PGD_NOIP : to);
	if (err == 1) { /* a direct branch to `to` */
		disable(w, w->last_direct);
		return 0;
	}
	if (err) {
		/* SKL014: the TIP.PGD of a direct branch may have no IP; the
		 * walk ran past it into code that did not run */
		if (suppressed && w->last_direct &&
		    (w->errata & STRACE_ERRATUM_SKL014) &&
		    (err == -STRACE_E_NOMAP || err == -STRACE_E_BADINSN)) {
			disable(w, w->last_direct);
			return 0;
		}
		return fail(w, -err);
	}
	b = &w->park;
	term = b->start + b->len - b->term_len;
	w->parked = 0;
	switch (b->kind) {
	case STRACE_BK_SYSCALL:
	case STRACE_BK_SYSENTER:
	case STRACE_BK_INT:
		emit(w, STRACE_EV_SYSCALL, 0, term, suppressed ? 0 : to);
		w->st.branches++;
		w->pending_syscall = 1;
		w->enabled = 0;
		w->have_ip = 0;
		return 0;
	case STRACE_BK_JCC:
		if (!suppressed && to == b->target) {
			unsigned fl = STRACE_F_CONDITIONAL;

			w->st.branches++;
			if (jump_kept(b->flags & STRACE_BF_SAME_SYM, w->o.flags,
				      &fl))
				emit(w, STRACE_EV_JUMP, fl, term, to);
		}
		break;
	default:
		if (!suppressed)
			indirect_branch(w, b, term, to);
		break;
	}
	disable(w, term);
	return 0;
}

/* A FUP at ip. Returns 0, 1 when the FUP is to be ignored altogether (its
 * IP does not even update the last IP), or -code after an error. */
static int fup(struct strace_walker *w, uint64_t ip, int suppressed,
	       size_t next)
{
	int binds = w->fup_binds, abort = w->tsx_abort;
	int err;

	w->fup_binds = w->tsx_abort = 0;
	if (suppressed)
		return 0;
	if (w->in_psb) {
		if (!w->have_ip) {
			if ((w->errata & STRACE_ERRATUM_BDM70) &&
			    bdm70_fup(w, next))
				return 1;
			w->psb_fup = 1;
			begin(w, ip, w->begin_reason);
			return 0;
		}
		w->psb_fup = 1;
		/* the trace says where we are: check we got there. The
		 * branches walked to get there keep the previous time; those
		 * walked from here on take the PSB+'s (as perf gives them) */
		err = advance(w, ip, 0);
		w->adv_time = now(w);
		if (err) {
			error_event(w, STRACE_E_DESYNC);
			w->parked = 0;
			retstack_clear(&w->rs);
			w->dtnt_n = 0;
			w->ip = ip;
		}
		return 0;
	}
	if (!w->have_ip || !w->enabled) {
		if (w->pending_ovf) {
			if ((w->errata & STRACE_ERRATUM_APL12) &&
			    apl12_fup(w, next))
				return 0; /* tracing stays off */
			/* resume after an overflow */
			begin(w, ip, STRACE_REASON_OVERFLOW);
		}
		return 0;
	}
	if (w->dtnt_n)
		return fail(w, STRACE_E_NOTIP);
	err = advance(w, ip, 0);
	if (err) {
		/* BDM64: the TIP or TNT just before a TSX abort may be wrong;
		 * the abort's FUP says where the code was */
		if (!abort || !(w->errata & STRACE_ERRATUM_BDM64))
			return fail(w, -err);
		w->parked = 0;
		w->ip = ip;
	}
	if (binds && !abort)
		return 0; /* MODE.TSX begin/commit, PTW, EXSTOP: a location */
	w->pending_fup = 1;
	w->pending_abort = abort;
	w->fup_ip = ip;
	return 0;
}

static void overflow(struct strace_walker *w)
{
	if (w->first_idx < 0) {
		w->ovf_before = 1;
		w->ovf_before_off = w->pos;
	}
	w->pending_ovf = 1;
	w->ovf_offset = w->pos;
	w->st.overflows++;
	lose_sync(w);
	w->enabled = 0;
	w->in_psb = 0; /* an OVF ends a PSB+ */
}

/* --- time -------------------------------------------------------------- */

uint64_t strace_tsc_to_perf_time(const struct strace_time_conv *tc,
				 uint64_t tsc)
{
	uint64_t quot, rem;

	if (!tc->time_mult)
		return tsc;
	/* The kernel's shift is below 64; a bigger one (a damaged file) has
	 * no defined shift in C: its limit, tsc * mult / 2^64 and more,
	 * is 0. Readers refuse such values; this only keeps it defined. */
	if (tc->time_shift > 63)
		return tc->time_zero;
	if (tc->cap_user_time_short)
		tsc = tc->time_cycles +
		      ((tsc - tc->time_cycles) & tc->time_mask);
	quot = tsc >> tc->time_shift;
	rem = tsc & (((uint64_t)1 << tc->time_shift) - 1);
	return tc->time_zero + quot * tc->time_mult +
	       ((rem * tc->time_mult) >> tc->time_shift);
}

static void on_tsc(struct strace_walker *w, uint64_t tsc)
{
	w->tsc = w->tsc_ref = tsc;
	w->cyc = 0;
	w->have_tsc = 1;
	w->time_exact = 1;
}

static void on_tma(struct strace_walker *w, uint32_t ctc, uint32_t fc)
{
	/* as perf: the CTC edge was fc TSC ticks before the TSC packet */
	w->last_ctc = ctc;
	w->have_ctc = 1;
	if (w->have_tsc)
		w->tsc_ref = w->tsc - fc;
}

static void on_mtc(struct strace_walker *w, uint8_t payload)
{
	const struct strace_time_conv *tc = &w->o.time;
	uint32_t shift = tc->mtc_period, span, cur, delta;

	/* the period is a 4-bit field: a bigger one comes of a corrupt file */
	if (!w->have_tsc || !w->have_ctc || !tc->tsc_ctc_ratio_d || shift > 15)
		return;
	/* The MTC payload is CTC bits [shift + 7 : shift]: the CTC value
	 * now is the last one known (TMA or MTC) with those bits replaced
	 * and the bits below cleared, one wrap later if that went back. */
	span = 1u << (shift + 8);
	cur = (w->last_ctc & ~(span - 1)) | ((uint32_t)payload << shift);
	if (cur < w->last_ctc)
		cur += span;
	delta = cur - w->last_ctc;
	w->last_ctc = cur & 0xffffu;
	w->tsc_ref += (uint64_t)delta * tc->tsc_ctc_ratio_n /
		      tc->tsc_ctc_ratio_d;
	w->tsc = w->tsc_ref;
	w->cyc = 0;
	w->time_exact = 1;
}

static void on_cyc(struct strace_walker *w, uint64_t cycles)
{
	const struct strace_time_conv *tc = &w->o.time;

	if (!w->have_tsc || !w->cbr || !tc->max_nonturbo_ratio)
		return;
	w->cyc += cycles;
	/* core cycles to TSC ticks: TSC runs at the non-turbo ratio */
	w->tsc = w->tsc_ref + w->cyc * tc->max_nonturbo_ratio / w->cbr;
}

/* --- the packet loop ------------------------------------------------------ */

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static const int8_t ip_bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};

/* Find the next PSB at or after from; returns its offset or -1. */
static long next_psb(struct strace_walker *w, size_t from)
{
	uint64_t off;

	if (from >= w->len)
		return -1;
	/* pt_pkt_sync_forward() looks past a PSB at the position it was
	 * set to: take one that starts right here ourselves */
	if (from + 2 <= w->len && w->buf[from] == 0x02 &&
	    w->buf[from + 1] == 0x82) {
		w->st.syncs++;
		return (long)from;
	}
	if (pt_pkt_sync_set(w->pkt, from) < 0)
		return -1;
	if (pt_pkt_sync_forward(w->pkt) < 0)
		return -1;
	if (pt_pkt_get_sync_offset(w->pkt, &off) < 0 || off >= w->len)
		return -1;
	w->st.syncs++;
	return (long)off;
}

/* A packet the inline parser does not handle: libipt decodes it. Returns
 * its size, or a negative code for a bad packet. */
static int slow_packet(struct strace_walker *w)
{
	struct pt_packet p;
	int n;

	w->st.slow_packets++;
	if (pt_pkt_sync_set(w->pkt, w->pos) < 0)
		return -STRACE_E_BADPKT;
	n = pt_pkt_next(w->pkt, &p, sizeof(p));
	if (n <= 0)
		return -STRACE_E_BADPKT;
	switch (p.type) {
	case ppt_tma:
		on_tma(w, p.payload.tma.ctc, p.payload.tma.fc);
		break;
	case ppt_ovf:
		overflow(w);
		break;
	case ppt_pip:
	case ppt_vmcs:
	case ppt_mnt:
		/* status: they may stand between an asynchronous branch's
		 * FUP and its TIP (they bind to it) */
		break;
	case ppt_ptw:
	case ppt_exstop:
		/* with IP set, a FUP follows that says where it happened */
		if (p.type == ppt_ptw ? p.payload.ptw.ip : p.payload.exstop.ip)
			w->fup_binds = 1;
		w->pending_fup = 0;
		break;
	default:
		/* MWAIT, PWRE, PWRX, STOP: nothing for the flow */
		w->pending_fup = 0;
		break;
	}
	return n;
}

/* Decode from a PSB at w->pos until the end or an error.
 * Returns 0 at the end of the buffer, -code after an error (the error
 * event is out; the caller resyncs), or a sink error. */
static int run(struct strace_walker *w)
{
	const uint8_t *buf = w->buf;
	size_t len = w->len;
	size_t i = w->pos;

	while (i < len) {
		uint8_t b = buf[i];
		int err = 0;

		w->pos = i;
		w->st.packets++;
		if (w->sink_err)
			return w->sink_err;
		if (b == 0x00) { /* PAD */
			i++;
			continue;
		}
		if (!(b & 1) && b != 0x02) { /* short TNT */
			int top = 31 - __builtin_clz((unsigned)b);
			err = tnt_run(w, (b >> 1) & ((1u << (top - 1)) - 1),
				      top - 1);
			w->pending_fup = 0;
			i++;
			if (err)
				return err;
			continue;
		}
		if ((b & 3) == 3) { /* CYC */
			uint64_t c = b >> 3;
			int shift = 5;
			if (unlikely((b & 4) && i + 2 < len && buf[i + 1] == 0x02 &&
				     buf[i + 2] == 0xf3 &&
				     (w->errata & STRACE_ERRATUM_SKD007))) {
				/* SKD007: an OVF sent in place of the rest
				 * of a multi-byte CYC */
				i++;
				continue;
			}
			i++;
			if (b & 4) {
				while (i < len) {
					uint8_t x = buf[i++];
					if (shift < 64)
						c |= (uint64_t)(x >> 1) << shift;
					shift += 7;
					if (!(x & 1))
						break;
				}
			}
			on_cyc(w, c);
			continue;
		}
		switch (b & 0x1f) {
		case 0x0d: case 0x11: case 0x01: case 0x1d: {
			int ipc = b >> 5, nb = ip_bytes[ipc];
			uint64_t ip = 0, v;
			int supp = ipc == 0;

			if (nb < 0)
				return fail(w, STRACE_E_BADPKT);
			if (i + 1 + (size_t)nb > len)
				return 0; /* truncated at the end */
			v = get_le(buf + i + 1, nb);
			switch (ipc) {
			case 1:
				ip = (w->last_ip & ~0xffffull) | v;
				break;
			case 2:
				ip = (w->last_ip & ~0xffffffffull) | v;
				break;
			case 3:
				ip = (uint64_t)((int64_t)(v << 16) >> 16);
				break;
			case 4:
				ip = (w->last_ip & ~0xffffffffffffull) | v;
				break;
			case 6:
				ip = v;
				break;
			}
			uint64_t prev_ip = w->last_ip;
			if (!supp) {
				w->last_ip = ip;
				w->have_last_ip = 1;
			}
			i += 1 + (size_t)nb;
			switch (b & 0x1f) {
			case 0x0d:
				err = tip(w, ip, supp, i);
				break;
			case 0x11:
				err = pge(w, ip, supp);
				break;
			case 0x01:
				err = pgd(w, ip, supp);
				break;
			default:
				err = fup(w, ip, supp, i);
				if (err == 1) { /* BDM70: not this FUP's IP */
					w->last_ip = prev_ip;
					err = 0;
				}
				break;
			}
			if (err)
				return err;
			continue;
		}
		}
		if (b == 0x19) { /* TSC */
			if (i + 8 > len)
				return 0;
			on_tsc(w, get_le(buf + i + 1, 7));
			i += 8;
			continue;
		}
		if (b == 0x59) { /* MTC */
			if (i + 2 > len)
				return 0;
			on_mtc(w, buf[i + 1]);
			i += 2;
			continue;
		}
		if (b == 0x99) { /* MODE */
			if (i + 2 > len)
				return 0;
			/* MODE.Exec: 64-bit code assumed. MODE.TSX outside
			 * PSB+ binds to the FUP after it: begin and commit
			 * only say where, an abort is an asynchronous
			 * branch to the abort handler */
			if ((buf[i + 1] >> 5) == 1) {
				w->in_tsx = buf[i + 1] & 1;
				/* (while tracing is off, no FUP follows) */
				if (!w->in_psb && w->enabled && w->have_ip) {
					w->fup_binds = 1;
					w->tsx_abort = (buf[i + 1] & 2) != 0;
				}
			}
			i += 2;
			continue;
		}
		if (b == 0x02 && i + 1 < len) {
			uint8_t x = buf[i + 1];
			if (x == 0xa3) { /* long TNT */
				uint64_t v;
				int top;
				if (i + 8 > len)
					return 0;
				v = get_le(buf + i + 2, 6);
				if (!v)
					return fail(w, STRACE_E_BADPKT);
				top = 63 - __builtin_clzll(v);
				err = tnt_run(w, v & ((1ull << top) - 1), top);
				w->pending_fup = 0;
				i += 8;
				if (err)
					return err;
				continue;
			}
			if (x == 0x82) { /* PSB */
				if (i + 16 > len)
					return 0;
				if (unlikely(w->o.progress != NULL) &&
				    i - w->prog_at >= PROGRESS_STEP) {
					w->prog_at = i;
					w->o.progress(w->o.progress_arg, i);
				}
				w->in_psb = 1;
				w->psbs++;
				w->psb_fup = 0;
				w->last_ip = 0;
				w->have_last_ip = 0;
				/* SDM 36.2.1.2: only returns to calls made
				 * since the last PSB are compressed; so each
				 * PSB starts an empty stack, and a segment
				 * cut at a PSB decodes on its own */
				retstack_clear(&w->rs);
				i += 16;
				continue;
			}
			if (x == 0x23) { /* PSBEND */
				if (w->in_psb && !w->psb_fup && w->have_ip) {
					/* tracing is off here */
					w->enabled = 0;
					w->have_ip = 0;
				}
				w->in_psb = 0;
				i += 2;
				continue;
			}
			if (x == 0x03) { /* CBR */
				if (i + 4 > len)
					return 0;
				w->cbr = buf[i + 2];
				i += 4;
				continue;
			}
			if (x == 0xf3) { /* OVF */
				overflow(w);
				i += 2;
				continue;
			}
			/* event trace (newer than libipt 2.0.5, which cannot
			 * skip them): CFE, 2 payload bytes (type, IP bit,
			 * vector); EVD, 9 (type, 8-byte payload). Neither
			 * moves the flow: a CFE with its IP bit set comes
			 * with the FUP of the asynchronous event it names,
			 * which is handled as any FUP */
			if (x == 0x13 || x == 0x53) {
				size_t n = x == 0x13 ? 4 : 11;

				if (i + n > len)
					return 0;
				i += n;
				continue;
			}
		}
		{
			int n = slow_packet(w);
			if (n < 0) {
				if (w->pos + 16 > len)
					return 0; /* a packet cut by the end */
				return fail(w, -n);
			}
			i += (size_t)n;
		}
	}
	w->pos = len;
	return 0;
}

/*
 * Decode [start, end) of buf (total bytes in all). At the end: a trace_end
 * event if emit_end, else, when next_fup is given (the FUP of the PSB+ at
 * end), walk on to it as the sequential decode would at that PSB.
 */
static long decode_range(struct strace_walker *w, const uint8_t *buf,
			 size_t start, size_t end, size_t all, int emit_end,
			 int has_next_fup, uint64_t next_fup)
{
	struct pt_config cfg;
	long first = w->events, off;
	int err;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + all;
	w->pkt = pt_pkt_alloc_decoder(&cfg);
	if (!w->pkt)
		return -ENOMEM;
	w->buf = buf;
	w->len = end;
	w->all = all;
	w->sink_err = 0;
	w->first_idx = -1;
	w->first_n = 0;
	w->err_before = w->ovf_before = 0;
	w->ovf_at_end = 0;
	w->psbs = 0;
	w->prog_at = start;
	if (w->l0_gen != strace_image_generation(w->img)) {
		memset(w->l0, 0, sizeof(w->l0));
		w->l0_gen = strace_image_generation(w->img);
		tc_flush(w->tc);
	}
	strace_dec_bcache_sync(w->cache, w->img);
	off = next_psb(w, start);
	if (off < 0) {
		pt_pkt_free_decoder(w->pkt);
		w->pkt = NULL;
		return -STRACE_E_NOSYNC;
	}
	for (;;) {
		w->pos = (size_t)off;
		lose_sync(w);
		w->enabled = 0;
		err = run(w);
		if (w->sink_err)
			break;
		if (!err)
			break;
		/* resume at the next PSB after the failing packet */
		off = next_psb(w, w->pos + 1);
		if (off < 0)
			break;
	}
	if (!w->sink_err && emit_end && w->pending_ovf &&
	    !(w->have_ip && w->enabled)) {
		/* an overflow with nothing after it: still told (ip 0: no
		 * resume), at the time of the last event */
		put_event(w, STRACE_EV_OVERFLOW, 0, w->last_time, 0,
			  w->ovf_offset);
		w->pending_ovf = 0;
		w->ovf_at_end = 1;
	}
	if (!w->sink_err && w->have_ip && w->enabled) {
		if (emit_end) {
			/* The last address the trace vouches for: where the
			 * last packet left us. Code after it may never have
			 * run (the buffer was cut), so no events are made up
			 * for it. */
			emit(w, STRACE_EV_TRACE_END, 0, w->ip,
			     STRACE_REASON_END);
		} else if (has_next_fup) {
			w->pos = w->fup_at; /* where the sequential decode
					     * would be */
			if (advance(w, next_fup, 0)) {
				error_event(w, STRACE_E_DESYNC);
				w->parked = 0;
				w->ip = next_fup;
			}
		}
	}
	w->st.bytes += end - start;
	pt_pkt_free_decoder(w->pkt);
	w->pkt = NULL;
	if (w->sink_err)
		return w->sink_err;
	return w->events - first;
}

long strace_walker_decode(struct strace_walker *w, const uint8_t *buf,
			  size_t len)
{
	if (w->o.flags & STRACE_WALK_REFERENCE)
		return strace_walker_decode_ref(w->img, &w->o, w->cache, buf,
						len, &w->st);
	w->begin_reason = STRACE_REASON_START;
	return decode_range(w, buf, 0, len, len, 1, 0, 0);
}

/* --- parallel decode ------------------------------------------------------ */

struct evvec {
	struct strace_event *v;
	size_t n, cap;
	int err;
};

static int vec_push(void *arg, const struct strace_event *ev)
{
	struct evvec *e = arg;

	if (e->n == e->cap) {
		size_t nc = e->cap ? e->cap * 2 : 4096;
		struct strace_event *nv = realloc(e->v, nc * sizeof(*nv));
		if (!nv)
			return e->err = -ENOMEM;
		e->v = nv;
		e->cap = nc;
	}
	e->v[e->n++] = *ev;
	return 0;
}

/* What the sequential decode knows at a segment boundary. */
struct seg_state {
	int have_ip, enabled, pending_syscall, pending_ovf, begin_reason;
	uint64_t ovf_offset;
};

struct seg_job {
	/* each job on its own cache lines: workers bump ev.n per event */
	_Alignas(128) size_t start, end;
	int last, has_next_fup;
	uint64_t next_fup;
	size_t fup_at;
	struct evvec ev;
	long ret;
	/* from the segment's walker */
	long first_idx;
	int first_n, first_from_psb0, err_before, ovf_before, ovf_at_end;
	uint64_t first_ip, ovf_before_off;
	struct seg_state end_state;
	struct strace_walk_stats st;
};

/*
 * A pipeline: workers take segments in order (an atomic counter) into a
 * ring of R job slots; the caller merges slot after slot in order, and
 * frees each slot for the segment R further on. Memory: R segments' events.
 */
struct pool {
	struct seg_job *jobs; /* R slots */
	size_t R;
	const uint64_t *offs;
	size_t nseg;
	_Atomic size_t next; /* next segment to take */
	const uint8_t *buf;
	size_t len;
	struct strace_walker **walkers;
	pthread_mutex_t mu;
	pthread_cond_t cv_done, cv_free;
	size_t merged;   /* segments merged (slots below are free) */
	uint8_t *done;   /* per slot: the segment in it is decoded */
	int stop;
};

static void run_job(struct strace_walker *w, const uint8_t *buf, size_t len,
		    struct seg_job *j)
{
	memset(&w->st, 0, sizeof(w->st));
	w->o.emit_arg = &j->ev;
	w->begin_reason = STRACE_REASON_START;
	w->pending_syscall = w->pending_ovf = 0;
	w->have_tsc = w->have_ctc = 0;
	w->cbr = 0;
	w->last_time = 0;
	w->events = 0;
	w->in_psb = 0;
	w->time_exact = 0;
	w->tsc = w->tsc_ref = w->cyc = 0;
	w->fup_at = j->fup_at;
	j->ret = decode_range(w, buf, j->start, j->end, len, j->last,
			      j->has_next_fup, j->next_fup);
	if (!j->ret && j->ev.err)
		j->ret = j->ev.err;
	j->first_idx = w->first_idx;
	j->first_n = w->first_n;
	j->first_ip = w->first_ip;
	j->first_from_psb0 = w->first_from_psb0;
	j->err_before = w->err_before;
	j->ovf_before = w->ovf_before;
	j->ovf_before_off = w->ovf_before_off;
	j->ovf_at_end = w->ovf_at_end;
	j->end_state = (struct seg_state){w->have_ip, w->enabled,
					  w->pending_syscall, w->pending_ovf,
					  w->begin_reason, w->ovf_offset};
	j->st = w->st;
}

struct worker_arg {
	struct pool *p;
	unsigned id;
};

static int psb_plus(const uint8_t *buf, size_t len, size_t off, uint64_t *ip,
		    size_t *at, int *has_fup);

static void *worker(void *arg)
{
	struct worker_arg *a = arg;
	struct pool *p = a->p;
	size_t k;

	while ((k = atomic_fetch_add(&p->next, 1)) < p->nseg) {
		struct seg_job *j = &p->jobs[k % p->R];

		/* wait until segment k - R has been merged */
		pthread_mutex_lock(&p->mu);
		while (k >= p->merged + p->R && !p->stop)
			pthread_cond_wait(&p->cv_free, &p->mu);
		pthread_mutex_unlock(&p->mu);
		if (p->stop)
			break;
		j->ev.n = 0;
		j->ev.err = 0;
		j->start = (size_t)p->offs[k];
		j->end = k + 1 < p->nseg ? (size_t)p->offs[k + 1] : p->len;
		j->last = k + 1 == p->nseg;
		if (!j->last)
			psb_plus(p->buf, p->len, j->end, &j->next_fup,
				 &j->fup_at, &j->has_next_fup);
		else
			j->has_next_fup = 0;
		run_job(p->walkers[a->id], p->buf, p->len, j);
		pthread_mutex_lock(&p->mu);
		p->done[k % p->R] = 1;
		pthread_cond_broadcast(&p->cv_done);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* Read the PSB+ at off: returns 1 if it is complete in buf (its PSBEND
 * is there); *ip and *at get its FUP's ip and offset and *has_fup says
 * whether it has one (a PSB+ cut by the end of buf may still show it). */
static int psb_plus(const uint8_t *buf, size_t len, size_t off, uint64_t *ip,
		    size_t *at, int *has_fup)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet p;
	int complete = 0;

	*has_fup = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return 0;
	if (pt_pkt_sync_set(d, off) >= 0) {
		for (int k = 0; k < 64; k++) {
			uint64_t here = 0;
			pt_pkt_get_offset(d, &here);
			if (pt_pkt_next(d, &p, sizeof(p)) < 0)
				break;
			if (p.type == ppt_psbend) {
				complete = 1;
				break;
			}
			if (p.type == ppt_fup &&
			    p.payload.ip.ipc != pt_ipc_suppressed) {
				/* last IP is 0 after a PSB */
				uint64_t v = p.payload.ip.ip;
				if (p.payload.ip.ipc == pt_ipc_sext_48)
					v = (uint64_t)((int64_t)(v << 16) >> 16);
				*ip = v;
				*at = (size_t)here;
				*has_fup = 1;
			}
		}
	}
	pt_pkt_free_decoder(d);
	return complete;
}

static int sink(struct strace_walker *w, const struct strace_event *ev)
{
	struct strace_event e = *ev;
	int err;

	e.time = time_forward(&w->o.time, &w->last_time, e.time);
	if (e.type == STRACE_EV_ERROR)
		w->last_time = 0; /* time may go back: see fail() */
	err = sink_put(&w->o, &e);
	if (err)
		return err;
	w->events++;
	w->st.events++;
	return 0;
}

/* After the last segment: an overflow an earlier one left pending, with
 * nothing after it, is told as the sequential decode tells it. */
static int end_overflow(struct strace_walker *w, const struct seg_job *j,
			struct seg_state *S)
{
	struct strace_event e;

	if (!S->pending_ovf || j->ovf_at_end)
		return 0;
	memset(&e, 0, sizeof(e));
	e.type = STRACE_EV_OVERFLOW;
	e.tid = w->o.tid;
	e.time = w->last_time;
	e.b = S->ovf_offset;
	S->pending_ovf = 0;
	return sink(w, &e);
}

/* Hand one segment's events to the sink, fixing its first begin up to
 * what the sequential decode would have said given the state S at its
 * start; then update S. */
static int merge(struct strace_walker *w, struct seg_job *j, int first_seg,
		 struct seg_state *S)
{
	size_t i;
	int err;
	unsigned carry = 0; /* TIME_EXACT of a dropped event goes on */

	for (i = 0; i < j->ev.n; i++) {
		if (!first_seg && j->first_idx >= 0 &&
		    i == (size_t)j->first_idx && !j->ovf_before) {
			struct strace_event e = j->ev.v[i];
			int reason = j->err_before ? STRACE_REASON_ERROR
						   : S->begin_reason;
			uint64_t ip = j->first_ip;

			i += (size_t)j->first_n - 1;
			if (j->first_from_psb0 && S->have_ip && S->enabled) {
				/* in sync: the PSB+ says nothing */
				carry = e.flags & STRACE_F_TIME_EXACT;
				continue;
			}
			e.flags &= STRACE_F_TIME_EXACT;
			if (S->pending_ovf) {
				e.type = STRACE_EV_OVERFLOW;
				e.a = ip;
				e.b = S->ovf_offset;
				if ((err = sink(w, &e)))
					return err;
				e.flags = 0;
				reason = STRACE_REASON_OVERFLOW;
			}
			if (S->pending_syscall) {
				e.type = STRACE_EV_SYSRET;
				e.a = 0;
				e.b = ip;
			} else {
				e.type = STRACE_EV_TRACE_BEGIN;
				e.a = ip;
				e.b = (uint64_t)reason;
			}
			if ((err = sink(w, &e)))
				return err;
			continue;
		}
		if (j->ev.v[i].flags & F_ADV) {
			/* as in a sequential decode, TIME_EXACT waits for
			 * an event resolved by a packet */
			j->ev.v[i].flags &= (uint16_t)~F_ADV;
		} else {
			j->ev.v[i].flags |= (uint16_t)carry;
			carry = 0;
		}
		if ((err = sink(w, &j->ev.v[i])))
			return err;
	}
	if (first_seg || j->first_idx >= 0) {
		*S = j->end_state;
	} else {
		/* tracing stayed off through the segment */
		S->have_ip = S->enabled = 0;
		if (j->ovf_before) {
			S->pending_ovf = 1;
			S->ovf_offset = j->ovf_before_off;
		}
		if (j->err_before)
			S->begin_reason = STRACE_REASON_ERROR;
	}
	w->st.bytes += j->st.bytes;
	w->st.packets += j->st.packets;
	w->st.slow_packets += j->st.slow_packets;
	w->st.branches += j->st.branches;
	w->st.insns += j->st.insns;
	w->st.errors += j->st.errors;
	w->st.overflows += j->st.overflows;
	w->st.syncs += j->st.syncs;
	return 0;
}

long strace_walker_decode_parallel(struct strace_walker *w,
				   const uint8_t *buf, size_t len,
				   unsigned nthreads, size_t seg_bytes)
{
	uint64_t *offs = NULL;
	size_t n, maxs, k;
	struct pool p;
	struct strace_walker **ws = NULL;
	struct seg_state S = {0, 0, 0, 0, STRACE_REASON_START, 0};
	long start_events = w->events;
	long ret = 0;
	pthread_t th[64];
	struct worker_arg args[64];
	unsigned t, started = 0;

	if (!seg_bytes)
		seg_bytes = 64 << 10;
	if (nthreads > 64)
		nthreads = 64;
	if ((w->o.flags & STRACE_WALK_REFERENCE) || nthreads <= 1 ||
	    len < 2 * seg_bytes)
		return strace_walker_decode(w, buf, len);
	maxs = len / seg_bytes + 2;
	offs = malloc(maxs * sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	n = strace_pt_split(buf, len, seg_bytes, offs, maxs);
	if (n <= 1) {
		free(offs);
		return strace_walker_decode(w, buf, len);
	}
	strace_dec_image_load_all_symbols(w->img);
	memset(&p, 0, sizeof(p));
	p.R = (size_t)nthreads * 4;
	p.offs = offs;
	p.nseg = n;
	p.buf = buf;
	p.len = len;
	p.jobs = aligned_alloc(128, p.R * sizeof(*p.jobs));
	if (p.jobs)
		memset(p.jobs, 0, p.R * sizeof(*p.jobs));
	p.done = calloc(p.R, 1);
	ws = calloc(nthreads, sizeof(*ws));
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv_done, NULL);
	pthread_cond_init(&p.cv_free, NULL);
	if (!p.jobs || !p.done || !ws) {
		ret = -ENOMEM;
		goto out;
	}
	for (t = 0; t < nthreads; t++) {
		struct strace_walk_opts o = w->o;
		o.emit = vec_push;
		o.writer = NULL;
		o.cache = NULL;
		o.progress = NULL; /* the merge tells it, in order */
		if (strace_walker_new(w->img, &o, &ws[t]) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	p.walkers = ws;
	w->last_time = 0;
	w->prog_at = 0;
	for (t = 0; t < nthreads; t++) {
		args[t] = (struct worker_arg){&p, t};
		if (pthread_create(&th[t], NULL, worker, &args[t]) != 0)
			break;
		started++;
	}
	if (!started) {
		ret = -EAGAIN;
		goto out;
	}
	/* merge in order as segments complete */
	for (k = 0; k < n; k++) {
		struct seg_job *j = &p.jobs[k % p.R];
		int err;

		pthread_mutex_lock(&p.mu);
		while (!p.done[k % p.R])
			pthread_cond_wait(&p.cv_done, &p.mu);
		pthread_mutex_unlock(&p.mu);
		if (j->ret < 0 && j->ret != -STRACE_E_NOSYNC) {
			ret = j->ret;
			break;
		}
		err = merge(w, j, k == 0, &S);
		if (!err && k + 1 == n)
			err = end_overflow(w, j, &S);
		if (err) {
			ret = err;
			break;
		}
		if (w->o.progress && j->end - w->prog_at >= PROGRESS_STEP) {
			w->prog_at = j->end;
			w->o.progress(w->o.progress_arg, j->end);
		}
		pthread_mutex_lock(&p.mu);
		p.done[k % p.R] = 0;
		p.merged = k + 1;
		pthread_cond_broadcast(&p.cv_free);
		pthread_mutex_unlock(&p.mu);
	}
	if (ret >= 0)
		ret = w->events - start_events;
	pthread_mutex_lock(&p.mu);
	p.stop = 1;
	pthread_cond_broadcast(&p.cv_free);
	pthread_mutex_unlock(&p.mu);
	for (t = 0; t < started; t++)
		pthread_join(th[t], NULL);
out:
	if (ws)
		for (t = 0; t < nthreads; t++)
			strace_walker_free(ws[t]);
	if (p.jobs)
		for (size_t i = 0; i < p.R; i++)
			free(p.jobs[i].ev.v);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv_done);
	pthread_cond_destroy(&p.cv_free);
	free(p.jobs);
	free(p.done);
	free(ws);
	free(offs);
	return ret;
}

int strace_walker_new(struct strace_image *img,
		      const struct strace_walk_opts *opts,
		      struct strace_walker **out)
{
	struct strace_walker *w;

	if (!img || !opts || opts->size < sizeof(*opts))
		return -STRACE_E_BADARG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->img = img;
	w->o = *opts;
	/* a processor the table does not know gets the workarounds that
	 * only ever turn a decode error into a decode (a trace without the
	 * erratum never meets their condition) */
	w->errata = strace_dec_cpu_workarounds(&opts->cpu);
	w->adv_mark = opts->emit == vec_push ? F_ADV : 0;
	w->cache = opts->cache;
	if (!w->cache) {
		if (strace_bcache_new(0, &w->cache) < 0) {
			free(w);
			return -ENOMEM;
		}
		w->own_cache = 1;
	}
	*out = w;
	return 0;
}

void strace_walker_free(struct strace_walker *w)
{
	if (!w)
		return;
	if (w->own_cache)
		strace_bcache_free(w->cache);
	strace_walker_free(w->stream);
	if (w->tc)
		free(w->tc->item);
	free(w->tc);
	if (w->stream_ev)
		free(w->stream_ev->v);
	free(w->stream_ev);
	free(w->stream_S);
	free(w);
}

/*
 * Streaming is the parallel decode done one segment at a time: each piece
 * up to its last complete PSB+ is a segment that walks on to that PSB+'s
 * FUP, and merge() joins it to what came before exactly as the parallel
 * decode joins its segments.
 */
long strace_walker_decode_stream(struct strace_walker *w, const uint8_t *buf,
				 size_t len, int final, size_t *used)
{
	struct seg_job j;
	long first = w->events;
	int err;

	*used = 0;
	if (w->o.flags & STRACE_WALK_REFERENCE) {
		/* libipt's block decoder has no segments: all at the end. */
		if (!final)
			return 0;
		*used = len;
		return strace_walker_decode(w, buf, len);
	}
	if (!w->stream) {
		struct strace_walk_opts o = w->o;
		o.emit = vec_push;
		o.writer = NULL;
		o.cache = w->cache;
		o.progress = NULL; /* one call per piece: the caller's */
		w->stream_ev = calloc(1, sizeof(*w->stream_ev));
		w->stream_S = calloc(1, sizeof(*w->stream_S));
		if (!w->stream_ev || !w->stream_S ||
		    strace_walker_new(w->img, &o, &w->stream) < 0)
			return -ENOMEM;
		w->stream_S->begin_reason = STRACE_REASON_START;
		w->stream_first = 1;
	}
	memset(&j, 0, sizeof(j));
	j.end = len;
	j.last = final;
	if (!final) {
		uint64_t offs[256];
		size_t n = strace_pt_split(buf, len, 0, offs, 256);
		j.end = 0;
		while (n-- > 0)
			if (offs[n] > 0 &&
			    psb_plus(buf, len, (size_t)offs[n], &j.next_fup,
				     &j.fup_at, &j.has_next_fup)) {
				j.end = (size_t)offs[n];
				break;
			}
		if (!j.end)
			return 0; /* no complete PSB+ after the start yet */
	}
	j.ev = *w->stream_ev;
	j.ev.n = 0;
	j.ev.err = 0;
	run_job(w->stream, buf, len, &j);
	*w->stream_ev = j.ev; /* keep the vector's storage */
	if (!j.ret && j.ev.err)
		j.ret = j.ev.err;
	if (j.ret < 0 && j.ret != -STRACE_E_NOSYNC)
		return j.ret;
	err = merge(w, &j, w->stream_first, w->stream_S);
	if (!err && final)
		err = end_overflow(w, &j, w->stream_S);
	if (err)
		return err;
	w->stream_first = 0;
	if (final) {
		/* The next piece starts a new stream. */
		memset(w->stream_S, 0, sizeof(*w->stream_S));
		w->stream_S->begin_reason = STRACE_REASON_START;
		w->stream_first = 1;
	}
	*used = j.end;
	return w->events - first;
}

void strace_walker_stats(const struct strace_walker *w,
			 struct strace_walk_stats *st)
{
	*st = w->st;
}

size_t strace_pt_split(const uint8_t *buf, size_t len, size_t min_bytes,
		       uint64_t *offs, size_t max)
{
	static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
	size_t n = 0;
	const uint8_t *p = buf, *end = buf + len;

	while (n < max && p + 16 <= end) {
		const uint8_t *q = memmem(p, (size_t)(end - p), psb, 16);
		if (!q)
			break;
		if (!n || (uint64_t)(q - buf) >= offs[n - 1] + min_bytes)
			offs[n++] = (uint64_t)(q - buf);
		p = q + 16;
	}
	return n;
}

