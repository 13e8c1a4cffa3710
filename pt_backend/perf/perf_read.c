/* SPDX-License-Identifier: MIT */
/* pt_backend/perf/perf_read.c - read perf.data (see perf.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf.h"

/* The oldest attr perf writes (PERF_ATTR_SIZE_VER0) and a sane maximum. */
#define ATTR_MIN 64u
#define ATTR_MAX 4096u

const char *strace_perf_string(const void *s, size_t max)
{
	return memchr(s, '\0', max) ? s : NULL;
}

/*
 * The mappings strace_perf_sigbus() may repair: lock-free slots, since the
 * handler runs on any thread at any moment. A slot is claimed with a CAS
 * on used; start is stored last with release, after len and page, and
 * the handler loads it with acquire (the pair that makes len and page
 * valid there). start goes back to 0 before the munmap().
 */
#define GUARDS 16
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
	       "a signal handler may use only lock-free atomics");
static struct guard {
	atomic_int used;
	_Atomic uintptr_t start; /* the mapping; 0 while it is set up */
	_Atomic size_t len;      /* its length, whole pages */
	_Atomic size_t page;
	_Atomic uint64_t cut;    /* offset of the first page zeroed, or
				  * UINT64_MAX */
} guards[GUARDS];

static int guard_add(const void *map, size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;

	for (int i = 0; i < GUARDS; i++) {
		struct guard *g = &guards[i];
		int unused = 0;

		if (!atomic_compare_exchange_strong(&g->used, &unused, 1))
			continue;
		atomic_store_explicit(&g->cut, UINT64_MAX,
				      memory_order_relaxed);
		atomic_store_explicit(&g->page, page, memory_order_relaxed);
		atomic_store_explicit(&g->len, (size + page - 1) & ~(page - 1),
				      memory_order_relaxed);
		atomic_store_explicit(&g->start, (uintptr_t)map,
				      memory_order_release);
		return i;
	}
	return -1;
}

static void guard_remove(int i)
{
	if (i < 0)
		return;
	atomic_store_explicit(&guards[i].start, 0, memory_order_release);
	atomic_store_explicit(&guards[i].used, 0, memory_order_release);
}

