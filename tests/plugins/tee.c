/* SPDX-License-Identifier: MIT */
/*
 * tee - writes the events that match a pattern into another ring, with
 * the definitions (processes, threads, DSOs, symbols) that name them:
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
#include "strace/ring.h"

STRACE_PLUGIN_VERSION;

static struct strace_plugin_host *host;
static struct strace_ring *ring;
static struct strace_writer *w;
static int failed;

static void copy(const struct strace_event *e, void *ctx)
{
	struct strace_event *s;

	(void)ctx;
	if (failed)
		return;
	s = strace_writer_slot(w);
	if (!s) {
		fprintf(stderr, "tee: cannot write to %s: %s\n",
			strace_ring_path(ring),
			strace_strerror(((struct strace_wbuf *)(void *)w)->err));
		failed = 1;
		host->stop(host);
		return;
	}
	*s = *e;
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
	if (!failed && strace_writer_define(w, &d, NULL) < 0) {
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
	w = NULL;
	ring = NULL;
}
