/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_errors.c - the one error space (strace/error.h): every
 * code has its own value in its layer's block, its own short name and
 * its own text, and strace_strerror() and strace_error_name() give them
 * for the code negated or not; errno values and unknown codes get no name.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "strace/error.h"

struct code {
	int val;
	const char *name, *text;
};

static const struct code codes[] = {
#define X(ID, VAL, NAME, TEXT) {STRACE_E_##ID, NAME, TEXT},
	STRACE_ERRORS(X)
#undef X
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

TEST(every_code_named_and_described)
{
	for (size_t i = 0; i < NCODES; i++) {
		const struct code *c = &codes[i];
		CHECK(c->val > STRACE_E_BASE);
		CHECK_STR(strace_error_name(-c->val), c->name);
		CHECK_STR(strace_error_name(c->val), c->name);
		CHECK_STR(strace_strerror(-c->val), c->text);
		CHECK_STR(strace_strerror(c->val), c->text);
		for (size_t j = 0; j < i; j++) {
			CHECK(codes[j].val != c->val);
			CHECK(strcmp(codes[j].name, c->name) != 0);
			CHECK(strcmp(codes[j].text, c->text) != 0);
		}
		/* a short name is lower case, digits and '_' */
		for (const char *p = c->name; *p; p++)
			CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			      *p == '_');
	}
	printf("  %zu codes\n", NCODES);
}

TEST(errno_and_unknown_codes)
{
	CHECK_STR(strace_strerror(-ENOENT), strerror(ENOENT));
	CHECK(strace_error_name(-ENOENT) == NULL);
	CHECK(strace_error_name(0) == NULL);
	CHECK(strace_strerror(0) != NULL);
	CHECK(strace_error_name(-(STRACE_E_BASE + 999)) == NULL);
	CHECK_STR(strace_strerror(-(STRACE_E_BASE + 999)), "unknown error");
}

RUN_TESTS("test_errors")
