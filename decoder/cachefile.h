/* SPDX-License-Identifier: MIT */
/*
 * decoder/cachefile.h - what every persistent cache file of the decoder
 * shares (cachefile.c; docs/cache.md): its checksum, how it is written
 * (whole, atomically) and how it is read (mapped). The block cache
 * (blockfile.c) and the DWARF tables (dwarf_cache.c) use them. Not
 * installed.
 */
#ifndef DECODER_CACHEFILE_H
#define DECODER_CACHEFILE_H

#include <stddef.h>
#include <stdint.h>

/* strace_dec_cache_checksum() - a 64-bit hash of p[0..len), the 8 bytes
 * at skip (8-aligned, in the first 32 bytes: the checksum's own place)
 * taken as zero. Finds damage, not forgery (a forged file is still
 * bounded by its reader). */
uint64_t strace_dec_cache_checksum(const uint8_t *p, size_t len,
				   size_t skip);

/* strace_dec_cache_write() - buf (len bytes) as the file path, under
 * dir (made, 0700, if missing): written to a file of our own beside it
 * and renamed over it, so that a reader sees the old file or the new one
 * whole. Returns 0 or -errno. */
int strace_dec_cache_write(const char *dir, const char *path,
			   const void *buf, size_t len);

/* strace_dec_cache_map() - the regular file path mapped read-only whole
 * at *buf (*len bytes; munmap() it), if its size is in [min, max].
 * Returns 0, -errno, -STRACE_E_BADARG (not a regular file, or its size
 * out of bounds). */
int strace_dec_cache_map(const char *path, size_t min, size_t max,
			 void **buf, size_t *len);

#endif
