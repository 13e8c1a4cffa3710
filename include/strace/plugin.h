/* SPDX-License-Identifier: MIT */
/*
 * strace/plugin.h - your own code on every event: the plugin ABI, and the
 * host that loads plugins into a reader (ptrace-read), the decoder
 * (ptrace-capture) or the perf dlfilter (libstrace_dlf.so).
 *
 * A plugin is a shared object that exports
 *
 *   STRACE_PLUGIN_VERSION;            (strace_plugin_api_version)
 *   int strace_plugin_init(struct strace_plugin_host *host, int argc,
 *                          char **argv);
 *   void strace_plugin_fini(void);    (optional)
 *   void strace_on_TYPE(const struct strace_event *ev, void *ctx);
 *                                     (optional, any TYPE of event.h)
 *
 * At load the host checks strace_plugin_api_version, binds every
 * strace_on_TYPE it finds to its type (ctx NULL), then calls init with the
 * plugin's arguments (argv[0] is the plugin's name). Through host, init
 * and the callbacks register more callbacks for type patterns (the glob
 * syntax of --types: "call,ret*", "-block"), turn patterns off and on,
 * name addresses and threads, read the call stack of a thread, and ask
 * the host to stop. docs/plugins.md has an example and the build command.
 *
 * Contracts:
 *   - a callback gets the event in place (zero copy): valid during the
 *     call only;
 *   - callbacks run in the order the plugins were loaded, and within a
 *     plugin in the order they were registered;
 *   - a type with no enabled callback costs no call;
 *   - the host calls a plugin from one thread at a time, but not always
 *     the same one (ptrace-capture decodes threads in parallel); a
 *     thread's events come in that thread's order;
 *   - a plugin runs in its host's process: a crash is the host's crash.
 *     ptrace-read is a reader like any other, so a plugin there cannot
 *     harm the writer or other readers; in ptrace-capture and in perf it
 *     can.
 *
 * The plugin side needs this header only (and event.h, names.h, stack.h
 * for the types): every service comes through host, so the same binary
 * works in all three hosts without linking libstrace.
 *
 * This header depends on libc only and is safe to include from C++.
 */
#ifndef STRACE_PLUGIN_H
#define STRACE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "names.h"
#include "stack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI's version: a host loads only plugins built with its own. */
#define STRACE_PLUGIN_API_VERSION 1

/* Put this once in a plugin's source. */
#define STRACE_PLUGIN_VERSION                                                 \
	__attribute__((visibility("default"))) extern const uint32_t          \
		strace_plugin_api_version;                                    \
	const uint32_t strace_plugin_api_version = STRACE_PLUGIN_API_VERSION

/* A callback: ev is the event, in place; ctx what was registered. */
typedef void (*strace_plugin_cb)(const struct strace_event *ev, void *ctx);

/*
 * What a plugin gets: one per loaded plugin, valid from init until fini
 * returns. Fields are only appended: a plugin that uses a field added in
 * a later version checks size first.
 */
struct strace_plugin_host {
	size_t size;          /* sizeof(struct strace_plugin_host), host's */
	const char *host;     /* "ptrace-read", "ptrace-capture", "dlfilter" */
	const char *name;     /* the plugin's name (file name without .so) */

	/*
	 * on() - call fn(ev, ctx) for each event whose type matches
	 * patterns (comma-separated globs on type names, as --types). The
	 * types are enabled unless disable() turned them off.
	 * Returns 0.
	 * Returns -STRACE_E_BADARG if a pattern matches no type (the host
	 * then refuses the plugin, naming the pattern).
	 * Returns -ENOMEM if memory runs out.
	 */
	int (*on)(struct strace_plugin_host *h, const char *patterns,
		  strace_plugin_cb fn, void *ctx);

	/*
	 * on_frames() - have cb's enter and leave called for each frame of
	 * the call stacks (strace/stack.h): the host keeps the stacks from
	 * then on. A frame's callbacks come before the callbacks of the
	 * event that entered or left it.
	 * Returns 0, or -ENOMEM.
	 */
	int (*on_frames)(struct strace_plugin_host *h,
			 const struct strace_stack_cb *cb);

	/*
	 * enable(), disable() - turn this plugin's callbacks for the types
	 * matching patterns on or off, from init or from any callback
	 * (the next event sees it). Everything starts enabled.
	 * Returns 0, or -STRACE_E_BADARG if a pattern matches no type.
	 */
	int (*enable)(struct strace_plugin_host *h, const char *patterns);
	int (*disable)(struct strace_plugin_host *h, const char *patterns);

	/*
	 * stop() - ask the host to stop: no callback of any plugin runs
	 * after the current one returns; the host finishes as at an
	 * interrupt (ptrace-read stops reading, ptrace-capture stops
	 * capturing, perf's dlfilter goes on writing its ring without the
	 * plugins) and calls every fini.
	 */
	void (*stop)(struct strace_plugin_host *h);

	/* names() - the host's reader-side names (strace/names.h), up to
	 * date with the event being handed over. */
	struct strace_names *(*names)(struct strace_plugin_host *h);

	/* symbol(), dso() - the entry covering addr, or NULL; thread() -
	 * a thread's name (its THREAD entry, else its process's), or NULL.
	 * Valid until the host unloads the plugin. */
	const struct strace_name *(*symbol)(struct strace_plugin_host *h,
					    uint64_t addr);
	const struct strace_name *(*dso)(struct strace_plugin_host *h,
					 uint64_t addr);
	const struct strace_name *(*thread)(struct strace_plugin_host *h,
					    uint32_t tid);

	/* name_at() - the string-table entry at offset off (the STR
	 * operand of a definition event: process, thread, dso, symbol), or
	 * NULL. */
	const struct strace_name *(*name_at)(struct strace_plugin_host *h,
					     uint64_t off);

