/* SPDX-License-Identifier: MIT */
/* tests/unit/test_ring.c - the shared ring: modes, processes, faults. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness.h"
#include "strace/ring.h"
#include "events/ring_layout.h"

static char dir[256];

static const char *tpath(const char *name)
{
	static char buf[8][512];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static struct strace_ring *mk(const char *name, uint64_t cap, int mode)
{
	struct strace_ring_opts o = {sizeof(o), cap, 1 << 16, mode, 0, 0};
	struct strace_ring *r = NULL;
	unlink(tpath(name));
	int rc = strace_ring_create(tpath(name), &o, &r);
	if (rc < 0)
		fprintf(stderr, "  create %s: %s\n", name, strace_strerror(rc));
	return r;
}

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read everything until the stream ends; calls fn per event. */
static int drain(struct strace_reader *rd, int timeout_ms,
		 void (*fn)(const struct strace_event *, uint64_t, void *),
		 void *arg, uint64_t *lost)
{
	struct strace_batch b;
	uint64_t t0 = ms_now();
	for (;;) {
		long n = strace_reader_next(rd, &b, 0, 100);
		if (lost)
			*lost += b.lost;
		if (n > 0) {
			for (long i = 0; i < n; i++)
				fn(&b.ev[i], b.seq + (uint64_t)i, arg);
			size_t bad = strace_reader_release(rd, &b);
			if (lost)
				*lost += bad;
			t0 = ms_now();
			continue;
		}
		int st = strace_reader_status(rd);
		if (st != STRACE_READER_LIVE)
			return st;
		if (ms_now() - t0 > (uint64_t)timeout_ms)
			return -ETIMEDOUT;
	}
}

struct seqcheck {
	uint64_t count, bad, pads, lostmark;
	uint64_t next_a;
};

static void check_seq(const struct strace_event *e, uint64_t seq, void *arg)
{
	struct seqcheck *c = arg;
	(void)seq;
	if (e->type == STRACE_EV_PAD) {
		c->pads++;
		return;
	}
	if (e->type == STRACE_EV_LOST) {
		c->lostmark += e->a;
		c->next_a += e->a;
		return;
	}
	if (e->a != c->next_a)
		c->bad++;
	c->next_a = e->a + 1;
	c->count++;
}

TEST(basic_roundtrip)
{
	struct strace_ring *r = mk("basic", 1024, STRACE_RING_LOSSLESS);
	struct strace_writer *w;
	struct strace_reader *rd;
	REQUIRE(r);
	REQUIRE(strace_writer_open(r, &w) == 0);
	for (uint64_t i = 0; i < 1000; i++)
		CHECK_INT(strace_writer_emit(w, STRACE_EV_CALL, 1, 7, i, i,
					     i * 2),
			  ==, 0);
	CHECK_INT(strace_writer_close(w), ==, 0);
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	struct seqcheck c = {0};
	CHECK_INT(drain(rd, 2000, check_seq, &c, NULL), ==, STRACE_READER_END);
	CHECK_U64(c.count, ==, 1000);
	CHECK_U64(c.bad, ==, 0);
	strace_reader_close(rd);

	struct strace_ring_stat st;
	CHECK_INT(strace_ring_stat(r, &st), ==, 0);
	CHECK_U64(st.committed, ==, 1000);
	CHECK_INT(st.closed, ==, 1);
	strace_ring_close(r);
}

TEST(strings)
{
	struct strace_ring *r = mk("strings", 1024, STRACE_RING_LOSSLESS);
	uint64_t off[100];
	REQUIRE(r);
	for (int i = 0; i < 100; i++) {
		char name[32];
		int n = snprintf(name, sizeof(name), "func_%d", i);
		CHECK_INT(strace_ring_add_string(r, STRACE_EV_SYMBOL,
						 0x1000u + (unsigned)i * 16, 16,
						 name, (size_t)n, &off[i]),
			  ==, 0);
	}
	struct strace_string s;
	REQUIRE(strace_ring_string(r, off[42], &s) == 0);
	CHECK_STR(s.str, "func_42");
	CHECK_U64(s.key, ==, 0x1000 + 42 * 16);
	CHECK_INT(s.kind, ==, STRACE_EV_SYMBOL);
	/* Offsets that are not entries are refused, never followed. */
	CHECK_INT(strace_ring_string(r, off[42] + 8, &s), ==, -STRACE_E_CORRUPT);
	CHECK_INT(strace_ring_string(r, 1ull << 40, &s), ==, -STRACE_E_CORRUPT);
	CHECK_INT(strace_ring_string(r, 3, &s), ==, -STRACE_E_CORRUPT);
	uint64_t it = 0;
	int n = 0;
	while (strace_ring_string_next(r, &it, &s) > 0)
		n++;
	CHECK_INT(n, ==, 100);
	/* Fill the table: a clean -STRACE_E_FULL, not an overflow. */
	char big[4096];
	memset(big, 'x', sizeof(big));
	int rc = 0;
	for (int i = 0; i < 100 && rc == 0; i++)
		rc = strace_ring_add_string(r, STRACE_EV_DSO, 0, 0, big,
					    sizeof(big), NULL);
	CHECK_INT(rc, ==, -STRACE_E_FULL);

	/* Saving: the copied table keeps offsets valid. */
	struct strace_ring *a = mk("strings.arch", 64, STRACE_RING_ARCHIVE);
	REQUIRE(a);
	CHECK_INT(strace_ring_sync_strings(a, r), ==, 0);
	REQUIRE(strace_ring_string(a, off[99], &s) == 0);
	CHECK_STR(s.str, "func_99");
	strace_ring_close(a);
	strace_ring_close(r);
}

/* The string table's pages come as it fills (the default table is 16
 * MiB; a ring that names a few symbols should not pay for all of it),
 * and all of it is usable. */
TEST(strings_backed_as_they_fill)
{
	struct strace_ring_opts o = {sizeof(o), 1024, 1 << 20,
				     STRACE_RING_FLIGHT, 0, 0};
	struct strace_ring *r = NULL;
	struct stat st;
	char big[4000];
	uint64_t off = 0, first = 0;
	int rc = 0, n = 0;

	unlink(tpath("strings.lazy"));
	REQUIRE(strace_ring_create(tpath("strings.lazy"), &o, &r) == 0);
	REQUIRE(stat(tpath("strings.lazy"), &st) == 0);
	/* header, the first 64 KiB of strings, 32 KiB of events */
	CHECK_INT((long long)st.st_blocks * 512, <, 512 << 10);
	memset(big, 'y', sizeof(big));
	while (rc == 0) {
		rc = strace_ring_add_string(r, STRACE_EV_DSO, (uint64_t)n, 0,
					    big, sizeof(big), &off);
		if (rc == 0 && n++ == 0)
			first = off;
	}
	CHECK_INT(rc, ==, -STRACE_E_FULL);
	CHECK_INT(n, >=, (1 << 20) / 4032 - 1);
	REQUIRE(stat(tpath("strings.lazy"), &st) == 0);
	CHECK_INT((long long)st.st_blocks * 512, >=, 1 << 20);
	struct strace_string s;
	CHECK_INT(strace_ring_string(r, off, &s), ==, 0);
	CHECK_U64(s.key, ==, (uint64_t)n - 1);
	CHECK_INT(strace_ring_string(r, first, &s), ==, 0);
	strace_ring_close(r);
	unlink(tpath("strings.lazy"));
}

static int stop_after(void *arg)
{
	uint64_t *deadline = arg;
	return ms_now() >= *deadline;
}

/* A reader of the ring name in a child: every one of n events, in order,
 * from the first; exits 0 when so. */
static pid_t held_reader(const char *name, uint64_t n)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct strace_ring *r2;
		struct strace_reader *rd;
		if (strace_ring_open(tpath(name), &r2) < 0 ||
		    strace_reader_open(r2, 0, &rd) < 0)
			_exit(2);
		struct seqcheck c = {0};
		int st = drain(rd, 5000, check_seq, &c, NULL);
		_exit(st == STRACE_READER_END && c.count == n && !c.bad &&
		      !c.lostmark ? 0 : 1);
	}
	return pid;
}

/* Events 0, 1, ... into the lossless ring of 256 of w until a wait for
 * room has lasted ms: nothing beyond the capacity may be accepted
 * meanwhile. Returns the first event not written. */
static uint64_t write_until_full(struct strace_writer *w, int ms)
{
	uint64_t deadline = ms_now() + (uint64_t)ms, i;
	int rc = 0;

	strace_writer_set_stop(w, stop_after, &deadline);
	for (i = 0; i < 5000 && rc == 0; i++)
		rc = strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, 0);
	CHECK_INT(rc, ==, -STRACE_E_STOPPED);
	CHECK_U64(i, <=, 256 + 256 + 1);
	strace_writer_set_stop(w, NULL, NULL);
	return i - 1; /* the stopped emit's event was not buffered */
}

/* The rest of the 5000 events from i, then the writer closed. */
static void write_rest(struct strace_writer *w, uint64_t i)
{
	for (; i < 5000; i++)
		CHECK_INT(strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, 0),
			  ==, 0);
	CHECK_INT(strace_writer_close(w), ==, 0);
}

/* Whether the child reader pid read what held_reader() asks. */
static int reader_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

