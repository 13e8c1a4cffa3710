// SPDX-License-Identifier: MIT
/*
 * tests/ptsynth/ptsynth.c - make real Intel PT traces of real programs
 * without PT hardware.
 *
 *   ptsynth [options] -o OUT.data [--truth OUT.truth] -- PROG [ARGS...]
 *
 * Runs PROG under qemu-x86_64 -singlestep -d exec,nochain,page -strace
 * (--stack: also -d cpu, for RSP at every branch target in the truth)
 * with QEMU's log streamed through a pipe, classifies every executed
 * instruction with Capstone, encodes the control flow as Intel PT packets
 * with libipt's encoder (as user-only tracing would produce them) and
 * writes a perf.data file, the raw PT streams, a sideband file and the
 * ground truth. See docs/ptsynth.md for the formats and the rules.
 *
 * --ptrace: no QEMU; the instructions come from ptrace single-stepping
 * of PROG and every process it forks and execs (ptstep.c), and the
 * output is a per-CPU recording of all of them (docs/ptsynth.md 5d).
 */
#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pt_backend/perf/perf.h"
#include "ptstep.h"

#define PMU_TYPE 8 /* intel_pt's PMU type; any value matching the attr */
#define MAX_CPUS 1024
#define RETSTACK 64 /* the hardware's return-compression depth */
#define NCPUS 2     /* --per-cpu: CPUs of the modelled machine */

static const char *prog_name = "ptsynth";
static const char *comm_of(const char *path);
static uint32_t pid; /* the (first) process id */
struct proc;

/* QEMU's process group (QEMU and whatever the traced program forked):
 * killed when we give up, so that nothing keeps running behind us. */
static pid_t qemu_pgid;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	if (qemu_pgid > 0)
		kill(-qemu_pgid, SIGKILL);

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

/* ---------------------------------------------------------------- options */

static struct {
	const char *out;
	const char *truth;
	const char *raw; /* prefix of the raw streams and the sideband */
	const char *qemu;
	unsigned long psb_period;
	bool retcomp;
	bool timing;
	bool cyc;
	unsigned mtc_period; /* MTC every 2^n CTC ticks */
	unsigned cbr;        /* core:bus ratio (core clock = cbr * 100 MHz) */
	unsigned nonturbo;   /* max non-turbo ratio = TSC / 100 MHz */
	unsigned tsc_ctc;    /* TSC ticks per CTC tick */
	unsigned syscall_cycles;
	uint64_t ovf_at;  /* inject OVF after this many instructions (thread 0) */
	uint64_t ovf_len; /* instructions lost after the OVF */
	uint64_t drop_off, drop_len;
	bool drop;
	uint64_t corrupt_off;
	bool corrupt;
	bool verbose;
	bool per_cpu;           /* write a per-CPU recording */
	unsigned migrate_every; /* --per-cpu: migrate at every n-th syscall */
	const char *wrap;       /* --wrap: this PT stream, no QEMU run */
	const char *cpuid;      /* the CPUID header, e.g. GenuineIntel,6,85,4 */
	bool ptrace;            /* --ptrace: ptrace single-stepping, not QEMU */
	bool stack;             /* --stack: RSP in the truth (QEMU's -d cpu) */
	bool times;             /* --truth-times: the time of every branch */
	bool aux_output;        /* --aux-output: a cycles/aux-output/ event */
	bool ptw;               /* --ptw: intel_pt/ptw,fup_on_ptw/ */
} opt = {
	.psb_period = 4096,
	.retcomp = true,
	.timing = true,
	.mtc_period = 3,
	.cbr = 20,
	.nonturbo = 24,
	.tsc_ctc = 100,
	.syscall_cycles = 1000,
	.ovf_len = 1000,
	.migrate_every = 3,
};

/* --------------------------------------------------------------- growbuf */

struct gbuf {
	uint8_t *p;
	size_t n, cap;
};

static void gb_put(struct gbuf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->n + n)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void gb_printf(struct gbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gb_printf(struct gbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		gb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* ------------------------------------------------------------ files, maps */

struct file {
	char *path;
	const uint8_t *data;
	size_t size;
	dev_t dev;
	ino_t ino;
};

struct map {
	uint64_t start, end, pgoff;
	struct file *file;
	uint32_t prot;
	uint64_t time;
};

static struct file **files;
static size_t nfiles;
static struct map *maps;
static size_t nmaps;

static struct file *file_get(const char *path)
{
	struct file *f;
	struct stat st;
	char real[PATH_MAX];
	int fd;
	size_t i;

	if (!realpath(path, real))
		return NULL;
	for (i = 0; i < nfiles; i++)
		if (!strcmp(files[i]->path, real))
			return files[i];
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size == 0) {
		close(fd);
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		die("out of memory");
	f->data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->data == MAP_FAILED) {
		free(f);
		return NULL;
	}
	f->size = (size_t)st.st_size;
	f->path = xstrdup(real);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	files = xrealloc(files, (nfiles + 1) * sizeof(*files));
	files[nfiles++] = f;
	return f;
}

static uint64_t now_cycles; /* the synthetic core clock */
static uint64_t tsc_of(uint64_t cycles);

static void map_add(uint64_t start, uint64_t end, uint64_t pgoff,
		    struct file *f, uint32_t prot)
{
	size_t i;

	/* A new mapping replaces what it overlaps (MAP_FIXED). */
	for (i = 0; i < nmaps; i++) {
		if (maps[i].start < end && start < maps[i].end &&
		    maps[i].file == f && maps[i].start == start)
			return; /* duplicate (QEMU logs some things twice) */
	}
	maps = xrealloc(maps, (nmaps + 1) * sizeof(*maps));
	maps[nmaps].start = start;
	maps[nmaps].end = end;
	maps[nmaps].pgoff = pgoff;
	maps[nmaps].file = f;
	maps[nmaps].prot = prot;
	maps[nmaps].time = tsc_of(now_cycles);
	nmaps++;
	if (opt.verbose)
		fprintf(stderr, "map %" PRIx64 "-%" PRIx64 " %" PRIx64 " %s\n",
			start, end, pgoff, f->path);
}

static const struct map *map_find(uint64_t addr)
{
	size_t i;

	for (i = nmaps; i-- > 0;)
		if (addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

/* Code bytes at addr: up to 16, from the mapped file. Returns count. */
static size_t code_bytes(uint64_t addr, uint8_t *buf)
{
	const struct map *m = map_find(addr);
	uint64_t off;
	size_t n;

	if (!m)
		return 0;
	off = addr - m->start + m->pgoff;
	if (off >= m->file->size)
		return 0;
	n = m->file->size - off;
	if (n > 16)
		n = 16;
	if (addr + n > m->end)
		n = m->end - addr;
	memcpy(buf, m->file->data + off, n);
	return n;
}

/* ------------------------------------------------------------------- ELF */

struct elfinfo {
	uint64_t entry;
	uint64_t min_exec_vaddr;
	bool dyn; /* ET_DYN */
	char interp[PATH_MAX];
};

static int elf_read(const char *path, struct elfinfo *ei, char *why, size_t whylen)
{
	struct file *f = file_get(path);
	const Elf64_Ehdr *eh;
	unsigned i;

	memset(ei, 0, sizeof(*ei));
	if (!f) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	eh = (const Elf64_Ehdr *)f->data;
	if (f->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		snprintf(why, whylen, "%s is not an ELF file", path);
		return -1;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64) {
		snprintf(why, whylen, "%s is not an x86-64 ELF program", path);
		return -1;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		snprintf(why, whylen, "%s is not an executable", path);
		return -1;
	}
	if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > f->size) {
		snprintf(why, whylen, "%s: bad program headers", path);
		return -1;
	}
	ei->entry = eh->e_entry;
	ei->dyn = eh->e_type == ET_DYN;
	ei->min_exec_vaddr = UINT64_MAX;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
			(const Elf64_Phdr *)(f->data + eh->e_phoff) + i;

		if (ph->p_type == PT_INTERP && ph->p_offset + ph->p_filesz <= f->size &&
		    ph->p_filesz < sizeof(ei->interp)) {
			memcpy(ei->interp, f->data + ph->p_offset, ph->p_filesz);
			ei->interp[ph->p_filesz] = 0;
		}
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    ph->p_vaddr < ei->min_exec_vaddr)
			ei->min_exec_vaddr = ph->p_vaddr;
	}
	return 0;
}

/* path is a 32-bit x86 ELF file (ELFCLASS32, EM_386). */
static bool elf_is32(const char *path)
{
	struct file *f = file_get(path);
	const Elf32_Ehdr *eh = f ? (const Elf32_Ehdr *)f->data : NULL;

	return eh && f->size >= sizeof(*eh) &&
	       !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	       eh->e_ident[EI_CLASS] == ELFCLASS32 && eh->e_machine == EM_386;
}

/* Add the executable PT_LOAD segments of path loaded at bias. */
static void elf_map(const char *path, uint64_t bias)
{
	struct file *f = file_get(path);
	const Elf64_Ehdr *eh;
	unsigned i;

	if (!f)
		die("cannot read %s", path);
	eh = (const Elf64_Ehdr *)f->data;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
			(const Elf64_Phdr *)(f->data + eh->e_phoff) + i;
		uint64_t s, e;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		s = (bias + ph->p_vaddr) & ~0xfffULL;
		e = (bias + ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffULL;
		map_add(s, e, ph->p_offset & ~0xfffULL, f, PROT_READ | PROT_EXEC);
	}
}

/* ---------------------------------------------------- instruction classes */

enum kind {
	K_OTHER,
	K_COND,
	K_JMP,
	K_JMP_IND,
	K_CALL,
	K_CALL_IND,
	K_RET,
	K_SYSCALL,
};

struct insn {
	uint64_t addr; /* 0 = empty slot */
	uint64_t target; /* K_RET: the bytes `ret imm16` pops besides RIP */
	uint8_t len; /* 0 = unknown (Capstone failed) */
	uint8_t kind;
	uint8_t rep; /* REP-prefixed string instruction */
};

static struct insn *icache;
static size_t icache_mask, icache_n;
static csh cs, cs32; /* Capstone for 64- and 32-bit code */
static bool code32;  /* the current address space runs 32-bit code */
static uint64_t nundecodable;

static struct insn *icache_slot(uint64_t addr)
{
	size_t h = (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & icache_mask;

	while (icache[h].addr && icache[h].addr != addr)
		h = (h + 1) & icache_mask;
	return &icache[h];
}

static void icache_grow(void)
{
	struct insn *old = icache;
	size_t i, oldn = icache_mask + 1;

	icache_mask = oldn * 2 - 1;
	icache = calloc(icache_mask + 1, sizeof(*icache));
	if (!icache)
		die("out of memory");
	for (i = 0; i < oldn; i++)
		if (old[i].addr)
			*icache_slot(old[i].addr) = old[i];
	free(old);
}

static bool is_string_op(unsigned id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD:
	case X86_INS_MOVSQ: case X86_INS_STOSB: case X86_INS_STOSW:
	case X86_INS_STOSD: case X86_INS_STOSQ: case X86_INS_LODSB:
	case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD:
	case X86_INS_CMPSQ: case X86_INS_SCASB: case X86_INS_SCASW:
	case X86_INS_SCASD: case X86_INS_SCASQ: case X86_INS_INSB:
	case X86_INS_INSW: case X86_INS_INSD: case X86_INS_OUTSB:
	case X86_INS_OUTSW: case X86_INS_OUTSD:
		return true;
	default:
		return false;
	}
}

static const struct insn *classify(uint64_t addr)
{
	struct insn *s = icache_slot(addr);
	uint8_t buf[16];
	size_t n;
	cs_insn *ci = NULL;

	if (s->addr)
		return s;
	if (++icache_n * 2 > icache_mask) {
		icache_grow();
		s = icache_slot(addr);
	}
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	n = code_bytes(addr, buf);
	if (n && cs_disasm(code32 ? cs32 : cs, buf, n, addr, 1, &ci) == 1) {
		cs_detail *d = ci->detail;
		unsigned g;
		bool jump = false, call = false, ret = false, intr = false;

		s->len = (uint8_t)ci->size;
		for (g = 0; g < d->groups_count; g++) {
			jump |= d->groups[g] == CS_GRP_JUMP;
			call |= d->groups[g] == CS_GRP_CALL;
			ret |= d->groups[g] == CS_GRP_RET;
			intr |= d->groups[g] == CS_GRP_INT;
		}
		if (ci->id == X86_INS_SYSCALL || ci->id == X86_INS_SYSENTER ||
		    (ci->id == X86_INS_INT && d->x86.op_count == 1 &&
		     d->x86.operands[0].imm == 0x80)) {
			s->kind = K_SYSCALL;
		} else if (ret && (ci->id == X86_INS_RET)) {
			s->kind = K_RET;
			if (d->x86.op_count == 1 &&
			    d->x86.operands[0].type == X86_OP_IMM)
				s->target = (uint64_t)d->x86.operands[0].imm;
		} else if (call && ci->id == X86_INS_CALL) {
			if (d->x86.op_count == 1 &&
			    d->x86.operands[0].type == X86_OP_IMM) {
				s->kind = K_CALL;
				s->target = (uint64_t)d->x86.operands[0].imm;
			} else {
				s->kind = K_CALL_IND;
			}
		} else if (jump && ci->id == X86_INS_JMP) {
			if (d->x86.op_count == 1 &&
			    d->x86.operands[0].type == X86_OP_IMM) {
				s->kind = K_JMP;
				s->target = (uint64_t)d->x86.operands[0].imm;
			} else {
				s->kind = K_JMP_IND;
			}
		} else if (jump && ci->id != X86_INS_LJMP && d->x86.op_count == 1 &&
			   d->x86.operands[0].type == X86_OP_IMM) {
			s->kind = K_COND; /* jcc, jrcxz, loop* */
			s->target = (uint64_t)d->x86.operands[0].imm;
		} else {
			s->kind = K_OTHER;
		}
		s->rep = is_string_op(ci->id) &&
			 (d->x86.prefix[0] == X86_PREFIX_REP ||
			  d->x86.prefix[0] == X86_PREFIX_REPNE);
		(void)intr;
	} else {
		nundecodable++;
		if (opt.verbose)
			fprintf(stderr, "undecodable instruction at %" PRIx64 "\n", addr);
	}
	if (ci)
		cs_free(ci, 1);
	return s;
}

