#!/usr/bin/env bash
# tests/live/e2e-trigger.sh - --trigger, --start-at/--stop-at and
# --list-symbols (issue 32, parts 1 and 2), for real on this machine's
# kernel: the uprobes and hardware breakpoints are real perf events on a
# real program (live_calls, which counts its own calls of tick()), run by
# ptrace-capture's own session code (live_trigger: cli/capture_live.c and
# pt_backend/capture); only Intel PT is simulated (its AUX area holds time
# stamps, tests/live/trigger.c). Judged by:
#  - the program's own count of calls (hits), and its time of each call
#    against the time stamps in each snapshot (what the AUX area held
#    before the hit; with --trigger-tail, after it);
#  - perf probe -n -v (the uprobe perf would create: PATH:0xOFFSET) for
#    every resolved function, return, +OFF and shared-object probe;
#  - nm -S for --list-symbols' addresses and sizes, perf probe -F for its
#    names.
# The AUX pause/resume windows cannot run without Intel PT: on a kernel
# that knows aux_action the group is refused for want of an AUX leader
# (checked); the pre-6.13 fallbacks run with that kernel's answer
# simulated (LIVE_TRIGGER_OLD_KERNEL).
T=trigger
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top" || exit 1
TRIG=$O/tests/live_trigger
CALLS=$O/tests/live_calls
CAP=$O/bin/ptrace-capture
for t in "$TRIG" "$CALLS" "$CAP"; do
	[ -x "$t" ] || { echo "SKIP: $T/all (no $t: run make tests)"; exit 0; }
done
BIN=$(realpath "$CALLS")
# perf probe adds the objects it reads to a build-id cache: this run's,
# not the user's ~/.debug
mkdir -p "$work/buildid"
PERF="perf --buildid-dir $work/buildid"
LIBC=$(realpath /lib/x86_64-linux-gnu/libc.so.6)
# sysfs roots: the simulated intel_pt, with and without the real uprobe PMU
mkdir -p "$work/up/bus/event_source/devices" "$work/bp/bus/event_source/devices"
for r in up bp; do
	cp -r tests/live/sysfs/bus/event_source/devices/intel_pt "$work/$r/bus/event_source/devices/"
done
have_uprobe=0
if [ -e /sys/bus/event_source/devices/uprobe/type ]; then
	ln -s /sys/bus/event_source/devices/uprobe "$work/up/bus/event_source/devices/uprobe"
	have_uprobe=1
fi

# run NAME SYSFS [options] -- args: live_trigger's stdout (the program's
# "call K T" and "tick N" lines, "aux ..." lines), stderr and status
run() {
	local name=$1 root=$2
	shift 2
	rm -rf "$work/$name.snap"
	mkdir -p "$work/$name.snap"
	timeout 60 "$TRIG" "$work/$root" "$work/$name.snap" --aux-size 1M "$@" \
		>"$work/$name.out" 2>"$work/$name.err"
	echo $? >"$work/$name.rc"
}
stat_of() { # NAME FIELD: from the triggers' summary line
	sed -n 's/.*triggers ([a-z ]*): \([0-9]*\) hits\{0,1\}, \([0-9]*\) before --trigger-after, \([0-9]*\) the kernel.*; \([0-9]*\) snapshots\{0,1\} taken.*/\1 \2 \3 \4/p' \
		"$work/$1.err" | awk -v f="$2" '{print $f}'
}
ticks() { sed -n 's/^tick \([0-9]*\)$/\1/p' "$work/$1.out"; }
# the snapshots against the call times: for each snapshot, the call it
# holds (the last one at most 20 ms after its newest stamp: the simulated
# PT writes every millisecond, so the snapshot taken at the hit may end
# just before the call's own time stamp; calls are 50 ms or more apart)
# and the bytes stamped before and after that call
judge() {
	python3 - "$work/$1.out" "$work/$1.snap" <<'EOF'
import os, struct, sys
calls = [int(l.split()[2]) for l in open(sys.argv[1]) if l.startswith("call ")]
snaps = sorted(os.listdir(sys.argv[2]), key=lambda n: int(n.split("-")[1]))
for n in snaps:
    b = open(os.path.join(sys.argv[2], n), "rb").read()
    w = [x for (x,) in struct.iter_unpack("<Q", b) if x]
    if not w:
        print(n, "empty"); continue
    lo, hi = min(w), max(w)
    held = [i + 1 for i, c in enumerate(calls) if lo < c <= hi + 20000000]
    k = held[-1] if held else 0
    c = calls[k - 1] if k else 0
    before = 8 * sum(1 for x in w if x < c)
    after = 8 * sum(1 for x in w if x > c)
    print(n, "call", k, "before", before, "after", after)
EOF
}

