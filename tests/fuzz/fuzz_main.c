/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_main.c - replay driver for a libFuzzer target, for
 * make check: runs every file of the corpus directories given (default:
 * tests/fuzz/corpus/FUZZ_CORPUS, compiled in, as FUZZ_TARGET, the
 * target's name), each followed by deterministic mutants (bit flips, byte
 * garbage, truncation, splices), MUTATIONS of them per directory spread
 * over its files (at least one each: make check stays as fast as the
 * corpus grows), and prints one PASS line per file. A crash or a sanitizer
 * report fails the run.
 *
 * FUZZ_REPRO=1 in the environment also runs tests/fuzz/repro/FUZZ_CORPUS:
 * reproducers of bugs that are not fixed yet, as they are (no mutants),
 * each in a process of its own, one PASS or FAIL line each.
 *
 * An input that runs longer than FUZZ_TIMEOUT seconds (default 20) is a
 * hang: a FAIL line, and the run stops. The input that crashed or hung,
 * mutant or not, is saved to $O/tests/fuzz_FUZZ_TARGET.failed (O from the
 * environment, default build), where build/fuzz/fuzz_FUZZ_TARGET (make
 * fuzz) or this program (given the file) runs it again.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#if !defined(FUZZ_TARGET) || !defined(FUZZ_CORPUS)
#error "FUZZ_TARGET and FUZZ_CORPUS (names, e.g. \"perf\") must be defined"
#endif
#define FUZZ_CORPUS_DIR "tests/fuzz/corpus/" FUZZ_CORPUS
#define FUZZ_REPRO_DIR "tests/fuzz/repro/" FUZZ_CORPUS

#ifndef MUTATIONS
#define MUTATIONS 600
#endif

#define HANG_EXIT 3 /* exit status after a hang (its FAIL line written) */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* What runs now, for the hang and crash handlers (set before each input;
 * only async-signal-safe calls read it). */
static struct {
	char name[512];      /* "fuzz/<target>/<file>" */
	char line[640];      /* the FAIL line of a hang, ready to write */
	size_t line_len;
	char save[4096];     /* where the failing input goes */
	const uint8_t *data; /* the input */
	size_t size;
} cur;

