// SPDX-License-Identifier: MIT
/*
 * decoder/dwarf.c - debug information of the objects a trace ran, through
 * elfutils' libdw: source lines (as addr2line gives them), inline chains
 * (as addr2line -i -f), line tables and functions (for coverage).
 *
 * An object is opened on its first use and kept: its own DWARF, else the
 * separate debug file strace_debug_find() finds where perf looks. Its line
 * table is read once into one array sorted by address, so a look-up is a
 * binary search (the views ask once per event); inline chains, which need
 * a walk of the unit's DIEs, are memoised per address.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/image.h"
#include "decoder/internal.h"
#include "strace/opts.h"

/* One row of a line table. end: the row ends a sequence (its address is
 * past the sequence's last instruction); seq: the row's order in the
 * object's tables, so that rows at one address keep their order. */
struct row {
	uint64_t addr;
	const char *file;
	uint32_t line;
	uint32_t end : 1, stmt : 1, seq : 30;
};

/* A memoised inline chain: the chain of addr is inl[off .. off + n). */
struct memo {
	uint64_t addr;
	uint32_t off, n;
	int used;
};

/* One range of an inlined instance, of a unit's table (struct cutab). */
struct ient {
	uint64_t lo, hi;
	uint32_t depth; /* in the unit's tree: the inner, the deeper */
	unsigned call_line;
	const char *name, *call_file;
};

/* The inlined instances of one unit, read in one walk of its DIEs on
 * the first chain asked for in it (dwarf_getscopes() walks the unit
 * twice per address: 0.6 ms an address in libc), sorted by lo. */
struct cutab {
	Dwarf_Off off;
	struct ient *v;
	size_t n, cap;
};

struct dobj {
	char *path; /* as asked (not under symfs) */
	/* another path of an object opened already (the same build-id:
	 * /lib/... and /usr/lib/... on a merged /usr): that one is used */
	struct dobj *same;
	uint8_t id[20];
	size_t idn;
	uint64_t text_base;
	int has_text_base;
	int fd;
	Elf *elf;
	Dwarf *dw; /* NULL: no debug information */
	struct row *rows;
	size_t nrows;
	int rows_read;
	struct memo *memo; /* open addressing, nmemo a power of two */
	size_t nmemo, used;
	struct strace_inline *inl;
	size_t ninl, capinl;
	char **names; /* demangled names we own */
	size_t nnames;
	char **strs; /* file names joined with their comp dir: a set */
	size_t nstrs, capstrs;
	struct cutab *cus; /* the units' inlined instances, read so far */
	size_t ncus;
};

struct strace_dwarf {
	char *symfs;
	struct dobj **objs;
	size_t nobjs;
	struct dobj *last;
};

int strace_dwarf_new(const struct strace_dwarf_opts *o,
		     struct strace_dwarf **out)
{
	struct strace_dwarf_opts opts;
	struct strace_dwarf *d;
	int rc;

	*out = NULL;
	/* size 0: the defaults, as the header says */
	rc = strace_opts_load(&opts, sizeof(opts), o && o->size ? o : NULL);
	if (rc)
		return rc;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (opts.symfs && *opts.symfs && !(d->symfs = strdup(opts.symfs))) {
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

static void obj_free(struct dobj *o)
{
	if (o->same) {
		free(o->path);
		free(o);
		return;
	}
	if (o->dw)
		dwarf_end(o->dw);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	for (size_t i = 0; i < o->nnames; i++)
		free(o->names[i]);
	free(o->names);
	for (size_t i = 0; i < o->capstrs; i++)
		free(o->strs[i]);
	free(o->strs);
	for (size_t i = 0; i < o->ncus; i++)
		free(o->cus[i].v);
	free(o->cus);
	free(o->rows);
	free(o->memo);
	free(o->inl);
	free(o->path);
	free(o);
}

void strace_dwarf_free(struct strace_dwarf *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nobjs; i++)
		obj_free(d->objs[i]);
	free(d->objs);
	free(d->symfs);
	free(d);
}

/* Open the ELF file at path and its DWARF into o; o->dw stays NULL when
 * there is none (or the file is not a regular ELF file). */
static void dw_open(struct dobj *o, const char *path)
{
	struct stat st;
	int fd = strace_dec_open_regular(path, &st);

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	o->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF) {
		close(fd);
		return;
	}
	o->fd = fd;
	o->dw = dwarf_begin_elf(o->elf, DWARF_C_READ, NULL);
}

