/* SPDX-License-Identifier: MIT */
/*
 * events/ring_stat.c - a ring's state: the header's counters and slot tables
 * with every live slot's process checked, and the readers' table.
 * See events/ring_internal.h for the protocol.
 */
#include <string.h>

#include "ring_internal.h"

/*
 * Fill st from a header: the layout fields given (validated, never read
 * from h again), the counters, and the slot tables with each live slot's
 * process checked. Runs on the mapped header (strace_ring_stat) and on a
 * private copy of it (the scan), so that both judge liveness alike.
 * wpids (NULL: not wanted) receives up to STRACE_RING_ENTRY_PIDS live
 * writers' pids, *rpid the first live reader's.
 */
void ring_hdr_stat(struct ring_hdr *h, int mode, uint64_t cap,
                   uint64_t strings_size, uint64_t events_offset,
                   struct strace_ring_stat *st, uint32_t *wpids,
                   uint32_t *rpid) {
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
  st->writers_live = ring_writers_scan(h, &dead, wpids, STRACE_RING_ENTRY_PIDS);
  st->writers_dead = dead;
  st->writers_closed = atomic_load(&h->writers_closed);
  for (int i = 0; i < STRACE_RING_MAX_READERS; i++) {
    struct ring_rslot *s = &h->readers[i];
    uint32_t state = atomic_load(&s->state);
    if (state == SLOT_LIVE && ring_proc_alive(s->pid, s->starttime)) {
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
  st->lock_pid =
      (uint32_t)(atomic_load(&h->lock) & ((1u << LOCK_PID_BITS) - 1));
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
		int rc = ring_archive_sync(ring, cap);
		if (rc < 0)
			return rc;
	}
        ring_hdr_stat(ring->h, ring->mode, cap, ring->strings_size,
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
			       ring_proc_alive(s->pid, s->starttime);
		info[n].cursor = atomic_load(&s->cursor);
		info[n].lost = atomic_load(&s->lost);
		n++;
	}
	return n;
}
