/* SPDX-License-Identifier: MIT */
/*
 * decoder/image.c - the code of one process: mappings, ELF objects, symbols.
 *
 * An object is one file (or one memory dump), mapped read-only once and
 * shared by every mapping of it: in one image, or in every image of a
 * struct strace_objcache, whose objects stay cached when no image maps
 * them any more. Symbols are kept per object by file
 * offset, as perf keeps them, so one sorted table serves every mapping.
 * Symbol rules follow perf (tools/perf/util/symbol-elf.c, symbol.c):
 * .symtab if present else .dynsym; STT_FUNC/STT_GNU_IFUNC and visible
 * STT_NOTYPE labels in text sections; aliases resolved like
 * choose_best_symbol(); zero sizes extended to the next symbol.
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

#include "decoder/internal.h"

struct sym {
	uint64_t start, end; /* file offsets, end exclusive */
	const char *name;
	uint8_t bind, type;
	uint8_t pooled;    /* name is an offset in the object's pool */
	uint8_t old_ver;   /* STRACE_PLT_PLAIN: the name had a non-default
			    * version (name@VERSION) */
	uint32_t order;    /* insertion order, for stable alias choice */
	size_t pool_off;
	uint64_t sec_end;  /* STRACE_PLT_PLAIN: the end of its section (file
			    * offset), or 0 */
	const char *raw;   /* STRACE_PLT_PLAIN: the name as the ELF file has
			    * it, where name differs (memcpy@@GLIBC_2.14,
			    * __GI_X, mangled), else NULL */
	size_t raw_off;    /* ... in the object's pool, until it is complete */
};

/* STRACE_PLT_PLAIN: another name of the symbol at start (file offset) */
struct alias {
	uint64_t start;
	const char *name;
};

/* NUL-terminated names, one after another, in memory that moves as it
 * grows: they are known by offset until it is complete */
struct strpool {
	char *v;
	size_t len, cap;
};

/* s appended to p. Returns its offset, or -1 (no memory). */
static long strpool_add(struct strpool *p, const char *s)
{
	size_t n = strlen(s) + 1;

	if (p->len + n > p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 4096;
		char *np;

		while (nc < p->len + n)
			nc *= 2;
		np = realloc(p->v, nc);
		if (!np)
			return -1;
		p->v = np;
		p->cap = nc;
	}
	memcpy(p->v + p->len, s, n);
	p->len += n;
	return (long)(p->len - n);
}

struct object {
	char *path;
	const uint8_t *data; /* whole file */
	size_t size;
	int mmapped;
	/* the mappings that use it, in every image, and the cache's own */
	_Atomic int refs;
	/* symbols are read on first use, once: the flag is set (release)
	 * after they are, and read (acquire) before they are used; the lock
	 * makes the first users wait for the one that reads them */
	_Atomic int syms_loaded;
	pthread_mutex_t syms_lock;
	/* what the symbols depend on: the image options at creation */
	int plt_style, no_debuginfo, no_demangle;
	char *symfs; /* where its debug file is looked for (opts.symfs) */
	/* a cached file: the cache, and the file as it was mapped */
	struct strace_objcache *cache;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct sym *syms;
	size_t nsyms;
	struct alias *aliases; /* by start, STRACE_PLT_PLAIN */
	size_t naliases, capaliases;
	struct perf_sym *psyms; /* perf 6.1 replay: symbols */
	struct perf_iv *iv;     /* ... and the answer per address range */
	size_t niv;
	struct strpool pool; /* synthesized names */
	/* block summaries by file offset, for the walkers of every image
	 * that maps the object (strace_dec_image_block()) */
	pthread_mutex_t blocks_lock;
	struct strace_blockfile_block *blocks;
	size_t blocks_mask, blocks_used;
	int blocks_dirty; /* blocks added since the cache file was read */
	/* the persistent cache (blockfile.c, docs/cache.md), in its
	 * objcache's directory: the object's build-id, read with the file
	 * (bc_lock, bc_tried); the file's bytes, while its symbols are in
	 * use */
	pthread_mutex_t bc_lock;
	_Atomic int bc_tried;
	uint8_t bc_id[STRACE_BLOCKFILE_ID_MAX];
	size_t bc_idn;
	int bc_state; /* enum bc_state */
	void *bc_buf;
	struct strace_blockfile bc;
	int syms_dirty; /* symbols read from the ELF file, not the cache */
	int syms_in_file; /* perf 6.1's symbols and iv are bc's */
	size_t npsyms;
	struct object *next; /* in the image's list, or the cache's */
};

/* Block summaries are kept by their object as struct strace_blockfile_block
 * (decoder.h; the cache files hold the same records): start is 0, and
 * target (when has_target) is relative to the start. */

struct strace_objcache {
	pthread_mutex_t lock; /* the list, and objects joining it */
	struct object *objs;
	char *dir; /* the persistent cache's, or NULL */
};

struct mapping {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;
	struct object *obj;
};

struct strace_image {
	struct mapping *maps; /* sorted by start, disjoint */
	size_t nmaps, cap;
	struct object *objs; /* its own (not those of the cache) */
	struct strace_objcache *cache;
	uint64_t generation;
	int plt_style;
	int no_debuginfo;
	int no_demangle;
	char *symfs;
};

