/* Tail calls: built with -O2 so calls in tail position become jumps. */
#include <stdio.h>

__attribute__((noinline)) int even(unsigned n);
__attribute__((noinline)) int odd(unsigned n)
{
	if (n == 0)
		return 0;
	return even(n - 1);
}

__attribute__((noinline)) int even(unsigned n)
{
	if (n == 0)
		return 1;
	return odd(n - 1);
}

__attribute__((noinline)) static int step(int (*next)(unsigned), unsigned n)
{
	return next(n); /* indirect tail call */
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d %d\n", even(1001 + (unsigned)argc), step(odd, 77));
	return 0;
}
