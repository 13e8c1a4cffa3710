// SPDX-License-Identifier: MIT
/*
 * decoder/dwarf_cache.c - the DWARF layer's tables kept between runs, one
 * file per object and table beside the block cache (docs/cache.md):
 *
 *   BUILDID.lines.dwarf    the line table (dwarf.c's rows)
 *   BUILDID.funcs.dwarf    the functions with code (dwarf_funcs.c)
 *   BUILDID.inline.dwarf   every unit's inlined instances, by address
 *
 * A table is made from DWARF once (libdw decompresses and walks the debug
 * sections: most of a reader's time on an object with debug information,
 * such as libc's from libc6-dbg) and read from its file after. A file is
 * keyed by the object's build-id and by the identity (size, mtime) of the
 * file its DWARF was read from, the object or its separate debug file: a
 * debug file installed, changed or removed makes it stale. Files are
 * never trusted (checksum, every count and string bounded), and a file
 * that is missing, stale or damaged only means reading the DWARF again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/cachefile.h"
#include "decoder/dwarf_int.h"
#include "strace/internal/grow.h"

#define DC_MAGIC "STRDWRF\n"
#define DC_VERSION 1
#define DC_MAX_BYTES (1ull << 31)
#define DC_NONE UINT32_MAX /* a string offset: no string */

static const char *const kind_name[] = {
	[DC_LINES] = "lines", [DC_FUNCS] = "funcs", [DC_INLINE] = "inline"};

struct dc_header {
	char magic[8];
	uint32_t version, kind;
	uint64_t checksum; /* of the file with this field zero */
	uint32_t idn, header_size;
	uint8_t id[64];
	uint64_t size, mtime_sec, mtime_nsec; /* the DWARF's file */
	uint64_t n1, n2, pool_len;
};
_Static_assert(sizeof(struct dc_header) == 144, "docs/cache.md says 144");

struct dc_row { /* n1 of a lines file */
	uint64_t addr;
	uint32_t file, line, flags, seq; /* flags: 1 end, 2 stmt */
};
struct dc_func { /* n1 of a funcs file */
	uint64_t lo, hi;
	uint32_t name, file, raw, line;
};
struct dc_unit { /* n1 of an inline file: an address range of a unit */
	uint64_t lo, hi;
	uint32_t first, n; /* its instances: n2's [first, first + n) */
};
struct dc_ient { /* n2 of an inline file */
	uint64_t lo, hi;
	uint32_t depth, call_line, name, call_file;
};

static const size_t rec1[] = {[DC_LINES] = sizeof(struct dc_row),
			      [DC_FUNCS] = sizeof(struct dc_func),
			      [DC_INLINE] = sizeof(struct dc_unit)};
static const size_t rec2[] = {[DC_INLINE] = sizeof(struct dc_ient)};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int cache_path(const struct strace_dwarf *d, const struct dobj *o,
		      int kind, char *buf, size_t max)
{
	char hex[2 * sizeof(o->id) + 1];
	int n;

	for (size_t i = 0; i < o->idn; i++)
		snprintf(hex + 2 * i, 3, "%02x", o->id[i]);
	hex[2 * o->idn] = 0;
	n = snprintf(buf, max, "%s/%s.%s.dwarf", d->cache_dir, hex,
		     kind_name[kind]);
	return n > 0 && (size_t)n < max;
}

static int cacheable(const struct strace_dwarf *d, const struct dobj *o)
{
	return d->cache_dir && o->idn && o->dw;
}

/* --- writing ---------------------------------------------------------- */

/* The strings of a file being made: each once. */
struct pool {
	char *buf;
	size_t len, cap;
	const char **key; /* open addressing: the strings, */
	uint32_t *off;    /* ... and their offsets */
	size_t mask, used;
};

