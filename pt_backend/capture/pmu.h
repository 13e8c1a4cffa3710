/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/capture/pmu.h - the intel_pt PMU as sysfs describes it, and the
 * perf_event_attr that perf 6.1 would build for it.
 *
 * strace_pmu_load() reads <sysfs>/bus/event_source/devices/intel_pt/: its
 * type, the config bit ranges of format/ ("config:N" or "config:N-M") and
 * the capabilities of caps/. The sysfs root is a parameter so that tests
 * run against a fake tree (tests/live/sysfs).
 *
 * strace_pmu_config() turns perf's event terms ("cyc,mtc=0" or the whole
 * "intel_pt/cyc,mtc=0/u") into attr.config exactly as perf 6.1 does:
 * start from perf's default config (tsc, mtc with the mtc_period closest
 * to 3, psb_period closest to 3, pt, branch; see intel_pt_default_config
 * in perf's arch/x86/util/intel-pt.c), apply the terms over it, force
 * pt=1, validate cyc_thresh/mtc_period/psb_period against caps/.
 *
 * strace_pmu_attrs() fills the PT event's attr and the tracking (dummy)
 * event's attr of one thread, field for field what `perf record
 * --per-thread -e intel_pt/.../u` opens (tests/live/perf61-attrs.txt holds
 * what the real perf 6.1 printed; test_live_pmu compares).
 *
 * strace_pmu_filter() translates perf's --filter syntax into the string
 * for PERF_EVENT_IOC_SET_FILTER, as perf does.
 *
 * All functions are pure (no global state) and thread-safe.
 */
#ifndef PT_BACKEND_CAPTURE_PMU_H
#define PT_BACKEND_CAPTURE_PMU_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define STRACE_PMU_MAX_FORMATS 32

struct strace_pmu_format {
	char name[32];
	uint64_t mask; /* attr.config bits of this term */
};

/* Capabilities from caps/ (values as the files give them; -1 = absent). */
struct strace_pmu_caps {
	int psb_cyc, mtc, ip_filtering, topa_multiple_entries;
	int num_address_ranges, cr3_filtering, ptwrite, power_event_trace;
	long long mtc_periods, cycle_thresholds, psb_periods; /* hex masks */
};

struct strace_pmu {
	uint32_t type;
	int nr_addr_filters;     /* nr_addr_filters file, 0 if absent */
	long max_nonturbo_ratio; /* 0 if absent */
	unsigned nformats;
	struct strace_pmu_format formats[STRACE_PMU_MAX_FORMATS];
	struct strace_pmu_caps caps;
	char dir[512]; /* the PMU's sysfs directory */
};

/*
 * Read the intel_pt PMU under sysfs_root (NULL: "/sys").
 * Returns 0, -STRACE_E_NOPT when there is no intel_pt directory or type
 * file, -STRACE_E_BADARG for a malformed format file, -errno otherwise.
 */
int strace_pmu_load(const char *sysfs_root, struct strace_pmu *pmu);

/* Mask of the config bits of term name; 0 if the PMU has no such term. */
uint64_t strace_pmu_format_bits(const struct strace_pmu *pmu,
				const char *name);

/* perf 6.1's default config for this PMU (intel_pt_default_config). */
uint64_t strace_pmu_default_config(const struct strace_pmu *pmu);

/* The user/kernel/hv modifiers after the terms (":u" or "/u"). */
struct strace_pmu_mods {
	int exclude_kernel, exclude_user, exclude_hv;
};

/*
 * Parse terms ("", "cyc,mtc=0", "intel_pt/cyc,mtc=0/u", "intel_pt//uk")
 * into *config (default config with the terms applied) and *mods (NULL
 * allowed; without a modifier: user only, as this tool traces user space).
 * errbuf (may be NULL) receives a message naming the bad term and the
 * valid values.
 * Returns 0, -STRACE_E_BADARG for an unknown term, a value that does not
 * fit or a value the CPU does not support.
 */
int strace_pmu_config(const struct strace_pmu *pmu, const char *terms,
		      uint64_t *config, struct strace_pmu_mods *mods,
		      char *errbuf, size_t errlen);

/* What the attrs are for. */
struct strace_pmu_attr_opts {
	uint64_t config;
	struct strace_pmu_mods mods;
	int snapshot;          /* AUX area in overwrite mode */
	int enable_on_exec;    /* a command started by us, traced from exec */
	size_t aux_bytes;      /* AUX area size (for aux_watermark) */
	int sideband_time;     /* add PERF_SAMPLE_TIME|CPU (perf --per-thread: no) */
	int context_switch;    /* also PERF_RECORD_SWITCH (perf: no) */
};

/*
 * Fill pt (the intel_pt event) and track (the dummy event carrying
 * MMAP2/COMM/FORK/EXIT sideband) for one thread; both start disabled.
 */
void strace_pmu_attrs(const struct strace_pmu *pmu,
		      const struct strace_pmu_attr_opts *o,
		      struct perf_event_attr *pt, struct perf_event_attr *track);

/*
 * perf_event_attr's aux_action (Linux 6.13, include/uapi/linux/
 * perf_event.h): a u32 after aux_sample_size (the u32 that older headers
 * call __reserved_3, at byte 116), bit 0 aux_start_paused (an AUX event
 * opened paused), bit 1 aux_pause and bit 2 aux_resume (an event of the
 * AUX event's group that pauses or resumes it when it overflows).
 */
#define STRACE_AUX_START_PAUSED 1u
#define STRACE_AUX_PAUSE 2u
#define STRACE_AUX_RESUME 4u
void strace_pmu_set_aux_action(struct perf_event_attr *a, uint32_t bits);
uint32_t strace_pmu_aux_action(const struct perf_event_attr *a);

/*
 * Print attr as perf -vv does ("perf_event_attr:" then one "  %-32s %s"
 * line per non-zero field, in perf's order). Returns the length that was
 * (or would have been) written, like snprintf.
 */
int strace_pmu_attr_fprint(char *buf, size_t len,
			   const struct perf_event_attr *attr);

/*
 * Translate perf's --filter syntax: filters separated by spaces or
 * commas, each "filter|start|stop|tracestop ADDR[/SIZE][@FILE]" with
 * numeric addresses and sizes, into the kernel's filter string ("stop" for
 * tracestop, sizes in hex, entries joined by ","), as perf 6.1 prints it
 * ("Address filter: ..."). max_filters: the PMU's nr_addr_filters.
 * Returns the number of filters, -STRACE_E_BADARG (errbuf says why), or
 * -ENOSPC when out is too small.
 */
int strace_pmu_filter(const char *perf_filter, int max_filters, char *out,
		      size_t outlen, char *errbuf, size_t errlen);

#endif

/*
 * perf 6.1's default buffer sizes for intel_pt (bytes, without the data
 * ring's header page): privileged (root, CAP_PERFMON or paranoid -1): AUX
 * 4 MiB, data 512 KiB; otherwise AUX 128 KiB, data 256 KiB. Same in
 * snapshot mode.
 */
void strace_pmu_default_sizes(int privileged, size_t *aux_bytes,
			      size_t *data_bytes);
