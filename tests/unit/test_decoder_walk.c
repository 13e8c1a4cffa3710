/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_walk.c - the flow walker and the reference
 * decoder on handmade traces: a small assembly program is built with cc,
 * its control flow is encoded as PT packets with libipt's encoder (as the
 * hardware would, with return compression), and both decoders must give
 * the events the program's flow implies. Corrupt, overflowing and random
 * streams must give error/gap events and never crash.
 */
#include <stddef.h>
#include <intel-pt.h>
#include <time.h>

#include "harness.h"
#include "decoder_testlib.h"

/*
 * The program. Flow: _start calls f three times in a loop (f's je is not
 * taken while ecx != 0; its ret is compressed), calls g indirectly, jumps
 * to tail (another symbol), makes a syscall (tracing stops and restarts),
 * calls f once more (je taken now), and stops at the final ret.
 */
static const char *asm_src =
	"	.text\n"
	"	.globl _start, f, g, tail\n"
	/* the sites are labels for the test only: hidden, so that they are
	 * not symbols (perf skips hidden labels too) */
	"	.hidden site_ret1, site_jnz, site_icall, site_ret2, site_jmp\n"
	"	.hidden site_je, site_fret, site_syscall, site_after_sys\n"
	"	.hidden site_ret3, site_nop\n"
	"	.type _start,@function\n"
	"_start:\n"
	"	mov $3, %ecx\n"
	".Lloop:\n"
	"	call f\n"
	"site_ret1:\n"
	"	dec %ecx\n"
	"site_jnz:\n"
	"	jnz .Lloop\n"
	"	lea g(%rip), %rax\n"
	"site_icall:\n"
	"	call *%rax\n"
	"site_ret2:\n"
	"site_jmp:\n"
	"	jmp tail\n"
	"	.size _start, .-_start\n"
	"	.type f,@function\n"
	"f:\n"
	"	test %ecx, %ecx\n"
	"site_je:\n"
	"	je .Lz\n"
	"site_nop:\n"
	"	nop\n"
	".Lz:\n"
	"site_fret:\n"
	"	ret\n"
	"	.size f, .-f\n"
	"	.type g,@function\n"
	"g:\n"
	"	ret\n"
	"	.size g, .-g\n"
	"	.type tail,@function\n"
	"tail:\n"
	"	mov $39, %eax\n"
	"site_syscall:\n"
	"	syscall\n"
	"site_after_sys:\n"
	"	call f\n"
	"site_ret3:\n"
	"	ret\n"
	"	.size tail, .-tail\n";

static const char *sites[] = {"_start",   "f",          "g",
			      "tail",     "site_ret1",  "site_jnz",
			      "site_icall", "site_ret2", "site_jmp",
			      "site_je",  "site_fret",  "site_syscall",
			      "site_after_sys", "site_ret3", "site_nop", NULL};
enum { S_START, S_F, S_G, S_TAIL, S_RET1, S_JNZ, S_ICALL, S_RET2, S_JMP,
       S_JE, S_FRET, S_SYSCALL, S_AFTER_SYS, S_RET3, S_NOP, S_N };

static uint64_t addr[S_N];
static char exe[600];
static int built = -1;

/* Assemble src into the program NAME (its path in bin, of size binsz) in
 * the test's directory, and look up the addresses of syms (NULL-ended)
 * in at. Returns 1, or 0 when it cannot be built. */
static int build_prog(const char *name, const char *src, const char **syms,
		      uint64_t *at, char *bin, size_t binsz)
{
	char path[600], cmd[1600], *out;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.s", tl_tmpdir(), name);
	snprintf(bin, binsz, "%s/%s", tl_tmpdir(), name);
	f = fopen(path, "w");
	if (!f)
		return 0;
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cc -nostdlib -static -no-pie -Wl,-Ttext=0x401000 -o %s %s",
		 bin, path);
	if (system(cmd) != 0)
		return 0;
	for (int i = 0; syms[i]; i++) {
		snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" {print $1}'",
			 bin, syms[i]);
		out = tl_run(cmd);
		if (!out || sscanf(out, "%lx", &at[i]) != 1) {
			free(out);
			return 0;
		}
		free(out);
	}
	return 1;
}

static int build(void)
{
	if (built < 0)
		built = build_prog("walk", asm_src, sites, addr, exe,
				   sizeof(exe));
	return built;
}

/* --- encoding ------------------------------------------------------------- */

struct enc {
	struct pt_encoder *e;
	uint8_t buf[65536];
};

static void enc_init(struct enc *en)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = en->buf;
	cfg.end = en->buf + sizeof(en->buf);
	en->e = pt_alloc_encoder(&cfg);
}

static size_t enc_done(struct enc *en)
{
	uint64_t off = 0;
	pt_enc_get_offset(en->e, &off);
	pt_free_encoder(en->e);
	return (size_t)off;
}

static void put(struct enc *en, struct pt_packet *p)
{
	int r = pt_enc_next(en->e, p);
	if (r < 0)
		fprintf(stderr, "  encoder: %s\n", pt_errstr(pt_errcode(r)));
}

static void pkt_ip(struct enc *en, enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p = {0};
	p.type = t;
	p.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	p.payload.ip.ip = ip;
	put(en, &p);
}

static void pkt(struct enc *en, enum pt_packet_type t)
{
	struct pt_packet p = {0};
	p.type = t;
	put(en, &p);
}

/* TNT bits as a string, oldest first: "NTT" */
static void tnt(struct enc *en, const char *bits)
{
	struct pt_packet p = {0};
	size_t n = strlen(bits);

	p.type = n > 6 ? ppt_tnt_64 : ppt_tnt_8;
	p.payload.tnt.bit_size = (uint8_t)n;
	for (size_t i = 0; i < n; i++)
		p.payload.tnt.payload =
			(p.payload.tnt.payload << 1) | (bits[i] == 'T');
	put(en, &p);
}

static void tsc(struct enc *en, uint64_t v)
{
	struct pt_packet p = {0};
	p.type = ppt_tsc;
	p.payload.tsc.tsc = v;
	put(en, &p);
}

static void psb(struct enc *en, uint64_t ip, uint64_t t)
{
	struct pt_packet p = {0};

	pkt(en, ppt_psb);
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	put(en, &p);
	if (t)
		tsc(en, t);
	if (ip)
		pkt_ip(en, ppt_fup, ip);
	pkt(en, ppt_psbend);
}

/* The program's flow, as the hardware encodes it. */
static size_t encode_program(struct enc *en, int timing)
{
	enc_init(en);
	psb(en, addr[S_START], timing ? 1000000 : 0);
	tnt(en, "NTTNTT");
	if (timing)
		tsc(en, 1000500);
	tnt(en, "NTN");
	pkt_ip(en, ppt_tip, addr[S_G]);
	tnt(en, "T");
	pkt_ip(en, ppt_tip_pgd, 0);
	if (timing)
		tsc(en, 1002000);
	pkt_ip(en, ppt_tip_pge, addr[S_AFTER_SYS]);
	tnt(en, "TT");
	return enc_done(en);
}

