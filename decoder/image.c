/* SPDX-License-Identifier: MIT */
/*
 * decoder/image.c - the code of one process: mappings and the objects
 * behind them, and the object cache that shares objects between images.
 *
 * An object is one file (or one memory dump), mapped read-only once and
 * shared by every mapping of it: in one image, or in every image of a
 * struct strace_objcache, whose objects stay cached when no image maps
 * them any more. Its symbols (symbols.c), block summaries
 * (image_block.c) and persistent cache file (image_cache.c) hang off it.
 * This is the image's lowest layer: it calls none of those.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/image.h"
#include "strace/internal/grow.h"

/* s appended to p. Returns its offset, or -1 (no memory). */
long strace_dec_strpool_add(struct strpool *p, const char *s)
{
	size_t n = strlen(s) + 1;

	/* (a name longer than the pool has room for doubles it again) */
	while (p->len + n > p->cap) {
		char *np = strace_grow(p->v, &p->cap, 1, 4096);

		if (!np)
			return -1;
		p->v = np;
	}
	memcpy(p->v + p->len, s, n);
	p->len += n;
	return (long)(p->len - n);
}


/* Generations are unique across images, so a per-thread cache of the last
 * mapping can never match a freed image that a new one reuses. */
static _Atomic uint64_t generations = 1;

static uint64_t new_generation(void)
{
	return atomic_fetch_add(&generations, 1) + 1;
}

int strace_image_new(const struct strace_image_opts *opts,
		     struct strace_image **out)
{
	struct strace_image_opts o;
	struct strace_image *img;
	int rc = strace_opts_load(&o, sizeof(o), opts);

	if (rc < 0)
		return rc;
	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	img->plt_style = o.plt_style;
	img->no_debuginfo = o.no_debuginfo;
	img->no_demangle = o.no_demangle;
	if (o.symfs && *o.symfs && !(img->symfs = strdup(o.symfs))) {
		free(img);
		return -ENOMEM;
	}
	img->cache = o.objects;
	img->generation = new_generation();
	elf_version(EV_CURRENT);
	*out = img;
	return 0;
}

static void object_free(struct object *o)
{
	if (o->mmapped)
		munmap((void *)(uintptr_t)o->data, o->size);
	else
		free((void *)(uintptr_t)o->data);
	free(o->syms);
	free(o->aliases);
	if (!o->syms_in_file) {
		free(o->psyms);
		free(o->iv);
	}
	free(o->pool.v);
	free(o->path);
	free(o->symfs);
	free(o->blocks);
	free(o->cov);
	free(o->br);
	strace_blockfile_unload(o->bc_buf, &o->bc);
	pthread_mutex_destroy(&o->syms_lock);
	pthread_mutex_destroy(&o->blocks_lock);
	pthread_mutex_destroy(&o->bc_lock);
	free(o);
}

static struct object *object_new(const struct strace_image *img,
				 const char *path)
{
	struct object *o = calloc(1, sizeof(*o));

	if (!o || !(o->path = strdup(path))) {
		free(o);
		return NULL;
	}
	pthread_mutex_init(&o->syms_lock, NULL);
	pthread_mutex_init(&o->blocks_lock, NULL);
	pthread_mutex_init(&o->bc_lock, NULL);
	o->plt_style = img->plt_style;
	o->no_debuginfo = img->no_debuginfo;
	o->no_demangle = img->no_demangle;
	if (img->symfs && !(o->symfs = strdup(img->symfs))) {
		free(o->path);
		free(o);
		return NULL;
	}
	return o;
}

/* One reference less: an image's object goes when its last mapping does;
 * a cached one stays in its cache (which holds a reference) until the
 * cache is freed. */
static void object_put(struct strace_image *img, struct object *o)
{
	struct object **pp;

	if (atomic_fetch_sub(&o->refs, 1) > 1)
		return;
	if (!o->cache) {
		for (pp = &img->objs; *pp; pp = &(*pp)->next) {
			if (*pp == o) {
				*pp = o->next;
				break;
			}
		}
	}
	object_free(o);
}

