/* SPDX-License-Identifier: MIT */
/*
 * cli/read_cov.c - ptrace-read -f lcov and -f coverage: line coverage
 * from the code ranges a decode ran (ptrace-capture --coverage writes
 * them into the ring: STRACE_NAME_COVERAGE entries, per object in its own
 * addresses) and each object's line table (decoder/dwarf.c): an lcov
 * tracefile (geninfo(1)'s format, for genhtml), or a per-function summary
 * like `gcov -f`'s.
 *
 * A line ran when code of one of its rows ran. The ranges say "ran", not
 * how often (docs/decoder.md, "Coverage"): DA counts are 1 or 0. FNDA is
 * how many call events of the ring entered the function's start.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "read.h"
#include "decoder/decoder.h"
#include "strace/names.h"

struct range {
	const char *path; /* the object's, in the ring's names */
	uint64_t lo, hi;
};

struct calls { /* call targets by address: open addressing */
	uint64_t *key, *n;
	size_t mask, used;
};

struct row { /* a row of a line table */
	const char *file;
	unsigned line;
	uint64_t lo, hi;
	int hit;
};

struct func {
	const char *name, *file;
	unsigned line;
	uint64_t lo, hi, entered;
};

/* One object's coverage, while it is written. */
struct obj {
	const struct range *r; /* its ranges, by address */
	size_t nr;
	struct row *rows;
	size_t nrows, caprows;
	struct func *fns;
	size_t nfns, capfns;
	struct entry { /* calls to the start of a symbol of it */
		const char *name;
		uint64_t n;
	} *entry;
	size_t nentry;
};

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	return n < *cap ? v : strace_grow(v, cap, size, 256);
}

/* --- the ring: ranges and calls ---------------------------------------- */

static int calls_add(struct calls *c, uint64_t addr)
{
	size_t i;

	if (2 * (c->used + 1) > c->mask + 1) {
		struct calls g = {0};
		g.mask = c->mask ? 2 * c->mask + 1 : 1023;
		g.key = calloc(g.mask + 1, sizeof(*g.key));
		g.n = calloc(g.mask + 1, sizeof(*g.n));
		if (!g.key || !g.n) {
			free(g.key);
			free(g.n);
			return -ENOMEM;
		}
		for (size_t k = 0; c->key && k <= c->mask; k++) {
			if (!c->n[k])
				continue;
			for (i = (c->key[k] * 0x9e3779b97f4a7c15ull >> 20) &
				 g.mask;
			     g.n[i]; i = (i + 1) & g.mask)
				;
			g.key[i] = c->key[k];
			g.n[i] = c->n[k];
		}
		g.used = c->used;
		free(c->key);
		free(c->n);
		*c = g;
	}
	for (i = (addr * 0x9e3779b97f4a7c15ull >> 20) & c->mask;
	     c->n[i] && c->key[i] != addr; i = (i + 1) & c->mask)
		;
	if (!c->n[i]) {
		c->key[i] = addr;
		c->used++;
	}
	c->n[i]++;
	return 0;
}

/* Every event: the targets of the calls, counted. Returns 0, or an exit
 * status after a message. */
static int read_calls(struct strace_ring *ring, const char *path,
		      struct calls *c)
{
	struct strace_reader *r;
	struct strace_batch b;
	long n;
	int rc = strace_reader_open(ring, 0, &r);

