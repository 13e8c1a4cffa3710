// SPDX-License-Identifier: MIT
/*
 * tests/ptsynth/ptstep.c - the executed instructions of a command and of
 * every process it forks and execs, by ptrace single-stepping (the ground
 * truth source of ptsynth --ptrace; see ptstep.h and docs/ptsynth.md).
 *
 * One waitpid(-1, __WALL) loop; every traced thread is resumed with
 * PTRACE_SINGLESTEP at each of its stops, so several threads (a parent
 * blocked in wait4, its child) run at once and their stops are reported
 * in the order the kernel delivers them: that order is the global one.
 *
 * Stops and what they mean (x86-64 Linux):
 * - SIGTRAP (no event): a single step; RIP is the next instruction, not
 *   yet executed. After a `syscall` the step stop comes right at the
 *   syscall's return (orig_rax is then the syscall number, -1 after any
 *   other instruction): mmap/mprotect/munmap re-read /proc/PID/maps.
 * - PTRACE_EVENT_FORK/VFORK/CLONE/EXEC: inside the syscall, RIP already
 *   the return address (after exec: the new program's entry). Resuming
 *   with a single step stops again at that RIP before executing it (the
 *   syscall-exit step report): that second report is dropped.
 * - a new task's first stop (SIGSTOP, possibly before its creator's event
 *   stop): RIP is its first instruction.
 * - PTRACE_EVENT_EXIT: the task is exiting; other signals are delivered
 *   (a handler's first instruction then comes as the next step stop).
 *
 * A 32-bit process (CS 0x23, not 0x33) comes in the same 64-bit
 * user_regs_struct (EIP in rip, ESP in rsp); its stack holds 4-byte words
 * and orig_rax is an i386 system call's number (int $0x80: glibc makes
 * them so without the vDSO).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptstep.h"

struct task {
	pid_t tid, pid;
	bool known;    /* its creator's event was seen (or the first task) */
	bool stopped;  /* its first stop came before that event */
	bool started;  /* resumed at least once */
	bool exited;   /* exit reported */
	bool dup_on;   /* drop a step stop at dup (see above) */
	uint64_t dup;
};

static struct task *tasks;
static size_t ntasks;

static struct task *task_get(pid_t tid, bool create)
{
	static size_t last;

	if (last < ntasks && tasks[last].tid == tid && !tasks[last].exited)
		return &tasks[last];
	for (size_t i = ntasks; i-- > 0;)
		if (tasks[i].tid == tid && !tasks[i].exited) {
			last = i;
			return &tasks[i];
		}
	if (!create)
		return NULL;
	tasks = realloc(tasks, (ntasks + 1) * sizeof(*tasks));
	if (!tasks) {
		fprintf(stderr, "ptstep: out of memory\n");
		exit(1);
	}
	memset(&tasks[ntasks], 0, sizeof(*tasks));
	tasks[ntasks].tid = tid;
	last = ntasks;
	return &tasks[ntasks++];
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	FILE *f;
	pid_t tg = tid;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tg = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tg;
}

static void read_maps(const struct ptstep_ops *ops, void *ctx, pid_t pid,
		      pid_t tid, struct ptstep_stats *st)
{
	static struct ptstep_map *m;
	static size_t cap;
	size_t n = 0;
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	st->map_reads++;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8];
		int at = 0;
		char *p;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms,
			   &off, &at) < 4 || !at || perms[2] != 'x' ||
		    line[at] != '/')
			continue;
		p = line + at;
		p[strcspn(p, "\n")] = 0;
		if (strlen(p) > 10 && !strcmp(p + strlen(p) - 10, " (deleted)"))
			p[strlen(p) - 10] = 0;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			m = realloc(m, cap * sizeof(*m));
			if (!m) {
				fprintf(stderr, "ptstep: out of memory\n");
				exit(1);
			}
		}
		m[n].start = s;
		m[n].end = e;
		m[n].pgoff = off;
		snprintf(m[n].path, sizeof(m[n].path), "%s", p);
		n++;
	}
	fclose(f);
	ops->maps(ctx, pid, tid, m, n);
}

