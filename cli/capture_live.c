/* SPDX-License-Identifier: MIT */
/* cli/capture_live.c - see capture_live.h. */
#include "capture_live.h"
#include "choice.h"
#include "control.h"
#include "pt_backend/pipeline/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "ptrace-capture"

enum {
	O_EVENT = CAPTURE_LIVE_OPT_BASE,
	O_FILTER,
	O_SNAPSHOT,
	O_CONTROL,
	O_AUX,
	O_DATA,
	O_CYC,
	O_CYC_THRESH,
	O_MTC_PERIOD,
	O_NO_MTC,
	O_PSB_PERIOD,
	O_NORETCOMP,
	O_NO_TSC,
	O_NO_STACKS,
	O_DURATION,
	O_SYSFS,
	O_PROCFS,
	O_WRITE,
	O_TRIGGER,
	O_TRIGGER_COUNT,
	O_TRIGGER_AFTER,
	O_TRIGGER_THEN,
	O_TRIGGER_TAIL,
	O_LIST_SYMBOLS,
	O_START_AT,
	O_STOP_AT,
	O_START_EVENT,
	O_STOP_EVENT,
};

const struct option capture_live_longopts[] = {
	{"event", required_argument, NULL, O_EVENT},
	{"filter", required_argument, NULL, O_FILTER},
	{"snapshot", optional_argument, NULL, O_SNAPSHOT},
	{"control", required_argument, NULL, O_CONTROL},
	{"aux-size", required_argument, NULL, O_AUX},
	{"data-size", required_argument, NULL, O_DATA},
	{"cyc", no_argument, NULL, O_CYC},
	{"cyc-thresh", required_argument, NULL, O_CYC_THRESH},
	{"mtc-period", required_argument, NULL, O_MTC_PERIOD},
	{"no-mtc", no_argument, NULL, O_NO_MTC},
	{"psb-period", required_argument, NULL, O_PSB_PERIOD},
	{"noretcomp", no_argument, NULL, O_NORETCOMP},
	{"no-tsc", no_argument, NULL, O_NO_TSC},
	{"no-stacks", no_argument, NULL, O_NO_STACKS},
	{"duration", required_argument, NULL, O_DURATION},
	{"sysfs-root", required_argument, NULL, O_SYSFS},
	{"procfs-root", required_argument, NULL, O_PROCFS},
	{"write", required_argument, NULL, O_WRITE},
	{"trigger", required_argument, NULL, O_TRIGGER},
	{"trigger-count", required_argument, NULL, O_TRIGGER_COUNT},
	{"trigger-after", required_argument, NULL, O_TRIGGER_AFTER},
	{"trigger-then", required_argument, NULL, O_TRIGGER_THEN},
	{"trigger-tail", required_argument, NULL, O_TRIGGER_TAIL},
	{"list-symbols", required_argument, NULL, O_LIST_SYMBOLS},
	{"start-at", required_argument, NULL, O_START_AT},
	{"stop-at", required_argument, NULL, O_STOP_AT},
	{"start-event", required_argument, NULL, O_START_EVENT},
	{"stop-event", required_argument, NULL, O_STOP_EVENT},
	{NULL, 0, NULL, 0},
};

void capture_live_init(struct capture_live_opts *o)
{
	memset(o, 0, sizeof(*o));
}

