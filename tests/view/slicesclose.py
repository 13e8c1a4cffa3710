#!/usr/bin/env python3
"""slicesclose.py CHROME_SLICES FXT_SLICES - the slices of -f chrome are
those of -f fxt (both as "PID TID START END DEPTH NAME" lines from
chromeslices.py and fxtcheck.py --slices): the same count per thread and
name, and, name by name in time order, the same times, except that
-f chrome writes a thread's begins and ends at increasing times (one at
the time of the one before it goes 1 ns later: cli/view/fmt_chrome.c), so its
times may be later by a few ns, never earlier. Slices of one name are
paired nearest first. Depths are not compared:
frames of no duration nest in no single way by their times.
Exit 0 if so; else 1 with the first differences.
"""
import bisect
import sys
from collections import defaultdict

SLACK = 1000  # ns: a run of 1000 begins and ends at one time


def load(path):
    d = defaultdict(list)
    for line in open(path):
        pid, tid, start, end, _depth, name = line.rstrip("\n").split(" ", 5)
        d[(pid, tid, name)].append((int(start), int(end)))
    for v in d.values():
        v.sort(key=lambda x: (x[1], x[0]))
    return d


def pair(a, b):
    """Pair the JSON slices a with the FXT slices b of one name: each with
    an unpaired one that ends and begins at most SLACK ns earlier, the
    nearest. Returns the JSON slices left unpaired."""
    ends = [e for _, e in b]
    used = [False] * len(b)
    left = []
    for cs, ce in a:
        lo = bisect.bisect_left(ends, ce - SLACK)
        hi = bisect.bisect_right(ends, ce)
        best = None
        for k in range(lo, hi):
            fs, fe = b[k]
            if used[k] or not 0 <= cs - fs <= SLACK:
                continue
            dist = (cs - fs) + (ce - fe)
            if best is None or dist < best[0]:
                best = (dist, k)
        if best is None:
            left.append((cs, ce))
        else:
            used[best[1]] = True
    return left


def main():
    c, f = load(sys.argv[1]), load(sys.argv[2])
    bad, n = [], 0
    for key in sorted(set(c) | set(f)):
        a, b = c.get(key, []), f.get(key, [])
        n += len(a)
        if len(a) != len(b):
            bad.append("%s %s %s: %d slices in the JSON, %d in the FXT"
                       % (key + (len(a), len(b))))
            continue
        for cs, ce in pair(a, b):
            bad.append("%s %s %s: JSON %d..%d has no FXT slice at most %d ns "
                       "earlier" % (key + (cs, ce, SLACK)))
    for x in bad[:8]:
        print(x)
    print("%d slices, each within %d ns after its FXT slice" % (n, SLACK))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
