/* SPDX-License-Identifier: MIT */
/*
 * decoder/walk.c - the fast walker: the decode of a range of a stream by
 * its packet loop (loop.h), with resync after an error (at the next IP
 * packet after a gap in the code, else at the next PSB); and the walker's
 * life (new, free, stats).
 *
 * libipt's packet decoder finds PSBs (initial sync and resync after an
 * error).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/loop.h"
#include "decoder/ref.h"

/* The next PSB at or after from, counted as a sync; -1 if none. */
static long next_psb(struct strace_walker *w, size_t from)
{
	long off = strace_dec_pkt_sync(w->in.pkt, w->in.buf, w->in.len, from);

	if (off >= 0)
		w->st.syncs++;
	return off;
}

/*
 * Errors after which the packets are still right, and only the walk lost
 * its way: code missing from the image (or bytes that are no
 * instruction); and, after a resume at an IP packet, a compressed return
 * whose call came before it. Where the code and the packets disagree
 * otherwise (a TNT or TIP that the code did not ask for, a packet in the
 * wrong place) the packets may be what is wrong: bytes lost or changed
 * put the packets after them out of step, and only a PSB is sure.
 */
static int gap_error(const struct strace_walker *w, int err)
{
	return err == -STRACE_E_NOMAP || err == -STRACE_E_BADINSN ||
	       (err == -STRACE_E_RETCOMP && w->in.ip_synced);
}

/* The walk has no code at ip (a TIP or a FUP the resync met): an error
 * there, as for any walk into missing code. */
static void no_code_at(struct strace_walker *w, uint64_t ip)
{
	w->flow.ip = ip;
	w->flow.have_ip = 1;
	strace_dec_fail(w, STRACE_E_NOMAP);
}

/*
 * After a gap the walk could not cross, resume as perf and libipt's
 * ptxed --resync-on-error do: at the next IP packet whose address is
 * known. Scans from the failing packet (its own IP counts), keeping the
 * last IP (for the compressed IPs after it) and the time:
 *  - a TIP begins the trace at its target (trace_begin, reason sync); if
 *    the image has no code there, that is an error of its own and the
 *    scan goes on;
 *  - a FUP that no PTW, EXSTOP, BEP, CFE, TRIG or MODE before it made a
 *    location is the source of an asynchronous branch: the trace begins
 *    there and the TIP or TIP.PGD that follows binds to it; a location
 *    FUP is like a TIP;
 *  - a TIP.PGD turns tracing off (the scan goes on); a TIP.PGE, a PSB and
 *    an OVF are left to the packet loop (*fresh: it starts there as at a
 *    PSB).
 * Returns the offset the packet loop goes on from, or -1 at the end or at
 * a packet that is none (then the next PSB).
 */
