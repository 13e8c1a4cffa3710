/* SPDX-License-Identifier: MIT */
/*
 * cli/read_diff.c - ptrace-read -f report --diff OLD: two
 * rings read for their reports, the reports compared (report_diff.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

/*
 * -f report --diff OLD RING: both rings read as one is (cmd_read), with
 * the same options and filters; their reports compared (report_diff.h).
 */
int cmd_diff(const struct read_opts *o, const char *path)
{
	struct report_diff_opts ro = {.sort = o->vo.sort,
				      .policy = o->diff_policy,
				      .by = o->vo.by,
				      .base_name = o->diff,
				      .new_name = path};
	struct view *base = NULL, *now = NULL;
	const struct view_row *rb, *rn;
	struct out out;
	long nb, nn;
	int ret, rc;

	ret = cmd_read(o, o->diff, &base);
	if (!base)
		return ret;
	rc = cmd_read(o, path, &now);
	if (!now || rc != EXIT_OK)
		ret = rc;
	if (!now)
		goto out;
	nb = view_report_rows(base, &rb);
	nn = view_report_rows(now, &rn);
	memset(&out, 0, sizeof(out));
	if (nb < 0 || nn < 0 || out_open(&out, PROG, o->output) < 0) {
		ret = EXIT_ERR;
		goto out;
	}
	rc = report_diff_print(&ro, rb, (size_t)nb, rn, (size_t)nn, &out);
	if (rc == -ENOMEM)
		err("out of memory");
	if (out_close(&out) < 0 || rc < 0)
		ret = EXIT_ERR;
out:
	view_free(base);
	view_free(now);
	return ret;
}
