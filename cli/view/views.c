/* SPDX-License-Identifier: MIT */
/*
 * cli/view/views.c - the stack views of ptrace-read (views.h).
 *
 * All three are callbacks of one strace_stack. A frame's user[0] holds
 * the time its callees took (for self times); user[1] holds the view's
 * mark of the frame: for the tree, whether it is shown and its line is
 * still to print; for folded (and a format that reads folded stacks,
 * view_folded_each()), the hash of its stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "format.h"
#include "frames.h"
#include "view.h"
#include "views_int.h"

#define KEPT 2u    /* user[1]: the frame is shown */
#define PENDING 1u /* user[1]: the tree has not printed its line yet */

/* --- frames ------------------------------------------------------------- */

/* A frame's label: its symbol's names id (an inlined function's id, from
 * ID_INLINED, with --inline); ID_SYSCALL, with the names id +
 * 1 of the system call when the producer named it; ID_SIGNAL; else
 * ID_UNKNOWN with the address. */
static uint64_t label_id(struct view *v, const struct strace_frame *f)
{
	if (f->kind == STRACE_FRAME_SYSCALL) {
		const struct strace_name *e =
			v->names ? strace_names_syscall(v->names, f->addr)
				 : NULL;
		return ID_SYSCALL | (e ? (uint64_t)e->id + 1 : 0);
	}
	if (f->kind == STRACE_FRAME_SIGNAL)
		return ID_SIGNAL;
	return f->fn ? f->fn->id : (f->addr | ID_UNKNOWN);
}

/* Whether f is shown (the filter's time, thread and DSO, --sym /
 * --no-sym on its stack, and --depth); *rd its depth as shown. (--time's
 * window, --min-time and --caller are the stacks': view_new().) */
static int kept(struct view *v, const struct strace_frame *f, uint32_t *rd)
{
	uint32_t d0 = 0;

	if (v->checks) {
		if (v->flt && (!strace_filter_frame(v->flt, f) ||
			       !strace_filter_in_scope(v->flt, f - f->depth,
						       f->depth + 1, &d0)))
			return 0;
		if (v->o.depth && f->depth - d0 >= v->o.depth)
			return 0;
		v->shown = 1;
	}
	*rd = f->depth - d0;
	return 1;
}

/* the stacks' select (--caller) */
static int caller(void *flt, const struct strace_frame *f)
{
	return strace_filter_caller(flt, f);
}

/* --- tree ----------------------------------------------------------------- */

/* The tree's header, once, before its first line (out of the per-line
 * path) */
static __attribute__((noinline)) char *tree_header(struct view *v, char *p)
{
	static const char h[] = "# DURATION     TID     FUNCTION\n";
	static const char hs[] = "# DURATION     TID     FUNCTION [SOURCE]\n";
	const char *t = v->o.srcline ? hs : h;
	size_t n = v->o.srcline ? sizeof(hs) - 1 : sizeof(h) - 1;

	memcpy(p, t, n);
	v->header = 1;
	return p + n;
}

/* "   1.234 us [  1234] |   " then the caller's text */
static char *tree_prefix(struct view *v, char *p, int with_dur, uint64_t dur,
			 uint32_t tid, uint32_t depth)
{
	if (__builtin_expect(!v->header, 0))
		p = tree_header(v, p);
	if (with_dur) {
		p = put_duration(p, dur);
	} else {
		memset(p, ' ', 10);
		p += 10;
	}
	if (tid != v->tid_last || !v->tid_len) {
		/* " [  1234] | ", kept for the next lines of the thread */
		char num[24], *e = fmt_put_u64(num, tid), *q = v->tid_txt;
		size_t len = (size_t)(e - num);
		memcpy(q, " [", 2);
		q += 2;
		if (len < 6) {
			memset(q, ' ', 6 - len);
			q += 6 - len;
		}
		memcpy(q, num, len);
		memcpy(q + len, "] | ", 4);
		v->tid_len = (uint8_t)(q + len + 4 - v->tid_txt);
		v->tid_last = tid;
	}
	memcpy(p, v->tid_txt, sizeof(v->tid_txt));
	p += v->tid_len;
	if (depth > 512) /* keep a line within FMT_LINE_MAX */
		depth = 512;
	memset(p, ' ', 2 * depth);
	return p + 2 * depth;
}

