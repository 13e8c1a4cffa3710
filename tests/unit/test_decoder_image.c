/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_image.c - the process image against binutils:
 * every function nm lists is found at its address with one of its names;
 * every name@plt label objdump prints is where we put it; the PLT names
 * match what the installed perf (6.1) lists; code bytes match objdump.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "decoder_testlib.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static const char *prog_src =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"static int __attribute__((noinline)) helper(int x) { return x * 3 + 1; }\n"
	"int __attribute__((noinline)) global_fn(int x) { return helper(x) + (int)strlen(\"ab\"); }\n"
	"int __attribute__((weak)) weak_fn(int x) { return x - 1; }\n"
	"extern int alias_fn(int) __attribute__((alias(\"global_fn\")));\n"
	"int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", global_fn(argc) + weak_fn(argc) + alias_fn(2)); puts(\"x\"); return abs(argc) == 7; }\n";

/* Compile prog_src with extra flags into dir/name; returns path or NULL. */
static const char *build_prog(const char *name, const char *flags)
{
	static char path[4][600];
	static int slot;
	char src[600], cmd[2048];
	FILE *f;
	char *p = path[slot++ & 3];

	snprintf(src, sizeof(src), "%s/%s.c", tl_tmpdir(), name);
	snprintf(p, 600, "%s/%s", tl_tmpdir(), name);
	f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(prog_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g %s -o %s %s 2>&1", flags, p,
		 src);
	if (system(cmd) != 0)
		return NULL;
	return p;
}

/*
 * For every function symbol nm prints (types T t W w i), look the address
 * up: the symbol must start there and be named by one of the names nm
 * gives that address. Returns the number of addresses checked.
 */
static int check_nm_file(struct strace_image *img, const char *path,
			 uint64_t bias, int dynamic, int keep_version);

static int check_nm(struct strace_image *img, const char *path, uint64_t bias,
		    int dynamic)
{
	return check_nm_file(img, path, bias, dynamic, 0);
}

static int check_nm_file(struct strace_image *img, const char *path,
			 uint64_t bias, int dynamic, int keep_version)
{
	char cmd[800], *out, *line, *save = NULL;
	int checked = 0, bad = 0;
	struct ent {
		unsigned long long addr, size;
		char name[256];
	} *v = NULL;
	size_t n = 0, cap = 0;

	snprintf(cmd, sizeof(cmd),
		 "nm %s --defined-only -S %s | awk '$3 ~ /^[TtWwi]$/' | sort",
		 dynamic ? "-D" : "", path);
	out = tl_run(cmd);
	if (!out)
		return -1;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ent e;
		char type, *at;

		if (sscanf(line, "%llx %llx %c %255s", &e.addr, &e.size, &type,
			   e.name) != 4)
			continue;
		if (!keep_version && (at = strchr(e.name, '@')))
			*at = 0;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = e;
	}
	free(out);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct strace_symbol s;
		int named = 0, sized = 0;

		while (j < n && v[j].addr == v[i].addr)
			j++;
		if (strace_image_symbol(img, bias + v[i].addr, &s) != 0) {
			if (bad++ < 5)
				fprintf(stderr, "  no symbol at %llx (%s)\n",
					v[i].addr, v[i].name);
		} else if (s.start != bias + v[i].addr) {
			if (bad++ < 5)
				fprintf(stderr, "  %s: start %llx, want %llx\n",
					v[i].name,
					(unsigned long long)(s.start - bias),
					v[i].addr);
		} else {
			for (size_t k = i; k < j; k++) {
				if (!strcmp(v[k].name, s.name)) {
					named = 1;
					sized = !v[k].size || v[k].size == s.size;
				}
			}
			if (!named || !sized) {
				if (bad++ < 5)
					fprintf(stderr,
						"  %llx: %s (size %llu) not as "
						"nm says (%s size %llu)\n",
						v[i].addr, s.name,
						(unsigned long long)s.size,
						v[i].name, v[i].size);
			}
		}
		checked++;
		i = j;
	}
	free(v);
	CHECK_INT(bad, ==, 0);
	return checked;
}

TEST(program_symbols)
{
	const char *p = build_prog("prog", "-fPIE -pie");
	struct strace_image *img;
	uint64_t bias = 0x555555554000ull;
	int n;

	if (!p || !tl_have("nm"))
		SKIP("no cc or nm");
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, p, bias) > 0);
	n = check_nm(img, p, bias, 0);
	CHECK_INT(n, >=, 5);
	/* a named function by name: helper is static, in .symtab only */
	{
		char cmd[700], *out;
		unsigned long long a = 0;
		struct strace_symbol s;
		snprintf(cmd, sizeof(cmd), "nm %s | grep ' helper$'", p);
		out = tl_run(cmd);
		REQUIRE(out && sscanf(out, "%llx", &a) == 1);
		free(out);
		CHECK(strace_image_symbol(img, bias + a + 1, &s) == 0);
		CHECK_STR(s.name, "helper");
		CHECK_U64(s.start, ==, bias + a);
	}
	strace_image_free(img);
}

TEST(libc_dynsym)
{
	struct strace_image *img;
	uint64_t bias = 0x7f1234560000ull;
	int n;

	/* .dynsym only: without the separate debug file (libc6-dbg) */
	struct strace_image_opts o = {.size = sizeof(o),
				      .plt_style = STRACE_PLT_PERF61,
				      .no_debuginfo = 1};

	if (access(LIBC, R_OK) || !tl_have("nm"))
		SKIP("no libc.so.6 or nm");
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, LIBC, bias) > 0);
	n = check_nm(img, LIBC, bias, 1);
	printf("  libc: %d function addresses checked\n", n);
	CHECK_INT(n, >=, 2000);
	strace_image_free(img);
}

