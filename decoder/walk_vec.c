/* SPDX-License-Identifier: MIT */
/*
 * decoder/walk_vec.c - the packet loop (loop.h) of a parallel decode's
 * workers: their events go straight to a segment's vector (segment.h).
 */
#define WALK_VEC 1
#include "decoder/loop.h"

int strace_dec_run_vec(struct strace_walker *w)
{
	return run(w);
}
