/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/ptgen.h - random numbers and random real PT for the tests of
 * the live capture's rings and session (header-only: each test is one
 * program).
 */
#ifndef TESTS_UNIT_PTGEN_H
#define TESTS_UNIT_PTGEN_H

#include <intel-pt.h>
#include <stdint.h>
#include <string.h>

/* xorshift64, per thread: fake kernels and consumers draw at once. */
static _Thread_local uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * About len bytes of PT from libipt's encoder: a PSB+ (PSB, TSC, PSBEND,
 * TIP.PGE) every 2 KiB or so, between them TIP, MTC and TNT packets.
 * Returns the byte count; *npackets (may be NULL) the packet count.
 */
static inline size_t make_pt(uint8_t *buf, size_t len, size_t *npackets)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet p;
	uint64_t off = 0, ip = 0x401000;
	size_t n = 0, since_psb = 99999;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return 0;
	for (;;) {
		memset(&p, 0, sizeof(p));
		if (since_psb > 2048) {
			/* PSB+ : PSB, TSC, PSBEND, then a TIP.PGE to resume. */
			struct pt_packet seq[4];

			memset(seq, 0, sizeof(seq));
			seq[0].type = ppt_psb;
			seq[1].type = ppt_tsc;
			seq[1].payload.tsc.tsc = rnd() & 0xffffffffffffULL;
			seq[2].type = ppt_psbend;
			seq[3].type = ppt_tip_pge;
			seq[3].payload.ip.ipc = pt_ipc_sext_48;
			seq[3].payload.ip.ip = ip;
			pt_enc_get_offset(enc, &off);
			if (off + 64 > len)
				break;
			for (int i = 0; i < 4; i++) {
				if (pt_enc_next(enc, &seq[i]) < 0)
					goto out;
				n++;
			}
			since_psb = 0;
			continue;
		}
		switch (rnd() % 4) {
		case 0:
			p.type = ppt_tip;
			p.payload.ip.ipc = pt_ipc_sext_48;
			ip = 0x400000 + (rnd() & 0xfffff);
			p.payload.ip.ip = ip;
			break;
		case 1:
			p.type = ppt_mtc;
			p.payload.mtc.ctc = (uint8_t)rnd();
			break;
		default:
			p.type = ppt_tnt_8;
			p.payload.tnt.bit_size = (uint8_t)(1 + rnd() % 6);
			p.payload.tnt.payload = rnd() &
				((1u << p.payload.tnt.bit_size) - 1);
			break;
		}
		pt_enc_get_offset(enc, &off);
		if (off + 16 > len)
			break;
		{
			int r = pt_enc_next(enc, &p);

			if (r < 0)
				break;
			since_psb += (size_t)r;
		}
		n++;
	}
out:
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	if (npackets)
		*npackets = n;
	return (size_t)off;
}

#endif /* TESTS_UNIT_PTGEN_H */
