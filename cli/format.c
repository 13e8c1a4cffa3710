/* SPDX-License-Identifier: MIT */
/*
 * cli/format.c - text and JSON-lines formatting, name tables.
 *
 * The per-type strings (" from=", ",\"type\":\"call\",\"tid\":", ...) are
 * built once from the X-macro table, padded to fixed sizes so the hot path
 * copies them with constant-size memcpy (a few register moves) and then
 * advances by the real length. Numbers use two-digit tables. Nothing here
 * calls printf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

/* --- numbers ------------------------------------------------------------ */

static const char dig2[201] = "00010203040506070809"
			      "10111213141516171819"
			      "20212223242526272829"
			      "30313233343536373839"
			      "40414243444546474849"
			      "50515253545556575859"
			      "60616263646566676869"
			      "70717273747576777879"
			      "80818283848586878889"
			      "90919293949596979899";

static const uint64_t pow10[20] = {1ull,
				   10ull,
				   100ull,
				   1000ull,
				   10000ull,
				   100000ull,
				   1000000ull,
				   10000000ull,
				   100000000ull,
				   1000000000ull,
				   10000000000ull,
				   100000000000ull,
				   1000000000000ull,
				   10000000000000ull,
				   100000000000000ull,
				   1000000000000000ull,
				   10000000000000000ull,
				   100000000000000000ull,
				   1000000000000000000ull,
				   10000000000000000000ull};

static inline unsigned ndigits(uint64_t v)
{
	/* log10 from the bit length: 1233/4096 ~ log10(2). */
	unsigned t = ((unsigned)(64 - __builtin_clzll(v | 1)) * 1233) >> 12;
	return t + ((v | 1) >= pow10[t]);
}

static inline char *put_u64(char *p, uint64_t v)
{
	unsigned n = ndigits(v);
	char *end = p + n, *q = end;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, dig2 + 2 * r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, dig2 + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return end;
}

static const char hexdig[] = "0123456789abcdef";

static inline char *put_hex(char *p, uint64_t v)
{
	unsigned n = ((unsigned)(64 - __builtin_clzll(v | 1)) + 3) / 4;
	char *end = p + 2 + n, *q = end;

	p[0] = '0';
	p[1] = 'x';
	do {
		*--q = hexdig[v & 15];
		v >>= 4;
	} while (v);
	return end;
}

static inline char *put_time(char *p, uint64_t ns)
{
	uint64_t s = ns / 1000000000u;
	unsigned r = (unsigned)(ns % 1000000000u);

	p = put_u64(p, s);
	*p++ = '.';
	/* nine digits: one, then four pairs */
	p[0] = (char)('0' + r / 100000000u);
	r %= 100000000u;
	memcpy(p + 1, dig2 + 2 * (r / 1000000u), 2);
	r %= 1000000u;
	memcpy(p + 3, dig2 + 2 * (r / 10000u), 2);
	r %= 10000u;
	memcpy(p + 5, dig2 + 2 * (r / 100u), 2);
	memcpy(p + 7, dig2 + 2 * (r % 100u), 2);
	return p + 9;
}

char *fmt_put_u64(char *p, uint64_t v)
{
	return put_u64(p, v);
}

char *fmt_put_hex(char *p, uint64_t v)
{
	return put_hex(p, v);
}

char *fmt_put_time(char *p, uint64_t ns)
{
	return put_time(p, ns);
}

/* --- escaping ------------------------------------------------------------ */

/* Length of a valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (len > n)
		return 0;
	cp = c & (0x3fu >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/*
 * JSON string body: quotes and backslashes escaped, control bytes and
 * bytes that are not valid UTF-8 as \u00XX (so the line stays valid JSON;
 * such a byte reads back as the Latin-1 character of that value). At most
 * 6 * len bytes.
 */
static char *put_json_str(char *p, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*p++ = (char)c;
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = utf8_len(s + i, len - i);
			if (l) {
				memcpy(p, s + i, l);
				p += l;
				i += l;
				continue;
			}
		}
		switch (c) {
		case '\n':
			*p++ = '\\';
			*p++ = 'n';
			break;
		case '\t':
			*p++ = '\\';
			*p++ = 't';
			break;
		case '\r':
			*p++ = '\\';
			*p++ = 'r';
			break;
		default:
			memcpy(p, "\\u00", 4);
			p[4] = hexdig[c >> 4];
			p[5] = hexdig[c & 15];
			p += 6;
		}
		i++;
	}
	return p;
}

/* Text form: control bytes (which would break the line) become '?'. */
static char *put_text_str(char *p, const char *str, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)str[i];
		*p++ = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	return p;
}

