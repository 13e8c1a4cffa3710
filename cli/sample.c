/* SPDX-License-Identifier: MIT */
/* cli/sample.c - sample events of every type (see sample.h). */
#include <string.h>

#include "sample.h"

#define PID 4242
#define TID2 4243

struct sym {
	uint64_t start, size;
	const char *name;
};

static const char exe_path[] = "/usr/bin/demo";
#define EXE_START 0x400000ull
#define EXE_SIZE 0x20000ull
static const char libc_path[] = "/lib/x86_64-linux-gnu/libc.so.6";
#define LIBC_START 0x7f3a12400000ull
#define LIBC_SIZE 0x1c0000ull

/* names chosen to exercise the formatter: C++, quotes, a tab, UTF-8 */
static const struct sym syms[] = {
	{0x401000, 0x30, "_start"},
	{0x401030, 0x120, "main"},
	{0x401150, 0x90, "parse_args"},
	{0x4011e0, 0x200, "compute"},
	{0x4013e0, 0x60, "helper"},
	{0x401440, 0x80, "std::vector<int, std::allocator<int> >::push_back"
			 "(int const&)"},
	{0x4014c0, 0x20, "weird\"name\\with\ttab"},
	{0x4014e0, 0x20, "unicod\xc3\xa9_fn"},
	{LIBC_START + 0x9a0e0, 0x200, "malloc"},
	{LIBC_START + 0x9a700, 0x150, "free"},
	{LIBC_START + 0x1a0c40, 0x100, "__memcpy_avx_unaligned_erms"},
	{LIBC_START + 0x114870, 0x90, "write"},
};
#define NSYMS (sizeof(syms) / sizeof(syms[0]))

struct offs {
	uint64_t proc, thr[2], exe, libc, sym[NSYMS];
};

static uint64_t rnd(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dull;
}

/* a code address: mostly inside a symbol, sometimes in libc outside any
 * symbol, sometimes nowhere known */
static uint64_t addr(uint64_t *x)
{
	uint64_t r = rnd(x) % 100;

	if (r < 80) {
		const struct sym *s = &syms[rnd(x) % NSYMS];
		return r < 30 ? s->start : s->start + rnd(x) % s->size;
	}
	if (r < 92)
		return LIBC_START + 0x1000 + rnd(x) % 0x8000;
	return 0xffffffff81000000ull + rnd(x) % 0x100000;
}

static void set(struct strace_event *e, unsigned type, unsigned flags,
		uint32_t tid, uint64_t a, uint64_t b)
{
	e->type = (uint16_t)type;
	e->flags = (uint16_t)flags;
	e->tid = tid;
	e->time = 0;
	e->a = a;
	e->b = b;
}

