/* SPDX-License-Identifier: MIT */
/*
 * cli/view/views_report.c - the end of -f report: its rows sorted (--sort),
 * the table printed, with a DSO column when a name is on two rows and a
 * Source:Line column with --srcline, or the rows kept, named, for
 * view_report_rows() (--diff).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "views_int.h"

static int view_sort_key;

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t kx = view_sort_key == VIEW_SORT_SELF    ? x->self
		      : view_sort_key == VIEW_SORT_CALLS ? x->calls
							 : x->total;
	uint64_t ky = view_sort_key == VIEW_SORT_SELF    ? y->self
		      : view_sort_key == VIEW_SORT_CALLS ? y->calls
							 : y->total;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_row_names(const void *a, const void *b)
{
	const struct strace_name *x = *(const struct strace_name *const *)a;
	const struct strace_name *y = *(const struct strace_name *const *)b;
	int c = memcmp(x->str, y->str, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Whether two of the n rows (functions) have one name (in two DSOs, or
 * two static functions of one). Returns -1 when out of memory. */
static int names_repeat(struct view *v, size_t n)
{
	const struct strace_name **nm = malloc((n + 1) * sizeof(*nm));
	size_t k = 0;
	int rep = 0;

	if (!nm)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (IS_NAME_ID(v->rows[i].key))
			nm[k++] = strace_names_get(v->names,
						   (uint32_t)v->rows[i].key);
	qsort(nm, k, sizeof(*nm), cmp_row_names);
	for (size_t i = 1; i < k && !rep; i++)
		rep = !cmp_row_names(&nm[i - 1], &nm[i]);
	free(nm);
	return rep;
}

/* The base name of the DSO of a function's row ("" if none). */
static const char *row_dso(struct view *v, const struct row *r, int *len)
{
	const struct strace_name *d = NULL;
	const char *b = "";

	if (IS_NAME_ID(r->key))
		d = strace_names_dso(
			v->names,
			strace_names_get(v->names, (uint32_t)r->key)->key);
	else if (r->key < (1ull << 32)) /* an inlined function's */
		d = strace_names_dso(v->names, r->addr);
	if (d) {
		b = strrchr(d->str, '/');
		b = b ? b + 1 : d->str;
	}
	*len = (int)strlen(b) < DSO_COL_MAX ? (int)strlen(b) : DSO_COL_MAX;
	return b;
}

/* The rows the report shows, those with calls, moved to the front of
 * rows[] in its order (--sort); their count. */
static size_t report_rows(struct view *v)
{
	size_t n = 0;

	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].calls)
			v->rows[n++] = v->rows[i];
	view_sort_key = v->o.sort;
	if (n) /* (rows is NULL when nothing was kept) */
		qsort(v->rows, n, sizeof(*v->rows), cmp_rows);
	return n;
}

/* A row's name under Function, Thread or DSO. */
static char *put_row_name(struct view *v, char *p, const struct row *r)
{
	if (v->o.by == VIEW_BY_THREAD) {
		const struct strace_name *t =
			v->names ? strace_names_thread(v->names, (uint32_t)r->key)
				 : NULL;
		p += sprintf(p, "%u", (unsigned)r->key);
		if (t) {
			*p++ = ' ';
			p = view_put_clean(p, t->str,
					   t->len < 256 ? t->len : 256, NULL);
		}
	} else if (v->o.by == VIEW_BY_DSO) {
		if (IS_SYSCALL_ID(r->key) || r->key == ID_SIGNAL) {
			p = view_put_name_id(v, p, r->key);
		} else if (r->key == ID_UNKNOWN) {
			memcpy(p, "[unknown]", 9);
			p += 9;
		} else {
			const struct strace_name *d =
				strace_names_get(v->names, (uint32_t)r->key);
			p = view_put_clean(p, d->str,
					   d->len < 1024 ? d->len : 1024, NULL);
		}
	} else {
		p = view_put_name_id(v, p, r->key);
	}
	return p;
}

/* the widest Function column before --srcline's Source:Line (a longer
 * name pushes its own line's source to the right) */
#define NAME_COL_MAX 64

/* --srcline: the width of the Function column, the longest name shown
 * (at least its "====" line's 20, at most NAME_COL_MAX); 0 without the
 * column: no --srcline, or --by thread or dso (a thread or a DSO has no
 * line of its own). */
static int src_name_width(struct view *v, size_t n)
{
	char name[FMT_NAME_MAX + 2048];
	int w = 20;

	if (!v->o.srcline || v->o.by != VIEW_BY_FUNCTION)
		return 0;
	for (size_t i = 0; i < n && w < NAME_COL_MAX; i++) {
		long len = put_row_name(v, name, &v->rows[i]) - name;
		if (len > w)
			w = len < NAME_COL_MAX ? (int)len : NAME_COL_MAX;
	}
	return w;
}

/* --srcline: the row's Source:Line, where its function is declared (the
 * tree's callback); perf's "??:0" (SRCLINE_UNKNOWN) when not known, for
 * a system call or a signal, and for an inlined function (its address
 * is in the function it was inlined into, whose line it would get) */
