/* SPDX-License-Identifier: MIT */
/*
 * tests/ptsynth/ptfork.c - a per-CPU recording of several processes, as
 * root's `perf record -e intel_pt//u -- CMD` writes one for a CMD that
 * forks and execs, made of ptsynth --per-cpu recordings of single
 * programs (ptsynth cannot run a program that forks: see docs/ptsynth.md).
 *
 *   ptfork -o OUT.data -t OUT.truth [--hostile WHAT] PARENT.data
 *          [fork:A.data] [exec:B.data]...
 *
 * --hostile unknown-parent: the FORK records name a parent pid that
 * nothing else names; exec-no-maps: no MMAP2 after an exec; unknown-tid:
 * the switch record before CPU 1's last chunk names a task the recording
 * has nothing else about (its trace belongs to no known process).
 *
 * PARENT's process forks each other one just after its first chunk (its
 * first syscall). A `fork:` child runs in its parent's image: it must be
 * a recording of the same program (same mappings; ptsynth runs under QEMU,
 * without address randomisation). An `exec:` child execs its own program
 * before its first chunk: COMM|EXEC, then its MMAP2 records.
 *
 * Every chunk (a thread's run on a CPU, one AUXTRACE record of its input)
 * is placed after the previous chunk on its CPU and its thread's previous
 * chunk, its TSC/TMA/MTC packets shifted by a multiple of the MTC period
 * (as ptsynth's own schedule does), so chunks of different processes
 * follow one another on each CPU's stream with no PSB between them.
 * Sideband: FORK (child of PARENT), COMM|EXEC and MMAP2 of exec children,
 * EXIT, ITRACE_START, AUX, and CPU-wide switch records (have_sched_switch
 * 3: PERF_RECORD_SWITCH_CPU_WIDE out/in with the next/previous task, from
 * a system-wide dummy event). The truth is the inputs' truths together.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_backend/perf/perf.h"

#define NCPUS 2
#define ID_PT(c) (1 + (uint64_t)(c))
#define ID_DUMMY(c) (1 + NCPUS + (uint64_t)(c))
#define ID_SW(c) (1 + 2 * NCPUS + (uint64_t)(c))
#define GAP 16
#define TRAILER 32 /* sample_id of IP|TID|TIME|CPU|IDENTIFIER */

enum { ROLE_PARENT, ROLE_FORK, ROLE_EXEC };

