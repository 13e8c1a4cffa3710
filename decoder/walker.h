/* SPDX-License-Identifier: MIT */
/*
 * decoder/walker.h - struct strace_walker: the fast walker's state, one
 * sub-struct per concern. Not installed.
 *
 *   in    the stream being decoded: bytes, position, last IP (packet.h)
 *   flow  where the walk stands and what the trace has announced
 *         (flow.h, flow.c)
 *   time  the TSC estimate and event times (timing.h)
 *   out   events handed to the sink (emit.h), through the spreader
 *         (spread.h) or into a segment's vector (evvec.h); the sink's
 *         error
 *   blk   block summaries: the shared cache and an L0 copy (flow.h)
 *   tnt   the cache of TNT runs and the record being made (tnt_cache.h)
 *   seg   what a decode notes for the segment merge (struct seg_notes;
 *         the merge is segment.h's, above the walker)
 *   pebs  the PEBS-via-PT record being read (flow.c)
 *   stream  the streaming decode's state (stream.c)
 *
 * Threading: a walker belongs to one thread at a time.
 */
#ifndef DECODER_WALKER_H
#define DECODER_WALKER_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/decoder.h"
#include "decoder/emit.h"
#include "decoder/evvec.h"
#include "decoder/spread.h"
#include "decoder/timing.h"
#include "decoder/tnt_cache.h"

/* What a walker notes, during one decode call, for the merge. */
struct seg_notes {
	long first_idx;       /* index of the first begin's events, or -1 */
	int first_n;          /* how many events that begin emitted */
	uint64_t first_ip;
	uint64_t first_off;   /* where in the trace it came */
	int first_from_psb0;  /* it came from the segment's first PSB+ FUP */
	int err_before, ovf_before; /* an error, an overflow before it */
	uint64_t ovf_before_off;
	int ovf_at_end;       /* the decode told a pending overflow at its
			       * end */
	unsigned psbs;        /* PSBs seen in this decode call */
	size_t fup_at;        /* offset of the next segment's PSB+ FUP */
	uint16_t adv_mark;    /* SEG_F_ADV in a segment's walker, else 0 */
};

#define L0_SIZE 1024 /* blocks kept in the walker itself (40 KiB) */
#define JSAME_LOG 8  /* indirect jumps remembered (6 KiB) */

struct pt_packet_decoder;
struct walk_stream;

/* The stream being decoded (one decode call). */
struct walk_input {
	const uint8_t *buf;
	size_t len;
	size_t all;      /* bytes in buf (len: where this decode stops) */
	size_t pos;      /* offset of the packet being handled */
	struct pt_packet_decoder *pkt; /* libipt's, over buf */
	uint64_t last_ip; /* for IP decompression; 0 at a PSB */
	size_t prog_at;  /* where o.progress was last told */
	int ip_synced;   /* the walk resumed at an IP packet (walk.c) and
			  * has met no PSB since */
};

/* Where the walk stands, and what the trace said that is still to come. */
struct walk_flow {
	uint64_t ip;
	int have_ip;
	int enabled;
	int in_psb;
	int psb_fup; /* a FUP was seen in this PSB+ */
	int psb_synced; /* this PSB+ came while the walk was in sync */
	struct strace_block park; /* the block we stand at (kind needs a
				   * packet), valid when parked */
	int parked;
	uint64_t loop_noted; /* advance()'s address noted at a power of two
			      * of blocks (flow.h, LOOP_CHECK_AFTER) */
	struct retstack rs;
	int pending_fup;
	uint64_t fup_ip;
	int fup_binds;     /* the next FUP only says where the walk is: it
			    * binds to a MODE.TSX, PTW or EXSTOP (not an
			    * asynchronous branch) */
	int tsx_abort;     /* ... and that MODE.TSX was an abort */
	int in_tsx;        /* in a transaction (MODE.TSX InTX) */
	int pending_abort; /* the pending FUP is a TSX abort's */
	int pending_mode;  /* a MODE.Exec outside a PSB+ waits for the
			    * TIP, TIP.PGE or TIP.PGD it binds to */
	unsigned mode;      /* the code's (enum strace_code_mode): set by
			     * set_mode() with blk.key_tag */
	unsigned next_mode; /* the pending MODE.Exec's */
	int bep_fup;       /* the next FUP says where a PEBS record was
			    * taken (a BEP with its IP bit before it) */
	int ptw_fup;       /* the next FUP says where the ptwrite of
			    * ptw_payload ran (a PTW with its IP bit right
			    * before it; STRACE_WALK_PTWRITE) */
	unsigned ptw_size; /* its payload's bytes (4, 8) */
	uint64_t ptw_payload;
	int fup_event;     /* the next FUP says where an event packet
			    * happened (a CFE or TRIG with its IP bit, a
			    * MODE.Exec): a location, also while tracing
			    * is off (libipt HEAD's evb_fup_bound) */
	unsigned evd;      /* EVD packets waiting for their CFE
			    * (flow.c's EVD_*) */
	unsigned errata;   /* STRACE_ERRATUM_* of the trace's processor */
	/* a deferred TIP: TNT bits for the branches after the indirect one
	 * that waits for its TIP (SDM: TNT may precede a deferred TIP) */
	uint64_t dtnt_bits;
	int dtnt_n;
	int deferring; /* tnt_bit() stopped at an indirect branch */
	uint64_t last_direct; /* the last direct branch of an advance, 0:
			       * none (SKL014) */
	int in_adv;          /* emitting the direct branches of an advance */
	int pending_syscall; /* last disable was at a syscall */
	int pending_ovf;
	uint64_t ovf_offset;
	int begin_reason; /* reason for the next trace_begin */
	int psb_off;      /* a PSB+ without FUP said tracing is off, and
			   * it has not begun since (nor was sync lost) */
};

