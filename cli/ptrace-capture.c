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
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strace/internal/grow.h"
#include "cli/capture.h"
#include "cli/capture_archive.h"
#include "cli/capture_live.h"
#include "cli/choice.h"
#include "pt_backend/perf/perf.h"
#include "pt_backend/pipeline/pipeline.h"
#include "decoder/decoder.h"
#include "strace/ring.h"
#include "strace/version.h"

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
		"      --coverage        note the code that ran (-i): the ranges\n"
		"                        go into the ring for ptrace-read -f lcov\n"
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
		"                        data directory), NAME.info (an lcov\n"
		"                        tracefile for genhtml: implies\n"
		"                        --coverage); the ring is removed\n"
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

/* --view FILE: the ring, once written, becomes FILE (view_write()) */
static char view_ring[PATH_MAX]; /* the ring's path, once created */

/* The ptrace-read format of a --view path, or NULL. */
static const char *view_format(const char *path)
{
	static const struct {
		const char *suffix, *format;
	} by[] = {
		{".json", "chrome"},  {".fxt", "fxt"},
		{".svg", "svg"},      {".folded", "folded"},
		{".uftrace", "uftrace"}, {"/", "uftrace"},
		{".info", "lcov"},
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
static int view_write(const char *view_path, int quiet)
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
			: !strcmp(fmt, "lcov")
				? "line coverage: genhtml -o DIR FILE renders "
				  "it as HTML"
				: "uftrace replay / report / graph -d DIR, "
				  "or uftrace dump --chrome -d DIR");
	return 0;
}

/* --raw and --elf: one more section of code for --pt. Returns 0, or the
 * exit status after a message. */
static int add_section(struct capture_opts *o, int elf, char *arg)
{
	if (o->nsecs == o->secs_cap) {
		/* (the size it asked for, for the message) */
		size_t cap = o->secs_cap ? 2 * o->secs_cap : 16;
		void *p = strace_grow(o->secs, &o->secs_cap, sizeof(*o->secs),
				      16);

		if (!p) {
			fprintf(stderr,
				PROG ": out of memory for %zu "
				     "--raw and --elf sections\n",
				cap);
			return 1;
		}
		o->secs = p;
	}
	if (strace_raw_parse_section(arg, elf, &o->secs[o->nsecs]) < 0)
		die_usage(elf ? "--elf '%s': expected "
				"FILE[@BASE], e.g. "
				"libfoo.so@0x7f0000000000"
			      : "--raw '%s': expected "
				"BIN[:OFFSET[-SIZE]]@ADDR, "
				"e.g. code.bin@0x400000 or "
				"dump.bin:0x1000-0x200@0x401000",
			  arg);
	o->nsecs++;
	return 0;
}

enum { O_MODE = 256, O_CAP, O_DEC, O_ALL, O_EXACT, O_TYPES, O_TID, O_VDSO,
       O_WAIT, O_PIECE, O_PT, O_RAW, O_ELF, O_CPU, O_VERSION, O_VIEW,
       O_PLUGIN, O_NO_RING, O_NO_CACHE, O_NAMES, O_ARCHIVE, O_SYMFS, O_COVERAGE };

/* The value options whose argument is a number or a keyword; 0, or dies
 * with the usage message. */