struct srec { /* a sideband record of an input, trailer stripped */
	uint32_t type;
	uint16_t misc;
	uint8_t body[4096];
	size_t blen;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

struct chunk {
	int in;
	uint32_t pid, tid;
	uint32_t cpu;
	uint64_t s, e; /* TSC at sched-in and at the end, as recorded */
	uint8_t *data;
	size_t len;
	uint64_t off; /* the shift given by the schedule */
	uint64_t aux_off;
};

struct input {
	const char *path;
	int role;
	struct strace_perf p;
	uint32_t pid;
	struct srec *recs;
	size_t nrecs;
	uint64_t base;
	uint64_t first_s;
};

struct prec {
	uint64_t time;
	size_t seq;
	uint8_t *rec;
	size_t n;
	const struct chunk *chunk;
};

static struct input in[8];
static int nin;
static struct chunk *ch;
static size_t nch;
static struct prec *pr;
static size_t npr;
static uint8_t aux_info[1024], time_conv[256];
/* --hostile: damage the sideband (robustness tests) */
static int bad_parent, bad_exec, bad_tid;
static size_t aux_info_n, time_conv_n;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ptfork: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void read_input(struct input *x, int idx)
{
	struct strace_perf_rec r;
	uint64_t err_off, sw_in[NCPUS] = {0}, sw_out[NCPUS] = {0};
	uint32_t sw_tid[NCPUS] = {0}, sw_pid[NCPUS] = {0};
	int rc = strace_perf_open(x->path, &x->p, &err_off);

	if (rc < 0)
		die("%s: %s (offset 0x%llx)", x->path, strace_strerror(rc),
		    (unsigned long long)err_off);
	if (!x->p.per_cpu)
		die("%s: not a per-CPU recording: make it with ptsynth --per-cpu",
		    x->path);
	while ((rc = strace_perf_next(&x->p, &r)) > 0) {
		size_t blen = (size_t)r.size - 8;
		switch (r.type) {
		case PFMT_RECORD_AUXTRACE_INFO:
			if (!idx) {
				if (r.size > sizeof(aux_info))
					die("%s: AUXTRACE_INFO too long", x->path);
				memcpy(aux_info, (const uint8_t *)r.body - 8, r.size);
				aux_info_n = r.size;
			}
			break;
		case PFMT_RECORD_TIME_CONV:
			if (!idx && r.size <= sizeof(time_conv)) {
				memcpy(time_conv, (const uint8_t *)r.body - 8, r.size);
				time_conv_n = r.size;
			}
			break;
		case PFMT_RECORD_SWITCH:
			if (r.sid.cpu >= NCPUS)
				die("%s: CPU %u: more than %d CPUs", x->path,
				    r.sid.cpu, NCPUS);
			if (r.misc & PFMT_MISC_SWITCH_OUT) {
				sw_out[r.sid.cpu] = r.sid.time;
			} else {
				sw_in[r.sid.cpu] = r.sid.time;
				sw_tid[r.sid.cpu] = r.sid.tid;
				sw_pid[r.sid.cpu] = r.sid.pid;
			}
			break;
		case PFMT_RECORD_AUXTRACE: {
			struct pfmt_auxtrace a;
			struct chunk c;
			memcpy(&a, r.body, sizeof(a));
			if (a.cpu >= NCPUS)
				die("%s: AUXTRACE of CPU %u", x->path, a.cpu);
			memset(&c, 0, sizeof(c));
			c.in = idx;
			c.pid = sw_pid[a.cpu];
			c.tid = sw_tid[a.cpu];
			c.cpu = a.cpu;
			c.s = sw_in[a.cpu] + 2; /* ptsynth: switch-in 2 before */
			c.e = sw_out[a.cpu] - 1;
			c.len = (size_t)r.aux_size;
			c.data = xrealloc(NULL, c.len);
			memcpy(c.data, r.aux_data, c.len);
			ch = xrealloc(ch, (nch + 1) * sizeof(*ch));
			ch[nch++] = c;
			if (!x->first_s || c.s < x->first_s)
				x->first_s = c.s;
			break;
		}
		case PFMT_RECORD_COMM:
		case PFMT_RECORD_MMAP2:
		case PFMT_RECORD_FORK:
		case PFMT_RECORD_EXIT: {
			struct srec *s;
			if (blen < TRAILER || blen - TRAILER > sizeof(s->body))
				die("%s: record at 0x%llx: unexpected size",
				    x->path, (unsigned long long)r.offset);
			x->recs = xrealloc(x->recs,
					   (x->nrecs + 1) * sizeof(*x->recs));
			s = &x->recs[x->nrecs++];
			s->type = r.type;
			s->misc = r.misc;
			s->blen = blen - TRAILER;
			memcpy(s->body, r.body, s->blen);
			s->pid = r.sid.pid;
			s->tid = r.sid.tid;
			s->time = r.sid.time;
			s->cpu = r.sid.cpu;
			if (r.type == PFMT_RECORD_COMM &&
			    (r.misc & PFMT_MISC_COMM_EXEC))
				x->pid = r.sid.pid;
			break;
		}
		default:
			break;
		}
	}
	if (rc < 0)
		die("%s: %s", x->path, strace_strerror(rc));
	if (!x->pid || !x->first_s)
		die("%s: no COMM|EXEC record or no trace", x->path);
}

static void prec_add(uint64_t time, const uint8_t *rec, size_t n,
		     const struct chunk *c)
{
	pr = xrealloc(pr, (npr + 1) * sizeof(*pr));
	pr[npr].time = time;
	pr[npr].seq = npr;
	pr[npr].n = n;
	pr[npr].chunk = c;
	pr[npr].rec = NULL;
	if (rec) {
		pr[npr].rec = xrealloc(NULL, n);
		memcpy(pr[npr].rec, rec, n);
	}
	npr++;
}

/* A record: header, body (already padded), sample_id trailer. */
static void rec(uint32_t type, uint16_t misc, const void *body, size_t blen,
		uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		uint64_t id)
{
	uint8_t buf[8 + 4096 + TRAILER];
	struct pfmt_event_header h = {type, misc,
				      (uint16_t)(8 + blen + TRAILER)};
	uint32_t t[8] = {pid, tid, (uint32_t)time, (uint32_t)(time >> 32), cpu,
			 0, (uint32_t)id, (uint32_t)(id >> 32)};

	memcpy(buf, &h, 8);
	memcpy(buf + 8, body, blen);
	memcpy(buf + 8 + blen, t, TRAILER);
	prec_add(time, buf, 8 + blen + TRAILER, NULL);
}

static int cmp_prec(const void *a, const void *b)
{
	const struct prec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;
	uint64_t sx = x->s + in[x->in].base, sy = y->s + in[y->in].base;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->in - y->in;
}

/* Shift the TSC, TMA and MTC packets of c by c->off TSC ticks. */
static void patch(struct chunk *c, uint64_t tsc_ctc, unsigned mtc_period)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_encoder *enc;
	uint8_t eb[32];
	uint64_t dctc = c->off / tsc_ctc;

