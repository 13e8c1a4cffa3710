/* SPDX-License-Identifier: MIT */
/*
 * cli/view/view.h - the views and formats' API (libstrace_view.a): what
 * ptrace-read shows a ring as. Its buffered output; lines of events (text,
 * JSON lines) with a ring's names, and -F's chosen fields; the stack views
 * (docs/stacks.md): a call tree with durations (like uftrace replay), a
 * per-function report (like uftrace report), collapsed stacks for flame
 * graphs, and the viewer formats (docs/viewing.md); two reports compared.
 *
 * Internal to cli/ (and its tests and benchmarks); it uses libstrace only.
 * The library's own headers (format.h, frames.h, views_int.h,
 * fmt_uftrace.h) are private to cli/view/.
 */
#ifndef CLI_VIEW_VIEW_H
#define CLI_VIEW_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strace/event.h"
#include "strace/filter.h"
#include "strace/names.h"
#include "strace/ring.h"
#include "strace/stack.h"

/*
 * Buffered output of the commands (out.c): lines are built in place
 * (o->p, with FMT_LINE_MAX bytes of room past o->limit) and written out
 * in big chunks. Messages about failures go to stderr, naming prog and
 * the file.
 */

/*
 * The one rule for names that a terminal or a line format shows (every
 * view but JSON, Chrome's JSON, fxt and uftrace's files, which escape as
 * their formats say, and the commands' messages): each byte that is not
 * part of a character a terminal shows as one (C0 controls, DEL, C1
 * controls, U+FFFE/U+FFFF, bytes of invalid UTF-8) becomes '?', so a name
 * never splits a line nor moves the cursor; every other byte stays as it
 * is (fmt_names.c).
 *
 * view_put_clean() - s[0..len) so at p: exactly len bytes. Returns the
 * end; *chars (may be NULL) the characters written.
 * view_is_clean() - whether the rule leaves s[0..len) as it is.
 * view_fputs_clean() - the NUL-terminated s so to f (a message).
 */
char *view_put_clean(char *p, const char *s, size_t len, uint32_t *chars);
int view_is_clean(const char *s, size_t len);
void view_fputs_clean(const char *s, FILE *f);

struct out {
	int fd;
	const char *prog;
	const char *path; /* for messages */
	char *buf, *p, *limit;
	size_t cap;
	int failed;
};

/*
 * out_create() - the one way a command creates an output file (every
 * view, -o of ptrace-read and ptrace-capture --view, lcov, the files of
 * a uftrace directory): mode 0600, as rings are (traces hold names and
 * addresses), never through a symbolic link. An existing regular file
 * of ours is emptied and made 0600; a device or FIFO (-o /dev/null) is
 * written as it is. Returns the descriptor, or -errno: -ELOOP (path is
 * a symbolic link), -EPERM (another user's file), -EMLINK (a file with
 * other hard links).
 */
int out_create(const char *path);

/* out_create_error() - the message for out_create()'s err, naming path:
 * what went wrong and what to do. */
void out_create_error(const char *prog, const char *path, int err);

/* out_open() - path (NULL: standard output; else out_create()). Returns
 * 0, or -1 after a message. */
int out_open(struct out *o, const char *prog, const char *path);

/* out_write() - data, unbuffered (after what is buffered: flush first). */
int out_write(struct out *o, const void *data, size_t len);

/* out_flush() - write what is buffered. Returns 0 or -1. */
int out_flush(struct out *o);

/* out_room() - flush when the buffer passed its limit. Returns 0 or -1. */
static inline int out_room(struct out *o)
{
	return o->p > o->limit ? out_flush(o) : 0;
}

/* out_close() - flush, close a file, free. Returns 0 or -1. */
int out_close(struct out *o);

