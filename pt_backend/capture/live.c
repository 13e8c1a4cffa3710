/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/live.c - see capture.h. */
#include "capture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxring.h"
#include "decoder/decoder.h" /* struct strace_time_conv */
#include "pmu.h"
#include "probe.h"
#include "pt_backend/perf/perf.h"
#include "unwind.h"
#include "vdso.h"

/* Polls without AUX progress before a thread's event is enabled again. */
#define IDLE_ENABLE 256
/* A trigger probe's ring: a page of samples after the metadata page. */
#define PROBE_PAGES 2

/* One --trigger probe of a thread: its event and sample ring. */
struct lprobe {
	int fd; /* -1: not open (a breakpoint whose address is unknown) */
	void *base;
	struct strace_dring dr;
};

struct lthread {
	pid_t tid;
	int idx; /* queue number in -w output */
	int fd_pt, fd_track;
	void *base;
	size_t base_len;
	void *aux;
	size_t aux_len;
	uint64_t id_pt, id_track;
	struct strace_dring dr;
	struct strace_auxring ar;
	int need_enable; /* a TRUNCATED record disabled the event */
	uint64_t last_ahead; /* aux_head at the previous poll */
	unsigned idle_polls; /* polls since aux_head last moved */
	int gone;        /* EXIT seen or POLLHUP */
	uint64_t snap_off; /* snapshot mode: stream offset of the next chunk */
	/* -w, full trace: PT bytes not yet written, from stream offset woff */
	uint8_t *wbuf;
	size_t wlen, wcap;
	uint64_t woff;
	struct lprobe *probes; /* --trigger, l->o.ntriggers of them */
	int *fd_win;           /* --start-at/--stop-at, in fd_pt's group */
	uint64_t head_at_fire; /* aux_head when a trigger fired */
};

/* An object a -w mapping record names, for the BUILD_ID feature. */
struct wobj {
	char *path;
	uint8_t id[STRACE_BUILDID_MAX]; /* the record's (MMAP_BUILD_ID) */
	size_t n;                       /* 0: read from the file at close */
};

struct strace_live {
	struct strace_live_opts o;
	const struct strace_live_sys *sys;
	struct strace_pmu pmu;
	struct perf_event_attr pt, track;
	char filter[1024];
	size_t page, aux_bytes, data_bytes, snap_bytes;
	pid_t pid;
	int spawned, cork_fd;
	struct lthread **th;
	size_t nth, cap;
	int next_idx;
	uint8_t *snapbuf;
	volatile sig_atomic_t want_snapshot, want_stop;
	struct strace_live_stats st;
	struct strace_perfw *w;
	int wrote_info;
	uint8_t vdso_id[STRACE_BUILDID_MAX]; /* the traced vDSO's, for -w */
	size_t vdso_idlen;
	struct wobj *objs; /* -w: the objects its MMAP2 records name */
	size_t nobjs, capobjs;
	uint64_t *ids;
	size_t nids, idcap;
	/* --trigger: the uprobe PMU, or breakpoints at these run-time
	 * addresses (0: the object is not mapped yet) */
	struct strace_uprobe_pmu up;
	uint64_t *trig_rt;
	double t0;       /* when the session was opened */
	uint64_t hits;   /* counted toward trigger_count */
	int firing;      /* a trigger fired: snapshot after the tail */
	double fired_at;
	int trig_done;   /* fired, and not --trigger-next */
	char why[6144];  /* what strace_live_why() says */
};

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

static int read_int(const char *procfs, const char *rel, int *v)
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
	read_int(procfs_root, "sys/kernel/perf_event_paranoid", &paranoid);
	/* Above 2 (Debian's 3) unprivileged users may not use perf at all. */
	if (!privileged && paranoid > 2)
		return -STRACE_E_PARANOID;
	if (read_int(procfs_root, "sys/kernel/yama/ptrace_scope", &scope) < 0)
		scope = 0;
	/* 3: nobody may attach; 2: only CAP_SYS_PTRACE; 1: only descendants. */
	if (pid > 0 && (scope >= 3 || (!privileged && scope >= 1)))
		return -STRACE_E_PTRACE_SCOPE;
	return 0;
}

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

