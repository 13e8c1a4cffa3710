/* SPDX-License-Identifier: MIT */
/*
 * test_live_rings - the data-ring and AUX consumers against a producer
 * thread that follows the kernel's protocol (kernel/events/ring_buffer.c):
 *
 *  data ring: read data_tail with acquire (A), write the record (wrapping
 *  the end), release-store data_head (B); a record that does not fit is
 *  counted and reported later by a PERF_RECORD_LOST, written first as soon
 *  as one fits (perf_output_begin).
 *  AUX full trace: read aux_tail (A), write what fits, emit
 *  PERF_RECORD_AUX {offset, size, flags} and then store aux_head (the
 *  order of perf_aux_output_end); when bytes do not fit, the AUX record
 *  gets TRUNCATED and the event is disabled until the consumer re-enables.
 *  AUX snapshot: overwrite, aux_head = offset in the buffer.
 *
 * The PT bytes are real packets from libipt's encoder (PSB+, TIP.PGE,
 * TNT, TIP, TSC, MTC). The consumer's bytes must equal the producer's
 * written bytes exactly, every loss must be reported, and the consumed
 * stream must decode (libipt packet decoder) to the producer's packets.
 */
#include <errno.h>
#include <intel-pt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pt_backend/capture/auxring.h"
#include "strace/error.h"
#include "../harness.h"
#include "ptgen.h"

#define PAGE 4096

/* Packets in buf (synchronising at the first PSB). */
static long count_packets(uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet p;
	long n = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return -1;
	if (pt_pkt_sync_forward(d) < 0) {
		pt_pkt_free_decoder(d);
		return -1;
	}
	while (pt_pkt_next(d, &p, sizeof(p)) >= 0)
		n++;
	pt_pkt_free_decoder(d);
	return n;
}

/* ---------- the emulated kernel ---------- */

struct kern {
	struct perf_event_mmap_page *page;
	uint8_t *data;
	uint64_t dsize;
	uint8_t *aux;
	uint64_t asize;
	int overwrite;
	uint64_t sample_type;
	/* producer bookkeeping */
	uint64_t lost_pending, lost_total, records_out;
	uint64_t aux_written, aux_dropped, truncations, partials;
	/* of those, what reached the data ring (an AUX record can be lost) */
	uint64_t trunc_recs, partial_recs, aux_rec_bytes;
	_Atomic int enabled;     /* cleared on truncation, set by consumer */
	_Atomic int pause_req;   /* snapshot: consumer asks to stop */
	_Atomic int paused;      /* producer acknowledges */
	_Atomic int done;
	/* log of records written (for comparison) */
	uint8_t *log;
	size_t loglen, logcap;
	/* the PT source and written stream */
	const uint8_t *pt;
	size_t ptlen;
	uint8_t *written; /* full mode: concatenation of written bytes */
	int slow;
	int block; /* wait for room instead of truncating: a consumer that keeps up */
};

static void k_write_ring(struct kern *k, uint64_t pos, const void *src,
			 size_t len)
{
	uint64_t off = pos & (k->dsize - 1);
	size_t first = (size_t)(k->dsize - off);

	if (first > len)
		first = len;
	memcpy(k->data + off, src, first);
	memcpy(k->data, (const uint8_t *)src + first, len - first);
}

/* Append the sample_id trailer (TID, [TIME], IDENTIFIER). */
static size_t k_trailer(struct kern *k, uint8_t *p, uint32_t pid, uint32_t tid)
{
	size_t n = 0;
	uint64_t id = 77;

	memcpy(p, &pid, 4);
	memcpy(p + 4, &tid, 4);
	n = 8;
	if (k->sample_type & PERF_SAMPLE_TIME) {
		uint64_t t = 1000 + k->records_out;

		memcpy(p + n, &t, 8);
		n += 8;
	}
	memcpy(p + n, &id, 8);
	return n + 8;
}

