#!/usr/bin/env python3
"""tests/decoder/errata_cmp.py - compare one errata case's decodes.

usage:
  errata_cmp.py want WANT JSONL [--reference]
      our decode (ptrace-read -f jsonl) against the events the unit test
      wrote from the SDM (NAME.want: "type flags a b", hex). Not compared:
      the TIME_EXACT flag, and INTRA (it depends on the symbols, which the
      unit test has none of); with --reference also INDIRECT on returns
      (libipt does not say whether a return was compressed).
  errata_cmp.py perf PERF_SCRIPT JSONL
      perf's branches (perf script --itrace=be -F ip,addr,flags) against
      ours (ptrace-capture --all-branches): the same transfers, in order,
      as perf prints them ("from => to"; 0 for an end or a start); with
      --itrace=bew -F ip,addr,flags,synth also its ptwrite samples ("IP:
      1 payload: 0x2a" and the sample's IP) among them, against our
      ptwrite events (STRACE_PTW_IP, payload, ip).
Prints the first difference and exits 1 when they differ.
"""
import json
import sys

FLOW = {"call", "return", "jump", "syscall", "interrupt", "sysret"}


def ours(path):
    evs = []
    for line in open(path):
        e = json.loads(line)
        t = e.get("type")
        if t in ("symbol", "dso", "process", "thread", "thread_exit", "lost"):
            continue
        evs.append(e)
    return evs


def num(v):
    if isinstance(v, int):
        return v
    return int(str(v), 16) if str(v).startswith("0x") else int(v)


def operands(e):
    """(a, b) of an event as numbers, whatever the operands are named."""
    t = e["type"]
    if t in ("trace_begin", "trace_end"):
        return num(e["ip"]), e["reason"]
    if t in ("overflow", "error"):
        return num(e["ip"]), None  # the offset is not compared
    if t == "pebs":
        return num(e["ip"]), num(e["counters"])
    if t == "pebs_item":
        return num(e["item"]), num(e["value"])
    if t == "ptwrite":
        return num(e["ip"]), num(e["payload"])
    return num(e["from"]), num(e["to"])


def cmp_want(want_path, jsonl, reference):
    want = []
    for line in open(want_path):
        t, f, a, b = line.split()
        want.append((t, int(f, 16), int(a, 16), int(b, 16)))
    got = ours(jsonl)
    reasons = {1: "start", 2: "end", 3: "enable", 4: "disable", 5: "sync",
               6: "overflow", 7: "error"}
    mask = ~(0x10 | 0x04)
    for i in range(max(len(want), len(got))):
        if i >= len(want) or i >= len(got):
            print("event %d: want %s, got %s" % (
                i, want[i] if i < len(want) else "nothing",
                got[i] if i < len(got) else "nothing"))
            return 1
        t, f, a, b = want[i]
        e = got[i]
        ga, gb = operands(e)
        gf = e.get("flags", 0)
        if t == "error":
            ok = e["type"] == t and gf == f
        else:
            m = mask
            if reference and t == "return":
                m &= ~0x08
            if t in ("trace_begin", "trace_end"):
                b = reasons.get(b, b)
            if t == "overflow":
                b = None
            ok = (e["type"] == t and ga == a and gb == b and
                  (gf & m) == (f & m))
        if not ok:
            print("event %d: want %s %x %x %s, got %s" % (i, t, f, a, b, e))
            return 1
    return 0


def perf_pairs(path):
    pairs = []
    for line in open(path):
        w = line.split()
        if "payload:" in w and "IP:" in w:
            # a ptwrite sample: its IP bit, payload and IP (the last
            # field printed)
            pairs.append(("ptwrite", int(w[w.index("IP:") + 1]),
                          int(w[w.index("payload:") + 1], 16),
                          int(w[-1], 16)))
            continue
        if "=>" not in w or "error" in w:
            continue
        k = w.index("=>")
        pairs.append((int(w[k - 1], 16), int(w[k + 1], 16)))
    return pairs


def our_pairs(jsonl):
    """Our events as perf prints the transfers."""
    pairs = []
    evs = ours(jsonl)
    for i, e in enumerate(evs):
        t = e["type"]
        if t == "trace_begin":
            if e["reason"] != "start":
                pairs.append((0, num(e["ip"])))
        elif t == "trace_end":
            if e["reason"] != "disable":
                continue
            prev = evs[i - 1] if i else None
            # a branch that left the filter: perf prints it once,
            # "tr end call/return/jmp from => to"
            if prev and prev["type"] in FLOW and num(prev["from"]) == \
                    num(e["ip"]):
                continue
            pairs.append((num(e["ip"]), 0))
        elif t == "sysret":
            pairs.append((0, num(e["to"])))
        elif t == "ptwrite":
            pairs.append(("ptwrite", 1 if e.get("flags", 0) & 0x100 else 0,
                          num(e["payload"]), num(e["ip"])))
        elif t in FLOW:
            pairs.append((num(e["from"]), num(e["to"])))
    return pairs


def cmp_perf(perf_path, jsonl):
    p = perf_pairs(perf_path)
    o = our_pairs(jsonl)
    # perf prints a trace that starts with a TIP.PGE as "tr strt"; ours
    # says reason=start for the first begin however it came
    evs = ours(jsonl)
    if evs and evs[0]["type"] == "trace_begin" and \
            evs[0]["reason"] == "start" and p and \
            p[0] == (0, num(evs[0]["ip"])) and (not o or o[0] != p[0]):
        p = p[1:]
    if p == o:
        return 0
    for i in range(max(len(p), len(o))):
        a = p[i] if i < len(p) else None
        b = o[i] if i < len(o) else None
        if a != b:
            def fmt(x):
                if x is None:
                    return "none"
                if x[0] == "ptwrite":
                    return "ptwrite IP: %d payload: %#x at %x" % x[1:]
                return "%x => %x" % x
            print("branch %d: perf %s, ours %s" % (i, fmt(a), fmt(b)))
            return 1
    return 1


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "want":
        return cmp_want(sys.argv[2], sys.argv[3], "--reference" in sys.argv)
    if len(sys.argv) == 4 and sys.argv[1] == "perf":
        return cmp_perf(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
