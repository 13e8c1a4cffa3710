/* SPDX-License-Identifier: MIT */
/*
 * decoder/decoder.h - the PT decoder: process image, block summaries, and
 * the flow walker that turns a raw Intel PT byte stream into strace events.
 *
 * Three layers, each usable alone:
 *
 *  - struct strace_image: the code of one process. Mappings (start, end,
 *    file offset) backed by ELF files or by caller bytes (a vDSO dump);
 *    code bytes at an address; function symbols from .symtab/.dynsym plus
 *    synthesized name@plt entries, as perf names them.
 *  - struct strace_bcache: per-block summaries (length, instruction count,
 *    terminator kind, direct target, stack effect, OCaml exception-handler
 *    patterns), decoded once with Capstone and cached by a 64-bit key.
 *  - struct strace_walker: decodes one thread's (or one CPU's) PT stream.
 *    The fast path parses the hot packets inline; libipt finds PSBs and
 *    decodes anything unusual. A reference path runs libipt's block decoder
 *    over the same image and emits the same events, for cross-checks.
 *
 * Threading: an image may be read by many walkers at once once it is no
 * longer modified (strace_image_add_* and _remove need exclusive access).
 * A block cache and a walker belong to one thread at a time.
 *
 * Errors: >= 0 success, -errno, or -STRACE_E_* codes (strace/error.h);
 * strace_strerror() describes all of them.
 */
#ifndef STRACE_DECODER_H
#define STRACE_DECODER_H

#include <stddef.h>
#include <stdint.h>

#include "strace/event.h"
#include "strace/ring.h"
#include "strace/internal/perf_time.h"

