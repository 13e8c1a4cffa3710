/* SPDX-License-Identifier: MIT */
/*
 * tee - writes the events that match a pattern into another ring, with
 * the definitions (processes, threads, DSOs, symbols) that name them, and
 * the names no event carries (a DSO's ELF addresses, system calls, a
 * symbol's aliases):
 *
 *   ptrace-read -f none --plugin tee.so:ring=OUT.srb,types=call,return RING
 *
 * The ring is an archive (it grows; nobody has to read it meanwhile).
 * This plugin links libstrace itself (statically, its symbols hidden) to
 * write its ring; the host's names reach it through host->name_at.
 */
#include <errno.h>
#include <string.h>

#include "args.h"
#include "strace/error.h"
#include "strace/plugin.h"
#include "strace/names.h"
#include "strace/ring.h"

STRACE_PLUGIN_VERSION;

static struct strace_plugin_host *host;
static struct strace_ring *ring;
static struct strace_writer *w;
static struct strace_symset *named; /* DSO bases, syscall sites copied */
static int failed;

/* The names no event carries that e's addresses have in the host's ring
 * (strace/ring.h): where a DSO's mapping lies in its ELF addresses, the
 * system call a syscall instruction makes; copied before e, once. */
static int carry_names(const struct strace_event *e)
{
	struct strace_names *n = host->names(host);
	const struct strace_event_info *in = strace_event_info(e->type);
	uint64_t addrs[2] = {e->a, e->b};
	int rc = 0;

	if (!n || !in)
		return 0;
	for (int i = 0; i < 2 && rc >= 0; i++) {
		const struct strace_name *d;
		uint64_t base;

		if ((i ? in->b_kind : in->a_kind) != STRACE_FK_ADDR ||
		    !(d = strace_names_dso(n, addrs[i])))
			continue;
		base = strace_names_dso_offset(n, d, d->key);
		if (base)
			rc = strace_writer_name_dso_base(w, named, d->key, base);
	}
	if (rc >= 0 && e->type == STRACE_EV_SYSCALL) {
		const struct strace_name *sc = strace_names_syscall(n, e->a);
		if (sc)
			rc = strace_writer_name_syscall(w, named, e->a, sc->aux,
							sc->str);
	}
	return rc;
}

static void copy(const struct strace_event *e, void *ctx)
{
	struct strace_event *s;

	(void)ctx;
	if (failed)
		return;
	if (carry_names(e) < 0) {
		fprintf(stderr, "tee: cannot name into %s\n",
			strace_ring_path(ring));
		failed = 1;
		host->stop(host);
		return;
	}
	s = strace_writer_slot(w);
	if (!s) {
		fprintf(stderr, "tee: cannot write to %s: %s\n",
			strace_ring_path(ring),
			strace_strerror(strace_writer_error(w)));
		failed = 1;
		host->stop(host);
		return;
	}
	*s = *e;
}

/* A symbol's other names, after it (strace_writer_name_alias()). */
static int copy_aliases(const struct strace_name *sym)
{
	struct strace_names *n = host->names(host);
	const struct strace_name *al[STRACE_ALIASES_MAX];
	size_t k = n ? strace_names_aliases(n, sym, al, STRACE_ALIASES_MAX)
		     : 0;
	int rc = 0;

	for (size_t i = 0; i < k && i < STRACE_ALIASES_MAX && rc >= 0; i++)
		rc = strace_writer_name_alias(w, sym->key, al[i]->str);
	return rc;
}

/* A definition's name goes into this ring's string table first. */
static void define(const struct strace_event *e, void *ctx)
{
	const struct strace_name *n = host->name_at(host, e->b);
	struct strace_definition d;

	if (!n) {
		copy(e, ctx);
		return;
	}
	d = (struct strace_definition){e->type, e->tid, e->time, e->a,
				       n->key,  n->aux, n->str};
	if (!failed && (strace_writer_define(w, &d, NULL) < 0 ||
			copy_aliases(n) < 0)) {
		fprintf(stderr, "tee: cannot define %s in %s\n", n->str,
			strace_ring_path(ring));
		failed = 1;
		host->stop(host);
	}
}

int strace_plugin_init(struct strace_plugin_host *h, int argc, char **argv)
{
	const char *path = arg_get(argc, argv, "ring", NULL);
	struct strace_ring_opts ro = {.size = sizeof(ro),
				      .mode = STRACE_RING_ARCHIVE};
	char all[256];
	int rc;

	host = h;
	if (!path) {
		fprintf(stderr, "tee: where to? give ring=PATH\n");
		return -1;
	}
	/* "types=call,return" arrives as two arguments, "types=call" and
	 * "return": the words after types= that are no key=value are its */
	snprintf(all, sizeof(all), "*");
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "types=", 6))
			continue;
		snprintf(all, sizeof(all), "%s", argv[i] + 6);
		for (i++; i < argc && !strchr(argv[i], '='); i++)
			snprintf(all + strlen(all), sizeof(all) - strlen(all),
				 ",%s", argv[i]);
		break;
	}
	/* the definitions are copied by define(), always */
	snprintf(all + strlen(all), sizeof(all) - strlen(all),
		 ",-process,-thread,-thread_exit,-dso,-symbol");
	rc = h->on(h, all, copy, NULL);
	if (rc == 0)
		rc = h->on(h, "thread_exit", copy, NULL);
	if (rc == 0)
		rc = h->on(h, "process,thread,dso,symbol", define, NULL);
	if (rc < 0)
		return rc;
	rc = strace_symset_new(&named);
	if (rc == 0)
		rc = strace_ring_create(path, &ro, &ring);
	if (rc == 0)
		rc = strace_writer_open(ring, &w);
	if (rc < 0) {
		fprintf(stderr, "tee: cannot create the ring %s: %s\n", path,
			strace_strerror(rc));
		return -1;
	}
	return 0;
}

void strace_plugin_fini(void)
{
	int rc = strace_writer_close(w);

	if (rc < 0)
		fprintf(stderr, "tee: finishing %s: %s\n",
			strace_ring_path(ring), strace_strerror(rc));
	strace_ring_close(ring);
	strace_symset_free(named);
	w = NULL;
	ring = NULL;
	named = NULL;
}