static char *put_row_src(struct view *v, char *p, const struct row *r)
{
	const char *file;
	unsigned line;
	size_t n;

	if (r->kind == STRACE_FRAME_SYSCALL || r->kind == STRACE_FRAME_SIGNAL ||
	    (!IS_NAME_ID(r->key) && r->key < (1ull << 32)) ||
	    !v->o.srcline(v->o.srcline_arg, r->addr, &file, &line)) {
		memcpy(p, "??:0", 4);
		return p + 4;
	}
	n = strlen(file);
	if (n > SRCLINE_FILE_MAX)
		n = SRCLINE_FILE_MAX;
	view_put_clean(p, file, n, NULL);
	for (size_t i = 0; i < n; i++, p++) /* a column: no blank in it */
		if (*p == ' ')
			*p = '?';
	return p + sprintf(p, ":%u", line);
}

int view_report_print(struct view *v)
{
	struct out *o = v->out;
	size_t n = report_rows(v);
	int dsocol = 0, width = 3, len, srcw = src_name_width(v, n);
	const char *b;
	static const char *const first[] = {"Function", "Thread", "DSO"};

	/* a name on two rows (_start of the program and of ld.so): say
	 * which DSO each is in */
	if (v->o.by == VIEW_BY_FUNCTION && v->names &&
	    (dsocol = names_repeat(v, n)) < 0)
		return -1;
	for (size_t i = 0; dsocol && i < n; i++) {
		row_dso(v, &v->rows[i], &len);
		width = len > width ? len : width;
	}
	o->p += sprintf(o->p,
			"  Total time   Self time       Calls     Average     "
			"Maximum  ");
	if (dsocol)
		o->p += sprintf(o->p, "%-*s  ", width, "DSO");
	if (srcw)
		o->p += sprintf(o->p, "%-*s  Source:Line", srcw, first[v->o.by]);
	else
		o->p += sprintf(o->p, "%s", first[v->o.by]);
	o->p += sprintf(o->p,
			"\n"
			"  ==========  ==========  ==========  ==========  "
			"==========  ");
	if (dsocol) {
		memset(o->p, '=', (size_t)width);
		o->p += width;
		o->p += sprintf(o->p, "  ");
	}
	if (srcw) {
		memset(o->p, '=', (size_t)srcw);
		o->p += srcw;
		o->p += sprintf(o->p, "  ");
	}
	o->p += sprintf(o->p, "====================\n");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &v->rows[i];
		char *p = o->p;
		*p++ = ' ';
		*p++ = ' ';
		p = put_duration(p, r->total);
		*p++ = ' ';
		*p++ = ' ';
		p = put_duration(p, r->self);
		p += sprintf(p, "  %10llu  ", (unsigned long long)r->calls);
		p = put_duration(p, r->total / r->calls);
		*p++ = ' ';
		*p++ = ' ';
		p = put_duration(p, r->max);
		*p++ = ' ';
		*p++ = ' ';
		if (dsocol) {
			b = row_dso(v, r, &len);
			p = view_put_clean(p, b, (size_t)len, NULL);
			memset(p, ' ', (size_t)(width - len) + 2);
			p += width - len + 2;
		}
		char *name = p;
		p = put_row_name(v, p, r);
		if (srcw) {
			if (p - name < srcw) {
				memset(p, ' ', (size_t)(srcw - (p - name)));
				p = name + srcw;
			}
			*p++ = ' ';
			*p++ = ' ';
			p = put_row_src(v, p, r);
		}
		*p++ = '\n';
		o->p = p;
		if (out_room(o) < 0)
			return -1;
	}
	return 0;
}

/* The rows of a report made with rows_only, named (view_report_rows());
 * the names in one pool, whose pointers are set once it is whole. */
int view_report_keep(struct view *v)
{
	size_t n = report_rows(v), used = 0, cap = 0;
	char name[FMT_NAME_MAX + 2048];
	char *pool = NULL;

	v->vrows = calloc(n + 1, sizeof(*v->vrows));
	if (!v->vrows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &v->rows[i];
		size_t len = (size_t)(put_row_name(v, name, r) - name);
		/* doubled until the name fits */
		while (used + len + 1 > cap) {
			char *np = strace_grow(pool, &cap, 1, 4096);
			if (!np) {
				free(pool);
				return -ENOMEM;
			}
			pool = np;
		}
		memcpy(pool + used, name, len);
		pool[used + len] = 0;
		/* the offset for now */
		v->vrows[i].name = (const char *)(uintptr_t)used;
		v->vrows[i].calls = r->calls;
		v->vrows[i].total = r->total;
		v->vrows[i].self = r->self;
		v->vrows[i].max = r->max;
		used += len + 1;
	}
	for (size_t i = 0; i < n; i++)
		v->vrows[i].name = pool + (uintptr_t)v->vrows[i].name;
	v->vnames = pool;
	v->nvrows = n;
	v->rows_kept = 1;
	return 0;
}

long view_report_rows(struct view *v, const struct view_row **rows)
{
	if (!v->rows_kept)
		return -EINVAL;
	*rows = v->vrows;
	return (long)v->nvrows;
}