# --- resolution, judged by perf probe's own uprobes ---------------------
if command -v perf >/dev/null; then
	for spec in tick 'tick+4' 'tick:ret' usleep@libc.so.6; do
		case $spec in
		'tick:ret') pspec='tick%return' obj=$BIN ;;
		usleep@libc.so.6) pspec=usleep obj=$LIBC ;;
		*) pspec=$spec obj=$BIN ;;
		esac
		want=$(cd "$work" && timeout 30 $PERF probe -n -v -x "$obj" "$pspec" 2>&1 |
			sed -n 's/^Writing event: [pr]:[^ ]* //p')
		got=$("$CAP" --sysfs-root "$work/none" --trigger "$spec" -- "$CALLS" 2>&1 |
			sed -n 's/.* at 0x[0-9a-f]* of \(.*\) (file offset \(0x[0-9a-f]*\))$/\1:\2/p')
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			pass "resolve/$spec-equals-perf-probe ($got)"
		else
			fail "resolve/$spec-equals-perf-probe" "perf probe: '$want'" "ours: '$got'"
		fi
	done
else
	skip "resolve (perf is not installed: perf probe -n is the judge)"
fi
# without Intel PT the capture says so after the trigger resolved
"$CAP" --sysfs-root "$work/none" --trigger tick -- "$CALLS" 1 0 0 >/dev/null 2>"$work/nopt.err"
rc=$?
if [ $rc -eq 4 ] && grep -q "Intel PT is not available" "$work/nopt.err"; then
	pass "no-intel-pt-says-so (exit 4)"
else
	fail "no-intel-pt-says-so" "exit $rc" "$(cat "$work/nopt.err")"
fi

# --- --list-symbols: nm's addresses and sizes, perf probe -F's names ------
"$CAP" --list-symbols . -- "$CALLS" >"$work/list" 2>"$work/list.err"
rc=$?
awk -v b="$BIN" '$4 == b && $3 !~ /@plt$|^\[plt0\]$/ {print $1, $3}' "$work/list" | sort >"$work/list.ours"
nm --defined-only "$BIN" | awk '$2 ~ /^[Tt]$/ {print $1, $3}' | sort >"$work/list.nm"
if [ $rc -eq 0 ] && [ -s "$work/list.nm" ] && cmp -s "$work/list.ours" "$work/list.nm"; then
	pass "list-symbols/addresses-equal-nm ($(wc -l <"$work/list.nm") functions)"
else
	fail "list-symbols/addresses-equal-nm" "exit $rc" "$(diff "$work/list.nm" "$work/list.ours" | head -5)"
fi
awk -v b="$BIN" '$4 == b {print $1, $2, $3}' "$work/list" | sort >"$work/size.ours"
nm -S --defined-only "$BIN" | while read -r a sz ty name; do
	[ -n "$name" ] && case $ty in [Tt]) echo "$a $((16#$sz)) $name" ;; esac
done | sort >"$work/size.nm"
if [ -s "$work/size.nm" ] && [ -z "$(comm -23 "$work/size.nm" "$work/size.ours")" ]; then
	pass "list-symbols/sizes-equal-nm ($(wc -l <"$work/size.nm") with a size)"
else
	fail "list-symbols/sizes-equal-nm" "$(comm -23 "$work/size.nm" "$work/size.ours" | head -5)"
