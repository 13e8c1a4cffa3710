#!/usr/bin/env bash
# tests/view/e2e-chrome.sh - ptrace-read -f chrome and -f folded on corpus
# traces (threads, gaps of an overflow, C++ and OCaml exceptions, signals),
# judged by tools we did not write the writers with:
#   - chromeslices.py (tests/view, from the Trace Event Format document)
#     reads every slice; they nest per thread (no overlap, no negative
#     duration) and are, thread by thread, the frames of our -f tree
#     (names counted);
#   - gaps (overflow, error, lost, and the trace resumed after one) are
#     instant events;
#   - a reader interrupted while following a ring (SIGINT) leaves valid
#     JSON (python's strict parser);
#   - ptrace-capture --view writes what ptrace-read writes, in one step;
#   - a real browser (speedscope in headless Chromium, browser-check.sh)
#     loads our Chrome JSON and our folded stacks and shows the program's
#     functions; the screenshots stay in $O/tests/view/ (the one of
#     docs/viewing.md is made here: VIEW_DOC_SHOT=docs/viewing-speedscope.png
#     to refresh it).
T=chrome
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
shots=$O/tests/view
mkdir -p "$shots"

# slices of a Chrome JSON file against our tree, per thread
cat >"$work/cmp.py" <<'EOF'
import re, subprocess, sys
from collections import Counter, defaultdict
json_file, tree_file = sys.argv[1], sys.argv[2]
out = subprocess.run([sys.executable, "tests/view/chromeslices.py", json_file],
                     capture_output=True, text=True)
if out.returncode != 0:
    print("chromeslices.py: " + (out.stdout + out.stderr).strip()[:400])
    sys.exit(1)
slices = defaultdict(list)
for line in out.stdout.splitlines():
    pid, tid, start, end, depth, name = line.split(" ", 5)
    slices[int(tid)].append((int(start), int(depth), -int(end), name))
