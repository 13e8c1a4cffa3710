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

/* The AUXTRACE record at or after file offset *p of d's data section,
 * which ends at end: its data's place and its thread. Returns 1 and
 * moves *p past it, 0 when there is none, -EINVAL on a record that does
 * not fit. */
static int next_aux(const uint8_t *d, uint64_t end, uint64_t *p,
		    uint64_t *data_off, uint64_t *data_len, uint32_t *tid)
{
	while (*p + 8 <= end) {
		uint32_t type = get32(d + *p);
		uint16_t sz;

		memcpy(&sz, d + *p + 6, 2);
		if (sz < 8 || sz > end - *p)
			return -EINVAL;
		*p += sz;
		if (type != PERF_RECORD_AUXTRACE)
			continue;
		if (sz < AUXTRACE_HDR)
			return -EINVAL;
		*data_len = get64(d + *p - sz + 8);
		if (*data_len > end - *p)
			return -EINVAL;
		*data_off = *p;
		*tid = get32(d + *p - sz + 36);
		*p += *data_len;
		return 1;
	}
	return 0;
}

/* Where the data section of the perf.data d (len bytes) begins and ends.
 * Returns 0 or -EINVAL. */
static int data_section(const uint8_t *d, size_t len, uint64_t *off,
			uint64_t *end)
{
	uint64_t size;

	if (len < 64 || memcmp(d, "PERFILE2", 8))
		return -EINVAL;
	*off = get64(d + 40);
	size = get64(d + 48);
	if (*off > len || size > len - *off)
		return -EINVAL;
	*end = *off + size;
	return 0;
}

/* The longest AUX buffer of a per-thread recording: its data's place in
 * the file and its thread. Returns 0 or -EINVAL. */
static int find_aux(struct dmg_trace *t)
{
	uint64_t p, end, off, len;
	uint32_t tid;
	int r;

	if (data_section(t->data, t->len, &p, &end) < 0)
		return -EINVAL;
	t->aux_len = 0;
	while ((r = next_aux(t->data, end, &p, &off, &len, &tid)) > 0) {
		if (len > t->aux_len) {
			t->aux_off = off;
			t->aux_len = len;
			t->tid = tid;
		}
	}
	return r == 0 && t->aux_len ? 0 : -EINVAL;
}

/* A libipt packet decoder over the len bytes at s; NULL if out of
 * memory. */
static struct pt_packet_decoder *pkt_decoder(const uint8_t *s, size_t len)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)s;
	cfg.end = (uint8_t *)(uintptr_t)s + len;
	return pt_pkt_alloc_decoder(&cfg);
}

/* The packets of buf from its first PSB on (libipt's packet decoder), up
 * to the first it cannot decode. Returns the count, or -errno. */
