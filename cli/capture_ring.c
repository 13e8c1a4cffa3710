/* SPDX-License-Identifier: MIT */
/*
 * cli/capture_ring.c - what ptrace-capture's runners share: the ring (made
 * as the options ask, its plugins, its readers waited for, what is said
 * about it), the progress line and warnings, the cache's warning and the
 * exit status of a partial decode.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/capture.h"
#include "cli/pluginpath.h"
#include "cli/ringmsg.h"
#include "strace/plugin.h"

/* --wait-readers K on a decode of a recording: the ring holds its events
 * for K readers, the decode going on meanwhile */
static int held_for;

/* A lossless writer that waits says so, once (strace_ring_set_wait_notice). */
static void on_wait(void *arg, const struct strace_ring_wait *w)
{
	static atomic_int said;
	struct strace_ring_wait_words words = {
		.waits = "waiting",
		.no_reader = "use --mode archive, the default",
		.slowest = "end that reader, or use --mode archive or flight",
		.every = "ring",
		.held = held_for,
		.held_opt = "--wait-readers",
	};
	char msg[PATH_MAX * 2 + 512];

	if (atomic_exchange(&said, 1))
		return;
	strace_ring_wait_message(msg, sizeof(msg), strace_ring_path(arg), w,
				 &words);
	fprintf(stderr, PROG ": %s\n", msg);
}

double capture_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void capture_ui_init(struct capture_ui *ui, int quiet,
		     struct strace_ring *ring)
{
	*ui = (struct capture_ui){isatty(2), quiet, 0, capture_now(), 0, 0,
				  ring};
}

void capture_on_warn(void *arg, const char *msg)
{
	struct capture_ui *ui = arg;
	if (++ui->warnings > 20) {
		if (ui->warnings == 21)
			fprintf(stderr, PROG ": warning: more warnings "
					     "follow; not shown\n");
		return;
	}
	if (ui->shown)
		fputc('\n', stderr);
	ui->shown = 0;
	/* the message names the trace's mappings and objects: one line
	 * whatever their paths hold (the views' one rule) */
	fputs(PROG ": warning: ", stderr);
	view_fputs_clean(msg, stderr);
	fputc('\n', stderr);
}

/* The progress line on a terminal, at most 5 times a second (the
 * decoding threads call this; only the terminal's line is shared):
 * "[=====     ]  42% 12.3 MB/s, 1.2 M events, 3 s left" */
void capture_on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct capture_ui *ui = arg;
	double now, t, rate;
	char bar[41], ev[32] = "";

	if (!ui->tty || ui->quiet || !total)
		return;
	now = capture_now();
	t = now - ui->t0;
	if (t < 1.0 || now - ui->last < 0.2)
		return;
	ui->last = now;
	int pct = (int)(done * 100 / total);
	int fill = pct * 40 / 100;
	for (int i = 0; i < 40; i++)
		bar[i] = i < fill ? '=' : ' ';
	bar[40] = '\0';
	rate = (double)done / t;
	if (ui->ring) {
		uint64_t n = strace_ring_committed(ui->ring);
		if (n >= 1000000)
			snprintf(ev, sizeof(ev), ", %.1f M events",
				 (double)n / 1e6);
		else
			snprintf(ev, sizeof(ev), ", %llu events",
				 (unsigned long long)n);
	}
	fprintf(stderr, "\r[%s] %3d%% %.1f MB/s%s, %.0f s left ", bar, pct,
		rate / 1e6, ev,
		rate > 0 && done < total ? (double)(total - done) / rate : 0.0);
	ui->shown = 1;
}

/*
 * Rings made without -o pile up in /dev/shm, in memory, until someone
 * removes them: the last line says so.
 */
void capture_say_ring(const struct capture_opts *o,
		      const struct strace_ring *ring)
{
	char msg[PATH_MAX + 256];

	if (o->view_path ||
	    strace_ring_describe(strace_ring_path(ring), msg, sizeof(msg)) < 0)
		return;
	fprintf(stderr, PROG ": %s\n", msg);
}

