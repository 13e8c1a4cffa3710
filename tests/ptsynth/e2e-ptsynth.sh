#!/usr/bin/env bash
# tests/ptsynth/e2e-ptsynth.sh - acceptance tests of ptsynth (issue 3).
#
# For every corpus program and every trace variant, three views of the
# same execution must agree exactly: ptsynth's ground truth, perf's own
# decoder (perf script --itrace=i1i / --itrace=b on the perf.data) and
# libipt's block decoder (ptblk on the raw stream). Per thread: the
# instruction count and the ordered list of taken branches.
# With an injected overflow, both decoders must report it, and match the
# truth before the gap and after the resume point.
# Also: bad input gives a clear message and a non-zero exit.
#
# Env: O (build dir), PTSYNTH_PROGS / PTSYNTH_VARIANTS to narrow the run.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
export O
SYNTH=$O/bin/ptsynth
PTBLK=$O/tests/ptblk
CORPUS=tests/corpus/corpus.sh
NORM=tests/ptsynth/norm.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

pass() { echo "PASS: ptsynth/$1"; }
fail() { echo "FAIL: ptsynth/$1"; failed=1; }
skip() { echo "SKIP: ptsynth/$1 ($2)"; }

missing=""
command -v qemu-x86_64 >/dev/null || missing="qemu-x86_64"
command -v perf >/dev/null || missing="$missing perf"
if [ -n "$missing" ] || [ ! -x "$SYNTH" ] || [ ! -x "$PTBLK" ]; then
	skip all "missing:${missing:- build outputs}"
	exit 0
fi

if [ "${1:-}" != --one ]; then
# ---- bad input -------------------------------------------------------
bad() { # name expected-message-regex command...
	local name=$1 re=$2; shift 2
	if "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"; then
		fail "bad-input/$name (exit 0)"
	elif grep -Eq "$re" "$tmp/bad.err"; then
		pass "bad-input/$name"
	else
		fail "bad-input/$name (message: $(head -c 200 "$tmp/bad.err"))"
	fi
}
bad missing-program "no such program" "$SYNTH" -o "$tmp/x.data" -- /nonexistent/prog
printf 'hello\n' >"$tmp/notelf"; chmod +x "$tmp/notelf"
bad not-elf "not an ELF file" "$SYNTH" -o "$tmp/x.data" -- "$tmp/notelf"
{ printf '\177ELF\001\001\001'; head -c 120 /dev/zero; } >"$tmp/elf32"; chmod +x "$tmp/elf32"
bad not-x86-64 "not an x86-64 ELF" "$SYNTH" -o "$tmp/x.data" -- "$tmp/elf32"
printf 'int main(void){ volatile int *p = 0; return *p; }\n' >"$tmp/crash.c"
if gcc -O0 -o "$tmp/crash" "$tmp/crash.c" 2>/dev/null; then
	bad crash "crashed" "$SYNTH" -o "$tmp/x.data" -- "$tmp/crash"
else
	skip bad-input/crash "no gcc"
fi
printf '#include <unistd.h>\nint main(void){ return fork() < 0; }\n' >"$tmp/fork.c"
if gcc -O0 -o "$tmp/fork" "$tmp/fork.c" 2>/dev/null; then
	bad fork "fork is not supported" "$SYNTH" -o "$tmp/x.data" -- "$tmp/fork"
fi
bad exec "exec: not supported" "$SYNTH" -o "$tmp/x.data" -- /bin/sh -c 'exec /bin/true'
bad qemu-missing "not found" "$SYNTH" --qemu /nonexistent/qemu -o "$tmp/x.data" -- /bin/true

# ---- corpus ----------------------------------------------------------
progs=${PTSYNTH_PROGS:-$($CORPUS list)}
variants=${PTSYNTH_VARIANTS:-default noretcomp notiming psb256}
command -v ocamlopt >/dev/null || { progs=$(echo " $progs " | sed 's/ ocaml / /'); skip corpus/ocaml "no ocamlopt"; }

# Build every trace first, two at a time (cached under $O/corpus).
jobs=""
for p in $progs; do
	for v in $variants; do jobs="$jobs $p:$v"; done
	jobs="$jobs $p:overflow"
done
# More timing variants on a few programs; damaged streams on two.
for p in static threads signals exceptions; do
	case " $progs " in *" $p "*) jobs="$jobs $p:cyc $p:tsconly" ;; esac
done
for p in static gzip; do
	case " $progs " in *" $p "*) jobs="$jobs $p:drop $p:corrupt" ;; esac
done
# A per-CPU recording (2 CPUs, migrating threads) on three programs.
for p in recurse threads signals; do
	case " $progs " in *" $p "*) jobs="$jobs $p:percpu" ;; esac
