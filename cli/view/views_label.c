/* SPDX-License-Identifier: MIT */
/*
 * cli/view/views_label.c - the labels of frames as every view shows them: a
 * function's name, "[syscall NAME]", "[signal]", or "[DSO]+0xOFF" for
 * code without a symbol (cached per address).
 */
#include <string.h>

#include "views_int.h"

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
	memcpy(p, fn->str, len);
	p += len;
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
		memcpy(p + 9, fn->str, len);
		p[9 + len] = ']';
		return p + 10 + len;
	}
	if (id == ID_SIGNAL) {
		memcpy(p, "[signal]", 8);
		return p + 8;
	}
	if (!(id & ID_UNKNOWN)) {
		if (__builtin_expect(id >= ID_INLINED, 0))
			return put_inlined(v, p, id);
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
		memcpy(p, b, len);
		p += len;
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