void capture_live_usage(FILE *f)
{
	fprintf(f,
		"Live capture (-p PID or -- CMD; needs Intel PT):\n"
		"      --event EVENT     perf event, e.g. intel_pt/cyc,mtc=0/u\n"
		"      --cyc             cycle-accurate timing (CYC packets)\n"
		"      --cyc-thresh N    CYC threshold (2^(N-1) cycles)\n"
		"      --mtc-period N    MTC every 2^N ART ticks\n"
		"      --no-mtc          no MTC packets\n"
		"      --psb-period N    PSB every 2^(N+11) bytes\n"
		"      --noretcomp       no return compression\n"
		"      --no-tsc          no TSC packets\n"
		"      --filter FILTER   address filters, perf's --filter syntax:\n"
		"                        filter|start|stop|tracestop ADDR[/SIZE][@FILE]\n"
		"      --snapshot[=SIZE] keep the AUX area as a ring; take\n"
		"                        snapshots on SIGUSR2, on 'snapshot' from\n"
		"                        --control and at the end\n"
		"      --control FIFO    read commands (snapshot, stop, ping) from\n"
		"                        FIFO; fifo:CTL,ACK as perf also acks\n"
		"      --aux-size BYTES  AUX area per thread (power of two)\n"
		"      --data-size BYTES sideband ring per thread (power of two)\n"
		"      --no-stacks       do not unwind the stacks at attach\n"
		"      --duration SEC    stop after SEC seconds\n"
		"      --trigger WHERE   snapshot mode; take the snapshot when\n"
		"                        WHERE runs (repeatable): FUNC[+OFF][@OBJ]\n"
		"                        [:ret] (its return), or 0xADDR[@OBJ]; a\n"
		"                        uprobe, else a hardware breakpoint\n"
		"      --trigger-count N the Nth hit takes it (default 1)\n"
		"      --trigger-after SEC  hits in the first SEC seconds do\n"
		"                        not count\n"
		"      --trigger-then stop|next  after the snapshot: end the\n"
		"                        capture (default), or count again\n"
		"      --trigger-tail BYTES  also keep up to BYTES of trace\n"
		"                        after the hit (waits at most 1 s)\n"
		"      --list-symbols REGEX  list the functions of the program\n"
		"                        and its libraries matching REGEX (for\n"
		"                        --trigger; needs no Intel PT), and exit\n"
		"      --start-at WHERE  trace only from WHERE ... (repeatable;\n"
		"      --stop-at WHERE   ... to WHERE; Linux 6.13's AUX pause\n"
		"                        and resume, else a fallback it names)\n"
		"      --start-event TP, --stop-event TP  the same with a\n"
		"                        tracepoint GROUP:NAME (perf probe's)\n"
		"  -w, --write FILE      also write a perf.data (perf script and\n"
		"                        " PROG " -i read it), naming every\n"
		"                        mapped object's build-id; the vDSO goes\n"
		"                        into perf's build-id cache, as perf\n"
		"                        record does; with --archive B.tar, it is\n"
		"                        bundled with its code at the end\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || !v || (v & (v - 1)))
		return -1;
	*out = (size_t)v;
	return 0;
}

static void add_term(struct capture_live_opts *o, const char *term)
{
	size_t l = strlen(o->terms);

	snprintf(o->terms + l, sizeof(o->terms) - l, "%s%s", l ? "," : "",
		 term);
}

static int parse_small(const char *arg, long *v)
{
	char *end;

	*v = strtol(arg, &end, 0);
	return *end || end == arg || *v < 0 || *v > 15 ? -1 : 0;
}

/* --snapshot[=SIZE], --aux-size, --data-size: powers of two. */
static int option_size(struct capture_live_opts *o, int val, const char *arg,
		       FILE *err)
{
	if (val == O_SNAPSHOT) {
		o->lo.snapshot = 1;
		if (arg && parse_size(arg, &o->lo.snapshot_bytes) < 0) {
			fprintf(err, PROG ": --snapshot=SIZE needs a power of two "
				     "(bytes, K or M), not '%s'\n", arg);
			return -1;
		}
		return 1;
	}
	if (parse_size(arg, val == O_AUX ? &o->lo.aux_bytes
					 : &o->lo.data_bytes) < 0) {
		fprintf(err, PROG ": %s needs a power of two (bytes, K "
			     "or M), not '%s'\n",
			val == O_AUX ? "--aux-size" : "--data-size", arg);
		return -1;
	}
	return 1;
}

/* The options that become intel_pt event terms (o->terms). */
static int option_term(struct capture_live_opts *o, int val, const char *arg,
		       FILE *err)
{
	char t[32];
	long v;

	switch (val) {
	case O_CYC:
		add_term(o, "cyc");
		return 1;
	case O_NO_MTC:
		add_term(o, "mtc=0");
		return 1;
	case O_NORETCOMP:
		add_term(o, "noretcomp");
		return 1;
	case O_NO_TSC:
		add_term(o, "tsc=0");
		return 1;
	}
	/* O_CYC_THRESH, O_MTC_PERIOD, O_PSB_PERIOD */
	if (parse_small(arg, &v) < 0) {
		fprintf(err, PROG ": the period options take 0 to 15, "
			     "not '%s'\n", arg);
		return -1;
	}
	snprintf(t, sizeof(t), "%s=%ld",
		 val == O_CYC_THRESH   ? "cyc_thresh"
		 : val == O_MTC_PERIOD ? "mtc_period"
				       : "psb_period",
		 v);
	add_term(o, t);
	return 1;
}

/* --trigger, --start-at, --stop-at, --start-event, --stop-event: lists. */
static int option_probe(struct capture_live_opts *o, int val, const char *arg,
			FILE *err)
{
	const char **list = val == O_TRIGGER       ? o->trigger
			    : val == O_START_AT    ? o->start_at
			    : val == O_STOP_AT     ? o->stop_at
			    : val == O_START_EVENT ? o->start_event
						   : o->stop_event;
	size_t *n = val == O_TRIGGER       ? &o->ntrigger
		    : val == O_START_AT    ? &o->nstart_at
		    : val == O_STOP_AT     ? &o->nstop_at
		    : val == O_START_EVENT ? &o->nstart_event
					   : &o->nstop_event;

	if (*n == CAPTURE_LIVE_PROBES) {
		fprintf(err, PROG ": at most %d of each of --trigger, "
			     "--start-at, --stop-at, --start-event, "
			     "--stop-event\n",
			CAPTURE_LIVE_PROBES);
		return -1;
	}
	list[(*n)++] = arg;
	if (val == O_TRIGGER)
		o->lo.snapshot = 1;
	return 1;
}

/* --trigger-count, --trigger-after, --trigger-then, --trigger-tail. */
static int option_trigger(struct capture_live_opts *o, int val,
			  const char *arg, FILE *err)
{
	static const struct choice thens[] = {
		{"stop", 0, 0},
		{"next", 1, 0},
		{NULL, 0, 0},
	};
	unsigned long long v2;
	char *end;

	switch (val) {
	case O_TRIGGER_COUNT:
		errno = 0;
		o->lo.trigger_count = strtoull(arg, &end, 10);
		if (*end || end == arg || errno || !o->lo.trigger_count ||
		    *arg == '-') {
			fprintf(err, PROG ": --trigger-count needs a count of "
				     "1 or more, not '%s'\n", arg);
			return -1;
		}
		return 1;
	case O_TRIGGER_AFTER:
		o->lo.trigger_after = strtod(arg, &end);
		if (*end || end == arg || !(o->lo.trigger_after >= 0)) {
			fprintf(err, PROG ": --trigger-after needs seconds, "
				     "not '%s'\n", arg);
			return -1;
		}
		return 1;
	case O_TRIGGER_THEN:
		if (choice_find(thens, arg, &o->lo.trigger_next) < 0) {
			fprintf(err, PROG ": --trigger-then takes stop (end "
				     "the capture) or next (count again), "
				     "not '%s'\n", arg);
			return -1;
		}
		return 1;
	}
	/* O_TRIGGER_TAIL */
	errno = 0;
	v2 = strtoull(arg, &end, 0);
	if (*end == 'K' || *end == 'k')
		v2 <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v2 <<= 20, end++;
	if (*end || end == arg || errno || *arg == '-') {
		fprintf(err, PROG ": --trigger-tail needs bytes (K or "
			     "M allowed), not '%s'\n", arg);
		return -1;
	}
	o->lo.trigger_tail = (size_t)v2;
	return 1;
}

int capture_live_option(struct capture_live_opts *o, int val, const char *arg,
			FILE *err)
{
	char *end;

	switch (val) {
	case O_EVENT:
		o->event = arg;
		return 1;
	case O_FILTER:
		o->lo.filter = arg;
		return 1;
	case O_SNAPSHOT:
	case O_AUX:
	case O_DATA:
		return option_size(o, val, arg, err);
	case O_CONTROL:
		o->control = arg;
		return 1;
	case O_CYC:
	case O_NO_MTC:
	case O_NORETCOMP:
	case O_NO_TSC:
	case O_CYC_THRESH:
	case O_MTC_PERIOD:
	case O_PSB_PERIOD:
		return option_term(o, val, arg, err);
	case O_NO_STACKS:
		o->lo.no_stacks = 1;
		return 1;
	case O_DURATION:
		o->duration = strtod(arg, &end);
		if (*end || o->duration <= 0) {
			fprintf(err, PROG ": --duration needs seconds, not "
				     "'%s'\n", arg);
			return -1;
		}
		return 1;
	case O_SYSFS:
		o->lo.sysfs_root = arg;
		return 1;
	case O_PROCFS:
		o->lo.procfs_root = arg;
		return 1;
	case 'w':
	case O_WRITE:
		o->lo.write_path = arg;
		return 1;
	case O_TRIGGER:
	case O_START_AT:
	case O_STOP_AT:
	case O_START_EVENT:
	case O_STOP_EVENT:
		return option_probe(o, val, arg, err);
	case O_TRIGGER_COUNT:
	case O_TRIGGER_AFTER:
	case O_TRIGGER_THEN:
	case O_TRIGGER_TAIL:
		return option_trigger(o, val, arg, err);
	case O_LIST_SYMBOLS:
		o->list_symbols = arg;
		return 1;
	default:
		return 0;
	}
}

static int read_sysctl(const char *procfs, const char *rel)
{
	char path[512];
	FILE *f;
	int v = -100;

	snprintf(path, sizeof(path), "%s/%s", procfs ? procfs : "/proc", rel);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

int capture_live_error(FILE *err, int code, pid_t pid, const char *detail,
		       const char *procfs_root)
{
	int v;

	switch (-code) {
	case STRACE_E_NOPT:
		fprintf(err,
			PROG ": Intel PT is not available (no intel_pt PMU under "
			     "/sys/bus/event_source/devices; most virtual "
			     "machines do not expose it).\n"
			     "Record on a machine with Intel PT:\n"
			     "  perf record --per-thread -e intel_pt//u -o "
			     "perf.data -- CMD      (or -p PID)\n"
			     "then decode it here:\n"
			     "  " PROG " -i perf.data\n");
		return CAPTURE_EXIT_NOTRACE;
	case STRACE_E_PARANOID:
		v = read_sysctl(procfs_root, "sys/kernel/perf_event_paranoid");
		fprintf(err,
			PROG ": kernel.perf_event_paranoid is %d, which does not "
			     "allow tracing with perf events as this user.\n"
			     "Allow it (until reboot) with:\n"
			     "  sudo sysctl -w kernel.perf_event_paranoid=1\n"
			     "or run as root or with CAP_PERFMON.\n",
			v);
		return CAPTURE_EXIT_NOTRACE;
	case STRACE_E_PTRACE_SCOPE:
		v = read_sysctl(procfs_root, "sys/kernel/yama/ptrace_scope");
		fprintf(err,
			PROG ": kernel.yama.ptrace_scope is %d, which does not "
			     "allow attaching to process %d.\n"
			     "Allow it (until reboot) with:\n"
			     "  sudo sysctl -w kernel.yama.ptrace_scope=0\n"
			     "or run as root (scope 1 and 2), or start the "
			     "program under " PROG " -- CMD.\n",
			v, (int)pid);
		return CAPTURE_EXIT_NOTRACE;
	case STRACE_E_NOPID:
		fprintf(err,
			PROG ": no process with pid %d (it may have exited; "
			     "check with: ps -p %d).\n",
			(int)pid, (int)pid);
		return 1;
	case STRACE_E_PERM:
		fprintf(err,
			PROG ": permission denied tracing process %d: it must "
			     "belong to you (or run as root).\n",
			(int)pid);
		return CAPTURE_EXIT_NOTRACE;
	case STRACE_E_AUXMAP:
		fprintf(err,
			PROG ": cannot map the AUX area: the locked-memory "
			     "limit is too small. Use a smaller --aux-size, "
			     "raise kernel.perf_event_mlock_kb, or run as root.\n");
		return CAPTURE_EXIT_NOTRACE;
	case STRACE_E_BADARG:
		fprintf(err, PROG ": %s\n", detail && *detail ? detail
							      : "bad option");
		return 2;
	default:
		fprintf(err, PROG ": live capture failed: %s\n",
			strace_strerror(code));
		return 1;
	}
}

static struct strace_live *g_live;

static void on_signal(int sig)
{
	if (!g_live)
		return;
	if (sig == SIGUSR2)
		strace_live_request_snapshot(g_live);
	else
		strace_live_request_stop(g_live);
}

/* --control's commands (cli/control.h): snapshot, stop, ping. */
static int live_command(void *arg, const char *line, char *reply, size_t len)
{
	struct strace_live *l = arg;

	if (!strcmp(line, "snapshot"))
		strace_live_request_snapshot(l);
	else if (!strcmp(line, "stop"))
		strace_live_request_stop(l);
	else if (strcmp(line, "ping")) {
		snprintf(reply, len, "unknown command '%s': snapshot, stop, ping",
			 line);
		return -1;
	}
	return 0;
}

/* ---------------- --trigger, windows, --list-symbols ---------------- */

/* The objects of pid or of the command argv. Returns 0 or an exit status. */
static int target_objects(const struct capture_live_opts *o, pid_t pid,
			  char **argv, struct strace_objlist *objs, FILE *err)
{
	int rc = pid > 0 ? strace_objlist_pid(objs, o->lo.procfs_root, pid)
			 : strace_objlist_cmd(objs, argv[0]);

	if (rc == -STRACE_E_NOPID)
		return capture_live_error(err, rc, pid, NULL, o->lo.procfs_root);
	if (rc == -ENOENT) {
		fprintf(err, PROG ": %s: no such program in PATH, or not a "
			     "64-bit x86 ELF file: its functions cannot be "
			     "looked up\n", argv[0]);
		return 1;
	}
	if (rc < 0) {
		fprintf(err, PROG ": reading the program's objects: %s\n",
			strerror(-rc));
		return 1;
	}
	return 0;
}

static int print_sym(void *arg, const char *obj, const struct strace_symbol *s,
		     uint64_t vaddr)
{
	void **a = arg;

	fprintf(a[0], "%016llx %8llu %s %s\n", (unsigned long long)vaddr,
		(unsigned long long)s->size, s->name, obj);
	(*(size_t *)a[1])++;
	return 0;
}

int capture_live_list(const struct capture_live_opts *o, pid_t pid,
		      char **argv, FILE *out, FILE *err)
{
	struct strace_objlist objs = {0};
	char why[512];
	size_t n = 0;
	void *a[2] = {out, &n};
	int rc = target_objects(o, pid, argv, &objs, err);

	if (rc) {
		strace_objlist_fini(&objs);
		return rc;
	}
	rc = strace_probe_list(&objs, o->list_symbols, print_sym, a, why,
			       sizeof(why));
	if (rc == -STRACE_E_BADARG) {
		fprintf(err, PROG ": --list-symbols %s\n", why);
		rc = 2;
	} else if (!n) {
		fprintf(err, PROG ": no function of %s or the %zu object%s it "
			     "loads matches '%s'\n",
			objs.n ? objs.v[0] : "the program",
			objs.n ? objs.n - 1 : 0, objs.n == 2 ? "" : "s",
			o->list_symbols);
		rc = 1;
	} else {
		rc = 0;
	}
	strace_objlist_fini(&objs);
	return rc;
}

/* specs into out[]. Returns 0 or an exit status (2: a bad one). */
static int resolve(const struct capture_live_opts *o, const char *opt,
		   const char *const *specs, size_t n,
		   const struct strace_objlist *objs, pid_t pid,
		   struct strace_probe *out, FILE *err)
{
	char why[6144];

	for (size_t i = 0; i < n; i++) {
		const struct strace_probe *p = &out[i];

		if (strace_probe_resolve(specs[i], objs, o->lo.procfs_root, pid,
					 &out[i], why, sizeof(why)) < 0) {
			fprintf(err, PROG ": %s %s\n", opt, why);
			return 2;
		}
		if (!o->quiet)
			fprintf(err,
				PROG ": %s %s: %s%s at 0x%llx of %s (file "
				     "offset 0x%llx)\n",
				opt, specs[i], p->ret ? "the return of " : "",
				p->name[0] ? p->name : "the instruction",
				(unsigned long long)p->vaddr, p->path,
				(unsigned long long)p->off);
	}
	return 0;
}

/* A tracepoint GROUP:NAME (perf probe makes them) as an attr. */
static int tracepoint(const char *spec, struct perf_event_attr *a, FILE *err)
{
	static const char *const roots[] = {"/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing"};
	const char *colon = strchr(spec, ':');
	unsigned long long id = 0;

	if (!colon || colon == spec || !colon[1] || strchr(colon + 1, ':') ||
	    strchr(spec, '/') || strstr(spec, "..")) {
		fprintf(err, PROG ": '%s' is not a tracepoint: give GROUP:NAME "
			     "as perf list prints it (perf probe -x PROG FUNC "
			     "makes probe_PROG:FUNC)\n", spec);
		return 2;
	}
	for (size_t i = 0; i < 2 && !id; i++) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", roots[i],
			 (int)(colon - spec), spec, colon + 1);
		if ((f = fopen(path, "re"))) {
			if (fscanf(f, "%llu", &id) != 1)
				id = 0;
			fclose(f);
		}
	}
	if (!id) {
		fprintf(err, PROG ": no tracepoint %s (looked in "
			     "/sys/kernel/tracing/events, as root; perf list "
			     "tracepoint lists them)\n", spec);
		return 2;
	}
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = id;
	a->sample_period = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	return 0;
}

