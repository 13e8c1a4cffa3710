/* SPDX-License-Identifier: MIT */
/*
 * decoder/flow.h - the walker's flow: where it stands in the code, and
 * how packets move it (docs/decoder.md, "The walker"). Not installed.
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
 *
 * What runs per packet, per block or per event is here, static inline,
 * so that it is compiled into the packet loop (walk.c) as it was when one
 * file held the walker: emit, the block lookup, advance, the replay of
 * cached TNT runs (tnt_run()), TIP; none of them calls out but to the
 * sink, the shared block cache on an L0 miss, and the time conversion
 * when the estimate moved. What runs per enable, disable, FUP, error,
 * single TNT bit or cache miss is in flow.c.
 *
 * Errors: the flow functions return 0, or after a decode error -code of
 * STRACE_E_* with the error event emitted and sync dropped (the caller
 * resyncs at the next PSB).
 *
 * Threading: a walker belongs to one thread at a time.
 */
#ifndef DECODER_FLOW_H
#define DECODER_FLOW_H

#include <errno.h>
#include <intel-pt.h>

#include "decoder/walker.h"

/*
 * Code that needs no packet is walked for as long as it runs, which in a
 * damaged trace can be a loop of direct jumps that never ends. The path
 * from an address through such code depends on the address alone (the
 * stop address and the PGD target do not change during one advance()),
 * so once an address comes again the walk would go round for ever:
 * after LOOP_CHECK_AFTER blocks, advance() notes the address it stands at
 * whenever the count of blocks is a power of two (Brent's cycle finding)
 * and gives up, with STRACE_E_LOOP, when it comes to a noted one again:
 * within two turns of the loop, as perf's "Never-ending loop" check does
 * (intel_pt_walk_insn()'s stuck_ip). MAX_BLOCKS_PER_ADVANCE stays as a
 * bound: a walk that long without a packet is wrong, loop or not.
 */
#define LOOP_CHECK_AFTER 4096
#define MAX_BLOCKS_PER_ADVANCE 1000000

/* 1 in the copy of the packet loop of a parallel decode's workers
 * (walk_vec.c, loop.h): their walkers put events in a segment's vector
 * (OUT_VEC), straight, and nothing else. */
#ifndef WALK_VEC
#define WALK_VEC 0
#endif

/* --- events -------------------------------------------------------------- */

/* Hand one event, its time and flags decided, to the sink; ins: the
 * instruction count when it ran (w->st.insns but in a replayed run). */
static inline __attribute__((always_inline)) void
put_event(struct strace_walker *w, unsigned type, unsigned flags,
	  uint64_t time, uint64_t a, uint64_t b, uint64_t ins)
{
	struct strace_event ev = {(uint16_t)type, (uint16_t)flags, w->o.tid,
				  time, a, b};
	int err;

	if (w->out.sink_err)
		return;
	if (unlikely(w->out.filter) && !strace_typeset_has(&w->out.keep, type)) {
		/* not asked for: not made (the spreader counts it) */
		if (w->out.to == OUT_SPREAD &&
		    (err = spread_drop(&w->out.sp, &w->o, time, ins)) != 0)
			w->out.sink_err = sink_error(err);
		return;
	}
	if (WALK_VEC)
		err = vec_put(w->o.emit_arg, &ev, ins);
	else if (likely(w->out.to == OUT_SPREAD))
		err = spread_put(&w->out.sp, &w->o, &ev, ins);
	else if (w->out.to == OUT_VEC) /* (off the loop: out of line) */
		err = strace_dec_vec_put(w->o.emit_arg, &ev, ins);
	else
		err = sink_put(&w->o, &ev);
	if (err) {
		w->out.sink_err = sink_error(err);
		return;
	}
	w->out.events++;
	w->st.events++;
}

/* An event of the flow: timed, recorded when a TNT run is. */
static inline __attribute__((always_inline)) void
emit(struct strace_walker *w, unsigned type, unsigned flags, uint64_t a,
     uint64_t b)
{
	if (unlikely(w->tnt.rec != NULL))
		strace_dec_tc_rec_event(w->tnt.rec, w->flow.in_adv, type, flags,
					a, b, w->st.insns);
	if (w->flow.in_adv) {
		/* a direct branch walked on the way to the next branch that
		 * needs a packet: it ran before the timing packets read since
		 * the last resolved branch, so it keeps that branch's time
		 * (as perf's eager walk gives it) */
		put_event(w, type, flags | w->seg.adv_mark, w->time.adv_time, a,
			  b, w->st.insns);
	} else if (type == STRACE_EV_ERROR) {
		/* the error code, nothing else */
		put_event(w, type, flags, time_now(&w->time, &w->o), a, b,
			  w->st.insns);
	} else {
		unsigned ex = w->time.time_exact ? STRACE_F_TIME_EXACT : 0;
		w->time.time_exact = 0;
		put_event(w, type, flags | ex, time_now(&w->time, &w->o), a, b,
			  w->st.insns);
	}
}

/* An indirect jump from one address to another, as jump_kept() says
 * (whether it stays in one symbol remembered for the next time). */
static inline void emit_jump(struct strace_walker *w, uint64_t from,
			     uint64_t to, unsigned flags)
{
	if (jump_kept(jump_same(w->blk.jsame, JSAME_LOG, w->img, from, to),
		      w->o.flags, &flags))
		emit(w, STRACE_EV_JUMP, flags, from, to);
}

