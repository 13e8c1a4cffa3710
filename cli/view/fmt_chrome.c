/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_chrome.c - ptrace-read -f chrome: the Chrome Trace Event format
 * (JSON), which Perfetto UI, chrome://tracing and speedscope load
 * (docs/viewing.md).
 *
 * A JSON array written as it goes: every frame is a complete event
 * ("ph":"X": name, ts and dur in microseconds with three decimals
 * (nanoseconds), pid and tid, and the category "KIND[,gap][,unwound]
 * [,DSO],0xADDR": the frame's kind, gap / unwound when so, its DSO's
 * path and its address) written when it is left; no args, which
 * speedscope would add to every frame's name (Perfetto shows the
 * category). Each thread gets process_name and thread_name metadata
 * before its first event; gaps, errors and losses are instant events
 * ("ph":"i").
 *
 * Times: readers sort the slices by time and nest them by it, and add dur
 * to ts in floating point: a callee that ends when its caller does (in
 * nanoseconds) may end a hair after it, and a frame that begins when the
 * one before ends may begin inside it (speedscope then drops frames as
 * misnested; Perfetto drops a complete event that encloses one before it
 * at an equal time). So the begins and ends of a thread are written at
 * increasing times, in the order the frames were entered and left: one at
 * the time of the one before it (frames of no duration, times a trace did
 * not tell apart) goes 1 ns after it, and the times say the order of the
 * stack. The exception: a root (or a seed), entered after the frames it
 * encloses (docs/stacks.md), keeps its begin, but after the frames that
 * had ended by then and were written later. -f fxt keeps
 * the times as they are (Perfetto keeps the file order of equal times
 * there, and -f fxt writes begins and ends).
 *
 * The closing bracket is written when the input ends, also when a
 * --follow is interrupted; an output cut short without it is still read
 * by those tools (the format allows it). Memory: one entry per thread.
 */
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "format.h"
#include "frames.h"
#include "view.h"

#define NMOVED 64 /* ends moved remembered per thread */
#define DCACHE 1024 /* frame address -> DSO, direct-mapped */
#define LCACHE 1024 /* names of frames without a symbol, direct-mapped */

/* A name's JSON text, made once (by the names' dense ids). */
struct piece {
	char *s; /* NULL: not made yet */
	uint32_t len;
};

struct cthr {
	uint32_t tid, pid;
	uint64_t last; /* the last begin or end written, as written */
	char ids[40];  /* ',"pid":P,"tid":T' */
	uint8_t idslen;
	struct {
		uint64_t t, w; /* the last ends written later than they were */
	} moved[NMOVED];
	unsigned nmoved;
};

struct chrome {
	struct view *v;
	struct out *out;              /* view_out(), kept */
	struct strace_names *nm;      /* view_names(), kept */
	int first;        /* no event written yet: no comma before it */
	struct cthr *thr; /* threads whose metadata is written (by tid) */
	size_t nthr, cap;
	size_t cur;       /* the last one, when cur_valid */
	int cur_valid;
	/* what frames write again and again, made once: a function's
	 * escaped name, ',"dso":"PATH"' (by id), and the DSO of a frame's
	 * address (for the names' generation dgen) */
	struct piece *names, *dsos;
	size_t nnames, ndsos;
	/* the escaped names of frames without a symbol, by view_name_id() */
	struct {
		uint64_t id;
		struct piece pc;
	} lcache[LCACHE];
	struct {
		uint64_t addr;
		const struct strace_name *d;
	} dcache[DCACHE];
	uint64_t dgen;
	/* a raw name, then its escaped copy (6 bytes a byte at most) */
	char scratch[7 * FMT_NAME_MAX + 128];
};

/* Piece id of *v (grown to hold it), made from src[0..len) when new;
 * NULL without memory. */
