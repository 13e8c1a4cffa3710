/* SPDX-License-Identifier: MIT */
/*
 * cli/ptrace-read.c - read a shared event ring (text, JSON lines, raw
 * records, or a saved ring file); generate sample events; show a ring's
 * state. See docs/man/ptrace-read.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "fields.h"
#include "format.h"
#include "pluginpath.h"
#include "out.h"
#include "report_diff.h"
#include "views.h"
#include "ringmsg.h"
#include "sample.h"
#include "strace/event.h"
#include "strace/filter.h"
#include "strace/plugin.h"
#include "strace/ring.h"
#include "strace/stack.h"
#include "strace/version.h"

#define PROG "ptrace-read"

/* exit codes (documented in the man page) */
enum {
	EXIT_OK = 0,
	EXIT_ERR = 1,        /* runtime error: file, ring, output */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_INCOMPLETE = 3, /* events were lost or a writer died */
};

#define BATCH_MAX 16384 /* events per reader batch */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/*
 * A ring file cut short by someone else while it is mapped turns the next
 * access into SIGBUS. Say so, naming the file, instead of crashing.
 */
static char bus_msg[4352];
static size_t bus_len;

static void on_sigbus(int sig)
{
	ssize_t rc;

	(void)sig;
	rc = write(2, bus_msg, bus_len);
	(void)rc;
	_exit(1);
}

static void catch_sigbus(const char *path)
{
	struct sigaction sa;
	int n = snprintf(bus_msg, sizeof(bus_msg),
			 PROG ": %s: the ring file was truncated or removed "
			      "while in use (bus error); it can no longer be "
			      "read: record it again\n",
			 path);

	bus_len = n < 0 ? 0 : (size_t)n < sizeof(bus_msg) ? (size_t)n
							  : sizeof(bus_msg) - 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
}

static int stop_cb(void *arg)
{
	(void)arg;
	return stop_flag;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

__attribute__((format(printf, 1, 2))) static void err(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char usage_text[] =
	"usage: " PROG " [-f text|jsonl|raw|ring] [-F FIELDS] [--follow]\n"
	"                   [--timeout MS]\n"
	"                   [--types PATTERNS] [--from-end] [FILTERS] [-o FILE] RING\n"
	"       " PROG " -f tree|report|folded|fxt|chrome|uftrace|svg\n"
	"                   [-D N] [-t TIME] [-C PATTERNS] [--sort KEY]\n"
	"                   [--machine-stack]\n"
	"                   [--by function|thread|dso] [--weight ns|calls]\n"
	"                   [--flame merged|time] [--min-width PX]\n"
	"                   [--follow] [FILTERS] [-o FILE] RING\n"
	"       " PROG " -f report --diff OLD [--diff-policy POLICY]\n"
	"                   [--sort KEY] [FILTERS] [-o FILE] RING\n"
	"       " PROG " -f none --plugin FILE.so[:ARGS]... [--follow]\n"
	"                   [--control FIFO] [FILTERS] RING\n"
	"       " PROG " --generate N [-o RING] [--readers K]\n"
	"                   [--mode lossless|flight] [--capacity EVENTS]\n"
	"       " PROG " --stat [RING|DIR]\n"
	"       " PROG " --gc [DIR]\n"
	"       " PROG " --list-types\n";

static const char help_text[] =
	"\n"
	"Read the events of a shared event ring and print them.\n"
	"\n"
	"  -f, --format FMT   text (default): one line per event;\n"
	"                     jsonl: one JSON object per line;\n"
	"                     raw: the 32-byte records exactly as stored;\n"
	"                     ring: save to a ring file (-o) that " PROG "\n"
	"                     reads again later, names included;\n"
	"                     tree: the call tree per thread with durations,\n"
	"                     threads merged in time order (uftrace replay);\n"
	"                     report: per function: calls, total and self\n"
	"                     time, average, maximum (uftrace report);\n"
	"                     folded: collapsed stacks for flame graphs\n"
	"                     (main;qsort;cmp NS), docs/stacks.md\n"
	"                     fxt: a Fuchsia trace for Perfetto UI;\n"
	"                     chrome: Chrome trace event JSON (Perfetto\n"
	"                     UI, chrome://tracing, speedscope);\n"
	"                     uftrace: a uftrace data directory (-o DIR)\n"
	"                     for uftrace replay, report, graph, dump;\n"
	"                     svg: a flame graph to open in a browser:\n"
	"                     hover, click to zoom, search (docs/viewing.md)\n"
	"  -D, --depth N      show frames down to depth N-1 (uftrace -D)\n"
	"  -t, --min-time TIME\n"
	"                     show frames that lasted TIME (500, 10us, 2ms,\n"
	"                     1s) or longer (uftrace -t)\n"
	"  -C, --caller PATTERNS\n"
	"                     show the functions that match and their\n"
	"                     callers, not their callees (uftrace -C)\n"
	"  --sort KEY         report: total (default), self or calls\n"
	"  --by WHAT          report: rows per function (default), thread\n"
	"                     or dso\n"
	"  --weight W         folded, svg: ns of self time (default) or calls\n"
	"  --flame KIND       svg: merged (default): the stacks merged, callees\n"
	"                     in the order of their names; time: every frame\n"
	"                     where it ran, a lane per thread, in time order\n"
	"  --min-width PX     svg: leave out frames narrower than PX pixels of\n"
	"                     the 1200 (default 0.1; 0: keep all), and count\n"
	"                     them in the subtitle\n"
	"  --diff OLD         report: compare with the ring OLD (the base),\n"
	"                     function by function, by name: calls, total\n"
	"                     and self time of RING minus OLD's (uftrace\n"
	"                     report --diff); the filters apply to both\n"
	"  --diff-policy P    with --diff, comma-separated: full (both\n"
	"                     runs' figures beside each change) or compact\n"
	"                     (default); percent: time changes in percent;\n"
	"                     no-abs: sort by the signed change, not its size\n"
	"  -o, --output FILE  write there instead of standard output\n"
	"  --follow           wait for more events until every writer has\n"
	"                     closed; wait for RING to appear\n"
	"  --timeout MS       with --follow, give up waiting for RING to\n"
	"                     appear after MS milliseconds (default: wait)\n"
	"  --types PATTERNS   comma-separated globs on type names, e.g.\n"
	"                     'call,ret*'; '-block' excludes\n"
	"  --from-end         start at the newest event, not the oldest\n"
	"  --no-comm          do not show thread names\n"
	"  -F, --fields LIST  text and jsonl: these fields, in this order\n"
	"                     (as perf script -F): seq, time, tid, pid, comm,\n"
	"                     cpu, type, from, to, sym, offset, dso, flags\n"
	"  --plugin FILE.so[:ARG,...]\n"
	"                     hand every event the filters keep to this\n"
	"                     plugin (repeatable; -f none: no other output;\n"
	"                     docs/plugins.md)\n"
	"  --control FIFO|fifo:CTL[,ACK]\n"
	"                     plugin commands between batches: load FILE,\n"
	"                     unload NAME, enable|disable PATTERN, list\n"
	"\n";

static const char help_filter_text[] =
	"Filters, for every format (docs/stacks.md):\n"
	"  --time START,END   perf time in seconds (either may be empty), or\n"
	"                     percentages of the trace: A%-B%[,C%-D%], P%/N;\n"
	"                     stack views: the frames overlapping it, cut\n"
	"  --tid TID[,TID]    these threads\n"
	"  --pid PID[,PID]    these processes\n"
	"  --comm PATTERNS    threads whose name matches (globs)\n"
	"  --sym PATTERNS     the functions that match and what they call\n"
	"  -N, --no-sym, --hide PATTERNS\n"
	"                     not the functions that match, nor their callees\n"
	"  --dso PATTERNS     code in the DSOs that match (libc.so.6, *libm*)\n"
	"  --machine-stack    the stacks as the machine ran them: a tail call\n"
	"                     replaces its caller, PLT stubs and the lazy\n"
	"                     binding are frames (default: as a person reads\n"
	"                     them, as uftrace shows them; docs/stacks.md)\n"
	"\n";

static const char help_ring_text[] =
	"  --generate N       write N sample events of every type into a new\n"
	"                     ring (-o RING, default $STRACE_RING or\n"
	"                     /dev/shm/strace_<pid>_<random>.srb)\n"
	"  --readers K        with --generate, wait for K readers first\n"
	"  --mode MODE        with --generate: lossless (default) or flight\n"
	"  --capacity EVENTS  with --generate: ring size, a power of two\n"
	"  --stat             print a ring's header, counts, readers, writers;\n"
	"                     with no RING, or a directory, list the rings\n"
	"                     there (default: where rings are made, the\n"
	"                     directory of $STRACE_RING or /dev/shm): memory,\n"
	"                     mode, created, live or stale\n"
	"  --gc               remove the stale rings of DIR (default: as\n"
	"                     --stat): yours, of this format, with every\n"
	"                     writer and reader and the creator gone\n"
	"  --list-types       print the event type table\n"
	"  -h, --help         this text\n"
	"      --version      the version\n"
	"\n"
	"Exit status: 0 all events read; 1 runtime error (the message names\n"
	"the file; --gc: a stale ring could not be removed); 2 usage error;\n"
	"3 the output is partial: events were lost, a writer died, or\n"
	"(without --follow) a writer was still writing (a summary is\n"
	"printed on standard error).\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	fputs(usage_text, stderr);
	fputs("Try '" PROG " --help' for more.\n", stderr);
	return EXIT_USAGE;
}

/* What went wrong opening or creating a ring, and what to do about it. */
static void ring_error(const char *path, int rc, const char *doing)
{
	const char *hint = "";

	switch (-rc) {
	case ENOENT:
		hint = "; check the path, or use --follow (with --timeout MS) "
		       "to wait for the writer to create it";
		break;
	case EACCES:
	case EPERM:
		hint = "; ring files are created mode 0600: run as the user "
		       "who created it";
		break;
	case ELOOP:
		hint = "; it is a symbolic link, which ring files never are "
		       "(a link could point at another user's file): pass the "
		       "real file's path";
		break;
	case EEXIST:
		hint = "; a ring is never written over an existing file: "
		       "remove it or choose another path";
		break;
	case EISDIR:
		hint = "; pass the path of a ring file";
		break;
	case ENOSPC:
	case ENOMEM:
		hint = "; free space in the file system (/dev/shm is memory)";
		break;
	case STRACE_E_MAGIC:
		hint = "; pass a ring written by a strace writer or by "
		       PROG " -f ring";
		break;
	case STRACE_E_VERSION:
		hint = "; read it with the " PROG " version that wrote it";
		break;
	case STRACE_E_TRUNCATED:
		hint = "; the file was cut short (copied while being written, "
		       "or the disk filled up): copy or record it again";
		break;
	case STRACE_E_CORRUPT:
		hint = "; the file is damaged or not a ring: record it again";
		break;
	case STRACE_E_FOREIGN:
		hint = "; pass a regular ring file that you own";
		break;
	case STRACE_E_FULL:
		hint = "; close some readers or writers of this ring";
		break;
	case STRACE_E_BADARG:
		hint = "; the capacity must be a power of two";
		break;
	case STRACE_E_BUSY:
		hint = "; that process is stopped or stuck, or the file is "
		       "damaged: resume or end it (--stat names it), or read "
		       "another ring";
		break;
	}
	err("%s: cannot %s: %s%s", path, doing, strace_strerror(rc), hint);
}

/* --- reading ------------------------------------------------------------- */

struct opts {
	int format;
	int follow;
	long timeout_ms; /* -1: no limit */
	int timeout_set;
	const char *types;
	const char *output;
	int from_end;
	int no_comm;
	/* generate */
	long long generate;
	int readers;
	int mode;
	unsigned long long capacity;
	int stat;
	int gc;
	int list_types;
	/* -F: the fields of text and JSON lines (fields.n 0: all) */
	struct fields fields;
	/* stack views (-f tree, report, folded) */
	int view; /* 0: none, else 1 + enum view_kind */
	struct view_opts vo;
	const char *diff;     /* -f report --diff OLD: the base ring */
	unsigned diff_policy; /* REPORT_DIFF_* */
	int diff_policy_set;
	/* read-side filters, in the order given */
	struct {
		int kind; /* enum strace_filter_kind */
		const char *value;
	} filters[64];
	int nfilters;
	/* plugins, in the order given, and the control FIFO */
	const char *plugins[32];
	int nplugins;
	const char *control;
};

struct rd {
	const struct opts *o;
	const char *path;
	struct strace_ring *ring;
	struct strace_reader *r;
	struct fmt_filter flt;
	int flight;
	struct strace_names *names;
	struct fmt fmt;
	struct out out;
	struct strace_event *copy; /* flight mode: the batch, copied */
	/* -f ring */
	struct strace_ring *dst;
	struct strace_writer *w;
	uint64_t nread, nlost;
	uint64_t first_seq;  /* where this reader started */
	int started;
	uint64_t ring_lost;  /* events lost by writers (lost events in the ring) */
	uint64_t seen;       /* the types of the batch (count_ring_losses) */
	/* -F: o->fields with the threads' CPUs (fields_see()) */
	struct fields fields;
	/* read-side filters (--time, --tid, --sym, ...): NULL when none */
	struct strace_filter *filt;
	struct strace_stack *fstack; /* the stacks --sym / --no-sym need */
	struct view *view;           /* -f tree, report, folded */
	int usage;                   /* a setup failed on the command line */
	struct strace_plugins *plugins; /* --plugin: NULL when none */
	int plugin_stop;                /* a plugin asked to stop */
	struct control ctl;             /* --control */
};

/* The plugins get ev[from, to) in one dispatch (a run of kept events). */
static void plugins_run(struct rd *d, const struct strace_event *ev,
			size_t from, size_t to)
{
	if (to > from && d->plugins && !d->plugin_stop)
		d->plugin_stop =
			strace_plugins_dispatch(d->plugins, ev + from, to - from);
}

/* Hand events to the plugins (those the filters keep; show_filtered hands
 * over its own, with the --sym scope). */
static void plugins_feed(struct rd *d, const struct strace_event *ev,
			 size_t n)
{
	if (!d->plugins || d->plugin_stop)
		return;
	if (!d->filt && !d->o->types) {
		plugins_run(d, ev, 0, n);
		return;
	}
	/* each run of kept events in one dispatch (one lock, one look at
	 * the names) */
	for (size_t i = 0, j; i < n && !d->plugin_stop; i = j + 1) {
		for (j = i; j < n && fmt_wanted(&d->flt, ev[j].type) &&
			    (!d->filt || strace_filter_event(d->filt, &ev[j]));
		     j++)
			;
		plugins_run(d, ev, i, j);
	}
}

/* Losses that happened in the ring itself, recorded there as lost events
 * (docs/events.md): they make the exit status 3 like the reader's own.
 * The batch's types are noted for the view (d->seen: bit 1 << type % 64,
 * the views' view_feed()). */
static void count_ring_losses(struct rd *d, const struct strace_event *ev,
			      size_t n)
{
	uint64_t seen = 0;

	for (size_t i = 0; i < n; i++) {
		/* the first touch of the batch: bring it in ahead (the
		 * formats then find it in the cache) */
		__builtin_prefetch(&ev[i + 256]);
		seen |= 1ull << (ev[i].type & 63);
	}
	d->seen = seen;
	if (!(seen >> STRACE_EV_LOST & 1))
		return;
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == STRACE_EV_LOST &&
		    (ev[i].flags == STRACE_LOST_READER ||
		     ev[i].flags == STRACE_LOST_WRITER ||
		     ev[i].flags == STRACE_LOST_WRITE))
			d->ring_lost += ev[i].a;
}

