/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf.h - the perf.data codec, the one header other
 * stages include, and its whole API: perf.data's records (perf_format.h,
 * which the capture and pipeline stages build and parse themselves), the
 * reader that maps a file and checks every offset (perf_read.c), the
 * writer of ptrace-capture -w and ptsynth (perf_write.c), perf's pipe
 * mode (perf_pipe.c), build-ids and perf's build-id cache (buildid.c),
 * and the bundles of a recording with its code and their tar files
 * (archive.c, tar.c). The folder's other headers are its own: what its
 * .c files share and nobody else calls (buildid.h, perf_write.h, tar.h).
 *
 * The codec knows perf.data, not Intel PT: it hands out records and AUX
 * data; the pipeline (pt_backend/pipeline/) decodes them.
 */
#ifndef PT_BACKEND_PERF_PERF_H
#define PT_BACKEND_PERF_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "perf_format.h" /* the records, for the stages that use them */
#include "strace/error.h" /* the errors below: strace_strerror() */
#include "strace/internal/perf_time.h" /* struct strace_perf's time */

/* ---------------- the reader (perf_read.c) ------------------------------- */

/*
 * The reader: a perf.data file recorded with intel_pt, mapped read-only;
 * every offset and size read from it is checked against the file before
 * use, so a truncated or hostile file gives an error with the offset
 * where it went wrong, never a crash.
 *
 * Records are returned in file order; for Intel PT the AUX data of one
 * queue (thread or CPU) is returned in the order of its AUXTRACE records.
 *
 * Errors: -STRACE_E_PERF_* (strace/error.h), -STRACE_E_*, -errno.
 */

/* One event attribute of the file. */
struct strace_perf_attr {
	struct perf_event_attr attr; /* zero-extended to our size */
	const uint64_t *ids;         /* sample ids of this attr, in the map */
	size_t nids;
};

/* Parsed sample_id trailer of a kernel record (fields 0 when absent). */
struct strace_perf_sid {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu;
	int has_tid, has_time, has_cpu;
};

/* One record of the data section. */
struct strace_perf_rec {
	uint32_t type;      /* PFMT_RECORD_* */
	uint16_t misc;
	uint16_t size;      /* header.size */
	const void *body;   /* after the header, size - 8 bytes */
	uint64_t offset;    /* file offset of the record */
	struct strace_perf_sid sid;
	/* AUXTRACE only: the trace bytes that follow the record. */
	const uint8_t *aux_data;
	uint64_t aux_size;
	uint64_t aux_missing; /* bytes the record announced that the file
			       * does not hold (a truncated file) */
};

struct strace_perf {
	int fd;
	const uint8_t *map;
	size_t size;
	struct pfmt_file_header hdr;
	struct strace_perf_attr *attrs;
	size_t nattrs;
	int pt_attr;             /* index of the intel_pt attr, -1 if none */
	uint64_t pt_config;      /* its config */
	struct strace_time_conv time; /* from AUXTRACE_INFO */
	int has_time;                 /* time conversion is usable */
	int per_cpu;                  /* per-cpu mmaps (else per-thread) */
	int snapshot;
	uint64_t data_pos;            /* iterator position in the data */
	char path[256];
	int guard;                    /* slot of strace_perf_sigbus(), or -1 */
	struct timespec mtime;        /* the file's when it was opened */
};

/*
 * strace_perf_open() - map and check a perf.data file: header, sections,
 * attrs, and (by a first pass over the records) AUXTRACE_INFO. On error
 * *err_off receives the file offset at fault (0 if none applies). Only a
 * regular file is opened: anything else (a FIFO, whose open would block)
 * gives -STRACE_E_PERF_NOTREG at once. A file cut short meanwhile gives
 * -STRACE_E_PERF_SHRANK, *err_off where its data was lost. An AUXTRACE_INFO
 * whose time_shift no conversion can use (64 or more) gives
 * -STRACE_E_PERF_TIME, *err_off the offset of that 64-bit word.
 * Returns 0, -errno, -STRACE_E_PERF_*.
 */
int strace_perf_open(const char *path, struct strace_perf *p, uint64_t *err_off);
void strace_perf_close(struct strace_perf *p);

