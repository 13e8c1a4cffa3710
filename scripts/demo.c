/* scripts/demo.c - the program `make demo` traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* called once: the compiler inlines it into main (-O1), and ptrace-read
 * --inline shows it as a frame of its own */
static void sort_values(int *v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] = (i * 7919) % 31;
	qsort(v, (size_t)n, sizeof(v[0]), cmp_int);
}

int main(void)
{
	int v[16];
	char buf[64];

	sort_values(v, 16);
	snprintf(buf, sizeof(buf), "min %d max %d fib %u", v[0], v[15], fib(12));
	puts(buf);
	return (int)strlen(buf) == 0;
}