/* perf_output_begin/end: returns 1 written, 0 lost. */
static int k_output(struct kern *k, const uint8_t *rec, size_t size)
{
	uint64_t head = k->page->data_head; /* only the producer writes it */
	uint64_t tail = __atomic_load_n(&k->page->data_tail, __ATOMIC_ACQUIRE); /* A */
	uint64_t space = k->dsize - (head - tail);

	while (k->block && size > space) {
		sched_yield();
		tail = __atomic_load_n(&k->page->data_tail, __ATOMIC_ACQUIRE);
		space = k->dsize - (head - tail);
	}
	size_t lsize = 0;
	uint8_t lrec[64];

	if (k->lost_pending) {
		struct pfmt_event_header h = {PFMT_RECORD_LOST, 0, 0};
		uint64_t id = 77;

		memcpy(lrec + 8, &id, 8);
		memcpy(lrec + 16, &k->lost_pending, 8);
		lsize = 24 + k_trailer(k, lrec + 24, 1, 1);
		h.size = (uint16_t)lsize;
		memcpy(lrec, &h, 8);
	}
	if (lsize + size > space) {
		k->lost_pending++;
		k->lost_total++;
		return 0;
	}
	if (lsize) {
		k_write_ring(k, head, lrec, lsize);
		head += lsize;
		k->lost_pending = 0;
	}
	k_write_ring(k, head, rec, size);
	head += size;
	__atomic_store_n(&k->page->data_head, head, __ATOMIC_RELEASE); /* B */
	k->records_out++;
	if (k->loglen + size <= k->logcap) {
		memcpy(k->log + k->loglen, rec, size);
		k->loglen += size;
	}
	return 1;
}

/* A random sideband record of a random size (so records wrap). */
static size_t k_sideband(struct kern *k, uint8_t *rec)
{
	struct pfmt_event_header h;
	size_t n = 8;
	uint32_t pid = 100, tid = 100 + (uint32_t)(rnd() % 4);

	memset(rec, 0, 512);
	switch (rnd() % 5) {
	case 0: { /* MMAP2 with a path of random length */
		char name[200];
		size_t l = 1 + rnd() % 120;

		for (size_t i = 0; i < l; i++)
			name[i] = (char)('a' + i % 26);
		name[l] = 0;
		h.type = PFMT_RECORD_MMAP2;
		memcpy(rec + 8, &pid, 4);
		memcpy(rec + 12, &tid, 4);
		{
			uint64_t addr = 0x7f0000000000ULL + (rnd() & 0xfff000),
				 len = 0x1000 * (1 + rnd() % 50), pgoff = 0;
			uint32_t prot = 5, fl = 2;

			memcpy(rec + 16, &addr, 8);
			memcpy(rec + 24, &len, 8);
			memcpy(rec + 32, &pgoff, 8);
			memcpy(rec + 64, &prot, 4);
			memcpy(rec + 68, &fl, 4);
		}
		memcpy(rec + 72, name, l + 1);
		n = 72 + ((l + 1 + 7) & ~7ULL);
		break;
	}
	case 1: {
		const char *c = (rnd() & 1) ? "victim" : "a-much-longer-name";

		h.type = PFMT_RECORD_COMM;
		memcpy(rec + 8, &pid, 4);
		memcpy(rec + 12, &tid, 4);
		memcpy(rec + 16, c, strlen(c) + 1);
		n = 16 + ((strlen(c) + 1 + 7) & ~7ULL);
		break;
	}
	case 2:
	case 3: {
		uint32_t f[4] = {pid, pid, tid, 100};
		uint64_t t = 5;

		h.type = (rnd() & 1) ? PFMT_RECORD_FORK : PFMT_RECORD_EXIT;
		memcpy(rec + 8, f, 16);
		memcpy(rec + 24, &t, 8);
		n = 32;
		break;
	}
	default:
		h.type = PFMT_RECORD_ITRACE_START;
		memcpy(rec + 8, &pid, 4);
		memcpy(rec + 12, &tid, 4);
		n = 16;
		break;
	}
	n += k_trailer(k, rec + n, pid, tid);
	h.misc = 2;
	h.size = (uint16_t)n;
	memcpy(rec, &h, 8);
	return n;
}

