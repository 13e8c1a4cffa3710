#!/usr/bin/env bash
# tests/bench/stacks.sh - call stacks and the views (issues 14 and 15) on
# the benchmark trace ($O/bench/bench.data, `make bench-trace`), side by
# side in one run:
#   bench_stack RING MODE     strace_stack alone, and each view of
#                             ptrace-read -f writing to /dev/null (the
#                             ring's events read once into memory and fed
#                             again and again: CPU time of the stacks and
#                             the view; best of BENCH_REPS)
#   ptrace-capture -i + ptrace-read -f tree   the whole pipeline from the
#                             perf.data to the indented call tree
#   perf script --itrace=cr -F +callindent    perf's own call-flow view of
#                             the same perf.data (the peer)
# Prints a markdown section on stdout.
set -eu
O=${O:-build}
REPS=${BENCH_REPS:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
data=$O/bench/bench.data
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
bs=$O/bench/bench_stack
for f in "$data" "$cap" "$rd" "$bs"; do
	[ -e "$f" ] || { echo "stacks bench: $f missing; run 'make bench'" >&2; exit 1; }
done
tmp=$(mktemp -d)
ring=/dev/shm/stackbench_$$.srb
trap 'rm -rf "$tmp" "$ring"' EXIT
"$cap" -q -i "$data" -o "$ring"
nev=$("$rd" --stat "$ring" | awk '$1 == "committed:" { print $2 }')

# the modes bench_stack knows, each with the target of its issue
modes="stack:50 report:30 folded:30 tree:15"
for m in chrome:10 fxt:40 uftrace:40; do
	"$bs" 2>&1 | grep -q "${m%%:*}" && modes="$modes $m"
done
declare -A rate
for m in $modes; do
	mode=${m%%:*}
	for ((i = 0; i < REPS; i++)); do
		"$bs" "$ring" "$mode" 20000000 >"$tmp/out" ||
			{ echo "stacks bench: bench_stack $mode failed" >&2; exit 1; }
		r=$(awk '$1 == "RESULT" { print $5 }' "$tmp/out")
		if [ -z "${rate[$mode]:-}" ] || awk -v a="$r" -v b="${rate[$mode]}" 'BEGIN { exit !(a > b) }'; then
			rate[$mode]=$r
		fi
	done
	echo "  bench_stack $mode: done" >&2
done

# one run of "$@" (a shell command): its CPU seconds (user + system of
# the command and its children) and wall seconds
once() {
	/usr/bin/time -f '%U %S %e' -o "$tmp/time" bash -c "$1" >/dev/null 2>"$tmp/err" ||
		{ echo "stacks bench: failed: $1: $(tail -2 "$tmp/err")" >&2; exit 1; }
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$tmp/time"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ours="rm -f $tmp/p.srb; $cap -q -i $data -o $tmp/p.srb && $rd -f tree -o /dev/null $tmp/p.srb"
peer="perf script -i $data --itrace=cr -F +callindent"
: >"$tmp/ours" ; : >"$tmp/peer"
for ((i = 0; i < REPS; i++)); do
	once "$ours" >>"$tmp/ours"
	if command -v perf >/dev/null; then once "$peer" >>"$tmp/peer"; fi
done
oc=$(cut -d' ' -f1 "$tmp/ours" | median) ow=$(cut -d' ' -f2 "$tmp/ours" | median)
if [ -s "$tmp/peer" ]; then
	pc=$(cut -d' ' -f1 "$tmp/peer" | median) pw=$(cut -d' ' -f2 "$tmp/peer" | median)
else
	pc=- pw=-
fi
rm -f "$tmp/p.srb"

M() { awk -v r="${rate[$1]:-0}" 'BEGIN { printf "%.1fM", r / 1e6 }'; }
met() { awk -v r="${rate[$1]:-0}" -v t="$2" 'BEGIN { print (r >= t * 1e6) ? "yes" : "**no**" }'; }
echo "## Call stacks and views (issues 14 and 15)"
echo
echo "On the benchmark trace's ring ($nev events; \`tests/bench/stacks.sh\`),"
echo "the events read once into memory and fed 20M times over, CPU time of"
echo "the process, best of $REPS (\`tests/bench/bench_stack.c\`):"
echo
echo "| what | events/s | target | met |"
echo "|---|---:|---:|---|"
for m in $modes; do
	mode=${m%%:*} t=${m#*:}
	case $mode in
	stack) what="\`strace_stack\` alone (no callbacks)" ;;
	*) what="\`ptrace-read -f $mode\` to /dev/null" ;;
	esac
	echo "| $what | $(M "$mode") | ${t}M | $(met "$mode" "$t") |"
done
echo
echo "The whole pipeline from the perf.data to an indented call tree, against"
echo "perf's own call flow of the same file (median of $REPS, commands taking"
echo "turns):"
echo
echo "| command | CPU s | wall s |"
echo "|---|---:|---:|"
echo "| \`ptrace-capture -i bench.data\` + \`ptrace-read -f tree\` | $oc | $ow |"
echo "| \`perf script --itrace=cr -F +callindent\` (perf $(perf version 2>/dev/null | cut -d' ' -f3)) | $pc | $pw |"
if [ "$pc" != - ]; then
	echo
	awk -v a="$pc" -v b="$oc" -v c="$pw" -v d="$ow" 'BEGIN {
		printf "perf takes %.1fx our CPU time and %.1fx our wall time.\n", a / b, c / d }'
fi
