/* SPDX-License-Identifier: MIT */
/* pt_backend/perf/buildid.c - build-ids and perf's build-id cache (perf.h). */
#include "perf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"
#include "strace/error.h"

#define MISC_BUILD_ID_SIZE (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define NAME_ALIGN 64

/* The GNU build-id note among the notes at n (len bytes), into id. */
static size_t note_find(const uint8_t *n, uint64_t len, uint8_t *id)
{
	for (uint64_t at = 0; at + sizeof(Elf64_Nhdr) <= len;) {
		Elf64_Nhdr nh;

		memcpy(&nh, n + at, sizeof(nh));
		uint64_t name = (nh.n_namesz + 3ull) & ~3ull;
		uint64_t desc = (nh.n_descsz + 3ull) & ~3ull;
		if (sizeof(nh) + name + desc > len - at)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(n + at + sizeof(nh), "GNU", 4) &&
		    nh.n_descsz <= STRACE_BUILDID_MAX) {
			memcpy(id, n + at + sizeof(nh) + name, nh.n_descsz);
			return nh.n_descsz;
		}
		at += sizeof(nh) + name + desc;
	}
	return 0;
}

/* Whether eh is a 64-bit ELF header whose program headers lie within
 * len bytes. */
static int ehdr_ok(const Elf64_Ehdr *eh, uint64_t len)
{
	return !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	       eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	       eh->e_phentsize == sizeof(Elf64_Phdr) && eh->e_phoff <= len &&
	       (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= len - eh->e_phoff;
}

size_t strace_buildid_of(const void *buf, size_t len, uint8_t *id)
{
	const uint8_t *b = buf;
	Elf64_Ehdr eh;

	if (len < sizeof(eh))
		return 0;
	memcpy(&eh, b, sizeof(eh));
	if (!ehdr_ok(&eh, len))
		return 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		size_t n;

		memcpy(&ph, b + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > len ||
		    ph.p_filesz > len - ph.p_offset)
			continue;
		if ((n = note_find(b + ph.p_offset, ph.p_filesz, id)))
			return n;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int strace_buildid_of_file(const char *path, uint8_t *id)
{
	struct stat st;
	Elf64_Ehdr eh;
	Elf64_Phdr *phs = NULL;
	int fd, rc = 0;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENODEV;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    pread_all(fd, &eh, sizeof(eh), 0) < 0 ||
	    !ehdr_ok(&eh, (uint64_t)st.st_size))
		goto out;
	/* the program headers in one read (ehdr_ok(): they lie in the file;
	 * e_phnum is 16 bits: at most 3.5 MiB) */
	phs = malloc((size_t)eh.e_phnum * sizeof(*phs));
	if (!phs || pread_all(fd, phs, (size_t)eh.e_phnum * sizeof(*phs),
			      eh.e_phoff) < 0)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && !rc; i++) {
		const Elf64_Phdr ph = phs[i];
		uint8_t *notes;

		/* (notes are small: a build-id note is in the first KiB) */
		if (ph.p_type != PT_NOTE || !ph.p_filesz ||
		    ph.p_offset > (uint64_t)st.st_size ||
		    ph.p_filesz > (uint64_t)st.st_size - ph.p_offset ||
		    ph.p_filesz > (1u << 20))
			continue;
		notes = malloc(ph.p_filesz);
		if (!notes) {
			rc = -ENOMEM;
			break;
		}
		if (pread_all(fd, notes, ph.p_filesz, ph.p_offset) == 0)
			rc = (int)note_find(notes, ph.p_filesz, id);
		free(notes);
	}
out:
	free(phs);
	close(fd);
	return rc;
}

char *strace_buildid_hex(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
	return out;
}

int strace_buildid_parse(const char *s, uint8_t *id)
{
	size_t n = strlen(s);

	if (n < 2 || n > 2 * STRACE_BUILDID_MAX || n % 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 2) {
		int v = 0;

		for (int k = 0; k < 2; k++) {
			char c = s[i + k];
			int d = c >= '0' && c <= '9'   ? c - '0'
				: c >= 'a' && c <= 'f' ? c - 'a' + 10
				: c >= 'A' && c <= 'F' ? c - 'A' + 10
						       : -1;
			if (d < 0)
				return -EINVAL;
			v = v * 16 + d;
		}
		id[i / 2] = (uint8_t)v;
	}
	return (int)(n / 2);
}

/* A file in the cache for want: 1 and out filled if one has it. */
static int cache_try(const char *file, const uint8_t *want, size_t nwant,
		     struct strace_buildid_found *out)
{
	uint8_t id[STRACE_BUILDID_MAX];
	int n = strace_buildid_of_file(file, id);

	if (n != (int)nwant || memcmp(id, want, nwant))
		return 0;
	snprintf(out->file, sizeof(out->file), "%s", file);
	memcpy(out->id, id, nwant);
	out->n = nwant;
	out->from_cache = 1;
	return 1;
}

int strace_buildid_locate(const char *path, const uint8_t *want,
			  size_t nwant, const char *symfs,
			  const char *cache_dir,
			  struct strace_buildid_found *out)
{
	char h[2 * STRACE_BUILDID_MAX + 1], f[4096 + 128];
	int n, len;

