/* SPDX-License-Identifier: MIT */
/*
 * cli/read.h - what the files of ptrace-read share (private to the
 * command): its options, parsed once by main() in ptrace-read.c; the
 * state of a read; its messages and signals (read_common.c); and the
 * commands main() dispatches to, one file each.
 */
#ifndef CLI_READ_H
#define CLI_READ_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "control.h"
#include "cli/view/view.h"
#include "strace/event.h"
#include "strace/filter.h"
#include "strace/plugin.h"
#include "strace/ring.h"
#include "strace/stack.h"

#define PROG "ptrace-read"

/* exit codes (documented in the man page) */
enum {
	EXIT_OK = 0,
	EXIT_ERR = 1,        /* runtime error: file, ring, output */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_INCOMPLETE = 3, /* events were lost or a writer died */
};

#define BATCH_MAX 16384 /* events per reader batch */

/* The command line, as main() parsed it. */
/* --- reading ------------------------------------------------------------- */

struct read_opts {
	int format;
	int follow;
	long timeout_ms; /* -1: no limit */
	int timeout_set;
	const char *types;
	const char *output;
	int from_end;
	int no_comm;
	int no_cache; /* --no-cache: no DWARF tables from or to the cache */
	/* generate */
	long long generate;
	int readers;
	int mode;
	unsigned long long capacity;
	int stat;
	int gc;
	int list_types;
	int srcline; /* --srcline: source lines in text and JSON lines */
	/* -F: the fields of text and JSON lines (fields.n 0: all) */
	struct fields fields;
	/* stack views (-f tree, report, folded) */
	int view; /* 0: none, else 1 + enum view_kind */
	int cover; /* -f lcov: 1, -f coverage: 2; 0: neither */
	struct view_opts vo;
	int inline_frames;    /* --inline: inlined functions as frames */
	const char *diff;     /* -f report --diff OLD: the base ring */
	unsigned diff_policy; /* REPORT_DIFF_* */
	int diff_policy_set;
	/* read-side filters, in the order given */
	struct {
		int kind; /* enum strace_filter_kind */
		const char *value;
	} filters[64];
	int nfilters;
	/* plugins, in the order given, and the control FIFO */
	const char *plugins[32];
	int nplugins;
	const char *control;
};

struct rd {
	const struct read_opts *o;
	const char *path;
	struct strace_ring *ring;
	struct strace_reader *r;
	struct fmt_filter flt;
	int flight;
	struct strace_names *names;
	struct fmt fmt;
	struct out out;
	struct strace_event *copy; /* flight mode: the batch, copied */
	/* -f ring */
	struct strace_ring *dst;
	struct strace_writer *w;
	uint64_t nread, nlost;
	uint64_t first_seq;  /* where this reader started */
	int started;
	uint64_t ring_lost;  /* events lost by writers (lost events in the ring) */
	uint64_t seen;       /* the types of the batch (count_ring_losses) */
	/* -F: o->fields with the threads' CPUs (fields_see()) */
	struct fields fields;
	struct srclines *srcl; /* --srcline (text, jsonl): NULL when not */
	/* read-side filters (--time, --tid, --sym, ...): NULL when none */
	struct strace_filter *filt;
	struct strace_stack *fstack; /* the stacks --sym / --no-sym need */
	struct view *view;           /* -f tree, report, folded */
	struct read_inline *inl;     /* --inline: the inline chains */
	int usage;                   /* a setup failed on the command line */
	struct strace_plugins *plugins; /* --plugin: NULL when none */
	int plugin_stop;                /* a plugin asked to stop */
	struct control ctl;             /* --control */
};

/* read_common.c: the messages and the signals */

/* Set by SIGINT and SIGTERM once catch_signals() ran. */
extern volatile sig_atomic_t stop_flag;
void catch_signals(void);
/* A SIGBUS while path is mapped: a message naming it, exit 1. */
void catch_sigbus(const char *path);
/* stop_flag, as strace_writer_set_stop() asks for it. */
int stop_cb(void *arg);
__attribute__((format(printf, 1, 2))) void err(const char *fmt, ...);
/* The message, the usage text, a hint; returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...);
/* The usage text and the hint alone (getopt said what was wrong). */
int usage_short(void);
/* -h: the usage and the help texts on standard output. */
void print_help(void);
/* What went wrong opening or creating a ring, and what to do about it. */
/* read_cache_dir() - the persistent cache's directory for the DWARF
 * layer's tables (strace_dwarf_opts.cache_dir), in buf; NULL with
 * --no-cache or without one. */
const char *read_cache_dir(const struct read_opts *o, char *buf, size_t len);
void ring_error(const char *path, int rc, const char *doing);

static inline uint64_t pow2_ceil(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

/* read_open.c: setting up a read */
int open_ring(const struct read_opts *o, const char *path,
	      struct strace_ring **ring, int *timed_out);
int save_ring_create(struct rd *d);
int same_file(const char *a, const char *b);
int scan_ring(struct rd *d,
	      void (*visit)(void *arg, const struct strace_event *ev, size_t n),
	      void *arg);
int setup_filters(struct rd *d);
void say_unmatched(struct rd *d, const char *path);

/* read_inline.c: --inline's resolver of inline chains from the DWARF of
 * the objects (strace_stack_opts.inlines, memoized per address); _new:
 * 0, -ENOMEM */
struct read_inline;
int read_inline_new(struct strace_names *names, const char *cache_dir,
		    struct read_inline **out);
void read_inline_free(struct read_inline *ri);
int read_inline_resolve(void *arg, uint32_t tid, uint64_t addr,
			const struct strace_stack_inline **out);

/* read_view.c: the stack views */
int setup_view(struct rd *d);
int warn_size(struct rd *d);
void say_no_frames(struct rd *d, const char *path);

/* read_plugins.c: --plugin, --control */
int setup_plugins(struct rd *d);
int plugin_command(void *arg, const char *line, char *reply, size_t len);

/* read_stat.c: "lossless", "flight", "archive" */
const char *mode_name(int mode);

/* read_list.c: what --stat DIR and --gc share */
/* Bytes in decimal units, into buf. */
const char *human(uint64_t b, char *buf, size_t len);
/* path with control bytes and backslashes escaped. */
void put_path(FILE *f, const char *path);
void command(FILE *f, const char *opt, const char *dir);
void scan_error(const char *dir, int rc);
/* dir, or the default directory's path in buf. */
const char *scan_where(const char *dir, char *buf, size_t len);

/* The commands; each returns the exit status. */
int cmd_read(const struct read_opts *o, const char *path, struct view **keep);
int cmd_diff(const struct read_opts *o, const char *path);
int cmd_generate(const struct read_opts *o);
int cmd_stat(const struct read_opts *o, const char *path);
/* -f lcov (o->cover 1) and -f coverage (2): read_cov.c */
int cmd_coverage(const struct read_opts *o, const char *path);
int cmd_list(const char *dir);
int cmd_gc(const char *dir);
int cmd_list_types(void);

#endif
