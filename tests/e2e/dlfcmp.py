#!/usr/bin/env python3
"""Compare the ring the dlfilter wrote with the ring ptrace-capture wrote.

usage: dlfcmp.py NAME CAP_DEFAULT CAP_ALL DLF_DEFAULT DLF_ALL [--tol NS]
                 [--perf-data FILE] [--plain]

Each file is `ptrace-read -f jsonl` of a ring made from the same perf.data:
ptrace-capture -i (CAP_*) and perf script --itrace=b --dlfilter
libstrace_dlf.so (DLF_*), each without and with all-branches.

Prints one PASS:/FAIL:/SKIP: line per check (prefixed with NAME):

  flow      with all branches, per thread, the same sequence of control,
            flow and gap events: type, addresses, reason, the flags
            both sides can know (async, conditional, indirect for calls
            and jumps) and a syscall's name. Strict.
  time      on those events, |time difference| <= --tol ns, or with
            --perf-data FILE one MTC period of that recording (issue 4's
            tolerance: both decoders place a branch within the timing
            packet period that holds it).
  perfnames (with --perf-data) every name in the dlfilter's ring is
            the one perf script itself prints for that address. Strict.
  names     the symbol names ptrace-read shows for every address (each
            from its own ring's definitions). When they differ and the
            dlfilter's names are perf's, the difference lies between
            ptrace-capture and perf (perf reads detached debug files,
            names PLT entries its own way): reported per DSO, with counts
            and an example, as a SKIP. A difference in a DSO without a
            debug file, without --perf-data to vouch for the dlfilter,
            fails. With --plain (both rings named by our own rules,
            names=plain, from the same files) every difference fails, and
            perfnames is not checked.
  default   without all-branches: the same events; where the two differ,
            every difference must be a jump that one side drops as
            intra-symbol and the other keeps, at an address the names
            check found named on one side only (else FAIL).
  defs      DSO definitions (pid, start, path) that the dlfilter
            wrote are ptrace-capture's; process/thread names agree; with
            --plain, its symbol definitions (start, name, aliases) too.
"""
import json
import os
import re
import struct
import subprocess
import sys


def hexints(e):
    """Our JSON writes addresses as "0x..." strings: make them numbers."""
    return {k: int(v, 16) if isinstance(v, str) and v.startswith("0x")
            and k not in ("path", "name", "comm") and not k.endswith("_sym")
            else v for k, v in e.items()}

FLOW = {"trace_begin", "trace_end", "call", "return", "jump", "syscall",
        "sysret", "interrupt", "overflow", "error", "lost"}
F_ASYNC, F_COND, F_INTRA, F_IND = 1, 2, 4, 8
NORMALIZED = [0]


RESYNC = {"overflow", "error", "sync"}


def load(path, capture=False):
    """Flow events per thread, and definitions. perf does not pass its
    decode errors and overflows to a dlfilter: the dlfilter sees perf
    resume with a "tr strt" and writes trace_begin (sync). So the
    capture's overflow and error events are dropped here and the reasons
    overflow, error and sync compare equal (counted in NORMALIZED)."""
    flow, defs = {}, []
    with open(path) as f:
        for line in f:
            e = json.loads(line, object_hook=hexints)
            if capture and e["type"] in ("overflow", "error"):
                NORMALIZED[0] += 1
                continue
            if e["type"] in FLOW:
                flow.setdefault(e["tid"], []).append(e)
            else:
                defs.append(e)
    return flow, defs


def key(e):
    t = e["type"]
    fl = e.get("flags", 0)
    mask = F_ASYNC | F_COND
    if t in ("call", "jump"):
        mask |= F_IND
    addrs = tuple(e.get(k, 0) for k in ("ip", "from", "to"))
    reason = e.get("reason", "")
    if reason in RESYNC:
        reason = "resync"
    return (t, addrs, reason, fl & mask, e.get("syscall", ""))


def names(e):
    return tuple(e.get(k, "") for k in ("ip_sym", "from_sym", "to_sym"))


def unnamed(s):
    return s.startswith("[") or s == ""


def show(e):
    return "%s %s %s" % (e["type"], " ".join(
        "%s=%x(%s)" % (k, e[k], e.get(k + "_sym", ""))
        for k in ("ip", "from", "to") if k in e), e.get("reason", ""))


