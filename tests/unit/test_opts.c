/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_opts.c - the rule for options structs (strace/opts.h):
 * an older, smaller struct gets defaults; a newer, bigger one is accepted
 * when its unknown bytes are 0 and refused otherwise; and the ring's
 * options follow it. Also the one way an array grows
 * (strace/internal/grow.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "strace/internal/grow.h"
#include "strace/opts.h"
#include "strace/ring.h"

/* no padding: v2's new fields start where v1 ends */
struct v1 {
	size_t size;
	long a;
};

struct v2 {
	size_t size;
	long a;
	long b;
	long c;
};

TEST(older_caller_gets_defaults)
{
	struct v1 old = {sizeof(old), 7};
	struct v2 o;

	memset(&o, 0x55, sizeof(o));
	CHECK_INT(strace_opts_load(&o, sizeof(o), &old), ==, 0);
	CHECK_INT(o.size, ==, sizeof(o));
	CHECK_INT(o.a, ==, 7);
	CHECK_INT(o.b, ==, 0);
	CHECK_INT(o.c, ==, 0);
}

TEST(newer_caller_zero_tail_accepted)
{
	struct v2 newer = {sizeof(newer), 3, 0, 0};
	struct v1 o;

	CHECK_INT(strace_opts_load(&o, sizeof(o), &newer), ==, 0);
	CHECK_INT(o.a, ==, 3);
	CHECK_INT(o.size, ==, sizeof(o));
}

TEST(newer_caller_asking_more_refused)
{
	struct v2 newer = {sizeof(newer), 3, 1, 0};
	struct v1 o;

	CHECK_INT(strace_opts_load(&o, sizeof(o), &newer), ==,
		  -STRACE_E_BADARG);
	newer.b = 0;
	newer.c = 1;
	CHECK_INT(strace_opts_load(&o, sizeof(o), &newer), ==,
		  -STRACE_E_BADARG);
}

TEST(bad_size_and_null)
{
	struct v2 o, bad = {0, 1, 2, 3};

	CHECK_INT(strace_opts_load(&o, sizeof(o), &bad), ==, -STRACE_E_BADARG);
	bad.size = sizeof(size_t) - 1;
	CHECK_INT(strace_opts_load(&o, sizeof(o), &bad), ==, -STRACE_E_BADARG);
	CHECK_INT(strace_opts_load(&o, sizeof(o), NULL), ==, 0);
	CHECK_INT(o.size, ==, sizeof(o));
	CHECK_INT(o.a, ==, 0);
}

/* strace_ring_create() follows the rule */
TEST(ring_opts)
{
	struct {
		struct strace_ring_opts o;
		uint64_t future; /* a field this library does not know */
	} big;
	struct strace_ring *r = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/dev/shm/test_opts_%d.srb", (int)getpid());
	unlink(path);
	memset(&big, 0, sizeof(big));
	big.o.size = sizeof(big);
	big.o.capacity = 1024;
	big.o.no_populate = 1;
	big.future = 1;
	CHECK_INT(strace_ring_create(path, &big.o, &r), ==, -STRACE_E_BADARG);
	big.future = 0;
	CHECK_INT(strace_ring_create(path, &big.o, &r), ==, 0);
	strace_ring_close(r);
	unlink(path);
}

RUN_TESTS("test_opts")

/* strace_grow(): from first, doubling, the contents kept; a size that
 * overflows is refused with the array and its capacity as they were. */
TEST(grow_doubles_from_first)
{
	size_t cap = 0;
	int *v = NULL;

	for (int i = 0; i < 100; i++) {
		if ((size_t)i == cap) {
			int *nv = strace_grow(v, &cap, sizeof(*v), 4);
			REQUIRE(nv);
			v = nv;
		}
		v[i] = i;
	}
	CHECK_U64(cap, ==, 128);
	for (int i = 0; i < 100; i++)
		CHECK_INT(v[i], ==, i);
	size_t huge = SIZE_MAX / 2 + 1;
	CHECK(strace_grow(v, &huge, 1, 4) == NULL);
	CHECK_U64(huge, ==, SIZE_MAX / 2 + 1);
	size_t big = SIZE_MAX / 4; /* twice that, of 4 bytes, overflows */
	CHECK(strace_grow(v, &big, sizeof(*v), 4) == NULL);
	CHECK_U64(big, ==, SIZE_MAX / 4);
	free(v);
}
