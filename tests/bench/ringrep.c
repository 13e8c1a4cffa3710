/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/ringrep.c - a big saved ring from a real one, for the
 * benchmarks of the views (tests/bench/stacks.sh).
 *
 *   ringrep IN OUT COPIES
 *
 * OUT (an archive ring, created) holds IN's events COPIES times over, one
 * copy after the other: each copy's times shifted past the end of the one
 * before (times 0 stay 0), the names (string table) IN's. The benchmark
 * trace's ring (1.4M events) becomes the 10M events (and 1 GB) that the
 * views' targets are measured on, as one long run of the same program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/error.h"
#include "strace/ring.h"

static int fail(const char *what, const char *path, int rc)
{
	fprintf(stderr, "ringrep: %s %s: %s\n", what, path, strace_strerror(rc));
	return 1;
}

int main(int argc, char **argv)
{
	struct strace_ring *in, *out;
	struct strace_reader *r;
	struct strace_writer *w;
	struct strace_ring_opts ro;
	struct strace_ring_stat st;
	struct strace_batch b;
	struct strace_event *ev = NULL;
	size_t n = 0, cap = 0;
	uint64_t first = UINT64_MAX, last = 0, span;
	long copies, k;
	int rc;

	if (argc != 4 || (copies = strtol(argv[3], NULL, 10)) < 1) {
		fprintf(stderr, "usage: ringrep IN OUT COPIES\n");
		return 2;
	}
	if ((rc = strace_ring_open(argv[1], &in)) < 0 ||
	    (rc = strace_ring_stat(in, &st)) < 0 ||
	    (rc = strace_reader_open(in, 0, &r)) < 0)
		return fail("cannot read", argv[1], rc);
	while ((k = strace_reader_next(r, &b, 4096, 0)) > 0) {
		if (n + (size_t)k > cap) {
			cap = (n + (size_t)k) * 2;
			ev = realloc(ev, cap * sizeof(*ev));
			if (!ev)
				return fail("no memory for", argv[1], -12);
		}
		memcpy(ev + n, b.ev, (size_t)k * sizeof(*ev));
		for (long i = 0; i < k; i++) {
			uint64_t t = b.ev[i].time;
			if (t && t < first)
				first = t;
			if (t > last)
				last = t;
		}
		n += (size_t)k;
		strace_reader_release(r, &b);
	}
	strace_reader_close(r);
	span = first <= last ? last - first + 1000 : 0;

	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.mode = STRACE_RING_ARCHIVE;
	ro.capacity = 1u << 20;
	ro.strings_size = (st.strings_used + 4095) & ~4095ull;
	ro.no_populate = 1;
	if ((rc = strace_ring_create(argv[2], &ro, &out)) < 0 ||
	    (rc = strace_ring_sync_strings(out, in)) < 0 ||
	    (rc = strace_writer_open(out, &w)) < 0)
		return fail("cannot write", argv[2], rc);
	for (k = 0; k < copies; k++) {
		for (size_t i = 0; i < n; i++) {
			const struct strace_event *e = &ev[i];
			uint64_t t = e->time ? e->time + (uint64_t)k * span : 0;

			rc = strace_writer_emit(w, e->type, e->flags, e->tid, t,
						e->a, e->b);
			if (rc < 0)
				return fail("cannot write", argv[2], rc);
		}
	}
	if ((rc = strace_writer_close(w)) < 0)
		return fail("cannot close", argv[2], rc);
	strace_ring_close(out);
	strace_ring_close(in);
	free(ev);
	printf("%s: %zu events x %ld = %llu events\n", argv[2], n, copies,
	       (unsigned long long)n * (unsigned long long)copies);
	return 0;
}
