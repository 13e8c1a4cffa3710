// SPDX-License-Identifier: MIT
/*
 * tests/bench/bench_libxdc.c - libxdc, the fastest public Intel PT decoder
 * (nyx-fuzz/libxdc, kAFL's and Nyx's), as the speed anchor of
 * tests/bench/xdc.sh: decode one trace once, the way libxdc's own
 * experiments do (their tester's simple_test: a page cache of the code, one
 * address range, a 64 KiB coverage bitmap), and say what came of it.
 *
 *   bench_libxdc TRACE PAGES.addr PAGES.dump BASE END
 *
 * PAGES.addr: the page addresses as little-endian 64-bit words; PAGES.dump:
 * the 4 KiB pages in that order (the page caches of libxdc_experiments'
 * test_data). BASE-END: the range whose branches libxdc decodes.
 *
 * Built by tests/bench/xdc.sh against a libxdc built outside the tree
 * (LIBXDC_DIR: its libxdc.h and libxdc.a); nothing of libxdc is in ours.
 * Prints "libxdc: RESULT hash 0xHASH BYTES bytes" and exits 0 when libxdc
 * decoded the whole trace, 1 when it stopped (a page fault, an error).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxdc.h>

#define PAGE 4096u

struct pages {
	uint64_t *addr; /* open addressing on the page number; 0: empty */
	uint8_t **data;
	size_t mask;
};

static void *read_file(const char *path, size_t *len, size_t extra)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto fail;
	buf = malloc((size_t)n + extra + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto fail;
	fclose(f);
	*len = (size_t)n;
	return buf;
fail:
	fprintf(stderr, "bench_libxdc: %s: %s\n", path,
		errno ? strerror(errno) : "cannot read it");
	if (f)
		fclose(f);
	free(buf);
	return NULL;
}

static size_t slot(const struct pages *p, uint64_t page)
{
	size_t i = (size_t)((page >> 12) * 0x9e3779b97f4a7c15ull) & p->mask;

	while (p->addr[i] && p->addr[i] != page + 1)
		i = (i + 1) & p->mask;
	return i;
}

/* libxdc's page_cache_fetch: the page at addr, or *success = false */
static void *fetch(void *opaque, uint64_t addr, bool *success)
{
	const struct pages *p = opaque;
	size_t i = slot(p, addr & ~(uint64_t)(PAGE - 1));

	*success = p->addr[i] != 0;
	return *success ? p->data[i] : NULL;
}

int main(int argc, char **argv)
{
	static const char *const results[] = {
		"success", "success_pt_overflow", "page_fault", "error",
		"unknown_packet"};
	size_t tlen, alen, dlen, n, i;
	uint8_t *trace, *dump;
	uint64_t *addrs, filter[4][2] = {{0}};
	struct pages p;
	decoder_result_t r;
	void *bitmap;
	libxdc_t *x;

	if (argc != 6) {
		fprintf(stderr, "usage: bench_libxdc TRACE PAGES.addr "
				"PAGES.dump BASE END\n");
		return 2;
	}
	/* libxdc stops at PT_TRACE_END bytes after the trace */
	if (!(trace = read_file(argv[1], &tlen, 16)) ||
	    !(addrs = read_file(argv[2], &alen, 0)) ||
	    !(dump = read_file(argv[3], &dlen, 0)))
		return 2;
	memset(trace + tlen, PT_TRACE_END, 16);
	n = alen / 8;
	if (dlen < n * PAGE) {
		fprintf(stderr,
			"bench_libxdc: %s has %zu bytes, %zu pages need %zu\n",
			argv[3], dlen, n, n * PAGE);
		return 2;
	}
	for (p.mask = 15; p.mask < 2 * n; p.mask = 2 * p.mask + 1)
		;
	p.addr = calloc(p.mask + 1, sizeof(*p.addr));
	p.data = calloc(p.mask + 1, sizeof(*p.data));
	if (!p.addr || !p.data)
		return 2;
	for (i = 0; i < n; i++) {
		size_t s = slot(&p, addrs[i]);

		if (!p.addr[s]) { /* a page listed twice: its first copy */
			p.addr[s] = addrs[i] + 1;
			p.data[s] = dump + i * PAGE;
		}
	}
	filter[0][0] = strtoull(argv[4], NULL, 0);
	filter[0][1] = strtoull(argv[5], NULL, 0);
	bitmap = calloc(1, 0x10000);
	x = bitmap ? libxdc_init(filter, fetch, &p, bitmap, 0x10000) : NULL;
	if (!x) {
		fprintf(stderr, "bench_libxdc: libxdc_init failed\n");
		return 2;
	}
	r = libxdc_decode(x, trace, tlen);
	printf("libxdc: %s hash 0x%016" PRIx64 " %zu bytes\n",
	       (unsigned)r < sizeof(results) / sizeof(results[0])
		       ? results[r]
		       : "?",
	       libxdc_bitmap_get_hash(x), tlen);
	if (r == decoder_page_fault)
		printf("libxdc: page fault at 0x%" PRIx64 "\n",
		       libxdc_get_page_fault_addr(x));
	libxdc_free(x);
	return r == decoder_success || r == decoder_success_pt_overflow ? 0 : 1;
}
