/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_dwarf.c - the DWARF layer (decoder/dwarf.c)
 * judged by binutils' addr2line: the corpus program tests/corpus/inline.c
 * built here with `cc -O2 -g` (static functions inlined three deep); at
 * every address of its .text, our source line equals `addr2line -e`'s and
 * our inline chain `addr2line -i -f`'s (names and call lines). Then the
 * debug file found through .gnu_debuglink, and bad objects: none, no debug
 * info, a FIFO, a truncated ELF file. The tables kept in the cache
 * (decoder/dwarf_cache.c) give the same answers, warm, damaged, forged
 * or stale.
 */
#include <gelf.h>
#include <limits.h>
#include <sys/stat.h>

#include "harness.h"
#include "unit/decoder_testlib.h"
#include "decoder/cachefile.h"

#define SRC "tests/corpus/inline.c"

/* The program built once into the scratch dir (with -g, and without);
 * NULL (and why) when it cannot be. */
static const char *build(const char *name, const char *flags)
{
	static char path[2][PATH_MAX + 32];
	char cmd[1400], dir[PATH_MAX], *out;
	int k = !strcmp(name, "inl") ? 0 : 1;

	if (path[k][0])
		return path[k];
	/* absolute: .gnu_debuglink is looked for beside an absolute path,
	 * as the recording names objects */
	if (!realpath(tl_tmpdir(), dir))
		return NULL;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc %s -o %s %s 2>&1 && echo ok", flags,
		 path[k], SRC);
	out = tl_run(cmd);
	if (!out || !strstr(out, "ok")) {
		free(out);
		path[k][0] = 0;
		return NULL;
	}
	free(out);
	return path[k];
}

/* .text of path: [*lo, *hi). */
static int text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY), ok = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstr))
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;
			if (gelf_getshdr(scn, &sh) &&
			    (n = elf_strptr(elf, shstr, sh.sh_name)) &&
			    !strcmp(n, ".text")) {
				*lo = sh.sh_addr;
				*hi = sh.sh_addr + sh.sh_size;
				ok = 1;
			}
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

/* "file:line" of addr2line without its " (discriminator N)". */
static void strip_disc(char *s)
{
	char *p = strstr(s, " (discriminator");
	if (p)
		*p = 0;
}

/* the options judge() opens the DWARF with (NULL: the defaults) */
static const struct strace_dwarf_opts *judge_opts;

/* Compare every address of bin's .text with addr2line -a -i -f. */
static void judge(const char *bin, int *lines, int *chains, int *deep)
{
	struct strace_dwarf *d;
	uint64_t lo, hi;
	char cmd[1400], *out, *save = NULL, *tok;
	char afile[700];
	FILE *f;

	REQUIRE(text_range(bin, &lo, &hi));
	snprintf(afile, sizeof(afile), "%s/addrs", tl_tmpdir());
	REQUIRE((f = fopen(afile, "w")));
	for (uint64_t a = lo; a < hi; a++)
		fprintf(f, "%#llx\n", (unsigned long long)a);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "addr2line -a -i -f -e %s < %s", bin, afile);
	REQUIRE((out = tl_run(cmd)));
	REQUIRE(strace_dwarf_new(judge_opts, &d) == 0);
	tok = strtok_r(out, "\n", &save);
	while (tok) {
		/* one address: "0x...", then pairs of function, file:line */
		char *fn[16], *fl[16], want[700], got[700];
		uint64_t a = strtoull(tok, NULL, 16);
		struct strace_srcline s;
		struct strace_inline in[16];
		int np = 0, n, r;

		while ((tok = strtok_r(NULL, "\n", &save)) &&
		       strncmp(tok, "0x", 2)) {
			char *l = strtok_r(NULL, "\n", &save);
			if (!l)
				break;
			strip_disc(l);
			if (np < 16) {
				fn[np] = tok;
				fl[np] = l;
				np++;
			}
		}
		REQUIRE(np > 0);
		r = strace_dwarf_srcline(d, bin, a, &s);
		snprintf(got, sizeof(got), "%s:%u", r == 1 ? s.file : "??",
			 r == 1 ? s.line : 0);
		snprintf(want, sizeof(want), "%s", fl[0]);
		/* no line: "??:0", or "crtstuff.c:?" from a FILE symbol */
		if (!strncmp(want, "??:", 3) ||
		    (strlen(want) > 2 && !strcmp(want + strlen(want) - 2, ":?")))
			snprintf(want, sizeof(want), "??:0");
		if (strcmp(got, want)) {
			fprintf(stderr, "  %#llx: srcline %s, addr2line %s\n",
				(unsigned long long)a, got, want);
			th_failed_checks++;
		} else if (r == 1) {
			(*lines)++;
		}
		n = strace_dwarf_inlines(d, bin, a, in, 16);
		/* addr2line: the inlined functions, then the function */
		if (r == 1 && n + 1 != np) {
			fprintf(stderr, "  %#llx: %d inlined, addr2line %d\n",
				(unsigned long long)a, n, np - 1);
			th_failed_checks++;
			continue;
		}
		for (int i = 0; i < n && i + 1 < np; i++) {
			snprintf(got, sizeof(got), "%s %s:%u", in[i].name,
				 in[i].call.file, in[i].call.line);
			snprintf(want, sizeof(want), "%s %s", fn[i], fl[i + 1]);
			if (strcmp(got, want)) {
				fprintf(stderr, "  %#llx: [%d] %s, addr2line %s\n",
					(unsigned long long)a, i, got, want);
				th_failed_checks++;
			}
			CHECK(in[i].lo <= a && a < in[i].hi);
		}
		if (n > 0)
			(*chains)++;
		if (n >= 3)
			(*deep)++;
	}
	strace_dwarf_free(d);
	free(out);
}

