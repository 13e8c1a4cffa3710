/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/ring_seeds.c - makes the seed corpus of the ring fuzz target
 * (tests/fuzz/corpus/ring/): small rings, each a few KiB of events and
 * names behind the 16 KiB header, in every mode and state a reader meets.
 *
 *   ring_seeds DIR [CAPTURED.srb]
 *
 * writes DIR/lossless.srb, flight.srb (wrapped), archive.srb (grown),
 * dead-peers.srb (a writer that died holding a reserved range, a reader
 * that died) and, given a ring that ptrace-capture made, capture.srb: its
 * names and first events. Every pid in them is one no process can have
 * (above the kernel's largest pid_max), so that whether a peer is alive
 * does not depend on the machine the fuzzer runs on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/sample.h"
#include "events/ring_layout.h"
#include "strace/ring.h"

#define NO_PID 0x7fffff00u /* above PID_MAX_LIMIT (4194304) */

static int fail(const char *what, const char *path, int rc)
{
	fprintf(stderr, "ring_seeds: %s: %s: %s\n", path, what,
		strace_strerror(rc));
	return 1;
}

static int put32(int fd, size_t off, uint32_t v)
{
	return pwrite(fd, &v, sizeof(v), (off_t)off) == sizeof(v) ? 0 : -1;
}

static int put64(int fd, size_t off, uint64_t v)
{
	return pwrite(fd, &v, sizeof(v), (off_t)off) == sizeof(v) ? 0 : -1;
}

/* Give every pid of the header the impossible one (and no start time). */
static int clear_pids(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -1;
	rc |= put64(fd, offsetof(struct ring_hdr, creator_pid), NO_PID);
	rc |= put64(fd, offsetof(struct ring_hdr, creator_starttime), 0);
	rc |= put64(fd, offsetof(struct ring_hdr, created_ns),
		    1700000000ull * 1000000000ull);
	for (int i = 0; i < STRACE_RING_MAX_WRITERS; i++) {
		size_t w = offsetof(struct ring_hdr, writers) +
			   (size_t)i * sizeof(struct ring_wslot);
		uint32_t pid;
		if (pread(fd, &pid, sizeof(pid),
			  (off_t)(w + offsetof(struct ring_wslot, pid))) ==
			    sizeof(pid) &&
		    pid) {
			rc |= put32(fd, w + offsetof(struct ring_wslot, pid),
				    NO_PID);
			rc |= put32(fd, w + offsetof(struct ring_wslot, tid),
				    NO_PID);
			rc |= put64(fd,
				    w + offsetof(struct ring_wslot, starttime),
				    0);
		}
	}
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++) {
		size_t r = offsetof(struct ring_hdr, readers) +
			   (size_t)i * sizeof(struct ring_rslot);
		uint32_t pid;
		if (pread(fd, &pid, sizeof(pid),
			  (off_t)(r + offsetof(struct ring_rslot, pid))) ==
			    sizeof(pid) &&
		    pid) {
			rc |= put32(fd, r + offsetof(struct ring_rslot, pid),
				    NO_PID);
			rc |= put64(fd,
				    r + offsetof(struct ring_rslot, starttime),
				    0);
		}
	}
	close(fd);
	return rc;
}

/* A ring of mode and capacity with the sample names and n sample events.
 * With w_out, the ring and its writer stay open. */
static int sample_ring(const char *path, int mode, uint64_t cap, uint64_t n,
		       struct strace_ring **ring_out,
		       struct strace_writer **w_out)
{
	struct strace_ring_opts ro = {sizeof(ro), cap, 4096, mode, 0, 0};
	struct strace_ring *ring;
	struct strace_writer *w;
	static struct sample s;
	int rc;

	unlink(path);
	rc = strace_ring_create(path, &ro, &ring);
	if (rc < 0)
		return fail("create", path, rc);
	if ((rc = strace_writer_open(ring, &w)) < 0 ||
	    (rc = sample_init(&s, ring)) < 0 ||
	    (rc = sample_emit(&s, w, n)) < 0) {
		strace_ring_close(ring);
		return fail("write", path, rc);
	}
	if (w_out) {
		*w_out = w;
		*ring_out = ring;
		return 0;
	}
	/* flushed first: a close that grows an archive writes to the header
	 * where it was before (tests/fuzz/repro/README.md) */
	strace_writer_flush(w);
	strace_writer_close(w);
	strace_ring_close(ring);
	return clear_pids(path) ? fail("patch", path, -errno) : 0;
}

/*
 * A lossless ring whose reader died after reading some events and whose
 * second writer died between reserving a range and committing it: what a
 * reader finds after a crash (the range is repaired into a lost event).
 */
