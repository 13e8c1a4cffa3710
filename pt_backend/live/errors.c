/* SPDX-License-Identifier: MIT */
/* pt_backend/live/errors.c - see errors.h. */
#include "errors.h"

#include <string.h>

const char *strace_live_strerror(int err)
{
	switch (-err) {
	case STRACE_E_NOPT:
		return "Intel PT is not available (no intel_pt PMU under "
		       "/sys/bus/event_source/devices)";
	case STRACE_E_PARANOID:
		return "perf_event_paranoid does not allow tracing this "
		       "process";
	case STRACE_E_PTRACE_SCOPE:
		return "kernel.yama.ptrace_scope does not allow attaching to "
		       "this process";
	case STRACE_E_NOPID:
		return "no such process";
	case STRACE_E_PERM:
		return "permission denied";
	case STRACE_E_AUXMAP:
		return "cannot map the AUX area (locked-memory limit?)";
	default:
		break;
	}
	if (-err > STRACE_E_BASE && -err < STRACE_E_MAX)
		return strace_strerror(err);
	if (err < 0 && -err < 4096)
		return strerror(-err);
	return "unknown error";
}