/* ---------------- perf.data output (-w) ---------------- */

static int w_info(struct strace_live *l, struct lthread *t)
{
	struct strace_time_conv tc;
	uint64_t priv[PFMT_IPT_PRIV_MAX + 3];
	uint8_t buf[8 + 8 + sizeof(priv) + 1024];
	struct pfmt_event_header h = {PFMT_RECORD_AUXTRACE_INFO, 0, 0};
	uint32_t type[2] = {PFMT_AUXTRACE_INTEL_PT, 0};
	size_t flen = strlen(l->filter), fpad = flen ? (flen + 8) & ~7u : 0;
	size_t n;
	int err;

	(void)t;
	strace_live_time_conv(l, &tc);
	memset(priv, 0, sizeof(priv));
	priv[PFMT_IPT_PMU_TYPE] = l->pmu.type;
	priv[PFMT_IPT_TIME_SHIFT] = tc.time_shift;
	priv[PFMT_IPT_TIME_MULT] = tc.time_mult;
	priv[PFMT_IPT_TIME_ZERO] = tc.time_zero;
	priv[PFMT_IPT_CAP_USER_TIME_ZERO] = (uint64_t)tc.cap_user_time_zero;
	priv[PFMT_IPT_TSC_BIT] = strace_pmu_format_bits(&l->pmu, "tsc");
	priv[PFMT_IPT_NORETCOMP_BIT] = strace_pmu_format_bits(&l->pmu, "noretcomp");
	priv[PFMT_IPT_SNAPSHOT_MODE] = (uint64_t)l->o.snapshot;
	priv[PFMT_IPT_MTC_BIT] = strace_pmu_format_bits(&l->pmu, "mtc");
	priv[PFMT_IPT_MTC_FREQ_BITS] = strace_pmu_format_bits(&l->pmu, "mtc_period");
	priv[PFMT_IPT_TSC_CTC_N] = tc.tsc_ctc_ratio_n;
	priv[PFMT_IPT_TSC_CTC_D] = tc.tsc_ctc_ratio_d;
	priv[PFMT_IPT_CYC_BIT] = strace_pmu_format_bits(&l->pmu, "cyc");
	priv[PFMT_IPT_MAX_NONTURBO_RATIO] = (uint64_t)l->pmu.max_nonturbo_ratio;
	priv[PFMT_IPT_FILTER_STR_LEN] = flen;
	n = 0;
	memcpy(buf + 8, type, 8);
	memcpy(buf + 16, priv, (PFMT_IPT_FILTER_STR_LEN + 1) * 8);
	n = 16 + (PFMT_IPT_FILTER_STR_LEN + 1) * 8;
	if (fpad) {
		memset(buf + n, 0, fpad);
		memcpy(buf + n, l->filter, flen);
		n += fpad;
	}
	{
		/*
		 * cap_event_trace (perf >= 5.19); time_cycles, time_mask and
		 * cap_user_time_short go in TIME_CONV below.
		 */
		uint64_t event_trace = 0;

		memcpy(buf + n, &event_trace, 8);
		n += 8;
	}
	h.size = (uint16_t)n;
	memcpy(buf, &h, 8);
	err = strace_perfw_record(l->w, buf, n);
	if (!err) {
		struct {
			struct pfmt_event_header h;
			struct pfmt_time_conv c;
		} r;

		memset(&r, 0, sizeof(r));
		r.h.type = PFMT_RECORD_TIME_CONV;
		r.h.size = sizeof(r);
		r.c.time_shift = tc.time_shift;
		r.c.time_mult = tc.time_mult;
		r.c.time_zero = tc.time_zero;
		r.c.time_cycles = tc.time_cycles;
		r.c.time_mask = tc.cap_user_time_short ? tc.time_mask : ~0ULL;
		r.c.cap_user_time_zero = (uint8_t)tc.cap_user_time_zero;
		r.c.cap_user_time_short = (uint8_t)tc.cap_user_time_short;
		err = strace_perfw_record(l->w, &r, sizeof(r));
	}
	l->wrote_info = 1;
	return err;
}

