/* SPDX-License-Identifier: MIT */
/*
 * cli/ptrace-read.c - read a shared event ring (text, JSON lines, raw
 * records, or a saved ring file); generate sample events; show a ring's
 * state. See docs/man/ptrace-read.1. main() parses the command line
 * into struct read_opts, checks what goes together, and dispatches to
 * the commands (read.h: read_events.c, read_diff.c, read_generate.c,
 * read_stat.c, read_gc.c, read_types.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "choice.h"
#include "read.h"
#include "strace/version.h"

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
static int diff_usage(struct read_opts *o)
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
	OPT_NO_CACHE,
	OPT_VERSION,
	OPT_DEPTH,
	OPT_MACHINE_STACK,
	OPT_INLINE,
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
	OPT_SRCLINE,
};

static const struct option lopts[] = {
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"follow", no_argument, NULL, OPT_FOLLOW},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"types", required_argument, NULL, OPT_TYPES},
	{"from-end", no_argument, NULL, OPT_FROM_END},
	{"no-comm", no_argument, NULL, OPT_NO_COMM},
	{"no-cache", no_argument, NULL, OPT_NO_CACHE},
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
	{"inline", no_argument, NULL, OPT_INLINE},
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
	{"srcline", no_argument, NULL, OPT_SRCLINE},
	{NULL, 0, NULL, 0},
};

/* The parse: the options, and which groups of them were given. */
struct parse {
	struct read_opts o;
	int gen_opts, view_opts, svg_opts;
};

/* -f FORMAT: a format of lines, or (FMT_VIEW + enum view_kind) a view */
#define FMT_VIEW 0x100
/* ... or (FMT_COVER + 0, 1) lcov or coverage (read_cov.c) */
#define FMT_COVER 0x200
static const struct choice formats[] = {
	{"text", FMT_TEXT, 0},
	{"jsonl", FMT_JSONL, 0},
	{"json", FMT_JSONL, 1},
	{"raw", FMT_RAW, 0},
	{"ring", FMT_RING, 0},
	{"none", FMT_NONE, 0},
	{"tree", FMT_VIEW + VIEW_TREE, 0},
	{"report", FMT_VIEW + VIEW_REPORT, 0},
	{"folded", FMT_VIEW + VIEW_FOLDED, 0},
	{"chrome", FMT_VIEW + VIEW_CHROME, 0},
	{"fxt", FMT_VIEW + VIEW_FXT, 0},
	{"uftrace", FMT_VIEW + VIEW_UFTRACE, 0},
	{"svg", FMT_VIEW + VIEW_SVG, 0},
	{"lcov", FMT_COVER, 0},
	{"coverage", FMT_COVER + 1, 0},
	{NULL, 0, 0},
};

static const struct choice sorts[] = {
	{"total", VIEW_SORT_TOTAL, 0},
	{"self", VIEW_SORT_SELF, 0},
	{"calls", VIEW_SORT_CALLS, 0},
	{NULL, 0, 0},
};

static const struct choice bys[] = {
	{"function", VIEW_BY_FUNCTION, 0},
	{"thread", VIEW_BY_THREAD, 0},
	{"dso", VIEW_BY_DSO, 0},
	{NULL, 0, 0},
};

/* --weight: 1 for calls */
static const struct choice weights[] = {
	{"ns", 0, 0},
	{"calls", 1, 0},
	{NULL, 0, 0},
};

static const struct choice flames[] = {
	{"merged", VIEW_FLAME_MERGED, 0},
	{"time", VIEW_FLAME_TIME, 0},
	{NULL, 0, 0},
};

static const struct choice modes[] = {
	{"lossless", STRACE_RING_LOSSLESS, 0},
	{"flight", STRACE_RING_FLIGHT, 0},
	{NULL, 0, 0},
};

static int parse_format(struct read_opts *o, const char *arg)
{
	char list[128];
	int v;

	if (choice_find(formats, arg, &v) < 0)
		return usage_error("-f: unknown format '%s' (%s)", arg,
				   choice_list(formats, ", ", ", ", list,
					       sizeof(list)));
	o->cover = 0;
	if (v >= FMT_COVER)
		o->cover = 1 + (v - FMT_COVER);
	else if (v >= FMT_VIEW)
		o->view = 1 + (v - FMT_VIEW);
	else
		o->format = v;
	if (o->view || o->cover)
		o->format = FMT_TEXT;
	return 0;
}

