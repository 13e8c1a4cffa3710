/* SPDX-License-Identifier: MIT */
/*
 * decoder/summary.h - the block summarizer's helpers for the image
 * (summary.c); strace_block_decode() itself is in decoder.h.
 */
#ifndef DECODER_SUMMARY_H
#define DECODER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

/*
 * strace_dec_newer_branch() - a branch newer than Capstone 4, by its
 * bytes (libipt HEAD's pt_ild.c classifies them so): APX's JMPABS, a
 * TIP-resolved jump here as libipt takes it; FRED's ERETS and ERETU
 * (Capstone 4 reads them as CLAC) and UIRET (which it rejects): far
 * returns. code: the instruction's bytes, left of them readable.
 * Returns the block kind and its length in *len, or STRACE_BK_NONE when
 * it is none of them.
 */
int strace_dec_newer_branch(const uint8_t *code, size_t left, int *len);

#endif