enum bc_state { BC_NONE, BC_MISSED, BC_LOADED, BC_STALE, BC_DAMAGED };

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
				size_t nc = img->cap ? img->cap * 2 : 16;
				struct mapping *nm =
					realloc(img->maps, nc * sizeof(*nm));
				if (!nm)
					return -ENOMEM;
				img->maps = nm;
				img->cap = nc;
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
		size_t nc = img->cap ? img->cap * 2 : 16;
		struct mapping *nm = realloc(img->maps, nc * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		img->maps = nm;
		img->cap = nc;
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
static int open_regular(const char *path, struct stat *st)
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
		fd = open_regular(path, &st);
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

static const struct mapping *find_map(struct strace_image *img,
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
	const struct mapping *m = find_map(img, addr);
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
		const struct mapping *m = find_map(img, addr + done);
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

/* --- block summaries ------------------------------------------------------ */

/*
 * An object keeps the summaries of its blocks by file offset, so that the
 * walkers of every image that maps it (one per thread of a recording, one
 * decode after another with a struct strace_objcache) decode each block
 * with Capstone once. A summary depends on the code bytes only (a direct
 * target moves with the block) as long as the decode did not run into the
 * end of the bytes the mapping gives: one that did is not kept, and a kept
 * one is not used where the mapping gives fewer bytes than it read (an
 * instruction reads at most 15 bytes from its start).
 */
#define OBLOCK_START 1024
#define OBLOCK_MAX (1u << 18) /* entries; at half full no more are kept */
#define INSN_MAX 15

static size_t oblock_hash(uint64_t k)
{
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 32;
	return (size_t)k;
}

/* The slot of key in o's table (its own, or the empty one for it). */
static struct strace_blockfile_block *
oblock_slot(struct strace_blockfile_block *tab, size_t mask, uint64_t key)
{
	size_t i = oblock_hash(key) & mask;

	while (tab[i].key && tab[i].key != key)
		i = (i + 1) & mask;
	return &tab[i];
}

/* o->blocks_lock held: room for more entries (the table at most half
 * full), or -1 (full: not kept). */
static int oblock_room(struct object *o, size_t more)
{
	size_t n = o->blocks ? o->blocks_mask + 1 : OBLOCK_START;
	struct strace_blockfile_block *tab;

	if (o->blocks && o->blocks_used + more <= n / 2)
		return 0;
	while (o->blocks_used + more > n / 2)
		n *= 2;
	if (n > OBLOCK_MAX || !(tab = calloc(n, sizeof(*tab))))
		return -1;
	for (size_t k = 0; o->blocks && k <= o->blocks_mask; k++)
		if (o->blocks[k].key)
			*oblock_slot(tab, n - 1, o->blocks[k].key) =
				o->blocks[k];
	free(o->blocks);
	o->blocks = tab;
	o->blocks_mask = n - 1;
	return 0;
}

/* --- the persistent cache (blockfile.c) ---------------------------------- */

static size_t build_id(Elf *elf, uint8_t *id, size_t max);

/* perf 6.1's lookup points are used in the cache files' bytes */
_Static_assert(sizeof(struct perf_iv) ==
			       sizeof(struct strace_blockfile_point) &&
		       offsetof(struct perf_iv, point) ==
			       offsetof(struct strace_blockfile_point, point) &&
		       offsetof(struct perf_iv, after) ==
			       offsetof(struct strace_blockfile_point, after),
	       "struct perf_iv and struct strace_blockfile_point");

static struct strace_blockfile_key bc_key(const struct object *o)
{
	return (struct strace_blockfile_key){
		o->bc_id,
		o->bc_idn,
		o->size,
		(uint64_t)o->mtime.tv_sec,
		(uint64_t)o->mtime.tv_nsec,
		STRACE_BLOCKFILE_SYMOPTS(o->plt_style, o->no_debuginfo,
				      o->no_demangle)};
}

/* bc_lock held: o's build-id, and its cache file mapped (its blocks are
 * looked up there, strace_dec_image_block(); the symbols wait for
 * load_symbols) */
static void bc_load(struct object *o)
{
	struct strace_blockfile_key key;
	Elf *elf;
	int rc;

	if (!o->cache || !o->cache->dir || !o->mmapped)
		return;
	elf = elf_memory((char *)(uintptr_t)o->data, o->size);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		o->bc_idn = build_id(elf, o->bc_id, sizeof(o->bc_id));
	elf_end(elf);
	if (!o->bc_idn)
		return; /* no build-id: no cache */
	key = bc_key(o);
	rc = strace_blockfile_load(o->cache->dir, &key, &o->bc_buf, &o->bc);
	if (rc == -ENOENT) {
		o->bc_state = BC_MISSED;
		return;
	}
	if (rc) {
		/* rebuilt, never trusted: written anew after the decode */
		o->bc_state = rc == -ESTALE ? BC_STALE : BC_DAMAGED;
		o->blocks_dirty = 1;
		return;
	}
	o->bc_state = BC_LOADED;
}

/*
 * fn(o), run by the first caller only: an object may be shared by images
 * on several threads (struct strace_objcache), and the first ones wait
 * under lock for the one that runs it. The release store of *done pairs
 * with the acquire load here: whoever sees it set sees what fn made.
 */
static void once(struct object *o, _Atomic int *done, pthread_mutex_t *lock,
		 void (*fn)(struct object *))
{
	if (likely(atomic_load_explicit(done, memory_order_acquire)))
		return;
	pthread_mutex_lock(lock);
	if (!atomic_load_explicit(done, memory_order_relaxed)) {
		fn(o);
		atomic_store_explicit(done, 1, memory_order_release);
	}
	pthread_mutex_unlock(lock);
}

static void bc_ensure(struct object *o)
{
	once(o, &o->bc_tried, &o->bc_lock, bc_load);
}

/* room for one more of o's aliases */
static int grow_aliases(struct object *o)
{
	struct alias *v;
	size_t cap;

	if (o->naliases < o->capaliases)
		return 0;
	cap = o->capaliases ? 2 * o->capaliases : 256;
	v = realloc(o->aliases, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	o->aliases = v;
	o->capaliases = cap;
	return 0;
}

/* o's symbols from its cache file; 0, or -1 when it has none (or no
 * memory: then they are read from the ELF file) */
static int bc_symbols(struct object *o)
{
	const struct strace_blockfile *c = &o->bc;
	size_t n = c->nsyms;

	if (!o->bc_buf || !c->has_syms)
		return -1;
	if (o->plt_style == STRACE_PLT_PERF61) {
		/* used where they are, in the file's mapping: the symbols
		 * c->syms, named in its pool (symbol_lookup()) */
		o->iv = (struct perf_iv *)(uintptr_t)c->iv;
		o->npsyms = n;
		o->niv = c->niv;
		o->syms_in_file = 1;
		return 0;
	}
	o->syms = calloc(n ? n : 1, sizeof(*o->syms));
	if (!o->syms)
		return -1;
	o->nsyms = 0;
	for (size_t i = 0; i < n; i++) {
		const struct strace_blockfile_sym *f = &c->syms[i];
		if (f->type == STRACE_BLOCKFILE_ALIAS) {
			/* (aliases follow their symbol: kept in order) */
			if (grow_aliases(o) < 0)
				goto fail;
			o->aliases[o->naliases++] =
				(struct alias){f->start, c->pool + f->name};
			continue;
		}
		struct sym *y = &o->syms[o->nsyms++];
		y->start = f->start;
		y->end = f->end;
		y->name = c->pool + f->name;
		y->bind = f->bind;
		y->type = f->type;
	}
	return 0;
fail:
	free(o->syms);
	o->syms = NULL;
	o->nsyms = o->naliases = 0;
	return -1;
}

/* o's cache file, with everything the decodes added */
static int bc_save(struct object *o)
{
	struct strace_blockfile_key key = bc_key(o);
	struct strace_blockfile c = {0};
	struct strace_blockfile_block *blocks = NULL;
	struct strace_blockfile_sym *syms = NULL;
	struct strpool pool = {0};
	size_t nb = 0, ns = 0;
	int rc = -ENOMEM;

	if (o->blocks) {
		/* (the table's own, then merged with the file's) */
		blocks = malloc((o->blocks_used ? o->blocks_used : 1) *
				sizeof(*blocks));
		if (!blocks)
			goto out;
		for (size_t i = 0; i <= o->blocks_mask; i++)
			if (o->blocks[i].key && nb < o->blocks_used)
				blocks[nb++] = o->blocks[i];
	}
	c.blocks = strace_blockfile_merge(o->bc.blocks, o->bc.nblocks, blocks,
					  nb, &c.nblocks);
	if (!c.blocks)
		goto out;
	if (atomic_load(&o->syms_loaded) && !o->syms_in_file) {
		int perf61 = o->plt_style == STRACE_PLT_PERF61;
		size_t na = 0, k = 0, nal = perf61 ? 0 : o->naliases;
		ns = perf61 ? (o->psyms ? o->npsyms : 0) : o->nsyms;
		syms = calloc(ns + nal ? ns + nal : 1, sizeof(*syms));
		if (!syms)
			goto out;
		for (size_t i = 0; i < ns; i++) {
			struct strace_blockfile_sym *y = &syms[k++];
			const char *name;
			long off;
			if (perf61) {
				y->start = o->psyms[i].start;
				y->end = o->psyms[i].end;
				y->vis_end = o->psyms[i].vis_end;
				y->bind = o->psyms[i].bind;
				name = o->psyms[i].name;
			} else {
				y->start = o->syms[i].start;
				y->end = o->syms[i].end;
				y->bind = o->syms[i].bind;
				y->type = o->syms[i].type;
				name = o->syms[i].name;
			}
			off = strpool_add(&pool, name ? name : "");
			if (off < 0)
				goto out;
			y->name = (uint64_t)off;
			/* STRACE_PLT_PLAIN: the symbol's aliases after it */
			for (; na < nal && o->aliases[na].start <= y->start;
			     na++) {
				struct strace_blockfile_sym *z;
				if (o->aliases[na].start < y->start)
					continue;
				off = strpool_add(&pool, o->aliases[na].name);
				if (off < 0)
					goto out;
				z = &syms[k++];
				z->start = z->end = o->aliases[na].start;
				z->type = STRACE_BLOCKFILE_ALIAS;
				z->name = (uint64_t)off;
			}
		}
		c.has_syms = 1;
		c.syms = syms;
		c.nsyms = k; /* the symbols and their aliases */
		c.iv = perf61 && o->psyms ? (const void *)o->iv : NULL;
		c.niv = c.iv ? o->niv : 0;
		c.pool = pool.v;
		c.pool_len = pool.len;
	} else if (o->bc_buf && o->bc.has_syms) {
		/* not looked up this time, or looked up in the file: kept
		 * as the file had them */
		c.has_syms = 1;
		c.syms = o->bc.syms;
		c.nsyms = o->bc.nsyms;
		c.iv = o->bc.iv;
		c.niv = o->bc.niv;
		c.pool = o->bc.pool;
		c.pool_len = o->bc.pool_len;
	}
	rc = strace_blockfile_write(o->cache->dir, &key, &c);
out:
	free((void *)(uintptr_t)c.blocks);
	free(blocks);
	free(syms);
	free(pool.v);
	return rc;
}

int strace_objcache_save(struct strace_objcache *c,
			 struct strace_objcache_stats *st)
{
	struct strace_objcache_stats z;
	int first = 0;

	if (!st)
		st = &z;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&c->lock);
	for (struct object *o = c->objs; o; o = o->next) {
		int rc;
		switch (o->bc_state) {
		case BC_MISSED: st->missed++; break;
		case BC_LOADED: st->loaded++; break;
		case BC_STALE: st->stale++; break;
		case BC_DAMAGED: st->damaged++; break;
		default: continue; /* not used, or no build-id */
		}
		if (!o->blocks_dirty && !o->syms_dirty)
			continue;
		rc = bc_save(o);
		if (rc < 0) {
			st->write_errors++;
			if (!first)
				first = rc;
			continue;
		}
		st->written++;
		o->blocks_dirty = o->syms_dirty = 0;
	}
	pthread_mutex_unlock(&c->lock);
	st->write_error = first;
	return first;
}

/*
 * The block at ip met bytes it could not decode within an instruction's
 * length of the end of its mapping (avail bytes from ip): the instruction
 * there may go on in the next mapping, as code loaded in pieces does
 * (ptxed's --raw sections, a dump cut at a page). As perf and libipt
 * read across adjacent mappings, so does this when a mapping follows:
 * the block is cut before that instruction (kind NONE: the walk goes on
 * there), and a block that starts at it is that one instruction, decoded
 * from bytes copied across the mappings. Neither is kept by the object
 * (it depends on two). With nothing after, the bytes stay bad.
 */
static int straddle(struct strace_image *img, uint64_t ip, unsigned mode,
		    size_t avail, struct strace_block *out)
{
	uint8_t buf[INSN_MAX];
	size_t n = strace_image_read(img, ip + out->len, buf, sizeof(buf));

	if (n <= avail - out->len)
		return 0; /* nothing follows: the bytes are bad */
	if (out->len) {
		out->kind = STRACE_BK_NONE;
		return 0;
	}
	return strace_block_decode_mode(buf, n, ip, 1, mode, out) < 0 ? -ENOMEM
									 : 0;
}

static int in_map(const struct mapping *m, uint64_t addr)
{
	return addr >= m->start && addr < m->end;
}

int strace_dec_image_block(struct strace_image *img, uint64_t ip,
			   unsigned mode, struct strace_block *out)
{
	const struct mapping *m = find_map(img, ip);
	const uint8_t *code = NULL;
	struct object *o = m ? m->obj : NULL;
	uint64_t off = 0, avail = 0;
	struct strace_blockfile_block *e;
	int found = 0, has_target = 0;
	uint64_t key;

	if (m) {
		off = ip - m->start + m->pgoff;
		if (off < o->size) {
			code = o->data + off;
			avail = o->size - off;
			if (avail > m->end - ip)
				avail = m->end - ip;
		}
	}
	if (!code)
		return strace_block_decode(NULL, 0, ip, 0, out);
	/* the offset + 1, and the mode: the same bytes are two blocks in
	 * two modes */
	key = strace_mode_key(off + 1, mode);
	bc_ensure(o);
	pthread_mutex_lock(&o->blocks_lock);
	if (o->blocks) {
		e = oblock_slot(o->blocks, o->blocks_mask, key);
		if (e->key && (uint64_t)e->b.len + INSN_MAX <= avail) {
			*out = e->b;
			has_target = e->has_target;
			found = 1;
		}
	}
	pthread_mutex_unlock(&o->blocks_lock);
	if (!found && o->bc_buf) {
		/* in the cache file (mapped, never written: no lock) */
		const struct strace_blockfile_block *r =
			strace_blockfile_find(&o->bc, key);
		if (r && (uint64_t)r->b.len + INSN_MAX <= avail) {
			*out = r->b;
			has_target = r->has_target;
			found = 1;
		}
	}
	if (found) {
		out->start = ip;
		out->target = has_target ? ip + out->target : 0;
		if (!in_map(m, out->target))
			/* decided where the target was in the mapping */
			out->flags &= (uint8_t)~(STRACE_BF_SYM_KNOWN |
						 STRACE_BF_SAME_SYM);
		return 0;
	}
	if (strace_block_decode_mode(code, (size_t)avail, ip, 0, mode, out) < 0)
		return -ENOMEM;
	if (out->kind == STRACE_BK_BAD && (uint64_t)out->len + INSN_MAX > avail)
		return straddle(img, ip, mode, (size_t)avail, out);
	if ((uint64_t)out->len + INSN_MAX > avail)
		return 0; /* it read to the end of what this mapping gives */
	if ((out->kind == STRACE_BK_JMP || out->kind == STRACE_BK_JCC ||
	     out->kind == STRACE_BK_CALL) &&
	    in_map(m, out->target)) {
		/* both ends in one mapping of the file: its symbols alone
		 * decide, for every image that maps it so (the walker's
		 * block cache then asks no symbol) */
		out->flags |= STRACE_BF_SYM_KNOWN;
		if (strace_dec_same_symbol(img,
					   ip + out->len - out->term_len,
					   out->target))
			out->flags |= STRACE_BF_SAME_SYM;
	}
	pthread_mutex_lock(&o->blocks_lock);
	if (oblock_room(o, 1) == 0) {
		e = oblock_slot(o->blocks, o->blocks_mask, key);
		if (!e->key) {
			o->blocks_used++;
			o->blocks_dirty = 1;
		}
		e->key = key;
		e->b = *out;
		e->b.start = 0;
		e->b.pad_ = 0;
		e->has_target = out->target != 0;
		e->b.target = out->target ? out->target - ip : 0;
	}
	pthread_mutex_unlock(&o->blocks_lock);
	return 0;
}

/* --- symbols ------------------------------------------------------------ */


struct symvec {
	struct sym *v;
	size_t n, cap;
};

static int symvec_push(struct symvec *sv, uint64_t start, uint64_t size,
		       const char *name, int bind, int type)
{
	if (sv->n == sv->cap) {
		size_t nc = sv->cap ? sv->cap * 2 : 1024;
		struct sym *nv = realloc(sv->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		sv->v = nv;
		sv->cap = nc;
	}
	sv->v[sv->n] = (struct sym){.start = start,
				    .end = start + size,
				    .name = name,
				    .bind = (uint8_t)bind,
				    .type = (uint8_t)type,
				    .order = (uint32_t)sv->n};
	sv->n++;
	return 0;
}

static int symvec_push_pool(struct symvec *sv, struct object *o,
			    uint64_t start, uint64_t size, const char *name)
{
	long off = strpool_add(&o->pool, name);

	if (off < 0 || symvec_push(sv, start, size, NULL, STB_GLOBAL,
				   STT_FUNC) < 0)
		return -ENOMEM;
	sv->v[sv->n - 1].pooled = 1;
	sv->v[sv->n - 1].pool_off = (size_t)off;
	return 0;
}

static Elf_Scn *section_by_name(Elf *elf, size_t shstrndx, const char *name,
				GElf_Shdr *shdr, size_t *idx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name)) {
			if (idx)
				*idx = elf_ndxscn(scn);
			return scn;
		}
	}
	return NULL;
}

