/* SPDX-License-Identifier: MIT */
/*
 * strace/event.h - the fixed-size trace event and the table of event types.
 *
 * Every producer (the PT decoder, the perf dlfilter, an emulator) emits the
 * same 32-byte record; every consumer (text, JSON, filters) learns the types
 * from the one X-macro table below. To add a type, add one line to
 * STRACE_EVENT_TYPES: names, field meanings and filters pick it up.
 *
 * The event number is not stored: it is the event's 64-bit position in the
 * ring, so a gap in positions is a loss that a reader can count.
 *
 * This header depends on libc only and is safe to include from C++.
 */
#ifndef STRACE_EVENT_H
#define STRACE_EVENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One trace event. Byte offsets are part of the file format (docs/events.md). */
struct strace_event {
	uint16_t type;  /* offset  0: enum strace_event_type */
	uint16_t flags; /* offset  2: STRACE_F_* or type-specific */
	uint32_t tid;   /* offset  4: thread id (0 if not thread-bound) */
	uint64_t time;  /* offset  8: perf time in ns; 0 when unknown */
	uint64_t a;     /* offset 16: first operand, see the type table */
	uint64_t b;     /* offset 24: second operand, see the type table */
};

#define STRACE_EVENT_SIZE 32
/* C11's _Static_assert, C++11's static_assert: the header is both */
#ifdef __cplusplus
#define STRACE_STATIC_ASSERT(c, msg) static_assert(c, msg)
#else
#define STRACE_STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#endif
STRACE_STATIC_ASSERT(sizeof(struct strace_event) == STRACE_EVENT_SIZE,
		     "struct strace_event must be exactly 32 bytes");
STRACE_STATIC_ASSERT(offsetof(struct strace_event, time) == 8,
		     "time at offset 8");
STRACE_STATIC_ASSERT(offsetof(struct strace_event, a) == 16, "a at offset 16");
STRACE_STATIC_ASSERT(offsetof(struct strace_event, b) == 24, "b at offset 24");

/* How a reader shows an operand. */
enum strace_field_kind {
	STRACE_FK_NONE = 0, /* unused */
	STRACE_FK_ADDR,     /* code address: hex, with a symbol name when known */
	STRACE_FK_HEX,      /* plain hex value */
	STRACE_FK_DEC,      /* unsigned decimal */
	STRACE_FK_STR,      /* offset of an entry in the ring's string table */
	STRACE_FK_REASON,   /* enum strace_reason */
	STRACE_FK_BLOCK,    /* (instructions << 32) | bytes */
};

/* Families group types for filters and documentation. */
enum strace_family {
	STRACE_FAM_CONTROL,
	STRACE_FAM_FLOW,
	STRACE_FAM_GAP,
	STRACE_FAM_DEFINE,
	STRACE_FAM_STACK,
	STRACE_FAM_BLOCK,
	STRACE_FAM_EMU,
	STRACE_FAM_SAMPLE,
};

/*
 * X(ID, value, name, family, a_name, a_kind, b_name, b_kind, description)
 *
 * Values are part of the file format: never renumber, only append.
 * "from"/"to" are the JSON names of branch operands.
 */
