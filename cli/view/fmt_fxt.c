/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_fxt.c - ptrace-read -f fxt: the Fuchsia trace format (FXT,
 * fuchsia.dev "Fuchsia trace format"), binary, as magic-trace writes it
 * and Perfetto UI loads it (docs/viewing.md).
 *
 * Records, little-endian 64-bit words, written as the events come:
 *   magic; provider info (id 0, "ptrace-read") and its section; an
 *   initialization record of 1e9 ticks per second (ticks = perf ns);
 *   string records: the fixed strings (FIX_*) at indexes 1..FIX_END-1,
 *   then each frame, thread or process name before the first record that
 *   refers to it;
 *   thread records (process koid = pid, thread koid = tid) before a
 *   thread's first event; kernel object records naming its process (type
 *   1) and the thread (type 2, with a koid argument "process"), again when
 *   the names change;
 *   per frame, a duration begin (type 2: category the frame's kind, name)
 *   when it is entered and a duration end (type 3, no name; arguments gap
 *   / unwound when so) when it is left: two words each, no address (a
 *   name without a symbol is its address: "[dso]+0x..." or "0x...");
 *   an instant event (type 0, category "gap") per overflow, error, loss
 *   and trace resumed after one, as fmt_chrome.c does.
 *
 * Why begin/end: readers sort events by time, and for equal times
 * Perfetto keeps the file order and drops a complete event that
 * encloses one before it ("slice_drop_overlapping_complete_event"), so
 * complete events written when frames leave (callees first) would lose
 * the callers that begin at a callee's time. Begin/end in the order of
 * the stack nest at any time resolution. The exception: frames that
 * begin at the thread's first time (its first frames, roots, seeds).
 * strace_stack may insert a root under them later, begun at that same
 * time, whose begin would then come after theirs; those frames become
 * complete events kept per thread (a few: at most DFR_MAX, then written)
 * and written at the end, the enclosing ones first (by begin, the longer
 * first; of equal times, in the order they left, as -f chrome has them).
 * A thread with more than DFR_MAX of them (thousands of roots: a
 * synthetic stream) has them written in batches, still valid, but a
 * reader that keeps the file order of equal times may then nest a few of
 * them otherwise.
 *
 * Memory is bounded: string indexes are 15 bits and thread indexes 8, so
 * both tables are caches whose entries are redefined when a trace has
 * more names or threads (every reference resolves to the record last
 * written at its index, which the specification makes readers handle).
 * Strings: ids (view_name_id()) map to a set of WAYS indexes by hash,
 * replaced by CLOCK (second chance) within the set, and a direct-mapped
 * front table finds the index of a name in use first; threads: CLOCK
 * over the 255 indexes. What grows is one small entry per thread seen.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "format.h"
#include "frames.h"
#include "view.h"

/* record and event types, argument types (the specification's values) */
#define RT_METADATA 0u
#define RT_INIT 1u
#define RT_STRING 2u
#define RT_THREAD 3u
#define RT_EVENT 4u
#define RT_KOBJ 7u
#define EV_INSTANT 0u
#define EV_BEGIN 2u
#define EV_END 3u
#define EV_COMPLETE 4u
#define ARG_UINT64 4u
#define ARG_POINTER 7u
#define ARG_KOID 8u
#define ARG_BOOL 9u
#define OBJ_PROCESS 1u
#define OBJ_THREAD 2u

#define MAGIC 0x0016547846040010ull
#define TICKS_PER_SECOND 1000000000ull

/* strings of fixed indexes, never replaced */
enum {
	FIX_PROCESS = 1,
	FIX_CALL, /* the frame kinds, in enum strace_frame_kind's order */
	FIX_ENTRY,
	FIX_ROOT,
	FIX_SEED,
	FIX_SYSCALL,
	FIX_SIGNAL,
	FIX_GAP,
	FIX_OVERFLOW,
	FIX_LOST,
	FIX_RESUMES,
	FIX_ERROR,
	FIX_UNWOUND,
	FIX_IP,
	FIX_COUNT,
	FIX_SYSCALL_NAME, /* the names of those frames (view_put_name()) */
	FIX_SIGNAL_NAME,
	FIX_PTWRITE, /* a ptwrite's instant: its category and name */
	FIX_PAYLOAD,
	FIX_END
};
static const char *const fixed[FIX_END] = {
	"", "process", "call", "entry", "root", "seed", "syscall", "signal",
	"gap", "overflow", "lost", "trace resumes", "error", "unwound",
	"ip", "count", "[syscall]", "[signal]", "ptwrite", "payload",
};

/* the string cache: indexes DYN_BASE..32767 in NSETS sets of WAYS */
#define WAYS 8u
#define DYN_BASE 64u
#define NSETS ((32768u - DYN_BASE) / WAYS)
#define FRONT_BITS 12
#define FRONT (1u << FRONT_BITS)
/* ids of the error names of instants (view_name_id() uses bits 61-63
 * and ids below 2^32) */
#define ID_ERROR (1ull << 60)

/* the event types fxt_event() may write an instant for */
#define GAP_TYPES                                                             \
	(1ull << STRACE_EV_TRACE_BEGIN | 1ull << STRACE_EV_OVERFLOW |          \
	 1ull << STRACE_EV_ERROR | 1ull << STRACE_EV_LOST |                    \
	 VIEW_TYPE_BIT(STRACE_EV_PTWRITE))

#define THREAD_SLOTS 256u /* index 0 is "inline" */

/* a frame at the thread's first time, written at the end */
struct dfr {
	uint64_t begin, end, id, seq;
	uint32_t pid;
	uint16_t kind, flags;
};
#define DFR_MAX 4096u /* per thread; then they are written */

struct thr {
	uint32_t tid, pid;
	uint64_t gen;                     /* names' generation resolved */
	const struct strace_name *t, *pr; /* names written for it */
	uint8_t slot;                     /* its index when last given */
	uint8_t used;
	uint32_t nbe;   /* begins written, not ended */
	uint32_t bepid; /* the pid they were written with */
	uint64_t tfirst; /* the begin of its first frame (not 0) */
	struct dfr *dfr;
	uint32_t ndfr, capdfr;
	uint64_t seq;
};

struct fxt {
	/* strings */
	uint64_t sid[NSETS][WAYS];
	uint8_t sused[NSETS], sref[NSETS], shand[NSETS];
	/* the fast path: direct-mapped ids and their index (0: none),
	 * cleared when the index is reused */
	struct {
		uint64_t id;
		uint64_t index;
	} front[FRONT];
	/* thread indexes */
	uint32_t slot_tid[THREAD_SLOTS], slot_pid[THREAD_SLOTS];
	uint8_t slot_ref[THREAD_SLOTS];
	unsigned nslots, hand;
	/* threads seen: open addressing by tid, at most half full */
	struct thr *thr;
	size_t nthr, thrcap;
	struct view *v;
	struct out *out; /* view_out(), kept: it is asked for per record */
	/* the last thread: its index and entry (valid until a thread is
	 * added) */
	uint32_t cur_tid;
	uint8_t cur_slot;
	struct thr *cur_th;
};

static inline char *put64(char *p, uint64_t w)
{
	w = htole64(w);
	memcpy(p, &w, 8);
	return p + 8;
}

/* a string record's header: index, length, size in words */
static inline uint64_t string_header(uint32_t index, size_t len)
{
	return RT_STRING | (uint64_t)(1 + (len + 7) / 8) << 4 |
	       (uint64_t)index << 16 | (uint64_t)len << 32;
}

/* zeros up to the next word */
static inline char *pad(char *p, size_t len)
{
	size_t n = (8 - (len & 7)) & 7;

	memset(p, 0, 8);
	return p + n;
}

static char *put_string(char *p, uint32_t index, const char *s, size_t len)
{
	p = put64(p, string_header(index, len));
	memcpy(p, s, len);
	return pad(p + len, len);
}

/*
 * The string index of id, its string record written first when the id
 * has none: a names id, a label from view_name_id() (named by
 * view_put_name_id()), or an ID_ERROR code (named by s).
 */
static __attribute__((noinline)) uint32_t intern(struct view *v,
						  struct fxt *x, uint64_t id,
						  const char *s)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	uint32_t set = (uint32_t)(((h >> 32) * NSETS) >> 32);
	uint64_t *ids = x->sid[set];
	unsigned n = x->sused[set], w;
	uint32_t index;
	struct out *o;
	char *p, *e;

	for (w = 0; w < n; w++)
		if (ids[w] == id) {
			x->sref[set] |= (uint8_t)(1u << w);
			index = DYN_BASE + set * WAYS + w;
			goto found;
		}
	if (n < WAYS) {
		w = n;
		x->sused[set]++;
	} else {
		/* second chance: the first way not used since the hand
		 * passed it last */
		w = x->shand[set];
		while (x->sref[set] & (1u << w)) {
			x->sref[set] &= (uint8_t) ~(1u << w);
			w = (w + 1) % WAYS;
		}
		x->shand[set] = (uint8_t)((w + 1) % WAYS);
		uint32_t fo = (uint32_t)(ids[w] * 0x9e3779b97f4a7c15ull >>
					 (64 - FRONT_BITS));
		if (x->front[fo].id == ids[w])
			x->front[fo].index = 0;
	}
	ids[w] = id;
	x->sref[set] |= (uint8_t)(1u << w);
	index = DYN_BASE + set * WAYS + w;

	o = x->out;
	p = o->p + 8;
	if (s) {
		size_t len = strlen(s);
		memcpy(p, s, len);
		e = p + len;
	} else {
		e = view_put_name_id(v, p, id);
	}
	put64(o->p, string_header(index, (size_t)(e - p)));
	o->p = pad(e, (size_t)(e - p));
found:
	x->front[h >> (64 - FRONT_BITS)].id = id;
	x->front[h >> (64 - FRONT_BITS)].index = index;
	return index;
}