/*
 * strace_perf_sigbus() - for the program's SIGBUS handler (SA_SIGINFO,
 * given si_addr). A perf.data that shrinks (truncated, or rewritten by
 * perf record -o) while it is mapped raises SIGBUS at the next touch of a
 * page it lost, on whichever thread touches it. If addr lies in the
 * mapping of an open strace_perf, the mapping from addr's page to its end
 * becomes zero pages and the file is marked as cut there: the handler
 * returns, the access is made again and reads zeros (PAD packets to the
 * decoder; an empty record, which is malformed, to strace_perf_next()), and
 * whatever was reading the file runs to its end, every ring writer closed;
 * strace_perf_cut() then tells it what was lost.
 * Async-signal-safe (atomics and mmap() only); a table of 16 slots holds
 * the open files' mappings, and a file opened while all are taken is not
 * covered. Returns 1 if addr was in a perf.data mapping (return from the
 * handler), else 0 (the fault is not ours: restore the default action
 * and return, so that it kills the process as before).
 */
int strace_perf_sigbus(const void *addr);

/*
 * strace_perf_cut() - the file offset from which p has read zeros because
 * the file shrank under it: the first page strace_perf_sigbus() replaced
 * (what came before was read while it was there), the loss running to
 * the end (*end = UINT64_MAX). If no page was lost that way and
 * check_size is set, an fstat(): a file that now ends inside a page
 * reads as zeros from its end to that page's end, and that may have
 * happened: the loss is [its size, *end). UINT64_MAX if nothing was lost.
 * end may be NULL. Thread-safe.
 */
uint64_t strace_perf_cut(const struct strace_perf *p, int check_size,
			 uint64_t *end);

/* strace_perf_modified() - 1 if the file's modification time is no longer
 * the one it had when opened (it was written meanwhile), else 0. */
int strace_perf_modified(const struct strace_perf *p);

/*
 * strace_perf_feature() - the payload of header feature feat (PFMT_FEAT_*)
 * in the map: *data and *size. Returns 1, 0 if the file has no such
 * feature, -STRACE_E_PERF_TRUNCATED if its section lies outside the file.
 */
int strace_perf_feature(const struct strace_perf *p, unsigned feat,
			const uint8_t **data, uint64_t *size);

/* strace_perf_rewind() - iterate the records from the first again. */
void strace_perf_rewind(struct strace_perf *p);

/*
 * strace_perf_next() - the next record. Returns 1 and *rec, 0 at the end of
 * the data section, or -STRACE_E_PERF_TRUNCATED / -STRACE_E_PERF_RECORD with
 * rec->offset set to the fault (iteration cannot continue past it).
 * An AUXTRACE record whose data the file cuts short is returned with the
 * bytes that are there and aux_missing set; the next call then returns 0.
 */
int strace_perf_next(struct strace_perf *p, struct strace_perf_rec *rec);

/* strace_perf_string() - a NUL-terminated string of at most max bytes at
 * s, or NULL if there is no NUL within max (malformed record). */
const char *strace_perf_string(const void *s, size_t max);

/* A mapping an MMAP or MMAP2 record says was made. */
struct strace_perf_map {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	int exec;          /* code: MMAP2's PROT_EXEC when it has a prot,
			    * else no PFMT_MISC_MMAP_DATA (perf's rule) */
	const char *path;  /* in the record's body */
	const uint8_t *id; /* MMAP2 with PFMT_MISC_MMAP_BUILD_ID: the
			    * build-id (nid bytes) in the body; else NULL */
	size_t nid;
};

/*
 * strace_perf_map_parse() - the mapping of a record of type and misc
 * whose body (after the 8-byte header) is blen bytes. Returns 1 and *m
 * for an MMAP or MMAP2 record, 0 for another type, -STRACE_E_PERF_RECORD
 * for one too short or whose path has no NUL.
 */
int strace_perf_map_parse(uint32_t type, uint16_t misc, const void *body,
			  size_t blen, struct strace_perf_map *m);

/*
 * strace_perf_feature_string() - the k-th string of a header feature's
 * payload (p, size bytes: each a u32 length, then that many bytes,
 * NUL-padded), NUL-terminated into buf (cut to len - 1 bytes). Returns
 * 1, or 0 when the payload has no such string.
 */
