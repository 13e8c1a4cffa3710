/* SPDX-License-Identifier: MIT */
/*
 * tests/decoder/damage.c - damage a recording's PT by packet and judge
 * the decoders' reports of it (damage.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pt_backend/pipeline/pipeline.h"
#include "tests/decoder/damage.h"

#define PERF_RECORD_AUXTRACE 71
#define AUXTRACE_HDR 48 /* the record before its data */

static const uint8_t psb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				0x02, 0x82, 0x02, 0x82};

const char *dmg_kind_name(enum dmg_kind k)
{
	static const char *const names[DMG_KINDS] = {"drop", "corrupt", "tnt",
						     "trunc"};
	return k < DMG_KINDS ? names[k] : "?";
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

/* The longest AUX buffer of a per-thread recording: its data's place in
 * the file and its thread. Returns 0 or -EINVAL. */
static int find_aux(struct dmg_trace *t)
{
	const uint8_t *d = t->data;
	uint64_t off, size, p, end;

	if (t->len < 64 || memcmp(d, "PERFILE2", 8))
		return -EINVAL;
	off = get64(d + 40);
	size = get64(d + 48);
	if (off > t->len || size > t->len - off)
		return -EINVAL;
	t->aux_len = 0;
	for (p = off, end = off + size; p + 8 <= end;) {
		uint32_t type = get32(d + p);
		uint16_t sz;
		uint64_t dsz;

		memcpy(&sz, d + p + 6, 2);
		if (sz < 8 || sz > end - p)
			return -EINVAL;
		if (type == PERF_RECORD_AUXTRACE) {
			if (sz < AUXTRACE_HDR)
				return -EINVAL;
			dsz = get64(d + p + 8);
			if (dsz > end - p - sz)
				return -EINVAL;
			if (dsz > t->aux_len) {
				t->aux_off = p + sz;
				t->aux_len = dsz;
				t->tid = get32(d + p + 36);
			}
			p += dsz;
		}
		p += sz;
	}
	return t->aux_len ? 0 : -EINVAL;
}

/* The packets of buf from its first PSB on (libipt's packet decoder), up
 * to the first it cannot decode. Returns the count, or -errno. */
static long list_packets(const uint8_t *buf, size_t len, struct dmg_pkt **out)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct dmg_pkt *v = NULL;
	size_t n = 0, cap = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -ENOMEM;
	if (pt_pkt_sync_forward(dec) < 0) {
		pt_pkt_free_decoder(dec);
		return -EINVAL;
	}
	for (;;) {
		struct pt_packet p;
		uint64_t off;
		int sz;

		if (pt_pkt_get_offset(dec, &off) < 0)
			break;
		sz = pt_pkt_next(dec, &p, sizeof(p));
		if (sz <= 0)
			break;
		if (n == cap) {
			struct dmg_pkt *nv;
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				pt_pkt_free_decoder(dec);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n].off = (uint32_t)off;
		v[n].size = (uint8_t)sz;
		v[n].type = (uint8_t)p.type;
		v[n].nbits = (p.type == ppt_tnt_8 || p.type == ppt_tnt_64)
				     ? p.payload.tnt.bit_size
				     : 0;
		n++;
	}
	pt_pkt_free_decoder(dec);
	*out = v;
	return (long)n;
}

int dmg_trace_load(const char *path, struct dmg_trace *t)
{
	struct stat st;
	long n;
	int fd, err;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(t->data = malloc((size_t)st.st_size + 1))) {
		err = -errno;
		close(fd);
		return err ? err : -ENOMEM;
	}
	t->len = (size_t)st.st_size;
	if (read(fd, t->data, t->len) != (ssize_t)t->len) {
		close(fd);
		dmg_trace_free(t);
		return -EIO;
	}
	close(fd);
	err = find_aux(t);
	if (err) {
		dmg_trace_free(t);
		return err;
	}
	n = list_packets(t->data + t->aux_off, t->aux_len, &t->pkt);
	if (n <= 0) {
		dmg_trace_free(t);
		return n < 0 ? (int)n : -EINVAL;
	}
	t->npkt = (size_t)n;
	return 0;
}

void dmg_trace_free(struct dmg_trace *t)
{
	free(t->data);
	free(t->pkt);
	memset(t, 0, sizeof(*t));
}

int dmg_applies(const struct dmg_trace *t, const struct dmg *d)
{
	const struct dmg_pkt *p;

	/* the last packet: damage there may only cut the stream short */
	if (d->pkt + 1 >= t->npkt || d->kind >= DMG_KINDS)
		return 0;
	p = &t->pkt[d->pkt];
	switch (d->kind) {
	case DMG_DROP:
		return d->arg > 0 && p->off + d->arg < t->aux_len;
	case DMG_TNT:
		return p->nbits > 0;
	case DMG_TRUNC:
		return p->size > 1;
	default:
		return 1;
	}
}

