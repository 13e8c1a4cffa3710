/* SPDX-License-Identifier: MIT */
/*
 * decoder/image_block.h - the walker's block look-ups: a summary from the
 * block cache's table (block.c), or on a miss from the image
 * (image_block.c), which keeps it there.
 */
#ifndef DECODER_IMAGE_BLOCK_H
#define DECODER_IMAGE_BLOCK_H

#include <stdint.h>

#include "decoder/decoder.h"

/* Block cache internals for the walker's hot loop: strace_dec_bcache_sync()
 * once per decode call (the image does not change during one), then
 * strace_dec_bcache_get_fast() per block (strace_dec_bcache_find_counted()
 * counts a hit; strace_dec_bcache_miss() decodes and keeps the block, and
 * sets STRACE_BF_SAME_SYM). Their ip is a key: the address with its code
 * mode (strace_mode_key(); the address itself in 64-bit code). */
struct strace_bcache;
void strace_dec_bcache_sync(struct strace_bcache *c,
			    const struct strace_image *img);
const struct strace_block *strace_dec_bcache_miss(struct strace_bcache *c,
						  struct strace_image *img,
						  uint64_t ip);
const struct strace_block *
strace_dec_bcache_find_counted(struct strace_bcache *c, uint64_t ip);

static inline const struct strace_block *
strace_dec_bcache_get_fast(struct strace_bcache *c, struct strace_image *img,
			   uint64_t ip)
{
	const struct strace_block *b = strace_dec_bcache_find_counted(c, ip);
	return __builtin_expect(b != NULL, 1) ? b
					       : strace_dec_bcache_miss(c, img, ip);
}

/* Coverage (image_cov.c): whether img's cache collects it (asked once,
 * when a walker starts); the conditional branch at at went the way seen
 * says (STRACE_COVBRANCH_TAKEN, _NOT_TAKEN), which its object keeps. */
int strace_dec_cov_on(const struct strace_image *img);
void strace_dec_cov_branch(struct strace_image *img, uint64_t at,
			   unsigned seen);

#endif
