/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_blockfile.c - fuzz target over the persistent block
 * cache's files (docs/cache.md): the input is a cache file's bytes.
 *
 * A damaged file fails its checksum, so the input is first sealed (made
 * to claim an executable, SMALL_ELF or this program's own, with a
 * checksum that holds):
 * what is tested is what a forged file can do. It is written where the
 * cache looks, and an image that maps the executable with that cache
 * asks for the blocks the file holds (at their offsets and modes: the
 * file's summaries are what is tested) and at a few addresses spread
 * over the file (misses), and for their symbols (looked up in the mapped
 * file, as a decode does), then saves the cache (writing back what it
 * took in). Whatever the bytes, this must finish without a crash or a
 * read out of bounds; a block summary that the file gives must be one the
 * decoder could have made (its length within the file, a known kind).
 *
 * Speed: each input needs an objcache of its own (a cache's object reads
 * its cache file once, the first time an image maps it: a cache kept
 * across inputs would never read the next input's file). What made an
 * input slow was the rest: 256 addresses probed over the whole file, of
 * which the file held next to none (each a block decoded with Capstone
 * from the executable's bytes: not the file under test), this program's
 * symbols read and demangled whenever a file's were refused (tens of
 * thousands in a libFuzzer build: three quarters of the time), and the
 * cache directory on a disk (/tmp). Now the probes are the file's blocks
 * and MISSES addresses, the file claims a small executable (SMALL_ELF,
 * where there is one), and the directory is in /dev/shm where it can be.
 *
 * Built two ways, like fuzz_perf.c: for libFuzzer (make fuzz), and with
 * fuzz_main.c for make check.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/blockfile.h"
#include "decoder/internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x7f0000000000ull
#define PROBES 256 /* of the file's blocks, at most */
#define MISSES 8   /* addresses spread over the file */
/* the object the cache files claim: small, so that reading its symbols
 * (where a file's are refused) costs little; else this executable */
#define SMALL_ELF "/usr/bin/true"

static char exe[4096], dir[64];
/* the addresses an input probes, and in which mode */
static struct probe {
	uint64_t ip;
	unsigned mode;
} probes[PROBES + MISSES];
static struct strace_blockfile_key key;
static uint8_t id[STRACE_BLOCKFILE_ID_MAX];

/* the executable's build-id, size and mtime: the key a file must have */
static int find_key(void)
{
	struct stat st;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd = open(exe, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) && !key.idn) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, noff, doff;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID &&
			    nh.n_descsz <= sizeof(id)) {
				memcpy(id, (char *)d->d_buf + doff, nh.n_descsz);
				key.idn = nh.n_descsz;
				break;
			}
	}
	elf_end(elf);
	close(fd);
	key.id = id;
	key.size = (uint64_t)st.st_size;
	key.mtime_sec = (uint64_t)st.st_mtim.tv_sec;
	key.mtime_nsec = (uint64_t)st.st_mtim.tv_nsec;
	key.symopts = STRACE_BLOCKFILE_SYMOPTS(STRACE_PLT_PERF61, 0, 0);
	return key.idn ? 0 : -1;
}

static void remove_dir(void)
{
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ssize_t n;

	(void)argc;
	(void)argv;
	snprintf(exe, sizeof(exe), "%s", SMALL_ELF);
	if (find_key() == 0)
		goto found;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		abort();
	exe[n] = 0;
	if (find_key() < 0) {
		fprintf(stderr, "fuzz_blockfile: %s has no build-id: link "
				"it with --build-id\n", exe);
		abort();
	}
found:
	snprintf(dir, sizeof(dir), "/dev/shm/fuzz_blockfile.%ld",
		 (long)getpid());
	if (mkdir(dir, 0700) < 0) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_blockfile.%ld",
			 (long)getpid());
		if (mkdir(dir, 0700) < 0)
			abort();
	}
	atexit(remove_dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4200];
	uint64_t *buf = malloc(size + 8);
	struct strace_objcache *c = NULL;
	struct strace_image *img = NULL;
	struct strace_image_opts io;
	struct strace_blockfile parsed;
	size_t np = 0;
	FILE *f;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	strace_blockfile_seal(buf, size, &key);
	/* what the parser lets through stays within the buffer */
	if (strace_blockfile_parse(buf, size, &key, 1, &parsed) == 0) {
		volatile size_t sum = 0;
		for (size_t i = 0; i < parsed.nsyms; i++)
			sum += strlen(parsed.pool + parsed.syms[i].name);
		for (size_t i = 0; i < parsed.nblocks; i++) {
			uint64_t a;
			unsigned m = strace_mode_of_key(parsed.blocks[i].key,
							&a);
			sum += parsed.blocks[i].b.len;
			/* (the key is the offset + 1) */
			if (np < PROBES && a && a - 1 < key.size)
				probes[np++] = (struct probe){BASE + a - 1, m};
		}
		(void)sum;
	}
	for (uint64_t i = 0; i < MISSES; i++)
		probes[np++] = (struct probe){BASE + key.size * i / MISSES,
					      STRACE_MODE_64};
	strace_blockfile_path(path, sizeof(path), dir, &key);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, size, f) != size) {
		if (f)
			fclose(f);
		free(buf);
		return 0;
	}
	fclose(f);
	free(buf);

	memset(&io, 0, sizeof(io));
	io.size = sizeof(io);
	if (strace_objcache_new(&c) < 0)
		return 0;
	if (strace_objcache_set_dir(c, dir) < 0) {
		strace_objcache_free(c);
		return 0;
	}
	io.objects = c;
	if (strace_image_new(&io, &img) == 0 &&
	    strace_image_add_file(img, BASE, key.size, 0, exe) == 0) {
		for (size_t i = 0; i < np; i++) {
			uint64_t ip = probes[i].ip;
			struct strace_block b;
			struct strace_symbol sym;
			if (strace_dec_image_block(img, ip, probes[i].mode,
						   &b) == 0 &&
			    (b.kind >= STRACE_BK_MAX ||
			     (b.kind != STRACE_BK_NOCODE &&
			      b.len > key.size - (ip - BASE))))
				abort(); /* a summary no decode could make */
			if (strace_image_symbol(img, ip, &sym) == 0 && sym.name)
				(void)strlen(sym.name);
		}
	}
	strace_image_free(img);
	strace_objcache_save(c, NULL);
	strace_objcache_free(c);
	unlink(path);
	return 0;
}
