/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/unwind.c - see unwind.h. */
#include "unwind.h"

#include <dirent.h>
#include <errno.h>
#include <libunwind-ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <strace/error.h>
#include "vdso.h"

static int wait_stop(pid_t tid)
{
	int status;

	for (;;) {
		pid_t r = waitpid(tid, &status, __WALL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -STRACE_E_NOPID;
		if (WIFSTOPPED(status))
			return 0;
	}
}

int strace_unwind_thread(const char *procfs_root, pid_t tid,
			 struct strace_stack *st)
{
	unw_addr_space_t as;
	unw_cursor_t cur;
	void *upt;
	int err;

	memset(st, 0, sizeof(*st));
	st->tid = tid;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return st->err = strace_live_access_error(procfs_root, errno);
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		err = strace_live_access_error(procfs_root, errno);
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return st->err = err;
	}
	err = wait_stop(tid);
	if (err < 0)
		return st->err = err;

	as = unw_create_addr_space(&_UPT_accessors, 0);
	upt = as ? _UPT_create(tid) : NULL;
	if (!as || !upt) {
		err = -ENOMEM;
	} else if (unw_init_remote(&cur, as, upt) < 0) {
		err = -EINVAL;
	} else {
		do {
			unw_word_t ip;

			if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
				break;
			st->ip[st->nframes++] = (uint64_t)ip;
		} while (st->nframes < STRACE_STACK_MAX && unw_step(&cur) > 0);
	}
	if (upt)
		_UPT_destroy(upt);
	if (as)
		unw_destroy_addr_space(as);
	/* The thread resumes where it was (an interrupted syscall restarts). */
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return st->err = err;
}

int strace_unwind_process(const char *procfs_root, pid_t pid,
			  struct strace_stack **out, size_t *n)
{
	char path[512];
	DIR *d;
	struct dirent *e;
	struct strace_stack *v = NULL;
	size_t cnt = 0, cap = 0;

	snprintf(path, sizeof(path), "%s/%d/task",
		 procfs_root ? procfs_root : "/proc", (int)pid);
	d = opendir(path);
	if (!d)
		return strace_live_access_error(procfs_root, errno);
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (cnt == cap) {
			struct strace_stack *nv;

			cap = cap ? cap * 2 : 4;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		strace_unwind_thread(procfs_root, tid, &v[cnt++]);
	}
	closedir(d);
	*out = v;
	*n = cnt;
	return 0;
}

size_t strace_stack_events(const struct strace_stack *st, uint64_t time,
			   struct strace_event *ev, size_t max)
{
	size_t k = 0;

	for (unsigned i = st->nframes; i-- > 0 && k < max;) {
		memset(&ev[k], 0, sizeof(ev[k]));
		ev[k].type = STRACE_EV_STACK_FRAME;
		ev[k].tid = (uint32_t)st->tid;
		ev[k].time = time;
		ev[k].a = st->ip[i];
		ev[k].b = i;
		k++;
	}
	return k;
}
