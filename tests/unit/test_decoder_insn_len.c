/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_insn_len.c - the x86 instruction length decoder
 * (decoder/insn_len.c, strace_insn_length() in decoder.h) alone, on
 * bytes, without an image.
 *
 * The oracle: objdump's instruction boundaries over a real binary's
 * .text (/bin/ls, and /bin/bash when there), run at test time: each
 * line of `objdump -d -w -z` holds one instruction's bytes, so the
 * section's bytes are their concatenation and each length is a line's
 * byte count. Then fixed answers for each encoding (legacy prefixes,
 * REX, VEX, EVEX, immediates by operand size, 32- and 16-bit code), and
 * what it must refuse: bytes cut short, more than 15 bytes of prefixes,
 * opcodes that are no instruction.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "decoder/decoder.h"

struct insn {
	size_t off;
	unsigned len;
	int bad; /* objdump: (bad) or a data-ish line */
};

/* the .text of path by objdump's lines: bytes in *code, instructions in
 * *ins. Returns their count, 0 when objdump is not there. */
static size_t objdump_text(const char *path, uint8_t **code, size_t *ncode,
			   struct insn **ins)
{
	char cmd[600], line[1024];
	size_t n = 0, cap = 1 << 16, bcap = 1 << 20;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d -w -z --section=.text %s 2>/dev/null", path);
	if (access(path, R_OK) || !(f = popen(cmd, "r")))
		return 0;
	*code = malloc(bcap);
	*ins = malloc(cap * sizeof(**ins));
	*ncode = 0;
	while (*code && *ins && fgets(line, sizeof(line), f)) {
		char *p = line, *tab;
		unsigned len = 0;

		/* "    46b1:\te8 da f9 ff ff       \tcall   4090 <...>" */
		while (*p == ' ')
			p++;
		if (!isxdigit((unsigned char)*p))
			continue;
		while (isxdigit((unsigned char)*p))
			p++;
		if (p[0] != ':' || p[1] != '\t')
			continue;
		p += 2;
		tab = strchr(p, '\t');
		if (n == cap)
			*ins = realloc(*ins, (cap *= 2) * sizeof(**ins));
		if (*ncode + 16 > bcap)
			*code = realloc(*code, bcap *= 2);
		if (!*ins || !*code)
			break;
		(*ins)[n].off = *ncode;
		while (isxdigit((unsigned char)p[0]) &&
		       isxdigit((unsigned char)p[1])) {
			(*code)[(*ncode)++] = (uint8_t)strtoul(
				(char[]){p[0], p[1], 0}, NULL, 16);
			len++;
			p += 2;
			while (*p == ' ')
				p++;
		}
		(*ins)[n].len = len;
		(*ins)[n].bad = !tab || strstr(tab, "(bad)") ||
				!strncmp(tab + 1, ".byte", 5) || len > 15;
		n++;
	}
	pclose(f);
	return *code && *ins ? n : 0;
}

static void against_objdump(const char *path, size_t want_min)
{
	uint8_t *code = NULL;
	struct insn *ins = NULL;
	size_t ncode = 0, n, checked = 0, wrong = 0;

	n = objdump_text(path, &code, &ncode, &ins);
	if (!n) {
		free(code);
		free(ins);
		th_skip_reason = "no objdump or no such binary";
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int len;

		if (ins[i].bad || (i && ins[i - 1].bad))
			continue;
		len = strace_insn_length(code + ins[i].off,
					 ncode - ins[i].off);
		checked++;
		if (len != (int)ins[i].len && wrong++ < 5) {
			fprintf(stderr, "  %s +%zx: length %d, objdump %u:",
				path, ins[i].off, len, ins[i].len);
			for (unsigned k = 0; k < ins[i].len; k++)
				fprintf(stderr, " %02x", code[ins[i].off + k]);
			fprintf(stderr, "\n");
		}
		/* the instruction's own bytes are enough */
		if (len == (int)ins[i].len)
			wrong += strace_insn_length(code + ins[i].off,
						    ins[i].len) != len;
	}
	printf("  %s: %zu instructions measured against objdump\n", path,
	       checked);
	CHECK_U64(checked, >=, want_min);
	CHECK_U64(wrong, ==, 0);
	free(code);
	free(ins);
}

