#!/usr/bin/env bash
# tests/run.sh - run test programs and scripts, count their PASS/FAIL/SKIP
# lines, and end with "N passed, N failed, N skipped".
#
# Usage: O=build tests/run.sh PROGRAM... ; also runs every tests/e2e/*.sh
# (but tests/e2e/lib.sh, which they source) and tests/*/e2e-*.sh, or those
# in $SCRIPTS when it is set. A program that exits non-zero without
# printing a FAIL line (a crash, a sanitizer report) counts as one failure.
set -u
O=${O:-build}
export O
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
pass=0 fail=0 skip=0
skipped=() failed=()
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# the block cache (docs/cache.md) of this run: not the user's, and the
# same for every test (most decode warm, as a user's second run does)
export XDG_CACHE_HOME=$log/cache

run_one() {
	local name=$1; shift
	local out="$log/out" rc
	local t0=$(date +%s.%N)
	"$@" >"$out" 2>"$log/err"; rc=$?
	local t1=$(date +%s.%N)
	local p f s
	p=$(grep -c '^PASS: ' "$out"); f=$(grep -c '^FAIL: ' "$out"); s=$(grep -c '^SKIP: ' "$out")
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	while IFS= read -r line; do skipped+=("${line#SKIP: }"); done < <(grep '^SKIP: ' "$out")
	while IFS= read -r line; do failed+=("${line#FAIL: }"); done < <(grep '^FAIL: ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail=$((fail + 1)); failed+=("$name (exit $rc, no FAIL line)")
	fi
	if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
		cat "$out"; sed 's/^/  | /' "$log/err" | tail -n 60
	else
		grep -E '^(PASS|SKIP): ' "$out"
	fi
	awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "  (%s: %.1fs)\n", n, b - a }'
}

for prog in "$@"; do
	run_one "$(basename "$prog")" "$prog"
done
# SCRIPTS: the scripts to run instead of all of them ("" for none)
for script in ${SCRIPTS-$(ls tests/e2e/*.sh tests/*/e2e-*.sh 2>/dev/null | grep -vx tests/e2e/lib.sh | sort)}; do
	run_one "$(basename "$script")" bash "$script"
done

for s in "${skipped[@]+"${skipped[@]}"}"; do echo "skipped: $s"; done
for f in "${failed[@]+"${failed[@]}"}"; do echo "failed: $f"; done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
