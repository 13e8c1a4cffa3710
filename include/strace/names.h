/* SPDX-License-Identifier: MIT */
/*
 * strace/names.h - what a reader needs to name things: address -> symbol
 * (with its offset) and DSO, tid -> thread and process, and the entry
 * behind a definition event's string operand.
 *
 * The names come from a ring's string table (strace/ring.h), which
 * writers fill before the events that use them and never overwrite: a
 * reader builds its names as it reads, by calling strace_names_update()
 * before it formats each batch, and prints names without the traced
 * binaries, even when the definition events were overwritten.
 *
 * Lookups follow docs/events.md: the symbol covering an address is the
 * last one (in address order) that starts at or before it and whose
 * size reaches it; of several at one start the shortest; a symbol of
 * size 0 names its start only. A thread's name is its THREAD entry's,
 * else its process's (a process's main thread is often named only by
 * the process).
 *
 * Lifetimes: entries (struct strace_name) and the names they point to
 * stay valid and do not move until strace_names_free() and
 * strace_ring_close() of the ring, whichever comes first; updates only
 * add entries.
 *
 * Threading: one instance belongs to one thread at a time (lookups keep
 * small caches); readers on several threads each make their own.
 */
#ifndef STRACE_NAMES_H
#define STRACE_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of the string table, as a reader sees it. */
struct strace_name {
	const char *str; /* NUL-terminated: the name (DSO: the path), in the
			  * ring's mapping */
	uint32_t len;    /* bytes of str */
	uint32_t id;     /* 0, 1, 2, ... in the order the entries were read:
			  * a dense index for a caller's own tables */
	uint16_t kind;   /* the defining type: STRACE_EV_SYMBOL, _DSO,
			  * _THREAD, _PROCESS, or another */
	uint64_t key;    /* symbol/DSO: start address; thread: tid;
			  * process: pid */
	uint64_t aux;    /* symbol/DSO: size (0: unknown); thread: pid */
	uint64_t off;    /* the entry's offset in the string table: what
			  * definition events carry */
};

struct strace_names;

/*
 * strace_names_new() - empty names for ring (read nothing yet). The ring
 * must stay open while the names are used.
 * Returns 0 and *out.
 * Returns -ENOMEM if memory runs out.
 */
int strace_names_new(const struct strace_ring *ring, struct strace_names **out);

/* strace_names_free() - free the names and their entries (NULL is fine). */
void strace_names_free(struct strace_names *n);

/*
 * strace_names_update() - read the string-table entries added since the
 * last call (a reader calls it before each batch; it costs a load when
 * nothing was added).
 * Returns the number of entries added (0 if none).
 * Returns -ENOMEM if memory runs out.
 * Returns -STRACE_E_CORRUPT if the table holds a damaged entry: the
 * entries before it stay usable, and later calls return 0.
 */
int strace_names_update(struct strace_names *n);

/*
 * strace_names_generation() - a number that changes whenever an update
 * added entries: a caller that caches lookups drops them when it changes.
 */
uint64_t strace_names_generation(const struct strace_names *n);

/* strace_names_count() - entries read so far (ids are below this). */
size_t strace_names_count(const struct strace_names *n);

/*
 * strace_names_symbol() - the SYMBOL entry covering addr, or NULL; the
 * offset into it is addr - entry->key.
 * strace_names_dso() - the DSO entry covering addr, or NULL.
 */
const struct strace_name *strace_names_symbol(struct strace_names *n,
					      uint64_t addr);
/*
 * strace_names_syscall() - the system call the syscall instruction at
 * addr makes, when the producer could tell (strace_writer_name_syscall):
 * an entry of kind STRACE_EV_SYSCALL, str its name ("write"), aux its
 * number; one entry per number, whatever the site. NULL if not known.
 */
const struct strace_name *strace_names_syscall(struct strace_names *n,
					       uint64_t addr);

/*
 * strace_names_aliases() - the other names of the symbol entry sym, when
 * the producer wrote them (strace_writer_name_alias: entries of kind
 * STRACE_NAME_ALIAS keyed by its start; `_IO_puts` and
 * `puts@@GLIBC_2.2.5` for `puts`), in the order written: up to max of
 * them into out. Returns how many there are (0 for an entry that is no
 * symbol).
 */
size_t strace_names_aliases(struct strace_names *n,
			    const struct strace_name *sym,
			    const struct strace_name **out, size_t max);

/*
 * strace_names_dso_offset() - the offset of addr in the DSO entry dso
 * (strace_names_dso()), in the object's own addresses when the producer
 * said where the mapping lies in it (strace_writer_name_dso_base: the ELF
 * virtual address, what objdump and addr2line take), else from the
 * mapping's start. What "[libc.so.6]+0xOFF" shows.
 */
uint64_t strace_names_dso_offset(struct strace_names *n,
				 const struct strace_name *dso, uint64_t addr);
const struct strace_name *strace_names_dso(struct strace_names *n,
					   uint64_t addr);

/*
 * strace_names_thread() - the name of thread tid: its THREAD entry, else
 * the PROCESS entry of pid tid, else NULL.
 * strace_names_process() - the PROCESS entry of pid, else NULL; with a
 * THREAD entry, the thread's process is strace_names_process(n, e->aux).
 */
const struct strace_name *strace_names_thread(struct strace_names *n,
					      uint32_t tid);
const struct strace_name *strace_names_process(struct strace_names *n,
					       uint32_t pid);

/*
 * strace_names_info() - what the recording said of where it was made
 * (strace_writer_name_info(): what is an enum strace_info of
 * strace/ring.h): its last entry of kind STRACE_NAME_INFO, key what; str
 * the value, aux as the enum says. NULL when it said nothing of it.
 */
const struct strace_name *strace_names_info(struct strace_names *n,
					    unsigned what);

/*
 * strace_names_at() - the entry at string-table offset off (the STR
 * operand of a definition event), or NULL when there is none (yet): a
 * reader never trusts an offset read from an event.
 */
const struct strace_name *strace_names_at(struct strace_names *n,
					  uint64_t off);

/* strace_names_get() - the entry of id (< strace_names_count()), or NULL. */
const struct strace_name *strace_names_get(const struct strace_names *n,
					   uint32_t id);

/*
 * strace_names_corrupt() - 1 when an update met a damaged entry (reading
 * stopped there), else 0; *off receives where (may be NULL).
 */
int strace_names_corrupt(const struct strace_names *n, uint64_t *off);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_NAMES_H */
