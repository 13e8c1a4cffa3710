/* SPDX-License-Identifier: MIT */
/*
 * cli/choice.c - options that take one keyword of a list: the lookup in
 * a table and the list of its keywords for the usage message.
 */
#include <stdio.h>
#include <string.h>

#include "choice.h"

int choice_find(const struct choice *table, const char *word, int *value)
{
	for (const struct choice *c = table; c->name; c++)
		if (!strcmp(c->name, word)) {
			*value = c->value;
			return 0;
		}
	return -1;
}

const char *choice_list(const struct choice *table, const char *sep,
			const char *last, char *buf, size_t len)
{
	size_t n = 0, left = 0, used = 0;

	if (!len)
		return buf;
	for (const struct choice *c = table; c->name; c++)
		n += !c->alias;
	buf[0] = '\0';
	for (const struct choice *c = table; c->name; c++) {
		int k;
		if (c->alias)
			continue;
		k = snprintf(buf + used, len - used, "%s%s",
			     !left	      ? ""
			     : left + 1 == n ? last
					      : sep,
			     c->name);
		left++;
		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
	return buf;
}
