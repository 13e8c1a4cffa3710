/* SPDX-License-Identifier: MIT */
/*
 * cli/read_stat.c - ptrace-read --stat RING: one ring's
 * header, counts, readers and writers (read_list.c: a directory's).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <pwd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read.h"

const char *mode_name(int mode)
{
	switch (mode) {
	case STRACE_RING_LOSSLESS:
		return "lossless";
	case STRACE_RING_FLIGHT:
		return "flight";
	case STRACE_RING_ARCHIVE:
		return "archive";
	}
	return "unknown";
}

int cmd_stat(const struct read_opts *o, const char *path)
{
	struct strace_ring *ring;
	struct strace_ring_stat st;
	struct strace_reader_info ri[STRACE_RING_MAX_READERS];
	struct strace_string s;
	uint64_t off = 0, kinds[6] = {0}, nstr = 0, lost = 0;
	char when[64];
	time_t t;
	struct tm tm;
	int rc, nr, timed_out;

	catch_sigbus(path);
	rc = open_ring(o, path, &ring, &timed_out);
	if (rc < 0) {
		ring_error(path, rc, "open the ring");
		return EXIT_ERR;
	}
	rc = strace_ring_stat(ring, &st);
	if (rc < 0) {
		ring_error(path, rc, "read the header");
		strace_ring_close(ring);
		return EXIT_ERR;
	}
	while ((rc = strace_ring_string_next(ring, &off, &s)) > 0) {
		nstr++;
		switch (s.kind) {
		case STRACE_EV_SYMBOL:
			kinds[0]++;
			break;
		case STRACE_EV_DSO:
			kinds[1]++;
			break;
		case STRACE_EV_THREAD:
			kinds[2]++;
			break;
		case STRACE_EV_PROCESS:
			kinds[3]++;
			break;
		case STRACE_EV_SYSCALL:
			kinds[5]++;
			break;
		default:
			kinds[4]++;
		}
	}
	t = (time_t)(st.created_ns / 1000000000u);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);

	printf("ring:       %s\n", path);
	printf("version:    %u\n", st.version);
	printf("mode:       %s\n", mode_name(st.mode));
	printf("capacity:   %" PRIu64 " events (%" PRIu64 " bytes)\n",
	       st.capacity, st.capacity * STRACE_EVENT_SIZE);
	printf("file-size:  %" PRIu64 " bytes\n", st.file_size);
	printf("created:    %s by pid %" PRIu64 "%s\n", when, st.creator_pid,
	       st.creator_pid && kill((pid_t)st.creator_pid, 0) < 0 &&
			       errno == ESRCH
		       ? " (exited)"
		       : "");
	printf("committed:  %" PRIu64 "\n", st.committed);
	printf("reserved:   %" PRIu64 "\n", st.reserved);
	printf("oldest:     %" PRIu64 "\n", st.tail);
	printf("strings:    %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64
	       " entries (%" PRIu64 " symbols, %" PRIu64 " dsos, %" PRIu64
	       " threads, %" PRIu64 " processes, %" PRIu64 " syscall sites, %" PRIu64
	       " other)%s\n",
	       st.strings_used, st.strings_size, nstr, kinds[0], kinds[1],
	       kinds[2], kinds[3], kinds[5], kinds[4],
	       rc < 0 ? " - table corrupt after the last entry" : "");
	printf("writers:    %u live, %u dead, %u closed\n", st.writers_live,
	       st.writers_dead, st.writers_closed);
	printf("closed:     %s\n", st.closed ? "yes" : "no");
	if (st.lock_pid)
		printf("lock:       held by pid %u\n", st.lock_pid);
	else
		printf("lock:       free\n");
	printf("readers:    %u live, %u dead\n", st.readers_live,
	       st.readers_dead);
	nr = strace_ring_reader_info(ring, ri, STRACE_RING_MAX_READERS);
	for (int i = 0; i < nr; i++) {
		printf("reader:     pid %u %s cursor %" PRIu64 " lost %" PRIu64
		       "\n",
		       ri[i].pid, ri[i].live ? "live" : "dead", ri[i].cursor,
		       ri[i].lost);
		lost += ri[i].lost;
	}
	printf("lost:       %" PRIu64 "\n", lost);
	strace_ring_close(ring);
	if (fflush(stdout) != 0) {
		err("standard output: write failed: %s", strerror(errno));
		return EXIT_ERR;
	}
	return EXIT_OK;
}
