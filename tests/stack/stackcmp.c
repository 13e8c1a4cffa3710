/* SPDX-License-Identifier: MIT */
/*
 * tests/stack/stackcmp.c - strace_stack's call stack at every call of a
 * ring against the true one (tests/stack/stacktruth.py's output, from the
 * stack pointer QEMU logged).
 *
 *   stackcmp RING STACKS [MAX_SHOWN]
 *
 * Both stacks become lists of functions, outermost first, named with the
 * ring's names (the symbol covering an address, else "[dso]", else the
 * address): the truth's live call sites name the functions that made the
 * calls (a signal frame's "sig:ADDR" the interrupted function), then the
 * call's own site and its target; ours are the open frames before the
 * call (without the [syscall] and [signal] pseudo-frames) and the call's
 * target. The k-th call of a thread in the ring is compared with the
 * k-th of the truth.
 *
 * Prints per thread "thread TID calls N exact E", the first mismatches,
 * and "exact E of N calls (P%)". Exit 0 when every call's stack is exact,
 * 1 when one is not, 2 on a usage or input error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strace/names.h"
#include "strace/ring.h"
#include "strace/stack.h"

struct tline {
	uint64_t *addr; /* the sites, then the call's site and target */
	uint8_t *sig;   /* 1: a signal frame (sig:ADDR) */
	size_t n;
};

struct tthread {
	uint32_t tid;
	struct tline *lines;
	size_t n, cap;
	size_t next;   /* the next call to compare */
	size_t exact;
};

static struct tthread *threads;
static size_t nthreads;

static struct tthread *tthread_of(uint32_t tid, int make)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	if (!make)
		return NULL;
	threads = realloc(threads, (nthreads + 1) * sizeof(*threads));
	if (!threads)
		exit(2);
	memset(&threads[nthreads], 0, sizeof(*threads));
	threads[nthreads].tid = tid;
	return &threads[nthreads++];
}

