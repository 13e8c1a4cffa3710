/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bench_baseline.c - the baseline ring styx-trace uses, rebuilt
 * in C: ipmpsc's SharedRingBuffer.
 *
 * As in ipmpsc 0.5 (src/lib.rs): a memory-mapped file holds a header with
 * ONE process-shared mutex and ONE condition variable, a read and a write
 * index, then a byte ring of length-prefixed messages. Every send takes the
 * mutex (wait while there is no room, copy the message in, advance write,
 * broadcast); every receive looks at the message without the lock
 * (zero-copy, like ipmpsc's recv_zero_copy) and then takes the mutex to
 * advance read and broadcast. A message that does not fit before the end
 * is preceded by a zero length and starts again at the beginning.
 *
 * The message is one 32-byte event, the payload styx-trace's
 * strace!(event) macro sends through it.
 *
 * usage: bench_baseline pipe|produce|consume N [RING_BYTES]
 *   pipe     sender and receiver in two processes at once
 *   produce  sender alone into an empty ring (reset between passes, not
 *            timed), like PRODUCE with nobody reading
 *   consume  receiver alone from a full ring (filled between passes, not
 *            timed), like CONSUME
 * prints: RESULT baseline_<what> <events> <seconds> <events/s>
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strace/event.h"

struct hdr {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic uint32_t read, write;
	uint32_t size; /* bytes of the data area */
};

#define BEGINNING 0u

struct shared_ring {
	struct hdr *h;
	unsigned char *data;
	size_t map_len;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int ring_create(const char *path, uint32_t size, struct shared_ring *r)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	r->map_len = 4096 + size;
	if (ftruncate(fd, (off_t)r->map_len) < 0) {
		close(fd);
		return -errno;
	}
	r->h = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    0);
	close(fd);
	if (r->h == MAP_FAILED)
		return -errno;
	r->data = (unsigned char *)r->h + 4096;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&r->h->lock, &ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&r->h->cond, &ca);
	r->h->size = size;
	atomic_store(&r->h->read, BEGINNING);
	atomic_store(&r->h->write, BEGINNING);
	return 0;
}

