/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf_pipe.h - perf's pipe mode ('perf record -o -',
 * 'perf inject -o -'): a stream that begins with a 16-byte header and
 * carries in records what a file keeps in its header (HEADER_ATTR,
 * HEADER_FEATURE, TRACING_DATA, BUILD_ID), each AUXTRACE record followed
 * by its data.
 *
 * strace_perf_pipe_copy() reads such a stream as it comes (a pipe, a
 * FIFO, a file) and writes the perf.data file that 'perf record -o FILE'
 * would have written (strace_perfw_*): the attrs and features where a
 * file has them, the other records in order, the AUXTRACE index. The
 * file is then decoded as any other. Memory: one record at a time, and
 * the attrs, features and AUXTRACE index; the data go to the file.
 */
#ifndef PT_BACKEND_PERF_PERF_PIPE_H
#define PT_BACKEND_PERF_PERF_PIPE_H

#include <stdint.h>

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

#endif
