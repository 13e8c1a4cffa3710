/* SPDX-License-Identifier: MIT */
/*
 * decoder/blockfile.h - the persistent cache files' records and calls
 * that only the decoder uses (blockfile.c, image_cache.c, docs/cache.md):
 * the symbols and perf 6.1's lookup points a file holds, the symbol
 * options in its key, its checks and its lookup. What the dlfilter uses
 * too (the block records, the key, load, merge, write) is in decoder.h.
 */
#ifndef DECODER_BLOCKFILE_H
#define DECODER_BLOCKFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/decoder.h"

/* A lookup point of perf 6.1's symbol tree in a cache file: the symbol
 * answering at (point) and after it (after), -1 for none. */
struct strace_blockfile_point {
	uint64_t at;
	int32_t point, after;
};

/* A symbol in a cache file: its name an offset in the file's pool. */
struct strace_blockfile_sym {
	uint64_t start, end;
	uint64_t name; /* (the place of a pointer: see image_cache.c) */
	uint8_t bind, type, pad_[6];
	uint64_t vis_end;
};
/* STRACE_PLT_PLAIN: a strace_blockfile_sym of this type is another name
 * of the symbol before it (same start), not a symbol */
#define STRACE_BLOCKFILE_ALIAS 0xff

/* the symbol options a file's symbols were read with: plt_style in bits
 * 0-7, no_debuginfo bit 8, no_demangle bit 9 */
/* (the revision of STRACE_PLT_PLAIN's rules, bits 10-17: a cache made
 * under other rules is stale) */
#define STRACE_PLT_PLAIN_REV 2
#define STRACE_BLOCKFILE_SYMOPTS(plt, nodebug, nodemangle)                    \
	((uint32_t)(plt) | (nodebug ? 1u << 8 : 0) |                          \
	 (nodemangle ? 1u << 9 : 0) |                                         \
	 ((plt) == STRACE_PLT_PLAIN ? (uint32_t)STRACE_PLT_PLAIN_REV << 10 : 0))
#define STRACE_BLOCKFILE_PERF61(symopts)                                      \
	(((symopts) & 0xff) == STRACE_PLT_PERF61)

/* strace_blockfile_path() - DIR/BUILDID.blocks (BUILDID.OPTS.blocks for other
 * symbol options) in buf. Returns its length, 0 if it does not fit. */
size_t strace_blockfile_path(char *buf, size_t max, const char *dir,
			     const struct strace_blockfile_key *key);

/* strace_blockfile_parse() - check a cache file's bytes (8-byte aligned)
 * and point *out into them: made from want (NULL: any object, for the
 * fuzzer), the checksum right (verify), every record within its bounds.
 * Returns 0, -ESTALE (made from another file or options),
 * -STRACE_E_BADARG (damaged). */
int strace_blockfile_parse(const void *buf, size_t len,
			   const struct strace_blockfile_key *want, int verify,
			   struct strace_blockfile *out);

/* strace_blockfile_seal() - make buf (a cache file's bytes, 8-byte aligned)
 * claim to be made from key by this build (its magic and version), with a
 * checksum that holds: for the fuzzer, which tests what a forged file can
 * do. Returns 0, or -STRACE_E_BADARG when buf is shorter than a header. */
int strace_blockfile_seal(void *buf, size_t len,
			  const struct strace_blockfile_key *key);

/* strace_blockfile_find() - the block of key in c (its blocks are in the
 * order of their keys: parse checks it), or NULL. */
const struct strace_blockfile_block *
strace_blockfile_find(const struct strace_blockfile *c, uint64_t key);

#endif
