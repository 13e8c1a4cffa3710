/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_ring.c - fuzz target over what a reader does with a
 * ring file someone else wrote: the input is the file's bytes. Whatever
 * they are, opening the ring, its --stat, reading every event as text and
 * as JSON lines (cli/view/format.c, as ptrace-read prints them), saving it as
 * ptrace-read -f ring does, walking the string table and following the
 * ring until it ends must finish, without a crash, a hang, or a read out
 * of bounds. Every line must also be what the formats promise: a text
 * line holds no control byte but its final newline; a JSON line is one
 * valid JSON object in valid UTF-8.
 *
 * The input is written to a file of our own in /dev/shm (strace_ring_open
 * takes a path, and wants a regular file of ours, not a /proc/self/fd
 * link), the same file for every input.
 *
 * Built two ways, like fuzz_perf.c: for libFuzzer (make fuzz), and with
 * fuzz_main.c for make check.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/view/view.h"
#include "strace/ring.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BATCH_MAX 512     /* events per reader batch (ptrace-read: 16384) */
#define OUT_CAP (64u << 10)
#define FOLLOW_ROUNDS 8   /* reads and status checks once drained */
#define READ_ROUNDS 4096  /* batches at most: a hostile ring cannot make
			   * the reader loop forever */

static char path[64], save_path[64];
static char *out; /* OUT_CAP + FMT_LINE_MAX: ASan sees a line too long */

/* The files go as soon as they are open (the mappings and descriptors are
 * all the reader needs); an input that hangs before that leaves its file
 * to the end of the process. */
static void remove_files(void)
{
	unlink(path);
	unlink(save_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/fuzz_ring_%d.srb", dir, (int)getpid());
	snprintf(save_path, sizeof(save_path), "%s/fuzz_ring_%d.saved.srb", dir,
		 (int)getpid());
	out = malloc(OUT_CAP + FMT_LINE_MAX);
	if (!out)
		abort();
	atexit(remove_files);
	fmt_init();
	return 0;
}

/* --- what the lines must be ---------------------------------------------- */

static void bad_line(const char *what, const char *line, const char *end)
{
	fprintf(stderr, "fuzz_ring: %s: %.*s\n", what, (int)(end - line), line);
	abort();
}

/* Bytes of the valid UTF-8 sequence at p (before end), or 0. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned c = *p;
	size_t n = c < 0xc2   ? 0
		   : c < 0xe0 ? 2
		   : c < 0xf0 ? 3
		   : c < 0xf5 ? 4
			      : 0;
	uint32_t cp;

	if (!n || (size_t)(end - p) < n)
		return 0;
	cp = c & (0x3fu >> (n - 1));
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3fu);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* A small JSON checker (RFC 8259): 1 and *pp past the value, or 0. */
static int json_value(const unsigned char **pp, const unsigned char *end,
		      int depth);

static void json_ws(const unsigned char **pp, const unsigned char *end)
{
	while (*pp < end &&
	       (**pp == ' ' || **pp == '\t' || **pp == '\r' || **pp == '\n'))
		(*pp)++;
}

static int json_string(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp;

	if (p == end || *p++ != '"')
		return 0;
	while (p < end && *p != '"') {
		if (*p < 0x20)
			return 0;
		if (*p == '\\') {
			if (++p == end)
				return 0;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (p + i >= end ||
					    !strchr("0123456789abcdefABCDEF",
						    p[i]) ||
					    !p[i])
						return 0;
				p += 5;
			} else if (*p && strchr("\"\\/bfnrt", *p)) {
				p++;
			} else {
				return 0;
			}
		} else if (*p >= 0x80) {
			size_t n = utf8_seq(p, end);
			if (!n)
				return 0;
			p += n;
		} else {
			p++;
		}
	}
	if (p == end)
		return 0;
	*pp = p + 1;
	return 1;
}

