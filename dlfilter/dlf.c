/* SPDX-License-Identifier: MIT */
/* dlfilter/dlf.c - perf branch samples -> strace events (see dlf.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dlf_int.h"

/* --- tables ----------------------------------------------------------------- */

static uint32_t sym_index(struct strace_dlf *d, uint64_t start, uint64_t size,
			  const char *name)
{
	size_t mask, j;

	if (!d->nsyms)
		d->nsyms = 1;
	if ((d->nsyms + 1) * 2 > d->symhash_cap) {
		size_t nc = d->symhash_cap ? d->symhash_cap * 2 : 1024;
		uint32_t *nh = calloc(nc, sizeof(*nh));
		if (!nh)
			return 0;
		for (size_t i = 1; i < d->nsyms; i++) {
			j = hash64(d->syms[i].start) & (nc - 1);
			while (nh[j])
				j = (j + 1) & (nc - 1);
			nh[j] = (uint32_t)i;
		}
		free(d->symhash);
		d->symhash = nh;
		d->symhash_cap = nc;
	}
	mask = d->symhash_cap - 1;
	j = hash64(start) & mask;
	while (d->symhash[j]) {
		if (d->syms[d->symhash[j]].start == start)
			return d->symhash[j];
		j = (j + 1) & mask;
	}
	if (grow((void **)&d->syms, &d->capsyms, d->nsyms, sizeof(*d->syms)))
		return 0;
	struct sym *s = &d->syms[d->nsyms];
	s->start = start;
	s->size = size;
	s->name = strdup(name);
	s->defined = 0;
	if (!s->name)
		return 0;
	d->symhash[j] = (uint32_t)d->nsyms;
	d->st.symbols++;
	return (uint32_t)d->nsyms++;
}

/* --- events ----------------------------------------------------------------- */

static inline int put(struct strace_dlf *d, unsigned type, unsigned flags,
		      uint32_t tid, uint64_t time, uint64_t a, uint64_t b)
{
	struct strace_event *e = strace_writer_slot(d->w);
	if (unlikely(!e))
		return d->err = strace_writer_error(d->w);
	e->type = (uint16_t)type;
	e->flags = (uint16_t)flags;
	e->tid = tid;
	e->time = time;
	e->a = a;
	e->b = b;
	d->st.events++;
	return 0;
}

/* An event of thread t: through its spreader unless exact-times. */
static inline int put_thr(struct strace_dlf *d, struct thr *t, unsigned type,
			  unsigned flags, uint64_t time, uint64_t a, uint64_t b)
{
	struct strace_event e = {(uint16_t)type, (uint16_t)flags, t->tid,
				 time, a, b};
	int rc;

	if (d->o.exact_times)
		return put(d, type, flags, t->tid, time, a, b);
	rc = strace_dec_spreader_put(t->sp, &e, t->insns);
	if (unlikely(rc))
		return d->err = rc;
	d->st.events++;
	return 0;
}

/* A sample of thread t that makes no event (a jump inside one function,
 * a type left out): its time is still a time point of the spreader. */
static inline int quiet(struct strace_dlf *d, struct thr *t, uint64_t time)
{
	int rc;

	if (d->o.exact_times)
		return 0;
	rc = strace_dec_spreader_mark(t->sp, time, t->insns);
	return unlikely(rc) ? (d->err = rc) : 0;
}

static inline int want(const struct strace_dlf *d, unsigned type)
{
	return !d->o.has_types || strace_typeset_has(&d->o.types, type);
}

/* A definition: its name, then its event unless types= leaves it out. */
static int define(struct strace_dlf *d, uint16_t type, uint32_t tid,
		  uint64_t time, uint64_t a, uint64_t key, uint64_t aux,
		  const char *name)
{
	struct strace_definition def = {type, tid, time, a, key, aux, name};
	int rc = strace_writer_define(d->w, &def,
				      d->o.has_types ? &d->o.types : NULL);

	if (rc < 0)
		return d->err = rc;
	if (want(d, type))
		d->st.events++;
	return 0;
}

