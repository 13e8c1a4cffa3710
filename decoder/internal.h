/* SPDX-License-Identifier: MIT */
/* decoder/internal.h - shared between the decoder's files; not installed. */
#ifndef DECODER_INTERNAL_H
#define DECODER_INTERNAL_H

#include <stdint.h>

#include "strace/decoder.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Read every object's symbols now (before walkers on several threads
 * share the image: lazy loading is not thread-safe). */
void image_load_all_symbols(struct strace_image *img);

/* Block cache internals for the walker's hot loop: bcache_sync() once per
 * decode call (the image does not change during one), then
 * bcache_get_fast() per block. */
struct strace_bcache;
void bcache_sync(struct strace_bcache *c, const struct strace_image *img);
const struct strace_block *bcache_miss(struct strace_bcache *c,
				       struct strace_image *img, uint64_t ip);
const struct strace_block *bcache_find_counted(struct strace_bcache *c,
					       uint64_t ip);

static inline const struct strace_block *
bcache_get_fast(struct strace_bcache *c, struct strace_image *img, uint64_t ip)
{
	const struct strace_block *b = bcache_find_counted(c, ip);
	return likely(b != NULL) ? b : bcache_miss(c, img, ip);
}

#endif
