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
 *   consume N [CAPACITY]  read a full 64 MiB ring (2^21 events; or
 *               CAPACITY events) in place, again and again until N events
 *               were read: touch each event
 *   cast N      the same, interpreting each event through the type table
 *   plugin N    the same, handed to a plugin's one empty callback for every
 *               type (strace_plugins_dispatch; $BENCH_PLUGINS/test-empty.so)
 *   plugin-off N  the same plugin, its callback registered and disabled
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

#include "cli/sample.h"
#include "cli/view/view.h"
#include "strace/event.h"
#include "strace/plugin.h"
#include "strace/ring.h"

#define FULL_CAPACITY (1u << 21) /* 64 MiB of events */
#define BENCH_OUT_BUF (256u << 10) /* as ptrace-read's output buffer */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process: beside wall time, it shows how much a busy
 * machine took away from a benchmark */
static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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
	double t0, t1, c0, c1;
	int rc;

	ring_path(path, sizeof(path), "produce");
	ring = make_ring(path, STRACE_RING_FLIGHT, 0, 0);
	rc = strace_writer_open(ring, &w);
	if (rc < 0)
		die("writer", rc);
	c0 = cpu();
	t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (strace_writer_emit(w, STRACE_EV_CALL, 0, 1, i, i, i * 3) <
		    0)
			die("emit", -1);
	rc = strace_writer_flush(w);
	t1 = now();
	c1 = cpu();
	if (rc < 0)
		die("flush", rc);
	strace_writer_close(w);
	strace_ring_close(ring);
	unlink(path);
	result("produce", n, t1 - t0);
	result("produce_cpu", n, c1 - c0);
	return 0;
}

/* --- reading a full ring ------------------------------------------------ */

/* a full flight-recorder ring of sample events (names included) */
static struct strace_ring *full_ring(char *path, size_t len, uint64_t cap)
{
	static struct sample s;
	struct strace_ring *ring;
	struct strace_writer *w;
	int rc;

	ring_path(path, len, "full");
	ring = make_ring(path, STRACE_RING_FLIGHT, cap, 0);
	rc = strace_writer_open(ring, &w);
	if (rc < 0)
		die("writer", rc);
	rc = sample_init(&s, ring);
	if (rc < 0)
		die("sample names", rc);
	rc = sample_emit(&s, w, cap);
	if (rc < 0)
		die("fill", rc);
	rc = strace_writer_close(w);
	if (rc < 0)
		die("close", rc);
	return ring;
}

enum { CONSUME, CAST, TEXT, JSON, PLUGIN, PLUGIN_OFF };

static volatile uint64_t sink; /* keeps the loops honest */

/* what CAST needs of the table: code addresses of a, block sizes in b */
struct kinds {
	uint64_t a_mask; /* all ones when a is an address */
	uint64_t b_shift; /* 32 when b is a block size (instructions) */
};

