/* SPDX-License-Identifier: MIT */
/*
 * tests/decoder/pebs_insert.c - put PEBS-via-PT records into a raw PT
 * stream, at packet boundaries, as a Tremont or Gracemont core records
 * them with perf's aux-output (issue 33): the stream's flow is unchanged,
 * so every decoder that knows the packets must give the same branches.
 *
 *   pebs_insert IN OUT [EVERY]
 *   pebs_insert --dump IN
 *
 * After every EVERY-th TNT or TIP packet outside a PSB+ (default 7), a
 * record: a basic info block (8-byte items: IP, applicable counters,
 * TSC) and, every other record, a memory info block (4-byte items); then
 * a BEP. After a TIP with an IP every other record ends with a BEP with
 * its IP bit and a FUP with the TIP's target (where the flow stands: a
 * location), in full, so the last IP the stream compresses against stays
 * what it was. Prints "N records" (with FUP: M) on stdout. libipt's
 * packet decoder finds the packets (the input has no PEBS-via-PT).
 *
 * --dump: the PEBS-via-PT packets of IN as our packet layer reads them
 * (decoder/packet.h, pkt_parse_blk(); libipt for what it leaves), one a
 * line as perf script -D describes them: "BBP SZ 8-byte Type 0x4", "BIP
 * ID 0x00 Value 0x401000", "BEP IP:1", each after its offset.
 */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/packet.h"

static uint8_t *out;
static size_t nout, outcap;

static void put(const void *p, size_t n)
{
	if (!n)
		return;
	if (nout + n > outcap) {
		outcap = (nout + n) * 2;
		out = realloc(out, outcap);
		if (!out) {
			fprintf(stderr, "pebs_insert: out of memory\n");
			exit(1);
		}
	}
	memcpy(out + nout, p, n);
	nout += n;
}

static void put_le(uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		uint8_t b = (uint8_t)(v >> (8 * i));
		put(&b, 1);
	}
}

/* The IP of an IP packet given the last IP (libipt's rules). */
static uint64_t ip_of(const struct pt_packet_ip *p, uint64_t last)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffull) | (p->ip & 0xffff);
	case pt_ipc_update_32:
		return (last & ~0xffffffffull) | (p->ip & 0xffffffff);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffull) | (p->ip & 0xffffffffffffull);
	default:
		return p->ip;
	}
}

/* A record; fup: the IP of a FUP after a BEP with its IP bit, 0: none. */
static void record(unsigned k, uint64_t ip, uint64_t fup)
{
	static const uint8_t bbp_basic[] = {0x02, 0x63, 0x04};
	static const uint8_t bbp_mem[] = {0x02, 0x63, 0x85};
	static const uint8_t pad = 0x00;
	uint8_t op;

	put(bbp_basic, 3);
	op = 0 << 3 | 4; /* IP */
	put(&op, 1);
	put_le(ip, 8);
	op = 1 << 3 | 4; /* applicable counters: counter 0 */
	put(&op, 1);
	put_le(1, 8);
	op = 2 << 3 | 4; /* TSC */
	put(&op, 1);
	put_le(1000000 + k, 8);
	if (k & 1) {
		put(&pad, 1);
		put(bbp_mem, 3);
		op = 0 << 3 | 4; /* the address */
		put(&op, 1);
		put_le(0x7ffd0000 + k * 8, 4);
		op = 2 << 3 | 4; /* latency */
		put(&op, 1);
		put_le(k % 300, 4);
	}
	if (fup) {
		static const uint8_t bep_ip[] = {0x02, 0xb3};

		put(bep_ip, 2);
		op = 0xdd; /* FUP, full 64-bit IP */
		put(&op, 1);
		put_le(fup, 8);
	} else {
		static const uint8_t bep[] = {0x02, 0x33};

		put(bep, 2);
	}
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f) {
		fprintf(stderr, "pebs_insert: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			b = realloc(b, cap);
			if (!b)
				exit(1);
		}
		n = fread(b + *len, 1, cap - *len, f);
		if (!n)
			break;
		*len += n;
	}
	fclose(f);
	return b;
}