#ifdef __cplusplus
extern "C" {
#endif


/* --- process image ------------------------------------------------------ */

struct strace_image;

/*
 * struct strace_objcache - files read once for many images. An image made
 * with strace_image_opts.objects maps its files through the cache: each
 * file is mapped, and its symbols read, once for all the images of the
 * cache, on whichever threads they are. Worth it when the same program's
 * files are mapped again and again: an image per thread of a recording,
 * recordings one after another (a fuzzer's inputs).
 *
 * A file is known by its path, device, inode, size and modification time
 * (a file replaced or rewritten since is read again) and the image options
 * its symbols depend on. The cache keeps every file it has read until it
 * is freed; it must outlive its images.
 *
 * Threading: images on several threads may use one cache at once.
 */
struct strace_objcache;

/* strace_objcache_new() - an empty cache. Returns 0 and *out, -ENOMEM. */
int strace_objcache_new(struct strace_objcache **out);

/* What strace_objcache_save() found and did, per object with a build-id
 * that a decode used. */
struct strace_objcache_stats {
	uint64_t loaded;  /* its cache file was read and used */
	uint64_t missed;  /* it had none */
	uint64_t stale;   /* it had one of another file (rebuilt) */
	uint64_t damaged; /* it had one that failed the checks (rebuilt) */
	uint64_t written; /* cache files written */
	uint64_t write_errors;
	int write_error;  /* the first write's -errno */
};

/*
 * strace_objcache_set_dir() - the persistent block and symbol cache's
 * directory (docs/cache.md), before the first image uses c: each ELF file
 * of c with a build-id gets its block summaries and symbols from
 * DIR/BUILDID.blocks when that was made from the same file (build-id,
 * size, mtime) and options, and strace_objcache_save() writes what the
 * decodes added. NULL (the default): none. Returns 0, -ENOMEM.
 */
int strace_objcache_set_dir(struct strace_objcache *c, const char *dir);

/* strace_objcache_save() - write the cache file of every object of c that
 * the decodes added blocks or symbols to, and count the objects in *st
 * (may be NULL). Call when no image of c
 * decodes. Returns 0, or the first write's -errno (the others are still
 * written; a cache that cannot be written costs only time). */
int strace_objcache_save(struct strace_objcache *c,
			 struct strace_objcache_stats *st);

/*
 * strace_objcache_set_coverage() - whether the images of c note the code
 * that runs (off by default): each block a walker's cache misses is noted
 * by its object, once per cache (docs/decoder.md, "Coverage"). Before the
 * first image uses c.
 */
void strace_objcache_set_coverage(struct strace_objcache *c, int on);

/*
 * strace_objcache_each_coverage() - the code that ran in the images of c
 * (with coverage on), per object: fn(arg, path, vaddr, len) for each range
 * of it, merged where ranges touch, in address order, in the object's own
 * addresses (its ELF virtual addresses, as addr2line takes them); path is
 * the file that was decoded. Objects that are no ELF file are left out.
 * Call when no image of c decodes. Returns 0, or the nonzero return of fn
 * that stopped it.
 */
int strace_objcache_each_coverage(struct strace_objcache *c,
				  int (*fn)(void *arg, const char *path,
					    uint64_t vaddr, uint64_t len),
				  void *arg);

/*
 * strace_objcache_each_branch() - the conditional branches that ran in
 * the images of c (with coverage on), per object: fn(arg, path, vaddr,
 * seen) for each, once, in address order, vaddr the branch instruction's
 * in the object's own addresses, seen which ways it went
 * (STRACE_COVBRANCH_TAKEN, _NOT_TAKEN, strace/ring.h: both when it went
 * both ways).
 * Exact: every outcome is noted where the walker takes a TNT bit itself,
 * and a replay of recorded TNT runs only repeats outcomes noted when the
 * run was recorded (docs/decoder.md, "Coverage"). As
 * strace_objcache_each_coverage() otherwise.
 */
int strace_objcache_each_branch(struct strace_objcache *c,
				int (*fn)(void *arg, const char *path,
					  uint64_t vaddr, unsigned seen),
				void *arg);

/* strace_cache_default_dir() - the persistent cache's directory by the
 * XDG base directory rules: $XDG_CACHE_HOME/strace, else
 * $HOME/.cache/strace (absolute paths only), in buf. Returns buf, or NULL
 * without either (no cache). */
const char *strace_cache_default_dir(char *buf, size_t max);

/*
 * strace_cache_dir_check() - whether dir may hold the persistent cache: a
 * directory of the effective user's that neither its group nor others
 * may write into (anyone who can put a link or a file there could have
 * a decode write through it or read a forged file). The cache's own
 * calls check it again each time they open it, and treat a refused one
 * as no cache; this is for the command to say why, once. *st (may be
 * NULL) is its stat. Returns 0 (usable, or not there: it is made, mode
 * 0700, on the first write; or not one that can be opened: that write
 * says why), -EPERM (another user's: st->st_uid; or writable by group
 * or others: st->st_mode).
 */
struct stat;
int strace_cache_dir_check(const char *dir, struct stat *st);

/* strace_objcache_free() - unmap the files and drop their symbols (free
 * the images that use the cache first); NULL is fine. */
void strace_objcache_free(struct strace_objcache *c);

/* How name@plt symbols are made (see docs/decoder.md). */
enum strace_plt_style {
	/* perf 6.1 (Debian 12): entries of .plt after a header of one entry,
	 * in .rela.plt order, "<sym>@plt" (an IRELATIVE slot gives "@plt");
	 * no .plt.sec, no .plt.got, no ".plt" header symbol. */
	STRACE_PLT_PERF61 = 0,
	/* perf 6.2 and later: also .plt.sec and .plt.got, a ".plt" symbol for
	 * the header, relocations sorted by GOT slot, offset_0x...@plt. */
	STRACE_PLT_PERF62 = 1,
	/* The names a person types, as objdump, nm and readelf give them
	 * (docs/stacks.md, "Names"): PLT entries as objdump names them (its
	 * .plt.sec and .plt.got too; an IRELATIVE slot by the IFUNC its
	 * resolver is, else "*ABS*+0x...@plt"), the lazy-binding header
	 * "[plt0]"; of the aliases at one address an exported one before a
	 * local, the default version before others, the fewest leading
	 * underscores (no __GI_ or __libc_ alias where a public name
	 * exists; __GI_X, the only name, as X), without its @VERSION; a
	 * symbol without size extends to the next, but not past the end of
	 * its section. */
	STRACE_PLT_PLAIN = 2,
};

struct strace_image_opts {
	size_t size;   /* sizeof(struct strace_image_opts) (strace/opts.h) */
	int plt_style; /* enum strace_plt_style */
	/* Do not look for separate debug files. By default, a file without
	 * .symtab gets its symbols where perf 6.1 finds them: the
	 * .gnu_debuglink name (beside the file, in its .debug/, under
	 * /usr/lib/debug), $HOME/.debug/.build-id/xx/rest/debug,
	 * /usr/lib/debug/.build-id/xx/rest.debug (build-ids must match).
	 * A candidate that is not a regular file (a FIFO, a device) is
	 * skipped without being opened. */
	int no_debuginfo;
	/* Keep names as in the ELF file. By default they are demangled as
	 * perf prints them (C++ without parameters, OCaml), which is what
	 * `perf script` shows unless given --no-demangle. */
	int no_demangle;
	/* Take files from this cache and leave them there (see struct
	 * strace_objcache); NULL: the image maps its own files. */
	struct strace_objcache *objects;
	/* The root the recording's objects are read under, as perf script
	 * --symfs takes it (the files given to strace_image_add_file() are
	 * then ROOT/path): separate debug files are looked for under it
	 * only, beside the file and at ROOT/usr/lib/debug/... (see
	 * strace_debug_find()), never on this machine's own paths, so that
	 * a bundle (ptrace-capture --archive) decodes the same anywhere.
	 * NULL: this machine's paths. Copied: valid for the call. */
	const char *symfs;
};

/*
 * strace_debug_find() - the separate debug file an image takes the
 * symbols of the ELF file at path from when path has no .symtab, looked
 * for where perf 6.1 looks, its build-id checked: the .gnu_debuglink
 * name beside the file, in its .debug/, under /usr/lib/debug/<dir>/;
 * $HOME/.debug/.build-id/xx/rest/debug; /usr/lib/debug/.build-id/xx/
 * rest.debug. With symfs (strace_image_opts.symfs; path is then under
 * it), under symfs only: beside the file, SYMFS/usr/lib/debug/<dir>/,
 * SYMFS/usr/lib/debug/.build-id/xx/rest.debug. Into out (len bytes).
 * Returns 1 if there is one, 0 if path has a .symtab or no debug file
 * is found, -errno if path cannot be read.
 */
int strace_debug_find(const char *path, const char *symfs, char *out,
		      size_t len);

/*
 * Debug information (DWARF, through elfutils' libdw): source lines,
 * inlined functions and line tables of the objects a trace ran, for the
 * reader's views (srcline, --inline, coverage). Objects are named by path
 * as the recording names them; each is opened once (a regular file only:
 * a FIFO is never opened) and kept until strace_dwarf_free(); its debug
 * information is its own .debug_info, else the separate file
 * strace_debug_find() finds (.gnu_debuglink, /usr/lib/debug/.build-id/).
 * Addresses are the object's own (ELF virtual addresses, as
 * strace_names_dso_offset() gives them and addr2line takes them). A
 * missing object, one without debug information or with a corrupt one
 * gives 0 (nothing found), never an error the caller must stop on. Not
 * thread-safe: one strace_dwarf per thread.
 */
struct strace_dwarf;
struct strace_dwarf_opts {
	size_t size;	   /* sizeof(struct strace_dwarf_opts); 0 = defaults */
	const char *symfs; /* perf's --symfs (paths are read under it), or
			    * NULL; copied */
	/* the persistent cache's directory (strace_cache_default_dir()):
	 * an object's line table, functions and inlined instances kept
	 * there by build-id and debug file (docs/cache.md), read by the
	 * next run instead of the DWARF; NULL: none; copied */
	const char *cache_dir;
};
/* strace_dwarf_new() - an empty set of objects; o may be NULL.
 * Returns 0 and *out, -ENOMEM, -STRACE_E_BADARG. */
int strace_dwarf_new(const struct strace_dwarf_opts *o,
		     struct strace_dwarf **out);
/* strace_dwarf_free() - close every object (NULL is fine); the strings
 * handed out become invalid. */
void strace_dwarf_free(struct strace_dwarf *d);

/* A source line. file: the name as addr2line prints it (DWARF's, joined
 * with its directory and the unit's comp dir when relative), valid until
 * strace_dwarf_free(). */
struct strace_srcline {
	const char *file;
	unsigned line;
};
/*
 * strace_dwarf_srcline() - the line of the instruction at vaddr in the
 * object at path, as `addr2line -e PATH VADDR` gives it (the last row of
 * the line table at or before vaddr in its sequence). Cheap when asked
 * again (a sorted table built on the object's first use).
 * Returns 1 found, 0 none (no such file, no debug info, no row), -ENOMEM.
 */
int strace_dwarf_srcline(struct strace_dwarf *d, const char *path,
			 uint64_t vaddr, struct strace_srcline *out);

/*
 * strace_dwarf_text_base() - the ELF virtual address at the start of the
 * object's code mapping (its first executable PT_LOAD segment, from the
 * page its file offset is in, as ld.so and mmap place it): what a reader
 * adds to an address's offset in a DSO entry when the producer wrote no
 * base for it (strace_writer_name_dso_base() is written only for code
 * without a symbol). Returns 1 and *vaddr, 0 if not known.
 */
int strace_dwarf_text_base(struct strace_dwarf *d, const char *path,
			   uint64_t *vaddr);

/*
 * strace_dwarf_function_line() - where the function with code at vaddr
 * is declared (DW_AT_decl_file, DW_AT_decl_line of the DW_TAG_subprogram
 * whose range holds vaddr), as uftrace replay --srcline shows a
 * function: the file as DWARF names it, not joined with the comp dir. A
 * table of the object's functions is read on first use.
 * Returns 1 found, 0 none, -ENOMEM.
 */
int strace_dwarf_function_line(struct strace_dwarf *d, const char *path,
			       uint64_t vaddr, struct strace_srcline *out);

struct strace_inline {
	const char *name;	     /* the inlined function, demangled as
				      * perf names it */
	uint64_t lo, hi;	     /* its range around vaddr [lo, hi) */
	struct strace_srcline call;  /* where it was inlined (DW_AT_call_file,
				      * DW_AT_call_line), in its caller */
};
/*
 * strace_dwarf_inlines() - the inlined functions at vaddr, innermost
 * first (addr2line -i's order: out[0] is the function the instruction's
 * line is in, out[0].call the line in out[1] (or, for the last, in the
 * function with code) it was inlined at), at most max. Memoised per
 * address. Strings valid until strace_dwarf_free().
 * Returns how many (0: not in inlined code, or no debug info), -ENOMEM.
 */
int strace_dwarf_inlines(struct strace_dwarf *d, const char *path,
			 uint64_t vaddr, struct strace_inline *out, size_t max);
/*
 * strace_dwarf_each_line() - every row of the object's line table, in
 * address order: fn(arg, vaddr, end, file, line), [vaddr, end) the code
 * the row starts (end: the next address a row starts at). Every row, not
 * only is_stmt ones: gcc marks a line's first row is_stmt and its later
 * code (an inlined body, a loop's test) not, and coverage wants both;
 * rows at one address all start [vaddr, end) (several lines begin there),
 * the same line again at an address (another view) once. A nonzero return
 * from fn stops and is returned. Returns 0, fn's return, -ENOMEM.
 */
int strace_dwarf_each_line(struct strace_dwarf *d, const char *path,
			   int (*fn)(void *arg, uint64_t vaddr, uint64_t end,
				     const char *file, unsigned line),
			   void *arg);
/*
 * strace_dwarf_each_function() - every function with code (a
 * DW_TAG_subprogram with an address range, not an inline-only abstract
 * one): fn(arg, name, file, line, lo, hi) once per range (a function
 * split hot/cold has two), file:line its declaration. A nonzero return
 * from fn stops and is returned. Returns 0, fn's return, -ENOMEM.
 */
int strace_dwarf_each_function(struct strace_dwarf *d, const char *path,
			       int (*fn)(void *arg, const char *name,
					 const char *file, unsigned line,
					 uint64_t lo, uint64_t hi),
			       void *arg);

/* strace_image_new() - an empty image. opts may be NULL.
 * Returns 0 and *out, -ENOMEM, -STRACE_E_BADARG. */
int strace_image_new(const struct strace_image_opts *opts,
		     struct strace_image **out);

/* strace_image_free() - unmap everything (NULL is fine). Symbol names and
 * code pointers handed out before become invalid. */
void strace_image_free(struct strace_image *img);

/*
 * strace_image_add_file() - map [start, start + len) to path at file
 * offset pgoff, as an MMAP2 record or a /proc/PID/maps line says. The file
 * is mapped read-only once per path (shared by its mappings), or once per
 * cache (strace_image_opts.objects); if it is an ELF file its symbols are
 * read on first use. A new mapping replaces what it overlaps. A path that
 * is not a regular file (a FIFO, a device, a directory) is never opened:
 * it gives -ENODEV, without blocking.
 * Returns 0, -errno (open/mmap failure: the caller may go on without this
 * file; the walker reports STRACE_E_NOMAP if the trace goes there),
 * -ENODEV (not a regular file), -STRACE_E_BADARG for len 0 or a wrapping
 * range.
 */
int strace_image_add_file(struct strace_image *img, uint64_t start,
			  uint64_t len, uint64_t pgoff, const char *path);

/*
 * strace_image_add_bytes() - map [start, start + len) to a copy of buf (a
 * memory dump, e.g. the vDSO read from /proc/PID/mem). If buf holds an ELF
 * image (the vDSO does) its symbols are used, with file offset == offset
 * in buf. name labels the mapping (e.g. "[vdso]"). Returns 0, -ENOMEM,
 * -STRACE_E_BADARG.
 */
int strace_image_add_bytes(struct strace_image *img, uint64_t start,
			   const void *buf, size_t len, const char *name);

/* strace_image_remove() - unmap [start, start + len) (munmap). Returns 0. */
int strace_image_remove(struct strace_image *img, uint64_t start,
			uint64_t len);

/*
 * strace_image_code() - pointer to the code bytes at addr, and in *avail
 * how many bytes follow contiguously in the same mapping (capped at what the
 * backing file holds). NULL if addr is not mapped or beyond the file.
 * Valid until the mapping is removed or the image freed. Fast: the last
 * mapping found is cached (so not safe to call from two threads at once
 * on one image; use strace_image_read() or one image per thread for that).
 */
const uint8_t *strace_image_code(struct strace_image *img, uint64_t addr,
				 size_t *avail);

/* strace_image_read() - copy up to len bytes at addr, crossing mappings.
 * Returns the number of bytes copied (0 if addr is not mapped). */
size_t strace_image_read(struct strace_image *img, uint64_t addr, void *buf,
			 size_t len);

struct strace_symbol {
	const char *name; /* valid until the image is freed */
	const char *dso;  /* path or name of the mapping's object */
	uint64_t start;   /* run-time address of the symbol */
	uint64_t size;    /* bytes (after perf's end fix-up) */
};

/*
 * strace_image_symbol() - the function symbol that holds addr, chosen as
 * perf chooses among aliases. Returns 0 and *out, or -ENOENT (unmapped, no
 * symbol table, or between symbols).
 */
int strace_image_symbol(struct strace_image *img, uint64_t addr,
			struct strace_symbol *out);

/*
 * strace_image_aliases() - the other names of the symbol that starts at
 * start (a strace_symbol.start), under STRACE_PLT_PLAIN: the names of the
 * other symbols at that address and the names as the ELF file writes
 * them where the symbol's own differs (memcpy@@GLIBC_2.14, __GI_X,
 * mangled), each once. Up to max of them into out (valid until the
 * image is freed); returns how many there are (0 in the other styles).
 */
size_t strace_image_aliases(struct strace_image *img, uint64_t start,
			    const char **out, size_t max);

/*
 * strace_image_each_symbol() - every function symbol of the object mapped
 * at addr, in the order of their file offsets: fn(arg, s, off), s as
 * strace_image_symbol() gives it (run-time start through this mapping)
 * and off the file offset of its start (what a uprobe names). Under
 * STRACE_PLT_PLAIN strace_image_aliases() gives a symbol's other names;
 * the perf 6.1 style (STRACE_PLT_PERF61) keeps its symbols elsewhere and
 * gives none here. A non-zero return of fn stops the walk.
 * Returns 0, fn's value, or -ENOENT (addr unmapped).
 */
typedef int (*strace_symbol_fn)(void *arg, const struct strace_symbol *s,
				uint64_t off);
int strace_image_each_symbol(struct strace_image *img, uint64_t addr,
			     strace_symbol_fn fn, void *arg);

/*
 * strace_syscall_nr() - the number of the system call the `syscall`
 * instruction at addr makes, as its code says: the last `mov $N, %eax`
 * before it on the straight path from the start of its symbol, with
 * nothing between that may change %eax, no call, and no direct branch
 * landing between (decoder/sysnr.c). Returns N, or -1 when the code does
 * not say (no symbol, no syscall at addr, the number loaded or computed).
 */
long strace_syscall_nr(struct strace_image *img, uint64_t addr);

/* strace_syscall_name() - x86-64's name of system call nr ("write"), from
 * the kernel's list at build time; NULL if it has none. */
const char *strace_syscall_name(long nr);

/*
 * strace_image_elf_base() - the mapping that holds addr in the object's
 * own addresses: *start its run-time start, *vaddr the ELF virtual address
 * (of the PT_LOAD segment it maps) there, so that addr is at
 * addr - *start + *vaddr for objdump and addr2line. Returns 0, or -ENOENT
 * (unmapped, not a 64-bit ELF, no segment there).
 */
int strace_image_elf_base(struct strace_image *img, uint64_t addr,
			  uint64_t *start, uint64_t *vaddr);

/* strace_image_generation() - changes whenever a mapping is added or
 * removed; block caches keyed by address compare it to know when to flush. */
uint64_t strace_image_generation(const struct strace_image *img);

/* --- block summaries ---------------------------------------------------- */

/* How a block ends. */
enum strace_block_kind {
	STRACE_BK_NONE = 0,    /* cut: limit or page of code reached; go on at
				* start + len with the next block */
	STRACE_BK_CALL,        /* direct call: target */
	STRACE_BK_CALL_IND,    /* indirect call: target from the trace */
	STRACE_BK_RET,         /* near return */
	STRACE_BK_JMP,         /* direct jump: target */
	STRACE_BK_JMP_IND,     /* indirect jump */
	STRACE_BK_JCC,         /* conditional branch (jcc, jrcxz, loop*) */
	STRACE_BK_SYSCALL,     /* syscall */
	STRACE_BK_SYSENTER,    /* sysenter */
	STRACE_BK_INT,         /* int n, int3, into: software interrupt */
	STRACE_BK_IRET,        /* iret */
	STRACE_BK_FAR,         /* far call/jmp/ret, sysret/sysexit, vm exits */
	STRACE_BK_NOCODE,      /* no code at start (unmapped or truncated) */
	STRACE_BK_BAD,         /* undecodable bytes at start + len */
	STRACE_BK_MOV_CR3,     /* MOV to CR3: no branch (go on at start +
				* len), but a TIP.PGD without IP may stop
				* tracing there */
	STRACE_BK_MAX
};

/* OCaml exception-handler patterns seen in the block (flags): OCaml 4.10
 * to 5.x keep the innermost trap in the domain state (r14 points to it,
 * the trap pointer is its third word, D = 0x10):
 * a try pushes the handler's address and the trap pointer and points the
 * latter at them; leaving it pops the trap pointer; a raise loads the stack
 * pointer from it, pops it and returns or jumps to the handler. */
#define STRACE_BF_OCAML_PUSH 0x01 /* mov %rsp,D(%r14) (enter a try); the
				   * handler is the block's handler */
#define STRACE_BF_OCAML_POP 0x02  /* pop D(%r14), not after a RAISE (leave
				   * a try) */
