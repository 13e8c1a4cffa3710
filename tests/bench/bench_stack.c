/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bench_stack.c - the call stacks and the views on a saved
 * ring (make bench, tests/bench/stacks.sh).
 *
 *   bench_stack RING stack|report|folded|tree|chrome|fxt|uftrace|svg|svg-time [N]
 *
 * The ring's events are read once into memory, then fed again and again
 * in batches of BATCH, as ptrace-read reads a ring (N events in all,
 * default 20M) to strace_stack alone (no callbacks), or
 * to a view of ptrace-read writing to /dev/null (uftrace: a data
 * directory made under /tmp, its writes timed, removed after): what is
 * timed is the stacks and the view, not the reading of the file. Prints
 * "RESULT stack_MODE EVENTS SECONDS EVENTS_PER_SECOND" (CPU time of the
 * process) as tests/bench/run.sh collects them.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/view/view.h"
#include "strace/names.h"
#include "strace/ring.h"
#include "strace/stack.h"

#define BATCH 16384 /* ptrace-read's BATCH_MAX */

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Remove the directory -f uftrace wrote (files only, no subdirectories). */
static void remove_dir(const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	struct strace_ring *ring;
	struct strace_reader *r;
	struct strace_names *names;
	struct strace_batch b;
	struct strace_event *ev = NULL;
	size_t n = 0, cap = 0;
	uint64_t want = argc > 3 ? strtoull(argv[3], NULL, 0) : 20000000ull;
	uint64_t done = 0;
	const char *mode = argc > 2 ? argv[2] : "";
	char dir[] = "/tmp/bench_stack_uftrace.XXXXXX";
	long k;
	double t0, t1;

	if (argc < 3 || (strcmp(mode, "stack") && strcmp(mode, "report") &&
			 strcmp(mode, "folded") && strcmp(mode, "tree") &&
			 strcmp(mode, "chrome") && strcmp(mode, "fxt") &&
			 strcmp(mode, "uftrace") && strcmp(mode, "svg") &&
			 strcmp(mode, "svg-time"))) {
		fprintf(stderr, "usage: bench_stack RING stack|report|folded|"
				"tree|chrome|fxt|uftrace|svg|svg-time [N]\n");
		return 2;
	}
	if (strace_ring_open(argv[1], &ring) < 0 ||
	    strace_reader_open(ring, 0, &r) < 0 ||
	    strace_names_new(ring, &names) < 0) {
		fprintf(stderr, "bench_stack: %s: cannot read the ring\n",
			argv[1]);
		return 1;
	}
	while ((k = strace_reader_next(r, &b, 0, 0)) > 0) {
		if (n + (size_t)k > cap) {
			cap = (n + (size_t)k) * 2;
			ev = realloc(ev, cap * sizeof(*ev));
			if (!ev)
				return 1;
		}
		memcpy(ev + n, b.ev, (size_t)k * sizeof(*ev));
		n += (size_t)k;
		strace_reader_release(r, &b);
	}
	strace_names_update(names);
	if (!n)
		return 1;

	if (!strcmp(mode, "stack")) {
		struct strace_stack *s;
		if (strace_stack_new(names, NULL, NULL, &s) < 0)
			return 1;
		t0 = cpu_now();
		for (done = 0; done < want; done += n)
			for (size_t i = 0; i < n; i += BATCH)
				strace_stack_feed(s, ev + i,
						  n - i < BATCH ? n - i : BATCH);
		t1 = cpu_now();
		strace_stack_free(s);
	} else {
		struct view_opts o;
		struct view *v;
		struct out out;
		memset(&o, 0, sizeof(o));
		o.kind = !strcmp(mode, "report")    ? VIEW_REPORT
			 : !strcmp(mode, "folded")  ? VIEW_FOLDED
			 : !strcmp(mode, "chrome")  ? VIEW_CHROME
			 : !strcmp(mode, "fxt")     ? VIEW_FXT
			 : !strcmp(mode, "uftrace") ? VIEW_UFTRACE
			 : !strcmp(mode, "svg")     ? VIEW_SVG
			 : !strcmp(mode, "svg-time") ? VIEW_SVG
						    : VIEW_TREE;
		o.flame = !strcmp(mode, "svg-time") ? VIEW_FLAME_TIME
						    : VIEW_FLAME_MERGED;
		o.min_width = VIEW_MIN_WIDTH;
		if (o.kind == VIEW_UFTRACE) {
			if (!mkdtemp(dir)) {
				perror("bench_stack: mkdtemp");
				return 1;
			}
			o.dir = dir;
		}
		if (out_open(&out, "bench_stack", "/dev/null") < 0 ||
		    view_new(&o, names, NULL, &out, &v) < 0)
			return 1;
		t0 = cpu_now();
		/* in batches, as ptrace-read reads a ring */
		for (done = 0; done < want; done += n)
			for (size_t i = 0; i < n; i += BATCH)
				if (view_feed(v, ev + i,
					      n - i < BATCH ? n - i : BATCH,
					      ~0ull) < 0)
					return 1;
		view_finish(v);
		out_close(&out);
		t1 = cpu_now();
		view_free(v);
		if (o.kind == VIEW_UFTRACE)
			remove_dir(dir);
	}
	printf("RESULT stack_%s %llu %.6f %.0f\n", mode,
	       (unsigned long long)done, t1 - t0, (double)done / (t1 - t0));
	free(ev);
	strace_names_free(names);
	strace_reader_close(r);
	strace_ring_close(ring);
	return 0;
}
