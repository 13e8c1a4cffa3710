/* SPDX-License-Identifier: MIT */
/*
 * decoder/image_block.c - block summaries from the image: an object's
 * summaries by file offset (decoded once for every image that maps it,
 * or read from its persistent cache file), and the glue that fills the
 * walker's block cache (block.c) on a miss. The top of the image's
 * layers: it asks the mappings (image.c), the persistent cache
 * (image_cache.c), the symbols (symbols.c), the summarizer (summary.c)
 * and the cache's table; nothing beneath calls back up here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/bcache.h"
#include "decoder/image.h"
#include "decoder/image_block.h"
#include "decoder/summary.h"

/*
 * An object keeps the summaries of its blocks by file offset, so that the
 * walkers of every image that maps it (one per thread of a recording, one
 * decode after another with a struct strace_objcache) decode each block
 * with Capstone once. A summary depends on the code bytes only (a direct
 * target moves with the block) as long as the decode did not run into the
 * end of the bytes the mapping gives: one that did is not kept, and a kept
 * one is not used where the mapping gives fewer bytes than it read (an
 * instruction reads at most 15 bytes from its start).
 */
#define OBLOCK_START 1024
#define OBLOCK_MAX (1u << 18) /* entries; at half full no more are kept */
#define INSN_MAX 15

static size_t oblock_hash(uint64_t k)
{
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 32;
	return (size_t)k;
}

/* The slot of key in o's table (its own, or the empty one for it). */
static struct strace_blockfile_block *
oblock_slot(struct strace_blockfile_block *tab, size_t mask, uint64_t key)
{
	size_t i = oblock_hash(key) & mask;

	while (tab[i].key && tab[i].key != key)
		i = (i + 1) & mask;
	return &tab[i];
}

/* o->blocks_lock held: room for more entries (the table at most half
 * full), or -1 (full: not kept). */
static int oblock_room(struct object *o, size_t more)
{
	size_t n = o->blocks ? o->blocks_mask + 1 : OBLOCK_START;
	struct strace_blockfile_block *tab;

	if (o->blocks && o->blocks_used + more <= n / 2)
		return 0;
	while (o->blocks_used + more > n / 2)
		n *= 2;
	if (n > OBLOCK_MAX || !(tab = calloc(n, sizeof(*tab))))
		return -1;
	for (size_t k = 0; o->blocks && k <= o->blocks_mask; k++)
		if (o->blocks[k].key)
			*oblock_slot(tab, n - 1, o->blocks[k].key) =
				o->blocks[k];
	free(o->blocks);
	o->blocks = tab;
	o->blocks_mask = n - 1;
	return 0;
}

/*
 * The block at ip met bytes it could not decode within an instruction's
 * length of the end of its mapping (avail bytes from ip): the instruction
 * there may go on in the next mapping, as code loaded in pieces does
 * (ptxed's --raw sections, a dump cut at a page). As perf and libipt
 * read across adjacent mappings, so does this when a mapping follows:
 * the block is cut before that instruction (kind NONE: the walk goes on
 * there), and a block that starts at it is that one instruction, decoded
 * from bytes copied across the mappings. Neither is kept by the object
 * (it depends on two). With nothing after, the bytes stay bad.
 */
static int straddle(struct strace_image *img, uint64_t ip, unsigned mode,
		    size_t avail, struct strace_block *out)
{
	uint8_t buf[INSN_MAX];
	size_t n = strace_image_read(img, ip + out->len, buf, sizeof(buf));

	if (n <= avail - out->len)
		return 0; /* nothing follows: the bytes are bad */
	if (out->len) {
		out->kind = STRACE_BK_NONE;
		return 0;
	}
	return strace_block_decode_mode(buf, n, ip, 1, mode, out) < 0 ? -ENOMEM
									 : 0;
}

static int in_map(const struct mapping *m, uint64_t addr)
{
	return addr >= m->start && addr < m->end;
}

