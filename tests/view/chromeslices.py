#!/usr/bin/env python3
"""chromeslices.py [--ticks-per-second N] FILE - the slices of a Chrome
Trace Event JSON file, as fxtcheck.py --slices prints those of an FXT file:

  PID TID START_TICKS END_TICKS DEPTH NAME      (sorted)

so that the two can be diffed. Slices: complete events (ph "X": ts, dur)
and begin/end pairs (ph "B"/"E", matched per pid/tid as a stack in time
order, stable for equal times; an "E" that names itself must close the
"B" of that name). Times are microseconds (fractions allowed) and become
ticks of N per second (default 1000000000), rounded to the nearest tick.
Both the JSON Array Format and the JSON Object Format ({"traceEvents":
[...]}) are read; an array whose closing ']' is missing, after a trailing
',' or not, is read too (the Trace Event Format document allows it for
writers that stop abruptly). Other phases (i, I, M, C, ...) make no slice.

Exit 0, 1 with a message per problem (unbalanced B/E, negative dur,
overlapping slices), 2 when the file cannot be read or parsed.
"""

import argparse
import json
import os
import sys
from decimal import Decimal
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fxtcheck import slice_depths, slice_lines  # noqa: E402


def load(path):
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    try:
        doc = json.loads(raw, parse_float=Decimal)
    except json.JSONDecodeError as first:
        t = raw.rstrip()
        if not t.lstrip().startswith("["):
            raise first
        t = t[:-1] if t.endswith(",") else t
        doc = json.loads(t + "]", parse_float=Decimal)
    if isinstance(doc, dict):
        doc = doc.get("traceEvents", [])
    if not isinstance(doc, list):
        raise ValueError("neither a JSON array of events nor an object with traceEvents")
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(description="Slices of a Chrome Trace Event JSON file.")
    ap.add_argument("file")
    ap.add_argument("--ticks-per-second", type=int, default=1_000_000_000, metavar="N")
    a = ap.parse_args(argv)
    try:
        events = load(a.file)
    except (OSError, ValueError) as e:
        print(f"chromeslices: {a.file}: {e}", file=sys.stderr)
        return 2
    tps = Fraction(a.ticks_per_second)

    def ticks(us):
        return round(Fraction(us) * tps / 1_000_000)

    problems = []
    slices = []
    pairs = {}
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        if ph not in ("X", "B", "E"):
            continue
        if not isinstance(e.get("ts"), (int, Decimal)):
            problems.append(f"event {i} ({ph} '{e.get('name', '')}'): no numeric ts")
            continue
        key = (e.get("pid"), e.get("tid"))
        if ph == "X":
            dur = e.get("dur", 0)
            if not isinstance(dur, (int, Decimal)) or dur < 0:
                problems.append(f"event {i} (X '{e.get('name', '')}'): dur {dur!r} is not a "
                                f"number >= 0")
                continue
            slices.append({"pid": key[0], "tid": key[1], "start": ticks(e["ts"]),
                           "end": ticks(e["ts"] + dur), "name": e.get("name", ""), "off": i})
        else:
            pairs.setdefault(key, []).append((i, e))
    for (pid, tid), evs in pairs.items():
        stack = []
        for i, e in sorted(evs, key=lambda p: p[1]["ts"]):
            if e["ph"] == "B":
                stack.append((i, e))
                continue
            if not stack:
                problems.append(f"event {i}: E '{e.get('name', '')}' on {pid}/{tid} at "
                                f"{e['ts']} with no open B")
                continue
            j, b = stack.pop()
            if e.get("name") and e["name"] != b.get("name"):
                problems.append(f"event {i}: E '{e['name']}' on {pid}/{tid} at {e['ts']} "
                                f"closes B '{b.get('name', '')}' (event {j})")
            slices.append({"pid": pid, "tid": tid, "start": ticks(b["ts"]),
                           "end": ticks(e["ts"]), "name": b.get("name", ""), "off": j})
        for j, b in stack:
            problems.append(f"event {j}: B '{b.get('name', '')}' on {pid}/{tid} at {b['ts']} "
                            f"never ended")
    for s, parent in slice_depths(slices):
        problems.append(f"event {s['off']}: slice '{s['name']}' [{s['start']}, {s['end']}] on "
                        f"{s['pid']}/{s['tid']} overlaps '{parent['name']}' (event "
                        f"{parent['off']}) without nesting in it")
    for line in slice_lines(slices):
        print(line)
    for p in problems:
        print(f"chromeslices: {a.file}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
