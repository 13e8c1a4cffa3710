#!/usr/bin/env bash
# tests/ptsynth/e2e-async-branch.sh - faults right at the target of a
# jump, a call, a return and a taken jcc (tests/ptsynth/async_at_branch.c):
# the truth has each branch followed by the async exit at its target, and
# libipt's block decoder (ptblk) and perf report the same branches as the
# truth. ptblk used to drop such a branch: no block starts at a target
# where nothing ran (found with the SIGPROF interrupts of a -pg program).
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
pass() { echo "PASS: async-branch/$1"; }
fail() { echo "FAIL: async-branch/$1"; fails=$((fails + 1)); }

for need in qemu-x86_64 perf gcc; do
	command -v $need >/dev/null || { echo "SKIP: async-branch/all (no $need)"; exit 0; }
done
if ! gcc -O1 -o "$work/aab" tests/ptsynth/async_at_branch.c 2>"$work/err"; then
	fail "build ($(head -c 300 "$work/err"))"
	exit 1
fi
if ! "$O/bin/ptsynth" -o "$work/t.data" --truth "$work/t.truth" -- "$work/aab" \
	>/dev/null 2>"$work/err"; then
	fail "ptsynth ($(head -c 300 "$work/err"))"
	exit 1
fi
# a branch line, then "TARGET 0 async"
pat=$(awk '!/^#/ { if ($3 == "async" && $1 == to) k[kind]++; to = $2; kind = $3 }
	END { printf "jump %d call %d return %d cond %d", k["jump"], k["call"], k["return"], k["cond"] }' "$work/t.truth")
if [ "$pat" = "jump 1 call 1 return 1 cond 1" ]; then
	pass "truth ($pat: a branch, then a fault at its target)"
else
	fail "truth (want one of each, got $pat)"
fi
tests/ptsynth/norm.sh truth "$work/t.truth" >"$work/nt"
"$O/tests/ptblk" "$work/t.sideband" >"$work/b.raw" 2>"$work/err"
tests/ptsynth/norm.sh blk "$work/b.raw" >"$work/nb"
tests/ptsynth/norm.sh perf "$work/t.data" >"$work/np"
for d in blk:nb perf:np; do
	if cmp -s "$work/nt" "$work/${d#*:}"; then
		pass "${d%%:*}-branches ($(grep -vc '^#' "$work/nt") taken, the truth's)"
	else
		fail "${d%%:*}-branches (differs from the truth: $(diff "$work/nt" "$work/${d#*:}" | head -4 | tr '\n' ' '))"
	fi
done
[ "$fails" -eq 0 ]
