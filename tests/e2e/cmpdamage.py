#!/usr/bin/env python3
"""Check how ptrace-capture decodes a damaged trace against the same trace
decoded clean.

usage: cmpdamage.py CLEAN_JSONL DAMAGED_JSONL DAMAGE_OFFSET [REF_JSONL]

The two traces may come from two runs of one program: threads are paired
in the order of their ids.

Per thread, the damaged decode must be: the clean events up to the
damage, then an error event (in the packet hit by the damage or later),
then a trace_begin where decoding resumed: reason "sync" at the next IP
packet that leads into code after a gap in the walk (docs/decoder.md,
"Resynchronising"), reason "error" at the next PSB. After a resume at an
IP packet the walk may lose its way again (a compressed return whose call
came before it), with an error and a resume of its own: every stretch of
events after a resume is exactly a stretch of the clean events (times
too), each after the one before, and the last resume at a PSB is followed
by exactly the clean events to the end. The events lost are only those
between the damage and the resuming PSB: all of them come before the
resume time. Between the damage and the error the events may
differ: a dropped or flipped branch bit is found out only when the code and
the trace disagree, by any decoder. Damage that hit no packet the flow
depends on (timing, padding) leaves the branches as they were, and the
times as they were from the next TSC on: that passes too.

Two kinds of damage no decoder can undo; they pass when REF_JSONL (the
same damaged trace decoded by libipt, --decoder reference) shows the same:
a flipped IP that still leads into code (no error; the branches differ
until the flow meets the trace again: libipt takes the same branches), and
damage after the thread's last PSB (an error, no resume: libipt resumes
nowhere either).
Exit 0 if so.
"""
import json
import sys


def hexints(e):
    """Our JSON writes addresses as "0x..." strings: make them numbers."""
    return {k: int(v, 16) if isinstance(v, str) and v.startswith("0x")
            and k not in ("path", "name", "comm") and not k.endswith("_sym")
            else v for k, v in e.items()}

FLOW = ("call", "return", "jump", "syscall", "sysret")


def load(path):
    out = {}
    for line in open(path):
        e = json.loads(line, object_hook=hexints)
        if e["type"] in FLOW or e["type"] in ("error", "trace_begin", "overflow"):
            out.setdefault(e["tid"], []).append(
                (e["type"], e.get("from", e.get("ip", 0)), e.get("to", 0),
                 e.get("time", 0), e.get("reason", ""), e.get("offset", 0)))
    return out


def flow(seq):
    return [e for e in seq if e[0] in FLOW]


def branches(seq):
    return [x[:3] for x in flow(seq)]