/* libc6-dbg: symbols come from the separate debug file, as perf takes
 * them (found by build-id), versioned names included. */
TEST(libc_debuginfo)
{
	struct strace_image *img;
	uint64_t bias = 0x7f1234560000ull;
	char *id, dbg[256];
	int n;

	id = tl_run("readelf -n " LIBC " | awk '/Build ID/ {print $3}'");
	if (!id || strlen(id) < 10) {
		free(id);
		SKIP("no build-id");
	}
	id[strcspn(id, "\n")] = 0;
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 id, id + 2);
	free(id);
	if (access(dbg, R_OK))
		SKIP("libc6-dbg not installed");
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, LIBC, bias) > 0);
	n = check_nm_file(img, dbg, bias, 0, 1);
	printf("  libc debug file: %d function addresses checked\n", n);
	CHECK_INT(n, >=, 3000);
	strace_image_free(img);
}

/* C++ names as perf prints them: every name our image gives for an
 * address of libstdc++ is one that `perf probe -F` (demangled) lists. */
TEST(demangled_names_like_perf)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	struct strace_image *img;
	char path[600], cmd[1400], *out, *real;
	uint64_t bias = 0x7f5000000000ull, size;
	const char *last = NULL;
	FILE *f;
	int n = 0;
	struct stat st;

	if (!tl_have("perf") || access(lib, R_OK))
		SKIP("no perf or libstdc++");
	real = realpath(lib, NULL);
	REQUIRE(real && stat(real, &st) == 0);
	size = (uint64_t)st.st_size;
	snprintf(path, sizeof(path), "%s/perf-names", tl_tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "perf probe -F -x %s --filter '*' 2>/dev/null | sort -u > %s",
		 real, path);
	if (system(cmd) != 0) {
		free(real);
		SKIP("perf probe -F does not work here");
	}
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, real, bias) > 0);
	snprintf(path, sizeof(path), "%s/our-names", tl_tmpdir());
	f = fopen(path, "w");
	REQUIRE(f);
	for (uint64_t a = bias; a < bias + size; a++) {
		struct strace_symbol s;
		if (strace_image_symbol(img, a, &s) || s.name == last)
			continue;
		last = s.name;
		fprintf(f, "%s\n", s.name);
		n++;
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "sort -u %s/our-names | comm -13 %s/perf-names - | head -5",
		 tl_tmpdir(), tl_tmpdir());
	out = tl_run(cmd);
	REQUIRE(out);
	if (*out)
		fprintf(stderr, "  names perf does not know:\n%s", out);
	CHECK(*out == 0);
	CHECK_INT(n, >, 3000);
	printf("  libstdc++: %d names, all as perf prints them\n", n);
	free(out);
	free(real);
	strace_image_free(img);
}

/* What a check of objdump's labels works on. */
struct labels {
	struct strace_image *img;
	const char *path, *sec;
	uint64_t bias;
	int *bad;
};

/* A miss: what objdump says at a and what we say. */
static void miss(struct labels *l, uint64_t a, const char *name)
{
	struct strace_symbol s;

	if ((*l->bad)++ < 5)
		fprintf(stderr, "  %s %s %llx: objdump %s, ours %s\n", l->path,
			l->sec, (unsigned long long)a, name,
			strace_image_symbol(l->img, l->bias + a, &s) ? "(none)"
								     : s.name);
}

/* perf's names, a rule of check_labels(): a label "<name@plt>" is our
 * name there (not the IRELATIVE slots: *ABS*+0x...@plt). */
static int perf_label(struct labels *l, uint64_t a, const char *name)
{
	struct strace_symbol s;
	size_t len = strlen(name);

	if (len < 4 || strcmp(name + len - 4, "@plt") || strchr(name, '*') ||
	    strchr(name, '+'))
		return 0;
	if (strace_image_symbol(l->img, l->bias + a, &s) != 0 ||
	    strcmp(s.name, name) || s.start != l->bias + a)
		miss(l, a, name);
	return 1;
}

/* Each label objdump -d prints in section sec of path ("ADDR <NAME>:"):
 * one call of rule, which returns 1 if it checked it (and counted a miss
 * in *bad), 0 if not. Returns how many it checked. */
static int check_labels(struct strace_image *img, const char *path,
			const char *sec, uint64_t bias, int *bad,
			int (*rule)(struct labels *l, uint64_t a,
				    const char *name))
{
	struct labels l = {img, path, sec, bias, bad};
	char cmd[800], *out, *line, *save = NULL;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --section=%s %s | grep -E '^[0-9a-f]+ <.*>:$'",
		 sec, path);
	out = tl_run(cmd);
	if (!out)
		return 0;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		char name[512];

		if (sscanf(line, "%llx <%511[^>]>:", &a, name) == 2)
			n += rule(&l, a, name);
	}
	free(out);
	return n;
}

TEST(plt_perf61)
{
	struct strace_image *img;
	uint64_t bias = 0x560000000000ull;
	int bad = 0, n;

	if (!tl_have("objdump"))
		SKIP("no objdump");
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, "/bin/ls", bias) > 0);
	n = check_labels(img, "/bin/ls", ".plt", bias, &bad, perf_label);
	CHECK_INT(n, >=, 50);
	CHECK_INT(bad, ==, 0);
	/* perf 6.1 names no .plt.got entries: they belong to no symbol */
	{
		char *out = tl_run("objdump -d --section=.plt.got /bin/ls | "
				   "grep -m1 -E '^[0-9a-f]+ <'");
		unsigned long long a;
		struct strace_symbol s;
		if (out && sscanf(out, "%llx", &a) == 1)
			CHECK(strace_image_symbol(img, bias + a, &s) != 0 ||
			      !strstr(s.name, "@plt"));
		free(out);
	}
	strace_image_free(img);
}

