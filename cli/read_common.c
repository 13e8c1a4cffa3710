/* SPDX-License-Identifier: MIT */
/*
 * cli/read_common.c - what the commands of ptrace-read share: the usage
 * and help texts, the error messages (usage, rings), and the signals
 * (Ctrl-C with --follow, SIGBUS on a ring cut short).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read.h"
#include "decoder/decoder.h"

volatile sig_atomic_t stop_flag;

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

void catch_sigbus(const char *path)
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

int stop_cb(void *arg)
{
	(void)arg;
	return stop_flag;
}

void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* A message is one line: the names and paths in it (a ring's, a
 * trace's) shown by the views' one rule (view_fputs_clean()), so that a
 * hostile name cannot split the line or move the cursor. */
void err(const char *fmt, ...)
{
	char buf[8192], *m = buf;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) && (m = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(m, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	fputs(PROG ": ", stderr);
	view_fputs_clean(m ? m : buf, stderr);
	fputc('\n', stderr);
	if (m != buf)
		free(m);
}

static const char usage_text[] =
	"usage: " PROG " [-f text|jsonl|raw|ring] [-F FIELDS] [--follow]\n"
	"                   [--timeout MS]\n"
	"                   [--types PATTERNS] [--from-end] [FILTERS] [-o FILE] RING\n"
	"       " PROG " -f tree|report|folded|fxt|chrome|uftrace|svg\n"
	"                   [-D N] [-t TIME] [-C PATTERNS] [--sort KEY]\n"
	"                   [--machine-stack] [--inline]\n"
	"                   [--by function|thread|dso] [--weight ns|calls]\n"
	"                   [--flame merged|time] [--min-width PX]\n"
	"                   [--follow] [FILTERS] [-o FILE] RING\n"
	"       " PROG " -f lcov|coverage [-o FILE] RING\n"
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
	"                     lcov: an lcov tracefile of the lines that ran\n"
	"                     (ptrace-capture --coverage), for genhtml;\n"
	"                     coverage: lines run per function (gcov -f)\n"
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
	"                     them in the subtitle\n";

/* (a string literal a C99 compiler must take is at most 4095 bytes) */
static const char help_more_text[] =
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
	"                     cpu, type, from, to, sym, offset, dso, flags,\n"
	"                     srcline (from's FILE:LINE, as perf script)\n"
	"  --srcline          text and jsonl: the FILE:LINE of each code\n"
	"                     address (from_srcline=, to_srcline=), from DWARF;\n"
	"                     -f tree: each function's FILE:LINE (as uftrace);\n"
	"                     -f report: a Source:Line column (as perf)\n"
	"  --no-cache         do not read or write the DWARF tables kept in\n"
	"                     the cache (docs/cache.md) for srcline,\n"
	"                     --inline and -f lcov|coverage\n"
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
	"  --inline           inlined functions as frames, from the DWARF of the\n"
	"                     objects (\"foo (inlined)\", folded \"foo_[i]\";\n"
	"                     docs/stacks.md)\n"
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

int usage_error(const char *fmt, ...)
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

int usage_short(void)
{
	fputs(usage_text, stderr);
	fputs("Try '" PROG " --help' for more.\n", stderr);
	return EXIT_USAGE;
}

void print_help(void)
{
	fputs(usage_text, stdout);
	fputs(help_text, stdout);
	fputs(help_more_text, stdout);
	fputs(help_filter_text, stdout);
	fputs(help_ring_text, stdout);
}

const char *read_cache_dir(const struct read_opts *o, char *buf, size_t len)
{
	static int told;
	const char *dir =
		o->no_cache ? NULL : strace_cache_default_dir(buf, len);
	struct stat st;

	if (!dir || strace_cache_dir_check(dir, &st) == 0)
		return dir;
	/* another user's directory (sudo -E keeps XDG_CACHE_HOME), or one
	 * others may write into: the DWARF is read every time */
	if (!told++)
		err("warning: the cache %s is not used: %s; reading the debug "
		    "information without it (%s, or give --no-cache)",
		    dir,
		    st.st_uid != geteuid() ? "it belongs to another user"
					   : "others may write into it",
		    st.st_uid != geteuid()
			    ? "set XDG_CACHE_HOME to a directory of your own"
			    : "chmod go-w it");
	return NULL;
}

/* What went wrong opening or creating a ring, and what to do about it. */
void ring_error(const char *path, int rc, const char *doing)
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
