/* SPDX-License-Identifier: MIT */
/*
 * test_live_proc - what live capture does to real processes here: the
 * vDSO dump (compared with the vDSO a child wrote out itself) and the
 * initial stacks unwound with libunwind-ptrace from a child blocked in a
 * known call chain (tests/live/victim.c), plus the error codes for a
 * missing pid and a fake procfs with yama's ptrace_scope.
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strace/error.h"
#include "pt_backend/capture/unwind.h"
#include "pt_backend/capture/vdso.h"
#include "../harness.h"

static const char *victim_path(void)
{
	static char p[512];
	const char *o = getenv("O");

	snprintf(p, sizeof(p), "%s/tests/live_victim", o ? o : "build");
	return p;
}

struct victim {
	pid_t pid;
	FILE *out;
	uint64_t addr[6]; /* main level1 level2 level3 tlevel1 thread_main */
};

static const char *const vnames[6] = {"main",	"level1",  "level2",
				      "level3", "tlevel1", "thread_main"};

static int victim_start(struct victim *v, const char *arg1, const char *arg2)
{
	int fd[2];
	char line[256];

	memset(v, 0, sizeof(*v));
	if (pipe(fd) < 0)
		return -1;
	v->pid = fork();
	if (v->pid < 0)
		return -1;
	if (!v->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		dup2(fd[1], 1);
		close(fd[0]);
		execl(victim_path(), "live_victim", arg1, arg2, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	v->out = fdopen(fd[0], "r");
	while (v->out && fgets(line, sizeof(line), v->out)) {
		char name[64];
		unsigned long a;

		if (!strncmp(line, "ready", 5))
			return 0;
		if (sscanf(line, "%63s %lx", name, &a) == 2)
			for (int i = 0; i < 6; i++)
				if (!strcmp(name, vnames[i]))
					v->addr[i] = a;
	}
	return -1;
}

static void victim_stop(struct victim *v)
{
	if (v->pid > 0) {
		kill(v->pid, SIGKILL);
		waitpid(v->pid, NULL, 0);
	}
	if (v->out)
		fclose(v->out);
}

/*
 * Index of the known function containing ip: the nearest start below it,
 * within 4 KiB (sanitizer builds make main long).
 */
static int which(const struct victim *v, uint64_t ip)
{
	int best = -1;

	for (int i = 0; i < 6; i++)
		if (v->addr[i] && ip >= v->addr[i] && ip - v->addr[i] < 4096 &&
		    (best < 0 || v->addr[i] > v->addr[best]))
			best = i;
	return best;
}

TEST(vdso_self_and_child)
{
	struct victim v;
	char path[] = "/tmp/test_live_vdso.XXXXXX";
	uint64_t start = 0;
	void *buf = NULL, *want;
	size_t len = 0;
	long wlen;
	FILE *f;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	close(fd);
	/* Our own: must match the mapping the kernel gave us. */
	REQUIRE(strace_vdso_read(NULL, getpid(), &start, &buf, &len) == 0);
	CHECK_U64(start, ==, getauxval(AT_SYSINFO_EHDR));
	CHECK(len >= 4096 && !memcmp(buf, (void *)(uintptr_t)start, len));
	free(buf);

	/* A child's, compared with what the child wrote of itself. */
	REQUIRE(victim_start(&v, "vdso", path) == 0);
	CHECK_INT(strace_vdso_read(NULL, v.pid, &start, &buf, &len), ==, 0);
	f = fopen(path, "r");
	REQUIRE(f);
	fseek(f, 0, SEEK_END);
	wlen = ftell(f);
	rewind(f);
	want = malloc((size_t)wlen);
	REQUIRE(want && fread(want, 1, (size_t)wlen, f) == (size_t)wlen);
	fclose(f);
	CHECK_INT((long)len, ==, wlen);
	CHECK(len == (size_t)wlen && !memcmp(buf, want, len));
	{
		const Elf64_Ehdr *eh = buf;

		CHECK(!memcmp(eh->e_ident, ELFMAG, SELFMAG));
		CHECK_INT(eh->e_ident[EI_CLASS], ==, ELFCLASS64);
		CHECK_INT(eh->e_type, ==, ET_DYN);
		CHECK_INT(eh->e_machine, ==, EM_X86_64);
	}
	free(want);
	free(buf);
	victim_stop(&v);
	unlink(path);
}

TEST(errors_missing_pid)
{
	uint64_t s;
	void *b;
	size_t l;
	struct strace_unwound st;
	struct strace_unwound *v;
	size_t n;
	pid_t dead = fork();

	REQUIRE(dead >= 0);
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0); /* a pid that surely does not exist now */
	CHECK_INT(strace_vdso_read(NULL, dead, &s, &b, &l), ==, -STRACE_E_NOPID);
	CHECK_INT(strace_unwind_thread(NULL, dead, &st), ==, -STRACE_E_NOPID);
	CHECK_INT(strace_unwind_process(NULL, dead, &v, &n), ==, -STRACE_E_NOPID);
	CHECK_STR(strace_strerror(-STRACE_E_NOPID), "no such process");
}

TEST(errors_ptrace_scope_fake_procfs)
{
	char dir[] = "/tmp/test_live_proc.XXXXXX", cmd[300];
	FILE *f;

	REQUIRE(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/kernel/yama", dir);
	REQUIRE(system(cmd) == 0);
	CHECK_INT(strace_live_access_error(dir, EPERM), ==, -STRACE_E_PERM);
	snprintf(cmd, sizeof(cmd), "%s/sys/kernel/yama/ptrace_scope", dir);
	f = fopen(cmd, "w");
	REQUIRE(f);
	fputs("1\n", f);
	fclose(f);
	CHECK_INT(strace_live_access_error(dir, EPERM), ==,
		  -STRACE_E_PTRACE_SCOPE);
	CHECK_INT(strace_live_access_error(dir, EACCES), ==,
		  -STRACE_E_PTRACE_SCOPE);
	CHECK_INT(strace_live_access_error(dir, ESRCH), ==, -STRACE_E_NOPID);
	CHECK_INT(strace_live_access_error(dir, ENOMEM), ==, -ENOMEM);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), ==, 0);
}

