/* SPDX-License-Identifier: MIT */
/*
 * tests/stack/stackfast.c - strace_stack's fast path (the usual calls,
 * returns and jumps, taken without event()'s tests) against the same code
 * without it (stack_nofast.c, ref_*): the same callbacks, frame for
 * frame, the same open frames and the same statistics.
 *
 *   stackfast random_streams           random event streams made like
 *                                      programs
 *   STACK_RINGS="RING..." stackfast rings   the events of each ring
 *
 * tests/stack/e2e-stack-fast.sh runs both, the rings of the corpus.
 *
 * The streams follow a shadow stack of calls (so most events are the
 * usual ones) with everything else mixed in: stripped code, PLT stubs and
 * tail calls, jumps inside and between functions, longjmps, calls to the
 * next instruction, syscalls, signals, interrupts, gaps, losses (the
 * ring's and a thread's), seeds, OCaml handlers, thread exits, times that
 * stand still or go back, several threads, a small max_depth, garbage.
 * stack_counted.c (the fast path counting, cnt_*) says how many events
 * the fast path took: most, or the streams test nothing.
 */
#include <unistd.h>

#include "../harness.h"
#include "strace/names.h"
#include "strace/ring.h"
#include "strace/stack.h"

int ref_stack_new(struct strace_names *names,
		  const struct strace_stack_opts *opts,
		  const struct strace_stack_cb *cb, struct strace_stack **out);
void ref_stack_free(struct strace_stack *s);
int ref_stack_feed(struct strace_stack *s, const struct strace_event *ev,
		   size_t n);
void ref_stack_end(struct strace_stack *s);
size_t ref_stack_frames(struct strace_stack *s, uint32_t tid,
			const struct strace_frame **out);
void ref_stack_stats(const struct strace_stack *s,
		     struct strace_stack_stats *st);
int cnt_stack_new(struct strace_names *names,
		  const struct strace_stack_opts *opts,
		  const struct strace_stack_cb *cb, struct strace_stack **out);
void cnt_stack_free(struct strace_stack *s);
int cnt_stack_feed(struct strace_stack *s, const struct strace_event *ev,
		   size_t n);
extern unsigned long stack_fast_hits;

/* The made-up program: NFN functions of 0x100 bytes from BASE (some
 * stubs "@plt", one "_init"), and code without symbols from STRIPPED. */
enum { BASE = 0x10000, NFN = 24, STRIPPED = 0x40000, NSTRIPPED = 8 };

static struct strace_ring *ring;
static struct strace_names *names;
static char path[64];

__attribute__((constructor)) static void setup(void)
{
	struct strace_ring_opts o = {sizeof(o), 1024, 1 << 16,
				     STRACE_RING_ARCHIVE, 1, 0};
	uint64_t off;
	char n[32];

	snprintf(path, sizeof(path), "/dev/shm/stackfast_%d.srb",
		 (int)getpid());
	unlink(path);
	if (strace_ring_create(path, &o, &ring) < 0)
		return;
	for (int i = 0; i < NFN; i++) {
		if (i == 1)
			snprintf(n, sizeof(n), "_init");
		else if (i % 5 == 2)
			snprintf(n, sizeof(n), "fn%d@plt", i);
		else
			snprintf(n, sizeof(n), "fn%d", i);
		strace_ring_add_string(ring, STRACE_EV_SYMBOL,
				       BASE + 0x100u * (unsigned)i, 0x100, n,
				       strlen(n), &off);
	}
	strace_names_new(ring, &names);
	strace_names_update(names);
}

__attribute__((destructor)) static void teardown(void)
{
	strace_names_free(names);
	strace_ring_close(ring);
	unlink(path);
}

/* --- the callbacks' log ---------------------------------------------------- */

struct rec {
	int enter;
	struct strace_frame f;
};

struct log {
	struct rec *v;
	size_t n, cap;
};

static void add(struct log *l, int enter, const struct strace_frame *f)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	l->v[l->n].enter = enter;
	l->v[l->n].f = *f;
	l->n++;
}

static void on_enter(void *arg, const struct strace_frame *f)
{
	add(arg, 1, f);
}

static void on_leave(void *arg, const struct strace_frame *f)
{
	add(arg, 0, f);
}

