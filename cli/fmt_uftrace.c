/* SPDX-License-Identifier: MIT */
/*
 * cli/fmt_uftrace.c - ptrace-read -f uftrace -o DIR: a uftrace data
 * directory (format version 4, as uftrace 0.13 reads it), so that
 * `uftrace replay|report|graph|dump|info -d DIR` work on a ring
 * (docs/viewing.md, "The uftrace data directory").
 *
 * What is written, and which uftrace sources read it (tag v0.13):
 *
 *   TID.dat    per thread: 16-byte records (uftrace.h, struct
 *              uftrace_record): the time in ns, then one word of type
 *              (bits 0-1: 0 entry, 1 exit, 3 event), more (bit 2, always
 *              0: no arguments), magic (bits 3-5: 0b101), depth (bits
 *              6-15) and address (bits 16-63). Written as frames enter
 *              and leave, through a buffer per thread; times never go
 *              back within a file (utils/fstack.c: read_task_ustack,
 *              fstack_account_time).
 *   info       the header (magic "Ftrace!", version 4, header size 40,
 *              endian, ELF class, features TASK_SESSION | SYM_REL_ADDR |
 *              MAX_STACK (| EVENT), the info mask, max_stack), then the
 *              info lines of the mask's bits in bit order (cmds/info.c:
 *              read_uftrace_info; utils/data-file.c: open_info_file).
 *   task.txt   "SESS timestamp=S.N pid=P sid=SID exename=\"PATH\"" per
 *              process, then "TASK timestamp=S.N tid=T pid=P" per thread
 *              (utils/data-file.c: read_task_txt_file; utils/session.c:
 *              create_session, create_task, find_task_session).
 *   sid-SID.map  per process: /proc/PID/maps lines, one per group of the
 *              ring's DSO entries, and a [stack] line (utils/session.c:
 *              read_session_map: the first line of a path is its base;
 *              the [stack] line tells where kernel addresses begin,
 *              guess_kernel_base; without it every address is taken for
 *              a kernel one).
 *   NAME.sym   per module, nm-like "%016x T name" lines relative to the
 *              module's base (SYM_REL_ADDR), each followed by a
 *              "? __func_end" line where the symbol ends before the next
 *              begins (utils/symbol.c: load_module_symbol_file,
 *              check_symbol_file, find_symtabs).
 *   events.txt "EVENT: ID ptrace-read:NAME" for the gaps' user events
 *              (utils/event.c: read_events_file, event_get_name).
 *
 * Addresses: a frame's record carries its function's start (the symbol
 * entry's); a frame without a symbol in a DSO carries its own address,
 * and the DSO's .sym file gets a symbol there named as every view names
 * it ("[libc.so.6]+0x1234"). What has no DSO below 2^47 (code outside
 * every DSO, [syscall], [signal], symbols outside DSOs) gets an address
 * of its own at 0x800000000000 + N, in a module of labels
 * ("ptrace-read-labels"): uftrace shows the names -f tree shows.
 *
 * Depths: a record's depth is the number of the thread's written frames
 * open under it, so uftrace's own count of entries and exits agrees with
 * it whatever the filters leave out. uftrace counts its stack itself and
 * reads the 10-bit depth field only to compare an entry with the exit
 * after it: deeper frames are written with the depth modulo 1024, and
 * the header's max_stack (uftrace's stack per thread) is raised to the
 * deepest frame (uftrace replay shows 1024 levels unless given -D). A
 * ROOT frame (found late, under the open frames, which all leave next)
 * is written once they have left, at depth 0; when the thread's file is
 * complete, its entry is moved to the file's start, at the time the frame
 * began (the thread's first event: a uftrace file is in time order, and
 * was written on before the frame was known), the ROOT frames found
 * later outside those found earlier, and the depths of the records
 * between are raised to match (move_roots()).
 *
 * Gaps (overflow, error, lost) are user events in the thread's file
 * (every thread's, for a loss of the ring's), at the depth they happened:
 * uftrace replay prints "/" "* ptrace-read:overflow *" "/" there.
 *
 * Memory: per thread a buffer (64 KiB for the first 64 threads, then
 * 16 KiB, then 4 KiB) and at most 256 open files; per names entry an
 * address; per distinct unnamed address an entry. The .sym, .map, task
 * and info files are written at the end, from the names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "strace/version.h"
#include "views.h"

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

/* --- files ----------------------------------------------------------------- */