TEST(every_address_as_addr2line)
{
	const char *bin = build("inl", "-O2 -g");
	int lines = 0, chains = 0, deep = 0;

	if (!tl_have("addr2line"))
		SKIP("no addr2line (binutils)");
	if (!bin)
		SKIP("no C compiler");
	judge(bin, &lines, &chains, &deep);
	printf("  %d source lines, %d inline chains (%d three deep) equal "
	       "addr2line's\n",
	       lines, chains, deep);
	CHECK_INT(lines, >, 100);
	CHECK_INT(chains, >, 10);
	CHECK_INT(deep, >, 0);
}

/* How many of dir's files end in suffix. */
static int count_files(const char *dir, const char *suffix)
{
	char cmd[PATH_MAX + 100], *out;
	int n;

	snprintf(cmd, sizeof(cmd), "ls %s 2>/dev/null | grep -c '%s$'; true",
		 dir, suffix);
	out = tl_run(cmd);
	n = out ? atoi(out) : -1;
	free(out);
	return n;
}

/* Each of dir's .dwarf files changed by cmd (a shell loop's body on $f). */
static void each_file(const char *dir, const char *cmd)
{
	char sh[PATH_MAX + 400], *out;

	snprintf(sh, sizeof(sh), "for f in %s/*.dwarf; do %s; done; echo ok",
		 dir, cmd);
	out = tl_run(sh);
	CHECK(out && strstr(out, "ok"));
	free(out);
}

/* The cache's tables (dwarf_cache.c): made on the first run, read on the
 * next; damaged (a byte flipped, cut short) or forged (a string out of
 * the file, its checksum made right) they are not used: every answer
 * stays addr2line's. */