static void show(const char *who, const struct rec *r)
{
	fprintf(stderr,
		"    %s: %s depth %u kind %u flags 0x%x addr 0x%" PRIx64
		" site 0x%" PRIx64 " begin %" PRIu64 " end %" PRIu64
		" tid %u handlers %u\n",
		who, r->enter ? "enter" : "leave", r->f.depth, r->f.kind,
		r->f.flags, r->f.addr, r->f.call_site, r->f.begin, r->f.end,
		r->f.tid, r->f.handlers);
}

/* The logs are the same; else the first difference on stderr. */
static int same_log(const struct log *a, const struct log *b, const char *what)
{
	size_t n = a->n < b->n ? a->n : b->n;

	for (size_t i = 0; i < n; i++)
		if (memcmp(&a->v[i], &b->v[i], sizeof(a->v[i]))) {
			fprintf(stderr, "  %s: callback %zu differs:\n", what,
				i);
			show("fast", &a->v[i]);
			show("ref ", &b->v[i]);
			return 0;
		}
	if (a->n != b->n) {
		fprintf(stderr, "  %s: %zu callbacks, without the fast path %zu\n",
			what, a->n, b->n);
		return 0;
	}
	return 1;
}

/* --- one comparison -------------------------------------------------------- */

struct pair {
	struct strace_stack *fast, *ref, *cnt;
	struct log lf, lr, lc;
};

/* machine: the machine's stack (opts.machine), else the person's */
static int pair_new(struct pair *p, uint32_t max_depth, int machine)
{
	struct strace_stack_opts o = {.size = sizeof(o),
				      .max_depth = max_depth,
				      .machine = machine};
	struct strace_stack_cb cf = {on_enter, on_leave, &p->lf};
	struct strace_stack_cb cr = {on_enter, on_leave, &p->lr};
	struct strace_stack_cb cc = {on_enter, on_leave, &p->lc};

	memset(p, 0, sizeof(*p));
	return strace_stack_new(names, &o, &cf, &p->fast) == 0 &&
	       ref_stack_new(names, &o, &cr, &p->ref) == 0 &&
	       cnt_stack_new(names, &o, &cc, &p->cnt) == 0;
}

static void pair_feed(struct pair *p, const struct strace_event *ev,
		      size_t n)
{
	strace_stack_feed(p->fast, ev, n);
	ref_stack_feed(p->ref, ev, n);
	cnt_stack_feed(p->cnt, ev, n);
}

/* the open frames of tid are the same */
static int same_frames(struct pair *p, uint32_t tid, const char *what)
{
	const struct strace_frame *a, *b;
	size_t na = strace_stack_frames(p->fast, tid, &a);
	size_t nb = ref_stack_frames(p->ref, tid, &b);

	if (na == nb && (!na || !memcmp(a, b, na * sizeof(*a))))
		return 1;
	fprintf(stderr, "  %s: thread %u: %zu open frames, without the fast "
			"path %zu (or they differ)\n",
		what, tid, na, nb);
	return 0;
}

/* the end: the logs, the statistics (what: NULL, only free) */
static int pair_end(struct pair *p, const char *what)
{
	struct strace_stack_stats a, b;
	int ok = 0;

	strace_stack_end(p->fast);
	ref_stack_end(p->ref);
	strace_stack_stats(p->fast, &a);
	ref_stack_stats(p->ref, &b);
	if (what)
		ok = same_log(&p->lf, &p->lr, what);
	if (what && memcmp(&a, &b, sizeof(a))) {
		fprintf(stderr, "  %s: statistics differ (frames %" PRIu64
				" vs %" PRIu64 ", tails %" PRIu64 " vs %" PRIu64
				")\n",
			what, a.frames, b.frames, a.tails, b.tails);
		ok = 0;
	}
	strace_stack_free(p->fast);
	ref_stack_free(p->ref);
	cnt_stack_free(p->cnt);
	free(p->lf.v);
	free(p->lr.v);
	free(p->lc.v);
	return ok;
}

/* --- streams made like programs ------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32) % n;
}

/* a function's start: most with a symbol, some in stripped code */
static uint64_t some_function(void)
{
	if (rnd(6) == 0)
		return STRIPPED + 0x100u * rnd(NSTRIPPED);
	return BASE + 0x100u * rnd(NFN);
}

struct shadow {
	uint32_t tid;
	uint64_t fn[64];  /* the function each frame runs */
	uint64_t ret[64]; /* where it returns */
	int n;
};

