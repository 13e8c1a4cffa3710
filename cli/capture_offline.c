/* SPDX-License-Identifier: MIT */
/*
 * cli/capture_offline.c - ptrace-capture -i: a perf.data (a file, perf's
 * pipe mode copied to one, or a bundle) decoded by strace_offline_decode()
 * into the ring, and what is said about it (the summary, each failure
 * with what to do).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/capture.h"
#include "cli/capture_archive.h"
#include "cli/ringmsg.h"
#include "pt_backend/perf/perf.h"

/*
 * A perf.data cut short while it is decoded (truncated, or rewritten by
 * perf record -o) raises SIGBUS at the next touch of a page it lost, on
 * whichever decoding thread. strace_perf_sigbus() turns the lost pages
 * into zeros, and the decode runs to its end and says what was lost
 * (-STRACE_E_PERF_SHRANK): the ring is left complete up to there, its writers
 * closed. Any other SIGBUS keeps its default action: the access is made
 * again and kills the process as before.
 */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	if (!strace_perf_sigbus(si->si_addr))
		signal(sig, SIG_DFL);
	errno = saved;
}

static void catch_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
}

/* -i in perf's pipe mode: the perf.data file it is copied into, removed
 * at exit */
static char spool[PATH_MAX];

static void remove_spool(void)
{
	if (spool[0])
		unlink(spool);
}

/*
 * -i -, a FIFO, or a file in perf's pipe mode ('perf record -o -', 'perf
 * inject -o -'): copied as it comes into a perf.data file under $TMPDIR
 * (strace_perf_pipe_copy()), which *input then names. Returns 0 (also
 * for a perf.data file, left as it is), or the exit status after a
 * message.
 */
