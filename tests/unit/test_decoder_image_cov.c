/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_image_cov.c - coverage alone (decoder/
 * image_cov.c): blocks and branch outcomes noted on an image of a real
 * program, given back per object merged and in the object's own
 * addresses, judged by the program headers readelf(1) prints; what is
 * left out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "decoder_testlib.h"
#include "decoder/internal.h"
#include "decoder/image.h"
#include "decoder/image_block.h"

#define PROG "/bin/true"
#define BIAS 0x555555550000ull

/* A PT_LOAD as `readelf -lW` prints it. */
struct seg {
	uint64_t off, vaddr, filesz;
	char flags[8];
};

/* The PT_LOADs of path per readelf, at most max; returns how many. */
static int readelf_loads(const char *path, struct seg *s, int max)
{
	char cmd[256], line[512];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "readelf -lW %s 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		uint64_t paddr, memsz;
		char fl[3][4] = {"", "", ""};
		int k = sscanf(line,
			       " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64
			       " 0x%" SCNx64 " 0x%" SCNx64 " %3s %3s %3s",
			       &s[n].off, &s[n].vaddr, &paddr, &s[n].filesz,
			       &memsz, fl[0], fl[1], fl[2]);
		if (k < 6)
			continue;
		snprintf(s[n].flags, sizeof(s[n].flags), "%s%s%s", fl[0],
			 k > 6 && fl[1][0] != '0' ? fl[1] : "",
			 k > 7 && fl[2][0] != '0' ? fl[2] : "");
		n++;
	}
	pclose(f);
	return n;
}

struct got {
	char path[256];
	uint64_t vaddr[16], len[16];
	int n;
};

static int take(void *arg, const char *path, uint64_t vaddr, uint64_t len)
{
	struct got *g = arg;

	if (g->n < 16) {
		snprintf(g->path, sizeof(g->path), "%s", path);
		g->vaddr[g->n] = vaddr;
		g->len[g->n] = len;
	}
	g->n++;
	return 0;
}

/* The program's code and data segments, mapped at BIAS, with coverage
 * on: noted blocks come back merged, sorted, in the ELF's virtual
 * addresses (a data segment whose address is not its offset included),
 * a block past its segment cut at the segment's end, and addresses no
 * mapping holds dropped. */
TEST(ranges_merged_in_the_objects_addresses)
{
	struct seg s[8];
	const struct seg *code = NULL, *data = NULL;
	struct strace_objcache *oc;
	struct strace_image *img;
	struct strace_image_opts o = {.size = sizeof(o), .no_debuginfo = 1};
	struct got g = {.n = 0};
	int n;

	if (access(PROG, R_OK) || !tl_have("readelf"))
		SKIP("no " PROG " or readelf");
	n = readelf_loads(PROG, s, 8);
	for (int i = 0; i < n; i++) {
		if (strchr(s[i].flags, 'E') && !code)
			code = &s[i];
		if (strchr(s[i].flags, 'W') && !data)
			data = &s[i];
	}
	REQUIRE(code && data && code->filesz > 0x300);
	REQUIRE(strace_objcache_new(&oc) == 0);
	strace_objcache_set_coverage(oc, 1);
	o.objects = oc;
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, PROG, BIAS) >= 2);

	uint64_t c = BIAS + code->vaddr, d = BIAS + data->vaddr;
	uint64_t cend = BIAS + code->vaddr + code->filesz;

	/* out of order, touching, overlapping, apart */
	strace_dec_cov_note(img, c + 0x110, 0x10);
	strace_dec_cov_note(img, c + 0x100, 0x10);   /* touches the one above */
	strace_dec_cov_note(img, c + 0x200, 0x20);
	strace_dec_cov_note(img, c + 0x210, 0x30);   /* overlaps it */
	strace_dec_cov_note(img, c + 0x100, 0x8);    /* inside */
	strace_dec_cov_note(img, cend - 0x8, 0x40);  /* runs past the end */
	strace_dec_cov_note(img, d + 0x10, 0x4);     /* vaddr != offset */
	strace_dec_cov_note(img, 0x1000, 0x10);      /* no mapping there */
	REQUIRE(strace_objcache_each_coverage(oc, take, &g) == 0);

	CHECK_INT(g.n, ==, 4);
	CHECK(strcmp(g.path, PROG) == 0);
	CHECK_U64(g.vaddr[0], ==, code->vaddr + 0x100);
	CHECK_U64(g.len[0], ==, 0x20);
	CHECK_U64(g.vaddr[1], ==, code->vaddr + 0x200);
	CHECK_U64(g.len[1], ==, 0x40);
	CHECK_U64(g.vaddr[2], ==, code->vaddr + code->filesz - 0x8);
	CHECK_U64(g.len[2], ==, 0x8);
	CHECK_U64(g.vaddr[3], ==, data->vaddr + 0x10);
	CHECK_U64(g.len[3], ==, 0x4);
	printf("  %s: code at 0x%" PRIx64 ", data at 0x%" PRIx64
	       " (offset 0x%" PRIx64 "), %d ranges\n",
	       PROG, code->vaddr, data->vaddr, data->off, g.n);

	/* asked again: the same (merging twice changes nothing) */
	g.n = 0;
	REQUIRE(strace_objcache_each_coverage(oc, take, &g) == 0);
	CHECK_INT(g.n, ==, 4);
	strace_image_free(img);
	strace_objcache_free(oc);
}