static int w_add_id(struct strace_live *l, uint64_t id)
{
	if (l->nids == l->idcap) {
		size_t nc = l->idcap ? l->idcap * 2 : 16;
		uint64_t *n = realloc(l->ids, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->ids = n;
		l->idcap = nc;
	}
	l->ids[l->nids++] = id;
	return 0;
}

/* EVENT_DESC: names the two events for perf (evlist, script). */
static int w_event_desc(struct strace_live *l, const uint64_t *pt_ids,
			size_t np, const uint64_t *tr_ids, size_t nt)
{
	const struct perf_event_attr *a[2] = {&l->pt, &l->track};
	const uint64_t *ids[2] = {pt_ids, tr_ids};
	size_t nids[2] = {np, nt};
	char names[2][64];
	size_t sz = 8, pos = 0;
	uint8_t *b;
	uint32_t v;
	int err;

	memset(names, 0, sizeof(names));
	snprintf(names[0], 64, "%s",
		 l->o.event && !strncmp(l->o.event, "intel_pt/", 9)
			 ? l->o.event
			 : "intel_pt//u");
	snprintf(names[1], 64, "dummy:u");
	for (int i = 0; i < 2; i++)
		sz += sizeof(*a[i]) + 4 + 4 + 64 + 8 * nids[i];
	b = calloc(1, sz);
	if (!b)
		return -ENOMEM;
#define PUT(p, n)                                                              \
	do {                                                                   \
		memcpy(b + pos, p, n);                                         \
		pos += n;                                                      \
	} while (0)
	v = 2;
	PUT(&v, 4);
	v = sizeof(*a[0]);
	PUT(&v, 4);
	for (int i = 0; i < 2; i++) {
		PUT(a[i], sizeof(*a[i]));
		v = (uint32_t)nids[i];
		PUT(&v, 4);
		v = 64;
		PUT(&v, 4);
		PUT(names[i], 64);
		PUT(ids[i], 8 * nids[i]);
	}
#undef PUT
	err = strace_perfw_feature(l->w, PFMT_FEAT_EVENT_DESC, b, pos);
	free(b);
	return err;
}

/*
 * -w: the vDSO, as perf record keeps it: its build-id named in the file's
 * BUILD_ID feature (written at close) and its bytes in the build-id cache,
 * where perf script and ptrace-capture -i look. A cache that cannot be
 * written leaves the file without the vDSO's code, nothing worse.
 */
static void w_vdso(struct strace_live *l, const void *buf, size_t len)
{
	l->vdso_idlen = strace_buildid_of(buf, len, l->vdso_id);
	if (l->vdso_idlen && l->o.buildid_dir)
		(void)strace_buildid_vdso_add(l->o.buildid_dir, l->vdso_id,
					      l->vdso_idlen, buf, len);
}

/*
 * -w: note the object an executable mapping record (MMAP, MMAP2) names,
 * once per path, for the BUILD_ID feature written at close; perf record
 * names every object of an AUX-area recording so. A record that carries
 * its build-id (MMAP_BUILD_ID) gives it; the others' are read from their
 * files at close, as perf reads them. Out of memory: the object goes
 * unnamed (its decode is then unchecked, nothing worse).
 */
static void w_note_mmap(struct strace_live *l, const struct pfmt_event_header *rec)
{
	struct strace_perf_map m;
	const char *name;

	if (strace_perf_map_parse(rec->type, rec->misc, rec + 1,
				  rec->size - 8u, &m) <= 0)
		return;
	name = m.path;
	if (!m.exec || name[0] != '/')
		return; /* ([vdso] has its entry; [heap], //anon: no file) */
	for (size_t i = 0; i < l->nobjs; i++)
		if (!strcmp(l->objs[i].path, name))
			return;
	if (l->nobjs == l->capobjs) {
		size_t nc = l->capobjs ? l->capobjs * 2 : 16;
		struct wobj *v = realloc(l->objs, nc * sizeof(*v));

		if (!v)
			return;
		l->objs = v;
		l->capobjs = nc;
	}
	struct wobj *o = &l->objs[l->nobjs];
	memset(o, 0, sizeof(*o));
	if (!(o->path = strdup(name)))
		return;
	if (m.id && m.nid <= STRACE_BUILDID_MAX) {
		o->n = m.nid;
		memcpy(o->id, m.id, m.nid);
	}
	l->nobjs++;
}

/* The BUILD_ID feature: the vDSO, and every object noted above that has
 * a build-id (pid -1: perf's host machine). */
static int w_buildids(struct strace_live *l)
{
	uint8_t *b = NULL;
	size_t n = 0;
	int err = 0;

	if (l->vdso_idlen)
		err = strace_buildid_entry(&b, &n, -1, l->vdso_id,
					   l->vdso_idlen, "[vdso]");
	for (size_t i = 0; i < l->nobjs && !err; i++) {
		struct wobj *o = &l->objs[i];

		if (!o->n) {
			int k = strace_buildid_of_file(o->path, o->id);
			o->n = k > 0 ? (size_t)k : 0;
		}
		if (o->n)
			err = strace_buildid_entry(&b, &n, -1, o->id, o->n,
						   o->path);
	}
	if (!err && n)
		err = strace_perfw_feature(l->w, PFMT_FEAT_BUILD_ID, b, n);
	free(b);
	return err;
}

static int w_close(struct strace_live *l)
{
	uint64_t *pt_ids, *tr_ids;
	size_t np = 0, nt = 0;
	int err;

	if (!l->w)
		return 0;
	{
		/* perf record ends its rounds with FINISHED_ROUND */
		struct pfmt_event_header fr = {PFMT_RECORD_FINISHED_ROUND, 0, 8};

		strace_perfw_record(l->w, &fr, sizeof(fr));
	}
	/* ids were stored in pairs: pt, track */
	pt_ids = malloc((l->nids / 2 + 1) * 8);
	tr_ids = malloc((l->nids / 2 + 1) * 8);
	if (!pt_ids || !tr_ids) {
		free(pt_ids);
		free(tr_ids);
		strace_perfw_free(l->w);
		l->w = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i + 1 < l->nids; i += 2) {
		pt_ids[np++] = l->ids[i];
		tr_ids[nt++] = l->ids[i + 1];
	}
	strace_perfw_add_attr(l->w, &l->pt, pt_ids, np);
	strace_perfw_add_attr(l->w, &l->track, tr_ids, nt);
	err = w_event_desc(l, pt_ids, np, tr_ids, nt);
	free(pt_ids);
	free(tr_ids);
	if (!err)
		err = w_buildids(l);
	if (err < 0) {
		strace_perfw_free(l->w);
		l->w = NULL;
		return err;
	}
	{
		/* perf script dereferences hostname and os release */
		struct utsname u;

		if (uname(&u) < 0)
			memset(&u, 0, sizeof(u));
		strace_perfw_feature_string(l->w, PFMT_FEAT_HOSTNAME, u.nodename);
		strace_perfw_feature_string(l->w, PFMT_FEAT_OSRELEASE, u.release);
		strace_perfw_feature_string(l->w, PFMT_FEAT_ARCH,
					    u.machine[0] ? u.machine : "x86_64");
	}
	strace_perfw_feature_string(l->w, PFMT_FEAT_VERSION, "6.1");
	{
		uint8_t buf[2 * (8 + 64) + 4];
		uint32_t nr = 2, t1 = l->pmu.type, t2 = PERF_TYPE_SOFTWARE, len = 64;

		memset(buf, 0, sizeof(buf));
		memcpy(buf, &nr, 4);
		memcpy(buf + 4, &t1, 4);
		memcpy(buf + 8, &len, 4);
		memcpy(buf + 12, "intel_pt", 9);
		memcpy(buf + 76, &t2, 4);
		memcpy(buf + 80, &len, 4);
		memcpy(buf + 84, "software", 9);
		strace_perfw_feature(l->w, PFMT_FEAT_PMU_MAPPINGS, buf, sizeof(buf));
	}
	{
		uint32_t nr[2];
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		nr[0] = nr[1] = c > 0 ? (uint32_t)c : 1;
		strace_perfw_feature(l->w, PFMT_FEAT_NRCPUS, nr, sizeof(nr));
	}
	err = strace_perfw_close(l->w);
	l->w = NULL;
	return err;
}

/* ---------------- threads ---------------- */

#define SYS(l, fn, ...) ((l)->sys->fn((l)->sys->arg, __VA_ARGS__))

/* Write len bytes of t's staged PT as one AUXTRACE record. */
static int w_aux(struct strace_live *l, struct lthread *t, uint64_t off,
		 const void *p, size_t len)
{
	struct pfmt_auxtrace a;

	memset(&a, 0, sizeof(a));
	a.offset = off;
	a.reference = __builtin_ia32_rdtsc(); /* as perf record: TSC at read */
	a.idx = (uint32_t)t->idx;
	a.tid = (uint32_t)t->tid;
	a.cpu = UINT32_MAX;
	return strace_perfw_auxtrace(l->w, &a, p, len);
}

/* Start of the last PSB (02 82 x 8) in p[1..len), or 0 if none. */
static size_t last_psb(const uint8_t *p, size_t len)
{
	static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};

	for (size_t i = len >= 16 ? len - 16 : 0; i > 0; i--)
		if (p[i] == 2 && !memcmp(p + i, psb, 16))
			return i;
	return 0;
}

