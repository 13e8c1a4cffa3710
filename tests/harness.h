/* SPDX-License-Identifier: MIT */
/*
 * tests/harness.h - the small test harness.
 *
 * A test program is TEST(name) functions, each registered once by its
 * definition, and RUN_TESTS("prog"), which runs them in file order.
 * Each prints one line: "PASS: prog/name", "FAIL: prog/name" (after the
 * failed checks, each with both values), or "SKIP: prog/name (why)".
 * tests/run.sh counts those lines across all programs.
 */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A test, registered by TEST() before main() runs (a constructor). */
struct th_case {
	const char *name;
	void (*fn)(void);
	int line; /* tests run in the order of their lines in the file */
	struct th_case *next;
};

extern struct th_case *th_cases;
extern int th_failed_checks;
extern const char *th_skip_reason;

#define TEST(name)                                                             \
	static void test_##name(void);                                         \
	static struct th_case th_case_##name = {#name, test_##name, __LINE__,  \
						NULL};                         \
	__attribute__((constructor)) static void th_add_##name(void)          \
	{                                                                      \
		th_case_##name.next = th_cases;                                \
		th_cases = &th_case_##name;                                    \
	}                                                                      \
	static void test_##name(void)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "  %s:%d: check failed: %s\n",         \
				__FILE__, __LINE__, #cond);                   \
			th_failed_checks++;                                    \
		}                                                              \
	} while (0)

#define CHECK_INT(a, op, b)                                                    \
	do {                                                                   \
		long long va_ = (long long)(a), vb_ = (long long)(b);          \
		if (!(va_ op vb_)) {                                           \
			fprintf(stderr,                                        \
				"  %s:%d: check failed: %s %s %s "            \
				"(%lld vs %lld)\n",                             \
				__FILE__, __LINE__, #a, #op, #b, va_, vb_);    \
			th_failed_checks++;                                    \
		}                                                              \
	} while (0)

#define CHECK_U64(a, op, b)                                                    \
	do {                                                                   \
		unsigned long long va_ = (unsigned long long)(a),              \
				   vb_ = (unsigned long long)(b);              \
		if (!(va_ op vb_)) {                                           \
			fprintf(stderr,                                        \
				"  %s:%d: check failed: %s %s %s "            \
				"(0x%llx vs 0x%llx)\n",                         \
				__FILE__, __LINE__, #a, #op, #b, va_, vb_);    \
			th_failed_checks++;                                    \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *sa_ = (a), *sb_ = (b);                             \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                   \
			fprintf(stderr,                                        \
				"  %s:%d: check failed: %s == %s "            \
				"(\"%s\" vs \"%s\")\n",                         \
				__FILE__, __LINE__, #a, #b,                    \
				sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");   \
			th_failed_checks++;                                    \
		}                                                              \
	} while (0)

/* Abort the current test (after a failed precondition). */
#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "  %s:%d: required: %s\n", __FILE__,   \
				__LINE__, #cond);                              \
			th_failed_checks++;                                    \
			return;                                                \
		}                                                              \
	} while (0)

/* Skip the current test, naming why. */
#define SKIP(why)                                                              \
	do {                                                                   \
		th_skip_reason = (why);                                        \
		return;                                                        \
	} while (0)

/*
 * RUN_TESTS("prog") - main(): every TEST() of the file, in the order of
 * the file; with an argument, only the tests whose name contains it.
 */
#define RUN_TESTS(prog)                                                        \
	int th_failed_checks;                                                  \
	const char *th_skip_reason;                                            \
	struct th_case *th_cases;                                              \
	static int th_by_line(const void *a, const void *b)                    \
	{                                                                      \
		const struct th_case *x = *(const struct th_case *const *)a;   \
		const struct th_case *y = *(const struct th_case *const *)b;   \
		return (x->line > y->line) - (x->line < y->line);              \
	}                                                                      \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		struct th_case *v[1024];                                       \
		size_t n = 0;                                                  \
		int failed = 0;                                                \
		for (struct th_case *c = th_cases; c && n < 1024; c = c->next) \
			v[n++] = c;                                            \
		qsort(v, n, sizeof(v[0]), th_by_line);                         \
		for (size_t i = 0; i < n; i++) {                               \
			if (argc > 1 && !strstr(v[i]->name, argv[1]))          \
				continue;                                      \
			th_failed_checks = 0;                                  \
			th_skip_reason = NULL;                                 \
			v[i]->fn();                                            \
			if (th_failed_checks) {                                \
				printf("FAIL: %s/%s\n", prog, v[i]->name);     \
				failed++;                                      \
			} else if (th_skip_reason) {                           \
				printf("SKIP: %s/%s (%s)\n", prog,             \
				       v[i]->name, th_skip_reason);            \
			} else {                                               \
				printf("PASS: %s/%s\n", prog, v[i]->name);     \
			}                                                      \
			fflush(stdout);                                        \
		}                                                              \
		return failed ? 1 : 0;                                         \
	}

#endif /* TESTS_HARNESS_H */