/* --srcline (only then called): " /" "* FILE:LINE *" "/" of the frame's
 * function at p, as uftrace replay --srcline writes it, then the line's
 * end; no source when not known, nor for an inlined frame (the function
 * the address is in is the one it was inlined into, whose line would be
 * the wrong function's) */
static char *tree_src(struct view *v, char *p, const struct strace_frame *f)
{
	const char *file;
	unsigned line;
	size_t n;

	if (f->kind == STRACE_FRAME_SYSCALL ||
	    f->kind == STRACE_FRAME_SIGNAL ||
	    (f->flags & STRACE_FRAME_INLINED) ||
	    !v->o.srcline(v->o.srcline_arg, f->addr, &file, &line)) {
		*p++ = '\n';
		return p;
	}
	n = strlen(file);
	if (n > 512) /* within FMT_SRCLINE_ROOM */
		n = 512;
	memcpy(p, " /* ", 4);
	p = view_put_clean(p + 4, file, n, NULL);
	return p + sprintf(p, ":%u */\n", line);
}

static void tree_line(struct view *v, const struct strace_frame *f, int what)
{
	struct out *o = v->out;
	uint32_t rd = (uint32_t)(f->user[1] >> 8);
	char *p = o->p;

	if (what == 0) { /* an open frame with callees: "name() {" */
		p = tree_prefix(v, p, 0, 0, f->tid, rd);
		p = view_put_name_id(v, p, label_id(v, f));
		memcpy(p, "() {\n", 5);
		p += 5;
		if (__builtin_expect(v->o.srcline != NULL, 0))
			p = tree_src(v, p - 1, f);
	} else if (what == 1) { /* a leaf: "name();" */
		p = tree_prefix(v, p, 1, f->end - f->begin, f->tid, rd);
		p = view_put_name_id(v, p, label_id(v, f));
		memcpy(p, "();\n", 4);
		p += 4;
		if (__builtin_expect(v->o.srcline != NULL, 0))
			p = tree_src(v, p - 1, f);
	} else { /* "} /" "* name *" "/" */
		p = tree_prefix(v, p, 1, f->end - f->begin, f->tid, rd);
		memcpy(p, "} /* ", 5);
		p = view_put_name_id(v, p + 5, label_id(v, f));
		memcpy(p, " */\n", 4);
		p += 4;
	}
	if ((f->flags & STRACE_FRAME_LATE) && what != 2) {
		/* began before the trace: say so where it is first shown */
		p--;
		static const char r[] = " /* began before the trace */\n";
		memcpy(p, r, sizeof(r) - 1);
		p += sizeof(r) - 1;
	}
	o->p = p;
	if (out_room(o) < 0)
		v->err = -1;
}

static void tree_enter(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;
	struct strace_frame *m = (struct strace_frame *)(uintptr_t)f;
	uint32_t rd;

	if (!kept(v, f, &rd))
		return;
	/* the nearest caller shown (--dso, --sym may leave out those
	 * between) has a callee shown: its line opens a block */
	for (uint32_t i = 1; i <= f->depth; i++) {
		if (!(f[-(long)i].user[1] & KEPT))
			continue;
		if (f[-(long)i].user[1] & PENDING) {
			tree_line(v, f - i, 0);
			m[-(long)i].user[1] &= ~(uint64_t)PENDING;
		}
		break;
	}
	m->user[1] = KEPT | PENDING | (uint64_t)rd << 8;
}

static void tree_leave(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;

	if (f->user[1] & KEPT)
		tree_line(v, f, f->user[1] & PENDING ? 1 : 2);
}

/* --- report --------------------------------------------------------------- */

static uint64_t name_hash(const struct strace_name *fn)
{
	uint64_t h = 0xcbf29ce484222325ull ^ fn->key;

	for (uint32_t i = 0; i < fn->len; i++)
		h = (h ^ (unsigned char)fn->str[i]) * 0x100000001b3ull;
	return h;
}

/* The id of the first symbol entry with fn's start and name: a report's
 * row is a function, however often it was defined (a producer defines a
 * symbol again when it finds it shorter). fn's own id when memory runs
 * out. */
