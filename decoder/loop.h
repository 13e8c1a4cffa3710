/* SPDX-License-Identifier: MIT */
/*
 * decoder/loop.h - the fast walker's packet loop, which parses each
 * packet inline (packet.h) and hands it to the flow (flow.h) or the time
 * (timing.h). libipt's packet decoder decodes the packets the inline
 * parser does not know. Not installed.
 *
 * Compiled twice: in walk.c for a sequential decode (WALK_VEC 0), and in
 * walk_vec.c for a parallel decode's workers (WALK_VEC 1), whose events
 * go to a segment's vector (evvec.h): each copy stores its events its
 * own way, with no test per event for the other's.
 *
 * Threading: a walker belongs to one thread at a time.
 */
#ifndef DECODER_LOOP_H
#define DECODER_LOOP_H

#include "decoder/flow.h"
#include "decoder/packet.h"

/* strace_dec_run_vec() - run() of a walker whose events go to a segment's
 * vector (OUT_VEC), in walk_vec.c. */
int strace_dec_run_vec(struct strace_walker *w);

/* A packet the inline parser does not handle: libipt decodes it into *p.
 * Returns its size, or -STRACE_E_BADPKT. */
static inline int other_packet(struct strace_walker *w, struct pt_packet *p)
{
	w->st.slow_packets++;
	return strace_dec_pkt_decode(w->in.pkt, w->in.pos, p);
}

/*
 * A timing packet (TSC, MTC, CYC, CBR) into the walker's time, for the
 * loops beside the main one (PEBS-via-PT blocks, walk.c's resync scan);
 * run() keeps its own cases, in its jump table. Returns 1, 0 when p is
 * no timing packet, or -1 for a CBR of ratio 0 (libipt:
 * -pte_bad_packet), which changes nothing.
 */
static inline int time_packet(struct strace_walker *w, const struct pkt *p)
{
	switch (p->type) {
	case PKT_CYC:
		time_on_cyc(&w->time, &w->o.time, p->payload);
		return 1;
	case PKT_TSC:
		time_on_tsc(&w->time, p->payload);
		return 1;
	case PKT_MTC:
		time_on_mtc(&w->time, &w->o.time, (uint8_t)p->payload);
		return 1;
	case PKT_CBR:
		if (!p->payload)
			return -1;
		time_on_cbr(&w->time, (uint32_t)p->payload);
		return 1;
	default:
		return 0;
	}
}

/*
 * The blocks of a PEBS-via-PT record, from the BBP at i: its own packet
 * loop, so that the main one pays nothing for the blocks (inside one, a
 * byte xxxxx100b is a BIP, not the short TNT of the TNT case). It takes
 * the packets that leave a block open (pkt_blk_after(): BIPs, the BBPs of
 * further blocks, a FUP, PAD, CFE, EVD, TRIG, the timing packets, MNT,
 * EXSTOP, PWRE, PWRX), each as the main loop would where it means anything, and
 * the BEP that ends the record. A packet that ends the block otherwise
 * (a TNT, TIP, PSB, OVF, ...: the record is cut, perf drops it too) is
 * left to the main loop. Returns the offset where the main loop goes on,
 * -1 at a packet cut by the end of the buffer (the decode ends), or -code
 * after a decode error (the error event is out).
 */