/*
 * -w keeps PT bytes per thread and writes them in AUXTRACE records that
 * start at a PSB: no packet is then split between two records (perf 6.1's
 * decoder loses sync at such a split: tests/live/e2e-live-replay.sh).
 * all: write everything staged (thread end, stop).
 */
static int w_stage_flush(struct strace_live *l, struct lthread *t, int all)
{
	size_t cut;
	int err;

	if (!l->w || !t->wlen)
		return 0;
	cut = all ? t->wlen : last_psb(t->wbuf, t->wlen);
	/* no PSB in a large buffer (PSBs off?): write it anyway */
	if (!cut && t->wlen >= (4u << 20))
		cut = t->wlen;
	if (!cut)
		return 0;
	err = w_aux(l, t, t->woff, t->wbuf, cut);
	memmove(t->wbuf, t->wbuf + cut, t->wlen - cut);
	t->wlen -= cut;
	t->woff += cut;
	return err;
}

static int w_stage(struct strace_live *l, struct lthread *t, uint64_t off,
		   const void *p, size_t len)
{
	if (t->wlen && t->woff + t->wlen != off) {
		/* a gap (truncation): what is staged ends here */
		int err = w_stage_flush(l, t, 1);

		if (err)
			return err;
	}
	if (!t->wlen)
		t->woff = off;
	if (t->wlen + len > t->wcap) {
		size_t nc = t->wcap ? t->wcap : 65536;
		uint8_t *nb;

		while (nc < t->wlen + len)
			nc *= 2;
		nb = realloc(t->wbuf, nc);
		if (!nb)
			return -ENOMEM;
		t->wbuf = nb;
		t->wcap = nc;
	}
	memcpy(t->wbuf + t->wlen, p, len);
	t->wlen += len;
	return t->wlen >= 65536 ? w_stage_flush(l, t, 0) : 0;
}

