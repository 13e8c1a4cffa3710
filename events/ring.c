/* SPDX-License-Identifier: MIT */
/*
 * events/ring.c - the shared-memory event ring (see strace/ring.h).
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
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

/*
 * Give [off, off + len) of the file its pages now, so that a store there
 * cannot fault for want of memory (SIGBUS on a full tmpfs): -ENOSPC is
 * returned instead. A file system without fallocate gets the old, lazy
 * behaviour.
 */
static int back(int fd, uint64_t off, uint64_t len)
{
	if (fallocate(fd, 0, (off_t)off, (off_t)len) == 0 ||
	    errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return -errno;
}

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

/* --- small helpers ----------------------------------------------------- */

static int futex_wait(_Atomic uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	if (syscall(SYS_futex, (uint32_t *)(uintptr_t)addr, FUTEX_WAIT, val, &ts, NULL,
		    0) < 0)
		return -errno;
	return 0;
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)(uintptr_t)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static uint64_t now_ms(void)
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
static int proc_alive(uint32_t pid, uint64_t starttime)
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
static uint64_t self_starttime(void)
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
static uint64_t self_owner(void)
{
	static _Atomic uint64_t cached;
	uint32_t pid = (uint32_t)getpid();
	uint64_t o = atomic_load_explicit(&cached, memory_order_relaxed);

	if ((o & ((1u << LOCK_PID_BITS) - 1)) != pid) {
		uint64_t st = self_starttime() &
			      ((1ull << (64 - LOCK_PID_BITS)) - 1);
		o = st << LOCK_PID_BITS | pid;
		atomic_store_explicit(&cached, o, memory_order_relaxed);
	}
	return o;
}

static int owner_alive(uint64_t owner)
{
	uint32_t pid = (uint32_t)(owner & ((1u << LOCK_PID_BITS) - 1));

	if ((pid_t)pid == getpid())
		return owner == self_owner(); /* a thread of ours holds it */
	return proc_alive(pid, owner >> LOCK_PID_BITS);
}

/*
 * hdr->lock: a spin lock owned by a process, (start time, pid), held only
 * for short scans of the slot tables. A holder that died (or whose pid now
 * names another process) is taken over; a live holder that keeps it for
 * LOCK_GIVEUP_MS (stopped, or a hostile file) makes this fail with
 * -STRACE_E_BUSY instead of spinning forever.
 */
static int ring_lock(struct ring_hdr *h)
{
	uint64_t me = self_owner(), seen = 0, since = 0, checked = 0;

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
			if (!owner_alive(owner)) {
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

static void ring_unlock(struct ring_hdr *h)
{
	atomic_store_explicit(&h->lock, 0, memory_order_release);
}

static int is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* --- paths, create, open ----------------------------------------------- */

int strace_ring_default_path(char *buf, size_t len)
{
	const char *env = getenv("STRACE_RING");
	int n;

	if (env && *env) {
		n = snprintf(buf, len, "%s", env);
	} else {
		uint8_t r[16];
		if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
			/* No entropy source: fall back to time and address. */
			uint64_t t = (uint64_t)time(NULL) ^ (uintptr_t)buf;
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (uint8_t)(t >> (8 * (i % 8))) ^
				       (uint8_t)(i * 37);
		}
		r[6] = (uint8_t)((r[6] & 0x0f) | 0x40); /* uuid4 */
		r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
		n = snprintf(buf, len,
			     "/dev/shm/strace_%d_%02x%02x%02x%02x-%02x%02x-"
			     "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.srb",
			     (int)getpid(), r[0], r[1], r[2], r[3], r[4], r[5],
			     r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
			     r[14], r[15]);
	}
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

static struct strace_ring *ring_alloc(const char *path)
{
	size_t plen = strlen(path);
	struct strace_ring *r = calloc(1, sizeof(*r) + plen + 1);
	if (!r)
		return NULL;
	memcpy(r->path, path, plen + 1);
	r->fd = -1;
	pthread_mutex_init(&r->grow, NULL);
	return r;
}

static void ring_free(struct strace_ring *r)
{
	struct ring_map *m = atomic_load_explicit(&r->cur, memory_order_relaxed);

	while (m) {
		struct ring_map *older = m->older;
		munmap(m->base, m->len);
		free(m);
		m = older;
	}
	if (r->fd >= 0)
		close(r->fd);
	pthread_mutex_destroy(&r->grow);
	free(r);
}

/* Bytes of the file up to the end of slot count. */
static uint64_t file_bytes(const struct strace_ring *r, uint64_t slots)
{
	return r->events_offset + slots * STRACE_EVENT_SIZE;
}

/*
 * Map the whole file, covering at least slots event slots: an archive's
 * mapping reaches ARCHIVE_RESERVE times further, past the end of the file
 * (pages there are never touched: positions past the file's capacity are
 * never committed). The new mapping becomes ring->cur; the older ones stay.
 * Returns 0 or -errno.
 */
static int add_map(struct strace_ring *r, uint64_t slots)
{
	uint64_t reach = slots;
	struct ring_map *m = malloc(sizeof(*m));

	if (!m)
		return -ENOMEM;
	if (r->mode == STRACE_RING_ARCHIVE)
		reach = slots > RING_MAX_CAPACITY / ARCHIVE_RESERVE
				? RING_MAX_CAPACITY
				: slots * ARCHIVE_RESERVE;
	m->len = (size_t)round_up(file_bytes(r, reach), 4096);
	m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		       0);
	if (m->base == MAP_FAILED && reach > slots) { /* no room to spare */
		reach = slots;
		m->len = (size_t)round_up(file_bytes(r, reach), 4096);
		m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       r->fd, 0);
	}
	if (m->base == MAP_FAILED) {
		int err = -errno;
		free(m);
		return err;
	}
	m->ev = (struct strace_event *)(void *)(m->base + r->events_offset);
	m->slots = reach;
	m->older = atomic_load_explicit(&r->cur, memory_order_relaxed);
	if (!m->older) {
		r->h = (struct ring_hdr *)(void *)m->base;
		r->strings = m->base + RING_HDR_SIZE;
		r->ev = m->ev;
	}
	/* Release: the fields above before the pointer (pairs with the
	 * acquire loads of cur). */
	atomic_store_explicit(&r->cur, m, memory_order_release);
	return 0;
}

int strace_ring_create(const char *path, const struct strace_ring_opts *opts,
		       struct strace_ring **out)
{
	struct strace_ring_opts o;
	char defpath[PATH_MAX];
	struct strace_ring *r;
	int err;

	*out = NULL;
	err = strace_opts_load(&o, sizeof(o), opts);
	if (err < 0)
		return err;
	if (!o.capacity) /* an archive grows: start small */
		o.capacity = o.tap_only			   ? STRACE_RING_MIN_CAPACITY
			     : o.mode == STRACE_RING_ARCHIVE ? 4096
							     : STRACE_RING_DEFAULT_CAPACITY;
	if (!o.strings_size)
		o.strings_size = STRACE_RING_DEFAULT_STRINGS;
	if (!is_pow2(o.capacity) || o.capacity < STRACE_RING_MIN_CAPACITY ||
	    o.capacity > RING_MAX_CAPACITY || o.strings_size > RING_MAX_STRINGS ||
	    o.mode < STRACE_RING_LOSSLESS || o.mode > STRACE_RING_ARCHIVE)
		return -STRACE_E_BADARG;
	if (!path) {
		err = strace_ring_default_path(defpath, sizeof(defpath));
		if (err < 0)
			return err;
		path = defpath;
	}
	r = ring_alloc(path);
	if (!r)
		return -ENOMEM;

	r->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (r->fd < 0) {
		struct stat st;
		err = -errno;
		if (err == -EEXIST && lstat(path, &st) == 0 &&
		    S_ISLNK(st.st_mode))
			err = -ELOOP;
		ring_free(r);
		return err;
	}

	r->strings_size = round_up(o.strings_size, 4096);
	r->events_offset = RING_HDR_SIZE + r->strings_size;
	r->mode = o.mode;
	r->tap_only = !!o.tap_only;
	r->cap = o.capacity;
	r->mask = r->cap - 1;
	r->wake_step = r->mode != STRACE_RING_ARCHIVE && r->cap / 4 < WAKE_STEP
			       ? r->cap / 4
			       : WAKE_STEP;
	uint64_t file_size = file_bytes(r, o.capacity);

	/* Pages now for the header, the first step of the string table and
	 * the events (unless no_populate); the rest of the string table as
	 * it fills (strace_ring_add_string). */
	uint64_t strings_first = r->strings_size < STRINGS_STEP
					 ? r->strings_size
					 : STRINGS_STEP;
	err = 0;
	if (ftruncate(r->fd, (off_t)file_size) < 0 ||
	    (err = back(r->fd, 0, RING_HDR_SIZE + strings_first)) < 0 ||
	    (!o.no_populate &&
	     (err = back(r->fd, r->events_offset,
			 file_size - r->events_offset)) < 0)) {
		if (!err)
			err = -errno;
		goto fail;
	}
	atomic_store_explicit(&r->strings_backed, strings_first,
			      memory_order_relaxed);
	err = add_map(r, o.capacity);
	if (err < 0)
		goto fail;
	atomic_store_explicit(&r->file_cap, o.capacity, memory_order_relaxed);
	/* The header and the string table fill a page at a time: no
	 * read-ahead of the file's holes on a disk file system (a first
	 * store would otherwise read and zero megabytes) */
	(void)madvise(r->h, r->events_offset, MADV_RANDOM);
#ifdef MADV_POPULATE_WRITE
	/* Map the events' pages in, writable, once: the first store to a
	 * fresh tmpfs page costs about a microsecond. An archive's slots are
	 * written with pwrite() instead. */
	if (!o.no_populate && o.mode != STRACE_RING_ARCHIVE)
		(void)madvise(r->ev, file_size - r->events_offset,
			      MADV_POPULATE_WRITE);
#endif
	struct ring_hdr *h = r->h;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h->version = STRACE_RING_VERSION;
	h->header_size = RING_HDR_SIZE;
	h->event_size = STRACE_EVENT_SIZE;
	h->mode = (uint32_t)o.mode;
	atomic_store_explicit(&h->capacity, o.capacity, memory_order_relaxed);
	h->strings_offset = RING_HDR_SIZE;
	h->strings_size = r->strings_size;
	h->events_offset = r->events_offset;
	atomic_store_explicit(&h->file_size, file_size, memory_order_relaxed);
	h->creator_pid = (uint64_t)getpid();
	h->creator_starttime = self_starttime();
	h->created_ns = (uint64_t)ts.tv_sec * 1000000000ull +
			(uint64_t)ts.tv_nsec;
	/* The magic goes last: a reader that opens a half-made file sees no
	 * magic and says so. Pairs with the acquire fence in ring_validate. */
	atomic_thread_fence(memory_order_release);
	memcpy(h->magic, STRACE_RING_MAGIC, 8);
	*out = r;
	return 0;
fail:
	unlink(path);
	ring_free(r);
	return err;
}

/* Check a header copy against the file size; every later use of these
 * fields relies on this. */
static int ring_validate(const struct ring_hdr *h, uint64_t st_size)
{
	if (st_size < sizeof(h->magic))
		return -STRACE_E_TRUNCATED;
	if (memcmp(h->magic, STRACE_RING_MAGIC, 8) != 0)
		return -STRACE_E_MAGIC;
	atomic_thread_fence(memory_order_acquire);
	if (st_size < RING_HDR_SIZE)
		return -STRACE_E_TRUNCATED;
	if (h->version != STRACE_RING_VERSION)
		return -STRACE_E_VERSION;
	uint64_t cap = atomic_load_explicit(&h->capacity, memory_order_acquire);
	if (h->header_size != RING_HDR_SIZE ||
	    h->event_size != STRACE_EVENT_SIZE || h->mode > STRACE_RING_ARCHIVE ||
	    !is_pow2(cap) || cap < STRACE_RING_MIN_CAPACITY ||
	    cap > RING_MAX_CAPACITY || h->strings_offset != RING_HDR_SIZE ||
	    h->strings_size > RING_MAX_STRINGS || h->strings_size % 4096 ||
	    h->events_offset != RING_HDR_SIZE + h->strings_size)
		return -STRACE_E_CORRUPT;
	if (st_size < h->events_offset + cap * STRACE_EVENT_SIZE)
		return -STRACE_E_TRUNCATED;
	return 0;
}

int strace_ring_open(const char *path, struct strace_ring **out)
{
	struct strace_ring *r;
	struct ring_hdr hcopy;
	struct stat st;
	int err;

	*out = NULL;
	r = ring_alloc(path);
	if (!r)
		return -ENOMEM;
	r->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(r->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && geteuid() != 0)) {
		err = -STRACE_E_FOREIGN;
		goto fail;
	}
	/* Validate a private copy first: never map past the end of a file
	 * that lies about its size. */
	memset(&hcopy, 0, sizeof(hcopy));
	ssize_t n = pread(r->fd, &hcopy, sizeof(hcopy), 0);
	if (n < 0) {
		err = -errno;
		goto fail;
	}
	err = ring_validate(&hcopy, (uint64_t)st.st_size);
	if (err < 0)
		goto fail;
	/* The live header may change under us (hostile or concurrent); only
	 * the validated copy's layout fields are used from here on. No page
	 * is faulted in before it is read: a sparse file that claims a huge
	 * capacity costs nothing until its events are read. */
	r->mode = (int)hcopy.mode;
	r->cap = atomic_load_explicit(&hcopy.capacity, memory_order_relaxed);
	r->mask = r->cap - 1;
	r->wake_step = r->mode != STRACE_RING_ARCHIVE && r->cap / 4 < WAKE_STEP
			       ? r->cap / 4
			       : WAKE_STEP;
	r->strings_size = hcopy.strings_size;
	r->events_offset = hcopy.events_offset;
	err = add_map(r, r->cap);
	if (err < 0)
		goto fail;
	atomic_store_explicit(&r->file_cap, r->cap, memory_order_relaxed);
	*out = r;
	return 0;
fail:
	ring_free(r);
	return err;
}