int strace_dec_image_block(struct strace_image *img, uint64_t ip,
			   unsigned mode, struct strace_block *out)
{
	const struct mapping *m = strace_dec_image_find_map(img, ip);
	const uint8_t *code = NULL;
	struct object *o = m ? m->obj : NULL;
	uint64_t off = 0, avail = 0;
	struct strace_blockfile_block *e;
	int found = 0, has_target = 0;
	uint64_t key;

	if (m) {
		off = ip - m->start + m->pgoff;
		if (off < o->size) {
			code = o->data + off;
			avail = o->size - off;
			if (avail > m->end - ip)
				avail = m->end - ip;
		}
	}
	if (!code)
		return strace_block_decode(NULL, 0, ip, 0, out);
	/* the offset + 1, and the mode: the same bytes are two blocks in
	 * two modes */
	key = strace_mode_key(off + 1, mode);
	strace_dec_bc_ensure(o);
	pthread_mutex_lock(&o->blocks_lock);
	if (o->blocks) {
		e = oblock_slot(o->blocks, o->blocks_mask, key);
		if (e->key && (uint64_t)e->b.len + INSN_MAX <= avail) {
			*out = e->b;
			has_target = e->has_target;
			found = 1;
		}
	}
	pthread_mutex_unlock(&o->blocks_lock);
	if (!found && o->bc_buf) {
		/* in the cache file (mapped, never written: no lock) */
		const struct strace_blockfile_block *r =
			strace_blockfile_find(&o->bc, key);
		if (r && (uint64_t)r->b.len + INSN_MAX <= avail) {
			*out = r->b;
			has_target = r->has_target;
			found = 1;
		}
	}
	if (found) {
		out->start = ip;
		out->target = has_target ? ip + out->target : 0;
		if (!in_map(m, out->target))
			/* decided where the target was in the mapping */
			out->flags &= (uint8_t)~(STRACE_BF_SYM_KNOWN |
						 STRACE_BF_SAME_SYM);
		return 0;
	}
	if (strace_block_decode_mode(code, (size_t)avail, ip, 0, mode, out) < 0)
		return -ENOMEM;
	if (out->kind == STRACE_BK_BAD && (uint64_t)out->len + INSN_MAX > avail)
		return straddle(img, ip, mode, (size_t)avail, out);
	if ((uint64_t)out->len + INSN_MAX > avail)
		return 0; /* it read to the end of what this mapping gives */
	if ((out->kind == STRACE_BK_JMP || out->kind == STRACE_BK_JCC ||
	     out->kind == STRACE_BK_CALL) &&
	    in_map(m, out->target)) {
		/* both ends in one mapping of the file: its symbols alone
		 * decide, for every image that maps it so (the walker's
		 * block cache then asks no symbol) */
		out->flags |= STRACE_BF_SYM_KNOWN;
		if (strace_dec_same_symbol(img,
					   ip + out->len - out->term_len,
					   out->target))
			out->flags |= STRACE_BF_SAME_SYM;
	}
	pthread_mutex_lock(&o->blocks_lock);
	if (oblock_room(o, 1) == 0) {
		e = oblock_slot(o->blocks, o->blocks_mask, key);
		if (!e->key) {
			o->blocks_used++;
			o->blocks_dirty = 1;
		}
		e->key = key;
		e->b = *out;
		e->b.start = 0;
		e->b.pad_ = 0;
		e->has_target = out->target != 0;
		e->b.target = out->target ? out->target - ip : 0;
	}
	pthread_mutex_unlock(&o->blocks_lock);
	return 0;
}

int strace_dec_newer_branch_at(struct strace_image *img, uint64_t ip,
			       uint64_t last)
{
	for (int k = 0; k < 64 && ip <= last + 15; k++) {
		size_t avail = 0;
		const uint8_t *code = strace_image_code(img, ip, &avail);
		int len, n;

		if (!code)
			return 0;
		if (strace_dec_newer_branch(code, avail, &len) !=
		    STRACE_BK_NONE)
			return 1;
		if (ip > last)
			return 0; /* (the one after last) */
		n = strace_insn_length(code, avail);
		if (n <= 0)
			return 0;
		ip += (uint64_t)n;
	}
	return 0;
}

/* --- the walker's block cache, filled from the image ------------------- */

const struct strace_block *strace_dec_bcache_miss(struct strace_bcache *c,
						  struct strace_image *img,
						  uint64_t ip)
{
	struct strace_block nb;
	uint64_t at;
	unsigned mode = strace_mode_of_key(ip, &at);

	c->st.misses++;
	if (strace_dec_image_block(img, at, mode, &nb) < 0)
		nb.kind = STRACE_BK_BAD; /* out of memory */
	if (!(nb.flags & STRACE_BF_SYM_KNOWN) &&
	    (nb.kind == STRACE_BK_JMP || nb.kind == STRACE_BK_JCC ||
	     nb.kind == STRACE_BK_CALL) &&
	    strace_dec_same_symbol(img, nb.start + nb.len - nb.term_len,
				   nb.target))
		nb.flags |= STRACE_BF_SAME_SYM;
	/* a walker looks a block up only where the flow reaches it, and
	 * keeps it in its cache: a miss is the first time in this decode
	 * (or since the cache was flushed) that the block ran */
	if (unlikely(img->cache && img->cache->coverage) && nb.len)
		strace_dec_cov_note(img, at, nb.len);
	return strace_bcache_put(c, ip, &nb);
}

void strace_dec_bcache_sync(struct strace_bcache *c,
			    const struct strace_image *img)
{
	if (c->img != img || c->generation != strace_image_generation(img)) {
		if (c->used || c->has_zero)
			strace_bcache_flush(c);
		c->img = img;
		c->generation = strace_image_generation(img);
	}
}

const struct strace_block *strace_bcache_get(struct strace_bcache *c,
					     struct strace_image *img,
					     uint64_t ip)
{
	const struct strace_block *b;

	strace_dec_bcache_sync(c, img);
	b = bcache_lookup(c, ip);
	if (likely(b != NULL)) {
		c->st.hits++;
		return b;
	}
	return strace_dec_bcache_miss(c, img, ip);
}

