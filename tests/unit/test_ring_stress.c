/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_ring_stress.c - the shared ring under load, through the
 * public API only (strace/ring.h).
 *
 * The matrix: every mode (lossless, flight, archive) x readers attaching
 * before, during or after the writing x one writer (a thread) or eight
 * (4 threads in each of 2 processes) x one reader, three reader threads
 * (the third one slow), or three reader processes; then a writer process
 * SIGKILLed mid-stream in each mode, and lossless and flight rings smaller
 * than (64, 128) or close to (1024) what writers hold in their batches.
 * Reader threads share the case's ring handle (strace/ring.h allows it)
 * with each other and with a writer thread; reader processes map the ring
 * on their own.
 *
 * Payload, so that every event a reader gets can be checked on its own:
 *   type  STRACE_EV_CALL
 *   flags wid (writer id: process * 4 + thread, 0..7)
 *   tid   wid + 1
 *   a     wid << 32 | nonce (32 random bits of the case: an event of any
 *         other case or run, or a zeroed slot, never passes)
 *   b     seq, the event's number in its writer's sequence, from 0
 *   time  mix(a ^ mix(seq ^ golden)), a 64-bit hash of a and b
 * A single writer's event seq is at position seq, which makes a stale slot
 * (an event of an earlier lap, a slot read at the wrong address) show at
 * once. With eight writers, each writer's numbers must follow each other
 * exactly while the reader has lost nothing since that writer's previous
 * event, and only increase across a loss.
 *
 * Each reader checks: every event valid (in flight mode, the events that
 * strace_reader_release() does not report overwritten; the batch is first
 * copied with relaxed 8-byte atomic loads, as it may be overwritten
 * meanwhile); positions consecutive (b->seq == previous end + b->lost);
 * events seen + invalid + lost (b->lost, release) + positions under a LOST
 * marker == end - start, and lost == strace_reader_lost(); no loss at all
 * in lossless and archive modes, every event of every writer seen; in
 * flight mode, the last events of each writer reach its end; the stream
 * ends with STRACE_READER_END (STRACE_READER_WRITER_GONE after a kill).
 *
 * When readers attach: "before" any event is written; "during": flight and
 * archive writers pause after a quarter of their events, the readers
 * attach and catch up, then the writing goes on under readers that wait
 * at its end (an archive grows under them), while lossless readers attach
 * once half the ring is filled; "after": flight and archive writers are
 * done, lossless ones have filled the ring and wait for a reader. All the
 * readers of a case attach before any reads. Writers flush at random
 * points (batches start anywhere, and straddle the end of the ring) and,
 * but in lossless mode, pause now and then so that readers keep up.
 * Eight writers on an archive grow it from threads (one handle) and from
 * processes (their own handles) at once.
 *
 * Each case runs in a forked process group, with a watchdog: a crash is a
 * FAIL line with its signal, and so is a hang (no event written or read
 * for STRESS_STALL seconds) or a case that runs past STRESS_CASE_MAX
 * seconds. Processes of a case are forked before any thread is created
 * (ThreadSanitizer does not support fork after threads). A case's stderr
 * is passed on after it, and a sanitizer's SUMMARY line goes into the FAIL
 * line. ThreadSanitizer: make check-ring SAN=thread (build/tsan), as CI
 * runs it.
 *
 * Environment: STRESS_N events a case writes (default 2^20; a killed
 * writer is killed after N/4, small rings get N/4), STRESS_SEED,
 * STRESS_STALL (default 10), STRESS_CASE_MAX (default 300), STRESS_DIR
 * (default /dev/shm), STRESS_VERBOSE=1 for per-reader figures and times.
 * Usage: test_ring_stress [substring]: only the cases whose name has it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strace/ring.h"

#define PROG "ring_stress"
#define WTHREADS 4 /* writer threads in each writer process */
#define WPROCS 2
#define MAXW (WTHREADS * WPROCS)
#define MAXR 3
#define SLOW_READER 2  /* of three readers, this one sleeps now and then */
#define TOLD_PER_READER 3 /* bad events described in full, per reader */
#define TOLD_PER_CASE 12  /* failure lines on stderr, per case */

enum attach { AT_BEFORE, AT_DURING, AT_AFTER, AT_KILL };

struct scase {
	char name[96];
	int mode;
	int attach;
	int nw;    /* 1: a thread of the case; 8: 4 threads x 2 processes */
	int nr;
	int rproc; /* readers are processes, else threads */
	uint64_t cap;
	uint64_t total; /* events written (all writers; kill: before it) */
	int direct;     /* lossless writers store in place
			 * (strace_writer_set_direct()) */
	const char *skip;
};

/* What the case process was doing, for a hang's message. */
enum stage {
	ST_SETUP,
	ST_OPEN,
	ST_ATTACH,
	ST_WRITE,
	ST_FILL,
	ST_KILL,
	ST_CATCHUP,
	ST_READ,
	ST_JOIN,
	ST_CHECK,
};
static const char *const stage_name[] = {
	"setting up",
	"waiting for the writers to open",
	"waiting for the readers to attach",
	"waiting for the writers to write",
	"waiting for a lossless writer to fill the ring",
	"waiting to kill the writer",
	"waiting for the readers to catch up with the paused writers",
	"waiting for the readers to end",
	"waiting for the writers to end",
	"checking",
};

struct line {
	_Atomic uint64_t v;
	char pad[56];
};

/* A reader's figures, for the case's checks and STRESS_VERBOSE. */
struct rres {
	uint64_t start, end, seen, invalid;
	uint64_t lost_next, lost_release, lost_marked;
	uint64_t pads; /* PADs of writers in place (positions, no event) */
	int status;
	_Atomic int done;
};

/* Shared by the test, a case and every process of the case. */
struct shared {
	struct line emitted[MAXW]; /* per writer, every 64 events */
	struct line rpos[MAXR];    /* per reader: its position */
	_Atomic uint64_t beat;     /* bumped at each stage */
	_Atomic int stage;
	_Atomic int writers_open, writers_paused, writers_done;
	_Atomic int write_go, resume, attach_go, attached;
	_Atomic int nfail, ncrash;
	char why[512];   /* the first failure */
	char crash[256]; /* the first process of the case killed by a signal */
	struct rres res[MAXR];
};

