/* SPDX-License-Identifier: MIT */
/*
 * decoder/ref.c - the reference decoder: libipt's block decoder (pt_blk_*)
 * over the same image, emitting the same events as the fast walker. It is
 * slow and simple on purpose: it is what the fast path is checked against.
 */
#include <errno.h>
#include <intel-pt.h>
#include <string.h>

#include "decoder/emit.h"
#include "decoder/packet.h"
#include "decoder/ref.h"
#include "decoder/spread.h"
#include "decoder/timing.h"

/*
 * libipt follows code that needs no packet (straight code, direct jumps
 * and calls) for as long as it runs: in a damaged trace, a loop of
 * direct jumps would never end. The fast walker gives up when its walk
 * without a packet comes back to an address (flow.h, LOOP_CHECK_AFTER);
 * here, when the blocks in a row that took no packet come back to one's
 * start (chain_note()): an error (STRACE_E_LOOP), then the next PSB. A
 * loop that libipt's blocks would not show that way is bounded by this
 * many instructions without the decoder moving on in the trace (it does
 * not while it uses TNT bits it fetched already).
 */
#define MAX_INSNS_STILL (1u << 22)

/* events a row of blocks without a packet may hold (more: the first
 * ones go out) */
#define REF_HELD 64
#define REF_JUMPS_LOG 6 /* jumps remembered (struct ref.js) */

struct ref {
	struct strace_image *img;
	/* the code read_mem() read last: code_len bytes at code, the
	 * image's from address code_at on */
	const uint8_t *code;
	uint64_t code_at, code_len;
	const struct strace_walk_opts *o;
	struct strace_bcache *cache;
	struct pt_block_decoder *dec;
	struct strace_walk_stats *st;
	long events;
	int sink_err;
	uint64_t last_time;
	/* the previous block's last instruction, waiting for its target */
	int pend;        /* 0 none, else enum pt_insn_class + 1 */
	uint64_t pend_ip;
	uint64_t pend_next; /* address after it */
	unsigned pend_mode; /* its code's (enum strace_code_mode) */
	int pend_ind;       /* an indirect call or jump */
	int pending_syscall;
	int begin_reason;
	int have_ip;
	uint64_t last_ip;
	/* times: direct branches found between two resolved branches keep
	 * the earlier one's time, as in the fast walker and perf */
	uint64_t adv_time;
	int in_adv, have_adv;
	/* the return addresses of calls, as the hardware's compression
	 * stack holds them: the target of a return libipt reports without
	 * its successor (before an overflow, an error, the end) */
	struct retstack rs;
	uint64_t end_at; /* where the last resolved branch went */
	const uint8_t *buf;
	size_t len;
	uint64_t ev_tsc; /* the time of the event being handled */
	int ev_has_tsc;
	int tx_abort; /* libipt reported a TSX abort: the async branch next */
	/* the PSB+ synchronised at says tracing is on here (its FUP), for
	 * an overflow that comes before libipt's first block */
	int sync_on;
	uint64_t sync_ip;
	/* an overflow that resolved with tracing off: told at the enable */
	int pending_ovf;
	uint64_t ovf_off;
	/* times between timing packets, as the fast walker spreads them;
	 * adv_ins: instructions of the block at hand up to the direct
	 * branch follow_direct() emits */
	int spread;
	struct strace_dec_spread sp;
	uint64_t adv_ins;
	/* the STRACE_BF_* of the summary block that holds the pending
	 * branch (an OCaml raise) */
	unsigned pend_flags;
	/* the block libipt's block decoder failed in: its first and last
	 * instruction (JMPABS, ERETS, ... in it, which libipt 2.0.5 does
	 * not know, name the error) */
	int have_err_ip;
	uint64_t err_ip, err_last;
	/* the offset of the last error reported, UINT64_MAX: none (one
	 * error a place: a PSB+ libipt failed to read in the flow, it tries
	 * again at its resync) */
	uint64_t err_off;
	/* the walk of one sync's blocks: blocks walked (progress every
	 * 4096), where progress was last told, and the offset libipt stood
	 * at for the last blocks with the instructions walked there (a loop
	 * without packets) */
	unsigned nblk;
	uint64_t prog_at, still_at, still_insns;
	/* blocks in a row that took no packet, and the start of one of
	 * them (chain_note()) */
	uint64_t chain, chain_ip;
	/* the events of those blocks, held until a packet vouches for them
	 * (emit(), held_end()); the counts as they were before the first */
	int holding;
	size_t nheld;
	struct held {
		struct strace_event ev;
		uint64_t at; /* instructions before it (spread_put()) */
	} held[REF_HELD];
	uint64_t held_branches, held_insns;
	struct jump_memo js[1u << REF_JUMPS_LOG]; /* jumps lately (jump()) */
};

/* After a sync at off: does its PSB+ say tracing is on, and where? A
 * FUP in it, unless a TIP.PGE follows the PSB+ (erratum BDM70: the FUP
 * came while tracing was off). */
