/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/vdso.c - see vdso.h. */
#include "vdso.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <strace/error.h>

int strace_live_access_error(const char *procfs_root, int err)
{
	char path[512];
	FILE *f;
	int scope = 0;

	if (err == ESRCH || err == ENOENT)
		return -STRACE_E_NOPID;
	if (err != EPERM && err != EACCES)
		return -err;
	snprintf(path, sizeof(path), "%s/sys/kernel/yama/ptrace_scope",
		 procfs_root ? procfs_root : "/proc");
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	return scope > 0 ? -STRACE_E_PTRACE_SCOPE : -STRACE_E_PERM;
}

int strace_maps_parse(const char *line, struct strace_maps_line *m)
{
	size_t n;

	m->name[0] = 0;
	if (sscanf(line,
		   "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64
		   " %4095[^\n]",
		   &m->start, &m->end, m->perms, &m->pgoff, &m->maj, &m->min,
		   &m->ino, m->name) < 7)
		return -1;
	n = strspn(m->name, " ");
	memmove(m->name, m->name + n, strlen(m->name + n) + 1);
	return 0;
}

int strace_vdso_read(const char *procfs_root, pid_t pid, uint64_t *start,
		     void **buf, size_t *len)
{
	const char *proc = procfs_root ? procfs_root : "/proc";
	char path[512], line[4608];
	struct strace_maps_line m;
	uint64_t lo = 0, hi = 0;
	int found = 0, fd, err;
	FILE *f;
	uint8_t *p;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/%d/maps", proc, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return strace_live_access_error(procfs_root, errno);
	while (fgets(line, sizeof(line), f)) {
		if (!strace_maps_parse(line, &m) &&
		    !strcmp(m.name, "[vdso]")) {
			lo = m.start;
			hi = m.end;
			found = 1;
			break;
		}
	}
	fclose(f);
	if (!found || hi <= lo || hi - lo > (64u << 20))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%d/mem", proc, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strace_live_access_error(procfs_root, errno);
	p = malloc((size_t)(hi - lo));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	got = pread(fd, p, (size_t)(hi - lo), (off_t)lo);
	err = errno;
	close(fd);
	if (got < 0) {
		free(p);
		return strace_live_access_error(procfs_root, err);
	}
	if ((uint64_t)got != hi - lo || memcmp(p, ELFMAG, SELFMAG) != 0) {
		free(p);
		return -STRACE_E_CORRUPT;
	}
	*start = lo;
	*buf = p;
	*len = (size_t)(hi - lo);
	return 0;
}
