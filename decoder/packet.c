/* SPDX-License-Identifier: MIT */
/*
 * decoder/packet.c - the packet work that goes through libipt's packet
 * decoder (pt_pkt_*): synchronising at PSBs, the packets the inline parser
 * (packet.h) leaves to libipt, looking ahead for the errata, reading a
 * PSB+; and cutting a buffer at its PSBs (strace_pt_split()).
 */
#include <string.h>

#include "decoder/packet.h"

long strace_dec_pkt_sync(struct pt_packet_decoder *d, const uint8_t *buf,
			 size_t len, size_t from)
{
	uint64_t off;

	if (from >= len)
		return -1;
	/* pt_pkt_sync_forward() looks past a PSB at the position it was
	 * set to: take one that starts right here ourselves (whole: the
	 * first bytes of one cut short are no sync point) */
	if (from + 16 <= len) {
		struct pkt p;

		pkt_parse(buf, len, from, 0, &p);
		if (p.type == PKT_PSB)
			return (long)from;
	}
	if (pt_pkt_sync_set(d, from) < 0)
		return -1;
	if (pt_pkt_sync_forward(d) < 0)
		return -1;
	if (pt_pkt_get_sync_offset(d, &off) < 0 || off >= len)
		return -1;
	return (long)off;
}

int strace_dec_pkt_decode(struct pt_packet_decoder *d, size_t pos,
			  struct pt_packet *p)
{
	int n;

	if (pt_pkt_sync_set(d, pos) < 0)
		return -STRACE_E_BADPKT;
	n = pt_pkt_next(d, p, sizeof(*p));
	if (n == -pte_eos)
		return 0;
	if (n <= 0)
		return -STRACE_E_BADPKT;
	return n;
}

int strace_dec_pkt_peek(struct pt_packet_decoder *d, size_t from,
			uint64_t skip, struct pt_packet *p)
{
	const struct pt_config *cfg = pt_pkt_get_config(d);
	const uint8_t *buf = cfg->begin;
	size_t len = (size_t)(cfg->end - cfg->begin), at = from;
	unsigned blk = 0;
	int bep_fup = 0, pebs = 0;

	for (int k = 0; k < 64 && pebs < 1024 && at < len;) {
		struct pkt q;
		uint64_t next;

		/* PEBS-via-PT records, CFE, EVD and TRIG, which libipt 2.0.5
		 * does not know, are passed over (and the FUP a BEP, CFE or
		 * TRIG with its IP bit binds): they say nothing of the flow */
		if (blk && pkt_is_bip(buf[at]))
			pkt_bip(buf, len, at, blk, &q);
		else
			pkt_parse(buf, len, at, 0, &q);
		if (q.type >= PKT_BBP) {
			blk = pkt_blk_after(blk, &q, buf + at, len - at);
			bep_fup = q.type != PKT_BBP && q.type != PKT_BIP &&
				  q.type != PKT_EVD && q.ipc;
			at += q.size;
			pebs++;
			continue;
		}
		if (q.type == PKT_END)
			return -1;
		if (pt_pkt_sync_set(d, at) < 0 ||
		    pt_pkt_next(d, p, sizeof(*p)) <= 0 ||
		    pt_pkt_get_offset(d, &next) < 0)
			return -1;
		blk = pkt_blk_after(blk, &q, buf + at, len - at);
		at = (size_t)next;
		if (bep_fup && p->type == ppt_fup) {
			bep_fup = 0;
			continue;
		}
		bep_fup = 0;
		k++;
		if (!((skip >> p->type) & 1))
			return 0;
	}
	return -1;
}

int strace_dec_psb_plus(const uint8_t *buf, size_t len, size_t off,
			uint64_t *ip, size_t *at, int *has_fup)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet p;
	int complete = 0;

	*has_fup = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return 0;
	if (pt_pkt_sync_set(d, off) >= 0) {
		for (int k = 0; k < 64; k++) {
			uint64_t here = 0;
			pt_pkt_get_offset(d, &here);
			if (pt_pkt_next(d, &p, sizeof(p)) < 0)
				break;
			if (p.type == ppt_psbend) {
				complete = 1;
				break;
			}
			if (p.type == ppt_fup &&
			    p.payload.ip.ipc != pt_ipc_suppressed) {
				/* last IP is 0 after a PSB */
				*ip = pkt_ip_ipt(&p.payload.ip, 0);
				*at = (size_t)here;
				*has_fup = 1;
			}
		}
	}
	pt_pkt_free_decoder(d);
	return complete;
}

int strace_dec_pebs_near(const uint8_t *buf, size_t len, size_t from)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	unsigned blk = 0;
	int found = 0;
	size_t i = from;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return 0;
	for (int k = 0; k < 64 && i < len && !found; k++) {
		struct pkt p;

		pkt_parse_blk(buf, len, i, 0, &blk, &p);
		if (p.type == PKT_BBP || p.type == PKT_BIP ||
		    p.type == PKT_BEP) {
			found = 1;
		} else if (p.type == PKT_CFE || p.type == PKT_EVD ||
			   p.type == PKT_TRIG) {
			found = 2;
		} else if (p.type == PKT_OTHER) {
			struct pt_packet q;
			int n = strace_dec_pkt_decode(d, i, &q);

			if (n <= 0)
				break;
			p.size = (size_t)n;
		} else if (p.type == PKT_END || p.type == PKT_BAD ||
			   (p.type == PKT_PSB && i != from)) {
			break;
		}
		i += p.size;
	}
	pt_pkt_free_decoder(d);
	return found;
}

size_t strace_pt_split(const uint8_t *buf, size_t len, size_t min_bytes,
		       uint64_t *offs, size_t max)
{
	static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
	size_t n = 0;
	const uint8_t *p = buf, *end = buf + len;

	while (n < max && p + 16 <= end) {
		const uint8_t *q = memmem(p, (size_t)(end - p), psb, 16);
		if (!q)
			break;
		if (!n || (uint64_t)(q - buf) >= offs[n - 1] + min_bytes)
			offs[n++] = (uint64_t)(q - buf);
		p = q + 16;
	}
	return n;
}
