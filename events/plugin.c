/* SPDX-License-Identifier: MIT */
/*
 * events/plugin.c - the plugin host (strace/plugin.h).
 *
 * Each plugin registers callbacks for sets of types; the host folds the
 * enabled ones into a table, one NULL-terminated list per type, so that
 * dispatching an event is a load and a branch when its type has no
 * callback, and a loop of indirect calls when it has. A change made
 * during a dispatch (a registration, enable or disable from a callback)
 * builds a new table at once, for the next event; the old one is freed
 * after the dispatch that may still walk it. A change made between
 * dispatches (init's registrations, a control command) only marks the
 * table stale, and the load or command builds it once at its end: a
 * plugin that registers thousands of callbacks in init costs one build,
 * not one per registration (each is O(registrations x types)).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/error.h"
#include "strace/internal/grow.h"
#include "strace/opts.h"
#include "strace/plugin.h"
#include "plugin_file.h"

struct reg {
	struct strace_typeset types;
	strace_plugin_cb fn;
	void *ctx;
};

struct cbent {
	strace_plugin_cb fn;
	void *ctx;
};

struct plugin {
	struct strace_plugin_host host; /* first: a host pointer is ours */
	struct strace_plugins *ps;
	struct plugin *next;            /* load order */
	char *file;
	char **argv; /* argv[0] the name, then the arguments */
	int argc;
	void *dl;
	strace_plugin_fini_fn fini;
	struct strace_typeset enabled;
	struct reg *regs;
	size_t nregs, regscap;
	struct strace_stack_cb *fcbs; /* frame callbacks */
	size_t nfcbs, fcbscap;
	char bad[200]; /* a pattern that matched no type, during init */
};

/* system call numbers frame_name() names (x86-64's are below 512) */
#define SYSCALL_LABELS 1024

struct strace_plugins {
	/* the hot part: per type, the enabled callbacks, NULL when none */
	const struct cbent *tab[STRACE_EV_MAX];
	int brk;     /* leave the fast loop: stopped, or stacks begin */
	int stopped;
	struct strace_stack *stack;
	struct strace_names *names;
	const char *host;
	uint32_t max_depth;
	struct plugin *first;
	struct cbent *block;    /* the table's storage */
	struct cbent **retired; /* tables replaced during a dispatch */
	size_t nretired, retiredcap;
	int in_dispatch;
	int stale; /* tab misses a change made between dispatches */
	pthread_mutex_t lock;
	/* frame_name()'s "[syscall write]", by number, made on first use
	 * and kept until the plugins are freed (after their fini) */
	char *syscall_labels[SYSCALL_LABELS];
};

/* The plugins whose code runs on this thread (a callback, a fini):
 * frame_name() has no host argument, and names system calls by theirs. */
static _Thread_local struct strace_plugins *running;

static struct plugin *of(struct strace_plugin_host *h)
{
	return (struct plugin *)(void *)h;
}

/* Whether registration r of p is called for type t. */
static int calls(const struct plugin *p, const struct reg *r, unsigned t)
{
	return strace_typeset_has(&r->types, t) &&
	       strace_typeset_has(&p->enabled, t);
}

/* The table from every plugin's enabled registrations, in load and
 * registration order. */
static int rebuild(struct strace_plugins *ps)
{
	size_t count[STRACE_EV_MAX] = {0}, total = 0;
	struct cbent *block, *at;

	for (struct plugin *p = ps->first; p; p = p->next)
		for (size_t i = 0; i < p->nregs; i++)
			for (unsigned t = 0; t < STRACE_EV_MAX; t++)
				count[t] += (size_t)calls(p, &p->regs[i], t);
	for (unsigned t = 0; t < STRACE_EV_MAX; t++)
		total += count[t] ? count[t] + 1 : 0;
	block = calloc(total ? total : 1, sizeof(*block));
	if (!block)
		return -ENOMEM;
	if (ps->block && ps->in_dispatch) {
		if (ps->nretired == ps->retiredcap) {
			struct cbent **r = strace_grow(
				ps->retired, &ps->retiredcap, sizeof(*r), 4);

			if (!r) {
				free(block);
				return -ENOMEM;
			}
			ps->retired = r;
		}
		ps->retired[ps->nretired++] = ps->block;
	} else {
		free(ps->block);
	}
	ps->block = block;
	at = block;
	for (unsigned t = 0; t < STRACE_EV_MAX; t++) {
		if (!count[t]) {
			ps->tab[t] = NULL;
			continue;
		}
		ps->tab[t] = at;
		for (struct plugin *p = ps->first; p; p = p->next)
			for (size_t i = 0; i < p->nregs; i++)
				if (calls(p, &p->regs[i], t)) {
					at->fn = p->regs[i].fn;
					at->ctx = p->regs[i].ctx;
					at++;
				}
		at++; /* the terminating NULL */
	}
	ps->stale = 0;
	return 0;
}

