/* SPDX-License-Identifier: MIT */
/*
 * decoder/cpu.c - the processor a trace came from, and its errata.
 *
 * Which models have which erratum is taken from Intel's specification
 * updates as libipt 2.0.5 lists them (pt_cpu_errata()), so that the walker
 * and libipt's decoders work around the same things on the same traces.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/internal.h"

static int num(const char **s, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(*s, &end, 0);
	if (end == *s || errno || *out < 0 || *out > max)
		return -1;
	*s = end;
	return 0;
}

int strace_pt_cpu_parse(const char *s, struct strace_pt_cpu *cpu)
{
	long f, m, st = 0;
	char sep = '/';

	if (!s || !cpu)
		return -STRACE_E_BADARG;
	memset(cpu, 0, sizeof(*cpu));
	if (*s < '0' || *s > '9') {
		/* perf's CPUID header: "Vendor,family,model,stepping" */
		const char *c = strchr(s, ',');

		if (!c || c == s)
			return -STRACE_E_BADARG;
		if ((size_t)(c - s) != strlen("GenuineIntel") ||
		    memcmp(s, "GenuineIntel", 12) != 0)
			return 0; /* another vendor: unknown */
		s = c + 1;
		sep = ',';
	}
	if (num(&s, USHRT_MAX, &f) < 0 || *s != sep)
		return -STRACE_E_BADARG;
	s++;
	if (num(&s, UCHAR_MAX, &m) < 0)
		return -STRACE_E_BADARG;
	if (*s == sep) {
		s++;
		if (num(&s, UCHAR_MAX, &st) < 0)
			return -STRACE_E_BADARG;
	}
	/* perf writes more after the stepping on some kernels; ptxed's form
	 * ends there */
	if (*s && (sep == '/' || *s != ','))
		return -STRACE_E_BADARG;
	cpu->family = (uint16_t)f;
	cpu->model = (uint8_t)m;
	cpu->stepping = (uint8_t)st;
	return 0;
}

void strace_pt_cpu_host(struct strace_pt_cpu *cpu)
{
	memset(cpu, 0, sizeof(*cpu));
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0));
	/* "GenuineIntel" in ebx, edx, ecx */
	if (b != 0x756e6547 || d != 0x49656e69 || c != 0x6c65746e)
		return;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1));
	unsigned fam = (a >> 8) & 0xf, model = (a >> 4) & 0xf;

	if (fam == 0xf)
		fam += (a >> 20) & 0xff;
	if (fam == 0x6 || fam >= 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	cpu->family = (uint16_t)fam;
	cpu->model = (uint8_t)model;
	cpu->stepping = (uint8_t)(a & 0xf);
#endif
}

/* Models, by the set of errata they share: libipt's development tree's
 * table (pt_config.c's pt_cpu_errata(), which added models and families
 * 18 and 19 after 2.0.5), with SKL014 kept where 2.0.5 lists it
 * (Sapphire Rapids, Alder Lake, Raptor Lake), which the development tree
 * takes off them: its workaround only ever turns an error into a decode,
 * and both suites test it there. */
static const struct {
	unsigned errata;
	uint16_t family;
	uint8_t models[16];
} models[] = {
	/* Broadwell */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_BDM64, 6,
	 {0x3d, 0x47, 0x4f, 0x56}},
	/* Skylake, Kaby Lake, Coffee Lake, Comet Lake clients */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKD007 | STRACE_ERRATUM_SKD022 |
		 STRACE_ERRATUM_SKD010 | STRACE_ERRATUM_SKL014 |
		 STRACE_ERRATUM_SKL168,
	 6,
	 {0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6}},
	/* Skylake, Cascade Lake, Ice Lake servers */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKL014 | STRACE_ERRATUM_SKD022 |
		 STRACE_ERRATUM_SKZ84,
	 6,
	 {0x55, 0x6a, 0x6c}},
	/* Sapphire Rapids (SKL014: 2.0.5's) */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKL014 | STRACE_ERRATUM_SKD022 |
		 STRACE_ERRATUM_SKZ84,
	 6,
	 {0x8f}},
	/* Emerald and Granite Rapids servers */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKD022 | STRACE_ERRATUM_SKZ84,
	 6,
	 {0xcf, 0xad, 0xae}},
	/* Cannon Lake, Ice Lake, Tiger Lake, Rocket Lake clients */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKL014 | STRACE_ERRATUM_SKD022,
	 6,
	 {0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8}},
	/* Alder Lake (SKL014: 2.0.5's) */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKL014 | STRACE_ERRATUM_SKD022 |
		 STRACE_ERRATUM_APL11,
	 6,
	 {0x97, 0x9a, 0xbf}},
	/* Raptor Lake, Meteor Lake, Arrow Lake, Lunar Lake, Panther Lake
	 * clients */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKD022 | STRACE_ERRATUM_APL11,
	 6,
	 {0xba, 0xb7, 0xc5, 0xc6, 0xb5, 0xaa, 0xac, 0xbd, 0xcc, 0xd5}},
	/* Goldmont (Apollo Lake, Denverton) */
	{STRACE_ERRATUM_APL12 | STRACE_ERRATUM_APL11, 6, {0x5c, 0x5f}},
	/* Goldmont Plus, Tremont, Gracemont, Crestmont, Sierra Forest */
	{STRACE_ERRATUM_APL11, 6, {0x7a, 0x86, 0x96, 0x9c, 0xb6, 0xaf, 0xdd}},
	/* family 18 */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKD022 | STRACE_ERRATUM_APL11,
	 0x12,
	 {0x01, 0x03}},
	/* family 19 */
	{STRACE_ERRATUM_BDM70 | STRACE_ERRATUM_SKD022 | STRACE_ERRATUM_SKZ84,
	 0x13,
	 {0x01}},
};

/* The errata of cpu, or -1 if the table does not list it. */
static long lookup(const struct strace_pt_cpu *cpu)
{
	if (!cpu)
		return -1;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		for (size_t j = 0; j < sizeof(models[i].models) &&
				   models[i].models[j];
		     j++)
			if (models[i].family == cpu->family &&
			    models[i].models[j] == cpu->model)
				return models[i].errata;
	return -1;
}

unsigned strace_pt_cpu_errata(const struct strace_pt_cpu *cpu)
{
	long e = lookup(cpu);

	return e < 0 ? 0 : (unsigned)e;
}

unsigned strace_dec_cpu_workarounds(const struct strace_pt_cpu *cpu)
{
	long e = lookup(cpu);

	return e < 0 ? STRACE_ERRATA_UNKNOWN_CPU : (unsigned)e;
}
