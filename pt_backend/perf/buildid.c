/* SPDX-License-Identifier: MIT */
/* pt_backend/perf/buildid.c - perf's build-id cache, for the vDSO (buildid.h). */
#include "buildid.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_format.h"

#define MISC_BUILD_ID_SIZE (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define NAME_ALIGN 64

size_t strace_buildid_of(const void *buf, size_t len, uint8_t *id)
{
	const uint8_t *b = buf;
	Elf64_Ehdr eh;

	if (len < sizeof(eh))
		return 0;
	memcpy(&eh, b, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > len ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > len - eh.e_phoff)
		return 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, b + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > len ||
		    ph.p_filesz > len - ph.p_offset)
			continue;
		for (uint64_t at = 0; at + sizeof(Elf64_Nhdr) <= ph.p_filesz;) {
			Elf64_Nhdr nh;
			const uint8_t *n = b + ph.p_offset + at;

			memcpy(&nh, n, sizeof(nh));
			uint64_t name = (nh.n_namesz + 3) & ~3ull;
			uint64_t desc = (nh.n_descsz + 3) & ~3ull;
			if (sizeof(nh) + name + desc > ph.p_filesz - at)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(n + sizeof(nh), "GNU", 4) &&
			    nh.n_descsz <= STRACE_BUILDID_MAX) {
				memcpy(id, n + sizeof(nh) + name, nh.n_descsz);
				return nh.n_descsz;
			}
			at += sizeof(nh) + name + desc;
		}
	}
	return 0;
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

static void hex(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

int strace_buildid_vdso_path(const char *dir, const uint8_t *id, size_t n,
			     char *out, size_t outlen)
{
	char h[2 * STRACE_BUILDID_MAX + 1];

	if (n > STRACE_BUILDID_MAX)
		return -EINVAL;
	hex(id, n, h);
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
	hex(id, n, h);
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

int strace_buildid_find(const uint8_t *feat, uint64_t size, const char *name,
			uint8_t *id)
{
	uint64_t at = 0;

	while (at + 36 <= size) {
		struct pfmt_event_header h;
		size_t n = STRACE_BUILDID_MAX;

		memcpy(&h, feat + at, 8);
		if (h.size < 36 || at + h.size > size)
			return -1;
		if (h.misc & MISC_BUILD_ID_SIZE) {
			n = feat[at + 12 + 20];
			if (n > STRACE_BUILDID_MAX)
				return -1;
		}
		const char *nm = (const char *)feat + at + 36;
		size_t max = h.size - 36;
		if (strnlen(nm, max) < max && !strcmp(nm, name)) {
			memcpy(id, feat + at + 12, n);
			return (int)n;
		}
		at += h.size;
	}
	return 0;
}
