/*
 * Several processes (ptsynth --ptrace only: QEMU cannot follow them):
 * forks two children; the first runs on in this image, the second execs
 * PROG (argv[1], e.g. the corpus's recurse). The parent waits for both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned work(unsigned n)
{
	unsigned h = 2166136261u;

	for (unsigned i = 0; i < n; i++)
		h = (h ^ (i & 0xff)) * 16777619u + (i % 7 == 0 ? i : 0);
	return h;
}

int main(int argc, char **argv)
{
	pid_t a, b;
	int sa = -1, sb = -1;

	if (argc < 2) {
		fprintf(stderr, "usage: fork PROG [ARGS...]\n");
		return 2;
	}
	a = fork();
	if (a == 0)
		_exit((int)(work(3000) & 0x3f));
	b = fork();
	if (b == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (a < 0 || b < 0)
		return 1;
	waitpid(a, &sa, 0);
	waitpid(b, &sb, 0);
	printf("fork: %u %d %d\n", work(500), WEXITSTATUS(sa), WEXITSTATUS(sb));
	return WEXITSTATUS(sb);
}