#define STRACE_EVENT_TYPES(X)                                                       \
	X(PAD, 0, "pad", CONTROL, "", NONE, "", NONE,                                \
	  "a position that got no event; readers skip it")                            \
	X(TRACE_BEGIN, 1, "trace_begin", CONTROL, "ip", ADDR, "reason", REASON,     \
	  "tracing (re)starts at ip; reason says why")                                \
	X(TRACE_END, 2, "trace_end", CONTROL, "ip", ADDR, "reason", REASON,         \
	  "tracing stops after ip (last known address); reason says why")             \
	X(CPU, 3, "cpu", CONTROL, "cpu", DEC, "", NONE,                              \
	  "the thread's next events ran on CPU cpu (until its next cpu event)")      \
	X(CALL, 16, "call", FLOW, "from", ADDR, "to", ADDR,                          \
	  "call instruction at from entered to")                                      \
	X(RETURN, 17, "return", FLOW, "from", ADDR, "to", ADDR,                      \
	  "return instruction at from went back to to")                               \
	X(JUMP, 18, "jump", FLOW, "from", ADDR, "to", ADDR,                          \
	  "jump from one symbol into another (tail call), or any taken "             \
	  "branch with --all-branches")                                               \
	X(SYSCALL, 19, "syscall", FLOW, "from", ADDR, "to", ADDR,                    \
	  "system call instruction at from; to is the kernel entry or 0")            \
	X(SYSRET, 20, "sysret", FLOW, "from", ADDR, "to", ADDR,                      \
	  "return from the kernel to user address to; from is 0 if unknown")         \
	X(INTERRUPT, 21, "interrupt", FLOW, "from", ADDR, "to", ADDR,                \
	  "asynchronous transfer (interrupt, signal, fault) away from from; to "     \
	  "is the target if known")                                                   \
	X(OVERFLOW, 32, "overflow", GAP, "ip", ADDR, "offset", HEX,                  \
	  "the trace hardware lost packets (PT OVF); ip is where decoding "          \
	  "resumed, offset the trace offset")                                         \
	X(ERROR, 33, "error", GAP, "ip", ADDR, "offset", HEX,                        \
	  "decode error at trace offset; flags holds the error code; ip is "         \
	  "the last good address")                                                    \
	X(LOST, 34, "lost", GAP, "count", DEC, "first", DEC,                         \
	  "count events or records were lost; first is the first lost "              \
	  "position when known; flags says who lost them")                            \
	X(PROCESS, 48, "process", DEFINE, "pid", DEC, "name", STR,                   \
	  "a process and its command name")                                           \
	X(THREAD, 49, "thread", DEFINE, "pid", DEC, "name", STR,                     \
	  "thread tid belongs to process pid, with its name")                         \
	X(THREAD_EXIT, 50, "thread_exit", DEFINE, "pid", DEC, "status", DEC,        \
	  "thread tid of process pid exited")                                         \
	X(DSO, 51, "dso", DEFINE, "start", HEX, "path", STR,                         \
	  "executable mapping at start; its string entry holds the size")            \
	X(SYMBOL, 52, "symbol", DEFINE, "start", ADDR, "name", STR,                  \
	  "function symbol at start; its string entry holds the size")               \
	X(STACK_FRAME, 64, "stack_frame", STACK, "ip", ADDR, "depth", DEC,           \
	  "frame of the call stack at attach, depth 0 innermost")                    \
	X(BLOCK, 65, "block", BLOCK, "start", ADDR, "size", BLOCK,                   \
	  "basic block executed: start address, (instructions << 32) | bytes")       \
	X(EXC_PUSH, 66, "exc_push", STACK, "ip", ADDR, "handler", ADDR,              \
	  "an OCaml exception handler was pushed in the block at ip (a try "        \
	  "began); a raise to it lands at handler")                                   \
	X(EXC_POP, 67, "exc_pop", STACK, "ip", ADDR, "handler", ADDR,                \
	  "the innermost OCaml exception handler was popped in the block at ip "    \
	  "(its try ended); handler is 0 when not known")                             \
	X(EXC_RAISE, 68, "exc_raise", STACK, "ip", ADDR, "handler", ADDR,            \
	  "an OCaml exception was raised by the branch at ip to the innermost "     \
	  "handler, at handler")                                                      \
	X(INST_EXEC, 80, "inst_exec", EMU, "pc", ADDR, "insn", HEX,                  \
	  "emulator executed an instruction; insn holds up to 8 opcode bytes")       \
	X(INST_FETCH, 81, "inst_fetch", EMU, "pc", ADDR, "size", DEC,                \
	  "emulator fetched size instruction bytes at pc")                           \
	X(MEM_READ, 82, "mem_read", EMU, "addr", HEX, "value", HEX,                  \
	  "memory read of flags bytes at addr")                                       \
	X(MEM_WRITE, 83, "mem_write", EMU, "addr", HEX, "value", HEX,                \
	  "memory write of flags bytes at addr")                                      \
	X(REG_READ, 84, "reg_read", EMU, "reg", DEC, "value", HEX,                   \
	  "register reg read")                                                        \
	X(REG_WRITE, 85, "reg_write", EMU, "reg", DEC, "value", HEX,                 \
	  "register reg written")                                                     \
	X(BRANCH, 86, "branch", EMU, "from", ADDR, "to", ADDR,                       \
	  "emulator branch; flags bit 0 set when taken")                             \
	X(IRQ, 87, "irq", EMU, "irq", DEC, "pc", ADDR,                               \
	  "emulator interrupt number irq taken at pc")                               \
	X(CTRL, 88, "ctrl", EMU, "code", DEC, "arg", HEX,                            \
	  "emulator control event (start, stop, mark) with an argument")            \
	X(PEBS, 96, "pebs", SAMPLE, "ip", ADDR, "counters", HEX,                     \
	  "a PEBS record (PEBS-via-PT, perf's aux-output) taken at ip; "           \
	  "counters: the applicable counters; its pebs_item events follow")        \
	X(PEBS_ITEM, 97, "pebs_item", SAMPLE, "item", HEX, "value", HEX,             \
	  "one field of the PEBS record before: item = (block type << 8) | "       \
	  "id (STRACE_PEBS_*)")                                                   \
	X(PTWRITE, 98, "ptwrite", SAMPLE, "ip", ADDR, "payload", HEX,               \
	  "a ptwrite instruction's payload (PT PTW packet); flags: payload "      \
	  "bytes (4, 8), STRACE_PTW_IP when ip is the instruction's (a FUP)")

