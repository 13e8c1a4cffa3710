/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_block.c - block summaries and the fallback
 * length decoder against objdump, on every instruction of libc.
 */
#include <capstone/capstone.h>
#include <ctype.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "decoder_testlib.h"
#include "decoder/blockfile.h"
#include "decoder/internal.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

struct oinsn {
	uint64_t addr;
	uint64_t target;
	uint8_t len;
	uint8_t kind; /* enum strace_block_kind per objdump's mnemonic */
	uint8_t bad;
	uint8_t fstart; /* a function starts here */
};

static struct oinsn *ins;
static size_t nins;
static struct strace_image *libc_img;

static const char *prefixes[] = {"bnd",  "notrack", "repz", "repnz", "rep",
				 "ds",   "cs",      "es",   "ss",    "fs",
				 "gs",   "data16",  "addr32", "lock", "xacquire",
				 "xrelease", NULL};

static int classify(const char *text, uint64_t *target)
{
	char buf[256], *tok, *save = NULL, *ops;
	int i;

	snprintf(buf, sizeof(buf), "%s", text);
	tok = strtok_r(buf, " \t", &save);
	while (tok) {
		for (i = 0; prefixes[i] && strcmp(tok, prefixes[i]); i++)
			;
		if (!prefixes[i] && strncmp(tok, "rex", 3))
			break;
		tok = strtok_r(NULL, " \t", &save);
	}
	if (!tok)
		return STRACE_BK_NONE;
	ops = strtok_r(NULL, " \t", &save);
	*target = ops ? strtoull(ops, NULL, 16) : 0;
#define IS(s) (!strcmp(tok, s))
#define PRE(s) (!strncmp(tok, s, strlen(s)))
	if (PRE("lcall") || PRE("ljmp") || PRE("lret") || PRE("sysret") ||
	    PRE("sysexit") || IS("vmcall") || IS("vmmcall") ||
	    IS("vmlaunch") || IS("vmresume"))
		return STRACE_BK_FAR;
	if (PRE("call"))
		return ops && ops[0] == '*' ? STRACE_BK_CALL_IND
					    : STRACE_BK_CALL;
	if (PRE("jmp"))
		return ops && ops[0] == '*' ? STRACE_BK_JMP_IND : STRACE_BK_JMP;
	if (PRE("ret"))
		return STRACE_BK_RET;
	if (PRE("iret"))
		return STRACE_BK_IRET;
	if (IS("syscall"))
		return STRACE_BK_SYSCALL;
	if (IS("sysenter"))
		return STRACE_BK_SYSENTER;
	if (IS("int3") || IS("int") || IS("into") || IS("int1") ||
	    IS("icebp"))
		return STRACE_BK_INT;
	if (tok[0] == 'j' || PRE("loop"))
		return STRACE_BK_JCC;
	return STRACE_BK_NONE;
#undef IS
#undef PRE
}

/* Load objdump's view of libc's .text once. */
static int load_libc(void)
{
	char *out, *line, *save = NULL;
	size_t cap = 0;
	uint64_t bias = 0x7f0000000000ull;
	int next_fstart = 0;

	if (ins)
		return 0;
	if (access(LIBC, R_OK) || !tl_have("objdump"))
		return -1;
	out = tl_run("objdump -d --no-show-raw-insn --section=.text " LIBC);
	if (!out)
		return -1;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		int used;
		struct oinsn o = {0};

		if (line[0] != ' ') {
			if (sscanf(line, "%llx <", &a) == 1 && strchr(line, '>'))
				next_fstart = 1;
			continue;
		}
		if (sscanf(line, " %llx:%n", &a, &used) != 1)
			continue;
		if (nins == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			ins = realloc(ins, cap * sizeof(*ins));
		}
		o.addr = bias + a;
		while (line[used] == '\t' || line[used] == ' ')
			used++;
		o.bad = strstr(line + used, "(bad)") != NULL;
		o.kind = (uint8_t)classify(line + used, &o.target);
		if (o.target)
			o.target += bias;
		o.fstart = (uint8_t)next_fstart;
		next_fstart = 0;
		if (nins) {
			ins[nins - 1].len =
				(uint8_t)(o.addr - ins[nins - 1].addr);
		}
		ins[nins++] = o;
	}
	free(out);
	if (nins)
		nins--; /* the last one has no known length */
	if (strace_image_new(NULL, &libc_img) ||
	    tl_map_elf(libc_img, LIBC, bias) <= 0)
		return -1;
	return 0;
}

