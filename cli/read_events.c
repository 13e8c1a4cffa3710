/* SPDX-License-Identifier: MIT */
/*
 * cli/read_events.c - ptrace-read's read: the batches of a ring
 * through the filters into a format, a view, the plugins or a saved ring
 * (the per-event code: one translation unit), the threads of a saved ring
 * merged by time (-f tree), and cmd_read(), which runs them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"
#include "ringmsg.h"

/* The plugins get ev[from, to) in one dispatch (a run of kept events). */
static void plugins_run(struct rd *d, const struct strace_event *ev,
			size_t from, size_t to)
{
	if (to > from && d->plugins && !d->plugin_stop)
		d->plugin_stop =
			strace_plugins_dispatch(d->plugins, ev + from, to - from);
}

/* Hand events to the plugins (those the filters keep; show_filtered hands
 * over its own, with the --sym scope). */
static void plugins_feed(struct rd *d, const struct strace_event *ev,
			 size_t n)
{
	if (!d->plugins || d->plugin_stop)
		return;
	if (!d->filt && !d->o->types) {
		plugins_run(d, ev, 0, n);
		return;
	}
	/* each run of kept events in one dispatch (one lock, one look at
	 * the names) */
	for (size_t i = 0, j; i < n && !d->plugin_stop; i = j + 1) {
		for (j = i; j < n && fmt_wanted(&d->flt, ev[j].type) &&
			    (!d->filt || strace_filter_event(d->filt, &ev[j]));
		     j++)
			;
		plugins_run(d, ev, i, j);
	}
}

/* Losses that happened in the ring itself, recorded there as lost events
 * (docs/events.md): they make the exit status 3 like the reader's own.
 * The batch's types are noted for the view (d->seen: bit 1 << type % 64,
 * the views' view_feed()). */
static void count_ring_losses(struct rd *d, const struct strace_event *ev,
			      size_t n)
{
	uint64_t seen = 0;

	for (size_t i = 0; i < n; i++) {
		/* the first touch of the batch: bring it in ahead (the
		 * formats then find it in the cache) */
		__builtin_prefetch(&ev[i + 256]);
		seen |= 1ull << (ev[i].type & 63);
	}
	d->seen = seen;
	if (!(seen >> STRACE_EV_LOST & 1))
		return;
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == STRACE_EV_LOST &&
		    (ev[i].flags == STRACE_LOST_READER ||
		     ev[i].flags == STRACE_LOST_WRITER ||
		     ev[i].flags == STRACE_LOST_WRITE))
			d->ring_lost += ev[i].a;
}

static int ring_put(struct rd *d, const struct strace_event *e)
{
	struct strace_event *s = strace_writer_slot(d->w);

	if (!s) {
		int rc = strace_writer_error(d->w);
		ringmsg_write_error(PROG, d->o->output, rc, "-o", NULL);
		return -1;
	}
	*s = *e;
	return 0;
}

/* Show a loss the reader itself suffered, at its place in the stream. */
static int show_lost(struct rd *d, uint64_t count, uint64_t first)
{
	struct strace_event e;

	d->nlost += count;
	fmt_lost_event(&e, count, first);
	plugins_feed(d, &e, 1);
	if (d->view) /* an instant of the viewer formats, not a text line */
		return view_feed(d->view, &e, 1, ~0ull) == 0 ? 0 : -1;
	if (!fmt_wanted(&d->flt, STRACE_EV_LOST))
		return 0;
	switch (d->o->format) {
	case FMT_TEXT:
		d->out.p = fmt_text_event(&d->fmt, d->out.p, &e, first);
		break;
	case FMT_JSONL:
		d->out.p = fmt_json_event(&d->fmt, d->out.p, &e, first);
		break;
	case FMT_RAW:
		memcpy(d->out.p, &e, sizeof(e));
		d->out.p += sizeof(e);
		break;
	case FMT_RING:
		return ring_put(d, &e);
	case FMT_NONE:
		return 0;
	}
	if (d->out.p > d->out.limit)
		return out_flush(&d->out);
	return 0;
}