static int ring_put(struct rd *d, const struct strace_event *e)
{
	struct strace_event *s = strace_writer_slot(d->w);

	if (!s) {
		int rc = strace_writer_error(d->w);
		ringmsg_write_error(PROG, d->o->output, rc, "-o", NULL);
		return -1;
	}
	*s = *e;
	return 0;
}

/* Show a loss the reader itself suffered, at its place in the stream. */
static int show_lost(struct rd *d, uint64_t count, uint64_t first)
{
	struct strace_event e;

	d->nlost += count;
	fmt_lost_event(&e, count, first);
	plugins_feed(d, &e, 1);
	if (d->view) /* an instant of the viewer formats, not a text line */
		return view_feed(d->view, &e, 1, ~0ull) == 0 ? 0 : -1;
	if (!fmt_wanted(&d->flt, STRACE_EV_LOST))
		return 0;
	switch (d->o->format) {
	case FMT_TEXT:
		d->out.p = fmt_text_event(&d->fmt, d->out.p, &e, first);
		break;
	case FMT_JSONL:
		d->out.p = fmt_json_event(&d->fmt, d->out.p, &e, first);
		break;
	case FMT_RAW:
		memcpy(d->out.p, &e, sizeof(e));
		d->out.p += sizeof(e);
		break;
	case FMT_RING:
		return ring_put(d, &e);
	case FMT_NONE:
		return 0;
	}
	if (d->out.p > d->out.limit)
		return out_flush(&d->out);
	return 0;
}

/* Whether the read-side filters keep e (fed to their stacks in order). */
static int filter_keeps(struct rd *d, const struct strace_event *e)
{
	const struct strace_frame *fr;
	size_t n;
	int keep, in;

	if (!d->filt)
		return 1;
	keep = strace_filter_event(d->filt, e);
	if (!d->fstack)
		return keep;
	/* in the functions --sym asks for before the event or after it (a
	 * call into them, a return out of them) */
	n = strace_stack_frames(d->fstack, e->tid, &fr);
	in = strace_filter_in_scope(d->filt, fr, n, NULL);
	strace_stack_feed(d->fstack, e, 1);
	n = strace_stack_frames(d->fstack, e->tid, &fr);
	in |= strace_filter_in_scope(d->filt, fr, n, NULL);
	return keep && (in || (e->type >= STRACE_EV_PROCESS &&
			       e->type <= STRACE_EV_SYMBOL));
}

/* Events one by one through the filters (the slow path of --time,
 * --tid, --sym ..., and of -F); the plugins get each run of kept events
 * at once. */
static int show_filtered(struct rd *d, const struct strace_event *ev,
			 size_t n, uint64_t seq)
{
	struct out *o = &d->out;
	size_t run = 0; /* where the run of kept events ending at i began */

	for (size_t i = 0; i < n; i++) {
		const struct strace_event *e = &ev[i];
		if (d->fields.n)
			fields_see(&d->fields, e);
		if (!filter_keeps(d, e) || !fmt_wanted(&d->flt, e->type)) {
			plugins_run(d, ev, run, i);
			run = i + 1;
			continue;
		}
		switch (d->o->format) {
		case FMT_TEXT:
			o->p = d->fields.n
				       ? fields_text(&d->fields, d->names,
						     o->p, e, seq + i)
				       : fmt_text_event(&d->fmt, o->p, e,
							seq + i);
			break;
		case FMT_JSONL:
			o->p = d->fields.n
				       ? fields_json(&d->fields, d->names,
						     o->p, e, seq + i)
				       : fmt_json_event(&d->fmt, o->p, e,
							seq + i);
			break;
		case FMT_RAW:
			memcpy(o->p, e, sizeof(*e));
			o->p += sizeof(*e);
			break;
		case FMT_RING:
			if (ring_put(d, e) < 0)
				return -1;
			continue;
		case FMT_NONE:
			continue;
		}
		if (out_room(o) < 0)
			return -1;
	}
	plugins_run(d, ev, run, n);
	return 0;
}

/* Format n events at ev (positions seq...): the hot path. */
static int show_events(struct rd *d, const struct strace_event *ev, size_t n,
		       uint64_t seq)
{
	struct out *o = &d->out;
	char *p = o->p;
	size_t i, done;

	if (d->view) {
		plugins_feed(d, ev, n);
		return view_feed(d->view, ev, n, d->seen) == 0 ? 0 : -1;
	}
	if (d->filt || d->fields.n)
		return show_filtered(d, ev, n, seq);
	plugins_feed(d, ev, n);
	switch (d->o->format) {
	case FMT_TEXT:
	case FMT_JSONL:
		while (n) {
			p = d->o->format == FMT_TEXT
				    ? fmt_text_batch(&d->fmt, p, o->limit, ev, n,
						     seq, &d->flt, &done)
				    : fmt_json_batch(&d->fmt, p, o->limit, ev, n,
						     seq, &d->flt, &done);
			ev += done;
			seq += done;
			n -= done;
			if (p > o->limit) {
				o->p = p;
				if (out_flush(o) < 0)
					return -1;
				p = o->p;
			}
		}
		break;
	case FMT_RAW:
		if (!d->o->types) {
			/* every event as it is: written from the ring itself
			 * (after what is buffered), not copied first */
			o->p = p;
			if (out_flush(o) < 0 ||
			    out_write(o, ev, n * sizeof(*ev)) < 0)
				return -1;
			return 0;
		}
		for (i = 0; i < n; i++) {
			const struct strace_event *e = &ev[i];
			if (!fmt_wanted(&d->flt, e->type))
				continue;
			memcpy(p, e, sizeof(*e));
			p += sizeof(*e);
			if (p > o->limit) {
				o->p = p;
				if (out_flush(o) < 0)
					return -1;
				p = o->p;
			}
		}
		break;
	case FMT_RING:
		for (i = 0; i < n; i++) {
			if (!fmt_wanted(&d->flt, ev[i].type))
				continue;
			if (ring_put(d, &ev[i]) < 0)
				return -1;
		}
		break;
	case FMT_NONE:
		break;
	}
	o->p = p;
	return 0;
}

