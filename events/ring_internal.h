/* SPDX-License-Identifier: MIT */
/*
 * events/ring_internal.h - the ring's internals, shared by its files
 * (events/ring_*.c): the process-side objects (the ring, its mappings,
 * writers and readers), the tuning constants, the helpers the per-event
 * paths inline, and the layers' internal calls. Internal: nothing outside
 * events/ includes it (the file format is ring_layout.h).
 *
 * Protocol in brief (docs/design.md states the invariants per mode):
 *  - A writer buffers a batch of events, reserves that many positions with
 *    a CAS on hdr->reserved (recording the range in its slot first, so that
 *    a crash leaves a repairable trace), copies them into the slots, waits
 *    for its turn and publishes them by storing hdr->committed = end
 *    (release). Commits therefore happen in reservation order and a reader
 *    only needs hdr->committed to know what is readable.
 *  - A batch is never larger than half the ring, so that it always fits.
 *  - Lossless writers never write position p unless p < tail + capacity,
 *    where tail is the minimum cursor of the attached readers, computed
 *    under hdr->lock (the same lock a reader takes to attach).
 *  - Flight-recorder readers read in place and check afterwards, seqlock
 *    style, that no writer had reserved far enough to overwrite them.
 *  - Archive rings never wrap: position p is slot p, the file grows, and
 *    the capacity in the header is raised (release) before any position
 *    beyond the old one is committed, so a reader that loads committed
 *    and then the capacity finds the file long enough. A process maps the
 *    file anew, beside its old mappings, when the file outgrows them: a
 *    mapping is never moved or unmapped before the ring is closed, so
 *    batches and strings handed out stay valid.
 *  - Sleeping uses futexes, only after a short spin, and with timeouts so
 *    that a dead peer is noticed: a dead writer's reserved range is filled
 *    with a LOST event and committed by whoever is stuck behind it; a dead
 *    reader is dropped from the lossless minimum.
 */
#ifndef EVENTS_RING_INTERNAL_H
#define EVENTS_RING_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "ring_layout.h"

#define BATCH 256            /* events per writer flush */
/* An archive writer flushes with one pwrite() a batch and has no reader
 * waiting on it: larger batches, fewer system calls. */
#define BATCH_ARCHIVE 2048
/* A direct writer (strace_writer_set_direct) takes this many positions
 * at a time, at most half the ring: a decode fills them in microseconds,
 * and a reader that keeps up with it handles a batch at a time (a write
 * of its output each): 256 made the reader of a decode's pipeline spend
 * more on its system calls than on the events. */
#define BATCH_DIRECT 2048
#define WAIT_SLICE_MS 50     /* longest single futex sleep */
#define LIVENESS_EVERY_MS 200 /* how often waiters check for dead peers */
#ifndef READER_SPIN
#define READER_SPIN 256      /* polls of committed before a reader sleeps */
#endif
#define WAIT_NOTICE_MS 1000  /* a lossless writer's wait that is noticed */
/* A reader that has caught up with writers at work sleeps POLL_US at a
 * time between looks, without asking them to wake it: a futex wake costs
 * the writer a system call and, in a VM, an interrupt sent to the
 * reader's idle CPU (a decode followed by a reader took 6-8% less time
 * polling). The sleep halves while the ring fills to half or more
 * meanwhile, doubles while it fills less than an eighth, within
 * [POLL_MIN_US, POLL_MAX_US]; after POLL_IDLE_US with nothing new the
 * reader sleeps on the futex, and writers wake it (WAKE_STEP). */
#define POLL_US 200
#define POLL_MIN_US 20
#define POLL_MAX_US 1000
#define POLL_IDLE_US 5000
/* Readers asleep are woken once this many events have been committed
 * since they were last woken (at most a quarter of the ring), or when a
 * writer waits for room or closes: a wake costs the writer a system call
 * and, in a VM, an interrupt to the reader's idle CPU. A reader asleep
 * also wakes on its own every WAIT_SLICE_MS. */
#define WAKE_STEP 16384
#define LOCK_STEAL_MS 100    /* a live holder is checked again this often */
#define LOCK_GIVEUP_MS 3000  /* a live holder this long: -STRACE_E_BUSY */
/* An archive is mapped with room for this many times its events, so that
 * it can grow several times before a process needs another mapping. */
#define ARCHIVE_RESERVE 8