TEST(unwind_known_chain)
{
	struct victim v;
	struct strace_unwound *st = NULL;
	size_t n = 0;
	int main_ok = 0, thr_ok = 0;

	REQUIRE(victim_start(&v, NULL, NULL) == 0);
	usleep(20000); /* let the second thread reach pause() */
	CHECK_INT(strace_unwind_process(NULL, v.pid, &st, &n), ==, 0);
	CHECK_INT(n, ==, 2);
	for (size_t t = 0; t < n; t++) {
		char chain[64] = "";
		size_t cl = 0;

		CHECK_INT(st[t].err, ==, 0);
		for (unsigned i = 0; i < st[t].nframes; i++) {
			int w = which(&v, st[t].ip[i]);

			if (w >= 0 && cl < sizeof(chain) - 1)
				chain[cl++] = (char)('0' + w);
		}
		chain[cl] = '\0';
		fprintf(stderr, "  tid %d: %u frames, known chain %s\n",
			(int)st[t].tid, st[t].nframes, chain);
		/* innermost first: level3 level2 level1 main */
		if (st[t].tid == v.pid && !strcmp(chain, "3210"))
			main_ok = 1;
		/* tlevel1 thread_main */
		if (st[t].tid != v.pid && !strcmp(chain, "45"))
			thr_ok = 1;
		/* ip[0] is in libc's pause (not one of ours). */
		CHECK_INT(which(&v, st[t].ip[0]), ==, -1);
	}
	CHECK(main_ok);
	CHECK(thr_ok);
	/* The process keeps running after the unwind: not stopped, not traced. */
	{
		char path[64], line[256];
		FILE *f;
		int ok = 0;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)v.pid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "TracerPid:\t0", 12))
				ok = 1;
		if (f)
			fclose(f);
		CHECK(ok);
		CHECK_INT(waitpid(v.pid, NULL, WNOHANG), ==, 0);
	}
	/* STACK_FRAME events: outermost first, depth 0 = innermost. */
	if (n) {
		struct strace_event ev[STRACE_UNWOUND_MAX];
		size_t k = strace_unwound_events(&st[0], 1234, ev,
						 STRACE_UNWOUND_MAX);

		CHECK_INT(k, ==, st[0].nframes);
		if (k) {
			CHECK_INT(ev[0].type, ==, STRACE_EV_STACK_FRAME);
			CHECK_U64(ev[0].a, ==, st[0].ip[k - 1]);
			CHECK_U64(ev[0].b, ==, k - 1);
			CHECK_U64(ev[k - 1].a, ==, st[0].ip[0]);
			CHECK_U64(ev[k - 1].b, ==, 0);
			CHECK_U64(ev[0].time, ==, 1234);
			CHECK_INT(ev[0].tid, ==, st[0].tid);
		}
	}
	free(st);
	victim_stop(&v);
}

RUN_TESTS("test_live_proc")
