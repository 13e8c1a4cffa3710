/* SPDX-License-Identifier: MIT */
/*
 * dlfilter/dlfilter.c - libstrace_dlf.so: the perf dlfilter entry points.
 *
 *   perf script --itrace=b --dlfilter libstrace_dlf.so [--dlarg ARG]...
 *
 * Only perf's entry points are exported (dlfilter/exports.map); the work is
 * done by dlfilter/dlf.c. This file adapts perf's structures, checking the
 * sizes perf passes so that perf 6.1 and newer work alike.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlf.h"
#include "decoder/decoder.h"
#include "perf_abi.h"
#include "strace/plugin.h"

#define EXPORT __attribute__((visibility("default")))
#define PROG "libstrace_dlf"
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* perf copies its function table here when it loads us. */
EXPORT struct perf_dlfilter_fns perf_dlfilter_fns;

EXPORT int start(void **data, void *ctx);
EXPORT int stop(void *data, void *ctx);
EXPORT int filter_event_early(void *data,
			      const struct perf_dlfilter_sample *sample,
			      void *ctx);
EXPORT int filter_event(void *data, const struct perf_dlfilter_sample *sample,
			void *ctx);
EXPORT const char *filter_description(const char **long_description);

struct state {
	struct strace_dlf *d;
	int print, late, stats;
	int auto_path; /* the ring's path was made, not given */
	int bad_size;  /* a sample too small was reported */
	/* the event of the last sample, and whether it is perf's
	 * "branches" (--itrace=b): others (instructions with --itrace=i,
	 * ptwrite, power events) are no branches, whatever their flags */
	const void *last_attr;
	int last_is_branches;
	int last_is_ptwrite; /* perf's "ptwrite" (--itrace=w) */
	uint64_t not_branches;
	/* plugin=: handed each batch before the ring publishes it */
	struct strace_plugins *plugins;
	struct strace_names *names;
};

static void plugin_tap(void *arg, const struct strace_event *ev, size_t n)
{
	/* after a plugin's stop, the ring goes on without the plugins */
	strace_plugins_dispatch(arg, ev, n);
}

/* Every plugin's fini, while the ring (their names) is still mapped. */
static void plugins_end(struct state *st)
{
	if (st->plugins)
		strace_ring_set_tap(strace_dlf_ring(st->d), NULL, NULL);
	strace_plugins_free(st->plugins);
	strace_names_free(st->names);
	st->plugins = NULL;
	st->names = NULL;
}

static int plugins_load(struct state *st, const struct strace_dlf_opts *o)
{
	struct strace_plugins_opts po = {.size = sizeof(po),
					 .host = "dlfilter"};
	struct strace_ring *ring = strace_dlf_ring(st->d);
	char msg[1024];

	if (!o->nplugins)
		return 0;
	if (strace_names_new(ring, &st->names) < 0 ||
	    (po.names = st->names, strace_plugins_new(&po, &st->plugins) < 0)) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	for (int i = 0; i < o->nplugins; i++)
		if (strace_plugins_load(st->plugins, o->plugins[i], msg,
					sizeof(msg)) < 0) {
			fprintf(stderr, PROG ": --dlarg plugin=: %s\n", msg);
			return -1;
		}
	strace_ring_set_tap(ring, plugin_tap, st->plugins);
	return 0;
}

static int al_ok(const struct perf_dlfilter_al *al)
{
	return al && al->size >= DLF_AL_MIN_SIZE;
}

static void al_to_loc(const struct perf_dlfilter_al *al, uint64_t addr,
		      struct strace_dlf_loc *out)
{
	memset(out, 0, sizeof(*out));
	if (!al->dso)
		return;
	out->dso = al->dso;
	out->bias = addr - al->addr;
	if (al->buildid && al->buildid_size) {
		out->buildid = al->buildid;
		out->buildid_size = al->buildid_size;
	}
	if (al->sym) {
		out->sym = al->sym;
		out->sym_start = out->bias + al->sym_start;
		out->sym_size = al->sym_end > al->sym_start
					? al->sym_end - al->sym_start
					: 0;
	}
}

static int host_resolve(void *ctx, int which, uint64_t addr,
			struct strace_dlf_loc *out)
{
	const struct perf_dlfilter_al *al = NULL;

