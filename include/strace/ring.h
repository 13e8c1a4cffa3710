/* SPDX-License-Identifier: MIT */
/*
 * strace/ring.h - the shared-memory event ring.
 *
 * A ring is a file (normally on tmpfs) mapped by every process that uses it:
 *
 *   header (fixed size) | string table | events[capacity]
 *
 * Any number of writers (threads or processes) append events; any number of
 * readers, each with its own cursor, read them in place (zero-copy). The
 * event number of an event is its 64-bit position; position p lives in slot
 * p & (capacity - 1).
 *
 * Modes:
 *  - lossless: a writer never overwrites an event that an attached reader
 *    has not read. Until the first reader attaches, the oldest event is
 *    kept too, so a reader that attaches late still sees everything.
 *  - flight recorder: writers never wait; a reader that falls behind skips
 *    to the oldest event still present and counts what it missed exactly.
 *  - archive: the file grows instead of wrapping; nothing is overwritten,
 *    so a reader gets every event however far behind it is.
 *
 * Threading: a struct strace_ring may be shared by threads; each writer and
 * each reader handle belongs to one thread at a time.
 *
 * Errors: functions return >= 0 on success, -errno for system failures and
 * -STRACE_E_* for format problems (strace/error.h); strace_strerror()
 * describes both.
 */
#ifndef STRACE_RING_H
#define STRACE_RING_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event.h"
#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

enum strace_ring_mode {
	STRACE_RING_LOSSLESS = 0,
	STRACE_RING_FLIGHT = 1,
	STRACE_RING_ARCHIVE = 2, /* a saved file: writers never wait; the
				  * file grows (capacity doubles) instead of
				  * wrapping, so nothing is lost */
};

#define STRACE_RING_MAGIC "STRACERB"
#define STRACE_RING_VERSION 2
#define STRACE_RING_MAX_READERS 64
#define STRACE_RING_MAX_WRITERS 64
/* Smallest capacity in events (a writer's batch is at most half of it). */
#define STRACE_RING_MIN_CAPACITY 64
/* Default capacity in events (see docs/performance.md for the choice). */
#define STRACE_RING_DEFAULT_CAPACITY (1u << 18) /* 8 MiB */
#define STRACE_RING_DEFAULT_STRINGS (16u << 20)

struct strace_ring_opts {
	size_t size;           /* sizeof(struct strace_ring_opts): the rule of
				* strace/opts.h */
	uint64_t capacity;     /* events, power of two; 0: default (archive:
				* 4096, it grows) */
	uint64_t strings_size; /* bytes for the string table; 0: default */
	int mode;              /* enum strace_ring_mode */
	int no_populate;       /* do not fault the pages in at creation */
	int tap_only;          /* no event is stored: each batch goes to the
				* tap only (strace_ring_set_tap) and readers
				* see none; the ring keeps its names. For a
				* producer whose events go to in-process
				* plugins only. Capacity 0: the least. */
};

struct strace_ring;

/*
 * strace_ring_default_path() - $STRACE_RING if set, else
 * /dev/shm/strace_<pid>_<random>.srb. Writes at most len bytes to buf.
 * Returns the length.
 * Returns -ENAMETOOLONG if the path does not fit in len bytes.
 */
int strace_ring_default_path(char *buf, size_t len);

/*
 * strace_ring_create() - create a new ring file at path (NULL: the default
 * path) and map it. The file is created with O_EXCL|O_NOFOLLOW, mode 0600;
 * an existing file or symlink at path is refused with -EEXIST/-ELOOP.
 * opts may be NULL for defaults. Pages are faulted in unless no_populate.
 * Returns 0 and *out.
 * Returns -STRACE_E_BADARG if the capacity is not a power of two of at
 * least STRACE_RING_MIN_CAPACITY, or opts break the rule of strace/opts.h.
 * Returns -EEXIST if a file is at path; -ELOOP if path is a symbolic link.
 * Returns -errno if the file cannot be created, sized or mapped (-ENOENT
 * for a missing directory, -EACCES, -ENOSPC ...).
 */
int strace_ring_create(const char *path, const struct strace_ring_opts *opts,
		       struct strace_ring **out);

/*
 * strace_ring_open() - map an existing ring file to read or write it.
 * Every header field is checked against the file size before use.
 * Returns 0 and *out.
 * Returns -STRACE_E_MAGIC if the file is not a ring.
 * Returns -STRACE_E_VERSION if it is a ring of another format version.
 * Returns -STRACE_E_TRUNCATED if it is shorter than its header says.
 * Returns -STRACE_E_CORRUPT if a header field is out of range.
 * Returns -STRACE_E_FOREIGN if path is not a regular file.
 * Returns -errno if it cannot be opened or mapped (-ENOENT, -EACCES,
 * -ELOOP for a symbolic link ...).
 */
