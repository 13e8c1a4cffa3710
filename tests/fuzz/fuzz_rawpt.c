/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_rawpt.c - fuzz target over the raw PT input, what
 * `ptrace-capture --pt FILE --raw BIN[:OFFSET[-SIZE]]@ADDR | --elf
 * FILE[@BASE]` decodes (strace_raw_decode(), pt_backend/pipeline/rawpt.c):
 * whatever the trace's bytes and the section's place, the decode must end
 * with a result or an error, never a crash, a hang or a read out of
 * bounds.
 *
 * The input: a header of HDR_SIZE bytes, then the PT stream.
 *   byte 0     flags: FL_ELF (--elf, else --raw), FL_BASE (--elf: BASE
 *              given), FL_JOBS (2 jobs: cut at PSBs, decoded in
 *              parallel), FL_REFERENCE (libipt's block decoder), and
 *              the naming style in FL_NAMES_SHIFT's two bits (mod 3)
 *   bytes 1-3  the processor (--cpu): family, model, stepping (0: none)
 *   bytes 4-7  --raw: OFFSET in the file (mod its size), little-endian
 *   bytes 8-11 --raw: SIZE (mod what is left after OFFSET; 0: to the end)
 *   bytes 16-23 ADDR (--raw) or BASE (--elf), little-endian
 * The code the section maps is a small executable, SMALL_ELF (this
 * program's own where there is none; fuzz_blockfile.c's too): real code
 * for the walker to meet wherever the header puts it, and few symbols
 * (a libFuzzer build's own take a second to read, which each of
 * libFuzzer's -fork jobs would pay again). The seeds
 * (tests/fuzz/corpus/rawpt/) are the first few KiB of the corpus's
 * per-thread traces (build/corpus/traces/NAME/trace.TID.pt), with the
 * executable placed where their code ran.
 *
 * Speed: the executable and its symbols do not depend on the input: one
 * struct strace_objcache, made once, keeps them for every input (the
 * image, the walker and the ring are each input's own). What the cache
 * keeps of the file cannot change from one input to the next: an object's
 * bytes and symbols are read from the file alone, and the block summaries
 * it gathers are facts about those bytes (a block at an offset is the
 * same block whoever asks), so one input's decode gives another the same
 * result, only sooner. No cache directory: nothing is written.
 *
 * Built two ways, like fuzz_perf.c: for libFuzzer (make fuzz), and with
 * fuzz_main.c for make check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_ring.h"

#include "pt_backend/pipeline/pipeline.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR_SIZE 24
#define FL_ELF 0x01
#define FL_BASE 0x02
#define FL_JOBS 0x04
#define FL_REFERENCE 0x08
#define FL_NAMES_SHIFT 4
#define SMALL_ELF "/usr/bin/true"

static char exe[4096];
static uint64_t exe_size;
static struct strace_objcache *objects;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ssize_t n;
	FILE *f;

	(void)argc;
	(void)argv;
	if (access(SMALL_ELF, R_OK) == 0) {
		snprintf(exe, sizeof(exe), "%s", SMALL_ELF);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			abort();
		exe[n] = 0;
	}
	f = fopen(exe, "rb");
	if (!f || fseek(f, 0, SEEK_END) < 0 || ftell(f) <= 0)
		abort();
	exe_size = (uint64_t)ftell(f);
	fclose(f);
	if (strace_objcache_new(&objects) < 0)
		abort();
	return 0;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The section the header asks for: exe's. */
static void section_of(const uint8_t *h, struct strace_raw_section *sec)
{
	memset(sec, 0, sizeof(*sec));
	sec->path = exe;
	sec->elf = h[0] & FL_ELF;
	sec->addr = le(h + 16, 8);
	if (sec->elf) {
		sec->has_addr = !!(h[0] & FL_BASE);
		return;
	}
	sec->offset = le(h + 4, 4) % exe_size;
	sec->size = le(h + 8, 4) % (exe_size - sec->offset);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct strace_raw_section sec;
	int fd;

	if (size <= HDR_SIZE)
		return 0;
	fd = memfd_create("fuzz_rawpt", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data + HDR_SIZE, size - HDR_SIZE) !=
	    (ssize_t)(size - HDR_SIZE)) {
		close(fd);
		return 0;
	}
	section_of(data, &sec);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct strace_ring *ring;
	if (fuzz_ring("rawpt", &ring) == 0) {
		struct strace_raw_opts o = {
			.size = sizeof(o),
			.pt_path = path,
			.secs = &sec,
			.nsecs = 1,
			.ring = ring,
			.walk_flags = data[0] & FL_REFERENCE
					      ? STRACE_WALK_REFERENCE : 0u,
			.cpu = {data[1], data[2], data[3]},
			.pid = 1,
			.tid = 1,
			.jobs = data[0] & FL_JOBS ? 2 : 1,
			.piece_bytes = 4096,
			.names = (data[0] >> FL_NAMES_SHIFT & 3) % 3,
			.objects = objects,
		};
		struct strace_raw_stats st;
		struct strace_raw_fault fault;
		(void)strace_raw_decode(&o, &st, &fault);
		strace_ring_close(ring);
	}
	close(fd);
	return 0;
}
