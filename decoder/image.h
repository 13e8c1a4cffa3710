/* SPDX-License-Identifier: MIT */
/*
 * decoder/image.h - the process image's internals, shared by its layers:
 * image.c (mappings, objects, the object cache), debugfile.c (separate
 * debug files), image_cache.c (the persistent cache's glue), symbols.c (ELF symbols, PLT entries) and
 * image_block.c (an object's block summaries). Not for the walker: it
 * sees the image through decoder.h and internal.h.
 */
#ifndef DECODER_IMAGE_H
#define DECODER_IMAGE_H

#include <gelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "decoder/blockfile.h"
#include "decoder/internal.h"

struct sym {
	uint64_t start, end; /* file offsets, end exclusive */
	const char *name;
	uint8_t bind, type;
	uint8_t pooled;    /* name is an offset in the object's pool */
	uint8_t old_ver;   /* STRACE_PLT_PLAIN: the name had a non-default
			    * version (name@VERSION) */
	uint32_t order;    /* insertion order, for stable alias choice */
	size_t pool_off;
	uint64_t sec_end;  /* STRACE_PLT_PLAIN: the end of its section (file
			    * offset), or 0 */
	const char *raw;   /* STRACE_PLT_PLAIN: the name as the ELF file has
			    * it, where name differs (memcpy@@GLIBC_2.14,
			    * __GI_X, mangled), else NULL */
	size_t raw_off;    /* ... in the object's pool, until it is complete */
};

/* STRACE_PLT_PLAIN: another name of the symbol at start (file offset) */
struct alias {
	uint64_t start;
	const char *name;
};

/* NUL-terminated names, one after another, in memory that moves as it
 * grows: they are known by offset until it is complete */
struct strpool {
	char *v;
	size_t len, cap;
};


/* What a separate debug file is: which path, its size and mtime (its
 * build-id is the object's: debugfile.c checks it). All 0: none. */
struct strace_dec_debug_id {
	uint64_t path_hash, size, mtime_sec, mtime_nsec;
};

/* A separate debug file, mapped (strace_dec_debug_find()). */
struct strace_dec_debugfile {
	void *map;
	size_t size;
	Elf *elf;
	size_t shstrndx;
	Elf_Scn *symtab;
	struct strace_dec_debug_id id;
};

struct object {
	char *path;
	const uint8_t *data; /* whole file */
	size_t size;
	int mmapped;
	/* the mappings that use it, in every image, and the cache's own */
	_Atomic int refs;
	/* symbols are read on first use, once: the flag is set (release)
	 * after they are, and read (acquire) before they are used; the lock
	 * makes the first users wait for the one that reads them */
	_Atomic int syms_loaded;
	pthread_mutex_t syms_lock;
	/* what the symbols depend on: the image options at creation */
	int plt_style, no_debuginfo, no_demangle;
	char *symfs; /* where its debug file is looked for (opts.symfs) */
	/* a cached file: the cache, and the file as it was mapped */
	struct strace_objcache *cache;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct sym *syms;
	size_t nsyms;
	struct alias *aliases; /* by start, STRACE_PLT_PLAIN */
	size_t naliases, capaliases;
	struct perf_sym *psyms; /* perf 6.1 replay: symbols */
	struct perf_iv *iv;     /* ... and the answer per address range */
	size_t niv;
	struct strpool pool; /* synthesized names */
	/* block summaries by file offset, for the walkers of every image
	 * that maps the object (strace_dec_image_block()) */
	pthread_mutex_t blocks_lock;
	struct strace_blockfile_block *blocks;
	size_t blocks_mask, blocks_used;
	int blocks_dirty; /* blocks added since the cache file was read */
	/* the persistent cache (blockfile.c, docs/cache.md), in its
	 * objcache's directory: the object's build-id, read with the file
	 * (bc_lock, bc_tried); the file's bytes, while its symbols are in
	 * use */
	pthread_mutex_t bc_lock;
	_Atomic int bc_tried;
	uint8_t bc_id[STRACE_BLOCKFILE_ID_MAX];
	size_t bc_idn;
	int bc_state; /* enum bc_state */
	void *bc_buf;
	struct strace_blockfile bc;
	int syms_dirty; /* symbols read from the ELF file, not the cache */
	/* the debug file its symbols come from (none: 0), in the cache
	 * file's key: found when the file is looked for (image_cache.c),
	 * and again when the symbols are read from it (symbols.c) */
	struct strace_dec_debug_id debug_id;
	int syms_in_file; /* perf 6.1's symbols and iv are bc's */
	size_t npsyms;
	/* the code that ran (--coverage, image_cov.c): file offset ranges,
	 * under blocks_lock, sorted and merged when the vector fills */
	struct cov_range *cov;
	size_t ncov, capcov;
	/* the conditional branches' outcomes that ran, likewise */
	struct cov_branch *br;
	size_t nbr, capbr;
	struct object *next; /* in the image's list, or the cache's */
};