/* The set of name@plt names perf itself makes for a binary. */
TEST(plt_names_like_installed_perf)
{
	struct strace_image *img;
	char *want, *got = NULL, *line, *save = NULL;
	size_t glen = 0;
	FILE *f;
	char cmd[800], path[600];
	uint64_t bias = 0x560000000000ull;

	if (!tl_have("perf") || !tl_have("objdump"))
		SKIP("no perf");
	want = tl_run("perf probe -F -x /bin/ls --filter '*' 2>/dev/null | "
		      "grep '@plt$' | sort");
	if (!want || !*want) {
		free(want);
		SKIP("perf probe -F does not work here");
	}
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, "/bin/ls", bias) > 0);
	/* walk every 8 bytes of .plt and .plt.got, collect names */
	snprintf(path, sizeof(path), "%s/plt-names", tl_tmpdir());
	f = fopen(path, "w");
	REQUIRE(f);
	{
		char *hdr = tl_run("readelf -SW /bin/ls | grep -E ' \\.plt(\\.got|\\.sec)? '");
		char *l2, *sv2 = NULL;
		REQUIRE(hdr);
		for (l2 = strtok_r(hdr, "\n", &sv2); l2;
		     l2 = strtok_r(NULL, "\n", &sv2)) {
			char nm[64], ty[64];
			unsigned long long addr, off, size;
			char *b = strchr(l2, ']');
			if (!b || sscanf(b + 1, "%63s %63s %llx %llx %llx", nm,
					 ty, &addr, &off, &size) != 5)
				continue;
			for (unsigned long long a = addr; a < addr + size;
			     a += 8) {
				struct strace_symbol s;
				if (!strace_image_symbol(img, bias + a, &s) &&
				    s.start == bias + a)
					fprintf(f, "%s\n", s.name);
			}
		}
		free(hdr);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "sort %s", path);
	got = tl_run(cmd);
	REQUIRE(got);
	glen = strlen(got);
	CHECK_INT(glen, ==, strlen(want));
	CHECK(strcmp(got, want) == 0);
	(void)line;
	(void)save;
	free(want);
	free(got);
	strace_image_free(img);
}

TEST(plt_perf62_plt_got_and_sec)
{
	struct strace_image_opts o = {.size = sizeof(o),
				      .plt_style = STRACE_PLT_PERF62};
	struct strace_image *img;
	uint64_t bias = 0x560000000000ull;
	int bad = 0, n;
	const char *p;

	if (!tl_have("objdump"))
		SKIP("no objdump");
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, "/bin/ls", bias) > 0);
	n = check_labels(img, "/bin/ls", ".plt", bias, &bad, perf_label);
	n += check_labels(img, "/bin/ls", ".plt.got", bias, &bad, perf_label);
	CHECK_INT(n, >=, 56);
	CHECK_INT(bad, ==, 0);
	strace_image_free(img);

	/* an IBT binary: .plt.sec holds the entries that calls go to */
	p = build_prog("prog_ibt", "-fPIE -pie -fcf-protection=full "
				   "-Wl,-z,ibtplt");
	if (!p)
		SKIP("cannot build an IBT program");
	{
		char cmd[700], *out;
		snprintf(cmd, sizeof(cmd), "readelf -SW %s | grep -c plt.sec",
			 p);
		out = tl_run(cmd);
		if (!out || atoi(out) < 1) {
			free(out);
			SKIP("linker made no .plt.sec");
		}
		free(out);
	}
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, p, bias) > 0);
	bad = 0;
	n = check_labels(img, p, ".plt.sec", bias, &bad, perf_label);
	CHECK_INT(n, >=, 2);
	CHECK_INT(bad, ==, 0);
	strace_image_free(img);
}

/* The IFUNC symbols readelf lists in path's .dynsym at value v, without
 * their versions, one per line in out (of size max). */
static void dyn_ifuncs(const char *path, unsigned long long v, char *out,
		       size_t max)
{
	char cmd[800], *r;

	snprintf(cmd, sizeof(cmd),
		 "readelf -sW --dyn-syms %s | awk '$2 ~ /^0*%llx$/ && $4 == "
		 "\"IFUNC\" { sub(/@.*/, \"\", $8); print $8 }'",
		 path, v);
	r = tl_run(cmd);
	snprintf(out, max, "%s", r ? r : "");
	free(r);
}

/*
 * STRACE_PLT_PLAIN against objdump -d: every label objdump prints in the
 * section is our symbol at that address (start and name): NAME@plt as it
 * is; PLT0 (objdump: FIRST@plt-0x10, or .plt with .plt.sec) "[plt0]"; an
 * IRELATIVE slot (objdump: *ABS*+0xADDEND@plt) objdump's name, or
 * NAME@plt where readelf lists an IFUNC NAME at ADDEND. A rule of
 * check_labels().
 */
