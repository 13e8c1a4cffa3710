/* SPDX-License-Identifier: MIT */
/* cli/capture_archive.c - ptrace-capture's bundles (capture_archive.h). */
#include "cli/capture_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/capture_live.h"
#include "cli/view/view.h"
#include "pt_backend/perf/perf.h"
#include "strace/error.h"
#include "strace/version.h"

#define HEX (2 * STRACE_BUILDID_MAX + 1)

struct warn_ctx {
	const char *prog;
	unsigned n;
};

static void on_warn(void *arg, const char *msg)
{
	struct warn_ctx *w = arg;

	if (++w->n > 50) {
		if (w->n == 51)
			fprintf(stderr, "%s: warning: more objects are missing; "
					"not shown (the bundle's MANIFEST names "
					"them all)\n",
				w->prog);
		return;
	}
	fprintf(stderr, "%s: warning: ", w->prog);
	view_fputs_clean(msg, stderr); /* paths of the bundle: one line */
	fputc('\n', stderr);
}

int capture_archive_write(const char *prog, const char *perf,
			  const char *out, const char *symfs,
			  const char *buildid_dir, const char *vdso, int quiet)
{
	struct warn_ctx wc = {prog, 0};
	struct strace_archive_stats st;
	char tool[128];
	uint64_t off = 0;
	int rc;

	snprintf(tool, sizeof(tool), "ptrace-capture %s", strace_version());
	struct strace_archive_opts o = {
		.size = sizeof(o),
		.perf_path = perf,
		.symfs = symfs,
		.buildid_dir = buildid_dir,
		.vdso_path = vdso,
		.tool = tool,
		.warn = on_warn,
		.cb_arg = &wc,
	};
	rc = strace_archive_write(&o, out, &st, &off);
	if (rc <= -STRACE_E_BASE) {
		fprintf(stderr, "%s: %s: %s", prog, perf, strace_strerror(rc));
		if (off)
			fprintf(stderr, " (at file offset 0x%llx)",
				(unsigned long long)off);
		fprintf(stderr, ": nothing was bundled\n");
		return 1;
	}
	if (rc == -ESTALE) {
		fprintf(stderr,
			"%s: %s: the recording changed while it was bundled "
			"(something writes to it): bundle a copy that nothing "
			"writes to; nothing was bundled\n",
			prog, perf);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr,
			"%s: --archive %s: cannot write the bundle: %s%s\n",
			prog, out, strace_strerror(rc),
			rc == -ENOSPC || rc == -EDQUOT
				? " (make room, or write it elsewhere)"
			: rc == -EACCES || rc == -EROFS || rc == -ENOENT
				? " (write it in a folder that exists and "
				  "is writable)"
				: "");
		return 1;
	}
	if (!quiet)
		fprintf(stderr,
			"%s: wrote %s (%.1f MB): the recording and %llu "
			"object%s it maps; decode it on any machine with '%s "
			"-i %s' (or extract it with tar -xf, and give perf "
			"script -i %s/perf.data --symfs %s/root)\n",
			prog, out, (double)st.bytes / 1e6,
			(unsigned long long)st.objects,
			st.objects == 1 ? "" : "s", prog, out, st.folder,
			st.folder);
	if (!st.missing)
		return 0;
	if (!quiet)
		fprintf(stderr,
			"%s: the bundle is partial: %llu object%s the "
			"recording maps %s not in it (said above; its MANIFEST "
			"names them): its decode loses the code there; exit "
			"status %d\n",
			prog, (unsigned long long)st.missing,
			st.missing == 1 ? "" : "s",
			st.missing == 1 ? "is" : "are", CAPTURE_EXIT_PARTIAL);
	return CAPTURE_EXIT_PARTIAL;
}

/* -i BUNDLE.tar: where it was extracted; removed at exit and on the
 * signals that end the program (strace_archive_remove() is
 * async-signal-safe). */
static struct strace_bundle bundle;
static volatile sig_atomic_t bundled;
static const int end_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void remove_bundle(void)
{
	if (bundled) {
		bundled = 0;
		strace_archive_close(&bundle);
	}
}

static void on_end_signal(int sig)
{
	if (bundled)
		strace_archive_remove(&bundle);
	signal(sig, SIG_DFL);
	raise(sig);
}

int capture_archive_bundled(void)
{
	return bundled;
}

static const char *type_name(char t)
{
	switch (t) {
	case '1':
		return "a hard link";
	case '2':
		return "a symbolic link";
	case '3':
		return "a character device";
	case '4':
		return "a block device";
	case '6':
		return "a FIFO";
	case 'x':
	case 'g':
		return "a pax extended header";
	case 'L':
	case 'K':
		return "a GNU long-name header";
	default:
		return "a member of an unknown type";
	}
}