/* A frame's name as view_name_id() gives it (views.h: the names id of
 * its function, else its address with bit 63 set), without the call;
 * syscall and signal frames have fixed names (FIX_*_NAME). */
static inline uint64_t frame_id(struct view *v,
				const struct strace_frame *f)
{
	if (f->kind == STRACE_FRAME_SYSCALL || f->kind == STRACE_FRAME_SIGNAL)
		return view_name_id(v, f);
	return f->fn ? f->fn->id : f->addr | 1ull << 63;
}

/* The string index of id when the front table has it, else 0. */
static inline uint32_t known_name(const struct fxt *x, uint64_t id)
{
	uint32_t fo = (uint32_t)(id * 0x9e3779b97f4a7c15ull >>
				 (64 - FRONT_BITS));

	return x->front[fo].id == id ? (uint32_t)x->front[fo].index : 0;
}

/* The string index of the name of a frame of kind with id. */
static inline uint32_t name_index(struct view *v, struct fxt *x,
				  unsigned kind, uint64_t id)
{
	uint32_t index;

	if (kind == STRACE_FRAME_SYSCALL && id == VIEW_ID_SYSCALL)
		return FIX_SYSCALL_NAME;
	if (kind == STRACE_FRAME_SIGNAL)
		return FIX_SIGNAL_NAME;
	/* a hit here leaves the set's second chance alone: the names in use
	 * most stay here, and one pushed out of its set costs a string */
	if ((index = known_name(x, id)) != 0)
		return index;
	return intern(v, x, id, NULL);
}