static void sync_state(struct ref *r, uint64_t off, const struct pt_config *c)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(c);
	struct pt_packet p;
	int ended = 0;

	r->sync_on = 0;
	if (!d)
		return;
	if (pt_pkt_sync_set(d, off) >= 0) {
		for (int k = 0; k < 64 && pt_pkt_next(d, &p, sizeof(p)) > 0;
		     k++) {
			if (!ended && p.type == ppt_fup &&
			    p.payload.ip.ipc != pt_ipc_suppressed) {
				r->sync_on = 1;
				/* last IP is 0 after a PSB */
				r->sync_ip = pkt_ip_ipt(&p.payload.ip, 0);
			} else if (p.type == ppt_ovf) {
				break; /* it ends the PSB+ */
			} else if (p.type == ppt_psbend) {
				ended = 1;
			} else if (ended && p.type == ppt_tip_pge) {
				r->sync_on = 0;
				break;
			} else if (ended && p.type != ppt_pad &&
				   p.type != ppt_tsc && p.type != ppt_cbr &&
				   p.type != ppt_pip && p.type != ppt_mode &&
				   p.type != ppt_vmcs && p.type != ppt_tma &&
				   p.type != ppt_mtc && p.type != ppt_cyc &&
				   p.type != ppt_mnt) {
				break;
			}
		}
	}
	pt_pkt_free_decoder(d);
}

static int read_mem(uint8_t *buffer, size_t size, const struct pt_asid *asid,
		    uint64_t ip, void *ctx)
{
	struct ref *r = ctx;
	size_t n;

	(void)asid;
	/* an instruction's bytes at a time (sizeof(pt_insn.raw)): most
	 * where the last were (the image does not change during a
	 * decode) */
	if (ip - r->code_at >= r->code_len ||
	    size > r->code_len - (ip - r->code_at)) {
		size_t avail = 0;
		const uint8_t *p = strace_image_code(r->img, ip, &avail);

		if (!p || avail < size) {
			n = strace_image_read(r->img, ip, buffer, size);
			return n ? (int)n : -pte_nomap;
		}
		r->code = p;
		r->code_at = ip;
		r->code_len = avail;
	}
	memcpy(buffer, r->code + (ip - r->code_at), size);
	return (int)size;
}

/* ev to the sink, at instructions at */
static void put(struct ref *r, const struct strace_event *ev, uint64_t at)
{
	int err;

	if (r->sink_err)
		return;
	if (r->spread)
		err = spread_put(&r->sp, r->o, ev, at);
	else
		err = sink_put(r->o, ev);
	if (err) {
		r->sink_err = sink_error(err);
		return;
	}
	r->events++;
	r->st->events++;
}

/*
 * With libipt's blocks cut at every direct call and jump (ref_config()),
 * the direct branches on the way to the next packet end blocks of their
 * own. A packet vouches for them, as it did when they were inside the
 * block it ended: their events are held until then (held_flush()), and
 * dropped with the counts they added if the decode fails first or the
 * trace ends (held_end()), as the fast walker gives none there.
 */
static void hold_from_here(struct ref *r)
{
	r->holding = 1;
	r->held_branches = r->st->branches;
	r->held_insns = r->st->insns;
}

static void held_flush(struct ref *r)
{
	for (size_t k = 0; k < r->nheld; k++)
		put(r, &r->held[k].ev, r->held[k].at);
	r->nheld = 0;
}

static void held_end(struct ref *r, int vouched)
{
	if (!r->holding)
		return;
	if (vouched) {
		held_flush(r);
	} else {
		r->nheld = 0;
		r->st->branches = r->held_branches;
		r->st->insns = r->held_insns;
	}
	r->holding = 0;
}

/* Whether events of type go nowhere: not asked for (o->types), and no
 * spreader that counts every event (the fast walker makes none either:
 * flow.h, emit()). */
static int unwanted(const struct ref *r, unsigned type)
{
	return !r->spread && r->o->types &&
	       !strace_typeset_has(r->o->types, type);
}

static void emit(struct ref *r, unsigned type, unsigned flags, uint64_t a,
		 uint64_t b)
{
	struct strace_event ev = {0};
	uint64_t tsc = 0;
	uint32_t lm, lc;

	if (r->sink_err || unwanted(r, type))
		return;
	ev.type = (uint16_t)type;
	ev.flags = (uint16_t)flags;
	ev.tid = r->o->tid;
	if (r->in_adv && r->have_adv) {
		ev.time = r->adv_time;
	} else if (r->ev_has_tsc && r->o->has_time) {
		/* an event from libipt carries the time it happened at */
		ev.time = time_forward(&r->o->time, &r->last_time,
				       strace_tsc_to_perf_time(&r->o->time,
							       r->ev_tsc));
	} else if (r->o->has_time && pt_blk_time(r->dec, &tsc, &lm, &lc) >= 0) {
		ev.time = time_forward(&r->o->time, &r->last_time,
				       strace_tsc_to_perf_time(&r->o->time,
							       tsc));
	}
	ev.a = a;
	ev.b = b;
	if (r->holding) {
		if (r->nheld == REF_HELD) {
			held_flush(r);
			hold_from_here(r);
		}
		r->held[r->nheld].ev = ev;
		r->held[r->nheld++].at = r->st->insns + r->adv_ins;
		return;
	}
	put(r, &ev, r->st->insns + r->adv_ins);
}

