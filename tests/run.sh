#!/usr/bin/env bash
# tests/run.sh - run test programs and scripts, count their PASS/FAIL/SKIP
# lines, and end with "N passed, N failed, N skipped".
#
# Usage: O=build tests/run.sh PROGRAM... ; also runs every tests/e2e/*.sh
# (but tests/e2e/lib.sh, which they source) and tests/*/e2e-*.sh, or those
# in $SCRIPTS when it is set. A program that exits non-zero without
# printing a FAIL line (a crash, a sanitizer report) counts as one failure.
#
# JOBS (default: the processors there are) tests run at once, each with
# its output kept apart and shown whole when it ends. Most tests wait on
# one process at a time (perf, python, a decode), so on CI's two cores two
# at once take some 40% off the run. The tests in SERIAL run alone, after
# the others: they time themselves, or they check that a reader keeps up
# with a writer, which a busy machine would make them fail for nothing.
set -u
O=${O:-build}
export O
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
SERIAL=" test_ring test_ring_stress test_live_session test_live_rings
	follow-pipelines.sh ptrace-read-follow.sh ptrace-read-errors.sh
	e2e-live-replay.sh e2e-trigger.sh e2e-capture-threads.sh ring-full-fs.sh "
# The longest scripts start first, so that the last minutes are not one
# long test alone (CI's figures: docs/testing.md).
FIRST=" capture-corpus.sh e2e-damage-diff.sh dlfilter-compare.sh
	e2e-plugins.sh e2e-svg.sh e2e-fxt.sh sym-names.sh e2e-ptsynth.sh "
pass=0 fail=0 skip=0
skipped=() failed=()
log=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$log"' EXIT
# the block cache (docs/cache.md) of this run: not the user's, and the
# same for every test (most decode warm, as a user's second run does)
export XDG_CACHE_HOME=$log/cache

names=() paths=() kinds=()
add() { names+=("$(basename "$2")"); kinds+=("$1"); paths+=("$2"); }
for prog in "$@"; do
	add program "$prog"
done
# SCRIPTS: the scripts to run instead of all of them ("" for none)
for script in ${SCRIPTS-$(ls tests/e2e/*.sh tests/*/e2e-*.sh 2>/dev/null | grep -vx tests/e2e/lib.sh | sort)}; do
	add script "$script"
done

# start I: test I in the background; $log/I.done (its exit code and
# times) appears when it has ended
start() {
	local i=$1
	(
		t0=$(date +%s.%N)
		if [ "${kinds[i]}" = script ]; then
			bash "${paths[i]}"
		else
			"${paths[i]}"
		fi >"$log/$i.out" 2>"$log/$i.err"; rc=$?
		echo "$rc $t0 $(date +%s.%N)" >"$log/$i.tmp"
		mv "$log/$i.tmp" "$log/$i.done"
	) &
}

# report I: count test I's lines and show them (whole when it failed)
report() {
	local i=$1 name=${names[$1]} out="$log/$1.out" rc t0 t1 p f s
	read -r rc t0 t1 <"$log/$i.done"
	p=$(grep -c '^PASS: ' "$out"); f=$(grep -c '^FAIL: ' "$out"); s=$(grep -c '^SKIP: ' "$out")
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	while IFS= read -r line; do skipped+=("${line#SKIP: }"); done < <(grep '^SKIP: ' "$out")
	while IFS= read -r line; do failed+=("${line#FAIL: }"); done < <(grep '^FAIL: ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail=$((fail + 1)); failed+=("$name (exit $rc, no FAIL line)")
	fi
	if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
		cat "$out"; sed 's/^/  | /' "$log/$i.err" | tail -n 60
	else
		grep -E '^(PASS|SKIP): ' "$out"
	fi
	awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "  (%s: %.1fs)\n", n, b - a }'
}

# The order they start in (and are reported in): FIRST, the rest, SERIAL.
order=() serial=()
for i in "${!names[@]}"; do
	case $FIRST in *" ${names[i]} "*) order+=("$i") ;; esac
done
for i in "${!names[@]}"; do
	case "$SERIAL $FIRST" in
	*" ${names[i]} "*) case $SERIAL in *" ${names[i]} "*) serial+=("$i") ;; esac ;;
	*) order+=("$i") ;;
	esac
done
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1

shown=0 started=0 all=("${order[@]+"${order[@]}"}" "${serial[@]+"${serial[@]}"}")
# show: report, in order, the tests that have ended
show() {
	while [ "$shown" -lt "$started" ] && [ -e "$log/${all[shown]}.done" ]; do
		report "${all[shown]}"
		shown=$((shown + 1))
	done
}
# until_below N: wait until fewer than N started tests are still running
until_below() {
	while [ $((started - $(ls "$log" | grep -c '\.done$'))) -ge "$1" ]; do
		wait -n 2>/dev/null || sleep 0.1
		show
	done
	show
}
for i in "${order[@]+"${order[@]}"}"; do
	until_below "$JOBS"
	start "$i"; started=$((started + 1))
done
for i in "${serial[@]+"${serial[@]}"}"; do
	until_below 1
	start "$i"; started=$((started + 1))
done
until_below 1

for s in "${skipped[@]+"${skipped[@]}"}"; do echo "skipped: $s"; done
for f in "${failed[@]+"${failed[@]}"}"; do echo "failed: $f"; done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
