/* SPDX-License-Identifier: MIT */
/*
 * cli/read_inline.c - ptrace-read --inline: the stack views' resolver of
 * inline chains (strace_stack_opts.inlines) from the DWARF of the object
 * an address is in (strace_dwarf_inlines() at the object's own address,
 * as the view library's source lines find it: srclines_object()),
 * memoized per address: the stack asks at nearly every event, the same
 * few addresses again and again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "decoder/decoder.h"
#include "read.h"

/* the longest chain kept */
#define CHAIN_MAX 32

struct memo {
	uint64_t addr; /* 0: an empty slot */
	uint32_t off, n; /* the chain: pool[off, off + n) */
};

struct read_inline {
	struct strace_names *names;
	struct srclines *src; /* the objects, their DWARF */
	struct memo *tab; /* open addressing, at most half full */
	size_t cap, count;
	struct strace_stack_inline *pool;
	size_t npool, poolcap;
};

static uint64_t slot(uint64_t addr, size_t cap)
{
	return (addr * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

static int grow_tab(struct read_inline *ri)
{
	size_t cap = ri->cap ? 2 * ri->cap : 4096;
	struct memo *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t k = 0; k < ri->cap; k++) {
		size_t i;
		if (!ri->tab[k].addr)
			continue;
		for (i = slot(ri->tab[k].addr, cap); t[i].addr;
		     i = (i + 1) & (cap - 1))
			;
		t[i] = ri->tab[k];
	}
	free(ri->tab);
	ri->tab = t;
	ri->cap = cap;
	return 0;
}

/* The chain at addr, from the DWARF (n entries at pool[off]). */
static int lookup(struct read_inline *ri, uint64_t addr, struct memo *m)
{
	struct strace_inline in[CHAIN_MAX];
	const char *path;
	uint64_t off;
	int n;

	m->addr = addr;
	m->off = (uint32_t)ri->npool;
	m->n = 0;
	if (!srclines_object(ri->src, ri->names, addr, &path, &off))
		return 0;
	n = strace_dwarf_inlines(srclines_dwarf(ri->src), path, off, in,
				 CHAIN_MAX);
	if (n <= 0)
		return n;
	/* doubled until the n frames fit */
	while (ri->npool + (size_t)n > ri->poolcap) {
		struct strace_stack_inline *p =
			strace_grow(ri->pool, &ri->poolcap, sizeof(*p), 1024);
		if (!p)
			return -ENOMEM;
		ri->pool = p;
	}
	for (int k = 0; k < n; k++) {
		struct strace_stack_inline *x = &ri->pool[ri->npool + k];
		/* (the object's addresses to the thread's) */
		x->name = in[k].name;
		x->lo = in[k].lo - off + addr;
		x->hi = in[k].hi - off + addr;
		x->call_file = in[k].call.file;
		x->call_line = in[k].call.line;
	}
	ri->npool += (size_t)n;
	m->n = (uint32_t)n;
	return n;
}

int read_inline_resolve(void *arg, uint32_t tid, uint64_t addr,
			const struct strace_stack_inline **out)
{
	struct read_inline *ri = arg;
	size_t i;

	(void)tid; /* (the names map an address alike in every thread) */
	if (!addr)
		return 0;
	if (2 * (ri->count + 1) > ri->cap && grow_tab(ri) < 0)
		return -ENOMEM;
	for (i = slot(addr, ri->cap); ri->tab[i].addr;
	     i = (i + 1) & (ri->cap - 1))
		if (ri->tab[i].addr == addr)
			goto found;
	if (lookup(ri, addr, &ri->tab[i]) < 0) {
		ri->tab[i].n = 0; /* no memory: no chain, asked again */
		ri->tab[i].addr = 0;
		return 0;
	}
	ri->count++;
found:
	if (!ri->tab[i].n)
		return 0;
	*out = &ri->pool[ri->tab[i].off];
	return (int)ri->tab[i].n;
}

int read_inline_new(struct strace_names *names, const char *cache_dir,
		    struct read_inline **out)
{
	struct read_inline *ri = calloc(1, sizeof(*ri));

	if (!ri || !(ri->src = srclines_new(cache_dir))) {
		free(ri);
		return -ENOMEM;
	}
	ri->names = names;
	*out = ri;
	return 0;
}

void read_inline_free(struct read_inline *ri)
{
	if (!ri)
		return;
	srclines_free(ri->src);
	free(ri->tab);
	free(ri->pool);
	free(ri);
}