static long resync_ip(struct strace_walker *w, int *fresh)
{
	const uint8_t *buf = w->in.buf;
	size_t len = w->in.len, i = w->in.pos;
	int skd007 = (w->flow.errata & STRACE_ERRATUM_SKD007) != 0;
	int located = 0;
	unsigned blk = 0; /* inside a PEBS-via-PT block: its BIPs' size */

	*fresh = 0;
	while (i < len) {
		struct pkt p;
		struct pt_packet op;
		uint64_t ip;
		size_t avail;
		int n;

		w->in.pos = i;
		if (blk && pkt_is_bip(buf[i]))
			pkt_bip(buf, len, i, blk, &p);
		else
			pkt_parse(buf, len, i, skd007, &p);
		blk = pkt_blk_after(blk, &p, buf + i, len - i);
		switch (p.type) {
		case PKT_BEP: /* with its IP bit, a FUP follows: a location */
		case PKT_CFE:
		case PKT_TRIG:
			located = p.ipc;
			break;
		case PKT_END:
			/* (a piece's end is the next PSB: as there) */
			w->in.ip_synced = 0;
			w->in.pos = len;
			return -1;
		case PKT_BAD:
			return -1;
		case PKT_PSB:
		case PKT_OVF:
		case PKT_PGE:
			*fresh = 1;
			w->in.ip_synced = 0;
			return (long)i;
		case PKT_OTHER:
			n = other_packet(w, &op);
			if (n <= 0)
				return -1;
			if (op.type == ppt_ovf) {
				*fresh = 1;
				w->in.ip_synced = 0;
				return (long)i;
			}
			if (op.type == ppt_tma)
				strace_dec_time_on_tma(&w->time,
						       op.payload.tma.ctc,
						       op.payload.tma.fc);
			else if (op.type == ppt_ptw) {
				/* its payload is data the user asked for,
				 * whether or not the walk can follow the
				 * code around it (ptxed reports it too):
				 * at once, or at its FUP below */
				located = op.payload.ptw.ip;
				strace_dec_other_packet(w, &op);
			}
			else if (op.type == ppt_exstop)
				located = op.payload.exstop.ip;
			p.size = (size_t)n;
			break;
		case PKT_MODE:
			/* MODE.TSX: its FUP; MODE.Exec: a FUP right after it
			 * (event trace: where the interrupt flag changed; else
			 * the TIP of a far branch follows), and the code the
			 * walk resumes in (its far branch, out of sync, is
			 * past) */
			if ((p.payload >> 5) == 0)
				set_mode(w, exec_mode_of((uint8_t)p.payload));
			located = 1;
			break;
		case PKT_TSC:
		case PKT_MTC:
		case PKT_CYC:
		case PKT_CBR:
			time_packet(w, &p); /* (a CBR of 0: passed over) */
			break;
		case PKT_TIP:
		case PKT_PGD:
		case PKT_FUP: {
			int async = p.type == PKT_FUP && !located;

			located = 0;
			if (!p.ipc) {
				if (p.type == PKT_FUP)
					strace_dec_ptw_bound(w, 0, 0);
				break;
			}
			/* (the failing packet's IP is last_ip already: the
			 * same again) */
			ip = pkt_ip(w->in.last_ip, p.ipc, p.payload);
			w->in.last_ip = ip;
			if (p.type == PKT_PGD)
				break; /* off until a TIP.PGE */
			if (!async && !strace_image_code(w->img, ip, &avail)) {
				no_code_at(w, ip);
				if (p.type == PKT_FUP)
					strace_dec_ptw_bound(w, ip, 1);
				break;
			}
			w->st.syncs++;
			w->in.ip_synced = 1;
			strace_dec_begin(w, ip, STRACE_REASON_SYNC);
			if (p.type == PKT_FUP)
				strace_dec_ptw_bound(w, ip, 1);
			if (async) {
				w->flow.pending_fup = 1;
				w->flow.fup_ip = ip;
			}
			return (long)(i + p.size);
		}
		default: /* TNT, PSBEND, PAD and the rest: nothing to keep */
			break;
		}
		i += p.size;
	}
	w->in.ip_synced = 0;
	w->in.pos = len;
	return -1;
}

/* A piece of the trace that is not its last ends at a PSB (at end), the
 * next piece's: what the decode of the whole would do at that PSB
 * (psb_packet()). One that ends resumed at an IP packet begins afresh
 * there (strace_dec_psb_after_ip_sync()); one with a PSB+ still open
 * meets a PSB inside it. */
static void piece_end(struct strace_walker *w, size_t end)
{
	if (w->in.ip_synced)
		strace_dec_psb_after_ip_sync(w);
	if (w->flow.in_psb) {
		w->in.pos = end;
		strace_dec_psb_in_psb_plus(w);
	}
}