/* --- decoding -------------------------------------------------------------- */

struct evs {
	struct strace_event v[4096];
	size_t n;
};

static int collect(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;
	if (e->n < 4096)
		e->v[e->n++] = *ev;
	return 0;
}

static struct strace_image *img;

/* Decode buf over image im (the test program's: decode()). */
static long decode_in(struct strace_image *im, const uint8_t *buf,
		      size_t len, unsigned flags, struct evs *out,
		      const struct strace_time_conv *tc)
{
	struct strace_walk_opts o = {0};
	struct strace_walker *w;
	long n;

	o.size = sizeof(o);
	o.flags = flags;
	o.tid = 42;
	o.emit = collect;
	o.emit_arg = out;
	if (tc) {
		o.time = *tc;
		o.has_time = 1;
	}
	out->n = 0;
	if (strace_walker_new(im, &o, &w))
		return -1000;
	n = strace_walker_decode(w, buf, len);
	strace_walker_free(w);
	return n;
}

static long decode(const uint8_t *buf, size_t len, unsigned flags,
		   struct evs *out, const struct strace_time_conv *tc)
{
	return decode_in(img, buf, len, flags, out, tc);
}

static int setup(void)
{
	if (!build())
		return 0;
	if (!img) {
		if (strace_image_new(NULL, &img) || tl_map_elf(img, exe, 0) <= 0)
			return 0;
	}
	return 1;
}

struct want {
	unsigned type;
	int a, b; /* site indices, or -1 for 0, or -2: b is a literal */
	uint64_t lit;
};

static void check_events(const struct evs *e, const struct want *w, size_t n,
			 const char *who)
{
	size_t i;

	for (i = 0; i < n && i < e->n; i++) {
		uint64_t a = w[i].a >= 0 ? addr[w[i].a] : 0;
		uint64_t b = w[i].b >= 0 ? addr[w[i].b]
				: w[i].b == -2 ? w[i].lit
					       : 0;
		if (e->v[i].type != w[i].type || e->v[i].a != a ||
		    e->v[i].b != b) {
			fprintf(stderr,
				"  %s event %zu: type %u %llx %llx, want %u "
				"%llx %llx\n",
				who, i, e->v[i].type,
				(unsigned long long)e->v[i].a,
				(unsigned long long)e->v[i].b, w[i].type,
				(unsigned long long)a, (unsigned long long)b);
			th_failed_checks++;
			return;
		}
		if (e->v[i].tid != 42)
			th_failed_checks++;
	}
	if (e->n != n) {
		fprintf(stderr, "  %s: %zu events, want %zu\n", who, e->n, n);
		th_failed_checks++;
	}
}

/* The events the program's flow implies. A call's "from" is the call
 * instruction: the label before the next instruction minus its length is
 * awkward to name, so sites mark the instruction after and we compute. */
static uint64_t call_at(int after, int len)
{
	return addr[after] - (uint64_t)len;
}

/*
 * Events must be equal in type, thread, addresses and the flags both
 * decoders know. One difference is allowed, and counted: libipt's block
 * decoder reports the last branch before a gap (overflow, error, end of
 * trace) without its target, so the reference has no event for it where
 * the fast walker, which reads the TNT bit, has one.
 */
static int is_gap(unsigned t)
{
	return t == STRACE_EV_OVERFLOW || t == STRACE_EV_ERROR ||
	       t == STRACE_EV_TRACE_END;
}

static size_t check_same(const struct evs *a, const struct evs *b)
{
	const unsigned mask =
		STRACE_F_ASYNC | STRACE_F_CONDITIONAL | STRACE_F_INTRA;
	size_t i = 0, j = 0, skipped = 0;

	while (i < a->n && j < b->n) {
		const struct strace_event *x = &a->v[i], *y = &b->v[j];
		int same = x->type == y->type && x->a == y->a &&
			   (x->b == y->b || is_gap(x->type)) &&
			   (x->flags & mask) == (y->flags & mask);
		if (same) {
			i++, j++;
			continue;
		}
		if (is_gap(y->type) && !is_gap(x->type) && i + 1 < a->n &&
		    a->v[i + 1].type == y->type) {
			skipped++;
			i++;
			continue;
		}
		if (y->type == STRACE_EV_TRACE_END && x->type == STRACE_EV_TRACE_END)
			i++, j++; /* a: where each stopped, may differ */
		else {
			fprintf(stderr,
				"  event %zu/%zu differs: fast %u %llx %llx, "
				"ref %u %llx %llx\n",
				i, j, x->type, (unsigned long long)x->a,
				(unsigned long long)x->b, y->type,
				(unsigned long long)y->a,
				(unsigned long long)y->b);
			th_failed_checks++;
			return skipped;
		}
	}
	CHECK_INT(a->n - i, ==, 0);
	CHECK_INT(b->n - j, ==, 0);
	return skipped;
}

TEST(program_flow_fast_and_reference)
{
	struct enc en;
	struct evs fast, ref;
	size_t len;
	long n1, n2;

	if (!setup())
		SKIP("cannot build the test program (cc, nm)");
	len = encode_program(&en, 0);
	n1 = decode(en.buf, len, 0, &fast, NULL);
	n2 = decode(en.buf, len, STRACE_WALK_REFERENCE, &ref, NULL);
	CHECK_INT(n1, ==, (long)fast.n);
	CHECK_INT(n2, ==, (long)ref.n);
	{
		/* call f is 5 bytes (e8 rel32); call *%rax is 2 bytes */
		uint64_t c1 = call_at(S_RET1, 5), ci = call_at(S_RET2, 2),
			 c3 = call_at(S_RET3, 5);
		uint64_t gret = addr[S_G];
		struct want w[] = {
			{STRACE_EV_TRACE_BEGIN, S_START, -2, STRACE_REASON_START},
			{STRACE_EV_CALL, -3, S_F, 0},
			{STRACE_EV_RETURN, S_FRET, S_RET1, 0},
			{STRACE_EV_CALL, -3, S_F, 0},
			{STRACE_EV_RETURN, S_FRET, S_RET1, 0},
			{STRACE_EV_CALL, -3, S_F, 0},
			{STRACE_EV_RETURN, S_FRET, S_RET1, 0},
			{STRACE_EV_CALL, -4, S_G, 0},
			{STRACE_EV_RETURN, S_G, S_RET2, 0},
			{STRACE_EV_JUMP, S_JMP, S_TAIL, 0},
			{STRACE_EV_SYSCALL, S_SYSCALL, -1, 0},
			{STRACE_EV_SYSRET, -1, S_AFTER_SYS, 0},
			{STRACE_EV_CALL, -5, S_F, 0},
			{STRACE_EV_RETURN, S_FRET, S_RET3, 0},
			{STRACE_EV_TRACE_END, S_RET3, -2, STRACE_REASON_END},
		};
		size_t nw = sizeof(w) / sizeof(w[0]);
		(void)gret;
		/* sites for call instructions are computed: patch them in */
		for (size_t i = 0; i < fast.n && i < nw; i++) {
			if (w[i].a == -3 || w[i].a == -4 || w[i].a == -5) {
				uint64_t want = w[i].a == -3   ? c1
						: w[i].a == -4 ? ci
							       : c3;
				CHECK_U64(fast.v[i].a, ==, want);
				if (i < ref.n)
					CHECK_U64(ref.v[i].a, ==, want);
				fast.v[i].a = 0;
				if (i < ref.n && i + 1 < nw)
					ref.v[i].a = 0;
				w[i].a = -1;
			}
		}
		check_events(&fast, w, nw, "fast");
		/* the reference gives the last return too (its shadow
		 * stack), so the two are equal */
		CHECK_INT(check_same(&fast, &ref), ==, 0);
	}
}

