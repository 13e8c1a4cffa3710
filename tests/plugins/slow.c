/* SPDX-License-Identifier: MIT */
/*
 * slow - prints the call stack whenever a function that matches a pattern
 * takes longer than a threshold (magic-trace's trigger, after the fact):
 *
 *   ptrace-read -f none --plugin slow.so:sym=PATTERN,ns=100000 RING
 *
 * One line per slow call: "TID DURATION_NS name <- caller <- ... <- root".
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>

#include "args.h"
#include "strace/plugin.h"

STRACE_PLUGIN_VERSION;

static struct strace_plugin_host *host;
static const char *pattern;
static uint64_t threshold;
static FILE *out;

static void put_name(const struct strace_frame *f)
{
	const char *name = host->frame_name(f);

	if (name)
		fputs(name, out);
	else
		fprintf(out, "%#" PRIx64, f->addr);
}

static void leave(void *ctx, const struct strace_frame *f)
{
	const char *name = host->frame_name(f);
	uint64_t d = f->end - f->begin;

	(void)ctx;
	if (d <= threshold || fnmatch(pattern, name ? name : "", 0))
		return;
	fprintf(out, "%u %" PRIu64 " ", f->tid, d);
	put_name(f);
	/* the callers are f[-1] ... f[-depth] (strace/stack.h) */
	for (uint32_t i = 1; i <= f->depth; i++) {
		fputs(" <- ", out);
		put_name(f - i);
	}
	fputc('\n', out);
}

int strace_plugin_init(struct strace_plugin_host *h, int argc, char **argv)
{
	struct strace_stack_cb cb = {NULL, leave, NULL};

	host = h;
	pattern = arg_get(argc, argv, "sym", "*");
	threshold = strtoull(arg_get(argc, argv, "ns", "100000"), NULL, 0);
	out = arg_out(argc, argv, argv[0]);
	return out ? h->on_frames(h, &cb) : -1;
}

void strace_plugin_fini(void)
{
	if (out != stdout)
		fclose(out);
	else
		fflush(out);
}
