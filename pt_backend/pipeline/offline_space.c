/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/offline_space.c - the code each trace ran: every
 * object a mapping names resolved to a file (--symfs, the build-id cache,
 * the vDSO; another build refused), and the address spaces (a process
 * between two execs, a child forked from its parent) and their images.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offline_int.h"

/* The build-id the file's BUILD_ID feature gives name, into id: its
 * length, 0 if none. */
static int recorded_id(struct ctx *c, const char *name, uint8_t *id)
{
	const uint8_t *feat;
	uint64_t size;
	int n;

	if (strace_perf_feature(&c->perf, PFMT_FEAT_BUILD_ID, &feat, &size) !=
		    1 ||
	    (n = strace_buildid_find(feat, size, name, id)) <= 0)
		return 0;
	return n;
}

/* The decode is refused: the recording's object path is another build
 * in file (its build-id got, ngot bytes). */
static int mismatch(struct ctx *c, const char *path, const char *file,
		    const uint8_t *want, size_t nwant, const uint8_t *got,
		    size_t ngot)
{
	struct strace_offline_mismatch *m = &c->st.mismatch;

	snprintf(m->path, sizeof(m->path), "%s", path);
	snprintf(m->file, sizeof(m->file), "%s", file);
	memcpy(m->want, want, nwant);
	memcpy(m->got, got, ngot);
	m->nwant = (uint8_t)nwant;
	m->ngot = (uint8_t)ngot;
	return -STRACE_E_PERF_BUILDID;
}

/* The vDSO the file names by build-id, in perf's build-id cache: its path
 * into buf; 1 if it is there. buf is "" if the file names none. Once per
 * file, before the decoding jobs (offline_find_vdso()). */
static int vdso_cached(struct ctx *c, const uint8_t *id, int n, char *buf,
		       size_t len)
{
	buf[0] = 0;
	if (n <= 0)
		return 0;
	if (!c->o->buildid_dir ||
	    strace_buildid_vdso_path(c->o->buildid_dir, id, (size_t)n, buf,
				     len) < 0) {
		buf[0] = 0;
		return 0;
	}
	return access(buf, R_OK) == 0;
}


/* c->vdso: --vdso, else the build-id cache's copy, else NULL (and
 * c->vdso_hint, where that copy would be). Either must be the vDSO the
 * file names, when it names one: else -STRACE_E_PERF_BUILDID. */
int offline_find_vdso(struct ctx *c)
{
	uint8_t want[STRACE_BUILDID_MAX], got[STRACE_BUILDID_MAX];
	int n = recorded_id(c, "[vdso]", want), k;

	c->vdso = c->o->vdso_path;
	if (!c->vdso &&
	    vdso_cached(c, want, n, c->vdso_hint, sizeof(c->vdso_hint)))
		c->vdso = c->vdso_hint;
	if (!c->vdso || n <= 0)
		return 0;
	k = strace_buildid_of_file(c->vdso, got);
	if (k < 0)
		return 0; /* (cannot be read: add_one_map() says so) */
	if (k != n || memcmp(want, got, (size_t)n))
		return mismatch(c, "[vdso]", c->vdso, want, (size_t)n, got,
				(size_t)k);
	return 0;
}

