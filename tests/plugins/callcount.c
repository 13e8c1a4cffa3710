/* SPDX-License-Identifier: MIT */
/*
 * callcount - calls per function, printed at fini, the most called first:
 *
 *   ptrace-read -f none --plugin callcount.so[:out=FILE] RING
 *
 * A call is a frame entered (strace/stack.h): calls, tail calls, signal
 * handlers and syscalls, as `ptrace-read -f report` counts its Calls.
 * Each line: calls, total nanoseconds (of each thread's outermost frames
 * of the function, as in a recursion), name.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "strace/plugin.h"

STRACE_PLUGIN_VERSION;

struct fn {
	const void *key; /* the symbol entry, the system call's name, or the
			  * address without one */
	const char *name;
	uint64_t calls, total;
};

static struct strace_plugin_host *host;
static struct fn *fns;
static size_t nfns, cap; /* open addressing, at most half full */
static FILE *out;

/* (a system call's name, "[syscall write]", is one string per call for
 * as long as the plugins live: its address tells the calls apart) */
static const void *key_of(const struct strace_frame *f)
{
	return f->kind == STRACE_FRAME_SYSCALL
		       ? (const void *)host->frame_name(f)
	       : f->kind == STRACE_FRAME_SIGNAL ? (const void *)2
	       : f->fn				? (const void *)f->fn
						: (const void *)(uintptr_t)f->addr;
}

static struct fn *lookup(const struct strace_frame *f)
{
	const void *key = key_of(f);
	size_t i;

	if (2 * (nfns + 1) > cap) {
		struct fn *old = fns;
		size_t ocap = cap;

		cap = cap ? 2 * cap : 1024;
		fns = calloc(cap, sizeof(*fns));
		if (!fns)
			abort();
		for (size_t j = 0; j < ocap; j++) {
			if (!old[j].key)
				continue;
			for (i = ((uintptr_t)old[j].key >> 4) & (cap - 1);
			     fns[i].key; i = (i + 1) & (cap - 1))
				;
			fns[i] = old[j];
		}
		free(old);
	}
	for (i = ((uintptr_t)key >> 4) & (cap - 1); fns[i].key;
	     i = (i + 1) & (cap - 1))
		if (fns[i].key == key)
			return &fns[i];
	fns[i].key = key;
	fns[i].name = host->frame_name(f);
	nfns++;
	return &fns[i];
}

static void leave(void *ctx, const struct strace_frame *f)
{
	struct fn *c = lookup(f);
	uint32_t i;

	(void)ctx;
	c->calls++;
	/* recursion: the time of a thread's outermost frame of it only
	 * (its callers are f[-1] ... f[-depth]) */
	for (i = 1; i <= f->depth && key_of(f - i) != c->key; i++)
		;
	if (i > f->depth)
		c->total += f->end - f->begin;
}

/* the most calls first; then by name, then by total: the same order
 * however the events of threads were interleaved */
static int by_calls(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	int c;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	if (c)
		return c;
	if (x->total != y->total)
		return x->total > y->total ? 1 : -1;
	/* unnamed: by address */
	return x->name ? 0
		       : ((uintptr_t)x->key > (uintptr_t)y->key) -
				 ((uintptr_t)x->key < (uintptr_t)y->key);
}

int strace_plugin_init(struct strace_plugin_host *h, int argc, char **argv)
{
	struct strace_stack_cb cb = {NULL, leave, NULL};

	host = h;
	out = arg_out(argc, argv, argv[0]);
	return out ? h->on_frames(h, &cb) : -1;
}

void strace_plugin_fini(void)
{
	size_t n = 0;

	for (size_t i = 0; i < cap; i++)
		if (fns[i].key && fns[i].calls)
			fns[n++] = fns[i];
	qsort(fns, n, sizeof(*fns), by_calls);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%10" PRIu64 " %14" PRIu64 "  ", fns[i].calls,
			fns[i].total);
		if (fns[i].name)
			fprintf(out, "%s\n", fns[i].name);
		else
			fprintf(out, "%#" PRIx64 "\n",
				(uint64_t)(uintptr_t)fns[i].key);
	}
	if (out != stdout)
		fclose(out);
	else
		fflush(out);
	free(fns);
	fns = NULL;
	nfns = cap = 0;
}
