/* SPDX-License-Identifier: MIT */
/*
 * decoder/summary.c - the block summarizer: the summary of one block of
 * code bytes, decoded with Capstone (strace_block_decode()).
 *
 * A block runs from an address to the first control-flow instruction
 * (included). The walker only ever asks "where does the code starting here
 * branch, and how", so a block summary is all it needs. This file knows
 * bytes only: no image, no cache. The block cache (block.c) keeps
 * summaries, and the image (image_block.c) gives them the bytes.
 */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/internal.h"
#include "decoder/summary.h"

/*
 * Capstone is loaded on the first block to summarise, not with the
 * program: loading it costs more than decoding a small trace whose blocks
 * all come from the persistent cache (its tables carry some 80000
 * relocations: about 2.5 ms and 370 page faults). The library of the
 * major version compiled against, by its soname.
 */
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CS_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_err (*close)(csh *);
	cs_insn *(*malloc)(csh);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *,
			    cs_insn *);
	void (*free)(cs_insn *, size_t);
} csf;
static pthread_once_t csf_once = PTHREAD_ONCE_INIT;
static int csf_ok;
static _Atomic uint64_t cs_missing; /* summaries made BAD without it */

static void csf_load(void)
{
	void *h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&csf.open = dlsym(h, "cs_open");
	*(void **)&csf.option = dlsym(h, "cs_option");
	*(void **)&csf.close = dlsym(h, "cs_close");
	*(void **)&csf.malloc = dlsym(h, "cs_malloc");
	*(void **)&csf.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&csf.free = dlsym(h, "cs_free");
	csf_ok = csf.open && csf.option && csf.close && csf.malloc &&
		 csf.disasm_iter && csf.free;
}

int strace_block_engine(void)
{
	pthread_once(&csf_once, csf_load);
	return csf_ok ? 0 : -STRACE_E_NOCAPSTONE;
}

uint64_t strace_block_engine_misses(void)
{
	return atomic_load_explicit(&cs_missing, memory_order_relaxed);
}

/* One Capstone handle per thread and code mode (enum strace_code_mode),
 * opened on first use. */
static _Thread_local csh cs_handle[3];
static _Thread_local int cs_state[3]; /* 0 unopened, 1 ok, -1 failed */
static const cs_mode cs_modes[3] = {CS_MODE_64, CS_MODE_32, CS_MODE_16};

/* Close a thread's handle when the thread exits (decode workers). */
static pthread_key_t cs_key;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_fini(void *unused)
{
	(void)unused;
	for (int m = 0; m < 3; m++) {
		if (cs_state[m] == 1)
			csf.close(&cs_handle[m]);
		cs_state[m] = 0;
	}
}

static void cs_key_init(void)
{
	pthread_key_create(&cs_key, cs_fini);
}

static csh get_cs(unsigned mode)
{
	if (!cs_state[mode]) {
		cs_state[mode] = -1;
		if (strace_block_engine() == 0 &&
		    csf.open(CS_ARCH_X86, cs_modes[mode], &cs_handle[mode]) ==
			    CS_ERR_OK &&
		    csf.option(cs_handle[mode], CS_OPT_DETAIL, CS_OPT_ON) ==
			    CS_ERR_OK)
			cs_state[mode] = 1;
		pthread_once(&cs_once, cs_key_init);
		pthread_setspecific(cs_key, (void *)1);
	}
	return cs_state[mode] == 1 ? cs_handle[mode] : 0;
}

static int is_jcc(unsigned id)
{
	switch (id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JE:
	case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL:
	case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS:
	case X86_INS_JO: case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return 1;
	}
	return 0;
}

static int op_is_reg(const cs_x86_op *op, x86_reg r)
{
	return op->type == X86_OP_REG && op->reg == r;
}

/* The stack pointer of the code's mode: rsp, esp (and sp in 16-bit
 * code, whose stack may be either). */
static int op_is_sp(const cs_x86_op *op, unsigned mode)
{
	return op->type == X86_OP_REG &&
	       (op->reg == X86_REG_RSP ||
		(mode != STRACE_MODE_64 &&
		 (op->reg == X86_REG_ESP || op->reg == X86_REG_SP)));
}

/* OCaml's trap pointer: the domain state's third word (r14 points to the
 * domain state: young_limit, young_ptr, then exception_pointer in 4.10 to
 * 4.14, exn_handler in 5.x). */
