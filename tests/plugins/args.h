/* SPDX-License-Identifier: MIT */
/*
 * tests/plugins/args.h - the example plugins' arguments: "key=value"
 * words, as "--plugin FILE.so:sym=cmp,out=FILE" gives them.
 */
#ifndef PLUGIN_ARGS_H
#define PLUGIN_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The value of key in argv[1..argc), or def. */
static inline const char *arg_get(int argc, char **argv, const char *key,
				  const char *def)
{
	size_t n = strlen(key);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

/* out=FILE, else stdout; NULL (and a message) when it cannot be opened. */
static inline FILE *arg_out(int argc, char **argv, const char *name)
{
	const char *path = arg_get(argc, argv, "out", NULL);
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f)
		fprintf(stderr, "%s: cannot write %s: %s\n", name, path,
			strerror(errno));
	return f;
}

#endif /* PLUGIN_ARGS_H */
