/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/live.c - the live session (see capture.h and
 * live_int.h for the files beneath it). */
#include "capture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strace/internal/perf_time.h"
#include "live_int.h"
#include "unwind.h"
#include "vdso.h"

/* ---------------- system calls (real or a test's fake kernel) ---------------- */

static int real_open(void *arg, struct perf_event_attr *a, pid_t pid, int cpu,
		     int group, unsigned long flags)
{
	long r = syscall(SYS_perf_event_open, a, pid, cpu, group, flags);

	(void)arg;
	return r < 0 ? -errno : (int)r;
}

static void *real_map(void *arg, size_t len, int prot, int fd, off_t off,
		      int *err)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	(void)arg;
	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

static int real_unmap(void *arg, void *p, size_t len)
{
	(void)arg;
	return munmap(p, len) < 0 ? -errno : 0;
}

static int real_ioctl(void *arg, int fd, unsigned long req, unsigned long val)
{
	(void)arg;
	return ioctl(fd, req, val) < 0 ? -errno : 0;
}

static int real_close(void *arg, int fd)
{
	(void)arg;
	return close(fd) < 0 ? -errno : 0;
}

static int real_poll(void *arg, struct pollfd *p, unsigned long n, int timeout)
{
	int r = poll(p, (nfds_t)n, timeout);

	(void)arg;
	return r < 0 ? -errno : r;
}