/* Whether the read-side filters keep e (fed to their stacks in order). */
static int filter_keeps(struct rd *d, const struct strace_event *e)
{
	const struct strace_frame *fr;
	size_t n;
	int keep, in;

	if (!d->filt)
		return 1;
	keep = strace_filter_event(d->filt, e);
	if (!d->fstack)
		return keep;
	/* in the functions --sym asks for before the event or after it (a
	 * call into them, a return out of them) */
	n = strace_stack_frames(d->fstack, e->tid, &fr);
	in = strace_filter_in_scope(d->filt, fr, n, NULL);
	strace_stack_feed(d->fstack, e, 1);
	n = strace_stack_frames(d->fstack, e->tid, &fr);
	in |= strace_filter_in_scope(d->filt, fr, n, NULL);
	return keep && (in || (e->type >= STRACE_EV_PROCESS &&
			       e->type <= STRACE_EV_SYMBOL));
}

/* Events one by one through the filters (the slow path of --time,
 * --tid, --sym ..., and of -F); the plugins get each run of kept events
 * at once. */
static int show_filtered(struct rd *d, const struct strace_event *ev,
			 size_t n, uint64_t seq)
{
	struct out *o = &d->out;
	size_t run = 0; /* where the run of kept events ending at i began */
	char *line;

	for (size_t i = 0; i < n; i++) {
		const struct strace_event *e = &ev[i];
		if (d->fields.n)
			fields_see(&d->fields, e);
		if (!filter_keeps(d, e) || !fmt_wanted(&d->flt, e->type)) {
			plugins_run(d, ev, run, i);
			run = i + 1;
			continue;
		}
		switch (d->o->format) {
		case FMT_TEXT:
			line = o->p;
			o->p = d->fields.n
				       ? fields_text(&d->fields, d->names,
						     o->p, e, seq + i)
				       : fmt_text_event(&d->fmt, o->p, e,
							seq + i);
			if (d->srcl)
				o->p = srclines_append(d->srcl, d->names, line,
						       o->p, e, 0);
			break;
		case FMT_JSONL:
			line = o->p;
			o->p = d->fields.n
				       ? fields_json(&d->fields, d->names,
						     o->p, e, seq + i)
				       : fmt_json_event(&d->fmt, o->p, e,
							seq + i);
			if (d->srcl)
				o->p = srclines_append(d->srcl, d->names, line,
						       o->p, e, 1);
			break;
		case FMT_RAW:
			memcpy(o->p, e, sizeof(*e));
			o->p += sizeof(*e);
			break;
		case FMT_RING:
			if (ring_put(d, e) < 0)
				return -1;
			continue;
		case FMT_NONE:
			continue;
		}
		if (out_room(o) < 0)
			return -1;
	}
	plugins_run(d, ev, run, n);
	return 0;
}

/*
 * The batch loops' flush: once the end of what they built, p (kept in a
 * local, o->p behind it), passed the limit, write the buffer out. Returns
 * where to go on building: p, or the buffer's start after a flush; NULL
 * when writing failed (a message was printed).
 */
static inline char *flush_past_limit(struct out *o, char *p)
{
	if (p <= o->limit)
		return p;
	o->p = p;
	return out_flush(o) < 0 ? NULL : o->p;
}