static int vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off);

/*
 * Function symbols of symscn (in elf, which may be a separate debug file),
 * by file offset of the run-time file rt, through rt's PT_LOAD headers as
 * perf 6.1 does. Names from a debug file are copied (copy_names).
 */
static int read_symtab(struct object *o, Elf *elf, size_t shstrndx,
		       Elf_Scn *symscn, struct symvec *sv, Elf *rt,
		       int copy_names, int perf61, int no_demangle)
{
	int plain = o->plt_style == STRACE_PLT_PLAIN;
	static _Thread_local char vbuf[1024];
	GElf_Shdr symshdr;
	Elf_Data *data;
	size_t n;
	static _Thread_local char dbuf[4096];
	int copy;

	if (!gelf_getshdr(symscn, &symshdr) || !symshdr.sh_entsize)
		return 0;
	data = elf_getdata(symscn, NULL);
	if (!data)
		return 0;
	n = symshdr.sh_size / symshdr.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr shdr;
		Elf_Scn *sec;
		const char *name, *secname, *raw;
		int type, vis, old_ver, must_copy = copy_names;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		vis = GELF_ST_VISIBILITY(sym.st_other);
		if (!sym.st_name || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(perf61 && type == STT_OBJECT) &&
		    !(type == STT_NOTYPE && vis != STV_HIDDEN &&
		      vis != STV_INTERNAL))
			continue;
		sec = elf_getscn(elf, sym.st_shndx);
		if (!sec || !gelf_getshdr(sec, &shdr))
			continue;
		secname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (perf61) {
			/* perf 6.1 dso__load_sym(): functions, objects and
			 * labels of allocated sections; labels only in
			 * sections named *text* or *data* */
			if (!(shdr.sh_flags & SHF_ALLOC))
				continue;
			if (type == STT_NOTYPE &&
			    (!secname || (!strstr(secname, "text") &&
					  !strstr(secname, "data"))))
				continue;
		} else {
			if (!(shdr.sh_flags & SHF_EXECINSTR))
				continue;
			if (type == STT_NOTYPE &&
			    (!secname || !strstr(secname, "text")))
				continue;
		}
		name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		raw = name;
		old_ver = 0;
		if (plain) {
			/* memcpy@@GLIBC_2.14 is memcpy, and
			 * cfree@GLIBC_2.2.5 cfree of an older version */
			const char *at = strchr(name, '@');
			if (at && at != name &&
			    (size_t)(at - name) < sizeof(vbuf)) {
				old_ver = at[1] != '@';
				memcpy(vbuf, name, (size_t)(at - name));
				vbuf[at - name] = 0;
				name = vbuf;
				must_copy = 1;
			}
			/* __GI_X is glibc's internal alias of X: where it is
			 * the only name (ld.so's), X is what a person types */
			if (!strncmp(name, "__GI_", 5) && name[5])
				name += 5;
		}
		/* perf stores names demangled (C++, OCaml) */
		if (!no_demangle) {
			const char *d = strace_demangle(name, dbuf, sizeof(dbuf));
			copy = must_copy || d != name;
			name = d;
		} else {
			copy = must_copy;
		}
		/* file offset, as perf keeps user symbols */
		uint64_t off;
		if (vaddr_to_off(rt, sym.st_value, &off))
			off = sym.st_value - shdr.sh_addr + shdr.sh_offset;
		if (symvec_push(sv, off, sym.st_size, copy ? NULL : name,
				GELF_ST_BIND(sym.st_info), type) < 0)
			return -ENOMEM;
		if (copy) {
			long po = strpool_add(&o->pool, name);
			if (po < 0)
				return -ENOMEM;
			sv->v[sv->n - 1].pooled = 1;
			sv->v[sv->n - 1].pool_off = (size_t)po;
		}
		if (plain && strcmp(raw, name)) {
			long ro = strpool_add(&o->pool, raw);
			if (ro < 0)
				return -ENOMEM;
			sv->v[sv->n - 1].raw_off = (size_t)ro + 1;
		}
		if (plain) {
			uint64_t end;

			sv->v[sv->n - 1].old_ver = (uint8_t)old_ver;
			if (shdr.sh_size &&
			    !vaddr_to_off(rt, shdr.sh_addr + shdr.sh_size - 1,
					  &end))
				sv->v[sv->n - 1].sec_end = end + 1;
		}
	}
	return 0;
}

