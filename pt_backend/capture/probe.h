/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/probe.h - the functions a live capture reacts to.
 *
 * --trigger, --start-at and --stop-at name a function of the traced
 * program or of one of its shared objects ("parse", "parse@libfoo.so",
 * "parse+0x10", "parse:ret"), or an address ("0x401136", "0x1136@prog").
 * This file finds it the way the decoder names code (decoder.h: the ELF
 * .symtab and .dynsym, the .gnu_debuglink file, PLT entries as objdump
 * names them) and says where it is: the object's path and the file offset
 * of the instruction, which is what a uprobe needs (the kernel puts it in
 * every mapping of that file, in any process, before or after it is
 * mapped); and it builds the perf events that fire there: a uprobe (the
 * `uprobe` PMU), or a hardware execute breakpoint (PERF_TYPE_BREAKPOINT)
 * at a run-time address where the kernel has no uprobe PMU.
 *
 * Where to look: the objects of a running process (its executable
 * mappings, from /proc/PID/maps, the executable first), or those a
 * command will load (the executable found through PATH, then the shared
 * objects its DT_NEEDED entries name, breadth first, found as the dynamic
 * loader finds them: DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, then the
 * directories of /etc/ld.so.conf and the system's library directories).
 * The first object that defines the name wins, as the loader's lookup
 * does.
 *
 * Functions keep no global state; each call is thread-safe. What the
 * command calls is declared in capture.h; here, what only live.c uses.
 */
#ifndef PT_BACKEND_CAPTURE_PROBE_H
#define PT_BACKEND_CAPTURE_PROBE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture.h" /* struct strace_probe */

/* strace_probe_bp_attr() - a hardware execute breakpoint at run-time
 * address addr, sampling every hit. */
void strace_probe_bp_attr(uint64_t addr, struct perf_event_attr *a);

#endif
