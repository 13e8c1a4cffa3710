/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bench_libipt_loop.c - the bare libipt loop: the floor under
 * any decoder built on libipt's block decoder, beside which
 * tests/bench/decoder.sh puts `ptrace-capture -i`.
 *
 *   bench_libipt_loop [--callback] PERF.DATA [VDSO]
 *
 * Reads PERF.DATA with pt_backend's reader (perf.h): each executable
 * MMAP/MMAP2 record becomes a section of one pt_image_section_cache
 * (pt_iscache_add_file), added to one pt_image (pt_image_add_cached, no
 * address space: one process; a [vdso] mapping is read from VDSO if given,
 * else left out); the AUXTRACE data of each queue (one thread, or one CPU)
 * is taken in the order of its AUX offsets, contiguous buffers joined.
 * Each queue is decoded by one block decoder over that image:
 * pt_blk_sync_forward, then pt_blk_event until no event is pending and
 * pt_blk_next, until the end of the trace (pts_eos) or an error; after an
 * error, sync forward to the next PSB, as ptxed does. Per block it adds
 * ninsn to a count and nothing else: no event is kept, no address is
 * named, nothing is written.
 *
 * --callback: the same loop with the image's code read through a
 * callback (pt_image_set_callback, a copy out of the mapped files) instead
 * of the section cache, as the reference decoder (decoder/ref.c) reads
 * ours. libipt has no sections then, so none of its per-section block
 * caches: this shows what that way of reading costs libipt.
 *
 * Prints on stdout, as the other bench tools do:
 *   RESULT libipt_loop_insns <instructions> <seconds> <instructions/s>
 *   RESULT libipt_loop_blocks <blocks> <seconds> <blocks/s>
 * (libipt_loop_callback_* with --callback)
 * where seconds are the decode loops' alone (CLOCK_MONOTONIC; reading the
 * file and building the image are outside; tests/bench/decoder.sh times
 * the whole process), and on stderr one summary line: queues, PT bytes,
 * blocks, instructions, events, syncs, errors and mappings left out, with
 * the first errors (offset and libipt's text) before it.
 *
 * Exit status: 0; 1 for a usage or read failure; 2 if the trace has no
 * PT or nothing decoded.
 */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pt_backend/perf/perf.h"

/* One AUXTRACE record's data. */
struct aux {
	const uint8_t *data;
	uint64_t size, offset;
};

/* The AUX data of one perf queue (one thread or one CPU). */
struct queue {
	uint32_t idx, tid, cpu;
	struct aux *v;
	size_t n, cap;
};

/* --callback: a mapping of the process, its file mapped whole. */
struct cbmap {
	uint64_t addr, len, pgoff;
	const uint8_t *file;
	uint64_t file_size;
};

struct cbimage {
	struct cbmap *v;
	size_t n, cap;
};

struct counts {
	uint64_t bytes, blocks, insns, events, syncs, errors;
};

#define MAX_ERRORS_SHOWN 10

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	nv = realloc(*v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

static int cmp_aux(const void *a, const void *b)
{
	const struct aux *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* --callback's read: the latest mapping holding ip wins, as a later MMAP
 * record replaces what it overlaps. */
static int read_code(uint8_t *buf, size_t size, const struct pt_asid *asid,
		     uint64_t ip, void *arg)
{
	const struct cbimage *cb = arg;

	(void)asid;
	for (size_t i = cb->n; i-- > 0;) {
		const struct cbmap *m = &cb->v[i];
		uint64_t off, n;

		if (ip < m->addr || ip - m->addr >= m->len)
			continue;
		off = m->pgoff + (ip - m->addr);
		if (off >= m->file_size)
			return -pte_nomap;
		n = m->len - (ip - m->addr);
		if (n > m->file_size - off)
			n = m->file_size - off;
		if (n > size)
			n = size;
		memcpy(buf, m->file + off, n);
		return (int)n;
	}
	return -pte_nomap;
}

/* --callback: file mapped whole, for read_code(). Returns 0, -errno. */
static int cb_add(struct cbimage *cb, const char *file, uint64_t addr,
		  uint64_t len, uint64_t pgoff)
{
	struct stat st;
	void *p;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENODEV;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	if (grow((void **)&cb->v, &cb->cap, cb->n, sizeof(*cb->v))) {
		munmap(p, (size_t)st.st_size);
		return -ENOMEM;
	}
	cb->v[cb->n++] = (struct cbmap){addr, len, pgoff, p,
					(uint64_t)st.st_size};
	return 0;
}

/* One error of the decode: counted, the first few shown with where. */
static void note_error(struct counts *c, struct pt_block_decoder *dec,
		       int status, const char *what)
{
	uint64_t off = 0;

	if (c->errors++ >= MAX_ERRORS_SHOWN)
		return;
	pt_blk_get_offset(dec, &off);
	fprintf(stderr, "bench_libipt_loop: %s: %s at PT offset 0x%" PRIx64 "\n",
		what, pt_errstr(pt_errcode(status)), off);
}

/*
 * Decode len bytes of PT at buf over image (or, if cb, through
 * read_code()): blocks and instructions counted, events drained and
 * dropped, a resync after each error. Returns 0, -ENOMEM.
 */
static int decode(const uint8_t *buf, uint64_t len, struct pt_image *image,
		  struct cbimage *cb, struct counts *c)
{
	struct pt_block_decoder *dec;
	struct pt_config cfg;
	uint64_t last_sync = 0;
	int have_sync = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec)
		return -ENOMEM;
	if ((cb ? pt_image_set_callback(pt_blk_get_image(dec), read_code, cb)
		: pt_blk_set_image(dec, image)) < 0) {
		pt_blk_free_decoder(dec);
		return -ENOMEM;
	}
	c->bytes += len;
	for (;;) {
		int status = pt_blk_sync_forward(dec);

		if (status < 0) {
			uint64_t off;

			if (status == -pte_eos)
				break;
			note_error(c, dec, status, "sync");
			/* no progress past the last PSB: there never will be */
			if (pt_blk_get_sync_offset(dec, &off) < 0 ||
			    (have_sync && off <= last_sync))
				break;
			last_sync = off;
			have_sync = 1;
			continue;
		}
		if (pt_blk_get_sync_offset(dec, &last_sync) == 0)
			have_sync = 1;
		c->syncs++;
		for (;;) {
			struct pt_block blk;
			struct pt_event ev;

			while (status & pts_event_pending) {
				status = pt_blk_event(dec, &ev, sizeof(ev));
				if (status < 0)
					break;
				c->events++;
			}
			if (status < 0)
				break;
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			blk.ninsn = 0;
			status = pt_blk_next(dec, &blk, sizeof(blk));
			/* a block cut short by an error still ran */
			if (blk.ninsn) {
				c->blocks++;
				c->insns += blk.ninsn;
			}
			if (status < 0)
				break;
		}
		if (status == -pte_eos)
			break;
		note_error(c, dec, status, "decode");
	}
	pt_blk_free_decoder(dec);
	return 0;
}

/* An executable mapping of a MMAP or MMAP2 record: *path etc., 1; 0 if
 * the record maps no code; -1 if it is malformed. */
static int exec_mapping(const struct strace_perf_rec *r, const char **path,
			uint64_t *addr, uint64_t *len, uint64_t *pgoff)
{
	size_t blen = (size_t)r->size - 8, hdr;
	struct pfmt_mmap2 m2;
	struct pfmt_mmap m1;
	int exec;

	if (r->size < 8)
		return -1;
	if (r->type == PFMT_RECORD_MMAP2) {
		hdr = sizeof(m2);
		if (blen < hdr)
			return -1;
		memcpy(&m2, r->body, sizeof(m2));
		*addr = m2.addr;
		*len = m2.len;
		*pgoff = m2.pgoff;
		exec = m2.prot ? !!(m2.prot & PROT_EXEC)
			       : !(r->misc & PFMT_MISC_MMAP_DATA);
	} else {
		hdr = sizeof(m1);
		if (blen < hdr)
			return -1;
		memcpy(&m1, r->body, sizeof(m1));
		*addr = m1.addr;
		*len = m1.len;
		*pgoff = m1.pgoff;
		exec = !(r->misc & PFMT_MISC_MMAP_DATA);
	}
	*path = strace_perf_string((const char *)r->body + hdr, blen - hdr);
	if (!*path)
		return -1;
	return exec && *len;
}

int main(int argc, char **argv)
{
	struct pt_image_section_cache *iscache = NULL;
	struct pt_image *image = NULL;
	struct cbimage cbimg = {NULL, 0, 0};
	int callback = 0;
	struct strace_perf perf;
	struct strace_perf_rec r;
	struct queue *qs = NULL;
	size_t nq = 0, capq = 0, nmaps = 0, left_out = 0;
	struct counts c;
	const char *vdso;
	uint64_t err_off = 0;
	double t0, t1;
	int rc, status = 1;

	if (argc > 1 && strcmp(argv[1], "--callback") == 0) {
		callback = 1;
		argv++;
		argc--;
	}
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: bench_libipt_loop [--callback] "
				"PERF.DATA [VDSO]\n");
		return 1;
	}
	vdso = argc > 2 ? argv[2] : NULL;
	memset(&c, 0, sizeof(c));
	rc = strace_perf_open(argv[1], &perf, &err_off);
	if (rc < 0) {
		fprintf(stderr, "bench_libipt_loop: %s: %s (offset 0x%" PRIx64
				")\n",
			argv[1], strace_strerror(rc), err_off);
		return 1;
	}
	iscache = pt_iscache_alloc("bench");
	image = pt_image_alloc("bench");
	if (!iscache || !image) {
		fprintf(stderr, "bench_libipt_loop: out of memory\n");
		goto out;
	}

	while ((rc = strace_perf_next(&perf, &r)) > 0) {
		if (r.type == PFMT_RECORD_MMAP || r.type == PFMT_RECORD_MMAP2) {
			const char *path, *file;
			uint64_t addr, len, pgoff;
			int isid, m = exec_mapping(&r, &path, &addr, &len,
						   &pgoff);

			if (m < 0) {
				fprintf(stderr,
					"bench_libipt_loop: %s: malformed "
					"mapping record at offset 0x%" PRIx64
					"\n",
					argv[1], r.offset);
				goto out;
			}
			if (!m)
				continue;
			file = path;
			if (strcmp(path, "[vdso]") == 0 && vdso) {
				file = vdso;
				pgoff = 0;
			} else if (path[0] != '/') {
				fprintf(stderr,
					"bench_libipt_loop: left out: %s at "
					"0x%" PRIx64 "\n",
					path, addr);
				left_out++;
				continue;
			}
			if (callback) {
				m = cb_add(&cbimg, file, addr, len, pgoff);
				if (m < 0) {
					fprintf(stderr,
						"bench_libipt_loop: left out: "
						"%s at 0x%" PRIx64 " (%s)\n",
						file, addr, strerror(-m));
					left_out++;
					continue;
				}
				nmaps++;
				continue;
			}
			isid = pt_iscache_add_file(iscache, file, pgoff, len,
						   addr);
			m = isid < 0 ? isid
				     : pt_image_add_cached(image, iscache, isid,
							   NULL);
			if (m < 0) {
				fprintf(stderr,
					"bench_libipt_loop: left out: %s at "
					"0x%" PRIx64 " (%s)\n",
					file, addr, pt_errstr(pt_errcode(m)));
				left_out++;
				continue;
			}
			nmaps++;
		} else if (r.type == PFMT_RECORD_AUXTRACE) {
			struct pfmt_auxtrace at;
			struct queue *q = NULL;

			if ((size_t)r.size - 8 < sizeof(at)) {
				fprintf(stderr,
					"bench_libipt_loop: %s: malformed "
					"AUXTRACE at offset 0x%" PRIx64 "\n",
					argv[1], r.offset);
				goto out;
			}
			memcpy(&at, r.body, sizeof(at));
			for (size_t i = 0; i < nq; i++)
				if (qs[i].idx == at.idx && qs[i].tid == at.tid &&
				    qs[i].cpu == at.cpu)
					q = &qs[i];
			if (!q) {
				if (grow((void **)&qs, &capq, nq, sizeof(*qs)))
					goto nomem;
				q = &qs[nq++];
				memset(q, 0, sizeof(*q));
				q->idx = at.idx;
				q->tid = at.tid;
				q->cpu = at.cpu;
			}
			if (grow((void **)&q->v, &q->cap, q->n, sizeof(*q->v)))
				goto nomem;
			q->v[q->n++] = (struct aux){r.aux_data, r.aux_size,
						    at.offset};
		}
	}
	if (rc < 0) {
		fprintf(stderr, "bench_libipt_loop: %s: %s at offset 0x%" PRIx64
				"\n",
			argv[1], strace_strerror(rc), r.offset);
		goto out;
	}
	if (!nq) {
		fprintf(stderr, "bench_libipt_loop: %s: no AUX data\n",
			argv[1]);
		status = 2;
		goto out;
	}

	t0 = now_s();
	for (size_t i = 0; i < nq; i++) {
		struct queue *q = &qs[i];
		size_t j = 0;

		qsort(q->v, q->n, sizeof(*q->v), cmp_aux);
		while (j < q->n) {
			/* a run of buffers, each starting where the last
			 * ended, is one stream */
			size_t k = j + 1;
			uint64_t len = q->v[j].size, at = 0;
			uint8_t *joined = NULL;
			const uint8_t *buf = q->v[j].data;

			while (k < q->n &&
			       q->v[k].offset ==
				       q->v[k - 1].offset + q->v[k - 1].size) {
				len += q->v[k].size;
				k++;
			}
			if (k > j + 1) {
				joined = malloc(len);
				if (!joined)
					goto nomem;
				for (size_t m = j; m < k; m++) {
					memcpy(joined + at, q->v[m].data,
					       q->v[m].size);
					at += q->v[m].size;
				}
				buf = joined;
			}
			rc = decode(buf, len, image, callback ? &cbimg : NULL,
				    &c);
			free(joined);
			if (rc < 0)
				goto nomem;
			j = k;
		}
	}
	t1 = now_s();

	fprintf(stderr,
		"bench_libipt_loop: %zu queues, %" PRIu64 " bytes of PT, "
		"%zu mappings (%zu left out): %" PRIu64 " blocks, %" PRIu64
		" instructions, %" PRIu64 " events, %" PRIu64 " syncs, %" PRIu64
		" errors\n",
		nq, c.bytes, nmaps, left_out, c.blocks, c.insns, c.events,
		c.syncs, c.errors);
	printf("RESULT libipt_loop%s_insns %" PRIu64 " %.6f %.0f\n",
	       callback ? "_callback" : "", c.insns, t1 - t0,
	       (double)c.insns / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
	printf("RESULT libipt_loop%s_blocks %" PRIu64 " %.6f %.0f\n",
	       callback ? "_callback" : "", c.blocks, t1 - t0,
	       (double)c.blocks / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
	status = c.insns ? 0 : 2;
	goto out;
nomem:
	fprintf(stderr, "bench_libipt_loop: out of memory\n");
	status = 1;
out:
	for (size_t i = 0; i < cbimg.n; i++)
		munmap((void *)(uintptr_t)cbimg.v[i].file,
		       (size_t)cbimg.v[i].file_size);
	free(cbimg.v);
	for (size_t i = 0; i < nq; i++)
		free(qs[i].v);
	free(qs);
	pt_image_free(image);
	pt_iscache_free(iscache);
	strace_perf_close(&perf);
	return status;
}
