/* SPDX-License-Identifier: MIT */
/*
 * cli/view/views_int.h - the private parts of the stack views, shared by their
 * files: the view and its report rows; the labels of frames
 * (views_label.c: view_put_name_id()); the report's table, printed or
 * kept (views_report.c); the tree, the per-event code of the report and
 * the folded stacks, and the view itself (views.c), which calls the other
 * two.
 */
#ifndef CLI_VIEWS_INT_H
#define CLI_VIEWS_INT_H

#include <stdint.h>
#include <string.h>

#include "format.h"
#include "frames.h"
#include "view.h"

/* labels of frames without a function of their own */
#define ID_UNKNOWN VIEW_ID_UNKNOWN
#define ID_SYSCALL VIEW_ID_SYSCALL
#define ID_SIGNAL VIEW_ID_SIGNAL
#define ID_INLINED VIEW_ID_INLINED
/* the widest DSO column of a report */
#define DSO_COL_MAX 64
/* a label id of a syscall frame (an address label may have bit 62) */
#define IS_SYSCALL_ID(id) (((id) & (ID_UNKNOWN | ID_SYSCALL)) == ID_SYSCALL)
/* a label id that is a names id (of a symbol) */
#define IS_NAME_ID(id) ((id) < ID_INLINED)

struct row {
	uint64_t key;
	const struct strace_name *fn;
	uint64_t addr;
	uint16_t kind;
	uint32_t tid;
	uint64_t calls, total, self, max;
	uint32_t active;
	/* the total counted on one thread (the last), for a frame found
	 * late around them (report_leave()); other threads' in tsums */
	uint32_t sum_tid;
	uint64_t sum;
};

/* a row's total counted on a thread other than its last: key (row
 * index + 1) << 32 | tid, plus 1 (0: empty); key tid alone (row 0): the
 * time of the thread's outermost frames left since the last frame found
 * late (report_enter()) */
struct tsum {
	uint64_t key, sum;
};

struct path {
	uint64_t hash;
	uint64_t weight;
	uint32_t off, len; /* ids in the pool */
};

struct view {
	struct view_opts o;
	struct strace_names *names;
	struct strace_filter *flt;
	struct out *out;
	struct strace_stack *stack;
	int err;
	int header;
	/* the tree's thread column of the last thread */
	uint32_t tid_last;
	uint8_t tid_len;
	char tid_txt[32];
	/* names shown by the views' one rule (view_put_clean()): the
	 * tree, the report, folded stacks, svg (the other formats escape
	 * as their own say); functions' names so, made once (dn: their
	 * text forms, fmt_display_make()) */
	int clean;
	struct fmt_names dn;
	/* labels of addresses without a symbol, direct-mapped */
	struct {
		uint64_t id;
		uint8_t len;
		char s[63];
	} lcache[256];
	/* report */
	struct row *rows;
	size_t nrows, rcap;
	uint32_t *map; /* key -> index + 1 in rows */
	size_t mapcap;
	uint32_t *byid; /* functions: names id -> index + 1 in rows */
	size_t bycap;
	struct tsum *tsums; /* open addressing */
	size_t ntsums, tsumcap;
	/* functions: names id -> the id + 1 of the first symbol entry of
	 * its start and name (a producer may define a function twice),
	 * found through same[] (ids + 1, open addressing by both) */
	uint32_t *canon;
	size_t canoncap;
	uint32_t *same;
	size_t samecap, nsame;
	/* folded */
	struct path *paths;
	size_t npaths, pcap;
	uint64_t *pool;
	size_t npool, poolcap;
	uint64_t *ids; /* scratch: one path */
	size_t idscap;
	/* a viewer format (chrome, fxt, uftrace) */
	const struct view_format *fmt;
	void *state;
	uint64_t event_types; /* view_set_event_types() */
	/* kept(): filters, --depth or --min-time are given (checks), and a
	 * frame was kept then (shown) */
	int checks, shown;
	/* a report's rows for view_report_rows() (rows_only) */
	struct view_row *vrows;
	char *vnames;
	size_t nvrows;
	int rows_kept; /* view_report_keep() ran */
};

/* --- durations ----------------------------------------------------------- */

/* "  1.234 us" (10 characters) as uftrace prints a duration */
static inline char *put_duration(char *p, uint64_t ns)
{
	static const char unit[3][4] = {" us", " ms", "  s"};
	uint64_t whole, frac;
	int u;

	if (ns < 1000000u) {
		whole = ns / 1000u, frac = ns % 1000u, u = 0;
	} else if (ns < 1000000000u) {
		whole = ns / 1000000u, frac = ns / 1000u % 1000u, u = 1;
	} else {
		whole = ns / 1000000000u, frac = ns / 1000000u % 1000u, u = 2;
	}
	if (whole < 1000) { /* "123.456" (%7.3f): the usual case, by hand */
		p[0] = whole >= 100 ? (char)('0' + whole / 100) : ' ';
		p[1] = whole >= 10 ? (char)('0' + whole / 10 % 10) : ' ';
		p[2] = (char)('0' + whole % 10);
		p += 3;
	} else {
		p = fmt_put_u64(p, whole);
	}
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	p[2] = (char)('0' + frac / 10 % 10);
	p[3] = (char)('0' + frac % 10);
	memcpy(p + 4, unit[u], 3);
	return p + 7;
}

/* views_report.c: the report's rows, printed (-f report) or kept for
 * view_report_rows() (rows_only). Return 0, or -1 / -ENOMEM. */
int view_report_print(struct view *v);
int view_report_keep(struct view *v);

#endif