static int plain_label(struct labels *l, uint64_t a, const char *name)
{
	unsigned long long add;
	char want[600], ifn[4096];
	struct strace_symbol s;
	size_t len = strlen(name);
	int ok;

	if (!strcmp(name, ".plt") ||
	    (len > 9 && !strcmp(name + len - 9, "@plt-0x10")))
		snprintf(want, sizeof(want), "[plt0]");
	else if (len > 4 && !strcmp(name + len - 4, "@plt"))
		snprintf(want, sizeof(want), "%s", name);
	else
		return 0;
	ok = strace_image_symbol(l->img, l->bias + a, &s) == 0 &&
	     s.start == l->bias + a;
	if (ok && strcmp(s.name, want)) {
		ok = 0;
		if (sscanf(name, "*ABS*+%llx@plt", &add) == 1) {
			char *f, *sv = NULL;
			dyn_ifuncs(l->path, add, ifn, sizeof(ifn));
			for (f = strtok_r(ifn, "\n", &sv); f && !ok;
			     f = strtok_r(NULL, "\n", &sv)) {
				snprintf(want, sizeof(want), "%s@plt", f);
				ok = !strcmp(s.name, want);
			}
		}
	}
	if (!ok)
		miss(l, a, name);
	return 1;
}

TEST(plt_plain_as_objdump)
{
	struct strace_image_opts o = {.size = sizeof(o),
				      .plt_style = STRACE_PLT_PLAIN};
	static const char *const files[][3] = {
		{"/bin/ls", ".plt", ".plt.got"},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", ".plt", ".plt.got"},
	};
	struct strace_image *img;
	uint64_t bias = 0x560000000000ull;
	int bad = 0, n = 0;
	const char *p;

	if (!tl_have("objdump") || !tl_have("readelf"))
		SKIP("no objdump or readelf");
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		REQUIRE(strace_image_new(&o, &img) == 0);
		REQUIRE(tl_map_elf(img, files[f][0], bias) > 0);
		n += check_labels(img, files[f][0], files[f][1], bias, &bad,
				  plain_label);
		n += check_labels(img, files[f][0], files[f][2], bias, &bad,
				  plain_label);
		strace_image_free(img);
	}
	CHECK_INT(n, >=, 120);
	CHECK_INT(bad, ==, 0);

	p = build_prog("prog_ibt", "-fPIE -pie -fcf-protection=full "
				   "-Wl,-z,ibtplt");
	if (!p)
		SKIP("cannot build an IBT program");
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, p, bias) > 0);
	bad = n = 0;
	n += check_labels(img, p, ".plt", bias, &bad, plain_label);
	n += check_labels(img, p, ".plt.sec", bias, &bad, plain_label);
	CHECK_INT(n, >=, 3);
	CHECK_INT(bad, ==, 0);
	strace_image_free(img);
}

TEST(code_bytes_match_objdump)
{
	const char *p = build_prog("prog2", "-fPIE -pie");
	struct strace_image *img;
	uint64_t bias = 0x555555554000ull;
	char cmd[800], *out, *line, *save = NULL;
	int n = 0, bad = 0;

	if (!p || !tl_have("objdump"))
		SKIP("no cc or objdump");
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(tl_map_elf(img, p, bias) > 0);
	snprintf(cmd, sizeof(cmd),
		 "objdump -d --section=.text %s | grep -E '^ +[0-9a-f]+:\t'",
		 p);
	out = tl_run(cmd);
	REQUIRE(out);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		unsigned b[16];
		uint8_t mine[16];
		int k = 0, used;
		char *q;

		if (sscanf(line, " %llx:%n", &a, &used) != 1)
			continue;
		q = line + used;
		while (k < 16) {
			int m;
			if (sscanf(q, " %2x%n", &b[k], &m) != 1 || m > 3)
				break;
			if (q[m] != ' ' && q[m] != '\t' && q[m] != 0)
				break;
			q += m;
			k++;
			if (*q == '\t')
				break;
		}
		CHECK_INT(strace_image_read(img, bias + a, mine, (size_t)k), ==,
			  k);
		for (int i = 0; i < k; i++)
			if (mine[i] != b[i])
				bad++;
		n++;
	}
	free(out);
	CHECK_INT(n, >=, 20);
	CHECK_INT(bad, ==, 0);
	strace_image_free(img);
}

TEST(mappings_replace_and_remove)
{
	struct strace_image *img;
	uint8_t a[8192], b[4096], buf[16];
	size_t avail;
	const uint8_t *c;

	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	REQUIRE(strace_image_new(NULL, &img) == 0);
	CHECK_INT(strace_image_add_bytes(img, 0x10000, a, sizeof(a), "a"), ==, 0);
	uint64_t g = strace_image_generation(img);
	/* b replaces the middle of a's second page */
	CHECK_INT(strace_image_add_bytes(img, 0x11800, b, 1024, "b"), ==, 0);
	CHECK(strace_image_generation(img) != g);
	c = strace_image_code(img, 0x11000, &avail);
	CHECK(c && c[0] == 0xaa);
	CHECK_INT(avail, ==, 0x800);
	c = strace_image_code(img, 0x11900, &avail);
	CHECK(c && c[0] == 0xbb);
	CHECK_INT(avail, ==, 0x300);
	c = strace_image_code(img, 0x11c00, &avail);
	CHECK(c && c[0] == 0xaa); /* the tail of a keeps its offset */
	CHECK_INT(avail, ==, 0x400);
	CHECK_INT(strace_image_read(img, 0x117f8, buf, 16), ==, 16);
	CHECK_INT(buf[7], ==, 0xaa);
	CHECK_INT(buf[8], ==, 0xbb);
	CHECK_INT(strace_image_remove(img, 0x10000, 0x1000), ==, 0);
	CHECK(strace_image_code(img, 0x10010, &avail) == NULL);
	CHECK_INT(strace_image_read(img, 0x12000, buf, 4), ==, 0);
	CHECK(strace_image_add_file(img, 0x1000, 0x1000, 0,
				    "/nonexistent/file") == -ENOENT);
	strace_image_free(img);
}