/* Where the first executable PT_LOAD segment's mapping starts. */
static void text_base(struct dobj *o)
{
	size_t n;

	if (elf_getphdrnum(o->elf, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(o->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		o->text_base = ph.p_vaddr - (ph.p_offset & 4095);
		o->has_text_base = 1;
		return;
	}
}

/* The object at path, opened on first use; NULL only without memory. */
static struct dobj *obj_get(struct strace_dwarf *d, const char *path)
{
	char full[4096], dbg[4096];
	struct dobj *o, **v;

	if (d->last && (d->last->path == path || !strcmp(d->last->path, path)))
		return d->last->same ? d->last->same : d->last;
	for (size_t i = 0; i < d->nobjs; i++)
		if (!strcmp(d->objs[i]->path, path)) {
			d->last = d->objs[i];
			return d->last->same ? d->last->same : d->last;
		}
	o = calloc(1, sizeof(*o));
	v = realloc(d->objs, (d->nobjs + 1) * sizeof(*v));
	if (!o || !v || !(o->path = strdup(path))) {
		free(o);
		if (v)
			d->objs = v;
		return NULL;
	}
	d->objs = v;
	o->fd = -1;
	snprintf(full, sizeof(full), "%s%s", d->symfs ? d->symfs : "", path);
	dw_open(o, full);
	if (o->elf) {
		text_base(o);
		o->idn = strace_dec_build_id(o->elf, o->id, sizeof(o->id));
		for (size_t i = 0; o->idn && i < d->nobjs; i++)
			if (!d->objs[i]->same && d->objs[i]->idn == o->idn &&
			    !memcmp(d->objs[i]->id, o->id, o->idn)) {
				if (o->dw)
					dwarf_end(o->dw);
				elf_end(o->elf);
				close(o->fd);
				o->dw = NULL;
				o->elf = NULL;
				o->fd = -1;
				o->same = d->objs[i];
				d->objs[d->nobjs++] = o;
				d->last = o;
				return o->same;
			}
	}
	if (!o->dw) {
		/* a stripped object: its separate debug file, checked by
		 * build-id, where perf and the symbols look */
		if (o->elf)
			elf_end(o->elf);
		if (o->fd >= 0)
			close(o->fd);
		o->elf = NULL;
		o->fd = -1;
		if (strace_debug_find(full, d->symfs, dbg, sizeof(dbg)) == 1)
			dw_open(o, dbg);
	}
	d->objs[d->nobjs++] = o;
	return d->last = o;
}

static size_t str_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* s, owned by o and the same pointer for the same text; NULL without
 * memory. */
static const char *intern(struct dobj *o, const char *s)
{
	size_t i;

	if (2 * (o->nstrs + 1) > o->capstrs) {
		size_t nc = o->capstrs ? 2 * o->capstrs : 64;
		char **v = calloc(nc, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t k = 0; k < o->capstrs; k++) {
			if (!o->strs[k])
				continue;
			for (i = str_hash(o->strs[k]) & (nc - 1); v[i];
			     i = (i + 1) & (nc - 1))
				;
			v[i] = o->strs[k];
		}
		free(o->strs);
		o->strs = v;
		o->capstrs = nc;
	}
	for (i = str_hash(s) & (o->capstrs - 1); o->strs[i];
	     i = (i + 1) & (o->capstrs - 1))
		if (!strcmp(o->strs[i], s))
			return o->strs[i];
	if (!(o->strs[i] = strdup(s)))
		return NULL;
	o->nstrs++;
	return o->strs[i];
}

/* A file name of the unit cu as addr2line prints it: joined with the
 * unit's comp dir when relative (libdw joins the line table's own
 * directory, not DWARF 5's directory 0). */
static const char *file_name(struct dobj *o, Dwarf_Die *cu, const char *f)
{
	Dwarf_Attribute a;
	const char *dir;
	char buf[4096];

	if (!f)
		return NULL;
	if (f[0] != '/' && dwarf_attr(cu, DW_AT_comp_dir, &a) &&
	    (dir = dwarf_formstring(&a)) && *dir) {
		size_t n = strlen(dir);
		snprintf(buf, sizeof(buf), "%s%s%s", dir,
			 dir[n - 1] == '/' ? "" : "/", f);
		return intern(o, buf);
	}
	return intern(o, f);
}

int strace_dwarf_text_base(struct strace_dwarf *d, const char *path,
			   uint64_t *vaddr)
{
	struct dobj *o = obj_get(d, path);

	if (!o || !o->has_text_base)
		return 0;
	*vaddr = o->text_base;
	return 1;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a sequence's end before the next sequence's start there */
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Every row of every unit's line table into o->rows, sorted. */
static int rows_read(struct dobj *o)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	o->rows_read = 1;
	if (!o->dw)
		return 0;
	while (!dwarf_nextcu(o->dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;

		Dwarf_Files *files;
		size_t nf;
		const char **joined = NULL;

		if (dwarf_offdie(o->dw, off + hsize, &cu) &&
		    !dwarf_getsrclines(&cu, &lines, &n) &&
		    !dwarf_getsrcfiles(&cu, &files, &nf)) {
			/* the unit's files joined once, not per row */
			joined = calloc(nf ? nf : 1, sizeof(*joined));
			if (!joined)
				return -ENOMEM;
			for (size_t i = 0; i < nf; i++)
				joined[i] = file_name(o, &cu,
					dwarf_filesrc(files, i, NULL, NULL));
			for (size_t i = 0; i < n; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				Dwarf_Files *lf;
				size_t idx;
				bool b = false;
				int line = 0;
				struct row *r;

				if (!l || dwarf_lineaddr(l, &a))
					continue;
				if (o->nrows == cap) {
					size_t nc = cap ? 2 * cap : 1024;
					struct row *v = realloc(o->rows,
								nc * sizeof(*v));
					if (!v) {
						free(joined);
						return -ENOMEM;
					}
					o->rows = v;
					cap = nc;
				}
				r = &o->rows[o->nrows];
				r->addr = a;
				r->file = !dwarf_line_file(l, &lf, &idx) &&
							  lf == files && idx < nf
						  ? joined[idx]
						  : file_name(o, &cu,
							      dwarf_linesrc(l, NULL,
									    NULL));
				dwarf_lineno(l, &line);
				r->line = line > 0 ? (uint32_t)line : 0;
				dwarf_lineendsequence(l, &b);
				r->end = b;
				b = false;
				dwarf_linebeginstatement(l, &b);
				r->stmt = b;
				r->seq = (uint32_t)(o->nrows & 0x3fffffff);
				o->nrows++;
			}
		}
		free(joined);
		off = next;
	}
	qsort(o->rows, o->nrows, sizeof(*o->rows), cmp_row);
	return 0;
}

static struct dobj *obj_rows(struct strace_dwarf *d, const char *path,
			     int *rc)
{
	struct dobj *o = obj_get(d, path);

	*rc = 0;
	if (!o) {
		*rc = -ENOMEM;
		return NULL;
	}
	if (!o->rows_read)
		*rc = rows_read(o);
	return o;
}

int strace_dwarf_srcline(struct strace_dwarf *d, const char *path,
			 uint64_t vaddr, struct strace_srcline *out)
{
	size_t lo = 0, hi;
	int rc;
	struct dobj *o = obj_rows(d, path, &rc);

	out->file = NULL;
	out->line = 0;
	if (!o)
		return rc;
	/* the last row at or before vaddr (addr2line takes the last of the
	 * rows at one address) */
	hi = o->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->rows[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || o->rows[lo - 1].end || !o->rows[lo - 1].file)
		return 0;
	out->file = o->rows[lo - 1].file;
	out->line = o->rows[lo - 1].line;
	return 1;
}

int strace_dwarf_each_line(struct strace_dwarf *d, const char *path,
			   int (*fn)(void *arg, uint64_t vaddr, uint64_t end,
				     const char *file, unsigned line),
			   void *arg)
{
	int rc;
	struct dobj *o = obj_rows(d, path, &rc);

	if (!o)
		return rc;
	for (size_t i = 0, j = 0; i < o->nrows; i++) {
		const struct row *r = &o->rows[i];
		if (r->end || !r->file)
			continue;
		/* the same line again at the address (another view) */
		if (i && o->rows[i - 1].addr == r->addr && !o->rows[i - 1].end &&
		    o->rows[i - 1].file == r->file &&
		    o->rows[i - 1].line == r->line)
			continue;
		/* its code runs to the next address a row starts at */
		if (j <= i)
			j = i + 1;
		while (j < o->nrows && o->rows[j].addr == r->addr)
			j++;
		if (j == o->nrows)
			break;
		rc = fn(arg, r->addr, o->rows[j].addr, r->file, r->line);
		if (rc)
			return rc;
	}
	return 0;
}

/* The name of a function's DIE as perf shows it: its linkage name (what
 * addr2line -f prints, perf demangles), else its name; NULL if none. */
static const char *die_name(struct dobj *o, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL, *dm;
	char buf[1024], **v;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n)
		return dwarf_diename(die);
	dm = strace_demangle(n, buf, sizeof(buf));
	if (dm == n)
		return n;
	v = realloc(o->names, (o->nnames + 1) * sizeof(*v));
	if (!v)
		return n;
	o->names = v;
	if (!(v[o->nnames] = strdup(dm)))
		return n;
	return v[o->nnames++];
}

/* The file a DW_AT_call_file / DW_AT_decl_file index names in cu. */
static const char *cu_file(struct dobj *o, Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) || idx >= n)
		return NULL;
	return file_name(o, cu, dwarf_filesrc(files, idx, NULL, NULL));
}