/* one event of type t with plausible operands */
static void make(struct strace_event *e, unsigned t, const struct offs *o,
		 uint64_t *x)
{
	const struct strace_event_info *in = strace_event_info(t);
	uint32_t tid = rnd(x) % 4 ? PID : TID2;
	unsigned k = (unsigned)(rnd(x) % NSYMS);
	static const unsigned flow_flags[] = {
		0, 0, STRACE_F_INDIRECT, STRACE_F_CONDITIONAL,
		STRACE_F_ASYNC | STRACE_F_INDIRECT, STRACE_F_TIME_EXACT};
	unsigned flags = 0;
	uint64_t a = 0, b = 0;

	switch (t) {
	case STRACE_EV_PROCESS:
		set(e, t, 0, PID, PID, o->proc);
		return;
	case STRACE_EV_THREAD:
		set(e, t, 0, tid, PID, o->thr[tid == TID2]);
		return;
	case STRACE_EV_DSO:
		if (rnd(x) & 1)
			set(e, t, 0, PID, LIBC_START, o->libc);
		else
			set(e, t, 0, PID, EXE_START, o->exe);
		return;
	case STRACE_EV_SYMBOL:
		set(e, t, 0, PID, syms[k].start, o->sym[k]);
		return;
	case STRACE_EV_THREAD_EXIT:
		set(e, t, 0, TID2, PID, 0);
		return;
	case STRACE_EV_STACK_FRAME:
		set(e, t, 0, tid, addr(x), rnd(x) % 8);
		return;
	case STRACE_EV_LOST:
		set(e, t, STRACE_LOST_PERF, tid, 1 + rnd(x) % 100, 0);
		return;
	case STRACE_EV_MEM_READ:
	case STRACE_EV_MEM_WRITE:
		flags = 1u << (rnd(x) % 4); /* access size */
		break;
	case STRACE_EV_BRANCH:
		flags = (unsigned)(rnd(x) & 1); /* taken */
		break;
	case STRACE_EV_ERROR:
		/* a decoder error code (strace/error.h) */
		flags = (unsigned)(STRACE_E_NOSYNC + rnd(x) % 10);
		break;
	default:
		if (in && in->family == STRACE_FAM_FLOW)
			flags = flow_flags[rnd(x) % 6];
	}
	if (!in) {
		set(e, t, flags, tid, rnd(x), rnd(x));
		return;
	}
	for (int i = 0; i < 2; i++) {
		uint64_t v;
		switch (i ? in->b_kind : in->a_kind) {
		case STRACE_FK_ADDR:
			v = addr(x);
			break;
		case STRACE_FK_HEX:
			v = rnd(x) >> (rnd(x) % 64);
			break;
		case STRACE_FK_DEC:
			v = rnd(x) % 1000;
			break;
		case STRACE_FK_STR:
			v = o->proc;
			break;
		case STRACE_FK_REASON:
			v = rnd(x) % 12; /* includes one unknown value */
			break;
		case STRACE_FK_BLOCK:
			v = ((1 + rnd(x) % 20) << 32) | (1 + rnd(x) % 80);
			break;
		default:
			v = 0;
		}
		if (i)
			b = v;
		else
			a = v;
	}
	set(e, t, flags, tid, a, b);
}

static int add(struct strace_ring *ring, unsigned kind, uint64_t key,
	       uint64_t aux, const char *s, uint64_t *off)
{
	*off = 0;
	if (!ring)
		return 0;
	return strace_ring_add_string(ring, kind, key, aux, s, strlen(s), off);
}

