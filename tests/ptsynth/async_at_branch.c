/* Faults right at the target of a jump, a call, a return and a taken
 * conditional branch: the interrupt comes before anything ran there (PT:
 * the branch, then FUP at its target and TIP.PGD), so no decoded block
 * starts at the target (tests/ptsynth/e2e-async-branch.sh). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf env;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

int main(void)
{
	struct sigaction sa;
	volatile int n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	if (!sigsetjmp(env, 1))
		__asm__ volatile("jmp 1f\n1: movb $0, (%0)" ::"r"((void *)0) : "memory");
	else
		n++;
	if (!sigsetjmp(env, 1))
		__asm__ volatile("call 1f\n1: movb $0, (%0)" ::"r"((void *)0) : "memory");
	else
		n++;
	if (!sigsetjmp(env, 1))
		__asm__ volatile("lea 1f(%%rip), %%rcx\npush %%rcx\nret\n1: movb $0, (%0)"
				 ::"r"((void *)0) : "rcx", "memory");
	else
		n++;
	if (!sigsetjmp(env, 1))
		__asm__ volatile("xor %%ecx, %%ecx\njz 1f\nnop\n1: movb $0, (%0)"
				 ::"r"((void *)0) : "rcx", "cc", "memory");
	else
		n++;
	printf("%d\n", n);
	return n != 4;
}
