/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bench_ring.c - benchmarks of the shared ring and of
 * ptrace-read's formatter. Each prints lines
 *
 *   RESULT <name> <count> <seconds> <count/second>
 *
 * usage: bench_ring WHAT [N]
 *   pipe N [CAPACITY]  writer and reader in two processes at once,
 *               lossless, default ring size; the reader checks every event
 *   produce N   one writer, no reader, flight recorder, default ring size
 *               (it wraps many times)
 *   consume N   read a full 64 MiB ring (2^21 events) in place, again
 *               and again until N events were read: touch each event
 *   cast N      the same, interpreting each event through the type table
 *   text N      the same through ptrace-read's text formatter, output
 *               written to /dev/null in 4 MiB chunks
 *   json N      likewise, JSON lines
 *   populate [CAPACITY]  time to create the default ring with and
 *               without faulting its pages in, and to write it once when
 *               not pre-faulted (another CAPACITY: the creation only)
 *   membw       memory bandwidth: memcpy and read of 256 MiB buffers
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../cli/format.h"
#include "../../cli/sample.h"
#include "strace/event.h"
#include "strace/ring.h"

#define FULL_CAPACITY (1u << 21) /* 64 MiB of events */
#define BENCH_OUT_BUF (256u << 10) /* as ptrace-read's output buffer */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void result(const char *name, uint64_t n, double s)
{
	printf("RESULT %s %" PRIu64 " %.6f %.0f\n", name, n, s,
	       s > 0 ? (double)n / s : 0.0);
	fflush(stdout);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_ring: %s: %s\n", what, strace_strerror(rc));
	exit(1);
}

static void ring_path(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "/dev/shm/bench_ring_%s_%d.srb", what,
		 (int)getpid());
	unlink(buf);
}

static struct strace_ring *make_ring(const char *path, int mode,
				     uint64_t capacity, int no_populate)
{
	struct strace_ring_opts o;
	struct strace_ring *r;
	int rc;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.mode = mode;
	o.capacity = capacity;
	o.no_populate = no_populate;
	rc = strace_ring_create(path, &o, &r);
	if (rc < 0)
		die(path, rc);
	return r;
}

/* --- pipe: writer and reader processes at once -------------------------- */

static int reader_process(const char *path, uint64_t n)
{
	struct strace_ring *ring;
	struct strace_reader *r;
	struct strace_batch b;
	uint64_t got = 0, bad = 0;
	int rc = strace_ring_open(path, &ring);

	if (rc < 0)
		die(path, rc);
	rc = strace_reader_open(ring, 0, &r);
	if (rc < 0)
		die("reader", rc);
	for (;;) {
		long k = strace_reader_next(r, &b, 0, 100);
		if (k > 0) {
			const struct strace_event *e = b.ev;
			uint64_t seq = b.seq;
			for (long i = 0; i < k; i++)
				bad += e[i].a != seq + (uint64_t)i;
			got += (uint64_t)k;
			strace_reader_release(r, &b);
			continue;
		}
		if (strace_reader_status(r) != STRACE_READER_LIVE)
			break;
	}
	strace_reader_close(r);
	strace_ring_close(ring);
	if (got != n || bad) {
		fprintf(stderr,
			"bench_ring: pipe: reader got %" PRIu64
			" events, %" PRIu64 " wrong, expected %" PRIu64 "\n",
			got, bad, n);
		return 1;
	}
	return 0;
}

static int bench_pipe(uint64_t n, uint64_t cap)
{
	char path[128];
	struct strace_ring *ring;
	struct strace_writer *w;
	int status, rc;
	pid_t pid;
	double t0, t1;

	ring_path(path, sizeof(path), "pipe");
	ring = make_ring(path, STRACE_RING_LOSSLESS, cap, 0);
	rc = strace_writer_open(ring, &w);
	if (rc < 0)
		die("writer", rc);
	pid = fork();
	if (pid == 0)
		_exit(reader_process(path, n));
	rc = strace_ring_wait_readers(ring, 1, 10000);
	if (rc < 0)
		die("wait for the reader", rc);
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, i * 3) <
		    0)
			die("emit", -1);
	rc = strace_writer_close(w);
	if (rc < 0)
		die("close", rc);
	waitpid(pid, &status, 0);
	t1 = now();
	strace_ring_close(ring);
	unlink(path);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	if (cap) {
		char name[64];
		snprintf(name, sizeof(name), "pipe_cap%" PRIu64, cap);
		result(name, n, t1 - t0);
	} else {
		result("pipe", n, t1 - t0);
	}
	return 0;
}