/*
 * A path named by a binary's .gnu_debuglink, or by a mapping, that is a
 * FIFO: open() of a FIFO waits for a writer forever, so the search must
 * skip it without opening it, and go on. Here the FIFOs stand beside the
 * stripped program and in its .debug/, and the real debug file is in the
 * build-id cache under $HOME, the next place looked at. Runs in a child
 * that SIGALRM kills if it hangs.
 */
TEST(debuglink_fifo_skipped)
{
	const char *built = build_prog("dlfifo", "-fPIE -pie");
	uint64_t bias = 0x555555554000ull;
	unsigned long long helper = 0;
	char cmd[2 * PATH_MAX + 512], fifo[PATH_MAX + 16], p[PATH_MAX];
	char dir[PATH_MAX];
	char *out, *id;
	int status;
	pid_t pid;

	if (!built || !tl_have("nm") || !tl_have("objcopy") ||
	    !tl_have("strip"))
		SKIP("no cc, nm, objcopy or strip");
	/* perf (and we) look beside a file only when its path is absolute */
	REQUIRE(realpath(built, p) && realpath(tl_tmpdir(), dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug dlfifo dlfifo.dbg && "
		 "strip --strip-all dlfifo && "
		 "objcopy --add-gnu-debuglink=dlfifo.dbg dlfifo && "
		 "nm dlfifo.dbg | awk '$3 == \"helper\" {print $1}'",
		 dir);
	out = tl_run(cmd);
	REQUIRE(out && sscanf(out, "%llx", &helper) == 1);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "readelf -n %s | awk '/Build ID/ {print $3}'", p);
	id = tl_run(cmd);
	if (!id || strlen(id) < 10) {
		free(id);
		SKIP("no build-id");
	}
	id[strcspn(id, "\n")] = 0;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p home/.debug/.build-id/%.2s/%s .debug && "
		 "mv dlfifo.dbg home/.debug/.build-id/%.2s/%s/debug && "
		 "mkfifo dlfifo.dbg .debug/dlfifo.dbg",
		 dir, id, id + 2, id, id + 2);
	free(id);
	REQUIRE(system(cmd) == 0);
	snprintf(fifo, sizeof(fifo), "%s/dlfifo.dbg", dir);

	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct strace_image *img;
		struct strace_symbol s;
		char home[PATH_MAX + 8];

		alarm(20);
		snprintf(home, sizeof(home), "%s/home", dir);
		setenv("HOME", home, 1);
		if (strace_image_new(NULL, &img) || tl_map_elf(img, p, bias) <= 0)
			_exit(3);
		/* a FIFO as a mapping's file */
		if (strace_image_add_file(img, 0x10000, 0x1000, 0, fifo) !=
		    -ENODEV)
			_exit(4);
		if (strace_image_symbol(img, bias + helper + 1, &s) ||
		    strcmp(s.name, "helper"))
			_exit(5);
		strace_image_free(img);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		fprintf(stderr, "  hung for 20 s: a FIFO named by "
				".gnu_debuglink was opened\n");
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "  child exit %d: 3 no image, 4 the FIFO "
				"mapping was not -ENODEV, 5 helper not named "
				"from the debug file in $HOME/.debug\n",
			WEXITSTATUS(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Our own vDSO, read from memory: symbols match objdump -T of its dump. */
TEST(vdso_from_memory)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct strace_image *img;
	char path[600], cmd[800], *out, *line, *save = NULL;
	size_t len = 0;
	FILE *f;
	int n = 0;

	if (!base)
		SKIP("no vDSO");
	f = fopen("/proc/self/maps", "r");
	REQUIRE(f);
	{
		char l[512];
		while (fgets(l, sizeof(l), f)) {
			unsigned long long s, e;
			if (strstr(l, "[vdso]") &&
			    sscanf(l, "%llx-%llx", &s, &e) == 2)
				len = (size_t)(e - s);
		}
	}
	fclose(f);
	REQUIRE(len);
	REQUIRE(strace_image_new(NULL, &img) == 0);
	REQUIRE(strace_image_add_bytes(img, base, (const void *)(uintptr_t)base,
				       len, "[vdso]") == 0);
	snprintf(path, sizeof(path), "%s/vdso.so", tl_tmpdir());
	f = fopen(path, "w");
	REQUIRE(f);
	fwrite((const void *)(uintptr_t)base, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "objdump -T %s | grep ' DF .text'", path);
	out = tl_run(cmd);
	if (!out)
		SKIP("objdump -T failed on the vDSO dump");
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		struct strace_symbol s;
		if (sscanf(line, "%llx", &a) != 1)
			continue;
		CHECK(strace_image_symbol(img, base + a, &s) == 0 &&
		      s.start == base + a);
		n++;
	}
	CHECK_INT(n, >=, 4);
	free(out);
	strace_image_free(img);
}

/* The address nm gives name in path (0 if none). */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[800], *out;
	unsigned long long a = 0;

	snprintf(cmd, sizeof(cmd), "nm --defined-only %s | awk '$3 == \"%s\"'",
		 path, name);
	out = tl_run(cmd);
	if (out && sscanf(out, "%llx", &a) != 1)
		a = 0;
	free(out);
	return a;
}

/* Images of one struct strace_objcache share each file and its symbols,
 * also after the image that read them is gone; a file rewritten since is
 * read again; images with other symbol options get their own reading. */