enum strace_event_type {
#define STRACE_X_ENUM(ID, VAL, ...) STRACE_EV_##ID = VAL,
	STRACE_EVENT_TYPES(STRACE_X_ENUM)
#undef STRACE_X_ENUM
	STRACE_EV_MAX = 128 /* type values are below this */
};

/* Common flag bits (flow events). */
#define STRACE_F_ASYNC 0x0001       /* caused by an asynchronous event */
#define STRACE_F_CONDITIONAL 0x0002 /* a conditional branch (jump) */
#define STRACE_F_INTRA 0x0004       /* source and target in one symbol */
#define STRACE_F_INDIRECT 0x0008    /* target came from the trace (TIP) */
#define STRACE_F_TIME_EXACT 0x0010  /* time taken from a timing packet */
#define STRACE_F_TX_ABORT 0x0020    /* an Intel TSX transaction aborted
				     * (interrupt: to the abort handler) */

/* pebs_item: a = STRACE_PEBS_KEY(block type, item id), the block type
 * of the record's BBP and the id of the BIP (Intel SDM, "PEBS output to
 * Intel PT"; perf's struct intel_pt_blk_items). Items by block: */
#define STRACE_PEBS_GPR 1   /* 0 RFLAGS, 1 RIP, 2 RAX, 3 RCX, 4 RDX, 5 RBX,
			     * 6 RSP, 7 RBP, 8 RSI, 9 RDI, 10-17 R8-R15 */
#define STRACE_PEBS_BASIC 4 /* 0 IP, 1 applicable counters, 2 TSC */
#define STRACE_PEBS_MEM 5   /* 0 address, 1 aux info, 2 latency, 3 TSX aux */
#define STRACE_PEBS_LBR0 8  /* LBR entries, three blocks (8, 9, 10) */
#define STRACE_PEBS_XMM 16  /* XMM registers */
#define STRACE_PEBS_KEY(type, id) (((unsigned)(type) << 8) | (unsigned)(id))

/* ptwrite flags: the payload's size in bytes (4 or 8: the PTW packet's
 * PLC) in the low bits, and STRACE_PTW_IP when a is the address of the
 * ptwrite instruction (the PTW had its IP bit and a FUP said where: perf's
 * "IP: 1"); without it a is where the flow stood when the packet came (the
 * last address the decoder knew, perf's sample IP too; 0 if none). */
#define STRACE_PTW_SIZE_MASK 0x000f
#define STRACE_PTW_IP 0x0100

