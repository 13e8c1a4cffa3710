/* SPDX-License-Identifier: MIT */
/*
 * test_live_cli - cli/capture_live.c: option parsing into perf event
 * terms, and the messages and exit status for each reason live capture
 * cannot run here (no Intel PT, a pid that does not exist, the kernel not
 * knowing the PMU, perf_event_paranoid, ptrace_scope), with the fake
 * sysfs/procfs trees and real processes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/capture_live.h"
#include "../harness.h"

/* argv from string literals (getopt wants char *). */
static char **mkargv(const char *const *in)
{
	static char store[32][128];
	static char *out[32];
	int n = 0;

	for (n = 0; in[n] && n < 31; n++) {
		snprintf(store[n], sizeof(store[n]), "%s", in[n]);
		out[n] = store[n];
	}
	out[n] = NULL;
	return out;
}

static int parse(struct capture_live_opts *o, int argc, char **argv)
{
	struct option opts[32];
	int n = 0, c, bad = 0;

	for (; capture_live_longopts[n].name; n++)
		opts[n] = capture_live_longopts[n];
	memset(&opts[n], 0, sizeof(opts[n]));
	optind = 1;
	capture_live_init(o);
	while ((c = getopt_long(argc, argv, "w:", opts, NULL)) != -1)
		if (capture_live_option(o, c, optarg, stderr) != 1)
			bad++;
	return bad;
}

TEST(options_to_terms)
{
	struct capture_live_opts o;
	static const char *const args[] = {
		"x",	 "--cyc",      "--psb-period=4", "--no-mtc",
		"--noretcomp", "--snapshot=64K", "--aux-size", "1M",
		"-w",	 "out.data",   "--filter",	 "start 0x10", NULL};
	static const char *const b1[] = {"x", "--aux-size", "1000", NULL};
	static const char *const b2[] = {"x", "--psb-period", "16", NULL};

	CHECK_INT(parse(&o, 12, mkargv(args)), ==, 0);
	CHECK_STR(o.terms, "cyc,psb_period=4,mtc=0,noretcomp");
	CHECK_INT(o.lo.snapshot, ==, 1);
	CHECK_U64(o.lo.snapshot_bytes, ==, 65536);
	CHECK_U64(o.lo.aux_bytes, ==, 1 << 20);
	CHECK_STR(o.lo.write_path, "out.data");
	CHECK_STR(o.lo.filter, "start 0x10");
	CHECK_INT(parse(&o, 3, mkargv(b1)), ==, 1);
	CHECK_INT(parse(&o, 3, mkargv(b2)), ==, 1);
}

static int run_capture(struct capture_live_opts *o, pid_t pid, char **argv,
		       char *msg, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int st;

	o->quiet = 1;
	st = capture_live_run(o, pid, argv, NULL, NULL, f);
	fclose(f);
	snprintf(msg, len, "%s", buf ? buf : "");
	free(buf);
	fprintf(stderr, "  [exit %d] %s", st, msg);
	return st;
}

TEST(no_intel_pt_here)
{
	struct capture_live_opts o;
	char msg[2048];
	static const char *const c[] = {"true", NULL};
	char **cmd = mkargv(c);

	if (access("/sys/bus/event_source/devices/intel_pt", F_OK) == 0)
		SKIP("this machine has Intel PT");
	capture_live_init(&o);
	CHECK_INT(run_capture(&o, getpid(), NULL, msg, sizeof(msg)), ==,
		  CAPTURE_EXIT_NOTRACE);
	CHECK(strstr(msg, "Intel PT is not available (no intel_pt PMU under "
			  "/sys/bus/event_source/devices"));
	CHECK(strstr(msg, "perf record --per-thread -e intel_pt//u"));
	CHECK(strstr(msg, "ptrace-capture -i perf.data"));
	capture_live_init(&o);
	CHECK_INT(run_capture(&o, 0, cmd, msg, sizeof(msg)), ==,
		  CAPTURE_EXIT_NOTRACE);
	CHECK(strstr(msg, "Intel PT is not available"));
}

TEST(pid_does_not_exist)
{
	struct capture_live_opts o;
	char msg[2048], want[128];
	pid_t dead = fork();

	REQUIRE(dead >= 0);
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	capture_live_init(&o);
	o.lo.sysfs_root = "tests/live/sysfs"; /* past the PMU check */
	CHECK_INT(run_capture(&o, dead, NULL, msg, sizeof(msg)), ==, 1);
	snprintf(want, sizeof(want), "no process with pid %d", (int)dead);
	CHECK(strstr(msg, want));
	CHECK(!strstr(msg, "Intel PT is not available"));
}

