/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_format.c - ptrace-read's formatter (cli/view/format.c).
 *
 * The fast hand-written formatting is checked against slow references
 * built with snprintf from the same event table, for every type and many
 * operand values; escaping against RFC 8259's rules; names from a real
 * ring's string table (the lookups themselves: test_names.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/view/format.h"
#include "../harness.h"
#include "strace/event.h"
#include "strace/ring.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* values with every digit count and the edges around powers of 10 / 16 */
static uint64_t interesting(unsigned i)
{
	uint64_t p = 1;
	if (i < 20) {
		for (unsigned k = 0; k < i; k++)
			p *= 10;
		return p;
	}
	if (i < 40) {
		for (unsigned k = 0; k < i - 20; k++)
			p *= 10;
		return p - 1;
	}
	if (i < 104)
		return (1ull << (i - 40)) - (i & 1);
	if (i == 104)
		return UINT64_MAX;
	return rnd() >> (rnd() % 64);
}

TEST(decimal)
{
	for (unsigned i = 0; i < 5000; i++) {
		uint64_t v = interesting(i);
		char got[32], want[32];
		*fmt_put_u64(got, v) = '\0';
		snprintf(want, sizeof(want), "%" PRIu64, v);
		CHECK_STR(got, want);
	}
}

TEST(hex)
{
	for (unsigned i = 0; i < 5000; i++) {
		uint64_t v = interesting(i);
		char got[32], want[32];
		*fmt_put_hex(got, v) = '\0';
		snprintf(want, sizeof(want), "0x%" PRIx64, v);
		CHECK_STR(got, want);
	}
}

TEST(time)
{
	for (unsigned i = 0; i < 5000; i++) {
		uint64_t v = interesting(i);
		char got[40], want[40];
		*fmt_put_time(got, v) = '\0';
		snprintf(want, sizeof(want), "%" PRIu64 ".%09" PRIu64,
			 v / 1000000000u, v % 1000000000u);
		CHECK_STR(got, want);
	}
}

static void name_json(const char *in, size_t len, const char *want_json,
		      const char *want_text)
{
	struct fmt_names n;
	struct fmt_name out;
	char j[256], t[256];

	memset(&n, 0, sizeof(n));
	REQUIRE(fmt_name_make(&n, in, len, &out) == 0);
	snprintf(j, sizeof(j), "%.*s", (int)out.json_len, out.json);
	snprintf(t, sizeof(t), "%.*s", (int)out.text_len, out.text);
	CHECK_STR(j, want_json);
	CHECK_STR(t, want_text);
	fmt_names_fini(&n);
}

/* RFC 8259 section 7: '"', '\\' and U+0000..U+001F must be escaped */
TEST(escape)
{
	name_json("main", 4, "main", "main");
	name_json("a\"b\\c", 5, "a\\\"b\\\\c", "a\"b\\c");
	name_json("t\tn\nr\r", 6, "t\\tn\\nr\\r", "t?n?r?");
	name_json("\x01\x1f", 2, "\\u0001\\u001f", "??");
	name_json("x\0y", 3, "x\\u0000y", "x?y");
	/* valid UTF-8 passes through; a stray byte becomes \u00XX in JSON,
	 * '?' in text (the views' one rule: a terminal in another charset
	 * takes 0x9b for CSI) */
	name_json("unicod\xc3\xa9", 8, "unicod\xc3\xa9", "unicod\xc3\xa9");
	name_json("bad\xff", 4, "bad\\u00ff", "bad?");
	name_json("\xc3", 1, "\\u00c3", "?");      /* cut sequence */
	name_json("\xed\xa0\x80", 3, "\\u00ed\\u00a0\\u0080",
		  "???"); /* surrogate */
	/* DEL, ESC; a C1 control (U+009B, CSI) and U+FFFF are UTF-8 that
	 * JSON takes as they are, and no character a terminal shows */
	name_json("d\x7f\x1b[2J", 6, "d\\u007f\\u001b[2J", "d??[2J");
	name_json("c\xc2\x9b" "1m", 5, "c\xc2\x9b" "1m", "c??1m");
	name_json("n\xef\xbf\xbf", 4, "n\xef\xbf\xbf", "n???");
}

TEST(long_name_cut)
{
	static char big[FMT_NAME_MAX + 100];
	struct fmt_names n;
	struct fmt_name out;

	memset(big, 'a', sizeof(big));
	memset(&n, 0, sizeof(n));
	REQUIRE(fmt_name_make(&n, big, sizeof(big), &out) == 0);
	CHECK_INT(out.text_len, ==, FMT_NAME_MAX + 3);
	CHECK_INT(out.json_len, ==, FMT_NAME_MAX + 3);
	CHECK(!memcmp(out.text + FMT_NAME_MAX, "...", 3));
	fmt_names_fini(&n);
}

