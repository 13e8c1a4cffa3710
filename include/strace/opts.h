/* SPDX-License-Identifier: MIT */
/*
 * strace/opts.h - the one rule for options structs (libbpf's OPTS idea).
 *
 * Every options struct that crosses a library boundary (libstrace's, the
 * decoder's image and walker options, the dlfilter core's, the raw-PT
 * pipeline's) begins with `size_t size`, which the caller sets to sizeof
 * the struct it was built with (the capture pipeline's own offline, live
 * and PMU structs are filled in by ptrace-capture, built with them, and
 * have no size):
 *
 *   - a caller built against older headers passes a smaller struct: the
 *     library takes the fields that fit and the defaults (0) for the rest;
 *   - a caller built against newer headers passes a bigger struct: the
 *     library accepts it when every byte past what it knows is 0, and
 *     refuses it (-STRACE_E_BADARG) otherwise: the caller asks for
 *     something this library cannot do.
 *
 * A library function loads a caller's options with strace_opts_load()
 * and reads only its own copy.
 *
 * This header depends on libc only and is safe to include from C++.
 */
#ifndef STRACE_OPTS_H
#define STRACE_OPTS_H

#include <stddef.h>
#include <string.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Inlined into a caller that passes an older, smaller struct, gcc sees
 * the loop over the bytes past dst_size reach beyond that struct and
 * warns (-Warray-bounds), not proving that the size read at run time
 * keeps the loop from running. The loop reads only within src's size.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

/*
 * strace_opts_load() - copy the caller's options src (NULL: all
 * defaults) into dst, which has dst_size bytes (sizeof the library's
 * struct), by the rule above; dst->size becomes dst_size.
 * Returns 0.
 * Returns -STRACE_E_BADARG if src's size is smaller than its size field,
 * or if src is bigger than dst and a byte past dst_size is not 0.
 */
static inline int strace_opts_load(void *dst, size_t dst_size,
				   const void *src)
{
	size_t n;

	memset(dst, 0, dst_size);
	if (src) {
		memcpy(&n, src, sizeof(n));
		if (n < sizeof(size_t))
			return -STRACE_E_BADARG;
		for (size_t i = dst_size; i < n; i++)
			if (((const unsigned char *)src)[i])
				return -STRACE_E_BADARG;
		memcpy(dst, src, n < dst_size ? n : dst_size);
	}
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* STRACE_OPTS_H */