/* Where the kernel has no AUX pause/resume: what expresses the window. */
#define NO_AUX_ACTION                                                          \
	PROG ": this kernel has no AUX pause and resume (Linux 6.13 added "    \
	     "them): "

static int windows_fallback(struct capture_live_opts *o, size_t nstart,
			    struct strace_probe *stops, size_t nstop,
			    char *filter, size_t flen, FILE *err)
{
	int ret_stop = 0;

	for (size_t i = 0; i < nstop; i++)
		ret_stop |= stops[i].ret;
	if (o->nstart_event || o->nstop_event) {
		fprintf(err, NO_AUX_ACTION "--start-event and --stop-event "
					   "need them; use --trigger, or record "
					   "where the kernel is newer\n");
		return 2;
	}
	if (!nstart && !ret_stop && !o->lo.filter) {
		/* a TraceStop range on each function: the trace stops for
		 * good at the first one, as a pause with no resume does */
		size_t at = 0;

		for (size_t i = 0; i < nstop && at < flen; i++)
			at += (size_t)snprintf(filter + at, flen - at,
					       "%stracestop 0x%llx/0x%llx@%s",
					       i ? "," : "",
					       (unsigned long long)stops[i].off,
					       (unsigned long long)(stops[i].size
									    ? stops[i].size
									    : 1),
					       stops[i].path);
		if (at >= flen) {
			fprintf(err, PROG ": --stop-at: the paths are too long "
				     "for an address filter\n");
			return 2;
		}
		o->lo.filter = filter;
		fprintf(err, NO_AUX_ACTION "--stop-at becomes the address "
					   "filter '%s' (the trace stops at the "
					   "first call, as it would with them)\n",
			filter);
		return 0;
	}
	if (nstop && !o->ntrigger) {
		/* the trace before each stop, as snapshots */
		o->lo.triggers = stops;
		o->lo.ntriggers = nstop;
		o->lo.snapshot = 1;
		o->lo.trigger_next = 1;
		fprintf(err, NO_AUX_ACTION "each --stop-at takes a snapshot "
					   "instead (--snapshot --trigger STOP "
					   "--trigger-then next): it holds what "
					   "ran before the stop as far back as "
					   "the AUX area reaches, %sfrom "
					   "--start-at\n",
			nstart ? "not only " : "");
		return 0;
	}
	fprintf(err, NO_AUX_ACTION "a trace that starts at --start-at cannot "
				   "be made here; give a --stop-at (each "
				   "becomes a snapshot), use --trigger, or "
				   "--filter 'filter FUNC @OBJ' to trace only "
				   "inside a function\n");
	return 2;
}

