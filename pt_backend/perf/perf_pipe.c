/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf_pipe.c - perf's pipe mode into a perf.data file
 * (perf.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"
#include "strace/error.h"

/* the largest record (its size is 16 bits), and an AUXTRACE's data read
 * in pieces of this much */
#define CHUNK (1u << 20)

/* n bytes from fd into p: 1, 0 at the end before any byte, -1 with errno
 * (EPIPE: the end inside them) */
static int read_all(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			if (!got)
				return 0;
			errno = EPIPE;
			return -1;
		}
		got += (size_t)r;
	}
	return 1;
}

/* as read_all, the end being an error too */
static int read_exact(int fd, void *p, size_t n)
{
	int rc = read_all(fd, p, n);

	if (rc == 0)
		errno = EPIPE;
	return rc == 1 ? 0 : -1;
}

static int read_err(void)
{
	return errno == EPIPE ? -STRACE_E_PERF_TRUNCATED : -errno;
}

static int is_pipe_head(const unsigned char head[16])
{
	uint64_t magic, hsize;

	memcpy(&magic, head, 8);
	memcpy(&hsize, head + 8, 8);
	return magic == PFMT_MAGIC && hsize == 16;
}

int strace_perf_pipe_head(int fd, unsigned char head[16])
{
	int rc = read_all(fd, head, 16);

	if (rc < 0)
		return errno == EPIPE ? 0 : -errno;
	return rc && is_pipe_head(head);
}

/* A HEADER_ATTR record: attr (attr.size bytes), then its ids. */
static int copy_attr(struct strace_perfw *w, const unsigned char *rec,
		     size_t size)
{
	struct perf_event_attr attr;
	uint32_t asize;
	size_t body = size - sizeof(struct pfmt_event_header);
	const unsigned char *p = rec + sizeof(struct pfmt_event_header);

	memset(&attr, 0, sizeof(attr));
	if (body < 8)
		return -STRACE_E_PERF_RECORD;
	memcpy(&asize, p + 4, 4);
	if (asize < 64 || asize % 8 || asize > body || (body - asize) % 8)
		return -STRACE_E_PERF_RECORD;
	memcpy(&attr, p, asize < sizeof(attr) ? asize : sizeof(attr));
	if (asize > sizeof(attr))
		attr.size = sizeof(attr);
	const uint64_t *ids = (const uint64_t *)(const void *)(p + asize);
	return strace_perfw_add_attr(w, &attr, ids, (body - asize) / 8);
}

/*
 * An AUXTRACE record: its header is in rec, its a.size bytes of trace
 * follow in the pipe; *off counts them once they are read.
 */
static int copy_auxtrace(int fd, struct strace_perfw *w,
			 const unsigned char *rec, size_t size, uint64_t *off)
{
	struct pfmt_auxtrace a;
	unsigned char *buf;
	int rc;

	if (size < sizeof(struct pfmt_event_header) + sizeof(a))
		return -STRACE_E_PERF_RECORD;
	memcpy(&a, rec + sizeof(struct pfmt_event_header), sizeof(a));
	/* (an AUX area is at most a few GB) */
	if (a.size > (1ull << 32))
		return -STRACE_E_PERF_RECORD;
	buf = malloc(a.size ? (size_t)a.size : 1);
	if (!buf)
		return -ENOMEM;
	if (read_exact(fd, buf, (size_t)a.size) < 0) {
		free(buf);
		return read_err();
	}
	rc = strace_perfw_auxtrace(w, &a, buf, (size_t)a.size);
	free(buf);
	*off += a.size;
	return rc;
}

int strace_perf_pipe_copy(int fd, const unsigned char head[16],
			  const char *path, uint64_t *off)
{
	struct strace_perfw *w;
	unsigned char *rec = NULL, *data = NULL;
	int rc;

	*off = 0;
	if (!is_pipe_head(head))
		return -STRACE_E_PERF_MAGIC;
	rc = strace_perfw_open(&w, path);
	if (rc < 0)
		return rc;
	rec = malloc(65536);
	data = malloc(CHUNK);
	if (!rec || !data) {
		rc = -ENOMEM;
		goto out;
	}
	*off = 16;
	for (;;) {
		struct pfmt_event_header h;
		int got = read_all(fd, &h, sizeof(h));
		if (got == 0)
			break; /* the end, between two records */
		if (got < 0) {
			rc = read_err();
			goto out;
		}
		if (h.size < sizeof(h)) {
			rc = -STRACE_E_PERF_RECORD;
			goto out;
		}
		memcpy(rec, &h, sizeof(h));
		if (read_exact(fd, rec + sizeof(h), h.size - sizeof(h)) < 0) {
			rc = read_err();
			goto out;
		}
		switch (h.type) {
		case PFMT_RECORD_HEADER_ATTR:
			rc = copy_attr(w, rec, h.size);
			break;
		case PFMT_RECORD_HEADER_FEATURE: {
			/* u64 feature bit, then its payload */
			uint64_t feat;
			if (h.size < sizeof(h) + 8) {
				rc = -STRACE_E_PERF_RECORD;
				goto out;
			}
			memcpy(&feat, rec + sizeof(h), 8);
			rc = feat >= PFMT_FEAT_BITS || feat == PFMT_FEAT_AUXTRACE
				     ? 0 /* (the writer makes the index) */
				     : strace_perfw_feature(
					       w, (unsigned)feat,
					       rec + sizeof(h) + 8,
					       h.size - sizeof(h) - 8);
			if (rc == -EINVAL)
				rc = 0; /* a bit this writer does not keep */
			break;
		}
		case PFMT_RECORD_HEADER_TRACING_DATA: {
			/* u32 size, then that much tracing data: not used */
			uint32_t n;
			if (h.size < sizeof(h) + 4) {
				rc = -STRACE_E_PERF_RECORD;
				goto out;
			}
			memcpy(&n, rec + sizeof(h), 4);
			for (uint64_t left = n; left && rc >= 0;) {
				size_t k = left < CHUNK ? (size_t)left : CHUNK;
				if (read_exact(fd, data, k) < 0) {
					rc = read_err();
					goto out;
				}
				left -= k;
				*off += k;
			}
			break;
		}
		case PFMT_RECORD_HEADER_EVENT_TYPE:
		case PFMT_RECORD_HEADER_BUILD_ID:
			/* a file keeps these in features we do not use */
			break;
		case PFMT_RECORD_AUXTRACE:
			rc = copy_auxtrace(fd, w, rec, h.size, off);
			break;
		default:
			rc = strace_perfw_record(w, rec, h.size);
		}
		if (rc < 0)
			goto out;
		*off += h.size;
	}
	free(rec);
	free(data);
	return strace_perfw_close(w);
out:
	free(rec);
	free(data);
	strace_perfw_free(w);
	unlink(path);
	return rc;
}
