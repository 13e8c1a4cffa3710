#!/usr/bin/env python3
"""tests/stack/checkstack.py - check that a ptsynth stack truth is
consistent: what must hold by construction, and what the corpus
program's source implies (tests/stack/e2e-stacktruth.sh runs it).

usage: checkstack.py NAME TRUTH SIDEBAND

NAME is the corpus program (tests/corpus/corpus.sh), TRUTH its stack
truth (ptsynth --stack), SIDEBAND the trace's sideband (the mapped ELF
files: names and instruction bytes). Prints "PASS: stacktruth/NAME/CHECK
(numbers)" or "FAIL: ..." lines; exits 1 on a failure.

Checks on every program (stacktruth.py's rules make the frames):
  format       every line has RSP, non-zero and 8-aligned
  push-pop     ptsynth's own count: each call moved RSP down by 8 and each
               return up by 8 (+ ret's immediate), from QEMU's register
               dumps before and after (a check of how the dumps were
               paired with their instructions)
  returns      every return ends exactly the innermost frame and lands on
               the instruction after its call (length decoded from the
               ELF bytes), or ends a signal frame (a handler returning to
               the restorer); none returns to a frame the trace never saw
               (the live-frame count never goes below zero); no call ends
               a frame
  non-local    every other line that ends frames is a jump (longjmp, the
               C++ unwinder's landing, an OCaml raise) landing in the
               function of the innermost frame left alive
  signal-frames  a handler entered below the interrupted RSP; a handler
               that returns resumes the interrupted code where and with
               the RSP it was interrupted at
  abi-alignment  calls into the program's own functions (C, C++) have
               RSP = 8 mod 16 at the target, outside signal handlers
               (QEMU 7.2 enters x86-64 handlers 8 bytes off the ABI's
               alignment; OCaml keeps no such alignment)
plus per program what its source implies (recursion depths, the landing
places of longjmp, throws and raises, the handlers, the threads).
"""
import os
import sys
from collections import Counter

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfsym  # noqa: E402
import stacktruth  # noqa: E402

failed = False
NAME = ""


def result(check, ok, what):
    global failed
    print("%s: stacktruth/%s/%s (%s)" % ("PASS" if ok else "FAIL", NAME, check, what))
    failed |= not ok


class Thread:
    """One thread's walk, summarised for the checks."""

    def __init__(self, tid, lines, img):
        self.tid = tid
        self.nlines = len(lines)
        self.calls = []     # (line, depth before, innermost target, in handler, live)
        self.returns = Counter()
        self.bad_returns = []
        self.call_kills = 0
        self.nonlocal_ = []  # (line, killed, landing name, innermost name)
        self.signals = []    # [frame, interrupted sp, how it ended, resumed ok]
        self.max_depth = 0
        fname = {}

        def name(a):
            if a not in fname:
                f = img.func(a)
                fname[a] = strip(f[0]) if f else "?%x" % a
            return fname[a]

        live = Counter()  # live frames per target name
        pending_sig = None  # a signal frame that returned: its sysret comes
        last_sp = {}  # the SP of the last syscall and async lines
        for ln, stack, killed, new in stacktruth.walk(lines):
            _, frm, to, kind, sp = ln
            for f in killed:
                live[name(f.target)] -= 1
            if kind in ("syscall", "async"):
                last_sp[kind] = sp
            if pending_sig is not None and kind == "sysret":
                s = pending_sig
                s[3] = to == s[0].site and sp == s[1]
                pending_sig = None
            if kind == "call":
                self.call_kills += len(killed)
                if new is not None:
                    inner = stack[-2] if len(stack) > 1 else None
                    self.calls.append((ln, len(stack) - 1,
                                       name(inner.target) if inner else None,
                                       any(f.signal for f in stack[:-1]),
                                       dict(live)))
            elif kind == "return":
                if not killed:
                    self.returns["unseen"] += 1
                    self.bad_returns.append((ln, "returns to a frame the trace never saw"))
                elif len(killed) == 1 and killed[0].signal:
                    self.returns["handler"] += 1
                    for s in self.signals:
                        if s[0] is killed[0]:
                            s[2] = "return"
                            pending_sig = s
                elif len(killed) == 1 and fall(img, killed[0]) == to:
                    self.returns["matched"] += 1
                else:
                    self.returns["other"] += 1
                    self.bad_returns.append((ln, "ends %d frame(s), lands at %s"
                                             % (len(killed), name(to))))
            elif killed:
                inner = stack[-1] if stack else None
                self.nonlocal_.append((ln, killed, name(to),
                                       name(inner.target) if inner else None))
                for s in self.signals:
                    if any(s[0] is f for f in killed):
                        s[2] = kind
            if new is not None:
                live[name(new.target)] += 1
                if new.signal:
                    isp = last_sp.get("async" if kind == "resume" else "syscall")
                    self.signals.append([new, isp, None, None])
            self.max_depth = max(self.max_depth, len(stack))