long strace_dec_decode_range(struct strace_walker *w, const uint8_t *buf,
			     size_t start, size_t end, size_t all, int emit_end,
			     int has_next_fup, uint64_t next_fup)
{
	struct walk_flow *f = &w->flow;
	struct pt_config cfg;
	long first = w->out.events, off;
	size_t lim = end; /* where a run resumed at an IP packet stops */
	int err;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + all;
	/* SKZ84: a TMA with reserved bits set is corrupt, and a bogus byte
	 * follows it: libipt's packet decoder gives both as one invalid
	 * packet, passed over */
	cfg.errata.skz84 = (f->errata & STRACE_ERRATUM_SKZ84) != 0;
	w->in.pkt = pt_pkt_alloc_decoder(&cfg);
	if (!w->in.pkt)
		return -ENOMEM;
	w->in.buf = buf;
	w->in.len = end;
	w->in.all = all;
	w->out.sink_err = 0;
	w->seg.first_idx = -1;
	w->seg.first_n = 0;
	w->seg.err_before = w->seg.ovf_before = 0;
	w->seg.ovf_at_end = 0;
	w->seg.psbs = 0;
	w->flow.in_psb = 0; /* (a PSB+ open at the end of the last call
			     * ended with its buffer: not this call's to
			     * tell) */
	w->in.prog_at = start;
	w->in.ip_synced = 0;
	if (w->blk.l0_gen != strace_image_generation(w->img)) {
		/* empty: a key no address of its slot has (block_at() hashes
		 * the address to the slot; not 0, the block at address 0) */
		for (unsigned i = 0; i < L0_SIZE; i++)
			w->blk.l0[i].ip = i == 1 ? 2 : 1;
		memset(w->blk.jsame, 0, sizeof(w->blk.jsame));
		w->blk.l0_gen = strace_image_generation(w->img);
		strace_dec_tc_flush(w->tnt.tc);
	}
	strace_dec_bcache_sync(w->blk.cache, w->img);
	off = next_psb(w, start);
	if (off < 0) {
		pt_pkt_free_decoder(w->in.pkt);
		w->in.pkt = NULL;
		return -STRACE_E_NOSYNC;
	}
	for (;;) {
		w->in.pos = (size_t)off;
		lose_sync(w);
		f->enabled = 0;
		w->time.tma_ok = 0;
		for (;;) {
			int fresh;
			long psb;

			err = w->out.to == OUT_VEC ? strace_dec_run_vec(w)
						   : run(w);
			if (w->in.len != end) {
				/* a run resumed at an IP packet stops at the
				 * next PSB and goes on there as it would have */
				w->in.len = end;
				if (!err && !w->out.sink_err) {
					w->in.pos = lim;
					continue;
				}
			}
			if (w->out.sink_err || !err || !gap_error(w, err))
				break;
			/*
			 * A gap in the code: on at the next IP packet, before
			 * the next PSB. That PSB is found by its pattern, not
			 * by the packets: where damage put them out of step,
			 * no packet is sure until there.
			 */
			psb = strace_dec_pkt_sync(w->in.pkt, buf, end,
						  w->in.pos + 1);
			lim = psb < 0 ? end : (size_t)psb;
			w->in.len = lim;
			off = resync_ip(w, &fresh);
			w->in.len = end;
			if (off < 0 && psb >= 0 && w->in.pos >= lim) {
				off = psb; /* none before it: the PSB */
				fresh = 1;
			}
			if (off < 0)
				break;
			w->in.pos = (size_t)off;
			if (fresh) { /* a PSB, OVF or TIP.PGE: as at a PSB */
				f->enabled = 0;
				w->time.tma_ok = 0;
			} else {
				w->in.len = lim;
			}
		}
		if (w->out.sink_err || !err)
			break;
		/* resume at the next PSB after the failing packet */
		off = next_psb(w, w->in.pos + 1);
		if (off < 0)
			break;
	}
	if (!w->out.sink_err && emit_end && f->pending_ovf &&
	    !(f->have_ip && f->enabled)) {
		/* an overflow with nothing after it: still told (ip 0: no
		 * resume), at the time of the last event */
		put_event(w, STRACE_EV_OVERFLOW, 0, w->time.last_time, 0,
			  f->ovf_offset, w->st.insns);
		f->pending_ovf = 0;
		w->seg.ovf_at_end = 1;
	}
	if (!w->out.sink_err && !emit_end)
		piece_end(w, end);
	if (!w->out.sink_err && f->have_ip && f->enabled) {
		if (emit_end) {
			/* The last address the trace vouches for: where the
			 * last packet left us. Code after it may never have
			 * run (the buffer was cut), so no events are made up
			 * for it. */
			emit(w, STRACE_EV_TRACE_END, 0, f->ip,
			     STRACE_REASON_END);
		} else if (has_next_fup) {
			w->in.pos = w->seg.fup_at; /* where the sequential
						    * decode would be */
			if (f->dtnt_n || advance(w, next_fup, 0)) {
				/* (as strace_dec_fup() at a PSB+'s FUP) */
				strace_dec_error_event(w, STRACE_E_DESYNC);
				f->parked = 0;
				f->dtnt_n = 0;
				f->ip = next_fup;
			}
		}
	}
	w->st.bytes += end - start;
	pt_pkt_free_decoder(w->in.pkt);
	w->in.pkt = NULL;
	if (w->out.sink_err)
		return w->out.sink_err;
	return w->out.events - first;
}

