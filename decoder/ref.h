/* SPDX-License-Identifier: MIT */
/* decoder/ref.h - the reference decoder's entry (ref.c); not installed. */
#ifndef DECODER_REF_H
#define DECODER_REF_H

#include "decoder/decoder.h"

/*
 * strace_walker_decode_ref() - decode buf (len bytes) with libipt's block
 * decoder over img, emitting the events the fast walker emits, to o's
 * sink; block summaries from cache; adds to *st. What
 * strace_walker_decode() does for STRACE_WALK_REFERENCE. Threading: img
 * is only read; cache and st are the caller's thread's.
 * Returns the number of events, -STRACE_E_NOSYNC if buf has no PSB,
 * -ENOMEM, or the sink's error.
 */
long strace_walker_decode_ref(struct strace_image *img,
			      const struct strace_walk_opts *o,
			      struct strace_bcache *cache, const uint8_t *buf,
			      size_t len, struct strace_walk_stats *st);

#endif
