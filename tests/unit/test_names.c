/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_names.c - reader-side names (strace/names.h) from a
 * real ring's string table: symbol ranges and their rules, DSOs,
 * threads and processes, offsets, aliases, incremental updates, and a
 * damaged table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "strace/names.h"
#include "strace/ring.h"

static struct strace_ring *tmp_ring(char *path, size_t len)
{
	struct strace_ring_opts o;
	struct strace_ring *r = NULL;

	snprintf(path, len, "/dev/shm/test_names_%d.srb", (int)getpid());
	unlink(path);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.capacity = 1024;
	o.strings_size = 1 << 18;
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

static void sym_is(struct strace_names *n, uint64_t addr, const char *want)
{
	const struct strace_name *e = strace_names_symbol(n, addr);
	char got[128];

	if (!e) {
		CHECK_STR("(none)", want);
		return;
	}
	snprintf(got, sizeof(got), "%s+%" PRIu64, e->str, addr - e->key);
	CHECK_STR(got, want);
}

TEST(lookups)
{
	char path[128];
	struct strace_ring *ring = tmp_ring(path, sizeof(path));
	struct strace_names *n;
	const struct strace_name *t, *d, *first;
	uint64_t off;

	REQUIRE(ring);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x2000, 0x10, "second", NULL) ==
		0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x1000, 0x100, "first", NULL) ==
		0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x3000, 0, "sizeless", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_DSO, 0x0, 0x10000, "/lib/libx.so", &off) ==
		0);
	REQUIRE(add(ring, STRACE_EV_PROCESS, 10, 0, "proc", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_THREAD, 10, 10, "main-thread", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_THREAD, 11, 10, "worker", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_PROCESS, 11, 0, "not-this", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_PROCESS, 20, 0, "alone", NULL) == 0);

	REQUIRE(strace_names_new(ring, &n) == 0);
	CHECK_INT(strace_names_count(n), ==, 0);
	sym_is(n, 0x1000, "(none)");
	CHECK_INT(strace_names_update(n), ==, 9);
	CHECK_INT(strace_names_update(n), ==, 0);
	CHECK_INT(strace_names_count(n), ==, 9);
	sym_is(n, 0x1000, "first+0");
	sym_is(n, 0x10ff, "first+255");
	sym_is(n, 0x1100, "(none)");
	sym_is(n, 0xfff, "(none)");
	sym_is(n, 0x2008, "second+8");
	sym_is(n, 0x2010, "(none)");
	sym_is(n, 0x3000, "sizeless+0");
	sym_is(n, 0x3001, "(none)");
	first = strace_names_symbol(n, 0x1000);
	REQUIRE(first);
	CHECK_INT(first->kind, ==, STRACE_EV_SYMBOL);
	CHECK_U64(first->aux, ==, 0x100);
	CHECK(strace_names_get(n, first->id) == first);
	CHECK(strace_names_get(n, 9) == NULL);

	d = strace_names_dso(n, 0x1100);
	REQUIRE(d);
	CHECK_STR(d->str, "/lib/libx.so");
	CHECK(strace_names_dso(n, 0x10000) == NULL);
	CHECK(strace_names_at(n, off) == d);
	CHECK(strace_names_at(n, off + 1) == NULL);

	t = strace_names_thread(n, 11);
	REQUIRE(t);
	CHECK_STR(t->str, "worker");
	CHECK_INT(t->aux, ==, 10);
	CHECK_STR(strace_names_process(n, (uint32_t)t->aux)->str, "proc");
	t = strace_names_thread(n, 10);
	REQUIRE(t);
	CHECK_STR(t->str, "main-thread");
	/* no THREAD entry: the process of that pid names the main thread */
	t = strace_names_thread(n, 20);
	REQUIRE(t);
	CHECK_STR(t->str, "alone");
	CHECK(strace_names_thread(n, 12) == NULL);

	/* entries added later are picked up incrementally, and the entries
	 * read before stay where they were */
	uint64_t gen = strace_names_generation(n);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x1100, 0x20, "late", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_THREAD, 12, 10, "late-thread", NULL) ==
		0);
	CHECK_INT(strace_names_update(n), ==, 2);
	CHECK(strace_names_generation(n) != gen);
	sym_is(n, 0x1108, "late+8");
	sym_is(n, 0x1000, "first+0");
	CHECK(strace_names_symbol(n, 0x1000) == first);
	CHECK(strace_names_thread(n, 12) != NULL);

	/* a process renamed by an exec: the later name */
	REQUIRE(add(ring, STRACE_EV_PROCESS, 20, 0, "after-exec", NULL) == 0);
	CHECK_INT(strace_names_update(n), ==, 1);
	CHECK_STR(strace_names_thread(n, 20)->str, "after-exec");

	/* a second, shorter entry at one start applies (a producer found
	 * an address inside it that has no symbol) */
	sym_is(n, 0x20f0, "(none)");
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x2000, 0x100, "second", NULL) ==
		0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x2000, 0x8, "second", NULL) ==
		0);
	CHECK_INT(strace_names_update(n), ==, 2);
	sym_is(n, 0x2000, "second+0");
	sym_is(n, 0x2007, "second+7");
	sym_is(n, 0x2008, "(none)");
	sym_is(n, 0x20f0, "(none)");
	CHECK_INT(strace_names_corrupt(n, NULL), ==, 0);

	strace_names_free(n);
	strace_ring_close(ring);
	unlink(path);
}

/* A symbol's aliases (kind 54, keyed by its start): in the order written,
 * across updates, cut at max but counted; none for another symbol, for
 * a DSO entry at the same start, or from an alias without a name. */