static void jump(struct ref *r, uint64_t from, uint64_t to, unsigned flags)
{
	if (unwanted(r, STRACE_EV_JUMP))
		return; /* (nor its symbols looked up) */
	if (jump_kept(jump_same(r->js, REF_JUMPS_LOG, r->img, from, to),
		      r->o->flags, &flags))
		emit(r, STRACE_EV_JUMP, flags, from, to);
}

static void mark_time(struct ref *r)
{
	uint64_t tsc;
	uint32_t lm, lc;

	if (r->o->has_time && pt_blk_time(r->dec, &tsc, &lm, &lc) >= 0) {
		uint64_t last = r->last_time;

		r->adv_time = time_forward(&r->o->time, &last,
					   strace_tsc_to_perf_time(&r->o->time,
								   tsc));
		r->have_adv = 1;
	}
}

/* The summaries' mode of libipt's block mode: 64-bit but for 32- and
 * 16-bit (libipt decodes the code itself, in the mode the packets say;
 * the summaries only find the direct branches and the terminators). */
static unsigned code_mode(enum pt_exec_mode m)
{
	return m == ptem_32bit ? STRACE_MODE_32
	       : m == ptem_16bit ? STRACE_MODE_16
				  : STRACE_MODE_64;
}

/* The previous block ended in a branch; ip is where the flow went. */
static void resolve(struct ref *r, uint64_t ip)
{
	int cls = r->pend - 1;
	uint64_t dummy;

	if (!r->pend)
		return;
	r->pend = 0;
	r->end_at = ip;
	/* a direct call or jump that happens to end a libipt block needs
	 * no packet: it keeps the previous resolved branch's time */
	if (cls == ptic_call || cls == ptic_jump) {
		const struct strace_block *b =
			strace_bcache_get(r->cache, r->img,
					  strace_mode_key(r->pend_ip,
							  r->pend_mode));
		if (b->kind == STRACE_BK_CALL || b->kind == STRACE_BK_JMP)
			r->in_adv = 1;
	}
	r->st->branches++; /* taken: all but the two cases below */
	if ((r->pend_flags & STRACE_BF_OCAML_RAISE) &&
	    (cls == ptic_return || (cls == ptic_jump && r->pend_ind)))
		emit(r, STRACE_EV_EXC_RAISE, 0, r->pend_ip, ip);
	switch (cls) {
	case ptic_call:
		emit(r, STRACE_EV_CALL, r->pend_ind ? STRACE_F_INDIRECT : 0,
		     r->pend_ip, ip);
		if (call_pushes(ip, r->pend_next))
			retstack_push(&r->rs, r->pend_next);
		break;
	case ptic_return:
		emit(r, STRACE_EV_RETURN, 0, r->pend_ip, ip);
		retstack_pop(&r->rs, &dummy);
		break;
	case ptic_jump:
		jump(r, r->pend_ip, ip, r->pend_ind ? STRACE_F_INDIRECT : 0);
		break;
	case ptic_cond_jump:
		if (ip != r->pend_next)
			jump(r, r->pend_ip, ip, STRACE_F_CONDITIONAL);
		else
			r->st->branches--; /* not taken */
		break;
	case ptic_far_call:
		emit(r, STRACE_EV_SYSCALL, 0, r->pend_ip, ip);
		break;
	case ptic_far_return:
	case ptic_far_jump:
		emit(r, STRACE_EV_JUMP, STRACE_F_INDIRECT, r->pend_ip, ip);
		break;
	default:
		r->st->branches--;
		break;
	}
	if (r->in_adv) {
		r->in_adv = 0;
		return; /* no packet: the time mark stays */
	}
	mark_time(r);
}

/* A return libipt ended a block with, but whose successor it never gave
 * (an overflow, an error or the end came first): it took the address on
 * top of the stack, as a compressed return does. */
static void resolve_pending_return(struct ref *r)
{
	uint64_t to;

	if (r->pend - 1 == ptic_return && !retstack_pop(&r->rs, &to)) {
		r->pend = 0;
		r->st->branches++;
		if (r->pend_flags & STRACE_BF_OCAML_RAISE)
			emit(r, STRACE_EV_EXC_RAISE, 0, r->pend_ip, to);
		emit(r, STRACE_EV_RETURN, 0, r->pend_ip, to);
		r->last_ip = to;
		r->end_at = to;
	}
}