/* The message for a bundle that strace_archive_open() refused. */
static void say_refused(const char *prog, const char *in, int rc,
			const struct strace_archive_fault *f)
{
	const struct strace_tar_fault *t = &f->tar;
	char w[HEX], g[HEX];
	struct stat st;

	fprintf(stderr, "%s: -i %s: ", prog, in);
	switch (-rc) {
	case STRACE_E_TAR_HEADER:
		fprintf(stderr,
			"a damaged tar: the header at byte %llu%s%s%s has a "
			"wrong checksum or is no tar header; the bundle was "
			"cut or changed on its way: copy it again\n",
			(unsigned long long)t->offset, t->name[0] ? " ('" : "",
			t->name, t->name[0] ? "')" : "");
		return;
	case STRACE_E_TAR_NAME:
		fprintf(stderr,
			"refused: member '%s' (header at byte %llu) has an "
			"unsafe name (absolute, with '..' or '.' parts, or not "
			"printable): extracted, it could be written outside "
			"the bundle's folder. ptrace-capture --archive writes "
			"no such name: this tar was made or altered by "
			"something else\n",
			t->name, (unsigned long long)t->offset);
		return;
	case STRACE_E_TAR_TYPE:
		fprintf(stderr,
			"refused: member '%s' (header at byte %llu) is %s "
			"(type '%c'): a bundle holds only files and folders "
			"(a link could lead outside its folder, a device or "
			"FIFO anywhere); this tar was made or altered by "
			"something else than ptrace-capture --archive\n",
			t->name, (unsigned long long)t->offset,
			type_name(t->type),
			t->type >= 0x20 && t->type < 0x7f ? t->type : '?');
		return;
	case STRACE_E_TAR_FIELD:
		fprintf(stderr,
			"a damaged tar: member '%s' (header at byte %llu) has a "
			"number field (size, mode or checksum) that is no "
			"number: copy the bundle again\n",
			t->name, (unsigned long long)t->offset);
		return;
	case STRACE_E_TAR_TRUNCATED:
		fprintf(stderr,
			"the bundle is truncated: it ends %s%s%s (header at "
			"byte %llu)",
			t->name[0] ? "inside member '" : "before the blocks "
							 "that end a tar",
			t->name, t->name[0] ? "'" : "",
			(unsigned long long)t->offset);
		if (stat(in, &st) == 0)
			fprintf(stderr, ", at %lld bytes", (long long)st.st_size);
		fprintf(stderr, ": copy it again whole\n");
		return;
	case STRACE_E_TAR_DUP:
		fprintf(stderr,
			"refused: member '%s' (header at byte %llu) names a "
			"file or folder that came before (a second copy could "
			"replace what was checked); this tar was made or "
			"altered by something else than ptrace-capture "
			"--archive\n",
			t->name, (unsigned long long)t->offset);
		return;
	case STRACE_E_ARCHIVE_MANIFEST:
		if (f->line)
			fprintf(stderr,
				"line %u of the bundle's MANIFEST is malformed "
				"(the first must read '%s', the others four "
				"fields separated by tabs): the bundle is "
				"damaged or was not written by ptrace-capture "
				"--archive\n",
				f->line, STRACE_ARCHIVE_MAGIC);
		else
			fprintf(stderr,
				"a tar, but not a bundle of ptrace-capture "
				"--archive (one folder holding MANIFEST and "
				"perf.data); if it holds a perf.data and the "
				"objects it maps, extract it and decode with "
				"-i DIR/perf.data --symfs DIR/ROOT\n");
		return;
	case STRACE_E_ARCHIVE_OBJECT:
		fprintf(stderr, "the bundle's copy of %s (%s) ", f->path,
			f->member);
		if (f->nwant && (f->ngot != f->nwant ||
				 memcmp(f->got, f->want, f->nwant)) &&
		    (f->ngot || f->got_size))
			fprintf(stderr,
				"has build-id %s, its MANIFEST says %s",
				f->ngot ? strace_buildid_hex(f->got, f->ngot, g)
					: "none",
				strace_buildid_hex(f->want, f->nwant, w));
		else if (f->got_size != f->want_size && f->got_size == 0)
			fprintf(stderr, "is missing");
		else
			fprintf(stderr, "has %llu bytes, its MANIFEST says %llu",
				(unsigned long long)f->got_size,
				(unsigned long long)f->want_size);
		fprintf(stderr,
			": the bundle is damaged or was altered, and its code "
			"is not the recorded code: nothing was decoded; make "
			"the bundle again where the recording was made\n");
		return;
	}
	fprintf(stderr,
		"cannot extract the bundle into %s: %s (set TMPDIR to a "
		"writable folder with room)\n",
		getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
						      : "/tmp",
		strace_strerror(rc));
}