int sample_init(struct sample *s, struct strace_ring *ring)
{
	struct offs o;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned types[STRACE_EV_MAX], ntypes = 0, np = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = add(ring, STRACE_EV_PROCESS, PID, 0, "demo", &o.proc)) < 0 ||
	    (rc = add(ring, STRACE_EV_THREAD, PID, PID, "demo", &o.thr[0])) <
		    0 ||
	    (rc = add(ring, STRACE_EV_THREAD, TID2, PID, "worker-1",
		      &o.thr[1])) < 0 ||
	    (rc = add(ring, STRACE_EV_DSO, EXE_START, EXE_SIZE, exe_path,
		      &o.exe)) < 0 ||
	    (rc = add(ring, STRACE_EV_DSO, LIBC_START, LIBC_SIZE, libc_path,
		      &o.libc)) < 0)
		return rc;
	for (unsigned i = 0; i < NSYMS; i++) {
		rc = add(ring, STRACE_EV_SYMBOL, syms[i].start, syms[i].size,
			 syms[i].name, &o.sym[i]);
		if (rc < 0)
			return rc;
	}

	/* prologue: what a decoder emits first */
	set(&s->prologue[np++], STRACE_EV_PROCESS, 0, PID, PID, o.proc);
	set(&s->prologue[np++], STRACE_EV_THREAD, 0, PID, PID, o.thr[0]);
	set(&s->prologue[np++], STRACE_EV_THREAD, 0, TID2, PID, o.thr[1]);
	set(&s->prologue[np++], STRACE_EV_DSO, 0, PID, EXE_START, o.exe);
	set(&s->prologue[np++], STRACE_EV_DSO, 0, PID, LIBC_START, o.libc);
	for (unsigned i = 0; i < NSYMS; i++)
		set(&s->prologue[np++], STRACE_EV_SYMBOL, 0, PID,
		    syms[i].start, o.sym[i]);
	set(&s->prologue[np++], STRACE_EV_STACK_FRAME, 0, PID,
	    syms[1].start + 0x20, 1);
	set(&s->prologue[np++], STRACE_EV_STACK_FRAME, 0, PID,
	    syms[3].start + 0x10, 0);
	set(&s->prologue[np++], STRACE_EV_TRACE_BEGIN, 0, PID,
	    syms[3].start + 0x10, STRACE_REASON_START);
	s->nprologue = np;

	/*
	 * The pattern looks like a decoder's output: mostly calls, blocks
	 * and returns between the symbols, a thread at a time; every fourth
	 * event is the next type of the table in turn, so every type appears
	 * (every 4 * 28 events) with random operands.
	 */
	for (unsigned t = 1; t < STRACE_EV_MAX; t++)
		if (strace_event_info(t))
			types[ntypes++] = t;
	{
		unsigned next_type = 0, step = 0, cur = 1, callee = 3;
		uint64_t site = syms[1].start + 8;
		for (unsigned i = 0; i < SAMPLE_PATTERN; i++) {
			struct strace_event *e = &s->pattern[i];
			uint32_t tid = (i / 256) % 2 ? TID2 : PID;
			const struct sym *c = &syms[callee];
			if (i % 4 == 0) {
				make(e, types[next_type++ % ntypes], &o, &x);
				if (e->type != STRACE_EV_THREAD &&
				    e->type != STRACE_EV_THREAD_EXIT)
					e->tid = tid; /* runs of one thread */
				continue;
			}
			switch (step++ % 3) {
			case 0: /* call from somewhere in cur to callee */
				callee = (unsigned)(rnd(&x) % NSYMS);
				c = &syms[callee];
				/* a program has few call sites: 4 a function */
				site = syms[cur].start +
				       (rnd(&x) % 4) * (syms[cur].size / 4) + 3;
				set(e, STRACE_EV_CALL, 0, tid, site, c->start);
				break;
			case 1: /* a block of the callee */
				set(e, STRACE_EV_BLOCK, 0, tid,
				    c->start + (rnd(&x) % 4) * (c->size / 4),
				    (uint64_t)(2 + rnd(&x) % 10) << 32 |
					    (8 + rnd(&x) % 40));
				break;
			default: /* and back */
				set(e, STRACE_EV_RETURN, 0, tid,
				    c->start + c->size - 1, site + 5);
				cur = (unsigned)(rnd(&x) % NSYMS);
			}
		}
	}
	return 0;
}

void sample_event(const struct sample *s, uint64_t i, struct strace_event *e)
{
	if (i < s->nprologue)
		*e = s->prologue[i];
	else
		*e = s->pattern[(i - s->nprologue) % SAMPLE_PATTERN];
	e->time = SAMPLE_TIME0 + i * SAMPLE_TIME_STEP;
}

int sample_emit(const struct sample *s, struct strace_writer *w, uint64_t n)
{
	uint64_t i = 0;

	for (; i < n && i < s->nprologue; i++) {
		struct strace_event *e = strace_writer_slot(w);
		if (!e)
			return strace_writer_error(w);
		sample_event(s, i, e);
	}
	while (i < n) {
		uint64_t j = (i - s->nprologue) % SAMPLE_PATTERN;
		uint64_t end = n - i < SAMPLE_PATTERN - j ? n : i + SAMPLE_PATTERN - j;
		const struct strace_event *p = &s->pattern[j];
		for (; i < end; i++, p++) {
			struct strace_event *e = strace_writer_slot(w);
			if (!e)
				return strace_writer_error(w);
			*e = *p;
			e->time = SAMPLE_TIME0 + i * SAMPLE_TIME_STEP;
		}
	}
	return strace_writer_flush(w);
}
