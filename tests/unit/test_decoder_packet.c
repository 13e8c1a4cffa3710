/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_packet.c - the packet layer (decoder/packet.h,
 * packet.c) judged by perf's own packet-decoder test vectors
 * (perf_pkt_vectors.h: every row of perf's table, transcribed as data).
 *
 * Each row's bytes go through our layer as the walker takes them:
 * pkt_parse_blk() with the row's block state (perf's packet context),
 * and, for what the inline parser leaves to libipt (PKT_OTHER),
 * strace_dec_pkt_decode(). Compared for every row: the kind, the length
 * and the block state after it (and, for the rows perf marks so, that
 * the packet leaves every block state as it was). The fields compared,
 * by kind (perf's count and payload against ours):
 *   TNT            the number of bits and the bits
 *   TIP, TIP.PGE,  the IP compression and the IP bytes
 *   TIP.PGD, FUP
 *   MODE.Exec      the mode byte (perf's count: the IF bit with the
 *                  rest) and the width it gives (16, 32, 64)
 *   MODE.TSX       InTX and TXAbort
 *   TSC, MTC, CYC, the payload
 *   CBR
 *   BBP            the block type and the size of its items
 *   BIP            the item's id and value
 *   BEP            the IP bit
 *   CFE            the type, the IP bit and the vector
 *   EVD            the type and the payload
 *   (libipt's)
 *   PIP            CR3 and NR (libipt shifts CR3 into place)
 *   TMA            CTC and FC
 *   VMCS           the base (libipt shifts it into place)
 *   MNT            the payload
 *   PTW            the payload size code, the IP bit and the payload
 *   EXSTOP         the IP bit
 *   MWAIT          hints and extensions (perf: one 8-byte payload)
 *   PWRE           the C-state and sub C-state (perf keeps the raw
 *                  bytes; the HW bit is not compared)
 *   PWRX           the deepest and last C-states and the interrupt,
 *                  store and autonomous wake reasons
 *   PSB, PSBEND,   the kind and length only (nothing else to compare)
 *   OVF, PAD, STOP
 * One difference, and it is libipt's: a CYC of 10 bytes (9 extension
 * bytes, room for 68 bits) is a bad packet for libipt 2.0.5 and so for
 * us (docs/decoder.md, the contradictions table), where perf takes the
 * 64 bits it can hold. Those two rows must be PKT_BAD; they are counted
 * and named.
 */
#include <intel-pt.h>

#include "harness.h"
#include "decoder/packet.h"
#include "perf_pkt_vectors.h"

static const char *const pv_names[] = {
	"BAD", "PAD", "TNT", "TIP.PGD", "TIP.PGE", "TSC", "TMA", "MODE.Exec",
	"MODE.TSX", "MTC", "TIP", "FUP", "CYC", "VMCS", "PSB", "PSBEND",
	"CBR", "TraceSTOP", "PIP", "OVF", "MNT", "PTWRITE", "PTWRITE.IP",
	"EXSTOP", "EXSTOP.IP", "MWAIT", "PWRE", "PWRX", "BBP", "BIP", "BEP",
	"BEP.IP", "CFE", "CFE.IP", "EVD",
};

/* Row k failed: what and both values. */
static int row_fail(size_t k, const char *what, uint64_t got, uint64_t want)
{
	const struct pv_row *r = &pv_rows[k];

	fprintf(stderr, "  row %zu (%s, bytes", k, pv_names[r->packet.type]);
	for (int i = 0; i < r->len; i++)
		fprintf(stderr, " %02x", r->bytes[i]);
	fprintf(stderr, "): %s 0x%llx, perf 0x%llx\n", what,
		(unsigned long long)got, (unsigned long long)want);
	th_failed_checks++;
	return 1;
}

#define FIELD(what, got, want)                                                 \
	do {                                                                   \
		if ((uint64_t)(got) != (uint64_t)(want))                       \
			return row_fail(k, what, (uint64_t)(got),               \
					(uint64_t)(want));                     \
	} while (0)

/* A packet our inline parser leaves to libipt, against perf's row. */
static int check_libipt(size_t k, const uint8_t *b, size_t len)
{
	const struct pv_row *r = &pv_rows[k];
	uint64_t v = r->packet.payload;
	int c = r->packet.count;
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet p;
	int n;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)b;
	cfg.end = (uint8_t *)(uintptr_t)b + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return row_fail(k, "no libipt decoder", 0, 0);
	memset(&p, 0, sizeof(p));
	n = strace_dec_pkt_decode(d, 0, &p);
	pt_pkt_free_decoder(d);
	FIELD("length", n, r->len);
	switch (r->packet.type) {
	case PV_PIP:
		FIELD("kind", p.type, ppt_pip);
		FIELD("cr3", p.payload.pip.cr3, (v >> 1) << 5);
		FIELD("nr", p.payload.pip.nr, v & 1);
		break;
	case PV_TMA:
		FIELD("kind", p.type, ppt_tma);
		FIELD("ctc", p.payload.tma.ctc, v);
		FIELD("fc", p.payload.tma.fc, c);
		break;
	case PV_VMCS:
		FIELD("kind", p.type, ppt_vmcs);
		FIELD("base", p.payload.vmcs.base, v << 12);
		FIELD("bytes", n - 2, c);
		break;
	case PV_MNT:
		FIELD("kind", p.type, ppt_mnt);
		FIELD("payload", p.payload.mnt.payload, v);
		break;
	case PV_TRACESTOP:
		FIELD("kind", p.type, ppt_stop);
		break;
	case PV_PTWRITE:
	case PV_PTWRITE_IP:
		FIELD("kind", p.type, ppt_ptw);
		FIELD("size code", p.payload.ptw.plc, c);
		FIELD("ip bit", p.payload.ptw.ip,
		      r->packet.type == PV_PTWRITE_IP);
		FIELD("payload", p.payload.ptw.payload, v);
		break;
	case PV_EXSTOP:
	case PV_EXSTOP_IP:
		FIELD("kind", p.type, ppt_exstop);
		FIELD("ip bit", p.payload.exstop.ip,
		      r->packet.type == PV_EXSTOP_IP);
		break;
	case PV_MWAIT:
		FIELD("kind", p.type, ppt_mwait);
		FIELD("hints", p.payload.mwait.hints, v & 0xffffffff);
		FIELD("ext", p.payload.mwait.ext, v >> 32);
		break;
	case PV_PWRE:
		FIELD("kind", p.type, ppt_pwre);
		FIELD("state", p.payload.pwre.state, (v >> 12) & 0xf);
		FIELD("sub state", p.payload.pwre.sub_state, (v >> 8) & 0xf);
		break;
	case PV_PWRX:
		FIELD("kind", p.type, ppt_pwrx);
		FIELD("deepest", p.payload.pwrx.deepest, v & 0xf);
		FIELD("last", p.payload.pwrx.last, (v >> 4) & 0xf);
		FIELD("interrupt", p.payload.pwrx.interrupt, (v >> 8) & 1);
		FIELD("store", p.payload.pwrx.store, (v >> 10) & 1);
		FIELD("autonomous", p.payload.pwrx.autonomous, (v >> 11) & 1);
		break;
	default:
		return row_fail(k, "left to libipt", r->packet.type, 0);
	}
	return 0;
}