void strace_image_free(struct strace_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->nmaps; i++)
		object_put(img, img->maps[i].obj);
	free(img->maps);
	free(img->symfs);
	free(img);
}

uint64_t strace_image_generation(const struct strace_image *img)
{
	return img->generation;
}

/* Cut [start, end) out of the mapping list (splitting as needed). */
static int punch(struct strace_image *img, uint64_t start, uint64_t end)
{
	size_t i = 0;

	while (i < img->nmaps) {
		struct mapping *m = &img->maps[i];

		if (m->end <= start || m->start >= end) {
			i++;
			continue;
		}
		if (m->start < start && m->end > end) {
			/* split in two */
			if (img->nmaps == img->cap) {
				struct mapping *nm = strace_grow(
					img->maps, &img->cap, sizeof(*nm), 16);
				if (!nm)
					return -ENOMEM;
				img->maps = nm;
				m = &img->maps[i];
			}
			memmove(m + 1, m, (img->nmaps - i) * sizeof(*m));
			img->nmaps++;
			m[1].pgoff += end - m->start;
			m[1].start = end;
			m[0].end = start;
			atomic_fetch_add(&m->obj->refs, 1);
			i += 2;
			continue;
		}
		if (m->start >= start && m->end <= end) {
			object_put(img, m->obj);
			memmove(m, m + 1, (img->nmaps - i - 1) * sizeof(*m));
			img->nmaps--;
			continue;
		}
		if (m->start < start) {
			m->end = start;
		} else {
			m->pgoff += end - m->start;
			m->start = end;
		}
		i++;
	}
	return 0;
}

static int insert_mapping(struct strace_image *img, uint64_t start,
			  uint64_t len, uint64_t pgoff, struct object *o)
{
	size_t i;
	int err;

	err = punch(img, start, start + len);
	if (err)
		return err;
	if (img->nmaps == img->cap) {
		struct mapping *nm =
			strace_grow(img->maps, &img->cap, sizeof(*nm), 16);
		if (!nm)
			return -ENOMEM;
		img->maps = nm;
	}
	for (i = 0; i < img->nmaps && img->maps[i].start < start; i++)
		;
	memmove(&img->maps[i + 1], &img->maps[i],
		(img->nmaps - i) * sizeof(img->maps[0]));
	img->maps[i] = (struct mapping){start, start + len, pgoff, o};
	img->nmaps++;
	atomic_fetch_add(&o->refs, 1);
	img->generation = new_generation();
	return 0;
}

/*
 * Open path to map it, if it is a regular file. A path named by a trace
 * (MMAP2) or by a binary (.gnu_debuglink) may be a FIFO, whose open waits
 * for a writer forever, or a device: stat() first, so that nothing but a
 * regular file is opened, then open with O_NONBLOCK and check again with
 * fstat() in case the path changed meanwhile. Returns the descriptor and
 * *st, -errno, or -ENODEV if path is not a regular file.
 */