	pt_config_init(&cfg);
	cfg.begin = c->data;
	cfg.end = c->data + c->len;
	d = pt_pkt_alloc_decoder(&cfg);
	pt_config_init(&cfg);
	cfg.begin = eb;
	cfg.end = eb + sizeof(eb);
	enc = pt_alloc_encoder(&cfg);
	if (!d || !enc || pt_pkt_sync_set(d, 0) < 0)
		die("libipt: cannot decode a chunk");
	for (;;) {
		struct pt_packet p;
		uint64_t at;
		int n;
		if (pt_pkt_get_offset(d, &at) < 0 ||
		    pt_pkt_next(d, &p, sizeof(p)) < 0)
			break;
		if (p.type == ppt_tsc)
			p.payload.tsc.tsc += c->off;
		else if (p.type == ppt_tma)
			p.payload.tma.ctc = (uint16_t)(p.payload.tma.ctc + dctc);
		else if (p.type == ppt_mtc)
			p.payload.mtc.ctc =
				(uint8_t)(p.payload.mtc.ctc + (dctc >> mtc_period));
		else
			continue;
		pt_enc_sync_set(enc, 0);
		n = pt_enc_next(enc, &p);
		if (n != p.size)
			die("libipt encoder: cannot patch a timing packet");
		memcpy(c->data + at, eb, (size_t)n);
	}
	pt_pkt_free_decoder(d);
	pt_free_encoder(enc);
}

static void schedule(void)
{
	const struct strace_time_conv *tc = &in[0].p.time;
	uint64_t tsc_ctc, q, cpu_end[NCPUS] = {0}, aux[NCPUS] = {0};
	uint64_t tf = 0;
	struct {
		uint32_t tid;
		uint64_t off;
	} last[64];
	size_t nlast = 0;

	if (!tc->tsc_ctc_ratio_d || tc->tsc_ctc_ratio_n % tc->tsc_ctc_ratio_d)
		die("%s: needs MTC timing with an integer TSC:CTC ratio",
		    in[0].path);
	tsc_ctc = tc->tsc_ctc_ratio_n / tc->tsc_ctc_ratio_d;
	q = tsc_ctc << tc->mtc_period;
	/* the fork: after the parent's first chunk */
	for (size_t i = 0; i < nch; i++)
		if (ch[i].in == 0 && (!tf || ch[i].s == in[0].first_s))
			tf = ch[i].e + 4;
	for (int k = 1; k < nin; k++) {
		uint64_t want = tf + 64 + 8 * (uint64_t)k;
		in[k].base = want > in[k].first_s ? want - in[k].first_s : 0;
		in[k].base = (in[k].base + q - 1) / q * q;
	}
	qsort(ch, nch, sizeof(*ch), cmp_chunk);
	for (size_t i = 0; i < nch; i++) {
		struct chunk *c = &ch[i];
		uint64_t off = in[c->in].base;
		size_t t;
		for (t = 0; t < nlast && last[t].tid != c->tid; t++)
			;
		if (t == nlast) {
			if (nlast == 64)
				die("more than 64 threads");
			last[nlast].tid = c->tid;
			last[nlast++].off = 0;
		}
		if (last[t].off > off)
			off = last[t].off;
		if (cpu_end[c->cpu] && cpu_end[c->cpu] + GAP > c->s + off)
			off = cpu_end[c->cpu] + GAP - c->s;
		off = (off + q - 1) / q * q;
		c->off = last[t].off = off;
		cpu_end[c->cpu] = c->e + off;
		c->aux_off = aux[c->cpu];
		aux[c->cpu] += (c->len + 7) / 8 * 8;
		patch(c, tsc_ctc, tc->mtc_period);
	}
}