int strace_ring_open(const char *path, struct strace_ring **out);

/* strace_ring_close() - unmap; writers and readers must be closed first. */
void strace_ring_close(struct strace_ring *ring);

/* strace_ring_path() - the file's path, valid until close. */
const char *strace_ring_path(const struct strace_ring *ring);

struct strace_ring_stat {
	uint32_t version;
	int mode;
	uint64_t capacity;     /* events */
	uint64_t file_size;    /* bytes */
	uint64_t reserved;     /* positions handed out to writers */
	uint64_t committed;    /* positions readable */
	uint64_t tail;         /* oldest position kept (lossless) */
	uint64_t strings_used; /* bytes of the string table in use */
	uint64_t strings_size;
	uint32_t writers_live, writers_dead, writers_closed;
	uint32_t readers_live, readers_dead;
	uint64_t creator_pid;
	uint64_t created_ns; /* CLOCK_REALTIME at creation */
	int closed;          /* every writer that opened has closed */
	uint32_t lock_pid;   /* the process holding the ring's lock, 0: free */
};

/* strace_ring_committed() - the events committed so far (their count
 * since the ring was made): one atomic load, from any thread. */
uint64_t strace_ring_committed(const struct strace_ring *ring);

/* strace_ring_stat() - snapshot of the header; checks liveness of pids. */
int strace_ring_stat(struct strace_ring *ring, struct strace_ring_stat *st);

/* Per-reader line for strace_ring_reader_info(). */
struct strace_reader_info {
	uint32_t pid;
	int live;
	uint64_t cursor;
	uint64_t lost;
};

/* strace_ring_reader_info() - fill up to max entries.
 * Returns the number of entries filled. */
int strace_ring_reader_info(struct strace_ring *ring,
			    struct strace_reader_info *info, int max);

/* --- finding rings, removing stale ones -------------------------------- */

/*
 * Rings are files: every capture made without a path leaves one in the
 * default directory (/dev/shm: memory), and nothing removes them. The
 * scan lists the files of a directory and says of each what it is and
 * whether it is STALE: a ring of this format, owned by the calling user
 * (its effective uid), with no live writer, no live reader, its creator
 * gone and its lock not held by a live process. Liveness is checked as
 * everywhere in the ring: by pid and start time, so a reused pid is no
 * longer the process the ring named. Only stale rings may be removed.
 *
 * The scan only reads: a file is opened O_RDONLY | O_NOFOLLOW |
 * O_NONBLOCK, only when lstat() calls it a regular file, and its header
 * is copied with pread() and checked before use; no lock is taken, no
 * page mapped. So a symlink, a FIFO or a hostile file in the directory
 * can neither hang the scan nor crash it.
 */

/* What a file met by the scan is. */
enum strace_ring_kind {
	STRACE_RING_KIND_RING = 0,   /* a ring of this format version */
	STRACE_RING_KIND_VERSION,    /* a ring of another format version
				      * (stat.version): not read further */
	STRACE_RING_KIND_DAMAGED,    /* this format's magic and version, a
				      * header that does not hold (err) */
	STRACE_RING_KIND_FOREIGN,    /* not a ring: another magic, or short */
	STRACE_RING_KIND_SPECIAL,    /* not a regular file (symlink, FIFO,
				      * directory, ...): never opened */
	STRACE_RING_KIND_UNREADABLE, /* could not be opened or read (err) */
};

/* Why a file is kept: 0 (STRACE_RING_KEEP_NONE) means stale. */
enum strace_ring_keep {
	STRACE_RING_KEEP_NONE = 0, /* stale: may be removed */
	STRACE_RING_KEEP_KIND,     /* not a ring of this format (kind) */
	STRACE_RING_KEEP_OWNER,    /* another user's (uid) */
	STRACE_RING_KEEP_WRITER,   /* a writer's process runs (pids) */
	STRACE_RING_KEEP_READER,   /* a reader's process runs (pids[0]) */
	STRACE_RING_KEEP_CREATOR,  /* its creator runs, and may open a
				    * writer yet (pids[0]) */
	STRACE_RING_KEEP_LOCKED,   /* a live process holds its lock: it
				    * is attaching now (pids[0]) */
};

