/* SPDX-License-Identifier: MIT */
/*
 * cli/read_open.c - setting up a read of ptrace-read: the
 * ring opened (waited for with --follow), the saved ring of -f ring, a
 * pass over the ring before the read, the read-side filters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read.h"
#include "ringmsg.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An inotify watch on the directory of path for files created or moved
 * there: a descriptor, or -1 (none can be made: the caller sleeps); *wd
 * the watch. */
static int watch_dir(const char *path, int *wd)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -1;
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd >= 0 &&
	    (*wd = inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Done with the watch: removed at once, its descriptor closed later. The
 * kernel frees a removed watch after a grace period, and closing the
 * descriptor waits for that (13 ms measured here, while a capture with
 * --wait-readers waited for this reader to attach); by the time the next
 * watch is done with, or the process exits, it has passed.
 */
static void unwatch(int fd, int wd)
{
	static int spent = -1;

	(void)inotify_rm_watch(fd, wd);
	if (spent >= 0)
		close(spent);
	spent = fd;
}

/* Until something is created in the watched directory (at most 100 ms:
 * the caller's deadlines and Ctrl-C are looked at in between), or 5 ms
 * without a watch. */
static void wait_created(int wfd)
{
	struct pollfd pf = {wfd, POLLIN, 0};
	char ev[4096];

	if (wfd < 0) {
		usleep(5000);
		return;
	}
	if (poll(&pf, 1, 100) > 0)
		while (read(wfd, ev, sizeof(ev)) > 0)
			;
}

/*
 * Open path, waiting for it to appear with --follow (woken when a file is
 * created in its directory: a capture started after the reader waits for
 * it, --wait-readers). A file caught while its creator is still writing
 * the header reads as bad magic or truncated: retry those for a short
 * while too (every 0.2 ms: the header is written right after).
 */
int open_ring(const struct read_opts *o, const char *path,
		     struct strace_ring **ring, int *timed_out)
{
	long long start = now_ms();
	int said = 0, wfd = -2, wd = -1; /* -2: no watch tried yet */
	int rc;

	*timed_out = 0;
	for (;;) {
		long long waited;
		int retry;

		rc = strace_ring_open(path, ring);
		waited = now_ms() - start;
		if (rc == 0 || !o->follow)
			break;
		retry = rc == -ENOENT ||
			((rc == -STRACE_E_MAGIC || rc == -STRACE_E_TRUNCATED) &&
			 waited < 2000);
		if (!retry)
			break;
		if (o->timeout_ms >= 0 && waited >= o->timeout_ms) {
			*timed_out = 1;
			break;
		}
		if (stop_flag)
			break;
		if (!said && rc == -ENOENT && waited >= 1000) {
			err("%s: no such ring yet: waiting for a writer to "
			    "create it (Ctrl-C stops; --timeout MS gives up)",
			    path);
			said = 1;
		}
		if (rc != -ENOENT) {
			usleep(200);
		} else if (wfd == -2) {
			/* watched from now on: look again first, in case
			 * it came before the watch */
			wfd = watch_dir(path, &wd);
		} else {
			wait_created(wfd);
		}
	}
	if (wfd >= 0)
		unwatch(wfd, wd);
	return rc;
}

int save_ring_create(struct rd *d)
{
	struct strace_ring_stat st;
	struct strace_ring_opts ro;
	int rc;

	rc = strace_ring_stat(d->ring, &st);
	if (rc < 0) {
		ring_error(d->path, rc, "read the header");
		return -1;
	}
	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.mode = STRACE_RING_ARCHIVE;
	ro.capacity = 1u << 16;
	/* the whole table while it may grow, else what is used */
	ro.strings_size = st.strings_size;
	if (!d->o->follow && st.closed && st.strings_used < st.strings_size)
		ro.strings_size = (st.strings_used + 4095) & ~4095ull;
	if (!ro.strings_size)
		ro.strings_size = 4096;
	ro.no_populate = 1;
	rc = ringmsg_create(PROG, d->o->output, "-o", &ro, &d->dst);
	if (rc < 0)
		return -1;
	rc = strace_writer_open(d->dst, &d->w);
	if (rc < 0) {
		ring_error(d->o->output, rc, "write the saved ring");
		return -1;
	}
	return 0;
}

/* whether a and b name the same existing file */
int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Every event of the ring, through a reader of its own, to visit (a
 * pass before the read). Returns 0, or -1 after a message. */
int scan_ring(struct rd *d,
		     void (*visit)(void *arg, const struct strace_event *ev,
				   size_t n),
		     void *arg)
{
	struct strace_reader *r;
	struct strace_batch b;
	long n;
	int rc = strace_reader_open(d->ring, 0, &r);

	if (rc < 0) {
		ring_error(d->path, rc, "attach a reader to the ring");
		return -1;
	}
	while ((n = strace_reader_next(r, &b, BATCH_MAX, 0)) > 0) {
		visit(arg, b.ev, (size_t)n);
		strace_reader_release(r, &b);
	}
	strace_reader_close(r);
	return 0;
}

static void span_visit(void *arg, const struct strace_event *ev, size_t n)
{
	uint64_t *fl = arg;

	for (size_t i = 0; i < n; i++) {
		if (!ev[i].time)
			continue;
		if (ev[i].time < fl[0])
			fl[0] = ev[i].time;
		if (ev[i].time > fl[1])
			fl[1] = ev[i].time;
	}
}

/* The times of the trace's first and last event (0, 0: none). */
static int trace_span(struct rd *d, uint64_t *first, uint64_t *last)
{
	uint64_t fl[2] = {UINT64_MAX, 0};

	if (scan_ring(d, span_visit, fl) < 0)
		return -1;
	*first = fl[0] == UINT64_MAX ? 0 : fl[0];
	*last = fl[0] == UINT64_MAX ? 0 : fl[1];
	return 0;
}

/* the options of the filters, by enum strace_filter_kind */
static const char *const filter_opt[] = {
	[STRACE_FILTER_TIME] = "--time",     [STRACE_FILTER_TID] = "--tid",
	[STRACE_FILTER_PID] = "--pid",       [STRACE_FILTER_COMM] = "--comm",
	[STRACE_FILTER_SYM] = "--sym",       [STRACE_FILTER_NO_SYM] = "--no-sym",
	[STRACE_FILTER_DSO] = "--dso",       [STRACE_FILTER_CALLER] = "--caller",
};

/* The read-side filters of the command line (d->filt stays NULL when
 * there are none). */
int setup_filters(struct rd *d)
{
	const struct read_opts *o = d->o;
	struct strace_stack_opts so = {.size = sizeof(so),
				       .machine = o->vo.machine};
	char msg[256];

	if (!o->nfilters)
		return 0;
	if (strace_filter_new(d->names, &d->filt) < 0) {
		err("out of memory");
		return -1;
	}
	for (int i = 0; i < o->nfilters; i++) {
		int rc = strace_filter_add(d->filt, o->filters[i].kind,
					   o->filters[i].value, msg,
					   sizeof(msg));
		if (rc == -ENOMEM) {
			err("out of memory");
			return -1;
		}
		if (rc < 0) {
			usage_error("%s %s", filter_opt[o->filters[i].kind],
				    msg);
			d->usage = 1;
			return -1;
		}
	}
	if (strace_filter_needs_span(d->filt)) {
		uint64_t first, last;
		if (o->follow) {
			usage_error("--time in percentages needs the whole "
				    "trace: not with --follow (give seconds)");
			d->usage = 1;
			return -1;
		}
		if (trace_span(d, &first, &last) < 0)
			return -1;
		strace_filter_set_span(d->filt, first, last);
	}
	if (strace_filter_needs_stack(d->filt) && !o->view &&
	    strace_stack_new(d->names, &so, NULL, &d->fstack) < 0) {
		err("out of memory");
		return -1;
	}
	return 0;
}

/* A filter's id or pattern that matched nothing is said (the output is
 * what the others kept: the read still succeeds). */
void say_unmatched(struct rd *d, const char *path)
{
	static const char *const what[] = {
		[STRACE_FILTER_TID] = "no thread of that id has events",
		[STRACE_FILTER_PID] = "no process of that id has events",
		[STRACE_FILTER_COMM] = "no thread of that name has events",
		[STRACE_FILTER_SYM] = "no function of that name ran (-f report "
				      "lists those that did)",
		[STRACE_FILTER_NO_SYM] = "no function of that name ran (-f "
					 "report lists those that did)",
		[STRACE_FILTER_DSO] = "no code of such a DSO ran (-f report "
				      "--by dso lists those that did)",
		[STRACE_FILTER_CALLER] = "no function of that name ran (-f "
					 "report lists those that did)",
		[STRACE_FILTER_TIME] = "no event or frame of the trace is in "
				       "that time (-f text shows the times; "
				       "--time 0%-100% is all of it)",
	};
	enum strace_filter_kind kind;
	const char *value;

	for (size_t i = 0; strace_filter_unmatched(d->filt, i, &kind, &value);
	     i++)
		err("%s: %s %s matched nothing: %s", path, filter_opt[kind],
		    value, what[kind]);
}
