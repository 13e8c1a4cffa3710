/* SPDX-License-Identifier: MIT */
/* pt_backend/perf/archive.c - bundles of a recording and its code (perf.h). */
#include "perf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "decoder/decoder.h" /* strace_debug_find() */
#include "buildid.h"
#include "tar.h"
#include "strace/error.h"
#include "strace/opts.h"
#include "strace/internal/grow.h"

#define MANIFEST_MAX (16u << 20)

/* ------------------------------------------------------- a text buffer */

struct text {
	char *p;
	size_t n, cap;
	int oom;
};

static void text_printf(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* doubled until the n bytes and the NUL fit */
	while (t->n + (size_t)n + 1 > t->cap) {
		char *p = strace_grow(t->p, &t->cap, 1, 256);

		if (!p) {
			t->oom = 1;
			return;
		}
		t->p = p;
	}
	va_start(ap, fmt);
	vsnprintf(t->p + t->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->n += (size_t)n;
}

/* ------------------------------------------------------------- writing */

/* An object the recording names. */
struct obj {
	char *path;
	uint8_t id[STRACE_BUILDID_MAX];
	size_t n; /* its build-id's length, 0: none named */
};

struct objs {
	struct obj *v;
	size_t n, cap;
};

/* The object called path (added when new); NULL if out of memory. */
static struct obj *obj_get(struct objs *o, const char *path)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].path, path))
			return &o->v[i];
	if (o->n == o->cap) {
		struct obj *v = strace_grow(o->v, &o->cap, sizeof(*v), 32);

		if (!v)
			return NULL;
		o->v = v;
	}
	memset(&o->v[o->n], 0, sizeof(o->v[0]));
	if (!(o->v[o->n].path = strdup(path)))
		return NULL;
	return &o->v[o->n++];
}

static void objs_free(struct objs *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i].path);
	free(o->v);
}

/*
 * The objects of the recording: the files of its executable mappings
 * (MMAP, MMAP2: what a decode reads) and whatever its BUILD_ID feature
 * names, each with the build-id that feature gives it.
 */
static int collect(struct strace_perf *p, struct objs *o, uint64_t *err_off)
{
	struct strace_perf_rec r;
	const uint8_t *feat;
	uint64_t size, at = 0;
	uint8_t id[STRACE_BUILDID_MAX];
	const char *name;
	int rc, n;

	while ((rc = strace_perf_next(p, &r)) > 0) {
		struct strace_perf_map m;
		int k = strace_perf_map_parse(r.type, r.misc, r.body,
					      (size_t)r.size - 8, &m);

		if (k < 0) {
			*err_off = r.offset;
			return k;
		}
		if (k && m.exec && !obj_get(o, m.path))
			return -ENOMEM;
	}
	if (rc < 0) {
		*err_off = r.offset;
		return rc;
	}
	if (strace_perf_feature(p, PFMT_FEAT_BUILD_ID, &feat, &size) != 1)
		return 0;
	while ((n = strace_buildid_next(feat, size, &at, &name, id)) >= 0) {
		struct obj *ob = obj_get(o, name);

		if (!ob)
			return -ENOMEM;
		memcpy(ob->id, id, (size_t)n);
		ob->n = (size_t)n;
	}
	return 0;
}

/* The k-th string of a feature's payload, on one line (a newline in it
 * would start another line of HOST). Returns 1, or 0 if it has none. */
static int perf_string(const uint8_t *p, uint64_t size, unsigned k, char *buf,
		       size_t len)
{
	if (!strace_perf_feature_string(p, size, k, buf, len))
		return 0;
	for (char *c = buf; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return 1;
}

/* "field: value" lines of /proc/cpuinfo's first processor. */
static void cpuinfo(struct text *t)
{
	static const char *const keys[] = {"vendor_id", "cpu family", "model",
					   "model name", "stepping"};
	char line[512], got[5][256];
	FILE *f = fopen("/proc/cpuinfo", "re");

	memset(got, 0, sizeof(got));
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v, *e;

		if (line[0] == '\n')
			break; /* the first processor's block ends */
		if (!colon)
			continue;
		v = colon + 1 + strspn(colon + 1, " \t");
		v[strcspn(v, "\n")] = 0;
		for (e = colon; e > line && (e[-1] == ' ' || e[-1] == '\t');)
			e--;
		for (size_t i = 0; i < 5; i++)
			if ((size_t)(e - line) == strlen(keys[i]) &&
			    !strncmp(line, keys[i], (size_t)(e - line)))
				snprintf(got[i], sizeof(got[i]), "%s", v);
	}
	if (f)
		fclose(f);
	if (got[3][0] || got[0][0])
		text_printf(t,
			    "bundled-cpu: %s (vendor %s, family %s, model %s, "
			    "stepping %s)\n",
			    got[3], got[0][0] ? got[0] : "?",
			    got[1][0] ? got[1] : "?", got[2][0] ? got[2] : "?",
			    got[4][0] ? got[4] : "?");
}