/* A registration or an enabled set changed: a callback's change is seen
 * by the next event, so it rebuilds now; any other waits for
 * settle(), at the end of the load or command that made it. */
static int changed(struct strace_plugins *ps)
{
	if (ps->in_dispatch)
		return rebuild(ps);
	ps->stale = 1;
	return 0;
}

/* The table up to date before the next dispatch. */
static int settle(struct strace_plugins *ps)
{
	return ps->stale ? rebuild(ps) : 0;
}

static int parse_types(struct plugin *p, const char *patterns,
		       struct strace_typeset *set)
{
	const char *bad = NULL;
	size_t bad_len = 0;

	if (patterns && strace_typeset_parse(set, patterns, &bad, &bad_len) == 0)
		return 0;
	if (!p->bad[0])
		plugin_say(p->bad, sizeof(p->bad),
		    "pattern '%.*s' matches no event type (see 'ptrace-read "
		    "--list-types'; patterns are globs like 'call,ret*')",
		    (int)bad_len, bad ? bad : "");
	return -STRACE_E_BADARG;
}

static int add_reg(struct plugin *p, const struct strace_typeset *set,
		   strace_plugin_cb fn, void *ctx)
{
	struct reg *r = p->regs;

	if (p->nregs == p->regscap) {
		r = strace_grow(p->regs, &p->regscap, sizeof(*r), 4);
		if (!r)
			return -ENOMEM;
		p->regs = r;
	}
	r[p->nregs].types = *set;
	r[p->nregs].fn = fn;
	r[p->nregs].ctx = ctx;
	p->nregs++;
	return changed(p->ps);
}

/* --- what a plugin reaches through its host ------------------------------ */

static int h_on(struct strace_plugin_host *h, const char *patterns,
		strace_plugin_cb fn, void *ctx)
{
	struct strace_typeset set;
	int rc = parse_types(of(h), patterns, &set);

	if (rc < 0)
		return rc;
	if (!fn)
		return -STRACE_E_BADARG;
	return add_reg(of(h), &set, fn, ctx);
}

/* Every plugin's frame callbacks, enter or leave, in load order. */
static void frame_cbs(struct strace_plugins *ps, const struct strace_frame *f,
		      int leave)
{
	for (struct plugin *p = ps->first; p && !ps->stopped; p = p->next)
		for (size_t i = 0; i < p->nfcbs && !ps->stopped; i++) {
			const struct strace_stack_cb *cb = &p->fcbs[i];
			void (*fn)(void *, const struct strace_frame *) =
				leave ? cb->leave : cb->enter;
			if (fn)
				fn(cb->arg, f);
		}
}

static void frame_enter(void *arg, const struct strace_frame *f)
{
	frame_cbs(arg, f, 0);
}

static void frame_leave(void *arg, const struct strace_frame *f)
{
	frame_cbs(arg, f, 1);
}

/* The stacks, kept from the first plugin that asks on. */
static int want_stack(struct strace_plugins *ps)
{
	struct strace_stack_opts so = {.size = sizeof(so),
				       .max_depth = ps->max_depth};
	struct strace_stack_cb cb = {frame_enter, frame_leave, ps};
	int rc;

	if (ps->stack)
		return 0;
	rc = strace_stack_new(ps->names, &so, &cb, &ps->stack);
	if (rc == 0)
		ps->brk = 1;
	return rc;
}

