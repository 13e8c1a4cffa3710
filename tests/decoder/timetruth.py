#!/usr/bin/env python3
"""Event times against the clock of the program's run.

usage: timetruth.py TRUTH SPREAD_JSONL EXACT_JSONL

TRUTH is ptsynth's --truth file made with --truth-times: every branch with
the time it ran (t=NS, ptsynth's clock: one cycle per instruction, as
QEMU's log gives them). SPREAD_JSONL and EXACT_JSONL are `ptrace-read -f
jsonl` of the same perf.data decoded by ptrace-capture as it is (times
spread between timing packets) and with --exact-times.

Checks, per thread:
  - both rings hold the same events (flags but TIME_EXACT the same), and
    their calls and returns are the truth's, in order;
  - spread times never go backwards, and each lies between its exact time
    and the next later exact time of the thread (nothing crosses the next
    timing packet);
  - over all calls and returns: the mean distance from the truth's time
    is at most a quarter of the exact times' (--gain N: 1/N), and most of
    them have a time of their own (--distinct F, default 0.9).
Prints the figures; exit 0 if every check holds.
"""
import json
import statistics
import sys

EXACT = 0x10


def hexints(e):
    return {k: int(v, 16) if isinstance(v, str) and v.startswith("0x")
            and k not in ("path", "name", "comm") and not k.endswith("_sym")
            else v for k, v in e.items()}


def truth(path):
    """Calls and returns per thread: (kind, from, to, time)."""
    out, tid = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("# section thread"):
                tid = int(line.split()[3])
                out.setdefault(tid, [])
            elif line.startswith("#") or tid is None:
                continue
            else:
                w = line.split()
                if w[2] in ("call", "return"):
                    t = int(w[3][2:]) if len(w) > 3 and w[3].startswith(
                        "t=") else None
                    out[tid].append((w[2], int(w[0], 16), int(w[1], 16), t))
    return out


FLOW = ("call", "return", "jump", "syscall", "sysret", "interrupt",
        "trace_begin", "trace_end", "overflow", "error", "lost")


def ring(path):
    """Flow events per thread: (type, from/ip, to, flags, time)."""
    out = {}
    with open(path) as f:
        for line in f:
            e = json.loads(line, object_hook=hexints)
            if e["type"] not in FLOW:
                continue
            a = e.get("from", e.get("ip", 0))
            b = e.get("to", 0)
            out.setdefault(e["tid"], []).append(
                (e["type"], a, b, e.get("flags", 0), e.get("time", 0)))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:]
                if a.startswith("--") and "=" in a)
    gain = float(opts.get("gain", 4))
    want_distinct = float(opts.get("distinct", 0.9))
    tr, sp, ex = truth(args[0]), ring(args[1]), ring(args[2])
    ok = True
    err_sp, err_ex, n_calls, distinct_sp, distinct_ex = [], [], 0, 0, 0
    for tid in sorted(tr):
        s, x = sp.get(tid, []), ex.get(tid, [])
        if [(e[0], e[1], e[2], e[3] | EXACT) for e in s] != \
           [(e[0], e[1], e[2], e[3] | EXACT) for e in x]:
            print("thread %d: the spread and exact rings differ" % tid)
            ok = False
            continue
        back = cross = 0
        nxt = 0
        for i, (se, xe) in enumerate(zip(s, x)):
            if i and se[4] < s[i - 1][4] and xe[4] >= x[i - 1][4]:
                back += 1
            if nxt <= i:
                nxt = i + 1
            while nxt < len(x) and x[nxt][4] == xe[4]:
                nxt += 1
            hi = x[nxt][4] if nxt < len(x) and x[nxt][4] > xe[4] else xe[4]
            if not xe[4] <= se[4] <= hi:
                cross += 1
        calls = [(i, e) for i, e in enumerate(s) if e[0] in ("call", "return")]
        want = tr[tid]
        if [(e[0], e[1], e[2]) for _, e in calls] != \
           [(w[0], w[1], w[2]) for w in want]:
            print("thread %d: calls and returns differ from the truth "
                  "(%d ours, %d truth)" % (tid, len(calls), len(want)))
            ok = False
            continue
        if back or cross:
            print("thread %d: %d spread times went backwards, %d left "
                  "their interval" % (tid, back, cross))
            ok = False
        for (i, e), w in zip(calls, want):
            if w[3] is None:
                print("truth has no times (ptsynth --truth-times)")
                return 1
            err_sp.append(abs(e[4] - w[3]))
            err_ex.append(abs(x[i][4] - w[3]))
        n_calls += len(calls)
        distinct_sp += len(set(e[4] for _, e in calls))
        distinct_ex += len(set(x[i][4] for i, _ in calls))
    if not n_calls:
        print("no calls or returns to compare")
        return 1
    m_sp, m_ex = statistics.mean(err_sp), statistics.mean(err_ex)
    print("%d calls and returns: distance from the run's clock, exact "
          "times: mean %.1f ns, median %.0f, max %d; spread: mean %.1f ns, "
          "median %.0f, max %d" % (
              n_calls, m_ex, statistics.median(err_ex), max(err_ex),
              m_sp, statistics.median(err_sp), max(err_sp)))
    print("distinct times: exact %d, spread %d of %d (%.1f%%)" % (
        distinct_ex, distinct_sp, n_calls, 100.0 * distinct_sp / n_calls))
    # The typical branch (the median) must be gain times closer, and the
    # mean closer at all: where a thread waits in the kernel (a futex, a
    # sleep), time passes without instructions, so spreading by
    # instruction count puts the branches around the wait far off; those
    # few carry the mean (threads: median 48x closer, mean 3.6x).
    md_sp, md_ex = statistics.median(err_sp), statistics.median(err_ex)
    if md_sp * gain > md_ex or m_sp > m_ex:
        print("spread times are not %g times closer to the run's clock "
              "(median), or not closer on average" % gain)
        ok = False
    if distinct_sp < want_distinct * n_calls:
        print("fewer than %.0f%% of the calls and returns have a time of "
              "their own" % (100 * want_distinct))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
