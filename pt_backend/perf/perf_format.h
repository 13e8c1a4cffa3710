/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf_format.h - the perf.data on-disk format, as perf 6.1
 * writes and reads it, for the writer (perf_write.c) and the reader, and
 * for the stages above, which build and parse the records themselves
 * (capture: the kernel's records and the header records of -w; pipeline:
 * the sideband): perf.h includes it, and they include perf.h.
 *
 * Everything here is little-endian on disk (we only produce and accept
 * native x86-64 files; a file whose magic reads byte-swapped is another
 * endianness and is refused). Offsets in comments are byte offsets from
 * the start of the structure. The kernel's struct perf_event_attr comes
 * from <linux/perf_event.h>; its on-disk size is attr.size (64 for
 * VER0 ... 128 for VER7), never assume sizeof().
 *
 * File layout ("PERFILE2"):
 *
 *   0                      struct pfmt_file_header (104 bytes)
 *   header.attrs.offset    header.attrs.size / header.attr_size entries of
 *                          { perf_event_attr (attr_size - 16 bytes),
 *                            struct pfmt_section ids } ; ids points to an
 *                          array of u64 sample ids of that attr
 *   header.data.offset     header.data.size bytes of records, each starting
 *                          with struct pfmt_event_header; header.size counts
 *                          the whole record except an AUXTRACE record's
 *                          trailing data (auxtrace.size more bytes)
 *   data.offset+data.size  one struct pfmt_section per feature bit set in
 *                          header.adds_features (ascending bit order,
 *                          HEADER_RESERVED excluded), each locating that
 *                          feature's payload anywhere in the file
 *
 * Records of the kernel (type < 64) carry, when the attr has
 * sample_id_all = 1, a trailer (struct sample_id) after their body, made of
 * the following u64-aligned fields in this order, each present only if its
 * PERF_SAMPLE_* bit is set in attr.sample_type:
 *   TID: u32 pid, u32 tid | TIME: u64 time | ID: u64 id |
 *   STREAM_ID: u64 stream_id | CPU: u32 cpu, u32 res | IDENTIFIER: u64 id
 * Records of perf itself (type >= 64) have no trailer.
 */
#ifndef PT_BACKEND_PERF_PERF_FORMAT_H
#define PT_BACKEND_PERF_PERF_FORMAT_H

#include <linux/perf_event.h>
#include <stdint.h>

/* "PERFILE2" read as a little-endian u64. */
#define PFMT_MAGIC 0x32454c4946524550ULL

struct pfmt_section {
	uint64_t offset; /* 0: from the start of the file */
	uint64_t size;   /* 8: bytes */
};

struct pfmt_file_header {
	uint64_t magic;               /*  0: PFMT_MAGIC */
	uint64_t size;                /*  8: sizeof(struct pfmt_file_header) */
	uint64_t attr_size;           /* 16: one attrs entry: attr.size + 16 */
	struct pfmt_section attrs;    /* 24 */
	struct pfmt_section data;     /* 40 */
	struct pfmt_section event_types; /* 56: unused, zero */
	uint64_t adds_features[4];    /* 72: feature bitmap, bit n = word n/64 */
};                                    /* 104 bytes */

/*
 * SAMPLE (type 9) body: the fields selected by attr.sample_type, in this
 * order, each u64-aligned: IDENTIFIER u64, IP u64, TID u32 pid u32 tid,
 * TIME u64, ADDR u64, ID u64, STREAM_ID u64, CPU u32 cpu u32 res,
 * PERIOD u64, READ (read_format), CALLCHAIN u64 nr + nr u64,
 * RAW u32 size + data (padded), BRANCH_STACK u64 nr (+ u64 hw_idx if
 * branch_sample_type has HW_INDEX) + nr x 24 bytes, REGS_USER, STACK_USER,
 * WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR, PHYS_ADDR, AUX (u64 size +
 * data), ... (see perf_event_open(2)). perf.data from `perf record -e
 * intel_pt//` normally holds no samples: perf synthesizes them when
 * decoding.
 */

