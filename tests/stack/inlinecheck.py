#!/usr/bin/env python3
# tests/stack/inlinecheck.py - addr2line judges ptrace-read --inline:
#
#   inlinecheck.py BIN TEXT TREE FOLDED [CHROME]
#
# TEXT is `ptrace-read -f text` of a ring of BIN's trace, TREE and FOLDED
# `ptrace-read --inline -f tree` and `-f folded` of it. Every call (or tail
# call: a jump to another function's entry) from BIN's own code to its own
# code (nm's functions) is a frame in the tree
# whose inlined frames (`foo (inlined)`) between it and its caller must be
# the chain `addr2line -a -i -f -e BIN ADDR` gives at the call's address
# (its innermost first, the function with code last), names and order,
# call by call in the order of the trace; and the folded stacks' inlined
# frames (`foo_[i]`) between two of BIN's functions must be among those
# chains, and every chain among them. With CHROME (`-f chrome --inline`),
# every inlined frame of BIN, leaves included: its category holds the
# address whose chain opened it, and the inlined frames around it, to
# the real frame under them, then it, must begin that address's chain
# (outermost first). Prints a summary; exits 1 on a difference (the
# first ones printed), 2 on bad input.
import re
import subprocess
import sys


def own_functions(binary):
    out = subprocess.run(["nm", "--defined-only", binary], check=True,
                         capture_output=True, text=True).stdout
    addr = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            addr.setdefault(f[2], int(f[0], 16))
    return addr


FROM = re.compile(r" from=0x([0-9a-f]+) <([^+>]+)(?:\+0x([0-9a-f]+))?>")


def load_bias(text, own):
    """the run-time address minus the object's address of BIN's code"""
    with open(text) as f:
        for line in f:
            m = FROM.search(line)
            if m and m.group(2) == "main":  # (ld.so has a _start too)
                return int(m.group(1), 16) - own[m.group(2)] - \
                    int(m.group(3) or "0", 16)
    return None


def chrome_frames(chrome, binary, bias):
    """(object address, [inlined around it, outermost first, then it]) of
    each inlined slice in BIN"""
    import json
    per = {}
    for e in json.load(open(chrome)):
        if e.get("ph") == "X":
            per.setdefault(e["tid"], []).append(e)
    out = []
    for ev in per.values():
        ev.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in ev:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            stack.append(e)
            cat = e["cat"].split(",")
            # (by its base name: a cached trace may name another clone's)
            if "inlined" not in cat or \
                    binary not in [c.rsplit("/", 1)[-1] for c in cat]:
                continue
            chain = []
            for s in reversed(stack):
                if "inlined" not in s["cat"].split(","):
                    break
                chain.insert(0, s["name"])
            out.append((int(cat[-1], 16) - bias, chain))
    return out


CALL = re.compile(r" (?:call|jump) +from=0x[0-9a-f]+ <([^+>]+)(?:\+0x([0-9a-f]+))?> "
                  r"to=0x[0-9a-f]+ <([^+>]+)>")


def calls(text, own):
    """(caller, object address, callee) of each call inside BIN"""
    out = []
    with open(text) as f:
        for line in f:
            m = CALL.search(line)
            if not m or m.group(1) not in own or m.group(3) not in own or \
                    (" jump " in line and m.group(1) == m.group(3)):
                continue
            out.append((m.group(1), own[m.group(1)] + int(m.group(2) or "0", 16),
                        m.group(3)))
    return out


def addr2line(binary, addrs):
    """address -> the function names addr2line -i -f gives, innermost first"""
    addrs = sorted(set(addrs))
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-e", binary] +
                         ["0x%x" % a for a in addrs], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    chains, cur, i = {}, None, 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            cur = int(out[i], 16)
            chains[cur] = []
            i += 1
            continue
        chains[cur].append(out[i])
        i += 2  # the name, then file:line
    return chains