/* The string index of f's name (view_put_name()'s). */
static inline uint32_t frame_name(struct view *v, struct fxt *x,
				  const struct strace_frame *f)
{
	if (__builtin_expect(f->kind >= STRACE_FRAME_SYSCALL, 0))
		return name_index(v, x, f->kind, frame_id(v, f));
	return name_index(v, x, f->kind,
			  f->fn ? f->fn->id : f->addr | 1ull << 63);
}

/* The entry of tid in the threads seen (added, unused, when new; the
 * table grows only then), or NULL without memory. */
static struct thr *thread_entry(struct fxt *x, uint32_t tid)
{
	size_t j;

	if (x->thrcap) {
		j = (size_t)(tid * 0x9e3779b97f4a7c15ull >> 32) &
		    (x->thrcap - 1);
		while (x->thr[j].used && x->thr[j].tid != tid)
			j = (j + 1) & (x->thrcap - 1);
		if (x->thr[j].used)
			return &x->thr[j];
	}
	if (2 * (x->nthr + 1) > x->thrcap) {
		size_t cap = x->thrcap ? 2 * x->thrcap : 256;
		struct thr *t = calloc(cap, sizeof(*t));
		if (!t)
			return NULL;
		for (size_t i = 0; i < x->thrcap; i++) {
			if (!x->thr[i].used)
				continue;
			j = (size_t)(x->thr[i].tid * 0x9e3779b97f4a7c15ull >>
				     32) &
			    (cap - 1);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = x->thr[i];
		}
		free(x->thr);
		x->thr = t;
		x->thrcap = cap;
		x->cur_slot = 0; /* cur_th moved */
	}
	j = (size_t)(tid * 0x9e3779b97f4a7c15ull >> 32) & (x->thrcap - 1);
	while (x->thr[j].used)
		j = (j + 1) & (x->thrcap - 1);
	return &x->thr[j];
}