static uint64_t same_function(struct view *v, const struct strace_name *fn)
{
	size_t j, mask;

	if (fn->id < v->canoncap && v->canon[fn->id])
		return v->canon[fn->id] - 1;
	if (fn->id >= v->canoncap) {
		/* doubled until the id fits, what it adds zeroed */
		while (fn->id >= v->canoncap) {
			size_t old = v->canoncap;
			uint32_t *c = strace_grow(v->canon, &v->canoncap,
						  sizeof(*c), 1024);
			if (!c)
				return fn->id;
			memset(c + old, 0, (v->canoncap - old) * sizeof(*c));
			v->canon = c;
		}
	}
	if (2 * (v->nsame + 1) > v->samecap) {
		size_t cap = v->samecap ? 2 * v->samecap : 1024;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return fn->id;
		for (size_t i = 0; i < v->samecap; i++) {
			if (!v->same[i])
				continue;
			j = name_hash(strace_names_get(v->names, v->same[i] - 1)) &
			    (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = v->same[i];
		}
		free(v->same);
		v->same = t;
		v->samecap = cap;
	}
	mask = v->samecap - 1;
	for (j = name_hash(fn) & mask; v->same[j]; j = (j + 1) & mask) {
		const struct strace_name *e =
			strace_names_get(v->names, v->same[j] - 1);
		if (e->key == fn->key && e->len == fn->len &&
		    !memcmp(e->str, fn->str, fn->len)) {
			v->canon[fn->id] = v->same[j];
			return v->same[j] - 1;
		}
	}
	v->same[j] = fn->id + 1;
	v->nsame++;
	v->canon[fn->id] = fn->id + 1;
	return fn->id;
}

static uint64_t row_key(struct view *v, const struct strace_frame *f)
{
	const struct strace_name *d;

	switch (v->o.by) {
	case VIEW_BY_THREAD:
		return f->tid;
	case VIEW_BY_DSO:
		if (f->kind == STRACE_FRAME_SYSCALL)
			return ID_SYSCALL;
		if (f->kind == STRACE_FRAME_SIGNAL)
			return ID_SIGNAL;
		d = v->names ? strace_names_dso(v->names, f->addr) : NULL;
		return d ? d->id : ID_UNKNOWN;
	}
	if (f->fn && f->kind != STRACE_FRAME_SYSCALL &&
	    f->kind != STRACE_FRAME_SIGNAL && !(f->flags & STRACE_FRAME_INLINED))
		return same_function(v, f->fn);
	return label_id(v, f);
}

/* The index of key's row, made from f when new: rows[] only grows, so
 * an index stays good; map[] finds it by key (open addressing, at most
 * half full). Returns -1 when out of memory. */
static long row_of(struct view *v, uint64_t key, const struct strace_frame *f)
{
	size_t j;

	/* functions by their dense names id: an array, no probing */
	if (key < v->bycap && v->byid[key])
		return v->byid[key] - 1;
	if (v->o.by == VIEW_BY_FUNCTION && key < (1u << 24) &&
	    key >= v->bycap) {
		/* doubled until the key fits, what it adds zeroed */
		while (key >= v->bycap) {
			size_t old = v->bycap;
			uint32_t *b = strace_grow(v->byid, &v->bycap,
						  sizeof(*b), 1024);
			if (!b)
				goto nomem;
			memset(b + old, 0, (v->bycap - old) * sizeof(*b));
			v->byid = b;
		}
	}

	if (2 * (v->nrows + 1) > v->mapcap) {
		size_t cap = v->mapcap ? 2 * v->mapcap : 1024;
		uint32_t *m = calloc(cap, sizeof(*m));
		if (!m)
			goto nomem;
		for (size_t i = 0; i < v->nrows; i++) {
			j = (size_t)(v->rows[i].key * 0x9e3779b97f4a7c15ull >>
				     32) &
			    (cap - 1);
			while (m[j])
				j = (j + 1) & (cap - 1);
			m[j] = (uint32_t)i + 1;
		}
		free(v->map);
		v->map = m;
		v->mapcap = cap;
	}
	j = (size_t)(key * 0x9e3779b97f4a7c15ull >> 32) & (v->mapcap - 1);
	while (v->map[j]) {
		if (v->rows[v->map[j] - 1].key == key)
			return v->map[j] - 1;
		j = (j + 1) & (v->mapcap - 1);
	}
	if (v->nrows == v->rcap) {
		struct row *n = strace_grow(v->rows, &v->rcap, sizeof(*n), 512);
		if (!n)
			goto nomem;
		v->rows = n;
	}
	struct row *r = &v->rows[v->nrows];
	memset(r, 0, sizeof(*r));
	r->key = key;
	r->fn = f->fn;
	r->addr = f->addr;
	r->kind = f->kind;
	r->tid = f->tid;
	v->map[j] = (uint32_t)v->nrows + 1;
	if (v->o.by == VIEW_BY_FUNCTION && key < v->bycap)
		v->byid[key] = (uint32_t)v->nrows + 1;
	return (long)v->nrows++;
nomem:
	v->err = -ENOMEM;
	return -1;
}

/* in a frame's user[1]: the row's outermost open frame in its thread */
#define ROW_OUTER (1ull << 63)

/* The slot of key in v->tsums (its own, or the empty one to take). */
static struct tsum *tsum_slot(struct view *v, uint64_t key)
{
	size_t mask = v->tsumcap - 1;
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 32) & mask;

	while (v->tsums[i].key && v->tsums[i].key != key)
		i = (i + 1) & mask;
	return &v->tsums[i];
}