static int ient_add(struct cutab *t, const struct ient *e)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 16;
		struct ient *v = realloc(t->v, nc * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = nc;
	}
	t->v[t->n++] = *e;
	return 0;
}

/* The tags whose children may hold code. */
static int holds_code(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
	       tag == DW_TAG_module || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

static int cutab_walk(struct dobj *o, Dwarf_Die *cu, Dwarf_Die *die,
		      uint32_t depth, struct cutab *t)
{
	Dwarf_Die c;
	int rc = 0;

	if (depth > 256 || dwarf_child(die, &c))
		return 0;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_inlined_subroutine) {
			struct ient e = {.depth = depth};
			Dwarf_Attribute a;
			Dwarf_Word w = 0;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;

			e.name = die_name(o, &c);
			if (dwarf_attr(&c, DW_AT_call_file, &a) &&
			    !dwarf_formudata(&a, &w))
				e.call_file = cu_file(o, cu, w);
			w = 0;
			if (dwarf_attr(&c, DW_AT_call_line, &a) &&
			    !dwarf_formudata(&a, &w))
				e.call_line = (unsigned)w;
			while (!rc &&
			       (it = dwarf_ranges(&c, it, &base, &lo, &hi)) > 0)
				if (hi > lo) {
					e.lo = lo;
					e.hi = hi;
					rc = ient_add(t, &e);
				}
		}
		if (!rc && holds_code(tag))
			rc = cutab_walk(o, cu, &c, depth + 1, t);
	} while (!rc && !dwarf_siblingof(&c, &c));
	return rc;
}