static int read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	struct tthread *t = NULL;

	if (!f) {
		fprintf(stderr, "stackcmp: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned tid;
		char *p, *tok, *save = NULL;
		struct tline *l;
		if (sscanf(line, "# thread %u", &tid) == 1) {
			t = tthread_of(tid, 1);
			continue;
		}
		if (line[0] == '#' || !t)
			continue;
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1024;
			t->lines = realloc(t->lines, t->cap * sizeof(*t->lines));
			if (!t->lines)
				exit(2);
		}
		l = &t->lines[t->n++];
		memset(l, 0, sizeof(*l));
		strtok_r(line, " \n", &save); /* INDEX */
		for (tok = strtok_r(NULL, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			int sig = !strncmp(tok, "sig:", 4);
			l->addr = realloc(l->addr, (l->n + 1) * sizeof(*l->addr));
			l->sig = realloc(l->sig, l->n + 1);
			if (!l->addr || !l->sig)
				exit(2);
			l->addr[l->n] = strtoull(sig ? tok + 4 : tok, &p, 16);
			l->sig[l->n++] = (uint8_t)sig;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

/* the name of the function at addr, as both sides name it */
static void name_of(struct strace_names *nm, uint64_t addr, char *buf,
		    size_t len)
{
	const struct strace_name *s = strace_names_symbol(nm, addr);
	const struct strace_name *d;

	if (s) {
		snprintf(buf, len, "%s", s->str);
		return;
	}
	d = strace_names_dso(nm, addr);
	if (d) {
		const char *b = strrchr(d->str, '/');
		snprintf(buf, len, "[%s]", b ? b + 1 : d->str);
		return;
	}
	snprintf(buf, len, "0x%" PRIx64, addr);
}

static void append(char *list, size_t len, const char *name)
{
	size_t l = strlen(list);

	if (l + strlen(name) + 2 >= len)
		return;
	if (l)
		list[l++] = ';';
	strcpy(list + l, name);
}

int main(int argc, char **argv)
{
	struct strace_ring *ring;
	struct strace_reader *r;
	struct strace_names *nm;
	struct strace_stack *st;
	/* the truth is the machine's stack: tail calls replace frames */
	struct strace_stack_opts so = {.size = sizeof(so), .machine = 1};
	struct strace_batch b;
	static char ours[1 << 16], truth[1 << 16];
	char name[512];
	size_t calls = 0, exact = 0, shown = 0, extra = 0;
	long max_shown = argc > 3 ? strtol(argv[3], NULL, 10) : 5;
	long n;

	if (argc < 3) {
		fprintf(stderr, "usage: stackcmp RING STACKS [MAX_SHOWN]\n");
		return 2;
	}
	if (read_truth(argv[2]) < 0)
		return 2;
	if (strace_ring_open(argv[1], &ring) < 0 ||
	    strace_reader_open(ring, 0, &r) < 0 ||
	    strace_names_new(ring, &nm) < 0 ||
	    strace_stack_new(nm, &so, NULL, &st) < 0) {
		fprintf(stderr, "stackcmp: %s: cannot read the ring\n", argv[1]);
		return 2;
	}
	while ((n = strace_reader_next(r, &b, 4096, 0)) > 0) {
		strace_names_update(nm);
		for (long i = 0; i < n; i++) {
			const struct strace_event *e = &b.ev[i];
			const struct strace_frame *fr;
			struct tthread *t;
			size_t depth;
			if (e->type != STRACE_EV_CALL) {
				strace_stack_feed(st, e, 1);
				continue;
			}
			t = tthread_of(e->tid, 0);
			calls++;
			if (!t || t->next >= t->n) {
				extra++;
				strace_stack_feed(st, e, 1);
				continue;
			}
			/* ours: the open frames as the call leaves them (its
			 * source may have moved the top frame into another
			 * function), without the call's own, and the target */
			ours[0] = '\0';
			size_t before = strace_stack_frames(st, e->tid, &fr);
			strace_stack_feed(st, e, 1);
			depth = strace_stack_frames(st, e->tid, &fr);
			if (depth > before)
				depth--;
			for (size_t k = 0; k < depth; k++) {
				const char *s;
				if (fr[k].kind == STRACE_FRAME_SYSCALL ||
				    fr[k].kind == STRACE_FRAME_SIGNAL)
					continue;
				s = fr[k].fn ? fr[k].fn->str : NULL;
				if (!s) {
					name_of(nm, fr[k].addr, name,
						sizeof(name));
					s = name;
				}
				append(ours, sizeof(ours), s);
			}
			name_of(nm, e->b, name, sizeof(name));
			append(ours, sizeof(ours), name);
			/* the truth: the functions of the sites, the target */
			truth[0] = '\0';
			const struct tline *l = &t->lines[t->next++];
			for (size_t k = 0; k < l->n; k++) {
				name_of(nm, l->addr[k], name, sizeof(name));
				append(truth, sizeof(truth), name);
			}
			if (!strcmp(ours, truth)) {
				t->exact++;
				exact++;
			} else if ((long)shown++ < max_shown) {
				printf("thread %u call %zu (ring position %" PRIu64
				       "):\n  truth %s\n  ours  %s\n",
				       e->tid, t->next - 1, b.seq + (uint64_t)i,
				       truth, ours);
			}
		}
		strace_reader_release(r, &b);
	}
	for (size_t i = 0; i < nthreads; i++)
		printf("thread %u calls %zu exact %zu%s\n", threads[i].tid,
		       threads[i].n, threads[i].exact,
		       threads[i].next != threads[i].n ? " (the ring has other "
							 "calls)"
						       : "");
	printf("exact %zu of %zu calls (%.2f%%)%s\n", exact, calls,
	       calls ? 100.0 * (double)exact / (double)calls : 100.0,
	       extra ? " (calls the truth does not have)" : "");
	strace_stack_free(st);
	strace_names_free(nm);
	strace_reader_close(r);
	strace_ring_close(ring);
	return exact == calls && !extra ? 0 : 1;
}
