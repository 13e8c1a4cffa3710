/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_dlf.c - the dlfilter's logic (libstrace_dlfcore.a),
 * driven by a fake perf: hand-assembled code at known addresses, two
 * symbols, and the samples perf would make for a known flow. The events
 * expected are derived from that flow by hand (see each case).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../harness.h"
#include "dlfilter/dlf.h"
#include "dlfilter/perf_abi.h"
#include "decoder/decoder.h"

/*
 * The program (DSO "/fake/prog" mapped with bias 0x400000):
 *
 * main:  0x401000  48 89 c3         mov %rax,%rbx
 *        0x401003  e8 f8 00 00 00   call foo
 *        0x401008  85 c0            test %eax,%eax
 *        0x40100a  74 04            je 0x401010
 *        0x40100c  90 90 90 90      nop x4
 *        0x401010  75 ee            jne 0x401000
 *        0x401012  0f 05            syscall
 *        0x401014  eb 6a            jmp 0x401080
 *        0x401080  e9 7b 00 00 00   jmp foo       (another symbol)
 * foo:   0x401100  90               nop
 *        0x401101  c3               ret
 */
#define BIAS 0x400000ull
#define MAIN 0x401000ull
#define FOO 0x401100ull
static uint8_t code[0x200];

static void build_code(void)
{
	static const uint8_t m[] = {0x48, 0x89, 0xc3, 0xe8, 0xf8, 0x00, 0x00,
				    0x00, 0x85, 0xc0, 0x74, 0x04, 0x90, 0x90,
				    0x90, 0x90, 0x75, 0xee, 0x0f, 0x05, 0xeb,
				    0x6a};
	memset(code, 0x90, sizeof(code));
	memcpy(code, m, sizeof(m));
	static const uint8_t j[] = {0xe9, 0x7b, 0x00, 0x00, 0x00};
	memcpy(code + 0x80, j, sizeof(j));
	code[0x100] = 0x90;
	code[0x101] = 0xc3;
}

struct fake {
	int resolves, code_reads;
	const char *comm; /* NULL: "prog" */
};

/* An address inside main that the fake perf names no symbol (perf 6.1
 * does that to .plt.got inside an extended _init); 0: none. */
static uint64_t fake_hole;

static int f_resolve(void *ctx, int which, uint64_t addr,
		     struct strace_dlf_loc *out)
{
	struct fake *f = ctx;
	(void)which;
	f->resolves++;
	memset(out, 0, sizeof(*out));
	if (addr < MAIN || addr >= MAIN + sizeof(code))
		return -1;
	out->dso = "/fake/prog";
	out->bias = BIAS;
	if (addr == fake_hole)
		return 0;
	if (addr < FOO) {
		out->sym = "main";
		out->sym_start = MAIN;
		out->sym_size = 0x100;
	} else if (addr < FOO + 0x40) {
		out->sym = "foo";
		out->sym_start = FOO;
		out->sym_size = 0x40;
	}
	return 0;
}

static const char *f_comm(void *ctx)
{
	struct fake *f = ctx;
	return f->comm ? f->comm : "prog";
}

static long f_code(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct fake *f = ctx;
	f->code_reads++;
	if (ip < MAIN || ip >= MAIN + sizeof(code))
		return -1;
	size_t off = (size_t)(ip - MAIN);
	if (len > sizeof(code) - off)
		len = sizeof(code) - off;
	memcpy(buf, code + off, len);
	return (long)len;
}

static const struct strace_dlf_host host = {f_resolve, f_comm, f_code};

#define BR DLF_FLAG_BRANCH
#define S_STRT (BR | DLF_FLAG_TRACE_BEGIN)
#define S_CALL (BR | DLF_FLAG_CALL)
#define S_RET (BR | DLF_FLAG_RETURN)
#define S_JCC (BR | DLF_FLAG_CONDITIONAL)
#define S_JMP BR
#define S_SYSCALL (BR | DLF_FLAG_CALL | DLF_FLAG_SYSCALLRET | DLF_FLAG_TRACE_END)
#define S_ASYNC (BR | DLF_FLAG_ASYNC | DLF_FLAG_TRACE_END)

