/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/auxring.c - see auxring.h. */
#include "auxring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <strace/error.h>

/* C: pairs with the kernel's smp_wmb() before it stores the head (B). */
static uint64_t load_acquire(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* D: our reads of the ring happen before the kernel sees the space free (A). */
static void store_release(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int strace_dring_init(struct strace_dring *r, void *base, size_t page_size,
		      size_t data_size)
{
	memset(r, 0, sizeof(*r));
	if (!is_pow2(data_size) || !page_size)
		return -EINVAL;
	r->page = base;
	r->data = (const uint8_t *)base + page_size;
	r->size = data_size;
	/* A record is at most 64 KiB (u16 size). */
	r->tmp = malloc(65536);
	if (!r->tmp)
		return -ENOMEM;
	return 0;
}

void strace_dring_fini(struct strace_dring *r)
{
	free(r->tmp);
	r->tmp = NULL;
}

uint64_t strace_dring_pending(const struct strace_dring *r)
{
	return load_acquire(&r->page->data_head) - r->page->data_tail;
}

int strace_dring_consume(struct strace_dring *r, strace_dring_cb cb, void *arg)
{
	uint64_t head = load_acquire(&r->page->data_head);
	uint64_t tail = r->page->data_tail; /* only we write it */
	uint64_t mask = r->size - 1;
	int n = 0, ret = 0;

	if (head - tail > r->size) {
		store_release(&r->page->data_tail, head);
		return -STRACE_E_CORRUPT;
	}
	while (tail != head) {
		struct pfmt_event_header h;
		const struct pfmt_event_header *rec;
		uint64_t off = tail & mask;

		/* The 8-byte header never straddles the end (8-aligned sizes). */
		if (head - tail < sizeof(h)) {
			ret = -STRACE_E_CORRUPT;
			break;
		}
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > head - tail) {
			ret = -STRACE_E_CORRUPT;
			break;
		}
		if (off + h.size <= r->size) {
			rec = (const void *)(r->data + off);
		} else {
			size_t first = (size_t)(r->size - off);

			memcpy(r->tmp, r->data + off, first);
			memcpy(r->tmp + first, r->data, h.size - first);
			rec = (const void *)r->tmp;
		}
		ret = cb ? cb(arg, rec) : 0;
		if (ret < 0)
			break;
		tail += h.size;
		r->records++;
		r->bytes += h.size;
		n++;
	}
	if (ret == -STRACE_E_CORRUPT)
		tail = head; /* cannot resynchronise inside a ring: skip all */
	store_release(&r->page->data_tail, tail);
	return ret < 0 ? ret : n;
}

/* ---------------- sideband ---------------- */

size_t strace_sb_sid_size(uint64_t st)
{
	size_t n = 0;

	n += (st & PERF_SAMPLE_TID) ? 8 : 0;
	n += (st & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (st & PERF_SAMPLE_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int strace_sb_parse(const struct pfmt_event_header *rec, uint64_t st,
		    struct strace_sb *o)
{
	const uint8_t *b = (const uint8_t *)(rec + 1);
	size_t body, tsz = strace_sb_sid_size(st);
	size_t need = 0;

	memset(o, 0, sizeof(*o));
	o->type = rec->type;
	o->misc = rec->misc;
	if (rec->size < sizeof(*rec))
		return -STRACE_E_CORRUPT;
	body = rec->size - sizeof(*rec);
	/* SAMPLE records carry their fields in front, not a trailer. */
	if (rec->type != PFMT_RECORD_SAMPLE && rec->type < 64 && tsz) {
		const uint8_t *t;

		if (body < tsz)
			return -STRACE_E_CORRUPT;
		body -= tsz;
		t = b + body;
		o->has_sample_id = 1;
		if (st & PERF_SAMPLE_TID) {
			o->sid_pid = get32(t);
			o->sid_tid = get32(t + 4);
			t += 8;
		}
		if (st & PERF_SAMPLE_TIME) {
			o->sid_time = get64(t);
			t += 8;
		}
		if (st & PERF_SAMPLE_ID) {
			o->sid_id = get64(t);
			t += 8;
		}
		if (st & PERF_SAMPLE_STREAM_ID)
			t += 8;
		if (st & PERF_SAMPLE_CPU) {
			o->sid_cpu = get32(t);
			t += 8;
		}
		if (st & PERF_SAMPLE_IDENTIFIER)
			o->sid_id = get64(t);
		o->pid = o->sid_pid;
		o->tid = o->sid_tid;
	}
	switch (rec->type) {
	case PFMT_RECORD_MMAP:
		need = 33;
		break;
	case PFMT_RECORD_MMAP2:
		need = 65;
		break;
	case PFMT_RECORD_COMM:
		need = 9;
		break;
	case PFMT_RECORD_FORK:
	case PFMT_RECORD_EXIT:
		need = 24;
		break;
	case PFMT_RECORD_AUX:
		need = 24;
		break;
	case PFMT_RECORD_LOST:
		need = 16;
		break;
	case PFMT_RECORD_ITRACE_START:
		need = 8;
		break;
	default:
		break;
	}
	if (body < need)
		return -STRACE_E_CORRUPT;
	switch (rec->type) {
	case PFMT_RECORD_MMAP:
	case PFMT_RECORD_MMAP2:
		o->pid = get32(b);
		o->tid = get32(b + 4);
		o->addr = get64(b + 8);
		o->len = get64(b + 16);
		o->pgoff = get64(b + 24);
		if (rec->type == PFMT_RECORD_MMAP2) {
			o->prot = get32(b + 56);
			o->flags = get32(b + 60);
		}
		o->name = (const char *)b + (rec->type == PFMT_RECORD_MMAP ? 32 : 64);
		/* The name must end inside the body. */
		if (!memchr(o->name, 0, body - (size_t)(o->name - (const char *)b)))
			return -STRACE_E_CORRUPT;
		break;
	case PFMT_RECORD_COMM:
		o->pid = get32(b);
		o->tid = get32(b + 4);
		o->name = (const char *)b + 8;
		if (!memchr(o->name, 0, body - 8))
			return -STRACE_E_CORRUPT;
		break;
	case PFMT_RECORD_FORK:
	case PFMT_RECORD_EXIT:
		o->pid = get32(b);
		o->ppid = get32(b + 4);
		o->tid = get32(b + 8);
		o->ptid = get32(b + 12);
		o->sid_time = o->sid_time ? o->sid_time : get64(b + 16);
		break;
	case PFMT_RECORD_AUX:
		o->aux_offset = get64(b);
		o->aux_size = get64(b + 8);
		o->aux_flags = get64(b + 16);
		break;
	case PFMT_RECORD_LOST:
		o->id = get64(b);
		o->lost = get64(b + 8);
		break;
	case PFMT_RECORD_ITRACE_START:
		o->pid = get32(b);
		o->tid = get32(b + 4);
		break;
	default:
		break;
	}
	return 0;
}

/* ---------------- AUX ---------------- */

int strace_aux_init(struct strace_auxring *a,
		    struct perf_event_mmap_page *page, const void *data,
		    size_t size, int overwrite)
{
	memset(a, 0, sizeof(*a));
	if (!is_pow2(size))
		return -EINVAL;
	a->page = page;
	a->data = data;
	a->size = size;
	a->overwrite = overwrite;
	return 0;
}

int strace_aux_consume(struct strace_auxring *a, strace_aux_cb cb, void *arg)
{
	uint64_t head = load_acquire(&a->page->aux_head);
	uint64_t tail = a->page->aux_tail;
	uint64_t mask = a->size - 1, done = 0;

	if (head - tail > a->size) /* also catches head < tail */
		return -STRACE_E_CORRUPT;
	if (a->align > 1 && head - tail >= a->align)
		head -= (head - tail) & (a->align - 1);
	else if (a->align > 1)
		head = tail; /* less than one unit: wait for more */
	while (tail != head) {
		uint64_t off = tail & mask;
		size_t len = (size_t)(head - tail);
		int ret;

		if (off + len > a->size)
			len = (size_t)(a->size - off);
		ret = cb ? cb(arg, tail, a->data + off, len) : 0;
		if (ret < 0) {
			store_release(&a->page->aux_tail, tail);
			return ret;
		}
		tail += len;
		done += len;
	}
	store_release(&a->page->aux_tail, tail);
	a->consumed += done;
	return (int)(done > INT32_MAX ? INT32_MAX : done);
}

static int nonzero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 1;
	return 0;
}

int64_t strace_aux_snapshot(struct strace_auxring *a, void *buf, size_t max,
			    unsigned *flags)
{
	uint64_t head = load_acquire(&a->page->aux_head) & (a->size - 1);
	uint64_t avail, start, after;
	uint8_t *out = buf;
	size_t n, first;

	*flags = 0;
	if (!a->wrapped) {
		/* Never written bytes are zero; look at the last 4 KiB past head. */
		uint64_t from = a->size > 4096 ? a->size - 4096 : 0;

		if (from < head)
			from = head;
		if (head == 0 || nonzero(a->data + from, (size_t)(a->size - from)))
			a->wrapped = head != 0 || nonzero(a->data, (size_t)a->size);
	}
	avail = a->wrapped ? a->size : head;
	n = (size_t)(avail < max ? avail : max);
	/* The newest n bytes end at head. */
	start = (head + a->size - n) & (a->size - 1);
	first = (size_t)(a->size - start);
	if (first > n)
		first = n;
	memcpy(out, a->data + start, first);
	memcpy(out + first, a->data, n - first);
	if (a->wrapped)
		*flags |= STRACE_AUX_SNAP_WRAPPED;
	after = load_acquire(&a->page->aux_head) & (a->size - 1);
	if (after != head)
		*flags |= STRACE_AUX_SNAP_TORN;
	return (int64_t)n;
}