#define STRACE_BF_OCAML_RAISE 0x04 /* mov D(%r14),%rsp: the terminator (ret
				    * or jmp *reg) goes to the handler */
#define STRACE_BF_FALLBACK 0x08   /* Capstone rejected some instruction and
				   * the length decoder measured it */
#define STRACE_BF_SP_UNKNOWN 0x10 /* the stack pointer moves by an unknown
				   * amount (mov/and to rsp, ...) */
#define STRACE_BF_SAME_SYM 0x20   /* direct target lies in the terminator's
				   * symbol (set by strace_bcache_get; both
				   * unknown counts as the same) */
#define STRACE_BF_SYM_KNOWN 0x40  /* SAME_SYM was decided with the block,
				   * once for its file (the target in the
				   * block's mapping: image_block.c), and
				   * kept in the cache file */

struct strace_block {
	uint64_t start;   /* address of the first instruction */
	uint64_t target;  /* direct branch target, 0 if none */
	uint16_t len;     /* bytes, terminator included */
	uint16_t ninsn;   /* instructions, terminator included (<= 1024) */
	int32_t sp_delta; /* bytes rsp moves before the terminator */
	int32_t handler;  /* STRACE_BF_OCAML_PUSH: the address of the handler
			   * pushed (the lea before it), from start; 0: not
			   * known */
	uint8_t kind;     /* enum strace_block_kind */
	uint8_t term_len; /* length of the terminator instruction */
	uint8_t flags;    /* STRACE_BF_* */
	uint8_t pad_;
};
_Static_assert(sizeof(struct strace_block) == 32, "block summaries are 32 "
					      "bytes");
/* the terminator's address: start + len - term_len;
 * the fall-through address: start + len */

/*
 * The code's mode, as MODE.Exec's CS.L and CS.D say it (SDM 33.4.2.8):
 * 64-bit (CS.L), 32-bit (CS.D), 16-bit (neither). A block is decoded in
 * its mode: the same bytes are other instructions in another one.
 */
enum strace_code_mode {
	STRACE_MODE_64 = 0,
	STRACE_MODE_32 = 1,
	STRACE_MODE_16 = 2,
};

/*
 * Caches of block summaries keyed by address (the walker's) or by file
 * offset + 1 (an object's, the cache files') carry the mode in the key's
 * top two bits: 0 for 64-bit code, so that a 64-bit key is the address
 * itself. 32- and 16-bit addresses fit 32 bits; a 64-bit address whose
 * top two bits are 01 or 10 is not canonical (no code is there).
 */
#define STRACE_MODE_SHIFT 62
#define STRACE_MODE_KEY_MASK (3ull << STRACE_MODE_SHIFT)

/* strace_mode_key() - the cache key of address (or offset) a in mode. */
static inline uint64_t strace_mode_key(uint64_t a, unsigned mode)
{
	return a | (uint64_t)mode << STRACE_MODE_SHIFT;
}

/* strace_mode_of_key() - the mode a cache key says, and *a the address
 * (or offset) it keys. */
static inline unsigned strace_mode_of_key(uint64_t key, uint64_t *a)
{
	unsigned m = (unsigned)(key >> STRACE_MODE_SHIFT);

	if (m == STRACE_MODE_32 || m == STRACE_MODE_16) {
		*a = key & ~STRACE_MODE_KEY_MASK;
		return m;
	}
	*a = key;
	return STRACE_MODE_64;
}

/*
 * strace_block_decode() - summarize the block of 64-bit code at ip from
 * code bytes (avail of them, starting at ip). Stops at the first branch,
 * after max_insn instructions (0 or more than 1024: 1024), or where the
 * bytes end. Pure: no cache. strace_block_decode_mode() decodes the code
 * in mode (enum strace_code_mode): Capstone's CS_MODE_64, _32 or _16;
 * a direct target as Capstone computes it (in 32- and 16-bit code cut to
 * the address size).
 * Returns 0 (kind BAD and NOCODE are results, not errors).
 */
int strace_block_decode(const uint8_t *code, size_t avail, uint64_t ip,
			unsigned max_insn, struct strace_block *out);
int strace_block_decode_mode(const uint8_t *code, size_t avail, uint64_t ip,
			     unsigned max_insn, unsigned mode,
			     struct strace_block *out);

/*
 * strace_block_engine() - load Capstone (done by the first summary, or
 * here, once; the decoder does not link it, see summary.c). Without it
 * every summary is BAD. Returns 0, or -STRACE_E_NOCAPSTONE.
 */
int strace_block_engine(void);

/* strace_block_engine_misses() - summaries made BAD because Capstone
 * could not be loaded, in this process so far. */
uint64_t strace_block_engine_misses(void);

/* --- the persistent cache's files (decoder/blockfile.c, docs/cache.md) --- */

/* A block summary as an object keeps it: by file offset + 1 (0: an empty
 * slot), the start 0 and the target relative to the block's address. The
 * cache files hold these records as they are. */
struct strace_blockfile_block {
	uint64_t key;
	struct strace_block b;
	uint32_t has_target, pad_;
};

#define STRACE_BLOCKFILE_ID_MAX 64
/* What a cache file must have been made from. */
struct strace_blockfile_key {
	const uint8_t *id; /* the object's GNU build-id */
	size_t idn;
	uint64_t size, mtime_sec, mtime_nsec; /* the object file's */
	uint32_t symopts;
	/* the separate debug file its symbols came from (all 0: none):
	 * a hash of its path, its size and mtime (its build-id is the
	 * object's), so that one installed, removed or changed since makes
	 * the file stale */
	uint64_t debug_path_hash, debug_size, debug_mtime_sec,
		debug_mtime_nsec;
};

/* A cache file's contents (pointers into its bytes; the symbols and
 * points: decoder/blockfile.h). */
struct strace_blockfile_sym;
struct strace_blockfile_point;
struct strace_blockfile {
	const struct strace_blockfile_block *blocks;
	size_t nblocks;
	const struct strace_blockfile_sym *syms; /* with has_syms */
	size_t nsyms;
	const struct strace_blockfile_point *iv; /* perf 6.1's points */
	size_t niv;
	const char *pool;
	size_t pool_len;
	int has_syms; /* the file holds the object's symbols (maybe none) */
	size_t bytes; /* the file's */
};

/* strace_blockfile_load() - the cache file of key under dir, mapped
 * read-only (not read: docs/cache.md) and checked
 * (strace_blockfile_parse, checksum verified): *buf the mapping (give it
 * to strace_blockfile_unload() when done with *out) and *out pointing
 * into it. Returns 0, -ENOENT (none, or none that can be read), -ESTALE
 * (made from another file or options), -STRACE_E_BADARG (damaged: also
 * not a regular file, too small or too big), -ENOMEM; *buf is NULL
 * unless 0. */
int strace_blockfile_load(const char *dir,
			  const struct strace_blockfile_key *key, void **buf,
			  struct strace_blockfile *out);
void strace_blockfile_unload(void *buf, const struct strace_blockfile *c);

/* strace_blockfile_merge() - the blocks of a file (old: in key order)
 * and the blocks added since (add: any order, maybe twice), in key order
 * and once each, an added one winning over an old one of the same key:
 * what strace_blockfile_write() takes. Returns a malloc'd array of *n,
 * or NULL (no memory). */
struct strace_blockfile_block *
strace_blockfile_merge(const struct strace_blockfile_block *old, size_t nold,
		       const struct strace_blockfile_block *add, size_t nadd,
		       size_t *n);

/* strace_blockfile_write() - write c (its blocks in key order:
 * strace_blockfile_merge()) as the cache file of key under dir
 * (made if missing, mode 0700), atomically: a new file (0600, created
 * anew, never through a link) renamed over the old. Returns 0 or -errno:
 * -EPERM when dir is another user's or others may write into it
 * (strace_cache_dir_check()). */
int strace_blockfile_write(const char *dir,
			   const struct strace_blockfile_key *key,
			   const struct strace_blockfile *c);

/* strace_blockfile_sweep() - remove the temporary files that decodes
 * killed while writing left in dir (BUILDID.blocks.PID.tmp): a PID that
 * no process has, or older than an hour. Returns how many were removed,
 * or -errno (dir refused: strace_cache_dir_check()). */
int strace_blockfile_sweep(const char *dir);

/*
 * strace_insn_length() - length of the x86-64 instruction at code, by a
 * table-driven decoder of prefixes (legacy, REX, VEX, EVEX, XOP), opcode
 * maps, ModRM, SIB, displacement and immediates. Used for what Capstone 4
 * cannot decode. Returns 1..15, or -1 if the bytes are not an instruction
 * or avail is too short.
 */
int strace_insn_length(const uint8_t *code, size_t avail);
/* strace_insn_length_mode() - the same for code in mode (enum
 * strace_code_mode): in 32- and 16-bit code 0x40-0x4f are INC and DEC,
 * not REX; C4, C5 and 62 are LES, LDS and BOUND unless their ModRM's mod
 * is 3; 16-bit code has 16-bit operands and addresses by default, and
 * 16-bit addressing forms. */
int strace_insn_length_mode(const uint8_t *code, size_t avail, unsigned mode);
/* strace_insn_branch_form() - whether the instruction of len bytes at
 * code (in mode) has a branch's opcode (Jcc, JMP, CALL, RET, far forms,
 * LOOP, JCXZ, INT, IRET, SYSCALL...) whatever its prefixes: for bytes
 * Capstone rejects, that is an invalid form of a branch (LOCK: #UD), not
 * an instruction to measure and walk past. Returns 1 or 0. */
int strace_insn_branch_form(const uint8_t *code, size_t len, unsigned mode);

/* A cache of block summaries keyed by a 64-bit key (an address, or a
 * hash of DSO and offset): open addressing, no allocation per lookup. */
struct strace_bcache;

/* strace_bcache_new() - capacity rounded up to a power of two (0: 64Ki
 * entries). The table starts small and doubles as it fills, up to the
 * capacity; when that is full the cache is flushed (memory stays bounded).
 * Returns 0, -ENOMEM. */
int strace_bcache_new(size_t capacity, struct strace_bcache **out);
void strace_bcache_free(struct strace_bcache *c);
void strace_bcache_flush(struct strace_bcache *c);

/*
 * strace_bcache_find() - the cached summary for key, or NULL. With
 * strace_bcache_put(), a cache of code that is not in a struct
 * strace_image: the dlfilter keys blocks by DSO and offset, decodes a miss
 * with strace_block_decode() from perf's object_code() and puts it, and
 * relocates a summary found by ip - start. Neither counts hits or misses.
 */
const struct strace_block *strace_bcache_find(struct strace_bcache *c,
					      uint64_t key);
/* strace_bcache_put() - store a copy; returns the cached copy, valid until
 * the next get or put. */
const struct strace_block *strace_bcache_put(struct strace_bcache *c,
					     uint64_t key,
					     const struct strace_block *b);

/*
 * strace_bcache_get() - the summary of the block at ip in img (decoded and
 * cached on a miss); ip may carry a code mode (strace_mode_key(): the
 * block of 32- or 16-bit code there). Flushes itself when the image's generation changed.
 * Never NULL: an unmapped ip gives kind NOCODE. The pointer is valid until
 * the next get or put on this cache.
 */
const struct strace_block *strace_bcache_get(struct strace_bcache *c,
					     struct strace_image *img,
					     uint64_t ip);

struct strace_bcache_stats {
	uint64_t hits, misses, flushes, entries;
};
void strace_bcache_stats(const struct strace_bcache *c,
			 struct strace_bcache_stats *st);

/* --- the walker ---------------------------------------------------------- */

/* The time conversion (struct strace_time_conv, strace_tsc_to_perf_time()):
 * strace/internal/perf_time.h, included above. */

/* Walker flags. */
#define STRACE_WALK_ALL_BRANCHES 0x1 /* emit every taken branch as jump,
				      * also inside one symbol */
#define STRACE_WALK_REFERENCE 0x2    /* use libipt's block decoder */
#define STRACE_WALK_BIT_BY_BIT 0x8   /* walk one TNT bit at a time, without
				      * the cache of recorded runs (the same
				      * events, slower: for cross-checks) */
#define STRACE_WALK_EXACT_TIMES 0x10 /* every event keeps the time of the
				      * last timing packet: no spreading by
				      * instruction count (docs/decoder.md,
				      * "Times between timing packets") */
#define STRACE_WALK_PEBS 0x20        /* a pebs event (and its pebs_item
				      * events) for each PEBS-via-PT record
				      * (the recording asked for them:
				      * aux-output); without it the records
				      * are passed over */