TEST(objcache_shares_files)
{
	const char *p = build_prog("cached", "-fPIE -pie");
	struct strace_objcache *oc;
	struct strace_image_opts o = {.size = sizeof(o)};
	struct strace_image *a, *b, *c, *d;
	struct strace_symbol sa, sb, sc, sd;
	uint64_t ba = 0x555555554000ull, bb = 0x7f0000000000ull, fn;
	struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};

	if (!p || !tl_have("nm"))
		SKIP("no cc or nm");
	fn = nm_addr(p, "global_fn");
	REQUIRE(fn);
	REQUIRE(strace_objcache_new(&oc) == 0);
	o.objects = oc;
	REQUIRE(strace_image_new(&o, &a) == 0);
	REQUIRE(strace_image_new(&o, &b) == 0);
	REQUIRE(tl_map_elf(a, p, ba) > 0);
	REQUIRE(tl_map_elf(b, p, bb) > 0);
	CHECK_INT(check_nm(a, p, ba, 0), >, 3);
	REQUIRE(strace_image_symbol(a, ba + fn, &sa) == 0);
	strace_image_free(a);
	REQUIRE(strace_image_symbol(b, bb + fn, &sb) == 0);
	CHECK(sa.name == sb.name); /* one reading of the file */
	CHECK_STR(sb.name, "global_fn");
	CHECK_U64(sb.start, ==, bb + fn);
	CHECK_INT(check_nm(b, p, bb, 0), >, 3);

	/* kept by the cache with no image left */
	strace_image_free(b);
	REQUIRE(strace_image_new(&o, &c) == 0);
	REQUIRE(tl_map_elf(c, p, ba) > 0);
	REQUIRE(strace_image_symbol(c, ba + fn, &sc) == 0);
	CHECK(sc.name == sa.name);
	strace_image_free(c);

	/* another modification time: another file */
	REQUIRE(utimensat(AT_FDCWD, p, times, 0) == 0);
	REQUIRE(strace_image_new(&o, &c) == 0);
	REQUIRE(tl_map_elf(c, p, ba) > 0);
	REQUIRE(strace_image_symbol(c, ba + fn, &sc) == 0);
	CHECK(sc.name != sa.name);
	CHECK_STR(sc.name, "global_fn");

	/* other symbol options: read again */
	o.plt_style = STRACE_PLT_PERF62;
	REQUIRE(strace_image_new(&o, &d) == 0);
	REQUIRE(tl_map_elf(d, p, ba) > 0);
	REQUIRE(strace_image_symbol(d, ba + fn, &sd) == 0);
	CHECK(sd.name != sc.name);
	CHECK_STR(sd.name, "global_fn");
	strace_image_free(c);
	strace_image_free(d);
	strace_objcache_free(oc);
}

/* Images on several threads, one cache, first lookups at once: every
 * thread gets libc's answers (one thread reads the symbols, the others
 * wait for it). */
struct cache_job {
	struct strace_objcache *oc;
	pthread_barrier_t *go;
	const uint64_t *addrs;
	const char *const *names;
	size_t n;
	int bad;
};

static void *cache_thread(void *arg)
{
	struct cache_job *j = arg;
	struct strace_image_opts o = {.size = sizeof(o), .objects = j->oc};
	struct strace_image *img;

	if (strace_image_new(&o, &img) ||
	    tl_map_elf(img, LIBC, 0x10000000) <= 0) {
		j->bad++;
		return NULL;
	}
	pthread_barrier_wait(j->go);
	for (size_t i = 0; i < j->n; i++) {
		struct strace_symbol s;
		int rc = strace_image_symbol(img, 0x10000000 + j->addrs[i],
					     &s);
		if (j->names[i] ? rc != 0 || strcmp(s.name, j->names[i])
				: rc == 0)
			j->bad++;
	}
	strace_image_free(img);
	return NULL;
}

TEST(objcache_threads)
{
	enum { NT = 4, NA = 64 };
	struct strace_image *ref;
	uint64_t addrs[NA];
	const char *names[NA];
	struct strace_symbol s;
	struct cache_job jobs[NT];
	pthread_t th[NT];

	if (access(LIBC, R_OK))
		SKIP("no libc.so.6");
	REQUIRE(strace_image_new(NULL, &ref) == 0);
	REQUIRE(tl_map_elf(ref, LIBC, 0x10000000) > 0);
	int named = 0;
	for (int i = 0; i < NA; i++) {
		addrs[i] = 0x28000 + (uint64_t)i * 0x1234;
		names[i] = strace_image_symbol(ref, 0x10000000 + addrs[i], &s)
				   ? NULL
				   : s.name;
		named += names[i] != NULL;
	}
	CHECK_INT(named, >, NA / 2);
	for (int round = 0; round < 5; round++) {
		struct strace_objcache *oc;
		pthread_barrier_t go;
		int started = 0;

		REQUIRE(strace_objcache_new(&oc) == 0);
		pthread_barrier_init(&go, NULL, NT);
		for (int t = 0; t < NT; t++) {
			jobs[t] = (struct cache_job){oc,    &go, addrs,
						     names, NA,  0};
			if (pthread_create(&th[t], NULL, cache_thread,
					   &jobs[t]))
				break;
			started++;
		}
		REQUIRE(started == NT);
		for (int t = 0; t < NT; t++) {
			pthread_join(th[t], NULL);
			CHECK_INT(jobs[t].bad, ==, 0);
		}
		pthread_barrier_destroy(&go);
		strace_objcache_free(oc);
	}
	strace_image_free(ref);
}

RUN_TESTS("test_decoder_image")

/*
 * STRACE_PLT_PLAIN against nm: at every address of a function libc
 * exports (nm -D), our symbol starts there and is one of the names nm
 * lists there, without a version: a public name, never __GI_ or
 * _IO_ where one exists; and the names people type are these.
 */