done
echo $jobs | tr ' ' '\n' | xargs -P 2 -I{} sh -c \
	'p=${1%%:*}; v=${1#*:}; "$2" trace "$p" "$v" >/dev/null 2>&1 || true' \
	sh {} "$CORPUS"
fi

# Compare two normalized lists; "?" in the second's TO field matches any.
same() {
	awk 'NR == FNR { a[FNR] = $0; na = FNR; next }
	{ b = $0; if (FNR > na) { bad = 1; exit }
	  if (a[FNR] != b) {
		split(a[FNR], x, " "); split(b, y, " ")
		if (!(y[3] == "?" && x[1] == y[1] && x[2] == y[2] && x[4] == y[4])) { bad = 1; exit }
	  }
	  nb = FNR }
	END { exit (bad || nb != na) ? 1 : 0 }' "$1" "$2"
}

report_diff() {
	diff "$1" "$2" | head -5 | sed 's/^/    /'
}

# Damaged streams: decoders must survive (exit 0), and the damage must
# show: a decoder error or a difference from the truth.
check_damaged() { # prog variant
	local p=$1 v=$2 d n
	n=$p/$v
	if ! d=$($CORPUS trace "$p" "$v" 2>"$tmp/build.err"); then
		fail "$n (ptsynth failed: $(tail -c 300 "$tmp/build.err"))"
		return
	fi
	$NORM truth "$d/trace.truth" >"$tmp/t"
	if perf script -i "$d/trace.data" --itrace=be -F tid,ip,addr,flags >"$tmp/pe" 2>&1; then
		$NORM perf "$d/trace.data" >"$tmp/p"
		if grep -q 'instruction trace error' "$tmp/pe" || ! cmp -s "$tmp/t" "$tmp/p"; then
			pass "$n/perf-survives-and-sees-damage ($(grep -c 'trace error' "$tmp/pe") error(s))"
		else
			fail "$n/perf-survives-and-sees-damage (no error, same as truth)"
		fi
	else
		fail "$n/perf-survives-and-sees-damage (perf failed)"
	fi
	if "$PTBLK" "$d/trace.sideband" >"$tmp/blk.raw" 2>"$tmp/blk.err"; then
		$NORM blk "$tmp/blk.raw" >"$tmp/b"
		if grep -q '^# error' "$tmp/blk.raw" || ! cmp -s "$tmp/t" "$tmp/b"; then
			pass "$n/libipt-survives-and-sees-damage ($(grep -c '^# error' "$tmp/blk.raw") error(s))"
		else
			fail "$n/libipt-survives-and-sees-damage (no error, same as truth)"
		fi
	else
		fail "$n/libipt-survives-and-sees-damage (ptblk failed)"
	fi
}

# A per-CPU recording: perf decodes it without errors; each CPU has its own
# continuous AUX stream (consecutive offsets) with the process's pid as tid;
# the threads migrate (switch-ins on both CPUs); the TSC packets of a CPU's
# stream never decrease and perf's sample times per CPU never go back.
check_percpu() { # name trace-dir
	local n=$1 d=$2
	if perf script -i "$d/trace.data" --itrace=be -F tid,ip,addr,flags >"$tmp/pe" 2>&1 &&
		! grep -q 'trace error' "$tmp/pe"; then
		pass "$n/perf-no-errors"
	else
		fail "$n/perf-no-errors ($(grep -m1 'trace error' "$tmp/pe"))"
	fi
	perf report -i "$d/trace.data" -D 2>/dev/null >"$tmp/dump"
	local pid
	pid=$(awk '/^# pid/ { print $3 }' "$d/trace.truth")
	if grep 'PERF_RECORD_AUXTRACE size' "$tmp/dump" | awk -v pid="$pid" '
		function strtonum(h,  i, x) { x = 0; h = tolower(h); sub(/^0x/, "", h)
			for (i = 1; i <= length(h); i++) x = x * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return x }
		{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		  c = v["cpu:"]; if (v["idx:"] != c || v["tid:"] != pid || (c != 0 && c != 1)) bad = 1
		  if (strtonum(v["offset:"]) != next_off[c] + 0) bad = 1
		  next_off[c] = strtonum(v["offset:"]) + strtonum(v["size:"]); seen[c] = 1 }
		END { exit (bad || !seen[0] || !seen[1]) }'; then
		pass "$n/per-cpu-aux-streams ($(grep -c 'PERF_RECORD_AUXTRACE size' "$tmp/dump") buffers)"
	else
		fail "$n/per-cpu-aux-streams"
	fi
	if grep -q 'Per-cpu maps *1' "$tmp/dump" && grep -q 'Have sched_switch *2' "$tmp/dump"; then
		pass "$n/auxtrace-info-per-cpu"
	else
		fail "$n/auxtrace-info-per-cpu"
	fi
	perf script -i "$d/trace.data" --show-switch-events --itrace= -F tid,cpu 2>/dev/null |
		awk '/SWITCH IN/ { print $1, $2 }' | sort -u >"$tmp/sw"
	if awk '{ n[$1]++ } END { for (t in n) if (n[t] == 2) m++; exit !m }' "$tmp/sw"; then
		pass "$n/threads-migrate ($(grep -c 'SWITCH' "$tmp/dump") switch records)"
	else
		fail "$n/threads-migrate"
	fi
	# TSC packets of each CPU's stream (perf's dump, in file order) never decrease
	if awk '/PERF_RECORD_AUXTRACE size/ { c = $NF }
		/^\. .* TSC 0x/ { v = $NF; sub(/^0x/, "", v); v = sprintf("%20s", v)
		  if (c in last && v < last[c]) bad = 1; last[c] = v; n++ }
		END { exit bad || !n }' "$tmp/dump"; then
		pass "$n/tsc-monotonic-per-cpu"
	else
		fail "$n/tsc-monotonic-per-cpu"
	fi
	if perf script -i "$d/trace.data" --itrace=b -F cpu,time --ns 2>/dev/null | awk '
		{ c = $1; t = $2 + 0; if (c in last && t < last[c]) bad = 1; last[c] = t }
		END { exit bad }'; then
		pass "$n/time-monotonic-per-cpu"
	else
		fail "$n/time-monotonic-per-cpu"
	fi
}

