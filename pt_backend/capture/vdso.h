/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/vdso.h - copy a process's vDSO out of its memory.
 *
 * The vDSO has no file on disk, so to decode PT through vDSO calls the
 * image needs its bytes: the [vdso] line of <procfs>/PID/maps gives the
 * range, <procfs>/PID/mem the bytes (needs ptrace access to PID, as perf
 * and gdb do). The copy is checked to be an ELF image.
 */
#ifndef PT_BACKEND_CAPTURE_VDSO_H
#define PT_BACKEND_CAPTURE_VDSO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read the vDSO of pid (procfs_root NULL: "/proc"). On success *buf is a
 * malloc'd copy of *len bytes mapped at *start; the caller frees it.
 * Returns 0, -STRACE_E_NOPID (no such process), -ENOENT (no [vdso]
 * mapping), -STRACE_E_PTRACE_SCOPE or -STRACE_E_PERM (mem not readable),
 * -STRACE_E_CORRUPT (the bytes are not an ELF image), -errno.
 */
int strace_vdso_read(const char *procfs_root, pid_t pid, uint64_t *start,
		     void **buf, size_t *len);

/* One line of <procfs>/PID/maps. */
struct strace_maps_line {
	uint64_t start, end, pgoff, ino;
	unsigned maj, min;
	char perms[8];  /* "r-xp" */
	char name[4096]; /* the path or [name]; "" for anonymous memory */
};

/* strace_maps_parse() - read line into *m. Returns 0, or -1 if it is not
 * a maps line. */
int strace_maps_parse(const char *line, struct strace_maps_line *m);

/*
 * Map an errno of a ptrace-like access to pid into the live error codes:
 * ESRCH -> -STRACE_E_NOPID, EPERM/EACCES -> -STRACE_E_PTRACE_SCOPE if
 * <procfs>/sys/kernel/yama/ptrace_scope exists and is above 0, else
 * -STRACE_E_PERM; anything else -errno.
 */
int strace_live_access_error(const char *procfs_root, int err);

#endif
