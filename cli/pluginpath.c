/* SPDX-License-Identifier: MIT */
/*
 * cli/pluginpath.c - --plugin NAME beside the commands (pluginpath.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pluginpath.h"

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *plugin_spec_find(const char *spec, char *buf, size_t len)
{
	static const char *const dirs[] = {"/../lib/strace/plugins",
					   "/../plugins"};
	static const char *const ext[] = {"", ".so"};
	const char *colon = strchr(spec, ':');
	size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
	char exe[PATH_MAX], file[NAME_MAX + 1];
	ssize_t n;
	char *slash;

	if (memchr(spec, '/', flen) || !flen || flen > NAME_MAX - 3)
		return spec;
	memcpy(file, spec, flen);
	file[flen] = '\0';
	/* dlopen looks a name without '/' up in the library path, never
	 * in the current directory: "./" makes it the file here */
	if (is_file(file))
		return snprintf(buf, len, "./%s", spec) < (int)len ? buf : spec;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return spec;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return spec;
	*slash = '\0';
	for (size_t d = 0; d < 2; d++)
		for (size_t e = 0; e < 2; e++) {
			int w = snprintf(buf, len, "%s%s/%s%s", exe, dirs[d],
					 file, ext[e]);
			if (w < 0 || (size_t)w >= len || !is_file(buf))
				continue;
			if (colon &&
			    snprintf(buf + w, len - (size_t)w, "%s", colon) >=
				    (int)(len - (size_t)w))
				return spec;
			return buf;
		}
	return spec;
}
