/* SPDX-License-Identifier: MIT */
/*
 * decoder/packet.h - Intel PT packets: the walker's inline parser of the
 * packets it meets most, IP decompression, and (packet.c) what goes
 * through libipt's packet decoder: finding PSBs, the other packets,
 * looking ahead, reading a PSB+. Not installed.
 *
 * pkt_parse() parses one packet from the bytes alone into a small struct
 * (no state: the walker keeps the last IP and says which errata apply).
 * It is static inline: the walker's packet loop calls it per packet.
 *
 * One packet depends on what came before: a Block Item Packet (BIP,
 * PEBS-via-PT) has the opcode byte of a short TNT, and is a BIP only
 * inside a block that a Block Begin Packet (BBP) opened, with the payload
 * size the BBP gave. pkt_parse() leaves blocks to its caller (the walker
 * reads a record's blocks in a packet loop of their own, loop.h's
 * pebs_blocks(), so its hot loop pays nothing for them); pkt_parse_blk()
 * is pkt_parse() with the block's state, and pkt_blk_after() the rule for
 * how each packet changes it (perf's packet context:
 * tools/perf/util/intel-pt-decoder).
 *
 * Threading: none of this keeps state of its own; a libipt packet decoder
 * belongs to one thread at a time.
 */
#ifndef DECODER_PACKET_H
#define DECODER_PACKET_H

#include <endian.h>
#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decoder/internal.h"

enum pkt_type {
	PKT_END = 0, /* cut by the end of the buffer: the decode stops */
	PKT_BAD,     /* not a packet: an IP packet with a reserved IP
		      * compression, a long TNT without its stop bit, a
		      * MODE of a reserved leaf, a PSB cut short, a CYC of
		      * more than 64 bits */
	PKT_OTHER,   /* not parsed inline: libipt's (strace_dec_pkt_decode()) */
	PKT_SKIP,    /* nothing to do: PADs (a run of them), the CYC byte an OVF cut
		      * short (SKD007) */
	PKT_TNT,     /* short or long TNT: nbits bits in payload */
	PKT_CYC,     /* payload: cycles */
	PKT_TIP,     /* IP packets: payload the IP bits, ipc their */
	PKT_PGE,     /*   compression (0: suppressed); pkt_ip() */
	PKT_PGD,
	PKT_FUP,
	PKT_TSC,     /* payload: the TSC */
	PKT_MTC,     /* payload: CTC bits */
	PKT_MODE,    /* payload: the mode byte */
	PKT_PSB,
	PKT_PSBEND,
	PKT_CBR,     /* payload: the core/bus ratio */
	PKT_OVF,
	/* PEBS-via-PT (newer than libipt 2.0.5, which cannot decode them):
	 * a PEBS record is one or more blocks, each a BBP and its BIPs, and
	 * a BEP after the last */
	PKT_BBP,     /* payload: the block's type (PEBS basic info 4, memory
		      * info 5, GP registers 1, LBR 8-10, XMM 16); nbits: the
		      * size of its BIPs' payloads (4 or 8) */
	PKT_BIP,     /* (pkt_parse_blk() only) nbits: the item's id (0-31);
		      * payload: its value */
	PKT_BEP,     /* ipc: 1 when a FUP follows that says where the
		      * record was taken (its IP bit) */
	/* event trace and trigger tracing (newer than libipt 2.0.5 too;
	 * the walker's strace_dec_event_packet()) */
	PKT_CFE,     /* control flow event: nbits its type, ipc its IP bit
		      * (a FUP follows that says where), payload its
		      * vector */
	PKT_EVD,     /* event data: nbits its type, payload its 8 bytes */
	PKT_TRIG,    /* trigger: ipc its IP bit (a FUP follows that says
		      * where), nbits its first payload byte (bit 6: ICNT
		      * valid, bit 5: MULT), payload its TRBV (bits 7:0)
		      * and ICNT (bits 23:8) */
};

/* CFE types (Intel SDM, "Control Flow Event (CFE) Packet") */
enum pkt_cfe_type {
	PKT_CFE_INTR = 1,
	PKT_CFE_IRET = 2,
	PKT_CFE_SMI = 3,
	PKT_CFE_RSM = 4,
	PKT_CFE_SIPI = 5,
	PKT_CFE_INIT = 6,
	PKT_CFE_VMENTRY = 7,
	PKT_CFE_VMEXIT = 8,
	PKT_CFE_VMEXIT_INTR = 9,
	PKT_CFE_SHUTDOWN = 10,
	PKT_CFE_UINTR = 12,
	PKT_CFE_UIRET = 13,
	PKT_CFE_SWINTR = 14,
	PKT_CFE_SYSCALL = 15,
};