#define STRACE_RING_ENTRY_PIDS 4

/* One file of a scan. */
struct strace_ring_entry {
	const char *path;   /* dir/name: valid until fn returns */
	const char *name;   /* the last component of path */
	int kind;           /* enum strace_ring_kind */
	int err;            /* DAMAGED, UNREADABLE: -errno or -STRACE_E_* */
	int keep;           /* enum strace_ring_keep */
	uint32_t file_mode; /* st_mode: type and permission bits */
	uint32_t uid;       /* the file's owner */
	uint64_t size;      /* st_size */
	uint64_t mem_bytes; /* st_blocks * 512: what the file really holds
			     * (a sparse or growing archive holds less than
			     * its size) */
	int in_memory;      /* on tmpfs or ramfs: the bytes are RAM */
	int default_name;   /* in the default directory, named as default
			     * rings are: the default scan lists it */
	/* keep WRITER: live writers' pids (stat.writers_live counts them
	 * all); READER, CREATOR, LOCKED: that process's pid in pids[0] */
	uint32_t pids[STRACE_RING_ENTRY_PIDS];
	/* kind RING: the header, as strace_ring_stat() gives it;
	 * kind VERSION: version only */
	struct strace_ring_stat stat;
};

/*
 * strace_ring_default_dir() - where rings made without a path go: the
 * directory of $STRACE_RING if set, else /dev/shm. Writes at most len
 * bytes to buf.
 * Returns the length.
 * Returns -ENAMETOOLONG if the directory does not fit in len bytes.
 */
int strace_ring_default_dir(char *buf, size_t len);

/*
 * strace_ring_scan() - call fn once per file of dir, in name order.
 * dir NULL: the default directory, and there only the files named as
 * default rings are (strace_<pid>_<id>.srb, and the name $STRACE_RING
 * gives): other programs keep their own files in /dev/shm. A dir given
 * explicitly: every entry but "." and "..". fn returns 0 to go on, or a
 * negative value to stop the scan, which then returns that value. The
 * entry and its strings are valid until fn returns. Nothing is changed
 * on disk, and no ring's lock is taken.
 * Returns the number of entries passed to fn.
 * Returns fn's negative value if fn stopped the scan.
 * Returns -ENOMEM if memory runs out.
 * Returns -errno if dir cannot be opened or read (-ENOENT, -ENOTDIR,
 * -EACCES).
 */
int strace_ring_scan(const char *dir,
		     int (*fn)(void *arg, const struct strace_ring_entry *e),
		     void *arg);

/*
 * strace_ring_inspect() - the scan's entry for one file (e->path is
 * path, e->name points into it). Use it for a ring of your own, e.g. to
 * say how much memory it holds.
 * Returns 0 (the file's kind, whatever it is, is in *e).
 * Returns -errno if path cannot be looked at (lstat: -ENOENT, ...).
 */
int strace_ring_inspect(const char *path, struct strace_ring_entry *e);

/*
 * strace_ring_describe() - a producer's last word on the ring it made,
 * into buf: "ring: PATH (N MB in memory; read it with 'ptrace-read RING',
 * remove it with rm once done)" (strace_ring_inspect()'s memory, where it
 * lies, and 'ptrace-read --gc' for a default name). No program name, no
 * newline: the caller prints it.
 * Returns the message's length (as snprintf()).
 * Returns strace_ring_inspect()'s error (buf untouched).
 */
int strace_ring_describe(const char *path, char *buf, size_t len);

/*
 * strace_ring_remove_stale() - unlink path if it is a stale ring, and
 * fill *e as strace_ring_inspect() does (e->mem_bytes: what removing it
 * frees). The staleness is checked again under the ring's lock, and the
 * ring is marked removed before the lock is released: a writer that
 * attaches meanwhile either registered before (the ring is kept) or has
 * strace_writer_open() fail with -STRACE_E_CLOSED; never does it write
 * into a file nobody can find (docs/design.md, "Stale rings").
 * Returns 1 when removed, 0 when kept (e->keep says why).
 * Returns -ENOENT if the file went away meanwhile.
 * Returns -EAGAIN if it was replaced or changed while being judged (scan
 * again).
 * Returns -STRACE_E_BUSY if a live process kept the ring's lock for
 * seconds.
 * Returns -errno if it cannot be opened read-write or unlinked (-EACCES,
 * -EPERM: the directory does not let us; -EROFS).
 */
int strace_ring_remove_stale(const char *path, struct strace_ring_entry *e);

/* --- string table ------------------------------------------------------ */