static long list_packets(const uint8_t *buf, size_t len, struct dmg_pkt **out)
{
	struct pt_packet_decoder *dec;
	struct dmg_pkt *v = NULL;
	size_t n = 0, cap = 0;

	dec = pkt_decoder(buf, len);
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
	for (int k = 0; k < 2; k++) {
		strace_walker_free(t->walker[k]);
		strace_image_free(t->img[k]);
	}
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

void dmg_trim(const struct dmg_trace *t, const struct dmg *d, uint8_t *dmg,
	      struct dmg_span *kept)
{
	uint8_t *s = dmg + t->aux_off;
	size_t at = t->pkt[d->pkt].off, from = 0, to = t->aux_len;
	const uint8_t *q;
	uint64_t p, end, off, len;
	uint32_t tid;

	/* the second-last PSB before the damaged packet (packets of the
	 * clean stream, which the damage leaves where they were): the
	 * decode then meets the damage with the state a whole PSB+ and
	 * period gave it, as in the whole copy (a damaged PSB+ that came
	 * first would leave it none to keep: no MODE.Exec, say) */
	for (size_t i = d->pkt, n = 0; i-- > 0;)
		if (t->pkt[i].type == ppt_psb && ++n == 2) {
			from = t->pkt[i].off;
			break;
		}
	/* the second PSB at or after it in the damaged stream */
	q = memmem(s + at, t->aux_len - at, psb, sizeof(psb));
	if (q)
		q = memmem(q + sizeof(psb), (size_t)(s + t->aux_len - q) -
						    sizeof(psb),
			   psb, sizeof(psb));
	if (q)
		to = (size_t)(q - s);
	memset(s, 0, from);
	memset(s + to, 0, t->aux_len - to);
	kept->from = from;
	kept->to = to;
	if (data_section(dmg, t->len, &p, &end) < 0)
		return;
	while (next_aux(dmg, end, &p, &off, &len, &tid) > 0)
		if (off != t->aux_off)
			memset(dmg + off, 0, len);
}

/* --- decoding ------------------------------------------------------------ */

static int on_event(void *arg, const struct strace_event *ev)
{
	const struct dmg_trace *t = arg;
	struct dmg_errs *e = t->out;
	uint64_t off = t->out_base + ev->b;

	if (ev->type != STRACE_EV_ERROR)
		return 0;
	if (e->n < DMG_MAX_ERRS) {
		e->e[e->n].off = off;
		e->e[e->n].ip = ev->a;
		e->e[e->n].code = ev->flags;
	}
	if (!e->n || off > e->last_off)
		e->last_off = off;
	e->n++;
	return 0;
}

int dmg_trace_decoders(struct strace_objcache *objects, struct dmg_trace *t)
{
	char path[64];
	struct strace_typeset types;
	int fd, err = 0;

	if (strace_typeset_parse(&types, "error", NULL, NULL) < 0)
		return -EINVAL;
	fd = memfd_create("dmg", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, t->data, t->len) != (ssize_t)t->len) {
		close(fd);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int k = 0; k < 2 && !err; k++) {
		struct strace_offline_opts oo = {
			.perf_path = path,
			.tid = t->tid,
			/* (no time: none is judged) */
			.walk_flags = STRACE_WALK_EXACT_TIMES |
				      (k ? STRACE_WALK_REFERENCE : 0),
			.types = &types,
			.objects = objects,
		};
		err = strace_offline_walker(&oo, on_event, t, &t->walker[k],
					    &t->img[k]);
	}
	close(fd);
	return err;
}

void dmg_decode(struct dmg_trace *t, int k, const uint8_t *data,
		const struct dmg_span *span, struct dmg_errs *out)
{
	struct dmg_span all = {0, t->aux_len};

	if (!span)
		span = &all;
	memset(out, 0, sizeof(*out));
	t->out = out;
	t->out_base = span->from;
	/* (its errors are the events: a trace with no PSB has none) */
	(void)strace_walker_decode(t->walker[k],
				   data + t->aux_off + span->from,
				   span->to - span->from);
	t->out = NULL;
}

/* The PSB+ of the PSB at offset from in s (len bytes): its end (*end,
 * len if it has none) and its first FUP's offset (*fup, 0 if none). */
static void psb_plus(const uint8_t *s, size_t len, size_t from, size_t *end,
		     size_t *fup)
{
	struct pt_packet_decoder *dec;

	*end = len;
	*fup = 0;
	dec = pkt_decoder(s, len);
	if (!dec)
		return;
	if (pt_pkt_sync_set(dec, from) == 0) {
		for (int k = 0; k < 64; k++) {
			struct pt_packet p;
			uint64_t off;

			if (pt_pkt_get_offset(dec, &off) < 0 ||
			    pt_pkt_next(dec, &p, sizeof(p)) <= 0)
				break;
			if (p.type == ppt_fup && !*fup)
				*fup = (size_t)off;
			if (p.type == ppt_psbend) {
				if (pt_pkt_get_offset(dec, &off) == 0)
					*end = (size_t)off;
				break;
			}
		}
	}
	pt_pkt_free_decoder(dec);
}

