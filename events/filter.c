/* SPDX-License-Identifier: MIT */
/*
 * events/filter.c - which events and frames a reader keeps
 * (strace/filter.h).
 *
 * Verdicts on names (does this function match --sym, this thread's name
 * --comm) are cached by the names' entry ids and by tid, so that a
 * condition costs a table load per event once it was decided.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/filter.h"
#include "strace/internal/grow.h"

struct range {
	uint64_t lo, hi; /* [lo, hi] ns */
	double plo, phi; /* percentages, when given so (pct) */
	int pct;
	int hit; /* an event or frame was in it */
};

/* patterns and ids; hit[i]: v[i] matched something asked about */
struct patterns {
	char **v;
	uint8_t *hit;
	size_t n, cap;
};

struct ids {
	uint32_t *v;
	uint8_t *hit;
	size_t n, cap;
};

/* a verdict per names entry id: 0 not decided, 1 yes, 2 no */
struct verdicts {
	uint8_t *v;
	size_t cap;
};

struct strace_filter {
	struct strace_names *names;
	struct range *times;
	size_t ntimes, timescap;
	int percent, span_set;
	struct ids tids, pids;
	struct patterns comm, sym, nosym, dso, caller;
	struct verdicts vsym, vnosym, vdso, vcaller;
	char idbuf[64]; /* strace_filter_unmatched()'s id or range */
	/* per-thread verdicts of tid, pid and comm: tid -> 1 keep, 2 drop */
	struct {
		uint32_t tid;
		uint8_t keep;
		uint64_t gen;
	} tcache[256];
};

int strace_filter_new(struct strace_names *names, struct strace_filter **out)
{
	struct strace_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->names = names;
	*out = f;
	return 0;
}

static void patterns_free(struct patterns *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	free(p->hit);
}

void strace_filter_free(struct strace_filter *f)
{
	if (!f)
		return;
	free(f->times);
	free(f->tids.v);
	free(f->tids.hit);
	free(f->pids.v);
	free(f->pids.hit);
	patterns_free(&f->comm);
	patterns_free(&f->sym);
	patterns_free(&f->nosym);
	patterns_free(&f->dso);
	patterns_free(&f->caller);
	free(f->vcaller.v);
	free(f->vsym.v);
	free(f->vnosym.v);
	free(f->vdso.v);
	free(f);
}