/* --- reference formatting with snprintf, no names ----------------------- */

static size_t ref_operand(char *p, size_t room, const char *name,
			  unsigned kind, uint64_t v, int json)
{
	switch (kind) {
	case STRACE_FK_NONE:
		return 0;
	case STRACE_FK_ADDR:
	case STRACE_FK_HEX:
		/* JSON: hex strings, exact beyond 2^53 */
		return (size_t)(json ? snprintf(p, room,
						",\"%s\":\"0x%" PRIx64 "\"",
						name, v)
				     : snprintf(p, room, " %s=0x%" PRIx64,
						name, v));
	case STRACE_FK_DEC:
		return (size_t)snprintf(p, room,
					json ? ",\"%s\":%" PRIu64
					     : " %s=%" PRIu64,
					name, v);
	case STRACE_FK_STR:
		/* no ring: an offset that cannot be resolved */
		return (size_t)(json ? snprintf(p, room, ",\"%s\":null", name)
				     : snprintf(p, room,
						" %s=<bad string offset 0x%" PRIx64
						">",
						name, v));
	case STRACE_FK_REASON:
		return (size_t)snprintf(p, room,
					json ? ",\"%s\":\"%s\"" : " %s=%s",
					name, strace_reason_name(v));
	case STRACE_FK_BLOCK:
		return (size_t)(json ? snprintf(p, room,
						",\"%s\":{\"insns\":%" PRIu64
						",\"bytes\":%" PRIu64 "}",
						name, v >> 32,
						v & 0xffffffffu)
				     : snprintf(p, room,
						" %s=%" PRIu64 "insn/%" PRIu64
						"B",
						name, v >> 32,
						v & 0xffffffffu));
	}
	return 0;
}

static void ref_line(char *p, size_t room, const struct strace_event *e,
		     uint64_t seq, int json)
{
	const struct strace_event_info *in = strace_event_info(e->type);
	const char *name = in ? in->name : "unknown";
	const char *an = in ? in->a_name : "a", *bn = in ? in->b_name : "b";
	unsigned ak = in ? in->a_kind : STRACE_FK_HEX;
	unsigned bk = in ? in->b_kind : STRACE_FK_HEX;
	size_t n;

	if (json) {
		if (in)
			n = (size_t)snprintf(p, room,
					     "{\"seq\":%" PRIu64
					     ",\"type\":\"%s\",\"tid\":%u,"
					     "\"time\":%" PRIu64,
					     seq, name, e->tid, e->time);
		else
			n = (size_t)snprintf(p, room,
					     "{\"seq\":%" PRIu64
					     ",\"type\":\"unknown\","
					     "\"type_value\":%u,\"tid\":%u,"
					     "\"time\":%" PRIu64,
					     seq, e->type, e->tid, e->time);
		if (e->flags)
			n += (size_t)snprintf(p + n, room - n, ",\"flags\":%u",
					      e->flags);
		if (e->flags && e->type == STRACE_EV_ERROR &&
		    strace_error_name(e->flags))
			n += (size_t)snprintf(p + n, room - n,
					      ",\"error\":\"%s\"",
					      strace_error_name(e->flags));
	} else {
		char tname[32];
		if (in)
			snprintf(tname, sizeof(tname), "%-11s", name);
		else
			snprintf(tname, sizeof(tname), "unknown#%u", e->type);
		n = (size_t)snprintf(p, room,
				     "%" PRIu64 " %" PRIu64 ".%09" PRIu64
				     " %u %s",
				     seq, e->time / 1000000000u,
				     e->time % 1000000000u, e->tid, tname);
	}
	if (an[0])
		n += ref_operand(p + n, room - n, an, ak, e->a, json);
	if (bn[0])
		n += ref_operand(p + n, room - n, bn, bk, e->b, json);
	if (json) {
		snprintf(p + n, room - n, "}\n");
	} else if (e->flags && e->type == STRACE_EV_ERROR) {
		/* the code by name: " code=BAD_PACKET (0x106a): text" */
		const char *nm = strace_error_name(e->flags);
		char up[64];
		size_t k;
		for (k = 0; nm && nm[k] && k < sizeof(up) - 1; k++)
			up[k] = (char)toupper((unsigned char)nm[k]);
		up[k] = '\0';
		if (nm)
			snprintf(p + n, room - n, " code=%s (0x%x): %s\n", up,
				 e->flags, strace_strerror(e->flags));
		else
			snprintf(p + n, room - n, " code=0x%x\n", e->flags);
	} else if (e->flags) {
		snprintf(p + n, room - n, " flags=0x%x\n", e->flags);
	} else {
		snprintf(p + n, room - n, "\n");
	}
}

