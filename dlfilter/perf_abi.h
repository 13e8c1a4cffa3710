/* SPDX-License-Identifier: MIT */
/*
 * dlfilter/perf_abi.h - our declarations of perf's dlfilter interface, as
 * documented in perf-dlfilter(1) (tools/perf/Documentation/
 * perf-dlfilter.txt) and fixed by perf's ABI since perf 5.14.
 *
 * Compatibility rules we rely on (from the documentation):
 *  - struct perf_dlfilter_sample and struct perf_dlfilter_al start with
 *    their size; newer perfs append fields, never move them. We read a
 *    field only when the size perf passes covers it.
 *  - struct perf_dlfilter_fns is a table of 128 pointers that perf copies
 *    into our exported variable `perf_dlfilter_fns` when it loads us; new
 *    functions take reserved slots, so an unknown one reads as NULL.
 *  - The entry points are looked up by name: start, stop, filter_event,
 *    filter_event_early, filter_description.
 */
#ifndef DLFILTER_PERF_ABI_H
#define DLFILTER_PERF_ABI_H

#include <stddef.h>
#include <stdint.h>

/* sample->flags: the branch kind, as perf script prints it. */
#define DLF_FLAG_BRANCH 0x0001u
#define DLF_FLAG_CALL 0x0002u
#define DLF_FLAG_RETURN 0x0004u
#define DLF_FLAG_CONDITIONAL 0x0008u
#define DLF_FLAG_SYSCALLRET 0x0010u
#define DLF_FLAG_ASYNC 0x0020u
#define DLF_FLAG_INTERRUPT 0x0040u
#define DLF_FLAG_TX_ABORT 0x0080u
#define DLF_FLAG_TRACE_BEGIN 0x0100u
#define DLF_FLAG_TRACE_END 0x0200u
#define DLF_FLAG_IN_TX 0x0400u
#define DLF_FLAG_VMENTRY 0x0800u
#define DLF_FLAG_VMEXIT 0x1000u

/* One sample (perf 5.14 .. 6.x layout; later perfs append). */
struct perf_dlfilter_sample {
	uint32_t size;
	uint16_t ins_lat;
	uint16_t p_stage_cyc;
	uint64_t ip;
	int32_t pid;
	int32_t tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint64_t period;
	uint64_t weight;
	uint64_t transaction;
	uint64_t insn_cnt;
	uint64_t cyc_cnt;
	int32_t cpu;
	uint32_t flags;
	uint64_t data_src;
	uint64_t phys_addr;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t cgroup;
	uint8_t cpumode;
	uint8_t addr_correlates_sym;
	uint16_t misc;
	uint32_t raw_size;
	const void *raw_data;
	uint64_t brstack_nr;
	const void *brstack;
	uint64_t raw_callchain_nr;
	const uint64_t *raw_callchain;
	const char *event;
	/* perf 6.0 and later: */
	int32_t machine_pid;
	int32_t vcpu;
};

/* perf's synthesized events (its util/event.h): the attr type of all,
 * and the config of the ptwrite one (--itrace=w). */
#define DLF_PERF_TYPE_SYNTH 0x80000000u /* INT_MAX + 1U */
#define DLF_SYNTH_INTEL_PTWRITE 0

/* The fields we read must lie inside what perf 5.14 already passed. */
#define DLF_SAMPLE_MIN_SIZE                                                   \
	(offsetof(struct perf_dlfilter_sample, addr_correlates_sym) + 1)
_Static_assert(offsetof(struct perf_dlfilter_sample, ip) == 8, "ip");
_Static_assert(offsetof(struct perf_dlfilter_sample, time) == 24, "time");
_Static_assert(offsetof(struct perf_dlfilter_sample, flags) == 100, "flags");

/* An address resolved to a map and symbol. */
struct perf_dlfilter_al {
	uint32_t size;
	uint32_t symoff;
	const char *sym;
	uint64_t addr; /* address in the DSO's own space (perf's map_ip) */
	uint64_t sym_start;
	uint64_t sym_end; /* exclusive */
	const char *dso;
	uint8_t sym_binding;
	uint8_t is_64_bit;
	uint8_t is_kernel_ip;
	uint32_t buildid_size;
	const uint8_t *buildid;
	/* resolve_ip() only: */
	uint8_t filtered;
	const char *comm;
	void *priv; /* perf 6.4 and later: perf's, do not touch */
};

#define DLF_AL_MIN_SIZE offsetof(struct perf_dlfilter_al, filtered)
#define DLF_AL_COMM_END                                                        \
	(offsetof(struct perf_dlfilter_al, comm) + sizeof(const char *))

/* The functions perf lends us; valid while it calls our filter. */
struct perf_dlfilter_fns {
	const struct perf_dlfilter_al *(*resolve_ip)(void *ctx);
	const struct perf_dlfilter_al *(*resolve_addr)(void *ctx);
	char **(*args)(void *ctx, int *dlargc);
	int32_t (*resolve_address)(void *ctx, uint64_t address,
				   struct perf_dlfilter_al *al);
	const uint8_t *(*insn)(void *ctx, uint32_t *length);
	const char *(*srcline)(void *ctx, uint32_t *line_number);
	void *(*attr)(void *ctx); /* struct perf_event_attr * */
	int32_t (*object_code)(void *ctx, uint64_t ip, void *buf,
			       uint32_t len);
	/* perf 6.4 and later; NULL before: */
	void (*al_cleanup)(void *ctx, struct perf_dlfilter_al *al);
	void *(*reserved[119])(void *);
};

_Static_assert(sizeof(struct perf_dlfilter_fns) == 128 * sizeof(void *),
	       "perf copies exactly 128 pointers into perf_dlfilter_fns");

#endif /* DLFILTER_PERF_ABI_H */
