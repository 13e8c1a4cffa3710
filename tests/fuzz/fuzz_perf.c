/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_perf.c - fuzz target over the perf.data reader and the PT
 * decoders: the input is a perf.data file; whatever it holds, decoding it
 * into a ring must end with a result or an error, never a crash, a hang or
 * a read out of bounds.
 *
 * Two targets: perf decodes with the fast walker, as ptrace-capture -i
 * does by default; perf_ref (-DFUZZ_PERF_REFERENCE) with libipt's block
 * decoder (--decoder reference), which is slower and would hold the fast
 * walker's fuzzing back to its pace. Both read the corpus
 * tests/fuzz/corpus/perf.
 *
 * Built two ways: with clang -fsanitize=fuzzer (make fuzz) for libFuzzer,
 * and with fuzz_main.c as a replay driver that make check runs over the
 * seed corpus and deterministic mutations of it.
 *
 * Speed: the files the inputs map (/usr/bin/true, libc, ld.so) and their
 * symbols do not depend on the input: one struct strace_objcache, made
 * once, keeps them for every input, as it would for a caller decoding
 * recordings of one program one after another.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_ring.h"

#include "pt_backend/pipeline/pipeline.h"
#include "pt_backend/perf/perf.h"

#ifdef FUZZ_PERF_REFERENCE
#define WALK_FLAGS STRACE_WALK_REFERENCE
#else
#define WALK_FLAGS 0u
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct strace_objcache *objects;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (strace_objcache_new(&objects) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = memfd_create("fuzz_perf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct strace_ring *ring;
	if (fuzz_ring("perf", &ring) == 0) {
		struct strace_offline_opts oo = {
			.perf_path = path,
			.ring = ring,
			.walk_flags = WALK_FLAGS,
			.jobs = 1,
			.objects = objects,
		};
		struct strace_offline_stats st;
		uint64_t off;
		(void)strace_offline_decode(&oo, &st, &off);
		strace_ring_close(ring);
	}
	close(fd);
	return 0;
}
