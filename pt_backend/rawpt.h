/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/rawpt.h - decode a raw Intel PT stream (not in a perf.data)
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
#ifndef PT_BACKEND_RAWPT_H
#define PT_BACKEND_RAWPT_H

#include <stddef.h>
#include <stdint.h>

#include "strace/decoder.h"
#include "strace/event.h"
#include "strace/ring.h"

/* Error codes (also -STRACE_E_*, -STRACE_DE_* and -errno). */
enum strace_raw_error {
	STRACE_RAW_BASE = 4350,
	STRACE_RAW_SYNTAX,   /* a --raw/--elf argument does not parse */
	STRACE_RAW_RANGE,    /* OFFSET/SIZE reach past the end of the file */
	STRACE_RAW_OVERLAP,  /* two sections overlap */
	STRACE_RAW_NOTELF,   /* --elf of a file that is not a 64-bit ELF */
	STRACE_RAW_NOLOAD,   /* --elf of an ELF without PT_LOAD segments */
	STRACE_RAW_NOTPIE,   /* --elf FILE@BASE of a fixed-address program */
	STRACE_RAW_EMPTY,    /* an empty file (trace or section) */
	STRACE_RAW_NOPSB,    /* the trace holds no PSB packet */
	STRACE_RAW_MAX
};

/* strace_raw_strerror() - text for the codes above and every code
 * strace_decoder_strerror() knows. */
const char *strace_raw_strerror(int err);

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
 * and out->path points into it. Returns 0, -STRACE_RAW_SYNTAX (s is left
 * as it was).
 */
int strace_raw_parse_section(char *s, int elf,
			     struct strace_raw_section *out);

struct strace_raw_opts {
	size_t size;            /* sizeof(struct strace_raw_opts) */
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
	int other;    /* STRACE_RAW_OVERLAP: the section it overlaps */
	uint64_t file_size; /* STRACE_RAW_RANGE: the file's size */
	uint64_t start, end; /* STRACE_RAW_OVERLAP: the overlapping range */
};

/*
 * strace_raw_decode() - build the image from the sections (checked first:
 * each file readable and long enough, no two sections overlapping), write
 * the definitions, decode the trace into opts->ring. On failure *fault
 * says which input was at fault.
 * Returns 0, -errno (a file cannot be opened or read; ENODEV: not a
 * regular file), -STRACE_RAW_* (above), -STRACE_E_* (the ring),
 * -STRACE_DE_EMIT.
 */
int strace_raw_decode(const struct strace_raw_opts *opts,
		      struct strace_raw_stats *st,
		      struct strace_raw_fault *fault);

#endif /* PT_BACKEND_RAWPT_H */
