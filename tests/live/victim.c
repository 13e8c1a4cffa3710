/* SPDX-License-Identifier: MIT */
/*
 * tests/live/victim.c - a process whose stacks are known, for the live
 * tests: the main thread blocks in main -> level1 -> level2 -> level3 ->
 * pause(), a second thread in thread_main -> tlevel1 -> pause(). It prints
 * the functions' addresses, then "ready", and with argument "vdso" also
 * writes its own vDSO (from AT_SYSINFO_EHDR and its maps) to the file
 * named by the second argument.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

__attribute__((noinline)) void level3(void);
__attribute__((noinline)) void level2(void);
__attribute__((noinline)) void level1(void);
__attribute__((noinline)) void tlevel1(void);

static volatile int sink;

__attribute__((noinline)) void level3(void)
{
	for (;;)
		pause();
}

__attribute__((noinline)) void level2(void)
{
	level3();
	sink++;
}

__attribute__((noinline)) void level1(void)
{
	level2();
	sink++;
}

__attribute__((noinline)) void tlevel1(void)
{
	for (;;)
		pause();
}

static void *thread_main(void *arg)
{
	(void)arg;
	tlevel1();
	sink++;
	return NULL;
}

static void dump_vdso(const char *out)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	char line[512];
	unsigned long lo, hi;
	FILE *m = fopen("/proc/self/maps", "r"), *o;

	while (m && fgets(line, sizeof(line), m)) {
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base) {
			o = fopen(out, "w");
			if (o) {
				fwrite((void *)lo, 1, hi - lo, o);
				fclose(o);
			}
			break;
		}
	}
	if (m)
		fclose(m);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 2 && !strcmp(argv[1], "vdso"))
		dump_vdso(argv[2]);
	pthread_create(&t, NULL, thread_main, NULL);
	printf("main %#lx\nlevel1 %#lx\nlevel2 %#lx\nlevel3 %#lx\n"
	       "tlevel1 %#lx\nthread_main %#lx\nready\n",
	       (unsigned long)(uintptr_t)main, (unsigned long)(uintptr_t)level1,
	       (unsigned long)(uintptr_t)level2, (unsigned long)(uintptr_t)level3,
	       (unsigned long)(uintptr_t)tlevel1,
	       (unsigned long)(uintptr_t)thread_main);
	fflush(stdout);
	level1();
	return 0;
}
