/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_sysnr.c - which system call a `syscall` makes
 * and the names of the numbers (decoder/sysnr.c: strace_syscall_nr(),
 * strace_syscall_name() in decoder.h) alone.
 *
 * The names against the x86-64 system call table: the kernel's
 * asm/unistd_64.h read at test time (every __NR_ in it, and nothing
 * where it has none), and fixed numbers of the x86-64 ABI that never
 * change. The numbers on hand-written wrappers assembled at test time
 * (cc -c of a .S file), each with the answer the sweep must give: a mov
 * right before, a few register moves between, and what must make the
 * number unknown (a call, a load, a branch landing between, code after
 * a jump, a write of part of %eax, no syscall at the address, no
 * symbol).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "decoder_testlib.h"

#define UNISTD "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

TEST(names_against_unistd_64)
{
	char line[256], name[128];
	unsigned char seen[4096] = {0};
	long nr;
	int n = 0;
	FILE *f = fopen(UNISTD, "r");

	if (!f)
		SKIP("no " UNISTD);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "#define __NR_%127s %ld", name, &nr) != 2 ||
		    nr < 0 || nr >= 4096)
			continue;
		CHECK_STR(strace_syscall_name(nr), name);
		seen[nr] = 1;
		n++;
	}
	fclose(f);
	printf("  %d system calls of " UNISTD "\n", n);
	CHECK_INT(n, >=, 300);
	for (nr = 0; nr < 4096; nr++)
		if (!seen[nr])
			CHECK(strace_syscall_name(nr) == NULL);
}

/* The x86-64 ABI's numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
TEST(names_fixed)
{
	CHECK_STR(strace_syscall_name(0), "read");
	CHECK_STR(strace_syscall_name(1), "write");
	CHECK_STR(strace_syscall_name(2), "open");
	CHECK_STR(strace_syscall_name(39), "getpid");
	CHECK_STR(strace_syscall_name(59), "execve");
	CHECK_STR(strace_syscall_name(60), "exit");
	CHECK_STR(strace_syscall_name(202), "futex");
	CHECK_STR(strace_syscall_name(231), "exit_group");
	CHECK_STR(strace_syscall_name(435), "clone3");
	/* 512-547 are x32's; none below 0 */
	CHECK(strace_syscall_name(-1) == NULL);
	CHECK(strace_syscall_name(-231) == NULL);
	CHECK(strace_syscall_name(1L << 40) == NULL);
}

/* Each wrapper: its name, the number the sweep must find (-1: none). */
static const struct {
	const char *name;
	long want;
} wrappers[] = {
	{"w_plain", 1},       {"w_regmoves", 60},   {"w_movabs", 39},
	{"w_endbr", 231},     {"w_cond_before", 2}, {"w_last_mov", 59},
	{"w_call", -1},       {"w_load", -1},       {"w_xor", 0},
	{"w_branch_in", -1},  {"w_after_jmp", -1},  {"w_mov_rax_hi", -1},
	{"w_mov_ax", -1},     {"w_pop_rax", -1},
};

