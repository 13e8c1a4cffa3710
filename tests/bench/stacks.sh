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
rr=$O/bench/ringrep
for f in "$data" "$cap" "$rd" "$bs" "$rr"; do
	[ -e "$f" ] || { echo "stacks bench: $f missing; run 'make bench'" >&2; exit 1; }
done
tmp=$(mktemp -d)
ring=/dev/shm/stackbench_$$.srb
big=/dev/shm/stackbench_big_$$.srb
huge=/dev/shm/stackbench_huge_$$.srb
trap 'rm -rf "$tmp" "$ring" "$big" "$huge"' EXIT
"$cap" -q -i "$data" -o "$ring"
nev=$("$rd" --stat "$ring" | awk '$1 == "committed:" { print $2 }')

# the modes bench_stack knows, each with the target of its issue (the
# viewer formats' targets are end to end, from a saved ring: below)
modes="stack:50 report:30 folded:30 tree:15"
for m in chrome:- fxt:- uftrace:-; do
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

# --- the viewer formats, end to end, on a saved ring of 10M+ events -------
bcopies=$(( (10500000 + nev - 1) / nev ))
"$rr" "$ring" "$big" "$bcopies" >/dev/null
nbig=$("$rd" --stat "$big" | awk '$1 == "committed:" { print $2 }')
declare -A vcpu vwall
for f in chrome fxt uftrace folded; do
	case $f in
	uftrace) cmd="$rd -f uftrace -o $tmp/u.d $big" ;;
	*) cmd="$rd -f $f -o /dev/null $big" ;;
	esac
	: >"$tmp/v"
	for ((i = 0; i < REPS; i++)); do
		rm -rf "$tmp/u.d" # (the last run's directory: not timed)
		once "$cmd" >>"$tmp/v"
	done
	vcpu[$f]=$(cut -d' ' -f1 "$tmp/v" | sort -n | head -1)
	vwall[$f]=$(cut -d' ' -f2 "$tmp/v" | sort -n | head -1)
	echo "  ptrace-read -f $f of $nbig events: done" >&2
done
rm -rf "$tmp/u.d"

# the peer: uftrace's own Chrome JSON of the directory we wrote (the same
# slices), against our -f chrome of the ring, on the benchmark ring
pcc=- pcw=- occ=- ocw=-
if command -v uftrace >/dev/null && "$rd" -f uftrace -o "$tmp/peer.d" "$ring" 2>/dev/null; then
	: >"$tmp/o" ; : >"$tmp/p"
	for ((i = 0; i < REPS; i++)); do
		once "$rd -f chrome -o /dev/null $ring" >>"$tmp/o"
		once "uftrace dump --chrome -d $tmp/peer.d" >>"$tmp/p"
	done
	occ=$(cut -d' ' -f1 "$tmp/o" | median) ocw=$(cut -d' ' -f2 "$tmp/o" | median)
	pcc=$(cut -d' ' -f1 "$tmp/p" | median) pcw=$(cut -d' ' -f2 "$tmp/p" | median)
	nslices=$(uftrace dump --chrome -d "$tmp/peer.d" 2>/dev/null | grep -c '"ph":"B"' || true)
	rm -rf "$tmp/peer.d"
fi

# a ring of 1 GB and more of events: the peak memory of converting it
hcopies=$(( (1100000000 / 32 + nev - 1) / nev ))
"$rr" "$ring" "$huge" "$hcopies" >/dev/null
nhuge=$("$rd" --stat "$huge" | awk '$1 == "committed:" { print $2 }')
hbytes=$(stat -c %s "$huge")
declare -A peak hwall
for f in chrome fxt uftrace folded; do
	out=/dev/null
	[ "$f" = uftrace ] && out=$tmp/huge.d # (its files: in /tmp, then removed)
	/usr/bin/time -f '%M %e' -o "$tmp/mem" "$rd" -f "$f" -o "$out" "$huge" 2>/dev/null ||
		{ echo "stacks bench: ptrace-read -f $f of $huge failed" >&2; exit 1; }
	peak[$f]=$(awk '{ printf "%.1f", $1 / 1024 }' "$tmp/mem")
	hwall[$f]=$(awk '{ print $2 }' "$tmp/mem")
	rm -rf "$tmp/huge.d"
