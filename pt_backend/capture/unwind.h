/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/unwind.h - the call stacks of a process's threads at
 * attach, so that decoded call stacks are whole from the first event.
 *
 * Each thread is seized with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT),
 * unwound with libunwind-ptrace (DWARF CFI of the mapped objects), and
 * released (PTRACE_DETACH): it keeps running afterwards. A thread stops
 * for the time of its own unwind only (about a millisecond).
 */
#ifndef PT_BACKEND_CAPTURE_UNWIND_H
#define PT_BACKEND_CAPTURE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture.h" /* struct strace_unwound */

/*
 * Unwind thread tid (which must not be traced by anyone else).
 * Returns 0 (st->nframes may still be 0), -STRACE_E_NOPID,
 * -STRACE_E_PTRACE_SCOPE, -STRACE_E_PERM, -errno.
 */
int strace_unwind_thread(const char *procfs_root, pid_t tid,
			 struct strace_unwound *st);

/*
 * Unwind every thread of process pid (<procfs>/pid/task). *out is a
 * malloc'd array of *n stacks (free() it); a thread that vanished or
 * failed has its err set and no frames.
 * Returns 0, -STRACE_E_NOPID, -ENOMEM.
 */
int strace_unwind_process(const char *procfs_root, pid_t pid,
			  struct strace_unwound **out, size_t *n);

#endif