/* Record header: every record in the data section starts with this. */
struct pfmt_event_header {
	uint32_t type; /* 0: PFMT_RECORD_* */
	uint16_t misc; /* 4: PFMT_MISC_* */
	uint16_t size; /* 6: whole record, trailer included */
};

/* Record types written by the kernel. */
enum {
	PFMT_RECORD_MMAP = 1,
	PFMT_RECORD_LOST = 2,
	PFMT_RECORD_COMM = 3,
	PFMT_RECORD_EXIT = 4,
	PFMT_RECORD_THROTTLE = 5,
	PFMT_RECORD_UNTHROTTLE = 6,
	PFMT_RECORD_FORK = 7,
	PFMT_RECORD_READ = 8,
	PFMT_RECORD_SAMPLE = 9,
	PFMT_RECORD_MMAP2 = 10,
	PFMT_RECORD_AUX = 11,
	PFMT_RECORD_ITRACE_START = 12,
	PFMT_RECORD_LOST_SAMPLES = 13,
	PFMT_RECORD_SWITCH = 14,
	PFMT_RECORD_SWITCH_CPU_WIDE = 15,
	PFMT_RECORD_NAMESPACES = 16,
	PFMT_RECORD_KSYMBOL = 17,
	PFMT_RECORD_BPF_EVENT = 18,
	PFMT_RECORD_CGROUP = 19,
	PFMT_RECORD_TEXT_POKE = 20,
	PFMT_RECORD_AUX_OUTPUT_HW_ID = 21,
};

/* Record types synthesized by perf (no sample_id trailer). */
enum {
	PFMT_RECORD_HEADER_ATTR = 64,
	PFMT_RECORD_HEADER_EVENT_TYPE = 65,
	PFMT_RECORD_HEADER_TRACING_DATA = 66,
	PFMT_RECORD_HEADER_BUILD_ID = 67,
	PFMT_RECORD_FINISHED_ROUND = 68,
	PFMT_RECORD_ID_INDEX = 69,
	PFMT_RECORD_AUXTRACE_INFO = 70,
	PFMT_RECORD_AUXTRACE = 71,
	PFMT_RECORD_AUXTRACE_ERROR = 72,
	PFMT_RECORD_THREAD_MAP = 73,
	PFMT_RECORD_CPU_MAP = 74,
	PFMT_RECORD_STAT_CONFIG = 75,
	PFMT_RECORD_STAT = 76,
	PFMT_RECORD_STAT_ROUND = 77,
	PFMT_RECORD_EVENT_UPDATE = 78,
	PFMT_RECORD_TIME_CONV = 79,
	PFMT_RECORD_HEADER_FEATURE = 80,
	PFMT_RECORD_COMPRESSED = 81,
	PFMT_RECORD_FINISHED_INIT = 82,
};

/* header.misc bits. */
#define PFMT_MISC_CPUMODE_MASK 0x0007
#define PFMT_MISC_KERNEL 0x0001
#define PFMT_MISC_USER 0x0002
#define PFMT_MISC_HYPERVISOR 0x0003
#define PFMT_MISC_MMAP_DATA 0x2000  /* MMAP/MMAP2: not executable */
#define PFMT_MISC_COMM_EXEC 0x2000  /* COMM: caused by exec */
#define PFMT_MISC_SWITCH_OUT 0x2000 /* SWITCH*: switched out */
#define PFMT_MISC_SWITCH_OUT_PREEMPT 0x4000
#define PFMT_MISC_MMAP_BUILD_ID 0x4000 /* MMAP2 carries a build id */

/* MMAP: header, then this, then the NUL-terminated path padded to 8. */
struct pfmt_mmap {
	uint32_t pid;     /*  0 */
	uint32_t tid;     /*  4 */
	uint64_t addr;    /*  8 */
	uint64_t len;     /* 16 */
	uint64_t pgoff;   /* 24 */
	char filename[];  /* 32 */
};

/*
 * MMAP2: header, then this, then the path (NUL-terminated, padded to 8
 * bytes), then the sample_id trailer. With PFMT_MISC_MMAP_BUILD_ID in
 * misc, bytes 24..47 hold { u8 build_id_size, u8 reserved[3],
 * u8 build_id[20] } instead of maj..ino_generation.
 */
