/* SPDX-License-Identifier: MIT */
/*
 * decoder/perfsym.h - perf's rules for naming, shared by perfsym.c (perf
 * 6.1's tree) and symbols.c (the image's own table); perf's
 * choose_best_symbol() itself is strace_dec_perf_choose_best()
 * (internal.h).
 */
#ifndef DECODER_PERFSYM_H
#define DECODER_PERFSYM_H

/* strace_dec_prefix_underscores() - the underscores s starts with. */
int strace_dec_prefix_underscores(const char *s);

#endif