static int k_aux_record(struct kern *k, uint64_t off, uint64_t size,
			uint64_t flags)
{
	uint8_t rec[64];
	struct pfmt_event_header h = {PFMT_RECORD_AUX, 0, 0};
	size_t n = 32;

	memcpy(rec + 8, &off, 8);
	memcpy(rec + 16, &size, 8);
	memcpy(rec + 24, &flags, 8);
	n += k_trailer(k, rec + n, 100, 100);
	h.size = (uint16_t)n;
	memcpy(rec, &h, 8);
	return k_output(k, rec, n);
}

static void *producer_full(void *arg)
{
	struct kern *k = arg;
	size_t pos = 0;
	uint8_t rec[512];

	while (pos < k->ptlen) {
		size_t want = 1 + rnd() % 3000, fit;
		uint64_t head, tail, flags = 0;

		if (!atomic_load(&k->enabled)) { /* disabled after truncation */
			sched_yield();
			continue;
		}
		if (rnd() % (k->slow ? 1 : 3) == 0)
			k_output(k, rec, k_sideband(k, rec));
		if (want > k->ptlen - pos)
			want = k->ptlen - pos;
		head = k->page->aux_head;
		tail = __atomic_load_n(&k->page->aux_tail, __ATOMIC_ACQUIRE); /* A */
		fit = (size_t)(k->asize - (head - tail));
		if (k->block && fit < want) {
			sched_yield();
			continue;
		}
		if (fit > want)
			fit = want;
		for (size_t i = 0; i < fit; i++)
			k->aux[(head + i) & (k->asize - 1)] = k->pt[pos + i];
		memcpy(k->written + k->aux_written, k->pt + pos, fit);
		k->aux_written += fit;
		if (fit < want) {
			flags |= PERF_AUX_FLAG_TRUNCATED;
			k->aux_dropped += want - fit;
			k->truncations++;
		}
		if (rnd() % 50 == 0) {
			flags |= PERF_AUX_FLAG_PARTIAL;
			k->partials++;
		}
		pos += want;
		/* perf_aux_output_end: the AUX record, then aux_head. */
		if ((fit || flags) && k_aux_record(k, head, fit, flags)) {
			k->trunc_recs += !!(flags & PERF_AUX_FLAG_TRUNCATED);
			k->partial_recs += !!(flags & PERF_AUX_FLAG_PARTIAL);
			k->aux_rec_bytes += fit;
		}
		__atomic_store_n(&k->page->aux_head, head + fit, __ATOMIC_RELEASE);
		if (flags & PERF_AUX_FLAG_TRUNCATED)
			atomic_store(&k->enabled, 0);
	}
	/* Flush a pending LOST as the kernel would with the next record. */
	while (k->lost_pending) {
		k_output(k, rec, k_sideband(k, rec));
		sched_yield();
	}
	atomic_store(&k->done, 1);
	return NULL;
}

static int kern_init(struct kern *k, size_t dsize, size_t asize)
{
	memset(k, 0, sizeof(*k));
	/* sizes rounded up to the alignment, as aligned_alloc() wants */
	k->page = aligned_alloc(PAGE, PAGE + ((dsize + PAGE - 1) & ~(size_t)(PAGE - 1)));
	k->aux = aligned_alloc(PAGE, (asize + PAGE - 1) & ~(size_t)(PAGE - 1));
	if (!k->page || !k->aux)
		return -1;
	memset(k->page, 0, PAGE + dsize);
	memset(k->aux, 0, asize);
	k->data = (uint8_t *)k->page + PAGE;
	k->dsize = dsize;
	k->asize = asize;
	k->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER;
	k->page->data_offset = PAGE;
	k->page->data_size = dsize;
	k->page->aux_offset = PAGE + dsize;
	k->page->aux_size = asize;
	k->logcap = 64 << 20;
	k->log = malloc(k->logcap);
	atomic_store(&k->enabled, 1);
	return k->log ? 0 : -1;
}

