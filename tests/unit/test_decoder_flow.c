/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_flow.c - random control flow through real code.
 *
 * A generator walks libc's real code (mapped like ld.so would), choosing
 * conditional outcomes and indirect targets at random, keeping the
 * hardware's return-compression stack, and encodes the flow as PT with
 * libipt's encoder (PSB+ every few KiB, short and long TNT, TIP with every
 * IP compression, TIP.PGD/PGE around syscalls, TSC/TMA/MTC/CYC timing).
 * It records the events the flow implies. Then:
 *  - the fast walker must give exactly those events;
 *  - libipt's block decoder (the reference), which decodes the
 *    instructions with its own instruction decoder, must agree with the
 *    fast walker (a wrong block length or a missed branch in our summaries
 *    would make them disagree);
 *  - with timing (TSC, TMA, MTC, CYC, CBR), the fast walker's times follow
 *    perf's rule (docs/decoder.md) against the generator's clock, and
 *    never go backwards.
 */
#include <intel-pt.h>

#include "harness.h"
#include "decoder_testlib.h"
#include "decoder/packet.h"
#include "decoder/segment.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define BIAS 0x7f3a00000000ull
#define MAXEV (1 << 18)

static struct strace_image *img;
static struct strace_bcache *cache;
static uint64_t *funcs;
static size_t nfuncs;

static uint64_t rng;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int setup(void)
{
	char *out, *line, *save = NULL;
	size_t cap = 0;

	if (img)
		return 1;
	if (access(LIBC, R_OK) || !tl_have("nm"))
		return 0;
	if (strace_image_new(NULL, &img) || tl_map_elf(img, LIBC, BIAS) <= 0 ||
	    strace_bcache_new(0, &cache))
		return 0;
	out = tl_run("nm -D --defined-only " LIBC " | awk '$2 ~ /^[TW]$/ {print $1}'");
	if (!out)
		return 0;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (nfuncs == cap) {
			cap = cap ? cap * 2 : 4096;
			funcs = realloc(funcs, cap * sizeof(*funcs));
		}
		funcs[nfuncs++] = BIAS + strtoull(line, NULL, 16);
	}
	free(out);
	return nfuncs > 100;
}

struct evs {
	struct strace_event *v;
	size_t n;
};

static uint64_t cur_time; /* the generator's TSC when it makes an event */

static void push_ev(struct evs *e, unsigned type, unsigned flags, uint64_t a,
		    uint64_t b)
{
	if (e->n < MAXEV) {
		struct strace_event *x = &e->v[e->n++];
		memset(x, 0, sizeof(*x));
		x->type = (uint16_t)type;
		x->flags = (uint16_t)flags;
		x->a = a;
		x->b = b;
		x->time = cur_time;
	}
}

static int collect(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;
	if (e->n < MAXEV)
		e->v[e->n++] = *ev;
	return 0;
}

/* --- the generator --------------------------------------------------------- */

struct gen {
	struct pt_encoder *enc;
	uint8_t *buf;
	size_t cap;
	uint64_t tnt;
	int ntnt, tnt_max;
	uint64_t rs[64];
	unsigned rs_top, rs_n;
	uint64_t ip;
	struct evs want;
	int timing;
	uint64_t tsc, ctc, mtc_tsc; /* mtc_tsc: TSC at the last TSC/MTC */
	uint64_t last_psb;
	int all;
	size_t confirmed_n; /* events the trace vouches for so far */
	uint64_t confirmed_ip;
	/* PEBS-via-PT records put between the packets (pebs_record()):
	 * what each pebs event must say, in order */
	int pebs;
	struct pebs_truth {
		uint64_t ip, counters;
		unsigned items;
	} *recs;
	size_t nrecs;
};

/* A packet resolved a branch (or a PSB+ FUP named the ip): everything
 * generated so far is what a decoder can know. */
static void confirm(struct gen *g)
{
	g->confirmed_n = g->want.n;
	g->confirmed_ip = g->ip;
}

static void put(struct gen *g, struct pt_packet *p)
{
	if (pt_enc_next(g->enc, p) < 0)
		th_failed_checks++;
}

static void flush_tnt(struct gen *g)
{
	struct pt_packet p = {0};

	if (!g->ntnt)
		return;
	p.type = g->ntnt > 6 ? ppt_tnt_64 : ppt_tnt_8;
	p.payload.tnt.bit_size = (uint8_t)g->ntnt;
	p.payload.tnt.payload = g->tnt;
	put(g, &p);
	g->tnt = 0;
	g->ntnt = 0;
	g->tnt_max = (rnd() & 1) ? 6 : 1 + (int)(rnd() % 47);
}

static void add_bit(struct gen *g, int taken)
{
	g->tnt = (g->tnt << 1) | (uint64_t)taken;
	if (++g->ntnt >= g->tnt_max)
		flush_tnt(g);
}

static void ip_pkt(struct gen *g, enum pt_packet_type t, uint64_t ip)
{
	static const enum pt_ip_compression ipcs[] = {
		pt_ipc_update_16, pt_ipc_update_32, pt_ipc_sext_48,
		pt_ipc_update_48, pt_ipc_full};
	struct pt_packet p = {0};

	flush_tnt(g);
	p.type = t;
	/* any compression the encoder can express from the last IP; the
	 * encoder keeps last_ip, so only those that reach ip are valid:
	 * full and sext_48 always are */
	p.payload.ip.ipc = ipcs[rnd() % 5];
	if (p.payload.ip.ipc != pt_ipc_full &&
	    p.payload.ip.ipc != pt_ipc_sext_48)
		p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	if (!ip)
		p.payload.ip.ipc = pt_ipc_suppressed;
	put(g, &p);
}

static void timing(struct gen *g, int force_tsc)
{
	struct pt_packet p = {0};

	if (!g->timing)
		return;
	flush_tnt(g);
	if (force_tsc) {
		g->tsc = (g->tsc + 1000) & ~3ull;
		g->mtc_tsc = g->tsc;
		g->ctc = g->tsc / 4; /* TSC:CTC = 4:1 */
		cur_time = g->tsc;
		p.type = ppt_tsc;
		p.payload.tsc.tsc = g->tsc;
		put(g, &p);
		p.type = ppt_tma;
		p.payload.tma.ctc = (uint16_t)g->ctc;
		p.payload.tma.fc = 0;
		put(g, &p);
		return;
	}
	if (rnd() & 1) {
		/* CYC: core cycles; CBR 20 = max non-turbo 20, so one
		 * cycle is one TSC tick */
		uint64_t c = 1 + rnd() % 20;
		p.type = ppt_cyc;
		p.payload.cyc.value = c;
		put(g, &p);
		g->tsc += c;
		cur_time = g->tsc;
		return;
	}
	/* an MTC every 2^3 CTC ticks (mtc_freq 3): 32 TSC ticks; the CYC
	 * ticks since the last MTC are inside that period */
	{
		/* the next MTC after now (cycles included): time never
		 * goes back, and the CTC it carries is where TSC/4 is */
		uint64_t n = (g->tsc / 4 + 8) & ~7ull;
		g->tsc = n * 4;
		g->mtc_tsc = g->tsc;
		g->ctc = n;
		cur_time = g->tsc;
	}
	p.type = ppt_mtc;
	p.payload.mtc.ctc = (uint8_t)(g->ctc >> 3);
	put(g, &p);
}