TEST(all_branches)
{
	struct enc en;
	struct evs fast, ref;
	size_t len, jumps = 0, rjumps = 0, intra = 0;

	if (!setup())
		SKIP("cannot build the test program");
	len = encode_program(&en, 0);
	decode(en.buf, len, STRACE_WALK_ALL_BRANCHES, &fast, NULL);
	decode(en.buf, len, STRACE_WALK_ALL_BRANCHES | STRACE_WALK_REFERENCE,
	       &ref, NULL);
	for (size_t i = 0; i < fast.n; i++) {
		if (fast.v[i].type == STRACE_EV_JUMP) {
			jumps++;
			intra += !!(fast.v[i].flags & STRACE_F_INTRA);
		}
	}
	for (size_t i = 0; i < ref.n; i++)
		rjumps += ref.v[i].type == STRACE_EV_JUMP;
	/* taken: jnz twice, je once (last call), jmp tail once */
	CHECK_INT(jumps, ==, 4);
	CHECK_INT(intra, ==, 3);
	CHECK_INT(rjumps, ==, 4);
	check_same(&fast, &ref);
}

TEST(overflow_resumes)
{
	struct enc en;
	struct evs fast, ref;
	size_t len;
	int ovf = -1, begin = -1;

	if (!setup())
		SKIP("cannot build the test program");
	enc_init(&en);
	psb(&en, addr[S_START], 0);
	tnt(&en, "NT"); /* first call to f and back */
	pkt(&en, ppt_ovf);
	pkt_ip(&en, ppt_fup, addr[S_TAIL]); /* resume at tail */
	pkt_ip(&en, ppt_tip_pgd, 0);        /* the syscall */
	pkt_ip(&en, ppt_tip_pge, addr[S_AFTER_SYS]);
	tnt(&en, "TT");
	len = enc_done(&en);
	CHECK_INT(decode(en.buf, len, 0, &fast, NULL), >, 0);
	CHECK_INT(decode(en.buf, len, STRACE_WALK_REFERENCE, &ref, NULL), >, 0);
	for (size_t i = 0; i < fast.n; i++) {
		if (fast.v[i].type == STRACE_EV_OVERFLOW && ovf < 0)
			ovf = (int)i;
		if (fast.v[i].type == STRACE_EV_TRACE_BEGIN && i > 0 &&
		    begin < 0)
			begin = (int)i;
	}
	REQUIRE(ovf > 0);
	CHECK_U64(fast.v[ovf].a, ==, addr[S_TAIL]);
	CHECK_INT(begin, ==, ovf + 1);
	CHECK_U64(fast.v[begin].b, ==, STRACE_REASON_OVERFLOW);
	/* after it: syscall, sysret, call f, return, end */
	CHECK_INT(fast.v[begin + 1].type, ==, STRACE_EV_SYSCALL);
	CHECK_INT(fast.n, ==, (size_t)begin + 6);
	CHECK_INT(check_same(&fast, &ref), <=, 2);
}

/* Garbage in the middle: an error event, then decoding resumes at the
 * next PSB with nothing else lost. */
TEST(corrupt_bytes_resume_at_next_psb)
{
	struct enc en;
	struct evs fast, ref, clean;
	uint8_t buf[4096];
	size_t len, a, b;
	int err_at = -1, resumed = 0;

	if (!setup())
		SKIP("cannot build the test program");
	/* part 1: up to the 9 TNT bits; garbage; part 2 from a PSB */
	enc_init(&en);
	psb(&en, addr[S_START], 0);
	tnt(&en, "NTTNTT");
	a = enc_done(&en);
	memcpy(buf, en.buf, a);
	/* a reserved IP compression (0x0d | 5 << 5) is a bad packet */
	buf[a++] = 0xad;
	buf[a++] = 0xff;
	enc_init(&en);
	psb(&en, addr[S_TAIL], 0);
	pkt_ip(&en, ppt_tip_pgd, 0);
	pkt_ip(&en, ppt_tip_pge, addr[S_AFTER_SYS]);
	tnt(&en, "TT");
	b = enc_done(&en);
	memcpy(buf + a, en.buf, b);
	len = a + b;
	CHECK_INT(decode(buf, len, 0, &fast, NULL), >, 0);
	CHECK_INT(decode(buf, len, STRACE_WALK_REFERENCE, &ref, NULL), >, 0);
	CHECK_INT(decode(en.buf, b, 0, &clean, NULL), >, 0);
	for (size_t i = 0; i < fast.n; i++) {
		if (fast.v[i].type == STRACE_EV_ERROR && err_at < 0) {
			err_at = (int)i;
			CHECK_U64(fast.v[i].b, ==, a - 2);
			CHECK_INT(fast.v[i].flags, ==, STRACE_E_BADPKT);
		}
	}
	REQUIRE(err_at > 0);
	/* before: begin + 2 x (call, return) */
	CHECK_INT(err_at, ==, 5);
	/* after: exactly what the clean second part alone gives, but the
	 * begin says why */
	CHECK_INT(fast.n - (size_t)err_at - 1, ==, clean.n);
	for (size_t i = 0; i < clean.n && err_at + 1 + i < fast.n; i++) {
		const struct strace_event *x = &fast.v[err_at + 1 + i];
		resumed += x->type == clean.v[i].type && x->a == clean.v[i].a &&
			   (x->b == clean.v[i].b || i == 0);
	}
	CHECK_INT(resumed, ==, (int)clean.n);
	CHECK_U64(fast.v[err_at + 1].b, ==, STRACE_REASON_ERROR);
	/* the reference agrees on the flow events */
	{
		size_t nf = 0, nr = 0;
		for (size_t i = 0; i < fast.n; i++)
			nf += fast.v[i].type == STRACE_EV_CALL ||
			      fast.v[i].type == STRACE_EV_RETURN;
		for (size_t i = 0; i < ref.n; i++)
			nr += ref.v[i].type == STRACE_EV_CALL ||
			      ref.v[i].type == STRACE_EV_RETURN;
		CHECK_INT(nf, ==, nr);
	}
}

