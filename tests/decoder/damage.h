/* SPDX-License-Identifier: MIT */
/*
 * tests/decoder/damage.h - damage one thread's PT in a recording and see
 * which decoders report it: the fast walker, and libipt's block decoder
 * (the reference) as the judge. Used by the differential test
 * (tests/decoder/damage_diff.c, in make check) and its fuzz target
 * (tests/fuzz/fuzz_damage.c).
 *
 * The damage is chosen by packet, not by byte offset: a trace whose bytes
 * shift (another build, another path) still has its damage land on a
 * packet of the kind asked for. Every kind keeps the buffer's size (what
 * a drop or a cut removes is made up with PAD at the buffer's end, which
 * no decoder reads as anything), so the perf.data around it stays valid.
 *
 * The verdict: between the damaged packet and the end of the PSB+ that
 * follows it (the first place both decoders resynchronise), either both
 * decoders report an error or neither does; after it, neither does.
 */
#ifndef TESTS_DECODER_DAMAGE_H
#define TESTS_DECODER_DAMAGE_H

#include <stddef.h>
#include <stdint.h>

struct strace_image;
struct strace_objcache;
struct strace_walker;

enum dmg_kind {
	DMG_DROP,    /* arg bytes from the packet's start dropped */
	DMG_CORRUPT, /* the packet's byte arg % size xor-ed with 0x5a */
	DMG_TNT,     /* a TNT packet's bit arg % nbits flipped */
	DMG_TRUNC,   /* the packet's last 1 + arg % (size - 1) bytes cut */
	DMG_KINDS
};

/* dmg_kind_name() - "drop", "corrupt", "tnt", "trunc". */
const char *dmg_kind_name(enum dmg_kind k);

/* A packet of the clean stream: where, how long, what (libipt's enum
 * pt_packet_type), and a TNT's bit count. */
struct dmg_pkt {
	uint32_t off;
	uint8_t size, type, nbits;
};

/* A recording, read once; its longest thread's PT is the one damaged. */
struct dmg_trace {
	uint8_t *data; /* the perf.data, as read */
	size_t len;
	size_t aux_off, aux_len; /* that thread's AUX data within data */
	uint32_t tid;
	struct dmg_pkt *pkt; /* its packets from the first PSB on */
	size_t npkt;
	/* its decoders (dmg_trace_decoders()): the fast walker and libipt's
	 * block decoder, over that thread's image, kept between decodes (the
	 * damage is in the PT only); and where the decode at hand puts its
	 * errors */
	struct strace_walker *walker[2];
	struct strace_image *img[2];
	struct dmg_errs *out;
	size_t out_base; /* the stream's offset of the part decoded */
};

/* dmg_trace_load() - read path, find its longest thread's AUX buffer and
 * list its packets (libipt's packet decoder).
 * Returns 0; -errno if it cannot be read; -EINVAL if it is no perf.data
 * with AUX data, or that data has no PSB. */
int dmg_trace_load(const char *path, struct dmg_trace *t);
void dmg_trace_free(struct dmg_trace *t);

/* dmg_trace_decoders() - t's two decoders, as ptrace-capture -i decodes
 * its thread (strace_offline_walker()); objects: the files and symbols.
 * Returns 0 or the error (< 0). */
int dmg_trace_decoders(struct strace_objcache *objects, struct dmg_trace *t);

struct dmg {
	enum dmg_kind kind;
	size_t pkt;   /* index in t->pkt */
	unsigned arg; /* the kind's own (above) */
};

/* dmg_applies() - whether d can damage packet d->pkt of t (a TNT flip
 * needs a TNT, a cut a packet of 2 bytes or more, nothing damages the
 * last packet's end...). */
int dmg_applies(const struct dmg_trace *t, const struct dmg *d);

/* dmg_apply() - the damaged recording into out (t->len bytes); *at: the
 * stream offset of the damaged packet.
 * Returns 0, or -EINVAL when d does not apply. */
int dmg_apply(const struct dmg_trace *t, const struct dmg *d, uint8_t *out,
	      size_t *at);