/* Format n events at ev (positions seq...): the hot path. */
static int show_events(struct rd *d, const struct strace_event *ev, size_t n,
		       uint64_t seq)
{
	struct out *o = &d->out;
	char *p = o->p;
	size_t i, done;

	if (d->view) {
		plugins_feed(d, ev, n);
		return view_feed(d->view, ev, n, d->seen) == 0 ? 0 : -1;
	}
	/* (--srcline: the slow path too, the fast one stays as it is) */
	if (d->filt || d->fields.n || d->srcl)
		return show_filtered(d, ev, n, seq);
	plugins_feed(d, ev, n);
	switch (d->o->format) {
	case FMT_TEXT:
	case FMT_JSONL:
		while (n) {
			p = d->o->format == FMT_TEXT
				    ? fmt_text_batch(&d->fmt, p, o->limit, ev, n,
						     seq, &d->flt, &done)
				    : fmt_json_batch(&d->fmt, p, o->limit, ev, n,
						     seq, &d->flt, &done);
			ev += done;
			seq += done;
			n -= done;
			p = flush_past_limit(o, p);
			if (!p)
				return -1;
		}
		break;
	case FMT_RAW:
		if (!d->o->types) {
			/* every event as it is: written from the ring itself
			 * (after what is buffered), not copied first */
			o->p = p;
			if (out_flush(o) < 0 ||
			    out_write(o, ev, n * sizeof(*ev)) < 0)
				return -1;
			return 0;
		}
		for (i = 0; i < n; i++) {
			const struct strace_event *e = &ev[i];
			if (!fmt_wanted(&d->flt, e->type))
				continue;
			memcpy(p, e, sizeof(*e));
			p += sizeof(*e);
			p = flush_past_limit(o, p);
			if (!p)
				return -1;
		}
		break;
	case FMT_RING:
		for (i = 0; i < n; i++) {
			if (!fmt_wanted(&d->flt, ev[i].type))
				continue;
			if (ring_put(d, &ev[i]) < 0)
				return -1;
		}
		break;
	case FMT_NONE:
		break;
	}
	o->p = p;
	return 0;
}

static int one_batch(struct rd *d, const struct strace_batch *b)
{
	size_t k;

	if (!d->started && (b->lost || b->n)) {
		d->started = 1;
		d->first_seq = b->seq - b->lost;
	}
	if (b->lost && show_lost(d, b->lost, b->seq - b->lost) < 0)
		return -1;
	if (!b->n)
		return 0;
	d->nread += b->n;
	if (d->names) {
		int rc = strace_names_update(d->names);
		uint64_t bad;
		if (rc == -ENOMEM) {
			err("out of memory reading the names of %s", d->path);
			return -1;
		}
		if (rc < 0 && strace_names_corrupt(d->names, &bad))
			err("%s: warning: the string table is damaged at offset "
			    "%" PRIu64 " (%s); names defined after it are "
			    "shown as unknown",
			    d->path, bad, strace_strerror(rc));
	}
	if (d->dst) {
		int rc = strace_ring_sync_strings(d->dst, d->ring);
		if (rc < 0) {
			err("%s: cannot copy the string table of %s: %s",
			    d->o->output, d->path, strace_strerror(rc));
			return -1;
		}
	}
	if (!d->flight) {
		/* lossless and archive rings: nothing moves under us, read
		 * in place, then release */
		count_ring_losses(d, b->ev, b->n);
		if (show_events(d, b->ev, b->n, b->seq) < 0)
			return -1;
		k = strace_reader_release(d->r, b);
		if (k) {
			/* cannot happen outside flight mode; counted anyway */
			d->nread -= k < b->n ? k : b->n;
			return show_lost(d, k, b->seq);
		}
		return 0;
	}
	/*
	 * Flight recorder: a writer may overwrite the batch while we hold
	 * it. Copy it, then release: release says how many at the front of
	 * the copy may be torn; the rest of the copy is good.
	 */
	strace_batch_copy(d->copy, b);
	k = strace_reader_release(d->r, b);
	if (k > b->n)
		k = b->n;
	d->nread -= k;
	if (k && show_lost(d, k, b->seq) < 0)
		return -1;
	count_ring_losses(d, d->copy + k, b->n - k);
	return show_events(d, d->copy + k, b->n - k, b->seq + k);
}

/* --- a saved ring's threads, merged by time (-f tree) --------------------- */

/* A run of one thread's events: positions [start, end). */
struct run {
	uint64_t start, end;
	uint32_t tid;
	uint32_t next; /* the thread's next run, or UINT32_MAX */
};