static int needs_json_escape(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return 1;
	return 0;
}

/* --- name tables --------------------------------------------------------- */

void fmt_names_init(struct fmt_names *n, const struct strace_ring *ring)
{
	memset(n, 0, sizeof(*n));
	n->ring = ring;
	n->last_tid = UINT64_MAX;
}

void fmt_names_fini(struct fmt_names *n)
{
	for (size_t i = 0; i < n->nowned; i++)
		free(n->owned[i]);
	free(n->owned);
	free(n->syms);
	free(n->dsos);
	free(n->threads);
	memset(n, 0, sizeof(*n));
}

static char *own(struct fmt_names *n, size_t size)
{
	char *s;

	if (n->nowned == n->owned_cap) {
		size_t cap = n->owned_cap ? 2 * n->owned_cap : 64;
		char **o = realloc(n->owned, cap * sizeof(*o));
		if (!o)
			return NULL;
		n->owned = o;
		n->owned_cap = cap;
	}
	s = malloc(size ? size : 1);
	if (s)
		n->owned[n->nowned++] = s;
	return s;
}

int fmt_name_make(struct fmt_names *n, const char *s, size_t len,
		  struct fmt_name *out)
{
	int cut = len > FMT_NAME_MAX;
	char *t, *j, *e;

	if (cut)
		len = FMT_NAME_MAX;
	if (!cut && !needs_json_escape(s, len)) {
		out->text = out->json = s;
		out->text_len = out->json_len = (uint32_t)len;
		return 0;
	}
	t = own(n, len + 3);
	j = own(n, 6 * len + 3);
	if (!t || !j)
		return -ENOMEM;
	e = put_text_str(t, s, len);
	if (cut) {
		memcpy(e, "...", 3);
		e += 3;
	}
	out->text = t;
	out->text_len = (uint32_t)(e - t);
	e = put_json_str(j, s, len);
	if (cut) {
		memcpy(e, "...", 3);
		e += 3;
	}
	out->json = j;
	out->json_len = (uint32_t)(e - j);
	return 0;
}