/* kernel object records: the process of a thread, the thread */
static void write_names(struct view *v, struct fxt *x, const struct thr *th)
{
	struct out *o = x->out;
	uint32_t name;
	char *p;

	if (th->pr || (th->t && th->tid == th->pid)) {
		const struct strace_name *n = th->pr ? th->pr : th->t;
		name = intern(v, x, n->id, NULL);
		p = put64(o->p, RT_KOBJ | 2u << 4 | OBJ_PROCESS << 16 |
					(uint64_t)name << 24);
		o->p = put64(p, th->pid);
	}
	if (th->t) {
		name = intern(v, x, th->t->id, NULL);
		p = put64(o->p, RT_KOBJ | 4u << 4 | OBJ_THREAD << 16 |
					(uint64_t)name << 24 | 1ull << 40);
		p = put64(p, th->tid);
		p = put64(p, ARG_KOID | 2u << 4 | FIX_PROCESS << 16);
		o->p = put64(p, th->pid);
	}
}

/*
 * The thread index of tid, its thread record (and kernel object records
 * when its names are new) written first when needed. Its pid is found
 * when the thread changes, as fmt_chrome.c finds it, so that both
 * formats give a slice the same pid.
 */
static __attribute__((noinline)) uint32_t thread_slow(struct view *v,
						      struct fxt *x,
						      uint32_t tid)
{
	struct strace_names *nm;
	struct thr *th;
	uint64_t gen;
	unsigned s;

	th = thread_entry(x, tid);
	if (!th) {
		view_fail(v, -ENOMEM);
		return 0;
	}
	nm = view_names(v);
	gen = nm ? strace_names_generation(nm) : 0;
	if (!th->used || th->gen != gen) {
		const struct strace_name *t, *pr;
		uint32_t pid;
		t = nm ? strace_names_thread(nm, tid) : NULL;
		pid = !t ? tid
		      : t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux
						    : (uint32_t)t->key;
		pr = nm ? strace_names_process(nm, pid) : NULL;
		if (!th->used) {
			th->used = 1;
			th->tid = tid;
			x->nthr++;
		}
		th->gen = gen;
		th->pid = pid;
		if (t != th->t || pr != th->pr) {
			th->t = t;
			th->pr = pr;
			write_names(v, x, th);
		}
	}
	s = th->slot;
	if (!s || x->slot_tid[s] != tid || x->slot_pid[s] != th->pid) {
		if (!s || x->slot_tid[s] != tid) {
			if (x->nslots < THREAD_SLOTS - 1) {
				s = ++x->nslots;
			} else { /* second chance over 1..255 */
				s = x->hand;
				while (x->slot_ref[s]) {
					x->slot_ref[s] = 0;
					s = s % (THREAD_SLOTS - 1) + 1;
				}
				x->hand = s % (THREAD_SLOTS - 1) + 1;
			}
			th->slot = (uint8_t)s;
		}
		x->slot_tid[s] = tid;
		x->slot_pid[s] = th->pid;
		struct out *o = x->out;
		char *p = put64(o->p, RT_THREAD | 3u << 4 | (uint64_t)s << 16);
		p = put64(p, th->pid);
		o->p = put64(p, tid);
	}
	x->slot_ref[s] = 1;
	x->cur_tid = tid;
	x->cur_slot = (uint8_t)s;
	x->cur_th = th;
	return s;
}