/* HOST: where the recording was made (its header) and bundled (here). */
static void host_facts(const struct strace_archive_opts *o,
		       const struct strace_perf *p, struct text *t)
{
	static const struct {
		unsigned feat;
		const char *key;
	} strs[] = {{PFMT_FEAT_HOSTNAME, "recorded-on"},
		    {PFMT_FEAT_OSRELEASE, "recorded-kernel"},
		    {PFMT_FEAT_ARCH, "recorded-arch"},
		    {PFMT_FEAT_CPUDESC, "recorded-cpu"},
		    {PFMT_FEAT_CPUID, "recorded-cpuid"},
		    {PFMT_FEAT_VERSION, "recorded-by-perf"}};
	const uint8_t *feat;
	uint64_t size;
	char buf[1024];
	struct utsname u;
	long on = sysconf(_SC_NPROCESSORS_ONLN);
	long conf = sysconf(_SC_NPROCESSORS_CONF);

	text_printf(t, "# Where the recording was made (from its perf.data "
		       "header) and where it was\n# bundled. For a person: "
		       "the decode reads the perf.data itself.\n");
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strace_perf_feature(p, strs[i].feat, &feat, &size) == 1 &&
		    perf_string(feat, size, 0, buf, sizeof(buf)))
			text_printf(t, "%s: %s\n", strs[i].key, buf);
	if (strace_perf_feature(p, PFMT_FEAT_NRCPUS, &feat, &size) == 1 &&
	    size >= 8) {
		uint32_t avail, online;

		memcpy(&avail, feat, 4);
		memcpy(&online, feat + 4, 4);
		text_printf(t, "recorded-cpus: %u online of %u\n", online,
			    avail);
	}
	if (strace_perf_feature(p, PFMT_FEAT_CMDLINE, &feat, &size) == 1 &&
	    size >= 4) {
		text_printf(t, "recorded-cmdline:");
		for (unsigned k = 0;
		     k < 256 && perf_string(feat + 4, size - 4, k, buf,
					    sizeof(buf));
		     k++)
			text_printf(t, " %s", buf);
		text_printf(t, "\n");
	}
	if (o->tool)
		text_printf(t, "bundled-by: %s\n", o->tool);
	if (uname(&u) == 0) {
		text_printf(t, "bundled-on: %s\n", u.nodename);
		text_printf(t, "bundled-kernel: %s %s %s %s\n", u.sysname,
			    u.release, u.version, u.machine);
	}
	cpuinfo(t);
	if (on > 0 && conf > 0)
		text_printf(t, "bundled-cpus: %ld online of %ld\n", on, conf);
}

struct wctx {
	const struct strace_archive_opts *o;
	struct strace_tarw *w;
	char name[256];  /* the bundle's folder */
	int64_t mtime;   /* of the members we make */
	char **dirs;     /* directory members written */
	size_t ndirs, capdirs;
	struct text manifest;
	struct strace_archive_stats *st;
};