int strace_dec_open_regular(const char *path, struct stat *st)
{
	int fd;

	if (stat(path, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -ENODEV;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/* A new object (no reference yet) for the file open at fd, mapped. */
static int object_map(const struct strace_image *img, const char *path,
		      int fd, const struct stat *st, struct object **out)
{
	void *p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd,
		       0);
	struct object *o;

	if (p == MAP_FAILED)
		return -errno;
	o = object_new(img, path);
	if (!o) {
		munmap(p, (size_t)st->st_size);
		return -ENOMEM;
	}
	o->data = p;
	o->size = (size_t)st->st_size;
	o->mmapped = 1;
	o->dev = st->st_dev;
	o->ino = st->st_ino;
	o->mtime = st->st_mtim;
	*out = o;
	return 0;
}

/* The cached object of path, the file open at fd as it is now, with img's
 * symbol options: mapped and cached on a miss. Returns 0 and *out with a
 * reference for the caller, or -errno. */
static int cache_get(struct strace_image *img, const char *path, int fd,
		     const struct stat *st, struct object **out)
{
	struct strace_objcache *c = img->cache;
	struct object *o;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	for (o = c->objs; o; o = o->next)
		if (o->ino == st->st_ino && o->dev == st->st_dev &&
		    o->size == (size_t)st->st_size &&
		    o->mtime.tv_sec == st->st_mtim.tv_sec &&
		    o->mtime.tv_nsec == st->st_mtim.tv_nsec &&
		    o->plt_style == img->plt_style &&
		    o->no_debuginfo == img->no_debuginfo &&
		    o->no_demangle == img->no_demangle &&
		    !strcmp(o->symfs ? o->symfs : "",
			    img->symfs ? img->symfs : "") &&
		    !strcmp(o->path, path))
			break;
	if (!o) {
		err = object_map(img, path, fd, st, &o);
		if (!err) {
			o->cache = c;
			atomic_store(&o->refs, 1); /* the cache's */
			o->next = c->objs;
			c->objs = o;
		}
	}
	if (!err)
		atomic_fetch_add(&o->refs, 1);
	pthread_mutex_unlock(&c->lock);
	*out = o;
	return err;
}

int strace_image_add_file(struct strace_image *img, uint64_t start,
			  uint64_t len, uint64_t pgoff, const char *path)
{
	struct object *o = NULL;
	struct stat st;
	int fd, err;

	if (!len || start + len < start || !path)
		return -STRACE_E_BADARG;
	if (!img->cache) {
		for (o = img->objs; o; o = o->next)
			if (o->mmapped && !strcmp(o->path, path))
				break;
		if (o)
			atomic_fetch_add(&o->refs, 1);
	}
	if (!o) {
		fd = strace_dec_open_regular(path, &st);
		if (fd < 0)
			return fd;
		if (st.st_size == 0) {
			close(fd);
			return -EINVAL;
		}
		err = img->cache ? cache_get(img, path, fd, &st, &o)
				 : object_map(img, path, fd, &st, &o);
		close(fd);
		if (err)
			return err;
		if (!img->cache) {
			atomic_store(&o->refs, 1);
			o->next = img->objs;
			img->objs = o;
		}
	}
	/* o has one reference for us: it holds o across insert_mapping's
	 * punch, which may drop the mappings that used it so far */
	err = insert_mapping(img, start, len, pgoff, o);
	object_put(img, o);
	return err;
}

int strace_objcache_new(struct strace_objcache **out)
{
	struct strace_objcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	elf_version(EV_CURRENT);
	*out = c;
	return 0;
}

void strace_objcache_free(struct strace_objcache *c)
{
	struct object *o;

	if (!c)
		return;
	while ((o = c->objs)) {
		c->objs = o->next;
		if (atomic_fetch_sub(&o->refs, 1) == 1)
			object_free(o);
	}
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	free(c);
}

int strace_objcache_set_dir(struct strace_objcache *c, const char *dir)
{
	char *d = dir ? strdup(dir) : NULL;

	if (dir && !d)
		return -ENOMEM;
	free(c->dir);
	c->dir = d;
	return 0;
}

int strace_image_add_bytes(struct strace_image *img, uint64_t start,
			   const void *buf, size_t len, const char *name)
{
	struct object *o;
	void *copy;
	int err;

	if (!len || start + len < start || !buf)
		return -STRACE_E_BADARG;
	copy = malloc(len);
	o = copy ? object_new(img, name ? name : "[anon]") : NULL;
	if (!o) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, buf, len);
	o->data = copy;
	o->size = len;
	o->next = img->objs;
	img->objs = o;
	atomic_store(&o->refs, 1);
	err = insert_mapping(img, start, len, 0, o);
	object_put(img, o);
	return err;
}

int strace_image_remove(struct strace_image *img, uint64_t start,
			uint64_t len)
{
	int err = punch(img, start, start + len);

	img->generation = new_generation();
	return err;
}

/* The last mapping found, per thread (so that walkers on several threads
 * can share one image), valid for one image and generation. */
static _Thread_local const struct strace_image *tl_img;
static _Thread_local uint64_t tl_gen;
static _Thread_local const struct mapping *tl_last;

const struct mapping *strace_dec_image_find_map(struct strace_image *img,
						uint64_t addr)
{
	const struct mapping *m = tl_last;
	size_t lo = 0, hi = img->nmaps;

	if (likely(tl_img == img && tl_gen == img->generation && m &&
		   addr >= m->start && addr < m->end))
		return m;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		m = &img->maps[mid];
		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else {
			tl_img = img;
			tl_gen = img->generation;
			return tl_last = m;
		}
	}
	return NULL;
}


