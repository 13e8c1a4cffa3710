#!/usr/bin/env bash
# tests/stack/e2e-stack-vs-truth.sh - strace_stack's call stack at every
# call of every corpus program with a stack truth, against the true one
# (tests/stack/stacktruth.py: the frames the stack pointer says are live,
# from QEMU's register dumps). A call's stack is exact when every function
# is the same, in order (tests/stack/stackcmp.c says how both are named).
# The target is every call exact (there are no gaps in these traces).
# Env: O (build dir).
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
cap=$O/bin/ptrace-capture
cmp=$O/tests/stackcmp
for b in "$cap" "$cmp"; do
	[ -x "$b" ] || { echo "FAIL: stack-vs-truth/build ($b missing: make tests)"; exit 1; }
done
progs=$(O=$O tests/corpus/corpus.sh stack-list)
total=0 exact=0
for p in $progs; do
	data=$O/corpus/$p-stack.data truth=$O/corpus/$p-stack.truth
	if [ ! -e "$data" ]; then
		[ "$p" = ocaml ] && ! command -v ocamlopt >/dev/null &&
			{ echo "SKIP: stack-vs-truth/$p (no ocamlopt)"; continue; }
		echo "FAIL: stack-vs-truth/$p ($data missing: make tests)"
		fails=$((fails + 1))
		continue
	fi
	ring=$work/$p.srb
	if ! "$cap" -q -i "$data" -o "$ring" 2>"$work/err"; then
		echo "FAIL: stack-vs-truth/$p (ptrace-capture: $(head -2 "$work/err"))"
		fails=$((fails + 1))
		continue
	fi
	python3 tests/stack/stacktruth.py "$truth" >"$work/$p.stacks"
	"$cmp" "$ring" "$work/$p.stacks" 3 >"$work/$p.out"
	rc=$?
	line=$(tail -1 "$work/$p.out")
	n=$(echo "$line" | awk '{print $4}') e=$(echo "$line" | awk '{print $2}')
	total=$((total + ${n:-0})) exact=$((exact + ${e:-0}))
	if [ $rc -eq 0 ]; then
		echo "PASS: stack-vs-truth/$p ($line)"
	else
		echo "FAIL: stack-vs-truth/$p ($line)"
		sed 's/^/  /' "$work/$p.out" | head -12
		fails=$((fails + 1))
	fi
done
echo "stack-vs-truth: exact $exact of $total calls" >&2
[ $fails -eq 0 ]