/*
 * The string table is append-only and never overwritten, so names survive
 * even when the events that defined them were lost. Each entry carries the
 * type that defines it (kind: STRACE_EV_SYMBOL, STRACE_EV_DSO, ...), a key
 * (the symbol's address, the tid, ...) and an aux value (size).
 */
struct strace_string {
	const char *str; /* NUL-terminated, inside the mapping */
	uint32_t len;
	uint16_t kind;
	uint64_t key;
	uint64_t aux;
};

/*
 * strace_ring_add_string() - append an entry; *off receives its offset,
 * to be stored in a definition event. Safe from many writers at once.
 * Returns 0.
 * Returns -STRACE_E_FULL if the table has no room for the entry.
 */
int strace_ring_add_string(struct strace_ring *ring, unsigned kind,
			   uint64_t key, uint64_t aux, const char *str,
			   size_t len, uint64_t *off);

/*
 * strace_ring_string() - the entry at off (from a definition event).
 * Returns 0.
 * Returns -STRACE_E_CORRUPT if off is not a complete entry inside the
 * table (a reader must not trust offsets in events).
 */
int strace_ring_string(const struct strace_ring *ring, uint64_t off,
		       struct strace_string *out);

/*
 * strace_ring_string_next() - iterate entries: start with *off = 0.
 * Returns 1 and the entry, 0 at the end of what is complete.
 * Returns -STRACE_E_CORRUPT if the entry at *off is damaged.
 */
int strace_ring_string_next(const struct strace_ring *ring, uint64_t *off,
			    struct strace_string *out);

/*
 * strace_ring_sync_strings() - make dst's string table a copy of src's:
 * appends the bytes of src's table that dst does not have yet, so that
 * string offsets in events copied from src stay valid in dst. dst must
 * have been filled only by this function. Used to save what a reader read.
 * Returns 0.
 * Returns -STRACE_E_FULL if dst's table is too small.
 * Returns -STRACE_E_CORRUPT if src's table is damaged.
 */
int strace_ring_sync_strings(struct strace_ring *dst,
			     const struct strace_ring *src);

/* --- writers ----------------------------------------------------------- */

/*
 * The emit fast path is inline: events are written into a batch buffer and
 * published together by strace_writer_flush() when it fills (a direct
 * writer's buffer is slots of the ring: strace_writer_set_direct()). The
 * struct's first member is this cursor.
 */
struct strace_wbuf {
	struct strace_event *pos, *end;
	int err; /* last flush error, 0 if none */
};

struct strace_writer;

/*
 * strace_writer_open() - register a writer. Its batches are at most half
 * the ring's capacity.
 * Returns 0 and *out.
 * Returns -STRACE_E_FULL if every writer slot is taken.
 * Returns -STRACE_E_BUSY if another live process holds the ring's lock
 * for seconds (see strace_reader_open).
 * Returns -STRACE_E_CLOSED if the file was removed as stale since it was
 * opened (strace_ring_remove_stale).
 * Returns -ENOMEM if memory runs out.
 */
int strace_writer_open(struct strace_ring *ring, struct strace_writer **out);

/*
 * strace_writer_set_stop() - a callback polled while a lossless writer
 * waits for readers; when it returns non-zero the wait ends with
 * -STRACE_E_STOPPED (the batch stays buffered).
 */
void strace_writer_set_stop(struct strace_writer *w, int (*stop)(void *),
			    void *arg);

/* What a lossless writer waits for (strace_ring_set_wait_notice). */
struct strace_ring_wait {
	uint64_t position;   /* the end of the batch it waits to write */
	uint32_t readers;    /* live readers; 0: none has attached yet */
	uint32_t reader_pid; /* the reader furthest behind, if readers > 0 */
	uint64_t waited_ms;  /* how long it has waited so far */
};

/* The producer's own words in strace_ring_wait_message(). */
struct strace_ring_wait_words {
	const char *waits;     /* who waits: "waiting", "perf waits" */
	const char *no_reader; /* how not to wait when no reader has
				* attached: "use --mode archive, the default" */
	const char *slowest;   /* what to do about the slowest reader: "end
				* that reader, or use --mode flight" */
	const char *every;     /* NULL, or what waits for every reader, said
				* after the slowest one: "writer", "ring" */
	int held;              /* readers held for (0: none) */
	const char *held_opt;  /* the option that held them: "--wait-readers" */
};