/* PROG's first code segment (readelf) into *code, and an image of PROG
 * mapped at BIAS whose objects' cache collects coverage. Returns 0 when
 * it has no code segment or cannot be mapped. */
static int code_image(struct seg *code, struct strace_objcache **oc,
		      struct strace_image **img)
{
	struct strace_image_opts o = {.size = sizeof(o), .no_debuginfo = 1};
	struct seg s[8];
	int n = readelf_loads(PROG, s, 8), i = 0;

	while (i < n && !strchr(s[i].flags, 'E'))
		i++;
	if (i == n)
		return 0;
	*code = s[i];
	if (strace_objcache_new(oc))
		return 0;
	strace_objcache_set_coverage(*oc, 1);
	o.objects = *oc;
	if (strace_image_new(&o, img)) {
		strace_objcache_free(*oc);
		return 0;
	}
	return tl_map_elf(*img, PROG, BIAS) >= 2;
}

/* Many blocks, noted one by one, each touching the next: one range. */
TEST(many_blocks_one_range)
{
	struct strace_objcache *oc;
	struct strace_image *img;
	struct got g = {.n = 0};
	struct seg code;

	if (access(PROG, R_OK) || !tl_have("readelf"))
		SKIP("no " PROG " or readelf");
	REQUIRE(code_image(&code, &oc, &img) && code.filesz >= 0x2000);
	/* backwards, 4 bytes each: the growth and the merges on the way */
	for (uint64_t k = 0x800; k-- > 0;)
		strace_dec_cov_note(img, BIAS + code.vaddr + 4 * k, 4);
	REQUIRE(strace_objcache_each_coverage(oc, take, &g) == 0);
	CHECK_INT(g.n, ==, 1);
	CHECK_U64(g.vaddr[0], ==, code.vaddr);
	CHECK_U64(g.len[0], ==, 0x2000);
	strace_image_free(img);
	strace_objcache_free(oc);
}

struct got_br {
	uint64_t vaddr[8];
	unsigned seen[8];
	int n;
};

static int take_branch(void *arg, const char *path, uint64_t vaddr,
		       unsigned seen)
{
	struct got_br *g = arg;

	(void)path;
	if (g->n < 8) {
		g->vaddr[g->n] = vaddr;
		g->seen[g->n] = seen;
	}
	g->n++;
	return 0;
}

/* Branch outcomes, noted many times over (the growth and merges on the
 * way): each branch once, in address order, in the ELF's addresses, with
 * every way it went; one no mapping holds dropped; the ranges untouched. */
TEST(branches_once_with_their_ways)
{
	struct strace_objcache *oc;
	struct strace_image *img;
	struct got_br g = {.n = 0};
	struct got r = {.n = 0};
	struct seg code;

	if (access(PROG, R_OK) || !tl_have("readelf"))
		SKIP("no " PROG " or readelf");
	REQUIRE(code_image(&code, &oc, &img) && code.filesz >= 0x100);
	uint64_t c = BIAS + code.vaddr;
	for (int k = 0; k < 1000; k++) {
		strace_dec_cov_branch(img, c + 0x40, STRACE_COVBRANCH_TAKEN);
		strace_dec_cov_branch(img, c + 0x10,
				      k == 999 ? STRACE_COVBRANCH_TAKEN
					       : STRACE_COVBRANCH_NOT_TAKEN);
	}
	strace_dec_cov_branch(img, c + 0x20, STRACE_COVBRANCH_NOT_TAKEN);
	strace_dec_cov_branch(img, 0x1000, STRACE_COVBRANCH_TAKEN);
	REQUIRE(strace_objcache_each_branch(oc, take_branch, &g) == 0);
	CHECK_INT(g.n, ==, 3);
	CHECK_U64(g.vaddr[0], ==, code.vaddr + 0x10);
	CHECK_INT(g.seen[0], ==,
		  STRACE_COVBRANCH_TAKEN | STRACE_COVBRANCH_NOT_TAKEN);
	CHECK_U64(g.vaddr[1], ==, code.vaddr + 0x20);
	CHECK_INT(g.seen[1], ==, STRACE_COVBRANCH_NOT_TAKEN);
	CHECK_U64(g.vaddr[2], ==, code.vaddr + 0x40);
	CHECK_INT(g.seen[2], ==, STRACE_COVBRANCH_TAKEN);
	REQUIRE(strace_objcache_each_coverage(oc, take, &r) == 0);
	CHECK_INT(r.n, ==, 0);
	strace_image_free(img);
	strace_objcache_free(oc);
}

/* Code that is no ELF file (bytes a dump gave) has no addresses of its
 * own: left out. */
TEST(no_elf_left_out)
{
	static uint8_t bytes[4096];
	struct strace_objcache *oc;
	struct strace_image *img;
	struct strace_image_opts o = {.size = sizeof(o), .no_debuginfo = 1};
	struct got g = {.n = 0};

	memset(bytes, 0x90, sizeof(bytes));
	REQUIRE(strace_objcache_new(&oc) == 0);
	strace_objcache_set_coverage(oc, 1);
	o.objects = oc;
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(strace_image_add_bytes(img, 0x400000, bytes, sizeof(bytes),
				       "[dump]") == 0);
	strace_dec_cov_note(img, 0x400010, 0x10);
	REQUIRE(strace_objcache_each_coverage(oc, take, &g) == 0);
	CHECK_INT(g.n, ==, 0);
	strace_image_free(img);
	strace_objcache_free(oc);
}

RUN_TESTS("test_decoder_image_cov")
