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
 * how many call events of the ring entered the function's start. The
 * conditional branches that ran (STRACE_NAME_COVBRANCH entries) give the
 * branch records: each way 1 (it went that way) or 0.
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
	unsigned seen; /* a branch's (lo its address): STRACE_COVBRANCH_* */
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
	unsigned nbr;		 /* the branches that ran in it, */
	const struct range *br; /* ... by address */
};

struct func {
	const char *name, *file;
	unsigned line;
	uint64_t lo, hi, entered;
	size_t seq; /* the order DWARF gave it in */
};

/* One object's coverage, while it is written. */
struct obj {
	const struct range *r; /* its ranges, by address */
	size_t nr;
	const struct range *br; /* its branches, by address */
	size_t nbr;
	struct row *rows;
	size_t nrows, caprows;
	struct func *fns;
	size_t nfns, capfns;
	const char **files; /* the rows' files, each once (row_file()) */
	size_t nfiles;
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

/* The ring's coverage entries of kind (STRACE_NAME_COVERAGE: the code
 * ranges, STRACE_NAME_COVBRANCH: the branches), by object and address. */
static int read_ranges(struct strace_names *names, unsigned kind,
		       struct range **out, size_t *nout)
{
	struct range *v = NULL;
	size_t n = 0, cap = 0, count = strace_names_count(names);