static size_t hash_str(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* s's offset in p (added once), DC_NONE for NULL; -1 without memory
 * (as UINT32_MAX - 1, never a valid offset: the pool is far smaller). */
static uint32_t pool_add(struct pool *p, const char *s)
{
	size_t i, n;

	if (!s)
		return DC_NONE;
	if (2 * (p->used + 1) > p->mask + 1) {
		struct pool g = *p;
		g.mask = p->mask ? 2 * p->mask + 1 : 1023;
		g.key = calloc(g.mask + 1, sizeof(*g.key));
		g.off = calloc(g.mask + 1, sizeof(*g.off));
		if (!g.key || !g.off) {
			free(g.key);
			free(g.off);
			return DC_NONE - 1;
		}
		for (size_t k = 0; p->key && k <= p->mask; k++) {
			if (!p->key[k])
				continue;
			for (i = hash_str(p->key[k]) & g.mask; g.key[i];
			     i = (i + 1) & g.mask)
				;
			g.key[i] = p->key[k];
			g.off[i] = p->off[k];
		}
		free(p->key);
		free(p->off);
		*p = g;
	}
	for (i = hash_str(s) & p->mask; p->key[i]; i = (i + 1) & p->mask)
		if (!strcmp(p->key[i], s))
			return p->off[i];
	n = strlen(s) + 1;
	if (p->len + n > UINT32_MAX / 2)
		return DC_NONE - 1;
	while (p->len + n > p->cap) {
		char *v = strace_grow(p->buf, &p->cap, 1, 4096);
		if (!v)
			return DC_NONE - 1;
		p->buf = v;
	}
	memcpy(p->buf + p->len, s, n);
	p->key[i] = s;
	p->off[i] = (uint32_t)p->len;
	p->used++;
	p->len += n;
	return p->off[i];
}

static void pool_free(struct pool *p)
{
	free(p->buf);
	free(p->key);
	free(p->off);
}

/* The records of o's table kind, into a malloc'd buffer after room for the
 * header: *recs the first records (n1 of them), *recs2 the second. */
static int fill(const struct dobj *o, int kind, struct pool *p, void **r1,
		size_t *n1, void **r2, size_t *n2)
{
	uint32_t bad = DC_NONE - 1;

	*n2 = 0;
	*r2 = NULL;
	if (kind == DC_LINES) {
		struct dc_row *v = calloc(o->nrows ? o->nrows : 1, sizeof(*v));
		if (!(*r1 = v))
			return -ENOMEM;
		for (size_t i = 0; i < o->nrows; i++) {
			const struct row *r = &o->rows[i];
			v[i] = (struct dc_row){r->addr, pool_add(p, r->file),
					       r->line,
					       r->end | (uint32_t)r->stmt << 1,
					       r->seq};
			if (v[i].file == bad)
				return -ENOMEM;
		}
		*n1 = o->nrows;
	} else if (kind == DC_FUNCS) {
		struct dc_func *v = calloc(o->nfns ? o->nfns : 1, sizeof(*v));
		if (!(*r1 = v))
			return -ENOMEM;
		for (size_t i = 0; i < o->nfns; i++) {
			const struct fent *f = &o->fns[i];
			v[i] = (struct dc_func){f->lo, f->hi,
						pool_add(p, f->name),
						pool_add(p, f->file),
						pool_add(p, f->raw), f->line};
			if (v[i].name == bad || v[i].file == bad ||
			    v[i].raw == bad)
				return -ENOMEM;
		}
		*n1 = o->nfns;
	} else {
		struct dc_unit *u = calloc(o->nunits ? o->nunits : 1,
					   sizeof(*u));
		struct dc_ient *v = calloc(o->nients ? o->nients : 1,
					   sizeof(*v));
		*r1 = u;
		*r2 = v;
		if (!u || !v)
			return -ENOMEM;
		for (size_t i = 0; i < o->nunits; i++)
			u[i] = (struct dc_unit){o->units[i].lo, o->units[i].hi,
						o->units[i].first,
						o->units[i].n};
		for (size_t i = 0; i < o->nients; i++) {
			const struct ient *e = &o->ients[i];
			v[i] = (struct dc_ient){e->lo, e->hi, e->depth,
						e->call_line,
						pool_add(p, e->name),
						pool_add(p, e->call_file)};
			if (v[i].name == bad || v[i].call_file == bad)
				return -ENOMEM;
		}
		*n1 = o->nunits;
		*n2 = o->nients;
	}
	return 0;
}

void strace_dec_dwarf_cache_save(const struct strace_dwarf *d,
				 const struct dobj *o, int kind)
{
	struct pool p = {0};
	struct dc_header h;
	void *r1 = NULL, *r2 = NULL;
	size_t n1 = 0, n2 = 0, len, off;
	uint8_t *buf = NULL;
	char path[4096];

	if (!cacheable(d, o) || !cache_path(d, o, kind, path, sizeof(path)) ||
	    fill(o, kind, &p, &r1, &n1, &r2, &n2))
		goto out;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, DC_MAGIC, 8);
	h.version = DC_VERSION;
	h.kind = (uint32_t)kind;
	h.idn = (uint32_t)o->idn;
	h.header_size = sizeof(h);
	memcpy(h.id, o->id, o->idn);
	h.size = o->dsize;
	h.mtime_sec = o->dmtime_sec;
	h.mtime_nsec = o->dmtime_nsec;
	h.n1 = n1;
	h.n2 = n2;
	h.pool_len = p.len;
	len = sizeof(h) + align8(n1 * rec1[kind]) +
	      (kind == DC_INLINE ? align8(n2 * rec2[kind]) : 0) +
	      align8(p.len);
	if (len > DC_MAX_BYTES || !(buf = calloc(1, len)))
		goto out;
	memcpy(buf, &h, sizeof(h));
	off = sizeof(h);
	if (n1)
		memcpy(buf + off, r1, n1 * rec1[kind]);
	off += align8(n1 * rec1[kind]);
	if (n2) {
		memcpy(buf + off, r2, n2 * rec2[kind]);
		off += align8(n2 * rec2[kind]);
	}
	if (p.len)
		memcpy(buf + off, p.buf, p.len);
	h.checksum = strace_dec_cache_checksum(
		buf, len, offsetof(struct dc_header, checksum));
	memcpy(buf + offsetof(struct dc_header, checksum), &h.checksum, 8);
	/* (a cache that cannot be written is no error: the next run reads
	 * the DWARF again) */
	strace_dec_cache_write(d->cache_dir, path + strlen(d->cache_dir) + 1,
			       buf, len);
out:
	free(buf);
	free(r1);
	free(r2);
	pool_free(&p);
}

