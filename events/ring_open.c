/* SPDX-License-Identifier: MIT */
/*
 * events/ring_open.c - a ring's file: the default path, create, open, close,
 * the mappings, and an archive's growth (both sides).
 * See events/ring_internal.h for the protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring_internal.h"

/*
 * Give [off, off + len) of the file its pages now, so that a store there
 * cannot fault for want of memory (SIGBUS on a full tmpfs): -ENOSPC is
 * returned instead. A file system without fallocate gets the old, lazy
 * behaviour.
 */
int ring_back(int fd, uint64_t off, uint64_t len)
{
	if (fallocate(fd, 0, (off_t)off, (off_t)len) == 0 ||
	    errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return -errno;
}

int strace_ring_default_path(char *buf, size_t len)
{
	const char *env = getenv("STRACE_RING");
	int n;

	if (env && *env) {
		n = snprintf(buf, len, "%s", env);
	} else {
		uint8_t r[16];
		if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
			/* No entropy source: fall back to time and address. */
			uint64_t t = (uint64_t)time(NULL) ^ (uintptr_t)buf;
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (uint8_t)(t >> (8 * (i % 8))) ^
				       (uint8_t)(i * 37);
		}
		r[6] = (uint8_t)((r[6] & 0x0f) | 0x40); /* uuid4 */
		r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
		n = snprintf(buf, len,
			     "/dev/shm/strace_%d_%02x%02x%02x%02x-%02x%02x-"
			     "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.srb",
			     (int)getpid(), r[0], r[1], r[2], r[3], r[4], r[5],
			     r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
			     r[14], r[15]);
	}
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

struct strace_ring *ring_alloc(const char *path)
{
	size_t plen = strlen(path);
	struct strace_ring *r = calloc(1, sizeof(*r) + plen + 1);
	if (!r)
		return NULL;
	memcpy(r->path, path, plen + 1);
	r->fd = -1;
	pthread_mutex_init(&r->grow, NULL);
	return r;
}

void ring_free(struct strace_ring *r)
{
	struct ring_map *m = atomic_load_explicit(&r->cur, memory_order_relaxed);

	while (m) {
		struct ring_map *older = m->older;
		munmap(m->base, m->len);
		free(m);
		m = older;
	}
	if (r->fd >= 0)
		close(r->fd);
	pthread_mutex_destroy(&r->grow);
	free(r);
}

/*
 * Map the whole file, covering at least slots event slots: an archive's
 * mapping reaches ARCHIVE_RESERVE times further, past the end of the file
 * (pages there are never touched: positions past the file's capacity are
 * never committed). The new mapping becomes ring->cur; the older ones stay.
 * Returns 0 or -errno.
 */
int ring_add_map(struct strace_ring *r, uint64_t slots)
{
	uint64_t reach = slots;
	struct ring_map *m = malloc(sizeof(*m));

	if (!m)
		return -ENOMEM;
	if (r->mode == STRACE_RING_ARCHIVE)
		reach = slots > RING_MAX_CAPACITY / ARCHIVE_RESERVE
				? RING_MAX_CAPACITY
				: slots * ARCHIVE_RESERVE;
	m->len = (size_t)round_up(file_bytes(r, reach), 4096);
	m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		       0);
	if (m->base == MAP_FAILED && reach > slots) { /* no room to spare */
		reach = slots;
		m->len = (size_t)round_up(file_bytes(r, reach), 4096);
		m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       r->fd, 0);
	}
	if (m->base == MAP_FAILED) {
		int err = -errno;
		free(m);
		return err;
	}
	m->ev = (struct strace_event *)(void *)(m->base + r->events_offset);
	m->slots = reach;
	m->older = atomic_load_explicit(&r->cur, memory_order_relaxed);
	if (!m->older) {
		r->h = (struct ring_hdr *)(void *)m->base;
		r->strings = m->base + RING_HDR_SIZE;
		r->ev = m->ev;
	}
	/* Release: the fields above before the pointer (pairs with the
	 * acquire loads of cur). */
	atomic_store_explicit(&r->cur, m, memory_order_release);
	return 0;
}