/* --- parsing ----------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int
bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -STRACE_E_BADARG;
}

/* seconds with up to 9 decimals into ns, exactly; the whole of [s, e) */
static int parse_secs(const char *s, const char *e, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0, nd = 0;

	for (; s < e && *s >= '0' && *s <= '9'; s++, nd++) {
		if (sec > UINT64_MAX / 10 / 1000000000u)
			return -1;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (s < e && *s == '.') {
		for (s++; s < e && *s >= '0' && *s <= '9'; s++, nd++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
	}
	if (s != e || !nd)
		return -1;
	while (digits++ < 9)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return 0;
}

static int parse_pct(const char *s, const char *e, double *v)
{
	char buf[32], *end;

	if (e - s < 2 || e[-1] != '%' || (size_t)(e - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(e - s - 1));
	buf[e - s - 1] = '\0';
	*v = strtod(buf, &end);
	return *end || !buf[0] || *v < 0 || *v > 100 ? -1 : 0;
}

static int add_range(struct strace_filter *f, struct range r)
{
	if (f->ntimes == f->timescap) {
		struct range *v =
			strace_grow(f->times, &f->timescap, sizeof(*v), 4);

		if (!v)
			return -ENOMEM;
		f->times = v;
	}
	f->times[f->ntimes++] = r;
	return 0;
}

static int add_time(struct strace_filter *f, const char *s, char *err,
		    size_t len)
{
	const char *comma = strchr(s, ',');
	struct range r = {.lo = 0, .hi = UINT64_MAX};

	if (!strchr(s, '%')) {
		/* START,END in seconds */
		if (!comma)
			return bad(err, len,
				   "'%s': expected START,END in seconds "
				   "(either may be empty), or percentages",
				   s);
		if (comma > s && parse_secs(s, comma, &r.lo) < 0)
			return bad(err, len, "'%s': START is not a number of "
					     "seconds", s);
		if (comma[1] &&
		    parse_secs(comma + 1, comma + strlen(comma), &r.hi) < 0)
			return bad(err, len, "'%s': END is not a number of "
					     "seconds", s);
		if (r.lo > r.hi)
			return bad(err, len, "'%s': START is after END", s);
		return add_range(f, r);
	}
	/* A%-B%[,C%-D%...] or P%/N */
	for (const char *p = s; *p;) {
		const char *end = strchr(p, ',');
		const char *dash, *slash;
		int rc;
		if (!end)
			end = p + strlen(p);
		dash = memchr(p, '-', (size_t)(end - p));
		slash = memchr(p, '/', (size_t)(end - p));
		if (slash) {
			double pct;
			char *e2;
			long k = strtol(slash + 1, &e2, 10);
			if (e2 != end || k < 1 || parse_pct(p, slash, &pct) < 0 ||
			    pct <= 0 || pct * (double)k > 100.0 + 1e-9)
				return bad(err, len,
					   "'%s': expected P%%/N, the Nth slice "
					   "of P%% of the trace (P*N <= 100)",
					   s);
			r.plo = pct * (double)(k - 1);
			r.phi = pct * (double)k;
		} else if (dash) {
			if (parse_pct(p, dash, &r.plo) < 0 ||
			    parse_pct(dash + 1, end, &r.phi) < 0 ||
			    r.plo > r.phi)
				return bad(err, len,
					   "'%s': expected A%%-B%% with A <= B, "
					   "percentages of the trace",
					   s);
		} else {
			return bad(err, len,
				   "'%s': a percentage range is A%%-B%% or "
				   "P%%/N",
				   s);
		}
		r.pct = 1;
		rc = add_range(f, r);
		if (rc < 0)
			return rc;
		f->percent = 1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int add_ids(struct ids *ids, const char *s, char *err, size_t len)
{
	char *copy = strdup(s), *tok, *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);
		if (*end || !*tok || v > UINT32_MAX) {
			int rc = bad(err, len, "'%s': not a list of ids", s);
			free(copy);
			return rc;
		}
		if (ids->n == ids->cap) {
			/* two arrays, one count: each grows from the same
			 * cap, which moves once both have */
			size_t vc = ids->cap, hc = ids->cap;
			uint32_t *n = strace_grow(ids->v, &vc, sizeof(*n), 4);
			uint8_t *h;

			if (n)
				ids->v = n;
			if (!n || !(h = strace_grow(ids->hit, &hc, 1, 4))) {
				free(copy);
				return -ENOMEM;
			}
			ids->hit = h;
			ids->cap = vc;
		}
		ids->hit[ids->n] = 0;
		ids->v[ids->n++] = (uint32_t)v;
	}
	free(copy);
	return ids->n ? 0 : bad(err, len, "'%s': no id", s);
}

static int add_patterns(struct patterns *p, const char *s, char *err,
			size_t len)
{
	char *copy = strdup(s), *tok, *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (p->n == p->cap) {
			/* as add_ids(): two arrays, one count */
			size_t vc = p->cap, hc = p->cap;
			char **v = strace_grow(p->v, &vc, sizeof(*v), 4);
			uint8_t *h;

			if (v)
				p->v = v;
			if (!v || !(h = strace_grow(p->hit, &hc, 1, 4))) {
				free(copy);
				return -ENOMEM;
			}
			p->hit = h;
			p->cap = vc;
		}
		if (!(p->v[p->n] = strdup(tok))) {
			free(copy);
			return -ENOMEM;
		}
		p->hit[p->n] = 0;
		p->n++;
	}
	free(copy);
	return p->n ? 0 : bad(err, len, "'%s': no pattern", s);
}

int strace_filter_add(struct strace_filter *f, enum strace_filter_kind kind,
		      const char *value, char *err, size_t len)
{
	if (err && len)
		err[0] = '\0';
	switch (kind) {
	case STRACE_FILTER_TIME:
		return add_time(f, value, err, len);
	case STRACE_FILTER_TID:
		return add_ids(&f->tids, value, err, len);
	case STRACE_FILTER_PID:
		return add_ids(&f->pids, value, err, len);
	case STRACE_FILTER_COMM:
		return add_patterns(&f->comm, value, err, len);
	case STRACE_FILTER_SYM:
		return add_patterns(&f->sym, value, err, len);
	case STRACE_FILTER_NO_SYM:
		return add_patterns(&f->nosym, value, err, len);
	case STRACE_FILTER_DSO:
		return add_patterns(&f->dso, value, err, len);
	case STRACE_FILTER_CALLER:
		return add_patterns(&f->caller, value, err, len);
	}
	return bad(err, len, "%s: not a kind of filter", "?");
}

int strace_filter_needs_span(const struct strace_filter *f)
{
	return f->percent;
}

void strace_filter_set_span(struct strace_filter *f, uint64_t first,
			    uint64_t last)
{
	double span = last > first ? (double)(last - first) : 0.0;

	for (size_t i = 0; i < f->ntimes; i++) {
		struct range *r = &f->times[i];
		if (!r->pct)
			continue;
		r->lo = first + (uint64_t)(span * r->plo / 100.0);
		r->hi = r->phi >= 100.0 ? last
					: first + (uint64_t)(span * r->phi / 100.0);
	}
	f->span_set = 1;
}

int strace_filter_time_window(const struct strace_filter *f, uint64_t *from,
			      uint64_t *to)
{
	if (!f->ntimes)
		return 0;
	*from = UINT64_MAX;
	*to = 0;
	for (size_t i = 0; i < f->ntimes; i++) {
		if (f->times[i].lo < *from)
			*from = f->times[i].lo;
		if (f->times[i].hi > *to)
			*to = f->times[i].hi;
	}
	return 1;
}

int strace_filter_needs_stack(const struct strace_filter *f)
{
	return f->sym.n || f->nosym.n;
}

int strace_filter_empty(const struct strace_filter *f)
{
	return !f->ntimes && !f->tids.n && !f->pids.n && !f->comm.n &&
	       !f->sym.n && !f->nosym.n && !f->dso.n && !f->caller.n;
}

int strace_filter_needs_caller(const struct strace_filter *f)
{
	return f->caller.n != 0;
}

/* --- matching ---------------------------------------------------------- */

/* Whether s matches a pattern of p; each that does is marked hit (the
 * callers ask once per name, so all are tried). */
static int match_any(struct patterns *p, const char *s)
{
	const char *base = strrchr(s, '/');
	int any = 0;

	for (size_t i = 0; i < p->n; i++)
		if (!fnmatch(p->v[i], s, 0) ||
		    (base && !fnmatch(p->v[i], base + 1, 0))) {
			p->hit[i] = 1;
			any = 1;
		}
	return any;
}

/* Whether symbol entry e matches p by another of its names (the
 * producer's aliases: _IO_puts for puts), as written or without its
 * @VERSION (cfree@GLIBC_2.2.5 is cfree). */
static int match_aliases(struct strace_names *names, struct patterns *p,
			 const struct strace_name *e)
{
	const struct strace_name *al[STRACE_ALIASES_MAX];
	size_t n = names ? strace_names_aliases(names, e, al,
						 STRACE_ALIASES_MAX)
			 : 0;
	char buf[256];
	int any = 0;

	for (size_t i = 0; i < n && i < STRACE_ALIASES_MAX; i++) {
		const char *at = strchr(al[i]->str, '@');
		any |= match_any(p, al[i]->str);
		if (at && at > al[i]->str &&
		    (size_t)(at - al[i]->str) < sizeof(buf)) {
			memcpy(buf, al[i]->str, (size_t)(at - al[i]->str));
			buf[at - al[i]->str] = 0;
			any |= match_any(p, buf);
		}
	}
	return any;
}

/* Whether entry e matches p, by its name or an alias, decided once per
 * entry. */
static int verdict(struct verdicts *v, struct patterns *p,
		   struct strace_names *names, const struct strace_name *e)
{
	/* an inlined function's entry (strace/stack.h): the stack's own
	 * ids, above every names id, and no aliases */
	if (__builtin_expect(e->id >= STRACE_FRAME_INLINE_ID, 0))
		return match_any(p, e->str);
	/* doubled until the id fits, what it adds zeroed */
	while (e->id >= v->cap) {
		size_t old = v->cap;
		uint8_t *n = strace_grow(v->v, &v->cap, 1, 256);
		if (!n)
			return match_any(p, e->str) |
			       match_aliases(names, p, e);
		memset(n + old, 0, v->cap - old);
		v->v = n;
	}
	if (!v->v[e->id]) {
		int m = match_any(p, e->str) | match_aliases(names, p, e);
		v->v[e->id] = m ? 1 : 2;
	}
	return v->v[e->id] == 1;
}

static int has_id(struct ids *ids, uint32_t id)
{
	for (size_t i = 0; i < ids->n; i++)
		if (ids->v[i] == id) {
			ids->hit[i] = 1;
			return 1;
		}
	return 0;
}

static int in_time(struct strace_filter *f, uint64_t t)
{
	if (!f->ntimes)
		return 1;
	for (size_t i = 0; i < f->ntimes; i++)
		if (t >= f->times[i].lo && t <= f->times[i].hi)
			return f->times[i].hit = 1;
	return 0;
}

/* the thread conditions (tid, pid, comm), cached per thread */
static int thread_ok(struct strace_filter *f, uint32_t tid)
{
	uint64_t gen;
	int keep;

	if (!f->tids.n && !f->pids.n && !f->comm.n)
		return 1;
	gen = f->names ? strace_names_generation(f->names) : 0;
	if (f->tcache[tid & 255].tid == tid && f->tcache[tid & 255].keep &&
	    f->tcache[tid & 255].gen == gen)
		return f->tcache[tid & 255].keep == 1;
	keep = !f->tids.n || has_id(&f->tids, tid);
	if (keep && (f->pids.n || f->comm.n)) {
		const struct strace_name *t =
			f->names ? strace_names_thread(f->names, tid) : NULL;
		uint32_t pid = !t ? tid
				  : t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux
								: (uint32_t)t->key;
		if (f->pids.n && !has_id(&f->pids, pid))
			keep = 0;
		if (f->comm.n && !(t && match_any(&f->comm, t->str)))
			keep = 0;
	}
	f->tcache[tid & 255].tid = tid;
	f->tcache[tid & 255].keep = (uint8_t)(keep ? 1 : 2);
	f->tcache[tid & 255].gen = gen;
	return keep;
}

static int dso_ok(struct strace_filter *f, uint64_t addr)
{
	const struct strace_name *d;

	if (!f->dso.n)
		return 1;
	d = f->names ? strace_names_dso(f->names, addr) : NULL;
	return d && verdict(&f->vdso, &f->dso, NULL, d);
}

int strace_filter_event(struct strace_filter *f, const struct strace_event *e)
{
	const struct strace_event_info *in;

	if (e->type == STRACE_EV_LOST || e->type == STRACE_EV_PAD ||
	    (e->type >= STRACE_EV_PROCESS && e->type <= STRACE_EV_SYMBOL &&
	     e->type != STRACE_EV_THREAD_EXIT))
		return 1;
	if (!in_time(f, e->time) || !thread_ok(f, e->tid))
		return 0;
	if (f->dso.n) {
		in = strace_event_info(e->type);
		if (in && in->a_kind == STRACE_FK_ADDR && e->a)
			return dso_ok(f, e->a);
		if (in && in->b_kind == STRACE_FK_ADDR && e->b)
			return dso_ok(f, e->b);
		return 0;
	}
	return 1;
}

int strace_filter_frame(struct strace_filter *f, const struct strace_frame *fr)
{
	/* a frame is kept when it overlaps the time range */
	if (f->ntimes) {
		uint64_t end = fr->end ? fr->end : UINT64_MAX;
		int any = 0;
		for (size_t i = 0; i < f->ntimes && !any; i++)
			any = f->times[i].hit = fr->begin <= f->times[i].hi &&
						end >= f->times[i].lo;
		if (!any)
			return 0;
	}
	if (!thread_ok(f, fr->tid))
		return 0;
	if (f->dso.n && fr->kind != STRACE_FRAME_SYSCALL &&
	    fr->kind != STRACE_FRAME_SIGNAL)
		return dso_ok(f, fr->addr);
	return 1;
}

int strace_filter_caller(struct strace_filter *f,
			 const struct strace_frame *fr)
{
	return f->caller.n && fr->fn &&
	       verdict(&f->vcaller, &f->caller, f->names, fr->fn);
}

int strace_filter_in_scope(struct strace_filter *f,
			   const struct strace_frame *frames, size_t n,
			   uint32_t *depth)
{
	size_t first = n;

	if (depth)
		*depth = 0;
	if (!f->sym.n && !f->nosym.n)
		return 1;
	for (size_t i = 0; i < n; i++) {
		const struct strace_name *fn = frames[i].fn;
		if (!fn)
			continue;
		if (f->nosym.n && verdict(&f->vnosym, &f->nosym, f->names, fn))
			return 0;
		if (first == n && f->sym.n &&
		    verdict(&f->vsym, &f->sym, f->names, fn))
			first = i;
	}
	if (!f->sym.n)
		return 1;
	/* the innermost function gets its verdict too, matched or not
	 * (strace_filter_unmatched() tells what no function matched) */
	if (n && frames[n - 1].fn)
		(void)verdict(&f->vsym, &f->sym, f->names, frames[n - 1].fn);
	if (first == n)
		return 0;
	if (depth)
		*depth = frames[first].depth;
	return 1;
}

/* --- what matched nothing ------------------------------------------------ */

/* ns as seconds, without trailing zeros: "12.5" */
static void put_secs(char *p, size_t len, uint64_t ns)
{
	size_t n = (size_t)snprintf(p, len, "%" PRIu64 ".%09" PRIu64,
				    ns / 1000000000u, ns % 1000000000u);

	while (n > 1 && n < len && (p[n - 1] == '0' || p[n - 1] == '.'))
		if (p[--n] == '.') {
			p[n] = '\0';
			break;
		} else {
			p[n] = '\0';
		}
}

/* "START,END" in seconds, as --time takes it (an open end empty) */
static void put_range(char *p, size_t len, const struct range *r)
{
	char lo[32] = "", hi[32] = "";

	if (r->lo)
		put_secs(lo, sizeof(lo), r->lo);
	if (r->hi != UINT64_MAX)
		put_secs(hi, sizeof(hi), r->hi);
	snprintf(p, len, "%s,%s", lo, hi);
}

int strace_filter_unmatched(struct strace_filter *f, size_t i,
			    enum strace_filter_kind *kind, const char **value)
{
	static const enum strace_filter_kind pk[] = {
		STRACE_FILTER_COMM, STRACE_FILTER_SYM, STRACE_FILTER_NO_SYM,
		STRACE_FILTER_DSO, STRACE_FILTER_CALLER};
	struct patterns *ps[] = {&f->comm, &f->sym, &f->nosym, &f->dso,
				 &f->caller};
	struct ids *is[] = {&f->tids, &f->pids};

	for (size_t j = 0; j < f->ntimes; j++) {
		const struct range *r = &f->times[j];
		if (r->hit || i--)
			continue;
		*kind = STRACE_FILTER_TIME;
		if (r->pct)
			snprintf(f->idbuf, sizeof(f->idbuf), "%g%%-%g%%",
				 r->plo, r->phi);
		else
			put_range(f->idbuf, sizeof(f->idbuf), r);
		*value = f->idbuf;
		return 1;
	}

	for (size_t k = 0; k < 2; k++)
		for (size_t j = 0; j < is[k]->n; j++) {
			if (is[k]->hit[j] || i--)
				continue;
			*kind = k ? STRACE_FILTER_PID : STRACE_FILTER_TID;
			snprintf(f->idbuf, sizeof(f->idbuf), "%" PRIu32,
				 is[k]->v[j]);
			*value = f->idbuf;
			return 1;
		}
	for (size_t k = 0; k < 5; k++)
		for (size_t j = 0; j < ps[k]->n; j++) {
			if (ps[k]->hit[j] || i--)
				continue;
			*kind = pk[k];
			*value = ps[k]->v[j];
			return 1;
		}
	return 0;
}