static int define_dso(struct strace_dlf *d, uint32_t pid, uint32_t dso,
		      uint64_t bias)
{
	size_t mask, j;

	if ((d->pdsos_n + 1) * 2 > d->pdsos_cap) {
		size_t nc = d->pdsos_cap ? d->pdsos_cap * 2 : 256;
		struct pdso *nv = calloc(nc, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		for (size_t i = 0; i < d->pdsos_cap; i++) {
			if (!d->pdsos[i].dso)
				continue;
			j = hash64((uint64_t)d->pdsos[i].pid << 32 |
				   d->pdsos[i].dso) &
			    (nc - 1);
			while (nv[j].dso)
				j = (j + 1) & (nc - 1);
			nv[j] = d->pdsos[i];
		}
		free(d->pdsos);
		d->pdsos = nv;
		d->pdsos_cap = nc;
	}
	mask = d->pdsos_cap - 1;
	j = hash64((uint64_t)pid << 32 | dso) & mask;
	while (d->pdsos[j].dso) {
		if (d->pdsos[j].pid == pid && d->pdsos[j].dso == dso)
			return 0;
		j = (j + 1) & mask;
	}
	d->pdsos[j].pid = pid;
	d->pdsos[j].dso = dso;
	d->pdsos_n++;

	const struct dso *x = &d->dsos[dso];
	uint64_t start = bias + x->exec_off;
	int rc = define(d, STRACE_EV_DSO, pid, 0, start, start, x->exec_len,
			x->name);

	/* readers count "[dso]+0xOFF" in the object's own (ELF virtual)
	 * addresses, not in perf's (file offsets) */
	if (rc == 0 && x->exec_len &&
	    (rc = strace_writer_name_dso_base(d->w, NULL, start,
					      x->exec_vaddr)) < 0)
		return d->err = rc;
	return rc;
}

/* --- the DSOs' own files ---------------------------------------------------- */

static inline uint64_t dso_base(uint32_t i)
{
	return (uint64_t)i << 40;
}

/* DSO i's file in d->img: 0, or -1 when it cannot be there (not a regular
 * file, not ELF, or gone since perf mapped it): perf's names then. */
static int dso_mapped(struct strace_dlf *d, uint32_t i)
{
	struct dso *x = &d->dsos[i];
	struct stat st;

	if (x->in_img)
		return x->in_img > 0 ? 0 : -1;
	x->in_img = -1;
	/* exec_len: an ELF file with an executable segment */
	if (!x->exec_len || stat(x->name, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size >= dso_base(1))
		return -1;
	if (!d->img) {
		struct strace_image_opts io;
		memset(&io, 0, sizeof(io));
		io.size = sizeof(io);
		io.plt_style = d->o.perf_names ? STRACE_PLT_PERF61
					       : STRACE_PLT_PLAIN;
		if (strace_image_new(&io, &d->img) < 0)
			return -1;
	}
	if (strace_image_add_file(d->img, dso_base(i), (uint64_t)st.st_size, 0,
				  x->name) < 0)
		return -1;
	x->in_img = 1;
	return 0;
}

/* The symbol of names=plain at addr of e's mapping (bias set): its index,
 * 0 for none there; -1 where the DSO's file cannot say. */
static long own_symbol(struct strace_dlf *d, const struct aent *e,
		       uint64_t addr)
{
	struct strace_symbol sym;
	uint64_t base = dso_base(e->dso);
	uint32_t i;

	if (dso_mapped(d, e->dso) < 0)
		return -1;
	if (strace_image_symbol(d->img, base + (addr - e->bias), &sym) < 0)
		return 0;
	i = sym_index(d, sym.start - base + e->bias, sym.size, sym.name);
	if (i && !d->syms[i].own)
		d->syms[i].own = sym.start;
	return i;
}

/* The name of the system call the syscall at ip (of e's mapping) makes,
 * before its first event, when the code says (strace_syscall_nr()), as
 * ptrace-capture names it. */
static int name_syscall(struct strace_dlf *d, const struct aent *e,
			uint64_t ip)
{
	uint64_t *memo = &d->site_memo[(ip ^ ip >> 6) & 63];
	const char *name;
	long nr;
	int rc;

	if (*memo == ip || !e || !e->dso || !want(d, STRACE_EV_SYSCALL))
		return 0;
	*memo = ip;
	if (dso_mapped(d, e->dso) < 0)
		return 0;
	nr = strace_syscall_nr(d->img, dso_base(e->dso) + (ip - e->bias));
	if (nr < 0 || !(name = strace_syscall_name(nr)))
		return 0;
	if (!d->sites && (rc = strace_symset_new(&d->sites)) < 0)
		return d->err = rc;
	rc = strace_writer_name_syscall(d->w, d->sites, ip, (uint64_t)nr, name);
	return rc < 0 ? (d->err = rc) : 0;
}

/* The first of the n sorted keys v[] above x (n if none). */
static size_t upper_bound(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (v[m] <= x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* The first defined symbol (in defs) starting above x (defs_n if none). */
static size_t defs_above(const struct strace_dlf *d, uint64_t x)
{
	size_t lo = 0, hi = d->defs_n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (d->syms[d->defs[m]].start <= x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/*
 * A SYMBOL event for s, of size `size`. perf's symbol lookup can leave an
 * address unnamed although the start and size perf gives for another
 * symbol cover it (perf 6.1 extends a size-0 _init over .plt and
 * .plt.got, then its tree search misses _init there). A reader names an
 * address by the definition that starts last at or before it, so s is
 * defined only up to the first such address after its start; if one is
 * found after s was defined, s is defined again, shorter (a reader takes
 * the shortest of several definitions at one start).
 */
static int define_sym(struct strace_dlf *d, struct sym *s, uint64_t size)
{
	size_t i = upper_bound(d->holes, d->holes_n, s->start);
	int first = !s->defined, rc;

	if (i < d->holes_n && d->holes[i] - s->start < size)
		size = d->holes[i] - s->start;
	if (!s->defined) {
		if (grow((void **)&d->defs, &d->defs_cap, d->defs_n,
			 sizeof(*d->defs)))
			return d->err = -ENOMEM;
		i = defs_above(d, s->start);
		memmove(d->defs + i + 1, d->defs + i,
			(d->defs_n - i) * sizeof(*d->defs));
		d->defs[i] = (uint32_t)(s - d->syms);
		d->defs_n++;
	}
	s->defined = 1;
	s->shown = size;
	rc = define(d, STRACE_EV_SYMBOL, d->cur_tid, d->cur_time, s->start,
		    s->start, size, s->name);
	if (rc == 0 && first && s->own) {
		/* its other names, as ptrace-capture writes them */
		const char *al[STRACE_ALIASES_MAX];
		size_t n = strace_image_aliases(d->img, s->own, al,
						STRACE_ALIASES_MAX);
		for (size_t k = 0; k < n && k < STRACE_ALIASES_MAX; k++)
			if ((rc = strace_writer_name_alias(d->w, s->start,
							   al[k])) < 0)
				return d->err = rc;
	}
	return rc;
}

/* perf names no symbol at addr: a hole in whatever defined symbol starts
 * last at or before it (of several at one start, the first perf gave). */
static int hole(struct strace_dlf *d, uint64_t addr)
{
	size_t i = upper_bound(d->holes, d->holes_n, addr);
	struct sym *last;

	if (i && d->holes[i - 1] == addr)
		return 0;
	if (grow((void **)&d->holes, &d->holes_cap, d->holes_n,
		 sizeof(*d->holes)))
		return -ENOMEM;
	memmove(d->holes + i + 1, d->holes + i,
		(d->holes_n - i) * sizeof(*d->holes));
	d->holes[i] = addr;
	d->holes_n++;
	i = defs_above(d, addr);
	if (!i)
		return 0;
	uint32_t best = d->defs[--i];
	while (i && d->syms[d->defs[i - 1]].start == d->syms[best].start)
		if (d->defs[--i] < best)
			best = d->defs[i];
	last = &d->syms[best];
	if (last->start < addr && addr - last->start < last->shown)
		return define_sym(d, last, addr - last->start);
	return 0;
}

/* Make sure the symbol of e is defined before an event refers to it. */
static inline int need_sym(struct strace_dlf *d, uint32_t sym)
{
	struct sym *s;

	if (likely(!sym))
		return 0;
	s = &d->syms[sym];
	if (likely(s->defined))
		return 0;
	return define_sym(d, s, s->size);
}

/* The resolved address addr of pid, from the cache or from perf. */
static struct aent *lookup_slot(struct strace_dlf *d, uint32_t pid,
				uint64_t addr, int which,
				const struct strace_dlf_host *h, void *ctx)
{
	size_t mask = d->addrs_cap - 1;
	size_t j = hash64(addr ^ ((uint64_t)pid << 47)) & mask;
	struct aent *e;

	for (;;) {
		e = &d->addrs[j];
		if (likely(e->addr == addr && e->pid == pid && e->used))
			return e;
		if (!e->used)
			break;
		j = (j + 1) & mask;
	}
	/* a miss: ask perf */
	if ((d->addrs_n + 1) * 2 > d->addrs_cap) {
		size_t nc = d->addrs_cap * 2;
		struct aent *nv = calloc(nc, sizeof(*nv));
		if (!nv)
			return NULL;
		for (size_t i = 0; i < d->addrs_cap; i++) {
			const struct aent *o = &d->addrs[i];
			if (!o->used)
				continue;
			size_t k = hash64(o->addr ^ ((uint64_t)o->pid << 47)) &
				   (nc - 1);
			while (nv[k].used)
				k = (k + 1) & (nc - 1);
			nv[k] = *o;
		}
		free(d->addrs);
		d->addrs = nv;
		d->addrs_cap = nc;
		mask = nc - 1;
		j = hash64(addr ^ ((uint64_t)pid << 47)) & mask;
		while (d->addrs[j].used)
			j = (j + 1) & mask;
		e = &d->addrs[j];
	}
	struct strace_dlf_loc loc;
	long own;
	memset(&loc, 0, sizeof(loc));
	d->st.addr_misses++;
	if (h->resolve(ctx, which, addr, &loc) < 0)
		memset(&loc, 0, sizeof(loc));
	e->addr = addr;
	e->pid = pid;
	e->used = 1;
	e->sym = 0;
	e->dso = 0;
	e->bias = 0;
	d->addrs_n++;
	if (loc.dso) {
		e->dso = dlf_dso_index(d, loc.dso, &loc);
		e->bias = loc.bias;
		if (e->dso && define_dso(d, pid, e->dso, loc.bias) < 0)
			return NULL;
	}
	if (!d->o.perf_names && e->dso && (own = own_symbol(d, e, addr)) >= 0)
		e->sym = (uint32_t)own;
	else if (loc.sym && e->dso)
		e->sym = sym_index(d, loc.sym_start, loc.sym_size, loc.sym);
	if (e->dso && !e->sym && hole(d, addr) < 0)
		return NULL;
	return e;
}

/* lookup_slot() into *out: a copy, since the table may move. */
static inline int lookup(struct strace_dlf *d, uint32_t pid, uint64_t addr,
			 int which, const struct strace_dlf_host *h, void *ctx,
			 struct aent *out)
{
	const struct aent *e = lookup_slot(d, pid, addr, which, h, ctx);
	if (unlikely(!e))
		return d->err ? d->err : -ENOMEM;
	*out = *e;
	return 0;
}

/* A flow event with two addresses (either may be 0, no address). */
static int flow(struct strace_dlf *d, struct thr *t, unsigned type,
		unsigned flags, const struct strace_dlf_sample *s,
		const struct aent *ea, const struct aent *eb, uint64_t a,
		uint64_t b)
{
	int rc;

	if (!want(d, type))
		return quiet(d, t, s->time);
	if (a && ea && (rc = need_sym(d, ea->sym)) < 0)
		return rc;
	if (b && eb && (rc = need_sym(d, eb->sym)) < 0)
		return rc;
	rc = put_thr(d, t, type, flags, s->time, a, b);
	return rc < 0 ? rc : 1;
}

/* --- threads -------------------------------------------------------------- */

/* A PROCESS (tid == pid) or THREAD definition with the thread's name. */
static int define_thread(struct strace_dlf *d, struct thr *t, const char *comm)
{
	int proc = t->tid == t->pid;
	uint16_t type = proc ? STRACE_EV_PROCESS : STRACE_EV_THREAD;
	int rc;

	if (!comm)
		comm = "";
	rc = define(d, type, t->tid, 0, t->pid, t->tid, t->pid, comm);
	if (rc < 0)
		return rc;
	free(t->comm);
	t->comm = strdup(comm);
	return t->comm ? 0 : -ENOMEM;
}

static struct thr *thread(struct strace_dlf *d,
			  const struct strace_dlf_sample *s,
			  const struct strace_dlf_host *h, void *ctx)
{
	struct thr *t = d->last_thr;
	size_t mask, j;

	if (likely(t && t->tid == s->tid))
		return t;
	if ((d->thrs_n + 1) * 2 > d->thrs_cap) {
		size_t nc = d->thrs_cap ? d->thrs_cap * 2 : 64;
		struct thr *nv = calloc(nc, sizeof(*nv));
		if (!nv)
			return NULL;
		for (size_t i = 0; i < d->thrs_cap; i++) {
			if (!d->thrs[i].used)
				continue;
			size_t k = hash64(d->thrs[i].tid) & (nc - 1);
			while (nv[k].used)
				k = (k + 1) & (nc - 1);
			nv[k] = d->thrs[i];
		}
		free(d->thrs);
		d->thrs = nv;
		d->thrs_cap = nc;
		d->last_thr = NULL;
	}
	mask = d->thrs_cap - 1;
	j = hash64(s->tid) & mask;
	while (d->thrs[j].used) {
		if (d->thrs[j].tid == s->tid)
			return d->last_thr = &d->thrs[j];
		j = (j + 1) & mask;
	}
	/* a new thread: its definition first */
	t = &d->thrs[j];
	memset(t, 0, sizeof(*t));
	t->used = 1;
	t->tid = s->tid;
	t->pid = s->pid;
	/* perf's samples say no MTC period: the events before a stop go up
	 * to the next time at most (perf merges the threads by itself) */
	if (strace_dec_spreader_new(d->w, UINT64_MAX, &t->sp) < 0) {
		t->used = 0;
		return NULL;
	}
	d->thrs_n++;
	d->st.threads++;
	d->last_thr = t;

	if (define_thread(d, t, h->comm ? h->comm(ctx) : NULL) < 0)
		return NULL;
	return t;
}

/*
 * The thread's name changed at a trace begin: an exec (or a rename).
 * After an exec the process has a new address space, so what was learned
 * about its addresses is forgotten: the address cache and the DSO
 * definitions of the process, and the memo. Then the new name is defined.
 */
static int renamed(struct strace_dlf *d, struct thr *t, const char *comm)
{
	struct aent *old = d->addrs;
	size_t cap = d->addrs_cap;
	struct aent *nv = calloc(cap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	d->addrs = nv;
	d->addrs_n = 0;
	for (size_t i = 0; i < cap; i++) {
		if (!old[i].used || old[i].pid == t->pid)
			continue;
		size_t k = hash64(old[i].addr ^ ((uint64_t)old[i].pid << 47)) &
			   (cap - 1);
		while (nv[k].used)
			k = (k + 1) & (cap - 1);
		nv[k] = old[i];
		d->addrs_n++;
	}
	free(old);
	memset(d->memo, 0, sizeof(d->memo));
	/* forget the process's DSO definitions: rebuild the set without it */
	struct pdso *po = d->pdsos;
	size_t pcap = d->pdsos_cap;
	if (po) {
		struct pdso *pn = calloc(pcap, sizeof(*pn));
		if (!pn)
			return -ENOMEM;
		d->pdsos = pn;
		d->pdsos_n = 0;
		for (size_t i = 0; i < pcap; i++) {
			if (!po[i].dso || po[i].pid == t->pid)
				continue;
			size_t k = hash64((uint64_t)po[i].pid << 32 | po[i].dso) &
				   (pcap - 1);
			while (pn[k].dso)
				k = (k + 1) & (pcap - 1);
			pn[k] = po[i];
			d->pdsos_n++;
		}
		free(po);
	}
	d->st.renames++;
	return define_thread(d, t, comm);
}

/* --- continuity --------------------------------------------------------- */

/* The block at run-time address pos of dso (bias), cached under the DSO
 * and the offset; *out is relocated to pos. Returns 0, or -1 when there
 * is no code to summarise. */
static int block_at(struct strace_dlf *d, const struct aent *where,
		    uint64_t pos, const struct strace_dlf_host *h, void *ctx,
		    struct strace_block *out)
{
	uint64_t key = ((uint64_t)where->dso << 44) ^ (pos - where->bias);
	const struct strace_block *b = strace_bcache_find(d->bc, key);

	if (unlikely(!b)) {
		struct strace_block nb;
		long n = h->code ? h->code(ctx, pos, d->code, sizeof(d->code))
				 : -1;
		d->st.block_misses++;
		if (n <= 0)
			return -1;
		strace_block_decode_mode(d->code, (size_t)n, pos, 0,
					 d->dsos[where->dso].mode, &nb);
		b = strace_bcache_put(d->bc, key, &nb);
		if (!b)
			return -1;
		/* kept for the cache file at the DSO's own address */
		nb.start = pos - where->bias;
		if (nb.target)
			nb.target -= where->bias;
		dlf_dso_cache_add(&d->dsos[where->dso], pos - where->bias, &nb);
	}
	*out = *b;
	if (out->start != pos) {
		uint64_t delta = pos - out->start;
		out->start = pos;
		if (out->target)
			out->target += delta;
	}
	return (out->kind == STRACE_BK_NOCODE || out->kind == STRACE_BK_BAD)
		       ? -1
		       : 0;
}

enum { PATH_OK, PATH_GAP, PATH_UNKNOWN };

/* What the continuity check learns of the path from the last branch's
 * target to the sample's source. */
#define PATH_TRAPS 8
struct path {
	unsigned kind;   /* of the block whose terminator is the source */
	unsigned flags;  /* its STRACE_BF_* (an OCaml raise) */
	uint64_t ninsn;  /* instructions, the branch included */
	unsigned ntraps; /* OCaml tries entered and left on the way (the
			  * first PATH_TRAPS) */
	struct {
		uint64_t start, handler;
		unsigned flags;
	} trap[PATH_TRAPS];
};

/* Block b is on the path: its instructions, its OCaml tries. */
static inline void path_add(struct path *p, const struct strace_block *b)
{
	p->ninsn += b->ninsn;
	if (unlikely(b->flags & (STRACE_BF_OCAML_PUSH | STRACE_BF_OCAML_POP)) &&
	    p->ntraps < PATH_TRAPS) {
		p->trap[p->ntraps].start = b->start;
		p->trap[p->ntraps].handler =
			b->handler ? b->start + (uint64_t)(int64_t)b->handler
				   : 0;
		p->trap[p->ntraps++].flags = b->flags;
	}
}

/*
 * Does the straight-line path from `from` (the last branch target) reach
 * the branch at ip, through cut blocks and not-taken conditional branches
 * only? For an asynchronous event any instruction on the path will do.
 * Fills *p (zeroed first): the kind and flags of the block whose
 * terminator is ip, the instructions of the path (up to an asynchronous
 * event's ip, in proportion of its block's bytes), its OCaml tries.
 */
static int follows(struct strace_dlf *d, const struct aent *where,
		   uint64_t from, uint64_t ip, int async,
		   const struct strace_dlf_host *h, void *ctx, struct path *p)
{
	struct strace_block b;
	uint64_t pos = from;

	memset(p, 0, offsetof(struct path, trap));
	if (!where || !where->dso)
		return PATH_UNKNOWN;
	for (int n = 0; n < MAX_PATH_BLOCKS; n++) {
		if (block_at(d, where, pos, h, ctx, &b) < 0)
			return PATH_UNKNOWN;
		uint64_t end = b.start + b.len;
		if (ip >= b.start && ip < end) {
			if (async) {
				p->ninsn += b.ninsn * (ip - b.start) / b.len;
				return PATH_OK;
			}
			if (ip == end - b.term_len && b.kind != STRACE_BK_NONE) {
				p->kind = b.kind;
				p->flags = b.flags;
				path_add(p, &b);
				return PATH_OK;
			}
			return PATH_GAP;
		}
		path_add(p, &b);
		if (b.kind != STRACE_BK_JCC && b.kind != STRACE_BK_NONE &&
		    b.kind != STRACE_BK_MOV_CR3)
			return PATH_GAP;
		pos = end;
	}
	return PATH_UNKNOWN;
}

/* Check that ip follows from the thread's last branch target; on a gap,
 * say so in the ring and start afresh at ip. *p: the path when it
 * follows; else nothing known but 1 instruction. */
static int check(struct strace_dlf *d, struct thr *t,
		 const struct strace_dlf_sample *s, int async,
		 const struct strace_dlf_host *h, void *ctx, int *ok,
		 struct path *p)
{
	*ok = 0;
	/* perf gives every taken branch only with --itrace=b; its default
	 * gives calls alone, whose sources never follow from the previous
	 * targets: the check starts once a return or jump shows that the
	 * samples are every branch (strace_dlf_stats.others) */
	if (d->o.no_check || !t->have_last || !s->ip || !d->st.others)
		return 0;
	if (t->last_to == s->ip && async) {
		d->st.checked++;
		return 0;
	}
	struct aent wh = {0}, *where = &wh;
	int rc = lookup(d, t->pid, t->last_to, STRACE_DLF_OTHER, h, ctx, &wh);
	if (rc < 0)
		return rc;
	int r = follows(d, where, t->last_to, s->ip, async, h, ctx, p);
	if (r == PATH_OK) {
		d->st.checked++;
		*ok = 1;
		return 0;
	}
	memset(p, 0, offsetof(struct path, trap));
	p->ninsn = 1;
	if (r == PATH_UNKNOWN) {
		d->st.unchecked++;
		return 0;
	}
	/* perf went on from an address the last branch does not lead to:
	 * a gap that perf did not announce */
	d->st.gaps++;
	if (want(d, STRACE_EV_ERROR)) {
		if ((rc = need_sym(d, where->sym)) < 0)
			return rc;
		if ((rc = put_thr(d, t, STRACE_EV_ERROR, STRACE_E_DESYNC,
				  s->time, t->last_to, 0)) < 0)
			return rc;
	}
	if (want(d, STRACE_EV_TRACE_BEGIN)) {
		struct aent e = {0};
		if ((rc = lookup(d, t->pid, s->ip, STRACE_DLF_IP, h, ctx,
				 &e)) < 0)
			return rc;
		if ((rc = need_sym(d, e.sym)) < 0)
			return rc;
		if ((rc = put_thr(d, t, STRACE_EV_TRACE_BEGIN, 0, s->time,
				  s->ip, STRACE_REASON_ERROR)) < 0)
			return rc;
	}
	return 0;
}

/* --- samples ---------------------------------------------------------- */

/* An OCaml event of thread t at ip (its symbol defined first). */
static int ocaml_event(struct strace_dlf *d, struct thr *t,
		       const struct strace_dlf_sample *s, unsigned type,
		       uint64_t ip, uint64_t handler,
		       const struct strace_dlf_host *h, void *ctx)
{
	struct aent e = {0};
	int rc;

	if (!want(d, type))
		return 0;
	if ((rc = lookup(d, t->pid, ip, STRACE_DLF_OTHER, h, ctx, &e)) < 0 ||
	    (rc = need_sym(d, e.sym)) < 0)
		return rc;
	return put_thr(d, t, type, 0, s->time, ip, handler);
}

/* The OCaml tries the path entered and left, and a raise at its end
 * (the branch to the handler), as the decoder tells them (decoder/flow.h,
 * ocaml_traps(), ocaml_raise()). */
static int ocaml_events(struct strace_dlf *d, struct thr *t,
			const struct strace_dlf_sample *s, const struct path *p,
			const struct strace_dlf_host *h, void *ctx)
{
	int rc;

	for (unsigned k = 0; k < p->ntraps; k++) {
		if ((p->trap[k].flags & STRACE_BF_OCAML_PUSH) &&
		    (rc = ocaml_event(d, t, s, STRACE_EV_EXC_PUSH,
				      p->trap[k].start, p->trap[k].handler, h,
				      ctx)) < 0)
			return rc;
		if ((p->trap[k].flags & STRACE_BF_OCAML_POP) &&
		    (rc = ocaml_event(d, t, s, STRACE_EV_EXC_POP,
				      p->trap[k].start, 0, h, ctx)) < 0)
			return rc;
	}
	if ((p->flags & STRACE_BF_OCAML_RAISE) &&
	    (p->kind == STRACE_BK_RET || p->kind == STRACE_BK_JMP_IND))
		return ocaml_event(d, t, s, STRACE_EV_EXC_RAISE, s->ip, s->addr,
				   h, ctx);
	return 0;
}

static inline int same_symbol(const struct aent *a, const struct aent *b)
{
	/* as the decoder: unknown on both sides counts as the same */
	if (!a->sym && !b->sym)
		return 1;
	return a->sym == b->sym;
}

static inline size_t memo_slot(uint64_t prev, uint64_t ip, uint64_t addr)
{
	uint64_t x = (prev ^ (ip << 7) ^ (addr << 13)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> (64 - MEMO_BITS));
}

int strace_dlf_ptwrite(struct strace_dlf *d, const struct strace_dlf_sample *s,
		       uint64_t payload, int ip_exact,
		       const struct strace_dlf_host *h, void *ctx)
{
	struct thr *t;
	struct aent a = {0};
	int rc;

	if (d->err)
		return d->err;
	d->st.ptwrites++;
	if (!want(d, STRACE_EV_PTWRITE))
		return 0;
	d->cur_tid = s->tid;
	d->cur_time = s->time;
	t = thread(d, s, h, ctx);
	if (!t)
		return d->err ? d->err : -ENOMEM;
	if (s->ip) {
		if ((rc = lookup(d, t->pid, s->ip, STRACE_DLF_IP, h, ctx,
				 &a)) < 0 ||
		    (rc = need_sym(d, a.sym)) < 0)
			return rc;
	}
	rc = put_thr(d, t, STRACE_EV_PTWRITE, ip_exact ? STRACE_PTW_IP : 0,
		     s->time, s->ip, payload);
	return rc < 0 ? rc : 1;
}

/* The hot path's hit: a plain branch whose (previous target, source,
 * target) was seen before (memo entry m): names and the continuity check
 * are known. */
static inline __attribute__((always_inline)) int
memo_replay(struct strace_dlf *d, struct thr *t,
	    const struct strace_dlf_sample *s, const struct memo *m)
{
	unsigned type = m->a_type >> 24;
	struct aent a, b;

	d->st.checked++;
	d->st.memo_hits++;
	t->insns += m->prev >> 48;
	t->last_to = s->addr;
	t->last_sym = m->b_flags & MEMO_SYM_MASK;
	if (!type) /* a jump inside one symbol */
		return quiet(d, t, s->time);
	a.sym = m->a_type & MEMO_SYM_MASK;
	b.sym = t->last_sym;
	return flow(d, t, type, m->b_flags >> 24, s, &a, &b, s->ip, s->addr);
}

/* "tr strt": ip is 0 (or where a jump came from), addr is where the trace
 * resumes */
static inline __attribute__((always_inline)) int
trace_begin(struct strace_dlf *d, struct thr *t,
	    const struct strace_dlf_sample *s, const struct aent *eb)
{
	int rc, reason = !t->begun ? STRACE_REASON_START
			 : t->on   ? STRACE_REASON_SYNC
				   : STRACE_REASON_ENABLE;

	if (t->pending_syscall) {
		t->pending_syscall = 0;
		rc = flow(d, t, STRACE_EV_SYSRET, 0, s, NULL, eb, 0, s->addr);
	} else {
		rc = flow(d, t, STRACE_EV_TRACE_BEGIN, 0, s, eb, NULL, s->addr,
			  (uint64_t)reason);
	}
	t->begun = 1;
	t->on = 1;
	t->have_last = s->addr != 0;
	t->last_to = s->addr;
	t->last_sym = eb ? eb->sym : 0;
	return rc;
}

/* "tr end": the trace stops after ip */
static inline __attribute__((always_inline)) int
trace_end(struct strace_dlf *d, struct thr *t,
	  const struct strace_dlf_sample *s, const struct aent *ea,
	  const struct aent *eb, int sysc, int async)
{
	int rc;

	if (sysc && (s->flags & DLF_FLAG_CALL)) {
		t->pending_syscall = 1;
		if ((rc = name_syscall(d, ea, s->ip)) < 0)
			return rc;
		rc = flow(d, t, STRACE_EV_SYSCALL, 0, s, ea, eb, s->ip,
			  s->addr);
	} else if (async) {
		rc = flow(d, t, STRACE_EV_INTERRUPT, STRACE_F_ASYNC, s, ea, eb,
			  s->ip, s->addr);
	} else {
		rc = flow(d, t, STRACE_EV_TRACE_END, 0, s, ea, NULL, s->ip,
			  STRACE_REASON_DISABLE);
	}
	t->on = 0;
	t->have_last = 0;
	return rc;
}

/* The event a taken branch inside the trace makes (*type 0: none, a jump
 * inside one symbol) and its flags. */
static inline __attribute__((always_inline)) int
branch_event(struct strace_dlf *d, const struct strace_dlf_sample *s,
	     const struct aent *ea, const struct aent *eb, unsigned kind,
	     int sysc, int async, int swint, unsigned *type, unsigned *ef)
{
	uint32_t f = s->flags;
	int rc;

	*ef = 0;
	if (sysc) {
		*type = (f & DLF_FLAG_CALL) ? STRACE_EV_SYSCALL
					    : STRACE_EV_SYSRET;
		/* (a memoised branch was named the first time) */
		if (*type == STRACE_EV_SYSCALL &&
		    (rc = name_syscall(d, ea, s->ip)) < 0)
			return rc;
	} else if (async) {
		*type = STRACE_EV_INTERRUPT;
		*ef = STRACE_F_ASYNC;
	} else if (swint) { /* iret */
		*type = STRACE_EV_JUMP;
		*ef = STRACE_F_INDIRECT;
	} else if (f & DLF_FLAG_CALL) {
		*type = STRACE_EV_CALL;
		*ef = kind == STRACE_BK_CALL_IND ? STRACE_F_INDIRECT : 0;
	} else if (f & DLF_FLAG_RETURN) {
		*type = STRACE_EV_RETURN;
	} else {
		*type = STRACE_EV_JUMP;
		*ef = (f & DLF_FLAG_CONDITIONAL) ? STRACE_F_CONDITIONAL : 0;
		if (kind == STRACE_BK_JMP_IND)
			*ef |= STRACE_F_INDIRECT;
		if (ea && eb && same_symbol(ea, eb)) {
			if (!d->o.all_branches)
				*type = 0; /* dropped */
			*ef |= STRACE_F_INTRA;
		}
	}
	return 0;
}

int strace_dlf_sample(struct strace_dlf *d, const struct strace_dlf_sample *s,
		      const struct strace_dlf_host *h, void *ctx)
{
	struct thr *t;
	struct aent a, b, *ea = NULL, *eb = NULL;
	struct memo *m = NULL;
	uint32_t f = s->flags;
	unsigned kind, type, ef;
	struct path p;
	int rc, ok = 0, async = 0, swint, sysc;

	if (unlikely(d->err))
		return d->err;
	if (unlikely(!(f & (DLF_FLAG_BRANCH | DLF_FLAG_TRACE_BEGIN |
			    DLF_FLAG_TRACE_END)))) {
		d->st.ignored++;
		return 0;
	}
	d->st.samples++;
	if (!(f & (DLF_FLAG_CALL | DLF_FLAG_TRACE_BEGIN | DLF_FLAG_TRACE_END |
		   DLF_FLAG_ASYNC | DLF_FLAG_INTERRUPT | DLF_FLAG_SYSCALLRET)))
		d->st.others++;
	d->cur_tid = s->tid;
	d->cur_time = s->time;
	t = thread(d, s, h, ctx);
	if (unlikely(!t))
		return d->err ? d->err : -ENOMEM;
	t->last_time = s->time;
	if (unlikely(s->cpu1 && s->cpu1 != t->cpu1)) {
		/* the thread runs on another CPU from here */
		t->cpu1 = s->cpu1;
		if (want(d, STRACE_EV_CPU) &&
		    (rc = put_thr(d, t, STRACE_EV_CPU, 0, s->time,
				  s->cpu1 - 1, 0)) < 0)
			return rc;
	}
	if (unlikely(f & DLF_FLAG_TRACE_BEGIN) && h->comm) {
		const char *c = h->comm(ctx);
		if (c && t->comm && strcmp(c, t->comm) != 0 &&
		    (rc = renamed(d, t, c)) < 0)
			return rc;
	}

	/* The hot path: a plain branch seen before (memo_replay()) */
	if (likely(!(f & (DLF_FLAG_TRACE_BEGIN | DLF_FLAG_TRACE_END |
			  DLF_FLAG_ASYNC | DLF_FLAG_INTERRUPT)) &&
		   t->on && t->have_last && s->ip && s->addr &&
		   !d->o.no_check)) {
		uint64_t kip = s->ip | (uint64_t)(t->pid & 0xffff) << 48;
		uint64_t kaddr = s->addr | (uint64_t)(t->pid >> 16) << 48;
		m = &d->memo[memo_slot(t->last_to, s->ip, s->addr)];
		if (likely((m->prev & MEMO_LOW48) == t->last_to &&
			   m->ip == kip && m->addr == kaddr))
			return memo_replay(d, t, s, m);
	}
	if (s->ip) {
		if (unlikely((rc = lookup(d, t->pid, s->ip, STRACE_DLF_IP, h,
					  ctx, &a)) < 0))
			return rc;
		ea = &a;
	}
	if (s->addr) {
		if (unlikely((rc = lookup(d, t->pid, s->addr, STRACE_DLF_ADDR,
					  h, ctx, &b)) < 0))
			return rc;
		eb = &b;
	}

	if (f & DLF_FLAG_TRACE_BEGIN)
		return trace_begin(d, t, s, eb);

	/* perf's "int" (int n, int3, into: CALL | INTERRUPT) and "iret"
	 * (RETURN | INTERRUPT) are the instruction's own branch, not
	 * asynchronous (ASYNC): a syscall and a jump, as the walker makes
	 * them (int $0x80 is 32-bit code's system call) */
	swint = (f & (DLF_FLAG_INTERRUPT | DLF_FLAG_ASYNC)) ==
		DLF_FLAG_INTERRUPT;
	async = !!(f & (DLF_FLAG_ASYNC | DLF_FLAG_INTERRUPT)) && !swint;
	sysc = (f & DLF_FLAG_SYSCALLRET) || (swint && (f & DLF_FLAG_CALL));
	memset(&p, 0, offsetof(struct path, trap));
	p.ninsn = 1;
	if (t->on && (rc = check(d, t, s, async, h, ctx, &ok, &p)) < 0)
		return rc;
	t->insns += p.ninsn;
	kind = t->on ? p.kind : STRACE_BK_NONE;
	if (unlikely(p.ntraps || (p.flags & STRACE_BF_OCAML_RAISE))) {
		/* the OCaml tries of the path: never memoised */
		if ((rc = ocaml_events(d, t, s, &p, h, ctx)) < 0)
			return rc;
		m = NULL;
	}
	if (m && ok && t->last_to < MEMO_ADDR_LIMIT &&
	    s->ip < MEMO_ADDR_LIMIT && s->addr < MEMO_ADDR_LIMIT &&
	    a.sym <= MEMO_SYM_MASK && b.sym <= MEMO_SYM_MASK &&
	    p.ninsn <= 0xffff) {
		/* what the branch makes is filled in below */
		m->prev = t->last_to | p.ninsn << 48;
		m->ip = s->ip | (uint64_t)(t->pid & 0xffff) << 48;
		m->addr = s->addr | (uint64_t)(t->pid >> 16) << 48;
	} else {
		m = NULL;
	}

	if (f & DLF_FLAG_TRACE_END)
		return trace_end(d, t, s, ea, eb, sysc, async);

	/* a taken branch inside the trace */
	t->on = 1;
	t->begun = 1;
	t->have_last = s->addr != 0;
	t->last_to = s->addr;
	t->last_sym = eb ? eb->sym : 0;
	if ((rc = branch_event(d, s, ea, eb, kind, sysc, async, swint, &type,
			       &ef)) < 0)
		return rc;
	if (m) {
		m->a_type = a.sym | type << 24;
		m->b_flags = b.sym | ef << 24;
	}
	if (!type)
		return quiet(d, t, s->time);
	return flow(d, t, type, ef, s, ea, eb, s->ip, s->addr);
}

/* --- end of run (new and free: dlf_life.c) ------------------------------- */

int strace_dlf_finish(struct strace_dlf *d)
{
	if (d->finished)
		return d->err;
	d->finished = 1;
	for (size_t i = 0; i < d->thrs_cap && !d->err; i++) {
		struct thr *t = &d->thrs[i];
		if (!t->used || !t->on || !t->have_last)
			continue;
		/* the last address the trace vouches for */
		d->cur_tid = t->tid;
		d->cur_time = t->last_time;
		if (want(d, STRACE_EV_TRACE_END) &&
		    need_sym(d, t->last_sym) >= 0)
			put_thr(d, t, STRACE_EV_TRACE_END, 0, t->last_time,
				t->last_to, STRACE_REASON_END);
		t->on = 0;
	}
	/* what the spreaders hold: the times they have */
	for (size_t i = 0; i < d->thrs_cap && !d->err; i++) {
		int rc = d->thrs[i].used
				 ? strace_dec_spreader_flush(d->thrs[i].sp)
				 : 0;
		if (rc)
			d->err = rc;
	}
	if (d->err)
		return d->err;
	dlf_dso_cache_save(d);
	return strace_writer_flush(d->w);
}
