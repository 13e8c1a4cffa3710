/* SPDX-License-Identifier: MIT */
/*
 * ptrace-capture - Intel PT into a shared event ring.
 *
 *   ptrace-capture -i perf.data [-o RING] [options]   decode a recording
 *   ptrace-capture -i perf.data --archive OUT.tar     bundle it with its
 *                                                      code, to decode
 *                                                      elsewhere
 *   ptrace-capture -i OUT.tar [-o RING] [options]     decode a bundle
 *   ptrace-capture --pt FILE --raw|--elf ... [-o RING] [options]
 *                                                      decode a raw trace
 *   ptrace-capture -p PID [-o RING] [options]          trace a process
 *   ptrace-capture [options] -- CMD [ARGS...]          trace a command
 *
 * Exit status: 0 success; 1 the input could not be decoded (message says
 * where and why), or a runtime failure; 2 usage error; 3 decoded, with
 * decode errors or unreadable mappings (CAPTURE_EXIT_PARTIAL); 4 tracing
 * cannot run here (no Intel PT, no permission: CAPTURE_EXIT_NOTRACE).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/capture_archive.h"
#include "cli/capture_live.h"
#include "cli/choice.h"
#include "cli/pluginpath.h"
#include "cli/ringmsg.h"
#include "pt_backend/perf/perf.h"
#include "pt_backend/pipeline/pipeline.h"
#include "decoder/decoder.h"
#include "strace/plugin.h"
#include "strace/ring.h"
#include "strace/version.h"

#define PROG "ptrace-capture"

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

static void usage(FILE *f)
{
	fputs(
		"usage: " PROG " -i perf.data|BUNDLE.tar [-o RING] [options]\n"
		"       " PROG " -i perf.data --archive BUNDLE.tar [--symfs DIR]\n"
		"       " PROG " --pt FILE [--raw BIN[:OFFSET[-SIZE]]@ADDR]...\n"
		"                      [--elf FILE[@BASE]]... [--cpu F/M[/S]]\n"
		"                      [--pid P --tid T] [-o RING] [options]\n"
		"       " PROG " -p PID [-o RING] [options]\n"
		"       " PROG " [options] -- CMD [ARGS...]\n"
		"\n"
		"Decodes Intel PT into calls, returns, cross-symbol jumps,\n"
		"syscalls, gaps and errors, written to a shared event ring that\n"
		"ptrace-read (and any other reader) reads.\n"
		"\n"
		"  -i, --input FILE      decode a perf.data recorded with\n"
		"                        perf record -e intel_pt//u (per-thread,\n"
		"                        or per-CPU for one process); - (stdin),\n"
		"                        a FIFO or a file in perf's pipe mode:\n"
		"                        perf record -o - ... | " PROG " -i -\n"
		"                        or a bundle that --archive wrote\n"
		"      --archive FILE.tar\n"
		"                        bundle the recording with the code it\n"
		"                        needs, to decode on another machine:\n"
		"                        the perf.data, every object its\n"
		"                        mappings name (checked by build-id),\n"
		"                        the vDSO, the host's facts. With -i:\n"
		"                        bundle only (decode the bundle with\n"
		"                        -i FILE.tar); with -w in a live\n"
		"                        capture: bundle -w's file at the end\n"
		"      --symfs DIR       read the recording's objects under DIR\n"
		"                        (/a/b from DIR/a/b), as perf script\n"
		"                        --symfs; the ring names them as\n"
		"                        recorded. An object whose build-id is\n"
		"                        not the recorded one is refused\n"
		"      --pt FILE         decode a raw Intel PT stream (simple-pt,\n"
		"                        kAFL/Nyx, a dump of perf's AUX area,\n"
		"                        libipt's pttc), with the code it ran:\n"
		"      --raw BIN[:OFFSET[-SIZE]]@ADDR\n"
		"                        SIZE bytes of BIN from OFFSET (default:\n"
		"                        the whole file) at ADDR; numbers as in C\n"
		"                        (0x...); an ELF file's symbols are used\n"
		"      --elf FILE[@BASE] the PT_LOAD segments of an ELF file, moved\n"
		"                        by BASE (a PIE or shared object); its\n"
		"                        symbols name the addresses\n"
		"      --cpu FAMILY/MODEL[/STEPPING]\n"
		"                        the processor the trace was recorded on\n"
		"                        (its errata); default: unknown, the\n"
		"                        workarounds that only turn errors into\n"
		"                        decodes (docs/decoder.md)\n"
		"      --pid P, --tid T  the process and thread the events name\n"
		"                        (with --pt; default 0)\n"
		"  -o, --output RING     ring file to create (default: $STRACE_RING,\n"
		"                        else /dev/shm/strace_<pid>_<uuid>.srb,\n"
		"                        printed on stdout)\n"
		"      --mode MODE       archive (default: the file grows,\n"
		"                        nothing is lost), lossless (waits for\n"
		"                        readers), flight (overwrites the oldest)\n"
		"      --capacity N      ring capacity in events (power of two)\n"
		"      --wait-readers K  keep every event for K readers (the ring\n"
		"                        is then lossless unless --mode): a\n"
		"                        recording's decode waits for them when\n"
		"                        the ring is full; otherwise wait for\n"
		"                        them before starting\n",
	      f);
	fputs(
		"      --decoder fast|bitwise|reference\n"
		"                        fast (default); fast without its cache\n"
		"                        of TNT runs (one bit at a time); or\n"
		"                        libipt's block decoder\n"
		"      --all-branches    keep jumps inside one function too\n"
		"      --exact-times     every event keeps the time of the last\n"
		"                        timing packet (by default the events\n"
		"                        between two are spread by instruction\n"
		"                        count; exact ones are flagged)\n"
		"      --types PATTERNS  keep only these event types (call,ret*,-symbol);\n"
		"                        a list that keeps pebs or pebs_item asks\n"
		"                        for the PEBS-via-PT records (-i: an\n"
		"                        aux-output event asks for them too),\n"
		"                        one that keeps ptwrite for the PTW\n"
		"                        payloads (-i: intel_pt's ptw bit too)\n"
		"      --tid TID         decode only this thread\n"
		"  -j, --jobs N          decode N threads' traces in parallel;\n"
		"                        with fewer threads, cut each thread's\n"
		"                        trace at its PSBs into pieces decoded\n"
		"                        in parallel\n"
		"      --piece-bytes N   per-CPU recordings: decode N bytes of\n"
		"                        each CPU's trace at a time (default\n"
		"                        262144); memory holds the events of\n"
		"                        one piece per CPU. With -j: the size\n"
		"                        of a thread's pieces (default 65536)\n"
		"      --vdso FILE       vDSO image for [vdso] mappings (default: the\n"
		"                        one the file names by build-id, in perf's\n"
		"                        build-id cache $PERF_BUILDID_DIR or ~/.debug)\n"
		"      --no-cache        do not read or write the block and\n"
		"                        symbol cache (default: $XDG_CACHE_HOME/\n"
		"                        strace, else ~/.cache/strace; one file\n"
		"                        per ELF build-id; docs/cache.md)\n"
		"      --names perf|plain\n"
		"                        how functions are named: as a person\n"
		"                        types them, as objdump and nm do\n"
		"                        (default: puts@plt, [plt0], puts, not\n"
		"                        _IO_puts), or as perf 6.1's perf script\n"
		"                        names them (docs/stacks.md)\n"
		"      --plugin FILE.so[:ARG,...]\n"
		"                        hand every event to this plugin, in\n"
		"                        this process, before the ring\n"
		"                        (repeatable; docs/plugins.md)\n"
		"      --no-ring         no ring: the events go to the plugins\n"
		"                        only\n"
		"      --view FILE       then write the events as FILE to look at:\n"
		"                        NAME.json (Chrome JSON: Perfetto,\n"
		"                        chrome://tracing, speedscope), NAME.fxt\n"
		"                        (Perfetto), NAME.svg (a flame graph for\n"
		"                        a browser), NAME.folded (collapsed\n"
		"                        stacks), NAME.uftrace or DIR/ (a uftrace\n"
		"                        data directory); the ring is removed\n"
		"                        unless -o names it\n"
		"  -q, --quiet           no progress bar and no summary\n"
		"  -h, --help            this text\n"
		"      --version         the version\n"
		"\n",
		f);
	capture_live_usage(f);
	fprintf(f, "\nExit status: 0 ok; 1 decoding or tracing failed (no "
		   "such file,\nprocess or thread, a damaged input); 2 usage "
		   "error; 3 decoded, but code\nwas lost (decode errors, "
		   "unreadable mappings: the ring marks where);\n4 tracing "
		   "cannot run here (no Intel PT, no permission to trace).\n");
}

static void die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct ui {
	int tty, quiet, shown;
	double t0, last; /* start; the last progress line */
	unsigned warnings;
	struct strace_ring *ring; /* its events counted in the progress line */
};

