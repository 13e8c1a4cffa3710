#!/usr/bin/env python3
"""fxtcheck.py - read a Fuchsia trace format (FXT) file and check every record.

Written from the format's specification (fuchsia.dev, "Fuchsia trace
format", docs/reference/tracing/trace-format.md in the Fuchsia tree) as a
judge for our FXT writer; python3 standard library only.

  fxtcheck.py [--dump | --slices] [--lenient] [--max-errors N] FILE

Checks, record by record: the file starts with the magic record; each
header's size field (in 8-byte words; 32 bits for large records, type 15)
is not 0 and fits in the file; known record types parse exactly: every
field, inline string and thread, argument (each with its own header and
size) and stream lies inside the record, the fields fill the record (no
unexplained words at its end), stream padding and reserved bits are zero;
string refs (inline / index) and thread refs (inline / index) name entries
that earlier string and thread records defined (per provider section).
Unknown record, event, argument and metadata types are skipped by their
size and counted. Then, per thread (process koid, thread koid): duration
begin/end events nest (a stack; an end that names itself must close the
begin of that name), none stays open, complete events end at or after
their start, and slices on a thread nest without partial overlap.

Output: a summary (or, with --dump / --slices, the summary and errors on
stderr and on stdout):
  --dump    one line per event: TICKS PID TID PH CATEGORY NAME [DUR]
            PH: B E X I, and C (counter) b n e (async) s t f (flow);
            '-' for an empty category or name; DUR only for X.
  --slices  one line per slice (begin/end pair or complete event):
            PID TID START_TICKS END_TICKS DEPTH NAME, sorted; the same
            lines as chromeslices.py prints for a Chrome JSON trace.
  --lenient read as the specification lets a reader: words appended to a
            known record or argument are skipped, reserved bits and padding
            are not checked, an end event may name another slice than the
            one it closes (magic-trace does so for inferred start times).
            Without it, only the initialization record may carry extra
            words (magic-trace appends base ticks and base time).

Exit 0 when the file is valid, 1 with one line per error naming the
record's byte offset, 2 when the file cannot be read or the usage is wrong.
"""

import argparse
import struct
import sys

MAGIC = 0x0016547846040010

RECORD_NAMES = {
    0: "metadata", 1: "initialization", 2: "string", 3: "thread", 4: "event",
    5: "blob", 6: "userspace object", 7: "kernel object", 8: "scheduling",
    9: "log", 10: "profiler", 15: "large",
}
# event type -> (letter for --dump, name, its one word of event-type
# specific data after the arguments, or None)
EVENT_TYPES = {
    0: ("I", "instant", None), 1: ("C", "counter", "counter id word"),
    2: ("B", "duration begin", None), 3: ("E", "duration end", None),
    4: ("X", "duration complete", "end time word"),
    5: ("b", "async begin", "async correlation word"),
    6: ("n", "async instant", "async correlation word"),
    7: ("e", "async end", "async correlation word"),
    8: ("s", "flow begin", "flow correlation word"),
    9: ("t", "flow step", "flow correlation word"),
    10: ("f", "flow end", "flow correlation word"),
}
ARG_TYPES = {
    0: "null", 1: "int32", 2: "uint32", 3: "int64", 4: "uint64", 5: "double",
    6: "string", 7: "pointer", 8: "koid", 9: "bool", 10: "blob",
}
ZX_OBJ_TYPE_PROCESS = 1
ZX_OBJ_TYPE_THREAD = 2


def bits(word, lo, hi):
    """Field [lo .. hi] of a 64-bit word, both bits inclusive."""
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def plural(n, what):
    return f"{n} {what}{'' if n == 1 else 's'}"


class RecordError(Exception):
    """A record (or argument) that does not parse; the message says why."""