static void kern_fini(struct kern *k)
{
	free(k->page);
	free(k->aux);
	free(k->log);
	free(k->written);
}

/* ---------- the consumer ---------- */

struct cons {
	struct kern *k;
	uint64_t sample_type;
	uint8_t *log;
	size_t loglen;
	uint64_t lost, truncated, partial, aux_records, aux_bytes_in_records;
	uint64_t next_aux; /* expected next AUX record offset */
	int order_errors, parse_errors;
	uint64_t aux_gaps;
	uint8_t *stream;
	size_t slen;
	uint64_t next_off;
};

static int on_record(void *arg, const struct pfmt_event_header *rec)
{
	struct cons *c = arg;
	struct strace_sb sb;

	if (strace_sb_parse(rec, c->sample_type, &sb) < 0) {
		c->parse_errors++;
		return 0;
	}
	if (rec->type == PFMT_RECORD_LOST) {
		c->lost += sb.lost;
		return 0;
	}
	if (!sb.has_sample_id || sb.sid_id != 77)
		c->parse_errors++;
	if (rec->type == PFMT_RECORD_AUX) {
		c->aux_records++;
		if (sb.aux_offset != c->next_aux)
			c->aux_gaps++; /* only allowed when records were lost */
		c->next_aux = sb.aux_offset + sb.aux_size;
		c->aux_bytes_in_records += sb.aux_size;
		if (sb.aux_flags & PERF_AUX_FLAG_TRUNCATED)
			c->truncated++;
		if (sb.aux_flags & PERF_AUX_FLAG_PARTIAL)
			c->partial++;
	}
	if (rec->type == PFMT_RECORD_MMAP2 &&
	    (!sb.name || strlen(sb.name) < 1 || sb.prot != 5))
		c->parse_errors++;
	/* AUX records are logged too, up to the producer's log capacity. */
	if (c->loglen + rec->size <= c->k->logcap) {
		memcpy(c->log + c->loglen, rec, rec->size);
		c->loglen += rec->size;
	}
	return 0;
}

static int on_aux(void *arg, uint64_t off, const void *p, size_t len)
{
	struct cons *c = arg;

	if (off != c->next_off)
		c->order_errors++;
	memcpy(c->stream + c->slen, p, len);
	c->slen += len;
	c->next_off = off + len;
	return 0;
}