/* Row k through our layer. Returns 0 when it agrees with perf. */
static int check_row(size_t k, size_t *cyc_too_long)
{
	const struct pv_row *r = &pv_rows[k];
	uint64_t v = r->packet.payload;
	int c = r->packet.count;
	unsigned blk = (unsigned)r->ctx;
	struct pkt p;

	memset(&p, 0, sizeof(p));
	pkt_parse_blk(r->bytes, (size_t)r->len, 0, 0, &blk, &p);
	if (r->packet.type == PV_CYC && r->len == 10) {
		/* libipt's rule (above) */
		FIELD("kind (a bad packet, as for libipt)", p.type, PKT_BAD);
		(*cyc_too_long)++;
		return 0;
	}
	FIELD("block state after", blk, r->new_ctx);
	if (r->ctx_unchanged)
		for (unsigned b = 0; b <= 8; b += 4)
			FIELD("block state kept",
			      pkt_blk_after(b, &p, r->bytes, (size_t)r->len),
			      b);
	if (p.type == PKT_OTHER)
		return check_libipt(k, r->bytes, (size_t)r->len);
	FIELD("length", p.size, r->len);
	switch (r->packet.type) {
	case PV_PAD:
		FIELD("kind", p.type, PKT_SKIP);
		break;
	case PV_TNT:
		FIELD("kind", p.type, PKT_TNT);
		FIELD("bits", p.nbits, c);
		/* perf: the first bit at bit 63 */
		FIELD("taken bits", p.payload, v >> (64 - c));
		break;
	case PV_TIP:
	case PV_TIP_PGE:
	case PV_TIP_PGD:
	case PV_FUP:
		FIELD("kind", p.type,
		      r->packet.type == PV_TIP	       ? PKT_TIP
		      : r->packet.type == PV_TIP_PGE ? PKT_PGE
		      : r->packet.type == PV_TIP_PGD ? PKT_PGD
						     : PKT_FUP);
		FIELD("ip compression", p.ipc, c);
		FIELD("ip bytes", p.payload, v);
		break;
	case PV_MODE_EXEC: {
		static const unsigned width[4] = {16, 64, 32, 0};

		FIELD("kind", p.type, PKT_MODE);
		FIELD("leaf", p.payload >> 5, 0);
		FIELD("mode byte", p.payload, c);
		FIELD("width", width[p.payload & 3], v);
		break;
	}
	case PV_MODE_TSX:
		FIELD("kind", p.type, PKT_MODE);
		FIELD("leaf", p.payload >> 5, 1);
		FIELD("InTX, TXAbort", p.payload & 3, v);
		break;
	case PV_TSC:
	case PV_MTC:
	case PV_CYC:
	case PV_CBR:
		FIELD("kind", p.type,
		      r->packet.type == PV_TSC	       ? PKT_TSC
		      : r->packet.type == PV_MTC ? PKT_MTC
		      : r->packet.type == PV_CYC ? PKT_CYC
						 : PKT_CBR);
		FIELD("payload", p.payload, v);
		break;
	case PV_PSB:
		FIELD("kind", p.type, PKT_PSB);
		break;
	case PV_PSBEND:
		FIELD("kind", p.type, PKT_PSBEND);
		break;
	case PV_OVF:
		FIELD("kind", p.type, PKT_OVF);
		break;
	case PV_BBP:
		FIELD("kind", p.type, PKT_BBP);
		FIELD("block type", p.payload, v);
		FIELD("4-byte items", p.nbits == 4, c);
		break;
	case PV_BIP:
		FIELD("kind", p.type, PKT_BIP);
		FIELD("id", p.nbits, c);
		FIELD("value", p.payload, v);
		break;
	case PV_BEP:
	case PV_BEP_IP:
		FIELD("kind", p.type, PKT_BEP);
		FIELD("ip bit", p.ipc, r->packet.type == PV_BEP_IP);
		break;
	case PV_CFE:
	case PV_CFE_IP:
		FIELD("kind", p.type, PKT_CFE);
		FIELD("type", p.nbits, c);
		FIELD("ip bit", p.ipc, r->packet.type == PV_CFE_IP);
		FIELD("vector", p.payload, v);
		break;
	case PV_EVD:
		FIELD("kind", p.type, PKT_EVD);
		FIELD("type", p.nbits, c);
		FIELD("payload", p.payload, v);
		break;
	default:
		return row_fail(k, "kind parsed inline", p.type, 0);
	}
	return 0;
}