/* The time of a packet-resolved point of the flow (a branch, a PSB+'s
 * FUP, an enable) at instruction count ins: the direct branches walked
 * next keep it; when the events have not shown it yet (the branch made
 * no event: not taken, a jump inside one function), the spreader takes it
 * as a time point (spread.h), or a segment's vector keeps it for the
 * merge. */
static inline void time_point_at(struct strace_walker *w, uint64_t t,
				 uint64_t ins)
{
	w->time.adv_time = t;
	if (likely(t == w->out.anchor_t))
		return;
	w->out.anchor_t = t;
	if (w->out.sink_err)
		return;
	if (w->out.to == OUT_SPREAD) {
		int err = spread_mark(&w->out.sp, &w->o, t, ins);
		if (err)
			w->out.sink_err = sink_error(err);
	} else if (w->out.to == OUT_VEC) {
		if (strace_dec_vec_mark(w->o.emit_arg, t, ins))
			w->out.sink_err = -ENOMEM;
	}
}

static inline void time_point(struct strace_walker *w)
{
	time_point_at(w, time_now(&w->time, &w->o), w->st.insns);
}

/* The return stack, recorded when a TNT run is. */
static inline void flow_push(struct strace_walker *w, uint64_t ret)
{
	if (unlikely(w->tnt.rec != NULL))
		tc_rec_push(w->tnt.rec, ret);
	retstack_push(&w->flow.rs, ret);
}

/* Returns 0, or -1 if the stack is empty. */
static inline int flow_pop(struct strace_walker *w, uint64_t *ret)
{
	if (!w->flow.rs.n)
		return -1;
	if (unlikely(w->tnt.rec != NULL))
		tc_rec_pop(w->tnt.rec);
	return retstack_pop(&w->flow.rs, ret);
}

/* --- OCaml exceptions ----------------------------------------------------- */

/* An OCaml try entered or left in block b (STRACE_BF_OCAML_PUSH, _POP),
 * walked without a packet: timed as a direct branch (emit()'s in_adv).
 * The events name the block's start; a push its handler. */
static inline void ocaml_traps(struct strace_walker *w,
			       const struct strace_block *b)
{
	int adv = w->flow.in_adv;
	unsigned type[2];
	uint64_t a[2], bb[2];
	unsigned n = ocaml_trap_events(b, type, a, bb);

	w->flow.in_adv = 1;
	for (unsigned k = 0; k < n; k++)
		emit(w, type[k], 0, a[k], bb[k]);
	w->flow.in_adv = adv;
}

/* The terminator at term of a block with STRACE_BF_OCAML_RAISE goes to
 * the handler `to`: an exc_raise before its branch's event. A TNT run
 * that holds one is not kept (its return may pop an address pushed before
 * the run, which a replay would pop twice). */
static inline void ocaml_raise(struct strace_walker *w, uint64_t term,
			       uint64_t to)
{
	if (w->tnt.rec)
		w->tnt.rec->full = 1;
	emit(w, STRACE_EV_EXC_RAISE, 0, term, to);
}

/* --- blocks and the advance ---------------------------------------------- */

/* The summary of the block at ip in the code's mode: the L0 copy, else
 * the shared cache, both keyed by ip and the mode (blk.key_tag: 0 in
 * 64-bit code, where the key is the address). */
static inline const struct strace_block *block_at(struct strace_walker *w,
						  uint64_t ip)
{
	unsigned i = (unsigned)(ip ^ (ip >> 8)) & (L0_SIZE - 1);
	uint64_t key = ip | w->blk.key_tag;
	const struct strace_block *b;

	if (likely(w->blk.l0[i].ip == key))
		return &w->blk.l0[i].b;
	b = strace_dec_bcache_get_fast(w->blk.cache, w->img, key);
	w->blk.l0[i].ip = key;
	w->blk.l0[i].b = *b;
	return &w->blk.l0[i].b;
}

/* The code is in mode (enum strace_code_mode) from here on: its blocks
 * are looked up, decoded and their TNT runs kept in it. */
static inline void set_mode(struct strace_walker *w, unsigned mode)
{
	w->flow.mode = mode;
	w->blk.key_tag = (uint64_t)mode << STRACE_MODE_SHIFT;
}

/* MODE.Exec's payload: the mode its CS.L (bit 0) and CS.D (bit 1) say;
 * both set is reserved (libipt: ptem_unknown): 64-bit is kept then. */
static inline unsigned exec_mode_of(uint8_t payload)
{
	if (payload & 1)
		return STRACE_MODE_64;
	return payload & 2 ? STRACE_MODE_32 : STRACE_MODE_16;
}

/* A far branch a MODE.Exec binds to went (TIP, TIP.PGE, TIP.PGD): its
 * mode holds from its target on. */
static inline void mode_at_branch(struct strace_walker *w)
{
	if (unlikely(w->flow.pending_mode))
		set_mode(w, w->flow.next_mode);
	w->flow.pending_mode = 0;
}

static inline int needs_packet(unsigned kind)
{
	return kind != STRACE_BK_NONE && kind != STRACE_BK_CALL &&
	       kind != STRACE_BK_JMP && kind != STRACE_BK_MOV_CR3;
}

