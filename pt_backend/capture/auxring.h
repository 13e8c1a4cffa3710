/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/auxring.h - consumers of a perf event's two rings: the
 * data ring (sideband records) and the AUX area (Intel PT bytes).
 *
 * Both follow the kernel's protocol (kernel/events/ring_buffer.c and the
 * barrier-pairing comment of tools/include/linux/ring_buffer.h):
 *
 *   kernel (producer)                 us (consumer)
 *   read tail; smp_mb()  (A)          load head; smp_rmb()  (C = acquire)
 *   write records/bytes               read records/bytes
 *   smp_wmb()            (B)          smp_mb(); store tail  (D = release)
 *   store head
 *
 * A pairs with D (the kernel does not overwrite what we still read), B with
 * C (we do not read bytes before they are written). Heads and tails are
 * free-running 64-bit positions, indexed with size - 1.
 *
 * The AUX area has two modes. Full trace (mapped PROT_READ|PROT_WRITE):
 * the kernel writes at aux_head and never past aux_tail + size; when it
 * runs out of room it emits PERF_RECORD_AUX with the TRUNCATED flag and
 * disables the event (the caller re-enables it after consuming).
 * Snapshot (mapped PROT_READ): the kernel overwrites the oldest bytes and
 * aux_head is the write offset inside the buffer; the caller stops the
 * event (PERF_EVENT_IOC_DISABLE), extracts the newest bytes, and enables
 * it again.
 *
 * A ring is used by one consumer thread. Nothing here allocates beyond
 * init, prints or makes system calls: tests drive the same code with a
 * producer thread in ordinary memory.
 */
#ifndef PT_BACKEND_CAPTURE_AUXRING_H
#define PT_BACKEND_CAPTURE_AUXRING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h" /* struct strace_sb, STRACE_AUX_SNAP_* */
#include "pt_backend/perf/perf.h"

/* ---------------- data ring ---------------- */

struct strace_dring {
	struct perf_event_mmap_page *page; /* first page of the mapping */
	const uint8_t *data;               /* page + page size */
	uint64_t size;                     /* power of two */
	uint8_t *tmp;                      /* a record that wraps, copied */
	uint64_t records, bytes;           /* consumed so far */
};

/*
 * Attach to a mapping: base is the metadata page, data_size (a power of
 * two) bytes of records follow at base + page_size.
 * Returns 0, -EINVAL for a size that is not a power of two, -ENOMEM.
 */
int strace_dring_init(struct strace_dring *r, void *base, size_t page_size,
		      size_t data_size);
void strace_dring_fini(struct strace_dring *r);

/*
 * Called for each record, in ring order. rec is valid until the callback
 * returns (it may point into the ring or into a copy). A negative return
 * stops consumption; that record and the ones after it stay in the ring.
 */
typedef int (*strace_dring_cb)(void *arg, const struct pfmt_event_header *rec);

/*
 * Consume the records that are complete now and release their space.
 * Returns the number of records, a callback's negative value, or
 * -STRACE_E_CORRUPT for a header whose size is below 8, not 8-aligned or
 * beyond data_head (the ring is then skipped up to data_head).
 */
int strace_dring_consume(struct strace_dring *r, strace_dring_cb cb,
			 void *arg);

/* Bytes the kernel has published that we have not consumed. */
uint64_t strace_dring_pending(const struct strace_dring *r);

/* ---------------- sideband records ---------------- */

/* The size of the sample_id trailer (sample_id_all) for sample_type. */
size_t strace_sb_sid_size(uint64_t sample_type);

/*
 * Parse rec, whose event has sample_type and sample_id_all set.
 * Returns 0, -STRACE_E_CORRUPT for a record too short for its type.
 * Unknown types parse with only type/misc and the trailer.
 */
int strace_sb_parse(const struct pfmt_event_header *rec, uint64_t sample_type,
		    struct strace_sb *out);

/* ---------------- AUX area ---------------- */

struct strace_auxring {
	struct perf_event_mmap_page *page; /* the data ring's metadata page */
	const uint8_t *data;               /* the AUX mapping */
	uint64_t size;                     /* power of two */
	int overwrite;                     /* snapshot mode */
	int wrapped;                       /* snapshot: sticky, see below */
	uint64_t consumed;                 /* full trace: bytes delivered */
	/*
	 * Full trace: consume only up to a multiple of align (a power of
	 * two; 0 or 1: no rounding). live.c uses 8 so that a perf.data's
	 * AUXTRACE chunks end on 8-byte stream positions: the zero padding
	 * perf.data puts after a chunk's bytes then never falls inside a
	 * packet split between two chunks (perf's decoder would read it as
	 * PAD bytes and lose sync). Set it to 1 for the final drain.
	 */
	unsigned align;
};

int strace_aux_init(struct strace_auxring *a,
		    struct perf_event_mmap_page *page, const void *data,
		    size_t size, int overwrite);

/*
 * Full trace: deliver the bytes [aux_tail, aux_head) as at most two
 * contiguous pieces (the second after a wrap), each with its stream
 * offset, then release them (store aux_tail). A negative callback return
 * stops; the bytes from that piece on stay in the ring.
 * Returns the number of bytes released, a callback's negative value, or
 * -STRACE_E_CORRUPT if aux_head is behind aux_tail or more than size ahead
 * (nothing is consumed; this cannot happen with a sane kernel).
 */
typedef int (*strace_aux_cb)(void *arg, uint64_t offset, const void *p,
			     size_t len);
int strace_aux_consume(struct strace_auxring *a, strace_aux_cb cb, void *arg);

/*
 * Snapshot: copy the newest bytes (at most max) into buf, oldest first.
 * The event must be stopped (the caller disabled it). aux_head is the
 * offset inside the buffer where the next byte would go; before the first
 * wrap the data is [0, head), after it [head, size) + [0, head). Wrapping
 * is detected as perf does: the area starts zeroed and once any of its
 * last bytes beyond head are non-zero (up to 4 KiB are checked), the
 * buffer has wrapped; the flag then stays set.
 * Returns the length copied (>= 0) and *flags (STRACE_AUX_SNAP_*).
 */
int64_t strace_aux_snapshot(struct strace_auxring *a, void *buf, size_t max,
			    unsigned *flags);

#endif