int capture_archive_input(const char *prog, const char **input,
			  const char **symfs, const char **buildid_dir)
{
	struct strace_archive_fault f;
	unsigned char head[STRACE_TAR_BLOCK];
	struct stat st;
	sigset_t block, old;
	ssize_t n;
	int fd, rc;

	if (stat(*input, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	fd = open(*input, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0; /* (the decode says why) */
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (n != (ssize_t)sizeof(head) || !strace_tar_probe(head, sizeof(head)))
		return 0;
	if (*symfs) {
		fprintf(stderr,
			"%s: -i %s is a bundle: it brings its own objects; "
			"--symfs goes with a perf.data\nTry '%s --help'.\n",
			prog, *input, prog);
		return 2;
	}
	/* no signal between extraction and the handler that undoes it */
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(end_signals) / sizeof(*end_signals); i++)
		sigaddset(&block, end_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	rc = strace_archive_open(*input, getenv("TMPDIR"), &bundle, &f);
	if (rc == 0) {
		static int once;

		bundled = 1;
		if (!once++)
			atexit(remove_bundle);
		for (size_t i = 0;
		     i < sizeof(end_signals) / sizeof(*end_signals); i++)
			signal(end_signals[i], on_end_signal);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		say_refused(prog, *input, rc, &f);
		return 1;
	}
	if (bundle.missing)
		fprintf(stderr,
			"%s: warning: -i %s: the bundle is partial: %llu "
			"object%s the recording maps %s missing when it was "
			"made (its MANIFEST names them): code there becomes "
			"decode errors\n",
			prog, *input, (unsigned long long)bundle.missing,
			bundle.missing == 1 ? "" : "s",
			bundle.missing == 1 ? "was" : "were");
	*input = bundle.perf_path;
	*symfs = bundle.symfs;
	*buildid_dir = bundle.buildid_dir;
	return 0;
}

void capture_archive_mismatch(const char *prog, const char *input,
			      const struct strace_offline_mismatch *m)
{
	char w[HEX], g[HEX];
	const char *got = m->ngot ? strace_buildid_hex(m->got, m->ngot, g)
				  : "none";

	strace_buildid_hex(m->want, m->nwant, w);
	if (bundled) {
		/* (the folder is removed at exit: its name in the bundle) */
		size_t dl = strlen(bundle.dir);
		const char *file = m->file;
		if (!strncmp(file, bundle.dir, dl) && file[dl] == '/')
			file += dl + 1;
		fprintf(stderr,
			"%s: -i %s: the bundle's %s (%s) has build-id %s, but "
			"its recording names %s: the bundle was altered or put "
			"together from other files; decoding against it would "
			"put other code under the trace, so nothing was "
			"decoded: make the bundle again where the recording "
			"was made ('%s -i perf.data --archive OUT.tar')\n",
			prog, input, m->path, file, got, w, prog);
		return;
	}
	if (!strcmp(m->path, "[vdso]")) {
		fprintf(stderr,
			"%s: %s: the vDSO %s has build-id %s, but the recording "
			"names %s: it is another kernel's; decoding against it "
			"would put other code under the trace, so nothing was "
			"decoded: give --vdso the recording machine's vDSO "
			"(perf's build-id cache there keeps it), or bundle the "
			"recording where it was made ('%s -i perf.data "
			"--archive OUT.tar')\n",
			prog, input, m->file, got, w, prog);
		return;
	}
	if (strcmp(m->file, m->path))
		fprintf(stderr,
			"%s: %s: the file %s, read for the recording's %s, is "
			"another build than the one recorded: its build-id is "
			"%s, the recording names %s.",
			prog, input, m->file, m->path, got, w);
	else
		fprintf(stderr,
			"%s: %s: the file %s is another build than the one "
			"recorded: its build-id is %s, the recording names %s.",
			prog, input, m->file, got, w);
	fprintf(stderr,
		" Decoding against it would put other code under the trace, "
		"so nothing was decoded: copy the recording machine's file "
		"to %s, add that file to perf's build-id cache here ('perf "
		"buildid-cache -a FILE'), give --symfs DIR a root that holds "
		"it, or bundle the recording where it was made ('%s -i "
		"perf.data --archive OUT.tar') and decode the bundle\n",
		m->file, prog);
}
