/* Static C program: a loop, direct calls, a few syscalls. */
#include <stdio.h>
#include <string.h>

static int collatz(unsigned n)
{
	int steps = 0;

	while (n != 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

int main(void)
{
	char buf[64];
	int total = 0;

	for (unsigned i = 1; i < 200; i++)
		total += collatz(i);
	snprintf(buf, sizeof(buf), "total %d\n", total);
	fputs(buf, stdout);
	return strlen(buf) > 0 ? 0 : 1;
}
