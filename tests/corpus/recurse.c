/* Deep recursion: deeper than the 64-entry return-compression stack. */
#include <stdio.h>

__attribute__((noinline)) static long down(int n, long acc)
{
	long r;

	if (n == 0)
		return acc;
	r = down(n - 1, acc + (n & 7));
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r + 1;
}

__attribute__((noinline)) static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
	printf("%ld %d\n", down(3000, 0), fib(16));
	return 0;
}
