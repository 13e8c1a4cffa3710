/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fields.c - ptrace-read -F/--fields (fields.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "view.h"

static const char *const field_name[FLD_COUNT] = {
	[FLD_SEQ] = "seq",   [FLD_TIME] = "time",     [FLD_TID] = "tid",
	[FLD_PID] = "pid",   [FLD_COMM] = "comm",     [FLD_TYPE] = "type",
	[FLD_FROM] = "from", [FLD_TO] = "to",         [FLD_SYM] = "sym",
	[FLD_OFFSET] = "offset", [FLD_DSO] = "dso",   [FLD_FLAGS] = "flags",
	[FLD_CPU] = "cpu",	 [FLD_SRCLINE] = "srcline",
};

/* what an address shows besides itself */
#define ADDR_PARTS                                                             \
	(1u << FLD_SYM | 1u << FLD_OFFSET | 1u << FLD_DSO | 1u << FLD_SRCLINE)

int fields_parse(struct fields *fl, const char *spec, char *err, size_t len)
{
	const char *s = spec;

	memset(fl, 0, sizeof(*fl));
	while (*s) {
		size_t n = strcspn(s, ",");
		unsigned i;
		for (i = 0; i < FLD_COUNT; i++)
			if (strlen(field_name[i]) == n &&
			    !strncmp(s, field_name[i], n))
				break;
		if (i == FLD_COUNT) {
			snprintf(err, len,
				 "'%.*s' is no field: seq, time, tid, pid, "
				 "comm, cpu, type, from, to, sym, offset, dso, "
				 "flags, srcline",
				 (int)n, s);
			return -1;
		}
		if (fl->mask & 1u << i) {
			snprintf(err, len, "'%s' is given twice", field_name[i]);
			return -1;
		}
		fl->mask |= 1u << i;
		/* sym, offset and dso belong to from and to */
		if (!(ADDR_PARTS & 1u << i))
			fl->order[fl->n++] = (uint8_t)i;
		s += n;
		if (*s == ',' && *++s == '\0')
			break;
	}
	if (!fl->n && !fl->mask) {
		snprintf(err, len, "no field given: e.g. -F time,tid,from,to,sym");
		return -1;
	}
	if ((fl->mask & ADDR_PARTS) &&
	    !(fl->mask & (1u << FLD_FROM | 1u << FLD_TO))) {
		snprintf(err, len,
			 "sym, offset, dso and srcline show the symbol, DSO "
			 "and source line of from and to: give from or to too");
		return -1;
	}
	if ((fl->mask & 1u << FLD_OFFSET) && !(fl->mask & 1u << FLD_SYM)) {
		snprintf(err, len, "offset is the offset in the symbol: give sym "
				   "too");
		return -1;
	}
	return 0;
}

/* a name shown is cut to this many bytes: a line's five names (comm, and
 * the symbol and DSO of from and to), escaped, stay within
 * FIELDS_LINE_MAX */
#define NAME_MAX_BYTES 512
_Static_assert(5 * 6 * NAME_MAX_BYTES + 2 * (6 * NAME_MAX_BYTES + 32) +
			       512 <=
			       FIELDS_LINE_MAX &&
		       FIELDS_LINE_MAX <= FMT_LINE_MAX,
	       "a -F line fits where ptrace-read keeps room for one");

/* s[0..len) for a text line, by the views' one rule (view_put_clean()) */
static char *put_text(char *p, const char *s, size_t len)
{
	return view_put_clean(p, s, len < NAME_MAX_BYTES ? len : NAME_MAX_BYTES,
			      NULL);
}

static char *put_json(char *p, const char *s, size_t len)
{
	return fmt_put_json_str(p, s, len < NAME_MAX_BYTES ? len : NAME_MAX_BYTES);
}

/* hex without 0x, as perf script writes addresses */
static char *put_bare_hex(char *p, uint64_t v)
{
	char buf[24], *e = fmt_put_hex(buf, v);

	memcpy(p, buf + 2, (size_t)(e - buf - 2));
	return p + (e - buf - 2);
}

/* the operand value of a field, whether it is a code address */
static uint64_t operand(const struct strace_event *e, int to, int *addr)
{
	const struct strace_event_info *in = strace_event_info(e->type);
	unsigned kind = !in ? STRACE_FK_HEX : to ? in->b_kind : in->a_kind;

	*addr = kind == STRACE_FK_ADDR;
	return to ? e->b : e->a;
}

/* s[0..len) as text or as the body of a JSON string */
static char *put_str(char *p, const char *s, size_t len, int json)
{
	return json ? put_json(p, s, len) : put_text(p, s, len);
}

/* an address's symbol (+ offset) and DSO as the fields ask: text
 * " sym+0xOFF (dso)", JSON ',"K_sym":"sym+0xOFF","K_dso":"dso"' */
static char *put_addr_parts(const struct fields *fl,
			    struct strace_names *names, char *p, uint64_t v,
			    const char *key, int json)
{
	const struct strace_name *sym, *dso;

	if (!names || !v)
		return p;
	if (fl->mask & 1u << FLD_SYM) {
		sym = strace_names_symbol(names, v);
		p += json ? sprintf(p, ",\"%s_sym\":\"", key) : sprintf(p, " ");
		p = sym ? put_str(p, sym->str, sym->len, json)
			: put_str(p, "[unknown]", 9, json);
		if (sym && (fl->mask & 1u << FLD_OFFSET)) {
			*p++ = '+';
			p = fmt_put_hex(p, v - sym->key);
		}
		if (json)
			*p++ = '"';
	}
	if (fl->mask & 1u << FLD_DSO) {
		dso = strace_names_dso(names, v);
		p += json ? sprintf(p, ",\"%s_dso\":\"", key) : sprintf(p, " (");
		p = dso ? put_str(p, dso->str, dso->len, json)
			: put_str(p, "[unknown]", 9, json);
		*p++ = json ? '"' : ')';
	}
	if (json && (fl->mask & 1u << FLD_SRCLINE)) {
		const char *file;
		unsigned line;

		p += sprintf(p, ",\"%s_srcline\":", key);
		if (srclines_get(fl->src, names, v, &file, &line)) {
			*p++ = '"';
			p = put_json(p, file, strlen(file));
			p += sprintf(p, ":%u\"", line);
		} else {
			memcpy(p, "null", 4);
			p += 4;
		}
	}
	return p;
}

/* perf script's srcline of a branch: that of its ip (our from; to when
 * from is not shown), last, as "\n  FILE:LINE"; nothing when not known */
static char *put_srcline_text(const struct fields *fl,
			      struct strace_names *names, char *p,
			      const struct strace_event *e)
{
	const char *file;
	unsigned line;
	int addr;
	uint64_t v = operand(e, !(fl->mask & 1u << FLD_FROM), &addr);

	if (!addr || !v || !srclines_get(fl->src, names, v, &file, &line))
		return p;
	memcpy(p, "\n  ", 3);
	p = put_text(p + 3, file, strlen(file));
	return p + sprintf(p, ":%u", line);
}

/* --- the threads' CPUs ---------------------------------------------------- */

static size_t cpu_slot(const struct fields *fl, uint32_t tid)
{
	size_t i = (size_t)(tid * 0x9e3779b1u) & (fl->cpucap - 1);

	while (fl->cpus[i] && (uint32_t)(fl->cpus[i] >> 32) != tid + 1)
		i = (i + 1) & (fl->cpucap - 1);
	return i;
}

void fields_see(struct fields *fl, const struct strace_event *e)
{
	size_t i;

	if (e->type != STRACE_EV_CPU || !(fl->mask & 1u << FLD_CPU) ||
	    e->tid == UINT32_MAX || e->a >= UINT32_MAX)
		return;
	if (2 * (fl->ncpus + 1) > fl->cpucap) {
		size_t cap = fl->cpucap ? 2 * fl->cpucap : 64;
		uint64_t *old = fl->cpus, *v = calloc(cap, sizeof(*v));
		size_t oldcap = fl->cpucap;
		if (!v)
			return; /* (the CPU then shows as not known) */
		fl->cpus = v;
		fl->cpucap = cap;
		for (size_t k = 0; k < oldcap; k++)
			if (old[k])
				fl->cpus[cpu_slot(fl, (uint32_t)(old[k] >> 32) -
							      1)] = old[k];
		free(old);
	}
	i = cpu_slot(fl, e->tid);
	fl->ncpus += !fl->cpus[i];
	fl->cpus[i] = (uint64_t)(e->tid + 1) << 32 | (uint32_t)e->a;
}

/* the CPU thread tid last ran on, or -1 */
static long cpu_of(const struct fields *fl, uint32_t tid)
{
	size_t i;

	if (!fl->cpucap || tid == UINT32_MAX)
		return -1;
	i = cpu_slot(fl, tid);
	return fl->cpus[i] ? (long)(uint32_t)fl->cpus[i] : -1;
}

int fields_open(struct fields *fl, const char *cache_dir)
{
	if ((fl->mask & 1u << FLD_SRCLINE) && !fl->src &&
	    !(fl->src = srclines_new(cache_dir)))
		return -1;
	return 0;
}

void fields_fini(struct fields *fl)
{
	free(fl->cpus);
	fl->cpus = NULL;
	srclines_free(fl->src);
	fl->src = NULL;
	fl->ncpus = fl->cpucap = 0;
}

static uint32_t pid_of(struct strace_names *names, uint32_t tid)
{
	const struct strace_name *t = names ? strace_names_thread(names, tid)
					    : NULL;

	if (!t)
		return tid;
	return t->kind == STRACE_EV_THREAD ? (uint32_t)t->aux
					   : (uint32_t)t->key;
}

/* a name: as text ('-' for none), or as a JSON string (null) */
static char *put_name(char *p, const char *s, size_t len, int json)
{
	if (!s) {
		memcpy(p, json ? "null" : "-", json ? 4 : 1);
		return p + (json ? 4 : 1);
	}
	if (!json)
		return put_text(p, s, len);
	*p++ = '"';
	p = put_json(p, s, len);
	*p++ = '"';
	return p;
}

/* The line of e: its fields in text or in JSON. */
static char *put_line(const struct fields *fl, struct strace_names *names,
		      char *p, const struct strace_event *e, uint64_t seq,
		      int json)
{
	const struct strace_event_info *in = strace_event_info(e->type);
	const struct strace_name *t;
	char *start = p;
	long cpu;
	int addr;

	if (json)
		*p++ = '{';
	for (unsigned i = 0; i < fl->n; i++) {
		unsigned f = fl->order[i];
		if (json)
			p += sprintf(p, "%s\"%s\":", i ? "," : "", field_name[f]);
		else if (p > start)
			*p++ = ' ';
		switch (f) {
		case FLD_SEQ:
			p = fmt_put_u64(p, seq);
			break;
		case FLD_TIME:
			p = json ? fmt_put_u64(p, e->time)
				 : fmt_put_time(p, e->time);
			break;
		case FLD_TID:
			p = fmt_put_u64(p, e->tid);
			break;
		case FLD_PID:
			p = fmt_put_u64(p, pid_of(names, e->tid));
			break;
		case FLD_COMM:
			t = names ? strace_names_thread(names, e->tid) : NULL;
			p = put_name(p, t ? t->str : NULL, t ? t->len : 0, json);
			break;
		case FLD_TYPE:
			if (in && in->name)
				p = put_name(p, in->name, strlen(in->name), json);
			else
				p += sprintf(p, json ? "\"type%u\"" : "type%u",
					     e->type);
			break;
		case FLD_FROM:
		case FLD_TO: {
			uint64_t v = operand(e, f == FLD_TO, &addr);
			if (json) {
				*p++ = '"';
				p = fmt_put_hex(p, v);
				*p++ = '"';
			} else {
				if (f == FLD_TO && (fl->mask & 1u << FLD_FROM)) {
					memcpy(p, "=> ", 3);
					p += 3;
				}
				p = put_bare_hex(p, v);
			}
			if (addr)
				p = put_addr_parts(fl, names, p, v,
						   field_name[f], json);
			break;
		}
		case FLD_FLAGS:
			p = json ? fmt_put_u64(p, e->flags)
				 : fmt_put_hex(p, e->flags);
			break;
		case FLD_CPU:
			cpu = cpu_of(fl, e->tid);
			if (cpu < 0)
				p += sprintf(p, json ? "null" : "[-]");
			else
				p += sprintf(p, json ? "%ld" : "[%03ld]", cpu);
			break;
		}
	}
	if (!json && (fl->mask & 1u << FLD_SRCLINE))
		p = put_srcline_text(fl, names, p, e);
	if (json)
		*p++ = '}';
	*p++ = '\n';
	return p;
}

char *fields_text(const struct fields *fl, struct strace_names *names,
		  char *p, const struct strace_event *e, uint64_t seq)
{
	return put_line(fl, names, p, e, seq, 0);
}

char *fields_json(const struct fields *fl, struct strace_names *names,
		  char *p, const struct strace_event *e, uint64_t seq)
{
	return put_line(fl, names, p, e, seq, 1);
}
