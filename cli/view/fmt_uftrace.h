/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_uftrace.h - the private parts of ptrace-read -f uftrace, shared
 * by its files: the threads' data files and the per-event code
 * (fmt_uftrace.c, which describes the data directory at its top), the
 * modules, their .sym files and the map (fmt_uftrace_sym.c), the task,
 * events and info files (fmt_uftrace_info.c), and beneath them all the
 * directory, its small files and a string builder (fmt_uftrace_dir.c).
 * Calls go downward only, in that order.
 */
#ifndef CLI_FMT_UFTRACE_H
#define CLI_FMT_UFTRACE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "frames.h"
#include "view.h"

#define PROG "ptrace-read"

#define UFT_MAGIC 5u            /* RECORD_MAGIC_V4 */
#define UFT_ENTRY 0u
#define UFT_EXIT 1u
#define UFT_EVENT 3u
#define UFT_EVENT_USER 1000000u /* EVENT_ID_USER: events.txt names them */
#define UFT_EVENTS_MAX 64
#define UFT_DEPTH_FIELD 1024u   /* the depth field's 10 bits */
#define UFT_DEPTH_MAX 65535u    /* the header's max_stack is 16 bits */
#define UFT_USER_TOP (1ull << 47) /* x86-64 user space ends here */
#define UFT_LABELS (1ull << 47)   /* the labels' module */
#define UFT_ADDR_MASK ((1ull << 48) - 1)
#define UFT_MAX_FDS 256
#define LABELS_PATH "ptrace-read-labels"

/* The second word of a record. */
static inline uint64_t rec_word(uint64_t type, uint32_t depth, uint64_t addr)
{
	return type | (uint64_t)UFT_MAGIC << 3 |
	       (uint64_t)(depth & (UFT_DEPTH_FIELD - 1)) << 6 |
	       (addr & UFT_ADDR_MASK) << 16;
}

struct uthr {
	/* the hot part: what a record needs */
	unsigned char *cur, *end; /* where the next record goes; buf + cap */
	uint64_t last;            /* the time of the last record */
	uint32_t tid;
	uint32_t open;            /* written frames open: the next depth */
	uint8_t root_pending;     /* a ROOT frame waits for the frames above */
	int fd;               /* -1 while closed */
	uint8_t made;         /* the file exists: reopening appends */
	uint8_t noalloc;      /* fallocate failed: not tried again */
	uint64_t size, alloc; /* bytes written, bytes reserved (fallocate) */
	uint64_t first;       /* the time of the first record */
	unsigned char *buf;
	/* the ROOT frames written, in the order found (move_roots()) */
	struct uroot *roots;
	size_t nroots, caproots;
};

/* A ROOT frame in its thread's file: its entry's and exit's records (by
 * number; the exit UINT64_MAX until written), its entry word and when it
 * began. */
struct uroot {
	uint64_t entry, exit, word, begin;
};

struct label {
	uint64_t key;  /* the frame's address */
	uint64_t id;   /* view_name_id() */
	uint64_t addr; /* the address written; 0: a free slot */
};

struct uft {
	struct view *v;
	char dir[PATH_MAX];
	/* threads */
	struct uthr **t;
	size_t nt, tcap;
	uint32_t *tmap; /* tid -> index + 1, open addressing */
	size_t tmapcap;
	struct uthr *last;
	unsigned nfds;
	size_t victim;
	/* the address written for each function, by names id (0: not yet) */
	uint64_t *fnaddr;
	/* --inline: inlined functions' addresses (in the labels' module),
	 * by the stack's id of the function (0: none yet) */
	uint64_t *inladdr;
	size_t inlcap;
	size_t fncap;
	/* the address written for each other label (unnamed code, syscalls,
	 * signals), open addressing */
	struct label *labs;
	size_t nlabs, labcap;
	uint64_t sig_addr; /* [signal] */
	/* [syscall] and "[syscall NAME]" (open addressing by view_name_id();
	 * full: a pseudo address each time) */
	struct {
		uint64_t id, addr;
	} sys[256];
	/* the labels' module: the label id of each of its addresses */
	uint64_t *pseudo;
	size_t npseudo, pcap;
	uint64_t deep;    /* frames not written: deeper than UFT_DEPTH_MAX */
	uint64_t gaps;    /* gap events */
	char ev[UFT_EVENTS_MAX][48]; /* the names of the gap events */
	size_t nev;
	char path[PATH_MAX + 64];
	char name[FMT_NAME_MAX + 256];
};

/* A string builder: a file's bytes before they are written; failed
 * once memory ran out (what follows is dropped). */
struct sb {
	char *p;
	size_t len, cap;
	int failed;
};

/* A module: a group of the ring's DSO entries (address order: one path,
 * or overlapping), one map line; groups of one path with the same span
 * share the first one's .sym file, as uftrace shares a module among the
 * map lines of one path. */
struct msym {
	uint64_t off, size;
	uint64_t id;  /* names id of a symbol, or a label id */
	int synth;    /* a label of unnamed code */
};

struct mod {
	uint64_t start, end;
	const struct strace_name *dso; /* its first entry */
	size_t owner;                  /* the module whose .sym it shares */
	char *path;                    /* owners: the path on its map line */
	struct msym *syms;             /* owners */
	size_t nsyms, scap;
};

/* fmt_uftrace_dir.c: the directory and its files. Each returns -1 after
 * a message and view_fail() (uft_write_all() only sets errno). */
/* uft_fail_create() - out_create()'s err on path said (out_create_error),
 * and the view failed. Returns -1. */
int uft_fail_create(struct view *v, const char *path, int err);
int uft_fail_file(struct view *v, const char *path, const char *what);
int uft_write_all(int fd, const void *data, size_t len);
/* DIR/name, in u->path. */
const char *uft_in_dir(struct uft *u, const char *name);
int uft_put_file(struct view *v, struct uft *u, const char *name,
		 const void *data, size_t len);
int uft_prepare_dir(struct view *v, struct uft *u);

/* fmt_uftrace_dir.c: the string builder. */
char *uft_sb_room(struct sb *b, size_t n);
void uft_sb_add(struct sb *b, const char *s, size_t n);
void uft_sb_str(struct sb *b, const char *s);
__attribute__((format(printf, 2, 3))) void uft_sb_printf(struct sb *b,
							 const char *fmt, ...);

/* fmt_uftrace_sym.c: the modules (*mods, *nmods: the caller frees each
 * one's path and syms, then the array), their .sym files, and the map
 * lines in *map. */
int uft_write_modules(struct view *v, struct uft *u, struct sb *map,
		      struct mod **mods, size_t *nmods);
const char *uft_base_name(const char *path);

/* fmt_uftrace_info.c: task.txt, the sid-SID.map files (map), events.txt
 * and info. */
int uft_write_meta(struct view *v, struct uft *u, struct mod *m, size_t n,
		   const struct sb *map);

#endif