static int dead_peers(const char *path)
{
	struct strace_ring *ring;
	struct strace_writer *w;
	struct strace_reader *r;
	struct strace_batch b;
	int fd, rc = sample_ring(path, STRACE_RING_LOSSLESS, 64, 40, &ring, &w);

	if (rc)
		return rc;
	strace_writer_flush(w);
	if ((rc = strace_reader_open(ring, 0, &r)) < 0) {
		strace_ring_close(ring);
		return fail("reader", path, rc);
	}
	if (strace_reader_next(r, &b, 10, 0) > 0)
		strace_reader_release(r, &b);
	/* r and w stay attached: their process "dies" below (the handles
	 * are plain heap blocks, freed without detaching) */
	strace_ring_close(ring);
	free(r);
	free(w);
	if (clear_pids(path))
		return fail("patch", path, -errno);

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail("open", path, -errno);
	{
		uint64_t c = 0;
		size_t s1 = offsetof(struct ring_hdr, writers) +
			    sizeof(struct ring_wslot);
		rc = pread(fd, &c, sizeof(c),
			   offsetof(struct ring_hdr, committed)) != sizeof(c);
		rc |= put64(fd, offsetof(struct ring_hdr, reserved), c + 5);
		rc |= put32(fd, s1 + offsetof(struct ring_wslot, state),
			    SLOT_LIVE);
		rc |= put32(fd, s1 + offsetof(struct ring_wslot, pid), NO_PID);
		rc |= put32(fd, s1 + offsetof(struct ring_wslot, flight),
			    FLIGHT_RESERVED);
		rc |= put64(fd, s1 + offsetof(struct ring_wslot, flight_start),
			    c);
		rc |= put64(fd, s1 + offsetof(struct ring_wslot, flight_end),
			    c + 5);
		rc |= put32(fd, offsetof(struct ring_hdr, writers_opened), 2);
	}
	close(fd);
	return rc ? fail("patch", path, -EIO) : 0;
}

/* The names and first events of a captured ring, in a small archive. */
static int from_capture(const char *path, const char *captured)
{
	struct strace_ring_opts ro = {sizeof(ro), 64, 0, STRACE_RING_ARCHIVE,
				      1, 0};
	struct strace_ring *src, *dst;
	struct strace_ring_stat st;
	struct strace_reader *r;
	struct strace_writer *w;
	struct strace_batch b;
	uint64_t left = 192;
	int rc;

	rc = strace_ring_open(captured, &src);
	if (rc < 0)
		return fail("open", captured, rc);
	if ((rc = strace_ring_stat(src, &st)) < 0)
		return fail("stat", captured, rc);
	ro.strings_size = (st.strings_used + 4095) & ~4095ull;
	if (!ro.strings_size)
		ro.strings_size = 4096;
	unlink(path);
	if ((rc = strace_ring_create(path, &ro, &dst)) < 0)
		return fail("create", path, rc);
	if ((rc = strace_ring_sync_strings(dst, src)) < 0 ||
	    (rc = strace_writer_open(dst, &w)) < 0 ||
	    (rc = strace_reader_open(src, 0, &r)) < 0)
		return fail("copy", path, rc);
	while (left && strace_reader_next(r, &b, left, 0) > 0) {
		for (size_t i = 0; i < b.n; i++)
			*strace_writer_slot(w) = b.ev[i];
		left -= b.n;
		strace_reader_release(r, &b);
	}
	strace_reader_close(r);
	strace_writer_flush(w); /* as in sample_ring() */
	strace_writer_close(w);
	strace_ring_close(dst);
	strace_ring_close(src);
	return clear_pids(path) ? fail("patch", path, -errno) : 0;
}

int main(int argc, char **argv)
{
	char p[4096];
	int rc = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: ring_seeds DIR [CAPTURED.srb]\n");
		return 2;
	}
	snprintf(p, sizeof(p), "%s/lossless.srb", argv[1]);
	rc |= sample_ring(p, STRACE_RING_LOSSLESS, 64, 40, NULL, NULL);
	/* a writer's batch (256 events) must fit in the ring: a flight
	 * ring of 64 that wraps is written past its end (see
	 * tests/fuzz/repro/README.md) */
	snprintf(p, sizeof(p), "%s/flight.srb", argv[1]);
	rc |= sample_ring(p, STRACE_RING_FLIGHT, 256, 600, NULL, NULL);
	snprintf(p, sizeof(p), "%s/archive.srb", argv[1]);
	rc |= sample_ring(p, STRACE_RING_ARCHIVE, 64, 100, NULL, NULL);
	snprintf(p, sizeof(p), "%s/dead-peers.srb", argv[1]);
	rc |= dead_peers(p);
	if (argc == 3) {
		snprintf(p, sizeof(p), "%s/capture.srb", argv[1]);
		rc |= from_capture(p, argv[2]);
	}
	return rc;
}