/* The GNU build-id of elf into id; returns its length or 0. */
static size_t build_id(Elf *elf, uint8_t *id, size_t max)
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

struct debugfile {
	void *map;
	size_t size;
	Elf *elf;
	size_t shstrndx;
	Elf_Scn *symtab;
};

static void debug_close(struct debugfile *d)
{
	if (d->elf)
		elf_end(d->elf);
	if (d->map)
		munmap(d->map, d->size);
	memset(d, 0, sizeof(*d));
}

/* Open path if it is an ELF file with a .symtab and the build-id want. */
static int debug_try(const char *path, const uint8_t *want, size_t wantn,
		     struct debugfile *d)
{
	struct stat st;
	uint8_t id[64];
	GElf_Shdr sh;
	int fd = open_regular(path, &st); /* a FIFO there must not block */

	if (fd < 0)
		return 0;
	if (st.st_size < 64) {
		close(fd);
		return 0;
	}
	d->size = (size_t)st.st_size;
	d->map = mmap(NULL, d->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (d->map == MAP_FAILED) {
		d->map = NULL;
		return 0;
	}
	d->elf = elf_memory(d->map, d->size);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF ||
	    elf_getshdrstrndx(d->elf, &d->shstrndx))
		goto no;
	d->symtab = section_by_name(d->elf, d->shstrndx, ".symtab", &sh, NULL);
	if (!d->symtab || sh.sh_type != SHT_SYMTAB)
		goto no;
	if (wantn && (build_id(d->elf, id, sizeof(id)) != wantn ||
		      memcmp(id, want, wantn)))
		goto no; /* perf rejects a mismatched build-id too */
	return 1;
no:
	debug_close(d);
	return 0;
}