/* The flow above, as perf's samples: (flags, ip, addr). */
static const struct {
	uint32_t flags;
	uint64_t ip, addr;
} flow[] = {
	{S_STRT, 0, MAIN},               /* 0: trace begins at main */
	{S_CALL, 0x401003, FOO},         /* 1 */
	{S_RET, 0x401101, 0x401008},     /* 2 */
	{S_JCC, 0x40100a, 0x401010},     /* 3: inside main */
	{S_JCC, 0x401010, MAIN},         /* 4: inside main */
	{S_CALL, 0x401003, FOO},         /* 5: the same as 1 (memo) */
	{S_RET, 0x401101, 0x401008},     /* 6 */
	{S_SYSCALL, 0x401012, 0},        /* 7: je, jne not taken */
	{S_STRT, 0, 0x401014},           /* 8: back from the kernel */
	{S_JMP, 0x401014, 0x401080},     /* 9: inside main */
	{S_JMP, 0x401080, FOO},          /* 10: main -> foo */
	{S_CALL, 0x401003, FOO},         /* 11: gap: foo never got here */
	{S_ASYNC, FOO, 0},               /* 12: interrupted at foo */
	{S_STRT, 0, MAIN},               /* 13 */
};
#define NFLOW (sizeof(flow) / sizeof(flow[0]))

static char dir[] = "/tmp/test_dlf.XXXXXX";

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
}

/* The code and a scratch directory, made once, removed at exit. */
static void setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	build_code();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(teardown);
}

static int run(const char *name, int argc, const char *const *argv,
	       struct strace_event *ev, size_t max, size_t *n,
	       struct strace_dlf_stats *st, struct strace_ring **ring_out)
{
	struct strace_dlf_opts o;
	struct strace_dlf *d;
	struct fake f = {0, 0, NULL};
	char path[512], err[256];
	int auto_path, rc;

	setup();
	snprintf(path, sizeof(path), "%s/%s.srb", dir, name);
	unlink(path);
	rc = strace_dlf_parse_args(&o, argc, argv, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "  parse: %s\n", err);
		return rc;
	}
	o.ring_path = path;
	rc = strace_dlf_new(&o, &d, &auto_path);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < NFLOW; i++) {
		struct strace_dlf_sample s = {flow[i].ip, flow[i].addr,
					      1000 + i, 100, 100,
					      flow[i].flags, 0};
		rc = strace_dlf_sample(d, &s, &host, &f);
		if (rc < 0)
			return rc;
	}
	strace_dlf_finish(d);
	strace_dlf_stats(d, st);
	rc = strace_dlf_free(d);
	if (rc < 0)
		return rc;

	struct strace_ring *ring;
	struct strace_reader *rd;
	struct strace_batch b;
	rc = strace_ring_open(path, &ring);
	if (rc < 0)
		return rc;
	strace_reader_open(ring, 0, &rd);
	*n = 0;
	long k;
	while ((k = strace_reader_next(rd, &b, 0, 0)) > 0) {
		for (long i = 0; i < k && *n < max; i++)
			ev[(*n)++] = b.ev[i];
		strace_reader_release(rd, &b);
	}
	strace_reader_close(rd);
	*ring_out = ring;
	return 0;
}

/* The flow events (no definitions), and a check that each address an
 * event names lies in a symbol defined before it. */
