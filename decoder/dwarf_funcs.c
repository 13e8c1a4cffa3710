// SPDX-License-Identifier: MIT
/*
 * decoder/dwarf_funcs.c - the DWARF layer's inline chains (as addr2line
 * -i -f gives them) and functions (their ranges, for coverage; their
 * declarations, as uftrace replay --srcline shows them), over the
 * objects of dwarf.c.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dwarf_int.h"
#include "decoder/internal.h"
#include "strace/internal/grow.h"

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
	if (o->nnames == o->capnames) {
		v = strace_grow(o->names, &o->capnames, sizeof(*v), 16);
		if (!v)
			return n;
		o->names = v;
	}
	if (!(o->names[o->nnames] = strdup(dm)))
		return n;
	return o->names[o->nnames++];
}

/* The file a DW_AT_call_file / DW_AT_decl_file index names in cu. */
static const char *cu_file(struct dobj *o, Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) || idx >= n)
		return NULL;
	return strace_dec_dwarf_file(o, cu, dwarf_filesrc(files, idx, NULL, NULL));
}

static int ient_add(struct cutab *t, const struct ient *e)
{
	if (t->n == t->cap) {
		struct ient *v = strace_grow(t->v, &t->cap, sizeof(*v), 16);
		if (!v)
			return -ENOMEM;
		t->v = v;
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
	if (o->ncus == o->capcus) {
		v = strace_grow(o->cus, &o->capcus, sizeof(*v), 8);
		if (!v)
			return NULL;
		o->cus = v;
	}
	t = &o->cus[o->ncus];
	memset(t, 0, sizeof(*t));
	t->off = off;
	if (cutab_walk(o, cu, cu, 0, t)) {
		free(t->v);
		return NULL;
	}
	if (t->n) /* (a unit without inlined code has no table) */
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
	/* doubled until the k more fit */
	while (o->ninl + k > o->capinl) {
		struct strace_inline *v =
			strace_grow(o->inl, &o->capinl, sizeof(*v), 64);
		if (!v)
			return -ENOMEM;
		o->inl = v;
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
	struct dobj *o = strace_dec_dwarf_obj(d, path);
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
	if (n) /* (no chain yet: o->inl may still be NULL) */
		memcpy(out, o->inl + m->off, n * sizeof(*out));
	return (int)n;
}

/* Report every range of the subprogram DIEs under die (namespaces and
 * classes descended into). */
static int funcs_walk(struct dobj *o, Dwarf_Die *cu, Dwarf_Die *die,
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
			const char *file =
				o->raw_decl ? dwarf_decl_file(&c)
					    : strace_dec_dwarf_file(o, cu, dwarf_decl_file(&c));
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
			rc = funcs_walk(o, cu, &c, fn, arg);
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
	struct dobj *o = strace_dec_dwarf_obj(d, path);
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
			rc = funcs_walk(o, &cu, &cu, fn, arg);
		off = next;
	}
	return rc;
}

static int on_func(void *arg, const char *name, const char *file,
		   unsigned line, uint64_t lo, uint64_t hi)
{
	struct dobj *o = arg;

	(void)name;
	if (o->nfuncs == o->capfuncs) {
		struct frow *v =
			strace_grow(o->funcs, &o->capfuncs, sizeof(*v), 256);
		if (!v)
			return -ENOMEM;
		o->funcs = v;
	}
	o->funcs[o->nfuncs++] = (struct frow){lo, hi, file, line};
	return 0;
}

static int cmp_frow(const void *a, const void *b)
{
	const struct frow *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int strace_dwarf_function_line(struct strace_dwarf *d, const char *path,
			       uint64_t vaddr, struct strace_srcline *out)
{
	struct dobj *o = strace_dec_dwarf_obj(d, path);
	size_t lo = 0, hi;
	int rc;

	out->file = NULL;
	out->line = 0;
	if (!o)
		return -ENOMEM;
	if (!o->funcs_read) {
		o->funcs_read = 1;
		/* the file as DWARF names it (not joined with the comp dir):
		 * what uftrace prints */
		o->raw_decl = 1;
		rc = o->dw ? strace_dwarf_each_function(d, path, on_func, o) : 0;
		o->raw_decl = 0;
		if (rc == -ENOMEM)
			return -ENOMEM;
		if (o->nfuncs)
			qsort(o->funcs, o->nfuncs, sizeof(*o->funcs),
			      cmp_frow);
	}
	hi = o->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->funcs[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= o->funcs[lo - 1].hi || !o->funcs[lo - 1].file)
		return 0;
	out->file = o->funcs[lo - 1].file;
	out->line = o->funcs[lo - 1].line;
	return 1;
}
