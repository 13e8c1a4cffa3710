/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_uftrace.c - ptrace-read -f uftrace -o DIR: a uftrace data
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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strace/internal/grow.h"
#include "fmt_uftrace.h"

/* --- threads --------------------------------------------------------------- */

static const char *thr_file(struct uft *u, const struct uthr *t)
{
	char name[32];

	snprintf(name, sizeof(name), "%u.dat", t->tid);
	return uft_in_dir(u, name);
}

/* Close a thread's file; the space reserved past its end is given back
 * (ftruncate frees what fallocate kept beyond the size). */
static int thr_close(struct view *v, struct uft *u, struct uthr *t)
{
	int rc = 0;

	if (t->fd < 0)
		return 0;
	if (t->alloc > t->size && ftruncate(t->fd, (off_t)t->size) < 0)
		rc = uft_fail_file(v, thr_file(u, t), "cannot truncate the file");
	if (close(t->fd) < 0 && !rc)
		rc = uft_fail_file(v, thr_file(u, t), "close failed");
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
		/* made by out_create(), then reopened to go on where it
		 * ended (never through a link either) */
		t->fd = t->made ? open(thr_file(u, t),
				       O_WRONLY | O_APPEND | O_NOFOLLOW |
					       O_CLOEXEC)
				: out_create(thr_file(u, t));
		if (t->fd < 0 && !t->made) {
			errno = -t->fd;
			t->fd = -1;
		}
		if (t->fd >= 0) {
			t->made = 1;
			u->nfds++;
			break;
		}
		if ((errno != EMFILE && errno != ENFILE) ||
		    (rc = close_other(v, u, t)) == 0)
			return uft_fail_create(v, thr_file(u, t), -errno);
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
	if (uft_write_all(t->fd, t->buf, len) < 0)
		return uft_fail_file(v, thr_file(u, t),
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
		struct uthr **a = strace_grow(u->t, &u->tcap, sizeof(*a), 16);
		if (!a)
			goto nomem;
		u->t = a;
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
		uint64_t *p = strace_grow(u->pseudo, &u->pcap, sizeof(*p), 256);
		if (!p) {
			view_fail(v, -ENOMEM);
			return UFT_LABELS;
		}
		u->pseudo = p;
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
		/* doubled until the id fits, what it adds zeroed */
		while (fn->id >= u->fncap) {
			size_t old = u->fncap;
			uint64_t *n = strace_grow(u->fnaddr, &u->fncap,
						  sizeof(*n), 1024);
			if (!n) {
				view_fail(v, -ENOMEM);
				return UFT_LABELS;
			}
			memset(n + old, 0, (u->fncap - old) * sizeof(*n));
			u->fnaddr = n;
		}
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

/* An inlined frame's address (--inline): one in the labels' module per
 * inlined function, named in its .sym file as the function (uftrace's
 * data has no place to mark a frame inlined). */
static __attribute__((noinline)) uint64_t inl_addr(struct view *v,
						   struct uft *u,
						   const struct strace_frame *f)
{
	uint32_t id = f->fn->id - STRACE_FRAME_INLINE_ID;

	if (id >= u->inlcap) {
		/* doubled until the id fits, what it adds zeroed */
		while (id >= u->inlcap) {
			size_t old = u->inlcap;
			uint64_t *n = strace_grow(u->inladdr, &u->inlcap,
						  sizeof(*n), 256);
			if (!n) {
				view_fail(v, -ENOMEM);
				return UFT_LABELS;
			}
			memset(n + old, 0, (u->inlcap - old) * sizeof(*n));
			u->inladdr = n;
		}
	}
	if (!u->inladdr[id])
		u->inladdr[id] = pseudo_addr(v, u, view_name_id(v, f));
	return u->inladdr[id];
}

/* The address written for f: uftrace finds f's name there. */
static inline uint64_t out_addr(struct view *v, struct uft *u,
				const struct strace_frame *f)
{
	if (__builtin_expect(f->flags & STRACE_FRAME_INLINED, 0))
		return inl_addr(v, u, f);
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
	return uft_prepare_dir(v, u);
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
		struct uroot *r =
			strace_grow(t->roots, &t->caproots, sizeof(*r), 8);
		if (!r) {
			view_fail(v, -ENOMEM);
			return;
		}
		t->roots = r;
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
	if (__builtin_expect(f->flags & STRACE_FRAME_INLINED, 0))
		return f->fn->id - STRACE_FRAME_INLINE_ID < u->inlcap
			       ? u->inladdr[f->fn->id - STRACE_FRAME_INLINE_ID]
			       : 0;
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
	/* (a name uft_prepare_dir() clears, should one be left behind) */
	snprintf(tmp, sizeof(tmp), "%.*s.roots.dat", (int)strlen(path) - 4,
		 path);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return uft_fail_file(v, path, "cannot read the file back");
	out = out_create(tmp);
	if (out < 0) {
		close(in);
		return uft_fail_create(v, tmp, out);
	}
	/* the entries, outermost first */
	for (size_t j = k; j-- > 0;) {
		uint64_t rec[2] = {t->roots[j].begin,
				   rec_word(UFT_ENTRY, (uint32_t)(k - 1 - j),
					    t->roots[j].word >> 16)};
		if (t->roots[j].begin < t->first)
			t->first = t->roots[j].begin;
		if (uft_write_all(out, rec, sizeof(rec)) < 0)
			goto werr;
	}
	/* the records, in chunks of whole records (have: bytes read) */
	for (size_t have = 0;;) {
		ssize_t n = read(in, t->buf + have, cap - have);
		unsigned char *p = t->buf, *q = t->buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			uft_fail_file(v, path, "cannot read the file back");
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
		if (uft_write_all(out, t->buf, (size_t)(q - t->buf)) < 0)
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
		uft_fail_file(v, path, "cannot replace the file");
		goto out;
	}
	rc = 0;
	goto out;
werr:
	uft_fail_file(v, tmp, "write failed; check free space");
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
	if (uft_write_modules(v, u, &map, &m, &n) == 0 &&
	    uft_write_meta(v, u, m, n, &map) == 0)
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
	free(u->inladdr);
	free(u->labs);
	free(u->pseudo);
	free(u);
	view_set_state(v, NULL);
}

const struct view_format view_uftrace = {uft_open,  uft_event,
					 uft_enter, uft_leave,
					 uft_finish, uft_close};

