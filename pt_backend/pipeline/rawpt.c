/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/rawpt.c - a raw PT stream + --raw/--elf image -> ring (see
 * pipeline.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline.h"
#include "sink.h"
#include "strace/internal/grow.h"

/* A number in C syntax that fills [s, e). Returns 0 or -1. */
static int parse_num(const char *s, const char *e, uint64_t *v)
{
	char buf[32], *end;
	size_t n = (size_t)(e - s);

	if (!n || n >= sizeof(buf) || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return errno || *end ? -1 : 0;
}

int strace_raw_parse_section(char *s, int elf, struct strace_raw_section *out)
{
	char *at = strrchr(s, '@'), *end = s + strlen(s), *pend = end;

	memset(out, 0, sizeof(*out));
	out->elf = elf;
	if (at) {
		if (parse_num(at + 1, end, &out->addr))
			return -STRACE_E_RAW_SYNTAX;
		out->has_addr = 1;
		pend = at;
	} else if (!elf) {
		return -STRACE_E_RAW_SYNTAX; /* a raw section needs its address */
	}
	if (!elf) {
		/* ":OFFSET[-SIZE]" before the '@', when what follows the
		 * last ':' looks like numbers; else the ':' is the path's */
		char *colon = NULL;
		for (char *p = s; p < pend; p++)
			if (*p == ':')
				colon = p;
		if (colon && (size_t)(pend - colon - 1) ==
				     strspn(colon + 1, "0123456789abcdefABCDEFxX-")) {
			char *dash = memchr(colon + 1, '-',
					    (size_t)(pend - colon - 1));
			if (parse_num(colon + 1, dash ? dash : pend,
				      &out->offset) ||
			    (dash && (parse_num(dash + 1, pend, &out->size) ||
				      !out->size)))
				return -STRACE_E_RAW_SYNTAX;
			pend = colon;
		}
	}
	if (pend == s)
		return -STRACE_E_RAW_SYNTAX;
	*pend = 0;
	out->path = s;
	return 0;
}

/* One address range of the image: a raw section, or an ELF segment. */
struct range {
	uint64_t start, end, pgoff;
	int sec;
	int exec;
};

struct rctx {
	const struct strace_raw_opts *o;
	struct strace_raw_fault *fault;
	struct range *r;
	size_t n, cap;
};

static int push_range(struct rctx *c, uint64_t start, uint64_t len,
		      uint64_t pgoff, int sec, int exec)
{
	if (c->n == c->cap) {
		struct range *p = strace_grow(c->r, &c->cap, sizeof(*p), 16);
		if (!p)
			return -ENOMEM;
		c->r = p;
	}
	if (start + len < start) {
		c->fault->start = start;
		c->fault->size = len;
		return -STRACE_E_RAW_WRAP;
	}
	c->r[c->n++] = (struct range){start, start + len, pgoff, sec, exec};
	return 0;
}

/* Open path if it is a regular file (a FIFO would block): the descriptor
 * and its size, -errno, or -ENODEV. */
static int open_regular(const char *path, uint64_t *size)
{
	struct stat st;
	int fd;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENODEV;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENODEV;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* The PT_LOAD segments of the ELF file open at fd. */
static int elf_ranges(struct rctx *c, int sec, int fd, uint64_t fsize)
{
	const struct strace_raw_section *s = &c->o->secs[sec];
	Elf *elf = elf_version(EV_CURRENT) == EV_NONE
			   ? NULL
			   : elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	size_t nph = 0;
	int rc = 0, loads = 0;

	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    gelf_getclass(elf) != ELFCLASS64 || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph) < 0) {
		rc = -STRACE_E_RAW_NOTELF;
		goto out;
	}
	if (eh.e_type == ET_EXEC && s->has_addr && s->addr) {
		rc = -STRACE_E_RAW_NOTPIE;
		goto out;
	}
	for (size_t i = 0; i < nph && rc == 0; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !ph.p_filesz)
			continue;
		if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset) {
			c->fault->file_size = fsize;
			rc = -STRACE_E_RAW_RANGE;
			break;
		}
		uint64_t bias = eh.e_type == ET_DYN ? s->addr : 0;
		if (bias + ph.p_vaddr < bias) { /* wraps before its bytes do */
			c->fault->start = bias;
			c->fault->size = ph.p_vaddr + ph.p_filesz;
			rc = -STRACE_E_RAW_WRAP;
			break;
		}
		rc = push_range(c, bias + ph.p_vaddr, ph.p_filesz, ph.p_offset,
				sec, !!(ph.p_flags & PF_X));
		loads++;
	}
	if (rc == 0 && !loads)
		rc = -STRACE_E_RAW_NOLOAD;
