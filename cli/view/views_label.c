/* SPDX-License-Identifier: MIT */
/*
 * cli/view/views_label.c - the labels of frames as every view shows them: a
 * function's name, "[syscall NAME]", "[signal]", or "[DSO]+0xOFF" for
 * code without a symbol (cached per address).
 */
#include <string.h>

#include "views_int.h"

/* s[0..len) at p, by the one rule where the view shows names so */
static char *put_str(struct view *v, char *p, const char *s, size_t len)
{
	if (!v->clean) {
		memcpy(p, s, len);
		return p + len;
	}
	return view_put_clean(p, s, len, NULL);
}

/* A function's name by its names id (the per-line path), where the
 * view shows names by the one rule: its text form made once (cleaned,
 * padded), copied in 32-byte steps as format.c copies it */
static inline char *put_fn_clean(struct view *v, char *p, uint64_t id)
{
	const struct fmt_names *dn = &v->dn;
	const struct fmt_name *d;
	const struct strace_name *fn;

	if (__builtin_expect(!(id < dn->cap && (dn->made[id] & 1)), 0)) {
		fn = strace_names_get(v->names, (uint32_t)id);
		if (fn->len > FMT_NAME_MAX || /* cut: no "..." here */
		    !(d = fmt_display_make(&v->dn, fn, 0)))
			return put_str(v, p, fn->str,
				       fn->len < FMT_NAME_MAX ? fn->len
							      : FMT_NAME_MAX);
	} else {
		d = &dn->full[id];
	}
	for (uint32_t i = 0; i < d->text_len; i += 32)
		memcpy(p + i, d->text + i, 32);
	return p + d->text_len;
}

/* The name of a frame, or of a label id, into p (no more than 256 bytes
 * plus the name). */
/* An inlined function's name (--inline), marked as each format's judge
 * marks it: perf report's "foo (inlined)" in the tree and the report,
 * stackcollapse-perf.pl --inline's "foo_[i]" in folded stacks (and the
 * flame graph made of them), the name alone where the format has a place
 * of its own for the mark (chrome, fxt) or none (uftrace). */
static char *put_inlined(struct view *v, char *p, uint64_t id)
{
	const struct strace_name *fn =
		strace_stack_inline_name(v->stack, (uint32_t)id);
	size_t len;

	if (!fn) {
		memcpy(p, "[inlined]", 9);
		return p + 9;
	}
	len = fn->len < FMT_NAME_MAX ? fn->len : FMT_NAME_MAX;
	p = put_str(v, p, fn->str, len);
	if (v->o.kind == VIEW_TREE || v->o.kind == VIEW_REPORT) {
		memcpy(p, " (inlined)", 10);
		p += 10;
	} else if (v->o.kind == VIEW_FOLDED ||
		   (v->o.kind == VIEW_SVG && v->o.flame != VIEW_FLAME_TIME)) {
		memcpy(p, "_[i]", 4);
		p += 4;
	}
	return p;
}

char *view_put_name_id(struct view *v, char *p, uint64_t id)
{
	const struct strace_name *fn, *dso;
	uint64_t addr;
	size_t len;

	if (IS_SYSCALL_ID(id)) {
		if (id == ID_SYSCALL) {
			memcpy(p, "[syscall]", 9);
			return p + 9;
		}
		fn = strace_names_get(v->names, (uint32_t)(id - ID_SYSCALL) - 1);
		len = fn->len < 64 ? fn->len : 64;
		memcpy(p, "[syscall ", 9);
		p = put_str(v, p + 9, fn->str, len);
		*p = ']';
		return p + 1;
	}
	if (id == ID_SIGNAL) {
		memcpy(p, "[signal]", 8);
		return p + 8;
	}
	if (!(id & ID_UNKNOWN)) {
		if (__builtin_expect(id >= ID_INLINED, 0))
			return put_inlined(v, p, id);
		if (v->clean)
			return put_fn_clean(v, p, id);
		fn = strace_names_get(v->names, (uint32_t)id);
		len = fn->len < FMT_NAME_MAX ? fn->len : FMT_NAME_MAX;
		memcpy(p, fn->str, len);
		return p + len;
	}
	addr = id & ~ID_UNKNOWN;
	/* names only grow: a label made once stays right */
	size_t slot = (size_t)(addr * 0x9e3779b97f4a7c15ull >> 56);
	if (v->lcache[slot].id == id && v->lcache[slot].len) {
		memcpy(p, v->lcache[slot].s, v->lcache[slot].len);
		return p + v->lcache[slot].len;
	}
	char *start = p;
	dso = v->names ? strace_names_dso(v->names, addr) : NULL;
	if (dso) {
		const char *b = strrchr(dso->str, '/');
		b = b ? b + 1 : dso->str;
		len = strlen(b) < FMT_NAME_MAX ? strlen(b) : FMT_NAME_MAX;
		*p++ = '[';
		p = put_str(v, p, b, len);
		*p++ = ']';
		*p++ = '+';
		p = fmt_put_hex(p, strace_names_dso_offset(v->names, dso, addr));
	} else {
		p = fmt_put_hex(p, addr);
	}
	if (p - start <= (long)sizeof(v->lcache[slot].s)) {
		v->lcache[slot].id = id;
		v->lcache[slot].len = (uint8_t)(p - start);
		memcpy(v->lcache[slot].s, start, (size_t)(p - start));
	}
	return p;
}