/* Sync is lost: nothing is known of where the walk stands. */
static inline void lose_sync(struct strace_walker *w)
{
	/* a mode change announced: the code after the resync is likelier
	 * past its far branch than before it */
	mode_at_branch(w);
	w->flow.have_ip = 0;
	w->flow.parked = 0;
	w->flow.psb_off = 0;
	w->flow.pending_fup = w->flow.pending_mode = 0;
	w->flow.fup_binds = w->flow.tsx_abort = w->flow.pending_abort = 0;
	w->flow.dtnt_n = w->flow.deferring = 0;
	w->tnt.q.n = w->tnt.q.np = 0;
	w->flow.bep_fup = w->flow.ptw_fup = w->flow.fup_event = 0;
	w->flow.evd = 0;
	w->pebs.open = 0;
	retstack_clear(&w->flow.rs);
}

/* strace_dec_insn_starts() - whether an instruction starts at `at`,
 * walked from the instruction at from (at >= from) in the walker's mode
 * by their lengths: a FUP's IP must be one, or the trace and the code
 * disagree. 1 also where the lengths cannot be told (no code, bytes the
 * length decoder does not know): nothing to hold against the trace. */
int strace_dec_insn_starts(struct strace_walker *w, uint64_t from,
			   uint64_t at);

/* advance()'s pgd_to for a TIP.PGD without IP: stop at a MOV to CR3 too */
#define PGD_NOIP 1

/*
 * Advance from the walker's ip through blocks that need no packet,
 * emitting their direct calls and jumps. Stops at a block that needs a
 * packet (parked), or, when stop_at is non-zero, as soon as stop_at lies
 * in the block at hand (ip = stop_at; a desync unless an instruction
 * starts there), or, when pgd_to is non-zero, after
 * a direct branch to pgd_to (a TIP.PGD's target: returns 1,
 * flow.last_direct is the branch). Returns 0, or -STRACE_E_* of the
 * decoder (nothing is emitted for the failure here; the caller reports
 * it).
 */
static inline __attribute__((always_inline)) int
advance(struct strace_walker *w, uint64_t stop_at, uint64_t pgd_to)
{
	struct walk_flow *f = &w->flow;
	long n = 0;

	if (f->parked) {
		if (stop_at && stop_at >= f->park.start &&
		    stop_at < f->park.start + f->park.len) {
			if (!strace_dec_insn_starts(w, f->park.start, stop_at))
				return -STRACE_E_DESYNC;
			f->ip = stop_at;
			f->parked = 0;
			return 0;
		}
		return stop_at ? -STRACE_E_DESYNC : 0;
	}
	for (;;) {
		const struct strace_block *b = block_at(w, f->ip);
		uint64_t term;
		unsigned fl;

		if (stop_at && stop_at >= b->start &&
		    stop_at < b->start + b->len) {
			if (!strace_dec_insn_starts(w, b->start, stop_at))
				return -STRACE_E_DESYNC;
			f->ip = stop_at;
			return 0;
		}
		if (unlikely(b->kind == STRACE_BK_NOCODE))
			return -STRACE_E_NOMAP;
		if (unlikely(b->kind == STRACE_BK_BAD))
			return -STRACE_E_BADINSN;
		w->st.insns += b->ninsn;
		if (unlikely(b->flags &
			     (STRACE_BF_OCAML_PUSH | STRACE_BF_OCAML_POP)))
			ocaml_traps(w, b);
		if (needs_packet(b->kind)) {
			f->park = *b;
			f->parked = 1;
			return stop_at ? -STRACE_E_DESYNC : 0;
		}
		term = b->start + b->len - b->term_len;
		switch (b->kind) {
		case STRACE_BK_CALL:
		case STRACE_BK_JMP:
			/* a direct branch: walked on without a packet */
			if (b->kind == STRACE_BK_CALL &&
			    likely(call_pushes(b->target, b->start + b->len)))
				flow_push(w, b->start + b->len);
			f->in_adv = 1;
			fl = 0;
			if (b->kind == STRACE_BK_CALL)
				emit(w, STRACE_EV_CALL, 0, term, b->target);
			else if (jump_kept(b->flags & STRACE_BF_SAME_SYM,
					   w->o.flags, &fl))
				emit(w, STRACE_EV_JUMP, fl, term, b->target);
			f->in_adv = 0;
			f->last_direct = term;
			f->ip = b->target;
			w->st.branches++;
			if (pgd_to > PGD_NOIP && b->target == pgd_to)
				return 1;
			break;
		case STRACE_BK_MOV_CR3:
			if (pgd_to == PGD_NOIP) {
				f->park = *b;
				f->parked = 1;
				return 0;
			}
			f->ip = b->start + b->len;
			break;
		default: /* NONE: a cut block, go on */
			f->ip = b->start + b->len;
			break;
		}
		if (unlikely(++n > LOOP_CHECK_AFTER)) {
			if (n == LOOP_CHECK_AFTER + 1)
				f->loop_noted = 0;
			else if (f->ip == f->loop_noted ||
				 n > MAX_BLOCKS_PER_ADVANCE)
				return -STRACE_E_LOOP;
			if (!(n & (n - 1)))
				f->loop_noted = f->ip;
		}
	}
}

/* --- what flow.c does ----------------------------------------------------- */

/* strace_dec_error_event() - an error event: code at the walker's ip (0
 * when it has none) and the packet's offset. */
void strace_dec_error_event(struct strace_walker *w, int code);

/* strace_dec_psb_after_ip_sync() - a PSB after the walk resumed at an IP
 * packet (walk.c): it begins afresh there (trace_begin at the PSB+'s FUP,
 * reason sync), as a decode of the pieces between PSBs does (a piece
 * cannot know that the one before resumed at an IP). */
