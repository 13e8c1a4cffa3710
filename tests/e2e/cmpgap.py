#!/usr/bin/env python3
"""Judge a decode of a trace whose image misses code (a mapping left out)
against ptsynth's ground truth, and perf's decode of it.

usage: cmpgap.py TRUTH OUR_JSONL [PERF_BRANCHES]

TRUTH is ptsynth's truth file (per thread "# section thread TID", one
taken branch "from to kind" per line, in execution order). OUR_JSONL is
`ptrace-read -f jsonl` of a ring written with --all-branches. After each
trace_begin the decode goes on until an error: every such stretch of
branches must be a piece of the truth exactly (nothing made up, nothing
skipped inside it), each after the one before. Stretches that begin with
reason "sync" were found again at an IP packet after a gap
(docs/decoder.md, "Resynchronising"); they are counted.

PERF_BRANCHES (optional) is `perf script --itrace=b -F tid,ip,addr` of
the same perf.data: perf's branches must be ours too, in the same order
(ours may have more: perf 6.1 gives up where we resume).

Prints "stretches N, after sync S (B branches), perf P of ours" and exits
0, or says where it fails and exits 1.
"""
import json
import sys

KIND = {"call": "call", "return": "return", "jump": "jump", "cond": "jump",
        "syscall": "syscall"}


def truth(path):
    out, tid = {}, None
    for line in open(path):
        if line.startswith("# section thread"):
            tid = int(line.split()[3])
            out.setdefault(tid, [])
        elif not line.startswith("#") and tid is not None:
            f = line.split()
            if len(f) >= 3 and f[2] in KIND:
                out[tid].append((KIND[f[2]], int(f[0], 16), int(f[1], 16)))
    return out


def ours(path):
    """Per thread: [(reason, [branch, ...]), ...], a stretch per begin."""
    runs, cur = {}, {}
    for line in open(path):
        e = json.loads(line)
        t, tid = e.get("type"), e.get("tid")
        if t == "trace_begin":
            cur[tid] = []
            runs.setdefault(tid, []).append((e["reason"], cur[tid]))
        elif t == "error":
            cur.pop(tid, None)
        elif t in ("call", "return", "jump", "syscall") and tid in cur:
            cur[tid].append((t, int(e["from"], 16), int(e["to"], 16)))
    return runs


def perf(path):
    out = {}
    for line in open(path):
        f = line.replace("=>", " ").split()
        if len(f) == 3:
            out.setdefault(int(f[0]), []).append((int(f[1], 16), int(f[2], 16)))
    return out


def main():
    T, R = truth(sys.argv[1]), ours(sys.argv[2])
    P = perf(sys.argv[3]) if len(sys.argv) > 3 else None
    # two runs of a program get other thread ids: pair them in order
    if len(T) != len(R):
        print("the truth has %d threads, the decode %d" % (len(T), len(R)))
        return 1
    pair = dict(zip(sorted(R), sorted(T)))
    n = synced = sync_br = 0
    for tid, runs in sorted(R.items()):
        tr, at = T[pair[tid]], 0
        where = {}
        for i, b in enumerate(tr):
            where.setdefault(b, []).append(i)
        for reason, br in runs:
            if not br:
                continue
            k = next((s for s in where.get(br[0], []) if s >= at and
                      tr[s:s + len(br)] == br), None)
            if k is None:
                print("thread %d: %d branches after a trace_begin (%s) at "
                      "0x%x are not the truth's, or not after the stretch "
                      "before" % (tid, len(br), reason, br[0][1]))
                return 1
            at = k + len(br)
            n += 1
            if reason == "sync":
                synced += 1
                sync_br += len(br)
    got = "-"
    if P is not None:
        seen = total = 0
        for tid, pb in P.items():
            mine = [(b[1], b[2]) for r in R.get(tid, []) for b in r[1]]
            j = 0
            for b in pb:
                while j < len(mine) and mine[j] != b:
                    j += 1
                if j == len(mine):
                    print("thread %d: perf's branch 0x%x => 0x%x (its %dth) "
                          "is not ours, or not in that order"
                          % (tid, b[0], b[1], seen + 1))
                    return 1
                j += 1
                seen += 1
            total += len(mine)
        got = "%d of our %d" % (seen, total)
    print("stretches %d, after sync %d (%d branches), perf %s"
          % (n, synced, sync_br, got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
