/* SPDX-License-Identifier: MIT */
/*
 * cli/format.h - fast text and JSON-lines formatting of events, and the
 * name tables (symbols, DSOs, threads) built from a ring's string table.
 *
 * Internal to cli/ (and its tests and benchmarks). Everything a line shows
 * comes from the X-macro table in strace/event.h: type names, operand names
 * and operand kinds. The formatter has no per-type code, only per-kind code.
 *
 * Speed: lines are built by hand (digit tables, no printf) into a caller's
 * buffer; the caller writes the buffer out in big chunks.
 */
#ifndef CLI_FORMAT_H
#define CLI_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "strace/event.h"
#include "strace/ring.h"

/* Longest name kept for display (bytes before escaping); longer ones are
 * cut and end in "...". */
#define FMT_NAME_MAX 1024
/*
 * Room one formatted line may need at most: two operands whose names are
 * at most FMT_NAME_MAX bytes escaped up to 6x (\u00XX), a thread name and
 * numbers. The caller keeps this much free before each fmt_*_event().
 */
#define FMT_LINE_MAX (3 * 6 * FMT_NAME_MAX + 1024)

/* One display name: text form (control bytes shown as '?') and JSON form
 * (escaped, without the quotes). Both point to storage owned by names. */
struct fmt_name {
	const char *text, *json;
	uint32_t text_len, json_len;
};

struct fmt_addr_cache {
	uint64_t addr;
	uint32_t idx;  /* in syms or dsos */
	uint32_t what; /* 0 empty, 1 no name, 2 symbol, 3 DSO */
};
#define FMT_ACACHE 2048

/* A symbol or DSO range [start, end); end == start for a size-0 symbol. */
struct fmt_range {
	uint64_t start, end;
	struct fmt_name name;
};

/* a u64 -> name hash map (open addressing, power-of-two size) */
struct fmt_entry {
	uint64_t key; /* 0: empty slot */
	struct fmt_name name;
};

struct fmt_map {
	struct fmt_entry *slots;
	size_t count, cap;
};

/*
 * Names known from a ring's string table. Entries are append-only, so
 * fmt_names_refresh() only reads what was added since its last call.
 */
struct fmt_names {
	const struct strace_ring *ring;
	uint64_t next_off; /* where the next unread entry starts */
	struct fmt_range *syms, *dsos;
	size_t nsyms, syms_cap, ndsos, dsos_cap;
	int syms_sorted, dsos_sorted;
	struct fmt_map threads; /* tid -> name */
	struct fmt_map strs;    /* string offset + 1 -> name (STR operands) */
	size_t last_sym; /* range_find() cache */
	struct fmt_addr_cache *acache; /* address -> name, direct-mapped */
	uint64_t last_tid;
	const struct fmt_name *last_thread;
	char **owned; /* escaped copies to free */
	size_t nowned, owned_cap;
	int corrupt; /* the table had a bad entry; reading stopped there */
	uint64_t gen; /* counts refreshes that added entries */
};

void fmt_names_init(struct fmt_names *n, const struct strace_ring *ring);
void fmt_names_fini(struct fmt_names *n);

/*
 * fmt_names_refresh() - read string table entries added since the last
 * call. Returns how many were read, -ENOMEM, or -STRACE_E_CORRUPT (the
 * entries before the bad one stay usable; later calls return 0).
 */
int fmt_names_refresh(struct fmt_names *n);

/*
 * fmt_names_string() - the display forms of the string entry at offset
 * off, or NULL if there is no entry there (yet).
 */
const struct fmt_name *fmt_names_string(struct fmt_names *n, uint64_t off);

/*
 * fmt_names_symbol() - the symbol covering addr, or NULL; *off receives
 * addr - start. fmt_names_dso() likewise for DSOs. fmt_names_thread() -
 * the name of thread tid (THREAD entries, else PROCESS entries), or NULL.
 */
const struct fmt_range *fmt_names_symbol(struct fmt_names *n, uint64_t addr);
const struct fmt_range *fmt_names_dso(struct fmt_names *n, uint64_t addr);
const struct fmt_name *fmt_names_thread(struct fmt_names *n, uint64_t tid);

