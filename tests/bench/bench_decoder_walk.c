/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bench_decoder_walk.c - the fast walker against the reference
 * (libipt's block decoder) on a synthetic stream: a loop that calls f,
 * which calls g directly and h indirectly, with a conditional branch, as
 * hardware would encode it (return compression, a PSB every 4 KiB).
 *
 *   bench_decoder_walk [MBYTES]    (default 4)
 *
 * Prints MB/s and branches/s of both, and their ratio. Exits non-zero if
 * the two disagree on the number of calls and returns.
 */
#include <intel-pt.h>
#include <time.h>

#include "unit/decoder_testlib.h"

static const char *asm_src =
	"	.text\n"
	"	.globl _start, f, g, h\n"
	"	.type _start,@function\n"
	"_start:\n"
	"	lea h(%rip), %rbx\n"
	".Lloop:\n"
	"	call f\n"
	"	jmp .Lloop\n"
	"	.size _start, .-_start\n"
	"	.type f,@function\n"
	"f:\n"
	"	test %ecx, %ecx\n"
	"	je .Lz\n"
	"	nop\n"
	".Lz:\n"
	"	call g\n"
	"	call *%rbx\n"
	"	ret\n"
	"	.size f, .-f\n"
	"	.type g,@function\n"
	"g:\n"
	"	ret\n"
	"	.size g, .-g\n"
	"	.type h,@function\n"
	"h:\n"
	"	ret\n"
	"	.size h, .-h\n";

struct counts {
	uint64_t calls, rets, other;
};

static int count(void *arg, const struct strace_event *ev)
{
	struct counts *c = arg;
	if (ev->type == STRACE_EV_CALL)
		c->calls++;
	else if (ev->type == STRACE_EV_RETURN)
		c->rets++;
	else
		c->other++;
	return 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 4, cap, len;
	char src[600], exe[600], cmd[2000], *out;
	uint64_t start, h;
	struct strace_image *img;
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet p;
	uint8_t *buf;
	uint64_t off = 0, iters = 0, last_psb = 0;
	double best[3] = {1e9, 1e9, 1e9};
	struct counts c[3];

	snprintf(src, sizeof(src), "%s/bench.s", tl_tmpdir());
	snprintf(exe, sizeof(exe), "%s/bench", tl_tmpdir());
	FILE *f = fopen(src, "w");
	if (!f)
		return 1;
	fputs(asm_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cc -nostdlib -static -no-pie -Wl,-Ttext=0x401000 -o %s %s && "
		 "nm %s | awk '$3==\"_start\"||$3==\"h\" {print $1}'",
		 exe, src, exe);
	out = tl_run(cmd);
	if (!out || sscanf(out, "%lx %lx", &start, &h) != 2) {
		fprintf(stderr, "bench_decoder_walk: cannot build the program\n");
		return 1;
	}
	free(out);
	if (h < start) {
		uint64_t t = h;
		h = start;
		start = t;
	}
	if (strace_image_new(NULL, &img) || tl_map_elf(img, exe, 0) <= 0)
		return 1;

	cap = mb << 20;
	buf = malloc(cap + 4096);
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap + 4096;
	enc = pt_alloc_encoder(&cfg);
	memset(&p, 0, sizeof(p));
	for (;;) {
		pt_enc_get_offset(enc, &off);
		if (off >= cap)
			break;
		if (!iters || off - last_psb >= 4096) {
			p.type = ppt_psb;
			pt_enc_next(enc, &p);
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
			pt_enc_next(enc, &p);
			/* at the top of the loop: call f is next */
			p.type = ppt_fup;
			p.payload.ip.ipc = pt_ipc_sext_48;
			p.payload.ip.ip = start + 7;
			pt_enc_next(enc, &p);
			p.type = ppt_psbend;
			pt_enc_next(enc, &p);
			last_psb = off;
		}
		/* one iteration: je (N), [g: ret T] TIP h, [h: ret T, f ret T]
		 * -> TNT "NT", TIP, TNT "TT" */
		p.type = ppt_tnt_8;
		p.payload.tnt.bit_size = 2;
		p.payload.tnt.payload = 1; /* N T */
		pt_enc_next(enc, &p);
		p.type = ppt_tip;
		p.payload.ip.ipc = pt_ipc_update_16;
		p.payload.ip.ip = h;
		pt_enc_next(enc, &p);
		p.type = ppt_tnt_8;
		p.payload.tnt.bit_size = 2;
		p.payload.tnt.payload = 3; /* T T */
		pt_enc_next(enc, &p);
		iters++;
	}
	pt_enc_get_offset(enc, &off);
	len = (size_t)off;
	pt_free_encoder(enc);

	for (int round = 0; round < 3; round++) {
		for (int k = 0; k < 3; k++) {
			if (argc > 2 && k != atoi(argv[2]))
				continue; /* profile one path only */
			struct strace_walk_opts o = {0};
			struct strace_walker *w;
			double t0, t1;

			o.size = sizeof(o);
			o.flags = k == 1 ? STRACE_WALK_REFERENCE : 0;
			o.emit = count;
			memset(&c[k], 0, sizeof(c[k]));
			o.emit_arg = &c[k];
			if (strace_walker_new(img, &o, &w))
				return 1;
			t0 = now_s();
			if (k == 2) {
				if (strace_walker_decode_parallel(w, buf, len,
								  2, 0) < 0)
					return 1;
			} else if (strace_walker_decode(w, buf, len) < 0) {
				return 1;
			}
			t1 = now_s();
			strace_walker_free(w);
			if (t1 - t0 < best[k])
				best[k] = t1 - t0;
		}
	}
	{
		/* taken branches per iteration: call f, call g, ret, call h,
		 * ret, ret, jmp = 7 */
		double br = (double)iters * 7;
		printf("stream: %.1f MB, %llu iterations, %.0f taken branches "
		       "(%.2f bytes/branch)\n",
		       len / 1e6, (unsigned long long)iters, br, len / br);
		static const char *names[3] = {"fast:     ", "reference:",
					       "fast -j2: "};
		for (int k = 0; k < 3; k++) {
			if (best[k] >= 1e9)
				continue;
			printf("%s %7.1f ms  %7.1f MB/s  %6.1f M branches/s  "
			       "(%llu calls, %llu returns)\n",
			       names[k], best[k] * 1e3, len / best[k] / 1e6,
			       br / best[k] / 1e6,
			       (unsigned long long)c[k].calls,
			       (unsigned long long)c[k].rets);
		}
		if (argc <= 2)
			printf("fast / reference: %.1fx; -j2 / reference: "
			       "%.1fx\n",
			       best[1] / best[0], best[1] / best[2]);
	}
	/* the reference loses one branch at each PSB (see docs/decoder.md) */
	if (argc > 2)
		return 0;
	if (c[2].calls != c[0].calls || c[2].rets != c[0].rets) {
		fprintf(stderr, "bench_decoder_walk: -j2 differs\n");
		return 1;
	}
	if (c[0].calls < c[1].calls ||
	    c[0].calls - c[1].calls > c[0].other + 1) {
		fprintf(stderr, "bench_decoder_walk: decoders disagree\n");
		return 1;
	}
	strace_image_free(img);
	free(buf);
	return 0;
}
