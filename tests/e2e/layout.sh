#!/usr/bin/env bash
# tests/e2e/layout.sh - the data flow stays visible in the folders
# (docs/design.md, "Stages"):
#  - a folder includes another folder's headers only through that stage's
#    one header (or the public include/strace/*.h): no private header is
#    used across folders; tests/ may use anything, and nothing uses tests/;
#  - the folders' include graph has no cycle, and neither has the graph of
#    the headers inside a folder;
#  - the folders depend the documented way: cli -> pt_backend, dlfilter
#    -> decoder -> events (a stage may use the stages below it only).
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
    "cli": {"include/strace", "decoder", "pt_backend/perf",
            "pt_backend/capture", "pt_backend/pipeline"},
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
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(f, errors="replace").read(), re.M):
        t = resolve(f, m.group(1))
        if t is None:
            unresolved.append("%s: %s" % (f, m.group(1)))
        else:
            edges.setdefault(f, set()).add(t)
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
print("folders: " + "; ".join("%s -> %s" % (a, ", ".join(sorted(b)))
                              for a, b in sorted(fedges.items())), file=sys.stderr)
sys.exit(0 if all(results) else 1)
EOF