out:
	elf_end(elf);
	return rc;
}

static int section_ranges(struct rctx *c, int sec)
{
	const struct strace_raw_section *s = &c->o->secs[sec];
	uint64_t fsize = 0, len;
	int fd = open_regular(s->path, &fsize), rc;

	if (fd < 0)
		return fd;
	c->fault->file_size = fsize;
	if (!fsize) {
		close(fd);
		return -STRACE_E_RAW_EMPTY;
	}
	if (s->elf) {
		rc = elf_ranges(c, sec, fd, fsize);
		close(fd);
		return rc;
	}
	close(fd);
	if (s->offset >= fsize)
		return -STRACE_E_RAW_RANGE;
	len = s->size ? s->size : fsize - s->offset;
	if (len > fsize - s->offset)
		return -STRACE_E_RAW_RANGE;
	return push_range(c, s->addr, len, s->offset, sec, 1);
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->sec - y->sec;
}

/* Every section's ranges, checked: readable, in its file, disjoint. */
static int build_ranges(struct rctx *c)
{
	int rc;

	for (size_t i = 0; i < c->o->nsecs; i++) {
		c->fault->section = (int)i;
		if ((rc = section_ranges(c, (int)i)) < 0)
			return rc;
	}
	c->fault->section = -1;
	struct range *sorted = malloc((c->n ? c->n : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, c->r, c->n * sizeof(*sorted));
	qsort(sorted, c->n, sizeof(*sorted), cmp_range);
	rc = 0;
	for (size_t i = 1; i < c->n; i++)
		if (sorted[i].start < sorted[i - 1].end) {
			const struct range *a = &sorted[i - 1], *b = &sorted[i];
			c->fault->section = a->sec > b->sec ? a->sec : b->sec;
			c->fault->other = a->sec > b->sec ? b->sec : a->sec;
			c->fault->start = b->start;
			c->fault->end = a->end < b->end ? a->end : b->end;
			rc = -STRACE_E_RAW_OVERLAP;
			break;
		}
	free(sorted);
	return rc;
}

/* The whole trace file, read (not mapped: a file cut short meanwhile
 * would raise SIGBUS). */
static int read_trace(const char *path, uint8_t **buf, size_t *len)
{
	uint64_t size = 0, got = 0;
	int fd = open_regular(path, &size);

	if (fd < 0)
		return fd;
	if (!size || size > SIZE_MAX) {
		close(fd);
		return size ? -EFBIG : -STRACE_E_RAW_EMPTY;
	}
	*buf = malloc((size_t)size);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < size) {
		ssize_t n = read(fd, *buf + got, (size_t)(size - got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* cut short meanwhile: decode what was read */
		got += (uint64_t)n;
	}
	close(fd);
	*len = (size_t)got;
	return got ? 0 : -STRACE_E_RAW_EMPTY;
}

/* The process name: opts->comm, else the first section's file name, cut
 * to 15 bytes as the kernel's comm (what -i gets from perf's COMM). */
static void comm_of(const struct strace_raw_opts *o, char *buf, size_t len)
{
	const char *name = o->comm;

	if (!name && o->nsecs) {
		name = strrchr(o->secs[0].path, '/');
		name = name ? name + 1 : o->secs[0].path;
	}
	if (!name)
		name = "[raw]";
	snprintf(buf, len, "%.15s", name);
}

static int define(const struct strace_raw_opts *o, struct strace_writer *w,
		  uint16_t type, uint32_t tid, uint64_t a, uint64_t key,
		  uint64_t aux, const char *name)
{
	struct strace_definition d = {type, tid, 0, a, key, aux, name};

	return strace_writer_define(w, &d, o->types);
}

/* PROCESS, THREAD and DSO definitions, as -i writes them. */
static int define_names(struct rctx *c, struct strace_writer *w)
{
	const struct strace_raw_opts *o = c->o;
	char comm[16];
	int rc;

	comm_of(o, comm, sizeof(comm));
	rc = define(o, w, STRACE_EV_PROCESS, o->tid, o->pid, o->tid,
		    o->pid, comm);
	if (rc >= 0 && o->tid != o->pid)
		rc = define(o, w, STRACE_EV_THREAD, o->tid, o->pid,
			    o->tid, o->pid, comm);
	for (size_t i = 0; i < c->n && rc >= 0; i++)
		if (c->r[i].exec)
			rc = define(o, w, STRACE_EV_DSO, o->pid,
				    c->r[i].start, c->r[i].start,
				    c->r[i].end - c->r[i].start,
				    o->secs[c->r[i].sec].path);
	return rc;
}

struct prog {
	const struct strace_raw_opts *o;
	uint64_t total;
};

static void on_progress(void *arg, size_t done)
{
	struct prog *p = arg;

	p->o->progress(p->o->cb_arg, done, p->total);
}

int strace_raw_decode(const struct strace_raw_opts *opts,
		      struct strace_raw_stats *st,
		      struct strace_raw_fault *fault)
{
	struct strace_raw_opts ro;
	int lrc = strace_opts_load(&ro, sizeof(ro), opts);
	const struct strace_raw_opts *o = &ro;
	struct rctx c = {o, fault, NULL, 0, 0};
	struct strace_image *img = NULL;
	struct strace_walker *walker = NULL;
	struct strace_sink *s = NULL;
	struct strace_symset *syms = NULL;
	struct strace_walk_opts wo;
	struct strace_walk_stats ws;
	struct prog prog = {o, 0};
	uint8_t *pt = NULL;
	size_t len = 0;
	uint64_t psb;
	long n;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(fault, 0, sizeof(*fault));
	fault->section = fault->other = -1;
	if (lrc < 0 || !opts || !o->pt_path || !o->ring ||
	    (o->nsecs && !o->secs)) {
		rc = -STRACE_E_BADARG;
		goto out;
	}
	rc = strace_symset_new(&syms);
	if (rc < 0)
		goto out;
	rc = build_ranges(&c);
	if (rc < 0)
		goto out;
	fault->section = -1;
	rc = read_trace(o->pt_path, &pt, &len);
	if (rc < 0)
		goto out;
	st->pt_bytes = prog.total = len;
	if (!strace_pt_split(pt, len, 0, &psb, 1)) {
		rc = -STRACE_E_RAW_NOPSB;
		goto out;
	}
	{
		struct strace_image_opts io = {.size = sizeof(io),
					       .plt_style = o->names,
					       .objects = o->objects};
		rc = strace_image_new(&io, &img);
	}
	for (size_t i = 0; i < c.n && rc >= 0; i++) {
		fault->section = c.r[i].sec;
		rc = strace_image_add_file(img, c.r[i].start,
					   c.r[i].end - c.r[i].start,
					   c.r[i].pgoff, o->secs[c.r[i].sec].path);
	}
	if (rc < 0)
		goto out;
	fault->section = -1;

	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = -ENOMEM;
		goto out;
	}
	s->ring = o->ring;
	s->img = img;
	s->types = o->types;
	s->syms = syms;
	s->hints = o->jobs >= STRACE_PARALLEL_SETTLE_FROM;
	rc = strace_writer_open(o->ring, &s->w);
	if (rc < 0)
		goto out;
	rc = define_names(&c, s->w);
	if (rc < 0)
		goto out;

	{
		struct strace_walk_base wb = {
			o->walk_flags |
				(s->hints ? STRACE_WALK_NAMED_HINTS : 0),
			{0}, 1 /* no conversion: raw TSC */, o->cpu};
		strace_sink_walk_opts(&wo, &wb, o->tid, s);
	}
	if (o->progress) {
		wo.progress = on_progress;
		wo.progress_arg = &prog;
	}
	rc = strace_walker_new(img, &wo, &walker);
	if (rc < 0)
		goto out;
	n = o->jobs > 1 ? strace_walker_decode_parallel(walker, pt, len,
							(unsigned)o->jobs,
							o->piece_bytes)
			: strace_walker_decode(walker, pt, len);
	if (n == -STRACE_E_NOSYNC) {
		st->nosync = 1; /* a PSB+ with nothing after it, say */
	} else if (n < 0) {
		rc = (int)n;
		goto out;
	}
	if (o->progress)
		o->progress(o->cb_arg, len, len);
	rc = strace_writer_flush(s->w);
out:
	if (walker) {
		strace_walker_stats(walker, &ws);
		st->branches = ws.branches;
		st->insns = ws.insns;
		st->errors = ws.errors;
		st->overflows = ws.overflows;
	}
	if (s) {
		st->events = s->events;
		if (s->w) {
			int crc = strace_writer_close(s->w);
			if (rc >= 0 && crc < 0)
				rc = crc;
		}
	}
	strace_walker_free(walker);
	strace_image_free(img);
	strace_symset_free(syms);
	free(s);
	free(pt);
	free(c.r);
	return rc;
}