/* thread_slow()'s fast path; x->cur_th is then tid's entry (0: out of
 * memory, the view failed) */
static inline uint32_t thread_ref(struct view *v, struct fxt *x, uint32_t tid)
{
	if (x->cur_slot && x->cur_tid == tid)
		return x->cur_slot;
	return thread_slow(v, x, tid);
}

static int fxt_open(struct view *v)
{
	static const char provider[] = "ptrace-read";
	struct fxt *x = calloc(1, sizeof(*x));
	struct out *o = view_out(v);
	char *p;

	if (!x) {
		view_fail(v, -1);
		return -1;
	}
	x->hand = 1;
	x->v = v;
	x->out = o;
	view_set_state(v, x);
	view_set_event_types(v, GAP_TYPES);
	p = put64(o->p, MAGIC);
	p = put64(p, RT_METADATA | 3u << 4 | 1u << 16 |
			     (uint64_t)(sizeof(provider) - 1) << 52);
	memcpy(p, provider, sizeof(provider) - 1);
	p = pad(p + sizeof(provider) - 1, sizeof(provider) - 1);
	p = put64(p, RT_METADATA | 1u << 4 | 2u << 16);
	p = put64(p, RT_INIT | 2u << 4);
	p = put64(p, TICKS_PER_SECOND);
	for (uint32_t i = 1; i < FIX_END; i++)
		p = put_string(p, i, fixed[i], strlen(fixed[i]));
	o->p = p;
	return out_room(o);
}

/* A ptwrite: an instant of category and name "ptwrite" on its thread,
 * its ip and payload the arguments. */
static void ptwrite_instant(struct view *v, const struct strace_event *e)
{
	struct fxt *x = view_state(v);
	struct out *o = x->out;
	uint32_t thread = thread_ref(v, x, e->tid);
	char *p;

	if (!thread)
		return;
	p = put64(o->p, RT_EVENT | 6u << 4 | EV_INSTANT << 16 | 2u << 20 |
				(uint64_t)thread << 24 |
				(uint64_t)FIX_PTWRITE << 32 |
				(uint64_t)FIX_PTWRITE << 48);
	p = put64(p, e->time);
	p = put64(p, ARG_POINTER | 2u << 4 | FIX_IP << 16);
	p = put64(p, e->a);
	p = put64(p, ARG_UINT64 | 2u << 4 | (uint64_t)FIX_PAYLOAD << 16);
	o->p = put64(p, e->b);
	if (out_room(o) < 0)
		view_fail(v, -1);
}