int strace_ring_create(const char *path, const struct strace_ring_opts *opts,
		       struct strace_ring **out)
{
	struct strace_ring_opts o;
	char defpath[PATH_MAX];
	struct strace_ring *r;
	int err;

	*out = NULL;
	err = strace_opts_load(&o, sizeof(o), opts);
	if (err < 0)
		return err;
	if (!o.capacity) /* an archive grows: start small */
		o.capacity = o.tap_only			   ? STRACE_RING_MIN_CAPACITY
			     : o.mode == STRACE_RING_ARCHIVE ? 4096
							     : STRACE_RING_DEFAULT_CAPACITY;
	if (!o.strings_size)
		o.strings_size = STRACE_RING_DEFAULT_STRINGS;
	if (!is_pow2(o.capacity) || o.capacity < STRACE_RING_MIN_CAPACITY ||
	    o.capacity > RING_MAX_CAPACITY || o.strings_size > RING_MAX_STRINGS ||
	    o.mode < STRACE_RING_LOSSLESS || o.mode > STRACE_RING_ARCHIVE)
		return -STRACE_E_BADARG;
	if (!path) {
		err = strace_ring_default_path(defpath, sizeof(defpath));
		if (err < 0)
			return err;
		path = defpath;
	}
	r = ring_alloc(path);
	if (!r)
		return -ENOMEM;

	r->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (r->fd < 0) {
		struct stat st;
		err = -errno;
		if (err == -EEXIST && lstat(path, &st) == 0 &&
		    S_ISLNK(st.st_mode))
			err = -ELOOP;
		ring_free(r);
		return err;
	}

	r->strings_size = round_up(o.strings_size, 4096);
	r->events_offset = RING_HDR_SIZE + r->strings_size;
	r->mode = o.mode;
	r->tap_only = !!o.tap_only;
	r->cap = o.capacity;
	r->mask = r->cap - 1;
	r->wake_step = r->mode != STRACE_RING_ARCHIVE && r->cap / 4 < WAKE_STEP
			       ? r->cap / 4
			       : WAKE_STEP;
	uint64_t file_size = file_bytes(r, o.capacity);

	/* Pages now for the header, the first step of the string table and
	 * the events (unless no_populate); the rest of the string table as
	 * it fills (strace_ring_add_string). */
	uint64_t strings_first = r->strings_size < STRINGS_STEP
					 ? r->strings_size
					 : STRINGS_STEP;
	err = 0;
        if (ftruncate(r->fd, (off_t)file_size) < 0 ||
            (err = ring_back(r->fd, 0, RING_HDR_SIZE + strings_first)) < 0 ||
            (!o.no_populate &&
             (err = ring_back(r->fd, r->events_offset,
                              file_size - r->events_offset)) < 0)) {
          if (!err)
            err = -errno;
          goto fail;
        }
        atomic_store_explicit(&r->strings_backed, strings_first,
			      memory_order_relaxed);
	err = ring_add_map(r, o.capacity);
	if (err < 0)
		goto fail;
	atomic_store_explicit(&r->file_cap, o.capacity, memory_order_relaxed);
	/* The header and the string table fill a page at a time: no
	 * read-ahead of the file's holes on a disk file system (a first
	 * store would otherwise read and zero megabytes) */
	(void)madvise(r->h, r->events_offset, MADV_RANDOM);
#ifdef MADV_POPULATE_WRITE
	/* Map the events' pages in, writable, once: the first store to a
	 * fresh tmpfs page costs about a microsecond. An archive's slots are
	 * written with pwrite() instead. */
	if (!o.no_populate && o.mode != STRACE_RING_ARCHIVE)
		(void)madvise(r->ev, file_size - r->events_offset,
			      MADV_POPULATE_WRITE);
#endif
	struct ring_hdr *h = r->h;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h->version = STRACE_RING_VERSION;
	h->header_size = RING_HDR_SIZE;
	h->event_size = STRACE_EVENT_SIZE;
	h->mode = (uint32_t)o.mode;
	atomic_store_explicit(&h->capacity, o.capacity, memory_order_relaxed);
	h->strings_offset = RING_HDR_SIZE;
	h->strings_size = r->strings_size;
	h->events_offset = r->events_offset;
	atomic_store_explicit(&h->file_size, file_size, memory_order_relaxed);
	h->creator_pid = (uint64_t)getpid();
	h->creator_starttime = ring_self_starttime();
	h->created_ns = (uint64_t)ts.tv_sec * 1000000000ull +
			(uint64_t)ts.tv_nsec;
	/* The magic goes last: a reader that opens a half-made file sees no
	 * magic and says so. Pairs with the acquire fence in ring_validate. */
	atomic_thread_fence(memory_order_release);
	memcpy(h->magic, STRACE_RING_MAGIC, 8);
	*out = r;
	return 0;
fail:
	unlink(path);
	ring_free(r);
	return err;
}

