/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/live_thread.c - one traced thread of a live session:
 * its PT and tracking events, their rings, its --trigger probes and
 * trace windows.
 */
#include "live_int.h"
#include "strace/internal/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vdso.h" /* strace_live_access_error() */

void strace_live_thread_free(struct strace_live *l, struct lthread *t)
{
	if (!t)
		return;
	strace_livew_stage_flush(l, t, 1);
	free(t->wbuf);
	for (size_t i = 0; t->probes && i < l->o.ntriggers; i++) {
		struct lprobe *p = &t->probes[i];

		strace_dring_fini(&p->dr);
		if (p->base)
			SYS(l, unmap, p->base, PROBE_PAGES * l->page);
		if (p->fd >= 0)
			SYS(l, close, p->fd);
	}
	free(t->probes);
	for (size_t i = 0; t->fd_win && i < l->o.nwindows; i++)
		if (t->fd_win[i] >= 0)
			SYS(l, close, t->fd_win[i]);
	free(t->fd_win);
	strace_dring_fini(&t->dr);
	if (t->aux)
		SYS(l, unmap, t->aux, t->aux_len);
	if (t->base)
		SYS(l, unmap, t->base, t->base_len);
	if (t->fd_track >= 0)
		SYS(l, close, t->fd_track);
	if (t->fd_pt >= 0)
		SYS(l, close, t->fd_pt);
	free(t);
}

static int open_error(struct strace_live *l, pid_t tid, int e)
{
	int paranoid = 2;

	if (e == ESRCH)
		return -STRACE_E_NOPID;
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
		return -STRACE_E_NOPT; /* the kernel does not know the PMU */
	if (e == EACCES || e == EPERM) {
		strace_live_read_int(l->o.procfs_root, "sys/kernel/perf_event_paranoid",
				     &paranoid);
		if (!strace_live_privileged() && paranoid > 1)
			return -STRACE_E_PARANOID;
		return strace_live_access_error(l->o.procfs_root, e);
	}
	(void)tid;
	return -e;
}

/* Trigger probes fell back to breakpoints: the uprobe PMU refused. */
static int to_breakpoints(struct strace_live *l, int e)
{
	for (size_t i = 0; i < l->o.ntriggers; i++)
		if (l->o.triggers[i].ret) {
			snprintf(l->why, sizeof(l->why),
				 "%s: the kernel refused a uprobe (%s; they "
				 "need root or CAP_PERFMON), and a breakpoint "
				 "cannot stop at a return: run as root, or "
				 "trigger on the function's entry",
				 l->o.triggers[i].spec, strerror(e));
			return -STRACE_E_BADARG;
		}
	l->trig_rt = calloc(l->o.ntriggers, sizeof(*l->trig_rt));
	if (!l->trig_rt)
		return -ENOMEM;
	l->st.trigger_bp = 1;
	return 0;
}

/*
 * Trigger i of thread t: a uprobe, or a breakpoint once a mapping put its
 * instruction at a run-time address (else nothing yet).
 */
