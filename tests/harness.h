/* SPDX-License-Identifier: MIT */
/*
 * tests/harness.h - the small test harness.
 *
 * A test program is a list of TEST(name) functions run by RUN_TESTS().
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

struct th_case {
	const char *name;
	void (*fn)(void);
};

extern int th_failed_checks;
extern const char *th_skip_reason;

#define TEST(name) static void test_##name(void)

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

#define T(name) {#name, test_##name}

#define RUN_TESTS(prog, ...)                                                   \
	int th_failed_checks;                                                  \
	const char *th_skip_reason;                                            \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		static const struct th_case cases[] = {__VA_ARGS__};           \
		int failed = 0;                                                \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]);       \
		     i++) {                                                    \
			if (argc > 1 && !strstr(cases[i].name, argv[1]))       \
				continue;                                      \
			th_failed_checks = 0;                                  \
			th_skip_reason = NULL;                                 \
			cases[i].fn();                                         \
			if (th_failed_checks) {                                \
				printf("FAIL: %s/%s\n", prog, cases[i].name);  \
				failed++;                                      \
			} else if (th_skip_reason) {                           \
				printf("SKIP: %s/%s (%s)\n", prog,             \
				       cases[i].name, th_skip_reason);         \
			} else {                                               \
				printf("PASS: %s/%s\n", prog, cases[i].name);  \
			}                                                      \
			fflush(stdout);                                        \
		}                                                              \
		return failed ? 1 : 0;                                         \
	}

#endif /* TESTS_HARNESS_H */