/* Set before a case forks or starts threads; read-only after. */
static struct shared *shm;
static const struct scase *cur;
static char ring_path[512];
static uint32_t nonce;
static uint64_t per_writer;   /* events each writer writes */
static uint64_t pause_at;     /* a writer waits there for the readers */
static struct strace_ring *ring; /* the case's handle, shared by threads */
static int verbose;
static char dir[256]; /* the test's directory: rings, captured stderr */

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static uint64_t ev_a(unsigned wid)
{
	return (uint64_t)wid << 32 | nonce;
}

static uint64_t ev_check(uint64_t a, uint64_t seq)
{
	return mix(a ^ mix(seq ^ 0x9e3779b97f4a7c15ull));
}

static const char *mode_name(int mode, int direct)
{
	return mode == STRACE_RING_LOSSLESS ? direct ? "lossless-direct"
						     : "lossless"
	       : mode == STRACE_RING_FLIGHT ? "flight"
					    : "archive";
}

static void set_stage(int st)
{
	atomic_store(&shm->stage, st);
	atomic_fetch_add(&shm->beat, 1);
}

/* Record a failure of the case: the first one becomes the FAIL line's
 * reason; the first few go to stderr. Any thread or process may call it. */
static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	char buf[sizeof(shm->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	int k = atomic_fetch_add(&shm->nfail, 1);
	if (k == 0)
		memcpy(shm->why, buf, sizeof(buf));
	if (k < TOLD_PER_CASE)
		fprintf(stderr, "  %s/%s: %s\n", PROG, cur->name, buf);
}

/* Wait until *v >= n; the watchdog ends a wait that never ends. */
static void wait_for(_Atomic int *v, int n)
{
	while (atomic_load(v) < n)
		usleep(100);
}

/* --- writers ----------------------------------------------------------- */

struct wctx {
	struct strace_ring *ring;
	unsigned wid;
	uint64_t n; /* events to write; UINT64_MAX: until killed */
};

static void *writer_main(void *arg)
{
	struct wctx *x = arg;
	struct strace_writer *w;
	uint64_t a = ev_a(x->wid), s;
	uint64_t rng = mix(nonce ^ ((uint64_t)x->wid + 1) * 0x9e3779b1u);
	uint64_t next_flush = rnd(&rng) % 1024;
	int rc = strace_writer_open(x->ring, &w);

	atomic_fetch_add(&shm->writers_open, 1);
	if (rc < 0) {
		failf("writer %u: strace_writer_open: %s", x->wid,
		      strace_strerror(rc));
		atomic_fetch_add(&shm->writers_done, 1);
		return NULL;
	}
	/* Every writer opens before any writes: a reader must not see the
	 * end of the stream while a writer has yet to open. */
	strace_writer_set_direct(w, cur->direct);
	wait_for(&shm->writers_open, cur->nw);
	wait_for(&shm->write_go, 1);
	for (s = 0; s < x->n; s++) {
		if (s == pause_at) {
			rc = strace_writer_flush(w);
			if (rc < 0)
				failf("writer %u: flush: %s", x->wid,
				      strace_strerror(rc));
			atomic_fetch_add(&shm->writers_paused, 1);
			wait_for(&shm->resume, 1);
		}
		rc = strace_writer_emit(w, STRACE_EV_CALL, (uint16_t)x->wid,
					x->wid + 1, ev_check(a, s), a, s);
		if (rc < 0) {
			failf("writer %u: emit of seq %" PRIu64 ": %s", x->wid,
			      s, strace_strerror(rc));
			break;
		}
		if ((s & 63) == 63)
			atomic_store_explicit(&shm->emitted[x->wid].v, s + 1,
					      memory_order_relaxed);
		/* Flush now and then before the batch is full: batches then
		 * start anywhere in the ring, and straddle its end. */
		if (s == next_flush) {
			rc = strace_writer_flush(w);
			if (rc < 0) {
				failf("writer %u: flush: %s", x->wid,
				      strace_strerror(rc));
				break;
			}
			next_flush = s + 1 + rnd(&rng) % 1024;
		}
		/* Give the readers a chance to keep up, so that they read
		 * slots while these are overwritten (flight mode), instead of
		 * being lapped whole, and wait at the end of an archive while
		 * it grows. */
		if ((s & 255) == 255 && cur->mode != STRACE_RING_LOSSLESS &&
		    rnd(&rng) % 8 == 0)
			usleep((useconds_t)(rnd(&rng) % 100));
	}
	atomic_store_explicit(&shm->emitted[x->wid].v, s, memory_order_relaxed);
	rc = strace_writer_close(w);
	if (rc < 0)
		failf("writer %u: strace_writer_close: %s", x->wid,
		      strace_strerror(rc));
	atomic_fetch_add(&shm->writers_done, 1);
	return NULL;
}

/* A writer process: WTHREADS writer threads on its own mapping. */
static void writer_proc(int p)
{
	struct strace_ring *r;
	pthread_t th[WTHREADS];
	struct wctx x[WTHREADS];
	int rc = strace_ring_open(ring_path, &r);

	if (rc < 0) {
		failf("writer process %d: strace_ring_open: %s", p,
		      strace_strerror(rc));
		atomic_fetch_add(&shm->writers_open, WTHREADS);
		atomic_fetch_add(&shm->writers_done, WTHREADS);
		exit(1);
	}
	for (int t = 0; t < WTHREADS; t++) {
		x[t] = (struct wctx){r, (unsigned)(p * WTHREADS + t),
				     per_writer};
		rc = pthread_create(&th[t], NULL, writer_main, &x[t]);
		if (rc) {
			failf("writer process %d: pthread_create: %s", p,
			      strerror(rc));
			exit(1);
		}
	}
	for (int t = 0; t < WTHREADS; t++)
		pthread_join(th[t], NULL);
	strace_ring_close(r);
	exit(0);
}

/* The writer that gets killed: one process, writing until then. */
static void kill_writer_proc(int unused)
{
	struct strace_ring *r;
	int rc = strace_ring_open(ring_path, &r);

	(void)unused;
	if (rc < 0) {
		failf("writer process: strace_ring_open: %s",
		      strace_strerror(rc));
		exit(1);
	}
	struct wctx x = {r, 0, UINT64_MAX};
	writer_main(&x);
	failf("the writer to be killed stopped writing by itself");
	exit(1);
}

/* --- readers ----------------------------------------------------------- */

/* What a reader knows about the stream so far. */
struct vstate {
	int k;
	uint64_t next[MAXW];  /* next seq expected of each writer */
	uint8_t gap_ok[MAXW]; /* a loss since its last event: seq may jump */
	uint8_t since_loss[MAXW]; /* an event of it since the last loss */
	uint64_t seen, invalid, lost_marked;
	uint64_t pad_left; /* PAD events still due in a LOST range */
	uint64_t pads;     /* PADs of a batch written in place that ended
			    * early */
	uint64_t nbad;
};

static void bad_event(struct vstate *v, uint64_t pos,
		      const struct strace_event *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void bad_event(struct vstate *v, uint64_t pos,
		      const struct strace_event *e, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	if (++v->nbad > TOLD_PER_READER)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	failf("reader %d at position %" PRIu64 ": %s: {type %u flags %#x "
	      "tid %u time %#" PRIx64 " a %#" PRIx64 " b %" PRIu64 "}",
	      v->k, pos, what, e->type, e->flags, e->tid, e->time, e->a, e->b);
}

static void loss(struct vstate *v)
{
	memset(v->gap_ok, 1, sizeof(v->gap_ok));
	memset(v->since_loss, 0, sizeof(v->since_loss));
	v->pad_left = 0;
}

static int is_zero(const struct strace_event *e)
{
	return !e->type && !e->flags && !e->tid && !e->time && !e->a && !e->b;
}

static void check_event(struct vstate *v, const struct strace_event *e,
			uint64_t pos)
{
	if (v->pad_left) {
		if (is_zero(e)) {
			v->pad_left--;
			return;
		}
		bad_event(v, pos, e, "not a PAD inside a LOST range");
		v->pad_left = 0;
	}
	if (e->type == STRACE_EV_PAD && cur->direct && e->b == pos &&
	    e->a && !e->flags && !e->tid && !e->time) {
		/* what a writer in place did not use, when another writer
		 * had taken the positions after it */
		v->pads++;
		return;
	}
	if (e->type == STRACE_EV_LOST) {
		if (cur->attach != AT_KILL) {
			bad_event(v, pos, e, "a LOST event, and no writer died");
		} else if (e->flags != STRACE_LOST_WRITER || e->b != pos ||
			   e->a == 0 || e->a > (1u << 20)) {
			bad_event(v, pos, e, "a malformed LOST event");
		} else {
			v->lost_marked += e->a;
			loss(v);
			v->pad_left = e->a - 1;
			return;
		}
		v->invalid++;
		return;
	}
	unsigned wid = (unsigned)(e->a >> 32);
	if (e->type != STRACE_EV_CALL || (uint32_t)e->a != nonce ||
	    wid >= (unsigned)cur->nw || e->flags != wid || e->tid != wid + 1 ||
	    e->time != ev_check(e->a, e->b)) {
		v->invalid++;
		if (is_zero(e))
			bad_event(v, pos, e, "a zeroed slot (never written)");
		else if (e->time == ev_check(e->a, e->b))
			bad_event(v, pos, e, "an event that is not this case's");
		else if (cur->mode == STRACE_RING_FLIGHT)
			bad_event(v, pos, e,
				  "a torn event that release did not report "
				  "overwritten");
		else
			bad_event(v, pos, e, "a torn or garbage event");
		return;
	}
	uint64_t s = e->b;
	if (cur->nw == 1 && s != pos) {
		/* One writer: its event seq is at position seq. */
		bad_event(v, pos, e,
			  "a stale slot: writer 0's event %" PRIu64
			  " is at position %" PRIu64 " (%+" PRId64
			  " positions off)",
			  s, s, (int64_t)(s - pos));
	} else if (v->gap_ok[wid] ? s < v->next[wid] : s != v->next[wid]) {
		bad_event(v, pos, e,
			  "writer %u's event %" PRIu64 " where %s %" PRIu64
			  " was due (%s)",
			  wid, s, v->gap_ok[wid] ? "at least" : "exactly",
			  v->next[wid],
			  s < v->next[wid] ? "a repeat or a stale slot"
					   : "a gap with no loss reported");
	}
	v->next[wid] = s + 1;
	v->gap_ok[wid] = 0;
	v->since_loss[wid] = 1;
	v->seen++;
}

/* Copy a batch that writers may overwrite meanwhile (flight mode): 8-byte
 * relaxed atomic loads, so that the overlap is not a data race; a torn
 * copy is what strace_reader_release() reports. */
static void copy_relaxed(struct strace_event *dst,
			 const struct strace_event *src, size_t n)
{
	const uint64_t *s = (const uint64_t *)(const void *)src;
	uint64_t *d = (uint64_t *)(void *)dst;

	for (size_t i = 0; i < n * (STRACE_EVENT_SIZE / 8); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/* The checks at the end of a reader's stream. */
static void check_end(struct vstate *v, struct rres *res,
		      struct strace_reader *rd)
{
	const struct scase *c = cur;
	int k = v->k;
	uint64_t lost = res->lost_next + res->lost_release;
	int want = c->attach == AT_KILL ? STRACE_READER_WRITER_GONE
					: STRACE_READER_END;

	if (res->status != want)
		failf("reader %d: ended with status %d, not %d, at position "
		      "%" PRIu64,
		      k, res->status, want, res->end);
	if (strace_reader_lost(rd) != lost)
		failf("reader %d: strace_reader_lost() says %" PRIu64
		      " lost, the batches and releases said %" PRIu64,
		      k, strace_reader_lost(rd), lost);
	if (res->end - res->start !=
	    v->seen + v->invalid + lost + v->lost_marked + v->pads)
		failf("reader %d: positions %" PRIu64 "..%" PRIu64
		      " (%" PRIu64 ") != %" PRIu64 " seen + %" PRIu64
		      " invalid + %" PRIu64 " lost + %" PRIu64
		      " under LOST events + %" PRIu64 " pads",
		      k, res->start, res->end, res->end - res->start, v->seen,
		      v->invalid, lost, v->lost_marked, v->pads);
	if (v->pad_left)
		failf("reader %d: the stream ended inside a LOST range "
		      "(%" PRIu64 " PAD events missing)",
		      k, v->pad_left);
	if (c->mode != STRACE_RING_FLIGHT) {
		/* Lossless and archive: everything, from 0, once. */
		if (res->start != 0)
			failf("reader %d: started at position %" PRIu64
			      ", not 0, in %s mode",
			      k, res->start, mode_name(c->mode, c->direct));
		if (c->attach == AT_KILL) {
			if (v->seen != v->next[0])
				failf("reader %d: saw %" PRIu64 " events of "
				      "the killed writer, numbered up to "
				      "%" PRIu64,
				      k, v->seen, v->next[0]);
			return;
		}
		if (v->seen != c->total)
			failf("reader %d: saw %" PRIu64 " events of %" PRIu64,
			      k, v->seen, c->total);
		for (int w = 0; w < c->nw; w++)
			if (v->next[w] != per_writer)
				failf("reader %d: writer %d's events end at "
				      "%" PRIu64 ", not %" PRIu64,
				      k, w, v->next[w], per_writer);
		return;
	}
	if (c->attach == AT_KILL)
		return;
	if (res->end != c->total)
		failf("reader %d: ended at position %" PRIu64 ", not %" PRIu64,
		      k, res->end, c->total);
	if (c->attach == AT_BEFORE && res->start != 0)
		failf("reader %d: attached before any event, started at "
		      "position %" PRIu64,
		      k, res->start);
	if (c->attach == AT_AFTER) {
		/* The writers are done: what is left, exactly, no loss. */
		uint64_t left = c->total < c->cap ? c->total : c->cap;
		if (res->start != c->total - left || lost || v->seen != left)
			failf("reader %d: attached after the writing, read "
			      "%" PRIu64 " events from position %" PRIu64
			      " with %" PRIu64 " lost; want the last %" PRIu64
			      " from %" PRIu64 " with none lost",
			      k, v->seen, res->start, lost, left,
			      c->total - left);
	}
	/* After the last loss every position was delivered: each writer seen
	 * since then must have been read to its last event. */
	for (int w = 0; w < c->nw; w++)
		if (v->since_loss[w] && v->next[w] != per_writer)
			failf("reader %d: writer %d's events end at %" PRIu64
			      ", not %" PRIu64 ", with no loss after them",
			      k, w, v->next[w], per_writer);
}

static void reader_run(struct strace_ring *r, int k)
{
	const struct scase *c = cur;
	int flight = c->mode == STRACE_RING_FLIGHT;
	int slow = c->nr == MAXR && k == SLOW_READER;
	uint64_t rng = mix(nonce ^ ((uint64_t)k + 1) * 0x632be59bd9b4e019ull);
	struct rres *res = &shm->res[k];
	struct strace_event *copy = NULL;
	struct strace_reader *rd;
	struct strace_batch b;
	struct vstate v;
	uint64_t pos = 0;
	int started = 0;

	memset(&v, 0, sizeof(v));
	v.k = k;
	res->status = -1;
	if (flight) {
		copy = malloc(c->cap * sizeof(*copy));
		if (!copy) {
			failf("reader %d: out of memory", k);
			atomic_fetch_add(&shm->attached, 1);
			return;
		}
	}
	int rc = strace_reader_open(r, 0, &rd);
	atomic_fetch_add(&shm->attached, 1);
	if (rc < 0) {
		failf("reader %d: strace_reader_open: %s", k,
		      strace_strerror(rc));
		free(copy);
		return;
	}
	/* Lossless: a reader that attaches once another has read may start
	 * later than position 0; all attach before any reads. */
	wait_for(&shm->attached, c->nr);
	for (;;) {
		size_t max = slow || rnd(&rng) % 4 == 0 ? 0
							: 1 + rnd(&rng) % 512;
		long n = strace_reader_next(rd, &b, max, 50);
		if (n < 0) {
			failf("reader %d: strace_reader_next: %s", k,
			      strace_strerror((int)n));
			break;
		}
		if (!started) {
			pos = res->start = b.seq - b.lost;
			started = 1;
			memset(v.gap_ok, pos != 0, sizeof(v.gap_ok));
		}
		if (b.seq != pos + b.lost)
			failf("reader %d: a batch at position %" PRIu64
			      " after position %" PRIu64 " and %" PRIu64
			      " lost",
			      k, b.seq, pos, b.lost);
		if (b.lost) {
			res->lost_next += b.lost;
			loss(&v);
			if (!flight)
				failf("reader %d: %" PRIu64 " events lost "
				      "before position %" PRIu64 " in %s "
				      "mode (a false loss)",
				      k, b.lost, b.seq,
				      mode_name(c->mode, c->direct));
		}
		pos = b.seq;
		if (n == 0) {
			atomic_store_explicit(&shm->rpos[k].v, pos,
					      memory_order_relaxed);
			int st = strace_reader_status(rd);
			if (st != STRACE_READER_LIVE) {
				res->status = st;
				break;
			}
			continue;
		}
		if ((size_t)n != b.n || !b.ev || (max && (size_t)n > max)) {
			failf("reader %d: strace_reader_next returned %ld, "
			      "b.n %zu, b.ev %p, max %zu",
			      k, n, b.n, (const void *)b.ev, max);
			break;
		}
		size_t bad = 0, m = (size_t)n;
		if (flight) {
			if (m > c->cap) {
				failf("reader %d: a batch of %zu events in a "
				      "ring of %" PRIu64,
				      k, m, c->cap);
				m = c->cap;
			}
			copy_relaxed(copy, b.ev, m);
			bad = strace_reader_release(rd, &b);
			if (bad > (size_t)n) {
				failf("reader %d: release says %zu of %ld "
				      "overwritten",
				      k, bad, n);
				bad = (size_t)n;
			}
			if (bad) {
				res->lost_release += bad;
				loss(&v);
			}
			for (size_t i = bad; i < m; i++)
				check_event(&v, &copy[i], b.seq + i);
		} else {
			/* In place: lossless and archive slots stay put
			 * until released. */
			for (size_t i = 0; i < m; i++)
				check_event(&v, &b.ev[i], b.seq + i);
			bad = strace_reader_release(rd, &b);
			if (bad) {
				failf("reader %d: release says %zu events "
				      "at position %" PRIu64 " were "
				      "overwritten, in %s mode",
				      k, bad, b.seq,
				      mode_name(c->mode, c->direct));
				res->lost_release += bad;
			}
		}
		pos = b.seq + (uint64_t)n;
		atomic_store_explicit(&shm->rpos[k].v, pos,
				      memory_order_relaxed);
		if (slow && rnd(&rng) % 4 == 0)
			usleep((useconds_t)(rnd(&rng) % 2001));
	}
	if (v.nbad > TOLD_PER_READER)
		failf("reader %d: %" PRIu64 " bad events in all", k, v.nbad);
	res->end = pos;
	res->seen = v.seen;
	res->invalid = v.invalid;
	res->lost_marked = v.lost_marked;
	res->pads = v.pads;
	if (res->status != -1)
		check_end(&v, res, rd);
	atomic_store(&res->done, 1);
	strace_reader_close(rd);
	free(copy);
}

static void *reader_thread(void *arg)
{
	reader_run(ring, (int)(intptr_t)arg);
	return NULL;
}

/* A reader process: its own mapping of the ring. */
static void reader_proc(int k)
{
	struct strace_ring *r;

	wait_for(&shm->attach_go, 1);
	int rc = strace_ring_open(ring_path, &r);
	if (rc < 0) {
		failf("reader process %d: strace_ring_open: %s", k,
		      strace_strerror(rc));
		atomic_fetch_add(&shm->attached, 1);
		exit(1);
	}
	reader_run(r, k);
	strace_ring_close(r);
	exit(0);
}

/* --- one case, in its own process -------------------------------------- */

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		/* Die with the case, whatever kills it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		fn(arg);
		_exit(1);
	}
	if (pid < 0)
		failf("fork: %s", strerror(errno));
	return pid;
}

static void reap(pid_t pid, const char *what, int k)
{
	int status;

	if (pid <= 0)
		return;
	if (waitpid(pid, &status, 0) < 0) {
		failf("%s %d: waitpid: %s", what, k, strerror(errno));
		return;
	}
	if (WIFSIGNALED(status)) {
		failf("%s %d: killed by signal %d (%s)", what, k,
		      WTERMSIG(status), strsignal(WTERMSIG(status)));
		if (atomic_fetch_add(&shm->ncrash, 1) == 0)
			snprintf(shm->crash, sizeof(shm->crash),
				 "crash: %s %d killed by signal %d (%s)", what,
				 k, WTERMSIG(status),
				 strsignal(WTERMSIG(status)));
	}
	else if (WEXITSTATUS(status) != 0)
		failf("%s %d: exit status %d", what, k, WEXITSTATUS(status));
}

static uint64_t committed_now(struct strace_ring *mon)
{
	struct strace_ring_stat st;
	return strace_ring_stat(mon, &st) < 0 ? 0 : st.committed;
}

static uint64_t written_now(void)
{
	uint64_t n = 0;
	for (int w = 0; w < MAXW; w++)
		n += atomic_load_explicit(&shm->emitted[w].v,
					  memory_order_relaxed);
	return n;
}

/* Lossless, no reader yet: wait until the writers fill the ring and stop;
 * they must not have gone past it. */
static void wait_full(struct strace_ring *mon)
{
	struct strace_ring_stat st;
	uint64_t last = UINT64_MAX, last_written = 0, since = 0;

	for (;;) {
		usleep(1000);
		if (strace_ring_stat(mon, &st) < 0)
			continue;
		uint64_t t = ms_now(), n = written_now();
		if (st.committed != last || n != last_written ||
		    st.committed <= cur->cap / 2) {
			last = st.committed;
			last_written = n;
			since = t;
		} else if (t - since >= 100) {
			break;
		}
	}
	if (st.reserved > cur->cap || st.committed != st.reserved)
		failf("lossless, no reader yet: %" PRIu64 " events reserved, "
		      "%" PRIu64 " committed, in a ring of %" PRIu64,
		      st.reserved, st.committed, cur->cap);
}

static int case_main(void)
{
	const struct scase *c = cur;
	struct strace_ring_opts o = {sizeof(o), c->cap, 4096, c->mode, 0, 0};
	struct strace_ring *mon = NULL;
	pthread_t wt, rt[MAXR];
	pid_t wp[WPROCS] = {0}, rp[MAXR] = {0}, killed = 0;
	int nwp = 0, have_wt = 0, have_rt[MAXR] = {0}, rc;
	uint64_t rng = mix(nonce ^ 0x5bd1e995u);

	set_stage(ST_SETUP);
	rc = strace_ring_create(ring_path, &o, &ring);
	if (rc < 0) {
		failf("strace_ring_create: %s", strace_strerror(rc));
		return 1;
	}
	per_writer = c->attach == AT_KILL ? UINT64_MAX
					  : c->total / (uint64_t)c->nw;
	pause_at = c->attach == AT_DURING && c->mode != STRACE_RING_LOSSLESS
			   ? per_writer / 4
			   : UINT64_MAX;

	/* Processes first: no fork once a thread runs. */
	if (c->attach == AT_KILL)
		killed = spawn(kill_writer_proc, 0);
	else if (c->nw > 1)
		for (int p = 0; p < WPROCS; p++)
			wp[nwp++] = spawn(writer_proc, p);
	if (c->rproc)
		for (int k = 0; k < c->nr; k++)
			rp[k] = spawn(reader_proc, k);

	rc = strace_ring_open(ring_path, &mon);
	if (rc < 0) {
		failf("strace_ring_open (monitor): %s", strace_strerror(rc));
		return 1;
	}
	struct wctx wx = {ring, 0, per_writer};
	if (c->nw == 1 && c->attach != AT_KILL) {
		rc = pthread_create(&wt, NULL, writer_main, &wx);
		if (rc) {
			failf("pthread_create: %s", strerror(rc));
			return 1;
		}
		have_wt = 1;
	}
	set_stage(ST_OPEN);
	wait_for(&shm->writers_open, c->nw);

	/* Attach the readers at the case's point of the writing. */
	if (c->attach == AT_DURING) {
		atomic_store(&shm->write_go, 1);
		set_stage(ST_WRITE);
		if (c->mode == STRACE_RING_LOSSLESS) {
			uint64_t want = c->cap / 2;
			while (committed_now(mon) < want)
				usleep(1000);
		} else {
			wait_for(&shm->writers_paused, c->nw);
		}
	} else if (c->attach == AT_AFTER) {
		atomic_store(&shm->write_go, 1);
		if (c->mode == STRACE_RING_LOSSLESS) {
			/* No reader yet: the writers fill the ring and
			 * wait (no event written for 100 ms). */
			set_stage(ST_FILL);
			wait_full(mon);
		} else {
			set_stage(ST_WRITE);
			wait_for(&shm->writers_done, c->nw);
		}
	}
	set_stage(ST_ATTACH);
	if (c->rproc) {
		atomic_store(&shm->attach_go, 1);
	} else {
		for (int k = 0; k < c->nr; k++) {
			rc = pthread_create(&rt[k], NULL, reader_thread,
					    (void *)(intptr_t)k);
			if (rc) {
				failf("pthread_create: %s", strerror(rc));
				atomic_fetch_add(&shm->attached, 1);
				continue;
			}
			have_rt[k] = 1;
		}
	}
	wait_for(&shm->attached, c->nr);
	atomic_store(&shm->write_go, 1);
	if (pause_at != UINT64_MAX) {
		/* The readers catch up with the paused writers first: the
		 * writing then goes on under readers that wait at its end
		 * (an archive grows under them). */
		uint64_t paused = committed_now(mon);
		set_stage(ST_CATCHUP);
		for (int k = 0; k < c->nr; k++)
			while (atomic_load_explicit(&shm->rpos[k].v,
						    memory_order_relaxed) <
				       paused &&
			       !atomic_load(&shm->res[k].done))
				usleep(100);
	}
	atomic_store(&shm->resume, 1);

	if (c->attach == AT_KILL) {
		uint64_t at = c->total + rnd(&rng) % 4096;
		set_stage(ST_KILL);
		while (atomic_load_explicit(&shm->emitted[0].v,
					    memory_order_relaxed) < at)
			usleep(100);
		if (killed > 0) {
			kill(killed, SIGKILL);
			waitpid(killed, NULL, 0);
		}
	}

	set_stage(ST_READ);
	for (int k = 0; k < c->nr; k++)
		if (have_rt[k])
			pthread_join(rt[k], NULL);
	for (int k = 0; k < c->nr; k++)
		reap(rp[k], "reader process", k);
	set_stage(ST_JOIN);
	if (have_wt)
		pthread_join(wt, NULL);
	for (int p = 0; p < nwp; p++)
		reap(wp[p], "writer process", p);

	set_stage(ST_CHECK);
	struct strace_ring_stat st;
	rc = strace_ring_stat(mon, &st);
	if (rc < 0) {
		failf("strace_ring_stat: %s", strace_strerror(rc));
	} else if (c->attach == AT_KILL) {
		if (st.committed != st.reserved || st.writers_dead != 1)
			failf("after the kill: reserved %" PRIu64
			      ", committed %" PRIu64 ", %u dead writers",
			      st.reserved, st.committed, st.writers_dead);
		for (int k = 0; k < c->nr; k++)
			if (shm->res[k].done &&
			    shm->res[k].end != st.committed)
				failf("reader %d: ended at position %" PRIu64
				      ", the ring at %" PRIu64,
				      k, shm->res[k].end, st.committed);
	} else if (st.committed != c->total + shm->res[0].pads ||
		   st.reserved != st.committed || !st.closed ||
		   st.writers_dead) {
		failf("at the end: reserved %" PRIu64 ", committed %" PRIu64
		      " of %" PRIu64 " written and %" PRIu64
		      " pads, closed %d, %u dead writers",
		      st.reserved, st.committed, c->total, shm->res[0].pads,
		      st.closed, st.writers_dead);
	}
	for (int k = 1; k < c->nr && c->attach != AT_KILL; k++)
		if (shm->res[k].done && shm->res[k].pads != shm->res[0].pads)
			failf("reader %d saw %" PRIu64 " pads, reader 0 %" PRIu64,
			      k, shm->res[k].pads, shm->res[0].pads);
	for (int k = 0; k < c->nr; k++) {
		const struct rres *r = &shm->res[k];
		if (!r->done)
			failf("reader %d did not finish", k);
		else if (verbose)
			fprintf(stderr,
				"  %s/%s: reader %d: %" PRIu64 "..%" PRIu64
				" seen %" PRIu64 " lost %" PRIu64 "+%" PRIu64
				" marked %" PRIu64 " status %d\n",
				PROG, c->name, k, r->start, r->end, r->seen,
				r->lost_next, r->lost_release, r->lost_marked,
				r->status);
	}
	strace_ring_close(mon);
	strace_ring_close(ring);
	return atomic_load(&shm->nfail) ? 1 : 0;
}

/* --- the test program: the matrix, each case forked and watched ---------- */

static uint64_t progress(void)
{
	uint64_t p = atomic_load(&shm->beat) + written_now();
	for (int k = 0; k < MAXR; k++)
		p += atomic_load_explicit(&shm->rpos[k].v,
					  memory_order_relaxed);
	return p + (uint64_t)atomic_load(&shm->attached) +
	       (uint64_t)atomic_load(&shm->writers_done);
}

/* The ring's counters, seen from outside, for a hang's message. */
static void ring_state(char *buf, size_t len)
{
	struct strace_ring *r;
	struct strace_ring_stat st;

	buf[0] = '\0';
	if (strace_ring_open(ring_path, &r) < 0)
		return;
	if (strace_ring_stat(r, &st) == 0)
		snprintf(buf, len,
			 "; ring: capacity %" PRIu64 ", reserved %" PRIu64
			 ", committed %" PRIu64 ", tail %" PRIu64,
			 st.capacity, st.reserved, st.committed, st.tail);
	strace_ring_close(r);
}

/* Reap whatever the case left behind (we are their subreaper). */
static void reap_orphans(void)
{
	for (int i = 0; i < 400; i++) {
		pid_t p = waitpid(-1, NULL, WNOHANG);
		if (p < 0)
			return; /* ECHILD: none left */
		if (p == 0)
			usleep(5000);
	}
}

/* Pass on what a case wrote to stderr (errfd); keep the line that sums
 * up a sanitizer's report, if there is one, for the FAIL line. */
static void pass_stderr(int errfd, char *san, size_t len)
{
	struct stat st;
	char *buf;

	san[0] = '\0';
	if (errfd < 0 || fstat(errfd, &st) < 0 || st.st_size == 0)
		return;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return;
	ssize_t n = pread(errfd, buf, (size_t)st.st_size, 0);
	if (n <= 0) {
		free(buf);
		return;
	}
	buf[n] = '\0';
	fwrite(buf, 1, (size_t)n, stderr);
	static const char *const keys[] = {"SUMMARY: ", "ERROR: ",
					   "WARNING: ", "runtime error: "};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !san[0];
	     i++) {
		const char *p = strstr(buf, keys[i]);
		if (p)
			snprintf(san, len, "%.*s", (int)strcspn(p, "\n"), p);
	}
	free(buf);
}

static int run_case(const struct scase *c, uint64_t stall_ms, uint64_t max_ms,
		    char *why, size_t len)
{
	siginfo_t si;
	int status, hang = 0;
	uint64_t t0 = ms_now(), last = t0, prog = UINT64_MAX;
	char state[256], san[200];

	memset(shm, 0, sizeof(*shm));
	why[0] = state[0] = '\0';
	unlink(ring_path);
	fflush(stdout);
	fflush(stderr);
	int errfd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		if (errfd >= 0)
			dup2(errfd, 2);
		cur = c;
		exit(case_main());
	}
	setpgid(pid, pid);
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)pid, &si,
			   WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid)
			break;
		uint64_t p = progress(), t = ms_now();
		if (p != prog) {
			prog = p;
			last = t;
		}
		if (t - last >= stall_ms || t - t0 >= max_ms) {
			hang = t - last >= stall_ms ? 1 : 2;
			ring_state(state, sizeof(state));
			break;
		}
		usleep(20000);
	}
	/* The case's process group: the case on a hang, and anything it
	 * left running (its pid is not reused until we reap it). */
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	reap_orphans();
	unlink(ring_path);
	pass_stderr(errfd, san, sizeof(san));
	if (errfd >= 0)
		close(errfd);

	const char *first = shm->why[0] ? shm->why : NULL;
	int stage = atomic_load(&shm->stage);
	const char *doing = stage >= 0 && stage <= ST_CHECK ? stage_name[stage]
							    : "?";
	if (hang) {
		uint64_t written = written_now();
		snprintf(why, len,
			 "%s for %.1f s, %s (%" PRIu64 " events written; "
			 "readers at %" PRIu64 ", %" PRIu64 ", %" PRIu64
			 "%s)%s%s",
			 hang == 1 ? "hang: no progress" : "too slow: ran",
			 (double)(hang == 1 ? stall_ms : max_ms) / 1000, doing,
			 written, atomic_load(&shm->rpos[0].v),
			 atomic_load(&shm->rpos[1].v),
			 atomic_load(&shm->rpos[2].v), state,
			 first ? "; first: " : "", first ? first : "");
		return 1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, len, "crash: signal %d (%s), %s%s%s%s%s",
			 WTERMSIG(status), strsignal(WTERMSIG(status)), doing,
			 san[0] ? "; " : "", san, first ? "; first: " : "",
			 first ? first : "");
		return 1;
	}
	if (WEXITSTATUS(status) == 0 && !first && !san[0])
		return 0;
	if (shm->crash[0])
		snprintf(why, len, "%s%s%s; first: %s", shm->crash,
			 san[0] ? "; " : "", san, first ? first : "-");
	else if (first)
		snprintf(why, len, "%s%s%s", first, san[0] ? "; " : "", san);
	else if (san[0])
		snprintf(why, len, "exit status %d: %s", WEXITSTATUS(status),
			 san);
	else
		snprintf(why, len, "exit status %d and no failure recorded",
			 WEXITSTATUS(status));
	return 1;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	return s && *s ? strtoull(s, NULL, 0) : def;
}

