/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf_read.h - read a perf.data file recorded with intel_pt.
 *
 * The file is mapped read-only; every offset and size read from it is
 * checked against the file before use, so a truncated or hostile file
 * gives an error with the offset where it went wrong, never a crash.
 *
 * Records are returned in file order; for Intel PT the AUX data of one
 * queue (thread or CPU) is returned in the order of its AUXTRACE records.
 */
#ifndef PT_BACKEND_PERF_PERF_READ_H
#define PT_BACKEND_PERF_PERF_READ_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "perf_format.h"
#include "strace/error.h" /* its errors */
#include "strace/internal/perf_time.h"

/* Errors: -STRACE_E_PERF_* (strace/error.h), -STRACE_E_*, -errno. */

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

#endif /* PT_BACKEND_PERF_PERF_READ_H */
