/* Built with -pg (mcount at every function entry) for uftrace: qsort with
 * a comparator, helpers and a recursion; deterministic. */
#include <stdio.h>
#include <stdlib.h>

struct rec {
	int key, weight;
};

static unsigned seed = 12345;

__attribute__((noinline)) static int next_rand(void)
{
	seed = seed * 1103515245 + 12345;
	return (int)(seed >> 16) % 1000;
}

__attribute__((noinline)) static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->weight > y->weight) - (x->weight < y->weight);
}

__attribute__((noinline)) static void fill(struct rec *r, int n)
{
	for (int i = 0; i < n; i++) {
		r[i].key = next_rand() % 10;
		r[i].weight = next_rand();
	}
}

/* divide and conquer: depth log2(n) */
__attribute__((noinline)) static long sum_range(const struct rec *r, int lo, int hi)
{
	long s = 0;

	if (hi - lo <= 3) {
		for (int i = lo; i < hi; i++)
			s += r[i].key * 1000 + r[i].weight;
		return s;
	}
	s = sum_range(r, lo, (lo + hi) / 2);
	return s + sum_range(r, (lo + hi) / 2, hi);
}

__attribute__((noinline)) static int check_sorted(const struct rec *r, int n)
{
	for (int i = 1; i < n; i++)
		if (cmp_rec(&r[i - 1], &r[i]) > 0)
			return 0;
	return 1;
}

int main(void)
{
	struct rec v[24];
	int ok;

	fill(v, 24);
	qsort(v, 24, sizeof(v[0]), cmp_rec);
	ok = check_sorted(v, 24);
	printf("%d %ld\n", ok, sum_range(v, 0, 24));
	return 0;
}