	if (which == STRACE_DLF_IP && perf_dlfilter_fns.resolve_ip)
		al = perf_dlfilter_fns.resolve_ip(ctx);
	else if (which == STRACE_DLF_ADDR && perf_dlfilter_fns.resolve_addr)
		al = perf_dlfilter_fns.resolve_addr(ctx);
	if (al_ok(al)) {
		al_to_loc(al, addr, out);
		return 0;
	}
	if (!perf_dlfilter_fns.resolve_address)
		return -1;
	/* any other address (or addr when it does not correlate) */
	struct perf_dlfilter_al tmp;
	memset(&tmp, 0, sizeof(tmp));
	tmp.size = sizeof(tmp);
	if (perf_dlfilter_fns.resolve_address(ctx, addr, &tmp) != 0)
		return -1;
	if (al_ok(&tmp))
		al_to_loc(&tmp, addr, out);
	/* the core copies the names before the next call into perf, and
	 * perf's DSO and symbol names outlive the map references that
	 * al_cleanup drops */
	if (perf_dlfilter_fns.al_cleanup)
		perf_dlfilter_fns.al_cleanup(ctx, &tmp);
	return al_ok(&tmp) ? 0 : -1;
}

static const char *host_comm(void *ctx)
{
	const struct perf_dlfilter_al *al;

	if (!perf_dlfilter_fns.resolve_ip)
		return NULL;
	al = perf_dlfilter_fns.resolve_ip(ctx);
	if (!al || al->size < DLF_AL_COMM_END)
		return NULL;
	return al->comm;
}

static long host_code(void *ctx, uint64_t ip, void *buf, size_t len)
{
	if (!perf_dlfilter_fns.object_code)
		return -1;
	return perf_dlfilter_fns.object_code(ctx, ip, buf, (uint32_t)len);
}

static const struct strace_dlf_host host = {host_resolve, host_comm,
					    host_code};

/* In lossless mode perf waits for the readers: say so, once. */
static void on_wait(void *arg, const struct strace_ring_wait *w)
{
	static atomic_int said;
	static const struct strace_ring_wait_words words = {
		.waits = "perf waits",
		.no_reader = "drop --dlarg mode=lossless: the archive is the "
			     "default",
		.slowest = "end that reader, or use --dlarg mode=archive or "
			   "mode=flight",
	};
	char msg[PATH_MAX * 2 + 512];

	if (atomic_exchange(&said, 1))
		return;
	strace_ring_wait_message(msg, sizeof(msg), strace_ring_path(arg), w,
				 &words);
	fprintf(stderr, PROG ": %s\n", msg);
}