static int cmp_ient(const void *a, const void *b)
{
	const struct ient *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The table of the unit cu, read on first use; NULL without memory. */
static struct cutab *cutab_get(struct dobj *o, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct cutab *t, *v;

	for (size_t i = 0; i < o->ncus; i++)
		if (o->cus[i].off == off)
			return &o->cus[i];
	v = realloc(o->cus, (o->ncus + 1) * sizeof(*v));
	if (!v)
		return NULL;
	o->cus = v;
	t = &o->cus[o->ncus];
	memset(t, 0, sizeof(*t));
	t->off = off;
	if (cutab_walk(o, cu, cu, 0, t)) {
		free(t->v);
		return NULL;
	}
	qsort(t->v, t->n, sizeof(*t->v), cmp_ient);
	o->ncus++;
	return t;
}

static int cmp_depth(const void *a, const void *b)
{
	const struct ient *x = *(const struct ient *const *)a;
	const struct ient *y = *(const struct ient *const *)b;

	return x->depth > y->depth ? -1 : x->depth < y->depth;
}

/* The chain at vaddr, from its unit's table into o->inl. */
static int chain_read(struct dobj *o, uint64_t vaddr, uint32_t *n)
{
	const struct ient *hit[64];
	struct cutab *t;
	Dwarf_Die cu;
	size_t k = 0;

	*n = 0;
	if (!o->dw || !dwarf_addrdie(o->dw, vaddr, &cu))
		return 0;
	if (!(t = cutab_get(o, &cu)))
		return -ENOMEM;
	/* the instances around vaddr: nested, so their depth orders them */
	for (size_t i = 0; i < t->n && t->v[i].lo <= vaddr; i++)
		if (vaddr < t->v[i].hi && k < 64)
			hit[k++] = &t->v[i];
	qsort(hit, k, sizeof(*hit), cmp_depth);
	if (o->ninl + k > o->capinl) {
		size_t nc = o->capinl ? 2 * o->capinl : 64;
		struct strace_inline *v;
		while (nc < o->ninl + k)
			nc *= 2;
		if (!(v = realloc(o->inl, nc * sizeof(*v))))
			return -ENOMEM;
		o->inl = v;
		o->capinl = nc;
	}
	for (size_t i = 0; i < k; i++) {
		struct strace_inline *e = &o->inl[o->ninl++];
		e->name = hit[i]->name;
		e->lo = hit[i]->lo;
		e->hi = hit[i]->hi;
		e->call.file = hit[i]->call_file;
		e->call.line = hit[i]->call_line;
	}
	*n = (uint32_t)k;
	return 0;
}

static size_t memo_slot(const struct dobj *o, uint64_t addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20);

	for (i &= o->nmemo - 1;; i = (i + 1) & (o->nmemo - 1))
		if (!o->memo[i].used || o->memo[i].addr == addr)
			return i;
}