/* dmg_trim() - make the damaged copy dmg of d (from dmg_apply()) quick
 * to judge, for the fuzz target: PAD over its PT but from the
 * second-last PSB before the damaged packet (a whole PSB+ and period
 * before the damaged one) to the second PSB at or after it, which keeps
 * the judge's window (dmg_judge()) and one PSB period after it, and over
 * every other AUX buffer. The stream's offsets stay. Errors
 * that damaged state carries further than that period are then out of
 * sight: the differential test (damage_diff) judges whole copies.
 * *kept: the stream's part kept, the part dmg_judge() need decode. */
struct dmg_span {
	size_t from, to;
};
void dmg_trim(const struct dmg_trace *t, const struct dmg *d, uint8_t *dmg,
	      struct dmg_span *kept);

/* The error events one decode gave the damaged thread. */
#define DMG_MAX_ERRS 32
struct dmg_errs {
	size_t n; /* all of them (only the first DMG_MAX_ERRS kept) */
	uint64_t last_off; /* the largest offset of all of them */
	struct dmg_err {
		uint64_t off, ip;
		uint32_t code;
	} e[DMG_MAX_ERRS];
};

/* dmg_decode() - decode the PT of t's thread in data (a copy of t's
 * recording, from dmg_apply(), or t->data), the part in span of its
 * stream (NULL: all), with t's decoder k (0: the fast walker, 1:
 * libipt's, dmg_trace_decoders()) and keep its error events (their
 * offsets the stream's). */
void dmg_decode(struct dmg_trace *t, int k, const uint8_t *data,
		const struct dmg_span *span, struct dmg_errs *out);

/* How the two decoders saw one damage. */
struct dmg_verdict {
	size_t at, end; /* the window: the damaged packet's offset, and the
			 * end of the PSB+ after it (the stream's end if
			 * there is none) */
	size_t psb;     /* that PSB+'s offset (end if none) */
	size_t in_fup, in_end; /* the damaged packet inside a PSB+ (after
				* its PSB, up to its PSBEND): the offsets of
				* that PSB+'s first FUP and its end in the
				* damaged stream; else 0 */
	int fast_at_fup; /* the fast walker's first error is at a FUP */
	int fast_exec_tip; /* ... at a TIP after a MODE.Exec after a TIP.PGD
			    * (exec_tip_while_off()) */
	int fast_in_psb_run; /* ... right after a PSB, at more PSB bytes
			      * (02 82) */
	size_t fast, ref; /* errors each reported in the window */
	size_t fast_late, ref_late; /* ... and after it */
	uint64_t fast_off, ref_off; /* the first one's offset */
	uint32_t fast_code, ref_code;
};

/* dmg_judge() - decode the damaged recording dmg (from dmg_apply(), at;
 * of its stream only the part in span, NULL: all) with both decoders and
 * compare. Returns 1 when they agree (both report in the window or
 * neither does, and neither after it), 0 when not. */
int dmg_judge(struct dmg_trace *t, const uint8_t *dmg, size_t at,
	      const struct dmg_span *span, struct dmg_verdict *v);

