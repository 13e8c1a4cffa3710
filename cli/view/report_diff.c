/* SPDX-License-Identifier: MIT */
/*
 * cli/view/report_diff.c - two reports compared (report_diff.h).
 *
 * The layout is uftrace report --diff's (0.13): a compact line per
 * function holds the changes, new minus base; --diff-policy full puts
 * the base's and the new run's figures before each change; percent
 * gives the times' changes in percent of the base's. One difference: a
 * time's change is printed with its own sign, where uftrace 0.13
 * inverts the sign of the times (not of the calls) when its output has
 * no colors (a pipe, a file).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "view.h"

/* a function of both runs: [0] the base's figures, [1] the new run's */
struct pair {
	const char *name;
	uint64_t calls[2], total[2], self[2];
	size_t order; /* in join()'s order */
};

int report_diff_policy(const char *s, unsigned *policy, const char **bad)
{
	while (*s) {
		size_t len = strcspn(s, ",");
		const char *w = s;
		int on = 1;
		unsigned bit = 0;

		if (len > 3 && !strncmp(w, "no-", 3)) {
			on = 0;
			w += 3;
		}
		size_t wl = len - (size_t)(w - s);
		if (wl == 3 && !strncmp(w, "abs", 3))
			bit = REPORT_DIFF_ABS;
		else if (wl == 7 && !strncmp(w, "percent", 7))
			bit = REPORT_DIFF_PERCENT;
		else if (on && wl == 4 && !strncmp(w, "full", 4))
			bit = REPORT_DIFF_FULL;
		else if (on && wl == 7 && !strncmp(w, "compact", 7))
			bit = REPORT_DIFF_FULL, on = 0;
		if (!bit) {
			*bad = s;
			return -1;
		}
		*policy = on ? *policy | bit : *policy & ~bit;
		s += len;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	const struct view_row *x = *(const struct view_row *const *)a;
	const struct view_row *y = *(const struct view_row *const *)b;

	return strcmp(x->name, y->name);
}

/* Pointers to n rows, sorted by name; NULL when out of memory. */
static const struct view_row **by_name(const struct view_row *r, size_t n)
{
	const struct view_row **p = malloc((n + 1) * sizeof(*p));

	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		p[i] = &r[i];
	if (n)
		qsort(p, n, sizeof(*p), cmp_names);
	return p;
}

/* Adds the rows of side from *i on that have name (those of one name are
 * next to each other) to pr. */
static void take(struct pair *pr, int side, const struct view_row **r,
		 size_t n, size_t *i, const char *name)
{
	for (; *i < n && !strcmp(r[*i]->name, name); (*i)++) {
		pr->calls[side] += r[*i]->calls;
		pr->total[side] += r[*i]->total;
		pr->self[side] += r[*i]->self;
	}
}

/*
 * The functions of both runs, in the order uftrace takes them before it
 * sorts (the sort's last tie-break): the base's by name, then the new
 * run's that the base has not, by name. Returns their number, or
 * -ENOMEM.
 */
static long join(const struct view_row *base, size_t nbase,
		 const struct view_row *new_rows, size_t nnew,
		 struct pair **out)
{
	const struct view_row **b = by_name(base, nbase);
	const struct view_row **n = by_name(new_rows, nnew);
	struct pair *p = calloc(nbase + nnew + 1, sizeof(*p));
	size_t np = 0, i = 0, j = 0;

	if (!b || !n || !p) {
		free(b);
		free(n);
		free(p);
		return -ENOMEM;
	}
	while (i < nbase) {
		const char *name = b[i]->name;
		int c = 1;
		while (j < nnew && (c = strcmp(n[j]->name, name)) < 0)
			j++;
		p[np].name = name;
		take(&p[np], 0, b, nbase, &i, name);
		if (!c)
			take(&p[np], 1, n, nnew, &j, name);
		np++;
	}
	for (j = 0; j < nnew;) {
		const char *name = n[j]->name;
		const struct view_row key = {.name = name}, *kp = &key;
		/* the base has it: taken above */
		if (nbase && bsearch(&kp, b, nbase, sizeof(*b), cmp_names)) {
			while (j < nnew && !strcmp(n[j]->name, name))
				j++;
			continue;
		}
		p[np].name = name;
		take(&p[np], 1, n, nnew, &j, name);
		np++;
	}
	for (i = 0; i < np; i++)
		p[i].order = i;
	free(b);
	free(n);
	*out = p;
	return (long)np;
}

/* --- sorting ----------------------------------------------------------- */

static int sort_key;       /* enum view_sort */
static unsigned sort_policy; /* REPORT_DIFF_* */

static void figures(const struct pair *p, uint64_t *base, uint64_t *now)
{
	const uint64_t *f = sort_key == VIEW_SORT_SELF    ? p->self
			    : sort_key == VIEW_SORT_CALLS ? p->calls
							  : p->total;

	*base = f[0];
	*now = f[1];
}

/* A row's change, as uftrace sorts by it: new minus base, or in percent
 * of the base's figure (0 where the base has none). */
static double change(const struct pair *p)
{
	uint64_t b, n;
	double d;

	figures(p, &b, &n);
	d = (double)(int64_t)(n - b);
	if (sort_policy & REPORT_DIFF_PERCENT)
		d = b ? 100.0 * d / (double)b : 0;
	return d;
}

/* The largest change first (its size, with abs); of two changes of one
 * size, the increase; then the order of join(). */
static int cmp_pairs(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	double cx = change(x), cy = change(y);
	double sx = cx < 0 && (sort_policy & REPORT_DIFF_ABS) ? -cx : cx;
	double sy = cy < 0 && (sort_policy & REPORT_DIFF_ABS) ? -cy : cy;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* --- printing ------------------------------------------------------------ */

/* a change of time, 11 characters: "  +1.234 us", "-123.456 ms";
 * "       0 us" when there is none */
static char *put_time_change(char *p, uint64_t base, uint64_t now)
{
	uint64_t d = now > base ? now - base : base - now;
	char t[32], *e, *s = t;

	if (base == now) {
		memcpy(p, "       0 us", 11);
		return p + 11;
	}
	e = view_put_duration(t, d);
	while (*s == ' ')
		s++;
	/* the sign in place of the first blank */
	size_t pad = (size_t)(s - t);
	memset(p, ' ', pad);
	p[pad] = now > base ? '+' : '-';
	memcpy(p + pad + 1, s, (size_t)(e - s));
	return p + pad + 1 + (e - s);
}

/* a change in percent of base, 8 characters: "+344.84%", "    N/A " where
 * a run has none; beyond +-999.99% shown as that */
static char *put_percent(char *p, uint64_t base, uint64_t now)
{
	double pc;

	if (!base || !now)
		return p + sprintf(p, "%7s ", "N/A");
	pc = 100.0 * (double)(int64_t)(now - base) / (double)base;
	if (pc > 999.99)
		pc = 999.99;
	else if (pc < -999.99)
		pc = -999.99;
	return p + sprintf(p, "%+7.2f%%", pc);
}

/* a time, or "-" when the run has none, 10 characters */
static char *put_time_or_dash(char *p, uint64_t t)
{
	if (t)
		return view_put_duration(p, t);
	return p + sprintf(p, "%10s", "-");
}

/* a time column: "   " then the change, or with full, both runs' figures
 * before it */
static char *put_time_column(char *p, unsigned policy, const uint64_t f[2])
{
	memcpy(p, "   ", 3);
	p += 3;
	if (policy & REPORT_DIFF_FULL) {
		p = put_time_or_dash(p, f[0]);
		memcpy(p, "  ", 2);
		p = put_time_or_dash(p + 2, f[1]);
		memcpy(p, "  ", 2);
		p += 2;
	} else if (policy & REPORT_DIFF_PERCENT) {
		memcpy(p, "   ", 3);
		p += 3;
	}
	return policy & REPORT_DIFF_PERCENT ? put_percent(p, f[0], f[1])
					    : put_time_change(p, f[0], f[1]);
}

static char *put_calls_column(char *p, unsigned policy, const uint64_t c[2])
{
	int64_t d = (int64_t)(c[1] - c[0]);

	if (policy & REPORT_DIFF_FULL)
		p += sprintf(p, "    %9llu  %9llu", (unsigned long long)c[0],
			     (unsigned long long)c[1]);
	else
		p += sprintf(p, "   ");
	p += sprintf(p, "  ");
	if (d)
		return p + sprintf(p, "%+9lld", (long long)d);
	return p + sprintf(p, "%9s", "+0");
}

/* the headers, right-aligned over their columns, and their rules */
static void put_header(struct out *o, unsigned policy, int by)
{
	int wt = policy & REPORT_DIFF_FULL
			 ? (policy & REPORT_DIFF_PERCENT ? 32 : 35)
			 : 11;
	int wc = policy & REPORT_DIFF_FULL ? 32 : 11;
	const char *full = policy & REPORT_DIFF_FULL ? " (diff)" : "";
	char h[3][32];

	snprintf(h[0], sizeof(h[0]), "Total time%s", full);
	snprintf(h[1], sizeof(h[1]), "Self time%s", full);
	snprintf(h[2], sizeof(h[2]), "Calls%s", full);
	o->p += sprintf(o->p, "   %*s   %*s   %*s   %s\n", wt, h[0], wt, h[1],
			wc, h[2], by == VIEW_BY_DSO ? "DSO" : "Function");
	for (int k = 0; k < 3; k++) {
		int w = k < 2 ? wt : wc;
		memset(o->p, ' ', 3);
		memset(o->p + 3, '=', (size_t)w);
		o->p += 3 + w;
	}
	o->p += sprintf(o->p, "   ====================\n");
}

int report_diff_print(const struct report_diff_opts *o,
		      const struct view_row *base, size_t nbase,
		      const struct view_row *new_rows, size_t nnew,
		      struct out *out)
{
	struct pair *p;
	long n = join(base, nbase, new_rows, nnew, &p);

	if (n < 0)
		return (int)n;
	sort_key = o->sort;
	sort_policy = o->policy;
	if (n)
		qsort(p, (size_t)n, sizeof(*p), cmp_pairs);
	out->p += sprintf(out->p,
			  "#\n# ptrace-read report diff\n"
			  "#  [0] base: %.4096s\n#  [1] diff: %.4096s\n#\n",
			  o->base_name, o->new_name);
	put_header(out, o->policy, o->by);
	for (long i = 0; i < n; i++) {
		char *q = out->p;
		q = put_time_column(q, o->policy, p[i].total);
		q = put_time_column(q, o->policy, p[i].self);
		q = put_calls_column(q, o->policy, p[i].calls);
		/* (a name is at most a few kB: views.h) */
		q += sprintf(q, "   %s\n", p[i].name);
		out->p = q;
		if (out_room(out) < 0) {
			free(p);
			return -1;
		}
	}
	free(p);
	return 0;
}
