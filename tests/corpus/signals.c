/* Signal handlers: raise, kill, and a fault recovered with siglongjmp. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static sigjmp_buf env;

static void on_usr(int sig)
{
	hits += sig;
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

int main(void)
{
	struct sigaction sa;
	volatile int *volatile bad = NULL;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	raise(SIGUSR1);
	kill(getpid(), SIGUSR2);
	for (int i = 0; i < 3; i++)
		if (!sigsetjmp(env, 1))
			*bad = i; /* faults: the handler jumps back */
	printf("%d\n", (int)hits);
	return 0;
}