/* Gaps, errors and losses: instant events on their thread; ptwrites. */
static void fxt_event(struct view *v, const struct strace_event *e)
{
	struct fxt *x;
	struct out *o;
	uint32_t name, thread;
	uint64_t arg;
	char *p;

	switch (e->type) {
	case STRACE_EV_OVERFLOW:
		name = FIX_OVERFLOW;
		break;
	case STRACE_EV_ERROR:
		name = FIX_ERROR;
		break;
	case STRACE_EV_LOST:
		name = FIX_LOST;
		break;
	case STRACE_EV_PTWRITE:
		ptwrite_instant(v, e);
		return;
	case STRACE_EV_TRACE_BEGIN:
		if (e->b != STRACE_REASON_SYNC &&
		    e->b != STRACE_REASON_OVERFLOW &&
		    e->b != STRACE_REASON_ERROR && e->b != STRACE_REASON_LOST)
			return;
		name = FIX_RESUMES;
		break;
	default: /* (a type that aliases one of those, view.h) */
		return;
	}
	x = view_state(v);
	o = x->out;
	thread = thread_ref(v, x, e->tid);
	if (!thread)
		return;
	if (e->type == STRACE_EV_ERROR) {
		const char *s = strace_error_name(e->flags);
		if (s)
			name = intern(v, x, ID_ERROR | e->flags, s);
	}
	arg = e->type == STRACE_EV_LOST
		      ? ARG_UINT64 | 2u << 4 | FIX_COUNT << 16
		      : ARG_POINTER | 2u << 4 | FIX_IP << 16;
	p = put64(o->p, RT_EVENT | 4u << 4 | EV_INSTANT << 16 | 1u << 20 |
				(uint64_t)thread << 24 | (uint64_t)FIX_GAP << 32 |
				(uint64_t)name << 48);
	p = put64(p, e->time);
	p = put64(p, arg);
	o->p = put64(p, e->a);
	if (out_room(o) < 0)
		view_fail(v, -1);
}

/* an event record's header word */
static inline uint64_t event_header(uint64_t type, uint64_t nargs,
				    uint64_t words, uint64_t thread,
				    uint64_t cat, uint64_t name)
{
	return RT_EVENT | words << 4 | type << 16 | nargs << 20 |
	       thread << 24 | cat << 32 | name << 48;
}

/* The frame is written at the end, as a complete event: it begins at
 * the thread's first time, where a root may come under it (see above). */
static inline int at_first_time(const struct thr *th,
				const struct strace_frame *f)
{
	return f->begin == th->tfirst || !f->begin ||
	       f->kind == STRACE_FRAME_ROOT || f->kind == STRACE_FRAME_SEED;
}

static uint32_t frame_category(unsigned kind)
{
	return FIX_CALL + (kind < 6 ? kind : 0);
}

/* the string id of the category "inlined" (no label's, ID_ERROR's or
 * function's) */
#define ID_INLINED_CAT (1ull << 59)

/* A frame's category: its kind's, or "inlined" (--inline; a string of
 * its own, not a fixed one: without --inline the output stays the same) */
static inline uint32_t category(struct view *v, struct fxt *x, unsigned kind,
				unsigned flags)
{
	if (__builtin_expect(flags & STRACE_FRAME_INLINED, 0))
		return intern(v, x, ID_INLINED_CAT, "inlined");
	return frame_category(kind);
}

/* A frame's begin. Its thread is the one of its end (inline when the
 * thread's pid changed meanwhile). */
static __attribute__((noinline)) void enter_slow(void *state,
						 const struct strace_frame *f)
{
	struct fxt *x = state;
	struct view *v = x->v;
	struct out *o = x->out;
	uint32_t thread = thread_ref(v, x, f->tid), name;
	struct thr *th = x->cur_th;
	char *p;

	if (!thread)
		return;
	/* usually: after the thread's first time, a call or an entry */
	if (__builtin_expect(f->begin <= th->tfirst || !th->tfirst ||
				     (0xcu >> f->kind & 1),
			     0)) {
		if (!th->tfirst)
			th->tfirst = f->begin;
		if (at_first_time(th, f))
			return;
	}
	if (!th->nbe++)
		th->bepid = th->pid;
	name = frame_name(v, x, f);
	if (__builtin_expect(th->bepid == th->pid, 1)) {
		p = put64(o->p, event_header(EV_BEGIN, 0, 2, thread,
					     category(v, x, f->kind, f->flags),
					     name));
		p = put64(p, f->begin);
	} else {
		p = put64(o->p, event_header(EV_BEGIN, 0, 4, 0,
					     category(v, x, f->kind, f->flags),
					     name));
		p = put64(p, f->begin);
		p = put64(p, th->bepid);
		p = put64(p, f->tid);
	}
	o->p = p;
	if (out_room(o) < 0)
		view_fail(v, -1);
}

