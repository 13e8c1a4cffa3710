/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/live_decode.h - decode a live capture as it arrives.
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
#ifndef PT_BACKEND_PIPELINE_LIVE_DECODE_H
#define PT_BACKEND_PIPELINE_LIVE_DECODE_H

#include <stdint.h>

#include "pt_backend/capture/capture.h"
#include "decoder/decoder.h"
#include "strace/ring.h"

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

#endif /* PT_BACKEND_PIPELINE_LIVE_DECODE_H */