static int by_path(const void *a, const void *b)
{
	const struct mapping *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/*
 * The file each mapping is read from (mapping.file): its recorded path,
 * under o->symfs if set, else the build-id cache's copy
 * (strace_buildid_locate()); an object whose file is another build is
 * refused: -STRACE_E_PERF_BUILDID. Once per object, before the decode.
 */
int offline_resolve_objects(struct ctx *c)
{
	struct mapping **by;
	int rc = 0;

	if (!c->maps.n)
		return 0;
	by = malloc(c->maps.n * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < c->maps.n; i++)
		by[i] = &c->maps.v[i];
	qsort(by, c->maps.n, sizeof(*by), by_path);
	for (size_t i = 0; i < c->maps.n && rc >= 0; i++) {
		struct mapping *m = by[i];
		struct strace_buildid_found fd;
		uint8_t want[STRACE_BUILDID_MAX];
		int n;

		if (i && !strcmp(by[i - 1]->path, m->path)) {
			m->file = by[i - 1]->file;
			m->has_id = by[i - 1]->has_id;
			continue;
		}
		m->file = m->path;
		if (!strcmp(m->path, "[vdso]"))
			continue; /* (offline_find_vdso()) */
		n = recorded_id(c, m->path, want);
		m->has_id = n > 0;
		rc = strace_buildid_locate(m->path, want, (size_t)n,
					   c->o->symfs, c->o->buildid_dir, &fd);
		if (rc == -STRACE_E_PERF_BUILDID) {
			rc = mismatch(c, m->path, fd.file, want, (size_t)n,
				      fd.id, fd.n);
			break;
		}
		if (rc == -ENAMETOOLONG)
			continue; /* (read as recorded: said missing later) */
		/* found, or not (the path looked at: add_one_map() says
		 * it cannot be read) */
		rc = 0;
		if (strcmp(fd.file, m->path) &&
		    !(m->file = offline_keep_name(c, fd.file)))
			rc = -ENOMEM;
	}
	free(by);
	return rc;
}

/* An empty image whose files come from the decode's cache. */
int offline_new_image(struct ctx *c, struct strace_image **img)
{
	struct strace_image_opts io;

	memset(&io, 0, sizeof(io));
	io.size = sizeof(io);
	io.objects = c->objects;
	io.plt_style = c->o->names;
	io.symfs = c->o->symfs;
	return strace_image_new(&io, img);
}

/* One mapping into img; a file that cannot be read is warned about and
 * counted in *missing (the code there becomes decode errors). */
static void add_one_map(struct ctx *c, struct strace_image *img,
			const struct mapping *m, uint64_t *missing)
{
	const char *file = m->path;
	uint32_t pid = m->pid;
	int rc;

	if (strcmp(m->path, "[vdso]") == 0) {
		if (!c->vdso) {
			offline_warn(c,
				     "pid %u: no vDSO image: calls into the "
				     "vDSO at 0x%llx become decode errors; "
				     "pass --vdso FILE%s%s",
				     pid, (unsigned long long)m->start,
				     c->vdso_hint[0]
					     ? ", or put the recording "
					       "machine's vDSO (perf archive "
					       "and ptrace-capture --archive "
					       "pack it) at "
					     : "",
				     c->vdso_hint);
			(*missing)++;
			return;
		}
		file = c->vdso;
		rc = strace_image_add_file(img, m->start, m->len, 0, file);
	} else {
		file = m->file ? m->file : m->path;
		rc = strace_image_add_file(img, m->start, m->len, m->pgoff,
					   file);
	}
	/* (where it was looked for under --symfs, and the name it has) */
	char as[4200] = "";
	if (strcmp(file, m->path) && m->file == file)
		snprintf(as, sizeof(as), " (the recording's %s)", m->path);
	if (rc == -ENODEV) {
		/* a FIFO, a device: never opened (it could block) */
		offline_warn(c,
			     "pid %u: cannot read %s%s: not a regular file (a "
			     "FIFO, a device or a directory): code there "
			     "cannot be decoded; put the mapped ELF file at "
			     "this path",
			     pid, file, as);
		(*missing)++;
	} else if (rc < 0) {
		offline_warn(
			c,
			"pid %u: cannot read %s%s (%s): code there cannot "
			"be decoded; copy the file to this path%s",
			pid, file, as, strace_strerror(rc),
			m->has_id
				? " from the recording machine, or put it "
				  "in perf's build-id cache (perf "
				  "buildid-cache -a FILE there; ptrace-capture "
				  "--archive bundles the objects)"
				: "");
		(*missing)++;
	}
}

/* Mappings of pid, its parents' first (a forked child inherits them). */
int offline_add_maps(struct ctx *c, struct strace_image *img, uint32_t pid,
			    int depth, uint64_t *missing)
{
	if (depth > 16)
		return 0;
	for (size_t i = 0; i < c->forks.n; i++)
		if (c->forks.v[i].pid == pid)
			offline_add_maps(c, img, c->forks.v[i].ppid, depth + 1,
					 missing);
	for (size_t i = 0; i < c->maps.n; i++)
		if (c->maps.v[i].pid == pid)
			add_one_map(c, img, &c->maps.v[i], missing);
	return 0;
}

/* --- address spaces: a process's images over time ---------------------- */

/* The space of pid at time t: the latest one started at or before t;
 * -1 if none. */
static int space_at(const struct ctx *c, uint32_t pid, uint64_t t)
{
	int best = -1;

	for (size_t i = 0; i < c->spaces.n; i++) {
		const struct space *sp = &c->spaces.v[i];
		if (sp->pid == pid && sp->from <= t &&
		    (best < 0 || sp->from >= c->spaces.v[best].from))
			best = (int)i;
	}
	return best;
}

static int new_space(struct ctx *c, uint32_t pid, uint64_t from, int parent,
		     uint64_t forked)
{
	struct space sp = {pid, from, parent, forked, -1};

	if (c->spaces.n >= INT32_MAX || VEC_PUSH(c->spaces, sp))
		return -ENOMEM;
	return (int)(c->spaces.n - 1);
}

/* A pid's space from the start of the recording (its mappings before any
 * fork or exec record names it: perf's synthesized ones). */
int offline_base_space(struct ctx *c, uint32_t pid, uint64_t t)
{
	int s = space_at(c, pid, t);
	return s >= 0 ? s : new_space(c, pid, 0, -1, 0);
}

static int cmp_spev(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b; /* {time, seq, index} */
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * The spaces, from the fork and exec records in time order (record order
 * for equal times), and each mapping into the space of its pid at its
 * time. Without times every record counts as at the end.
 */
int offline_build_spaces(struct ctx *c)
{
	size_t nf = c->forks.n, ne = c->execs.n, n = nf + ne;
	uint64_t (*ev)[3] = calloc(n ? n : 1, sizeof(*ev));
	int rc = 0;

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++) {
		ev[i][0] = c->forks.v[i].time;
		ev[i][1] = c->forks.v[i].seq;
		ev[i][2] = i;
	}
	for (size_t i = 0; i < ne; i++) {
		ev[nf + i][0] = c->execs.v[i].time;
		ev[nf + i][1] = c->execs.v[i].seq;
		ev[nf + i][2] = nf + i;
	}
	qsort(ev, n, sizeof(*ev), cmp_spev);
	/* a pid mapped before any fork record made it: it was there from
	 * the start (an exec inherits that space) */
	for (size_t i = 0; i < c->maps.n && rc >= 0; i++) {
		const struct mapping *m = &c->maps.v[i];
		int forked = 0;
		for (size_t j = 0; j < nf && !forked; j++)
			forked = c->forks.v[j].pid == m->pid &&
				 c->forks.v[j].time <= m->time;
		if (!forked && space_at(c, m->pid, 0) < 0)
			rc = new_space(c, m->pid, 0, -1, 0);
	}
	for (size_t i = 0; i < n && rc >= 0; i++) {
		size_t k = (size_t)ev[i][2];
		if (k < nf) {
			const struct fork_rec *f = &c->forks.v[k];
			int known = space_at(c, f->ppid, f->time) >= 0;
			for (size_t j = 0; !known && j < c->maps.n; j++)
				known = c->maps.v[j].pid == f->ppid;
			if (!known)
				offline_warn(
					c,
					"pid %u is forked from pid %u, of "
					"which "
					"the recording has no mappings: the "
					"child's image holds only the mappings "
					"recorded for it",
					f->pid, f->ppid);
			int par = offline_base_space(c, f->ppid, f->time);
			rc = par < 0 ? par
				     : new_space(c, f->pid, f->time, par,
						 f->time);
		} else {
			/* As perf: the mappings recorded from the exec on
			 * replace what they overlap; the old program's
			 * others stay (and a recorder that writes the new
			 * program's MMAP2 just before its COMM|EXEC, as
			 * ptsynth did, loses nothing). */
			const struct exec_rec *e = &c->execs.v[k - nf];
			int old = space_at(c, e->pid, e->time), mapped = 0;
			for (size_t j = 0; j < c->maps.n && !mapped; j++)
				mapped = c->maps.v[j].pid == e->pid &&
					 c->maps.v[j].time >= e->time;
			if (!mapped)
				offline_warn(
					c,
					"pid %u execs, but no MMAP record for "
					"it "
					"follows: its new program is decoded "
					"against its old mappings (decode "
					"errors "
					"where they differ)",
					e->pid);
			rc = new_space(c, e->pid, e->time, old, e->time);
		}
	}
	free(ev);
	for (size_t i = 0; i < c->maps.n && rc >= 0; i++) {
		struct mapping *m = &c->maps.v[i];
		rc = m->space = offline_base_space(c, m->pid, m->time);
	}
	return rc < 0 ? rc : 0;
}

typedef VEC(size_t) idxvec;

/* The mappings of space s up to time tmax, in the order they apply: the
 * parent's up to the fork first. */
static int space_maps(const struct ctx *c, int s, uint64_t tmax, idxvec *out,
		      int depth)
{
	const struct space *sp = &c->spaces.v[s];

	/* a parent is always made before its child: no cycle, but a long
	 * chain of forks is cut short rather than recursed into */
	if (sp->parent >= 0 && depth < 64) {
		uint64_t t = sp->forked < tmax ? sp->forked : tmax;
		int rc = space_maps(c, sp->parent, t, out, depth + 1);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < c->maps.n; i++)
		if (c->maps.v[i].space == s &&
		    (c->maps.v[i].time <= tmax || tmax == UINT64_MAX) &&
		    VEC_PUSH(*out, i))
			return -ENOMEM;
	return 0;
}

static int same_map(const struct mapping *a, const struct mapping *b)
{
	return a->start == b->start && a->len == b->len &&
	       a->pgoff == b->pgoff && strcmp(a->path, b->path) == 0;
}

/* The image slot of space s (made on first use; spaces with the same
 * mappings share one). Returns the slot, or -ENOMEM. */
int offline_space_slot(struct ctx *c, int s)
{
	idxvec l = {0};
	int rc;

	if (c->spaces.v[s].slot >= 0)
		return c->spaces.v[s].slot;
	rc = space_maps(c, s, UINT64_MAX, &l, 0);
	if (rc < 0) {
		free(l.v);
		return rc;
	}
	for (size_t k = 0; k < c->slots.n; k++) {
		const struct imgslot *is = &c->slots.v[k];
		size_t j = 0;
		if (is->n != l.n)
			continue;
		while (j < l.n && same_map(&c->maps.v[is->maps[j]],
					   &c->maps.v[l.v[j]]))
			j++;
		if (j == l.n) {
			free(l.v);
			return c->spaces.v[s].slot = (int)k;
		}
	}
	struct imgslot is = {l.v, l.n, NULL, c->spaces.v[s].pid, 0};
	if (VEC_PUSH(c->slots, is)) {
		free(l.v);
		return -ENOMEM;
	}
	return c->spaces.v[s].slot = (int)(c->slots.n - 1);
}

/* The image of a slot, made on first use. */
int offline_slot_image(struct ctx *c, int k, uint64_t *missing,
			      struct strace_image **out)
{
	struct imgslot *is = &c->slots.v[k];
	int rc;

	if (!is->img) {
		rc = offline_new_image(c, &is->img);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < is->n; i++)
			add_one_map(c, is->img, &c->maps.v[is->maps[i]],
				    missing);
	}
	*out = is->img;
	return 0;
}