struct pfmt_mmap2 {
	uint32_t pid;            /*  0 */
	uint32_t tid;            /*  4 */
	uint64_t addr;           /*  8 */
	uint64_t len;            /* 16 */
	uint64_t pgoff;          /* 24 */
	uint32_t maj;            /* 32 */
	uint32_t min;            /* 36 */
	uint64_t ino;            /* 40 */
	uint64_t ino_generation; /* 48 */
	uint32_t prot;           /* 56: PROT_* */
	uint32_t flags;          /* 60: MAP_* */
	char filename[];         /* 64 */
};

/* COMM: header, this, the NUL-terminated name padded to 8, trailer. */
struct pfmt_comm {
	uint32_t pid;   /* 0 */
	uint32_t tid;   /* 4 */
	char comm[];    /* 8 */
};

/* FORK and EXIT: header, this, trailer. */
struct pfmt_fork {
	uint32_t pid;  /*  0 */
	uint32_t ppid; /*  4 */
	uint32_t tid;  /*  8 */
	uint32_t ptid; /* 12 */
	uint64_t time; /* 16 */
};

/* LOST: header, this, trailer. */
struct pfmt_lost {
	uint64_t id;   /* 0 */
	uint64_t lost; /* 8 */
};

/* AUX: the kernel wrote aux_size bytes of AUX data at aux_offset. */
struct pfmt_aux {
	uint64_t aux_offset; /*  0 */
	uint64_t aux_size;   /*  8 */
	uint64_t flags;      /* 16: PFMT_AUX_FLAG_* */
};
#define PFMT_AUX_FLAG_TRUNCATED 0x01
#define PFMT_AUX_FLAG_OVERWRITE 0x02
#define PFMT_AUX_FLAG_PARTIAL 0x04
#define PFMT_AUX_FLAG_COLLISION 0x08

/* ITRACE_START: tracing started for this task. header, this, trailer. */
struct pfmt_itrace_start {
	uint32_t pid; /* 0 */
	uint32_t tid; /* 4 */
};

/* SWITCH has no body (header, trailer); SWITCH_CPU_WIDE has this. */
struct pfmt_switch_cpu_wide {
	uint32_t next_prev_pid; /* 0 */
	uint32_t next_prev_tid; /* 4 */
};

/* AUXTRACE_INFO: header, this, then priv[] up to header.size. */
struct pfmt_auxtrace_info {
	uint32_t type;     /* 0: PFMT_AUXTRACE_* */
	uint32_t reserved; /* 4 */
	uint64_t priv[];   /* 8: for Intel PT, indexed by PFMT_IPT_* */
};

enum {
	PFMT_AUXTRACE_UNKNOWN = 0,
	PFMT_AUXTRACE_INTEL_PT = 1,
	PFMT_AUXTRACE_INTEL_BTS = 2,
	PFMT_AUXTRACE_CS_ETM = 3,
	PFMT_AUXTRACE_ARM_SPE = 4,
	PFMT_AUXTRACE_S390_CPUMSF = 5,
};

/*
 * Intel PT's AUXTRACE_INFO priv[] (perf's util/intel-pt.h). Entries
 * beyond what header.size holds are absent (older perf); readers check.
 * The *_BIT entries hold a mask of attr.config (e.g. tsc = 1 << 10) and
 * perf tests (config & mask) on the attr whose type == priv[PMU_TYPE].
 * After priv[FILTER_STR_LEN] come the address-filter string (that many
 * bytes plus a NUL, padded to a multiple of 8), then, if header.size
 * leaves room, u64 cap_event_trace (perf >= 5.19: Event Trace enabled).
 * time_cycles/time_mask/cap_user_time_short travel in TIME_CONV instead.
 *
 * perf time = time_zero + (tsc >> time_shift) * time_mult +
 *             (((tsc & ((1 << time_shift) - 1)) * time_mult) >> time_shift)
 * Time is "timeless" (no time conversion, decoding per queue at the end)
 * unless tsc_bit and cap_user_time_zero are set, every attr has
 * PERF_SAMPLE_TIME and the PT attr's config has the tsc bit.
 */
