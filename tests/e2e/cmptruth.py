#!/usr/bin/env python3
"""Check ptrace-capture --all-branches against ptsynth's ground truth.

usage: cmptruth.py TRUTH OUR_JSONL

TRUTH is ptsynth's --truth file: per thread ("# section thread TID"), one
line per taken branch "from to kind [sp]" in execution order. OUR_JSONL is
`ptrace-read -f jsonl` of a ring written with --all-branches. Every taken
branch of the truth must be there, in order, with the same kind (cond and
jump are both our jump; begin is trace_begin); gaps that the truth marks
(an injected overflow) may hide the branches lost in them. Exit 0 if so.
"""
import json
import sys


def hexints(e):
    """Our JSON writes addresses as "0x..." strings: make them numbers."""
    return {k: int(v, 16) if isinstance(v, str) and v.startswith("0x")
            and k not in ("path", "name", "comm") and not k.endswith("_sym")
            else v for k, v in e.items()}

KINDS = {"call": "call", "return": "return", "jump": "jump", "cond": "jump",
         "syscall": "syscall", "sysret": "sysret"}


def truth(path):
    """Branches per thread; the branches between "# gap begin" and
    "# gap end" (lost in an injected overflow) become one ("gap",)."""
    out, tid, in_gap = {}, None, False
    with open(path) as f:
        for line in f:
            if line.startswith("# section thread"):
                tid = int(line.split()[3])
                out.setdefault(tid, [])
            elif line.startswith("# gap begin"):
                in_gap = True
                out[tid].append(("gap", 0, 0))
            elif line.startswith("# gap end"):
                in_gap = False
            elif line.startswith("#") or tid is None or in_gap:
                continue
            else:
                # v2: a fourth field, RSP (ptsynth --stack)
                frm, to, kind = line.split()[:3]
                if kind in KINDS:
                    out[tid].append((KINDS[kind], int(frm, 16), int(to, 16)))
    return out


def ours(path):
    """Our branches per thread; an overflow event is a ("gap",)."""
    out = {}
    with open(path) as f:
        for line in f:
            e = json.loads(line, object_hook=hexints)
            if e["type"] == "overflow":
                out.setdefault(e["tid"], []).append(("gap", 0, 0))
            elif e["type"] in ("call", "return", "jump", "syscall", "sysret"):
                out.setdefault(e["tid"], []).append(
                    (e["type"], e.get("from", 0), e.get("to", 0)))
    return out


def main():
    t, o = truth(sys.argv[1]), ours(sys.argv[2])
    ok = True
    for tid in sorted(set(t) | set(o)):
        want, got = t.get(tid, []), o.get(tid, [])
        if want == got:
            print("thread %d: all %d taken branches present, in order%s"
                  % (tid, len(got) - got.count(("gap", 0, 0)),
                     ", around %d overflow gaps" % got.count(("gap", 0, 0))
                     if ("gap", 0, 0) in got else ""))
            continue
        ok = False
        i = 0
        while i < min(len(want), len(got)) and want[i] == got[i]:
            i += 1
        print("thread %d: truth %d, ours %d; first difference at %d:"
              % (tid, len(want), len(got), i))
        for k in range(max(0, i - 2), i + 3):
            print("  %6d truth %s\n         ours  %s" % (
                k, want[k] if k < len(want) else "-",
                got[k] if k < len(got) else "-"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
