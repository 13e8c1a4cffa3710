/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/loopgen.h - a tiny program in an image of bytes, and real
 * PT of it from libipt's encoder. For the tests that compare a decode
 * with the sequential decode of the same trace (test_decoder_stream,
 * test_decoder_parallel, test_decoder_walk_vec), and for the reference
 * decoder's (test_decoder_ref), which checks what the generator counted.
 *
 * The program (at LG_BASE):
 *   A:   call F          e8 0b 00 00 00
 *        jmp A           eb f9
 *   F:   je F+5          74 03        a TNT bit
 *        syscall         0f 05        TIP.PGD, TIP.PGE
 *        nop             90
 *        ret             c3           a TNT bit, or a TIP when its call
 *                                     came before the last PSB
 * The trace: PSB+ (MODE.Exec, TSC, FUP) every 1 KiB or so, at A or at F
 * (after the call: its return is then not compressed).
 * Header-only: each test is one program.
 */
#ifndef TESTS_UNIT_LOOPGEN_H
#define TESTS_UNIT_LOOPGEN_H

#include <intel-pt.h>
#include <stdint.h>
#include <string.h>

#include "decoder/decoder.h"

#define LG_BASE 0x401000ull
#define LG_A LG_BASE
#define LG_F (LG_BASE + 0x10)

static const uint8_t lg_code[] = {
	0xe8, 0x0b, 0x00, 0x00, 0x00, /* A: call F */
	0xeb, 0xf9,                   /* jmp A */
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x74, 0x03, /* F: je F+5 */
	0x0f, 0x05, /* syscall */
	0x90,       /* nop */
	0xc3,       /* ret */
};

/* What a trace holds: the loop's turns begun, its system calls. */
struct lg_counts {
	size_t turns, syscalls, psbs;
};

struct lg {
	struct pt_encoder *enc;
	struct lg_counts n;
	uint64_t rng, tsc, tnt;
	int ntnt, pushed; /* pushed: the call's return may be compressed */
	int bad;
};

static inline uint64_t lg_rnd(struct lg *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static inline void lg_put(struct lg *g, struct pt_packet *p)
{
	if (pt_enc_next(g->enc, p) < 0)
		g->bad = 1;
}

static inline void lg_flush(struct lg *g)
{
	struct pt_packet p;

	if (!g->ntnt)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = (uint8_t)g->ntnt;
	p.payload.tnt.payload = g->tnt;
	lg_put(g, &p);
	g->tnt = 0;
	g->ntnt = 0;
}

static inline void lg_bit(struct lg *g, int taken)
{
	g->tnt = g->tnt << 1 | (uint64_t)taken;
	if (++g->ntnt == 6)
		lg_flush(g);
}

static inline void lg_ip(struct lg *g, enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p;

	lg_flush(g);
	memset(&p, 0, sizeof(p));
	p.type = t;
	p.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	p.payload.ip.ip = ip;
	lg_put(g, &p);
}

static inline void lg_psbplus(struct lg *g, uint64_t ip)
{
	struct pt_packet p;

	lg_flush(g);
	g->pushed = 0; /* no return compressed across a PSB */
	g->n.psbs++;
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	lg_put(g, &p);
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	lg_put(g, &p);
	memset(&p, 0, sizeof(p));
	g->tsc += 1000 + lg_rnd(g) % 1000;
	p.type = ppt_tsc;
	p.payload.tsc.tsc = g->tsc;
	lg_put(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_fup;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	lg_put(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	lg_put(g, &p);
}

/* About len bytes of PT of the program (seed: its choices); *n (may be
 * NULL) what it holds. Returns the byte count, 0 if the encoder failed. */
static inline size_t lg_make_counted(uint8_t *buf, size_t len, uint64_t seed,
				     struct lg_counts *n)
{
	struct pt_config cfg;
	struct lg g;
	uint64_t off = 0, last_psb = 0;

	memset(&g, 0, sizeof(g));
	g.rng = seed | 1;
	g.tsc = 1000000;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	g.enc = pt_alloc_encoder(&cfg);
	if (!g.enc)
		return 0;
	lg_psbplus(&g, LG_A);
	for (;;) {
		pt_enc_get_offset(g.enc, &off);
		if (off + 256 > len || g.bad)
			break;
		if (off - last_psb > 1024 && lg_rnd(&g) % 4 == 0) {
			lg_psbplus(&g, LG_A);
			last_psb = off;
		}
		/* A: call F (pushed), jmp A */
		g.pushed = 1;
		g.n.turns++;
		if (off - last_psb > 1024 && lg_rnd(&g) % 4 == 0) {
			lg_psbplus(&g, LG_F);
			last_psb = off;
		}
		/* F: je */
		if (lg_rnd(&g) & 1) {
			lg_bit(&g, 1);
		} else {
			lg_bit(&g, 0);
			g.n.syscalls++;
			lg_ip(&g, ppt_tip_pgd, 0);
			lg_ip(&g, ppt_tip_pge, LG_F + 4);
		}
		/* ret */
		if (g.pushed)
			lg_bit(&g, 1);
		else
			lg_ip(&g, ppt_tip, LG_A + 5);
	}
	lg_flush(&g);
	pt_enc_get_offset(g.enc, &off);
	pt_free_encoder(g.enc);
	if (n)
		*n = g.n;
	return g.bad ? 0 : (size_t)off;
}

static inline size_t lg_make(uint8_t *buf, size_t len, uint64_t seed)
{
	return lg_make_counted(buf, len, seed, NULL);
}

/* The image of the program. Returns 0 or the error. */
static inline int lg_image(struct strace_image **img)
{
	int rc = strace_image_new(NULL, img);

	if (rc)
		return rc;
	return strace_image_add_bytes(*img, LG_BASE, lg_code, sizeof(lg_code),
				      "loop");
}

#endif /* TESTS_UNIT_LOOPGEN_H */