static const struct strace_live_sys real_sys = {
	NULL, real_open, real_map, real_unmap, real_ioctl, real_close, real_poll,
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The triggers' kind of event: uprobes, else breakpoints. */
static int probes_open(struct strace_live *l, char *errbuf, size_t errlen)
{
	const struct strace_live_opts *o = &l->o;

	l->t0 = mono();
	if (!o->ntriggers)
		return 0;
	if (!o->snapshot) {
		snprintf(errbuf, errlen, "a trigger takes a snapshot: it needs "
					 "snapshot mode (--snapshot)");
		return -STRACE_E_BADARG;
	}
	if (strace_uprobe_pmu_load(o->sysfs_root, &l->up) < 0) {
		l->st.trigger_bp = 1;
		for (size_t i = 0; i < o->ntriggers; i++)
			if (o->triggers[i].ret) {
				snprintf(errbuf, errlen,
					 "%s: this kernel has no uprobe PMU "
					 "(no uprobe under "
					 "/sys/bus/event_source/devices), and a "
					 "breakpoint cannot stop at a return: "
					 "trigger on the function's entry or an "
					 "address in it (CONFIG_UPROBE_EVENTS "
					 "gives uprobes)",
					 o->triggers[i].spec);
				return -STRACE_E_BADARG;
			}
		l->trig_rt = calloc(o->ntriggers, sizeof(*l->trig_rt));
		if (!l->trig_rt)
			return -ENOMEM;
	}
	return 0;
}

int strace_live_open(const struct strace_live_opts *o, struct strace_live **out,
		     char *errbuf, size_t errlen)
{
	struct strace_live *l;
	struct strace_pmu_attr_opts ao = {0};
	int err;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->o = *o;
	l->sys = o->sys ? o->sys : &real_sys;
	l->cork_fd = -1;
	l->page = (size_t)sysconf(_SC_PAGESIZE);
	err = strace_pmu_load(o->sysfs_root, &l->pmu);
	if (err)
		goto fail;
	err = strace_pmu_config(&l->pmu, o->event, &ao.config, &ao.mods, errbuf,
				errlen);
	if (err)
		goto fail;
	if (o->filter && *o->filter) {
		err = strace_pmu_filter(o->filter, l->pmu.nr_addr_filters,
					l->filter, sizeof(l->filter), errbuf,
					errlen);
		if (err < 0)
			goto fail;
	}
	strace_pmu_default_sizes(strace_live_privileged(), &l->aux_bytes,
				 &l->data_bytes);
	if (o->aux_bytes)
		l->aux_bytes = o->aux_bytes;
	if (o->data_bytes)
		l->data_bytes = o->data_bytes;
	if ((l->aux_bytes & (l->aux_bytes - 1)) || l->aux_bytes < l->page ||
	    (l->data_bytes & (l->data_bytes - 1)) || l->data_bytes < l->page) {
		snprintf(errbuf, errlen,
			 "buffer sizes must be powers of two of at least a page");
		err = -STRACE_E_BADARG;
		goto fail;
	}
	l->snap_bytes = o->snapshot_bytes ? o->snapshot_bytes : l->aux_bytes;
	if (l->snap_bytes > l->aux_bytes)
		l->snap_bytes = l->aux_bytes;
	ao.snapshot = o->snapshot;
	ao.aux_bytes = l->aux_bytes;
	ao.sideband_time = o->sideband_time;
	ao.context_switch = o->context_switch;
	strace_pmu_attrs(&l->pmu, &ao, &l->pt, &l->track);
	err = strace_live_check_access(o->procfs_root, 0,
				       strace_live_privileged());
	if (err)
		goto fail;
	if ((err = probes_open(l, errbuf, errlen)) < 0)
		goto fail;
	/* paused until a start event, if there is one */
	for (size_t i = 0; i < o->nwindows; i++)
		if (o->windows[i].resume)
			strace_pmu_set_aux_action(&l->pt,
						  STRACE_AUX_START_PAUSED);
	if (o->snapshot) {
		l->snapbuf = malloc(l->snap_bytes);
		if (!l->snapbuf) {
			err = -ENOMEM;
			goto fail;
		}
	}
	*out = l;
	return 0;
fail:
	free(l->trig_rt);
	free(l);
	return err;
}

/* ---------------- consuming ---------------- */

/*
 * Breakpoint triggers: a mapping of a trigger's object that holds its
 * instruction gives its run-time address; watch it in every thread.
 */
static int probes_see_map(struct strace_live *l, const struct strace_sb *sb)
{
	int err = 0;

	if (!l->trig_rt || !(sb->prot & PROT_EXEC) || !sb->name)
		return 0;
	for (size_t i = 0; i < l->o.ntriggers; i++) {
		const struct strace_probe *p = &l->o.triggers[i];

		if (l->trig_rt[i] || strcmp(sb->name, p->path) ||
		    p->off < sb->pgoff || p->off - sb->pgoff >= sb->len)
			continue;
		l->trig_rt[i] = sb->addr + (p->off - sb->pgoff);
		for (size_t k = 0; k < l->nth && err >= 0; k++) {
			err = strace_live_probe_open(l, l->th[k], i, 1);
			if (err == -STRACE_E_NOPID)
				err = 0; /* that thread is gone */
		}
	}
	return err;
}

static int on_probe_record(void *arg, const struct pfmt_event_header *rec)
{
	uint64_t *n = arg, lost;

	if (rec->type == PERF_RECORD_SAMPLE) {
		n[0]++;
	} else if (rec->type == PERF_RECORD_LOST && rec->size >= 24) {
		memcpy(&lost, (const uint8_t *)rec + 16, 8); /* id, lost */
		n[1] += lost;
	}
	return 0;
}

/* A trigger fires: remember where each thread's trace was. */
static void trigger_fire(struct strace_live *l)
{
	l->firing = 1;
	l->fired_at = mono();
	for (size_t i = 0; i < l->nth; i++)
		l->th[i]->head_at_fire = __atomic_load_n(
			&l->th[i]->ar.page->aux_head, __ATOMIC_ACQUIRE);
}

/* Count the trigger probes' hits since the last poll; fire on the Nth. */
static void trigger_count(struct strace_live *l)
{
	uint64_t n[2] = {0, 0}, need = l->o.trigger_count ? l->o.trigger_count : 1;

	for (size_t i = 0; i < l->nth; i++)
		for (size_t k = 0; l->th[i]->probes && k < l->o.ntriggers; k++)
			if (l->th[i]->probes[k].fd >= 0)
				strace_dring_consume(&l->th[i]->probes[k].dr,
						     on_probe_record, n);
	l->st.trigger_lost += n[1];
	n[0] += n[1];
	if (!n[0])
		return;
	l->st.trigger_hits += n[0];
	if (l->trig_done || l->firing)
		return; /* those are in the snapshot being taken */
	if (mono() - l->t0 < l->o.trigger_after) {
		l->st.trigger_early += n[0];
		return;
	}
	l->hits += n[0];
	if (l->hits >= need) {
		l->hits = 0;
		trigger_fire(l);
	}
}

/* Whether the trace after the hit is there (--trigger-tail), or waited
 * for long enough. */
static int trigger_tail_done(const struct strace_live *l)
{
	if (!l->o.trigger_tail || mono() - l->fired_at >= STRACE_TRIGGER_TAIL_WAIT)
		return 1;
	for (size_t i = 0; i < l->nth; i++) {
		const struct lthread *t = l->th[i];

		if (!t->gone &&
		    __atomic_load_n(&t->ar.page->aux_head, __ATOMIC_ACQUIRE) -
				    t->head_at_fire < l->o.trigger_tail)
			return 0;
	}
	return 1;
}

struct drain_ctx {
	struct strace_live *l;
	struct lthread *t;
	const struct strace_live_cb *cb;
	pid_t new_tids[64];
	int nnew;
};

static int on_record(void *arg, const struct pfmt_event_header *rec)
{
	struct drain_ctx *c = arg;
	struct strace_live *l = c->l;
	struct strace_sb sb;
	int err;

	if (strace_sb_parse(rec, l->pt.sample_type, &sb) < 0)
		return 0; /* counted as nothing; cannot happen with a sane kernel */
	l->st.records++;
	switch (rec->type) {
	case PFMT_RECORD_LOST:
		l->st.lost_records += sb.lost;
		/*
		 * A lost AUX record may have said TRUNCATED (and the kernel
		 * disabled the event): enable again, a no-op if it is on.
		 */
		if (!l->o.snapshot)
			c->t->need_enable = 1;
		break;
	case PFMT_RECORD_AUX:
		if (sb.aux_flags & PERF_AUX_FLAG_TRUNCATED) {
			l->st.truncated++;
			if (!l->o.snapshot)
				c->t->need_enable = 1;
		}
		if (sb.aux_flags & PERF_AUX_FLAG_PARTIAL)
			l->st.partial++;
		if (sb.aux_flags & PERF_AUX_FLAG_COLLISION)
			l->st.collisions++;
		break;
	case PFMT_RECORD_FORK:
		/* A new thread of the traced process: trace it too. */
		if (sb.pid == (uint32_t)l->pid && sb.tid != sb.pid &&
		    c->nnew < 64)
			c->new_tids[c->nnew++] = (pid_t)sb.tid;
		break;
	case PFMT_RECORD_EXIT:
		if (sb.tid == (uint32_t)c->t->tid)
			c->t->gone = 1;
		break;
	case PFMT_RECORD_MMAP2:
		if ((err = probes_see_map(l, &sb)) < 0)
			return err;
		break;
	default:
		break;
	}
	if (l->w && (err = strace_perfw_record(l->w, rec, rec->size)) < 0)
		return err;
	if (l->w)
		strace_livew_note_mmap(l, rec);
	if (c->cb && c->cb->sideband)
		return c->cb->sideband(c->cb->arg, c->t->tid, rec, &sb);
	return 0;
}

/* A record we made ourselves, delivered as the kernel's are. */
static int deliver_record(struct strace_live *l, struct lthread *t,
			  const struct strace_live_cb *cb,
			  const struct pfmt_event_header *rec)
{
	struct strace_sb sb;
	int err;

	if (strace_sb_parse(rec, l->track.sample_type, &sb) < 0)
		return -EINVAL;
	l->st.records++;
	if (rec->type == PFMT_RECORD_MMAP2 && (err = probes_see_map(l, &sb)) < 0)
		return err;
	if (l->w && (err = strace_perfw_record(l->w, rec, rec->size)) < 0)
		return err;
	if (l->w)
		strace_livew_note_mmap(l, rec);
	if (cb && cb->sideband)
		return cb->sideband(cb->arg, t->tid, rec, &sb);
	return 0;
}

static int deliver_aux(struct drain_ctx *c, uint64_t off, const void *p,
		       size_t len, unsigned flags)
{
	struct strace_live *l = c->l;
	int err;

	l->st.aux_bytes += len;
	if (l->w) {
		/* snapshots are written as they are; full trace is staged */
		err = l->o.snapshot ? strace_livew_aux(l, c->t, off, p, len)
				    : strace_livew_stage(l, c->t, off, p, len);
		if (err)
			return err;
	}
	if (c->cb && c->cb->aux)
		return c->cb->aux(c->cb->arg, c->t->tid, off, p, len, flags);
	return 0;
}

static int on_aux(void *arg, uint64_t off, const void *p, size_t len)
{
	return deliver_aux(arg, off, p, len, 0);
}

static int drain_thread(struct strace_live *l, struct lthread *t,
			const struct strace_live_cb *cb)
{
	struct drain_ctx c = {l, t, cb, {0}, 0};
	int err;

	/*
	 * Read aux_head before the data ring: the kernel writes an AUX record
	 * before it publishes aux_head, so every record for the bytes we are
	 * about to deliver is in the ring by then (records before bytes).
	 */
	uint64_t ahead = __atomic_load_n(&t->ar.page->aux_head, __ATOMIC_ACQUIRE);
	uint64_t dpend = strace_dring_pending(&t->dr);

	err = strace_dring_consume(&t->dr, on_record, &c);
	if (err >= 0 && !l->o.snapshot) {
		/*
		 * A full AUX area means the kernel truncated and disabled the
		 * event; a nearly full data ring means its AUX record (and
		 * the LOST record that would tell us) may be gone: enable
		 * again in both cases, else tracing could stop for good.
		 */
		if (ahead - t->ar.page->aux_tail >= t->ar.size ||
		    dpend + 512 >= t->dr.size)
			t->need_enable = 1;
		/* A watchdog for what no record told us: when the AUX head
		 * has not moved for a while, enable again (a no-op for an
		 * enabled event; one ioctl per thread every IDLE_ENABLE
		 * polls). A disabled event whose notice was lost would
		 * otherwise stop tracing for good. */
		if (ahead != t->last_ahead) {
			t->last_ahead = ahead;
			t->idle_polls = 0;
		} else if (++t->idle_polls >= IDLE_ENABLE) {
			t->idle_polls = 0;
			t->need_enable = 1;
		}
		err = strace_aux_consume(&t->ar, on_aux, &c);
	}
	if (err >= 0 && t->need_enable) {
		/* The kernel disabled the event when the AUX area filled. */
		t->need_enable = 0;
		SYS(l, ioctl, t->fd_pt, PERF_EVENT_IOC_ENABLE, 0);
		l->st.reenabled++;
	}
	for (int i = 0; i < c.nnew; i++) {
		int e = strace_live_add_thread(l, c.new_tids[i], 1);

		/* A thread that already exited is no error. */
		if (e < 0 && e != -STRACE_E_NOPID && err >= 0)
			err = e;
	}
	return err < 0 ? err : 0;
}

static int snapshot_thread(struct strace_live *l, struct lthread *t,
			   const struct strace_live_cb *cb)
{
	struct drain_ctx c = {l, t, cb, {0}, 0};
	unsigned flags;
	int64_t n;
	int err;

	/* Stop PT so that aux_head is final while we copy. */
	SYS(l, ioctl, t->fd_pt, PERF_EVENT_IOC_DISABLE, 0);
	err = strace_dring_consume(&t->dr, on_record, &c);
	n = strace_aux_snapshot(&t->ar, l->snapbuf, l->snap_bytes, &flags);
	if (flags & STRACE_AUX_SNAP_TORN)
		l->st.torn++;
	if (n > 0 && err >= 0) {
		err = deliver_aux(&c, t->snap_off, l->snapbuf, (size_t)n, flags);
		t->snap_off += (uint64_t)n;
	}
	if (!t->gone)
		SYS(l, ioctl, t->fd_pt, PERF_EVENT_IOC_ENABLE, 0);
	return err < 0 ? err : 0;
}

int strace_live_snapshot(struct strace_live *l, const struct strace_live_cb *cb)
{
	int err = 0;

	if (!l->o.snapshot)
		return -STRACE_E_BADARG;
	for (size_t i = 0; i < l->nth; i++) {
		int e = snapshot_thread(l, l->th[i], cb);

		if (e < 0 && !err)
			err = e;
	}
	l->st.snapshots++;
	return err < 0 ? err : (int)l->nth;
}

/* ---------------- attach / spawn ---------------- */

static int list_tasks(const char *procfs, pid_t pid, pid_t *tids, int max)
{
	char path[512];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%d/task", procfs ? procfs : "/proc",
		 (int)pid);
	d = opendir(path);
	if (!d)
		return -STRACE_E_NOPID;
	while ((e = readdir(d)) && n < max) {
		int tid = atoi(e->d_name);

		if (tid > 0)
			tids[n++] = tid;
	}
	closedir(d);
	return n;
}

