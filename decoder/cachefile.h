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

struct stat;

/* strace_dec_cache_dir() - dir opened (a directory; its path may pass
 * through links) and checked: the effective user's, and no one else may
 * write into it. Its files are then opened relative to the descriptor,
 * so that the directory checked is the one used even if a directory
 * above it changes. Returns the descriptor, -errno, or -EPERM (another
 * user's, or writable by group or others: *st, when st is given, says
 * which). */
int strace_dec_cache_dir(const char *dir, struct stat *st);

/* strace_dec_cache_write() - buf (len bytes) as the file name in dir
 * (made, 0700, if missing; checked as strace_dec_cache_dir() does):
 * written to a new file of our own beside it (O_EXCL, O_NOFOLLOW, 0600)
 * and renamed over it, so that a reader sees the old file or the new one
 * whole and nothing already there is written through. Returns 0,
 * -errno, -EPERM (dir refused). */
int strace_dec_cache_write(const char *dir, const char *name,
			   const void *buf, size_t len);

/* strace_dec_cache_map() - the regular file name in dir (checked as
 * above; a link not followed) mapped read-only whole at *buf (*len
 * bytes; munmap() it), if its size is in [min, max]. Returns 0, -errno,
 * -ENOENT (dir refused), -STRACE_E_BADARG (a link, not a regular file,
 * or its size out of bounds). */
int strace_dec_cache_map(const char *dir, const char *name, size_t min,
			 size_t max, void **buf, size_t *len);

#endif