static int memo_grow(struct dobj *o)
{
	struct dobj t = *o;

	t.nmemo = o->nmemo ? 2 * o->nmemo : 256;
	t.memo = calloc(t.nmemo, sizeof(*t.memo));
	if (!t.memo)
		return -ENOMEM;
	for (size_t i = 0; i < o->nmemo; i++)
		if (o->memo[i].used)
			t.memo[memo_slot(&t, o->memo[i].addr)] = o->memo[i];
	free(o->memo);
	o->memo = t.memo;
	o->nmemo = t.nmemo;
	return 0;
}

int strace_dwarf_inlines(struct strace_dwarf *d, const char *path,
			 uint64_t vaddr, struct strace_inline *out, size_t max)
{
	struct dobj *o = obj_get(d, path);
	struct memo *m;
	uint32_t n;
	size_t off;
	int rc;

	if (!o)
		return -ENOMEM;
	if (!o->dw)
		return 0;
	if (2 * (o->used + 1) > o->nmemo && (rc = memo_grow(o)))
		return rc;
	m = &o->memo[memo_slot(o, vaddr)];
	if (!m->used) {
		off = o->ninl;
		if ((rc = chain_read(o, vaddr, &n)))
			return rc;
		m->addr = vaddr;
		m->off = (uint32_t)off;
		m->n = n;
		m->used = 1;
		o->used++;
	}
	n = m->n < max ? m->n : (uint32_t)max;
	memcpy(out, o->inl + m->off, n * sizeof(*out));
	return (int)n;
}

/* Report every range of the subprogram DIEs under die (namespaces and
 * classes descended into). */
static int funcs_walk(struct dobj *o, Dwarf_Die *die,
		      int (*fn)(void *arg, const char *name, const char *file,
				unsigned line, uint64_t lo, uint64_t hi),
		      void *arg)
{
	Dwarf_Die c;
	int rc = 0;

	if (dwarf_child(die, &c))
		return 0;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;
			const char *name = die_name(o, &c);
			const char *file = dwarf_decl_file(&c);
			int line = 0;

			dwarf_decl_line(&c, &line);
			while (name && !rc &&
			       (it = dwarf_ranges(&c, it, &base, &lo, &hi)) > 0)
				if (hi > lo)
					rc = fn(arg, name, file,
						line > 0 ? (unsigned)line : 0,
						lo, hi);
		} else if (tag == DW_TAG_namespace ||
			   tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type ||
			   tag == DW_TAG_union_type || tag == DW_TAG_module) {
			rc = funcs_walk(o, &c, fn, arg);
		}
	} while (!rc && !dwarf_siblingof(&c, &c));
	return rc;
}

int strace_dwarf_each_function(struct strace_dwarf *d, const char *path,
			       int (*fn)(void *arg, const char *name,
					 const char *file, unsigned line,
					 uint64_t lo, uint64_t hi),
			       void *arg)
{
	struct dobj *o = obj_get(d, path);
	Dwarf_Off off = 0, next;
	size_t hsize;
	int rc = 0;

	if (!o)
		return -ENOMEM;
	if (!o->dw)
		return 0;
	while (!rc &&
	       !dwarf_nextcu(o->dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		if (dwarf_offdie(o->dw, off + hsize, &cu))
			rc = funcs_walk(o, &cu, fn, arg);
		off = next;
	}
	return rc;
}