/*
 * The process's executable mappings as MMAP2 records, as perf record -p
 * synthesizes them from /proc/PID/maps: the kernel reports only mappings
 * made after the events are opened, and code mapped before (the program,
 * its libraries, the vDSO) would otherwise not decode. They go where the
 * kernel's records go (the sideband callback and -w), with a zero
 * sample_id trailer but for pid/tid and the tracking event's id.
 */
static int synth_mmaps(struct strace_live *l, pid_t pid,
		       const struct strace_live_cb *cb)
{
	struct lthread *t = strace_live_find_thread(l, pid);
	uint64_t st = l->track.sample_type;
	char path[512], line[4608];
	FILE *f;
	int err = 0;

	if (!t)
		return 0;
	snprintf(path, sizeof(path), "%s/%d/maps",
		 l->o.procfs_root ? l->o.procfs_root : "/proc", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0; /* the process is gone: nothing to map */
	while (!err && fgets(line, sizeof(line), f)) {
		struct strace_maps_line ml;
		uint8_t rec[8 + sizeof(struct pfmt_mmap2) + 4096 + 48];
		struct pfmt_mmap2 *m = (void *)(rec + 8);
		size_t n, nl;

		if (strace_maps_parse(line, &ml) || ml.perms[2] != 'x')
			continue;
		if (!ml.name[0])
			continue; /* anonymous code (a JIT): nothing to read */
		memset(rec, 0, sizeof(rec));
		m->pid = m->tid = (uint32_t)pid;
		m->addr = ml.start;
		m->len = ml.end - ml.start;
		m->pgoff = ml.pgoff;
		m->maj = ml.maj;
		m->min = ml.min;
		m->ino = ml.ino;
		m->prot = (ml.perms[0] == 'r' ? PROT_READ : 0) |
			  (ml.perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		m->flags = ml.perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		nl = strlen(ml.name) + 1;
		memcpy(m->filename, ml.name, nl);
		n = 8 + sizeof(*m) + ((nl + 7) & ~(size_t)7);
		/* sample_id: TID first, IDENTIFIER last (the session's
		 * sample_type has both), the rest zero */
		memcpy(rec + n, &m->pid, 4);
		memcpy(rec + n + 4, &m->tid, 4);
		n += strace_sb_sid_size(st);
		memcpy(rec + n - 8, &t->id_track, 8);
		struct pfmt_event_header h = {PFMT_RECORD_MMAP2,
					      PERF_RECORD_MISC_USER,
					      (uint16_t)n};
		memcpy(rec, &h, 8);
		err = deliver_record(l, t, cb, (void *)rec);
	}
	fclose(f);
	return err;
}

int strace_live_attach(struct strace_live *l, pid_t pid,
		       const struct strace_live_cb *cb)
{
	pid_t tids[1024];
	int n, err, added;

	err = strace_live_check_access(l->o.procfs_root, pid,
				       strace_live_privileged());
	if (err)
		return err;
	l->pid = pid;
	/* Threads may appear while we open: rescan until nothing is new. */
	do {
		n = list_tasks(l->o.procfs_root, pid, tids, 1024);
		if (n < 0)
			return n;
		added = 0;
		for (int i = 0; i < n; i++) {
			if (strace_live_find_thread(l, tids[i]))
				continue;
			err = strace_live_add_thread(l, tids[i], 0);
			if (err == -STRACE_E_NOPID)
				continue; /* exited meanwhile */
			if (err)
				return err;
			added++;
		}
	} while (added);
	err = synth_mmaps(l, pid, cb);
	if (err < 0)
		return err;
	if ((cb && cb->vdso) || l->w) {
		uint64_t start;
		void *buf;
		size_t len;

		if (strace_vdso_read(l->o.procfs_root, pid, &start, &buf,
				     &len) == 0) {
			err = cb && cb->vdso
				      ? cb->vdso(cb->arg, pid, start, buf, len)
				      : 0;
			if (err >= 0 && l->w)
				strace_livew_vdso(l, buf, len);
			free(buf);
			if (err < 0)
				return err;
		}
	}
	if (!l->o.no_stacks && cb && cb->stack) {
		struct strace_unwound *st;
		size_t ns;

		if (strace_unwind_process(l->o.procfs_root, pid, &st, &ns) == 0) {
			for (size_t i = 0; i < ns && !err; i++)
				err = cb->stack(cb->arg, &st[i]);
			free(st);
			if (err < 0)
				return err;
		}
	}
	for (size_t i = 0; i < l->nth; i++)
		strace_live_thread_enable(l, l->th[i]);
	return 0;
}

int strace_live_spawn(struct strace_live *l, char *const argv[], pid_t *pid)
{
	int cork[2], err;
	pid_t child;

	err = strace_live_check_access(l->o.procfs_root, 0,
				       strace_live_privileged());
	if (err)
		return err;
	if (pipe2(cork, O_CLOEXEC) < 0)
		return -errno;
	child = fork();
	if (child < 0) {
		err = -errno;
		close(cork[0]);
		close(cork[1]);
		return err;
	}
	if (!child) {
		char c;

		close(cork[1]);
		/* Held here until the events exist (perf's "cork" pipe). */
		if (read(cork[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(cork[0]);
	l->cork_fd = cork[1];
	l->pid = child;
	l->spawned = 1;
	l->pt.enable_on_exec = 1;
	l->track.enable_on_exec = 1;
	err = strace_live_add_thread(l, child, 0);
	if (err) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		close(l->cork_fd);
		l->cork_fd = -1;
		return err;
	}
	*pid = child;
	return 0;
}

int strace_live_go(struct strace_live *l)
{
	char c = 'x';
	ssize_t r;

	if (l->cork_fd < 0)
		return -EINVAL;
	r = write(l->cork_fd, &c, 1);
	close(l->cork_fd);
	l->cork_fd = -1;
	return r == 1 ? 0 : -EPIPE;
}

/* ---------------- the loop ---------------- */

const char *strace_live_why(const struct strace_live *l)
{
	return l->why;
}

int strace_live_aux_action(const struct strace_live_sys *sys)
{
	struct perf_event_attr a;
	int fd;

	if (!sys)
		sys = &real_sys;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	strace_pmu_set_aux_action(&a, STRACE_AUX_START_PAUSED);
	fd = sys->event_open(sys->arg, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) { /* not what any kernel does: take it as known */
		sys->close(sys->arg, fd);
		return 1;
	}
	return fd == -EOPNOTSUPP;
}

void strace_live_request_snapshot(struct strace_live *l)
{
	l->want_snapshot = 1;
}

void strace_live_request_stop(struct strace_live *l)
{
	l->want_stop = 1;
}

int strace_live_stop_requested(const struct strace_live *l)
{
	return l->want_stop != 0;
}

/* Retire exited threads once their last sideband and PT bytes are out. */
static int reap_gone(struct strace_live *l, const struct strace_live_cb *cb)
{
	size_t j = 0;
	int err = 0;

	for (size_t i = 0; i < l->nth; i++) {
		struct lthread *t = l->th[i];

		if (t->gone) {
			int e;

			t->ar.align = 1; /* nothing more will come */
			e = drain_thread(l, t, cb);
			if (e < 0 && !err)
				err = e;
		}
		if (t->gone && !strace_dring_pending(&t->dr) &&
		    (l->o.snapshot ||
		     __atomic_load_n(&t->ar.page->aux_head, __ATOMIC_ACQUIRE) ==
			     t->ar.page->aux_tail))
			strace_live_thread_free(l, t);
		else
			l->th[j++] = t;
	}
	l->nth = j;
	return err;
}

int strace_live_poll(struct strace_live *l, int timeout_ms,
		     const struct strace_live_cb *cb)
{
	struct pollfd *p;
	size_t n = l->nth, np = n;
	int err = 0;

	if (!n)
		return 0;
	p = calloc(n * (1 + l->o.ntriggers), sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		p[i].fd = l->th[i]->fd_pt;
		p[i].events = POLLIN;
		for (size_t k = 0; l->th[i]->probes && k < l->o.ntriggers; k++)
			if (l->th[i]->probes[k].fd >= 0) {
				p[np].fd = l->th[i]->probes[k].fd;
				p[np++].events = POLLIN;
			}
	}
	if (l->firing && timeout_ms > 2)
		timeout_ms = 2; /* waiting for --trigger-tail's bytes */
	err = SYS(l, poll, p, np, timeout_ms);
	if (err < 0 && err != -EINTR) {
		free(p);
		return err;
	}
	err = 0;
	for (size_t i = 0; i < n; i++) {
		struct lthread *t = l->th[i];
		int e;

		/* POLLHUP: the thread has exited; drain what is left. */
		if (p[i].revents & POLLHUP)
			t->gone = 1;
		/* In snapshot mode this drains sideband only. */
		e = drain_thread(l, t, cb);
		if (e < 0 && !err)
			err = e;
	}
	free(p);
	if (l->o.ntriggers) {
		trigger_count(l);
		if (l->firing && trigger_tail_done(l)) {
			int e;

			l->firing = 0;
			l->st.trigger_snapshots++;
			e = strace_live_snapshot(l, cb);
			if (e < 0 && !err)
				err = e;
			if (!l->o.trigger_next) {
				l->trig_done = 1;
				l->want_stop = 1;
			}
		}
	}
	if (l->o.snapshot && l->want_snapshot) {
		int e;

		l->want_snapshot = 0;
		e = strace_live_snapshot(l, cb);
		if (e < 0 && !err)
			err = e;
	}
	{
		int e = reap_gone(l, cb);

		if (e < 0 && !err)
			err = e;
	}
	return err < 0 ? err : (int)l->nth;
}

int strace_live_stop(struct strace_live *l, const struct strace_live_cb *cb)
{
	int err = 0, e;

	for (size_t i = 0; i < l->nth; i++) {
		SYS(l, ioctl, l->th[i]->fd_pt, PERF_EVENT_IOC_DISABLE, 0);
		SYS(l, ioctl, l->th[i]->fd_track, PERF_EVENT_IOC_DISABLE, 0);
	}
	/* the snapshot at exit: with triggers, only if none took one (the
	 * last moments of a run whose trigger never ran) */
	if (l->o.snapshot && !l->st.trigger_snapshots) {
		e = strace_live_snapshot(l, cb);
		if (e < 0)
			err = e;
	}
	for (size_t i = 0; i < l->nth; i++) {
		l->th[i]->need_enable = 0;
		l->th[i]->ar.align = 1; /* the last bytes too */
		e = l->o.snapshot ? 0 : drain_thread(l, l->th[i], cb);
		if (e < 0 && !err)
			err = e;
	}
	for (size_t i = 0; i < l->nth; i++)
		strace_live_thread_free(l, l->th[i]);
	l->nth = 0;
	if (l->cork_fd >= 0) {
		close(l->cork_fd);
		l->cork_fd = -1;
	}
	e = strace_livew_close(l);
	if (e < 0 && !err)
		err = e;
	return err;
}

void strace_live_get_stats(const struct strace_live *l,
			   struct strace_live_stats *st)
{
	*st = l->st;
}

const struct perf_event_attr *strace_live_pt_attr(const struct strace_live *l)
{
	return &l->pt;
}

void strace_live_close(struct strace_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nth; i++)
		strace_live_thread_free(l, l->th[i]);
	if (l->cork_fd >= 0)
		close(l->cork_fd);
	if (l->w)
		strace_perfw_free(l->w);
	free(l->th);
	free(l->ids);
	for (size_t i = 0; i < l->nobjs; i++)
		free(l->objs[i].path);
	free(l->objs);
	free(l->snapbuf);
	free(l);
}