def strip(n):
    """A function's name without GCC's .cold/.part/.isra suffixes."""
    for suf in (".cold", ".part", ".isra", ".constprop"):
        if suf in n:
            n = n[:n.index(suf)]
    return n


def fall(img, frame):
    n = img.call_len(frame.site)
    return frame.site + n if n else None


# ---------------------------------------------------------------- generic

def generic(threads, header, img, prog):
    main = threads[0]
    nl = sum(t.nlines for t in threads)
    result("format", True, "%d lines in %d thread(s), each with an RSP, non-zero "
           "and 8-aligned" % (nl, len(threads)))

    calls = pushed = rets = popped = 0
    for h in header:
        w = h.split()
        if h.startswith("# stack thread"):
            calls += int(w[5]); pushed += int(w[7])
            rets += int(w[9]); popped += int(w[11])
    result("push-pop", calls and calls == pushed and rets == popped,
           "%d of %d calls moved RSP down by 8, %d of %d returns up by 8"
           % (pushed, calls, popped, rets))

    r = Counter()
    bad = []
    ck = 0
    for t in threads:
        r.update(t.returns)
        bad += t.bad_returns
        ck += t.call_kills
    total = sum(r.values())
    what = "%d returns: %d to the instruction after their call, %d of handlers" % (
        total, r["matched"], r["handler"])
    if bad or ck:
        what += "; %d unseen, %d other, %d frames ended by a call; first: line %d %s" % (
            r["unseen"], r["other"], ck, bad[0][0][0] if bad else 0,
            bad[0][1] if bad else "")
    result("returns", total and not bad and not ck, what)

    nonlocal_ = [x for t in threads for x in t.nonlocal_]
    if nonlocal_:
        wrong = [x for x in nonlocal_ if x[0][3] != "jump" or x[2] != x[3]]
        where = Counter(x[2] for x in nonlocal_)
        what = "%d jump(s) ending %d frame(s), landing in %s" % (
            len(nonlocal_), sum(len(x[1]) for x in nonlocal_),
            ", ".join("%s x%d" % kv for kv in sorted(where.items())))
        if wrong:
            x = wrong[0]
            what += "; %d wrong, first: line %d, a %s to %s, innermost live frame in %s" % (
                len(wrong), x[0][0], x[0][3], x[2], x[3])
        result("non-local", not wrong, what)

    sigs = [s for t in threads for s in t.signals]
    if sigs:
        below = sum(1 for s in sigs if s[1] and s[0].slot < s[1])
        ret = [s for s in sigs if s[2] == "return"]
        resumed = sum(1 for s in ret if s[3])
        jumped = sum(1 for s in sigs if s[2] == "jump")
        alive = sum(1 for s in sigs if s[2] is None)
        result("signal-frames", below == len(sigs) and resumed == len(ret),
               "%d handler(s), %d entered below the interrupted RSP; %d returned, "
               "%d of them resumed where and with the RSP interrupted; %d left by "
               "a jump, %d live at the end" % (len(sigs), below, len(ret), resumed,
                                              jumped, alive))

    if prog != "ocaml":
        n = mis = 0
        for t in threads:
            for ln, _, _, in_sig, _ in t.calls:
                if img.own(ln[2]) and not in_sig:
                    n += 1
                    mis += ln[4] % 16 != 8
        result("abi-alignment", n and not mis,
               "%d calls into the program, %d with RSP != 8 mod 16 at the target"
               % (n, mis))
    return main