/* --- produce ------------------------------------------------------------ */

static int bench_produce(uint64_t n)
{
	char path[128];
	struct strace_ring *ring;
	struct strace_writer *w;
	double t0, t1;
	int rc;

	ring_path(path, sizeof(path), "produce");
	ring = make_ring(path, STRACE_RING_FLIGHT, 0, 0);
	rc = strace_writer_open(ring, &w);
	if (rc < 0)
		die("writer", rc);
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, i * 3) <
		    0)
			die("emit", -1);
	rc = strace_writer_flush(w);
	t1 = now();
	if (rc < 0)
		die("flush", rc);
	strace_writer_close(w);
	strace_ring_close(ring);
	unlink(path);
	result("produce", n, t1 - t0);
	return 0;
}

/* --- reading a full ring ------------------------------------------------ */

/* a full flight-recorder ring of sample events (names included) */
static struct strace_ring *full_ring(char *path, size_t len)
{
	static struct sample s;
	struct strace_ring *ring;
	struct strace_writer *w;
	int rc;

	ring_path(path, len, "full");
	ring = make_ring(path, STRACE_RING_FLIGHT, FULL_CAPACITY, 0);
	rc = strace_writer_open(ring, &w);
	if (rc < 0)
		die("writer", rc);
	rc = sample_init(&s, ring);
	if (rc < 0)
		die("sample names", rc);
	rc = sample_emit(&s, w, FULL_CAPACITY);
	if (rc < 0)
		die("fill", rc);
	rc = strace_writer_close(w);
	if (rc < 0)
		die("close", rc);
	return ring;
}

enum { CONSUME, CAST, TEXT, JSON };

static uint64_t sink;

struct kinds {
	uint8_t a, b;
};

static int bench_read(uint64_t n, int what)
{
	static const char *const names[] = {"consume", "cast", "text", "json"};
	char path[128];
	struct strace_ring *ring = full_ring(path, sizeof(path));
	struct kinds kinds[STRACE_EV_MAX] = {{0, 0}};
	struct fmt_names nm;
	struct fmt f;
	char *buf = NULL, *p = NULL, *limit = NULL;
	int devnull = -1;
	uint64_t done = 0, acc = 0;
	double t0, t1;

	for (unsigned t = 0; t < STRACE_EV_MAX; t++) {
		const struct strace_event_info *in = strace_event_info(t);
		if (in) {
			kinds[t].a = in->a_kind;
			kinds[t].b = in->b_kind;
		}
	}
	fmt_names_init(&nm, ring);
	fmt_setup(&f, getenv("BENCH_NO_NAMES") ? NULL : &nm, 1);
	if (what >= TEXT) {
		buf = malloc(BENCH_OUT_BUF + FMT_LINE_MAX);
		devnull = open("/dev/null", O_WRONLY);
		if (!buf || devnull < 0)
			die("/dev/null", -errno);
		p = buf;
		limit = buf + BENCH_OUT_BUF;
	}

	t0 = now();
	while (done < n) {
		struct strace_reader *r;
		struct strace_batch b;
		int rc = strace_reader_open(ring, 0, &r);
		if (rc < 0)
			die("reader", rc);
		if (what >= TEXT && fmt_names_refresh(&nm) < 0)
			die("names", -ENOMEM);
		while (done < n) {
			size_t max = n - done < 16384 ? (size_t)(n - done)
						      : 16384;
			long k = strace_reader_next(r, &b, max, 0);
			const struct strace_event *e = b.ev;
			if (k <= 0)
				break;
			switch (what) {
			case CONSUME:
				for (long i = 0; i < k; i++)
					acc += e[i].a;
				break;
			case CAST:
				/* interpret: operands by the kind the table
				 * gives them */
				for (long i = 0; i < k; i++) {
					const struct kinds *kd =
						&kinds[e[i].type &
						       (STRACE_EV_MAX - 1)];
					acc += kd->a == STRACE_FK_ADDR
						       ? e[i].a
						       : e[i].a >> 1;
					acc ^= kd->b == STRACE_FK_BLOCK
						       ? e[i].b >> 32
						       : e[i].b;
					acc += e[i].tid + e[i].flags;
				}
				break;
			case TEXT:
			case JSON:
				for (long i = 0; i < k; i++) {
					p = what == TEXT
						    ? fmt_text_event(&f, p, &e[i],
								     b.seq + (uint64_t)i)
						    : fmt_json_event(&f, p, &e[i],
								     b.seq + (uint64_t)i);
					if (p > limit) {
						if (write(devnull, buf,
							  (size_t)(p - buf)) < 0)
							die("write", -errno);
						p = buf;
					}
				}
				break;
			}
			done += (uint64_t)k;
			strace_reader_release(r, &b);
		}
		strace_reader_close(r);
	}
	if (p && p > buf && write(devnull, buf, (size_t)(p - buf)) < 0)
		die("write", -errno);
	t1 = now();
	sink = acc;
	result(names[what], done, t1 - t0);
	fmt_cleanup(&f);
	fmt_names_fini(&nm);
	free(buf);
	if (devnull >= 0)
		close(devnull);
	strace_ring_close(ring);
	unlink(path);
	return 0;
}

