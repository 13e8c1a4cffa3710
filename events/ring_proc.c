/* SPDX-License-Identifier: MIT */
/*
 * events/ring_proc.c - liveness: whether the process behind a slot, the
 * creator or the lock still runs (pid and start time), and the ring's
 * lock (hdr->lock).
 * See events/ring_internal.h for the protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring_internal.h"

/* Read /proc/pid/stat: the state letter and the start time (clock ticks
 * since boot). Returns 0, or -1 if there is no such process. */
static int proc_stat(uint32_t pid, char *state, uint64_t *starttime)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: skip to the last
	 * ')'; the state is field 3, the start time field 22. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	*state = p[2];
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	*starttime = strtoull(p, NULL, 10);
	return 0;
}

static uint64_t proc_starttime(uint32_t pid)
{
	char state;
	uint64_t st;
	return proc_stat(pid, &state, &st) == 0 ? st : 0;
}

/* Whether the process that registered (pid, starttime) still runs. A
 * zombie (killed, not yet reaped) is dead: it will never read or write.
 * A pid no process can have (a hostile or damaged file: 0xffffffff would
 * make kill() signal every process) is dead too. */
int ring_proc_alive(uint32_t pid, uint64_t starttime)
{
	char state;
	uint64_t st;

	if (pid == 0 || pid >= (1u << LOCK_PID_BITS))
		return 0;
	if ((pid_t)pid == getpid())
		return 1;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	if (proc_stat(pid, &state, &st) < 0)
		return 1; /* exists but /proc is hidden: assume alive */
	if (state == 'Z' || state == 'X')
		return 0;
	return st == starttime; /* else: the pid names another process now */
}

/* This process's start time (proc_starttime(getpid())), read from /proc
 * once, and again after a fork. Threads that read it at once store the
 * same values; the pid is stored last, so whoever sees it sees the time
 * read for it. */
uint64_t ring_self_starttime(void)
{
	static _Atomic uint32_t pid_of;
	static _Atomic uint64_t st_of;
	uint32_t pid = (uint32_t)getpid();
	uint64_t st;

	if (atomic_load_explicit(&pid_of, memory_order_acquire) == pid)
		return atomic_load_explicit(&st_of, memory_order_relaxed);
	st = proc_starttime(pid);
	atomic_store_explicit(&st_of, st, memory_order_relaxed);
	atomic_store_explicit(&pid_of, pid, memory_order_release);
	return st;
}

/* This process's identity in lock words: (start time, pid). Computed
 * again after a fork. */
uint64_t ring_self_owner(void)
{
	static _Atomic uint64_t cached;
	uint32_t pid = (uint32_t)getpid();
	uint64_t o = atomic_load_explicit(&cached, memory_order_relaxed);

	if ((o & ((1u << LOCK_PID_BITS) - 1)) != pid) {
          uint64_t st =
              ring_self_starttime() & ((1ull << (64 - LOCK_PID_BITS)) - 1);
          o = st << LOCK_PID_BITS | pid;
          atomic_store_explicit(&cached, o, memory_order_relaxed);
	}
	return o;
}

int ring_owner_alive(uint64_t owner)
{
	uint32_t pid = (uint32_t)(owner & ((1u << LOCK_PID_BITS) - 1));

	if ((pid_t)pid == getpid())
          return owner == ring_self_owner(); /* a thread of ours holds it */
        return ring_proc_alive(pid, owner >> LOCK_PID_BITS);
}

/*
 * hdr->lock: a spin lock owned by a process, (start time, pid), held only
 * for short scans of the slot tables. A holder that died (or whose pid now
 * names another process) is taken over; a live holder that keeps it for
 * LOCK_GIVEUP_MS (stopped, or a hostile file) makes this fail with
 * -STRACE_E_BUSY instead of spinning forever.
 */
int ring_lock(struct ring_hdr *h)
{
	uint64_t me = ring_self_owner(), seen = 0, since = 0, checked = 0;

	for (unsigned spins = 0;; spins++) {
		uint64_t owner = 0;
		if (atomic_compare_exchange_weak_explicit(
			    &h->lock, &owner, me, memory_order_acquire,
			    memory_order_relaxed))
			return 0;
		if (spins < 1000) {
			cpu_relax();
			continue;
		}
		uint64_t t = now_ms();
		if (owner != seen) { /* a new holder: check it now */
			seen = owner;
			since = t;
			checked = 0;
		}
		if (owner && (!checked || t - checked >= LOCK_STEAL_MS)) {
			checked = t | 1;
			if (!ring_owner_alive(owner)) {
				/* The holder died holding it (or never
				 * lived): take it over. */
				if (atomic_compare_exchange_strong_explicit(
					    &h->lock, &owner, me,
					    memory_order_acquire,
					    memory_order_relaxed))
					return 0;
				continue;
			}
		}
		if (owner && t - since >= LOCK_GIVEUP_MS)
			return -STRACE_E_BUSY;
		if (spins < 2000)
			sched_yield();
		else
			usleep(1000);
	}
}

void ring_unlock(struct ring_hdr *h)
{
	atomic_store_explicit(&h->lock, 0, memory_order_release);
}
