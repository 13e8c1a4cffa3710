/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf_write.h - write a perf.data file ("PERFILE2").
 *
 * Usage: strace_perfw_open(), then any number of strace_perfw_add_attr(),
 * strace_perfw_record(), strace_perfw_auxtrace() and
 * strace_perfw_feature() calls in any order, then strace_perfw_close()
 * which writes the attrs, the features (the AUXTRACE index among them if
 * any AUXTRACE record was written) and the file header. Records go to the
 * data section in the order given; the caller builds each record (see
 * perf_format.h), header included. A writer is used by one thread.
 */
#ifndef PT_BACKEND_PERF_PERF_WRITE_H
#define PT_BACKEND_PERF_PERF_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "perf_format.h"

struct strace_perfw;

/*
 * Create (truncate) the file at path and return a writer in *out.
 * Returns -errno if the file cannot be created, -ENOMEM.
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

/* strace_perf_pwrite_all() - len bytes of buf to fd at *pos (through
 * short writes and EINTR), *pos moved past them. Returns 0 or -errno. */
int strace_perf_pwrite_all(int fd, const void *buf, size_t len,
			   uint64_t *pos);

#endif
