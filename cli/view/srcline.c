/* SPDX-License-Identifier: MIT */
/*
 * cli/view/srcline.c - the source line of a traced address (view.h,
 * "Source lines"), from the decoder's DWARF layer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/decoder.h"
#include "format.h"
#include "view.h"

_Static_assert(SRCLINE_APPEND_MAX <= FMT_SRCLINE_ROOM,
	       "--srcline's addition fits the room each line has");

struct srclines {
	struct strace_dwarf *dw;
	/* the last DSO's path, NUL-terminated (the ring's names are not):
	 * consecutive events are mostly in one */
	char *path;
	size_t len, cap;
};

struct srclines *srclines_new(const char *cache_dir)
{
	struct srclines *s = calloc(1, sizeof(*s));
	struct strace_dwarf_opts o = {.size = sizeof(o),
				      .cache_dir = cache_dir};

	if (s && strace_dwarf_new(&o, &s->dw)) {
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

/* The object of addr (s->path) and addr's address in it. */
static int resolve(struct srclines *s, struct strace_names *names,
		   uint64_t addr, uint64_t *off)
{
	const struct strace_name *dso;
	uint64_t base;

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
	*off = strace_names_dso_offset(names, dso, addr);
	if (*off == addr - dso->key &&
	    strace_dwarf_text_base(s->dw, s->path, &base) == 1)
		*off += base;
	return 1;
}

int srclines_object(struct srclines *s, struct strace_names *names,
		    uint64_t addr, const char **path, uint64_t *off)
{
	if (!resolve(s, names, addr, off))
		return 0;
	*path = s->path;
	return 1;
}

struct strace_dwarf *srclines_dwarf(const struct srclines *s)
{
	return s->dw;
}

/* addr's object and its address there, then query's answer there. */
static int ask(struct srclines *s, struct strace_names *names, uint64_t addr,
	       int (*query)(struct strace_dwarf *, const char *, uint64_t,
			    struct strace_srcline *),
	       const char **file, unsigned *line)
{
	struct strace_srcline sl;
	uint64_t off;

	if (!resolve(s, names, addr, &off) ||
	    query(s->dw, s->path, off, &sl) != 1)
		return 0;
	*file = sl.file;
	*line = sl.line;
	return 1;
}

int srclines_get(struct srclines *s, struct strace_names *names,
		 uint64_t addr, const char **file, unsigned *line)
{
	return ask(s, names, addr, strace_dwarf_srcline, file, line);
}

int srclines_function(struct srclines *s, struct strace_names *names,
		      uint64_t addr, const char **file, unsigned *line)
{
	return ask(s, names, addr, strace_dwarf_function_line, file, line);
}

char *srclines_append(struct srclines *s, struct strace_names *names,
		      char *start, char *end, const struct strace_event *e,
		      int json)
{
	const struct strace_event_info *in = strace_event_info(e->type);
	/* the added keys go before the line's end: '\n', or '}' '\n' */
	char *p = end - 1 - (json && end - start >= 2 && end[-2] == '}');
	char *tail = p;
	char keep = json && tail < end - 1 ? '}' : 0;

	if (!in || end <= start)
		return end;
	for (int k = 0; k < 2; k++) {
		const char *name = k ? in->b_name : in->a_name;
		uint64_t v = k ? e->b : e->a;
		const char *file;
		unsigned line;
		size_t n;

		if ((k ? in->b_kind : in->a_kind) != STRACE_FK_ADDR || !v ||
		    !srclines_get(s, names, v, &file, &line))
			continue;
		n = strlen(file);
		if (n > SRCLINE_FILE_MAX)
			n = SRCLINE_FILE_MAX;
		if (json) {
			p += sprintf(p, ",\"%s_srcline\":\"", name);
			p = fmt_put_json_str(p, file, n);
			p += sprintf(p, ":%u\"", line);
		} else {
			p += sprintf(p, " %s_srcline=", name);
			for (size_t i = 0; i < n; i++)
				*p++ = (unsigned char)file[i] <= 0x20 ||
						       file[i] == 0x7f
					       ? '?'
					       : file[i];
			p += sprintf(p, ":%u", line);
		}
	}
	if (keep)
		*p++ = keep;
	*p++ = '\n';
	return p;
}
