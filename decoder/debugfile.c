/* SPDX-License-Identifier: MIT */
/*
 * decoder/debugfile.c - an object's separate debug file, found where
 * perf 6.1 looks for it (.gnu_debuglink, the build-id directories), and
 * what it is (its path, size and mtime): symbols.c reads its symbols,
 * image_cache.c puts what it is into the key of the object's cache file
 * (a debug file installed or changed after a decode makes that file
 * stale, docs/cache.md). Beneath both; above the objects (image.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/image.h"

Elf_Scn *strace_dec_section_by_name(Elf *elf, size_t shstrndx,
				    const char *name, GElf_Shdr *shdr,
				    size_t *idx)
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

/* FNV-1a of a path: which file, in a cache file's key (a collision
 * costs a stale file kept, never a crash: the file is still checked) */
static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}


void strace_dec_debug_close(struct strace_dec_debugfile *d)
{
	if (d->elf)
		elf_end(d->elf);
	if (d->map)
		munmap(d->map, d->size);
	memset(d, 0, sizeof(*d));
}

/* Open path if it is an ELF file with a .symtab and the build-id want. */
static int debug_try(const char *path, const uint8_t *want, size_t wantn,
		     struct strace_dec_debugfile *d)
{
	struct stat st;
	uint8_t id[64];
	GElf_Shdr sh;
	/* a FIFO there must not block */
	int fd = strace_dec_open_regular(path, &st);

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
	d->symtab = strace_dec_section_by_name(d->elf, d->shstrndx, ".symtab", &sh, NULL);
	if (!d->symtab || sh.sh_type != SHT_SYMTAB)
		goto no;
	if (wantn && (strace_dec_build_id(d->elf, id, sizeof(id)) != wantn ||
		      memcmp(id, want, wantn)))
		goto no; /* perf rejects a mismatched build-id too */
	d->id = (struct strace_dec_debug_id){path_hash(path),
					     (uint64_t)st.st_size,
					     (uint64_t)st.st_mtim.tv_sec,
					     (uint64_t)st.st_mtim.tv_nsec};
	return 1;
no:
	strace_dec_debug_close(d);
	return 0;
}

/* (image.h: where it looks, in perf 6.1's order) */
int strace_dec_debug_find(const char *path, const char *root, Elf *rt,
			  size_t shstrndx, struct strace_dec_debugfile *d,
			  char *found, size_t flen)
{
	uint8_t id[64];
	size_t idn = strace_dec_build_id(rt, id, sizeof(id));
	size_t rl = root ? strlen(root) : 0;
	char buf[4096], hex[129];
	GElf_Shdr sh;
	Elf_Scn *dl = strace_dec_section_by_name(rt, shstrndx, ".gnu_debuglink", &sh, NULL);
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
	struct strace_dec_debugfile d = {0};
	struct stat st;
	GElf_Shdr sh;
	size_t shstrndx;
	void *map;
	Elf *elf;
	int fd = strace_dec_open_regular(path, &st), rc = 0;

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
		Elf_Scn *symtab = strace_dec_section_by_name(elf, shstrndx, ".symtab",
						  &sh, NULL);
		if (!symtab || sh.sh_type != SHT_SYMTAB) {
			rc = strace_dec_debug_find(path, symfs && *symfs ? symfs : NULL,
					elf, shstrndx, &d, out, len);
			strace_dec_debug_close(&d);
		}
	}
	if (elf)
		elf_end(elf);
	munmap(map, (size_t)st.st_size);
	return rc;
}