static void warnf(struct wctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(struct wctx *c, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	if (!c->o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->o->warn(c->o->cb_arg, buf);
}

/* Directory members for every folder above member (tar lists them; the
 * reader makes them anyway). */
static int parents(struct wctx *c, const char *member)
{
	char d[STRACE_TAR_NAME_MAX + 64];
	size_t i;

	for (const char *s = strchr(member, '/'); s; s = strchr(s + 1, '/')) {
		size_t n = (size_t)(s - member);
		if (n >= sizeof(d))
			return -ENAMETOOLONG;
		memcpy(d, member, n);
		d[n] = 0;
		for (i = 0; i < c->ndirs && strcmp(c->dirs[i], d); i++)
			;
		if (i < c->ndirs)
			continue;
		if (c->ndirs == c->capdirs) {
			char **nd = strace_grow(c->dirs, &c->capdirs,
						sizeof(*nd), 8);
			if (!nd)
				return -ENOMEM;
			c->dirs = nd;
		}
		if (!(c->dirs[c->ndirs] = strdup(d)))
			return -ENOMEM;
		c->ndirs++;
		int err = strace_tarw_dir(c->w, d, c->mtime);
		if (err)
			return err;
	}
	return 0;
}

/* Whether a member error is the object's (then a warning), not the
 * bundle's. */
static int object_error(int err)
{
	return err == -ENOENT || err == -EACCES || err == -ENODEV ||
	       err == -EINVAL || err == -ENAMETOOLONG || err == -ESTALE ||
	       err == -EISDIR || err == -ENOTDIR || err == -ELOOP || err == -EIO;
}

static void missing(struct wctx *c, const struct obj *ob)
{
	char h[2 * STRACE_BUILDID_MAX + 1];

	c->st->missing++;
	text_printf(&c->manifest, "missing\t%s\t-\t%s\n",
		    ob->n ? strace_buildid_hex(ob->id, ob->n, h) : "-",
		    ob->path);
}

/* One object into the bundle, from the file src, as member (relative to
 * the folder); the manifest line says kind and id. Returns 0 (bundled or
 * said missing) or a write error of the bundle. */
static int add_object(struct wctx *c, const struct obj *ob, const char *src,
		      const char *member, const char *kind,
		      const uint8_t *id, size_t n)
{
	char m[STRACE_TAR_NAME_MAX + 4200], h[2 * STRACE_BUILDID_MAX + 1];
	uint64_t size = 0;
	int err;

	if ((size_t)snprintf(m, sizeof(m), "%s/%s", c->name, member) >=
	    sizeof(m))
		err = -ENAMETOOLONG;
	else if (!(err = parents(c, m)))
		err = strace_tarw_file(c->w, m, src, &size);
	if (err && object_error(err)) {
		/* (the folders written for it stay, empty: harmless) */
		warnf(c,
		      "%s: not bundled: %s %s: %s; the bundle is partial (its "
		      "decode loses the code there)%s",
		      ob->path,
		      err == -ENAMETOOLONG || err == -EINVAL
			      ? "its name does not fit a tar member"
			      : "cannot read",
		      err == -ENAMETOOLONG || err == -EINVAL ? m : src,
		      strace_strerror(err),
		      err == -ENOENT ? ": bundle where the recording was "
				       "made, or give --symfs a root that "
				       "holds the recording machine's files"
				     : "");
		missing(c, ob);
		return 0;
	}
	if (err)
		return err;
	c->st->objects++;
	text_printf(&c->manifest, "%s\t%s\t%llu\t%s\n", kind,
		    n ? strace_buildid_hex(id, n, h) : "-",
		    (unsigned long long)size, ob->path);
	return 0;
}

static void say_other_build(struct wctx *c, const struct obj *ob,
			    const struct strace_buildid_found *f)
{
	char w[2 * STRACE_BUILDID_MAX + 1], g[2 * STRACE_BUILDID_MAX + 1];

	warnf(c,
	      "%s: not bundled: the file %s has build-id %s, the recording "
	      "names %s (it was rebuilt or updated since it was recorded); "
	      "the bundle is partial: put the recorded build in perf's "
	      "build-id cache (perf buildid-cache -a FILE), or give --symfs "
	      "a root that holds it",
	      ob->path, f->file, f->n ? strace_buildid_hex(f->id, f->n, g) : "none",
	      strace_buildid_hex(ob->id, ob->n, w));
	missing(c, ob);
}

static int add_vdso(struct wctx *c, const struct obj *ob)
{
	char src[4096], member[256], h[2 * STRACE_BUILDID_MAX + 1];
	struct strace_buildid_found f;
	int n;

	memset(&f, 0, sizeof(f));
	if (c->o->vdso_path) {
		if ((size_t)snprintf(src, sizeof(src), "%s", c->o->vdso_path) >=
		    sizeof(src))
			return -ENAMETOOLONG;
	} else if (!ob->n || !c->o->buildid_dir ||
		 strace_buildid_vdso_path(c->o->buildid_dir, ob->id, ob->n,
					  src, sizeof(src)) < 0) {
		warnf(c,
		      "[vdso]: not bundled: %s; the bundle is partial (calls "
		      "into the vDSO become decode errors): give --vdso FILE",
		      ob->n ? "no build-id cache (set PERF_BUILDID_DIR or HOME)"
			    : "the recording names no build-id for it, so "
			      "it cannot be found in perf's build-id cache");
		missing(c, ob);
		return 0;
	}
	n = strace_buildid_of_file(src, f.id);
	if (n < 0) {
		warnf(c,
		      "[vdso]: not bundled: cannot read %s: %s; the bundle is "
		      "partial (calls into the vDSO become decode errors): "
		      "give --vdso FILE, the recording machine's vDSO",
		      src, strace_strerror(n));
		missing(c, ob);
		return 0;
	}
	f.n = (size_t)n;
	memcpy(f.file, src, sizeof(f.file));
	if (ob->n && (f.n != ob->n || memcmp(f.id, ob->id, ob->n))) {
		say_other_build(c, ob, &f);
		return 0;
	}
	if (!f.n) {
		warnf(c,
		      "[vdso]: not bundled: %s has no build-id, and a vDSO is "
		      "found by it; the bundle is partial",
		      src);
		missing(c, ob);
		return 0;
	}
	snprintf(member, sizeof(member), ".debug/[vdso]/%s/vdso",
		 strace_buildid_hex(f.id, f.n, h));
	return add_object(c, ob, src, member, "vdso", f.id, f.n);
}

/*
 * The separate debug file an object without .symtab takes its symbols
 * from (strace_debug_find(), as the decode looks for it), where a symfs
 * decode and perf script --symfs look for it:
 * root/usr/lib/debug/.build-id/xx/rest.debug. Without it the bundle's
 * decode would name that object's functions from .dynsym only, and
 * differ from the decode here.
 */
static int add_debug(struct wctx *c, const struct obj *ob, const char *file,
		     const uint8_t *id, size_t n)
{
	/* (room for the longest folder name and build-id: the tar writer
	 * refuses a name longer than it holds) */
	char dbg[4096], member[512], h[2 * STRACE_BUILDID_MAX + 1];
	uint64_t size = 0;
	int err;

	if (strace_debug_find(file, c->o->symfs, dbg, sizeof(dbg)) != 1)
		return 0;
	strace_buildid_hex(id, n, h);
	if ((size_t)snprintf(member, sizeof(member),
			     "%s/root/usr/lib/debug/.build-id/%.2s/%s.debug",
			     c->name, h, h + 2) >= sizeof(member))
		err = -ENAMETOOLONG;
	else if ((err = parents(c, member)) == 0)
		err = strace_tarw_file(c->w, member, dbg, &size);
	if (err && object_error(err)) {
		warnf(c,
		      "%s: its debug file %s is not bundled: %s; the bundle's "
		      "decode names that object's functions from its dynamic "
		      "symbols only",
		      ob->path, dbg, strace_strerror(err));
		return 0;
	}
	if (err)
		return err;
	text_printf(&c->manifest, "debug\t%s\t%llu\t%s\n", h,
		    (unsigned long long)size, ob->path);
	return 0;
}

static int add_one(struct wctx *c, const struct obj *ob)
{
	struct strace_buildid_found f;
	char member[4200];
	const uint8_t *id = ob->id;
	size_t n = ob->n;
	int rc;

	if (!strcmp(ob->path, "[vdso]"))
		return add_vdso(c, ob);
	if (ob->path[0] != '/')
		return 0; /* not a file ([heap], //anon, [kernel.kallsyms]) */
	if (strpbrk(ob->path, "\t\n\r")) {
		warnf(c,
		      "%s: not bundled: a tab or a line break in its path "
		      "(the manifest is one line per object); the bundle is "
		      "partial",
		      ob->path);
		missing(c, ob);
		return 0;
	}
	rc = strace_buildid_locate(ob->path, ob->id, ob->n, c->o->symfs,
				   c->o->buildid_dir, &f);
	if (rc == -STRACE_E_PERF_BUILDID) {
		say_other_build(c, ob, &f);
		return 0;
	}
	if (rc == 0 && !n) {
		/* the recording names none: the manifest has the file's */
		int k = strace_buildid_of_file(f.file, f.id);
		f.n = k > 0 ? (size_t)k : 0;
		id = f.id;
		n = f.n;
	}
	snprintf(member, sizeof(member), "root%s", ob->path);
	uint64_t before = c->st->objects;
	rc = add_object(c, ob, f.file, member, "object", id, n);
	if (rc || c->st->objects == before || !n)
		return rc;
	return add_debug(c, ob, f.file, id, n);
}

/* The bundle's folder: the file's name without its directory and .tar;
 * one that would be no safe name becomes "ptrace-archive". */
static void folder_name(const char *out, char *name, size_t max)
{
	const char *b = strrchr(out, '/');
	size_t n;

	b = b ? b + 1 : out;
	snprintf(name, max, "%s", b);
	n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, ".tar"))
		name[n -= 4] = 0;
	if (!n || n > 64 || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strpbrk(name, "\t\n\r"))
		snprintf(name, max, "ptrace-archive");
}