struct mthread {
	uint32_t tid;
	uint32_t run;  /* the current run, UINT32_MAX when done */
	uint64_t pos;  /* the next position to read */
	uint64_t head; /* the time of the event at pos */
	uint32_t last; /* the thread's last run (while building) */
};

/* Feed events from pos on while they are not later than limit (or until
 * the run ends); the thread's pos and head move on. */
static int merge_step(struct rd *d, struct mthread *t, const struct run *runs,
		      uint64_t limit)
{
	struct strace_batch b;

	while (t->run != UINT32_MAX) {
		const struct run *r = &runs[t->run];
		long n;
		size_t k = 0;
		if (t->pos >= r->end) {
			t->run = r->next;
			if (t->run != UINT32_MAX)
				t->pos = runs[t->run].start;
			continue;
		}
		strace_reader_seek(d->r, t->pos);
		n = strace_reader_next(d->r, &b, (size_t)(r->end - t->pos), 0);
		if (n <= 0) {
			if (n < 0)
				ring_error(d->path, (int)n, "read the ring");
			return n < 0 ? -1 : 0;
		}
		/* a thread's events stay in its order; definitions (time 0)
		 * go with the events around them */
		while (k < (size_t)n && (!b.ev[k].time || b.ev[k].time <= limit))
			k++;
		count_ring_losses(d, b.ev, k);
		if (k && show_events(d, b.ev, k, b.seq) < 0)
			return -1;
		t->pos += k;
		if (k < (size_t)n) {
			t->head = b.ev[k].time;
			return 0;
		}
	}
	t->head = UINT64_MAX;
	return 0;
}

/*
 * Read a saved ring with each thread's events in its order and the
 * threads merged by time: a first pass notes where each thread's runs
 * of events are (memory: the runs, not the events); when the ring is in
 * time order already, or has one thread, it is read straight.
 */
static int read_merged(struct rd *d)
{
	struct strace_batch b;
	struct run *runs = NULL;
	struct mthread *th = NULL;
	size_t nruns = 0, rcap = 0, nth = 0, tcap = 0;
	uint64_t prev = 0, pos = 0;
	int ordered = 1, rc = 0;
	long n;

	while ((n = strace_reader_next(d->r, &b, BATCH_MAX, 0)) > 0) {
		for (long i = 0; i < n; i++, pos++) {
			const struct strace_event *e = &b.ev[i];
			if (e->time) {
				ordered &= e->time >= prev;
				prev = e->time;
			}
			if (nruns && runs[nruns - 1].tid == e->tid &&
			    runs[nruns - 1].end == b.seq + (uint64_t)i) {
				runs[nruns - 1].end++;
				continue;
			}
			if (nruns == rcap) {
				rcap = rcap ? 2 * rcap : 1024;
				struct run *nr = realloc(runs, rcap * sizeof(*nr));
				if (!nr)
					goto nomem;
				runs = nr;
			}
			runs[nruns] = (struct run){b.seq + (uint64_t)i,
						   b.seq + (uint64_t)i + 1,
						   e->tid, UINT32_MAX};
			size_t k;
			for (k = 0; k < nth && th[k].tid != e->tid; k++)
				;
			if (k == nth) {
				if (nth == tcap) {
					tcap = tcap ? 2 * tcap : 64;
					struct mthread *nt =
						realloc(th, tcap * sizeof(*nt));
					if (!nt)
						goto nomem;
					th = nt;
				}
				th[nth++] = (struct mthread){
					e->tid, (uint32_t)nruns, 0, 0,
					(uint32_t)nruns};
			} else {
				runs[th[k].last].next = (uint32_t)nruns;
				th[k].last = (uint32_t)nruns;
			}
			nruns++;
		}
		strace_reader_release(d->r, &b);
	}
	if (n < 0) {
		ring_error(d->path, (int)n, "read the ring");
		rc = -1;
		goto out;
	}
	d->nread = pos;
	if (d->names)
		(void)strace_names_update(d->names);
	/* the second pass: straight, or the threads by time */
	for (size_t k = 0; k < nth; k++) {
		th[k].pos = nruns ? runs[th[k].run].start : 0;
		th[k].head = 0;
	}
	if (ordered || nth < 2) {
		strace_reader_seek(d->r, nruns ? runs[0].start : 0);
		while ((n = strace_reader_next(d->r, &b, BATCH_MAX, 0)) > 0) {
			count_ring_losses(d, b.ev, (size_t)n);
			if (show_events(d, b.ev, (size_t)n, b.seq) < 0) {
				rc = -1;
				goto out;
			}
			strace_reader_release(d->r, &b);
		}
		goto out;
	}
	for (;;) {
		size_t best = nth, second = nth;
		for (size_t k = 0; k < nth; k++) {
			if (th[k].head == UINT64_MAX)
				continue;
			if (best == nth || th[k].head < th[best].head) {
				second = best;
				best = k;
			} else if (second == nth ||
				   th[k].head < th[second].head) {
				second = k;
			}
		}
		if (best == nth)
			break;
		if (merge_step(d, &th[best], runs,
			       second == nth ? UINT64_MAX
					     : th[second].head) < 0) {
			rc = -1;
			break;
		}
	}
	goto out;
nomem:
	err("out of memory merging the threads of %s", d->path);
	rc = -1;
out:
	free(runs);
	free(th);
	return rc;
}

