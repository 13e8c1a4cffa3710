/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/buildid.h - perf's build-id cache and its BUILD_ID header
 * feature, for the vDSO: perf record copies the vDSO it saw into
 * $HOME/.debug/[vdso]/<build-id>/vdso (with a link under .build-id/) and
 * names its build-id in the perf.data; perf script and ptrace-capture -i
 * find it there.
 */
#ifndef PT_BACKEND_PERF_BUILDID_H
#define PT_BACKEND_PERF_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define STRACE_BUILDID_MAX 20

/*
 * strace_buildid_of() - the GNU build-id of the 64-bit ELF image in buf
 * (len bytes, e.g. a vDSO dump: its PT_NOTE segments) into id. Returns
 * its length, or 0 when buf is no such image or has none.
 */
size_t strace_buildid_of(const void *buf, size_t len, uint8_t *id);

/* strace_buildid_dir() - perf's cache directory: $PERF_BUILDID_DIR, else
 * $HOME/.debug; NULL if neither is set. Into buf (len bytes). */
const char *strace_buildid_dir(char *buf, size_t len);

/* strace_buildid_vdso_path() - <dir>/[vdso]/<hex>/vdso into out. Returns
 * 0, or -ENAMETOOLONG. */
int strace_buildid_vdso_path(const char *dir, const uint8_t *id, size_t n,
			     char *out, size_t outlen);

/*
 * strace_buildid_vdso_add() - put a vDSO image into the cache as perf
 * does: the file <dir>/[vdso]/<hex>/vdso (kept if already there) and the
 * link <dir>/.build-id/<xx>/<rest> -> ../../[vdso]/<hex>. Returns 0 or
 * -errno.
 */
int strace_buildid_vdso_add(const char *dir, const uint8_t *id, size_t n,
			    const void *buf, size_t len);

/*
 * strace_buildid_entry() - one entry of the BUILD_ID feature (perf's
 * build_id_event: header with misc USER|BUILD_ID_SIZE, pid, the id in 24
 * bytes with its size, the name padded to 64) appended to *buf (*len
 * bytes, realloc'd). Returns 0 or -ENOMEM.
 */
int strace_buildid_entry(uint8_t **buf, size_t *len, int32_t pid,
			 const uint8_t *id, size_t n, const char *name);

/*
 * strace_buildid_find() - the build-id the BUILD_ID feature payload (feat,
 * size bytes) gives the object called name, into id (STRACE_BUILDID_MAX
 * bytes). Returns its length, 0 if none, -1 if the payload is malformed.
 */
int strace_buildid_find(const uint8_t *feat, uint64_t size, const char *name,
			uint8_t *id);

#endif /* PT_BACKEND_PERF_BUILDID_H */
