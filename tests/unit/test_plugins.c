/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_plugins.c - the plugin host (strace/plugin.h) on
 * synthetic events, with the test plugins of tests/plugins/testplug.c
 * ($O/plugins, O=build by default):
 *   - a stop inside a callback: no later callback runs, not even the next
 *     one of the same event, and later dispatches hand nothing over;
 *   - frame callbacks come with the stacks (depth, enters, leaves);
 *   - control commands: enable, disable, list, bad patterns, unknown
 *     commands, a second plugin of one name, unload and load again;
 *   - the table of callbacks: a disabled type calls nothing.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "../harness.h"
#include "strace/error.h"
#include "strace/plugin.h"

static char probe[512];

static void probe_path(void)
{
	const char *o = getenv("O");
	snprintf(probe, sizeof(probe), "%s/plugins/test-probe.so",
		 o && *o ? o : "build");
}

/* the probe's counts: calls, second, enters, leaves, maxdepth, events */
static int counts(uint64_t out[6])
{
	void *h = dlopen(probe, RTLD_NOW | RTLD_NOLOAD);
	void (*fn)(uint64_t *);
	void *sym;

	if (!h)
		return -1;
	sym = dlsym(h, "probe_counts");
	memcpy(&fn, &sym, sizeof(fn));
	if (fn)
		fn(out);
	dlclose(h);
	return fn ? 0 : -1;
}

static struct strace_plugins *host_with(const char *args)
{
	struct strace_plugins_opts o = {.size = sizeof(o), .host = "test"};
	struct strace_plugins *ps;
	char spec[600], err[1024] = "";

	probe_path();
	CHECK_INT(strace_plugins_new(&o, &ps), ==, 0);
	snprintf(spec, sizeof(spec), "%s%s", probe, args);
	if (strace_plugins_load(ps, spec, err, sizeof(err)) < 0) {
		fprintf(stderr, "  %s\n", err);
		strace_plugins_free(ps);
		return NULL;
	}
	return ps;
}

static struct strace_event ev(uint16_t type, uint64_t a, uint64_t b)
{
	struct strace_event e = {type, 0, 1, 100, a, b};
	return e;
}

TEST(stop_inside_a_callback)
{
	struct strace_plugins *ps = host_with(":n=3,out=/dev/null");
	struct strace_event e[8];
	uint64_t c[6];

	if (!ps) {
		th_skip_reason = "no test-probe.so: run make tests";
		return;
	}
	for (int i = 0; i < 8; i++)
		e[i] = ev(STRACE_EV_CALL, 0x1000 + 16u * (unsigned)i, 0x2000);
	CHECK_INT(strace_plugins_dispatch(ps, e, 8), ==, 1);
	CHECK_INT(strace_plugins_stopped(ps), ==, 1);
	CHECK_INT(counts(c), ==, 0);
	CHECK_INT(c[0], ==, 3); /* the first callback, up to the stop */
	CHECK_INT(c[1], ==, 2); /* the second, not after the stop */
	CHECK_INT(c[5], ==, 2); /* "*": neither */
	CHECK_INT(strace_plugins_dispatch(ps, e, 8), ==, 1);
	CHECK_INT(counts(c), ==, 0);
	CHECK_INT(c[0], ==, 3);
	strace_plugins_free(ps);
}

TEST(frames_and_their_end)
{
	struct strace_plugins *ps = host_with(":n=1000,out=/dev/null");
	struct strace_event e[3] = {
		ev(STRACE_EV_CALL, 0x1000, 0x2000),
		ev(STRACE_EV_CALL, 0x2010, 0x3000),
		ev(STRACE_EV_RETURN, 0x3010, 0x2015),
	};
	uint64_t c[6];

	if (!ps) {
		th_skip_reason = "no test-probe.so: run make tests";
		return;
	}
	CHECK_INT(strace_plugins_dispatch(ps, e, 3), ==, 0);
	CHECK_INT(counts(c), ==, 0);
	CHECK_INT(c[0], ==, 2);
	CHECK_INT(c[5], ==, 3);
	/* entered: the thread's first function (a root), the two calls */
	CHECK_INT(c[2], >=, 2);
	CHECK_INT(c[3], ==, 1);
	CHECK_INT(c[4], >=, 1);
	strace_plugins_free(ps);
}

