/* SPDX-License-Identifier: MIT */
/*
 * cli/srcline.h - the source line of a traced address for ptrace-read's
 * views (srcline, --srcline): the address's DSO and its offset from the
 * ring's names (strace_names_dso(), strace_names_dso_offset()), its line
 * from the DWARF layer (decoder/decoder.h: strace_dwarf_srcline()). Each
 * object is opened once, on first use; a missing one, or one without
 * debug information, gives no line.
 */
#ifndef CLI_SRCLINE_H
#define CLI_SRCLINE_H

#include <stdint.h>

#include "strace/event.h"
#include "strace/names.h"

struct srclines;

/* srclines_new() - an empty resolver, NULL without memory. */
struct srclines *srclines_new(void);
void srclines_free(struct srclines *s);

/*
 * srclines_get() - the line of the instruction at addr (a traced
 * address) as "FILE:LINE" in *file and *line: FILE as addr2line prints
 * it, valid until srclines_free(). Returns 1, or 0 when there is none
 * (no names, no DSO there, no debug information, no row).
 */
int srclines_get(struct srclines *s, struct strace_names *names,
		 uint64_t addr, const char **file, unsigned *line);

/*
 * srclines_append() - ptrace-read --srcline: the line of event e at
 * [start, end) (text or JSON, ending in '\n') with the source line of
 * each of its code addresses added: text " from_srcline=FILE:LINE",
 * JSON ',"from_srcline":"FILE:LINE"' (the operand's name, then
 * _srcline), an address without a line left out. At most
 * SRCLINE_APPEND_MAX bytes more. Returns the new end.
 */
#define SRCLINE_FILE_MAX 512
#define SRCLINE_APPEND_MAX (2 * (6 * SRCLINE_FILE_MAX + 64))
char *srclines_append(struct srclines *s, struct strace_names *names,
		      char *start, char *end, const struct strace_event *e,
		      int json);

#endif /* CLI_SRCLINE_H */
