/* SPDX-License-Identifier: MIT */
/*
 * decoder/demangle.c - symbol names as perf 6.1 prints them.
 *
 * perf demangles every ELF and PLT symbol name when it loads it: C++
 * (libiberty's cplus_demangle with DMGL_NO_OPTS: no parameter list, no
 * return type), else OCaml ("camlFoo__bar_12" -> "Foo.bar_12", "$xx"
 * escapes). The C++ part here uses the C++ runtime's __cxa_demangle and
 * trims what DMGL_NO_OPTS would not print: the parameter list with its
 * qualifiers, and a template function's return type.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "decoder/internal.h"

/* The C++ runtime's demangler (C linkage), from libstdc++ loaded on the
 * first C++ name: a decode whose symbols all come from the persistent
 * cache never needs it, and loading it costs about 0.8 ms. */
static char *(*cxa_demangle)(const char *mangled, char *buf, size_t *len,
			     int *status);
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void cxa_load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (h)
		*(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

static int ocaml(const char *sym, char *out, size_t max)
{
	size_t i = 4, j = 0, len = strlen(sym);

	if (strncmp(sym, "caml", 4) || !isupper((unsigned char)sym[4]))
		return 0;
	while (i < len && j + 1 < max) {
		if (sym[i] == '_' && sym[i + 1] == '_') {
			out[j++] = '.';
			i += 2;
		} else if (sym[i] == '$' && isxdigit((unsigned char)sym[i + 1]) &&
			   isxdigit((unsigned char)sym[i + 2])) {
			out[j++] = (char)(hexval(sym[i + 1]) << 4 |
					  hexval(sym[i + 2]));
			i += 3;
		} else {
			out[j++] = sym[i++];
		}
	}
	out[j] = 0;
	return 1;
}

static int opener(char c)
{
	return c == '<' || c == '(' || c == '[';
}

static int closer(char c)
{
	return c == '>' || c == ')' || c == ']';
}

/* Is s[i] part of an operator name's symbol (the "()" of operator(),
 * the "<" of operator<, the "->" of operator->) rather than a bracket? */
static int in_operator(const char *s, size_t i)
{
	static const char *tok[] = {
		">>=", "<<=", "->*", "<=>", "()", "[]", "<<", ">>", "<=", ">=",
		"==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=",
		"&=", "|=", "^=", "->", "<", ">", "=", "!", "+", "-", "*", "/",
		"%", "^", "&", "|", "~", ",", NULL};
	const char *o = NULL, *q = s;
	size_t p, len = 0;

	while ((q = strstr(q, "operator")) && (size_t)(q - s) + 8 <= i) {
		o = q;
		q += 8;
	}
	if (!o)
		return 0;
	p = (size_t)(o - s) + 8;
	for (int k = 0; tok[k]; k++) {
		size_t n = strlen(tok[k]);
		if (!strncmp(s + p, tok[k], n)) {
			len = n;
			break;
		}
	}
	return i >= p && i < p + len;
}

/* Index of the bracket closing the one at i, or -1. */
static long match(const char *s, size_t i)
{
	int depth = 0;

	for (size_t k = i; s[k]; k++) {
		if (in_operator(s, k))
			continue;
		if (opener(s[k]))
			depth++;
		else if (closer(s[k]) && --depth == 0)
			return (long)k;
	}
	return -1;
}

static int only_qualifiers(const char *s)
{
	static const char *q[] = {" const", " volatile", " &&", " &",
				  " noexcept", " transaction_safe", NULL};
	while (*s) {
		int hit = 0;
		for (int i = 0; q[i]; i++) {
			size_t n = strlen(q[i]);
			if (!strncmp(s, q[i], n)) {
				s += n;
				hit = 1;
				break;
			}
		}
		if (!hit)
			return 0;
	}
	return 1;
}

/* What cplus_demangle(DMGL_NO_OPTS) prints, from __cxa_demangle's text:
 * no parameter list (with its qualifiers), no return type; clone
 * suffixes (" [clone .constprop.0]") stay. */
static void trim_cxx(char *s)
{
	static const char *special[] = {
		"non-virtual thunk to ", "virtual thunk to ",
		"covariant return thunk to ", "typeinfo name for ",
		"typeinfo for ", "construction vtable for ", "vtable for ",
		"VTT for ", "guard variable for ", "TLS init function for ",
		"TLS wrapper function for ", "transaction clone for ",
		"reference temporary #", NULL};
	for (int k = 0; special[k]; k++) {
		size_t n = strlen(special[k]);
		if (!strncmp(s, special[k], n)) {
			/* thunks keep their target's parameters (as
			 * libiberty prints them); data names have none */
			return;
			trim_cxx(s + n);
			return;
		}
	}
	char suffix[256] = "";
	size_t n = strlen(s);
	char *cl;

	/* trailing clone suffixes */
	while (n && s[n - 1] == ']' && (cl = strstr(s, " [clone ")) &&
	       strlen(suffix) + strlen(cl) < sizeof(suffix)) {
		char tmp[256];
		size_t a = strlen(cl), b = strlen(suffix);
		memcpy(tmp, cl, a);
		memcpy(tmp + a, suffix, b + 1);
		memcpy(suffix, tmp, a + b + 1);
		*cl = 0;
		n = strlen(s);
	}
	/* the parameter list: a top-level "(...)" followed only by
	 * qualifiers */
	{
		int depth = 0;
		long open = -1;
		for (size_t i = 0; i < n; i++) {
			if (in_operator(s, i))
				continue;
			if (opener(s[i])) {
				if (depth == 0 && s[i] == '(' && i > 0) {
					long m = match(s, i);
					if (m > 0 && only_qualifiers(s + m + 1))
						open = (long)i;
				}
				depth++;
			} else if (closer(s[i]) && depth) {
				depth--;
			}
		}
		if (open > 0) {
			s[open] = 0;
			n = (size_t)open;
		}
	}
	/* a return type: text before the last top-level space, unless that
	 * space is inside an operator name ("operator new") */
	{
		int depth = 0;
		long sp = -1;
		for (size_t i = 0; i < n; i++) {
			if (in_operator(s, i))
				continue;
			if (opener(s[i]))
				depth++;
			else if (closer(s[i]) && depth)
				depth--;
			else if (s[i] == ' ' && depth == 0)
				sp = (long)i;
		}
		if (sp > 0) {
			/* the return type ends before the name; a space
			 * after "operator" belongs to the name */
			const char *op = strstr(s, "operator");
			if (op && op < s + sp) {
				long k = (long)(op - s);
				sp = -1;
				depth = 0;
				for (long i = 0; i < k; i++) {
					if (opener(s[i]))
						depth++;
					else if (closer(s[i]) && depth)
						depth--;
					else if (s[i] == ' ' && depth == 0)
						sp = i;
				}
			}
			if (sp > 0)
				memmove(s, s + sp + 1, n - (size_t)sp);
		}
	}
	strcat(s, suffix);
}

const char *strace_demangle(const char *sym, char *buf, size_t max)
{
	if (sym[0] == '_' && sym[1] == 'Z') {
		int status = 0;
		char *d;
		pthread_once(&cxa_once, cxa_load);
		/* without the runtime: the name as it is */
		d = cxa_demangle ? cxa_demangle(sym, NULL, NULL, &status)
				 : NULL;
		if (d && !status) {
			size_t n = strlen(d);
			if (n < max) {
				memcpy(buf, d, n + 1);
				free(d);
				trim_cxx(buf);
				return buf;
			}
		}
		free(d);
	}
	if (ocaml(sym, buf, max))
		return buf;
	return sym;
}
