/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_control_lines.c - a control FIFO's bytes cut into
 * command lines (cli/control_lines.h), fed whole and in every cut:
 *   - commands come out without their newline, empty lines skipped;
 *   - a line longer than a command is dropped whole, its tail never a
 *     command (the old reader ran the bytes after its first 1023);
 *   - a line with a NUL is dropped whole, and the next line comes out
 *     (the old reader stalled at the NUL);
 *   - bytes without a newline past CONTROL_UNENDED_MAX: given up.
 */
#include "../harness.h"
#include "cli/control_lines.h"

/* What the lines were, as one string: "OK:list|LONG|NUL|". */
struct seen {
	char s[8192];
	size_t len;
};

static void note(void *arg, const char *line, enum control_line_kind kind)
{
	struct seen *v = arg;
	int w = snprintf(v->s + v->len, sizeof(v->s) - v->len, "%s%s|",
			 kind == CONTROL_LINE_OK	? "OK:"
			 : kind == CONTROL_LINE_LONG ? "LONG"
						     : "NUL",
			 line);

	if (w > 0 && (size_t)w < sizeof(v->s) - v->len)
		v->len += (size_t)w;
}

/* in fed in pieces of step bytes (0: whole); the lines, into v. */
static int feed(const char *in, size_t n, size_t step, struct seen *v)
{
	static struct control_lines cl;
	int rc = 0;

	memset(&cl, 0, sizeof(cl));
	memset(v, 0, sizeof(*v));
	if (!step)
		step = n ? n : 1;
	for (size_t at = 0; at < n && rc == 0; at += step)
		rc = control_lines_feed(&cl, in + at,
					n - at < step ? n - at : step, note, v);
	return rc;
}

/* Every cut gives the same lines as the whole. */
static void check_cuts(const char *in, size_t n, const char *want)
{
	static const size_t steps[] = {0, 1, 2, 3, 7, 1000, 1023, 1024, 4096};
	struct seen v;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		CHECK_INT(feed(in, n, steps[i], &v), ==, 0);
		if (strcmp(v.s, want)) {
			fprintf(stderr, "  cut every %zu bytes:\n", steps[i]);
			CHECK_STR(v.s, want);
		}
	}
}

TEST(commands_and_empty_lines)
{
	static const char in[] = "list\n\nload x.so a b\n  \nunload x\npartial";

	check_cuts(in, sizeof(in) - 1, "OK:list|OK:load x.so a b|OK:  |OK:unload x|");
}

TEST(long_line_dropped_whole)
{
	static char in[4096];
	size_t n = 0;

	/* 1023 bytes fit; 2000 with a command after the 1023rd do not */
	memset(in, 'a', 1023);
	n = 1023;
	in[n++] = '\n';
	memset(in + n, 'x', 1023);
	n += 1023;
	n += (size_t)sprintf(in + n, "load /tmp/evil.so");
	memset(in + n, ' ', 2000 - 1023 - 17);
	n += 2000 - 1023 - 17;
	in[n++] = '\n';
	n += (size_t)sprintf(in + n, "list\n");
	{
		char want[1200];
		snprintf(want, sizeof(want), "OK:%.*s|LONG|OK:list|", 1023, in);
		check_cuts(in, n, want);
	}
}

TEST(nul_line_dropped_whole)
{
	static const char in[] = "li\0st\nlist\n";
	static char mixed[3000];

	check_cuts(in, sizeof(in) - 1, "NUL|OK:list|");
	/* long and with a NUL past the buffer: a NUL line, whatever the cut */
	memset(mixed, 'x', 2000);
	mixed[1500] = '\0';
	memcpy(mixed + 2000, "\nlist\n", 6);
	check_cuts(mixed, 2006, "NUL|OK:list|");
}

TEST(endless_stream_given_up)
{
	static struct control_lines cl;
	static char zeros[65536];
	struct seen v;
	size_t fed = 0;
	int rc = 0;

	memset(&v, 0, sizeof(v));
	CHECK_INT(control_lines_feed(&cl, "list\n", 5, note, &v), ==, 0);
	while (rc == 0 && fed < 4 * CONTROL_UNENDED_MAX) {
		rc = control_lines_feed(&cl, zeros, sizeof(zeros), note, &v);
		fed += sizeof(zeros);
	}
	CHECK_INT(rc, ==, -1);
	CHECK_U64(fed, >, CONTROL_UNENDED_MAX);
	CHECK_U64(fed, <=, CONTROL_UNENDED_MAX + sizeof(zeros));
	CHECK_STR(v.s, "OK:list|");
	/* given up for good, even with a newline */
	CHECK_INT(control_lines_feed(&cl, "\nlist\n", 6, note, &v), ==, -1);
	/* a line just within the bound still ends */
	memset(&v, 0, sizeof(v));
	memset(&cl, 0, sizeof(cl));
	for (fed = 0; fed + sizeof(zeros) <= CONTROL_UNENDED_MAX;
	     fed += sizeof(zeros))
		CHECK_INT(control_lines_feed(&cl, zeros, sizeof(zeros), note, &v),
			  ==, 0);
	CHECK_INT(control_lines_feed(&cl, "\nlist\n", 6, note, &v), ==, 0);
	CHECK_STR(v.s, "NUL|OK:list|");
}

RUN_TESTS("test_control_lines")
