/* SPDX-License-Identifier: MIT */
/*
 * tests/decoder/damage_diff.c - differential error detection: damage a
 * recording's PT at many packets, decode each damaged copy with the fast
 * walker and with libipt's block decoder, and fail where one reports the
 * damage before the next PSB+ and the other does not, unless the
 * difference is one of libipt's own (damage.h, enum dmg_class). Where
 * the fast walker reports what libipt lets pass, perf (a third decoder)
 * must report an error in that copy too, when perf is there; where
 * libipt reports a deferred TIP the fast walker takes, perf must report
 * none.
 *
 *   damage_diff [-n PER_KIND] [-v] [--no-perf] NAME=FILE.data...
 *   damage_diff -w OUT.data [-t] KIND PACKET ARG FILE.data
 *
 * For each recording and each kind of damage (drop, corrupt, tnt, trunc),
 * PER_KIND packets (default 60) spread evenly over the stream, each the
 * first packet at or after its place that the kind applies to. One
 * PASS/FAIL line per recording and kind, with its figures; -v prints
 * every damage and both verdicts. -w writes one damaged copy (KIND as
 * dmg_kind_name() names it), to look at with ptrace-capture and perf; -t
 * trims it as the fuzz target does (dmg_trim()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt_backend/pipeline/pipeline.h"
#include "tests/decoder/damage.h"

struct tally {
	size_t tried, both, neither, fast_errs, ref_errs;
	size_t cls[DMG_CLASSES];
	size_t perf_agrees, perf_not; /* of the libipt's own that perf saw */
};

static int verbose;
static int use_perf = 1;

static void report(const char *name, const struct dmg_trace *t,
		   const struct dmg *d, const struct dmg_verdict *v,
		   const char *what)
{
	const struct dmg_pkt *p = &t->pkt[d->pkt];

	printf("  %s %s %s: packet %zu (type %u, %u bytes) at %zu, arg %u; "
	       "PSB at %zu, window to %zu; fast %zu (first at %llu, code %u), "
	       "libipt %zu (first at %llu, code %u); after it fast %zu, "
	       "libipt %zu\n",
	       what, name, dmg_kind_name(d->kind), d->pkt, p->type, p->size,
	       v->at, d->arg, v->psb, v->end, v->fast,
	       (unsigned long long)v->fast_off, v->fast_code, v->ref,
	       (unsigned long long)v->ref_off, v->ref_code, v->fast_late,
	       v->ref_late);
}

/* How many errors perf's own decoder reports in the recording of len
 * bytes at data (perf script --itrace=e); -1 when perf cannot be run. */
static long perf_errors(const uint8_t *data, size_t len)
{
	char path[] = "/tmp/damage_diff_XXXXXX", cmd[128], line[512];
	long n = 0;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "perf script -i %s --itrace=e 2>/dev/null; echo rc=$?", path);
	f = popen(cmd, "r");
	if (!f) {
		unlink(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "instruction trace error"))
			n++;
		else if (!strncmp(line, "rc=", 3) && strcmp(line, "rc=0\n"))
			n = -1;
	}
	pclose(f);
	unlink(path);
	return n;
}

/* The clean recording: neither decoder may find an error in it, or the
 * damage could not be told from what was there; perf neither (else it
 * cannot judge this recording: *perf_ok 0). */
static int clean(struct strace_objcache *objs, const char *name,
		 struct dmg_trace *t, int *perf_ok)
{
	struct dmg_errs ef, er;
	long pe = use_perf ? perf_errors(t->data, t->len) : -1;
	int err = dmg_trace_decoders(objs, t);

	if (err) {
		printf("FAIL: damage-diff/%s/clean (no decoders: %s)\n", name,
		       strace_strerror(err));
		return 0;
	}
	dmg_decode(t, 0, t->data, NULL, &ef);
	dmg_decode(t, 1, t->data, NULL, &er);
	if (ef.n || er.n) {
		printf("FAIL: damage-diff/%s/clean (errors without damage: "
		       "fast %zu, libipt %zu)\n",
		       name, ef.n, er.n);
		return 0;
	}
	*perf_ok = pe == 0;
	printf("PASS: damage-diff/%s/clean (thread %u, %zu bytes of PT, %zu "
	       "packets, no error in either decoder; perf: %s)\n",
	       name, t->tid, t->aux_len, t->npkt,
	       pe == 0  ? "none either"
	       : pe < 0 ? "cannot run, not asked"
			: "reports errors, not asked");
	return 1;
}

