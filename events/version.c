/* SPDX-License-Identifier: MIT */
/* events/version.c - the library's version (strace/version.h). */
#include "strace/version.h"

const char *strace_version(void)
{
	return STRACE_VERSION;
}

unsigned strace_version_number(void)
{
	return STRACE_VERSION_NUMBER;
}
