/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_names.c - the names as the formats show them: JSON and text
 * escaping, and the display forms of a name (fmt_name_make()), made once
 * and kept padded so that format.c's hot path copies them in fixed steps.
 */
#include <errno.h>
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
