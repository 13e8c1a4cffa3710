/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/sink.h - where decoded events go: the type filter,
 * then a SYMBOL definition (string table entry + event) before the first
 * event that refers to each symbol (for an address no symbol holds,
 * where its mapping lies in the object's own addresses), and the name of
 * the system call a syscall instruction makes before its first syscall
 * event (when its code says, strace_syscall_nr()), then the ring writer.
 * Used by the offline decoder (perf.data) and the live one.
 */
#ifndef PT_BACKEND_PIPELINE_SINK_H
#define PT_BACKEND_PIPELINE_SINK_H

#include <stdint.h>

#include "decoder/decoder.h"
#include "strace/event.h"
#include "strace/ring.h"

#define STRACE_SINK_CACHE_LOG 12
#define STRACE_SINK_CACHE (1u << STRACE_SINK_CACHE_LOG)

/* One per writing thread; zero it, then set the first five fields. */
struct strace_sink {
	struct strace_ring *ring;
	struct strace_writer *w;
	struct strace_image *img;           /* names addresses */
	const struct strace_typeset *types; /* NULL: every type */
	struct strace_symset *syms;         /* symbols defined (shared) */
	uint64_t events;                    /* events written */
	int hints; /* STRACE_F_NAMED may come: the walker was told
		    * STRACE_WALK_NAMED_HINTS for a parallel decode of
		    * STRACE_PARALLEL_SETTLE_FROM threads or more */
	uint64_t cache[STRACE_SINK_CACHE];  /* addresses already handled */
	uint64_t sites[64];                 /* syscall sites handled */
};

/*
 * What every walker of one trace shares, set once by its pipeline (the
 * offline, raw and live ones): the flags, the time conversion, the
 * trace's processor (its errata).
 */
struct strace_walk_base {
	unsigned flags;               /* STRACE_WALK_* */
	struct strace_time_conv time; /* zero: no conversion */
	int has_time;                 /* the events' times are valid */
	struct strace_pt_cpu cpu;     /* 0: unknown */
};

/*
 * strace_sink_walk_opts() - *wo for a walker of thread tid: b's flags,
 * time and processor, and its events to s (strace_sink_emit(), its batch
 * form, s's type filter); with s NULL, the caller sets wo->emit and
 * wo->emit_arg. The one set-up of a walker and its sink of the three
 * pipelines.
 */
void strace_sink_walk_opts(struct strace_walk_opts *wo,
			   const struct strace_walk_base *b, uint32_t tid,
			   struct strace_sink *s);

/* strace_sink_emit() - a strace_emit_fn (arg: the sink). Returns 0 or the
 * ring's error (-STRACE_E_FULL for a full string table, ...). */
int strace_sink_emit(void *arg, const struct strace_event *ev);

/* strace_sink_emit_batch() - a strace_emit_batch_fn: strace_sink_emit() on
 * each of ev[0..n), in one loop. */
int strace_sink_emit_batch(void *arg, const struct strace_event *ev,
			   size_t n);

#endif /* PT_BACKEND_PIPELINE_SINK_H */