static int bench_read(uint64_t n, int what, uint64_t cap)
{
	static const char *const names[] = {"consume", "cast",	 "text",
					    "json",    "plugin", "plugin_off"};
	struct strace_plugins *ps = NULL;
	char path[128], name[64];
	struct strace_ring *ring = full_ring(path, sizeof(path), cap);
	struct kinds kinds[STRACE_EV_MAX];
	struct strace_names *nm;
	struct fmt f;
	char *buf = NULL, *p = NULL, *limit = NULL;
	int devnull = -1;
	uint64_t done = 0, acc = 0;
	double t0, t1, c0, c1;

	for (unsigned t = 0; t < STRACE_EV_MAX; t++) {
		const struct strace_event_info *in = strace_event_info(t);
		kinds[t].a_mask = in && in->a_kind == STRACE_FK_ADDR ? ~0ull : 0;
		kinds[t].b_shift = in && in->b_kind == STRACE_FK_BLOCK ? 32 : 0;
	}
	if (strace_names_new(ring, &nm) < 0)
		die("names", -ENOMEM);
	fmt_setup(&f, getenv("BENCH_NO_NAMES") ? NULL : nm, 1);
	if (what >= PLUGIN) {
		/* a real plugin: one empty callback for every type, enabled
		 * or (off) registered and disabled */
		struct strace_plugins_opts po = {.size = sizeof(po),
						 .host = "bench",
						 .names = nm};
		char spec[512], err[1024];
		const char *dir = getenv("BENCH_PLUGINS");

		snprintf(spec, sizeof(spec), "%s/test-empty.so%s",
			 dir ? dir : "build/plugins",
			 what == PLUGIN_OFF ? ":on=0" : "");
		if (strace_plugins_new(&po, &ps) < 0)
			die("plugins", -ENOMEM);
		if (strace_plugins_load(ps, spec, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_ring: %s\n", err);
			exit(1);
		}
	}
	if (what >= TEXT) {
		buf = malloc(BENCH_OUT_BUF + FMT_LINE_MAX);
		devnull = open("/dev/null", O_WRONLY);
		if (!buf || devnull < 0)
			die("/dev/null", -errno);
		p = buf;
		limit = buf + BENCH_OUT_BUF;
	}

	c0 = cpu();
	t0 = now();
	while (done < n) {
		struct strace_reader *r;
		struct strace_batch b;
		int rc = strace_reader_open(ring, 0, &r);
		if (rc < 0)
			die("reader", rc);
		if (what >= TEXT && strace_names_update(nm) < 0)
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
				for (long i = 0; i < k; i++) {
					__builtin_prefetch(&e[i + 256]);
					acc += e[i].a;
				}
				break;
			case CAST:
				/* interpret: operands by the kind the table
				 * gives them */
				{
					/* independent sums: no chain through
					 * one accumulator */
					uint64_t s0 = 0, s1 = 0, s2 = 0;
					for (long i = 0; i < k; i++) {
						const struct kinds *kd =
							&kinds[e[i].type &
							       (STRACE_EV_MAX - 1)];
						/* 8 KiB ahead: the VM's own
						 * prefetch does not keep up */
						__builtin_prefetch(&e[i + 256]);
						s0 += e[i].a & kd->a_mask;
						s1 += e[i].b >> kd->b_shift;
						s2 += e[i].tid + e[i].flags;
					}
					acc += s0 ^ s1 ^ s2;
				}
				break;
			case PLUGIN:
			case PLUGIN_OFF:
				/* as ptrace-read --plugin does it */
				strace_plugins_dispatch(ps, e, (size_t)k);
				break;
			case TEXT:
			case JSON: {
				/* as ptrace-read does it (cli/ptrace-read.c) */
				size_t left = (size_t)k, used;
				uint64_t seq = b.seq;
				while (left) {
					p = what == TEXT
						    ? fmt_text_batch(&f, p, limit, e,
								     left, seq, NULL,
								     &used)
						    : fmt_json_batch(&f, p, limit, e,
								     left, seq, NULL,
								     &used);
					e += used;
					seq += used;
					left -= used;
					if (p > limit) {
						if (write(devnull, buf,
							  (size_t)(p - buf)) < 0)
							die("write", -errno);
						p = buf;
					}
				}
				break;
			}
			}
			done += (uint64_t)k;
			strace_reader_release(r, &b);
		}
		strace_reader_close(r);
	}
	if (p && p > buf && write(devnull, buf, (size_t)(p - buf)) < 0)
		die("write", -errno);
	t1 = now();
	c1 = cpu();
	sink = acc;
	if (cap == FULL_CAPACITY)
		snprintf(name, sizeof(name), "%s", names[what]);
	else
		snprintf(name, sizeof(name), "%s_cap%" PRIu64, names[what], cap);
	result(name, done, t1 - t0);
	strcat(name, "_cpu");
	result(name, done, c1 - c0);
	strace_plugins_free(ps);
	fmt_cleanup(&f);
	strace_names_free(nm);
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
	{
		char name[64];
		snprintf(name, sizeof(name), "populate_cap%" PRIu64, cap);
		result(name, pages, t1 - t0);
	}
	if (cap != STRACE_RING_DEFAULT_CAPACITY) {
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
	/* the compiler must not know what the buffers hold */
	__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
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
		/* one load per 64-byte line: the cost is fetching lines */
		for (size_t i = 0; i < len / 8; i += 32)
			acc += q[i] + q[i + 8] + q[i + 16] + q[i + 24];
		__asm__ volatile("" : : "r"(acc) : "memory");
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
	uint64_t cap = argc > 3 ? strtoull(argv[3], NULL, 0) : FULL_CAPACITY;

	if (!strcmp(what, "pipe"))
		return bench_pipe(n, argc > 3 ? strtoull(argv[3], NULL, 0) : 0);
	if (!strcmp(what, "produce"))
		return bench_produce(n);
	if (!strcmp(what, "consume"))
		return bench_read(n, CONSUME, cap);
	if (!strcmp(what, "cast"))
		return bench_read(n, CAST, cap);
	if (!strcmp(what, "text"))
		return bench_read(n, TEXT, cap);
	if (!strcmp(what, "plugin"))
		return bench_read(n, PLUGIN, cap);
	if (!strcmp(what, "plugin-off"))
		return bench_read(n, PLUGIN_OFF, cap);
	if (!strcmp(what, "json"))
		return bench_read(n, JSON, cap);
	if (!strcmp(what, "populate"))
		return bench_populate(argc > 2 ? strtoull(argv[2], NULL, 0)
					       : STRACE_RING_DEFAULT_CAPACITY);
	if (!strcmp(what, "membw"))
		return bench_membw();
	fprintf(stderr, "usage: bench_ring pipe|produce|consume|cast|text|json|"
			"plugin|plugin-off "
			"[N] | populate | membw\n");
	return 2;
}