/*
 * Fast text and JSON-lines formatting of events, with the names of a ring
 * (format.c, fmt_names.c). Everything a line shows comes from the X-macro
 * table in strace/event.h: type names, operand names and operand kinds.
 * The formatter has no per-type code, only per-kind code.
 *
 * Speed: lines are built by hand (digit tables, no printf) into a caller's
 * buffer; the caller writes the buffer out in big chunks.
 */

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
/* ptrace-read --srcline adds two source lines to a line (srclines_append():
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

/*
 * ptrace-read -F/--fields (fields.c): the fields of an event line that the
 * user chooses, in the order given, as perf script -F takes them
 * (docs/viewing.md, "Fields").
 *
 * Text: the fields separated by blanks; an address as perf script writes
 * it (hex without 0x), then its symbol (sym, +0xOFF with offset) and its
 * DSO in parentheses (dso), with "=>" between from and to; the CPU as
 * perf writes it ("[002]"), from the thread's last cpu event ("[-]"
 * before one); srcline: the source line of from (else to) as perf
 * script prints it, last, on a line of its own after two blanks ("??"
 * lines not shown). JSON: one object per line with the chosen keys
 * (srcline: from_srcline and to_srcline, "FILE:LINE" or null). The slow
 * path beside the formatter (one event at a time, names looked up each
 * time): what a person asks for by hand.
 */

enum fields_id {
	FLD_SEQ,
	FLD_TIME,
	FLD_TID,
	FLD_PID,
	FLD_COMM,
	FLD_TYPE,
	FLD_FROM,
	FLD_TO,
	FLD_SYM,
	FLD_OFFSET,
	FLD_DSO,
	FLD_FLAGS,
	FLD_CPU,
	FLD_SRCLINE,
	FLD_COUNT
};

struct fields {
	uint8_t order[FLD_COUNT]; /* the fields to print, in order */
	unsigned n;
	uint32_t mask; /* 1 << each field chosen */
	/* cpu: each thread's CPU, from its cpu events (open addressing by
	 * tid: tid + 1 << 32 | cpu; 0 empty) */
	uint64_t *cpus;
	size_t ncpus, cpucap;
	/* srcline: the DWARF of the traced objects (srclines_new()) */
	struct srclines *src;
};

/* The most one line takes: names of FMT_NAME_MAX bytes escaped, numbers. */
#define FIELDS_LINE_MAX (16 * 1024 + 256 + 2 * (6 * 512 + 32))

/*
 * fields_parse() - "time,tid,from,to,sym" into fl.
 * Returns 0, or -1 with why in err (len bytes): an unknown or repeated
 * field, an empty list, sym/offset/dso/srcline without from or to, no
 * memory for srcline.
 */
int fields_parse(struct fields *fl, const char *spec, char *err, size_t len);

/*
 * fields_text() / fields_json() - the line of event e (number seq) at p,
 * names from names (may be NULL: addresses only); at most
 * FIELDS_LINE_MAX bytes. Every event of the ring goes through
 * fields_see() first (the CPUs of the threads), shown or not.
 * Returns the end of the line (after '\n').
 */
void fields_see(struct fields *fl, const struct strace_event *e);
char *fields_text(const struct fields *fl, struct strace_names *names,
		  char *p, const struct strace_event *e, uint64_t seq);
char *fields_json(const struct fields *fl, struct strace_names *names,
		  char *p, const struct strace_event *e, uint64_t seq);

/* fields_fini() - free what fields_see() and srcline kept. */
void fields_fini(struct fields *fl);
/* fields_open() - before the first event: the source lines' resolver of
 * the srcline field (srclines_new(cache_dir)), if fl has it. Returns 0,
 * -1 without memory. */
int fields_open(struct fields *fl, const char *cache_dir);

/*
 * The stack views (views.c, views_label.c, views_report.c) and the viewer
 * formats (fmt_*.c), each in a file of its own. Each is fed the events of
 * a ring through strace_stack and prints to an out buffer; memory is
 * bounded by the stack depth and the distinct functions (or stacks, for
 * folded), not by the length of the trace.
 */

enum view_kind {
	VIEW_TREE,
	VIEW_REPORT,
	VIEW_FOLDED,
	VIEW_CHROME,  /* Chrome trace event JSON (cli/view/fmt_chrome.c) */
	VIEW_FXT,     /* Fuchsia trace format (cli/view/fmt_fxt.c) */
	VIEW_UFTRACE, /* a uftrace data directory (cli/view/fmt_uftrace.c) */
	VIEW_SVG,     /* an SVG flame graph (cli/view/fmt_svg.c) */
};

/* svg: the folded stacks merged (a flame graph), or every frame where it
 * ran, per thread, in time order (a flame chart) */
enum view_flame { VIEW_FLAME_MERGED, VIEW_FLAME_TIME };

