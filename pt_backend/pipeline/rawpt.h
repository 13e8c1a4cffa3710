/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/rawpt.h - decode a raw Intel PT stream (not in a perf.data)
 * into a ring: the engine behind `ptrace-capture --pt`.
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
 */
#ifndef PT_BACKEND_PIPELINE_RAWPT_H
#define PT_BACKEND_PIPELINE_RAWPT_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/decoder.h"
#include "strace/event.h"
#include "strace/ring.h"

/* Errors: -STRACE_E_RAW_* (strace/error.h), the decoder's and the
 * ring's -STRACE_E_*, -errno. */

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

#endif /* PT_BACKEND_PIPELINE_RAWPT_H */
