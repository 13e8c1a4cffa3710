/* SPDX-License-Identifier: MIT */
/* cli/fmt_todo.c - placeholders of the FXT and uftrace writers while they
 * are written (removed when cli/fmt_fxt.c and cli/fmt_uftrace.c land). */
#include <stdio.h>

#include "views.h"

static int todo_open(struct view *v)
{
	(void)v;
	fprintf(stderr, "ptrace-read: this format is not built yet\n");
	return -1;
}

const struct view_format view_fxt = {todo_open, NULL, NULL, NULL, NULL, NULL};