static void psbplus(struct gen *g, uint64_t ip)
{
	struct pt_packet p = {0};

	flush_tnt(g);
	g->rs_n = 0; /* the hardware compresses no return across a PSB */
	p.type = ppt_psb;
	put(g, &p);
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	put(g, &p);
	if (g->timing) {
		g->tsc = (g->tsc + 500) & ~3ull;
		g->mtc_tsc = g->tsc;
		g->ctc = g->tsc / 4;
		cur_time = g->tsc;
		memset(&p, 0, sizeof(p));
		p.type = ppt_tsc;
		p.payload.tsc.tsc = g->tsc;
		put(g, &p);
		p.type = ppt_tma;
		p.payload.tma.ctc = (uint16_t)g->ctc;
		p.payload.tma.fc = 0;
		put(g, &p);
		p.type = ppt_cbr;
		p.payload.cbr.ratio = 20;
		put(g, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_fup;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	put(g, &p);
	p.type = ppt_psbend;
	put(g, &p);
}

/* A PEBS-via-PT record where the flow stands, between two packets (the
 * TNT bits so far are flushed first): the basic info block (its IP item
 * the flow's address, the applicable counters), then up to two more
 * blocks of other types, each with 4- or 8-byte items and PADs among
 * them; a BEP without IP, or with it and a FUP at the flow's address (a
 * location: the events up to there are vouched for). */
static void pebs_record(struct gen *g)
{
	static const uint8_t types[] = {1, 5, 8, 16};
	uint8_t b[512];
	size_t n = 0;
	unsigned nblk = 1 + (unsigned)(rnd() % 3), items = 0;
	struct pebs_truth t = {0, 0, 0};
	uint64_t off = 0;

	flush_tnt(g);
	for (unsigned k = 0; k < nblk; k++) {
		unsigned sz = rnd() & 1 ? 4 : 8;
		unsigned ni = 1 + (unsigned)(rnd() % 6);
		unsigned type = k ? types[rnd() % 4] : 4;

		b[n++] = 0x02;
		b[n++] = 0x63;
		b[n++] = (uint8_t)(type | (sz == 4 ? 0x80 : 0));
		for (unsigned id = 0; id < ni; id++) {
			uint64_t v = k == 0 && id == 0 ? g->ip : rnd();

			if (sz == 4)
				v &= 0xffffffff;
			if (k == 0 && id == 0)
				t.ip = v;
			if (k == 0 && id == 1)
				t.counters = v;
			b[n++] = (uint8_t)(id << 3 | 4);
			for (unsigned j = 0; j < sz; j++)
				b[n++] = (uint8_t)(v >> (8 * j));
			if (rnd() % 4 == 0)
				b[n++] = 0x00;
			items++;
		}
	}
	int with_ip = rnd() & 1;

	b[n++] = 0x02;
	b[n++] = with_ip ? 0xb3 : 0x33;
	pt_enc_get_offset(g->enc, &off);
	memcpy(g->buf + off, b, n);
	pt_enc_sync_set(g->enc, off + n);
	if (with_ip) {
		ip_pkt(g, ppt_fup, g->ip);
		confirm(g);
	}
	t.items = items;
	g->recs = realloc(g->recs, (g->nrecs + 1) * sizeof(*g->recs));
	g->recs[g->nrecs++] = t;
}

static int same_sym(uint64_t a, uint64_t b)
{
	struct strace_symbol x, y;
	int rx = strace_image_symbol(img, a, &x), ry = strace_image_symbol(img, b, &y);
	if (rx && ry)
		return 1;
	if (rx || ry)
		return 0;
	return x.start == y.start;
}

static void jump_ev(struct gen *g, uint64_t from, uint64_t to, unsigned fl)
{
	if (!same_sym(from, to))
		push_ev(&g->want, STRACE_EV_JUMP, fl, from, to);
	else if (g->all)
		push_ev(&g->want, STRACE_EV_JUMP, fl | STRACE_F_INTRA, from,
			to);
}

static uint64_t random_func(void)
{
	return funcs[rnd() % nfuncs];
}

static int usable(uint64_t ip)
{
	const struct strace_block *b = strace_bcache_get(cache, img, ip);
	return b->kind != STRACE_BK_NOCODE && b->kind != STRACE_BK_BAD &&
	       b->kind != STRACE_BK_FAR && b->kind != STRACE_BK_IRET;
}

/* Generate: returns the stream length. */
static size_t generate(struct gen *g, long steps)
{
	struct pt_config cfg;
	uint64_t off = 0;

	pt_config_init(&cfg);
	cfg.begin = g->buf;
	cfg.end = g->buf + g->cap;
	g->enc = pt_alloc_encoder(&cfg);
	g->tnt_max = 6;
	do
		g->ip = random_func();
	while (!usable(g->ip));
	cur_time = g->timing ? g->tsc + 500 : 0;
	psbplus(g, g->ip);
	push_ev(&g->want, STRACE_EV_TRACE_BEGIN, 0, g->ip, STRACE_REASON_START);
	g->last_psb = 0;
	confirm(g);

	for (long s = 0; s < steps; s++) {
		struct strace_block b = *strace_bcache_get(cache, img, g->ip);
		uint64_t term = b.start + b.len - b.term_len, fall = b.start + b.len;
		uint64_t to;

		pt_enc_get_offset(g->enc, &off);
		if (off + 4096 > g->cap)
			break;
		if (b.kind == STRACE_BK_NOCODE || b.kind == STRACE_BK_BAD ||
		    b.kind == STRACE_BK_FAR || b.kind == STRACE_BK_IRET ||
		    b.kind == STRACE_BK_INT) {
			/* a dead end: the trace stops here */
			break;
		}
		if (off - g->last_psb > 2048 && (rnd() % 4) == 0) {
			psbplus(g, g->ip);
			g->last_psb = off;
			confirm(g);
		}
		if (g->timing && rnd() % 16 == 0)
			timing(g, rnd() % 8 == 0);
		if (g->pebs && rnd() % 16 == 0)
			pebs_record(g);
		switch (b.kind) {
		case STRACE_BK_NONE:
			g->ip = fall;
			break;
		case STRACE_BK_CALL:
			/* the hardware does not push a call to the next
			 * instruction for return compression */
			if (b.target != fall) {
				g->rs_top = (g->rs_top + 1) % 64;
				g->rs[g->rs_top] = fall;
				if (g->rs_n < 64)
					g->rs_n++;
			}
			push_ev(&g->want, STRACE_EV_CALL, 0, term, b.target);
			g->ip = b.target;
			break;
		case STRACE_BK_JMP:
			jump_ev(g, term, b.target, 0);
			g->ip = b.target;
			break;
		case STRACE_BK_JCC:
			if (rnd() & 1) {
				add_bit(g, 1);
				jump_ev(g, term, b.target, STRACE_F_CONDITIONAL);
				g->ip = b.target;
			} else {
				add_bit(g, 0);
				g->ip = fall;
			}
			confirm(g);
			break;
		case STRACE_BK_CALL_IND:
			do
				to = random_func();
			while (!usable(to));
			ip_pkt(g, ppt_tip, to);
			g->rs_top = (g->rs_top + 1) % 64;
			g->rs[g->rs_top] = fall;
			if (g->rs_n < 64)
				g->rs_n++;
			push_ev(&g->want, STRACE_EV_CALL, STRACE_F_INDIRECT, term,
				to);
			g->ip = to;
			confirm(g);
			break;
		case STRACE_BK_JMP_IND:
			do
				to = random_func();
			while (!usable(to));
			ip_pkt(g, ppt_tip, to);
			jump_ev(g, term, to, STRACE_F_INDIRECT);
			g->ip = to;
			confirm(g);
			break;
		case STRACE_BK_RET:
			if (g->rs_n && usable(g->rs[g->rs_top])) {
				to = g->rs[g->rs_top];
				g->rs_top = (g->rs_top + 63) % 64;
				g->rs_n--;
				add_bit(g, 1);
				push_ev(&g->want, STRACE_EV_RETURN, 0, term, to);
			} else {
				do
					to = random_func();
				while (!usable(to));
				ip_pkt(g, ppt_tip, to);
				push_ev(&g->want, STRACE_EV_RETURN,
					STRACE_F_INDIRECT, term, to);
			}
			g->ip = to;
			confirm(g);
			break;
		case STRACE_BK_SYSCALL:
		case STRACE_BK_SYSENTER:
			ip_pkt(g, ppt_tip_pgd, 0);
			push_ev(&g->want, STRACE_EV_SYSCALL, 0, term, 0);
			if (g->timing)
				timing(g, 1);
			ip_pkt(g, ppt_tip_pge, fall);
			push_ev(&g->want, STRACE_EV_SYSRET, 0, 0, fall);
			g->ip = fall;
			confirm(g);
			break;
		}
	}
	flush_tnt(g);
	/* the end: the decoder stops where the last packet left it */
	g->want.n = g->confirmed_n;
	push_ev(&g->want, STRACE_EV_TRACE_END, 0, g->confirmed_ip,
		STRACE_REASON_END);
	pt_enc_get_offset(g->enc, &off);
	pt_free_encoder(g->enc);
	return (size_t)off;
}

/* the branches the last decode() counted (strace_walk_stats) */
static uint64_t last_branches;

/* The generator's timing (MTC every 8 CTC, 4 TSC a CTC), in o; perf time
 * = TSC, to compare easily. */
static void gen_timing(struct strace_walk_opts *o)
{
	o->has_time = 1;
	o->time.time_mult = 1;
	o->time.tsc_ctc_ratio_n = 4;
	o->time.tsc_ctc_ratio_d = 1;
	o->time.mtc_period = 3;
	o->time.has_mtc = 1;
	o->time.max_nonturbo_ratio = 20;
}

/* timed: 0 no times; 1 the times of the timing packets
 * (STRACE_WALK_EXACT_TIMES); 2 spread between them (the default). */
static long decode(const uint8_t *buf, size_t len, unsigned flags,
		   struct evs *out, int timed)
{
	struct strace_walk_opts o = {0};
	struct strace_walker *w;
	long n;

	o.size = sizeof(o);
	o.flags = flags | (timed == 1 ? STRACE_WALK_EXACT_TIMES : 0);
	o.emit = collect;
	o.emit_arg = out;
	if (timed)
		gen_timing(&o);
	out->n = 0;
	if (strace_walker_new(img, &o, &w))
		return -1000;
	n = strace_walker_decode(w, buf, len);
	{
		struct strace_walk_stats st;

		strace_walker_stats(w, &st);
		last_branches = st.branches;
	}
	strace_walker_free(w);
	return n;
}

static int same_ev(const struct strace_event *x, const struct strace_event *y)
{
	const unsigned mask = STRACE_F_ASYNC | STRACE_F_CONDITIONAL |
			      STRACE_F_INTRA | STRACE_F_INDIRECT;
	return x->type == y->type && x->a == y->a && x->b == y->b &&
	       (x->flags & mask) == (y->flags & mask);
}

static void show(const char *who, const struct strace_event *e)
{
	struct strace_symbol s;
	const char *n = strace_image_symbol(img, e->a, &s) ? "?" : s.name;
	fprintf(stderr, "    %s: type %u flags %x %llx (%s) -> %llx\n", who,
		e->type, e->flags, (unsigned long long)e->a, n,
		(unsigned long long)e->b);
}

static size_t tail, exact_times, timed_events, spread_moved, spread_events;

/*
 * The times spread between timing packets (decoder/decoder.h), against
 * exact, the same decode with the packets' times: the same events; no
 * time goes backwards; each lies between its packet's time and the next
 * later packet time of the stream; an event still flagged exact was so
 * and kept its time (the spreading strips the flag of one it moves, and
 * leaves an error's code whole).
 * For the fast walker, the cache of TNT runs gives the same times as the
 * walk bit by bit (its instruction counts are the walk's).
 */
static void spread_checks(uint64_t seed, const uint8_t *buf, size_t len,
			  int all, const struct evs *exact, unsigned dec)
{
	unsigned f = dec | (all ? STRACE_WALK_ALL_BRANCHES : 0);
	struct evs sp, bit;
	size_t i, next = 0, bad = 0;

	sp.v = calloc(MAXEV, sizeof(*sp.v));
	bit.v = calloc(MAXEV, sizeof(*bit.v));
	CHECK_INT(decode(buf, len, f, &sp, 2), ==, (long)exact->n);
	for (i = 0; i < sp.n && i < exact->n; i++) {
		const struct strace_event *e = &exact->v[i], *s = &sp.v[i];
		uint64_t hi;

		/* the next event with another time: the interval's end if
		 * later (after damage, time may start again earlier: then
		 * the events before keep theirs) */
		if (next <= i)
			next = i + 1;
		while (next < exact->n && exact->v[next].time == e->time)
			next++;
		hi = next < exact->n && exact->v[next].time > e->time
			     ? exact->v[next].time
			     : e->time;
		/* an error's flags are its code: all of it is kept */
		unsigned keep = e->type == STRACE_EV_ERROR
					? 0xffff
					: (unsigned)~STRACE_F_TIME_EXACT;

		if (s->type != e->type || s->a != e->a || s->b != e->b ||
		    (s->flags & keep) != (e->flags & keep) ||
		    s->time < e->time || s->time > hi ||
		    (i && s->time < sp.v[i - 1].time &&
		     e->time >= exact->v[i - 1].time) ||
		    ((s->flags & STRACE_F_TIME_EXACT) &&
		     (s->time != e->time ||
		      !(e->flags & STRACE_F_TIME_EXACT)))) {
			if (bad++ < 3)
				fprintf(stderr,
					"  seed %llu%s event %zu (type %u): "
					"spread %llu, exact %llu, next %llu\n",
					(unsigned long long)seed,
					dec ? " (reference)" : "", i, e->type,
					(unsigned long long)s->time,
					(unsigned long long)e->time,
					(unsigned long long)hi);
		}
		spread_moved += s->time != e->time;
		spread_events++;
	}
	CHECK_INT(bad, ==, 0);
	if (!dec) {
		CHECK_INT(decode(buf, len, f | STRACE_WALK_BIT_BY_BIT, &bit, 2),
			  ==, (long)sp.n);
		CHECK(bit.n == sp.n && !memcmp(bit.v, sp.v, sp.n * sizeof(*sp.v)));
	}
	free(sp.v);
	free(bit.v);
}

static void run_seed(uint64_t seed, int timed, int all, size_t *nev,
		     size_t *bytes)
{
	struct gen g;
	struct evs fast, ref, bit;
	size_t len, i, j;
	const unsigned mask =
		STRACE_F_ASYNC | STRACE_F_CONDITIONAL | STRACE_F_INTRA;

	memset(&g, 0, sizeof(g));
	rng = seed;
	g.cap = 1 << 20;
	g.buf = malloc(g.cap);
	g.want.v = calloc(MAXEV, sizeof(*g.want.v));
	fast.v = calloc(MAXEV, sizeof(*fast.v));
	ref.v = calloc(MAXEV, sizeof(*ref.v));
	bit.v = calloc(MAXEV, sizeof(*bit.v));
	g.timing = timed;
	g.tsc = 1000000;
	g.all = all;
	len = generate(&g, 20000);
	*bytes += len;
	CHECK_INT(decode(g.buf, len, all ? STRACE_WALK_ALL_BRANCHES : 0, &fast,
			 timed),
		  >, 0);
	uint64_t fast_branches = last_branches;
	CHECK_INT(decode(g.buf, len,
			 STRACE_WALK_REFERENCE |
				 (all ? STRACE_WALK_ALL_BRANCHES : 0),
			 &ref, timed),
		  >, 0);
	uint64_t ref_branches = last_branches;
	/* the cache of recorded TNT runs changes nothing, to the bit */
	CHECK_INT(decode(g.buf, len,
			 STRACE_WALK_BIT_BY_BIT |
				 (all ? STRACE_WALK_ALL_BRANCHES : 0),
			 &bit, timed),
		  ==, (long)fast.n);
	CHECK(bit.n == fast.n &&
	      !memcmp(bit.v, fast.v, fast.n * sizeof(*fast.v)));
	*nev += g.want.n;
	/* fast == the generator's truth */
	for (i = 0; i < g.want.n && i < fast.n; i++) {
		if (!same_ev(&g.want.v[i], &fast.v[i])) {
			fprintf(stderr, "  seed %llu: event %zu of %zu differs\n",
				(unsigned long long)seed, i, g.want.n);
			show("want", &g.want.v[i]);
			show("fast", &fast.v[i]);
			if (i + 1 < g.want.n)
				show("next want", &g.want.v[i + 1]);
			th_failed_checks++;
			break;
		}
	}
	if (i == g.want.n || i == fast.n)
		CHECK_INT(fast.n, ==, g.want.n);
	/* times: within one timing step (an MTC: 32 ticks, a TSC: 1000) of
	 * the truth's clock. A direct branch walked after a timing packet
	 * that came between two flow packets gets the earlier time (no
	 * decoder can place it; perf does the same) */
	for (i = 0; timed && i < g.want.n && i < fast.n; i++) {
		if (fast.v[i].time + 1000 < g.want.v[i].time ||
		    fast.v[i].time > g.want.v[i].time + 1000) {
			if (th_failed_checks++ < 3)
				fprintf(stderr, "  seed %llu event %zu: time "
					"%llu, truth %llu\n",
					(unsigned long long)seed, i,
					(unsigned long long)fast.v[i].time,
					(unsigned long long)g.want.v[i].time);
		} else {
			exact_times += fast.v[i].time == g.want.v[i].time;
			timed_events++;
		}
	}
	/* reference == fast, except at the very end: after the last packet
	 * libipt runs on through direct branches, and it leaves the last
	 * TNT-resolved branch without its target (docs/decoder.md) */
	for (i = 0, j = 0; i < fast.n && j < ref.n; i++, j++) {
		const struct strace_event *x = &fast.v[i], *y = &ref.v[j];
		if (x->type == y->type && x->a == y->a && x->b == y->b &&
		    (x->flags & mask) == (y->flags & mask)) {
			/* times are not compared with libipt's: its MTC
			 * and CYC calibration differs from perf's rule, which
			 * the truth check above holds us to */
			continue;
		}
		break;
	}
	tail += (fast.n - i) + (ref.n - j);
	/* "branches" counts the same taken branches in both decoders, but
	 * for the ones in the tail the reference leaves out: those with
	 * events, and the last TNT-resolved branch (a jump inside one
	 * function has no event) */
	{
		uint64_t tail_branches = 1;

		for (size_t k = i; k < fast.n; k++)
			tail_branches += fast.v[k].type >= STRACE_EV_CALL &&
					 fast.v[k].type <= STRACE_EV_INTERRUPT &&
					 fast.v[k].type != STRACE_EV_SYSRET;
		CHECK(ref_branches <= fast_branches &&
		      ref_branches + tail_branches >= fast_branches);
		if (ref_branches > fast_branches ||
		    ref_branches + tail_branches < fast_branches)
			fprintf(stderr, "  seed %llu: branches: fast %llu, "
				"reference %llu, tail %llu\n",
				(unsigned long long)seed,
				(unsigned long long)fast_branches,
				(unsigned long long)ref_branches,
				(unsigned long long)tail_branches);
	}
	if (fast.n - i > 2 || ref.n - j > 6) {
		fprintf(stderr, "  seed %llu: fast %zu/%zu, reference %zu/%zu "
			"differ\n", (unsigned long long)seed, i, fast.n, j,
			ref.n);
		if (i < fast.n)
			show("fast", &fast.v[i]);
		if (j < ref.n)
			show("ref ", &ref.v[j]);
		th_failed_checks++;
	}
	if (timed) {
		for (i = 1; i < fast.n; i++)
			if (fast.v[i].time < fast.v[i - 1].time)
				th_failed_checks++;
		spread_checks(seed, g.buf, len, all, &fast, 0);
		spread_checks(seed, g.buf, len, all, &ref,
			      STRACE_WALK_REFERENCE);
	}
	free(g.buf);
	free(g.want.v);
	free(fast.v);
	free(ref.v);
	free(bit.v);
}

TEST(random_flow_through_libc)
{
	size_t nev = 0, bytes = 0;

	if (!setup())
		SKIP("no libc.so.6 or nm");
	for (uint64_t seed = 1; seed <= 20 && !th_failed_checks; seed++)
		run_seed(seed * 0x9e3779b97f4a7c15ull, 0, 0, &nev, &bytes);
	printf("  %zu events over %zu bytes of PT, 20 flows\n", nev, bytes);
}

TEST(random_flow_all_branches)
{
	size_t nev = 0, bytes = 0;

	if (!setup())
		SKIP("no libc.so.6 or nm");
	for (uint64_t seed = 1; seed <= 5 && !th_failed_checks; seed++)
		run_seed(seed * 0x51ed27ull + 3, 0, 1, &nev, &bytes);
}

TEST(random_flow_with_timing)
{
	size_t nev = 0, bytes = 0;

	if (!setup())
		SKIP("no libc.so.6 or nm");
	for (uint64_t seed = 1; seed <= 5 && !th_failed_checks; seed++)
		run_seed(seed * 0x2545f4914f6cdd1dull, 1, 0, &nev, &bytes);
	printf("  %zu of %zu event times exactly the truth's\n", exact_times,
	       timed_events);
	CHECK(exact_times * 10 > timed_events * 9);
	printf("  spread: %zu of %zu event times moved between timing "
	       "packets\n", spread_moved, spread_events);
	/* most events here have a time point of their own (a timing packet
	 * every 16 blocks), those between two move */
	CHECK(spread_moved > 100);
}

/* The spreader moves the events between two time points and strips
 * TIME_EXACT from those it moves; an error event's flags are its code
 * (STRACE_E_DESYNC has the bit of TIME_EXACT set): kept whole. */
TEST(spread_keeps_error_codes)
{
	struct strace_dec_spread sp = {0};
	struct strace_walk_opts o = {0};
	struct evs got = {calloc(8, sizeof(struct strace_event)), 0};
	struct strace_event e = {0};

	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = &got;
	sp.stop_cap = UINT64_MAX;
	e.type = STRACE_EV_CALL;
	e.flags = STRACE_F_TIME_EXACT;
	/* a whole interval first: 10 ns per instruction */
	for (unsigned k = 1; k <= 3; k++) {
		e.time = 1000 * k;
		CHECK_INT(spread_put(&sp, &o, &e, 100 * (k - 1)), ==, 0);
	}
	/* an error 50 instructions on (a stop: at that pace), a return
	 * 10 after it, then the next time point */
	e.type = STRACE_EV_ERROR;
	e.flags = STRACE_E_DESYNC;
	CHECK_INT(spread_put(&sp, &o, &e, 250), ==, 0);
	e.type = STRACE_EV_RETURN;
	e.flags = STRACE_F_TIME_EXACT;
	CHECK_INT(spread_put(&sp, &o, &e, 260), ==, 0);
	e.type = STRACE_EV_CALL;
	e.time = 4000;
	CHECK_INT(spread_put(&sp, &o, &e, 300), ==, 0);
	CHECK_INT(strace_dec_spread_flush(&sp, &o), ==, 0);
	REQUIRE(got.n == 6);
	CHECK_INT(got.v[3].time, ==, 3500);
	CHECK_INT(got.v[3].flags, ==, STRACE_E_DESYNC);
	CHECK_INT(got.v[4].time, ==, 3600);
	CHECK_INT(got.v[4].flags, ==, 0);
	CHECK_INT(got.v[5].flags, ==, STRACE_F_TIME_EXACT);
	strace_dec_spread_free(&sp);
	free(got.v);
}

/* An event the sink would drop, counted by the spreader but not made
 * (spread_drop(): the walker with a type filter), leaves the times of the
 * events kept as they are with it: where the hold fills (SPREAD_MAX,
 * counting the dropped), where an interval starts, without a time. */
TEST(spread_drop_counts_as_held)
{
	struct strace_dec_spread all = {0}, kept = {0};
	struct strace_walk_opts oa = {0}, ok = {0};
	struct evs ga = {calloc(MAXEV, sizeof(struct strace_event)), 0};
	struct evs gk = {calloc(MAXEV, sizeof(struct strace_event)), 0};
	uint64_t rnd = 0x9e3779b97f4a7c15ull, t = 1000, ins = 0;
	size_t n = 0, full = 0;

	REQUIRE(ga.v && gk.v);
	oa.size = ok.size = sizeof(oa);
	oa.emit = ok.emit = collect;
	oa.emit_arg = &ga;
	ok.emit_arg = &gk;
	all.stop_cap = kept.stop_cap = 5000;
	for (unsigned run = 0; run < 40; run++) {
		/* runs of one time, some longer than the hold; some without
		 * a time; a syscall (a stop) now and then */
		unsigned len = run % 7 == 3 ? 5000 + run * 13 : 1 + run * 37;
		uint64_t when = run % 9 == 5 ? 0 : t;

		full += len > SPREAD_MAX;
		for (unsigned k = 0; k < len && ga.n + 1 < MAXEV; k++) {
			struct strace_event e = {0};
			int keep;

			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			e.type = (rnd >> 40) % 50 == 0 ? STRACE_EV_SYSCALL
				 : (rnd >> 33) & 1	? STRACE_EV_CALL
							: STRACE_EV_RETURN;
			keep = e.type != STRACE_EV_RETURN;
			e.time = when;
			e.a = ++n;
			ins += 1 + ((rnd >> 50) & 7);
			CHECK_INT(spread_put(&all, &oa, &e, ins), ==, 0);
			if (keep)
				CHECK_INT(spread_put(&kept, &ok, &e, ins), ==,
					  0);
			else
				CHECK_INT(spread_drop(&kept, &ok, e.time, ins),
					  ==, 0);
		}
		t += 1000 + run * 100;
	}
	CHECK_INT(strace_dec_spread_flush(&all, &oa), ==, 0);
	CHECK_INT(strace_dec_spread_flush(&kept, &ok), ==, 0);
	/* the events kept of all, the same as those made */
	{
		size_t j = 0, bad = 0;

		for (size_t i = 0; i < ga.n; i++) {
			if (ga.v[i].type == STRACE_EV_RETURN)
				continue;
			if (j >= gk.n || memcmp(&ga.v[i], &gk.v[j],
						sizeof(ga.v[i])) != 0)
				bad++;
			j++;
		}
		CHECK_INT(j, ==, gk.n);
		CHECK_INT(bad, ==, 0);
		printf("  %zu events kept of %zu, %zu runs past the hold\n",
		       gk.n, ga.n, full);
	}
	CHECK(full > 0);
	strace_dec_spread_free(&all);
	strace_dec_spread_free(&kept);
	free(ga.v);
	free(gk.v);
}

static long decode_par(const uint8_t *buf, size_t len, unsigned nt,
		       size_t seg, struct evs *out, int timed)
{
	struct strace_walk_opts o = {0};
	struct strace_walker *w;
	long n;

	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = out;
	o.tid = 7;
	if (timed)
		gen_timing(&o);
	out->n = 0;
	if (strace_walker_new(img, &o, &w))
		return -1000;
	n = nt ? strace_walker_decode_parallel(w, buf, len, nt, seg)
	       : strace_walker_decode(w, buf, len);
	strace_walker_free(w);
	return n;
}

static int same_all(const struct evs *a, const struct evs *b, const char *what)
{
	size_t i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (memcmp(&a->v[i], &b->v[i], sizeof(a->v[i])))
			break;
	if (i == a->n && i == b->n)
		return 1;
	fprintf(stderr, "  %s: differs at %zu (of %zu / %zu)\n", what, i,
		a->n, b->n);
	if (i < a->n)
		show("sequential", &a->v[i]);
	if (i < b->n)
		show("parallel  ", &b->v[i]);
	return 0;
}

/*
 * PEBS-via-PT records (issue 33) put between the packets of random flows:
 *  - the fast walker gives exactly the flow's events, as without them
 *    (and so does the walk bit by bit);
 *  - asked for them (STRACE_WALK_PEBS), the same events to the bit
 *    (times too, exact or spread) and one pebs event per record with its
 *    IP, applicable counters and items; the parallel decode the same as
 *    the sequential one;
 *  - the reference decoder (libipt 2.0.5 knows no BBP) reports each
 *    place as an error that names PEBS-via-PT, never another one.
 */
static void run_seed_pebs(uint64_t seed, int timed, size_t *nrecs,
			  size_t *nev)
{
	struct gen g;
	struct evs fast, bit, pe, par, ref;
	size_t len, i, j, k;
	const unsigned f = STRACE_WALK_PEBS;

	memset(&g, 0, sizeof(g));
	rng = seed;
	g.cap = 1 << 20;
	g.buf = malloc(g.cap);
	g.want.v = calloc(MAXEV, sizeof(*g.want.v));
	fast.v = calloc(MAXEV, sizeof(*fast.v));
	bit.v = calloc(MAXEV, sizeof(*bit.v));
	pe.v = calloc(MAXEV, sizeof(*pe.v));
	par.v = calloc(MAXEV, sizeof(*par.v));
	ref.v = calloc(MAXEV, sizeof(*ref.v));
	g.timing = timed;
	g.tsc = 1000000;
	g.pebs = 1;
	len = generate(&g, 20000);
	*nrecs += g.nrecs;
	*nev += g.want.n;
	CHECK_INT(decode(g.buf, len, 0, &fast, timed), ==, (long)fast.n);
	for (i = 0; i < g.want.n && i < fast.n; i++)
		if (!same_ev(&g.want.v[i], &fast.v[i]))
			break;
	if (i < g.want.n || i < fast.n) {
		fprintf(stderr, "  seed %llu: event %zu of %zu (%zu) differs\n",
			(unsigned long long)seed, i, g.want.n, fast.n);
		if (i < g.want.n)
			show("want", &g.want.v[i]);
		if (i < fast.n)
			show("fast", &fast.v[i]);
		th_failed_checks++;
	}
	CHECK_INT(decode(g.buf, len, STRACE_WALK_BIT_BY_BIT, &bit, timed), ==,
		  (long)fast.n);
	CHECK(bit.n == fast.n &&
	      !memcmp(bit.v, fast.v, fast.n * sizeof(*fast.v)));
	/* the records, asked for: the flow's events as they were */
	CHECK_INT(decode(g.buf, len, f, &pe, timed), ==, (long)pe.n);
	for (i = j = k = 0; i < pe.n; i++) {
		const struct strace_event *e = &pe.v[i];

		if (e->type == STRACE_EV_PEBS) {
			size_t items = 0;

			while (i + 1 < pe.n &&
			       pe.v[i + 1].type == STRACE_EV_PEBS_ITEM)
				items++, i++;
			if (k < g.nrecs &&
			    (e->a != g.recs[k].ip ||
			     e->b != g.recs[k].counters ||
			     items != g.recs[k].items)) {
				fprintf(stderr, "  seed %llu: record %zu: ip "
					"%llx counters %llx items %zu, want "
					"%llx %llx %u\n",
					(unsigned long long)seed, k,
					(unsigned long long)e->a,
					(unsigned long long)e->b, items,
					(unsigned long long)g.recs[k].ip,
					(unsigned long long)g.recs[k].counters,
					g.recs[k].items);
				th_failed_checks++;
			}
			k++;
			continue;
		}
		if (j >= fast.n || memcmp(e, &fast.v[j], sizeof(*e))) {
			fprintf(stderr, "  seed %llu: with the records, event "
				"%zu (%zu without) differs\n",
				(unsigned long long)seed, i, j);
			show("with", e);
			if (j < fast.n)
				show("without", &fast.v[j]);
			th_failed_checks++;
			break;
		}
		j++;
	}
	/* (a record after the last packet that vouches for the flow may
	 * come after the end: the trace ends inside the flow) */
	CHECK_INT(j, ==, fast.n);
	CHECK_INT(k, ==, g.nrecs);
	{
		struct strace_walk_opts o = {0};
		struct strace_walker *w;

		o.size = sizeof(o);
		o.flags = f | (timed == 1 ? STRACE_WALK_EXACT_TIMES : 0);
		o.emit = collect;
		o.emit_arg = &par;
		if (timed)
			gen_timing(&o);
		par.n = 0;
		REQUIRE(strace_walker_new(img, &o, &w) == 0);
		CHECK_INT(strace_walker_decode_parallel(w, g.buf, len, 2, 4096),
			  ==, (long)pe.n);
		strace_walker_free(w);
		CHECK(same_all(&pe, &par, "parallel, records"));
	}
	/* the reference: an error naming them where a record is */
	decode(g.buf, len, STRACE_WALK_REFERENCE, &ref, timed);
	for (i = k = 0; i < ref.n; i++) {
		if (ref.v[i].type != STRACE_EV_ERROR)
			continue;
		k++;
		CHECK_INT(ref.v[i].flags, ==, STRACE_E_PEBS);
	}
	CHECK(g.nrecs == 0 || k > 0);
	free(g.buf);
	free(g.want.v);
	free(g.recs);
	free(fast.v);
	free(bit.v);
	free(pe.v);
	free(par.v);
	free(ref.v);
}

TEST(random_flow_with_pebs_records)
{
	size_t nrecs = 0, nev = 0;

	if (!setup())
		SKIP("no libc.so.6 or nm");
	for (uint64_t seed = 1; seed <= 10 && !th_failed_checks; seed++)
		run_seed_pebs(seed * 0x9e3779b97f4a7c15ull + 7,
			      seed > 8 ? 2 : seed > 6, &nrecs, &nev);
	printf("  %zu PEBS records among %zu events, 10 flows\n", nrecs, nev);
	CHECK(nrecs > 100);
}

/* -j: cut at PSBs, decoded on threads, the same events in the same order
 * as one sequential decode: clean, timed and damaged streams. */
TEST(parallel_equals_sequential)
{
	struct gen g;
	struct evs seq, par;
	size_t len, segs = 0;
	int bad = 0;

	if (!setup())
		SKIP("no libc.so.6 or nm");
	seq.v = calloc(MAXEV, sizeof(*seq.v));
	par.v = calloc(MAXEV, sizeof(*par.v));
	for (int k = 0; k < 12 && !bad; k++) {
		memset(&g, 0, sizeof(g));
		rng = 0x1234567ull * (uint64_t)(k + 1);
		g.cap = 1 << 20;
		g.buf = malloc(g.cap);
		g.want.v = calloc(MAXEV, sizeof(*g.want.v));
		g.timing = k & 1;
		g.tsc = 1000000;
		len = generate(&g, 20000);
		if (k >= 6) {
			/* damage: garbage bytes and an overflow-like cut */
			for (int d = 0; d < 3; d++)
				g.buf[rnd() % len] = (uint8_t)rnd();
		}
		CHECK_INT(decode_par(g.buf, len, 0, 0, &seq, g.timing), >, 0);
		/* (from 4 threads on, the workers settle their events for
		 * the merge: parallel.c's SETTLE_FROM) */
		for (unsigned nt = 2; nt <= 4 && !bad; nt++) {
			size_t seg = nt == 2 ? 1024 : 4096;
			uint64_t offs[4096];
			CHECK_INT(decode_par(g.buf, len, nt, seg, &par, g.timing),
				  >, 0);
			segs += strace_pt_split(g.buf, len, seg, offs, 4096);
			if (!same_all(&seq, &par, k >= 6 ? "damaged" : "clean"))
				bad = 1;
		}
		free(g.buf);
		free(g.want.v);
	}
	printf("  %zu segments decoded in parallel\n", segs);
	CHECK_INT(bad, ==, 0);
	CHECK_INT(segs, >, 100);
	free(seq.v);
	free(par.v);
}

/* A parallel decode's worker spreads its segment's times as its events
 * come (segment.h, struct seg_sp): the same runs and times as
 * strace_dec_seg_spread() gives over the segment's whole vector, and
 * runs there are. */
TEST(worker_spreads_as_events_come)
{
	struct strace_walk_opts o = {0};
	struct strace_walker *w;
	struct gen g;
	size_t len, nrun = 0, nseg = 0;
	uint64_t offs[512];

	if (!setup())
		SKIP("no libc.so.6 or nm");
	memset(&g, 0, sizeof(g));
	rng = 0x7f4a7c15ull;
	g.cap = 1 << 20;
	g.buf = malloc(g.cap);
	g.want.v = calloc(MAXEV, sizeof(*g.want.v));
	g.timing = 1;
	g.tsc = 1000000;
	len = generate(&g, 20000);
	o.size = sizeof(o);
	o.emit = strace_dec_vec_push;
	o.tid = 7;
	gen_timing(&o);
	REQUIRE(strace_walker_new(img, &o, &w) == 0);
	nseg = strace_pt_split(g.buf, len, 8192, offs, 512);
	REQUIRE(nseg > 4);
	for (size_t k = 0; k < nseg; k++) {
		struct seg_job j;
		struct strace_event *v;
		struct seg_run *run;
		size_t n, nr, from;

		memset(&j, 0, sizeof(j));
		j.spread = 1;
		j.start = (size_t)offs[k];
		j.end = k + 1 < nseg ? (size_t)offs[k + 1] : len;
		j.last = k + 1 == nseg;
		if (!j.last)
			strace_dec_psb_plus(g.buf, len, j.end, &j.next_fup,
					    &j.fup_at, &j.has_next_fup);
		strace_dec_seg_decode(w, g.buf, len, &j);
		REQUIRE(j.ret >= 0);
		n = j.ev.n;
		nr = j.ev.nrun;
		v = malloc((n + 1) * sizeof(*v));
		run = malloc((nr + 1) * sizeof(*run));
		if (n) /* (j.ev's arrays may be NULL when empty) */
			memcpy(v, j.ev.v, n * sizeof(*v));
		if (nr)
			memcpy(run, j.ev.run, nr * sizeof(*run));
		/* the same from the whole vector, its times given back */
		for (size_t r = 0; r < nr; r++)
			seg_run_untake(j.ev.v, &run[r]);
		from = j.notes.first_idx < 0
			       ? SIZE_MAX
			       : (size_t)j.notes.first_idx +
					 (size_t)j.notes.first_n;
		REQUIRE(strace_dec_seg_spread(&j.ev, from) == 0);
		CHECK_INT(j.ev.nrun, ==, nr);
		if (nr && j.ev.nrun == nr)
			CHECK(!memcmp(run, j.ev.run, nr * sizeof(*run)));
		if (n)
			CHECK(!memcmp(v, j.ev.v, n * sizeof(*v)));
		nrun += nr;
		free(v);
		free(run);
		strace_dec_vec_free(&j.ev);
	}
	printf("  %zu runs spread by the worker in %zu segments\n", nrun,
	       nseg);
	/* (most of this flow's events have a time point of their own: few
	 * intervals hold two events or more) */
	CHECK_INT(nrun, >=, 10);
	strace_walker_free(w);
	free(g.buf);
	free(g.want.v);
}

/* A segment's vector: a time point (mark: time, ins; none if time 0),
 * then events of type CALL at (time, ins), instruction counts from the
 * segment's start. */
static void seg_events(struct seg_job *j, const uint64_t mark[2],
		       const uint64_t (*te)[2], size_t n, uint64_t insns)
{
	struct strace_event e = {0};

	memset(j, 0, sizeof(*j));
	j->notes.first_idx = -1;
	j->st.insns = insns;
	if (mark[0])
		REQUIRE(strace_dec_vec_mark(&j->ev, mark[0], mark[1]) == 0);
	e.type = STRACE_EV_CALL;
	e.flags = STRACE_F_TIME_EXACT;
	e.tid = 7;
	for (size_t k = 0; k < n; k++) {
		e.time = te[k][0];
		e.a = k;
		REQUIRE(strace_dec_vec_put(&j->ev, &e, te[k][1]) == 0);
	}
}

/* The merge of two segments, the second's times spread by its worker
 * (runs) or not: the events the sink gets. */
static void merge_two(struct seg_job *a, struct seg_job *b, int runs,
		      struct evs *out)
{
	struct strace_walk_opts o = {0};
	struct strace_image *none;
	struct strace_walker *w;
	struct seg_state S = {0};

	o.size = sizeof(o);
	o.emit = collect;
	o.emit_arg = out;
	o.tid = 7;
	o.has_time = 1;
	o.time.time_mult = 1;
	out->n = 0;
	REQUIRE(strace_image_new(NULL, &none) == 0);
	REQUIRE(strace_walker_new(none, &o, &w) == 0);
	b->ev.nrun = 0;
	if (runs)
		REQUIRE(strace_dec_seg_spread(&b->ev, 0) == 0);
	S.begin_reason = STRACE_REASON_START;
	CHECK_INT(strace_dec_seg_merge(w, a, 1, &S), ==, 0);
	CHECK_INT(strace_dec_seg_merge(w, b, 0, &S), ==, 0);
	CHECK_INT(strace_dec_walk_flush(w, 0), ==, 0);
	strace_walker_free(w);
	strace_image_free(none);
}

/* A worker's spread run is taken as it is only where the merge's
 * spreader is in the same interval; elsewhere its events get their time
 * back and the merge spreads them: the same events either way. Here the
 * second segment begins with a time point at the time of the first's
 * last interval (no timing packet between): the worker began an interval
 * there, the merge is still in the one the first segment began 12
 * instructions before (the same time, nothing held: only the instruction
 * counts differ), so that run falls back; the next is the merge's
 * interval, and is taken. */
TEST(parallel_runs_fall_back)
{
	static const uint64_t none[2] = {0, 0}, at2000[2] = {2000, 2};
	static const uint64_t ta[][2] = {{1000, 0}, {1000, 10}, {2000, 20}};
	static const uint64_t tb[][2] = {{2000, 4},  {2000, 6},  {3000, 10},
					 {3000, 12}, {3000, 14}, {4000, 20},
					 {5000, 30}};
	struct seg_job a, b;
	struct evs with = {calloc(64, sizeof(struct strace_event)), 0};
	struct evs without = {calloc(64, sizeof(struct strace_event)), 0};
	size_t moved = 0;

	seg_events(&a, none, ta, 3, 30);
	seg_events(&b, at2000, tb, 7, 40);
	merge_two(&a, &b, 0, &without);
	/* the worker's runs: [0, 2) in the interval it began at the time
	 * point, [3, 5) in the one begun at 3000 */
	REQUIRE(strace_dec_seg_spread(&b.ev, 0) == 0);
	REQUIRE(b.ev.nrun == 2);
	CHECK_INT(b.ev.run[0].a, ==, 0);
	CHECK_INT(b.ev.run[1].a, ==, 3);
	/* b's times back, as the merge without runs saw them */
	for (size_t k = 0; k < 7; k++)
		b.ev.v[k].time = tb[k][0];
	strace_dec_vec_free(&a.ev);
	seg_events(&a, none, ta, 3, 30);
	merge_two(&a, &b, 1, &with);
	REQUIRE(with.n == 10 && without.n == 10);
	for (size_t k = 0; k < 10; k++) {
		CHECK_INT(with.v[k].time, ==, without.v[k].time);
		CHECK_INT(with.v[k].flags, ==, without.v[k].flags);
		CHECK_INT(with.v[k].a, ==, without.v[k].a);
		moved += with.v[k].time % 1000 != 0;
	}
	/* the spreading moved times: b's first two over the first's last
	 * interval (2000 at 20 to 3000 at 40: 2700, 2800), the next run's
	 * (3200, 3400), and one of a's */
	CHECK_INT(with.v[3].time, ==, 2700);
	CHECK_INT(with.v[6].time, ==, 3200);
	CHECK_INT(moved, ==, 5);
	strace_dec_vec_free(&a.ev);
	strace_dec_vec_free(&b.ev);
	free(with.v);
	free(without.v);
}

struct prog {
	size_t calls, last, bad;
	const uint8_t *buf;
};

static void on_progress(void *arg, size_t done)
{
	struct prog *p = arg;

	p->calls++;
	/* in order, 256 KiB apart, each at a PSB */
	if (done < p->last + (256u << 10) || p->buf[done] != 0x02 ||
	    p->buf[done + 1] != 0x82)
		p->bad++;
	p->last = done;
}

/* A long decode tells how far it got, sequential or parallel alike. */
TEST(progress)
{
	struct gen g;
	struct evs ev;
	size_t len;

	if (!setup())
		SKIP("no libc.so.6 or nm");
	/* random flows one after the other (each starts with a PSB+) */
	uint8_t *buf = malloc(2 << 20);
	REQUIRE(buf != NULL);
	ev.v = calloc(MAXEV, sizeof(*ev.v));
	len = 0;
	for (uint64_t seed = 1; len < (5u << 18); seed++) {
		size_t n;
		memset(&g, 0, sizeof(g));
		rng = seed * 0x9e3779b97f4a7c15ull;
		g.cap = 1 << 20;
		g.buf = malloc(g.cap);
		g.want.v = calloc(MAXEV, sizeof(*g.want.v));
		n = generate(&g, 20000);
		if (len + n <= (2u << 20)) {
			memcpy(buf + len, g.buf, n);
			len += n;
		}
		free(g.buf);
		free(g.want.v);
	}
	printf("  %zu bytes of PT\n", len);
	for (unsigned nt = 0; nt <= 2; nt += 2) {
		struct strace_walk_opts o = {0};
		struct strace_walker *w;
		struct prog p = {0, 0, 0, buf};

		o.size = sizeof(o);
		o.emit = collect;
		o.emit_arg = &ev;
		o.progress = on_progress;
		o.progress_arg = &p;
		ev.n = 0;
		REQUIRE(strace_walker_new(img, &o, &w) == 0);
		CHECK_INT(nt ? strace_walker_decode_parallel(w, buf, len, nt, 0)
			     : strace_walker_decode(w, buf, len),
			  >, 0);
		strace_walker_free(w);
		CHECK_INT(p.calls, >=, len / (512u << 10));
		CHECK_INT(p.bad, ==, 0);
	}
	free(buf);
	free(ev.v);
}

RUN_TESTS("test_decoder_flow")