	if (rc < 0) {
		ring_error(path, rc, "attach a reader");
		return EXIT_ERR;
	}
	while ((n = strace_reader_next(r, &b, BATCH_MAX, 0)) > 0) {
		for (long i = 0; i < n && rc == 0; i++)
			if (b.ev[i].type == STRACE_EV_CALL)
				rc = calls_add(c, b.ev[i].b);
		strace_reader_release(r, &b);
		if (rc < 0)
			break;
	}
	strace_reader_close(r);
	if (rc < 0 || n < 0) {
		ring_error(path, rc < 0 ? rc : (int)n, "read the events");
		return EXIT_ERR;
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	int d = strcmp(x->path, y->path);

	return d ? d : x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The ring's coverage entries, by object and address. */
static int read_ranges(struct strace_names *names, struct range **out,
		       size_t *nout)
{
	struct range *v = NULL;
	size_t n = 0, cap = 0, count = strace_names_count(names);

	for (uint32_t id = 0; id < count; id++) {
		const struct strace_name *e = strace_names_get(names, id);
		if (!e || e->kind != STRACE_NAME_COVERAGE || !e->aux)
			continue;
		struct range *p = grow(v, &cap, n, sizeof(*v));
		if (!p) {
			free(v);
			return -ENOMEM;
		}
		v = p;
		v[n++] = (struct range){e->str, e->key, e->key + e->aux};
	}
	if (n)
		qsort(v, n, sizeof(*v), range_cmp);
	*out = v;
	*nout = n;
	return 0;
}

/* --- one object ----------------------------------------------------------- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Whether the DSO the ring names by path is the object decoded as obj
 * (the same path, or one read from a build-id cache or --symfs under
 * the same file name). */
static int same_object(const char *dso, const char *obj)
{
	return !strcmp(dso, obj) || !strcmp(base_name(dso), base_name(obj));
}

static int ran(const struct obj *o, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = o->nr;

	if (hi <= lo)
		hi = lo + 1; /* a row of no length: the instruction at lo */
	while (a < b) { /* the first range that ends after lo */
		size_t m = a + (b - a) / 2;
		if (o->r[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < o->nr && o->r[a].lo < hi;
}

static int on_line(void *arg, uint64_t lo, uint64_t hi, const char *file,
		   unsigned line)
{
	struct obj *o = arg;
	struct row *p = grow(o->rows, &o->caprows, o->nrows, sizeof(*p));

	if (!p)
		return -ENOMEM;
	o->rows = p;
	if (!file)
		file = "";
	p[o->nrows++] = (struct row){file, line, lo, hi, ran(o, lo, hi)};
	return 0;
}

/* The calls into fn: those to its start, found by its name (the ring's
 * symbols: its DSO entries need not say where a mapping lies in the
 * object, the symbols are the functions' own). */
static uint64_t entered(const struct obj *o, const struct func *fn)
{
	uint64_t n = 0;

	for (size_t i = 0; i < o->nentry; i++)
		if (!strcmp(o->entry[i].name, fn->name))
			n += o->entry[i].n;
	return n;
}

static int on_function(void *arg, const char *name, const char *file,
		       unsigned line, uint64_t lo, uint64_t hi)
{
	struct obj *o = arg;
	struct func *p;

	if (!name)
		return 0;
	if (!file)
		file = ""; /* (no DW_AT_decl_file) */
	/* a function in two pieces (hot and cold) is one to lcov */
	for (size_t i = 0; i < o->nfns; i++)
		if (!strcmp(o->fns[i].name, name) &&
		    !strcmp(o->fns[i].file, file))
			return 0;
	p = grow(o->fns, &o->capfns, o->nfns, sizeof(*p));
	if (!p)
		return -ENOMEM;
	o->fns = p;
	p[o->nfns++] = (struct func){name, file, line, lo, hi, 0};
	return 0;
}

/* A function's file as its line table names it: a declaration's file may
 * come without the unit's directory (DW_AT_decl_file of a relative name)
 * where the rows have it joined; lcov puts a function in its file's
 * record. */
static const char *row_file(const struct obj *o, const char *file)
{
	size_t n = strlen(file);

	if (!n || file[0] == '/')
		return file;
	for (size_t i = 0; i < o->nrows; i++) {
		const char *r = o->rows[i].file;
		if (i && r == o->rows[i - 1].file)
			continue; /* (rows by file: each file once) */
		size_t k = strlen(r);
		if (!strcmp(r, file) ||
		    (k > n && r[k - n - 1] == '/' && !strcmp(r + k - n, file)))
			return r;
	}
	return file;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int d = strcmp(x->file, y->file);

	return d ? d : (x->line > y->line) - (x->line < y->line);
}

static int fn_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	int d = strcmp(x->file, y->file);

	return d ? d : (x->line > y->line) - (x->line < y->line);
}

/* The lcov records of o: a record per source file, its lines once each
 * (hit when any row of the line ran). rows sorted by file and line. */
static void write_lcov(FILE *f, const struct obj *o)
{
	size_t i = 0, k = 0;

	while (i < o->nrows) {
		const char *file = o->rows[i].file;
		unsigned fnf = 0, fnh = 0, lf = 0, lh = 0;

		fprintf(f, "TN:\nSF:%s\n", file);
		while (k < o->nfns && strcmp(o->fns[k].file, file) < 0)
			k++;
		for (size_t j = k; j < o->nfns && !strcmp(o->fns[j].file, file);
		     j++)
			fprintf(f, "FN:%u,%s\n", o->fns[j].line,
				o->fns[j].name);
		for (; k < o->nfns && !strcmp(o->fns[k].file, file); k++) {
			fprintf(f, "FNDA:%" PRIu64 ",%s\n", o->fns[k].entered,
				o->fns[k].name);
			fnf++;
			fnh += o->fns[k].entered > 0;
		}
		fprintf(f, "FNF:%u\nFNH:%u\n", fnf, fnh);
		while (i < o->nrows && !strcmp(o->rows[i].file, file)) {
			unsigned line = o->rows[i].line;
			int hit = 0;
			for (; i < o->nrows && o->rows[i].line == line &&
			       !strcmp(o->rows[i].file, file);
			     i++)
				hit |= o->rows[i].hit;
			if (!line)
				continue; /* code of no line (line 0) */
			fprintf(f, "DA:%u,%d\n", line, hit);
			lf++;
			lh += hit != 0;
		}
		fprintf(f, "LF:%u\nLH:%u\nend_of_record\n", lf, lh);
	}
}

/* The lines of fn's code, as gcov -f counts them: each source line once,
 * hit when any of its rows in fn ran. byaddr: o's rows by address. */
static int fn_lines(const struct obj *o, struct row **byaddr,
		    const struct func *fn, unsigned *lines, unsigned *hit)
{
	size_t a = 0, b = o->nrows, n = 0;
	struct row *v;

	*lines = *hit = 0;
	while (a < b) { /* the first row at or after fn->lo */
		size_t m = a + (b - a) / 2;
		if (byaddr[m]->lo < fn->lo)
			a = m + 1;
		else
			b = m;
	}
	for (b = a; b < o->nrows && byaddr[b]->lo < fn->hi; b++)
		;
	if (a == b)
		return 0;
	if (!(v = malloc((b - a) * sizeof(*v))))
		return -ENOMEM;
	for (size_t i = a; i < b; i++)
		if (byaddr[i]->line)
			v[n++] = *byaddr[i];
	qsort(v, n, sizeof(*v), row_cmp);
	for (size_t i = 0; i < n;) {
		int h = 0;
		size_t j = i;
		for (; j < n && !row_cmp(&v[i], &v[j]); j++)
			h |= v[j].hit;
		(*lines)++;
		*hit += h != 0;
		i = j;
	}
	free(v);
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct row *x = *(struct row *const *)a;
	const struct row *y = *(struct row *const *)b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int write_summary(FILE *f, const char *path, const struct obj *o)
{
	struct row **byaddr = malloc(o->nrows * sizeof(*byaddr));

	if (!byaddr)
		return -ENOMEM;
	for (size_t i = 0; i < o->nrows; i++)
		byaddr[i] = &o->rows[i];
	qsort(byaddr, o->nrows, sizeof(*byaddr), addr_cmp);
	fprintf(f, "Object '%s'\n", path);
	for (size_t k = 0; k < o->nfns; k++) {
		unsigned lines, hit;
		if (fn_lines(o, byaddr, &o->fns[k], &lines, &hit) < 0) {
			free(byaddr);
			return -ENOMEM;
		}
		fprintf(f, "Function '%s' (%s:%u, entered %" PRIu64 ")\n",
			o->fns[k].name, o->fns[k].file, o->fns[k].line,
			o->fns[k].entered);
		if (lines)
			fprintf(f, "Lines executed:%.2f%% of %u\n\n",
				100.0 * hit / lines, lines);
		else
			fprintf(f, "No executable lines\n\n");
	}
	free(byaddr);
	return 0;
}

/* The calls into the object path: to the start of a symbol of its. */
static int object_entries(struct strace_names *names, const struct calls *c,
			  const char *path, struct obj *o)
{
	size_t cap = 0;

	for (size_t k = 0; c->n && k <= c->mask; k++) {
		if (!c->n[k])
			continue;
		const struct strace_name *dso =
			strace_names_dso(names, c->key[k]);
		const struct strace_name *sym =
			strace_names_symbol(names, c->key[k]);
		if (!dso || !sym || sym->key != c->key[k] ||
		    !same_object(dso->str, path))
			continue;
		struct entry *e = grow(o->entry, &cap, o->nentry, sizeof(*e));
		if (!e)
			return -ENOMEM;
		o->entry = e;
		e[o->nentry++] = (struct entry){sym->str, c->n[k]};
	}
	return 0;
}

/* Lines and functions of the object whose ranges are r[0..n). Returns 1
 * written, 0 no line table (skipped), -ENOMEM. */
static int one_object(struct strace_dwarf *d, struct strace_names *names,
		      const struct calls *c, const struct range *r, size_t n,
		      int lcov, FILE *f)
{
	struct obj o = {.r = r, .nr = n};
	int rc = object_entries(names, c, r->path, &o);

	if (rc == 0)
		rc = strace_dwarf_each_line(d, r->path, on_line, &o);
	if (rc == 0 && o.nrows)
		rc = strace_dwarf_each_function(d, r->path, on_function, &o);
	if (rc == 0 && o.nrows) {
		qsort(o.rows, o.nrows, sizeof(*o.rows), row_cmp);
		for (size_t k = 0; k < o.nfns; k++) {
			o.fns[k].entered = entered(&o, &o.fns[k]);
			o.fns[k].file = row_file(&o, o.fns[k].file);
		}
		if (o.nfns)
			qsort(o.fns, o.nfns, sizeof(*o.fns), fn_cmp);
		if (lcov)
			write_lcov(f, &o);
		else
			rc = write_summary(f, r->path, &o);
		if (rc == 0)
			rc = 1;
	}
	free(o.rows);
	free(o.fns);
	free(o.entry);
	return rc;
}

/* --- the command --------------------------------------------------------- */

static int write_all(const struct read_opts *o, const char *path,
		     struct strace_names *names, const struct calls *c,
		     const struct range *r, size_t n, FILE *f)
{
	struct strace_dwarf *d;
	int rc = strace_dwarf_new(NULL, &d), shown = 0;

	if (rc < 0) {
		err("out of memory");
		return EXIT_ERR;
	}
	for (size_t i = 0; i < n && rc >= 0;) {
		size_t j = i;
		while (j < n && !strcmp(r[j].path, r[i].path))
			j++;
		rc = one_object(d, names, c, r + i, j - i, o->cover == 1, f);
		if (rc == 0)
			err("%s: ran, but has no line table (no debug "
			    "information): left out",
			    r[i].path);
		shown += rc > 0;
		i = j;
	}
	strace_dwarf_free(d);
	if (rc < 0) {
		err("out of memory");
		return EXIT_ERR;
	}
	if (!shown)
		err("%s: no object that ran has debug information", path);
	return EXIT_OK;
}

int cmd_coverage(const struct read_opts *o, const char *path)
{
	struct strace_ring *ring;
	struct strace_names *names = NULL;
	struct calls c = {0};
	struct range *r = NULL;
	size_t n = 0;
	FILE *f = stdout;
	int rc, timed_out, status = EXIT_ERR;

	catch_sigbus(path);
	rc = open_ring(o, path, &ring, &timed_out);
	if (rc < 0) {
		ring_error(path, rc, "open the ring");
		return EXIT_ERR;
	}
	rc = strace_names_new(ring, &names);
	if (rc == 0 && strace_names_update(names) < 0)
		err("%s: the string table is damaged: its entries after the "
		    "damage are left out", path);
	if (rc == 0)
		rc = read_ranges(names, &r, &n);
	if (rc < 0) {
		err("out of memory");
		goto out;
	}
	if (!n) {
		err("%s: the ring holds no coverage: decode with "
		    "ptrace-capture --coverage",
		    path);
		goto out;
	}
	if (read_calls(ring, path, &c))
		goto out;
	if (o->output) {
		int fd = out_create(o->output);
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			if (fd < 0)
				out_create_error(PROG, o->output, fd);
			else
				err("%s: %s", o->output, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto out;
		}
	}
	status = write_all(o, path, names, &c, r, n, f);
	if ((f == stdout ? fflush(f) : fclose(f)) != 0 || ferror(stdout)) {
		err("%s: write failed: %s",
		    o->output ? o->output : "standard output",
		    strerror(errno));
		status = EXIT_ERR;
	}
out:
	free(r);
	free(c.key);
	free(c.n);
	strace_names_free(names);
	strace_ring_close(ring);
	return status;
}