enum {
	PFMT_IPT_PMU_TYPE = 0,
	PFMT_IPT_TIME_SHIFT = 1,
	PFMT_IPT_TIME_MULT = 2,
	PFMT_IPT_TIME_ZERO = 3,
	PFMT_IPT_CAP_USER_TIME_ZERO = 4,
	PFMT_IPT_TSC_BIT = 5,
	PFMT_IPT_NORETCOMP_BIT = 6,
	PFMT_IPT_HAVE_SCHED_SWITCH = 7,
	PFMT_IPT_SNAPSHOT_MODE = 8,
	PFMT_IPT_PER_CPU_MMAPS = 9,
	PFMT_IPT_MTC_BIT = 10,
	PFMT_IPT_MTC_FREQ_BITS = 11,
	PFMT_IPT_TSC_CTC_N = 12, /* TSC/CTC ratio numerator (CPUID.15H:EBX) */
	PFMT_IPT_TSC_CTC_D = 13, /* denominator (CPUID.15H:EAX) */
	PFMT_IPT_CYC_BIT = 14,
	PFMT_IPT_MAX_NONTURBO_RATIO = 15,
	PFMT_IPT_FILTER_STR_LEN = 16,
	PFMT_IPT_PRIV_MAX = 17,
};

/* The intel_pt PMU's config bits (sysfs .../intel_pt/format/). */
#define PFMT_IPT_CFG_PT (1ULL << 0)
#define PFMT_IPT_CFG_CYC (1ULL << 1)
#define PFMT_IPT_CFG_PWR_EVT (1ULL << 4)
#define PFMT_IPT_CFG_FUP_ON_PTW (1ULL << 5)
#define PFMT_IPT_CFG_MTC (1ULL << 9)
#define PFMT_IPT_CFG_TSC (1ULL << 10)
#define PFMT_IPT_CFG_NORETCOMP (1ULL << 11)
#define PFMT_IPT_CFG_PTW (1ULL << 12)
#define PFMT_IPT_CFG_BRANCH (1ULL << 13)
#define PFMT_IPT_CFG_MTC_PERIOD_SHIFT 14 /* 4 bits: 14..17 */
#define PFMT_IPT_CFG_MTC_PERIOD_MASK (0xfULL << 14)
#define PFMT_IPT_CFG_CYC_THRESH_SHIFT 19 /* 4 bits: 19..22 */
#define PFMT_IPT_CFG_PSB_PERIOD_SHIFT 24 /* 4 bits: 24..27 */

/*
 * AUXTRACE: header (size = sizeof header + sizeof this = 48), this, then
 * `size` bytes of trace data that header.size does not count.
 * Per-thread recording: cpu = (u32)-1, idx = the mmap (queue) number,
 * tid = the traced thread. Per-cpu recording: cpu set, tid = -1.
 */
struct pfmt_auxtrace {
	uint64_t size;      /*  0: trace bytes that follow */
	uint64_t offset;    /*  8: position in the AUX area's stream */
	uint64_t reference; /* 16: usually a TSC value when read */
	uint32_t idx;       /* 24: queue number */
	uint32_t tid;       /* 28 */
	uint32_t cpu;       /* 32 */
	uint32_t reserved;  /* 36 */
};

/* AUXTRACE_ERROR: a decoder error that perf record found. */
struct pfmt_auxtrace_error {
	uint32_t type;        /*  0: 1 = itrace */
	uint32_t code;        /*  4 */
	uint32_t cpu;         /*  8 */
	uint32_t pid;         /* 12 */
	uint32_t tid;         /* 16 */
	uint32_t fmt;         /* 20: 1 = has time, 2 = has machine_pid/vcpu */
	uint64_t ip;          /* 24 */
	uint64_t time;        /* 32 */
	char msg[64];         /* 40 */
	uint32_t machine_pid; /* 104 */
	uint32_t vcpu;        /* 108 */
};