/*
 * strace_ring_wait_message() - what a lossless writer that waits says
 * (from its strace_ring_set_wait_notice() callback), into buf: "PATH: the
 * lossless ring is full ..." with why it waits (fewer readers than held
 * for, none yet, or the slowest one's pid) and what to do, in the words
 * the producer gives. No program name, no newline: the caller prints it.
 * Returns the message's length (as snprintf(): buf holds at most len - 1
 * bytes of it).
 */
int strace_ring_wait_message(char *buf, size_t len, const char *path,
			     const struct strace_ring_wait *w,
			     const struct strace_ring_wait_words *words);

/*
 * strace_ring_set_wait_notice() - have fn(arg, w) called when a lossless
 * writer of this ring, in this process, has waited a second for room:
 * once per wait, in the writer's thread (several writers may call it at
 * once). A command uses it to say what it waits for; fn must not call
 * back into the writer. Set it before writers flush.
 */
void strace_ring_set_wait_notice(struct strace_ring *ring,
				 void (*fn)(void *arg,
					    const struct strace_ring_wait *w),
				 void *arg);

/*
 * strace_ring_set_tap() - have fn(arg, ev, n) called with each batch that
 * a writer of this ring, in this process, is about to publish: once per
 * batch, before readers can see it, in the writer's thread (several
 * writers may call it at once). ev points into the writer's own buffer,
 * or into the ring's slots not yet published for a direct writer (zero
 * copy), and is valid during the call. fn must not call back into
 * the writer. Set it before writers flush; NULL removes it. This is how
 * a producer hands its events to in-process plugins (strace/plugin.h).
 */
void strace_ring_set_tap(struct strace_ring *ring,
			 void (*fn)(void *arg, const struct strace_event *ev,
				    size_t n),
			 void *arg);

/*
 * strace_writer_flush() - publish the buffered events. In lossless mode it
 * waits while the ring is full.
 * Returns 0.
 * Returns -STRACE_E_STOPPED if the stop callback ended a wait (the batch
 * stays buffered).
 * Returns -STRACE_E_CLOSED if the ring no longer accepts events.
 * Returns -ENOSPC, -EDQUOT or -EFBIG if an archive could not grow (the
 * batch is lost, and a lost event says so).
 */
int strace_writer_flush(struct strace_writer *w);

/*
 * strace_writer_close() - flush, deregister and free (NULL is fine). When
 * every writer that opened has closed, readers see a clean end of stream:
 * a producer that opens writers one after another keeps one open across
 * the gaps, or a reader may end there.
 * Returns 0, or strace_writer_flush()'s error of the final flush.
 */
int strace_writer_close(struct strace_writer *w);

/* strace_writer_ring() - the ring a writer writes. */
struct strace_ring *strace_writer_ring(const struct strace_writer *w);

/*
 * strace_writer_set_direct() - on a lossless ring, have the writer store
 * its events straight into the ring's slots (no copy of a batch): it takes
 * the positions of its next batch ahead, when there is room for them at
 * once (else that batch is private, as without), and publishes them when
 * the batch fills or at strace_writer_flush(), giving back those it did
 * not use. Other writers of the ring publish after those positions only
 * once it has: turn it on for the one writer of a ring that fills its
 * batches without waiting on anything else (a decode), and flush before
 * waiting. Other modes ignore it.
 */
void strace_writer_set_direct(struct strace_writer *w, int on);

/* strace_writer_refill() - strace_writer_flush(), then the next batch's
 * room. What strace_writer_slot() calls when the batch is full. */
int strace_writer_refill(struct strace_writer *w);

/* strace_writer_buf() - the writer's batch cursor (its first member), for
 * a producer that fills the batch in a loop of its own: the room is [pos,
 * end); strace_writer_refill() when pos reaches end. */
static inline struct strace_wbuf *strace_writer_buf(struct strace_writer *w)
{
	return (struct strace_wbuf *)(void *)w;
}

/* strace_writer_error() - the writer's last flush error, 0 if none: what
 * strace_writer_slot() failed with when it returned NULL. */
static inline int strace_writer_error(const struct strace_writer *w)
{
	return ((const struct strace_wbuf *)(const void *)w)->err;
}

/* strace_writer_slot() - room for one event, or NULL on a flush error. */
static inline struct strace_event *strace_writer_slot(struct strace_writer *w)
{
	struct strace_wbuf *b = strace_writer_buf(w);
	if (__builtin_expect(b->pos == b->end, 0) &&
	    strace_writer_refill(w) < 0)
		return NULL;
	return b->pos++;
}

/* strace_writer_emit() - append one event.
 * Returns 0, or strace_writer_flush()'s error when the batch was full. */