struct pkt {
	uint8_t type;  /* enum pkt_type */
	uint8_t ipc;   /* IP packets: IP compression (0: suppressed) */
	uint8_t nbits; /* TNT: how many bits (the first the highest) */
	size_t size;   /* bytes (not for PKT_END, PKT_BAD, PKT_OTHER); a CYC
			* may be long */
	uint64_t payload;
};

/* Little-endian n bytes (0 to 8) at p; end: where the buffer ends. With
 * 8 bytes readable it is one load (a byte at a time took a tenth of the
 * packet loop's time). */
static inline uint64_t pkt_le(const uint8_t *p, int n, const uint8_t *end)
{
	uint64_t v = 0;

	if (end - p >= 8 && n > 0) {
		memcpy(&v, p, 8);
		v = le64toh(v);
		return n == 8 ? v : v & ((1ull << (8 * n)) - 1);
	}
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* pkt_is_tnt8() - whether b is a short TNT packet (bit 0 clear, not PAD,
 * not the 0x02 of a two-byte opcode). */
static inline int pkt_is_tnt8(uint8_t b)
{
	return !(b & 1) && b > 0x02;
}

/* pkt_tnt8() - the bits of the short TNT b (the first the highest), *nbits
 * of them: those below its stop bit, above bit 0. */
static inline uint64_t pkt_tnt8(uint8_t b, unsigned *nbits)
{
	unsigned top = 31 - (unsigned)__builtin_clz((unsigned)b);

	*nbits = top - 1;
	return (b >> 1) & ((1u << (top - 1)) - 1);
}

/*
 * pkt_parse() - the packet at buf[i] (i < len), in *p. Parses PAD, short
 * and long TNT, CYC, TIP, TIP.PGE, TIP.PGD, FUP, TSC, MTC, MODE, PSB,
 * PSBEND, CBR, OVF, CFE, EVD, TRIG, BBP and BEP; anything else is
 * PKT_OTHER.
 * skd007: the trace's processor has erratum SKD007 (an OVF in place of
 * the rest of a multi-byte CYC). A BIP is parsed as the short TNT its
 * opcode byte also is: see pkt_parse_blk().
 */
static inline __attribute__((always_inline)) void
pkt_parse(const uint8_t *buf, size_t len, size_t i, int skd007, struct pkt *p)
{
	static const int8_t ip_bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};
	uint8_t b = buf[i];

	if (b == 0x00) { /* PAD, and up to 8 PADs after it (traces pad
			  * in runs: one packet less each) */
		p->type = PKT_SKIP;
		p->size = 1;
		if (len - i > 8) {
			uint64_t v;

			memcpy(&v, buf + i + 1, 8);
			v = le64toh(v);
			p->size += v ? (size_t)__builtin_ctzll(v) / 8 : 8;
		}
		return;
	}
	if (pkt_is_tnt8(b)) {
		unsigned nbits;

		p->type = PKT_TNT;
		p->payload = pkt_tnt8(b, &nbits);
		p->nbits = (uint8_t)nbits;
		p->size = 1;
		return;
	}
	if ((b & 3) == 3) { /* CYC */
		uint64_t c = b >> 3;
		int shift = 5;
		size_t j = i + 1;

		if (unlikely((b & 4) && i + 2 < len && buf[i + 1] == 0x02 &&
			     buf[i + 2] == 0xf3 && skd007)) {
			/* SKD007: an OVF sent in place of the rest of a
			 * multi-byte CYC */
			p->type = PKT_SKIP;
			p->size = 1;
			return;
		}
		if (b & 4) {
			for (;;) {
				uint8_t x;

				if (j >= len) {
					p->type = PKT_END;
					return;
				}
				x = buf[j++];
				c |= (uint64_t)(x >> 1) << shift;
				shift += 7;
				if (!(x & 1))
					break;
				if (shift + 7 > 64) {
					/* more than 64 bits (libipt: a bad
					 * packet) */
					p->type = PKT_BAD;
					return;
				}
			}
		}
		p->type = PKT_CYC;
		p->payload = c;
		p->size = j - i;
		return;
	}
	switch (b & 0x1f) {
	case 0x0d: case 0x11: case 0x01: case 0x1d: {
		int ipc = b >> 5, nb = ip_bytes[ipc];

		if (nb < 0) {
			p->type = PKT_BAD;
			return;
		}
		if (i + 1 + (size_t)nb > len) {
			p->type = PKT_END;
			return;
		}
		p->type = (b & 0x1f) == 0x0d   ? PKT_TIP
			  : (b & 0x1f) == 0x11 ? PKT_PGE
			  : (b & 0x1f) == 0x01 ? PKT_PGD
					       : PKT_FUP;
		p->ipc = (uint8_t)ipc;
		p->payload = pkt_le(buf + i + 1, nb, buf + len);
		p->size = 1 + (size_t)nb;
		return;
	}
	}
	if (b == 0x19) { /* TSC */
		if (i + 8 > len) {
			p->type = PKT_END;
			return;
		}
		p->type = PKT_TSC;
		p->payload = pkt_le(buf + i + 1, 7, buf + len);
		p->size = 8;
		return;
	}
	if (b == 0x59 || b == 0x99) { /* MTC, MODE */
		if (i + 2 > len) {
			p->type = PKT_END;
			return;
		}
		if (b == 0x99 && buf[i + 1] >> 5 > 1) {
			/* a MODE leaf other than Exec and TSX */
			p->type = PKT_BAD;
			return;
		}
		p->type = b == 0x59 ? PKT_MTC : PKT_MODE;
		p->payload = buf[i + 1];
		p->size = 2;
		return;
	}
	if (b == 0x02 && i + 1 < len) {
		uint8_t x = buf[i + 1];

		if (x == 0xa3) { /* long TNT */
			uint64_t v;
			int top;

			if (i + 8 > len) {
				p->type = PKT_END;
				return;
			}
			v = pkt_le(buf + i + 2, 6, buf + len);
			if (!v) {
				p->type = PKT_BAD;
				return;
			}
			top = 63 - __builtin_clzll(v);
			p->type = PKT_TNT;
			p->payload = v & ((1ull << top) - 1);
			p->nbits = (uint8_t)top;
			p->size = 8;
			return;
		}
		if (x == 0x82) { /* PSB: 02 82 eight times */
			static const uint8_t psb[16] = {
				0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

			p->type = i + 16 > len			 ? PKT_END
				  : memcmp(buf + i, psb, 16) ? PKT_BAD
							     : PKT_PSB;
			p->size = 16;
			return;
		}
		if (x == 0x23) { /* PSBEND */
			p->type = PKT_PSBEND;
			p->size = 2;
			return;
		}
		if (x == 0x03) { /* CBR */
			if (i + 4 > len) {
				p->type = PKT_END;
				return;
			}
			p->type = PKT_CBR;
			p->payload = buf[i + 2];
			p->size = 4;
			return;
		}
		if (x == 0xf3) { /* OVF */
			p->type = PKT_OVF;
			p->size = 2;
			return;
		}
		/* event trace (newer than libipt 2.0.5, which cannot skip
		 * them): CFE, 2 payload bytes (type bits 4:0, IP bit 7;
		 * vector); EVD, 9 (type bits 5:0; an 8-byte payload) */
		if (x == 0x13 || x == 0x53) {
			size_t n = x == 0x13 ? 4 : 11;

			if (i + n > len) {
				p->type = PKT_END;
				return;
			}
			p->size = n;
			if (x == 0x13) {
				p->type = PKT_CFE;
				p->nbits = buf[i + 2] & 0x1f;
				p->ipc = buf[i + 2] >> 7;
				p->payload = buf[i + 3];
			} else {
				p->type = PKT_EVD;
				p->nbits = buf[i + 2] & 0x3f;
				p->ipc = 0;
				p->payload = pkt_le(buf + i + 3, 8, buf + len);
			}
			return;
		}
		/* PEBS-via-PT: BBP, 1 payload byte (its BIPs' size bit 7,
		 * the block's type bits 4:0); BEP, none (its IP bit 7) */
		if (x == 0x63) {
			if (i + 3 > len) {
				p->type = PKT_END;
				return;
			}
			p->type = PKT_BBP;
			p->payload = buf[i + 2] & 0x1f;
			p->nbits = buf[i + 2] & 0x80 ? 4 : 8;
			p->size = 3;
			return;
		}
		if ((x & 0x7f) == 0x33) {
			p->type = PKT_BEP;
			p->ipc = x >> 7;
			p->size = 2;
			return;
		}
	}
	if (b == 0xd9) {
		/* TRIG (trigger tracing; newer than libipt 2.0.5): flags
		 * (IP bit 7, ICNT valid bit 6, MULT bit 5), TRBV, and a
		 * 2-byte ICNT when valid (libipt HEAD's pt_pkt_read_trig()) */
		size_t n = i + 1 < len && (buf[i + 1] & 0x40) ? 5 : 3;

		if (i + n > len) {
			p->type = PKT_END;
			return;
		}
		p->type = PKT_TRIG;
		p->size = n;
		p->nbits = buf[i + 1];
		p->ipc = buf[i + 1] >> 7;
		p->payload = buf[i + 2] |
			     (n == 5 ? (uint64_t)pkt_le(buf + i + 3, 2,
							buf + len)
					   << 8
				     : 0);
		return;
	}
	p->type = PKT_OTHER;
}

/*
 * pkt_bip() - the BIP at buf[i] (i < len) of a block whose items have
 * bytes (4 or 8) of payload, in *p: its id is the opcode byte's bits 7:3
 * (the opcode is xxxxx100b). PKT_END when the buffer ends inside it.
 */
static inline void pkt_bip(const uint8_t *buf, size_t len, size_t i,
			   unsigned bytes, struct pkt *p)
{
	if (i + 1 + bytes > len) {
		p->type = PKT_END;
		return;
	}
	p->type = PKT_BIP;
	p->nbits = buf[i] >> 3;
	p->payload = pkt_le(buf + i + 1, (int)bytes, buf + len);
	p->size = 1 + bytes;
}

/* Inside a block, a byte xxxxx100b opens a BIP (else a short TNT). */
static inline int pkt_is_bip(uint8_t b)
{
	return (b & 7) == 4;
}

/*
 * pkt_blk_after() - the block state after the packet p at at (its bytes,
 * left of them in the buffer: a packet pkt_parse() leaves to libipt is
 * told by its opcode), given blk
 * before it: 0 outside a block, else the size of the block's BIP
 * payloads (4 or 8). A BBP opens a block; a BIP, a FUP, PAD, the timing
 * packets (TSC, TMA, MTC, CYC, CBR), MNT, EXSTOP, PWRE, PWRX, CFE, EVD
 * and what is not a packet (perf's packet decoder: TRIG too) leave it as
 * it was; every other packet (a
 * BEP, TNT, TIP, MODE, PSB, PSBEND, OVF, PIP, VMCS, STOP, PTW, MWAIT)
 * ends it. This is perf's rule (intel_pt_upd_pkt_ctx()).
 */
static inline unsigned pkt_blk_after(unsigned blk, const struct pkt *p,
				     const uint8_t *at, size_t left)
{
	switch (p->type) {
	case PKT_BBP:
		return p->nbits;
	case PKT_BIP:
	case PKT_FUP:
	case PKT_CYC:
	case PKT_TSC:
	case PKT_MTC:
	case PKT_CBR:
	case PKT_SKIP:
	case PKT_CFE:
	case PKT_EVD:
	case PKT_TRIG:
	case PKT_BAD:
	case PKT_END:
		return blk;
	case PKT_OTHER:
		if (at[0] != 0x02 || left < 2)
			return blk;
		switch (at[1]) {
		case 0x73: /* TMA */
		case 0xc3: /* MNT */
		case 0x62: /* EXSTOP */
		case 0xe2:
		case 0x22: /* PWRE */
		case 0xa2: /* PWRX */
			return blk;
		case 0x43: /* PIP */
		case 0xc8: /* VMCS */
		case 0x83: /* STOP */
		case 0xc2: /* MWAIT */
			return 0;
		default: /* PTW (xxx10010b) ends it; no packet: as it was */
			return (at[1] & 0x1f) == 0x12 ? 0 : blk;
		}
	default:
		return 0;
	}
}

/*
 * pkt_parse_blk() - pkt_parse() inside or outside a block: *blk is the
 * block state before the packet (pkt_blk_after()), and after it on
 * return. The walker does the same in its own way (loop.h,
 * pebs_blocks()).
 */
static inline void pkt_parse_blk(const uint8_t *buf, size_t len, size_t i,
				 int skd007, unsigned *blk, struct pkt *p)
{
	if (*blk && pkt_is_bip(buf[i]))
		pkt_bip(buf, len, i, *blk, p);
	else
		pkt_parse(buf, len, i, skd007, p);
	*blk = pkt_blk_after(*blk, p, buf + i, len - i);
}

/* pkt_ip() - the IP of an IP packet (pkt_parse()'s ipc and payload),
 * given the last IP; 0 when suppressed. */
static inline uint64_t pkt_ip(uint64_t last_ip, unsigned ipc, uint64_t v)
{
	switch (ipc) {
	case 1:
		return (last_ip & ~0xffffull) | v;
	case 2:
		return (last_ip & ~0xffffffffull) | v;
	case 3:
		return (uint64_t)((int64_t)(v << 16) >> 16);
	case 4:
		return (last_ip & ~0xffffffffffffull) | v;
	case 6:
		return v;
	default:
		return 0;
	}
}

/* pkt_ip_ipt() - the IP of an IP packet libipt decoded, given the last
 * IP (0 after a PSB). */
static inline uint64_t pkt_ip_ipt(const struct pt_packet_ip *p, uint64_t last)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffull) | (p->ip & 0xffff);
	case pt_ipc_update_32:
		return (last & ~0xffffffffull) | (p->ip & 0xffffffff);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffull) |
		       (p->ip & 0xffffffffffffull);
	default:
		return p->ip;
	}
}

