/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/sink.h - where decoded events go: the type filter, then a
 * SYMBOL definition (string table entry + event) before the first event
 * that refers to each symbol, then the ring writer. Used by the offline
 * decoder (perf.data) and the live one.
 */
#ifndef PT_BACKEND_SINK_H
#define PT_BACKEND_SINK_H

#include <pthread.h>
#include <stdint.h>

#include "decoder/decoder.h"
#include "strace/event.h"
#include "strace/ring.h"

/* The symbols already defined in a ring (by start address), shared by
 * the sinks of several threads; locked only on a sink's cache miss. */
struct strace_symset {
	pthread_mutex_t lock;
	uint64_t *keys; /* open addressing; 0 = empty, a symbol at 0 is 1 */
	size_t cap, n;
};

void strace_symset_init(struct strace_symset *s);
void strace_symset_fini(struct strace_symset *s);

#define STRACE_SINK_CACHE 4096

/* One per writing thread; zero it, then set the first five fields. */
struct strace_sink {
	struct strace_ring *ring;
	struct strace_writer *w;
	struct strace_image *img;           /* names addresses */
	const struct strace_typeset *types; /* NULL: every type */
	struct strace_symset *syms;
	uint64_t events;                    /* events written */
	uint64_t cache[STRACE_SINK_CACHE];  /* addresses already handled */
};

/* strace_sink_emit() - a strace_emit_fn (arg: the sink). Returns 0 or the
 * ring's error (-STRACE_E_FULL for a full string table, ...). */
int strace_sink_emit(void *arg, const struct strace_event *ev);

#endif /* PT_BACKEND_SINK_H */
