/* SPDX-License-Identifier: MIT */
/*
 * decoder/image_cache.c - the persistent block and symbol cache's glue
 * (docs/cache.md): an object's cache file found by its build-id (and
 * the debug file its symbols come from) and mapped (blockfile.c reads and writes the files), its symbols taken
 * from there, and strace_objcache_save() writing back what the decodes
 * added. Beneath the symbols (symbols.c) and the block summaries
 * (image_block.c), which ask it; above the objects (image.c) and the
 * debug files (debugfile.c).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/image.h"

/* perf 6.1's lookup points are used in the cache files' bytes */
_Static_assert(sizeof(struct perf_iv) ==
			       sizeof(struct strace_blockfile_point) &&
		       offsetof(struct perf_iv, point) ==
			       offsetof(struct strace_blockfile_point, point) &&
		       offsetof(struct perf_iv, after) ==
			       offsetof(struct strace_blockfile_point, after),
	       "struct perf_iv and struct strace_blockfile_point");

static struct strace_blockfile_key bc_key(const struct object *o)
{
	return (struct strace_blockfile_key){
		o->bc_id,
		o->bc_idn,
		o->size,
		(uint64_t)o->mtime.tv_sec,
		(uint64_t)o->mtime.tv_nsec,
		STRACE_BLOCKFILE_SYMOPTS(o->plt_style, o->no_debuginfo,
				      o->no_demangle),
		o->debug_id.path_hash,
		o->debug_id.size,
		o->debug_id.mtime_sec,
		o->debug_id.mtime_nsec};
}

/* the debug file o's symbols would come from (symbols.c): only an object
 * without a .symtab looks for one (perf's rule), and only with debug
 * information asked for */
static void find_debug_id(struct object *o, Elf *elf)
{
	struct strace_dec_debugfile d = {0};
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Scn *symtab;

	memset(&o->debug_id, 0, sizeof(o->debug_id));
	if (o->no_debuginfo || elf_getshdrstrndx(elf, &shstrndx))
		return;
	symtab = strace_dec_section_by_name(elf, shstrndx, ".symtab", &sh,
					    NULL);
	if (symtab && sh.sh_type == SHT_SYMTAB)
		return;
	if (strace_dec_debug_find(o->path, o->symfs, elf, shstrndx, &d, NULL,
				  0))
		o->debug_id = d.id;
	strace_dec_debug_close(&d);
}

/* bc_lock held: o's build-id, and its cache file mapped (its blocks are
 * looked up there, strace_dec_image_block(); the symbols wait for
 * load_symbols) */
static void bc_load(struct object *o)
{
	struct strace_blockfile_key key;
	Elf *elf;
	int rc;

	if (!o->cache || !o->cache->dir || !o->mmapped)
		return;
	elf = elf_memory((char *)(uintptr_t)o->data, o->size);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		o->bc_idn =
			strace_dec_build_id(elf, o->bc_id, sizeof(o->bc_id));
	if (o->bc_idn)
		find_debug_id(o, elf);
	elf_end(elf);
	if (!o->bc_idn)
		return; /* no build-id: no cache */
	key = bc_key(o);
	rc = strace_blockfile_load(o->cache->dir, &key, &o->bc_buf, &o->bc);
	if (rc == -ENOENT) {
		o->bc_state = BC_MISSED;
		return;
	}
	if (rc) {
		/* rebuilt, never trusted: written anew after the decode */
		o->bc_state = rc == -ESTALE ? BC_STALE : BC_DAMAGED;
		o->blocks_dirty = 1;
		return;
	}
	o->bc_state = BC_LOADED;
}

void strace_dec_bc_ensure(struct object *o)
{
	strace_dec_once(o, &o->bc_tried, &o->bc_lock, bc_load);
}

/* o's symbols from its cache file; 0, or -1 when it has none (or no
 * memory: then they are read from the ELF file) */
int strace_dec_bc_symbols(struct object *o)
{
	const struct strace_blockfile *c = &o->bc;
	size_t n = c->nsyms;

	if (!o->bc_buf || !c->has_syms)
		return -1;
	if (o->plt_style == STRACE_PLT_PERF61) {
		/* used where they are, in the file's mapping: the symbols
		 * c->syms, named in its pool (symbol_lookup()) */
		o->iv = (struct perf_iv *)(uintptr_t)c->iv;
		o->npsyms = n;
		o->niv = c->niv;
		o->syms_in_file = 1;
		return 0;
	}
	o->syms = calloc(n ? n : 1, sizeof(*o->syms));
	if (!o->syms)
		return -1;
	o->nsyms = 0;
	for (size_t i = 0; i < n; i++) {
		const struct strace_blockfile_sym *f = &c->syms[i];
		if (f->type == STRACE_BLOCKFILE_ALIAS) {
			/* (aliases follow their symbol: kept in order) */
			if (strace_dec_grow_aliases(o) < 0)
				goto fail;
			o->aliases[o->naliases++] =
				(struct alias){f->start, c->pool + f->name};
			continue;
		}
		struct sym *y = &o->syms[o->nsyms++];
		y->start = f->start;
		y->end = f->end;
		y->name = c->pool + f->name;
		y->bind = f->bind;
		y->type = f->type;
	}
	return 0;
fail:
	free(o->syms);
	o->syms = NULL;
	o->nsyms = o->naliases = 0;
	return -1;
}