long strace_dec_walk_flush(struct strace_walker *w, long ret)
{
	int err;

	if (w->out.to != OUT_SPREAD || w->out.sink_err)
		return ret;
	err = strace_dec_spread_flush(&w->out.sp, &w->o);
	if (err) {
		w->out.sink_err = sink_error(err);
		return w->out.sink_err;
	}
	return ret;
}

long strace_walker_decode(struct strace_walker *w, const uint8_t *buf,
			  size_t len)
{
	if (w->o.flags & STRACE_WALK_REFERENCE)
		return strace_walker_decode_ref(w->img, &w->o, w->blk.cache,
						buf, len, &w->st);
	w->flow.begin_reason = STRACE_REASON_START;
	return strace_dec_walk_flush(
		w, strace_dec_decode_range(w, buf, 0, len, len, 1, 0, 0));
}

int strace_walker_new(struct strace_image *img,
		      const struct strace_walk_opts *opts,
		      struct strace_walker **out)
{
	struct strace_walker *w;
	struct strace_walk_opts o;

	if (!img || !opts || strace_opts_load(&o, sizeof(o), opts) < 0)
		return -STRACE_E_BADARG;
	opts = &o;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->img = img;
	w->o = o;
	if (o.types) {
		w->types = *o.types;
		w->o.types = &w->types;
	}
	if (strace_dec_cov_on(img) &&
	    !(w->cov_seen = calloc(COV_SEEN, sizeof(*w->cov_seen)))) {
		free(w);
		return -ENOMEM;
	}
	/* a processor the table does not know gets the workarounds that
	 * only ever turn a decode error into a decode (a trace without the
	 * erratum never meets their condition) */
	w->flow.errata = strace_dec_cpu_workarounds(&opts->cpu);
	if (opts->emit == strace_dec_vec_push) {
		w->seg.adv_mark = SEG_F_ADV;
		w->out.to = OUT_VEC;
	} else if (opts->has_time &&
		   !(opts->flags & STRACE_WALK_EXACT_TIMES)) {
		w->out.to = OUT_SPREAD;
		w->out.sp.stop_cap = strace_dec_spread_mtc_ns(&opts->time);
	}
	if (opts->types && w->out.to != OUT_VEC) {
		/* (a parallel decode's workers make every event: the merge
		 * spreads the times, the sink drops) */
		struct strace_typeset all;

		w->out.keep = *opts->types;
		for (unsigned t = 0; t < STRACE_EV_MAX; t++)
			if (spread_stops(t))
				w->out.keep.bits[t / 64] |= 1ull << (t % 64);
		strace_typeset_all(&all);
		w->out.filter = memcmp(&all, &w->out.keep, sizeof(all)) != 0;
	}
	w->blk.cache = opts->cache;
	if (!w->blk.cache) {
		if (strace_bcache_new(0, &w->blk.cache) < 0) {
			free(w);
			return -ENOMEM;
		}
		w->blk.own_cache = 1;
	}
	*out = w;
	return 0;
}

void strace_walker_free(struct strace_walker *w)
{
	if (!w)
		return;
	if (w->blk.own_cache)
		strace_bcache_free(w->blk.cache);
	if (w->stream)
		w->stream_free(w->stream);
	if (!w->tnt.shared)
		strace_dec_tc_free(w->tnt.tc);
	strace_dec_spread_free(&w->out.sp);
	free(w->cov_seen);
	free(w);
}

void strace_walker_stats(const struct strace_walker *w,
			 struct strace_walk_stats *st)
{
	*st = w->st;
}