static int op_is_trap_ptr(const cs_x86_op *op)
{
	return op->type == X86_OP_MEM && op->mem.base == X86_REG_R14 &&
	       op->mem.index == X86_REG_INVALID && op->mem.disp == 0x10;
}

/* What a block's instructions say of an OCaml handler being pushed: the
 * address a `lea disp(%rip),reg` loaded, and the one a `push reg` of that
 * register pushed. */
struct ocaml_scan {
	x86_reg lea_reg;
	uint64_t lea_addr, pushed;
};

/* Classify one decoded instruction; returns the block kind it ends the
 * block with (NONE: not a terminator). Updates sp, flags and the OCaml
 * scan. */
static int classify(const cs_insn *in, struct strace_block *b,
		    struct ocaml_scan *oc, unsigned mode)
{
	/* a push's bytes: the operand's size where it says, else the
	 * mode's */
	int word = mode == STRACE_MODE_64 ? 8 : mode == STRACE_MODE_32 ? 4 : 2;
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL;
	const cs_x86_op *o1 = x->op_count > 1 ? &x->operands[1] : NULL;

	switch (in->id) {
	case X86_INS_CALL:
		if (o0 && o0->type == X86_OP_IMM) {
			b->target = (uint64_t)o0->imm;
			return STRACE_BK_CALL;
		}
		return STRACE_BK_CALL_IND;
	case X86_INS_JMP:
		if (o0 && o0->type == X86_OP_IMM) {
			b->target = (uint64_t)o0->imm;
			return STRACE_BK_JMP;
		}
		return STRACE_BK_JMP_IND;
	case X86_INS_RET:
		return STRACE_BK_RET;
	case X86_INS_SYSCALL:
		return STRACE_BK_SYSCALL;
	case X86_INS_SYSENTER:
		return STRACE_BK_SYSENTER;
	case X86_INS_INT: case X86_INS_INT3: case X86_INS_INTO:
	case X86_INS_INT1:
		return STRACE_BK_INT;
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
		return STRACE_BK_IRET;
	case X86_INS_LCALL: case X86_INS_LJMP: case X86_INS_RETF:
	case X86_INS_RETFQ: case X86_INS_SYSRET: case X86_INS_SYSEXIT:
	case X86_INS_VMCALL: case X86_INS_VMMCALL: case X86_INS_VMLAUNCH:
	case X86_INS_VMRESUME: case X86_INS_UD2:
		if (in->id == X86_INS_UD2)
			return STRACE_BK_NONE; /* faults are async events */
		return STRACE_BK_FAR;
	}
	if (is_jcc(in->id)) {
		if (o0 && o0->type == X86_OP_IMM)
			b->target = (uint64_t)o0->imm;
		return STRACE_BK_JCC;
	}

