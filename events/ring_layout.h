/* SPDX-License-Identifier: MIT */
/*
 * events/ring_layout.h - the on-disk (in-memory) layout of a ring file.
 * Internal: readers outside this library go through strace/ring.h.
 *
 *   offset 0            struct ring_hdr (RING_HDR_SIZE bytes)
 *   strings_offset      string table (strings_size bytes)
 *   events_offset       capacity * 32-byte events
 *
 * Every field is a fixed-width integer at a fixed offset; no pointers.
 * Counters written concurrently sit on their own 128-byte line (the
 * adjacent-line prefetcher pairs 64-byte lines).
 */
#ifndef EVENTS_RING_LAYOUT_H
#define EVENTS_RING_LAYOUT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "strace/ring.h"

#define RING_HDR_SIZE 16384u
#define RING_LINE 128
#define RING_MAX_CAPACITY (1ull << 36) /* 2 TiB of events */
#define RING_MAX_STRINGS (1ull << 36)
/* Lock owner words: Linux pids are below 2^22 (PID_MAX_LIMIT). */
#define LOCK_PID_BITS 22

/* Writer and reader slot states. */
enum { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_CLOSED = 2, SLOT_DEAD = 3 };
/* Writer in-flight states, for repairing after a writer dies. */
enum { FLIGHT_NONE = 0, FLIGHT_RESERVING = 1, FLIGHT_RESERVED = 2 };

struct ring_wslot {
	_Atomic uint32_t state;
	uint32_t pid;
	uint64_t starttime; /* /proc/pid/stat field 22, to tell pid reuse */
	_Atomic uint32_t flight;
	uint32_t tid;
	_Atomic uint64_t flight_start, flight_end;
	uint8_t pad[64 - 40];
};

/* A reader's slot. Its owner (pid, starttime) is written under hdr->lock
 * when a reader takes the slot, a free one or one whose owner died
 * (ring_reader_reap): atomic, for --stat reads it without the lock. */
struct ring_rslot {
	_Atomic uint64_t cursor; /* next position this reader will read */
	_Atomic uint64_t lost;
	_Atomic uint32_t state;
	_Atomic uint32_t pid;
	_Atomic uint64_t starttime;
	uint8_t pad[RING_LINE - 32];
};

struct ring_hdr {
	/* Written once at creation. */
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint32_t event_size;
	uint32_t mode;
	_Atomic uint64_t capacity; /* grows only in archive mode */
	uint64_t strings_offset;
	uint64_t strings_size;
	uint64_t events_offset;
	_Atomic uint64_t file_size;
	uint64_t creator_pid;
	uint64_t creator_starttime;
	uint64_t created_ns;

	/* Positions handed out to writers (by CAS, in order). */
	alignas(RING_LINE) _Atomic uint64_t reserved;
	/* Positions readable: advanced in reservation order, release. */
	alignas(RING_LINE) _Atomic uint64_t committed;
	/* Lossless: oldest position that writers must keep. Guarded by lock. */
	alignas(RING_LINE) _Atomic uint64_t tail;
	/* The holder of the lock: (start time << LOCK_PID_BITS) | pid, the
	 * same identity as the slot tables use; 0 when free. */
	_Atomic uint64_t lock;
	_Atomic uint32_t readers_ever;
	_Atomic uint32_t readers_live;
	_Atomic uint32_t writers_opened;
	_Atomic uint32_t writers_closed;
	/* Set under the lock by strace_ring_remove_stale() before it unlinks
	 * the file: no writer registers after (0 in files made before it
	 * existed: the line had room, nothing moved). */
	_Atomic uint32_t removed;
	/* Futex words: bumped by the other side when *_waiters is non-zero. */
	alignas(RING_LINE) _Atomic uint32_t data_futex;
	_Atomic uint32_t data_waiters; /* readers asleep on data_futex */
	_Atomic uint32_t turn_waiters; /* writers asleep on it, for their turn */
	_Atomic uint64_t data_woken;   /* committed when readers were last woken */
	alignas(RING_LINE) _Atomic uint32_t space_futex;
	_Atomic uint32_t space_waiters;
	alignas(RING_LINE) _Atomic uint32_t attach_futex;
	alignas(RING_LINE) _Atomic uint64_t strings_used;

	alignas(RING_LINE) struct ring_wslot writers[STRACE_RING_MAX_WRITERS];
	alignas(RING_LINE) struct ring_rslot readers[STRACE_RING_MAX_READERS];
};

_Static_assert(sizeof(struct ring_wslot) == 64, "writer slot size");
_Static_assert(sizeof(struct ring_rslot) == RING_LINE, "reader slot size");
_Static_assert(sizeof(struct ring_hdr) <= RING_HDR_SIZE, "header fits");
_Static_assert(offsetof(struct ring_hdr, data_futex) == 4 * RING_LINE,
	       "the lock's line holds removed without moving a field");

/* A string table entry; len_plus1 is stored last (release) to publish it. */
struct ring_sentry {
	_Atomic uint32_t len_plus1;
	uint16_t kind;
	uint16_t magic; /* RING_SENTRY_MAGIC: catches offsets into an entry */
	uint64_t key;
	uint64_t aux;
	char str[]; /* len bytes and a NUL, padded to 8 */
};
#define RING_SENTRY_HDR 24u
#define RING_SENTRY_MAGIC 0x5354u

#endif /* EVENTS_RING_LAYOUT_H */
