/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/ctxcut.h - cut one CPU's PT stream where it moves from one
 * process image to another (a context switch to another process, an
 * exec), so that each piece is decoded against its own image.
 *
 * A walker reads one image per decode call (its block caches are keyed by
 * address), and the hardware puts no PSB at a context switch. In a
 * user-only trace, though, every switch goes through the kernel: the old
 * process's trace ends with a TIP.PGD and the new one's begins with a
 * TIP.PGE (or a PSB+). So a piece for the new image is the CPU's stream
 * from the last PSB before the cut, with every packet before the cut that
 * is not a timing packet (TSC, TMA, MTC, CYC, CBR), a PSB, a PSBEND or a
 * MODE inside PSB+ made PAD (the walker syncs there, disabled, with the right time), then the
 * bytes from the cut on, the first TIP.PGE rewritten with a full IP (its
 * compressed IP was relative to the old process's last IP).
 *
 * The scan is packet-level only (libipt's packet decoder): no code is
 * read. Times are the walker's: TSC, TMA and MTC, converted to perf time.
 */
#ifndef PT_BACKEND_PIPELINE_CTXCUT_H
#define PT_BACKEND_PIPELINE_CTXCUT_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/decoder.h"

#define STRACE_CTX_NONE UINT64_MAX

/* Where a process's trace may begin: a TIP.PGE, or a PSB. */
struct strace_ctx_point {
	uint64_t off;  /* offset of the packet (PSB or TIP.PGE) */
	uint64_t end;  /* end of the TIP.PGE; PSB: off */
	uint64_t time; /* perf time there (TSC without a conversion) */
	uint64_t ip;   /* TIP.PGE: the full target */
	uint64_t pgd;  /* end of the last TIP.PGD before it, or NONE */
	uint64_t psb;  /* offset of the last PSB before it, or NONE */
	int is_psb;
};

/*
 * strace_ctx_scan() - the points of buf (one contiguous stream), in
 * order, into *out (malloc'd, the caller frees) and *n. A packet that does
 * not decode ends the scan (what follows is still decoded by the walker;
 * it cannot be cut). Returns 0, -ENOMEM.
 */
int strace_ctx_scan(const uint8_t *buf, size_t len,
		    const struct strace_time_conv *tc, int has_time,
		    struct strace_ctx_point **out, size_t *n);

/*
 * strace_ctx_splice() - the piece [from, to) of buf for a decoder that
 * must not see what comes before from: when from is neither 0 nor a PSB
 * (psb: the last PSB before from, or NONE) the neutralised bytes
 * [psb, from) come first, and the TIP.PGE at [pge_off, pge_end) (inside
 * [from, to); pge_off NONE: none) is rewritten to carry pge_ip whole.
 * *out is malloc'd (the caller frees), *olen its length. Returns 0,
 * -ENOMEM.
 */
int strace_ctx_splice(const uint8_t *buf, size_t len, uint64_t psb,
		      uint64_t from, uint64_t to, uint64_t pge_off,
		      uint64_t pge_end, uint64_t pge_ip, uint8_t **out,
		      size_t *olen);

#endif /* PT_BACKEND_PIPELINE_CTXCUT_H */