static size_t flow_only(struct strace_ring *ring, const struct strace_event *ev,
			size_t n, struct strace_event *out)
{
	uint64_t defined[16];
	size_t nd = 0, m = 0;

	for (size_t i = 0; i < n; i++) {
		const struct strace_event *e = &ev[i];
		if (e->type == STRACE_EV_SYMBOL) {
			struct strace_string s;
			CHECK_INT(strace_ring_string(ring, e->b, &s), ==, 0);
			CHECK_STR(s.str, e->a == MAIN ? "main" : "foo");
			if (nd < 16)
				defined[nd++] = e->a;
			continue;
		}
		if (e->type >= STRACE_EV_PROCESS)
			continue;
		const struct strace_event_info *in = strace_event_info(e->type);
		uint64_t addrs[2] = {in->a_kind == STRACE_FK_ADDR ? e->a : 0,
				     in->b_kind == STRACE_FK_ADDR ? e->b : 0};
		for (int k = 0; k < 2; k++) {
			if (!addrs[k])
				continue;
			uint64_t sym = addrs[k] >= FOO ? FOO : MAIN;
			int ok = 0;
			for (size_t j = 0; j < nd; j++)
				ok |= defined[j] == sym;
			if (!ok)
				fprintf(stderr, "  event %zu uses %llx before "
						"its symbol is defined\n",
					i, (unsigned long long)addrs[k]);
			CHECK(ok);
		}
		out[m++] = *e;
	}
	return m;
}

struct want {
	uint16_t type, flags;
	uint64_t a, b;
};

static void check_seq(const struct strace_event *got, size_t n,
		      const struct want *w, size_t nw)
{
	CHECK_INT(n, ==, nw);
	for (size_t i = 0; i < n && i < nw; i++) {
		if (got[i].type != w[i].type || got[i].a != w[i].a ||
		    got[i].b != w[i].b || got[i].flags != w[i].flags)
			fprintf(stderr,
				"  event %zu: got %s flags %x %llx %llx, want "
				"%s flags %x %llx %llx\n",
				i, strace_event_info(got[i].type)->name,
				got[i].flags, (unsigned long long)got[i].a,
				(unsigned long long)got[i].b,
				strace_event_info(w[i].type)->name, w[i].flags,
				(unsigned long long)w[i].a,
				(unsigned long long)w[i].b);
		CHECK_INT(got[i].type, ==, w[i].type);
		CHECK_INT(got[i].flags, ==, w[i].flags);
		CHECK_U64(got[i].a, ==, w[i].a);
		CHECK_U64(got[i].b, ==, w[i].b);
		CHECK_INT(got[i].tid, ==, 100);
	}
}

/* The events the flow makes by the mapping in docs/howto-dlfilter.md. */
#define E(t) STRACE_EV_##t
#define R(r) STRACE_REASON_##r
static const struct want want_default[] = {
	{E(TRACE_BEGIN), 0, MAIN, R(START)},
	{E(CALL), 0, 0x401003, FOO},
	{E(RETURN), 0, 0x401101, 0x401008},
	{E(CALL), 0, 0x401003, FOO},
	{E(RETURN), 0, 0x401101, 0x401008},
	{E(SYSCALL), 0, 0x401012, 0},
	{E(SYSRET), 0, 0, 0x401014},
	{E(JUMP), 0, 0x401080, FOO},
	{E(ERROR), STRACE_E_DESYNC, FOO, 0},
	{E(TRACE_BEGIN), 0, 0x401003, R(ERROR)},
	{E(CALL), 0, 0x401003, FOO},
	{E(INTERRUPT), STRACE_F_ASYNC, FOO, 0},
	{E(TRACE_BEGIN), 0, MAIN, R(ENABLE)},
	{E(TRACE_END), 0, MAIN, R(END)},
};

TEST(flow_default)
{
	static struct strace_event ev[256], fl[256];
	struct strace_dlf_stats st;
	struct strace_ring *ring = NULL;
	size_t n;

	REQUIRE(run("default", 0, NULL, ev, 256, &n, &st, &ring) == 0);
	/* definitions first: process, then the DSO at the bias */
	CHECK_INT(ev[0].type, ==, STRACE_EV_PROCESS);
	CHECK_INT(ev[0].a, ==, 100);
	CHECK_INT(ev[1].type, ==, STRACE_EV_DSO);
	CHECK_U64(ev[1].a, ==, BIAS);
	struct strace_string s;
	CHECK_INT(strace_ring_string(ring, ev[0].b, &s), ==, 0);
	CHECK_STR(s.str, "prog");
	CHECK_INT(strace_ring_string(ring, ev[1].b, &s), ==, 0);
	CHECK_STR(s.str, "/fake/prog");
	size_t m = flow_only(ring, ev, n, fl);
	check_seq(fl, m, want_default,
		  sizeof(want_default) / sizeof(want_default[0]));
	CHECK_U64(st.gaps, ==, 1);
	CHECK_U64(st.symbols, ==, 2);
	CHECK(st.memo_hits >= 1); /* sample 5 repeats sample 1 */
	strace_ring_close(ring);
}

