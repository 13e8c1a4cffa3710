/* SPDX-License-Identifier: MIT */
/*
 * tests/view/hostile_ring.c - a ring whose names would inject into a
 * terminal or split a line: symbols, a thread, a process, a DSO and a
 * system call named with ESC sequences, newlines, CR, DEL, C1 controls and
 * bad UTF-8, and calls between them (tests/view/e2e-hostile-names.sh).
 *
 *   hostile_ring RING [OBJECT LO LEN]
 *
 * With OBJECT, it is the DSO (its path as it is, hostile or not), and its
 * code [LO, LO + LEN) (its own addresses) is named as run, for -f
 * coverage and lcov.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/event.h"
#include "strace/ring.h"

#define PID 4242
#define BASE 0x400000ull
#define STEP 0x100ull

static const char *const syms[] = {
	"main",
	"esc\x1b[31mred\x1b[0m",
	"clear\x1b[2J\x1b[H",
	"new\nline 99",
	"cr\rret",
	"del\x7f",
	"tab\tbed",
	"bad\xff\xc3utf8",
	"c1\xc2\x9b" "31mcsi",
	"utf8_\xc3\xa9_ok", /* valid UTF-8: shown as it is */
};
#define NSYMS (sizeof(syms) / sizeof(syms[0]))

static struct strace_writer *w;
static uint64_t now = 1000;

static int ev(uint16_t type, uint64_t a, uint64_t b)
{
	struct strace_event *e = strace_writer_slot(w);

	if (!e)
		return -1;
	*e = (struct strace_event){type, 0, PID, now += 1000, a, b};
	return 0;
}

static int def(uint16_t type, uint64_t a, uint64_t key, uint64_t aux,
	       const char *name)
{
	struct strace_definition d = {type, PID, now, a, key, aux, name};

	return strace_writer_define(w, &d, NULL);
}

int main(int argc, char **argv)
{
	struct strace_ring_opts o = {sizeof(o), 4096, 1 << 20,
				     STRACE_RING_ARCHIVE, 1, 0};
	const char *dso = argc > 2 ? argv[2] : "/tmp/lib\x1b[2J\nevil\r.so";
	struct strace_ring *ring;
	int rc = 0;

	if (argc != 2 && argc != 5) {
		fprintf(stderr, "usage: hostile_ring RING [OBJECT LO LEN]\n");
		return 2;
	}
	if (strace_ring_create(argv[1], &o, &ring) < 0 ||
	    strace_writer_open(ring, &w) < 0) {
		fprintf(stderr, "hostile_ring: cannot make %s\n", argv[1]);
		return 1;
	}
	rc |= def(STRACE_EV_PROCESS, PID, PID, 0, "proc\x1b]0;title\x07");
	rc |= def(STRACE_EV_THREAD, PID, PID, PID, "thr\x1b[5m\r\nname");
	rc |= def(STRACE_EV_DSO, BASE, BASE, 0x10000, dso);
	for (size_t i = 0; i < NSYMS; i++)
		rc |= def(STRACE_EV_SYMBOL, BASE + STEP * (i + 1),
			  BASE + STEP * (i + 1), STEP, syms[i]);
	rc |= strace_writer_name_syscall(w, NULL, BASE + STEP * 2 + 0x10, 1,
					 "write\x1b[31m\n") < 0;
	rc |= ev(STRACE_EV_TRACE_BEGIN, BASE + STEP, STRACE_REASON_START);
	/* main calls each, the first calls the second (a deeper stack), one
	 * makes the system call, and one call goes where no symbol is */
	for (size_t i = 1; i < NSYMS; i++) {
		uint64_t f = BASE + STEP * (i + 1);
		rc |= ev(STRACE_EV_CALL, BASE + STEP + 8 * i, f);
		if (i == 1) {
			rc |= ev(STRACE_EV_CALL, f + 4, f + STEP);
			rc |= ev(STRACE_EV_SYSCALL, f + STEP + 0x10,
				 f + STEP + 0x12);
			rc |= ev(STRACE_EV_RETURN, f + STEP + 0x20, f + 9);
		}
		rc |= ev(STRACE_EV_RETURN, f + 0x40, BASE + STEP + 8 * i + 5);
	}
	rc |= ev(STRACE_EV_CALL, BASE + STEP + 0x80, BASE + 0x8000);
	rc |= ev(STRACE_EV_RETURN, BASE + 0x8010, BASE + STEP + 0x85);
	if (argc == 5)
		rc |= strace_writer_name_coverage(w, argv[2],
						  strtoull(argv[3], NULL, 0),
						  strtoull(argv[4], NULL, 0)) < 0;
	rc |= strace_writer_close(w) < 0;
	strace_ring_close(ring);
	if (rc) {
		fprintf(stderr, "hostile_ring: writing %s failed\n", argv[1]);
		return 1;
	}
	return 0;
}