int strace_perf_feature_string(const uint8_t *p, uint64_t size, unsigned k,
			       char *buf, size_t len);

/* ---------------- the writer (perf_write.c) ------------------------------ */

/*
 * The writer ("PERFILE2"), of ptrace-capture -w and ptsynth. Usage:
 * strace_perfw_open(), then any number of strace_perfw_add_attr(),
 * strace_perfw_record(), strace_perfw_auxtrace() and
 * strace_perfw_feature() calls in any order, then strace_perfw_close()
 * which writes the attrs, the features (the AUXTRACE index among them if
 * any AUXTRACE record was written) and the file header. Records go to the
 * data section in the order given; the caller builds each record (see
 * perf_format.h), header included. A writer is used by one thread.
 */

struct strace_perfw;

/*
 * Create (truncate) the file at path, mode 0600 as perf's, and return a
 * writer in *out. Returns -errno if the file cannot be created (-ELOOP:
 * path is a symbolic link, never written through), -ENOMEM.
 */
int strace_perfw_open(struct strace_perfw **out, const char *path);

/*
 * Add an event attr and its sample ids. attr->size must be set (bytes of
 * attr that are meaningful, at most sizeof(struct perf_event_attr)).
 * Returns -EINVAL on a bad size, -ENOMEM.
 */
int strace_perfw_add_attr(struct strace_perfw *w,
			  const struct perf_event_attr *attr,
			  const uint64_t *ids, size_t nids);

/*
 * Append one record (its header.size bytes from rec) to the data section.
 * Returns -EINVAL if header.size is not 8-aligned or exceeds size, -errno
 * on a write error.
 */
int strace_perfw_record(struct strace_perfw *w, const void *rec, size_t size);

/*
 * Append an AUXTRACE record and its data, zero-padded to a multiple of 8
 * bytes (PAD packets for Intel PT); rec->size is set to the padded length.
 * Also adds the record to the AUXTRACE index feature.
 * Returns -errno on a write error, -ENOMEM.
 */
int strace_perfw_auxtrace(struct strace_perfw *w, struct pfmt_auxtrace *rec,
			  const void *data, size_t len);

/*
 * Set feature bit feat with a payload (copied). Returns -EINVAL for an
 * unknown bit or PFMT_FEAT_AUXTRACE (the writer owns it), -ENOMEM.
 */
int strace_perfw_feature(struct strace_perfw *w, unsigned int feat,
			 const void *payload, size_t size);

/*
 * Helper for string features: payload "u32 len, string padded to 64".
 * Returns like strace_perfw_feature().
 */
int strace_perfw_feature_string(struct strace_perfw *w, unsigned int feat,
				const char *s);

/* Current size of the data section in bytes. */
uint64_t strace_perfw_data_size(const struct strace_perfw *w);

/*
 * Finish the file and free the writer (also on error).
 * Returns -errno on a write error.
 */
int strace_perfw_close(struct strace_perfw *w);

/* Free a writer without finishing the file; NULL is fine. */
void strace_perfw_free(struct strace_perfw *w);

/* ---------------- pipe mode (perf_pipe.c) -------------------------------- */

/*
 * Pipe mode ('perf record -o -', 'perf inject -o -'): a stream that
 * begins with a 16-byte header and carries in records what a file keeps
 * in its header (HEADER_ATTR, HEADER_FEATURE, TRACING_DATA, BUILD_ID),
 * each AUXTRACE record followed by its data.
 *
 * strace_perf_pipe_copy() reads such a stream as it comes (a pipe, a
 * FIFO, a file) and writes the perf.data file that 'perf record -o FILE'
 * would have written (strace_perfw_*): the attrs and features where a
 * file has them, the other records in order, the AUXTRACE index. The
 * file is then decoded as any other. Memory: one record at a time, and
 * the attrs, features and AUXTRACE index; the data go to the file.
 */

/*
 * strace_perf_pipe_head() - the first 16 bytes of fd into head (a short
 * read of a pipe is read on); whether they are a pipe-mode header
 * ('PERFILE2', header size 16).
 * Returns 1 when they are, 0 when not (or the stream ends before 16
 * bytes), -errno if reading fails.
 */
int strace_perf_pipe_head(int fd, unsigned char head[16]);