static void run_full(size_t dsize, size_t asize, int slow, size_t ptbytes)
{
	struct kern k;
	struct cons c;
	struct strace_dring dr;
	struct strace_auxring ar;
	pthread_t th;
	size_t npk = 0;
	uint8_t *pt = malloc(ptbytes);

	REQUIRE(pt);
	REQUIRE(kern_init(&k, dsize, asize) == 0);
	k.ptlen = make_pt(pt, ptbytes, &npk);
	k.pt = pt;
	k.written = malloc(ptbytes);
	k.slow = slow;
	k.block = !slow;
	REQUIRE(k.ptlen > ptbytes / 2 && k.written);
	memset(&c, 0, sizeof(c));
	c.k = &k;
	c.sample_type = k.sample_type;
	c.log = malloc(k.logcap);
	c.stream = malloc(ptbytes);
	REQUIRE(c.log && c.stream);
	REQUIRE(strace_dring_init(&dr, k.page, PAGE, dsize) == 0);
	REQUIRE(strace_aux_init(&ar, k.page, k.aux, asize, 0) == 0);
	REQUIRE(pthread_create(&th, NULL, producer_full, &k) == 0);
	for (;;) {
		int done = atomic_load(&k.done);
		int r;

		/* Order: aux_head first (its AUX records are then visible). */
		uint64_t ah = __atomic_load_n(&k.page->aux_head, __ATOMIC_ACQUIRE);
		(void)ah;
		r = strace_dring_consume(&dr, on_record, &c);
		CHECK_INT(r, >=, 0);
		r = strace_aux_consume(&ar, on_aux, &c);
		CHECK_INT(r, >=, 0);
		/* The CLI re-enables the event after a truncation (ioctl). */
		if (!atomic_load(&k.enabled))
			atomic_store(&k.enabled, 1);
		if (done && !strace_dring_pending(&dr) &&
		    k.page->aux_head == k.page->aux_tail)
			break;
		if (slow) {
			struct timespec ts = {0, (long)(rnd() % 200000)};

			nanosleep(&ts, NULL);
		}
	}
	pthread_join(th, NULL);
	/* Byte for byte what the producer wrote, in order. */
	CHECK_U64(c.slen, ==, k.aux_written);
	CHECK(c.slen == k.aux_written && !memcmp(c.stream, k.written, c.slen));
	CHECK_U64(c.aux_bytes_in_records, ==, k.aux_rec_bytes);
	CHECK_INT(c.order_errors, ==, 0);
	CHECK_INT(c.parse_errors, ==, 0);
	CHECK_U64(c.aux_gaps, <=, c.lost);
	/* Every sideband record the producer wrote, byte for byte. */
	CHECK_U64(c.loglen, ==, k.loglen);
	CHECK(c.loglen == k.loglen && !memcmp(c.log, k.log, c.loglen));
	/* Losses: never silent. */
	CHECK_U64(c.lost, ==, k.lost_total);
	CHECK_U64(c.truncated, ==, k.trunc_recs);
	CHECK_U64(c.partial, ==, k.partial_recs);
	/* A truncation is seen as a flag or inside a LOST count. */
	CHECK_U64(c.truncated + c.lost, >=, k.truncations);
	if (k.aux_dropped)
		CHECK_U64(c.truncated + c.lost, >, 0);
	if (slow) {
		/* The slow case must really exercise both kinds of loss. */
		CHECK_U64(k.truncations, >, 0);
		CHECK_U64(k.lost_total, >, 0);
	} else {
		CHECK_U64(c.aux_gaps, ==, 0);
		CHECK_U64(c.lost, ==, 0);
	}
	if (!slow) {
		/* No loss: the consumed stream decodes to the producer's packets. */
		CHECK_U64(k.aux_dropped, ==, 0);
		CHECK_INT(count_packets(c.stream, c.slen), ==, (long)npk);
	}
	fprintf(stderr,
		"  full d=%zu a=%zu slow=%d: pt %zu bytes, %zu packets, "
		"written %llu, dropped %llu (%llu truncations), records %llu, "
		"lost %llu, partial %llu\n",
		dsize, asize, slow, k.ptlen, npk,
		(unsigned long long)k.aux_written,
		(unsigned long long)k.aux_dropped,
		(unsigned long long)k.truncations,
		(unsigned long long)k.records_out,
		(unsigned long long)k.lost_total,
		(unsigned long long)k.partials);
	strace_dring_fini(&dr);
	free(c.log);
	free(c.stream);
	free(pt);
	kern_fini(&k);
}

TEST(full_trace_fast_consumer)
{
	/*
	 * Consumer keeps up (the producer waits for room, as a real capture
	 * sized by the watermark would never need to truncate): the AUX area
	 * wraps many times, nothing is lost.
	 */
	run_full(1 << 16, 1 << 18, 0, 8 << 20);
}

TEST(full_trace_slow_consumer)
{
	/* Tiny buffers, sleeping consumer: truncations and lost records. */
	run_full(1 << 10, 1 << 14, 1, 2 << 20);
}