static const char wrappers_src[] =
	".text\n"
	".macro fn name\n .globl \\name\n .type \\name,@function\n"
	"\\name:\n.endm\n"
	"fn w_plain\n mov $1, %eax\n syscall\n ret\n"
	/* moves of other registers between */
	"fn w_regmoves\n mov $60, %eax\n mov %rdi, %rsi\n mov %rcx, %r10\n"
	" xor %edx, %edx\n syscall\n ret\n"
	/* REX.W mov with a zero high half */
	"fn w_movabs\n movabs $39, %rax\n syscall\n ret\n"
	"fn w_endbr\n endbr64\n push %rbx\n mov $231, %eax\n syscall\n"
	" pop %rbx\n ret\n"
	/* a branch before the mov, landing before it */
	"fn w_cond_before\n test %edi, %edi\n je 1f\n nop\n1: mov $2, %eax\n"
	" syscall\n ret\n"
	/* the last mov wins */
	"fn w_last_mov\n mov $1, %eax\n mov $59, %eax\n syscall\n ret\n"
	"fn w_call\n mov $1, %eax\n call w_plain\n syscall\n ret\n"
	"fn w_load\n mov (%rdi), %eax\n syscall\n ret\n"
	/* xor %eax,%eax: 0 (read), as glibc's read wrapper sets it */
	"fn w_xor\n xor %eax, %eax\n syscall\n ret\n"
	/* another path reaches the syscall with another %eax */
	"fn w_branch_in\n mov $1, %eax\n test %edi, %edi\n je 1f\n nop\n"
	"1: syscall\n ret\n"
	/* code after a jmp is reached by a jump only */
	"fn w_after_jmp\n mov $1, %eax\n jmp 2f\n2: syscall\n ret\n"
	"fn w_mov_rax_hi\n movabs $0x100000001, %rax\n syscall\n ret\n"
	/* a 16-bit mov changes %ax only */
	"fn w_mov_ax\n mov $0x10, %ax\n syscall\n ret\n"
	"fn w_pop_rax\n mov $1, %eax\n pop %rax\n syscall\n ret\n"
	"fn w_nosyscall\n mov $1, %eax\n nop\n nop\n ret\n";

TEST(numbers_of_wrappers)
{
	char src[600], so[600], cmd[1400], *out;
	struct strace_image *img;
	const uint64_t bias = 0x7f1000000000ull;

	if (!tl_have("cc") || !tl_have("nm"))
		SKIP("no cc or nm");
	snprintf(src, sizeof(src), "%s/sysnr.S", tl_tmpdir());
	snprintf(so, sizeof(so), "%s/sysnr.so", tl_tmpdir());
	{
		FILE *f = fopen(src, "w");
		REQUIRE(f);
		fputs(wrappers_src, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd),
		 "cc -shared -nostdlib -Wl,--hash-style=gnu -o %s %s 2>&1", so,
		 src);
	if (system(cmd) != 0)
		SKIP("cannot assemble the wrappers");
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, so, bias) > 0);
	snprintf(cmd, sizeof(cmd), "nm %s", so);
	out = tl_run(cmd);
	REQUIRE(out);
	for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++) {
		char pat[64], *p;
		unsigned long long a;
		uint8_t code[64];
		size_t i;

		snprintf(pat, sizeof(pat), " T %s\n", wrappers[k].name);
		p = strstr(out, pat);
		REQUIRE(p && p - out >= 16);
		a = strtoull(p - 16, NULL, 16) + bias;
		/* the syscall: the first 0f 05 of the function */
		REQUIRE(strace_image_read(img, a, code, sizeof(code)) ==
			sizeof(code));
		for (i = 0; i + 1 < sizeof(code); i++)
			if (code[i] == 0x0f && code[i + 1] == 0x05)
				break;
		REQUIRE(i + 1 < sizeof(code));
		if (strace_syscall_nr(img, a + i) != wrappers[k].want)
			fprintf(stderr, "  %s: %ld, want %ld\n",
				wrappers[k].name, strace_syscall_nr(img, a + i),
				wrappers[k].want);
		CHECK_INT(strace_syscall_nr(img, a + i), ==, wrappers[k].want);
		/* the address must be the syscall's */
		CHECK_INT(strace_syscall_nr(img, a + i + 1), ==, -1);
		CHECK_INT(strace_syscall_nr(img, a + i - 1), ==, -1);
	}
	{
		/* no syscall at any address of w_nosyscall; none mapped */
		char *p = strstr(out, " T w_nosyscall\n");
		unsigned long long a;
		REQUIRE(p && p - out >= 16);
		a = strtoull(p - 16, NULL, 16) + bias;
		for (int i = 0; i < 8; i++)
			CHECK_INT(strace_syscall_nr(img, a + i), ==, -1);
		CHECK_INT(strace_syscall_nr(img, 0x1000), ==, -1);
	}
	free(out);
	strace_image_free(img);
	unlink(src);
	unlink(so);
}

RUN_TESTS("test_decoder_sysnr")