TEST(cache_cold_warm_damaged_forged)
{
	const char *bin = build("inl", "-O2 -g");
	char dir[PATH_MAX + 16], path[PATH_MAX + 64], *out;
	struct strace_dwarf_opts o = {.size = sizeof(o)};
	int l0 = 0, c0 = 0, d0 = 0;

	if (!tl_have("addr2line"))
		SKIP("no addr2line (binutils)");
	if (!bin)
		SKIP("no C compiler");
	snprintf(dir, sizeof(dir), "%s/dwcache", tl_tmpdir());
	o.cache_dir = dir;
	judge_opts = &o;
	const char *how[] = {
		"cold", "warm",
		"flipped: printf '\\377' | dd of=$f bs=1 seek=200 conv=notrunc "
		"2>/dev/null",
		"cut: truncate -s 100 $f",
		"cut to nothing: : > $f",
	};
	for (size_t k = 0; k < sizeof(how) / sizeof(*how); k++) {
		int l = 0, c = 0, dp = 0;
		const char *sh = strchr(how[k], ':');
		if (sh)
			each_file(dir, sh + 2);
		judge(bin, &l, &c, &dp);
		if (!k) {
			l0 = l, c0 = c, d0 = dp;
			printf("  cold: %d lines, %d chains; cache files: "
			       "%d lines, %d funcs, %d inline\n",
			       l, c, count_files(dir, ".lines.dwarf"),
			       count_files(dir, ".funcs.dwarf"),
			       count_files(dir, ".inline.dwarf"));
			CHECK_INT(count_files(dir, ".lines.dwarf"), ==, 1);
			CHECK_INT(count_files(dir, ".funcs.dwarf"), ==, 0);
			CHECK_INT(count_files(dir, ".inline.dwarf"), ==, 1);
		}
		CHECK_INT(l, ==, l0);
		CHECK_INT(c, ==, c0);
		CHECK_INT(dp, ==, d0);
	}
	/* forged: the first row's file out of the pool, checksum mended */
	snprintf(path, sizeof(path), "ls %s/*.lines.dwarf", dir);
	out = tl_run(path);
	REQUIRE(out && strlen(out) > 1);
	out[strcspn(out, "\n")] = 0;
	{
		FILE *f = fopen(out, "r+b");
		uint8_t buf[1 << 16];
		size_t len;
		uint32_t bad = 0x7ffffff0;
		uint64_t sum;
		int l = 0, c = 0, dp = 0;

		REQUIRE(f);
		len = fread(buf, 1, sizeof(buf), f);
		REQUIRE(len > 144 + 24 && len < sizeof(buf));
		memcpy(buf + 144 + 8, &bad, 4); /* row 0's file */
		memset(buf + 16, 0, 8);
		sum = strace_dec_cache_checksum(buf, len, 16);
		memcpy(buf + 16, &sum, 8);
		rewind(f);
		CHECK_INT(fwrite(buf, 1, len, f), ==, len);
		fclose(f);
		judge(bin, &l, &c, &dp);
		CHECK_INT(l, ==, l0);
		CHECK_INT(c, ==, c0);
	}
	free(out);
	judge_opts = NULL;
}

/* A debug file installed after a first run (a -dbgsym package): the
 * object had no DWARF then, so nothing was kept; now its lines are
 * there. Its debug file replaced (another mtime): the tables made from
 * the old one are stale, made again, and the answers the same. */
TEST(cache_follows_the_debug_file)
{
	const char *bin = build("inl", "-O2 -g");
	char cmd[3000], *out, dir[PATH_MAX + 16], str[PATH_MAX + 32];
	struct strace_dwarf_opts o = {.size = sizeof(o)};
	struct strace_dwarf *d;
	struct strace_srcline s, t;
	uint64_t lo, hi;

	if (!bin)
		SKIP("no C compiler");
	if (!tl_have("objcopy"))
		SKIP("no objcopy (binutils)");
	char abs[PATH_MAX];

	/* absolute, as the recording names objects: the debug file is
	 * looked for beside it */
	REQUIRE(realpath(tl_tmpdir(), abs));
	snprintf(dir, sizeof(dir), "%s/dwcache2", abs);
	o.cache_dir = dir;
	snprintf(str, sizeof(str), "%s/later/inl", abs);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p later && objcopy --only-keep-debug inl "
		 "later/inl.dbg && objcopy --strip-all "
		 "--add-gnu-debuglink=later/inl.dbg inl later/inl && "
		 "mv later/inl.dbg later/inl.keep && echo ok",
		 tl_tmpdir());
	out = tl_run(cmd);
	REQUIRE(out && strstr(out, "ok"));
	free(out);
	REQUIRE(text_range(bin, &lo, &hi));
	REQUIRE(strace_dwarf_new(NULL, &d) == 0);
	REQUIRE(strace_dwarf_srcline(d, bin, lo + 16, &t) == 1);
	/* no debug file yet */
	for (int k = 0; k < 3; k++) {
		struct strace_dwarf *c;
		REQUIRE(strace_dwarf_new(&o, &c) == 0);
		int r = strace_dwarf_srcline(c, str, lo + 16, &s);
		if (k == 0) {
			CHECK_INT(r, ==, 0);
			CHECK_INT(count_files(dir, ".dwarf"), ==, 0);
			snprintf(cmd, sizeof(cmd),
				 "cp %s/later/inl.keep %s/later/inl.dbg && "
				 "echo ok",
				 tl_tmpdir(), tl_tmpdir());
		} else {
			CHECK_INT(r, ==, 1);
			if (r == 1) {
				CHECK_STR(s.file, t.file);
				CHECK_INT(s.line, ==, t.line);
			}
			CHECK_INT(count_files(dir, ".lines.dwarf"), ==, 1);
			if (k == 2) {
				/* made again from the file as it is now:
				 * the header's mtime (at 104) is 2001's */
				char od[PATH_MAX + 100];

				snprintf(od, sizeof(od),
					 "od -An -tu8 -j104 -N8 %s/*.lines.dwarf",
					 dir);
				out = tl_run(od);
				CHECK(out && strtoull(out, NULL, 10) ==
						     978307200ull);
				free(out);
			}
			/* another copy of the debug file: another mtime */
			snprintf(cmd, sizeof(cmd),
				 "touch -d @978307200 %s/later/inl.dbg && "
				 "echo ok",
				 tl_tmpdir());
		}
		strace_dwarf_free(c);
		out = tl_run(cmd);
		CHECK(out && strstr(out, "ok"));
		free(out);
	}
	strace_dwarf_free(d);
}