check_trace() { # prog variant
	local p=$1 v=$2 d n
	n=$p/$v
	if ! d=$($CORPUS trace "$p" "$v" 2>"$tmp/build.err"); then
		fail "$n (ptsynth failed: $(tail -c 300 "$tmp/build.err"))"
		return
	fi
	$NORM truth "$d/trace.truth" >"$tmp/t"
	$NORM perf "$d/trace.data" >"$tmp/p"
	"$PTBLK" "$d/trace.sideband" >"$tmp/blk.raw" 2>"$tmp/blk.err"
	$NORM blk "$tmp/blk.raw" >"$tmp/b"
	local nthreads ninsn
	nthreads=$(grep -c '^# count' "$tmp/t")
	ninsn=$(awk '/^# count/ { s += $4 } END { print s + 0 }' "$tmp/t")
	for dec in perf:p blk:b; do
		local dn=${dec%%:*} f=$tmp/${dec#*:}
		if cmp -s <(grep '^# count' "$tmp/t") <(grep '^# count' "$f"); then
			pass "$n/$dn-instructions ($ninsn in $nthreads thread(s))"
		else
			fail "$n/$dn-instructions"
			report_diff <(grep '^# count' "$tmp/t") <(grep '^# count' "$f")
		fi
		if same <(grep -v '^#' "$tmp/t") <(grep -v '^#' "$f"); then
			pass "$n/$dn-branches ($(grep -vc '^#' "$tmp/t") taken)"
		else
			fail "$n/$dn-branches"
			report_diff <(grep -v '^#' "$tmp/t") <(grep -v '^#' "$f")
		fi
	done
	if [ "$v" = percpu ]; then
		check_percpu "$n" "$d"
	fi
	if [ "$v" = overflow ]; then
		if grep -q '^# gap begin' "$d/trace.truth" && grep -q '^# gap end' "$d/trace.truth"; then
			pass "$n/truth-records-gap"
		else
			fail "$n/truth-records-gap"
		fi
		if perf script -i "$d/trace.data" --itrace=be 2>&1 | grep -q 'Overflow packet'; then
			pass "$n/perf-reports-overflow"
		else
			fail "$n/perf-reports-overflow"
		fi
		if grep -q '^# overflow' "$tmp/blk.raw"; then
			pass "$n/libipt-reports-overflow"
		else
			fail "$n/libipt-reports-overflow"
		fi
	fi
}

# Check the traces, two at a time; print the results in a fixed order.
if [ "${1:-}" = --one ]; then
	case $3 in
	drop | corrupt) check_damaged "$2" "$3" ;;
	*) check_trace "$2" "$3" ;;
	esac
	exit $failed
fi

n=$(echo $jobs | wc -w)
i=0
for j in $jobs; do i=$((i + 1)); echo "$i $j"; done |
	xargs -P 2 -L 1 sh -c 'p=${4%%:*}; v=${4#*:}; TMPDIR="$1" bash "$2" --one "$p" "$v" >"$1/out-$3" 2>&1; exit 0' \
	sh "$tmp" "$0"
for i in $(seq 1 "$n"); do cat "$tmp/out-$i"; done
grep -q '^FAIL' "$tmp"/out-* && failed=1
exit $failed