/*
 * Resolve --trigger, --start-at and --stop-at, and set up the session's
 * triggers and windows (or their fallback). *probes: the probes (freed by
 * the caller), *wins: the windows. Returns 0 or an exit status.
 */
static int setup_probes(struct capture_live_opts *o, pid_t pid, char **argv,
			struct strace_probe **probes,
			struct strace_live_window **wins, char *filter,
			size_t flen, FILE *err)
{
	size_t nt = o->ntrigger, ns = o->nstart_at, ne = o->nstop_at;
	size_t nw = ns + ne + o->nstart_event + o->nstop_event, k = 0;
	struct strace_objlist objs = {0};
	struct strace_probe *p;
	struct strace_uprobe_pmu up;
	int rc;

	if (!nt && !nw)
		return 0;
	p = *probes = calloc(nt + ns + ne, sizeof(*p));
	*wins = calloc(nw ? nw : 1, sizeof(**wins));
	if (!p || !*wins) {
		fprintf(err, PROG ": out of memory\n");
		return 1;
	}
	if (nt + ns + ne &&
	    ((rc = target_objects(o, pid, argv, &objs, err)) ||
	     (rc = resolve(o, "--trigger", o->trigger, nt, &objs, pid, p, err)) ||
	     (rc = resolve(o, "--start-at", o->start_at, ns, &objs, pid, p + nt,
			   err)) ||
	     (rc = resolve(o, "--stop-at", o->stop_at, ne, &objs, pid,
			   p + nt + ns, err)))) {
		strace_objlist_fini(&objs);
		return rc;
	}
	strace_objlist_fini(&objs);
	o->lo.triggers = p;
	o->lo.ntriggers = nt;
	if (!nw)
		return 0;
	if (!strace_live_aux_action(o->lo.sys))
		return windows_fallback(o, ns, p + nt + ns, ne, filter, flen,
					err);
	if (ns + ne && strace_uprobe_pmu_load(o->lo.sysfs_root, &up) < 0) {
		fprintf(err, PROG ": --start-at and --stop-at need the kernel's "
			     "uprobe PMU (CONFIG_UPROBE_EVENTS), which this one "
			     "does not have; --start-event and --stop-event "
			     "take tracepoints\n");
		return 2;
	}
	for (size_t i = 0; i < ns + ne; i++, k++) {
		strace_probe_uprobe_attr(&up, &p[nt + i], &(*wins)[k].attr);
		(*wins)[k].resume = i < ns;
	}
	for (size_t i = 0; i < o->nstart_event + o->nstop_event; i++, k++) {
		int start = i < o->nstart_event;

		if ((rc = tracepoint(start ? o->start_event[i]
					   : o->stop_event[i - o->nstart_event],
				     &(*wins)[k].attr, err)))
			return rc;
		(*wins)[k].resume = start;
	}
	o->lo.windows = *wins;
	o->lo.nwindows = nw;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run of capture_live_run(): what the hooks of strace_live_capture()
 * (pt_backend/pipeline/pipeline.h) need. */
struct live_run {
	struct capture_live_opts *o;
	struct strace_live_stats *stats;
	FILE *err;
	struct control ctl;
	struct sigaction old_int, old_term, old_usr2;
	double t0;
	char terms[1024], filter[8192];
};

/* The perf event: --event's terms first, then the options' terms
 * override them. */
static void live_event(struct live_run *r)
{
	struct capture_live_opts *o = r->o;

	if (o->event && o->terms[0]) {
		if (!strncmp(o->event, "intel_pt/", 9) &&
		    strchr(o->event + 9, '/')) {
			/* intel_pt/a,b/u + terms -> intel_pt/a,b,terms/u */
			const char *close = strchr(o->event + 9, '/');

			snprintf(r->terms, sizeof(r->terms), "%.*s%s%s%s",
				 (int)(close - o->event), o->event,
				 close > o->event + 9 ? "," : "", o->terms,
				 close);
		} else {
			snprintf(r->terms, sizeof(r->terms), "%s,%s", o->event,
				 o->terms);
		}
		o->lo.event = r->terms;
	} else {
		o->lo.event = o->event ? o->event : o->terms;
	}
}

/* A process that is not there: say so first, then whether Intel PT
 * would have been there, so that one run tells both. */
static int live_no_process(const struct capture_live_opts *o, pid_t pid,
			   FILE *err)
{
	int status = capture_live_error(err, -STRACE_E_NOPID, pid, NULL,
					o->lo.procfs_root);

	if (strace_live_pt_present(o->lo.sysfs_root) == -STRACE_E_NOPT)
		fprintf(err,
			PROG ": also, Intel PT is not available on this "
			     "machine (no intel_pt PMU under "
			     "/sys/bus/event_source/devices): trace the "
			     "process where it is, with perf record -e "
			     "intel_pt//u -p PID, and decode that file "
			     "here with " PROG " -i\n");
	return status;
}

/* The session is open: the caller's hook, the control FIFO, the
 * signals. Returns 0 or an exit status. */
static int live_opened(void *arg, struct strace_live *l)
{
	struct live_run *r = arg;
	struct capture_live_opts *o = r->o;
	struct sigaction sa;

	if (o->opened)
		o->opened(o->opened_arg, l);
	if (o->control) {
		char msg[PATH_MAX + 256];

		if (control_open(&r->ctl, o->control, PROG, msg,
				 sizeof(msg)) < 0) {
			fprintf(r->err, PROG ": --control %s\n", msg);
			return 2;
		}
	}
	g_live = l;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &r->old_int);
	sigaction(SIGTERM, &sa, &r->old_term);
	sigaction(SIGUSR2, &sa, &r->old_usr2);
	return 0;
}