def tree_calls(tree, own):
    """(caller, [inlined, outermost first], callee) of each frame of BIN's
    functions under one of them, in the tree's order"""
    out, stack = [], []
    for line in open(tree):
        if line.startswith("#") or "] | " not in line:
            continue
        body = line.split("] | ", 1)[1].rstrip("\n")
        depth = (len(body) - len(body.lstrip(" "))) // 2
        body = body.strip()
        del stack[depth:]
        if body.startswith("} /* "):
            continue
        name = body.rsplit("()", 1)[0]
        if not name.endswith(" (inlined)") and name in own:
            chain = []
            for k in range(len(stack) - 1, -1, -1):
                if stack[k].endswith(" (inlined)"):
                    chain.insert(0, stack[k][:-len(" (inlined)")])
                    continue
                if stack[k] in own:
                    out.append((stack[k], chain, name))
                break
        if body.endswith("{"):
            stack.append(name)
    return out


def folded_chains(folded, own):
    seen = set()
    for line in open(folded):
        frames = line.rsplit(" ", 1)[0].split(";")
        for i, f in enumerate(frames):
            if f not in own:
                continue
            k = i + 1
            while k < len(frames) and frames[k].endswith("_[i]"):
                k += 1
            if k < len(frames) and frames[k] in own:
                seen.add((f, tuple(x[:-4] for x in frames[i + 1:k]),
                          frames[k]))
    return seen


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: inlinecheck.py BIN TEXT TREE FOLDED [CHROME]")
    binary, text, tree, folded = sys.argv[1:5]
    own = own_functions(binary)
    ev = calls(text, own)
    chains = addr2line(binary, [a for _, a, _ in ev])
    want = []
    for caller, a, callee in ev:
        c = chains.get(a, [])
        if not c or c[-1] != caller:
            print("addr2line names %s at 0x%x, the trace %s" %
                  (c[-1] if c else "nothing", a, caller))
            sys.exit(1)
        want.append((caller, list(reversed(c[:-1])), callee, a))
    got = tree_calls(tree, own)
    bad = 0
    if len(got) != len(want):
        print("the tree has %d calls inside the program, the trace %d" %
              (len(got), len(want)))
        bad += 1
    for g, w in zip(got, want):
        if (g[0], g[1], g[2]) != w[:3]:
            if bad < 5:
                print("at 0x%x: tree %s -> %s -> %s, addr2line %s -> %s -> %s"
                      % (w[3], g[0], ";".join(g[1]), g[2], w[0],
                         ";".join(w[1]), w[2]))
            bad += 1
    fold = folded_chains(folded, own)
    wset = {(w[0], tuple(w[1]), w[2]) for w in want}
    if fold != wset:
        print("folded: %d (caller, chain, callee) not from addr2line, %d "
              "missing: %s %s" % (len(fold - wset), len(wset - fold),
                                  sorted(fold - wset)[:2],
                                  sorted(wset - fold)[:2]))
        bad += 1
    nchrome = ""
    if len(sys.argv) == 6:
        import os
        fr = chrome_frames(sys.argv[5], os.path.basename(binary),
                           load_bias(text, own))
        ch = addr2line(binary, [a for a, _ in fr])
        nb = 0
        for a, c in fr:
            w = list(reversed(ch.get(a, [])[:-1]))
            if w[:len(c)] != c:
                if nb < 5:
                    print("chrome: at 0x%x the inlined frames %s, addr2line "
                          "%s" % (a, ";".join(c), ";".join(w)))
                nb += 1
        bad += nb
        nchrome = "; %d inlined chrome slices of the program begin their " \
            "address's chain (%d differ)" % (len(fr), nb)
        if not fr:
            bad += 1
    inl = sum(1 for w in want if w[1])
    print("%d calls, %d of them from inlined code (%d distinct chains, up "
          "to %d deep), %d folded stacks' chains; %d differences" %
          (len(want), inl, len({tuple(w[1]) for w in want if w[1]}),
           max([len(w[1]) for w in want] + [0]), len(fold), bad) + nchrome)
    sys.exit(1 if bad or not inl else 0)


main()
