/* SPDX-License-Identifier: MIT */
/*
 * decoder/bcache.h - the block cache's table (block.c), for the image's
 * glue that fills it on a miss (image_block.c): both look a key up with
 * the same inline probe.
 */
#ifndef DECODER_BCACHE_H
#define DECODER_BCACHE_H

#include "decoder/internal.h"

struct centry {
	uint64_t key; /* 0: empty (key 0 lives in zero_entry) */
	struct strace_block b;
};

struct strace_bcache {
	struct centry *tab;
	size_t mask;
	size_t used, limit;
	size_t max; /* entries the table may grow to */
	struct centry zero;
	int has_zero;
	uint64_t generation;
	const struct strace_image *img;
	struct strace_bcache_stats st;
};

static inline size_t bcache_hash(uint64_t k)
{
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 32;
	return (size_t)k;
}

/* Entries a cache starts with: a short trace runs through a few thousand
 * blocks, and a table sized for a long one costs its pages (3 MiB). */
/* The summary of key in c, or NULL; counts nothing. */
static inline const struct strace_block *
bcache_lookup(struct strace_bcache *c, uint64_t key)
{
	size_t i;

	if (unlikely(!key))
		return c->has_zero ? &c->zero.b : NULL;
	for (i = bcache_hash(key) & c->mask;; i = (i + 1) & c->mask) {
		struct centry *e = &c->tab[i];
		if (likely(e->key == key))
			return &e->b;
		if (!e->key)
			return NULL;
	}
}

#endif