/* o's cache file, with everything the decodes added */
static int bc_save(struct object *o)
{
	struct strace_blockfile_key key = bc_key(o);
	struct strace_blockfile c = {0};
	struct strace_blockfile_block *blocks = NULL;
	struct strace_blockfile_sym *syms = NULL;
	struct strpool pool = {0};
	size_t nb = 0, ns = 0;
	int rc = -ENOMEM;

	if (o->blocks) {
		/* (the table's own, then merged with the file's) */
		blocks = malloc((o->blocks_used ? o->blocks_used : 1) *
				sizeof(*blocks));
		if (!blocks)
			goto out;
		for (size_t i = 0; i <= o->blocks_mask; i++)
			if (o->blocks[i].key && nb < o->blocks_used)
				blocks[nb++] = o->blocks[i];
	}
	c.blocks = strace_blockfile_merge(o->bc.blocks, o->bc.nblocks, blocks,
					  nb, &c.nblocks);
	if (!c.blocks)
		goto out;
	if (atomic_load(&o->syms_loaded) && !o->syms_in_file) {
		int perf61 = o->plt_style == STRACE_PLT_PERF61;
		size_t na = 0, k = 0, nal = perf61 ? 0 : o->naliases;
		ns = perf61 ? (o->psyms ? o->npsyms : 0) : o->nsyms;
		syms = calloc(ns + nal ? ns + nal : 1, sizeof(*syms));
		if (!syms)
			goto out;
		for (size_t i = 0; i < ns; i++) {
			struct strace_blockfile_sym *y = &syms[k++];
			const char *name;
			long off;
			if (perf61) {
				y->start = o->psyms[i].start;
				y->end = o->psyms[i].end;
				y->vis_end = o->psyms[i].vis_end;
				y->bind = o->psyms[i].bind;
				name = o->psyms[i].name;
			} else {
				y->start = o->syms[i].start;
				y->end = o->syms[i].end;
				y->bind = o->syms[i].bind;
				y->type = o->syms[i].type;
				name = o->syms[i].name;
			}
			off = strace_dec_strpool_add(&pool, name ? name : "");
			if (off < 0)
				goto out;
			y->name = (uint64_t)off;
			/* STRACE_PLT_PLAIN: the symbol's aliases after it */
			for (; na < nal && o->aliases[na].start <= y->start;
			     na++) {
				struct strace_blockfile_sym *z;
				if (o->aliases[na].start < y->start)
					continue;
				off = strace_dec_strpool_add(&pool,
							     o->aliases[na].name);
				if (off < 0)
					goto out;
				z = &syms[k++];
				z->start = z->end = o->aliases[na].start;
				z->type = STRACE_BLOCKFILE_ALIAS;
				z->name = (uint64_t)off;
			}
		}
		c.has_syms = 1;
		c.syms = syms;
		c.nsyms = k; /* the symbols and their aliases */
		c.iv = perf61 && o->psyms ? (const void *)o->iv : NULL;
		c.niv = c.iv ? o->niv : 0;
		c.pool = pool.v;
		c.pool_len = pool.len;
	} else if (o->bc_buf && o->bc.has_syms) {
		/* not looked up this time, or looked up in the file: kept
		 * as the file had them */
		c.has_syms = 1;
		c.syms = o->bc.syms;
		c.nsyms = o->bc.nsyms;
		c.iv = o->bc.iv;
		c.niv = o->bc.niv;
		c.pool = o->bc.pool;
		c.pool_len = o->bc.pool_len;
	}
	rc = strace_blockfile_write(o->cache->dir, &key, &c);
out:
	free((void *)(uintptr_t)c.blocks);
	free(blocks);
	free(syms);
	free(pool.v);
	return rc;
}

int strace_objcache_save(struct strace_objcache *c,
			 struct strace_objcache_stats *st)
{
	struct strace_objcache_stats z;
	int first = 0;

	if (!st)
		st = &z;
	memset(st, 0, sizeof(*st));
	/* what decodes killed while writing left behind (a warm decode
	 * writes nothing, but clears them too) */
	if (c->dir)
		(void)strace_blockfile_sweep(c->dir);
	pthread_mutex_lock(&c->lock);
	for (struct object *o = c->objs; o; o = o->next) {
		int rc;
		switch (o->bc_state) {
		case BC_MISSED: st->missed++; break;
		case BC_LOADED: st->loaded++; break;
		case BC_STALE: st->stale++; break;
		case BC_DAMAGED: st->damaged++; break;
		default: continue; /* not used, or no build-id */
		}
		if (!o->blocks_dirty && !o->syms_dirty)
			continue;
		rc = bc_save(o);
		if (rc < 0) {
			st->write_errors++;
			if (!first)
				first = rc;
			continue;
		}
		st->written++;
		o->blocks_dirty = o->syms_dirty = 0;
	}
	pthread_mutex_unlock(&c->lock);
	st->write_error = first;
	return first;
}
