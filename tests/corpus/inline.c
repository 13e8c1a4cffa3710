/* Inlined code: built with -O2 -g so the static functions below are
 * inlined into each other (three deep: main <- run <- mix <- clamp) and
 * call real (noinline) functions from inside, with a loop and branches a
 * line-coverage run counts (issue 36: srcline, --inline, lcov). Reads no
 * input; deterministic and brief. */
#include <stdio.h>

static volatile unsigned sink;

__attribute__((noinline)) unsigned leaf(unsigned x)
{
	sink += x;
	return x * 2654435761u >> 7;
}

__attribute__((noinline)) unsigned odd_path(unsigned x)
{
	sink ^= x;
	return x + 3;
}

static inline unsigned clamp(unsigned v, unsigned hi)
{
	if (v > hi)
		return hi - (odd_path(v) & 15);
	return v;
}

static inline unsigned mix(unsigned a, unsigned b)
{
	unsigned r = leaf(a) ^ b;
	if (r & 1)
		r = odd_path(r);
	return clamp(r % 1000, 700);
}

static inline unsigned run(unsigned n)
{
	unsigned acc = 0;
	for (unsigned i = 0; i < n; i++) {
		acc += mix(i, acc);
		if (acc > 5000)
			acc = leaf(acc) % 1000;
	}
	return acc;
}

int main(void)
{
	unsigned total = run(40);
	if (total == 12345)
		puts("never");
	printf("inline %u %u\n", total, sink);
	return 0;
}
