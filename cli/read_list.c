/* SPDX-License-Identifier: MIT */
/*
 * cli/read_list.c - ptrace-read --stat DIR: the rings of a directory
 * (memory, mode, created, live or stale), and the helpers --gc shares
 * with it (sizes, paths, scan errors).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read.h"

/* --- the rings of a directory: --stat [DIR], --gc [DIR] ------------------ */

/* Bytes in decimal units, as the other figures of the toolkit (MB of PT). */
const char *human(uint64_t b, char *buf, size_t len)
{
	if (b < 1000)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < 1000000)
		snprintf(buf, len, "%.1f kB", (double)b / 1e3);
	else if (b < 1000000000)
		snprintf(buf, len, "%.1f MB", (double)b / 1e6);
	else
		snprintf(buf, len, "%.1f GB", (double)b / 1e9);
	return buf;
}

/* A path as text that cannot forge lines: anybody may name a file in
 * /dev/shm, so control bytes are shown escaped. */
void put_path(FILE *f, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static void user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", uid);
}

/* The STATE column: why a file is kept, or how a ring became stale. */
static void entry_state(const struct strace_ring_entry *e, char *buf,
			size_t len)
{
	const struct strace_ring_stat *st = &e->stat;
	char who[64];
	size_t n;

	switch (e->kind) {
	case STRACE_RING_KIND_VERSION:
		snprintf(buf, len, "ring of format version %u", st->version);
		return;
	case STRACE_RING_KIND_DAMAGED:
		snprintf(buf, len, "damaged ring: %s", strace_strerror(e->err));
		return;
	case STRACE_RING_KIND_FOREIGN:
		snprintf(buf, len, "not a ring");
		return;
	case STRACE_RING_KIND_SPECIAL:
		snprintf(buf, len, "%s",
			 S_ISLNK(e->file_mode)    ? "symlink, not followed"
			 : S_ISFIFO(e->file_mode) ? "FIFO, not opened"
			 : S_ISDIR(e->file_mode)  ? "directory"
						  : "not a regular file");
		return;
	case STRACE_RING_KIND_UNREADABLE:
		snprintf(buf, len, "unreadable: %s", strace_strerror(e->err));
		return;
	}
	switch (e->keep) {
	case STRACE_RING_KEEP_NONE:
		snprintf(buf, len, "stale: %s",
			 st->writers_dead     ? "writer died"
			 : st->writers_closed ? "writers closed"
					      : "never written");
		return;
	case STRACE_RING_KEEP_OWNER:
		user_name(e->uid, who, sizeof(who));
		snprintf(buf, len, "another user's (%s)", who);
		return;
	case STRACE_RING_KEEP_WRITER:
		n = (size_t)snprintf(buf, len, "live: writer%s ",
				     st->writers_live == 1 ? "" : "s");
		for (uint32_t i = 0; i < st->writers_live && n < len; i++)
			n += (size_t)snprintf(
				buf + n, len - n,
				i >= STRACE_RING_ENTRY_PIDS ? ",..." : "%s%u",
				i ? "," : "", e->pids[i]);
		return;
	case STRACE_RING_KEEP_READER:
		snprintf(buf, len, "live: reader %u", e->pids[0]);
		return;
	case STRACE_RING_KEEP_CREATOR:
		snprintf(buf, len, "live: creator %u", e->pids[0]);
		return;
	case STRACE_RING_KEEP_LOCKED:
		snprintf(buf, len, "busy: lock held by %u", e->pids[0]);
		return;
	}
	snprintf(buf, len, "?");
}

struct listing {
	unsigned files, stale;
	uint64_t stale_bytes;
	int in_memory;
};

static int list_one(void *arg, const struct strace_ring_entry *e)
{
	struct listing *l = arg;
	char mem[32], when[32] = "-", state[96];
	const char *mode = "-";

	if (!l->files++)
		printf("%-9s %-8s %-19s %-29s %s\n", "MEMORY", "MODE",
		       "CREATED (UTC)", "STATE", "PATH");
	if (e->kind == STRACE_RING_KIND_RING) {
		time_t t = (time_t)(e->stat.created_ns / 1000000000u);
		struct tm tm;
		mode = mode_name(e->stat.mode);
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	}
	if (e->keep == STRACE_RING_KEEP_NONE) {
		l->stale++;
		l->stale_bytes += e->mem_bytes;
		l->in_memory = e->in_memory;
	}
	entry_state(e, state, sizeof(state));
	printf("%-9s %-8s %-19s %-29s ", human(e->mem_bytes, mem, sizeof(mem)),
	       mode, when, state);
	put_path(stdout, e->path);
	putchar('\n');
	return 0;
}

/* 'ptrace-read OPT' or 'ptrace-read OPT DIR', as the user would type it. */
void command(FILE *f, const char *opt, const char *dir)
{
	fprintf(f, "'" PROG " %s", opt);
	if (dir) {
		fputc(' ', f);
		put_path(f, dir);
	}
	fputc('\'', f);
}

void scan_error(const char *dir, int rc)
{
	char def[4096];

	if (!dir && strace_ring_default_dir(def, sizeof(def)) >= 0)
		dir = def;
	err("%s: cannot list the directory: %s; pass the directory that holds "
	    "the rings (by default the directory of $STRACE_RING, else "
	    "/dev/shm)",
	    dir ? dir : "the default directory", strace_strerror(rc));
}

/* Where the listing looks, for its messages. */
const char *scan_where(const char *dir, char *buf, size_t len)
{
	if (dir)
		return dir;
	if (strace_ring_default_dir(buf, len) < 0)
		snprintf(buf, len, "the default directory");
	return buf;
}

int cmd_list(const char *dir)
{
	struct listing l;
	char mem[32], where[4096];
	int rc;

	memset(&l, 0, sizeof(l));
	rc = strace_ring_scan(dir, list_one, &l);
	if (rc < 0) {
		fflush(stdout);
		scan_error(dir, rc);
		return EXIT_ERR;
	}
	if (!l.files) {
		printf("no %s in ", dir ? "files" : "rings");
		put_path(stdout, scan_where(dir, where, sizeof(where)));
		printf("%s\n", dir ? "" : " (named strace_<pid>_<id>.srb)");
	} else if (!l.stale) {
		printf("no stale rings (%u file%s listed)\n", l.files,
		       l.files == 1 ? "" : "s");
	} else {
		printf("%u stale ring%s hold%s %s %s: ", l.stale,
		       l.stale == 1 ? "" : "s", l.stale == 1 ? "s" : "",
		       human(l.stale_bytes, mem, sizeof(mem)),
		       l.in_memory ? "in memory" : "on disk");
		command(stdout, "--gc", dir);
		printf(" removes %s\n", l.stale == 1 ? "it" : "them");
	}
	if (fflush(stdout) != 0) {
		err("standard output: write failed: %s", strerror(errno));
		return EXIT_ERR;
	}
	return EXIT_OK;
}