TEST(perf_vectors_every_row)
{
	size_t n = sizeof(pv_rows) / sizeof(pv_rows[0]), bad = 0, cyc = 0;

	for (size_t k = 0; k < n; k++)
		bad += (size_t)check_row(k, &cyc);
	CHECK_INT(bad, ==, 0);
	CHECK_INT(cyc, ==, 2);
	printf("  %zu rows of perf's packet-decoder test, %zu as perf "
	       "decodes them, %zu 10-byte CYCs bad as for libipt\n",
	       n, n - bad - cyc, cyc);
}

/* A PEBS record of two blocks (basic info, 8-byte items; memory info,
 * 4-byte items) with timing inside, packet by packet. */
TEST(pebs_record_in_sequence)
{
	static const uint8_t b[] = {
		0x02, 0x63, 0x04,                   /* BBP basic, 8 bytes */
		0x04, 1, 2, 3, 4, 5, 6, 7, 8,       /* BIP 0 */
		0x59, 0x12,                         /* MTC */
		0x0c, 9, 0, 0, 0, 0, 0, 0, 0,       /* BIP 1 */
		0x00,                               /* PAD */
		0x02, 0x63, 0x85,                   /* BBP memory, 4 bytes */
		0x14, 0xaa, 0xbb, 0xcc, 0xdd,       /* BIP 2 */
		0x02, 0xb3,                         /* BEP with IP */
		0x04,                               /* a short TNT again */
	};
	static const struct {
		uint8_t type, nbits;
		uint64_t payload;
		unsigned blk;
	} want[] = {
		{PKT_BBP, 8, 4, 8},
		{PKT_BIP, 0, 0x0807060504030201ull, 8},
		{PKT_MTC, 0, 0x12, 8},
		{PKT_BIP, 1, 9, 8},
		{PKT_SKIP, 0, 0, 8},
		{PKT_BBP, 4, 5, 4},
		{PKT_BIP, 2, 0xddccbbaa, 4},
		{PKT_BEP, 0, 0, 0},
		{PKT_TNT, 1, 0, 0},
	};
	unsigned blk = 0;
	size_t i = 0;

	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		struct pkt p;

		memset(&p, 0, sizeof(p));
		REQUIRE(i < sizeof(b));
		pkt_parse_blk(b, sizeof(b), i, 0, &blk, &p);
		CHECK_INT(p.type, ==, want[k].type);
		if (p.type != PKT_MTC && p.type != PKT_SKIP)
			CHECK_INT(p.nbits, ==, want[k].nbits);
		if (p.type != PKT_BEP)
			CHECK_U64(p.payload, ==, want[k].payload);
		else
			CHECK_INT(p.ipc, ==, 1);
		CHECK_INT(blk, ==, want[k].blk);
		i += p.size;
	}
	CHECK_INT(i, ==, sizeof(b));
}

