#!/usr/bin/env python3
"""fxtperfetto.py FILE - how Perfetto's importer would stack the slices of an
FXT file, compared with fxtcheck.py --slices.

A model, written here from reading what Perfetto's trace processor does
with Fuchsia events (no code taken from it): the events of a file are
sorted by time, and events of equal time keep their order in the file
(the sorter's tie-break is the position of the record); per thread, a
duration begin opens a slice, a duration end closes the innermost open
one (names ignored), a complete event and an instant (a slice of length
0) are pushed whole. Before each is pushed or an end applied, slices
that are over are popped from the top of the stack: a complete slice that
ended before the new time, or at it (unless both are instants); a complete
slice that the new complete one would overlap without nesting makes
Perfetto drop the new one ("slice_drop_overlapping_complete_event"); a
complete slice found ended under open ones truncates them
("misplaced_end_event").

Prints the slices (PID TID START END DEPTH NAME, as fxtcheck.py --slices,
depth as Perfetto would give it) and exits 1 if any slice was dropped,
truncated or left open, or if they are not fxtcheck.py's slices (depths
aside: fxtcheck.py's come from the times alone); the reasons go to
stderr. Exit 2 when the file is not valid FXT.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fxtcheck import Checker, slice_lines  # noqa: E402

PENDING = None


def model(events):
    """events: fxtcheck's, in file order. Returns (slices, problems)."""
    order = sorted(range(len(events)), key=lambda i: (events[i]["ts"], i))
    stacks = {}
    slices, problems = [], []

    def close(stack, ts, dur):
        """Perfetto's MaybeCloseStack; False: drop the new slice."""
        incomplete = False
        i = len(stack) - 1
        while i >= 0:
            s = stack[i]
            if s["dur"] is PENDING:
                incomplete = True
                i -= 1
                continue
            end = s["start"] + s["dur"]
            if incomplete:
                if ts <= end:
                    i -= 1
                    continue
                problems.append(f"misplaced end: '{s['name']}' [{s['start']}, {end}] ended "
                                f"under open slices at {ts}")
                while len(stack) > i:
                    top = stack.pop()
                    if top["dur"] is PENDING:
                        top["dur"] = end - top["start"]
                incomplete = False
                i = len(stack) - 1
                continue
            if end < ts or (end == ts and not (s["dur"] == 0 and dur == 0)):
                stack.pop()  # Perfetto pops the top, whichever it is
                i = len(stack) - 1
                continue
            if dur is not PENDING and ts < end < ts + dur:
                problems.append(f"dropped: a slice at {ts} of {dur} overlaps '{s['name']}' "
                                f"[{s['start']}, {end}]")
                return False
            i -= 1
        return True

    for i in order:
        e = events[i]
        stack = stacks.setdefault((e["pid"], e["tid"]), [])
        if e["ph"] in "BXI":
            dur = PENDING if e["ph"] == "B" else (e["word"] - e["ts"] if e["ph"] == "X" else 0)
            if not close(stack, e["ts"], dur):
                continue
            s = {"pid": e["pid"], "tid": e["tid"], "start": e["ts"], "dur": dur,
                 "name": e["name"], "depth": len(stack), "instant": e["ph"] == "I"}
            stack.append(s)
            if not s["instant"]:
                slices.append(s)
        elif e["ph"] == "E":
            close(stack, e["ts"], PENDING)
            open_ = [k for k in range(len(stack)) if stack[k]["dur"] is PENDING]
            if not open_:
                problems.append(f"end at {e['ts']} on {e['pid']}/{e['tid']} with no open slice")
                continue
            k = open_[-1]
            stack[k]["dur"] = e["ts"] - stack[k]["start"]
            if k == len(stack) - 1:
                stack.pop()
    for s in slices:
        if s["dur"] is PENDING:
            problems.append(f"'{s['name']}' at {s['start']} never ended")
            s["dur"] = 0
        s["end"] = s["start"] + s["dur"]
    return slices, problems


def line_wo_depth(s):
    return f"{s['pid']} {s['tid']} {s['start']} {s['end']} {s['name']}"


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    try:
        with open(argv[1], "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"fxtperfetto: {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    c = Checker(data)
    c.run()
    if c.errors:
        print(f"fxtperfetto: {argv[1]}: not valid FXT (fxtcheck.py says why)", file=sys.stderr)
        return 2
    slices, problems = model(c.events)
    for line in slice_lines(slices):
        print(line)
    # the same slices as fxtcheck.py's, depths aside: fxtcheck.py gives
    # depths by geometry (as chromeslices.py does for JSON), which cannot
    # tell the nesting of slices of equal times, where begin/end can
    mine = sorted(line_wo_depth(s) for s in slices)
    theirs = sorted(line_wo_depth(s) for s in c.nesting())
    if mine != theirs:
        a, b = set(mine), set(theirs)
        problems.append(f"{len(mine)} slices as Perfetto stacks them, {len(theirs)} by "
                        f"fxtcheck.py; only here: {sorted(a - b)[:3]}; only there: "
                        f"{sorted(b - a)[:3]}")
    for p in problems[:20]:
        print(f"fxtperfetto: {argv[1]}: {p}", file=sys.stderr)
    if len(problems) > 20:
        print(f"fxtperfetto: {argv[1]}: ... {len(problems) - 20} more", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