static const struct piece *piece_of(struct piece **v, size_t *n, uint32_t id,
				    const char *src, size_t len)
{
	struct piece *pc;

	if (id >= *n) {
		/* doubled until the id fits, what it adds zeroed */
		while (id >= *n) {
			size_t old = *n;
			pc = strace_grow(*v, n, sizeof(*pc), 256);
			if (!pc)
				return NULL;
			memset(pc + old, 0, (*n - old) * sizeof(*pc));
			*v = pc;
		}
	}
	pc = &(*v)[id];
	if (!pc->s) {
		pc->s = malloc(len ? len : 1);
		if (!pc->s)
			return NULL;
		memcpy(pc->s, src, len);
		pc->len = (uint32_t)len;
	}
	return pc;
}

static void pieces_free(struct piece *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].s);
	free(v);
}

static int chrome_open(struct view *v)
{
	struct chrome *c = calloc(1, sizeof(*c));
	struct out *o = view_out(v);

	if (!c) {
		view_fail(v, -1);
		return -1;
	}
	c->first = 1;
	c->v = v;
	c->out = o;
	c->nm = view_names(v);
	view_set_state(v, c);
	/* the events chrome_event() may write an instant for */
	view_set_event_types(v, 1ull << STRACE_EV_TRACE_BEGIN |
					1ull << STRACE_EV_OVERFLOW |
					1ull << STRACE_EV_ERROR |
					1ull << STRACE_EV_LOST |
					VIEW_TYPE_BIT(STRACE_EV_PTWRITE));
	memcpy(o->p, "[", 1);
	o->p += 1;
	return 0;
}

/* ",\n" between events */
static char *sep(struct chrome *c, char *p)
{
	if (c->first) {
		c->first = 0;
		*p++ = '\n';
		return p;
	}
	memcpy(p, ",\n", 2);
	return p + 2;
}

/* "123.456": microseconds with the nanoseconds as fractions */
static char *put_us(char *p, uint64_t ns)
{
	uint32_t f = (uint32_t)(ns % 1000u), h, t;

	p = fmt_put_u64(p, ns / 1000u);
	h = f * 41 >> 12; /* f / 100, for f < 1000 */
	f -= h * 100;
	t = f * 103 >> 10; /* f / 10, for f < 100 */
	p[0] = '.';
	p[1] = (char)('0' + h);
	p[2] = (char)('0' + t);
	p[3] = (char)('0' + f - t * 10);
	return p + 4;
}

/* a JSON string of s[0..len), quotes included */
static char *put_str(char *p, const char *s, size_t len)
{
	if (len > FMT_NAME_MAX)
		len = FMT_NAME_MAX;
	*p++ = '"';
	p = fmt_put_json_str(p, s, len);
	*p++ = '"';
	return p;
}

/* ,"pid":P,"tid":T */
static char *put_ids(char *p, uint32_t pid, uint32_t tid)
{
	memcpy(p, ",\"pid\":", 7);
	p = fmt_put_u64(p + 7, pid);
	memcpy(p, ",\"tid\":", 7);
	return fmt_put_u64(p + 7, tid);
}

/* {"name":"WHAT","ph":"M","pid":P,"tid":T,"args":{"name":NAME}} */
static char *put_meta(struct chrome *c, char *p, const char *what,
		      uint32_t pid, uint32_t tid, const struct strace_name *n)
{
	p = sep(c, p);
	memcpy(p, "{\"name\":", 8);
	p = put_str(p + 8, what, strlen(what));
	memcpy(p, ",\"ph\":\"M\"", 9);
	p = put_ids(p + 9, pid, tid);
	memcpy(p, ",\"args\":{\"name\":", 16);
	p = put_str(p + 16, n->str, n->len);
	memcpy(p, "}}", 2);
	return p + 2;
}

