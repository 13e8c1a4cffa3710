#!/usr/bin/env python3
"""fxtgen.py OUTDIR - fixture builder for fxtcheck.py: writes FXT files by hand.

A test fixture, not a writer for the product: each record is packed here
field by field from the specification (fuchsia.dev, "Fuchsia trace
format"), apart from fxtcheck.py's reader.

OUTDIR/good.fxt     a valid trace: magic, provider info and section, an
                    initialization record of 1e9 ticks/s (with magic-trace's
                    two appended words), interned strings (one index later
                    redefined), thread records (one index later redefined),
                    kernel object records naming process 100 and threads
                    101 and 102, nested duration begin/end on 101, a
                    complete event and a begin/end with an inline thread on
                    102, instants, and every other record, event and
                    argument type of the specification once, plus an
                    unknown record type, event type and argument type to be
                    skipped. Its slices are those of fixtures/nested.json.
OUTDIR/bad-*.fxt    one defect each.
OUTDIR/cases.txt    one line per bad file: FILE<TAB>BYTE OFFSET<TAB>TEXT,
                    the offset of the record fxtcheck.py must report first
                    and a few words its message must contain.
"""

import os
import struct
import sys

MASK = (1 << 64) - 1


def w(v):
    return struct.pack("<Q", v & MASK)


def stream(b):
    if isinstance(b, str):
        b = b.encode()
    return b + b"\0" * (-len(b) % 8)


def inline(s):
    """(string ref, stream) of an inline string."""
    b = s.encode() if isinstance(s, str) else s
    return 0x8000 | len(b), stream(b)


def record(rtype, fields, body=b"", size=None):
    """A record: header word (type, size in words, bits 16..63 = fields)
    and its body; size overrides the computed one (for broken files)."""
    n = 1 + len(body) // 8 if size is None else size
    return w(rtype | (n << 4) | (fields << 16)) + body


def large_record(fields, body):
    n = 1 + len(body) // 8
    return w(15 | (n << 4) | (fields << 36)) + body


MAGIC = w(0x0016547846040010)


def provider_info(pid, name):
    b = name.encode()
    return record(0, 1 | (pid << 4) | (len(b) << 36), stream(b))


def provider_section(pid):
    return record(0, 2 | (pid << 4))


def init(tps, extra=()):
    return record(1, 0, w(tps) + b"".join(w(x) for x in extra))


def string(index, s):
    b = s.encode()
    return record(2, index | (len(b) << 16), stream(b))


def thread(index, pid, tid):
    return record(3, index, w(pid) + w(tid))


def arg(atype, name_ref, hi32=0, name_stream=b"", value=b"", size=None):
    body = name_stream + value
    n = 1 + len(body) // 8 if size is None else size
    return w(atype | (n << 4) | (name_ref << 16) | (hi32 << 32)) + body


def kernel_object(otype, koid, name_ref, name_stream=b"", args=()):
    return record(7, otype | (name_ref << 8) | (len(args) << 24),
                  w(koid) + name_stream + b"".join(args))


def event(etype, thread_ref, cat_ref, name_ref, ts, inline_thread=None, cat_stream=b"",
          name_stream=b"", args=(), extra=(), size=None, nargs=None):
    body = w(ts)
    if inline_thread:
        body += w(inline_thread[0]) + w(inline_thread[1])
    body += cat_stream + name_stream + b"".join(args) + b"".join(w(x) for x in extra)
    n = len(args) if nargs is None else nargs
    return record(4, etype | (n << 4) | (thread_ref << 8) | (cat_ref << 16) | (name_ref << 32),
                  body, size)


# String and thread indexes of good.fxt
S = {"process": 1, "fn": 2, "main": 3, "qsort": 4, "cmp": 5, "demo": 6, "main-thread": 7,
     "worker_loop": 9, "io_wait": 10, "marker": 11, "tmp": 12, "count": 13, "flow": 14}
T_MAIN, T_WORKER, T_OTHER = 1, 2, 3
PID, TID_MAIN, TID_WORKER = 100, 101, 102
B, E, X, I = 2, 3, 4, 0


class Trace:
    def __init__(self):
        self.parts = []
        self.marks = {}

    def add(self, b, mark=None):
        if mark:
            self.marks[mark] = self.offset()
        self.parts.append(b)

    def offset(self):
        return sum(len(p) for p in self.parts)

    def bytes(self):
        return b"".join(self.parts)


def every_argument():
    """One argument of each type of the specification, and one unknown."""
    n_in, s_in = inline("note")
    v_in, vs_in = inline("inline value")
    return [
        arg(0, S["count"]),                                     # null
        arg(1, S["count"], (-5) & 0xFFFFFFFF),                  # int32
        arg(2, S["count"], 0xFFFFFFFF),                         # uint32
        arg(3, S["count"], value=w(-(1 << 40))),                # int64
        arg(4, S["count"], value=w(1 << 63)),                   # uint64
        arg(5, S["count"], value=struct.pack("<d", 2.5)),       # double
        arg(6, S["count"], S["qsort"]),                         # string, indexed
        arg(6, n_in, v_in, name_stream=s_in + vs_in),           # string, inline name and value
        arg(7, S["count"], value=w(0x7FFF0000)),                # pointer
        arg(8, S["count"], value=w(PID)),                       # koid
        arg(9, S["count"], 1),                                  # bool
        arg(10, S["count"], 3, value=stream(b"\x01\x02\x03")),  # blob
        arg(13, S["count"], 0, value=w(42)),                    # unknown type: skipped
    ]