void capture_cache_warn(const struct strace_objcache_stats *st,
			const char *dir)
{
	if (st->write_errors)
		fprintf(stderr,
			PROG ": warning: cannot write the block cache in %s: "
			     "%s (the next decode starts cold; make the "
			     "directory writable, or give --no-cache)\n",
			dir, strerror(-st->write_error));
}

/*
 * The cache's directory, checked once: a directory another user owns or
 * may write into (sudo -E keeps XDG_CACHE_HOME) is not used, and the
 * one warning says why; the decode goes on without a cache.
 */
const char *capture_cache_dir(const struct capture_opts *o)
{
	static char buf[4096];
	static const char *dir;
	static int checked;
	struct stat st;

	if (checked)
		return dir;
	checked = 1;
	dir = o->no_cache ? NULL : strace_cache_default_dir(buf, sizeof(buf));
	if (!dir || strace_cache_dir_check(dir, &st) == 0)
		return dir;
	if (st.st_uid != geteuid())
		fprintf(stderr,
			PROG ": warning: the block cache %s is not used: it "
			     "belongs to uid %u, not to you (uid %u), who "
			     "could make this decode overwrite your files; "
			     "decoding without it (set XDG_CACHE_HOME to a "
			     "directory of your own, or give --no-cache)\n",
			dir, (unsigned)st.st_uid, (unsigned)geteuid());
	else
		fprintf(stderr,
			PROG ": warning: the block cache %s is not used: "
			     "others may write into it (mode %03o); decoding "
			     "without it (chmod go-w %s, or give --no-cache)\n",
			dir, (unsigned)(st.st_mode & 07777), dir);
	dir = NULL;
	return dir;
}

int capture_partial(int quiet, unsigned long long errors,
		    unsigned long long missing)
{
	if (!errors && !missing)
		return 0;
	if (!quiet)
		fprintf(stderr,
			PROG ": the trace is partial: %llu decode errors and "
			     "%llu unreadable mappings lost code (the ring has "
			     "an error event where each began; 'ptrace-read "
			     "--types error RING' lists them)%s; exit status "
			     "%d\n",
			errors, missing,
			missing ? "; make the traced objects readable at their "
				  "recorded paths, or put them in the build-id "
				  "cache ('perf buildid-cache -a FILE')"
				: "",
			CAPTURE_EXIT_PARTIAL);
	return CAPTURE_EXIT_PARTIAL;
}

/*
 * --plugin: plugins in this process, handed each batch of events before
 * the ring publishes it (strace_ring_set_tap), from whichever decoding
 * thread wrote it. A plugin that asks to stop ends a live capture; a
 * recording is decoded to its end (the ring stays whole for its
 * readers) without the plugins.
 */
static struct strace_plugins *plugins;
static struct strace_names *plugin_names;
static struct strace_live *plugin_live;

static void plugin_tap(void *arg, const struct strace_event *ev, size_t n)
{
	(void)arg;
	if (strace_plugins_dispatch(plugins, ev, n) && plugin_live)
		strace_live_request_stop(plugin_live);
}

void capture_plugins_live(struct strace_live *l)
{
	plugin_live = l;
}

/* Load the plugins; returns 0, or the exit status (the message said). */
static int plugins_load(const struct capture_opts *o,
			struct strace_ring *ring)
{
	struct strace_plugins_opts po = {.size = sizeof(po),
					 .host = "ptrace-capture"};
	char msg[1024];
	int rc;