/* ---------------------------------------------------------- PT encoding */

struct thread {
	int cpu;
	int seq;        /* 0 = main thread, in creation order */
	int parent_seq; /* thread that created it */
	uint32_t tid;
	bool alive;
	bool in_trace; /* PacketEn */
	uint64_t pend;  /* instruction executed, not yet finalized (0: none) */
	bool stopped;   /* QEMU logged pend but stopped before executing it */
	uint64_t seen;  /* log line of its last exec, to attribute "Stopped" */
	uint64_t ninsn; /* instructions executed */
	uint64_t nlost; /* of which lost in an injected gap */
	uint64_t nbranches;
	uint64_t last_syscall; /* address of the last syscall instruction */
	uint64_t start_time, end_time;
	/* encoder state */
	struct gbuf pt;
	uint64_t corrupt_at; /* --corrupt: 1 + offset of the byte to flip */
	uint64_t tnt;
	int ntnt;
	uint64_t last_ip;
	bool have_last_ip;
	uint64_t retstack[RETSTACK];
	int rs_top, rs_n;
	size_t psb_at; /* pt.n at the last PSB */
	uint64_t last_ctc;  /* CTC of the last MTC/TMA */
	uint64_t last_cyc;  /* core cycles at the last CYC */
	/* fault injection */
	uint64_t gap_left;
	bool ovf_done, ovf_armed, ovf_now;
	bool made_tip; /* the instruction being finalized sent a TIP */
	size_t mark_truth;  /* truth.n after the last packet-making insn */
	uint64_t mark_insn; /* ninsn then */
	/* truth */
	struct gbuf truth;
	/* --stack: RSP before pend ran, and before the instruction after it */
	uint64_t sp, sp_next;
	/* --stack: calls and returns, and those that moved RSP by exactly
	 * the return address (a check of the register dumps' pairing) */
	uint64_t calls, pushed, rets, popped;
	/* --per-cpu */
	int pcpu;            /* CPU it runs on */
	unsigned nsys;       /* syscalls traced (migration every n-th) */
	size_t chunk;        /* index of its current chunk */
	struct fixup *fx;    /* timing packets, to be shifted by the schedule */
	size_t nfx, capfx, fxi;
	uint64_t off;        /* TSC shift of its last scheduled chunk */
	/* --ptrace */
	uint32_t rtid;       /* its real thread id */
	struct proc *proc;   /* its process */
	bool started;        /* its first instruction came */
	bool exec_pending;   /* it execs: the next instruction is the new
				program's */
	size_t born_chunk;   /* 1 + its creator's chunk when it was created */
};

/*
 * --per-cpu: a thread's stream is cut into chunks where it migrates (at a
 * syscall's TIP.PGD); each chunk runs on one CPU. QEMU runs the threads
 * concurrently, so chunks of threads sharing a CPU overlap in the global
 * clock: after the run, the schedule shifts each chunk's time (a multiple
 * of the MTC period, so that MTC/TMA stay right) to follow the previous
 * chunk on its CPU, and the chunk's TSC/TMA/MTC packets are patched.
 */
struct chunk {
	struct thread *t;
	int cpu;
	bool first_on_cpu; /* the CPU's stream starts here */
	size_t beg, end;   /* bytes of t->pt */
	uint64_t s, e;     /* TSC at sched-in and of the last packet, encoded */
	uint64_t off;      /* TSC shift given by the schedule */
	uint64_t aux_off;  /* offset in the CPU's AUX stream */
};

/* A TSC, TMA or MTC packet at byte `at` of a thread's stream. */
struct fixup {
	size_t at;
	uint8_t type;
	uint16_t fc;
	uint64_t v; /* TSC, TMA's CTC or MTC's payload */
};

static struct chunk *chunks;
static size_t nchunks;
static bool cpu_used[NCPUS];

static struct thread **threads;
static size_t nthreads;
static struct thread *by_cpu[MAX_CPUS];
static struct pt_encoder *enc;
static uint8_t encbuf[64];

static uint64_t tsc_of(uint64_t cycles)
{
	return 0x100000000ULL + cycles * opt.nonturbo / opt.cbr;
}

static void put_packet(struct thread *t, const struct pt_packet *p)
{
	int n;

	pt_enc_sync_set(enc, 0);
	n = pt_enc_next(enc, p);
	if (n < 0)
		die("libipt encoder: %s (packet type %d)", pt_errstr(pt_errcode(n)),
		    p->type);
	if (opt.per_cpu && (p->type == ppt_tsc || p->type == ppt_tma ||
			    p->type == ppt_mtc)) {
		struct fixup *f;

		if (t->nfx == t->capfx) {
			t->capfx = t->capfx ? 2 * t->capfx : 64;
			t->fx = xrealloc(t->fx, t->capfx * sizeof(*t->fx));
		}
		f = &t->fx[t->nfx++];
		memset(f, 0, sizeof(*f));
		f->at = t->pt.n;
		f->type = (uint8_t)p->type;
		if (p->type == ppt_tsc) {
			f->v = p->payload.tsc.tsc;
		} else if (p->type == ppt_tma) {
			f->v = p->payload.tma.ctc;
			f->fc = p->payload.tma.fc;
		} else {
			f->v = p->payload.mtc.ctc;
		}
	}
	/* --corrupt hits the first packet of the flow (TNT, TIP) from its
	 * offset on: a timing packet there would damage nothing a decoder
	 * can be caught at. Its last byte: TNT bits, or the IP's top byte. */
	if (opt.corrupt && t->seq == 0 && !t->corrupt_at &&
	    t->pt.n >= opt.corrupt_off &&
	    (p->type == ppt_tnt_8 || p->type == ppt_tnt_64 ||
	     p->type == ppt_tip || p->type == ppt_tip_pge ||
	     p->type == ppt_tip_pgd))
		t->corrupt_at = t->pt.n + (uint64_t)n;
	gb_put(&t->pt, encbuf, (size_t)n);
}

static void flush_tnt(struct thread *t)
{
	struct pt_packet p;

	if (!t->ntnt)
		return;
	memset(&p, 0, sizeof(p));
	p.type = t->ntnt <= 6 ? ppt_tnt_8 : ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)t->ntnt;
	p.payload.tnt.payload = t->tnt;
	put_packet(t, &p);
	t->tnt = 0;
	t->ntnt = 0;
}

static void put_cyc(struct thread *t)
{
	struct pt_packet p;

	if (!opt.timing || !opt.cyc || now_cycles == t->last_cyc)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = now_cycles - t->last_cyc;
	t->last_cyc = now_cycles;
	put_packet(t, &p);
}

/* Any packet but TNT: pending TNT bits go first, in order. */
static void put_flow(struct thread *t, const struct pt_packet *p)
{
	flush_tnt(t);
	put_cyc(t);
	put_packet(t, p);
}

static void put_tnt(struct thread *t, bool taken)
{
	if (t->ntnt == 0)
		put_cyc(t);
	t->tnt = (t->tnt << 1) | taken;
	if (++t->ntnt == 47)
		flush_tnt(t);
}

static enum pt_ip_compression ipc_for(struct thread *t, uint64_t ip)
{
	enum pt_ip_compression c;

	if (!t->have_last_ip)
		c = (ip >> 47) == 0 || (ip >> 47) == 0x1ffff ? pt_ipc_sext_48
							     : pt_ipc_full;
	else if (((ip ^ t->last_ip) >> 16) == 0)
		c = pt_ipc_update_16;
	else if (((ip ^ t->last_ip) >> 32) == 0)
		c = pt_ipc_update_32;
	else if (((ip ^ t->last_ip) >> 48) == 0)
		c = pt_ipc_update_48;
	else
		c = (ip >> 47) == 0 || (ip >> 47) == 0x1ffff ? pt_ipc_sext_48
							     : pt_ipc_full;
	t->last_ip = ip;
	t->have_last_ip = true;
	return c;
}

static void put_ip(struct thread *t, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	if (type == ppt_tip)
		t->made_tip = true;
	if (type == ppt_tip_pgd && ip == 0) {
		p.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		p.payload.ip.ipc = ipc_for(t, ip);
		p.payload.ip.ip = ip;
	}
	put_flow(t, &p);
}

static void put_simple(struct thread *t, enum pt_packet_type type)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	put_flow(t, &p);
}

static bool thread_is32(const struct thread *t);

/* MODE.Exec: 64-bit code (CS.L), or 32-bit (CS.D) in a 32-bit program
 * (--ptrace). */
static void put_mode_exec(struct thread *t)
{
	struct pt_packet p;
	bool is32 = thread_is32(t);

	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = !is32;
	p.payload.mode.bits.exec.csd = is32;
	put_flow(t, &p);
}

static void put_mtc_if_due(struct thread *t)
{
	uint64_t ctc = tsc_of(now_cycles) / opt.tsc_ctc;
	struct pt_packet p;

	if (!opt.timing || !opt.mtc_period)
		return;
	if ((ctc >> opt.mtc_period) == (t->last_ctc >> opt.mtc_period))
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_mtc;
	p.payload.mtc.ctc = (uint8_t)(ctc >> opt.mtc_period);
	t->last_ctc = ctc & ~((1ULL << opt.mtc_period) - 1);
	put_flow(t, &p);
}

/* The timing packets of a PSB+ or of a trace (re)enable: TSC, TMA, CBR. */
static void put_timing(struct thread *t)
{
	struct pt_packet p;
	uint64_t tsc = tsc_of(now_cycles);

	if (opt.timing) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_tsc;
		p.payload.tsc.tsc = tsc;
		put_packet(t, &p);
		if (opt.mtc_period) {
			uint64_t ctc = tsc / opt.tsc_ctc;

			memset(&p, 0, sizeof(p));
			p.type = ppt_tma;
			p.payload.tma.ctc = (uint16_t)ctc;
			p.payload.tma.fc = (uint16_t)(tsc % opt.tsc_ctc);
			put_packet(t, &p);
			t->last_ctc = ctc;
		}
		memset(&p, 0, sizeof(p));
		p.type = ppt_cbr;
		p.payload.cbr.ratio = (uint8_t)opt.cbr;
		put_packet(t, &p);
		t->last_cyc = now_cycles;
	}
}

/* PSB+: resynchronisation point. ip = next instruction (0: not tracing). */
static void put_psb(struct thread *t, uint64_t ip)
{
	put_simple(t, ppt_psb);
	t->psb_at = t->pt.n - 16;
	t->have_last_ip = false;
	t->rs_n = 0;
	put_timing(t);
	put_mode_exec(t);
	if (ip)
		put_ip(t, ppt_fup, ip);
	put_simple(t, ppt_psbend);
}

/* --per-cpu: thread t is scheduled in on cpu; its new chunk starts here. */
static void chunk_begin(struct thread *t, int cpu)
{
	struct chunk *c;

	chunks = xrealloc(chunks, (nchunks + 1) * sizeof(*chunks));
	c = &chunks[nchunks];
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->cpu = cpu;
	c->first_on_cpu = !cpu_used[cpu];
	cpu_used[cpu] = true;
	c->beg = t->pt.n;
	c->s = tsc_of(now_cycles);
	t->chunk = nchunks++;
	t->pcpu = cpu;
}

/* --per-cpu: t's current chunk ends (after a TIP.PGD); last is its time. */
static void chunk_end(struct thread *t, uint64_t last)
{
	struct chunk *c = &chunks[t->chunk];

	c->end = t->pt.n;
	c->e = tsc_of(last) > c->s ? tsc_of(last) : c->s;
}

/*
 * --per-cpu: t was scheduled out at a syscall and comes back on cpu. The
 * hardware sends a PSB+ only if the CPU's stream is new (PacketByteCnt 0);
 * otherwise timing packets (TSC, TMA, CBR). The decoder of that CPU's
 * stream has not seen t's calls nor its last IP: return compression
 * starts afresh and the TIP.PGE carries a full IP.
 */
static void sched_in(struct thread *t, int cpu)
{
	bool fresh = !cpu_used[cpu];

	chunk_begin(t, cpu);
	t->have_last_ip = false;
	t->rs_n = 0;
	if (fresh)
		put_psb(t, 0);
	else
		put_timing(t);
}

/* A truth line; sp: RSP at `to` (--stack; docs/ptsynth.md 7). */
static void truth(struct thread *t, uint64_t from, uint64_t to, const char *kind,
		  uint64_t sp)
{
	t->nbranches++;
	if (opt.truth && opt.times)
		/* the synthetic clock when the branch ran (perf time is the
		 * TSC: time_mult 1) */
		gb_printf(&t->truth, "%" PRIx64 " %" PRIx64 " %s t=%" PRIu64 "\n",
			  from, to, kind, tsc_of(now_cycles));
	else if (opt.truth && opt.stack)
		gb_printf(&t->truth, "%" PRIx64 " %" PRIx64 " %s %" PRIx64 "\n", from,
			  to, kind, sp);
	else if (opt.truth)
		gb_printf(&t->truth, "%" PRIx64 " %" PRIx64 " %s\n", from, to, kind);
}

