/* SPDX-License-Identifier: MIT */
/*
 * cli/fmt_chrome.c - ptrace-read -f chrome: the Chrome Trace Event format
 * (JSON), which Perfetto UI, chrome://tracing and speedscope load
 * (docs/viewing.md).
 *
 * A JSON array written as it goes: every frame is a complete event
 * ("ph":"X") written when it is left, with ts and dur in microseconds
 * (three decimals: nanoseconds), pid and tid, and args (the address as
 * a hex string, the DSO; gap and unwound when so); each thread gets
 * process_name and thread_name metadata before its first event; gaps,
 * errors and losses are instant events ("ph":"i"). The closing bracket
 * is written when the input ends, also when a --follow is interrupted;
 * an output cut short without it is still read by those tools (the
 * format allows it). Memory: the names of the last thread, nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "views.h"

struct chrome {
	int first;        /* no event written yet: no comma before it */
	uint32_t *known;  /* threads whose metadata is written (sorted) */
	size_t nknown, cap;
	uint32_t tid;     /* the last thread, and its pid */
	uint32_t pid;
	int tid_valid;
	char scratch[FMT_NAME_MAX + 128];
};

static int chrome_open(struct view *v)
{
	struct chrome *c = calloc(1, sizeof(*c));
	struct out *o = view_out(v);

	if (!c) {
		view_fail(v, -1);
		return -1;
	}
	c->first = 1;
	view_set_state(v, c);
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
	uint64_t f = ns % 1000u;

	p = fmt_put_u64(p, ns / 1000u);
	p[0] = '.';
	p[1] = (char)('0' + f / 100);
	p[2] = (char)('0' + f / 10 % 10);
	p[3] = (char)('0' + f % 10);
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

/* A thread's pid, and its metadata before its first event. */
static uint32_t thread_pid(struct view *v, struct chrome *c, uint32_t tid)
{
	struct strace_names *nm = view_names(v);
	const struct strace_name *t, *pr;
	struct out *o = view_out(v);
	size_t lo = 0, hi = c->nknown;
	uint32_t pid;
	char *p;

	if (c->tid_valid && c->tid == tid)
		return c->pid;
	t = nm ? strace_names_thread(nm, tid) : NULL;
	pid = !t ? tid : t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux
						     : (uint32_t)t->key;
	c->tid = tid;
	c->pid = pid;
	c->tid_valid = 1;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (c->known[m] < tid)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo < c->nknown && c->known[lo] == tid)
		return pid;
	if (c->nknown == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		uint32_t *k = realloc(c->known, cap * sizeof(*k));
		if (!k) {
			view_fail(v, -1);
			return pid;
		}
		c->known = k;
		c->cap = cap;
	}
	memmove(c->known + lo + 1, c->known + lo,
		(c->nknown - lo) * sizeof(*c->known));
	c->known[lo] = tid;
	c->nknown++;
	pr = nm ? strace_names_process(nm, pid) : NULL;
	p = o->p;
	if (pr || (t && tid == pid)) {
		const struct strace_name *n = pr ? pr : t;
		p = sep(c, p);
		memcpy(p, "{\"name\":\"process_name\",\"ph\":\"M\"", 31);
		p = put_ids(p + 31, pid, pid);
		memcpy(p, ",\"args\":{\"name\":", 16);
		p = put_str(p + 16, n->str, n->len);
		memcpy(p, "}}", 2);
		p += 2;
	}
	if (t) {
		p = sep(c, p);
		memcpy(p, "{\"name\":\"thread_name\",\"ph\":\"M\"", 30);
		p = put_ids(p + 30, pid, tid);
		memcpy(p, ",\"args\":{\"name\":", 16);
		p = put_str(p + 16, t->str, t->len);
		memcpy(p, "}}", 2);
		p += 2;
	}
	o->p = p;
	if (out_room(o) < 0)
		view_fail(v, -1);
	return pid;
}

/* Gaps, errors and losses: instant events on their thread. */
static void chrome_event(struct view *v, const struct strace_event *e)
{
	struct chrome *c = view_state(v);
	struct out *o = view_out(v);
	const char *what = NULL;
	char *p;

	switch (e->type) {
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
	uint32_t pid = thread_pid(v, c, e->tid);
	p = sep(c, o->p);
	memcpy(p, "{\"name\":", 8);
	p = put_str(p + 8, what, strlen(what));
	memcpy(p, ",\"cat\":\"gap\",\"ph\":\"i\",\"s\":\"t\",\"ts\":", 35);
	p = put_us(p + 35, e->time);
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
	} else {
		memcpy(p, "\"}}", 3);
		p += 3;
	}
	o->p = p;
	if (out_room(o) < 0)
		view_fail(v, -1);
}

static void chrome_enter(struct view *v, const struct strace_frame *f,
			 uint32_t rd)
{
	(void)v;
	(void)f;
	(void)rd;
}

static void chrome_leave(struct view *v, const struct strace_frame *f,
			 uint32_t rd)
{
	static const char *const cat[] = {"call",  "entry",   "root",
					  "seed",  "syscall", "signal"};
	struct chrome *c = view_state(v);
	struct out *o = view_out(v);
	uint32_t pid = thread_pid(v, c, f->tid);
	char *p = sep(c, o->p), *e;
	const struct strace_name *d;

	(void)rd;
	memcpy(p, "{\"name\":\"", 9);
	e = view_put_name(v, c->scratch, f);
	p = fmt_put_json_str(p + 9, c->scratch, (size_t)(e - c->scratch));
	memcpy(p, "\",\"cat\":\"", 9);
	p += 9;
	const char *k = cat[f->kind < 6 ? f->kind : 0];
	memcpy(p, k, strlen(k));
	p += strlen(k);
	memcpy(p, "\",\"ph\":\"X\",\"ts\":", 16);
	p = put_us(p + 16, f->begin);
	memcpy(p, ",\"dur\":", 7);
	p = put_us(p + 7, f->end - f->begin);
	p = put_ids(p, pid, f->tid);
	memcpy(p, ",\"args\":{\"addr\":\"", 17);
	p = fmt_put_hex(p + 17, f->addr);
	*p++ = '"';
	d = f->kind == STRACE_FRAME_SYSCALL || f->kind == STRACE_FRAME_SIGNAL ||
			    !view_names(v)
		    ? NULL
		    : strace_names_dso(view_names(v), f->addr);
	if (d) {
		memcpy(p, ",\"dso\":", 7);
		p = put_str(p + 7, d->str, d->len);
	}
	if (f->flags & STRACE_FRAME_GAP) {
		memcpy(p, ",\"gap\":true", 11);
		p += 11;
	}
	if (f->flags & STRACE_FRAME_UNWOUND) {
		memcpy(p, ",\"unwound\":true", 15);
		p += 15;
	}
	memcpy(p, "}}", 2);
	o->p = p + 2;
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

	if (c)
		free(c->known);
	free(c);
	view_set_state(v, NULL);
}

const struct view_format view_chrome = {chrome_open, chrome_event,
					chrome_enter, chrome_leave,
					chrome_finish, chrome_close};