/* Each turn of the loop: the control FIFO's commands, then whether the
 * duration is over. */
static int live_turn(void *arg, struct strace_live *l)
{
	struct live_run *r = arg;

	control_poll(&r->ctl, live_command, l);
	return r->o->duration > 0 && now_s() - r->t0 >= r->o->duration;
}

static int live_failed(void *arg, int code, pid_t pid, const char *detail)
{
	struct live_run *r = arg;

	return capture_live_error(r->err, code, pid, detail,
				  r->o->lo.procfs_root);
}

/* The counts into *stats (may be NULL) and, unless quiet, on err. */
static void live_report(struct live_run *r, const struct strace_live_stats *s)
{
	const struct capture_live_opts *o = r->o;
	struct strace_live_stats st = *s;

	if (r->stats)
		*r->stats = st;
	if (o->quiet)
		return;
	fprintf(r->err,
		PROG ": %llu thread%s, %llu bytes of PT, %llu "
		     "sideband records, %llu lost records, %llu "
		     "AUX truncations, %llu snapshots\n",
		(unsigned long long)st.threads, st.threads == 1 ? "" : "s",
		(unsigned long long)st.aux_bytes,
		(unsigned long long)st.records,
		(unsigned long long)st.lost_records,
		(unsigned long long)st.truncated,
		(unsigned long long)st.snapshots);
	if (o->lo.ntriggers)
		fprintf(r->err,
			PROG ": triggers (%s): %llu hit%s, %llu before "
			     "--trigger-after, %llu the kernel could not "
			     "report; %llu snapshot%s taken by them%s\n",
			st.trigger_bp ? "hardware breakpoints" : "uprobes",
			(unsigned long long)st.trigger_hits,
			st.trigger_hits == 1 ? "" : "s",
			(unsigned long long)st.trigger_early,
			(unsigned long long)st.trigger_lost,
			(unsigned long long)st.trigger_snapshots,
			st.trigger_snapshots == 1 ? "" : "s",
			st.trigger_snapshots ? ""
					     : " (none ran: the snapshot is "
					       "of the end)");
}