TEST(desync_is_an_error)
{
	struct enc en;
	struct evs fast;
	size_t len;
	int errs = 0;

	if (!setup())
		SKIP("cannot build the test program");
	enc_init(&en);
	psb(&en, addr[S_START], 0);
	/* f's je wants a TNT bit; give it a TIP */
	pkt_ip(&en, ppt_tip, addr[S_G]);
	len = enc_done(&en);
	decode(en.buf, len, 0, &fast, NULL);
	for (size_t i = 0; i < fast.n; i++)
		if (fast.v[i].type == STRACE_EV_ERROR) {
			errs++;
			CHECK_INT(fast.v[i].flags, ==, STRACE_E_NOTNT);
		}
	CHECK_INT(errs, ==, 1);
	/* no PSB at all */
	{
		uint8_t junk[64];
		memset(junk, 0x55, sizeof(junk));
		CHECK_INT(decode(junk, sizeof(junk), 0, &fast, NULL), ==,
			  -STRACE_E_NOSYNC);
		CHECK_INT(decode(junk, sizeof(junk), STRACE_WALK_REFERENCE,
				 &fast, NULL),
			  ==, -STRACE_E_NOSYNC);
	}
}

/*
 * A damaged trace that leads into a loop of direct jumps and calls (here:
 * a PSB's FUP at the loop, then a TNT bit it never asks for) makes the
 * walk go round for ever without a packet. The fast walker gives up when
 * it comes back to an address (Brent's cycle finding after 4096 blocks,
 * flow.h), not after its bound of a million blocks: one LOOP error, at
 * the loop, after fewer than 20000 branches. The reference gives up
 * when its blocks without a packet come back to one's start (ref.c), not
 * after its bound of 4 Mi instructions (nor does libipt's recursion over
 * the loop's jumps overflow the stack). The calls push: the return stack
 * must not grow without end either.
 */
static const char *spin_src =
	"	.text\n"
	"	.globl _start, spin, hop\n"
	"	.type _start,@function\n"
	"_start:\n"
	"spin:\n"
	"	call hop\n"
	"	.size _start, .-_start\n"
	"	.type hop,@function\n"
	"hop:\n"
	"	nop\n"
	"	jmp spin\n"
	"	.size hop, .-hop\n";

/* The error events of a decode (the calls before them are thousands). */
static int collect_errors(void *arg, const struct strace_event *ev)
{
	struct evs *e = arg;

	if (ev->type == STRACE_EV_ERROR && e->n < 4096)
		e->v[e->n++] = *ev;
	return 0;
}

TEST(never_ending_loop_found)
{
	static const char *names[] = {"spin", "hop", NULL};
	uint64_t at[2];
	char bin[600];
	struct strace_image *im = NULL;
	struct enc en;
	size_t len;

	if (!build_prog("spin", spin_src, names, at, bin, sizeof(bin)))
		SKIP("cannot build the test program");
	REQUIRE(strace_image_new(NULL, &im) == 0);
	REQUIRE(tl_map_elf(im, bin, 0) > 0);
	enc_init(&en);
	psb(&en, at[0], 0);
	tnt(&en, "T");
	len = enc_done(&en);
	for (int ref = 0; ref < 2; ref++) {
		struct strace_walk_opts o = {0};
		struct strace_walk_stats st;
		struct strace_walker *w;
		static struct evs out;
		int loops = 0;

		o.size = sizeof(o);
		o.tid = 42;
		o.flags = ref ? STRACE_WALK_REFERENCE : 0;
		o.emit = collect_errors;
		o.emit_arg = &out;
		out.n = 0;
		REQUIRE(strace_walker_new(im, &o, &w) == 0);
		(void)strace_walker_decode(w, en.buf, len);
		strace_walker_stats(w, &st);
		strace_walker_free(w);
		for (size_t i = 0; i < out.n; i++) {
			loops += out.v[i].flags == STRACE_E_LOOP;
			CHECK(out.v[i].a >= at[0] && out.v[i].a <= at[1] + 1);
		}
		CHECK_INT(loops, ==, 1);
		if (ref) {
			CHECK_INT(st.insns, <=, 65535);
		} else {
			CHECK_INT(st.branches, >, 4096);
			CHECK_INT(st.branches, <, 20000);
		}
	}
	strace_image_free(im);
}

/* --- contradictions: where the packets contradict the code ------------ */

/* The encoder's offset: where the next packet goes. */
static size_t enc_at(struct enc *en)
{
	uint64_t off = 0;

	pt_enc_get_offset(en->e, &off);
	return (size_t)off;
}

/* Bytes the encoder would not make (a reserved MODE leaf, a CYC too long,
 * a PSB cut short), put where the next packet goes. */
static void raw(struct enc *en, const uint8_t *b, size_t n)
{
	size_t at = enc_at(en);

	memcpy(en->buf + at, b, n);
	pt_enc_sync_set(en->e, at + n);
}

static void mode_exec(struct enc *en)
{
	struct pt_packet p = {0};

	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	put(en, &p);
}

/* The program's flow up to the syscall, whose TIP.PGD stops tracing: the
 * start of each pattern below. */
static void up_to_syscall(struct enc *en)
{
	psb(en, addr[S_START], 0);
	tnt(en, "NTTNTT");
	tnt(en, "NTN");
	pkt_ip(en, ppt_tip, addr[S_G]);
	tnt(en, "T");
	pkt_ip(en, ppt_tip_pgd, 0);
}

/* Each pattern encodes a trace with one contradiction, ended by a clean
 * PSB+ and the rest of the program, and returns the offset of the packet
 * both decoders must report it at (or, for libipt, after). */
static size_t no_enable_tnt(struct enc *en)
{
	/* the pattern: the TIP.PGE after a syscall lost (the next
	 * event was a call from elsewhere, with no error); bits come while
	 * tracing is off (libipt: -pte_no_enable) */
	size_t at;

	up_to_syscall(en);
	at = enc_at(en);
	tnt(en, "TT");
	return at;
}

/* up_to_syscall(), then an IP packet of type t (ip 0: suppressed) */
static size_t ip_after_syscall(struct enc *en, enum pt_packet_type t,
			       uint64_t ip)
{
	size_t at;

	up_to_syscall(en);
	at = enc_at(en);
	pkt_ip(en, t, ip);
	return at;
}

static size_t no_enable_tip(struct enc *en)
{
	return ip_after_syscall(en, ppt_tip, addr[S_F]);
}

