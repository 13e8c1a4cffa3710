/* SPDX-License-Identifier: MIT */
/*
 * decoder/insn_len.c - x86 instruction length (64-, 32- and 16-bit code),
 * for the bytes Capstone 4 cannot decode (CET rdssp, some AVX-512 forms,
 * newer extensions).
 *
 * It knows the structure of an instruction, not its meaning: legacy
 * prefixes, REX, VEX2/VEX3/EVEX/XOP, the opcode maps, ModRM, SIB,
 * displacement and immediate sizes. Branches are all in the classic maps
 * and Capstone decodes them, so nothing measured here is a branch: where
 * Capstone rejects a branch's opcode, the form is invalid (a LOCK prefix:
 * #UD; far CALL and JMP with a pointer in 64-bit code), which
 * strace_insn_branch_form() tells the block decoder, for it to call the
 * bytes bad.
 */
#include "decoder/internal.h"

/* 1-byte map: bit set = has ModRM. */
static const uint8_t modrm1[256 / 8] = {
	/* 00-3f: x0-x3 and x8-xb of each row */
	0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f,
	/* 40-5f: none; 60-67: 62,63; 68-6f: 69,6b */
	0x00, 0x00, 0x00, 0x00, 0x0c, 0x0a,
	/* 70-7f: none; 80-8f: all */
	0x00, 0x00, 0xff, 0xff,
	/* 90-bf: none */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* c0-c7: c0 c1 c4 c5 c6 c7; c8-cf: none */
	0xf3, 0x00,
	/* d0-d7: d0-d3; d8-df: all (x87) */
	0x0f, 0xff,
	/* e0-ef: none; f0-f7: f6 f7; f8-ff: fe ff */
	0x00, 0x00, 0xc0, 0xc0,
};

static int has_modrm1(uint8_t op)
{
	return (modrm1[op >> 3] >> (op & 7)) & 1;
}

/* 0F map: opcodes without ModRM. */
static int no_modrm2(uint8_t op)
{
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x0e: case 0x30: case 0x31: case 0x32: case 0x33: case 0x34:
	case 0x35: case 0x37: case 0x77: case 0xa0: case 0xa1: case 0xa2:
	case 0xa8: case 0xa9: case 0xaa:
		return 1;
	}
	return (op >= 0x80 && op <= 0x8f) || (op >= 0xc8 && op <= 0xcf);
}

static int imm2(uint8_t op)
{
	switch (op) {
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac:
	case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6: case 0x0f:
		return 1;
	}
	return 0;
}

/* Length of ModRM + SIB + displacement at p (p[0] is ModRM), or -1;
 * addr16: 16-bit addressing (no SIB, 16-bit displacements). */
