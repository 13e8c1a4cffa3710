/* SPDX-License-Identifier: MIT */
/*
 * events/ring_msg.c - the messages every producer of a ring says alike
 * (ptrace-capture, ptrace-read's generate, the dlfilter): where the ring
 * is and what it holds, and why a lossless writer waits. Formatted into
 * the caller's buffer: a library never prints.
 */
#include <stdio.h>

#include "strace/ring.h"

int strace_ring_describe(const char *path, char *buf, size_t len)
{
	struct strace_ring_entry e;
	int rc = strace_ring_inspect(path, &e);

	if (rc < 0)
		return rc;
	return snprintf(buf, len,
			"ring: %s (%.1f MB %s; read it with 'ptrace-read RING', "
			"remove it with rm%s once done)",
			path, (double)e.mem_bytes / 1e6,
			e.in_memory ? "in memory" : "on disk",
			e.default_name ? " or 'ptrace-read --gc'" : "");
}

int strace_ring_wait_message(char *buf, size_t len, const char *path,
			     const struct strace_ring_wait *w,
			     const struct strace_ring_wait_words *words)
{
	if (w->readers < (uint32_t)words->held)
		return snprintf(buf, len,
				"%s: the lossless ring is full and %u of the "
				"%d readers of %s have attached: %s for the "
				"rest (attach them with 'ptrace-read --follow "
				"%s')",
				path, w->readers, words->held, words->held_opt,
				words->waits, path);
	if (!w->readers)
		return snprintf(buf, len,
				"%s: the lossless ring is full and no reader "
				"has attached: %s for one (attach it with "
				"'ptrace-read --follow %s'; to not wait, %s)",
				path, words->waits, path, words->no_reader);
	return snprintf(buf, len,
			"%s: the lossless ring is full: %s for the slowest "
			"reader (pid %u) to read on%s%s%s (%s)",
			path, words->waits, w->reader_pid,
			words->every ? "; a lossless " : "",
			words->every ? words->every : "",
			words->every ? " waits for every reader" : "",
			words->slowest);
}
