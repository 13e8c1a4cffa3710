#!/usr/bin/env bash
# tests/stack/e2e-stack-fast.sh - strace_stack's fast path against the
# same code without it (tests/stack/stackfast.c): on random streams made
# like programs, and on the rings of every corpus trace (the programs'
# and their stack variants'), the same callbacks frame for frame, the
# same statistics. Env: O (build dir).
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cap=$O/bin/ptrace-capture
sf=$O/tests/stackfast
for b in "$cap" "$sf"; do
	[ -x "$b" ] || { echo "FAIL: stack-fast/build ($b missing: make tests)"; exit 1; }
done
"$sf" random_streams
rings=
names=$(O=$O tests/corpus/corpus.sh list)
for p in $(O=$O tests/corpus/corpus.sh stack-list); do
	names="$names $p-stack"
done
for p in $names; do
	data=$O/corpus/$p.data
	[ -e "$data" ] || continue
	if ! "$cap" -q -i "$data" -o "$work/$p.srb" 2>"$work/err"; then
		echo "FAIL: stack-fast/capture-$p ($(head -2 "$work/err"))"
		continue
	fi
	rings="$rings $work/$p.srb"
done
if [ -z "$rings" ]; then
	echo "FAIL: stack-fast/rings (no corpus trace in $O/corpus: make tests)"
	exit 1
fi
STACK_RINGS=$rings "$sf" rings
