/* SPDX-License-Identifier: MIT */
/*
 * decoder/walk.c - the fast walker: the decode of a range of a stream by
 * its packet loop (loop.h), with resync at the next PSB after an error;
 * and the walker's life (new, free, stats).
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

long strace_dec_decode_range(struct strace_walker *w, const uint8_t *buf,
			     size_t start, size_t end, size_t all, int emit_end,
			     int has_next_fup, uint64_t next_fup)
{
	struct walk_flow *f = &w->flow;
	struct pt_config cfg;
	long first = w->out.events, off;
	int err;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + all;
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
	w->in.prog_at = start;
	if (w->blk.l0_gen != strace_image_generation(w->img)) {
		memset(w->blk.l0, 0, sizeof(w->blk.l0));
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
		err = w->out.to == OUT_VEC ? strace_dec_run_vec(w) : run(w);
		if (w->out.sink_err)
			break;
		if (!err)
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
			if (advance(w, next_fup, 0)) {
				strace_dec_error_event(w, STRACE_E_DESYNC);
				f->parked = 0;
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
	strace_dec_stream_free(w->stream);
	if (!w->tnt.shared)
		strace_dec_tc_free(w->tnt.tc);
	strace_dec_spread_free(&w->out.sp);
	free(w);
}

void strace_walker_stats(const struct strace_walker *w,
			 struct strace_walk_stats *st)
{
	*st = w->st;
}