static size_t mode_exec_then_tip_while_off(struct enc *en)
{
	/* no TIP while tracing is off, a MODE.Exec before it or not.
	 * libipt 2.0.5 binds the MODE.Exec to the TIP and walks on from the
	 * syscall tracing stopped at: here the code there takes no TIP and
	 * it fails at once; where the code reaches a far branch, which
	 * takes it, it fails later or never (damage-diff's class exec-tip,
	 * the damage corpus's exec-tip-while-off) */
	size_t at;

	up_to_syscall(en);
	mode_exec(en);
	at = enc_at(en);
	pkt_ip(en, ppt_tip, addr[S_F]);
	return at;
}

static size_t disable_twice(struct enc *en)
{
	/* libipt: -pte_bad_context */
	return ip_after_syscall(en, ppt_tip_pgd, 0);
}

static size_t fup_then_tnt(struct enc *en)
{
	/* an asynchronous branch's FUP wants its TIP (perf: "Missing TIP
	 * after FUP"; libipt 2.0.5 reports it only where another packet
	 * comes between them, as a PSBEND: -pte_bad_query) */
	size_t at;

	psb(en, addr[S_START], 0);
	pkt_ip(en, ppt_fup, addr[S_START]);
	at = enc_at(en);
	tnt(en, "NTTNTT");
	return at;
}

static size_t fup_without_ip(struct enc *en)
{
	/* libipt: -pte_ip_suppressed */
	size_t at;

	psb(en, addr[S_START], 0);
	tnt(en, "NTTNTT");
	at = enc_at(en);
	pkt_ip(en, ppt_fup, 0);
	return at;
}

static size_t fup_while_off(struct enc *en)
{
	size_t at = ip_after_syscall(en, ppt_fup, addr[S_AFTER_SYS]);

	pkt_ip(en, ppt_tip_pge, addr[S_AFTER_SYS]);
	return at;
}

static size_t mode_then_tnt(struct enc *en)
{
	/* a MODE.Exec binds to the TIP of the far branch after it */
	size_t at;

	psb(en, addr[S_START], 0);
	mode_exec(en);
	at = enc_at(en);
	tnt(en, "NTTNTT");
	return at;
}

static size_t tnt_in_psb(struct enc *en)
{
	size_t at;

	pkt(en, ppt_psb);
	pkt_ip(en, ppt_fup, addr[S_START]);
	at = enc_at(en);
	tnt(en, "NTTNTT");
	pkt(en, ppt_psbend);
	return at;
}

static size_t tma_without_tsc(struct enc *en)
{
	struct pt_packet p = {0};
	size_t at;

	pkt(en, ppt_psb);
	at = enc_at(en);
	p.type = ppt_tma;
	p.payload.tma.ctc = 0x1234;
	p.payload.tma.fc = 7;
	put(en, &p);
	pkt_ip(en, ppt_fup, addr[S_START]);
	pkt(en, ppt_psbend);
	return at;
}

static size_t cbr_zero(struct enc *en)
{
	static const uint8_t b[] = {0x02, 0x03, 0x00, 0x00};
	size_t at;

	psb(en, addr[S_START], 0);
	at = enc_at(en);
	raw(en, b, sizeof(b));
	return at;
}

static size_t mode_reserved_leaf(struct enc *en)
{
	static const uint8_t b[] = {0x99, 0x40};
	size_t at;

	psb(en, addr[S_START], 0);
	at = enc_at(en);
	raw(en, b, sizeof(b));
	return at;
}

static size_t cyc_too_long(struct enc *en)
{
	/* more than 64 bits of cycles: the ninth extension byte */
	static const uint8_t b[] = {0x07, 0x03, 0x03, 0x03, 0x03,
				    0x03, 0x03, 0x03, 0x03, 0x02};
	size_t at;

	psb(en, addr[S_START], 0);
	at = enc_at(en);
	raw(en, b, sizeof(b));
	return at;
}

static size_t psb_cut_short(struct enc *en)
{
	/* a PSB's first 14 bytes, then the rest of a PSB+ */
	static const uint8_t b[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
				    0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
	size_t at;

	psb(en, addr[S_START], 0);
	tnt(en, "NTTNTT");
	at = enc_at(en);
	raw(en, b, sizeof(b));
	pkt_ip(en, ppt_fup, addr[S_JNZ]);
	pkt(en, ppt_psbend);
	return at;
}

static size_t psb_in_psb_plus(struct enc *en)
{
	/* a PSB+ whose PSBEND never came (the bytes after its start lost
	 * up to the next PSB, which the test puts here): libipt fails to
	 * read it (-pte_bad_context), the fast walker at the next PSB */
	size_t at;

	psb(en, addr[S_START], 0);
	tnt(en, "NTTNTT");
	pkt(en, ppt_psb);
	tsc(en, 0x1000);
	at = enc_at(en);
	return at;
}

static const struct contradiction {
	const char *name;
	size_t (*make)(struct enc *en);
	int code;   /* the fast walker's */
	int libipt; /* libipt reports it too */
} contradictions[] = {
	{"tnt while tracing is off", no_enable_tnt, STRACE_E_DESYNC, 1},
	{"tip while tracing is off", no_enable_tip, STRACE_E_DESYNC, 1},
	{"mode.exec and tip while tracing is off",
	 mode_exec_then_tip_while_off, STRACE_E_DESYNC, 1},
	{"tip.pgd while tracing is off", disable_twice, STRACE_E_DESYNC, 1},
	{"tnt between fup and tip", fup_then_tnt, STRACE_E_NOTIP, 0},
	{"fup without ip", fup_without_ip, STRACE_E_NOIP, 1},
	{"fup while tracing is off", fup_while_off, STRACE_E_DESYNC, 1},
	{"tnt between mode.exec and tip", mode_then_tnt, STRACE_E_NOTIP, 1},
	{"tnt in a psb+", tnt_in_psb, STRACE_E_DESYNC, 1},
	{"tma without tsc", tma_without_tsc, STRACE_E_DESYNC, 1},
	{"cbr of ratio 0", cbr_zero, STRACE_E_BADPKT, 1},
	{"mode of a reserved leaf", mode_reserved_leaf, STRACE_E_BADPKT, 1},
	{"cyc of more than 64 bits", cyc_too_long, STRACE_E_BADPKT, 1},
	{"psb cut short", psb_cut_short, STRACE_E_BADPKT, 1},
	{"psb in a psb+", psb_in_psb_plus, STRACE_E_DESYNC, 1},
};

static size_t count_errors(const struct evs *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n; i++)
		n += e->v[i].type == STRACE_EV_ERROR;
	return n;
}

/* The first error event of e: its index, or -1. */
static long first_error(const struct evs *e)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->v[i].type == STRACE_EV_ERROR)
			return (long)i;
	return -1;
}

/*
 * Every contradiction libipt reports, the fast walker reports too, at the
 * packet that shows it, and then resumes at the next PSB (issue 38: a
 * TIP.PGE lost after a syscall went unreported by the fast walker and the
 * bitwise one, while libipt and perf reported it). Each decoder reports
 * it once (libipt where its query stands: at the packet, a PSB+ it could
 * not read, or past the packets it read ahead). Each trace ends with a
 * PSB+ and the program's flow after it, which both decoders must reach.
 */
