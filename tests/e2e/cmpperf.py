#!/usr/bin/env python3
"""Compare ptrace-capture's events with perf's own decoder, per thread.

usage: cmpperf.py PERF_SCRIPT_OUTPUT OUR_JSONL [--all-branches]

PERF_SCRIPT_OUTPUT is `perf script --itrace=b --no-demangle
-F tid,flags,ip,sym,addr` of the same perf.data; OUR_JSONL is
`ptrace-read -f jsonl` of the ring ptrace-capture wrote.

Both sides are reduced to the events the product promises (calls,
returns, jumps between symbols, syscalls and the returns from them) as
(kind, from, to, from symbol, to symbol), per thread, in order. With
--all-branches every taken branch counts (ours: every jump).
Prints a verdict line and, on a difference, where the sequences part.
Exit 0 when equal.
"""
import json
import sys


def perf_events(path, all_branches):
    out = {}
    after_syscall = {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) < 6 or t[-3] != "=>":
                continue
            tid = int(t[0])
            to_sym, to, from_sym, frm = t[-1], int(t[-2], 16), t[-4], int(t[-5], 16)
            flags = " ".join(t[1:-5])
            seq = out.setdefault(tid, [])
            if flags == "call":
                kind = "call"
            elif flags == "return":
                kind = "return"
            elif flags in ("jmp", "jcc"):
                if not all_branches and from_sym == to_sym and from_sym != "[unknown]":
                    continue
                kind = "jump"
            elif flags.startswith("tr end") and "syscall" in flags:
                kind = "syscall"
                after_syscall[tid] = True
                seq.append((kind, frm, 0, from_sym, "[unknown]"))
                continue
            elif flags == "tr strt":
                if after_syscall.pop(tid, False):
                    seq.append(("sysret", 0, to, "[unknown]", to_sym))
                continue
            else:
                continue
            seq.append((kind, frm, to, from_sym, to_sym))
    return out


def sym_name(s):
    if not s or s.startswith("["):
        return "[unknown]"
    return s.split("+0x")[0]


def our_events(path):
    out = {}
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            kind = e["type"]
            if kind not in ("call", "return", "jump", "syscall", "sysret"):
                continue
            frm, to = e.get("from", 0), e.get("to", 0)
            fs = sym_name(e.get("from_sym")) if frm else "[unknown]"
            ts = sym_name(e.get("to_sym")) if to else "[unknown]"
            out.setdefault(e["tid"], []).append((kind, frm, to, fs, ts))
    return out


def show(e):
    return "%s %x %s => %x %s" % (e[0], e[1], e[3], e[2], e[4])


def main():
    all_branches = "--all-branches" in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    perf = perf_events(args[0], all_branches)
    ours = our_events(args[1])
    ok = True
    for tid in sorted(set(perf) | set(ours)):
        p, o = perf.get(tid, []), ours.get(tid, [])
        if p == o:
            print("thread %d: %d events equal" % (tid, len(p)))
            continue
        ok = False
        i = 0
        while i < min(len(p), len(o)) and p[i] == o[i]:
            i += 1
        print("thread %d: perf %d events, ours %d; first difference at %d"
              % (tid, len(p), len(o), i))
        for k in range(max(0, i - 3), i + 4):
            a = show(p[k]) if k < len(p) else "-"
            b = show(o[k]) if k < len(o) else "-"
            print("  %s %6d perf: %s\n         ours: %s"
                  % ("*" if a != b else " ", k, a, b))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
