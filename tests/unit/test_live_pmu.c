/* SPDX-License-Identifier: MIT */
/*
 * test_live_pmu - the intel_pt PMU reader and attr builder against a fake
 * sysfs tree (tests/live/sysfs) and against what the real perf 6.1 built
 * for the same tree (tests/live/perf61-attrs.txt, made by
 * tests/live/gen-perf61-attrs.sh): attrs printed field by field in perf's
 * -vv format must be identical, and so must filter strings and sizes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/utsname.h>
#include <stddef.h>
#include "strace/error.h"
#include "pt_backend/capture/capture.h"
#include "pt_backend/capture/pmu.h"
#include "pt_backend/capture/probe.h"
#include "../harness.h"

#define SYSFS "tests/live/sysfs"
#define FIXTURE "tests/live/perf61-attrs.txt"

TEST(load_fake_sysfs)
{
	struct strace_pmu pmu;

	REQUIRE(strace_pmu_load(SYSFS, &pmu) == 0);
	CHECK_INT(pmu.type, ==, 42);
	CHECK_INT(pmu.nr_addr_filters, ==, 2);
	CHECK_U64(strace_pmu_format_bits(&pmu, "pt"), ==, 1);
	CHECK_U64(strace_pmu_format_bits(&pmu, "mtc_period"), ==, 0xfULL << 14);
	CHECK_U64(strace_pmu_format_bits(&pmu, "cyc_thresh"), ==, 0xfULL << 19);
	CHECK_U64(strace_pmu_format_bits(&pmu, "psb_period"), ==, 0xfULL << 24);
	CHECK_U64(strace_pmu_format_bits(&pmu, "notnt"), ==, 1ULL << 55);
	CHECK_U64(strace_pmu_format_bits(&pmu, "nosuch"), ==, 0);
	CHECK_INT(pmu.caps.mtc_periods, ==, 0x249);
	CHECK_INT(pmu.caps.cycle_thresholds, ==, 0x3fff);
	CHECK_INT(pmu.caps.psb_cyc, ==, 1);
	CHECK_INT(pmu.max_nonturbo_ratio, ==, 33);
}

TEST(no_intel_pt)
{
	struct strace_pmu pmu;

	/* The real sysfs of this VM has no intel_pt PMU. */
	struct stat st;
	if (stat("/sys/bus/event_source/devices/intel_pt", &st) == 0)
		SKIP("this machine has an intel_pt PMU");
	CHECK_INT(strace_pmu_load(NULL, &pmu), ==, -STRACE_E_NOPT);
	CHECK_INT(strace_pmu_load("/nonexistent", &pmu), ==, -STRACE_E_NOPT);
	CHECK(strstr(strace_strerror(-STRACE_E_NOPT),
		     "no intel_pt PMU under /sys/bus/event_source/devices"));
}

TEST(format_ranges)
{
	/* A tree with unusual formats: comma lists, a bad one. */
	char dir[] = "/tmp/test_live_pmu.XXXXXX";
	char path[256];
	struct strace_pmu pmu;
	FILE *f;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path),
		 "mkdir -p %s/bus/event_source/devices/intel_pt/format", dir);
	REQUIRE(system(path) == 0);
#define PUT(name, text)                                                        \
	do {                                                                   \
		snprintf(path, sizeof(path),                                   \
			 "%s/bus/event_source/devices/intel_pt/%s", dir,       \
			 name);                                                \
		f = fopen(path, "w");                                          \
		REQUIRE(f);                                                    \
		fputs(text, f);                                                \
		fclose(f);                                                     \
	} while (0)
	PUT("type", "8\n");
	PUT("format/pt", "config:0\n");
	PUT("format/mtc_period", "config:3-4,8,60-63\n");
	REQUIRE(strace_pmu_load(dir, &pmu) == 0);
	CHECK_U64(strace_pmu_format_bits(&pmu, "mtc_period"), ==,
		  0x18ULL | 0x100 | (0xfULL << 60));
	/* Without caps/ and branch format, the default is just tsc (absent) */
	CHECK_U64(strace_pmu_default_config(&pmu), ==, 0);
	PUT("format/cyc", "config1:3\n");
	CHECK_INT(strace_pmu_load(dir, &pmu), ==, -STRACE_E_BADARG);
	PUT("format/cyc", "config:9-2\n");
	CHECK_INT(strace_pmu_load(dir, &pmu), ==, -STRACE_E_BADARG);
	PUT("format/cyc", "config:64\n");
	CHECK_INT(strace_pmu_load(dir, &pmu), ==, -STRACE_E_BADARG);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK_INT(system(path), ==, 0);
