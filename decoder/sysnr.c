/* SPDX-License-Identifier: MIT */
/*
 * decoder/sysnr.c - which system call a `syscall` instruction makes, as
 * its code says (see decoder.h), and the x86-64 names of the numbers.
 *
 * A linear sweep of the symbol's code up to the syscall, one instruction
 * at a time (strace_insn_length()), keeps the value a `mov $N, %eax` put
 * in %eax while nothing after it may change %eax: the first instruction
 * that may (by the few forms decoded below; any other instruction is
 * taken to), a call, and the start of code reached only by a jump (after
 * a jmp or a ret) forget it. A direct branch into the code between the
 * mov and the syscall makes the number unknown: another path reaches the
 * syscall there. The compiler's and glibc's wrappers put the mov right
 * before the syscall or a few register moves before it.
 */
#include <stdint.h>
#include <string.h>

#include "decoder.h"

/* Bytes of a symbol swept before its syscall, at most. */
#define SWEEP_MAX 4096
/* Direct branch targets remembered (more: the number is unknown). */
#define TARGETS_MAX 256

/* "[N] = NAME," per system call: generated into $(O)/gen at build time
 * from the kernel's list (decoder/module.mk), so found on the -I path */
static const char *const names[] = {
#include <syscall_names.h>
};

const char *strace_syscall_name(long nr)
{
	if (nr < 0 || (unsigned long)nr >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[nr];
}

/* What an instruction does to the sweep. */
enum effect {
	KEEP,    /* leaves %eax as it is */
	SET,     /* mov $imm, %eax: *imm */
	CLOBBER, /* may change %eax (or is not decoded here) */
	COND,    /* a conditional branch to *target; falls through */
	JUMP,    /* an unconditional jump (to *target if direct), a ret */
	CALL,    /* a call: %eax is the callee's */
};

static int32_t rel32(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (int32_t)v;
}

/*
 * The effect of an instruction with a ModRM byte (effect()'s op, 0x1XX for
 * the 0f map) on %eax: modrm is at q, the instruction ends at end.
 */
static enum effect effect_modrm(unsigned op, unsigned modrm, int rex, int osz,
				const uint8_t *q, const uint8_t *end,
				int64_t *imm)
{
	unsigned mod, reg, rm;
	int byte_op;

	mod = modrm >> 6;
	reg = ((modrm >> 3) & 7) | (rex & 4) << 1;
	rm = (modrm & 7) | (rex & 1) << 3;
	byte_op = op < 0x100 && (op & 1) == 0 && op != 0x8d &&
		  op != 0x84 && op != 0x38 && op != 0x3a;
	/* %eax written: register 0, or %ah (4) by a byte op without REX */
#define IS_EAX(r) ((r) == 0 || (byte_op && !rex && (r) == 4))
	if (op >= 0x100) /* cmov, movzx, movsx, imul */
		return IS_EAX(reg) ? CLOBBER : KEEP;
	if (op <= 0x3b) {
		if ((op & 0xf8) == 0x38) /* cmp */
			return KEEP;
		/* xor %eax, %eax (sub too): read is 0 */
		if ((op == 0x31 || op == 0x33 || op == 0x29 || op == 0x2b) &&
		    mod == 3 && reg == 0 && rm == 0 && !osz) {
			*imm = 0;
			return SET;
		}
		if (op & 2) /* op reg, r/m */
			return IS_EAX(reg) ? CLOBBER : KEEP;
		return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
	}
	switch (op) {
	case 0x84: case 0x85: /* test */
		return KEEP;
	case 0x88: case 0x89: /* mov r, r/m */
		return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
	case 0x8a: case 0x8b: case 0x8d: case 0x63: case 0x69: case 0x6b:
		return IS_EAX(reg) ? CLOBBER : KEEP;
	case 0x80: case 0x81: case 0x83: /* group 1; /7 is cmp */
		if ((modrm >> 3 & 7) == 7)
			return KEEP;
		return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
	case 0xc7: /* mov $imm32, r/m */
		if (mod == 3 && rm == 0 && (modrm >> 3 & 7) == 0 && !osz &&
		    end - q >= 5) {
			*imm = (uint32_t)rel32(q + 1);
			/* (with REX.W sign-extended: a negative one is no
			 * number) */
			return (rex & 8) && *imm >= 0x80000000 ? CLOBBER : SET;
		}
		return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
	case 0xf6: case 0xf7: /* /0 /1 test, /2 not, /3 neg, /4-/7 mul, div */
		if ((modrm >> 3 & 7) < 2)
			return KEEP;
		if ((modrm >> 3 & 7) >= 4)
			return CLOBBER;
		return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
	case 0xff:
		switch (modrm >> 3 & 7) {
		case 2: case 3:
			return CALL;
		case 4: case 5:
			return JUMP;
		case 6:
			return KEEP; /* push */
		case 7:
			return CLOBBER;
		}
		/* inc, dec */
		return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
	}
	/* c0 c1 c6 d0-d3 fe: shifts, mov $imm8, inc/dec: r/m written */
	return mod == 3 && IS_EAX(rm) ? CLOBBER : KEEP;
#undef IS_EAX
}

/*
 * The effect of the instruction of len bytes at p, at offset off of the
 * sweep: *imm for SET, *target (an offset; -1: indirect) for COND and
 * JUMP.
 */
static enum effect effect(const uint8_t *p, int len, int64_t off,
			  int64_t *imm, int64_t *target)
{
	const uint8_t *q = p, *end = p + len;
	int osz = 0, rex = 0;
	unsigned op;

	for (; q < end; q++) {
		if (*q == 0x66)
			osz = 1;
		else if (*q != 0x67 && *q != 0xf0 && *q != 0xf2 &&
			 *q != 0xf3 && *q != 0x2e && *q != 0x36 &&
			 *q != 0x3e && *q != 0x26 && *q != 0x64 && *q != 0x65)
			break;
	}
	if (q < end && (*q & 0xf0) == 0x40)
		rex = *q++;
	if (q >= end)
		return CLOBBER;
	op = *q++;
	*target = -1;

	/* no ModRM */
	if (op >= 0xb8 && op <= 0xbf) { /* mov $imm, r32/r64 */
		if (((op & 7) | (rex & 1) << 3) != 0)
			return KEEP;
		if (osz || end - q < 4)
			return CLOBBER;
		*imm = (uint32_t)rel32(q);
		/* movabs: the high half must be 0 */
		if ((rex & 8) && (end - q < 8 || rel32(q + 4) != 0))
			return CLOBBER;
		return SET;
	}
	if (op >= 0xb0 && op <= 0xb7) /* mov $imm8, r8 */
		return ((op & 7) | (rex & 1) << 3) == 0 ||
			       (!rex && (op & 7) == 4)
			       ? CLOBBER
			       : KEEP;
	if (op >= 0x50 && op <= 0x57) /* push */
		return KEEP;
	if (op >= 0x58 && op <= 0x5f) /* pop */
		return ((op & 7) | (rex & 1) << 3) == 0 ? CLOBBER : KEEP;
	if (op == 0x90 && !(rex & 1)) /* nop */
		return KEEP;
	if (op == 0x99 || op == 0xa8 || op == 0xa9 || op == 0x3c ||
	    op == 0x3d) /* cdq, test/cmp %al/%eax */
		return KEEP;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) {
		*target = off + len + (int8_t)end[-1];
		return COND;
	}
	if (op == 0xe8)
		return CALL;
	if (op == 0xe9) {
		*target = off + len + rel32(end - 4);
		return JUMP;
	}
	if (op == 0xeb) {
		*target = off + len + (int8_t)end[-1];
		return JUMP;
	}
	if (op == 0xc3 || op == 0xc2 || op == 0xcc)
		return JUMP;
	if (op == 0x0f) {
		if (q >= end)
			return CLOBBER;
		op = 0x100 | *q++;
		if (op >= 0x180 && op <= 0x18f) {
			*target = off + len + rel32(end - 4);
			return COND;
		}
		switch (op & 0xff) {
		case 0x1e: /* endbr64 (f3 0f 1e fa) */
		case 0x1f: /* nop */
		case 0x18: /* prefetch */
		case 0x10: case 0x11: case 0x28: case 0x29: /* SSE moves */
		case 0x6f: case 0x7f: case 0xd6: case 0x57: case 0xef:
			return KEEP;
		}
		if (!((op >= 0x140 && op <= 0x14f) || op == 0x1b6 ||
		      op == 0x1b7 || op == 0x1be || op == 0x1bf || op == 0x1af))
			return CLOBBER;
		/* cmov, movzx, movsx, imul: the reg operand is written */
	} else if (!(op <= 0x3b && (op & 7) < 4) && op != 0x63 && op != 0x69 &&
		   op != 0x6b && op != 0x80 && op != 0x81 && op != 0x83 &&
		   op != 0x84 && op != 0x85 && op != 0x88 && op != 0x89 &&
		   op != 0x8a && op != 0x8b && op != 0x8d && op != 0xc0 &&
		   op != 0xc1 && op != 0xc6 && op != 0xc7 &&
		   !(op >= 0xd0 && op <= 0xd3) && op != 0xf6 && op != 0xf7 &&
		   op != 0xfe && op != 0xff) {
		return CLOBBER;
	}
	if (q >= end)
		return CLOBBER;
	return effect_modrm(op, *q, rex, osz, q, end, imm);
}