TEST(control_commands)
{
	struct strace_plugins *ps = host_with(":n=1000,out=/dev/null");
	struct strace_event e = ev(STRACE_EV_CALL, 0x1000, 0x2000);
	char reply[4096], spec[600];
	uint64_t c[6];

	if (!ps) {
		th_skip_reason = "no test-probe.so: run make tests";
		return;
	}
	CHECK_INT(strace_plugins_control(ps, "disable call", reply,
					 sizeof(reply)),
		  ==, 0);
	CHECK_INT(strace_plugins_dispatch(ps, &e, 1), ==, 0);
	CHECK_INT(counts(c), ==, 0);
	CHECK_INT(c[0], ==, 0); /* disabled: no call */
	CHECK_INT(c[5], ==, 0); /* nor "*": call is off for the plugin */
	CHECK_INT(strace_plugins_control(ps, "list", reply, sizeof(reply)),
		  ==, 0);
	CHECK(strstr(reply, "test-probe ") == reply);
	CHECK(strstr(reply, ",call,") == NULL);
	CHECK(strstr(reply, ",return,") != NULL);
	CHECK_INT(strace_plugins_control(ps, "enable call", reply,
					 sizeof(reply)),
		  ==, 0);
	CHECK_INT(strace_plugins_dispatch(ps, &e, 1), ==, 0);
	CHECK_INT(counts(c), ==, 0);
	CHECK_INT(c[0], ==, 1);
	CHECK_INT(strace_plugins_control(ps, "enable nosuch", reply,
					 sizeof(reply)),
		  ==, -STRACE_E_BADARG);
	CHECK(strstr(reply, "'nosuch' matches no event type") != NULL);
	CHECK_INT(strace_plugins_control(ps, "frob x", reply, sizeof(reply)),
		  ==, -STRACE_E_BADARG);
	CHECK(strstr(reply, "unknown command 'frob'") != NULL);
	snprintf(spec, sizeof(spec), "load %s", probe);
	CHECK_INT(strace_plugins_control(ps, spec, reply, sizeof(reply)), ==,
		  -STRACE_E_PLUGIN);
	CHECK(strstr(reply, "loaded already") != NULL);
	CHECK_INT(strace_plugins_count(ps), ==, 1);
	CHECK_INT(strace_plugins_control(ps, "unload test-probe", reply,
					 sizeof(reply)),
		  ==, 0);
	CHECK_INT(strace_plugins_count(ps), ==, 0);
	CHECK_INT(counts(c), ==, -1); /* dlclosed: no longer loaded */
	snprintf(spec, sizeof(spec), "load %s n=5 out=/dev/null", probe);
	CHECK_INT(strace_plugins_control(ps, spec, reply, sizeof(reply)), ==,
		  0);
	CHECK_INT(counts(c), ==, 0);
	CHECK_INT(c[0], ==, 0); /* fresh state */
	CHECK_INT(strace_plugins_control(ps, "unload nosuch", reply,
					 sizeof(reply)),
		  ==, -STRACE_E_BADARG);
	strace_plugins_free(ps);
}

TEST(bad_specs)
{
	struct strace_plugins_opts o = {.size = sizeof(o)};
	struct strace_plugins *ps;
	char err[1024];

	CHECK_INT(strace_plugins_new(&o, &ps), ==, 0);
	CHECK_INT(strace_plugins_load(ps, "/nonexistent/x.so:a,b", err,
				      sizeof(err)),
		  ==, -STRACE_E_PLUGIN);
	CHECK(strstr(err, "plugin /nonexistent/x.so: cannot load it") != NULL);
	CHECK_INT(strace_plugins_count(ps), ==, 0);
	CHECK_INT(strace_plugins_dispatch(ps, NULL, 0), ==, 0);
	strace_plugins_free(ps);
	o.size = 1;
	CHECK_INT(strace_plugins_new(&o, &ps), ==, -STRACE_E_BADARG);
}

RUN_TESTS("test_plugins")
