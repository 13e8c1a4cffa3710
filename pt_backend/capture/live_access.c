/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/live_access.c - what perf and ptrace settings allow a
 * session: privileges, perf_event_paranoid, yama ptrace_scope, the PMU
 * (capture.h).
 */
#include "live_int.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int strace_live_read_int(const char *procfs, const char *rel, int *v)
{
	char path[512];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", procfs ? procfs : "/proc", rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

int strace_live_privileged(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (geteuid() == 0)
		return 1;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	/* CAP_SYS_ADMIN (21) or CAP_PERFMON (38) */
	return (d[0].effective & (1u << 21)) ||
	       (d[1].effective & (1u << (38 - 32)));
}

int strace_live_pt_present(const char *sysfs_root)
{
	struct strace_pmu pmu;
	int err = strace_pmu_load(sysfs_root, &pmu);

	return err < 0 ? err : 0;
}

int strace_live_check_access(const char *procfs_root, pid_t pid,
			     int privileged)
{
	char rel[64];
	int paranoid = 2, scope = 0;

	if (pid > 0) {
		char path[512];

		snprintf(rel, sizeof(rel), "%d", (int)pid);
		snprintf(path, sizeof(path), "%s/%s",
			 procfs_root ? procfs_root : "/proc", rel);
		if (access(path, F_OK) < 0)
			return -STRACE_E_NOPID;
	}
	strace_live_read_int(procfs_root, "sys/kernel/perf_event_paranoid",
			     &paranoid);
	/* Above 2 (Debian's 3) unprivileged users may not use perf at all. */
	if (!privileged && paranoid > 2)
		return -STRACE_E_PARANOID;
	if (strace_live_read_int(procfs_root, "sys/kernel/yama/ptrace_scope",
				 &scope) < 0)
		scope = 0;
	/* 3: nobody may attach; 2: only CAP_SYS_PTRACE; 1: only descendants. */
	if (pid > 0 && (scope >= 3 || (!privileged && scope >= 1)))
		return -STRACE_E_PTRACE_SCOPE;
	return 0;
}