/* The types --types keeps (all but pad without it). Returns 0, or
 * EXIT_USAGE after the message. */
static int read_types(struct rd *d)
{
	const char *bad = NULL;
	size_t bad_len = 0;

	if (!d->o->types) {
		/* everything but pad, values the table does not name too */
		memset(&d->flt.set, 0xff, sizeof(d->flt.set));
		d->flt.set.bits[0] &= ~1ull;
		d->flt.unknown = 1;
		return 0;
	}
	if (strace_typeset_parse(&d->flt.set, d->o->types, &bad, &bad_len) < 0)
		return usage_error("--types: '%.*s' matches no event type (see "
				   "'" PROG " --list-types'; patterns are globs "
				   "like 'call,ret*' or '-block')",
				   (int)bad_len, bad ? bad : "");
	return 0;
}

/* The ring at path opened, its mode looked at, its names. Returns 0, or
 * the exit status after the message (nothing left open). */
static int read_start(struct rd *d, const char *path)
{
	const struct read_opts *o = d->o;
	struct strace_ring_stat st;
	int rc, timed_out;

	catch_sigbus(path);
	rc = open_ring(o, path, &d->ring, &timed_out);
	if (rc < 0) {
		if (timed_out)
			err("%s: the ring did not appear within %ld ms "
			    "(--timeout); check that the writer is running "
			    "and uses this path",
			    path, o->timeout_ms);
		else
			ring_error(path, rc, "open the ring");
		return EXIT_ERR;
	}
	rc = strace_ring_stat(d->ring, &st);
	if (rc < 0) {
		ring_error(path, rc, "read the header");
		strace_ring_close(d->ring);
		return EXIT_ERR;
	}
	d->flight = st.mode == STRACE_RING_FLIGHT;
	if (d->flight) {
		d->copy = malloc(BATCH_MAX * sizeof(*d->copy));
		if (!d->copy) {
			err("out of memory");
			strace_ring_close(d->ring);
			return EXIT_ERR;
		}
	}
	if (strace_names_new(d->ring, &d->names) < 0) {
		err("out of memory");
		free(d->copy);
		strace_ring_close(d->ring);
		return EXIT_ERR;
	}
	return 0;
}

/* Where the read goes: -o checked against the ring, the saved ring of -f
 * ring, or the output (none with keep). Returns 0 or EXIT_ERR. */