/* Check a header copy against the file size; every later use of these
 * fields relies on this. */
int ring_validate(const struct ring_hdr *h, uint64_t st_size)
{
	if (st_size < sizeof(h->magic))
		return -STRACE_E_TRUNCATED;
	if (memcmp(h->magic, STRACE_RING_MAGIC, 8) != 0)
		return -STRACE_E_MAGIC;
	atomic_thread_fence(memory_order_acquire);
	if (st_size < RING_HDR_SIZE)
		return -STRACE_E_TRUNCATED;
	if (h->version != STRACE_RING_VERSION)
		return -STRACE_E_VERSION;
	uint64_t cap = atomic_load_explicit(&h->capacity, memory_order_acquire);
	if (h->header_size != RING_HDR_SIZE ||
	    h->event_size != STRACE_EVENT_SIZE || h->mode > STRACE_RING_ARCHIVE ||
	    !is_pow2(cap) || cap < STRACE_RING_MIN_CAPACITY ||
	    cap > RING_MAX_CAPACITY || h->strings_offset != RING_HDR_SIZE ||
	    h->strings_size > RING_MAX_STRINGS || h->strings_size % 4096 ||
	    h->events_offset != RING_HDR_SIZE + h->strings_size)
		return -STRACE_E_CORRUPT;
	if (st_size < h->events_offset + cap * STRACE_EVENT_SIZE)
		return -STRACE_E_TRUNCATED;
	return 0;
}

int strace_ring_open(const char *path, struct strace_ring **out)
{
	struct strace_ring *r;
	struct ring_hdr hcopy;
	struct stat st;
	int err;

	*out = NULL;
	r = ring_alloc(path);
	if (!r)
		return -ENOMEM;
	r->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(r->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && geteuid() != 0)) {
		err = -STRACE_E_FOREIGN;
		goto fail;
	}
	/* Validate a private copy first: never map past the end of a file
	 * that lies about its size. */
	memset(&hcopy, 0, sizeof(hcopy));
	ssize_t n = pread(r->fd, &hcopy, sizeof(hcopy), 0);
	if (n < 0) {
		err = -errno;
		goto fail;
	}
	err = ring_validate(&hcopy, (uint64_t)st.st_size);
	if (err < 0)
		goto fail;
	/* The live header may change under us (hostile or concurrent); only
	 * the validated copy's layout fields are used from here on. No page
	 * is faulted in before it is read: a sparse file that claims a huge
	 * capacity costs nothing until its events are read. */
	r->mode = (int)hcopy.mode;
	r->cap = atomic_load_explicit(&hcopy.capacity, memory_order_relaxed);
	r->mask = r->cap - 1;
	r->wake_step = r->mode != STRACE_RING_ARCHIVE && r->cap / 4 < WAKE_STEP
			       ? r->cap / 4
			       : WAKE_STEP;
	r->strings_size = hcopy.strings_size;
	r->events_offset = hcopy.events_offset;
	err = ring_add_map(r, r->cap);
	if (err < 0)
		goto fail;
	atomic_store_explicit(&r->file_cap, r->cap, memory_order_relaxed);
	*out = r;
	return 0;