static int range_add(struct fmt_names *n, struct fmt_range **v, size_t *cnt,
		     size_t *cap, uint64_t start, uint64_t size,
		     const char *s, size_t len)
{
	struct fmt_range *r;

	if (*cnt == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		struct fmt_range *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	r = &(*v)[*cnt];
	r->start = start;
	r->end = start + size < start ? UINT64_MAX : start + size;
	if (fmt_name_make(n, s, len, &r->name) < 0)
		return -ENOMEM;
	(*cnt)++;
	return 0;
}

static size_t thread_slot(const struct fmt_names *n, uint64_t tid)
{
	size_t mask = n->threads_cap - 1;
	size_t i = (size_t)((tid * 0x9e3779b97f4a7c15ull) >> 32) & mask;

	while (n->threads[i].tid && n->threads[i].tid != tid)
		i = (i + 1) & mask;
	return i;
}

/* thread names: THREAD entries win over PROCESS entries for the same id */
static int thread_add(struct fmt_names *n, uint64_t tid, int is_thread,
		      const char *s, size_t len)
{
	struct fmt_thread *t;
	size_t i;

	if (tid == 0)
		return 0;
	if (2 * (n->nthreads + 1) > n->threads_cap) {
		size_t cap = n->threads_cap ? 2 * n->threads_cap : 64;
		struct fmt_thread *old = n->threads;
		size_t oldcap = n->threads_cap;
		n->threads = calloc(cap, sizeof(*n->threads));
		if (!n->threads) {
			n->threads = old;
			return -ENOMEM;
		}
		n->threads_cap = cap;
		for (size_t k = 0; k < oldcap; k++)
			if (old[k].tid)
				n->threads[thread_slot(n, old[k].tid)] = old[k];
		free(old);
	}
	i = thread_slot(n, tid);
	t = &n->threads[i];
	if (t->tid && !is_thread)
		return 0; /* keep the THREAD name */
	if (!t->tid)
		n->nthreads++;
	t->tid = tid;
	n->last_tid = UINT64_MAX;
	return fmt_name_make(n, s, len, &t->name);
}

static const char *base_name(const char *s, size_t *len)
{
	const char *slash = memrchr(s, '/', *len);

	if (slash && (size_t)(slash + 1 - s) < *len) {
		*len -= (size_t)(slash + 1 - s);
		return slash + 1;
	}
	return s;
}

int fmt_names_refresh(struct fmt_names *n)
{
	struct strace_string s;
	int count = 0, rc;

	if (!n->ring || n->corrupt)
		return 0;
	for (;;) {
		uint64_t off = n->next_off;
		rc = strace_ring_string_next(n->ring, &off, &s);
		if (rc == 0)
			break;
		if (rc < 0) {
			n->corrupt = 1;
			return rc;
		}
		n->next_off = off;
		count++;
		switch (s.kind) {
		case STRACE_EV_SYMBOL:
			rc = range_add(n, &n->syms, &n->nsyms, &n->syms_cap,
				       s.key, s.aux, s.str, s.len);
			n->syms_sorted = 0;
			break;
		case STRACE_EV_DSO: {
			size_t len = s.len;
			const char *b = base_name(s.str, &len);
			rc = range_add(n, &n->dsos, &n->ndsos, &n->dsos_cap,
				       s.key, s.aux, b, len);
			n->dsos_sorted = 0;
			break;
		}
		case STRACE_EV_THREAD:
		case STRACE_EV_PROCESS:
			rc = thread_add(n, s.key, s.kind == STRACE_EV_THREAD,
					s.str, s.len);
			break;
		default:
			rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	return count;
}

static int range_cmp(const void *x, const void *y)
{
	const struct fmt_range *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* larger first, so an exact-start lookup prefers the inner one */
	return a->end > b->end ? -1 : a->end < b->end;
}

static const struct fmt_range *range_find(struct fmt_range *v, size_t cnt,
					  int *sorted, size_t *cache,
					  uint64_t addr)
{
	size_t lo = 0, hi = cnt;
	const struct fmt_range *r;

	if (!cnt)
		return NULL;
	if (!*sorted) {
		qsort(v, cnt, sizeof(*v), range_cmp);
		*sorted = 1;
		*cache = 0;
	}
	r = &v[*cache];
	if (addr >= r->start && (addr < r->end || addr == r->start))
		return r;
	/* last range with start <= addr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	r = &v[lo - 1];
	if (addr < r->end || addr == r->start) {
		*cache = lo - 1;
		return r;
	}
	return NULL;
}

const struct fmt_range *fmt_names_symbol(struct fmt_names *n, uint64_t addr)
{
	return range_find(n->syms, n->nsyms, &n->syms_sorted, &n->last_sym,
			  addr);
}

const struct fmt_range *fmt_names_dso(struct fmt_names *n, uint64_t addr)
{
	size_t cache = 0;
	return range_find(n->dsos, n->ndsos, &n->dsos_sorted, &cache, addr);
}

const struct fmt_name *fmt_names_thread(struct fmt_names *n, uint64_t tid)
{
	const struct fmt_thread *t;

	if (tid == n->last_tid)
		return n->last_thread;
	if (!n->threads_cap)
		return NULL;
	t = &n->threads[thread_slot(n, tid)];
	n->last_tid = tid;
	n->last_thread = t->tid ? &t->name : NULL;
	return n->last_thread;
}

/* --- per-type prefixes --------------------------------------------------- */

#define PFX 48 /* fixed copy size of every prefix */
#define TYPE_W 11 /* text: type names padded to this width */

struct pfx {
	char s[PFX];
	uint8_t len;
};

struct tinfo {
	struct pfx text_type;  /* "call        " */
	struct pfx json_type;  /* ,"type":"call","tid": */
	struct pfx text_op[2]; /* " from=" */
	struct pfx json_op[2]; /* ,"from": */
	struct pfx json_sym[2]; /* ,"from_sym":" */
	uint8_t kind[2];
};

/* [STRACE_EV_MAX] is the entry of every value the table does not name. */
static struct tinfo tinfos[STRACE_EV_MAX + 1];

static void pfx_set(struct pfx *p, const char *a, const char *b,
		    const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	if (la + lb + lc >= PFX) /* cannot happen with the table's names */
		lb = lc = 0, la = la < PFX - 1 ? la : PFX - 1;
	memset(p->s, 0, PFX);
	memcpy(p->s, a, la);
	memcpy(p->s + la, b, lb);
	memcpy(p->s + la + lb, c, lc);
	p->len = (uint8_t)(la + lb + lc);
}

static void tinfo_set(struct tinfo *t, const char *name, const char *an,
		      unsigned ak, const char *bn, unsigned bk)
{
	const char *on[2] = {an, bn};
	unsigned ok[2] = {ak, bk};
	char pad[TYPE_W + 2];
	size_t l = strlen(name);

	memset(pad, ' ', sizeof(pad) - 1);
	pad[l < TYPE_W ? TYPE_W - l : 0] = '\0';
	pfx_set(&t->text_type, name, pad, "");
	pfx_set(&t->json_type, ",\"type\":\"", name, "\",\"tid\":");
	for (int i = 0; i < 2; i++) {
		t->kind[i] = (uint8_t)(on[i][0] ? ok[i] : STRACE_FK_NONE);
		pfx_set(&t->text_op[i], " ", on[i], "=");
		pfx_set(&t->json_op[i], ",\"", on[i], "\":");
		pfx_set(&t->json_sym[i], ",\"", on[i], "_sym\":\"");
	}
}

void fmt_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	for (unsigned v = 0; v <= STRACE_EV_MAX; v++) {
		const struct strace_event_info *in =
			v < STRACE_EV_MAX ? strace_event_info(v) : NULL;
		if (in)
			tinfo_set(&tinfos[v], in->name, in->a_name, in->a_kind,
				  in->b_name, in->b_kind);
		else
			tinfo_set(&tinfos[v], "unknown", "a", STRACE_FK_HEX,
				  "b", STRACE_FK_HEX);
	}
}

static inline char *put_pfx(char *p, const struct pfx *x)
{
	memcpy(p, x->s, PFX);
	return p + x->len;
}

void fmt_lost_event(struct strace_event *e, uint64_t count, uint64_t first)
{
	memset(e, 0, sizeof(*e));
	e->type = STRACE_EV_LOST;
	e->flags = STRACE_LOST_READER;
	e->a = count;
	e->b = first;
}

/* --- operands ------------------------------------------------------------ */

/* "name+0xoff" of addr, text or JSON form; NULL if no name is known */
static char *put_sym(const struct fmt *f, char *p, uint64_t addr, int json)
{
	const struct fmt_range *r;
	const struct fmt_name *nm;
	uint64_t off;
	int dso = 0;

	r = fmt_names_symbol(f->names, addr);
	if (!r) {
		r = fmt_names_dso(f->names, addr);
		if (!r)
			return NULL;
		dso = 1;
	}
	nm = &r->name;
	off = addr - r->start;
	if (dso)
		*p++ = '[';
	if (json) {
		memcpy(p, nm->json, nm->json_len);
		p += nm->json_len;
	} else {
		memcpy(p, nm->text, nm->text_len);
		p += nm->text_len;
	}
	if (dso)
		*p++ = ']';
	if (off) {
		*p++ = '+';
		p = put_hex(p, off);
	}
	return p;
}

static char *put_str_operand(const struct fmt *f, char *p, uint64_t off,
			     int json)
{
	struct strace_string s;
	size_t len;

	if (!f->names || !f->names->ring ||
	    strace_ring_string(f->names->ring, off, &s) < 0) {
		if (json) {
			memcpy(p, "null", 4);
			return p + 4;
		}
		memcpy(p, "<bad string offset ", 19);
		p = put_hex(p + 19, off);
		*p++ = '>';
		return p;
	}
	len = s.len > FMT_NAME_MAX ? FMT_NAME_MAX : s.len;
	*p++ = '"';
	p = json ? put_json_str(p, s.str, len) : put_text_str(p, s.str, len);
	if (len < s.len) {
		memcpy(p, "...", 3);
		p += 3;
	}
	*p++ = '"';
	return p;
}

static inline char *text_operand(const struct fmt *f, char *p,
				 const struct tinfo *t, int i, uint64_t v)
{
	switch (t->kind[i]) {
	case STRACE_FK_NONE:
		return p;
	case STRACE_FK_ADDR: {
		char *q;
		p = put_pfx(p, &t->text_op[i]);
		p = put_hex(p, v);
		if (!f->names)
			return p;
		p[0] = ' ';
		p[1] = '<';
		q = put_sym(f, p + 2, v, 0);
		if (!q)
			return p;
		*q++ = '>';
		return q;
	}
	case STRACE_FK_HEX:
		return put_hex(put_pfx(p, &t->text_op[i]), v);
	case STRACE_FK_DEC:
		return put_u64(put_pfx(p, &t->text_op[i]), v);
	case STRACE_FK_STR:
		return put_str_operand(f, put_pfx(p, &t->text_op[i]), v, 0);
	case STRACE_FK_REASON: {
		const char *r = strace_reason_name(v);
		size_t l = strlen(r);
		p = put_pfx(p, &t->text_op[i]);
		memcpy(p, r, l);
		return p + l;
	}
	case STRACE_FK_BLOCK:
		p = put_u64(put_pfx(p, &t->text_op[i]), v >> 32);
		memcpy(p, "insn/", 5);
		p = put_u64(p + 5, v & 0xffffffffu);
		*p++ = 'B';
		return p;
	}
	return put_hex(put_pfx(p, &t->text_op[i]), v);
}

static inline char *json_operand(const struct fmt *f, char *p,
				 const struct tinfo *t, int i, uint64_t v)
{
	switch (t->kind[i]) {
	case STRACE_FK_NONE:
		return p;
	case STRACE_FK_ADDR: {
		char *q, *s;
		p = put_u64(put_pfx(p, &t->json_op[i]), v);
		if (!f->names)
			return p;
		s = put_pfx(p, &t->json_sym[i]);
		q = put_sym(f, s, v, 1);
		if (!q)
			return p;
		*q++ = '"';
		return q;
	}
	case STRACE_FK_HEX:
	case STRACE_FK_DEC:
		return put_u64(put_pfx(p, &t->json_op[i]), v);
	case STRACE_FK_STR:
		return put_str_operand(f, put_pfx(p, &t->json_op[i]), v, 1);
	case STRACE_FK_REASON: {
		const char *r = strace_reason_name(v);
		size_t l = strlen(r);
		p = put_pfx(p, &t->json_op[i]);
		*p++ = '"';
		memcpy(p, r, l);
		p += l;
		*p++ = '"';
		return p;
	}
	case STRACE_FK_BLOCK:
		p = put_pfx(p, &t->json_op[i]);
		memcpy(p, "{\"insns\":", 9);
		p = put_u64(p + 9, v >> 32);
		memcpy(p, ",\"bytes\":", 9);
		p = put_u64(p + 9, v & 0xffffffffu);
		*p++ = '}';
		return p;
	}
	return put_u64(put_pfx(p, &t->json_op[i]), v);
}

static inline const struct tinfo *tinfo_of(unsigned type, int *unknown)
{
	const struct tinfo *t = &tinfos[type < STRACE_EV_MAX ? type
							     : STRACE_EV_MAX];
	*unknown = type >= STRACE_EV_MAX || !strace_event_info(type);
	return t;
}

/* --- lines --------------------------------------------------------------- */

char *fmt_text_event(const struct fmt *f, char *p,
		     const struct strace_event *e, uint64_t seq)
{
	int unknown;
	const struct tinfo *t = tinfo_of(e->type, &unknown);

	p = put_u64(p, seq);
	*p++ = ' ';
	p = put_time(p, e->time);
	*p++ = ' ';
	p = put_u64(p, e->tid);
	if (f->show_comm && f->names) {
		const struct fmt_name *nm = fmt_names_thread(f->names, e->tid);
		if (nm) {
			*p++ = '/';
			memcpy(p, nm->text, nm->text_len);
			p += nm->text_len;
		}
	}
	*p++ = ' ';
	if (__builtin_expect(unknown, 0)) {
		memcpy(p, "unknown#", 8);
		p = put_u64(p + 8, e->type);
	} else {
		p = put_pfx(p, &t->text_type); /* padded to TYPE_W */
	}
	p = text_operand(f, p, t, 0, e->a);
	p = text_operand(f, p, t, 1, e->b);
	if (e->flags) {
		memcpy(p, " flags=", 7);
		p = put_hex(p + 7, e->flags);
	}
	*p++ = '\n';
	return p;
}

char *fmt_json_event(const struct fmt *f, char *p,
		     const struct strace_event *e, uint64_t seq)
{
	int unknown;
	const struct tinfo *t = tinfo_of(e->type, &unknown);

	memcpy(p, "{\"seq\":", 7);
	p = put_u64(p + 7, seq);
	if (__builtin_expect(unknown, 0)) {
		memcpy(p, ",\"type\":\"unknown\",\"type_value\":", 31);
		p = put_u64(p + 31, e->type);
		memcpy(p, ",\"tid\":", 7);
		p += 7;
	} else {
		p = put_pfx(p, &t->json_type);
	}
	p = put_u64(p, e->tid);
	memcpy(p, ",\"time\":", 8);
	p = put_u64(p + 8, e->time);
	if (e->flags) {
		memcpy(p, ",\"flags\":", 9);
		p = put_u64(p + 9, e->flags);
	}
	p = json_operand(f, p, t, 0, e->a);
	p = json_operand(f, p, t, 1, e->b);
	if (f->show_comm && f->names) {
		const struct fmt_name *nm = fmt_names_thread(f->names, e->tid);
		if (nm) {
			memcpy(p, ",\"comm\":\"", 9);
			memcpy(p + 9, nm->json, nm->json_len);
			p += 9 + nm->json_len;
			*p++ = '"';
		}
	}
	*p++ = '}';
	*p++ = '\n';
	return p;
}