int strace_perf_sigbus(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	for (int i = 0; i < GUARDS; i++) {
		struct guard *g = &guards[i];
		uintptr_t s = atomic_load_explicit(&g->start,
						   memory_order_acquire);
		size_t len = atomic_load_explicit(&g->len,
						  memory_order_relaxed);
		size_t page = atomic_load_explicit(&g->page,
						   memory_order_relaxed);

		if (!s || a < s || a - s >= len)
			continue;
		/* Every page from the faulting one on is past the new end:
		 * all of them become zeros at once, one signal, not one per
		 * page. Two threads doing this together both map zeros. */
		uintptr_t from = a & ~(uintptr_t)(page - 1);
		if (mmap((void *)from, s + len - from, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			return 0;
		uint64_t off = from - s;
		uint64_t cur = atomic_load_explicit(&g->cut,
						    memory_order_relaxed);
		while (off < cur &&
		       !atomic_compare_exchange_weak(&g->cut, &cur, off))
			;
		return 1;
	}
	return 0;
}

uint64_t strace_perf_cut(const struct strace_perf *p, int check_size,
			 uint64_t *end)
{
	uint64_t cut = p->guard >= 0 ? atomic_load(&guards[p->guard].cut)
				     : UINT64_MAX;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t page = pg > 0 ? (uint64_t)pg : 4096, size;
	struct stat st;

	if (end)
		*end = UINT64_MAX;
	if (cut != UINT64_MAX || !check_size || p->fd < 0 ||
	    fstat(p->fd, &st) < 0 || (uint64_t)st.st_size >= p->size)
		return cut;
	/* No lost page was touched (that is a SIGBUS), but the rest of the
	 * page the file now ends in reads as zeros, then or later. */
	size = (uint64_t)st.st_size;
	if (size % page == 0)
		return UINT64_MAX;
	if (end)
		*end = size - size % page + page < p->size
			       ? size - size % page + page
			       : p->size;
	return size;
}

int strace_perf_modified(const struct strace_perf *p)
{
	struct stat st;

	return p->fd >= 0 && fstat(p->fd, &st) == 0 &&
	       (st.st_mtim.tv_sec != p->mtime.tv_sec ||
		st.st_mtim.tv_nsec != p->mtime.tv_nsec);
}

/* [off, off + len) lies inside [0, limit). */
static int inside(uint64_t off, uint64_t len, uint64_t limit)
{
	return off <= limit && len <= limit - off;
}

static int read_attrs(struct strace_perf *p, uint64_t *err_off)
{
	const struct pfmt_file_header *h = &p->hdr;
	uint64_t esz = h->attr_size;

	if (esz < ATTR_MIN + sizeof(struct pfmt_section) ||
	    esz > ATTR_MAX + sizeof(struct pfmt_section) || esz % 8 ||
	    h->attrs.size % esz || h->attrs.size == 0) {
		*err_off = 16;
		return -STRACE_E_PERF_HEADER;
	}
	if (!inside(h->attrs.offset, h->attrs.size, p->size)) {
		*err_off = 24;
		return -STRACE_E_PERF_TRUNCATED;
	}
	p->nattrs = h->attrs.size / esz;
	p->attrs = calloc(p->nattrs, sizeof(*p->attrs));
	if (!p->attrs)
		return -ENOMEM;
	for (size_t i = 0; i < p->nattrs; i++) {
		uint64_t off = h->attrs.offset + i * esz;
		size_t asz = (size_t)(esz - sizeof(struct pfmt_section));
		size_t n = asz < sizeof(struct perf_event_attr)
				   ? asz
				   : sizeof(struct perf_event_attr);
		struct pfmt_section ids;
		memcpy(&p->attrs[i].attr, p->map + off, n);
		memcpy(&ids, p->map + off + asz, sizeof(ids));
		if (ids.size % 8 || !inside(ids.offset, ids.size, p->size) ||
		    ids.offset % 8) {
			*err_off = off + asz;
			return -STRACE_E_PERF_TRUNCATED;
		}
		p->attrs[i].ids = (const uint64_t *)(const void *)(p->map +
								    ids.offset);
		p->attrs[i].nids = (size_t)(ids.size / 8);
	}
	return 0;
}

/* The attr that describes a kernel record's trailer. */
static const struct perf_event_attr *trailer_attr(const struct strace_perf *p,
						  const uint8_t *rec,
						  size_t size)
{
	uint64_t st0 = p->attrs[0].attr.sample_type;
	int same = 1;
	for (size_t i = 1; i < p->nattrs; i++)
		same &= p->attrs[i].attr.sample_type == st0;
	if (same || !(st0 & PERF_SAMPLE_IDENTIFIER) || size < 16)
		return &p->attrs[0].attr;
	/* PERF_SAMPLE_IDENTIFIER: the id is the record's last u64. */
	uint64_t id;
	memcpy(&id, rec + size - 8, 8);
	for (size_t i = 0; i < p->nattrs; i++)
		for (size_t k = 0; k < p->attrs[i].nids; k++)
			if (p->attrs[i].ids[k] == id)
				return &p->attrs[i].attr;
	return &p->attrs[0].attr;
}

static void parse_sid(const struct strace_perf *p, const uint8_t *rec,
		      size_t size, size_t body_min, struct strace_perf_sid *sid)
{
	const struct perf_event_attr *a = trailer_attr(p, rec, size);
	uint64_t st = a->sample_type;
	size_t n = 0;

	memset(sid, 0, sizeof(*sid));
	if (!a->sample_id_all)
		return;
	n += !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
	     !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
	     !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER);
	if (size < 8 + body_min + n * 8)
		return; /* no room for a trailer: treat as absent */
	const uint8_t *q = rec + size - n * 8;
	uint64_t v;
	if (st & PERF_SAMPLE_TID) {
		memcpy(&sid->pid, q, 4);
		memcpy(&sid->tid, q + 4, 4);
		sid->has_tid = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(&sid->time, q, 8);
		sid->has_time = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(&sid->id, q, 8);
		q += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		q += 8;
	if (st & PERF_SAMPLE_CPU) {
		memcpy(&v, q, 8);
		sid->cpu = (uint32_t)v;
		sid->has_cpu = 1;
		q += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		memcpy(&sid->id, q, 8);
}

/* Smallest body of each kernel record type we look into. */
static size_t body_min(uint32_t type)
{
	switch (type) {
	case PFMT_RECORD_MMAP:
		return sizeof(struct pfmt_mmap) + 1;
	case PFMT_RECORD_MMAP2:
		return sizeof(struct pfmt_mmap2) + 1;
	case PFMT_RECORD_COMM:
		return sizeof(struct pfmt_comm) + 1;
	case PFMT_RECORD_FORK:
	case PFMT_RECORD_EXIT:
		return sizeof(struct pfmt_fork);
	case PFMT_RECORD_LOST:
		return sizeof(struct pfmt_lost);
	case PFMT_RECORD_AUX:
		return sizeof(struct pfmt_aux);
	case PFMT_RECORD_ITRACE_START:
		return sizeof(struct pfmt_itrace_start);
	case PFMT_RECORD_SWITCH_CPU_WIDE:
		return sizeof(struct pfmt_switch_cpu_wide);
	case PFMT_RECORD_AUXTRACE:
		return sizeof(struct pfmt_auxtrace);
	case PFMT_RECORD_AUXTRACE_INFO:
		return sizeof(struct pfmt_auxtrace_info);
	default:
		return 0;
	}
}

void strace_perf_rewind(struct strace_perf *p)
{
	p->data_pos = p->hdr.data.offset;
}

int strace_perf_next(struct strace_perf *p, struct strace_perf_rec *rec)
{
	uint64_t end = p->hdr.data.offset + p->hdr.data.size;
	uint64_t off = p->data_pos;
	struct pfmt_event_header eh;

	memset(rec, 0, sizeof(*rec));
	rec->offset = off;
	if (off >= end)
		return 0;
	if (end - off < sizeof(eh))
		return -STRACE_E_PERF_TRUNCATED;
	memcpy(&eh, p->map + off, sizeof(eh));
	if (eh.size < sizeof(eh) || eh.size % 8 ||
	    eh.size - sizeof(eh) < body_min(eh.type))
		return -STRACE_E_PERF_RECORD;
	if (end - off < eh.size)
		return -STRACE_E_PERF_TRUNCATED;
	rec->type = eh.type;
	rec->misc = eh.misc;
	rec->size = eh.size;
	rec->body = p->map + off + sizeof(eh);
	uint64_t next = off + eh.size;
	if (eh.type == PFMT_RECORD_AUXTRACE) {
		struct pfmt_auxtrace at;
		memcpy(&at, rec->body, sizeof(at));
		rec->aux_data = p->map + next;
		rec->aux_size = at.size;
		if (!inside(next, at.size, end)) {
			/* A cut-off file: keep what is there. */
			rec->aux_size = end - next;
			rec->aux_missing = at.size - rec->aux_size;
			next = end;
		} else {
			next += at.size;
		}
	} else if (eh.type < PFMT_RECORD_HEADER_ATTR &&
		   eh.type != PFMT_RECORD_SAMPLE) {
		parse_sid(p, p->map + off, eh.size, body_min(eh.type),
			  &rec->sid);
	}
	p->data_pos = next;
	return 1;
}

/* AUXTRACE_INFO's priv[i], read from where it lies: the record is not
 * aligned when AUX data before it was not padded to 8 bytes. */
static uint64_t priv(const struct strace_perf_rec *r, size_t i)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)r->body +
			   sizeof(struct pfmt_auxtrace_info) + 8 * i,
	       8);
	return v;
}

