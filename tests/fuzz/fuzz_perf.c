/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_perf.c - fuzz target over the perf.data reader and the PT
 * decoders (fast and reference): the input is a perf.data file; whatever
 * it holds, decoding must end with a result or an error, never a crash,
 * a hang or a read out of bounds.
 *
 * Built two ways: with clang -fsanitize=fuzzer (make fuzz) for libFuzzer,
 * and with fuzz_main.c as a replay driver that make check runs over the
 * seed corpus and deterministic mutations of it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pt_backend/offline.h"
#include "pt_backend/perf_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], ring_path[64];
	static unsigned n;
	int fd = memfd_create("fuzz_perf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	snprintf(ring_path, sizeof(ring_path), "/dev/shm/fuzz_perf_%d_%u.srb",
		 (int)getpid(), n++);
	unlink(ring_path);

	struct strace_ring_opts ro = {sizeof(ro), 1024, 1 << 16,
				      STRACE_RING_FLIGHT, 1};
	struct strace_ring *ring;
	if (strace_ring_create(ring_path, &ro, &ring) == 0) {
		for (int ref = 0; ref < 2; ref++) {
			struct strace_offline_opts oo = {
				.perf_path = path,
				.ring = ring,
				.walk_flags = ref ? STRACE_WALK_REFERENCE : 0,
				.jobs = 1,
			};
			struct strace_offline_stats st;
			uint64_t off;
			(void)strace_offline_decode(&oo, &st, &off);
		}
		strace_ring_close(ring);
	}
	unlink(ring_path);
	close(fd);
	return 0;
}