fail:
	ring_free(r);
	return err;
}

void strace_ring_close(struct strace_ring *ring)
{
	if (ring)
		ring_free(ring);
}

const char *strace_ring_path(const struct strace_ring *ring)
{
	return ring->path;
}

/*
 * Archive, reader side: make positions below need readable. need comes
 * from a committed value loaded (acquire) before this call; the writer
 * raised the capacity before committing it, so the header's capacity
 * covers it, and the file must be that long. Maps the file anew when it
 * has outgrown this process's mappings.
 * Returns 0, -STRACE_E_CORRUPT (committed beyond the capacity),
 * -STRACE_E_TRUNCATED (the file is shorter than its capacity), -errno.
 */
int ring_archive_sync(struct strace_ring *r, uint64_t need)
{
	int rc = 0;

	pthread_mutex_lock(&r->grow);
	if (need > atomic_load_explicit(&r->file_cap, memory_order_relaxed)) {
		uint64_t cap = atomic_load_explicit(&r->h->capacity,
						    memory_order_acquire);
		struct stat st;

		if (!is_pow2(cap) || cap > RING_MAX_CAPACITY || cap < need)
			rc = -STRACE_E_CORRUPT;
		else if (fstat(r->fd, &st) < 0)
			rc = -errno;
		else if ((uint64_t)st.st_size < file_bytes(r, cap))
			rc = -STRACE_E_TRUNCATED;
		else
			atomic_store_explicit(&r->file_cap, cap,
					      memory_order_relaxed);
	}
	if (!rc && need > atomic_load_explicit(&r->cur, memory_order_relaxed)
				  ->slots)
          rc = ring_add_map(
              r, atomic_load_explicit(&r->file_cap, memory_order_relaxed));
        pthread_mutex_unlock(&r->grow);
	return rc;
}

/*
 * Archive, writer side: make the file hold positions below end (the
 * capacity doubles until it does). Threads of this process are kept apart
 * by ring->grow, processes by flock(), so that the file only ever grows.
 * The header's capacity is raised (release) after the file has grown and
 * before the caller commits anything beyond the old capacity.
 * Returns 0, -STRACE_E_FULL (past RING_MAX_CAPACITY), -errno.
 */
int ring_archive_grow(struct strace_ring *r, uint64_t end)
{
	struct ring_hdr *h = r->h;
	int rc = 0;

	if (end <= atomic_load_explicit(&r->file_cap, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&r->grow);
	uint64_t cap = atomic_load_explicit(&r->file_cap, memory_order_relaxed);
	if (end > cap) {
		while (flock(r->fd, LOCK_EX) < 0)
			if (errno != EINTR)
				break; /* no locks here: threads are still apart */
		uint64_t hcap = atomic_load_explicit(&h->capacity,
						     memory_order_acquire);
		if (is_pow2(hcap) && hcap <= RING_MAX_CAPACITY && hcap > cap)
			cap = hcap; /* another process grew it */
		while (cap < end) {
			if (cap >= RING_MAX_CAPACITY) {
				rc = -STRACE_E_FULL;
				break;
			}
			cap *= 2;
		}
		struct stat st;
		uint64_t size = file_bytes(r, cap);
		if (!rc && fstat(r->fd, &st) < 0)
			rc = -errno;
		if (!rc && (uint64_t)st.st_size < size &&
		    ftruncate(r->fd, (off_t)size) < 0)
			rc = -errno;
		if (!rc) {
			if (atomic_load_explicit(&h->capacity,
						 memory_order_relaxed) < cap) {
				atomic_store_explicit(&h->file_size, size,
						      memory_order_relaxed);
				atomic_store_explicit(&h->capacity, cap,
						      memory_order_release);
			}
			atomic_store_explicit(&r->file_cap, cap,
					      memory_order_relaxed);
		}
		flock(r->fd, LOCK_UN);
	}
	pthread_mutex_unlock(&r->grow);
	return rc;
}
