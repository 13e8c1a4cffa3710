/* SPDX-License-Identifier: MIT */
/*
 * strace/internal/grow.h - the one way an array grows here (as libbpf's
 * libbpf_ensure_mem()): the project's own, for every folder, not
 * installed (make install copies the headers of include/strace/ only).
 */
#ifndef STRACE_INTERNAL_GROW_H
#define STRACE_INTERNAL_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * strace_grow() - v (NULL or from malloc) reallocated to hold twice *cap
 * elements of elem bytes, first when *cap is 0; *cap updated. For the
 * caller whose array is full: `if (n == cap && !(p = strace_grow(...)))`.
 * Returns the new array, or NULL (out of memory, or a size that does not
 * fit in size_t), v and *cap then as they were.
 */
static inline void *strace_grow(void *v, size_t *cap, size_t elem,
				size_t first)
{
	size_t nc = *cap ? *cap * 2 : first;
	void *nv;

	if (nc <= *cap || !elem || nc > SIZE_MAX / elem)
		return NULL;
	nv = realloc(v, nc * elem);
	if (nv)
		*cap = nc;
	return nv;
}

#endif