/* Cut by the end of the buffer: the decode stops there (PKT_END). */
TEST(pebs_packets_cut_short)
{
	static const uint8_t bbp[] = {0x02, 0x63};
	static const uint8_t bip[] = {0x04, 1, 2, 3, 4, 5, 6, 7};
	struct pkt p;
	unsigned blk = 0;

	pkt_parse_blk(bbp, sizeof(bbp), 0, 0, &blk, &p);
	CHECK_INT(p.type, ==, PKT_END);
	CHECK_INT(blk, ==, 0);
	blk = 8;
	pkt_parse_blk(bip, sizeof(bip), 0, 0, &blk, &p);
	CHECK_INT(p.type, ==, PKT_END);
	blk = 4;
	pkt_parse_blk(bip, 5, 0, 0, &blk, &p);
	CHECK_INT(p.type, ==, PKT_BIP);
	CHECK_INT(p.size, ==, 5);
	/* outside a block the byte is a short TNT */
	blk = 0;
	pkt_parse_blk(bip, sizeof(bip), 0, 0, &blk, &p);
	CHECK_INT(p.type, ==, PKT_TNT);
	CHECK_INT(p.size, ==, 1);
}

/*
 * TRIG (trigger tracing; neither perf 6.1 nor libipt 2.0.5 knows it),
 * judged by libipt's development tree (HEAD 8978561f): the bytes are what
 * its pttc encoded for test/src/trig.ptt, trig-fup.ptt and
 * mode-trig-trig.ptt, the fields what their ptdump listings
 * (*-ptdump.exp) say of each TRIG: its offset, TRBV, MULT, IP bit and
 * ICNT. Every other packet of the three streams is parsed inline too
 * (none left to libipt 2.0.5, which cannot read a TRIG).
 */