def good(defect=None):
    """good.fxt, or with one defect; returns (bytes, offset of the defect)."""
    t = Trace()
    t.add(MAGIC if defect != "no-magic" else b"")
    t.add(provider_info(1, "fxtgen"))
    t.add(provider_section(1))
    t.add(init(1_000_000_000, extra=(0, 1_700_000_000_000_000_000)))
    for s, i in S.items():
        t.add(string(i, s))
    t.add(thread(T_MAIN, PID, TID_MAIN))
    t.add(thread(T_WORKER, PID, TID_WORKER))
    t.add(kernel_object(1, PID, S["demo"]))
    t.add(kernel_object(2, TID_MAIN, S["main-thread"],
                        args=[arg(8, S["process"], value=w(PID))]))
    ref, st = inline("worker-thread")
    t.add(kernel_object(2, TID_WORKER, ref, st, args=[arg(8, S["process"], value=w(PID))]))

    def ev(etype, name, ts, tref=T_MAIN, **kw):
        return event(etype, tref, S["fn"], S[name], ts, **kw)

    # thread 101: main > qsort > cmp, cmp; times in ns = the JSON's us * 1000
    t.add(ev(B, "main", 0))
    t.add(ev(B, "qsort", 10_000))
    t.add(ev(B, "cmp", 20_500))
    t.add(ev(E, "cmp", 25_000))
    t.add(ev(B, "cmp", 30_000, args=every_argument()), "args")
    t.add(event(E, T_MAIN, 0, 0, 35_000))                     # an end without names
    t.add(ev(I, "marker", 50_000))
    t.add(ev(E, "qsort", 70_000))
    t.add(ev(E, "main", 100_000))
    # thread 102: a complete event (inline category) around an inline-thread begin
    c_ref, c_st = inline("fn")
    t.add(event(X, T_WORKER, c_ref, S["worker_loop"], 5_000, cat_stream=c_st,
                extra=(95_000,)), "complete")
    t.add(ev(B, "io_wait", 40_000, tref=0, inline_thread=(PID, TID_WORKER)))
    t.add(ev(E, "io_wait", 60_000, tref=T_WORKER))

    # Everything else once: redefined string and thread indexes, instants
    # on a third thread, counter, async, flow, unknown event type.
    t.add(string(S["tmp"], "tmp-one"))
    t.add(event(I, T_MAIN, S["fn"], S["tmp"], 101_000))
    t.add(string(S["tmp"], "tmp-two"))
    t.add(thread(T_OTHER, PID, 103))
    t.add(event(I, T_OTHER, S["fn"], S["tmp"], 102_000))
    t.add(thread(T_OTHER, PID, 104))
    t.add(event(I, T_OTHER, S["fn"], S["tmp"], 103_000))
    t.add(event(1, T_MAIN, S["fn"], S["count"], 104_000, args=[arg(1, S["count"], 7)],
                extra=(1,)))                                   # counter, id 1
    for et in (5, 6, 7):                                       # async begin/instant/end
        t.add(event(et, T_WORKER, S["fn"], S["flow"], 105_000 + et, extra=(9,)))
    for et in (8, 9, 10):                                      # flow begin/step/end
        t.add(event(et, T_WORKER, 0, 0, 106_000 + et, extra=(3,)))
    t.add(event(11, T_MAIN, S["fn"], S["marker"], 107_000, extra=(0,)))  # unknown event type

    # Other record types of the specification.
    n_ref, n_st = inline("blobname")
    t.add(record(5, n_ref | (5 << 16) | (1 << 32), n_st + stream(b"hello")))     # blob
    t.add(record(6, 0 | (S["demo"] << 8) | (1 << 24),                             # userspace
                 w(0xDEAD0000) + w(PID) + arg(9, S["count"], 0)))
    msg = b"a log line"
    t.add(record(9, len(msg) | (T_MAIN << 16), w(108_000) + stream(msg)))         # log
    t.add(record(8, 1 | (3 << 8) | (T_MAIN << 12) | (0 << 20) | (0 << 44),       # legacy switch
                 w(109_000) + w(PID) + w(TID_WORKER)))
    t.add(record(8, 1 | (2 << 4) | (2 << 20) | (1 << 44),                        # context switch
                 w(109_500) + w(TID_MAIN) + w(TID_WORKER) + arg(1, S["count"], 3)))
    t.add(record(8, 0 | (1 << 4) | (2 << 44), w(109_600) + w(TID_MAIN)))          # wakeup
    t.add(record(10, 0 | (T_MAIN << 4) | (7 << 12) | (6 << 28) | (4 << 36),      # module
                 w(110_000) + stream(b"libc.s") + stream(b"\xbe\xef\x00\x01")))
    t.add(record(10, 1 | (T_MAIN << 4) | (7 << 12) | (5 << 28),                  # mmap
                 w(110_100) + w(0x400000) + w(0x1000) + w(0)))
    t.add(record(10, 2 | (0 << 4) | (2 << 12),                                   # backtrace
                 w(110_200) + w(PID) + w(TID_MAIN) + w(0x401000) + w(0x401100)))
    cat_ref, cat_st = inline("blobcat")
    t.add(large_record(0 | (0 << 4), w(cat_ref | (S["tmp"] << 16) | (1 << 32) | (T_MAIN << 36))
                       + cat_st + w(111_000) + arg(2, S["count"], 1) + w(3)
                       + stream(b"abc")))                      # large blob, with metadata
    t.add(large_record(0 | (1 << 4), w(S["fn"] | (S["tmp"] << 16)) + w(9)
                       + stream(b"123456789")))                # large blob, no metadata
    t.add(record(11, 0, w(1) + w(2)))                          # unknown record type
    t.add(record(0, 4 | (5 << 4)))                             # unknown trace info type

    bad = None
    if defect == "bad-size":
        # the complete event's size field one word short: its end time
        # word falls outside the record
        bad = t.offset()
        t.add(event(X, T_WORKER, S["fn"], S["worker_loop"], 112_000, extra=(113_000,), size=2))
    elif defect == "zero-size":
        bad = t.offset()
        t.add(record(4, 0, b"", size=0) + w(0))
    elif defect == "undefined-string":
        bad = t.offset()
        t.add(event(I, T_MAIN, S["fn"], 77, 112_000))
    elif defect == "undefined-thread":
        bad = t.offset()
        t.add(event(I, 9, S["fn"], S["marker"], 112_000))
    elif defect == "unbalanced-end":
        bad = t.offset()
        t.add(event(E, T_MAIN, S["fn"], S["main"], 120_000))
    elif defect == "unclosed-begin":
        bad = t.offset()
        t.add(event(B, T_MAIN, S["fn"], S["main"], 120_000))
    elif defect == "end-name-mismatch":
        t.add(event(B, T_MAIN, S["fn"], S["cmp"], 120_000))
        bad = t.offset()
        t.add(event(E, T_MAIN, S["fn"], S["qsort"], 121_000))
    elif defect == "complete-backwards":
        bad = t.offset()
        t.add(event(X, T_MAIN, S["fn"], S["cmp"], 130_000, extra=(129_999,)))
    elif defect == "overlap":
        # a complete event that starts inside main and ends after it
        bad = t.offset()
        t.add(event(X, T_MAIN, S["fn"], S["cmp"], 90_000, extra=(110_000,)))
    elif defect == "arg-size":
        # an int64 argument whose size field says 1 word: its value word
        # is read as the next argument's header
        bad = t.offset()
        t.add(event(I, T_MAIN, S["fn"], S["marker"], 112_000,
                    args=[arg(3, S["count"], value=w(5), size=1)]))
    elif defect == "trailing-word":
        bad = t.offset()
        t.add(event(I, T_MAIN, S["fn"], S["marker"], 112_000, extra=(0,)))
    elif defect == "padding":
        bad = t.offset()
        t.add(record(2, 20 | (3 << 16), b"abcXYZ!!"))          # 'abc' then junk padding
    elif defect == "reserved-bits":
        bad = t.offset()
        t.add(record(3, T_OTHER | (1 << 20), w(PID) + w(105)))  # bit 36 of a thread record
    elif defect == "thread-process-arg":
        bad = t.offset()
        t.add(kernel_object(2, 106, S["tmp"], args=[arg(6, S["process"], S["demo"])]))
    elif defect == "truncated":
        # the last record cut in the middle: only its first 8 bytes remain
        bad = t.offset()
        t.add(event(X, T_WORKER, S["fn"], S["worker_loop"], 112_000, extra=(113_000,))[:8])
    elif defect == "no-magic":
        bad = 0
    return t.bytes(), bad


CASES = [
    ("bad-size", "runs past the end of the event record"),
    ("zero-size", "has size 0"),
    ("undefined-string", "string index 77"),
    ("undefined-thread", "thread index 9"),
    ("unbalanced-end", "no open duration begin"),
    ("unclosed-begin", "never ended"),
    ("end-name-mismatch", "closes 'cmp'"),
    ("complete-backwards", "before it starts"),
    ("overlap", "without nesting"),
    ("arg-size", "argument"),
    ("trailing-word", "unexplained word"),
    ("padding", "padding"),
    ("reserved-bits", "reserved bits"),
    ("thread-process-arg", "not a koid"),
    ("truncated", "truncated event record"),
    ("no-magic", "magic record"),
]


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: fxtgen.py OUTDIR\n")
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "good.fxt"), "wb") as f:
        f.write(good()[0])
    with open(os.path.join(out, "cases.txt"), "w") as cases:
        for name, txt in CASES:
            data, off = good(name)
            fn = f"bad-{name}.fxt"
            with open(os.path.join(out, fn), "wb") as f:
                f.write(data)
            cases.write(f"{fn}\t{off}\t{txt}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
