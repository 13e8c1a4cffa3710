/* SPDX-License-Identifier: MIT */
/*
 * cli/capture_raw.c - ptrace-capture --pt: a raw Intel PT stream and the
 * code it ran (--raw, --elf) decoded by strace_raw_decode() into the
 * ring, and what is said about it (the summary, each failure with what
 * to do).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/capture.h"

/* A --pt decode failed: what, on which input, and what to do. */
static void raw_error(int rc, const struct strace_raw_opts *o,
		      const struct strace_raw_fault *f)
{
	const struct strace_raw_section *s =
		f->section >= 0 ? &o->secs[f->section] : NULL;
	const char *what = s ? s->path : o->pt_path;
	const char *opt = s ? (s->elf ? "--elf" : "--raw") : "--pt";

	switch (-rc) {
	case STRACE_E_RAW_OVERLAP: {
		const struct strace_raw_section *t = &o->secs[f->other];
		fprintf(stderr,
			PROG ": %s %s overlaps %s %s at 0x%llx-0x%llx: every "
			     "address must come from one section; cut one "
			     "of them with :OFFSET-SIZE\n",
			opt, s->path, t->elf ? "--elf" : "--raw", t->path,
			(unsigned long long)f->start,
			(unsigned long long)f->end);
		return;
	}
	case STRACE_E_RAW_RANGE:
		fprintf(stderr,
			PROG ": %s %s: %s (the file has %llu bytes): give an "
			     "OFFSET and SIZE within it\n",
			opt, what, strace_strerror(rc),
			(unsigned long long)f->file_size);
		return;
	case STRACE_E_RAW_NOTELF:
		fprintf(stderr,
			PROG ": --elf %s: not a 64-bit ELF file: load its "
			     "bytes with --raw %s@ADDR instead\n",
			what, what);
		return;
	case STRACE_E_RAW_NOLOAD:
		fprintf(stderr,
			PROG ": --elf %s: the file has no PT_LOAD segment "
			     "with bytes (a debug file?): give the file that "
			     "was run\n",
			what);
		return;
	case STRACE_E_RAW_NOTPIE:
		fprintf(stderr,
			PROG ": --elf %s: a fixed-address (ET_EXEC) program "
			     "runs where its headers say: drop @BASE\n",
			what);
		return;
	case STRACE_E_RAW_WRAP:
		fprintf(stderr,
			PROG ": %s %s: %llu bytes at 0x%llx wrap around the "
			     "end of the 64-bit address space (the last "
			     "address is 0xffffffffffffffff): give the ADDR "
			     "the code ran at\n",
			opt, what, (unsigned long long)f->size,
			(unsigned long long)f->start);
		return;
	case STRACE_E_RAW_EMPTY:
		fprintf(stderr, PROG ": %s %s: the file is empty\n", opt, what);
		return;
	case STRACE_E_RAW_NOPSB:
		fprintf(stderr,
			PROG ": --pt %s: no PSB packet in the file, so no "
			     "place to start decoding: is it raw Intel PT "
			     "(not a perf.data: decode that with -i)? A dump "
			     "must hold at least one PSB; a tracer that "
			     "writes none needs a psb_period\n",
			o->pt_path);
		return;
	case ENODEV:
		fprintf(stderr,
			PROG ": %s %s: not a regular file (a FIFO, a device or "
			     "a directory): copy the data to a file\n",
			opt, what);
		return;
	case ENOENT:
	case EACCES:
	case EISDIR:
		fprintf(stderr, PROG ": %s %s: %s: check the path%s\n", opt,
			what, strerror(-rc),
			-rc == EACCES ? " and its permissions" : "");
		return;
	}
	fprintf(stderr, PROG ": %s %s: %s\n", opt, what,
		strace_strerror(rc));
}

int capture_raw(const struct capture_opts *o, struct strace_ring *ring)
{
	struct capture_ui ui;
	capture_ui_init(&ui, o->quiet, ring);
	struct strace_raw_opts ro = {
		.size = sizeof(ro),
		.pt_path = o->pt,
		.secs = o->secs,
		.nsecs = o->nsecs,
		.ring = ring,
		.walk_flags = o->flags,
		.types = o->types_arg ? &o->types : NULL,
		.cpu = o->cpu,
		.pid = o->pid ? (uint32_t)o->pid : o->tid,
		.tid = o->tid ? o->tid : (uint32_t)o->pid,
		.jobs = o->jobs,
		.piece_bytes = (size_t)o->piece,
		.progress = capture_on_progress,
		.cb_arg = &ui,
		.names = o->names,
	};
	struct strace_raw_stats rs;
	struct strace_raw_fault rf;
	int rc = strace_raw_decode(&ro, &rs, &rf);
	if (ui.shown)
		fputc('\n', stderr);
	if (rc < 0) {
		raw_error(rc, &ro, &rf);
		capture_ring_drop(ring);
		return 1;
	}
	double t = capture_now() - ui.t0;
	if (rs.nosync)
		fprintf(stderr,
			PROG ": warning: --pt %s: the decoder found no "
			     "PSB to start at (a PSB+ with nothing "
			     "after it?): nothing was decoded\n",
			o->pt);
	if (!o->quiet)
		fprintf(stderr,
			PROG ": %s: %.1f MB of PT in %.3f s: %llu "
			     "branches, %llu events, %llu decode "
			     "errors, %llu overflows%s\n",
			o->pt, (double)rs.pt_bytes / 1e6, t,
			(unsigned long long)rs.branches,
			(unsigned long long)rs.events,
			(unsigned long long)rs.errors,
			(unsigned long long)rs.overflows,
			o->cpu.family ? ""
				      : " (processor unknown: the "
					"safe errata workarounds only; "
					"--cpu F/M names it)");
	if (!o->quiet)
		capture_say_ring(o, ring);
	capture_ring_close(ring);
	return 0;
}
