/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/buildid.h - build-ids, perf's build-id cache and its
 * BUILD_ID header feature: perf record names the build-id of every object
 * a recording maps (and copies the vDSO it saw into
 * $HOME/.debug/[vdso]/<build-id>/vdso, with a link under .build-id/);
 * perf script and ptrace-capture -i find each object by it, and refuse a
 * file of another build.
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

/*
 * strace_buildid_of_file() - the GNU build-id of the ELF file at path
 * (its PT_NOTE segments, read with pread: the file is not mapped) into
 * id. A path that is not a regular file is not opened.
 * Returns its length, 0 when the file is no 64-bit ELF file or has none,
 * -ENODEV for a path that is not a regular file, -errno.
 */
int strace_buildid_of_file(const char *path, uint8_t *id);

/* strace_buildid_hex() - id (n bytes) in lower-case hex into out (at
 * least 2 * n + 1 bytes); "" for n 0. Returns out. */
char *strace_buildid_hex(const uint8_t *id, size_t n, char *out);

/* strace_buildid_parse() - the hex string s (2 to 40 digits, even) into
 * id. Returns its length in bytes, or -EINVAL. */
int strace_buildid_parse(const char *s, uint8_t *id);

/* What strace_buildid_locate() found or looked at. */
struct strace_buildid_found {
	char file[4096]; /* the file taken, else the first one looked at */
	uint8_t id[STRACE_BUILDID_MAX]; /* that file's build-id */
	size_t n;                       /* its length; 0: none */
	int from_cache;                 /* taken from the build-id cache */
};

/*
 * strace_buildid_locate() - the file that holds the object a recording
 * names path, of build-id want (nwant bytes; 0 when the recording names
 * none), looked for as perf looks: at path, or at symfs/path when symfs
 * is set; then, when want is known, in perf's build-id cache at
 * cache_dir (may be NULL): <cache_dir>/.build-id/<xx>/<rest>/elf and
 * <cache_dir>/<path>/<hex>/elf. A file whose build-id is not want, or
 * that has none, is never taken. A path that is not absolute ("//anon",
 * "[heap]") is looked at as it is.
 * Returns 0 and out->file (with nwant 0: the path looked at, which may
 * not exist).
 * Returns -STRACE_E_PERF_BUILDID if the file at (symfs/)path has another
 * build-id or none and the cache has no file of want: out->file and
 * out->id say which file and what it has.
 * Returns -ENOENT if no file was found (out->file: the path looked at),
 * -ENODEV if it is not a regular file, other -errno if it cannot be read.
 */
int strace_buildid_locate(const char *path, const uint8_t *want,
			  size_t nwant, const char *symfs,
			  const char *cache_dir,
			  struct strace_buildid_found *out);

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