# --------------------------------------------------------------- specific

def calls_to(t, name, img):
    return [c for c in t.calls if fname(img, c[0][2]) == name]


def fname(img, a):
    f = img.func(a)
    return strip(f[0]) if f else None


def fib_levels(n, d=0, out=None):
    """Calls of fib per recursion depth for fib(n) (recurse.c)."""
    out = Counter() if out is None else out
    out[d] += 1
    if n >= 2:
        fib_levels(n - 1, d + 1, out)
        fib_levels(n - 2, d + 1, out)
    return out


def specific(prog, threads, img):
    t = threads[0]
    if prog == "recurse":
        down = calls_to(t, "down", img)
        bad = [i for i, c in enumerate(down) if c[4].get("down", 0) != i or
               c[1] != down[0][1] + i]
        result("down-depth", len(down) == 3001 and not bad,
               "%d calls of down(); the k-th with k down() frames live and depth "
               "%d + k: %d wrong" % (len(down), down[0][1] if down else -1, len(bad)))
        fib = calls_to(t, "fib", img)
        got = Counter(c[4].get("fib", 0) for c in fib)
        want = fib_levels(16)
        result("fib-tree", got == want,
               "%d calls of fib(), per depth %s; fib(16)'s call tree: %d, %s"
               % (len(fib), [got[d] for d in sorted(got)], sum(want.values()),
                  [want[d] for d in sorted(want)]))
    elif prog == "longjmp":
        jumps = [x for x in t.nonlocal_]
        deep = [sum(1 for f in x[1] if fname(img, f.target) == "deep") for x in jumps]
        land = [x[2] for x in jumps]
        result("longjmp-depth", deep == [12, 13, 14, 15, 16] and land == ["main"] * 5,
               "longjmp ended %s deep() frames, landing in %s; the source: rounds "
               "1..5 call deep(10 + rounds), 12..16 frames" % (deep, sorted(set(land))))
    elif prog == "signals":
        sigs = t.signals
        h = [fname(img, s[0].target) for s in sigs]
        how = [s[2] for s in sigs]
        ok = (h == ["on_usr", "on_usr", "on_segv", "on_segv", "on_segv"] and
              how == ["return", "return", "jump", "jump", "jump"] and
              all(x[2] == "main" for x in t.nonlocal_))
        result("handlers", ok, "handlers %s ended by %s; raise, kill, then 3 faults "
               "left by siglongjmp into main" % (h, how))
    elif prog == "threads":
        work = [len(calls_to(x, "work", img)) for x in threads[1:]]
        first = [calls_to(x, "work", img)[0][1] if calls_to(x, "work", img) else -1
                 for x in threads[1:]]
        creates = len(calls_to(t, "pthread_create@plt", img))
        result("workers", len(threads) == 4 and work == [1, 1, 1] and
               min(first) >= 1 and creates == 3 and not calls_to(t, "work", img),
               "%d threads; main calls pthread_create %d times; the others call "
               "work() %s times, under %s frame(s) of their start routine"
               % (len(threads), creates, work, first))
    elif prog == "tailcall":
        # even(1002) and odd(77) run to 0 by tail calls (jumps): 1081
        # entries, the stack no deeper than at the first
        starts = {sym_addr(img, "even"), sym_addr(img, "odd")} - {None}
        depths = [len(stack) for ln, stack, _, _ in stacktruth.walk(t.lines)
                  if ln[2] in starts]
        ncalls = len(calls_to(t, "even", img)) + len(calls_to(t, "odd", img))
        result("tail-calls", len(starts) == 2 and len(depths) == 1081 and ncalls == 1 and
               max(depths) == depths[0],
               "even()/odd() entered %d times, %d of them by a call; stack depth "
               "%d..%d at their entries" % (len(depths), ncalls, min(depths or [0]),
                                            max(depths or [0])))
    elif prog == "fptr":
        cmp_ = calls_to(t, "cmp_int", img)
        under = sum(1 for c in cmp_ if c[4].get("qsort@plt", 0) == 1 and c[4].get("main") == 1)
        ops = [c for c in t.calls if fname(img, c[0][2]) in ("add", "sub", "mul")]
        direct = sum(1 for c in ops if c[2] == "main")
        result("callbacks", cmp_ and under == len(cmp_) and len(ops) == 300 and direct == 300,
               "%d cmp_int() calls, %d under qsort() under main(); %d add/sub/mul calls "
               "through the table, %d with main() innermost" % (len(cmp_), under, len(ops),
                                                                 direct))
    elif prog == "exceptions":
        land = Counter(x[2] for x in t.nonlocal_)
        result("unwinds", land.get("main") == 3 and land.get("_ZL6middlei") == 4 and
               sum(land.values()) == 7,
               "landings %s; the source: 3 exceptions reach main's catch (i = 3, "
               "5 rethrown as logic_error, 6), 4 landings in middle (catch(int), "
               "3 cleanups of guard)" % dict(land))
    elif prog == "ocaml":
        lst = [i * 7 % 101 for i in range(60)]
        found = sum(1 for k in range(16) if k in lst)
        depth = [x for x in t.nonlocal_ if x[2].startswith("camlExceptions__entry")]
        find = [x for x in t.nonlocal_ if x[2].startswith("camlExceptions__find")]
        dk = [sum(1 for f in x[1] if (fname(img, f.target) or "").startswith(
            "camlExceptions__depth")) for x in depth]
        result("raises", len(find) == found and dk == [k + 6 for k in range(16)] and
               len(t.nonlocal_) == found + 16,
               "%d raises of Found into find (the source: %d of k = 0..15 in the list), "
               "%d of Not_found into the toplevel ending %s..%s depth frames (k + 6)"
               % (len(find), found, len(depth), dk[0] if dk else "-", dk[-1] if dk else "-"))
    elif prog == "pgtree":
        build = calls_to(t, "build", img)
        got = Counter(c[4].get("build", 0) for c in build)
        result("build-depth", got == Counter({0: 1, 1: 2, 2: 4, 3: 8, 4: 16}),
               "build() calls per build() depth %s; a balanced tree of 15: 1 2 4 8 16"
               % [got[d] for d in sorted(got)])
    elif prog == "pgqsort":
        s = calls_to(t, "sum_range", img)
        got = Counter(c[4].get("sum_range", 0) for c in s)
        want = Counter()

        def sim(lo, hi, d):
            want[d] += 1
            if hi - lo > 3:
                sim(lo, (lo + hi) // 2, d + 1)
                sim((lo + hi) // 2, hi, d + 1)
        sim(0, 24, 0)
        result("sum-range-depth", got == want,
               "sum_range() calls per depth %s; the source's recursion: %s"
               % ([got[d] for d in sorted(got)], [want[d] for d in sorted(want)]))


def sym_addr(img, name):
    for start, end, pgoff, path in img.maps:
        e = img.elves.get(path)
        if not e or path != img.program:
            continue
        for va, _, n in e.funcs:
            if n == name:
                off = e.file_off(va)
                if off is not None and pgoff <= off < pgoff + end - start:
                    return start + off - pgoff
    return None


def main():
    global NAME
    if len(sys.argv) != 4:
        sys.stderr.write("usage: checkstack.py NAME TRUTH SIDEBAND\n")
        return 2
    NAME, truth, sideband = sys.argv[1:]
    try:
        raw, header = stacktruth.read(truth)
        img = elfsym.Image(sideband)
    except (OSError, ValueError) as e:
        result("format", False, str(e))
        return 1
    bad = [(tid, ln) for tid, lines in raw.items() for ln in lines
           if ln[4] == 0 or ln[4] % 8]
    if bad:
        result("format", False, "%d line(s) with RSP 0 or not 8-aligned, first: line %d"
               % (len(bad), bad[0][1][0]))
        return 1
    threads = []
    for tid, lines in raw.items():
        th = Thread(tid, lines, img)
        th.lines = lines
        threads.append(th)
    generic(threads, header, img, NAME)
    specific(NAME, threads, img)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