/* AUXTRACE_INFO of intel_pt: the PT attr and the time conversion.
 * Returns 0, or -STRACE_E_PERF_TIME and *err_off (a time_shift of 64 or more
 * would be an undefined shift in the conversion, wrong times at best). */
static int read_pt_info(struct strace_perf *p, const struct strace_perf_rec *r,
			uint64_t *err_off)
{
	struct pfmt_auxtrace_info ai;
	size_t n = (r->size - 8 - sizeof(ai)) / 8;

	memcpy(&ai, r->body, sizeof(ai));
	if (ai.type != PFMT_AUXTRACE_INTEL_PT || n <= PFMT_IPT_PER_CPU_MMAPS)
		return 0;
	if (priv(r, PFMT_IPT_TIME_SHIFT) > 63) {
		*err_off = r->offset + 8 + sizeof(ai) +
			   8 * (uint64_t)PFMT_IPT_TIME_SHIFT;
		return -STRACE_E_PERF_TIME;
	}
	for (size_t i = 0; i < p->nattrs; i++)
		if (p->attrs[i].attr.type == priv(r, PFMT_IPT_PMU_TYPE)) {
			p->pt_attr = (int)i;
			p->pt_config = p->attrs[i].attr.config;
			break;
		}
	struct strace_time_conv *tc = &p->time;
	tc->time_shift = (uint16_t)priv(r, PFMT_IPT_TIME_SHIFT);
	tc->time_mult = (uint32_t)priv(r, PFMT_IPT_TIME_MULT);
	tc->time_zero = priv(r, PFMT_IPT_TIME_ZERO);
	tc->cap_user_time_zero = (int)priv(r, PFMT_IPT_CAP_USER_TIME_ZERO);
	p->snapshot = (int)priv(r, PFMT_IPT_SNAPSHOT_MODE);
	p->per_cpu = (int)priv(r, PFMT_IPT_PER_CPU_MMAPS);
	if (n > PFMT_IPT_MAX_NONTURBO_RATIO) {
		uint64_t bits = priv(r, PFMT_IPT_MTC_FREQ_BITS);
		tc->tsc_ctc_ratio_n = (uint32_t)priv(r, PFMT_IPT_TSC_CTC_N);
		tc->tsc_ctc_ratio_d = (uint32_t)priv(r, PFMT_IPT_TSC_CTC_D);
		tc->max_nonturbo_ratio =
			(uint32_t)priv(r, PFMT_IPT_MAX_NONTURBO_RATIO);
		if (bits)
			tc->mtc_period =
				(uint32_t)((p->pt_config & bits) >>
					   __builtin_ctzll(bits));
		tc->has_mtc = (p->pt_config & priv(r, PFMT_IPT_MTC_BIT)) != 0;
	}
	if (n > PFMT_IPT_FILTER_STR_LEN) {
		/* filter string, then time_cycles, time_mask, time_short */
		uint64_t flen = (priv(r, PFMT_IPT_FILTER_STR_LEN) + 7) / 8;
		uint64_t k = PFMT_IPT_FILTER_STR_LEN + 1 + flen;
		if (flen < n && k + 3 <= n) {
			tc->time_cycles = priv(r, k);
			tc->time_mask = priv(r, k + 1);
			tc->cap_user_time_short = (int)priv(r, k + 2);
		}
	}
	/* perf decodes "timeless" unless the tsc bit is set, the kernel gave
	 * time_zero and every event samples time. */
	int all_time = 1;
	for (size_t i = 0; i < p->nattrs; i++)
		all_time &= !!(p->attrs[i].attr.sample_type & PERF_SAMPLE_TIME);
	p->has_time = all_time && tc->cap_user_time_zero &&
		      (p->pt_config & priv(r, PFMT_IPT_TSC_BIT)) && tc->time_mult;
	return 0;
}