	for (uint32_t id = 0; id < count; id++) {
		const struct strace_name *e = strace_names_get(names, id);
		if (!e || e->kind != kind || !e->aux)
			continue;
		struct range *p = grow(v, &cap, n, sizeof(*v));
		if (!p) {
			free(v);
			return -ENOMEM;
		}
		v = p;
		v[n++] = kind == STRACE_NAME_COVERAGE
				 ? (struct range){e->str, e->key,
						  e->key + e->aux, 0}
				 : (struct range){e->str, e->key, e->key + 1,
						  (unsigned)e->aux};
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

/* The first of v[0..n) (by address, disjoint) that ends after lo. */
static size_t first_after(const struct range *v, size_t n, uint64_t lo)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (v[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static int on_line(void *arg, uint64_t lo, uint64_t hi, const char *file,
		   unsigned line)
{
	struct obj *o = arg;
	struct row *p = grow(o->rows, &o->caprows, o->nrows, sizeof(*p));
	size_t a, b, k;

	if (!p)
		return -ENOMEM;
	o->rows = p;
	if (!file)
		file = "";
	if (hi <= lo)
		hi = lo + 1; /* a row of no length: the instruction at lo */
	a = first_after(o->r, o->nr, lo);
	b = k = first_after(o->br, o->nbr, lo);
	while (b < o->nbr && o->br[b].lo < hi)
		b++;
	/* rows at one address (an inlined call's line, then its body's):
	 * its branches are the last one's, the line addr2line gives */
	if (o->nrows && p[o->nrows - 1].lo == lo)
		p[o->nrows - 1].nbr = 0;
	p[o->nrows++] = (struct row){file, line, lo, hi,
				     a < o->nr && o->r[a].lo < hi,
				     (unsigned)(b - k), o->br + k};
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
	p = grow(o->fns, &o->capfns, o->nfns, sizeof(*p));
	if (!p)
		return -ENOMEM;
	o->fns = p;
	p[o->nfns] = (struct func){name, file, line, lo, hi, 0, o->nfns};
	o->nfns++;
	return 0;
}

static int fn_name_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (!d)
		d = strcmp(x->file, y->file);
	return d ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

/* A function in two pieces (hot and cold) is one to lcov: the first piece
 * DWARF gave of each name and file is kept. */
static void fns_once(struct obj *o)
{
	size_t k = 0;

	if (!o->nfns)
		return;
	qsort(o->fns, o->nfns, sizeof(*o->fns), fn_name_cmp);
	for (size_t i = 1; i < o->nfns; i++)
		if (strcmp(o->fns[i].name, o->fns[k].name) ||
		    strcmp(o->fns[i].file, o->fns[k].file))
			o->fns[++k] = o->fns[i];
	o->nfns = k + 1;
}

/* o->files: the files of o's rows (sorted by file), each once. */
static int files_once(struct obj *o)
{
	if (!(o->files = malloc((o->nrows + 1) * sizeof(*o->files))))
		return -ENOMEM;
	for (size_t i = 0; i < o->nrows; i++)
		if (!o->nfiles ||
		    strcmp(o->files[o->nfiles - 1], o->rows[i].file))
			o->files[o->nfiles++] = o->rows[i].file;
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
	for (size_t i = 0; i < o->nfiles; i++) {
		const char *r = o->files[i];
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

/* row_cmp, then by address: a line's branches in their order */
static int row_addr_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int d = row_cmp(a, b);

	return d ? d : (x->lo > y->lo) - (x->lo < y->lo);
}

static int fn_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	int d = strcmp(x->file, y->file);

	if (!d)
		d = (x->line > y->line) - (x->line < y->line);
	return d ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The branch records of the file of o's row i and on: per line, per
 * conditional branch of it that ran (block: its place in the line), the
 * way taken (branch 0) and the fall-through (branch 1), each 1 when it
 * went that way, else 0; then BRF and BRH. */
static void write_brda(FILE *f, const struct obj *o, size_t i)
{
	const char *file = o->rows[i].file;
	unsigned brf = 0, brh = 0, block = 0;

	for (size_t j = i; j < o->nrows && !strcmp(o->rows[j].file, file);
	     j++) {
		const struct row *r = &o->rows[j];
		if (j == i || r->line != o->rows[j - 1].line)
			block = 0;
		for (unsigned k = 0; r->line && k < r->nbr; k++, block++) {
			int t = !!(r->br[k].seen & STRACE_COVBRANCH_TAKEN);
			int n = !!(r->br[k].seen & STRACE_COVBRANCH_NOT_TAKEN);
			fprintf(f, "BRDA:%u,%u,0,%d\nBRDA:%u,%u,1,%d\n",
				r->line, block, t, r->line, block, n);
			brf += 2;
			brh += (unsigned)(t + n);
		}
	}
	if (brf)
		fprintf(f, "BRF:%u\nBRH:%u\n", brf, brh);
}

/* The lcov records of o: a record per source file, its lines once each
 * (hit when any row of the line ran). rows sorted by file and line. */
/* s and the line's end: names and paths from the objects by the views'
 * one rule, so that none splits a record of the tracefile */
static void line_str(const char *s, FILE *f)
{
	view_fputs_clean(s, f);
	fputc('\n', f);
}

static void write_lcov(FILE *f, const struct obj *o)
{
	size_t i = 0, k = 0;

	while (i < o->nrows) {
		const char *file = o->rows[i].file;
		unsigned fnf = 0, fnh = 0, lf = 0, lh = 0;

		fputs("TN:\nSF:", f);
		line_str(file, f);
		while (k < o->nfns && strcmp(o->fns[k].file, file) < 0)
			k++;
		for (size_t j = k; j < o->nfns && !strcmp(o->fns[j].file, file);
		     j++) {
			fprintf(f, "FN:%u,", o->fns[j].line);
			line_str(o->fns[j].name, f);
		}
		for (; k < o->nfns && !strcmp(o->fns[k].file, file); k++) {
			fprintf(f, "FNDA:%" PRIu64 ",", o->fns[k].entered);
			line_str(o->fns[k].name, f);
			fnf++;
			fnh += o->fns[k].entered > 0;
		}
		fprintf(f, "FNF:%u\nFNH:%u\n", fnf, fnh);
		write_brda(f, o, i);
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

/* gcov -b's "Taken at least once" of fn's conditional branches that ran
 * (each has two ways; those that never ran are not known). */
static void fn_branches(FILE *f, const struct obj *o, const struct func *fn)
{
	unsigned n = 0, taken = 0;

	for (size_t i = first_after(o->br, o->nbr, fn->lo);
	     i < o->nbr && o->br[i].lo < fn->hi; i++) {
		n += 2;
		taken += !!(o->br[i].seen & STRACE_COVBRANCH_TAKEN) +
			 !!(o->br[i].seen & STRACE_COVBRANCH_NOT_TAKEN);
	}
	if (n)
		fprintf(f, "Taken at least once:%.2f%% of %u\n",
			100.0 * taken / n, n);
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
	fputs("Object '", f);
	view_fputs_clean(path, f);
	fputs("'\n", f);
	for (size_t k = 0; k < o->nfns; k++) {
		unsigned lines, hit;
		if (fn_lines(o, byaddr, &o->fns[k], &lines, &hit) < 0) {
			free(byaddr);
			return -ENOMEM;
		}
		fputs("Function '", f);
		view_fputs_clean(o->fns[k].name, f);
		fputs("' (", f);
		view_fputs_clean(o->fns[k].file, f);
		fprintf(f, ":%u, entered %" PRIu64 ")\n", o->fns[k].line,
			o->fns[k].entered);
		if (lines)
			fprintf(f, "Lines executed:%.2f%% of %u\n",
				100.0 * hit / lines, lines);
		else
			fprintf(f, "No executable lines\n");
		fn_branches(f, o, &o->fns[k]);
		fputc('\n', f);
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

/* Lines, functions and branches of the object o.r[0].path (o's ranges
 * and branches set). Returns 1 written, 0 no line table (skipped),
 * -ENOMEM. */
static int one_object(struct strace_dwarf *d, struct strace_names *names,
		      const struct calls *c, struct obj o, int lcov, FILE *f)
{
	const char *path = o.r->path;
	int rc = object_entries(names, c, path, &o);

	if (rc == 0)
		rc = strace_dwarf_each_line(d, path, on_line, &o);
	if (rc == 0 && o.nrows)
		rc = strace_dwarf_each_function(d, path, on_function, &o);
	if (rc == 0 && o.nrows) {
		qsort(o.rows, o.nrows, sizeof(*o.rows), row_addr_cmp);
		fns_once(&o);
		rc = files_once(&o);
	}
	if (rc == 0 && o.nrows) {
		for (size_t k = 0; k < o.nfns; k++) {
			o.fns[k].entered = entered(&o, &o.fns[k]);
			o.fns[k].file = row_file(&o, o.fns[k].file);
		}
		if (o.nfns)
			qsort(o.fns, o.nfns, sizeof(*o.fns), fn_cmp);
		if (lcov)
			write_lcov(f, &o);
		else
			rc = write_summary(f, path, &o);
		if (rc == 0)
			rc = 1;
	}
	free(o.rows);
	free(o.fns);
	free(o.files);
	free(o.entry);
	return rc;
}

/* --- the command --------------------------------------------------------- */

/* The ring's coverage: its code ranges and its branches, each by object
 * and address. */
struct ringcov {
	struct range *r, *br;
	size_t nr, nbr;
};

static int write_all(const struct read_opts *o, const char *path,
		     struct strace_names *names, const struct calls *c,
		     const struct ringcov *rc_, FILE *f)
{
	struct strace_dwarf *d;
	const struct range *r = rc_->r, *br = rc_->br;
	size_t n = rc_->nr, b = 0;
	char dir[4096];
	struct strace_dwarf_opts dopts = {
		.size = sizeof(dopts),
		.cache_dir = read_cache_dir(o, dir, sizeof(dir))};
	int rc = strace_dwarf_new(&dopts, &d), shown = 0;

	if (rc < 0) {
		err("out of memory");
		return EXIT_ERR;
	}
	for (size_t i = 0; i < n && rc >= 0;) {
		size_t j = i, k;
		while (j < n && !strcmp(r[j].path, r[i].path))
			j++;
		while (b < rc_->nbr && strcmp(br[b].path, r[i].path) < 0)
			b++;
		for (k = b; k < rc_->nbr && !strcmp(br[k].path, r[i].path);)
			k++;
		rc = one_object(d, names, c,
				(struct obj){.r = r + i, .nr = j - i,
					     .br = br + b, .nbr = k - b},
				o->cover == 1, f);
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
	struct ringcov cov = {0};
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
		rc = read_ranges(names, STRACE_NAME_COVERAGE, &cov.r, &cov.nr);
	if (rc == 0)
		rc = read_ranges(names, STRACE_NAME_COVBRANCH, &cov.br,
				 &cov.nbr);
	if (rc < 0) {
		err("out of memory");
		goto out;
	}
	if (!cov.nr) {
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
	status = write_all(o, path, names, &c, &cov, f);
	if ((f == stdout ? fflush(f) : fclose(f)) != 0 || ferror(stdout)) {
		err("%s: write failed: %s",
		    o->output ? o->output : "standard output",
		    strerror(errno));
		status = EXIT_ERR;
	}
out:
	free(cov.r);
	free(cov.br);
	free(c.key);
	free(c.n);
	strace_names_free(names);
	strace_ring_close(ring);
	return status;
}
