/* SPDX-License-Identifier: MIT */
/*
 * events/ring_write.c - writers: open, the batch's flush (reserve, copy,
 * publish in turn: what strace/ring.h's inline per-event
 * strace_writer_slot() calls when a batch is full), the lossless wait for
 * room, direct writing, and waiting for readers.
 * See events/ring_internal.h for the protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ring_internal.h"

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
			s->starttime = ring_self_starttime();
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
 * the reader with that cursor; under hdr->lock. check_alive: a reader
 * whose process died is given back first (ring_reader_reap). */
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
		if (check_alive && ring_reader_reap(h, s))
			continue;
		/* Acquire: the reader finished reading everything below its
		 * cursor before publishing it (release in reader_publish). */
		uint64_t c = atomic_load_explicit(&s->cursor,
						  memory_order_acquire);
		if (c < m) {
			m = c;
			*slow_pid = atomic_load_explicit(&s->pid,
							 memory_order_relaxed);
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
		ring_wake_readers(h);
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
			ring_repair_dead_writer(r);
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
		ring_wake_readers(h);
}

/*
 * The events written in place: the tap sees them, the positions not
 * used are given ring_back (or, when another writer took positions after
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
		rc = ring_archive_grow(r, end);
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
	ring_wake_readers(h);
	free(w);
	return rc;
}

struct strace_ring *strace_writer_ring(const struct strace_writer *w)
{
	return w->ring;
}

void strace_ring_hold_for_readers(struct strace_ring *ring, int n)
{
	ring->hold_readers = n > 0 ? (uint32_t)n : 0;
}

/* Whether n readers are attached, their processes alive: readers_live
 * counts a reader that died without closing until someone judges it, so
 * when it says n, the slots are judged and counted (under the lock). */
static int readers_attached(struct ring_hdr *h, uint32_t n)
{
	uint32_t live = 0;

	if (atomic_load(&h->readers_live) < n)
		return 0;
	if (ring_lock(h) < 0)
		return 0; /* the lock is stuck: judged again after a slice */
	for (int i = 0; i < STRACE_RING_MAX_READERS; i++)
		live += !ring_reader_reap(h, &h->readers[i]);
	ring_unlock(h);
	return live >= n;
}

int strace_ring_wait_readers(struct strace_ring *ring, int n, int timeout_ms)
{
	struct ring_hdr *h = ring->h;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX
					   : now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		uint32_t f = atomic_load(&h->attach_futex);
		if (readers_attached(h, (uint32_t)n))
			return 0;
		uint64_t t = now_ms();
		if (t >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - t;
		futex_wait(&h->attach_futex, f,
			   left < WAIT_SLICE_MS ? (int)left : WAIT_SLICE_MS);
	}
}
