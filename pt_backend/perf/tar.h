/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/tar.h - the tar files of ptrace-capture --archive: a
 * writer of POSIX ustar archives (directories and regular files, as GNU
 * tar and bsdtar read them) and a reader that extracts an archive that
 * may come from anyone, safely, into a directory of its own.
 *
 * The reader takes only what the writer makes: directories and regular
 * files under relative names. Anything else is refused before a byte of
 * that member is written, with the member's offset and name: a name that
 * is absolute or has '.', '..' or empty components (it could leave the
 * directory), or is not printable; symbolic and hard links, devices,
 * FIFOs, GNU and pax extension headers; a header whose checksum is
 * wrong or whose numbers are no numbers; a member the file cuts short,
 * an archive that ends without its two zero blocks; a name given twice.
 * Files are created with O_EXCL | O_NOFOLLOW under directories opened
 * with O_NOFOLLOW, one component at a time, so nothing outside the
 * directory is ever written, whatever the archive says.
 *
 * Sizes up to 8 GiB are octal, as ustar has them; larger ones are written
 * and read in GNU tar's base-256 form.
 *
 * Errors: -STRACE_E_TAR_* (strace/error.h), -errno.
 */
#ifndef PT_BACKEND_PERF_TAR_H
#define PT_BACKEND_PERF_TAR_H

#include <stddef.h>
#include <stdint.h>

#define STRACE_TAR_BLOCK 512
/* The longest name a ustar header holds: a prefix of 155 bytes, '/', and
 * a name of 100. */
#define STRACE_TAR_NAME_MAX 256

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

/* --- reader -------------------------------------------------------------- */

/*
 * strace_tar_probe() - whether the len bytes at head (the start of a file,
 * 512 bytes or more) begin with a tar header: ustar's magic ("ustar\0"
 * "00", or GNU tar's "ustar  \0") and a checksum that matches. Returns
 * 1 or 0.
 */
int strace_tar_probe(const void *head, size_t len);

/* Where an extraction stopped, for the message. */
struct strace_tar_fault {
	uint64_t offset;                 /* of the member's header, or where
					  * the archive ends */
	char name[STRACE_TAR_NAME_MAX];  /* the member's name as far as it
					  * can be shown ("" if none) */
	char type;                       /* its type flag ('2': a symlink) */
};

/*
 * A list of what an extraction made, in the order it made it: the paths
 * (absolute, under the directory), directories flagged, so that it can be
 * removed with unlink() and rmdir() alone, in a signal handler too
 * (strace_tar_made_remove()).
 */
struct strace_tar_made {
	char **path;
	unsigned char *is_dir;
	size_t n, cap;
};

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
