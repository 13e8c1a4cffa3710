#!/usr/bin/env bash
# tests/e2e/ring-small.sh - the smallest rings the tools accept (64 and 128
# events), written by each of them: ptrace-capture -i, the dlfilter inside
# perf, and ptrace-read --generate, in flight and lossless modes. Writers
# used to flush 256-event batches whatever the capacity: the wrap copy
# wrote kilobytes past the ring's mapping (ptrace-capture and perf died of
# SIGSEGV, --generate wrote over what lay after the ring), and a lossless
# batch never fitted. Capacities below 64 are refused with a message.
T=ring-small
. "$(dirname "$0")/lib.sh"
cd "$top"
PR=$top/$O/bin/ptrace-read
CAP=$top/$O/bin/ptrace-capture
lib=$top/$O/lib/libstrace_dlf.so
data=$O/corpus/ls.data
R=/dev/shm/e2e_small_$$
on_exit() { rm -f "$R"_*; }
[ -e "$data" ] || { echo "FAIL: $T/input ($data missing: make tests links the corpus)"; exit 1; }

# ring_ok NAME RING CAP: the header intact, and reading gives the newest
# CAP events (or all, if fewer were written), positions consecutive up to
# the last committed one, exit 0
ring_ok() {
	local name=$1 ring=$2 cap=$3 committed n
	committed=$("$PR" --stat "$ring" 2>"$work/err" | awk '/^capacity:/ { c = $2 } /^committed:/ { n = $2 } END { if (c == '"$cap"') print n }')
	if [ -z "$committed" ]; then
		fail "$name" "--stat: $(cat "$work/err")"
		return
	fi
	timeout 60 "$PR" -o "$work/out" "$ring" 2>"$work/err"; rc=$?
	n=$(( committed < cap ? committed : cap ))
	if [ $rc -eq 0 ] && awk -v first=$((committed - n)) -v n=$n '$1 != first + NR - 1 { bad = 1 } END { exit bad || NR != n }' "$work/out"; then
		pass "$name ($committed events written, the newest $n read)"
	else
		fail "$name" "exit $rc, $(wc -l < "$work/out") lines, want positions $((committed - n)) to $((committed - 1)): $(head -c 300 "$work/err")"
	fi
}

for cap in 64 128; do
	timeout 60 "$CAP" -q -i "$data" -o "$R"_c$cap --mode flight --capacity $cap 2>"$work/err"; rc=$?
	[ $rc -eq 0 ] && pass "capture-flight-$cap-exit" || fail "capture-flight-$cap-exit" "exit $rc: $(cat "$work/err")"
	ring_ok capture-flight-$cap-ring "$R"_c$cap $cap

	if command -v perf >/dev/null; then
		lib="$lib" timeout 120 bash -c '. "$0"; perfdl "$@"' "$top/tests/e2e/perfdl.inc" script -i "$data" --itrace=b --dlfilter "$lib" --dlarg ring="$R"_d$cap \
			--dlarg mode=flight --dlarg capacity=$cap >/dev/null 2>"$work/err"; rc=$?
		[ $rc -eq 0 ] && pass "dlfilter-flight-$cap-exit" || fail "dlfilter-flight-$cap-exit" "perf exit $rc: $(tail -3 "$work/err")"
		ring_ok dlfilter-flight-$cap-ring "$R"_d$cap $cap
	else
		echo "SKIP: $T/dlfilter-flight-$cap (perf not installed)"
	fi

	timeout 60 "$PR" --generate 1000 --mode flight --capacity $cap -o "$R"_g$cap 2>"$work/err"; rc=$?
	[ $rc -eq 0 ] && pass "generate-flight-$cap-exit" || fail "generate-flight-$cap-exit" "exit $rc: $(cat "$work/err")"
	ring_ok generate-flight-$cap-ring "$R"_g$cap $cap

	# lossless: a reader follows; every event comes, the writer never
	# waits for a batch that cannot fit
	timeout 60 "$PR" --follow --timeout 20000 -o "$work/ll" "$R"_l$cap 2>"$work/rerr" &
	rpid=$!
	timeout 60 "$PR" --generate 20000 --capacity $cap --readers 1 --timeout 20000 -o "$R"_l$cap 2>"$work/err"; rc=$?
	wait $rpid; rrc=$?
	total=$("$PR" --stat "$R"_l$cap | awk '/^committed:/ { print $2 }')
	if [ $rc -eq 0 ] && [ $rrc -eq 0 ] && [ -n "$total" ] &&
		awk -v n="$total" '$1 != NR - 1 { bad = 1 } END { exit bad || NR != n }' "$work/ll"; then
		pass "generate-lossless-$cap-followed ($total events, all read)"
	else
		fail "generate-lossless-$cap-followed" "writer exit $rc, reader exit $rrc, $(wc -l < "$work/ll") of $total lines: $(cat "$work/err" "$work/rerr")"
	fi
done

# below the smallest capacity: refused, with the range
"$CAP" -q -i "$data" -o "$R"_x --capacity 32 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q "power of two from 64" "$work/err" && pass capture-capacity-32-refused || fail capture-capacity-32-refused "exit $rc: $(cat "$work/err")"
"$PR" --generate 10 --capacity 32 -o "$R"_x 2>"$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q "from 64" "$work/err" && pass generate-capacity-32-refused || fail generate-capacity-32-refused "exit $rc: $(cat "$work/err")"
if command -v perf >/dev/null; then
	lib="$lib" timeout 120 bash -c '. "$0"; perfdl "$@"' "$top/tests/e2e/perfdl.inc" script -i "$data" --itrace=b --dlfilter "$lib" --dlarg ring="$R"_x --dlarg capacity=32 >/dev/null 2>"$work/err"; rc=$?
	[ $rc -ne 0 ] && grep -q "capacity=32: expected a power of two from 64" "$work/err" && pass dlfilter-capacity-32-refused || fail dlfilter-capacity-32-refused "perf exit $rc: $(tail -2 "$work/err")"
fi
[ ! -e "$R"_x ] && pass refused-leaves-no-ring || fail refused-leaves-no-ring
finish
