#!/usr/bin/env bash
# tests/e2e/layout.sh - the data flow stays visible in the folders
# (docs/design.md, "Stages"):
#  - a folder includes another folder's headers only through that stage's
#    one header (or the public include/strace/*.h): no private header is
#    used across folders; tests/ may use anything, and nothing uses tests/;
#  - the folders' include graph has no cycle, and neither has the graph of
#    the headers inside a folder;
#  - the folders depend the documented way: cli -> cli/view, pt_backend,
#    dlfilter -> decoder -> events (a stage may use the stages below it
#    only);
#    both "..." and <...> includes of the project's headers count;
#  - calls go the same way: the call graph the compiler draws
#    (gcc -fcallgraph-info, every file built at -O0 so that the calls into
#    inline functions are kept) has no call from a stage into one above
#    it, and no cycle between the files of one folder (a file and its own
#    header are one node: segment.c with segment.h);
#  - no file over 1,200 lines and no function over 150 outside tests/
#    (but for the packet tables and switch-only dispatchers named in
#    LONG_OK, each with why).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
exec python3 - <<'EOF'
import os, re, sys

# folder -> its stage header (what other folders may include)
STAGES = {
    "events": None,  # its interface is include/strace/*.h
    "decoder": "decoder/decoder.h",
    "pt_backend/perf": "pt_backend/perf/perf.h",
    "pt_backend/capture": "pt_backend/capture/capture.h",
    "pt_backend/pipeline": "pt_backend/pipeline/pipeline.h",
    "dlfilter": "dlfilter/dlf.h",
    "cli/view": "cli/view/view.h",  # the views and formats (libstrace_view.a)
    "cli": None,  # the commands: nothing includes them
    "include/strace": None,  # public: anyone may include these
}
# who may use whom (a folder may use itself and what is listed)
MAY_USE = {
    "include/strace": set(),
    "events": {"include/strace"},
    "decoder": {"include/strace"},
    "pt_backend/perf": {"include/strace", "decoder"},
    "pt_backend/capture": {"include/strace", "decoder", "pt_backend/perf"},
    "pt_backend/pipeline": {"include/strace", "decoder", "pt_backend/perf",
                            "pt_backend/capture"},
    "dlfilter": {"include/strace", "decoder"},
    "cli/view": {"include/strace", "events", "decoder"},
    "cli": {"include/strace", "decoder", "pt_backend/perf",
            "pt_backend/capture", "pt_backend/pipeline", "cli/view"},
}
# functions allowed over 150 lines: "file:function": why
LONG_OK = {
    "decoder/packet.h:pkt_parse":
        "the packet table: a branch per opcode of the PT packet format, "
        "inline in the walker's loop",
}
results = []
def check(name, ok, detail=""):
    """detail: what went wrong, shown only when it did"""
    results.append(ok)
    print("%s: layout/%s%s" % ("PASS" if ok else "FAIL", name,
                               "" if ok else " (%s)" % detail))

def folder_of(path):
    for f in sorted(STAGES, key=len, reverse=True):
        if path.startswith(f + "/"):
            return f
    if path.startswith("tests/"):
        return "tests"
    return None

files = []
for root, dirs, names in os.walk("."):
    dirs[:] = [d for d in dirs if d not in (".git", "build", "node_modules")]
    for n in names:
        if n.endswith((".c", ".h")):
            files.append(os.path.normpath(os.path.join(root, n)))

def resolve(src, inc):
    for base in (os.path.dirname(src), ".", "include", "tests"):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(p):
            return p
    return None

edges = {}  # file -> set of files it includes
unresolved = []
for f in files:
    text = open(f, errors="replace").read()
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        t = resolve(f, m.group(1))
        if t is None:
            unresolved.append("%s: %s" % (f, m.group(1)))
        else:
            edges.setdefault(f, set()).add(t)
    # <...>: the project's own headers (the rest is the system's)
    for m in re.finditer(r'^\s*#\s*include\s+<([^>]+)>', text, re.M):
        for base in ("include", "."):
            p = os.path.normpath(os.path.join(base, m.group(1)))
            if os.path.isfile(p):
                edges.setdefault(f, set()).add(p)
                break
check("every-include-found", not unresolved, "; ".join(unresolved[:5]))

bad_private, bad_dir, uses_tests = [], [], []
fedges = {}
for f, ts in edges.items():
    a = folder_of(f)
    if a is None:
        continue
    for t in ts:
        b = folder_of(t)
        if b is None or b == a:
            continue
        if b == "tests":
            uses_tests.append("%s -> %s" % (f, t))
            continue
        if a == "tests":
            continue
        fedges.setdefault(a, set()).add(b)
        if b != "include/strace" and STAGES.get(b) != t:
            bad_private.append("%s -> %s" % (f, t))
        if b not in MAY_USE.get(a, set()):
            bad_dir.append("%s -> %s" % (f, t))
check("stage-headers-only", not bad_private,
      "private headers used across folders: " + "; ".join(bad_private[:6]))
check("dependency-direction", not bad_dir,
      "against the stages' order: " + "; ".join(bad_dir[:6]))
check("nothing-uses-tests", not uses_tests, "; ".join(uses_tests[:6]))

