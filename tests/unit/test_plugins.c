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
 *   - the table of callbacks: a disabled type calls nothing;
 *   - files dlopen must not see: a FIFO (it blocked dlopen), a device, a
 *     plugin cut short inside a segment (it died of SIGBUS in dlopen),
 *     refused first; a bus error inside dlopen (events/plugin_file.h,
 *     bypassing that check, as a file cut short meanwhile would) named
 *     as the plugin's, and no load after it (in a child process: the
 *     loader may be left locked).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"
#include "events/plugin_file.h"
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

/* dir: a new temporary directory; *short_so: the probe's first 4096
 * bytes in it (its later segments past the end). Returns 0 or -1. */
static int bad_files(char dir[64], char short_so[128])
{
	char buf[4096];
	int in, out;
	ssize_t n;

	probe_path();
	snprintf(dir, 64, "/tmp/test_plugins.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(short_so, 128, "%s/short.so", dir);
	in = open(probe, O_RDONLY | O_CLOEXEC);
	out = open(short_so, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	n = in >= 0 && out >= 0 ? read(in, buf, sizeof(buf)) : -1;
	if (n != (ssize_t)sizeof(buf) || write(out, buf, sizeof(buf)) != n)
		n = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return n < 0 ? -1 : 0;
}

TEST(fifo_device_and_short_file_refused)
{
	struct strace_plugins_opts o = {.size = sizeof(o)};
	struct strace_plugins *ps;
	char dir[64], short_so[128], fifo[128], err[1024], cmd[256];

	if (bad_files(dir, short_so) < 0)
		SKIP("no test-probe.so, or no temporary directory");
	snprintf(fifo, sizeof(fifo), "%s/fifo.so", dir);
	REQUIRE(mkfifo(fifo, 0600) == 0);
	REQUIRE(strace_plugins_new(&o, &ps) == 0);
	alarm(20); /* dlopen waited for the FIFO's writer forever */
	CHECK_INT(strace_plugins_load(ps, fifo, err, sizeof(err)), ==,
		  -STRACE_E_PLUGIN);
	CHECK(strstr(err, fifo) && strstr(err, "is a FIFO, not a regular file"));
	snprintf(cmd, sizeof(cmd), "load %s", fifo);
	CHECK_INT(strace_plugins_control(ps, cmd, err, sizeof(err)), ==,
		  -STRACE_E_PLUGIN);
	CHECK(strstr(err, "is a FIFO") != NULL);
	alarm(0);
	CHECK_INT(strace_plugins_load(ps, "/dev/null", err, sizeof(err)), ==,
		  -STRACE_E_PLUGIN);
	CHECK(strstr(err, "is a character device") != NULL);
	CHECK_INT(strace_plugins_load(ps, short_so, err, sizeof(err)), ==,
		  -STRACE_E_PLUGIN);
	CHECK(strstr(err, short_so) &&
	      strstr(err, "the file is cut short (4096 bytes"));
	CHECK_INT(strace_plugins_count(ps), ==, 0);
	strace_plugins_free(ps);
	unlink(fifo);
	unlink(short_so);
	rmdir(dir);
}

/* In a child: the bus error dlopen meets on short_so, then a refused
 * load. Exit status: 0, or the number of the first failed check. */
static int bus_child(const char *short_so)
{
	char err[1024] = "";

	if (plugin_file_dlopen(short_so, RTLD_NOW | RTLD_LOCAL, err,
			       sizeof(err)))
		return 1;
	if (!strstr(err, short_so) || !strstr(err, "died of a bus error"))
		return 2;
	if (plugin_file_dlopen(probe, RTLD_NOW | RTLD_LOCAL, err, sizeof(err)))
		return 3;
	if (!strstr(err, "an earlier plugin's load died of a bus error"))
		return 4;
	return 0;
}

TEST(bus_error_in_dlopen_named)
{
	char dir[64], short_so[128];
	int status = -1;
	pid_t pid;

	if (bad_files(dir, short_so) < 0)
		SKIP("no test-probe.so, or no temporary directory");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(bus_child(short_so));
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status)); /* not killed by SIGBUS */
	CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, ==, 0);
	unlink(short_so);
	rmdir(dir);
}

RUN_TESTS("test_plugins")
