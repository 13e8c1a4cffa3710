/* SPDX-License-Identifier: MIT */
/*
 * decoder/stream.c - strace_walker_decode_stream(): a stream that arrives
 * in pieces (a live capture).
 *
 * Streaming is the parallel decode done one segment at a time: each piece
 * up to its last complete PSB+ is a segment (segment.h) that walks on to
 * that PSB+'s FUP, and the merge joins it to what came before exactly as
 * the parallel decode joins its segments.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/packet.h"
#include "decoder/segment.h"

/* What a streaming walker keeps between pieces. */
struct walk_stream {
	struct strace_walker *w; /* decodes the segments */
	struct evvec ev;         /* their events (the storage is kept) */
	struct seg_state S;      /* the sequential decode's state between */
	int first;               /* the next piece starts a stream */
};

/* The walker's stream_free. */
static void stream_free(struct walk_stream *s)
{
	if (!s)
		return;
	strace_walker_free(s->w);
	strace_dec_vec_free(&s->ev);
	free(s);
}

/* The streaming state of w, made at the first piece. Returns it, or NULL
 * (no memory). */
static struct walk_stream *stream_of(struct strace_walker *w)
{
	struct strace_walk_opts o = w->o;
	struct walk_stream *s;

	if (w->stream)
		return w->stream;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	o.emit = strace_dec_vec_push;
	o.emit_batch = NULL;
	o.writer = NULL;
	o.cache = w->blk.cache;
	o.progress = NULL; /* one call per piece: the caller's */
	if (strace_walker_new(w->img, &o, &s->w) < 0) {
		free(s);
		return NULL;
	}
	/* one cache of TNT runs for both (the same thread, the same image
	 * and options: their records are the same), as for blocks */
	if (!w->tnt.tc && !(w->o.flags & STRACE_WALK_BIT_BY_BIT))
		w->tnt.tc = strace_dec_tc_new();
	if (w->tnt.tc) {
		s->w->tnt.tc = w->tnt.tc;
		s->w->tnt.shared = 1;
	}
	s->S.begin_reason = STRACE_REASON_START;
	s->first = 1;
	w->stream = s;
	w->stream_free = stream_free;
	return s;
}

long strace_walker_decode_stream(struct strace_walker *w, const uint8_t *buf,
				 size_t len, int final, size_t *used)
{
	struct walk_stream *s;
	struct seg_job j;
	long first = w->out.events;
	int err;

	*used = 0;
	if (w->o.flags & STRACE_WALK_REFERENCE) {
		/* libipt's block decoder has no segments: all at the end. */
		if (!final)
			return 0;
		*used = len;
		return strace_walker_decode(w, buf, len);
	}
	s = stream_of(w);
	if (!s)
		return -ENOMEM;
	memset(&j, 0, sizeof(j));
	j.end = len;
	j.last = final;
	if (!final) {
		uint64_t offs[256];
		size_t n = strace_pt_split(buf, len, 0, offs, 256);
		j.end = 0;
		while (n-- > 0)
			if (offs[n] > 0 &&
			    strace_dec_psb_plus(buf, len, (size_t)offs[n],
						&j.next_fup, &j.fup_at,
						&j.has_next_fup)) {
				j.end = (size_t)offs[n];
				break;
			}
		if (!j.end)
			return 0; /* no complete PSB+ after the start yet */
	}
	j.ev = s->ev;
	j.ev.n = j.ev.nmk = 0;
	j.ev.err = 0;
	strace_dec_seg_decode(s->w, buf, len, &j);
	strace_dec_seg_settle(&j, NULL, NULL);
	s->ev = j.ev; /* keep the vector's storage */
	if (!j.ret && j.ev.err)
		j.ret = j.ev.err;
	if (j.ret < 0 && j.ret != -STRACE_E_NOSYNC)
		return j.ret;
	err = strace_dec_seg_merge(w, &j, s->first, &s->S);
	if (!err && final)
		err = strace_dec_seg_end_overflow(w, &j, &s->S);
	if (err)
		return err;
	s->first = 0;
	if (final) {
		/* The next piece starts a new stream. */
		memset(&s->S, 0, sizeof(s->S));
		s->S.begin_reason = STRACE_REASON_START;
		s->first = 1;
	}
	*used = j.end;
	/* the end of a piece is no end of the stream: what the spreader
	 * holds waits for the next piece's times */
	return final ? strace_dec_walk_flush(w, w->out.events - first)
		     : w->out.events - first;
}