static inline int strace_writer_emit(struct strace_writer *w, uint16_t type,
				     uint16_t flags, uint32_t tid,
				     uint64_t time, uint64_t a, uint64_t b)
{
	struct strace_event *e = strace_writer_slot(w);
	if (!e)
		return strace_writer_error(w);
	e->type = type;
	e->flags = flags;
	e->tid = tid;
	e->time = time;
	e->a = a;
	e->b = b;
	return 0;
}

/* --- definitions -------------------------------------------------------- */

/*
 * A definition names something events refer to (docs/events.md): a
 * string-table entry (kind type, key, aux) that readers find by address
 * or id, then an event {type, 0, tid, time, a, the entry's offset}. The
 * name is written first, so a reader that sees the event finds the name.
 */
struct strace_definition {
	uint16_t type;     /* STRACE_EV_PROCESS, _THREAD, _DSO, _SYMBOL, ... */
	uint32_t tid;      /* the event's thread */
	uint64_t time;     /* the event's time (0: none) */
	uint64_t a;        /* the event's a: a pid, or a start address */
	uint64_t key, aux; /* the entry's: process: pid, 0; thread: tid, pid;
			    * DSO and symbol: start, size */
	const char *name;  /* NUL-terminated: the name, or a DSO's path */
};

/*
 * strace_writer_define() - write definition d through w. With types (NULL:
 * every type), a type it leaves out gets its name in the string table but
 * no event: readers still name what it defines.
 * Returns 0.
 * Returns -STRACE_E_FULL if the string table has no room.
 * Returns strace_writer_flush()'s errors.
 */
int strace_writer_define(struct strace_writer *w,
			 const struct strace_definition *d,
			 const struct strace_typeset *types);

/*
 * struct strace_symset - the symbols a producer has defined in a ring, by
 * start address, so that each is defined once however many threads find
 * it. Safe to share between threads (a lock, taken for each add).
 */
struct strace_symset;

/* strace_symset_new() - an empty set.
 * Returns 0 and *out.
 * Returns -ENOMEM if memory runs out. */
int strace_symset_new(struct strace_symset **out);

/* strace_symset_free() - free the set (NULL is fine). */
void strace_symset_free(struct strace_symset *s);

/*
 * strace_writer_define_symbol() - the SYMBOL definition of the function
 * [start, start + size) named name, unless set (may be NULL) says it was
 * defined already; tid and time are the event's (the first event that
 * refers to it).
 * Returns 1 if it was written now, 0 if it was defined before.
 * Returns -ENOMEM if memory runs out.
 * Returns strace_writer_define()'s errors.
 */
int strace_writer_define_symbol(struct strace_writer *w,
				struct strace_symset *set,
				const struct strace_typeset *types,
				uint32_t tid, uint64_t time, uint64_t start,
				uint64_t size, const char *name);

/*
 * strace_writer_name_syscall() - say that the syscall instruction at addr
 * makes system call nr, named name ("write"): a string-table entry of
 * kind STRACE_EV_SYSCALL (key addr, aux nr), no event; readers name the
 * syscalls made there by it (strace_names_syscall()). Unless set (may be
 * NULL, shared with the symbols) says it was named already.
 * Returns 1 if it was written now, 0 if it was named before.
 * Returns -ENOMEM if memory runs out, -STRACE_E_FULL if the string table
 * is full.
 */
int strace_writer_name_syscall(struct strace_writer *w,
			       struct strace_symset *set, uint64_t addr,
			       uint64_t nr, const char *name);

/* The string-table kind of a DSO's base: key the start of a DSO entry's
 * mapping, aux the ELF virtual address there (no event type has it). */
#define STRACE_NAME_DSO_BASE 53

/*
 * strace_writer_name_dso_base() - say that the DSO mapped at start has
 * its ELF virtual address vaddr there: a string-table entry of kind
 * STRACE_NAME_DSO_BASE (key start, aux vaddr, name "elf"), no event;
 * readers count the offsets of code without a symbol from it
 * ("[libc.so.6]+0xOFF" in the object's own addresses, as objdump and
 * addr2line take them: strace_names_dso_offset()). Unless set (may be
 * NULL) says it was named already.
 * Returns 1 if it was written now, 0 if it was named before.
 * Returns -ENOMEM if memory runs out, -STRACE_E_FULL if the string table
 * is full.
 */
int strace_writer_name_dso_base(struct strace_writer *w,
				struct strace_symset *set, uint64_t start,
				uint64_t vaddr);