static int h_on_frames(struct strace_plugin_host *h,
		       const struct strace_stack_cb *cb)
{
	struct plugin *p = of(h);
	struct strace_stack_cb *v;
	int rc = want_stack(p->ps);

	if (rc < 0)
		return rc;
	if (p->nfcbs == p->fcbscap) {
		v = strace_grow(p->fcbs, &p->fcbscap, sizeof(*v), 4);
		if (!v)
			return -ENOMEM;
		p->fcbs = v;
	}
	p->fcbs[p->nfcbs++] = *cb;
	return 0;
}

static int set_enabled(struct plugin *p, const char *patterns, int on)
{
	struct strace_typeset set;
	int rc = parse_types(p, patterns, &set);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < STRACE_EV_MAX / 64; i++)
		p->enabled.bits[i] = on ? p->enabled.bits[i] | set.bits[i]
					: p->enabled.bits[i] & ~set.bits[i];
	return changed(p->ps);
}

static int h_enable(struct strace_plugin_host *h, const char *patterns)
{
	return set_enabled(of(h), patterns, 1);
}

static int h_disable(struct strace_plugin_host *h, const char *patterns)
{
	return set_enabled(of(h), patterns, 0);
}

static void h_stop(struct strace_plugin_host *h)
{
	of(h)->ps->stopped = 1;
	of(h)->ps->brk = 1;
}

static struct strace_names *h_names(struct strace_plugin_host *h)
{
	return of(h)->ps->names;
}

static const struct strace_name *h_symbol(struct strace_plugin_host *h,
					  uint64_t addr)
{
	struct strace_names *n = of(h)->ps->names;
	return n ? strace_names_symbol(n, addr) : NULL;
}

static const struct strace_name *h_dso(struct strace_plugin_host *h,
				       uint64_t addr)
{
	struct strace_names *n = of(h)->ps->names;
	return n ? strace_names_dso(n, addr) : NULL;
}

static const struct strace_name *h_thread(struct strace_plugin_host *h,
					  uint32_t tid)
{
	struct strace_names *n = of(h)->ps->names;
	return n ? strace_names_thread(n, tid) : NULL;
}

static const struct strace_name *h_name_at(struct strace_plugin_host *h,
					   uint64_t off)
{
	struct strace_names *n = of(h)->ps->names;
	return n ? strace_names_at(n, off) : NULL;
}

static size_t h_frames(struct strace_plugin_host *h, uint32_t tid,
		       const struct strace_frame **out)
{
	struct strace_plugins *ps = of(h)->ps;

	*out = NULL;
	if (want_stack(ps) < 0)
		return 0;
	return strace_stack_frames(ps->stack, tid, out);
}

static struct strace_stack *h_stack(struct strace_plugin_host *h)
{
	struct strace_plugins *ps = of(h)->ps;
	return want_stack(ps) < 0 ? NULL : ps->stack;
}

/* A frame's name; a system call's by the host's names ("[syscall
 * write]") where the producer named its site and a callback or fini of
 * these plugins is running. */
static const char *h_frame_name(const struct strace_frame *f)
{
	struct strace_plugins *ps = running;
	const struct strace_name *e;
	char **label;

	if (f->kind != STRACE_FRAME_SYSCALL || !ps || !ps->names ||
	    !(e = strace_names_syscall(ps->names, f->addr)) ||
	    e->aux >= SYSCALL_LABELS)
		return strace_frame_name(f);
	label = &ps->syscall_labels[e->aux];
	if (!*label) {
		size_t len = e->len < 64 ? e->len : 64;
		*label = malloc(len + 11);
		if (!*label)
			return strace_frame_name(f);
		snprintf(*label, len + 11, "[syscall %.*s]", (int)len, e->str);
	}
	return *label;
}

static const char *h_type_name(unsigned type)
{
	const struct strace_event_info *i = strace_event_info(type);
	return i ? i->name : NULL;
}

/* --- the host ------------------------------------------------------------ */