/* The entry of key in v->tsums, made (sum 0) if it has none; NULL: no
 * memory. */
static struct tsum *tsum_get(struct view *v, uint64_t key)
{
	struct tsum *s;

	key++; /* (tid 0 of row 0: not the empty key) */
	if (2 * (v->ntsums + 1) > v->tsumcap) {
		struct tsum *old = v->tsums;
		size_t ocap = v->tsumcap;
		v->tsumcap = ocap ? 2 * ocap : 256;
		v->tsums = calloc(v->tsumcap, sizeof(*v->tsums));
		if (!v->tsums) {
			v->tsums = old;
			v->tsumcap = ocap;
			v->err = -ENOMEM;
			return NULL;
		}
		for (size_t i = 0; i < ocap; i++)
			if (old[i].key)
				*tsum_slot(v, old[i].key) = old[i];
		free(old);
	}
	s = tsum_slot(v, key);
	if (!s->key) {
		s->key = key;
		s->sum = 0;
		v->ntsums++;
	}
	return s;
}

/* Self times: a frame left is callee time of its caller; an outermost
 * one's, of the frame found late around it, if one comes
 * (late_callees()). */
static inline void callee_time(struct view *v, const struct strace_frame *f,
			       uint64_t dur)
{
	struct tsum *s;

	if (f->depth)
		((struct strace_frame *)(uintptr_t)f)[-1].user[0] += dur;
	else if ((s = tsum_get(v, f->tid)) != NULL)
		s->sum += dur;
}

/* A frame found late (STRACE_FRAME_LATE) began at its thread's first
 * event: the thread's outermost frames left since the last such one
 * were its callees. */
static inline void late_callees(struct view *v, const struct strace_frame *f)
{
	struct tsum *s;

	if (__builtin_expect(f->flags & STRACE_FRAME_LATE, 0) &&
	    (s = tsum_get(v, f->tid)) != NULL) {
		((struct strace_frame *)(uintptr_t)f)->user[0] += s->sum;
		s->sum = 0;
	}
}

static void report_enter(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;
	struct strace_frame *m = (struct strace_frame *)(uintptr_t)f;
	uint32_t rd;
	long i;

	late_callees(v, f);
	if (!kept(v, f, &rd))
		return;
	i = row_of(v, row_key(v, f), f);
	if (i < 0)
		return;
	/* the row's total counts a thread's outermost frame of it (a
	 * recursion's inner frames are inside it); another thread's frame
	 * of it may be open at once */
	m->user[1] = (uint64_t)i + 1;
	if (v->rows[i].active++)
		for (uint32_t k = 1; k <= f->depth; k++)
			if ((f[-(long)k].user[1] & ~ROW_OUTER) ==
			    (uint64_t)i + 1)
				return;
	m->user[1] |= ROW_OUTER;
}

/* Row r's total counted on thread tid: its own fields, after the last
 * thread's is put aside (a row changes threads seldom). NULL: no memory. */