TEST(contradictions_reported_as_libipt_does)
{
	if (!setup())
		SKIP("cannot build the test program");
	for (size_t k = 0; k < sizeof(contradictions) / sizeof(contradictions[0]);
	     k++) {
		const struct contradiction *c = &contradictions[k];
		static struct evs fast, bit, ref;
		struct enc en;
		size_t at, len;
		long ef, er;

		enc_init(&en);
		at = c->make(&en);
		psb(&en, addr[S_AFTER_SYS], 0);
		tnt(&en, "TT");
		len = enc_done(&en);
		decode(en.buf, len, 0, &fast, NULL);
		decode(en.buf, len, STRACE_WALK_BIT_BY_BIT, &bit, NULL);
		decode(en.buf, len, STRACE_WALK_REFERENCE, &ref, NULL);
		ef = first_error(&fast);
		er = first_error(&ref);
		if (ef < 0 || (er < 0) == c->libipt) {
			fprintf(stderr, "  %s: first error of the fast walker "
					"%ld, of libipt %ld\n",
				c->name, ef, er);
			th_failed_checks++;
			continue;
		}
		if (fast.v[ef].flags != c->code || fast.v[ef].b != at) {
			fprintf(stderr,
				"  %s: the fast walker's error %u at %llu; "
				"want %d at %zu\n",
				c->name, fast.v[ef].flags,
				(unsigned long long)fast.v[ef].b, c->code, at);
			th_failed_checks++;
		}
		CHECK_INT(count_errors(&fast), ==, 1);
		CHECK_INT(count_errors(&ref), ==, c->libipt);
		/* resumed at the last PSB: the call to f and its return */
		CHECK_INT(fast.v[fast.n - 1].type, ==, STRACE_EV_TRACE_END);
		CHECK_INT(fast.v[fast.n - 2].type, ==, STRACE_EV_RETURN);
		CHECK(fast.n == bit.n &&
		      !memcmp(fast.v, bit.v, fast.n * sizeof(fast.v[0])));
	}
}

/*
 * A byte that is no packet in the last bytes of the trace is an error
 * there, as libipt says (the fast walker took any packet libipt could not
 * decode in the last 16 bytes for one cut by the end: a corrupted TIP
 * before a thread's last packets went unreported); a packet really cut
 * by the end is not.
 */
TEST(bad_packet_at_the_end)
{
	static const uint8_t bad[] = {0x85, 0x88, 0x02, 0x04, 0x01};
	static const uint8_t cut[] = {0x02, 0xc8, 0x00}; /* a VMCS, cut */
	static struct evs fast, bit, ref;
	struct enc en;
	size_t at, len;
	long ef;

	if (!setup())
		SKIP("cannot build the test program");
	enc_init(&en);
	psb(&en, addr[S_START], 0);
	tnt(&en, "NTTNTT");
	at = enc_at(&en);
	raw(&en, bad, sizeof(bad));
	len = enc_done(&en);
	decode(en.buf, len, 0, &fast, NULL);
	decode(en.buf, len, STRACE_WALK_BIT_BY_BIT, &bit, NULL);
	decode(en.buf, len, STRACE_WALK_REFERENCE, &ref, NULL);
	ef = first_error(&fast);
	REQUIRE(ef >= 0);
	CHECK_INT(fast.v[ef].flags, ==, STRACE_E_BADPKT);
	CHECK_U64(fast.v[ef].b, ==, at);
	CHECK_INT(count_errors(&fast), ==, 1);
	CHECK_INT(count_errors(&ref), ==, 1);
	CHECK(fast.n == bit.n &&
	      !memcmp(fast.v, bit.v, fast.n * sizeof(fast.v[0])));

	enc_init(&en);
	psb(&en, addr[S_START], 0);
	tnt(&en, "NTTNTT");
	raw(&en, cut, sizeof(cut));
	len = enc_done(&en);
	decode(en.buf, len, 0, &fast, NULL);
	CHECK_INT(count_errors(&fast), ==, 0);
}

/*
 * libipt and perf defer the TIP of a far branch as of an indirect one:
 * TNT bits for the branches after a syscall may come before its TIP (a
 * trace of the kernel too). The fast walker keeps them for after the TIP,
 * and both decoders give the same events, without error. So does a
 * TIP.PGD a MODE.Exec binds to while tracing is off.
 */
TEST(deferred_tip_of_a_syscall)
{
	struct evs fast, ref;
	struct enc en;
	size_t len;

	if (!setup())
		SKIP("cannot build the test program");
	enc_init(&en);
	psb(&en, addr[S_TAIL], 0);
	tnt(&en, "T");   /* f's je, after the syscall */
	pkt_ip(&en, ppt_tip, addr[S_AFTER_SYS]); /* the syscall's */
	tnt(&en, "T");   /* f's ret */
	pkt_ip(&en, ppt_tip_pgd, 0);
	mode_exec(&en);
	pkt_ip(&en, ppt_tip_pgd, 0);
	len = enc_done(&en);
	decode(en.buf, len, 0, &fast, NULL);
	decode(en.buf, len, STRACE_WALK_REFERENCE, &ref, NULL);
	CHECK_INT(first_error(&fast), ==, -1);
	CHECK_INT(first_error(&ref), ==, -1);
	check_same(&fast, &ref);
	CHECK(fast.n >= 4 && fast.v[1].type == STRACE_EV_SYSCALL &&
	      fast.v[1].b == addr[S_AFTER_SYS]);
}

/* Decode buf over im fast and one bit at a time: the same events, event
 * for event; the errors' count, each a compressed return with nothing to
 * pop (RETCOMP) at err_ip. */
static int same_as_bitwise(struct strace_image *im, const uint8_t *buf,
			   size_t len, uint64_t err_ip, struct evs *fast)
{
	static struct evs bit;
	int errs = 0;

	CHECK_INT(decode_in(im, buf, len, 0, fast, NULL), >, 0);
	CHECK_INT(decode_in(im, buf, len, STRACE_WALK_BIT_BY_BIT, &bit, NULL),
		  >, 0);
	CHECK_INT(fast->n, ==, bit.n);
	CHECK(fast->n == bit.n &&
	      !memcmp(fast->v, bit.v, fast->n * sizeof(fast->v[0])));
	for (size_t i = 0; i < fast->n; i++)
		if (fast->v[i].type == STRACE_EV_ERROR) {
			errs++;
			CHECK_INT(fast->v[i].flags, ==, STRACE_E_RETCOMP);
			CHECK_U64(fast->v[i].a, ==, err_ip);
		}
	return errs;
}

/*
 * The cache of recorded TNT runs replays a record only as the walk one
 * bit at a time would go. f's ret is recorded popping the address that
 * _start's call pushed; after a PSB (which empties the stack) the same
 * run from the same place finds nothing to pop, and must fail there as
 * the bit-by-bit walk does. A long TNT (more bits than one record holds)
 * must also come out the same.
 */