static int json_number(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp, *d;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0') {
		p++;
	} else {
		for (d = p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (p == d)
			return 0;
	}
	if (p < end && *p == '.') {
		for (d = ++p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (p == d)
			return 0;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		for (d = p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (p == d)
			return 0;
	}
	*pp = p;
	return 1;
}

static int json_word(const unsigned char **pp, const unsigned char *end,
		     const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(end - *pp) < n || memcmp(*pp, w, n))
		return 0;
	*pp += n;
	return 1;
}

/* An object or array body after its opening bracket. */
static int json_members(const unsigned char **pp, const unsigned char *end,
			int depth, int object)
{
	char close = object ? '}' : ']';

	json_ws(pp, end);
	if (*pp < end && **pp == close) {
		(*pp)++;
		return 1;
	}
	for (;;) {
		if (object) {
			if (!json_string(pp, end))
				return 0;
			json_ws(pp, end);
			if (*pp == end || *(*pp)++ != ':')
				return 0;
		}
		if (!json_value(pp, end, depth + 1))
			return 0;
		json_ws(pp, end);
		if (*pp == end)
			return 0;
		if (**pp == close) {
			(*pp)++;
			return 1;
		}
		if (*(*pp)++ != ',')
			return 0;
		json_ws(pp, end);
	}
}

static int json_value(const unsigned char **pp, const unsigned char *end,
		      int depth)
{
	if (depth > 16)
		return 0;
	json_ws(pp, end);
	if (*pp == end)
		return 0;
	switch (**pp) {
	case '{':
		(*pp)++;
		return json_members(pp, end, depth, 1);
	case '[':
		(*pp)++;
		return json_members(pp, end, depth, 0);
	case '"':
		return json_string(pp, end);
	case 't':
		return json_word(pp, end, "true");
	case 'f':
		return json_word(pp, end, "false");
	case 'n':
		return json_word(pp, end, "null");
	default:
		return json_number(pp, end);
	}
}

/* Every line of buf[0..end): one JSON object each, or text without
 * control bytes. */
static void check_lines(const char *buf, const char *end, int json)
{
	const char *line = buf;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			bad_line("a line without its newline", line, end);
		if (nl - line >= FMT_LINE_MAX)
			bad_line("a line longer than FMT_LINE_MAX", line, nl);
		if (json) {
			const unsigned char *p = (const unsigned char *)line;
			if (*line != '{' ||
			    !json_value(&p, (const unsigned char *)nl, 0) ||
			    p != (const unsigned char *)nl)
				bad_line("not one JSON object", line, nl);
		} else {
			for (const char *c = line; c < nl; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					bad_line("a control byte in text",
						 line, nl);
		}
		line = nl + 1;
	}
}

/* --- the reader ---------------------------------------------------------- */

struct rd {
	struct strace_ring *ring;
	struct strace_reader *r;
	struct strace_names *names;
	struct fmt text, json;
	struct fmt_filter flt;
	int flight;
	struct strace_event *copy;
	/* -f ring */
	struct strace_ring *dst;
	struct strace_writer *w;
};

/* Format ev[0..n) as ptrace-read does, both ways, and check the lines. */
static void show(struct rd *d, const struct strace_event *ev, size_t n,
		 uint64_t seq)
{
	for (int json = 0; json < 2; json++) {
		const struct strace_event *e = ev;
		uint64_t s = seq;
		size_t left = n, done;

		while (left) {
			char *p = json ? fmt_json_batch(&d->json, out,
							out + OUT_CAP, e, left,
							s, &d->flt, &done)
				       : fmt_text_batch(&d->text, out,
							out + OUT_CAP, e, left,
							s, &d->flt, &done);
			check_lines(out, p, json);
			e += done;
			s += done;
			left -= done;
		}
	}
	for (size_t i = 0; d->w && i < n; i++) {
		struct strace_event *slot;
		if (!fmt_wanted(&d->flt, ev[i].type))
			continue;
		slot = strace_writer_slot(d->w);
		if (!slot)
			break; /* the saved ring is full: it is only ours */
		*slot = ev[i];
	}
}

static void show_lost(struct rd *d, uint64_t count, uint64_t first)
{
	struct strace_event e;
	char *p;

	fmt_lost_event(&e, count, first);
	p = fmt_text_event(&d->text, out, &e, first);
	check_lines(out, p, 0);
	p = fmt_json_event(&d->json, out, &e, first);
	check_lines(out, p, 1);
}

/* ptrace-read's one_batch(). */
static void one_batch(struct rd *d, const struct strace_batch *b)
{
	size_t k;

	if (b->lost)
		show_lost(d, b->lost, b->seq - b->lost);
	if (!b->n)
		return;
	if (d->names)
		(void)strace_names_update(d->names);
	if (d->dst)
		(void)strace_ring_sync_strings(d->dst, d->ring);
	if (!d->flight) {
		show(d, b->ev, b->n, b->seq);
		k = strace_reader_release(d->r, b);
		if (k)
			show_lost(d, k, b->seq);
		return;
	}
	memcpy(d->copy, b->ev, b->n * sizeof(*b->ev));
	k = strace_reader_release(d->r, b);
	if (k > b->n)
		k = b->n;
	if (k)
		show_lost(d, k, b->seq);
	show(d, d->copy + k, b->n - k, b->seq + k);
}

/* ptrace-read --stat: the header, the string table by kind, the readers. */
static void stat_ring(struct strace_ring *ring, struct strace_ring_stat *st)
{
	struct strace_reader_info ri[STRACE_RING_MAX_READERS];
	struct strace_string s, again;
	uint64_t off = 0, at, kinds[5] = {0}, lost = 0;
	char when[64];
	time_t t;
	struct tm tm;
	int rc, nr;

	while (at = off, (rc = strace_ring_string_next(ring, &off, &s)) > 0) {
		kinds[s.kind == STRACE_EV_SYMBOL    ? 0
		      : s.kind == STRACE_EV_DSO     ? 1
		      : s.kind == STRACE_EV_THREAD  ? 2
		      : s.kind == STRACE_EV_PROCESS ? 3
						    : 4]++;
		/* what a definition event's offset finds */
		if (strace_ring_string(ring, at, &again) != 0 ||
		    again.str != s.str || again.len != s.len ||
		    strlen(s.str) > s.len)
			abort();
		if (off <= at)
			abort(); /* the walk must move on */
	}
	t = (time_t)(st->created_ns / 1000000000u);
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	nr = strace_ring_reader_info(ring, ri, STRACE_RING_MAX_READERS);
	if (nr < 0 || nr > STRACE_RING_MAX_READERS)
		abort();
	for (int i = 0; i < nr; i++)
		lost += ri[i].lost;
	(void)lost;
	(void)strace_strerror(rc);
}

/* ptrace-read -f ring: the saved ring, sized from the header. */
static void save_create(struct rd *d, const struct strace_ring_stat *st)
{
	struct strace_ring_opts ro;

	memset(&ro, 0, sizeof(ro));
	ro.size = sizeof(ro);
	ro.mode = STRACE_RING_ARCHIVE;
	ro.capacity = 64;
	ro.strings_size = st->strings_size ? st->strings_size : 4096;
	ro.no_populate = 1;
	unlink(save_path);
	if (strace_ring_create(save_path, &ro, &d->dst) < 0)
		return;
	unlink(save_path);
	if (strace_writer_open(d->dst, &d->w) < 0) {
		strace_ring_close(d->dst);
		d->dst = NULL;
	}
}

static void read_ring(struct rd *d, const struct strace_ring_stat *st)
{
	struct strace_batch b;
	int follow = 0;

	d->flight = st->mode == STRACE_RING_FLIGHT;
	d->copy = malloc(BATCH_MAX * sizeof(*d->copy));
	if (!d->copy)
		return;
	/* ptrace-read's default: everything but pad, unknown values too */
	memset(&d->flt.set, 0xff, sizeof(d->flt.set));
	d->flt.set.bits[0] &= ~1ull;
	d->flt.unknown = 1;
	d->names = NULL;
	(void)strace_names_new(d->ring, &d->names);
	fmt_setup(&d->text, d->names, 1);
	fmt_setup(&d->json, d->names, 1);
	save_create(d, st);
	if (strace_reader_open(d->ring, 0, &d->r) == 0) {
		for (int i = 0; i < READ_ROUNDS && follow < FOLLOW_ROUNDS;
		     i++) {
			long n = strace_reader_next(d->r, &b, BATCH_MAX, 0);
			if (n < 0)
				break;
			one_batch(d, &b);
			if (n > 0)
				continue;
			/* --follow: until the ring ends, or enough rounds */
			if (strace_reader_status(d->r) != STRACE_READER_LIVE)
				break;
			follow++;
		}
		(void)strace_reader_lost(d->r);
		strace_reader_close(d->r);
	}
	if (d->w) {
		/* Flushed before the close, which ptrace-read does not do: a
		 * close whose last batch grows the archive writes to the
		 * header where it was before the mapping moved, and would
		 * crash on every ring with more events than 64 (see
		 * tests/fuzz/repro/README.md: writer close after growth). */
		(void)strace_writer_flush(d->w);
		(void)strace_writer_close(d->w);
	}
	strace_ring_close(d->dst);
	fmt_cleanup(&d->json);
	fmt_cleanup(&d->text);
	strace_names_free(d->names);
	free(d->copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strace_ring_stat st;
	struct rd d;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return 0;
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0) {
			close(fd);
			return 0;
		}
		off += (size_t)n;
	}
	close(fd);

	memset(&d, 0, sizeof(d));
	if (strace_ring_open(path, &d.ring) == 0) {
		unlink(path);
		if (strace_ring_stat(d.ring, &st) == 0) {
			stat_ring(d.ring, &st);
			read_ring(&d, &st);
		}
		strace_ring_close(d.ring);
	}
	unlink(path);
	return 0;
}
