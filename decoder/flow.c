/* SPDX-License-Identifier: MIT */
/*
 * decoder/flow.c - the walker's flow off its hot path (flow.h has the
 * rest): errors, single TNT bits and the recording of TNT runs, enable
 * (TIP.PGE), disable (TIP.PGD), FUP, overflow, the packets libipt decodes,
 * and the errata that look ahead in the trace (docs/decoder.md, "Packets
 * and errata").
 */
#include "decoder/flow.h"
#include "decoder/packet.h"

static void pebs_emit(struct strace_walker *w, uint64_t at);
static void ptw_emit(struct strace_walker *w, uint64_t ip, unsigned flags);

/* --- errors -------------------------------------------------------------- */

void strace_dec_error_event(struct strace_walker *w, int code)
{
	emit(w, STRACE_EV_ERROR, (unsigned)code,
	     w->flow.have_ip ? w->flow.ip : 0, w->in.pos);
	w->st.errors++;
}

int strace_dec_fail(struct strace_walker *w, int code)
{
	if (w->seg.first_idx < 0)
		w->seg.err_before = 1;
	strace_dec_error_event(w, code);
	lose_sync(w);
	/* the walk resumes at a PSB or an IP packet: a PSB+ this error came
	 * in is over (psb_packet() would take the next PSB for one inside
	 * it) */
	w->flow.in_psb = 0;
	/* The damage may have carried a bogus TSC: after the resync, time
	 * follows the PSB+ again, even if that is earlier. */
	w->time.last_time = 0;
	w->flow.begin_reason = STRACE_REASON_ERROR;
	return -code;
}

void strace_dec_psb_after_ip_sync(struct strace_walker *w)
{
	lose_sync(w);
	w->flow.enabled = 0;
	w->flow.begin_reason = STRACE_REASON_SYNC;
	w->in.ip_synced = 0;
}

void strace_dec_psb_in_psb_plus(struct strace_walker *w)
{
	lose_sync(w); /* first: the error names no IP */
	(void)strace_dec_fail(w, STRACE_E_DESYNC);
	w->flow.enabled = 0;
	w->time.tma_ok = 0;
}

int strace_dec_insn_starts(struct strace_walker *w, uint64_t from,
			   uint64_t at)
{
	/* (one block's instructions at most: a FUP lies in the block the
	 * walk stands at) */
	while (from < at) {
		size_t avail = 0;
		const uint8_t *code = strace_image_code(w->img, from, &avail);
		int n = code ? strace_insn_length_mode(code, avail, w->flow.mode)
			     : -1;

		if (n <= 0)
			return 1;
		from += (uint64_t)n;
	}
	return from == at;
}

int strace_dec_off(struct strace_walker *w)
{
	if (w->flow.pending_ovf)
		return 0;
	return strace_dec_fail(w, STRACE_E_DESYNC);
}

/* --- TNT ---------------------------------------------------------------- */

/* A block that ends in a branch whose target a TIP gives: an indirect
 * call or jump, or a far branch (not a return: with TNT bits at hand it
 * is a compressed one). */
static int takes_tip(unsigned kind)
{
	switch (kind) {
	case STRACE_BK_CALL_IND:
	case STRACE_BK_JMP_IND:
	case STRACE_BK_SYSCALL:
	case STRACE_BK_SYSENTER:
	case STRACE_BK_INT:
	case STRACE_BK_IRET:
	case STRACE_BK_FAR:
		return 1;
	default:
		return 0;
	}
}

/* Coverage: the conditional branch at term went the way taken says. Only
 * here, where the walker takes a bit itself: a replay of a recorded TNT
 * run (tnt_cache.h) repeats a walk made here in this decode, so it has
 * nothing new to note. A small table of what was noted spares the
 * object's lock. */
static void cov_branch(struct strace_walker *w, uint64_t term, int taken)
{
	uint64_t key = term << 1 | (unsigned)taken;
	uint64_t *slot = &w->cov_seen[(key * 0x9e3779b97f4a7c15ull) >> (64 - COV_SEEN_BITS)];

	if (*slot == key)
		return;
	*slot = key;
	strace_dec_cov_branch(w->img, term,
			      taken ? STRACE_COVBRANCH_TAKEN
				    : STRACE_COVBRANCH_NOT_TAKEN);
}