void strace_ring_close(struct strace_ring *ring)
{
	if (ring)
		ring_free(ring);
}

const char *strace_ring_path(const struct strace_ring *ring)
{
	return ring->path;
}

/*
 * Archive, reader side: make positions below need readable. need comes
 * from a committed value loaded (acquire) before this call; the writer
 * raised the capacity before committing it, so the header's capacity
 * covers it, and the file must be that long. Maps the file anew when it
 * has outgrown this process's mappings.
 * Returns 0, -STRACE_E_CORRUPT (committed beyond the capacity),
 * -STRACE_E_TRUNCATED (the file is shorter than its capacity), -errno.
 */
static int archive_sync(struct strace_ring *r, uint64_t need)
{
	int rc = 0;

	pthread_mutex_lock(&r->grow);
	if (need > atomic_load_explicit(&r->file_cap, memory_order_relaxed)) {
		uint64_t cap = atomic_load_explicit(&r->h->capacity,
						    memory_order_acquire);
		struct stat st;

		if (!is_pow2(cap) || cap > RING_MAX_CAPACITY || cap < need)
			rc = -STRACE_E_CORRUPT;
		else if (fstat(r->fd, &st) < 0)
			rc = -errno;
		else if ((uint64_t)st.st_size < file_bytes(r, cap))
			rc = -STRACE_E_TRUNCATED;
		else
			atomic_store_explicit(&r->file_cap, cap,
					      memory_order_relaxed);
	}
	if (!rc && need > atomic_load_explicit(&r->cur, memory_order_relaxed)
				  ->slots)
		rc = add_map(r, atomic_load_explicit(&r->file_cap,
						     memory_order_relaxed));
	pthread_mutex_unlock(&r->grow);
	return rc;
}

/*
 * Archive, writer side: make the file hold positions below end (the
 * capacity doubles until it does). Threads of this process are kept apart
 * by ring->grow, processes by flock(), so that the file only ever grows.
 * The header's capacity is raised (release) after the file has grown and
 * before the caller commits anything beyond the old capacity.
 * Returns 0, -STRACE_E_FULL (past RING_MAX_CAPACITY), -errno.
 */