void strace_dec_psb_after_ip_sync(struct strace_walker *w);

/* strace_dec_psb_in_psb_plus() - a PSB while a PSB+ is still open (no
 * PSBEND, no OVF since its PSB): a CPU ends every PSB+, so trace was lost
 * after that PSB+'s start, and the walk lost its place. A desync there
 * (an error without IP, as a seam of the parallel decode, which cannot
 * know the walk's place, gives it), then the walk goes on from this PSB
 * as after a resync. */
void strace_dec_psb_in_psb_plus(struct strace_walker *w);

/* strace_dec_fail() - report the decode error code and drop sync: the
 * caller resumes at the next PSB. Returns -code. */
int strace_dec_fail(struct strace_walker *w, int code);

/* strace_dec_off() - a TNT, TIP, TIP.PGD or FUP while tracing is off:
 * after a TIP.PGD or a PSB+ without FUP the hardware sends none of them
 * until a TIP.PGE (libipt: -pte_no_enable, -pte_bad_context), so the
 * trace was damaged there. While an overflow is not resolved yet the
 * walker cannot tell (its FUP may be missing, SKD010, or an extra
 * TIP.PGD follow it, APL11): nothing to follow. Returns 0, or -code
 * after the error. */
int strace_dec_off(struct strace_walker *w);

/* strace_dec_tnt_bit() - one TNT bit, walked (no cache). Stops with
 * flow.deferring set, the bit unused, at an indirect branch that waits
 * for a deferred TIP. Returns 0 or -code. */
int strace_dec_tnt_bit(struct strace_walker *w, int taken);

/* strace_dec_tnt_record() - walk c bits (chunk's low c, the first the
 * highest) from where the walker stands, recording it; keep the record
 * (under key) when it is whole. Returns the bits used (fewer than c after
 * a return that popped an address pushed before the run, or at a
 * deferred TIP), or -code of the bit that failed. */
int strace_dec_tnt_record(struct strace_walker *w, unsigned chunk, int c,
			  unsigned key);

/* strace_dec_begin() - tracing is on at ip: trace_begin (or sysret, or
 * overflow + trace_begin) for reason. */
void strace_dec_begin(struct strace_walker *w, uint64_t ip, int reason);

/* strace_dec_tsx_fup() - a MODE.TSX outside PSB+, the packet after it at
 * next: its FUP must come before any branch packet, else the trace lost or
 * mangled packets there. Returns 0, or -code after the error event. */
int strace_dec_tsx_fup(struct strace_walker *w, size_t next);

/* strace_dec_bdm64_target() - BDM64: the target of the TIP ending at next
 * (to), or where the TSX abort after it happened when its FUP cannot be
 * reached from to. */
uint64_t strace_dec_bdm64_target(struct strace_walker *w, uint64_t to,
				 size_t next);

/* strace_dec_pge(), strace_dec_pgd(), strace_dec_fup() - a TIP.PGE,
 * TIP.PGD or FUP at ip (suppressed: without IP); next: the offset after
 * the packet. strace_dec_fup() returns 1 when the FUP is to be ignored
 * altogether (its IP does not even update the last IP: BDM70). Return 0
 * or -code. */
int strace_dec_pge(struct strace_walker *w, uint64_t to, int suppressed);
int strace_dec_pgd(struct strace_walker *w, uint64_t to, int suppressed);
int strace_dec_fup(struct strace_walker *w, uint64_t ip, int suppressed,
		   size_t next);

/* strace_dec_overflow() - an OVF packet at the packet offset. */
void strace_dec_overflow(struct strace_walker *w);

/*
 * PEBS-via-PT (packet.h; the blocks' packet loop is loop.h's
 * pebs_blocks()): strace_dec_pebs_bbp() - a BBP opens a block of type
 * type (first: and a record, no block was open); strace_dec_pebs_bip() -
 * the block's item id is value; strace_dec_pebs_bep() - a BEP at in.pos
 * (ip_bit: its IP bit), next the offset after it, ends the record. With
 * its IP bit and a FUP right after it, the FUP says where the record was
 * taken and the record's events come there (strace_dec_fup()); else they
 * come now, at the walk's address. None of them moves the flow. The
 * events (pebs, then a pebs_item per item) only with STRACE_WALK_PEBS.
 */
void strace_dec_pebs_bbp(struct strace_walker *w, unsigned type, int first);
void strace_dec_pebs_bip(struct strace_walker *w, unsigned id,
			 uint64_t value);
void strace_dec_pebs_bep(struct strace_walker *w, int ip_bit, size_t next);

/*
 * strace_dec_event_packet() - a CFE, EVD or TRIG (packet.h's PKT_CFE,
 * PKT_EVD, PKT_TRIG: event trace and trigger tracing), as libipt HEAD's
 * event decoder binds them: one with its IP bit makes the FUP after it
 * say where the event happened (a location, not an asynchronous
 * branch's source; also while tracing is off); an EVD waits for the CFE
 * it describes. None moves the flow otherwise: the far branches a
 * CFE.IRET, INTR, ... describes are the FUP and TIP packets around it.
 * Returns 0, or -code after the error of what libipt rejects: an EVD
 * or CFE that does not fit the EVDs before it (desync, libipt's
 * -pte_bad_context), a CFE.RSM or SIPI with its IP bit, a TRIG with its
 * IP bit and no ICNT of 0, a TRIG with an ICNT while tracing is off
 * (bad_packet, -pte_bad_packet).
 */