/* TIME_CONV: perf's time conversion (used by perf inject and others). */
struct pfmt_time_conv {
	uint64_t time_shift;         /*  0 */
	uint64_t time_mult;          /*  8 */
	uint64_t time_zero;          /* 16 */
	uint64_t time_cycles;        /* 24 */
	uint64_t time_mask;          /* 32 */
	uint8_t cap_user_time_zero;  /* 40 */
	uint8_t cap_user_time_short; /* 41 */
	uint8_t reserved[6];         /* 42 */
};

/* ID_INDEX: header, u64 nr, then nr of these. */
struct pfmt_id_index_entry {
	uint64_t id;  /*  0 */
	uint64_t idx; /*  8: mmap index */
	uint64_t cpu; /* 16 */
	uint64_t tid; /* 24 */
};

/* FINISHED_ROUND: header only; events before it may be sorted and flushed. */

/*
 * Feature bits of header.adds_features and their payloads.
 * Strings in payloads ("perf string"): u32 len, then len bytes holding the
 * NUL-terminated string padded with NULs (perf pads len to 64).
 */
enum {
	PFMT_FEAT_RESERVED = 0,
	PFMT_FEAT_TRACING_DATA = 1,
	PFMT_FEAT_BUILD_ID = 2,
	PFMT_FEAT_HOSTNAME = 3,  /* perf string */
	PFMT_FEAT_OSRELEASE = 4, /* perf string */
	PFMT_FEAT_VERSION = 5,   /* perf string */
	PFMT_FEAT_ARCH = 6,      /* perf string, e.g. "x86_64" */
	PFMT_FEAT_NRCPUS = 7,    /* u32 nr_cpus_avail, u32 nr_cpus_online */
	PFMT_FEAT_CPUDESC = 8,
	PFMT_FEAT_CPUID = 9,
	PFMT_FEAT_TOTAL_MEM = 10,
	PFMT_FEAT_CMDLINE = 11, /* u32 nr, nr perf strings */
	/*
	 * EVENT_DESC: u32 nr_events, u32 attr_size, then per event:
	 * attr (attr_size bytes), u32 nr_ids, perf string name, u64 ids[nr_ids]
	 */
	PFMT_FEAT_EVENT_DESC = 12,
	PFMT_FEAT_CPU_TOPOLOGY = 13,
	PFMT_FEAT_NUMA_TOPOLOGY = 14,
	PFMT_FEAT_BRANCH_STACK = 15,
	PFMT_FEAT_PMU_MAPPINGS = 16, /* u32 nr, nr x { u32 type, perf string } */
	PFMT_FEAT_GROUP_DESC = 17,
	/* AUXTRACE: u64 nr, nr x struct pfmt_auxtrace_index_entry */
	PFMT_FEAT_AUXTRACE = 18,
	PFMT_FEAT_STAT = 19,
	PFMT_FEAT_CACHE = 20,
	PFMT_FEAT_SAMPLE_TIME = 21,
	PFMT_FEAT_MEM_TOPOLOGY = 22,
	PFMT_FEAT_CLOCKID = 23,
	PFMT_FEAT_DIR_FORMAT = 24,
	PFMT_FEAT_BPF_PROG_INFO = 25,
	PFMT_FEAT_BPF_BTF = 26,
	PFMT_FEAT_COMPRESSED = 27,
	PFMT_FEAT_CPU_PMU_CAPS = 28,
	PFMT_FEAT_CLOCK_DATA = 29,
	PFMT_FEAT_HYBRID_TOPOLOGY = 30,
	PFMT_FEAT_HYBRID_CPU_PMU_CAPS = 31,
	PFMT_FEAT_BITS = 256,
};

/*
 * One entry of the AUXTRACE feature (the AUX data index): where an
 * AUXTRACE record starts in the file and its header.size (48: the data
 * that follows is NOT counted; perf 6.1 refuses the whole file with
 * EINVAL if sz != header.size). Lets a reader queue all AUX data before
 * reading the data section.
 */
struct pfmt_auxtrace_index_entry {
	uint64_t file_offset; /* 0 */
	uint64_t sz;          /* 8 */
};

#endif