	/* stack pointer effect and OCaml exception patterns */
	switch (in->id) {
	case X86_INS_PUSH:
		if (o0 && oc->lea_reg != X86_REG_INVALID &&
		    op_is_reg(o0, oc->lea_reg))
			oc->pushed = oc->lea_addr;
		b->sp_delta -= o0 && o0->size == 2 ? 2
				: o0 && o0->size == 4 && word == 2 ? 4
								    : word;
		return STRACE_BK_NONE;
	case X86_INS_POP:
		if (o0 && op_is_trap_ptr(o0) &&
		    !(b->flags & STRACE_BF_OCAML_RAISE))
			b->flags |= STRACE_BF_OCAML_POP;
		if (o0 && op_is_sp(o0, mode))
			b->flags |= STRACE_BF_SP_UNKNOWN;
		b->sp_delta += o0 && o0->size == 2 ? 2
				: o0 && o0->size == 4 && word == 2 ? 4
								    : word;
		return STRACE_BK_NONE;
	case X86_INS_PUSHFQ:
		b->sp_delta -= 8;
		return STRACE_BK_NONE;
	case X86_INS_POPFQ:
		b->sp_delta += 8;
		return STRACE_BK_NONE;
	case X86_INS_PUSHFD:
		b->sp_delta -= 4;
		return STRACE_BK_NONE;
	case X86_INS_POPFD:
		b->sp_delta += 4;
		return STRACE_BK_NONE;
	case X86_INS_PUSHAL: case X86_INS_PUSHAW: case X86_INS_POPAL:
	case X86_INS_POPAW:
		b->flags |= STRACE_BF_SP_UNKNOWN;
		return STRACE_BK_NONE;
	case X86_INS_ADD: case X86_INS_SUB:
		if (o0 && o1 && op_is_sp(o0, mode)) {
			if (o1->type == X86_OP_IMM)
				b->sp_delta += (int32_t)(in->id == X86_INS_ADD
								 ? o1->imm
								 : -o1->imm);
			else
				b->flags |= STRACE_BF_SP_UNKNOWN;
		}
		return STRACE_BK_NONE;
	case X86_INS_LEA:
		if (o0 && o1 && o0->type == X86_OP_REG &&
		    o1->type == X86_OP_MEM && o1->mem.base == X86_REG_RIP &&
		    o1->mem.index == X86_REG_INVALID) {
			oc->lea_reg = o0->reg;
			oc->lea_addr = in->address + in->size +
				       (uint64_t)o1->mem.disp;
		}
		if (o0 && o1 && op_is_sp(o0, mode)) {
			if ((o1->mem.base == X86_REG_RSP ||
			     o1->mem.base == X86_REG_ESP) &&
			    o1->mem.index == X86_REG_INVALID)
				b->sp_delta += (int32_t)o1->mem.disp;
			else
				b->flags |= STRACE_BF_SP_UNKNOWN;
		}
		return STRACE_BK_NONE;
	case X86_INS_MOV:
		/* a MOV to CR3 can stop tracing (a TIP.PGD without IP binds
		 * to it, as to a far branch): it ends a block, which the
		 * walk goes on from */
		if (o0 && op_is_reg(o0, X86_REG_CR3))
			return STRACE_BK_MOV_CR3;
		/* Intel operand order: o0 = destination */
		if (o0 && o1 && op_is_reg(o1, X86_REG_RSP) &&
		    op_is_trap_ptr(o0)) {
			int64_t h = (int64_t)(oc->pushed - b->start);

			b->flags |= STRACE_BF_OCAML_PUSH;
			b->handler = oc->pushed && h >= INT32_MIN &&
						     h <= INT32_MAX
					     ? (int32_t)h
					     : 0;
		}
		if (o0 && op_is_sp(o0, mode)) {
			b->flags |= STRACE_BF_SP_UNKNOWN;
			if (o1 && op_is_trap_ptr(o1))
				b->flags |= STRACE_BF_OCAML_RAISE;
		}
		return STRACE_BK_NONE;
	case X86_INS_LEAVE: case X86_INS_ENTER: case X86_INS_AND:
	case X86_INS_XCHG: case X86_INS_CMOVA: case X86_INS_CMOVAE:
		if ((o0 && op_is_sp(o0, mode)) || (o1 && op_is_sp(o1, mode)) ||
		    in->id == X86_INS_LEAVE || in->id == X86_INS_ENTER)
			b->flags |= STRACE_BF_SP_UNKNOWN;
		return STRACE_BK_NONE;
	}
	return STRACE_BK_NONE;
}

/*
 * Branches newer than Capstone 4, by their bytes (libipt HEAD's pt_ild.c
 * classifies them so): APX's JMPABS (REX2 prefix D5 with map 0 and W
 * clear, opcode A1, a 64-bit immediate; no 66 or 67 prefix), a direct
 * jump for which the processor still sends a TIP, so a TIP-resolved
 * jump here, as libipt takes it ("libipt ignores the destination");
 * FRED's ERETS (F2 0F 01 CA) and ERETU (F3 0F 01 CA), which Capstone 4
 * reads as CLAC, and UIRET (F3 0F 01 EC), which it rejects: far returns
 * (a TIP gives where they go). code: the instruction's bytes, left of
 * them readable. Returns the block kind and its length in *len, or
 * STRACE_BK_NONE when it is none of them.
 */
