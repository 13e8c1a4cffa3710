/* SPDX-License-Identifier: MIT */
/*
 * dlfilter/dlf.h - the logic of libstrace_dlf.so, independent of perf:
 * perf's decoded branch samples in, strace events out, into a ring.
 *
 * The perf glue (dlfilter/dlfilter.c) turns perf's structures into the
 * plain ones below and lends its functions through struct strace_dlf_host;
 * unit tests drive the same code with a fake host (libstrace_dlfcore.a).
 *
 * Events are those `ptrace-capture -i` writes for the same perf.data (see
 * docs/howto-dlfilter.md for the mapping of perf's branch flags and for
 * what differs): DSO, PROCESS/THREAD and SYMBOL definitions through the
 * ring's string table, each before the first event that needs it; calls,
 * returns, jumps between symbols, syscalls/sysrets, interrupts, trace
 * begin/end. A sample whose source address does not follow from the
 * previous branch target (checked on Capstone block summaries cached by
 * DSO and offset) becomes an error event (STRACE_E_DESYNC) followed by a
 * trace_begin with reason "error": the gap is shown, not hidden.
 *
 * Threading: one struct strace_dlf belongs to one thread (perf script is
 * single-threaded). Errors: >= 0 ok, -errno, -STRACE_E_*.
 */
#ifndef DLFILTER_DLF_H
#define DLFILTER_DLF_H

#include <stddef.h>
#include <stdint.h>

#include "strace/event.h"
#include "strace/ring.h"

struct strace_dlf_opts {
	size_t size;           /* sizeof(struct strace_dlf_opts) */
	const char *ring_path; /* NULL: $STRACE_RING, else an automatic name */
	int mode;              /* enum strace_ring_mode (default ARCHIVE) */
	uint64_t capacity;     /* ring events, power of two; 0: default */
	int all_branches;      /* keep jumps inside one symbol (flag INTRA) */
	int print;             /* let perf print samples that made events */
	int late;              /* work in filter_event, after perf's filters */
	int stats;             /* a summary on stderr at the end */
	int no_check;          /* skip the continuity check */
	int exact_times;       /* keep perf's times: no spreading between
				* timing packets by instruction count */
	int has_types;
	struct strace_typeset types; /* when has_types */
	const char *plugins[16]; /* plugin=FILE.so[:ARGS], in order */
	int nplugins;
	/* The persistent block cache (docs/cache.md): summaries of each DSO
	 * with a build-id kept in CACHE_DIR/BUILDID.10000.blocks (the
	 * dlfilter's own: its blocks end where perf's code reads do).
	 * NULL: the default directory, unless no_cache (no-cache). */
	const char *cache_dir;
	int no_cache;
	/* names=perf: functions named as perf names them. By default
	 * (names=plain) as ptrace-capture names them, by the rules of
	 * docs/stacks.md ("Names"), from each DSO's own file; perf's names
	 * only where that file cannot be read. */
	int perf_names;
};

/*
 * strace_dlf_parse_args() - fill opts from --dlarg strings: ring=PATH,
 * mode=lossless|flight|archive, capacity=N, all-branches, types=PATTERNS,
 * print, late, stats, no-check, exact-times, plugin=FILE.so[:ARGS]
 * (repeatable), no-cache, names=plain|perf. The strings must outlive opts
 * (ring=).
 * Returns 0, or -EINVAL with a message in err (errlen bytes).
 */
int strace_dlf_parse_args(struct strace_dlf_opts *opts, int argc,
			  const char *const *argv, char *err, size_t errlen);

/* What perf knows about one address. */
struct strace_dlf_loc {
	const char *dso;    /* path or name of the object; NULL: no map */
	uint64_t bias;      /* run-time address - address in the DSO */
	const char *sym;    /* function symbol; NULL: none */
	uint64_t sym_start; /* run-time address of the symbol */
	uint64_t sym_size;  /* bytes */
	const uint8_t *buildid; /* the object's, NULL: none known */
	uint32_t buildid_size;
};

/* Which address of the sample strace_dlf_host.resolve is asked about. */
enum strace_dlf_which {
	STRACE_DLF_IP = 0,   /* the sample's ip (perf's resolve_ip) */
	STRACE_DLF_ADDR = 1, /* the sample's addr (resolve_addr) */
	STRACE_DLF_OTHER = 2 /* any address (resolve_address) */
};

/*
 * Functions of the host (perf), valid during strace_dlf_sample(). Strings
 * they return need to stay valid only until the next host call: the core
 * copies what it keeps.
 */
