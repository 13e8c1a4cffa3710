/* SPDX-License-Identifier: MIT */
/* dlfilter/dlf_dso.c - the DSO table: each DSO's executable segment, and its
 * persistent block cache (read when the DSO is first seen, written at the
 * end). Runs once per DSO, off the per-sample path. */
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dlf_int.h"

/* The executable segment of an ELF file: where its mapping starts in the
 * file and how long it is, as the loader maps it (what MMAP2 records),
 * its ELF virtual address there, and the mode of its code (32-bit for an
 * ELFCLASS32 file: perf decodes a DSO's code by its class too). */
static void elf_exec_segment(const char *path, struct dso *x)
{
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} eh;
	struct stat st;
	uint64_t phoff = 0;
	unsigned phnum = 0, cls = 0;
	int fd;

	x->exec_off = x->exec_len = x->exec_vaddr = 0;
	x->mode = STRACE_MODE_64;
	if (!path || path[0] != '/')
		return;
	/* a FIFO or a device under that name is not opened at all */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e64.e_ident, ELFMAG, SELFMAG)) {
		cls = eh.e64.e_ident[EI_CLASS];
		if (cls == ELFCLASS64 &&
		    eh.e64.e_phentsize == sizeof(Elf64_Phdr)) {
			phoff = eh.e64.e_phoff;
			phnum = eh.e64.e_phnum;
		} else if (cls == ELFCLASS32 &&
			   eh.e32.e_phentsize == sizeof(Elf32_Phdr)) {
			phoff = eh.e32.e_phoff;
			phnum = eh.e32.e_phnum;
			x->mode = STRACE_MODE_32;
		}
	}
	for (unsigned i = 0; i < phnum && i < 256; i++) {
		union {
			Elf64_Phdr p64;
			Elf32_Phdr p32;
		} ph;
		size_t phsz = cls == ELFCLASS64 ? sizeof(ph.p64)
						: sizeof(ph.p32);
		uint64_t poff, pvaddr, pfilesz;
		unsigned type, flags;

		if (pread(fd, &ph, phsz, (off_t)(phoff + i * phsz)) !=
		    (ssize_t)phsz)
			break;
		if (cls == ELFCLASS64) {
			type = ph.p64.p_type, flags = ph.p64.p_flags;
			poff = ph.p64.p_offset, pvaddr = ph.p64.p_vaddr;
			pfilesz = ph.p64.p_filesz;
		} else {
			type = ph.p32.p_type, flags = ph.p32.p_flags;
			poff = ph.p32.p_offset, pvaddr = ph.p32.p_vaddr;
			pfilesz = ph.p32.p_filesz;
		}
		if (type != PT_LOAD || !(flags & PF_X))
			continue;
		uint64_t pg = 4096;
		x->exec_off = poff & ~(pg - 1);
		x->exec_vaddr = pvaddr & ~(pg - 1);
		x->exec_len = ((pvaddr + pfilesz + pg - 1) & ~(pg - 1)) -
			      (pvaddr & ~(pg - 1));
		break;
	}
	close(fd);
}

static struct strace_blockfile_key dso_key(const struct dso *x)
{
	/* (its files hold blocks only, no symbols: no debug file) */
	return (struct strace_blockfile_key){.id = x->id,
					     .idn = x->idn,
					     .size = x->size,
					     .mtime_sec = x->mtime_sec,
					     .mtime_nsec = x->mtime_nsec,
					     .symopts = DLF_BC_VARIANT};
}

/* x's cache file: its blocks into the block cache under index i */
static void dso_cache_load(struct strace_dlf *d, struct dso *x, uint32_t i,
			   const struct strace_dlf_loc *loc)
{
	struct strace_blockfile_key key;
	struct stat st;
	int rc;

	if (!d->cache_dir[0] || !loc->buildid || !loc->buildid_size ||
	    loc->buildid_size > sizeof(x->id) || stat(x->name, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return;
	memcpy(x->id, loc->buildid, loc->buildid_size);
	x->idn = loc->buildid_size;
	x->size = (uint64_t)st.st_size;
	x->mtime_sec = (uint64_t)st.st_mtim.tv_sec;
	x->mtime_nsec = (uint64_t)st.st_mtim.tv_nsec;
	key = dso_key(x);
	rc = strace_blockfile_load(d->cache_dir, &key, &x->bc_buf, &x->bc);
	if (rc == -ENOENT)
		return;
	if (rc) {
		x->rebuild = 1;
		d->st.cache_rebuilt++;
		return;
	}
	d->st.cache_loaded++;
	for (size_t k = 0; k < x->bc.nblocks; k++) {
		const struct strace_blockfile_block *r = &x->bc.blocks[k];
		struct strace_block b = r->b;
		uint64_t off = r->key - 1;
		b.start = off;
		b.target = r->has_target ? off + r->b.target : 0;
		if (!strace_bcache_put(d->bc, ((uint64_t)i << 44) ^ off, &b))
			break;
	}
}

/* A block decoded in x (at address off of the DSO), for its cache file */
void dlf_dso_cache_add(struct dso *x, uint64_t off,
		       const struct strace_block *b)
{
	struct strace_blockfile_block *e;

	if (!x->idn)
		return;
	if (x->nn == x->ncap) {
		struct strace_blockfile_block *v =
			strace_grow(x->nv, &x->ncap, sizeof(*v), 256);
		if (!v)
			return; /* not kept: decoded again next time */
		x->nv = v;
	}
	e = &x->nv[x->nn++];
	memset(e, 0, sizeof(*e));
	e->key = off + 1;
	e->b = *b;
	e->b.start = 0;
	e->b.pad_ = 0;
	e->has_target = b->target != 0;
	e->b.target = b->target ? b->target - b->start : 0;
}

/* The cache files of the DSOs that got new blocks (or had a wrong
 * file): what was read and what was decoded, together. */
void dlf_dso_cache_save(struct strace_dlf *d)
{
	/* what decodes killed while writing left behind */
	if (d->cache_dir[0])
		(void)strace_blockfile_sweep(d->cache_dir);
	for (size_t i = 1; i < d->ndsos; i++) {
		struct dso *x = &d->dsos[i];
		struct strace_blockfile c = {0};
		struct strace_blockfile_block *all;
		struct strace_blockfile_key key = dso_key(x);

		if (!x->idn || (!x->nn && !x->rebuild))
			continue;
		all = strace_blockfile_merge(x->bc.blocks, x->bc.nblocks, x->nv,
					     x->nn, &c.nblocks);
		if (!all) {
			d->st.cache_write_errors++;
			continue;
		}
		c.blocks = all;
		if (strace_blockfile_write(d->cache_dir, &key, &c) < 0)
			d->st.cache_write_errors++;
		else
			d->st.cache_written++;
		free(all);
		x->nn = 0;
		x->rebuild = 0;
	}
}

uint32_t dlf_dso_index(struct strace_dlf *d, const char *name,
		       const struct strace_dlf_loc *loc)
{
	for (size_t i = d->ndsos; i-- > 1;)
		if (!strcmp(d->dsos[i].name, name))
			return (uint32_t)i;
	if (!d->ndsos)
		d->ndsos = 1;
	if (grow((void **)&d->dsos, &d->capdsos, d->ndsos, sizeof(*d->dsos)))
		return 0;
	struct dso *x = &d->dsos[d->ndsos];
	x->name = strdup(name);
	if (!x->name)
		return 0;
	elf_exec_segment(name, x);
	d->st.dsos++;
	dso_cache_load(d, x, (uint32_t)d->ndsos, loc);
	return (uint32_t)d->ndsos++;
}
