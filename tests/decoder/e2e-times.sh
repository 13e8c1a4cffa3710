#!/usr/bin/env bash
# tests/decoder/e2e-times.sh - times between timing packets, against the
# clock of the program's run.
#
# ptsynth --truth-times writes the time every branch ran (its clock: one
# cycle per instruction QEMU executed). For each trace, both producers
# (ptrace-capture -i, and the dlfilter under the real perf) decode it
# twice: as they are (times spread between timing packets by instruction
# count) and with their exact-times option (every event has the time of
# the last timing packet, as perf prints). tests/decoder/timetruth.py
# checks that the spread times never go backwards, never leave the
# interval between two timing packets, and are much closer to the run's
# clock than the exact ones (the median branch at a quarter of the
# distance without CYC, half with CYC, whose packets already time most
# branches; the mean closer too).
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
lib=$O/lib/libstrace_dlf.so
fails=0
say() { echo "$@"; case $1 in FAIL:) fails=$((fails + 1)) ;; esac; }

if ! command -v qemu-x86_64 >/dev/null || ! command -v python3 >/dev/null; then
	say "SKIP: times/all (needs qemu-x86_64 and python3)"
	exit 0
fi
. "$top/tests/e2e/perfdl.inc"
work=$(mktemp -d /tmp/times.XXXXXX)
trap 'rm -rf "$work"' EXIT

# NAME VARIANT GAIN
check() {
	local name=$1 variant=$2 gain=$3 dir w=$work/$1-$2 p
	if ! dir=$(tests/corpus/corpus.sh trace "$name" "$variant" 2>"$work/err"); then
		say "FAIL: times/$name-$variant/trace (ptsynth: $(tail -n1 "$work/err"))"
		return
	fi
	mkdir -p "$w"
	"$cap" -q --names perf -i "$dir/trace.data" -o "$w/c.srb" &&
	"$cap" -q --names perf --exact-times -i "$dir/trace.data" -o "$w/ce.srb" ||
		{ say "FAIL: times/$name-$variant/capture"; return; }
	if command -v perf >/dev/null; then
		perfdl script -i "$dir/trace.data" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$w/d.srb" >/dev/null 2>"$w/d.err" &&
		perfdl script -i "$dir/trace.data" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$w/de.srb" --dlarg exact-times >/dev/null 2>>"$w/d.err" ||
			{ say "FAIL: times/$name-$variant/perf (perf script --dlfilter: $(tail -n1 "$w/d.err"))"; return; }
	fi
	for p in c d; do
		[ -e "$w/$p.srb" ] || continue
		"$rd" -f jsonl "$w/$p.srb" >"$w/$p.jsonl" &&
		"$rd" -f jsonl "$w/${p}e.srb" >"$w/${p}e.jsonl" || { say "FAIL: times/$name-$variant/read-$p"; continue; }
		local who=capture
		[ $p = d ] && who=dlfilter
		if python3 tests/decoder/timetruth.py "$dir/trace.truth" "$w/$p.jsonl" \
			"$w/${p}e.jsonl" --gain="$gain" >"$w/out" 2>&1; then
			say "PASS: times/$name-$variant/$who ($(tr '\n' ' ' <"$w/out"))"
		else
			say "FAIL: times/$name-$variant/$who ($(tr '\n' ' ' <"$w/out"))"
		fi
	done
}

# the issue's case: qsort with a slow comparator (short calls), threads
check pgqsort times 4
check threads times 4
check pgqsort cyctimes 2
exit $((fails > 0))
