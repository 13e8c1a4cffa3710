#!/usr/bin/env bash
# tests/bench/dlfilter.sh - what libstrace_dlf.so costs on top of perf.
#
#   perf script --itrace=b --dlfilter libdlf_null.so      (the floor: perf's
#                                                          own decoder)
#   perf script --itrace=b --dlfilter libstrace_dlf.so    (ours, a ring in
#                                                          /dev/shm)
#   the same with --dlarg all-branches
#
# Each is run BENCH_REPS times (default 5), interleaved; the least CPU time
# (task-clock, user + system: the machine is shared, so wall time is shown
# but not used) is kept. Prints RESULT lines for tests/bench/run.sh:
#   RESULT dlfilter_null    SAMPLES CPU_SECONDS SAMPLES_PER_S
#   RESULT dlfilter_strace  SAMPLES CPU_SECONDS SAMPLES_PER_S
#   RESULT dlfilter_strace_all ...
# then RATIO (ours / null CPU times; target <= 1.15), the same ratio from
# profiles (perf's own share, null / ours), and the filter's own cost per
# sample ((ours - null) / samples), and a markdown table on stderr.
#
# Env: O (build dir), DLF_BENCH_DATA (a perf.data to use; default: the
# project's benchmark trace, $O/bench/bench.data from `corpus.sh bench`,
# else a ptsynth trace of `gzip -c` of 160 KB of text made once under
# $O/dlfilter/ - either takes minutes under QEMU the first time).
set -eu
O=${O:-build}
REPS=${BENCH_REPS:-5} # a ratio of two noisy times: more runs than elsewhere
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
ours=$top/$O/lib/libstrace_dlf.so
null=$top/$O/bench/libdlf_null.so
for f in "$ours" "$null"; do
	[ -e "$f" ] || { echo "dlfilter bench: $f missing; run 'make bench'" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "dlfilter bench: perf not installed" >&2; exit 1; }

data=${DLF_BENCH_DATA:-}
if [ -z "$data" ] && [ -x tests/corpus/corpus.sh ]; then
	# the project's benchmark trace (make bench-trace: sort, ~31M insns)
	d=$(O=$O tests/corpus/corpus.sh bench 2>/dev/null) && [ -e "$d/trace.data" ] && data=$d/trace.data
fi
if [ -z "$data" ]; then
	mkdir -p "$O/dlfilter"
	data=$O/dlfilter/bench-gzip.data
	if [ ! -e "$data" ]; then
		in=$O/dlfilter/bench-input.txt
		awk 'BEGIN { s = 1; for (i = 0; i < 4000; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%d the quick brown fox %d jumps over the lazy dog %x\n", i, s % 100000, s } }' >"$in"
		echo "dlfilter bench: making $data (ptsynth of gzip -c, a few minutes)" >&2
		"$O/bin/ptsynth" -o "$data" --truth "${data%.data}.truth" -- /bin/gzip -c "$in" >/dev/null
	fi
fi

ring=/dev/shm/dlfbench_$$.srb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$ring"' EXIT

# cpu seconds and wall seconds of one run of "$@"
run() {
	rm -f "$ring"
	perf stat -x, -e task-clock -o "$tmp/stat" -- "$@" >/dev/null 2>"$tmp/err" ||
		{ echo "dlfilter bench: failed: $* ($(tail -n1 "$tmp/err"))" >&2; exit 1; }
	awk -F, '/task-clock/ { printf "%.6f\n", $1 / 1000 }' "$tmp/stat"
}

# one run of the named variant; keeps the least CPU time of each
once() { # name, command...
	local name=$1 c w t0 t1; shift
	t0=$(date +%s.%N)
	c=$(run "$@")
	t1=$(date +%s.%N)
	w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	if [ -z "${cpu[$name]:-}" ] || awk -v a="$c" -v b="${cpu[$name]}" 'BEGIN { exit !(a < b) }'; then
		cpu[$name]=$c wall[$name]=$w
	fi
}

declare -A cpu wall
P=(perf script -i "$data" --itrace=b)
# interleaved, so that a burst of load on the machine hits all alike
for ((i = 0; i < REPS; i++)); do
	once null "${P[@]}" --dlfilter "$null"
	once strace "${P[@]}" --dlfilter "$ours" --dlarg "ring=$ring"
	once strace_all "${P[@]}" --dlfilter "$ours" --dlarg "ring=$ring" --dlarg all-branches