/* thread_of() of a thread other than the last one */
static __attribute__((noinline)) struct cthr *
thread_slow(struct view *v, struct chrome *c, uint32_t tid)
{
	struct strace_names *nm;
	const struct strace_name *t, *pr;
	struct out *o;
	size_t lo = 0, hi = c->nthr;
	uint32_t pid;
	char *p;

	nm = c->nm;
	o = c->out;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (c->thr[m].tid < tid)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo < c->nthr && c->thr[lo].tid == tid) {
		c->cur = lo;
		c->cur_valid = 1;
		return &c->thr[lo];
	}
	if (c->nthr == c->cap) {
		struct cthr *k = strace_grow(c->thr, &c->cap, sizeof(*k), 64);
		if (!k) {
			view_fail(v, -1);
			return NULL;
		}
		c->thr = k;
	}
	t = nm ? strace_names_thread(nm, tid) : NULL;
	pid = !t ? tid : t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux
						     : (uint32_t)t->key;
	memmove(c->thr + lo + 1, c->thr + lo,
		(c->nthr - lo) * sizeof(*c->thr));
	c->thr[lo] = (struct cthr){.tid = tid, .pid = pid};
	c->thr[lo].idslen =
		(uint8_t)(put_ids(c->thr[lo].ids, pid, tid) - c->thr[lo].ids);
	c->nthr++;
	c->cur = lo;
	c->cur_valid = 1;
	pr = nm ? strace_names_process(nm, pid) : NULL;
	p = o->p;
	if (pr || (t && tid == pid))
		p = put_meta(c, p, "process_name", pid, pid, pr ? pr : t);
	if (t)
		p = put_meta(c, p, "thread_name", pid, tid, t);
	o->p = p;
	if (out_room(o) < 0)
		view_fail(v, -1);
	return &c->thr[lo];
}

/* A thread's entry (added, with its metadata written, when it is new),
 * or NULL without memory. Valid until the next call. */
static inline struct cthr *thread_of(struct view *v, struct chrome *c,
				     uint32_t tid)
{
	if (c->cur_valid && c->thr[c->cur].tid == tid)
		return &c->thr[c->cur];
	return thread_slow(v, c, tid);
}

/* Gaps, errors and losses: instant events on their thread. */
static void chrome_event(struct view *v, const struct strace_event *e)
{
	struct chrome *c = view_state(v);
	struct out *o = view_out(v);
	const char *what = NULL, *cat = "gap";
	char *p;

	switch (e->type) {
	case STRACE_EV_PTWRITE:
		what = cat = "ptwrite";
		break;
	case STRACE_EV_OVERFLOW:
		what = "overflow";
		break;
	case STRACE_EV_ERROR:
		what = strace_error_name(e->flags);
		if (!what)
			what = "error";
		break;
	case STRACE_EV_LOST:
		what = "lost";
		break;
	case STRACE_EV_TRACE_BEGIN:
		if (e->b == STRACE_REASON_SYNC || e->b == STRACE_REASON_OVERFLOW ||
		    e->b == STRACE_REASON_ERROR || e->b == STRACE_REASON_LOST)
			what = "trace resumes";
		break;
	}
	if (!what)
		return;
	const struct cthr *th = thread_of(v, c, e->tid);
	if (!th)
		return;
	uint32_t pid = th->pid;
	p = sep(c, o->p);
	memcpy(p, "{\"name\":", 8);
	p = put_str(p + 8, what, strlen(what));
	memcpy(p, ",\"cat\":", 7);
	p = put_str(p + 7, cat, strlen(cat));
	memcpy(p, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":", 23);
	p = put_us(p + 23, e->time);
	p = put_ids(p, pid, e->tid);
	memcpy(p, ",\"args\":{\"", 10);
	p += 10;
	const struct strace_event_info *in = strace_event_info(e->type);
	p = fmt_put_json_str(p, in->a_name, strlen(in->a_name));
	memcpy(p, "\":\"", 3);
	p = fmt_put_hex(p + 3, e->a);
	if (e->type == STRACE_EV_LOST) {
		memcpy(p, "\",\"count\":", 10);
		p = fmt_put_u64(p + 10, e->a);
		memcpy(p, "}}", 2);
		p += 2;
	} else if (e->type == STRACE_EV_PTWRITE) {
		memcpy(p, "\",\"payload\":\"", 13);
		p = fmt_put_hex(p + 13, e->b);
		memcpy(p, "\"}}", 3);
		p += 3;
	} else {
		memcpy(p, "\"}}", 3);
		p += 3;
	}
	o->p = p;
	if (out_room(o) < 0)
		view_fail(v, -1);
}