static uint64_t *row_sum(struct view *v, struct row *r, uint32_t tid)
{
	uint64_t row = (uint64_t)(r - v->rows) + 1;
	struct tsum *s;

	if (r->sum_tid == tid)
		return &r->sum;
	if (r->sum) {
		if (!(s = tsum_get(v, row << 32 | r->sum_tid)))
			return NULL;
		s->sum = r->sum;
	}
	if (!(s = tsum_get(v, row << 32 | tid)))
		return NULL;
	r->sum = s->sum;
	r->sum_tid = tid;
	return &r->sum;
}

static void report_leave(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;
	uint64_t dur = f->end - f->begin;
	struct row *r;

	callee_time(v, f, dur);
	if (!f->user[1])
		return;
	r = &v->rows[(f->user[1] & ~ROW_OUTER) - 1];
	r->calls++;
	r->active--;
	r->self += dur > f->user[0] ? dur - f->user[0] : 0;
	if (dur > r->max)
		r->max = dur;
	if (f->user[1] & ROW_OUTER) {
		uint64_t *sum = row_sum(v, r, f->tid);
		if (!sum)
			return;
		if (__builtin_expect(f->flags & STRACE_FRAME_LATE, 0)) {
			/* begun at the thread's first event, it holds the
			 * frames of the row the thread counted before (a
			 * recursion found at the attach, one split by a
			 * gap): the row's time on the thread is its own */
			r->total += dur > *sum ? dur - *sum : 0;
			*sum = dur > *sum ? dur : *sum;
		} else {
			r->total += dur;
			*sum += dur;
		}
	}
}

char *view_put_duration(char *p, uint64_t ns)
{
	return put_duration(p, ns);
}

/* --- folded --------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t id)
{
	h ^= id + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull | 1; /* never 0: 0 is "not kept" */
}

static void folded_enter(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;
	struct strace_frame *m = (struct strace_frame *)(uintptr_t)f;
	uint32_t rd;

	late_callees(v, f);
	if (!kept(v, f, &rd))
		return;
	/* the stack's hash: the caller's when shown, else a fresh one */
	m->user[1] = mix(rd && f->depth ? f[-1].user[1] : 0, label_id(v, f));
}

/* The path of f: the ids of the shown frames from the outermost. */
static int path_ids(struct view *v, const struct strace_frame *f, size_t *n)
{
	size_t k = 0;

	if (v->idscap < (size_t)f->depth + 1) {
		uint64_t *ids = realloc(v->ids, ((size_t)f->depth + 1) * 8);
		if (!ids)
			return -ENOMEM;
		v->ids = ids;
		v->idscap = (size_t)f->depth + 1;
	}
	for (const struct strace_frame *x = f - f->depth; x <= f; x++)
		if (x->user[1])
			v->ids[k++] = label_id(v, x);
	*n = k;
	return 0;
}

static void folded_add(struct view *v, const struct strace_frame *f,
		       uint64_t weight)
{
	uint64_t h = f->user[1];
	size_t j, n;

	if (2 * (v->npaths + 1) > v->pcap) {
		size_t cap = v->pcap ? 2 * v->pcap : 4096;
		struct path *np = calloc(cap, sizeof(*np));
		if (!np) {
			v->err = -ENOMEM;
			return;
		}
		for (size_t i = 0; i < v->pcap; i++) {
			if (!v->paths[i].hash)
				continue;
			j = (size_t)(v->paths[i].hash >> 17) & (cap - 1);
			while (np[j].hash)
				j = (j + 1) & (cap - 1);
			np[j] = v->paths[i];
		}
		free(v->paths);
		v->paths = np;
		v->pcap = cap;
	}
	j = (size_t)(h >> 17) & (v->pcap - 1);
	while (v->paths[j].hash && v->paths[j].hash != h)
		j = (j + 1) & (v->pcap - 1);
	if (v->paths[j].hash) {
		v->paths[j].weight += weight;
		return;
	}
	if (path_ids(v, f, &n) < 0) {
		v->err = -ENOMEM;
		return;
	}
	/* doubled until the n ids fit */
	while (v->npool + n > v->poolcap) {
		uint64_t *pool = strace_grow(v->pool, &v->poolcap,
					     sizeof(*pool), 65536);
		if (!pool) {
			v->err = -ENOMEM;
			return;
		}
		v->pool = pool;
	}
	memcpy(v->pool + v->npool, v->ids, n * sizeof(*v->ids));
	v->paths[j].hash = h;
	v->paths[j].weight = weight;
	v->paths[j].off = (uint32_t)v->npool;
	v->paths[j].len = (uint32_t)n;
	v->npool += n;
	v->npaths++;
}