int strace_dec_newer_branch(const uint8_t *code, size_t left, int *len)
{
	size_t i = 0;
	int f2f3 = 0, osz = 0, asz = 0;

	for (; i < left && i < 14; i++) {
		uint8_t c = code[i];

		if (c == 0xf2 || c == 0xf3)
			f2f3 = c;
		else if (c == 0x66)
			osz = 1;
		else if (c == 0x67)
			asz = 1;
		else if (c != 0xf0 && c != 0x2e && c != 0x36 && c != 0x3e &&
			 c != 0x26 && c != 0x64 && c != 0x65)
			break;
	}
	if (i + 3 > left)
		return STRACE_BK_NONE;
	if (code[i] == 0xd5 && !(code[i + 1] & 0x88) && code[i + 2] == 0xa1 &&
	    !osz && !asz && i + 11 <= left) {
		*len = (int)i + 11;
		return STRACE_BK_JMP_IND;
	}
	if (code[i] == 0x0f && code[i + 1] == 0x01 &&
	    ((code[i + 2] == 0xca && f2f3) ||
	     (code[i + 2] == 0xec && f2f3 == 0xf3))) {
		*len = (int)i + 3;
		return STRACE_BK_IRET;
	}
	return STRACE_BK_NONE;
}

int strace_block_decode(const uint8_t *code, size_t avail, uint64_t ip,
			unsigned max_insn, struct strace_block *b)
{
	return strace_block_decode_mode(code, avail, ip, max_insn,
					STRACE_MODE_64, b);
}

int strace_block_decode_mode(const uint8_t *code, size_t avail, uint64_t ip,
			     unsigned max_insn, unsigned mode,
			     struct strace_block *b)
{
	csh h;
	cs_insn *in;
	const uint8_t *p = code;
	size_t left = avail;
	uint64_t addr = ip;
	struct ocaml_scan oc = {X86_REG_INVALID, 0, 0};

	memset(b, 0, sizeof(*b));
	b->start = ip;
	if (mode > STRACE_MODE_16)
		mode = STRACE_MODE_64;
	h = get_cs(mode);
	if (!code || !avail) {
		b->kind = STRACE_BK_NOCODE;
		return 0;
	}
	if (!max_insn || max_insn > 1024)
		max_insn = 1024; /* ninsn and len fit 16 bits */
	if (!h) {
		atomic_fetch_add_explicit(&cs_missing, 1,
					  memory_order_relaxed);
		b->kind = STRACE_BK_BAD;
		return 0;
	}
	in = csf.malloc(h);
	if (!in)
		return -ENOMEM;
	while (b->ninsn < max_insn) {
		const uint8_t *before = p;
		int kind, len;

		if (!left)
			break; /* the code ends: kind NONE, the next lookup
				* reports NOCODE */
		if (csf.disasm_iter(h, &p, &left, &addr, in)) {
			b->ninsn++;
			kind = classify(in, b, &oc, mode);
			/* (FRED's ERETS and ERETU: 64-bit code only) */
			if (unlikely(in->id == X86_INS_CLAC) &&
			    mode == STRACE_MODE_64 &&
			    strace_dec_newer_branch(before, in->size, &len) ==
				    STRACE_BK_IRET)
				kind = STRACE_BK_IRET; /* ERETS, ERETU */
			if (kind != STRACE_BK_NONE) {
				b->kind = (uint8_t)kind;
				b->term_len = (uint8_t)in->size;
				break;
			}
			continue;
		}
		/* Capstone 4 rejects it (or the bytes end mid-instruction):
		 * a branch it does not know yet (JMPABS, UIRET: 64-bit code
		 * only; D5 is AAD elsewhere), else measure it: not a branch,
		 * or a form of one no CPU runs (LOCK Jcc: #UD), where
		 * libipt and perf decode a branch and walk on, which no
		 * trace can then be right about: bad. */
		kind = mode == STRACE_MODE_64
			       ? strace_dec_newer_branch(before, left, &len)
			       : STRACE_BK_NONE;
		if (kind != STRACE_BK_NONE) {
			p = before + len;
			left -= (size_t)len;
			addr += (uint64_t)len;
			b->ninsn++;
			b->kind = (uint8_t)kind;
			b->term_len = (uint8_t)len;
			break;
		}
		len = strace_insn_length_mode(before, left, mode);
		if (len <= 0 ||
		    strace_insn_branch_form(before, (size_t)len, mode)) {
			b->kind = STRACE_BK_BAD;
			break;
		}
		p = before + len;
		left -= (size_t)len;
		addr += (uint64_t)len;
		b->ninsn++;
		b->flags |= STRACE_BF_FALLBACK;
	}
	b->len = (uint16_t)(p - code);
	csf.free(in, 1);
	return 0;
}

