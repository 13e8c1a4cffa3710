/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_control.c - fuzz target over the control protocol's
 * lines (cli/control_lines.c, what `--control FIFO` reads before a
 * command runs): whatever the bytes and however they arrive, the lines
 * handed over are the same, none holds a NUL or a newline or is longer
 * than a command may be, and a stream without line ends is given up, not
 * kept in memory.
 *
 * The input: byte 0 picks the size of the pieces the rest is fed in (1
 * to 256 bytes, as reads of a FIFO cut it), the rest is the stream. The
 * lines it gives are compared with those of the same stream fed whole,
 * and with the rules applied here to the stream split at its newlines
 * (an empty line skipped, one holding a NUL dropped as such, one of
 * CONTROL_LINE_MAX bytes or more dropped as long, every other a
 * command): a difference, or a line that breaks the rules, aborts (a
 * finding).
 *
 * Built two ways, like fuzz_perf.c: for libFuzzer (make fuzz), and with
 * fuzz_main.c for make check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/control_lines.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What one feeding gave: a hash of its lines in order, and their count. */
struct seen {
	uint64_t hash;
	size_t n;
};

static void take(void *arg, const char *line, enum control_line_kind kind)
{
	struct seen *s = arg;
	size_t len = strlen(line);

	if (kind == CONTROL_LINE_OK &&
	    (!len || len >= CONTROL_LINE_MAX || memchr(line, '\n', len)))
		abort(); /* a command the rules forbid */
	if (kind != CONTROL_LINE_OK && len)
		abort(); /* a dropped line's bytes handed over */
	s->hash = (s->hash ^ (uint64_t)kind) * 0x100000001b3ull;
	for (size_t i = 0; i < len; i++)
		s->hash = (s->hash ^ (unsigned char)line[i]) * 0x100000001b3ull;
	s->hash = (s->hash ^ 0xff) * 0x100000001b3ull;
	s->n++;
}

/* The rules, applied to the stream split at its newlines (an unended
 * last line is no line yet). */
static void rules(const char *p, size_t n, struct seen *s)
{
	static char line[CONTROL_LINE_MAX];

	s->hash = 0xcbf29ce484222325ull;
	s->n = 0;
	for (const char *end; (end = memchr(p, '\n', n)); n -= (size_t)(end - p) + 1,
							  p = end + 1) {
		size_t len = (size_t)(end - p);
		if (!len)
			continue;
		if (memchr(p, 0, len)) {
			take(s, "", CONTROL_LINE_NUL);
		} else if (len >= CONTROL_LINE_MAX) {
			take(s, "", CONTROL_LINE_LONG);
		} else {
			memcpy(line, p, len);
			line[len] = 0;
			take(s, line, CONTROL_LINE_OK);
		}
	}
}

/* The stream fed in pieces of step bytes; returns what the feed said last
 * (0, or -1: given up). */
static int feed(const char *p, size_t n, size_t step, struct seen *s)
{
	struct control_lines *cl = calloc(1, sizeof(*cl));
	int rc = 0;

	if (!cl)
		abort();
	s->hash = 0xcbf29ce484222325ull;
	s->n = 0;
	for (size_t off = 0; off < n && rc == 0; off += step)
		rc = control_lines_feed(cl, p + off,
					n - off < step ? n - off : step, take,
					s);
	free(cl);
	return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen whole, cut, want;
	int a, b;

	if (size < 1)
		return 0;
	a = feed((const char *)data + 1, size - 1, size, &whole);
	b = feed((const char *)data + 1, size - 1, (size_t)data[0] + 1, &cut);
	if (a != b || whole.n != cut.n || whole.hash != cut.hash)
		abort();
	/* (a stream is given up only past CONTROL_UNENDED_MAX bytes without
	 * a newline, more than an input here holds) */
	if (size - 1 <= CONTROL_UNENDED_MAX) {
		rules((const char *)data + 1, size - 1, &want);
		if (a || want.n != whole.n || want.hash != whole.hash)
			abort();
	}
	return 0;
}