/* Block summaries are kept by their object as struct strace_blockfile_block
 * (decoder.h; the cache files hold the same records): start is 0, and
 * target (when has_target) is relative to the start. */

struct strace_objcache {
	pthread_mutex_t lock; /* the list, and objects joining it */
	struct object *objs;
	char *dir; /* the persistent cache's, or NULL */
	int coverage; /* strace_objcache_set_coverage() */
};

struct mapping {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;
	struct object *obj;
};

struct strace_image {
	struct mapping *maps; /* sorted by start, disjoint */
	size_t nmaps, cap;
	struct object *objs; /* its own (not those of the cache) */
	struct strace_objcache *cache;
	uint64_t generation;
	int plt_style;
	int no_debuginfo;
	int no_demangle;
	char *symfs;
};

struct cov_range {
	uint64_t off, len; /* file offset, bytes */
};

struct cov_branch {
	uint64_t off;  /* file offset of the conditional branch */
	unsigned seen; /* STRACE_COVBRANCH_TAKEN | _NOT_TAKEN */
};

/* strace_dec_cov_note() - the block [at, at + len) of img ran
 * (image_cov.c); its object keeps it while its cache collects coverage. */
void strace_dec_cov_note(struct strace_image *img, uint64_t at,
			 uint64_t len);

enum bc_state { BC_NONE, BC_MISSED, BC_LOADED, BC_STALE, BC_DAMAGED };

/* strace_dec_strpool_add() - s appended to p. Returns its offset, or -1
 * (no memory). */
long strace_dec_strpool_add(struct strpool *p, const char *s);

/* strace_dec_grow_aliases() - room for one more of o's aliases. Returns
 * 0, -ENOMEM. */
int strace_dec_grow_aliases(struct object *o);

/* strace_dec_build_id() - the GNU build-id of elf into id; returns its
 * length or 0. */
size_t strace_dec_build_id(Elf *elf, uint8_t *id, size_t max);

/*
 * strace_dec_open_regular() - open path to map it, if it is a regular
 * file (image.c says why). Returns the descriptor and *st, -errno, or
 * -ENODEV if path is not a regular file.
 */
int strace_dec_open_regular(const char *path, struct stat *st);

/* strace_dec_section_by_name() - the section of elf called name, its
 * header in *shdr and its index in *idx (may be NULL); NULL if none. */
Elf_Scn *strace_dec_section_by_name(Elf *elf, size_t shstrndx,
				    const char *name, GElf_Shdr *shdr,
				    size_t *idx);

/*
 * strace_dec_debug_find() - the separate debug file of the ELF file rt
 * (at path; under the symfs root, or NULL), where perf 6.1 looks, in its
 * order: the .gnu_debuglink name beside the file, in its .debug/, under
 * /usr/lib/debug/<dir>/; then $HOME/.debug/.build-id/xx/rest/debug; then
 * /usr/lib/debug/.build-id/xx/rest.debug (under a root: those under it
 * only). A file is taken if it is an ELF file with a .symtab and rt's
 * build-id. Mapped in *d (strace_dec_debug_close() it), what it is in
 * d->id, its path in found (may be NULL). Returns 1, or 0 for none.
 */
int strace_dec_debug_find(const char *path, const char *root, Elf *rt,
			  size_t shstrndx, struct strace_dec_debugfile *d,
			  char *found, size_t flen);
void strace_dec_debug_close(struct strace_dec_debugfile *d);

/* strace_dec_image_find_map() - the mapping of img that holds addr, or
 * NULL. The last one found is kept per thread. */
const struct mapping *strace_dec_image_find_map(struct strace_image *img,
						uint64_t addr);

/* strace_dec_bc_ensure() - o's build-id read, and its persistent cache
 * file mapped when there is one (image_cache.c), once. */
void strace_dec_bc_ensure(struct object *o);

/* strace_dec_bc_symbols() - o's symbols from its cache file; 0, or -1
 * when it has none (or no memory: then they are read from the ELF
 * file). */
int strace_dec_bc_symbols(struct object *o);

/*
 * fn(o), run by the first caller only: an object may be shared by images
 * on several threads (struct strace_objcache), and the first ones wait
 * under lock for the one that runs it. The release store of *done pairs
 * with the acquire load here: whoever sees it set sees what fn made.
 */
static inline void strace_dec_once(struct object *o, _Atomic int *done,
				   pthread_mutex_t *lock,
				   void (*fn)(struct object *))
{
	if (likely(atomic_load_explicit(done, memory_order_acquire)))
		return;
	pthread_mutex_lock(lock);
	if (!atomic_load_explicit(done, memory_order_relaxed)) {
		fn(o);
		atomic_store_explicit(done, 1, memory_order_release);
	}
	pthread_mutex_unlock(lock);
}

#endif