/*
 * Separate debug information, where perf 6.1 looks for it, in its order:
 * the .gnu_debuglink name beside the file, in its .debug/, under
 * /usr/lib/debug/<dir>/; then the build-id cache $HOME/.debug/.build-id/
 * xx/rest/debug; then /usr/lib/debug/.build-id/xx/rest.debug. Under a
 * symfs root (path is ROOT/<dir>/name), those under it only: beside the
 * file, ROOT/usr/lib/debug/<dir>/, ROOT/usr/lib/debug/.build-id/. The
 * file taken is named in found (may be NULL).
 */
static int debug_find(const char *path, const char *root, Elf *rt,
		      size_t shstrndx, struct debugfile *d, char *found,
		      size_t flen)
{
	uint8_t id[64];
	size_t idn = build_id(rt, id, sizeof(id)), rl = root ? strlen(root) : 0;
	char buf[4096], hex[129];
	GElf_Shdr sh;
	Elf_Scn *dl = section_by_name(rt, shstrndx, ".gnu_debuglink", &sh, NULL);
	const char *home = root ? NULL : getenv("HOME");
	/* the path as recorded: under the root, without it */
	const char *rec = root && !strncmp(path, root, rl) && path[rl] == '/'
				  ? path + rl
				  : path;
	int ok = 0;

	if (!root)
		root = "";
	if (dl && path[0] == '/') {
		Elf_Data *data = elf_getdata(dl, NULL);
		const char *slash = strrchr(path, '/');
		int dirlen = (int)(slash - path);
		const char *rslash = strrchr(rec, '/');
		int rdirlen = rslash ? (int)(rslash - rec) : 0;
		if (data && data->d_size > 1 &&
		    memchr(data->d_buf, 0, data->d_size)) {
			const char *name = data->d_buf;
			snprintf(buf, sizeof(buf), "%.*s/%s", dirlen, path, name);
			if (strcmp(buf, path) && (ok = debug_try(buf, id, idn, d)))
				goto out;
			snprintf(buf, sizeof(buf), "%.*s/.debug/%s", dirlen,
				 path, name);
			if ((ok = debug_try(buf, id, idn, d)))
				goto out;
			snprintf(buf, sizeof(buf), "%s/usr/lib/debug%.*s/%s",
				 root, rdirlen, rec, name);
			if ((ok = debug_try(buf, id, idn, d)))
				goto out;
		}
	}
	if (!idn)
		return 0;
	for (size_t i = 0; i < idn; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (home) {
		snprintf(buf, sizeof(buf), "%s/.debug/.build-id/%.2s/%s/debug",
			 home, hex, hex + 2);
		if ((ok = debug_try(buf, id, idn, d)))
			goto out;
	}
	snprintf(buf, sizeof(buf), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
		 root, hex, hex + 2);
	ok = debug_try(buf, id, idn, d);
out:
	if (ok && found)
		snprintf(found, flen, "%s", buf);
	return ok;
}

int strace_debug_find(const char *path, const char *symfs, char *out,
		      size_t len)
{
	struct debugfile d = {0};
	struct stat st;
	GElf_Shdr sh;
	size_t shstrndx;
	void *map;
	Elf *elf;
	int fd = open_regular(path, &st), rc = 0;

	if (fd < 0)
		return fd;
	map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ,
				MAP_PRIVATE, fd, 0)
			 : MAP_FAILED;
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_memory(map, (size_t)st.st_size);
	if (elf && elf_kind(elf) == ELF_K_ELF &&
	    !elf_getshdrstrndx(elf, &shstrndx)) {
		Elf_Scn *symtab = section_by_name(elf, shstrndx, ".symtab",
						  &sh, NULL);
		if (!symtab || sh.sh_type != SHT_SYMTAB) {
			rc = debug_find(path, symfs && *symfs ? symfs : NULL,
					elf, shstrndx, &d, out, len);
			debug_close(&d);
		}
	}
	if (elf)
		elf_end(elf);
	munmap(map, (size_t)st.st_size);
	return rc;
}

struct rel {
	uint64_t offset;
	uint32_t sym;
	uint32_t type;
	uint64_t addend;
};