static int parse_value(struct capture_opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case 'p':
		o->pid = strtol(arg, &end, 10);
		if (*end || o->pid <= 0)
			die_usage("-p needs a process id, not '%s'", arg);
		break;
	case O_MODE: {
		static const struct choice modes[] = {
			{"lossless", STRACE_RING_LOSSLESS, 0},
			{"flight", STRACE_RING_FLIGHT, 0},
			{"archive", STRACE_RING_ARCHIVE, 0},
			{NULL, 0, 0},
		};
		char list[64];
		if (choice_find(modes, arg, &o->mode) < 0)
			die_usage("--mode takes %s, not '%s'",
				  choice_list(modes, ", ", " or ", list,
					      sizeof(list)),
				  arg);
		break;
	}
	case O_CAP:
		o->capacity = strtoull(arg, &end, 0);
		if (*end || o->capacity < STRACE_RING_MIN_CAPACITY ||
		    o->capacity > (1ull << 36) ||
		    (o->capacity & (o->capacity - 1)))
			die_usage("--capacity needs a power of two from "
				  "%d to 2^36 events, not '%s'",
				  STRACE_RING_MIN_CAPACITY, arg);
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
		if (choice_find(decoders, arg, &k) < 0)
			die_usage("--decoder takes %s, not '%s'",
				  choice_list(decoders, ", ", " or ", list,
					      sizeof(list)),
				  arg);
		o->flags |= (unsigned)k;
		break;
	}
	case O_TID: {
		unsigned long v = strtoul(arg, &end, 10);
		if (*end || !v || v > UINT32_MAX)
			die_usage("--tid needs a thread id, not '%s'", arg);
		o->tid = (uint32_t)v;
		break;
	}
	case 'j':
		o->jobs = (int)strtol(arg, &end, 10);
		if (*end || o->jobs < 1 || o->jobs > 64)
			die_usage("-j takes 1 to 64, not '%s'", arg);
		break;
	case O_PIECE:
		o->piece = strtoull(arg, &end, 0);
		if (*end || o->piece < 4096 || o->piece > (1ull << 40))
			die_usage("--piece-bytes takes a byte count of "
				  "at least 4096, not '%s'",
				  arg);
		break;
	case O_WAIT:
		o->wait_readers = (int)strtol(arg, &end, 10);
		if (*end || o->wait_readers < 0 ||
		    o->wait_readers > STRACE_RING_MAX_READERS)
			die_usage("--wait-readers takes 0 to 64, not '%s'",
				  arg);
		break;
	case O_NAMES: {
		static const struct choice namings[] = {
			{"perf", STRACE_PLT_PERF61, 0},
			{"plain", STRACE_PLT_PLAIN, 0},
			{NULL, 0, 0},
		};
		char list[64];
		if (choice_find(namings, arg, &o->names) < 0)
			die_usage("--names: '%s' is neither %s", arg,
				  choice_list(namings, ", ", " nor ", list,
					      sizeof(list)));
		break;
	}
	}
	return 0;
}

/*
 * One of our options (getopt_long's c and arg) into o. Returns -1 to
 * go on parsing, or the exit status (--help, --version, a bad option).
 */