int strace_perf_open(const char *path, struct strace_perf *p, uint64_t *err_off)
{
	struct stat st;
	int rc;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->pt_attr = -1;
	p->guard = -1;
	*err_off = 0;
	snprintf(p->path, sizeof(p->path), "%s", path);
	/* A FIFO's open would wait for a writer forever, and pipe-mode data
	 * cannot be mapped anyway: only a regular file is opened (stat()
	 * first; O_NONBLOCK and fstat() again if the path changed). */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -STRACE_E_PERF_NOTREG;
	p->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (p->fd < 0)
		return -errno;
	if (fstat(p->fd, &st) < 0) {
		rc = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -STRACE_E_PERF_NOTREG;
		goto fail;
	}
	p->size = (size_t)st.st_size;
	p->mtime = st.st_mtim;
	if (p->size < 16) {
		rc = p->size >= 8 ? -STRACE_E_PERF_TRUNCATED : -STRACE_E_PERF_MAGIC;
		if (p->size >= 8) {
			uint64_t m;
			if (pread(p->fd, &m, 8, 0) == 8 && m != PFMT_MAGIC)
				rc = -STRACE_E_PERF_MAGIC;
		}
		goto fail;
	}
	p->map = mmap(NULL, p->size, PROT_READ, MAP_PRIVATE, p->fd, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		rc = -errno;
		goto fail;
	}
	p->guard = guard_add(p->map, p->size);
	memcpy(&p->hdr, p->map,
	       p->size < sizeof(p->hdr) ? p->size : sizeof(p->hdr));
	if (p->hdr.magic != PFMT_MAGIC) {
		rc = __builtin_bswap64(p->hdr.magic) == PFMT_MAGIC
			     ? -STRACE_E_PERF_ENDIAN
			     : -STRACE_E_PERF_MAGIC;
		goto fail;
	}
	if (p->hdr.size == 16) {
		rc = -STRACE_E_PERF_PIPE;
		goto fail;
	}
	if (p->size < sizeof(p->hdr)) {
		rc = -STRACE_E_PERF_TRUNCATED;
		goto fail;
	}
	if (p->hdr.size != sizeof(p->hdr)) {
		*err_off = 8;
		rc = -STRACE_E_PERF_HEADER;
		goto fail;
	}
	rc = read_attrs(p, err_off);
	if (rc < 0)
		goto fail;
	if (!inside(p->hdr.data.offset, p->hdr.data.size, p->size)) {
		/* perf leaves data.size 0 when killed before it finished; a
		 * size past the end is a truncated copy. */
		*err_off = 40;
		rc = -STRACE_E_PERF_TRUNCATED;
		goto fail;
	}
	/* First pass: AUXTRACE_INFO (perf writes it before the data). */
	struct strace_perf_rec r;
	strace_perf_rewind(p);
	while ((rc = strace_perf_next(p, &r)) > 0)
		if (r.type == PFMT_RECORD_AUXTRACE_INFO) {
			rc = read_pt_info(p, &r, err_off);
			if (rc < 0)
				goto fail;
			break;
		}
	if (rc < 0) {
		*err_off = r.offset;
		goto fail;
	}
	strace_perf_rewind(p);
	if (p->pt_attr < 0) {
		rc = -STRACE_E_PERF_NOPT;
		goto fail;
	}
	return 0;
fail:
	if (p->map) {
		/* the error may only be what zeros read as */
		uint64_t cut = strace_perf_cut(p, 1, NULL);
		if (cut != UINT64_MAX) {
			*err_off = cut;
			rc = -STRACE_E_PERF_SHRANK;
		}
	}
	strace_perf_close(p);
	return rc;
}