/* The type of the packet at offset at of s (len bytes), or ppt_invalid. */
static int packet_type(const uint8_t *s, size_t len, size_t at)
{
	struct pt_packet_decoder *dec;
	struct pt_packet p;
	int type = ppt_invalid;

	dec = pkt_decoder(s, len);
	if (!dec)
		return type;
	if (pt_pkt_sync_set(dec, at) == 0 && pt_pkt_next(dec, &p, sizeof(p)) > 0)
		type = p.type;
	pt_pkt_free_decoder(dec);
	return type;
}

#define NO_PSB ((size_t)-1)

/* Whether a packet changes nothing of the flow: timing, PAD, CBR. */
static int timing_only(int type)
{
	return type == ppt_pad || type == ppt_tsc || type == ppt_tma ||
	       type == ppt_mtc || type == ppt_cyc || type == ppt_cbr;
}

/* Whether the packet at o of the stream s (len bytes) is a TIP whose
 * packets before it, timing aside, are a MODE.Exec after a TIP.PGD
 * (DMG_EXEC_TIP), read from the last PSB before o. */
static int exec_tip_while_off(const uint8_t *s, size_t len, size_t o)
{
	struct pt_packet_decoder *dec;
	struct pt_packet p;
	/* the last two packets but timing ones, the last first */
	int before[2] = {ppt_invalid, ppt_invalid};
	size_t from;
	uint64_t at = 0;
	int yes = 0;

	if (len < sizeof(psb) || o >= len)
		return 0;
	from = o + sizeof(psb) <= len ? o : len - sizeof(psb);
	while (from > 0 && memcmp(s + from, psb, sizeof(psb)))
		from--;
	if (!(dec = pkt_decoder(s, len)))
		return 0;
	if (pt_pkt_sync_set(dec, from) == 0) {
		while (pt_pkt_get_offset(dec, &at) == 0 && at <= o &&
		       pt_pkt_next(dec, &p, sizeof(p)) > 0) {
			if (at == o) {
				yes = p.type == ppt_tip &&
				      before[0] == ppt_mode &&
				      before[1] == ppt_tip_pgd;
				break;
			}
			if (timing_only(p.type))
				continue;
			before[1] = before[0];
			before[0] = p.type;
			if (p.type == ppt_mode && p.payload.mode.leaf != pt_mol_exec)
				before[0] = ppt_invalid; /* (a MODE.TSX) */
		}
	}
	pt_pkt_free_decoder(dec);
	return yes;
}

/* The PSB+ the packet at offset at of t's clean stream lies in, after
 * its PSB and up to its PSBEND: that PSB's offset, or NO_PSB. */
