/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/ctxcut.c - cut a CPU's PT stream between process images. */
#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "ctxcut.h"
#include "strace/internal/grow.h"

/* The timing state, as the walker keeps it (TSC, TMA, MTC; CYC only
 * refines between them and cannot move a point past a switch record). */
struct clock {
	const struct strace_time_conv *tc;
	uint64_t tsc, tsc_ref;
	uint32_t last_ctc;
	int have_tsc, have_ctc;
};

static void clock_packet(struct clock *k, const struct pt_packet *p)
{
	const struct strace_time_conv *tc = k->tc;

	switch (p->type) {
	case ppt_tsc:
		k->tsc = k->tsc_ref = p->payload.tsc.tsc;
		k->have_tsc = 1;
		break;
	case ppt_tma:
		k->last_ctc = p->payload.tma.ctc;
		k->have_ctc = 1;
		if (k->have_tsc)
			k->tsc_ref = k->tsc - p->payload.tma.fc;
		break;
	case ppt_mtc: {
		uint32_t shift = tc->mtc_period, span, cur;
		if (!k->have_tsc || !k->have_ctc || !tc->tsc_ctc_ratio_d ||
		    shift > 15)
			break;
		/* the payload replaces CTC bits [shift + 7 : shift] */
		span = 1u << (shift + 8);
		cur = (k->last_ctc & ~(span - 1)) |
		      ((uint32_t)p->payload.mtc.ctc << shift);
		if (cur < k->last_ctc)
			cur += span;
		k->tsc_ref += (uint64_t)(cur - k->last_ctc) *
			      tc->tsc_ctc_ratio_n / tc->tsc_ctc_ratio_d;
		k->last_ctc = cur & 0xffffu;
		k->tsc = k->tsc_ref;
		break;
	}
	default:
		break;
	}
}

/* The last-IP rules: the full IP a compressed payload stands for. */
static uint64_t last_ip_update(uint64_t last, const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffull) | (ip->ip & 0xffffull);
	case pt_ipc_update_32:
		return (last & ~0xffffffffull) | (ip->ip & 0xffffffffull);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffull) |
		       (ip->ip & 0xffffffffffffull);
	case pt_ipc_sext_48:
		return (ip->ip & 0x800000000000ull)
			       ? ip->ip | 0xffff000000000000ull
			       : ip->ip & 0xffffffffffffull;
	case pt_ipc_full:
		return ip->ip;
	default: /* suppressed */
		return last;
	}
}

static int has_ip(enum pt_packet_type t)
{
	return t == ppt_tip || t == ppt_tip_pge || t == ppt_tip_pgd ||
	       t == ppt_fup;
}

int strace_ctx_scan(const uint8_t *buf, size_t len,
		    const struct strace_time_conv *tc, int has_time,
		    struct strace_ctx_point **out, size_t *n)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct strace_ctx_point *v = NULL;
	size_t nv = 0, cap = 0;
	struct clock k = {tc, 0, 0, 0, 0, 0};
	uint64_t last_ip = 0, pgd = STRACE_CTX_NONE, psb = STRACE_CTX_NONE;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!len)
		return 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return -ENOMEM;
	while (pt_pkt_sync_forward(d) >= 0) {
		for (;;) {
			struct pt_packet p;
			uint64_t off;
			if (pt_pkt_get_offset(d, &off) < 0 ||
			    pt_pkt_next(d, &p, sizeof(p)) < 0)
				break; /* resync at the next PSB, if any */
			clock_packet(&k, &p);
			if (p.type == ppt_psb || p.type == ppt_ovf)
				last_ip = 0;
			if (has_ip(p.type))
				last_ip = last_ip_update(last_ip, &p.payload.ip);
			if (p.type == ppt_tip_pgd)
				pgd = off + p.size;
			if (p.type == ppt_psbend && nv && v[nv - 1].is_psb &&
			    v[nv - 1].off == psb) /* its PSB+'s TSC */
				v[nv - 1].time =
					has_time ? strace_tsc_to_perf_time(tc, k.tsc)
						 : k.tsc;
			if (p.type != ppt_psb && p.type != ppt_tip_pge)
				continue;
			if (nv == cap) {
				void *nvv = strace_grow(v, &cap, sizeof(*v), 64);
				if (!nvv) {
					rc = -ENOMEM;
					goto out;
				}
				v = nvv;
			}
			struct strace_ctx_point *pt = &v[nv++];
			pt->off = off;
			pt->end = p.type == ppt_psb ? off : off + p.size;
			pt->time = has_time ? strace_tsc_to_perf_time(tc, k.tsc)
					    : k.tsc;
			pt->ip = p.type == ppt_psb ? 0 : last_ip;
			pt->pgd = pgd;
			pt->psb = psb;
			pt->is_psb = p.type == ppt_psb;
			if (p.type == ppt_psb)
				psb = off;
		}
	}
