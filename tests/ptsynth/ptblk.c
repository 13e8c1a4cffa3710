// SPDX-License-Identifier: MIT
/*
 * tests/ptsynth/ptblk.c - decode ptsynth's raw PT streams with libipt's
 * block decoder and print what it saw in ptsynth's truth format:
 *
 *   # thread TID instructions N
 *   # section thread TID
 *   FROM TO KIND        (hex, KIND: call return jump cond syscall start end)
 *   # overflow | # error ...
 *
 * Usage: ptblk PREFIX.sideband
 *
 * The flow comes from libipt alone; Capstone only names the kind of the
 * instruction that ends a block and gives its size (libipt's pt_block
 * gives neither reliably).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct map {
	uint64_t start, end, pgoff;
	const uint8_t *data;
	size_t size;
};

static struct map maps[256];
static size_t nmaps;
static csh cs;

enum kind { K_OTHER, K_COND, K_UNCOND_JMP, K_CALL, K_RET, K_SYSCALL, K_NONE };

static const char *const kname[] = { "other", "cond", "jump", "call",
				     "return", "syscall", "none" };

static void *map_file(const char *path, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "ptblk: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	*size = (size_t)st.st_size;
	p = st.st_size ? mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ptblk: mmap %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return p;
}

/* A direct-mapped cache of decoded instructions. */
#define CACHE_BITS 18
static struct centry {
	uint64_t ip, target;
	uint8_t size, kind, valid;
} cache[1 << CACHE_BITS];

static enum kind insn_decode(uint64_t ip, unsigned *size, uint64_t *target);

/* Kind, size and direct target of the instruction at ip. */
static enum kind insn_at(uint64_t ip, unsigned *size, uint64_t *target)
{
	struct centry *c = &cache[(ip ^ (ip >> CACHE_BITS)) & ((1 << CACHE_BITS) - 1)];
	enum kind k;

	if (c->valid && c->ip == ip) {
		*size = c->size;
		*target = c->target;
		return (enum kind)c->kind;
	}
	k = insn_decode(ip, size, target);
	c->ip = ip;
	c->size = (uint8_t)*size;
	c->target = *target;
	c->kind = (uint8_t)k;
	c->valid = 1;
	return k;
}

static enum kind insn_decode(uint64_t ip, unsigned *size, uint64_t *target)
{
	size_t i;
	cs_insn *ci;
	enum kind k = K_OTHER;

	*size = 0;
	*target = 0;
	for (i = nmaps; i-- > 0;) {
		const struct map *m = &maps[i];
		uint64_t off;
		size_t n;
		unsigned g;
		bool jump = false, call = false, ret = false;

		if (ip < m->start || ip >= m->end)
			continue;
		off = ip - m->start + m->pgoff;
		if (off >= m->size)
			return K_NONE;
		n = m->size - off < 16 ? m->size - off : 16;
		if (cs_disasm(cs, m->data + off, n, ip, 1, &ci) != 1)
			return K_NONE;
		*size = ci->size;
		*target = 0;
		if (ci->detail->x86.op_count == 1 &&
		    ci->detail->x86.operands[0].type == X86_OP_IMM)
			*target = (uint64_t)ci->detail->x86.operands[0].imm;
		for (g = 0; g < ci->detail->groups_count; g++) {
			jump |= ci->detail->groups[g] == CS_GRP_JUMP;
			call |= ci->detail->groups[g] == CS_GRP_CALL;
			ret |= ci->detail->groups[g] == CS_GRP_RET;
		}
		if (ci->id == X86_INS_SYSCALL || ci->id == X86_INS_SYSENTER ||
		    ci->id == X86_INS_INT)
			k = K_SYSCALL;
		else if (ci->id == X86_INS_RET)
			k = K_RET;
		else if (call && ci->id == X86_INS_CALL)
			k = K_CALL;
		else if (jump && ci->id == X86_INS_JMP)
			k = K_UNCOND_JMP;
		else if (jump)
			k = K_COND;
		(void)ret;
		cs_free(ci, 1);
		return k;
	}
	return K_NONE;
}