TEST(data_ring_corrupt_header)
{
	struct kern k;
	struct strace_dring dr;
	struct pfmt_event_header h = {PFMT_RECORD_COMM, 0, 12}; /* not 8-aligned */

	REQUIRE(kern_init(&k, 4096, 4096) == 0);
	REQUIRE(strace_dring_init(&dr, k.page, PAGE, 4096) == 0);
	memcpy(k.data, &h, 8);
	k.page->data_head = 16;
	CHECK_INT(strace_dring_consume(&dr, NULL, NULL), ==, -STRACE_E_CORRUPT);
	CHECK_U64(k.page->data_tail, ==, 16);
	/* head more than the ring size ahead */
	k.page->data_head = 16 + 8192;
	CHECK_INT(strace_dring_consume(&dr, NULL, NULL), ==, -STRACE_E_CORRUPT);
	/* AUX head behind tail */
	{
		struct strace_auxring ar;

		REQUIRE(strace_aux_init(&ar, k.page, k.aux, 4096, 0) == 0);
		k.page->aux_tail = 100;
		k.page->aux_head = 50;
		CHECK_INT(strace_aux_consume(&ar, NULL, NULL), ==,
			  -STRACE_E_CORRUPT);
		CHECK_U64(k.page->aux_tail, ==, 100);
	}
	strace_dring_fini(&dr);
	CHECK_INT(strace_dring_init(&dr, k.page, PAGE, 3000), ==, -EINVAL);
	strace_dring_fini(&dr); /* fine after a failed init */
	kern_fini(&k);
}

TEST(sideband_parse_time)
{
	/* With PERF_SAMPLE_TIME in sample_type the trailer carries the time. */
	struct kern k;
	uint8_t rec[512];
	struct strace_sb sb;
	size_t n;

	REQUIRE(kern_init(&k, 4096, 4096) == 0);
	k.sample_type |= PERF_SAMPLE_TIME;
	k.records_out = 41;
	do
		n = k_sideband(&k, rec);
	while (((struct pfmt_event_header *)rec)->type != PFMT_RECORD_MMAP2);
	CHECK_INT(strace_sb_parse((void *)rec, k.sample_type, &sb), ==, 0);
	CHECK_U64(sb.sid_time, ==, 1041);
	CHECK_U64(sb.sid_id, ==, 77);
	CHECK_U64(sb.prot, ==, 5);
	CHECK(sb.name && sb.name[0] == 'a');
	/* Truncate: the parser must refuse, not read past the record. */
	((struct pfmt_event_header *)rec)->size = 40;
	CHECK_INT(strace_sb_parse((void *)rec, k.sample_type, &sb), ==,
		  -STRACE_E_CORRUPT);
	(void)n;
	kern_fini(&k);
}

/* ---------- snapshot (overwrite) mode ---------- */

struct snapk {
	struct kern *k;
	uint64_t total; /* bytes written so far (monotonic) */
	_Atomic uint64_t total_pub;
	_Atomic uint64_t credit; /* bytes the test lets the producer write */
};

static void *producer_overwrite(void *arg)
{
	struct snapk *s = arg;
	struct kern *k = s->k;

	while (!atomic_load(&k->done)) {
		size_t n = 1 + rnd() % 700;
		uint64_t credit;

		if (atomic_load(&k->pause_req)) {
			/* ioctl(DISABLE) has stopped us: publish, acknowledge. */
			atomic_store(&k->paused, 1);
			while (atomic_load(&k->pause_req) && !atomic_load(&k->done))
				sched_yield();
			atomic_store(&k->paused, 0);
			continue;
		}
		/* One load: the consumer may add credit at any time. */
		credit = atomic_load(&s->credit);
		if (s->total + n > k->ptlen)
			n = k->ptlen - s->total;
		if (n > credit)
			n = (size_t)credit;
		if (!n) {
			sched_yield();
			continue;
		}
		for (size_t i = 0; i < n; i++)
			k->aux[(s->total + i) & (k->asize - 1)] = k->pt[s->total + i];
		s->total += n;
		atomic_fetch_sub(&s->credit, n);
		atomic_store(&s->total_pub, s->total);
		/* overwrite mode: aux_head is the offset inside the buffer */
		__atomic_store_n(&k->page->aux_head, s->total & (k->asize - 1),
				 __ATOMIC_RELEASE);
	}
	return NULL;
}

