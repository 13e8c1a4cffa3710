/* SPDX-License-Identifier: MIT */
/*
 * decoder/perfsym.c - address -> symbol exactly as perf 6.1 answers it.
 *
 * perf keeps a DSO's symbols in a red-black tree keyed by start address
 * and looks an address up by walking down from the root, returning the
 * first node whose [start, end) holds it. When symbols overlap - perf 6.1
 * extends a size-0 symbol such as _init to the next symbol before it adds
 * the name@plt entries, so _init then covers the whole .plt - the answer
 * depends on the tree's shape: some PLT entries resolve to their name, some
 * to _init, and .plt.got to nothing. To give the same names, this file
 * replays perf's insertions (symtab order), symbols__fixup_end(),
 * symbols__fixup_duplicate() (erasures), the PLT insertions, with the same
 * red-black algorithm (Linux lib/rbtree.c: CLRS insertion and deletion with
 * the in-order successor), then answers every address range once into a
 * sorted table, so lookups stay a binary search.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/internal.h"
#include "decoder/perfsym.h"

struct node {
	int parent, left, right; /* indices, -1 for none */
	int red;
	int alive;
};

struct tree {
	struct node *n;
	const struct perf_sym *s;
	int root;
};

#define NIL (-1)

static void rotate_left(struct tree *t, int x)
{
	int y = t->n[x].right;

	t->n[x].right = t->n[y].left;
	if (t->n[y].left != NIL)
		t->n[t->n[y].left].parent = x;
	t->n[y].parent = t->n[x].parent;
	if (t->n[x].parent == NIL)
		t->root = y;
	else if (x == t->n[t->n[x].parent].left)
		t->n[t->n[x].parent].left = y;
	else
		t->n[t->n[x].parent].right = y;
	t->n[y].left = x;
	t->n[x].parent = y;
}

static void rotate_right(struct tree *t, int x)
{
	int y = t->n[x].left;

	t->n[x].left = t->n[y].right;
	if (t->n[y].right != NIL)
		t->n[t->n[y].right].parent = x;
	t->n[y].parent = t->n[x].parent;
	if (t->n[x].parent == NIL)
		t->root = y;
	else if (x == t->n[t->n[x].parent].right)
		t->n[t->n[x].parent].right = y;
	else
		t->n[t->n[x].parent].left = y;
	t->n[y].right = x;
	t->n[x].parent = y;
}

static int is_red(struct tree *t, int x)
{
	return x != NIL && t->n[x].red;
}

/* perf's __symbols__insert(): equal starts go right. */
static void insert(struct tree *t, int z)
{
	int y = NIL, x = t->root;
	uint64_t k = t->s[z].start;

	while (x != NIL) {
		y = x;
		x = k < t->s[x].start ? t->n[x].left : t->n[x].right;
	}
	t->n[z] = (struct node){y, NIL, NIL, 1, 1};
	if (y == NIL)
		t->root = z;
	else if (k < t->s[y].start)
		t->n[y].left = z;
	else
		t->n[y].right = z;
	while (is_red(t, t->n[z].parent)) {
		int p = t->n[z].parent, g = t->n[p].parent;
		if (p == t->n[g].left) {
			int u = t->n[g].right;
			if (is_red(t, u)) {
				t->n[p].red = 0;
				t->n[u].red = 0;
				t->n[g].red = 1;
				z = g;
				continue;
			}
			if (z == t->n[p].right) {
				z = p;
				rotate_left(t, z);
				p = t->n[z].parent;
				g = t->n[p].parent;
			}
			t->n[p].red = 0;
			t->n[g].red = 1;
			rotate_right(t, g);
		} else {
			int u = t->n[g].left;
			if (is_red(t, u)) {
				t->n[p].red = 0;
				t->n[u].red = 0;
				t->n[g].red = 1;
				z = g;
				continue;
			}
			if (z == t->n[p].left) {
				z = p;
				rotate_right(t, z);
				p = t->n[z].parent;
				g = t->n[p].parent;
			}
			t->n[p].red = 0;
			t->n[g].red = 1;
			rotate_left(t, g);
		}
	}
	t->n[t->root].red = 0;
}

static int minimum(struct tree *t, int x)
{
	while (t->n[x].left != NIL)
		x = t->n[x].left;
	return x;
}

static int next(struct tree *t, int x)
{
	int p;

	if (t->n[x].right != NIL)
		return minimum(t, t->n[x].right);
	p = t->n[x].parent;
	while (p != NIL && x == t->n[p].right) {
		x = p;
		p = t->n[p].parent;
	}
	return p;
}