/* The options that shape the stack views. Returns 0 or EXIT_USAGE. */
static int parse_view_opt(struct parse *p, int c, const char *arg)
{
	struct read_opts *o = &p->o;
	char list[64];
	long long v;
	int k;

	switch (c) {
	case 'D':
	case OPT_DEPTH:
		if (parse_num("--depth", arg, 1, 1 << 20, &v))
			return EXIT_USAGE;
		o->vo.depth = (uint32_t)v;
		break;
	case 't':
	case OPT_MIN_TIME:
		if (parse_duration("--min-time", arg, &o->vo.min_time))
			return EXIT_USAGE;
		break;
	case OPT_SORT:
		if (choice_find(sorts, arg, &k) < 0)
			return usage_error("--sort: '%s': sort by %s", arg,
					   choice_list(sorts, ", ", " or ", list,
						       sizeof(list)));
		o->vo.sort = k;
		break;
	case OPT_BY:
		if (choice_find(bys, arg, &k) < 0)
			return usage_error("--by: '%s': rows per %s", arg,
					   choice_list(bys, ", ", " or ", list,
						       sizeof(list)));
		o->vo.by = k;
		break;
	case OPT_WEIGHT:
		/* (the message says what each is) */
		if (choice_find(weights, arg, &k) < 0)
			return usage_error("--weight: '%s': ns (self time) "
					   "or calls",
					   arg);
		if (k)
			o->vo.weight_calls = 1;
		break;
	case OPT_FLAME:
		if (choice_find(flames, arg, &k) < 0)
			return usage_error("--flame: '%s': merged (the "
					   "stacks merged) or time (the "
					   "frames in time order)",
					   arg);
		o->vo.flame = k;
		p->svg_opts++;
		return 0;
	case OPT_MIN_WIDTH:
		if (parse_width(arg, &o->vo.min_width) < 0)
			return EXIT_USAGE;
		p->svg_opts++;
		return 0;
	}
	p->view_opts++;
	return 0;
}

/* A read-side filter, kept in the order given. */
static int parse_filter(struct parse *p, int c, const char *arg)
{
	struct read_opts *o = &p->o;

	if (c == 'C' || c == OPT_CALLER)
		p->view_opts++;
	if (o->nfilters == (int)(sizeof(o->filters) / sizeof(o->filters[0])))
		return usage_error("at most 64 filters");
	o->filters[o->nfilters].kind =
		c == OPT_TIME	  ? STRACE_FILTER_TIME
		: c == OPT_TID	  ? STRACE_FILTER_TID
		: c == OPT_PID	  ? STRACE_FILTER_PID
		: c == OPT_COMM	  ? STRACE_FILTER_COMM
		: c == OPT_SYM	  ? STRACE_FILTER_SYM
		: c == OPT_NO_SYM || c == 'N'
			? STRACE_FILTER_NO_SYM
		: c == OPT_DSO ? STRACE_FILTER_DSO
			       : STRACE_FILTER_CALLER;
	o->filters[o->nfilters++].value = arg;
	return 0;
}

/* --generate and what goes with it. */
static int parse_generate_opt(struct parse *p, int c, const char *arg)
{
	struct read_opts *o = &p->o;
	char list[64];
	long long v;

	switch (c) {
	case OPT_GENERATE:
		if (parse_num("--generate", arg, 0, INT64_MAX, &v))
			return EXIT_USAGE;
		o->generate = v;
		return 0;
	case OPT_READERS:
		if (parse_num("--readers", arg, 0, STRACE_RING_MAX_READERS, &v))
			return EXIT_USAGE;
		o->readers = (int)v;
		break;
	case OPT_MODE:
		if (choice_find(modes, arg, &o->mode) < 0)
			return usage_error("--mode: unknown mode '%s' (%s)", arg,
					   choice_list(modes, ", ", ", ", list,
						       sizeof(list)));
		break;
	case OPT_CAPACITY:
		if (parse_num("--capacity", arg, STRACE_RING_MIN_CAPACITY,
			      1ll << 36, &v))
			return EXIT_USAGE;
		if (v & (v - 1))
			return usage_error("--capacity: %lld is not a "
					   "power of two (try %llu)",
					   v,
					   (unsigned long long)pow2_ceil(
						   (uint64_t)v));
		o->capacity = (unsigned long long)v;
		break;
	}
	p->gen_opts = 1;
	return 0;
}