TEST(run_cache_replays_exactly)
{
	struct enc en;
	struct evs fast;
	size_t len;

	if (!setup())
		SKIP("cannot build the test program");
	enc_init(&en);
	psb(&en, addr[S_START], 1000);
	tnt(&en, "N"); /* f's je: the walk stands at site_nop */
	tnt(&en, "T"); /* f's ret, recorded popping _start's push */
	tnt(&en, "TNTTNTN"); /* the loop's last two rounds, in one packet */
	pkt_ip(&en, ppt_tip_pgd, 0);
	psb(&en, 0, 2000); /* tracing off: no FUP */
	pkt_ip(&en, ppt_tip_pge, addr[S_NOP]);
	tnt(&en, "T"); /* the recorded run: nothing to pop now */
	len = enc_done(&en);
	/* one error, at the ret's block */
	CHECK_INT(same_as_bitwise(img, en.buf, len, addr[S_NOP], &fast), ==, 1);
}

/*
 * A record of several segments: a run that returns past its start more
 * than once. rec recurses (depth 3 from _start, 2 from s1); its returns
 * are compressed. "TTTT" at rec's innermost jz is recorded the first time
 * as four segments' worth: the jz, then returns popping rr, rr and s1,
 * all pushed before the run. Replayed from s1's call, the second return
 * pops s2, not rr: the replay must stop there, and the bit left goes on
 * from s2. After a PSB (an empty stack) entered at rec, the replay's
 * second return finds nothing to pop: it must fail there (RETCOMP at rr's
 * block) as the walk one bit at a time does. The same failure in a
 * record whose last segment ends elsewhere (s2's jz, recorded from s1)
 * must still fail at that return's block, not at the record's end.
 */
static const char *rec_src =
	"	.text\n"
	"	.globl _start, rec\n"
	"	.hidden s1, s2, rr, base, done\n"
	"	.type _start,@function\n"
	"_start:\n"
	"	mov $3, %ecx\n"
	"	call rec\n"
	"s1:\n"
	"	mov $2, %ecx\n"
	"	call rec\n"
	"s2:\n"
	"	test %ecx, %ecx\n"
	"	jz done\n"
	"	nop\n"
	"done:\n"
	"	syscall\n"
	"	.size _start, .-_start\n"
	"	.type rec,@function\n"
	"rec:\n"
	"	dec %ecx\n"
	"	jz base\n"
	"	call rec\n"
	"rr:\n"
	"	ret\n"
	"base:\n"
	"	ret\n"
	"	.size rec, .-rec\n";

/* Both traces of the test below end so: the trace stops, a PSB at rec
 * (the stack empty), rec's walk down to its second jz (rr pushed, nothing
 * under it), and the record replayed, whose second return finds no
 * address. Returns the trace's length. */
static size_t empty_stack_end(struct enc *en, uint64_t rec)
{
	pkt_ip(en, ppt_tip_pgd, 0);
	psb(en, 0, 2000); /* tracing off: no FUP */
	pkt_ip(en, ppt_tip_pge, rec);
	tnt(en, "N");
	tnt(en, "TTTT");
	return enc_done(en);
}

TEST(run_cache_segments_replay_exactly)
{
	static const char *names[] = {"_start", "rec", "s1", "s2", "rr",
				      NULL};
	enum { R_START, R_REC, R_S1, R_S2, R_RR, R_N };
	uint64_t at[R_N];
	char bin[600];
	struct strace_image *im = NULL;
	struct enc en;
	static struct evs fast;
	size_t len;
	int rets_to_s2 = 0;

	if (!build_prog("rec", rec_src, names, at, bin, sizeof(bin)))
		SKIP("cannot build the test program");
	REQUIRE(strace_image_new(NULL, &im) == 0);
	REQUIRE(tl_map_elf(im, bin, 0) > 0);
	enc_init(&en);
	psb(&en, at[R_START], 1000);
	tnt(&en, "NN");   /* down to rec's third jz: s1, rr, rr pushed */
	tnt(&en, "TTTT"); /* recorded: the jz, then three returns */
	tnt(&en, "N");    /* from s1: down to rec's second jz: s2, rr */
	tnt(&en, "TTTT"); /* replayed: the second return pops s2 */
	len = empty_stack_end(&en, at[R_REC]);
	/* one error, at the ret's block */
	CHECK_INT(same_as_bitwise(im, en.buf, len, at[R_RR], &fast), ==, 1);
	for (size_t i = 0; i < fast.n; i++)
		rets_to_s2 += fast.v[i].type == STRACE_EV_RETURN &&
			      fast.v[i].b == at[R_S2];
	/* the replay stopped at s2 (its last bit, s2's jz to done, makes no
	 * event: a jump inside _start) */
	CHECK_INT(rets_to_s2, ==, 1);

	enc_init(&en);
	psb(&en, at[R_S1], 1000);
	tnt(&en, "N");    /* from s1: down to rec's second jz: s2, rr */
	tnt(&en, "TTTT"); /* recorded: the jz, returns popping rr and s2,
			   * s2's jz (the last segment ends at done) */
	len = empty_stack_end(&en, at[R_REC]);
	CHECK_INT(same_as_bitwise(im, en.buf, len, at[R_RR], &fast), ==, 1);
	strace_image_free(im);
}

TEST(timestamps)
{
	struct enc en;
	struct evs fast;
	struct strace_time_conv tc = {0};
	size_t len;
	uint64_t prev = 0;
	int backwards = 0;

	if (!setup())
		SKIP("cannot build the test program");
	/* perf's formula, by hand: shift 10, mult 512 (0.5 ns per tick) */
	tc.time_shift = 10;
	tc.time_mult = 512;
	tc.time_zero = 7000;
	tc.cap_user_time_zero = 1;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 1000000), ==, 7000 + 500000);
	CHECK_U64(strace_tsc_to_perf_time(&tc, 1025), ==, 7000 + 512);
	len = encode_program(&en, 1);
	CHECK_INT(decode(en.buf, len, 0, &fast, &tc), >, 0);
	for (size_t i = 0; i < fast.n; i++) {
		backwards += fast.v[i].time < prev;
		prev = fast.v[i].time;
	}
	CHECK_INT(backwards, ==, 0);
	REQUIRE(fast.n > 12);
	CHECK_U64(fast.v[0].time, ==, 7000 + 500000);
	/* the syscall's return comes after the TSC of 1002000 */
	for (size_t i = 0; i < fast.n; i++)
		if (fast.v[i].type == STRACE_EV_SYSRET)
			CHECK_U64(fast.v[i].time, ==, 7000 + 501000);
}