static int parse_option(struct capture_opts *o, int c, char *arg)
{
	switch (c) {
	case 'i':
		o->input = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case O_PT:
		o->pt = arg;
		break;
	case O_RAW:
	case O_ELF:
		return add_section(o, c == O_ELF, arg) ? 1 : -1;
	case O_CPU:
		o->cpu_arg = arg;
		if (strace_pt_cpu_parse(arg, &o->cpu) < 0 || !o->cpu.family)
			die_usage("--cpu '%s': expected "
				  "FAMILY/MODEL[/STEPPING] as ptxed "
				  "takes it, e.g. 6/85 or 6/0x55/4",
				  arg);
		break;
	case 'p':
	case O_MODE:
	case O_CAP:
	case O_DEC:
	case O_TID:
	case 'j':
	case O_PIECE:
	case O_WAIT:
	case O_NAMES:
		return parse_value(o, c, arg) ? 2 : -1;
	case O_ALL:
		o->flags |= STRACE_WALK_ALL_BRANCHES;
		break;
	case O_EXACT:
		o->flags |= STRACE_WALK_EXACT_TIMES;
		break;
	case O_COVERAGE:
		o->coverage = 1;
		break;
	case O_TYPES:
		o->types_arg = arg;
		break;
	case O_VDSO:
		o->vdso = arg;
		break;
	case O_ARCHIVE:
		o->archive = arg;
		break;
	case O_SYMFS:
		o->symfs = arg;
		break;
	case 'q':
		o->quiet = 1;
		break;
	case O_VIEW:
		o->view_path = arg;
		if (!view_format(o->view_path))
			die_usage("--view %s: name a .json file (Chrome "
				  "JSON: Perfetto, chrome://tracing, "
				  "speedscope), a .fxt file (Perfetto), "
				  "a .svg file (a flame graph), a .folded "
				  "file (collapsed stacks), a .uftrace "
				  "directory or one ending in / (uftrace), "
				  "or a .info file (lcov)",
				  o->view_path);
		/* an lcov tracefile is made of the code that ran */
		if (!strcmp(view_format(o->view_path), "lcov"))
			o->coverage = 1;
		break;
	case O_PLUGIN:
		if (o->nplugins == (int)(sizeof(o->plugin_specs) /
					 sizeof(o->plugin_specs[0])))
			die_usage("%s", "at most 32 plugins");
		o->plugin_specs[o->nplugins++] = arg;
		break;
	case O_NO_RING:
		o->no_ring = 1;
		break;
	case O_NO_CACHE:
		o->no_cache = 1;
		break;
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
	return -1;
}

/*
 * The command line into o: our options, then the live capture's
 * (capture_live_option()). Returns -1 to go on, or the exit status.
 */
static int parse_options(struct capture_opts *o, int argc, char **argv)
{
	static const struct option own_opts[] = {
		{"input", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"pid", required_argument, NULL, 'p'},
		{"mode", required_argument, NULL, O_MODE},
		{"capacity", required_argument, NULL, O_CAP},
		{"decoder", required_argument, NULL, O_DEC},
		{"all-branches", no_argument, NULL, O_ALL},
		{"coverage", no_argument, NULL, O_COVERAGE},
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
	static char prog_name[] = PROG;
	int c, rc;

	argv[0] = prog_name; /* getopt's messages name the program so */
	while ((c = getopt_long(argc, argv, "+i:o:p:j:qhw:", lopts, NULL)) !=
	       -1) {
		if (c >= CAPTURE_LIVE_OPT_BASE || c == 'w') {
			if (capture_live_option(&o->live_opts, c, optarg,
						stderr) < 0) {
				fprintf(stderr, "Try '" PROG " --help'.\n");
				return 2;
			}
			continue;
		}
		rc = parse_option(o, c, optarg);
		if (rc >= 0)
			return rc;
	}
	/* with --pt, -p/--pid names the process the trace is of */
	o->live = (o->pid && !o->pt) || optind < argc;
	o->argc = argc;
	o->argv = argv;
	o->has_cmd = optind < argc;
	o->cmd = o->pid ? NULL : argv + optind;
	return -1;
}

/* The inputs and options that do not go together: dies with the usage
 * message. */
static void check_inputs(const struct capture_opts *o)
{
	if (!o->input && !o->live && !o->pt)
		die_usage("%s", "say what to trace: -i perf.data, --pt FILE, "
				"-p PID or -- CMD");
	if ((o->input && o->live) || (o->pt && o->has_cmd))
		die_usage("%s", "-i and --pt decode a recording: they do not "
				"go with -p or a command");
	if (o->input && o->pt)
		die_usage("%s", "-i and --pt are two kinds of input: give one");
	if (!o->pt && (o->nsecs || o->cpu_arg))
		die_usage("%s", "--raw, --elf and --cpu go with --pt (a "
				"perf.data names its own code and processor)");
	if (o->pt && !o->nsecs)
		die_usage("%s", "--pt needs the code the trace ran: --raw "
				"BIN@ADDR or --elf FILE[@BASE], as many as "
				"there are pieces");
	if (o->coverage && !o->input)
		die_usage("%s", "--coverage (and --view NAME.info) goes with "
				"-i: the decode of a recording notes the code "
				"that ran");
}

/* --archive, --symfs and --no-ring against the rest: dies with the usage
 * message. */
static void check_outputs(const struct capture_opts *o)
{
	if (o->archive && o->pt)
		die_usage("%s", "--archive bundles a perf.data (-i, or -w in a "
				"live capture); --pt has no perf.data");
	if (o->archive && o->live && !o->live_opts.lo.write_path)
		die_usage("%s", "--archive in a live capture bundles the "
				"perf.data that -w FILE writes: give -w FILE");
	if (o->archive && o->input &&
	    (o->output || o->view_path || o->nplugins || o->no_ring ||
	     o->wait_readers))
		die_usage("%s", "with -i, --archive only bundles the recording "
				"(as perf archive): -o, --view, --plugin, "
				"--no-ring and --wait-readers go with the "
				"decode of the bundle (-i BUNDLE.tar)");
	if (o->symfs && (o->pt || o->live))
		die_usage("%s", "--symfs says where a recording's objects are: "
				"it goes with -i (a live capture reads the "
				"process's own; --pt takes --elf)");
	if (o->symfs) {
		struct stat sst;
		if (stat(o->symfs, &sst) < 0 || !S_ISDIR(sst.st_mode))
			die_usage("--symfs %s: not a directory (give the "
				  "root the objects are under: /a/b is read "
				  "from DIR/a/b)",
				  o->symfs);
	}
}

/* -i with --archive: bundle only, as perf archive (no ring). */
static int archive_only(struct capture_opts *o)
{
	const char *input = o->input, *symfs = o->symfs;
	int rc = capture_pipe_input(&input);

	if (rc == 0)
		rc = capture_archive_input(PROG, &input, &symfs,
					   &o->buildid_dir);
	if (rc)
		return rc;
	return capture_archive_write(PROG, input, o->archive, symfs,
				     o->buildid_dir, o->vdso, o->quiet);
}

/* --types into o->types, and the walker flags they ask for. Returns 0,
 * or the exit status after a message. */
static int parse_types(struct capture_opts *o)
{
	const char *bad;
	size_t bad_len;

	if (!o->types_arg)
		return 0;
	if (strace_typeset_parse(&o->types, o->types_arg, &bad, &bad_len) <
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
	if (o->types_arg[0] != '-' &&
	    (strace_typeset_has(&o->types, STRACE_EV_PEBS) ||
	     strace_typeset_has(&o->types, STRACE_EV_PEBS_ITEM)))
		o->flags |= STRACE_WALK_PEBS;
	/* ptwrite payloads likewise (-i: the ptw bit of the
	 * recording's intel_pt config asks for them too) */
	if (o->types_arg[0] != '-' &&
	    strace_typeset_has(&o->types, STRACE_EV_PTWRITE))
		o->flags |= STRACE_WALK_PTWRITE;
	return 0;
}

/* Parse, check, and run what the command line asks for. */
static int capture(struct capture_opts *o, int argc, char **argv)
{
	/* perf's build-id cache: the vDSO of -w goes there, -i finds it */
	static char bid_buf[4096];
	struct strace_ring *ring;
	int rc;

	o->mode = -1;
	o->jobs = 1;
	o->names = STRACE_PLT_PLAIN;
	o->buildid_dir = strace_buildid_dir(bid_buf, sizeof(bid_buf));
	capture_live_init(&o->live_opts);
	rc = parse_options(o, argc, argv);
	if (rc >= 0)
		return rc;
	if (o->live_opts.list_symbols) {
		if (!o->live || o->input || o->pt)
			die_usage("%s", "--list-symbols lists the functions of "
					"a program: give -p PID or -- CMD");
		return capture_live_list(&o->live_opts, (pid_t)o->pid, o->cmd,
					 stdout, stderr);
	}
	check_inputs(o);
	check_outputs(o);
	if (o->archive && o->input)
		return archive_only(o);
	if (o->no_ring && !o->nplugins)
		die_usage("%s", "--no-ring leaves the events to the plugins: "
				"give them with --plugin FILE.so");
	if (o->no_ring &&
	    (o->output || o->view_path || o->wait_readers || o->mode >= 0))
		die_usage("%s", "--no-ring writes no ring: it does not go "
				"with -o, --view, --wait-readers or --mode");
	rc = parse_types(o);
	if (rc)
		return rc;
	rc = capture_ring_open(o, view_ring, &ring);
	if (rc)
		return rc;
	if (o->live)
		return capture_run_live(o, ring);
	if (o->pt)
		return capture_raw(o, ring);
	return capture_offline(o, ring);
}

int main(int argc, char **argv)
{
	static struct capture_opts o;
	int rc = capture(&o, argc, argv);

	if (o.view_path && view_ring[0]) {
		/* (a partial trace is still shown, and stays partial) */
		if (rc == 0 || rc == CAPTURE_EXIT_PARTIAL) {
			int vrc = view_write(o.view_path, o.quiet);
			rc = vrc ? vrc : rc;
		}
		if (!o.output) /* the ring was only the way to the view */
			unlink(view_ring);
	}
	return rc;
}
