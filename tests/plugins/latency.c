/* SPDX-License-Identifier: MIT */
/*
 * latency - a log2 histogram of the durations of the functions that match
 * a pattern:
 *
 *   ptrace-read -f none --plugin latency.so:sym=cmp[,out=FILE] RING
 *
 * Prints "calls N total NS min NS max NS", then one line per power of two
 * "[LO, HI) ns COUNT |####".
 */
#include <fnmatch.h>
#include <inttypes.h>

#include "args.h"
#include "strace/plugin.h"

STRACE_PLUGIN_VERSION;

static struct strace_plugin_host *host;
static const char *pattern;
static uint64_t hist[65], calls, total, lo = UINT64_MAX, hi;
static FILE *out;

static void leave(void *ctx, const struct strace_frame *f)
{
	const char *name = host->frame_name(f);
	uint64_t d = f->end - f->begin;

	(void)ctx;
	if (!name || fnmatch(pattern, name, 0))
		return;
	calls++;
	total += d;
	lo = d < lo ? d : lo;
	hi = d > hi ? d : hi;
	hist[d ? 64 - __builtin_clzll(d) : 0]++;
}

int strace_plugin_init(struct strace_plugin_host *h, int argc, char **argv)
{
	struct strace_stack_cb cb = {NULL, leave, NULL};

	host = h;
	pattern = arg_get(argc, argv, "sym", NULL);
	if (!pattern) {
		fprintf(stderr, "%s: which function? give sym=PATTERN\n",
			argv[0]);
		return -1;
	}
	out = arg_out(argc, argv, argv[0]);
	return out ? h->on_frames(h, &cb) : -1;
}

void strace_plugin_fini(void)
{
	uint64_t most = 1;

	fprintf(out, "calls %" PRIu64 " total %" PRIu64 " min %" PRIu64
		     " max %" PRIu64 "\n",
		calls, total, calls ? lo : 0, hi);
	for (int b = 0; b < 65; b++)
		most = hist[b] > most ? hist[b] : most;
	for (int b = 0; b < 65; b++) {
		if (!hist[b])
			continue;
		/* bucket b holds [2^(b-1), 2^b); bucket 0 holds 0 */
		fprintf(out, "[%" PRIu64 ", %" PRIu64 ") ns %10" PRIu64 " |",
			b ? (uint64_t)1 << (b - 1) : 0,
			b == 0 ? 1 : b < 64 ? (uint64_t)1 << b : UINT64_MAX,
			hist[b]);
		for (uint64_t i = 0; i < 40 * hist[b] / most; i++)
			fputc('#', out);
		fputc('\n', out);
	}
	if (out != stdout)
		fclose(out);
	else
		fflush(out);
}