TEST(ls_against_objdump)
{
	against_objdump("/bin/ls", 10000);
}

TEST(bash_against_objdump)
{
	against_objdump("/bin/bash", 50000);
}

#define LEN(...)                                                               \
	strace_insn_length((const uint8_t[]){__VA_ARGS__},                     \
			   sizeof((const uint8_t[]){__VA_ARGS__}))
#define LEN_MODE(mode, ...)                                                    \
	strace_insn_length_mode((const uint8_t[]){__VA_ARGS__},                \
				sizeof((const uint8_t[]){__VA_ARGS__}), mode)

/* Each encoding's length, as the SDM gives it. */
TEST(fixed_64)
{
	CHECK_INT(LEN(0x90), ==, 1);                         /* nop */
	CHECK_INT(LEN(0xc3), ==, 1);                         /* ret */
	CHECK_INT(LEN(0xe8, 1, 2, 3, 4), ==, 5);             /* call rel32 */
	CHECK_INT(LEN(0xeb, 0xfe), ==, 2);                   /* jmp rel8 */
	CHECK_INT(LEN(0x0f, 0x84, 1, 2, 3, 4), ==, 6);       /* je rel32 */
	CHECK_INT(LEN(0x48, 0x89, 0xe5), ==, 3);             /* mov rbp,rsp */
	/* mov rax, imm64: REX.W B8 */
	CHECK_INT(LEN(0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8), ==, 10);
	/* without REX.W, B8 takes imm32; 66 makes it imm16 */
	CHECK_INT(LEN(0xb8, 1, 2, 3, 4), ==, 5);
	CHECK_INT(LEN(0x66, 0xb8, 1, 2), ==, 4);
	/* 67 does not change an immediate; 66 does */
	CHECK_INT(LEN(0x66, 0x05, 1, 2), ==, 4); /* add ax, imm16 */
	CHECK_INT(LEN(0x05, 1, 2, 3, 4), ==, 5); /* add eax, imm32 */
	/* ModRM with SIB and disp32: mov eax, [rax + rbx*4 + disp32] */
	CHECK_INT(LEN(0x8b, 0x84, 0x98, 1, 2, 3, 4), ==, 7);
	/* RIP-relative: lea rdi, [rip + disp32] */
	CHECK_INT(LEN(0x48, 0x8d, 0x3d, 1, 2, 3, 4), ==, 7);
	/* SIB base 101 with mod 00: disp32, no base */
	CHECK_INT(LEN(0x8b, 0x04, 0x25, 1, 2, 3, 4), ==, 7);
	/* F6 /0 takes an imm8 (test), F6 /2 none (not) */
	CHECK_INT(LEN(0xf6, 0xc0, 0x01), ==, 3);
	CHECK_INT(LEN(0xf6, 0xd0), ==, 2);
	/* F7 /0 imm32 */
	CHECK_INT(LEN(0xf7, 0xc0, 1, 2, 3, 4), ==, 6);
	/* enter imm16, imm8 */
	CHECK_INT(LEN(0xc8, 1, 2, 3), ==, 4);
	/* three-byte maps: pshufb (0f 38), palignr with imm8 (0f 3a) */
	CHECK_INT(LEN(0x66, 0x0f, 0x38, 0x00, 0xc1), ==, 5);
	CHECK_INT(LEN(0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08), ==, 6);
	/* endbr64, syscall, rdtsc */
	CHECK_INT(LEN(0xf3, 0x0f, 0x1e, 0xfa), ==, 4);
	CHECK_INT(LEN(0x0f, 0x05), ==, 2);
	CHECK_INT(LEN(0x0f, 0x31), ==, 2);
	/* VEX2 vzeroupper; VEX3 vpbroadcastb ymm0, xmm1 (map 0f38) */
	CHECK_INT(LEN(0xc5, 0xf8, 0x77), ==, 3);
	CHECK_INT(LEN(0xc4, 0xe2, 0x7d, 0x78, 0xc1), ==, 5);
	/* VEX3 map 0f3a with imm8: vpblendd ymm0, ymm1, ymm2, 5 */
	CHECK_INT(LEN(0xc4, 0xe3, 0x75, 0x02, 0xc2, 0x05), ==, 6);
	/* EVEX vmovdqu64 zmm0, [rdi + disp8*64] */
	CHECK_INT(LEN(0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x47, 0x01), ==, 7);
	/* nopw with all its prefixes, 15 bytes in all */
	CHECK_INT(LEN(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f,
		      0x84, 0, 0, 0, 0, 0),
		  ==, 15);
}

