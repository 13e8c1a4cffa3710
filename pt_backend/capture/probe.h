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
 * Functions keep no global state; each call is thread-safe.
 */
#ifndef PT_BACKEND_CAPTURE_PROBE_H
#define PT_BACKEND_CAPTURE_PROBE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "decoder/decoder.h" /* struct strace_symbol */

/* Objects to look in, canonical paths (as the kernel's MMAP2 names them). */
struct strace_objlist {
	char **v;
	size_t n;
};

/*
 * strace_objlist_pid() - the files process pid maps executable, the one
 * mapped first (its executable) first. Returns 0, -STRACE_E_NOPID, -ENOMEM.
 */
int strace_objlist_pid(struct strace_objlist *l, const char *procfs_root,
		       pid_t pid);

/*
 * strace_objlist_cmd() - the executable argv0 (PATH searched when it has no
 * '/') and the shared objects it needs. A needed object that is not found
 * is left out. Returns 0, -ENOENT (no such executable), -ENOMEM.
 */
int strace_objlist_cmd(struct strace_objlist *l, const char *argv0);

void strace_objlist_fini(struct strace_objlist *l);

/* One probed instruction. */
struct strace_probe {
	char spec[256];  /* as the user wrote it */
	char path[4096]; /* the object, canonical */
	char name[256];  /* the function; "" for an address */
	uint64_t off;    /* file offset of the instruction */
	uint64_t vaddr;  /* its address as objdump prints it */
	uint64_t size;   /* the function's bytes; 0 for an address */
	int ret;         /* at the function's return (a uretprobe) */
};

/*
 * strace_probe_resolve() - find spec in objs: "SYM[+OFF][@OBJ][:ret]" or
 * "0xADDR[@OBJ]". SYM matches a function's name as the decoder prints it
 * (STRACE_PLT_PLAIN, demangled), its name in the ELF file, or the
 * demangled name without its parameters. @OBJ (a path, or a file name
 * such as libc.so.6) picks the object; without it the first object that
 * has SYM. An address with @OBJ is OBJ's, as objdump prints it; without,
 * it is a run-time address in process pid when pid > 0 (found through
 * its maps), else an address of the executable (objs->v[0]) as objdump
 * prints it. ":ret" probes the function's return (not with +OFF).
 * err receives what went wrong and what to do (-STRACE_E_BADARG).
 * Returns 0, -STRACE_E_BADARG (bad syntax, not found, ambiguous: two
 * functions of that name in one object), -ENOMEM.
 */
int strace_probe_resolve(const char *spec, const struct strace_objlist *objs,
			 const char *procfs_root, pid_t pid,
			 struct strace_probe *out, char *err, size_t errlen);

/*
 * strace_probe_list() - the functions of objs whose names match the POSIX
 * extended regular expression re (NULL or "": all): fn(arg, obj, sym,
 * vaddr) with sym's start and size as file offset and bytes, vaddr the
 * address objdump prints; fn's non-zero return stops. Returns 0, fn's
 * value, -STRACE_E_BADARG (a bad re; err says why), -ENOMEM.
 */
typedef int (*strace_probe_list_fn)(void *arg, const char *obj,
				    const struct strace_symbol *sym,
				    uint64_t vaddr);
int strace_probe_list(const struct strace_objlist *objs, const char *re,
		      strace_probe_list_fn fn, void *arg, char *err,
		      size_t errlen);

/* The kernel's uprobe PMU: its type and the config bit of "retprobe". */
struct strace_uprobe_pmu {
	uint32_t type;
	uint64_t retprobe;
};

/*
 * strace_uprobe_pmu_load() - read <sysfs_root>/bus/event_source/devices/
 * uprobe (NULL: /sys). Returns 0, or -ENOENT when the kernel has none.
 */
int strace_uprobe_pmu_load(const char *sysfs_root, struct strace_uprobe_pmu *u);

/*
 * strace_probe_uprobe_attr() - the attr of a uprobe at p (uretprobe if
 * p->ret) that samples every hit (sample_period 1, a wakeup each); it
 * points at p->path, which must outlive perf_event_open.
 */
void strace_probe_uprobe_attr(const struct strace_uprobe_pmu *u,
			      const struct strace_probe *p,
			      struct perf_event_attr *a);

/* strace_probe_bp_attr() - a hardware execute breakpoint at run-time
 * address addr, sampling every hit. */
void strace_probe_bp_attr(uint64_t addr, struct perf_event_attr *a);

#endif