static void sideband(void)
{
	uint64_t tf = 0;
	uint32_t prev[NCPUS][2] = {{0}};
	uint64_t prev_e[NCPUS] = {0};
	int started[NCPUS][64] = {{0}};
	uint32_t seen[64];
	size_t nseen = 0;

	for (size_t i = 0; i < nch; i++)
		if (ch[i].in == 0 && ch[i].s == in[0].first_s)
			tf = ch[i].e + ch[i].off + 4;
	for (int k = 0; k < nin; k++) {
		struct input *x = &in[k];
		uint64_t exec_t = x->first_s + x->base - 6;
		uint64_t first = UINT64_MAX;
		for (size_t i = 0; i < nch; i++)
			if (ch[i].in == k && ch[i].s + ch[i].off < first)
				first = ch[i].s + ch[i].off;
		exec_t = first - 6;
		if (x->role != ROLE_PARENT) {
			uint32_t pp = bad_parent ? 4000000 : in[0].pid;
			struct pfmt_fork f = {x->pid, pp, x->pid, pp,
					      tf + (uint64_t)k};
			rec(PFMT_RECORD_FORK, 0, &f, sizeof(f), x->pid, x->pid,
			    f.time, 0, ID_DUMMY(0));
		}
		for (size_t r = 0; r < x->nrecs; r++) {
			struct srec *s = &x->recs[r];
			uint64_t t = s->time + x->base;
			if (s->type == PFMT_RECORD_EXIT)
				continue; /* from the schedule, below */
			if (s->type == PFMT_RECORD_COMM &&
			    (s->misc & PFMT_MISC_COMM_EXEC)) {
				if (x->role == ROLE_FORK)
					continue; /* a fork child execs nothing */
				if (x->role == ROLE_EXEC)
					t = exec_t;
			}
			if (bad_exec && x->role == ROLE_EXEC &&
			    s->type == PFMT_RECORD_MMAP2)
				continue; /* an exec with no mappings after it */
			if (x->role == ROLE_EXEC && s->type == PFMT_RECORD_MMAP2 &&
			    t <= exec_t)
				t = exec_t + 1; /* the new program's, after */
			if (x->role == ROLE_FORK && t <= tf + (uint64_t)k)
				t = tf + (uint64_t)k + 1;
			rec(s->type, s->misc, s->body, s->blen, s->pid, s->tid, t,
			    s->cpu, ID_DUMMY(s->cpu < NCPUS ? s->cpu : 0));
		}
	}
	for (size_t i = 0; i < nch; i++) {
		const struct chunk *c = &ch[i];
		uint64_t s = c->s + c->off, e = c->e + c->off;
		struct pfmt_switch_cpu_wide out = {c->pid, c->tid};
		/* the last chunk of CPU 1's: a task the recording never
		 * names */
		int unknown = bad_tid && c->cpu == 1;
		for (size_t j = i + 1; unknown && j < nch; j++)
			if (ch[j].cpu == 1)
				unknown = 0;
		if (unknown)
			out.next_prev_pid = out.next_prev_tid = 4000001;
		struct pfmt_switch_cpu_wide inr = {prev[c->cpu][0],
						   prev[c->cpu][1]};
		struct pfmt_aux aux = {c->aux_off, (c->len + 7) / 8 * 8, 0};
		size_t t;

		for (t = 0; t < nseen && seen[t] != c->tid; t++)
			;
		if (t == nseen)
			seen[nseen++] = c->tid;
		if (!started[c->cpu][t]) {
			struct pfmt_itrace_start is = {c->pid, c->tid};
			started[c->cpu][t] = 1;
			rec(PFMT_RECORD_ITRACE_START, 0, &is, sizeof(is), c->pid,
			    c->tid, s - 4, c->cpu, ID_PT(c->cpu));
		}
		rec(PFMT_RECORD_SWITCH_CPU_WIDE, PFMT_MISC_SWITCH_OUT, &out,
		    sizeof(out), prev[c->cpu][0], prev[c->cpu][1], s - 3, c->cpu,
		    ID_SW(c->cpu));
		rec(PFMT_RECORD_SWITCH_CPU_WIDE, 0, &inr, sizeof(inr),
		    out.next_prev_pid, out.next_prev_tid, s - 2, c->cpu,
		    ID_SW(c->cpu));
		rec(PFMT_RECORD_AUX, 0, &aux, sizeof(aux), c->pid, c->tid, e + 1,
		    c->cpu, ID_PT(c->cpu));
		prec_add(e + 1, NULL, 0, c);
		prev[c->cpu][0] = c->pid;
		prev[c->cpu][1] = c->tid;
		prev_e[c->cpu] = e;
	}
	for (uint32_t cpu = 0; cpu < NCPUS; cpu++) {
		struct pfmt_switch_cpu_wide out = {0, 0};
		struct pfmt_switch_cpu_wide inr = {prev[cpu][0], prev[cpu][1]};
		if (!prev[cpu][1])
			continue;
		rec(PFMT_RECORD_SWITCH_CPU_WIDE, PFMT_MISC_SWITCH_OUT, &out,
		    sizeof(out), prev[cpu][0], prev[cpu][1], prev_e[cpu] + 2,
		    cpu, ID_SW(cpu));
		rec(PFMT_RECORD_SWITCH_CPU_WIDE, 0, &inr, sizeof(inr), 0, 0,
		    prev_e[cpu] + 3, cpu, ID_SW(cpu));
	}
	/* EXIT: after each thread's last chunk */
	for (size_t t = 0; t < nseen; t++) {
		const struct chunk *last = NULL;
		for (size_t i = 0; i < nch; i++)
			if (ch[i].tid == seen[t])
				last = &ch[i];
		struct pfmt_fork f = {last->pid, last->pid, last->tid, last->pid,
				      last->e + last->off + 5};
		rec(PFMT_RECORD_EXIT, 0, &f, sizeof(f), last->pid, last->tid,
		    f.time, last->cpu, ID_DUMMY(last->cpu));
	}
}

