/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/live_write.c - the perf.data a live session writes
 * (-w): header records, each thread's AUXTRACE chunks cut at a PSB, the
 * build-ids of the objects its MMAP2 records name.
 */
#include "live_int.h"
#include "strace/internal/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "strace/internal/perf_time.h"

int strace_livew_info(struct strace_live *l, struct lthread *t)
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

int strace_livew_add_id(struct strace_live *l, uint64_t id)
{
	if (l->nids == l->idcap) {
		uint64_t *n = strace_grow(l->ids, &l->idcap, sizeof(*n), 16);

		if (!n)
			return -ENOMEM;
		l->ids = n;
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
void strace_livew_vdso(struct strace_live *l, const void *buf, size_t len)
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
void strace_livew_note_mmap(struct strace_live *l,
			    const struct pfmt_event_header *rec)
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
		struct wobj *v =
			strace_grow(l->objs, &l->capobjs, sizeof(*v), 16);

		if (!v)
			return;
		l->objs = v;
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

int strace_livew_close(struct strace_live *l)
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

/* Write len bytes of t's staged PT as one AUXTRACE record. */
int strace_livew_aux(struct strace_live *l, struct lthread *t, uint64_t off,
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
int strace_livew_stage_flush(struct strace_live *l, struct lthread *t, int all)
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
	err = strace_livew_aux(l, t, t->woff, t->wbuf, cut);
	memmove(t->wbuf, t->wbuf + cut, t->wlen - cut);
	t->wlen -= cut;
	t->woff += cut;
	return err;
}

int strace_livew_stage(struct strace_live *l, struct lthread *t, uint64_t off,
		       const void *p, size_t len)
{
	if (t->wlen && t->woff + t->wlen != off) {
		/* a gap (truncation): what is staged ends here */
		int err = strace_livew_stage_flush(l, t, 1);

		if (err)
			return err;
	}
	if (!t->wlen)
		t->woff = off;
	/* doubled until the len bytes fit */
	while (t->wlen + len > t->wcap) {
		uint8_t *nb = strace_grow(t->wbuf, &t->wcap, 1, 65536);

		if (!nb)
			return -ENOMEM;
		t->wbuf = nb;
	}
	memcpy(t->wbuf + t->wlen, p, len);
	t->wlen += len;
	return t->wlen >= 65536 ? strace_livew_stage_flush(l, t, 0) : 0;
}
