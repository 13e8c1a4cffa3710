// SPDX-License-Identifier: MIT
/*
 * pt_backend/perf/perf_write.c - perf.data writer (see perf.h).
 *
 * Layout written: the 104-byte file header, the data section right after
 * it, then the feature section table (perf reads it at data.offset +
 * data.size), the feature payloads, the attr ids and the attrs.
 */
#include "perf.h"
#include "perf_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strace/internal/grow.h"

struct wattr {
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t nids;
};

struct feat {
	void *data;
	size_t size;
};

struct strace_perfw {
	int fd;
	uint64_t pos; /* file offset of the next byte */
	uint64_t data_start;
	struct wattr *attrs;
	size_t nattrs, capattrs;
	struct feat feats[PFMT_FEAT_BITS];
	struct pfmt_auxtrace_index_entry *index;
	size_t nindex, capindex;
	int err;
};

int strace_perf_pwrite_all(int fd, const void *buf, size_t len,
			   uint64_t *pos)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)*pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		*pos += (uint64_t)n;
	}
	return 0;
}

static int write_all(struct strace_perfw *w, const void *buf, size_t len)
{
	return strace_perf_pwrite_all(w->fd, buf, len, &w->pos);
}

int strace_perfw_open(struct strace_perfw **out, const char *path)
{
	struct strace_perfw *w = calloc(1, sizeof(*w));
	struct pfmt_file_header hdr;
	int err;

	if (!w)
		return -ENOMEM;
	/* 0600, as perf writes perf.data (a recording holds names and
	 * addresses), and never through a link: O_NOFOLLOW fails before
	 * O_TRUNC would empty what it points to */
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (w->fd < 0) {
		err = -errno;
		free(w);
		return err;
	}
	memset(&hdr, 0, sizeof(hdr));
	err = write_all(w, &hdr, sizeof(hdr));
	if (err) {
		strace_perfw_free(w);
		return err;
	}
	w->data_start = w->pos;
	*out = w;
	return 0;
}

int strace_perfw_add_attr(struct strace_perfw *w,
			  const struct perf_event_attr *attr,
			  const uint64_t *ids, size_t nids)
{
	struct wattr *a;

	if (attr->size < PERF_ATTR_SIZE_VER0 ||
	    attr->size > sizeof(struct perf_event_attr))
		return -EINVAL;
	if (w->nattrs && attr->size != w->attrs[0].attr.size)
		return -EINVAL;
	if (w->nattrs == w->capattrs) {
		a = strace_grow(w->attrs, &w->capattrs, sizeof(*a), 4);
		if (!a)
			return -ENOMEM;
		w->attrs = a;
	}
	a = &w->attrs[w->nattrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, attr, attr->size);
	if (nids) {
		a->ids = malloc(nids * sizeof(*ids));
		if (!a->ids)
			return -ENOMEM;
		memcpy(a->ids, ids, nids * sizeof(*ids));
	}
	a->nids = nids;
	w->nattrs++;
	return 0;
}

int strace_perfw_record(struct strace_perfw *w, const void *rec, size_t size)
{
	const struct pfmt_event_header *h = rec;

	if (size < sizeof(*h) || h->size > size || h->size % 8 ||
	    h->size < sizeof(*h))
		return -EINVAL;
	return write_all(w, rec, h->size);
}

int strace_perfw_auxtrace(struct strace_perfw *w, struct pfmt_auxtrace *rec,
			  const void *data, size_t len)
{
	struct {
		struct pfmt_event_header h;
		struct pfmt_auxtrace a;
	} r;
	static const uint8_t zero[8];
	uint64_t start = w->pos;
	size_t pad;
	int err;

	if (w->nindex == w->capindex) {
		void *p = strace_grow(w->index, &w->capindex,
				      sizeof(*w->index), 16);

		if (!p)
			return -ENOMEM;
		w->index = p;
	}
	/*
	 * Records stay 8-byte aligned: the data is padded with zeros, which
	 * Intel PT decoders read as PAD packets; size includes the padding
	 * (perf record does the same).
	 */
	pad = (8 - len % 8) % 8;
	rec->size = len + pad;
	r.h.type = PFMT_RECORD_AUXTRACE;
	r.h.misc = 0;
	r.h.size = sizeof(r);
	r.a = *rec;
	err = write_all(w, &r, sizeof(r));
	if (!err)
		err = write_all(w, data, len);
	if (!err && pad)
		err = write_all(w, zero, pad);
	if (err)
		return err;
	w->index[w->nindex].file_offset = start;
	w->index[w->nindex].sz = sizeof(r); /* header.size: perf checks it */
	w->nindex++;
	return 0;
}

