#!/usr/bin/env bash
# tests/e2e/dlfilter-compare.sh - the real `perf script --itrace=b
# --dlfilter libstrace_dlf.so` against `ptrace-capture -i`, on every trace
# we have: the two rings must hold the same events (tests/e2e/dlfcmp.py
# says what "the same" means, check by check).
#
# Traces: the corpus (tests/corpus/corpus.sh trace NAME default, plus the
# overflow variant of one program) when it is there; otherwise traces that
# ptsynth makes here of a few system programs, under $O/dlfilter/.
# Env: O (build dir), DLF_TRACES (space-separated perf.data files to use
# instead).
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
lib=$top/$O/lib/libstrace_dlf.so
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
fails=0
say() { echo "$@"; case $1 in FAIL:) fails=$((fails + 1)) ;; esac; }

for need in "$lib" "$cap" "$rd"; do
	[ -e "$need" ] || { say "FAIL: dlfilter-compare/build ($need missing)"; exit 1; }
done
if ! command -v perf >/dev/null || ! command -v python3 >/dev/null; then
	say "SKIP: dlfilter-compare/all (needs perf and python3)"
	exit 0
fi

work=$(mktemp -d /tmp/dlfcmp.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- the traces -------------------------------------------------------------
traces=()
if [ -n "${DLF_TRACES:-}" ]; then
	for t in $DLF_TRACES; do traces+=("$(basename "${t%.data}")=$t"); done
elif [ -x tests/corpus/corpus.sh ]; then
	for n in static recurse fptr tailcall longjmp signals threads plt exceptions ls; do
		d=$(tests/corpus/corpus.sh trace "$n" default 2>"$work/corpus.err") &&
			[ -e "$d/trace.data" ] && traces+=("$n=$d/trace.data") ||
			say "SKIP: dlfilter-compare/$n (the corpus could not make its trace: $(tail -n1 "$work/corpus.err"))"
	done
	d=$(tests/corpus/corpus.sh trace recurse overflow 2>/dev/null) &&
		[ -e "$d/trace.data" ] && traces+=("recurse-overflow=$d/trace.data")
else
	ps=$O/bin/ptsynth
	mkdir -p "$O/dlfilter"
	if [ -x "$ps" ]; then
		for p in true ls sort; do
			t=$O/dlfilter/$p.data
			if [ ! -e "$t" ] || [ "$ps" -nt "$t" ]; then
				case $p in
				ls) args=(/bin/ls /usr) ;;
				sort) args=(/usr/bin/sort /etc/services) ;;
				*) args=(/bin/$p) ;;
				esac
				"$ps" -o "$t" --truth "${t%.data}.truth" -- "${args[@]}" \
					>/dev/null 2>"$work/ps.err" ||
					{ say "SKIP: dlfilter-compare/$p (ptsynth failed: $(tail -n1 "$work/ps.err"))"; continue; }
			fi
			traces+=("$p=$t")
		done
	fi
fi
[ ${#traces[@]} -gt 0 ] || { say "SKIP: dlfilter-compare/traces (no trace to compare: no corpus and no ptsynth)"; exit 0; }

# --- one trace ------------------------------------------------------------
compare() {
	local data=$1 name=$2 w=$work/$2 r
	mkdir -p "$w"
	# perf must be able to read the file at all
	if ! perf script -i "$data" --itrace=b -F ip >/dev/null 2>"$w/perf.err" ||
	   grep -q "failed to process" "$w/perf.err"; then
		say "SKIP: $name/all (perf $(perf version | cut -d' ' -f3) cannot read this trace: $(head -n1 "$w/perf.err"))"
		return
	fi
	"$cap" -q -i "$data" -o "$w/c.srb" 2>"$w/cap.err" &&
	"$cap" -q -i "$data" --all-branches -o "$w/ca.srb" 2>>"$w/cap.err" ||
		{ say "FAIL: $name/capture (ptrace-capture failed: $(tail -n1 "$w/cap.err"))"; return; }
	for r in d da; do
		local extra=()
		[ $r = da ] && extra=(--dlarg all-branches)
		perf script -i "$data" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$w/$r.srb" "${extra[@]}" >"$w/$r.out" 2>"$w/$r.err"
		local rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$w/$r.srb" ]; then
			say "FAIL: $name/perf-$r (perf script --dlfilter exit $rc: $(tail -n1 "$w/$r.err"))"
			return
		fi
		if [ -s "$w/$r.out" ]; then
			say "FAIL: $name/quiet-$r (perf printed samples although the filter drops them all)"
			return
		fi
	done
	say "PASS: $name/perf (perf script --dlfilter ran, printed nothing, wrote $(stat -c %s "$w/d.srb") bytes of ring)"
	for r in c ca d da; do
		"$rd" -f jsonl "$w/$r.srb" >"$w/$r.jsonl" 2>"$w/rd.err" ||
			{ say "FAIL: $name/read-$r ($(tail -n1 "$w/rd.err"))"; return; }
	done
	python3 tests/e2e/dlfcmp.py "$name" "$w/c.jsonl" "$w/ca.jsonl" \
		"$w/d.jsonl" "$w/da.jsonl" --perf-data "$data" >"$w/cmp.out" 2>&1
	cat "$w/cmp.out"
	fails=$((fails + $(grep -c '^FAIL: ' "$w/cmp.out")))
	grep -q '^\(PASS\|FAIL\|SKIP\): ' "$w/cmp.out" ||
		say "FAIL: $name/compare (dlfcmp.py printed no verdict)"
}

for t in "${traces[@]}"; do
	compare "${t#*=}" "dlfilter-${t%%=*}"
done
[ "$fails" -eq 0 ]