TEST(aliases)
{
	char path[128];
	struct strace_ring *ring = tmp_ring(path, sizeof(path));
	struct strace_names *n;
	const struct strace_name *al[4], *puts_, *d;

	REQUIRE(ring);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x2000, 0x40, "puts", NULL) == 0);
	REQUIRE(add(ring, STRACE_NAME_ALIAS, 0x2000, 0, "_IO_puts", NULL) ==
		0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x3000, 0x40, "free", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_DSO, 0x2000, 0x1000, "/lib/libc.so.6",
		    NULL) == 0);
	REQUIRE(strace_names_new(ring, &n) == 0);
	CHECK_INT(strace_names_update(n), ==, 4);
	puts_ = strace_names_symbol(n, 0x2000);
	REQUIRE(puts_ != NULL);
	CHECK_INT((int)strace_names_aliases(n, puts_, al, 4), ==, 1);
	CHECK_STR(al[0]->str, "_IO_puts");
	/* more come later: found after the next update, in order */
	REQUIRE(add(ring, STRACE_NAME_ALIAS, 0x2000, 0, "puts@@GLIBC_2.2.5",
		    NULL) == 0);
	REQUIRE(add(ring, STRACE_NAME_ALIAS, 0x2000, 0, "", NULL) == 0);
	CHECK_INT(strace_names_update(n), ==, 2);
	CHECK_INT((int)strace_names_aliases(n, puts_, al, 4), ==, 2);
	CHECK_STR(al[1]->str, "puts@@GLIBC_2.2.5");
	CHECK_INT((int)strace_names_aliases(n, puts_, al, 1), ==, 2);
	CHECK_INT((int)strace_names_aliases(n, strace_names_symbol(n, 0x3000),
					   al, 4),
		  ==, 0);
	d = strace_names_dso(n, 0x2000);
	REQUIRE(d != NULL);
	CHECK_INT((int)strace_names_aliases(n, d, al, 4), ==, 0);
	CHECK_INT((int)strace_names_aliases(n, NULL, al, 4), ==, 0);
	strace_names_free(n);
	strace_ring_close(ring);
	unlink(path);
}

/* Many entries: pointers stay valid across the chunks and updates. */
/* A symbol nested in another (a PLT stub's inside _init's range, as perf
 * names them): the inner one answers inside it, whatever was looked up
 * before (the last hit is no shortcut past a range that starts later). */
TEST(nested_ranges)
{
	char path[128];
	struct strace_ring *ring = tmp_ring(path, sizeof(path));
	struct strace_names *n;

	REQUIRE(ring);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x1000, 0x100, "_init", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x1070, 0x10, "lock@plt", NULL) ==
		0);
	REQUIRE(strace_names_new(ring, &n) == 0);
	CHECK_INT(strace_names_update(n), ==, 2);
	sym_is(n, 0x1010, "_init+16");
	sym_is(n, 0x1074, "lock@plt+4");
	sym_is(n, 0x1010, "_init+16");
	sym_is(n, 0x1070, "lock@plt+0");
	sym_is(n, 0x1074, "lock@plt+4");
	strace_names_free(n);
	strace_ring_close(ring);
	unlink(path);
}

TEST(many)
{
	char path[128], name[32];
	struct strace_ring *ring = tmp_ring(path, sizeof(path));
	struct strace_names *n;
	const struct strace_name *keep;

	REQUIRE(ring);
	REQUIRE(strace_names_new(ring, &n) == 0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x100000, 0x10, "f0", NULL) == 0);
	REQUIRE(strace_names_update(n) == 1);
	keep = strace_names_symbol(n, 0x100000);
	REQUIRE(keep);
	for (int i = 1; i < 3000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x100000 + 0x10 * (uint64_t)i,
			    0x10, name, NULL) == 0);
		if (i % 700 == 0)
			(void)strace_names_update(n);
	}
	(void)strace_names_update(n);
	CHECK_INT(strace_names_count(n), ==, 3000);
	CHECK(strace_names_symbol(n, 0x100000) == keep);
	CHECK_STR(keep->str, "f0");
	sym_is(n, 0x100000 + 0x10 * 2999 + 3, "f2999+3");
	sym_is(n, 0x100000 + 0x10 * 1234, "f1234+0");
	for (uint32_t id = 0; id < 3000; id++)
		if (strace_names_get(n, id)->id != id) {
			CHECK(0);
			break;
		}
	strace_names_free(n);
	strace_ring_close(ring);
	unlink(path);
}

/* A damaged entry: what came before it stays, reading stops there. */
TEST(corrupt_table)
{
	char path[128];
	struct strace_ring *ring = tmp_ring(path, sizeof(path));
	struct strace_names *n;
	struct strace_string s;
	uint64_t off2, bad, o = 0;

	REQUIRE(ring);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x1000, 0x10, "good", NULL) == 0);
	REQUIRE(add(ring, STRACE_EV_SYMBOL, 0x2000, 0x10, "damaged", &off2) ==
		0);
	/* break the second entry's magic (docs/events.md: an entry is a
	 * 24-byte header, the magic at its byte 6, then the string) */
	REQUIRE(strace_ring_string_next(ring, &o, &s) == 1);
	REQUIRE(strace_ring_string(ring, off2, &s) == 0);
	memset((char *)(uintptr_t)s.str - 24 + 6, 0xff, 2);
	REQUIRE(strace_names_new(ring, &n) == 0);
	CHECK_INT(strace_names_update(n), ==, -STRACE_E_CORRUPT);
	CHECK_INT(strace_names_update(n), ==, 0);
	CHECK_INT(strace_names_corrupt(n, &bad), ==, 1);
	CHECK_U64(bad, ==, off2);
	sym_is(n, 0x1004, "good+4");
	sym_is(n, 0x2004, "(none)");
	strace_names_free(n);
	strace_ring_close(ring);
	unlink(path);
}

RUN_TESTS("test_names")