#undef PUT
}

TEST(config_terms)
{
	struct strace_pmu pmu;
	struct strace_pmu_mods m;
	uint64_t c;
	char err[256];

	REQUIRE(strace_pmu_load(SYSFS, &pmu) == 0);
	/* perf -vv printed: "intel_pt default config: tsc,mtc,mtc_period=3,psb_period=3,pt,branch" */
	CHECK_U64(strace_pmu_default_config(&pmu), ==,
		  (1 << 10) | (1 << 9) | (3 << 14) | (3ULL << 24) | 1 | (1 << 13));
	CHECK_INT(strace_pmu_config(&pmu, "cyc_thresh=4", &c, &m, err,
				    sizeof(err)), ==, 0);
	CHECK_INT(strace_pmu_config(&pmu, "cyc_thresh=14", &c, &m, err,
				    sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK(strstr(err, "valid values are: 0,1,2,3,4,5,6,7,8,9,10,11,12,13"));
	CHECK_INT(strace_pmu_config(&pmu, "mtc_period=2", &c, &m, err,
				    sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK(strstr(err, "valid values are: 0,3,6,9"));
	CHECK_INT(strace_pmu_config(&pmu, "cyc_thresh=16", &c, &m, err,
				    sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK(strstr(err, "does not fit"));
	CHECK_INT(strace_pmu_config(&pmu, "bogus", &c, &m, err, sizeof(err)),
		  ==, -STRACE_E_BADARG);
	CHECK(strstr(err, "unknown intel_pt term 'bogus'"));
	CHECK_INT(strace_pmu_config(&pmu, "intel_pt/cyc/x", &c, &m, err,
				    sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_pmu_config(&pmu, "intel_pt/cyc/uk", &c, &m, err,
				    sizeof(err)), ==, 0);
	CHECK_INT(m.exclude_kernel, ==, 0);
	CHECK_INT(m.exclude_user, ==, 0);
	CHECK_INT(strace_pmu_config(&pmu, "cyc", &c, &m, err, sizeof(err)), ==,
		  0);
	CHECK_INT(m.exclude_kernel, ==, 1);
	CHECK_INT(m.exclude_user, ==, 0);
}

/* ---- comparison with perf 6.1's own output ---- */

struct pcase {
	char line[512];
	char block[2][2048]; /* attr blocks: pt, tracking */
	char filter[512];
	long aux_len, mmap_len;
};

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Split the fixture into cases; returns how many. */
static int parse_fixture(char *text, struct pcase *cases, int max)
{
	int n = -1, blk = -1;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "== case ", 8)) {
			if (++n >= max)
				return n;
			memset(&cases[n], 0, sizeof(cases[n]));
			snprintf(cases[n].line, sizeof(cases[n].line), "%s",
				 line + 8);
			blk = -1;
		} else if (n < 0) {
			continue;
		} else if (!strcmp(line, "perf_event_attr:")) {
			blk++;
			if (blk < 2)
				snprintf(cases[n].block[blk],
					 sizeof(cases[n].block[blk]), "%s\n",
					 line);
		} else if (!strncmp(line, "  ", 2) && blk >= 0 && blk < 2) {
			size_t l = strlen(cases[n].block[blk]);

			snprintf(cases[n].block[blk] + l,
				 sizeof(cases[n].block[blk]) - l, "%s\n", line);
		} else if (!strncmp(line, "SHIM_SET_FILTER", 15)) {
			const char *c = strstr(line, ": ");

			snprintf(cases[n].filter, sizeof(cases[n].filter), "%s",
				 c ? c + 2 : "");
		} else if (!strncmp(line, "AUX area mmap length ", 21)) {
			cases[n].aux_len = atol(line + 21);
		} else if (!strncmp(line, "mmap size ", 10)) {
			cases[n].mmap_len = atol(line + 10);
		}
	}
	return n + 1;
}

TEST(attrs_equal_perf61)
{
	struct strace_pmu pmu;
	static struct pcase cases[32];
	char *text = read_file(FIXTURE);
	int n, checked = 0;

	REQUIRE(text);
	REQUIRE(strace_pmu_load(SYSFS, &pmu) == 0);
	n = parse_fixture(text, cases, 32);
	CHECK_INT(n, >=, 10);
	for (int i = 0; i < n; i++) {
		struct pcase *pc = &cases[i];
		char mode[16], ev[128], err[256], got[2048];
		const char *rest;
		struct strace_pmu_attr_opts o = {0};
		struct perf_event_attr pt, track;
		size_t aux, data;
		int off = 0;

		REQUIRE(sscanf(pc->line, "%15s %127s %n", mode, ev, &off) >= 2);
		CHECK(strstr(pc->block[0], "type                             42"));
		CHECK(strstr(pc->block[1], "config                           0x9"));
		rest = pc->line + off;
		strace_pmu_default_sizes(1, &aux, &data);
		CHECK_INT(strace_pmu_config(&pmu, ev, &o.config, &o.mods, err,
					    sizeof(err)), ==, 0);
		o.snapshot = strstr(rest, "-S") != NULL;
		o.enable_on_exec = !strcmp(mode, "cmd");
		o.aux_bytes = aux;
		strace_pmu_attrs(&pmu, &o, &pt, &track);
		strace_pmu_attr_fprint(got, sizeof(got), &pt);
		if (strcmp(got, pc->block[0])) {
			fprintf(stderr, "case %s: PT attr differs\nperf:\n%sours:\n%s",
				pc->line, pc->block[0], got);
			th_failed_checks++;
		}
		strace_pmu_attr_fprint(got, sizeof(got), &track);
		if (strcmp(got, pc->block[1])) {
			fprintf(stderr, "case %s: tracking attr differs\nperf:\n%sours:\n%s",
				pc->line, pc->block[1], got);
			th_failed_checks++;
		}
		CHECK_INT(pc->aux_len, ==, (long)aux);
		CHECK_INT(pc->mmap_len, ==, (long)(data + 4096));
		if (strstr(rest, "--filter ")) {
			char kf[512];

			CHECK_INT(strace_pmu_filter(strstr(rest, "--filter ") + 9,
						    pmu.nr_addr_filters, kf,
						    sizeof(kf), err, sizeof(err)),
				  >, 0);
			CHECK_STR(kf, pc->filter);
		}
		checked++;
	}
	CHECK_INT(checked, ==, n);
	free(text);
}

TEST(filters)
{
	char out[256], err[256];

	/* perf 6.1: "Address filter: ..." for the same inputs (fixture cases
	 * cover two; these are the error paths perf also rejects). */
	CHECK_INT(strace_pmu_filter("filter 0x10/0x20 , start 0x30 , stop 0x40",
				    2, out, sizeof(out), err, sizeof(err)),
		  ==, -STRACE_E_BADARG);
	CHECK(strstr(err, "exceeds the maximum (2)"));
	CHECK_INT(strace_pmu_filter("filter main @/bin/x", 2, out, sizeof(out),
				    err, sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_pmu_filter("bogus 0x10", 2, out, sizeof(out), err,
				    sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_pmu_filter("  ", 2, out, sizeof(out), err,
				    sizeof(err)), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_pmu_filter("tracestop 4096/16@/a/b", 2, out,
				    sizeof(out), err, sizeof(err)), ==, 1);
	CHECK_STR(out, "stop 0x1000/0x10@/a/b");
	CHECK_INT(strace_pmu_filter("filter 0x1000/0x10@/a/b", 2, out, 10, err,
				    sizeof(err)), ==, -ENOSPC);
}

/*
 * aux_action as Linux 6.13 declares it (include/uapi/linux/perf_event.h:
 * after aux_sample_size, a union of the u32 aux_action and the bit-fields
 * aux_start_paused, aux_pause, aux_resume, then 29 reserved bits): our
 * bytes must be the ones the bit-fields give.
 */
struct attr613_tail {
	uint32_t aux_sample_size;
	union {
		uint32_t aux_action;
		struct {
			uint32_t aux_start_paused : 1, aux_pause : 1,
				aux_resume : 1, reserved_3 : 29;
		};
	};
	uint64_t sig_data;
};

TEST(aux_action_bytes)
{
	struct perf_event_attr a;
	struct attr613_tail k;
	const size_t at = offsetof(struct perf_event_attr, aux_sample_size);
	char out[4096];

	for (unsigned bit = 0; bit < 3; bit++) {
		memset(&a, 0, sizeof(a));
		memset(&k, 0, sizeof(k));
		k.aux_start_paused = bit == 0;
		k.aux_pause = bit == 1;
		k.aux_resume = bit == 2;
		strace_pmu_set_aux_action(&a, 1u << bit);
		CHECK(!memcmp((char *)&a + at, &k, sizeof(k)));
		CHECK_INT(strace_pmu_aux_action(&a), ==, 1u << bit);
	}
	CHECK_INT(at + 4, ==, 116);
	/* nothing else moves */
	memset(&a, 0, sizeof(a));
	a.aux_sample_size = 0x1234;
	a.sig_data = 7;
	strace_pmu_set_aux_action(&a, STRACE_AUX_RESUME);
	CHECK_INT(a.aux_sample_size, ==, 0x1234);
	CHECK_U64(a.sig_data, ==, 7);
	/* perf 6.13 -vv prints the bits by name */
	strace_pmu_set_aux_action(&a, STRACE_AUX_START_PAUSED);
	strace_pmu_attr_fprint(out, sizeof(out), &a);
	CHECK(strstr(out, "aux_start_paused") != NULL);
	CHECK(strstr(out, "aux_resume") == NULL);
}

/*
 * The running kernel on aux_action: Linux 6.13 and later know the bits
 * (aux_start_paused on a software event: EOPNOTSUPP, it has no AUX area;
 * aux_resume with no AUX event to lead it: EINVAL); older kernels refuse
 * any of them as reserved (EINVAL).
 */
TEST(aux_action_kernel)
{
	struct utsname u;
	int maj = 0, min = 0, known = strace_live_aux_action(NULL);

	uname(&u);
	sscanf(u.release, "%d.%d", &maj, &min);
	if (maj == 0)
		SKIP("uname gives no kernel version");
	printf("# kernel %s: aux_action %s\n", u.release,
	       known ? "known" : "unknown");
	CHECK_INT(known, ==, maj > 6 || (maj == 6 && min >= 13));
}

TEST(probe_attrs)
{
	struct strace_uprobe_pmu up = {8, 1};
	struct strace_probe p;
	struct perf_event_attr a;

	memset(&p, 0, sizeof(p));
	strcpy(p.path, "/bin/true");
	p.off = 0x1179;
	p.ret = 1;
	strace_probe_uprobe_attr(&up, &p, &a);
	CHECK_INT(a.type, ==, 8);
	CHECK_U64(a.config, ==, 1); /* retprobe */
	CHECK_U64(a.config1, ==, (uint64_t)(uintptr_t)p.path);
	CHECK_U64(a.config2, ==, 0x1179);
	CHECK_U64(a.sample_period, ==, 1);
	CHECK_INT(a.wakeup_events, ==, 1);
	CHECK_INT(a.disabled, ==, 1);
	CHECK_INT(a.exclude_kernel, ==, 1);
	strace_probe_bp_attr(0x401000, &a);
	CHECK_INT(a.type, ==, PERF_TYPE_BREAKPOINT);
	CHECK_INT(a.bp_type, ==, 4); /* HW_BREAKPOINT_X */
	CHECK_U64(a.bp_addr, ==, 0x401000);
	CHECK_U64(a.bp_len, ==, 8);
	CHECK_INT(strace_uprobe_pmu_load("/nonexistent", &up), ==, -ENOENT);
}

RUN_TESTS("test_live_pmu")