/* Events of threads th[0..nth) into ev (at most cap). */
static size_t make_stream(struct strace_event *ev, size_t cap,
			  struct shadow *th, int nth)
{
	uint64_t time = 1;
	size_t k = 0;

#define EV(T, A, B, F)                                                         \
	do {                                                                   \
		ev[k] = (struct strace_event){STRACE_EV_##T, (F), s->tid,      \
					      time, (A), (B)};                 \
		k++;                                                           \
	} while (0)
	for (int i = 0; i < nth; i++) {
		struct shadow *s = &th[i];
		s->n = 1;
		s->fn[0] = some_function();
		s->ret[0] = 0;
		if (rnd(4) == 0) /* seeds of an attach */
			for (int d = 2; d >= 0; d--)
				EV(STACK_FRAME, some_function() + 0x10, d, 0);
		EV(TRACE_BEGIN, rnd(3) ? s->fn[0] + 0x8 : 0,
		   STRACE_REASON_START, 0);
	}
	while (k + 8 < cap) {
		struct shadow *s = &th[rnd(40) ? 0 : rnd(nth)];
		uint64_t here = s->fn[s->n - 1] + 0x10 + rnd(0xe0);
		uint32_t r = rnd(1000);

		time += rnd(8) ? 1 + rnd(3) : rnd(50) ? 0 : (uint64_t)-1;
		if (r < 420 && s->n < 64) { /* a call */
			uint64_t to = some_function();
			if (rnd(200) == 0)
				to = here + 5; /* reads the PC */
			EV(CALL, here, to, 0);
			if (to == here + 5)
				continue;
			s->fn[s->n] = to;
			s->ret[s->n] = here + 5;
			s->n++;
			if ((to - BASE) / 0x100 % 5 == 2 && to < STRIPPED &&
			    rnd(4)) { /* through its stub */
				uint64_t real = some_function();
				EV(JUMP, to + 6, real, 0);
				s->fn[s->n - 1] = real;
			}
		} else if (r < 840 && s->n > 1) { /* a return */
			uint64_t to = s->ret[s->n - 1];
			if (rnd(100) == 0)
				to = some_function() + rnd(0x100);
			EV(RETURN, here, to, 0);
			s->n--;
		} else if (r < 880) { /* a jump in the function */
			EV(JUMP, here, s->fn[s->n - 1] + rnd(0x100),
			   rnd(2) ? STRACE_F_INTRA : 0);
		} else if (r < 905) { /* a tail call */
			uint64_t to = some_function();
			EV(JUMP, here, to, 0);
			s->fn[s->n - 1] = to;
		} else if (r < 915) { /* into another function's middle */
			EV(JUMP, here, some_function() + 1 + rnd(0xff), 0);
		} else if (r < 920 && s->n > 2) { /* longjmp */
			int d = 1 + (int)rnd((uint32_t)s->n - 1);
			EV(JUMP, here, s->fn[d - 1] + 0x40, 0);
			s->n = d;
		} else if (r < 940) { /* a syscall */
			EV(SYSCALL, here, 0, 0);
			if (rnd(10)) {
				EV(SYSRET, 0, here + 2, 0);
			} else if (rnd(2)) { /* a signal as it returns */
				EV(SYSRET, 0, some_function(), 0);
			}
		} else if (r < 950) { /* interrupted */
			EV(INTERRUPT, here, 0, 0);
			if (rnd(3)) /* (else the trace resumes later) */
				EV(TRACE_BEGIN, rnd(2) ? here : some_function(),
				   STRACE_REASON_ENABLE, 0);
		} else if (r < 958) {
			EV(TRACE_END, here, STRACE_REASON_DISABLE, 0);
			EV(TRACE_BEGIN, rnd(2) ? here : some_function(),
			   STRACE_REASON_SYNC, 0);
		} else if (r < 962) {
			EV(OVERFLOW, here, 0, 0);
		} else if (r < 966) {
			EV(ERROR, here, 0, 1);
		} else if (r < 970) { /* lost: the thread's, the ring's */
			if (rnd(2)) {
				EV(LOST, 5, 0, STRACE_LOST_PERF);
			} else {
				ev[k] = (struct strace_event){
					STRACE_EV_LOST, STRACE_LOST_READER, 0,
					time, 7, 0};
				k++;
			}
		} else if (r < 985) { /* OCaml handlers */
			uint32_t x = rnd(3);
			if (x == 0)
				EV(EXC_PUSH, here, here + 0x20, 0);
			else if (x == 1)
				EV(EXC_POP, here, 0, 0);
			else
				EV(EXC_RAISE, here, 0, 0);
		} else if (r < 987) {
			EV(THREAD_EXIT, 0, 0, 0);
			s->n = 1;
		} else if (r < 989) { /* garbage */
			ev[k] = (struct strace_event){(uint16_t)rnd(100),
						      (uint16_t)rnd(16), s->tid,
						      time, rng, rng >> 7};
			k++;
		} else if (r < 990) {
			EV(PAD, 0, 0, 0);
		}
	}
#undef EV
	return k;
}