static void write_out(const char *out)
{
	struct strace_perfw *w;
	const struct strace_perf *p = &in[0].p;
	struct perf_event_attr pt, dummy, sw;
	uint64_t ids[NCPUS], dids[NCPUS], sids[NCPUS];
	uint64_t *priv;
	int err;

	if (p->pt_attr < 0 || p->nattrs < 2 || !aux_info_n)
		die("%s: not a ptsynth --per-cpu recording", in[0].path);
	pt = p->attrs[p->pt_attr].attr;
	dummy = p->attrs[p->pt_attr == 0 ? 1 : 0].attr;
	dummy.context_switch = 0; /* the switches come from sw */
	sw = dummy;
	sw.mmap = sw.comm = sw.task = sw.mmap2 = sw.comm_exec = 0;
	sw.inherit = 0;
	sw.context_switch = 1;
	for (int c = 0; c < NCPUS; c++) {
		ids[c] = ID_PT(c);
		dids[c] = ID_DUMMY(c);
		sids[c] = ID_SW(c);
	}
	/* AUXTRACE_INFO: header, type, reserved, then priv[] */
	priv = (uint64_t *)(void *)(aux_info + 16);
	priv[PFMT_IPT_HAVE_SCHED_SWITCH] = 3;

	err = strace_perfw_open(&w, out);
	if (err)
		die("cannot create %s: %s", out, strerror(-err));
	if (strace_perfw_add_attr(w, &pt, ids, NCPUS) ||
	    strace_perfw_add_attr(w, &dummy, dids, NCPUS) ||
	    strace_perfw_add_attr(w, &sw, sids, NCPUS) ||
	    strace_perfw_record(w, aux_info, aux_info_n) ||
	    (time_conv_n && strace_perfw_record(w, time_conv, time_conv_n)))
		die("writing %s", out);
	qsort(pr, npr, sizeof(*pr), cmp_prec);
	for (size_t i = 0; i < npr; i++) {
		if (pr[i].rec) {
			err = strace_perfw_record(w, pr[i].rec, pr[i].n);
		} else {
			const struct chunk *c = pr[i].chunk;
			struct pfmt_auxtrace a;
			memset(&a, 0, sizeof(a));
			a.offset = c->aux_off;
			a.reference = c->e + c->off;
			a.idx = c->cpu;
			a.tid = in[0].pid;
			a.cpu = c->cpu;
			err = strace_perfw_auxtrace(w, &a, c->data, c->len);
		}
		if (err)
			die("writing %s: %s", out, strerror(-err));
	}
	{
		struct pfmt_event_header fr = {PFMT_RECORD_FINISHED_ROUND, 0, 8};
		strace_perfw_record(w, &fr, sizeof(fr));
	}
	static const unsigned copy[] = {PFMT_FEAT_HOSTNAME, PFMT_FEAT_OSRELEASE,
					PFMT_FEAT_VERSION, PFMT_FEAT_ARCH,
					PFMT_FEAT_NRCPUS,
					PFMT_FEAT_PMU_MAPPINGS};
	for (size_t i = 0; i < sizeof(copy) / sizeof(copy[0]); i++) {
		const uint8_t *f;
		uint64_t n;
		if (strace_perf_feature(&in[0].p, copy[i], &f, &n) == 1)
			strace_perfw_feature(w, copy[i], f, (size_t)n);
	}
	{
		/* EVENT_DESC: the three events, their names and ids */
		const struct perf_event_attr *a[3] = {&pt, &dummy, &sw};
		const uint64_t *id[3] = {ids, dids, sids};
		const char *names[3] = {"intel_pt//u", "dummy:u", "dummy:u"};
		size_t sz = 8 + 3 * (sizeof(pt) + 8 + 64 + sizeof(ids));
		uint8_t *d = xrealloc(NULL, sz), *q = d;
		uint32_t v = 3;
		memcpy(q, &v, 4);
		v = pt.size;
		memcpy(q + 4, &v, 4);
		q += 8;
		for (int k = 0; k < 3; k++) {
			char name[64] = {0};
			memcpy(q, a[k], pt.size);
			q += pt.size;
			v = NCPUS;
			memcpy(q, &v, 4);
			v = sizeof(name);
			memcpy(q + 4, &v, 4);
			q += 8;
			snprintf(name, sizeof(name), "%s", names[k]);
			memcpy(q, name, sizeof(name));
			q += sizeof(name);
			memcpy(q, id[k], sizeof(ids));
			q += sizeof(ids);
		}
		strace_perfw_feature(w, PFMT_FEAT_EVENT_DESC, d, (size_t)(q - d));
		free(d);
	}
	err = strace_perfw_close(w);
	if (err)
		die("writing %s: %s", out, strerror(-err));
}

