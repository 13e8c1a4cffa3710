#!/usr/bin/env python3
"""tests/coverage/brtruth.py - the branch records a program's ground truth
gives, by tools we did not write: the lcov BRDA lines (BRDA:LINE,BLOCK,
BRANCH,TAKEN) that ptrace-read -f lcov must write for the program's own
source, from

  - objdump -d: every conditional branch (jcc, jrcxz, loop*) of the program;
  - perf script --show-mmap-events: where its code was mapped, and
    readelf -l: at which of its addresses (the runtime addresses of the
    truth are turned into the program's own);
  - the truth (docs/ptsynth.md): every taken branch in order per thread,
    so the code between one branch's target and the next branch ran
    straight through: a conditional branch inside such a run fell through,
    one ending it with kind "cond" was taken;
  - addr2line: the line of each branch that ran.

A line's branches are numbered (BLOCK) in address order; BRANCH 0 is the
way taken, 1 the fall-through; TAKEN 1 when it went that way, else 0.
Branches that never ran are not listed (ours cannot know them either).

Usage: brtruth.py BINARY PERF.DATA TRUTH SOURCE-BASENAME  (prints the
BRDA lines)
"""
import bisect
import re
import subprocess
import sys

binary, data, truth, src = sys.argv[1:5]

JCC = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(j(?!mp)[a-z]+|loop[a-z]*)\s")
jcc = []
for line in subprocess.run(["objdump", "-d", binary],
                           capture_output=True, text=True, check=True).stdout.splitlines():
    m = JCC.match(line)
    if m:
        jcc.append(int(m.group(1), 16))
jcc.sort()

# the executable mapping of the binary (perf's MMAP2: start, pgoff), and
# the load segment holding that offset (p_offset, p_vaddr)
MMAP = re.compile(r"MMAP2? .*\[0x([0-9a-f]+)\(0x[0-9a-f]+\) @ 0x([0-9a-f]+) .*\]: r-xp (\S+)$")
start = pgoff = None
for line in subprocess.run(["perf", "script", "-i", data, "--show-mmap-events"],
                           capture_output=True, text=True).stdout.splitlines():
    m = MMAP.search(line)
    if m and m.group(3).endswith("/" + binary.rsplit("/", 1)[-1]):
        start, pgoff = int(m.group(1), 16), int(m.group(2), 16)
        break
if start is None:
    sys.exit("brtruth: perf script shows no executable mapping of " + binary)
delta = None
for line in subprocess.run(["readelf", "-lW", binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        off, va, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if off <= pgoff < off + filesz:
            delta = va - off
if delta is None:
    sys.exit("brtruth: no load segment holds offset 0x%x" % pgoff)
base = start - pgoff - delta  # runtime address - the program's own

seen = {}  # jcc vaddr -> set of ways (0 taken, 1 fall-through)
prev_to = None
for line in open(truth):
    if line.startswith("#"):
        if line.startswith("# section"):
            prev_to = None
        continue
    f = line.split()
    if len(f) < 3:
        continue
    frm, to, kind = int(f[0], 16), int(f[1], 16), f[2]
    if kind == "begin":
        prev_to = to
        continue
    if prev_to is not None:
        # the run [prev_to, frm]: its conditional branches before frm fell
        # through; frm itself was taken when the truth says cond
        lo, hi = prev_to - base, frm - base
        i = bisect.bisect_left(jcc, lo)
        while i < len(jcc) and jcc[i] < hi:
            seen.setdefault(jcc[i], set()).add(1)
            i += 1
        if kind == "cond" and hi in set(jcc[i:i + 1]):
            seen.setdefault(hi, set()).add(0)
    prev_to = to

addrs = sorted(seen)
lines = subprocess.run(["addr2line", "-e", binary] + ["%x" % a for a in addrs],
                       capture_output=True, text=True, check=True).stdout.split()
byline = {}
for a, fl in zip(addrs, lines):
    file, _, ln = fl.rpartition(":")
    ln = ln.split()[0]
    if not file.endswith("/" + src) or not ln.isdigit():
        continue
    byline.setdefault(int(ln), []).append(a)
for ln in sorted(byline):
    for block, a in enumerate(sorted(byline[ln])):
        for way in (0, 1):
            print("BRDA:%d,%d,%d,%d" % (ln, block, way, 1 if way in seen[a] else 0))