out:
	pt_pkt_free_decoder(d);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

/* Packets that tell the decoder nothing about the flow. */
static int keep_packet(enum pt_packet_type t)
{
	switch (t) {
	case ppt_psb:
	case ppt_psbend:
	case ppt_pad:
	case ppt_tsc:
	case ppt_tma:
	case ppt_mtc:
	case ppt_cyc:
	case ppt_cbr:
		return 1;
	default:
		return 0;
	}
}

/* [psb, from) of buf into dst with every flow packet made PAD. */
static void neutralise(const uint8_t *buf, size_t len, uint64_t psb,
		       uint64_t from, uint8_t *dst)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	uint64_t at = psb;
	int in_psb = 0;

	memcpy(dst, buf + psb, (size_t)(from - psb));
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (d && pt_pkt_sync_set(d, psb) >= 0) {
		while (at < from) {
			struct pt_packet p;
			if (pt_pkt_next(d, &p, sizeof(p)) < 0 ||
			    at + p.size > from)
				break;
			/* a MODE.Exec binds to the next TIP.PGE or FUP, made
			 * PAD here: only PSB+'s stays */
			if (p.type == ppt_psb)
				in_psb = 1;
			else if (p.type == ppt_psbend)
				in_psb = 0;
			if (!keep_packet(p.type) &&
			    !(in_psb && p.type == ppt_mode))
				memset(dst + (at - psb), 0, p.size);
			at += p.size;
		}
	}
	/* what did not decode tells the walker nothing either */
	if (at < from)
		memset(dst + (at - psb), 0, (size_t)(from - at));
	pt_pkt_free_decoder(d);
}

int strace_ctx_splice(const uint8_t *buf, size_t len, uint64_t psb,
		      uint64_t from, uint64_t to, uint64_t pge_off,
		      uint64_t pge_end, uint64_t pge_ip, uint8_t **out,
		      size_t *olen)
{
	int prefix = psb != STRACE_CTX_NONE && psb < from;
	int rewrite = prefix && pge_off != STRACE_CTX_NONE &&
		      pge_off >= from && pge_end <= to && pge_end > pge_off;
	size_t pre = prefix ? (size_t)(from - psb) : 0;
	size_t cap = pre + (size_t)(to - from) + 8;
	uint8_t *b = malloc(cap ? cap : 1), *w;

	if (!b)
		return -ENOMEM;
	if (prefix)
		neutralise(buf, len, psb, from, b);
	w = b + pre;
	if (rewrite) {
		/* TIP.PGE, IPC 3 (sign-extended 48 bits): the whole IP */
		memcpy(w, buf + from, (size_t)(pge_off - from));
		w += pge_off - from;
		*w++ = 0x71;
		for (int i = 0; i < 6; i++)
			*w++ = (uint8_t)(pge_ip >> (8 * i));
		memcpy(w, buf + pge_end, (size_t)(to - pge_end));
		w += to - pge_end;
	} else {
		memcpy(w, buf + from, (size_t)(to - from));
		w += to - from;
	}
	*out = b;
	*olen = (size_t)(w - b);
	return 0;
}
