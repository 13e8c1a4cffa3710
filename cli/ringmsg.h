/* SPDX-License-Identifier: MIT */
/*
 * cli/ringmsg.h - what the commands say when a ring file cannot be made
 * or written: the path, where it came from (an option, $STRACE_RING or
 * the default), what went wrong and what to do. Shared by ptrace-capture
 * and ptrace-read.
 */
#ifndef CLI_RINGMSG_H
#define CLI_RINGMSG_H

#include "strace/ring.h"

/*
 * ringmsg_create() - strace_ring_create() at path, or (path NULL) at
 * $STRACE_RING or the default path; on failure, prints on stderr, after
 * "prog: ", what went wrong and what to do, opt naming the option that
 * gives a path ("-o"). Returns strace_ring_create()'s result.
 */
int ringmsg_create(const char *prog, const char *path, const char *opt,
		   const struct strace_ring_opts *ro, struct strace_ring **out);

/*
 * ringmsg_write_error() - say that writing the ring at path failed with
 * err (-ENOSPC, -EDQUOT, -EFBIG, ...), and what to do; grow_hint, when
 * not NULL, is one more way out ("or a smaller --capacity").
 */
void ringmsg_write_error(const char *prog, const char *path, int err,
			 const char *opt, const char *grow_hint);

#endif /* CLI_RINGMSG_H */
