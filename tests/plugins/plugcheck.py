#!/usr/bin/env python3
"""tests/plugins/plugcheck.py - the example plugins' output against the
same question answered another way (tests/plugins/e2e-plugins.sh):

  calls CALLCOUNT REPORT        callcount's calls per function == the
                                Calls column of ptrace-read -f report
  latency LATENCY REPORT CHROME SYM
                                latency's calls and longest == report's
                                row of SYM, its total == the sum of the
                                slices of -f chrome; the histogram sums to
                                the calls
  slow SLOW CHROME SYM NS       slow's lines == the slices of -f chrome
                                named SYM lasting more than NS (the
                                JSON's ns are moved by at most 2 ns)
  jsonl A B                     two -f jsonl outputs hold the same events,
                                their positions ("seq") aside
  pick REPORT                   the named function of the report with the
                                most calls (for latency and slow)
  threshold CHROME SYM          a duration between sym's (for slow)
Prints what differs and exits 1 when something does.
"""
import json
import re
import sys

ROW = re.compile(r"^\s*([\d.]+ +\w+)\s+([\d.]+ +\w+)\s+(\d+)\s+([\d.]+ +\w+)"
                 r"\s+([\d.]+ +\w+)  (.*)$")
SCALE = {"us": 1000, "ms": 1000000, "s": 1000000000}


def report(path):
    """(name, calls, total, max) per row; the name under "Function",
    after the DSO column the report has when names repeat in DSOs (as
    wide as its longest name)."""
    rows = []
    dso = 0
    for line in open(path, encoding="utf-8", errors="replace"):
        if "Function" in line and "Total time" in line:
            dso = line.index("Function") - line.index("Maximum") - 9
        m = ROW.match(line.rstrip("\n"))
        if m:
            rows.append((m.group(6)[dso:], int(m.group(3)), m.group(1),
                         m.group(5)))
    return rows


def dur_shown(ns):
    """ns as -f report shows it (views.c put_duration): truncated."""
    for unit, scale in (("us", 1000), ("ms", 1000000), ("s", 1000000000)):
        if ns < scale * 1000 or unit == "s":
            return "%d.%03d %s" % (ns // scale, ns * 1000 // scale % 1000,
                                   unit)


def norm_dur(s):
    v, u = s.split()
    return "%s %s" % (v, u)


def calls(cc_path, rep_path):
    got = {}
    total_got = 0
    for line in open(cc_path, encoding="utf-8", errors="replace"):
        f = line.split(None, 2)
        if len(f) < 3:
            return fail("callcount: bad line %r" % line)
        got.setdefault(f[2].rstrip("\n"), []).append(int(f[0]))
        total_got += int(f[0])
    want = {}
    total_want = 0
    for name, n, _, _ in report(rep_path):
        total_want += n
        # system calls by name in both ("[syscall write]")
        want.setdefault(name, []).append(n)
    bad = 0
    for name, ns in want.items():
        if name.startswith("0x") or "+0x" in name:
            continue  # unnamed: compared in the totals
        if sorted(got.get(name, [])) != sorted(ns):
            bad += 1
            if bad <= 5:
                print("  %s: callcount %s, report %s" %
                      (name, got.get(name), ns))
    if total_got != total_want:
        print("  all calls: callcount %d, report %d" % (total_got, total_want))
        bad += 1
    if not want:
        print("  the report has no rows")
        bad += 1
    return 1 if bad else 0


