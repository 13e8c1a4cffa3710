/* SPDX-License-Identifier: MIT */
/*
 * cli/read_gc.c - ptrace-read --gc: the stale rings of a
 * directory removed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read.h"

struct gc {
	unsigned removed, failed, live, others, version, damaged, foreign;
	uint64_t freed;
	int in_memory;
};

static void gc_keep(struct gc *g, const struct strace_ring_entry *e)
{
	switch (e->kind) {
	case STRACE_RING_KIND_RING:
		if (e->keep == STRACE_RING_KEEP_OWNER)
			g->others++;
		else
			g->live++;
		break;
	case STRACE_RING_KIND_VERSION:
		g->version++;
		break;
	case STRACE_RING_KIND_DAMAGED:
		g->damaged++;
		break;
	default:
		g->foreign++;
	}
}

static int gc_one(void *arg, const struct strace_ring_entry *scanned)
{
	struct gc *g = arg;
	struct strace_ring_entry e;
	char mem[32];
	int rc;

	if (scanned->keep != STRACE_RING_KEEP_NONE) {
		gc_keep(g, scanned);
		return 0;
	}
	rc = strace_ring_remove_stale(scanned->path, &e);
	if (rc == 1) {
		g->removed++;
		g->freed += e.mem_bytes;
		g->in_memory = e.in_memory;
		printf("removed ");
		put_path(stdout, scanned->path);
		printf(" (%s)\n", human(e.mem_bytes, mem, sizeof(mem)));
		return 0;
	}
	if (rc == 0) {
		gc_keep(g, &e); /* came alive since the scan */
		return 0;
	}
	if (rc == -ENOENT)
		return 0; /* gone meanwhile (another --gc?) */
	g->failed++;
	fflush(stdout);
	fprintf(stderr, PROG ": ");
	put_path(stderr, scanned->path);
	fprintf(stderr, ": cannot remove the stale ring: %s; %s\n",
		strace_strerror(rc),
		rc == -EACCES || rc == -EPERM || rc == -EROFS
			? "the directory does not let you remove it "
			  "(permissions, sticky bit, read-only or immutable "
			  "file system): remove it as a user who may"
		: rc == -STRACE_E_BUSY
			? "a process holds its lock and does not let go "
			  "('" PROG " --stat RING' names it): end that process, "
			  "then run --gc again"
		: rc == -EAGAIN ? "it was replaced while being removed: run "
				  "--gc again"
				: "remove it with rm once you are sure nothing "
				  "uses it");
	return 0;
}

/* One part of "left N: 1 live, 2 not rings": n counts down the parts. */
static void left_part(int *n, unsigned count, const char *one,
		      const char *many)
{
	if (!count)
		return;
	*n -= (int)count;
	printf(" %u %s%s", count, count == 1 ? one : many, *n ? "," : "");
}

int cmd_gc(const char *dir)
{
	struct gc g;
	char mem[32], where[4096];
	int rc, n;

	memset(&g, 0, sizeof(g));
	rc = strace_ring_scan(dir, gc_one, &g);
	if (rc < 0) {
		fflush(stdout);
		scan_error(dir, rc);
		return EXIT_ERR;
	}
	if (g.removed) {
		printf("freed %s %s: %u stale ring%s removed",
		       human(g.freed, mem, sizeof(mem)),
		       g.in_memory ? "of memory" : "on disk", g.removed,
		       g.removed == 1 ? "" : "s");
	} else if (g.failed) {
		printf("no stale ring removed");
	} else {
		printf("no stale rings in ");
		put_path(stdout, scan_where(dir, where, sizeof(where)));
	}
	if (g.failed)
		printf("; %u could not be removed (see above)", g.failed);
	n = (int)(g.live + g.others + g.version + g.damaged + g.foreign);
	if (n) {
		printf("; left %d:", n);
		left_part(&n, g.live, "live", "live");
		left_part(&n, g.others, "another user's", "other users'");
		left_part(&n, g.version, "of another format version",
			  "of other format versions");
		left_part(&n, g.damaged, "damaged", "damaged");
		left_part(&n, g.foreign, "not a ring", "not rings");
		printf(" (");
		command(stdout, "--stat", dir);
		printf(" lists them)");
	}
	putchar('\n');
	if (fflush(stdout) != 0) {
		err("standard output: write failed: %s", strerror(errno));
		return EXIT_ERR;
	}
	return g.failed ? EXIT_ERR : EXIT_OK;
}