static size_t psb_plus_of(const struct dmg_trace *t, size_t at)
{
	size_t lo = 0, hi = t->npkt;

	while (lo < hi) { /* the first packet at or after at */
		size_t mid = lo + (hi - lo) / 2;
		if (t->pkt[mid].off < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		if (t->pkt[i].type == ppt_psbend)
			return NO_PSB;
		if (t->pkt[i].type == ppt_psb)
			return t->pkt[i].off;
	}
	return NO_PSB;
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

int dmg_judge(struct dmg_trace *t, const uint8_t *dmg, size_t at,
	      const struct dmg_span *span, struct dmg_verdict *v)
{
	struct dmg_errs ef, er;
	const uint8_t *s, *q;
	size_t from, fup;

	memset(v, 0, sizeof(*v));
	v->at = at;
	s = dmg + t->aux_off;
	q = memmem(s + at, t->aux_len - at, psb, sizeof(psb));
	v->psb = q ? (size_t)(q - s) : t->aux_len;
	v->end = t->aux_len;
	if (q)
		psb_plus(s, t->aux_len, v->psb, &v->end, &fup);
	if ((from = psb_plus_of(t, at)) != NO_PSB)
		psb_plus(s, t->aux_len, from, &v->in_end, &v->in_fup);
	dmg_decode(t, 0, dmg, span, &ef);
	dmg_decode(t, 1, dmg, span, &er);
	v->fast = count_in(&ef, v->end, &v->fast_late, &v->fast_off,
			   &v->fast_code);
	if (v->fast) {
		uint64_t o = v->fast_off;

		v->fast_at_fup = packet_type(s, t->aux_len, o) == ppt_fup;
		v->fast_exec_tip = exec_tip_while_off(s, t->aux_len, o);
		v->fast_in_psb_run = o >= sizeof(psb) && o + 2 <= t->aux_len &&
				     !memcmp(s + o - sizeof(psb), psb,
					     sizeof(psb)) &&
				     s[o] == psb[0] && s[o + 1] == psb[1];
	}
	v->ref = count_in(&er, v->end, &v->ref_late, &v->ref_off,
			  &v->ref_code);
	return (v->fast > 0) == (v->ref > 0) && !v->fast_late && !v->ref_late;
}

/* --- the differences that are libipt's own -------------------------------- */

const char *dmg_class_name(enum dmg_class c)
{
	static const char *const names[DMG_CLASSES] = {
		"same",	       "psb-fup",  "retcomp",    "bad-code",
		"lost-fup",    "deferred-tip", "newer",   "exec-fup",
		"wrong-path",  "psb-run",  "exec-tip", "unexplained"};
	return c < DMG_CLASSES ? names[c] : "?";
}

/* Whether d drops the start of a PSB: the damaged packet's own, or one
 * of a later packet that the bytes dropped reach. */
static int drops_psb(const struct dmg_trace *t, const struct dmg *d)
{
	size_t end = t->pkt[d->pkt].off + d->arg;

	if (d->kind != DMG_DROP)
		return 0;
	for (size_t i = d->pkt; i < t->npkt && t->pkt[i].off < end; i++)
		if (t->pkt[i].type == ppt_psb)
			return 1;
	return 0;
}

/* Whether the PSB+ that d damages inside had a FUP in the clean
 * stream. */
static int psb_had_fup(const struct dmg_trace *t, const struct dmg *d)
{
	size_t i = d->pkt;

	while (i > 0 && t->pkt[i].type != ppt_psb)
		i--;
	for (; i < t->npkt && t->pkt[i].type != ppt_psbend; i++)
		if (t->pkt[i].type == ppt_fup)
			return 1;
	return 0;
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
	if (!v->fast && !v->fast_late && v->ref && drops_psb(t, d))
		return DMG_EXEC_FUP;
	/* libipt's own: the fast walker reports in the window, libipt not
	 * there (but perhaps after it, in the state it carried over) */
	if (!v->fast || v->ref || v->fast_late)
		return DMG_UNEXPLAINED;
	if (v->fast_code == STRACE_E_DESYNC &&
	    (v->fast_off >= v->psb || v->fast_at_fup))
		return DMG_PSB_FUP;
	if (v->fast_code == STRACE_E_DESYNC && v->fast_exec_tip)
		return DMG_EXEC_TIP;
	if (v->fast_code == STRACE_E_DESYNC && v->in_end && !v->in_fup &&
	    v->fast_off >= v->in_end && v->fast_off < v->psb &&
	    psb_had_fup(t, d))
		return DMG_LOST_FUP;
	if (v->fast_code == STRACE_E_RETCOMP)
		return DMG_RETCOMP;
	/* the damage left a run of PSB bytes longer than a PSB: libipt
	 * (and perf) synchronise at its last 16 bytes, the fast walker at
	 * its first, and the bytes after that PSB are no packet */
	if (v->fast_code == STRACE_E_BADPKT && v->fast_in_psb_run)
		return DMG_PSB_RUN;
	if ((v->fast_code == STRACE_E_BADINSN ||
	     v->fast_code == STRACE_E_NOTNT) &&
	    (d->kind == DMG_CORRUPT || d->kind == DMG_TRUNC) &&
	    (type == ppt_tip || type == ppt_tip_pge || type == ppt_fup))
		return DMG_BAD_CODE;
	if (v->fast_code == STRACE_E_BADINSN || v->fast_code == STRACE_E_NOTNT ||
	    v->fast_code == STRACE_E_NOTIP)
		return DMG_WRONG_PATH;
	return DMG_UNEXPLAINED;
}