static __attribute__((noinline, cold)) long
pebs_blocks(struct strace_walker *w, size_t i, int skd007)
{
	const uint8_t *buf = w->in.buf;
	size_t len = w->in.len, first = i;
	unsigned blk = 0;

	while (i < len && !w->out.sink_err) {
		struct pkt p = {0};
		unsigned after;
		int err = 0;

		if (blk && pkt_is_bip(buf[i]))
			pkt_bip(buf, len, i, blk, &p);
		else
			pkt_parse(buf, len, i, skd007, &p);
		if (p.type == PKT_END)
			return -1;
		after = pkt_blk_after(blk, &p, buf + i, len - i);
		if (!after && p.type != PKT_BEP)
			return (long)i; /* the block ends: the main loop's */
		w->in.pos = i;
		w->st.packets += i != first; /* (the loop counted the BBP) */
		switch (p.type) {
		case PKT_BBP:
			strace_dec_pebs_bbp(w, (unsigned)p.payload, !blk);
			break;
		case PKT_BIP:
			strace_dec_pebs_bip(w, p.nbits, p.payload);
			break;
		case PKT_BEP:
			strace_dec_pebs_bep(w, p.ipc, i + p.size);
			return (long)(i + p.size);
		case PKT_CYC:
		case PKT_TSC:
		case PKT_MTC:
		case PKT_CBR:
			if (time_packet(w, &p) < 0)
				return strace_dec_fail(w, STRACE_E_BADPKT);
			break;
		case PKT_FUP: {
			uint64_t prev_ip = w->in.last_ip;
			uint64_t ip = pkt_ip(prev_ip, p.ipc, p.payload);
			int supp = p.ipc == 0;

			if (!supp)
				w->in.last_ip = ip;
			err = strace_dec_fup(w, ip, supp, i + p.size);
			if (err == 1) { /* BDM70: not this FUP's IP */
				w->in.last_ip = prev_ip;
				err = 0;
			}
			break;
		}
		case PKT_BAD:
			return strace_dec_fail(w, STRACE_E_BADPKT);
		case PKT_CFE:
		case PKT_EVD:
		case PKT_TRIG:
			err = strace_dec_event_packet(w, &p);
			break;
		case PKT_OTHER: { /* TMA, MNT, EXSTOP, PWRE, PWRX */
			struct pt_packet op;
			int n = other_packet(w, &op);

			if (n == 0)
				return -1;
			if (n < 0)
				return strace_dec_fail(w, -n);
			err = strace_dec_other_packet(w, &op);
			p.size = (size_t)n;
			break;
		}
		default: /* PAD */
			break;
		}
		if (err)
			return err;
		blk = after;
		i += p.size;
	}
	return (long)i;
}

/* run()'s TIP, TIP.PGE, TIP.PGD or FUP p at i. Returns 0, -code after
 * an error (the error event is out), or a sink error. */
static inline __attribute__((always_inline)) int
ip_packet(struct strace_walker *w, const struct pkt *p, size_t i)
{
	uint64_t prev_ip = w->in.last_ip;
	uint64_t ip = pkt_ip(prev_ip, p->ipc, p->payload);
	int supp = p->ipc == 0;
	size_t next = i + p->size;
	int err;

	if (unlikely(w->flow.in_psb) && p->type != PKT_FUP)
		return strace_dec_fail(w, STRACE_E_DESYNC);
	if (!supp)
		w->in.last_ip = ip;
	if (p->type == PKT_TIP) {
		err = tip(w, ip, supp, next);
	} else if (p->type == PKT_PGE) {
		err = strace_dec_pge(w, ip, supp);
	} else if (p->type == PKT_PGD) {
		err = strace_dec_pgd(w, ip, supp);
	} else {
		err = strace_dec_fup(w, ip, supp, next);
		if (err == 1) { /* BDM70: not this FUP's IP */
			w->in.last_ip = prev_ip;
			err = 0;
		}
	}
	return err;
}

/* run()'s PSB at i: progress told now and then, the IP compression and
 * the flow reset. */
static inline __attribute__((always_inline)) void
psb_packet(struct strace_walker *w, size_t i)
{
	if (unlikely(w->o.progress != NULL) &&
	    i - w->in.prog_at >= PROGRESS_STEP) {
		w->in.prog_at = i;
		w->o.progress(w->o.progress_arg, i);
	}
	w->in.last_ip = 0;
	if (unlikely(w->in.ip_synced))
		strace_dec_psb_after_ip_sync(w);
	if (unlikely(w->flow.in_psb))
		strace_dec_psb_in_psb_plus(w);
	flow_psb(w);
}

/* Decode from a PSB at in.pos until the end or an error.
 * Returns 0 at the end of the buffer, -code after an error (the error
 * event is out; the caller resyncs), or a sink error. */