/*
 * strace_perf_pipe_copy() - the pipe-mode stream read from fd, whose first
 * 16 bytes (magic and header size) are in head, as a perf.data file at
 * path. *off receives where in the stream an error was found.
 * Returns 0.
 * Returns -STRACE_E_PERF_MAGIC if head is no pipe-mode header.
 * Returns -STRACE_E_PERF_TRUNCATED if the stream ends inside a record.
 * Returns -STRACE_E_PERF_RECORD for a record of a bad size.
 * Returns -errno if reading or writing fails, -ENOMEM.
 */
int strace_perf_pipe_copy(int fd, const unsigned char head[16],
			  const char *path, uint64_t *off);

/* ---------------- build-ids (buildid.c) ---------------------------------- */

/*
 * Build-ids, perf's build-id cache and its BUILD_ID header feature: perf
 * record names the build-id of every object a recording maps (and copies
 * the vDSO it saw into $HOME/.debug/[vdso]/<build-id>/vdso, with a link
 * under .build-id/); perf script and ptrace-capture -i find each object
 * by it, and refuse a file of another build.
 */

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

/* ---------------- tar files (tar.c) -------------------------------------- */

/*
 * The tar files of ptrace-capture --archive: a writer of POSIX ustar
 * archives (directories and regular files, as GNU tar and bsdtar read
 * them) and a reader that extracts an archive that may come from anyone,
 * safely, into a directory of its own.
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
 * The writer and the extractor are the bundles' own (tar.h); a caller
 * probes a file and reads where an extraction stopped.
 *
 * Errors: -STRACE_E_TAR_* (strace/error.h), -errno.
 */

#define STRACE_TAR_BLOCK 512
/* The longest name a ustar header holds: a prefix of 155 bytes, '/', and
 * a name of 100. */
#define STRACE_TAR_NAME_MAX 256

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

/* ---------------- bundles (archive.c) ------------------------------------ */

/*
 * Bundles, record here and decode there: a bundle (one tar file, above)
 * of a perf.data and the code its decode needs, which the decoding
 * machine may not have: every object its mappings name, the vDSO, and
 * facts about the machines. `ptrace-capture --archive` writes it,
 * `ptrace-capture -i BUNDLE.tar` decodes it; GNU tar lists and extracts
 * it, and the extracted root/ serves `perf script --symfs`.
 *
 * Layout, every member under one folder NAME/ (the bundle's file name
 * without .tar):
 *
 *   NAME/perf.data                  the recording, as it is
 *   NAME/MANIFEST                   what the bundle holds (below)
 *   NAME/HOST                       where it was recorded and bundled
 *                                   (text, for a person)
 *   NAME/root/PATH                  each object at its recorded PATH
 *   NAME/root/usr/lib/debug/.build-id/XX/REST.debug
 *                                   the separate debug file of an object
 *                                   without .symtab, where a --symfs
 *                                   decode looks for it
 *   NAME/.debug/[vdso]/HEX/vdso     the vDSO where perf's build-id cache
 *                                   keeps it
 *
 * MANIFEST: the line "ptrace-capture archive 1", comment lines ('#'),
 * then one line per file, four fields separated by tabs: kind
 * (perf.data, object, debug: an object's debug file, vdso, or missing:
 * named by the recording but not bundled), build-id in hex ("-": none),
 * size in bytes ("-" when missing), and the path the recording names
 * ("[vdso]" for the vDSO).
 *
 * Errors: -STRACE_E_TAR_*, -STRACE_E_ARCHIVE_*, -STRACE_E_PERF_* (the
 * perf.data), -errno.
 */

#define STRACE_ARCHIVE_MAGIC "ptrace-capture archive 1"

struct strace_archive_opts {
	size_t size;             /* sizeof(struct strace_archive_opts) */
	const char *perf_path;   /* the recording */
	/* Where its objects are read: under this root, as perf script
	 * --symfs (NULL: at their recorded paths), else perf's build-id
	 * cache buildid_dir (may be NULL), which also holds the vDSO the
	 * recording names. Each must be the build the recording names. */
	const char *symfs;
	const char *buildid_dir;
	const char *vdso_path; /* the vDSO image (NULL: from the cache) */
	const char *tool;      /* who writes it, for HOST ("ptrace-capture
				* 1.0"); NULL: not said */
	/* An object that cannot be bundled (not found, another build):
	 * what and why, one message each; NULL to ignore. */
	void (*warn)(void *arg, const char *msg);
	void *cb_arg;
};

