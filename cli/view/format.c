/* SPDX-License-Identifier: MIT */
/*
 * cli/view/format.c - text and JSON-lines formatting.
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
#include "strace/error.h"
#include "strace/internal/grow.h"

/* --- numbers ------------------------------------------------------------ */

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

static inline __attribute__((always_inline)) unsigned ndigits(uint64_t v)
{
	/* log10 from the bit length: 1233/4096 ~ log10(2). */
	unsigned t = ((unsigned)(64 - __builtin_clzll(v | 1)) * 1233) >> 12;
	return t + ((v | 1) >= pow10[t]);
}

/*
 * The 8 digits of v < 10^8 as 8 characters in a register, first digit in
 * the low byte (memory order): built from two-digit table entries with
 * 32-bit arithmetic, stored with one 8-byte store.
 */
static inline __attribute__((always_inline)) uint64_t digits8(uint32_t v)
{
	/* SWAR: split into 4-digit halves, then 2-digit, then digits, all
	 * lanes at once with multiply-shift divisions (exact for these
	 * ranges), then add '0' to every byte */
	uint64_t merged = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t top = ((merged * 10486ull) >> 20) & 0x0000007f0000007full;
	uint64_t bot = merged - 100ull * top;
	uint64_t hundreds = (bot << 16) + top;
	uint64_t tens = ((hundreds * 103ull) >> 10) & 0x000f000f000f000full;
	tens += (hundreds - 10ull * tens) << 8;
	return tens | 0x3030303030303030ull;
}

/* exactly 8 digits of v < 10^8 */
static inline __attribute__((always_inline)) void put8(char *p, uint32_t v)
{
	uint64_t w = digits8(v);
	memcpy(p, &w, 8);
}

/* v < 10^8 with n digits (1 <= n <= 8); writes 8 bytes (slack) */
static inline __attribute__((always_inline)) char *put_small(char *p,
							    uint32_t v,
							    unsigned n)
{
	uint64_t w = digits8(v) >> (8 * (8 - n));
	memcpy(p, &w, 8);
	return p + n;
}

/*
 * Decimal in chunks of 8 digits so that the divisions are 32-bit ones
 * (multiply and shift) and big values (addresses in JSON) take three
 * steps instead of ten.
 */
static inline __attribute__((always_inline)) char *put_u64(char *p, uint64_t v)
{
	if (v < 100000000u)
		return put_small(p, (uint32_t)v, ndigits(v));
	if (v < 10000000000000000ull) {
		uint64_t hi = v / 100000000u;
		p = put_small(p, (uint32_t)hi, ndigits(hi));
		put8(p, (uint32_t)(v % 100000000u));
		return p + 8;
	}
	{
		uint64_t top = v / 10000000000000000ull;
		uint64_t rest = v % 10000000000000000ull;
		p = put_small(p, (uint32_t)top, ndigits(top));
		put8(p, (uint32_t)(rest / 100000000u));
		put8(p + 8, (uint32_t)(rest % 100000000u));
		return p + 16;
	}
}

/*
 * The 8 hex digits of x as 8 characters, most significant first in memory
 * (SWAR: spread the nibbles into bytes, turn them into ASCII in one add).
 */
static inline __attribute__((always_inline)) uint64_t hex8(uint32_t x)
{
	uint64_t v = x, mask;

	v = ((v & 0xffff0000ull) << 16) | (v & 0xffffull);
	v = ((v & 0x0000ff000000ff00ull) << 8) | (v & 0x000000ff000000ffull);
	v = ((v & 0x00f000f000f000f0ull) << 4) | (v & 0x000f000f000f000full);
	/* byte i holds nibble i; 0x01 in the bytes whose nibble is > 9 */
	mask = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
	v += 0x3030303030303030ull + mask * ('a' - '9' - 1);
	return __builtin_bswap64(v);
}

/* "0x" and the digits; writes up to 8 bytes past the end (slack) */
static inline __attribute__((always_inline)) char *put_hex(char *p, uint64_t v)
{
	unsigned n = ((unsigned)(64 - __builtin_clzll(v | 1)) + 3) / 4;
	uint64_t w;

	p[0] = '0';
	p[1] = 'x';
	p += 2;
	if (n <= 8) {
		w = hex8((uint32_t)v) >> (8 * (8 - n));
		memcpy(p, &w, 8);
	} else {
		w = hex8((uint32_t)(v >> 32)) >> (8 * (16 - n));
		memcpy(p, &w, 8);
		w = hex8((uint32_t)v);
		memcpy(p + n - 8, &w, 8);
	}
	return p + n;
}