/* The string-table kind of a symbol's other name: key the start of the
 * symbol entry it belongs to, aux 0 (no event type has it). */
#define STRACE_NAME_ALIAS 54
/* Aliases a producer writes per symbol, at most (glibc's have up to 6). */
#define STRACE_ALIASES_MAX 32

/*
 * strace_writer_name_alias() - say that the symbol defined at start is
 * also called name: another symbol at its address (glibc's _IO_puts for
 * puts), or its name as the ELF file writes it (memcpy@@GLIBC_2.14): a
 * string-table entry of kind STRACE_NAME_ALIAS, no event. Readers match
 * it where a person names a function (--sym; strace_names_aliases()).
 * Write them right after the symbol's definition, once.
 * Returns 0, -ENOMEM, or -STRACE_E_FULL if the string table is full.
 */
int strace_writer_name_alias(struct strace_writer *w, uint64_t start,
			     const char *name);

/* The string-table kind of what a recording says about where it was
 * made: key an enum strace_info (no event type has it). */
#define STRACE_NAME_INFO 55

enum strace_info {
	STRACE_INFO_HOSTNAME = 1, /* the machine's name */
	STRACE_INFO_OSRELEASE,    /* the kernel's release ("6.1.0-18-amd64") */
	STRACE_INFO_CMDLINE,      /* the command that recorded, as typed
				   * ("perf record -e intel_pt//u ./prog") */
	STRACE_INFO_NRCPUS,       /* aux: CPUs online << 32 | available */
	STRACE_INFO_CPUDESC,      /* the processor ("Intel(R) Xeon(R) ...") */
};

/*
 * strace_writer_name_info() - say something about where the trace was
 * recorded: a string-table entry of kind STRACE_NAME_INFO (key what,
 * aux and value as enum strace_info says), no event; a reader takes the
 * last one of each key (strace_names_info()). Write them once, before the
 * events.
 * Returns 0, -ENOMEM, or -STRACE_E_FULL if the string table is full.
 */
int strace_writer_name_info(struct strace_writer *w, enum strace_info what,
			    uint64_t aux, const char *value);

/* The string-table kind of code that ran: key the start of a range in
 * the object's own addresses, aux its length (no event type has it). */
#define STRACE_NAME_COVERAGE 56

/*
 * strace_writer_name_coverage() - say that the code [vaddr, vaddr + len)
 * of the object at path ran in the decode (ptrace-capture --coverage): a
 * string-table entry of kind STRACE_NAME_COVERAGE (key vaddr, aux len,
 * name path), no event; vaddr in the object's own addresses (its ELF
 * virtual addresses, what addr2line takes). Readers gather an object's
 * entries by path (ptrace-read -f lcov). Write them once, at the end.
 * Returns 0, -ENOMEM, or -STRACE_E_FULL if the string table is full.
 */
int strace_writer_name_coverage(struct strace_writer *w, const char *path,
				uint64_t vaddr, uint64_t len);

/* The string-table kind of a conditional branch that ran: key its
 * address in the object's own addresses, aux the ways it went. */
#define STRACE_NAME_COVBRANCH 57
#define STRACE_COVBRANCH_TAKEN 1     /* aux: it was taken */
#define STRACE_COVBRANCH_NOT_TAKEN 2 /* aux: it fell through */

/*
 * strace_writer_name_branch() - say that the conditional branch at vaddr
 * of the object at path ran in the decode (ptrace-capture --coverage) and
 * went the ways seen says (STRACE_COVBRANCH_TAKEN, _NOT_TAKEN, or both):
 * a string-table entry of kind STRACE_NAME_COVBRANCH (key vaddr, aux seen,
 * name path), no event; vaddr as strace_writer_name_coverage() has it.
 * Readers gather them by path (lcov's branch records). Write each branch
 * once, at the end.
 * Returns 0, -ENOMEM, or -STRACE_E_FULL if the string table is full.
 */
int strace_writer_name_branch(struct strace_writer *w, const char *path,
			      uint64_t vaddr, unsigned seen);

/* --- readers ----------------------------------------------------------- */

struct strace_reader;

/*
 * strace_reader_open() - attach a reader. It starts at the oldest event
 * still in the ring (every event, in lossless and archive modes), or at
 * the newest when from_end is set. A slot whose reader's process died
 * without closing it (SIGKILL, a crash) is taken back when no other slot
 * is free: its owner is judged by pid and start time, so a reader that is
 * only slow or stopped keeps its slot, and a reused pid is not its owner.
 * Returns 0 and *out.
 * Returns -STRACE_E_FULL if live readers hold every reader slot.
 * Returns -STRACE_E_BUSY if another live process has held the ring's lock
 * for seconds (stopped, or a damaged file; strace_ring_stat() gives its
 * pid).
 * Returns -ENOMEM if memory runs out.
 */