/* The options that take no more than a word: set it. */
static int parse_plain_opt(struct parse *p, int c, const char *arg)
{
	struct read_opts *o = &p->o;
	long long v;

	switch (c) {
	case 'F': {
		char why[160];
		if (fields_parse(&o->fields, arg, why, sizeof(why)) < 0)
			return usage_error("-F %s: %s", arg, why);
		break;
	}
	case 'o':
		o->output = arg;
		break;
	case OPT_PLUGIN:
		if (o->nplugins == (int)(sizeof(o->plugins) /
					 sizeof(o->plugins[0])))
			return usage_error("at most 32 plugins");
		o->plugins[o->nplugins++] = arg;
		break;
	case OPT_DIFF_POLICY: {
		const char *bad;
		if (report_diff_policy(arg, &o->diff_policy, &bad) < 0)
			return usage_error("--diff-policy: '%.*s' is none of "
					   "abs, no-abs, percent, no-percent, "
					   "full, compact",
					   (int)strcspn(bad, ","), bad);
		o->diff_policy_set = 1;
		break;
	}
	case OPT_TIMEOUT:
		if (parse_num("--timeout", arg, 0, INT32_MAX, &v))
			return EXIT_USAGE;
		o->timeout_ms = (long)v;
		o->timeout_set = 1;
		break;
	}
	return 0;
}

/* One option (a switch-only dispatcher). Returns -1 to go on, or the
 * exit status: parsed, or the command done (-h, --version). */
static int parse_opt(struct parse *p, int c, const char *arg)
{
	struct read_opts *o = &p->o;

	switch (c) {
	case 'f':
		return parse_format(o, arg) ? EXIT_USAGE : -1;
	case 'D':
	case OPT_DEPTH:
	case 't':
	case OPT_MIN_TIME:
	case OPT_SORT:
	case OPT_BY:
	case OPT_WEIGHT:
	case OPT_FLAME:
	case OPT_MIN_WIDTH:
		return parse_view_opt(p, c, arg) ? EXIT_USAGE : -1;
	case OPT_MACHINE_STACK:
		o->vo.machine = 1;
		return -1;
	case OPT_INLINE:
		o->inline_frames = 1;
		p->view_opts++;
		return -1;
	case OPT_SRCLINE:
		o->srcline = 1;
		return -1;
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
		return parse_filter(p, c, arg) ? EXIT_USAGE : -1;
	case 'F':
	case 'o':
	case OPT_PLUGIN:
	case OPT_DIFF_POLICY:
	case OPT_TIMEOUT:
		return parse_plain_opt(p, c, arg) ? EXIT_USAGE : -1;
	case OPT_CONTROL:
		o->control = arg;
		return -1;
	case OPT_DIFF:
		o->diff = arg;
		return -1;
	case OPT_FOLLOW:
		o->follow = 1;
		return -1;
	case OPT_TYPES:
		o->types = arg;
		return -1;
	case OPT_FROM_END:
		o->from_end = 1;
		return -1;
	case OPT_NO_CACHE:
		o->no_cache = 1;
		return -1;
	case OPT_NO_COMM:
		o->no_comm = 1;
		return -1;
	case OPT_GENERATE:
	case OPT_READERS:
	case OPT_MODE:
	case OPT_CAPACITY:
		return parse_generate_opt(p, c, arg) ? EXIT_USAGE : -1;
	case OPT_STAT:
		o->stat = 1;
		return -1;
	case OPT_GC:
		o->gc = 1;
		return -1;
	case OPT_LIST_TYPES:
		o->list_types = 1;
		return -1;
	case 'h':
		print_help();
		return EXIT_OK;
	case OPT_VERSION:
		printf(PROG " (ptrace toolkit) %s\n", strace_version());
		return EXIT_OK;
	default:
		return usage_short();
	}
}

/* The commands that need no ring to read: --list-types, --generate,
 * --stat, --gc; -1 when none of them was asked for. */
static int dispatch_ring_cmds(struct parse *p, int argc, char **argv)
{
	struct read_opts *o = &p->o;

	if (o->list_types)
		return cmd_list_types();
	if (o->generate >= 0) {
		if (optind != argc)
			return usage_error("--generate writes to -o RING; "
					   "unexpected argument '%s'",
					   argv[optind]);
		return cmd_generate(o);
	}
	if (p->gen_opts)
		return usage_error("--readers, --mode and --capacity go with "
				   "--generate");
	if (o->stat && o->gc)
		return usage_error("--stat lists the rings, --gc removes the "
				   "stale ones: give one");
	if (optind + 1 < argc)
		return usage_error("one %s at a time; unexpected argument '%s'",
				   o->stat || o->gc ? "ring or directory"
						    : "ring",
				   argv[optind + 1]);
	if (o->gc)
		return cmd_gc(optind < argc ? argv[optind] : NULL);
	if (o->stat) {
		struct stat dst;
		if (optind == argc)
			return cmd_list(NULL);
		if (stat(argv[optind], &dst) == 0 && S_ISDIR(dst.st_mode))
			return cmd_list(argv[optind]);
		return cmd_stat(o, argv[optind]);
	}
	return -1;
}

