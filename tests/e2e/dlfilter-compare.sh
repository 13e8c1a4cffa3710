#!/usr/bin/env bash
# tests/e2e/dlfilter-compare.sh - the real `perf script --itrace=b
# --dlfilter libstrace_dlf.so` against `ptrace-capture -i`, on every trace
# we have: the two rings must hold the same events (tests/e2e/dlfcmp.py
# says what "the same" means, check by check).
#
# Traces: every trace of the corpus that `make tests` links as
# $O/corpus/*.data (tests/corpus/corpus.sh); without it, traces that ptsynth
# makes here of a few system programs, under $O/dlfilter/.
# Env: O (build dir), DLF_TRACES (space-separated perf.data files to use
# instead).
T=dlfilter-compare
. "$(dirname "$0")/lib.sh"
cd "$top"
lib=$top/$O/lib/libstrace_dlf.so
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
# say LINE: a PASS:/FAIL:/SKIP: line named by its trace (not by $T)
say() { echo "$@"; case $1 in FAIL:) nfail=$((nfail + 1)) ;; esac; }

for need in "$lib" "$cap" "$rd"; do
	[ -e "$need" ] || { fail "build ($need missing)"; exit 1; }
done
if ! command -v perf >/dev/null || ! command -v python3 >/dev/null; then
	skip "all (needs perf and python3)"
	exit 0
fi

. "$top/tests/e2e/perfdl.inc"

# --- the traces -------------------------------------------------------------
traces=()
if [ -n "${DLF_TRACES:-}" ]; then
	for t in $DLF_TRACES; do traces+=("$(basename "${t%.data}")=$t"); done
elif ls "$O"/corpus/*.data >/dev/null 2>&1; then
	# the standard corpus that `make tests` links (tests/corpus/corpus.sh)
	for t in "$O"/corpus/*.data; do
		traces+=("$(basename "${t%.data}")=$t")
	done
else
	# no corpus yet: a few system programs through ptsynth
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
					{ skip "$p (ptsynth failed: $(tail -n1 "$work/ps.err"))"; continue; }
			fi
			traces+=("$p=$t")
		done
	fi
fi
[ ${#traces[@]} -gt 0 ] || { skip "traces (no trace to compare: no corpus and no ptsynth)"; exit 0; }

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
	# both names: perf's (the dlfilter's names are perf script's own)
	# and ours (names=plain: the dlfilter's names are ptrace-capture's,
	# read from the same files)
	local n
	for n in perf plain; do
		compare_names "$data" "$name" "$w" "$n"
	done
}

# compare_names DATA NAME DIR NAMES: both rings of one perf.data
compare_names() {
	local data=$1 name=$2 w=$3/$4 n=$4 r extra=()
	mkdir -p "$w"
	[ "$n" = plain ] && name=$name-plain
	# the times of the timing packets on both sides: both place a branch
	# within the same timing-packet period (how each spreads the times
	# between: tests/decoder/e2e-times.sh)
	"$cap" -q --names "$n" --exact-times -i "$data" -o "$w/c.srb" 2>"$w/cap.err" &&
	"$cap" -q --names "$n" --exact-times -i "$data" --all-branches -o "$w/ca.srb" 2>>"$w/cap.err" ||
		{ say "FAIL: $name/capture (ptrace-capture failed: $(tail -n1 "$w/cap.err"))"; return; }
	for r in d da; do
		extra=()
		[ $r = da ] && extra=(--dlarg all-branches)
		perfdl script -i "$data" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$w/$r.srb" --dlarg exact-times \
			--dlarg "names=$n" "${extra[@]}" >"$w/$r.out" 2>"$w/$r.err"
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
	extra=()
	[ "$n" = plain ] && extra=(--plain)
	python3 tests/e2e/dlfcmp.py "$name" "$w/c.jsonl" "$w/ca.jsonl" \
		"$w/d.jsonl" "$w/da.jsonl" --perf-data "$data" "${extra[@]}" \
		>"$w/cmp.out" 2>&1
	cat "$w/cmp.out"
	nfail=$((nfail + $(grep -c '^FAIL: ' "$w/cmp.out")))
	grep -q '^\(PASS\|FAIL\|SKIP\): ' "$w/cmp.out" ||
		say "FAIL: $name/compare (dlfcmp.py printed no verdict)"
}

# --- the arguments, with the real perf, on the first trace ---------------
args_checks() {
	local data=$1 w=$work/args
	mkdir -p "$w"
	perfdl script -i "$data" --itrace=b --dlfilter "$lib" --dlarg bogus \
		>"$w/out" 2>"$w/err"
	local rc=$?
	if [ $rc -ne 0 ] && grep -q "unknown argument 'bogus'" "$w/err" && [ ! -s "$w/out" ]; then
		say "PASS: dlfilter-args/unknown (perf stops, exit $rc: $(grep -o "unknown argument 'bogus'" "$w/err"))"
	else
		say "FAIL: dlfilter-args/unknown (exit $rc, stderr: $(head -c 200 "$w/err"))"
	fi
	# print: perf prints the samples that made events, here the calls
	perfdl script -i "$data" --itrace=b --dlfilter "$lib" --dlarg "ring=$w/p.srb" \
		--dlarg print --dlarg types=call -F ip,addr >"$w/out" 2>"$w/err"
	local printed calls
	printed=$(grep -c . "$w/out")
	calls=$("$rd" -f jsonl --types call "$w/p.srb" 2>/dev/null | grep -c .)
	if [ "$printed" -gt 0 ] && [ "$printed" -eq "$calls" ]; then
		say "PASS: dlfilter-args/print (perf printed the $printed samples that became call events)"
	else
		say "FAIL: dlfilter-args/print (perf printed $printed lines, the ring holds $calls calls)"
	fi
	# no ring=: an automatic name, printed once
	local made
	(unset STRACE_RING; perfdl script -i "$data" --itrace=b --dlfilter "$lib" >"$w/out" 2>"$w/err")
	made=$(sed -n 's/^libstrace_dlf: writing events to //p' "$w/err")
	if [ "$(grep -c 'writing events to' "$w/err")" -eq 1 ] && [ -n "$made" ] && [ -s "$made" ] &&
	   "$rd" -f jsonl "$made" 2>/dev/null | grep -q '"type":"call"'; then
		say "PASS: dlfilter-args/auto-ring (named once on stderr: $made)"
	else
		say "FAIL: dlfilter-args/auto-ring (stderr: $(head -c 200 "$w/err"))"
	fi
	[ -n "$made" ] && case $made in /dev/shm/strace_*) rm -f "$made" ;; esac
	# an existing file is not overwritten
	echo keep >"$w/exists"
	perfdl script -i "$data" --itrace=b --dlfilter "$lib" --dlarg "ring=$w/exists" \
		>/dev/null 2>"$w/err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(cat "$w/exists")" = keep ]; then
		say "PASS: dlfilter-args/existing (refused, exit $rc, file untouched)"
	else
		say "FAIL: dlfilter-args/existing (exit $rc)"
	fi
}

first=${traces[0]#*=}
args_checks "$first"

for t in "${traces[@]}"; do
	compare "${t#*=}" "dlfilter-${t%%=*}"
done
finish