int strace_perf_feature(const struct strace_perf *p, unsigned feat,
			const uint8_t **data, uint64_t *size)
{
	const uint64_t *bits = p->hdr.adds_features;
	uint64_t at = p->hdr.data.offset + p->hdr.data.size;
	struct pfmt_section sec;

	if (feat >= PFMT_FEAT_BITS || !((bits[feat / 64] >> (feat % 64)) & 1))
		return 0;
	/* the section table: one entry per feature bit set, in bit order */
	for (unsigned i = 0; i < feat; i++)
		if ((bits[i / 64] >> (i % 64)) & 1)
			at += sizeof(sec);
	if (at < p->hdr.data.offset || at + sizeof(sec) > p->size)
		return -STRACE_E_PERF_TRUNCATED;
	memcpy(&sec, p->map + at, sizeof(sec));
	if (sec.offset > p->size || sec.size > p->size - sec.offset)
		return -STRACE_E_PERF_TRUNCATED;
	*data = p->map + sec.offset;
	*size = sec.size;
	return 1;
}

void strace_perf_close(struct strace_perf *p)
{
	guard_remove(p->guard);
	p->guard = -1;
	if (p->map)
		munmap((void *)(uintptr_t)p->map, p->size);
	if (p->fd >= 0)
		close(p->fd);
	free(p->attrs);
	p->map = NULL;
	p->fd = -1;
	p->attrs = NULL;
}

int strace_perf_feature_string(const uint8_t *p, uint64_t size, unsigned k,
			       char *buf, size_t len)
{
	uint32_t n;

	for (;;) {
		if (size < 4)
			return 0;
		memcpy(&n, p, 4);
		if (n > size - 4)
			return 0;
		if (!k--)
			break;
		p += 4 + n;
		size -= 4 + (uint64_t)n;
	}
	n = (uint32_t)strnlen((const char *)p + 4, n);
	if (n >= len)
		n = (uint32_t)len - 1;
	memcpy(buf, p + 4, n);
	buf[n] = 0;
	return 1;
}

int strace_perf_map_parse(uint32_t type, uint16_t misc, const void *body,
			  size_t blen, struct strace_perf_map *m)
{
	const uint8_t *b = body;
	struct pfmt_mmap2 m2;
	struct pfmt_mmap m1;
	size_t hdr;

	if (type != PFMT_RECORD_MMAP && type != PFMT_RECORD_MMAP2)
		return 0;
	hdr = type == PFMT_RECORD_MMAP2 ? sizeof(m2) : sizeof(m1);
	if (blen < hdr)
		return -STRACE_E_PERF_RECORD;
	memset(m, 0, sizeof(*m));
	memcpy(&m1, b, sizeof(m1)); /* the fields both begin with */
	m->pid = m1.pid;
	m->tid = m1.tid;
	m->addr = m1.addr;
	m->len = m1.len;
	m->pgoff = m1.pgoff;
	m->exec = !(misc & PFMT_MISC_MMAP_DATA);
	if (type == PFMT_RECORD_MMAP2) {
		memcpy(&m2, b, sizeof(m2));
		if (m2.prot)
			m->exec = !!(m2.prot & PROT_EXEC);
		/* with a build-id: u8 size, 3 reserved, 20 id bytes where
		 * maj, min, ino and ino_generation are */
		if ((misc & PFMT_MISC_MMAP_BUILD_ID) && b[32] &&
		    b[32] <= 20) {
			m->id = b + 36;
			m->nid = b[32];
		}
	}
	if (!(m->path = strace_perf_string(b + hdr, blen - hdr)))
		return -STRACE_E_PERF_RECORD;
	return 1;
}