/* The end: the counts, the signals and the control FIFO as they were. */
static void live_ended(void *arg, const struct strace_live_stats *st)
{
	struct live_run *r = arg;

	live_report(r, st);
	sigaction(SIGINT, &r->old_int, NULL);
	sigaction(SIGTERM, &r->old_term, NULL);
	sigaction(SIGUSR2, &r->old_usr2, NULL);
	g_live = NULL;
	control_close(&r->ctl);
}

int capture_live_run(struct capture_live_opts *o, pid_t pid, char **argv,
		     const struct strace_live_cb *cb,
		     struct strace_live_stats *stats, FILE *err)
{
	struct live_run r = {.o = o, .stats = stats, .err = err};
	struct strace_live_hooks h = {
		.opened = live_opened,
		.turn = live_turn,
		.failed = live_failed,
		.ended = live_ended,
		.arg = &r,
	};
	struct strace_probe *probes = NULL;
	struct strace_live_window *wins = NULL;
	int status;

	r.t0 = now_s();
	live_event(&r);
	if (pid > 0 && strace_live_check_access(o->lo.procfs_root, pid, 1) ==
			       -STRACE_E_NOPID)
		return live_no_process(o, pid, err);
	status = setup_probes(o, pid, argv, &probes, &wins, r.filter,
			      sizeof(r.filter), err);
	if (!status)
		status = strace_live_capture(&o->lo, pid, argv, cb, &h);
	free(probes);
	free(wins);
	return status;
}