static inline __attribute__((always_inline)) char *put_time(char *p, uint64_t ns)
{
	uint64_t s = ns / 1000000000u;
	uint32_t r = (uint32_t)(ns % 1000000000u);

	p = put_u64(p, s);
	p[0] = '.';
	/* nine digits: one, then eight */
	p[1] = (char)('0' + r / 100000000u);
	put8(p + 2, r % 100000000u);
	return p + 10;
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

/* --- display names ------------------------------------------------------- */

/* copy a name made by fmt_name_make() (padded, cli/view/fmt_names.c): 32 bytes
 * at a time */
static inline __attribute__((always_inline)) char *copy_name(char *p, const char *s, uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 32)
		memcpy(p + i, s + i, 32);
	return p + len;
}

/*
 * The display forms of entry e: its whole string, or (base) a DSO's
 * file name without the directories. NULL when out of memory.
 */
__attribute__((noinline)) const struct fmt_name *
fmt_display_make(struct fmt_names *dn, const struct strace_name *e, int base)
{
	uint8_t bit = base ? 2 : 1;
	struct fmt_name *v;
	const char *s = e->str;
	size_t len = e->len;

	/* three arrays, one cap, doubled until the id fits (made's new part
	 * zeroed): each grows from the same cap, which moves once all have */
	while (e->id >= dn->cap) {
		size_t fc = dn->cap, bc = dn->cap, mc = dn->cap;
		struct fmt_name *f =
			strace_grow(dn->full, &fc, sizeof(*f), 256);
		if (!f)
			return NULL;
		dn->full = f;
		struct fmt_name *b =
			strace_grow(dn->base, &bc, sizeof(*b), 256);
		if (!b)
			return NULL;
		dn->base = b;
		uint8_t *m = strace_grow(dn->made, &mc, 1, 256);
		if (!m)
			return NULL;
		memset(m + dn->cap, 0, mc - dn->cap);
		dn->made = m;
		dn->cap = mc;
	}
	v = base ? &dn->base[e->id] : &dn->full[e->id];
	if (dn->made[e->id] & bit)
		return v;
	if (base) {
		const char *slash = memrchr(s, '/', len);
		if (slash && (size_t)(slash + 1 - s) < len) {
			len -= (size_t)(slash + 1 - s);
			s = slash + 1;
		}
	}
	if (fmt_name_make(dn, s, len, v) < 0)
		return NULL;
	dn->made[e->id] |= bit;
	return v;
}

static inline __attribute__((always_inline)) const struct fmt_name *
display(struct fmt_names *dn, const struct strace_name *e, int base)
{
	if (__builtin_expect(e->id < dn->cap &&
				     (dn->made[e->id] & (base ? 2 : 1)),
			     1))
		return base ? &dn->base[e->id] : &dn->full[e->id];
	return fmt_display_make(dn, e, base);
}

/* --- per-type prefixes --------------------------------------------------- */

#define PFX 64      /* room of every prefix */
#define PFX_COPY 32 /* copy size: every prefix fits, checked below */

/* Every prefix built from the table fits in PFX_COPY bytes (+1: NUL). */
#define FMT_X_CHECK(ID, VAL, NAME, FAM, AN, AK, BN, BK, DESC)                \
	_Static_assert(sizeof(",\"type\":\"" NAME "\",\"tid\":") <=        \
			       PFX_COPY + 1 &&                                 \
		       sizeof(",\"" AN "_sym\":\"") <= PFX_COPY + 1 &&         \
		       sizeof(",\"" BN "_sym\":\"") <= PFX_COPY + 1 &&         \
		       sizeof(NAME) <= 12,                                     \
		       "event table names too long for cli/view/format.c: "    \
		       "raise PFX_COPY (and TYPE_W)");
STRACE_EVENT_TYPES(FMT_X_CHECK)
#undef FMT_X_CHECK
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
	uint8_t unknown;    /* a value the table does not name */
	uint8_t flags_kind; /* enum strace_flags_kind */
};