static int one_batch(struct rd *d, const struct strace_batch *b)
{
	size_t k;

	if (!d->started && (b->lost || b->n)) {
		d->started = 1;
		d->first_seq = b->seq - b->lost;
	}
	if (b->lost && show_lost(d, b->lost, b->seq - b->lost) < 0)
		return -1;
	if (!b->n)
		return 0;
	d->nread += b->n;
	if (d->names) {
		int rc = strace_names_update(d->names);
		uint64_t bad;
		if (rc == -ENOMEM) {
			err("out of memory reading the names of %s", d->path);
			return -1;
		}
		if (rc < 0 && strace_names_corrupt(d->names, &bad))
			err("%s: warning: the string table is damaged at offset "
			    "%" PRIu64 " (%s); names defined after it are "
			    "shown as unknown",
			    d->path, bad, strace_strerror(rc));
	}
	if (d->dst) {
		int rc = strace_ring_sync_strings(d->dst, d->ring);
		if (rc < 0) {
			err("%s: cannot copy the string table of %s: %s",
			    d->o->output, d->path, strace_strerror(rc));
			return -1;
		}
	}
	if (!d->flight) {
		/* lossless and archive rings: nothing moves under us, read
		 * in place, then release */
		count_ring_losses(d, b->ev, b->n);
		if (show_events(d, b->ev, b->n, b->seq) < 0)
			return -1;
		k = strace_reader_release(d->r, b);
		if (k) {
			/* cannot happen outside flight mode; counted anyway */
			d->nread -= k < b->n ? k : b->n;
			return show_lost(d, k, b->seq);
		}
		return 0;
	}
	/*
	 * Flight recorder: a writer may overwrite the batch while we hold
	 * it. Copy it, then release: release says how many at the front of
	 * the copy may be torn; the rest of the copy is good.
	 */
	strace_batch_copy(d->copy, b);
	k = strace_reader_release(d->r, b);
	if (k > b->n)
		k = b->n;
	d->nread -= k;
	if (k && show_lost(d, k, b->seq) < 0)
		return -1;
	count_ring_losses(d, d->copy + k, b->n - k);
	return show_events(d, d->copy + k, b->n - k, b->seq + k);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An inotify watch on the directory of path for files created or moved
 * there: a descriptor, or -1 (none can be made: the caller sleeps); *wd
 * the watch. */
static int watch_dir(const char *path, int *wd)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -1;
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd >= 0 &&
	    (*wd = inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Done with the watch: removed at once, its descriptor closed later. The
 * kernel frees a removed watch after a grace period, and closing the
 * descriptor waits for that (13 ms measured here, while a capture with
 * --wait-readers waited for this reader to attach); by the time the next
 * watch is done with, or the process exits, it has passed.
 */
static void unwatch(int fd, int wd)
{
	static int spent = -1;

	(void)inotify_rm_watch(fd, wd);
	if (spent >= 0)
		close(spent);
	spent = fd;
}

/* Until something is created in the watched directory (at most 100 ms:
 * the caller's deadlines and Ctrl-C are looked at in between), or 5 ms
 * without a watch. */
static void wait_created(int wfd)
{
	struct pollfd pf = {wfd, POLLIN, 0};
	char ev[4096];

	if (wfd < 0) {
		usleep(5000);
		return;
	}
	if (poll(&pf, 1, 100) > 0)
		while (read(wfd, ev, sizeof(ev)) > 0)
			;
}

/*
 * Open path, waiting for it to appear with --follow (woken when a file is
 * created in its directory: a capture started after the reader waits for
 * it, --wait-readers). A file caught while its creator is still writing
 * the header reads as bad magic or truncated: retry those for a short
 * while too (every 0.2 ms: the header is written right after).
 */
static int open_ring(const struct opts *o, const char *path,
		     struct strace_ring **ring, int *timed_out)
{
	long long start = now_ms();
	int said = 0, wfd = -2, wd = -1; /* -2: no watch tried yet */
	int rc;

	*timed_out = 0;
	for (;;) {
		long long waited;
		int retry;

		rc = strace_ring_open(path, ring);
		waited = now_ms() - start;
		if (rc == 0 || !o->follow)
			break;
		retry = rc == -ENOENT ||
			((rc == -STRACE_E_MAGIC || rc == -STRACE_E_TRUNCATED) &&
			 waited < 2000);
		if (!retry)
			break;
		if (o->timeout_ms >= 0 && waited >= o->timeout_ms) {
			*timed_out = 1;
			break;
		}
		if (stop_flag)
			break;
		if (!said && rc == -ENOENT && waited >= 1000) {
			err("%s: no such ring yet: waiting for a writer to "
			    "create it (Ctrl-C stops; --timeout MS gives up)",
			    path);
			said = 1;
		}
		if (rc != -ENOENT) {
			usleep(200);
		} else if (wfd == -2) {
			/* watched from now on: look again first, in case
			 * it came before the watch */
			wfd = watch_dir(path, &wd);
		} else {
			wait_created(wfd);
		}
	}
	if (wfd >= 0)
		unwatch(wfd, wd);
	return rc;
}

static int save_ring_create(struct rd *d)
{
	struct strace_ring_stat st;
	struct strace_ring_opts ro;
	int rc;

	rc = strace_ring_stat(d->ring, &st);
	if (rc < 0) {
		ring_error(d->path, rc, "read the header");
		return -1;
	}
	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.mode = STRACE_RING_ARCHIVE;
	ro.capacity = 1u << 16;
	/* the whole table while it may grow, else what is used */
	ro.strings_size = st.strings_size;
	if (!d->o->follow && st.closed && st.strings_used < st.strings_size)
		ro.strings_size = (st.strings_used + 4095) & ~4095ull;
	if (!ro.strings_size)
		ro.strings_size = 4096;
	ro.no_populate = 1;
	rc = ringmsg_create(PROG, d->o->output, "-o", &ro, &d->dst);
	if (rc < 0)
		return -1;
	rc = strace_writer_open(d->dst, &d->w);
	if (rc < 0) {
		ring_error(d->o->output, rc, "write the saved ring");
		return -1;
	}
	return 0;
}

/* whether a and b name the same existing file */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Every event of the ring, through a reader of its own, to visit (a
 * pass before the read). Returns 0, or -1 after a message. */
static int scan_ring(struct rd *d,
		     void (*visit)(void *arg, const struct strace_event *ev,
				   size_t n),
		     void *arg)
{
	struct strace_reader *r;
	struct strace_batch b;
	long n;
	int rc = strace_reader_open(d->ring, 0, &r);

	if (rc < 0) {
		ring_error(d->path, rc, "attach a reader to the ring");
		return -1;
	}
	while ((n = strace_reader_next(r, &b, BATCH_MAX, 0)) > 0) {
		visit(arg, b.ev, (size_t)n);
		strace_reader_release(r, &b);
	}
	strace_reader_close(r);
	return 0;
}

static void span_visit(void *arg, const struct strace_event *ev, size_t n)
{
	uint64_t *fl = arg;

	for (size_t i = 0; i < n; i++) {
		if (!ev[i].time)
			continue;
		if (ev[i].time < fl[0])
			fl[0] = ev[i].time;
		if (ev[i].time > fl[1])
			fl[1] = ev[i].time;
	}
}

/* The times of the trace's first and last event (0, 0: none). */
static int trace_span(struct rd *d, uint64_t *first, uint64_t *last)
{
	uint64_t fl[2] = {UINT64_MAX, 0};

	if (scan_ring(d, span_visit, fl) < 0)
		return -1;
	*first = fl[0] == UINT64_MAX ? 0 : fl[0];
	*last = fl[0] == UINT64_MAX ? 0 : fl[1];
	return 0;
}

static void frames_visit(void *arg, const struct strace_event *ev, size_t n)
{
	uint64_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += ev[i].type == STRACE_EV_CALL ||
		     ev[i].type == STRACE_EV_SYSCALL ||
		     ev[i].type == STRACE_EV_INTERRUPT;
	*(uint64_t *)arg += k;
}

/*
 * -f chrome and fxt: a warning, before the events are written, when the
 * output will pass what its viewers load, with the options that cut it.
 * Its size is estimated from the frames the events begin (a call, a
 * syscall, an interrupt) and the bytes a frame takes (tests/view: 150 to
 * 160 in JSON, 33 to 40 in FXT); with filters it is at most that. The
 * pass over the ring is made only for a ring big enough to pass it.
 */
static int warn_size(struct rd *d)
{
	const struct view_opts *vo = &d->o->vo;
	const char *env = getenv("STRACE_VIEW_WARN_MB");
	int chrome = vo->kind == VIEW_CHROME;
	uint64_t frames = 0, mb, limit_mb = chrome ? 300 : 1000;

	if (d->o->follow || (vo->kind != VIEW_CHROME && vo->kind != VIEW_FXT))
		return 0;
	if (env && *env)
		limit_mb = strtoull(env, NULL, 10);
	/* (no pass when the output stays under the limit even if every
	 * event made a frame) */
	if (strace_ring_committed(d->ring) * (chrome ? 160 : 40) / 1000000 <
	    limit_mb)
		return 0;
	if (scan_ring(d, frames_visit, &frames) < 0)
		return -1;
	mb = (frames * (chrome ? 160 : 40) + 999999) / 1000000;
	if (mb <= limit_mb)
		return 0;
	err("%s: the %s will be %sabout %" PRIu64 " MB (%" PRIu64 " frames), more "
	    "than its viewers load (%s): cut it with --time (e.g. --time "
	    "0%%-10%%), --min-time, --tid, --sym or --depth%s",
	    d->path, chrome ? "Chrome JSON" : "FXT trace",
	    d->filt || vo->min_time || vo->depth ? "at most " : "", mb,
	    frames,
	    chrome ? "a browser cannot parse JSON text over 512 MB, and "
		     "speedscope and chrome://tracing fail well before"
		   : "Perfetto UI holds about 2 GB in the browser",
	    chrome ? ", or write -f fxt (a quarter of the size)" : "");
	return 0;
}

/* the options of the filters, by enum strace_filter_kind */
static const char *const filter_opt[] = {
	[STRACE_FILTER_TIME] = "--time",     [STRACE_FILTER_TID] = "--tid",
	[STRACE_FILTER_PID] = "--pid",       [STRACE_FILTER_COMM] = "--comm",
	[STRACE_FILTER_SYM] = "--sym",       [STRACE_FILTER_NO_SYM] = "--no-sym",
	[STRACE_FILTER_DSO] = "--dso",       [STRACE_FILTER_CALLER] = "--caller",
};

/* The read-side filters of the command line (d->filt stays NULL when
 * there are none). */
static int setup_filters(struct rd *d)
{
	const struct opts *o = d->o;
	struct strace_stack_opts so = {.size = sizeof(so),
				       .machine = o->vo.machine};
	char msg[256];

	if (!o->nfilters)
		return 0;
	if (strace_filter_new(d->names, &d->filt) < 0) {
		err("out of memory");
		return -1;
	}
	for (int i = 0; i < o->nfilters; i++) {
		int rc = strace_filter_add(d->filt, o->filters[i].kind,
					   o->filters[i].value, msg,
					   sizeof(msg));
		if (rc == -ENOMEM) {
			err("out of memory");
			return -1;
		}
		if (rc < 0) {
			usage_error("%s %s", filter_opt[o->filters[i].kind],
				    msg);
			d->usage = 1;
			return -1;
		}
	}
	if (strace_filter_needs_span(d->filt)) {
		uint64_t first, last;
		if (o->follow) {
			usage_error("--time in percentages needs the whole "
				    "trace: not with --follow (give seconds)");
			d->usage = 1;
			return -1;
		}
		if (trace_span(d, &first, &last) < 0)
			return -1;
		strace_filter_set_span(d->filt, first, last);
	}
	if (strace_filter_needs_stack(d->filt) && !o->view &&
	    strace_stack_new(d->names, &so, NULL, &d->fstack) < 0) {
		err("out of memory");
		return -1;
	}
	return 0;
}

/* A filter's id or pattern that matched nothing is said (the output is
 * what the others kept: the read still succeeds). */
static void say_unmatched(struct rd *d, const char *path)
{
	static const char *const what[] = {
		[STRACE_FILTER_TID] = "no thread of that id has events",
		[STRACE_FILTER_PID] = "no process of that id has events",
		[STRACE_FILTER_COMM] = "no thread of that name has events",
		[STRACE_FILTER_SYM] = "no function of that name ran (-f report "
				      "lists those that did)",
		[STRACE_FILTER_NO_SYM] = "no function of that name ran (-f "
					 "report lists those that did)",
		[STRACE_FILTER_DSO] = "no code of such a DSO ran (-f report "
				      "--by dso lists those that did)",
		[STRACE_FILTER_CALLER] = "no function of that name ran (-f "
					 "report lists those that did)",
		[STRACE_FILTER_TIME] = "no event or frame of the trace is in "
				       "that time (-f text shows the times; "
				       "--time 0%-100% is all of it)",
	};
	enum strace_filter_kind kind;
	const char *value;

	for (size_t i = 0; strace_filter_unmatched(d->filt, i, &kind, &value);
	     i++)
		err("%s: %s %s matched nothing: %s", path, filter_opt[kind],
		    value, what[kind]);
}

/* A stack view whose filters left no frame says so (when the trace had
 * some): the empty output is not a trace without calls. */
static void say_no_frames(struct rd *d, const char *path)
{
	struct strace_stack_stats st;
	const struct view_opts *vo = &d->o->vo;

	view_stack_stats(d->view, &st);
	if (view_frames_shown(d->view) || !st.frames ||
	    (!d->filt && !vo->min_time && !vo->depth))
		return;
	err("%s: the filters left none of the trace's %" PRIu64 " frames%s: "
	    "the output is empty; loosen them (-f report without them lists "
	    "the functions and their times)",
	    path, st.frames,
	    vo->min_time ? " (none lasted --min-time)" : "");
}

static int setup_view(struct rd *d)
{
	int rc;

	if (!d->o->view)
		return 0;
	rc = view_new(&d->o->vo, d->names, d->filt, &d->out, &d->view);
	if (rc < 0) {
		/* (-1: a format that could not open said why) */
		if (rc == -ENOMEM)
			err("out of memory");
		return -1;
	}
	return 0;
}

/* --- a saved ring's threads, merged by time (-f tree) --------------------- */

/* A run of one thread's events: positions [start, end). */
struct run {
	uint64_t start, end;
	uint32_t tid;
	uint32_t next; /* the thread's next run, or UINT32_MAX */
};

struct mthread {
	uint32_t tid;
	uint32_t run;  /* the current run, UINT32_MAX when done */
	uint64_t pos;  /* the next position to read */
	uint64_t head; /* the time of the event at pos */
	uint32_t last; /* the thread's last run (while building) */
};

/* Feed events from pos on while they are not later than limit (or until
 * the run ends); the thread's pos and head move on. */
static int merge_step(struct rd *d, struct mthread *t, const struct run *runs,
		      uint64_t limit)
{
	struct strace_batch b;

	while (t->run != UINT32_MAX) {
		const struct run *r = &runs[t->run];
		long n;
		size_t k = 0;
		if (t->pos >= r->end) {
			t->run = r->next;
			if (t->run != UINT32_MAX)
				t->pos = runs[t->run].start;
			continue;
		}
		strace_reader_seek(d->r, t->pos);
		n = strace_reader_next(d->r, &b, (size_t)(r->end - t->pos), 0);
		if (n <= 0) {
			if (n < 0)
				ring_error(d->path, (int)n, "read the ring");
			return n < 0 ? -1 : 0;
		}
		/* a thread's events stay in its order; definitions (time 0)
		 * go with the events around them */
		while (k < (size_t)n && (!b.ev[k].time || b.ev[k].time <= limit))
			k++;
		count_ring_losses(d, b.ev, k);
		if (k && show_events(d, b.ev, k, b.seq) < 0)
			return -1;
		t->pos += k;
		if (k < (size_t)n) {
			t->head = b.ev[k].time;
			return 0;
		}
	}
	t->head = UINT64_MAX;
	return 0;
}

/*
 * Read a saved ring with each thread's events in its order and the
 * threads merged by time: a first pass notes where each thread's runs
 * of events are (memory: the runs, not the events); when the ring is in
 * time order already, or has one thread, it is read straight.
 */
static int read_merged(struct rd *d)
{
	struct strace_batch b;
	struct run *runs = NULL;
	struct mthread *th = NULL;
	size_t nruns = 0, rcap = 0, nth = 0, tcap = 0;
	uint64_t prev = 0, pos = 0;
	int ordered = 1, rc = 0;
	long n;

	while ((n = strace_reader_next(d->r, &b, BATCH_MAX, 0)) > 0) {
		for (long i = 0; i < n; i++, pos++) {
			const struct strace_event *e = &b.ev[i];
			if (e->time) {
				ordered &= e->time >= prev;
				prev = e->time;
			}
			if (nruns && runs[nruns - 1].tid == e->tid &&
			    runs[nruns - 1].end == b.seq + (uint64_t)i) {
				runs[nruns - 1].end++;
				continue;
			}
			if (nruns == rcap) {
				rcap = rcap ? 2 * rcap : 1024;
				struct run *nr = realloc(runs, rcap * sizeof(*nr));
				if (!nr)
					goto nomem;
				runs = nr;
			}
			runs[nruns] = (struct run){b.seq + (uint64_t)i,
						   b.seq + (uint64_t)i + 1,
						   e->tid, UINT32_MAX};
			size_t k;
			for (k = 0; k < nth && th[k].tid != e->tid; k++)
				;
			if (k == nth) {
				if (nth == tcap) {
					tcap = tcap ? 2 * tcap : 64;
					struct mthread *nt =
						realloc(th, tcap * sizeof(*nt));
					if (!nt)
						goto nomem;
					th = nt;
				}
				th[nth++] = (struct mthread){
					e->tid, (uint32_t)nruns, 0, 0,
					(uint32_t)nruns};
			} else {
				runs[th[k].last].next = (uint32_t)nruns;
				th[k].last = (uint32_t)nruns;
			}
			nruns++;
		}
		strace_reader_release(d->r, &b);
	}
	if (n < 0) {
		ring_error(d->path, (int)n, "read the ring");
		rc = -1;
		goto out;
	}
	d->nread = pos;
	if (d->names)
		(void)strace_names_update(d->names);
	/* the second pass: straight, or the threads by time */
	for (size_t k = 0; k < nth; k++) {
		th[k].pos = nruns ? runs[th[k].run].start : 0;
		th[k].head = 0;
	}
	if (ordered || nth < 2) {
		strace_reader_seek(d->r, nruns ? runs[0].start : 0);
		while ((n = strace_reader_next(d->r, &b, BATCH_MAX, 0)) > 0) {
			count_ring_losses(d, b.ev, (size_t)n);
			if (show_events(d, b.ev, (size_t)n, b.seq) < 0) {
				rc = -1;
				goto out;
			}
			strace_reader_release(d->r, &b);
		}
		goto out;
	}
	for (;;) {
		size_t best = nth, second = nth;
		for (size_t k = 0; k < nth; k++) {
			if (th[k].head == UINT64_MAX)
				continue;
			if (best == nth || th[k].head < th[best].head) {
				second = best;
				best = k;
			} else if (second == nth ||
				   th[k].head < th[second].head) {
				second = k;
			}
		}
		if (best == nth)
			break;
		if (merge_step(d, &th[best], runs,
			       second == nth ? UINT64_MAX
					     : th[second].head) < 0) {
			rc = -1;
			break;
		}
	}
	goto out;
nomem:
	err("out of memory merging the threads of %s", d->path);
	rc = -1;
out:
	free(runs);
	free(th);
	return rc;
}

/* A control FIFO's command (--control): the plugins' commands. */
static int plugin_command(void *arg, const char *line, char *reply,
			  size_t len)
{
	struct rd *d = arg;
	int rc = strace_plugins_control(d->plugins, line, reply, len);

	if (rc < 0 && d->ctl.ack < 0)
		err("--control: %s: %s", line, reply);
	return rc;
}

/* --plugin and --control: load every plugin before reading. */
static int setup_plugins(struct rd *d)
{
	const struct opts *o = d->o;
	struct strace_plugins_opts po = {
		.size = sizeof(po), .host = "ptrace-read", .names = d->names};
	char msg[1024];
	int rc;

	if (!o->nplugins && !o->control)
		return 0;
	if (strace_plugins_new(&po, &d->plugins) < 0) {
		err("out of memory");
		return EXIT_ERR;
	}
	for (int i = 0; i < o->nplugins; i++) {
		char found[PATH_MAX + 1024];
		rc = strace_plugins_load(d->plugins,
					 plugin_spec_find(o->plugins[i], found,
							  sizeof(found)),
					 msg, sizeof(msg));
		if (rc < 0) {
			err("%s", msg);
			return rc == -ENOMEM ? EXIT_ERR : EXIT_USAGE;
		}
	}
	if (o->control) {
		rc = control_open(&d->ctl, o->control);
		if (rc < 0) {
			err("--control %s: cannot open it: %s (create the FIFO "
			    "with mkfifo first)",
			    o->control, strerror(-rc));
			return EXIT_USAGE;
		}
	}
	return 0;
}

/*
 * Read the ring at path and show it as the options say; with keep (-f
 * report --diff: o->vo.rows_only), print nothing but hand the report
 * view, finished, to the caller (who frees it), unless reading failed.
 * Returns the exit status.
 */
static int cmd_read(const struct opts *o, const char *path,
		    struct view **keep)
{
	struct rd d;
	struct strace_ring_stat st;
	struct strace_batch b;
	int rc, timed_out, status = STRACE_READER_LIVE, ret = EXIT_OK;

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.fields = o->fields;
	d.seen = ~0ull; /* (until a batch is counted) */
	d.path = path;

	if (o->types) {
		const char *bad = NULL;
		size_t bad_len = 0;
		if (strace_typeset_parse(&d.flt.set, o->types, &bad,
					 &bad_len) < 0) {
			return usage_error(
				"--types: '%.*s' matches no event type (see "
				"'" PROG " --list-types'; patterns are globs "
				"like 'call,ret*' or '-block')",
				(int)bad_len, bad ? bad : "");
		}
	} else {
		/* everything but pad, values the table does not name too */
		memset(&d.flt.set, 0xff, sizeof(d.flt.set));
		d.flt.set.bits[0] &= ~1ull;
		d.flt.unknown = 1;
	}

	catch_sigbus(path);
	rc = open_ring(o, path, &d.ring, &timed_out);
	if (rc < 0) {
		if (timed_out)
			err("%s: the ring did not appear within %ld ms "
			    "(--timeout); check that the writer is running "
			    "and uses this path",
			    path, o->timeout_ms);
		else
			ring_error(path, rc, "open the ring");
		return EXIT_ERR;
	}
	rc = strace_ring_stat(d.ring, &st);
	if (rc < 0) {
		ring_error(path, rc, "read the header");
		strace_ring_close(d.ring);
		return EXIT_ERR;
	}
	d.flight = st.mode == STRACE_RING_FLIGHT;
	if (d.flight) {
		d.copy = malloc(BATCH_MAX * sizeof(*d.copy));
		if (!d.copy) {
			err("out of memory");
			strace_ring_close(d.ring);
			return EXIT_ERR;
		}
	}
	if (strace_names_new(d.ring, &d.names) < 0) {
		err("out of memory");
		free(d.copy);
		strace_ring_close(d.ring);
		return EXIT_ERR;
	}
	fmt_setup(&d.fmt, d.names, !o->no_comm);
	rc = setup_plugins(&d);
	if (rc) {
		ret = rc;
		goto out_ring;
	}

	if (o->output && same_file(o->output, path)) {
		err("%s: the output is the ring being read; writing there would "
		    "destroy it: choose another -o FILE",
		    o->output);
		ret = EXIT_ERR;
		goto out_ring;
	}
	if (o->format == FMT_RING) {
		if (save_ring_create(&d) < 0) {
			ret = EXIT_ERR;
			goto out_ring;
		}
	} else if (o->format != FMT_NONE && !keep &&
		   out_open(&d.out, PROG,
			    o->view == 1 + VIEW_UFTRACE ? NULL : o->output) < 0) {
		/* (-f uftrace writes its files into the directory -o names) */
		ret = EXIT_ERR;
		goto out_ring;
	}

	rc = strace_reader_open(d.ring, o->from_end, &d.r);
	if (rc < 0) {
		ring_error(path, rc, "attach a reader to the ring");
		ret = EXIT_ERR;
		goto out_out;
	}
	if (setup_filters(&d) < 0 || setup_view(&d) < 0) {
		ret = d.usage ? EXIT_USAGE : EXIT_ERR;
		goto out_reader;
	}
	if (d.view && warn_size(&d) < 0) {
		ret = EXIT_ERR;
		goto out_reader;
	}
	if (o->follow)
		catch_signals();
	if (d.view && o->vo.kind == VIEW_TREE && !o->follow &&
	    !o->from_end) {
		/* a saved ring: threads merged by time */
		rc = read_merged(&d);
		if (rc < 0) {
			ret = EXIT_ERR;
			goto out_reader;
		}
		status = strace_reader_status(d.r);
		goto done;
	}

	for (;;) {
		int pending = d.out.buf && d.out.p != d.out.buf;
		int wait = o->follow && !pending ? 200 : 0;
		long n = strace_reader_next(d.r, &b, BATCH_MAX, wait);

		if (n < 0) {
			ring_error(path, (int)n, "read the ring");
			ret = EXIT_ERR;
			break;
		}
		if (one_batch(&d, &b) < 0) {
			ret = EXIT_ERR;
			break;
		}
		if (d.plugins) {
			/* between two batches: no callback is running */
			control_poll(&d.ctl, plugin_command, &d);
			if (d.plugin_stop)
				break;
		}
		if (n > 0)
			continue;
		if (pending && o->follow && !stop_flag) {
			/* caught up: show what there is, then wait */
			if (out_flush(&d.out) < 0) {
				ret = EXIT_ERR;
				break;
			}
			continue;
		}
		status = strace_reader_status(d.r);
		if (status != STRACE_READER_LIVE)
			break;
		if (!o->follow || stop_flag)
			break;
		if (pending) {
			if (out_flush(&d.out) < 0) {
				ret = EXIT_ERR;
				break;
			}
		} else if (d.w && strace_writer_flush(d.w) < 0) {
			ret = EXIT_ERR;
			break;
		}
	}

done:
	if (d.view && ret == EXIT_OK && (rc = view_finish(d.view)) < 0) {
		if (rc == -ENOMEM)
			err("out of memory");
		ret = EXIT_ERR;
	}
	if (d.filt && ret == EXIT_OK)
		say_unmatched(&d, path);
	if (d.view && ret == EXIT_OK)
		say_no_frames(&d, path);
	if (ret == EXIT_OK && status == STRACE_READER_LIVE && !o->follow &&
	    !d.plugin_stop && strace_ring_stat(d.ring, &st) == 0 &&
	    st.writers_live) {
		/* the writer goes on: what was read is what was there */
		err("%s: a writer is still writing this ring: the output holds "
		    "the %" PRIu64 " events there were when it was read; read "
		    "with --follow to wait for the rest (until every writer "
		    "closes)",
		    path, d.nread);
		ret = EXIT_INCOMPLETE;
	}
	if (ret == EXIT_OK &&
	    (d.nlost || d.ring_lost || status == STRACE_READER_WRITER_GONE))
		ret = EXIT_INCOMPLETE;
	if (d.nlost)
		err("%s: %" PRIu64 " events lost (overwritten in the ring "
		    "before this reader got to them), %" PRIu64
		    " read; the output has 'lost' entries where they were; "
		    "use a lossless ring or a bigger one to keep them",
		    path, d.nlost, d.nread);
	if (d.ring_lost)
		err("%s: the ring records %" PRIu64 " lost events (a writer "
		    "died holding positions, could not write because the file "
		    "system was full, or a saved reader had lost them); the "
		    "output has 'lost' entries where they were",
		    path, d.ring_lost);
	if (status == STRACE_READER_WRITER_GONE &&
	    strace_ring_stat(d.ring, &st) == 0)
		err("%s: writer gone: a writer died without closing the ring; "
		    "it holds %" PRIu64 " committed events, and this reader "
		    "went through all it could reach (from position %" PRIu64
		    "): %" PRIu64 " read, %" PRIu64 " lost",
		    path, st.committed, d.started ? d.first_seq : st.committed,
		    d.nread, d.nlost);

out_reader:
	/* the frames still open are left, then every fini runs */
	strace_plugins_free(d.plugins);
	d.plugins = NULL;
	strace_reader_close(d.r);
out_out:
	if (d.w) {
		rc = strace_writer_close(d.w);
		if (rc < 0 && ret != EXIT_ERR) {
			ringmsg_write_error(PROG, o->output, rc, "-o", NULL);
			ret = EXIT_ERR;
		}
	}
	if (d.dst)
		strace_ring_close(d.dst);
	if (d.out.buf && out_close(&d.out) < 0)
		ret = EXIT_ERR;
out_ring:
	strace_plugins_free(d.plugins);
	control_close(&d.ctl);
	if (keep && (ret == EXIT_OK || ret == EXIT_INCOMPLETE)) {
		*keep = d.view;
		d.view = NULL;
	}
	view_free(d.view);
	strace_stack_free(d.fstack);
	strace_filter_free(d.filt);
	fields_fini(&d.fields);
	fmt_cleanup(&d.fmt);
	strace_names_free(d.names);
	free(d.copy);
	strace_ring_close(d.ring);
	return ret;
}

/*
 * -f report --diff OLD RING: both rings read as one is (cmd_read), with
 * the same options and filters; their reports compared (report_diff.h).
 */
static int cmd_diff(const struct opts *o, const char *path)
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

/* --- generate ------------------------------------------------------------ */

/* A lossless writer that waits says so, once (strace_ring_set_wait_notice). */
static void gen_wait_notice(void *arg, const struct strace_ring_wait *w)
{
	static atomic_int said;
	static const struct strace_ring_wait_words words = {
		.waits = "waiting",
		.no_reader = "generate with --mode flight or a bigger "
			     "--capacity, or start the readers first and pass "
			     "--readers K",
		.slowest = "end that reader, or use --mode flight",
		.every = "writer",
	};
	char msg[PATH_MAX * 2 + 512];

	if (atomic_exchange(&said, 1))
		return;
	strace_ring_wait_message(msg, sizeof(msg), strace_ring_path(arg), w,
				 &words);
	err("%s", msg);
}

static uint64_t pow2_ceil(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

static int cmd_generate(const struct opts *o)
{
	const char *path;
	struct strace_ring_opts ro;
	struct strace_ring *ring;
	struct strace_writer *w;
	struct sample s;
	uint64_t n = (uint64_t)o->generate;
	int rc, ret = EXIT_OK;

	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.mode = o->mode;
	ro.capacity = o->capacity;
	if (!o->capacity && o->mode == STRACE_RING_LOSSLESS && !o->readers) {
		/* nobody reads while we write: make everything fit (a
		 * lossless writer would wait for a reader otherwise) */
		uint64_t need = pow2_ceil(n + SAMPLE_MAX_PROLOGUE);
		if (need > STRACE_RING_DEFAULT_CAPACITY)
			ro.capacity = need > (1ull << 26) ? (1ull << 26) : need;
	}
	rc = ringmsg_create(PROG, o->output, "-o", &ro, &ring);
	if (rc < 0)
		return EXIT_ERR;
	path = strace_ring_path(ring);
	catch_sigbus(path);
	rc = strace_writer_open(ring, &w);
	if (rc < 0) {
		ring_error(path, rc, "open a writer on the ring");
		strace_ring_close(ring);
		return EXIT_ERR;
	}
	catch_signals();
	strace_writer_set_stop(w, stop_cb, NULL);
	strace_ring_set_wait_notice(ring, gen_wait_notice, ring);
	rc = sample_init(&s, ring);
	if (rc < 0) {
		ring_error(path, rc, "add the sample names to the ring");
		ret = EXIT_ERR;
		goto out;
	}
	if (o->readers > 0) {
		rc = strace_ring_wait_readers(ring, o->readers,
					      o->timeout_set ? (int)o->timeout_ms
							     : -1);
		if (rc < 0) {
			err("%s: %d reader(s) did not attach in time (%s); "
			    "start them, or raise --timeout",
			    path, o->readers, strace_strerror(rc));
			ret = EXIT_ERR;
			goto out;
		}
	}
	rc = sample_emit(&s, w, n);
	if (rc < 0) {
		if (rc == -STRACE_E_STOPPED)
			err("%s: interrupted while waiting for a reader; the "
			    "ring holds what was written so far",
			    path);
		else
			ring_error(path, rc, "write events");
		ret = EXIT_ERR;
	}
out:
	rc = strace_writer_close(w);
	if (rc < 0 && ret == EXIT_OK && rc != -STRACE_E_STOPPED) {
		ring_error(path, rc, "finish writing");
		ret = EXIT_ERR;
	}
	strace_ring_close(ring);
	if (ret == EXIT_OK && !o->output)
		printf("%s\n", path);
	return ret;
}

/* --- stat ---------------------------------------------------------------- */

static const char *mode_name(int mode)
{
	switch (mode) {
	case STRACE_RING_LOSSLESS:
		return "lossless";
	case STRACE_RING_FLIGHT:
		return "flight";
	case STRACE_RING_ARCHIVE:
		return "archive";
	}
	return "unknown";
}

static int cmd_stat(const struct opts *o, const char *path)
{
	struct strace_ring *ring;
	struct strace_ring_stat st;
	struct strace_reader_info ri[STRACE_RING_MAX_READERS];
	struct strace_string s;
	uint64_t off = 0, kinds[6] = {0}, nstr = 0, lost = 0;
	char when[64];
	time_t t;
	struct tm tm;
	int rc, nr, timed_out;

	catch_sigbus(path);
	rc = open_ring(o, path, &ring, &timed_out);
	if (rc < 0) {
		ring_error(path, rc, "open the ring");
		return EXIT_ERR;
	}
	rc = strace_ring_stat(ring, &st);
	if (rc < 0) {
		ring_error(path, rc, "read the header");
		strace_ring_close(ring);
		return EXIT_ERR;
	}
	while ((rc = strace_ring_string_next(ring, &off, &s)) > 0) {
		nstr++;
		switch (s.kind) {
		case STRACE_EV_SYMBOL:
			kinds[0]++;
			break;
		case STRACE_EV_DSO:
			kinds[1]++;
			break;
		case STRACE_EV_THREAD:
			kinds[2]++;
			break;
		case STRACE_EV_PROCESS:
			kinds[3]++;
			break;
		case STRACE_EV_SYSCALL:
			kinds[5]++;
			break;
		default:
			kinds[4]++;
		}
	}
	t = (time_t)(st.created_ns / 1000000000u);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);

	printf("ring:       %s\n", path);
	printf("version:    %u\n", st.version);
	printf("mode:       %s\n", mode_name(st.mode));
	printf("capacity:   %" PRIu64 " events (%" PRIu64 " bytes)\n",
	       st.capacity, st.capacity * STRACE_EVENT_SIZE);
	printf("file-size:  %" PRIu64 " bytes\n", st.file_size);
	printf("created:    %s by pid %" PRIu64 "%s\n", when, st.creator_pid,
	       st.creator_pid && kill((pid_t)st.creator_pid, 0) < 0 &&
			       errno == ESRCH
		       ? " (exited)"
		       : "");
	printf("committed:  %" PRIu64 "\n", st.committed);
	printf("reserved:   %" PRIu64 "\n", st.reserved);
	printf("oldest:     %" PRIu64 "\n", st.tail);
	printf("strings:    %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64
	       " entries (%" PRIu64 " symbols, %" PRIu64 " dsos, %" PRIu64
	       " threads, %" PRIu64 " processes, %" PRIu64 " syscall sites, %" PRIu64
	       " other)%s\n",
	       st.strings_used, st.strings_size, nstr, kinds[0], kinds[1],
	       kinds[2], kinds[3], kinds[5], kinds[4],
	       rc < 0 ? " - table corrupt after the last entry" : "");
	printf("writers:    %u live, %u dead, %u closed\n", st.writers_live,
	       st.writers_dead, st.writers_closed);
	printf("closed:     %s\n", st.closed ? "yes" : "no");
	if (st.lock_pid)
		printf("lock:       held by pid %u\n", st.lock_pid);
	else
		printf("lock:       free\n");
	printf("readers:    %u live, %u dead\n", st.readers_live,
	       st.readers_dead);
	nr = strace_ring_reader_info(ring, ri, STRACE_RING_MAX_READERS);
	for (int i = 0; i < nr; i++) {
		printf("reader:     pid %u %s cursor %" PRIu64 " lost %" PRIu64
		       "\n",
		       ri[i].pid, ri[i].live ? "live" : "dead", ri[i].cursor,
		       ri[i].lost);
		lost += ri[i].lost;
	}
	printf("lost:       %" PRIu64 "\n", lost);
	strace_ring_close(ring);
	if (fflush(stdout) != 0) {
		err("standard output: write failed: %s", strerror(errno));
		return EXIT_ERR;
	}
	return EXIT_OK;
}

/* --- the rings of a directory: --stat [DIR], --gc [DIR] ------------------ */

/* Bytes in decimal units, as the other figures of the toolkit (MB of PT). */
static const char *human(uint64_t b, char *buf, size_t len)
{
	if (b < 1000)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < 1000000)
		snprintf(buf, len, "%.1f kB", (double)b / 1e3);
	else if (b < 1000000000)
		snprintf(buf, len, "%.1f MB", (double)b / 1e6);
	else
		snprintf(buf, len, "%.1f GB", (double)b / 1e9);
	return buf;
}

/* A path as text that cannot forge lines: anybody may name a file in
 * /dev/shm, so control bytes are shown escaped. */
static void put_path(FILE *f, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static void user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", uid);
}

/* The STATE column: why a file is kept, or how a ring became stale. */
static void entry_state(const struct strace_ring_entry *e, char *buf,
			size_t len)
{
	const struct strace_ring_stat *st = &e->stat;
	char who[64];
	size_t n;

	switch (e->kind) {
	case STRACE_RING_KIND_VERSION:
		snprintf(buf, len, "ring of format version %u", st->version);
		return;
	case STRACE_RING_KIND_DAMAGED:
		snprintf(buf, len, "damaged ring: %s", strace_strerror(e->err));
		return;
	case STRACE_RING_KIND_FOREIGN:
		snprintf(buf, len, "not a ring");
		return;
	case STRACE_RING_KIND_SPECIAL:
		snprintf(buf, len, "%s",
			 S_ISLNK(e->file_mode)    ? "symlink, not followed"
			 : S_ISFIFO(e->file_mode) ? "FIFO, not opened"
			 : S_ISDIR(e->file_mode)  ? "directory"
						  : "not a regular file");
		return;
	case STRACE_RING_KIND_UNREADABLE:
		snprintf(buf, len, "unreadable: %s", strace_strerror(e->err));
		return;
	}
	switch (e->keep) {
	case STRACE_RING_KEEP_NONE:
		snprintf(buf, len, "stale: %s",
			 st->writers_dead     ? "writer died"
			 : st->writers_closed ? "writers closed"
					      : "never written");
		return;
	case STRACE_RING_KEEP_OWNER:
		user_name(e->uid, who, sizeof(who));
		snprintf(buf, len, "another user's (%s)", who);
		return;
	case STRACE_RING_KEEP_WRITER:
		n = (size_t)snprintf(buf, len, "live: writer%s ",
				     st->writers_live == 1 ? "" : "s");
		for (uint32_t i = 0; i < st->writers_live && n < len; i++)
			n += (size_t)snprintf(
				buf + n, len - n,
				i >= STRACE_RING_ENTRY_PIDS ? ",..." : "%s%u",
				i ? "," : "", e->pids[i]);
		return;
	case STRACE_RING_KEEP_READER:
		snprintf(buf, len, "live: reader %u", e->pids[0]);
		return;
	case STRACE_RING_KEEP_CREATOR:
		snprintf(buf, len, "live: creator %u", e->pids[0]);
		return;
	case STRACE_RING_KEEP_LOCKED:
		snprintf(buf, len, "busy: lock held by %u", e->pids[0]);
		return;
	}
	snprintf(buf, len, "?");
}

struct listing {
	unsigned files, stale;
	uint64_t stale_bytes;
	int in_memory;
};

static int list_one(void *arg, const struct strace_ring_entry *e)
{
	struct listing *l = arg;
	char mem[32], when[32] = "-", state[96];
	const char *mode = "-";

	if (!l->files++)
		printf("%-9s %-8s %-19s %-29s %s\n", "MEMORY", "MODE",
		       "CREATED (UTC)", "STATE", "PATH");
	if (e->kind == STRACE_RING_KIND_RING) {
		time_t t = (time_t)(e->stat.created_ns / 1000000000u);
		struct tm tm;
		mode = mode_name(e->stat.mode);
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	}
	if (e->keep == STRACE_RING_KEEP_NONE) {
		l->stale++;
		l->stale_bytes += e->mem_bytes;
		l->in_memory = e->in_memory;
	}
	entry_state(e, state, sizeof(state));
	printf("%-9s %-8s %-19s %-29s ", human(e->mem_bytes, mem, sizeof(mem)),
	       mode, when, state);
	put_path(stdout, e->path);
	putchar('\n');
	return 0;
}

/* 'ptrace-read OPT' or 'ptrace-read OPT DIR', as the user would type it. */
static void command(FILE *f, const char *opt, const char *dir)
{
	fprintf(f, "'" PROG " %s", opt);
	if (dir) {
		fputc(' ', f);
		put_path(f, dir);
	}
	fputc('\'', f);
}

static void scan_error(const char *dir, int rc)
{
	char def[4096];

	if (!dir && strace_ring_default_dir(def, sizeof(def)) >= 0)
		dir = def;
	err("%s: cannot list the directory: %s; pass the directory that holds "
	    "the rings (by default the directory of $STRACE_RING, else "
	    "/dev/shm)",
	    dir ? dir : "the default directory", strace_strerror(rc));
}

/* Where the listing looks, for its messages. */
static const char *scan_where(const char *dir, char *buf, size_t len)
{
	if (dir)
		return dir;
	if (strace_ring_default_dir(buf, len) < 0)
		snprintf(buf, len, "the default directory");
	return buf;
}

static int cmd_list(const char *dir)
{
	struct listing l;
	char mem[32], where[4096];
	int rc;

	memset(&l, 0, sizeof(l));
	rc = strace_ring_scan(dir, list_one, &l);
	if (rc < 0) {
		fflush(stdout);
		scan_error(dir, rc);
		return EXIT_ERR;
	}
	if (!l.files) {
		printf("no %s in ", dir ? "files" : "rings");
		put_path(stdout, scan_where(dir, where, sizeof(where)));
		printf("%s\n", dir ? "" : " (named strace_<pid>_<id>.srb)");
	} else if (!l.stale) {
		printf("no stale rings (%u file%s listed)\n", l.files,
		       l.files == 1 ? "" : "s");
	} else {
		printf("%u stale ring%s hold%s %s %s: ", l.stale,
		       l.stale == 1 ? "" : "s", l.stale == 1 ? "s" : "",
		       human(l.stale_bytes, mem, sizeof(mem)),
		       l.in_memory ? "in memory" : "on disk");
		command(stdout, "--gc", dir);
		printf(" removes %s\n", l.stale == 1 ? "it" : "them");
	}
	if (fflush(stdout) != 0) {
		err("standard output: write failed: %s", strerror(errno));
		return EXIT_ERR;
	}
	return EXIT_OK;
}

struct gc {
	unsigned removed, failed, live, others, version, damaged, foreign;
	uint64_t freed;
	int in_memory;
};

static void gc_keep(struct gc *g, const struct strace_ring_entry *e)
{
	switch (e->kind) {
	case STRACE_RING_KIND_RING:
		if (e->keep == STRACE_RING_KEEP_OWNER)
			g->others++;
		else
			g->live++;
		break;
	case STRACE_RING_KIND_VERSION:
		g->version++;
		break;
	case STRACE_RING_KIND_DAMAGED:
		g->damaged++;
		break;
	default:
		g->foreign++;
	}
}

static int gc_one(void *arg, const struct strace_ring_entry *scanned)
{
	struct gc *g = arg;
	struct strace_ring_entry e;
	char mem[32];
	int rc;

	if (scanned->keep != STRACE_RING_KEEP_NONE) {
		gc_keep(g, scanned);
		return 0;
	}
	rc = strace_ring_remove_stale(scanned->path, &e);
	if (rc == 1) {
		g->removed++;
		g->freed += e.mem_bytes;
		g->in_memory = e.in_memory;
		printf("removed ");
		put_path(stdout, scanned->path);
		printf(" (%s)\n", human(e.mem_bytes, mem, sizeof(mem)));
		return 0;
	}
	if (rc == 0) {
		gc_keep(g, &e); /* came alive since the scan */
		return 0;
	}
	if (rc == -ENOENT)
		return 0; /* gone meanwhile (another --gc?) */
	g->failed++;
	fflush(stdout);
	fprintf(stderr, PROG ": ");
	put_path(stderr, scanned->path);
	fprintf(stderr, ": cannot remove the stale ring: %s; %s\n",
		strace_strerror(rc),
		rc == -EACCES || rc == -EPERM || rc == -EROFS
			? "the directory does not let you remove it "
			  "(permissions, sticky bit, read-only or immutable "
			  "file system): remove it as a user who may"
		: rc == -STRACE_E_BUSY
			? "a process holds its lock and does not let go "
			  "('" PROG " --stat RING' names it): end that process, "
			  "then run --gc again"
		: rc == -EAGAIN ? "it was replaced while being removed: run "
				  "--gc again"
				: "remove it with rm once you are sure nothing "
				  "uses it");
	return 0;
}

/* One part of "left N: 1 live, 2 not rings": n counts down the parts. */
static void left_part(int *n, unsigned count, const char *one,
		      const char *many)
{
	if (!count)
		return;
	*n -= (int)count;
	printf(" %u %s%s", count, count == 1 ? one : many, *n ? "," : "");
}

static int cmd_gc(const char *dir)
{
	struct gc g;
	char mem[32], where[4096];
	int rc, n;

	memset(&g, 0, sizeof(g));
	rc = strace_ring_scan(dir, gc_one, &g);
	if (rc < 0) {
		fflush(stdout);
		scan_error(dir, rc);
		return EXIT_ERR;
	}
	if (g.removed) {
		printf("freed %s %s: %u stale ring%s removed",
		       human(g.freed, mem, sizeof(mem)),
		       g.in_memory ? "of memory" : "on disk", g.removed,
		       g.removed == 1 ? "" : "s");
	} else if (g.failed) {
		printf("no stale ring removed");
	} else {
		printf("no stale rings in ");
		put_path(stdout, scan_where(dir, where, sizeof(where)));
	}
	if (g.failed)
		printf("; %u could not be removed (see above)", g.failed);
	n = (int)(g.live + g.others + g.version + g.damaged + g.foreign);
	if (n) {
		printf("; left %d:", n);
		left_part(&n, g.live, "live", "live");
		left_part(&n, g.others, "another user's", "other users'");
		left_part(&n, g.version, "of another format version",
			  "of other format versions");
		left_part(&n, g.damaged, "damaged", "damaged");
		left_part(&n, g.foreign, "not a ring", "not rings");
		printf(" (");
		command(stdout, "--stat", dir);
		printf(" lists them)");
	}
	putchar('\n');
	if (fflush(stdout) != 0) {
		err("standard output: write failed: %s", strerror(errno));
		return EXIT_ERR;
	}
	return g.failed ? EXIT_ERR : EXIT_OK;
}

static int cmd_list_types(void)
{
	printf("%-5s %-12s %-8s %-8s %-7s %-8s %-7s %s\n", "value", "name",
	       "family", "a", "a-kind", "b", "b-kind", "description");
	for (unsigned t = 1; t < STRACE_EV_MAX; t++) {
		static const char *const kn[] = {"-",   "addr",   "hex",
						  "dec", "str",    "reason",
						  "block"};
		const struct strace_event_info *in = strace_event_info(t);
		if (!in)
			continue;
		printf("%-5u %-12s %-8s %-8s %-7s %-8s %-7s %s\n", t, in->name,
		       strace_family_name(in->family),
		       in->a_name[0] ? in->a_name : "-",
		       in->a_kind < 7 ? kn[in->a_kind] : "?",
		       in->b_name[0] ? in->b_name : "-",
		       in->b_kind < 7 ? kn[in->b_kind] : "?", in->description);
	}
	return EXIT_OK;
}

/* --- command line -------------------------------------------------------- */

static int parse_num(const char *opt, const char *s, long long min,
		     long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		usage_error("%s: '%s' is not a number from %lld to %lld", opt,
			    s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* A duration as uftrace's -t takes it: a number (decimals allowed) and
 * a unit, ns (the default), us, ms or s. */
static int parse_duration(const char *opt, const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!errno && end != s && v >= 0 && *s >= '0' && *s <= '9')
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].unit) &&
			    v * units[i].ns < 1e19) {
				*ns = (uint64_t)(v * units[i].ns + 0.5);
				return 0;
			}
	usage_error("%s: '%s' is not a duration: a number and a unit, ns "
		    "(the default), us, ms or s, e.g. 10us",
		    opt, s);
	return -1;
}

