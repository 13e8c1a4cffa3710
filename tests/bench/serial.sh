#!/usr/bin/env bash
# tests/bench/serial.sh - what a parallel decode (`ptrace-capture -j N`)
# waits for, measured on a machine of any size: the instructions each
# thread runs (callgrind, one file per thread), and the speed-ups they
# predict for 4, 8 and 16 cores. Prints a markdown section for
# docs/performance.md (`make bench` includes it).
#
#   tests/bench/serial.sh TRACE.data
#
# The model: the calling thread sets up (S: reading the perf.data, the
# image, cutting the trace at its PSBs), then merges the segments in
# order (M: handing each event to the sink, which writes the ring), while
# N workers decode them (W in all). The merge runs beside the workers, so
#   T(N) = S + max(M, W / N),  speed-up(N) = T(1) / T(N),
# with T(1) the whole sequential decode; instructions stand in for time
# (the same IPC in every thread: what memory bandwidth and caches take
# from more threads is not in it). W is measured with 4 workers (from 4
# on they settle their events for the merge: decoder/parallel.c).
set -eu
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: $0 TRACE.data" >&2; exit 2; }
O=${O:-build}
data=$1
cap=$O/bin/ptrace-capture
[ -x "$cap" ] || { echo "serial: $cap is missing: run make" >&2; exit 2; }
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
	echo "(valgrind is not installed: the parallel decode's serial fraction was not measured)"
	exit 0
fi
tmp=$(mktemp -d)
ring=/dev/shm/serial-bench-$$.srb
trap 'rm -rf "$tmp" "$ring"' EXIT
export XDG_CACHE_HOME=$tmp/cache

# run J: callgrind's files of ptrace-capture -j J, one per thread
run() {
	rm -f "$ring"
	"$cap" -q -i "$data" -o "$ring" # (the block cache warm, as for the rest)
	rm -f "$ring"
	valgrind -q --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$tmp/cg.$1" "$cap" -q -j "$1" -i "$data" -o "$ring"
	rm -f "$ring"
}
total() { sed -n 's/^summary: //p' "$1"; }
# inclusive instructions of FUNCTION in FILE
incl() {
	callgrind_annotate --inclusive=yes "$2" 2>/dev/null |
		awk -v f="$1" '$0 ~ ":" f "( |$)" && !done { gsub(",", "", $1); print $1; done = 1 }'
}
run 1
run 4
t1=$(total "$tmp/cg.1-01")
main=$(total "$tmp/cg.4-01")
m=$(incl strace_dec_seg_merge "$tmp/cg.4-01")
w=0
for f in "$tmp"/cg.4-0[2-9] "$tmp"/cg.4-[1-9]*; do
	[ -f "$f" ] && w=$((w + $(total "$f")))
done
s=$((main - ${m:-0}))
# peak memory at -j 16, beyond the input (which is mapped and read)
rm -f "$ring"
/usr/bin/time -f '%M' -o "$tmp/rss16" "$cap" -q -j 16 -i "$data" -o "$ring"
rm -f "$ring"
/usr/bin/time -f '%M' -o "$tmp/rss1" "$cap" -q -j 1 -i "$data" -o "$ring"
in_kb=$(( $(stat -L -c %s "$data") / 1024 ))

awk -v t1="$t1" -v s="$s" -v m="$m" -v w="$w" -v main="$main" \
	-v r16="$(tail -1 "$tmp/rss16")" -v r1="$(tail -1 "$tmp/rss1")" -v in_kb="$in_kb" '
function M(x) { return sprintf("%.0fM", x / 1e6) }
BEGIN {
	printf "| | instructions | of one thread'"'"'s decode |\n|---|---:|---:|\n"
	printf "| `-j 1`: the whole decode, T(1) | %s | 100%% |\n", M(t1), 100
	printf "| `-j 4`: the calling thread before the merge, S (perf.data, image, the cut at PSBs) | %s | %.1f%% |\n", M(s), 100 * s / t1
	printf "| `-j 4`: the merge, M (the sink: ring, names; spreading times) | %s | %.1f%% |\n", M(m), 100 * m / t1
	printf "| `-j 4`: the 4 workers together, W (decode, settling for the merge) | %s | %.1f%% |\n", M(w), 100 * w / t1
	printf "\nSerial fraction (S + M over T(1)): **%.1f%%**. Predicted speed-up, T(1) / (S + max(M, W / N)):", 100 * (s + m) / t1
	for (n = 4; n <= 16; n *= 2) {
		tn = s + (m > w / n ? m : w / n)
		printf "%s **%.1fx** on %d cores (%s-bound)", (n > 4 ? "," : ""), t1 / tn, n, (m > w / n ? "merge" : "worker")
	}
	printf ".\n\nPeak resident set at `-j 16`: %d MiB, %d MiB beyond the %d MiB input (`-j 1`: %d MiB; target: under 64 MiB beyond the input).\n", r16 / 1024, (r16 - in_kb) / 1024, in_kb / 1024, r1 / 1024
}'