static int run_kind(const char *name, struct dmg_trace *t,
		    enum dmg_kind kind,
		    unsigned per_kind, int perf_ok, uint8_t *buf,
		    struct tally *all)
{
	struct tally n = {0};
	size_t last = (size_t)-1;
	int ok;

	for (unsigned i = 0; i < per_kind; i++) {
		struct dmg d = {kind, (size_t)i * t->npkt / per_kind,
				1 + (i * 7u) % 37};
		struct dmg_verdict v;
		enum dmg_class c;
		size_t at;

		while (d.pkt < t->npkt && !dmg_applies(t, &d))
			d.pkt++;
		if (d.pkt >= t->npkt || d.pkt == last)
			continue;
		last = d.pkt;
		if (dmg_apply(t, &d, buf, &at) < 0)
			continue;
		dmg_judge(t, buf, at, NULL, &v);
		c = dmg_classify(t, &d, &v);
		n.tried++;
		n.fast_errs += v.fast > 0;
		n.ref_errs += v.ref > 0;
		if (v.fast && v.ref)
			n.both++;
		else if (!v.fast && !v.ref)
			n.neither++;
		n.cls[c]++;
		if (perf_ok && (c == DMG_PSB_FUP || c == DMG_RETCOMP ||
				c == DMG_WRONG_PATH || c == DMG_EXEC_TIP)) {
			/* the fast walker against libipt: perf decides */
			if (perf_errors(buf, t->len) > 0) {
				n.perf_agrees++;
			} else {
				n.perf_not++;
				report(name, t, &d, &v, "PERF-SEES-NOTHING");
			}
		}
		if (!perf_ok && c == DMG_WRONG_PATH) {
			/* only perf explains it */
			n.perf_not++;
			report(name, t, &d, &v, "wrong-path, perf not asked");
		}
		if (c == DMG_DEFERRED_TIP || c == DMG_NEWER ||
		    c == DMG_EXEC_FUP) {
			/* libipt against the fast walker: perf decides, and
			 * must find the trace consistent; without perf the
			 * difference stays unexplained */
			if (perf_ok && perf_errors(buf, t->len) == 0) {
				n.perf_agrees++;
			} else {
				n.perf_not++;
				report(name, t, &d, &v,
				       perf_ok ? "PERF-SEES-AN-ERROR"
					       : "libipt's, perf not asked");
			}
		}
		if (c == DMG_UNEXPLAINED || verbose)
			report(name, t, &d, &v, dmg_class_name(c));
	}
	ok = !n.cls[DMG_UNEXPLAINED] && !n.perf_not;
	printf("%s: damage-diff/%s/%s (%zu positions: the fast walker reports "
	       "%zu, libipt %zu; both %zu, neither %zu; libipt's own: "
	       "psb-fup %zu, retcomp %zu, bad-code %zu, lost-fup %zu, "
	       "deferred-tip %zu, newer %zu, exec-fup %zu, wrong-path %zu, "
	       "psb-run %zu, exec-tip %zu (perf sides with the "
	       "fast walker: %zu of "
	       "%zu asked); "
	       "unexplained %zu)\n",
	       ok ? "PASS" : "FAIL", name, dmg_kind_name(kind), n.tried,
	       n.fast_errs, n.ref_errs, n.both, n.neither,
	       n.cls[DMG_PSB_FUP], n.cls[DMG_RETCOMP], n.cls[DMG_BAD_CODE],
	       n.cls[DMG_LOST_FUP], n.cls[DMG_DEFERRED_TIP], n.cls[DMG_NEWER],
	       n.cls[DMG_EXEC_FUP], n.cls[DMG_WRONG_PATH],
	       n.cls[DMG_PSB_RUN], n.cls[DMG_EXEC_TIP], n.perf_agrees,
	       n.perf_agrees + n.perf_not,
	       n.cls[DMG_UNEXPLAINED]);
	all->tried += n.tried;
	all->fast_errs += n.fast_errs;
	all->ref_errs += n.ref_errs;
	all->both += n.both;
	all->neither += n.neither;
	for (int k = 0; k < DMG_CLASSES; k++)
		all->cls[k] += n.cls[k];
	all->perf_agrees += n.perf_agrees;
	all->perf_not += n.perf_not;
	return ok;
}

/* -w: one damaged copy of in to out; trim: as the fuzz target judges
 * it (dmg_trim()). */