/* An OCaml try entered or left in the summary block b, as the fast
 * walker tells it (ocaml_traps()). */
static void ocaml_traps(struct ref *r, const struct strace_block *b)
{
	if (!(b->flags & (STRACE_BF_OCAML_PUSH | STRACE_BF_OCAML_POP)))
		return;
	unsigned type[2];
	uint64_t a[2], bb[2];
	unsigned n = ocaml_trap_events(b, type, a, bb);

	r->in_adv = 1;
	for (unsigned k = 0; k < n; k++)
		emit(r, type[k], 0, a[k], bb[k]);
	r->in_adv = 0;
}

/*
 * libipt's blocks may run through direct calls and jumps ("users are
 * expected to follow direct branches"; here they end at them:
 * ref_config()): find them with the block summaries, from the block's
 * first instruction to its last, and the OCaml tries entered and left on
 * the way; nothing without follow (the last block: no packet vouches for
 * it). Sets pend_flags.
 */
static void follow_direct(struct ref *r, const struct pt_block *blk,
			  int follow)
{
	uint64_t ip = blk->ip;
	unsigned mode = code_mode(blk->mode);
	int n = 0;

	r->pend_flags = 0;
	if (!follow)
		return;
	while (n++ < 100000) {
		const struct strace_block *b = strace_bcache_get(
			r->cache, r->img, strace_mode_key(ip, mode));
		uint64_t term;

		r->adv_ins += b->ninsn;
		ocaml_traps(r, b);
		if (blk->end_ip >= b->start && blk->end_ip < b->start + b->len) {
			r->pend_flags = b->flags;
			break;
		}
		term = b->start + b->len - b->term_len;
		switch (b->kind) {
		case STRACE_BK_CALL:
			r->in_adv = 1;
			emit(r, STRACE_EV_CALL, 0, term, b->target);
			r->in_adv = 0;
			if (call_pushes(b->target, b->start + b->len))
				retstack_push(&r->rs, b->start + b->len);
			ip = b->target;
			r->st->branches++;
			break;
		case STRACE_BK_JMP:
			r->in_adv = 1;
			jump(r, term, b->target, 0);
			r->in_adv = 0;
			ip = b->target;
			r->st->branches++;
			break;
		case STRACE_BK_NONE:
		case STRACE_BK_MOV_CR3:
			ip = b->start + b->len;
			break;
		default:
			r->adv_ins = 0;
			return; /* not ours to judge: libipt decided */
		}
	}
	r->adv_ins = 0;
}

static void begin(struct ref *r, uint64_t ip)
{
	if (r->pending_syscall) {
		emit(r, STRACE_EV_SYSRET, 0, 0, ip);
		r->pending_syscall = 0;
	} else {
		emit(r, STRACE_EV_TRACE_BEGIN, 0, ip, (uint64_t)r->begin_reason);
	}
	r->begin_reason = STRACE_REASON_ENABLE;
	r->have_ip = 1;
	r->sync_on = 0;
	r->end_at = ip;
	mark_time(r);
}

static void handle_event_timed(struct ref *r, const struct pt_event *ev,
			       uint64_t *offp);

/* Whether the last packet of the flow before trace offset upto is a TIP,
 * and *ip its target (decompressed from the last PSB before it on). */
static int tip_before(struct ref *r, uint64_t upto, uint64_t *ip)
{
	static const uint8_t psb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					0x02, 0x82, 0x02, 0x82};
	struct pt_packet_decoder *d;
	struct pt_config cfg;
	uint64_t at = upto, last = 0;
	int is_tip = 0;

	while (at >= 16 && memcmp(r->buf + at - 16, psb, 16))
		at--;
	if (at < 16)
		return 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)r->buf;
	cfg.end = (uint8_t *)(uintptr_t)r->buf + upto;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return 0;
	if (pt_pkt_sync_set(d, at - 16) < 0) {
		pt_pkt_free_decoder(d);
		return 0;
	}
	for (;;) {
		struct pt_packet p;

		if (pt_pkt_next(d, &p, sizeof(p)) <= 0)
			break;
		switch (p.type) {
		case ppt_psb:
			last = 0;
			break;
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
			if (p.payload.ip.ipc != pt_ipc_suppressed)
				last = pkt_ip_ipt(&p.payload.ip, last);
			is_tip = p.type == ppt_tip &&
				 p.payload.ip.ipc != pt_ipc_suppressed;
			*ip = last;
			break;
		case ppt_tnt_8:
		case ppt_tnt_64:
			is_tip = 0;
			break;
		default:
			break;
		}
	}
	pt_pkt_free_decoder(d);
	return is_tip;
}

/* libipt's error code as the toolkit's (the decoder's edge): where the
 * trace and the code disagree, desync, as the fast walker says it. */