static void write_truth(const char *out)
{
	FILE *o = fopen(out, "w");
	char line[4096];

	if (!o)
		die("cannot create %s: %s", out, strerror(errno));
	fprintf(o, "# ptsynth truth v2\n# ptfork: %d processes\n", nin);
	for (int k = 0; k < nin; k++) {
		char path[4096];
		size_t n = strlen(in[k].path);
		FILE *f;
		if (n < 5 || strcmp(in[k].path + n - 5, ".data"))
			die("%s: the name does not end in .data", in[k].path);
		snprintf(path, sizeof(path), "%.*s.truth", (int)(n - 5),
			 in[k].path);
		if (!(f = fopen(path, "r")))
			die("cannot read %s: %s", path, strerror(errno));
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "# ptsynth truth", 15))
				fputs(line, o);
		fclose(f);
	}
	if (fclose(o))
		die("writing %s: %s", out, strerror(errno));
}

int main(int argc, char **argv)
{
	const char *out = NULL, *truth = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(a, "-t") && i + 1 < argc) {
			truth = argv[++i];
		} else if (!strcmp(a, "--hostile") && i + 1 < argc) {
			a = argv[++i];
			if (!strcmp(a, "unknown-parent"))
				bad_parent = 1;
			else if (!strcmp(a, "exec-no-maps"))
				bad_exec = 1;
			else if (!strcmp(a, "unknown-tid"))
				bad_tid = 1;
			else
				die("--hostile: unknown-parent, exec-no-maps or "
				    "unknown-tid");
		} else if (nin == 8) {
			die("at most 8 processes");
		} else {
			int role = nin ? ROLE_FORK : ROLE_PARENT;
			if (!strncmp(a, "fork:", 5))
				a += 5;
			else if (!strncmp(a, "exec:", 5)) {
				a += 5;
				role = ROLE_EXEC;
			}
			if (!nin && role != ROLE_PARENT)
				die("the first recording is the parent: no fork: "
				    "or exec: prefix");
			in[nin].path = a;
			in[nin++].role = role;
		}
	}
	if (!out || !nin) {
		fprintf(stderr, "usage: ptfork -o OUT.data [-t OUT.truth] "
				"PARENT.data [fork:A.data] [exec:B.data]...\n");
		return 2;
	}
	for (int k = 0; k < nin; k++)
		read_input(&in[k], k);
	schedule();
	sideband();
	write_out(out);
	if (truth)
		write_truth(truth);
	return 0;
}