/* --- populate ----------------------------------------------------------- */

static int bench_populate(uint64_t cap)
{
	char path[128];
	struct strace_ring *ring;
	struct strace_writer *w;
	uint64_t pages = cap * STRACE_EVENT_SIZE / 4096;
	double t0, t1;
	int rc;

	ring_path(path, sizeof(path), "pop");
	t0 = now();
	ring = make_ring(path, STRACE_RING_FLIGHT, cap, 0);
	t1 = now();
	if (cap != STRACE_RING_DEFAULT_CAPACITY) {
		char name[64];
		snprintf(name, sizeof(name), "populate_cap%" PRIu64, cap);
		result(name, pages, t1 - t0);
		strace_ring_close(ring);
		unlink(path);
		return 0;
	}
	result("populate_create", pages, t1 - t0);
	strace_ring_close(ring);
	unlink(path);

	t0 = now();
	ring = make_ring(path, STRACE_RING_FLIGHT, cap, 1);
	t1 = now();
	result("nopopulate_create", pages, t1 - t0);
	/* first pass over fresh pages: every 4 KiB page faults once */
	rc = strace_writer_open(ring, &w);
	if (rc < 0)
		die("writer", rc);
	t0 = now();
	for (uint64_t i = 0; i < cap; i++)
		strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, i);
	strace_writer_flush(w);
	t1 = now();
	result("first_fill_events", cap, t1 - t0);
	/* second pass: pages are in */
	t0 = now();
	for (uint64_t i = 0; i < cap; i++)
		strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, i);
	strace_writer_flush(w);
	t1 = now();
	result("second_fill_events", cap, t1 - t0);
	strace_writer_close(w);
	strace_ring_close(ring);
	unlink(path);
	return 0;
}

/* --- memory bandwidth --------------------------------------------------- */

static int bench_membw(void)
{
	size_t len = 256u << 20;
	char *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	char *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	double best = 1e9, bestr = 1e9;
	uint64_t acc = 0;

	if (a == MAP_FAILED || b == MAP_FAILED)
		die("mmap", -errno);
	memset(a, 1, len);
	memset(b, 2, len);
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now(), t1;
		memcpy(b, a, len);
		t1 = now();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	for (int rep = 0; rep < 5; rep++) {
		const uint64_t *q = (const uint64_t *)(void *)a;
		double t0 = now(), t1;
		for (size_t i = 0; i < len / 8; i += 4)
			acc += q[i] + q[i + 1] + q[i + 2] + q[i + 3];
		t1 = now();
		if (t1 - t0 < bestr)
			bestr = t1 - t0;
	}
	sink = acc;
	/* memcpy moves 2 * len bytes (read + write) */
	result("memcpy_bytes", (uint64_t)len, best);
	result("read_bytes", (uint64_t)len, bestr);
	munmap(a, len);
	munmap(b, len);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 100000000ull;

	if (!strcmp(what, "pipe"))
		return bench_pipe(n, argc > 3 ? strtoull(argv[3], NULL, 0) : 0);
	if (!strcmp(what, "produce"))
		return bench_produce(n);
	if (!strcmp(what, "consume"))
		return bench_read(n, CONSUME);
	if (!strcmp(what, "cast"))
		return bench_read(n, CAST);
	if (!strcmp(what, "text"))
		return bench_read(n, TEXT);
	if (!strcmp(what, "json"))
		return bench_read(n, JSON);
	if (!strcmp(what, "populate"))
		return bench_populate(argc > 2 ? strtoull(argv[2], NULL, 0)
					       : STRACE_RING_DEFAULT_CAPACITY);
	if (!strcmp(what, "membw"))
		return bench_membw();
	fprintf(stderr, "usage: bench_ring pipe|produce|consume|cast|text|json "
			"[N] | populate | membw\n");
	return 2;
}