static int modrm_len(const uint8_t *p, size_t avail, int addr16)
{
	uint8_t m, mod, rm;
	int n = 1;

	if (avail < 1)
		return -1;
	m = p[0];
	mod = m >> 6;
	rm = m & 7;
	if (mod == 3)
		return 1;
	if (addr16)
		return mod == 1 ? 2 : (mod == 2 || rm == 6) ? 3 : 1;
	if (rm == 4) {
		if (avail < 2)
			return -1;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4; /* rip-relative */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

/* A legacy prefix: operand and address size, REP/REPNE, LOCK and the
 * segment overrides. */
static int legacy_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0xf0 ||
	       b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 ||
	       b == 0x65;
}

int strace_insn_branch_form(const uint8_t *code, size_t len, unsigned mode)
{
	size_t i = 0;
	uint8_t op;

	while (i < len && legacy_prefix(code[i]))
		i++;
	if (mode == STRACE_MODE_64 && i < len && (code[i] & 0xf0) == 0x40)
		i++; /* REX */
	if (i >= len)
		return 0;
	op = code[i++];
	if (op == 0x0f) /* Jcc rel16/32; SYSCALL, SYSRET, SYSENTER, SYSEXIT */
		return i < len && ((code[i] & 0xf0) == 0x80 || code[i] == 0x05 ||
				   code[i] == 0x07 || code[i] == 0x34 ||
				   code[i] == 0x35);
	if (op == 0xff) /* CALL, far CALL, JMP, far JMP through ModRM */
		return i < len && ((code[i] >> 3) & 7) >= 2 &&
		       ((code[i] >> 3) & 7) <= 5;
	/* Jcc rel8; LOOPcc and JCXZ; CALL and JMP rel; far CALL and JMP
	 * with a pointer; RET, far RET, INT3, INT, INTO, IRET */
	return (op & 0xf0) == 0x70 || (op >= 0xe0 && op <= 0xe3) ||
	       op == 0xe8 || op == 0xe9 || op == 0xeb || op == 0x9a ||
	       op == 0xea || op == 0xc2 || op == 0xc3 ||
	       (op >= 0xca && op <= 0xcf);
}

int strace_insn_length(const uint8_t *code, size_t avail)
{
	return strace_insn_length_mode(code, avail, STRACE_MODE_64);
}

/* The length of the VEX, EVEX or XOP instruction whose escape byte (C5,
 * C4, 62, 8F) is at code[i] (avail bytes at code). Returns it, or -1. */
static int vex_len(const uint8_t *code, size_t i, size_t avail, int addr16)
{
	uint8_t op = code[i], opc;
	int len, map, imm = 0;

	if (op == 0xc5) {
		map = 1;
		i += 2;
	} else if (op == 0x62) {
		if (i + 3 >= avail)
			return -1;
		map = code[i + 1] & 7;
		i += 4;
	} else {
		if (i + 2 >= avail)
			return -1;
		map = code[i + 1] & 0x1f;
		if (op == 0x8f)
			map = -map; /* XOP maps 8, 9, 10 */
		i += 3;
	}
	if (i >= avail)
		return -1;
	opc = code[i++];
	if (map == 1 && opc == 0x77 && op != 0x62)
		return (int)i; /* vzeroupper / vzeroall */
	len = modrm_len(code + i, avail - i, addr16);
	if (len < 0)
		return -1;
	i += (size_t)len;
	if (map == 3 || map == -8)
		imm = 1;
	else if (map == -10)
		imm = 4;
	else if (map == 1 && ((opc >= 0x70 && opc <= 0x73) ||
			      opc == 0xc2 || opc == 0xc4 ||
			      opc == 0xc5 || opc == 0xc6))
		imm = 1;
	else if (map != 1 && map != 2 && map != 5 && map != 6 &&
		 map != -9 && map != 3)
		return -1;
	i += (size_t)imm;
	return i <= avail ? (int)i : -1;
}

int strace_insn_length_mode(const uint8_t *code, size_t avail, unsigned mode)
{
	size_t i = 0;
	int opsize16 = 0, asize = 0, rexw = 0, rep = 0;
	int m64 = mode == STRACE_MODE_64, m16 = mode == STRACE_MODE_16;
	uint8_t op;
	int len, imm = 0, modrm = 0, addr16, osz;

	if (avail > 15)
		avail = 15;
	/* legacy prefixes */
	for (; i < avail; i++) {
		uint8_t b = code[i];
		if (b == 0x66)
			opsize16 = 1;
		else if (b == 0x67)
			asize = 1;
		else if (b == 0xf2 || b == 0xf3)
			rep = b;
		else if (!legacy_prefix(b))
			break;
	}
	(void)rep;
	if (i >= avail)
		return -1;
	/* the address and operand size the prefixes leave */
	addr16 = !m64 && (m16 ^ asize);
	osz = (m16 ^ opsize16) ? 2 : 4;
	if (m64 && (code[i] & 0xf0) == 0x40) {
		rexw = (code[i] >> 3) & 1;
		if (++i >= avail)
			return -1;
	}
	op = code[i];

	/* VEX, EVEX, XOP */
	if (((op == 0xc5 || op == 0xc4 || op == 0x62) &&
	     (m64 || (i + 1 < avail && code[i + 1] >= 0xc0))) ||
	    (op == 0x8f && i + 1 < avail && (code[i + 1] & 0x1f) >= 8)) {
		/* (outside 64-bit code, C4 C5 62 with a memory ModRM are
		 * LES LDS BOUND) */
		return vex_len(code, i, avail, addr16);
	}

	i++;
	if (op == 0x0f) {
		if (i >= avail)
			return -1;
		op = code[i++];
		if (op == 0x38) {
			if (i >= avail)
				return -1;
			i++;
			modrm = 1;
		} else if (op == 0x3a) {
			if (i >= avail)
				return -1;
			i++;
			modrm = 1;
			imm = 1;
		} else {
			modrm = !no_modrm2(op);
			if (imm2(op))
				imm = 1;
			if (op >= 0x80 && op <= 0x8f)
				imm = m64 ? 4 : osz;
		}
	} else {
		switch (op) {
		case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17:
		case 0x1e: case 0x1f: case 0x27: case 0x2f: case 0x37:
		case 0x3f: case 0x60: case 0x61: case 0x82: case 0x9a:
		case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
			if (m64)
				return -1; /* invalid in 64-bit mode */
			if (op == 0x9a || op == 0xea)
				/* far call, jmp: ptr16:16 or ptr16:32 */
				return i + (size_t)osz + 2 <= avail
					       ? (int)(i + (size_t)osz + 2)
					       : -1;
			if (op == 0x82) { /* group 1, Eb, Ib */
				modrm = 1;
				imm = 1;
			} else if (op == 0xd4 || op == 0xd5) {
				imm = 1;
			}
			goto tail;
		}
		modrm = has_modrm1(op);
		if (op < 0x40 && (op & 7) == 4)
			imm = 1;
		else if (op < 0x40 && (op & 7) == 5)
			imm = osz;
		else if (op == 0x68 || op == 0x69 || op == 0x81 || op == 0xa9 ||
			 op == 0xc7 || op == 0xe8 || op == 0xe9)
			imm = (m64 && (op == 0xe8 || op == 0xe9)) ? 4 : osz;
		else if (op == 0x6a || op == 0x6b || op == 0x80 || op == 0x83 ||
			 op == 0xa8 || (op >= 0x70 && op <= 0x7f) ||
			 (op >= 0xb0 && op <= 0xb7) || op == 0xc0 ||
			 op == 0xc1 || op == 0xc6 || op == 0xcd ||
			 (op >= 0xe0 && op <= 0xe7) || op == 0xeb)
			imm = 1;
		else if (op >= 0xb8 && op <= 0xbf)
			imm = rexw ? 8 : osz;
		else if (op == 0xc2 || op == 0xca)
			imm = 2;
		else if (op == 0xc8)
			imm = 3;
		else if (op >= 0xa0 && op <= 0xa3) /* moffs */
			imm = m64 ? (asize ? 4 : 8) : addr16 ? 2 : 4;
		else if ((op == 0xf6 || op == 0xf7) && i < avail &&
			 ((code[i] >> 3) & 7) < 2)
			imm = op == 0xf6 ? 1 : osz;
	}
tail:
	if (modrm) {
		len = modrm_len(code + i, avail - i, addr16);
		if (len < 0)
			return -1;
		i += (size_t)len;
	}
	i += (size_t)imm;
	return i <= avail ? (int)i : -1;
}
