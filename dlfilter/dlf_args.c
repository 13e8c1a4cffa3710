/* SPDX-License-Identifier: MIT */
/*
 * dlfilter/dlf_args.c - the dlfilter's arguments (--dlarg KEY[=VALUE],
 * see dlf.h), parsed once when perf loads it: apart from dlf.c, whose
 * per-sample path stays in one translation unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlf.h"

int strace_dlf_parse_args(struct strace_dlf_opts *o, int argc,
			  const char *const *argv, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->mode = STRACE_RING_ARCHIVE;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = strchr(a, '=');
		size_t klen = v ? (size_t)(v - a) : strlen(a);
		if (v)
			v++;
#define KEY(k) (klen == sizeof(k) - 1 && memcmp(a, k, klen) == 0)
		if (KEY("ring") && v && *v) {
			o->ring_path = v;
		} else if (KEY("mode") && v) {
			if (!strcmp(v, "lossless"))
				o->mode = STRACE_RING_LOSSLESS;
			else if (!strcmp(v, "flight"))
				o->mode = STRACE_RING_FLIGHT;
			else if (!strcmp(v, "archive"))
				o->mode = STRACE_RING_ARCHIVE;
			else {
				snprintf(err, errlen,
					 "mode=%s: expected lossless, flight "
					 "or archive",
					 v);
				return -EINVAL;
			}
		} else if (KEY("capacity") && v) {
			char *end;
			unsigned long long c = strtoull(v, &end, 0);
			if (*end || c < STRACE_RING_MIN_CAPACITY ||
			    c > (1ull << 36) || (c & (c - 1))) {
				snprintf(err, errlen,
					 "capacity=%s: expected a power of two "
					 "from %d to 2^36 events",
					 v, STRACE_RING_MIN_CAPACITY);
				return -EINVAL;
			}
			o->capacity = c;
		} else if (KEY("types") && v) {
			const char *bad;
			size_t bad_len;
			if (strace_typeset_parse(&o->types, v, &bad,
						 &bad_len) < 0) {
				snprintf(err, errlen,
					 "types=%s: '%.*s' matches no event "
					 "type",
					 v, (int)bad_len, bad);
				return -EINVAL;
			}
			o->has_types = 1;
		} else if (KEY("all-branches") && !v) {
			o->all_branches = 1;
		} else if (KEY("print") && !v) {
			o->print = 1;
		} else if (KEY("late") && !v) {
			o->late = 1;
		} else if (KEY("stats") && !v) {
			o->stats = 1;
		} else if (KEY("no-check") && !v) {
			o->no_check = 1;
		} else if (KEY("exact-times") && !v) {
			o->exact_times = 1;
		} else if (KEY("no-cache") && !v) {
			o->no_cache = 1;
		} else if (KEY("names") && v &&
			   (!strcmp(v, "plain") || !strcmp(v, "perf"))) {
			o->perf_names = !strcmp(v, "perf");
		} else if (KEY("plugin") && v && *v) {
			if (o->nplugins == (int)(sizeof(o->plugins) /
						 sizeof(o->plugins[0]))) {
				snprintf(err, errlen, "at most %zu plugins",
					 sizeof(o->plugins) /
						 sizeof(o->plugins[0]));
				return -EINVAL;
			}
			o->plugins[o->nplugins++] = v;
		} else {
			snprintf(err, errlen,
				 "unknown argument '%s' (expected ring=PATH, "
				 "mode=lossless|flight|archive, capacity=N, "
				 "all-branches, types=PATTERNS, print, late, "
				 "stats, no-check, exact-times, "
				 "plugin=FILE.so[:ARGS], no-cache, "
				 "names=plain|perf)",
				 a);
			return -EINVAL;
		}
#undef KEY
	}
	return 0;
}