/* A time_shift of 64 or more (a damaged perf.data; readers refuse it) is
 * an undefined shift in perf's formula: the conversion gives time_zero,
 * the formula's limit, and a decode with it gives every event that time
 * (UBSan in the SAN build reported the shift here before). */
TEST(time_shift_out_of_range)
{
	struct enc en;
	struct evs fast;
	struct strace_time_conv tc = {0};
	size_t len;

	tc.time_mult = 512;
	tc.time_zero = 7000;
	tc.cap_user_time_zero = 1;
	/* shifts no kernel gives (a damaged file; also
	 * tests/fuzz/corpus/perf/crash-bb2a7a8d..., 63744): the formula's
	 * limit, never a shift by 64 or more */
	for (unsigned shift = 64; shift < 300; shift += 59) {
		tc.time_shift = (uint16_t)shift;
		CHECK_U64(strace_tsc_to_perf_time(&tc, 1000000), ==, 7000);
		CHECK_U64(strace_tsc_to_perf_time(&tc, UINT64_MAX), ==, 7000);
	}
	tc.time_shift = 63744;
	CHECK_U64(strace_tsc_to_perf_time(&tc, 1025), ==, 7000);
	if (!setup())
		SKIP("cannot build the test program");
	tc.time_shift = 64;
	len = encode_program(&en, 1);
	CHECK_INT(decode(en.buf, len, 0, &fast, &tc), >, 0);
	REQUIRE(fast.n > 12);
	for (size_t i = 0; i < fast.n; i++)
		CHECK_U64(fast.v[i].time, ==, 7000);
	/* the reference decoder converts libipt's times the same way */
	CHECK_INT(decode(en.buf, len, STRACE_WALK_REFERENCE, &fast, &tc), >, 0);
	for (size_t i = 0; i < fast.n; i++)
		CHECK(fast.v[i].time == 7000 || fast.v[i].time == 0);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random damage to a good stream: never a crash, never a hang. */
TEST(fuzz_no_crash)
{
	struct enc en;
	static struct evs fast;
	uint8_t buf[4096];
	size_t len;
	int ok = 0;

	if (!setup())
		SKIP("cannot build the test program");
	len = encode_program(&en, 1);
	for (int it = 0; it < 3000; it++) {
		long n;
		memcpy(buf, en.buf, len);
		for (int k = 0; k < 1 + (int)(next_rand() % 4); k++)
			buf[next_rand() % len] = (uint8_t)next_rand();
		n = decode(buf, len, 0, &fast, NULL);
		ok += n >= 0 || n == -STRACE_E_NOSYNC;
		if (it % 10 == 0) {
			n = decode(buf, len, STRACE_WALK_REFERENCE, &fast,
				   NULL);
			(void)n;
		}
	}
	CHECK_INT(ok, ==, 3000);
}

TEST(split_at_psbs)
{
	struct enc en;
	uint64_t offs[8];
	size_t len, n, a;

	if (!setup())
		SKIP("cannot build the test program");
	enc_init(&en);
	psb(&en, addr[S_START], 0);
	tnt(&en, "NTTNTT");
	pkt_ip(&en, ppt_pad, 0);
	pt_enc_get_offset(en.e, &offs[7]);
	a = (size_t)offs[7];
	psb(&en, addr[S_TAIL], 0);
	pkt_ip(&en, ppt_tip_pgd, 0);
	len = enc_done(&en);
	n = strace_pt_split(en.buf, len, 1, offs, 8);
	CHECK_INT(n, ==, 2);
	CHECK_U64(offs[0], ==, 0);
	CHECK_U64(offs[1], ==, a);
	/* closer than min_bytes: only the first */
	CHECK_INT(strace_pt_split(en.buf, len, a + 1, offs, 8), ==, 1);
}

/* The ring sink: the same events through a strace_writer, read back. */
TEST(ring_writer_sink)
{
	struct enc en;
	struct evs want;
	struct strace_ring_opts ro = {0};
	struct strace_ring *ring = NULL;
	struct strace_writer *wr = NULL;
	struct strace_reader *rd = NULL;
	struct strace_walk_opts o = {0};
	struct strace_walker *w;
	struct strace_batch b;
	char path[700];
	size_t len, got = 0, same = 0;
	long n;

	if (!setup())
		SKIP("cannot build the test program");
	len = encode_program(&en, 0);
	REQUIRE(decode(en.buf, len, 0, &want, NULL) > 0);
	snprintf(path, sizeof(path), "%s/walk-ring.srb", tl_tmpdir());
	unlink(path);
	ro.size = sizeof(ro);
	ro.capacity = 1024;
	ro.strings_size = 1 << 16;
	ro.mode = STRACE_RING_ARCHIVE;
	REQUIRE(strace_ring_create(path, &ro, &ring) == 0);
	REQUIRE(strace_writer_open(ring, &wr) == 0);
	o.size = sizeof(o);
	o.tid = 42;
	o.writer = wr;
	REQUIRE(strace_walker_new(img, &o, &w) == 0);
	n = strace_walker_decode(w, en.buf, len);
	strace_walker_free(w);
	CHECK_INT(n, ==, (long)want.n);
	CHECK_INT(strace_writer_close(wr), ==, 0);
	REQUIRE(strace_reader_open(ring, 0, &rd) == 0);
	while (strace_reader_next(rd, &b, 0, 0) > 0) {
		for (size_t i = 0; i < b.n; i++, got++)
			if (got < want.n &&
			    !memcmp(&b.ev[i], &want.v[got], sizeof(b.ev[i])))
				same++;
		strace_reader_release(rd, &b);
	}
	CHECK_INT(got, ==, want.n);
	CHECK_INT(same, ==, want.n);
	strace_reader_close(rd);
	strace_ring_close(ring);
	unlink(path);
}

/* The walker's options by the rule of strace/opts.h: a caller built with
 * a smaller struct gets the defaults for the rest; a bigger one is taken
 * when its extra bytes are 0, refused when they are not. */
TEST(walker_opts_rule)
{
	struct {
		struct strace_walk_opts o;
		uint64_t more;
	} big;
	struct strace_walk_opts o = {0};
	struct strace_walker *w = NULL;

	if (!setup())
		SKIP("cannot build the test program");
	o.size = offsetof(struct strace_walk_opts, emit);
	o.tid = 7;
	CHECK_INT(strace_walker_new(img, &o, &w), ==, 0);
	strace_walker_free(w);
	memset(&big, 0, sizeof(big));
	big.o.size = sizeof(big);
	CHECK_INT(strace_walker_new(img, &big.o, &w), ==, 0);
	strace_walker_free(w);
	big.more = 1;
	w = NULL;
	CHECK_INT(strace_walker_new(img, &big.o, &w), ==, -STRACE_E_BADARG);
	CHECK(w == NULL);
	o.size = 2;
	CHECK_INT(strace_walker_new(img, &o, &w), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_walker_new(img, NULL, &w), ==, -STRACE_E_BADARG);
}

RUN_TESTS("test_decoder_walk")
