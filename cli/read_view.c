/* SPDX-License-Identifier: MIT */
/*
 * cli/read_view.c - the stack views of ptrace-read -f tree,
 * report, folded, chrome, fxt, uftrace, svg: set up, the size warning of
 * chrome and fxt, the note when the filters left no frame.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

static void frames_visit(void *arg, const struct strace_event *ev, size_t n)
{
	uint64_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += ev[i].type == STRACE_EV_CALL ||
		     ev[i].type == STRACE_EV_SYSCALL ||
		     ev[i].type == STRACE_EV_INTERRUPT;
	*(uint64_t *)arg += k;
}

/*
 * -f chrome and fxt: a warning, before the events are written, when the
 * output will pass what its viewers load, with the options that cut it.
 * Its size is estimated from the frames the events begin (a call, a
 * syscall, an interrupt) and the bytes a frame takes (tests/view: 150 to
 * 160 in JSON, 33 to 40 in FXT); with filters it is at most that. The
 * pass over the ring is made only for a ring big enough to pass it.
 */
int warn_size(struct rd *d)
{
	const struct view_opts *vo = &d->o->vo;
	const char *env = getenv("STRACE_VIEW_WARN_MB");
	int chrome = vo->kind == VIEW_CHROME;
	uint64_t frames = 0, mb, limit_mb = chrome ? 300 : 1000;

	if (d->o->follow || (vo->kind != VIEW_CHROME && vo->kind != VIEW_FXT))
		return 0;
	if (env && *env)
		limit_mb = strtoull(env, NULL, 10);
	/* (no pass when the output stays under the limit even if every
	 * event made a frame) */
	if (strace_ring_committed(d->ring) * (chrome ? 160 : 40) / 1000000 <
	    limit_mb)
		return 0;
	if (scan_ring(d, frames_visit, &frames) < 0)
		return -1;
	mb = (frames * (chrome ? 160 : 40) + 999999) / 1000000;
	if (mb <= limit_mb)
		return 0;
	err("%s: the %s will be %sabout %" PRIu64 " MB (%" PRIu64 " frames), more "
	    "than its viewers load (%s): cut it with --time (e.g. --time "
	    "0%%-10%%), --min-time, --tid, --sym or --depth%s",
	    d->path, chrome ? "Chrome JSON" : "FXT trace",
	    d->filt || vo->min_time || vo->depth ? "at most " : "", mb,
	    frames,
	    chrome ? "a browser cannot parse JSON text over 512 MB, and "
		     "speedscope and chrome://tracing fail well before"
		   : "Perfetto UI holds about 2 GB in the browser",
	    chrome ? ", or write -f fxt (a quarter of the size)" : "");
	return 0;
}

/* A stack view whose filters left no frame says so (when the trace had
 * some): the empty output is not a trace without calls. */
void say_no_frames(struct rd *d, const char *path)
{
	struct strace_stack_stats st;
	const struct view_opts *vo = &d->o->vo;

	view_stack_stats(d->view, &st);
	if (view_frames_shown(d->view) || !st.frames ||
	    (!d->filt && !vo->min_time && !vo->depth))
		return;
	err("%s: the filters left none of the trace's %" PRIu64 " frames%s: "
	    "the output is empty; loosen them (-f report without them lists "
	    "the functions and their times)",
	    path, st.frames,
	    vo->min_time ? " (none lasted --min-time)" : "");
}

/* tree and report --srcline: a function's declaration from the DWARF
 * layer */
static int view_srcline(void *arg, uint64_t addr, const char **file,
			unsigned *line)
{
	struct rd *d = arg;

	return srclines_function(d->srcl, d->names, addr, file, line);
}

int setup_view(struct rd *d)
{
	struct view_opts vo;
	int rc;

	if (!d->o->view)
		return 0;
	vo = d->o->vo;
	if (d->srcl) {
		vo.srcline = view_srcline;
		vo.srcline_arg = d;
	}
	if (d->o->inline_frames) {
		char dir[4096];

		rc = read_inline_new(d->names,
				     read_cache_dir(d->o, dir, sizeof(dir)),
				     &d->inl);
		if (rc < 0) {
			err("out of memory");
			return -1;
		}
		vo.inlines = read_inline_resolve;
		vo.inlines_arg = d->inl;
	}
	rc = view_new(&vo, d->names, d->filt, &d->out, &d->view);
	if (rc < 0) {
		/* (-1: a format that could not open said why) */
		if (rc == -ENOMEM)
			err("out of memory");
		return -1;
	}
	return 0;
}