int strace_dec_tnt_bit(struct strace_walker *w, int taken)
{
	struct walk_flow *f = &w->flow;
	const struct strace_block *b;
	uint64_t term, to;
	int err;

	if (!f->have_ip || !f->enabled)
		return strace_dec_off(w);
	err = advance(w, 0, 0);
	if (err)
		return strace_dec_fail(w, -err);
	b = &f->park;
	term = b->start + b->len - b->term_len;
	if (b->kind == STRACE_BK_JCC) {
		f->parked = 0;
		if (unlikely(w->cov_seen))
			cov_branch(w, term, taken);
		if (taken) {
			unsigned fl = STRACE_F_CONDITIONAL;

			if (jump_kept(b->flags & STRACE_BF_SAME_SYM, w->o.flags,
				      &fl))
				emit(w, STRACE_EV_JUMP, fl, term, b->target);
			f->ip = b->target;
			w->st.branches++;
		} else {
			f->ip = b->start + b->len; /* not taken: no event */
		}
		time_point(w);
		return 0;
	}
	if (b->kind == STRACE_BK_RET) {
		if (!taken)
			return strace_dec_fail(w, STRACE_E_DESYNC);
		if (flow_pop(w, &to))
			return strace_dec_fail(w, STRACE_E_RETCOMP);
		f->parked = 0;
		if (unlikely(b->flags & STRACE_BF_OCAML_RAISE))
			ocaml_raise(w, term, to);
		emit(w, STRACE_EV_RETURN, 0, term, to);
		f->ip = to;
		w->st.branches++;
		time_point(w);
		return 0;
	}
	if (!f->dtnt_n && takes_tip(b->kind)) {
		/* a deferred TIP: these bits are for the branches after
		 * the indirect or far one (libipt and perf defer the TIP
		 * of a syscall too); tnt_run() keeps them for tip() */
		f->deferring = 1;
		return 0;
	}
	return strace_dec_fail(w, STRACE_E_NOTIP);
}

int strace_dec_tnt_record(struct strace_walker *w, unsigned chunk, int c,
			  unsigned key)
{
	struct tcache *t = w->tnt.tc;
	struct tc_rec *r = &t->rec;
	uint64_t ip0 = w->flow.ip, br0 = w->st.branches, in0 = w->st.insns;
	int k = 0, err = 0;

	tc_rec_start(r, in0);
	w->tnt.rec = r;
	while (k < c) {
		/* (an error is told at the packet of its bit) */
		w->in.pos = tntq_pos(&w->tnt.q, w->tnt.q.done + (unsigned)k);
		err = strace_dec_tnt_bit(w, (int)(chunk >> (c - 1 - k)) & 1);
		if (w->flow.deferring) {
			w->tnt.rec = NULL;
			return k; /* not kept: it ends at a deferred TIP */
		}
		k++;
		if (err)
			break;
		if (!r->bits_done) {
			r->res_off = (uint32_t)(w->st.insns - in0);
			if (w->st.insns - in0 > UINT16_MAX)
				r->full = 1;
		}
		r->bits_done = 1;
		/* a return popped an address from before the run: a segment
		 * ends, and the record goes on while bits are left */
		if (r->outer &&
		    (k == c || tc_rec_segment(r, w->flow.ip, w->flow.park.start,
					      (unsigned)k, w->st.branches - br0,
					      w->st.insns - in0) < 0))
			break;
	}
	w->tnt.rec = NULL;
	if (err)
		return err;
	if (r->full || !w->flow.have_ip || w->out.sink_err)
		return k; /* not whole: events the sink refused are not in it */
	strace_dec_tc_keep(t, ip0, key, k,
			   r->outer ? w->flow.park.start : w->flow.ip,
			   w->st.branches - br0, w->st.insns - in0);
	return k;
}

/* --- looking ahead (errata) --------------------------------------------- */

/* BDM70: a PSB+ before a TIP.PGE may hold a FUP (and MODE.Exec) although
 * tracing is off. True when the FUP ending at next is one: only status,
 * timing and PSBEND stand between it and a TIP.PGE. */