static int decode(const char *ptfile, unsigned tid, struct pt_image *image)
{
	struct pt_config cfg;
	struct pt_block_decoder *dec;
	size_t size;
	uint8_t *buf = map_file(ptfile, &size);
	uint64_t ninsn = 0, prev = 0, nerr = 0;
	bool have_prev = false;
	int status;
	static char *out;
	static size_t outcap;
	FILE *o;
	size_t outlen = 0;

	o = open_memstream(&out, &outcap);
	if (!o)
		return -1;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec) {
		fprintf(stderr, "ptblk: cannot allocate the block decoder\n");
		return -1;
	}
	pt_blk_set_image(dec, image);
	status = size ? pt_blk_sync_forward(dec) : -pte_eos;
	while (status != -pte_eos) {
		struct pt_block b;
		struct pt_event ev;

		if (status < 0) {
			uint64_t off = 0;

			pt_blk_get_offset(dec, &off);
			fprintf(o, "# error %s at offset %" PRIu64 "\n",
				pt_errstr(pt_errcode(status)), off);
			nerr++;
			have_prev = false;
			status = pt_blk_sync_forward(dec);
			if (status == -pte_eos)
				break;
			if (status < 0) {
				/* no progress possible */
				break;
			}
			continue;
		}
		while (status & pts_event_pending) {
			status = pt_blk_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			switch (ev.type) {
			case ptev_enabled:
				fprintf(o, "0 %" PRIx64 " start\n", ev.variant.enabled.ip);
				have_prev = false;
				break;
			case ptev_disabled: {
				unsigned sz;

				if (have_prev) {
					uint64_t tg;
					enum kind k = insn_at(prev, &sz, &tg);

					fprintf(o, "%" PRIx64 " 0 %s\n", prev,
						k == K_SYSCALL ? "syscall" : "end");
				} else {
					fprintf(o, "? 0 end\n");
				}
				have_prev = false;
				break;
			}
			case ptev_async_disabled: {
				uint64_t at = ev.variant.async_disabled.at;

				/*
				 * The last block's branch went to at, where the
				 * interrupt came before anything ran: no block
				 * starts there to report it (a signal right after
				 * a jump, a call or a return).
				 */
				if (have_prev) {
					unsigned sz;
					uint64_t tg;
					enum kind k = insn_at(prev, &sz, &tg);

					if ((k == K_UNCOND_JMP || k == K_CALL || k == K_RET) ||
					    (k == K_COND && at == tg && at != prev + sz))
						fprintf(o, "%" PRIx64 " %" PRIx64 " %s\n", prev,
							at, kname[k]);
				}
				fprintf(o, "%" PRIx64 " 0 end\n", at);
				have_prev = false;
				break;
			}
			case ptev_overflow:
				if (have_prev) {
					/*
					 * The block's last branch happened (its packet
					 * came before the OVF) but libipt does not say
					 * where it went.
					 */
					unsigned sz;
					uint64_t tg;
					enum kind k = insn_at(prev, &sz, &tg);

					if (k == K_RET || k == K_UNCOND_JMP || k == K_CALL)
						fprintf(o, "%" PRIx64 " ? %s\n", prev, kname[k]);
				}
				fprintf(o, "# overflow resume %" PRIx64 "\n",
					ev.variant.overflow.ip);
				have_prev = false;
				break;
			default:
				break;
			}
		}
		if (status < 0)
			continue;
		status = pt_blk_next(dec, &b, sizeof(b));
		if (status < 0)
			continue;
		if (!b.ninsn)
			continue;
		if (have_prev) {
			unsigned sz;
			uint64_t tg;
			enum kind k = insn_at(prev, &sz, &tg);
			uint64_t fall = prev + sz;

			switch (k) {
			case K_COND:
				if (b.ip != fall)
					fprintf(o, "%" PRIx64 " %" PRIx64 " cond\n", prev, b.ip);
				break;
			case K_UNCOND_JMP:
			case K_CALL:
			case K_RET:
				fprintf(o, "%" PRIx64 " %" PRIx64 " %s\n", prev, b.ip,
					kname[k]);
				break;
			default:
				if (b.ip != fall)
					fprintf(o, "%" PRIx64 " %" PRIx64 " %s?\n", prev,
						b.ip, kname[k]);
				break;
			}
		}
		/*
		 * A block may run through direct jumps and calls: walk it to
		 * report them (libipt decided the flow; this only names it).
		 */
		{
			uint64_t ip = b.ip, tg;
			unsigned j, sz;

			for (j = 0; j + 1 < b.ninsn; j++) {
				enum kind k = insn_at(ip, &sz, &tg);

				if ((k == K_UNCOND_JMP || k == K_CALL) && tg) {
					fprintf(o, "%" PRIx64 " %" PRIx64 " %s\n", ip, tg,
						kname[k]);
					ip = tg;
				} else if (k == K_NONE || !sz) {
					fprintf(o, "# cannot walk block at %" PRIx64 "\n", ip);
					break;
				} else {
					ip += sz;
				}
			}
		}
		ninsn += b.ninsn;
		prev = b.end_ip;
		have_prev = true;
	}
	fclose(o);
	outlen = strlen(out);
	printf("# thread %u instructions %" PRIu64 " errors %" PRIu64 "\n", tid,
	       ninsn, nerr);
	printf("# section thread %u\n", tid);
	fwrite(out, 1, outlen, stdout);
	free(out);
	out = NULL;
	pt_blk_free_decoder(dec);
	munmap(buf, size);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *sb;
	char line[4096];
	struct pt_image *image;
	struct pt_image_section_cache *iscache;
	struct {
		unsigned tid;
		char path[4096];
	} th[256];
	size_t nth = 0, i;

	if (argc != 2) {
		fprintf(stderr, "usage: ptblk PREFIX.sideband\n");
		return 2;
	}
	sb = fopen(argv[1], "r");
	if (!sb) {
		fprintf(stderr, "ptblk: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 1;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	image = pt_image_alloc("ptblk");
	/* Without a section cache libipt maps and unmaps on every switch. */
	iscache = pt_iscache_alloc("ptblk");
	if (!image || !iscache)
		return 1;
	pt_iscache_set_limit(iscache, 1ULL << 30);
	while (fgets(line, sizeof(line), sb)) {
		uint64_t s, e, off;
		char path[4096];
		unsigned tid;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "mmap %" SCNx64 " %" SCNx64 " %" SCNx64 " %4095s", &s,
			   &e, &off, path) == 4 &&
		    nmaps < 256) {
			struct map *m = &maps[nmaps++];
			uint64_t sz;
			int err;

			m->start = s;
			m->end = e;
			m->pgoff = off;
			m->data = map_file(path, &m->size);
			sz = e - s;
			if (off + sz > m->size)
				sz = m->size > off ? m->size - off : 0;
			err = 0;
			if (sz) {
				int isid = pt_iscache_add_file(iscache, path, off, sz, s);

				err = isid < 0 ? isid
					       : pt_image_add_cached(image, iscache, isid, NULL);
			}
			if (err < 0)
				fprintf(stderr, "ptblk: image %s: %s\n", path,
					pt_errstr(pt_errcode(err)));
		} else if (sscanf(line, "thread %u %4095s", &tid, path) == 2 &&
			   nth < 256) {
			th[nth].tid = tid;
			snprintf(th[nth].path, sizeof(th[nth].path), "%s", path);
			nth++;
		}
	}
	fclose(sb);
	for (i = 0; i < nth; i++)
		if (decode(th[i].path, th[i].tid, image))
			return 1;
	pt_image_free(image);
	pt_iscache_free(iscache);
	cs_close(&cs);
	return 0;
}