/* reason names, text and JSON (quoted); values above 15 are "unknown" */
#define NREASONS 16
static struct pfx reason_text[NREASONS], reason_json[NREASONS];

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
		tinfos[v].unknown = !in;
		tinfos[v].flags_kind = in ? in->flags_kind : STRACE_FLK_BITS;
	}
	for (unsigned r = 0; r < NREASONS; r++) {
		pfx_set(&reason_text[r], strace_reason_name(r), "", "");
		pfx_set(&reason_json[r], "\"", strace_reason_name(r), "\"");
	}
}

static inline __attribute__((always_inline)) char *put_pfx(char *p, const struct pfx *x)
{
	memcpy(p, x->s, PFX_COPY);
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

/* the symbol, else the DSO, covering addr; *dso set for a DSO */
static inline __attribute__((always_inline)) const struct strace_name *
name_of(struct fmt *f, uint64_t addr, int *dso)
{
	struct fmt_addr_cache *c = NULL;
	const struct strace_name *e;

	if (__builtin_expect(!f->acache, 0))
		f->acache = calloc(FMT_ACACHE, sizeof(*f->acache));
	if (__builtin_expect(f->acache != NULL, 1)) {
		c = &f->acache[(addr * 0x9e3779b97f4a7c15ull) >> 53];
		if (c->valid && c->addr == addr) {
			*dso = c->dso;
			return c->e;
		}
	}
	e = strace_names_symbol(f->names, addr);
	*dso = 0;
	if (!e) {
		e = strace_names_dso(f->names, addr);
		*dso = e != NULL;
	}
	if (c) {
		c->addr = addr;
		c->e = e;
		c->dso = *dso;
		c->valid = 1;
	}
	return e;
}

/* "name+0xoff" of addr, text or JSON form; NULL if no name is known */
static inline __attribute__((always_inline)) char *
put_sym(struct fmt *f, char *p, uint64_t addr, int json)
{
	const struct strace_name *e;
	const struct fmt_name *nm;
	uint64_t off;
	int dso;

	e = name_of(f, addr, &dso);
	if (!e || !(nm = display(&f->dn, e, dso)))
		return NULL;
	off = dso ? strace_names_dso_offset(f->names, e, addr) : addr - e->key;
	if (dso)
		*p++ = '[';
	if (json)
		p = copy_name(p, nm->json, nm->json_len);
	else
		p = copy_name(p, nm->text, nm->text_len);
	if (dso)
		*p++ = ']';
	if (off) {
		*p++ = '+';
		p = put_hex(p, off);
	}
	return p;
}

/* a STR operand: the entry's name, quoted; checked, never trusted */
static inline __attribute__((always_inline)) char *
put_str_operand(struct fmt *f, char *p, uint64_t off, int json)
{
	const struct strace_name *e =
		f->names ? strace_names_at(f->names, off) : NULL;
	const struct fmt_name *nm = e ? display(&f->dn, e, 0) : NULL;

	if (!nm) {
		if (json) {
			memcpy(p, "null", 4);
			return p + 4;
		}
		memcpy(p, "<bad string offset ", 19);
		p = put_hex(p + 19, off);
		*p++ = '>';
		return p;
	}
	*p++ = '"';
	p = json ? copy_name(p, nm->json, nm->json_len)
		 : copy_name(p, nm->text, nm->text_len);
	*p++ = '"';
	return p;
}

/*
 * Formatted-address cache: the text "0x401032 <main+0x2>", or the JSON
 * digits and name, of recently seen addresses (direct-mapped). Emptied
 * when the name tables grow.
 */
static inline __attribute__((always_inline)) struct fmt_acache *
acache_slot(struct fmt *f, uint64_t v)
{
	return &f->ac[((v * 0x9e3779b97f4a7c15ull) >> (64 - FMT_FCACHE_BITS)) &
		      f->ac_mask];
}

/* before formatting: a cache that matches the name tables */
static void acache_prepare(struct fmt *f)
{
	uint64_t gen;

	if (!f->names)
		return;
	gen = strace_names_generation(f->names);
	if (f->ac && f->ac_gen == gen)
		return;
	if (f->acache)
		memset(f->acache, 0, FMT_ACACHE * sizeof(*f->acache));
	if (!f->ac || f->ac == &f->ac_dummy) {
		f->ac = calloc(FMT_FCACHE + 1, sizeof(*f->ac));
		f->ac_mask = FMT_FCACHE - 1;
		if (!f->ac) { /* no memory: a one-entry cache */
			f->ac = &f->ac_dummy;
			f->ac_mask = 0;
		}
	}
	memset(f->ac, 0, (f->ac_mask + 1) * sizeof(*f->ac));
	f->ac_gen = gen;
}

static inline __attribute__((always_inline)) void
acache_fill(struct fmt_acache *c, uint64_t v, const char *s, size_t len,
	    size_t split, int kind)
{
	if (len > sizeof(c->s)) {
		c->valid = 0;
		return;
	}
	c->valid = (uint8_t)kind; /* 1 text, 2 JSON */
	c->addr = v;
	c->len = (uint8_t)len;
	c->split = (uint8_t)split;
	memcpy(c->s, s, len);
}

static inline __attribute__((always_inline)) char *text_operand(struct fmt *f, char *p,
				 const struct tinfo *t, int i, uint64_t v)
{
	unsigned k = t->kind[i];
	/* tests, not a switch: an indirect jump mispredicts as types vary */
	if (__builtin_expect(k == STRACE_FK_ADDR, 1)) {
		char *q, *start;
		struct fmt_acache *c;
		p = put_pfx(p, &t->text_op[i]);
		if (!f->names)
			return put_hex(p, v);
		c = acache_slot(f, v);
		if (c->valid == 1 && c->addr == v) {
			memcpy(p, c->s, sizeof(c->s));
			return p + c->len;
		}
		start = p;
		p = put_hex(p, v);
		p[0] = ' ';
		p[1] = '<';
		q = put_sym(f, p + 2, v, 0);
		if (q) {
			*q++ = '>';
			p = q;
		}
		acache_fill(c, v, start, (size_t)(p - start), 0, 1);
		return p;
	}
	if (k == STRACE_FK_NONE) {
		return p;
	}
	if (k == STRACE_FK_DEC) {
		return put_u64(put_pfx(p, &t->text_op[i]), v);
	}
	if (k == STRACE_FK_HEX) {
		return put_hex(put_pfx(p, &t->text_op[i]), v);
	}
	if (k == STRACE_FK_BLOCK) {
		p = put_u64(put_pfx(p, &t->text_op[i]), v >> 32);
		memcpy(p, "insn/", 5);
		p = put_u64(p + 5, v & 0xffffffffu);
		*p++ = 'B';
		return p;
	}
	if (k == STRACE_FK_REASON) {
		p = put_pfx(p, &t->text_op[i]);
		return put_pfx(p, &reason_text[v < NREASONS ? v : 0]);
	}
	if (k == STRACE_FK_STR) {
		return put_str_operand(f, put_pfx(p, &t->text_op[i]), v, 0);
	}
	return put_hex(put_pfx(p, &t->text_op[i]), v);
}

/* JSON addresses and hex values are strings ("0x401032"), as perf's JSON
 * export writes them: JSON numbers above 2^53 lose precision in jq and
 * JavaScript */
static inline __attribute__((always_inline)) char *put_json_hex(char *p,
								uint64_t v)
{
	*p++ = '"';
	p = put_hex(p, v);
	*p++ = '"';
	return p;
}

static inline __attribute__((always_inline)) char *json_operand(struct fmt *f, char *p,
				 const struct tinfo *t, int i, uint64_t v)
{
	unsigned k = t->kind[i];
	/* tests, not a switch: an indirect jump mispredicts as types vary */
	if (__builtin_expect(k == STRACE_FK_ADDR, 1)) {
		char *q, *s, *start;
		struct fmt_acache *c;
		p = put_pfx(p, &t->json_op[i]);
		if (!f->names)
			return put_json_hex(p, v);
		c = acache_slot(f, v);
		if (c->valid == 2 && c->addr == v) {
			/* the value, then the name after this operand's key */
			memcpy(p, c->s, sizeof(c->s));
			p += c->split;
			if (c->len == c->split)
				return p;
			p = put_pfx(p, &t->json_sym[i]);
			memcpy(p, c->s + c->split, sizeof(c->s));
			p += c->len - c->split;
			*p++ = '"';
			return p;
		}
		start = p;
		p = put_json_hex(p, v);
		s = put_pfx(p, &t->json_sym[i]);
		q = put_sym(f, s, v, 1);
		if (!q) {
			acache_fill(c, v, start, (size_t)(p - start),
				    (size_t)(p - start), 2);
			return p;
		}
		/* keep the value and the name side by side in the cache */
		if (c && (size_t)(p - start) + (size_t)(q - s) <= sizeof(c->s)) {
			c->valid = 2;
			c->addr = v;
			c->split = (uint8_t)(p - start);
			memcpy(c->s, start, c->split);
			memcpy(c->s + c->split, s, (size_t)(q - s));
			c->len = (uint8_t)(c->split + (q - s));
		} else {
			c->valid = 0;
		}
		*q++ = '"';
		return q;
	}
	if (k == STRACE_FK_NONE) {
		return p;
	}
	if (k == STRACE_FK_DEC) {
		return put_u64(put_pfx(p, &t->json_op[i]), v);
	}
	if (k == STRACE_FK_HEX) {
		return put_json_hex(put_pfx(p, &t->json_op[i]), v);
	}
	if (k == STRACE_FK_BLOCK) {
		p = put_pfx(p, &t->json_op[i]);
		memcpy(p, "{\"insns\":", 9);
		p = put_u64(p + 9, v >> 32);
		memcpy(p, ",\"bytes\":", 9);
		p = put_u64(p + 9, v & 0xffffffffu);
		*p++ = '}';
		return p;
	}
	if (k == STRACE_FK_REASON) {
		p = put_pfx(p, &t->json_op[i]);
		return put_pfx(p, &reason_json[v < NREASONS ? v : 0]);
	}
	if (k == STRACE_FK_STR) {
		return put_str_operand(f, put_pfx(p, &t->json_op[i]), v, 1);
	}
	return put_json_hex(put_pfx(p, &t->json_op[i]), v);
}

static inline __attribute__((always_inline)) const struct tinfo *tinfo_of(unsigned type, int *unknown)
{
	const struct tinfo *t = &tinfos[type < STRACE_EV_MAX ? type
							     : STRACE_EV_MAX];
	*unknown = t->unknown;
	return t;
}

/* --- error codes (the flags of error events) ----------------------------- */

/* " code=BAD_PACKET (0x106a): undecodable PT packet"; an unknown code
 * as " code=0x..." */
static __attribute__((noinline)) char *put_error_text(char *p, unsigned code)
{
	const char *name = strace_error_name((int)code);

	memcpy(p, " code=", 6);
	p += 6;
	if (!name)
		return put_hex(p, code);
	for (; *name; name++)
		*p++ = (char)(*name >= 'a' && *name <= 'z' ? *name - 32 : *name);
	memcpy(p, " (", 2);
	p = put_hex(p + 2, code);
	memcpy(p, "): ", 3);
	p += 3;
	for (const char *t = strace_strerror((int)code); *t; t++)
		*p++ = *t;
	return p;
}

/* ,"error":"bad_packet" (nothing for a code that has no name) */
static __attribute__((noinline)) char *put_error_json(char *p, unsigned code)
{
	const char *name = strace_error_name((int)code);

	if (!name)
		return p;
	memcpy(p, ",\"error\":\"", 10);
	p += 10;
	for (; *name; name++)
		*p++ = *name;
	*p++ = '"';
	return p;
}

/* --- lines --------------------------------------------------------------- */

void fmt_setup(struct fmt *f, struct strace_names *names, int show_comm)
{
	fmt_init();
	memset(f, 0, sizeof(*f));
	f->names = names;
	f->show_comm = show_comm;
}

void fmt_cleanup(struct fmt *f)
{
	if (f->ac != &f->ac_dummy)
		free(f->ac);
	f->ac = NULL;
	free(f->acache);
	f->acache = NULL;
	fmt_names_fini(&f->dn);
}

/*
 * The event number: usually the last one plus one, so it is counted up in
 * ASCII, in two 8-byte words (whole-word stores and loads only: a byte
 * store followed by a wider load of the same bytes would stall).
 */
static inline __attribute__((always_inline)) char *put_seq(struct fmt *f,
							  char *p,
							  uint64_t seq)
{
	if (f->seq_valid && seq == f->seq_last + 1) {
		unsigned k = f->seq_len - 1u;
		uint64_t *w = &f->seq_w[k >> 3];
		unsigned sh = 8 * (k & 7);
		if (((*w >> sh) & 0xff) != '9') {
			*w += 1ull << sh;
			f->seq_last = seq;
			memcpy(p, f->seq_w, 16);
			return p + f->seq_len;
		}
	}
	{
		char tmp[32];
		size_t n = (size_t)(put_u64(tmp, seq) - tmp);
		memcpy(p, tmp, 24);
		f->seq_valid = n <= 16;
		if (f->seq_valid) {
			memcpy(f->seq_w, tmp, 16);
			f->seq_len = (uint8_t)n;
			f->seq_last = seq;
		}
		return p + n;
	}
}

/* the display name of thread tid, or NULL */
static const struct fmt_name *thread_name(struct fmt *f, uint64_t tid)
{
	const struct strace_name *e;

	if (tid > UINT32_MAX)
		return NULL;
	e = strace_names_thread(f->names, (uint32_t)tid);
	return e ? display(&f->dn, e, 0) : NULL;
}

/*
 * The thread columns of e->tid: the text "tid/name" and the JSON tid
 * digits and ",\"comm\":\"name\"", kept for the last thread (events come
 * in runs of one thread). Returns 0 when they did not fit the cache.
 */
static int tid_fill(struct fmt *f, uint64_t tid)
{
	const struct fmt_name *nm = NULL;
	char *p;

	f->tid_valid = 0;
	if (f->show_comm && f->names)
		nm = thread_name(f, tid);
	if (nm && (nm->text_len > sizeof(f->tid_text) - 24 ||
		   nm->json_len > sizeof(f->comm_json) - 16))
		return 0;
	p = put_u64(f->tid_json, tid);
	f->tid_json_len = (uint8_t)(p - f->tid_json);
	memcpy(f->tid_text, f->tid_json, f->tid_json_len);
	p = f->tid_text + f->tid_json_len;
	f->comm_json_len = 0;
	if (nm) {
		*p++ = '/';
		memcpy(p, nm->text, nm->text_len);
		p += nm->text_len;
		memcpy(f->comm_json, ",\"comm\":\"", 9);
		memcpy(f->comm_json + 9, nm->json, nm->json_len);
		f->comm_json[9 + nm->json_len] = '"';
		f->comm_json_len = (uint8_t)(10 + nm->json_len);
	}
	*p++ = ' ';
	f->tid_text_len = (uint8_t)(p - f->tid_text);
	f->tid_last = tid;
	f->tid_gen = f->ac_gen;
	f->tid_valid = 1;
	return 1;
}

static inline __attribute__((always_inline)) int tid_ready(struct fmt *f,
							  uint64_t tid)
{
	if (f->tid_valid && tid == f->tid_last &&
	    f->tid_gen == f->ac_gen)
		return 1;
	return tid_fill(f, tid);
}

/*
 * JSON time in ns: the digits above the last 8 change every 0.1 s, so
 * they are kept; the last 8 are put each time (put8, no loop).
 */
static inline __attribute__((always_inline)) char *
put_time_ns(struct fmt *f, char *p, uint64_t ns)
{
	uint64_t hi = ns / 100000000u;

	if (hi == 0)
		return put_small(p, (uint32_t)ns, ndigits(ns));
	if (!f->nsh_valid || hi != f->nsh_last) {
		char tmp[32];
		f->nsh_len = (uint8_t)(put_u64(tmp, hi) - tmp);
		memcpy(f->nsh_buf, tmp, sizeof(f->nsh_buf));
		f->nsh_last = hi;
		f->nsh_valid = 1;
	}
	memcpy(p, f->nsh_buf, sizeof(f->nsh_buf));
	p += f->nsh_len;
	put8(p, (uint32_t)(ns - hi * 100000000u));
	return p + 8;
}

/* text time "S.NNNNNNNNN": the seconds part is usually the last one */
static inline __attribute__((always_inline)) char *
put_time_cached(struct fmt *f, char *p, uint64_t ns)
{
	uint64_t s = ns / 1000000000u;
	uint32_t r = (uint32_t)(ns - s * 1000000000u);

	if (!f->sec_valid || s != f->sec_last) {
		char *e = put_u64(f->sec_buf, s);
		*e++ = '.';
		f->sec_len = (uint8_t)(e - f->sec_buf);
		f->sec_last = s;
		f->sec_valid = 1;
	}
	memcpy(p, f->sec_buf, sizeof(f->sec_buf));
	p += f->sec_len;
	p[0] = (char)('0' + r / 100000000u);
	put8(p + 1, r % 100000000u);
	return p + 9;
}

/* A symbol event's other names, where the producer wrote them
 * (strace_names_aliases()): " aliases=_IO_puts,puts@@GLIBC_2.2.5" (text)
 * or ,"aliases":["_IO_puts","puts@@GLIBC_2.2.5"] (JSON); as many as fit
 * in FMT_NAME_MAX bytes, then "...". */
static __attribute__((noinline)) char *put_aliases(struct fmt *f, char *p,
						   uint64_t off, int json)
{
	const struct strace_name *sym, *al[STRACE_ALIASES_MAX];
	size_t n, bytes = 0;

	if (!f->names || !(sym = strace_names_at(f->names, off)) ||
	    !(n = strace_names_aliases(f->names, sym, al,
				       STRACE_ALIASES_MAX)))
		return p;
	memcpy(p, json ? ",\"aliases\":[" : " aliases=", json ? 12 : 9);
	p += json ? 12 : 9;
	for (size_t i = 0; i < n && i < STRACE_ALIASES_MAX; i++) {
		const struct fmt_name *nm = display(&f->dn, al[i], 0);
		if (!nm)
			break;
		if (i)
			*p++ = ',';
		bytes += al[i]->len;
		if (bytes > FMT_NAME_MAX) {
			memcpy(p, json ? "\"...\"" : "...", json ? 5 : 3);
			p += json ? 5 : 3;
			break;
		}
		if (json) {
			*p++ = '"';
			p = copy_name(p, nm->json, nm->json_len);
			*p++ = '"';
		} else {
			p = copy_name(p, nm->text, nm->text_len);
		}
	}
	if (json)
		*p++ = ']';
	return p;
}

/* A syscall event's system call, where the producer named its site:
 * " syscall=write" (text) or ,"syscall":"write" (JSON). */
static __attribute__((noinline)) char *put_syscall(struct fmt *f, char *p,
						   uint64_t site, int json)
{
	const struct strace_name *e;
	const struct fmt_name *nm;

	if (!f->names || !(e = strace_names_syscall(f->names, site)) ||
	    !(nm = display(&f->dn, e, 0)))
		return p;
	if (json) {
		memcpy(p, ",\"syscall\":\"", 12);
		p = copy_name(p + 12, nm->json, nm->json_len);
		*p++ = '"';
	} else {
		memcpy(p, " syscall=", 9);
		p = copy_name(p + 9, nm->text, nm->text_len);
	}
	return p;
}

static inline __attribute__((always_inline)) char *
text_line(struct fmt *f, char *p, const struct strace_event *e, uint64_t seq)
{
	int unknown;
	const struct tinfo *t = tinfo_of(e->type, &unknown);

	p = put_seq(f, p, seq);
	*p++ = ' ';
	p = put_time_cached(f, p, e->time);
	*p++ = ' ';
	if (__builtin_expect(tid_ready(f, e->tid), 1)) {
		memcpy(p, f->tid_text, sizeof(f->tid_text));
		p += f->tid_text_len;
	} else {
		/* a thread name too long for the cache */
		p = put_u64(p, e->tid);
		if (f->show_comm && f->names) {
			const struct fmt_name *nm =
				thread_name(f, e->tid);
			if (nm) {
				*p++ = '/';
				p = copy_name(p, nm->text, nm->text_len);
			}
		}
		*p++ = ' ';
	}
	if (__builtin_expect(unknown, 0)) {
		memcpy(p, "unknown#", 8);
		p = put_u64(p + 8, e->type);
	} else {
		p = put_pfx(p, &t->text_type); /* padded to TYPE_W */
	}
	p = text_operand(f, p, t, 0, e->a);
	p = text_operand(f, p, t, 1, e->b);
	if (__builtin_expect(e->type == STRACE_EV_SYSCALL, 0))
		p = put_syscall(f, p, e->a, 0);
	else if (__builtin_expect(e->type == STRACE_EV_SYMBOL, 0))
		p = put_aliases(f, p, e->b, 0);
	if (e->flags) {
		if (__builtin_expect(t->flags_kind == STRACE_FLK_ERROR, 0)) {
			p = put_error_text(p, e->flags);
		} else {
			memcpy(p, " flags=", 7);
			p = put_hex(p + 7, e->flags);
		}
	}
	*p++ = '\n';
	return p;
}

static inline __attribute__((always_inline)) char *
json_line(struct fmt *f, char *p, const struct strace_event *e, uint64_t seq)
{
	int unknown;
	const struct tinfo *t = tinfo_of(e->type, &unknown);

	memcpy(p, "{\"seq\":", 7);
	p = put_seq(f, p + 7, seq);
	if (__builtin_expect(unknown, 0)) {
		memcpy(p, ",\"type\":\"unknown\",\"type_value\":", 31);
		p = put_u64(p + 31, e->type);
		memcpy(p, ",\"tid\":", 7);
		p += 7;
	} else {
		p = put_pfx(p, &t->json_type);
	}
	if (__builtin_expect(tid_ready(f, e->tid), 1)) {
		memcpy(p, f->tid_json, sizeof(f->tid_json));
		p += f->tid_json_len;
	} else {
		p = put_u64(p, e->tid);
	}
	memcpy(p, ",\"time\":", 8);
	p = put_time_ns(f, p + 8, e->time);
	if (e->flags) {
		memcpy(p, ",\"flags\":", 9);
		p = put_u64(p + 9, e->flags);
		if (__builtin_expect(t->flags_kind == STRACE_FLK_ERROR, 0))
			p = put_error_json(p, e->flags);
	}
	p = json_operand(f, p, t, 0, e->a);
	p = json_operand(f, p, t, 1, e->b);
	if (__builtin_expect(e->type == STRACE_EV_SYSCALL, 0))
		p = put_syscall(f, p, e->a, 1);
	else if (__builtin_expect(e->type == STRACE_EV_SYMBOL, 0))
		p = put_aliases(f, p, e->b, 1);
	if (__builtin_expect(f->tid_valid && f->tid_last == e->tid, 1)) {
		memcpy(p, f->comm_json, sizeof(f->comm_json));
		p += f->comm_json_len;
	} else if (f->show_comm && f->names) {
		const struct fmt_name *nm = thread_name(f, e->tid);
		if (nm) {
			memcpy(p, ",\"comm\":\"", 9);
			p = copy_name(p + 9, nm->json, nm->json_len);
			*p++ = '"';
		}
	}
	*p++ = '}';
	*p++ = '\n';
	return p;
}

char *fmt_text_event(struct fmt *f, char *p, const struct strace_event *e,
		     uint64_t seq)
{
	acache_prepare(f);
	return text_line(f, p, e, seq);
}

char *fmt_json_event(struct fmt *f, char *p, const struct strace_event *e,
		     uint64_t seq)
{
	acache_prepare(f);
	return json_line(f, p, e, seq);
}

/*
 * The batch loops: one call per batch keeps the formatter's state in
 * registers and lets the compiler inline everything into the loop.
 */
#define FMT_BATCH(NAME, LINE)                                                  \
	char *NAME(struct fmt *f, char *p, const char *limit,                  \
		   const struct strace_event *ev, size_t n, uint64_t seq,      \
		   const struct fmt_filter *flt, size_t *done)                 \
	{                                                                      \
		size_t i;                                                      \
		acache_prepare(f);                                             \
		for (i = 0; i < n && p <= limit; i++) {                        \
			/* ring pages are cold: fetch 2 KiB ahead */           \
			__builtin_prefetch(&ev[i + 64]);                       \
			if (flt && !fmt_wanted(flt, ev[i].type))               \
				continue;                                      \
			p = LINE(f, p, &ev[i], seq + i);                       \
		}                                                              \
		*done = i;                                                     \
		return p;                                                      \
	}
FMT_BATCH(fmt_text_batch, text_line)
FMT_BATCH(fmt_json_batch, json_line)