static void transplant(struct tree *t, int u, int v)
{
	int p = t->n[u].parent;

	if (p == NIL)
		t->root = v;
	else if (u == t->n[p].left)
		t->n[p].left = v;
	else
		t->n[p].right = v;
	if (v != NIL)
		t->n[v].parent = p;
}

/* CLRS RB-DELETE with a NIL-free fix-up that tracks x's parent, which is
 * what Linux's rb_erase() does. */
static void erase(struct tree *t, int z)
{
	int y = z, x, xp, y_red = t->n[y].red;

	if (t->n[z].left == NIL) {
		x = t->n[z].right;
		xp = t->n[z].parent;
		transplant(t, z, x);
	} else if (t->n[z].right == NIL) {
		x = t->n[z].left;
		xp = t->n[z].parent;
		transplant(t, z, x);
	} else {
		y = minimum(t, t->n[z].right);
		y_red = t->n[y].red;
		x = t->n[y].right;
		if (t->n[y].parent == z) {
			xp = y;
		} else {
			xp = t->n[y].parent;
			transplant(t, y, x);
			t->n[y].right = t->n[z].right;
			t->n[t->n[y].right].parent = y;
		}
		transplant(t, z, y);
		t->n[y].left = t->n[z].left;
		t->n[t->n[y].left].parent = y;
		t->n[y].red = t->n[z].red;
	}
	t->n[z].alive = 0;
	if (y_red)
		return;
	while (x != t->root && !is_red(t, x)) {
		if (x == t->n[xp].left) {
			int w = t->n[xp].right;
			if (is_red(t, w)) {
				t->n[w].red = 0;
				t->n[xp].red = 1;
				rotate_left(t, xp);
				w = t->n[xp].right;
			}
			if (!is_red(t, t->n[w].left) && !is_red(t, t->n[w].right)) {
				t->n[w].red = 1;
				x = xp;
				xp = t->n[x].parent;
			} else {
				if (!is_red(t, t->n[w].right)) {
					t->n[t->n[w].left].red = 0;
					t->n[w].red = 1;
					rotate_right(t, w);
					w = t->n[xp].right;
				}
				t->n[w].red = t->n[xp].red;
				t->n[xp].red = 0;
				if (t->n[w].right != NIL)
					t->n[t->n[w].right].red = 0;
				rotate_left(t, xp);
				x = t->root;
				break;
			}
		} else {
			int w = t->n[xp].left;
			if (is_red(t, w)) {
				t->n[w].red = 0;
				t->n[xp].red = 1;
				rotate_right(t, xp);
				w = t->n[xp].left;
			}
			if (!is_red(t, t->n[w].right) && !is_red(t, t->n[w].left)) {
				t->n[w].red = 1;
				x = xp;
				xp = t->n[x].parent;
			} else {
				if (!is_red(t, t->n[w].left)) {
					t->n[t->n[w].right].red = 0;
					t->n[w].red = 1;
					rotate_left(t, w);
					w = t->n[xp].left;
				}
				t->n[w].red = t->n[xp].red;
				t->n[xp].red = 0;
				if (t->n[w].left != NIL)
					t->n[t->n[w].left].red = 0;
				rotate_right(t, xp);
				x = t->root;
				break;
			}
		}
	}
	if (x != NIL)
		t->n[x].red = 0;
}

int strace_dec_prefix_underscores(const char *s)
{
	int n = 0;
	while (*s++ == '_')
		n++;
	return n;
}

int strace_dec_perf_choose_best(uint64_t la, int binda, const char *namea,
				uint64_t lb, int bindb, const char *nameb)
{
	if (lb == 0 && la > 0)
		return 0;
	if (la == 0 && lb > 0)
		return 1;
	if ((binda == STB_WEAK) != (bindb == STB_WEAK))
		return binda == STB_WEAK;
	if ((binda == STB_GLOBAL) != (bindb == STB_GLOBAL))
		return bindb == STB_GLOBAL;
	int ua = strace_dec_prefix_underscores(namea);
	int ub = strace_dec_prefix_underscores(nameb);

	if (ua != ub)
		return ub < ua;
	return strlen(nameb) > strlen(namea);
}

/* perf's choose_best_symbol(): 0 keeps a, 1 keeps b. */
static int choose_b(const struct perf_sym *a, const struct perf_sym *b)
{
	return strace_dec_perf_choose_best(a->end - a->start, a->bind,
					   a->name, b->end - b->start, b->bind,
					   b->name);
}