done
rm -f "$huge"

M() { awk -v r="${rate[$1]:-0}" 'BEGIN { printf "%.1fM", r / 1e6 }'; }
met() { awk -v r="${rate[$1]:-0}" -v t="$2" 'BEGIN { print (r >= t * 1e6) ? "yes" : "**no**" }'; }
echo "## Call stacks and views (issues 14 and 15)"
echo
echo "On the benchmark trace's ring ($nev events; \`tests/bench/stacks.sh\`),"
echo "the events read once into memory and fed 20M times over in the"
echo "reader's batches, CPU time of the process, best of $REPS"
echo "(\`tests/bench/bench_stack.c\`; the viewer formats' targets are end to"
echo "end, in the table after the next):"
echo
echo "| what | events/s | target | met |"
echo "|---|---:|---:|---|"
for m in $modes; do
	mode=${m%%:*} t=${m#*:}
	case $mode in
	stack) what="\`strace_stack\` alone (no callbacks)" ;;
	*) what="\`ptrace-read -f $mode\` to /dev/null" ;;
	esac
	if [ "$t" = - ]; then
		echo "| $what | $(M "$mode") | - | - |"
	else
		echo "| $what | $(M "$mode") | ${t}M | $(met "$mode" "$t") |"
	fi
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
echo
echo "The viewer formats end to end: \`ptrace-read -f FORMAT\` of a saved ring"
echo "of $nbig events (the benchmark ring $bcopies times over, \`tests/bench/ringrep.c\`;"
echo "to /dev/null, uftrace to a directory in $(dirname "$tmp")), CPU time, best of $REPS:"
echo
echo "| format | CPU s | wall s | events/s | target | met |"
echo "|---|---:|---:|---:|---:|---|"
for m in chrome:10 fxt:40 uftrace:40 folded:-; do
	f=${m%%:*} t=${m#*:}
	awk -v n="$nbig" -v c="${vcpu[$f]}" -v w="${vwall[$f]}" -v t="$t" -v f="$f" 'BEGIN {
		r = n / c
		printf "| `-f %s` | %.2f | %.2f | %.1fM | %s | %s |\n", f, c, w, r / 1e6,
			t == "-" ? "-" : t "M", t == "-" ? "-" : (r >= t * 1e6 ? "yes" : "**no**") }'
done
echo
if [ "$pcc" != - ]; then
	echo "Peer: the same slices as Chrome JSON, ours from the ring against"
	echo "\`uftrace dump --chrome\` (uftrace $(uftrace --version 2>/dev/null | head -1 | awk '{ print $2 }')) of the uftrace directory we"
	echo "wrote for it ($nslices slices; median of $REPS, taking turns):"
	echo
	echo "| command | CPU s | wall s |"
	echo "|---|---:|---:|"
	echo "| \`ptrace-read -f chrome -o /dev/null RING\` | $occ | $ocw |"
	echo "| \`uftrace dump --chrome -d DIR\` | $pcc | $pcw |"
	echo
	awk -v a="$pcc" -v b="$occ" 'BEGIN { printf "uftrace takes %.1fx our CPU time.\n", a / b }'
	echo
fi
gb() { awk -v b="$1" 'BEGIN { printf "%.2f GB", b / 1e9 }'; }
echo "Memory: a ring of $nhuge events ($(gb $((nhuge * 32))) of events in a $(gb "$hbytes") file) converted, peak resident"
echo "memory of the process (\`/usr/bin/time -f %M\`, target under 64 MiB; to"
echo "/dev/null, uftrace to a directory in $(dirname "$tmp")):"
echo
echo "| format | peak RSS | wall s | met |"
echo "|---|---:|---:|---|"
for f in chrome fxt uftrace folded; do
	awk -v m="${peak[$f]}" -v w="${hwall[$f]}" -v f="$f" 'BEGIN {
		printf "| `-f %s` | %.1f MiB | %.2f | %s |\n", f, m, w, m < 64 ? "yes" : "**no**" }'
done