TEST(plain_names_as_nm)
{
	struct strace_image_opts o = {.size = sizeof(o),
				      .plt_style = STRACE_PLT_PLAIN};
	static const char *const typed[] = {"puts",   "free",  "malloc",
					    "write",  "qsort", "qsort_r",
					    "printf", "exit",  "memcpy"};
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct strace_image *img;
	uint64_t bias = 0x7f0000000000ull;
	char *out, *line, *save = NULL;
	/* nm's names at one address, sorted by address: "ADDR NAME..." */
	char cmd[600];
	int bad = 0, n = 0, seen = 0;

	if (!tl_have("nm"))
		SKIP("no nm");
	snprintf(cmd, sizeof(cmd),
		 "nm -D --defined-only %s | awk '$2 ~ /^[TWi]$/ { "
		 "sub(/@.*/, \"\", $3); n[$1] = n[$1] \" \" $3 } END { "
		 "for (a in n) print a n[a] }'",
		 libc);
	out = tl_run(cmd);
	REQUIRE(out != NULL);
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, libc, bias) > 0);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		struct strace_symbol s;
		char want[300], names[4096];
		int ok;

		if (sscanf(line, "%llx", &a) != 1 || !strchr(line, ' '))
			continue;
		n++;
		/* " NAME NAME ": a name is there when " NAME " is */
		snprintf(names, sizeof(names), "%s ", strchr(line, ' '));
		ok = strace_image_symbol(img, bias + a, &s) == 0 &&
		     s.start == bias + a && !strchr(s.name, '@');
		if (ok) {
			snprintf(want, sizeof(want), " %s ", s.name);
			ok = strstr(names, want) != NULL;
		}
		for (size_t i = 0; ok && i < sizeof(typed) / sizeof(*typed);
		     i++) {
			snprintf(want, sizeof(want), " %s ", typed[i]);
			if (strstr(names, want)) {
				seen++;
				ok = !strcmp(s.name, typed[i]);
			}
		}
		if (!ok && bad++ < 5)
			fprintf(stderr, "  libc %llx: nm%s, ours %s\n", a,
				strchr(line, ' '),
				strace_image_symbol(img, bias + a, &s) ? "(none)"
								       : s.name);
	}
	free(out);
	strace_image_free(img);
	CHECK_INT(n, >=, 1000);
	/* (each at least once: an old version has an address of its own) */
	CHECK_INT(seen, >=, (int)(sizeof(typed) / sizeof(*typed)));
	CHECK_INT(bad, ==, 0);
}

/*
 * A symbol's aliases against nm: at every function address of libc that
 * nm -D lists, each of nm -D's names there (free@@GLIBC_2.2.5,
 * cfree@GLIBC_2.2.5, __libc_free@@GLIBC_2.2.5) is our name or an alias
 * (the default version may be missing where the detached debug file's
 * .symtab was read: it writes free, not free@@...), and each alias is a
 * name nm lists there, in libc or in its debug file, as written or
 * before its @VERSION or after __GI_.
 */
TEST(aliases_as_nm)
{
	struct strace_image_opts o = {.size = sizeof(o),
				      .plt_style = STRACE_PLT_PLAIN};
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct strace_image *img;
	uint64_t bias = 0x7f0000000000ull;
	char *dyn, *all, *line, *save = NULL;
	char cmd[900];
	int bad = 0, n = 0, aliased = 0;

	if (!tl_have("nm"))
		SKIP("no nm");
	/* "ADDR NAME...": nm -D's function names per address; then every
	 * name of libc and of its debug file (found by build-id), per
	 * address */
	snprintf(cmd, sizeof(cmd),
		 "nm -D --defined-only %s | awk '$2 ~ /^[TWi]$/ { "
		 "n[$1] = n[$1] \" \" $3 } END { for (a in n) print a n[a] }'",
		 libc);
	dyn = tl_run(cmd);
	snprintf(cmd, sizeof(cmd),
		 "id=$(readelf -n %s | awk '/Build ID/ {print $3}'); "
		 "{ nm -D --defined-only %s; nm --defined-only "
		 "/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/"
		 "$(echo $id | cut -c3-).debug 2>/dev/null; } | "
		 "awk 'NF == 3 { n[$1] = n[$1] \" \" $3 } END { "
		 "for (a in n) print a n[a] \" \" }'",
		 libc, libc);
	all = tl_run(cmd);
	REQUIRE(dyn != NULL && all != NULL);
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, libc, bias) > 0);
	for (line = strtok_r(dyn, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		struct strace_symbol s;
		const char *al[STRACE_ALIASES_MAX], *at;
		char key[40], want[400], *tok, *save2 = NULL, *there;
		size_t na;
		int ok = 1;

		if (sscanf(line, "%llx", &a) != 1 ||
		    strace_image_symbol(img, bias + a, &s) ||
		    s.start != bias + a)
			continue;
		n++;
		na = strace_image_aliases(img, s.start, al,
					  STRACE_ALIASES_MAX);
		aliased += na > 0;
		/* nm's names at a: the line of `all` that starts "ADDR " */
		snprintf(key, sizeof(key), "\n%016llx ", a);
		there = strstr(all, key);
		if (!there && !strncmp(all, key + 1, strlen(key + 1)))
			there = all - 1;
		for (tok = strtok_r(strchr(line, ' '), " ", &save2);
		     tok && ok; tok = strtok_r(NULL, " ", &save2)) {
			int found = !strcmp(tok, s.name);
			for (size_t i = 0; !found && i < na; i++)
				found = !strcmp(tok, al[i]);
			at = strstr(tok, "@@");
			if (!found && at) {
				/* free@@GLIBC_2.2.5 as free */
				snprintf(want, sizeof(want), "%.*s",
					 (int)(at - tok), tok);
				found = !strcmp(want, s.name);
				for (size_t i = 0; !found && i < na; i++)
					found = !strcmp(want, al[i]);
			}
			if (!found && bad++ < 5)
				fprintf(stderr, "  libc %llx: nm -D's %s is "
						"not ours (%s, %zu aliases)\n",
					a, tok, s.name, na);
			ok = found;
		}
		for (size_t i = 0; ok && there && i < na && i < STRACE_ALIASES_MAX;
		     i++) {
			const char *end = strchr(there + 1, '\n');
			size_t span = end ? (size_t)(end - there) : strlen(there);
			char w1[300], w2[300], w3[300];
			snprintf(w1, sizeof(w1), " %s ", al[i]);
			snprintf(w2, sizeof(w2), " %s@", al[i]);
			snprintf(w3, sizeof(w3), " __GI_%s ", al[i]);
			ok = memmem(there, span, w1, strlen(w1)) ||
			     memmem(there, span, w2, strlen(w2)) ||
			     memmem(there, span, w3, strlen(w3));
			if (!ok && bad++ < 5)
				fprintf(stderr, "  libc %llx: alias %s of %s "
						"is no name nm lists there\n",
					a, al[i], s.name);
		}
		if (!ok && !bad)
			bad++;
	}
	free(dyn);
	free(all);
	strace_image_free(img);
	CHECK_INT(n, >=, 1000);
	CHECK_INT(aliased, >=, 100);
	CHECK_INT(bad, ==, 0);
}