/* Remove n bytes at off of the stream s (len bytes), PAD at its end. */
static void cut(uint8_t *s, size_t len, size_t off, size_t n)
{
	memmove(s + off, s + off + n, len - off - n);
	memset(s + len - n, 0, n);
}

int dmg_apply(const struct dmg_trace *t, const struct dmg *d, uint8_t *out,
	      size_t *at)
{
	const struct dmg_pkt *p;
	uint8_t *s = out + t->aux_off;
	unsigned bit;

	if (!dmg_applies(t, d))
		return -EINVAL;
	p = &t->pkt[d->pkt];
	memcpy(out, t->data, t->len);
	*at = p->off;
	switch (d->kind) {
	case DMG_DROP:
		cut(s, t->aux_len, p->off, d->arg);
		break;
	case DMG_CORRUPT:
		s[p->off + d->arg % p->size] ^= 0x5a;
		break;
	case DMG_TNT:
		/* the payload's bits lie below the stop bit: for TNT-8 in
		 * byte 0 above bit 0, for TNT-64 in bytes 2..7 */
		bit = d->arg % p->nbits;
		if (p->type == ppt_tnt_8)
			s[p->off] ^= (uint8_t)(2u << bit);
		else
			s[p->off + 2 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		break;
	case DMG_TRUNC:
		cut(s, t->aux_len, p->off + p->size - (1 + d->arg % (p->size - 1u)),
		    1 + d->arg % (p->size - 1u));
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* --- decoding ------------------------------------------------------------ */

struct tap {
	uint32_t tid;
	struct dmg_errs *errs;
};

static void on_events(void *arg, const struct strace_event *ev, size_t n)
{
	struct tap *t = arg;

	for (size_t i = 0; i < n; i++) {
		struct dmg_errs *e = t->errs;

		if (ev[i].type != STRACE_EV_ERROR || ev[i].tid != t->tid)
			continue;
		if (e->n < DMG_MAX_ERRS) {
			e->e[e->n].off = ev[i].b;
			e->e[e->n].ip = ev[i].a;
			e->e[e->n].code = ev[i].flags;
		}
		if (!e->n || ev[i].b > e->last_off)
			e->last_off = ev[i].b;
		e->n++;
	}
}

int dmg_decode(struct strace_objcache *objects, const uint8_t *data,
	       size_t len, unsigned walk_flags, uint32_t tid,
	       struct dmg_errs *out)
{
	static unsigned seq;
	char path[64], ring_path[96];
	struct strace_ring_opts ro = {sizeof(ro), 4096, 1 << 20,
				      STRACE_RING_FLIGHT, 1, 0};
	struct strace_typeset types;
	struct strace_ring *ring;
	struct strace_offline_stats st;
	struct tap tap = {tid, out};
	uint64_t eoff;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (strace_typeset_parse(&types, "error", NULL, NULL) < 0)
		return -EINVAL;
	fd = memfd_create("dmg", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	snprintf(ring_path, sizeof(ring_path), "/dev/shm/strace_dmg_%d_%u.srb",
		 (int)getpid(), seq++);
	unlink(ring_path);
	err = strace_ring_create(ring_path, &ro, &ring);
	if (err) {
		close(fd);
		return err;
	}
	unlink(ring_path);
	strace_ring_set_tap(ring, on_events, &tap);
	{
		struct strace_offline_opts oo = {
			.perf_path = path,
			.ring = ring,
			.walk_flags = walk_flags,
			.types = &types,
			.jobs = 1,
			.objects = objects,
		};
		err = strace_offline_decode(&oo, &st, &eoff);
	}
	strace_ring_close(ring);
	close(fd);
	return err < 0 ? err : 0;
}

/* The end of the PSB+ of the first PSB at or after at in s, or len;
 * *psb_at: that PSB's offset, or len. */
static size_t window_end(const uint8_t *s, size_t len, size_t at,
			 size_t *psb_at)
{
	const uint8_t *q = memmem(s + at, len - at, psb, sizeof(psb));
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	size_t end = len;

	*psb_at = q ? (size_t)(q - s) : len;
	if (!q)
		return len;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)s;
	cfg.end = (uint8_t *)(uintptr_t)s + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return len;
	if (pt_pkt_sync_set(dec, (uint64_t)(q - s)) == 0) {
		for (int k = 0; k < 64; k++) {
			struct pt_packet p;
			uint64_t off;

			if (pt_pkt_next(dec, &p, sizeof(p)) <= 0)
				break;
			if (p.type == ppt_psbend) {
				if (pt_pkt_get_offset(dec, &off) == 0)
					end = (size_t)off;
				break;
			}
		}
	}
	pt_pkt_free_decoder(dec);
	return end;
}

/* How many of e's errors lie at or before end (*first: the first's
 * offset), and how many after. */
static size_t count_in(const struct dmg_errs *e, size_t end, size_t *late,
		       uint64_t *first, uint32_t *code)
{
	size_t n = 0, k = e->n < DMG_MAX_ERRS ? e->n : DMG_MAX_ERRS;

	/* those not kept: late if any error is past the window (after a
	 * resume at an IP packet a walk may report many in it) */
	*late = e->last_off > end ? e->n - k : 0;
	*first = 0;
	for (size_t i = 0; i < k; i++) {
		if (e->e[i].off > end) {
			(*late)++;
			continue;
		}
		if (!n++) {
			*first = e->e[i].off;
			if (code)
				*code = e->e[i].code;
		}
	}
	return n;
}

int dmg_judge(struct strace_objcache *objects, const struct dmg_trace *t,
	      const uint8_t *dmg, size_t at, struct dmg_verdict *v)
{
	struct dmg_errs ef, er;
	int err;

	memset(v, 0, sizeof(*v));
	v->at = at;
	v->end = window_end(dmg + t->aux_off, t->aux_len, at, &v->psb);
	err = dmg_decode(objects, dmg, t->len, 0, t->tid, &ef);
	if (!err)
		err = dmg_decode(objects, dmg, t->len, STRACE_WALK_REFERENCE,
				 t->tid, &er);
	if (err)
		return err;
	v->fast = count_in(&ef, v->end, &v->fast_late, &v->fast_off,
			   &v->fast_code);
	v->ref = count_in(&er, v->end, &v->ref_late, &v->ref_off,
			  &v->ref_code);
	return (v->fast > 0) == (v->ref > 0) && !v->fast_late && !v->ref_late;
}

/* --- the differences that are libipt's own -------------------------------- */

const char *dmg_class_name(enum dmg_class c)
{
	static const char *const names[DMG_CLASSES] = {
		"same",		"psb-fup",     "retcomp",
		"bad-code",	"deferred-tip", "newer",
		"exec-fup",	"wrong-path",  "unexplained"};
	return c < DMG_CLASSES ? names[c] : "?";
}

enum dmg_class dmg_classify(const struct dmg_trace *t, const struct dmg *d,
			    const struct dmg_verdict *v)
{
	unsigned type = t->pkt[d->pkt].type;

	if ((v->fast > 0) == (v->ref > 0) && !v->fast_late && !v->ref_late)
		return DMG_SAME;
	/* libipt's desync where the next TIP may be a deferred one */
	if (!v->fast && !v->fast_late && v->ref && !v->ref_late &&
	    v->ref_code == STRACE_E_DESYNC && d->kind == DMG_DROP &&
	    type == ppt_tip)
		return DMG_DEFERRED_TIP;
	/* libipt stopped at an instruction it does not know */
	if (!v->fast && !v->fast_late && v->ref &&
	    v->ref_code == STRACE_E_NEWER)
		return DMG_NEWER;
	/* a PSB dropped: its PSB+'s MODE.Exec binds to its FUP */
	if (!v->fast && !v->fast_late && v->ref && d->kind == DMG_DROP &&
	    type == ppt_psb)
		return DMG_EXEC_FUP;
	/* libipt's own: the fast walker reports in the window, libipt not
	 * there (but perhaps after it, in the state it carried over) */
	if (!v->fast || v->ref || v->fast_late)
		return DMG_UNEXPLAINED;
	if (v->fast_code == STRACE_E_DESYNC && v->fast_off >= v->psb)
		return DMG_PSB_FUP;
	if (v->fast_code == STRACE_E_RETCOMP)
		return DMG_RETCOMP;
	if ((v->fast_code == STRACE_E_BADINSN ||
	     v->fast_code == STRACE_E_NOTNT) &&
	    (d->kind == DMG_CORRUPT || d->kind == DMG_TRUNC) &&
	    (type == ppt_tip || type == ppt_tip_pge || type == ppt_fup))
		return DMG_BAD_CODE;
	if (v->fast_code == STRACE_E_BADINSN || v->fast_code == STRACE_E_NOTNT)
		return DMG_WRONG_PATH;
	return DMG_UNEXPLAINED;
}