static int cmp_rel(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Entry displacement of a .plt.got / .plt.sec entry: endbr64, bnd, jmp *. */
static uint32_t plt_entry_got(const uint8_t *p, size_t avail)
{
	size_t n = 0;
	uint32_t disp;

	if (avail >= 4 && !memcmp(p, "\xf3\x0f\x1e\xfa", 4))
		n += 4;
	if (n < avail && p[n] == 0xf2)
		n++;
	if (n + 6 <= avail && p[n] == 0xff && p[n + 1] == 0x25) {
		memcpy(&disp, p + n + 2, 4);
		return (uint32_t)(n + 6) + disp;
	}
	return 0;
}

static int better_plain(const struct sym *a, const char *na,
			const struct sym *b, const char *nb);

/* The name of s (a pooled one only until the pool grows again). */
static const char *sym_name(const struct object *o, const struct sym *s)
{
	return s->pooled ? o->pool.v + s->pool_off : s->name;
}

/* The IFUNC symbol at off: perf's first one, or (STRACE_PLT_PLAIN) the
 * one a person types, of its aliases. */
static const char *ifunc_name(const struct object *o, struct symvec *sv,
			      uint64_t off)
{
	const struct sym *best = NULL;

	for (size_t i = 0; i < sv->n; i++) {
		const struct sym *y = &sv->v[i];

		if (y->start != off || y->type != STT_GNU_IFUNC)
			continue;
		if (o->plt_style != STRACE_PLT_PLAIN) {
			if (!y->pooled)
				return y->name;
			continue;
		}
		if (!best ||
		    better_plain(best, sym_name(o, best), y, sym_name(o, y)))
			best = y;
	}
	return best ? sym_name(o, best) : NULL;
}

/* Offset of a virtual address in the file (through PT_LOAD headers). */
static int vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

static int add_plt_syms(struct object *o, Elf *elf,
			size_t shstrndx, size_t symtab_idx, size_t dynsym_idx,
			struct symvec *sv)
{
	GElf_Shdr plt, pltsec, relsh, symsh, gotsh, rdsh, dsh;
	Elf_Scn *scn, *relscn, *symscn;
	Elf_Data *reld, *symd;
	struct rel *rels = NULL;
	uint64_t entry, header, off;
	size_t nrel, i;
	int modern = o->plt_style == STRACE_PLT_PERF62 ||
		     o->plt_style == STRACE_PLT_PLAIN;
	int plain = o->plt_style == STRACE_PLT_PLAIN;
	int lazy = 1, have_sec = 0;
	char buf[1024];
	static _Thread_local char dbuf[1000];
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	if (!section_by_name(elf, shstrndx, ".plt", &plt, NULL))
		return 0;
	entry = plt.sh_entsize;
	if (entry != 8 && entry != 16)
		entry = plt.sh_addralign == 8 ? 8 : 16;
	header = entry;

	if (modern) {
		/* .plt.got entries, named through .rela.dyn */
		scn = section_by_name(elf, shstrndx, ".plt.got", &gotsh, NULL);
		Elf_Scn *rd = section_by_name(elf, shstrndx, ".rela.dyn", &rdsh,
					      NULL);
		if (scn && gotsh.sh_entsize && gotsh.sh_type == SHT_PROGBITS &&
		    gotsh.sh_offset + gotsh.sh_size <= o->size) {
			struct rel *rd_rels = NULL;
			size_t nrd = 0;
			Elf_Data *rdd = rd ? elf_getdata(rd, NULL) : NULL;
			Elf_Scn *ds = rd && rdsh.sh_link
					      ? elf_getscn(elf, rdsh.sh_link)
					      : NULL;
			Elf_Data *dd = ds && gelf_getshdr(ds, &dsh)
					       ? elf_getdata(ds, NULL)
					       : NULL;

			if (rdd && dd && rdsh.sh_entsize) {
				size_t n = rdsh.sh_size / rdsh.sh_entsize;
				rd_rels = calloc(n ? n : 1, sizeof(*rd_rels));
				if (!rd_rels)
					return -ENOMEM;
				for (i = 0; i < n; i++) {
					GElf_Rela ra;
					if (!gelf_getrela(rdd, (int)i, &ra))
						break;
					if (!GELF_R_SYM(ra.r_info))
						continue;
					rd_rels[nrd].offset = ra.r_offset;
					rd_rels[nrd].sym =
						(uint32_t)GELF_R_SYM(ra.r_info);
					nrd++;
				}
				qsort(rd_rels, nrd, sizeof(*rd_rels), cmp_rel);
			}
			for (i = 0; i < gotsh.sh_size; i += gotsh.sh_entsize) {
				const uint8_t *p = o->data + gotsh.sh_offset + i;
				uint32_t disp = plt_entry_got(
					p, gotsh.sh_size - i);
				const char *nm = NULL;
				if (disp && rd_rels) {
					struct rel key = {
						.offset = gotsh.sh_addr + i + disp};
					struct rel *r = bsearch(
						&key, rd_rels, nrd,
						sizeof(*rd_rels), cmp_rel);
					GElf_Sym s;
					if (r && gelf_getsym(dd, (int)r->sym,
							     &s))
						nm = elf_strptr(elf,
								dsh.sh_link,
								s.st_name);
				}
				if (nm && *nm)
					snprintf(buf, sizeof(buf), "%s@plt",
						 o->no_demangle
							 ? nm
							 : strace_demangle(
								   nm, dbuf,
								   sizeof(dbuf)));
				else
					snprintf(buf, sizeof(buf),
						 "offset_%#llx@plt",
						 (unsigned long long)(
							 gotsh.sh_offset + i));
				if (symvec_push_pool(sv, o,
						     gotsh.sh_offset + i,
						     gotsh.sh_entsize, buf)) {
					free(rd_rels);
					return -ENOMEM;
				}
			}
			free(rd_rels);
		}
		if (section_by_name(elf, shstrndx, ".plt.sec", &pltsec,
				    NULL)) {
			have_sec = 1;
			lazy = 0;
			entry = pltsec.sh_entsize;
			if (entry != 8 && entry != 16)
				entry = pltsec.sh_addralign == 8 ? 8 : 16;
		}
	}

	relscn = section_by_name(elf, shstrndx, ".rela.plt", &relsh, NULL);
	if (!relscn || relsh.sh_type != SHT_RELA || !relsh.sh_link ||
	    !relsh.sh_entsize)
		return 0;
	/* perf 6.1 names PLT entries only through .dynsym; a static
	 * executable's IRELATIVE .plt (linked to .symtab) is 6.2's */
	if (!modern && (!dynsym_idx || relsh.sh_link != dynsym_idx))
		return 0;
	if (relsh.sh_link != dynsym_idx && relsh.sh_link != symtab_idx)
		return 0;
	symscn = elf_getscn(elf, relsh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &symsh))
		return 0;
	reld = elf_getdata(relscn, NULL);
	symd = elf_getdata(symscn, NULL);
	if (!reld || !symd)
		return 0;
	nrel = relsh.sh_size / relsh.sh_entsize;
	rels = calloc(nrel ? nrel : 1, sizeof(*rels));
	if (!rels)
		return -ENOMEM;
	for (i = 0; i < nrel; i++) {
		GElf_Rela ra;
		if (!gelf_getrela(reld, (int)i, &ra))
			break;
		rels[i].offset = ra.r_offset;
		rels[i].sym = (uint32_t)GELF_R_SYM(ra.r_info);
		rels[i].type = (uint32_t)GELF_R_TYPE(ra.r_info);
		rels[i].addend = (uint64_t)ra.r_addend;
	}
	nrel = i;

	if (have_sec) {
		off = pltsec.sh_offset;
	} else {
		off = plt.sh_offset;
		if (modern && nrel * entry == plt.sh_size)
			lazy = 0; /* no header */
		else
			off += header;
	}
	if (modern) {
		/* the lazy-binding header (with .plt.sec: all of .plt, its
		 * entries' lazy halves) */
		if (have_sec || lazy)
			if (symvec_push_pool(sv, o, plt.sh_offset,
					     have_sec ? plt.sh_size : header,
					     plain ? "[plt0]" : ".plt"))
				goto nomem;
		qsort(rels, nrel, sizeof(*rels), cmp_rel);
	}
	for (i = 0; i < nrel; i++) {
		GElf_Sym s;
		const char *nm = "";

		if (gelf_getsym(symd, (int)rels[i].sym, &s))
			nm = elf_strptr(elf, symsh.sh_link, s.st_name);
		if (!nm)
			nm = "";
		if (*nm || !modern) {
			snprintf(buf, sizeof(buf), "%s@plt",
				 o->no_demangle
					 ? nm
					 : strace_demangle(nm, dbuf, sizeof(dbuf)));
		} else {
			const char *ifn = NULL;
			uint64_t ioff;
			if (rels[i].type == R_X86_64_IRELATIVE &&
			    !vaddr_to_off(elf, rels[i].addend, &ioff))
				ifn = ifunc_name(o, sv, ioff);
			if (ifn)
				snprintf(buf, sizeof(buf), "%s@plt", ifn);
			else if (plain && rels[i].type == R_X86_64_IRELATIVE)
				/* objdump's name of it */
				snprintf(buf, sizeof(buf), "*ABS*+%#llx@plt",
					 (unsigned long long)rels[i].addend);
			else
				snprintf(buf, sizeof(buf), "offset_%#llx@plt",
					 (unsigned long long)off);
		}
		if (symvec_push_pool(sv, o, off, entry, buf))
			goto nomem;
		off += entry;
	}
	free(rels);
	return 0;
nomem:
	free(rels);
	return -ENOMEM;
}