/* A set of libipt packet types, for strace_dec_pkt_peek(). */
#define PKT_MASK(t) (1ull << (t))

/*
 * strace_dec_pkt_sync() - the offset of the first PSB at or after from,
 * before len, with d (a libipt packet decoder over the buffer buf).
 * Returns it, or -1 if there is none.
 */
long strace_dec_pkt_sync(struct pt_packet_decoder *d, const uint8_t *buf,
			 size_t len, size_t from);

/*
 * strace_dec_pkt_decode() - the packet at pos, decoded by libipt's packet
 * decoder d into *p. Returns its size, 0 if the buffer ends inside it,
 * or -STRACE_E_BADPKT if libipt cannot decode it (a bad opcode, a bad
 * payload: also in the last bytes of the buffer).
 */
int strace_dec_pkt_decode(struct pt_packet_decoder *d, size_t pos,
			  struct pt_packet *p);

/*
 * strace_dec_pkt_peek() - the first packet at or after from whose type is
 * not in skip (PKT_MASK() bits of enum pt_packet_type), in *p; d is left
 * after it (pt_pkt_get_offset()). Looks at 64 packets at most: what the
 * errata look for comes within a few status and timing packets, and
 * hostile input (an OVF and a FUP again and again) must not make each
 * lookahead scan far. PEBS-via-PT records (BBP ... BEP, and the FUP a
 * BEP with its IP bit binds), which libipt cannot read, are passed over
 * and not counted. Returns 0, or -1 at the end of the buffer, at a
 * packet libipt cannot read, or after 64 packets.
 */
