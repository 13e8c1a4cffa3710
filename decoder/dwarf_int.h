/* SPDX-License-Identifier: MIT */
/*
 * decoder/dwarf_int.h - what the DWARF layer's files share (dwarf.c:
 * objects, strings, line tables; dwarf_funcs.c: inline chains and
 * functions; dwarf_cache.c: their tables kept between runs); not
 * installed.
 */
#ifndef DECODER_DWARF_INT_H
#define DECODER_DWARF_INT_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/decoder.h"

/* One row of a line table. end: the row ends a sequence (its address is
 * past the sequence's last instruction); seq: the row's order in the
 * object's tables, so that rows at one address keep their order. */
struct row {
	uint64_t addr;
	const char *file;
	uint32_t line;
	uint32_t end : 1, stmt : 1, seq : 30;
};

/* A memoised inline chain: the chain of addr is inl[off .. off + n). */
struct memo {
	uint64_t addr;
	uint32_t off, n;
	int used;
};

/* One range of a function with code, and its declaration. */
struct frow {
	uint64_t lo, hi;
	const char *file;
	unsigned line;
};

/* One range of a function with code, as DWARF gives them (unit by unit):
 * its name, its declaration's file joined with the unit's directory
 * (file) and as DWARF names it (raw: what uftrace prints). */
struct fent {
	uint64_t lo, hi;
	const char *name, *file, *raw;
	unsigned line;
};

/* One range of an inlined instance. */
struct ient {
	uint64_t lo, hi;
	uint32_t depth; /* in the unit's tree: the inner, the deeper */
	unsigned call_line;
	const char *name, *call_file;
};

/* An address range of a unit (.debug_aranges, as dwarf_addrdie() finds
 * a unit) and the unit's inlined instances: dobj's ients[first, first +
 * n), sorted by lo. */
struct unit {
	uint64_t lo, hi;
	uint32_t first, n;
};

/* The tables, as dwarf_cache.c names their files. */
enum { DC_LINES = 1, DC_FUNCS, DC_INLINE, DC_KINDS };

struct dobj {
	char *path; /* as asked (not under symfs) */
	/* another path of an object opened already (the same build-id:
	 * /lib/... and /usr/lib/... on a merged /usr): that one is used */
	struct dobj *same;
	uint8_t id[20];
	size_t idn;
	uint64_t text_base;
	int has_text_base;
	/* the file the DWARF comes from (the object or its debug file):
	 * what the cached tables were made from (dwarf_cache.c) */
	uint64_t dsize, dmtime_sec, dmtime_nsec;
	int fd;
	Elf *elf;
	Dwarf *dw; /* NULL: no debug information */
	struct row *rows;
	size_t nrows;
	int rows_read;
	struct memo *memo; /* open addressing, nmemo a power of two */
	size_t nmemo, used;
	struct strace_inline *inl;
	size_t ninl, capinl;
	char **names; /* demangled names we own */
	size_t nnames, capnames;
	char **strs; /* file names joined with their comp dir: a set */
	size_t nstrs, capstrs;
	/* the inlined instances of every unit, read (or loaded) in one go
	 * on the first chain asked for (dwarf_getscopes() walks a unit
	 * twice per address: 0.6 ms an address in libc) */
	struct unit *units; /* sorted by lo */
	size_t nunits;
	struct ient *ients;
	size_t nients;
	int inl_read;
	struct fent *fns; /* every function with code (fns_read) */
	size_t nfns;
	int fns_read;
	struct frow *funcs; /* fns by lo, raw files (function_line) */
	size_t nfuncs;
	int funcs_built;
	/* the cache files the tables point into, mapped (dwarf_cache.c) */
	void *maps[DC_KINDS];
	size_t maplen[DC_KINDS];
};

struct strace_dwarf {
	char *symfs;
	char *cache_dir; /* NULL: no cache */
	struct dobj **objs;
	size_t nobjs, capobjs;
	struct dobj *last;
};

/* strace_dec_dwarf_obj() - the object at path, opened on first use (an
 * object of the same build-id opened already is taken for it); NULL only
 * without memory. */
struct dobj *strace_dec_dwarf_obj(struct strace_dwarf *d, const char *path);

/* strace_dec_dwarf_file() - a file name f of the unit cu as addr2line
 * prints it (joined with the unit's comp dir when relative), owned by o;
 * NULL for NULL or without memory. */
const char *strace_dec_dwarf_file(struct dobj *o, Dwarf_Die *cu,
				  const char *f);

/* strace_dec_dwarf_cache_load() - o's table kind (DC_*) from its cache
 * file, if there is a good one (the tables then point into the file,
 * kept mapped until o is freed). Returns 1 loaded, 0 not (none, stale,
 * damaged, no cache, no memory): the table is to be read from DWARF. */
int strace_dec_dwarf_cache_load(const struct strace_dwarf *d, struct dobj *o,
				int kind);

/* strace_dec_dwarf_cache_save() - o's table kind into its cache file (a
 * file that cannot be written is left: the next run reads the DWARF). */
void strace_dec_dwarf_cache_save(const struct strace_dwarf *d,
				 const struct dobj *o, int kind);

#endif /* DECODER_DWARF_INT_H */