fi
if command -v perf >/dev/null; then
	# perf lists data symbols too: its functions are those nm calls code
	nm --defined-only "$BIN" | awk '$2 ~ /^[Tt]$/ {print $3}' | sort >"$work/names.nm"
	(cd "$work" && timeout 30 $PERF probe -x "$BIN" -F 2>/dev/null) | sort |
		comm -12 - "$work/names.nm" >"$work/names.perf"
	awk -v b="$BIN" '$4 == b {print $3}' "$work/list" | sort >"$work/names.ours"
	if [ -s "$work/names.perf" ] && [ -z "$(comm -23 "$work/names.perf" "$work/names.ours")" ]; then
		pass "list-symbols/names-cover-perf-probe-F ($(wc -l <"$work/names.perf") names)"
	else
		fail "list-symbols/names-cover-perf-probe-F" "$(comm -23 "$work/names.perf" "$work/names.ours" | head -5)"
	fi
fi
"$CAP" --list-symbols '^usleep$' -- "$CALLS" >"$work/usleep" 2>&1
want=$(nm -D -S --defined-only "$LIBC" | while read -r a sz ty name; do
	[ "$name" = usleep@@GLIBC_2.2.5 ] && echo "$a $((16#$sz)) usleep $LIBC"
done)
got=$(awk '{print $1, $2, $3, $4}' "$work/usleep")
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	pass "list-symbols/shared-object-equals-nm-D ($got)"
else
	fail "list-symbols/shared-object-equals-nm-D" "nm: '$want'" "ours: '$got'"
fi
# a stripped program whose symbols are in its .gnu_debuglink file
mkdir -p "$work/dbg"
cp "$BIN" "$work/dbg/calls"
if objcopy --only-keep-debug "$work/dbg/calls" "$work/dbg/calls.debug" &&
	strip "$work/dbg/calls" &&
	objcopy --add-gnu-debuglink="$work/dbg/calls.debug" "$work/dbg/calls"; then
	got=$("$CAP" --sysfs-root "$work/none" --trigger tick -- "$work/dbg/calls" 2>&1 |
		sed -n 's/.* (file offset \(0x[0-9a-f]*\))$/\1/p')
	want=$(nm "$BIN" | awk '$3 == "tick" {print "0x" $1}' | sed 's/0x0*/0x/')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "resolve/stripped-through-debuglink ($got)"
	else
		fail "resolve/stripped-through-debuglink" "want '$want' got '$got'"
	fi
	rm "$work/dbg/calls.debug"
	"$CAP" --sysfs-root "$work/none" --trigger tick -- "$work/dbg/calls" >/dev/null 2>"$work/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "no function called tick" "$work/err" &&
		pass "resolve/stripped-without-its-debug-file-refused" ||
		fail "resolve/stripped-without-its-debug-file-refused" "exit $rc: $(cat "$work/err")"
else
	skip "resolve/stripped-through-debuglink (objcopy or strip failed)"
fi
"$CAP" --list-symbols '(' -- "$CALLS" >/dev/null 2>"$work/err"
rc=$?
[ $rc -eq 2 ] && grep -q "not a regular expression" "$work/err" &&
	pass "list-symbols/bad-regex-refused" || fail "list-symbols/bad-regex-refused" "exit $rc: $(cat "$work/err")"
"$CAP" --list-symbols tick -i /dev/null >/dev/null 2>"$work/err"
rc=$?
[ $rc -eq 2 ] && grep -q "give -p PID or -- CMD" "$work/err" &&
	pass "list-symbols/needs-a-program" || fail "list-symbols/needs-a-program" "exit $rc: $(cat "$work/err")"

# --- bad triggers: a message that names what to do, exit 2 ---------------
bad() { # NAME PATTERN ARGS...: exit 2 and the message
	local name=$1 pat=$2
	shift 2
	"$CAP" --sysfs-root "$work/none" "$@" -- "$CALLS" 1 0 0 >/dev/null 2>"$work/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$pat" "$work/err"; then
		pass "refused/$name"
	else
		fail "refused/$name" "exit $rc" "$(cat "$work/err")"
	fi
}
bad no-such-function "no function called nosuch in live_calls, .*--list-symbols" --trigger nosuch
bad ret-with-offset "':ret' probes a function's return" --trigger 'tick+4:ret'
bad offset-past-end "past its end" --trigger 'tick+0x1000'
bad address-without-code "no code of .* is at that address" --trigger 0x1@live_calls
bad object-not-loaded "does not load libnosuch.so" --trigger tick@libnosuch.so
bad count-zero "needs a count of 1 or more" --trigger tick --trigger-count 0
bad then-unknown "takes stop (end the capture) or next" --trigger tick --trigger-then later