int strace_archive_write(const struct strace_archive_opts *opts,
			 const char *out, struct strace_archive_stats *st,
			 uint64_t *err_off)
{
	struct strace_archive_opts o;
	struct strace_perf p;
	struct objs objs = {0};
	struct wctx c;
	struct text host = {0};
	struct stat sb;
	char tmp[4200], m[512];
	int rc;

	memset(st, 0, sizeof(*st));
	*err_off = 0;
	if ((rc = strace_opts_load(&o, sizeof(o), opts)) < 0)
		return rc;
	rc = strace_perf_open(o.perf_path, &p, err_off);
	if (rc < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.o = &o;
	c.st = st;
	c.mtime = fstat(p.fd, &sb) == 0 ? (int64_t)sb.st_mtime : 0;
	folder_name(out, c.name, sizeof(c.name));
	snprintf(st->folder, sizeof(st->folder), "%s", c.name);
	rc = collect(&p, &objs, err_off);
	if (rc < 0)
		goto out;
	host_facts(&o, &p, &host);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out,
			     (int)getpid()) >= sizeof(tmp)) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	rc = strace_tarw_open(&c.w, tmp);
	if (rc < 0)
		goto out;
	text_printf(&c.manifest,
		    STRACE_ARCHIVE_MAGIC "\n"
		    "# kind\tbuild-id\tsize\tpath the recording names\n");
	snprintf(m, sizeof(m), "%s/perf.data", c.name);
	uint64_t psize = 0;
	if (!(rc = parents(&c, m)))
		rc = strace_tarw_file(c.w, m, o.perf_path, &psize);
	if (!rc)
		text_printf(&c.manifest, "perf.data\t-\t%llu\tperf.data\n",
			    (unsigned long long)psize);
	for (size_t i = 0; i < objs.n && !rc; i++)
		rc = add_one(&c, &objs.v[i]);
	if (!rc && (c.manifest.oom || host.oom))
		rc = -ENOMEM;
	if (!rc) {
		snprintf(m, sizeof(m), "%s/MANIFEST", c.name);
		rc = strace_tarw_bytes(c.w, m, c.manifest.p, c.manifest.n,
				       c.mtime);
	}
	if (!rc) {
		snprintf(m, sizeof(m), "%s/HOST", c.name);
		rc = strace_tarw_bytes(c.w, m, host.p, host.n, c.mtime);
	}
	if (!rc) {
		rc = strace_tarw_close(c.w);
		c.w = NULL;
		if (!rc && stat(tmp, &sb) == 0)
			st->bytes = (uint64_t)sb.st_size;
		if (!rc && rename(tmp, out) < 0)
			rc = -errno;
	}
	if (rc) {
		strace_tarw_free(c.w);
		unlink(tmp);
	}