int start(void **data, void *ctx)
{
	struct strace_dlf_opts o;
	struct state *st;
	char err[512];
	char **argv = NULL;
	int argc = 0, auto_path, rc;

	*data = NULL;
	if (perf_dlfilter_fns.args)
		argv = perf_dlfilter_fns.args(ctx, &argc);
	if (!argv)
		argc = 0;
	if (strace_dlf_parse_args(&o, argc, (const char *const *)argv, err,
				  sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	rc = strace_dlf_new(&o, &st->d, &auto_path);
	if (rc < 0) {
		const char *p = o.ring_path ? o.ring_path : getenv("STRACE_RING");
		fprintf(stderr, PROG ": cannot create the ring%s%s: %s%s\n",
			p ? " " : "", p ? p : "", strace_strerror(rc),
			rc == -EEXIST ? " (remove it, or pass --dlarg "
					"ring=ANOTHER_PATH)"
				      : "");
		free(st);
		return -1;
	}
	if (auto_path)
		fprintf(stderr, PROG ": writing events to %s\n",
			strace_dlf_ring_path(st->d));
	strace_ring_set_wait_notice(strace_dlf_ring(st->d), on_wait,
				    strace_dlf_ring(st->d));
	if (plugins_load(st, &o) < 0) {
		plugins_end(st);
		unlink(strace_dlf_ring_path(st->d)); /* ours, and empty */
		strace_dlf_free(st->d);
		free(st);
		return -1;
	}
	st->print = o.print;
	st->late = o.late;
	st->stats = o.stats;
	st->auto_path = auto_path;
	*data = st;
	return 0;
}

/* A ptwrite sample (rare: out of line): its raw data is perf's struct
 * perf_synth_intel_ptwrite less its 4 bytes of padding, the flags (bit 0:
 * the IP is the ptwrite instruction's, from a FUP) and the payload. */
static __attribute__((noinline)) int
ptwrite(struct state *st, const struct perf_dlfilter_sample *sample,
	void *ctx)
{
	struct strace_dlf_sample s = {0};
	const uint8_t *raw;
	uint32_t fl;
	uint64_t payload;
	int rc;

	if (sample->size < offsetof(struct perf_dlfilter_sample, raw_data) +
				   sizeof(sample->raw_data) ||
	    sample->raw_size < 12 || !sample->raw_data) {
		st->not_branches++;
		return 1;
	}
	raw = sample->raw_data;
	memcpy(&fl, raw, 4);
	memcpy(&payload, raw + 4, 8);
	s.ip = sample->ip;
	s.time = sample->time;
	s.pid = (uint32_t)sample->pid;
	s.tid = (uint32_t)sample->tid;
	s.cpu1 = sample->cpu >= 0 ? (uint32_t)sample->cpu + 1 : 0;
	rc = strace_dlf_ptwrite(st->d, &s, payload, fl & 1, &host, ctx);
	if (rc < 0) {
		fprintf(stderr, PROG ": cannot write to the ring %s: %s\n",
			strace_dlf_ring_path(st->d), strace_strerror(rc));
		return rc;
	}
	return st->print && rc > 0 ? 0 : 1;
}

static int work(struct state *st, const struct perf_dlfilter_sample *sample,
		void *ctx)
{
	struct strace_dlf_sample s;
	int rc;

	if (__builtin_expect(sample->size < DLF_SAMPLE_MIN_SIZE, 0)) {
		if (!st->bad_size)
			fprintf(stderr,
				PROG ": perf passed a %u-byte sample, less than "
				     "the %zu bytes this filter reads: not a "
				     "perf it knows\n",
				sample->size, (size_t)DLF_SAMPLE_MIN_SIZE);
		st->bad_size = 1;
		return -1;
	}
	/* Field by field, each load as wide as perf's store: perf has just
	 * written the sample, and a wider load spanning several of its
	 * stores (what the compiler does for a plain copy) stalls on store
	 * forwarding - it cost 5 ns a sample. */
	if (perf_dlfilter_fns.attr) {
		const void *attr = perf_dlfilter_fns.attr(ctx);
		if (attr != st->last_attr) {
			const struct perf_event_attr *a = attr;
			st->last_attr = attr;
			st->last_is_branches =
				!a || (a->type == PERF_TYPE_HARDWARE &&
				       a->config ==
					       PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
			st->last_is_ptwrite =
				a && a->type == DLF_PERF_TYPE_SYNTH &&
				a->config == DLF_SYNTH_INTEL_PTWRITE;
		}
		if (__builtin_expect(st->last_is_ptwrite, 0))
			return ptwrite(st, sample, ctx);
		if (!st->last_is_branches) {
			st->not_branches++;
			return 1;
		}
	}
	s.ip = LOAD(sample->ip);
	s.addr = LOAD(sample->addr);
	s.time = LOAD(sample->time);
	s.pid = (uint32_t)LOAD(sample->pid);
	s.tid = (uint32_t)LOAD(sample->tid);
	s.flags = LOAD(sample->flags);
	s.cpu1 = LOAD(sample->cpu) >= 0 ? (uint32_t)LOAD(sample->cpu) + 1 : 0;
	rc = strace_dlf_sample(st->d, &s, &host, ctx);
	if (rc < 0) {
		fprintf(stderr, PROG ": cannot write to the ring %s: %s\n",
			strace_dlf_ring_path(st->d), strace_strerror(rc));
		return rc;
	}
	return st->print && rc > 0 ? 0 : 1;
}

int filter_event_early(void *data, const struct perf_dlfilter_sample *sample,
		       void *ctx)
{
	struct state *st = data;
	if (!st)
		return 1;
	if (st->late)
		return 0; /* perf's own filters first; work in filter_event */
	return work(st, sample, ctx);
}

int filter_event(void *data, const struct perf_dlfilter_sample *sample,
		 void *ctx)
{
	struct state *st = data;
	if (!st)
		return 1;
	if (!st->late)
		return 0; /* kept by filter_event_early: print it */
	return work(st, sample, ctx);
}

/*
 * The summary's last line: where the ring is and what it holds (rings made
 * without ring=PATH pile up in /dev/shm, in memory, until removed).
 */
static void say_ring(const char *path)
{
	char msg[PATH_MAX + 256];

	if (!path || strace_ring_describe(path, msg, sizeof(msg)) < 0)
		return;
	fprintf(stderr, PROG ": %s\n", msg);
}

int stop(void *data, void *ctx)
{
	struct state *st = data;
	struct strace_dlf_stats s;
	char *path;
	int rc;

	(void)ctx;
	if (!st)
		return 0;
	strace_dlf_finish(st->d);
	plugins_end(st);
	strace_dlf_stats(st->d, &s);
	if (st->stats)
		fprintf(stderr,
			PROG ": %llu samples, %llu events, %llu gaps, %llu "
			     "checked, %llu unchecked, %llu thread%s, %llu "
			     "DSOs, %llu symbols, %llu address and %llu block "
			     "misses, %llu memo hits\n",
			(unsigned long long)s.samples,
			(unsigned long long)s.events,
			(unsigned long long)s.gaps,
			(unsigned long long)s.checked,
			(unsigned long long)s.unchecked,
			(unsigned long long)s.threads,
			s.threads == 1 ? "" : "s",
			(unsigned long long)s.dsos,
			(unsigned long long)s.symbols,
			(unsigned long long)s.addr_misses,
			(unsigned long long)s.block_misses,
			(unsigned long long)s.memo_hits);
	if (st->stats)
		fprintf(stderr,
			PROG ": block cache: %llu DSO files read, %llu "
			     "rebuilt (stale or damaged), %llu written\n",
			(unsigned long long)s.cache_loaded,
			(unsigned long long)s.cache_rebuilt,
			(unsigned long long)s.cache_written);
	if (strace_block_engine_misses())
		fprintf(stderr, PROG ": error: %s: no branch could be checked "
				"(apt-get install libcapstone4)\n",
			strace_strerror(-STRACE_E_NOCAPSTONE));
	if (s.cache_write_errors)
		fprintf(stderr,
			PROG ": warning: %llu block cache files could not be "
			     "written (the next run decodes their blocks "
			     "again; make $XDG_CACHE_HOME/strace writable, or "
			     "give --dlarg no-cache)\n",
			(unsigned long long)s.cache_write_errors);
	else if (s.gaps)
		fprintf(stderr,
			PROG ": %llu discontinuities in perf's branches; "
			     "marked as error events in the ring\n",
			(unsigned long long)s.gaps);
	if (!s.samples && (s.ignored || st->not_branches))
		fprintf(stderr,
			PROG ": perf gave no branch samples (%llu samples of "
			     "other kinds: instructions, power or ptwrite "
			     "events), so the ring holds no flow; run perf "
			     "script with --itrace=b\n",
			(unsigned long long)(s.ignored + st->not_branches));
	else if (s.samples && !s.others)
		fprintf(stderr,
			PROG ": perf gave %llu branch samples, none of them a "
			     "return or a jump: it was not asked for every "
			     "branch (its default --itrace gives calls only), "
			     "so the ring lacks them; run perf script with "
			     "--itrace=b\n",
			(unsigned long long)s.samples);
	/* Said once the ring is complete, which is after it is freed. */
	path = st->stats || st->auto_path
		       ? strdup(strace_dlf_ring_path(st->d))
		       : NULL;
	rc = strace_dlf_free(st->d);
	free(st);
	if (rc < 0) {
		fprintf(stderr, PROG ": finishing the ring: %s\n",
			strace_strerror(rc));
		free(path);
		return -1;
	}
	say_ring(path);
	free(path);
	return 0;
}

const char *filter_description(const char **long_description)
{
	if (long_description)
		*long_description =
			"Turns perf's decoded branches (--itrace=b) into strace "
			"events in a shared ring, read with ptrace-read.\n"
			"--dlarg ring=PATH, mode=lossless|flight|archive, "
			"capacity=N, all-branches, types=PATTERNS, print, late, "
			"stats, no-check, exact-times, plugin=FILE.so[:ARGS], "
			"no-cache, names=plain|perf";
	return "branches -> strace event ring";
}