/* 32- and 16-bit code: 40-4f are INC/DEC, C4/C5 are LES/LDS unless
 * ModRM's mod is 3, 16-bit operands and addresses by default. */
TEST(fixed_modes)
{
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0x40), ==, 1); /* inc eax */
	CHECK_INT(LEN_MODE(STRACE_MODE_64, 0x40, 0x90), ==, 2); /* REX nop */
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0xb8, 1, 2, 3, 4), ==, 5);
	CHECK_INT(LEN_MODE(STRACE_MODE_16, 0xb8, 1, 2), ==, 3);
	CHECK_INT(LEN_MODE(STRACE_MODE_16, 0x66, 0xb8, 1, 2, 3, 4), ==, 6);
	/* les eax, [ebx]: C4 with mod 00 */
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0xc4, 0x03), ==, 2);
	/* VEX in 32-bit code (mod 11) */
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0xc5, 0xf8, 0x77), ==, 3);
	/* 16-bit addressing: [bp + disp16] is mod 10 rm 110 */
	CHECK_INT(LEN_MODE(STRACE_MODE_16, 0x8b, 0x86, 1, 2), ==, 4);
	/* mod 00 rm 110: disp16 alone */
	CHECK_INT(LEN_MODE(STRACE_MODE_16, 0x8b, 0x06, 1, 2), ==, 4);
	/* 32-bit: call rel32; 16-bit: call rel16 */
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0xe8, 1, 2, 3, 4), ==, 5);
	CHECK_INT(LEN_MODE(STRACE_MODE_16, 0xe8, 1, 2), ==, 3);
	/* 32-bit code's far jump ptr16:32 (no such in 64-bit) */
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0xea, 1, 2, 3, 4, 5, 6), ==, 7);
}

/* What it refuses: bytes cut short anywhere, 15 bytes of prefixes and
 * more, opcodes that are no instruction in 64-bit code. */
TEST(refused)
{
	static const uint8_t call[] = {0xe8, 1, 2, 3, 4};
	static const uint8_t mov64[] = {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8};
	static const uint8_t sib[] = {0x8b, 0x84, 0x98, 1, 2, 3, 4};
	static const uint8_t evex[] = {0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x47, 1};
	const uint8_t *cut[] = {call, mov64, sib, evex};
	const size_t cutn[] = {sizeof(call), sizeof(mov64), sizeof(sib),
			       sizeof(evex)};
	uint8_t pfx[32];

	for (size_t k = 0; k < 4; k++)
		for (size_t n = 0; n < cutn[k]; n++)
			CHECK_INT(strace_insn_length(cut[k], n), ==, -1);
	/* 14 prefixes and a nop: 15 bytes, fine; 15 and a nop: too long */
	memset(pfx, 0x66, sizeof(pfx));
	pfx[14] = 0x90;
	CHECK_INT(strace_insn_length(pfx, sizeof(pfx)), ==, 15);
	pfx[14] = 0x66;
	pfx[15] = 0x90;
	CHECK_INT(strace_insn_length(pfx, sizeof(pfx)), ==, -1);
	/* prefixes only, to the end */
	memset(pfx, 0xf3, sizeof(pfx));
	CHECK_INT(strace_insn_length(pfx, 5), ==, -1);
	/* invalid in 64-bit code: push es (06), aaa (37), into (ce) */
	CHECK_INT(LEN(0x06), ==, -1);
	CHECK_INT(LEN(0x37), ==, -1);
	CHECK_INT(LEN(0xce), ==, -1);
	/* ... valid in 32-bit code */
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0x06), ==, 1);
	CHECK_INT(LEN_MODE(STRACE_MODE_32, 0x37), ==, 1);
}

RUN_TESTS("test_decoder_insn_len")