static int fail_file(struct view *v, const char *path, const char *what)
{
	fprintf(stderr, "%s: %s: %s: %s\n", PROG, path, what, strerror(errno));
	view_fail(v, -1);
	return -1;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *s = data;

	while (len) {
		ssize_t n = write(fd, s, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

static const char *in_dir(struct uft *u, const char *name)
{
	snprintf(u->path, sizeof(u->path), "%s/%s", u->dir, name);
	return u->path;
}

/* A whole small file: DIR/name. */
static int put_file(struct view *v, struct uft *u, const char *name,
		    const void *data, size_t len)
{
	const char *path = in_dir(u, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return fail_file(v, path, "cannot create the file");
	if (write_all(fd, data, len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return fail_file(v, path, "write failed; check free space");
	}
	if (close(fd) < 0)
		return fail_file(v, path, "close failed");
	return 0;
}

/* Whether name is one of the files a uftrace data directory holds. */
static int uftrace_file(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "info") || !strcmp(name, "task.txt") ||
	    !strcmp(name, "task") || !strcmp(name, "default.opts") ||
	    !strcmp(name, "events.txt") || !strcmp(name, "extern.dat"))
		return 1;
	if (n > 4 && (!strcmp(name + n - 4, ".sym") ||
		      !strcmp(name + n - 4, ".dbg") ||
		      !strcmp(name + n - 4, ".map")))
		return 1;
	return n > 4 && !strcmp(name + n - 4, ".dat");
}

/*
 * DIR ready for the files: made when missing; an empty directory is
 * used as it is; one holding a uftrace data directory (an "info" file
 * that begins with uftrace's magic) has that data removed first, as a
 * new recording replaces an old one; anything else is left alone.
 */
static int prepare_dir(struct view *v, struct uft *u)
{
	DIR *d;
	struct dirent *de;
	char magic[8];
	int fd, other = 0, is_uft = 0;

	if (mkdir(u->dir, 0755) == 0)
		return 0;
	if (errno != EEXIST)
		return fail_file(v, u->dir, "cannot create the directory (-o)");
	d = opendir(u->dir);
	if (!d)
		return fail_file(v, u->dir, "not a directory that can be read (-o)");
	fd = open(in_dir(u, "info"), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		is_uft = read(fd, magic, 8) == 8 && !memcmp(magic, "Ftrace!", 8);
		close(fd);
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			other = 1;
	if (other && !is_uft) {
		closedir(d);
		fprintf(stderr,
			"%s: %s: the directory is not empty and holds no uftrace "
			"data (-o): name a new or empty directory\n",
			PROG, u->dir);
		view_fail(v, -1);
		return -1;
	}
	rewinddir(d);
	while (is_uft && (de = readdir(d)) != NULL)
		if (uftrace_file(de->d_name) &&
		    unlink(in_dir(u, de->d_name)) < 0 && errno != ENOENT) {
			closedir(d);
			return fail_file(v, u->path, "cannot remove the old file");
		}
	closedir(d);
	return 0;
}

/* --- threads --------------------------------------------------------------- */

static const char *thr_file(struct uft *u, const struct uthr *t)
{
	char name[32];

	snprintf(name, sizeof(name), "%u.dat", t->tid);
	return in_dir(u, name);
}

/* Close a thread's file; the space reserved past its end is given back
 * (ftruncate frees what fallocate kept beyond the size). */
static int thr_close(struct view *v, struct uft *u, struct uthr *t)
{
	int rc = 0;

	if (t->fd < 0)
		return 0;
	if (t->alloc > t->size && ftruncate(t->fd, (off_t)t->size) < 0)
		rc = fail_file(v, thr_file(u, t), "cannot truncate the file");
	if (close(t->fd) < 0 && !rc)
		rc = fail_file(v, thr_file(u, t), "close failed");
	t->fd = -1;
	t->alloc = t->size;
	u->nfds--;
	return rc;
}

static int thr_flush(struct view *v, struct uft *u, struct uthr *t);

/* Close another thread's file than t's (the next in turn). Returns 1,
 * 0 when none is open, -1 after a message. */
static int close_other(struct view *v, struct uft *u, const struct uthr *t)
{
	for (size_t k = 0; k < u->nt; k++) {
		struct uthr *o = u->t[(u->victim + k) % u->nt];
		if (o == t || o->fd < 0)
			continue;
		u->victim = (u->victim + k + 1) % u->nt;
		return thr_flush(v, u, o) < 0 || thr_close(v, u, o) < 0 ? -1 : 1;
	}
	return 0;
}

static int thr_flush(struct view *v, struct uft *u, struct uthr *t)
{
	size_t len = (size_t)(t->cur - t->buf);
	int rc;

	if (!len)
		return 0;
	while (t->fd < 0) {
		/* at most UFT_MAX_FDS files open, fewer if the limit says so */
		if (u->nfds >= UFT_MAX_FDS && close_other(v, u, t) < 0)
			return -1;
		t->fd = open(thr_file(u, t),
			     O_WRONLY | O_CREAT | O_CLOEXEC |
				     (t->made ? O_APPEND : O_TRUNC),
			     0644);
		if (t->fd >= 0) {
			t->made = 1;
			u->nfds++;
			break;
		}
		if ((errno != EMFILE && errno != ENFILE) ||
		    (rc = close_other(v, u, t)) == 0)
			return fail_file(v, thr_file(u, t),
					 "cannot create the file");
		if (rc < 0)
			return -1;
	}
	if (t->size + len > t->alloc && !t->noalloc) {
		/* space reserved ahead, in growing steps: the file system
		 * allocates once per step, not once per page (about a
		 * third of the kernel's time in writing) */
		uint64_t step = t->alloc < (256u << 10) ? 256u << 10
				: t->alloc > (32u << 20) ? 32u << 20
							   : t->alloc;
		if (fallocate(t->fd, FALLOC_FL_KEEP_SIZE, (off_t)t->alloc,
			      (off_t)step) == 0)
			t->alloc += step;
		else
			t->noalloc = 1; /* not on this file system: plain writes */
	}
	if (!t->size)
		memcpy(&t->first, t->buf, 8); /* its first record's time */
	if (write_all(t->fd, t->buf, len) < 0)
		return fail_file(v, thr_file(u, t),
				 "write failed; check free space");
	t->size += len;
	t->cur = t->buf;
	return 0;
}

static __attribute__((noinline)) struct uthr *thr_new(struct view *v,
						      struct uft *u,
						      uint32_t tid)
{
	struct uthr *t;
	size_t i, bufsize;

	if (2 * (u->nt + 1) > u->tmapcap) {
		size_t cap = u->tmapcap ? 2 * u->tmapcap : 64;
		uint32_t *m = calloc(cap, sizeof(*m));
		if (!m)
			goto nomem;
		for (size_t k = 0; k < u->nt; k++) {
			i = (u->t[k]->tid * 0x9e3779b9u) & (cap - 1);
			while (m[i])
				i = (i + 1) & (cap - 1);
			m[i] = (uint32_t)k + 1;
		}
		free(u->tmap);
		u->tmap = m;
		u->tmapcap = cap;
	}
	if (u->nt == u->tcap) {
		size_t cap = u->tcap ? 2 * u->tcap : 16;
		struct uthr **a = realloc(u->t, cap * sizeof(*a));
		if (!a)
			goto nomem;
		u->t = a;
		u->tcap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	/* the buffers of many threads stay small; a few threads write in
	 * MiB steps (fewer, larger writes: 6% less CPU on the benchmark
	 * ring than 64 KiB) */
	bufsize = u->nt < 16     ? 1u << 20
		  : u->nt < 64   ? 65536
		  : u->nt < 1024 ? 16384
				 : 4096;
	t->buf = malloc(bufsize);
	if (!t->buf) {
		free(t);
		goto nomem;
	}
	t->cur = t->buf;
	t->end = t->buf + bufsize;
	t->tid = tid;
	t->fd = -1;
	i = (tid * 0x9e3779b9u) & (u->tmapcap - 1);
	while (u->tmap[i])
		i = (i + 1) & (u->tmapcap - 1);
	u->t[u->nt] = t;
	u->tmap[i] = (uint32_t)++u->nt;
	return u->last = t;
nomem:
	view_fail(v, -ENOMEM);
	return NULL;
}

/* The thread tid, or NULL when it has none yet. */
static inline struct uthr *thr_find(struct uft *u, uint32_t tid)
{
	size_t i;

	if (u->last && u->last->tid == tid)
		return u->last;
	if (u->tmapcap) {
		i = (tid * 0x9e3779b9u) & (u->tmapcap - 1);
		while (u->tmap[i]) {
			if (u->t[u->tmap[i] - 1]->tid == tid)
				return u->last = u->t[u->tmap[i] - 1];
			i = (i + 1) & (u->tmapcap - 1);
		}
	}
	return NULL;
}

static inline struct uthr *thr_of(struct view *v, struct uft *u, uint32_t tid)
{
	struct uthr *t = thr_find(u, tid);

	return t ? t : thr_new(v, u, tid);
}

/* A record into t's buffer, which has room: cur is read once (a store
 * through an unsigned char pointer may alias it, and would make the
 * compiler load it again) */
static inline void put16(struct uthr *t, uint64_t time, uint64_t w)
{
	unsigned char *c = t->cur;

	memcpy(c, &time, 8);
	memcpy(c + 8, &w, 8);
	t->cur = c + 16;
	t->last = time;
}

static inline void put_rec(struct view *v, struct uft *u, struct uthr *t,
			   uint64_t time, uint64_t word)
{
	if (t->cur == t->end && thr_flush(v, u, t) < 0)
		return;
	/* a thread's records in time order, as uftrace reads them */
	put16(t, time < t->last ? t->last : time, word);
}

/* --- addresses --------------------------------------------------------------- */

/* Whether uftrace can find addr through a DSO's map line. */
static int in_dso(struct view *v, uint64_t addr)
{
	struct strace_names *nm = view_names(v);
	const struct strace_name *d = nm ? strace_names_dso(nm, addr) : NULL;

	return d && addr && addr < UFT_USER_TOP && d->key < UFT_USER_TOP;
}

/* A new address in the labels' module for label id. */
static uint64_t pseudo_addr(struct view *v, struct uft *u, uint64_t id)
{
	if (u->npseudo == u->pcap) {
		size_t cap = u->pcap ? 2 * u->pcap : 256;
		uint64_t *p = realloc(u->pseudo, cap * sizeof(*p));
		if (!p) {
			view_fail(v, -ENOMEM);
			return UFT_LABELS;
		}
		u->pseudo = p;
		u->pcap = cap;
	}
	u->pseudo[u->npseudo] = id;
	return UFT_LABELS + u->npseudo++;
}

static __attribute__((noinline)) uint64_t fn_addr(struct view *v,
						  struct uft *u,
						  const struct strace_frame *f)
{
	const struct strace_name *fn = f->fn;
	uint64_t a;

	if (fn->id >= u->fncap) {
		size_t cap = u->fncap ? u->fncap : 1024;
		while (cap <= fn->id)
			cap *= 2;
		uint64_t *n = realloc(u->fnaddr, cap * sizeof(*n));
		if (!n) {
			view_fail(v, -ENOMEM);
			return UFT_LABELS;
		}
		memset(n + u->fncap, 0, (cap - u->fncap) * sizeof(*n));
		u->fnaddr = n;
		u->fncap = cap;
	}
	a = in_dso(v, fn->key) ? fn->key : pseudo_addr(v, u, view_name_id(v, f));
	u->fnaddr[fn->id] = a;
	return a;
}

/* The address of a frame without a function: unnamed code (its own
 * address in a DSO, else one in the labels' module), [syscall],
 * [signal]. */
static __attribute__((noinline)) uint64_t label_addr(struct view *v,
						     struct uft *u,
						     const struct strace_frame *f)
{
	uint64_t key = f->addr, a;
	size_t j;

	if (f->kind == STRACE_FRAME_SYSCALL) {
		uint64_t id = view_name_id(v, f);
		size_t k = (size_t)(id * 0x9e3779b97f4a7c15ull >> 56), i;

		for (i = 0; i < 256 && u->sys[k].addr && u->sys[k].id != id;
		     i++)
			k = (k + 1) & 255;
		if (i == 256)
			return pseudo_addr(v, u, id);
		if (!u->sys[k].addr) {
			u->sys[k].id = id;
			u->sys[k].addr = pseudo_addr(v, u, id);
		}
		return u->sys[k].addr;
	}
	if (f->kind == STRACE_FRAME_SIGNAL) {
		if (!u->sig_addr)
			u->sig_addr = pseudo_addr(v, u, view_name_id(v, f));
		return u->sig_addr;
	}
	if (2 * (u->nlabs + 1) > u->labcap) {
		size_t cap = u->labcap ? 2 * u->labcap : 1024;
		struct label *n = calloc(cap, sizeof(*n));
		if (!n) {
			view_fail(v, -ENOMEM);
			return UFT_LABELS;
		}
		for (size_t k = 0; k < u->labcap; k++) {
			if (!u->labs[k].addr)
				continue;
			j = (size_t)(u->labs[k].key * 0x9e3779b97f4a7c15ull >>
				     32) &
			    (cap - 1);
			while (n[j].addr)
				j = (j + 1) & (cap - 1);
			n[j] = u->labs[k];
		}
		free(u->labs);
		u->labs = n;
		u->labcap = cap;
	}
	j = (size_t)(key * 0x9e3779b97f4a7c15ull >> 32) & (u->labcap - 1);
	while (u->labs[j].addr) {
		if (u->labs[j].key == key)
			return u->labs[j].addr;
		j = (j + 1) & (u->labcap - 1);
	}
	/* a new one: in a DSO it keeps its address (the DSO's .sym file names it);
	 * elsewhere it goes to the labels' module */
	a = in_dso(v, key) ? key : pseudo_addr(v, u, view_name_id(v, f));
	u->labs[j].key = key;
	u->labs[j].id = view_name_id(v, f);
	u->labs[j].addr = a;
	u->nlabs++;
	return a;
}

/* The address written for f: uftrace finds f's name there. */
static inline uint64_t out_addr(struct view *v, struct uft *u,
				const struct strace_frame *f)
{
	/* (strace_stack gives [syscall] and [signal] frames no fn) */
	if (__builtin_expect(f->fn != NULL, 1)) {
		if (f->fn->id < u->fncap && u->fnaddr[f->fn->id])
			return u->fnaddr[f->fn->id];
		if (f->kind != STRACE_FRAME_SYSCALL &&
		    f->kind != STRACE_FRAME_SIGNAL)
			return fn_addr(v, u, f);
	} else if (u->labcap) {
		/* unnamed code seen before: its first probe */
		const struct label *l =
			&u->labs[(size_t)(f->addr * 0x9e3779b97f4a7c15ull >> 32) &
				 (u->labcap - 1)];
		if (l->key == f->addr && l->addr &&
		    f->kind != STRACE_FRAME_SYSCALL &&
		    f->kind != STRACE_FRAME_SIGNAL)
			return l->addr;
	}
	return label_addr(v, u, f);
}

/* --- the format -------------------------------------------------------------- */

static int uft_open(struct view *v)
{
	struct uft *u = calloc(1, sizeof(*u));
	const char *dir = view_opts(v)->dir;

	if (!u) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		view_fail(v, -1);
		return -1;
	}
	u->v = v;
	view_set_state(v, u);
	if (!dir || !*dir || strlen(dir) >= sizeof(u->dir)) {
		fprintf(stderr, "%s: -f uftrace needs a directory (-o DIR)\n",
			PROG);
		view_fail(v, -1);
		return -1;
	}
	strcpy(u->dir, dir);
	/* the gaps; the other events go to the stacks in batches */
	view_set_event_types(v, 1ull << STRACE_EV_OVERFLOW |
					1ull << STRACE_EV_ERROR |
					1ull << STRACE_EV_LOST);
	return prepare_dir(v, u);
}

/* The number of t's next record. */
static inline uint64_t rec_index(const struct uthr *t)
{
	return (t->size + (uint64_t)(t->cur - t->buf)) / 16;
}

/* A ROOT frame found late (STRACE_FRAME_LATE: it began before the
 * records written) whose entry is record `at`: remembered, to be moved to
 * the file's start (move_roots()). */
static void remember_root(struct view *v, struct uthr *t,
			  const struct strace_frame *f, uint64_t at)
{
	if (t->nroots == t->caproots) {
		size_t cap = t->caproots ? 2 * t->caproots : 8;
		struct uroot *r = realloc(t->roots, cap * sizeof(*r));
		if (!r) {
			view_fail(v, -ENOMEM);
			return;
		}
		t->roots = r;
		t->caproots = cap;
	}
	t->roots[t->nroots++] =
		(struct uroot){at, UINT64_MAX, f->user[0], f->begin};
}

/* The frame's entry record, at the thread's next depth. */
static inline void write_entry(struct view *v, struct uft *u, struct uthr *t,
			       const struct strace_frame *f)
{
	uint64_t w = rec_word(UFT_ENTRY, t->open, out_addr(v, u, f));
	uint64_t at = rec_index(t);

	put_rec(v, u, t, f->begin, w);
	/* user[0]: the entry's word (never 0: the magic is in it) */
	((struct strace_frame *)(uintptr_t)f)->user[0] = w;
	t->open++;
	if (__builtin_expect(f->flags & STRACE_FRAME_LATE, 0) &&
	    at != rec_index(t))
		remember_root(v, t, f, at);
}

static __attribute__((noinline)) void enter_slow(struct view *v,
						   struct uft *u,
						   const struct strace_frame *f)
{
	struct uthr *t = thr_of(v, u, f->tid);

	if (!t)
		return;
	if (f->kind == STRACE_FRAME_ROOT && t->open) {
		/* under the open frames, which all leave next
		 * (strace_stack's root()): written after them */
		t->root_pending = 1;
		return;
	}
	if (t->open >= UFT_DEPTH_MAX) {
		u->deep++;
		return;
	}
	write_entry(v, u, t, f);
}

/* The address of f when it is known already, else 0. */
static inline uint64_t known_addr(const struct uft *u,
				  const struct strace_frame *f)
{
	if (f->fn)
		return f->fn->id < u->fncap ? u->fnaddr[f->fn->id] : 0;
	if (u->labcap && f->kind != STRACE_FRAME_SYSCALL &&
	    f->kind != STRACE_FRAME_SIGNAL) {
		const struct label *l =
			&u->labs[(size_t)(f->addr * 0x9e3779b97f4a7c15ull >> 32) &
				 (u->labcap - 1)];
		return l->key == f->addr ? l->addr : 0;
	}
	return 0;
}

/*
 * The common case in a few instructions, the rest out of line (a frame
 * of another thread than the last, a ROOT frame, a new name, a full
 * buffer, a time that goes back, a new depth): the record and the
 * checks of put_rec() and write_entry().
 */
static void uft_enter(void *state, const struct strace_frame *f)
{
	struct uft *u = state;
	struct uthr *t = u->last;
	uint64_t a = known_addr(u, f), w, time;

	if (__builtin_expect(!a || !t || t->tid != f->tid ||
				     f->kind == STRACE_FRAME_ROOT ||
				     t->open >= UFT_DEPTH_MAX || t->cur == t->end,
			     0)) {
		enter_slow(u->v, u, f);
		return;
	}
	time = f->begin > t->last ? f->begin : t->last;
	w = rec_word(UFT_ENTRY, t->open, a);
	put16(t, time, w);
	((struct strace_frame *)(uintptr_t)f)->user[0] = w;
	t->open++;
}

static __attribute__((noinline)) void leave_slow(struct view *v,
						   struct uft *u,
						   const struct strace_frame *f)
{
	struct uthr *t;
	uint64_t w = f->user[0];

	if (!w) {
		/* not written: too deep, or a ROOT frame still waiting */
		if (f->kind == STRACE_FRAME_ROOT && !f->depth &&
		    (t = thr_find(u, f->tid)) != NULL)
			t->root_pending = 0;
		return;
	}
	t = thr_of(v, u, f->tid);
	if (!t || !t->open)
		return;
	/* the written frames leave in the order they came */
	t->open--;
	if (f->flags & STRACE_FRAME_LATE) {
		/* the innermost of those found late not left yet */
		for (size_t k = t->nroots; k-- > 0;)
			if (t->roots[k].exit == UINT64_MAX) {
				t->roots[k].exit = rec_index(t);
				break;
			}
	}
	put_rec(v, u, t, f->end, w | UFT_EXIT);
	if (t->root_pending && !t->open) {
		/* the frames above the ROOT frame have left: it is the
		 * thread's outermost (strace/stack.h: f[-f->depth]) */
		const struct strace_frame *r = f - f->depth;
		t->root_pending = 0;
		if (f->depth && r->kind == STRACE_FRAME_ROOT && !r->user[0])
			write_entry(v, u, t, r);
	}
}

static void uft_leave(void *state, const struct strace_frame *f)
{
	struct uft *u = state;
	struct uthr *t = u->last;
	uint64_t w = f->user[0] | UFT_EXIT, time;

	if (__builtin_expect(!f->user[0] || !t || t->tid != f->tid ||
				     !t->open || t->root_pending ||
				     t->cur == t->end ||
				     (f->flags & STRACE_FRAME_LATE),
			     0)) {
		leave_slow(u->v, u, f);
		return;
	}
	time = f->end > t->last ? f->end : t->last;
	t->open--;
	put16(t, time, w);
}

/* The user event of a gap: one per kind (and error code), defined in
 * events.txt at the end. Returns its id. */
static uint32_t gap_event(struct view *v, struct uft *u,
			  const struct strace_event *e)
{
	char name[64];
	const char *code;
	size_t k;

	if (e->type == STRACE_EV_OVERFLOW) {
		strcpy(name, "overflow");
	} else if (e->type == STRACE_EV_LOST) {
		/* who lost what: events of the ring, perf's records, trace
		 * bytes */
		strcpy(name, e->flags == STRACE_LOST_PERF  ? "lost-perf"
			     : e->flags == STRACE_LOST_AUX ? "lost-trace"
							   : "lost-events");
	} else {
		code = strace_error_name(e->flags);
		snprintf(name, sizeof(name), "error-%s", code ? code : "unknown");
	}
	for (k = 0; k < u->nev; k++)
		if (!strcmp(u->ev[k], name))
			return UFT_EVENT_USER + (uint32_t)k;
	if (k == UFT_EVENTS_MAX) {
		view_fail(v, -ENOMEM);
		return UFT_EVENT_USER;
	}
	strcpy(u->ev[u->nev++], name);
	return UFT_EVENT_USER + (uint32_t)k;
}

/* Gaps, errors and losses: an event record where they happened, which
 * uftrace replay prints as a comment at that depth
 * ("/" "* ptrace-read:overflow *" "/"); its graph, report and Chrome
 * dump leave user events out. (uftrace 0.13's LOST records are not used:
 * its graph stops at one and its dump --chrome writes a stray comma.) */
static void uft_event(struct view *v, const struct strace_event *e)
{
	struct uft *u;
	uint64_t id;

	if (e->type != STRACE_EV_OVERFLOW && e->type != STRACE_EV_ERROR &&
	    e->type != STRACE_EV_LOST)
		return;
	u = view_state(v);
	id = gap_event(v, u, e);
	if (e->tid) {
		struct uthr *t = thr_find(u, e->tid);
		if (t && (t->size || t->cur != t->buf))
			put_rec(v, u, t, e->time, rec_word(UFT_EVENT, t->open, id));
		u->gaps++;
		return;
	}
	/* not a thread's (the ring's losses): every thread has the hole */
	for (size_t k = 0; k < u->nt; k++)
		if (u->t[k]->size || u->t[k]->cur != u->t[k]->buf)
			put_rec(v, u, u->t[k], e->time,
				rec_word(UFT_EVENT, u->t[k]->open, id));
	u->gaps++;
}

/* --- the files written at the end ------------------------------------------ */

struct sb {
	char *p;
	size_t len, cap;
	int failed;
};

static char *sb_room(struct sb *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 65536;
		while (cap < b->len + n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

static void sb_add(struct sb *b, const char *s, size_t n)
{
	char *p = sb_room(b, n);

	if (p) {
		memcpy(p, s, n);
		b->len += n;
	}
}

static void sb_str(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sb *b,
							    const char *fmt,
							    ...)
{
	va_list ap;
	char *p = sb_room(b, 512);
	int n;

	if (!p)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p, 512, fmt, ap);
	va_end(ap);
	if (n >= 512) { /* long: again with room */
		p = sb_room(b, (size_t)n + 1);
		if (!p)
			return;
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (n > 0)
		b->len += (size_t)n;
}

/* "%016x" */
static void sb_hex16(struct sb *b, uint64_t x)
{
	static const char d[] = "0123456789abcdef";
	char *p = sb_room(b, 16);

	if (!p)
		return;
	for (int i = 15; i >= 0; i--, x >>= 4)
		p[i] = d[x & 15];
	b->len += 16;
}

/* A name on one line of a .sym file: no newline, no tab (uftrace cuts a
 * name at a tab), at most FMT_NAME_MAX bytes, as the views print it. */
static void sb_name(struct sb *b, const char *s, size_t len)
{
	char *p;

	if (len > FMT_NAME_MAX)
		len = FMT_NAME_MAX;
	p = sb_room(b, len);
	if (!p)
		return;
	for (size_t i = 0; i < len; i++)
		p[i] = s[i] == '\n' || s[i] == '\t' || s[i] == '\r' ? ' ' : s[i];
	b->len += len;
}

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

static int cmp_dso(const void *a, const void *b)
{
	const struct strace_name *x = *(const struct strace_name *const *)a;
	const struct strace_name *y = *(const struct strace_name *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_msym(const void *a, const void *b)
{
	const struct msym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* a label was written for frames there; then the shortest symbol,
	 * as strace_names_symbol() chooses */
	if (x->synth != y->synth)
		return x->synth ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The path of a map line: the DSO's, without blanks (uftrace reads it
 * with %s), not beginning with '[' (uftrace skips those lines), its base
 * name unique among the modules (it names the .sym file). */
static char *mod_path(struct mod *m, size_t n, const char *dso)
{
	size_t len = strlen(dso), k;
	char *p = malloc(len + 32), *b;
	int clash;

	if (!p)
		return NULL;
	if (*dso == '[') { /* "[vdso]": "vdso" */
		dso++, len--;
		if (len && dso[len - 1] == ']')
			len--;
	}
	memcpy(p, dso, len);
	p[len] = '\0';
	for (k = 0; k < len; k++)
		if ((unsigned char)p[k] <= ' ')
			p[k] = '_';
	while (len && p[len - 1] == '/')
		p[--len] = '\0';
	if (!len || !*base_name(p))
		strcpy(p, "unnamed"), len = 7;
	b = p + len;
	for (unsigned dup = 1;; dup++) {
		clash = !strcmp(base_name(p), LABELS_PATH);
		for (k = 0; k < n && !clash; k++)
			clash = m[k].path &&
				!strcmp(base_name(m[k].path), base_name(p));
		if (!clash)
			return p;
		sprintf(b, "#%u", dup + 1);
	}
}

static int msym_add(struct mod *o, uint64_t off, uint64_t size, uint64_t id,
		    int synth)
{
	if (o->nsyms == o->scap) {
		size_t cap = o->scap ? 2 * o->scap : 64;
		struct msym *s = realloc(o->syms, cap * sizeof(*s));
		if (!s)
			return -1;
		o->syms = s;
		o->scap = cap;
	}
	o->syms[o->nsyms].off = off;
	o->syms[o->nsyms].size = size ? size : 1;
	o->syms[o->nsyms].id = id;
	o->syms[o->nsyms].synth = synth;
	o->nsyms++;
	return 0;
}

/* The module of addr, or NULL. */
static struct mod *mod_of(struct mod *m, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < m[lo - 1].end ? &m[lo - 1] : NULL;
}

/*
 * uftrace's replay treats the functions of these names specially
 * (utils/fstack.c: fixup_syms): at a longjmp's or an exec's entry it
 * resets its stack to the setjmp's depth or to 0, as libmcount records
 * no returns from them. The ring has their frames' exits and unwinds,
 * so such a reset would misplace every frame after it: in the .sym
 * files those names get a suffix, and uftrace shows "longjmp.nofixup".
 * (setjmp and fork are fixups too, harmless here: they only note a
 * depth for the others, and for children named in FORK lines.)
 */
#define NOFIXUP ".nofixup"

static int fixup_name(const char *s, size_t len)
{
	static const char *const names[] = {
		"longjmp", "siglongjmp", "__longjmp_chk", "execl",  "execlp",
		"execle",  "execv",      "execve",        "execvp", "execvpe",
	};

	for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++)
		if (len == strlen(names[k]) && !memcmp(s, names[k], len))
			return 1;
	return 0;
}

/* One .sym file: a module's symbols and labels, sorted, each ended
 * where the next begins or where its size says. */
static int write_sym(struct view *v, struct uft *u, struct mod *o,
		     struct sb *b)
{
	struct strace_names *nm = view_names(v);
	size_t n = 0;
	char file[PATH_MAX];

	qsort(o->syms, o->nsyms, sizeof(*o->syms), cmp_msym);
	/* one symbol per offset: the first */
	for (size_t i = 0; i < o->nsyms; i++)
		if (!n || o->syms[i].off != o->syms[n - 1].off)
			o->syms[n++] = o->syms[i];
	o->nsyms = n;
	b->len = 0;
	sb_printf(b, "# symbols: %zu\n# path name: %s\n", n, o->path);
	for (size_t i = 0; i < n; i++) {
		const struct msym *s = &o->syms[i];
		uint64_t end = s->off + s->size;
		sb_hex16(b, s->off);
		sb_add(b, " T ", 3);
		if (s->synth) {
			char *e = view_put_name_id(v, u->name, s->id);
			sb_name(b, u->name, (size_t)(e - u->name));
			if (fixup_name(u->name, (size_t)(e - u->name)))
				sb_str(b, NOFIXUP);
		} else {
			const struct strace_name *fn =
				strace_names_get(nm, (uint32_t)s->id);
			sb_name(b, fn->str, fn->len);
			if (fixup_name(fn->str, fn->len))
				sb_str(b, NOFIXUP);
		}
		sb_add(b, "\n", 1);
		if (i + 1 < n && end >= o->syms[i + 1].off)
			continue; /* cut where the next begins */
		sb_hex16(b, end);
		sb_str(b, " ? __func_end\n");
	}
	if (b->failed) {
		view_fail(v, -ENOMEM);
		return -1;
	}
	snprintf(file, sizeof(file), "%s.sym", base_name(o->path));
	return put_file(v, u, file, b->p, b->len);
}

/* The map lines (the same for every session: the ring's names are one
 * table for all its processes) and the .sym files. */
static int write_modules(struct view *v, struct uft *u, struct sb *map,
			 struct mod **mods, size_t *nmods)
{
	struct strace_names *nm = view_names(v);
	size_t count = nm ? strace_names_count(nm) : 0, nd = 0, n = 0;
	const struct strace_name **d = NULL;
	struct mod *m = NULL;
	struct sb b = {0};
	int rc = -1;

	for (size_t i = 0; i < count; i++) {
		const struct strace_name *e = strace_names_get(nm, (uint32_t)i);
		if (e && e->kind == STRACE_EV_DSO && e->key && e->key < UFT_USER_TOP)
			nd++;
	}
	d = calloc(nd ? nd : 1, sizeof(*d));
	m = calloc(nd ? nd : 1, sizeof(*m));
	if (!d || !m)
		goto nomem;
	nd = 0;
	for (size_t i = 0; i < count; i++) {
		const struct strace_name *e = strace_names_get(nm, (uint32_t)i);
		if (e && e->kind == STRACE_EV_DSO && e->key && e->key < UFT_USER_TOP)
			d[nd++] = e;
	}
	qsort(d, nd, sizeof(*d), cmp_dso);
	for (size_t i = 0; i < nd; i++) {
		uint64_t end = d[i]->key + (d[i]->aux ? d[i]->aux : 1);
		if (end > UFT_USER_TOP || end < d[i]->key)
			end = UFT_USER_TOP;
		/* the same path again, or overlapping: one line (uftrace
		 * makes one of consecutive lines of one path) */
		if (n && (d[i]->key < m[n - 1].end ||
			  !strcmp(d[i]->str, m[n - 1].dso->str))) {
			if (end > m[n - 1].end)
				m[n - 1].end = end;
			continue;
		}
		m[n].start = d[i]->key;
		m[n].end = end;
		m[n].dso = d[i];
		m[n].owner = n;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < i; k++)
			if (m[k].owner == k &&
			    !strcmp(m[k].dso->str, m[i].dso->str) &&
			    m[k].end - m[k].start == m[i].end - m[i].start) {
				m[i].owner = k;
				break;
			}
		if (m[i].owner == i && !(m[i].path = mod_path(m, n, m[i].dso->str)))
			goto nomem;
	}
	/* the symbols, relative to their module's start */
	for (size_t i = 0; i < count; i++) {
		const struct strace_name *e = strace_names_get(nm, (uint32_t)i);
		struct mod *g;
		if (!e || e->kind != STRACE_EV_SYMBOL ||
		    !(g = mod_of(m, n, e->key)))
			continue;
		if (msym_add(&m[g->owner], e->key - g->start, e->aux, e->id, 0) < 0)
			goto nomem;
	}
	/* the labels of unnamed code in DSOs */
	for (size_t j = 0; j < u->labcap; j++) {
		const struct label *l = &u->labs[j];
		struct mod *g;
		if (!l->addr || l->addr >= UFT_LABELS ||
		    !(g = mod_of(m, n, l->addr)))
			continue;
		if (msym_add(&m[g->owner], l->addr - g->start, 1, l->id, 1) < 0)
			goto nomem;
	}
	for (size_t i = 0; i < n; i++) {
		if (m[i].owner != i)
			continue;
		if (!m[i].nsyms) {
			/* an empty .sym file would send uftrace to the ELF
			 * file, whose addresses are not relative to this
			 * start: a label for the first byte */
			struct strace_frame fake;
			memset(&fake, 0, sizeof(fake));
			fake.addr = m[i].start;
			if (msym_add(&m[i], 0, 1, view_name_id(v, &fake), 1) < 0)
				goto nomem;
		}
		if (write_sym(v, u, &m[i], &b) < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		sb_printf(map, "%012llx-%012llx r-xp %08x 00:00 0 %s\n",
			  (unsigned long long)m[i].start,
			  (unsigned long long)m[i].end, 0,
			  m[m[i].owner].path);
	/* the labels' module */
	if (u->npseudo) {
		struct mod lab;
		char path[] = LABELS_PATH;
		memset(&lab, 0, sizeof(lab));
		lab.path = path;
		for (size_t i = 0; i < u->npseudo; i++)
			if (msym_add(&lab, i, 1, u->pseudo[i], 1) < 0) {
				free(lab.syms);
				goto nomem;
			}
		rc = write_sym(v, u, &lab, &b);
		free(lab.syms);
		if (rc < 0)
			goto out;
		rc = -1;
		sb_printf(map, "%012llx-%012llx r-xp %08x 00:00 0 %s\n",
			  (unsigned long long)UFT_LABELS,
			  (unsigned long long)(UFT_LABELS + u->npseudo), 0,
			  LABELS_PATH);
	}
	/* where the kernel begins (guess_kernel_base: x86-64's 128T) */
	sb_str(map, "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
	if (map->failed)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	view_fail(v, -ENOMEM);
out:
	free(d);
	free(b.p);
	*mods = m;
	*nmods = n;
	return rc;
}

struct sess {
	uint32_t pid;
	uint64_t time; /* the earliest record of its threads */
	char sid[17];
	const char *exe;
};

static int cmp_sess(const void *a, const void *b)
{
	const struct sess *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_thr(const void *a, const void *b)
{
	const struct uthr *x = *(struct uthr *const *)a;
	const struct uthr *y = *(struct uthr *const *)b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static uint32_t pid_of(struct strace_names *nm, uint32_t tid)
{
	const struct strace_name *t = nm ? strace_names_thread(nm, tid) : NULL;

	if (!t)
		return tid;
	return t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux : (uint32_t)t->key;
}

/* A process's executable: the module whose file name begins with the
 * process's name (a command name is cut at 15 bytes); else the first
 * DSO; else the name. */
static const char *exe_of(struct strace_names *nm, uint32_t pid,
			  const struct mod *m, size_t n)
{
	const struct strace_name *p = nm ? strace_names_process(nm, pid) : NULL;
	const struct mod *first = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct mod *o = &m[m[i].owner];
		if (!first || m[i].dso->id < first->dso->id)
			first = &m[i];
		if (p && p->len && !strncmp(base_name(o->path), p->str, p->len))
			return o->path;
	}
	if (first)
		return m[first->owner].path;
	return p && p->len ? p->str : "unknown";
}

static void sb_time(struct sb *b, uint64_t ns)
{
	sb_printf(b, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
		  (unsigned long long)(ns % 1000000000u));
}

static int write_meta(struct view *v, struct uft *u, struct mod *m, size_t n,
		      const struct sb *map)
{
	struct strace_names *nm = view_names(v);
	struct uthr **th = NULL;
	struct sess *s = NULL;
	size_t nth = 0, ns = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	struct sb task = {0}, info = {0};
	char file[64];
	int rc = -1;

	th = calloc(u->nt ? u->nt : 1, sizeof(*th));
	s = calloc(u->nt ? u->nt : 1, sizeof(*s));
	if (!th || !s)
		goto nomem;
	for (size_t k = 0; k < u->nt; k++)
		if (u->t[k]->size)
			th[nth++] = u->t[k];
	qsort(th, nth, sizeof(*th), cmp_thr);
	/* a session per process, from its earliest record on */
	for (size_t k = 0; k < nth; k++) {
		uint32_t pid = pid_of(nm, th[k]->tid);
		size_t j;
		for (j = 0; j < ns && s[j].pid != pid; j++)
			;
		if (j == ns) {
			uint64_t h = (pid + 0x9e3779b97f4a7c15ull) *
				     0xff51afd7ed558ccdull;
			s[ns].pid = pid;
			s[ns].time = th[k]->first;
			snprintf(s[ns].sid, sizeof(s[ns].sid), "%016llx",
				 (unsigned long long)(h ^ h >> 29));
			s[ns].exe = exe_of(nm, pid, m, n);
			ns++;
		}
		if (th[k]->first < t0)
			t0 = th[k]->first;
		if (th[k]->last > t1)
			t1 = th[k]->last;
	}
	qsort(s, ns, sizeof(*s), cmp_sess);
	for (size_t j = 0; j < ns; j++) {
		sb_str(&task, "SESS timestamp=");
		sb_time(&task, s[j].time);
		sb_printf(&task, " pid=%u sid=%s exename=\"%s\"\n", s[j].pid,
			  s[j].sid, s[j].exe);
		snprintf(file, sizeof(file), "sid-%s.map", s[j].sid);
		if (put_file(v, u, file, map->p, map->len) < 0)
			goto out;
	}
	for (size_t k = 0; k < nth; k++) {
		uint32_t pid = pid_of(nm, th[k]->tid);
		size_t j;
		for (j = 0; j < ns && s[j].pid != pid; j++)
			;
		/* from its session's start: uftrace finds a thread's
		 * session by the times of the two */
		sb_str(&task, "TASK timestamp=");
		sb_time(&task, s[j].time);
		sb_printf(&task, " tid=%u pid=%u\n", th[k]->tid, pid);
	}
	if (task.failed)
		goto nomem;
	if (put_file(v, u, "task.txt", task.p, task.len) < 0)
		goto out;
	/* the gaps' user events (utils/event.c: read_events_file) */
	if (u->nev) {
		task.len = 0;
		for (size_t k = 0; k < u->nev; k++)
			sb_printf(&task, "EVENT: %u ptrace-read:%s\n",
				  UFT_EVENT_USER + (unsigned)k, u->ev[k]);
		if (task.failed)
			goto nomem;
		if (put_file(v, u, "events.txt", task.p, task.len) < 0)
			goto out;
	}

	/* info: the header, then the lines of its info mask, in bit order:
	 * exename 0, cmdline 3, cpuinfo 4, taskinfo 7, record_date 11,
	 * pattern_type 12, uftrace_version 13 */
	{
		unsigned char h[40];
		/* TASK_SESSION, SYM_REL_ADDR, MAX_STACK; EVENT */
		uint64_t feat = 1u << 1 | 1u << 5 | 1u << 6 |
				(u->nev ? 1u << 7 : 0);
		/* what the recording said of where it was made */
		const struct strace_name *cmd = NULL, *host = NULL, *rel = NULL,
					 *cpus = NULL, *desc = NULL;
		if (nm) {
			cmd = strace_names_info(nm, STRACE_INFO_CMDLINE);
			host = strace_names_info(nm, STRACE_INFO_HOSTNAME);
			rel = strace_names_info(nm, STRACE_INFO_OSRELEASE);
			cpus = strace_names_info(nm, STRACE_INFO_NRCPUS);
			desc = strace_names_info(nm, STRACE_INFO_CPUDESC);
		}
		/* (osinfo 6 only when the recording said; cmdline always:
		 * uftrace dump --chrome writes invalid JSON without one) */
		uint64_t mask = 1u << 0 | 1u << 3 | 1u << 4 |
				(host || rel ? 1u << 6 : 0) | 1u << 7 |
				1u << 11 | 1u << 12 | 1u << 13;
		uint32_t version = 4;
		uint16_t hsize = 40, max_stack = UFT_DEPTH_FIELD;
		const uint16_t one = 1;
		time_t now = time(NULL);
		char date[64];

		/* uftrace keeps max_stack frames per thread: as many as the
		 * deepest stack (no frame written is deeper) */
		struct strace_stack_stats st;
		view_stack_stats(v, &st);
		if (st.max_depth > max_stack)
			max_stack = (uint16_t)(st.max_depth < UFT_DEPTH_MAX
						       ? st.max_depth
						       : UFT_DEPTH_MAX);
		memset(h, 0, sizeof(h));
		memcpy(h, "Ftrace!", 8);
		memcpy(h + 8, &version, 4);
		memcpy(h + 12, &hsize, 2);
		h[14] = *(const unsigned char *)&one ? 1 : 2; /* ELFDATA2LSB */
		h[15] = 2;                                    /* ELFCLASS64 */
		memcpy(h + 16, &feat, 8);
		memcpy(h + 24, &mask, 8);
		memcpy(h + 32, &max_stack, 2);
		sb_add(&info, (const char *)h, sizeof(h));
		sb_printf(&info, "exename:%s\n", ns ? s[0].exe : "unknown");
		if (cmd)
			sb_printf(&info, "cmdline:%.*s\n", (int)cmd->len,
				  cmd->str);
		else
			sb_str(&info, "cmdline:(the recording did not say)\n");
		if (cpus)
			sb_printf(&info,
				  "cpuinfo:lines=2\ncpuinfo:nr_cpus=%u / %u "
				  "(online/possible)\n",
				  (unsigned)(cpus->aux >> 32),
				  (unsigned)(cpus->aux & 0xffffffffu));
		else
			sb_str(&info, "cpuinfo:lines=1\n");
		if (desc)
			sb_printf(&info, "cpuinfo:desc=%.*s, traced with Intel PT\n",
				  (int)desc->len, desc->str);
		else
			sb_str(&info, "cpuinfo:desc=x86-64, traced with Intel PT\n");
		if (host || rel)
			sb_printf(&info,
				  "osinfo:lines=3\nosinfo:kernel=Linux %.*s\n"
				  "osinfo:hostname=%.*s\n"
				  "osinfo:distro=\"unknown\"\n",
				  rel ? (int)rel->len : 7,
				  rel ? rel->str : "unknown",
				  host ? (int)host->len : 7,
				  host ? host->str : "unknown");
		sb_printf(&info, "taskinfo:lines=2\ntaskinfo:nr_tid=%zu\n"
				 "taskinfo:tids=",
			  nth);
		for (size_t k = 0; k < nth; k++)
			sb_printf(&info, "%s%u", k ? "," : "", th[k]->tid);
		if (!ctime_r(&now, date))
			strcpy(date, "unknown\n");
		sb_printf(&info, "\nrecord_date:%s", date);
		sb_str(&info, "elapsed_time:");
		sb_time(&info, nth && t1 > t0 ? t1 - t0 : 0);
		sb_str(&info, " sec\npattern_type:regex\n");
		sb_printf(&info, "uftrace_version:%s %s (from an Intel PT ring)\n",
			  PROG, STRACE_VERSION);
		if (info.failed)
			goto nomem;
		if (put_file(v, u, "info", info.p, info.len) < 0)
			goto out;
	}
	rc = 0;
	goto out;
nomem:
	view_fail(v, -ENOMEM);
out:
	free(th);
	free(s);
	free(task.p);
	free(info.p);
	return rc;
}

/*
 * t's file, complete, with the entries of its ROOT frames moved to its
 * start (see the top of this file): written anew beside it through t's
 * buffer, then renamed over it. The k frames nest, the last found
 * outermost, and all began at the thread's first event; a record keeps
 * its place, its depth raised by the ROOT frames around it (those not
 * left before it; for a ROOT frame's exit, those outside it).
 */
static int move_roots(struct view *v, struct uft *u, struct uthr *t)
{
	const size_t k = t->nroots, cap = (size_t)(t->end - t->buf) / 16 * 16;
	char path[PATH_MAX + 64], tmp[PATH_MAX + 72];
	size_t ne = 0, nx = 0;
	uint64_t i = 0;
	int in, out, rc = -1;

	snprintf(path, sizeof(path), "%s", thr_file(u, t));
	/* (a name prepare_dir() clears, should one be left behind) */
	snprintf(tmp, sizeof(tmp), "%.*s.roots.dat", (int)strlen(path) - 4,
		 path);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return fail_file(v, path, "cannot read the file back");
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return fail_file(v, tmp, "cannot create the file");
	}
	/* the entries, outermost first */
	for (size_t j = k; j-- > 0;) {
		uint64_t rec[2] = {t->roots[j].begin,
				   rec_word(UFT_ENTRY, (uint32_t)(k - 1 - j),
					    t->roots[j].word >> 16)};
		if (t->roots[j].begin < t->first)
			t->first = t->roots[j].begin;
		if (write_all(out, rec, sizeof(rec)) < 0)
			goto werr;
	}
	/* the records, in chunks of whole records (have: bytes read) */
	for (size_t have = 0;;) {
		ssize_t n = read(in, t->buf + have, cap - have);
		unsigned char *p = t->buf, *q = t->buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail_file(v, path, "cannot read the file back");
			goto out;
		}
		if (!n)
			break;
		have += (size_t)n;
		for (; p + 16 <= t->buf + have; p += 16, i++) {
			uint64_t w, add = k - nx;
			uint32_t depth;

			if (ne < k && t->roots[ne].entry == i) {
				ne++; /* moved to the start */
				continue;
			}
			if (nx < k && t->roots[nx].exit == i) {
				add--;
				nx++;
			}
			memcpy(&w, p + 8, 8);
			depth = (uint32_t)(w >> 6) & (UFT_DEPTH_FIELD - 1);
			w &= ~((uint64_t)(UFT_DEPTH_FIELD - 1) << 6);
			w |= (uint64_t)((depth + add) & (UFT_DEPTH_FIELD - 1))
			     << 6;
			memmove(q, p, 8);
			memcpy(q + 8, &w, 8);
			q += 16;
		}
		if (write_all(out, t->buf, (size_t)(q - t->buf)) < 0)
			goto werr;
		/* a record cut by the read: its start, for the next */
		have -= (size_t)(p - t->buf);
		memmove(t->buf, p, have);
	}
	if (close(out) < 0) {
		out = -1;
		goto werr;
	}
	out = -1;
	if (rename(tmp, path) < 0) {
		fail_file(v, path, "cannot replace the file");
		goto out;
	}
	rc = 0;
	goto out;
werr:
	fail_file(v, tmp, "write failed; check free space");
out:
	close(in);
	if (out >= 0)
		close(out);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

static int uft_finish(struct view *v)
{
	struct uft *u = view_state(v);
	struct mod *m = NULL;
	size_t n = 0;
	struct sb map = {0};
	int rc = -1;

	for (size_t k = 0; k < u->nt; k++)
		if (thr_flush(v, u, u->t[k]) < 0 ||
		    thr_close(v, u, u->t[k]) < 0 ||
		    (u->t[k]->nroots && move_roots(v, u, u->t[k]) < 0))
			return -1;
	if (write_modules(v, u, &map, &m, &n) == 0 &&
	    write_meta(v, u, m, n, &map) == 0)
		rc = 0;
	for (size_t i = 0; i < n; i++) {
		free(m[i].path);
		free(m[i].syms);
	}
	free(m);
	free(map.p);
	if (u->deep)
		fprintf(stderr,
			"%s: %s: %llu frames deeper than %u were left out "
			"(uftrace's max_stack is 16 bits)\n",
			PROG, u->dir, (unsigned long long)u->deep,
			UFT_DEPTH_MAX);
	return rc;
}

static void uft_close(struct view *v)
{
	struct uft *u = view_state(v);

	if (!u)
		return;
	for (size_t k = 0; k < u->nt; k++) {
		if (u->t[k]->fd >= 0) {
			/* after an error: what was written stays */
			if (u->t[k]->alloc > u->t[k]->size &&
			    ftruncate(u->t[k]->fd, (off_t)u->t[k]->size) < 0) {
			}
			close(u->t[k]->fd);
		}
		free(u->t[k]->buf);
		free(u->t[k]->roots);
		free(u->t[k]);
	}
	free(u->t);
	free(u->tmap);
	free(u->fnaddr);
	free(u->labs);
	free(u->pseudo);
	free(u);
	view_set_state(v, NULL);
}

const struct view_format view_uftrace = {uft_open,  uft_event,
					 uft_enter, uft_leave,
					 uft_finish, uft_close};