static void folded_leave(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;
	uint64_t dur = f->end - f->begin;

	callee_time(v, f, dur);
	if (!f->user[1])
		return;
	if (v->o.weight_calls)
		folded_add(v, f, 1);
	else if (dur > f->user[0])
		folded_add(v, f, dur - f->user[0]);
}

int view_folded_each(struct view *v,
		     int (*fn)(void *arg, const uint64_t *ids, size_t n,
			       uint64_t weight),
		     void *arg)
{
	int rc;

	for (size_t i = 0; i < v->pcap; i++) {
		const struct path *pa = &v->paths[i];
		if (pa->hash && pa->weight &&
		    (rc = fn(arg, v->pool + pa->off, pa->len, pa->weight)))
			return rc;
	}
	return 0;
}

static int folded_print(struct view *v)
{
	struct out *o = v->out;

	for (size_t i = 0; i < v->pcap; i++) {
		const struct path *pa = &v->paths[i];
		char *p;
		if (!pa->hash || !pa->weight)
			continue;
		p = o->p;
		for (uint32_t k = 0; k < pa->len; k++) {
			if (k)
				*p++ = ';';
			p = view_put_name_id(v, p, v->pool[pa->off + k]);
			if (p - o->p > (long)(FMT_LINE_MAX - 2048)) {
				/* too deep for one line: written in parts */
				o->p = p;
				if (out_flush(o) < 0)
					return -1;
				p = o->p;
			}
		}
		*p++ = ' ';
		p = fmt_put_u64(p, pa->weight);
		*p++ = '\n';
		o->p = p;
		if (out_room(o) < 0)
			return -1;
	}
	return 0;
}

/* --- viewer formats (view_format) ------------------------------------------ */

/* The formats' enter and leave behind the filters (without any, the
 * stacks call the format's own) */
static void format_enter(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;
	uint32_t rd;

	if (!kept(v, f, &rd))
		return;
	((struct strace_frame *)(uintptr_t)f)->user[1] = KEPT;
	v->fmt->enter(v->state, f);
}

static void format_leave(void *arg, const struct strace_frame *f)
{
	struct view *v = arg;

	if (f->user[1] & KEPT)
		v->fmt->leave(v->state, f);
}

void *view_state(const struct view *v)
{
	return v->state;
}

void view_set_state(struct view *v, void *state)
{
	v->state = state;
}

const struct view_opts *view_opts(const struct view *v)
{
	return &v->o;
}

struct strace_names *view_names(const struct view *v)
{
	return v->names;
}

struct out *view_out(const struct view *v)
{
	return v->out;
}

void view_set_event_types(struct view *v, uint64_t types)
{
	v->event_types = types;
}

void view_fail(struct view *v, int err)
{
	if (!v->err)
		v->err = err;
}

char *view_put_name(struct view *v, char *p, const struct strace_frame *f)
{
	return view_put_name_id(v, p, label_id(v, f));
}

uint64_t view_name_id(struct view *v, const struct strace_frame *f)
{
	return label_id(v, f);
}

/* --- the view -------------------------------------------------------------- */

int view_new(const struct view_opts *o, struct strace_names *names,
	     struct strace_filter *flt, struct out *out, struct view **out_v)
{
	struct view *v = calloc(1, sizeof(*v));
	struct strace_stack_cb cb = {NULL, NULL, v};
	struct strace_stack_opts so = {.size = sizeof(so),
				       .machine = o->machine,
				       .inlines = o->inlines,
				       .inlines_arg = o->inlines_arg};
	uint64_t to;
	int rc;