/*
 * At an exec stop RSP points at argc, then argv[], NULL, envp[], NULL and
 * the aux vector: AT_SYSINFO_EHDR becomes AT_IGNORE, so that the dynamic
 * loader and libc know of no vDSO (its code is in no file: no decoder
 * could read it) and make real syscalls.
 */
/* The process of these registers runs 32-bit code (its CS is the
 * kernel's 32-bit user code segment, __USER32_CS). */
static bool is32(const struct user_regs_struct *r)
{
	return r->cs == 0x23;
}

/* A word of the traced stack: 8 bytes, or 4 in a 32-bit process. */
static long peek_word(pid_t tid, uint64_t p, int w)
{
	long v = ptrace(PTRACE_PEEKDATA, tid, (void *)p, NULL);

	return w == 4 ? (long)(uint32_t)v : v;
}

static void hide_vdso(pid_t tid, const struct user_regs_struct *r)
{
	long argc;
	uint64_t sp = r->rsp, p;
	int nulls = 0, w = is32(r) ? 4 : 8;

	errno = 0;
	argc = peek_word(tid, sp, w);
	if (errno || argc < 0)
		return;
	/* past argc, argv[] and its NULL */
	p = sp + (uint64_t)w * ((uint64_t)argc + 2);
	for (int i = 0; i < 100000 && !nulls; i++, p += (uint64_t)w) {
		long v = peek_word(tid, p, w);
		if (errno)
			return;
		nulls = v == 0;
	}
	for (int i = 0; i < 1000; i++, p += 2 * (uint64_t)w) {
		long type = peek_word(tid, p, w);
		if (errno || type == AT_NULL)
			return;
		if (type != AT_SYSINFO_EHDR)
			continue;
		if (w == 4) {
			/* (the word after it is the value: kept) */
			long both = ptrace(PTRACE_PEEKDATA, tid, (void *)p,
					   NULL);
			both = (long)(((unsigned long)both &
				       ~0xffffffffUL) |
				      AT_IGNORE);
			ptrace(PTRACE_POKEDATA, tid, (void *)p, (void *)both);
		} else {
			ptrace(PTRACE_POKEDATA, tid, (void *)p,
			       (void *)AT_IGNORE);
		}
	}
}

/* A system call that may change the executable mappings: mmap,
 * mprotect, munmap (x86-64), old_mmap, munmap, mprotect, mmap2 (i386). */
static bool maps_call(const struct user_regs_struct *r)
{
	if (is32(r))
		return r->orig_rax == 90 || r->orig_rax == 91 ||
		       r->orig_rax == 125 || r->orig_rax == 192;
	return r->orig_rax == 9 || r->orig_rax == 10 || r->orig_rax == 11;
}

static void exe_of(pid_t pid, char *buf, size_t n)
{
	char path[64];
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	k = readlink(path, buf, n - 1);
	buf[k > 0 ? k : 0] = 0;
}

/* Report ip (and the stack pointer sp there) as tid's next instruction
 * unless it is the repeated report of an event stop. */
static void at(const struct ptstep_ops *ops, void *ctx, struct task *t,
	       uint64_t ip, uint64_t sp, bool event)
{
	if (!(t->dup_on && t->dup == ip))
		ops->insn(ctx, t->pid, t->tid, ip, sp);
	t->dup_on = event;
	t->dup = ip;
}

static void resume(struct task *t, int sig)
{
	t->started = true;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0 &&
	    errno != ESRCH)
		perror("ptstep: PTRACE_SINGLESTEP");
}

/* A new task's first stop, once its creator's event is known. */
static void first_stop(const struct ptstep_ops *ops, void *ctx, struct task *t)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) == 0)
		at(ops, ctx, t, r.rip, r.rsp, true);
	resume(t, 0);
}

int ptstep_run(char **argv, const struct ptstep_ops *ops, void *ctx,
	       struct ptstep_stats *st, char *why, size_t whylen)
{
	int ep[2], status, code = -1, err = 0;
	pid_t child;
	struct task *t;
	char exe[PATH_MAX];