def latency(lat_path, rep_path, chrome_path, sym):
    """calls and the longest == report's row; the total == the sum of the
    chrome slices (report's total counts a recursion's outermost only)."""
    lines = open(lat_path).read().splitlines()
    m = re.match(r"calls (\d+) total (\d+) min (\d+) max (\d+)$", lines[0])
    if not m:
        return fail("latency: first line %r" % lines[0])
    n, total, lo, hi = map(int, m.groups())
    hist = sum(int(l.split(") ns")[1].split("|")[0]) for l in lines[1:])
    rows = [r for r in report(rep_path) if r[0] == sym]
    if len(rows) != 1:
        return fail("report: %d rows named %s" % (len(rows), sym))
    _, rcalls, _, rmax = rows[0]
    durs = [round(e["dur"] * 1000) for e in json.load(open(chrome_path))
            if e.get("ph") == "X" and e.get("name") == sym]
    bad = 0
    if n != rcalls or n != len(durs):
        print("  calls: latency %d, report %d, chrome slices %d" %
              (n, rcalls, len(durs)))
        bad = 1
    if dur_shown(hi) != norm_dur(rmax):
        print("  longest: latency %d ns (%s), report %s" %
              (hi, dur_shown(hi), rmax))
        bad = 1
    if abs(total - sum(durs)) > 2 * len(durs):
        print("  total: latency %d ns, chrome slices %d ns" %
              (total, sum(durs)))
        bad = 1
    if hist != n:
        print("  the histogram holds %d, calls %d" % (hist, n))
        bad = 1
    return bad


def slow(slow_path, chrome_path, sym, ns):
    ns = int(ns)
    got = []
    for line in open(slow_path, encoding="utf-8", errors="replace"):
        f = line.split(" ", 2)
        name = f[2].split(" <- ")[0].rstrip("\n")
        if name != sym:
            return fail("slow: a line for %r, not %s" % (name, sym))
        got.append(int(f[1]))
    want = []
    near = 0
    for e in json.load(open(chrome_path)):
        if e.get("ph") == "X" and e.get("name") == sym:
            d = round(e["dur"] * 1000)
            if abs(d - ns) <= 2:
                near += 1
            elif d > ns:
                want.append(d)
    if near:
        return fail("threshold %d is within 2 ns of %d slices: choose "
                    "another" % (ns, near))
    if len(got) != len(want):
        return fail("slow: %d lines, chrome: %d slices of %s over %d ns" %
                    (len(got), len(want), sym, ns))
    for g, w in zip(sorted(got), sorted(want)):
        if abs(g - w) > 2:
            return fail("slow: %d ns, chrome %d ns" % (g, w))
    return 0


def jsonl(a, b):
    def load(p):
        out = []
        for line in open(p, encoding="utf-8", errors="replace"):
            e = json.loads(line)
            e.pop("seq", None)
            out.append(e)
        return out
    x, y = load(a), load(b)
    if x == y:
        return 0
    for i, (p, q) in enumerate(zip(x, y)):
        if p != q:
            return fail("event %d differs:\n  %s\n  %s" % (i, p, q))
    return fail("%d events, %d events" % (len(x), len(y)))


def threshold(chrome_path, sym):
    """A threshold among sym's durations, 3 ns or more from each."""
    d = sorted(round(e["dur"] * 1000) for e in json.load(open(chrome_path))
               if e.get("ph") == "X" and e.get("name") == sym)
    if not d:
        return fail("no slice named %s" % sym)
    for t in range(d[len(d) // 2], d[-1] + 10):
        if all(abs(x - t) > 2 for x in d):
            print(t)
            return 0
    return fail("no threshold")


def pick(rep_path):
    rows = report(rep_path)
    count = {}
    for r in rows:
        count[r[0]] = count.get(r[0], 0) + 1
    rows = [r for r in rows if count[r[0]] == 1 and r[1] >= 3
            and not r[0].startswith(("0x", "[")) and "+0x" not in r[0]]
    if not rows:
        return fail("no function of one name called 3 times or more")
    print(max(rows, key=lambda r: (r[1], r[0]))[0])
    return 0


def fail(msg):
    print("  " + msg)
    return 1


if __name__ == "__main__":
    cmds = {"calls": calls, "latency": latency, "slow": slow,
            "jsonl": jsonl, "pick": pick, "threshold": threshold}
    sys.exit(cmds[sys.argv[1]](*sys.argv[2:]))