struct strace_dlf_host {
	/* Returns 0 and *out, or -1 when perf cannot resolve addr at all. */
	int (*resolve)(void *ctx, int which, uint64_t addr,
		       struct strace_dlf_loc *out);
	/* The command name of the sample's thread, or NULL. */
	const char *(*comm)(void *ctx);
	/* Copies up to len code bytes at ip; returns the count or -1. */
	long (*code)(void *ctx, uint64_t ip, void *buf, size_t len);
};

/* A branch sample, as perf decoded it. */
struct strace_dlf_sample {
	uint64_t ip;   /* branch source; 0 for "tr strt" */
	uint64_t addr; /* branch target; 0 for "tr end" */
	uint64_t time; /* perf time, ns */
	uint32_t pid, tid;
	uint32_t flags; /* DLF_FLAG_* (perf's PERF_DLFILTER_FLAG_*) */
	uint32_t cpu1;  /* the CPU + 1; 0: not known (a per-thread buffer) */
};

struct strace_dlf_stats {
	uint64_t samples;   /* branch samples seen */
	uint64_t ignored;   /* samples that are no branch (--itrace=i...) */
	uint64_t ptwrites;  /* ptwrite samples (--itrace=w) */
	uint64_t others;    /* branch samples that are neither calls nor
			     * trace begins and ends: returns and jumps; 0
			     * after many samples means perf was not asked
			     * for every branch (no --itrace=b) */
	uint64_t events;    /* events written, definitions included */
	uint64_t gaps;      /* discontinuities found by the check */
	uint64_t checked;   /* samples whose source was checked and followed */
	uint64_t unchecked; /* could not be checked (no code, too far) */
	uint64_t addr_misses;  /* addresses resolved through perf */
	uint64_t block_misses; /* blocks decoded with Capstone */
	uint64_t memo_hits;    /* samples served by the memo of branches */
	uint64_t renames;      /* threads renamed (exec): caches forgotten */
	uint64_t threads, symbols, dsos;
	/* the persistent block cache, per DSO with a build-id */
	uint64_t cache_loaded, cache_rebuilt, cache_written,
		cache_write_errors;
};

struct strace_dlf;

/*
 * strace_dlf_new() - create the ring (opts->ring_path, $STRACE_RING or an
 * automatic /dev/shm name) and a writer. *auto_path is set when the name
 * was chosen here (the caller should show it); opts (NULL: defaults) are
 * loaded by the rule of strace/opts.h. Returns 0 and *out, -EEXIST when
 * the ring file exists, -STRACE_E_BADARG when opts break that rule,
 * -STRACE_E_*, -errno.
 */
int strace_dlf_new(const struct strace_dlf_opts *opts, struct strace_dlf **out,
		   int *auto_path);

/* strace_dlf_ring_path() - the ring's file name. */
const char *strace_dlf_ring_path(const struct strace_dlf *d);

/* strace_dlf_ring() - the ring itself (to set its wait notice). */
struct strace_ring *strace_dlf_ring(const struct strace_dlf *d);

/*
 * strace_dlf_sample() - one sample. Returns 1 when it produced a flow
 * event that passed the type filter (perf may print it), 0 when not,
 * or a negative error (the ring refused the events).
 */
int strace_dlf_sample(struct strace_dlf *d, const struct strace_dlf_sample *s,
		      const struct strace_dlf_host *host, void *ctx);

/*
 * strace_dlf_ptwrite() - a ptwrite sample (perf --itrace=w: the event
 * "ptwrite", its raw data perf's struct perf_synth_intel_ptwrite): a
 * ptwrite event of s->tid at s->ip (the ptwrite instruction's when
 * ip_exact, perf's "IP: 1") with payload, at s->time. Its size is not
 * known (perf keeps no PLC): flags hold no size. Only s->ip, time, pid,
 * tid are read. Returns 1 when the event was written, 0 when types=
 * leaves it out, or a negative error.
 */
int strace_dlf_ptwrite(struct strace_dlf *d, const struct strace_dlf_sample *s,
		       uint64_t payload, int ip_exact,
		       const struct strace_dlf_host *host, void *ctx);

/*
 * strace_dlf_finish() - end of the data: a trace_end (reason "end") for
 * every thread whose trace is still on, then flush. Returns 0 or the
 * flush error. Idempotent.
 */
int strace_dlf_finish(struct strace_dlf *d);

void strace_dlf_stats(const struct strace_dlf *d, struct strace_dlf_stats *st);

/* strace_dlf_free() - finish, close the writer and the ring (NULL ok).
 * Returns the result of the final flush. */
int strace_dlf_free(struct strace_dlf *d);

#endif /* DLFILTER_DLF_H */