int strace_live_probe_open(struct strace_live *l, struct lthread *t, size_t i,
			   int enable)
{
	struct lprobe *p = &t->probes[i];
	struct perf_event_attr a;
	int err = 0;

	if (p->fd >= 0)
		return 0;
	if (l->trig_rt && !l->trig_rt[i])
		return 0;
	if (l->trig_rt)
		strace_probe_bp_attr(l->trig_rt[i], &a);
	else
		strace_probe_uprobe_attr(&l->up, &l->o.triggers[i], &a);
	a.enable_on_exec = l->pt.enable_on_exec;
	p->fd = SYS(l, event_open, &a, t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (p->fd < 0) {
		int e = -p->fd;

		p->fd = -1;
		if (e == ESRCH)
			return -STRACE_E_NOPID;
		/* no uprobes for this user, or none in this kernel */
		if (!l->trig_rt && (e == EACCES || e == EPERM || e == ENOENT ||
				    e == EOPNOTSUPP || e == ENODEV))
			return to_breakpoints(l, e);
		snprintf(l->why, sizeof(l->why),
			 "cannot watch %s (%s at 0x%llx of %s): %s",
			 l->o.triggers[i].spec,
			 l->trig_rt ? "a breakpoint" : "a uprobe",
			 (unsigned long long)l->o.triggers[i].vaddr,
			 l->o.triggers[i].path, strerror(e));
		return -STRACE_E_BADARG;
	}
	p->base = SYS(l, map, PROBE_PAGES * l->page, PROT_READ | PROT_WRITE,
		      p->fd, 0, &err);
	if (!p->base)
		return err ? err : -ENOMEM;
	err = strace_dring_init(&p->dr, p->base, l->page,
				(PROBE_PAGES - 1) * l->page);
	if (!err && enable)
		SYS(l, ioctl, p->fd, PERF_EVENT_IOC_ENABLE, 0);
	return err;
}

/* The window events of thread t, in its PT event's group. */
static int windows_open(struct strace_live *l, struct lthread *t)
{
	if (!l->o.nwindows)
		return 0;
	t->fd_win = malloc(l->o.nwindows * sizeof(*t->fd_win));
	if (!t->fd_win)
		return -ENOMEM;
	for (size_t i = 0; i < l->o.nwindows; i++)
		t->fd_win[i] = -1;
	for (size_t i = 0; i < l->o.nwindows; i++) {
		struct perf_event_attr a = l->o.windows[i].attr;

		strace_pmu_set_aux_action(&a, l->o.windows[i].resume
						      ? STRACE_AUX_RESUME
						      : STRACE_AUX_PAUSE);
		a.disabled = 0; /* on and off with the group's leader */
		a.enable_on_exec = 0;
		t->fd_win[i] = SYS(l, event_open, &a, t->tid, -1, t->fd_pt,
				   PERF_FLAG_FD_CLOEXEC);
		if (t->fd_win[i] < 0) {
			int e = -t->fd_win[i];

			t->fd_win[i] = -1;
			if (e == ESRCH)
				return -STRACE_E_NOPID;
			snprintf(l->why, sizeof(l->why),
				 "the kernel refused the %s event of a trace "
				 "window (%s)%s",
				 l->o.windows[i].resume ? "start" : "stop",
				 strerror(e),
				 e == EINVAL ? ": the kernel pauses and "
					       "resumes only an AUX event "
					       "(intel_pt) that leads the "
					       "group, from Linux 6.13 on"
					     : "");
			return -STRACE_E_BADARG;
		}
	}
	return 0;
}

/* Enable what thread t traces: sideband, PT, trigger probes. */
void strace_live_thread_enable(struct strace_live *l, struct lthread *t)
{
	SYS(l, ioctl, t->fd_track, PERF_EVENT_IOC_ENABLE, 0);
	SYS(l, ioctl, t->fd_pt, PERF_EVENT_IOC_ENABLE, 0);
	for (size_t i = 0; t->probes && i < l->o.ntriggers; i++)
		if (t->probes[i].fd >= 0)
			SYS(l, ioctl, t->probes[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

static int thread_open(struct strace_live *l, pid_t tid, int enable,
		       struct lthread **out)
{
	struct lthread *t = calloc(1, sizeof(*t));
	struct perf_event_mmap_page *pg;
	int err;

	if (!t)
		return -ENOMEM;
	t->tid = tid;
	t->fd_pt = t->fd_track = -1;
	t->fd_pt = SYS(l, event_open, &l->pt, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (t->fd_pt < 0) {
		err = open_error(l, tid, -t->fd_pt);
		goto fail;
	}
	t->fd_track = SYS(l, event_open, &l->track, tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (t->fd_track < 0) {
		err = open_error(l, tid, -t->fd_track);
		goto fail;
	}
	t->base_len = l->page + l->data_bytes;
	t->base = SYS(l, map, t->base_len, PROT_READ | PROT_WRITE, t->fd_pt, 0,
		      &err);
	if (!t->base) {
		err = err == -EPERM ? -STRACE_E_AUXMAP : err;
		goto fail;
	}
	err = SYS(l, ioctl, t->fd_track, PERF_EVENT_IOC_SET_OUTPUT,
		  (unsigned long)t->fd_pt);
	if (err < 0)
		goto fail;
	pg = t->base;
	pg->aux_offset = t->base_len;
	pg->aux_size = l->aux_bytes;
	t->aux_len = l->aux_bytes;
	/* Read-only AUX mapping = overwrite (snapshot) mode. */
	t->aux = SYS(l, map, t->aux_len,
		     l->o.snapshot ? PROT_READ : PROT_READ | PROT_WRITE,
		     t->fd_pt, (off_t)pg->aux_offset, &err);
	if (!t->aux) {
		err = -STRACE_E_AUXMAP;
		goto fail;
	}
	if (l->filter[0]) {
		err = SYS(l, ioctl, t->fd_pt, PERF_EVENT_IOC_SET_FILTER,
			  (unsigned long)(uintptr_t)l->filter);
		if (err < 0)
			goto fail;
	}
	SYS(l, ioctl, t->fd_pt, PERF_EVENT_IOC_ID,
	    (unsigned long)(uintptr_t)&t->id_pt);
	SYS(l, ioctl, t->fd_track, PERF_EVENT_IOC_ID,
	    (unsigned long)(uintptr_t)&t->id_track);
	err = strace_dring_init(&t->dr, t->base, l->page, l->data_bytes);
	if (!err)
		err = strace_aux_init(&t->ar, pg, t->aux, t->aux_len,
				      l->o.snapshot);
	if (err)
		goto fail;
	t->ar.align = 8; /* see auxring.h */
	if ((err = windows_open(l, t)) < 0)
		goto fail;
	if (l->o.ntriggers) {
		t->probes = calloc(l->o.ntriggers, sizeof(*t->probes));
		if (!t->probes) {
			err = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < l->o.ntriggers; i++)
			t->probes[i].fd = -1;
		for (size_t i = 0; i < l->o.ntriggers && !err; i++)
			err = strace_live_probe_open(l, t, i, 0);
		if (err < 0)
			goto fail;
	}
	if (enable)
		strace_live_thread_enable(l, t);
	t->idx = l->next_idx++;
	if (l->o.write_path) {
		if (!l->w) {
			err = strace_perfw_open(&l->w, l->o.write_path);
			if (err)
				goto fail;
		}
		if ((err = strace_livew_add_id(l, t->id_pt)) < 0 ||
		    (err = strace_livew_add_id(l, t->id_track)) < 0)
			goto fail;
	}
	*out = t;
	return 0;
fail:
	strace_live_thread_free(l, t);
	return err;
}

struct lthread *strace_live_find_thread(struct strace_live *l, pid_t tid)
{
	for (size_t i = 0; i < l->nth; i++)
		if (l->th[i]->tid == tid)
			return l->th[i];
	return NULL;
}

int strace_live_add_thread(struct strace_live *l, pid_t tid, int enable)
{
	struct lthread *t = NULL;
	int err;

	if (strace_live_find_thread(l, tid))
		return 0;
	if (l->nth == l->cap) {
		struct lthread **n = strace_grow(l->th, &l->cap, sizeof(*n), 8);

		if (!n)
			return -ENOMEM;
		l->th = n;
	}
	err = thread_open(l, tid, enable, &t);
	if (err)
		return err;
	l->th[l->nth++] = t;
	l->st.threads++;
	if (l->w && !l->wrote_info)
		return strace_livew_info(l, t);
	return 0;
}