static int read_output(struct rd *d, const char *path, int keep)
{
	const struct read_opts *o = d->o;

	if (o->output && same_file(o->output, path)) {
		err("%s: the output is the ring being read; writing there would "
		    "destroy it: choose another -o FILE",
		    o->output);
		return EXIT_ERR;
	}
	if (o->format == FMT_RING)
		return save_ring_create(d) < 0 ? EXIT_ERR : 0;
	/* (-f uftrace writes its files into the directory -o names) */
	if (o->format != FMT_NONE && !keep &&
	    out_open(&d->out, PROG,
		     o->view == 1 + VIEW_UFTRACE ? NULL : o->output) < 0)
		return EXIT_ERR;
	return 0;
}

/* Batch after batch until the end (or, with --follow, until every writer
 * closed or Ctrl-C). Returns the exit status so far; *status the
 * reader's. */
static int read_loop(struct rd *d, int *status)
{
	const struct read_opts *o = d->o;
	struct strace_batch b;

	for (;;) {
		int pending = d->out.buf && d->out.p != d->out.buf;
		int wait = o->follow && !pending ? 200 : 0;
		long n = strace_reader_next(d->r, &b, BATCH_MAX, wait);

		if (n < 0) {
			ring_error(d->path, (int)n, "read the ring");
			return EXIT_ERR;
		}
		if (one_batch(d, &b) < 0)
			return EXIT_ERR;
		if (d->plugins) {
			/* between two batches: no callback is running */
			control_poll(&d->ctl, plugin_command, d);
			if (d->plugin_stop)
				return EXIT_OK;
		}
		/* (a writer that never pauses must not keep Ctrl-C and
		 * SIGTERM from ending a --follow) */
		if (n > 0 && !stop_flag)
			continue;
		if (pending && o->follow && !stop_flag) {
			/* caught up: show what there is, then wait */
			if (out_flush(&d->out) < 0)
				return EXIT_ERR;
			continue;
		}
		*status = strace_reader_status(d->r);
		if (*status != STRACE_READER_LIVE)
			return EXIT_OK;
		if (!o->follow || stop_flag)
			return EXIT_OK;
		if (pending) {
			if (out_flush(&d->out) < 0)
				return EXIT_ERR;
		} else if (d->w && strace_writer_flush(d->w) < 0) {
			return EXIT_ERR;
		}
	}
}

/* After the read: the view finished, then what the user must know (a
 * filter that matched nothing, a writer still writing, losses). Returns
 * the exit status. */
static int read_summary(struct rd *d, int status, int ret)
{
	const char *path = d->path;
	struct strace_ring_stat st;
	int rc;

	if (d->view && ret == EXIT_OK && (rc = view_finish(d->view)) < 0) {
		if (rc == -ENOMEM)
			err("out of memory");
		ret = EXIT_ERR;
	}
	if (d->filt && ret == EXIT_OK)
		say_unmatched(d, path);
	if (d->view && ret == EXIT_OK)
		say_no_frames(d, path);
	if (ret == EXIT_OK && status == STRACE_READER_LIVE && !d->o->follow &&
	    !d->plugin_stop && strace_ring_stat(d->ring, &st) == 0 &&
	    st.writers_live) {
		/* the writer goes on: what was read is what was there */
		err("%s: a writer is still writing this ring: the output holds "
		    "the %" PRIu64 " events there were when it was read; read "
		    "with --follow to wait for the rest (until every writer "
		    "closes)",
		    path, d->nread);
		ret = EXIT_INCOMPLETE;
	}
	if (ret == EXIT_OK &&
	    (d->nlost || d->ring_lost || status == STRACE_READER_WRITER_GONE))
		ret = EXIT_INCOMPLETE;
	if (d->nlost)
		err("%s: %" PRIu64 " events lost (overwritten in the ring "
		    "before this reader got to them), %" PRIu64
		    " read; the output has 'lost' entries where they were; "
		    "use a lossless ring or a bigger one to keep them",
		    path, d->nlost, d->nread);
	if (d->ring_lost)
		err("%s: the ring records %" PRIu64 " lost events (a writer "
		    "died holding positions, could not write because the file "
		    "system was full, or a saved reader had lost them); the "
		    "output has 'lost' entries where they were",
		    path, d->ring_lost);
	if (status == STRACE_READER_WRITER_GONE &&
	    strace_ring_stat(d->ring, &st) == 0)
		err("%s: writer gone: a writer died without closing the ring; "
		    "it holds %" PRIu64 " committed events, and this reader "
		    "went through all it could reach (from position %" PRIu64
		    "): %" PRIu64 " read, %" PRIu64 " lost",
		    path, st.committed, d->started ? d->first_seq : st.committed,
		    d->nread, d->nlost);
	return ret;
}