/*
 * fmt_name_make() - display forms of s[0..len): stores into *out, using
 * s itself when it needs no change (s must then outlive out). Returns 0 or
 * -ENOMEM. Exposed for the tests.
 */
int fmt_name_make(struct fmt_names *n, const char *s, size_t len,
		  struct fmt_name *out);

/* Output formats. */
enum fmt_kind {
	FMT_TEXT,
	FMT_JSONL,
	FMT_RAW,
	FMT_RING,
};

/*
 * Formatter state: options and small caches of what consecutive lines
 * share (the event number counts up, the second of the time rarely
 * changes). Initialise with fmt_setup(); one per output stream.
 */
struct fmt_acache {
	uint64_t addr;
	uint8_t valid, len, split;
	char s[53];
};
#define FMT_FCACHE_BITS 10
#define FMT_FCACHE (1u << FMT_FCACHE_BITS)

struct fmt {
	struct fmt_names *names; /* may be NULL: no names */
	int show_comm;           /* show thread names */
	/* private */
	struct fmt_acache *ac, ac_dummy; /* formatted addresses */
	uint64_t ac_gen;
	size_t ac_mask;
	uint64_t seq_last, sec_last;
	int seq_valid, sec_valid;
	uint8_t seq_len, sec_len;
	uint64_t seq_w[2]; /* ASCII digits of seq_last, first in the low byte */
	char sec_buf[24];
	uint64_t nsh_last; /* JSON time: the digits above the last 8 */
	int nsh_valid;
	uint8_t nsh_len;
	char nsh_buf[24];
	/* the last thread: its text column "tid/name" and its JSON parts */
	uint64_t tid_last, tid_gen;
	int tid_valid;
	uint8_t tid_text_len, tid_json_len, comm_json_len;
	char tid_text[64], tid_json[24], comm_json[64];
};

/* fmt_setup() - fmt_init() and a fresh state with these options. */
void fmt_setup(struct fmt *f, struct fmt_names *names, int show_comm);
/* fmt_cleanup() - free the state's caches. */
void fmt_cleanup(struct fmt *f);

/* fmt_init() - build the per-type prefixes from the event table (once). */
void fmt_init(void);

/*
 * fmt_text_event() / fmt_json_event() - append the line of event e at
 * position seq to p, return the new end. p must have FMT_LINE_MAX bytes
 * of room.
 */
char *fmt_text_event(struct fmt *f, char *p,
		     const struct strace_event *e, uint64_t seq);
char *fmt_json_event(struct fmt *f, char *p,
		     const struct strace_event *e, uint64_t seq);

/* Which types to show: the type set, and values of 128 and above. */
struct fmt_filter {
	struct strace_typeset set;
	int unknown;
};

static inline int fmt_wanted(const struct fmt_filter *flt, unsigned type)
{
	return type < STRACE_EV_MAX ? strace_typeset_has(&flt->set, type)
				    : flt->unknown;
}

/*
 * fmt_text_batch() / fmt_json_batch() - the lines of the events ev[0..n)
 * at positions seq, seq + 1, ..., skipping the types flt does not want
 * (NULL: show all). Stops early once p passes limit (the caller flushes
 * and calls again): *done receives how many events were consumed. p must
 * have FMT_LINE_MAX bytes of room past limit.
 */
char *fmt_text_batch(struct fmt *f, char *p, const char *limit,
		     const struct strace_event *ev, size_t n, uint64_t seq,
		     const struct fmt_filter *flt, size_t *done);
char *fmt_json_batch(struct fmt *f, char *p, const char *limit,
		     const struct strace_event *ev, size_t n, uint64_t seq,
		     const struct fmt_filter *flt, size_t *done);

/*
 * fmt_lost_event() - the synthetic LOST event a reader shows for count
 * events it lost, starting at position first.
 */
void fmt_lost_event(struct strace_event *e, uint64_t count, uint64_t first);

/* Number formatting, exposed for the tests: append, return the new end. */
char *fmt_put_u64(char *p, uint64_t v);
char *fmt_put_hex(char *p, uint64_t v); /* "0x..." lower case */
char *fmt_put_time(char *p, uint64_t ns); /* seconds "S.NNNNNNNNN" */

#endif /* CLI_FORMAT_H */