TEST(length_decoder_vs_objdump)
{
	csh h;
	cs_insn *ci;
	size_t rejected = 0, rejected_ok = 0, all_ok = 0, all = 0;

	if (load_libc())
		SKIP("no libc.so.6 or objdump");
	REQUIRE(cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK);
	ci = cs_malloc(h);
	for (size_t i = 0; i < nins; i++) {
		const uint8_t *code, *p;
		size_t avail, left;
		uint64_t a = ins[i].addr;
		int len;

		if (ins[i].bad || !ins[i].len || ins[i].len > 15)
			continue;
		code = strace_image_code(libc_img, a, &avail);
		REQUIRE(code);
		len = strace_insn_length(code, avail);
		all++;
		all_ok += len == ins[i].len;
		p = code;
		left = avail;
		if (!cs_disasm_iter(h, &p, &left, &a, ci)) {
			rejected++;
			if (len == ins[i].len)
				rejected_ok++;
			else if (rejected - rejected_ok <= 5)
				fprintf(stderr,
					"  %llx: length %d, objdump says %u\n",
					(unsigned long long)ins[i].addr, len,
					ins[i].len);
		}
	}
	printf("  libc: %zu instructions, %zu rejected by Capstone %s; "
	       "length decoder right on %zu/%zu rejected, %zu/%zu all\n",
	       all, rejected, cs_version(NULL, NULL) >= CS_MAKE_VERSION(5, 0)
				      ? "5+"
				      : "4",
	       rejected_ok, rejected, all_ok, all);
	CHECK_INT(rejected_ok, ==, rejected);
	CHECK_INT(rejected, >, 0); /* libc has AVX-512/CET code Capstone 4
				    * cannot read: the test must see some */
	/* every instruction of libc, not only the rejected ones */
	CHECK_INT(all_ok, ==, all);
	cs_free(ci, 1);
	cs_close(&h);
}

/* 32-bit code: every instruction of the 32-bit libc (gcc-multilib),
 * measured by the length decoder in 32-bit mode as objdump -M i386
 * decodes it (its bytes on one line: --insn-width=16), and each block's
 * terminator as Capstone in CS_MODE_32 ends it: a call's direct target
 * objdump's. */
TEST(length_decoder_32_vs_objdump)
{
	FILE *f = popen("objdump -d --insn-width=16 /usr/lib32/libc.so.6 "
			"2>/dev/null",
			"r");
	char line[512];
	size_t all = 0, ok = 0, calls = 0, calls_ok = 0;

	if (!f || access("/usr/lib32/libc.so.6", R_OK))
		SKIP("no 32-bit libc (gcc-multilib) or objdump");
	while (fgets(line, sizeof(line), f)) {
		uint8_t b[16];
		unsigned long long a, t;
		int used, n = 0;
		char *p, *tab;

		if (sscanf(line, " %llx:%n", &a, &used) != 1 || line[0] != ' ')
			continue;
		p = line + used;
		while (*p == '\t' || *p == ' ')
			p++;
		tab = strchr(p, '\t');
		if (!tab || strstr(tab, "(bad)"))
			continue;
		while (p + 1 < tab && n < 16 && isxdigit((unsigned char)p[0]) &&
		       isxdigit((unsigned char)p[1])) {
			unsigned v;
			if (sscanf(p, "%2x", &v) != 1)
				break;
			b[n++] = (uint8_t)v;
			p += 3;
		}
		if (!n)
			continue;
		all++;
		if (strace_insn_length_mode(b, (size_t)n, STRACE_MODE_32) == n)
			ok++;
		else if (all - ok <= 5)
			fprintf(stderr, "  %llx: length %d, objdump says %d\n",
				a, strace_insn_length_mode(b, (size_t)n,
							   STRACE_MODE_32),
				n);
		if (b[0] == 0xe8 && n == 5 &&
		    sscanf(tab, "\tcall %llx", &t) == 1) {
			struct strace_block blk;

			calls++;
			strace_block_decode_mode(b, (size_t)n, a, 0,
						 STRACE_MODE_32, &blk);
			calls_ok += blk.kind == STRACE_BK_CALL &&
				    blk.target == t && blk.len == 5 &&
				    blk.term_len == 5;
		}
	}
	pclose(f);
	printf("  32-bit libc: %zu instructions, length decoder right on "
	       "%zu; %zu direct calls, %zu as objdump\n",
	       all, ok, calls, calls_ok);
	CHECK_INT(all, >, 100000);
	CHECK_INT(ok, ==, all);
	CHECK_INT(calls, >, 1000);
	CHECK_INT(calls_ok, ==, calls);
}

