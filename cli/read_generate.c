/* SPDX-License-Identifier: MIT */
/*
 * cli/read_generate.c - ptrace-read --generate N: sample events
 * of every type written into a new ring (sample.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

#include "read.h"
#include "ringmsg.h"
#include "sample.h"

/* A lossless writer that waits says so, once (strace_ring_set_wait_notice). */
static void gen_wait_notice(void *arg, const struct strace_ring_wait *w)
{
	static atomic_int said;
	static const struct strace_ring_wait_words words = {
		.waits = "waiting",
		.no_reader = "generate with --mode flight or a bigger "
			     "--capacity, or start the readers first and pass "
			     "--readers K",
		.slowest = "end that reader, or use --mode flight",
		.every = "writer",
	};
	char msg[PATH_MAX * 2 + 512];

	if (atomic_exchange(&said, 1))
		return;
	strace_ring_wait_message(msg, sizeof(msg), strace_ring_path(arg), w,
				 &words);
	err("%s", msg);
}

int cmd_generate(const struct read_opts *o)
{
	const char *path;
	struct strace_ring_opts ro;
	struct strace_ring *ring;
	struct strace_writer *w;
	struct sample s;
	uint64_t n = (uint64_t)o->generate;
	int rc, ret = EXIT_OK;

	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.mode = o->mode;
	ro.capacity = o->capacity;
	if (!o->capacity && o->mode == STRACE_RING_LOSSLESS && !o->readers) {
		/* nobody reads while we write: make everything fit (a
		 * lossless writer would wait for a reader otherwise) */
		uint64_t need = pow2_ceil(n + SAMPLE_MAX_PROLOGUE);
		if (need > STRACE_RING_DEFAULT_CAPACITY)
			ro.capacity = need > (1ull << 26) ? (1ull << 26) : need;
	}
	rc = ringmsg_create(PROG, o->output, "-o", &ro, &ring);
	if (rc < 0)
		return EXIT_ERR;
	path = strace_ring_path(ring);
	catch_sigbus(path);
	rc = strace_writer_open(ring, &w);
	if (rc < 0) {
		ring_error(path, rc, "open a writer on the ring");
		strace_ring_close(ring);
		return EXIT_ERR;
	}
	catch_signals();
	strace_writer_set_stop(w, stop_cb, NULL);
	strace_ring_set_wait_notice(ring, gen_wait_notice, ring);
	rc = sample_init(&s, ring);
	if (rc < 0) {
		ring_error(path, rc, "add the sample names to the ring");
		ret = EXIT_ERR;
		goto out;
	}
	if (o->readers > 0) {
		rc = strace_ring_wait_readers(ring, o->readers,
					      o->timeout_set ? (int)o->timeout_ms
							     : -1);
		if (rc < 0) {
			err("%s: %d reader(s) did not attach in time (%s); "
			    "start them, or raise --timeout",
			    path, o->readers, strace_strerror(rc));
			ret = EXIT_ERR;
			goto out;
		}
	}
	rc = sample_emit(&s, w, n);
	if (rc < 0) {
		if (rc == -STRACE_E_STOPPED)
			err("%s: interrupted while waiting for a reader; the "
			    "ring holds what was written so far",
			    path);
		else
			ring_error(path, rc, "write events");
		ret = EXIT_ERR;
	}
out:
	rc = strace_writer_close(w);
	if (rc < 0 && ret == EXIT_OK && rc != -STRACE_E_STOPPED) {
		ring_error(path, rc, "finish writing");
		ret = EXIT_ERR;
	}
	strace_ring_close(ring);
	if (ret == EXIT_OK && !o->output)
		printf("%s\n", path);
	return ret;
}