static void on_warn(void *arg, const char *msg)
{
	struct ui *ui = arg;
	if (++ui->warnings > 20) {
		if (ui->warnings == 21)
			fprintf(stderr, PROG ": warning: more warnings "
					     "follow; not shown\n");
		return;
	}
	if (ui->shown)
		fputc('\n', stderr);
	ui->shown = 0;
	fprintf(stderr, PROG ": warning: %s\n", msg);
}

/* The progress line on a terminal, at most 5 times a second (the
 * decoding threads call this; only the terminal's line is shared):
 * "[=====     ]  42% 12.3 MB/s, 1.2 M events, 3 s left" */
static void on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct ui *ui = arg;
	double now, t, rate;
	char bar[41], ev[32] = "";

	if (!ui->tty || ui->quiet || !total)
		return;
	now = now_s();
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
 * A perf.data cut short while it is decoded (truncated, or rewritten by
 * perf record -o) raises SIGBUS at the next touch of a page it lost, on
 * whichever decoding thread. strace_perf_sigbus() turns the lost pages
 * into zeros, and the decode runs to its end and says what was lost
 * (-STRACE_E_PERF_SHRANK): the ring is left complete up to there, its writers
 * closed. Any other SIGBUS keeps its default action: the access is made
 * again and kills the process as before.
 */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	if (!strace_perf_sigbus(si->si_addr))
		signal(sig, SIG_DFL);
	errno = saved;
}

static void catch_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
}

struct live_ctx {
	struct strace_live_decoder *ld;
	struct strace_ring *ring;
	int print_path;
};

/*
 * The summary's last line: where the ring is and what it holds. Rings made
 * without -o pile up in /dev/shm, in memory, until someone removes them.
 */
/* --view FILE: the ring, once written, becomes FILE (view_write()) */
static const char *view_path;
static char view_ring[PATH_MAX]; /* the ring's path, once created */
static int view_keep, view_quiet;  /* -o named the ring; -q */

static void say_ring(const struct strace_ring *ring)
{
	char msg[PATH_MAX + 256];

	if (view_path ||
	    strace_ring_describe(strace_ring_path(ring), msg, sizeof(msg)) < 0)
		return;
	fprintf(stderr, PROG ": %s\n", msg);
}

/* The session is open: say where the events go, give the decoder its time
 * conversion. */
/*
 * --plugin: plugins in this process, handed each batch of events before
 * the ring publishes it (strace_ring_set_tap), from whichever decoding
 * thread wrote it. A plugin that asks to stop ends a live capture; a
 * recording is decoded to its end (the ring stays whole for its
 * readers) without the plugins.
 */
static const char *plugin_specs[32];
static int nplugins, no_ring, no_cache;

/* A cache that could not be written costs the next decode its time: said */
static void cache_warn(const struct strace_objcache_stats *st,
		       const char *dir)
{
	if (st->write_errors)
		fprintf(stderr,
			PROG ": warning: cannot write the block cache in %s: "
			     "%s (the next decode starts cold; make the "
			     "directory writable, or give --no-cache)\n",
			dir, strerror(-st->write_error));
}

/* The persistent cache's directory (docs/cache.md); NULL with
 * --no-cache. */
static const char *cache_dir(void)
{
	static char buf[4096];

	return no_cache ? NULL : strace_cache_default_dir(buf, sizeof(buf));
}
static struct strace_plugins *plugins;
static struct strace_names *plugin_names;
static struct strace_live *plugin_live;

static void plugin_tap(void *arg, const struct strace_event *ev, size_t n)
{
	(void)arg;
	if (strace_plugins_dispatch(plugins, ev, n) && plugin_live)
		strace_live_request_stop(plugin_live);
}

/* -i in perf's pipe mode: the perf.data file it is copied into, removed
 * at exit */
static char spool[PATH_MAX];

static void remove_spool(void)
{
	if (spool[0])
		unlink(spool);
}

/*
 * -i -, a FIFO, or a file in perf's pipe mode ('perf record -o -', 'perf
 * inject -o -'): copied as it comes into a perf.data file under $TMPDIR
 * (strace_perf_pipe_copy()), which *input then names. Returns 0 (also
 * for a perf.data file, left as it is), or the exit status after a
 * message.
 */
