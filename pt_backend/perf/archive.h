/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/archive.h - record here, decode there: a bundle (one
 * tar file, tar.h) of a perf.data and the code its decode needs, which
 * the decoding machine may not have: every object its mappings name, the
 * vDSO, and facts about the machines. `ptrace-capture --archive` writes
 * it, `ptrace-capture -i BUNDLE.tar` decodes it; GNU tar lists and
 * extracts it, and the extracted root/ serves `perf script --symfs`.
 *
 * Layout, every member under one folder NAME/ (the bundle's file name
 * without .tar):
 *
 *   NAME/perf.data                  the recording, as it is
 *   NAME/MANIFEST                   what the bundle holds (below)
 *   NAME/HOST                       where it was recorded and bundled
 *                                   (text, for a person)
 *   NAME/root/PATH                  each object at its recorded PATH
 *   NAME/root/usr/lib/debug/.build-id/XX/REST.debug
 *                                   the separate debug file of an object
 *                                   without .symtab, where a --symfs
 *                                   decode looks for it
 *   NAME/.debug/[vdso]/HEX/vdso     the vDSO where perf's build-id cache
 *                                   keeps it
 *
 * MANIFEST: the line "ptrace-capture archive 1", comment lines ('#'),
 * then one line per file, four fields separated by tabs: kind
 * (perf.data, object, debug: an object's debug file, vdso, or missing:
 * named by the recording but not bundled), build-id in hex ("-": none),
 * size in bytes ("-" when missing), and the path the recording names
 * ("[vdso]" for the vDSO).
 *
 * Errors: -STRACE_E_TAR_*, -STRACE_E_ARCHIVE_*, -STRACE_E_PERF_* (the
 * perf.data), -errno.
 */
#ifndef PT_BACKEND_PERF_ARCHIVE_H
#define PT_BACKEND_PERF_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "buildid.h"
#include "tar.h"

#define STRACE_ARCHIVE_MAGIC "ptrace-capture archive 1"

struct strace_archive_opts {
	size_t size;             /* sizeof(struct strace_archive_opts) */
	const char *perf_path;   /* the recording */
	/* Where its objects are read: under this root, as perf script
	 * --symfs (NULL: at their recorded paths), else perf's build-id
	 * cache buildid_dir (may be NULL), which also holds the vDSO the
	 * recording names. Each must be the build the recording names. */
	const char *symfs;
	const char *buildid_dir;
	const char *vdso_path; /* the vDSO image (NULL: from the cache) */
	const char *tool;      /* who writes it, for HOST ("ptrace-capture
				* 1.0"); NULL: not said */
	/* An object that cannot be bundled (not found, another build):
	 * what and why, one message each; NULL to ignore. */
	void (*warn)(void *arg, const char *msg);
	void *cb_arg;
};

struct strace_archive_stats {
	uint64_t objects;  /* objects bundled, the vDSO among them */
	uint64_t missing;  /* named by the recording, not bundled */
	uint64_t bytes;    /* the bundle's size */
	char folder[256];  /* the folder its members are in */
};

/*
 * strace_archive_write() - the bundle of o->perf_path as the tar file
 * out. It is written under a temporary name beside out and renamed when
 * whole: out is never left half written. Objects that cannot be bundled
 * are warned about and counted (st->missing): the bundle is then partial,
 * and its decode loses the code there, as the recording's would.
 * On a perf.data error *err_off receives the offset at fault.
 * Returns 0.
 * Returns -STRACE_E_PERF_* if the perf.data cannot be read.
 * Returns -ENAMETOOLONG if a name in the bundle would be too long for tar
 * (only for the perf.data, MANIFEST, HOST: an object's is a warning).
 * Returns -ESTALE if the perf.data shrank while it was copied.
 * Returns -errno if out cannot be written.
 */
int strace_archive_write(const struct strace_archive_opts *o, const char *out,
			 struct strace_archive_stats *st, uint64_t *err_off);

/* An extracted bundle: where its parts are. */
struct strace_bundle {
	char dir[4096];         /* the private directory (mkdtemp) */
	char top[4096];         /* dir/NAME */
	char perf_path[4096];   /* dir/NAME/perf.data */
	char symfs[4096];       /* dir/NAME/root: objects at their paths */
	char buildid_dir[4096]; /* dir/NAME/.debug: the vDSO */
	uint64_t members;       /* tar members */
	uint64_t objects;       /* the manifest's bundled objects */
	uint64_t missing;       /* its objects missing when it was made */
	struct strace_tar_made made; /* what extraction made */
};

/* Where opening a bundle failed. */
struct strace_archive_fault {
	struct strace_tar_fault tar; /* extraction (-STRACE_E_TAR_*) */
	unsigned line;               /* MANIFEST's line (0: none) */
	char path[4096];             /* the object at fault (recorded path) */
	char member[4096];           /* its member in the bundle (NAME/...) */
	uint8_t want[STRACE_BUILDID_MAX], got[STRACE_BUILDID_MAX];
	size_t nwant, ngot;          /* the manifest's build-id, the file's */
	uint64_t want_size, got_size;
};

/*
 * strace_archive_open() - extract the bundle at path into a new private
 * directory under tmpdir (NULL: /tmp) and check it against its MANIFEST:
 * one folder, a perf.data, each bundled object of the size and build-id
 * the manifest says. Extraction refuses whatever could write outside
 * the directory (tar.h). On any error everything made is removed and
 * *f says where; on success strace_archive_close() removes it.
 * Returns 0.
 * Returns -STRACE_E_TAR_* if the tar is damaged or hostile (f->tar).
 * Returns -STRACE_E_ARCHIVE_MANIFEST if there is not one folder holding
 * a perf.data and a MANIFEST, or MANIFEST is malformed (f->line).
 * Returns -STRACE_E_ARCHIVE_OBJECT if an object is missing from the
 * bundle or is not the manifest's (f->path, f->member, sizes and ids).
 * Returns -errno (e.g. making the directory), -ENOMEM.
 */
int strace_archive_open(const char *path, const char *tmpdir,
			struct strace_bundle *b,
			struct strace_archive_fault *f);

/*
 * strace_archive_remove() - remove what b's extraction made and its
 * directory, with unlink() and rmdir() only: async-signal-safe (for a
 * handler of SIGINT and SIGTERM), nothing freed. Returns 0 or -errno.
 */
int strace_archive_remove(const struct strace_bundle *b);

/* strace_archive_close() - remove the extracted bundle
 * (strace_archive_remove()) and free b's list. Returns 0 or -errno. */
int strace_archive_close(struct strace_bundle *b);

#endif /* PT_BACKEND_PERF_ARCHIVE_H */
