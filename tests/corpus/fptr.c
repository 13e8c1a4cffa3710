/* Function pointers and qsort callbacks (indirect calls, returns). */
#include <stdio.h>
#include <stdlib.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

int main(void)
{
	int (*ops[])(int, int) = { add, sub, mul };
	int v[200], acc = 1;
	unsigned s = 12345;

	for (int i = 0; i < 200; i++) {
		s = s * 1103515245 + 12345;
		v[i] = (int)(s >> 16) % 1000;
	}
	qsort(v, 200, sizeof(v[0]), cmp_int);
	for (int i = 0; i < 300; i++)
		acc = ops[(unsigned)(acc + i) % 3](acc, i) & 0xffff;
	printf("%d %d %d\n", v[0], v[199], acc);
	return 0;
}
