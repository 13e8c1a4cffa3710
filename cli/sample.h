/* SPDX-License-Identifier: MIT */
/*
 * cli/sample.h - sample events of every type, for ptrace-read --generate,
 * the tests and the benchmarks.
 *
 * sample_init() puts a small made-up program image into a ring's string
 * table (a process, two threads, two DSOs, symbols with awkward names) and
 * prepares a prologue (definitions, the initial stack) and a pattern of
 * SAMPLE_PATTERN events that cycles through every type of the table with
 * addresses inside and outside the symbols. Deterministic: the same calls
 * give the same events.
 */
#ifndef CLI_SAMPLE_H
#define CLI_SAMPLE_H

#include <stdint.h>

#include "strace/ring.h"

#define SAMPLE_MAX_PROLOGUE 64
#define SAMPLE_PATTERN 4096
#define SAMPLE_TIME0 1000000000000ull /* time of event 0, ns */
#define SAMPLE_TIME_STEP 7            /* ns between events */

struct sample {
	struct strace_event prologue[SAMPLE_MAX_PROLOGUE];
	unsigned nprologue;
	struct strace_event pattern[SAMPLE_PATTERN];
};

/*
 * sample_init() - add the names to ring (may be NULL: no names, string
 * operands are 0) and build the events. Returns 0 or a ring error.
 */
int sample_init(struct sample *s, struct strace_ring *ring);

/* sample_event() - event number i of the sample stream (time set). */
void sample_event(const struct sample *s, uint64_t i, struct strace_event *e);

/*
 * sample_emit() - write events 0..n-1 through w (and flush).
 * Returns 0 or the writer's error.
 */
int sample_emit(const struct sample *s, struct strace_writer *w, uint64_t n);

#endif /* CLI_SAMPLE_H */