/*
 * Where the decoders differ for reasons of libipt's own, the fast walker
 * reporting what libipt 2.0.5 lets pass (docs/testing.md, "Damaged
 * traces"). Each is known by what the fast walker reported and where:
 *
 *   DMG_PSB_FUP  a desync at the FUP of the PSB+ that closes the window,
 *                or at any FUP the damage made or moved (one of the PSB+
 *                it lies in; one a drop of a PSB left alone; one made of
 *                a damaged packet's bytes): the walk did not arrive where
 *                the FUP says it is.
 *                libipt does not check a FUP against its walk (its
 *                status updates check the execution mode only): it goes
 *                on in the wrong state and fails after the PSB+, or never.
 *   DMG_RETCOMP  a compressed return with no call since the last PSB to
 *                return to. libipt keeps its return stack across PSBs
 *                (it empties it only when it synchronises), so it pops an
 *                address pushed before the PSB, which the hardware never
 *                compresses a return to (SDM: no compression across a PSB).
 *   DMG_BAD_CODE a damaged IP (TIP, TIP.PGE, FUP) sent the walk into
 *                bytes that are no instruction, where the fast walker
 *                (Capstone) finds an undecodable instruction or a branch
 *                no packet fits; libipt (and perf) decode instruction
 *                lengths only, walk through them and meet the next PSB.
 *   DMG_EXEC_TIP a desync at a TIP while tracing is off (a TIP.PGD, then
 *                a MODE.Exec, with only timing packets between them and
 *                the TIP): the SDM sends no TIP while PacketEn is 0.
 *                libipt 2.0.5 binds the MODE.Exec to the TIP and walks on
 *                from the far branch tracing stopped at, failing where
 *                that code first disagrees with the packets, perhaps past
 *                the window or never; perf takes the TIP for a branch from
 *                there and walks on too. perf decides: it must report an
 *                error.
 *   DMG_LOST_FUP the damage took the FUP of a PSB+ met while tracing was
 *                on (the clean one has it), and TNT bits follow, which
 *                only traced code makes: the fast walker has no IP to
 *                take them at and says so (desync at the first); libipt
 *                and perf pass over them to the next IP packet without a
 *                word, so perf is not asked.
 *
 * And one the other way, libipt reporting what the fast walker and perf
 * let pass:
 *
 *   DMG_DEFERRED_TIP  a dropped TIP, after which the next TIP (another
 *                indirect branch's) comes after TNT bits: the SDM's
 *                deferred TIP ("the TIP applies to a branch that precedes
 *                the branches of that TNT"), which the fast walker and
 *                perf take, libipt 2.0.5's block decoder not at a near
 *                indirect branch (a desync). The trace is consistent:
 *                perf must report no error either.
 *
 *   DMG_NEWER    libipt stopped at an instruction newer than its 2.0.5
 *                (the reference's "newer": JMPABS, ERETS, ERETU, UIRET)
 *                that the damage's wrong path met in other code's bytes:
 *                libipt judges nothing after it, the fast walker (Capstone
 *                and its own lengths) walks on. perf decides: it must
 *                report no error either.
 *
 *   DMG_EXEC_FUP a PSB dropped (the damaged packet, or a later one
 *                the bytes dropped reach): the MODE.Exec and the FUP of
 *                its PSB+ now stand outside PSB+, where libipt HEAD and
 *                perf 6.1 bind the MODE.Exec to that FUP (event trace:
 *                the interrupt flag changed there) and the fast walker
 *                does too, and libipt 2.0.5 takes the FUP for an
 *                asynchronous branch whose TIP never comes (a desync at
 *                the next TNT). perf decides: it must report no error
 *                either.
 *
 * And one more of the fast walker's, judged by perf alone:
 *
 *   DMG_WRONG_PATH any other damage (a TNT dropped or flipped, a packet
 *                cut, a PSB+ dropped but its FUP) sent the walk down a
 *                wrong path into bytes that are no instruction, or to a
 *                branch no packet fits (bad_insn, no_tnt, no_tip); the
 *                fast walker says so, libipt walks through. perf decides:
 *                it must report an error too.
 */
enum dmg_class {
	DMG_SAME,         /* the decoders agree */
	DMG_PSB_FUP,
	DMG_RETCOMP,
	DMG_BAD_CODE,
	DMG_LOST_FUP,
	DMG_DEFERRED_TIP,
	DMG_NEWER,
	DMG_EXEC_FUP,
	DMG_WRONG_PATH,
	DMG_PSB_RUN,
	DMG_EXEC_TIP,
	DMG_UNEXPLAINED,  /* a difference none of the above explains */
	DMG_CLASSES
};

/* dmg_class_name() - "same", "psb-fup", "retcomp", "bad-code",
 * "lost-fup", "deferred-tip", "newer", "exec-fup", "wrong-path",
 * "psb-run", "exec-tip", "unexplained". */
const char *dmg_class_name(enum dmg_class c);

/* dmg_classify() - what the difference in v (from dmg_judge() of damage
 * d to t) is. */
enum dmg_class dmg_classify(const struct dmg_trace *t, const struct dmg *d,
			    const struct dmg_verdict *v);

#endif