struct pkt;
int strace_dec_event_packet(struct strace_walker *w, const struct pkt *p);

/* strace_dec_ptw_bound() - the FUP right after a PTW with its IP bit,
 * met where the packet loop does not read it (walk.c's resync scan): the
 * ptwrite's event at ip (has_ip 0: a FUP without one), and the FUP bound
 * no more. Nothing when no PTW waits for it. */
void strace_dec_ptw_bound(struct strace_walker *w, uint64_t ip, int has_ip);

/* strace_dec_other_packet() - what a packet libipt decoded (not parsed
 * inline: TMA, PIP, VMCS, MNT, PTW, EXSTOP, MWAIT, PWRE, PWRX, STOP, ...)
 * does to the flow and the time. Returns 0, or -code after the error of
 * a TMA out of place (none or two after a TSC: libipt's
 * -pte_bad_context). */
int strace_dec_other_packet(struct strace_walker *w,
			    const struct pt_packet *p);

/* --- TNT ----------------------------------------------------------------- */

/* The low n bits set (n <= 64). */
static inline uint64_t low_bits(unsigned n)
{
	return n < 64 ? (1ull << n) - 1 : ~0ull;
}

/* The TNT packet of the queue q that holds its bit k, and its offset. */
static inline unsigned tntq_packet(const struct walk_tntq *q, unsigned k)
{
	unsigned j = 0;

	while (j + 1 < q->np && q->end[j] <= k)
		j++;
	return j;
}

static inline size_t tntq_pos(const struct walk_tntq *q, unsigned k)
{
	return q->pos[tntq_packet(q, k)];
}

/* A replayed event's flags, from its item x as emit() decides them: adv
 * (the segment's advance mark) on the walk to a bit, else TIME_EXACT if a
 * timing packet came since the last resolved branch; *b its b, a TC_DYN
 * return's the address it pops (*to). Returns the flags, or -1 when the
 * stack is empty there. */
static inline __attribute__((always_inline)) int
tc_item_event(struct strace_walker *w, const struct tc_item *x, unsigned adv,
	      uint64_t *to, uint64_t *b)
{
	int flags = x->flags;

	*b = x->b;
	if (x->cls == TC_ADV)
		return flags | (int)adv;
	if (unlikely(x->cls == TC_DYN)) {
		if (flow_pop(w, to))
			return -1;
		*b = *to;
	}
	if (w->time.time_exact)
		flags |= STRACE_F_TIME_EXACT;
	w->time.time_exact = 0;
	return flags;
}

/* The items it[k] to it[n - 1] of a record, in place: the events
 * resolved by its bits (TC_RES, TC_ADV, TC_DYN), all at time now, which
 * the spreader (or a segment's worker) holds in an open interval at now,
 * with room for them (no stop among them): stored straight into its
 * arrays from d and di on, as put_event() and spread_put() (vec_put())
 * would: the same fields, counts and flags, without their tests per
 * event. Returns how many: fewer than n - k when a TC_DYN return found
 * the stack empty (what was stored before it stays, as put_event() leaves
 * it). */
static inline __attribute__((always_inline)) unsigned
tc_replay_held(struct strace_walker *w, struct strace_event *d, uint64_t *di,
	       const struct tc_item *it, unsigned k, unsigned n, uint64_t now,
	       uint64_t ins0, uint64_t *to)
{
	unsigned from = k, adv = w->seg.adv_mark, tid = w->o.tid;

	for (; k < n; k++, d++, di++) {
		uint64_t b;
		int flags = tc_item_event(w, &it[k], adv, to, &b);

		if (flags < 0)
			break;
		d->type = it[k].type;
		d->flags = (uint16_t)flags;
		d->tid = tid;
		d->time = now;
		d->a = it[k].a;
		d->b = b;
		*di = ins0 + it[k].insn_off;
	}
	w->out.events += k - from;
	w->st.events += k - from;
	return k - from;
}

/* The events it[k] to it[n - 1] of a record's segment (its TC_PRE ones
 * put before), at time now. Returns 0, or -1 when a TC_DYN return found
 * the stack empty. */
static inline __attribute__((always_inline)) int
tc_replay_events(struct strace_walker *w, const struct tc_slot *e,
		 const struct tc_item *it, unsigned k, unsigned n, uint64_t now,
		 uint64_t ins0, uint64_t *to)
{
	struct strace_dec_spread *s = &w->out.sp;
	struct evvec *v = w->o.emit_arg;
	unsigned c;

	if (WALK_VEC) {
		if (k < n && !w->out.sink_err && !(e->flags & TCS_STOPS) &&
		    (v->sp.open ? v->sp.t0 == now : !v->sp.on) &&
		    v->cap - v->n >= n - k) {
			c = tc_replay_held(w, &v->v[v->n], &v->ins[v->n], it,
					   k, n, now, ins0, to);
			v->n += c;
			/* as seg_sp_event() holds each */
			if (v->sp.open && v->n - v->sp.held > SPREAD_MAX)
				v->sp.ok = 0;
			return c < n - k ? -1 : 0;
		}
	} else if (k < n && w->out.to == OUT_SPREAD && !w->out.sink_err &&
		   s->open && s->t0 == now && !(e->flags & TCS_STOPS) &&
		   s->lim - s->n >= n - k && !w->out.filter) {
		c = tc_replay_held(w, &s->ev[s->n], &s->ins[s->n], it, k, n,
				   now, ins0, to);
		s->n += c;
		return c < n - k ? -1 : 0;
	}
	for (; k < n; k++) {
		uint64_t b;
		int flags = tc_item_event(w, &it[k], w->seg.adv_mark, to, &b);

		if (flags < 0)
			return -1;
		put_event(w, it[k].type, flags, now, it[k].a, b,
			  ins0 + it[k].insn_off);
	}
	return 0;
}

