/* SPDX-License-Identifier: MIT */
/*
 * cli/fields.h - ptrace-read -F/--fields: the fields of an event line
 * that the user chooses, in the order given, as perf script -F takes
 * them (docs/viewing.md, "Fields").
 *
 * Text: the fields separated by blanks; an address as perf script writes
 * it (hex without 0x), then its symbol (sym, +0xOFF with offset) and its
 * DSO in parentheses (dso), with "=>" between from and to; the CPU as
 * perf writes it ("[002]"), from the thread's last cpu event ("[-]"
 * before one); srcline: the source line of from (else to) as perf
 * script prints it, last, on a line of its own after two blanks ("??"
 * lines not shown). JSON: one object per line with the chosen keys
 * (srcline: from_srcline and to_srcline, "FILE:LINE" or null). The slow path beside cli/format.c
 * (one event at a time, names looked up each time): what a person asks
 * for by hand.
 */
#ifndef CLI_FIELDS_H
#define CLI_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "strace/event.h"
#include "strace/names.h"

enum fields_id {
	FLD_SEQ,
	FLD_TIME,
	FLD_TID,
	FLD_PID,
	FLD_COMM,
	FLD_TYPE,
	FLD_FROM,
	FLD_TO,
	FLD_SYM,
	FLD_OFFSET,
	FLD_DSO,
	FLD_FLAGS,
	FLD_CPU,
	FLD_SRCLINE,
	FLD_COUNT
};

struct fields {
	uint8_t order[FLD_COUNT]; /* the fields to print, in order */
	unsigned n;
	uint32_t mask; /* 1 << each field chosen */
	/* cpu: each thread's CPU, from its cpu events (open addressing by
	 * tid: tid + 1 << 32 | cpu; 0 empty) */
	uint64_t *cpus;
	size_t ncpus, cpucap;
	/* srcline: the DWARF of the traced objects (srcline.h) */
	struct srclines *src;
};

/* The most one line takes: names of FMT_NAME_MAX bytes escaped, numbers. */
#define FIELDS_LINE_MAX (16 * 1024 + 256 + 2 * (6 * 512 + 32))

/*
 * fields_parse() - "time,tid,from,to,sym" into fl.
 * Returns 0, or -1 with why in err (len bytes): an unknown or repeated
 * field, an empty list, sym/offset/dso/srcline without from or to, no
 * memory for srcline.
 */
int fields_parse(struct fields *fl, const char *spec, char *err, size_t len);

/*
 * fields_text() / fields_json() - the line of event e (number seq) at p,
 * names from names (may be NULL: addresses only); at most
 * FIELDS_LINE_MAX bytes. Every event of the ring goes through
 * fields_see() first (the CPUs of the threads), shown or not.
 * Returns the end of the line (after '\n').
 */
void fields_see(struct fields *fl, const struct strace_event *e);
char *fields_text(const struct fields *fl, struct strace_names *names,
		  char *p, const struct strace_event *e, uint64_t seq);
char *fields_json(const struct fields *fl, struct strace_names *names,
		  char *p, const struct strace_event *e, uint64_t seq);

/* fields_fini() - free what fields_see() and srcline kept. */
void fields_fini(struct fields *fl);

#endif /* CLI_FIELDS_H */
