/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/offline.h - decode a perf.data recorded with intel_pt into a
 * ring: the engine behind `ptrace-capture -i`.
 *
 * From the sideband (MMAP/MMAP2, COMM, FORK, EXIT, ITRACE_START, AUX,
 * LOST) it builds one process image per pid and the thread names; each
 * AUX queue (a thread, in per-thread recordings) is decoded by its own
 * walker, in parallel over `jobs` threads, each with its own ring writer,
 * so a thread's events are in order in the ring. A per-CPU recording may
 * hold many processes (a command that forks and execs): each process has
 * an image per exec, a forked child starts with its parent's mappings,
 * and each CPU's stream is cut where it moves to another task (ctxcut.h)
 * and merged by time with the other CPUs'; EXIT records become
 * thread_exit events. Names travel through the
 * ring's string table: DSO, PROCESS and THREAD definitions first, then a
 * SYMBOL definition before the first event that refers to each symbol.
 */
#ifndef PT_BACKEND_PIPELINE_OFFLINE_H
#define PT_BACKEND_PIPELINE_OFFLINE_H

#include <stdint.h>

#include "decoder/decoder.h"
#include "strace/event.h"
#include "strace/ring.h"

struct strace_offline_opts {
	const char *perf_path;
	struct strace_ring *ring;
	unsigned walk_flags;          /* STRACE_WALK_ALL_BRANCHES, _REFERENCE;
				       * the decode adds STRACE_WALK_PEBS for
				       * a recording with an aux_output
				       * event, STRACE_WALK_PTWRITE for one
				       * with intel_pt's ptw bit */
	const struct strace_typeset *types; /* NULL: every type */
	uint32_t tid;                 /* only this thread; 0: all */
	int jobs;                     /* decoding threads; 0: 1 */
	size_t piece_bytes;  /* per-CPU recordings: PT bytes of a CPU decoded
			      * at a time (its events are held until merged);
			      * 0: 256 KiB. Per-thread recordings with more
			      * jobs than threads: the size of the pieces a
			      * thread's trace is cut into; 0: 64 KiB */
	const char *vdso_path;        /* vDSO image for "[vdso]" mappings */
	const char *buildid_dir; /* perf's build-id cache, where the [vdso]
				  * the file names by build-id is looked
				  * for when vdso_path is NULL, and an
				  * object not found at its path */
	/* A root the mapped objects are read under, as perf script
	 * --symfs: an object recorded as /a/b is read from SYMFS/a/b (the
	 * ring still names it /a/b). NULL: their recorded paths.
	 *
	 * Every object the file's BUILD_ID feature names (perf record
	 * names each it maps) must be the file of that build-id: the one
	 * at its path, else the build-id cache's. A file of another build,
	 * or of none, is never decoded against: the decode is refused
	 * before it starts (-STRACE_E_PERF_BUILDID; st->mismatch says
	 * which). An object the feature does not name is read as it is. */
	const char *symfs;
	/* The ELF files and their symbols, kept across decodes: a caller
	 * that decodes recordings of the same program one after another
	 * passes one cache (strace_objcache_new()) to read each file once;
	 * NULL: a cache for this decode (its threads share the files). */
	struct strace_objcache *objects;
	/* The persistent block and symbol cache's directory of the decode's
	 * own objects (strace_objcache_set_dir()), written at its end; a
	 * caller's objects use their own (and the caller saves them). NULL:
	 * none. */
	const char *cache_dir;
	/* How symbols are named: enum strace_plt_style (decoder.h); 0:
	 * perf 6.1's answers, STRACE_PLT_PLAIN: the names a person types */
	int names;
	/* Coverage (ptrace-capture --coverage): at the end, the code ranges
	 * that ran go into the ring (strace_writer_name_coverage()) */
	int coverage;
	/* Warnings (a missing ELF file, a gap); NULL to ignore. */
	void (*warn)(void *arg, const char *msg);
	/* Progress: bytes of PT decoded so far out of total. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *cb_arg;
};

struct strace_offline_stats {
	uint64_t pt_bytes;   /* AUX bytes decoded */
	uint64_t queues;     /* AUX queues (threads or CPUs) */
	int per_cpu;         /* the queues are CPUs (a per-CPU recording) */
	uint64_t events;     /* events written (after the type filter) */
	uint64_t branches;   /* taken branches followed */
	uint64_t insns;      /* instructions walked */
	uint64_t errors;     /* decode errors */
	uint64_t overflows;  /* PT overflows */
	uint64_t lost;       /* perf LOST records / truncated AUX, and gaps */
	uint64_t missing;    /* mappings whose file could not be read */
	uint64_t file_size;  /* bytes of the perf.data when it was opened */
	struct strace_objcache_stats cache; /* the persistent cache (own
					     * objects only) */
	/* The first threads the recording names (COMM records), to say
	 * which there are when opts->tid is none of them. */
	struct strace_offline_thread {
		uint32_t pid, tid;
		char comm[16];
	} threads[8];
	uint32_t nthreads; /* in the recording (may be more than 8) */
	/* -STRACE_E_PERF_BUILDID: the object whose file is another build */
	struct strace_offline_mismatch {
		char path[4096]; /* as the recording names it ("[vdso]") */
		char file[4096]; /* the file found there */
		uint8_t want[20], got[20]; /* the recording's build-id, the
					    * file's */
		uint8_t nwant, ngot;       /* their lengths (ngot 0: none) */
	} mismatch;
};

/*
 * strace_offline_decode() - decode the whole file into opts->ring.
 * On a format error *err_off receives the file offset at fault.
 *
 * The file is mapped: if it shrinks meanwhile, the program must have a
 * SIGBUS handler that calls strace_perf_sigbus() (perf_read.h), or the
 * first touch of a lost page kills it. With one, the lost pages read as
 * zeros, the decode runs to its end, each thread's (CPU's) stream missing
 * trace ends with a LOST event (STRACE_LOST_AUX, a = bytes), every writer
 * is closed, and the result is -STRACE_E_PERF_SHRANK with *err_off the offset
 * from which the data was lost.
 *
 * Returns 0, -STRACE_E_PERF_NOTID if opts->tid is no thread of the
 * recording (st->threads says which are), -STRACE_E_PERF_BUILDID if an
 * object's file is not the build the recording names (st->mismatch says
 * which; nothing was written to the ring), other -STRACE_E_PERF_*,
 * -STRACE_E_*, -errno.
 */
int strace_offline_decode(const struct strace_offline_opts *opts,
			  struct strace_offline_stats *st, uint64_t *err_off);

#endif /* PT_BACKEND_PIPELINE_OFFLINE_H */