int strace_reader_open(struct strace_ring *ring, int from_end,
		       struct strace_reader **out);

/* strace_reader_close() - detach and free (NULL is fine). */
void strace_reader_close(struct strace_reader *r);

struct strace_batch {
	const struct strace_event *ev; /* zero-copy: points into the mapping */
	size_t n;                      /* events at ev */
	uint64_t seq;                  /* position of ev[0] */
	uint64_t lost;                 /* events skipped just before ev[0] */
};

/*
 * strace_reader_next() - the next committed events, at most max (0: no
 * limit), contiguous in memory. Waits up to timeout_ms (-1: forever, 0:
 * not at all) when there is nothing to read: it polls while writers were
 * at work lately (sleeps of 20 us to 1 ms, no wake asked of them), then
 * sleeps until a writer wakes it.
 * The events stay valid until strace_reader_release(); in flight-recorder
 * mode a writer may overwrite them meanwhile, which release reports (see
 * strace_batch_copy). The pointer stays inside this process's mappings
 * until strace_ring_close(), even when an archive grows.
 * Returns the number of events (> 0), or 0 when there is none (then
 * b->lost may still report a loss; strace_reader_status() tells whether
 * the stream has ended).
 * Returns -STRACE_E_CORRUPT or -STRACE_E_TRUNCATED if an archive's
 * header claims events its file does not hold.
 * Returns -errno if an archive that grew cannot be mapped further.
 */
long strace_reader_next(struct strace_reader *r, struct strace_batch *b,
			size_t max, int timeout_ms);

/*
 * strace_batch_copy() - copy the batch's b->n events to dst. In flight-
 * recorder mode a writer may overwrite them while they are read: copy
 * them with this (relaxed atomic loads, so the overlap is no data race),
 * then call strace_reader_release(), which says how many at the front of
 * the copy may be torn. Lossless and archive batches can be read in place.
 */
void strace_batch_copy(struct strace_event *dst, const struct strace_batch *b);

/*
 * strace_reader_release() - done with the batch: advance the cursor.
 * Returns how many events at the front of the batch may have been
 * overwritten while they were held (always 0 in lossless mode); they are
 * counted as lost.
 */
size_t strace_reader_release(struct strace_reader *r,
			     const struct strace_batch *b);

/*
 * strace_reader_seek() - the next strace_reader_next() starts at position
 * pos instead of where the reader is, so that a saved ring can be read in
 * any order (a view that merges threads by time goes back and forth).
 * Positions before the oldest event kept are counted as lost, as usual.
 * Returns 0.
 * Returns -STRACE_E_BADARG if pos is past the committed end.
 */
int strace_reader_seek(struct strace_reader *r, uint64_t pos);

enum strace_reader_status {
	STRACE_READER_LIVE = 0,    /* more may come */
	STRACE_READER_END = 1,     /* every writer closed; all was read */
	STRACE_READER_WRITER_GONE = 2, /* a writer died; all committed was read */
};

/* strace_reader_status() - whether more events can come. */
int strace_reader_status(struct strace_reader *r);

/* strace_reader_lost() - events this reader has lost so far. */
uint64_t strace_reader_lost(const struct strace_reader *r);

/* strace_reader_ring() - the ring a reader reads. */
struct strace_ring *strace_reader_ring(const struct strace_reader *r);

/* strace_ring_wait_readers() - wait until n readers are attached, their
 * processes alive (a reader that died without closing counts no more).
 * Returns 0.
 * Returns -ETIMEDOUT if they did not within timeout_ms (-1: forever). */
int strace_ring_wait_readers(struct strace_ring *ring, int n, int timeout_ms);

/*
 * strace_ring_hold_for_readers() - the lossless ring's writers in this
 * process keep every event from the first until n readers have attached
 * (a reader attaches at the oldest event kept): they write on at once,
 * and wait when the ring is full. What strace_ring_wait_readers() before
 * the first event gives, without waiting while nothing needs to: a
 * producer that need not wait for its readers to start (a decode of a
 * recording) does its set-up meanwhile, or ends before they come. Call
 * it before writers flush.
 */
void strace_ring_hold_for_readers(struct strace_ring *ring, int n);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_RING_H */
