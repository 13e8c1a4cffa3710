/* SPDX-License-Identifier: MIT */
/*
 * events/ring_read.c - readers: open, next and release (the per-batch path),
 * the reader's status, and what an archive reader gives back.
 * See events/ring_internal.h for the protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring_internal.h"

void strace_batch_copy(struct strace_event *dst, const struct strace_batch *b)
{
	uint64_t *d = (uint64_t *)(void *)dst;
	const uint64_t *s = (const uint64_t *)(const void *)b->ev;

	for (size_t i = 0; i < b->n * (STRACE_EVENT_SIZE / 8); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/* A slot for a new reader, under hdr->lock: one no reader holds (free,
 * closed, dead), else one whose owner died without closing it (SIGKILL,
 * the OOM killer), taken back; -1 if live readers hold every one. Free
 * ones first: the scan for dead owners reads /proc once a slot. */
static int free_slot(struct ring_hdr *h)
{
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++)
		if (atomic_load(&h->readers[i].state) != SLOT_LIVE)
			return i;
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++)
		if (ring_reader_reap(h, &h->readers[i]))
			return i;
	return -1;
}

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
	int i = free_slot(h);
	if (i >= 0) {
		struct ring_rslot *s = &h->readers[i];
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
		s->starttime = ring_self_owner() >> LOCK_PID_BITS;
		atomic_store(&s->lost, 0);
		atomic_store(&s->cursor, start);
		atomic_store(&s->state, SLOT_LIVE);
		r->idx = i;
		r->cursor = start;
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
	 * judge that could not see this process (another pid namespace) may
	 * have marked it dead meanwhile (and counted that), and a new reader
	 * may hold it since: only a slot still dead is ours to close. */
	uint32_t st = SLOT_LIVE;
	if (atomic_compare_exchange_strong(&rslot(r)->state, &st,
					   SLOT_CLOSED))
		atomic_fetch_sub(&h->readers_live, 1);
	else if (st == SLOT_DEAD)
		atomic_compare_exchange_strong(&rslot(r)->state, &st,
					       SLOT_CLOSED);
	atomic_fetch_add(&h->space_futex, 1);
	futex_wake_all(&h->space_futex);
	free(r);
}

struct strace_ring *strace_reader_ring(const struct strace_reader *r)
{
	return r->ring;
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
					int rc = ring_archive_sync(ring, c);
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
			if (ring_repair_dead_writer(ring))
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
 * An archive's events are read once, front to ring_back (a seek back faults
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
	live = ring_writers_scan(h, &dead, NULL, 0);
	if (live)
		return STRACE_READER_LIVE;
	if (ring_repair_dead_writer(ring))
		return STRACE_READER_LIVE; /* a loss marker was committed */
	if (atomic_load(&h->committed) > r->cursor)
		return STRACE_READER_LIVE;
	if (dead)
		return STRACE_READER_WRITER_GONE;
	uint32_t opened = atomic_load(&h->writers_opened);
	if (opened == 0) {
		/* No writer yet: live while the creator may still open one. */
                if (ring_proc_alive((uint32_t)h->creator_pid,
                                    h->creator_starttime))
                  return STRACE_READER_LIVE;
		return STRACE_READER_WRITER_GONE;
	}
	return STRACE_READER_END;
}