static int bdm70_fup(struct strace_walker *w, size_t next)
{
	struct pt_packet p;

	return strace_dec_pkt_peek(
		       w->in.pkt, next,
		       PKT_MASK(ppt_pad) | PKT_MASK(ppt_tsc) |
			       PKT_MASK(ppt_cbr) | PKT_MASK(ppt_psbend) |
			       PKT_MASK(ppt_pip) | PKT_MASK(ppt_mode) |
			       PKT_MASK(ppt_vmcs) | PKT_MASK(ppt_tma) |
			       PKT_MASK(ppt_mtc) | PKT_MASK(ppt_cyc) |
			       PKT_MASK(ppt_mnt),
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

	if (strace_dec_pkt_peek(
		    w->in.pkt, next,
		    ~(PKT_MASK(ppt_stop) | PKT_MASK(ppt_tip_pge) |
		      PKT_MASK(ppt_tnt_8) | PKT_MASK(ppt_tnt_64) |
		      PKT_MASK(ppt_tip) | PKT_MASK(ppt_tip_pgd) |
		      PKT_MASK(ppt_psb) | PKT_MASK(ppt_psbend) |
		      PKT_MASK(ppt_ovf) | PKT_MASK(ppt_invalid) |
		      PKT_MASK(ppt_unknown)),
		    &p) < 0)
		return 0;
	if (p.type == ppt_stop || p.type == ppt_tip_pge)
		return 1;
	if (p.type == ppt_psb) {
		uint64_t off;

		if (pt_pkt_get_offset(w->in.pkt, &off) < 0 ||
		    !strace_dec_psb_plus(w->in.buf, w->in.all,
					 (size_t)off - 16, &ip, &at, &has_fup))
			return 0;
		return !has_fup;
	}
	return 0;
}

/* Straight code (no branch) leads from a to b, within 256 instructions. */
static int contiguous(struct strace_walker *w, uint64_t a, uint64_t b)
{
	unsigned n = 0;

	while (n < 256) {
		const struct strace_block *k = block_at(w, a);

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
 * went where the abort happened (libipt does the same). */
uint64_t strace_dec_bdm64_target(struct strace_walker *w, uint64_t to,
				 size_t next)
{
	const uint64_t timing = PKT_MASK(ppt_pad) | PKT_MASK(ppt_tsc) |
				PKT_MASK(ppt_mtc) | PKT_MASK(ppt_cyc) |
				PKT_MASK(ppt_cbr) | PKT_MASK(ppt_tma) |
				PKT_MASK(ppt_mnt);
	struct pt_packet p;
	uint64_t off, at;

	if (strace_dec_pkt_peek(w->in.pkt, next, timing, &p) < 0 ||
	    p.type != ppt_mode || p.payload.mode.leaf != pt_mol_tsx ||
	    !p.payload.mode.bits.tsx.abrt ||
	    pt_pkt_get_offset(w->in.pkt, &off) < 0 ||
	    strace_dec_pkt_peek(w->in.pkt, (size_t)off, timing, &p) < 0 ||
	    p.type != ppt_fup || p.payload.ip.ipc == pt_ipc_suppressed)
		return to;
	at = pkt_ip_ipt(&p.payload.ip, to);
	return contiguous(w, to, at) ? to : at;
}

/* A MODE.TSX outside PSB+ binds to the FUP after it (SDM, "MODE.TSX
 * Packet": begin, commit and abort each give one); only status and timing
 * packets may come between. A branch packet first (a TIP, TNT, TIP.PGE or
 * TIP.PGD) means packets were lost or mangled there: libipt 2.0.5 stops
 * at that packet (-pte_bad_query), perf 6.1 takes it for the branch and
 * goes on. Said here, as libipt does. */
int strace_dec_tsx_fup(struct strace_walker *w, size_t next)
{
	const uint64_t branch = PKT_MASK(ppt_tip) | PKT_MASK(ppt_tip_pge) |
				PKT_MASK(ppt_tip_pgd) | PKT_MASK(ppt_tnt_8) |
				PKT_MASK(ppt_tnt_64);
	const uint64_t between = PKT_MASK(ppt_pad) | PKT_MASK(ppt_tsc) |
				 PKT_MASK(ppt_mtc) | PKT_MASK(ppt_cyc) |
				 PKT_MASK(ppt_cbr) | PKT_MASK(ppt_tma) |
				 PKT_MASK(ppt_mnt) | PKT_MASK(ppt_pip) |
				 PKT_MASK(ppt_vmcs) | PKT_MASK(ppt_mode);
	struct pt_packet p;

	/* (the end of the buffer, or a packet libipt cannot read: the
	 * decode finds out itself) */
	if (strace_dec_pkt_peek(w->in.pkt, next, between, &p) < 0 ||
	    !(PKT_MASK(p.type) & branch))
		return 0;
	return strace_dec_fail(w, STRACE_E_DESYNC);
}

/* SKD022: the instruction at ip is VMLAUNCH or VMRESUME. */
static int is_vmentry(struct strace_walker *w, uint64_t ip)
{
	uint8_t c[3];

	return strace_image_read(w->img, ip, c, 3) == 3 && c[0] == 0x0f &&
	       c[1] == 0x01 && (c[2] == 0xc2 || c[2] == 0xc3);
}

/* --- enable, disable, FUP ------------------------------------------------ */

void strace_dec_begin(struct strace_walker *w, uint64_t ip, int reason)
{
	struct walk_flow *f = &w->flow;
	int first = w->seg.first_idx < 0;

	if (first) {
		w->seg.first_idx = w->out.events;
		w->seg.first_ip = ip;
		w->seg.first_off = w->in.pos;
		w->seg.first_from_psb0 = f->in_psb && w->seg.psbs == 1;
	}
	if (f->pending_ovf) {
		emit(w, STRACE_EV_OVERFLOW, 0, ip, f->ovf_offset);
		f->pending_ovf = 0;
		reason = STRACE_REASON_OVERFLOW;
	}
	if (f->pending_syscall) {
		emit(w, STRACE_EV_SYSRET, 0, 0, ip);
		f->pending_syscall = 0;
	} else {
		emit(w, STRACE_EV_TRACE_BEGIN, 0, ip, (uint64_t)reason);
	}
	if (first) {
		w->seg.first_n = (int)(w->out.events - w->seg.first_idx);
		/* where a worker's runs may begin (until now none: an
		 * interval begun among these events keeps no run) */
		if (w->out.to == OUT_VEC)
			((struct evvec *)w->o.emit_arg)->sp.from =
				(size_t)w->out.events;
	}
	f->ip = ip;
	f->have_ip = 1;
	f->enabled = 1;
	f->parked = 0;
	f->psb_off = 0;
	f->begin_reason = STRACE_REASON_ENABLE;
	time_point(w);
}

int strace_dec_pge(struct strace_walker *w, uint64_t to, int suppressed)
{
	struct walk_flow *f = &w->flow;

	/* tracing starts at `to`, in the mode a MODE.Exec before says */
	mode_at_branch(w);
	f->pending_fup = f->pending_abort = 0;
	/* Tracing cannot be enabled while it is on, and a start with no IP
	 * loses what follows up to the next PSB (libipt: -pte_bad_context,
	 * -pte_noip). Both come of damaged trace; not in sync after an
	 * error, there is nothing more to lose. */
	if (f->enabled && f->have_ip)
		return strace_dec_fail(w, STRACE_E_DESYNC);
	if (suppressed) {
		if (f->enabled)
			return 0;
		return strace_dec_fail(w, STRACE_E_NOIP);
	}
	strace_dec_begin(w, to, f->begin_reason);
	return 0;
}

/* Tracing stops after the branch at ip (TIP.PGD). */
static void disable(struct strace_walker *w, uint64_t ip)
{
	emit(w, STRACE_EV_TRACE_END, 0, ip, STRACE_REASON_DISABLE);
	w->flow.enabled = 0;
	w->flow.have_ip = 0;
	w->flow.parked = 0;
}

/*
 * TIP.PGD: tracing stops, at the branch we stand at or at the next one
 * that can stop it. With an IP, a direct branch to that IP (the branch
 * left the filtered range) or the indirect branch we stand at, which goes
 * there: either keeps its event and target. Without, a system call, a far
 * branch, a MOV to CR3, or (SKL014) a direct branch.
 */
static int pgd(struct strace_walker *w, uint64_t to, int suppressed,
	       int mode);

int strace_dec_pgd(struct strace_walker *w, uint64_t to, int suppressed)
{
	int mode = w->flow.pending_mode, err;
	unsigned next = w->flow.next_mode;

	/* the branch that stops tracing is walked in the mode it ran in;
	 * a MODE.Exec bound to it holds after it */
	w->flow.pending_mode = 0;
	err = pgd(w, to, suppressed, mode);
	if (mode)
		set_mode(w, next);
	return err;
}

static int pgd(struct strace_walker *w, uint64_t to, int suppressed,
	       int mode)
{
	struct walk_flow *f = &w->flow;
	const struct strace_block *b;
	uint64_t term;
	int err;

	if (f->pending_fup) {
		/* asynchronous disable: an interrupt or fault into the
		 * kernel while only user space is traced, or a TSX abort
		 * to a handler outside the filter */
		unsigned fl = STRACE_F_ASYNC |
			      (f->pending_abort ? STRACE_F_TX_ABORT : 0);

		f->pending_fup = f->pending_abort = 0;
		f->dtnt_n = 0;
		if ((f->errata & STRACE_ERRATUM_SKD022) &&
		    is_vmentry(w, f->fup_ip)) {
			/* SKD022: a VM entry that clears TraceEn sends a
			 * FUP first; the disable is the VM entry's own */
			disable(w, f->fup_ip);
			return 0;
		}
		emit(w, STRACE_EV_INTERRUPT, fl, f->fup_ip,
		     suppressed ? 0 : to);
		w->st.branches++;
		f->enabled = 0;
		f->parked = 0;
		f->have_ip = 0;
		return 0;
	}
	if (!f->have_ip || !f->enabled) {
		/* tracing is off: no disable, but APL11's after an overflow,
		 * and one a MODE.Exec binds to (libipt and perf take it as
		 * the mode change's) */
		f->enabled = 0;
		return mode ? 0 : strace_dec_off(w);
	}
	if (f->dtnt_n)
		return strace_dec_fail(w, STRACE_E_NOTIP);
	f->last_direct = 0;
	err = advance(w, 0, suppressed ? PGD_NOIP : to);
	if (err == 1) { /* a direct branch to `to` */
		disable(w, f->last_direct);
		return 0;
	}
	if (err) {
		/* SKL014: the TIP.PGD of a direct branch may have no IP; the
		 * walk ran past it into code that did not run */
		if (suppressed && f->last_direct &&
		    (f->errata & STRACE_ERRATUM_SKL014) &&
		    (err == -STRACE_E_NOMAP || err == -STRACE_E_BADINSN)) {
			disable(w, f->last_direct);
			return 0;
		}
		return strace_dec_fail(w, -err);
	}
	b = &f->park;
	term = b->start + b->len - b->term_len;
	f->parked = 0;
	switch (b->kind) {
	case STRACE_BK_SYSCALL:
	case STRACE_BK_SYSENTER:
	case STRACE_BK_INT:
		emit(w, STRACE_EV_SYSCALL, 0, term, suppressed ? 0 : to);
		w->st.branches++;
		f->pending_syscall = 1;
		f->enabled = 0;
		f->have_ip = 0;
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

int strace_dec_fup(struct strace_walker *w, uint64_t ip, int suppressed,
		   size_t next)
{
	struct walk_flow *f = &w->flow;
	int binds = f->fup_binds, abort = f->tsx_abort, bep = f->bep_fup;
	int ptw = f->ptw_fup, event = f->fup_event;
	int err;

	f->fup_binds = f->tsx_abort = f->bep_fup = f->ptw_fup = 0;
	f->fup_event = 0;
	if (unlikely(f->pending_mode) && !f->in_psb) {
		/* a MODE.Exec outside PSB+ binds to the FUP that follows it
		 * (event trace: the interrupt flag changed there), as to a
		 * TIP: libipt HEAD and perf 6.1 bind it so; its mode holds
		 * from there */
		mode_at_branch(w);
		event = 1;
	}
	if (unlikely(event) && !f->pending_ovf) {
		if (!f->have_ip || !f->enabled) {
			/* where it happened: nothing to walk */
			if (bep)
				pebs_emit(w, suppressed ? 0 : ip);
			if (ptw)
				ptw_emit(w, suppressed ? 0 : ip,
					 suppressed ? 0 : STRACE_PTW_IP);
			return 0;
		}
		binds = 1;
	}
	if (suppressed) {
		/* Only a FUP that binds to a MODE.TSX, PTW, EXSTOP or BEP
		 * may leave out where it happened (libipt:
		 * -pte_ip_suppressed) */
		if (bep)
			pebs_emit(w, f->have_ip ? f->ip : 0);
		if (unlikely(ptw))
			ptw_emit(w, f->have_ip && f->enabled ? f->ip : 0, 0);
		if (binds || f->in_psb || f->pending_ovf)
			return 0;
		return strace_dec_fail(w, STRACE_E_NOIP);
	}
	if (unlikely(bep | ptw) && (!f->have_ip || !f->enabled)) {
		/* a PEBS record taken, or a ptwrite run, where tracing is
		 * off: only where it was (as perf takes a PEBS record; perf
		 * drops such a ptwrite), nothing to walk */
		if (bep)
			pebs_emit(w, ip);
		if (ptw)
			ptw_emit(w, ip, STRACE_PTW_IP);
		return 0;
	}
	if (f->in_psb) {
		if (!f->have_ip) {
			if ((f->errata & STRACE_ERRATUM_BDM70) &&
			    bdm70_fup(w, next))
				return 1;
			f->psb_fup = 1;
			if ((f->begin_reason == STRACE_REASON_ENABLE ||
			     f->psb_off) && !f->pending_ovf) {
				/* tracing is off by the trace's own account
				 * (a TIP.PGD, or a PSB+ without FUP, also
				 * before the first begin), and a PSB+ says it
				 * is on with no TIP.PGE since: a PSB+ has a
				 * FUP only while packets are sent. Damage
				 * (perf and libipt fail there too); the walk
				 * begins at the FUP, as after any error */
				strace_dec_error_event(w, STRACE_E_DESYNC);
				f->pending_syscall = 0;
				f->begin_reason = STRACE_REASON_ERROR;
			}
			strace_dec_begin(w, ip, f->begin_reason);
			return 0;
		}
		f->psb_fup = 1;
		/* the trace says where we are: check we got there. The
		 * branches walked to get there keep the previous time; those
		 * walked from here on take the PSB+'s (as perf gives them).
		 * TNT bits of a deferred TIP's that no branch took are out of
		 * step: a CPU sends every TNT bit before a PSB (libipt fails
		 * there too, perf at the branch after) */
		err = f->dtnt_n ? -STRACE_E_NOTIP : advance(w, ip, 0);
		time_point(w);
		if (err) {
			strace_dec_error_event(w, STRACE_E_DESYNC);
			f->parked = 0;
			retstack_clear(&f->rs);
			f->dtnt_n = 0;
			f->ip = ip;
		}
		return 0;
	}
	if (!f->have_ip || !f->enabled) {
		/* a FUP a PTW, EXSTOP or MWAIT binds says where it happened,
		 * also while tracing is off (libipt: ptw-fup,
		 * mwait-pwre-exstop_ip-*): nothing to walk */
		if (binds && !abort && !f->pending_ovf)
			return 0;
		if (!f->pending_ovf)
			return strace_dec_off(w);
		if ((f->errata & STRACE_ERRATUM_APL12) && apl12_fup(w, next))
			return 0; /* tracing stays off */
		/* resume after an overflow */
		strace_dec_begin(w, ip, STRACE_REASON_OVERFLOW);
		return 0;
	}
	if (f->dtnt_n)
		return strace_dec_fail(w, STRACE_E_NOTIP);
	err = advance(w, ip, 0);
	if (err) {
		/* BDM64: the TIP or TNT just before a TSX abort may be wrong;
		 * the abort's FUP says where the code was */
		if (!abort || !(f->errata & STRACE_ERRATUM_BDM64))
			return strace_dec_fail(w, -err);
		f->parked = 0;
		f->ip = ip;
	}
	if (binds && !abort) {
		/* MODE.TSX begin/commit, PTW, EXSTOP, BEP, CFE, TRIG,
		 * MODE.Exec: a location */
		if (bep)
			pebs_emit(w, ip);
		if (ptw) /* the ptwrite instruction's address (perf's and
			  * libipt's IP of the event) */
			ptw_emit(w, ip, STRACE_PTW_IP);
		return 0;
	}
	f->pending_fup = 1;
	f->pending_abort = abort;
	f->fup_ip = ip;
	return 0;
}

/* --- overflow and the other packets --------------------------------------- */

void strace_dec_overflow(struct strace_walker *w)
{
	if (w->seg.first_idx < 0) {
		w->seg.ovf_before = 1;
		w->seg.ovf_before_off = w->in.pos;
	}
	w->flow.pending_ovf = 1;
	w->flow.ovf_offset = w->in.pos;
	w->st.overflows++;
	lose_sync(w);
	w->flow.enabled = 0;
	w->flow.in_psb = 0; /* an OVF ends a PSB+ */
}

/* --- PTW ------------------------------------------------------------------ */

/* Whether the packet at next in the walker's buffer, PAD passed over, is
 * a FUP: the one a PTW or BEP with its IP bit binds (perf: "Missing FUP
 * after PTWRITE", "after BEP" when it is not). */
static int fup_follows(const struct strace_walker *w, size_t next)
{
	const uint8_t *buf = w->in.buf;
	size_t len = w->in.len;
	struct pkt q;

	while (next < len && buf[next] == 0x00)
		next++;
	if (next >= len)
		return 0;
	pkt_parse(buf, len, next, 0, &q);
	return q.type == PKT_FUP;
}

/* A ptwrite event, if asked for: ip and STRACE_PTW_IP as the caller
 * knows them. Its time is that of the flow where the ptwrite ran, as a
 * PEBS record's (pebs_emit()): the last resolved point's. */
static void ptw_emit(struct strace_walker *w, uint64_t ip, unsigned flags)
{
	if (!(w->o.flags & STRACE_WALK_PTWRITE))
		return;
	put_event(w, STRACE_EV_PTWRITE,
		  (flags | w->flow.ptw_size) | w->seg.adv_mark,
		  w->time.adv_time, ip, w->flow.ptw_payload, w->st.insns);
}

/*
 * A PTW packet (rare: off the packet loop). With its IP bit, the FUP
 * right after it (PAD may stand between) says where the ptwrite ran: a
 * location, not a branch; the event waits for it (strace_dec_fup()).
 * Without the bit, or where that FUP is missing (perf: "Missing FUP after
 * PTWRITE", and it drops the payload), the event is made at once with
 * where the flow stands. In a PSB+, which holds no PTW (perf: "Unexpected
 * packet"), it gives no event.
 */
static __attribute__((noinline, cold)) void
ptw_packet(struct strace_walker *w, const struct pt_packet_ptw *p,
	   unsigned size)
{
	struct walk_flow *f = &w->flow;
	size_t next = w->in.pos + size;
	int sz;

	w->st.ptwrites++;
	f->pending_fup = 0;
	if (p->ip)
		f->fup_binds = 1;
	if (!(w->o.flags & STRACE_WALK_PTWRITE) || f->in_psb)
		return;
	f->ptw_payload = p->payload;
	sz = pt_ptw_size(p->plc); /* (libipt reads no other PLC) */
	f->ptw_size = sz > 0 ? (unsigned)sz & STRACE_PTW_SIZE_MASK : 0;
	if (p->ip && fup_follows(w, next)) {
		f->ptw_fup = 1;
		return;
	}
	ptw_emit(w, f->have_ip && f->enabled ? f->ip : 0, 0);
}

void strace_dec_ptw_bound(struct strace_walker *w, uint64_t ip, int has_ip)
{
	struct walk_flow *f = &w->flow;
	int ptw = f->ptw_fup;

	f->ptw_fup = f->fup_binds = 0;
	if (ptw)
		ptw_emit(w, has_ip ? ip : 0, has_ip ? STRACE_PTW_IP : 0);
}

int strace_dec_other_packet(struct strace_walker *w,
			    const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_tma:
		if (strace_dec_time_on_tma(&w->time, p->payload.tma.ctc,
					   p->payload.tma.fc) < 0)
			return strace_dec_fail(w, STRACE_E_DESYNC);
		break;
	case ppt_ovf:
		strace_dec_overflow(w);
		break;
	case ppt_pip:
	case ppt_vmcs:
	case ppt_mnt:
		/* status: they may stand between an asynchronous branch's
		 * FUP and its TIP (they bind to it) */
		break;
	case ppt_ptw:
		ptw_packet(w, &p->payload.ptw, p->size);
		break;
	case ppt_invalid:
		/* SKZ84: a corrupt TMA and the bogus byte after it (libipt's
		 * packet decoder with the erratum set): no time, no flow */
		break;
	case ppt_exstop:
		/* with IP set, a FUP follows that says where it happened */
		if (p->payload.exstop.ip)
			w->flow.fup_binds = 1;
		w->flow.pending_fup = 0;
		break;
	default:
		/* MWAIT, PWRE, PWRX, STOP: nothing for the flow */
		w->flow.pending_fup = 0;
		break;
	}
	return 0;
}

/* --- event trace and trigger tracing ---------------------------------------- */

/* EVDs waiting for their CFE (walk_flow.evd) */
#define EVD_CR2 1u  /* a page fault's address: for a CFE.INTR */
#define EVD_VMXQ 2u /* a VM exit's qualification and reason: for a */
#define EVD_VMXR 4u /* CFE.VMEXIT or VMEXIT_INTR */

int strace_dec_event_packet(struct strace_walker *w, const struct pkt *p)
{
	struct walk_flow *f = &w->flow;
	unsigned evd = f->evd, ok = 0;

	if (p->type == PKT_EVD) {
		unsigned bit = p->nbits == 0   ? EVD_CR2
			       : p->nbits == 1 ? EVD_VMXQ
			       : p->nbits == 2 ? EVD_VMXR
					       : 0;

		if (!bit)
			return 0; /* an unknown type: passed over, as libipt
				   * does */
		if (evd & (bit == EVD_CR2 ? ~0u : EVD_CR2 | bit))
			return strace_dec_fail(w, STRACE_E_DESYNC);
		f->evd = evd | bit;
		return 0;
	}
	if (p->type == PKT_TRIG) {
		unsigned icntv = p->nbits & 0x40;
		unsigned icnt = (unsigned)(p->payload >> 8) & 0xffff;

		if (p->ipc ? !icntv || icnt : icnt && !f->enabled)
			return strace_dec_fail(w, STRACE_E_BADPKT);
		f->fup_event = p->ipc;
		return 0;
	}
	/* a CFE takes the EVDs before it */
	f->evd = 0;
	switch (p->nbits) {
	case PKT_CFE_INTR:
		ok = EVD_CR2;
		break;
	case PKT_CFE_VMEXIT:
	case PKT_CFE_VMEXIT_INTR:
		ok = EVD_VMXQ | EVD_VMXR;
		break;
	}
	if (evd & ~ok)
		return strace_dec_fail(w, STRACE_E_DESYNC);
	if (p->ipc &&
	    (p->nbits == PKT_CFE_RSM || p->nbits == PKT_CFE_SIPI))
		return strace_dec_fail(w, STRACE_E_BADPKT);
	f->fup_event = p->ipc;
	return 0;
}

/* --- PEBS-via-PT ------------------------------------------------------------ */

/* The record's events, if asked for: pebs (the record's IP as perf takes
 * it: the basic info's IP, else the GP registers' RIP, else at, where the
 * flow stood; its applicable counters), then one pebs_item per item kept.
 * They take the time of the flow where the record was taken, as the
 * direct branches walked there do: the last packet-resolved point's
 * (timing packets read since may belong to code after it), so no time
 * goes backwards and the spreader spreads them by their instruction
 * count with the flow's events; they leave TIME_EXACT to the next event
 * resolved by a packet. */
static void pebs_emit(struct strace_walker *w, uint64_t at)
{
	struct walk_pebs *r = &w->pebs;
	uint64_t ip = at, ip_gp = 0, counters = 0, t;
	int has_ip = 0, has_gp = 0;

	if (!r->open)
		return;
	r->open = 0;
	if (!(w->o.flags & STRACE_WALK_PEBS))
		return;
	for (unsigned k = 0; k < r->n; k++) {
		switch (r->key[k]) {
		case STRACE_PEBS_KEY(STRACE_PEBS_BASIC, 0):
			ip = r->val[k];
			has_ip = 1;
			break;
		case STRACE_PEBS_KEY(STRACE_PEBS_BASIC, 1):
			counters = r->val[k];
			break;
		case STRACE_PEBS_KEY(STRACE_PEBS_GPR, 1):
			ip_gp = r->val[k];
			has_gp = 1;
			break;
		}
	}
	if (!has_ip && has_gp)
		ip = ip_gp;
	/* (in a segment's vector, marked as an advance's events are) */
	t = w->time.adv_time;
	put_event(w, STRACE_EV_PEBS, w->seg.adv_mark, t, ip, counters,
		  w->st.insns);
	for (unsigned k = 0; k < r->n; k++)
		put_event(w, STRACE_EV_PEBS_ITEM, w->seg.adv_mark, t,
			  r->key[k], r->val[k], w->st.insns);
}

void strace_dec_pebs_bbp(struct strace_walker *w, unsigned type, int first)
{
	if (first) {
		/* a record's first block (perf: the items start afresh
		 * where no block was open) */
		w->pebs.open = 1;
		w->pebs.n = 0;
	}
	w->pebs.type = type;
}

void strace_dec_pebs_bip(struct strace_walker *w, unsigned id,
			 uint64_t value)
{
	struct walk_pebs *r = &w->pebs;

	if (r->open && r->n < PEBS_ITEMS &&
	    (w->o.flags & STRACE_WALK_PEBS)) {
		r->key[r->n] = (uint16_t)STRACE_PEBS_KEY(r->type, id);
		r->val[r->n++] = value;
	}
}

void strace_dec_pebs_bep(struct strace_walker *w, int ip_bit, size_t next)
{
	if (!w->pebs.open)
		return; /* no BBP since the last BEP, PSB or overflow */
	w->st.pebs_records++;
	/* the FUP right after it (perf: "Missing FUP after BEP" else) says
	 * where */
	if (ip_bit && fup_follows(w, next)) {
		w->flow.bep_fup = 1;
		w->flow.fup_binds = 1;
		return;
	}
	pebs_emit(w, w->flow.have_ip ? w->flow.ip : 0);
}