const uint8_t *strace_image_code(struct strace_image *img, uint64_t addr,
				 size_t *avail)
{
	const struct mapping *m = strace_dec_image_find_map(img, addr);
	uint64_t off, n;

	if (!m)
		return NULL;
	off = addr - m->start + m->pgoff;
	if (off >= m->obj->size)
		return NULL;
	n = m->obj->size - off;
	if (n > m->end - addr)
		n = m->end - addr;
	*avail = (size_t)n;
	return m->obj->data + off;
}

size_t strace_image_read(struct strace_image *img, uint64_t addr, void *buf,
			 size_t len)
{
	size_t done = 0;

	while (done < len) {
		const struct mapping *m =
			strace_dec_image_find_map(img, addr + done);
		uint64_t off, n;

		if (!m)
			break;
		off = addr + done - m->start + m->pgoff;
		if (off >= m->obj->size)
			break;
		n = m->obj->size - off;
		if (n > m->end - (addr + done))
			n = m->end - (addr + done);
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)buf + done, m->obj->data + off, (size_t)n);
		done += (size_t)n;
	}
	return done;
}

/* room for one more of o's aliases */
int strace_dec_grow_aliases(struct object *o)
{
	struct alias *v;

	if (o->naliases < o->capaliases)
		return 0;
	v = strace_grow(o->aliases, &o->capaliases, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	o->aliases = v;
	return 0;
}

/* The GNU build-id of elf into id; returns its length or 0. */
size_t strace_dec_build_id(Elf *elf, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) &&
			    nh.n_descsz <= max && doff + nh.n_descsz <= d->d_size) {
				memcpy(id, (char *)d->d_buf + doff, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

int strace_image_elf_base(struct strace_image *img, uint64_t addr,
			  uint64_t *start, uint64_t *vaddr)
{
	const struct mapping *m = strace_dec_image_find_map(img, addr);
	const struct object *o;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (!m)
		return -ENOENT;
	o = m->obj;
	if (!o->data || o->size < sizeof(eh) ||
	    memcmp(o->data, ELFMAG, SELFMAG) || o->data[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	memcpy(&eh, o->data, sizeof(eh));
	if (eh.e_phentsize != sizeof(ph) || eh.e_phoff > o->size ||
	    eh.e_phnum > (o->size - eh.e_phoff) / sizeof(ph))
		return -ENOENT;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		memcpy(&ph, o->data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		/* the segment the mapping's first page holds: a file offset
		 * x of it is at x - p_offset + p_vaddr */
		if (ph.p_type != PT_LOAD || m->pgoff >= ph.p_offset + ph.p_filesz ||
		    m->pgoff + 4096 <= ph.p_offset)
			continue;
		*start = m->start;
		*vaddr = m->pgoff - ph.p_offset + ph.p_vaddr;
		return 0;
	}
	return -ENOENT;
}