#define CAT(s) {s, sizeof(s) - 1}
static const struct {
	const char *s;
	uint8_t len;
} kind_cat[] = {CAT("call"), CAT("entry"),   CAT("root"),
		CAT("seed"), CAT("syscall"), CAT("signal")};
#undef CAT

/* The time to write for a begin or end at t on th: after the one before
 * it, by 1 ns when t is not (see the top). */
static inline uint64_t next_time(struct cthr *th, uint64_t t)
{
	th->last = t > th->last ? t : th->last + 1;
	return th->last;
}

/* user[0] of a frame: its begin as written, plus 1 (0: not entered
 * here) */
static void chrome_enter(void *state, const struct strace_frame *f)
{
	struct chrome *c = state;
	struct view *v = c->v;
	struct cthr *th = thread_of(v, c, f->tid);
	uint64_t b = f->begin;

	if (!th)
		return;
	/* a root or a seed, entered after what it encloses, keeps its begin,
	 * after the frames that ended by then (those moved later) */
	if (f->kind != STRACE_FRAME_ROOT && f->kind != STRACE_FRAME_SEED) {
		b = next_time(th, b);
	} else {
		unsigned n = th->nmoved < NMOVED ? th->nmoved : NMOVED;
		for (unsigned i = 0; i < n; i++) {
			unsigned k = (th->nmoved - 1 - i) % NMOVED;
			if (th->moved[k].t <= f->begin) {
				if (th->moved[k].w >= b)
					b = th->moved[k].w + 1;
				break;
			}
		}
		if (b > th->last)
			th->last = b;
	}
	((struct strace_frame *)(uintptr_t)f)->user[0] = b + 1;
}

/* p += f's name, JSON-escaped (a function's from its piece). */
static char *put_frame_name(struct view *v, struct chrome *c, char *p,
			    const struct strace_frame *f)
{
	int fn = f->fn && f->kind != STRACE_FRAME_SYSCALL &&
		 f->kind != STRACE_FRAME_SIGNAL &&
		 !(f->flags & STRACE_FRAME_INLINED); /* (--inline: labels) */
	const struct piece *pc = NULL;
	char *raw = c->scratch, *end, *esc;

	if (fn && f->fn->id < c->nnames && c->names[f->fn->id].s) {
		pc = &c->names[f->fn->id];
	} else if (!fn) {
		/* an address's label, "[syscall]", "[signal]": cached */
		uint64_t id = view_name_id(v, f);
		size_t k = (size_t)(id * 0x9e3779b97f4a7c15ull >> 54) % LCACHE;
		struct piece *lp = &c->lcache[k].pc;
		if (!lp->s || c->lcache[k].id != id) {
			char *s;
			end = view_put_name(v, raw, f);
			esc = end;
			end = fmt_put_json_str(esc, raw, (size_t)(end - raw));
			s = realloc(lp->s, (size_t)(end - esc));
			if (!s) { /* no memory for it: written anyway */
				memcpy(p, esc, (size_t)(end - esc));
				return p + (end - esc);
			}
			memcpy(s, esc, (size_t)(end - esc));
			lp->s = s;
			lp->len = (uint32_t)(end - esc);
			c->lcache[k].id = id;
		}
		pc = lp;
	} else {
		end = view_put_name(v, raw, f);
		esc = end;
		end = fmt_put_json_str(esc, raw, (size_t)(end - raw));
		pc = piece_of(&c->names, &c->nnames, f->fn->id, esc,
			      (size_t)(end - esc));
		if (!pc) { /* no memory for it: written anyway */
			memcpy(p, esc, (size_t)(end - esc));
			return p + (end - esc);
		}
	}
	memcpy(p, pc->s, pc->len);
	return p + pc->len;
}

/* p += ',PATH' (JSON-escaped, in the category) for the DSO of addr, if
 * any. */