static int prefix_underscores(const char *s)
{
	int n = 0;
	while (*s++ == '_')
		n++;
	return n;
}

int strace_dec_perf_choose_best(uint64_t la, int binda, const char *namea,
				uint64_t lb, int bindb, const char *nameb)
{
	if (lb == 0 && la > 0)
		return 0;
	if (la == 0 && lb > 0)
		return 1;
	if ((binda == STB_WEAK) != (bindb == STB_WEAK))
		return binda == STB_WEAK;
	if ((binda == STB_GLOBAL) != (bindb == STB_GLOBAL))
		return bindb == STB_GLOBAL;
	if (prefix_underscores(namea) != prefix_underscores(nameb))
		return prefix_underscores(nameb) < prefix_underscores(namea);
	return strlen(nameb) > strlen(namea);
}

/*
 * STRACE_PLT_PLAIN: 1 if b (named nb) is the name a person types rather
 * than a (na), of two symbols at one address: an exported one (global,
 * weak) before a local one (glibc's __GI_ aliases are local), the
 * default version before an older one, a function before a label, the
 * fewest leading underscores (puts, not _IO_puts; write, not __write;
 * __GI_ was taken off the name as it was read),
 * one with a size, the shortest, the first read.
 */
static int better_plain(const struct sym *a, const char *na,
			const struct sym *b, const char *nb)
{
	int ea = a->bind != STB_LOCAL, eb = b->bind != STB_LOCAL;
	int fa = a->type != STT_NOTYPE, fb = b->type != STT_NOTYPE;
	int ua = prefix_underscores(na), ub = prefix_underscores(nb);
	size_t la = strlen(na), lb = strlen(nb);

	if (ea != eb)
		return eb;
	if (a->old_ver != b->old_ver)
		return a->old_ver;
	if (fa != fb)
		return fb;
	if (ua != ub)
		return ub < ua;
	if ((a->end > a->start) != (b->end > b->start))
		return b->end > b->start;
	if (la != lb)
		return lb < la;
	return b->order < a->order;
}