/* One mapping of the whole file, from offset 0. */
struct ring_map {
	uint8_t *base;
	size_t len;               /* bytes mapped (archive: beyond the file) */
	struct strace_event *ev;  /* slot 0 */
	uint64_t slots;           /* event slots the mapping covers */
	struct ring_map *older;   /* kept mapped until the ring is closed */
};

struct strace_ring {
	int fd;
	struct ring_hdr *h; /* in the first mapping, which never moves */
	uint8_t *strings;
	uint64_t strings_size;
	uint64_t events_offset;
	int mode;
	int tap_only; /* opts.tap_only: events to the tap, none stored */
	/* lossless and flight: the fixed capacity and its slots */
	uint64_t cap, mask;
	struct strace_event *ev;
	uint64_t wake_step; /* see WAKE_STEP */
	/* archive: the newest mapping, and the positions known to lie inside
	 * the file (checked against fstat, or grown by this process) */
	_Atomic(struct ring_map *) cur;
	_Atomic uint64_t file_cap;
	pthread_mutex_t grow; /* archive: growing the file, adding mappings */
	void (*wait_fn)(void *, const struct strace_ring_wait *);
	void *wait_arg;
	void (*tap_fn)(void *, const struct strace_event *, size_t);
	void *tap_arg;
	uint32_t hold_readers; /* strace_ring_hold_for_readers() */
	/* bytes of the table known to have pages (threads of one process
	 * may add strings at once: a race only repeats a fallocate) */
	_Atomic uint64_t strings_backed;
	char path[];
};

/* The string table gets its pages in steps of this, as it fills. */
#define STRINGS_STEP (64u << 10)

struct strace_writer {
	struct strace_wbuf buf; /* must be first: the inline fast path */
	struct strace_ring *ring;
	int idx; /* our slot: ring->h->writers[idx]; -1 until taken */
	uint64_t bound; /* positions below this may be written (lossless) */
	unsigned nlive;    /* live readers when the bound was computed */
	uint32_t slow_pid; /* the one furthest behind */
	int (*stop)(void *);
	void *stop_arg;
	size_t tapped; /* events at the front of batch the tap has seen */
	uint64_t nbatch; /* the private batch's size */
	/* strace_writer_set_direct(): the events go straight into the slots
	 * of [dstart, dend), taken ahead; dbase is the first (NULL: the
	 * private batch is in use) */
	int direct;
	struct strace_event *dbase;
	uint64_t dstart, dend;
	struct strace_event batch[BATCH_ARCHIVE];
};

struct strace_reader {
	struct strace_ring *ring;
	int idx; /* our slot: ring->h->readers[idx]; -1 until taken */
	uint64_t cursor;
	uint64_t lost;
	uint64_t dropped; /* archive: positions below this are unmapped from
			   * this process (drop_behind()) */
	uint64_t scan_ms;      /* when status last scanned the writers */
	uint32_t scan_closed;  /* writers_closed then */
	uint32_t poll_us;      /* its sleep while writers are at work */
	uint32_t idle_us;      /* slept since events last came */
};

static inline struct ring_wslot *wslot(const struct strace_writer *w)
{
	return &w->ring->h->writers[w->idx];
}

static inline struct ring_rslot *rslot(const struct strace_reader *r)
{
	return &r->ring->h->readers[r->idx];
}

static inline int futex_wait(_Atomic uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	if (syscall(SYS_futex, (uint32_t *)(uintptr_t)addr, FUTEX_WAIT, val, &ts, NULL,
		    0) < 0)
		return -errno;
	return 0;
}

static inline void futex_wake_all(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)(uintptr_t)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static inline uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline int is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static inline uint64_t round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* Bytes of the file up to the end of slot count. */
static inline uint64_t file_bytes(const struct strace_ring *r, uint64_t slots)
{
	return r->events_offset + slots * STRACE_EVENT_SIZE;
}

/* File offset of event position pos of an archive (it never wraps). */
static inline off_t file_pos(const struct strace_ring *r, uint64_t pos)
{
	return (off_t)file_bytes(r, pos);
}

static inline int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t k = pwrite(fd, p, len, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		len -= (size_t)k;
		off += k;
	}
	return 0;
}

/*
 * Flight mode: a reader may be copying the slots a writer overwrites (it
 * finds out afterwards, seqlock style). Both sides use relaxed atomic
 * 8-byte accesses (strace_batch_copy on the reader's side), so that the
 * overlap is a race the protocol detects, not undefined behaviour.
 */
