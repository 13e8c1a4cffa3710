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
	PKT_SKIP,    /* nothing to do: PAD, CFE, EVD, and the CYC byte an OVF
		      * cut short (SKD007) */
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

/*
 * pkt_parse() - the packet at buf[i] (i < len), in *p. Parses PAD, short
 * and long TNT, CYC, TIP, TIP.PGE, TIP.PGD, FUP, TSC, MTC, MODE, PSB,
 * PSBEND, CBR, OVF, CFE and EVD; anything else is PKT_OTHER. skd007:
 * the trace's processor has erratum SKD007 (an OVF in place of the rest
 * of a multi-byte CYC).
 */
static inline __attribute__((always_inline)) void
pkt_parse(const uint8_t *buf, size_t len, size_t i, int skd007, struct pkt *p)
{
	static const int8_t ip_bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};
	uint8_t b = buf[i];

	if (b == 0x00) { /* PAD */
		p->type = PKT_SKIP;
		p->size = 1;
		return;
	}
	if (!(b & 1) && b != 0x02) { /* short TNT */
		int top = 31 - __builtin_clz((unsigned)b);

		p->type = PKT_TNT;
		p->payload = (b >> 1) & ((1u << (top - 1)) - 1);
		p->nbits = (uint8_t)(top - 1);
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
		 * them): CFE, 2 payload bytes (type, IP bit, vector); EVD, 9
		 * (type, 8-byte payload). Neither moves the flow: a CFE with
		 * its IP bit set comes with the FUP of the asynchronous event
		 * it names, which is handled as any FUP */
		if (x == 0x13 || x == 0x53) {
			size_t n = x == 0x13 ? 4 : 11;

			p->type = i + n > len ? PKT_END : PKT_SKIP;
			p->size = n;
			return;
		}
	}
	p->type = PKT_OTHER;
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
 * lookahead scan far. Returns 0, or -1 at the end of the buffer, at a
 * packet libipt cannot read, or after 64 packets.
 */
int strace_dec_pkt_peek(struct pt_packet_decoder *d, size_t from,
			uint64_t skip, struct pt_packet *p);

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