/* --dump: every packet from the first PSB through our layer; stops at
 * the end or at what neither part of it reads. */
static int dump(const char *path)
{
	size_t len, i;
	uint8_t *b = read_file(path, &len);
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	unsigned blk = 0;
	long at;

	pt_config_init(&cfg);
	cfg.begin = b;
	cfg.end = b + len;
	d = pt_pkt_alloc_decoder(&cfg);
	at = d ? strace_dec_pkt_sync(d, b, len, 0) : -1;
	for (i = at < 0 ? len : (size_t)at; i < len;) {
		struct pkt p;

		pkt_parse_blk(b, len, i, 0, &blk, &p);
		if (p.type == PKT_OTHER) {
			struct pt_packet q;
			int n = strace_dec_pkt_decode(d, i, &q);

			if (n <= 0)
				break;
			p.size = (size_t)n;
		} else if (p.type == PKT_END || p.type == PKT_BAD) {
			break;
		} else if (p.type == PKT_BBP) {
			printf("%08zx BBP SZ %u-byte Type 0x%x\n", i, p.nbits,
			       (unsigned)p.payload);
		} else if (p.type == PKT_BIP) {
			printf("%08zx BIP ID 0x%02x Value 0x%" PRIx64 "\n", i,
			       p.nbits, p.payload);
		} else if (p.type == PKT_BEP) {
			printf("%08zx BEP IP:%u\n", i, p.ipc);
		}
		i += p.size;
	}
	pt_pkt_free_decoder(d);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *f;
	uint8_t *in;
	size_t len;
	unsigned every = 7, seen = 0, recs = 0, fups = 0;
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	uint64_t last_ip = 0, pos = 0;
	int in_psb = 0;

	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return dump(argv[2]);
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: pebs_insert IN OUT [EVERY]\n"
				"       pebs_insert --dump IN\n");
		return 2;
	}
	if (argc == 4)
		every = (unsigned)strtoul(argv[3], NULL, 0);
	if (!every)
		every = 1;
	in = read_file(argv[1], &len);
	pt_config_init(&cfg);
	cfg.begin = in;
	cfg.end = in + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d || pt_pkt_sync_forward(d) < 0 ||
	    pt_pkt_get_sync_offset(d, &pos) < 0) {
		fprintf(stderr, "pebs_insert: %s: no PSB\n", argv[1]);
		return 1;
	}
	put(in, (size_t)pos);
	for (;;) {
		struct pt_packet p;
		uint64_t at = 0, ip = 0;
		int r, has_ip = 0;

		pt_pkt_get_offset(d, &at);
		r = pt_pkt_next(d, &p, sizeof(p));
		if (r < 0) {
			/* the rest as it is (the end, or what libipt cannot
			 * read) */
			put(in + at, len - (size_t)at);
			break;
		}
		put(in + at, (size_t)r);
		switch (p.type) {
		case ppt_psb:
			in_psb = 1;
			last_ip = 0;
			break;
		case ppt_psbend:
		case ppt_ovf:
			in_psb = 0;
			break;
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
			if (p.payload.ip.ipc != pt_ipc_suppressed) {
				last_ip = ip_of(&p.payload.ip, last_ip);
				ip = last_ip;
				has_ip = 1;
			}
			break;
		default:
			break;
		}
		if (in_psb || (p.type != ppt_tnt_8 && p.type != ppt_tnt_64 &&
			       p.type != ppt_tip))
			continue;
		if (++seen % every)
			continue;
		recs++;
		if (p.type == ppt_tip && has_ip && (recs & 1)) {
			fups++;
			record(recs, ip, ip);
		} else {
			record(recs, has_ip ? ip : 0x401000, 0);
		}
	}
	pt_pkt_free_decoder(d);
	f = fopen(argv[2], "wb");
	if (!f || fwrite(out, 1, nout, f) != nout || fclose(f)) {
		fprintf(stderr, "pebs_insert: %s: %s\n", argv[2],
			strerror(errno));
		return 1;
	}
	printf("%u records (with FUP: %u)\n", recs, fups);
	free(in);
	free(out);
	return 0;
}