/* Lossless with no reader: the writer waits; a late reader gets all. */
TEST(lossless_holds_until_reader)
{
	struct strace_ring *r = mk("hold", 256, STRACE_RING_LOSSLESS);
	struct strace_writer *w;
	REQUIRE(r);
	REQUIRE(strace_writer_open(r, &w) == 0);
	uint64_t i = write_until_full(w, 200);
	pid_t pid = held_reader("hold", 5000);
	REQUIRE(pid > 0);
	write_rest(w, i);
	CHECK(reader_ok(pid));
	strace_ring_close(r);
}

/* Held for two readers (ptrace-capture --wait-readers 2 on a recording):
 * the writer starts at once; with one reader attached, and reading, it
 * still keeps every event from the first (nothing beyond the capacity is
 * accepted), so that the second, which comes later, gets them all too. */
TEST(lossless_held_for_two_readers)
{
	struct strace_ring *r = mk("hold2", 256, STRACE_RING_LOSSLESS);
	struct strace_writer *w;
	REQUIRE(r);
	strace_ring_hold_for_readers(r, 2);
	REQUIRE(strace_writer_open(r, &w) == 0);
	pid_t first = held_reader("hold2", 5000);
	REQUIRE(first > 0);
	CHECK_INT(strace_ring_wait_readers(r, 1, 5000), ==, 0);
	uint64_t i = write_until_full(w, 300);
	pid_t second = held_reader("hold2", 5000);
	REQUIRE(second > 0);
	write_rest(w, i);
	CHECK(reader_ok(first));
	CHECK(reader_ok(second));
	strace_ring_close(r);
}

/* 4 producer threads in each of 2 processes, 3 reader processes. */
#define MP_THREADS 4
#define MP_PROCS 2
#define MP_EVENTS 200000

static struct strace_ring *mp_ring;
static void *mp_thread(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct strace_writer *w;
	if (strace_writer_open(mp_ring, &w) < 0)
		return (void *)1;
	for (uint64_t i = 0; i < MP_EVENTS; i++)
		if (strace_writer_emit(w, STRACE_EV_CALL, 0, id, 0, i, id) < 0)
			return (void *)1;
	return (void *)(intptr_t)strace_writer_close(w);
}

struct mp_state {
	uint64_t next[MP_PROCS * MP_THREADS];
	uint64_t bad, total;
};

static void mp_check(const struct strace_event *e, uint64_t seq, void *arg)
{
	struct mp_state *s = arg;
	(void)seq;
	if (e->tid >= MP_PROCS * MP_THREADS || e->a != s->next[e->tid]) {
		s->bad++;
		return;
	}
	s->next[e->tid]++;
	s->total++;
}