done
# counts (not timed)
rm -f "$ring"
"${P[@]}" --dlfilter "$ours" --dlarg "ring=$ring" --dlarg stats >/dev/null 2>"$tmp/stats"
samples=$(grep -o '[0-9]* samples' "$tmp/stats" | cut -d' ' -f1)
events=$(grep -o '[0-9]* events' "$tmp/stats" | cut -d' ' -f1)
size=$(stat -c %s "$data")
# Profiles (perf record -e cpu-clock), REPS of each filter: the filter's
# own share of the CPU, and perf's own share (the perf binary's code: the
# same decode in both runs). The ratio of perf's shares, null / ours, is
# the ratio of the two runs' CPU times measured inside each run, so it
# does not move when the machine's speed does between runs (this VM's
# CPU time for one command varies by half from minute to minute).
share() { # filter, dso pattern -> mean % over REPS profiles
	local i t=0
	for ((i = 0; i < REPS; i++)); do
		rm -f "$ring"
		perf record -q -F 10000 -e cpu-clock -o "$tmp/prof.data" -- "${P[@]}" \
			--dlfilter "$1" --dlarg "ring=$ring" >/dev/null 2>&1
		perf report -q -i "$tmp/prof.data" --sort dso 2>/dev/null >"$tmp/dso"
		t=$(awk -v t="$t" -v pat="$2" '$2 ~ pat { gsub("%", "", $1); s += $1 } END { printf "%.4f", t + s }' "$tmp/dso")
	done
	awk -v t="$t" -v n="$REPS" 'BEGIN { printf "%.2f", t / n }'
}
perf_null=$(share "$null" '^perf$')
perf_ours=$(share "$ours" '^perf$')
own=$(awk '/libstrace_dlf.so|libcapstone/ { gsub("%", "", $1); s += $1 } END { printf "%.2f", s }' "$tmp/dso")
kern=$(awk '/kernel/ { gsub("%", "", $1); s += $1 } END { printf "%.2f", s }' "$tmp/dso")
pratio=$(awk -v a="$perf_null" -v b="$perf_ours" 'BEGIN { printf "%.3f", a / b }')

for n in null strace strace_all; do
	awk -v n="$n" -v s="$samples" -v c="${cpu[$n]}" \
		'BEGIN { printf "RESULT dlfilter_%s %d %.6f %.0f\n", n, s, c, s / c }'
done
awk -v a="${cpu[strace]}" -v b="${cpu[null]}" -v aa="${cpu[strace_all]}" -v s="$samples" 'BEGIN {
	printf "RATIO dlfilter_strace %.3f (CPU times; target <= 1.15)\n", a / b
	printf "RATIO dlfilter_strace_all %.3f\n", aa / b
	printf "COST dlfilter_strace %.1f ns per sample\n", (a - b) * 1e9 / s
	printf "COST dlfilter_strace_all %.1f ns per sample\n", (aa - b) * 1e9 / s
}'
echo "RATIO dlfilter_strace_profiles $pratio (perf's own share: null $perf_null%, ours $perf_ours%)"

# the profile's share of the filter's own code, times the CPU time
awk -v own="$own" -v k="$kern" -v c="${cpu[strace]}" -v s="$samples" 'BEGIN {
	printf "PROFILE dlfilter_strace own_code %.2f%% of CPU = %.1f ns per sample; kernel (ring pages and all) %.2f%%\n", own, own / 100 * c * 1e9 / s, k
}'
{
	echo
	echo "Benchmark trace: $data ($size bytes of perf.data, $samples branch samples; the dlfilter wrote $events events), best of $REPS runs, CPU time (task-clock):"
	echo
	echo "| command | CPU s | wall s | samples/s | vs null filter |"
	echo "|---|---:|---:|---:|---:|"
	for n in null strace strace_all; do
		case $n in
		null) what="perf script --itrace=b --dlfilter libdlf_null.so" ;;
		strace) what="perf script --itrace=b --dlfilter libstrace_dlf.so" ;;
		strace_all) what="... --dlarg all-branches" ;;
		esac
		awk -v w="$what" -v c="${cpu[$n]}" -v ww="${wall[$n]}" -v s="$samples" -v b="${cpu[null]}" \
			'BEGIN { printf "| `%s` | %.2f | %.2f | %.2fM | %.3fx |\n", w, c, ww, s / c / 1e6, c / b }'
	done
	awk -v own="$own" -v c="${cpu[strace]}" -v s="$samples" 'BEGIN {
		printf "\nProfile of one run (perf record -e cpu-clock): the filter'"'"'s own code (libstrace_dlf.so and Capstone) takes %.2f%% of the CPU, %.1f ns per sample.\n", own, own / 100 * c * 1e9 / s }'
	echo
	echo "The same ratio measured inside each run, $REPS profiles of each: perf's own code (the perf binary: the same decode in both) takes $perf_null% of the CPU with the null filter and $perf_ours% with ours, so ours takes **${pratio}x** the CPU time of the null filter's run. Unlike the table's ratio of two run times, this does not move with the machine's speed between runs."

} >&2