struct strace_archive_stats {
	uint64_t objects;  /* objects bundled, the vDSO among them */
	uint64_t missing;  /* named by the recording, not bundled */
	uint64_t bytes;    /* the bundle's size */
	char folder[256];  /* the folder its members are in */
};

/*
 * strace_archive_write() - the bundle of o->perf_path as the tar file
 * out. It is written under a temporary name beside out and renamed when
 * whole: out is never left half written. Objects that cannot be bundled
 * are warned about and counted (st->missing): the bundle is then partial,
 * and its decode loses the code there, as the recording's would.
 * On a perf.data error *err_off receives the offset at fault.
 * Returns 0.
 * Returns -STRACE_E_PERF_* if the perf.data cannot be read.
 * Returns -ENAMETOOLONG if a name in the bundle would be too long for tar
 * (only for the perf.data, MANIFEST, HOST: an object's is a warning).
 * Returns -ESTALE if the perf.data shrank while it was copied.
 * Returns -errno if out cannot be written.
 */
int strace_archive_write(const struct strace_archive_opts *o, const char *out,
			 struct strace_archive_stats *st, uint64_t *err_off);

/* An extracted bundle: where its parts are. */
struct strace_bundle {
	char dir[4096];         /* the private directory (mkdtemp) */
	char top[4096];         /* dir/NAME */
	char perf_path[4096];   /* dir/NAME/perf.data */
	char symfs[4096];       /* dir/NAME/root: objects at their paths */
	char buildid_dir[4096]; /* dir/NAME/.debug: the vDSO */
	uint64_t members;       /* tar members */
	uint64_t objects;       /* the manifest's bundled objects */
	uint64_t missing;       /* its objects missing when it was made */
	struct strace_tar_made made; /* what extraction made */
};

/* Where opening a bundle failed. */
struct strace_archive_fault {
	struct strace_tar_fault tar; /* extraction (-STRACE_E_TAR_*) */
	unsigned line;               /* MANIFEST's line (0: none) */
	char path[4096];             /* the object at fault (recorded path) */
	char member[4096];           /* its member in the bundle (NAME/...) */
	uint8_t want[STRACE_BUILDID_MAX], got[STRACE_BUILDID_MAX];
	size_t nwant, ngot;          /* the manifest's build-id, the file's */
	uint64_t want_size, got_size;
};

/*
 * strace_archive_open() - extract the bundle at path into a new private
 * directory under tmpdir (NULL: /tmp) and check it against its MANIFEST:
 * one folder, a perf.data, each bundled object of the size and build-id
 * the manifest says. Extraction refuses whatever could write outside
 * the directory (tar.h). On any error everything made is removed and
 * *f says where; on success strace_archive_close() removes it.
 * Returns 0.
 * Returns -STRACE_E_TAR_* if the tar is damaged or hostile (f->tar).
 * Returns -STRACE_E_ARCHIVE_MANIFEST if there is not one folder holding
 * a perf.data and a MANIFEST, or MANIFEST is malformed (f->line).
 * Returns -STRACE_E_ARCHIVE_OBJECT if an object is missing from the
 * bundle or is not the manifest's (f->path, f->member, sizes and ids).
 * Returns -errno (e.g. making the directory), -ENOMEM.
 */
int strace_archive_open(const char *path, const char *tmpdir,
			struct strace_bundle *b,
			struct strace_archive_fault *f);

/*
 * strace_archive_remove() - remove what b's extraction made and its
 * directory, with unlink() and rmdir() only: async-signal-safe (for a
 * handler of SIGINT and SIGTERM), nothing freed. Returns 0 or -errno.
 */
int strace_archive_remove(const struct strace_bundle *b);

/* strace_archive_close() - remove the extracted bundle
 * (strace_archive_remove()) and free b's list. Returns 0 or -errno. */
int strace_archive_close(struct strace_bundle *b);

#endif /* PT_BACKEND_PERF_PERF_H */