TEST(random_streams)
{
	enum { STREAMS = 400, CAP = 6000 };
	static struct strace_event ev[CAP];
	static const uint32_t depths[] = {0, 0, 0, 3, 8, 40};
	unsigned long events = 0;
	int bad = 0;

	REQUIRE(ring && names);
	for (int it = 0; it < STREAMS && !bad; it++) {
		struct shadow th[3];
		struct pair p;
		char what[64];
		int nth = 1 + (int)rnd(3);
		size_t n, i = 0;

		for (int t = 0; t < nth; t++)
			th[t].tid = 100 + (uint32_t)t;
		n = make_stream(ev, CAP, th, nth);
		snprintf(what, sizeof(what), "stream %d", it);
		/* the person's stack and the machine's, in turn */
		REQUIRE(pair_new(&p, depths[rnd(6)], it & 1));
		while (i < n) { /* in batches of any size */
			size_t m = 1 + rnd(700);
			if (m > n - i)
				m = n - i;
			pair_feed(&p, ev + i, m);
			i += m;
			if (!same_log(&p.lf, &p.lr, what)) {
				bad = 1;
				break;
			}
		}
		for (int t = 0; t < nth && !bad; t++)
			bad = !same_frames(&p, th[t].tid, what);
		if (!pair_end(&p, bad ? NULL : what))
			bad = 1;
		events += n;
	}
	CHECK(!bad);
	/* the streams are mostly what the fast path takes */
	fprintf(stderr, "  %lu events, %lu by the fast path\n", events,
		stack_fast_hits);
	CHECK_INT(stack_fast_hits, >, events / 2);
}

/* The events of the rings in $STACK_RINGS (separated by spaces). */
TEST(rings)
{
	char *list = getenv("STACK_RINGS"), *save = NULL, *rp;

	if (!list || !*list)
		SKIP("no STACK_RINGS (tests/stack/e2e-stack-fast.sh gives the "
		     "corpus's)");
	list = strdup(list);
	REQUIRE(list);
	for (rp = strtok_r(list, " ", &save); rp;
	     rp = strtok_r(NULL, " ", &save)) {
		/* the person's stack, then the machine's */
		for (int machine = 0; machine < 2; machine++) {
			struct strace_ring *rg;
			struct strace_reader *rd;
			struct strace_names *nm;
			struct strace_batch b;
			struct pair p;
			unsigned long before = stack_fast_hits, total = 0;
			long k;
			int ok = 1;

			if (strace_ring_open(rp, &rg) < 0 ||
			    strace_reader_open(rg, 0, &rd) < 0 ||
			    strace_names_new(rg, &nm) < 0) {
				fprintf(stderr, "  %s: cannot read the ring\n",
					rp);
				CHECK(0);
				break;
			}
			{
				/* the pair names with the ring's names */
				struct strace_names *keep = names;
				names = nm;
				REQUIRE(pair_new(&p, 0, machine));
				names = keep;
			}
			while ((k = strace_reader_next(rd, &b, 4096, 0)) > 0) {
				strace_names_update(nm);
				pair_feed(&p, b.ev, (size_t)k);
				total += (unsigned long)k;
				strace_reader_release(rd, &b);
			}
			ok = pair_end(&p, rp);
			fprintf(stderr,
				"  %s (the %s's stack): %lu events, %lu by "
				"the fast path\n",
				rp, machine ? "machine" : "person", total,
				stack_fast_hits - before);
			CHECK(ok);
			/* real traces are mostly calls and returns */
			CHECK_INT(stack_fast_hits - before, >, total / 2);
			strace_names_free(nm);
			strace_reader_close(rd);
			strace_ring_close(rg);
		}
	}
	free(list);
}

RUN_TESTS("stackfast")