/* LOST flags: who lost the events. */
#define STRACE_LOST_READER 1   /* overwritten in the ring before this reader */
#define STRACE_LOST_PERF 2     /* perf PERF_RECORD_LOST / AUX truncation */
#define STRACE_LOST_WRITER 3   /* a writer died holding reserved positions */
#define STRACE_LOST_AUX 4      /* trace data lost: a = bytes (AUX truncated,
				* or a hole between AUX buffers) */
#define STRACE_LOST_WRITE 5    /* a writer could not write its batch (the
				* file system was full, the file could not
				* grow): a = the batch's events */

/* thread_exit flags */
#define STRACE_EXIT_NO_STATUS 1 /* the status is not known (a perf EXIT
				 * record carries none): b is 0 */

/* Reasons for trace_begin / trace_end (operand b). */
#define STRACE_REASONS(X)                                                       \
	X(UNKNOWN, 0, "unknown")                                                \
	X(START, 1, "start")         /* first packet of the trace */             \
	X(END, 2, "end")             /* end of the trace data */                 \
	X(ENABLE, 3, "enable")       /* PT enabled (TIP.PGE) */                  \
	X(DISABLE, 4, "disable")     /* PT disabled (TIP.PGD), e.g. kernel */   \
	X(SYNC, 5, "sync")           /* resynchronised after a gap in the code */ \
	X(OVERFLOW, 6, "overflow")   /* after a PT overflow */                   \
	X(ERROR, 7, "error")         /* after a decode error */                  \
	X(LOST, 8, "lost")           /* AUX data was lost */                     \
	X(EXIT, 9, "exit")           /* the thread exited */                     \
	X(SWITCH, 10, "switch")      /* context switch */

enum strace_reason {
#define STRACE_X_REASON(ID, VAL, NAME) STRACE_REASON_##ID = VAL,
	STRACE_REASONS(STRACE_X_REASON)
#undef STRACE_X_REASON
};

/* What a type's flags hold, for a reader that shows them. */
enum strace_flags_kind {
	STRACE_FLK_BITS = 0, /* STRACE_F_* bits, or a small type-specific value */
	STRACE_FLK_ERROR,    /* an error code (STRACE_E_*, strace/error.h) */
};

/* Static description of one event type, built from the table. */
struct strace_event_info {
	const char *name;        /* e.g. "call"; NULL for unknown values */
	const char *a_name;      /* JSON/text name of operand a, "" if unused */
	const char *b_name;      /* likewise for b */
	const char *description; /* one line for --help and docs */
	uint8_t a_kind;          /* enum strace_field_kind */
	uint8_t b_kind;
	uint8_t family;     /* enum strace_family */
	uint8_t flags_kind; /* enum strace_flags_kind */
};

/*
 * strace_event_info() - the table entry of a type value.
 * Returns NULL for a value that names no type (a reader must still cope).
 */
const struct strace_event_info *strace_event_info(unsigned type);

/* strace_event_type_by_name() - type value of a name, or -1. */
int strace_event_type_by_name(const char *name);

/* strace_reason_name() - name of a reason, "unknown" for other values. */
const char *strace_reason_name(uint64_t reason);

/* strace_family_name() - "control", "flow", ... */
const char *strace_family_name(unsigned family);

/*
 * Type sets for filters: a bit per type value.
 *
 * strace_typeset_parse() takes comma-separated glob patterns on type names
 * ("call,ret*"); a pattern starting with '-' removes its matches
 * ("-block"). A list that starts with an exclusion starts from all types.
 * A pattern that matches no type is an error so typos do not go unnoticed.
 * Returns 0.
 * Returns -EINVAL if a pattern matches no type; *bad then points at it
 * (inside the caller's string, length in *bad_len).
 */
struct strace_typeset {
	uint64_t bits[STRACE_EV_MAX / 64];
};

int strace_typeset_parse(struct strace_typeset *set, const char *patterns,
			 const char **bad, size_t *bad_len);
void strace_typeset_all(struct strace_typeset *set);

static inline int strace_typeset_has(const struct strace_typeset *set,
				     unsigned type)
{
	return type < STRACE_EV_MAX &&
	       ((set->bits[type / 64] >> (type % 64)) & 1);
}

#ifdef __cplusplus
}
#endif

#endif /* STRACE_EVENT_H */
