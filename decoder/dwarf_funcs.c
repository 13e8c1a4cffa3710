// SPDX-License-Identifier: MIT
/*
 * decoder/dwarf_funcs.c - the DWARF layer's inline chains (as addr2line
 * -i -f gives them) and functions (their ranges, for coverage; their
 * declarations, as uftrace replay --srcline shows them), over the
 * objects of dwarf.c. Each is a table read from the whole DWARF once and
 * kept in the cache (dwarf_cache.c) for the next run.
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

/* The inlined instances being read, of every unit (sorted per unit). */
struct ients {
	struct ient *v;
	size_t n, cap;
};

static int ient_add(struct ients *t, const struct ient *e)
{
	if (t->n == t->cap) {
		struct ient *v = strace_grow(t->v, &t->cap, sizeof(*v), 256);
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
		      uint32_t depth, struct ients *t)
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

static int cmp_unit(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every unit's inlined instances, and the units' address ranges as
 * .debug_aranges gives them (dwarf_addrdie()'s way to a unit), into o.
 * Returns 0, -ENOMEM. */
static int units_read(struct dobj *o)
{
	Dwarf_Aranges *ar;
	size_t nar, n = 0;
	struct ients t = {0};
	struct unit *u;
	Dwarf_Off *uoff; /* the unit of each of u */
	int rc = 0;

	if (dwarf_getaranges(o->dw, &ar, &nar) || !nar)
		return 0;
	u = calloc(nar, sizeof(*u));
	uoff = calloc(nar, sizeof(*uoff));
	if (!u || !uoff) {
		free(u);
		free(uoff);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nar && !rc; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;
		Dwarf_Die cu;
		size_t k = n;

		if (!a || dwarf_getarangeinfo(a, &addr, &len, &off) || !len ||
		    !dwarf_offdie(o->dw, off, &cu))
			continue;
		/* a unit of several ranges: its instances read once (its
		 * ranges come one after the other) */
		while (k > 0 && uoff[k - 1] != off)
			k--;
		uoff[n] = off;
		if (k > 0) {
			u[n++] = (struct unit){addr, addr + len, u[k - 1].first,
					       u[k - 1].n};
			continue;
		}
		size_t first = t.n;
		rc = cutab_walk(o, &cu, &cu, 0, &t);
		if (t.n > first)
			qsort(t.v + first, t.n - first, sizeof(*t.v), cmp_ient);
		u[n++] = (struct unit){addr, addr + len, (uint32_t)first,
				       (uint32_t)(t.n - first)};
	}
	free(uoff);
	if (rc) {
		free(u);
		free(t.v);
		return rc;
	}
	if (n)
		qsort(u, n, sizeof(*u), cmp_unit);
	o->units = u;
	o->nunits = n;
	o->ients = t.v;
	o->nients = t.n;
	return 0;
}

static int cmp_depth(const void *a, const void *b)
{
	const struct ient *x = *(const struct ient *const *)a;
	const struct ient *y = *(const struct ient *const *)b;

	return x->depth > y->depth ? -1 : x->depth < y->depth;
}

/* The chain at vaddr, from its unit's table into o->inl. */
static int chain_read(const struct strace_dwarf *d, struct dobj *o,
		      uint64_t vaddr, uint32_t *n)
{
	const struct ient *hit[64];
	const struct unit *u;
	size_t k = 0, a = 0, b;
	int rc;

	*n = 0;
	if (!o->inl_read) {
		o->inl_read = 1;
		if (!strace_dec_dwarf_cache_load(d, o, DC_INLINE)) {
			if ((rc = units_read(o)))
				return rc;
			strace_dec_dwarf_cache_save(d, o, DC_INLINE);
		}
	}
	/* the unit: the last range that starts at or before vaddr */
	for (b = o->nunits; a < b;) {
		size_t m = a + (b - a) / 2;
		if (o->units[m].lo <= vaddr)
			a = m + 1;
		else
			b = m;
	}
	if (!a || vaddr >= o->units[a - 1].hi)
		return 0;
	u = &o->units[a - 1];
	/* the instances around vaddr: nested, so their depth orders them */
	for (size_t i = u->first; i < u->first + u->n && o->ients[i].lo <= vaddr;
	     i++)
		if (vaddr < o->ients[i].hi && k < 64)
			hit[k++] = &o->ients[i];
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
		if ((rc = chain_read(d, o, vaddr, &n)))
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

static int fent_add(struct dobj *o, size_t *cap, const struct fent *f)
{
	if (o->nfns == *cap) {
		struct fent *v = strace_grow(o->fns, cap, sizeof(*v), 256);
		if (!v)
			return -ENOMEM;
		o->fns = v;
	}
	o->fns[o->nfns++] = *f;
	return 0;
}

/* Every range of the subprogram DIEs under die (namespaces and classes
 * descended into) into o->fns. */
static int funcs_walk(struct dobj *o, Dwarf_Die *cu, Dwarf_Die *die,
		      size_t *cap)
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
			struct fent f = {.name = die_name(o, &c),
					 .raw = dwarf_decl_file(&c)};
			int line = 0;

			f.file = strace_dec_dwarf_file(o, cu, f.raw);
			dwarf_decl_line(&c, &line);
			f.line = line > 0 ? (unsigned)line : 0;
			while (f.name && !rc &&
			       (it = dwarf_ranges(&c, it, &base, &lo, &hi)) > 0)
				if (hi > lo) {
					f.lo = lo;
					f.hi = hi;
					rc = fent_add(o, cap, &f);
				}
		} else if (tag == DW_TAG_namespace ||
			   tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type ||
			   tag == DW_TAG_union_type || tag == DW_TAG_module) {
			rc = funcs_walk(o, cu, &c, cap);
		}
	} while (!rc && !dwarf_siblingof(&c, &c));
	return rc;
}

/* o->fns, from the cache or every unit (then cached). */
static int fns_read(const struct strace_dwarf *d, struct dobj *o)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;
	int rc = 0;

	if (o->fns_read)
		return 0;
	o->fns_read = 1;
	if (!o->dw || strace_dec_dwarf_cache_load(d, o, DC_FUNCS))
		return 0;
	while (!rc &&
	       !dwarf_nextcu(o->dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		if (dwarf_offdie(o->dw, off + hsize, &cu))
			rc = funcs_walk(o, &cu, &cu, &cap);
		off = next;
	}
	if (!rc)
		strace_dec_dwarf_cache_save(d, o, DC_FUNCS);
	return rc;
}

int strace_dwarf_each_function(struct strace_dwarf *d, const char *path,
			       int (*fn)(void *arg, const char *name,
					 const char *file, unsigned line,
					 uint64_t lo, uint64_t hi),
			       void *arg)
{
	struct dobj *o = strace_dec_dwarf_obj(d, path);
	int rc;

	if (!o)
		return -ENOMEM;
	if ((rc = fns_read(d, o)))
		return rc;
	for (size_t i = 0; i < o->nfns && !rc; i++)
		rc = fn(arg, o->fns[i].name, o->fns[i].file, o->fns[i].line,
			o->fns[i].lo, o->fns[i].hi);
	return rc;
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

	out->file = NULL;
	out->line = 0;
	if (!o)
		return -ENOMEM;
	if (!o->funcs_built) {
		o->funcs_built = 1;
		if (fns_read(d, o) == -ENOMEM)
			return -ENOMEM;
		/* by address, the file as DWARF names it (not joined with
		 * the comp dir): what uftrace prints */
		if (o->nfns && !(o->funcs = calloc(o->nfns, sizeof(*o->funcs))))
			return -ENOMEM;
		for (size_t i = 0; i < o->nfns; i++)
			o->funcs[i] = (struct frow){o->fns[i].lo, o->fns[i].hi,
						    o->fns[i].raw,
						    o->fns[i].line};
		o->nfuncs = o->nfns;
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