static int write_one(const char *out, int trim, const char *kind,
		     const char *pkt, const char *arg, const char *in)
{
	struct dmg d = {DMG_KINDS, strtoul(pkt, NULL, 0),
			(unsigned)strtoul(arg, NULL, 0)};
	struct dmg_trace t;
	uint8_t *buf;
	size_t at;
	FILE *f;
	int err;

	for (int k = 0; k < DMG_KINDS; k++)
		if (!strcmp(kind, dmg_kind_name((enum dmg_kind)k)))
			d.kind = (enum dmg_kind)k;
	err = dmg_trace_load(in, &t);
	if (err) {
		fprintf(stderr, "damage_diff: %s: %s\n", in, strerror(-err));
		return 1;
	}
	buf = malloc(t.len);
	if (!buf || dmg_apply(&t, &d, buf, &at) < 0) {
		fprintf(stderr, "damage_diff: %s %s %s does not apply to %s\n",
			kind, pkt, arg, in);
		return 1;
	}
	if (trim) {
		struct dmg_span kept;

		dmg_trim(&t, &d, buf, &kept);
	}
	f = fopen(out, "wb");
	if (!f || fwrite(buf, 1, t.len, f) != t.len || fclose(f)) {
		fprintf(stderr, "damage_diff: cannot write %s\n", out);
		return 1;
	}
	printf("%s: thread %u, packet %zu at stream offset %zu (file offset "
	       "%zu)\n",
	       out, t.tid, d.pkt, at, t.aux_off + at);
	free(buf);
	dmg_trace_free(&t);
	return 0;
}

int main(int argc, char **argv)
{
	struct strace_objcache *objs;
	struct tally all = {0};
	unsigned per_kind = 60;
	int i = 1, ok = 1;

	if (argc == 7 && !strcmp(argv[1], "-w"))
		return write_one(argv[2], 0, argv[3], argv[4], argv[5], argv[6]);
	if (argc == 8 && !strcmp(argv[1], "-w") && !strcmp(argv[3], "-t"))
		return write_one(argv[2], 1, argv[4], argv[5], argv[6], argv[7]);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--no-perf"))
			use_perf = 0;
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			per_kind = (unsigned)atoi(argv[++i]);
		else
			break;
	}
	if (i >= argc || !per_kind) {
		fprintf(stderr, "usage: damage_diff [-n PER_KIND] [-v] "
				"[--no-perf] NAME=FILE.data...\n"
				"       damage_diff -w OUT.data [-t] KIND "
				"PACKET ARG FILE.data\n");
		return 2;
	}
	if (strace_objcache_new(&objs) < 0)
		return 1;
	for (; i < argc; i++) {
		char *name = argv[i], *path = strchr(name, '=');
		struct dmg_trace t;
		uint8_t *buf;
		int err, perf_ok = 0;

		if (!path) {
			fprintf(stderr, "damage_diff: %s: not NAME=FILE\n",
				name);
			return 2;
		}
		*path++ = 0;
		err = dmg_trace_load(path, &t);
		if (err) {
			printf("FAIL: damage-diff/%s/load (%s: %s)\n", name,
			       path, strerror(-err));
			ok = 0;
			continue;
		}
		if (!clean(objs, name, &t, &perf_ok)) {
			dmg_trace_free(&t);
			ok = 0;
			continue;
		}
		buf = malloc(t.len);
		if (!buf)
			return 1;
		for (int k = 0; k < DMG_KINDS; k++)
			ok &= run_kind(name, &t, (enum dmg_kind)k,
				       per_kind, perf_ok, buf, &all);
		free(buf);
		dmg_trace_free(&t);
	}
	printf("damage-diff: %zu positions: the fast walker reports %zu, "
	       "libipt %zu; both %zu, neither %zu; libipt's own: psb-fup "
	       "%zu, retcomp %zu, bad-code %zu, lost-fup %zu, deferred-tip "
	       "%zu, newer %zu, exec-fup %zu, wrong-path %zu, psb-run %zu, "
	       "exec-tip %zu (perf "
	       "sides with the fast walker: %zu of %zu asked); unexplained "
	       "%zu\n",
	       all.tried, all.fast_errs, all.ref_errs, all.both, all.neither,
	       all.cls[DMG_PSB_FUP], all.cls[DMG_RETCOMP],
	       all.cls[DMG_BAD_CODE], all.cls[DMG_LOST_FUP],
	       all.cls[DMG_DEFERRED_TIP],
	       all.cls[DMG_NEWER], all.cls[DMG_EXEC_FUP],
	       all.cls[DMG_WRONG_PATH], all.cls[DMG_PSB_RUN],
	       all.cls[DMG_EXEC_TIP], all.perf_agrees,
	       all.perf_agrees + all.perf_not, all.cls[DMG_UNEXPLAINED]);
	strace_objcache_free(objs);
	return ok ? 0 : 1;
}