	if (!v)
		return -ENOMEM;
	v->o = *o;
	v->names = names;
	v->flt = flt;
	v->checks = flt || o->depth || o->min_time;
	v->out = out;
	v->clean = o->kind == VIEW_TREE || o->kind == VIEW_REPORT ||
		   o->kind == VIEW_FOLDED || o->kind == VIEW_SVG;
	switch (o->kind) {
	case VIEW_TREE:
		cb.enter = tree_enter;
		cb.leave = tree_leave;
		break;
	case VIEW_REPORT:
		cb.enter = report_enter;
		cb.leave = report_leave;
		break;
	case VIEW_FOLDED:
		cb.enter = folded_enter;
		cb.leave = folded_leave;
		break;
	default:
		if (o->kind == VIEW_SVG)
			v->fmt = o->flame == VIEW_FLAME_TIME ? &view_svg_time
							     : &view_svg;
		else
			v->fmt = o->kind == VIEW_CHROME ? &view_chrome
				 : o->kind == VIEW_FXT  ? &view_fxt
							: &view_uftrace;
		if (v->fmt->open(v) < 0) {
			/* what the format made before it failed */
			v->fmt->close(v);
			free(v);
			return -1;
		}
		if (!v->fmt->enter) { /* the format reads the folded stacks */
			cb.enter = folded_enter;
			cb.leave = folded_leave;
			break;
		}
		/* (behind the filters and --depth, when given) */
		if (flt || o->depth || o->min_time) {
			cb.enter = format_enter;
			cb.leave = format_leave;
		} else {
			cb.enter = v->fmt->enter;
			cb.leave = v->fmt->leave;
			cb.arg = v->state;
		}
	}
	/* --time: the frames that overlap it, clipped to it; --min-time;
	 * --caller: the frames of such functions and their callers */
	if (flt && strace_filter_time_window(flt, &so.from, &to))
		so.to = to == UINT64_MAX ? 0 : to;
	so.min_time = o->min_time;
	if (flt && strace_filter_needs_caller(flt)) {
		so.select = caller;
		so.select_arg = flt;
	}
	rc = strace_stack_new(names, &so, &cb, &v->stack);
	if (rc < 0) {
		if (v->fmt)
			v->fmt->close(v);
		free(v);
		return rc;
	}
	*out_v = v;
	return 0;
}

int view_feed(struct view *v, const struct strace_event *ev, size_t n,
	      uint64_t seen)
{
	int rc;

	if (v->fmt && v->fmt->event &&
	    (!v->event_types || (seen & v->event_types))) {
		/* a format's instants sit among the frames: the stacks take
		 * the events up to each one the format wants, then it */
		uint64_t types = v->event_types;
		size_t from = 0, i = 0;
		for (;;) {
			if (types) /* to the next event it wants */
				while (i < n &&
				       !(types & VIEW_TYPE_BIT(ev[i].type)))
					i++;
			if (i > from) {
				rc = strace_stack_feed(v->stack, ev + from,
						       i - from);
				if (rc < 0)
					return rc;
				from = i;
			}
			if (i == n || v->err)
				break;
			v->fmt->event(v, &ev[i++]);
		}
		return v->err;
	}
	rc = strace_stack_feed(v->stack, ev, n);
	return rc < 0 ? rc : v->err;
}

int view_finish(struct view *v)
{
	strace_stack_end(v->stack);
	if (v->err)
		return v->err;
	if (v->o.kind == VIEW_REPORT && v->o.rows_only)
		return view_report_keep(v);
	if (v->o.kind == VIEW_REPORT)
		return view_report_print(v);
	if (v->o.kind == VIEW_FOLDED)
		return folded_print(v);
	if (v->fmt)
		return v->fmt->finish(v) < 0 || v->err ? -1 : 0;
	return 0;
}

int view_frames_shown(const struct view *v)
{
	return v->shown;
}

void view_stack_stats(const struct view *v, struct strace_stack_stats *st)
{
	strace_stack_stats(v->stack, st);
}

void view_free(struct view *v)
{
	if (!v)
		return;
	if (v->fmt && v->fmt->close)
		v->fmt->close(v);
	strace_stack_free(v->stack);
	free(v->rows);
	free(v->tsums);
	free(v->map);
	free(v->byid);
	fmt_names_fini(&v->dn);
	free(v->canon);
	free(v->same);
	free(v->paths);
	free(v->pool);
	free(v->ids);
	free(v->vrows);
	free(v->vnames);
	free(v);
}