enum view_sort { VIEW_SORT_TOTAL, VIEW_SORT_SELF, VIEW_SORT_CALLS };
enum view_by { VIEW_BY_FUNCTION, VIEW_BY_THREAD, VIEW_BY_DSO };

struct view_opts {
	int kind;          /* enum view_kind */
	uint32_t depth;    /* frames this deep and deeper (under the
			    * --sym scope) are not shown (0: all) */
	uint64_t min_time; /* frames shorter than this (ns) are not shown,
			    * nor their callees (uftrace -t; 0: all) */
	int sort;          /* report: enum view_sort */
	int by;            /* report: enum view_by */
	int weight_calls;  /* folded, svg merged: weigh by calls, not
			    * nanoseconds */
	int machine;       /* the machine's stack, not the person's
			    * (strace_stack_opts.machine) */
	const char *dir;   /* uftrace: the directory to write (-o) */
	int rows_only;     /* report: print nothing; view_report_rows()
			    * gives the rows */
	int flame;         /* svg: enum view_flame */
	double min_width;  /* svg: boxes narrower (in pixels of the
			    * 1200-pixel image) are left out and counted
			    * (0: only those of no width) */
	/* tree and report --srcline: where the function at addr is
	 * declared (1 and *file, *line; 0: not known), shown as uftrace
	 * replay --srcline does (report: a Source:Line column); NULL: not
	 * shown. (A callback: the stack views link no
	 * DWARF.) */
	int (*srcline)(void *arg, uint64_t addr, const char **file,
		       unsigned *line);
	void *srcline_arg;
	/* --inline: inlined functions as frames (strace_stack_opts.inlines;
	 * NULL: none) */
	int (*inlines)(void *arg, uint32_t tid, uint64_t addr,
		       const struct strace_stack_inline **out);
	void *inlines_arg;
};

/* svg: ptrace-read's min_width (--min-width), in pixels */
#define VIEW_MIN_WIDTH 0.1

struct view;

/* view_new() - a view printing to out, naming with names, keeping what
 * flt keeps (may be NULL). Returns 0, or -ENOMEM. */
int view_new(const struct view_opts *o, struct strace_names *names,
	     struct strace_filter *flt, struct out *out, struct view **v);

/* view_feed() - the next events, of types among seen (bit 1 << type % 64;
 * ~0: not known). Returns 0, -ENOMEM, or -1 when writing the output
 * failed (a message was printed). */
int view_feed(struct view *v, const struct strace_event *ev, size_t n,
	      uint64_t seen);

/* view_finish() - the end of the trace: every frame left; the report and
 * the folded stacks printed. Returns 0 or -1. */
int view_finish(struct view *v);

/* view_frames_shown() - with filters, --depth or --min-time: 1 when the
 * view showed a frame so far (one passed them all), else 0; without
 * them, 0 (not counted). */
int view_frames_shown(const struct view *v);

/* A row of a report: what -f report prints on one line. */
struct view_row {
	const char *name; /* as the report names the row under Function,
			   * Thread or DSO (no DSO column); NUL-terminated */
	uint64_t calls, total, self, max; /* max: the longest call (ns) */
};

/*
 * view_report_rows() - the rows of a report view made with rows_only,
 * after view_finish(): those it would print, in its order (--sort).
 * *rows (names included) is the view's, valid until view_free().
 * Returns the number of rows; -ENOMEM; -EINVAL when v is not such a
 * view or view_finish() did not succeed.
 */
long view_report_rows(struct view *v, const struct view_row **rows);

/* view_stack_stats() - the stacks' counts. */
void view_stack_stats(const struct view *v, struct strace_stack_stats *st);

void view_free(struct view *v);

/*
 * Two reports compared, function by function (report_diff.c; ptrace-read
 * -f report --diff OLD NEW), in the layout of uftrace report --diff
 * (docs/stacks.md, "Comparing two runs"). The rows come from two report
 * views (view_report_rows()); rows are matched by their name text, never
 * by address: two runs load their code at different addresses.
 */

/* --diff-policy, as uftrace's: bits of report_diff_opts.policy */
#define REPORT_DIFF_ABS 1u     /* sort by the size of a change, not its
				* sign (default on) */
