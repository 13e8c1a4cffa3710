/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/unwind.c - see unwind.h. */
#include "unwind.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <libunwind-ptrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <strace/error.h>
#include "vdso.h"
#include "strace/internal/grow.h"

/*
 * libunwind, loaded on first need (as Capstone is, decoder/block.c): a
 * decode of a perf.data never unwinds, and the four libraries
 * libunwind-ptrace brings cost every start about 0.4 ms here. Remote
 * unwinding's functions are libunwind-x86_64's (the header's unw_*
 * names are macros for them), whose symbols libunwind-ptrace uses: so
 * that one is loaded for everyone (RTLD_GLOBAL), first.
 */
static struct {
	unw_addr_space_t (*create_addr_space)(unw_accessors_t *, int);
	void (*destroy_addr_space)(unw_addr_space_t);
	int (*init_remote)(unw_cursor_t *, unw_addr_space_t, void *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*step)(unw_cursor_t *);
	void *(*upt_create)(pid_t);
	void (*upt_destroy)(void *);
	unw_accessors_t *upt_accessors;
} unw;
static pthread_once_t unw_once = PTHREAD_ONCE_INIT;
static int unw_ok;

static void unw_load(void)
{
	void *g = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_GLOBAL);
	void *p = g ? dlopen("libunwind-ptrace.so.0", RTLD_NOW | RTLD_LOCAL)
		    : NULL;

	if (!p)
		return;
	*(void **)&unw.create_addr_space = dlsym(g, "_Ux86_64_create_addr_space");
	*(void **)&unw.destroy_addr_space =
		dlsym(g, "_Ux86_64_destroy_addr_space");
	*(void **)&unw.init_remote = dlsym(g, "_Ux86_64_init_remote");
	*(void **)&unw.get_reg = dlsym(g, "_Ux86_64_get_reg");
	*(void **)&unw.step = dlsym(g, "_Ux86_64_step");
	*(void **)&unw.upt_create = dlsym(p, "_UPT_create");
	*(void **)&unw.upt_destroy = dlsym(p, "_UPT_destroy");
	unw.upt_accessors = dlsym(p, "_UPT_accessors");
	unw_ok = unw.create_addr_space && unw.destroy_addr_space &&
		 unw.init_remote && unw.get_reg && unw.step &&
		 unw.upt_create && unw.upt_destroy && unw.upt_accessors;
}

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
			 struct strace_unwound *st)
{
	unw_addr_space_t as;
	unw_cursor_t cur;
	void *upt;
	int err;

	memset(st, 0, sizeof(*st));
	st->tid = tid;
	pthread_once(&unw_once, unw_load);
	if (!unw_ok)
		return st->err = -ELIBACC;
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

	as = unw.create_addr_space(unw.upt_accessors, 0);
	upt = as ? unw.upt_create(tid) : NULL;
	if (!as || !upt) {
		err = -ENOMEM;
	} else if (unw.init_remote(&cur, as, upt) < 0) {
		err = -EINVAL;
	} else {
		do {
			unw_word_t ip;

			if (unw.get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
				break;
			st->ip[st->nframes++] = (uint64_t)ip;
		} while (st->nframes < STRACE_UNWOUND_MAX && unw.step(&cur) > 0);
	}
	if (upt)
		unw.upt_destroy(upt);
	if (as)
		unw.destroy_addr_space(as);
	/* The thread resumes where it was (an interrupted syscall restarts). */
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return st->err = err;
}

int strace_unwind_process(const char *procfs_root, pid_t pid,
			  struct strace_unwound **out, size_t *n)
{
	char path[512];
	DIR *d;
	struct dirent *e;
	struct strace_unwound *v = NULL;
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
			struct strace_unwound *nv;

			nv = strace_grow(v, &cap, sizeof(*v), 4);
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

size_t strace_unwound_events(const struct strace_unwound *st, uint64_t time,
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
