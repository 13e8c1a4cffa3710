/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_decoder_demangle.c - symbol names as perf 6.1 prints
 * them (decoder/demangle.c, strace_demangle() in decoder/internal.h)
 * alone.
 *
 * The oracle: `c++filt -p` run at test time over every C++ name that
 * libstdc++ exports. -p is libiberty's cplus_demangle without
 * DMGL_PARAMS, which prints neither the parameter list nor the return
 * type, as perf's DMGL_NO_OPTS; c++filt also sets DMGL_VERBOSE, which
 * spells out the standard abbreviations (Ss: "std::string") and puts a
 * space between two closing '>': both sides are compared with those
 * undone. Fixed answers (libiberty's rules, and OCaml's by perf's
 * ocaml_demangle()) for the rest, and what is not mangled or does not
 * demangle given back as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "decoder_testlib.h"
#include "decoder/internal.h"

#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

/* s with DMGL_VERBOSE's spellings undone, in place */
static void plain(char *s)
{
	static const char *const verbose[][2] = {
		{"std::basic_string<char, std::char_traits<char>, "
		 "std::allocator<char> >",
		 "std::string"},
		{"std::basic_istream<char, std::char_traits<char> >",
		 "std::istream"},
		{"std::basic_ostream<char, std::char_traits<char> >",
		 "std::ostream"},
		{"std::basic_iostream<char, std::char_traits<char> >",
		 "std::iostream"},
		{" >", ">"},
	};
	char *p;

	for (size_t k = 0; k < sizeof(verbose) / sizeof(verbose[0]); k++) {
		size_t a = strlen(verbose[k][0]), b = strlen(verbose[k][1]);
		while ((p = strstr(s, verbose[k][0]))) {
			memcpy(p, verbose[k][1], b);
			memmove(p + b, p + a, strlen(p + a) + 1);
		}
	}
}

/* Every C++ name libstdc++ exports: ours against c++filt -p's. */
TEST(cxx_against_cxxfilt)
{
	char cmd[1024], list[600], *names, *filt, *m, *f, *mnext, *fnext;
	char ours[8192], theirs[8192];
	int n = 0, bad = 0;

	if (!tl_have("c++filt") || !tl_have("nm") || access(LIBSTDCXX, R_OK))
		SKIP("no c++filt, nm or libstdc++");
	snprintf(list, sizeof(list), "%s/mangled", tl_tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "nm -D --defined-only %s | awk '$3 ~ /^_Z/ "
		 "{ sub(/@.*/, \"\", $3); print $3 }' | sort -u > %s",
		 LIBSTDCXX, list);
	REQUIRE(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "cat %s", list);
	names = tl_run(cmd);
	snprintf(cmd, sizeof(cmd), "c++filt -p < %s", list);
	filt = tl_run(cmd);
	REQUIRE(names && filt);
	for (m = names, f = filt; *m && *f; m = mnext, f = fnext) {
		const char *d;
		mnext = strchr(m, '\n');
		fnext = strchr(f, '\n');
		REQUIRE(mnext && fnext);
		*mnext++ = 0;
		*fnext++ = 0;
		d = strace_demangle(m, ours, sizeof(ours));
		REQUIRE(strlen(d) < sizeof(ours) && strlen(f) < sizeof(theirs));
		memmove(ours, d, strlen(d) + 1);
		strcpy(theirs, f);
		plain(ours);
		plain(theirs);
		n++;
		if (strcmp(ours, theirs)) {
			if (bad++ < 10)
				fprintf(stderr, "  %s\n    ours:     %s\n"
						"    c++filt:  %s\n",
					m, ours, theirs);
		}
	}
	CHECK(!*m && !*f);
	printf("  %d libstdc++ names against c++filt -p\n", n);
	CHECK_INT(n, >, 1000);
	CHECK_INT(bad, ==, 0);
	free(names);
	free(filt);
	unlink(list);
}

/* Fixed answers, each also what `c++filt -p` prints: no parameters, no
 * return type, qualifiers gone with the parameters, operators kept
 * whole, thunks' parameters kept (as libiberty prints them). Not here:
 * a clone suffix (".constprop.0"), which demangle.c keeps
 * (" [clone .constprop.0]") where perf 6.1's perf script and c++filt -p
 * print the name alone. */
TEST(cxx_fixed)
{
	static const char *const want[][2] = {
		{"_Z3fooi", "foo"},
		{"_ZN2ns1C3getEv", "ns::C::get"},
		{"_ZNK2ns1C3getEv", "ns::C::get"},
		{"_ZN2ns1CclEi", "ns::C::operator()"},
		{"_ZN2ns1CltERKS0_", "ns::C::operator<"},
		{"_ZN2ns1CptEv", "ns::C::operator->"},
		{"_ZN2ns1CnwEm", "ns::C::operator new"},
		{"_Z3maxIiET_S0_S0_", "max<int>"},
		{"_ZThn8_N2ns1C3getEv", "non-virtual thunk to ns::C::get()"},
		{"_ZTV1C", "vtable for C"},
		{"_ZTI1C", "typeinfo for C"},
		{"_ZN1AIiE1fIcEEvT_", "A<int>::f<char>"},
	};
	char buf[256];

	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		CHECK_STR(strace_demangle(want[k][0], buf, sizeof(buf)),
			  want[k][1]);
}

/* OCaml, as perf's ocaml_demangle(): "caml" and a capital, "__" a dot,
 * "$xx" a byte. */
TEST(ocaml)
{
	char buf[256];

	CHECK_STR(strace_demangle("camlFoo__bar_12", buf, sizeof(buf)),
		  "Foo.bar_12");
	CHECK_STR(strace_demangle("camlStdlib__List__map_123", buf,
				  sizeof(buf)),
		  "Stdlib.List.map_123");
	CHECK_STR(strace_demangle("camlFoo__$3e$3e$3d_7", buf, sizeof(buf)),
		  "Foo.>>=_7");
	/* a '$' not followed by two hex digits stays */
	CHECK_STR(strace_demangle("camlFoo$zz", buf, sizeof(buf)),
		  "Foo$zz");
}

/* Not mangled, or not a valid mangling: the name itself (the same
 * pointer); a demangled name that does not fit: the name itself. */
TEST(refused)
{
	static const char *const as_is[] = {
		"main", "_start", "_Z", "_Zxyz", "_ZN3foo", "camlfoo",
		"caml", "_Z3foov_junk(", "",
	};
	char buf[256];

	for (size_t k = 0; k < sizeof(as_is) / sizeof(as_is[0]); k++)
		CHECK(strace_demangle(as_is[k], buf, sizeof(buf)) == as_is[k]);
	CHECK_STR(strace_demangle("_ZN2ns1C3getEv", buf, sizeof(buf)),
		  "ns::C::get");
	{
		const char *s = "_ZN2ns1C3getEv";
		/* "ns::C::get()" is 12 bytes and its NUL */
		CHECK(strace_demangle(s, buf, 12) == s);
		CHECK_STR(strace_demangle(s, buf, 13), "ns::C::get");
	}
}

RUN_TESTS("test_decoder_demangle")