def main():
    clean, bad = load(sys.argv[1]), load(sys.argv[2])
    damage_off = int(sys.argv[3], 0)
    ref = load(sys.argv[4]) if len(sys.argv) > 4 else {}
    ok, damaged = True, 0
    # Two runs of a program get other thread ids: pair them in order.
    if len(clean) != len(bad):
        print("clean decode has %d threads, damaged %d" % (len(clean), len(bad)))
        return 1
    pairs = dict(zip(sorted(bad), sorted(clean)))
    bad = {pairs[t]: v for t, v in bad.items()}
    ref = {pairs[t]: v for t, v in ref.items()}
    for tid in sorted(clean):
        c, d, r = clean[tid], bad.get(tid, []), ref.get(tid)
        errs = [i for i, e in enumerate(d) if e[0] == "error"]
        if not errs:
            fc, fd = flow(c), flow(d)
            if branches(c) != branches(d):
                if (r is not None and branches(r) == branches(d) and
                        not [e for e in r if e[0] == "error"]):
                    bc, bd = branches(c), branches(d)
                    m = min(len(bc), len(bd))
                    p = n = 0
                    while p < m and bc[p] == bd[p]:
                        p += 1
                    while n < m - p and bc[-1 - n] == bd[-1 - n]:
                        n += 1
                    print("thread %d: no error event; the damage hit an IP "
                          "that still leads into code, which no decoder can "
                          "tell: libipt takes the same %d branches (the "
                          "first %d and the last %d as in the clean decode, "
                          "%d between them not)"
                          % (tid, len(bd), p, n, len(bd) - p - n))
                    damaged += 1
                    continue
                print("thread %d: no error event, yet the branches differ"
                      % tid)
                ok = False
                continue
            # A damaged timing packet may shift times until the next
            # TSC; by the end they must agree again.
            moved = sum(1 for x, y in zip(fc, fd) if x[3] != y[3])
            if fc and fc[-1][3] != fd[-1][3]:
                print("thread %d: no error event, and %d event times "
                      "differ up to the last one (%d, clean %d)"
                      % (tid, moved, fd[-1][3], fc[-1][3]))
                ok = False
                continue
            print("thread %d: the damage changed no branch (%d event "
                  "times moved, the later ones agree)" % (tid, moved))
            damaged += 1
            continue
        damaged += 1
        e = errs[0]
        prefix = flow(d[:e])
        cf = flow(c)
        # The packet the damage hit may start up to 16 bytes earlier (the
        # longest PT packet).
        if d[e][5] + 16 < damage_off:
            print("thread %d: error reported at offset %d, before the "
                  "damage at %d" % (tid, d[e][5], damage_off))
            ok = False
            continue
        # Keep the part that still agrees with the clean decode.
        k = 0
        while k < len(prefix) and k < len(cf) and prefix[k] == cf[k]:
            k += 1
        prefix = prefix[:k]
        if cf[:len(prefix)] != prefix:
            print("thread %d: the events before the error differ from the "
                  "clean decode" % tid)
            ok = False
            continue
        # stretches resumed at an IP packet, up to the last resume at a
        # PSB: each a piece of the clean decode, in order
        at, synced, bad_run = len(prefix), 0, False
        resumes = [i for i in range(e, len(d))
                   if d[i][0] == "trace_begin" and d[i][4] in ("error", "sync")]
        last = resumes[-1:]
        for i in resumes:
            if i in last:
                break
            run = []
            for x in d[i + 1:]:
                if x[0] in ("error", "trace_begin", "overflow"):
                    break
                if x[0] in FLOW:
                    run.append(x)
            if not run:
                continue
            k = next((j for j in range(at, len(cf) - len(run) + 1)
                      if cf[j:j + len(run)] == run), None)
            if k is None:
                print("thread %d: the %d events after the resume at 0x%x "
                      "(reason %s) are not the clean decode's" %
                      (tid, len(run), d[i][1], d[i][4]))
                bad_run = True
                break
            at, synced = k + len(run), synced + len(run)
        if bad_run:
            ok = False
            continue
        resume = last
        if not resume:
            rerr = [i for i, x in enumerate(r or []) if x[0] == "error"]
            if (rerr and not [x for x in r[rerr[0]:]
                              if x[0] == "trace_begin" and x[4] == "error"]):
                print("thread %d: %d events before the damage, error at "
                      "0x%x (trace offset %d), no PSB after it: the last %d "
                      "events are lost, as for libipt" %
                      (tid, len(prefix), d[e][1], d[e][5],
                       len(cf) - len(prefix)))
                continue
            print("thread %d: no trace_begin after the error" % tid)
            ok = False
            continue
        r = resume[0]
        t_resume = d[r][3]
        suffix = flow(d[r + 1:])
        j = len(cf) - len(suffix)
        if j < at or cf[j:] != suffix:
            print("thread %d: after resuming, the events differ from the "
                  "clean decode (%d after resume)" % (tid, len(suffix)))
            ok = False
            continue
        lost = [x for x in cf[len(prefix):j]]
        late = [x for x in cf[at:j] if x[3] > t_resume]
        if late:
            print("thread %d: %d events after the resume time were lost"
                  % (tid, len(late)))
            ok = False
            continue
        print("thread %d: %d events before the damage, error at 0x%x "
              "(trace offset %d), %d events found again at IP packets, "
              "resumed at the PSB at 0x%x (time %d), %d events lost, %d "
              "after" % (tid, len(prefix), d[e][1], d[e][5], synced,
                         d[r][1], t_resume, len(lost) - synced, len(suffix)))
    if not damaged:
        print("no thread to check")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