static int pipe_input(const char **input)
{
	const char *dir = getenv("TMPDIR");
	unsigned char head[16];
	struct stat st;
	uint64_t off;
	int fd, rc, tmp;

	if (!strcmp(*input, "-")) {
		fd = 0;
	} else {
		if (stat(*input, &st) < 0 ||
		    !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
			return 0; /* (the decode says what it is) */
		fd = open(*input, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
	}
	rc = strace_perf_pipe_head(fd, head);
	if (rc <= 0 && fd && S_ISREG(st.st_mode)) {
		close(fd); /* a perf.data file: decoded where it is */
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": -i %s: cannot read it: %s\n", *input,
			strerror(-rc));
		if (fd)
			close(fd);
		return 1;
	}
	if (rc == 0) {
		fprintf(stderr,
			PROG ": -i %s: not perf.data in pipe mode (no "
			     "'PERFILE2' header of 16 bytes): give what 'perf "
			     "record -o -' or 'perf inject -o -' writes, or a "
			     "perf.data file\n",
			*input);
		if (fd)
			close(fd);
		return 1;
	}
	snprintf(spool, sizeof(spool), "%s/ptrace-capture-pipe.XXXXXX",
		 dir && *dir ? dir : "/tmp");
	tmp = mkstemp(spool);
	if (tmp < 0) {
		fprintf(stderr,
			PROG ": -i %s: cannot make a file to copy the pipe "
			     "into (%s): %s; set TMPDIR to a directory with "
			     "room\n",
			*input, spool, strerror(errno));
		spool[0] = 0;
		if (fd)
			close(fd);
		return 1;
	}
	close(tmp);
	atexit(remove_spool);
	rc = strace_perf_pipe_copy(fd, head, spool, &off);
	if (fd)
		close(fd);
	if (rc < 0) {
		fprintf(stderr,
			PROG ": -i %s: perf.data in pipe mode, at byte %llu: "
			     "%s%s\n",
			*input, (unsigned long long)off, strace_strerror(rc),
			rc == -STRACE_E_PERF_TRUNCATED
				? " (the stream ended inside a record: perf "
				  "was stopped before it finished)"
			: rc == -ENOSPC ? "; set TMPDIR to a directory with room"
					: "");
		return 1;
	}
	*input = spool;
	return 0;
}

/* The exit status of a decode that ended: CAPTURE_EXIT_PARTIAL, said
 * (unless quiet), when it lost code; else 0. */
static int partial(int quiet, unsigned long long errors,
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

/* Load the plugins; returns 0, or the exit status (the message said). */
static int plugins_load(struct strace_ring *ring)
{
	struct strace_plugins_opts po = {.size = sizeof(po),
					 .host = "ptrace-capture"};
	char msg[1024];
	int rc;

	if (!nplugins)
		return 0;
	if (strace_names_new(ring, &plugin_names) < 0 ||
	    (po.names = plugin_names,
	     strace_plugins_new(&po, &plugins) < 0)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (int i = 0; i < nplugins; i++) {
		char found[PATH_MAX + 1024];
		rc = strace_plugins_load(plugins,
					 plugin_spec_find(plugin_specs[i], found,
							  sizeof(found)),
					 msg, sizeof(msg));
		if (rc < 0) {
			fprintf(stderr, PROG ": %s\n", msg);
			return rc == -ENOMEM ? 1 : 2;
		}
	}
	strace_ring_set_tap(ring, plugin_tap, NULL);
	return 0;
}

/* Every plugin's fini runs while the ring (their names) is still mapped. */
static void close_ring(struct strace_ring *ring)
{
	strace_ring_set_tap(ring, NULL, NULL);
	strace_plugins_free(plugins);
	plugins = NULL;
	strace_names_free(plugin_names);
	plugin_names = NULL;
	strace_ring_close(ring);
}

/*
 * A live capture: where it runs, into the ring (strace_writer_name_info(),
 * what ptrace-capture -i takes from a perf.data's header): the host, the
 * kernel, the processor, the CPUs, and this command line (the recorder's,
 * as perf's and uftrace's headers keep theirs). Best effort: a ring that
 * cannot take them still gets the trace.
 */
static void write_host_info(struct strace_ring *ring, int argc, char **argv)
{
	struct strace_writer *w;
	struct utsname u;
	char cmd[4096], line[256];
	size_t used = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	long avail = sysconf(_SC_NPROCESSORS_CONF);
	FILE *f;

	if (strace_writer_open(ring, &w) < 0)
		return;
	if (uname(&u) == 0) {
		strace_writer_name_info(w, STRACE_INFO_HOSTNAME, 0, u.nodename);
		strace_writer_name_info(w, STRACE_INFO_OSRELEASE, 0, u.release);
	}
	if (online > 0 && avail > 0)
		strace_writer_name_info(w, STRACE_INFO_NRCPUS,
					(uint64_t)online << 32 |
						(uint64_t)avail,
					"cpus");
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			char *v = strchr(line, ':') + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			strace_writer_name_info(w, STRACE_INFO_CPUDESC, 0, v);
			break;
		}
	if (f)
		fclose(f);
	cmd[0] = 0;
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (used + n + 2 > sizeof(cmd))
			break;
		if (used)
			cmd[used++] = ' ';
		memcpy(cmd + used, argv[i], n + 1);
		used += n;
	}
	if (used)
		strace_writer_name_info(w, STRACE_INFO_CMDLINE, 0, cmd);
	strace_writer_close(w);
}

static void live_opened(void *arg, struct strace_live *l)
{
	struct live_ctx *lc = arg;
	plugin_live = l;
	if (lc->print_path) {
		printf("%s\n", strace_ring_path(lc->ring));
		fflush(stdout);
	}
	struct strace_time_conv tc;
	memset(&tc, 0, sizeof(tc));
	int rc = strace_live_time_conv(l, &tc);
	if (rc == -ERANGE)
		fprintf(stderr,
			PROG ": warning: the kernel's perf time conversion "
			     "is out of range (time_shift of 64 or more in "
			     "the perf_event mmap page): events get no times; "
			     "report this kernel\n");
	strace_live_decoder_set_time(lc->ld, &tc,
				     rc == 0 && tc.cap_user_time_zero);
	/* the payloads of ptwrite as events when the event asks the
	 * hardware for them (intel_pt/ptw/u), as -i does */
	if (strace_live_has_ptw(l))
		strace_live_decoder_add_flags(lc->ld, STRACE_WALK_PTWRITE);
}

/* A --pt decode failed: what, on which input, and what to do. */
static void raw_error(int rc, const struct strace_raw_opts *o,
		      const struct strace_raw_fault *f)
{
	const struct strace_raw_section *s =
		f->section >= 0 ? &o->secs[f->section] : NULL;
	const char *what = s ? s->path : o->pt_path;
	const char *opt = s ? (s->elf ? "--elf" : "--raw") : "--pt";

	switch (-rc) {
	case STRACE_E_RAW_OVERLAP: {
		const struct strace_raw_section *t = &o->secs[f->other];
		fprintf(stderr,
			PROG ": %s %s overlaps %s %s at 0x%llx-0x%llx: every "
			     "address must come from one section; cut one "
			     "of them with :OFFSET-SIZE\n",
			opt, s->path, t->elf ? "--elf" : "--raw", t->path,
			(unsigned long long)f->start,
			(unsigned long long)f->end);
		return;
	}
	case STRACE_E_RAW_RANGE:
		fprintf(stderr,
			PROG ": %s %s: %s (the file has %llu bytes): give an "
			     "OFFSET and SIZE within it\n",
			opt, what, strace_strerror(rc),
			(unsigned long long)f->file_size);
		return;
	case STRACE_E_RAW_NOTELF:
		fprintf(stderr,
			PROG ": --elf %s: not a 64-bit ELF file: load its "
			     "bytes with --raw %s@ADDR instead\n",
			what, what);
		return;
	case STRACE_E_RAW_NOLOAD:
		fprintf(stderr,
			PROG ": --elf %s: the file has no PT_LOAD segment "
			     "with bytes (a debug file?): give the file that "
			     "was run\n",
			what);
		return;
	case STRACE_E_RAW_NOTPIE:
		fprintf(stderr,
			PROG ": --elf %s: a fixed-address (ET_EXEC) program "
			     "runs where its headers say: drop @BASE\n",
			what);
		return;
	case STRACE_E_RAW_EMPTY:
		fprintf(stderr, PROG ": %s %s: the file is empty\n", opt, what);
		return;
	case STRACE_E_RAW_NOPSB:
		fprintf(stderr,
			PROG ": --pt %s: no PSB packet in the file, so no "
			     "place to start decoding: is it raw Intel PT "
			     "(not a perf.data: decode that with -i)? A dump "
			     "must hold at least one PSB; a tracer that "
			     "writes none needs a psb_period\n",
			o->pt_path);
		return;
	case ENODEV:
		fprintf(stderr,
			PROG ": %s %s: not a regular file (a FIFO, a device or "
			     "a directory): copy the data to a file\n",
			opt, what);
		return;
	case ENOENT:
	case EACCES:
	case EISDIR:
		fprintf(stderr, PROG ": %s %s: %s: check the path%s\n", opt,
			what, strerror(-rc),
			-rc == EACCES ? " and its permissions" : "");
		return;
	}
	fprintf(stderr, PROG ": %s %s: %s\n", opt, what,
		strace_strerror(rc));
}

/* The ptrace-read format of a --view path, or NULL. */
static const char *view_format(const char *path)
{
	static const struct {
		const char *suffix, *format;
	} by[] = {
		{".json", "chrome"},  {".fxt", "fxt"},
		{".svg", "svg"},      {".folded", "folded"},
		{".uftrace", "uftrace"}, {"/", "uftrace"},
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++) {
		size_t k = strlen(by[i].suffix);
		if (n > k && !strcmp(path + n - k, by[i].suffix))
			return by[i].format;
	}
	return NULL;
}

/*
 * --view: ptrace-read (beside this program, else on PATH) writes the ring
 * as view_path. Returns the exit status.
 */
static int view_write(int quiet)
{
	const char *fmt = view_format(view_path);
	char self[PATH_MAX], rd[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *prog = "ptrace-read";
	int status;
	pid_t pid;

	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(rd, sizeof(rd), "%s/ptrace-read", self);
			if (access(rd, X_OK) == 0)
				prog = rd;
		}
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, PROG ": --view %s: cannot start ptrace-read: "
				"%s\n", view_path, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execlp(prog, "ptrace-read", "-f", fmt, "-o", view_path,
		       view_ring, (char *)NULL);
		fprintf(stderr, PROG ": --view %s: cannot run %s: %s (it "
				"is installed beside " PROG ")\n",
			view_path, prog, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1; /* ptrace-read said why */
	if (!quiet)
		fprintf(stderr,
			PROG ": wrote %s: %s\n", view_path,
			!strcmp(fmt, "chrome")
				? "open it in https://ui.perfetto.dev, "
				  "chrome://tracing or https://speedscope.app"
			: !strcmp(fmt, "fxt")
				? "open it in https://ui.perfetto.dev"
			: !strcmp(fmt, "svg")
				? "open it in a web browser (hover, click to "
				  "zoom, search)"
			: !strcmp(fmt, "folded")
				? "collapsed stacks for https://speedscope.app "
				  "and flame graph scripts"
				: "uftrace replay / report / graph -d DIR, "
				  "or uftrace dump --chrome -d DIR");
	return 0;
}

static int capture(int argc, char **argv)
{
	const char *input = NULL, *output = NULL, *types_arg = NULL;
	const char *vdso = NULL, *archive = NULL, *symfs = NULL;
	int mode = -1, jobs = 1, quiet = 0, wait_readers = 0;
	int names = STRACE_PLT_PLAIN;
	unsigned flags = 0;
	long pid = 0;
	uint32_t tid = 0;
	uint64_t capacity = 0, piece = 0;
	enum { O_MODE = 256, O_CAP, O_DEC, O_ALL, O_EXACT, O_TYPES, O_TID, O_VDSO,
	       O_WAIT, O_PIECE, O_PT, O_RAW, O_ELF, O_CPU, O_VERSION, O_VIEW,
	       O_PLUGIN, O_NO_RING, O_NO_CACHE, O_NAMES, O_ARCHIVE, O_SYMFS };
	const char *pt = NULL, *cpu_arg = NULL;
	/* --raw/--elf: as many as given (a page dump of a kAFL or Nyx
	 * recording has hundreds of runs of pages); the command's own,
	 * held to its exit */
	static struct strace_raw_section *secs;
	size_t nsecs = 0, secs_cap = 0;
	struct strace_pt_cpu cpu = {0, 0, 0};
	static const struct option own_opts[] = {
		{"input", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"pid", required_argument, NULL, 'p'},
		{"mode", required_argument, NULL, O_MODE},
		{"capacity", required_argument, NULL, O_CAP},
		{"decoder", required_argument, NULL, O_DEC},
		{"all-branches", no_argument, NULL, O_ALL},
		{"exact-times", no_argument, NULL, O_EXACT},
		{"types", required_argument, NULL, O_TYPES},
		{"tid", required_argument, NULL, O_TID},
		{"jobs", required_argument, NULL, 'j'},
		{"piece-bytes", required_argument, NULL, O_PIECE},
		{"vdso", required_argument, NULL, O_VDSO},
		{"wait-readers", required_argument, NULL, O_WAIT},
		{"pt", required_argument, NULL, O_PT},
		{"raw", required_argument, NULL, O_RAW},
		{"elf", required_argument, NULL, O_ELF},
		{"cpu", required_argument, NULL, O_CPU},
		{"view", required_argument, NULL, O_VIEW},
		{"plugin", required_argument, NULL, O_PLUGIN},
		{"no-ring", no_argument, NULL, O_NO_RING},
		{"no-cache", no_argument, NULL, O_NO_CACHE},
		{"names", required_argument, NULL, O_NAMES},
		{"archive", required_argument, NULL, O_ARCHIVE},
		{"symfs", required_argument, NULL, O_SYMFS},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},
	};
	/* Our options, then the live capture's. */
	size_t nown = sizeof(own_opts) / sizeof(own_opts[0]), nlive = 0;
	while (capture_live_longopts[nlive].name)
		nlive++;
	static struct option lopts[96];
	if (nown + nlive + 1 > sizeof(lopts) / sizeof(lopts[0]))
		return 1; /* a programming error: the table must grow */
	memcpy(lopts, own_opts, sizeof(own_opts));
	memcpy(lopts + nown, capture_live_longopts, nlive * sizeof(*lopts));
	struct capture_live_opts live_opts;
	/* perf's build-id cache: the vDSO of -w goes there, -i finds it */
	static char bid_buf[4096];
	const char *buildid_dir = strace_buildid_dir(bid_buf, sizeof(bid_buf));
	capture_live_init(&live_opts);
	int c;
	char *end;

	static char prog_name[] = PROG;

	argv[0] = prog_name; /* getopt's messages name the program so */
	while ((c = getopt_long(argc, argv, "+i:o:p:j:qhw:", lopts, NULL)) !=
	       -1) {
		if (c >= CAPTURE_LIVE_OPT_BASE || c == 'w') {
			if (capture_live_option(&live_opts, c, optarg,
						stderr) < 0) {
				fprintf(stderr, "Try '" PROG " --help'.\n");
				return 2;
			}
			continue;
		}
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case O_PT:
			pt = optarg;
			break;
		case O_RAW:
		case O_ELF:
			if (nsecs == secs_cap) {
				size_t cap = secs_cap ? 2 * secs_cap : 16;
				void *p = realloc(secs, cap * sizeof(*secs));

				if (!p) {
					fprintf(stderr,
						PROG ": out of memory for %zu "
						     "--raw and --elf sections\n",
						cap);
					return 1;
				}
				secs = p;
				secs_cap = cap;
			}
			if (strace_raw_parse_section(optarg, c == O_ELF,
						     &secs[nsecs]) < 0)
				die_usage(c == O_ELF
						  ? "--elf '%s': expected "
						    "FILE[@BASE], e.g. "
						    "libfoo.so@0x7f0000000000"
						  : "--raw '%s': expected "
						    "BIN[:OFFSET[-SIZE]]@ADDR, "
						    "e.g. code.bin@0x400000 or "
						    "dump.bin:0x1000-0x200@0x401000",
					  optarg);
			nsecs++;
			break;
		case O_CPU:
			cpu_arg = optarg;
			if (strace_pt_cpu_parse(optarg, &cpu) < 0 ||
			    !cpu.family)
				die_usage("--cpu '%s': expected "
					  "FAMILY/MODEL[/STEPPING] as ptxed "
					  "takes it, e.g. 6/85 or 6/0x55/4",
					  optarg);
			break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || pid <= 0)
				die_usage("-p needs a process id, not '%s'",
					  optarg);
			break;
		case O_MODE: {
			static const struct choice modes[] = {
				{"lossless", STRACE_RING_LOSSLESS, 0},
				{"flight", STRACE_RING_FLIGHT, 0},
				{"archive", STRACE_RING_ARCHIVE, 0},
				{NULL, 0, 0},
			};
			char list[64];
			if (choice_find(modes, optarg, &mode) < 0)
				die_usage("--mode takes %s, not '%s'",
					  choice_list(modes, ", ", " or ", list,
						      sizeof(list)),
					  optarg);
			break;
		}
		case O_CAP:
			capacity = strtoull(optarg, &end, 0);
			if (*end || capacity < STRACE_RING_MIN_CAPACITY ||
			    capacity > (1ull << 36) ||
			    (capacity & (capacity - 1)))
				die_usage("--capacity needs a power of two from "
					  "%d to 2^36 events, not '%s'",
					  STRACE_RING_MIN_CAPACITY, optarg);
			break;
		case O_DEC: {
			static const struct choice decoders[] = {
				{"fast", 0, 0},
				{"bitwise", STRACE_WALK_BIT_BY_BIT, 0},
				{"reference", STRACE_WALK_REFERENCE, 0},
				{NULL, 0, 0},
			};
			char list[64];
			int k;
			if (choice_find(decoders, optarg, &k) < 0)
				die_usage("--decoder takes %s, not '%s'",
					  choice_list(decoders, ", ", " or ",
						      list, sizeof(list)),
					  optarg);
			flags |= (unsigned)k;
			break;
		}
		case O_ALL:
			flags |= STRACE_WALK_ALL_BRANCHES;
			break;
		case O_EXACT:
			flags |= STRACE_WALK_EXACT_TIMES;
			break;
		case O_TYPES:
			types_arg = optarg;
			break;
		case O_TID: {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !v || v > UINT32_MAX)
				die_usage("--tid needs a thread id, not '%s'",
					  optarg);
			tid = (uint32_t)v;
			break;
		}
		case 'j':
			jobs = (int)strtol(optarg, &end, 10);
			if (*end || jobs < 1 || jobs > 64)
				die_usage("-j takes 1 to 64, not '%s'", optarg);
			break;
		case O_PIECE:
			piece = strtoull(optarg, &end, 0);
			if (*end || piece < 4096 || piece > (1ull << 40))
				die_usage("--piece-bytes takes a byte count of "
					  "at least 4096, not '%s'",
					  optarg);
			break;
		case O_VDSO:
			vdso = optarg;
			break;
		case O_ARCHIVE:
			archive = optarg;
			break;
		case O_SYMFS:
			symfs = optarg;
			break;
		case O_WAIT:
			wait_readers = (int)strtol(optarg, &end, 10);
			if (*end || wait_readers < 0 ||
			    wait_readers > STRACE_RING_MAX_READERS)
				die_usage("--wait-readers takes 0 to 64, not "
					  "'%s'",
					  optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case O_VIEW:
			view_path = optarg;
			if (!view_format(view_path))
				die_usage("--view %s: name a .json file (Chrome "
					  "JSON: Perfetto, chrome://tracing, "
					  "speedscope), a .fxt file (Perfetto), "
					  "a .svg file (a flame graph), a .folded "
					  "file (collapsed stacks), or a .uftrace "
					  "directory or one ending in / (uftrace)",
					  view_path);
			break;
		case O_PLUGIN:
			if (nplugins == (int)(sizeof(plugin_specs) /
					      sizeof(plugin_specs[0])))
				die_usage("%s", "at most 32 plugins");
			plugin_specs[nplugins++] = optarg;
			break;
		case O_NO_RING:
			no_ring = 1;
			break;
		case O_NO_CACHE:
			no_cache = 1;
			break;
		case O_NAMES: {
			static const struct choice namings[] = {
				{"perf", STRACE_PLT_PERF61, 0},
				{"plain", STRACE_PLT_PLAIN, 0},
				{NULL, 0, 0},
			};
			char list[64];
			if (choice_find(namings, optarg, &names) < 0)
				die_usage("--names: '%s' is neither %s", optarg,
					  choice_list(namings, ", ", " nor ",
						      list, sizeof(list)));
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case O_VERSION:
			printf(PROG " (ptrace toolkit) %s\n", strace_version());
			return 0;
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return 2;
		}
	}
	/* with --pt, -p/--pid names the process the trace is of */
	int live = (pid && !pt) || optind < argc;
	if (live_opts.list_symbols) {
		if (!live || input || pt)
			die_usage("%s", "--list-symbols lists the functions of "
					"a program: give -p PID or -- CMD");
		return capture_live_list(&live_opts, (pid_t)pid,
					 pid ? NULL : argv + optind, stdout,
					 stderr);
	}
	if (!input && !live && !pt)
		die_usage("%s", "say what to trace: -i perf.data, --pt FILE, "
				"-p PID or -- CMD");
	if ((input && live) || (pt && optind < argc))
		die_usage("%s", "-i and --pt decode a recording: they do not "
				"go with -p or a command");
	if (input && pt)
		die_usage("%s", "-i and --pt are two kinds of input: give one");
	if (!pt && (nsecs || cpu_arg))
		die_usage("%s", "--raw, --elf and --cpu go with --pt (a "
				"perf.data names its own code and processor)");
	if (pt && !nsecs)
		die_usage("%s", "--pt needs the code the trace ran: --raw "
				"BIN@ADDR or --elf FILE[@BASE], as many as "
				"there are pieces");

	if (archive && pt)
		die_usage("%s", "--archive bundles a perf.data (-i, or -w in a "
				"live capture); --pt has no perf.data");
	if (archive && live && !live_opts.lo.write_path)
		die_usage("%s", "--archive in a live capture bundles the "
				"perf.data that -w FILE writes: give -w FILE");
	if (archive && input &&
	    (output || view_path || nplugins || no_ring || wait_readers))
		die_usage("%s", "with -i, --archive only bundles the recording "
				"(as perf archive): -o, --view, --plugin, "
				"--no-ring and --wait-readers go with the "
				"decode of the bundle (-i BUNDLE.tar)");
	if (symfs && (pt || live))
		die_usage("%s", "--symfs says where a recording's objects are: "
				"it goes with -i (a live capture reads the "
				"process's own; --pt takes --elf)");
	if (symfs) {
		struct stat sst;
		if (stat(symfs, &sst) < 0 || !S_ISDIR(sst.st_mode))
			die_usage("--symfs %s: not a directory (give the "
				  "root the objects are under: /a/b is read "
				  "from DIR/a/b)",
				  symfs);
	}
	if (archive && input) {
		/* bundle only, as perf archive: no ring */
		int arc = pipe_input(&input);
		if (arc == 0)
			arc = capture_archive_input(PROG, &input, &symfs,
						    &buildid_dir);
		if (arc)
			return arc;
		return capture_archive_write(PROG, input, archive, symfs,
					     buildid_dir, vdso, quiet);
	}

	if (no_ring && !nplugins)
		die_usage("%s", "--no-ring leaves the events to the plugins: "
				"give them with --plugin FILE.so");
	if (no_ring && (output || view_path || wait_readers || mode >= 0))
		die_usage("%s", "--no-ring writes no ring: it does not go "
				"with -o, --view, --wait-readers or --mode");

	struct strace_typeset types;
	if (types_arg) {
		const char *bad;
		size_t bad_len;
		if (strace_typeset_parse(&types, types_arg, &bad, &bad_len) <
		    0) {
			fprintf(stderr,
				PROG ": --types: '%.*s' matches no event type "
				     "(ptrace-read --list-types lists them)\n",
				(int)bad_len, bad);
			return 2;
		}
		/* PEBS-via-PT records as events: asked for by a list of
		 * types that keeps them (not one of exclusions: those start
		 * from every type), else by the recording (an aux-output
		 * event, -i) */
		if (types_arg[0] != '-' &&
		    (strace_typeset_has(&types, STRACE_EV_PEBS) ||
		     strace_typeset_has(&types, STRACE_EV_PEBS_ITEM)))
			flags |= STRACE_WALK_PEBS;
		/* ptwrite payloads likewise (-i: the ptw bit of the
		 * recording's intel_pt config asks for them too) */
		if (types_arg[0] != '-' &&
		    strace_typeset_has(&types, STRACE_EV_PTWRITE))
			flags |= STRACE_WALK_PTWRITE;
	}

	/* A decode of a recording into a lossless ring its readers follow
	 * (--wait-readers, no --mode): a smaller ring than the default, 2 MiB.
	 * It is made in a third of the time (its pages faulted in: 2 ms
	 * against 6, docs/performance.md), stays in the caches the writer
	 * and its reader share, and waiting for a slow reader loses nothing
	 * of a recording (a live capture keeps the default: its trace does
	 * not wait). */
	if (!capacity && wait_readers && mode < 0 && !no_ring && !live)
		capacity = 65536;
	/* --no-ring: a ring nobody can open, that stores no event (its
	 * names are the plugins') */
	struct strace_ring_opts ro = {sizeof(ro), capacity, 0,
				      no_ring	 ? STRACE_RING_FLIGHT
				      : mode >= 0 ? mode
				      /* readers follow: they drain a bounded
				       * ring, its pages reused, nothing lost */
				      : wait_readers ? STRACE_RING_LOSSLESS
						     : STRACE_RING_ARCHIVE,
				      0, no_ring};
	struct strace_ring *ring;
	view_keep = output != NULL;
	view_quiet = quiet;
	int rc = ringmsg_create(PROG, output, "-o", &ro, &ring);
	if (rc < 0)
		return 1;
	if (no_ring)
		unlink(strace_ring_path(ring));
	rc = plugins_load(ring);
	if (rc) {
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return rc;
	}
	if (view_path)
		snprintf(view_ring, sizeof(view_ring), "%s",
			 strace_ring_path(ring));
	/* Say where the events go (live: once the session could open). */
	if (!output && !live && !view_path && !no_ring)
		printf("%s\n", strace_ring_path(ring));
	fflush(stdout);
	strace_ring_set_wait_notice(ring, on_wait, ring);
	if (wait_readers && ro.mode == STRACE_RING_LOSSLESS && !live) {
		/* a recording need not wait for its readers to start: the
		 * set-up and the first ring of events go on meanwhile */
		held_for = wait_readers;
		strace_ring_hold_for_readers(ring, wait_readers);
		if (!quiet)
			fprintf(stderr,
				PROG ": %s: keeping every event for %d "
				     "reader(s) (ptrace-read --follow %s); the "
				     "decode waits for them when the ring is "
				     "full\n",
				strace_ring_path(ring), wait_readers,
				strace_ring_path(ring));
	} else if (wait_readers) {
		if (!quiet)
			fprintf(stderr,
				PROG ": %s: waiting for %d reader(s) to attach "
				     "(ptrace-read --follow %s) before decoding\n",
				strace_ring_path(ring), wait_readers,
				strace_ring_path(ring));
		strace_ring_wait_readers(ring, wait_readers, -1);
	}

	if (live) {
		struct live_ctx lc;
		struct strace_live_cb cb;
		struct strace_live_decoder_stats ds;
		rc = strace_live_decoder_new(ring, flags,
					     types_arg ? &types : NULL, &lc.ld);
		if (rc == 0)
			strace_live_decoder_set_names(lc.ld, names);
		if (rc == 0 &&
		    strace_live_decoder_set_cache(lc.ld, cache_dir()) < 0) {
			(void)strace_live_decoder_finish(lc.ld, NULL);
			rc = -ENOMEM;
		}
		if (rc < 0) {
			fprintf(stderr, PROG ": %s: %s\n", strace_ring_path(ring),
				strace_strerror(rc));
			close_ring(ring);
			return 1;
		}
		strace_live_decoder_callbacks(lc.ld, &cb);
		live_opts.quiet = quiet;
		live_opts.opened = live_opened;
		live_opts.opened_arg = &lc;
		lc.ring = ring;
		lc.print_path = !output && !view_path && !no_ring;
		write_host_info(ring, argc, argv);
		live_opts.lo.buildid_dir = buildid_dir;
		int status = capture_live_run(&live_opts, (pid_t)pid,
					      pid ? NULL : argv + optind, &cb,
					      NULL, stderr);
		rc = strace_live_decoder_finish(lc.ld, &ds);
		if (status && !ds.events)
			unlink(strace_ring_path(ring)); /* nothing in it */
		if (rc < 0)
			fprintf(stderr, PROG ": decoding into %s: %s\n",
				strace_ring_path(ring), strace_strerror(rc));
		else if (!quiet && status == 0)
			fprintf(stderr,
				PROG ": decoded %llu thread%s, %.1f MB of PT: "
				     "%llu events, %llu decode errors, %llu "
				     "overflows, %llu losses\n",
				(unsigned long long)ds.threads,
				ds.threads == 1 ? "" : "s",
				(double)ds.pt_bytes / 1e6,
				(unsigned long long)ds.events,
				(unsigned long long)ds.errors,
				(unsigned long long)ds.overflows,
				(unsigned long long)ds.lost);
		cache_warn(&ds.cache, cache_dir());
		if (!quiet && status == 0 && rc >= 0 && !no_ring)
			say_ring(ring);
		close_ring(ring);
		if (status || rc < 0)
			return status ? status : 1;
		rc = partial(quiet, ds.errors, 0);
		if (archive) {
			/* -w's perf.data is whole: bundle it (and the vDSO
			 * the capture put in the build-id cache) */
			int arc = capture_archive_write(
				PROG, live_opts.lo.write_path, archive, NULL,
				buildid_dir, NULL, quiet);
			rc = arc == 1 ? 1 : rc ? rc : arc;
		}
		return rc;
	}

	struct ui ui = {isatty(2), quiet, 0, now_s(), 0, 0, ring};
	if (pt) {
		struct strace_raw_opts ro2 = {
			.size = sizeof(ro2),
			.pt_path = pt,
			.secs = secs,
			.nsecs = nsecs,
			.ring = ring,
			.walk_flags = flags,
			.types = types_arg ? &types : NULL,
			.cpu = cpu,
			.pid = pid ? (uint32_t)pid : tid,
			.tid = tid ? tid : (uint32_t)pid,
			.jobs = jobs,
			.piece_bytes = (size_t)piece,
			.progress = on_progress,
			.cb_arg = &ui,
			.names = names,
		};
		struct strace_raw_stats rs;
		struct strace_raw_fault rf;
		rc = strace_raw_decode(&ro2, &rs, &rf);
		if (ui.shown)
			fputc('\n', stderr);
		if (rc < 0) {
			raw_error(rc, &ro2, &rf);
			unlink(strace_ring_path(ring));
			close_ring(ring);
			return 1;
		}
		double t = now_s() - ui.t0;
		if (rs.nosync)
			fprintf(stderr,
				PROG ": warning: --pt %s: the decoder found no "
				     "PSB to start at (a PSB+ with nothing "
				     "after it?): nothing was decoded\n",
				pt);
		if (!quiet)
			fprintf(stderr,
				PROG ": %s: %.1f MB of PT in %.3f s: %llu "
				     "branches, %llu events, %llu decode "
				     "errors, %llu overflows%s\n",
				pt, (double)rs.pt_bytes / 1e6, t,
				(unsigned long long)rs.branches,
				(unsigned long long)rs.events,
				(unsigned long long)rs.errors,
				(unsigned long long)rs.overflows,
				cpu.family ? ""
					   : " (processor unknown: the "
					     "safe errata workarounds only; "
					     "--cpu F/M names it)");
		if (!quiet)
			say_ring(ring);
		close_ring(ring);
		return 0;
	}
	const char *named = input; /* (-i as given, for messages) */
	rc = pipe_input(&input);
	if (rc == 0)
		rc = capture_archive_input(PROG, &input, &symfs, &buildid_dir);
	if (rc) {
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return rc;
	}
	struct strace_offline_opts oo = {
		.perf_path = input,
		.ring = ring,
		.walk_flags = flags,
		.types = types_arg ? &types : NULL,
		.tid = tid,
		.jobs = jobs,
		.piece_bytes = (size_t)piece,
		.vdso_path = vdso,
		.buildid_dir = buildid_dir,
		.symfs = symfs,
		.cache_dir = cache_dir(),
		.names = names,
		.warn = on_warn,
		.progress = on_progress,
		.cb_arg = &ui,
	};
	struct strace_offline_stats st;
	uint64_t err_off = 0;
	catch_sigbus();
	rc = strace_offline_decode(&oo, &st, &err_off);
	if (ui.shown)
		fputc('\n', stderr);
	double t = now_s() - ui.t0;
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG) {
		ringmsg_write_error(PROG, strace_ring_path(ring), rc, "-o",
				    NULL);
		fprintf(stderr, PROG ": %s: removed (incomplete)\n",
			strace_ring_path(ring));
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return 1;
	}
	if (rc == -STRACE_E_PERF_SHRANK) {
		struct stat fst;
		struct strace_ring_stat rs;
		long long now = stat(input, &fst) == 0 ? (long long)fst.st_size
						       : -1;
		fprintf(stderr,
			PROG ": %s: the file shrank while it was read (", input);
		if (st.file_size)
			fprintf(stderr, "%llu bytes when opened, ",
				(unsigned long long)st.file_size);
		fprintf(stderr,
			"%lld now; something truncated or rewrote it): what "
			"it held from offset 0x%llx on is lost",
			now, (unsigned long long)err_off);
		/* The ring holds what was decoded before, and its end. */
		if (strace_ring_stat(ring, &rs) == 0 && rs.writers_closed) {
			fprintf(stderr,
				"; %s holds the events decoded before that, "
				"each stream cut there ending with a lost "
				"event",
				strace_ring_path(ring));
		} else {
			unlink(strace_ring_path(ring));
		}
		fprintf(stderr, "; decode a copy of the recording that "
				"nothing writes to\n");
		close_ring(ring);
		return 1;
	}
	if (rc == -STRACE_E_PERF_TIME) {
		/* the offending 64-bit word, at err_off (O_NONBLOCK: the
		 * path might have become a FIFO meanwhile) */
		uint64_t v = 0;
		int fd = open(input, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		int got = fd >= 0 && pread(fd, &v, 8, (off_t)err_off) == 8;
		if (fd >= 0)
			close(fd);
		fprintf(stderr,
			PROG ": %s: AUXTRACE_INFO's time_shift is ", input);
		if (got)
			fprintf(stderr, "%llu", (unsigned long long)v);
		else
			fprintf(stderr, "64 or more");
		fprintf(stderr,
			" (at file offset 0x%llx): the kernel's is below 64, "
			"so no TSC can be converted to perf time with it; the "
			"file is damaged: record it again, or decode an "
			"undamaged copy\n",
			(unsigned long long)err_off);
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return 1;
	}
	if (rc == -STRACE_E_PERF_NOTREG) {
		struct stat fst;
		const char *what = "not a regular file";
		int isdir = 0;
		if (stat(input, &fst) == 0) {
			isdir = S_ISDIR(fst.st_mode);
			what = S_ISDIR(fst.st_mode)    ? "a directory"
			       : S_ISCHR(fst.st_mode)  ? "a character device"
			       : S_ISBLK(fst.st_mode)  ? "a block device"
			       : S_ISFIFO(fst.st_mode) ? "a FIFO (a pipe)"
			       : S_ISSOCK(fst.st_mode) ? "a socket"
						       : what;
		}
		fprintf(stderr,
			PROG ": -i %s: %s, not a perf.data file: give the file "
			     "that 'perf record -o FILE' wrote%s (a recording "
			     "piped with 'perf record -o -' cannot be decoded: "
			     "record into a file)\n",
			input, what,
			isdir ? ", e.g. perf.data in that directory" : "");
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return 1;
	}
	if (rc == -STRACE_E_PERF_BUILDID) {
		capture_archive_mismatch(PROG, named, &st.mismatch);
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return 1;
	}
	if (rc == -STRACE_E_PERF_NOTID) {
		fprintf(stderr, PROG ": %s: the recording has no thread %u; ",
			input, tid);
		if (!st.nthreads)
			fprintf(stderr, "it names no thread at all (no COMM "
					"records): decode it without --tid\n");
		for (uint32_t i = 0; i < st.nthreads && i < 8; i++)
			fprintf(stderr, "%s%u (%s, pid %u)",
				i ? ", " : "its threads are ", st.threads[i].tid,
				st.threads[i].comm, st.threads[i].pid);
		if (st.nthreads > 8)
			fprintf(stderr, " and %u more", st.nthreads - 8);
		if (st.nthreads)
			fprintf(stderr, ": give --tid one of them\n");
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: %s", input, strace_strerror(rc));
		if (err_off)
			fprintf(stderr, " (at file offset 0x%llx)",
				(unsigned long long)err_off);
		struct stat fst;
		if (rc == -STRACE_E_PERF_MAGIC)
			fprintf(stderr,
				"; give a perf.data that perf record wrote, or "
				"a bundle that --archive wrote");
		if (rc == -STRACE_E_PERF_TRUNCATED && stat(input, &fst) == 0)
			fprintf(stderr,
				"; the file has %lld bytes: perf writes the "
				"event descriptions and the index last, so a "
				"copy cut short cannot be decoded; copy it "
				"again whole",
				(long long)fst.st_size);
		fprintf(stderr, "\n");
		/* Leave no half-written ring behind. */
		unlink(strace_ring_path(ring));
		close_ring(ring);
		return 1;
	}
	if (!quiet)
		fprintf(stderr,
			PROG ": %llu %s, %.1f MB of PT in %.3f s (%.1f "
			     "MB/s): %llu branches, %llu events, %llu decode "
			     "errors, %llu overflows, %llu losses, %llu "
			     "unreadable mappings\n",
			(unsigned long long)st.queues,
			st.per_cpu ? (st.queues == 1 ? "CPU" : "CPUs")
				   : (st.queues == 1 ? "thread" : "threads"),
			(double)st.pt_bytes / 1e6, t,
			t > 0 ? (double)st.pt_bytes / 1e6 / t : 0.0,
			(unsigned long long)st.branches,
			(unsigned long long)st.events,
			(unsigned long long)st.errors,
			(unsigned long long)st.overflows,
			(unsigned long long)st.lost,
			(unsigned long long)st.missing);
	if (strace_block_engine_misses())
		fprintf(stderr,
			PROG ": error: %s: the decode errors are code it "
			     "could not read (apt-get install libcapstone4)\n",
			strace_strerror(-STRACE_E_NOCAPSTONE));
	cache_warn(&st.cache, oo.cache_dir);
	if (!quiet && !no_ring)
		say_ring(ring);
	close_ring(ring);
	return partial(quiet, st.errors, st.missing);
}

int main(int argc, char **argv)
{
	int rc = capture(argc, argv);

	if (view_path && view_ring[0]) {
		/* (a partial trace is still shown, and stays partial) */
		if (rc == 0 || rc == CAPTURE_EXIT_PARTIAL) {
			int vrc = view_write(view_quiet);
			rc = vrc ? vrc : rc;
		}
		if (!view_keep) /* the ring was only the way to the view */
			unlink(view_ring);
	}
	return rc;
}
