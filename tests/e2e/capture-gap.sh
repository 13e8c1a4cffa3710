#!/usr/bin/env bash
# tests/e2e/capture-gap.sh - resynchronising after a gap in the code
# (issue 33, part 2): corpus recordings decoded with libc's mapping left
# out (its path in the MMAP2 record changed to one that is not there), so
# every call into libc is a gap the walk cannot cross. The walk must go
# on at the next IP packet that leads back into known code (trace_begin,
# reason sync) and never make a branch up. Judged by:
#  - ptsynth's ground truth (QEMU): every stretch of branches after a
#    trace_begin is exactly a piece of the truth, in order (cmpgap.py);
#  - perf 6.1's decode of the same file: all its branches are ours, in
#    order;
#  - the sequential decode: -j 2 in 4 KiB pieces gives the same events
#    as -j 1, thread by thread.
T=capture-gap
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
B=$O/bin
# no build-id cache where libc could be found by its build-id
mkdir -p "$work/home/.debug"
export HOME=$work/home PERF_BUILDID_DIR=$work/home/.debug

for p in pgqsort plt threads exceptions; do
	data=$O/corpus/$p.data truth=$O/corpus/$p.truth
	[ -e "$data" ] && [ -e "$truth" ] || { fail "$p" "no $data: run make tests"; continue; }
	python3 - "$data" "$work/$p.data" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
n = b.count(b"/libc.so.6")
open(sys.argv[2], "wb").write(b.replace(b"/libc.so.6", b"/libX.so.6"))
sys.exit(0 if n else 1)
PY
	[ $? -eq 0 ] || { fail "$p/hide-libc" "no libc.so.6 in $data"; continue; }
	for j in 1 2; do
		"$B/ptrace-capture" -q --all-branches -j $j --piece-bytes 4096 \
			-i "$work/$p.data" \
			-o "$work/$p.$j.srb" 2>"$work/$p.err"
		rc=$?
		"$B/ptrace-read" -f jsonl "$work/$p.$j.srb" >"$work/$p.$j.jsonl"
	done
	[ $rc -eq 3 ] && grep -q "libX.so.6" "$work/$p.err" &&
		pass "$p/partial-and-says-which-file (exit 3)" ||
		fail "$p/partial-and-says-which-file" "exit $rc: $(head -c 400 "$work/$p.err")"
	# thread by thread (threads decoded side by side reach the ring in
	# another order, and the names defined on first use with them)
	for j in 1 2; do
		python3 -c '
import json, sys
d = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] not in ("symbol", "dso", "process", "thread"):
        e.pop("seq", None)
        d.setdefault(e.get("tid"), []).append(json.dumps(e, sort_keys=True))
for t in sorted(d, key=str):
    print("\n".join(d[t]))' "$work/$p.$j.jsonl" >"$work/$p.$j.flow"
	done
	cmp -s "$work/$p.1.flow" "$work/$p.2.flow" &&
		pass "$p/parallel-equals-sequential ($(wc -l <"$work/$p.1.flow") events)" ||
		fail "$p/parallel-equals-sequential" "$(diff "$work/$p.1.flow" "$work/$p.2.flow" | head -4)"
	if command -v perf >/dev/null; then
		perf --buildid-dir "$PERF_BUILDID_DIR" script -i "$work/$p.data" \
			--itrace=b -F tid,ip,addr 2>/dev/null |
			grep -v '^ *[0-9]* *0 =>' >"$work/$p.perf"
		perfarg=$work/$p.perf
	else
		perfarg=
	fi
	out=$(python3 tests/e2e/cmpgap.py "$truth" "$work/$p.1.jsonl" $perfarg)
	rc=$?
	synced=$(echo "$out" | sed -n 's/.*after sync \([0-9]*\) .*/\1/p')
	if [ $rc -eq 0 ] && [ "${synced:-0}" -gt 0 ]; then
		pass "$p/resumed-at-ip-packets-as-the-truth-says ($out)"
	else
		fail "$p/resumed-at-ip-packets-as-the-truth-says" "$out"
	fi
done
finish