/*
 * perf names main [MAIN, MAIN + 0x100) but leaves 0x401080 (sample 9's
 * target, sample 10's source) without a symbol: main is defined again,
 * ending there, so a reader names that address as perf does.
 */
TEST(hole_in_symbol)
{
	static struct strace_event ev[256];
	struct strace_dlf_stats st;
	struct strace_ring *ring = NULL;
	uint64_t sizes[4];
	size_t n, ns = 0;

	fake_hole = 0x401080;
	int rc = run("hole", 0, NULL, ev, 256, &n, &st, &ring);
	fake_hole = 0;
	REQUIRE(rc == 0);
	for (size_t i = 0; i < n; i++) {
		struct strace_string s;
		if (ev[i].type != STRACE_EV_SYMBOL || ev[i].a != MAIN)
			continue;
		CHECK_INT(strace_ring_string(ring, ev[i].b, &s), ==, 0);
		if (ns < 4)
			sizes[ns++] = s.aux;
	}
	CHECK_INT(ns, ==, 2);
	if (ns == 2) {
		CHECK_U64(sizes[0], ==, 0x100);
		CHECK_U64(sizes[1], ==, 0x80);
	}
	/* main -> the unnamed address is no longer a jump inside main */
	int seen = 0;
	for (size_t i = 0; i < n; i++)
		seen |= ev[i].type == STRACE_EV_JUMP && ev[i].a == 0x401014 &&
			ev[i].b == 0x401080;
	CHECK(seen);
	strace_ring_close(ring);
}

TEST(flow_all_branches)
{
	static struct strace_event ev[256], fl[256];
	struct strace_dlf_stats st;
	struct strace_ring *ring = NULL;
	const char *args[] = {"all-branches"};
	size_t n;

	REQUIRE(run("all", 1, args, ev, 256, &n, &st, &ring) == 0);
	size_t m = flow_only(ring, ev, n, fl);
	/* the same, plus the three jumps inside main, flagged intra */
	const struct want w[] = {
		{E(TRACE_BEGIN), 0, MAIN, R(START)},
		{E(CALL), 0, 0x401003, FOO},
		{E(RETURN), 0, 0x401101, 0x401008},
		{E(JUMP), STRACE_F_CONDITIONAL | STRACE_F_INTRA, 0x40100a,
		 0x401010},
		{E(JUMP), STRACE_F_CONDITIONAL | STRACE_F_INTRA, 0x401010, MAIN},
		{E(CALL), 0, 0x401003, FOO},
		{E(RETURN), 0, 0x401101, 0x401008},
		{E(SYSCALL), 0, 0x401012, 0},
		{E(SYSRET), 0, 0, 0x401014},
		{E(JUMP), STRACE_F_INTRA, 0x401014, 0x401080},
		{E(JUMP), 0, 0x401080, FOO},
		{E(ERROR), STRACE_E_DESYNC, FOO, 0},
		{E(TRACE_BEGIN), 0, 0x401003, R(ERROR)},
		{E(CALL), 0, 0x401003, FOO},
		{E(INTERRUPT), STRACE_F_ASYNC, FOO, 0},
		{E(TRACE_BEGIN), 0, MAIN, R(ENABLE)},
		{E(TRACE_END), 0, MAIN, R(END)},
	};
	check_seq(fl, m, w, sizeof(w) / sizeof(w[0]));
	strace_ring_close(ring);
}

