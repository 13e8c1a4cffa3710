/* SPDX-License-Identifier: MIT */
/*
 * decoder/dwarf_int.h - what the DWARF layer's two files share
 * (dwarf.c: objects, strings, line tables; dwarf_funcs.c: inline chains
 * and functions); not installed.
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

/* One range of an inlined instance, of a unit's table (struct cutab). */
struct ient {
	uint64_t lo, hi;
	uint32_t depth; /* in the unit's tree: the inner, the deeper */
	unsigned call_line;
	const char *name, *call_file;
};

/* The inlined instances of one unit, read in one walk of its DIEs on
 * the first chain asked for in it (dwarf_getscopes() walks the unit
 * twice per address: 0.6 ms an address in libc), sorted by lo. */
struct cutab {
	Dwarf_Off off;
	struct ient *v;
	size_t n, cap;
};

struct dobj {
	char *path; /* as asked (not under symfs) */
	/* another path of an object opened already (the same build-id:
	 * /lib/... and /usr/lib/... on a merged /usr): that one is used */
	struct dobj *same;
	uint8_t id[20];
	size_t idn;
	uint64_t text_base;
	int has_text_base;
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
	struct cutab *cus; /* the units' inlined instances, read so far */
	size_t ncus, capcus;
	struct frow *funcs; /* the functions' ranges, sorted (funcs_read) */
	size_t nfuncs, capfuncs;
	int funcs_read;
	int raw_decl; /* funcs_walk: decl files as DWARF names them */
};

struct strace_dwarf {
	char *symfs;
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

#endif /* DECODER_DWARF_INT_H */