struct fn_seen {
	int main, leaf, odd, clamp;
	uint64_t leaf_lo;
};

static int on_fn(void *arg, const char *name, const char *file,
		 unsigned line, uint64_t lo, uint64_t hi)
{
	struct fn_seen *s = arg;

	(void)file;
	(void)line;
	(void)hi;
	s->main += !strcmp(name, "main");
	s->odd += !strcmp(name, "odd_path");
	s->clamp += !strcmp(name, "clamp"); /* inlined only: not listed */
	if (!strcmp(name, "leaf")) {
		s->leaf++;
		s->leaf_lo = lo;
	}
	return 0;
}

struct line_seen {
	uint64_t last;
	int rows, sorted, ours;
};

static int on_line(void *arg, uint64_t vaddr, uint64_t end, const char *file,
		   unsigned line)
{
	struct line_seen *s = arg;

	s->rows++;
	s->sorted += vaddr >= s->last && end > vaddr;
	s->last = vaddr;
	s->ours += file && strstr(file, SRC) && line > 0;
	return 0;
}

TEST(functions_and_line_table)
{
	const char *bin = build("inl", "-O2 -g");
	struct strace_dwarf *d;
	struct fn_seen fs = {0};
	struct line_seen ls = {0};
	char cmd[800], *out;

	if (!bin)
		SKIP("no C compiler");
	REQUIRE(strace_dwarf_new(NULL, &d) == 0);
	CHECK_INT(strace_dwarf_each_function(d, bin, on_fn, &fs), ==, 0);
	CHECK_INT(fs.main, ==, 1);
	CHECK_INT(fs.leaf, ==, 1);
	CHECK_INT(fs.odd, ==, 1);
	CHECK_INT(fs.clamp, ==, 0);
	/* leaf's range starts at its symbol (nm) */
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"leaf\" { print $1 }'",
		 bin);
	if ((out = tl_run(cmd))) {
		CHECK_U64(fs.leaf_lo, ==, strtoull(out, NULL, 16));
		free(out);
	}
	/* where leaf is declared (line 10 of the source), as uftrace shows
	 * it: the file as DWARF names it */
	{
		struct strace_srcline fl;
		CHECK_INT(strace_dwarf_function_line(d, bin, fs.leaf_lo + 1, &fl),
			  ==, 1);
		CHECK_STR(fl.file, SRC);
		CHECK_INT(fl.line, ==, 10);
		CHECK_INT(strace_dwarf_function_line(d, bin, 1, &fl), ==, 0);
	}
	CHECK_INT(strace_dwarf_each_line(d, bin, on_line, &ls), ==, 0);
	CHECK_INT(ls.rows, >, 20);
	CHECK_INT(ls.sorted, ==, ls.rows);
	CHECK_INT(ls.ours, >, 20);
	strace_dwarf_free(d);
}

TEST(separate_debug_file)
{
	const char *bin = build("inl", "-O2 -g");
	struct strace_dwarf *d, *d2;
	struct strace_srcline s, t;
	char cmd[3000], *out, str[PATH_MAX + 16];
	uint64_t lo, hi;

	if (!bin)
		SKIP("no C compiler");
	if (!tl_have("objcopy"))
		SKIP("no objcopy (binutils)");
	/* Debian's way: the debug part kept aside, the program stripped
	 * with a .gnu_debuglink to it */
	snprintf(str, sizeof(str), "%s-stripped", bin);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug inl inl.debug && "
		 "objcopy --strip-all --add-gnu-debuglink=inl.debug inl "
		 "inl-stripped && echo ok",
		 tl_tmpdir());
	/* the stripped one has no line of its own */
	out = tl_run(cmd);
	REQUIRE(out && strstr(out, "ok"));
	free(out);
	REQUIRE(text_range(bin, &lo, &hi));
	/* (two sets: in one, the stripped file would be the same build-id
	 * as the first, and taken for it) */
	REQUIRE(strace_dwarf_new(NULL, &d) == 0);
	REQUIRE(strace_dwarf_new(NULL, &d2) == 0);
	CHECK_INT(strace_dwarf_srcline(d, bin, lo + 16, &s), ==, 1);
	CHECK_INT(strace_dwarf_srcline(d2, str, lo + 16, &t), ==, 1);
	CHECK_STR(s.file, t.file);
	CHECK_INT(s.line, ==, t.line);
	strace_dwarf_free(d);
	strace_dwarf_free(d2);
}

