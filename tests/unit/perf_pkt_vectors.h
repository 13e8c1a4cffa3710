/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/unit/perf_pkt_vectors.h - perf's test vectors for its Intel PT
 * packet decoder, as data: every row of the table `data[]` in the Linux
 * kernel's tools/perf/arch/x86/tests/intel-pt-pkt-decoder-test.c
 * (formerly tools/perf/tests/intel-pt-pkt-decoder-test.c; GPL-2.0, by
 * Intel), as of the version with the MODE.Exec IF bit, Event Trace (CFE,
 * EVD) and PEBS-via-PT (BBP, BIP, BEP) rows. The bytes and the expected
 * fields are perf's, in perf's terms: only the names are ours (PV_*
 * for perf's INTEL_PT_*). This file is data under perf's licence; the
 * test that reads it (test_decoder_packet.c) is the project's.
 *
 * A row: the bytes to decode (len of them; bytes not given are 0), the
 * packet context before (PV_NO_CTX, or inside a block whose BIPs have 4
 * or 8 bytes), the packet perf expects (kind, count, payload), the
 * context perf expects after, and whether the packet must leave every
 * context as it was.
 *
 * perf's fields: count is the IP compression of IP packets, the number
 * of bits of a TNT (payload: the bits from bit 63 down), the byte count
 * of VMCS, the payload size code of PTW, FC of TMA, the mode byte of
 * MODE.Exec, the type of BBP (payload: its size bit) ... see the test.
 */
#ifndef TESTS_UNIT_PERF_PKT_VECTORS_H
#define TESTS_UNIT_PERF_PKT_VECTORS_H

#include <stdint.h>

enum pv_kind {
	PV_BAD, PV_PAD, PV_TNT, PV_TIP_PGD, PV_TIP_PGE, PV_TSC, PV_TMA,
	PV_MODE_EXEC, PV_MODE_TSX, PV_MTC, PV_TIP, PV_FUP, PV_CYC, PV_VMCS,
	PV_PSB, PV_PSBEND, PV_CBR, PV_TRACESTOP, PV_PIP, PV_OVF, PV_MNT,
	PV_PTWRITE, PV_PTWRITE_IP, PV_EXSTOP, PV_EXSTOP_IP, PV_MWAIT,
	PV_PWRE, PV_PWRX, PV_BBP, PV_BIP, PV_BEP, PV_BEP_IP, PV_CFE,
	PV_CFE_IP, PV_EVD,
};

/* perf's packet contexts, as our block state: the BIP payload size */
#define PV_NO_CTX 0
#define PV_BLK_4_CTX 4
#define PV_BLK_8_CTX 8

struct pv_row {
	int len;
	uint8_t bytes[16];
	int ctx;
	struct {
		enum pv_kind type;
		int count;
		uint64_t payload;
	} packet;
	int new_ctx;
	int ctx_unchanged;
};

static const struct pv_row pv_rows[] = {
	/* Padding Packet */
	{1, {0}, 0, {PV_PAD, 0, 0}, 0, 1 },
	/* Short Taken/Not Taken Packet */
	{1, {4}, 0, {PV_TNT, 1, 0}, 0, 0 },
	{1, {6}, 0, {PV_TNT, 1, 0x20ULL << 58}, 0, 0 },
	{1, {0x80}, 0, {PV_TNT, 6, 0}, 0, 0 },
	{1, {0xfe}, 0, {PV_TNT, 6, 0x3fULL << 58}, 0, 0 },
	/* Long Taken/Not Taken Packet */
	{8, {0x02, 0xa3, 2}, 0, {PV_TNT, 1, 0xa302ULL << 47}, 0, 0 },
	{8, {0x02, 0xa3, 3}, 0, {PV_TNT, 1, 0x1a302ULL << 47}, 0, 0 },
	{8, {0x02, 0xa3, 0, 0, 0, 0, 0, 0x80}, 0, {PV_TNT, 47, 0xa302ULL << 1}, 0, 0 },
	{8, {0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0, {PV_TNT, 47, 0xffffffffffffa302ULL << 1}, 0, 0 },
	/* Target IP Packet */
	{1, {0x0d}, 0, {PV_TIP, 0, 0}, 0, 0 },
	{3, {0x2d, 1, 2}, 0, {PV_TIP, 1, 0x201}, 0, 0 },
	{5, {0x4d, 1, 2, 3, 4}, 0, {PV_TIP, 2, 0x4030201}, 0, 0 },
	{7, {0x6d, 1, 2, 3, 4, 5, 6}, 0, {PV_TIP, 3, 0x60504030201}, 0, 0 },
	{7, {0x8d, 1, 2, 3, 4, 5, 6}, 0, {PV_TIP, 4, 0x60504030201}, 0, 0 },
	{9, {0xcd, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_TIP, 6, 0x807060504030201}, 0, 0 },
	/* Packet Generation Enable */
	{1, {0x11}, 0, {PV_TIP_PGE, 0, 0}, 0, 0 },
	{3, {0x31, 1, 2}, 0, {PV_TIP_PGE, 1, 0x201}, 0, 0 },
	{5, {0x51, 1, 2, 3, 4}, 0, {PV_TIP_PGE, 2, 0x4030201}, 0, 0 },
	{7, {0x71, 1, 2, 3, 4, 5, 6}, 0, {PV_TIP_PGE, 3, 0x60504030201}, 0, 0 },
	{7, {0x91, 1, 2, 3, 4, 5, 6}, 0, {PV_TIP_PGE, 4, 0x60504030201}, 0, 0 },
	{9, {0xd1, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_TIP_PGE, 6, 0x807060504030201}, 0, 0 },
	/* Packet Generation Disable */
	{1, {0x01}, 0, {PV_TIP_PGD, 0, 0}, 0, 0 },
	{3, {0x21, 1, 2}, 0, {PV_TIP_PGD, 1, 0x201}, 0, 0 },
	{5, {0x41, 1, 2, 3, 4}, 0, {PV_TIP_PGD, 2, 0x4030201}, 0, 0 },
	{7, {0x61, 1, 2, 3, 4, 5, 6}, 0, {PV_TIP_PGD, 3, 0x60504030201}, 0, 0 },
	{7, {0x81, 1, 2, 3, 4, 5, 6}, 0, {PV_TIP_PGD, 4, 0x60504030201}, 0, 0 },
	{9, {0xc1, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_TIP_PGD, 6, 0x807060504030201}, 0, 0 },
	/* Flow Update Packet */
	{1, {0x1d}, 0, {PV_FUP, 0, 0}, 0, 0 },
	{3, {0x3d, 1, 2}, 0, {PV_FUP, 1, 0x201}, 0, 0 },
	{5, {0x5d, 1, 2, 3, 4}, 0, {PV_FUP, 2, 0x4030201}, 0, 0 },
	{7, {0x7d, 1, 2, 3, 4, 5, 6}, 0, {PV_FUP, 3, 0x60504030201}, 0, 0 },
	{7, {0x9d, 1, 2, 3, 4, 5, 6}, 0, {PV_FUP, 4, 0x60504030201}, 0, 0 },
	{9, {0xdd, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_FUP, 6, 0x807060504030201}, 0, 0 },
	/* Paging Information Packet */
	{8, {0x02, 0x43, 2, 4, 6, 8, 10, 12}, 0, {PV_PIP, 0, 0xC0A08060402}, 0, 0 },
	{8, {0x02, 0x43, 3, 4, 6, 8, 10, 12}, 0, {PV_PIP, 0, 0xC0A08060403}, 0, 0 },
	/* Mode Exec Packet */
	{2, {0x99, 0x00}, 0, {PV_MODE_EXEC, 0, 16}, 0, 0 },
	{2, {0x99, 0x01}, 0, {PV_MODE_EXEC, 1, 64}, 0, 0 },
	{2, {0x99, 0x02}, 0, {PV_MODE_EXEC, 2, 32}, 0, 0 },
	{2, {0x99, 0x04}, 0, {PV_MODE_EXEC, 4, 16}, 0, 0 },
	{2, {0x99, 0x05}, 0, {PV_MODE_EXEC, 5, 64}, 0, 0 },
	{2, {0x99, 0x06}, 0, {PV_MODE_EXEC, 6, 32}, 0, 0 },
	/* Mode TSX Packet */
	{2, {0x99, 0x20}, 0, {PV_MODE_TSX, 0, 0}, 0, 0 },
	{2, {0x99, 0x21}, 0, {PV_MODE_TSX, 0, 1}, 0, 0 },
	{2, {0x99, 0x22}, 0, {PV_MODE_TSX, 0, 2}, 0, 0 },
	/* Trace Stop Packet */
	{2, {0x02, 0x83}, 0, {PV_TRACESTOP, 0, 0}, 0, 0 },
	/* Core:Bus Ratio Packet */
	{4, {0x02, 0x03, 0x12, 0}, 0, {PV_CBR, 0, 0x12}, 0, 1 },
	/* Timestamp Counter Packet */
	{8, {0x19, 1, 2, 3, 4, 5, 6, 7}, 0, {PV_TSC, 0, 0x7060504030201}, 0, 1 },
	/* Mini Time Counter Packet */
	{2, {0x59, 0x12}, 0, {PV_MTC, 0, 0x12}, 0, 1 },
	/* TSC / MTC Alignment Packet */
	{7, {0x02, 0x73}, 0, {PV_TMA, 0, 0}, 0, 1 },
	{7, {0x02, 0x73, 1, 2}, 0, {PV_TMA, 0, 0x201}, 0, 1 },
	{7, {0x02, 0x73, 0, 0, 0, 0xff, 1}, 0, {PV_TMA, 0x1ff, 0}, 0, 1 },
	{7, {0x02, 0x73, 0x80, 0xc0, 0, 0xff, 1}, 0, {PV_TMA, 0x1ff, 0xc080}, 0, 1 },
	/* Cycle Count Packet */
	{1, {0x03}, 0, {PV_CYC, 0, 0}, 0, 1 },
	{1, {0x0b}, 0, {PV_CYC, 0, 1}, 0, 1 },
	{1, {0xfb}, 0, {PV_CYC, 0, 0x1f}, 0, 1 },
	{2, {0x07, 2}, 0, {PV_CYC, 0, 0x20}, 0, 1 },
	{2, {0xff, 0xfe}, 0, {PV_CYC, 0, 0xfff}, 0, 1 },
	{3, {0x07, 1, 2}, 0, {PV_CYC, 0, 0x1000}, 0, 1 },
	{3, {0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0x7ffff}, 0, 1 },
	{4, {0x07, 1, 1, 2}, 0, {PV_CYC, 0, 0x80000}, 0, 1 },
	{4, {0xff, 0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0x3ffffff}, 0, 1 },
	{5, {0x07, 1, 1, 1, 2}, 0, {PV_CYC, 0, 0x4000000}, 0, 1 },
	{5, {0xff, 0xff, 0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0x1ffffffff}, 0, 1 },
	{6, {0x07, 1, 1, 1, 1, 2}, 0, {PV_CYC, 0, 0x200000000}, 0, 1 },
	{6, {0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0xffffffffff}, 0, 1 },
	{7, {0x07, 1, 1, 1, 1, 1, 2}, 0, {PV_CYC, 0, 0x10000000000}, 0, 1 },
	{7, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0x7fffffffffff}, 0, 1 },
	{8, {0x07, 1, 1, 1, 1, 1, 1, 2}, 0, {PV_CYC, 0, 0x800000000000}, 0, 1 },
	{8, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0x3fffffffffffff}, 0, 1 },
	{9, {0x07, 1, 1, 1, 1, 1, 1, 1, 2}, 0, {PV_CYC, 0, 0x40000000000000}, 0, 1 },
	{9, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 0, {PV_CYC, 0, 0x1fffffffffffffff}, 0, 1 },
	{10, {0x07, 1, 1, 1, 1, 1, 1, 1, 1, 2}, 0, {PV_CYC, 0, 0x2000000000000000}, 0, 1 },
	{10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xe}, 0, {PV_CYC, 0, 0xffffffffffffffff}, 0, 1 },
	/* Virtual-Machine Control Structure Packet */
	{7, {0x02, 0xc8, 1, 2, 3, 4, 5}, 0, {PV_VMCS, 5, 0x504030201}, 0, 0 },
	/* Overflow Packet */
	{2, {0x02, 0xf3}, 0, {PV_OVF, 0, 0}, 0, 0 },
	{2, {0x02, 0xf3}, PV_BLK_4_CTX, {PV_OVF, 0, 0}, 0, 0 },
	{2, {0x02, 0xf3}, PV_BLK_8_CTX, {PV_OVF, 0, 0}, 0, 0 },
	/* Packet Stream Boundary*/
	{16, {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82}, 0, {PV_PSB, 0, 0}, 0, 0 },
	{16, {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82}, PV_BLK_4_CTX, {PV_PSB, 0, 0}, 0, 0 },
	{16, {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82}, PV_BLK_8_CTX, {PV_PSB, 0, 0}, 0, 0 },
	/* PSB End Packet */
	{2, {0x02, 0x23}, 0, {PV_PSBEND, 0, 0}, 0, 0 },
	/* Maintenance Packet */
	{11, {0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7}, 0, {PV_MNT, 0, 0x7060504030201}, 0, 1 },
	/* Write Data to PT Packet */
	{6, {0x02, 0x12, 1, 2, 3, 4}, 0, {PV_PTWRITE, 0, 0x4030201}, 0, 0 },
	{10, {0x02, 0x32, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_PTWRITE, 1, 0x807060504030201}, 0, 0 },
	{6, {0x02, 0x92, 1, 2, 3, 4}, 0, {PV_PTWRITE_IP, 0, 0x4030201}, 0, 0 },
	{10, {0x02, 0xb2, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_PTWRITE_IP, 1, 0x807060504030201}, 0, 0 },
	/* Execution Stop Packet */
	{2, {0x02, 0x62}, 0, {PV_EXSTOP, 0, 0}, 0, 1 },
	{2, {0x02, 0xe2}, 0, {PV_EXSTOP_IP, 0, 0}, 0, 1 },
	/* Monitor Wait Packet */
	{10, {0x02, 0xc2}, 0, {PV_MWAIT, 0, 0}, 0, 0 },
	{10, {0x02, 0xc2, 1, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_MWAIT, 0, 0x807060504030201}, 0, 0 },
	{10, {0x02, 0xc2, 0xff, 2, 3, 4, 7, 6, 7, 8}, 0, {PV_MWAIT, 0, 0x8070607040302ff}, 0, 0 },
	/* Power Entry Packet */
	{4, {0x02, 0x22}, 0, {PV_PWRE, 0, 0}, 0, 1 },
	{4, {0x02, 0x22, 1, 2}, 0, {PV_PWRE, 0, 0x0201}, 0, 1 },
	{4, {0x02, 0x22, 0x80, 0x34}, 0, {PV_PWRE, 0, 0x3480}, 0, 1 },
	{4, {0x02, 0x22, 0x00, 0x56}, 0, {PV_PWRE, 0, 0x5600}, 0, 1 },
	/* Power Exit Packet */
	{7, {0x02, 0xa2}, 0, {PV_PWRX, 0, 0}, 0, 1 },
	{7, {0x02, 0xa2, 1, 2, 3, 4, 5}, 0, {PV_PWRX, 0, 0x504030201}, 0, 1 },
	{7, {0x02, 0xa2, 0xff, 0xff, 0xff, 0xff, 0xff}, 0, {PV_PWRX, 0, 0xffffffffff}, 0, 1 },
	/* Block Begin Packet */
	{3, {0x02, 0x63, 0x00}, 0, {PV_BBP, 0, 0}, PV_BLK_8_CTX, 0 },
	{3, {0x02, 0x63, 0x80}, 0, {PV_BBP, 1, 0}, PV_BLK_4_CTX, 0 },
	{3, {0x02, 0x63, 0x1f}, 0, {PV_BBP, 0, 0x1f}, PV_BLK_8_CTX, 0 },
	{3, {0x02, 0x63, 0x9f}, 0, {PV_BBP, 1, 0x1f}, PV_BLK_4_CTX, 0 },
	/* 4-byte Block Item Packet */
	{5, {0x04}, PV_BLK_4_CTX, {PV_BIP, 0, 0}, PV_BLK_4_CTX, 0 },
	{5, {0xfc}, PV_BLK_4_CTX, {PV_BIP, 0x1f, 0}, PV_BLK_4_CTX, 0 },
	{5, {0x04, 1, 2, 3, 4}, PV_BLK_4_CTX, {PV_BIP, 0, 0x04030201}, PV_BLK_4_CTX, 0 },
	{5, {0xfc, 1, 2, 3, 4}, PV_BLK_4_CTX, {PV_BIP, 0x1f, 0x04030201}, PV_BLK_4_CTX, 0 },
	/* 8-byte Block Item Packet */
	{9, {0x04}, PV_BLK_8_CTX, {PV_BIP, 0, 0}, PV_BLK_8_CTX, 0 },
	{9, {0xfc}, PV_BLK_8_CTX, {PV_BIP, 0x1f, 0}, PV_BLK_8_CTX, 0 },
	{9, {0x04, 1, 2, 3, 4, 5, 6, 7, 8}, PV_BLK_8_CTX, {PV_BIP, 0, 0x0807060504030201}, PV_BLK_8_CTX, 0 },
	{9, {0xfc, 1, 2, 3, 4, 5, 6, 7, 8}, PV_BLK_8_CTX, {PV_BIP, 0x1f, 0x0807060504030201}, PV_BLK_8_CTX, 0 },
	/* Block End Packet */
	{2, {0x02, 0x33}, PV_BLK_4_CTX, {PV_BEP, 0, 0}, 0, 0 },
	{2, {0x02, 0xb3}, PV_BLK_4_CTX, {PV_BEP_IP, 0, 0}, 0, 0 },
	{2, {0x02, 0x33}, PV_BLK_8_CTX, {PV_BEP, 0, 0}, 0, 0 },
	{2, {0x02, 0xb3}, PV_BLK_8_CTX, {PV_BEP_IP, 0, 0}, 0, 0 },
	/* Control Flow Event Packet */
	{4, {0x02, 0x13, 0x01, 0x03}, 0, {PV_CFE, 1, 3}, 0, 0 },
	{4, {0x02, 0x13, 0x81, 0x03}, 0, {PV_CFE_IP, 1, 3}, 0, 0 },
	{4, {0x02, 0x13, 0x1f, 0x00}, 0, {PV_CFE, 0x1f, 0}, 0, 0 },
	{4, {0x02, 0x13, 0x9f, 0xff}, 0, {PV_CFE_IP, 0x1f, 0xff}, 0, 0 },
	/* Event Data Packet */
	{11, {0x02, 0x53, 0x09, 1, 2, 3, 4, 5, 6, 7}, 0, {PV_EVD, 0x09, 0x7060504030201}, 0, 0 },
	{11, {0x02, 0x53, 0x3f, 2, 3, 4, 5, 6, 7, 8}, 0, {PV_EVD, 0x3f, 0x8070605040302}, 0, 0 },
};

#endif