/*
 * strace_syscall_nr() against objdump -d, at every `syscall` of libc:
 * where objdump shows `mov $N, %eax` (or %rax; xor %eax,%eax: 0) right
 * before it, the number is N
 * (at nearly all: a branch onto the syscall itself makes it unknown);
 * wherever we give a number, objdump shows a `mov $N, %eax` before it in
 * the function; the names are the kernel's (write is 1).
 */
TEST(syscall_numbers_as_objdump)
{
	struct strace_image_opts o = {.size = sizeof(o)};
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct strace_image *img;
	uint64_t bias = 0x7f0000000000ull;
	char *out, *line, *save = NULL;
	int sites = 0, next_to = 0, named_next_to = 0, named = 0, bad = 0;

	CHECK_STR(strace_syscall_name(1), "write");
	CHECK_STR(strace_syscall_name(231), "exit_group");
	CHECK(strace_syscall_name(-1) == NULL);
	CHECK(strace_syscall_name(100000) == NULL);
	if (!tl_have("objdump"))
		SKIP("no objdump");
	/* "ADDR PREV MOVS...": PREV the N of a mov $N,%eax (xor %eax,%eax:
	 * 0) right before (or -), MOVS every such N since the function's
	 * start, in hex */
	out = tl_run("objdump -d --no-show-raw-insn "
		     "/usr/lib/x86_64-linux-gnu/libc.so.6 | awk '"
		     "/^[0-9a-f]+ <.*>:$/ { prev = \"-\"; movs = \"\"; next } "
		     "/^ *[0-9a-f]+:\\t/ { split($0, f, \"\\t\"); a = f[1]; "
		     "sub(/^ */, \"\", a); sub(/:$/, \"\", a); i = f[2]; "
		     "if (i ~ /^syscall/) { print a, prev, movs; prev = \"-\"; "
		     "next } "
		     "if (i ~ /^mov +[$]0x[0-9a-f]+,%[er]ax$/) { v = i; "
		     "sub(/^mov +[$]0x/, \"\", v); sub(/,.*/, \"\", v); "
		     "prev = v; movs = movs \" \" v } "
		     "else if (i ~ /^xor +%eax,%eax$/) { prev = \"0\"; "
		     "movs = movs \" 0\" } else prev = \"-\" }'");
	REQUIRE(out != NULL);
	REQUIRE(strace_image_new(&o, &img) == 0);
	REQUIRE(tl_map_elf(img, libc, bias) > 0);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		char prev[32], want[40];
		long nr;

		if (sscanf(line, "%llx %31s", &a, prev) != 2)
			continue;
		sites++;
		nr = strace_syscall_nr(img, bias + a);
		if (strcmp(prev, "-")) {
			next_to++;
			if (nr == strtol(prev, NULL, 16))
				named_next_to++;
			else if (nr != -1 && bad++ < 5)
				fprintf(stderr, "  libc %llx: objdump mov $0x%s, "
					"ours %ld\n", a, prev, nr);
		}
		if (nr < 0)
			continue;
		named++;
		snprintf(want, sizeof(want), " %lx ", nr);
		char movs[4096];
		const char *m = strchr(strchr(line, ' ') + 1, ' ');
		snprintf(movs, sizeof(movs), "%s ", m ? m : "");
		if (!strstr(movs, want) && bad++ < 5)
			fprintf(stderr, "  libc %llx: ours %ld, no such mov "
				"before it (objdump:%s)\n", a, nr, movs);
	}
	free(out);
	strace_image_free(img);
	fprintf(stderr, "  libc: %d syscalls, %d right after a mov $N,%%eax "
		"(%d of them named), %d named in all\n", sites, next_to,
		named_next_to, named);
	CHECK_INT(sites, >=, 300);
	CHECK_INT(bad, ==, 0);
	CHECK_INT(named_next_to * 100, >=, next_to * 98);
	CHECK_INT(named, >=, named_next_to);
}