/*
 * Read the ring at path and show it as the options say; with keep (-f
 * report --diff: o->vo.rows_only), print nothing but hand the report
 * view, finished, to the caller (who frees it), unless reading failed.
 * Returns the exit status.
 */
int cmd_read(const struct read_opts *o, const char *path, struct view **keep)
{
	struct rd d;
	int rc, status = STRACE_READER_LIVE, ret;
	char dir[4096];
	const char *cache_dir;

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.fields = o->fields;
	d.seen = ~0ull; /* (until a batch is counted) */
	d.path = path;

	ret = read_types(&d);
	if (!ret)
		ret = read_start(&d, path);
	if (ret)
		return ret;
	fmt_setup(&d.fmt, d.names, !o->no_comm);
	cache_dir = read_cache_dir(o, dir, sizeof(dir));
	if ((o->srcline && !(d.srcl = srclines_new(cache_dir))) ||
	    fields_open(&d.fields, cache_dir) < 0) {
		err("--srcline: no memory");
		ret = EXIT_ERR;
		goto out_ring;
	}
	ret = setup_plugins(&d);
	if (!ret)
		ret = read_output(&d, path, keep != NULL);
	if (ret)
		goto out_ring;

	rc = strace_reader_open(d.ring, o->from_end, &d.r);
	if (rc < 0) {
		ring_error(path, rc, "attach a reader to the ring");
		ret = EXIT_ERR;
		goto out_out;
	}
	if (setup_filters(&d) < 0 || setup_view(&d) < 0) {
		ret = d.usage ? EXIT_USAGE : EXIT_ERR;
		goto out_reader;
	}
	if (d.view && warn_size(&d) < 0) {
		ret = EXIT_ERR;
		goto out_reader;
	}
	if (o->follow)
		catch_signals();
	if (d.view && o->vo.kind == VIEW_TREE && !o->follow &&
	    !o->from_end) {
		/* a saved ring: threads merged by time */
		if (read_merged(&d) < 0) {
			ret = EXIT_ERR;
			goto out_reader;
		}
		status = strace_reader_status(d.r);
	} else {
		ret = read_loop(&d, &status);
	}
	ret = read_summary(&d, status, ret);

out_reader:
	/* the frames still open are left, then every fini runs */
	strace_plugins_free(d.plugins);
	d.plugins = NULL;
	strace_reader_close(d.r);
out_out:
	if (d.w) {
		rc = strace_writer_close(d.w);
		if (rc < 0 && ret != EXIT_ERR) {
			ringmsg_write_error(PROG, o->output, rc, "-o", NULL);
			ret = EXIT_ERR;
		}
	}
	if (d.dst)
		strace_ring_close(d.dst);
	if (d.out.buf && out_close(&d.out) < 0)
		ret = EXIT_ERR;
out_ring:
	strace_plugins_free(d.plugins);
	control_close(&d.ctl);
	if (keep && (ret == EXIT_OK || ret == EXIT_INCOMPLETE)) {
		*keep = d.view;
		d.view = NULL;
	}
	view_free(d.view);
	read_inline_free(d.inl);
	strace_stack_free(d.fstack);
	strace_filter_free(d.filt);
	fields_fini(&d.fields);
	srclines_free(d.srcl);
	fmt_cleanup(&d.fmt);
	strace_names_free(d.names);
	free(d.copy);
	strace_ring_close(d.ring);
	return ret;
}
