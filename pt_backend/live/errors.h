/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/live/errors.h - error codes of live capture.
 *
 * Live capture returns -errno, the ring's -STRACE_E_* codes
 * (include/strace/ring.h) and these, which sit above them in a block of
 * their own (4096 + 512 ...) so that they never collide.
 * strace_live_strerror() describes all three kinds.
 */
#ifndef PT_BACKEND_LIVE_ERRORS_H
#define PT_BACKEND_LIVE_ERRORS_H

#include <strace/ring.h>

enum {
	STRACE_E_LIVE_BASE = 4096 + 512,
	STRACE_E_NOPT,         /* no intel_pt PMU under sysfs */
	STRACE_E_PARANOID,     /* perf_event_paranoid forbids the events */
	STRACE_E_PTRACE_SCOPE, /* kernel.yama.ptrace_scope forbids attaching */
	STRACE_E_NOPID,        /* the process does not exist */
	STRACE_E_PERM,         /* another permission problem (EACCES/EPERM) */
	STRACE_E_AUXMAP,       /* the AUX area could not be mapped */
	STRACE_E_LIVE_MAX
};

/* Text for -errno, -STRACE_E_* or the codes above; never NULL. */
const char *strace_live_strerror(int err);

#endif