/* Block at every function start and after every branch, vs objdump. */
TEST(blocks_vs_objdump)
{
	size_t blocks = 0, bad = 0, fallback = 0;
	struct timespec t0, t1;

	if (load_libc())
		SKIP("no libc.so.6 or objdump");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < nins; i++) {
		struct strace_block b;
		const uint8_t *code;
		size_t avail, j, k;
		int skip = 0;

		if (!(ins[i].fstart || (i && ins[i - 1].kind)))
			continue;
		for (j = i; j < nins && j - i < 1024 && !ins[j].kind; j++)
			skip |= ins[j].bad || !ins[j].len;
		if (j >= nins || j - i >= 1024 || skip || ins[j].bad)
			continue;
		/* objdump's listing must be contiguous over the block */
		for (k = i; k < j; k++)
			if (ins[k].addr + ins[k].len != ins[k + 1].addr)
				skip = 1;
		if (skip)
			continue;
		code = strace_image_code(libc_img, ins[i].addr, &avail);
		REQUIRE(code);
		REQUIRE(strace_block_decode(code, avail, ins[i].addr, 0, &b) ==
			0);
		blocks++;
		fallback += !!(b.flags & STRACE_BF_FALLBACK);
		if (b.kind != ins[j].kind ||
		    b.len != ins[j].addr + ins[j].len - ins[i].addr ||
		    b.ninsn != j - i + 1 || b.term_len != ins[j].len ||
		    ((b.kind == STRACE_BK_CALL || b.kind == STRACE_BK_JMP ||
		      b.kind == STRACE_BK_JCC) &&
		     b.target != ins[j].target)) {
			if (bad++ < 5)
				fprintf(stderr,
					"  block %llx: kind %u len %u n %u "
					"target %llx; objdump: kind %u len "
					"%llu n %zu target %llx\n",
					(unsigned long long)ins[i].addr,
					b.kind, b.len, b.ninsn,
					(unsigned long long)b.target,
					ins[j].kind,
					(unsigned long long)(ins[j].addr +
							     ins[j].len -
							     ins[i].addr),
					j - i + 1,
					(unsigned long long)ins[j].target);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("  libc: %zu blocks compared (%zu with Capstone-rejected "
	       "instructions), %zu differ; %.0f ns per block decode\n",
	       blocks, fallback, bad,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
		       (blocks ? blocks : 1));
	CHECK_INT(blocks, >, 50000);
	CHECK_INT(fallback, >, 0);
	CHECK_INT(bad, ==, 0);
}

TEST(specific_blocks)
{
	/* push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; rdsspq %rax (Capstone 4
	 * rejects it); call rel32 +0x10 */
	static const uint8_t c1[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
				     0x20, 0xf3, 0x48, 0x0f, 0x1e, 0xc8, 0xe8,
				     0x10, 0x00, 0x00, 0x00};
	/* OCaml 4.13 try: lea h(%rip),%r11; push %r11; push 16(%r14);
	 * mov %rsp,16(%r14); call rel32 */
	static const uint8_t c2[] = {0x4c, 0x8d, 0x1d, 0x10, 0x00, 0x00, 0x00,
				     0x41, 0x53, 0x41, 0xff, 0x76, 0x10, 0x49,
				     0x89, 0x66, 0x10, 0xe8, 0, 0, 0, 0};
	/* OCaml raise: mov 16(%r14),%rsp; pop 16(%r14); pop %r11; jmp *%r11 */
	static const uint8_t c3[] = {0x49, 0x8b, 0x66, 0x10, 0x41, 0x8f,
				     0x46, 0x10, 0x41, 0x5b, 0x41, 0xff, 0xe3};
	/* leave the try: pop 16(%r14); add $8,%rsp; jmp rel8 */
	static const uint8_t c4[] = {0x41, 0x8f, 0x46, 0x10, 0x48, 0x83,
				     0xc4, 0x08, 0xeb, 0x05};
	/* syscall; and a truncated instruction */
	static const uint8_t c5[] = {0x0f, 0x05};
	static const uint8_t c6[] = {0x48, 0x8b};
	/* pop %r14; ret */
	static const uint8_t c7[] = {0x41, 0x5e, 0xc3};
	/* pop 0xd8(%r14); mov %rsp,0xd0(%r14); jmp *%rax */
	static const uint8_t c8[] = {0x41, 0x8f, 0x86, 0xd8, 0, 0, 0, 0x49,
				     0x89, 0xa6, 0xd0, 0, 0, 0, 0xff, 0xe0};
	struct strace_block b;

	CHECK_INT(strace_block_decode(c1, sizeof(c1), 0x1000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_CALL);
	CHECK_INT(b.ninsn, ==, 5);
	CHECK_INT(b.len, ==, sizeof(c1));
	CHECK_INT(b.term_len, ==, 5);
	CHECK_U64(b.target, ==, 0x1000 + sizeof(c1) + 0x10);
	CHECK_INT(b.sp_delta, ==, -40);
	CHECK(b.flags & STRACE_BF_FALLBACK);

	CHECK_INT(strace_block_decode(c2, sizeof(c2), 0x2000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_CALL);
	CHECK(b.flags & STRACE_BF_OCAML_PUSH);
	CHECK_INT(b.sp_delta, ==, -16);
	/* the handler: the lea's target, pushed through %r11 */
	CHECK_INT(b.handler, ==, 7 + 0x10);

	/* a C epilogue (pop %r14; ret) and OCaml's caml_c_call (pop
	 * 0xd8(%r14): another word of the domain state) leave no try */
	CHECK_INT(strace_block_decode(c7, sizeof(c7), 0x7000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_RET);
	CHECK(!(b.flags & (STRACE_BF_OCAML_POP | STRACE_BF_OCAML_PUSH |
			   STRACE_BF_OCAML_RAISE)));
	CHECK_INT(strace_block_decode(c8, sizeof(c8), 0x8000, 0, &b), ==, 0);
	CHECK(!(b.flags & (STRACE_BF_OCAML_POP | STRACE_BF_OCAML_PUSH)));

	CHECK_INT(strace_block_decode(c3, sizeof(c3), 0x3000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_JMP_IND);
	CHECK(b.flags & STRACE_BF_OCAML_RAISE);
	CHECK(!(b.flags & STRACE_BF_OCAML_POP));
	CHECK(b.flags & STRACE_BF_SP_UNKNOWN);

	CHECK_INT(strace_block_decode(c4, sizeof(c4), 0x4000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_JMP);
	CHECK(b.flags & STRACE_BF_OCAML_POP);
	CHECK_INT(b.sp_delta, ==, 16);
	CHECK_U64(b.target, ==, 0x4000 + sizeof(c4) + 5);

	CHECK_INT(strace_block_decode(c5, sizeof(c5), 0x5000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_SYSCALL);
	CHECK_INT(strace_block_decode(c6, sizeof(c6), 0x6000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_BAD);
	CHECK_INT(strace_block_decode(NULL, 0, 0x7000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_NOCODE);
}

/*
 * A branch's opcode that Capstone rejects is a form no CPU runs (LOCK
 * Jcc, LOCK RET: #UD; a far CALL with a pointer in 64-bit code), not an
 * instruction to measure and walk past, as the length decoder would: the
 * block is bad there. A damaged TIP sent the walk to handle_amd+0xdd of
 * the corpus's static program, mid-instruction: shl $0xc6,%dh; lock je
 * (the damage fuzz target, 2026-11-30). Walking past the LOCK JE as an
 * instruction gave a compressed return where the trace's TNT bit was the
 * JE's (libipt and perf take it for a JE); now the walk reports bad_insn
 * there. What Capstone reads with such prefixes (REP RET, BND JMP,
 * NOTRACK CALL) stays a branch.
 */
TEST(invalid_branch_forms_are_bad)
{
	static const uint8_t lock_je[] = {0xc0, 0xf6, 0xc6, 0xf0, 0x0f, 0x84,
					  0x5a, 0xff, 0xff, 0xff, 0x8d, 0x04,
					  0x12, 0x5b, 0xc3};
	static const uint8_t lock_ret[] = {0x90, 0xf0, 0xc3, 0xc3};
	static const uint8_t lock_call[] = {0xf0, 0x41, 0xff, 0xd3, 0xc3};
	static const uint8_t far_call[] = {0x9a, 0, 0, 0, 0, 0, 0, 0xc3};
	/* a LOCK that is valid (a memory destination): measured or read */
	static const uint8_t lock_add[] = {0xf0, 0x83, 0x00, 0x01, 0xc3};
	static const uint8_t rep_ret[] = {0xf3, 0xc3};
	static const uint8_t notrack_call[] = {0x3e, 0xff, 0xd0};
	struct strace_block b;

	CHECK_INT(strace_block_decode(lock_je, sizeof(lock_je), 0x4018dd, 0,
				      &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_BAD);
	CHECK_INT(b.ninsn, ==, 1); /* the shl before it */
	CHECK_INT(b.len, ==, 3);
	CHECK_INT(strace_block_decode(lock_ret, sizeof(lock_ret), 0x1000, 0,
				      &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_BAD);
	CHECK_INT(b.len, ==, 1);
	CHECK_INT(strace_block_decode(lock_call, sizeof(lock_call), 0x1000, 0,
				      &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_BAD);
	CHECK_INT(strace_block_decode(far_call, sizeof(far_call), 0x1000, 0,
				      &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_BAD);
	CHECK_INT(strace_block_decode(lock_add, sizeof(lock_add), 0x1000, 0,
				      &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_RET);
	CHECK_INT(b.ninsn, ==, 2);
	CHECK_INT(strace_block_decode(rep_ret, sizeof(rep_ret), 0x1000, 0, &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_RET);
	CHECK_INT(strace_block_decode(notrack_call, sizeof(notrack_call),
				      0x1000, 0, &b),
		  ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_CALL_IND);

	/* the opcodes themselves, whatever the prefixes */
	CHECK(strace_insn_branch_form(lock_je + 3, 7, STRACE_MODE_64));
	CHECK(strace_insn_branch_form(lock_call, 4, STRACE_MODE_64));
	CHECK(strace_insn_branch_form((const uint8_t[]){0x66, 0x0f, 0x05}, 3,
				      STRACE_MODE_64));
	CHECK(!strace_insn_branch_form(lock_add, 4, STRACE_MODE_64));
	CHECK(!strace_insn_branch_form((const uint8_t[]){0xff, 0xc0}, 2,
				       STRACE_MODE_64)); /* inc %eax */
	CHECK(!strace_insn_branch_form((const uint8_t[]){0xf0, 0x0f, 0xb1,
							 0x0a},
				       4, STRACE_MODE_64)); /* lock cmpxchg */
}

/*
 * Branches newer than Capstone 4 (which rejects JMPABS and UIRET and
 * reads ERETS and ERETU as CLAC), classified as libipt's development
 * tree (HEAD 8978561f, pt_ild.c; the bytes of its tip-jmpabs.ptt,
 * ptet-int-int-erets-eretu.ptt and ptet-uint-uiret.ptt cases, which the
 * fast walker decodes as ptxed does: docs/decoder.md) classifies them:
 * JMPABS (APX: REX2 D5 with map 0 and W clear, A1, imm64) a jump that
 * receives a TIP (libipt: "JMPABS is direct but receives a TIP"), ERETS,
 * ERETU and UIRET far returns; what libipt does not take for them
 * (REX2.W set, a 66 prefix, CLAC without F2/F3, 0F 01 EC without F3) is
 * not one.
 */
TEST(newer_branches_as_libipt_classifies_them)
{
	static const struct {
		uint8_t code[16];
		int n, kind, len, ninsn;
	} c[] = {
		/* nop; jmpabs 0x100d (tip-jmpabs.ptt's bytes) */
		{{0x90, 0xd5, 0x00, 0xa1, 0x0d, 0x10, 0, 0, 0, 0, 0, 0},
		 12, STRACE_BK_JMP_IND, 12, 2},
		/* REX2 with R4/X4/B4 bits (not M0, not W) is still one */
		{{0xd5, 0x77, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8}, 11,
		 STRACE_BK_JMP_IND, 11, 1},
		/* REX2.W set: not JMPABS (libipt: !rex_w) */
		{{0xd5, 0x08, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8}, 11, STRACE_BK_BAD,
		 0, 0},
		/* 66 prefix: not JMPABS either */
		{{0x66, 0xd5, 0x00, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8}, 12,
		 STRACE_BK_BAD, 0, 0},
		/* erets; eretu */
		{{0xf2, 0x0f, 0x01, 0xca, 0xf4}, 5, STRACE_BK_IRET, 4, 1},
		{{0xf3, 0x0f, 0x01, 0xca, 0xf4}, 5, STRACE_BK_IRET, 4, 1},
		/* nop; uiret */
		{{0x90, 0xf3, 0x0f, 0x01, 0xec, 0xf4}, 6, STRACE_BK_IRET, 5, 2},
		/* clac; ret: CLAC is no branch */
		{{0x0f, 0x01, 0xca, 0xc3}, 4, STRACE_BK_RET, 4, 2},
	};
	struct strace_block b;

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		CHECK_INT(strace_block_decode(c[k].code, (size_t)c[k].n, 0x1000,
					      0, &b),
			  ==, 0);
		CHECK_INT(b.kind, ==, c[k].kind);
		if (c[k].kind == STRACE_BK_BAD)
			continue;
		CHECK_INT(b.len, ==, c[k].len);
		CHECK_INT(b.ninsn, ==, c[k].ninsn);
		CHECK_INT(b.term_len, ==,
			  c[k].kind == STRACE_BK_RET ? 1 : c[k].len - (c[k].ninsn - 1));
	}
	/* cut short: no JMPABS without its immediate */
	CHECK_INT(strace_block_decode(c[1].code, 10, 0x1000, 0, &b), ==, 0);
	CHECK_INT(b.kind, ==, STRACE_BK_BAD);
}

TEST(cache)
{
	struct strace_bcache *c;
	struct strace_bcache_stats st;
	struct strace_block b = {0};
	const struct strace_block *r;

	REQUIRE(strace_bcache_new(1024, &c) == 0);
	for (uint64_t k = 0; k < 500; k++) {
		b.start = k * 16;
		b.len = (uint32_t)k;
		strace_bcache_put(c, k * 16, &b);
	}
	for (uint64_t k = 0; k < 500; k++) {
		r = strace_bcache_find(c, k * 16);
		CHECK(r && r->len == k);
	}
	CHECK(strace_bcache_find(c, 8) == NULL);
	strace_bcache_stats(c, &st);
	CHECK_U64(st.entries, ==, 500);
	/* past three quarters full (768) it starts over instead of
	 * growing */
	for (uint64_t k = 500; k < 800; k++)
		strace_bcache_put(c, k * 16 + 1, &b);
	strace_bcache_stats(c, &st);
	CHECK_U64(st.flushes, ==, 1);
	CHECK(st.entries < 512);
	strace_bcache_free(c);

	/* a big one grows to its capacity before it starts over */
	REQUIRE(strace_bcache_new(1 << 16, &c) == 0);
	for (uint64_t k = 1; k <= 30000; k++) {
		b.len = (uint32_t)k;
		strace_bcache_put(c, k * 64, &b);
	}
	strace_bcache_stats(c, &st);
	CHECK_U64(st.flushes, ==, 0);
	CHECK_U64(st.entries, ==, 30000);
	for (uint64_t k = 1; k <= 30000; k += 7) {
		r = strace_bcache_find(c, k * 64);
		CHECK(r && r->len == k);
	}
	for (uint64_t k = 30001; k <= 50000; k++) /* past 3/4 of 65536 */
		strace_bcache_put(c, k * 64, &b);
	strace_bcache_stats(c, &st);
	CHECK_U64(st.flushes, ==, 1);
	strace_bcache_free(c);

	/* through an image: hits after the first decode, flush on change */
	if (load_libc())
		SKIP("no libc");
	REQUIRE(strace_bcache_new(0, &c) == 0);
	r = strace_bcache_get(c, libc_img, ins[0].addr);
	CHECK(r->kind != STRACE_BK_NOCODE);
	r = strace_bcache_get(c, libc_img, ins[0].addr);
	strace_bcache_stats(c, &st);
	CHECK_U64(st.hits, ==, 1);
	CHECK_U64(st.misses, ==, 1);
	r = strace_bcache_get(c, libc_img, 0x1000);
	CHECK_INT(r->kind, ==, STRACE_BK_NOCODE);
	strace_bcache_free(c);
}

/* The dlfilter's way (dlfilter/dlf.c, block_at()): keyed by (object,
 * offset), a miss decoded from the code bytes and put; the same code at
 * another address is found under its key, to be relocated by the caller. */
TEST(find_put_by_key)
{
	struct strace_bcache *c;
	struct strace_bcache_stats st;
	size_t checked = 0;

	if (load_libc())
		SKIP("no libc");
	REQUIRE(strace_bcache_new(0, &c) == 0);
	for (size_t i = 0; i < nins && checked < 2000; i += 97) {
		struct strace_block want;
		const struct strace_block *b;
		const uint8_t *code;
		size_t avail;
		uint64_t key = 0xdd50000000000000ull ^ (ins[i].addr - 0x7f0000000000ull);

		code = strace_image_code(libc_img, ins[i].addr, &avail);
		REQUIRE(code);
		CHECK(strace_bcache_find(c, key) == NULL);
		strace_block_decode(code, avail, ins[i].addr, 0, &want);
		b = strace_bcache_put(c, key, &want);
		CHECK(b->kind == want.kind && b->len == want.len &&
		      b->ninsn == want.ninsn && b->target == want.target);
		/* same key from elsewhere: found, relocatable */
		b = strace_bcache_find(c, key);
		REQUIRE(b);
		CHECK_U64(b->start, ==, ins[i].addr);
		checked++;
	}
	strace_bcache_stats(c, &st);
	CHECK_U64(st.entries, ==, checked);
	CHECK_U64(st.hits + st.misses, ==, 0); /* find and put count none */
	/* key 0 is a key too; no bytes: NOCODE, kept as any summary */
	{
		struct strace_block nb;

		CHECK(strace_bcache_find(c, 0) == NULL);
		strace_block_decode(NULL, 0, 0x1000, 0, &nb);
		CHECK_INT(nb.kind, ==, STRACE_BK_NOCODE);
		strace_bcache_put(c, 0, &nb);
		REQUIRE(strace_bcache_find(c, 0));
		CHECK_INT(strace_bcache_find(c, 0)->kind, ==,
			  STRACE_BK_NOCODE);
	}
	strace_bcache_free(c);
}

/*
 * A cache file's blocks (decoder/blockfile.c): the blocks a decode added
 * merged with the file's, in key order and once each, an added one
 * winning; a file written so is found block by block, and a file whose
 * keys are out of order is damaged (its blocks are looked up by binary
 * search, in the mapping).
 */
TEST(cache_file_blocks)
{
	static const uint64_t want_keys[] = {1, 2, 5, 7, 9};
	struct strace_blockfile_block old[3] = {0}, add[4] = {0}, *m;
	struct strace_blockfile_key key = {.id = (const uint8_t *)"id",
					   .idn = 2,
					   .size = 100,
					   .mtime_sec = 1,
					   .mtime_nsec = 2};
	struct strace_blockfile c = {0}, in;
	char dir[] = "/tmp/strace-blockfile-XXXXXX", path[4200];
	void *buf;
	size_t n;

	old[0].key = 1, old[1].key = 5, old[2].key = 9;
	old[1].b.len = 1;
	/* out of order, 5 twice (decoded again), 5 winning over the file's */
	add[0].key = 7, add[1].key = 5, add[2].key = 2, add[3].key = 5;
	add[1].b.len = add[3].b.len = 2;
	m = strace_blockfile_merge(old, 3, add, 4, &n);
	REQUIRE(m);
	CHECK_U64(n, ==, 5);
	for (size_t i = 0; i < n; i++)
		CHECK_U64(m[i].key, ==, want_keys[i]);
	CHECK_INT(m[2].b.len, ==, 2);
	free(m);
	m = strace_blockfile_merge(NULL, 0, NULL, 0, &n);
	REQUIRE(m);
	CHECK_U64(n, ==, 0);
	free(m);

	REQUIRE(mkdtemp(dir));
	c.blocks = m = strace_blockfile_merge(old, 3, add, 4, &c.nblocks);
	REQUIRE(m);
	for (size_t i = 0; i < c.nblocks; i++)
		m[i].b.kind = STRACE_BK_RET, m[i].b.len = m[i].b.len ? 2 : 1,
		m[i].b.ninsn = 1, m[i].b.term_len = 1;
	REQUIRE(strace_blockfile_write(dir, &key, &c) == 0);
	REQUIRE(strace_blockfile_load(dir, &key, &buf, &in) == 0);
	CHECK_U64(in.nblocks, ==, 5);
	for (uint64_t k = 0; k <= 10; k++) {
		const struct strace_blockfile_block *r =
			strace_blockfile_find(&in, k);
		int want = k == 1 || k == 2 || k == 5 || k == 7 || k == 9;
		CHECK_INT(r != NULL, ==, want);
		if (r)
			CHECK_U64(r->key, ==, k);
	}
	CHECK_INT(strace_blockfile_find(&in, 5)->b.len, ==, 2);
	strace_blockfile_unload(buf, &in);

	/* the same blocks out of order: damaged, not used */
	m[0].key = 8;
	REQUIRE(strace_blockfile_write(dir, &key, &c) == 0);
	CHECK_INT(strace_blockfile_load(dir, &key, &buf, &in), ==,
		  -STRACE_E_BADARG);
	CHECK(buf == NULL);
	free(m);
	REQUIRE(strace_blockfile_path(path, sizeof(path), dir, &key));
	unlink(path);
	rmdir(dir);
}

/* Block summaries and their fields that do not depend on where the block
 * is: equal, with start and target moved by delta. */
static int same_block(const struct strace_block *x,
		      const struct strace_block *y, uint64_t delta)
{
	return x->start + delta == y->start &&
	       (x->target ? x->target + delta : 0) == y->target &&
	       x->len == y->len && x->ninsn == y->ninsn &&
	       x->sp_delta == y->sp_delta && x->kind == y->kind &&
	       x->term_len == y->term_len &&
	       (x->flags & ~(STRACE_BF_SAME_SYM | STRACE_BF_SYM_KNOWN)) ==
		       (y->flags & ~(STRACE_BF_SAME_SYM | STRACE_BF_SYM_KNOWN));
}

/* A cached direct branch's STRACE_BF_SAME_SYM, decided once for the file
 * (STRACE_BF_SYM_KNOWN) or by the cache, is what img's symbols say. */
static int same_sym_right(struct strace_image *img,
			  const struct strace_block *y)
{
	if (y->kind != STRACE_BK_JMP && y->kind != STRACE_BK_JCC &&
	    y->kind != STRACE_BK_CALL)
		return 1;
	return !(y->flags & STRACE_BF_SAME_SYM) ==
	       !strace_dec_same_symbol(img, y->start + y->len - y->term_len,
				       y->target);
}

/*
 * Images of one struct strace_objcache share the summaries of a file's
 * blocks: the second image, at another address, gets each block from the
 * first one's decode (moved there), equal to a decode of its own bytes;
 * and a mapping that ends inside a block decodes it from what it has.
 */
TEST(blocks_shared_by_images)
{
	const uint64_t ba = 0x7f0000000000ull, bb = 0x7e0000000000ull;
	struct strace_image_opts o = {.size = sizeof(o)};
	struct strace_objcache *oc;
	struct strace_image *a, *b, *cut;
	struct strace_bcache *ca, *cb, *cc;
	size_t checked = 0, bad = 0;

	if (load_libc())
		SKIP("no libc");
	REQUIRE(strace_objcache_new(&oc) == 0);
	o.objects = oc;
	REQUIRE(strace_image_new(&o, &a) == 0);
	REQUIRE(strace_image_new(&o, &b) == 0);
	REQUIRE(tl_map_elf(a, LIBC, ba) > 0 && tl_map_elf(b, LIBC, bb) > 0);
	REQUIRE(strace_bcache_new(0, &ca) == 0);
	REQUIRE(strace_bcache_new(0, &cb) == 0);
	for (size_t i = 0; i < nins; i += 37) {
		uint64_t at = ins[i].addr - 0x7f0000000000ull;
		const struct strace_block *x, *y;
		struct strace_block xa, own;
		size_t avail;
		const uint8_t *code = strace_image_code(b, bb + at, &avail);

		x = strace_bcache_get(ca, a, ba + at);
		xa = *x;
		y = strace_bcache_get(cb, b, bb + at);
		strace_block_decode(code, avail, bb + at, 0, &own);
		if (!same_block(&xa, y, bb - ba) || !same_block(&own, y, 0) ||
		    !same_sym_right(a, &xa) || !same_sym_right(b, y)) {
			if (bad++ < 5)
				fprintf(stderr,
					"  +0x%llx: kind %u len %u here, %u %u "
					"there\n",
					(unsigned long long)at, y->kind, y->len,
					xa.kind, xa.len);
		}
		checked++;
	}
	CHECK_INT(bad, ==, 0);
	CHECK(checked > 1000);

	/* a mapping that ends 3 bytes into a block the others know whole */
	REQUIRE(strace_image_new(&o, &cut) == 0);
	REQUIRE(strace_bcache_new(0, &cc) == 0);
	for (size_t i = 0, n = 0; i < nins && n < 50; i += 101) {
		uint64_t at = ins[i].addr - 0x7f0000000000ull;
		uint64_t page = (ba + at) & ~4095ull, off;
		const struct strace_block *w, *y;
		struct strace_block own;
		const uint8_t *code;
		size_t avail;

		w = strace_bcache_get(ca, a, ba + at);
		if (w->len < 8 || w->kind == STRACE_BK_NOCODE)
			continue;
		/* the file offset of page, from the first image's bytes */
		code = strace_image_code(a, page, &avail);
		REQUIRE(code);
		off = (uint64_t)(code - strace_image_code(a, ba, &avail));
		REQUIRE(strace_image_add_file(cut, page, ba + at + 3 - page,
					      off, LIBC) == 0);
		y = strace_bcache_get(cc, cut, ba + at);
		code = strace_image_code(cut, ba + at, &avail);
		CHECK_INT(avail, ==, 3);
		strace_block_decode(code, avail, ba + at, 0, &own);
		CHECK(same_block(&own, y, 0));
		CHECK(y->len <= 3);
		strace_image_remove(cut, page, ba + at + 3 - page);
		n++;
	}
	strace_bcache_free(ca);
	strace_bcache_free(cb);
	strace_bcache_free(cc);
	strace_image_free(a);
	strace_image_free(b);
	strace_image_free(cut);
	strace_objcache_free(oc);
}

RUN_TESTS("test_decoder_block")