/* A segment's stack operations, it[0] to it[n - 1]. */
static inline void tc_replay_ops(struct strace_walker *w,
				 const struct tc_item *it, unsigned n)
{
	uint64_t to;

	for (unsigned k = 0; k < n; k++) {
		if (it[k].a)
			flow_push(w, it[k].a);
		else
			flow_pop(w, &to);
	}
}

/* Do what the record e says, as strace_dec_tnt_record() walked it; now:
 * the time of this packet's branches (time_now()). A record of several
 * segments (TCS_MORE) goes on past each segment's last return while it
 * pops the address the walk popped; otherwise it stops there, with the
 * bits used so far. Returns the bits used, or -code (a return of e found
 * the stack empty). */
static inline __attribute__((always_inline)) int
tc_replay(struct strace_walker *w, const struct tc_slot *e, uint64_t now)
{
	const struct tc_item *it = &w->tnt.tc->item[e->first];
	unsigned k, n = e->nev, more = e->flags & TCS_MORE;
	uint64_t to = 0, t_pre; /* a TC_DYN event sets it */
	uint64_t ins0 = w->st.insns; /* + each item's insn_off */
	const struct tc_item *m = NULL; /* the end of the segment replayed,
					 * NULL for the last (e says) */

	if (e->nops) /* (most records push and pop nothing) */
		tc_replay_ops(w, it + n, e->nops);
	/* as emit() times them: the walk on to the first bit keeps the time
	 * of the branch resolved before; the rest take this packet's, the
	 * first bit's branch being the time point (time_point()) */
	k = 0;
	if (unlikely(e->npre)) {
		t_pre = w->time.adv_time;
		for (; k < e->npre; k++)
			put_event(w, it[k].type, it[k].flags | w->seg.adv_mark,
				  t_pre, it[k].a, it[k].b,
				  ins0 + it[k].insn_off);
	}
	time_point_at(w, now, ins0 + e->res_off);
	if (unlikely(more)) {
		unsigned nops = e->nops;
		for (;;) {
			/* the segment's end: where its return went, and the
			 * walk's counts there */
			m = &it[n + nops];
			if (tc_replay_events(w, e, it, k, n, now, ins0, &to) <
			    0)
				goto empty;
			if (to != m[0].a) {
				/* elsewhere than the walk went: stop here */
				w->flow.ip = to;
				w->flow.parked = 0;
				w->st.branches += (uint32_t)m[1].a;
				w->st.insns += (uint32_t)m[1].b;
				return m[0].insn_off;
			}
			more = m[1].type;
			n = m[0].type;
			nops = m[0].flags;
			it = m + 2;
			k = 0;
			tc_replay_ops(w, it + n, nops);
			if (!more)
				break;
		}
		m = NULL;
	}
	if (tc_replay_events(w, e, it, k, n, now, ins0, &to) < 0)
		goto empty;
	w->flow.ip = e->outer ? to : e->end_ip;
	w->flow.parked = 0;
	w->st.branches += e->branches;
	w->st.insns += e->insns;
	return e->nbits;
empty:
	/* a deep recursion before the run emptied the stack: the walk
	 * failed here, at the segment's return, the last bit it used */
	w->in.pos = tntq_pos(&w->tnt.q, w->tnt.q.done +
					       (m ? m[0].insn_off : e->nbits) -
					       1);
	w->flow.ip = m ? m[0].b : e->end_ip;
	w->st.branches += (m ? (uint32_t)m[1].a : e->branches) - 1;
	w->st.insns += m ? (uint32_t)m[1].b : e->insns;
	return strace_dec_fail(w, STRACE_E_RETCOMP);
}

/* The walk stopped at an indirect branch with bit k of the queue next:
 * the bits left of that packet are for after its deferred TIP (SDM: TNT
 * may precede a deferred TIP); a later packet's bits are walked as they
 * come. Returns the bits of the queue walked or kept. */
static inline unsigned tntq_defer(struct strace_walker *w, unsigned k)
{
	struct walk_tntq *q = &w->tnt.q;
	unsigned j = tntq_packet(q, k), n = q->end[j] - k;

	w->flow.deferring = 0;
	w->flow.dtnt_bits = (q->bits >> (q->n - q->end[j])) & low_bits(n);
	w->flow.dtnt_n = (int)n;
	return q->end[j];
}

/* The first k bits of the queue are walked: the rest stays. */
static inline void tntq_drop(struct walk_tntq *q, unsigned k)
{
	unsigned j = 0, i;

	q->n -= k;
	q->bits &= low_bits(q->n);
	if (!q->n) {
		q->np = 0;
		return;
	}
	while (q->end[j] <= k)
		j++;
	for (i = 0; j < q->np; i++, j++) {
		q->end[i] = (uint8_t)(q->end[j] - k);
		q->pos[i] = q->pos[j];
	}
	q->np = i;
}