# --- uprobes: hits against the program's own count ---------------------
if [ $have_uprobe = 1 ]; then
	run next up --trigger tick --trigger-then next -- "$CALLS" 5 100
	n=$(ticks next)
	hits=$(stat_of next 1) snaps=$(stat_of next 4)
	if [ "$(cat "$work/next.rc")" = 0 ] && [ "$n" = 5 ] && [ "$hits" = 5 ] && [ "$snaps" = 5 ]; then
		pass "uprobe/hits-equal-calls (5 calls, 5 hits, 5 snapshots)"
	else
		fail "uprobe/hits-equal-calls" "calls '$n' hits '$hits' snapshots '$snaps'" "$(cat "$work/next.err")"
	fi
	judge next >"$work/next.judge"
	if [ "$(awk '{print $3}' "$work/next.judge" | tr '\n' ' ')" = "1 2 3 4 5 " ] &&
		awk '$5 < 65536 {exit 1}' "$work/next.judge"; then
		pass "uprobe/each-snapshot-holds-its-call-and-what-ran-before"
	else
		fail "uprobe/each-snapshot-holds-its-call-and-what-ran-before" "$(cat "$work/next.judge")"
	fi
	run ret up --trigger tick:ret --trigger-then next -- "$CALLS" 4 50
	[ "$(stat_of ret 1)" = 4 ] && [ "$(ticks ret)" = 4 ] &&
		pass "uprobe/return-hits-equal-calls (4)" ||
		fail "uprobe/return-hits-equal-calls" "$(cat "$work/ret.err")"
	# usleep: the pause before the calls and one after each
	run libc up --trigger usleep@libc.so.6 --trigger-then next -- "$CALLS" 4 50
	[ "$(stat_of libc 1)" = 5 ] && [ "$(ticks libc)" = 4 ] &&
		pass "uprobe/shared-object-hits-equal-calls (5 usleep)" ||
		fail "uprobe/shared-object-hits-equal-calls" "$(cat "$work/libc.err")"
	# the 3rd call takes the snapshot, and the capture ends
	run count up --trigger tick --trigger-count 3 -- "$CALLS" 5 200
	judge count >"$work/count.judge"
	if [ "$(stat_of count 4)" = 1 ] && [ "$(awk '{print $3}' "$work/count.judge")" = 3 ]; then
		pass "uprobe/count-3-takes-the-3rd-call-then-stops"
	else
		fail "uprobe/count-3-takes-the-3rd-call-then-stops" "$(cat "$work/count.judge")" "$(cat "$work/count.err")"
	fi
	# hits in the first half second do not count
	run after up --trigger tick --trigger-after 0.5 --trigger-then next -- "$CALLS" 5 200 0
	early=$(stat_of after 2) hits=$(stat_of after 1) snaps=$(stat_of after 4)
	if [ "$hits" = 5 ] && [ "${early:-0}" -ge 1 ] && [ "${early:-5}" -lt 5 ] &&
		[ "$snaps" = $((5 - early)) ]; then
		pass "uprobe/trigger-after ($early of 5 hits before it, $snaps snapshots)"
	else
		fail "uprobe/trigger-after" "hits '$hits' early '$early' snapshots '$snaps'" "$(cat "$work/after.err")"
	fi
	# attached: the trace after the hit with --trigger-tail
	mkdir -p "$work/tail.snap"
	"$CALLS" 3 100 500 >"$work/tail.out" &
	vp=$!
	sleep 0.2
	timeout 60 "$TRIG" "$work/up" "$work/tail.snap" --aux-size 1M --trigger tick \
		--trigger-tail 64K -p $vp >"$work/tail.aux" 2>"$work/tail.err" ||
		echo "exit $?" >>"$work/tail.err"
	wait $vp
	judge tail >"$work/tail.judge"
	if [ "$(stat_of tail 4)" = 1 ] && awk '$3 == 1 && $7 >= 65536 {ok = 1} END {exit !ok}' "$work/tail.judge"; then
		pass "uprobe/attached-trigger-tail-keeps-64K-after ($(cat "$work/tail.judge"))"
	else
		fail "uprobe/attached-trigger-tail-keeps-64K-after" "$(cat "$work/tail.judge")" "$(cat "$work/tail.err")"
	fi
