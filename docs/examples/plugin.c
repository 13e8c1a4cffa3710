/* SPDX-License-Identifier: MIT */
/*
 * docs/examples/plugin.c - a plugin: system calls per thread, and the
 * function each thread was in when it made its first one.
 *
 *   cc -shared -fPIC $(pkg-config --cflags libstrace) -o syscalls.so plugin.c
 *   ptrace-read -f none --plugin ./syscalls.so RING
 *
 * It links nothing: every service comes through host (strace/plugin.h).
 */
#include <stdio.h>
#include <strace/plugin.h>

STRACE_PLUGIN_VERSION;

static struct strace_plugin_host *host;
static struct {
	uint32_t tid;
	unsigned long calls;
	const char *first_in;
} seen[256];
static int nseen;

/* bound by its name to the "syscall" events */
void strace_on_syscall(const struct strace_event *ev, void *ctx);
void strace_on_syscall(const struct strace_event *ev, void *ctx)
{
	const struct strace_frame *f;
	int i;

	(void)ctx;
	for (i = 0; i < nseen && seen[i].tid != ev->tid; i++)
		;
	if (i == nseen) {
		if (nseen == 256)
			return;
		seen[nseen].tid = ev->tid;
		/* the [syscall] frame is open: its caller is below it */
		size_t n = host->frames(host, ev->tid, &f);
		seen[nseen++].first_in = n > 1 ? host->frame_name(&f[n - 2]) : NULL;
	}
	seen[i].calls++;
}

int strace_plugin_init(struct strace_plugin_host *h, int argc, char **argv)
{
	const struct strace_frame *f;

	(void)argc;
	(void)argv;
	host = h;
	h->frames(h, 0, &f); /* keep call stacks from the first event on */
	return 0;
}

void strace_plugin_fini(void)
{
	for (int i = 0; i < nseen; i++) {
		const struct strace_name *t = host->thread(host, seen[i].tid);
		printf("%u %s: %lu system calls, the first in %s\n", seen[i].tid,
		       t ? t->str : "?", seen[i].calls,
		       seen[i].first_in ? seen[i].first_in : "?");
	}
}