	/*
	 * frames() - the open frames of thread tid, outermost first, into
	 * *out; returns how many. The host keeps stacks once a plugin has
	 * called on_frames() or frames() (call it from init, with tid 0,
	 * to have them from the first event). Valid until the callback
	 * returns.
	 */
	size_t (*frames)(struct strace_plugin_host *h, uint32_t tid,
			 const struct strace_frame **out);

	/* stack() - the host's call stacks (strace/stack.h), kept from
	 * now on, as frames() keeps them: for a plugin that links libstrace
	 * itself and calls strace_stack_frames(). */
	struct strace_stack *(*stack)(struct strace_plugin_host *h);

	/* frame_name() - a frame's function name; a system call's as the
	 * views name it, "[syscall write]" ("[syscall]" where the producer
	 * could not tell which); "[signal]"; or NULL when its function has
	 * no symbol. Valid until the plugins are freed (after their fini). */
	const char *(*frame_name)(const struct strace_frame *f);

	/* type_name() - an event type's name ("call"), or NULL. */
	const char *(*type_name)(unsigned type);
};

/* What a plugin exports; the host finds them by these names. */
typedef int (*strace_plugin_init_fn)(struct strace_plugin_host *host,
				     int argc, char **argv);
typedef void (*strace_plugin_fini_fn)(void);

/*
 * strace_plugin_init() - set the plugin up: register callbacks, parse
 * argv (argc >= 1; argv[0] is the plugin's name, argv[1...] its
 * arguments, valid until fini). host is valid until fini returns.
 * Return 0, or non-zero to refuse (say why on stderr first): the host
 * then unloads the plugin without calling fini.
 * strace_plugin_fini() - the last call: the stream ended, or the plugin
 * is unloaded; print results, free what init made.
 */
int strace_plugin_init(struct strace_plugin_host *host, int argc, char **argv);
void strace_plugin_fini(void);

/* --- for hosts ------------------------------------------------------------ */

struct strace_plugins;

struct strace_plugins_opts {
	size_t size;         /* sizeof(struct strace_plugins_opts) (opts.h) */
	const char *host;    /* what plugins see in host->host */
	struct strace_names *names; /* NULL: none (symbol() finds nothing) */
	uint32_t max_depth;  /* the stacks' cap (strace_stack_opts); 0: 4096 */
};

/*
 * strace_plugins_new() - a host with no plugin loaded. names must be kept
 * up to date by the caller or, if it is the host's own, are updated
 * before each dispatch.
 * Returns 0 and *out.
 * Returns -STRACE_E_BADARG if opts break the rule of strace/opts.h.
 * Returns -ENOMEM if memory runs out.
 */
int strace_plugins_new(const struct strace_plugins_opts *opts,
		       struct strace_plugins **out);

/*
 * strace_plugins_load() - load spec, "FILE.so[:ARG,ARG...]" (FILE has
 * no ':'; one without '/' is looked up as dlopen does), bind its strace_on_TYPE
 * functions and call its init with the arguments. FILE with a '/' is
 * checked before dlopen sees it: a regular file (not a FIFO, which would
 * block dlopen), an ELF object not cut short. A bus error inside dlopen
 * is caught (SIGBUS has a handler of the host only while dlopen runs);
 * after one, no load succeeds in this process.
 * Returns 0.
 * Returns -STRACE_E_PLUGIN if it cannot be loaded: no such file, not a
 * regular file, cut short, a bus error while loading, not a plugin,
 * another API version, an unknown pattern, init failed, a plugin of that
 * name is loaded already; err (len bytes) says which, and what to do.
 * Nothing stays loaded then.
 * Returns -ENOMEM if memory runs out.
 */
int strace_plugins_load(struct strace_plugins *ps, const char *spec,
			char *err, size_t len);

/*
 * strace_plugins_unload() - call the plugin's fini, remove its
 * callbacks and unload it. Call it between dispatches, never from a
 * callback.
 * Returns 0, or -STRACE_E_BADARG if no plugin has that name.
 */
int strace_plugins_unload(struct strace_plugins *ps, const char *name);

/*
 * strace_plugins_control() - one command, as a control FIFO gives it:
 * "load FILE[:ARGS]" (or "load FILE ARG..."), "unload NAME",
 * "enable PATTERN", "disable PATTERN" (every plugin's callbacks), or
 * "list" (one line per plugin: name, file, enabled types). reply (len
 * bytes) receives the list, or what went wrong.
 * Returns 0, or a negative error code as load and unload do.
 */
int strace_plugins_control(struct strace_plugins *ps, const char *line,
			   char *reply, size_t len);

/* strace_plugins_count() - plugins loaded. */
size_t strace_plugins_count(const struct strace_plugins *ps);

/*
 * strace_plugins_dispatch() - hand n events to the plugins' callbacks,
 * in order. Safe to call from several threads (one at a time runs), and
 * beside load, unload and control, which wait for it (never call those
 * from a callback).
 * Returns 0.
 * Returns 1 if a plugin asked to stop (now or before): the remaining
 * events were not handed over, and later calls hand none.
 */
int strace_plugins_dispatch(struct strace_plugins *ps,
			    const struct strace_event *ev, size_t n);

/* strace_plugins_stopped() - 1 once a plugin asked to stop. */
int strace_plugins_stopped(const struct strace_plugins *ps);

/*
 * strace_plugins_free() - the stream ended: leave every open frame
 * (strace_stack_end), call every plugin's fini in load order, unload
 * them and free the host (NULL is fine).
 */
void strace_plugins_free(struct strace_plugins *ps);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_PLUGIN_H */