static unsigned error_code(int pte)
{
	switch (pte < 0 ? -pte : pte) {
	case pte_nomap:
		return STRACE_E_NOMAP;
	case pte_bad_insn:
		return STRACE_E_BADINSN;
	case pte_noip:
		return STRACE_E_NOIP;
	case pte_retstack_empty:
		return STRACE_E_RETCOMP;
	case pte_bad_query:
	case pte_bad_context:
	case pte_bad_retcomp:
	case pte_event_ignored:
		return STRACE_E_DESYNC;
	default: /* pte_bad_opc, pte_bad_packet, pte_eos inside a packet,
		  * and what else libipt finds wrong with the packets */
		return STRACE_E_BADPKT;
	}
}

/* A decode error (code) at trace offset off: the error event, and what
 * follows it is a resync. libipt's bad opcode at PEBS-via-PT, event trace
 * and trigger packets, and its bad instruction at a branch newer than it
 * (JMPABS, UIRET), are said as what they are. */
static void decode_error(struct ref *r, unsigned code, uint64_t off)
{
	int near;

	if (code == STRACE_E_BADPKT && off < r->len &&
	    (near = strace_dec_pebs_near(r->buf, r->len, (size_t)off)))
		code = near == 1 ? STRACE_E_PEBS : STRACE_E_NEWER;
	else if (r->have_err_ip &&
		 strace_dec_newer_branch_at(r->img, r->err_ip, r->err_last))
		code = STRACE_E_NEWER;
	r->have_err_ip = 0;
	resolve_pending_return(r);
	r->err_off = off;
	emit(r, STRACE_EV_ERROR, code, r->last_ip, off);
	r->st->errors++;
	/* the damage may have carried a bogus TSC: after the resync time
	 * follows the PSB+ */
	r->last_time = 0;
	r->have_adv = 0;
	r->begin_reason = STRACE_REASON_ERROR;
}

/* An event before libipt's first block: the PSB+ synchronised at said
 * where tracing is (sync_state()), as the fast walker reports it. */
static void begin_at_sync(struct ref *r)
{
	if (!r->have_ip && r->sync_on)
		begin(r, r->sync_ip);
}

static int handle_event(struct ref *r, const struct pt_event *ev)
{
	uint64_t off = 0;

	r->ev_has_tsc = ev->has_tsc;
	r->ev_tsc = ev->tsc;
	handle_event_timed(r, ev, &off);
	r->ev_has_tsc = 0;
	return 0;
}

static void handle_event_timed(struct ref *r, const struct pt_event *ev,
			       uint64_t *offp)
{
	uint64_t off = *offp;

	switch (ev->type) {
	case ptev_enabled:
		r->pend = 0;
		if (r->pending_ovf) {
			/* the overflow resolved with tracing off */
			emit(r, STRACE_EV_OVERFLOW, 0, ev->variant.enabled.ip,
			     r->ovf_off);
			r->pending_ovf = 0;
		}
		begin(r, ev->variant.enabled.ip);
		r->last_ip = ev->variant.enabled.ip;
		break;
	case ptev_disabled:
		begin_at_sync(r);
		if (r->pend - 1 == ptic_far_call) {
			r->st->branches++;
			emit(r, STRACE_EV_SYSCALL, 0, r->pend_ip,
			     ev->ip_suppressed ? 0 : ev->variant.disabled.ip);
			r->pending_syscall = 1;
		} else {
			uint64_t at = r->pend ? r->pend_ip : r->last_ip;

			/* a branch that left the filtered range keeps its
			 * event and target */
			if (r->pend && !ev->ip_suppressed)
				resolve(r, ev->variant.disabled.ip);
			emit(r, STRACE_EV_TRACE_END, 0, at,
			     STRACE_REASON_DISABLE);
		}
		r->pend = 0;
		r->have_ip = 0;
		break;
	case ptev_async_disabled:
		begin_at_sync(r);
		/* the branch before it went where the disable hit */
		resolve(r, ev->variant.async_disabled.at);
		r->st->branches++;
		emit(r, STRACE_EV_INTERRUPT,
		     STRACE_F_ASYNC | (r->tx_abort ? STRACE_F_TX_ABORT : 0),
		     ev->variant.async_disabled.at,
		     ev->ip_suppressed ? 0 : ev->variant.async_disabled.ip);
		r->tx_abort = 0;
		r->have_ip = 0;
		break;
	case ptev_async_branch:
		begin_at_sync(r);
		resolve(r, ev->variant.async_branch.from);
		r->st->branches++;
		emit(r, STRACE_EV_INTERRUPT,
		     STRACE_F_ASYNC | (r->tx_abort ? STRACE_F_TX_ABORT : 0),
		     ev->variant.async_branch.from, ev->variant.async_branch.to);
		r->tx_abort = 0;
		r->last_ip = ev->variant.async_branch.to;
		r->end_at = ev->variant.async_branch.to;
		break;
	case ptev_ptwrite:
		/* libipt binds the payload to the ptwrite instruction: its
		 * address from the FUP, else (IP bit clear) where the block
		 * decoder stopped at it in the code */
		if (r->o->flags & STRACE_WALK_PTWRITE)
			emit(r, STRACE_EV_PTWRITE,
			     (ev->variant.ptwrite.size & STRACE_PTW_SIZE_MASK) |
				     (ev->ip_suppressed ? 0 : STRACE_PTW_IP),
			     ev->ip_suppressed ? r->last_ip
					       : ev->variant.ptwrite.ip,
			     ev->variant.ptwrite.payload);
		break;
	case ptev_tsx:
		/* an abort binds to the asynchronous branch after it */
		r->tx_abort = ev->variant.tsx.aborted;
		break;
	case ptev_overflow: {
		uint64_t to;

		begin_at_sync(r);
		pt_blk_get_offset(r->dec, &off);
		/* libipt is past the packets that follow the OVF: report
		 * the OVF packet's own offset, as the fast walker does */
		for (uint64_t k = off >= 2 ? off - 2 : 0, n = 0; n < 64 && k;
		     k--, n++) {
			if (r->buf[k] == 0x02 && r->buf[k + 1] == 0xf3) {
				off = k;
				break;
			}
		}
		/* the branch libipt gave last took the TIP just before the
		 * OVF; libipt tells its target only with the next block,
		 * which the overflow comes before */
		if (r->pend && r->pend - 1 != ptic_cond_jump &&
		    tip_before(r, off, &to))
			resolve(r, to);
		resolve_pending_return(r);
		r->pend = 0;
		retstack_clear(&r->rs);
		r->st->overflows++;
		if (!ev->ip_suppressed) {
			emit(r, STRACE_EV_OVERFLOW, 0, ev->variant.overflow.ip,
			     off);
			emit(r, STRACE_EV_TRACE_BEGIN, 0,
			     ev->variant.overflow.ip, STRACE_REASON_OVERFLOW);
			r->have_ip = 1;
		} else {
			r->have_ip = 0;
			r->pending_ovf = 1;
			r->ovf_off = off;
		}
		r->begin_reason = STRACE_REASON_OVERFLOW;
		break;
	}
	default:
		break;
	}
}

