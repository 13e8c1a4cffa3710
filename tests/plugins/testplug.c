/* SPDX-License-Identifier: MIT */
/*
 * testplug - plugins for the hosts' tests, one per build variant (-D):
 *
 *   AUTO        strace_on_call/strace_on_return bound by name; after
 *               n=N calls (default 10) it disables "call" from inside
 *               the callback (QEMU's example); prints the counts at fini
 *   STOP        asks the host to stop at the Nth call (n=N)
 *   CRASH       dereferences NULL at the Nth event (n=N)
 *   PROBE       for tests/unit/test_plugins.c: two callbacks on "call",
 *               the first asks to stop at the Nth; frame callbacks; the
 *               counts through probe_counts()
 *   EMPTY       one empty callback for every type (the dispatch bench);
 *               with on=0, registered and then disabled
 *   NOVERSION   exports no strace_plugin_api_version
 *   OLDVERSION  exports another version
 *   NOINIT      exports no strace_plugin_init
 *   INITFAIL    init returns -1
 *   BADPATTERN  registers "cal" (no such type) and ignores the error
 *   BUS         its constructor reads a page of an empty file it
 *               mapped: a bus error inside dlopen
 *   MANY        registers n=N callbacks (default 8000) on "call", each
 *               with its index as ctx; at fini "calls" counts their
 *               calls and "events" the calls out of registration order
 */
#include <inttypes.h>
#include <stdlib.h>

#include "args.h"
#include "strace/plugin.h"

#if defined(OLDVERSION)
__attribute__((visibility("default"))) const uint32_t strace_plugin_api_version =
	STRACE_PLUGIN_API_VERSION + 100;
#elif !defined(NOVERSION)
STRACE_PLUGIN_VERSION;
#endif

static struct strace_plugin_host *host;
static uint64_t n, calls, returns, events;
static FILE *out;

#if defined(AUTO)
void strace_on_call(const struct strace_event *ev, void *ctx);
void strace_on_return(const struct strace_event *ev, void *ctx);

void strace_on_call(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	if (++calls == n)
		host->disable(host, "call");
}

void strace_on_return(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	returns++;
}
#endif

__attribute__((unused)) static void on_call(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	if (++calls == n)
		host->stop(host);
}

__attribute__((unused)) static void on_any(const struct strace_event *ev, void *ctx)
{
	(void)ctx;
	if (++events == n)
		*(volatile int *)(uintptr_t)(ev->a & 0) = 1; /* crash */
}

__attribute__((unused)) static void nothing(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
}

#if defined(BUS)
#include <sys/mman.h>

__attribute__((constructor)) static void touch_past_the_end(void)
{
	FILE *f = tmpfile();
	void *m = f ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0)
		    : MAP_FAILED;

	if (m != MAP_FAILED)
		(void)*(volatile const char *)m; /* SIGBUS: the file is empty */
}
#endif

#if defined(MANY)
static uint64_t next_ctx;

/* the callbacks of one event come in registration order: 0, 1, ... n-1 */
static void many_one(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	events += (uintptr_t)ctx != next_ctx;
	next_ctx = ((uintptr_t)ctx + 1) % n;
	calls++;
}
#endif

#if defined(PROBE)
static uint64_t second, enters, leaves, maxdepth;

__attribute__((visibility("default"))) void probe_counts(uint64_t v[6]);
void probe_counts(uint64_t v[6])
{
	v[0] = calls;
	v[1] = second;
	v[2] = enters;
	v[3] = leaves;
	v[4] = maxdepth;
	v[5] = events;
}

static void probe_first(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	if (++calls == n)
		host->stop(host);
}

static void probe_second(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	second++;
}

static void probe_enter(void *arg, const struct strace_frame *f)
{
	(void)arg;
	enters++;
	maxdepth = f->depth > maxdepth ? f->depth : maxdepth;
}

static void probe_leave(void *arg, const struct strace_frame *f)
{
	(void)arg;
	(void)f;
	leaves++;
}

static void probe_any(const struct strace_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	events++;
}
#endif

#ifndef NOINIT
int strace_plugin_init(struct strace_plugin_host *h, int argc, char **argv)
{
	host = h;
	n = strtoull(arg_get(argc, argv, "n", "10"), NULL, 0);
	out = arg_out(argc, argv, argv[0]);
#if defined(PROBE)
	struct strace_stack_cb cb = {probe_enter, probe_leave, NULL};
	int rc = h->on(h, "call", probe_first, NULL);
	if (rc == 0)
		rc = h->on(h, "call", probe_second, NULL);
	if (rc == 0)
		rc = h->on(h, "*", probe_any, NULL);
	if (rc == 0)
		rc = h->on_frames(h, &cb);
	return rc;
#elif defined(STOP)
	return h->on(h, "call", on_call, NULL);
#elif defined(CRASH)
	return h->on(h, "*", on_any, NULL);
#elif defined(EMPTY)
	int rc = h->on(h, "*", nothing, NULL);
	if (rc == 0 && !strcmp(arg_get(argc, argv, "on", "1"), "0"))
		rc = h->disable(h, "*");
	return rc;
#elif defined(MANY)
	n = strtoull(arg_get(argc, argv, "n", "8000"), NULL, 0);
	for (uint64_t i = 0; i < n; i++) {
		int rc = h->on(h, "call", many_one, (void *)(uintptr_t)i);
		if (rc)
			return rc;
	}
	return 0;
#elif defined(INITFAIL)
	fprintf(stderr, "%s: init fails, as this test plugin does\n", argv[0]);
	return -1;
#elif defined(BADPATTERN)
	h->on(h, "cal", nothing, NULL);
	return 0;
#else
	return 0;
#endif
}
#endif

void strace_plugin_fini(void)
{
	if (!out)
		return;
	fprintf(out, "calls %" PRIu64 " returns %" PRIu64 " events %" PRIu64
		     "\n",
		calls, returns, events);
	if (out != stdout)
		fclose(out);
	else
		fflush(out);
}