/* the bool arguments of a frame's end */
static char *put_flags(char *p, unsigned flags)
{
	if (flags & STRACE_FRAME_GAP)
		p = put64(p, ARG_BOOL | 1u << 4 | FIX_GAP << 16 | 1ull << 32);
	if (flags & STRACE_FRAME_UNWOUND)
		p = put64(p,
			  ARG_BOOL | 1u << 4 | FIX_UNWOUND << 16 | 1ull << 32);
	return p;
}

static int cmp_dfr(const void *a, const void *b)
{
	const struct dfr *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end) /* the enclosing one first */
		return x->end > y->end ? -1 : 1;
	/* equal times: the order they left in, as -f chrome writes them
	 * and readers stack them */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The thread's frames kept for the end, as complete events: by begin,
 * the longer first, as readers nest them. */
static void write_dfr(struct view *v, struct fxt *x, struct thr *th)
{
	struct out *o = x->out;
	uint32_t tid = th->tid, n = th->ndfr;
	struct dfr *d = th->dfr;

	qsort(d, n, sizeof(*d), cmp_dfr);
	th->ndfr = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t thread = thread_ref(v, x, tid), name;
		uint64_t nargs = !!(d[i].flags & STRACE_FRAME_GAP) +
				 !!(d[i].flags & STRACE_FRAME_UNWOUND);
		int in = !thread || d[i].pid != x->cur_th->pid;
		char *p;

		name = name_index(v, x, d[i].kind, d[i].id);
		p = put64(o->p, event_header(EV_COMPLETE, nargs,
					     3 + nargs + (in ? 2 : 0),
					     in ? 0 : thread,
					     category(v, x, d[i].kind,
						      d[i].flags),
					     name));
		p = put64(p, d[i].begin);
		if (in) {
			p = put64(p, d[i].pid);
			p = put64(p, tid);
		}
		p = put_flags(p, d[i].flags);
		o->p = put64(p, d[i].end);
		if (out_room(o) < 0) {
			view_fail(v, -1);
			return;
		}
	}
}

/* A frame at the thread's first time is kept for the end. */
static __attribute__((noinline)) void keep(struct view *v, struct fxt *x,
					   struct thr *th,
					   const struct strace_frame *f)
{
	if (th->ndfr == th->capdfr) {
		size_t cap = th->capdfr;
		struct dfr *d = (cap ? 2 * cap : 16) <= DFR_MAX
					? strace_grow(th->dfr, &cap, sizeof(*d), 16)
					: NULL;
		if (d) {
			th->dfr = d;
			th->capdfr = (uint32_t)cap;
		} else {
			/* full (or no memory): written now */
			write_dfr(v, x, th);
		}
	}
	th->dfr[th->ndfr++] = (struct dfr){f->begin, f->end,	 frame_id(x->v, f),
					   th->seq++, th->pid, f->kind,
					   f->flags};
}

