/* setjmp/longjmp: returns that do not match calls. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

__attribute__((noinline)) static void deep(int n)
{
	if (n == 0)
		longjmp(env, 7);
	deep(n - 1);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	volatile int rounds = 0;
	int r;

	r = setjmp(env);
	if (rounds < 5) {
		rounds++;
		deep(10 + rounds);
	}
	printf("%d %d\n", r, rounds);
	return 0;
}