int strace_plugins_new(const struct strace_plugins_opts *opts,
		       struct strace_plugins **out)
{
	struct strace_plugins_opts o;
	struct strace_plugins *ps;
	int rc = strace_opts_load(&o, sizeof(o), opts);

	*out = NULL;
	if (rc < 0)
		return rc;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	rc = pthread_mutex_init(&ps->lock, NULL);
	if (rc) {
		free(ps);
		return -rc;
	}
	ps->names = o.names;
	ps->host = o.host ? o.host : "";
	ps->max_depth = o.max_depth;
	*out = ps;
	return 0;
}

static void free_plugin(struct plugin *p)
{
	if (!p)
		return;
	if (p->dl)
		dlclose(p->dl);
	free(p->file);
	if (p->argv)
		free(p->argv[0]);
	free(p->argv);
	free(p->regs);
	free(p->fcbs);
	free(p);
}

/* Unlink p from the list and rebuild the table without it. */
static void unlink_plugin(struct strace_plugins *ps, struct plugin *p)
{
	for (struct plugin **pp = &ps->first; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	p->next = NULL;
	/* the table shrinks: on failure the old one stays, and may call
	 * into p (built before p's registrations or after them); be safe:
	 * drop every entry rather than keep p's */
	if (rebuild(ps) < 0)
		memset(ps->tab, 0, sizeof(ps->tab));
}

/* p's fini, if it has one, with frame_name() naming by ps. */
static void call_fini(struct strace_plugins *ps, struct plugin *p)
{
	struct strace_plugins *was = running;

	if (!p->fini)
		return;
	running = ps;
	p->fini();
	running = was;
}

static struct plugin *find(struct strace_plugins *ps, const char *name)
{
	for (struct plugin *p = ps->first; p; p = p->next)
		if (!strcmp(p->argv[0], name))
			return p;
	return NULL;
}

/* "DIR/libfoo.so" -> "libfoo"; "foo.so" -> "foo". */
static char *plugin_name(const char *file, size_t len)
{
	const char *base = file, *s;
	size_t n;

	for (s = file; s < file + len; s++)
		if (*s == '/')
			base = s + 1;
	n = (size_t)(file + len - base);
	if (n > 3 && !memcmp(base + n - 3, ".so", 3))
		n -= 3;
	return strndup(base, n);
}

/* spec "FILE[:ARG,ARG...]" -> p->file, p->argv (argv[0] the name, the
 * arguments in one buffer after it). */
static int split_spec(struct plugin *p, const char *spec)
{
	const char *colon = strchr(spec, ':'); /* FILE has none */
	size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
	char *name, *buf;
	int argc = 1;

	p->file = strndup(spec, flen);
	name = plugin_name(spec, flen);
	if (!p->file || !name) {
		free(name);
		return -ENOMEM;
	}
	if (colon && colon[1])
		for (const char *s = colon + 1; *s; s++)
			argc += *s == ',';
	argc += colon && colon[1];
	/* the name, then the arguments, in one allocation */
	buf = malloc(strlen(name) + 1 + (colon ? strlen(colon + 1) + 1 : 0));
	p->argv = calloc((size_t)argc + 1, sizeof(*p->argv));
	if (!buf || !p->argv) {
		free(buf);
		free(name);
		return -ENOMEM;
	}
	strcpy(buf, name);
	p->argv[0] = buf;
	p->argc = 1;
	if (colon && colon[1]) {
		char *a = buf + strlen(name) + 1;
		strcpy(a, colon + 1);
		p->argv[p->argc++] = a;
		for (; *a; a++)
			if (*a == ',') {
				*a = '\0';
				p->argv[p->argc++] = a + 1;
			}
	}
	free(name);
	return 0;
}

/* Every strace_on_TYPE the plugin exports, bound to its type. */
static int bind_auto(struct plugin *p)
{
	for (unsigned t = 0; t < STRACE_EV_MAX; t++) {
		const struct strace_event_info *i = strace_event_info(t);
		char sym[64];
		void *fn;

		if (!i || !i->name)
			continue;
		snprintf(sym, sizeof(sym), "strace_on_%s", i->name);
		fn = dlsym(p->dl, sym);
		if (!fn)
			continue;
		struct strace_typeset set;
		memset(&set, 0, sizeof(set));
		set.bits[t / 64] |= 1ull << (t % 64);
		strace_plugin_cb cb;
		memcpy(&cb, &fn, sizeof(cb)); /* POSIX: dlsym gives functions */
		int rc = add_reg(p, &set, cb, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load(struct strace_plugins *ps, const char *spec, char *err,
		size_t len)
{
	struct plugin *p = calloc(1, sizeof(*p));
	const uint32_t *version;
	strace_plugin_init_fn init;
	void *sym;
	int rc;

	if (!p)
		return -ENOMEM;
	p->ps = ps;
	rc = split_spec(p, spec);
	if (rc < 0)
		goto fail;
	rc = -STRACE_E_PLUGIN;
	if (find(ps, p->argv[0])) {
		plugin_say(err, len,
		    "plugin %s: a plugin named %s is loaded already (unload "
		    "it first)",
		    p->file, p->argv[0]);
		goto fail;
	}
	rc = plugin_file_check(p->file, err, len);
	if (rc < 0)
		goto fail;
	rc = -STRACE_E_PLUGIN;
	p->dl = plugin_file_dlopen(p->file, RTLD_NOW | RTLD_LOCAL, err, len);
	if (!p->dl)
		goto fail;
	version = dlsym(p->dl, "strace_plugin_api_version");
	if (!version) {
		plugin_say(err, len,
		    "plugin %s: not a strace plugin: it exports no "
		    "strace_plugin_api_version (put STRACE_PLUGIN_VERSION; in "
		    "its source, from strace/plugin.h)",
		    p->file);
		goto fail;
	}
	if (*version != STRACE_PLUGIN_API_VERSION) {
		plugin_say(err, len,
		    "plugin %s: built for plugin API version %u, but this host "
		    "has version %u: rebuild it against this libstrace's "
		    "strace/plugin.h",
		    p->file, *version, STRACE_PLUGIN_API_VERSION);
		goto fail;
	}
	sym = dlsym(p->dl, "strace_plugin_init");
	if (!sym) {
		plugin_say(err, len,
		    "plugin %s: it exports no strace_plugin_init, which every "
		    "plugin has (see docs/plugins.md)",
		    p->file);
		goto fail;
	}
	memcpy(&init, &sym, sizeof(init));
	sym = dlsym(p->dl, "strace_plugin_fini");
	memcpy(&p->fini, &sym, sizeof(p->fini));

	p->host = (struct strace_plugin_host){
		.size = sizeof(struct strace_plugin_host),
		.host = ps->host,
		.name = p->argv[0],
		.on = h_on,
		.on_frames = h_on_frames,
		.enable = h_enable,
		.disable = h_disable,
		.stop = h_stop,
		.names = h_names,
		.symbol = h_symbol,
		.dso = h_dso,
		.thread = h_thread,
		.name_at = h_name_at,
		.frames = h_frames,
		.stack = h_stack,
		.frame_name = h_frame_name,
		.type_name = h_type_name,
	};
	strace_typeset_all(&p->enabled);
	/* last in the list, so that its callbacks run after the others' */
	{
		struct plugin **pp = &ps->first;
		while (*pp)
			pp = &(*pp)->next;
		*pp = p;
	}
	rc = bind_auto(p);
	if (rc < 0) {
		unlink_plugin(ps, p);
		goto fail;
	}
	rc = init(&p->host, p->argc, p->argv);
	if (rc != 0 || p->bad[0]) {
		if (p->bad[0])
			plugin_say(err, len, "plugin %s: %s", p->file, p->bad);
		else
			plugin_say(err, len,
			    "plugin %s: its init failed (returned %d): see "
			    "what it said, and its arguments",
			    p->file, rc);
		unlink_plugin(ps, p);
		rc = -STRACE_E_PLUGIN;
		goto fail;
	}
	rc = settle(ps); /* init's registrations, in one build */
	if (rc < 0) {
		unlink_plugin(ps, p);
		call_fini(ps, p);
		goto fail;
	}
	return 0;
fail:
	if (rc == -ENOMEM)
		plugin_say(err, len, "plugin %s: out of memory", spec);
	free_plugin(p);
	return rc;
}

static int unload(struct strace_plugins *ps, const char *name)
{
	struct plugin *p = find(ps, name);

	if (!p || ps->in_dispatch)
		return -STRACE_E_BADARG;
	unlink_plugin(ps, p);
	call_fini(ps, p);
	free_plugin(p);
	return 0;
}

size_t strace_plugins_count(const struct strace_plugins *ps)
{
	size_t n = 0;

	for (const struct plugin *p = ps->first; p; p = p->next)
		n++;
	return n;
}

int strace_plugins_stopped(const struct strace_plugins *ps)
{
	return ps->stopped;
}

/* "list": a line per plugin, its name, file and the types it gets. */
static void list(struct strace_plugins *ps, char *reply, size_t len)
{
	size_t at = 0;

	reply[0] = '\0';
	for (struct plugin *p = ps->first; p && at < len; p = p->next) {
		int any = 0;

		at += (size_t)snprintf(reply + at, len - at, "%s %s ",
				       p->argv[0], p->file);
		for (unsigned t = 0; t < STRACE_EV_MAX && at < len; t++) {
			int got = 0;
			for (size_t i = 0; i < p->nregs; i++)
				got |= calls(p, &p->regs[i], t);
			if (!got)
				continue;
			at += (size_t)snprintf(reply + at, len - at, "%s%s",
					       any ? "," : "",
					       h_type_name(t));
			any = 1;
		}
		if (at < len)
			at += (size_t)snprintf(reply + at, len - at, "%s%s\n",
					       any ? "" : "-",
					       p->nfcbs ? " frames" : "");
	}
}

static int control(struct strace_plugins *ps, const char *line, char *reply,
		   size_t len)
{
	char cmd[16], arg[1024];
	int n = 0, rc;

	if (len)
		reply[0] = '\0';
	arg[0] = '\0';
	if (sscanf(line, " %15s %n", cmd, &n) < 1) {
		plugin_say(reply, len, "empty command");
		return -STRACE_E_BADARG;
	}
	snprintf(arg, sizeof(arg), "%s", line + n);
	for (size_t l = strlen(arg); l && (arg[l - 1] == ' ' ||
					   arg[l - 1] == '\n');)
		arg[--l] = '\0';
	if (!strcmp(cmd, "list")) {
		list(ps, reply, len);
		return 0;
	}
	if (strcmp(cmd, "load") && strcmp(cmd, "unload") &&
	    strcmp(cmd, "enable") && strcmp(cmd, "disable")) {
		plugin_say(reply, len,
		    "unknown command '%s': load FILE[:ARGS], unload NAME, "
		    "enable PATTERN, disable PATTERN, list",
		    cmd);
		return -STRACE_E_BADARG;
	}
	if (!arg[0]) {
		plugin_say(reply, len,
		    "'%s' needs an argument: load FILE[:ARGS], unload NAME, "
		    "enable PATTERN, disable PATTERN, list",
		    cmd);
		return -STRACE_E_BADARG;
	}
	if (!strcmp(cmd, "load")) {
		/* "FILE ARG ARG" is "FILE:ARG,ARG" */
		char *sp = strchr(arg, ' ');
		if (sp && !memchr(arg, ':', (size_t)(sp - arg))) {
			*sp = ':';
			for (char *s = sp + 1; *s; s++)
				if (*s == ' ')
					*s = ',';
		}
		return load(ps, arg, reply, len);
	}
	if (!strcmp(cmd, "unload")) {
		rc = unload(ps, arg);
		if (rc < 0)
			plugin_say(reply, len, "no plugin named %s is loaded ('list' "
					"names them)",
			    arg);
		return rc;
	}
	/* enable, disable: every plugin's callbacks */
	{
		struct strace_typeset set;
		const char *bad = NULL;
		size_t bad_len = 0;

		if (strace_typeset_parse(&set, arg, &bad, &bad_len) < 0) {
			plugin_say(reply, len,
			    "pattern '%.*s' matches no event type (patterns are "
			    "globs like 'call,ret*')",
			    (int)bad_len, bad ? bad : "");
			return -STRACE_E_BADARG;
		}
	}
	for (struct plugin *p = ps->first; p; p = p->next) {
		rc = set_enabled(p, arg, cmd[0] == 'e');
		if (rc < 0) {
			plugin_say(reply, len, "out of memory");
			return rc;
		}
	}
	rc = settle(ps);
	if (rc < 0)
		plugin_say(reply, len, "out of memory");
	return rc;
}

/* The public entry points take the lock that dispatch takes: a producer's
 * threads may be handing over batches meanwhile. */
int strace_plugins_load(struct strace_plugins *ps, const char *spec,
			char *err, size_t len)
{
	int rc;

	pthread_mutex_lock(&ps->lock);
	rc = load(ps, spec, err, len);
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

int strace_plugins_unload(struct strace_plugins *ps, const char *name)
{
	int rc;

	pthread_mutex_lock(&ps->lock);
	rc = unload(ps, name);
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

int strace_plugins_control(struct strace_plugins *ps, const char *line,
			   char *reply, size_t len)
{
	int rc;

	pthread_mutex_lock(&ps->lock);
	rc = control(ps, line, reply, len);
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

/* One event at a time: the stacks first, then the event's callbacks. */
static void dispatch_slow(struct strace_plugins *ps,
			  const struct strace_event *ev, size_t n)
{
	for (size_t i = 0; i < n && !ps->stopped; i++) {
		const struct strace_event *e = &ev[i];
		const struct cbent *c;

		if (ps->stack)
			strace_stack_feed(ps->stack, e, 1);
		if (e->type >= STRACE_EV_MAX)
			continue;
		for (c = ps->tab[e->type]; c && c->fn && !ps->stopped; c++)
			c->fn(e, c->ctx);
	}
}

int strace_plugins_dispatch(struct strace_plugins *ps,
			    const struct strace_event *ev, size_t n)
{
	struct strace_plugins *was;
	size_t i = 0;

	pthread_mutex_lock(&ps->lock);
	if (ps->stopped) {
		pthread_mutex_unlock(&ps->lock);
		return 1;
	}
	if (ps->names)
		strace_names_update(ps->names);
	ps->in_dispatch = 1;
	was = running;
	running = ps;
	if (!ps->brk) {
		/* the fast path: no stacks, nobody stopped */
		for (; i < n; i++) {
			unsigned t = ev[i].type;
			const struct cbent *c;

			/* 8 KiB ahead: a saved ring streams from memory, and
			 * the VM's own prefetch does not keep up */
			__builtin_prefetch(&ev[i + 256]);

			if (t >= STRACE_EV_MAX || !(c = ps->tab[t]))
				continue;
			do
				c->fn(&ev[i], c->ctx);
			while (!ps->stopped && (++c)->fn);
			if (ps->brk) {
				i++;
				break;
			}
		}
	}
	if (i < n)
		dispatch_slow(ps, ev + i, n - i);
	running = was;
	ps->in_dispatch = 0;
	for (size_t k = 0; k < ps->nretired; k++)
		free(ps->retired[k]);
	ps->nretired = 0;
	pthread_mutex_unlock(&ps->lock);
	return ps->stopped;
}

void strace_plugins_free(struct strace_plugins *ps)
{
	struct strace_plugins *was;
	struct plugin *p;

	if (!ps)
		return;
	was = running;
	running = ps;
	if (ps->stack && !ps->stopped)
		strace_stack_end(ps->stack);
	ps->stopped = 1;
	for (p = ps->first; p; p = p->next)
		if (p->fini)
			p->fini();
	running = was;
	while ((p = ps->first)) {
		ps->first = p->next;
		free_plugin(p);
	}
	strace_stack_free(ps->stack);
	for (size_t i = 0; i < SYSCALL_LABELS; i++)
		free(ps->syscall_labels[i]);
	free(ps->block);
	free(ps->retired);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}