/* Tracing (re)starts at ip (RSP sp there): MODE.Exec + TIP.PGE. */
static void trace_enable(struct thread *t, uint64_t ip, const char *kind,
			 uint64_t sp)
{
	t->rs_n = 0;
	put_mtc_if_due(t);
	put_mode_exec(t);
	put_ip(t, ppt_tip_pge, ip);
	t->in_trace = true;
	truth(t, 0, ip, kind, sp);
}

/* Asynchronous exit from the traced context before `at` executed (RSP
 * at_sp), resuming at resume (RSP resume_sp). */
static void trace_async(struct thread *t, uint64_t at, uint64_t at_sp,
			uint64_t resume, uint64_t resume_sp)
{
	put_ip(t, ppt_fup, at);
	put_ip(t, ppt_tip_pgd, 0);
	t->in_trace = false;
	truth(t, at, 0, "async", at_sp);
	if (resume)
		trace_enable(t, resume, "resume", resume_sp);
}

static void push_ret(struct thread *t, uint64_t ra)
{
	t->retstack[t->rs_top] = ra;
	t->rs_top = (t->rs_top + 1) % RETSTACK;
	if (t->rs_n < RETSTACK)
		t->rs_n++;
}

/* Per-instruction boundary work: timing, PSB, injected overflow. */
static void boundary(struct thread *t, uint64_t ip)
{
	if (!t->in_trace)
		return;
	if (t->gap_left) {
		if (--t->gap_left == 0) {
			/*
			 * The buffer has room again: OVF, then FUP with the IP
			 * where tracing resumes (what the hardware sends).
			 */
			put_simple(t, ppt_ovf);
			t->have_last_ip = false;
			t->rs_n = 0;
			put_ip(t, ppt_fup, ip);
			if (opt.truth)
				gb_printf(&t->truth, "# gap end resume %" PRIx64 "\n", ip);
		}
		return;
	}
	if (opt.ovf_at && !t->ovf_done && t->seq == 0 && t->ninsn >= opt.ovf_at) {
		t->ovf_done = true;
		t->ovf_armed = true; /* the gap starts after the next TIP */
	}
	put_mtc_if_due(t);
	if (t->pt.n - t->psb_at >= opt.psb_period)
		put_psb(t, ip);
}

/*
 * Instruction x retired; the thread's next instruction is at next (0 when
 * the thread ended). Emits x's packets and the truth.
 */
static void finalize(struct thread *t, uint64_t x, uint64_t next)
{
	const struct insn *in = classify(x);
	uint64_t len = in->len, fall;
	bool quiet = t->gap_left > 0; /* inside an injected gap: no packets */
	uint64_t sp = t->sp, after = t->sp_next; /* RSP at x, at next */
	struct gbuf save;

	t->made_tip = false;
	if (!len && next > x && next - x <= 15)
		len = next - x;
	fall = x + len;
	if (t->ovf_now) {
		/*
		 * Injected overflow: the packets from here on are lost. It
		 * starts right after a TIP so that every decoder knows the last
		 * branch before the gap and its target (after a TNT bit libipt
		 * does not tell the target). Decoders stop at the last packet,
		 * so the gap begins right after the instruction that made it.
		 */
		static const char mark[] = "# gap begin\n";

		t->ovf_now = false;
		flush_tnt(t);
		t->gap_left = opt.ovf_len ? opt.ovf_len : 1;
		quiet = true;
		/*
		 * Decoders see nothing after the last packet: the gap starts
		 * right after the last instruction that made one.
		 */
		t->nlost += t->ninsn - t->mark_insn;
		if (opt.truth) {
			gb_put(&t->truth, mark, sizeof(mark) - 1);
			memmove(t->truth.p + t->mark_truth + sizeof(mark) - 1,
				t->truth.p + t->mark_truth,
				t->truth.n - (sizeof(mark) - 1) - t->mark_truth);
			memcpy(t->truth.p + t->mark_truth, mark, sizeof(mark) - 1);
		}
	}
	t->ninsn++;
	if (quiet)
		t->nlost++;
	if (quiet) {
		/* Truth goes on; packets are lost. Keep a scratch buffer. */
		save = t->pt;
		memset(&t->pt, 0, sizeof(t->pt));
	}
	switch (in->kind) {
	case K_OTHER:
		if (next && next != fall) {
			/*
			 * QEMU delivers asynchronous signals between TBs (see
			 * on_stopped()), so this is a fault: x did not retire;
			 * the exception is taken at x.
			 */
			t->ninsn--;
			trace_async(t, x, sp, next, after);
		}
		break;
	case K_COND:
		if (!next)
			break;
		if (next == fall && next != in->target) {
			put_tnt(t, false);
		} else if (next == in->target) {
			put_tnt(t, true);
			truth(t, x, next, "cond", after);
		} else {
			put_tnt(t, false);
			trace_async(t, fall, sp, next, after);
		}
		break;
	case K_JMP:
		truth(t, x, in->target, "jump", next == in->target ? after : sp);
		if (next && next != in->target)
			trace_async(t, in->target, sp, next, after);
		break;
	case K_CALL:
		/* a call to the next instruction is not pushed for return
		 * compression (SDM; libipt and perf follow it) */
		if (in->target != fall)
			push_ret(t, fall);
		truth(t, x, in->target, "call", next == in->target ? after : sp - 8);
		if (next == in->target) {
			t->calls++;
			t->pushed += after == sp - 8;
		}
		if (next && next != in->target)
			trace_async(t, in->target, sp - 8, next, after);
		break;
	case K_JMP_IND:
	case K_CALL_IND:
		if (!next)
			break;
		if (in->kind == K_CALL_IND) {
			push_ret(t, fall);
			t->calls++;
			t->pushed += after == sp - 8;
		}
		put_ip(t, ppt_tip, next);
		truth(t, x, next, in->kind == K_CALL_IND ? "call" : "jump", after);
		break;
	case K_RET: {
		bool comp = false;

		if (!next)
			break;
		if (t->rs_n) {
			t->rs_top = (t->rs_top + RETSTACK - 1) % RETSTACK;
			t->rs_n--;
			comp = opt.retcomp && t->retstack[t->rs_top] == next;
		}
		if (comp)
			put_tnt(t, true);
		else
			put_ip(t, ppt_tip, next);
		truth(t, x, next, "return", after);
		t->rets++;
		t->popped += after == sp + 8 + in->target;
		break;
	}
	case K_SYSCALL: {
		bool migrate = opt.per_cpu && next && !quiet &&
			       (++t->nsys % opt.migrate_every == 0 ||
				t->exec_pending);

		t->last_syscall = x;
		put_ip(t, ppt_tip_pgd, 0);
		t->in_trace = false;
		truth(t, x, 0, "syscall", sp);
		if (migrate)
			chunk_end(t, now_cycles);
		now_cycles += opt.syscall_cycles;
		if (migrate)
			sched_in(t, (t->pcpu + 1) % NCPUS);
		if (next) {
			if (quiet) {
				/* the gap swallows the syscall: keep tracing */
				t->in_trace = true;
				truth(t, 0, next, "sysret", after);
			} else {
				trace_enable(t, next, "sysret", after);
			}
		}
		break;
	}
	}
	if (t->ovf_armed && t->made_tip) {
		t->ovf_armed = false;
		t->ovf_now = true;
	}
	if (!quiet && in->kind != K_JMP && in->kind != K_CALL &&
	    (in->kind != K_OTHER || (next && next != fall))) {
		t->mark_truth = t->truth.n;
		t->mark_insn = t->ninsn;
	}
	if (quiet) {
		free(t->pt.p);
		t->pt = save;
		t->in_trace = true;
		t->tnt = 0;
		t->ntnt = 0;
	}
}

/* ------------------------------------------------------------ threads */

static struct thread *thread_new(int cpu, int parent_seq)
{
	struct thread *t = calloc(1, sizeof(*t));

	if (!t)
		die("out of memory");
	t->cpu = cpu;
	t->seq = (int)nthreads;
	t->parent_seq = parent_seq;
	t->alive = true;
	t->start_time = tsc_of(now_cycles);
	threads = xrealloc(threads, (nthreads + 1) * sizeof(*threads));
	threads[nthreads++] = t;
	return t;
}

static void thread_end(struct thread *t)
{
	if (t->pend)
		finalize(t, t->pend, 0);
	t->pend = 0;
	flush_tnt(t);
	if (t->in_trace) {
		/* ended without a syscall (killed): stop where it stood */
		put_ip(t, ppt_tip_pgd, 0);
		t->in_trace = false;
	}
	if (t->gap_left) {
		/*
		 * The thread ended inside an injected gap (it began late: no
		 * TIP came for long after --overflow's count): the buffer has
		 * room again, OVF, and tracing does not resume.
		 */
		t->gap_left = 0;
		put_simple(t, ppt_ovf);
		if (opt.truth)
			gb_printf(&t->truth, "# gap end\n");
	}
	if (opt.per_cpu)
		chunk_end(t, t->seen);
	t->alive = false;
	t->end_time = tsc_of(now_cycles);
	if (by_cpu[t->cpu] == t)
		by_cpu[t->cpu] = NULL;
}

/* vCPU cpu is about to execute addr with RSP = sp (--stack, else 0). */
static void on_exec(int cpu, uint64_t addr, uint64_t sp)
{
	struct thread *t;

	if (cpu < 0 || cpu >= MAX_CPUS)
		die("QEMU vCPU index %d out of range", cpu);
	now_cycles++;
	t = by_cpu[cpu];
	if (t && t->stopped) {
		t->stopped = false;
		if (addr == t->pend) {
			t->seen = now_cycles;
			t->sp = sp;
			return; /* now it really runs */
		}
		/*
		 * pend never ran: QEMU left the TB to deliver a signal. On
		 * hardware: an interrupt before pend, FUP(pend) + TIP.PGD,
		 * then TIP.PGE at the handler.
		 */
		{
			uint64_t at = t->pend, at_sp = t->sp;

			t->pend = addr;
			t->sp = sp;
			t->seen = now_cycles;
			if (!t->gap_left)
				trace_async(t, at, at_sp, addr, sp);
		}
		return;
	}
	if (t && t->pend && t->pend == addr && classify(addr)->rep)
		return; /* another iteration of a REP string instruction */
	if (t && t->pend) {
		const struct insn *in = classify(t->pend);

		/*
		 * A vCPU index is reused by a new thread once the old one
		 * exited: the old thread's last instruction was a syscall
		 * (exit) and the new one starts after another thread's
		 * syscall (clone returns 0 in the child).
		 */
		if (in->kind == K_SYSCALL && addr != t->pend + in->len) {
			size_t i;

			for (i = 0; i < nthreads; i++) {
				struct thread *o = threads[i];

				if (o != t && o->alive && o->last_syscall &&
				    (o->last_syscall + 2 == addr ||
				     (o->pend && o->pend + 2 == addr &&
				      classify(o->pend)->kind == K_SYSCALL)))
					break;
			}
			if (i < nthreads) {
				thread_end(t);
				t = NULL;
			}
		}
	}
	if (!t) {
		int parent = 0;
		size_t i;

		/* the creator: the thread whose clone returns here */
		for (i = 0; i < nthreads; i++) {
			struct thread *o = threads[i];

			if (o->alive && o->pend && classify(o->pend)->kind == K_SYSCALL &&
			    o->pend + 2 == addr)
				parent = o->seq;
			else if (o->alive && o->last_syscall + 2 == addr)
				parent = o->seq;
		}
		t = thread_new(cpu, parent);
		by_cpu[cpu] = t;
		if (opt.per_cpu) /* a new thread's first start: PSB+ */
			chunk_begin(t, t->seq % NCPUS);
		put_psb(t, 0);
		trace_enable(t, addr, "begin", sp);
		t->pend = addr;
		t->sp = sp;
		t->seen = now_cycles;
		return;
	}
	t->sp_next = sp;
	if (t->pend)
		finalize(t, t->pend, addr);
	t->pend = addr;
	t->sp = sp;
	t->seen = now_cycles;
	boundary(t, addr);
}

/* "Stopped execution of TB chain before ... [pc]": pc did not run yet. */
static void on_stopped(uint64_t pc)
{
	struct thread *best = NULL;
	size_t i;

	for (i = 0; i < nthreads; i++) {
		struct thread *t = threads[i];

		if (t->alive && t->pend == pc && (!best || t->seen > best->seen))
			best = t;
	}
	if (best)
		best->stopped = true;
}

/* ------------------------------------------ --ptrace: several processes */

/*
 * --ptrace: the instructions come from ptstep.c (ptrace single-stepping
 * of the command and of every process it forks and execs, natively).
 * Each process and exec has its own address space: its mappings and the
 * instruction cache of its code (one address can hold another program's
 * code in another process). The globals maps/icache are the current
 * thread's space, swapped in by as_use().
 */
struct aspace {
	struct map *maps;
	size_t nmaps;
	struct insn *icache;
	size_t icache_mask, icache_n;
	bool is32; /* its program is 32-bit code (an ELFCLASS32 i386 file) */
};

struct proc {
	uint32_t pid, ppid, ptid;
	struct aspace *as;      /* the current program's */
	struct aspace *next_as; /* after its pending exec */
	char comm[16];
};

/* t's process runs 32-bit code (--ptrace; QEMU runs 64-bit programs). */
static bool thread_is32(const struct thread *t)
{
	return t->proc && t->proc->as && t->proc->as->is32;
}

/* A sideband record of the run, placed in time by the schedule. */
enum { EV_EXEC, EV_MMAP };

struct sbev {
	int type;
	struct thread *t;
	uint32_t pid, tid;
	bool next_chunk; /* just before t's first chunk from index chunk on */
	size_t chunk;    /* else: in this chunk, at time */
	uint64_t time;   /* TSC, before the schedule's shift */
	struct map m;
	char comm[16];
};

