/* SPDX-License-Identifier: MIT */
/*
 * events/ring_strings.c - the string table: add an entry, read one, walk them,
 * copy new ones to another ring.
 * See events/ring_internal.h for the protocol.
 */
#include <string.h>

#include "ring_internal.h"

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
			rc = ring_back(ring->fd, RING_HDR_SIZE + backed, to - backed);
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