/* o.progress, PROGRESS_STEP or more after the last call (as the fast
 * walker tells it, though not at a PSB: where the block decoder is). */
static void progress(struct ref *r, uint64_t *at)
{
	uint64_t off = 0;

	if (pt_blk_get_offset(r->dec, &off) == 0 &&
	    off > *at && off - *at >= PROGRESS_STEP) {
		*at = off;
		r->o->progress(r->o->progress_arg, (size_t)off);
	}
}

/* libipt's configuration for a decode of buf (len bytes) with o: the
 * timing o says, the processor and the errata the walker works around. */
static void ref_config(const struct strace_walk_opts *o, const uint8_t *buf,
		       size_t len, struct pt_config *cfg)
{
	pt_config_init(cfg);
	cfg->begin = (uint8_t *)(uintptr_t)buf;
	cfg->end = (uint8_t *)(uintptr_t)buf + len;
	/* blocks end at direct calls and jumps, so that a loop of them in a
	 * damaged trace shows at once (chain_note()); over sections,
	 * libipt 2.0.5 follows them by recursion, a frame each
	 * (pt_blk_proceed_no_event_cached()), and such a loop overflowed
	 * the stack */
	cfg->flags.variant.block.end_on_call = 1;
	cfg->flags.variant.block.end_on_jump = 1;
	/* the period is a 4-bit field: libipt shifts by mtc_freq + 8, so a
	 * bigger one (a damaged file) would be an undefined shift there;
	 * the walker ignores MTCs then too (on_mtc()) */
	if (o->time.tsc_ctc_ratio_d && o->time.mtc_period <= 15) {
		cfg->mtc_freq = (uint8_t)o->time.mtc_period;
		cfg->nom_freq = (uint8_t)o->time.max_nonturbo_ratio;
		cfg->cpuid_0x15_eax = o->time.tsc_ctc_ratio_d;
		cfg->cpuid_0x15_ebx = o->time.tsc_ctc_ratio_n;
	}
	{
		/* the workarounds the walker applies (for a cpu libipt's
		 * table lists, libipt's own) */
		unsigned e = strace_dec_cpu_workarounds(&o->cpu);

		if (o->cpu.family) {
			cfg->cpu.vendor = pcv_intel;
			cfg->cpu.family = o->cpu.family;
			cfg->cpu.model = o->cpu.model;
			cfg->cpu.stepping = o->cpu.stepping;
		}
		cfg->errata.bdm70 = !!(e & STRACE_ERRATUM_BDM70);
		cfg->errata.bdm64 = !!(e & STRACE_ERRATUM_BDM64);
		cfg->errata.skd007 = !!(e & STRACE_ERRATUM_SKD007);
		cfg->errata.skd022 = !!(e & STRACE_ERRATUM_SKD022);
		cfg->errata.skd010 = !!(e & STRACE_ERRATUM_SKD010);
		cfg->errata.skl014 = !!(e & STRACE_ERRATUM_SKL014);
		cfg->errata.apl12 = !!(e & STRACE_ERRATUM_APL12);
		cfg->errata.apl11 = !!(e & STRACE_ERRATUM_APL11);
		cfg->errata.skl168 = !!(e & STRACE_ERRATUM_SKL168);
		cfg->errata.skz84 = !!(e & STRACE_ERRATUM_SKZ84);
	}
}