static inline int run(struct strace_walker *w)
{
	const uint8_t *buf = w->in.buf;
	size_t len = w->in.len;
	size_t i = w->in.pos;
	int skd007 = (w->flow.errata & STRACE_ERRATUM_SKD007) != 0;

	while (i < len) {
		struct pkt p;
		int err = 0;
		uint8_t b = buf[i];

		w->in.pos = i;
		w->st.packets++;
		if (w->out.sink_err)
			return w->out.sink_err;
		/* the commonest packet, a short TNT, before the parse (its
		 * case below has the rule) */
		if (pkt_is_tnt8(b) && w->tnt.tc &&
		    likely(!(w->flow.in_psb | w->flow.pending_fup |
			     w->flow.pending_mode))) {
			unsigned nbits;
			uint64_t bits = pkt_tnt8(b, &nbits);

			err = tnt_take(w, bits, nbits, i);
			if (err)
				return err;
			i++;
			continue;
		}
		pkt_parse(buf, len, i, skd007, &p);
		if (w->tnt.q.n && p.type != PKT_TNT && p.type != PKT_SKIP) {
			/* the TNT bits before this packet, walked */
			err = tnt_flush(w);
			if (err)
				return err;
			w->in.pos = i;
		}
		switch (p.type) {
		case PKT_END:
			return 0; /* truncated at the end */
		case PKT_BAD:
			return strace_dec_fail(w, STRACE_E_BADPKT);
		case PKT_SKIP:
			w->st.packets += p.size - 1; /* (a run of PADs) */
			break;
		case PKT_TNT:
			/* not in a PSB+, which holds status and timing only
			 * (libipt: -pte_bad_context), nor between a FUP or
			 * a MODE.Exec and the TIP they bind to (libipt:
			 * -pte_bad_query; perf: "Missing TIP after FUP") */
			if (unlikely(w->flow.in_psb | w->flow.pending_fup |
				     w->flow.pending_mode))
				return strace_dec_fail(w,
						       w->flow.in_psb
							       ? STRACE_E_DESYNC
							       : STRACE_E_NOTIP);
			err = tnt_take(w, p.payload, p.nbits, i);
			if (err)
				return err;
			break;
		case PKT_CYC:
			time_on_cyc(&w->time, &w->o.time, p.payload);
			break;
		case PKT_TIP:
		case PKT_PGE:
		case PKT_PGD:
		case PKT_FUP:
			err = ip_packet(w, &p, i);
			if (err)
				return err;
			break;
		case PKT_TSC:
			time_on_tsc(&w->time, p.payload);
			break;
		case PKT_MTC:
			time_on_mtc(&w->time, &w->o.time, (uint8_t)p.payload);
			break;
		case PKT_MODE:
			err = flow_mode(w, (uint8_t)p.payload, i + p.size);
			if (err)
				return err;
			break;
		case PKT_PSB:
			psb_packet(w, i);
			break;
		case PKT_PSBEND:
			flow_psbend(w);
			break;
		case PKT_CBR:
			/* (a ratio of 0: libipt -pte_bad_packet) */
			if (unlikely(!p.payload))
				return strace_dec_fail(w, STRACE_E_BADPKT);
			time_on_cbr(&w->time, (uint32_t)p.payload);
			break;
		case PKT_OVF:
			strace_dec_overflow(w);
			break;
		case PKT_BBP: { /* the blocks of a PEBS-via-PT record */
			long r = pebs_blocks(w, i, skd007);

			if (r < 0)
				return r == -1 ? 0 : (int)r;
			p.size = (size_t)r - i;
			break;
		}
		case PKT_BEP: /* (with no block before it) */
			strace_dec_pebs_bep(w, p.ipc, i + p.size);
			break;
		case PKT_CFE: /* event trace, trigger tracing (flow.c) */
		case PKT_EVD:
		case PKT_TRIG:
			err = strace_dec_event_packet(w, &p);
			if (err)
				return err;
			break;
		default: { /* PKT_OTHER */
			struct pt_packet op;
			int n = other_packet(w, &op);
			if (n == 0)
				return 0; /* a packet cut by the end */
			if (n < 0)
				return strace_dec_fail(w, -n);
			err = strace_dec_other_packet(w, &op);
			if (err)
				return err;
			p.size = (size_t)n;
			break;
		}
		}
		i += p.size;
	}
	if (w->tnt.q.n) {
		int err = tnt_flush(w);

		if (err)
			return err;
	}
	w->in.pos = len;
	return 0;
}

#endif
