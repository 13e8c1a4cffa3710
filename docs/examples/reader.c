/* SPDX-License-Identifier: MIT */
/*
 * reader.c - the libstrace API in one small program: open a ring, read
 * its events in batches (zero-copy), and name their addresses and
 * threads. It prints every call as "TIME TID THREAD CALLER -> CALLEE"
 * and a count of events per type at the end.
 *
 *   cc -o reader reader.c $(pkg-config --cflags --libs libstrace)
 *   ./reader /dev/shm/strace_1234_ab12.srb
 *
 * With --follow it waits for more events until every writer has closed
 * the ring (a decode or capture still running); without, it reads what
 * is there and stops.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <strace/names.h>
#include <strace/ring.h>
#include <strace/version.h>

/*
 * The name of addr into buf, as ptrace-read shows it: "symbol+0xoff",
 * else "[libfoo.so]+0xoff" (the mapping's file), else "0x...".
 */
static const char *addr_name(struct strace_names *names, uint64_t addr,
			     char *buf, size_t len)
{
	const struct strace_name *sym = strace_names_symbol(names, addr);
	const struct strace_name *dso = sym ? NULL : strace_names_dso(names, addr);

	if (sym)
		snprintf(buf, len, "%s+0x%" PRIx64, sym->str, addr - sym->key);
	else if (dso)
		snprintf(buf, len, "[%s]+0x%" PRIx64,
			 strrchr(dso->str, '/') ? strrchr(dso->str, '/') + 1
						: dso->str,
			 addr - dso->key);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

int main(int argc, char **argv)
{
	int follow = argc == 3 && !strcmp(argv[1], "--follow");
	const char *path = argv[argc - 1];
	struct strace_ring *ring;
	struct strace_reader *reader;
	struct strace_names *names;
	struct strace_batch b;
	uint64_t counts[STRACE_EV_MAX] = {0}, lost = 0;
	char from[256], to[256];
	long n;
	int rc;

	if (argc != 2 && !follow) {
		fprintf(stderr, "usage: %s [--follow] RING\n", argv[0]);
		return 2;
	}
	rc = strace_ring_open(path, &ring);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, strace_strerror(rc));
		return 1;
	}
	rc = strace_reader_open(ring, 0, &reader);
	if (rc == 0)
		rc = strace_names_new(ring, &names);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, strace_strerror(rc));
		strace_ring_close(ring);
		return 1;
	}
	/* up to 4096 events at a time; with --follow, wait for more */
	while ((n = strace_reader_next(reader, &b, 4096, follow ? 100 : 0)) >=
	       0) {
		lost += b.lost;
		if (n == 0) {
			if (!follow ||
			    strace_reader_status(reader) != STRACE_READER_LIVE)
				break;
			continue;
		}
		/* names are defined before the events that use them */
		strace_names_update(names);
		for (long i = 0; i < n; i++) {
			const struct strace_event *e = &b.ev[i];
			const struct strace_name *thread;

			if (e->type < STRACE_EV_MAX)
				counts[e->type]++;
			if (e->type != STRACE_EV_CALL)
				continue;
			thread = strace_names_thread(names, e->tid);
			printf("%" PRIu64 ".%09" PRIu64 " %" PRIu32 " %s %s -> %s\n",
			       e->time / 1000000000, e->time % 1000000000,
			       e->tid, thread ? thread->str : "?",
			       addr_name(names, e->a, from, sizeof(from)),
			       addr_name(names, e->b, to, sizeof(to)));
		}
		/* release says how many events at the front of the batch a
		 * writer may have overwritten while they were read (only in a
		 * flight-recorder ring, whose reader copies the batch first
		 * with strace_batch_copy(): see strace/ring.h) */
		lost += strace_reader_release(reader, &b);
	}
	if (n < 0)
		fprintf(stderr, "%s: %s\n", path, strace_strerror((int)n));
	for (unsigned t = 0; t < STRACE_EV_MAX; t++)
		if (counts[t])
			fprintf(stderr, "%-12s %" PRIu64 "\n",
				strace_event_info(t) ? strace_event_info(t)->name
						     : "unknown",
				counts[t]);
	fprintf(stderr, "lost         %" PRIu64 "\nlibstrace    %s\n", lost,
		strace_version());
	strace_names_free(names);
	strace_reader_close(reader);
	strace_ring_close(ring);
	return n < 0 ? 1 : 0;
}