#define REPORT_DIFF_PERCENT 2u /* the change of the times in percent of
				* the base's */
#define REPORT_DIFF_FULL 4u    /* the base's and the new run's figures
				* beside each change */

struct report_diff_opts {
	int sort;        /* enum view_sort: whose change orders the rows */
	unsigned policy; /* REPORT_DIFF_* */
	int by;          /* enum view_by of the rows: the last column's
			  * title (Function, DSO) */
	const char *base_name, *new_name; /* for the header (the paths) */
};

/*
 * report_diff_policy() - parse a --diff-policy value into *policy (which
 * holds the default or what an earlier value set): words separated by
 * commas, abs, percent (each may be preceded by no-), full, compact.
 * Returns 0, or -1 with *bad pointing at the word not understood (up to
 * the next comma).
 */
int report_diff_policy(const char *s, unsigned *policy, const char **bad);

/*
 * report_diff_print() - the rows of both runs, matched by name (rows of
 * one name in one run summed, as uftrace keys its rows by name), each
 * function's change from base to new: calls, total and self time;
 * a function of one run only has the other's figures 0 (shown "-" as
 * uftrace does). Sorted by the change of o->sort, largest first.
 * Written to out. Returns 0; -ENOMEM; -1 when writing failed (a message
 * was printed).
 */
int report_diff_print(const struct report_diff_opts *o,
		      const struct view_row *base, size_t nbase,
		      const struct view_row *new_rows, size_t nnew,
		      struct out *out);


/*
 * Source lines (srcline.c) of traced addresses, for -F srcline,
 * --srcline and the tree's --srcline: the address's DSO and its offset
 * from the ring's names (strace_names_dso(), strace_names_dso_offset()),
 * its line from the DWARF layer (decoder/decoder.h:
 * strace_dwarf_srcline()). Each object is opened once, on first use; a
 * missing one, or one without debug information, gives no line.
 */
struct srclines;

/* srclines_new() - an empty resolver, NULL without memory; cache_dir:
 * where the DWARF layer keeps its tables (strace_dwarf_opts), or NULL. */
struct srclines *srclines_new(const char *cache_dir);
void srclines_free(struct srclines *s);

/*
 * srclines_object() - the object a traced address is in (its path, valid
 * until the next call) and the address in the object's own addresses, as
 * objdump and addr2line take them: from the base the producer wrote for
 * the DSO, else from where the object's code segment is. Returns 1, or 0
 * when no DSO holds addr.
 */
int srclines_object(struct srclines *s, struct strace_names *names,
		    uint64_t addr, const char **path, uint64_t *off);

/* srclines_dwarf() - the DWARF layer s opened its objects with, for other
 * questions about them (inline chains: strace_dwarf_inlines()). */
struct strace_dwarf;
struct strace_dwarf *srclines_dwarf(const struct srclines *s);

/*
 * srclines_get() - the line of the instruction at addr (a traced
 * address) as "FILE:LINE" in *file and *line: FILE as addr2line prints
 * it, valid until srclines_free(). Returns 1, or 0 when there is none
 * (no names, no DSO there, no debug information, no row).
 */
int srclines_get(struct srclines *s, struct strace_names *names,
		 uint64_t addr, const char **file, unsigned *line);

/*
 * srclines_function() - where the function with code at addr is
 * declared (FILE:LINE as uftrace replay --srcline shows it). Returns 1,
 * or 0 when not known.
 */
int srclines_function(struct srclines *s, struct strace_names *names,
		      uint64_t addr, const char **file, unsigned *line);

/*
 * srclines_append() - ptrace-read --srcline: the line of event e at
 * [start, end) (text or JSON, ending in '\n') with the source line of
 * each of its code addresses added: text " from_srcline=FILE:LINE",
 * JSON ',"from_srcline":"FILE:LINE"' (the operand's name, then
 * _srcline), an address without a line left out. At most
 * SRCLINE_APPEND_MAX bytes more. Returns the new end.
 */
#define SRCLINE_FILE_MAX 512
#define SRCLINE_APPEND_MAX (2 * (6 * SRCLINE_FILE_MAX + 64))
char *srclines_append(struct srclines *s, struct strace_names *names,
		      char *start, char *end, const struct strace_event *e,
		      int json);

#endif /* CLI_VIEW_VIEW_H */
