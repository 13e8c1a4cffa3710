/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_damage.c - fuzz target of the differential error
 * detection (tests/decoder/damage.h): the input chooses a damage to one
 * of the corpus recordings; the fast walker and libipt's block decoder
 * decode the damaged copy's PT around the damage (dmg_trim()), and a
 * difference that is none of libipt's own (enum dmg_class) aborts,
 * printing the damage that shows it. Each recording's two decoders are
 * made once, at the start (dmg_trace_decoders()), and kept: the damage is
 * in the PT only, and a kept decoder answers as a fresh one does.
 *
 * Input: 8 bytes (more are ignored; fewer do nothing): the recording
 * (byte 0, modulo their count), the kind (byte 1, modulo DMG_KINDS), the
 * packet (bytes 2-5, little-endian, modulo the packet count; the first at
 * or after it that the kind applies to) and the kind's argument (bytes
 * 6-7).
 *
 * The recordings: the files FUZZ_DAMAGE_DATA names (separated by ':'),
 * else $O/corpus/{static,signals,plt,recurse,threads,exceptions}-psb256
 * .data (O from the environment, default build), a PSB every 256 bytes,
 * so that a trimmed copy is small: make tests makes them. Without
 * any, every input does nothing (tests/decoder/e2e-damage-diff.sh, which
 * replays this target's corpus, checks that they are there first).
 *
 *   make fuzz-run FUZZ_TARGET=damage       libFuzzer (tests/fuzz/fuzz.mk)
 *   build/tests/fuzz_damage tests/fuzz/corpus/damage   the replay
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_backend/pipeline/pipeline.h"
#include "tests/decoder/damage.h"

#define MAX_TRACES 16

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct strace_objcache *objects;
static struct dmg_trace traces[MAX_TRACES];
static char *paths[MAX_TRACES];
static unsigned ntraces;
static uint8_t *buf;
static size_t buf_len;

static void load(const char *path)
{
	struct dmg_trace *t = &traces[ntraces];

	if (ntraces < MAX_TRACES && dmg_trace_load(path, t) == 0) {
		if (dmg_trace_decoders(objects, t) < 0) {
			fprintf(stderr, "fuzz_damage: %s: cannot decode it\n",
				path);
			abort();
		}
		paths[ntraces++] = strdup(path);
		if (t->len > buf_len)
			buf_len = t->len;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[] = {
		"static-psb256",  "signals-psb256", "plt-psb256",
		"recurse-psb256", "threads-psb256", "exceptions-psb256"};
	const char *list = getenv("FUZZ_DAMAGE_DATA");
	const char *o = getenv("O");
	char path[4096];

	(void)argc;
	(void)argv;
	if (strace_objcache_new(&objects) < 0)
		abort();
	if (list && *list) {
		char *copy = strdup(list), *save = NULL;
		for (char *p = strtok_r(copy, ":", &save); p;
		     p = strtok_r(NULL, ":", &save))
			load(p);
		free(copy);
	} else {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/corpus/%s.data",
				 o && *o ? o : "build", names[i]);
			load(path);
		}
	}
	if (ntraces && !(buf = malloc(buf_len)))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dmg_trace *t;
	struct dmg_verdict v;
	struct dmg_span kept;
	struct dmg d;
	uint32_t pos;
	uint16_t arg;
	size_t at;

	if (size < 8 || !ntraces)
		return 0;
	t = &traces[data[0] % ntraces];
	memcpy(&pos, data + 2, 4);
	memcpy(&arg, data + 6, 2);
	d.kind = (enum dmg_kind)(data[1] % DMG_KINDS);
	d.pkt = pos % t->npkt;
	d.arg = arg;
	while (d.pkt < t->npkt && !dmg_applies(t, &d))
		d.pkt++;
	if (dmg_apply(t, &d, buf, &at) < 0)
		return 0;
	dmg_trim(t, &d, buf, &kept);
	dmg_judge(t, buf, at, &kept, &v);
	if (dmg_classify(t, &d, &v) != DMG_UNEXPLAINED)
		return 0;
	fprintf(stderr,
		"fuzz_damage: %s of packet %zu (at %zu, arg %u) of recording "
		"%u: the fast walker reports %zu errors (the first at %llu, "
		"code %u), libipt %zu (the first at %llu, code %u) before the "
		"end of the next PSB+ at %zu; after it %zu and %zu. Write the "
		"copy with build/tests/damage_diff -w OUT.data -t %s %zu %u "
		"%s\n",
		dmg_kind_name(d.kind), d.pkt, at, d.arg, data[0] % ntraces,
		v.fast, (unsigned long long)v.fast_off, v.fast_code, v.ref,
		(unsigned long long)v.ref_off, v.ref_code, v.end, v.fast_late,
		v.ref_late, dmg_kind_name(d.kind), d.pkt, d.arg,
		paths[data[0] % ntraces] ? paths[data[0] % ntraces] : "FILE");
	abort();
}
