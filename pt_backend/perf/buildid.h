/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/buildid.h - what of the BUILD_ID feature buildid.c and
 * archive.c share beyond perf.h: parsing a build-id, walking the
 * feature's entries. Private to pt_backend/perf/.
 */
#ifndef PT_BACKEND_PERF_BUILDID_H
#define PT_BACKEND_PERF_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/* strace_buildid_parse() - the hex string s (2 to 40 digits, even) into
 * id. Returns its length in bytes, or -EINVAL. */
int strace_buildid_parse(const char *s, uint8_t *id);

/*
 * strace_buildid_next() - iterate the entries of a BUILD_ID feature
 * payload: the one at *at (start at 0), its name (in feat, NUL-terminated)
 * into *name and its build-id into id; *at moves past it. Returns its
 * build-id's length (an entry may have none: 0), -2 at the end, -1 if
 * the payload is malformed there.
 */
int strace_buildid_next(const uint8_t *feat, uint64_t size, uint64_t *at,
			const char **name, uint8_t *id);

#endif /* PT_BACKEND_PERF_BUILDID_H */
