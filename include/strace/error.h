/* SPDX-License-Identifier: MIT */
/*
 * strace/error.h - the one error space of the toolkit.
 *
 * Every fallible function returns an int: >= 0 on success (it may carry a
 * count), -errno for a system failure, or -STRACE_E_* for a trace, file or
 * format problem. The STRACE_E_* values sit above the errno range (4096),
 * in blocks by the layer that returns them:
 *
 *   4097...  the ring file and its readers and writers
 *   4201...  the PT decoder (also stored in the flags of `error` events,
 *            so these values are part of the ring format: never renumber)
 *   4301...  perf.data files
 *   4351...  raw PT inputs (ptrace-capture --pt)
 *   4401...  tar archives and the bundles of ptrace-capture --archive
 *   4609...  live capture (perf_event_open)
 *   4701...  plugins (strace/plugin.h)
 *
 * strace_strerror() describes any of them, and any errno.
 *
 * This header depends on libc only and is safe to include from C++.
 */
#ifndef STRACE_ERROR_H
#define STRACE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * X(ID, value, name, text)
 *
 * name is the code's short name as readers print it (`error` events:
 * text `code=BAD_PACKET`, JSON `"error":"bad_packet"`); text is what
 * strace_strerror() returns. Only append; never renumber.
 */
#define STRACE_ERRORS(X)                                                       \
	/* the ring */                                                         \
	X(MAGIC, 4097, "bad_magic", "not a ring file (bad magic)")            \
	X(VERSION, 4098, "bad_version",                                        \
	  "ring file of an unsupported format version")                        \
	X(TRUNCATED, 4099, "truncated",                                        \
	  "ring file is shorter than its header says (truncated)")             \
	X(CORRUPT, 4100, "corrupt",                                            \
	  "ring file has an out-of-range field (corrupt)")                     \
	X(FULL, 4101, "full",                                                  \
	  "no room left (string table, reader or writer slots)")               \
	X(CLOSED, 4102, "closed", "the ring no longer accepts events")         \
	X(STOPPED, 4103, "stopped", "stopped while waiting")                   \
	X(FOREIGN, 4104, "foreign",                                            \
	  "the path exists and is not a ring file this user may use")          \
	X(BADARG, 4105, "bad_argument", "an option is out of range")           \
	X(BUSY, 4106, "busy",                                                  \
	  "the ring's lock stayed held by another live process")               \
	/* the decoder (values stored in error events) */                      \
	X(NOSYNC, 4201, "no_sync", "no PSB found in the trace")                \
	X(BADPKT, 4202, "bad_packet", "undecodable PT packet")                 \
	X(NOMAP, 4203, "no_map",                                               \
	  "the trace went to an address with no code in the image")            \
	X(BADINSN, 4204, "bad_insn",                                           \
	  "undecodable instruction on the traced path")                        \
	X(NOTNT, 4205, "no_tnt",                                               \
	  "a conditional branch found no TNT bit in the trace")                \
	X(NOTIP, 4206, "no_tip",                                               \
	  "an indirect branch found no TIP in the trace")                      \
	X(NOIP, 4207, "no_ip", "a packet needed an IP the trace did not give") \
	X(DESYNC, 4208, "desync", "the trace and the code disagree")           \
	X(LOOP, 4209, "loop", "too many instructions without a packet")        \
	X(EMIT, 4210, "emit", "the event sink failed")                         \
	X(NOCAPSTONE, 4211, "no_capstone",                                     \
	  "the Capstone library cannot be loaded (install libcapstone4)")      \
	X(RETCOMP, 4212, "ret_comp",                                           \
	  "a compressed return with no call since the last PSB")              \
	X(PEBS, 4213, "pebs",                                                  \
	  "PEBS-via-PT packets (BBP, BIP, BEP), which the reference decoder "  \
	  "(libipt 2.0.5) cannot decode: decode with the fast decoder")       \
	X(NEWER, 4214, "newer",                                                \
	  "packets or instructions newer than the reference decoder's "        \
	  "libipt 2.0.5 (event trace CFE/EVD, TRIG; JMPABS, ERETS, ERETU, "    \
	  "UIRET): decode with the fast decoder")                              \
	/* perf.data */                                                        \
	X(PERF_MAGIC, 4301, "perf_magic", "not a perf.data file (bad magic)")  \
	X(PERF_ENDIAN, 4302, "perf_endian",                                    \
	  "perf.data written on a machine of the other byte order")            \
	X(PERF_PIPE, 4303, "perf_pipe",                                        \
	  "pipe-mode perf.data is not supported (record with -o FILE)")        \
	X(PERF_HEADER, 4304, "perf_header",                                    \
	  "perf.data header has out-of-range fields")                          \
	X(PERF_TRUNCATED, 4305, "perf_truncated",                              \
	  "perf.data is truncated (a section or record runs past the end "     \
	  "of the file)")                                                      \
	X(PERF_RECORD, 4306, "perf_record", "malformed perf.data record")      \
	X(PERF_NOPT, 4307, "perf_no_pt",                                       \
	  "no Intel PT data in this perf.data (record with perf record -e "    \
	  "intel_pt//u)")                                                      \
	X(PERF_NOTREG, 4309, "not_regular",                                    \
	  "not a regular file (a FIFO, a device or a directory)")              \
	X(PERF_SHRANK, 4310, "shrank",                                         \
	  "the file shrank while it was read (something truncated or "         \
	  "rewrote it): decode a copy that nothing writes to")                 \
	X(PERF_TIME, 4311, "bad_time_conv",                                    \
	  "AUXTRACE_INFO's time conversion is out of range (time_shift of "    \
	  "64 or more): the file is damaged; record it again")                 \
	X(PERF_NOTID, 4312, "no_thread",                                       \
	  "the recording has no thread of that id")                            \
	X(PERF_BUILDID, 4313, "buildid_mismatch",                              \
	  "an object's build-id is not the one the recording names (another "  \
	  "build of it)")                                                      \
	/* raw PT (ptrace-capture --pt) */                                     \
	X(RAW_SYNTAX, 4351, "raw_syntax", "bad section syntax")                \
	X(RAW_RANGE, 4352, "raw_range",                                        \
	  "offset or size past the end of the file")                           \
	X(RAW_OVERLAP, 4353, "raw_overlap", "sections overlap")                \
	X(RAW_NOTELF, 4354, "raw_not_elf", "not a 64-bit ELF file")            \
	X(RAW_NOLOAD, 4355, "raw_no_load",                                     \
	  "no PT_LOAD segment with bytes in the file")                         \
	X(RAW_NOTPIE, 4356, "raw_not_pie",                                     \
	  "a fixed-address (ET_EXEC) ELF file cannot be moved")                \
	X(RAW_EMPTY, 4357, "raw_empty", "empty file")                          \
	X(RAW_NOPSB, 4358, "raw_no_psb", "no PSB packet in the trace")         \
	X(RAW_WRAP, 4359, "raw_wrap",                                          \
	  "the section wraps around the end of the address space")            \
	/* tar archives, bundles (ptrace-capture --archive) */                 \
	X(TAR_HEADER, 4401, "tar_header",                                      \
	  "not a tar archive, or a damaged one (a header's checksum is "       \
	  "wrong)")                                                            \
	X(TAR_NAME, 4402, "tar_unsafe_name",                                   \
	  "an archive member's name is unsafe (absolute, with '..' or '.' "    \
	  "components, or not printable)")                                    \
	X(TAR_TYPE, 4403, "tar_member_type",                                   \
	  "an archive member is neither a file nor a directory (a link, a "    \
	  "device, a FIFO or an extension header)")                           \
	X(TAR_FIELD, 4404, "tar_field",                                        \
	  "an archive header's number field is no number")                    \
	X(TAR_TRUNCATED, 4405, "tar_truncated",                                \
	  "the archive is truncated (it ends inside a member or without its "  \
	  "end blocks)")                                                       \
	X(TAR_DUP, 4406, "tar_duplicate",                                      \
	  "an archive member's name came before (or names a file where a "     \
	  "directory is)")                                                     \
	X(ARCHIVE_MANIFEST, 4407, "archive_manifest",                          \
	  "the bundle has no manifest, or a malformed one")                    \
	X(ARCHIVE_OBJECT, 4408, "archive_object",                              \
	  "a bundled object is not the one the bundle's manifest names "       \
	  "(missing, or another size or build-id)")                            \
	/* live capture */                                                     \
	X(NOPT, 4609, "no_intel_pt",                                           \
	  "Intel PT is not available (no intel_pt PMU under "                  \
	  "/sys/bus/event_source/devices)")                                    \
	X(PARANOID, 4610, "paranoid",                                          \
	  "perf_event_paranoid does not allow tracing this process")           \
	X(PTRACE_SCOPE, 4611, "ptrace_scope",                                  \
	  "kernel.yama.ptrace_scope does not allow attaching to this "         \
	  "process")                                                           \
	X(NOPID, 4612, "no_process", "no such process")                        \
	X(PERM, 4613, "permission", "permission denied")                       \
	X(AUXMAP, 4614, "aux_map",                                             \
	  "cannot map the AUX area (locked-memory limit?)")                  \
	/* plugins */                                                          \
	X(PLUGIN, 4701, "plugin", "the plugin cannot be loaded")

enum strace_error {
	STRACE_E_BASE = 4096, /* codes are above this; below is errno */
#define STRACE_X_ERR(ID, VAL, NAME, TEXT) STRACE_E_##ID = VAL,
	STRACE_ERRORS(STRACE_X_ERR)
#undef STRACE_X_ERR
};

/*
 * strace_strerror() - what went wrong, in words: for -STRACE_E_* (or
 * STRACE_E_*), -errno (or errno) and 0. Never NULL; the text is static.
 * A value above STRACE_E_BASE that names no code gives "unknown error".
 */
const char *strace_strerror(int err);

/*
 * strace_error_name() - the code's short name ("bad_packet") for
 * -STRACE_E_* or STRACE_E_*; NULL for errno values and unknown codes.
 */
const char *strace_error_name(int err);

#ifdef __cplusplus
}
#endif

#endif /* STRACE_ERROR_H */
