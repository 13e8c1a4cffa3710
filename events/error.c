/* SPDX-License-Identifier: MIT */
/* events/error.c - texts and names of the one error space (error.h). */
#include <string.h>

#include "strace/error.h"

struct err_entry {
	int code;
	const char *name, *text;
};

static const struct err_entry errors[] = {
#define X(ID, VAL, NAME, TEXT) {VAL, NAME, TEXT},
	STRACE_ERRORS(X)
#undef X
};

static const struct err_entry *find(int err)
{
	if (err < 0)
		err = -err;
	/* a few dozen codes, looked up when something failed */
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == err)
			return &errors[i];
	return NULL;
}

const char *strace_strerror(int err)
{
	const struct err_entry *e = find(err);

	if (e)
		return e->text;
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	if (err > STRACE_E_BASE)
		return "unknown error";
	return strerror(err);
}

const char *strace_error_name(int err)
{
	const struct err_entry *e = find(err);

	return e ? e->name : NULL;
}