static int archive_grow(struct strace_ring *r, uint64_t end)
{
	struct ring_hdr *h = r->h;
	int rc = 0;

	if (end <= atomic_load_explicit(&r->file_cap, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&r->grow);
	uint64_t cap = atomic_load_explicit(&r->file_cap, memory_order_relaxed);
	if (end > cap) {
		while (flock(r->fd, LOCK_EX) < 0)
			if (errno != EINTR)
				break; /* no locks here: threads are still apart */
		uint64_t hcap = atomic_load_explicit(&h->capacity,
						     memory_order_acquire);
		if (is_pow2(hcap) && hcap <= RING_MAX_CAPACITY && hcap > cap)
			cap = hcap; /* another process grew it */
		while (cap < end) {
			if (cap >= RING_MAX_CAPACITY) {
				rc = -STRACE_E_FULL;
				break;
			}
			cap *= 2;
		}
		struct stat st;
		uint64_t size = file_bytes(r, cap);
		if (!rc && fstat(r->fd, &st) < 0)
			rc = -errno;
		if (!rc && (uint64_t)st.st_size < size &&
		    ftruncate(r->fd, (off_t)size) < 0)
			rc = -errno;
		if (!rc) {
			if (atomic_load_explicit(&h->capacity,
						 memory_order_relaxed) < cap) {
				atomic_store_explicit(&h->file_size, size,
						      memory_order_relaxed);
				atomic_store_explicit(&h->capacity, cap,
						      memory_order_release);
			}
			atomic_store_explicit(&r->file_cap, cap,
					      memory_order_relaxed);
		}
		flock(r->fd, LOCK_UN);
	}
	pthread_mutex_unlock(&r->grow);
	return rc;
}

/* --- liveness and repair ----------------------------------------------- */

/* Mark writers whose process died; returns the number still live.
 * pids (NULL: not wanted) receives the first npids live writers' pids. */
static unsigned writers_scan(struct ring_hdr *h, unsigned *dead,
			     uint32_t *pids, unsigned npids)
{
	unsigned live = 0, d = 0;
	for (int i = 0; i < STRACE_RING_MAX_WRITERS; i++) {
		struct ring_wslot *s = &h->writers[i];
		uint32_t st = atomic_load_explicit(&s->state,
						   memory_order_acquire);
		if (st == SLOT_LIVE) {
			if (proc_alive(s->pid, s->starttime)) {
				if (pids && live < npids)
					pids[live] = s->pid;
				live++;
				continue;
			}
			/* CAS, not a store: the writer may have closed (and
			 * exited) between our load and the liveness check; a
			 * clean close must not be turned into a death. */
			uint32_t expect = SLOT_LIVE;
			if (atomic_compare_exchange_strong(&s->state, &expect,
							   SLOT_DEAD))
				st = SLOT_DEAD;
			else
				st = expect;
		}
		if (st == SLOT_DEAD)
			d++;
	}
	if (dead)
		*dead = d;
	return live;
}

static void wake_readers(struct ring_hdr *h)
{
	atomic_store_explicit(&h->data_woken,
			      atomic_load_explicit(&h->committed,
						   memory_order_relaxed),
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&h->data_futex, 1, memory_order_release);
	futex_wake_all(&h->data_futex);
}

/* File offset of event position pos of an archive (it never wraps). */
static off_t file_pos(const struct strace_ring *r, uint64_t pos)
{
	return (off_t)file_bytes(r, pos);
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
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
static void store_words(struct strace_event *dst, const struct strace_event *src,
			uint64_t n)
{
	uint64_t *d = (uint64_t *)(void *)dst;
	const uint64_t *s = (const uint64_t *)(const void *)src;

	for (uint64_t i = 0; i < n * (STRACE_EVENT_SIZE / 8); i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

void strace_batch_copy(struct strace_event *dst, const struct strace_batch *b)
{
	uint64_t *d = (uint64_t *)(void *)dst;
	const uint64_t *s = (const uint64_t *)(const void *)b->ev;

	for (size_t i = 0; i < b->n * (STRACE_EVENT_SIZE / 8); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/* Write n events (n <= the batch limit) at positions pos... */
static int put_events(struct strace_ring *r, uint64_t pos,
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

/* The writer slot whose owner died holding the range that starts at the
 * committed position c, with the range's end; NULL if there is none, or
 * if that range's owner is alive (only slow). */
static struct ring_wslot *dead_range(struct strace_ring *r, uint64_t c,
				     uint64_t res, uint64_t *end)
{
	struct ring_hdr *h = r->h;
	struct ring_wslot *victim = NULL;

	for (int i = 0; i < STRACE_RING_MAX_WRITERS; i++) {
		struct ring_wslot *s = &h->writers[i];
		uint32_t st = atomic_load_explicit(&s->state,
						   memory_order_acquire);
		uint32_t fl = atomic_load_explicit(&s->flight,
						   memory_order_acquire);
		if (fl == FLIGHT_NONE || (st != SLOT_LIVE && st != SLOT_DEAD) ||
		    atomic_load_explicit(&s->flight_start,
					 memory_order_acquire) != c)
			continue;
		if (st == SLOT_LIVE && proc_alive(s->pid, s->starttime))
			return NULL; /* the range's owner (or a writer that
				      * meant to take it) is alive */
		uint64_t e = atomic_load_explicit(&s->flight_end,
						  memory_order_acquire);
		/* no writer reserves more than one batch */
		if (e > c && e <= res && e - c <= BATCH_ARCHIVE) {
			*end = e;
			victim = s;
		}
	}
	return victim;
}

/*
 * If the commit order is stuck behind a writer that died between reserving
 * and committing, fill its range with one LOST event (and PADs) and commit
 * it, so that nobody waits forever. Repairers take hdr->lock, so that one
 * fills the range while no reader can be reading it yet. Returns 1 if it
 * repaired something.
 */
static int repair_dead_writer(struct strace_ring *r)
{
	struct ring_hdr *h = r->h;
	uint64_t c = atomic_load_explicit(&h->committed, memory_order_acquire);
	uint64_t res = atomic_load_explicit(&h->reserved, memory_order_acquire);
	uint64_t end = 0;
	int done = 0;

	if (res <= c || !dead_range(r, c, res, &end) || ring_lock(h) < 0)
		return 0;
	struct ring_wslot *victim = NULL;
	if (atomic_load_explicit(&h->committed, memory_order_acquire) == c)
		victim = dead_range(r, c, res, &end);
	if (victim) {
		struct strace_event fill[64];
		int rc = r->mode == STRACE_RING_ARCHIVE ? archive_grow(r, end)
							: 0;

		atomic_store_explicit(&victim->state, SLOT_DEAD,
				      memory_order_release);
		/* The dead writer's slots may hold anything: mark the whole
		 * range, PADs after the LOST event. */
		memset(fill, 0, sizeof(fill));
		fill[0].type = STRACE_EV_LOST;
		fill[0].flags = STRACE_LOST_WRITER;
		fill[0].a = end - c;
		fill[0].b = c;
		for (uint64_t p = c, k; p < end && !rc; p += k) {
			k = end - p < 64 ? end - p : 64;
			rc = put_events(r, p, fill, k);
			memset(fill, 0, sizeof(fill[0]));
		}
		uint64_t mine = end;
		if (!rc) {
			/* Release: the fill above is visible before the new
			 * committed value (pairs with the acquire load of
			 * committed in strace_reader_next). */
			atomic_store_explicit(&h->committed, end,
					      memory_order_release);
			done = 1;
		} else if (atomic_compare_exchange_strong(&h->reserved, &mine,
							  c)) {
			/* No room for the marker (a full file system) and
			 * nobody reserved after it: give the range back. */
			done = 1;
		}
		if (done)
			atomic_store_explicit(&victim->flight, FLIGHT_NONE,
					      memory_order_release);
	}
	ring_unlock(h);
	if (done)
		wake_readers(h);
	return done;
}

/* --- string table ------------------------------------------------------ */

int strace_ring_add_string(struct strace_ring *ring, unsigned kind,
			   uint64_t key, uint64_t aux, const char *str,
			   size_t len, uint64_t *off)
{
	struct ring_hdr *h = ring->h;
	uint64_t need = round_up(RING_SENTRY_HDR + len + 1, 8);
	uint64_t used = atomic_load_explicit(&h->strings_used,
					     memory_order_relaxed);

	if (len >= UINT32_MAX)
		return -STRACE_E_BADARG;
	do {
		if (used > ring->strings_size ||
		    need > ring->strings_size - used)
			return -STRACE_E_FULL;
		uint64_t backed = atomic_load_explicit(&ring->strings_backed,
						       memory_order_relaxed);
		if (used + need > backed) {
			/* pages before the space is taken: a failure
			 * leaves no hole that readers would wait at */
			uint64_t to = round_up(used + need, STRINGS_STEP);
			int rc;

			if (to > ring->strings_size)
				to = ring->strings_size;
			rc = back(ring->fd, RING_HDR_SIZE + backed, to - backed);
			if (rc < 0)
				return rc;
			atomic_store_explicit(&ring->strings_backed, to,
					      memory_order_relaxed);
		}
	} while (!atomic_compare_exchange_weak_explicit(
		&h->strings_used, &used, used + need, memory_order_relaxed,
		memory_order_relaxed));

	struct ring_sentry *e = (struct ring_sentry *)(void *)(ring->strings +
								used);
	e->kind = (uint16_t)kind;
	e->magic = RING_SENTRY_MAGIC;
	e->key = key;
	e->aux = aux;
	memcpy(e->str, str, len);
	e->str[len] = '\0';
	/* Publish: pairs with the acquire load of len_plus1 in sentry_get. */
	atomic_store_explicit(&e->len_plus1, (uint32_t)len + 1,
			      memory_order_release);
	if (off)
		*off = used;
	return 0;
}

/* Bytes of the string table that entries may occupy. */
static uint64_t strings_limit(const struct strace_ring *ring)
{
	uint64_t used = atomic_load_explicit(&ring->h->strings_used,
					     memory_order_acquire);
	return used < ring->strings_size ? used : ring->strings_size;
}

/* Entry at off, within the first limit bytes: 1 and *out if complete, 0 if
 * not yet written, or -STRACE_E_CORRUPT. *next receives the next offset. */
static int sentry_get(const struct strace_ring *ring, uint64_t off,
		      uint64_t limit, struct strace_string *out, uint64_t *next)
{
	if (off % 8 || off > limit || limit - off < RING_SENTRY_HDR + 1)
		return -STRACE_E_CORRUPT;
	const struct ring_sentry *e =
		(const struct ring_sentry *)(const void *)(ring->strings + off);
	uint32_t lp1 = atomic_load_explicit(
		&((struct ring_sentry *)(uintptr_t)e)->len_plus1,
		memory_order_acquire);
	if (lp1 == 0)
		return 0;
	uint64_t len = lp1 - 1;
	uint64_t size = round_up(RING_SENTRY_HDR + len + 1, 8);
	if (size > limit - off || e->str[len] != '\0' ||
	    e->magic != RING_SENTRY_MAGIC)
		return -STRACE_E_CORRUPT;
	out->str = e->str;
	out->len = (uint32_t)len;
	out->kind = e->kind;
	out->key = e->key;
	out->aux = e->aux;
	if (next)
		*next = off + size;
	return 1;
}

int strace_ring_string(const struct strace_ring *ring, uint64_t off,
		       struct strace_string *out)
{
	int rc = sentry_get(ring, off, strings_limit(ring), out, NULL);
	return rc == 0 ? -STRACE_E_CORRUPT : (rc < 0 ? rc : 0);
}

int strace_ring_string_next(const struct strace_ring *ring, uint64_t *off,
			    struct strace_string *out)
{
	uint64_t limit = strings_limit(ring);
	if (*off >= limit)
		return 0;
	return sentry_get(ring, *off, limit, out, off);
}

int strace_ring_sync_strings(struct strace_ring *dst,
			     const struct strace_ring *src)
{
	uint64_t from = atomic_load_explicit(&dst->h->strings_used,
					     memory_order_relaxed);
	uint64_t to = from;
	struct strace_string s;
	int rc;

	while ((rc = strace_ring_string_next(src, &to, &s)) > 0)
		;
	if (rc < 0)
		return rc;
	if (to == from)
		return 0;
	if (to > dst->strings_size)
		return -STRACE_E_FULL;
	memcpy(dst->strings + from, src->strings + from, to - from);
	/* Publish the copied entries (pairs with the acquire load of
	 * strings_used by dst's readers). */
	atomic_store_explicit(&dst->h->strings_used, to, memory_order_release);
	return 0;
}

/* --- stat -------------------------------------------------------------- */

/*
 * Fill st from a header: the layout fields given (validated, never read
 * from h again), the counters, and the slot tables with each live slot's
 * process checked. Runs on the mapped header (strace_ring_stat) and on a
 * private copy of it (the scan), so that both judge liveness alike.
 * wpids (NULL: not wanted) receives up to STRACE_RING_ENTRY_PIDS live
 * writers' pids, *rpid the first live reader's.
 */
static void hdr_stat(struct ring_hdr *h, int mode, uint64_t cap,
		     uint64_t strings_size, uint64_t events_offset,
		     struct strace_ring_stat *st, uint32_t *wpids,
		     uint32_t *rpid)
{
	unsigned dead = 0;

	memset(st, 0, sizeof(*st));
	st->version = h->version;
	st->mode = mode;
	st->capacity = cap;
	st->file_size = events_offset + cap * STRACE_EVENT_SIZE;
	st->reserved = atomic_load(&h->reserved);
	st->committed = atomic_load(&h->committed);
	st->tail = atomic_load(&h->tail);
	st->strings_used = atomic_load(&h->strings_used);
	st->strings_size = strings_size;
	st->writers_live = writers_scan(h, &dead, wpids, STRACE_RING_ENTRY_PIDS);
	st->writers_dead = dead;
	st->writers_closed = atomic_load(&h->writers_closed);
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++) {
		struct ring_rslot *s = &h->readers[i];
		uint32_t state = atomic_load(&s->state);
		if (state == SLOT_LIVE && proc_alive(s->pid, s->starttime)) {
			if (rpid && !st->readers_live)
				*rpid = s->pid;
			st->readers_live++;
		} else if (state == SLOT_LIVE || state == SLOT_DEAD) {
			st->readers_dead++;
		}
	}
	st->creator_pid = h->creator_pid;
	st->created_ns = h->created_ns;
	uint32_t opened = atomic_load(&h->writers_opened);
	st->closed = opened > 0 && atomic_load(&h->writers_closed) == opened;
	st->lock_pid = (uint32_t)(atomic_load(&h->lock) &
				  ((1u << LOCK_PID_BITS) - 1));
}

uint64_t strace_ring_committed(const struct strace_ring *ring)
{
	return atomic_load_explicit(&ring->h->committed, memory_order_acquire);
}

int strace_ring_stat(struct strace_ring *ring, struct strace_ring_stat *st)
{
	uint64_t cap = ring->cap;

	if (ring->mode == STRACE_RING_ARCHIVE) {
		cap = atomic_load_explicit(&ring->h->capacity,
					   memory_order_acquire);
		int rc = archive_sync(ring, cap);
		if (rc < 0)
			return rc;
	}
	hdr_stat(ring->h, ring->mode, cap, ring->strings_size,
		 ring->events_offset, st, NULL, NULL);
	return 0;
}

int strace_ring_reader_info(struct strace_ring *ring,
			    struct strace_reader_info *info, int max)
{
	int n = 0;
	for (int i = 0; i < STRACE_RING_MAX_READERS && n < max; i++) {
		struct ring_rslot *s = &ring->h->readers[i];
		uint32_t state = atomic_load(&s->state);
		if (state == SLOT_FREE || state == SLOT_CLOSED)
			continue;
		info[n].pid = s->pid;
		info[n].live = state == SLOT_LIVE &&
			       proc_alive(s->pid, s->starttime);
		info[n].cursor = atomic_load(&s->cursor);
		info[n].lost = atomic_load(&s->lost);
		n++;
	}
	return n;
}

/* --- finding rings, removing stale ones -------------------------------- */

int strace_ring_default_dir(char *buf, size_t len)
{
	const char *env = getenv("STRACE_RING");
	const char *d = "/dev/shm";
	size_t n = 8;

	if (env && *env) {
		const char *slash = strrchr(env, '/');
		if (!slash) {
			d = ".";
			n = 1;
		} else if (slash == env) {
			d = "/";
			n = 1;
		} else {
			d = env;
			n = (size_t)(slash - env);
		}
	}
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, d, n);
	buf[n] = '\0';
	return (int)n;
}

/* The last component of $STRACE_RING, or NULL when it is not set. */
static const char *env_ring_name(void)
{
	const char *env = getenv("STRACE_RING");
	const char *slash;

	if (!env || !*env)
		return NULL;
	slash = strrchr(env, '/');
	return slash ? slash + 1 : env;
}

/* Named as strace_ring_default_path() names rings: strace_<pid>_<id>.srb,
 * or the name $STRACE_RING gives. */
static int default_named(const char *name)
{
	const char *env = env_ring_name();
	size_t n = strlen(name);
	const char *p = name + 7;

	if (env && *env && strcmp(name, env) == 0)
		return 1;
	if (n < 7 + 1 + 1 + 1 + 4 || strncmp(name, "strace_", 7) != 0 ||
	    strcmp(name + n - 4, ".srb") != 0 || *p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == '_' && p + 1 < name + n - 4;
}

/* Whether the directory at dirfd (or path, dirfd AT_FDCWD) is the default
 * directory: the same file, however it is spelled. */
static int is_default_dir(int dirfd, const char *path)
{
	char def[PATH_MAX];
	struct stat a, b;

	if (strace_ring_default_dir(def, sizeof(def)) < 0 ||
	    stat(def, &a) < 0 || fstatat(dirfd, path, &b, 0) < 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Why a ring of this format is kept, STRACE_RING_KEEP_NONE when it is
 * stale (docs/design.md, "Stale rings"). st was filled by hdr_stat() from
 * the same header, which judged the writers and readers; the creator and
 * the lock's holder are judged by the same (pid, start time) rule.
 * check_lock: 0 when the caller holds the lock itself.
 */
static int ring_keep(struct ring_hdr *h, uint32_t uid,
		     const struct strace_ring_stat *st, uint32_t rpid,
		     int check_lock, uint32_t *pids)
{
	uint64_t creator = h->creator_pid;
	uint64_t lock = atomic_load(&h->lock);

	if (uid != (uint32_t)geteuid())
		return STRACE_RING_KEEP_OWNER;
	if (st->writers_live)
		return STRACE_RING_KEEP_WRITER;
	memset(pids, 0, STRACE_RING_ENTRY_PIDS * sizeof(*pids));
	if (st->readers_live) {
		pids[0] = rpid;
		return STRACE_RING_KEEP_READER;
	}
	if (creator < (1u << LOCK_PID_BITS) &&
	    proc_alive((uint32_t)creator, h->creator_starttime)) {
		pids[0] = (uint32_t)creator;
		return STRACE_RING_KEEP_CREATOR;
	}
	if (check_lock && lock && owner_alive(lock)) {
		pids[0] = (uint32_t)(lock & ((1u << LOCK_PID_BITS) - 1));
		return STRACE_RING_KEEP_LOCKED;
	}
	return STRACE_RING_KEEP_NONE;
}

/*
 * Classify the file name at dirfd without following a symlink, blocking
 * on a FIFO, mapping a page or trusting a header field: lstat first, open
 * only a regular file, read the header into a private copy and check it
 * as strace_ring_open() does. Returns 0, or -errno of the lstat().
 */
static int inspect_at(int dirfd, const char *name,
		      struct strace_ring_entry *e)
{
	struct ring_hdr *h;
	struct stat st;
	struct statfs sfs;
	ssize_t n;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	e->keep = STRACE_RING_KEEP_KIND;
	e->kind = STRACE_RING_KIND_SPECIAL;
	e->file_mode = (uint32_t)st.st_mode;
	e->uid = (uint32_t)st.st_uid;
	e->size = (uint64_t)st.st_size;
	e->mem_bytes = (uint64_t)st.st_blocks * 512;
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e->kind = errno == ELOOP ? STRACE_RING_KIND_SPECIAL
					 : STRACE_RING_KIND_UNREADABLE;
		e->err = -errno;
		return 0;
	}
	/* What was opened is what counts (the name may have been replaced
	 * since the lstat). */
	if (fstat(fd, &st) < 0) {
		e->kind = STRACE_RING_KIND_UNREADABLE;
		e->err = -errno;
		close(fd);
		return 0;
	}
	e->file_mode = (uint32_t)st.st_mode;
	e->uid = (uint32_t)st.st_uid;
	e->size = (uint64_t)st.st_size;
	e->mem_bytes = (uint64_t)st.st_blocks * 512;
	if (fstatfs(fd, &sfs) == 0)
		e->in_memory = (unsigned long)sfs.f_type == TMPFS_MAGIC ||
			       (unsigned long)sfs.f_type == RAMFS_MAGIC;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		e->kind = STRACE_RING_KIND_UNREADABLE;
		e->err = -ENOMEM;
		close(fd);
		return 0;
	}
	n = pread(fd, h, sizeof(*h), 0);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc < 0) {
		e->kind = STRACE_RING_KIND_UNREADABLE;
		e->err = rc;
	} else if (n < (ssize_t)sizeof(h->magic) ||
		   memcmp(h->magic, STRACE_RING_MAGIC, 8) != 0) {
		e->kind = STRACE_RING_KIND_FOREIGN;
	} else if (n >= (ssize_t)(offsetof(struct ring_hdr, version) +
				  sizeof(h->version)) &&
		   h->version != STRACE_RING_VERSION) {
		e->kind = STRACE_RING_KIND_VERSION;
		e->stat.version = h->version;
	} else if ((rc = ring_validate(h, (uint64_t)st.st_size)) < 0) {
		e->kind = STRACE_RING_KIND_DAMAGED;
		e->err = rc;
	} else {
		uint32_t rpid = 0;
		e->kind = STRACE_RING_KIND_RING;
		hdr_stat(h, (int)h->mode,
			 atomic_load_explicit(&h->capacity, memory_order_relaxed),
			 h->strings_size, h->events_offset, &e->stat, e->pids,
			 &rpid);
		e->keep = ring_keep(h, e->uid, &e->stat, rpid, 1, e->pids);
	}
	free(h);
	return 0;
}

int strace_ring_inspect(const char *path, struct strace_ring_entry *e)
{
	const char *slash = strrchr(path, '/');
	int rc;

	memset(e, 0, sizeof(*e));
	e->path = path;
	e->name = slash ? slash + 1 : path;
	rc = inspect_at(AT_FDCWD, path, e);
	if (rc < 0)
		return rc;
	if (default_named(e->name)) {
		if (!slash) {
			e->default_name = is_default_dir(AT_FDCWD, ".");
		} else {
			size_t n = slash == path ? 1 : (size_t)(slash - path);
			char *d = strndup(path, n);
			e->default_name = d && is_default_dir(AT_FDCWD, d);
			free(d);
		}
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int strace_ring_scan(const char *dir,
		     int (*fn)(void *arg, const struct strace_ring_entry *e),
		     void *arg)
{
	char def[PATH_MAX];
	char **names = NULL, *path = NULL;
	size_t n = 0, cap = 0, dlen;
	struct dirent *de;
	int rc = 0, count = 0, only_default = !dir, in_default;
	int fd;
	DIR *ds;

	if (!dir) {
		rc = strace_ring_default_dir(def, sizeof(def));
		if (rc < 0)
			return rc;
		dir = def;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ds = fdopendir(fd);
	if (!ds) {
		rc = -errno;
		close(fd);
		return rc;
	}
	in_default = only_default || is_default_dir(fd, ".");
	rc = 0;
	for (;;) {
		errno = 0;
		de = readdir(ds);
		if (!de) {
			if (errno)
				rc = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (only_default && !default_named(de->d_name))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof(*nn));
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	if (!rc && n)
		qsort(names, n, sizeof(*names), cmp_names);
	dlen = strlen(dir);
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	for (size_t i = 0; !rc && i < n; i++) {
		struct strace_ring_entry e;
		size_t len = dlen + 1 + strlen(names[i]) + 1;
		char *p = realloc(path, len);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		path = p;
		snprintf(path, len, "%.*s%s%s", (int)dlen, dir,
			 dir[dlen - 1] == '/' ? "" : "/", names[i]);
		memset(&e, 0, sizeof(e));
		e.path = path;
		e.name = path + len - 1 - strlen(names[i]);
		if (inspect_at(dirfd(ds), names[i], &e) < 0)
			continue; /* gone since readdir */
		e.default_name = in_default && default_named(names[i]);
		count++;
		rc = fn(arg, &e);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(path);
	closedir(ds);
	return rc < 0 ? rc : count;
}

int strace_ring_remove_stale(const char *path, struct strace_ring_entry *e)
{
	struct strace_ring *r;
	struct stat fs, ls;
	uint32_t rpid = 0;
	int rc;

	rc = strace_ring_inspect(path, e);
	if (rc < 0 || e->keep != STRACE_RING_KEEP_NONE)
		return rc;
	/* Read-write, to take the lock (O_NOFOLLOW, O_NONBLOCK, a regular
	 * file whose header holds, as the scan found it). */
	rc = strace_ring_open(path, &r);
	if (rc < 0) /* a format error now: it changed since it was judged */
		return rc < -STRACE_E_BASE ? -EAGAIN : rc;
	if (fstat(r->fd, &fs) < 0) {
		rc = -errno;
		goto out;
	}
	if (lstat(path, &ls) < 0) {
		rc = -errno;
		goto out;
	}
	if (ls.st_dev != fs.st_dev || ls.st_ino != fs.st_ino) {
		rc = -EAGAIN; /* replaced since it was opened */
		goto out;
	}
	rc = ring_lock(r->h);
	if (rc < 0)
		goto out;
	/* Under the lock no writer or reader registers: judge again, from
	 * the live header, as the scan did from its copy. */
	hdr_stat(r->h, r->mode, r->cap, r->strings_size, r->events_offset,
		 &e->stat, e->pids, &rpid);
	e->keep = ring_keep(r->h, (uint32_t)fs.st_uid, &e->stat, rpid, 0,
			    e->pids);
	if (e->keep != STRACE_RING_KEEP_NONE) {
		ring_unlock(r->h);
		rc = 0;
		goto out;
	}
	/* Marked before the unlink: a process that opened the file before
	 * and takes the lock after us finds it removed. */
	atomic_store(&r->h->removed, 1);
	if (fstat(r->fd, &fs) == 0)
		e->mem_bytes = (uint64_t)fs.st_blocks * 512;
	if (lstat(path, &ls) < 0 || ls.st_dev != fs.st_dev ||
	    ls.st_ino != fs.st_ino)
		rc = -EAGAIN;
	else if (unlink(path) < 0)
		rc = -errno;
	else
		rc = 1;
	if (rc < 0)
		atomic_store(&r->h->removed, 0); /* still there: usable */
	ring_unlock(r->h);
out:
	strace_ring_close(r);
	return rc;
}

/* --- writers ----------------------------------------------------------- */

int strace_writer_open(struct strace_ring *ring, struct strace_writer **out)
{
	struct ring_hdr *h = ring->h;
	struct strace_writer *w;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ring = ring;
	w->idx = -1;
	for (int i = 0; i < STRACE_RING_MAX_WRITERS && w->idx < 0; i++) {
		struct ring_wslot *s = &h->writers[i];
		uint32_t st = atomic_load_explicit(&s->state,
						   memory_order_relaxed);
		if (st == SLOT_LIVE)
			continue;
		if (st == SLOT_DEAD &&
		    atomic_load_explicit(&s->flight, memory_order_acquire))
			continue; /* still holds a range to repair */
		int rc = ring_lock(h);
		if (rc < 0) {
			free(w);
			return rc;
		}
		if (atomic_load(&h->removed)) {
			/* strace_ring_remove_stale() unlinked the file after
			 * we opened it: nobody could read what we write. */
			ring_unlock(h);
			free(w);
			return -STRACE_E_CLOSED;
		}
		st = atomic_load_explicit(&s->state, memory_order_relaxed);
		if (st == SLOT_FREE || st == SLOT_CLOSED ||
		    (st == SLOT_DEAD && !atomic_load(&s->flight))) {
			s->pid = (uint32_t)getpid();
			s->starttime = self_starttime();
			s->tid = (uint32_t)gettid();
			atomic_store(&s->flight, FLIGHT_NONE);
			atomic_store_explicit(&s->state, SLOT_LIVE,
					      memory_order_release);
			w->idx = i;
		}
		ring_unlock(h);
	}
	if (w->idx < 0) {
		free(w);
		return -STRACE_E_FULL;
	}
	atomic_fetch_add(&h->writers_opened, 1);
	w->buf.pos = w->batch;
	/* A batch is at most half the ring: it always fits, and a lossless
	 * writer can fill one half while a reader drains the other (a batch
	 * only the tap sees is never stored). */
	w->nbatch = ring->mode == STRACE_RING_ARCHIVE || ring->tap_only
			    ? BATCH_ARCHIVE
		    : ring->cap / 2 < BATCH	      ? ring->cap / 2
						      : BATCH;
	w->buf.end = w->batch + w->nbatch;
	*out = w;
	return 0;
}

void strace_ring_set_wait_notice(struct strace_ring *ring,
				 void (*fn)(void *arg,
					    const struct strace_ring_wait *w),
				 void *arg)
{
	ring->wait_fn = fn;
	ring->wait_arg = arg;
}

void strace_ring_set_tap(struct strace_ring *ring,
			 void (*fn)(void *arg, const struct strace_event *ev,
				    size_t n),
			 void *arg)
{
	ring->tap_fn = fn;
	ring->tap_arg = arg;
}

void strace_writer_set_stop(struct strace_writer *w, int (*stop)(void *),
			    void *arg)
{
	w->stop = stop;
	w->stop_arg = arg;
}

/* The smallest cursor of the live readers, their number, and the pid of
 * the reader with that cursor. */
static uint64_t min_live_cursor(struct ring_hdr *h, int check_alive,
				unsigned *nlive, uint32_t *slow_pid)
{
	uint64_t m = UINT64_MAX;
	unsigned n = 0;
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++) {
		struct ring_rslot *s = &h->readers[i];
		if (atomic_load_explicit(&s->state, memory_order_acquire) !=
		    SLOT_LIVE)
			continue;
		if (check_alive && !proc_alive(s->pid, s->starttime)) {
			/* A dead reader no longer holds the writer back (CAS:
			 * it may have just closed cleanly). */
			uint32_t expect = SLOT_LIVE;
			if (atomic_compare_exchange_strong(&s->state, &expect,
							   SLOT_DEAD))
				atomic_fetch_sub(&h->readers_live, 1);
			continue;
		}
		/* Acquire: the reader finished reading everything below its
		 * cursor before publishing it (release in reader_publish). */
		uint64_t c = atomic_load_explicit(&s->cursor,
						  memory_order_acquire);
		if (c < m) {
			m = c;
			*slow_pid = s->pid;
		}
		n++;
	}
	*nlive = n;
	return m;
}

/* Lossless: recompute how far this writer may write; 1 if end fits. */
static int refresh_bound(struct strace_writer *w, uint64_t end, int check_alive)
{
	struct strace_ring *r = w->ring;
	struct ring_hdr *h = r->h;
	unsigned nlive;

	if (ring_lock(h) < 0)
		return 0; /* the lock is stuck: no room known; retried */
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t m = min_live_cursor(h, check_alive, &nlive, &w->slow_pid);
	w->nlive = nlive;
	if (atomic_load(&h->readers_ever) < r->hold_readers) {
		/* the readers held for have not all come: keep everything
		 * from the first event, where they start */
	} else if (nlive) {
		if (m > tail)
			tail = m;
	} else if (atomic_load(&h->readers_ever)) {
		/* Every reader has gone: nothing to wait for, keep the newest
		 * capacity events for a reader that attaches later. */
		if (end > r->cap && end - r->cap > tail)
			tail = end - r->cap;
	}
	/* else: no reader yet; hold everything from the first event. */
	atomic_store_explicit(&h->tail, tail, memory_order_relaxed);
	ring_unlock(h);
	w->bound = tail + r->cap;
	return end <= w->bound;
}

/* Lossless: wait until positions up to end may be written. */
static int wait_space(struct strace_writer *w, uint64_t end)
{
	struct strace_ring *r = w->ring;
	struct ring_hdr *h = r->h;
	uint64_t t0 = now_ms(), last_check = t0;
	int rc = 0, noticed = 0;

	if (refresh_bound(w, end, 0))
		return 0;
	/* the readers asleep must drain the ring to make room */
	if (atomic_load(&h->data_waiters))
		wake_readers(h);
	atomic_fetch_add(&h->space_waiters, 1);
	for (;;) {
		uint32_t f = atomic_load_explicit(&h->space_futex,
						  memory_order_acquire);
		int check = now_ms() - last_check >= LIVENESS_EVERY_MS;
		if (check)
			last_check = now_ms();
		/* seq_cst (the fetch_add above) orders our waiter count before
		 * the cursor loads; readers store the cursor, fence, then load
		 * space_waiters: one side sees the other. */
		if (refresh_bound(w, end, check))
			break;
		if (w->stop && w->stop(w->stop_arg)) {
			rc = -STRACE_E_STOPPED;
			break;
		}
		uint64_t t = now_ms();
		if (!noticed && r->wait_fn && t - t0 >= WAIT_NOTICE_MS) {
			struct strace_ring_wait wi = {end, w->nlive,
						      w->nlive ? w->slow_pid : 0,
						      t - t0};
			noticed = 1;
			r->wait_fn(r->wait_arg, &wi);
		}
		futex_wait(&h->space_futex, f, WAIT_SLICE_MS);
	}
	atomic_fetch_sub(&h->space_waiters, 1);
	return rc;
}

/* Wait until every position before start is committed. */
static void wait_turn(struct strace_ring *r, uint64_t start)
{
	struct ring_hdr *h = r->h;
	uint64_t t0 = 0;

	for (unsigned spins = 0;; spins++) {
		if (atomic_load_explicit(&h->committed, memory_order_acquire) >=
		    start)
			return;
		if (spins < 2000) {
			cpu_relax();
			continue;
		}
		if (!t0)
			t0 = now_ms();
		atomic_fetch_add(&h->turn_waiters, 1);
		uint32_t f = atomic_load(&h->data_futex);
		if (atomic_load(&h->committed) < start)
			futex_wait(&h->data_futex, f, 10);
		atomic_fetch_sub(&h->turn_waiters, 1);
		if (now_ms() - t0 >= LIVENESS_EVERY_MS) {
			repair_dead_writer(r);
			t0 = now_ms();
		}
	}
}

/*
 * An archive writer's reserved range [start, end) that could not be
 * written (the file could not grow, or its pages could not be had). When
 * no other writer (a decode thread) has reserved after it, the range is
 * given back: the ring ends with one LOST event for the batch when there
 * is room for it, else where it was - nothing without pages is committed,
 * which a reader would touch and die of SIGBUS on a full tmpfs. Otherwise
 * the range is committed as it is, the LOST event at its start if it
 * could be written, for the writers after it to go on. Returns rc.
 */
static int commit_lost(struct strace_writer *w, uint64_t start, uint64_t end,
		       int rc)
{
	struct strace_ring *r = w->ring;
	struct strace_event e = {STRACE_EV_LOST, STRACE_LOST_WRITE, 0, 0,
				 end - start, start};
	uint64_t to, mine = end;

	wait_turn(r, start);
	to = start < atomic_load_explicit(&r->file_cap, memory_order_relaxed) &&
		     pwrite_all(r->fd, &e, sizeof(e), file_pos(r, start)) == 0
		     ? start + 1
		     : start;
	if (!atomic_compare_exchange_strong(&r->h->reserved, &mine, to))
		to = end; /* others wait for this range: commit it */
	atomic_store_explicit(&r->h->committed, to, memory_order_release);
	atomic_store_explicit(&wslot(w)->flight, FLIGHT_NONE,
			      memory_order_relaxed);
	w->buf.pos = w->batch;
	w->tapped = 0;
	w->buf.err = rc;
	return rc;
}

/*
 * Take the n positions from reserved for this writer: *start, and *end.
 * The range is recorded in the writer's slot before the CAS, so that if
 * this process dies after it the range can be repaired
 * (repair_dead_writer). Flight and lossless writers wait for room (W2,
 * L1), unless direct: a range in place in the slots, clipped where the
 * ring wraps, taken only when there is room now (1 when there is not).
 * A stopped lossless wait leaves nothing taken. Returns 0, 1 or -code.
 */
static int take_range(struct strace_writer *w, uint64_t n, int direct,
		      uint64_t *startp, uint64_t *endp)
{
	struct strace_ring *r = w->ring;
	struct ring_hdr *h = r->h;
	struct ring_wslot *slot = wslot(w);
	uint64_t start, end;
	int rc;

	atomic_store_explicit(&slot->flight, FLIGHT_RESERVING,
			      memory_order_relaxed);
	start = atomic_load_explicit(&h->reserved, memory_order_relaxed);
	for (;;) {
		if (direct && n > r->cap - (start & r->mask))
			n = r->cap - (start & r->mask);
		end = start + n;
		/* Every range in flight lies within [committed, committed +
		 * capacity), so no two writers fill one slot at once, and no
		 * late writer fills a slot with an older lap's event after a
		 * newer one (a reader's seqlock check sees only newer laps). */
		if (r->mode != STRACE_RING_ARCHIVE &&
		    end > atomic_load_explicit(&h->committed,
					       memory_order_acquire) +
				  r->cap) {
			if (direct)
				goto none;
			wait_turn(r, end - r->cap);
			start = atomic_load_explicit(&h->reserved,
						     memory_order_relaxed);
			continue;
		}
		if (r->mode == STRACE_RING_LOSSLESS && end > w->bound) {
			if (direct) {
				if (!refresh_bound(w, end, 0))
					goto none;
			} else if ((rc = wait_space(w, end)) < 0) {
				atomic_store_explicit(&slot->flight,
						      FLIGHT_NONE,
						      memory_order_relaxed);
				return rc;
			}
			start = atomic_load_explicit(&h->reserved,
						     memory_order_relaxed);
			continue;
		}
		atomic_store_explicit(&slot->flight_start, start,
				      memory_order_relaxed);
		atomic_store_explicit(&slot->flight_end, end,
				      memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(
			    &h->reserved, &start, end, memory_order_seq_cst,
			    memory_order_relaxed))
			break;
	}
	atomic_store_explicit(&slot->flight, FLIGHT_RESERVED,
			      memory_order_relaxed);
	*startp = start;
	*endp = end;
	return 0;
none:
	atomic_store_explicit(&slot->flight, FLIGHT_NONE, memory_order_relaxed);
	return 1;
}

/* Publish [start, end), its events in their slots: in turn (W1). */
static void publish(struct strace_writer *w, uint64_t start, uint64_t end)
{
	struct strace_ring *r = w->ring;
	struct ring_hdr *h = r->h;

	wait_turn(r, start);
	/* Release: the event stores happen before readers see the new
	 * committed value (pairs with the acquire load in reader_next). */
	atomic_store_explicit(&h->committed, end, memory_order_release);
	atomic_store_explicit(&wslot(w)->flight, FLIGHT_NONE,
			      memory_order_relaxed);
	/* seq_cst fence: orders the committed store before the waiter loads;
	 * a reader (a writer waiting its turn) increments data_waiters
	 * (turn_waiters), seq_cst, before loading committed, so one of the
	 * two sees the other. Writers waiting their turn are woken at once,
	 * readers every wake_step events (they wake by themselves at least
	 * every WAIT_SLICE_MS). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&h->turn_waiters, memory_order_relaxed) ||
	    (atomic_load_explicit(&h->data_waiters, memory_order_relaxed) &&
	     end - atomic_load_explicit(&h->data_woken,
					memory_order_relaxed) >= r->wake_step))
		wake_readers(h);
}

/*
 * The events written in place: the tap sees them, the positions not
 * used are given back (or, when another writer took positions after
 * them, filled with pads), and the rest is published. The private batch
 * is in use after.
 */
static int direct_commit(struct strace_writer *w)
{
	struct strace_ring *r = w->ring;
	struct ring_wslot *slot = wslot(w);
	struct strace_event *base = w->dbase;
	uint64_t n = (uint64_t)(w->buf.pos - base);
	uint64_t start = w->dstart, end = start + n, mine = w->dend;

	w->dbase = NULL;
	w->buf.pos = w->batch;
	w->buf.end = w->batch + w->nbatch;
	if (r->tap_fn && n)
		r->tap_fn(r->tap_arg, base, n);
	if (end < w->dend) {
		/* (a repairer takes the range as recorded: the smaller one
		 * first, the whole again if it stays ours) */
		atomic_store_explicit(&slot->flight_end, end,
				      memory_order_relaxed);
		if (!atomic_compare_exchange_strong(&r->h->reserved, &mine,
						    end)) {
			/* pads, each with the pads left from it and its
			 * position (a slot never written is all zeros) */
			atomic_store_explicit(&slot->flight_end, w->dend,
					      memory_order_relaxed);
			for (uint64_t p = end; p < w->dend; p++)
				base[p - start] = (struct strace_event){
					STRACE_EV_PAD, 0, 0, 0, w->dend - p, p};
			end = w->dend;
		}
	}
	if (end == start)
		atomic_store_explicit(&slot->flight, FLIGHT_NONE,
				      memory_order_relaxed);
	else
		publish(w, start, end);
	w->buf.err = 0;
	return 0;
}

int strace_writer_flush(struct strace_writer *w)
{
	struct strace_ring *r = w->ring;
	uint64_t n = (uint64_t)(w->buf.pos - w->batch);
	uint64_t start, end;
	int rc;

	if (w->dbase)
		return direct_commit(w);
	if (n == 0)
		return 0;
	/* The tap sees each event once, though a stopped lossless wait
	 * keeps the batch for another flush. */
	if (r->tap_fn && w->tapped < n) {
		r->tap_fn(r->tap_arg, w->batch + w->tapped, n - w->tapped);
		w->tapped = n;
	}
	if (r->tap_only) {
		w->buf.pos = w->batch;
		w->tapped = 0;
		w->buf.err = 0;
		return 0;
	}
	rc = take_range(w, n, 0, &start, &end);
	if (rc < 0) {
		w->buf.err = rc;
		return rc;
	}
	if (r->mode == STRACE_RING_ARCHIVE) {
		/* An archive's slots are fresh pages: pwrite() fills them
		 * about twice as fast as stores into the mapping (no page
		 * fault each), and a full file system is -ENOSPC here, not
		 * SIGBUS at a store. */
		rc = archive_grow(r, end);
		if (rc == 0)
			rc = put_events(r, start, w->batch, n);
		if (rc < 0)
			return commit_lost(w, start, end, rc);
	} else {
		/* Flight mode: the reservation must be visible before any
		 * slot is overwritten (pairs with the acquire fence in
		 * reader_release). */
		atomic_thread_fence(memory_order_release);
		put_events(r, start, w->batch, n);
	}
	publish(w, start, end);
	w->buf.pos = w->batch;
	w->tapped = 0;
	w->buf.err = 0;
	return 0;
}

void strace_writer_set_direct(struct strace_writer *w, int on)
{
	w->direct = on && w->ring->mode == STRACE_RING_LOSSLESS &&
		    !w->ring->tap_only;
}

int strace_writer_refill(struct strace_writer *w)
{
	int rc = strace_writer_flush(w);
	uint64_t start, end;

	if (rc < 0 || !w->direct ||
	    take_range(w, w->ring->cap / 2 < BATCH_DIRECT ? w->ring->cap / 2
							   : BATCH_DIRECT,
		       1, &start, &end) != 0)
		return rc;
	w->dstart = start;
	w->dend = end;
	w->dbase = &w->ring->ev[start & w->ring->mask];
	w->buf.pos = w->dbase;
	w->buf.end = w->dbase + (end - start);
	return 0;
}

int strace_writer_close(struct strace_writer *w)
{
	if (!w)
		return 0;
	struct ring_hdr *h = w->ring->h;
	int rc = strace_writer_flush(w);
	if (rc < 0) {
		/* Leave nothing half-done: drop what could not be flushed. */
		w->buf.pos = w->batch;
	}
	atomic_store_explicit(&wslot(w)->state, SLOT_CLOSED,
			      memory_order_release);
	atomic_fetch_add(&h->writers_closed, 1);
	wake_readers(h);
	free(w);
	return rc;
}

/* --- readers ----------------------------------------------------------- */

int strace_reader_open(struct strace_ring *ring, int from_end,
		       struct strace_reader **out)
{
	struct ring_hdr *h = ring->h;
	struct strace_reader *r;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ring = ring;
	r->idx = -1;
	r->poll_us = POLL_US;
	/* Under the lock, so that a lossless writer computing its bound either
	 * sees this reader's slot or has already published a tail we start
	 * at (refresh_bound takes the same lock). */
	int rc = ring_lock(h);
	if (rc < 0) {
		free(r);
		return rc;
	}
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++) {
		struct ring_rslot *s = &h->readers[i];
		uint32_t st = atomic_load(&s->state);
		if (st == SLOT_LIVE)
			continue;
		uint64_t c = atomic_load(&h->committed);
		uint64_t start;
		if (from_end) {
			start = c;
		} else if (ring->mode == STRACE_RING_ARCHIVE) {
			start = 0; /* the file keeps every event */
		} else if (ring->mode == STRACE_RING_LOSSLESS) {
			start = atomic_load(&h->tail);
			if (c > ring->cap && start < c - ring->cap)
				start = c - ring->cap;
		} else {
			uint64_t res = atomic_load(&h->reserved);
			start = res > ring->cap ? res - ring->cap : 0;
		}
		if (start > c)
			start = c;
		s->pid = (uint32_t)getpid();
		s->starttime = self_owner() >> LOCK_PID_BITS;
		atomic_store(&s->lost, 0);
		atomic_store(&s->cursor, start);
		atomic_store(&s->state, SLOT_LIVE);
		r->idx = i;
		r->cursor = start;
		break;
	}
	if (r->idx >= 0) {
		atomic_fetch_add(&h->readers_live, 1);
		atomic_fetch_add(&h->readers_ever, 1);
	}
	ring_unlock(h);
	if (r->idx < 0) {
		free(r);
		return -STRACE_E_FULL;
	}
	/* Let writers that wait for space or for readers re-check. */
	atomic_fetch_add(&h->space_futex, 1);
	futex_wake_all(&h->space_futex);
	atomic_fetch_add(&h->attach_futex, 1);
	futex_wake_all(&h->attach_futex);
	*out = r;
	return 0;
}

void strace_reader_close(struct strace_reader *r)
{
	if (!r)
		return;
	struct ring_hdr *h = r->ring->h;
	/* No lock: a writer computing its bound either counts this reader's
	 * cursor or not, and both are safe once it no longer reads. CAS: a
	 * writer may have marked it dead meanwhile (and counted that). */
	uint32_t live = SLOT_LIVE;
	if (atomic_compare_exchange_strong(&rslot(r)->state, &live,
					   SLOT_CLOSED))
		atomic_fetch_sub(&h->readers_live, 1);
	else
		atomic_store_explicit(&rslot(r)->state, SLOT_CLOSED,
				      memory_order_release);
	atomic_fetch_add(&h->space_futex, 1);
	futex_wake_all(&h->space_futex);
	free(r);
}

struct strace_ring *strace_reader_ring(const struct strace_reader *r)
{
	return r->ring;
}

struct strace_ring *strace_writer_ring(const struct strace_writer *w)
{
	return w->ring;
}

uint64_t strace_reader_lost(const struct strace_reader *r)
{
	return r->lost;
}

/* Oldest position a reader may still find intact. */
static uint64_t oldest_valid(const struct strace_ring *ring, uint64_t committed)
{
	uint64_t top = committed;

	if (ring->mode == STRACE_RING_ARCHIVE)
		return 0; /* never overwritten */
	if (ring->mode == STRACE_RING_FLIGHT) {
		/* Writers may be overwriting anything below reserved - cap. */
		top = atomic_load_explicit(&ring->h->reserved,
					   memory_order_acquire);
		if (top < committed)
			top = committed;
	}
	return top > ring->cap ? top - ring->cap : 0;
}

static void reader_publish(struct strace_reader *r)
{
	struct ring_hdr *h = r->ring->h;
	/* Release: our reads of the slots below cursor are done before a
	 * writer can see the cursor (pairs with the acquire load in
	 * min_live_cursor). */
	atomic_store_explicit(&rslot(r)->cursor, r->cursor,
			      memory_order_release);
	if (r->ring->mode != STRACE_RING_LOSSLESS)
		return;
	/* seq_cst fence: cursor store before the waiter load (the writer
	 * increments space_waiters before re-reading cursors). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&h->space_waiters, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&h->space_futex, 1,
					  memory_order_release);
		futex_wake_all(&h->space_futex);
	}
}

long strace_reader_next(struct strace_reader *r, struct strace_batch *b,
			size_t max, int timeout_ms)
{
	struct strace_ring *ring = r->ring;
	struct ring_hdr *h = ring->h;
	uint64_t deadline = 0, last_check = 0;
	unsigned spins = 0;
	int polled = 0; /* slept POLL_US in this call */
	/* A writer that closes wakes the readers: they return, so that the
	 * caller asks strace_reader_status() at once (not a slice later);
	 * when every writer has closed, nothing is waited for. */
	uint32_t closed = atomic_load_explicit(&h->writers_closed,
					       memory_order_relaxed);

	b->ev = NULL;
	b->n = 0;
	b->seq = r->cursor;
	b->lost = 0;
	for (;;) {
		/* Acquire: pairs with the writer's release store of committed;
		 * the events below it are complete. */
		uint64_t c = atomic_load_explicit(&h->committed,
						  memory_order_acquire);
		uint64_t oldest = oldest_valid(ring, c);
		if (r->cursor < oldest) {
			uint64_t lost = oldest - r->cursor;
			b->lost += lost;
			r->lost += lost;
			r->cursor = oldest;
			atomic_store_explicit(&rslot(r)->lost, r->lost,
					      memory_order_relaxed);
		}
		if (c > r->cursor) {
			uint64_t n = c - r->cursor;
			r->idle_us = 0;
			if (polled && ring->mode != STRACE_RING_ARCHIVE) {
				/* the next sleep: as long as fills an eighth
				 * to half of the ring */
				if (n >= ring->cap / 2 && r->poll_us > POLL_MIN_US)
					r->poll_us /= 2;
				else if (n < ring->cap / 8 &&
					 r->poll_us < POLL_MAX_US)
					r->poll_us *= 2;
			}
			if (ring->mode == STRACE_RING_ARCHIVE) {
				/* slot = position; the file and this process's
				 * mapping must reach c */
				struct ring_map *m = atomic_load_explicit(
					&ring->cur, memory_order_acquire);
				if (c > atomic_load_explicit(&ring->file_cap,
							     memory_order_relaxed) ||
				    c > m->slots) {
					int rc = archive_sync(ring, c);
					if (rc < 0)
						return rc;
					m = atomic_load_explicit(
						&ring->cur,
						memory_order_acquire);
				}
				b->ev = &m->ev[r->cursor];
			} else {
				uint64_t i = r->cursor & ring->mask;
				if (n > ring->cap - i)
					n = ring->cap - i;
				b->ev = &ring->ev[i];
			}
			if (max && n > max)
				n = max;
			b->n = (size_t)n;
			b->seq = r->cursor;
			return (long)n;
		}
		b->seq = r->cursor;
		uint32_t now_closed = atomic_load_explicit(
				 &h->writers_closed, memory_order_relaxed),
			 opened = atomic_load_explicit(&h->writers_opened,
						       memory_order_relaxed);
		if (b->lost || timeout_ms == 0 || now_closed != closed ||
		    (opened && now_closed == opened))
			return 0;
		/* Spin a little first: a writer on another core often
		 * commits its next batch within microseconds, and a futex
		 * sleep and wake costs more than that; but not long, for a
		 * spinning reader takes a core a writer may need. */
		if (spins < READER_SPIN) {
			spins++;
			cpu_relax();
			continue;
		}
		uint64_t t = now_ms();
		if (!deadline) {
			deadline = timeout_ms < 0 ? UINT64_MAX
						  : t + (uint64_t)timeout_ms;
			last_check = t;
		}
		if (t >= deadline)
			return 0;
		if (t - last_check >= LIVENESS_EVERY_MS) {
			last_check = t;
			if (repair_dead_writer(ring))
				continue;
			if (strace_reader_status(r) != STRACE_READER_LIVE)
				return 0;
		}
		if (r->idle_us < POLL_IDLE_US) {
			/* writers at work lately: a look again soon, asking
			 * none of them for a wake */
			uint64_t left = deadline - t; /* ms, at least 1 */
			uint32_t us = left > r->poll_us / 1000
					      ? r->poll_us
					      : (uint32_t)left * 1000;
			struct timespec ts = {0, (long)us * 1000};

			nanosleep(&ts, NULL);
			r->idle_us += us;
			polled = 1;
			continue;
		}
		atomic_fetch_add(&h->data_waiters, 1);
		uint32_t f = atomic_load(&h->data_futex);
		/* seq_cst above: our waiter count is visible before we load
		 * committed; writers store committed, fence, load waiters. */
		if (atomic_load(&h->committed) == c) {
			uint64_t left = deadline - t;
			int ms = left < WAIT_SLICE_MS ? (int)left : WAIT_SLICE_MS;
			futex_wait(&h->data_futex, f, ms);
		}
		atomic_fetch_sub(&h->data_waiters, 1);
	}
}

/* Positions an archive reader reads before it gives their pages back. */
#define DROP_STEP (1u << 16) /* 2 MiB of events */

/*
 * An archive's events are read once, front to back (a seek back faults
 * them in again): the pages of what this reader has released go back, so
 * that a process reading a ring of any size holds a few MiB of it, not
 * the whole file (the pages stay in the file: other readers keep theirs).
 */
static void drop_behind(struct strace_reader *r)
{
	struct strace_ring *ring = r->ring;
	uint64_t lo, hi;

	if (r->cursor < r->dropped + 2 * DROP_STEP) {
		if (r->cursor < r->dropped)
			r->dropped = r->cursor; /* a seek back */
		return;
	}
	lo = ring->events_offset + r->dropped * sizeof(struct strace_event);
	hi = ring->events_offset +
	     (r->cursor - DROP_STEP) * sizeof(struct strace_event);
	lo = (lo + 4095) & ~4095ull;
	hi &= ~4095ull;
	for (struct ring_map *m = atomic_load_explicit(&ring->cur,
						       memory_order_acquire);
	     m && hi > lo; m = m->older)
		if (hi <= m->len)
			madvise(m->base + lo, hi - lo, MADV_DONTNEED);
	r->dropped = r->cursor - DROP_STEP;
}

size_t strace_reader_release(struct strace_reader *r,
			     const struct strace_batch *b)
{
	size_t bad = 0;
	if (b->n == 0)
		return 0;
	if (r->ring->mode == STRACE_RING_FLIGHT) {
		/* Seqlock check: our loads of the events happen before this
		 * load of reserved (acquire fence); a writer reserves before it
		 * overwrites (release fence in writer_flush). */
		atomic_thread_fence(memory_order_acquire);
		uint64_t res = atomic_load_explicit(&r->ring->h->reserved,
						    memory_order_relaxed);
		uint64_t oldest = res > r->ring->cap ? res - r->ring->cap : 0;
		if (oldest > b->seq) {
			bad = oldest - b->seq < b->n ? oldest - b->seq : b->n;
			r->lost += bad;
			atomic_store_explicit(&rslot(r)->lost, r->lost,
					      memory_order_relaxed);
		}
	}
	r->cursor = b->seq + b->n;
	reader_publish(r);
	if (r->ring->mode == STRACE_RING_ARCHIVE)
		drop_behind(r);
	return bad;
}

int strace_reader_seek(struct strace_reader *r, uint64_t pos)
{
	uint64_t c = atomic_load_explicit(&r->ring->h->committed,
					  memory_order_acquire);

	if (pos > c)
		return -STRACE_E_BADARG;
	/* published at the next release; a position no longer kept is
	 * counted as lost by the next strace_reader_next() */
	r->cursor = pos;
	return 0;
}

int strace_reader_status(struct strace_reader *r)
{
	struct strace_ring *ring = r->ring;
	struct ring_hdr *h = ring->h;
	unsigned dead = 0, live;

	if (atomic_load_explicit(&h->committed, memory_order_acquire) >
	    r->cursor)
		return STRACE_READER_LIVE;
	/* The scan reads /proc for every live writer: a reader that keeps
	 * catching up asks it every LIVENESS_EVERY_MS, or at once when a
	 * writer has closed since. */
	uint32_t closed = atomic_load(&h->writers_closed);
	uint64_t t = now_ms();
	if (closed == r->scan_closed && t - r->scan_ms < LIVENESS_EVERY_MS)
		return STRACE_READER_LIVE;
	r->scan_closed = closed;
	r->scan_ms = t;
	live = writers_scan(h, &dead, NULL, 0);
	if (live)
		return STRACE_READER_LIVE;
	if (repair_dead_writer(ring))
		return STRACE_READER_LIVE; /* a loss marker was committed */
	if (atomic_load(&h->committed) > r->cursor)
		return STRACE_READER_LIVE;
	if (dead)
		return STRACE_READER_WRITER_GONE;
	uint32_t opened = atomic_load(&h->writers_opened);
	if (opened == 0) {
		/* No writer yet: live while the creator may still open one. */
		if (proc_alive((uint32_t)h->creator_pid, h->creator_starttime))
			return STRACE_READER_LIVE;
		return STRACE_READER_WRITER_GONE;
	}
	return STRACE_READER_END;
}

void strace_ring_hold_for_readers(struct strace_ring *ring, int n)
{
	ring->hold_readers = n > 0 ? (uint32_t)n : 0;
}

int strace_ring_wait_readers(struct strace_ring *ring, int n, int timeout_ms)
{
	struct ring_hdr *h = ring->h;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX
					   : now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		uint32_t f = atomic_load(&h->attach_futex);
		if (atomic_load(&h->readers_live) >= (uint32_t)n)
			return 0;
		uint64_t t = now_ms();
		if (t >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - t;
		futex_wait(&h->attach_futex, f,
			   left < WAIT_SLICE_MS ? (int)left : WAIT_SLICE_MS);
	}
}
