#!/usr/bin/env python3
"""OCaml exception events against the program's own rules.

usage: exccheck.py RING_JSONL [OTHER_JSONL...]

Each file is `ptrace-read -f jsonl --types 'exc_*'` of a ring. Per
thread, the tries the events open and close must nest: an exc_pop closes
the innermost open try, an exc_raise too, and goes to that try's handler
(when its exc_push named one). At the end only the tries open when the
program left (caml_start_program's) may remain. The other files must hold
the same events (type, address, handler, thread) in the same order.
Prints the counts; exit 0 if every check holds.
"""
import json
import sys


def events(path):
    out = []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e["type"].startswith("exc_"):
                out.append((e["tid"], e["type"], e.get("ip"), e.get("handler")))
    return out


def main():
    evs = events(sys.argv[1])
    ok = True
    stacks, counts = {}, {"exc_push": 0, "exc_pop": 0, "exc_raise": 0}
    bad = []
    for tid, kind, ip, handler in evs:
        st = stacks.setdefault(tid, [])
        counts[kind] += 1
        if kind == "exc_push":
            st.append(handler)
        elif not st:
            bad.append("%s at %s with no try open" % (kind, ip))
        else:
            h = st.pop()
            if kind == "exc_raise" and h not in (None, "0x0") and h != handler:
                bad.append("raise at %s to %s, the innermost try's handler "
                           "is %s" % (ip, handler, h))
    left = sum(len(s) for s in stacks.values())
    print("%d tries entered, %d left, %d raised to their handler, %d open "
          "at the end" % (counts["exc_push"], counts["exc_pop"],
                          counts["exc_raise"], left))
    if bad:
        print("; ".join(bad[:5]))
        ok = False
    if not counts["exc_push"] or not counts["exc_raise"]:
        print("no tries or no raises: the events are missing")
        ok = False
    for other in sys.argv[2:]:
        o = events(other)
        if o != evs:
            i = next((k for k, (x, y) in enumerate(zip(evs, o)) if x != y),
                     min(len(evs), len(o)))
            print("%s differs at event %d: %s against %s" % (
                other, i, evs[i] if i < len(evs) else "-",
                o[i] if i < len(o) else "-"))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