/* Walk the first lim bits of the TNT queue (w->tnt.q), through the run
 * cache unless STRACE_WALK_BIT_BY_BIT (or no memory for it), as the
 * packets they came in would be walked one after the other. Returns 0 or
 * -code (the queue is empty then: lose_sync()). */
static inline int tnt_run(struct strace_walker *w, unsigned lim)
{
	struct walk_tntq *q = &w->tnt.q;
	uint64_t now = 0; /* this packet's time, once asked */
	int now_known = 0;
	unsigned done = 0;

	if (unlikely(!w->tnt.tc) && !(w->o.flags & STRACE_WALK_BIT_BY_BIT))
		w->tnt.tc = strace_dec_tc_new();
	while (done < lim) {
		int c = lim - done < TC_BITS ? (int)(lim - done) : TC_BITS;
		int used;
		unsigned chunk, key;
		struct tc_slot *e;

		if (!w->flow.have_ip || !w->flow.enabled) {
			/* tracing is off: nothing to walk (after an overflow)
			 * or an error */
			int err;

			w->in.pos = tntq_pos(q, done);
			err = strace_dec_off(w);
			if (err)
				return err;
			done = lim;
			break;
		}
		chunk = (unsigned)(q->bits >> (q->n - done - (unsigned)c)) &
			((1u << c) - 1);
		q->done = done;
		if (unlikely(!w->tnt.tc)) {
			/* asked for, or no memory for the cache */
			w->in.pos = tntq_pos(q, done);
			used = strace_dec_tnt_bit(w, (int)(chunk >> (c - 1)) & 1);
			if (used == 0 && !w->flow.deferring)
				used = 1;
			goto walked;
		}
		/* (the mode in bits 29 and 30: a run is walked in one) */
		key = chunk | (unsigned)c << TC_BITS |
		      w->flow.mode << (TC_BITS + 5) |
		      (unsigned)w->flow.parked << 31;
		e = tc_find(w->tnt.tc, w->flow.ip, key);
		if (likely(e != NULL)) {
			/* the time changes per timing packet, which ends the
			 * queue: asked once (time_now() keeps its answer) */
			if (!now_known) {
				now = time_now(&w->time, &w->o);
				now_known = 1;
			}
			used = tc_replay(w, e, now);
		} else {
			used = strace_dec_tnt_record(w, chunk, c, key);

		}
	walked:
		if (used < 0)
			return used;
		done += (unsigned)used;
		if (unlikely(w->flow.deferring)) {
			done = tntq_defer(w, done);
			if (done > lim)
				lim = done;
		}
	}
	tntq_drop(q, done);
	return 0;
}

/* The TNT bits that came before a deferred TIP, at the TIP (the queue is
 * empty: it was walked before the TIP): walked as one packet. */
static inline int tnt_take_deferred(struct strace_walker *w, uint64_t bits,
				    unsigned n)
{
	struct walk_tntq *q = &w->tnt.q;

	q->bits = bits;
	q->n = n;
	q->np = 1;
	q->end[0] = (uint8_t)n;
	q->pos[0] = w->in.pos;
	return tnt_run(w, n);
}

/* Walk the whole TNT queue: another packet comes. Returns 0 or -code. */
static inline int tnt_flush(struct strace_walker *w)
{
	return w->tnt.q.n ? tnt_run(w, w->tnt.q.n) : 0;
}

/* A TNT packet at pos: n bits (bits' low n, the first the highest), to
 * the queue; when the next short TNT might not fit, the records' worth of
 * bits in it (TC_BITS each) are walked; without the run cache, all of
 * them. Returns 0 or -code. */
static inline int tnt_take(struct strace_walker *w, uint64_t bits, unsigned n,
			   size_t pos)
{
	struct walk_tntq *q = &w->tnt.q;
	int err;

	if (unlikely(q->n + n > 64) && (err = tnt_flush(w)) != 0)
		return err;
	q->bits = n < 64 ? q->bits << n | bits : bits;
	q->n += n;
	q->end[q->np] = (uint8_t)q->n;
	q->pos[q->np++] = pos;
	if (likely(w->tnt.tc != NULL)) {
		/* (walked when the next short TNT might not fit: fewer
		 * walks of part of the queue) */
		if (q->n <= 64 - 6)
			return 0;
		return tnt_run(w, q->n - q->n % TC_BITS);
	}
	return tnt_flush(w);
}

/* --- TIP ----------------------------------------------------------------- */

/* The indirect branch parked at (b, instruction at term) goes to `to`:
 * its event. Returns 0, or -1 if b is not such a branch. */