static void save_input(void)
{
	int fd = open(cur.save, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	for (size_t off = 0; off < cur.size;) {
		ssize_t n = write(fd, cur.data + off, cur.size - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
}

static void on_alarm(int sig)
{
	ssize_t rc;

	(void)sig;
	save_input();
	rc = write(1, cur.line, cur.line_len);
	(void)rc;
	_exit(HANG_EXIT);
}

/* A crash without a sanitizer: keep the input, then die of the signal as
 * before. (A sanitizer has its own handlers, which report more: then its
 * death callback keeps the input.) */
static void on_crash(int sig)
{
	save_input();
	signal(sig, SIG_DFL);
	raise(sig);
}

void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void on_sanitizer_death(void)
{
	save_input();
}

static unsigned timeout_s(void)
{
	const char *s = getenv("FUZZ_TIMEOUT");
	long v = s ? strtol(s, NULL, 10) : 0;
	return v > 0 && v < 100000 ? (unsigned)v : 20;
}

static void run_input(const uint8_t *data, size_t size, int mutant)
{
	int n;

	cur.data = data;
	cur.size = size;
	n = mutant ? snprintf(cur.line, sizeof(cur.line),
			      "FAIL: %s (mutant %d hangs: more than %u s; "
			      "saved to %s)\n",
			      cur.name, mutant, timeout_s(), cur.save)
		   : snprintf(cur.line, sizeof(cur.line),
			      "FAIL: %s (hangs: more than %u s)\n", cur.name,
			      timeout_s());
	cur.line_len = n < 0 ? 0 : (size_t)n < sizeof(cur.line)
					    ? (size_t)n
					    : sizeof(cur.line) - 1;
	alarm(timeout_s());
	LLVMFuzzerTestOneInput(data, size);
	alarm(0);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n > 0 ? (size_t)n : 0;
	return buf;
}

static void mutate(uint8_t *buf, size_t *len, const uint8_t *orig,
		   size_t olen)
{
	memcpy(buf, orig, olen);
	*len = olen;
	switch (next_rand() % 5) {
	case 0: /* flip a few bits */
		for (int i = 0, k = 1 + (int)(next_rand() % 8); i < k; i++)
			buf[next_rand() % olen] ^= (uint8_t)(1u << (next_rand() % 8));
		break;
	case 1: /* a run of garbage */ {
		size_t at = next_rand() % olen, n = 1 + next_rand() % 64;
		for (size_t i = at; i < at + n && i < olen; i++)
			buf[i] = (uint8_t)next_rand();
		break;
	}
	case 2: /* truncate */
		*len = next_rand() % olen;
		break;
	case 3: /* an interesting integer in a header-like place */ {
		static const uint64_t vals[] = {0, 1, 0x7f, 0xff, 0xffff,
						0xffffffff, UINT64_MAX,
						1ull << 40};
		size_t at = olen >= 8 ? (next_rand() % (olen / 8)) * 8 : 0;
		uint64_t v = vals[next_rand() % 8];
		memcpy(buf + at, &v, at + 8 <= olen ? 8 : olen - at);
		break;
	}
	default: /* copy one region over another */ {
		size_t a = next_rand() % olen, b = next_rand() % olen;
		size_t n = 1 + next_rand() % 256;
		if (a + n > olen)
			n = olen - a;
		if (b + n > olen)
			n = olen - b;
		memmove(buf + b, buf + a, n);
		break;
	}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir, sorted (the mutants then do not depend on
 * the directory's order). Returns the count, -1 if dir cannot be read. */
static int list_dir(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char **nv;
		if (de->d_name[0] == '.')
			continue;
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv || !(nv[n] = strdup(de->d_name))) {
			free(nv ? nv : v);
			closedir(d);
			return -1;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

/* One reproducer, in a child process: a hang or a crash fails it, not the
 * run. Returns 0 if it passed. */
static int run_isolated(const uint8_t *data, size_t len)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		run_input(data, len, 0);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == HANG_EXIT)) {
		if (WIFSIGNALED(st))
			printf("FAIL: %s (killed by signal %d)\n", cur.name,
			       WTERMSIG(st));
		else
			printf("FAIL: %s (crashed: exit status %d; the "
			       "report is on standard error)\n",
			       cur.name, WEXITSTATUS(st));
	}
	return -1;
}

/* Every file of dir, with mutants (mutations of them in all), or each in a
 * process of its own (isolate). A directory that is missing or empty fails
 * unless optional. */
static int run_dir(const char *dir, int mutations, int optional, int isolate)
{
	char **names = NULL;
	int n = list_dir(dir, &names), count = 0, failed = 0;

	if (n < 0) {
		if (optional)
			return 0;
		printf("FAIL: fuzz/" FUZZ_TARGET " (%s: cannot read the "
		       "directory)\n",
		       dir);
		return 1;
	}
	if (n && mutations)
		mutations = mutations / n ? mutations / n : 1;
	for (int k = 0; k < n; k++) {
		char path[4096];
		size_t len, mlen;
		uint8_t *orig, *buf;

		snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
		snprintf(cur.name, sizeof(cur.name), "fuzz/" FUZZ_TARGET "/%s",
			 names[k]);
		orig = slurp(path, &len);
		if (!orig || !len) {
			free(orig);
			continue;
		}
		count++;
		if (isolate) {
			if (run_isolated(orig, len) == 0)
				printf("PASS: %s\n", cur.name);
			else
				failed = 1;
			free(orig);
			continue;
		}
		run_input(orig, len, 0);
		buf = malloc(len);
		for (int i = 0; buf && i < mutations; i++) {
			mutate(buf, &mlen, orig, len);
			run_input(buf, mlen, i + 1);
		}
		free(buf);
		free(orig);
		if (mutations)
			printf("PASS: %s (and %d mutants)\n", cur.name,
			       mutations);
		else
			printf("PASS: %s\n", cur.name);
		fflush(stdout);
	}
	for (int k = 0; k < n; k++)
		free(names[k]);
	free(names);
	if (!count && !optional)
		printf("FAIL: fuzz/" FUZZ_TARGET " (%s: no inputs)\n", dir);
	return failed || (!count && !optional);
}

/* Files given on the command line: run as they are. */
static int run_file(const char *path)
{
	size_t len;
	uint8_t *data = slurp(path, &len);

	if (!data) {
		printf("FAIL: %s (cannot read it)\n", path);
		return 1;
	}
	snprintf(cur.name, sizeof(cur.name), "%s", path);
	run_input(data, len, 0);
	free(data);
	printf("PASS: %s\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *o = getenv("O"), *repro = getenv("FUZZ_REPRO");
	struct stat st;
	int rc = 0;

	snprintf(cur.save, sizeof(cur.save), "%s/tests/fuzz_" FUZZ_TARGET
		 ".failed", o && *o ? o : "build");
	signal(SIGALRM, on_alarm);
	if (__sanitizer_set_death_callback) {
		__sanitizer_set_death_callback(on_sanitizer_death);
	} else {
		signal(SIGSEGV, on_crash);
		signal(SIGBUS, on_crash);
		signal(SIGABRT, on_crash);
		signal(SIGFPE, on_crash);
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);

	if (argc < 2) {
		rc = run_dir(FUZZ_CORPUS_DIR, MUTATIONS, 0, 0);
		if (repro && *repro && strcmp(repro, "0") != 0)
			rc |= run_dir(FUZZ_REPRO_DIR, 0, 1, 1);
		return rc;
	}
	for (int i = 1; i < argc; i++)
		rc |= stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)
			      ? run_dir(argv[i], MUTATIONS, 0, 0)
			      : run_file(argv[i]);
	return rc;
}