else
	skip "uprobe (this kernel has no uprobe PMU)"
fi

# --- hardware breakpoints, where there is no uprobe PMU -----------------
run bp bp --trigger tick --trigger-then next -- "$CALLS" 5 100
if [ "$(stat_of bp 1)" = 5 ] && [ "$(ticks bp)" = 5 ] && grep -q "triggers (hardware breakpoints)" "$work/bp.err"; then
	pass "breakpoint/hits-equal-calls (5)"
else
	fail "breakpoint/hits-equal-calls" "$(cat "$work/bp.err")"
fi
mkdir -p "$work/bpa.snap"
"$CALLS" 4 100 500 >"$work/bpa.out" &
vp=$!
sleep 0.2
timeout 60 "$TRIG" "$work/bp" "$work/bpa.snap" --aux-size 1M --trigger tick \
	--trigger-then next -p $vp >/dev/null 2>"$work/bpa.err"
wait $vp
[ "$(stat_of bpa 1)" = 4 ] && pass "breakpoint/attached-hits-equal-calls (4)" ||
	fail "breakpoint/attached-hits-equal-calls" "$(cat "$work/bpa.err")"
run bpret bp --trigger tick:ret -- "$CALLS" 1 0 0
[ "$(cat "$work/bpret.rc")" = 2 ] && grep -q "a breakpoint cannot stop at a return" "$work/bpret.err" &&
	pass "breakpoint/return-refused" || fail "breakpoint/return-refused" "$(cat "$work/bpret.err")"

# --- windows ------------------------------------------------------------
if [ $have_uprobe = 1 ]; then
	run win up --start-at tick --stop-at tick:ret -- "$CALLS" 2 0 0
	if grep -q "aux_action known" <("$O/tests/test_live_pmu" 2>/dev/null); then
		# the kernel reads aux_resume, and wants an AUX event to lead
		if [ "$(cat "$work/win.rc")" = 2 ] &&
			grep -q "refused the start event of a trace window (Invalid argument)" "$work/win.err"; then
			pass "window/kernel-refuses-the-group-without-an-AUX-leader"
		else
			fail "window/kernel-refuses-the-group-without-an-AUX-leader" "$(cat "$work/win.err")"
		fi
	else
		skip "window/kernel-refuses-the-group-without-an-AUX-leader (kernel before 6.13)"
	fi
	export LIVE_TRIGGER_OLD_KERNEL=1
	run stop up --stop-at tick -- "$CALLS" 2 0 0
	off=$(nm "$BIN" | awk '$3 == "tick" {print $1}' | sed 's/^0*//')
	size=$(nm -S "$BIN" | awk '$4 == "tick" {print $2}' | sed 's/^0*//')
	if grep -qx "filter: stop 0x$off/0x$size@$BIN" "$work/stop.out" &&
		grep -q "stop-at becomes the address filter" "$work/stop.err"; then
		pass "window/old-kernel-stop-at-becomes-tracestop (0x$off/0x$size, nm's)"
	else
		fail "window/old-kernel-stop-at-becomes-tracestop" "$(cat "$work/stop.out" "$work/stop.err")"
	fi
	run both up --start-at tick --stop-at tick:ret -- "$CALLS" 3 50
	if [ "$(stat_of both 1)" = 3 ] && [ "$(stat_of both 4)" = 3 ] &&
		grep -q "each --stop-at takes a snapshot instead" "$work/both.err"; then
		pass "window/old-kernel-start-stop-become-snapshots (3)"
	else
		fail "window/old-kernel-start-stop-become-snapshots" "$(cat "$work/both.err")"
	fi
	run start up --start-at tick -- "$CALLS" 1 0 0
	[ "$(cat "$work/start.rc")" = 2 ] && grep -q "cannot be made here" "$work/start.err" &&
		pass "window/old-kernel-start-at-alone-refused" ||
		fail "window/old-kernel-start-at-alone-refused" "$(cat "$work/start.err")"
	unset LIVE_TRIGGER_OLD_KERNEL
fi
finish