static inline void store_words(struct strace_event *dst, const struct strace_event *src,
			uint64_t n)
{
	uint64_t *d = (uint64_t *)(void *)dst;
	const uint64_t *s = (const uint64_t *)(const void *)src;

	for (uint64_t i = 0; i < n * (STRACE_EVENT_SIZE / 8); i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

/* Write n events (n <= the batch limit) at positions pos... */
static inline int put_events(struct strace_ring *r, uint64_t pos,
		      const struct strace_event *ev, uint64_t n)
{
	if (r->mode == STRACE_RING_ARCHIVE)
		return pwrite_all(r->fd, ev, n * sizeof(*ev), file_pos(r, pos));

	uint64_t i = pos & r->mask;
	uint64_t first = r->cap - i < n ? r->cap - i : n;
	if (r->mode == STRACE_RING_FLIGHT) {
		store_words(&r->ev[i], ev, first);
		store_words(r->ev, ev + first, n - first);
	} else {
		memcpy(&r->ev[i], ev, first * sizeof(*ev));
		memcpy(r->ev, ev + first, (n - first) * sizeof(*ev));
	}
	return 0;
}

/*
 * The layers below, one file each, called only downward (and by the files
 * above them): ring_proc.c, ring_open.c, ring_repair.c; ring_strings.c,
 * ring_stat.c, ring_scan.c, ring_write.c and ring_read.c use them.
 */

/* --- ring_proc.c: processes and the ring's lock ------------------------ */

/* Whether the process that registered (pid, starttime) still runs. */
int ring_proc_alive(uint32_t pid, uint64_t starttime);
/* This process's start time, read once (again after a fork). */
uint64_t ring_self_starttime(void);
/* This process's identity in lock words: (start time << LOCK_PID_BITS) |
 * pid. */
uint64_t ring_self_owner(void);
/* Whether the process of a lock word still runs. */
int ring_owner_alive(uint64_t owner);
/* hdr->lock, held for short scans of the slot tables. Returns 0, or
 * -STRACE_E_BUSY when a live holder keeps it for LOCK_GIVEUP_MS. */
int ring_lock(struct ring_hdr *h);
void ring_unlock(struct ring_hdr *h);

/* --- ring_open.c: the file, its mappings, an archive's growth --------- */

/* Pages for [off, off + len) of the file now. Returns 0 or -errno. */
int ring_back(int fd, uint64_t off, uint64_t len);
struct strace_ring *ring_alloc(const char *path);
void ring_free(struct strace_ring *r);
/* Map the whole file anew, covering slots event slots. Returns 0 or
 * -errno. */
int ring_add_map(struct strace_ring *r, uint64_t slots);
/* Check a header copy against the file size. Returns 0 or -STRACE_E_*. */
int ring_validate(const struct ring_hdr *h, uint64_t st_size);
/* Archive, reader side: make positions below need readable. */
int ring_archive_sync(struct strace_ring *r, uint64_t need);
/* Archive, writer side: make the file hold positions below end. */
int ring_archive_grow(struct strace_ring *r, uint64_t end);

/* --- ring_repair.c: dead writers and readers ---------------------------- */

/* Mark writers whose process died; returns the number still live. */
unsigned ring_writers_scan(struct ring_hdr *h, unsigned *dead,
			   uint32_t *pids, unsigned npids);
/* A reader slot whose owner died is marked SLOT_DEAD and no longer
 * counted in readers_live. Call under hdr->lock. Returns 1 if the slot
 * holds no live reader now (free, closed or dead: a new reader may take
 * it), 0 if its owner still runs. */
int ring_reader_reap(struct ring_hdr *h, struct ring_rslot *s);
/* Wake every reader asleep on data_futex. */
void ring_wake_readers(struct ring_hdr *h);
/* Commit a dead writer's range as LOST; 1 if it repaired something. */
int ring_repair_dead_writer(struct strace_ring *r);

/* --- ring_stat.c --------------------------------------------------------- */

/* Fill st from a header (mapped, or a private copy: the scan). */
void ring_hdr_stat(struct ring_hdr *h, int mode, uint64_t cap,
		   uint64_t strings_size, uint64_t events_offset,
		   struct strace_ring_stat *st, uint32_t *wpids,
		   uint32_t *rpid);
#endif /* EVENTS_RING_INTERNAL_H */
