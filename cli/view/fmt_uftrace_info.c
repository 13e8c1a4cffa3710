/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_uftrace_info.c - ptrace-read -f uftrace -o DIR: the files that
 * describe the recording: task.txt (a session per process, a task per
 * thread), a sid-SID.map file per session, events.txt (the gaps' user
 * events) and info (the header and its info lines).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt_uftrace.h"
#include "strace/version.h"

struct sess {
	uint32_t pid;
	uint64_t time; /* the earliest record of its threads */
	char sid[17];
	const char *exe;
};

static int cmp_sess(const void *a, const void *b)
{
	const struct sess *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_thr(const void *a, const void *b)
{
	const struct uthr *x = *(struct uthr *const *)a;
	const struct uthr *y = *(struct uthr *const *)b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static uint32_t pid_of(struct strace_names *nm, uint32_t tid)
{
	const struct strace_name *t = nm ? strace_names_thread(nm, tid) : NULL;

	if (!t)
		return tid;
	return t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux : (uint32_t)t->key;
}

/* A process's executable: the module whose file name begins with the
 * process's name (a command name is cut at 15 bytes); else the first
 * DSO; else the name. */
static const char *exe_of(struct strace_names *nm, uint32_t pid,
			  const struct mod *m, size_t n)
{
	const struct strace_name *p = nm ? strace_names_process(nm, pid) : NULL;
	const struct mod *first = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct mod *o = &m[m[i].owner];
		if (!first || m[i].dso->id < first->dso->id)
			first = &m[i];
		if (p && p->len &&
		    !strncmp(uft_base_name(o->path), p->str, p->len))
			return o->path;
	}
	if (first)
		return m[first->owner].path;
	return p && p->len ? p->str : "unknown";
}

static void sb_time(struct sb *b, uint64_t ns)
{
	uft_sb_printf(b, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
		      (unsigned long long)(ns % 1000000000u));
}

/* The threads with records, by their first, and a session per process
 * (by its first record), with the span of all the records. */
struct meta {
	struct uthr **th;
	struct sess *s;
	size_t nth, ns;
	uint64_t t0, t1;
};

/* Returns -1 when memory ran out. */
static int sessions(struct view *v, struct uft *u, struct mod *m, size_t n,
		    struct meta *mt)
{
	struct strace_names *nm = view_names(v);
	struct uthr **th;
	struct sess *s;
	size_t nth = 0, ns = 0;

	mt->t0 = UINT64_MAX;
	mt->t1 = 0;
	th = mt->th = calloc(u->nt ? u->nt : 1, sizeof(*th));
	s = mt->s = calloc(u->nt ? u->nt : 1, sizeof(*s));
	if (!th || !s)
		return -1;
	for (size_t k = 0; k < u->nt; k++)
		if (u->t[k]->size)
			th[nth++] = u->t[k];
	qsort(th, nth, sizeof(*th), cmp_thr);
	/* a session per process, from its earliest record on */
	for (size_t k = 0; k < nth; k++) {
		uint32_t pid = pid_of(nm, th[k]->tid);
		size_t j;
		for (j = 0; j < ns && s[j].pid != pid; j++)
			;
		if (j == ns) {
			uint64_t h = (pid + 0x9e3779b97f4a7c15ull) *
				     0xff51afd7ed558ccdull;
			s[ns].pid = pid;
			s[ns].time = th[k]->first;
			snprintf(s[ns].sid, sizeof(s[ns].sid), "%016llx",
				 (unsigned long long)(h ^ h >> 29));
			s[ns].exe = exe_of(nm, pid, m, n);
			ns++;
		}
		if (th[k]->first < mt->t0)
			mt->t0 = th[k]->first;
		if (th[k]->last > mt->t1)
			mt->t1 = th[k]->last;
	}
	qsort(s, ns, sizeof(*s), cmp_sess);
	mt->nth = nth;
	mt->ns = ns;
	return 0;
}

/* A sid-SID.map file per session (map), then task.txt. */
static int write_tasks(struct view *v, struct uft *u, const struct meta *mt,
		       const struct sb *map)
{
	struct strace_names *nm = view_names(v);
	const struct sess *s = mt->s;
	struct sb task = {0};
	char file[64];
	int rc = -1;

	for (size_t j = 0; j < mt->ns; j++) {
		uft_sb_str(&task, "SESS timestamp=");
		sb_time(&task, s[j].time);
		uft_sb_printf(&task, " pid=%u sid=%s exename=\"%s\"\n",
			      s[j].pid, s[j].sid, s[j].exe);
		snprintf(file, sizeof(file), "sid-%s.map", s[j].sid);
		if (uft_put_file(v, u, file, map->p, map->len) < 0)
			goto out;
	}
	for (size_t k = 0; k < mt->nth; k++) {
		uint32_t pid = pid_of(nm, mt->th[k]->tid);
		size_t j;
		for (j = 0; j < mt->ns && s[j].pid != pid; j++)
			;
		/* from its session's start: uftrace finds a thread's
		 * session by the times of the two */
		uft_sb_str(&task, "TASK timestamp=");
		sb_time(&task, s[j].time);
		uft_sb_printf(&task, " tid=%u pid=%u\n", mt->th[k]->tid, pid);
	}
	if (task.failed)
		view_fail(v, -ENOMEM);
	else
		rc = uft_put_file(v, u, "task.txt", task.p, task.len);
out:
	free(task.p);
	return rc;
}

/* The gaps' user events (utils/event.c: read_events_file). */
static int write_events(struct view *v, struct uft *u)
{
	struct sb ev = {0};
	int rc = -1;

	if (!u->nev)
		return 0;
	for (size_t k = 0; k < u->nev; k++)
		uft_sb_printf(&ev, "EVENT: %u ptrace-read:%s\n",
			      UFT_EVENT_USER + (unsigned)k, u->ev[k]);
	if (ev.failed)
		view_fail(v, -ENOMEM);
	else
		rc = uft_put_file(v, u, "events.txt", ev.p, ev.len);
	free(ev.p);
	return rc;
}

/* info: the header, then the lines of its info mask, in bit order:
 * exename 0, cmdline 3, cpuinfo 4, taskinfo 7, record_date 11,
 * pattern_type 12, uftrace_version 13. */
static int write_info(struct view *v, struct uft *u, const struct meta *mt)
{
	struct strace_names *nm = view_names(v);
	const struct sess *s = mt->s;
	struct uthr *const *th = mt->th;
	const size_t ns = mt->ns, nth = mt->nth;
	const uint64_t t0 = mt->t0, t1 = mt->t1;
	struct sb info = {0};
	int rc = -1;
	unsigned char h[40];
	/* TASK_SESSION, SYM_REL_ADDR, MAX_STACK; EVENT */
	uint64_t feat = 1u << 1 | 1u << 5 | 1u << 6 |
			(u->nev ? 1u << 7 : 0);
	/* what the recording said of where it was made */
	const struct strace_name *cmd = NULL, *host = NULL, *rel = NULL,
				 *cpus = NULL, *desc = NULL;
	if (nm) {
		cmd = strace_names_info(nm, STRACE_INFO_CMDLINE);
		host = strace_names_info(nm, STRACE_INFO_HOSTNAME);
		rel = strace_names_info(nm, STRACE_INFO_OSRELEASE);
		cpus = strace_names_info(nm, STRACE_INFO_NRCPUS);
		desc = strace_names_info(nm, STRACE_INFO_CPUDESC);
	}
	/* (osinfo 6 only when the recording said; cmdline always:
	 * uftrace dump --chrome writes invalid JSON without one) */
	uint64_t mask = 1u << 0 | 1u << 3 | 1u << 4 |
			(host || rel ? 1u << 6 : 0) | 1u << 7 |
			1u << 11 | 1u << 12 | 1u << 13;
	uint32_t version = 4;
	uint16_t hsize = 40, max_stack = UFT_DEPTH_FIELD;
	const uint16_t one = 1;
	time_t now = time(NULL);
	char date[64];

	/* uftrace keeps max_stack frames per thread: as many as the
	 * deepest stack (no frame written is deeper) */
	struct strace_stack_stats st;
	view_stack_stats(v, &st);
	if (st.max_depth > max_stack)
		max_stack = (uint16_t)(st.max_depth < UFT_DEPTH_MAX
					       ? st.max_depth
					       : UFT_DEPTH_MAX);
	memset(h, 0, sizeof(h));
	memcpy(h, "Ftrace!", 8);
	memcpy(h + 8, &version, 4);
	memcpy(h + 12, &hsize, 2);
	h[14] = *(const unsigned char *)&one ? 1 : 2; /* ELFDATA2LSB */
	h[15] = 2;                                    /* ELFCLASS64 */
	memcpy(h + 16, &feat, 8);
	memcpy(h + 24, &mask, 8);
	memcpy(h + 32, &max_stack, 2);
	uft_sb_add(&info, (const char *)h, sizeof(h));
	uft_sb_printf(&info, "exename:%s\n", ns ? s[0].exe : "unknown");
	if (cmd)
		uft_sb_printf(&info, "cmdline:%.*s\n", (int)cmd->len,
			      cmd->str);
	else
		uft_sb_str(&info, "cmdline:(the recording did not say)\n");
	if (cpus)
		uft_sb_printf(&info,
			      "cpuinfo:lines=2\ncpuinfo:nr_cpus=%u / %u "
			      "(online/possible)\n",
			      (unsigned)(cpus->aux >> 32),
			      (unsigned)(cpus->aux & 0xffffffffu));
	else
		uft_sb_str(&info, "cpuinfo:lines=1\n");
	if (desc)
		uft_sb_printf(&info, "cpuinfo:desc=%.*s, traced with Intel PT\n",
			      (int)desc->len, desc->str);
	else
		uft_sb_str(&info, "cpuinfo:desc=x86-64, traced with Intel PT\n");
	if (host || rel)
		uft_sb_printf(&info,
			      "osinfo:lines=3\nosinfo:kernel=Linux %.*s\n"
			      "osinfo:hostname=%.*s\n"
			      "osinfo:distro=\"unknown\"\n",
			      rel ? (int)rel->len : 7,
			      rel ? rel->str : "unknown",
			      host ? (int)host->len : 7,
			      host ? host->str : "unknown");
	uft_sb_printf(&info, "taskinfo:lines=2\ntaskinfo:nr_tid=%zu\n"
		      "taskinfo:tids=",
		      nth);
	for (size_t k = 0; k < nth; k++)
		uft_sb_printf(&info, "%s%u", k ? "," : "", th[k]->tid);
	if (!ctime_r(&now, date))
		strcpy(date, "unknown\n");
	uft_sb_printf(&info, "\nrecord_date:%s", date);
	uft_sb_str(&info, "elapsed_time:");
	sb_time(&info, nth && t1 > t0 ? t1 - t0 : 0);
	uft_sb_str(&info, " sec\npattern_type:regex\n");
	uft_sb_printf(&info, "uftrace_version:%s %s (from an Intel PT ring)\n",
		      PROG, STRACE_VERSION);
	if (info.failed)
		view_fail(v, -ENOMEM);
	else
		rc = uft_put_file(v, u, "info", info.p, info.len);
	free(info.p);
	return rc;
}

int uft_write_meta(struct view *v, struct uft *u, struct mod *m, size_t n,
		   const struct sb *map)
{
	struct meta mt = {0};
	int rc = -1;

	if (sessions(v, u, m, n, &mt) < 0)
		view_fail(v, -ENOMEM);
	else if (write_tasks(v, u, &mt, map) == 0 && write_events(v, u) == 0 &&
		 write_info(v, u, &mt) == 0)
		rc = 0;
	free(mt.th);
	free(mt.s);
	return rc;
}