int strace_dec_pkt_peek(struct pt_packet_decoder *d, size_t from,
			uint64_t skip, struct pt_packet *p);

/*
 * strace_dec_pebs_near() - whether the packets of buf (len bytes) from
 * from on hold PEBS-via-PT packets (a BBP, BIP or BEP), or event trace
 * or trigger packets (CFE, EVD, TRIG), before any packet that neither
 * the inline parser nor libipt can read, within 64 packets and before
 * the next PSB: libipt (2.0.5) stops at them, and says only "bad
 * opcode", at or before them (at the PSB it synchronised at when it read
 * ahead). Returns 1 (PEBS-via-PT), 2 (CFE, EVD, TRIG: the first found
 * decides) or 0.
 */
int strace_dec_pebs_near(const uint8_t *buf, size_t len, size_t from);

/*
 * strace_dec_psb_plus() - read the PSB+ at off in buf (len bytes) with a
 * packet decoder of its own: *ip and *at get its FUP's IP and offset, and
 * *has_fup says whether it has one (a PSB+ cut by the end of buf may
 * still show it). Returns 1 if the PSB+ is complete in buf (its PSBEND is
 * there), else 0 (also when out of memory).
 */
int strace_dec_psb_plus(const uint8_t *buf, size_t len, size_t off,
			uint64_t *ip, size_t *at, int *has_fup);

#endif
