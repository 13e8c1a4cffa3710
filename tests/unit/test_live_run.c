/* SPDX-License-Identifier: MIT */
/*
 * test_live_run - pt_backend/pipeline/live_run.c: strace_live_capture()'s
 * hooks, in order, where the session cannot open (no Intel PT), where
 * opened refuses to go on, and where the start fails (a fake sysfs the
 * kernel does not know): failed says each failure once and its status is
 * returned, ended comes only after a session that went on.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pt_backend/pipeline/pipeline.h"
#include "../harness.h"

/* What the hooks saw, as letters in order: o(pened), t(urn), f(ailed),
 * e(nded). */
struct seen {
	char log[16];
	int opened_status, code;
};

static void note(struct seen *s, char c)
{
	size_t n = strlen(s->log);

	if (n + 1 < sizeof(s->log))
		s->log[n] = c;
}

static int h_opened(void *arg, struct strace_live *l)
{
	struct seen *s = arg;

	(void)l;
	note(s, 'o');
	return s->opened_status;
}

static int h_turn(void *arg, struct strace_live *l)
{
	(void)l;
	note(arg, 't');
	return 1;
}

static int h_failed(void *arg, int code, pid_t pid, const char *detail)
{
	struct seen *s = arg;

	(void)pid;
	(void)detail;
	note(s, 'f');
	s->code = code;
	return 9;
}

static void h_ended(void *arg, const struct strace_live_stats *st)
{
	(void)st;
	note(arg, 'e');
}

static int capture(struct seen *s, const char *sysfs, char **argv)
{
	struct strace_live_opts lo;
	struct strace_live_hooks h = {h_opened, h_turn, h_failed, h_ended, s};
	struct strace_live_cb cb;

	memset(&lo, 0, sizeof(lo));
	memset(&cb, 0, sizeof(cb));
	lo.sysfs_root = sysfs;
	lo.no_stacks = 1;
	return strace_live_capture(&lo, 0, argv, &cb, &h);
}

TEST(open_fails)
{
	struct seen s = {{0}, 0, 0};
	char t[] = "true", *argv[] = {t, NULL};

	CHECK_INT(capture(&s, "/nonexistent-sysfs", argv), ==, 9);
	CHECK_STR(s.log, "f");
	CHECK_INT(s.code, ==, -STRACE_E_NOPT);
}

TEST(opened_refuses)
{
	struct seen s = {{0}, 7, 0};
	char t[] = "true", *argv[] = {t, NULL};

	CHECK_INT(capture(&s, "tests/live/sysfs", argv), ==, 7);
	CHECK_STR(s.log, "o");
}

TEST(start_fails)
{
	struct seen s = {{0}, 0, 0};
	char sl[] = "sleep", five[] = "5", *argv[] = {sl, five, NULL};

	/* the fake sysfs lists intel_pt; perf_event_open does not know it */
	CHECK_INT(capture(&s, "tests/live/sysfs", argv), ==, 9);
	CHECK_STR(s.log, "ofe");
	CHECK_INT(s.code, ==, -STRACE_E_NOPT);
	CHECK_INT(waitpid(-1, NULL, WNOHANG), <=, 0); /* no child left */
}

RUN_TESTS("test_live_run")
