/* SPDX-License-Identifier: MIT */
/* tests/unit/decoder_testlib.h - helpers shared by the decoder's tests. */
#ifndef DECODER_TESTLIB_H
#define DECODER_TESTLIB_H

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder/decoder.h"

/* Map every PT_LOAD segment of path at bias, page-aligned like ld.so. */
__attribute__((unused)) static int tl_map_elf(struct strace_image *img, const char *path,
		      uint64_t bias)
{
	int fd = open(path, O_RDONLY), n = 0;
	Elf *elf;
	size_t np;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &np)) {
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < np; i++) {
		GElf_Phdr ph;
		uint64_t s, e;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s = (bias + ph.p_vaddr) & ~4095ull;
		e = (bias + ph.p_vaddr + ph.p_memsz + 4095) & ~4095ull;
		if (strace_image_add_file(img, s, e - s, ph.p_offset & ~4095ull,
					  path) == 0)
			n++;
	}
	elf_end(elf);
	close(fd);
	return n;
}

/* Run a shell command, return its stdout (malloc'd) or NULL. */
__attribute__((unused)) static char *tl_run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	buf[len] = 0;
	if (pclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

__attribute__((unused)) static int tl_have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* A scratch directory under $O or /tmp, made once. */
__attribute__((unused)) static const char *tl_tmpdir(void)
{
	static char dir[512];
	if (!dir[0]) {
		const char *o = getenv("O");
		snprintf(dir, sizeof(dir), "%s/tmp/decoder-XXXXXX",
			 o ? o : "build");
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "mkdir -p %s/tmp", o ? o : "build");
		if (system(cmd) != 0 || !mkdtemp(dir))
			snprintf(dir, sizeof(dir), "/tmp");
	}
	return dir;
}

#endif
