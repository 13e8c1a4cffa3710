/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/tar.h - the tar writer and the extractor, the bundles'
 * own (archive.c; perf.h says what the tar files are and holds what a
 * caller sees of them: the probe, struct strace_tar_fault and
 * struct strace_tar_made). Private to pt_backend/perf/ (and its tests).
 */
#ifndef PT_BACKEND_PERF_TAR_H
#define PT_BACKEND_PERF_TAR_H

#include <stddef.h>
#include <stdint.h>

#include "perf.h"

/* --- writer -------------------------------------------------------------- */

struct strace_tarw;

/*
 * strace_tarw_open() - create (truncate) the archive at path.
 * Returns 0 and *out, -errno, -ENOMEM.
 */
int strace_tarw_open(struct strace_tarw **out, const char *path);

/*
 * strace_tarw_dir() - a directory member called name (no trailing '/'),
 * with modification time mtime (seconds since the epoch).
 * Returns 0, -EINVAL for a name that is empty, absolute or has '.',
 * '..' or empty components, -ENAMETOOLONG for a name that no ustar
 * header holds, -errno on a write error.
 */
int strace_tarw_dir(struct strace_tarw *w, const char *name, int64_t mtime);

/*
 * strace_tarw_bytes() - a regular file member called name holding the
 * len bytes at buf. Returns like strace_tarw_dir().
 */
int strace_tarw_bytes(struct strace_tarw *w, const char *name,
		      const void *buf, size_t len, int64_t mtime);

/*
 * strace_tarw_file() - a regular file member called name holding the file
 * at src (its size, mode and modification time when opened); its size
 * into *size (may be NULL). A src that is not a regular file is not
 * opened (a FIFO would block). Returns like strace_tarw_dir(), and
 * -ENODEV for a src that is not a regular file, -ESTALE if it shrank
 * while it was copied, -errno if it cannot be opened or read (the
 * archive is then as before the call).
 */
int strace_tarw_file(struct strace_tarw *w, const char *name,
		     const char *src, uint64_t *size);

/* strace_tarw_size() - bytes written so far. */
uint64_t strace_tarw_size(const struct strace_tarw *w);

/*
 * strace_tarw_close() - the two zero blocks that end the archive, padded
 * to a whole record of 10240 bytes as tar writes it; the writer is freed
 * (also on error). Returns 0, -errno on a write error.
 */
int strace_tarw_close(struct strace_tarw *w);

/* strace_tarw_free() - free a writer without finishing the archive (the
 * caller removes the file); NULL is fine. */
void strace_tarw_free(struct strace_tarw *w);

/* --- extractor ----------------------------------------------------------- */

/*
 * strace_tar_extract() - the members of the archive at path into dir (an
 * existing directory, best empty and private: mkdtemp()), each file and
 * directory it makes appended to *made (may be NULL; zeroed by the
 * caller before the first use). On a refusal *f says where.
 * Returns the number of members extracted.
 * Returns -STRACE_E_TAR_HEADER if a header's checksum is wrong (or the
 * file is no tar archive).
 * Returns -STRACE_E_TAR_NAME for an unsafe member name.
 * Returns -STRACE_E_TAR_TYPE for a member that is neither a regular file
 * nor a directory.
 * Returns -STRACE_E_TAR_FIELD for a number field that is no number.
 * Returns -STRACE_E_TAR_TRUNCATED if the file ends inside a member or
 * before the zero blocks that end an archive.
 * Returns -STRACE_E_TAR_DUP for a name that came before (or a file where
 * a directory was, or the other way round).
 * Returns -errno if reading or writing fails, -ENOMEM.
 */
int strace_tar_extract(const char *path, const char *dir,
		       struct strace_tar_made *made,
		       struct strace_tar_fault *f);

/*
 * strace_tar_made_remove() - remove what *made lists, the last made
 * first, with unlink() and rmdir() only (async-signal-safe; nothing is
 * freed). Returns 0, or the first -errno (the rest is still tried).
 */
int strace_tar_made_remove(const struct strace_tar_made *made);

/* strace_tar_made_free() - free the list (not the files). */
void strace_tar_made_free(struct strace_tar_made *made);

#endif /* PT_BACKEND_PERF_TAR_H */
