/* SPDX-License-Identifier: MIT */
/*
 * cli/capture_run_live.c - ptrace-capture -p PID and -- CMD: the live
 * decoder (pt_backend/pipeline/pipeline.h) fed by capture_live_run()'s
 * loop (strace_live_capture()), the host's facts written into the ring, and
 * what is said about it (the summary, the failures, the bundle of -w's
 * file with --archive).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/capture.h"
#include "cli/capture_archive.h"

struct live_ctx {
	struct strace_live_decoder *ld;
	struct strace_ring *ring;
	int print_path;
};

/*
 * A live capture: where it runs, into the ring (strace_writer_name_info(),
 * what ptrace-capture -i takes from a perf.data's header): the host, the
 * kernel, the processor, the CPUs, and this command line (the recorder's,
 * as perf's and uftrace's headers keep theirs). Best effort: a ring that
 * cannot take them still gets the trace.
 */
static void write_host_info(struct strace_ring *ring, int argc, char **argv)
{
	struct strace_writer *w;
	struct utsname u;
	char cmd[4096], line[256];
	size_t used = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	long avail = sysconf(_SC_NPROCESSORS_CONF);
	FILE *f;

	if (strace_writer_open(ring, &w) < 0)
		return;
	if (uname(&u) == 0) {
		strace_writer_name_info(w, STRACE_INFO_HOSTNAME, 0, u.nodename);
		strace_writer_name_info(w, STRACE_INFO_OSRELEASE, 0, u.release);
	}
	if (online > 0 && avail > 0)
		strace_writer_name_info(w, STRACE_INFO_NRCPUS,
					(uint64_t)online << 32 |
						(uint64_t)avail,
					"cpus");
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			char *v = strchr(line, ':') + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			strace_writer_name_info(w, STRACE_INFO_CPUDESC, 0, v);
			break;
		}
	if (f)
		fclose(f);
	cmd[0] = 0;
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (used + n + 2 > sizeof(cmd))
			break;
		if (used)
			cmd[used++] = ' ';
		memcpy(cmd + used, argv[i], n + 1);
		used += n;
	}
	if (used)
		strace_writer_name_info(w, STRACE_INFO_CMDLINE, 0, cmd);
	strace_writer_close(w);
}

static void live_opened(void *arg, struct strace_live *l)
{
	struct live_ctx *lc = arg;
	capture_plugins_live(l);
	if (lc->print_path) {
		printf("%s\n", strace_ring_path(lc->ring));
		fflush(stdout);
	}
	/* its time conversion, and the ptwrite payloads it asks for */
	if (strace_live_decoder_session(lc->ld, l) == -ERANGE)
		fprintf(stderr,
			PROG ": warning: the kernel's perf time conversion "
			     "is out of range (time_shift of 64 or more in "
			     "the perf_event mmap page): events get no times; "
			     "report this kernel\n");
}

/* The live decoder into ring, as the options ask; NULL after a message. */
static struct strace_live_decoder *live_decoder(const struct capture_opts *o,
						struct strace_ring *ring)
{
	struct strace_live_decoder *ld;
	int rc = strace_live_decoder_new(ring, o->flags,
					 o->types_arg ? &o->types : NULL, &ld);
	if (rc == 0)
		strace_live_decoder_set_names(ld, o->names);
	if (rc == 0 &&
	    strace_live_decoder_set_cache(ld, capture_cache_dir(o)) < 0) {
		(void)strace_live_decoder_finish(ld, NULL);
		rc = -ENOMEM;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: %s\n", strace_ring_path(ring),
			strace_strerror(rc));
		return NULL;
	}
	return ld;
}

/* The summary of a capture that ended well (unless -q). */
static void say_decoded(const struct strace_live_decoder_stats *ds)
{
	fprintf(stderr,
		PROG ": decoded %llu thread%s, %.1f MB of PT: "
		     "%llu events, %llu decode errors, %llu "
		     "overflows, %llu losses\n",
		(unsigned long long)ds->threads, ds->threads == 1 ? "" : "s",
		(double)ds->pt_bytes / 1e6, (unsigned long long)ds->events,
		(unsigned long long)ds->errors,
		(unsigned long long)ds->overflows,
		(unsigned long long)ds->lost);
}

int capture_run_live(struct capture_opts *o, struct strace_ring *ring)
{
	struct live_ctx lc;
	struct strace_live_cb cb;
	struct strace_live_decoder_stats ds;
	int rc;

	lc.ld = live_decoder(o, ring);
	if (!lc.ld) {
		capture_ring_close(ring);
		return 1;
	}
	strace_live_decoder_callbacks(lc.ld, &cb);
	o->live_opts.quiet = o->quiet;
	o->live_opts.opened = live_opened;
	o->live_opts.opened_arg = &lc;
	lc.ring = ring;
	lc.print_path = !o->output && !o->view_path && !o->no_ring;
	write_host_info(ring, o->argc, o->argv);
	o->live_opts.lo.buildid_dir = o->buildid_dir;
	int status = capture_live_run(&o->live_opts, (pid_t)o->pid, o->cmd,
				      &cb, NULL, stderr);
	rc = strace_live_decoder_finish(lc.ld, &ds);
	if (status && !ds.events)
		unlink(strace_ring_path(ring)); /* nothing in it */
	if (rc < 0)
		fprintf(stderr, PROG ": decoding into %s: %s\n",
			strace_ring_path(ring), strace_strerror(rc));
	else if (!o->quiet && status == 0)
		say_decoded(&ds);
	capture_cache_warn(&ds.cache, capture_cache_dir(o));
	if (!o->quiet && status == 0 && rc >= 0 && !o->no_ring)
		capture_say_ring(o, ring);
	capture_ring_close(ring);
	if (status || rc < 0)
		return status ? status : 1;
	rc = capture_partial(o->quiet, ds.errors, 0);
	if (o->archive) {
		/* -w's perf.data is whole: bundle it (and the vDSO the
		 * capture put in the build-id cache) */
		int arc = capture_archive_write(PROG, o->live_opts.lo.write_path,
						o->archive, NULL,
						o->buildid_dir, NULL, o->quiet);
		rc = arc == 1 ? 1 : rc ? rc : arc;
	}
	return rc;
}