/* The class of a block's last instruction that libipt did not give
 * (ptic_error: a block it cut at 65535 instructions ends where it was;
 * its block cache, which would leave an indirect jump undecoded, is not
 * used through the read callback), from b, the summary of the block
 * that starts there: -1 if that is no branch, ptic_error for a branch of
 * another kind. */
static int near_class(const struct strace_block *b)
{
	if (b->len != b->term_len)
		return -1;
	switch (b->kind) {
	case STRACE_BK_CALL:
	case STRACE_BK_CALL_IND:
		return ptic_call;
	case STRACE_BK_JMP:
	case STRACE_BK_JMP_IND:
		return ptic_jump;
	case STRACE_BK_RET:
		return ptic_return;
	case STRACE_BK_JCC:
		return ptic_cond_jump;
	case STRACE_BK_NONE:
		return -1;
	default:
		return ptic_error;
	}
}

/*
 * A block that takes no packet (it ends in a direct call or jump, or on
 * no branch) leads to where its start alone decides: a path of such
 * blocks that comes back to a block's start goes round for ever (a
 * never-ending loop, in a damaged trace). libipt's blocks end at every
 * direct call and jump here (ref_config()); the starts of the blocks in
 * a row that took none are checked as the fast walker checks its walk
 * (flow.h): noted at each power of two of their count (Brent's cycle
 * finding), a loop when one comes back (walk_blocks()).
 */
static void chain_note(struct ref *r, uint64_t ip)
{
	uint64_t n = ++r->chain;

	if (!(n & (n - 1)))
		r->chain_ip = ip;
}

/* The blocks after a sync, status: what the sync or the last call said.
 * Returns what libipt said last (< 0 or pts_eos: the end of the sync;
 * else the sink failed, r->sink_err). */
