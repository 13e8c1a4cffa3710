/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_dwarf.c - the DWARF layer (decoder/dwarf.c)
 * judged by binutils' addr2line: the corpus program tests/corpus/inline.c
 * built here with `cc -O2 -g` (static functions inlined three deep); at
 * every address of its .text, our source line equals `addr2line -e`'s and
 * our inline chain `addr2line -i -f`'s (names and call lines). Then the
 * debug file found through .gnu_debuglink, and bad objects: none, no debug
 * info, a FIFO, a truncated ELF file.
 */
#include <gelf.h>
#include <limits.h>
#include <sys/stat.h>

#include "harness.h"
#include "unit/decoder_testlib.h"

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
	REQUIRE(strace_dwarf_new(NULL, &d) == 0);
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
