/* SPDX-License-Identifier: MIT */
/*
 * cli/read_types.c - ptrace-read --list-types: the event
 * type table.
 */
#include <stdio.h>

#include "read.h"

int cmd_list_types(void)
{
	printf("%-5s %-12s %-8s %-8s %-7s %-8s %-7s %s\n", "value", "name",
	       "family", "a", "a-kind", "b", "b-kind", "description");
	for (unsigned t = 1; t < STRACE_EV_MAX; t++) {
		static const char *const kn[] = {"-",   "addr",   "hex",
						  "dec", "str",    "reason",
						  "block"};
		const struct strace_event_info *in = strace_event_info(t);
		if (!in)
			continue;
		printf("%-5u %-12s %-8s %-8s %-7s %-8s %-7s %s\n", t, in->name,
		       strace_family_name(in->family),
		       in->a_name[0] ? in->a_name : "-",
		       in->a_kind < 7 ? kn[in->a_kind] : "?",
		       in->b_name[0] ? in->b_name : "-",
		       in->b_kind < 7 ? kn[in->b_kind] : "?", in->description);
	}
	return EXIT_OK;
}
