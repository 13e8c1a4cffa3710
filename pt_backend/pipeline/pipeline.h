/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/pipeline.h - from a recording or a live capture to
 * events in a ring, the one header other stages include, and the API of
 * its front doors:
 *
 *   strace_offline_decode()   a perf.data file (ptrace-capture -i)
 *   strace_raw_decode()       a raw PT stream and the code it ran (--pt)
 *   strace_live_capture()     a live capture's session and poll loop
 *                             (-p PID, -- CMD), into the callbacks of
 *   strace_live_decoder_*()   the decoder of its streams as they arrive
 *
 * Each builds the process images from the sideband, runs the decoder's
 * walkers over the PT and writes what they emit, with the definitions
 * that name it, through sink.h (private) into the ring; ctxcut.h
 * (private) cuts per-CPU streams where a CPU changes task, and
 * offline_int.h (private) holds what the offline_*.c files share.
 */
#ifndef PT_BACKEND_PIPELINE_PIPELINE_H
#define PT_BACKEND_PIPELINE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pt_backend/capture/capture.h"
#include "decoder/decoder.h"
#include "strace/event.h"
#include "strace/ring.h"

/* ---------------- a perf.data (offline.c) -------------------------------- */

/*
 * A perf.data recorded with intel_pt decoded into a ring (offline.c and
 * the offline_*.c beneath it): the engine behind `ptrace-capture -i`.
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
 * thread_exit events. Names travel through the ring's string table: DSO,
 * PROCESS and THREAD definitions first, then a SYMBOL definition before
 * the first event that refers to each symbol.
 */

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
 * SIGBUS handler that calls strace_perf_sigbus() (perf.h), or the
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

/*
 * strace_offline_walker() - a walker for thread opts->tid of the
 * per-thread recording opts->perf_path as strace_offline_decode() decodes
 * that thread: over the image of its process's mappings, with the
 * recording's flags (and opts->walk_flags), processor and time
 * conversion; its events (opts->types of them, NULL: all) to emit(arg,
 * ev). For a caller that decodes that thread's PT bytes itself, again and
 * again, its walker's caches kept (tests/decoder/damage.c judges damaged
 * copies of a recording's PT so). Nothing is written: opts->ring, jobs,
 * coverage and progress are not used.
 *
 * Free *w with strace_walker_free(), then *img with strace_image_free().
 * Returns 0, -STRACE_E_BADARG without opts->tid, -EOPNOTSUPP for a
 * per-CPU recording, or what strace_offline_decode() returns for a file
 * it cannot decode (-STRACE_E_PERF_NOTID: no such thread).
 */
int strace_offline_walker(const struct strace_offline_opts *opts,
			  strace_emit_fn emit, void *arg,
			  struct strace_walker **w, struct strace_image **img);

/* ---------------- a raw PT stream (rawpt.c) ------------------------------ */

/*
 * A raw Intel PT stream (not in a perf.data) decoded into a ring
 * (rawpt.c): the engine behind `ptrace-capture --pt`.
 *
 * For PT that does not come through perf: simple-pt, kAFL/Nyx, a dump of
 * perf's AUX area, libipt's pttc. The caller names the trace file and
 * the code it ran, as ptxed takes them: raw bytes of a file at an address
 * (--raw) and the PT_LOAD segments of ELF files (--elf). The events are
 * those `ptrace-capture -i` writes for a thread of a perf.data (the same
 * walker, sink and definitions: one PROCESS, a THREAD when the thread is
 * not the process's main one, a DSO per section, a SYMBOL before the
 * first event that refers to each symbol).
 *
 * Times: the stream has no perf time conversion; events carry the raw TSC
 * of the trace's TSC packets (0 without them).
 *
 * Errors: -STRACE_E_RAW_* (strace/error.h), the decoder's and the
 * ring's -STRACE_E_*, -errno.
 */

/* One piece of the image. */
struct strace_raw_section {
	const char *path;
	int elf;         /* 1: the file's PT_LOAD segments (--elf) */
	uint64_t offset; /* raw: first byte of the file */
	uint64_t size;   /* raw: bytes; 0: to the end of the file */
	uint64_t addr;   /* raw: address of offset; elf: BASE (load bias) */
	int has_addr;    /* elf: BASE was given */
};

