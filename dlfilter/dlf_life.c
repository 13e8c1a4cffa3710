/* SPDX-License-Identifier: MIT */
/* dlfilter/dlf_life.c - the dlfilter's new and free, and its accessors
 * (strace_dlf_finish(), which writes events, stays in dlf.c). */
#include <stdio.h>
#include <unistd.h>

#include "dlf_int.h"

int strace_dlf_new(const struct strace_dlf_opts *opts, struct strace_dlf **out,
		   int *auto_path)
{
	struct strace_dlf *d;
	struct strace_dlf_opts o;
	char path[4096];
	const char *p;
	int rc;

	*out = NULL;
	*auto_path = 0;
	if (strace_opts_load(&o, sizeof(o), opts) < 0)
		return -STRACE_E_BADARG;
	opts = &o;
	p = o.ring_path;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = o;
	if (!p) {
		*auto_path = getenv("STRACE_RING") == NULL ||
			     !*getenv("STRACE_RING");
		rc = strace_ring_default_path(path, sizeof(path));
		if (rc < 0)
			goto fail;
		p = path;
	}
	struct strace_ring_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.capacity = opts->capacity;
	ro.mode = opts->mode;
	/* An archive grows as it fills: fault its pages in as they are
	 * written, not 24 MiB up front (most of it string table that a trace
	 * never fills) */
	ro.no_populate = opts->mode == STRACE_RING_ARCHIVE;
	rc = strace_ring_create(p, &ro, &d->ring);
	if (rc < 0)
		goto fail;
	rc = strace_writer_open(d->ring, &d->w);
	if (rc < 0)
		goto fail;
	rc = strace_bcache_new(0, &d->bc);
	if (rc < 0)
		goto fail;
	if (o.cache_dir)
		snprintf(d->cache_dir, sizeof(d->cache_dir), "%s", o.cache_dir);
	else if (!o.no_cache)
		strace_cache_default_dir(d->cache_dir, sizeof(d->cache_dir));
	d->addrs_cap = 1u << 14;
	d->addrs = calloc(d->addrs_cap, sizeof(*d->addrs));
	if (!d->addrs) {
		rc = -ENOMEM;
		goto fail;
	}
	*out = d;
	return 0;
fail:
	if (d->ring && rc != -EEXIST) {
		/* keep no half-made ring file behind */
		char *made = strdup(strace_ring_path(d->ring));
		strace_writer_close(d->w);
		d->w = NULL;
		strace_ring_close(d->ring);
		d->ring = NULL;
		if (made)
			unlink(made);
		free(made);
	}
	strace_dlf_free(d);
	return rc;
}

const char *strace_dlf_ring_path(const struct strace_dlf *d)
{
	return strace_ring_path(d->ring);
}

struct strace_ring *strace_dlf_ring(const struct strace_dlf *d)
{
	return d->ring;
}

void strace_dlf_stats(const struct strace_dlf *d, struct strace_dlf_stats *st)
{
	*st = d->st;
}

int strace_dlf_free(struct strace_dlf *d)
{
	int rc = 0;

	if (!d)
		return 0;
	if (d->w) {
		rc = strace_dlf_finish(d);
		int crc = strace_writer_close(d->w);
		if (!rc)
			rc = crc;
	}
	strace_ring_close(d->ring);
	strace_bcache_free(d->bc);
	strace_image_free(d->img);
	strace_symset_free(d->sites);
	for (size_t i = 1; i < d->ndsos; i++) {
		free(d->dsos[i].name);
		strace_blockfile_unload(d->dsos[i].bc_buf, &d->dsos[i].bc);
		free(d->dsos[i].nv);
	}
	for (size_t i = 1; i < d->nsyms; i++)
		free(d->syms[i].name);
	free(d->dsos);
	free(d->syms);
	free(d->symhash);
	free(d->addrs);
	for (size_t i = 0; i < d->thrs_cap; i++) {
		free(d->thrs[i].comm);
		strace_dec_spreader_free(d->thrs[i].sp);
	}
	free(d->thrs);
	free(d->pdsos);
	free(d->holes);
	free(d->defs);
	free(d);
	return rc;
}