long strace_syscall_nr(struct strace_image *img, uint64_t addr)
{
	struct strace_symbol sym;
	uint8_t code[SWEEP_MAX + 2];
	int64_t targets[TARGETS_MAX], imm = 0, target, nr = -1, after = 0;
	size_t ntargets = 0, len, off;

	if (strace_image_symbol(img, addr, &sym) < 0 || addr < sym.start ||
	    addr - sym.start > SWEEP_MAX)
		return -1;
	len = (size_t)(addr - sym.start);
	if (strace_image_read(img, sym.start, code, len + 2) != len + 2 ||
	    code[len] != 0x0f || code[len + 1] != 0x05)
		return -1;
	for (off = 0; off < len;) {
		int il = strace_insn_length(code + off, len - off);

		if (il <= 0)
			return -1;
		switch (effect(code + off, il, (int64_t)off, &imm, &target)) {
		case KEEP:
			break;
		case SET:
			nr = imm;
			after = (int64_t)off + il;
			break;
		case CLOBBER:
		case CALL:
			nr = -1;
			break;
		case COND:
			if (ntargets == TARGETS_MAX)
				return -1;
			targets[ntargets++] = target;
			break;
		case JUMP:
			if (target >= 0) {
				if (ntargets == TARGETS_MAX)
					return -1;
				targets[ntargets++] = target;
			}
			/* what follows is reached by a jump, if at all */
			nr = -1;
			break;
		}
		off += (size_t)il;
	}
	if (off != len || nr < 0)
		return -1;
	for (size_t i = 0; i < ntargets; i++)
		if (targets[i] >= after && targets[i] <= (int64_t)len)
			return -1;
	return (long)nr;
}