/*
 * strace_raw_parse_section() - "BIN[:OFFSET[-SIZE]]@ADDR" (raw) or
 * "FILE[@BASE]" (elf) into *out; numbers in C syntax (0x ok), SIZE not 0.
 * The path is what comes before the last '@' (and before the last ':'
 * when what follows it is OFFSET[-SIZE]): s is cut there in place (a NUL)
 * and out->path points into it. Returns 0, -STRACE_E_RAW_SYNTAX (s is left
 * as it was).
 */
int strace_raw_parse_section(char *s, int elf,
			     struct strace_raw_section *out);

struct strace_raw_opts {
	size_t size;            /* sizeof(struct strace_raw_opts) (strace/opts.h) */
	const char *pt_path;    /* the raw PT stream */
	const struct strace_raw_section *secs;
	size_t nsecs;
	struct strace_ring *ring;
	unsigned walk_flags;    /* STRACE_WALK_* */
	const struct strace_typeset *types; /* NULL: every type */
	struct strace_pt_cpu cpu; /* the trace's processor; 0: unknown */
	uint32_t pid, tid;      /* for the events; 0 and 0: none known */
	int jobs;               /* >1: cut at PSBs, decoded in parallel */
	size_t piece_bytes;     /* with jobs: segment size; 0: 64 KiB */
	const char *comm;       /* process name; NULL: the first section's
				 * file name, 15 bytes as the kernel's comm */
	int names;              /* how symbols are named: enum
				 * strace_plt_style (decoder.h) */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *cb_arg;
	/* the files the sections map, read once for many decodes (a
	 * fuzzer's inputs); NULL: the decode reads its own */
	struct strace_objcache *objects;
};

struct strace_raw_stats {
	uint64_t pt_bytes;  /* bytes of the trace file */
	uint64_t events;    /* events written (after the type filter) */
	uint64_t branches;  /* taken branches followed */
	uint64_t insns;     /* instructions walked */
	uint64_t errors;    /* decode errors */
	uint64_t overflows; /* PT overflows */
	int nosync;         /* the trace has PSBs, but the decoder found
			     * none to start at: nothing decoded */
};

/* Which input an error is about (for the caller's message). */
struct strace_raw_fault {
	int section;  /* index in secs, -1: the trace file (or none) */
	int other;    /* STRACE_E_RAW_OVERLAP: the section it overlaps */
	uint64_t file_size; /* STRACE_E_RAW_RANGE: the file's size */
	uint64_t start, end; /* STRACE_E_RAW_OVERLAP: the overlapping range */
	uint64_t size; /* STRACE_E_RAW_WRAP: the bytes from start that wrap */
};

/*
 * strace_raw_decode() - build the image from the sections (checked first:
 * each file readable and long enough, no two sections overlapping), write
 * the definitions, decode the trace into opts->ring. On failure *fault
 * says which input was at fault.
 * Returns 0, -errno (a file cannot be opened or read; ENODEV: not a
 * regular file), -STRACE_E_RAW_*, -STRACE_E_* (the ring),
 * -STRACE_E_EMIT.
 */
int strace_raw_decode(const struct strace_raw_opts *opts,
		      struct strace_raw_stats *st,
		      struct strace_raw_fault *fault);

/* ---------------- live: the decoder (live_decode.c) ---------------------- */

/*
 * A live capture decoded as it arrives (live_decode.c).
 *
 * The callbacks of a live session (pt_backend/capture/capture.h, struct
 * strace_live_cb) feed this decoder: sideband records build one process
 * image per pid (MMAP2, the vDSO bytes, FORK inheriting the parent's
 * mappings, an exec starting afresh) and name processes and threads; each
 * thread's PT bytes are decoded by its own walker up to the last PSB seen,
 * the rest waits for the next bytes (a packet may straddle two chunks), so
 * the events are those the whole stream gives. Events go into one ring
 * writer through the same sink as `ptrace-capture -i` (type filter, symbol
 * definitions). Stacks at attach become STACK_FRAME events.
 *
 * Not thread-safe: the thread that drives the live session calls it.
 */

struct strace_live_decoder;

struct strace_live_decoder_stats {
	uint64_t threads, pt_bytes, events, errors, overflows, lost;
	struct strace_objcache_stats cache; /* with a cache directory */
};