/* perf's choose_best_symbol() on our entries: 1 if b beats a. */
static int better(const struct sym *a, const struct sym *b)
{
	return strace_dec_perf_choose_best(a->end - a->start, a->bind,
					   a->name, b->end - b->start, b->bind,
					   b->name);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* 1 if name is among the n names v[] */
static int has_name(const struct alias *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return 1;
	return 0;
}

/* The names of the k symbols g[] at one start other than best's own: the
 * other symbols' and the names as the ELF file has them, best's too, each
 * once, into o->aliases. */
static int add_aliases(struct object *o, const struct sym *g, size_t k,
		       const struct sym *best)
{
	size_t first = o->naliases;

	for (size_t i = 0; i < k; i++) {
		const char *names[2] = {g[i].name, g[i].raw};
		for (size_t j = 0; j < 2; j++) {
			const char *nm = names[j];
			if (!nm || !strcmp(nm, best->name) ||
			    has_name(o->aliases + first, o->naliases - first,
				     nm))
				continue;
			if (grow_aliases(o) < 0)
				return -ENOMEM;
			o->aliases[o->naliases++] =
				(struct alias){g[i].start, nm};
		}
	}
	return 0;
}

/* Read o's symbols (once: see ensure_symbols()). */
static void load_symbols(struct object *o)
{
	struct symvec sv = {0};
	size_t shstrndx, symtab_idx = 0, dynsym_idx = 0, i, n, n_elf = 0;
	size_t n_symtab = 0;
	int perf61 = o->plt_style == STRACE_PLT_PERF61;
	int plain = o->plt_style == STRACE_PLT_PLAIN;
	GElf_Shdr sh;
	Elf_Scn *symtab, *dynsym;
	Elf *elf;

	if (o->size < 64 || memcmp(o->data, "\177ELF", 4))
		return;
	bc_ensure(o);
	if (bc_symbols(o) == 0)
		return;
	o->syms_dirty = o->bc_idn != 0;
	elf = elf_memory((char *)(uintptr_t)o->data, o->size);
	if (!elf)
		return;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	symtab = section_by_name(elf, shstrndx, ".symtab", &sh, &symtab_idx);
	if (symtab && sh.sh_type != SHT_SYMTAB)
		symtab = NULL, symtab_idx = 0;
	dynsym = section_by_name(elf, shstrndx, ".dynsym", &sh, &dynsym_idx);
	if (dynsym && sh.sh_type != SHT_DYNSYM)
		dynsym = NULL, dynsym_idx = 0;
	if (!symtab && !o->no_debuginfo) {
		struct debugfile d = {0};
		if (debug_find(o->path, o->symfs, elf, shstrndx, &d, NULL,
			       0)) {
			int rc = read_symtab(o, d.elf, d.shstrndx, d.symtab,
					     &sv, elf, 1, perf61,
					     o->no_demangle);
			debug_close(&d);
			if (rc < 0)
				goto fail;
			/* perf: that file is the symbol source; its .dynsym
			 * is NOBITS in a debug file, so no second pass */
			dynsym = NULL;
			n_symtab = sv.n;
		}
	}
	if (symtab) {
		if (read_symtab(o, elf, shstrndx, symtab, &sv, elf, 0, perf61,
				o->no_demangle) < 0)
			goto fail;
		n_symtab = sv.n;
	}
	/* perf 6.1 loads .dynsym too, in a second pass after .symtab's
	 * fix-ups (their order decides which alias survives) */
	if (dynsym && (perf61 || !symtab))
		if (read_symtab(o, elf, shstrndx, dynsym, &sv, elf, 0, perf61,
				o->no_demangle) < 0)
			goto fail;
	n_elf = sv.n;
	if (add_plt_syms(o, elf, shstrndx, symtab_idx, dynsym_idx, &sv) < 0)
		goto fail;
	/* pool names are tagged offsets: make them pointers now */
	for (i = 0; i < sv.n; i++) {
		if (sv.v[i].pooled)
			sv.v[i].name = o->pool.v + sv.v[i].pool_off;
		if (sv.v[i].raw_off)
			sv.v[i].raw = o->pool.v + sv.v[i].raw_off - 1;
	}
	if (perf61) {
		o->psyms = malloc((sv.n ? sv.n : 1) * sizeof(*o->psyms));
		if (!o->psyms)
			goto fail;
		for (i = 0; i < sv.n; i++)
			o->psyms[i] = (struct perf_sym){sv.v[i].start,
							sv.v[i].end,
							sv.v[i].name,
							sv.v[i].bind, 0};
		o->npsyms = sv.n;
		if (strace_dec_perf61_index(o->psyms, n_symtab, n_elf, sv.n,
					    &o->iv, &o->niv) < 0) {
			free(o->psyms);
			o->psyms = NULL;
			goto fail;
		}
		free(sv.v);
		elf_end(elf);
		return;
	}
	qsort(sv.v, sv.n, sizeof(*sv.v), cmp_sym);
	/* perf's symbols__fixup_duplicate(), or the name a person types
	 * (and the others kept as its aliases) */
	for (i = 0, n = 0; i < sv.n;) {
		size_t best = i, end = i + 1;
		for (; end < sv.n && sv.v[end].start == sv.v[i].start; end++)
			if (plain ? better_plain(&sv.v[best], sv.v[best].name,
						 &sv.v[end], sv.v[end].name)
				  : better(&sv.v[best], &sv.v[end]))
				best = end;
		if (plain && add_aliases(o, sv.v + i, end - i, &sv.v[best]) < 0)
			goto fail;
		sv.v[n++] = sv.v[best];
		i = end;
	}
	/* perf's symbols__fixup_end() (plain: not past the section's end,
	 * where perf's reaches into the next one: _init over .plt) */
	for (i = 0; i + 1 < n; i++)
		if (sv.v[i].end == sv.v[i].start) {
			sv.v[i].end = sv.v[i + 1].start;
			if (plain && sv.v[i].sec_end > sv.v[i].start &&
			    sv.v[i].end > sv.v[i].sec_end)
				sv.v[i].end = sv.v[i].sec_end;
		}
	if (n && sv.v[n - 1].end == sv.v[n - 1].start)
		sv.v[n - 1].end = ((sv.v[n - 1].start + 4095) & ~4095ull) + 4096;
	o->syms = sv.v;
	o->nsyms = n;
	elf_end(elf);
	return;
fail:
	free(sv.v);
out:
	elf_end(elf);
}

/* o's symbols, read once (a file without symbols counts as loaded too) */
static void ensure_symbols(struct object *o)
{
	once(o, &o->syms_loaded, &o->syms_lock, load_symbols);
}

static int symbol_lookup(struct strace_image *img, uint64_t addr,
			 struct strace_symbol *out);

int strace_image_elf_base(struct strace_image *img, uint64_t addr,
			  uint64_t *start, uint64_t *vaddr)
{
	const struct mapping *m = find_map(img, addr);
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

/* Per-thread memo of recent answers: the walker asks about the same
 * indirect-branch targets (PLT slots, callbacks) again and again, and so
 * does a sink that defines symbols. Keyed by image, generation, address. */
#define SYMC 512
static _Thread_local struct symc {
	const struct strace_image *img;
	uint64_t gen, addr;
	struct strace_symbol sym;
	int rc;
} symc[SYMC];

int strace_image_symbol(struct strace_image *img, uint64_t addr,
			struct strace_symbol *out)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;
	struct symc *c = &symc[(h >> 40) & (SYMC - 1)];

	if (likely(c->addr == addr && c->img == img &&
		   c->gen == img->generation)) {
		*out = c->sym;
		return c->rc;
	}
	c->rc = symbol_lookup(img, addr, &c->sym);
	c->img = img;
	c->gen = img->generation;
	c->addr = addr;
	*out = c->sym;
	return c->rc;
}

static int symbol_lookup(struct strace_image *img, uint64_t addr,
			 struct strace_symbol *out)
{
	const struct mapping *m = find_map(img, addr);
	struct object *o;
	uint64_t off;
	size_t lo, hi;

	if (!m)
		return -ENOENT;
	o = m->obj;
	ensure_symbols(o);
	off = addr - m->start + m->pgoff;
	if (o->iv) {
		/* perf 6.1's answer: the last point at or before off */
		const struct perf_sym *ps;
		int k;
		lo = 0;
		hi = o->niv;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (o->iv[mid].at <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return -ENOENT;
		k = o->iv[lo - 1].at == off ? o->iv[lo - 1].point
					    : o->iv[lo - 1].after;
		if (k < 0)
			return -ENOENT;
		if (o->syms_in_file) {
			const struct strace_blockfile_sym *fs = &o->bc.syms[k];
			out->name = o->bc.pool + fs->name;
			out->start = fs->start - m->pgoff + m->start;
			out->size = fs->vis_end - fs->start;
		} else {
			ps = &o->psyms[k];
			out->name = ps->name;
			out->start = ps->start - m->pgoff + m->start;
			out->size = ps->vis_end - ps->start;
		}
		out->dso = o->path;
		return 0;
	}
	/* last symbol with start <= off */
	lo = 0;
	hi = o->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->syms[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	/* symbols may nest (perf's rbtree finds the first whose range holds
	 * off); walk back over the few that start at lower offsets */
	for (size_t i = lo; i-- > 0;) {
		const struct sym *s = &o->syms[i];
		if (off < s->end) {
			out->name = s->name;
			out->dso = o->path;
			out->start = s->start - m->pgoff + m->start;
			out->size = s->end - s->start;
			return 0;
		}
		if (lo - i > 4)
			break;
	}
	return -ENOENT;
}

size_t strace_image_aliases(struct strace_image *img, uint64_t start,
			    const char **out, size_t max)
{
	const struct mapping *m = find_map(img, start);
	struct object *o;
	uint64_t off;
	size_t lo = 0, hi, n = 0;

	if (!m)
		return 0;
	o = m->obj;
	ensure_symbols(o);
	off = start - m->start + m->pgoff;
	hi = o->naliases;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->aliases[mid].start < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < o->naliases && o->aliases[lo].start == off; lo++, n++)
		if (n < max)
			out[n] = o->aliases[lo].name;
	return n;
}

int strace_image_each_symbol(struct strace_image *img, uint64_t addr,
			     strace_symbol_fn fn, void *arg)
{
	const struct mapping *m = find_map(img, addr);
	struct object *o;

	if (!m)
		return -ENOENT;
	o = m->obj;
	ensure_symbols(o);
	for (size_t i = 0; i < o->nsyms; i++) {
		const struct sym *s = &o->syms[i];
		struct strace_symbol out = {
			s->name, o->path, s->start - m->pgoff + m->start,
			s->end - s->start,
		};
		int r = fn(arg, &out, s->start);

		if (r)
			return r;
	}
	return 0;
}

void strace_dec_image_load_all_symbols(struct strace_image *img)
{
	for (size_t i = 0; i < img->nmaps; i++)
		ensure_symbols(img->maps[i].obj);
}