/* The read of the ring path: what goes together checked, then read
 * (cmd_read) or two rings' reports compared (cmd_diff). */
static int dispatch_read(struct parse *p, const char *path)
{
	struct read_opts *o = &p->o;

	if (p->view_opts && !o->view)
		return usage_error("--depth, --min-time, --caller, --sort, --by, "
				   "--weight and --inline shape the stack views: "
				   "they go with -f tree, report, folded, chrome, fxt, "
				   "uftrace or svg");
	if (o->fields.n && ((o->format != FMT_TEXT && o->format != FMT_JSONL) ||
			    o->view))
		return usage_error("-F chooses the fields of the lines of -f "
				   "text or jsonl");
	if (o->srcline && (o->view ? (o->view != 1 + VIEW_TREE &&
				      o->view != 1 + VIEW_REPORT) ||
					     o->diff
				   : (o->format != FMT_TEXT &&
				      o->format != FMT_JSONL) ||
					     o->fields.n))
		return usage_error("--srcline adds source lines to the lines of "
				   "-f text, jsonl, tree or report (not --diff; "
				   "with -F: the field srcline)");
	if (p->svg_opts && o->view != 1 + VIEW_SVG)
		return usage_error("--flame and --min-width go with -f svg");
	if (o->vo.flame == VIEW_FLAME_TIME && o->vo.weight_calls)
		return usage_error("--flame time draws the frames' time: "
				   "--weight calls goes with --flame merged");
	if (o->view && o->types)
		return usage_error("--types does not go with -f tree, report "
				   "or folded: the stacks need every call and "
				   "return (filter with --sym, --tid, --time ...)");
	if (o->view)
		o->vo.kind = o->view - 1;
	if (o->diff_policy_set && !o->diff)
		return usage_error("--diff-policy goes with --diff OLD");
	if (o->diff)
		return diff_usage(o) ? EXIT_USAGE : cmd_diff(o, path);
	if (o->cover && (o->nfilters || o->types || o->follow ||
			 o->fields.n || o->nplugins || o->from_end))
		return usage_error("-f lcov and coverage read the whole ring "
				   "once: no filters, -F, --types, --follow, "
				   "--from-end or plugins");
	if (o->cover)
		return cmd_coverage(o, path);
	if (o->view == 1 + VIEW_UFTRACE && !o->output)
		return usage_error("-f uftrace writes a uftrace data directory: "
				   "give it with -o DIR");
	o->vo.dir = o->output;
	if (o->format == FMT_NONE && !o->nplugins && !o->control)
		return usage_error("-f none shows nothing: it runs the plugins "
				   "only; give them with --plugin FILE.so");
	if (o->format == FMT_NONE && o->output)
		return usage_error("-f none writes nothing: drop -o, or choose "
				   "a format");
	if (o->format == FMT_RING && !o->output)
		return usage_error("-f ring saves to a new ring file: give it "
				   "with -o FILE");
	return cmd_read(o, path, NULL);
}

int main(int argc, char **argv)
{
	static char prog_name[] = PROG;
	struct parse p;
	int c, rc;

	memset(&p, 0, sizeof(p));
	p.o.format = FMT_TEXT;
	p.o.timeout_ms = -1;
	p.o.generate = -1;
	p.o.mode = STRACE_RING_LOSSLESS;
	p.o.diff_policy = REPORT_DIFF_ABS;
	p.o.vo.min_width = VIEW_MIN_WIDTH;

	argv[0] = prog_name; /* getopt's messages name the program so */
	while ((c = getopt_long(argc, argv, "f:o:hD:t:C:N:F:", lopts, NULL)) !=
	       -1)
		if ((rc = parse_opt(&p, c, optarg)) >= 0)
			return rc;
	rc = dispatch_ring_cmds(&p, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind == argc)
		return usage_error("which ring? pass its path");
	return dispatch_read(&p, argv[optind]);
}