static void ring_send(struct shared_ring *r, const void *msg, uint32_t len)
{
	struct hdr *h = r->h;
	uint32_t need = 4 + len, write;

	pthread_mutex_lock(&h->lock);
	write = atomic_load(&h->write);
	for (;;) {
		uint32_t read = atomic_load(&h->read);
		if (write >= read) {
			if (write + need <= h->size)
				break;
			if (read != BEGINNING) {
				/* wrap: a zero length says "go to the start" */
				uint32_t zero = 0;
				if (write + 4 <= h->size)
					memcpy(r->data + write, &zero, 4);
				write = BEGINNING;
				atomic_store(&h->write, write);
				pthread_cond_broadcast(&h->cond);
				continue;
			}
		} else if (write + need < read) {
			break;
		}
		pthread_cond_wait(&h->cond, &h->lock);
	}
	memcpy(r->data + write, &len, 4);
	memcpy(r->data + write + 4, msg, len);
	atomic_store(&h->write, write + need);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* zero-copy receive: *msg points into the ring until ring_seek() */
static uint32_t ring_peek(struct shared_ring *r, const unsigned char **msg,
			  uint32_t *next)
{
	struct hdr *h = r->h;

	for (;;) {
		uint32_t read = atomic_load(&h->read);
		uint32_t write = atomic_load(&h->write);
		uint32_t len;

		if (read == write) {
			pthread_mutex_lock(&h->lock);
			while (atomic_load(&h->read) == atomic_load(&h->write))
				pthread_cond_wait(&h->cond, &h->lock);
			pthread_mutex_unlock(&h->lock);
			continue;
		}
		if (read + 4 <= h->size)
			memcpy(&len, r->data + read, 4);
		else
			len = 0;
		if (len) {
			*msg = r->data + read + 4;
			*next = read + 4 + len;
			return len;
		}
		/* wrapped */
		pthread_mutex_lock(&h->lock);
		atomic_store(&h->read, BEGINNING);
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
	}
}

static void ring_seek(struct shared_ring *r, uint32_t pos)
{
	pthread_mutex_lock(&r->h->lock);
	atomic_store(&r->h->read, pos);
	pthread_cond_broadcast(&r->h->cond);
	pthread_mutex_unlock(&r->h->lock);
}

static void reset(struct shared_ring *r)
{
	atomic_store(&r->h->read, BEGINNING);
	atomic_store(&r->h->write, BEGINNING);
}

/* messages that fit without wrapping (the sender would wait) */
static uint64_t fits(const struct shared_ring *r)
{
	return (r->h->size - 1) / (4 + sizeof(struct strace_event));
}

static int solo(struct shared_ring *r, uint64_t n, int consume)
{
	uint64_t per = fits(r), done = 0, sum = 0;
	double spent = 0;

	while (done < n) {
		uint64_t k = n - done < per ? n - done : per;
		double t0, t1;
		reset(r);
		if (consume) {
			for (uint64_t i = 0; i < k; i++) {
				struct strace_event e = {STRACE_EV_CALL, 0, 1,
							 i, i, i * 3};
				ring_send(r, &e, sizeof(e));
			}
		}
		t0 = now();
		for (uint64_t i = 0; i < k; i++) {
			if (consume) {
				const unsigned char *m;
				uint32_t next;
				struct strace_event e;
				ring_peek(r, &m, &next);
				memcpy(&e, m, sizeof(e));
				sum += e.a;
				ring_seek(r, next);
			} else {
				struct strace_event e = {STRACE_EV_CALL, 0, 1,
							 i, i, i * 3};
				ring_send(r, &e, sizeof(e));
			}
		}
		t1 = now();
		spent += t1 - t0;
		done += k;
	}
	printf("RESULT baseline_%s %" PRIu64 " %.6f %.0f\n",
	       consume ? "consume" : "produce", n, spent, (double)n / spent);
	return sum == 1; /* keeps sum alive; never 1 */
}

int main(int argc, char **argv)
{
	char path[64];
	struct shared_ring r = {0};
	const char *what = argc > 1 ? argv[1] : "";
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 10000000;
	uint32_t size = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0)
				 : 32u << 20;
	int fds[2], status, rc;
	pid_t pid;
	double t0, t1;
	char c;

	snprintf(path, sizeof(path), "/dev/shm/bench_baseline_%d.srb",
		 (int)getpid());
	rc = ring_create(path, size, &r);
	if (rc < 0) {
		fprintf(stderr, "bench_baseline: %s: cannot create: %s\n",
			path, strerror(-rc));
		return 1;
	}
	unlink(path); /* the mapping (shared with the child) stays */
	if (!strcmp(what, "produce") || !strcmp(what, "consume"))
		return solo(&r, n, !strcmp(what, "consume"));
	if (strcmp(what, "pipe")) {
		fprintf(stderr, "usage: bench_baseline pipe|produce|consume N "
				"[RING_BYTES]\n");
		return 2;
	}
	if (pipe(fds) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* receiver: check every message is the next event */
		uint64_t sum = 0;
		for (uint64_t i = 0; i < n; i++) {
			const unsigned char *m;
			uint32_t next, len = ring_peek(&r, &m, &next);
			struct strace_event e;
			memcpy(&e, m, sizeof(e));
			if (len != sizeof(e) || e.a != i) {
				fprintf(stderr,
					"bench_baseline: message %" PRIu64
					" is wrong\n",
					i);
				_exit(1);
			}
			sum += e.b;
			ring_seek(&r, next);
		}
		c = (char)(sum & 1);
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		struct strace_event e = {STRACE_EV_CALL, 0, 1, i, i, i * 3};
		ring_send(&r, &e, sizeof(e));
	}
	if (read(fds[0], &c, 1) != 1)
		return 1;
	t1 = now();
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("RESULT baseline_pipe %" PRIu64 " %.6f %.0f\n", n, t1 - t0,
	       (double)n / (t1 - t0));
	return 0;
}
