/* SPDX-License-Identifier: MIT */
/* dlfilter/dlf_int.h - the dlfilter's state, shared by its files (private:
 * dlf.h is the API). The per-sample code stays in dlf.c, one translation
 * unit; dlf_dso.c and dlf_life.c hold what runs once per DSO or per run. */
#ifndef STRACE_DLF_INT_H
#define STRACE_DLF_INT_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlf.h"
#include "perf_abi.h"
#include "decoder/decoder.h"
#include "strace/internal/grow.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Blocks followed from a branch target to the next sample's source before
 * giving up the check (a long straight run of not-taken branches). */
#define MAX_PATH_BLOCKS 256
/* Code bytes fetched from perf per block decode. */
#define CODE_CHUNK 256

struct dso {
	char *name;
	uint64_t exec_off; /* file offset of the executable segment's page */
	uint64_t exec_len; /* its mapping length; 0 when unknown */
	uint64_t exec_vaddr; /* the ELF virtual address of that page */
	unsigned mode;       /* its code's (enum strace_code_mode): 32-bit
			      * for an ELFCLASS32 file, else 64-bit */
	int in_img; /* the file is in strace_dlf.img (1), cannot be (-1) */
	/* the persistent block cache: the file's key (idn 0: none), its
	 * blocks as read, and the blocks decoded since (keys: address in
	 * the DSO + 1, targets relative) */
	uint8_t id[STRACE_BLOCKFILE_ID_MAX];
	size_t idn;
	uint64_t size, mtime_sec, mtime_nsec;
	void *bc_buf;
	struct strace_blockfile bc;
	int rebuild; /* a stale or damaged file: written anew */
	struct strace_blockfile_block *nv;
	size_t nn, ncap;
};

/* the dlfilter's own cache files (see struct strace_dlf_opts) */
#define DLF_BC_VARIANT (1u << 16)

struct sym {
	uint64_t start, size;
	char *name;
	int defined;    /* a SYMBOL event is in the ring */
	uint64_t shown; /* the size that event gives (see define_sym()) */
	uint64_t own;   /* names=plain: its start in strace_dlf.img (its
			 * aliases are there); 0: perf's symbol */
};

/* One resolved address of one process. */
struct aent {
	uint64_t addr;
	uint32_t pid;
	uint32_t sym; /* index in syms, 0: none */
	uint32_t dso; /* index in dsos, 0: no map */
	uint32_t used;
	uint64_t bias;
};

struct thr {
	uint32_t tid, pid;
	int used;
	int on;              /* the trace is running (after tr strt) */
	int have_last;       /* last_to is known */
	int pending_syscall; /* a syscall left the trace; the next begin is its
			      * return */
	int begun;           /* some trace_begin was seen */
	char *comm;          /* its name, as last defined in the ring */
	uint64_t last_to;    /* where the last branch went */
	uint32_t last_sym;   /* its symbol */
	uint64_t last_time;
	uint32_t cpu1; /* the CPU of its last sample + 1; 0: none */
	/* times between perf's: the instructions the thread ran (from the
	 * block summaries of the continuity check; a branch counts one
	 * where its path is not known), and its spreader */
	uint64_t insns;
	struct strace_dec_spreader *sp;
};

/* A branch seen before: the previous target, its source and target, and
 * what became of it. */
#define MEMO_BITS 13
#define MEMO_SIZE (1u << MEMO_BITS)
/* 32 bytes an entry (8192 of them: 256 KiB, 99.9% hits on the benchmark
 * trace, against 94% with 1024): the pid rides in the top 16 bits of ip
 * and addr (user addresses are below 2^47; a branch with any address above
 * that is never memoised), the instructions from prev to the branch in
 * those of prev; the symbols share their words with the event the branch
 * made (type 0: none, a jump inside one symbol) and its flags, so that a
 * hit decides with one test. */
struct memo {
	uint64_t prev, ip, addr; /* ip, addr: | pid bits << 48; prev: |
				  * instructions << 48 */
	uint32_t a_type;  /* a_sym | event type << 24 */
	uint32_t b_flags; /* b_sym | event flags << 24 */
};
_Static_assert(sizeof(struct memo) == 32, "memo entries are 32 bytes");
#define MEMO_ADDR_LIMIT (1ull << 47)
#define MEMO_LOW48 ((1ull << 48) - 1)
#define MEMO_SYM_MASK 0xffffffu /* symbol indexes above are not memoised */
_Static_assert(STRACE_EV_MAX <= 256, "an event type fits 8 bits");

struct pdso {
	uint32_t pid, dso; /* dso 0: empty */
};

struct strace_dlf {
	struct strace_dlf_opts o;
	struct strace_ring *ring;
	struct strace_writer *w;
	struct strace_bcache *bc;
	int finished;
	int err;

	struct dso *dsos; /* [0] unused */
	size_t ndsos, capdsos;
	struct sym *syms; /* [0] unused */
	size_t nsyms, capsyms;
	uint32_t *symhash; /* symbol index by start; 0 empty */
	size_t symhash_cap;

	struct aent *addrs;
	size_t addrs_cap, addrs_n;

	struct thr *thrs;
	size_t thrs_cap, thrs_n;
	struct thr *last_thr;

	struct pdso *pdsos;
	size_t pdsos_cap, pdsos_n;

	/* addresses of a DSO that perf names no symbol (see define_sym()),
	 * sorted; and the defined symbols, by start (then index) */
	uint64_t *holes;
	size_t holes_cap, holes_n;
	uint32_t *defs;
	size_t defs_cap, defs_n;
	uint32_t cur_tid; /* the sample at hand, for definitions */
	uint64_t cur_time;

	/* the DSOs' own files, for their symbols (names=plain) and the
	 * numbers of the system calls their code makes: DSO i is mapped
	 * whole at dso_base(i), a file offset (perf's address in a DSO) x
	 * at dso_base(i) + x; and the syscall sites named (a memo of the
	 * last ones, then the set) */
	struct strace_image *img;
	struct strace_symset *sites;
	uint64_t site_memo[64];

	struct strace_dlf_stats st;
	char cache_dir[4096]; /* "": none */
	uint8_t code[CODE_CHUNK];
	struct memo memo[MEMO_SIZE];
};

static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* --- tables ----------------------------------------------------------------- */

/* Room for element n of *v (strace_grow()), the new elements zeroed. */
static inline int grow(void **v, size_t *cap, size_t n, size_t esz)
{
	size_t old = *cap;
	void *p;

	if (n < *cap)
		return 0;
	p = strace_grow(*v, cap, esz, 16);
	if (!p)
		return -ENOMEM;
	memset((char *)p + old * esz, 0, (*cap - old) * esz);
	*v = p;
	return 0;
}

/* dlf_dso.c: the DSO table and each DSO's persistent block cache */
uint32_t dlf_dso_index(struct strace_dlf *d, const char *name,
		       const struct strace_dlf_loc *loc);
void dlf_dso_cache_add(struct dso *x, uint64_t off,
		       const struct strace_block *b);
void dlf_dso_cache_save(struct strace_dlf *d);

#endif