out:
	for (size_t i = 0; i < c.ndirs; i++)
		free(c.dirs[i]);
	free(c.dirs);
	free(c.manifest.p);
	free(host.p);
	objs_free(&objs);
	strace_perf_close(&p);
	return rc;
}

/* ------------------------------------------------------------- opening */

/* The folder the bundle's members are in: the one entry of b->dir. */
static int find_top(struct strace_bundle *b)
{
	DIR *d = opendir(b->dir);
	struct dirent *e;
	char name[256] = "";
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		snprintf(name, sizeof(name), "%s", e->d_name);
	}
	closedir(d);
	if (n != 1)
		return -STRACE_E_ARCHIVE_MANIFEST;
	if ((size_t)snprintf(b->top, sizeof(b->top), "%s/%s", b->dir, name) >=
		    sizeof(b->top) ||
	    (size_t)snprintf(b->perf_path, sizeof(b->perf_path), "%s/perf.data",
			     b->top) >= sizeof(b->perf_path) ||
	    (size_t)snprintf(b->symfs, sizeof(b->symfs), "%s/root", b->top) >=
		    sizeof(b->symfs) ||
	    (size_t)snprintf(b->buildid_dir, sizeof(b->buildid_dir),
			     "%s/.debug", b->top) >= sizeof(b->buildid_dir))
		return -ENAMETOOLONG;
	struct stat st;
	if (lstat(b->top, &st) < 0 || !S_ISDIR(st.st_mode))
		return -STRACE_E_ARCHIVE_MANIFEST;
	return 0;
}

