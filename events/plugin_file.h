/* SPDX-License-Identifier: MIT */
/*
 * events/plugin_file.h - a plugin's file before and during dlopen: what
 * would hang dlopen (a FIFO) or crash it (a file cut short) refused
 * before it runs, and a bus error during the load turned into an error
 * that names the plugin. The layer below events/plugin.c.
 */
#ifndef EVENTS_PLUGIN_FILE_H
#define EVENTS_PLUGIN_FILE_H

#include <stddef.h>

/*
 * plugin_file_check() - whether the plugin file at path may go to
 * dlopen: opened O_RDONLY|O_NONBLOCK|O_CLOEXEC (the open of a FIFO
 * does not wait for a writer), a regular file (fstat), an ELF object of
 * this host's class whose program headers and loadable segments lie
 * within the file's size. A path without '/' is not checked: dlopen
 * looks it up in the library path, as for any library.
 * Returns 0.
 * Returns -STRACE_E_PLUGIN if it is not such a file; err (len bytes)
 * says why and what to do, naming path.
 * Returns -ENOMEM if memory runs out.
 */
int plugin_file_check(const char *path, char *err, size_t len);

/*
 * plugin_file_dlopen() - dlopen(path, flags), with a bus error raised
 * on this thread during it (the file cut short meanwhile, or its
 * constructor's) caught: SIGBUS has a handler of this file only while
 * dlopen runs, then the one it had again; a bus error on another thread
 * meanwhile goes to that one. After a caught bus error the dynamic
 * loader may hold its lock and a half-loaded object: no later call
 * loads anything (each says so), and the process should end.
 * Returns the handle.
 * Returns NULL if dlopen failed, the bus error came, or an earlier one
 * did; err (len bytes) says which, naming path.
 */
void *plugin_file_dlopen(const char *path, int flags, char *err, size_t len);

/* plugin_say() - what went wrong, into buf (len bytes; NULL or 0: not
 * said), as the plugin layer's messages are made. */
void plugin_say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* EVENTS_PLUGIN_FILE_H */