/* No such process, and no Intel PT either: one run says both. */
TEST(pid_does_not_exist_and_no_pt)
{
	struct capture_live_opts o;
	char msg[2048], want[128];
	pid_t dead = fork();

	REQUIRE(dead >= 0);
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	capture_live_init(&o);
	o.lo.sysfs_root = "/nonexistent-sysfs"; /* no intel_pt PMU */
	CHECK_INT(run_capture(&o, dead, NULL, msg, sizeof(msg)), ==, 1);
	snprintf(want, sizeof(want), "ptrace-capture: no process with pid %d",
		 (int)dead);
	CHECK(strstr(msg, want));
	CHECK(strstr(msg, "ptrace-capture: also, Intel PT is not available on "
			  "this machine"));
	/* the process comes first */
	CHECK(strstr(msg, want) < strstr(msg, "also, Intel PT"));
}

TEST(kernel_does_not_know_pmu)
{
	/* sysfs (fake) lists intel_pt, but perf_event_open says ENOENT. */
	struct capture_live_opts o;
	char msg[2048];
	static const char *const c[] = {"sleep", "5", NULL};
	char **cmd = mkargv(c);
	pid_t child;

	capture_live_init(&o);
	o.lo.sysfs_root = "tests/live/sysfs";
	CHECK_INT(run_capture(&o, 0, cmd, msg, sizeof(msg)), ==,
		  CAPTURE_EXIT_NOTRACE);
	CHECK(strstr(msg, "Intel PT is not available"));
	/* The held child was killed, not left behind. */
	child = waitpid(-1, NULL, WNOHANG);
	CHECK_INT(child, <=, 0);
	/* and for a running process */
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	capture_live_init(&o);
	o.lo.sysfs_root = "tests/live/sysfs";
	o.lo.no_stacks = 1;
	CHECK_INT(run_capture(&o, child, NULL, msg, sizeof(msg)), ==,
		  CAPTURE_EXIT_NOTRACE);
	CHECK(strstr(msg, "Intel PT is not available"));
	CHECK_INT(kill(child, 0), ==, 0); /* still running */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

TEST(bad_terms_message)
{
	struct capture_live_opts o;
	char msg[2048];

	capture_live_init(&o);
	o.lo.sysfs_root = "tests/live/sysfs";
	o.event = "intel_pt/cyc_thresh=14/u";
	CHECK_INT(run_capture(&o, getpid(), NULL, msg, sizeof(msg)), ==, 2);
	CHECK(strstr(msg, "invalid cyc_thresh=14 for intel_pt; valid values "
			  "are: 0,1,2,3,4,5,6,7,8,9,10,11,12,13"));
}

TEST(permission_messages)
{
	char dir[] = "/tmp/test_live_cli.XXXXXX", path[300];
	char *buf = NULL;
	size_t n = 0;
	FILE *f, *m;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "mkdir -p %s/sys/kernel/yama", dir);
	REQUIRE(system(path) == 0);
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_paranoid", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("3\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sys/kernel/yama/ptrace_scope", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("2\n", f);
	fclose(f);
	m = open_memstream(&buf, &n);
	CHECK_INT(capture_live_error(m, -STRACE_E_PARANOID, 42, NULL, dir), ==,
		  CAPTURE_EXIT_NOTRACE);
	CHECK_INT(capture_live_error(m, -STRACE_E_PTRACE_SCOPE, 42, NULL, dir),
		  ==, CAPTURE_EXIT_NOTRACE);
	CHECK_INT(capture_live_error(m, -STRACE_E_PERM, 42, NULL, dir), ==,
		  CAPTURE_EXIT_NOTRACE);
	CHECK_INT(capture_live_error(m, -STRACE_E_NOPID, 42, NULL, dir), ==, 1);
	CHECK_INT(capture_live_error(m, -EIO, 42, NULL, dir), ==, 1);
	fclose(m);
	fprintf(stderr, "%s", buf);
	CHECK(strstr(buf, "kernel.perf_event_paranoid is 3"));
	CHECK(strstr(buf, "sudo sysctl -w kernel.perf_event_paranoid=1"));
	CHECK(strstr(buf, "kernel.yama.ptrace_scope is 2, which does not allow "
			  "attaching to process 42"));
	CHECK(strstr(buf, "sudo sysctl -w kernel.yama.ptrace_scope=0"));
	CHECK(strstr(buf, "permission denied tracing process 42"));
	free(buf);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK_INT(system(path), ==, 0);
}

RUN_TESTS("test_live_cli")