/* An absolute path without '.', '..' or empty components. */
static int path_plain(const char *p)
{
	if (p[0] != '/')
		return 0;
	for (p++;;) {
		size_t n = strcspn(p, "/");
		if (!n || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (!p[n])
			return 1;
		p += n + 1;
	}
}

/* The member file is what the manifest says: regular, size, build-id. */
static int check_member(const struct strace_bundle *b, const char *file,
			uint64_t size, const uint8_t *id, size_t n,
			struct strace_archive_fault *f)
{
	size_t dl = strlen(b->dir);
	struct stat st;
	int k;

	/* (the member's name in the bundle: the folder is gone after) */
	snprintf(f->member, sizeof(f->member), "%s",
		 !strncmp(file, b->dir, dl) && file[dl] == '/' ? file + dl + 1
							       : file);
	f->want_size = size;
	memcpy(f->want, id, n);
	f->nwant = n;
	if (lstat(file, &st) < 0 || !S_ISREG(st.st_mode))
		return -STRACE_E_ARCHIVE_OBJECT;
	f->got_size = (uint64_t)st.st_size;
	/* the build-id first: another build is what matters */
	if (n) {
		k = strace_buildid_of_file(file, f->got);
		if (k < 0)
			return k;
		f->ngot = (size_t)k;
		if ((size_t)k != n || memcmp(f->got, id, n))
			return -STRACE_E_ARCHIVE_OBJECT;
	}
	return f->got_size == size ? 0 : -STRACE_E_ARCHIVE_OBJECT;
}

/* One line of MANIFEST (NUL-terminated, without its newline). */
static int manifest_line(struct strace_bundle *b, char *line,
			 struct strace_archive_fault *f)
{
	char *fld[4], *end, file[8400];
	uint8_t id[STRACE_BUILDID_MAX];
	uint64_t size = 0;
	int n = 0, i;

	for (i = 0; i < 3; i++) {
		fld[i] = line;
		if (!(line = strchr(line, '\t')))
			return -STRACE_E_ARCHIVE_MANIFEST;
		*line++ = 0;
	}
	fld[3] = line;
	snprintf(f->path, sizeof(f->path), "%s", fld[3]);
	if (strcmp(fld[1], "-") &&
	    (n = strace_buildid_parse(fld[1], id)) < 0)
		return -STRACE_E_ARCHIVE_MANIFEST;
	if (strcmp(fld[2], "-")) {
		if (fld[2][0] < '0' || fld[2][0] > '9')
			return -STRACE_E_ARCHIVE_MANIFEST;
		errno = 0;
		size = strtoull(fld[2], &end, 10);
		if (*end || errno)
			return -STRACE_E_ARCHIVE_MANIFEST;
	}
	if (!strcmp(fld[0], "missing")) {
		b->missing++;
		return 0;
	}
	if (!strcmp(fld[2], "-"))
		return -STRACE_E_ARCHIVE_MANIFEST;
	if (!strcmp(fld[0], "perf.data")) {
		if (n)
			return -STRACE_E_ARCHIVE_MANIFEST;
		return check_member(b, b->perf_path, size, id, 0, f);
	}
	if (!strcmp(fld[0], "vdso")) {
		char h[2 * STRACE_BUILDID_MAX + 1];
		if (n <= 0 || strcmp(fld[3], "[vdso]"))
			return -STRACE_E_ARCHIVE_MANIFEST;
		snprintf(file, sizeof(file), "%s/[vdso]/%s/vdso",
			 b->buildid_dir, strace_buildid_hex(id, (size_t)n, h));
	} else if (!strcmp(fld[0], "debug")) {
		char h[2 * STRACE_BUILDID_MAX + 1];
		if (n <= 0 || !path_plain(fld[3]))
			return -STRACE_E_ARCHIVE_MANIFEST;
		strace_buildid_hex(id, (size_t)n, h);
		snprintf(file, sizeof(file),
			 "%s/usr/lib/debug/.build-id/%.2s/%s.debug", b->symfs, h,
			 h + 2);
		return check_member(b, file, size, id, (size_t)n, f);
	} else if (!strcmp(fld[0], "object")) {
		if (!path_plain(fld[3]))
			return -STRACE_E_ARCHIVE_MANIFEST;
		if ((size_t)snprintf(file, sizeof(file), "%s%s", b->symfs,
				     fld[3]) >= sizeof(file))
			return -STRACE_E_ARCHIVE_MANIFEST;
	} else {
		return -STRACE_E_ARCHIVE_MANIFEST;
	}
	b->objects++;
	return check_member(b, file, size, id, (size_t)n, f);
}

static int check_manifest(struct strace_bundle *b,
			  struct strace_archive_fault *f)
{
	char path[4200], *text, *line, *nl;
	struct stat st;
	int fd, rc = 0, saw_perf = 0;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/MANIFEST", b->top);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -STRACE_E_ARCHIVE_MANIFEST : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > MANIFEST_MAX) {
		close(fd);
		return -STRACE_E_ARCHIVE_MANIFEST;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	got = pread(fd, text, (size_t)st.st_size, 0);
	close(fd);
	if (got != st.st_size) {
		free(text);
		return got < 0 ? -errno : -EIO;
	}
	text[got] = 0;
	if (memchr(text, 0, (size_t)got)) {
		free(text);
		return -STRACE_E_ARCHIVE_MANIFEST;
	}
	f->line = 1;
	nl = strchr(text, '\n');
	if (!nl || (size_t)(nl - text) != strlen(STRACE_ARCHIVE_MAGIC) ||
	    memcmp(text, STRACE_ARCHIVE_MAGIC, (size_t)(nl - text)))
		rc = -STRACE_E_ARCHIVE_MANIFEST;
	for (line = nl ? nl + 1 : NULL; !rc && line && *line; line = nl) {
		f->line++;
		nl = strchr(line, '\n');
		if (!nl) {
			rc = -STRACE_E_ARCHIVE_MANIFEST; /* cut short */
			break;
		}
		*nl++ = 0;
		if (!*line || *line == '#')
			continue;
		saw_perf |= !strncmp(line, "perf.data\t", 10);
		rc = manifest_line(b, line, f);
	}
	if (!rc && !saw_perf) {
		f->line = 0;
		f->path[0] = 0;
		rc = -STRACE_E_ARCHIVE_MANIFEST;
	}
	if (!rc)
		f->line = 0;
	free(text);
	return rc;
}

int strace_archive_open(const char *path, const char *tmpdir,
			struct strace_bundle *b,
			struct strace_archive_fault *f)
{
	int rc;

	memset(b, 0, sizeof(*b));
	memset(f, 0, sizeof(*f));
	if ((size_t)snprintf(b->dir, sizeof(b->dir),
			     "%s/ptrace-archive.XXXXXX",
			     tmpdir && *tmpdir ? tmpdir : "/tmp") >=
	    sizeof(b->dir) - 3000) /* (room for the names under it) */
		return -ENAMETOOLONG;
	if (!mkdtemp(b->dir)) {
		rc = -errno;
		b->dir[0] = 0;
		return rc;
	}
	rc = strace_tar_extract(path, b->dir, &b->made, &f->tar);
	if (rc >= 0) {
		b->members = (uint64_t)rc;
		rc = find_top(b);
	}
	if (rc >= 0)
		rc = check_manifest(b, f);
	if (rc < 0) {
		strace_archive_close(b);
		return rc;
	}
	return 0;
}

int strace_archive_remove(const struct strace_bundle *b)
{
	int err;

	if (!b->dir[0])
		return 0;
	err = strace_tar_made_remove(&b->made);
	if (rmdir(b->dir) < 0 && errno != ENOENT && !err)
		err = -errno;
	return err;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

int strace_archive_close(struct strace_bundle *b)
{
	int err = strace_archive_remove(b);

	/* whatever the list missed (it could not grow: out of memory) */
	if (err && b->dir[0] && access(b->dir, F_OK) == 0) {
		nftw(b->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		err = access(b->dir, F_OK) == 0 ? err : 0;
	}
	strace_tar_made_free(&b->made);
	b->dir[0] = 0;
	return err;
}
