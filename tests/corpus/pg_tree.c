/* Built with -pg (mcount at every function entry) for uftrace: a tree
 * built and walked recursively, a callback through a function pointer, a
 * static inline function kept out of line, a call in tail position kept a
 * call; deterministic. */
#include <stdio.h>

struct node {
	int val;
	struct node *l, *r;
};

static struct node pool[15];
static int used;

__attribute__((noinline)) static struct node *build(int lo, int hi)
{
	struct node *n;
	int mid;

	if (lo > hi)
		return NULL;
	mid = (lo + hi) / 2;
	n = &pool[used++];
	n->val = mid;
	n->l = build(lo, mid - 1);
	n->r = build(mid + 1, hi);
	return n;
}

/* static inline yet out of line: GCC warns about the pair, on purpose */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
static inline __attribute__((noinline)) int weigh(int v)
{
	return v * 3 % 7;
}
#pragma GCC diagnostic pop

__attribute__((noinline)) static int square(int v)
{
	return v * v;
}

/* the callback f at every node, children first */
__attribute__((noinline)) static int walk(const struct node *n, int (*f)(int))
{
	if (!n)
		return 0;
	return walk(n->l, f) + walk(n->r, f) + f(n->val) + weigh(n->val);
}

__attribute__((noinline)) static int finish(int x)
{
	return x ^ 0x55;
}

/* finish() is in tail position; the asm keeps it a call (no jmp) */
__attribute__((noinline)) static int tail(int x)
{
	int r = finish(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r;
}

int main(void)
{
	struct node *root = build(1, 15);
	int a = walk(root, square), b = walk(root->l, weigh);

	printf("%d %d %d\n", a, b, tail(a + b));
	return 0;
}