TEST(no_check)
{
	static struct strace_event ev[256], fl[256];
	struct strace_dlf_stats st;
	struct strace_ring *ring = NULL;
	const char *args[] = {"no-check"};
	size_t n;

	REQUIRE(run("nocheck", 1, args, ev, 256, &n, &st, &ring) == 0);
	size_t m = flow_only(ring, ev, n, fl);
	/* without the check the gap at sample 11 goes unseen */
	CHECK_INT(m, ==, sizeof(want_default) / sizeof(want_default[0]) - 2);
	CHECK_U64(st.gaps, ==, 0);
	strace_ring_close(ring);
}

TEST(types)
{
	static struct strace_event ev[256], fl[256];
	struct strace_dlf_stats st;
	struct strace_ring *ring = NULL;
	const char *args[] = {"types=call,sys*,symbol"};
	const char *nosym[] = {"types=call,sys*"};
	struct strace_string str;
	uint64_t off = 0;
	size_t n, nsym = 0;

	REQUIRE(run("types", 1, args, ev, 256, &n, &st, &ring) == 0);
	size_t m = flow_only(ring, ev, n, fl);
	const struct want w[] = {
		{E(CALL), 0, 0x401003, FOO},
		{E(CALL), 0, 0x401003, FOO},
		{E(SYSCALL), 0, 0x401012, 0},
		{E(SYSRET), 0, 0, 0x401014},
		{E(CALL), 0, 0x401003, FOO},
	};
	check_seq(fl, m, w, sizeof(w) / sizeof(w[0]));
	strace_ring_close(ring);

	/* without symbol: the same flow, no symbol events, and the names
	 * still in the string table for readers */
	REQUIRE(run("types", 1, nosym, ev, 256, &n, &st, &ring) == 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(ev[i].type != STRACE_EV_SYMBOL);
		CHECK(ev[i].type == STRACE_EV_CALL ||
		      ev[i].type == STRACE_EV_SYSCALL ||
		      ev[i].type == STRACE_EV_SYSRET);
	}
	CHECK_INT(n, ==, 5);
	while (strace_ring_string_next(ring, &off, &str) > 0)
		nsym += str.kind == STRACE_EV_SYMBOL;
	CHECK_INT(nsym, ==, 2); /* main and foo */
	strace_ring_close(ring);
}

TEST(args)
{
	struct strace_dlf_opts o;
	char err[256];
	const char *good[] = {"ring=/x", "mode=flight", "capacity=1024",
			      "all-branches", "types=call,-jump", "print",
			      "late", "stats", "no-check", "names=perf"};
	CHECK_INT(strace_dlf_parse_args(&o, 10, good, err, sizeof(err)), ==, 0);
	CHECK_STR(o.ring_path, "/x");
	CHECK_INT(o.mode, ==, STRACE_RING_FLIGHT);
	CHECK_U64(o.capacity, ==, 1024);
	CHECK(o.all_branches && o.print && o.late && o.stats && o.no_check &&
	      o.perf_names);
	CHECK(o.has_types && strace_typeset_has(&o.types, STRACE_EV_CALL) &&
	      !strace_typeset_has(&o.types, STRACE_EV_JUMP));
	CHECK_INT(strace_dlf_parse_args(&o, 0, NULL, err, sizeof(err)), ==, 0);
	CHECK_INT(o.mode, ==, STRACE_RING_ARCHIVE);
	CHECK(!o.perf_names); /* names=plain by default */

	const char *bad[] = {"bogus", "mode=fast", "capacity=1000",
			     "types=nosuchtype", "print=1", "ring=",
			     "names=gdb", "names"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *a[] = {bad[i]};
		err[0] = 0;
		CHECK_INT(strace_dlf_parse_args(&o, 1, a, err, sizeof(err)),
			  ==, -EINVAL);
		CHECK(err[0] != 0);
	}
}