/* --- reading ---------------------------------------------------------- */

/* A string of the pool, or NULL for DC_NONE; *bad set when out of it. */
static const char *str_at(const char *pool, size_t len, uint32_t off,
			  int *bad)
{
	if (off == DC_NONE)
		return NULL;
	if (off >= len) {
		*bad = 1;
		return NULL;
	}
	return pool + off;
}

/* The header of buf (len bytes) checked against o and kind; the sections'
 * places. Returns 0 or -1. */
static int check(const struct dobj *o, int kind, const uint8_t *buf,
		 size_t len, struct dc_header *h, size_t *off2, size_t *offp)
{
	size_t s1, s2;

	if (len < sizeof(*h))
		return -1;
	memcpy(h, buf, sizeof(*h));
	if (memcmp(h->magic, DC_MAGIC, 8) || h->version != DC_VERSION ||
	    h->kind != (uint32_t)kind || h->header_size != sizeof(*h) ||
	    h->idn != o->idn || memcmp(h->id, o->id, o->idn) ||
	    h->size != o->dsize || h->mtime_sec != o->dmtime_sec ||
	    h->mtime_nsec != o->dmtime_nsec)
		return -1;
	if (h->n1 > len / rec1[kind] ||
	    (kind == DC_INLINE ? h->n2 > len / rec2[kind] : h->n2 != 0) ||
	    h->pool_len > len)
		return -1;
	s1 = align8((size_t)h->n1 * rec1[kind]);
	s2 = kind == DC_INLINE ? align8((size_t)h->n2 * rec2[kind]) : 0;
	*off2 = sizeof(*h) + s1;
	*offp = *off2 + s2;
	if (*offp > len || align8((size_t)h->pool_len) != len - *offp ||
	    (h->pool_len && buf[*offp + h->pool_len - 1] != 0))
		return -1;
	if (strace_dec_cache_checksum(buf, len,
				      offsetof(struct dc_header, checksum)) !=
	    h->checksum)
		return -1;
	return 0;
}