	memset(out, 0, sizeof(*out));
	if (nwant > STRACE_BUILDID_MAX)
		return -EINVAL;
	len = symfs && *symfs && path[0] == '/'
		      ? snprintf(out->file, sizeof(out->file), "%s%s", symfs,
				 path)
		      : snprintf(out->file, sizeof(out->file), "%s", path);
	if (len < 0 || (size_t)len >= sizeof(out->file))
		return -ENAMETOOLONG;
	if (!nwant)
		return 0; /* nothing to check it against */
	n = strace_buildid_of_file(out->file, out->id);
	if (n >= 0) {
		out->n = (size_t)n;
		if ((size_t)n == nwant && !memcmp(out->id, want, nwant))
			return 0;
	}
	strace_buildid_hex(want, nwant, h);
	if (cache_dir && *cache_dir) {
		/* perf's link, then the directory it points to */
		struct strace_buildid_found c;

		snprintf(f, sizeof(f), "%s/.build-id/%.2s/%s/elf", cache_dir, h,
			 h + 2);
		if (cache_try(f, want, nwant, &c)) {
			*out = c;
			return 0;
		}
		if (path[0] == '/' &&
		    (size_t)snprintf(f, sizeof(f), "%s%s/%s/elf", cache_dir,
				     path, h) < sizeof(f) &&
		    cache_try(f, want, nwant, &c)) {
			*out = c;
			return 0;
		}
	}
	return n >= 0 ? -STRACE_E_PERF_BUILDID : n;
}

const char *strace_buildid_dir(char *buf, size_t len)
{
	const char *d = getenv("PERF_BUILDID_DIR"), *home;

	if (d && *d) {
		snprintf(buf, len, "%s", d);
		return buf;
	}
	home = getenv("HOME");
	if (!home || !*home)
		return NULL;
	snprintf(buf, len, "%s/.debug", home);
	return buf;
}

int strace_buildid_vdso_path(const char *dir, const uint8_t *id, size_t n,
			     char *out, size_t outlen)
{
	char h[2 * STRACE_BUILDID_MAX + 1];

	if (n > STRACE_BUILDID_MAX)
		return -EINVAL;
	strace_buildid_hex(id, n, h);
	if ((size_t)snprintf(out, outlen, "%s/[vdso]/%s/vdso", dir, h) >= outlen)
		return -ENAMETOOLONG;
	return 0;
}

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		*p = '/';
		if (r < 0 && errno != EEXIST)
			return -errno;
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int strace_buildid_vdso_add(const char *dir, const uint8_t *id, size_t n,
			    const void *buf, size_t len)
{
	char h[2 * STRACE_BUILDID_MAX + 1], d[4096], f[4200], tmp[4300];
	int fd, err;

	if (n < 2 || n > STRACE_BUILDID_MAX)
		return -EINVAL;
	strace_buildid_hex(id, n, h);
	if ((size_t)snprintf(d, sizeof(d), "%s/[vdso]/%s", dir, h) >= sizeof(d))
		return -ENAMETOOLONG;
	if ((err = mkdirs(d)) < 0)
		return err;
	snprintf(f, sizeof(f), "%s/vdso", d);
	if (access(f, R_OK) != 0) {
		/* written whole under another name, then renamed */
		snprintf(tmp, sizeof(tmp), "%s.%d.tmp", f, (int)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		err = write(fd, buf, len) == (ssize_t)len ? 0 : -EIO;
		if (close(fd) < 0 && !err)
			err = -errno;
		if (!err && rename(tmp, f) < 0)
			err = -errno;
		if (err) {
			unlink(tmp);
			return err;
		}
	}
	/* .build-id/xx/rest -> ../../[vdso]/<hex>, as perf links it */
	snprintf(d, sizeof(d), "%s/.build-id/%.2s", dir, h);
	if ((err = mkdirs(d)) < 0)
		return err;
	snprintf(f, sizeof(f), "%s/%s", d, h + 2);
	snprintf(tmp, sizeof(tmp), "../../[vdso]/%s", h);
	if (symlink(tmp, f) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int strace_buildid_entry(uint8_t **buf, size_t *len, int32_t pid,
			 const uint8_t *id, size_t n, const char *name)
{
	size_t nl = strlen(name) + 1, pad = (nl + NAME_ALIGN - 1) & ~(size_t)(NAME_ALIGN - 1);
	size_t sz = 8 + 4 + 24 + pad;
	uint8_t *p;

	if (n > STRACE_BUILDID_MAX || sz > 0xffff)
		return -EINVAL;
	p = realloc(*buf, *len + sz);
	if (!p)
		return -ENOMEM;
	*buf = p;
	p += *len;
	memset(p, 0, sz);
	struct pfmt_event_header h = {0, (uint16_t)(PFMT_MISC_USER | MISC_BUILD_ID_SIZE),
				      (uint16_t)sz};
	memcpy(p, &h, 8);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, id, n);
	p[12 + 20] = (uint8_t)n; /* the size byte after the 20 id bytes */
	memcpy(p + 36, name, nl);
	*len += sz;
	return 0;
}

int strace_buildid_next(const uint8_t *feat, uint64_t size, uint64_t *at,
			const char **name, uint8_t *id)
{
	struct pfmt_event_header h;
	size_t n = STRACE_BUILDID_MAX;

	if (*at + 36 > size)
		return -2; /* (what is left holds no entry) */
	memcpy(&h, feat + *at, 8);
	if (h.size < 36 || *at + h.size > size)
		return -1;
	if (h.misc & MISC_BUILD_ID_SIZE) {
		n = feat[*at + 12 + 20];
		if (n > STRACE_BUILDID_MAX)
			return -1;
	}
	const char *nm = (const char *)feat + *at + 36;
	size_t max = h.size - 36;
	if (strnlen(nm, max) == max)
		return -1;
	memcpy(id, feat + *at + 12, n);
	*name = nm;
	*at += h.size;
	return (int)n;
}

int strace_buildid_find(const uint8_t *feat, uint64_t size, const char *name,
			uint8_t *id)
{
	uint64_t at = 0;
	const char *nm;
	int n;

	while ((n = strace_buildid_next(feat, size, &at, &nm, id)) >= 0)
		if (!strcmp(nm, name))
			return n;
	return n == -2 ? 0 : -1;
}