tree = defaultdict(list)
pat = re.compile(r"^ *(?:[0-9.]+ [a-z]+)? *\[ *(\d+)\] \| ( *)(.*?)(\(\)[ ;{]*.*)?$")
for line in open(tree_file):
    if line.startswith("#"):
        continue
    m = pat.match(line.rstrip("\n"))
    if not m or m.group(3).startswith("}"):
        continue
    tree[int(m.group(1))].append((len(m.group(2)) // 2, m.group(3)))
# Frames that begin and end at one time nest in no single way (their
# order is not in the times): the slices are compared with the frames as
# a count of names per thread; chromeslices.py checked the nesting.
ok, n = True, 0
for tid in sorted(set(slices) | set(tree)):
    got = Counter(name for _, _, _, name in slices[tid])
    want = Counter(name for _, name in tree[tid])
    n += sum(got.values())
    if got != want:
        print("thread %d: %d slices, %d tree frames; only in the slices: %s;"
              " only in the tree: %s" % (
                  tid, sum(got.values()), sum(want.values()),
                  list((got - want).items())[:4],
                  list((want - got).items())[:4]))
        ok = False
print("%d slices in %d threads, each a frame of the tree" % (n, len(slices)))
sys.exit(0 if ok else 1)
EOF

# NAME DATA: the JSON and its checks; prints the ring path in $work
check() {
	local name=$1 data=$2 r=$work/$1.srb
	if ! "$cap" -q -i "$data" -o "$r" 2>"$work/err"; then
		fail "$name/capture" "$(head -2 "$work/err")"
		return 1
	fi
	if ! "$rd" -f chrome -o "$work/$name.json" "$r" 2>"$work/err" ||
		! "$rd" -f tree -o "$work/$name.tree" "$r" 2>>"$work/err"; then
		fail "$name/read" "$(head -2 "$work/err")"
		return 1
	fi
	if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/$name.json" 2>"$work/err"; then
		:
	else
		fail "$name/json" "$(tail -1 "$work/err")"
		return 1
	fi
	if python3 "$work/cmp.py" "$work/$name.json" "$work/$name.tree" >"$work/out" 2>&1; then
		pass "$name/slices-are-the-tree ($(tail -1 "$work/out"))"
	else
		fail "$name/slices-are-the-tree" "$(head -5 "$work/out")"
	fi
	# the gaps: one instant per overflow, error and lost event, and per
	# trace resumed after one
	local gaps inst
	gaps=$("$rd" -f jsonl --types 'overflow,error,lost,trace_begin' "$r" |
		grep -c '"type":"\(overflow\|error\|lost\)"\|"reason":"\(sync\|overflow\|error\|lost\)"')
	inst=$(grep -c '"ph":"i"' "$work/$name.json")
	if [ "$gaps" -eq "$inst" ]; then
		pass "$name/gaps-are-instants ($gaps)"
	else
		fail "$name/gaps-are-instants" "$gaps gap events, $inst instant events"
	fi
}

if ! command -v python3 >/dev/null; then
	echo "SKIP: $T/all (python3 is needed)"
	exit 0
fi
for spec in threads:default threads:overflow exceptions:default ocaml:default signals:default; do
	p=${spec%%:*} v=${spec#*:}
	[ "$p" = ocaml ] && ! command -v ocamlopt >/dev/null &&
		{ echo "SKIP: $T/ocaml (no ocamlopt)"; continue; }
	if ! dir=$(tests/corpus/corpus.sh trace "$p" "$v" 2>"$work/err"); then
		fail "$p-$v/trace" "$(tail -1 "$work/err")"
		continue
	fi
	check "$p-$v" "$dir/trace.data"
done
grep -q '"ph":"i"' "$work/threads-overflow.json" 2>/dev/null ||
	fail "threads-overflow/has-gaps" "the overflow trace gave no instant event"

# --- an interrupted --follow leaves valid JSON -----------------------------
data=$(tests/corpus/corpus.sh trace threads default)/trace.data
"$cap" -q --mode lossless --capacity 4096 --wait-readers 1 -i "$data" \
	-o "$work/live.srb" 2>"$work/live.err" &
capid=$!
"$rd" -f chrome --follow --timeout 10000 -o "$work/live.json" "$work/live.srb" 2>"$work/rd.err" &
rdid=$!
# stop the reader while the capture waits for it (the ring is small),
# once it wrote a complete event: the file begins with "[" before any
# (two tests at a time, the reader could be stopped in between)
for _ in $(seq 200); do
	grep -q '"ph":"X"' "$work/live.json" 2>/dev/null && break
	sleep 0.05
done
kill -INT $rdid 2>/dev/null
wait $rdid
rc=$?
kill $capid 2>/dev/null
wait $capid 2>/dev/null
if python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert any(e.get("ph") == "X" for e in d)' \
	"$work/live.json" 2>"$work/err"; then
	pass "interrupted-follow (exit $rc, $(grep -c '"ph":"X"' "$work/live.json") complete events, valid JSON)"
else
	fail "interrupted-follow" "exit $rc: $(tail -1 "$work/err")" "$(tail -c 200 "$work/live.json")"
fi

# --- ptrace-capture --view: decode and write a viewable file in one step ---
data=$(tests/corpus/corpus.sh trace threads default)/trace.data
# (the ring goes where $STRACE_RING says when -o does not)
export STRACE_RING=$work/default.srb
if "$cap" -q -i "$data" --view "$work/v.json" 2>"$work/err" &&
	"$cap" -q -i "$data" --view "$work/v.fxt" 2>>"$work/err" &&
	"$cap" -q -i "$data" --view "$work/v.d/" 2>>"$work/err" &&
	cmp -s "$work/v.json" "$work/threads-default.json" &&
	"$rd" -f fxt "$work/threads-default.srb" | cmp -s - "$work/v.fxt" &&
	[ -s "$work/v.d/info" ] && [ ! -e "$STRACE_RING" ]; then
	pass "capture-view (.json and .fxt as ptrace-read writes them, a uftrace directory, no ring left)"
else
	fail "capture-view" "$(head -3 "$work/err")"
fi
if "$cap" -q -i "$data" -o "$work/kept.srb" --view "$work/v2.json" 2>"$work/err" &&
	[ -s "$work/kept.srb" ] && cmp -s "$work/v2.json" "$work/v.json"; then
	pass "capture-view-keeps-a-named-ring"
else
	fail "capture-view-keeps-a-named-ring" "$(head -3 "$work/err")"
fi
"$cap" -q -i "$data" --view "$work/v.txt" >/dev/null 2>"$work/err"
rc=$?
if [ $rc -eq 2 ] && grep -q 'name a .json file' "$work/err" &&
	grep -q 'a .svg file (a flame graph), a .folded file' "$work/err"; then
	pass "capture-view-bad-name (exit 2: $(head -1 "$work/err"))"
else
	fail "capture-view-bad-name" "exit $rc: $(head -2 "$work/err")"
fi
unset STRACE_RING

# --- clean names: no args (speedscope adds them to the name); the kind,
# the DSO and the address in the category, which Perfetto shows ---------
if python3 - "$work/threads-default.json" >"$work/out" 2>&1 <<'EOF'
import json, re, sys
ev = [e for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"]
kinds = {"call", "entry", "root", "seed", "syscall", "signal"}
bad = [e for e in ev if "args" in e or "{" in e["name"]
       or e["cat"].split(",")[0] not in kinds
       or not re.fullmatch(r"0x[0-9a-f]+", e["cat"].split(",")[-1])]
dso = sum(1 for e in ev if len(e["cat"].split(",")) >= 3 and e["cat"].split(",")[-2].startswith("/"))
print("%d slices, %d with their DSO's path in the category; bad: %s" % (len(ev), dso, bad[:2]))
sys.exit(1 if bad or not ev or dso < len(ev) // 2 else 0)
EOF
then
	pass "clean-names ($(cat "$work/out"))"
else
	fail "clean-names" "$(head -c 600 "$work/out")"
fi

# --- a warning before an output its viewers cannot load --------------------
"$rd" -f chrome -o "$work/big.json" "$work/threads-default.srb" 2>"$work/err"
rc1=$? quiet=$(wc -c <"$work/err")
STRACE_VIEW_WARN_MB=0 "$rd" -f chrome -o "$work/big.json" "$work/threads-default.srb" 2>"$work/err"
rc2=$?
if [ $rc1 -eq 0 ] && [ "$quiet" -eq 0 ] && [ $rc2 -eq 0 ] && [ -s "$work/big.json" ] &&
	grep -q "threads-default.srb: the Chrome JSON will be about [0-9]* MB ([0-9]* frames), more than its viewers load.*cut it with --time.*--min-time, --tid, --sym or --depth, or write -f fxt" "$work/err"; then
	pass "size-warning ($(head -c 200 "$work/err")...)"
else
	fail "size-warning" "exit $rc1 $rc2: $(cat "$work/err")"
fi
STRACE_VIEW_WARN_MB=0 "$rd" -f chrome --tid 1 -o "$work/big.json" "$work/threads-default.srb" 2>"$work/err"
if grep -q "will be at most about" "$work/err"; then
	pass "size-warning-filtered-says-at-most"
else
	fail "size-warning-filtered-says-at-most" "$(cat "$work/err")"
fi

# --- a real browser ---------------------------------------------------------
"$rd" -f folded -o "$work/threads.folded" "$work/threads-default.srb" 2>/dev/null
for f in threads-default.json:chrome threads.folded:folded; do
	file=${f%%:*} kind=${f#*:}
	tests/view/browser-check.sh "$work/$file" "$shots/chrome-$kind.png" main work start_thread \
		>"$work/br.out" 2>&1
	case $? in
	0) pass "browser-$kind ($(head -c 300 "$work/br.out" | tr '\n' ' '))" ;;
	77) echo "SKIP: $T/browser-$kind ($(tail -1 "$work/br.out"))" ;;
	*) fail "browser-$kind" "$(head -c 600 "$work/br.out")" ;;
	esac
done
if [ -n "${VIEW_DOC_SHOT:-}" ] && [ -s "$shots/chrome-chrome.png" ]; then
	cp "$shots/chrome-chrome.png" "$VIEW_DOC_SHOT"
fi
finish
