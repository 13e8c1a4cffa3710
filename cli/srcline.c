/* SPDX-License-Identifier: MIT */
/*
 * cli/srcline.c - the source line of a traced address (srcline.h).
 */
#include <stdlib.h>
#include <string.h>

#include "decoder/decoder.h"
#include "srcline.h"

struct srclines {
	struct strace_dwarf *dw;
	/* the last DSO's path, NUL-terminated (the ring's names are not):
	 * consecutive events are mostly in one */
	char *path;
	size_t len, cap;
};

struct srclines *srclines_new(void)
{
	struct srclines *s = calloc(1, sizeof(*s));

	if (s && strace_dwarf_new(NULL, &s->dw)) {
		free(s);
		return NULL;
	}
	return s;
}

void srclines_free(struct srclines *s)
{
	if (!s)
		return;
	strace_dwarf_free(s->dw);
	free(s->path);
	free(s);
}

int srclines_get(struct srclines *s, struct strace_names *names,
		 uint64_t addr, const char **file, unsigned *line)
{
	const struct strace_name *dso;
	struct strace_srcline sl;
	uint64_t off, base;

	if (!s || !names || !(dso = strace_names_dso(names, addr)) ||
	    !dso->len)
		return 0;
	if (dso->len != s->len || memcmp(dso->str, s->path, dso->len)) {
		if (dso->len + 1 > s->cap) {
			char *v = realloc(s->path, dso->len + 1);
			if (!v)
				return 0;
			s->path = v;
			s->cap = dso->len + 1;
		}
		memcpy(s->path, dso->str, dso->len);
		s->path[dso->len] = 0;
		s->len = dso->len;
	}
	/* the object's own address: from the base the producer wrote for
	 * the DSO, else from where its code segment is */
	off = strace_names_dso_offset(names, dso, addr);
	if (off == addr - dso->key && strace_dwarf_text_base(s->dw, s->path,
							     &base) == 1)
		off += base;
	if (strace_dwarf_srcline(s->dw, s->path, off, &sl) != 1)
		return 0;
	*file = sl.file;
	*line = sl.line;
	return 1;
}
