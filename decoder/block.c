/* SPDX-License-Identifier: MIT */
/*
 * decoder/block.c - the block cache: summaries kept by a 64-bit key in an
 * open-addressing table, one hash probe per block.
 *
 * A leaf: it stores what it is given and calls nothing of the image or
 * the summarizer. A miss of the walker's cache is filled by the image's
 * glue (image_block.c: strace_bcache_get(), strace_dec_bcache_miss());
 * the dlfilter fills its own from perf's code (strace_bcache_put()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/bcache.h"

#define BCACHE_START 4096
/* Entries a table of n holds before it grows: 3/4 (linear probing stays
 * short: a hit takes 2.5 probes on average when full; a short trace's
 * blocks, the corpus's plt 2585 of them, fit in the table it starts
 * with, whose growth would touch 112 more pages) */
#define BCACHE_LOAD(n) ((n) / 4 * 3)

int strace_bcache_new(size_t capacity, struct strace_bcache **out)
{
	struct strace_bcache *c;
	size_t n = 1024;

	if (!capacity)
		capacity = 1 << 16;
	while (n < capacity)
		n <<= 1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->max = n;
	if (n > BCACHE_START)
		n = BCACHE_START;
	c->tab = strace_dec_zalloc(n, sizeof(*c->tab));
	if (!c->tab) {
		free(c);
		return -ENOMEM;
	}
	c->mask = n - 1;
	c->limit = BCACHE_LOAD(n);
	*out = c;
	return 0;
}

/* Twice the entries, the same contents. Returns 0, -ENOMEM. */
static int bcache_grow(struct strace_bcache *c)
{
	size_t n = (c->mask + 1) * 2;
	struct centry *tab = strace_dec_zalloc(n, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t k = 0; k <= c->mask; k++) {
		size_t i;
		if (!c->tab[k].key)
			continue;
		for (i = bcache_hash(c->tab[k].key) & (n - 1); tab[i].key;
		     i = (i + 1) & (n - 1))
			;
		tab[i] = c->tab[k];
	}
	free(c->tab);
	c->tab = tab;
	c->mask = n - 1;
	c->limit = BCACHE_LOAD(n);
	return 0;
}

void strace_bcache_free(struct strace_bcache *c)
{
	if (!c)
		return;
	free(c->tab);
	free(c);
}

void strace_bcache_flush(struct strace_bcache *c)
{
	memset(c->tab, 0, (c->mask + 1) * sizeof(*c->tab));
	c->used = 0;
	c->has_zero = 0;
	c->st.flushes++;
}

const struct strace_block *strace_bcache_find(struct strace_bcache *c,
					      uint64_t key)
{
	return bcache_lookup(c, key);
}

const struct strace_block *strace_bcache_put(struct strace_bcache *c,
					     uint64_t key,
					     const struct strace_block *b)
{
	size_t i;

	if (!key) {
		c->zero.b = *b;
		c->has_zero = 1;
		return &c->zero.b;
	}
	/* grow up to the capacity, then start over: bounded memory */
	if (c->used >= c->limit &&
	    (c->mask + 1 >= c->max || bcache_grow(c) < 0))
		strace_bcache_flush(c);
	for (i = bcache_hash(key) & c->mask;; i = (i + 1) & c->mask) {
		struct centry *e = &c->tab[i];
		if (e->key == key || !e->key) {
			if (!e->key)
				c->used++;
			e->key = key;
			e->b = *b;
			return &e->b;
		}
	}
}

const struct strace_block *
strace_dec_bcache_find_counted(struct strace_bcache *c, uint64_t ip)
{
	size_t i;

	if (likely(ip != 0)) {
		for (i = bcache_hash(ip) & c->mask;; i = (i + 1) & c->mask) {
			struct centry *e = &c->tab[i];
			if (likely(e->key == ip)) {
				c->st.hits++;
				return &e->b;
			}
			if (!e->key)
				return NULL;
		}
	}
	return NULL;
}

void strace_bcache_stats(const struct strace_bcache *c,
			 struct strace_bcache_stats *st)
{
	*st = c->st;
	st->entries = c->used + (size_t)c->has_zero;
}
