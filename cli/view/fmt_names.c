/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_names.c - the names as the formats show them: JSON and text
 * escaping, and the display forms of a name (fmt_name_make()), made once
 * and kept padded so that format.c's hot path copies them in fixed steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/internal/grow.h"
#include "format.h"

static const char hexdig[] = "0123456789abcdef";

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

char *fmt_put_json_str(char *p, const char *s, size_t len)
{
	return put_json_str(p, s, len);
}

/* --- the one rule for names on a terminal or in a line format ---------- */

/*
 * The length of the character at s (at most n bytes) that a terminal
 * shows as a character, or 0: not a C0 control (0x00-0x1f: a newline
 * splits a line, ESC starts a sequence that moves the cursor), DEL, a
 * C1 control (U+0080-U+009F: U+009B is a CSI of its own to some
 * terminals), a noncharacter U+FFFE/U+FFFF (XML refuses them), nor a byte
 * of invalid UTF-8 (a terminal in another charset reads 0x9b as CSI).
 */
static size_t shown_len(const unsigned char *s, size_t n)
{
	size_t len;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	len = utf8_len(s, n);
	if ((len == 2 && s[0] == 0xc2 && s[1] < 0xa0) ||
	    (len == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe))
		return 0;
	return len;
}

/* Whether the 8 bytes of x are all printable ASCII (0x20-0x7e): a byte
 * below 0x20 sets its top bit in x - 0x20.., 0x7f in x + 0x01.., one
 * from 0x80 in x (a borrow or carry out of a byte comes only from a byte
 * that is flagged itself) */
static inline int ascii8(uint64_t x)
{
	return !(((x - 0x2020202020202020ull) | (x + 0x0101010101010101ull) |
		  x) &
		 0x8080808080808080ull);
}

char *view_put_clean(char *p, const char *str, size_t len, uint32_t *chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;
	uint32_t c = 0;
	uint64_t x;

	for (;;) {
		/* most names are ASCII: 8 bytes a step */
		while (i + 8 <= len && (memcpy(&x, s + i, 8), ascii8(x))) {
			memcpy(p, &x, 8);
			p += 8, i += 8, c += 8;
		}
		if (i == len)
			break;
		if (s[i] >= 0x20 && s[i] < 0x7f) {
			*p++ = (char)s[i++];
		} else if (!(l = shown_len(s + i, len - i))) {
			*p++ = '?';
			i++;
		} else {
			memcpy(p, s + i, l);
			p += l, i += l;
		}
		c++;
	}
	if (chars)
		*chars = c;
	return p;
}

int view_is_clean(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	uint64_t x;

	for (size_t i = 0, l; i < len; i += l) {
		if (i + 8 <= len && (memcpy(&x, s + i, 8), ascii8(x))) {
			l = 8;
			continue;
		}
		if (!(l = shown_len(s + i, len - i)))
			return 0;
	}
	return 1;
}

void view_fputs_clean(const char *s, FILE *f)
{
	char buf[1024];

	for (size_t n = strlen(s), k; n; n -= k, s += k) {
		/* a chunk ends before a character, not inside it (which
		 * would show a good character as '?') */
		k = n < sizeof(buf) ? n : sizeof(buf);
		for (int j = 0; j < 3 && k < n &&
				((unsigned char)s[k] & 0xc0) == 0x80;
		     j++)
			k--;
		fwrite(buf, 1, (size_t)(view_put_clean(buf, s, k, NULL) - buf),
		       f);
	}
}

/* Text form: the one rule above; the same length as the name. */
static char *put_text_str(char *p, const char *str, size_t len)
{
	return view_put_clean(p, str, len, NULL);
}

static int needs_json_escape(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return 1;
	return 0;
}

/* --- display names: their storage ---------------------------------------- */

void fmt_names_fini(struct fmt_names *dn)
{
	for (size_t i = 0; i < dn->nowned; i++)
		free(dn->owned[i]);
	free(dn->owned);
	free(dn->full);
	free(dn->base);
	free(dn->made);
	memset(dn, 0, sizeof(*dn));
}

static char *own(struct fmt_names *dn, size_t size)
{
	char *s;

	if (dn->nowned == dn->owned_cap) {
		char **o = strace_grow(dn->owned, &dn->owned_cap, sizeof(*o),
				       64);
		if (!o)
			return NULL;
		dn->owned = o;
	}
	s = malloc(size ? size : 1);
	if (s)
		dn->owned[dn->nowned++] = s;
	return s;
}

/*
 * Names are always copied, into storage padded to NAME_PAD bytes past the
 * end, so the hot path copies them in fixed 32-byte steps (copy_name).
 */
#define NAME_PAD 32

int fmt_name_make(struct fmt_names *dn, const char *s, size_t len,
		  struct fmt_name *out)
{
	int cut = len > FMT_NAME_MAX;
	int esc;
	char *t, *j, *e;

	if (cut)
		len = FMT_NAME_MAX;
	esc = cut || needs_json_escape(s, len);
	t = own(dn, len + 3 + NAME_PAD);
	if (!t)
		return -ENOMEM;
	e = put_text_str(t, s, len);
	if (cut) {
		memcpy(e, "...", 3);
		e += 3;
	}
	memset(e, 0, NAME_PAD);
	out->text = t;
	out->text_len = (uint32_t)(e - t);
	if (!esc) {
		out->json = t;
		out->json_len = out->text_len;
		return 0;
	}
	j = own(dn, 6 * len + 3 + NAME_PAD);
	if (!j)
		return -ENOMEM;
	e = put_json_str(j, s, len);
	if (cut) {
		memcpy(e, "...", 3);
		e += 3;
	}
	memset(e, 0, NAME_PAD);
	out->json = j;
	out->json_len = (uint32_t)(e - j);
	return 0;
}
