/* SPDX-License-Identifier: MIT */
/*
 * decoder/internal.h - shared between the decoder's files; not installed.
 * Allocation, the same-symbol test, the errata set, perf's symbol
 * choice. Functions here are strace_dec_*: the decoder's
 * archive exports no name without the project prefix. The walker's own
 * headers are walker.h and the layer headers it includes.
 */
#ifndef DECODER_INTERNAL_H
#define DECODER_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>

#include "decoder/decoder.h"
#include "decoder/image_block.h" /* the walker's block look-ups */

/* The errata worked around when the trace's processor is not known (or
 * not in libipt 2.0.5's table: a newer model). */
#define STRACE_ERRATA_UNKNOWN_CPU                                              \
	(STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_BDM64 | STRACE_ERRATUM_SKD010 |  \
	 STRACE_ERRATUM_SKD022 | STRACE_ERRATUM_SKL014 | STRACE_ERRATUM_APL12)

/* strace_dec_cpu_workarounds() - the STRACE_ERRATUM_* bits both decoders
 * apply to a trace of cpu: its errata when the table lists it, else the
 * set above. */
unsigned strace_dec_cpu_workarounds(const struct strace_pt_cpu *cpu);

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* strace_dec_zalloc() - n zeroed elements of size bytes, each page
 * written now: a hash table that calloc() leaves to the zero page is read
 * there first, and its first write to each page is then a copy-on-write
 * fault that flushes the TLB of every CPU running the process (in a
 * parallel decode, an interrupt to each other worker). NULL when out of
 * memory. */
static inline void *strace_dec_zalloc(size_t n, size_t size)
{
	volatile char *p = calloc(n, size);

	/* (a memset() after malloc() would be made a calloc() by the
	 * compiler) */
	for (size_t i = 0; p && i < n * size; i += 4096)
		p[i] = 0;
	return (void *)(uintptr_t)p;
}

/* Bytes of trace between two calls of strace_walk_opts.progress. */
#define PROGRESS_STEP (256u << 10)

/* strace_dec_image_load_all_symbols() - read every object's symbols now
 * (before walkers on several threads share the image: they would wait for
 * each other's first lookups). */
void strace_dec_image_load_all_symbols(struct strace_image *img);

/* strace_dec_same_symbol() - whether from and to lie in one symbol of img
 * (the same start in the same object); two addresses without a symbol
 * count as the same, one without and one with as different. Both decoders
 * drop the jump events inside one symbol by it. Inline: a jump of the
 * reference decoder asks it. */
static inline int strace_dec_same_symbol(struct strace_image *img,
					 uint64_t from, uint64_t to)
{
	struct strace_symbol a, b;
	int ra = strace_image_symbol(img, from, &a);
	int rb = strace_image_symbol(img, to, &b);

	if (ra && rb)
		return 1;
	if (ra || rb)
		return 0;
	return a.start == b.start && a.dso == b.dso;
}

/*
 * The summary of the block at ip of code in mode (enum strace_code_mode),
 * as strace_block_decode_mode() gives it from the image's code (NOCODE
 * where there is none), decoded once for all the images that map the
 * same file (see image_block.c; kept by offset and mode). A direct
 * branch whose target lies in the block's mapping has STRACE_BF_SYM_KNOWN, and
 * STRACE_BF_SAME_SYM when the target is in the terminator's symbol (both
 * then depend on the file and its symbols alone); other blocks have
 * neither. Safe from walkers on several threads. Returns 0, -ENOMEM.
 */
int strace_dec_image_block(struct strace_image *img, uint64_t ip,
			   unsigned mode, struct strace_block *out);

/*
 * strace_dec_newer_branch_at() - whether a branch newer than libipt 2.0.5
 * and Capstone 4 (JMPABS, ERETS, ERETU, UIRET: summary.c) starts at an
 * instruction from ip to last, or at the one after last (64 instructions
 * at most), for the reference decoder to name what libipt could not
 * decode. Returns 1 or 0.
 */
int strace_dec_newer_branch_at(struct strace_image *img, uint64_t ip,
			       uint64_t last);

/* perf's choose_best_symbol() between two symbols at one address (length,
 * ELF binding, name): 1 if the second wins. Shared by the image's own
 * table and the replay of perf's symbol tree. */
int strace_dec_perf_choose_best(uint64_t la, int binda, const char *namea,
				uint64_t lb, int bindb, const char *nameb);

/* perf 6.1's symbol tree, replayed (decoder/perfsym.c). s[0..n_symtab)
 * are the .symtab symbols in table order, s[n_symtab..n_elf) the .dynsym
 * ones (a second pass with its own fix-ups), s[n_elf..n_all) the PLT
 * entries in insertion order; fix-ups change their ends. *out gets sorted points:
 * the symbol index answering an address equal to at (point) and the
 * addresses after it up to the next point (after); -1 for none. */
struct perf_sym {
	uint64_t start, end;
	const char *name;
	uint8_t bind;
	/* set by strace_dec_perf61_index(): perf's lookup answers this
	 * symbol for every address of [start, vis_end), and not at vis_end -
	 * a symbol definition of that size names addresses as perf does */
	uint64_t vis_end;
};
struct perf_iv {
	uint64_t at;
	int point, after;
};
int strace_dec_perf61_index(struct perf_sym *s, size_t n_symtab,
			    size_t n_elf, size_t n_all, struct perf_iv **out,
			    size_t *nout);

/* strace_demangle() - perf 6.1's demangled name of sym (C++, OCaml) in
 * buf, or sym itself when it is not mangled. */
const char *strace_demangle(const char *sym, char *buf, size_t max);

#endif