TEST(trig_packets_as_libipt_lists_them)
{
	static const uint8_t trig[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x99, 0x01, 0x02, 0x23, 0xd9, 0x00, 0x01, 0x71,
		0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0xd9, 0x00, 0x02, 0x06, 0xd9, 0x20,
		0x03, 0x4d, 0x06, 0x10, 0x00, 0x00, 0xd9, 0x00, 0x04, 0xd9, 0x20, 0x05,
		0x7d, 0x06, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01, 0xd9, 0x00, 0x06, 0xd9,
		0x20, 0x07,};
	static const uint8_t trig_fup[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x99, 0x01, 0x7d, 0x00, 0x10, 0x00, 0x00, 0x00,
		0x00, 0x02, 0x23, 0x06, 0xd9, 0xc0, 0x1a, 0x00, 0x00, 0x5d, 0x03, 0x10,
		0x00, 0x00, 0x21, 0x09, 0x10, 0xd9, 0xc0, 0xa1, 0x00, 0x00, 0x3d, 0x09,
		0x10, 0xd9, 0xc0, 0xa2, 0x00, 0x00, 0x7d, 0x0a, 0x10, 0x00, 0x00, 0x00,
		0x00,};
	static const uint8_t mode_trig[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x99, 0x01, 0x7d, 0x00, 0x10, 0x00, 0x00, 0x00,
		0x00, 0x02, 0x23, 0x99, 0x05, 0x3d, 0x01, 0x10, 0xd9, 0x40, 0xa1, 0x00,
		0x00, 0xd9, 0x40, 0xa2, 0x01, 0x00, 0xd9, 0x40, 0xa3, 0x00, 0x00, 0xd9,
		0x40, 0xa4, 0x02, 0x00, 0x3d, 0x0b, 0x10, 0x01,};
	static const struct {
		const uint8_t *buf;
		size_t len, off;
		unsigned trbv, mult, ip, icntv, icnt;
	} want[] = {
		{trig, sizeof(trig), 0x14, 0x01, 0, 0, 0, 0},
		{trig, sizeof(trig), 0x1e, 0x02, 0, 0, 0, 0},
		{trig, sizeof(trig), 0x22, 0x03, 1, 0, 0, 0},
		{trig, sizeof(trig), 0x2a, 0x04, 0, 0, 0, 0},
		{trig, sizeof(trig), 0x2d, 0x05, 1, 0, 0, 0},
		{trig, sizeof(trig), 0x38, 0x06, 0, 0, 0, 0},
		{trig, sizeof(trig), 0x3b, 0x07, 1, 0, 0, 0},
		{trig_fup, sizeof(trig_fup), 0x1c, 0x1a, 0, 1, 1, 0},
		{trig_fup, sizeof(trig_fup), 0x29, 0xa1, 0, 1, 1, 0},
		{trig_fup, sizeof(trig_fup), 0x31, 0xa2, 0, 1, 1, 0},
		{mode_trig, sizeof(mode_trig), 0x20, 0xa1, 0, 0, 1, 0},
		{mode_trig, sizeof(mode_trig), 0x25, 0xa2, 0, 0, 1, 1},
		{mode_trig, sizeof(mode_trig), 0x2a, 0xa3, 0, 0, 1, 0},
		{mode_trig, sizeof(mode_trig), 0x2f, 0xa4, 0, 0, 1, 2},
	};
	const uint8_t *bufs[] = {trig, trig_fup, mode_trig};
	const size_t lens[] = {sizeof(trig), sizeof(trig_fup),
			       sizeof(mode_trig)};
	struct pkt p = {0};
	size_t k;

	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		pkt_parse(want[k].buf, want[k].len, want[k].off, 0, &p);
		CHECK_INT(p.type, ==, PKT_TRIG);
		CHECK_INT(p.size, ==, want[k].icntv ? 5 : 3);
		CHECK_INT(p.payload & 0xff, ==, want[k].trbv);
		CHECK_INT((p.nbits >> 5) & 1, ==, want[k].mult);
		CHECK_INT(p.ipc, ==, want[k].ip);
		CHECK_INT((p.nbits >> 6) & 1, ==, want[k].icntv);
		CHECK_INT(p.payload >> 8, ==, want[k].icnt);
		/* cut short: the decode stops there */
		pkt_parse(want[k].buf, want[k].off + p.size - 1, want[k].off, 0,
			  &p);
		CHECK_INT(p.type, ==, PKT_END);
	}
	for (k = 0; k < 3; k++) {
		size_t i = 0, n = 0;

		while (i < lens[k]) {
			pkt_parse(bufs[k], lens[k], i, 0, &p);
			CHECK(p.type != PKT_OTHER && p.type != PKT_BAD &&
			      p.type != PKT_END);
			if (p.type == PKT_OTHER || p.type == PKT_BAD ||
			    p.type == PKT_END)
				break;
			n += p.type == PKT_TRIG;
			i += p.size;
		}
		CHECK_INT(i, ==, lens[k]);
		CHECK_INT(n, ==, k == 0 ? 7 : k == 1 ? 3 : 4);
	}
}

RUN_TESTS("test_decoder_packet")