	memset(st, 0, sizeof(*st));
	if (pipe2(ep, O_CLOEXEC)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return -1;
	}
	if (child == 0) {
		close(ep[0]);
		personality(ADDR_NO_RANDOMIZE);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		err = errno;
		if (write(ep[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(ep[1]);
	if (read(ep[0], &err, sizeof(err)) == (ssize_t)sizeof(err)) {
		close(ep[0]);
		waitpid(child, &status, 0);
		snprintf(why, whylen, "cannot run %s under ptrace: %s", argv[0],
			 strerror(err));
		return -1;
	}
	close(ep[0]);
	if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGTRAP) {
		snprintf(why, whylen, "%s did not stop after its exec under ptrace",
			 argv[0]);
		return -1;
	}
	if (ptrace(PTRACE_SETOPTIONS, child, NULL,
		   (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
				  PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
				  PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)) < 0) {
		snprintf(why, whylen, "PTRACE_SETOPTIONS: %s", strerror(errno));
		kill(child, SIGKILL);
		return -1;
	}
	t = task_get(child, true);
	t->pid = child;
	t->known = true;
	st->tasks = 1;
	ops->task(ctx, child, child, 0, 0);
	exe_of(child, exe, sizeof(exe));
	ops->exec(ctx, child, child, exe);
	{
		struct user_regs_struct r;

		if (ptrace(PTRACE_GETREGS, child, NULL, &r) == 0) {
			hide_vdso(child, &r);
			read_maps(ops, ctx, child, child, st);
			at(ops, ctx, t, r.rip, r.rsp, true);
		}
	}
	resume(t, 0);

	for (;;) {
		struct user_regs_struct r;
		pid_t tid = waitpid(-1, &status, __WALL);
		int sig, ev;

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: all gone */
		}
		t = task_get(tid, true);
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (t->known && !t->exited)
				ops->exit(ctx, t->pid, t->tid);
			t->exited = true;
			if (tid == child)
				code = WIFEXITED(status) ? WEXITSTATUS(status)
							 : 128 + WTERMSIG(status);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		ev = status >> 16;
		if (!t->known) {
			/* a new task's first stop before its creator's event */
			t->stopped = true;
			continue;
		}
		if (!t->started && sig == SIGSTOP && !ev) {
			first_stop(ops, ctx, t);
			continue;
		}
		if (sig != SIGTRAP) {
			resume(t, sig); /* deliver it */
			continue;
		}
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0) {
			resume(t, 0);
			continue;
		}
		switch (ev) {
		case 0: /* a single step */
			st->steps++;
			/* after a syscall: orig_rax is its number (-1 after
			 * any other instruction) */
			if (maps_call(&r))
				read_maps(ops, ctx, t->pid, tid, st);
			at(ops, ctx, t, r.rip, r.rsp, false);
			resume(t, 0);
			break;
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE: {
			unsigned long msg = 0;
			struct task *c;
			pid_t ctid;

			ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg);
			ctid = (pid_t)msg;
			c = task_get(ctid, true);
			t = task_get(tid, false); /* tasks[] may have moved */
			c->pid = ev == PTRACE_EVENT_CLONE ? tgid_of(ctid) : ctid;
			c->known = true;
			st->tasks++;
			ops->task(ctx, c->pid, ctid, t->pid, tid);
			at(ops, ctx, t, r.rip, r.rsp, true);
			resume(t, 0);
			/* the child's first instruction: after its creator's
			 * last one, in the order of reports */
			if (c->stopped)
				first_stop(ops, ctx, c);
			break;
		}
		case PTRACE_EVENT_EXEC:
			exe_of(t->pid, exe, sizeof(exe));
			ops->exec(ctx, t->pid, tid, exe);
			hide_vdso(tid, &r);
			read_maps(ops, ctx, t->pid, tid, st);
			at(ops, ctx, t, r.rip, r.rsp, true);
			resume(t, 0);
			break;
		case PTRACE_EVENT_EXIT:
			if (!t->exited)
				ops->exit(ctx, t->pid, tid);
			t->exited = true;
			ptrace(PTRACE_CONT, tid, NULL, NULL);
			break;
		default:
			resume(t, 0);
			break;
		}
	}
	return code;
}