/* Returns 0 and *out, -ENOMEM, or the ring's error. types may be NULL. */
int strace_live_decoder_new(struct strace_ring *ring, unsigned walk_flags,
			    const struct strace_typeset *types,
			    struct strace_live_decoder **out);

/* strace_live_decoder_set_cache() - read the processes' ELF files once
 * for all of them, with the persistent block and symbol cache in dir
 * (docs/cache.md; NULL: none): finish writes what the decode added.
 * Before the first sideband. Returns 0, -ENOMEM. */
int strace_live_decoder_set_cache(struct strace_live_decoder *ld,
				  const char *dir);

/* strace_live_decoder_set_names() - how symbols are named: enum
 * strace_plt_style (decoder.h; 0, perf 6.1's answers, by default). Before
 * the first sideband. */
void strace_live_decoder_set_names(struct strace_live_decoder *ld,
				   int names);

/* More walker flags (STRACE_WALK_PTWRITE where the session's config asks
 * for the payloads), before the first PT bytes. */
void strace_live_decoder_add_flags(struct strace_live_decoder *ld,
				   unsigned walk_flags);

/* The time conversion of the session (before the first PT bytes). */
void strace_live_decoder_set_time(struct strace_live_decoder *ld,
				  const struct strace_time_conv *tc,
				  int has_time);

/*
 * strace_live_decoder_session() - what the decoder takes from the live
 * session l once it is open, before its first data: its time conversion
 * (strace_live_time_conv(); the events get times where the kernel gives
 * cap_user_time_zero) and, when its intel_pt event asks the hardware for
 * them (intel_pt/ptw/u), the payloads of ptwrite as events, as a decode
 * of a recording (-i) does. Returns 0, or -ERANGE when the kernel's
 * conversion is out of range (a time_shift of 64 or more in the
 * perf_event mmap page): the events get no times.
 */
int strace_live_decoder_session(struct strace_live_decoder *ld,
				const struct strace_live *l);

/* Callbacks for a live session (arg: the decoder). */
void strace_live_decoder_callbacks(struct strace_live_decoder *ld,
				   struct strace_live_cb *cb);

/* Decode what is pending, close the writer, free. Returns the first error
 * seen (0 if none); *st may be NULL. */
int strace_live_decoder_finish(struct strace_live_decoder *ld,
			       struct strace_live_decoder_stats *st);

/* ---------------- live: the session (live_run.c) ------------------------- */

/*
 * A live capture from open to close (live_run.c): the session over
 * pt_backend/capture (strace_live_*), attached to a process or starting
 * a command, polled until it ends, its data into the callbacks
 * (strace_live_decoder_callbacks(), above).
 *
 * The command keeps what belongs to it through the hooks: its messages
 * (failed), its control FIFO and signals (opened, turn, ended), its
 * summary (ended).
 */

struct strace_live_hooks {
	/* The session is open, before any data. Returns 0 to go on, or an
	 * exit status: the session closes and strace_live_capture() returns
	 * it (ended is not called). NULL: go on. */
	int (*opened)(void *arg, struct strace_live *l);
	/* Each turn of the poll loop, before the stop request is read.
	 * Returns nonzero to end the capture (e.g. its duration is over). */
	int (*turn)(void *arg, struct strace_live *l);
	/* A failure (code < 0, pid, detail or NULL): says it, and returns
	 * the exit status (nonzero). */
	int (*failed)(void *arg, int code, pid_t pid, const char *detail);
	/* The end of an open session that went on after opened, with its
	 * counts, before it closes. NULL: none. */
	void (*ended)(void *arg, const struct strace_live_stats *st);
	void *arg;
};

/*
 * strace_live_capture() - trace pid (> 0) or the command argv (pid 0)
 * with the options lo until the process ends, a stop request
 * (strace_live_request_stop()), turn's end or a failure; everything
 * captured goes to cb. A command it started keeps running (it is reaped
 * if it has ended). Returns 0 or the exit status from failed or opened.
 */
int strace_live_capture(const struct strace_live_opts *lo, pid_t pid,
			char **argv, const struct strace_live_cb *cb,
			const struct strace_live_hooks *h);

#endif /* PT_BACKEND_PIPELINE_PIPELINE_H */