static inline int indirect_branch(struct strace_walker *w,
				  const struct strace_block *b, uint64_t term,
				  uint64_t to)
{
	if (unlikely(b->flags & STRACE_BF_OCAML_RAISE) &&
	    (b->kind == STRACE_BK_RET || b->kind == STRACE_BK_JMP_IND))
		ocaml_raise(w, term, to);
	switch (b->kind) {
	case STRACE_BK_CALL_IND:
		flow_push(w, b->start + b->len);
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

/* A TIP (not PGE/PGD) to `to` (suppressed: without IP), ending at next:
 * the target of the indirect branch we stand at, or of the asynchronous
 * branch a FUP announced. Returns 0 or -code. */
static inline int tip(struct strace_walker *w, uint64_t to, int suppressed,
		      size_t next)
{
	struct walk_flow *f = &w->flow;
	const struct strace_block *b;
	int err;

	if (f->pending_fup) {
		/* asynchronous branch: interrupt, signal, fault, TSX abort */
		unsigned fl = STRACE_F_ASYNC |
			      (f->pending_abort ? STRACE_F_TX_ABORT : 0);

		mode_at_branch(w);
		f->pending_fup = f->pending_abort = 0;
		if (suppressed)
			return strace_dec_fail(w, STRACE_E_NOIP);
		if (f->dtnt_n) /* the deferred TIP never came */
			return strace_dec_fail(w, STRACE_E_NOTIP);
		emit(w, STRACE_EV_INTERRUPT, fl, f->fup_ip, to);
		f->ip = to;
		f->parked = 0;
		w->st.branches++;
		time_point(w);
		return 0;
	}
	if (!f->have_ip || !f->enabled) {
		mode_at_branch(w);
		/* SKD010: the FUP after an overflow may be missing; a TIP
		 * says tracing is on, and where it goes on */
		if (f->pending_ovf && !suppressed &&
		    (f->errata & STRACE_ERRATUM_SKD010)) {
			strace_dec_begin(w, to, STRACE_REASON_OVERFLOW);
			return 0;
		}
		return strace_dec_off(w);
	}
	if (suppressed)
		return strace_dec_fail(w, STRACE_E_NOIP);
	err = advance(w, 0, 0);
	if (err)
		return strace_dec_fail(w, -err);
	/* (a far branch: its MODE.Exec's mode holds at the target) */
	mode_at_branch(w);
	if (unlikely(f->in_tsx) && (f->errata & STRACE_ERRATUM_BDM64)) {
		/* last_ip stays the TIP's */
		to = strace_dec_bdm64_target(w, to, next);
	}
	b = &f->park;
	f->parked = 0;
	if (indirect_branch(w, b, b->start + b->len - b->term_len, to) < 0) {
		/* a conditional branch wanted a TNT bit */
		f->parked = 1;
		return strace_dec_fail(w, STRACE_E_NOTNT);
	}
	f->ip = to;
	time_point(w);
	if (f->dtnt_n) {
		/* the TNT bits that came before this deferred TIP */
		int n = f->dtnt_n;

		f->dtnt_n = 0;
		return tnt_take_deferred(w, f->dtnt_bits, (unsigned)n);
	}
	return 0;
}

/* --- PSB+ and MODE ------------------------------------------------------ */

/* A PSB: a PSB+ starts. SDM 36.2.1.2: only returns to calls made since
 * the last PSB are compressed; so each PSB starts an empty stack, and a
 * segment cut at a PSB decodes on its own. */
static inline void flow_psb(struct strace_walker *w)
{
	/* a PSB ends a PEBS-via-PT record (one it cuts is dropped), and
	 * what an event packet before it waits for (a FUP in PSB+ is its
	 * own; a decode of the pieces between PSBs, -j, cannot know it) */
	w->pebs.open = 0;
	w->flow.fup_event = 0;
	w->flow.evd = 0;
	w->flow.in_psb = 1;
	w->flow.psb_synced = w->flow.have_ip && w->flow.enabled;
	w->seg.psbs++;
	w->flow.psb_fup = 0;
	retstack_clear(&w->flow.rs);
}

/* A PSBEND: a PSB+ without a FUP says tracing is off here (in sync or
 * not: strace_dec_fup() takes a PSB+ FUP with no TIP.PGE since as
 * damage). */
static inline void flow_psbend(struct strace_walker *w)
{
	if (w->flow.in_psb && !w->flow.psb_fup) {
		w->flow.psb_off = 1;
		if (w->flow.have_ip) {
			w->flow.enabled = 0;
			w->flow.have_ip = 0;
		}
	}
	w->flow.in_psb = 0;
}

/* A MODE packet (its payload byte). MODE.Exec says the code's mode
 * (64-, 32- or 16-bit): in a PSB+ from here on; outside, it binds to the
 * TIP, TIP.PGE or TIP.PGD that follows it (the far branch that changed
 * the mode), whose target is the first code in the new mode, so no TNT
 * may come between them. MODE.TSX outside PSB+ binds to the FUP after
 * it: begin and commit only say where, an abort is an asynchronous
 * branch to the abort handler. */
static inline int flow_mode(struct strace_walker *w, uint8_t mode,
			    size_t next)
{
	if ((mode >> 5) == 0) {
		if (w->flow.in_psb) {
			unsigned m = exec_mode_of(mode);

			/* a status update: in a PSB+ met in sync it restates
			 * the mode, else the walk was in the wrong one
			 * (libipt: -pte_bad_status_update): resync */
			if (unlikely(m != w->flow.mode) && w->flow.psb_synced) {
				set_mode(w, m);
				return strace_dec_fail(w, STRACE_E_DESYNC);
			}
			set_mode(w, m);
		} else {
			w->flow.pending_mode = 1;
			w->flow.next_mode = exec_mode_of(mode);
		}
	} else if ((mode >> 5) == 1) {
		w->flow.in_tsx = mode & 1;
		/* (while tracing is off, no FUP follows) */
		if (!w->flow.in_psb && w->flow.enabled && w->flow.have_ip) {
			w->flow.fup_binds = 1;
			w->flow.tsx_abort = (mode & 2) != 0;
			return strace_dec_tsx_fup(w, next);
		}
	}
	return 0;
}

#endif
