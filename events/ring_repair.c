/* SPDX-License-Identifier: MIT */
/*
 * events/ring_repair.c - repair after a death: writers whose process died,
 * the range a dead writer reserved, committed as one LOST event so that
 * nobody waits behind it; readers whose process died, their slots given
 * back; waking the readers.
 * See events/ring_internal.h for the protocol.
 */
#include <string.h>

#include "ring_internal.h"

/* Mark writers whose process died; returns the number still live.
 * pids (NULL: not wanted) receives the first npids live writers' pids. */
unsigned ring_writers_scan(struct ring_hdr *h, unsigned *dead,
			     uint32_t *pids, unsigned npids)
{
	unsigned live = 0, d = 0;
	for (int i = 0; i < STRACE_RING_MAX_WRITERS; i++) {
		struct ring_wslot *s = &h->writers[i];
		uint32_t st = atomic_load_explicit(&s->state,
						   memory_order_acquire);
		if (st == SLOT_LIVE) {
			if (ring_proc_alive(s->pid, s->starttime)) {
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

/*
 * The one rule for a reader's slot whose owner died (SIGKILL, the OOM
 * killer, a crash: no strace_reader_close()): judged by pid and start
 * time, as writers are, so a reused pid is not taken for the owner and a
 * reader that is only slow, or stopped, keeps its slot. Under hdr->lock:
 * an owner is written only under it, so the (pid, start time) read here
 * is one owner's, and two callers cannot both mark one slot.
 */
int ring_reader_reap(struct ring_hdr *h, struct ring_rslot *s)
{
	if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_LIVE)
		return 1;
	if (ring_proc_alive(atomic_load_explicit(&s->pid, memory_order_relaxed),
			    atomic_load_explicit(&s->starttime,
						 memory_order_relaxed)))
		return 0;
	/* CAS, not a store: the owner may have closed (and exited) between
	 * the load and the check; a clean close stays one, counted once. */
	uint32_t expect = SLOT_LIVE;
	if (atomic_compare_exchange_strong(&s->state, &expect, SLOT_DEAD))
		atomic_fetch_sub(&h->readers_live, 1);
	return 1;
}

void ring_wake_readers(struct ring_hdr *h)
{
	atomic_store_explicit(&h->data_woken,
			      atomic_load_explicit(&h->committed,
						   memory_order_relaxed),
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&h->data_futex, 1, memory_order_release);
	futex_wake_all(&h->data_futex);
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
		if (st == SLOT_LIVE && ring_proc_alive(s->pid, s->starttime))
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
int ring_repair_dead_writer(struct strace_ring *r)
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
                int rc = r->mode == STRACE_RING_ARCHIVE
                             ? ring_archive_grow(r, end)
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
		ring_wake_readers(h);
	return done;
}
