/* SPDX-License-Identifier: MIT */
/*
 * strace/version.h - the toolkit's version.
 *
 * The one place the version is written: the Makefile reads it from here
 * for the library's file name, the man pages, libstrace.pc and the
 * commands' --version. STRACE_VERSION is the version of the headers a
 * program was built with; strace_version() that of the library it runs
 * with (a program may compare the two).
 *
 * This header depends on nothing and is safe to include from C++.
 */
#ifndef STRACE_VERSION_H
#define STRACE_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define STRACE_VERSION_MAJOR 0
#define STRACE_VERSION_MINOR 2
#define STRACE_VERSION_PATCH 0
#define STRACE_VERSION "0.2.0"

/* MAJOR, MINOR, PATCH as one comparable number: 0x00MMmmpp */
#define STRACE_VERSION_NUMBER                                                  \
	((STRACE_VERSION_MAJOR << 16) | (STRACE_VERSION_MINOR << 8) |          \
	 STRACE_VERSION_PATCH)

/*
 * strace_version() - the library's version string ("0.1.0"), static.
 * strace_version_number() - the same as STRACE_VERSION_NUMBER does.
 * Programs built against one major version run with any library of that
 * major version and at least their minor version.
 */
const char *strace_version(void);
unsigned strace_version_number(void);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_VERSION_H */
