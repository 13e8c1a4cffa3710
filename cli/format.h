/* SPDX-License-Identifier: MIT */
/*
 * cli/format.h - fast text and JSON-lines formatting of events, with the
 * names of a ring (strace/names.h).
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
#include "strace/names.h"
#include "strace/ring.h"

/* Longest name kept for display (bytes before escaping); longer ones are
 * cut and end in "...". */
#define FMT_NAME_MAX 1024
/*
 * Room one formatted line may need at most: two operands whose names are
 * at most FMT_NAME_MAX bytes escaped up to 6x (\u00XX), a thread name, a
 * system call's name or a symbol's aliases (FMT_NAME_MAX bytes of names
 * in all, plus their quotes and commas), and numbers. The caller keeps
 * this much free before each fmt_*_event().
 */
#define FMT_LINE_MAX                                                           \
	(4 * 6 * FMT_NAME_MAX + 1024 + 4 * STRACE_ALIASES_MAX +              \
	 FMT_SRCLINE_ROOM)
/* ptrace-read --srcline adds two source lines to a line (cli/srcline.h:
 * SRCLINE_APPEND_MAX, a static assert there) */
#define FMT_SRCLINE_ROOM (2 * (6 * 512 + 64))

/* One display name: text form (control bytes shown as '?') and JSON form
 * (escaped, without the quotes). Both point to storage owned by the
 * formatter, padded so that they are copied in 32-byte steps. */
struct fmt_name {
	const char *text, *json;
	uint32_t text_len, json_len;
};

/* The display forms of the names' entries, made when first shown. */
struct fmt_names {
	struct fmt_name *full; /* by entry id: the whole string */
	struct fmt_name *base; /* by entry id: DSOs' base names */
	uint8_t *made;         /* by entry id: bit 0 full, bit 1 base */
	size_t cap;
	char **owned; /* the text and JSON copies */
	size_t nowned, owned_cap;
};

/*
 * fmt_name_make() - display forms of s[0..len): stores into *out, in
 * storage owned by dn. Returns 0 or -ENOMEM. Exposed for the tests.
 */
int fmt_name_make(struct fmt_names *dn, const char *s, size_t len,
		  struct fmt_name *out);
void fmt_names_fini(struct fmt_names *dn);

/* Output formats. */
enum fmt_kind {
	FMT_TEXT,
	FMT_JSONL,
	FMT_RAW,
	FMT_RING,
	FMT_NONE, /* no output: plugins only */
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

struct fmt_addr_cache {
	uint64_t addr;
	const struct strace_name *e; /* NULL: no name */
	int valid, dso;
};
#define FMT_ACACHE 2048

struct fmt {
	struct strace_names *names; /* may be NULL: no names */
	int show_comm;              /* show thread names */
	/* private */
	struct fmt_names dn;           /* display forms of the names */
	struct fmt_addr_cache *acache; /* address -> entry, direct-mapped */
	uint64_t names_gen;            /* the names' generation cached */
	struct fmt_acache *ac, ac_dummy; /* formatted addresses */
	uint64_t ac_gen; /* the names' generation the caches hold (set before
			  * each line or batch) */
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

/* fmt_setup() - fmt_init() and a fresh state with these options; names
 * (may be NULL) are updated by the caller (strace_names_update). */
void fmt_setup(struct fmt *f, struct strace_names *names, int show_comm);
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
/* the body of a JSON string (no quotes): at most 6 * len bytes */
char *fmt_put_json_str(char *p, const char *s, size_t len);

#endif /* CLI_FORMAT_H */