def calls_check():
    """The compiler's call graph: calls only downward, no cycle in a
    folder. A file's calls are those whose call site lies in it (an inline
    function's calls belong to the header that holds it)."""
    import glob, shlex, shutil, subprocess, tempfile
    from concurrent.futures import ThreadPoolExecutor
    cc = shlex.split(os.environ.get("CC") or "cc")
    srcs = sorted(f for f in files if f.endswith(".c") and folder_of(f)
                  not in (None, "tests"))
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "capstone"],
                                capture_output=True, text=True).stdout.split()
    except OSError:
        cflags = []
    gen = os.path.join(os.environ.get("O", "build"), "gen")
    tmp = tempfile.mkdtemp(prefix="layout-calls.")
    def build(i_f):
        i, f = i_f
        r = subprocess.run(cc + ["-std=c11", "-D_GNU_SOURCE", "-O0", "-w",
                            "-Iinclude", "-I.", "-I" + gen] + cflags +
                           ["-fcallgraph-info", "-c", f, "-o",
                            os.path.join(tmp, "%d.o" % i)],
                           capture_output=True, text=True)
        return f, r.returncode, r.stderr
    try:
        with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
            failed = [(f, e) for f, rc, e in ex.map(build, enumerate(srcs))
                      if rc]
        if failed:
            f, e = failed[0]
            if "callgraph-info" in e:
                print("SKIP: layout/calls (%s cannot draw call graphs: "
                      "-fcallgraph-info needs gcc 10 or later)" % " ".join(cc))
                return
            check("calls-built", False, "%s: %s" % (f, e.strip()[-300:]))
            return
        node_re = re.compile(r'node: \{ title: "([^"]*)" label: "[^"\\]*\\n'
                             r'([^"]*)"( shape : ellipse)?')
        edge_re = re.compile(r'edge: \{ sourcename: "[^"]*" targetname: '
                             r'"([^"]*)" label: "([^"]*)"')
        where, sites = {}, []
        for ci in glob.glob(os.path.join(tmp, "*.ci")):
            for line in open(ci, errors="replace"):
                m = node_re.match(line)
                if m:
                    if not m.group(3):  # defined here, not just declared
                        where[m.group(1)] = os.path.normpath(
                            m.group(2).rsplit(":", 2)[0])
                    continue
                m = edge_re.match(line)
                if m:
                    sites.append((os.path.normpath(
                        m.group(2).rsplit(":", 2)[0]), m.group(1)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # the public headers are the events stage's own
    stage = lambda f: "events" if folder_of(f) == "include/strace" \
        else folder_of(f)
    may = lambda a: {"events" if u == "include/strace" else u
                     for u in MAY_USE.get(a, ())} | {a}
    upward, inside = set(), {}
    for site, callee in sites:
        d = where.get(callee)
        if d is None or os.path.isabs(d) or os.path.isabs(site):
            continue
        a, b = stage(site), stage(d)
        if a is None or b is None or "tests" in (a, b):
            continue
        if b not in may(a):
            upward.add("%s -> %s (%s)" % (site, d, callee.split(":")[-1]))
        ma, mb = os.path.splitext(site)[0], os.path.splitext(d)[0]
        if a == b and ma != mb:
            inside.setdefault(ma, set()).add(mb)
    check("calls-only-downward", not upward,
          "calls into a stage above: " + "; ".join(sorted(upward)[:6]))
    c = find_cycle(inside)
    check("no-call-cycle-inside-folders", c is None,
          "files calling each other: " + " -> ".join(c or []))

def find_cycle(graph):
    state, stack = {}, []
    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not state.get(m):
                c = visit(m)
                if c:
                    return c
        state[n] = 2
        stack.pop()
        return None
    for n in sorted(graph):
        if not state.get(n):
            c = visit(n)
            if c:
                return c
    return None

c = find_cycle(fedges)
check("no-cycle-between-folders", c is None, " -> ".join(c or []))
inside = {}
for f, ts in edges.items():
    for t in ts:
        if folder_of(f) == folder_of(t) and f != t:
            inside.setdefault(f, set()).add(t)
c = find_cycle(inside)
check("no-cycle-inside-folders", c is None, " -> ".join(c or []))
calls_check()

# sizes: a body runs from a "{" alone at the start of a line to the next
# "}" there (the kernel style every file here keeps)
big_files, long_funcs = [], []
for f in sorted(files):
    if folder_of(f) in (None, "tests"):
        continue
    lines = open(f, errors="replace").read().split("\n")
    if len(lines) - 1 > 1200:
        big_files.append("%s (%d lines)" % (f, len(lines) - 1))
    start = None
    for i, l in enumerate(lines):
        if l == "{":
            start = i
        elif start is not None and l.startswith("}"):
            j = start - 1
            while j > 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"(\w+)\s*\(", lines[j])
            name = m.group(1) if m else "?"
            n = i - j + 1
            if n > 150 and "%s:%s" % (f, name) not in LONG_OK:
                long_funcs.append("%s:%s (%d lines)" % (f, name, n))
            start = None
check("files-under-1200-lines", not big_files, "; ".join(big_files))
check("functions-under-150-lines", not long_funcs,
      "; ".join(long_funcs))
print("folders: " + "; ".join("%s -> %s" % (a, ", ".join(sorted(b)))
                              for a, b in sorted(fedges.items())), file=sys.stderr)
sys.exit(0 if all(results) else 1)
EOF
