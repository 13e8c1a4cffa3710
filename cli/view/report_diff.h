/* SPDX-License-Identifier: MIT */
/*
 * cli/report_diff.h - two reports compared, function by function
 * (ptrace-read -f report --diff OLD NEW), in the layout of uftrace
 * report --diff (docs/stacks.md, "Comparing two runs"). The rows come
 * from two report views (view_report_rows()); rows are matched by their
 * name text, never by address: two runs load their code at different
 * addresses.
 */
#ifndef CLI_REPORT_DIFF_H
#define CLI_REPORT_DIFF_H

#include <stddef.h>

#include "out.h"
#include "view.h"

/* --diff-policy, as uftrace's: bits of report_diff_opts.policy */
#define REPORT_DIFF_ABS 1u     /* sort by the size of a change, not its
				* sign (default on) */
#define REPORT_DIFF_PERCENT 2u /* the change of the times in percent of
				* the base's */
#define REPORT_DIFF_FULL 4u    /* the base's and the new run's figures
				* beside each change */

struct report_diff_opts {
	int sort;        /* enum view_sort: whose change orders the rows */
	unsigned policy; /* REPORT_DIFF_* */
	int by;          /* enum view_by of the rows: the last column's
			  * title (Function, DSO) */
	const char *base_name, *new_name; /* for the header (the paths) */
};

/*
 * report_diff_policy() - parse a --diff-policy value into *policy (which
 * holds the default or what an earlier value set): words separated by
 * commas, abs, percent (each may be preceded by no-), full, compact.
 * Returns 0, or -1 with *bad pointing at the word not understood (up to
 * the next comma).
 */
int report_diff_policy(const char *s, unsigned *policy, const char **bad);

/*
 * report_diff_print() - the rows of both runs, matched by name (rows of
 * one name in one run summed, as uftrace keys its rows by name), each
 * function's change from base to new: calls, total and self time;
 * a function of one run only has the other's figures 0 (shown "-" as
 * uftrace does). Sorted by the change of o->sort, largest first.
 * Written to out. Returns 0; -ENOMEM; -1 when writing failed (a message
 * was printed).
 */
int report_diff_print(const struct report_diff_opts *o,
		      const struct view_row *base, size_t nbase,
		      const struct view_row *new_rows, size_t nnew,
		      struct out *out);

#endif /* CLI_REPORT_DIFF_H */
