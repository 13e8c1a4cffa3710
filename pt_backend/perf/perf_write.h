/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf_write.h - what the writer shares with the tar
 * writer (tar.c) beyond perf.h. Private to pt_backend/perf/.
 */
#ifndef PT_BACKEND_PERF_PERF_WRITE_H
#define PT_BACKEND_PERF_PERF_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* strace_perf_pwrite_all() - len bytes of buf to fd at *pos (through
 * short writes and EINTR), *pos moved past them. Returns 0 or -errno. */
int strace_perf_pwrite_all(int fd, const void *buf, size_t len,
			   uint64_t *pos);

#endif /* PT_BACKEND_PERF_PERF_WRITE_H */