static char *put_dso(struct chrome *c, char *p, uint64_t addr)
{
	struct strace_names *nm = c->nm;
	size_t k = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 54) % DCACHE;
	const struct strace_name *d;
	const struct piece *pc;
	char *end;

	if (c->dgen != strace_names_generation(nm)) {
		memset(c->dcache, 0, sizeof(c->dcache));
		c->dgen = strace_names_generation(nm);
	}
	if (c->dcache[k].d && c->dcache[k].addr == addr) {
		d = c->dcache[k].d;
	} else {
		d = strace_names_dso(nm, addr);
		if (!d)
			return p;
		c->dcache[k].addr = addr;
		c->dcache[k].d = d;
	}
	if (d->id < c->ndsos && c->dsos[d->id].s) {
		pc = &c->dsos[d->id];
	} else {
		c->scratch[0] = ',';
		end = fmt_put_json_str(c->scratch + 1, d->str,
				       d->len < FMT_NAME_MAX ? d->len
							     : FMT_NAME_MAX);
		pc = piece_of(&c->dsos, &c->ndsos, d->id, c->scratch,
			      (size_t)(end - c->scratch));
		if (!pc)
			return p;
	}
	memcpy(p, pc->s, pc->len);
	return p + pc->len;
}

static void chrome_leave(void *state, const struct strace_frame *f)
{
	struct chrome *c = state;
	struct view *v = c->v;
	struct out *o = c->out;
	struct cthr *th = thread_of(v, c, f->tid);
	unsigned kind = f->kind < 6 ? f->kind : 0;
	const char *k = kind_cat[kind].s;
	size_t kl = kind_cat[kind].len;
	uint64_t b, e;
	char *p;

	if (!th)
		return;
	b = f->user[0] ? f->user[0] - 1 : f->begin;
	e = next_time(th, f->end);
	if (e != f->end) {
		th->moved[th->nmoved % NMOVED].t = f->end;
		th->moved[th->nmoved++ % NMOVED].w = e;
	}
	p = sep(c, o->p);
	memcpy(p, "{\"name\":\"", 9);
	p = put_frame_name(v, c, p + 9, f);
	/* the category: "KIND[,inlined][,gap][,unwound][,DSO],0xADDR" (no
	 * args: speedscope adds a slice's args to its name) */
	memcpy(p, "\",\"cat\":\"", 9);
	memcpy(p + 9, k, kl);
	p += 9 + kl;
	if (f->flags & STRACE_FRAME_INLINED) {
		memcpy(p, ",inlined", 8);
		p += 8;
	}
	if (f->flags & STRACE_FRAME_GAP) {
		memcpy(p, ",gap", 4);
		p += 4;
	}
	if (f->flags & STRACE_FRAME_UNWOUND) {
		memcpy(p, ",unwound", 8);
		p += 8;
	}
	if (f->kind != STRACE_FRAME_SYSCALL && f->kind != STRACE_FRAME_SIGNAL &&
	    c->nm)
		p = put_dso(c, p, f->addr);
	*p++ = ',';
	p = fmt_put_hex(p, f->addr);
	memcpy(p, "\",\"ph\":\"X\",\"ts\":", 16);
	p = put_us(p + 16, b);
	memcpy(p, ",\"dur\":", 7);
	p = put_us(p + 7, e > b ? e - b : 0);
	memcpy(p, th->ids, th->idslen); /* (put_ids(p, th->pid, f->tid)) */
	p += th->idslen;
	*p = '}';
	o->p = p + 1;
	if (out_room(o) < 0)
		view_fail(v, -1);
}

static int chrome_finish(struct view *v)
{
	struct out *o = view_out(v);

	memcpy(o->p, "\n]\n", 3);
	o->p += 3;
	return out_room(o);
}

static void chrome_close(struct view *v)
{
	struct chrome *c = view_state(v);

	if (c) {
		free(c->thr);
		pieces_free(c->names, c->nnames);
		pieces_free(c->dsos, c->ndsos);
		for (size_t i = 0; i < LCACHE; i++)
			free(c->lcache[i].pc.s);
	}
	free(c);
	view_set_state(v, NULL);
}

const struct view_format view_chrome = {chrome_open, chrome_event,
					chrome_enter, chrome_leave,
					chrome_finish, chrome_close};