int strace_perfw_feature(struct strace_perfw *w, unsigned int feat,
			 const void *payload, size_t size)
{
	void *p;

	if (feat == PFMT_FEAT_RESERVED || feat >= PFMT_FEAT_BITS ||
	    feat == PFMT_FEAT_AUXTRACE)
		return -EINVAL;
	p = malloc(size ? size : 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, payload, size);
	free(w->feats[feat].data);
	w->feats[feat].data = p;
	w->feats[feat].size = size;
	return 0;
}

int strace_perfw_feature_string(struct strace_perfw *w, unsigned int feat,
				const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t len = (uint32_t)((n + 63) & ~(size_t)63);
	char *buf = calloc(1, 4 + len);
	int err;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, &len, 4);
	memcpy(buf + 4, s, n);
	err = strace_perfw_feature(w, feat, buf, 4 + len);
	free(buf);
	return err;
}

uint64_t strace_perfw_data_size(const struct strace_perfw *w)
{
	return w->pos - w->data_start;
}

static int write_pad8(struct strace_perfw *w)
{
	static const char zero[8];

	if (w->pos % 8)
		return write_all(w, zero, 8 - w->pos % 8);
	return 0;
}

int strace_perfw_close(struct strace_perfw *w)
{
	struct pfmt_file_header hdr;
	struct pfmt_section secs[PFMT_FEAT_BITS];
	uint64_t table, end;
	unsigned int i, n = 0;
	int err = 0;

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = PFMT_MAGIC;
	hdr.size = sizeof(hdr);
	hdr.data.offset = w->data_start;
	hdr.data.size = w->pos - w->data_start;

	if (w->nindex) {
		size_t sz = 8 + w->nindex * sizeof(*w->index);
		char *p = malloc(sz);
		uint64_t nr = w->nindex;

		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(p, &nr, 8);
		memcpy(p + 8, w->index, w->nindex * sizeof(*w->index));
		free(w->feats[PFMT_FEAT_AUXTRACE].data);
		w->feats[PFMT_FEAT_AUXTRACE].data = p;
		w->feats[PFMT_FEAT_AUXTRACE].size = sz;
	}
	for (i = 1; i < PFMT_FEAT_BITS; i++)
		if (w->feats[i].data)
			n++;
	/* The section table first, payloads after it. */
	table = w->pos;
	end = table + n * sizeof(struct pfmt_section);
	n = 0;
	for (i = 1; i < PFMT_FEAT_BITS; i++) {
		if (!w->feats[i].data)
			continue;
		hdr.adds_features[i / 64] |= 1ULL << (i % 64);
		secs[n].offset = end;
		secs[n].size = w->feats[i].size;
		end += (w->feats[i].size + 7) & ~7ULL;
		n++;
	}
	err = write_all(w, secs, n * sizeof(secs[0]));
	for (i = 1; !err && i < PFMT_FEAT_BITS; i++) {
		if (!w->feats[i].data)
			continue;
		err = write_all(w, w->feats[i].data, w->feats[i].size);
		if (!err)
			err = write_pad8(w);
	}
	if (err)
		goto out;
	/* Attr ids, then the attrs, each followed by its ids section. */
	{
		uint64_t *idoff = calloc(w->nattrs ? w->nattrs : 1, 8);
		size_t asz = w->nattrs ? w->attrs[0].attr.size : 0;

		if (!idoff) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; !err && i < w->nattrs; i++) {
			idoff[i] = w->pos;
			err = write_all(w, w->attrs[i].ids, w->attrs[i].nids * 8);
		}
		hdr.attrs.offset = w->pos;
		hdr.attr_size = asz + sizeof(struct pfmt_section);
		for (i = 0; !err && i < w->nattrs; i++) {
			struct pfmt_section ids = { idoff[i],
						    w->attrs[i].nids * 8 };

			err = write_all(w, &w->attrs[i].attr, asz);
			if (!err)
				err = write_all(w, &ids, sizeof(ids));
		}
		hdr.attrs.size = w->nattrs * hdr.attr_size;
		free(idoff);
	}
	if (!err) {
		w->pos = 0;
		err = write_all(w, &hdr, sizeof(hdr));
	}
	if (!err && close(w->fd))
		err = -errno;
	w->fd = -1;
out:
	strace_perfw_free(w);
	return err;
}

void strace_perfw_free(struct strace_perfw *w)
{
	size_t i;

	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (i = 0; i < w->nattrs; i++)
		free(w->attrs[i].ids);
	free(w->attrs);
	for (i = 0; i < PFMT_FEAT_BITS; i++)
		free(w->feats[i].data);
	free(w->index);
	free(w);
}