int capture_pipe_input(const char **input)
{
	const char *dir = getenv("TMPDIR");
	unsigned char head[16];
	struct stat st;
	uint64_t off;
	int fd, rc, tmp;

	if (!strcmp(*input, "-")) {
		fd = 0;
	} else {
		if (stat(*input, &st) < 0 ||
		    !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
			return 0; /* (the decode says what it is) */
		fd = open(*input, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
	}
	rc = strace_perf_pipe_head(fd, head);
	if (rc <= 0 && fd && S_ISREG(st.st_mode)) {
		close(fd); /* a perf.data file: decoded where it is */
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": -i %s: cannot read it: %s\n", *input,
			strerror(-rc));
		if (fd)
			close(fd);
		return 1;
	}
	if (rc == 0) {
		fprintf(stderr,
			PROG ": -i %s: not perf.data in pipe mode (no "
			     "'PERFILE2' header of 16 bytes): give what 'perf "
			     "record -o -' or 'perf inject -o -' writes, or a "
			     "perf.data file\n",
			*input);
		if (fd)
			close(fd);
		return 1;
	}
	snprintf(spool, sizeof(spool), "%s/ptrace-capture-pipe.XXXXXX",
		 dir && *dir ? dir : "/tmp");
	tmp = mkstemp(spool);
	if (tmp < 0) {
		fprintf(stderr,
			PROG ": -i %s: cannot make a file to copy the pipe "
			     "into (%s): %s; set TMPDIR to a directory with "
			     "room\n",
			*input, spool, strerror(errno));
		spool[0] = 0;
		if (fd)
			close(fd);
		return 1;
	}
	close(tmp);
	atexit(remove_spool);
	rc = strace_perf_pipe_copy(fd, head, spool, &off);
	if (fd)
		close(fd);
	if (rc < 0) {
		fprintf(stderr,
			PROG ": -i %s: perf.data in pipe mode, at byte %llu: "
			     "%s%s\n",
			*input, (unsigned long long)off, strace_strerror(rc),
			rc == -STRACE_E_PERF_TRUNCATED
				? " (the stream ended inside a record: perf "
				  "was stopped before it finished)"
			: rc == -ENOSPC ? "; set TMPDIR to a directory with room"
					: "");
		return 1;
	}
	*input = spool;
	return 0;
}

/* -STRACE_E_PERF_SHRANK: what was lost, and what the ring still holds
 * (kept when its writers closed, else removed). */
static void say_shrank(struct strace_ring *ring, const char *input,
		       const struct strace_offline_stats *st, uint64_t err_off)
{
	struct stat fst;
	struct strace_ring_stat rs;
	long long now = stat(input, &fst) == 0 ? (long long)fst.st_size : -1;

	fprintf(stderr, PROG ": %s: the file shrank while it was read (",
		input);
	if (st->file_size)
		fprintf(stderr, "%llu bytes when opened, ",
			(unsigned long long)st->file_size);
	fprintf(stderr,
		"%lld now; something truncated or rewrote it): what "
		"it held from offset 0x%llx on is lost",
		now, (unsigned long long)err_off);
	/* The ring holds what was decoded before, and its end. */
	if (strace_ring_stat(ring, &rs) == 0 && rs.writers_closed) {
		fprintf(stderr,
			"; %s holds the events decoded before that, "
			"each stream cut there ending with a lost "
			"event",
			strace_ring_path(ring));
	} else {
		unlink(strace_ring_path(ring));
	}
	fprintf(stderr, "; decode a copy of the recording that "
			"nothing writes to\n");
}

/* -STRACE_E_PERF_TIME: the offending 64-bit word is at err_off */
static void say_bad_time(const char *input, uint64_t err_off)
{
	/* (O_NONBLOCK: the path might have become a FIFO meanwhile) */
	uint64_t v = 0;
	int fd = open(input, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int got = fd >= 0 && pread(fd, &v, 8, (off_t)err_off) == 8;

	if (fd >= 0)
		close(fd);
	fprintf(stderr, PROG ": %s: AUXTRACE_INFO's time_shift is ", input);
	if (got)
		fprintf(stderr, "%llu", (unsigned long long)v);
	else
		fprintf(stderr, "64 or more");
	fprintf(stderr,
		" (at file offset 0x%llx): the kernel's is below 64, "
		"so no TSC can be converted to perf time with it; the "
		"file is damaged: record it again, or decode an "
		"undamaged copy\n",
		(unsigned long long)err_off);
}

/* -STRACE_E_PERF_NOTREG: what -i named instead */
static void say_not_regular(const char *input)
{
	struct stat fst;
	const char *what = "not a regular file";
	int isdir = 0;

	if (stat(input, &fst) == 0) {
		isdir = S_ISDIR(fst.st_mode);
		what = S_ISDIR(fst.st_mode)    ? "a directory"
		       : S_ISCHR(fst.st_mode)  ? "a character device"
		       : S_ISBLK(fst.st_mode)  ? "a block device"
		       : S_ISFIFO(fst.st_mode) ? "a FIFO (a pipe)"
		       : S_ISSOCK(fst.st_mode) ? "a socket"
					       : what;
	}
	fprintf(stderr,
		PROG ": -i %s: %s, not a perf.data file: give the file "
		     "that 'perf record -o FILE' wrote%s (a recording "
		     "piped with 'perf record -o -' cannot be decoded: "
		     "record into a file)\n",
		input, what, isdir ? ", e.g. perf.data in that directory" : "");
}

/* -STRACE_E_PERF_NOTID: the threads --tid could have named */
static void say_no_thread(const char *input, uint32_t tid,
			  const struct strace_offline_stats *st)
{
	fprintf(stderr, PROG ": %s: the recording has no thread %u; ", input,
		tid);
	if (!st->nthreads)
		fprintf(stderr, "it names no thread at all (no COMM "
				"records): decode it without --tid\n");
	for (uint32_t i = 0; i < st->nthreads && i < 8; i++) {
		fprintf(stderr, "%s%u (", i ? ", " : "its threads are ",
			st->threads[i].tid);
		view_fputs_clean(st->threads[i].comm, stderr);
		fprintf(stderr, ", pid %u)", st->threads[i].pid);
	}
	if (st->nthreads > 8)
		fprintf(stderr, " and %u more", st->nthreads - 8);
	if (st->nthreads)
		fprintf(stderr, ": give --tid one of them\n");
}

/* Any other failure: what, where in the file, and what to do. */
static void say_failed(const char *input, int rc, uint64_t err_off)
{
	struct stat fst;

	fprintf(stderr, PROG ": %s: %s", input, strace_strerror(rc));
	if (err_off)
		fprintf(stderr, " (at file offset 0x%llx)",
			(unsigned long long)err_off);
	if (rc == -STRACE_E_PERF_MAGIC)
		fprintf(stderr,
			"; give a perf.data that perf record wrote, or "
			"a bundle that --archive wrote");
	if (rc == -STRACE_E_PERF_TRUNCATED && stat(input, &fst) == 0)
		fprintf(stderr,
			"; the file has %lld bytes: perf writes the "
			"event descriptions and the index last, so a "
			"copy cut short cannot be decoded; copy it "
			"again whole",
			(long long)fst.st_size);
	fprintf(stderr, "\n");
}

/*
 * The decode failed with rc: say why and what to do, and leave no
 * half-written ring behind (but the part of a recording that shrank,
 * whole up to there). named is -i as given. Returns the exit status.
 */
static int offline_failed(const struct capture_opts *o,
			  struct strace_ring *ring, int rc, const char *input,
			  const char *named,
			  const struct strace_offline_stats *st,
			  uint64_t err_off)
{
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG) {
		ringmsg_write_error(PROG, strace_ring_path(ring), rc, "-o",
				    NULL);
		fprintf(stderr, PROG ": %s: removed (incomplete)\n",
			strace_ring_path(ring));
	} else if (rc == -STRACE_E_PERF_SHRANK) {
		say_shrank(ring, input, st, err_off);
		capture_ring_close(ring);
		return 1;
	} else if (rc == -STRACE_E_PERF_TIME) {
		say_bad_time(input, err_off);
	} else if (rc == -STRACE_E_PERF_NOTREG) {
		say_not_regular(input);
	} else if (rc == -STRACE_E_PERF_BUILDID) {
		capture_archive_mismatch(PROG, named, &st->mismatch);
	} else if (rc == -STRACE_E_PERF_NOTID) {
		say_no_thread(input, o->tid, st);
	} else {
		say_failed(input, rc, err_off);
	}
	capture_ring_drop(ring);
	return 1;
}

/* The summary of a decode that ended (unless -q). */
static void say_decoded(const struct strace_offline_stats *st, double t)
{
	fprintf(stderr,
		PROG ": %llu %s, %.1f MB of PT in %.3f s (%.1f "
		     "MB/s): %llu branches, %llu events, %llu decode "
		     "errors, %llu overflows, %llu losses, %llu "
		     "unreadable mappings\n",
		(unsigned long long)st->queues,
		st->per_cpu ? (st->queues == 1 ? "CPU" : "CPUs")
			    : (st->queues == 1 ? "thread" : "threads"),
		(double)st->pt_bytes / 1e6, t,
		t > 0 ? (double)st->pt_bytes / 1e6 / t : 0.0,
		(unsigned long long)st->branches,
		(unsigned long long)st->events,
		(unsigned long long)st->errors,
		(unsigned long long)st->overflows,
		(unsigned long long)st->lost,
		(unsigned long long)st->missing);
}

int capture_offline(struct capture_opts *o, struct strace_ring *ring)
{
	struct capture_ui ui;
	const char *input = o->input, *named = o->input; /* (for messages) */
	const char *symfs = o->symfs;
	int rc;

	capture_ui_init(&ui, o->quiet, ring);
	rc = capture_pipe_input(&input);
	if (rc == 0)
		rc = capture_archive_input(PROG, &input, &symfs,
					   &o->buildid_dir);
	if (rc) {
		capture_ring_drop(ring);
		return rc;
	}
	struct strace_offline_opts oo = {
		.perf_path = input,
		.ring = ring,
		.walk_flags = o->flags,
		.types = o->types_arg ? &o->types : NULL,
		.tid = o->tid,
		.jobs = o->jobs,
		.piece_bytes = (size_t)o->piece,
		.vdso_path = o->vdso,
		.buildid_dir = o->buildid_dir,
		.symfs = symfs,
		.cache_dir = capture_cache_dir(o),
		.names = o->names,
		.coverage = o->coverage,
		.warn = capture_on_warn,
		.progress = capture_on_progress,
		.cb_arg = &ui,
	};
	struct strace_offline_stats st;
	uint64_t err_off = 0;
	catch_sigbus();
	rc = strace_offline_decode(&oo, &st, &err_off);
	if (ui.shown)
		fputc('\n', stderr);
	double t = capture_now() - ui.t0;
	if (rc < 0)
		return offline_failed(o, ring, rc, input, named, &st, err_off);
	if (!o->quiet)
		say_decoded(&st, t);
	if (strace_block_engine_misses())
		fprintf(stderr,
			PROG ": error: %s: the decode errors are code it "
			     "could not read (apt-get install libcapstone4)\n",
			strace_strerror(-STRACE_E_NOCAPSTONE));
	capture_cache_warn(&st.cache, oo.cache_dir);
	if (!o->quiet && !o->no_ring)
		capture_say_ring(o, ring);
	capture_ring_close(ring);
	return capture_partial(o->quiet, st.errors, st.missing);
}