/* Where events go (walk_out.to): the sink as it is; through the
 * spreader (times between timing packets, decoder.h); a segment's vector,
 * with the instruction counts the merge spreads by (segment.h). */
enum walk_out_to { OUT_SINK, OUT_SPREAD, OUT_VEC };

/* Events handed to the sink. */
struct walk_out {
	long events;
	int sink_err;
	enum walk_out_to to;
	struct strace_dec_spread sp;
	uint64_t anchor_t; /* the last time told to the spreader (or the
			    * vector) as a time point */
	int filter;        /* some types are not made: those not in keep
			    * (strace_walk_opts.types) */
	struct strace_typeset keep;
};

/* Block summaries: the shared cache, and a direct-mapped copy of the
 * hottest, checked first (loops hit a handful of blocks). */
struct walk_blocks {
	struct strace_bcache *cache;
	int own_cache;
	uint64_t l0_gen; /* the image generation the copy is of */
	uint64_t key_tag; /* the code mode's bits of a block's key
			   * (strace_mode_key()): 0 for 64-bit code */
	struct {
		uint64_t ip; /* the key (ip | key_tag); empty: one of
			      * another slot (walk.c) */
		struct strace_block b;
	} l0[L0_SIZE];
	struct jump_memo jsame[1u << JSAME_LOG]; /* indirect jumps (emit.h);
						    * of l0's generation */
};

/*
 * TNT bits not walked yet (libxdc's lazy walk): the bits of the TNT
 * packets since the last other packet, walked a record's worth at a time
 * (TC_BITS), and all of them before any other packet (flow.h,
 * tnt_take()). Nothing but a TNT packet comes between them, so the time
 * of all of them is the same, and walking them together is walking them
 * one packet after the other: only the offset an error reports, and
 * where a deferred TIP's bits end, are the packet's own (pos, end).
 */
#define TNTQ_PACKETS 64 /* packets of 1 bit or more in 64 bits */
struct walk_tntq {
	uint64_t bits;  /* the low n, the first the highest */
	unsigned n;
	unsigned np;    /* packets */
	unsigned done;  /* bits walked by the tnt_run() under way */
	uint8_t end[TNTQ_PACKETS]; /* a packet's last bit + 1 */
	size_t pos[TNTQ_PACKETS];  /* its offset */
};

/* The cache of TNT runs (allocated at the first TNT packet), and the run
 * being recorded into it, if any. shared: tc is another walker's on the
 * same thread (a streamed decode's inner walker uses its caller's). */
struct walk_tnt {
	struct tcache *tc;
	struct tc_rec *rec;
	int shared;
	struct walk_tntq q;
};

/* The PEBS-via-PT record being read: its blocks' items, kept for the
 * pebs and pebs_item events (STRACE_WALK_PEBS) up to PEBS_ITEMS of them
 * (a record has at most 7 blocks of 32). */
#define PEBS_ITEMS 64
struct walk_pebs {
	int open;      /* a BBP opened a record, no BEP closed it yet */
	unsigned type; /* the type of the block being read */
	unsigned n;    /* items kept */
	uint16_t key[PEBS_ITEMS]; /* (block type << 8) | item id */
	uint64_t val[PEBS_ITEMS];
};

#define COV_SEEN_BITS 12 /* strace_walker's cov_seen: 4096 entries */
#define COV_SEEN (1u << COV_SEEN_BITS)

struct strace_walker {
	struct strace_image *img;
	struct strace_walk_opts o;
	struct strace_typeset types; /* the caller's o.types, copied (o.types
				      * points here): the caller's may go */
	struct walk_input in;
	struct walk_flow flow;
	struct strace_dec_time time;
	struct walk_out out;
	struct walk_blocks blk;
	struct walk_tnt tnt;
	struct seg_notes seg;
	struct walk_stream *stream; /* NULL until the first streamed piece */
	struct strace_walk_stats st;
	struct walk_pebs pebs;
	/* with coverage on (strace_dec_cov_on()), the conditional branches'
	 * outcomes noted lately (flow.c: key the address << 1 | taken), so
	 * that a hot loop's branch is not handed to its object at every bit;
	 * NULL otherwise */
	uint64_t *cov_seen;
	/* frees stream: stream.c's, set with it (the walker calls no layer
	 * above it) */
	void (*stream_free)(struct walk_stream *s);
};

/*
 * strace_dec_decode_range() - decode [start, end) of buf (all bytes in
 * all) with w: from its first PSB, on to the next PSB after each error.
 * At the end: a trace_end event if emit_end, else, when has_next_fup
 * (next_fup: the FUP of the PSB+ at end), walk on to it as the sequential
 * decode would at that PSB.
 * Returns the number of events, -STRACE_E_NOSYNC if there is no PSB,
 * -ENOMEM, or the sink's error.
 */
long strace_dec_decode_range(struct strace_walker *w, const uint8_t *buf,
			     size_t start, size_t end, size_t all, int emit_end,
			     int has_next_fup, uint64_t next_fup);

/* strace_dec_walk_flush() - at the end of a decode call that returns
 * ret: the events the spreader holds go to the sink with the times they
 * have. Returns ret, or the sink's error. */
long strace_dec_walk_flush(struct strace_walker *w, long ret);

#endif