class Cursor:
    """Reads the words of one record (or argument) and never past its end."""

    def __init__(self, data, start, end, what, strict):
        self.data, self.pos, self.start, self.end = data, start, start, end
        self.what = what
        self.strict = strict

    def words(self):
        return (self.end - self.start) // 8

    def word(self, field):
        if self.pos + 8 > self.end:
            raise RecordError(
                f"{field} runs past the end of the {self.what} "
                f"(its size field says {plural(self.words(), 'word')})")
        (w,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return w

    def stream(self, nbytes, field):
        nwords = (nbytes + 7) // 8
        if self.pos + nwords * 8 > self.end:
            raise RecordError(
                f"{field} ({nbytes} bytes) runs past the end of the {self.what} "
                f"(its size field says {plural(self.words(), 'word')})")
        raw = self.data[self.pos:self.pos + nbytes]
        pad = self.data[self.pos + nbytes:self.pos + nwords * 8]
        if self.strict and any(pad):
            raise RecordError(f"the padding after {field} is not zero ({pad.hex()})")
        self.pos += nwords * 8
        return raw

    def reserved(self, word, lo, hi, field):
        if self.strict and bits(word, lo, hi):
            raise RecordError(
                f"reserved bits [{lo} .. {hi}] of the {field} are not zero "
                f"(0x{bits(word, lo, hi):x}; word 0x{word:016x})")


class Provider:
    """What a provider section's records refer to (spec: 'Provider section
    metadata': the reader keeps these per provider)."""

    def __init__(self, pid, name):
        self.id, self.name = pid, name
        self.strings = {}   # index -> str
        self.threads = {}   # index -> (process koid, thread koid)
        self.ticks_per_second = None


def text(raw):
    return raw.decode("utf-8", errors="replace")


class Checker:
    def __init__(self, data, strict=True, max_errors=50):
        self.data = data
        self.strict = strict
        self.max_errors = max_errors
        self.errors = []        # (offset or None, message)
        self.warnings = []
        self.counts = {}        # record kind -> count
        self.unknown = {}       # description -> count
        self.extended = {}      # record kind -> records carrying extra words
        self.events = []        # dicts, in file order
        self.providers = {None: Provider(None, "")}
        self.provider = self.providers[None]
        self.ticks_per_second = set()
        self.process_names = {}
        self.thread_names = {}  # thread koid -> name
        self.thread_process = {}  # thread koid -> process koid (its 'process' arg)
        self.invalid_utf8 = 0
        self.records = 0

    # --- reporting -------------------------------------------------------
    def error(self, off, msg):
        self.errors.append((off, msg))

    def warn(self, msg):
        self.warnings.append(msg)

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def skip(self, kind):
        self.unknown[kind] = self.unknown.get(kind, 0) + 1

    # --- references ------------------------------------------------------
    def string_ref(self, cur, ref, field):
        """The string a 16-bit string ref names: 0 empty, MSB set inline
        (low 15 bits: length; the stream follows in the record), otherwise
        an index into the string table."""
        if ref == 0:
            return ""
        if ref & 0x8000:
            raw = cur.stream(ref & 0x7FFF, f"{field} (inline string)")
            s = raw.decode("utf-8", errors="replace")
            if "\ufffd" in s and "\ufffd".encode() not in raw:
                self.invalid_utf8 += 1
            return s
        if ref not in self.provider.strings:
            raise RecordError(
                f"{field} refers to string index {ref}, which no earlier string record defined")
        return self.provider.strings[ref]

    def thread_ref(self, cur, ref, field):
        """(process koid, thread koid) of an 8-bit thread ref: 0 inline (two
        words follow), otherwise an index into the thread table."""
        if ref == 0:
            pid = cur.word(f"{field} process koid (inline thread)")
            tid = cur.word(f"{field} thread koid (inline thread)")
            return pid, tid
        if ref not in self.provider.threads:
            raise RecordError(
                f"{field} refers to thread index {ref}, which no earlier thread record defined")
        return self.provider.threads[ref]

    def arguments(self, cur, n, field):
        """n arguments, each a header word [0..3] type, [4..15] size in
        words (header included), [16..31] name (string ref), [32..63] by
        type, then the name stream, then the value."""
        args = []
        for i in range(1, n + 1):
            a_start = cur.pos
            h = cur.word(f"{field} argument {i} header")
            atype, asize = bits(h, 0, 3), bits(h, 4, 15)
            tname = ARG_TYPES.get(atype, f"type {atype}")
            if asize == 0:
                raise RecordError(f"{field} argument {i} ({tname}) has size 0")
            a_end = a_start + asize * 8
            if a_end > cur.end:
                raise RecordError(
                    f"{field} argument {i} ({tname}, {asize} words) runs past the end of the "
                    f"{cur.what} (its size field says {plural(cur.words(), 'word')})")
            a = Cursor(cur.data, a_start, a_end, f"argument {i} ({tname})", cur.strict)
            a.pos = a_start + 8
            name = self.string_ref(a, bits(h, 16, 31), f"argument {i} name")
            if atype not in ARG_TYPES:
                self.skip(f"argument type {atype}")
                args.append((name, tname, None))
                cur.pos = a_end
                continue
            if atype == 0:
                a.reserved(h, 32, 63, "null argument header")
                value = None
            elif atype == 1:
                value = bits(h, 32, 63)
                value = value - (1 << 32) if value >= 1 << 31 else value
            elif atype == 2:
                value = bits(h, 32, 63)
            elif atype in (3, 4, 5, 7, 8):
                a.reserved(h, 32, 63, f"{tname} argument header")
                value = a.word(f"argument {i} ({tname}) value")
                if atype == 3 and value >= 1 << 63:
                    value -= 1 << 64
                elif atype == 5:
                    value = struct.unpack("<d", struct.pack("<Q", value))[0]
            elif atype == 6:
                a.reserved(h, 48, 63, "string argument header")
                value = self.string_ref(a, bits(h, 32, 47), f"argument {i} value")
            elif atype == 9:
                a.reserved(h, 33, 63, "bool argument header")
                value = bool(bits(h, 32, 32))
            else:  # 10 blob
                value = a.stream(bits(h, 32, 63), f"argument {i} blob payload")
            if a.pos != a_end:
                extra = (a_end - a.pos) // 8
                if cur.strict:
                    raise RecordError(
                        f"{field} argument {i} ({tname}): its size field says {asize} words, "
                        f"its fields take {asize - extra}")
                self.extended[f"argument {tname}"] = self.extended.get(f"argument {tname}", 0) + 1
            cur.pos = a_end
            args.append((name, tname, value))
        return args

    # --- records ---------------------------------------------------------
    def run(self):
        data = self.data
        if len(data) < 8:
            self.error(0, f"the file has {len(data)} bytes: not even one record header")
            return
        (first,) = struct.unpack_from("<Q", data, 0)
        if first != MAGIC:
            if first == struct.unpack("<Q", struct.pack(">Q", MAGIC))[0]:
                self.error(0, "the magic record is big-endian: this reader takes little-endian FXT")
                return
            self.error(0, f"the file does not start with the FXT magic record "
                          f"0x{MAGIC:016x} (found 0x{first:016x})")
        off = 0
        while off < len(data):
            if len(self.errors) > 10 * self.max_errors:
                break
            if len(data) - off < 8:
                self.error(off, f"truncated: {len(data) - off} bytes after the last record, "
                                f"less than a header word")
                break
            (h,) = struct.unpack_from("<Q", data, off)
            rtype = bits(h, 0, 3)
            size = bits(h, 4, 35) if rtype == 15 else bits(h, 4, 15)
            rname = RECORD_NAMES.get(rtype, f"type {rtype}")
            if size == 0:
                self.error(off, f"{rname} record (header 0x{h:016x}) has size 0: "
                                f"no reader can step over it; stopping")
                break
            if off + size * 8 > len(data):
                self.error(off, f"truncated {rname} record: its size field says {size} words "
                                f"({size * 8} bytes), {len(data) - off} bytes remain in the file")
                break
            self.records += 1
            cur = Cursor(data, off, off + size * 8, f"{rname} record", self.strict)
            cur.pos = off + 8
            try:
                kind = self.record(cur, h, rtype, off)
                if kind is not None and cur.pos != cur.end:
                    extra = (cur.end - cur.pos) // 8
                    if self.strict and rtype != 1:
                        raise RecordError(
                            f"its size field says {size} words, its fields take {size - extra} "
                            f"({extra} unexplained word{'s' if extra > 1 else ''} at its end)")
                    self.extended[kind] = self.extended.get(kind, 0) + 1
            except RecordError as e:
                self.error(off, f"{rname} record: {e}")
            off += size * 8

    def record(self, cur, h, rtype, off):
        """Parses one record; returns its kind (None when skipped unread)."""
        if rtype == 0:
            return self.metadata(cur, h, off)
        if rtype == 1:
            cur.reserved(h, 16, 63, "initialization record header")
            tps = cur.word("ticks per second word")
            if tps == 0:
                raise RecordError("0 ticks per second")
            self.provider.ticks_per_second = tps
            self.ticks_per_second.add(tps)
            self.count("initialization")
            return "initialization"
        if rtype == 2:
            index, length = bits(h, 16, 30), bits(h, 32, 46)
            cur.reserved(h, 31, 31, "string record header")
            cur.reserved(h, 47, 63, "string record header")
            raw = cur.stream(length, "string value")
            s = raw.decode("utf-8", errors="replace")
            if "\ufffd" in s and "\ufffd".encode() not in raw:
                self.invalid_utf8 += 1
            if index == 0:
                self.warn(f"byte offset {off}: string record for index 0 (reserved for the "
                          f"empty string): ignored, as the specification says")
            else:
                self.provider.strings[index] = s
            self.count("string")
            return "string"
        if rtype == 3:
            index = bits(h, 16, 23)
            cur.reserved(h, 24, 63, "thread record header")
            pid = cur.word("process koid word")
            tid = cur.word("thread koid word")
            if index == 0:
                self.warn(f"byte offset {off}: thread record for index 0 (reserved for inline "
                          f"threads): ignored, as the specification says")
            else:
                self.provider.threads[index] = (pid, tid)
            self.count("thread")
            return "thread"
        if rtype == 4:
            return self.event(cur, h, off)
        if rtype == 5:
            cur.reserved(h, 47, 47, "blob record header")
            cur.reserved(h, 56, 63, "blob record header")
            self.string_ref(cur, bits(h, 16, 31), "blob name")
            cur.stream(bits(h, 32, 46), "blob payload")
            self.count("blob")
            return "blob"
        if rtype == 6:
            cur.reserved(h, 44, 63, "userspace object record header")
            cur.word("pointer word")
            if bits(h, 16, 23) == 0:
                cur.word("process koid word (inline process)")
            elif bits(h, 16, 23) not in self.provider.threads:
                raise RecordError(f"process refers to thread index {bits(h, 16, 23)}, "
                                  f"which no earlier thread record defined")
            self.string_ref(cur, bits(h, 24, 39), "object name")
            self.arguments(cur, bits(h, 40, 43), "object")
            self.count("userspace object")
            return "userspace object"
        if rtype == 7:
            return self.kernel_object(cur, h, off)
        if rtype == 8:
            return self.scheduling(cur, h)
        if rtype == 9:
            cur.reserved(h, 31, 31, "log record header")
            cur.reserved(h, 40, 63, "log record header")
            cur.word("timestamp word")
            self.thread_ref(cur, bits(h, 32, 39), "thread")
            cur.stream(bits(h, 16, 30), "log message")
            self.count("log")
            return "log"
        if rtype == 10:
            return self.profiler(cur, h)
        if rtype == 15:
            return self.large(cur, h)
        self.skip(f"record type {rtype}")
        return None

    def metadata(self, cur, h, off):
        mtype = bits(h, 16, 19)
        if mtype == 1:
            pid = bits(h, 20, 51)
            cur.reserved(h, 60, 63, "provider info metadata header")
            name = text(cur.stream(bits(h, 52, 59), "provider name"))
            self.providers[pid] = Provider(pid, name)
            self.provider = self.providers[pid]
            self.count("provider info")
            return "provider info"
        if mtype == 2:
            pid = bits(h, 20, 51)
            cur.reserved(h, 52, 63, "provider section metadata header")
            if pid not in self.providers:
                # Perfetto's importer then drops every record that follows.
                raise RecordError(f"provider section for provider {pid}, which no provider "
                                  f"info record registered")
            self.provider = self.providers[pid]
            self.count("provider section")
            return "provider section"
        if mtype == 3:
            cur.reserved(h, 56, 63, "provider event metadata header")
            if bits(h, 52, 55) == 0:
                self.warn(f"byte offset {off}: provider {bits(h, 20, 51)} says its buffer "
                          f"filled up: records were likely dropped")
            self.count("provider event")
            return "provider event"
        if mtype == 4:
            itype = bits(h, 20, 23)
            if itype == 0:
                if h != MAGIC or cur.words() != 1:
                    raise RecordError(f"a magic number record must be the one word "
                                      f"0x{MAGIC:016x} (found 0x{h:016x}, {cur.words()} words)")
                self.count("magic")
                return "magic"
            self.skip(f"trace info type {itype}")
            return None
        self.skip(f"metadata type {mtype}")
        return None

    def event(self, cur, h, off):
        etype, nargs = bits(h, 16, 19), bits(h, 20, 23)
        ts = cur.word("timestamp word")
        pid, tid = self.thread_ref(cur, bits(h, 24, 31), "thread")
        cat = self.string_ref(cur, bits(h, 32, 47), "category")
        name = self.string_ref(cur, bits(h, 48, 63), "name")
        args = self.arguments(cur, nargs, "event")
        if etype not in EVENT_TYPES:
            self.skip(f"event type {etype}")
            cur.pos = cur.end
            return "event"
        letter, ename, extra = EVENT_TYPES[etype]
        ev = {"off": off, "ph": letter, "ts": ts, "pid": pid, "tid": tid,
              "cat": cat, "name": name, "args": args}
        if extra:
            ev["word"] = cur.word(f"{ename} {extra}")
        self.events.append(ev)
        self.count(f"event {letter}")
        return "event"

    def kernel_object(self, cur, h, off):
        otype = bits(h, 16, 23)
        cur.reserved(h, 44, 63, "kernel object record header")
        koid = cur.word("koid word")
        # Names may be any bytes (the specification asks readers to accept
        # names from guest systems that are not UTF-8).
        name = self.string_ref(cur, bits(h, 24, 39), "object name")
        args = self.arguments(cur, bits(h, 40, 43), "object")
        if otype == ZX_OBJ_TYPE_PROCESS:
            self.process_names[koid] = name
        elif otype == ZX_OBJ_TYPE_THREAD:
            self.thread_names[koid] = name
            proc = [a for a in args if a[0] == "process"]
            if not proc:
                self.warn(f"byte offset {off}: thread {koid} \"{name}\" has no 'process' "
                          f"argument: Perfetto files it under process 0")
            elif proc[0][1] != "koid":
                raise RecordError(f"thread {koid}: its 'process' argument is a {proc[0][1]}, "
                                  f"not a koid (Perfetto drops the record)")
            else:
                self.thread_process[koid] = proc[0][2]
        self.count("kernel object")
        return "kernel object"

    def scheduling(self, cur, h):
        stype = bits(h, 60, 63)
        if stype == 0:
            cur.word("timestamp word")
            self.thread_ref(cur, bits(h, 28, 35), "outgoing thread")
            self.thread_ref(cur, bits(h, 36, 43), "incoming thread")
        elif stype == 1:
            cur.reserved(h, 40, 59, "context switch record header")
            cur.word("timestamp word")
            cur.word("outgoing thread koid word")
            cur.word("incoming thread koid word")
            self.arguments(cur, bits(h, 16, 19), "context switch")
        elif stype == 2:
            cur.reserved(h, 36, 59, "thread wakeup record header")
            cur.word("timestamp word")
            cur.word("waking thread koid word")
            self.arguments(cur, bits(h, 16, 19), "thread wakeup")
        else:
            self.skip(f"scheduling record type {stype}")
            return None
        self.count("scheduling")
        return "scheduling"

    def profiler(self, cur, h):
        sub = bits(h, 16, 19)
        if sub not in (0, 1, 2):
            self.skip(f"profiler record subtype {sub}")
            return None
        cur.word("timestamp word")
        self.thread_ref(cur, bits(h, 20, 27), "thread")
        if sub == 0:
            cur.reserved(h, 60, 63, "module record header")
            cur.stream(bits(h, 44, 51), "module name")
            cur.stream(bits(h, 52, 59), "build id")
        elif sub == 1:
            cur.reserved(h, 47, 63, "mmap record header")
            cur.word("start address word")
            cur.word("address range word")
            cur.word("vaddr word")
        else:
            cur.reserved(h, 36, 63, "backtrace record header")
            for i in range(bits(h, 28, 35)):
                cur.word(f"backtrace frame {i + 1}")
        self.count("profiler")
        return "profiler"

    def large(self, cur, h):
        ltype, fmt = bits(h, 36, 39), bits(h, 40, 43)
        if ltype != 0 or fmt not in (0, 1):
            self.skip(f"large record type {ltype} format {fmt}")
            return None
        cur.reserved(h, 44, 63, "large blob record header")
        f = cur.word("format header word")
        if fmt == 0:
            cur.reserved(f, 44, 63, "large blob format header")
            self.string_ref(cur, bits(f, 0, 15), "category")
            self.string_ref(cur, bits(f, 16, 31), "name")
            cur.word("timestamp word")
            self.thread_ref(cur, bits(f, 36, 43), "thread")
            self.arguments(cur, bits(f, 32, 35), "large blob")
        else:
            cur.reserved(f, 32, 63, "large blob format header")
            self.string_ref(cur, bits(f, 0, 15), "category")
            self.string_ref(cur, bits(f, 16, 31), "name")
        size = cur.word("blob size word")
        cur.stream(size, "blob payload")
        self.count("large blob")
        return "large blob"

    # --- per-thread checks -------------------------------------------------
    def nesting(self):
        """Duration begin/end on each thread, in time order (the
        specification: event records need not be in timestamp order and
        readers sort them; a stable sort keeps the file order of equal
        times), must form a stack. Returns the slices."""
        by_thread = {}
        for ev in self.events:
            by_thread.setdefault((ev["pid"], ev["tid"]), []).append(ev)
        slices = []
        for (pid, tid), evs in by_thread.items():
            where = f"thread {pid}/{tid}"
            last, unordered = None, 0
            for ev in evs:
                if ev["ph"] in "BEI":
                    if last is not None and ev["ts"] < last:
                        unordered += 1
                    last = ev["ts"]
            if unordered:
                self.warn(f"{where}: {unordered} begin/end/instant events earlier in time than "
                          f"the one before them in the file (checked in time order)")
            stack = []
            for ev in sorted((e for e in evs if e["ph"] in "BE"), key=lambda e: e["ts"]):
                if ev["ph"] == "B":
                    stack.append(ev)
                    continue
                if not stack:
                    self.error(ev["off"], f"duration end '{ev['name']}' on {where} at "
                                          f"{ev['ts']} with no open duration begin")
                    continue
                top = stack[-1]
                if ev["name"] and ev["name"] != top["name"]:
                    msg = (f"duration end '{ev['name']}' on {where} at {ev['ts']} closes "
                           f"'{top['name']}' begun at byte offset {top['off']}")
                    if self.strict:
                        self.error(ev["off"], msg)
                    else:
                        self.warn(f"byte offset {ev['off']}: {msg}")
                stack.pop()
                slices.append({"pid": pid, "tid": tid, "start": top["ts"], "end": ev["ts"],
                               "name": top["name"], "off": top["off"]})
            if stack:
                self.error(stack[-1]["off"],
                           f"{len(stack)} duration begin{'s' if len(stack) > 1 else ''} on "
                           f"{where} never ended (innermost '{stack[-1]['name']}' at "
                           f"{stack[-1]['ts']})")
            for ev in evs:
                if ev["ph"] != "X":
                    continue
                if ev["word"] < ev["ts"]:
                    self.error(ev["off"], f"complete event '{ev['name']}' on {where} ends at "
                                          f"{ev['word']}, before it starts at {ev['ts']}")
                    continue
                slices.append({"pid": pid, "tid": tid, "start": ev["ts"], "end": ev["word"],
                               "name": ev["name"], "off": ev["off"]})
        problems = slice_depths(slices)
        for s, parent in problems:
            self.error(s["off"], f"slice '{s['name']}' [{s['start']}, {s['end']}] on thread "
                                 f"{s['pid']}/{s['tid']} overlaps '{parent['name']}' "
                                 f"[{parent['start']}, {parent['end']}] (byte offset "
                                 f"{parent['off']}) without nesting in it")
        return slices


def slice_depths(slices):
    """Sets s["depth"] for slices (dicts with pid, tid, start, end) as a
    viewer stacks them: per thread, by start time, longer first; a slice
    lies inside the innermost open one it starts in (a slice that ends where
    the next starts is closed; a zero-length one at an open slice's end is
    inside it only if that one is zero-length too). Returns the (slice,
    enclosing slice) pairs that overlap without nesting."""
    problems = []
    by_thread = {}
    for i, s in enumerate(slices):
        by_thread.setdefault((s["pid"], s["tid"]), []).append((i, s))
    for items in by_thread.values():
        items.sort(key=lambda p: (p[1]["start"], -p[1]["end"], p[0]))
        stack = []
        for _, s in items:
            while stack and (stack[-1]["end"] < s["start"] or
                             (stack[-1]["end"] == s["start"] and
                              stack[-1]["end"] > stack[-1]["start"])):
                stack.pop()
            if stack and s["end"] > stack[-1]["end"]:
                problems.append((s, stack[-1]))
            s["depth"] = len(stack)
            stack.append(s)
    return problems


def slice_lines(slices):
    rows = sorted(slices, key=lambda s: (s["pid"], s["tid"], s["start"], s["depth"],
                                         -s["end"], s["name"]))
    return [f"{s['pid']} {s['tid']} {s['start']} {s['end']} {s['depth']} {s['name']}"
            for s in rows]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check a Fuchsia trace format (FXT) file.")
    ap.add_argument("file")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dump", action="store_true", help="print one line per event")
    mode.add_argument("--slices", action="store_true", help="print one line per slice")
    ap.add_argument("--lenient", action="store_true",
                    help="accept appended words, nonzero reserved bits and padding, "
                         "and end events naming another slice")
    ap.add_argument("--max-errors", type=int, default=50, metavar="N")
    a = ap.parse_args(argv)
    try:
        with open(a.file, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"fxtcheck: {a.file}: {e.strerror}", file=sys.stderr)
        return 2
    c = Checker(data, strict=not a.lenient, max_errors=a.max_errors)
    c.run()
    slices = c.nesting()
    report = sys.stderr if (a.dump or a.slices) else sys.stdout
    if a.dump:
        for ev in c.events:
            line = (f"{ev['ts']} {ev['pid']} {ev['tid']} {ev['ph']} {ev['cat'] or '-'} "
                    f"{ev['name'] or '-'}")
            if ev["ph"] == "X":
                line += f" {ev['word'] - ev['ts']}"
            print(line)
    if a.slices:
        for line in slice_lines(slices):
            print(line)
    name = a.file
    for w in c.warnings[:a.max_errors]:
        print(f"fxtcheck: {name}: warning: {w}", file=report)
    c.errors.sort(key=lambda e: e[0])
    for off, msg in c.errors[:a.max_errors]:
        print(f"fxtcheck: {name}: byte offset {off} (0x{off:x}): {msg}", file=report)
    if len(c.errors) > a.max_errors:
        print(f"fxtcheck: {name}: ... and {len(c.errors) - a.max_errors} more errors", file=report)
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(c.counts.items()))
    skipped = ", ".join(f"{k} x{n}" for k, n in sorted(c.unknown.items())) or "none"
    ext = ", ".join(f"{k} x{n}" for k, n in sorted(c.extended.items())) or "none"
    threads = {(s["pid"], s["tid"]) for s in slices}
    depth = max((s["depth"] for s in slices), default=-1) + 1
    tps = "/".join(str(t) for t in sorted(c.ticks_per_second)) or "none (1 tick = 1 ns)"
    names = "; ".join([f"process {k} \"{v}\"" for k, v in sorted(c.process_names.items())] +
                      [f"thread {k} \"{v}\"" + (f" of {c.thread_process[k]}"
                                                if k in c.thread_process else "")
                       for k, v in sorted(c.thread_names.items())])
    print(f"fxtcheck: {name}: {len(data)} bytes, {c.records} records ({kinds}); "
          f"unknown, skipped: {skipped}; extended: {ext}; ticks/s {tps}; "
          f"{len(slices)} slices on {len(threads)} threads, max depth {depth}"
          + (f"; {c.invalid_utf8} strings not UTF-8" if c.invalid_utf8 else "")
          + (f"; names: {names}" if names else ""), file=report)
    if c.errors:
        print(f"fxtcheck: {name}: INVALID: {len(c.errors)} error{'s' if len(c.errors) > 1 else ''}"
              f", the first at byte offset {c.errors[0][0]}", file=report)
        return 1
    print(f"fxtcheck: {name}: ok", file=report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