/* What --diff does not go with (-1 after the usage error); o->vo set
 * for it. */
static int diff_usage(struct opts *o)
{
	if (o->view != 1 + VIEW_REPORT) {
		usage_error("--diff compares the reports of two rings: give -f "
			    "report (" PROG " -f report --diff OLD RING)");
		return -1;
	}
	if (o->vo.by == VIEW_BY_THREAD) {
		usage_error("--diff matches rows by name, and thread ids differ "
			    "from run to run: compare --by function or dso");
		return -1;
	}
	if (o->nplugins || o->control) {
		usage_error("--diff reads two rings for one report: run the "
			    "plugins (--plugin, --control) on each ring alone");
		return -1;
	}
	o->vo.rows_only = 1;
	return 0;
}

/* --min-width PX: a number of pixels from 0 to 100. */
static int parse_width(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0 && v <= 100)) {
		usage_error("--min-width: '%s' is not a number of pixels from 0 "
			    "to 100",
			    s);
		return -1;
	}
	*out = v;
	return 0;
}

enum {
	OPT_FOLLOW = 256,
	OPT_TIMEOUT,
	OPT_TYPES,
	OPT_GENERATE,
	OPT_READERS,
	OPT_MODE,
	OPT_CAPACITY,
	OPT_STAT,
	OPT_GC,
	OPT_LIST_TYPES,
	OPT_FROM_END,
	OPT_NO_COMM,
	OPT_VERSION,
	OPT_DEPTH,
	OPT_MACHINE_STACK,
	OPT_SORT,
	OPT_BY,
	OPT_WEIGHT,
	OPT_FLAME,
	OPT_MIN_WIDTH,
	OPT_TIME,
	OPT_TID,
	OPT_PID,
	OPT_COMM,
	OPT_SYM,
	OPT_NO_SYM,
	OPT_DSO,
	OPT_CALLER,
	OPT_MIN_TIME,
	OPT_FIELDS,
	OPT_PLUGIN,
	OPT_CONTROL,
	OPT_DIFF,
	OPT_DIFF_POLICY,
};

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"follow", no_argument, NULL, OPT_FOLLOW},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"types", required_argument, NULL, OPT_TYPES},
		{"from-end", no_argument, NULL, OPT_FROM_END},
		{"no-comm", no_argument, NULL, OPT_NO_COMM},
		{"generate", required_argument, NULL, OPT_GENERATE},
		{"readers", required_argument, NULL, OPT_READERS},
		{"mode", required_argument, NULL, OPT_MODE},
		{"capacity", required_argument, NULL, OPT_CAPACITY},
		{"stat", no_argument, NULL, OPT_STAT},
		{"gc", no_argument, NULL, OPT_GC},
		{"list-types", no_argument, NULL, OPT_LIST_TYPES},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{"depth", required_argument, NULL, OPT_DEPTH},
		{"machine-stack", no_argument, NULL, OPT_MACHINE_STACK},
		{"sort", required_argument, NULL, OPT_SORT},
		{"by", required_argument, NULL, OPT_BY},
		{"weight", required_argument, NULL, OPT_WEIGHT},
		{"flame", required_argument, NULL, OPT_FLAME},
		{"min-width", required_argument, NULL, OPT_MIN_WIDTH},
		{"time", required_argument, NULL, OPT_TIME},
		{"tid", required_argument, NULL, OPT_TID},
		{"pid", required_argument, NULL, OPT_PID},
		{"comm", required_argument, NULL, OPT_COMM},
		{"sym", required_argument, NULL, OPT_SYM},
		{"no-sym", required_argument, NULL, OPT_NO_SYM},
		{"dso", required_argument, NULL, OPT_DSO},
		{"caller", required_argument, NULL, OPT_CALLER},
		{"hide", required_argument, NULL, OPT_NO_SYM},
		{"min-time", required_argument, NULL, OPT_MIN_TIME},
		{"fields", required_argument, NULL, 'F'},
		{"plugin", required_argument, NULL, OPT_PLUGIN},
		{"control", required_argument, NULL, OPT_CONTROL},
		{"diff", required_argument, NULL, OPT_DIFF},
		{"diff-policy", required_argument, NULL, OPT_DIFF_POLICY},
		{NULL, 0, NULL, 0},
	};
	struct opts o;
	long long v;
	int c, gen_opts = 0, view_opts = 0, svg_opts = 0;

	memset(&o, 0, sizeof(o));
	o.format = FMT_TEXT;
	o.timeout_ms = -1;
	o.generate = -1;
	o.mode = STRACE_RING_LOSSLESS;
	o.diff_policy = REPORT_DIFF_ABS;
	o.vo.min_width = VIEW_MIN_WIDTH;

	static char prog_name[] = PROG;

	argv[0] = prog_name; /* getopt's messages name the program so */
	while ((c = getopt_long(argc, argv, "f:o:hD:t:C:N:F:", lopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text"))
				o.format = FMT_TEXT;
			else if (!strcmp(optarg, "jsonl") ||
				 !strcmp(optarg, "json"))
				o.format = FMT_JSONL;
			else if (!strcmp(optarg, "raw"))
				o.format = FMT_RAW;
			else if (!strcmp(optarg, "ring"))
				o.format = FMT_RING;
			else if (!strcmp(optarg, "none"))
				o.format = FMT_NONE;
			else if (!strcmp(optarg, "tree"))
				o.view = 1 + VIEW_TREE;
			else if (!strcmp(optarg, "report"))
				o.view = 1 + VIEW_REPORT;
			else if (!strcmp(optarg, "folded"))
				o.view = 1 + VIEW_FOLDED;
			else if (!strcmp(optarg, "chrome"))
				o.view = 1 + VIEW_CHROME;
			else if (!strcmp(optarg, "fxt"))
				o.view = 1 + VIEW_FXT;
			else if (!strcmp(optarg, "uftrace"))
				o.view = 1 + VIEW_UFTRACE;
			else if (!strcmp(optarg, "svg"))
				o.view = 1 + VIEW_SVG;
			else
				return usage_error("-f: unknown format '%s' "
						   "(text, jsonl, raw, ring, none, "
						   "tree, report, folded, chrome, "
						   "fxt, uftrace, svg)",
						   optarg);
			if (o.view)
				o.format = FMT_TEXT;
			break;
		case 'D':
		case OPT_DEPTH:
			if (parse_num("--depth", optarg, 1, 1 << 20, &v))
				return EXIT_USAGE;
			o.vo.depth = (uint32_t)v;
			view_opts++;
			break;
		case 'F': {
			char why[160];
			if (fields_parse(&o.fields, optarg, why, sizeof(why)) <
			    0)
				return usage_error("-F %s: %s", optarg, why);
			break;
		}
		case 't':
		case OPT_MIN_TIME:
			if (parse_duration("--min-time", optarg,
					   &o.vo.min_time))
				return EXIT_USAGE;
			view_opts++;
			break;
		case OPT_MACHINE_STACK:
			o.vo.machine = 1;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "total"))
				o.vo.sort = VIEW_SORT_TOTAL;
			else if (!strcmp(optarg, "self"))
				o.vo.sort = VIEW_SORT_SELF;
			else if (!strcmp(optarg, "calls"))
				o.vo.sort = VIEW_SORT_CALLS;
			else
				return usage_error("--sort: '%s': sort by total, "
						   "self or calls",
						   optarg);
			view_opts++;
			break;
		case OPT_BY:
			if (!strcmp(optarg, "function"))
				o.vo.by = VIEW_BY_FUNCTION;
			else if (!strcmp(optarg, "thread"))
				o.vo.by = VIEW_BY_THREAD;
			else if (!strcmp(optarg, "dso"))
				o.vo.by = VIEW_BY_DSO;
			else
				return usage_error("--by: '%s': rows per function, "
						   "thread or dso",
						   optarg);
			view_opts++;
			break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "calls"))
				o.vo.weight_calls = 1;
			else if (strcmp(optarg, "ns"))
				return usage_error("--weight: '%s': ns (self time) "
						   "or calls",
						   optarg);
			view_opts++;
			break;
		case OPT_FLAME:
			if (!strcmp(optarg, "merged"))
				o.vo.flame = VIEW_FLAME_MERGED;
			else if (!strcmp(optarg, "time"))
				o.vo.flame = VIEW_FLAME_TIME;
			else
				return usage_error("--flame: '%s': merged (the "
						   "stacks merged) or time (the "
						   "frames in time order)",
						   optarg);
			svg_opts++;
			break;
		case OPT_MIN_WIDTH:
			if (parse_width(optarg, &o.vo.min_width) < 0)
				return EXIT_USAGE;
			svg_opts++;
			break;
		case OPT_TIME:
		case OPT_TID:
		case OPT_PID:
		case OPT_COMM:
		case OPT_SYM:
		case 'N':
		case OPT_NO_SYM:
		case OPT_DSO:
		case 'C':
		case OPT_CALLER:
			if (c == 'C' || c == OPT_CALLER)
				view_opts++;
			if (o.nfilters == (int)(sizeof(o.filters) /
						sizeof(o.filters[0])))
				return usage_error("at most 64 filters");
			o.filters[o.nfilters].kind =
				c == OPT_TIME	  ? STRACE_FILTER_TIME
				: c == OPT_TID	  ? STRACE_FILTER_TID
				: c == OPT_PID	  ? STRACE_FILTER_PID
				: c == OPT_COMM	  ? STRACE_FILTER_COMM
				: c == OPT_SYM	  ? STRACE_FILTER_SYM
				: c == OPT_NO_SYM || c == 'N'
					? STRACE_FILTER_NO_SYM
				: c == OPT_DSO ? STRACE_FILTER_DSO
					       : STRACE_FILTER_CALLER;
			o.filters[o.nfilters++].value = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case OPT_PLUGIN:
			if (o.nplugins == (int)(sizeof(o.plugins) /
						sizeof(o.plugins[0])))
				return usage_error("at most 32 plugins");
			o.plugins[o.nplugins++] = optarg;
			break;
		case OPT_CONTROL:
			o.control = optarg;
			break;
		case OPT_DIFF:
			o.diff = optarg;
			break;
		case OPT_DIFF_POLICY: {
			const char *bad;
			if (report_diff_policy(optarg, &o.diff_policy, &bad) < 0)
				return usage_error("--diff-policy: '%.*s' is none of "
						   "abs, no-abs, percent, no-percent, "
						   "full, compact",
						   (int)strcspn(bad, ","), bad);
			o.diff_policy_set = 1;
			break;
		}
		case OPT_FOLLOW:
			o.follow = 1;
			break;
		case OPT_TIMEOUT:
			if (parse_num("--timeout", optarg, 0, INT32_MAX, &v))
				return EXIT_USAGE;
			o.timeout_ms = (long)v;
			o.timeout_set = 1;
			break;
		case OPT_TYPES:
			o.types = optarg;
			break;
		case OPT_FROM_END:
			o.from_end = 1;
			break;
		case OPT_NO_COMM:
			o.no_comm = 1;
			break;
		case OPT_GENERATE:
			if (parse_num("--generate", optarg, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			o.generate = v;
			break;
		case OPT_READERS:
			if (parse_num("--readers", optarg, 0,
				      STRACE_RING_MAX_READERS, &v))
				return EXIT_USAGE;
			o.readers = (int)v;
			gen_opts = 1;
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "lossless"))
				o.mode = STRACE_RING_LOSSLESS;
			else if (!strcmp(optarg, "flight"))
				o.mode = STRACE_RING_FLIGHT;
			else
				return usage_error("--mode: unknown mode '%s' "
						   "(lossless, flight)",
						   optarg);
			gen_opts = 1;
			break;
		case OPT_CAPACITY:
			if (parse_num("--capacity", optarg,
				      STRACE_RING_MIN_CAPACITY, 1ll << 36, &v))
				return EXIT_USAGE;
			if (v & (v - 1))
				return usage_error("--capacity: %lld is not a "
						   "power of two (try %llu)",
						   v,
						   (unsigned long long)
							   pow2_ceil((uint64_t)v));
			o.capacity = (unsigned long long)v;
			gen_opts = 1;
			break;
		case OPT_STAT:
			o.stat = 1;
			break;
		case OPT_GC:
			o.gc = 1;
			break;
		case OPT_LIST_TYPES:
			o.list_types = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			fputs(help_filter_text, stdout);
			fputs(help_ring_text, stdout);
			return EXIT_OK;
		case OPT_VERSION:
			printf(PROG " (ptrace toolkit) %s\n", strace_version());
			return EXIT_OK;
		default:
			fputs(usage_text, stderr);
			fputs("Try '" PROG " --help' for more.\n", stderr);
			return EXIT_USAGE;
		}
	}

	if (o.list_types)
		return cmd_list_types();
	if (o.generate >= 0) {
		if (optind != argc)
			return usage_error("--generate writes to -o RING; "
					   "unexpected argument '%s'",
					   argv[optind]);
		return cmd_generate(&o);
	}
	if (gen_opts)
		return usage_error("--readers, --mode and --capacity go with "
				   "--generate");
	if (o.stat && o.gc)
		return usage_error("--stat lists the rings, --gc removes the "
				   "stale ones: give one");
	if (optind + 1 < argc)
		return usage_error("one %s at a time; unexpected argument '%s'",
				   o.stat || o.gc ? "ring or directory"
						  : "ring",
				   argv[optind + 1]);
	if (o.gc)
		return cmd_gc(optind < argc ? argv[optind] : NULL);
	if (o.stat) {
		struct stat dst;
		if (optind == argc)
			return cmd_list(NULL);
		if (stat(argv[optind], &dst) == 0 && S_ISDIR(dst.st_mode))
			return cmd_list(argv[optind]);
		return cmd_stat(&o, argv[optind]);
	}
	if (optind == argc)
		return usage_error("which ring? pass its path");
	if (view_opts && !o.view)
		return usage_error("--depth, --min-time, --caller, --sort, --by "
				   "and --weight shape the stack views: they go "
				   "with -f tree, report, folded, chrome, fxt, "
				   "uftrace or svg");
	if (o.fields.n && ((o.format != FMT_TEXT && o.format != FMT_JSONL) ||
			   o.view))
		return usage_error("-F chooses the fields of the lines of -f "
				   "text or jsonl");
	if (svg_opts && o.view != 1 + VIEW_SVG)
		return usage_error("--flame and --min-width go with -f svg");
	if (o.vo.flame == VIEW_FLAME_TIME && o.vo.weight_calls)
		return usage_error("--flame time draws the frames' time: "
				   "--weight calls goes with --flame merged");
	if (o.view && o.types)
		return usage_error("--types does not go with -f tree, report "
				   "or folded: the stacks need every call and "
				   "return (filter with --sym, --tid, --time ...)");
	if (o.view)
		o.vo.kind = o.view - 1;
	if (o.diff_policy_set && !o.diff)
		return usage_error("--diff-policy goes with --diff OLD");
	if (o.diff)
		return diff_usage(&o) ? EXIT_USAGE : cmd_diff(&o, argv[optind]);
	if (o.view == 1 + VIEW_UFTRACE && !o.output)
		return usage_error("-f uftrace writes a uftrace data directory: "
				   "give it with -o DIR");
	o.vo.dir = o.output;
	if (o.format == FMT_NONE && !o.nplugins && !o.control)
		return usage_error("-f none shows nothing: it runs the plugins "
				   "only; give them with --plugin FILE.so");
	if (o.format == FMT_NONE && o.output)
		return usage_error("-f none writes nothing: drop -o, or choose "
				   "a format");
	if (o.format == FMT_RING && !o.output)
		return usage_error("-f ring saves to a new ring file: give it "
				   "with -o FILE");
	return cmd_read(&o, argv[optind], NULL);
}