/* o's tables of kind from buf, pointing into it (o keeps buf mapped). */
static int take(struct dobj *o, int kind, const uint8_t *buf,
		const struct dc_header *h, size_t off2, size_t offp)
{
	const char *pool = (const char *)buf + offp;
	size_t pl = (size_t)h->pool_len;
	const uint8_t *p1 = buf + sizeof(*h), *p2 = buf + off2;
	int bad = 0;

	if (kind == DC_LINES) {
		if (h->n1 && !(o->rows = calloc(h->n1, sizeof(*o->rows))))
			return -ENOMEM;
		for (size_t i = 0; i < h->n1 && !bad; i++) {
			struct dc_row r;
			memcpy(&r, p1 + i * sizeof(r), sizeof(r));
			o->rows[i] = (struct row){
				r.addr, str_at(pool, pl, r.file, &bad), r.line,
				r.flags & 1, (r.flags >> 1) & 1,
				r.seq & 0x3fffffff};
		}
		o->nrows = bad ? 0 : h->n1;
	} else if (kind == DC_FUNCS) {
		if (h->n1 && !(o->fns = calloc(h->n1, sizeof(*o->fns))))
			return -ENOMEM;
		for (size_t i = 0; i < h->n1 && !bad; i++) {
			struct dc_func f;
			memcpy(&f, p1 + i * sizeof(f), sizeof(f));
			o->fns[i] = (struct fent){
				f.lo, f.hi, str_at(pool, pl, f.name, &bad),
				str_at(pool, pl, f.file, &bad),
				str_at(pool, pl, f.raw, &bad), f.line};
		}
		o->nfns = bad ? 0 : h->n1;
	} else {
		if ((h->n1 && !(o->units = calloc(h->n1, sizeof(*o->units)))) ||
		    (h->n2 && !(o->ients = calloc(h->n2, sizeof(*o->ients)))))
			return -ENOMEM;
		for (size_t i = 0; i < h->n1 && !bad; i++) {
			struct dc_unit u;
			memcpy(&u, p1 + i * sizeof(u), sizeof(u));
			bad = u.first > h->n2 || u.n > h->n2 - u.first;
			o->units[i] = (struct unit){u.lo, u.hi, u.first, u.n};
		}
		for (size_t i = 0; i < h->n2 && !bad; i++) {
			struct dc_ient e;
			memcpy(&e, p2 + i * sizeof(e), sizeof(e));
			o->ients[i] = (struct ient){
				e.lo, e.hi, e.depth, e.call_line,
				str_at(pool, pl, e.name, &bad),
				str_at(pool, pl, e.call_file, &bad)};
		}
		o->nunits = bad ? 0 : h->n1;
		o->nients = bad ? 0 : h->n2;
	}
	return bad ? -1 : 0;
}

/* o's table kind, emptied */
static void drop(struct dobj *o, int kind)
{
	if (kind == DC_LINES) {
		free(o->rows);
		o->rows = NULL;
		o->nrows = 0;
	} else if (kind == DC_FUNCS) {
		free(o->fns);
		o->fns = NULL;
		o->nfns = 0;
	} else {
		free(o->units);
		free(o->ients);
		o->units = NULL;
		o->ients = NULL;
		o->nunits = o->nients = 0;
	}
}

int strace_dec_dwarf_cache_load(const struct strace_dwarf *d, struct dobj *o,
				int kind)
{
	char path[4096];
	struct dc_header h;
	size_t len, off2, offp;
	void *buf;

	if (!cacheable(d, o) || !cache_path(d, o, kind, path, sizeof(path)) ||
	    strace_dec_cache_map(d->cache_dir, path + strlen(d->cache_dir) + 1,
				 sizeof(h), DC_MAX_BYTES, &buf, &len))
		return 0;
	if (check(o, kind, buf, len, &h, &off2, &offp) ||
	    take(o, kind, buf, &h, off2, offp)) {
		/* damaged, stale or no memory: the table is made again */
		drop(o, kind);
		munmap(buf, len);
		return 0;
	}
	o->maps[kind] = buf;
	o->maplen[kind] = len;
	return 1;
}