/* A frame's end. */
static __attribute__((noinline)) void leave_slow(void *state,
						 const struct strace_frame *f)
{
	struct fxt *x = state;
	struct view *v = x->v;
	struct out *o = x->out;
	uint32_t thread = thread_ref(v, x, f->tid);
	struct thr *th = x->cur_th;
	uint64_t nargs;
	char *p;

	if (!thread)
		return;
	if (__builtin_expect(f->begin <= th->tfirst || (0xcu >> f->kind & 1),
			     0) &&
	    at_first_time(th, f)) {
		keep(v, x, th, f);
		return;
	}
	if (th->nbe)
		th->nbe--;
	if (__builtin_expect(!(f->flags & (STRACE_FRAME_GAP |
					   STRACE_FRAME_UNWOUND)) &&
				     th->bepid == th->pid,
			     1)) {
		p = put64(o->p, event_header(EV_END, 0, 2, thread, 0, 0));
		o->p = put64(p, f->end);
		if (out_room(o) < 0)
			view_fail(v, -1);
		return;
	}
	nargs = !!(f->flags & STRACE_FRAME_GAP) +
		!!(f->flags & STRACE_FRAME_UNWOUND);
	if (th->bepid == th->pid) {
		p = put64(o->p, event_header(EV_END, nargs, 2 + nargs, thread,
					     0, 0));
		p = put64(p, f->end);
	} else {
		p = put64(o->p, event_header(EV_END, nargs, 4 + nargs, 0, 0,
					     0));
		p = put64(p, f->end);
		p = put64(p, th->bepid);
		p = put64(p, f->tid);
	}
	o->p = put_flags(p, f->flags);
	if (out_room(o) < 0)
		view_fail(v, -1);
}

static __attribute__((noinline)) void flush(struct fxt *x)
{
	if (out_flush(x->out) < 0)
		view_fail(x->v, -1);
}

/*
 * The usual begin and end, two words each, without a call: a call or an
 * entry after its thread's first time, on the thread of the last record,
 * its name at hand (the front table), its pid the one of the begins
 * open. The rest, and the same records, in enter_slow() and
 * leave_slow().
 */
static void fxt_enter(void *state, const struct strace_frame *f)
{
	struct fxt *x = state;
	struct thr *th = x->cur_th;
	struct out *o = x->out;
	uint32_t name;
	char *p;

	if (__builtin_expect(!x->cur_slot || x->cur_tid != f->tid ||
				     !th->tfirst || f->begin <= th->tfirst ||
				     f->kind > STRACE_FRAME_ENTRY ||
				     (f->flags & STRACE_FRAME_INLINED) ||
				     !(name = known_name(x, frame_id(x->v, f))) ||
				     (th->nbe && th->bepid != th->pid),
			     0)) {
		enter_slow(state, f);
		return;
	}
	if (!th->nbe++)
		th->bepid = th->pid;
	p = put64(o->p, event_header(EV_BEGIN, 0, 2, x->cur_slot,
				     frame_category(f->kind), name));
	o->p = put64(p, f->begin);
	if (o->p > o->limit)
		flush(x);
}

static void fxt_leave(void *state, const struct strace_frame *f)
{
	struct fxt *x = state;
	struct thr *th = x->cur_th;
	struct out *o = x->out;
	char *p;

	if (__builtin_expect(!x->cur_slot || x->cur_tid != f->tid ||
				     f->begin <= th->tfirst ||
				     f->kind > STRACE_FRAME_ENTRY ||
				     (f->flags & (STRACE_FRAME_GAP |
						  STRACE_FRAME_UNWOUND)) ||
				     th->bepid != th->pid,
			     0)) {
		leave_slow(state, f);
		return;
	}
	if (th->nbe)
		th->nbe--;
	p = put64(o->p, event_header(EV_END, 0, 2, x->cur_slot, 0, 0));
	o->p = put64(p, f->end);
	if (o->p > o->limit)
		flush(x);
}

static int fxt_finish(struct view *v)
{
	struct fxt *x = view_state(v);

	for (size_t i = 0; i < x->thrcap; i++)
		if (x->thr[i].used && x->thr[i].ndfr)
			write_dfr(v, x, &x->thr[i]);
	return out_room(x->out);
}

static void fxt_close(struct view *v)
{
	struct fxt *x = view_state(v);

	if (x) {
		for (size_t i = 0; i < x->thrcap; i++)
			free(x->thr[i].dfr);
		free(x->thr);
	}
	free(x);
	view_set_state(v, NULL);
}

const struct view_format view_fxt = {fxt_open,  fxt_event,  fxt_enter,
				     fxt_leave, fxt_finish, fxt_close};
