/* SPDX-License-Identifier: MIT */
/*
 * cli/choice.h - options that take one keyword of a list (-f FORMAT,
 * --mode, --sort, --decoder ...): a table of keywords and their values,
 * looked up in one place for both commands; the list of the keywords for
 * the message when none matched.
 */
#ifndef CLI_CHOICE_H
#define CLI_CHOICE_H

#include <stddef.h>

/* One keyword and its value; a table ends with a NULL name. An alias
 * (another spelling, e.g. json for jsonl) is accepted but not listed. */
struct choice {
	const char *name;
	int value;
	int alias;
};

/*
 * The value of the keyword word in table, in *value. Returns 0, or -1
 * when word is none of them (*value untouched).
 */
int choice_find(const struct choice *table, const char *word, int *value);

/*
 * The keywords of table (aliases left out) into buf, separated by sep and
 * the last two by last ("total, self or calls": ", " and " or "). Returns
 * buf, cut to len bytes.
 */
const char *choice_list(const struct choice *table, const char *sep,
			const char *last, char *buf, size_t len);

#endif