static struct aspace *cur_as;
static struct proc **procs;
static size_t nprocs;
static struct sbev *sbevs;
static size_t nsbevs;
static struct thread *last_thread;

/* The globals back into the current space. */
static void as_sync(void)
{
	if (cur_as) {
		cur_as->maps = maps;
		cur_as->nmaps = nmaps;
		cur_as->icache = icache;
		cur_as->icache_mask = icache_mask;
		cur_as->icache_n = icache_n;
	}
}

/* every address space made, kept to the end (the recording is written
 * from all of them) */
static struct aspace **all_as;
static size_t nall_as;

static struct aspace *as_new(const struct aspace *copy)
{
	struct aspace *a = calloc(1, sizeof(*a));

	as_sync();

	if (!a)
		die("out of memory");
	all_as = xrealloc(all_as, (nall_as + 1) * sizeof(*all_as));
	all_as[nall_as++] = a;
	a->icache_mask = (1 << 12) - 1;
	a->icache = calloc(a->icache_mask + 1, sizeof(*a->icache));
	if (!a->icache)
		die("out of memory");
	if (copy)
		a->is32 = copy->is32;
	if (copy && copy->nmaps) {
		a->maps = xrealloc(NULL, copy->nmaps * sizeof(*a->maps));
		memcpy(a->maps, copy->maps, copy->nmaps * sizeof(*a->maps));
		a->nmaps = copy->nmaps;
	}
	return a;
}

static void as_use(struct aspace *a)
{
	if (a == cur_as)
		return;
	if (!cur_as) {
		/* the first space: main()'s instruction cache is not one */
		free(icache);
		icache = NULL;
	}
	as_sync();
	cur_as = a;
	maps = a->maps;
	nmaps = a->nmaps;
	icache = a->icache;
	icache_mask = a->icache_mask;
	icache_n = a->icache_n;
	code32 = a->is32;
}

static struct proc *proc_of(uint32_t p)
{
	for (size_t i = nprocs; i-- > 0;)
		if (procs[i]->pid == p)
			return procs[i];
	return NULL;
}

static struct thread *thread_of(uint32_t tid)
{
	if (last_thread && last_thread->rtid == tid && last_thread->alive)
		return last_thread;
	for (size_t i = nthreads; i-- > 0;)
		if (threads[i]->rtid == tid && threads[i]->alive)
			return last_thread = threads[i];
	die("ptrace: instruction of unknown thread %u", tid);
}

static struct sbev *sbev_add(int type, struct thread *t)
{
	struct sbev *e;

