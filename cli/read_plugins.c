/* SPDX-License-Identifier: MIT */
/*
 * cli/read_plugins.c - ptrace-read --plugin and --control
 * (-f none: the plugins only): the plugins loaded before the read, the
 * control FIFO's commands between batches.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

#include "read.h"
#include "pluginpath.h"

/* A control FIFO's command (--control): the plugins' commands. */
int plugin_command(void *arg, const char *line, char *reply,
			  size_t len)
{
	struct rd *d = arg;
	int rc = strace_plugins_control(d->plugins, line, reply, len);

	if (rc < 0 && d->ctl.ack < 0)
		err("--control: %s: %s", line, reply);
	return rc;
}

/* --plugin and --control: load every plugin before reading. */
int setup_plugins(struct rd *d)
{
	const struct read_opts *o = d->o;
	struct strace_plugins_opts po = {
		.size = sizeof(po), .host = "ptrace-read", .names = d->names};
	char msg[1024];
	int rc;

	if (!o->nplugins && !o->control)
		return 0;
	if (strace_plugins_new(&po, &d->plugins) < 0) {
		err("out of memory");
		return EXIT_ERR;
	}
	for (int i = 0; i < o->nplugins; i++) {
		char found[PATH_MAX + 1024];
		rc = strace_plugins_load(d->plugins,
					 plugin_spec_find(o->plugins[i], found,
							  sizeof(found)),
					 msg, sizeof(msg));
		if (rc < 0) {
			err("%s", msg);
			return rc == -ENOMEM ? EXIT_ERR : EXIT_USAGE;
		}
	}
	if (o->control) {
		if (control_open(&d->ctl, o->control, PROG, msg,
				 sizeof(msg)) < 0) {
			err("--control %s", msg);
			return EXIT_USAGE;
		}
	}
	return 0;
}