static void thread_free(struct strace_live *l, struct lthread *t)
{
	if (!t)
		return;
	w_stage_flush(l, t, 1);
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
		read_int(l->o.procfs_root, "sys/kernel/perf_event_paranoid",
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
static int probe_open(struct strace_live *l, struct lthread *t, size_t i,
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
static void thread_enable(struct strace_live *l, struct lthread *t)
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
			err = probe_open(l, t, i, 0);
		if (err < 0)
			goto fail;
	}
	if (enable)
		thread_enable(l, t);
	t->idx = l->next_idx++;
	if (l->o.write_path) {
		if (!l->w) {
			err = strace_perfw_open(&l->w, l->o.write_path);
			if (err)
				goto fail;
		}
		if ((err = w_add_id(l, t->id_pt)) < 0 ||
		    (err = w_add_id(l, t->id_track)) < 0)
			goto fail;
	}
	*out = t;
	return 0;
fail:
	thread_free(l, t);
	return err;
}

static struct lthread *find_thread(struct strace_live *l, pid_t tid)
{
	for (size_t i = 0; i < l->nth; i++)
		if (l->th[i]->tid == tid)
			return l->th[i];
	return NULL;
}

static int add_thread(struct strace_live *l, pid_t tid, int enable)
{
	struct lthread *t = NULL;
	int err;

	if (find_thread(l, tid))
		return 0;
	if (l->nth == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 8;
		struct lthread **n = realloc(l->th, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->th = n;
		l->cap = nc;
	}
	err = thread_open(l, tid, enable, &t);
	if (err)
		return err;
	l->th[l->nth++] = t;
	l->st.threads++;
	if (l->w && !l->wrote_info)
		return w_info(l, t);
	return 0;
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
			err = probe_open(l, l->th[k], i, 1);
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
		w_note_mmap(l, rec);
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
		w_note_mmap(l, rec);
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
		err = l->o.snapshot ? w_aux(l, c->t, off, p, len)
				    : w_stage(l, c->t, off, p, len);
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
		int e = add_thread(l, c.new_tids[i], 1);

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
	struct lthread *t = find_thread(l, pid);
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
			if (find_thread(l, tids[i]))
				continue;
			err = add_thread(l, tids[i], 0);
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
				w_vdso(l, buf, len);
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
		thread_enable(l, l->th[i]);
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
	err = add_thread(l, child, 0);
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
			thread_free(l, t);
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
		thread_free(l, l->th[i]);
	l->nth = 0;
	if (l->cork_fd >= 0) {
		close(l->cork_fd);
		l->cork_fd = -1;
	}
	e = w_close(l);
	if (e < 0 && !err)
		err = e;
	return err;
}

static void cpuid_15(uint32_t *n, uint32_t *d)
{
	unsigned a = 0, b = 0, c = 0, dd = 0;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(dd)
			 : "a"(0x15), "c"(0));
	*n = b;
	*d = a;
}

int strace_live_has_ptw(const struct strace_live *l)
{
	uint64_t bits = strace_pmu_format_bits(&l->pmu, "ptw");

	return bits && (l->pt.config & bits) != 0;
}

int strace_live_time_conv(const struct strace_live *l,
			  struct strace_time_conv *tc)
{
	const struct perf_event_mmap_page *pg;
	uint32_t seq;
	uint64_t mtc_bits = strace_pmu_format_bits(&l->pmu, "mtc_period");

	memset(tc, 0, sizeof(*tc));
	if (!l->nth)
		return -ENOENT;
	pg = l->th[0]->base;
	/* The kernel updates these under a sequence count (pg->lock). */
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		tc->time_shift = pg->time_shift;
		tc->time_mult = pg->time_mult;
		tc->time_zero = pg->time_zero;
		tc->cap_user_time_zero = pg->cap_user_time_zero;
		tc->cap_user_time_short = pg->cap_user_time_short;
		tc->time_cycles = pg->time_cycles;
		tc->time_mask = pg->time_mask;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq || (seq & 1));
	if (tc->time_shift > 63) {
		/* a shift no conversion can use (the kernel's is below 64):
		 * no conversion rather than an undefined shift, and no such
		 * value in the perf.data a session writes */
		memset(tc, 0, sizeof(*tc));
		return -ERANGE;
	}
	cpuid_15(&tc->tsc_ctc_ratio_n, &tc->tsc_ctc_ratio_d);
	if (mtc_bits && (l->pt.config & strace_pmu_format_bits(&l->pmu, "mtc"))) {
		unsigned shift = (unsigned)__builtin_ctzll(mtc_bits);

		tc->mtc_period = (uint32_t)((l->pt.config & mtc_bits) >> shift);
		tc->has_mtc = 1;
	}
	tc->max_nonturbo_ratio = (uint32_t)l->pmu.max_nonturbo_ratio;
	return 0;
}

uint64_t strace_live_tsc_to_perf(const struct strace_time_conv *tc,
				 uint64_t tsc)
{
	if (tc->time_shift > 63) /* as strace_tsc_to_perf_time() */
		return tc->time_zero;
	uint64_t quot = tsc >> tc->time_shift;
	uint64_t rem = tsc & ((1ULL << tc->time_shift) - 1);

	return tc->time_zero + quot * tc->time_mult +
	       ((rem * tc->time_mult) >> tc->time_shift);
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
		thread_free(l, l->th[i]);
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
