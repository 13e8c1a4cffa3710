/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_cpu.c - the processor a trace came from and
 * its errata (decoder/cpu.c) alone.
 *
 * The oracles: libipt's own pt_cpu_errata() (the library linked, 2.0.5)
 * for every family and model it knows: the same errata bits; the models
 * it does not know and the table has (its development tree's) named
 * below. The host's processor against /proc/cpuinfo. The parser on
 * ptxed's and perf's forms, and what it refuses. (test_decoder_errata
 * tests what the walker does with each erratum.)
 */
#include <intel-pt.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "decoder/internal.h"

/* libipt's errata as STRACE_ERRATUM_* bits (2.0.5 has no SKZ84); 0 for
 * what it does not know */
static unsigned libipt_errata(unsigned family, unsigned model)
{
	struct pt_cpu c;
	struct pt_errata e;

	memset(&c, 0, sizeof(c));
	memset(&e, 0, sizeof(e));
	c.vendor = pcv_intel;
	c.family = (uint16_t)family;
	c.model = (uint8_t)model;
	if (pt_cpu_errata(&e, &c) < 0)
		return 0; /* (a family it does not know) */
	return (e.bdm70 ? STRACE_ERRATUM_BDM70 : 0) |
	       (e.bdm64 ? STRACE_ERRATUM_BDM64 : 0) |
	       (e.skd007 ? STRACE_ERRATUM_SKD007 : 0) |
	       (e.skd022 ? STRACE_ERRATUM_SKD022 : 0) |
	       (e.skd010 ? STRACE_ERRATUM_SKD010 : 0) |
	       (e.skl014 ? STRACE_ERRATUM_SKL014 : 0) |
	       (e.apl12 ? STRACE_ERRATUM_APL12 : 0) |
	       (e.apl11 ? STRACE_ERRATUM_APL11 : 0) |
	       (e.skl168 ? STRACE_ERRATUM_SKL168 : 0);
}

/* Models libipt 2.0.5 does not list and its development tree does:
 * Raptor, Meteor, Arrow, Lunar, Panther Lake; Emerald and Granite
 * Rapids; Gracemont, Crestmont, Sierra Forest; families 18 and 19. */
static const struct {
	unsigned family, model;
} newer[] = {
	{6, 0xaa}, {6, 0xac}, {6, 0xad}, {6, 0xae}, {6, 0xaf}, {6, 0xb5},
	{6, 0xb6}, {6, 0xb7}, {6, 0xba}, {6, 0xbd}, {6, 0xc5}, {6, 0xc6},
	{6, 0xcc}, {6, 0xcf}, {6, 0xd5}, {6, 0xdd}, {18, 0x01}, {18, 0x03},
	{19, 0x01},
};

static int is_newer(unsigned family, unsigned model)
{
	for (size_t k = 0; k < sizeof(newer) / sizeof(newer[0]); k++)
		if (newer[k].family == family && newer[k].model == model)
			return 1;
	return 0;
}

TEST(errata_against_libipt)
{
	unsigned known = 0, more = 0;

	for (unsigned f = 1; f <= 0x20; f++)
		for (unsigned m = 0; m < 256; m++) {
			struct strace_pt_cpu c = {(uint16_t)f, (uint8_t)m, 0};
			unsigned ours = strace_pt_cpu_errata(&c);
			unsigned theirs = libipt_errata(f, m);

			if (theirs) {
				known++;
				/* SKZ84: not in 2.0.5 */
				CHECK_U64(ours & ~STRACE_ERRATUM_SKZ84, ==,
					  theirs);
			} else if (is_newer(f, m)) {
				more++;
				CHECK(ours != 0);
			} else {
				CHECK_U64(ours, ==, 0);
			}
			/* the walker's: an unknown processor gets the
			 * workarounds that only turn errors into decodes */
			CHECK_U64(strace_dec_cpu_workarounds(&c), ==,
				  ours || theirs || is_newer(f, m)
					  ? ours
					  : STRACE_ERRATA_UNKNOWN_CPU);
		}
	printf("  %u models with errata in libipt 2.0.5, %u newer\n", known,
	       more);
	CHECK_INT(known, >=, 30);
	CHECK_INT(more, ==, sizeof(newer) / sizeof(newer[0]));
	/* a few by hand: Skylake client, Broadwell, Goldmont */
	{
		struct strace_pt_cpu skl = {6, 0x4e, 3}, bdw = {6, 0x3d, 0},
				     glm = {6, 0x5c, 0};
		CHECK(strace_pt_cpu_errata(&skl) & STRACE_ERRATUM_SKL014);
		CHECK(strace_pt_cpu_errata(&bdw) & STRACE_ERRATUM_BDM64);
		CHECK_U64(strace_pt_cpu_errata(&glm), ==,
			  STRACE_ERRATUM_APL12 | STRACE_ERRATUM_APL11);
	}
	CHECK_U64(strace_pt_cpu_errata(NULL), ==, 0);
	CHECK_U64(strace_dec_cpu_workarounds(NULL), ==,
		  STRACE_ERRATA_UNKNOWN_CPU);
}

TEST(parse)
{
	struct strace_pt_cpu c;

	CHECK_INT(strace_pt_cpu_parse("6/142/10", &c), ==, 0);
	CHECK_INT(c.family, ==, 6);
	CHECK_INT(c.model, ==, 142);
	CHECK_INT(c.stepping, ==, 10);
	CHECK_INT(strace_pt_cpu_parse("0x6/0x8e", &c), ==, 0);
	CHECK_INT(c.model, ==, 0x8e);
	CHECK_INT(c.stepping, ==, 0);
	/* perf's CPUID header, with what some kernels write after it */
	CHECK_INT(strace_pt_cpu_parse("GenuineIntel,6,85,4", &c), ==, 0);
	CHECK_INT(c.model, ==, 85);
	CHECK_INT(c.stepping, ==, 4);
	CHECK_INT(strace_pt_cpu_parse("GenuineIntel,6,143,8,0x2b000590", &c),
		  ==, 0);
	CHECK_INT(c.model, ==, 143);
	/* another vendor: unknown */
	CHECK_INT(strace_pt_cpu_parse("AuthenticAMD,25,33,0", &c), ==, 0);
	CHECK_INT(c.family, ==, 0);
	CHECK_INT(strace_pt_cpu_parse("GenuineIntelX,6,85", &c), ==, 0);
	CHECK_INT(c.family, ==, 0);
	/* refused */
	static const char *const bad[] = {
		"", "6", "6/", "/85", "6/256", "6/85/256", "70000/1", "-6/85",
		"6/85/4/1", "6,85", "6/85,4", ",6,85", "GenuineIntel,6",
		"GenuineIntel,6/85", "x/1", "6/85 ",
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int rc = strace_pt_cpu_parse(bad[k], &c);
		if (rc != -STRACE_E_BADARG)
			fprintf(stderr, "  \"%s\": %d\n", bad[k], rc);
		CHECK_INT(rc, ==, -STRACE_E_BADARG);
	}
	CHECK_INT(strace_pt_cpu_parse(NULL, &c), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_pt_cpu_parse("6/85", NULL), ==, -STRACE_E_BADARG);
}

/* The host's processor, as /proc/cpuinfo says it: family 0 on another
 * vendor. */
TEST(host_against_proc_cpuinfo)
{
	struct strace_pt_cpu c;
	char line[256], vendor[64] = "";
	long fam = -1, model = -1, step = -1;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		SKIP("no /proc/cpuinfo");
	while (fgets(line, sizeof(line), f) && step < 0) {
		sscanf(line, "vendor_id : %63s", vendor);
		sscanf(line, "cpu family : %ld", &fam);
		sscanf(line, "model : %ld", &model);
		sscanf(line, "stepping : %ld", &step);
	}
	fclose(f);
	strace_pt_cpu_host(&c);
	if (strcmp(vendor, "GenuineIntel")) {
		CHECK_INT(c.family, ==, 0);
		return;
	}
	CHECK_INT(c.family, ==, fam);
	CHECK_INT(c.model, ==, model);
	CHECK_INT(c.stepping, ==, step);
}

RUN_TESTS("test_decoder_cpu")