static int walk_blocks(struct ref *r, int status)
{
	for (;;) {
		struct pt_block blk;
		struct pt_event ev;
		int cls = -1;

		if (status & pts_event_pending) {
			/* the block before an event is whole (a packet
			 * ended it) */
			held_end(r, 1);
			r->chain = 0;
		}
		while (status & pts_event_pending) {
			status = pt_blk_event(r->dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			handle_event(r, &ev);
		}
		if (status < 0 && status != -pte_eos && !r->sink_err) {
			uint64_t off = 0;

			pt_blk_get_offset(r->dec, &off);
			held_end(r, 0);
			decode_error(r, error_code(status), off);
		}
		if (status < 0 || r->sink_err)
			break;
		if (status & pts_eos)
			break;
		memset(&blk, 0, sizeof(blk));
		status = pt_blk_next(r->dec, &blk, sizeof(blk));
		if (status < 0 && status != -pte_eos) {
			uint64_t off = 0;
			pt_blk_get_offset(r->dec, &off);
			/* the block decoded before the error: its start
			 * resolves the previous branch; its direct
			 * branches are not vouched for by a packet (the
			 * fast walker does not walk them either) */
			if (blk.ninsn) {
				resolve(r, blk.ip);
				r->last_ip = blk.end_ip;
			}
			held_end(r, 0);
			r->have_err_ip = 1;
			r->err_ip = blk.ip;
			r->err_last = blk.ninsn ? blk.end_ip : blk.ip;
			decode_error(r, error_code(status), off);
			break;
		}
		if (!blk.ninsn) {
			if (status < 0)
				break;
			continue;
		}
		{
			uint64_t off = 0;
			pt_blk_get_offset(r->dec, &off);
			if (off != r->still_at) {
				r->still_at = off;
				r->still_insns = 0;
			}
			/* a never-ending loop: a chain of blocks without a
			 * packet back at a start it noted (chain_note()),
			 * or, the bound, too many instructions without one */
			r->still_insns += blk.ninsn;
			if ((r->chain && blk.ip == r->chain_ip) ||
			    r->still_insns > MAX_INSNS_STILL) {
				held_end(r, 0);
				decode_error(r, STRACE_E_LOOP, off);
				r->still_insns = 0;
				break;
			}
		}
		if (r->o->progress && !(++r->nblk & 4095))
			progress(r, &r->prog_at);
		if (!r->have_ip)
			begin(r, blk.ip);
		resolve(r, blk.ip);
		/* the last block (no trace after it): its direct
		 * branches are not vouched for by any packet, and the
		 * fast walker does not walk them either */
		follow_direct(r, &blk, !(status >= 0 && (status & pts_eos)));
		r->st->insns += blk.ninsn;
		r->last_ip = blk.end_ip;
		if (blk.iclass != ptic_other) {
			unsigned mode = code_mode(blk.mode);
			const struct strace_block *b = strace_bcache_get(
				r->cache, r->img, strace_mode_key(blk.end_ip, mode));

			cls = blk.iclass == ptic_error ? near_class(b)
						       : (int)blk.iclass;
			if (cls >= 0 && cls != ptic_error) {
				r->pend = cls + 1;
				r->pend_ip = blk.end_ip;
				r->pend_mode = mode;
				r->pend_next = blk.end_ip + b->term_len;
				r->pend_ind = b->kind == STRACE_BK_CALL_IND ||
					      b->kind == STRACE_BK_JMP_IND;
			}
		}
		/* the chain of blocks that took no packet; the last block
		 * (no trace after it) vouches for none (follow_direct()) */
		if (status >= 0 && (status & pts_eos))
			held_end(r, 0);
		if (cls == -1 ||
		    ((cls == ptic_call || cls == ptic_jump) && !r->pend_ind)) {
			chain_note(r, blk.ip);
			if (!r->holding)
				hold_from_here(r);
		} else {
			held_end(r, 1);
			r->chain = 0;
		}
		if (status < 0)
			break;
	}
	return status;
}

long strace_walker_decode_ref(struct strace_image *img,
			      const struct strace_walk_opts *o,
			      struct strace_bcache *cache, const uint8_t *buf,
			      size_t len, struct strace_walk_stats *st)
{
	struct ref r;

	memset(&r, 0, sizeof(r));
	r.img = img;
	r.o = o;
	r.cache = cache;
	r.st = st;
	r.buf = buf;
	r.len = len;
	r.begin_reason = STRACE_REASON_START;
	r.spread = o->has_time && !(o->flags & STRACE_WALK_EXACT_TIMES);
	r.sp.stop_cap = strace_dec_spread_mtc_ns(&o->time);
	r.still_at = UINT64_MAX;
	r.err_off = UINT64_MAX;
	struct pt_config cfg;
	struct pt_image *pimg;
	int status, synced = 0, tried = 0;
	uint64_t tried_at = 0; /* the last PSB whose sync failed */

	ref_config(o, buf, len, &cfg);
	r.dec = pt_blk_alloc_decoder(&cfg);
	if (!r.dec)
		return -ENOMEM;
	pimg = pt_blk_get_image(r.dec);
	pt_image_set_callback(pimg, read_mem, &r);

	for (;;) {
		status = pt_blk_sync_forward(r.dec);
		if (status < 0) {
			uint64_t soff = 0;

			/* a PSB whose PSB+ libipt cannot read: an error
			 * there (as ptxed reports it), then the next PSB */
			if (status != -pte_eos &&
			    pt_blk_get_sync_offset(r.dec, &soff) == 0 &&
			    (!tried || soff > tried_at)) {
				tried = 1;
				tried_at = soff;
				r.pend = 0;
				r.have_ip = 0;
				r.pending_ovf = 0;
				if (soff != r.err_off)
					decode_error(&r, error_code(status),
						     soff);
				continue;
			}
			if (!synced && !tried) {
				pt_blk_free_decoder(r.dec);
				return -STRACE_E_NOSYNC;
			}
			break;
		}
		synced++;
		st->syncs++;
		r.pend = 0;
		r.chain = 0;
		r.have_ip = 0;
		r.pending_ovf = 0;
		{
			uint64_t soff = 0;

			pt_blk_get_sync_offset(r.dec, &soff);
			sync_state(&r, soff, &cfg);
		}
		status = walk_blocks(&r, status);
		held_end(&r, 1); /* the end of the trace, without an error */
		if (r.sink_err)
			break;
		if (status == -pte_eos || (status >= 0 && (status & pts_eos)))
			break;
	}
	if (!r.sink_err && r.have_ip) {
		resolve_pending_return(&r);
		emit(&r, STRACE_EV_TRACE_END, 0, r.end_at,
		     STRACE_REASON_END);
	} else if (!r.sink_err && r.pending_ovf) {
		/* an overflow with nothing after it (as the walker) */
		emit(&r, STRACE_EV_OVERFLOW, 0, 0, r.ovf_off);
	}
	if (r.spread && !r.sink_err) {
		int err = strace_dec_spread_flush(&r.sp, o);
		if (err)
			r.sink_err = sink_error(err);
	}
	strace_dec_spread_free(&r.sp);
	st->bytes += len;
	pt_blk_free_decoder(r.dec);
	if (r.sink_err)
		return r.sink_err;
	return r.events;
}
