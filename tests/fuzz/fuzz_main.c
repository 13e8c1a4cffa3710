/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_main.c - replay driver for a libFuzzer target, for
 * make check: runs every file of the corpus directories given (default:
 * the one compiled in), then MUTATIONS deterministic mutants of each
 * (bit flips, byte garbage, truncation, splices), and prints one PASS line
 * per seed. A crash or a sanitizer report fails the run.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef MUTATIONS
#define MUTATIONS 150
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n > 0 ? (size_t)n : 0;
	return buf;
}

static void mutate(uint8_t *buf, size_t *len, const uint8_t *orig,
		   size_t olen)
{
	memcpy(buf, orig, olen);
	*len = olen;
	switch (next_rand() % 5) {
	case 0: /* flip a few bits */
		for (int i = 0, k = 1 + (int)(next_rand() % 8); i < k; i++)
			buf[next_rand() % olen] ^= (uint8_t)(1u << (next_rand() % 8));
		break;
	case 1: /* a run of garbage */ {
		size_t at = next_rand() % olen, n = 1 + next_rand() % 64;
		for (size_t i = at; i < at + n && i < olen; i++)
			buf[i] = (uint8_t)next_rand();
		break;
	}
	case 2: /* truncate */
		*len = next_rand() % olen;
		break;
	case 3: /* an interesting integer in a header-like place */ {
		static const uint64_t vals[] = {0, 1, 0x7f, 0xff, 0xffff,
						0xffffffff, UINT64_MAX,
						1ull << 40};
		size_t at = (next_rand() % (olen / 8)) * 8;
		uint64_t v = vals[next_rand() % 8];
		memcpy(buf + at, &v, at + 8 <= olen ? 8 : olen - at);
		break;
	}
	default: /* copy one region over another */ {
		size_t a = next_rand() % olen, b = next_rand() % olen;
		size_t n = 1 + next_rand() % 256;
		if (a + n > olen)
			n = olen - a;
		if (b + n > olen)
			n = olen - b;
		memmove(buf + b, buf + a, n);
		break;
	}
	}
}

static int run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int count = 0;
	if (!d) {
		printf("FAIL: fuzz/%s (cannot open the corpus)\n", dir);
		return 1;
	}
	while ((de = readdir(d))) {
		char path[4096];
		size_t len, mlen;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		uint8_t *orig = slurp(path, &len);
		if (!orig || !len) {
			free(orig);
			continue;
		}
		LLVMFuzzerTestOneInput(orig, len);
		uint8_t *buf = malloc(len);
		for (int i = 0; buf && i < MUTATIONS; i++) {
			mutate(buf, &mlen, orig, len);
			LLVMFuzzerTestOneInput(buf, mlen);
		}
		free(buf);
		free(orig);
		printf("PASS: fuzz/%s (seed and %d mutants)\n", de->d_name,
		       MUTATIONS);
		fflush(stdout);
		count++;
	}
	closedir(d);
	if (!count)
		printf("FAIL: fuzz/%s (empty corpus)\n", dir);
	return count ? 0 : 1;
}

int main(int argc, char **argv)
{
	int rc = 0;
	if (argc < 2)
		return run_dir(FUZZ_CORPUS);
	for (int i = 1; i < argc; i++)
		rc |= run_dir(argv[i]);
	return rc;
}