static void check_lines(int json)
{
	static char got[FMT_LINE_MAX], want[4096];
	struct fmt f;
	unsigned values[STRACE_EV_MAX + 3], nv = 0;

	fmt_setup(&f, NULL, 0);
	for (unsigned t = 0; t < STRACE_EV_MAX; t++)
		if (strace_event_info(t))
			values[nv++] = t;
	values[nv++] = 7;     /* unnamed values */
	values[nv++] = 127;
	values[nv++] = 65535;
	for (unsigned i = 0; i < nv; i++) {
		for (unsigned rep = 0; rep < 200; rep++) {
			struct strace_event e;
			uint64_t seq = interesting(rep + 100 * (i & 1));
			char *end;
			e.type = (uint16_t)values[i];
			e.flags = (uint16_t)(rep % 3 ? 0 : rnd());
			if (rep % 6 == 3) /* a code that has a name */
				e.flags = (uint16_t)(STRACE_E_NOSYNC + rep % 10);
			e.tid = (uint32_t)rnd();
			e.time = interesting(rep);
			e.a = interesting(rep * 7 % 200);
			e.b = rep % 4 ? rnd() >> (rnd() % 64) : rep;
			end = json ? fmt_json_event(&f, got, &e, seq)
				   : fmt_text_event(&f, got, &e, seq);
			*end = '\0';
			ref_line(want, sizeof(want), &e, seq, json);
			CHECK_STR(got, want);
			if (strcmp(got, want))
				return;
		}
	}
}

TEST(text_lines_every_type)
{
	check_lines(0);
}

TEST(json_lines_every_type)
{
	check_lines(1);
}

/* --- names from a real ring --------------------------------------------- */

static struct strace_ring *tmp_ring(char *path, size_t len)
{
	struct strace_ring_opts o;
	struct strace_ring *r = NULL;

	snprintf(path, len, "/dev/shm/test_format_%d.srb", (int)getpid());
	unlink(path);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.capacity = 1024;
	o.strings_size = 1 << 16;
	o.no_populate = 1;
	if (strace_ring_create(path, &o, &r) < 0)
		return NULL;
	return r;
}

static int add(struct strace_ring *r, unsigned kind, uint64_t key,
	       uint64_t aux, const char *s, uint64_t *off)
{
	uint64_t o;
	return strace_ring_add_string(r, kind, key, aux, s, strlen(s),
				      off ? off : &o);
}

/* a line with names: symbols, the DSO fallback, strings, thread names */
TEST(line_with_names)
{
	char path[128], line[FMT_LINE_MAX];
	struct strace_ring *ring = tmp_ring(path, sizeof(path));
	struct strace_names *n;
	struct fmt f;
	struct strace_event e;
	uint64_t off;

	REQUIRE(ring);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x1000, 0x100, "fn\"q", NULL) ==
		0);
	REQUIRE(add(ring, STRACE_EV_DSO, 0x0, 0x10000, "/lib/libx.so", &off) ==
		0);
	REQUIRE(add(ring, STRACE_EV_THREAD, 7, 7, "t7", NULL) == 0);
	REQUIRE(strace_names_new(ring, &n) == 0);
	REQUIRE(strace_names_update(n) == 3);
	fmt_setup(&f, n, 1);

	memset(&e, 0, sizeof(e));
	e.type = STRACE_EV_CALL;
	e.tid = 7;
	e.time = 1500000000;
	e.a = 0x1010;
	e.b = 0x20000;
	*fmt_text_event(&f, line, &e, 5) = '\0';
	CHECK_STR(line, "5 1.500000000 7/t7 call        from=0x1010 "
			"<fn\"q+0x10> to=0x20000\n");
	*fmt_json_event(&f, line, &e, 5) = '\0';
	CHECK_STR(line, "{\"seq\":5,\"type\":\"call\",\"tid\":7,"
			"\"time\":1500000000,\"from\":\"0x1010\","
			"\"from_sym\":\"fn\\\"q+0x10\",\"to\":\"0x20000\","
			"\"comm\":\"t7\"}\n");
	e.a = 0x2000; /* only the DSO covers it */
	e.b = 0x1000;
	*fmt_json_event(&f, line, &e, 6) = '\0';
	CHECK(strstr(line, "\"from_sym\":\"[libx.so]+0x2000\"") != NULL);
	CHECK(strstr(line, "\"to_sym\":\"fn\\\"q\"") != NULL);

	e.type = STRACE_EV_DSO;
	e.a = 0;
	e.b = off;
	*fmt_json_event(&f, line, &e, 7) = '\0';
	CHECK(strstr(line, "\"path\":\"/lib/libx.so\"") != NULL);
	e.b = off + 1000000; /* not an entry */
	*fmt_json_event(&f, line, &e, 7) = '\0';
	CHECK(strstr(line, "\"path\":null") != NULL);

	fmt_cleanup(&f);
	strace_names_free(n);
	strace_ring_close(ring);
	unlink(path);
}

RUN_TESTS("test_format")
