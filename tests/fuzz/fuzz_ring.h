/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_ring.h - the ring a decoding fuzz target writes into
 * (fuzz_perf.c, fuzz_rawpt.c): a flight ring of the least capacity in
 * /dev/shm, its name unlinked at once, since the mapping is all the decode
 * needs and an input that hangs or crashes then leaves no file behind.
 *
 * An input's events wrap round it many times, as in any flight ring; what
 * an input costs besides its decode is mostly the ring's pages made and
 * freed (fallocate, then the last close), so it has as few as it can: the
 * header, the string table's first step (names: 64 KiB, over four times
 * what a whole recording of /usr/bin/true names) and one page of events.
 */
#ifndef TESTS_FUZZ_RING_H
#define TESTS_FUZZ_RING_H

#include <stdio.h>
#include <unistd.h>

#include "strace/ring.h"

/* A fresh ring named after tag and this process. Returns 0 and *ring,
 * or what strace_ring_create() returned. */
static inline int fuzz_ring(const char *tag, struct strace_ring **ring)
{
	struct strace_ring_opts ro = {sizeof(ro), STRACE_RING_MIN_CAPACITY,
				      1 << 16, STRACE_RING_FLIGHT, 1, 0};
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/dev/shm/fuzz_%s_%d.srb", tag,
		 (int)getpid());
	unlink(path);
	rc = strace_ring_create(path, &ro, ring);
	if (rc == 0)
		unlink(path);
	return rc;
}

#endif
