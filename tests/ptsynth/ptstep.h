/* SPDX-License-Identifier: MIT */
/*
 * tests/ptsynth/ptstep.h - run a command under ptrace, single-stepping
 * every thread of every process it forks, clones or execs, and report
 * the executed instructions and the task events in the order they
 * happened (ptsynth --ptrace; see docs/ptsynth.md).
 */
#ifndef PTSTEP_H
#define PTSTEP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An executable file mapping of /proc/PID/maps. */
struct ptstep_map {
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
};

struct ptstep_ops {
	/* tid (of process pid) is about to execute the instruction at ip
	 * with RSP = sp (the previous one it reported retired) */
	void (*insn)(void *ctx, pid_t pid, pid_t tid, uint64_t ip, uint64_t sp);
	/* a new task: a thread of pid (pid == ppid) or a new process;
	 * before its first instruction */
	void (*task)(void *ctx, pid_t pid, pid_t tid, pid_t ppid, pid_t ptid);
	/* tid (pid) runs a new program (the first one too): path is its
	 * executable; the maps follow */
	void (*exec)(void *ctx, pid_t pid, pid_t tid, const char *path);
	/* the executable file mappings of pid, all of them (after an exec,
	 * mmap, mprotect or munmap by tid) */
	void (*maps)(void *ctx, pid_t pid, pid_t tid, const struct ptstep_map *m,
		     size_t n);
	/* tid exits (its last reported instruction was its last) */
	void (*exit)(void *ctx, pid_t pid, pid_t tid);
};

struct ptstep_stats {
	uint64_t steps;     /* single-step stops */
	uint64_t tasks;     /* threads and processes traced */
	uint64_t map_reads; /* /proc/PID/maps reads */
};

/*
 * Run argv (PATH search) with address randomisation off and the vDSO
 * hidden (AT_SYSINFO_EHDR of every exec becomes AT_IGNORE: glibc then
 * makes real syscalls). Returns the first process's exit status (128 +
 * signal if killed), or -1 with why set (ptrace refused, no program).
 */
int ptstep_run(char **argv, const struct ptstep_ops *ops, void *ctx,
	       struct ptstep_stats *st, char *why, size_t whylen);

#endif
