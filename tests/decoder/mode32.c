// SPDX-License-Identifier: MIT
/*
 * tests/decoder/mode32.c - a small program for 32-bit code (gcc -m32, PIC:
 * its PLT calls and data go through __x86.get_pc_thunk.*): direct calls,
 * indirect calls through a table, a switch (a jump table), returns that
 * the hardware compresses and, deeper than its 64-entry stack, some that
 * it does not; libc through the PLT. tests/decoder/e2e-mode32.sh traces it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int (*const ops[])(int, int) = {add, sub, mul};

__attribute__((noinline)) static int pick(int k, int x)
{
	switch (k % 6) {
	case 0: return x + 3;
	case 1: return x * 7;
	case 2: return x ^ 0x55;
	case 3: return x - 11;
	case 4: return x << 2;
	default: return x >> 1;
	}
}

/* deeper than the return stack: the outer returns are not compressed */
__attribute__((noinline)) static int deep(int n)
{
	if (n == 0)
		return 1;
	return deep(n - 1) + (n & 3);
}

int main(int argc, char **argv)
{
	char buf[64];
	int acc = argc;

	for (int i = 0; i < 40; i++) {
		acc = ops[i % 3](acc, i);
		acc = pick(i, acc);
	}
	acc += deep(100);
	snprintf(buf, sizeof(buf), "%d %s", acc, argv[0]);
	acc += (int)strlen(buf);
	if (argc > 1)
		acc += atoi(argv[1]);
	printf("mode32 %d\n", acc & 0xffff);
	return 0;
}