/* perf's symbols__find(). */
static int find(struct tree *t, uint64_t ip)
{
	int x = t->root;

	while (x != NIL) {
		const struct perf_sym *s = &t->s[x];
		if (ip < s->start)
			x = t->n[x].left;
		else if (ip > s->end || (ip == s->end && ip != s->start))
			x = t->n[x].right;
		else
			return x;
	}
	return NIL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* symbols__fixup_end() then symbols__fixup_duplicate() over the tree. */
static void fixup_end(struct tree *t)
{
	struct perf_sym *s = (struct perf_sym *)(uintptr_t)t->s;
	int prev = minimum(t, t->root), cur;

	while ((cur = next(t, prev)) != NIL) {
		if (s[prev].end == s[prev].start)
			s[prev].end = s[cur].start;
		prev = cur;
	}
	if (s[prev].end == s[prev].start)
		s[prev].end = ((s[prev].start + 4095) & ~4095ull) + 4096;
}

static void fixups(struct tree *t)
{
	struct perf_sym *s = (struct perf_sym *)(uintptr_t)t->s;
	int nd, curr;

	fixup_end(t);
	nd = minimum(t, t->root);
	while (nd != NIL) {
		curr = nd;
again:
		nd = next(t, curr);
		if (nd == NIL)
			break;
		if (s[curr].start != s[nd].start)
			continue;
		if (!choose_b(&s[curr], &s[nd])) {
			erase(t, nd);
			goto again;
		} else {
			nd = next(t, curr);
			erase(t, curr);
		}
	}
}

int strace_dec_perf61_index(struct perf_sym *s, size_t n_symtab,
			    size_t n_elf, size_t n_all, struct perf_iv **out,
			    size_t *nout)
{
	struct tree t = {0};
	uint64_t *pts = NULL;
	struct perf_iv *iv = NULL;
	size_t np = 0, niv = 0;
	int x, first;

	(void)0;

	*out = NULL;
	*nout = 0;
	if (!n_all)
		return 0;
	t.n = calloc(n_all, sizeof(*t.n));
	t.s = s;
	t.root = NIL;
	pts = malloc(2 * n_all * sizeof(*pts));
	iv = malloc(2 * n_all * sizeof(*iv));
	if (!t.n || !pts || !iv) {
		free(t.n);
		free(pts);
		free(iv);
		return -ENOMEM;
	}
	/* dso__load_sym(): the .symtab pass, then the .dynsym pass, each
	 * ending with the fix-ups */
	for (size_t i = 0; i < n_symtab; i++)
		insert(&t, (int)i);
	if (n_symtab)
		fixups(&t);
	for (size_t i = n_symtab; i < n_elf; i++)
		insert(&t, (int)i);
	if (n_elf > n_symtab)
		fixups(&t);
	for (size_t i = n_elf; i < n_all; i++)
		insert(&t, (int)i);
	/* answer once per elementary range */
	for (size_t i = 0; i < n_all; i++) {
		if (!t.n[i].alive)
			continue;
		pts[np++] = s[i].start;
		pts[np++] = s[i].end;
	}
	qsort(pts, np, sizeof(*pts), cmp_u64);
	first = 1;
	for (size_t i = 0; i < np; i++) {
		if (!first && pts[i] == pts[i - 1])
			continue;
		first = 0;
		x = find(&t, pts[i]);
		iv[niv].at = pts[i];
		iv[niv].point = x;
		/* the open range up to the next point (if any) */
		iv[niv].after = find(&t, pts[i] + 1);
		niv++;
	}
	/* each symbol's first run of answers from its start (an address
	 * perf leaves unnamed inside an extended _init ends it); a symbol
	 * not answered at its own start keeps its end */
	for (size_t i = 0; i < n_all; i++)
		s[i].vis_end = s[i].end;
	for (size_t j = 0; j < niv; j++) {
		int k = iv[j].point;
		size_t m = j;

		if (k < 0 || s[k].start != iv[j].at)
			continue;
		while (iv[m].after == k && m + 1 < niv && iv[m + 1].point == k)
			m++;
		s[k].vis_end = iv[m].after == k && m + 1 < niv ? iv[m + 1].at
							       : iv[m].at + 1;
	}
	free(t.n);
	free(pts);
	*out = iv;
	*nout = niv;
	return 0;
}