TEST(multi_producer_multi_reader)
{
	struct strace_ring *r = mk("mp", 1 << 14, STRACE_RING_LOSSLESS);
	pid_t readers[3], writers[MP_PROCS];
	REQUIRE(r);
	for (int k = 0; k < 3; k++) {
		readers[k] = fork();
		if (readers[k] == 0) {
			struct strace_ring *r2;
			struct strace_reader *rd;
			if (strace_ring_open(tpath("mp"), &r2) < 0 ||
			    strace_reader_open(r2, 0, &rd) < 0)
				_exit(2);
			struct mp_state s;
			memset(&s, 0, sizeof(s));
			int st = drain(rd, 20000, mp_check, &s, NULL);
			int ok = st == STRACE_READER_END && s.bad == 0 &&
				 s.total == (uint64_t)MP_PROCS * MP_THREADS *
						    MP_EVENTS;
			if (!ok)
				fprintf(stderr,
					"  reader %d: status %d bad %llu total "
					"%llu\n",
					k, st, (unsigned long long)s.bad,
					(unsigned long long)s.total);
			_exit(ok ? 0 : 1);
		}
	}
	CHECK_INT(strace_ring_wait_readers(r, 3, 5000), ==, 0);
	/* Readers see the end when every writer that opened has closed: on
	 * a loaded machine one process's writers may all finish before the
	 * next one's open. The writers here are one producer: it holds a
	 * writer open across them (as strace/ring.h asks). */
	struct strace_writer *hold = NULL;
	CHECK_INT(strace_writer_open(r, &hold), ==, 0);
	for (int p = 0; p < MP_PROCS; p++) {
		writers[p] = fork();
		if (writers[p] == 0) {
			pthread_t th[MP_THREADS];
			if (strace_ring_open(tpath("mp"), &mp_ring) < 0)
				_exit(2);
			for (int t = 0; t < MP_THREADS; t++)
				pthread_create(&th[t], NULL, mp_thread,
					       (void *)(uintptr_t)(p * MP_THREADS +
								   t));
			int bad = 0;
			for (int t = 0; t < MP_THREADS; t++) {
				void *ret;
				pthread_join(th[t], &ret);
				bad |= ret != NULL;
			}
			_exit(bad);
		}
	}
	for (int p = 0; p < MP_PROCS; p++) {
		int status;
		waitpid(writers[p], &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK_INT(strace_writer_close(hold), ==, 0);
	for (int k = 0; k < 3; k++) {
		int status;
		waitpid(readers[k], &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	strace_ring_close(r);
}

/* Flight recorder: a slow reader's reported loss is the true loss. */
TEST(flight_recorder_counts_losses)
{
	struct strace_ring *r = mk("flight", 1024, STRACE_RING_FLIGHT);
	REQUIRE(r);
	const uint64_t N = 2000000;
	/* Attached before the writer starts: a reader that attaches later
	 * starts at the oldest event kept, and what was overwritten before
	 * is no loss of its (a loaded machine made got + lost short). */
	struct strace_reader *rd;
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct strace_writer *w;
		if (strace_writer_open(r, &w) < 0)
			_exit(2);
		for (uint64_t i = 0; i < N; i++)
			strace_writer_emit(w, STRACE_EV_JUMP, 0, 1, 0, i, 0);
		_exit(strace_writer_close(w) < 0);
	}
	struct strace_batch b;
	uint64_t got = 0, lost = 0, bad = 0, expect = 0;
	struct strace_event copy[64];
	for (;;) {
		/* Copy, then validate: the way to read a flight ring. */
		long n = strace_reader_next(rd, &b, 64, 100);
		lost += b.lost;
		expect += b.lost;
		if (n <= 0) {
			if (strace_reader_status(rd) != STRACE_READER_LIVE)
				break;
			continue;
		}
		memcpy(copy, b.ev, (size_t)n * sizeof(copy[0]));
		size_t torn = strace_reader_release(rd, &b);
		lost += torn;
		for (long i = (long)torn; i < n; i++) {
			if (copy[i].a != b.seq + (uint64_t)i)
				bad++;
			got++;
		}
		expect = b.seq + (uint64_t)n;
		/* Be slow now and then so that the writer laps us. */
		if ((got & 0xfff) < 64)
			usleep(50);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_U64(bad, ==, 0);
	CHECK_U64(got + lost, ==, N);
	CHECK_U64(strace_reader_lost(rd), ==, lost);
	CHECK_U64(lost, >, 0); /* the test must really exercise losses */
	(void)expect;
	strace_reader_close(rd);
	strace_ring_close(r);
}

struct tapped {
	uint64_t n, bad, calls;
};

static void count_tap(void *arg, const struct strace_event *ev, size_t n)
{
	struct tapped *t = arg;
	for (size_t i = 0; i < n; i++)
		t->bad += ev[i].a != t->n + i;
	t->n += n;
	t->calls++;
}

/* A ring of opts.tap_only: every event reaches the tap once, in order,
 * in batches as big as an archive's; none is stored (readers see
 * nothing, the positions stay 0) and the least capacity is taken. */
TEST(tap_only_stores_nothing)
{
	struct strace_ring_opts o = {sizeof(o), 0, 1 << 16, STRACE_RING_FLIGHT,
				     0, 1};
	struct strace_ring *r = NULL;
	unlink(tpath("taponly"));
	REQUIRE(strace_ring_create(tpath("taponly"), &o, &r) == 0);
	struct tapped t = {0};
	strace_ring_set_tap(r, count_tap, &t);
	struct strace_writer *w;
	REQUIRE(strace_writer_open(r, &w) == 0);
	for (uint64_t i = 0; i < 100000; i++)
		CHECK_INT(strace_writer_emit(w, STRACE_EV_JUMP, 0, 1, 0, i, 0),
			  ==, 0);
	CHECK_INT(strace_writer_close(w), ==, 0);
	CHECK_U64(t.n, ==, 100000);
	CHECK_U64(t.bad, ==, 0);
	CHECK_U64(t.calls, <=, 100000 / 2048 + 1);
	struct strace_ring_stat st;
	CHECK_INT(strace_ring_stat(r, &st), ==, 0);
	CHECK_U64(st.committed, ==, 0);
	CHECK_U64(st.capacity, ==, STRACE_RING_MIN_CAPACITY);
	struct strace_reader *rd;
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	struct strace_batch b;
	CHECK_INT(strace_reader_next(rd, &b, 0, 10), ==, 0);
	CHECK_INT(strace_reader_status(rd), ==, STRACE_READER_END);
	strace_reader_close(rd);
	strace_ring_close(r);
	unlink(tpath("taponly"));
}

/* A writer killed mid-stream: readers get everything committed, then a
 * clean "writer gone". */
TEST(writer_killed)
{
	struct strace_ring *r = mk("wkill", 4096, STRACE_RING_LOSSLESS);
	REQUIRE(r);
	struct strace_reader *rd;
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct strace_writer *w;
		if (strace_writer_open(r, &w) < 0)
			_exit(2);
		for (uint64_t i = 0;; i++)
			strace_writer_emit(w, STRACE_EV_CALL, 0, 1, 0, i, 0);
	}
	struct seqcheck c = {0};
	struct strace_batch b;
	while (c.count < 300000) {
		long n = strace_reader_next(rd, &b, 0, 1000);
		for (long i = 0; i < n; i++)
			check_seq(&b.ev[i], 0, &c);
		strace_reader_release(rd, &b);
		if (n <= 0)
			break;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	uint64_t t0 = ms_now();
	int st = drain(rd, 5000, check_seq, &c, NULL);
	CHECK_INT(st, ==, STRACE_READER_WRITER_GONE);
	CHECK_U64(ms_now() - t0, <, 3000);
	CHECK_U64(c.bad, ==, 0);
	CHECK_U64(c.count, >=, 300000);
	/* Every position was delivered or marked: committed == reserved. */
	struct strace_ring_stat s;
	strace_ring_stat(r, &s);
	CHECK_U64(s.committed, ==, s.reserved);
	CHECK_INT(s.writers_dead, ==, 1);
	strace_reader_close(rd);
	strace_ring_close(r);
}

/* A writer that dies between reserving and committing does not wedge the
 * writers behind it: its range becomes a LOST marker. The child leaves the
 * header exactly as a crash at that point would (see ring_layout.h). */
TEST(writer_dies_holding_range)
{
	struct strace_ring *r = mk("whold", 4096, STRACE_RING_LOSSLESS);
	REQUIRE(r);
	struct strace_writer *w;
	REQUIRE(strace_writer_open(r, &w) == 0);
	for (uint64_t i = 0; i < 10; i++)
		strace_writer_emit(w, STRACE_EV_CALL, 0, 1, 0, i, 0);
	REQUIRE(strace_writer_flush(w) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(tpath("whold"), O_RDWR);
		void *m = mmap(NULL, RING_HDR_SIZE, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(2);
		struct ring_hdr *h = m;
		struct ring_wslot *s = &h->writers[STRACE_RING_MAX_WRITERS - 1];
		s->pid = (uint32_t)getpid();
		s->starttime = 0;
		uint64_t start = atomic_load(&h->reserved);
		atomic_store(&s->flight, FLIGHT_RESERVING);
		atomic_store(&s->flight_start, start);
		atomic_store(&s->flight_end, start + 7);
		atomic_store(&s->state, SLOT_LIVE);
		atomic_fetch_add(&h->writers_opened, 1);
		atomic_store(&h->reserved, start + 7);
		atomic_store(&s->flight, FLIGHT_RESERVED);
		_exit(0); /* dies without committing */
	}
	waitpid(pid, NULL, 0);
	uint64_t t0 = ms_now();
	for (uint64_t i = 17; i < 30; i++)
		strace_writer_emit(w, STRACE_EV_CALL, 0, 1, 0, i, 0);
	CHECK_INT(strace_writer_close(w), ==, 0);
	CHECK_U64(ms_now() - t0, <, 1500);
	struct strace_reader *rd;
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	struct seqcheck c = {0};
	CHECK_INT(drain(rd, 3000, check_seq, &c, NULL), ==,
		  STRACE_READER_WRITER_GONE);
	CHECK_U64(c.count, ==, 23);
	CHECK_U64(c.lostmark, ==, 7);
	CHECK_U64(c.pads, ==, 6);
	CHECK_U64(c.bad, ==, 0);
	strace_reader_close(rd);
	strace_ring_close(r);
}

struct killer {
	pid_t pid;
	uint64_t at;
};

static void *kill_later(void *arg)
{
	struct killer *k = arg;
	usleep(300000);
	k->at = ms_now();
	kill(k->pid, SIGKILL);
	return NULL;
}

/* A reader killed while a lossless writer waits for it: the writer goes
 * on within a second. */
TEST(reader_killed)
{
	struct strace_ring *r = mk("rkill", 1024, STRACE_RING_LOSSLESS);
	REQUIRE(r);
	pid_t pid = fork();
	if (pid == 0) {
		struct strace_ring *r2;
		struct strace_reader *rd;
		if (strace_ring_open(tpath("rkill"), &r2) < 0 ||
		    strace_reader_open(r2, 0, &rd) < 0)
			_exit(2);
		pause(); /* attached, reads nothing */
		_exit(0);
	}
	CHECK_INT(strace_ring_wait_readers(r, 1, 5000), ==, 0);
	struct strace_writer *w;
	REQUIRE(strace_writer_open(r, &w) == 0);
	struct killer k = {pid, 0};
	pthread_t th;
	pthread_create(&th, NULL, kill_later, &k);
	for (uint64_t i = 0; i < 100000; i++)
		CHECK_INT(strace_writer_emit(w, STRACE_EV_CALL, 0, 1, 0, i, 0),
			  ==, 0);
	CHECK_INT(strace_writer_close(w), ==, 0);
	uint64_t done = ms_now();
	pthread_join(th, NULL);
	waitpid(pid, NULL, 0);
	/* The writer was blocked until the kill, and went on soon after. */
	CHECK(k.at != 0);
	CHECK_U64(done, >=, k.at);
	CHECK_U64(done - k.at, <, 1000);
	strace_ring_close(r);
}

TEST(archive_grows)
{
	struct strace_ring *r = mk("arch", 64, STRACE_RING_ARCHIVE);
	struct strace_writer *w;
	REQUIRE(r);
	REQUIRE(strace_writer_open(r, &w) == 0);
	for (uint64_t i = 0; i < 100000; i++)
		strace_writer_emit(w, STRACE_EV_RETURN, 0, 3, i, i, 0);
	CHECK_INT(strace_writer_close(w), ==, 0);
	strace_ring_close(r);
	REQUIRE(strace_ring_open(tpath("arch"), &r) == 0);
	struct strace_reader *rd;
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	struct seqcheck c = {0};
	CHECK_INT(drain(rd, 2000, check_seq, &c, NULL), ==, STRACE_READER_END);
	CHECK_U64(c.count, ==, 100000);
	CHECK_U64(c.bad, ==, 0);
	strace_reader_close(rd);
	strace_ring_close(r);
}

/*
 * An archive on a file system that fills up (a 512 KiB tmpfs, mounted
 * here: root only): the writer gets -ENOSPC, not SIGBUS, and the ring
 * reads to its end - every event written, in order, then the loss.
 */
TEST(archive_full_filesystem)
{
	char mnt[] = "/tmp/test_ring_full.XXXXXX", path[64];
	struct strace_ring_opts o = {sizeof(o), 4096, 4096,
				     STRACE_RING_ARCHIVE, 0, 0};
	struct strace_ring *r = NULL;
	struct strace_writer *w;
	int rc = 0;
	uint64_t i;

	REQUIRE(mkdtemp(mnt));
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=512k") < 0) {
		rmdir(mnt);
		SKIP("mounting a small tmpfs needs root");
	}
	snprintf(path, sizeof(path), "%s/r.srb", mnt);
	if (strace_ring_create(path, &o, &r) == 0 &&
	    strace_writer_open(r, &w) == 0) {
		for (i = 0; i < 100000 && rc == 0; i++)
			rc = strace_writer_emit(w, STRACE_EV_RETURN, 0, 3, i, i,
						0);
		CHECK_INT(rc, ==, -ENOSPC);
		strace_writer_close(w);
		strace_ring_close(r);
		r = NULL;
		REQUIRE(strace_ring_open(path, &r) == 0);
		struct strace_reader *rd;
		REQUIRE(strace_reader_open(r, 0, &rd) == 0);
		struct seqcheck c = {0};
		CHECK_INT(drain(rd, 2000, check_seq, &c, NULL), ==,
			  STRACE_READER_END);
		CHECK_U64(c.bad, ==, 0);
		CHECK(c.count > 4096 && c.count < i); /* it grew, then filled */
		strace_reader_close(rd);
	} else {
		CHECK(!"an archive ring on the small tmpfs");
	}
	strace_ring_close(r);
	unlink(path);
	CHECK_INT(umount2(mnt, MNT_DETACH), ==, 0);
	rmdir(mnt);
}

/* The header as it is in the file now. */
static int read_header(const char *name, struct ring_hdr *h)
{
	int fd = open(tpath(name), O_RDONLY);
	ssize_t n = fd < 0 ? -1 : pread(fd, h, sizeof(*h), 0);
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(*h) ? 0 : -1;
}

/*
 * Capacities of 64 and 128 events, two writer processes each: a writer's
 * batch used to be 256 events whatever the capacity, so its wrap copy
 * wrote kilobytes past the mapping (SIGSEGV, or the header overwritten),
 * and a lossless batch never fitted (a wait forever).
 */
TEST(small_capacities)
{
	static const uint64_t caps[] = {64, 128};
	static const int modes[] = {STRACE_RING_LOSSLESS, STRACE_RING_FLIGHT};
	const uint64_t N = 20000;

	for (int ci = 0; ci < 2; ci++) {
		for (int mi = 0; mi < 2; mi++) {
			struct strace_ring *r = mk("small", caps[ci], modes[mi]);
			struct strace_reader *rd = NULL;
			pid_t kid[2];
			int opened[2];
			char c2[2];
			REQUIRE(r);
			REQUIRE(pipe(opened) == 0);
			if (modes[mi] == STRACE_RING_LOSSLESS)
				REQUIRE(strace_reader_open(r, 0, &rd) == 0);
			for (int k = 0; k < 2; k++) {
				kid[k] = fork();
				if (kid[k] == 0) {
					struct strace_ring *r2;
					struct strace_writer *w;
					if (strace_ring_open(tpath("small"), &r2) < 0 ||
					    strace_writer_open(r2, &w) < 0)
						_exit(2);
					/* attached: the reader may go (a ring
					 * whose every writer so far closed is
					 * at its end, and one writer may be
					 * done before the other starts) */
					if (write(opened[1], "o", 1) != 1)
						_exit(5);
					for (uint64_t i = 0; i < N; i++)
						if (strace_writer_emit(
							    w, STRACE_EV_CALL, 0,
							    (uint32_t)k, i, i,
							    ~i) < 0)
							_exit(3);
					_exit(strace_writer_close(w) < 0 ? 4 : 0);
				}
			}
			uint64_t got[2] = {0, 0}, bad = 0;
			close(opened[1]);
			/* both writers attached (or one failed: then EOF) */
			for (size_t have = 0; have < 2;) {
				ssize_t n = read(opened[0], c2, 2 - have);
				if (n <= 0)
					break;
				have += (size_t)n;
			}
			close(opened[0]);
			if (rd) { /* lossless: every event of both, in order */
				struct strace_batch b;
				uint64_t t0 = ms_now();
				while (ms_now() - t0 < 20000) {
					long n = strace_reader_next(rd, &b, 0, 100);
					for (long i = 0; i < n; i++) {
						const struct strace_event *e = &b.ev[i];
						if (e->tid > 1 || e->a != got[e->tid] ||
						    e->b != ~e->a)
							bad++;
						else
							got[e->tid]++;
					}
					if (n > 0)
						strace_reader_release(rd, &b);
					else if (strace_reader_status(rd) !=
						 STRACE_READER_LIVE)
						break;
				}
				CHECK_U64(got[0], ==, N);
				CHECK_U64(got[1], ==, N);
				CHECK_U64(bad, ==, 0);
				strace_reader_close(rd);
			}
			for (int k = 0; k < 2; k++) {
				int status;
				waitpid(kid[k], &status, 0);
				CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			}
			struct ring_hdr h;
			REQUIRE(read_header("small", &h) == 0);
			CHECK(memcmp(h.magic, STRACE_RING_MAGIC, 8) == 0);
			CHECK_U64(h.capacity, ==, caps[ci]);
			CHECK_U64(h.committed, ==, 2 * N);
			strace_ring_close(r);
		}
	}
}

/*
 * A reader following an archive while it grows, from 64 slots to 512 Ki:
 * every event once, in order, no loss reported; and a batch taken at the
 * start still reads right at the end (the mapping it points into stays).
 * It used to read stale slots through its old capacity, or report losses.
 */
struct follow_arg {
	struct strace_ring *ring;
	uint64_t n;
};

static void *archive_writer(void *arg)
{
	struct follow_arg *fa = arg;
	struct strace_writer *w;
	if (strace_writer_open(fa->ring, &w) < 0)
		return (void *)1;
	for (uint64_t i = 0; i < fa->n; i++)
		if (strace_writer_emit(w, STRACE_EV_RETURN, 0, 3, i, i, ~i) < 0)
			return (void *)1;
	return strace_writer_close(w) < 0 ? (void *)1 : NULL;
}

TEST(archive_followed_while_it_grows)
{
	struct strace_ring_opts o = {sizeof(o), 64, 4096, STRACE_RING_ARCHIVE, 0, 0};
	struct follow_arg fa = {NULL, 1 << 19};
	struct strace_reader *rd;
	struct strace_batch b, first = {0};
	pthread_t th;
	uint64_t next = 0, bad = 0, lost = 0;

	unlink(tpath("follow"));
	REQUIRE(strace_ring_create(tpath("follow"), &o, &fa.ring) == 0);
	REQUIRE(strace_reader_open(fa.ring, 0, &rd) == 0);
	REQUIRE(pthread_create(&th, NULL, archive_writer, &fa) == 0);
	uint64_t t0 = ms_now();
	while (ms_now() - t0 < 20000) {
		long n = strace_reader_next(rd, &b, 1000, 100);
		lost += b.lost;
		if (n < 0) {
			CHECK_INT(n, ==, 0);
			break;
		}
		if (n == 0) {
			if (strace_reader_status(rd) != STRACE_READER_LIVE)
				break;
			continue;
		}
		if (!first.n)
			first = b;
		for (long i = 0; i < n; i++, next++)
			if (b.seq + (uint64_t)i != next || b.ev[i].a != next ||
			    b.ev[i].b != ~next)
				bad++;
		lost += strace_reader_release(rd, &b);
	}
	void *ret;
	pthread_join(th, &ret);
	CHECK(ret == NULL);
	CHECK_U64(next, ==, fa.n);
	CHECK_U64(bad, ==, 0);
	CHECK_U64(lost, ==, 0);
	REQUIRE(first.n);
	for (size_t i = 0; i < first.n; i++)
		if (first.ev[i].a != first.seq + i)
			bad++;
	CHECK_U64(bad, ==, 0);
	strace_reader_close(rd);
	strace_ring_close(fa.ring);
}

static int write_file(const char *path, const void *data, size_t len)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static int open_err(const char *path)
{
	struct strace_ring *r = NULL;
	int rc = strace_ring_open(path, &r);
	strace_ring_close(r);
	return rc;
}

TEST(bad_files)
{
	struct strace_ring *r = mk("good", 64, STRACE_RING_LOSSLESS);
	REQUIRE(r);
	strace_ring_close(r);
	int fd = open(tpath("good"), O_RDONLY);
	REQUIRE(fd >= 0);
	struct stat st;
	fstat(fd, &st);
	size_t len = (size_t)st.st_size;
	uint8_t *good = malloc(len), *buf = malloc(len);
	REQUIRE(good && buf);
	CHECK_INT(read(fd, good, len), ==, (long long)len);
	close(fd);

	CHECK_INT(open_err(tpath("good")), ==, 0);
	CHECK_INT(open_err(tpath("missing")), ==, -ENOENT);
	write_file(tpath("empty"), "", 0);
	CHECK_INT(open_err(tpath("empty")), ==, -STRACE_E_TRUNCATED);
	write_file(tpath("trunc"), good, 100);
	CHECK_INT(open_err(tpath("trunc")), ==, -STRACE_E_TRUNCATED);
	write_file(tpath("trunc2"), good, len - 32);
	CHECK_INT(open_err(tpath("trunc2")), ==, -STRACE_E_TRUNCATED);
	memcpy(buf, good, len);
	memcpy(buf, "NOTARING", 8);
	write_file(tpath("magic"), buf, len);
	CHECK_INT(open_err(tpath("magic")), ==, -STRACE_E_MAGIC);
	memcpy(buf, good, len);
	buf[8] = 99; /* version */
	write_file(tpath("version"), buf, len);
	CHECK_INT(open_err(tpath("version")), ==, -STRACE_E_VERSION);

	/* Every header field out of range, one at a time. */
	static const struct {
		size_t off, size;
		uint64_t val;
	} fields[] = {
		{12, 4, 4096},      /* header_size */
		{16, 4, 24},        /* event_size */
		{20, 4, 7},         /* mode */
		{24, 8, 1000},      /* capacity, not a power of two */
		{24, 8, 1ull << 40}, /* capacity, too large for the file */
		{24, 8, 0},         /* capacity zero */
		{32, 8, 12},        /* strings_offset */
		{40, 8, 4095},      /* strings_size */
		{48, 8, 1ull << 62}, /* events_offset */
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		memcpy(buf, good, len);
		memcpy(buf + fields[i].off, &fields[i].val, fields[i].size);
		write_file(tpath("field"), buf, len);
		int rc = open_err(tpath("field"));
		if (rc != -STRACE_E_CORRUPT && rc != -STRACE_E_TRUNCATED)
			fprintf(stderr, "  field %zu: %d\n", i, rc);
		CHECK(rc == -STRACE_E_CORRUPT || rc == -STRACE_E_TRUNCATED);
	}
	/* Random bytes: an error, never a crash. */
	srand(1);
	for (int k = 0; k < 20; k++) {
		for (size_t i = 0; i < 20000 && i < len; i++)
			buf[i] = (uint8_t)rand();
		write_file(tpath("random"), buf, len);
		CHECK_INT(open_err(tpath("random")), <, 0);
	}
	/* Hostile live counters in a valid layout: reading stays in bounds. */
	memcpy(buf, good, len);
	uint64_t huge = UINT64_MAX - 5;
	memcpy(buf + offsetof(struct ring_hdr, committed), &huge, 8);
	write_file(tpath("counters"), buf, len);
	struct strace_ring *hr;
	if (strace_ring_open(tpath("counters"), &hr) == 0) {
		struct strace_reader *rd;
		if (strace_reader_open(hr, 0, &rd) == 0) {
			struct strace_batch b;
			long n = strace_reader_next(rd, &b, 0, 0);
			CHECK_INT(n, <=, 64);
			strace_reader_release(rd, &b);
			strace_reader_close(rd);
		}
		strace_ring_close(hr);
	}
	/* A symlink is refused, on create and on open. */
	unlink(tpath("link"));
	CHECK_INT(symlink(tpath("good"), tpath("link")), ==, 0);
	CHECK_INT(open_err(tpath("link")), ==, -ELOOP);
	struct strace_ring *lr = NULL;
	CHECK_INT(strace_ring_create(tpath("link"), NULL, &lr), ==, -ELOOP);
	CHECK_INT(strace_ring_create(tpath("good"), NULL, &lr), ==, -EEXIST);
	/* A directory is not a ring. */
	CHECK_INT(open_err(dir), ==, -EISDIR);
	free(good);
	free(buf);
}

TEST(default_path)
{
	char a[256], b[256];
	unsetenv("STRACE_RING");
	REQUIRE(strace_ring_default_path(a, sizeof(a)) > 0);
	REQUIRE(strace_ring_default_path(b, sizeof(b)) > 0);
	CHECK(strncmp(a, "/dev/shm/strace_", 16) == 0);
	CHECK(strcmp(a, b) != 0);
	CHECK(strstr(a, ".srb") != NULL);
	setenv("STRACE_RING", "/tmp/x.srb", 1);
	REQUIRE(strace_ring_default_path(a, sizeof(a)) > 0);
	CHECK_STR(a, "/tmp/x.srb");
	CHECK_INT(strace_ring_default_path(a, 4), ==, -ENAMETOOLONG);
	unsetenv("STRACE_RING");
}

/* --- finding rings, removing stale ones ---------------------------------- */

enum { RING_CLOSED, RING_KILLED, RING_NO_WRITER };

/*
 * A ring made by a child process that has exited since: its writer closed,
 * SIGKILLed while it held its writer, or never opened. Returns 0.
 */
static int child_ring(const char *path, int how)
{
	int ws;
	pid_t p = fork();

	if (p < 0)
		return -1;
	if (p == 0) {
		struct strace_ring_opts o = {sizeof(o), 64, 4096,
					     STRACE_RING_LOSSLESS, 0, 0};
		struct strace_ring *r;
		struct strace_writer *w;
		unlink(path);
		if (strace_ring_create(path, &o, &r) < 0)
			_exit(1);
		if (how == RING_NO_WRITER)
			_exit(0);
		if (strace_writer_open(r, &w) < 0)
			_exit(1);
		for (uint64_t i = 0; i < 10; i++)
			strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, 0);
		if (strace_writer_flush(w) < 0)
			_exit(1);
		if (how == RING_KILLED)
			raise(SIGKILL);
		strace_writer_close(w);
		strace_ring_close(r);
		_exit(0);
	}
	if (waitpid(p, &ws, 0) != p)
		return -1;
	if (how == RING_KILLED)
		return WIFSIGNALED(ws) ? 0 : -1;
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : -1;
}

/* The entries of a scan, by name. */
struct scanned {
	int n;
	struct {
		char name[64];
		struct strace_ring_entry e;
	} f[32];
};

static int collect(void *arg, const struct strace_ring_entry *e)
{
	struct scanned *s = arg;

	if (s->n < 32) {
		snprintf(s->f[s->n].name, sizeof(s->f[0].name), "%s", e->name);
		s->f[s->n].e = *e;
		s->f[s->n].e.path = s->f[s->n].e.name = NULL; /* not kept */
		s->n++;
	}
	return 0;
}

static const struct strace_ring_entry *found(const struct scanned *s,
					     const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name))
			return &s->f[i].e;
	fprintf(stderr, "  %s: not in the scan\n", name);
	return NULL;
}

/* dir/name, in one of 8 buffers used in turn. */
static const char *in_dir(const char *d, const char *name)
{
	static char buf[8][512];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", d, name);
	return buf[i];
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* A copy of the ring at from, at to, with n bytes at off replaced. */
static int patched(const char *from, const char *to, size_t off,
		   const void *val, size_t n)
{
	struct stat st;
	int fd = open(from, O_RDONLY);
	uint8_t *buf;
	int rc = -1;

	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (buf && pread(fd, buf, (size_t)st.st_size, 0) == st.st_size) {
		memcpy(buf + off, val, n);
		rc = write_file(to, buf, (size_t)st.st_size);
	}
	free(buf);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Start time of a process (/proc/PID/stat field 22), as the ring records
 * it. */
static uint64_t starttime_of(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	for (int field = 2; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return p ? strtoull(p, NULL, 10) : 0;
}

/*
 * A directory of every kind of file: the scan classifies each, and
 * remove_stale removes exactly the stale rings (of the format, the
 * user's, every writer, reader and the creator gone).
 */
TEST(scan_and_remove_stale)
{
	char d[300], other[300];
	struct strace_ring *live, *rdr = NULL;
	struct strace_writer *lw;
	struct strace_reader *rd;
	struct scanned s;
	int pipefd[2], gofd[2], chowned;
	char c;

	snprintf(d, sizeof(d), "%s/scan", dir);
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	mkdir(d, 0700);
	mkdir(other, 0700);
#define F(name) in_dir(d, name)
	/* a live ring: its writer is this process */
	struct strace_ring_opts o = {sizeof(o), 64, 4096, STRACE_RING_LOSSLESS, 0, 0};
	REQUIRE(strace_ring_create(F("live.srb"), &o, &live) == 0);
	REQUIRE(strace_writer_open(live, &lw) == 0);
	/* stale: writer closed, writer SIGKILLed, never written */
	REQUIRE(child_ring(F("closed.srb"), RING_CLOSED) == 0);
	REQUIRE(child_ring(F("killed.srb"), RING_KILLED) == 0);
	REQUIRE(child_ring(F("unwritten.srb"), RING_NO_WRITER) == 0);
	/* no writer, but a live reader (this process) */
	REQUIRE(child_ring(F("read.srb"), RING_CLOSED) == 0);
	REQUIRE(strace_ring_open(F("read.srb"), &rdr) == 0);
	REQUIRE(strace_reader_open(rdr, 0, &rd) == 0);
	/* no writer yet, and its creator runs */
	REQUIRE(pipe(pipefd) == 0 && pipe(gofd) == 0);
	pid_t creator = fork();
	if (creator == 0) {
		struct strace_ring *r;
		close(pipefd[0]);
		close(gofd[1]);
		if (strace_ring_create(F("creator.srb"), &o, &r) < 0)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1 || read(gofd[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	close(gofd[0]);
	REQUIRE(read(pipefd[0], &c, 1) == 1);
	/* another user's stale ring (root can make one) */
	REQUIRE(child_ring(F("nobody.srb"), RING_CLOSED) == 0);
	chowned = chown(F("nobody.srb"), 65534, 65534) == 0;
	/* not rings, or not ours to judge */
	REQUIRE(write_file(F("notes.txt"), "hello\n", 6) == 0);
	uint8_t junk[20000];
	srand(7);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rand();
	REQUIRE(write_file(F("strace_1_garbage.srb"), junk, sizeof(junk)) == 0);
	REQUIRE(write_file(F("magic-only.srb"), "STRACERB", 8) == 0);
	uint32_t v1 = 1;
	REQUIRE(child_ring(F("closed.srb.tmp"), RING_CLOSED) == 0);
	REQUIRE(patched(F("closed.srb.tmp"), F("version1.srb"),
			offsetof(struct ring_hdr, version), &v1, 4) == 0);
	uint64_t badcap = 1000;
	REQUIRE(patched(F("closed.srb.tmp"), F("damaged.srb"),
			offsetof(struct ring_hdr, capacity), &badcap, 8) == 0);
	/* hostile but valid: a writer slot, the creator and the lock name
	 * pid 1 with a start time it does not have: all dead, so stale */
	struct ring_hdr hh;
	int hfd = open(F("closed.srb.tmp"), O_RDONLY);
	REQUIRE(hfd >= 0 && pread(hfd, &hh, sizeof(hh), 0) == sizeof(hh));
	close(hfd);
	hh.writers[5].pid = 1;
	hh.writers[5].starttime = 12345678;
	atomic_store(&hh.writers[5].state, SLOT_LIVE);
	hh.creator_pid = 1;
	hh.creator_starttime = 12345678;
	atomic_store(&hh.lock, (uint64_t)12345678 << LOCK_PID_BITS | 1);
	REQUIRE(patched(F("closed.srb.tmp"), F("forged.srb"), 0, &hh,
			sizeof(hh)) == 0);
	unlink(F("closed.srb.tmp"));
	/* a symlink to a stale ring elsewhere, a FIFO, a directory */
	char target[400];
	snprintf(target, sizeof(target), "%s/target.srb", other);
	REQUIRE(child_ring(target, RING_CLOSED) == 0);
	REQUIRE(symlink(target, F("strace_2_link.srb")) == 0);
	REQUIRE(mkfifo(F("strace_3_fifo.srb"), 0600) == 0);
	REQUIRE(mkdir(F("subdir.srb"), 0700) == 0);

	memset(&s, 0, sizeof(s));
	CHECK_INT(strace_ring_scan(d, collect, &s), ==, 16);
	CHECK_INT(s.n, ==, 16);
	for (int i = 1; i < s.n; i++) /* in name order */
		CHECK(strcmp(s.f[i - 1].name, s.f[i].name) < 0);
	const struct strace_ring_entry *e;
	if ((e = found(&s, "live.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_RING);
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_WRITER);
		CHECK_INT(e->stat.writers_live, ==, 1);
		CHECK_INT(e->pids[0], ==, getpid());
		CHECK_INT(e->uid, ==, geteuid());
		CHECK_INT(e->in_memory, ==, 0); /* /tmp here is a disk */
		CHECK_U64(e->mem_bytes, >, 0);
		CHECK_INT(e->default_name, ==, 0);
	}
	if ((e = found(&s, "closed.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_RING);
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_NONE);
		CHECK_INT(e->stat.writers_closed, ==, 1);
		CHECK_INT(e->stat.writers_dead, ==, 0);
		CHECK_U64(e->stat.committed, ==, 10);
		CHECK(e->stat.creator_pid != 0 &&
		      e->stat.creator_pid != (uint64_t)getpid());
		CHECK(e->stat.created_ns != 0);
	}
	if ((e = found(&s, "killed.srb"))) {
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_NONE);
		CHECK_INT(e->stat.writers_dead, ==, 1);
		CHECK_INT(e->stat.writers_live, ==, 0);
	}
	if ((e = found(&s, "unwritten.srb"))) {
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_NONE);
		CHECK_INT(e->stat.writers_closed + e->stat.writers_dead, ==, 0);
	}
	if ((e = found(&s, "read.srb"))) {
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_READER);
		CHECK_INT(e->pids[0], ==, getpid());
	}
	if ((e = found(&s, "creator.srb"))) {
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_CREATOR);
		CHECK_INT(e->pids[0], ==, creator);
	}
	if ((e = found(&s, "nobody.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_RING);
		CHECK_INT(e->keep, ==,
			  chowned ? STRACE_RING_KEEP_OWNER : STRACE_RING_KEEP_NONE);
	}
	if ((e = found(&s, "notes.txt"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_FOREIGN);
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_KIND);
	}
	if ((e = found(&s, "strace_1_garbage.srb")))
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_FOREIGN);
	if ((e = found(&s, "magic-only.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_DAMAGED);
		CHECK_INT(e->err, ==, -STRACE_E_TRUNCATED);
	}
	if ((e = found(&s, "version1.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_VERSION);
		CHECK_INT(e->stat.version, ==, 1);
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_KIND);
	}
	if ((e = found(&s, "damaged.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_DAMAGED);
		CHECK_INT(e->err, ==, -STRACE_E_CORRUPT);
	}
	if ((e = found(&s, "forged.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_RING);
		CHECK_INT(e->keep, ==, STRACE_RING_KEEP_NONE);
		CHECK_INT(e->stat.writers_dead, ==, 1);
	}
	if ((e = found(&s, "strace_2_link.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_SPECIAL);
		CHECK(S_ISLNK(e->file_mode));
	}
	if ((e = found(&s, "strace_3_fifo.srb"))) {
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_SPECIAL);
		CHECK(S_ISFIFO(e->file_mode));
	}
	if ((e = found(&s, "subdir.srb")))
		CHECK_INT(e->kind, ==, STRACE_RING_KIND_SPECIAL);

	/* Remove what is stale: exactly those. */
	int removed = 0;
	for (int i = 0; i < s.n; i++) {
		struct strace_ring_entry re;
		int rc = strace_ring_remove_stale(F(s.f[i].name), &re);
		CHECK_INT(rc, >=, 0);
		CHECK_INT(rc, ==, s.f[i].e.keep == STRACE_RING_KEEP_NONE);
		if (rc == 1) {
			removed++;
			CHECK_U64(re.mem_bytes, ==, s.f[i].e.mem_bytes);
		} else {
			CHECK_INT(re.keep, ==, s.f[i].e.keep);
		}
		CHECK_INT(exists(F(s.f[i].name)), ==, rc != 1);
	}
	CHECK_INT(removed, ==, chowned ? 4 : 5);
	CHECK(exists(target)); /* a symlink is never followed */

	/* Once its reader and its creator are gone, a ring is stale. */
	strace_reader_close(rd);
	strace_ring_close(rdr);
	struct strace_ring_entry re;
	CHECK_INT(strace_ring_remove_stale(F("read.srb"), &re), ==, 1);
	CHECK_INT(strace_ring_remove_stale(F("creator.srb"), &re), ==, 0);
	CHECK_INT(re.keep, ==, STRACE_RING_KEEP_CREATOR);
	close(gofd[1]);
	waitpid(creator, NULL, 0);
	CHECK_INT(strace_ring_remove_stale(F("creator.srb"), &re), ==, 1);
	CHECK_INT(strace_ring_remove_stale(F("creator.srb"), &re), ==, -ENOENT);
	/* A live writer keeps it; closed, it goes. */
	CHECK_INT(strace_ring_remove_stale(F("live.srb"), &re), ==, 0);
	CHECK_INT(strace_writer_close(lw), ==, 0);
	CHECK_INT(strace_ring_remove_stale(F("live.srb"), &re), ==, 0);
	CHECK_INT(re.keep, ==, STRACE_RING_KEEP_CREATOR); /* we made it */
	strace_ring_close(live);
	close(pipefd[0]);
	CHECK_INT(strace_ring_scan(F("nothere"), collect, &s), ==, -ENOENT);
	CHECK_INT(strace_ring_scan(F("notes.txt"), collect, &s), ==, -ENOTDIR);
#undef F
}

/* A lock word naming a live process: it is attaching, so the ring is not
 * stale whatever its slots say. */
TEST(scan_lock_held)
{
	char path[300];
	struct strace_ring_entry e;
	struct ring_hdr hh;
	int pipefd[2];
	char c;

	snprintf(path, sizeof(path), "%s/locked.srb", dir);
	REQUIRE(child_ring(path, RING_CLOSED) == 0);
	REQUIRE(pipe(pipefd) == 0);
	pid_t holder = fork();
	if (holder == 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[0]);
	int fd = open(path, O_RDWR);
	REQUIRE(fd >= 0 && pread(fd, &hh, sizeof(hh), 0) == sizeof(hh));
	uint64_t word = starttime_of(holder) << LOCK_PID_BITS | (uint64_t)holder;
	REQUIRE(pwrite(fd, &word, 8, offsetof(struct ring_hdr, lock)) == 8);
	close(fd);
	CHECK_INT(strace_ring_inspect(path, &e), ==, 0);
	CHECK_INT(e.keep, ==, STRACE_RING_KEEP_LOCKED);
	CHECK_INT(e.pids[0], ==, holder);
	CHECK_INT(e.stat.lock_pid, ==, holder);
	close(pipefd[1]);
	waitpid(holder, NULL, 0);
	/* the holder died holding it: stale, and removed (the lock is taken
	 * over, as any waiter takes over a dead holder's) */
	CHECK_INT(strace_ring_inspect(path, &e), ==, 0);
	CHECK_INT(e.keep, ==, STRACE_RING_KEEP_NONE);
	CHECK_INT(strace_ring_remove_stale(path, &e), ==, 1);
}

/* The default directory and its names; memory against size. */
TEST(scan_default_dir)
{
	char d[300], p[400], buf[512];
	struct scanned s;
	struct strace_ring_entry e;

	unsetenv("STRACE_RING");
	CHECK_INT(strace_ring_default_dir(buf, sizeof(buf)), ==, 8);
	CHECK_STR(buf, "/dev/shm");
	CHECK_INT(strace_ring_default_dir(buf, 8), ==, -ENAMETOOLONG);
	setenv("STRACE_RING", "x.srb", 1);
	CHECK_INT(strace_ring_default_dir(buf, sizeof(buf)), ==, 1);
	CHECK_STR(buf, ".");

	snprintf(d, sizeof(d), "%s/default", dir);
	mkdir(d, 0700);
	snprintf(p, sizeof(p), "%s/mine.srb", d);
	setenv("STRACE_RING", p, 1);
	CHECK_INT(strace_ring_default_dir(buf, sizeof(buf)), ==, (int)strlen(d));
	CHECK_STR(buf, d);
#define F(name) in_dir(d, name)
	static const char *const names[] = {
		"strace_12_ab.srb", "mine.srb",     "other.srb",
		"strace_x_ab.srb",  "strace_12.srb", "strace_12_ab.srbx",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		REQUIRE(child_ring(F(names[i]), RING_CLOSED) == 0);
	memset(&s, 0, sizeof(s));
	CHECK_INT(strace_ring_scan(NULL, collect, &s), ==, 2);
	CHECK_STR(s.f[0].name, "mine.srb");
	CHECK_STR(s.f[1].name, "strace_12_ab.srb");
	CHECK_INT(s.f[0].e.default_name, ==, 1);
	CHECK_INT(s.f[1].e.default_name, ==, 1);
	/* Given explicitly, the same directory lists every file, and says
	 * which the default scan would see. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(strace_ring_scan(d, collect, &s), ==, 6);
	for (int i = 0; i < s.n; i++)
		CHECK_INT(s.f[i].e.default_name, ==,
			  !strcmp(s.f[i].name, "mine.srb") ||
				  !strcmp(s.f[i].name, "strace_12_ab.srb"));
	CHECK_INT(strace_ring_inspect(F("strace_12_ab.srb"), &e), ==, 0);
	CHECK_INT(e.default_name, ==, 1);
	CHECK_STR(e.name, "strace_12_ab.srb");
	CHECK_INT(strace_ring_inspect(F("other.srb"), &e), ==, 0);
	CHECK_INT(e.default_name, ==, 0);
	CHECK_INT(strace_ring_inspect(F("missing.srb"), &e), ==, -ENOENT);
	unsetenv("STRACE_RING");
	CHECK_INT(strace_ring_inspect(F("strace_12_ab.srb"), &e), ==, 0);
	CHECK_INT(e.default_name, ==, 0); /* not in /dev/shm */
#undef F

	/* In /dev/shm (memory): a sparse ring holds less than its size. */
	char shm[128];
	snprintf(shm, sizeof(shm), "/dev/shm/test_ring_scan_%d.srb",
		 (int)getpid());
	struct strace_ring_opts o = {sizeof(o), 1 << 16, 4096,
				     STRACE_RING_LOSSLESS, 1, 0};
	struct strace_ring *r;
	unlink(shm);
	if (strace_ring_create(shm, &o, &r) == 0) {
		CHECK_INT(strace_ring_inspect(shm, &e), ==, 0);
		CHECK_INT(e.in_memory, ==, 1);
		CHECK_U64(e.size, >=, (1u << 16) * 32);
		CHECK_U64(e.mem_bytes, <, e.size / 8);
		CHECK_U64(e.mem_bytes, >=, 4096);
		CHECK_INT(e.keep, ==, STRACE_RING_KEEP_CREATOR);
		strace_ring_close(r);
		unlink(shm);
	}
}

/*
 * The race: a process that opened a ring before it was removed must not
 * register a writer in the unlinked file, and a writer that registered
 * before keeps its ring.
 */
TEST(remove_stale_race)
{
	char path[300];
	struct strace_ring *r;
	struct strace_writer *w;
	struct strace_reader *rd;
	struct strace_ring_entry e;

	snprintf(path, sizeof(path), "%s/race.srb", dir);
	/* opened before the removal, writer after: refused */
	REQUIRE(child_ring(path, RING_CLOSED) == 0);
	REQUIRE(strace_ring_open(path, &r) == 0);
	CHECK_INT(strace_ring_remove_stale(path, &e), ==, 1);
	CHECK(!exists(path));
	CHECK_INT(strace_writer_open(r, &w), ==, -STRACE_E_CLOSED);
	/* a reader still reads what the mapping holds, to the end */
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	struct seqcheck sc = {0};
	CHECK_INT(drain(rd, 2000, check_seq, &sc, NULL), ==, STRACE_READER_END);
	CHECK_U64(sc.count, ==, 10);
	strace_reader_close(rd);
	strace_ring_close(r);

	/* writer registered before: kept */
	REQUIRE(child_ring(path, RING_CLOSED) == 0);
	REQUIRE(strace_ring_open(path, &r) == 0);
	REQUIRE(strace_writer_open(r, &w) == 0);
	CHECK_INT(strace_ring_remove_stale(path, &e), ==, 0);
	CHECK_INT(e.keep, ==, STRACE_RING_KEEP_WRITER);
	CHECK(exists(path));
	strace_writer_close(w);
	strace_ring_close(r);
	CHECK_INT(strace_ring_remove_stale(path, &e), ==, 1);
}

/* An unlink that fails leaves the ring usable: not marked removed. */
TEST(remove_stale_unlink_fails)
{
	char d[300], path[400];
	struct strace_ring *r;
	struct strace_writer *w;
	struct strace_ring_entry e;
	int flags, fd;

	snprintf(d, sizeof(d), "%s/immutable", dir);
	snprintf(path, sizeof(path), "%s/stale.srb", d);
	mkdir(d, 0700);
	REQUIRE(child_ring(path, RING_CLOSED) == 0);
	fd = open(d, O_RDONLY | O_DIRECTORY);
	REQUIRE(fd >= 0);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 ||
	    (flags |= FS_IMMUTABLE_FL, ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)) {
		close(fd);
		SKIP("cannot make a directory immutable here");
	}
	CHECK_INT(strace_ring_remove_stale(path, &e), ==, -EPERM);
	flags &= ~FS_IMMUTABLE_FL;
	CHECK_INT(ioctl(fd, FS_IOC_SETFLAGS, &flags), ==, 0);
	close(fd);
	CHECK(exists(path));
	REQUIRE(strace_ring_open(path, &r) == 0);
	CHECK_INT(strace_writer_open(r, &w), ==, 0);
	strace_writer_close(w);
	strace_ring_close(r);
	CHECK_INT(strace_ring_remove_stale(path, &e), ==, 1);
}

struct race {
	const char *path;
	atomic_int go;
	int refused, registered, lost_file;
};

static void *race_writer(void *arg)
{
	struct race *x = arg;
	struct strace_ring *r;
	struct strace_writer *w;

	while (!atomic_load(&x->go))
		;
	if (strace_ring_open(x->path, &r) < 0)
		return NULL; /* removed before it could open it */
	int rc = strace_writer_open(r, &w);
	if (rc == 0) {
		x->registered = 1;
		/* registered: nobody may remove the file now */
		x->lost_file = !exists(x->path);
		strace_writer_close(w);
	} else {
		x->refused = rc == -STRACE_E_CLOSED;
	}
	strace_ring_close(r);
	return NULL;
}

/*
 * Threads: a writer attaching while the ring is removed. Either it
 * registered first, and the file stays while it is registered, or it is
 * refused (-STRACE_E_CLOSED): never does it write into a removed file.
 */
TEST(remove_stale_race_threads)
{
	char path[300];
	int removed = 0, refused = 0, registered = 0;

	snprintf(path, sizeof(path), "%s/race2.srb", dir);
	for (int i = 0; i < 40; i++) {
		struct race x = {path, 0, 0, 0, 0};
		struct strace_ring_entry e;
		pthread_t t;
		REQUIRE(child_ring(path, RING_CLOSED) == 0);
		REQUIRE(pthread_create(&t, NULL, race_writer, &x) == 0);
		usleep((useconds_t)(i % 8) * 50); /* let it spin, or not */
		atomic_store(&x.go, 1);
		for (int k = 0; k < (i % 4) * 20000; k++)
			atomic_load(&x.go); /* and start it ahead of us */
		int rc = strace_ring_remove_stale(path, &e);
		pthread_join(t, NULL);
		CHECK_INT(rc, >=, 0);
		CHECK_INT(x.lost_file, ==, 0);
		if (rc == 0)
			CHECK(exists(path) && x.registered);
		removed += rc == 1;
		refused += x.refused;
		registered += x.registered;
		unlink(path);
	}
	fprintf(stderr, "  %d removed, %d writers refused, %d registered\n",
		removed, refused, registered);
}

/* --- readers that died: their slots taken back --------------------------- */

/*
 * A child that opens a reader on path and holds it (reading nothing) until
 * it is killed. Returns its pid once the reader is open, -1 if it could
 * not open one (the child is gone then).
 */
static pid_t reader_child(const char *path)
{
	int fds[2];
	char c = 'n';

	if (pipe(fds) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		struct strace_ring *r;
		struct strace_reader *rd;
		close(fds[0]);
		if (strace_ring_open(path, &r) == 0 &&
		    strace_reader_open(r, 0, &rd) == 0)
			c = 'y';
		if (write(fds[1], &c, 1) != 1 || c != 'y')
			_exit(2);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (p < 0 || read(fds[0], &c, 1) != 1)
		c = 'n';
	close(fds[0]);
	if (c != 'y') {
		if (p > 0)
			waitpid(p, NULL, 0);
		return -1;
	}
	return p;
}

/* SIGKILL, as the OOM killer does: the reader is never closed. */
static int kill_reap(pid_t p)
{
	int ws;

	kill(p, SIGKILL);
	return waitpid(p, &ws, 0) == p && WIFSIGNALED(ws) ? 0 : -1;
}

static void stat_readers(struct strace_ring *r, uint32_t *live, uint32_t *dead)
{
	struct strace_ring_stat st;

	*live = *dead = UINT32_MAX;
	if (strace_ring_stat(r, &st) == 0) {
		*live = st.readers_live;
		*dead = st.readers_dead;
	}
}

/* Holds n readers of this process on r; returns how many it opened. */
static int hold_readers(struct strace_ring *r, struct strace_reader **rd,
			int n)
{
	int k = 0;

	while (k < n && strace_reader_open(r, 0, &rd[k]) == 0)
		k++;
	return k;
}

/*
 * More readers killed with SIGKILL than there are slots: each new one
 * gets a slot (the 65th takes back a dead one), --stat counts them dead,
 * and a reader opened after them reads the ring; with every slot held by
 * a live reader, the next is refused.
 */
TEST(dead_readers_slots_taken_back)
{
	struct strace_ring *r = mk("rdead", 1024, STRACE_RING_FLIGHT);
	struct strace_reader *rd[STRACE_RING_MAX_READERS + 1];
	struct strace_writer *w;
	struct seqcheck c = {0};
	uint32_t live, dead;

	REQUIRE(r);
	REQUIRE(strace_writer_open(r, &w) == 0);
	for (uint64_t i = 0; i < 100; i++)
		strace_writer_emit(w, STRACE_EV_CALL, 0, 1, 0, i, 0);
	REQUIRE(strace_writer_close(w) == 0);
	for (int i = 0; i <= STRACE_RING_MAX_READERS; i++) {
		pid_t p = reader_child(tpath("rdead"));
		if (p < 0)
			fprintf(stderr, "  killed reader %d could not attach\n",
				i + 1);
		REQUIRE(p > 0);
		REQUIRE(kill_reap(p) == 0);
	}
	stat_readers(r, &live, &dead);
	CHECK_INT(live, ==, 0);
	CHECK_INT(dead, ==, STRACE_RING_MAX_READERS);
	REQUIRE(strace_reader_open(r, 0, &rd[0]) == 0);
	CHECK_INT(drain(rd[0], 1000, check_seq, &c, NULL), ==,
		  STRACE_READER_END);
	CHECK_U64(c.count, ==, 100);
	CHECK_U64(c.bad, ==, 0);
	stat_readers(r, &live, &dead);
	CHECK_INT(live, ==, 1);
	CHECK_INT(dead, ==, STRACE_RING_MAX_READERS - 1);
	int n = 1 + hold_readers(r, rd + 1, STRACE_RING_MAX_READERS);
	CHECK_INT(n, ==, STRACE_RING_MAX_READERS);
	struct strace_reader *extra = NULL;
	CHECK_INT(strace_reader_open(r, 0, &extra), ==, -STRACE_E_FULL);
	stat_readers(r, &live, &dead);
	CHECK_INT(live, ==, STRACE_RING_MAX_READERS);
	CHECK_INT(dead, ==, 0);
	for (int i = 0; i < n; i++)
		strace_reader_close(rd[i]);
	strace_ring_close(r);
}

/* The slot of a reader: its pid in the header (mapped on its own). */
static struct ring_rslot *slot_of(struct ring_hdr *h, pid_t pid)
{
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++)
		if (atomic_load(&h->readers[i].state) == SLOT_LIVE &&
		    atomic_load(&h->readers[i].pid) == (uint32_t)pid)
			return &h->readers[i];
	return NULL;
}

/*
 * A reader that is stopped (slow) keeps its slot however full the ring
 * is; one whose pid now names another process (another start time) does
 * not.
 */
TEST(live_readers_keep_their_slots)
{
	struct strace_ring *r = mk("rlive", 1024, STRACE_RING_FLIGHT);
	struct strace_reader *rd[STRACE_RING_MAX_READERS];
	struct strace_reader *extra = NULL;

	REQUIRE(r);
	pid_t p = reader_child(tpath("rlive"));
	REQUIRE(p > 0);
	kill(p, SIGSTOP);
	int n = hold_readers(r, rd, STRACE_RING_MAX_READERS);
	CHECK_INT(n, ==, STRACE_RING_MAX_READERS - 1);
	CHECK_INT(strace_reader_open(r, 0, &extra), ==, -STRACE_E_FULL);
	int fd = open(tpath("rlive"), O_RDWR);
	REQUIRE(fd >= 0);
	void *m = mmap(NULL, RING_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	close(fd);
	REQUIRE(m != MAP_FAILED);
	struct ring_rslot *s = slot_of(m, p);
	CHECK(s != NULL);
	if (s) {
		/* the pid reused: its process started at another time */
		atomic_fetch_add(&s->starttime, 1);
		CHECK_INT(strace_reader_open(r, 0, &extra), ==, 0);
		CHECK_INT(atomic_load(&s->pid), ==, getpid());
		CHECK(slot_of(m, p) == NULL);
	}
	munmap(m, RING_HDR_SIZE);
	CHECK_INT(kill_reap(p), ==, 0);
	strace_reader_close(extra);
	for (int i = 0; i < n; i++)
		strace_reader_close(rd[i]);
	strace_ring_close(r);
}

/* Children that race for a slot: each opens the ring, waits for go, opens
 * a reader and says whether it got one, then holds it. */
#define RACERS 4

/*
 * One slot held by a killed reader, the others by live ones: of several
 * processes that race to open a reader, one gets it, the others are
 * refused; the winner, killed in turn, leaves the slot to the next round.
 */
TEST(dead_slot_race_processes)
{
	struct strace_ring *r = mk("rrace", 1024, STRACE_RING_FLIGHT);
	struct strace_reader *rd[STRACE_RING_MAX_READERS];
	uint32_t live, dead;

	REQUIRE(r);
	int n = hold_readers(r, rd, STRACE_RING_MAX_READERS - 1);
	REQUIRE(n == STRACE_RING_MAX_READERS - 1);
	pid_t first = reader_child(tpath("rrace"));
	REQUIRE(first > 0);
	REQUIRE(kill_reap(first) == 0);
	for (int round = 0; round < 20; round++) {
		int go[2], res[2], won = 0, lost = 0;
		pid_t kid[RACERS];
		REQUIRE(pipe(go) == 0 && pipe(res) == 0);
		for (int k = 0; k < RACERS; k++) {
			kid[k] = fork();
			if (kid[k] == 0) {
				struct strace_ring *r2;
				struct strace_reader *x;
				char c;
				close(go[1]);
				close(res[0]);
				if (strace_ring_open(tpath("rrace"), &r2) < 0)
					_exit(2);
				if (read(go[0], &c, 1) != 0)
					_exit(2);
				c = strace_reader_open(r2, 0, &x) == 0 ? 'y'
									: 'n';
				if (write(res[1], &c, 1) != 1)
					_exit(2);
				for (;;)
					pause();
			}
		}
		close(go[0]);
		close(res[1]);
		close(go[1]); /* go */
		for (int k = 0; k < RACERS; k++) {
			char c = 0;
			if (read(res[0], &c, 1) != 1)
				break;
			won += c == 'y';
			lost += c == 'n';
		}
		close(res[0]);
		for (int k = 0; k < RACERS; k++)
			if (kid[k] > 0)
				kill_reap(kid[k]);
		CHECK_INT(won, ==, 1);
		CHECK_INT(lost, ==, RACERS - 1);
	}
	stat_readers(r, &live, &dead);
	CHECK_INT(live, ==, STRACE_RING_MAX_READERS - 1);
	CHECK_INT(dead, ==, 1);
	for (int i = 0; i < n; i++)
		strace_reader_close(rd[i]);
	strace_ring_close(r);
}

/* A reader that died is no reader to wait for. */
TEST(wait_readers_counts_live_ones)
{
	struct strace_ring *r = mk("rwait", 1024, STRACE_RING_LOSSLESS);
	struct strace_reader *rd;

	REQUIRE(r);
	pid_t p = reader_child(tpath("rwait"));
	REQUIRE(p > 0);
	REQUIRE(kill_reap(p) == 0);
	CHECK_INT(strace_ring_wait_readers(r, 1, 300), ==, -ETIMEDOUT);
	REQUIRE(strace_reader_open(r, 0, &rd) == 0);
	CHECK_INT(strace_ring_wait_readers(r, 1, 1000), ==, 0);
	strace_reader_close(rd);
	strace_ring_close(r);
}

struct slot_race {
	struct strace_ring *r;
	atomic_int go, stop;
	struct strace_reader *got;
	int rc;
};

static void *race_reader(void *arg)
{
	struct slot_race *x = arg;

	while (!atomic_load(&x->go))
		;
	x->rc = strace_reader_open(x->r, 0, &x->got);
	return NULL;
}

static void *race_stat(void *arg)
{
	struct slot_race *x = arg;
	struct strace_ring_stat st;
	struct strace_reader_info ri[STRACE_RING_MAX_READERS];

	while (!atomic_load(&x->stop)) {
		strace_ring_stat(x->r, &st);
		strace_ring_reader_info(x->r, ri, STRACE_RING_MAX_READERS);
	}
	return NULL;
}

/*
 * Threads of one process race for the one slot a killed reader left,
 * while another reads the slot tables (--stat): one gets it, and
 * ThreadSanitizer (make check-ring SAN=thread) sees no data race.
 */
TEST(dead_slot_race_threads)
{
	struct strace_ring *r = mk("rrace2", 1024, STRACE_RING_FLIGHT);
	struct strace_reader *rd[STRACE_RING_MAX_READERS];
	struct slot_race x[RACERS];
	struct slot_race st = {0};
	pthread_t t[RACERS], ts;

	REQUIRE(r);
	int n = hold_readers(r, rd, STRACE_RING_MAX_READERS - 1);
	REQUIRE(n == STRACE_RING_MAX_READERS - 1);
	pid_t p = reader_child(tpath("rrace2"));
	REQUIRE(p > 0);
	REQUIRE(kill_reap(p) == 0);
	st.r = r;
	REQUIRE(pthread_create(&ts, NULL, race_stat, &st) == 0);
	for (int k = 0; k < RACERS; k++) {
		x[k] = (struct slot_race){0};
		x[k].r = r;
		REQUIRE(pthread_create(&t[k], NULL, race_reader, &x[k]) == 0);
	}
	for (int k = 0; k < RACERS; k++)
		atomic_store(&x[k].go, 1);
	int won = 0;
	for (int k = 0; k < RACERS; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < RACERS; k++) {
		if (x[k].rc == 0) {
			won++;
			strace_reader_close(x[k].got);
		} else {
			CHECK_INT(x[k].rc, ==, -STRACE_E_FULL);
		}
	}
	atomic_store(&st.stop, 1);
	pthread_join(ts, NULL);
	CHECK_INT(won, ==, 1);
	for (int i = 0; i < n; i++)
		strace_reader_close(rd[i]);
	strace_ring_close(r);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_ring.%d", (int)getpid());
	mkdir(dir, 0700);
}

static void cleanup(void) __attribute__((destructor));
static void cleanup(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

RUN_TESTS("test_ring")