TEST(snapshot_overwrite)
{
	struct kern k;
	struct snapk s = {0};
	struct strace_auxring ar;
	pthread_t th;
	size_t asize = 1 << 14, npk;
	uint8_t *pt = malloc(4 << 20), *buf = malloc(asize);
	int before_wrap = 0, after_wrap = 0, exact = 0;

	REQUIRE(pt && buf);
	REQUIRE(kern_init(&k, 4096, asize) == 0);
	k.ptlen = make_pt(pt, 4 << 20, &npk);
	k.pt = pt;
	s.k = &k;
	REQUIRE(strace_aux_init(&ar, k.page, k.aux, asize, 1) == 0);

	/* Nothing written yet: an empty snapshot. */
	{
		unsigned fl;

		CHECK_INT(strace_aux_snapshot(&ar, buf, asize, &fl), ==, 0);
		CHECK_INT(fl, ==, 0);
	}
	REQUIRE(pthread_create(&th, NULL, producer_overwrite, &s) == 0);
	for (int round = 0; round < 400; round++) {
		uint64_t total;
		unsigned fl;
		size_t max = round % 3 == 0 ? asize / 3 : asize;
		size_t want;
		int64_t n;

		/*
		 * First rounds stay inside the first lap, later ones wrap. An
		 * add, not a store: the producer may be spending credit now.
		 */
		atomic_fetch_add(&s.credit, round < 10 ? 1 + rnd() % 1000
						       : rnd() % (3 * asize));
		{
			struct timespec ts = {0, (long)(rnd() % 100000)};

			nanosleep(&ts, NULL);
		}
		atomic_store(&k.pause_req, 1);
		while (!atomic_load(&k.paused))
			sched_yield();
		total = atomic_load(&s.total_pub);
		n = strace_aux_snapshot(&ar, buf, max, &fl);
		want = (size_t)(total < asize ? total : asize);
		if (want > max)
			want = max;
		CHECK_INT(n, ==, (int64_t)want);
		CHECK(n >= 0 && !memcmp(buf, pt + total - (size_t)n, (size_t)n));
		CHECK_INT(!!(fl & STRACE_AUX_SNAP_WRAPPED), ==, total > asize);
		CHECK_INT(fl & STRACE_AUX_SNAP_TORN, ==, 0);
		if (total < asize)
			before_wrap++;
		else
			after_wrap++;
		if (total % asize == 0 && total)
			exact++;
		atomic_store(&k.pause_req, 0);
		while (atomic_load(&k.paused))
			sched_yield();
		if (total >= k.ptlen)
			break;
	}
	atomic_store(&k.done, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "  snapshots: %d before the first wrap, %d after\n",
		before_wrap, after_wrap);
	CHECK_INT(before_wrap, >, 0);
	CHECK_INT(after_wrap, >, 0);
	(void)exact;
	free(pt);
	free(buf);
	kern_fini(&k);
}

TEST(snapshot_exact_boundaries)
{
	/* head exactly at 0 after one full lap, and at size - 1. */
	struct kern k;
	struct strace_auxring ar;
	size_t asize = 8192, npk;
	uint8_t *pt = malloc(1 << 16), buf[8192];
	unsigned fl;

	REQUIRE(pt);
	REQUIRE(kern_init(&k, 4096, asize) == 0);
	REQUIRE(make_pt(pt, 1 << 16, &npk) > 3 * asize);
	REQUIRE(strace_aux_init(&ar, k.page, k.aux, asize, 1) == 0);
	memcpy(k.aux, pt, asize);
	k.page->aux_head = 0; /* wrote exactly asize bytes */
	CHECK_INT(strace_aux_snapshot(&ar, buf, asize, &fl), ==, (int)asize);
	CHECK(!memcmp(buf, pt, asize));
	CHECK_INT(fl, ==, STRACE_AUX_SNAP_WRAPPED);

	REQUIRE(strace_aux_init(&ar, k.page, k.aux, asize, 1) == 0);
	memset(k.aux, 0, asize);
	memcpy(k.aux, pt, asize - 1);
	k.page->aux_head = asize - 1; /* one byte short of a lap */
	CHECK_INT(strace_aux_snapshot(&ar, buf, asize, &fl), ==, (int)asize - 1);
	CHECK(!memcmp(buf, pt, asize - 1));
	CHECK_INT(fl, ==, 0);
	free(pt);
	kern_fini(&k);
}

RUN_TESTS("test_live_rings")