static struct scase *add(struct scase *v, int *n, int mode, int direct,
			 const char *at, int attach, int nw, int nr, int rproc,
			 uint64_t cap, uint64_t total)
{
	struct scase *c = &v[(*n)++];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s/%s/w%d/r%d%s",
		 mode_name(mode, direct), at, nw, nr, rproc ? "proc" : "");
	c->direct = direct;
	c->mode = mode;
	c->attach = attach;
	c->nw = nw;
	c->nr = nr;
	c->rproc = rproc;
	c->cap = cap;
	c->total = total / (uint64_t)nw * (uint64_t)nw;
	return c;
}

int main(int argc, char **argv)
{
	static const int modes[] = {STRACE_RING_LOSSLESS, STRACE_RING_FLIGHT,
				    STRACE_RING_ARCHIVE};
	static const struct {
		const char *name;
		int attach;
	} ats[] = {{"attach_before", AT_BEFORE},
		   {"attach_during", AT_DURING},
		   {"attach_after", AT_AFTER}};
	static const struct {
		int nw, nr, rproc;
	} sets[] = {{1, 1, 0}, {1, 3, 0}, {1, 3, 1},
		    {8, 1, 0}, {8, 3, 0}, {8, 3, 1}};
	static const uint64_t small[] = {64, 128, 1024};
	static struct scase cases[128];
	uint64_t n = env_u64("STRESS_N", 1u << 20);
	uint64_t seed = env_u64("STRESS_SEED", 0);
	uint64_t stall_ms = env_u64("STRESS_STALL", 10) * 1000;
	uint64_t max_ms = env_u64("STRESS_CASE_MAX", 300) * 1000;
	const char *base = getenv("STRESS_DIR");
	char name[300], why[1024];
	int ncase = 0, failed = 0, passed = 0, skipped = 0;

	verbose = getenv("STRESS_VERBOSE") && *getenv("STRESS_VERBOSE") == '1';
	if (n < 4096)
		n = 4096;
	if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;

	for (size_t m = 0; m < 3; m++)
		for (size_t a = 0; a < 3; a++)
			for (size_t s = 0; s < 6; s++)
				add(cases, &ncase, modes[m], 0, ats[a].name,
				    ats[a].attach, sets[s].nw, sets[s].nr,
				    sets[s].rproc,
				    modes[m] == STRACE_RING_ARCHIVE ? 64 : 4096,
				    n);
	for (size_t m = 0; m < 3; m++)
		for (int rproc = 0; rproc < 2; rproc++)
			add(cases, &ncase, modes[m], 0, "writer_killed",
			    AT_KILL, 1, 3, rproc,
			    modes[m] == STRACE_RING_ARCHIVE ? 64 : 4096, n / 4);
	for (size_t m = 0; m < 2; m++)
		for (size_t s = 0; s < 3; s++) {
			char at[16];
			snprintf(at, sizeof(at), "cap%" PRIu64, small[s]);
			add(cases, &ncase, modes[m], 0, at, AT_BEFORE, 1, 1, 0,
			    small[s], n / 4);
			add(cases, &ncase, modes[m], 0, at, AT_BEFORE, 8, 3, 0,
			    small[s], n / 4);
		}
	/* lossless writers storing in place: one, or eight taking turns */
	for (size_t a = 0; a < 3; a++)
		for (size_t s = 0; s < 6; s += 5)
			add(cases, &ncase, STRACE_RING_LOSSLESS, 1, ats[a].name,
			    ats[a].attach, sets[s].nw, sets[s].nr,
			    sets[s].rproc, 4096, n / 4);
	for (int rproc = 0; rproc < 2; rproc++)
		add(cases, &ncase, STRACE_RING_LOSSLESS, 1, "writer_killed",
		    AT_KILL, 1, 3, rproc, 4096, n / 4);
	for (size_t s = 0; s < 3; s += 2) {
		char at[16];
		snprintf(at, sizeof(at), "cap%" PRIu64, small[s]);
		add(cases, &ncase, STRACE_RING_LOSSLESS, 1, at, AT_BEFORE, 1,
		    1, 0, small[s], n / 4);
		add(cases, &ncase, STRACE_RING_LOSSLESS, 1, at, AT_BEFORE, 8,
		    3, 0, small[s], n / 4);
	}

	/* Guard pages around what cases report through: a ring mapped next
	 * to it that a writer overruns must not rewrite a case's verdict. */
	size_t guard = 64 << 10, shm_size = (sizeof(*shm) + 4095) & ~4095ul;
	uint8_t *g = mmap(NULL, shm_size + 2 * guard, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED ||
	    mmap(g + guard, shm_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	shm = (struct shared *)(void *)(g + guard);
	snprintf(dir, sizeof(dir), "%s/ring_stress.XXXXXX",
		 base && *base ? base : "/dev/shm");
	if (!mkdtemp(dir) && !base) {
		snprintf(dir, sizeof(dir), "/tmp/ring_stress.XXXXXX");
		mkdtemp(dir);
	}
	if (access(dir, W_OK) < 0) {
		perror(dir);
		return 1;
	}
	snprintf(ring_path, sizeof(ring_path), "%s/ring.srb", dir);
	/* Processes of a crashed case come back to us to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fprintf(stderr, "  %s: STRESS_N=%" PRIu64 " STRESS_SEED=%#" PRIx64 "\n",
		PROG, n, seed);

	uint64_t t_all = ms_now();
	for (int i = 0; i < ncase; i++) {
		const struct scase *c = &cases[i];
		snprintf(name, sizeof(name), "%s/%.*s", PROG,
			 (int)sizeof(c->name), c->name);
		if (argc > 1 && !strstr(name, argv[1]))
			continue;
		if (c->skip) {
			printf("SKIP: %s (%s)\n", name, c->skip);
			fflush(stdout);
			skipped++;
			continue;
		}
		nonce = (uint32_t)mix(seed + (uint64_t)i) | 1;
		uint64_t t0 = ms_now();
		int rc = run_case(c, stall_ms, max_ms, why, sizeof(why));
		if (rc) {
			printf("FAIL: %s (%s)\n", name, why);
			failed++;
		} else {
			printf("PASS: %s\n", name);
			passed++;
		}
		fflush(stdout);
		if (verbose)
			fprintf(stderr, "  %s: %.2f s\n", name,
				(double)(ms_now() - t0) / 1000);
	}
	rmdir(dir);
	fprintf(stderr, "  %s: %d passed, %d failed, %d skipped in %.1f s\n",
		PROG, passed, failed, skipped,
		(double)(ms_now() - t_all) / 1000);
	return failed ? 1 : 0;
}