	if (!o->nplugins)
		return 0;
	if (strace_names_new(ring, &plugin_names) < 0 ||
	    (po.names = plugin_names,
	     strace_plugins_new(&po, &plugins) < 0)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (int i = 0; i < o->nplugins; i++) {
		char found[PATH_MAX + 1024];
		rc = strace_plugins_load(plugins,
					 plugin_spec_find(o->plugin_specs[i],
							  found, sizeof(found)),
					 msg, sizeof(msg));
		if (rc < 0) {
			fprintf(stderr, PROG ": %s\n", msg);
			return rc == -ENOMEM ? 1 : 2;
		}
	}
	strace_ring_set_tap(ring, plugin_tap, NULL);
	return 0;
}

void capture_ring_close(struct strace_ring *ring)
{
	strace_ring_set_tap(ring, NULL, NULL);
	strace_plugins_free(plugins);
	plugins = NULL;
	strace_names_free(plugin_names);
	plugin_names = NULL;
	strace_ring_close(ring);
}

void capture_ring_drop(struct strace_ring *ring)
{
	unlink(strace_ring_path(ring));
	capture_ring_close(ring);
}

/* --wait-readers: hold the events for the readers (a recording), or wait
 * for them to attach (a live capture, or a ring that is not lossless) */
static void ring_wait_readers(const struct capture_opts *o,
			      struct strace_ring *ring, int lossless)
{
	if (o->wait_readers && lossless && !o->live) {
		/* a recording need not wait for its readers to start: the
		 * set-up and the first ring of events go on meanwhile */
		held_for = o->wait_readers;
		strace_ring_hold_for_readers(ring, o->wait_readers);
		if (!o->quiet)
			fprintf(stderr,
				PROG ": %s: keeping every event for %d "
				     "reader(s) (ptrace-read --follow %s); the "
				     "decode waits for them when the ring is "
				     "full\n",
				strace_ring_path(ring), o->wait_readers,
				strace_ring_path(ring));
	} else if (o->wait_readers) {
		if (!o->quiet)
			fprintf(stderr,
				PROG ": %s: waiting for %d reader(s) to attach "
				     "(ptrace-read --follow %s) before decoding\n",
				strace_ring_path(ring), o->wait_readers,
				strace_ring_path(ring));
		strace_ring_wait_readers(ring, o->wait_readers, -1);
	}
}

int capture_ring_open(const struct capture_opts *o, char *view_ring,
		      struct strace_ring **out)
{
	uint64_t capacity = o->capacity;

	/* A decode of a recording into a lossless ring its readers follow
	 * (--wait-readers, no --mode): a smaller ring than the default, 2 MiB.
	 * It is made in a third of the time (its pages faulted in: 2 ms
	 * against 6, docs/performance.md), stays in the caches the writer
	 * and its reader share, and waiting for a slow reader loses nothing
	 * of a recording (a live capture keeps the default: its trace does
	 * not wait). */
	if (!capacity && o->wait_readers && o->mode < 0 && !o->no_ring &&
	    !o->live)
		capacity = 65536;
	/* --no-ring: a ring nobody can open, that stores no event (its
	 * names are the plugins') */
	struct strace_ring_opts ro = {sizeof(ro), capacity, 0,
				      o->no_ring    ? STRACE_RING_FLIGHT
				      : o->mode >= 0 ? o->mode
				      /* readers follow: they drain a bounded
				       * ring, its pages reused, nothing lost */
				      : o->wait_readers ? STRACE_RING_LOSSLESS
							: STRACE_RING_ARCHIVE,
				      0, o->no_ring};
	struct strace_ring *ring;
	int rc = ringmsg_create(PROG, o->output, "-o", &ro, &ring);
	if (rc < 0)
		return 1;
	if (o->no_ring)
		unlink(strace_ring_path(ring));
	rc = plugins_load(o, ring);
	if (rc) {
		capture_ring_drop(ring);
		return rc;
	}
	if (o->view_path)
		snprintf(view_ring, PATH_MAX, "%s", strace_ring_path(ring));
	/* Say where the events go (live: once the session could open). */
	if (!o->output && !o->live && !o->view_path && !o->no_ring)
		printf("%s\n", strace_ring_path(ring));
	fflush(stdout);
	strace_ring_set_wait_notice(ring, on_wait, ring);
	ring_wait_readers(o, ring, ro.mode == STRACE_RING_LOSSLESS);
	*out = ring;
	return 0;
}
