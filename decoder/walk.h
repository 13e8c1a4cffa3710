/* SPDX-License-Identifier: MIT */
/* decoder/walk.h - between the fast walker and the reference decoder. */
#ifndef DECODER_WALK_H
#define DECODER_WALK_H

#include "decoder/decoder.h"

/* The reference path: libipt's block decoder over img, same events. */
long strace_walker_decode_ref(struct strace_image *img,
			      const struct strace_walk_opts *o,
			      struct strace_bcache *cache, const uint8_t *buf,
			      size_t len, struct strace_walk_stats *st);

#endif