TEST(one_object_per_build_id)
{
	const char *bin = build("inl", "-O2 -g");
	struct strace_dwarf *d;
	struct strace_srcline s, t;
	char link[PATH_MAX + 16];
	uint64_t lo, hi;

	if (!bin)
		SKIP("no C compiler");
	/* another path to the same file (as /lib and /usr/lib are) */
	snprintf(link, sizeof(link), "%s-link", bin);
	unlink(link);
	REQUIRE(symlink(bin, link) == 0);
	REQUIRE(text_range(bin, &lo, &hi));
	REQUIRE(strace_dwarf_new(NULL, &d) == 0);
	CHECK_INT(strace_dwarf_srcline(d, bin, lo + 16, &s), ==, 1);
	CHECK_INT(strace_dwarf_srcline(d, link, lo + 16, &t), ==, 1);
	/* the same strings: the same object's */
	CHECK(s.file == t.file);
	CHECK_INT(s.line, ==, t.line);
	CHECK_INT(strace_dwarf_srcline(d, bin, lo + 16, &t), ==, 1);
	CHECK(s.file == t.file);
	strace_dwarf_free(d);
	unlink(link);
}

TEST(bad_objects)
{
	const char *bin = build("inl", "-O2 -g");
	const char *nog = build("inl-nog", "-O2");
	struct strace_dwarf *d;
	struct strace_dwarf_opts o = {.size = sizeof(o), .symfs = NULL};
	struct strace_srcline s;
	struct strace_inline in[4];
	char fifo[600], trunc[600], cmd[1400], *out;
	uint64_t lo, hi;

	if (!bin || !nog)
		SKIP("no C compiler");
	REQUIRE(text_range(bin, &lo, &hi));
	REQUIRE(strace_dwarf_new(&o, &d) == 0);
	/* no such file; no debug info */
	CHECK_INT(strace_dwarf_srcline(d, "/nonexistent/x", lo, &s), ==, 0);
	CHECK_INT(strace_dwarf_inlines(d, "/nonexistent/x", lo, in, 4), ==, 0);
	CHECK_INT(strace_dwarf_srcline(d, nog, lo, &s), ==, 0);
	CHECK_INT(strace_dwarf_inlines(d, nog, lo, in, 4), ==, 0);
	/* a FIFO must not block (nobody writes to it) */
	snprintf(fifo, sizeof(fifo), "%s/fifo", tl_tmpdir());
	unlink(fifo);
	REQUIRE(mkfifo(fifo, 0600) == 0);
	CHECK_INT(strace_dwarf_srcline(d, fifo, lo, &s), ==, 0);
	CHECK_INT(strace_dwarf_inlines(d, fifo, lo, in, 4), ==, 0);
	/* a truncated ELF file: its first half, and its first 2000 bytes */
	for (int k = 0; k < 2; k++) {
		snprintf(trunc, sizeof(trunc), "%s/trunc%d", tl_tmpdir(), k);
		if (k)
			snprintf(cmd, sizeof(cmd),
				 "head -c 2000 %s > %s && echo ok", bin, trunc);
		else
			snprintf(cmd, sizeof(cmd),
				 "head -c $(($(stat -c %%s %s) / 2)) %s > %s "
				 "&& echo ok",
				 bin, bin, trunc);
		out = tl_run(cmd);
		REQUIRE(out && strstr(out, "ok"));
		free(out);
		CHECK_INT(strace_dwarf_srcline(d, trunc, lo, &s), <=, 1);
		CHECK_INT(strace_dwarf_inlines(d, trunc, lo, in, 4), >=, 0);
		CHECK_INT(strace_dwarf_each_line(d, trunc, on_line,
						 &(struct line_seen){0}),
			  ==, 0);
		CHECK_INT(strace_dwarf_each_function(d, trunc, on_fn,
						     &(struct fn_seen){0}),
			  ==, 0);
	}
	unlink(fifo);
	strace_dwarf_free(d);
}

RUN_TESTS("test_decoder_dwarf")
