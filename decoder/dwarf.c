// SPDX-License-Identifier: MIT
/*
 * decoder/dwarf.c - debug information of the objects a trace ran, through
 * elfutils' libdw: the objects and their debug files, source lines (as
 * addr2line gives them), line tables (for coverage). Inline chains and
 * functions: dwarf_funcs.c.
 *
 * An object is opened on its first use and kept: its own DWARF, else the
 * separate debug file strace_debug_find() finds where perf looks. Its line
 * table is read once into one array sorted by address, so a look-up is a
 * binary search (the views ask once per event), and kept in the cache
 * (dwarf_cache.c) for the next run.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/dwarf_int.h"
#include "decoder/image.h"
#include "decoder/internal.h"
#include "strace/internal/grow.h"
#include "strace/opts.h"


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
	if ((opts.symfs && *opts.symfs && !(d->symfs = strdup(opts.symfs))) ||
	    (opts.cache_dir && *opts.cache_dir &&
	     !(d->cache_dir = strdup(opts.cache_dir)))) {
		free(d->symfs);
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
	free(o->units);
	free(o->ients);
	free(o->fns);
	free(o->funcs);
	free(o->rows);
	for (int k = 0; k < DC_KINDS; k++)
		if (o->maps[k])
			munmap(o->maps[k], o->maplen[k]);
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
	free(d->cache_dir);
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
	o->dsize = (uint64_t)st.st_size;
	o->dmtime_sec = (uint64_t)st.st_mtim.tv_sec;
	o->dmtime_nsec = (uint64_t)st.st_mtim.tv_nsec;
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
struct dobj *strace_dec_dwarf_obj(struct strace_dwarf *d, const char *path)
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
	if (d->nobjs == d->capobjs) {
		if (!(v = strace_grow(d->objs, &d->capobjs, sizeof(*v), 8)))
			return NULL;
		d->objs = v;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return NULL;
	}
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
const char *strace_dec_dwarf_file(struct dobj *o, Dwarf_Die *cu,
				  const char *f)
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
	struct dobj *o = strace_dec_dwarf_obj(d, path);

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

/* Every row of every unit's line table into o->rows, sorted: from the
 * cache, else from DWARF (then cached). */
static int rows_read(const struct strace_dwarf *d, struct dobj *o)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	o->rows_read = 1;
	if (!o->dw || strace_dec_dwarf_cache_load(d, o, DC_LINES))
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
				joined[i] = strace_dec_dwarf_file(o, &cu,
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
					struct row *v;

					v = strace_grow(o->rows, &cap,
							sizeof(*v), 1024);
					if (!v) {
						free(joined);
						return -ENOMEM;
					}
					o->rows = v;
				}
				r = &o->rows[o->nrows];
				r->addr = a;
				r->file = !dwarf_line_file(l, &lf, &idx) &&
							  lf == files && idx < nf
						  ? joined[idx]
						  : strace_dec_dwarf_file(o, &cu,
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
	if (o->nrows) /* (qsort of no rows: rows may be NULL) */
		qsort(o->rows, o->nrows, sizeof(*o->rows), cmp_row);
	strace_dec_dwarf_cache_save(d, o, DC_LINES);
	return 0;
}

static struct dobj *obj_rows(struct strace_dwarf *d, const char *path,
			     int *rc)
{
	struct dobj *o = strace_dec_dwarf_obj(d, path);

	*rc = 0;
	if (!o) {
		*rc = -ENOMEM;
		return NULL;
	}
	if (!o->rows_read)
		*rc = rows_read(d, o);
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