TEST(existing_ring_refused)
{
	struct strace_dlf_opts o;
	struct strace_dlf *d = NULL;
	char path[512], err[64];
	int auto_path;

	setup();
	snprintf(path, sizeof(path), "%s/exists.srb", dir);
	FILE *f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs("not a ring", f);
	fclose(f);
	strace_dlf_parse_args(&o, 0, NULL, err, sizeof(err));
	o.ring_path = path;
	CHECK_INT(strace_dlf_new(&o, &d, &auto_path), ==, -EEXIST);
	CHECK(d == NULL);
	/* the file is left alone */
	f = fopen(path, "r");
	REQUIRE(f != NULL);
	char buf[16] = {0};
	CHECK(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	CHECK_STR(buf, "not a ring");
	unlink(path);
}

/* An exec shows as a new name at a trace begin: the process's addresses
 * are resolved afresh, its DSOs defined again, the new name defined. */
TEST(exec_rename)
{
	struct strace_dlf_opts o;
	struct strace_dlf *d;
	struct strace_dlf_stats st;
	struct fake f = {0, 0, NULL};
	char path[512], err[64];
	int auto_path;

	setup();
	snprintf(path, sizeof(path), "%s/exec.srb", dir);
	unlink(path);
	strace_dlf_parse_args(&o, 0, NULL, err, sizeof(err));
	o.ring_path = path;
	REQUIRE(strace_dlf_new(&o, &d, &auto_path) == 0);
	/* (on CPU 0, then 2 from the return, then 0 again after the exec) */
	struct strace_dlf_sample s1 = {0, MAIN, 1, 7, 7, S_STRT, 1};
	struct strace_dlf_sample s2 = {0x401003, FOO, 2, 7, 7, S_CALL, 1};
	struct strace_dlf_sample s3 = {0x401101, 0x401008, 3, 7, 7, S_RET, 3};
	struct strace_dlf_sample s4 = {0x401012, 0, 4, 7, 7, S_SYSCALL, 3};
	struct strace_dlf_sample s5 = {0, MAIN, 5, 7, 7, S_STRT, 1};
	CHECK_INT(strace_dlf_sample(d, &s1, &host, &f), ==, 1);
	CHECK_INT(strace_dlf_sample(d, &s2, &host, &f), ==, 1);
	CHECK_INT(strace_dlf_sample(d, &s3, &host, &f), ==, 1);
	CHECK_INT(strace_dlf_sample(d, &s4, &host, &f), ==, 1);
	int before = f.resolves;
	f.comm = "newprog"; /* execve returned into a new image */
	CHECK_INT(strace_dlf_sample(d, &s5, &host, &f), ==, 1);
	CHECK(f.resolves > before); /* MAIN resolved again */
	strace_dlf_stats(d, &st);
	CHECK_U64(st.renames, ==, 1);
	REQUIRE(strace_dlf_free(d) == 0);

	struct strace_ring *ring;
	struct strace_reader *rd;
	struct strace_batch b;
	REQUIRE(strace_ring_open(path, &ring) == 0);
	strace_reader_open(ring, 0, &rd);
	int procs = 0, dsos = 0, last_proc_new = 0;
	char cpus[16] = "";
	long k;
	while ((k = strace_reader_next(rd, &b, 0, 0)) > 0) {
		for (long i = 0; i < k; i++) {
			struct strace_string str;
			if (b.ev[i].type == STRACE_EV_PROCESS) {
				procs++;
				CHECK_INT(strace_ring_string(ring, b.ev[i].b,
							     &str), ==, 0);
				last_proc_new = !strcmp(str.str, "newprog");
			}
			dsos += b.ev[i].type == STRACE_EV_DSO;
			/* a cpu event where the thread's CPU changed */
			if (b.ev[i].type == STRACE_EV_CPU &&
			    strlen(cpus) < sizeof(cpus) - 2)
				cpus[strlen(cpus)] = (char)('0' + b.ev[i].a);
		}
		strace_reader_release(rd, &b);
	}
	CHECK_INT(procs, ==, 2);
	CHECK(last_proc_new);
	CHECK_INT(dsos, ==, 2); /* the DSO again, after the exec */
	CHECK_STR(cpus, "020");
	strace_reader_close(rd);
	strace_ring_close(ring);
}

RUN_TESTS("test_dlf")