	sbevs = xrealloc(sbevs, (nsbevs + 1) * sizeof(*sbevs));
	e = &sbevs[nsbevs++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->t = t;
	e->pid = t->proc->pid;
	e->tid = t->rtid;
	/* before the thread runs, or between an exec and the new program */
	e->next_chunk = !t->started || t->exec_pending;
	e->chunk = e->next_chunk ? nchunks : t->chunk;
	e->time = tsc_of(now_cycles);
	snprintf(e->comm, sizeof(e->comm), "%s", t->proc->comm);
	return e;
}

static void pt_task(void *ctx, pid_t p, pid_t tid, pid_t pp, pid_t ptid)
{
	struct proc *pr = proc_of((uint32_t)p);
	struct thread *parent = ptid ? thread_of((uint32_t)ptid) : NULL;
	struct thread *t;

	(void)ctx;
	if (!pr) {
		struct proc *pa = pp ? proc_of((uint32_t)pp) : NULL;

		pr = calloc(1, sizeof(*pr));
		if (!pr)
			die("out of memory");
		pr->pid = (uint32_t)p;
		pr->ppid = pp ? (uint32_t)pp : (uint32_t)p;
		pr->ptid = ptid ? (uint32_t)ptid : (uint32_t)p;
		if (pa) {
			pr->as = as_new(pa->as);
			memcpy(pr->comm, pa->comm, sizeof(pr->comm));
		} else {
			pr->as = as_new(NULL);
		}
		procs = xrealloc(procs, (nprocs + 1) * sizeof(*procs));
		procs[nprocs++] = pr;
	}
	if (!pid)
		pid = (uint32_t)p;
	t = thread_new(0, parent ? parent->seq : 0);
	t->rtid = (uint32_t)tid;
	t->proc = pr;
	if (parent && parent->started)
		t->born_chunk = parent->chunk + 1;
}

static void pt_exec(void *ctx, pid_t p, pid_t tid, const char *path)
{
	struct thread *t = thread_of((uint32_t)tid);
	struct proc *pr = t->proc;

	(void)ctx;
	(void)p;
	snprintf(pr->comm, sizeof(pr->comm), "%s", comm_of(path));
	if (t->started) {
		pr->next_as = as_new(NULL);
		t->exec_pending = true;
	}
	(pr->next_as ? pr->next_as : pr->as)->is32 = elf_is32(path);
	if (!pr->next_as && pr->as == cur_as)
		code32 = pr->as->is32;
	sbev_add(EV_EXEC, t);
}

static void pt_maps(void *ctx, pid_t p, pid_t tid, const struct ptstep_map *m,
		    size_t n)
{
	struct thread *t = thread_of((uint32_t)tid);
	struct aspace *a = t->proc->next_as ? t->proc->next_as : t->proc->as;
	struct aspace *was = cur_as;

	(void)ctx;
	(void)p;
	as_use(a);
	for (size_t i = 0; i < n; i++) {
		struct file *f = file_get(m[i].path);
		size_t k;

		if (!f)
			continue;
		for (k = 0; k < nmaps; k++)
			if (maps[k].start == m[i].start && maps[k].file == f &&
			    maps[k].pgoff == m[i].pgoff && maps[k].end == m[i].end)
				break;
		if (k < nmaps)
			continue;
		k = nmaps;
		map_add(m[i].start, m[i].end, m[i].pgoff, f, PROT_READ | PROT_EXEC);
		if (nmaps > k) /* map_add drops what it already has */
			sbev_add(EV_MMAP, t)->m = maps[nmaps - 1];
	}
	if (was)
		as_use(was);
}

static void pt_insn(void *ctx, pid_t p, pid_t tid, uint64_t addr, uint64_t sp)
{
	struct thread *t = thread_of((uint32_t)tid);

	(void)ctx;
	(void)p;
	as_use(t->proc->as);
	now_cycles++;
	if (!t->started) {
		t->started = true;
		chunk_begin(t, t->seq % NCPUS); /* a new thread: PSB+ */
		put_psb(t, 0);
		trace_enable(t, addr, "begin", sp);
		t->pend = addr;
		t->sp = sp;
		t->seen = now_cycles;
		return;
	}
	if (t->pend == addr && !t->exec_pending && classify(addr)->rep)
		return; /* another iteration of a REP string instruction */
	t->sp_next = sp;
	if (t->pend)
		finalize(t, t->pend, addr);
	if (t->exec_pending) {
		struct proc *pr = t->proc;

		t->exec_pending = false;
		if (pr->next_as) {
			pr->as = pr->next_as;
			pr->next_as = NULL;
		}
		as_use(pr->as);
	}
	t->pend = addr;
	t->sp = sp;
	t->seen = now_cycles;
	boundary(t, addr);
}

static void pt_exit(void *ctx, pid_t p, pid_t tid)
{
	struct thread *t = thread_of((uint32_t)tid);

	(void)ctx;
	(void)p;
	as_use(t->proc->as);
	if (t->started)
		thread_end(t);
	t->alive = false;
	if (last_thread == t)
		last_thread = NULL;
}

static int run_ptrace(char **argv)
{
	static const struct ptstep_ops ops = { pt_insn, pt_task, pt_exec,
					       pt_maps, pt_exit };
	struct ptstep_stats st;
	char why[PATH_MAX + 128];
	struct timespec a, b;
	int code;

	clock_gettime(CLOCK_MONOTONIC, &a);
	code = ptstep_run(argv, &ops, NULL, &st, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (code < 0)
		die("%s", why);
	if (opt.verbose) {
		double sec = (double)(b.tv_sec - a.tv_sec) +
			     (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		fprintf(stderr, "ptrace: %" PRIu64 " steps, %" PRIu64 " tasks, %"
			PRIu64 " maps reads, %.1f s, %.0f steps/s\n", st.steps,
			st.tasks, st.map_reads, sec, sec > 0 ? (double)st.steps / sec : 0);
	}
	return code;
}

/* -------------------------------------------------------- QEMU log parse */

static uint32_t pid;
static uint64_t log_entry, log_start_code;
static bool have_entry, have_start_code, maps_ready;
static char *fd_path[4096];
static uint32_t *clone_tids;
static size_t nclone_tids;
static const char *prog_path;
static struct elfinfo prog_ei;

static void setup_initial_maps(void)
{
	char why[PATH_MAX + 64];
	struct elfinfo iei;

	if (maps_ready)
		return;
	maps_ready = true;
	if (!have_start_code || !have_entry)
		die("QEMU did not report the load addresses (-d page)");
	elf_map(prog_path, log_start_code - prog_ei.min_exec_vaddr);
	if (prog_ei.interp[0]) {
		if (elf_read(prog_ei.interp, &iei, why, sizeof(why)))
			die("%s", why);
		elf_map(prog_ei.interp, log_entry - iei.entry);
	}
}

static uint64_t parse_num(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* One complete strace line: "PID name(args) = ret". */
static void on_strace(char *line)
{
	char *p, *args, *ret;
	unsigned long v;

	if (!strncmp(line, "entry ", 6)) {
		log_entry = strtoull(line + 6, NULL, 0);
		have_entry = true;
		return;
	}
	if (!strncmp(line, "start_code ", 11)) {
		log_start_code = strtoull(line + 11, NULL, 0);
		have_start_code = true;
		return;
	}
	v = strtoul(line, &p, 10);
	if (p == line || *p != ' ')
		return;
	if (!pid)
		pid = (uint32_t)v;
	else if ((uint32_t)v != pid)
		die("%s created a process (pid %lu): fork is not supported, only threads",
		    prog_path, v);
	p++;
	if (!strncmp(p, "execve(", 7) || !strncmp(p, "execveat(", 9))
		die("%s calls exec: not supported (the new program would run "
		    "outside QEMU)", prog_path);
	args = strchr(p, '(');
	ret = strstr(p, ") = ");
	if (!args || !ret)
		return;
	*args++ = 0;
	*ret = 0;
	ret += 4;
	if (!strcmp(p, "openat") || !strcmp(p, "open")) {
		char *q = strchr(args, '"'), *e;
		long fd = strtol(ret, NULL, 10);

		if (!q || fd < 0 || fd >= 4096)
			return;
		e = strchr(q + 1, '"');
		if (!e)
			return;
		*e = 0;
		free(fd_path[fd]);
		fd_path[fd] = xstrdup(q + 1);
	} else if (!strcmp(p, "close")) {
		long fd = strtol(args, NULL, 10);

		if (fd >= 0 && fd < 4096) {
			free(fd_path[fd]);
			fd_path[fd] = NULL;
		}
	} else if (!strcmp(p, "mmap")) {
		/* mmap(addr,len,prot,flags,fd,off) */
		char *f[6];
		int i;
		long fd;
		uint64_t addr, len, off;
		struct file *file;

		for (i = 0; i < 6; i++) {
			f[i] = args;
			args = strchr(args, ',');
			if (!args && i < 5)
				return;
			if (args)
				*args++ = 0;
		}
		if (!strstr(f[2], "PROT_EXEC"))
			return;
		fd = strtol(f[4], NULL, 10);
		if (fd < 0 || fd >= 4096 || !fd_path[fd])
			return;
		addr = parse_num(ret);
		if (!strncmp(ret, "-1", 2))
			return;
		len = parse_num(f[1]);
		off = parse_num(f[5]);
		file = file_get(fd_path[fd]);
		if (!file)
			return;
		map_add(addr, (addr + len + 0xfff) & ~0xfffULL, off, file,
			PROT_READ | PROT_EXEC);
	} else if (!strcmp(p, "clone") || !strcmp(p, "clone3")) {
		long tid = strtol(ret, NULL, 10);

		if (tid > 0 && strstr(args, "CLONE_THREAD")) {
			clone_tids = xrealloc(clone_tids,
					      (nclone_tids + 1) * sizeof(*clone_tids));
			clone_tids[nclone_tids++] = (uint32_t)tid;
		}
	}
}

static struct gbuf sline; /* strace text being assembled */
static struct gbuf sheld; /* a record waiting for its " = ret" meanwhile */

/* "PID name(": the start of a strace record. */
static bool starts_record(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || i == n || s[i++] != ' ')
		return false;
	for (k = i; k < n && ((s[k] >= 'a' && s[k] <= 'z') || s[k] == '_' ||
			      (s[k] >= '0' && s[k] <= '9'));
	     k++)
		;
	return k > i && k < n && s[k] == '(';
}

static void strace_text(const char *s, size_t n, bool eol)
{
	/*
	 * QEMU prints a syscall's "PID name(args)" and its " = ret" apart:
	 * another thread's whole record can come between (a clone's result
	 * after the new thread's first syscalls). The waiting record is held
	 * until a " = " comes with no other record open.
	 */
	if (sline.n && starts_record(s, n)) {
		struct gbuf tmp = sheld;

		sheld = sline;
		sline = tmp;
		sline.n = 0;
	} else if (!sline.n && sheld.n && n >= 3 && !memcmp(s, " = ", 3)) {
		struct gbuf tmp = sline;

		sline = sheld;
		sheld = tmp;
		sheld.n = 0;
	}
	gb_put(&sline, s, n);
	if (eol) {
		gb_put(&sline, "", 1);
		on_strace((char *)sline.p);
		sline.n = 0;
	}
}

static bool is_hexdigit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* The 16 lower-case hex digits at p; false if they are not. */
static bool hex16(const char *p, uint64_t *v)
{
	uint64_t x = 0;

	for (int i = 0; i < 16; i++) {
		if (!is_hexdigit(p[i]))
			return false;
		x = (x << 4) | (uint64_t)(p[i] <= '9' ? p[i] - '0' : p[i] - 'a' + 10);
	}
	*v = x;
	return true;
}

/*
 * --stack: with -d cpu QEMU dumps the registers (as they are before the
 * instruction runs) after each Trace line, 20 lines from "RAX=" to
 * "EFER=", but under a log lock of its own: Trace lines of other threads
 * and strace text can come between a Trace line and its dump (never
 * inside a dump). A Trace line waits here for its dump, which names no
 * vCPU: it is matched by RIP, and when several threads wait at one RIP
 * (a creator and its new thread right after clone, workers in one loop)
 * by the FS base, each thread's own TLS.
 */
#define MAX_WAITING 256

static struct {
	int cpu;
	uint64_t pc;
} waiting[MAX_WAITING];
static size_t nwaiting;
static uint64_t cpu_fs[MAX_CPUS];
static bool cpu_fs_known[MAX_CPUS];
static struct {
	bool on;
	uint64_t rax, rsp, rip, fs;
} dump;
static uint64_t ndumps_by_fs, ndumps_missing;

static void wait_dump(int cpu, uint64_t pc)
{
	size_t i;

	if (cpu < 0 || cpu >= MAX_CPUS)
		die("QEMU vCPU index %d out of range", cpu);
	for (i = 0; i < nwaiting; i++)
		if (waiting[i].cpu == cpu)
			die("QEMU's log: two Trace lines of vCPU %d without a register "
			    "dump between them", cpu);
	if (nwaiting == MAX_WAITING)
		die("QEMU's log: more than %d threads wait for their register dump",
		    MAX_WAITING);
	waiting[nwaiting].cpu = cpu;
	waiting[nwaiting].pc = pc;
	nwaiting++;
}

static void dump_end(void)
{
	size_t i, first = SIZE_MAX, same_fs = SIZE_MAX, fresh = SIZE_MAX, pick, nrip = 0;
	int cpu;
	uint64_t pc;

	dump.on = false;
	for (i = 0; i < nwaiting; i++) {
		int c = waiting[i].cpu;

		if (waiting[i].pc != dump.rip)
			continue;
		nrip++;
		if (first == SIZE_MAX)
			first = i;
		if (same_fs == SIZE_MAX && cpu_fs_known[c] && cpu_fs[c] == dump.fs)
			same_fs = i;
		if (fresh == SIZE_MAX && !cpu_fs_known[c])
			fresh = i;
	}
	if (first == SIZE_MAX)
		die("QEMU's log: a register dump at %" PRIx64 " that no Trace line "
		    "waits for", dump.rip);
	/* the thread with that FS base, else one new on its vCPU (its FS
	 * not known yet), else the first to wait */
	pick = same_fs != SIZE_MAX ? same_fs : fresh != SIZE_MAX ? fresh : first;
	ndumps_by_fs += nrip > 1;
	cpu = waiting[pick].cpu;
	pc = waiting[pick].pc;
	memmove(&waiting[pick], &waiting[pick + 1],
		(nwaiting - pick - 1) * sizeof(waiting[0]));
	nwaiting--;
	/* exit (60) at a syscall: the next thread on this vCPU has its own TLS */
	cpu_fs[cpu] = dump.fs;
	cpu_fs_known[cpu] = !(dump.rax == 60 && classify(pc)->kind == K_SYSCALL);
	on_exec(cpu, pc, dump.rsp);
}

/* A line of a register dump (dump.on), or its first line "RAX=...". */
static void dump_line(const char *line, size_t n)
{
	bool ok = true;

	if (n >= 4 && !memcmp(line, "RAX=", 4)) {
		dump.on = true;
		ok = n >= 20 && hex16(line + 4, &dump.rax);
	} else if (n >= 4 && !memcmp(line, "RSI=", 4)) {
		ok = n >= 83 && !memcmp(line + 63, "RSP=", 4) && hex16(line + 67, &dump.rsp);
	} else if (n >= 4 && !memcmp(line, "RIP=", 4)) {
		ok = n >= 20 && hex16(line + 4, &dump.rip);
	} else if (n >= 4 && !memcmp(line, "FS =", 4)) {
		ok = n >= 25 && hex16(line + 9, &dump.fs);
	} else if (n >= 5 && !memcmp(line, "EFER=", 5)) {
		dump_end();
	} else if (n < 4 || line[3] != '=') {
		ok = false; /* every other line: "R8 =", "GDT=", "CCS=", ... */
	}
	if (!ok)
		die("QEMU's log: unexpected line in a register dump: %.*s", (int)n, line);
}

/* End of the log: a thread killed between its Trace line and its dump
 * (at exit) runs that instruction with an unknown RSP (0). */
static void flush_waiting(void)
{
	while (nwaiting) {
		ndumps_missing++;
		dump.rip = waiting[0].pc;
		dump.rsp = 0;
		dump.fs = 0;
		dump.rax = 0;
		dump_end();
	}
}

/* "RAX=" + 16 hex digits + " RBX=": a register dump begins at p. */
static bool is_dump_start(const char *p)
{
	uint64_t v;

	return !memcmp(p, "RAX=", 4) && hex16(p + 4, &v) && !memcmp(p + 20, " RBX=", 5);
}

static void on_line(char *line, size_t n)
{
	char *tr;

	/* n excludes the newline */
	if (dump.on || (opt.stack && n >= 25 && is_dump_start(line))) {
		dump_line(line, n);
		return;
	}
	if (n >= 6 && !memcmp(line, "Trace ", 6)) {
		tr = line;
	} else {
		line[n] = 0;
		tr = strstr(line, "Stopped execution of TB chain before ");
		if (tr) {
			char *b = strchr(tr, '[');

			strace_text(line, (size_t)(tr - line), false);
			if (b)
				on_stopped(strtoull(b + 1, NULL, 16));
			return;
		}
		if (opt.stack) {
			/* a dump right after unfinished strace text */
			char *r = strstr(line, "RAX=");

			if (r && (size_t)(r - line) + 25 <= n && is_dump_start(r)) {
				strace_text(line, (size_t)(r - line), false);
				dump_line(r, n - (size_t)(r - line));
				return;
			}
		}
		tr = strstr(line, "Trace ");
		if (tr) {
			strace_text(line, (size_t)(tr - line), false);
		} else {
			char *pl = strstr(line, "page layout changed");

			if (pl) {
				strace_text(line, (size_t)(pl - line), false);
				return;
			}
			if (n > 17 && is_hexdigit(line[0]) && line[16] == '-')
				return; /* page table row */
			if (!strncmp(line, "start            end", 19))
				return;
			strace_text(line, n, true);
			return;
		}
	}
	/* "Trace 0: 0x7f.. [0000000000000000/00000000004014f0/..." */
	{
		char *p = tr + 6, *b;
		int cpu = 0;
		uint64_t pc = 0;
		int i;

		while (*p >= '0' && *p <= '9')
			cpu = cpu * 10 + (*p++ - '0');
		b = memchr(p, '[', (size_t)(line + n - p));
		if (!b || b + 34 > line + n)
			return;
		b += 18;
		for (i = 0; i < 16; i++) {
			char c = b[i];

			pc = (pc << 4) | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
		}
		if (!maps_ready)
			setup_initial_maps();
		if (opt.stack)
			wait_dump(cpu, pc);
		else
			on_exec(cpu, pc, 0);
	}
}

/* ------------------------------------------------------------- running */

static const char *find_in_path(const char *name)
{
	static char buf[PATH_MAX];
	const char *path = getenv("PATH");
	const char *p, *e;

	if (strchr(name, '/'))
		return name;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p), p, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

static int run_qemu(char **argv)
{
	int pfd[2];
	pid_t child;
	char **qargv;
	int argc = 0, i, nown, status;
	const char *qemu = opt.qemu ? opt.qemu : "qemu-x86_64";
	static char rbuf[1 << 20];
	size_t have = 0;

	while (argv[argc])
		argc++;
	if (!find_in_path(qemu) || access(find_in_path(qemu), X_OK))
		die("%s not found: install qemu-user (Debian package qemu-user)", qemu);
	if (pipe2(pfd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	qargv = xrealloc(NULL, (size_t)(argc + 12) * sizeof(*qargv));
	i = 0;
	qargv[i++] = xstrdup(qemu);
	qargv[i++] = xstrdup("-singlestep");
	qargv[i++] = xstrdup("-d");
	qargv[i++] = xstrdup(opt.stack ? "exec,nochain,page,cpu" : "exec,nochain,page");
	qargv[i++] = xstrdup("-strace");
	qargv[i++] = xstrdup("-D");
	qargv[i++] = xstrdup("/dev/fd/3");
	qargv[i++] = xstrdup(prog_path);
	nown = i; /* qargv[0..nown) are ours to free */
	for (int k = 1; k < argc; k++)
		qargv[i++] = argv[k];
	qargv[i] = NULL;
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		setpgid(0, 0);
		if (dup2(pfd[1], 3) < 0)
			_exit(127);
		execvp(qemu, qargv);
		fprintf(stderr, "%s: cannot run %s: %s\n", prog_name, qemu,
			strerror(errno));
		_exit(127);
	}
	setpgid(child, child); /* also here: whichever runs first */
	qemu_pgid = child;
	close(pfd[1]);
	for (;;) {
		ssize_t r = read(pfd[0], rbuf + have, sizeof(rbuf) - have - 1);
		char *s, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("reading QEMU's log: %s", strerror(errno));
		if (r == 0)
			break;
		have += (size_t)r;
		s = rbuf;
		while ((nl = memchr(s, '\n', have - (size_t)(s - rbuf)))) {
			on_line(s, (size_t)(nl - s));
			s = nl + 1;
		}
		have -= (size_t)(s - rbuf);
		memmove(rbuf, s, have);
		if (have == sizeof(rbuf) - 1) {
			on_line(rbuf, have); /* absurdly long line: cut */
			have = 0;
		}
	}
	if (have)
		on_line(rbuf, have); /* last line without a newline */
	if (sline.n)
		strace_text("", 0, true); /* e.g. an exec never returns */
	flush_waiting();
	if (ndumps_missing)
		fprintf(stderr, "%s: %" PRIu64 " instruction(s) without QEMU's register "
			"dump (threads killed at exit): RSP 0 in the truth\n", prog_name,
			ndumps_missing);
	if (opt.verbose && opt.stack)
		fprintf(stderr, "stack: %" PRIu64 " register dump(s) matched to their "
			"thread by FS base\n", ndumps_by_fs);
	close(pfd[0]);
	for (i = 0; i < nown; i++)
		free(qargv[i]);
	free(qargv);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		die("the traced program crashed (signal %d: %s)", WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	if (WEXITSTATUS(status) == 127 && !nthreads)
		die("QEMU could not run %s", prog_path);
	return WEXITSTATUS(status);
}

/* ----------------------------------------------------------- outputs */

static uint32_t tid_of(const struct thread *t)
{
	if (t->rtid)
		return t->rtid;
	if (t->seq == 0)
		return pid;
	if ((size_t)t->seq - 1 < nclone_tids)
		return clone_tids[t->seq - 1];
	return pid + 100000 + (uint32_t)t->seq;
}

static void apply_faults(struct thread *t)
{
	if (t->seq != 0)
		return;
	if (t->corrupt_at)
		t->pt.p[t->corrupt_at - 1] ^= 0x5a;
	if (opt.drop && opt.drop_off < t->pt.n) {
		uint64_t l = opt.drop_len;

		if (opt.drop_off + l > t->pt.n)
			l = t->pt.n - opt.drop_off;
		memmove(t->pt.p + opt.drop_off, t->pt.p + opt.drop_off + l,
			t->pt.n - opt.drop_off - l);
		t->pt.n -= l;
	}
}

static void write_file(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(d, 1, n, f) != n || fclose(f))
		die("cannot write %s: %s", path, strerror(errno));
}

/* Sample-id trailer for sample_type TID|TIME|CPU|IDENTIFIER. */
struct sid {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

#define SAMPLE_TYPE                                                            \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_IDENTIFIER)

/* --per-cpu ids: the intel_pt event on CPU c is 1 + c, the dummy 3 + c */
#define ID_PT(c) (1 + (uint64_t)(c))
#define ID_DUMMY(c) (1 + NCPUS + (uint64_t)(c))

/* Build a record with a sample-id trailer in buf (4096 bytes); its size. */
static size_t rec_build(uint8_t *buf, uint32_t type, uint16_t misc,
			const void *body, size_t blen, const char *str,
			uint32_t rpid, uint32_t rtid, uint64_t time, uint32_t cpu,
			uint64_t id)
{
	struct pfmt_event_header h;
	struct sid s = { rpid, rtid, time, cpu, 0, id };
	size_t n = sizeof(h), slen;

	if (blen)
		memcpy(buf + n, body, blen);
	n += blen;
	if (str) {
		slen = strlen(str) + 1;
		if (slen > 2048)
			slen = 2048;
		memcpy(buf + n, str, slen);
		buf[n + slen - 1] = 0;
		n += slen;
		while (n % 8)
			buf[n++] = 0;
	}
	memcpy(buf + n, &s, sizeof(s));
	n += sizeof(s);
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	return n;
}

static void rec_put(struct strace_perfw *w, uint32_t type, uint16_t misc,
		    const void *body, size_t blen, const char *str,
		    uint32_t rpid, uint32_t rtid, uint64_t time)
{
	uint8_t buf[4096];
	size_t n;
	int err;

	n = rec_build(buf, type, misc, body, blen, str, rpid, rtid, time, 0,
		      opt.per_cpu ? ID_DUMMY(0) : 1);
	err = strace_perfw_record(w, buf, n);
	if (err)
		die("writing %s: %s", opt.out, strerror(-err));
}

/* ------------------------------------------------------ per-CPU output */

/*
 * Place the chunks: each follows the previous chunk on its CPU and its
 * thread's previous chunk (shifts never decrease along a thread), with a
 * gap for the sideband records between them. Then shift the timing
 * packets of every chunk by its offset, a multiple of the MTC period in
 * TSC ticks, so that MTC boundaries and TMA's fast counter stay right.
 */
#define SCHED_GAP 16

static void schedule_chunks(void)
{
	uint64_t cpu_end[NCPUS] = { 0 }, aux_off[NCPUS] = { 0 };
	uint64_t q = (uint64_t)opt.tsc_ctc << opt.mtc_period; /* 1 MTC period */
	size_t i;

	for (i = 0; i < nchunks; i++) {
		struct chunk *c = &chunks[i];
		struct thread *t = c->t;
		uint64_t off = t->off;

		/* --ptrace: a new task (a forked process) starts after its
		 * creator's chunk that created it, not before */
		if (t->born_chunk && off < chunks[t->born_chunk - 1].off)
			off = chunks[t->born_chunk - 1].off;
		if (cpu_end[c->cpu] && cpu_end[c->cpu] + SCHED_GAP > c->s + off)
			off = cpu_end[c->cpu] + SCHED_GAP - c->s;
		off = (off + q - 1) / q * q;
		c->off = off;
		t->off = off;
		cpu_end[c->cpu] = c->e + off;
		c->aux_off = aux_off[c->cpu];
		aux_off[c->cpu] += (c->end - c->beg + 7) / 8 * 8;
	}
	for (i = 0; i < nchunks; i++) {
		struct chunk *c = &chunks[i];
		struct thread *t = c->t;

		for (; t->fxi < t->nfx && t->fx[t->fxi].at < c->end; t->fxi++) {
			struct fixup *f = &t->fx[t->fxi];
			uint64_t dctc = c->off / opt.tsc_ctc;
			struct pt_packet p;
			int n;

			memset(&p, 0, sizeof(p));
			p.type = f->type;
			if (f->type == ppt_tsc) {
				p.payload.tsc.tsc = f->v + c->off;
			} else if (f->type == ppt_tma) {
				p.payload.tma.ctc = (uint16_t)(f->v + dctc);
				p.payload.tma.fc = f->fc;
			} else {
				p.payload.mtc.ctc =
					(uint8_t)(f->v + (dctc >> opt.mtc_period));
			}
			pt_enc_sync_set(enc, 0);
			n = pt_enc_next(enc, &p);
			if (n < 0 || f->at + (size_t)n > t->pt.n)
				die("libipt encoder: cannot patch a timing packet");
			memcpy(t->pt.p + f->at, encbuf, (size_t)n);
		}
	}
	if (opt.verbose) {
		size_t shifted = 0;

		for (i = 0; i < nchunks; i++)
			shifted += chunks[i].off != 0;
		fprintf(stderr, "per-cpu: %zu chunk(s) on %d CPUs, %zu shifted in time, "
			"last shift %" PRIu64 " TSC ticks\n", nchunks, NCPUS, shifted,
			nchunks ? chunks[nchunks - 1].off : 0);
	}
	for (i = 0; i < nthreads; i++)
		threads[i]->start_time = threads[i]->end_time = 0;
	for (i = 0; i < nchunks; i++) {
		struct chunk *c = &chunks[i];

		if (!c->t->start_time)
			c->t->start_time = c->s + c->off;
		c->t->end_time = c->e + c->off;
	}
}

/* A sideband or AUXTRACE record of a per-CPU recording, written in time order. */
struct prec {
	uint64_t time;
	size_t seq;
	uint8_t *rec; /* NULL: the AUXTRACE record of chunk */
	size_t n;
	const struct chunk *chunk;
};

static struct prec *precs;
static size_t nprecs;

static void prec_add(uint64_t time, const uint8_t *rec, size_t n,
		     const struct chunk *chunk)
{
	struct prec *r;

	precs = xrealloc(precs, (nprecs + 1) * sizeof(*precs));
	r = &precs[nprecs];
	r->time = time;
	r->seq = nprecs++;
	r->n = n;
	r->chunk = chunk;
	r->rec = NULL;
	if (rec) {
		r->rec = xrealloc(NULL, n);
		memcpy(r->rec, rec, n);
	}
}

static void prec_rec(uint32_t type, uint16_t misc, const void *body,
		     size_t blen, const char *str, uint32_t tid,
		     uint64_t time, int cpu, uint64_t id)
{
	uint8_t buf[4096];
	uint32_t rpid = pid;
	size_t n;

	for (size_t i = nthreads; opt.ptrace && i-- > 0;)
		if (threads[i]->rtid == tid) {
			rpid = threads[i]->proc->pid;
			break;
		}
	n = rec_build(buf, type, misc, body, blen, str, rpid, tid, time,
		      (uint32_t)cpu, id);

	prec_add(time, buf, n, NULL);
}

static int prec_cmp(const void *a, const void *b)
{
	const struct prec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The records of a per-CPU recording after the process's COMM and MMAP2s:
 * per chunk ITRACE_START (first on its CPU), SWITCH in, the AUX data,
 * SWITCH out and AUX; FORK/COMM and EXIT per thread. All sorted by time.
 */
static void write_percpu_records(struct strace_perfw *w, const char *comm)
{
	size_t i;
	int err;

	for (i = 0; i < nthreads; i++) {
		struct thread *t = threads[i];
		uint32_t tid = tid_of(t);
		int cpu0 = -1, cpu1 = -1;
		size_t k;

		for (k = 0; k < nchunks; k++) {
			if (chunks[k].t != t)
				continue;
			if (cpu0 < 0)
				cpu0 = chunks[k].cpu;
			cpu1 = chunks[k].cpu;
		}
		if (cpu0 < 0)
			continue; /* --ptrace: a task that never ran */
		if (t->seq && t->proc && t->proc->pid == tid) {
			/* --ptrace: a new process (perf writes no COMM) */
			struct pfmt_fork f = { t->proc->pid, t->proc->ppid, tid,
					       t->proc->ptid, t->start_time - 4 };

			prec_rec(PFMT_RECORD_FORK, 0, &f, sizeof(f), NULL, tid,
				 t->start_time - 4, cpu0, ID_DUMMY(cpu0));
		} else if (t->seq) {
			uint32_t p = t->proc ? t->proc->pid : pid;
			struct pfmt_fork f = { p, p, tid, tid_of(threads[t->parent_seq]),
					       t->start_time - 4 };
			struct pfmt_comm c = { p, tid };

			prec_rec(PFMT_RECORD_FORK, 0, &f, sizeof(f), NULL, tid,
				 t->start_time - 4, cpu0, ID_DUMMY(cpu0));
			prec_rec(PFMT_RECORD_COMM, PFMT_MISC_USER, &c, sizeof(c),
				 t->proc ? t->proc->comm : comm, tid,
				 t->start_time - 4, cpu0, ID_DUMMY(cpu0));
		}
		{
			uint32_t p = t->proc ? t->proc->pid : pid;
			struct pfmt_fork f = { p, t->proc ? t->proc->ppid : pid, tid,
					       t->proc ? t->proc->ptid : pid,
					       t->end_time + 2 };

			prec_rec(PFMT_RECORD_EXIT, 0, &f, sizeof(f), NULL, tid,
				 t->end_time + 2, cpu1, ID_DUMMY(cpu1));
		}
	}
	/* --ptrace: execs and mappings, where they happened */
	for (i = 0; i < nsbevs; i++) {
		const struct sbev *v = &sbevs[i];
		const struct chunk *c = NULL;
		uint64_t time;

		if (v->next_chunk) {
			for (size_t k = v->chunk; k < nchunks && !c; k++)
				if (chunks[k].t == v->t)
					c = &chunks[k];
			if (!c)
				continue; /* nothing ran after it */
			time = c->s + c->off - (v->type == EV_EXEC ? 6 : 5);
		} else {
			c = &chunks[v->chunk];
			time = v->time + c->off;
		}
		if (v->type == EV_EXEC) {
			struct pfmt_comm cm = { v->pid, v->tid };

			prec_rec(PFMT_RECORD_COMM, PFMT_MISC_USER | PFMT_MISC_COMM_EXEC,
				 &cm, sizeof(cm), v->comm, v->tid, time, c->cpu,
				 ID_DUMMY(c->cpu));
		} else {
			struct pfmt_mmap2 m;

			memset(&m, 0, sizeof(m));
			m.pid = v->pid;
			m.tid = v->tid;
			m.addr = v->m.start;
			m.len = v->m.end - v->m.start;
			m.pgoff = v->m.pgoff;
			m.maj = major(v->m.file->dev);
			m.min = minor(v->m.file->dev);
			m.ino = v->m.file->ino;
			m.prot = v->m.prot;
			m.flags = MAP_PRIVATE;
			prec_rec(PFMT_RECORD_MMAP2, PFMT_MISC_USER, &m, sizeof(m),
				 v->m.file->path, v->tid, time, c->cpu,
				 ID_DUMMY(c->cpu));
		}
	}
	for (i = 0; i < nchunks; i++) {
		const struct chunk *c = &chunks[i];
		uint32_t tid = tid_of(c->t);
		uint64_t s = c->s + c->off, e = c->e + c->off;
		struct pfmt_aux aux = { c->aux_off, (c->end - c->beg + 7) / 8 * 8, 0 };

		if (c->first_on_cpu) {
			struct pfmt_itrace_start is = { c->t->proc ? c->t->proc->pid : pid,
							tid };

			prec_rec(PFMT_RECORD_ITRACE_START, 0, &is, sizeof(is), NULL,
				 tid, s - 3, c->cpu, ID_PT(c->cpu));
		}
		prec_rec(PFMT_RECORD_SWITCH, 0, NULL, 0, NULL, tid, s - 2, c->cpu,
			 ID_DUMMY(c->cpu));
		prec_rec(PFMT_RECORD_SWITCH, PFMT_MISC_SWITCH_OUT, NULL, 0, NULL,
			 tid, e + 1, c->cpu, ID_DUMMY(c->cpu));
		prec_rec(PFMT_RECORD_AUX, 0, &aux, sizeof(aux), NULL, tid, e + 1,
			 c->cpu, ID_PT(c->cpu));
		prec_add(e + 1, NULL, 0, c);
	}
	qsort(precs, nprecs, sizeof(*precs), prec_cmp);
	for (i = 0; i < nprecs; i++) {
		struct prec *r = &precs[i];

		if (r->rec) {
			err = strace_perfw_record(w, r->rec, r->n);
			free(r->rec);
		} else {
			const struct chunk *c = r->chunk;
			struct pfmt_auxtrace a;

			memset(&a, 0, sizeof(a));
			a.offset = c->aux_off;
			a.reference = c->e + c->off;
			a.idx = (uint32_t)c->cpu;
			a.tid = pid;
			a.cpu = (uint32_t)c->cpu;
			err = strace_perfw_auxtrace(w, &a, c->t->pt.p + c->beg,
						    c->end - c->beg);
		}
		if (err)
			die("writing %s: %s", opt.out, strerror(-err));
	}
	free(precs);
	precs = NULL;
	nprecs = 0;
}

static const char *comm_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The CMDLINE feature's words, as perf writes its own: "ptsynth", the
 * program and its arguments, each cut to its file name (a trace is the
 * same bytes whatever the checkout's path) */
static const char *cmd_words[64];
static int cmd_nwords;

static void write_cmdline(struct strace_perfw *w)
{
	uint8_t buf[8192];
	uint32_t nr = (uint32_t)cmd_nwords;
	size_t at = 4;

	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < cmd_nwords; i++) {
		const char *word = strrchr(cmd_words[i], '/');
		word = word ? word + 1 : cmd_words[i];
		size_t n = strlen(word) + 1;
		uint32_t len = (uint32_t)((n + 63) & ~(size_t)63);
		if (at + 4 + len > sizeof(buf)) {
			nr = (uint32_t)i;
			break;
		}
		memcpy(buf + at, &len, 4);
		memcpy(buf + at + 4, word, n);
		at += 4 + len;
	}
	memcpy(buf, &nr, 4);
	strace_perfw_feature(w, PFMT_FEAT_CMDLINE, buf, at);
}

/*
 * BUILD_ID: every object the MMAP2 records name, by its build-id, as
 * perf record writes it for an AUX-area recording (every object counts
 * as hit: pid -1, perf's host machine). A decode then knows the code it
 * needs; a file without a build-id gets no entry.
 */
static void write_buildids(struct strace_perfw *w)
{
	uint8_t *b = NULL, id[STRACE_BUILDID_MAX];
	size_t n = 0, i, k, len;

	for (i = 0; i < nmaps; i++) {
		for (k = 0; k < i && maps[k].file != maps[i].file; k++)
			;
		if (k < i)
			continue; /* the file has its entry */
		len = strace_buildid_of(maps[i].file->data, maps[i].file->size, id);
		if (len && strace_buildid_entry(&b, &n, -1, id, len, maps[i].file->path))
			die("out of memory");
	}
	if (n)
		strace_perfw_feature(w, PFMT_FEAT_BUILD_ID, b, n);
	free(b);
}

static void write_perf_data(void)
{
	struct strace_perfw *w;
	struct perf_event_attr attr, dummy, aux;
	uint64_t id = 1, aux_id = 2, t0 = threads[0]->start_time - 1;
	uint64_t ids[NCPUS], dids[NCPUS];
	uint64_t priv[PFMT_IPT_PRIV_MAX + 1];
	struct pfmt_event_header aih;
	uint32_t aitype[2] = { PFMT_AUXTRACE_INTEL_PT, 0 };
	uint8_t aibuf[sizeof(aih) + sizeof(aitype) + sizeof(priv)];
	char comm[16];
	size_t i;
	int err;

	err = strace_perfw_open(&w, opt.out);
	if (err)
		die("cannot create %s: %s", opt.out, strerror(-err));

	memset(&attr, 0, sizeof(attr));
	attr.type = PMU_TYPE;
	attr.size = PERF_ATTR_SIZE_VER7;
	attr.config = PFMT_IPT_CFG_PT | PFMT_IPT_CFG_BRANCH;
	if (opt.timing) {
		attr.config |= PFMT_IPT_CFG_TSC;
		if (opt.mtc_period)
			attr.config |= PFMT_IPT_CFG_MTC |
				       ((uint64_t)opt.mtc_period << PFMT_IPT_CFG_MTC_PERIOD_SHIFT);
		if (opt.cyc)
			attr.config |= PFMT_IPT_CFG_CYC;
	}
	if (!opt.retcomp)
		attr.config |= PFMT_IPT_CFG_NORETCOMP;
	if (opt.ptw)
		attr.config |= PFMT_IPT_CFG_PTW | PFMT_IPT_CFG_FUP_ON_PTW;
	attr.sample_period = 1;
	attr.sample_type = SAMPLE_TYPE;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.mmap = 1;
	attr.comm = 1;
	attr.task = 1;
	attr.enable_on_exec = 1;
	attr.sample_id_all = 1;
	attr.mmap2 = 1;
	attr.comm_exec = 1;
	attr.context_switch = 0;
	if (opt.per_cpu) {
		/*
		 * As perf record -e intel_pt//u -- CMD (unprivileged): the
		 * intel_pt event and a tracking dummy:u, which has the
		 * sideband (mmap, comm, task) and context_switch; one id per
		 * event and CPU.
		 */
		attr.mmap = attr.comm = attr.task = 0;
		attr.mmap2 = attr.comm_exec = 0;
		attr.inherit = 1;
		attr.read_format = PERF_FORMAT_ID;
		dummy = attr;
		dummy.type = PERF_TYPE_SOFTWARE;
		dummy.config = PERF_COUNT_SW_DUMMY;
		dummy.disabled = 0;
		dummy.enable_on_exec = 0;
		dummy.mmap = dummy.comm = dummy.task = 1;
		dummy.mmap2 = dummy.comm_exec = 1;
		dummy.context_switch = 1;
		for (i = 0; i < NCPUS; i++) {
			ids[i] = ID_PT(i);
			dids[i] = ID_DUMMY(i);
		}
		err = strace_perfw_add_attr(w, &attr, ids, NCPUS);
		if (!err)
			err = strace_perfw_add_attr(w, &dummy, dids, NCPUS);
	} else {
		err = strace_perfw_add_attr(w, &attr, &id, 1);
	}
	if (!err && opt.aux_output) {
		/* PEBS-via-PT: the PEBS event writes its records into the
		 * intel_pt event's AUX area (perf record -e
		 * intel_pt//u,cycles/aux-output/u) */
		aux = attr;
		aux.type = PERF_TYPE_HARDWARE;
		aux.config = PERF_COUNT_HW_CPU_CYCLES;
		aux.sample_period = 100003;
		aux.precise_ip = 3;
		aux.aux_output = 1;
		aux.disabled = 0;
		aux.enable_on_exec = 0;
		aux.mmap = aux.comm = aux.task = 0;
		aux.mmap2 = aux.comm_exec = 0;
		err = strace_perfw_add_attr(w, &aux, &aux_id, 1);
	}
	if (err)
		die("perf.data attr: %s", strerror(-err));

	/* AUXTRACE_INFO */
	memset(priv, 0, sizeof(priv));
	priv[PFMT_IPT_PMU_TYPE] = PMU_TYPE;
	priv[PFMT_IPT_TIME_SHIFT] = 0;
	priv[PFMT_IPT_TIME_MULT] = 1;
	priv[PFMT_IPT_TIME_ZERO] = 0;
	priv[PFMT_IPT_CAP_USER_TIME_ZERO] = 1;
	priv[PFMT_IPT_TSC_BIT] = PFMT_IPT_CFG_TSC;
	priv[PFMT_IPT_NORETCOMP_BIT] = PFMT_IPT_CFG_NORETCOMP;
	/* per-CPU: switch records from the tracking event (have_sched_switch 2) */
	priv[PFMT_IPT_HAVE_SCHED_SWITCH] = opt.per_cpu ? 2 : 0;
	priv[PFMT_IPT_SNAPSHOT_MODE] = 0;
	priv[PFMT_IPT_PER_CPU_MMAPS] = opt.per_cpu;
	priv[PFMT_IPT_MTC_BIT] = PFMT_IPT_CFG_MTC;
	priv[PFMT_IPT_MTC_FREQ_BITS] = PFMT_IPT_CFG_MTC_PERIOD_MASK;
	priv[PFMT_IPT_TSC_CTC_N] = opt.tsc_ctc;
	priv[PFMT_IPT_TSC_CTC_D] = 1;
	priv[PFMT_IPT_CYC_BIT] = PFMT_IPT_CFG_CYC;
	priv[PFMT_IPT_MAX_NONTURBO_RATIO] = opt.nonturbo;
	priv[PFMT_IPT_FILTER_STR_LEN] = 0;
	priv[PFMT_IPT_PRIV_MAX] = 0; /* cap_event_trace */
	aih.type = PFMT_RECORD_AUXTRACE_INFO;
	aih.misc = 0;
	aih.size = sizeof(aibuf);
	memcpy(aibuf, &aih, sizeof(aih));
	memcpy(aibuf + sizeof(aih), aitype, sizeof(aitype));
	memcpy(aibuf + sizeof(aih) + sizeof(aitype), priv, sizeof(priv));
	err = strace_perfw_record(w, aibuf, sizeof(aibuf));
	if (err)
		die("writing %s: %s", opt.out, strerror(-err));

	/* TIME_CONV, as perf record writes it */
	{
		struct {
			struct pfmt_event_header h;
			struct pfmt_time_conv c;
		} tc;

		memset(&tc, 0, sizeof(tc));
		tc.h.type = PFMT_RECORD_TIME_CONV;
		tc.h.size = sizeof(tc);
		tc.c.time_mult = 1;
		tc.c.time_mask = ~0ULL;
		tc.c.cap_user_time_zero = 1;
		err = strace_perfw_record(w, &tc, sizeof(tc));
		if (err)
			die("writing %s: %s", opt.out, strerror(-err));
	}

	/* The process: COMM (exec), its executable mappings. */
	snprintf(comm, sizeof(comm), "%s", comm_of(prog_path));
	if (opt.ptrace) { /* all of them in the per-CPU records */
		write_percpu_records(w, comm);
		goto finished;
	}
	{
		struct pfmt_comm c = { pid, pid };

		rec_put(w, PFMT_RECORD_COMM, PFMT_MISC_USER | PFMT_MISC_COMM_EXEC, &c,
			sizeof(c), comm, pid, pid, t0);
	}
	for (i = 0; i < nmaps; i++) {
		struct pfmt_mmap2 m;

		memset(&m, 0, sizeof(m));
		m.pid = pid;
		m.tid = pid;
		m.addr = maps[i].start;
		m.len = maps[i].end - maps[i].start;
		m.pgoff = maps[i].pgoff;
		m.maj = major(maps[i].file->dev);
		m.min = minor(maps[i].file->dev);
		m.ino = maps[i].file->ino;
		m.prot = maps[i].prot;
		m.flags = MAP_PRIVATE;
		rec_put(w, PFMT_RECORD_MMAP2, PFMT_MISC_USER, &m, sizeof(m),
			maps[i].file->path, pid, pid,
			maps[i].time < t0 ? t0 : maps[i].time - 1);
	}
	if (opt.per_cpu) {
		write_percpu_records(w, comm);
		goto finished;
	}
	for (i = 0; i < nthreads; i++) {
		struct thread *t = threads[i];
		uint32_t tid = tid_of(t);
		struct pfmt_itrace_start is = { pid, tid };

		if (t->seq) {
			struct pfmt_fork f = { pid, pid, tid, tid_of(threads[t->parent_seq]),
					       t->start_time - 1 };
			struct pfmt_comm c = { pid, tid };

			rec_put(w, PFMT_RECORD_FORK, 0, &f, sizeof(f), NULL, pid, tid,
				t->start_time - 1);
			rec_put(w, PFMT_RECORD_COMM, PFMT_MISC_USER, &c, sizeof(c), comm,
				pid, tid, t->start_time - 1);
		}
		rec_put(w, PFMT_RECORD_ITRACE_START, 0, &is, sizeof(is), NULL, pid,
			tid, t->start_time - 1);
	}
	for (i = 0; i < nthreads; i++) {
		struct thread *t = threads[i];
		struct pfmt_auxtrace a;

		memset(&a, 0, sizeof(a));
		a.offset = 0;
		a.reference = t->end_time;
		a.idx = (uint32_t)i;
		a.tid = tid_of(t);
		a.cpu = UINT32_MAX;
		err = strace_perfw_auxtrace(w, &a, t->pt.p, t->pt.n);
		if (err)
			die("writing %s: %s", opt.out, strerror(-err));
	}
	for (i = nthreads; i-- > 0;) {
		struct thread *t = threads[i];
		uint32_t tid = tid_of(t);
		struct pfmt_fork f = { pid, pid, tid, t->seq ? pid : pid,
				       t->end_time + 1 };

		rec_put(w, PFMT_RECORD_EXIT, 0, &f, sizeof(f), NULL, pid, tid,
			t->end_time + 1);
	}
finished:
	{
		struct pfmt_event_header fr = { PFMT_RECORD_FINISHED_ROUND, 0, 8 };

		strace_perfw_record(w, &fr, sizeof(fr));
	}
	strace_perfw_feature_string(w, PFMT_FEAT_HOSTNAME, "ptsynth");
	strace_perfw_feature_string(w, PFMT_FEAT_OSRELEASE, "6.1.0-ptsynth");
	strace_perfw_feature_string(w, PFMT_FEAT_VERSION, "6.1");
	strace_perfw_feature_string(w, PFMT_FEAT_ARCH, "x86_64");
	write_cmdline(w);
	write_buildids(w);
	if (opt.cpuid)
		strace_perfw_feature_string(w, PFMT_FEAT_CPUID, opt.cpuid);
	{
		uint32_t nr[2] = { 1, 1 };

		if (opt.per_cpu)
			nr[0] = nr[1] = NCPUS;

		strace_perfw_feature(w, PFMT_FEAT_NRCPUS, nr, sizeof(nr));
	}
	{
		/* PMU_MAPPINGS: names the attr type "intel_pt" */
		uint8_t buf[4 + 4 + 4 + 64];
		uint32_t nr = 1, type = PMU_TYPE, len = 64;

		memset(buf, 0, sizeof(buf));
		memcpy(buf, &nr, 4);
		memcpy(buf + 4, &type, 4);
		memcpy(buf + 8, &len, 4);
		memcpy(buf + 12, "intel_pt", 9);
		strace_perfw_feature(w, PFMT_FEAT_PMU_MAPPINGS, buf, sizeof(buf));
	}
	{
		/* EVENT_DESC: the attr's name */
		struct gbuf d = { 0 };
		uint32_t v;
		char name[64] = "intel_pt//u";

		if (opt.ptw)
			snprintf(name, sizeof(name), "intel_pt/ptw,fup_on_ptw/u");

		v = opt.per_cpu || opt.aux_output ? 2 : 1;
		gb_put(&d, &v, 4);
		v = attr.size;
		gb_put(&d, &v, 4);
		gb_put(&d, &attr, attr.size);
		v = opt.per_cpu ? NCPUS : 1;
		gb_put(&d, &v, 4);
		v = sizeof(name);
		gb_put(&d, &v, 4);
		gb_put(&d, name, sizeof(name));
		if (opt.per_cpu) {
			char dname[64] = "dummy:u";

			gb_put(&d, ids, sizeof(ids));
			gb_put(&d, &dummy, dummy.size);
			v = NCPUS;
			gb_put(&d, &v, 4);
			v = sizeof(dname);
			gb_put(&d, &v, 4);
			gb_put(&d, dname, sizeof(dname));
			gb_put(&d, dids, sizeof(dids));
		} else {
			gb_put(&d, &id, 8);
		}
		if (opt.aux_output) {
			char aname[64] = "cycles/aux-output/u";

			gb_put(&d, &aux, aux.size);
			v = 1;
			gb_put(&d, &v, 4);
			v = sizeof(aname);
			gb_put(&d, &v, 4);
			gb_put(&d, aname, sizeof(aname));
			gb_put(&d, &aux_id, 8);
		}
		strace_perfw_feature(w, PFMT_FEAT_EVENT_DESC, d.p, d.n);
		free(d.p);
	}
	err = strace_perfw_close(w);
	if (err)
		die("writing %s: %s", opt.out, strerror(-err));
}

static void write_raw_and_truth(int exit_code)
{
	char path[PATH_MAX];
	FILE *sb, *tf = NULL;
	size_t i;

	if (opt.ptrace) /* several processes: no single-process sideband */
		goto truth;
	snprintf(path, sizeof(path), "%s.sideband", opt.raw);
	sb = fopen(path, "w");
	if (!sb)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(sb, "# ptsynth sideband v1\n");
	fprintf(sb, "pid %u\n", pid);
	fprintf(sb, "retcomp %d\n", opt.retcomp);
	for (i = 0; i < nmaps; i++)
		fprintf(sb, "mmap %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n",
			maps[i].start, maps[i].end, maps[i].pgoff,
			maps[i].file->path);
	for (i = 0; i < nthreads; i++) {
		char real[PATH_MAX];

		snprintf(path, sizeof(path), "%s.%u.pt", opt.raw, tid_of(threads[i]));
		write_file(path, threads[i]->pt.p, threads[i]->pt.n);
		fprintf(sb, "thread %u %s\n", tid_of(threads[i]),
			realpath(path, real) ? real : path);
	}
	if (fclose(sb))
		die("writing sideband: %s", strerror(errno));
truth:
	if (!opt.truth)
		return;
	tf = fopen(opt.truth, "w");
	if (!tf)
		die("cannot write %s: %s", opt.truth, strerror(errno));
	fprintf(tf, "# ptsynth truth v2\n");
	fprintf(tf, "# program %s\n", prog_path);
	fprintf(tf, "# pid %u exit %d\n", pid, exit_code);
	for (i = 0; i < nprocs; i++)
		fprintf(tf, "# process %u parent %u comm %s\n", procs[i]->pid,
			procs[i]->ppid, procs[i]->comm);
	fprintf(tf, "# options retcomp %d timing %d cyc %d psb-period %lu stack %d times %d\n",
		opt.retcomp, opt.timing, opt.cyc, opt.psb_period, opt.stack,
		opt.times);
	for (i = 0; i < nthreads; i++)
		fprintf(tf, "# thread %u instructions %" PRIu64 " lost %" PRIu64
			" branches %" PRIu64 "\n",
			tid_of(threads[i]), threads[i]->ninsn, threads[i]->nlost,
			threads[i]->nbranches);
	for (i = 0; opt.stack && i < nthreads; i++)
		fprintf(tf, "# stack thread %u calls %" PRIu64 " pushed %" PRIu64
			" returns %" PRIu64 " popped %" PRIu64 "\n",
			tid_of(threads[i]), threads[i]->calls, threads[i]->pushed,
			threads[i]->rets, threads[i]->popped);
	if (opt.drop)
		fprintf(tf, "# fault drop thread %u offset %" PRIu64 " len %" PRIu64 "\n",
			pid, opt.drop_off, opt.drop_len);
	if (opt.corrupt)
		fprintf(tf, "# fault corrupt thread %u offset %" PRIu64 "\n", pid,
			opt.corrupt_off);
	for (i = 0; i < nthreads; i++) {
		fprintf(tf, "# section thread %u\n", tid_of(threads[i]));
		if (threads[i]->truth.n &&
		    fwrite(threads[i]->truth.p, 1, threads[i]->truth.n, tf) !=
			    threads[i]->truth.n)
			die("writing %s: %s", opt.truth, strerror(errno));
	}
	if (fclose(tf))
		die("writing %s: %s", opt.truth, strerror(errno));
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptsynth [options] -o OUT.data [--truth FILE] -- PROG [ARGS...]\n"
		"  -o, --output FILE     perf.data to write\n"
		"  -t, --truth FILE      ground truth (taken branches, counts)\n"
		"  -r, --raw PREFIX      raw streams PREFIX.TID.pt and PREFIX.sideband\n"
		"                        (default: OUT without .data)\n"
		"      --psb-period N    bytes between PSB+ (default 4096)\n"
		"      --no-retcomp      no return compression\n"
		"      --no-timing       no TSC/TMA/CBR/MTC/CYC packets\n"
		"      --cyc             CYC packets (cycle-accurate mode)\n"
		"      --mtc-period N    MTC every 2^N CTC ticks, 0: none (default 3)\n"
		"      --cbr N           core:bus ratio (default 20)\n"
		"      --overflow N      OVF after N instructions of the main thread\n"
		"      --overflow-len N  instructions lost after the OVF (default 1000)\n"
		"      --drop OFF:LEN    drop LEN bytes at OFF of the main thread's stream\n"
		"      --corrupt OFF     flip bits of the last byte of the first\n"
		"                        TNT or TIP packet at or after OFF (main\n"
		"                        thread)\n"
		"      --qemu PATH       QEMU user-mode binary (default qemu-x86_64)\n"
		"      --per-cpu         a per-CPU recording on 2 CPUs, threads migrating\n"
		"      --migrate-every N --per-cpu: migrate at every N-th syscall (default 3)\n"
		"      --wrap PT         no run: wrap the raw PT stream PT (one thread's)\n"
		"                        into the perf.data, PROG (an ELF) mapped at its\n"
		"                        link addresses\n"
		"      --cpuid STR       perf's CPUID header (GenuineIntel,FAMILY,MODEL,STEPPING)\n"
		"      --aux-output      a second event, cycles/aux-output/u, as perf\n"
		"                        record -e intel_pt//u,cycles/aux-output/u writes\n"
		"                        it (PEBS-via-PT; the trace's records are --wrap's)\n"
		"      --ptw             the intel_pt event has the ptw and fup_on_ptw bits,\n"
		"                        as perf record -e intel_pt/ptw,fup_on_ptw/u (the\n"
		"                        trace's PTW packets are --wrap's)\n"
		"      --ptrace          no QEMU: ptrace single-stepping, following fork,\n"
		"                        clone and exec; a per-CPU recording of every\n"
		"                        process (no raw streams and sideband file)\n"
		"      --stack           RSP at every truth line's target (QEMU: -d cpu,\n"
		"                        4 to 7 times the CPU time)\n"
		"      --truth-times     the time of every truth line's branch (t=NS,\n"
		"                        the synthetic clock; not with --stack)\n"
		"  -v, --verbose\n");
}

/*
 * --wrap: the stream comes from a file (packets someone else made, such
 * as the patterns of tests/unit/test_decoder_errata.c), for one thread of
 * a process that maps PROG at its link addresses; no QEMU, no truth.
 */
static int wrap_stream(const char *path)
{
	struct thread *t;
	FILE *f = fopen(path, "rb");
	uint8_t buf[65536];
	size_t n;

	if (!f)
		die("cannot read %s: %s", path, strerror(errno));
	pid = 4242;
	now_cycles = 1000;
	elf_map(prog_path, 0);
	t = thread_new(0, 0);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		gb_put(&t->pt, buf, n);
	if (ferror(f))
		die("cannot read %s: %s", path, strerror(errno));
	fclose(f);
	t->alive = false;
	t->end_time = t->start_time + 1000;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "truth", required_argument, NULL, 't' },
		{ "raw", required_argument, NULL, 'r' },
		{ "psb-period", required_argument, NULL, 1 },
		{ "no-retcomp", no_argument, NULL, 2 },
		{ "no-timing", no_argument, NULL, 3 },
		{ "cyc", no_argument, NULL, 4 },
		{ "mtc-period", required_argument, NULL, 5 },
		{ "cbr", required_argument, NULL, 6 },
		{ "overflow", required_argument, NULL, 7 },
		{ "overflow-len", required_argument, NULL, 8 },
		{ "drop", required_argument, NULL, 9 },
		{ "corrupt", required_argument, NULL, 10 },
		{ "qemu", required_argument, NULL, 11 },
		{ "per-cpu", no_argument, NULL, 12 },
		{ "migrate-every", required_argument, NULL, 13 },
		{ "wrap", required_argument, NULL, 14 },
		{ "cpuid", required_argument, NULL, 15 },
		{ "ptrace", no_argument, NULL, 16 },
		{ "stack", no_argument, NULL, 17 },
		{ "truth-times", no_argument, NULL, 18 },
		{ "aux-output", no_argument, NULL, 19 },
		{ "ptw", no_argument, NULL, 20 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pt_config cfg;
	char why[PATH_MAX + 64];
	char rawbuf[PATH_MAX];
	int c, code;

	while ((c = getopt_long(argc, argv, "+o:t:r:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': opt.out = optarg; break;
		case 't': opt.truth = optarg; break;
		case 'r': opt.raw = optarg; break;
		case 1: opt.psb_period = strtoul(optarg, NULL, 0); break;
		case 2: opt.retcomp = false; break;
		case 3: opt.timing = false; break;
		case 4: opt.cyc = true; break;
		case 5: opt.mtc_period = (unsigned)strtoul(optarg, NULL, 0); break;
		case 6: opt.cbr = (unsigned)strtoul(optarg, NULL, 0); break;
		case 7: opt.ovf_at = strtoull(optarg, NULL, 0); break;
		case 8: opt.ovf_len = strtoull(optarg, NULL, 0); break;
		case 9: {
			char *e;

			opt.drop = true;
			opt.drop_off = strtoull(optarg, &e, 0);
			opt.drop_len = *e == ':' ? strtoull(e + 1, NULL, 0) : 1;
			break;
		}
		case 10:
			opt.corrupt = true;
			opt.corrupt_off = strtoull(optarg, NULL, 0);
			break;
		case 11: opt.qemu = optarg; break;
		case 12: opt.per_cpu = true; break;
		case 13: opt.migrate_every = (unsigned)strtoul(optarg, NULL, 0); break;
		case 14: opt.wrap = optarg; opt.timing = false; break;
		case 15: opt.cpuid = optarg; break;
		case 16: opt.ptrace = opt.per_cpu = true; break;
		case 17: opt.stack = true; break;
		case 18: opt.times = true; break;
		case 19: opt.aux_output = true; break;
		case 20: opt.ptw = true; break;
		case 'v': opt.verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!opt.out || optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (opt.stack && opt.times)
		die("--stack and --truth-times both add a column to the "
		    "truth: ask for one of them");
	if (opt.cbr == 0 || opt.cbr > 255 || opt.mtc_period > 15 ||
	    opt.psb_period < 16)
		die("bad timing or PSB period option");
	if (opt.per_cpu && (!opt.timing || opt.cyc || opt.ovf_at || opt.drop ||
			    opt.corrupt))
		die("--per-cpu and --ptrace need timing packets (perf decodes per-CPU traces "
		    "by time) and does not combine with --cyc, --overflow, "
		    "--drop or --corrupt");
	if (opt.wrap && (opt.per_cpu || opt.ovf_at || opt.drop || opt.corrupt))
		die("--wrap takes the stream as it is: no --per-cpu, --overflow, "
		    "--drop or --corrupt");
	if (opt.ptrace && opt.wrap)
		die("--ptrace runs a program: no --wrap");
	if (opt.aux_output && opt.per_cpu)
		die("--aux-output writes a per-thread recording: no --per-cpu "
		    "or --ptrace");
	if (opt.stack && opt.wrap)
		die("--wrap runs nothing: no --stack");
	if (opt.per_cpu && !opt.migrate_every)
		die("--migrate-every must be at least 1");
	if (!opt.raw) {
		size_t n = strlen(opt.out);

		snprintf(rawbuf, sizeof(rawbuf), "%.*s",
			 (int)(n > 5 && !strcmp(opt.out + n - 5, ".data") ? n - 5 : n),
			 opt.out);
		opt.raw = rawbuf;
	}
	cmd_words[cmd_nwords++] = "ptsynth";
	for (int i = optind; i < argc && cmd_nwords < 64; i++)
		cmd_words[cmd_nwords++] = argv[i];
	prog_path = find_in_path(argv[optind]);
	if (!prog_path || access(prog_path, F_OK))
		die("%s: no such program", argv[optind]);
	prog_path = xstrdup(prog_path);
	if (!opt.ptrace && elf_read(prog_path, &prog_ei, why, sizeof(why)))
		die("%s", why);

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK ||
	    cs_open(CS_ARCH_X86, CS_MODE_32, &cs32) != CS_ERR_OK)
		die("cannot open Capstone");
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(cs32, CS_OPT_DETAIL, CS_OPT_ON);
	icache_mask = (1 << 16) - 1;
	icache = calloc(icache_mask + 1, sizeof(*icache));
	if (!icache)
		die("out of memory");

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.begin = encbuf;
	cfg.end = encbuf + sizeof(encbuf);
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		die("cannot allocate libipt's encoder");

	signal(SIGPIPE, SIG_IGN);
	if (opt.wrap) {
		code = wrap_stream(opt.wrap);
	} else if (opt.ptrace) {
		code = run_ptrace(argv + optind);
		for (size_t i = 0; i < nthreads; i++) {
			if (threads[i]->alive && threads[i]->started) {
				as_use(threads[i]->proc->as);
				thread_end(threads[i]);
			}
			threads[i]->alive = false;
		}
		if (!nchunks)
			die("ptrace ran %s but traced no instruction", prog_path);
	} else {
		code = run_qemu(argv + optind);
		if (!nthreads)
			die("QEMU ran %s but traced no instruction", prog_path);
		for (size_t i = 0; i < nthreads; i++)
			if (threads[i]->alive)
				thread_end(threads[i]);
		for (size_t i = 0; i < nthreads; i++)
			apply_faults(threads[i]);
	}
	if (opt.per_cpu)
		schedule_chunks();
	write_perf_data();
	write_raw_and_truth(code);
	if (opt.verbose || nundecodable)
		fprintf(stderr, "%s: %zu thread(s), %" PRIu64
			" instruction(s) not decodable by Capstone (non-branches)\n",
			prog_name, nthreads, nundecodable);
	if (code)
		fprintf(stderr, "%s: note: %s exited with status %d\n", prog_name,
			prog_path, code);
	pt_free_encoder(enc);
	cs_close(&cs);
	return 0;
}