def first_diff(a, b, name, what):
    i = 0
    while i < min(len(a), len(b)) and key(a[i]) == key(b[i]):
        i += 1
    print("  %s %s: ptrace-capture %d events, dlfilter %d; first difference "
          "at %d" % (name, what, len(a), len(b), i))
    for k in range(max(0, i - 2), i + 3):
        x = show(a[k]) if k < len(a) else "-"
        y = show(b[k]) if k < len(b) else "-"
        print("   %s %d capture: %s\n          dlfilter: %s"
              % ("*" if x != y else " ", k, x, y))


def build_id(path):
    """The GNU build-id of an ELF file, as hex, or None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    for i in range(shnum):
        sh = shoff + i * shentsize
        stype, = struct.unpack_from("<I", data, sh + 4)
        if stype != 7:  # SHT_NOTE
            continue
        off, size = struct.unpack_from("<QQ", data, sh + 0x18)
        p = off
        while p + 12 <= off + size:
            nsz, dsz, ntype = struct.unpack_from("<III", data, p)
            name = data[p + 12:p + 12 + nsz]
            desc = p + 12 + ((nsz + 3) & ~3)
            if ntype == 3 and name.startswith(b"GNU"):
                return data[desc:desc + dsz].hex()
            p = desc + ((dsz + 3) & ~3)
    return None


def debug_file(path):
    """The detached debug file perf would read for path, or None."""
    bid = build_id(path)
    if not bid:
        return None
    f = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    return f if os.path.exists(f) else None


def mtc_tolerance(data):
    """One MTC period in ns for the perf.data file (0 if no MTC)."""
    ev = subprocess.run(["perf", "evlist", "-v", "-i", data],
                        capture_output=True, text=True).stdout
    m = re.search(r"config: (0x[0-9a-f]+)", ev)
    # the AUXTRACE_INFO record comes first: read the dump only that far
    lines = []
    with subprocess.Popen(["perf", "script", "-D", "-i", data],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as p:
        for line in p.stdout:
            lines.append(line)
            if "PERF_RECORD_TIME_CONV" in line or len(lines) > 2000:
                break
        p.kill()
    dump = "".join(lines)
    def field(name):
        m2 = re.search(r"  %s +(0x[0-9a-f]+|\d+)" % re.escape(name), dump)
        return int(m2.group(1), 0) if m2 else None
    if not m:
        return 0
    config = int(m.group(1), 16)
    mtc_bit, freq_bits = field("MTC bit"), field("MTC freq bits")
    n, d = field("TSC:CTC numerator"), field("TSC:CTC denominator")
    mult, shift = field("Time Muliplier"), field("Time Shift")
    if not (mtc_bit and freq_bits and n and d and mult is not None):
        return 0
    if not config & mtc_bit:
        return 0
    low = (freq_bits & -freq_bits).bit_length() - 1
    period = (config & freq_bits) >> low
    tsc = (1 << period) * n // d
    return (tsc * mult) >> (shift or 0)


def perf_symbols(data):
    """Address -> name as perf script itself prints it (sym+0xoff),
    demangled as perf demangles the names it gives a dlfilter."""
    out = subprocess.run(["perf", "script", "-i", data, "--itrace=b",
                          "-F", "ip,sym,symoff,addr"],
                         capture_output=True, text=True).stdout
    m = {}
    for line in out.splitlines():
        t = line.split()
        if "=>" not in t:
            continue
        i = t.index("=>")
        for addr, sym in ((t[0], t[1:i]), (t[i + 1], t[i + 2:])):
            a = int(addr, 16)
            if a:
                name = " ".join(sym)
                if name.endswith("+0x0"):
                    name = name[:-4]
                m[a] = name
    return m


def main():
    args = [a for a in sys.argv[1:]]
    tol = 0
    if "--tol" in args:
        i = args.index("--tol")
        tol = int(args[i + 1])
        del args[i:i + 2]
    plain = "--plain" in args
    if plain:
        args.remove("--plain")
    perf_names = None
    if "--perf-data" in args:
        i = args.index("--perf-data")
        tol = mtc_tolerance(args[i + 1])
        if not plain:
            perf_names = perf_symbols(args[i + 1])
        del args[i:i + 2]
    name, cd, ca, dd, da = args
    cap_d, cap_defs = load(cd, True)
    NORMALIZED[0] = 0
    cap_a, _ = load(ca, True)
    dlf_d, dlf_defs = load(dd)
    dlf_a, _ = load(da)
    failed = False

    def verdict(kind, check, msg):
        nonlocal failed
        if kind == "FAIL":
            failed = True
        print("%s: %s/%s (%s)" % (kind, name, check, msg))

    # flow, all branches
    tids = sorted(set(cap_a) | set(dlf_a))
    ok = True
    total = 0
    for tid in tids:
        a, b = cap_a.get(tid, []), dlf_a.get(tid, [])
        if [key(e) for e in a] != [key(e) for e in b]:
            ok = False
            first_diff(a, b, "thread %d" % tid, "all-branches")
        total += len(a)
    verdict("PASS" if ok else "FAIL", "flow",
            "%d threads, %d events with all branches; %d overflow/error "
            "events of ptrace-capture not comparable (perf keeps its "
            "errors from dlfilters)" % (len(tids), total, NORMALIZED[0]))

    # time and names on the aligned events
    # which DSO an address lies in: the capture's DSO definitions
    pid_of = {e["tid"]: e["pid"] for e in cap_defs
              if e["type"] in ("process", "thread")}
    dsos = {}
    for e in cap_defs:
        if e["type"] == "dso":
            dsos.setdefault(e["tid"], []).append((e["start"], e["path"]))
    for v in dsos.values():
        v.sort()

    def dso_of(tid, addr):
        best = None
        for start, path in dsos.get(pid_of.get(tid, tid), []):
            if start <= addr:
                best = path
        return best or "?"

    debug = {}
    worst, worst_ev = 0, None
    soft, hard = {}, []
    intra_diff = set()
    for tid in tids:
        a, b = cap_a.get(tid, []), dlf_a.get(tid, [])
        for x, y in zip(a, b):
            if key(x) != key(y):
                break
            dt = abs(x["time"] - y["time"])
            if dt > worst:
                worst, worst_ev = dt, (x, y)
            if (x.get("flags", 0) ^ y.get("flags", 0)) & F_INTRA:
                intra_diff.add((tid, x.get("from"), x.get("to")))
            for k, p, q in zip(("ip", "from", "to"), names(x), names(y)):
                if p == q:
                    continue
                dso = dso_of(tid, x.get(k, 0))
                if dso not in debug:
                    debug[dso] = None if plain else debug_file(dso)
                if not debug[dso]:
                    hard.append((x, y, p, q))
                    continue
                kind = ("unnamed" if unnamed(p) and not unnamed(q) else
                        "other symbol")
                c = soft.setdefault(dso, {"unnamed": 0, "other symbol": 0,
                                          "eg": (p, q)})
                c[kind] += 1
    if worst <= tol:
        verdict("PASS", "time", "max difference %d ns, tolerance %d ns"
                % (worst, tol))
    else:
        verdict("FAIL", "time", "max difference %d ns > %d ns at %s"
                % (worst, tol, show(worst_ev[0])))
    if perf_names is not None:
        bad = []
        for tid in tids:
            for y in dlf_a.get(tid, []):
                for k in ("ip", "from", "to"):
                    a = y.get(k, 0)
                    if not a or a not in perf_names:
                        continue
                    pn, q = perf_names[a], y.get(k + "_sym", "")
                    if pn == "[unknown]" and unnamed(q) or pn == q:
                        continue
                    bad.append((a, pn, q))
        for a, pn, q in bad[:5]:
            print("  %x: perf script says %r, the dlfilter's ring %r"
                  % (a, pn, q))
        verdict("FAIL" if bad else "PASS", "perfnames",
                "%d names differ from perf script's own" % len(bad)
                if bad else "every name is perf script's own")
        if not bad:
            # the dlfilter says what perf says: the rest is between
            # ptrace-capture and perf, reported precisely below
            for x, y, p, q in hard:
                dso = dso_of(x["tid"], next((x.get(k) for k in
                                             ("ip", "from", "to")
                                             if x.get(k + "_sym") == p),
                                            0))
                c = soft.setdefault(dso, {"unnamed": 0, "other symbol": 0,
                                          "eg": (p, q)})
                c["unnamed" if unnamed(p) else "other symbol"] += 1
                debug.setdefault(dso, None)
            hard = []
    if hard:
        for x, y, p, q in hard[:5]:
            print("  name differs: capture %r, dlfilter %r in %s"
                  % (p, q, show(x)))
        verdict("FAIL", "names", "%d addresses named differently"
                % len(hard))
    elif soft:
        verdict("SKIP", "names",
                "ptrace-capture and perf name addresses differently "
                "(the dlfilter's names are perf's): " +
                "; ".join("%s%s: %d addresses unnamed by "
                          "ptrace-capture, %d named after another symbol, "
                          "e.g. %r vs perf's %r" %
                          (d, " (perf reads the detached debug file %s, "
                           "ptrace-capture does not yet)" % debug[d]
                           if debug.get(d) else " (no debug file: the "
                           "symbol tables are read differently)",
                           c["unnamed"], c["other symbol"],
                           c["eg"][0], c["eg"][1])
                          for d, c in sorted(soft.items())))
    else:
        verdict("PASS", "names", "every address has the same name")

    # default mode
    ok, explained, unexplained = True, 0, 0
    for tid in sorted(set(cap_d) | set(dlf_d)):
        a = [key(e) for e in cap_d.get(tid, [])]
        b = [key(e) for e in dlf_d.get(tid, [])]
        if a == b:
            continue
        ok = False
        # what each side drops is its all-branches run minus its intra
        # jumps: the difference must be jumps whose intra flag differs
        ia = [key(e) for e in cap_a.get(tid, [])
              if not (e["type"] == "jump" and e.get("flags", 0) & F_INTRA)]
        ib = [key(e) for e in dlf_a.get(tid, [])
              if not (e["type"] == "jump" and e.get("flags", 0) & F_INTRA)]
        if ia != a or ib != b:
            unexplained += 1
            first_diff(cap_d.get(tid, []), dlf_d.get(tid, []),
                       "thread %d" % tid, "default")
            continue
        explained += sum(1 for e in cap_a.get(tid, []) + dlf_a.get(tid, [])
                         if e["type"] == "jump" and
                         (tid, e.get("from"), e.get("to")) in intra_diff)
    n = sum(len(v) for v in cap_d.values())
    if ok:
        verdict("PASS", "default", "%d events" % n)
    elif unexplained or hard:
        verdict("FAIL", "default", "%d threads differ beyond symbol "
                "knowledge" % max(unexplained, 1))
    else:
        nc = sum(len(v) for v in cap_d.values())
        nd = sum(len(v) for v in dlf_d.values())
        verdict("SKIP", "default",
                "ptrace-capture %d events, dlfilter %d: they differ only in "
                "jumps that one side drops as intra-symbol and the other "
                "keeps (%d distinct branches), because the symbol tables "
                "differ (see names); the rest is equal" %
                (nc, nd, len(intra_diff)))

    # definitions
    cap_dso = {(e["tid"], e["start"], e["path"]) for e in cap_defs
               if e["type"] == "dso"}
    dlf_dso = {(e["tid"], e["start"], e["path"]) for e in dlf_defs
               if e["type"] == "dso"}
    cap_thr = {(e["type"], e["tid"], e["pid"], e["name"]) for e in cap_defs
               if e["type"] in ("process", "thread")}
    dlf_thr = {(e["type"], e["tid"], e["pid"], e["name"]) for e in dlf_defs
               if e["type"] in ("process", "thread")}
    bad = sorted(dlf_dso - cap_dso) + sorted(dlf_thr - cap_thr)
    if plain:
        # same files, same rules: each symbol the dlfilter defined is
        # ptrace-capture's, with the same aliases
        def syms(defs):
            return {(e["start"], e["name"], tuple(e.get("aliases", ())))
                    for e in defs if e["type"] == "symbol"}
        bad += sorted(syms(dlf_defs) - syms(cap_defs))
    if bad or not dlf_dso:
        for b in bad[:5]:
            print("  dlfilter definition not in ptrace-capture's: %r" % (b,))
        verdict("FAIL", "defs", "%d definitions differ" % len(bad))
    else:
        verdict("PASS", "defs", "%d DSOs (of ptrace-capture's %d: the "
                "dlfilter defines those the branches touch), %d "
                "threads" % (len(dlf_dso), len(cap_dso), len(dlf_thr)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
