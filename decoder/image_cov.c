/* SPDX-License-Identifier: MIT */
/*
 * decoder/image_cov.c - coverage: the code ranges that ran in a decode,
 * kept per object by file offset (noted on the walkers' block-cache
 * misses, image_block.c), and the ways its conditional branches went
 * (noted where a walker takes a TNT bit itself, flow.c), merged and
 * turned into the object's own addresses at the end
 * (strace_objcache_each_coverage(), _each_branch()).
 *
 * The walker's cache is per decode and starts empty (the persistent cache
 * fills the objects' tables, not it), so a miss means the flow reached the
 * block in this decode; hits are not counted (the walker's hot path stays
 * as it is): coverage says "ran", not how often.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/image.h"
#include "decoder/image_block.h"
#include "strace/internal/grow.h"

#define COV_START 256

static int cov_cmp(const void *a, const void *b)
{
	const struct cov_range *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* v[0..n) sorted by offset, those that overlap or touch made one. Returns
 * the new count. */
static size_t cov_merge(struct cov_range *v, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cov_cmp);
	for (size_t i = 1; i < n; i++) {
		uint64_t end = v[k].off + v[k].len;
		if (v[i].off <= end) {
			if (v[i].off + v[i].len > end)
				v[k].len = v[i].off + v[i].len - v[k].off;
		} else {
			v[++k] = v[i];
		}
	}
	return k + 1;
}

/* o->blocks_lock held: room for one more range (merging first, growing
 * when that leaves the vector more than half full). Returns 0, -1. */
static int cov_room(struct object *o)
{
	struct cov_range *v;

	if (o->ncov < o->capcov)
		return 0;
	o->ncov = cov_merge(o->cov, o->ncov);
	if (o->ncov < o->capcov / 2)
		return 0;
	v = strace_grow(o->cov, &o->capcov, sizeof(*v), COV_START);
	if (!v)
		return -1;
	o->cov = v;
	return 0;
}

void strace_dec_cov_note(struct strace_image *img, uint64_t at, uint64_t len)
{
	const struct mapping *m = strace_dec_image_find_map(img, at);
	struct object *o = m ? m->obj : NULL;

	if (!o)
		return;
	pthread_mutex_lock(&o->blocks_lock);
	if (cov_room(o) == 0)
		o->cov[o->ncov++] = (struct cov_range){at - m->start + m->pgoff,
						       len};
	pthread_mutex_unlock(&o->blocks_lock);
}

static int br_cmp(const void *a, const void *b)
{
	const struct cov_branch *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* v[0..n) sorted by offset, each branch once with the ways it went.
 * Returns the new count. */
static size_t br_merge(struct cov_branch *v, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), br_cmp);
	for (size_t i = 1; i < n; i++) {
		if (v[i].off == v[k].off)
			v[k].seen |= v[i].seen;
		else
			v[++k] = v[i];
	}
	return k + 1;
}

void strace_dec_cov_branch(struct strace_image *img, uint64_t at,
			   unsigned seen)
{
	const struct mapping *m = strace_dec_image_find_map(img, at);
	struct object *o = m ? m->obj : NULL;

	if (!o)
		return;
	pthread_mutex_lock(&o->blocks_lock);
	if (o->nbr == o->capbr) {
		/* merged first; grown when that leaves it over half full */
		o->nbr = br_merge(o->br, o->nbr);
		if (o->nbr >= o->capbr / 2) {
			struct cov_branch *v = strace_grow(
				o->br, &o->capbr, sizeof(*v), COV_START);
			if (v)
				o->br = v;
		}
	}
	if (o->nbr < o->capbr)
		o->br[o->nbr++] = (struct cov_branch){at - m->start + m->pgoff,
						      seen};
	pthread_mutex_unlock(&o->blocks_lock);
}

int strace_dec_cov_on(const struct strace_image *img)
{
	return img->cache && img->cache->coverage;
}

void strace_objcache_set_coverage(struct strace_objcache *c, int on)
{
	c->coverage = !!on;
}

/* The ELF virtual address of file offset off in elf's loaded segments;
 * 0 and -1 when no PT_LOAD holds it. */
static int off_to_vaddr(Elf *elf, uint64_t off, uint64_t *vaddr,
			uint64_t *seg_end)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr;
			*seg_end = ph.p_offset + ph.p_filesz;
			return 0;
		}
	}
	return -1;
}

/* What strace_objcache_each_coverage() and _each_branch() ask of each
 * object: its ranges or its branches. */
struct cov_walk {
	int (*ranges)(void *, const char *, uint64_t, uint64_t);
	int (*branches)(void *, const char *, uint64_t, unsigned);
	void *arg;
};

/* fn on each of o's merged ranges or branches in its addresses (a range
 * that runs past its segment, which code cannot, is cut there). */
static int cov_each(struct object *o, const struct cov_walk *cw)
{
	Elf *elf;
	int rc = 0;
	uint64_t va, seg_end;

	pthread_mutex_lock(&o->blocks_lock);
	o->ncov = cov_merge(o->cov, o->ncov);
	o->nbr = br_merge(o->br, o->nbr);
	pthread_mutex_unlock(&o->blocks_lock);
	if (!(cw->ranges ? o->ncov : o->nbr) || !o->data ||
	    !(elf = elf_memory((char *)(uintptr_t)o->data, o->size)))
		return 0;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return 0;
	}
	for (size_t i = 0; cw->ranges && i < o->ncov && !rc; i++) {
		uint64_t len = o->cov[i].len;
		if (off_to_vaddr(elf, o->cov[i].off, &va, &seg_end))
			continue;
		if (o->cov[i].off + len > seg_end)
			len = seg_end - o->cov[i].off;
		rc = cw->ranges(cw->arg, o->path, va, len);
	}
	for (size_t i = 0; cw->branches && i < o->nbr && !rc; i++)
		if (!off_to_vaddr(elf, o->br[i].off, &va, &seg_end))
			rc = cw->branches(cw->arg, o->path, va, o->br[i].seen);
	elf_end(elf);
	return rc;
}

static int cov_each_object(struct strace_objcache *c,
			   const struct cov_walk *cw)
{
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	for (struct object *o = c->objs; o && !rc; o = o->next)
		rc = cov_each(o, cw);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int strace_objcache_each_coverage(struct strace_objcache *c,
				  int (*fn)(void *arg, const char *path,
					    uint64_t vaddr, uint64_t len),
				  void *arg)
{
	return cov_each_object(c, &(struct cov_walk){.ranges = fn,
						     .arg = arg});
}

int strace_objcache_each_branch(struct strace_objcache *c,
				int (*fn)(void *arg, const char *path,
					  uint64_t vaddr, unsigned seen),
				void *arg)
{
	return cov_each_object(c, &(struct cov_walk){.branches = fn,
						     .arg = arg});
}
