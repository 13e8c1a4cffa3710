/* SPDX-License-Identifier: MIT */
/*
 * cli/capture_archive.h - record here, decode there: ptrace-capture's
 * bundles (pt_backend/perf/perf.h) and what it says about them.
 *
 *   --archive OUT.tar   with -i perf.data: bundle it (and decode
 *                       nothing, as perf archive); with -w FILE in a
 *                       live capture: bundle FILE when the capture ends
 *   -i BUNDLE.tar       extracted into a private folder under $TMPDIR
 *                       (removed at exit, and on SIGINT, SIGTERM and
 *                       SIGHUP), decoded with its objects (--symfs) and
 *                       vDSO (its build-id cache)
 *   --symfs DIR         objects read under DIR (-i and --archive)
 */
#ifndef CLI_CAPTURE_ARCHIVE_H
#define CLI_CAPTURE_ARCHIVE_H

#include "pt_backend/pipeline/pipeline.h"

/*
 * capture_archive_write() - bundle the recording perf as out, objects
 * read under symfs (NULL: their paths) or from perf's build-id cache
 * buildid_dir (NULL: none), the vDSO from vdso (NULL: the cache). Says
 * what it bundled (unless quiet) and what it could not (always).
 * Returns the exit status: 0, CAPTURE_EXIT_PARTIAL when objects are
 * missing from the bundle, 1 when none could be written.
 */
int capture_archive_write(const char *prog, const char *perf,
			  const char *out, const char *symfs,
			  const char *buildid_dir, const char *vdso,
			  int quiet);

/*
 * capture_archive_input() - if *input is a bundle (a tar file), extract
 * and check it, and point *input at its perf.data, *symfs at its objects
 * and *buildid_dir at its build-id cache (a bundle with --symfs set is
 * a usage error: it brings its own objects). A partial bundle (objects
 * missing when it was made) is warned about. Anything else is left as
 * it is. Returns 0, or the exit status after a message (the bundle
 * refused: nothing of it is left on disk).
 */
int capture_archive_input(const char *prog, const char **input,
			  const char **symfs, const char **buildid_dir);

/* capture_archive_bundled() - whether -i named a bundle (for messages). */
int capture_archive_bundled(void);

/*
 * capture_archive_mismatch() - the message for a decode refused because
 * an object is another build than the one recorded (st->mismatch of
 * -STRACE_E_PERF_BUILDID), with what to do; input is what -i named.
 */
void capture_archive_mismatch(const char *prog, const char *input,
			      const struct strace_offline_mismatch *m);

#endif /* CLI_CAPTURE_ARCHIVE_H */
