/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_uftrace_sym.c - ptrace-read -f uftrace -o DIR: the modules
 * (groups of the ring's DSO entries), a NAME.sym file per module with
 * its symbols and the labels of unnamed code, the labels' module, and
 * the map lines every sid-SID.map file holds (see the top of
 * fmt_uftrace.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "fmt_uftrace.h"

/* "%016x" */
static void sb_hex16(struct sb *b, uint64_t x)
{
	static const char d[] = "0123456789abcdef";
	char *p = uft_sb_room(b, 16);

	if (!p)
		return;
	for (int i = 15; i >= 0; i--, x >>= 4)
		p[i] = d[x & 15];
	b->len += 16;
}

/* A name on one line of a .sym file, at most FMT_NAME_MAX bytes, as the
 * views print it (view_put_clean(): no newline, no tab, at which uftrace
 * cuts a name, no byte that would move a terminal's cursor when uftrace
 * replays it). */
static void sb_name(struct sb *b, const char *s, size_t len)
{
	char *p;

	if (len > FMT_NAME_MAX)
		len = FMT_NAME_MAX;
	p = uft_sb_room(b, len);
	if (!p)
		return;
	view_put_clean(p, s, len, NULL);
	b->len += len;
}

static int cmp_dso(const void *a, const void *b)
{
	const struct strace_name *x = *(const struct strace_name *const *)a;
	const struct strace_name *y = *(const struct strace_name *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_msym(const void *a, const void *b)
{
	const struct msym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* a label was written for frames there; then the shortest symbol,
	 * as strace_names_symbol() chooses */
	if (x->synth != y->synth)
		return x->synth ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

const char *uft_base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The path of a map line: the DSO's, without blanks (uftrace reads it
 * with %s), not beginning with '[' (uftrace skips those lines), its base
 * name unique among the modules (it names the .sym file). */
static char *mod_path(struct mod *m, size_t n, const char *dso)
{
	size_t len = strlen(dso), k;
	char *p = malloc(len + 32), *b;
	int clash;

	if (!p)
		return NULL;
	if (*dso == '[') { /* "[vdso]": "vdso" */
		dso++, len--;
		if (len && dso[len - 1] == ']')
			len--;
	}
	memcpy(p, dso, len);
	p[len] = '\0';
	for (k = 0; k < len; k++)
		if ((unsigned char)p[k] <= ' ')
			p[k] = '_';
	while (len && p[len - 1] == '/')
		p[--len] = '\0';
	if (!len || !*uft_base_name(p))
		strcpy(p, "unnamed"), len = 7;
	b = p + len;
	for (unsigned dup = 1;; dup++) {
		clash = !strcmp(uft_base_name(p), LABELS_PATH);
		for (k = 0; k < n && !clash; k++)
			clash = m[k].path &&
				!strcmp(uft_base_name(m[k].path),
					uft_base_name(p));
		if (!clash)
			return p;
		sprintf(b, "#%u", dup + 1);
	}
}

static int msym_add(struct mod *o, uint64_t off, uint64_t size, uint64_t id,
		    int synth)
{
	if (o->nsyms == o->scap) {
		struct msym *s = strace_grow(o->syms, &o->scap, sizeof(*s), 64);
		if (!s)
			return -1;
		o->syms = s;
	}
	o->syms[o->nsyms].off = off;
	o->syms[o->nsyms].size = size ? size : 1;
	o->syms[o->nsyms].id = id;
	o->syms[o->nsyms].synth = synth;
	o->nsyms++;
	return 0;
}

/* The module of addr, or NULL. */
static struct mod *mod_of(struct mod *m, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < m[lo - 1].end ? &m[lo - 1] : NULL;
}

/*
 * uftrace's replay treats the functions of these names specially
 * (utils/fstack.c: fixup_syms): at a longjmp's or an exec's entry it
 * resets its stack to the setjmp's depth or to 0, as libmcount records
 * no returns from them. The ring has their frames' exits and unwinds,
 * so such a reset would misplace every frame after it: in the .sym
 * files those names get a suffix, and uftrace shows "longjmp.nofixup".
 * (setjmp and fork are fixups too, harmless here: they only note a
 * depth for the others, and for children named in FORK lines.)
 */
#define NOFIXUP ".nofixup"

static int fixup_name(const char *s, size_t len)
{
	static const char *const names[] = {
		"longjmp", "siglongjmp", "__longjmp_chk", "execl",  "execlp",
		"execle",  "execv",      "execve",        "execvp", "execvpe",
	};

	for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++)
		if (len == strlen(names[k]) && !memcmp(s, names[k], len))
			return 1;
	return 0;
}

/* One .sym file: a module's symbols and labels, sorted, each ended
 * where the next begins or where its size says. */
static int write_sym(struct view *v, struct uft *u, struct mod *o,
		     struct sb *b)
{
	struct strace_names *nm = view_names(v);
	size_t n = 0;
	char file[PATH_MAX];

	qsort(o->syms, o->nsyms, sizeof(*o->syms), cmp_msym);
	/* one symbol per offset: the first */
	for (size_t i = 0; i < o->nsyms; i++)
		if (!n || o->syms[i].off != o->syms[n - 1].off)
			o->syms[n++] = o->syms[i];
	o->nsyms = n;
	b->len = 0;
	uft_sb_printf(b, "# symbols: %zu\n# path name: %s\n", n, o->path);
	for (size_t i = 0; i < n; i++) {
		const struct msym *s = &o->syms[i];
		uint64_t end = s->off + s->size;
		sb_hex16(b, s->off);
		uft_sb_add(b, " T ", 3);
		if (s->synth) {
			char *e = view_put_name_id(v, u->name, s->id);
			sb_name(b, u->name, (size_t)(e - u->name));
			if (fixup_name(u->name, (size_t)(e - u->name)))
				uft_sb_str(b, NOFIXUP);
		} else {
			const struct strace_name *fn =
				strace_names_get(nm, (uint32_t)s->id);
			sb_name(b, fn->str, fn->len);
			if (fixup_name(fn->str, fn->len))
				uft_sb_str(b, NOFIXUP);
		}
		uft_sb_add(b, "\n", 1);
		if (i + 1 < n && end >= o->syms[i + 1].off)
			continue; /* cut where the next begins */
		sb_hex16(b, end);
		uft_sb_str(b, " ? __func_end\n");
	}
	if (b->failed) {
		view_fail(v, -ENOMEM);
		return -1;
	}
	snprintf(file, sizeof(file), "%s.sym", uft_base_name(o->path));
	return uft_put_file(v, u, file, b->p, b->len);
}

/* The map lines (the same for every session: the ring's names are one
 * table for all its processes) and the .sym files. */
int uft_write_modules(struct view *v, struct uft *u, struct sb *map,
		      struct mod **mods, size_t *nmods)
{
	struct strace_names *nm = view_names(v);
	size_t count = nm ? strace_names_count(nm) : 0, nd = 0, n = 0;
	const struct strace_name **d = NULL;
	struct mod *m = NULL;
	struct sb b = {0};
	int rc = -1;

	for (size_t i = 0; i < count; i++) {
		const struct strace_name *e = strace_names_get(nm, (uint32_t)i);
		if (e && e->kind == STRACE_EV_DSO && e->key && e->key < UFT_USER_TOP)
			nd++;
	}
	d = calloc(nd ? nd : 1, sizeof(*d));
	m = calloc(nd ? nd : 1, sizeof(*m));
	if (!d || !m)
		goto nomem;
	nd = 0;
	for (size_t i = 0; i < count; i++) {
		const struct strace_name *e = strace_names_get(nm, (uint32_t)i);
		if (e && e->kind == STRACE_EV_DSO && e->key && e->key < UFT_USER_TOP)
			d[nd++] = e;
	}
	qsort(d, nd, sizeof(*d), cmp_dso);
	for (size_t i = 0; i < nd; i++) {
		uint64_t end = d[i]->key + (d[i]->aux ? d[i]->aux : 1);
		if (end > UFT_USER_TOP || end < d[i]->key)
			end = UFT_USER_TOP;
		/* the same path again, or overlapping: one line (uftrace
		 * makes one of consecutive lines of one path) */
		if (n && (d[i]->key < m[n - 1].end ||
			  !strcmp(d[i]->str, m[n - 1].dso->str))) {
			if (end > m[n - 1].end)
				m[n - 1].end = end;
			continue;
		}
		m[n].start = d[i]->key;
		m[n].end = end;
		m[n].dso = d[i];
		m[n].owner = n;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < i; k++)
			if (m[k].owner == k &&
			    !strcmp(m[k].dso->str, m[i].dso->str) &&
			    m[k].end - m[k].start == m[i].end - m[i].start) {
				m[i].owner = k;
				break;
			}
		if (m[i].owner == i && !(m[i].path = mod_path(m, n, m[i].dso->str)))
			goto nomem;
	}
	/* the symbols, relative to their module's start */
	for (size_t i = 0; i < count; i++) {
		const struct strace_name *e = strace_names_get(nm, (uint32_t)i);
		struct mod *g;
		if (!e || e->kind != STRACE_EV_SYMBOL ||
		    !(g = mod_of(m, n, e->key)))
			continue;
		if (msym_add(&m[g->owner], e->key - g->start, e->aux, e->id, 0) < 0)
			goto nomem;
	}
	/* the labels of unnamed code in DSOs */
	for (size_t j = 0; j < u->labcap; j++) {
		const struct label *l = &u->labs[j];
		struct mod *g;
		if (!l->addr || l->addr >= UFT_LABELS ||
		    !(g = mod_of(m, n, l->addr)))
			continue;
		if (msym_add(&m[g->owner], l->addr - g->start, 1, l->id, 1) < 0)
			goto nomem;
	}
	for (size_t i = 0; i < n; i++) {
		if (m[i].owner != i)
			continue;
		if (!m[i].nsyms) {
			/* an empty .sym file would send uftrace to the ELF
			 * file, whose addresses are not relative to this
			 * start: a label for the first byte */
			struct strace_frame fake;
			memset(&fake, 0, sizeof(fake));
			fake.addr = m[i].start;
			if (msym_add(&m[i], 0, 1, view_name_id(v, &fake), 1) < 0)
				goto nomem;
		}
		if (write_sym(v, u, &m[i], &b) < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		uft_sb_printf(map, "%012llx-%012llx r-xp %08x 00:00 0 %s\n",
			      (unsigned long long)m[i].start,
			      (unsigned long long)m[i].end, 0,
			      m[m[i].owner].path);
	/* the labels' module */
	if (u->npseudo) {
		struct mod lab;
		char path[] = LABELS_PATH;
		memset(&lab, 0, sizeof(lab));
		lab.path = path;
		for (size_t i = 0; i < u->npseudo; i++)
			if (msym_add(&lab, i, 1, u->pseudo[i], 1) < 0) {
				free(lab.syms);
				goto nomem;
			}
		rc = write_sym(v, u, &lab, &b);
		free(lab.syms);
		if (rc < 0)
			goto out;
		rc = -1;
		uft_sb_printf(map, "%012llx-%012llx r-xp %08x 00:00 0 %s\n",
			      (unsigned long long)UFT_LABELS,
			      (unsigned long long)(UFT_LABELS + u->npseudo), 0,
			      LABELS_PATH);
	}
	/* where the kernel begins (guess_kernel_base: x86-64's 128T) */
	uft_sb_str(map, "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
	if (map->failed)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	view_fail(v, -ENOMEM);
out:
	free(d);
	free(b.p);
	*mods = m;
	*nmods = n;
	return rc;
}
