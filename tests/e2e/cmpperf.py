#!/usr/bin/env python3
"""Compare ptrace-capture's events with perf's own decoder, per thread.

usage: cmpperf.py PERF_SCRIPT_OUTPUT OUR_JSONL [--all-branches] [--times]
                  [--addresses]

PERF_SCRIPT_OUTPUT is `perf script --itrace=b --no-demangle --ns
-F tid,time,flags,ip,sym,dso,addr` of the same perf.data (time and dso
optional; with dso, same-symbol means same name in the same object);
OUR_JSONL is `ptrace-read -f jsonl` of the ring ptrace-capture wrote.

With --times, also: our times never go backwards within a thread, and
each event's time is within one timing-packet period of perf's time for
the same branch. The period is measured from perf's own times: the
largest step between two consecutive distinct times of the thread (perf
only moves time when a timing packet arrives, so no step is longer than
the longest interval between timing packets).

Both sides are reduced to the events the product promises (calls,
returns, jumps between symbols, syscalls and the returns from them) as
(kind, from, to, from symbol, to symbol), per thread, in order. With
--all-branches every taken branch counts (ours: every jump).
With --addresses the symbol names are left out of the comparison (a ring
of several processes names addresses from one table for all of them:
docs/decoder.md, "Per-CPU recordings").
Prints a verdict line and, on a difference, where the sequences part.
Exit 0 when equal, 1 else.
"""
import json
import sys


def hexints(e):
    """Our JSON writes addresses as "0x..." strings: make them numbers."""
    return {k: int(v, 16) if isinstance(v, str) and v.startswith("0x")
            and k not in ("path", "name", "comm") and not k.endswith("_sym")
            else v for k, v in e.items()}


def is_hex(w):
    try:
        int(w, 16)
        return True
    except ValueError:
        return False


def perf_events(path, all_branches, times):
    """Events per thread; times[tid] gets every branch's time (all kinds)
    and each kept event carries its time as a sixth element."""
    out = {}
    after_syscall = {}
    with open(path) as f:
        for line in f:
            # "TID [TIME:] FLAGS IP SYM [(DSO)] => ADDR SYM [(DSO)]": names
            # may hold spaces (demangled C++), so split at " => " and at
            # the addresses, not at every blank.
            if " => " not in line:
                continue
            left, right = line.rstrip("\n").split(" => ", 1)
            to_dso = from_dso = ""
            if right.endswith(")") and " (" in right:
                right, to_dso = right.rsplit(" (", 1)
            if left.endswith(")") and " (" in left:
                left, from_dso = left.rsplit(" (", 1)
            r = right.split(None, 1)
            to, to_sym = int(r[0], 16), (r[1] if len(r) > 1 else "[unknown]")
            head = left.split()
            # the ip is the first hex word after the flags; the symbol
            # (possibly with blanks) follows it
            i = 1
            time = None
            if i < len(head) and head[i].endswith(":"):
                sec, ns = head[i][:-1].split(".")
                time = int(sec) * 1000000000 + int(ns.ljust(9, "0"))
                i += 1
            j = i
            while j < len(head) and not is_hex(head[j]):
                j += 1
            if j >= len(head):
                continue
            tid = int(head[0])
            rest = head[i:j]
            frm = int(head[j], 16)
            from_sym = " ".join(head[j + 1:]) or "[unknown]"
            flags = " ".join(rest)
            times.setdefault(tid, []).append(time)
            seq = out.setdefault(tid, [])
            if flags == "call":
                kind = "call"
            elif flags == "return":
                kind = "return"
            elif flags in ("jmp", "jcc"):
                # a jump inside one symbol of one object is dropped
                if not all_branches and (from_sym, from_dso) == (to_sym, to_dso):
                    continue
                kind = "jump"
            elif flags.startswith("tr end") and (
                    "syscall" in flags or flags.split()[-1] == "int"):
                # (32-bit code's `int $0x80`: perf's "int", our syscall)
                kind = "syscall"
                after_syscall[tid] = True
                seq.append((kind, frm, 0, from_sym, "[unknown]", time))
                continue
            elif flags == "tr strt":
                if after_syscall.pop(tid, False):
                    seq.append(("sysret", 0, to, "[unknown]", to_sym, time))
                continue
            else:
                continue
            seq.append((kind, frm, to, from_sym, to_sym, time))
    return out


def sym_name(s):
    if not s or s.startswith("["):
        return "[unknown]"
    return s.split("+0x")[0]


def our_events(path):
    out = {}
    with open(path) as f:
        for line in f:
            e = json.loads(line, object_hook=hexints)
            kind = e["type"]
            if kind not in ("call", "return", "jump", "syscall", "sysret"):
                continue
            frm, to = e.get("from", 0), e.get("to", 0)
            fs = sym_name(e.get("from_sym")) if frm else "[unknown]"
            ts = sym_name(e.get("to_sym")) if to else "[unknown]"
            out.setdefault(e["tid"], []).append((kind, frm, to, fs, ts, e.get("time", 0)))
    return out


def show(e):
    return "%s %x %s => %x %s" % (e[0], e[1], e[3], e[2], e[4])


def check_times(tid, p, o, all_times):
    """p, o: equal event lists with times. Returns True if they hold."""
    steps = []
    distinct = sorted(set(t for t in all_times if t is not None))
    for a, b in zip(distinct, distinct[1:]):
        steps.append(b - a)
    if not steps:
        print("thread %d: perf gives no times to compare" % tid)
        return False
    tol = max(steps)
    worst, back = 0, 0
    last = 0
    for pe, oe in zip(p, o):
        if oe[5] < last:
            back += 1
        last = oe[5]
        worst = max(worst, abs(oe[5] - pe[5]))
    print("thread %d: times: %d went backwards; largest difference from "
          "perf %d ns; timing-packet period %d ns"
          % (tid, back, worst, tol))
    return back == 0 and worst <= tol


def main():
    all_branches = "--all-branches" in sys.argv
    with_times = "--times" in sys.argv
    width = 3 if "--addresses" in sys.argv else 5
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    times = {}
    perf = perf_events(args[0], all_branches, times)
    ours = our_events(args[1])
    ok = True
    for tid in sorted(set(perf) | set(ours)):
        pt, ot = perf.get(tid, []), ours.get(tid, [])
        p = [e[:width] + ("",) * (5 - width) for e in pt]
        o = [e[:width] + ("",) * (5 - width) for e in ot]
        if p == o:
            print("thread %d: %d events equal" % (tid, len(p)))
            if with_times and not check_times(tid, pt, ot, times.get(tid, [])):
                ok = False
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