#define STRACE_WALK_PTWRITE 0x40     /* a ptwrite event for each PTW packet
				      * (the recording asked for them: its
				      * intel_pt config's ptw bit); without
				      * it they are passed over */
#define STRACE_WALK_NAMED_HINTS 0x80 /* the sink names the code addresses
				      * of the events as they come and
				      * clears STRACE_F_NAMED: a parallel
				      * decode may set it (below) */

/* Set by a parallel decode (STRACE_WALK_NAMED_HINTS) on a call, return
 * or jump whose two addresses an event handed to the sink before it
 * (of the same worker) had: the sink named them then, and need not look
 * again. Never in a ring: the sink clears it. */
#define STRACE_F_NAMED 0x4000

/* strace_named_type() - whether events of type may carry STRACE_F_NAMED
 * (elsewhere the bit is another meaning's: an error's code). */
static inline int strace_named_type(unsigned type)
{
	return type - STRACE_EV_CALL <= STRACE_EV_JUMP - STRACE_EV_CALL;
}

/*
 * The processor a trace was recorded on. It chooses the errata
 * workarounds the walker applies, as libipt's pt_cpu_errata() does: the
 * same models get the same workarounds. All zero: unknown, no erratum is
 * assumed (what libipt does without a cpu).
 */
struct strace_pt_cpu {
	uint16_t family; /* 0: unknown */
	uint8_t model;
	uint8_t stepping;
};

/* Errata the walker knows (Intel's specification updates; the names and
 * the models affected are libipt 2.0.5's). */
#define STRACE_ERRATUM_BDM70 0x001  /* PSB+ holds FUP, MODE.Exec while off */
#define STRACE_ERRATUM_BDM64 0x002  /* wrong TIP/TNT before a TSX abort */
#define STRACE_ERRATUM_SKD007 0x004 /* OVF inside a multi-byte CYC */
#define STRACE_ERRATUM_SKD022 0x008 /* VM entry: FUP before TIP.PGD */
#define STRACE_ERRATUM_SKD010 0x010 /* OVF without FUP or TIP.PGE after it */
#define STRACE_ERRATUM_SKL014 0x020 /* TIP.PGD of a direct branch: no IP */
#define STRACE_ERRATUM_APL12 0x040  /* OVF while filtered out, then FUP */
#define STRACE_ERRATUM_APL11 0x080  /* OVF followed by TIP.PGD */
#define STRACE_ERRATUM_SKL168 0x100 /* CYC/MTC dropped before a PSB */
#define STRACE_ERRATUM_SKZ84 0x200  /* VMX TSC scaling: bad TMA + a byte */

/*
 * strace_pt_cpu_parse() - "FAMILY/MODEL[/STEPPING]" (ptxed's --cpu; numbers
 * in C syntax, 0x ok) or perf.data's CPUID header, "GenuineIntel,6,85,4"
 * (another vendor gives family 0: unknown). Returns 0 or -STRACE_E_BADARG.
 */
int strace_pt_cpu_parse(const char *s, struct strace_pt_cpu *cpu);

/* strace_pt_cpu_host() - the processor this runs on (cpuid); family 0 on
 * another vendor or architecture. */
void strace_pt_cpu_host(struct strace_pt_cpu *cpu);

/* strace_pt_cpu_errata() - the STRACE_ERRATUM_* bits of cpu (0: none
 * known, or cpu unknown). */
unsigned strace_pt_cpu_errata(const struct strace_pt_cpu *cpu);

/* Where events go: a callback, or a ring writer (when emit is NULL). */
typedef int (*strace_emit_fn)(void *arg, const struct strace_event *ev);
/* ... or, for runs of events (the spreader's, the parallel merge's), a
 * callback that takes n at once: the same as emit on each in order, one
 * call (strace_walk_opts.emit_batch). */
typedef int (*strace_emit_batch_fn)(void *arg, const struct strace_event *ev,
				    size_t n);

struct strace_walk_opts {
	size_t size;                  /* sizeof(struct strace_walk_opts) */
	unsigned flags;               /* STRACE_WALK_* */
	uint32_t tid;                 /* stored in every event */
	struct strace_time_conv time; /* zero: times are 0 */
	strace_emit_fn emit;          /* called for each event, or NULL */
	void *emit_arg;
	struct strace_writer *writer; /* used when emit is NULL */
	struct strace_bcache *cache;  /* shared cache, or NULL: own cache */
	int has_time;                 /* time is valid */
	/* called now and then from the decoding thread (256 KiB or more
	 * after the last call; at a PSB but with the reference decoder)
	 * with the bytes of buf decoded so far in this call; NULL: never */
	void (*progress)(void *arg, size_t done);
	void *progress_arg;
	struct strace_pt_cpu cpu;     /* the trace's processor (errata), or 0 */
	strace_emit_batch_fn emit_batch; /* with emit: runs of events at once,
					  * or NULL */
	/* the types the sink keeps, NULL: all. The fast walker does not
	 * make the others (but those after which the time stops,
	 * spread_stops(): the times of the rest are as with them) */
	const struct strace_typeset *types;
};

/*
 * Times between timing packets, for a producer of its own (the dlfilter):
 * the decoders' spreader (docs/decoder.md), writing into a ring writer.
 * Events of one thread go in as they come, each with the thread's
 * instruction count when it ran; they come out with their times spread
 * by instruction count between the timing points, in order.
 *
 * Threading: a spreader belongs to one thread at a time.
 */
struct strace_dec_spreader;

/* strace_dec_spreader_new() - a spreader into w (which must outlive it);
 * stop_cap: how far after an interval's start the events before a stop of
 * the trace may go (0: not at all, UINT64_MAX: up to its end).
 * Returns 0 and *out, -ENOMEM. */
int strace_dec_spreader_new(struct strace_writer *w, uint64_t stop_cap,
			    struct strace_dec_spreader **out);

/* strace_dec_spreader_put() - ev, which ran when the thread had executed
 * ins instructions. Returns 0 or the writer's error. */
int strace_dec_spreader_put(struct strace_dec_spreader *s,
			    const struct strace_event *ev, uint64_t ins);

/* strace_dec_spreader_mark() - the time was t when the thread had run ins
 * instructions, with no event there. Returns 0 or the writer's error. */
int strace_dec_spreader_mark(struct strace_dec_spreader *s, uint64_t t,
			     uint64_t ins);

/* strace_dec_spreader_flush() - the events held to the writer, with the
 * times they have (nothing more is coming). Returns 0 or the writer's
 * error. */
int strace_dec_spreader_flush(struct strace_dec_spreader *s);

/* strace_dec_spreader_free() - the spreader (the events held are dropped:
 * flush first); NULL is fine. */
void strace_dec_spreader_free(struct strace_dec_spreader *s);

struct strace_walker;

/* strace_walker_new() - a walker over img (which must outlive it), with
 * opts loaded by the rule of strace/opts.h.
 * Returns 0 and *out, -ENOMEM; -STRACE_E_BADARG without img or opts, or
 * when opts break that rule. */
int strace_walker_new(struct strace_image *img,
		      const struct strace_walk_opts *opts,
		      struct strace_walker **out);
void strace_walker_free(struct strace_walker *w);

/*
 * strace_walker_decode() - decode one PT byte stream (one thread's or one
 * CPU's AUX data, in order). Starts at the first PSB; on a decode error it
 * emits an error event and resumes at the next PSB; an OVF packet gives an
 * overflow event. The call stack for return compression carries over from
 * the previous call (a thread's next buffer). The buffer is only read
 * during the call. Returns the number of events emitted, -STRACE_E_NOSYNC
 * when the buffer has no PSB at all, -STRACE_E_EMIT (or the sink's error)
 * when the sink failed, -ENOMEM.
 */
long strace_walker_decode(struct strace_walker *w, const uint8_t *buf,
			  size_t len);

/*
 * strace_walker_decode_parallel() - the same events as
 * strace_walker_decode(), in the same order, decoded by nthreads threads:
 * the buffer is cut at PSBs into segments of about seg_bytes (0: 64 KiB),
 * which decode independently (the hardware compresses no return across a
 * PSB), then the events at each seam are fixed up to what a sequential
 * decode says there. Memory: the events of 2 * nthreads segments are held
 * at a time. The image must not change meanwhile; its symbols are all
 * loaded first. Falls back to the sequential decode for the reference
 * decoder, one thread, or a short buffer. Returns as strace_walker_decode().
 */
long strace_walker_decode_parallel(struct strace_walker *w,
				   const uint8_t *buf, size_t len,
				   unsigned nthreads, size_t seg_bytes);

/* From this many threads on, strace_walker_decode_parallel()'s workers
 * settle their events for the merge, and, with STRACE_WALK_NAMED_HINTS,
 * set STRACE_F_NAMED (with fewer, the merge keeps up with them). */
#define STRACE_PARALLEL_SETTLE_FROM 4

/*
 * strace_walker_decode_stream() - decode one stream that arrives in pieces
 * (a live capture). buf holds the bytes not used yet: from the stream's
 * start at the first call, from where *used left off later (append the new
 * bytes). Unless final, it decodes up to the last PSB whose PSB+ is
 * complete in buf, and nothing while there is none after buf's start (call
 * again with more bytes); with final, all of buf, and the next call starts
 * a new stream. The events are the ones a single strace_walker_decode() of
 * the whole stream gives (the last few before a piece's end may wait for
 * the next piece's timing packets: docs/decoder.md, "Times between timing
 * packets"). The reference
 * decoder decodes only at final. Do not mix with strace_walker_decode() on
 * one walker. *used: bytes of buf consumed.
 * Returns the number of events, or an error like strace_walker_decode().
 */
long strace_walker_decode_stream(struct strace_walker *w, const uint8_t *buf,
				 size_t len, int final, size_t *used);

struct strace_walk_stats {
	uint64_t bytes;     /* PT bytes decoded */
	uint64_t packets;   /* packets parsed inline */
	uint64_t slow_packets; /* packets handed to libipt */
	uint64_t branches;  /* taken branches followed: calls, returns,
			     * jumps (those inside a function too), system
			     * calls, asynchronous transfers; the same in
			     * both decoders */
	uint64_t insns;     /* instructions walked */
	uint64_t events;    /* events emitted */
	uint64_t errors;    /* decode errors */
	uint64_t overflows;
	uint64_t syncs;     /* PSBs synchronised on */
	uint64_t pebs_records; /* PEBS-via-PT records read (BBP ... BEP),
				* whether or not they gave events */
	uint64_t ptwrites; /* PTW packets read, whether or not they gave
			    * events */
};
void strace_walker_stats(const struct strace_walker *w,
			 struct strace_walk_stats *st);

/*
 * strace_pt_split() - offsets of the PSBs in buf at which it may be cut
 * into segments that decode independently (at least min_bytes apart).
 * Writes up to max offsets (the first is the first PSB). Returns the count.
 */
size_t strace_pt_split(const uint8_t *buf, size_t len, size_t min_bytes,
		       uint64_t *offs, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_DECODER_H */
