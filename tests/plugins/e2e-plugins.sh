#!/usr/bin/env bash
# tests/plugins/e2e-plugins.sh - plugins (strace/plugin.h) in their three
# hosts: ptrace-read --plugin, ptrace-capture --plugin (in process, before
# the ring; --no-ring), and perf's dlfilter (--dlarg plugin=).
#   - the examples on corpus traces, each host, each answer checked against
#     the same question asked another way (plugcheck.py): callcount against
#     -f report's Calls; latency against report's row; slow against the
#     slices of -f chrome; tee's ring against ptrace-read --types of the
#     source; strace_on_TYPE bound by name and a disable from inside a
#     callback against the counts of the ring's events. The same plugin
#     binary in the three hosts gives the same answer: ptrace-capture's
#     in-process events are its ring's, and the dlfilter's are its own
#     ring's;
#   - a plugin that asks to stop: the host ends with status 0, and the ring
#     is whole (ptrace-capture and perf still write every event);
#   - bad plugins (missing file, no version symbol, another version, no
#     init, init failing, an unknown pattern; a FIFO, a device, a file cut
#     short, a bus error inside dlopen): a message that names the plugin
#     and the fault, exit status 2 (perf: its own failure), nothing read,
#     no ring left behind, within a timeout (a FIFO hung dlopen);
#   - a plugin that crashes inside a following reader: the writer and the
#     other reader lose nothing;
#   - ptrace-read --follow --control: load, list, enable, disable, unload
#     and load again (fini ran, the plugin's state is new), with an ack or
#     an err for each; a FIFO or a file cut short refused by an err;
#     the control channel's lines: a line longer than a command dropped
#     whole (its tail once ran: a load was acked and loaded), a line with
#     a NUL dropped whole (it stalled every later command), a stream
#     without line ends given up, and the reader then still ends at
#     SIGTERM; a --control that is no FIFO (/dev/zero spun at 100% CPU,
#     deaf to SIGTERM) refused.
T=plugins
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
PR=$top/$O/bin/ptrace-read
CAP=$top/$O/bin/ptrace-capture
PL=$top/$O/plugins
lib=$top/$O/lib/libstrace_dlf.so
CHK="python3 $top/tests/plugins/plugcheck.py"
pids=()
on_exit() { # (then lib.sh removes $work)
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
}
# check NAME CMD...: PASS when CMD succeeds, else FAIL with its output
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi
}

for b in "$PR" "$CAP" "$lib" "$PL/callcount.so" "$PL/tee.so" "$PL/test-auto.so"; do
	[ -e "$b" ] || { fail build "$b is missing: run make tests"; exit 1; }
done
if ! command -v python3 >/dev/null; then
	skip all "python3 is needed for plugcheck.py"
	exit 0
fi
have_perf=1
command -v perf >/dev/null || have_perf=0
. "$top/tests/e2e/perfdl.inc"

# Every host names functions as perf does (--names perf, --dlarg
# names=perf): every host's plugins see the same names.
# in HOST NAME SPEC...: run the plugins SPEC... over trace NAME in HOST
# (read: its ring $work/NAME.srb; capture: the recording, no ring; dlf: the
# recording through perf into $work/NAME.dlf.srb, made once)
in_host() {
	local host=$1 name=$2 args=() s
	shift 2
	case $host in
	read)
		for s in "$@"; do args+=(--plugin "$s"); done
		"$PR" -f none "${args[@]}" "$work/$name.srb" ;;
	capture)
		for s in "$@"; do args+=(--plugin "$s"); done
		"$CAP" -q --names perf -i "$O/corpus/$name.data" --no-ring "${args[@]}" ;;
	dlf)
		for s in "$@"; do args+=(--dlarg "plugin=$s"); done
		rm -f "$work/$name.dlf2.srb"
		perfdl script -i "$O/corpus/$name.data" --itrace=b --dlfilter "$lib" \
			--dlarg names=perf --dlarg "ring=$work/$name.dlf2.srb" \
			"${args[@]}" >/dev/null ;;
	esac
}

# --- docs/plugins.md shows docs/examples/plugin.c as it is ------------------
if cmp -s <(awk '/^```c$/ {on = 1; next} /^```$/ {if (on) exit} on' docs/plugins.md) \
	<(sed -n '/^#include <stdio.h>/,$p' docs/examples/plugin.c); then
	pass "docs-example-is-the-file"
else
	fail "docs-example-is-the-file" "docs/plugins.md's example differs from docs/examples/plugin.c"
fi

# --- the examples, in every host ------------------------------------------
traces=()
for t in pgqsort threads recurse signals exceptions; do
	[ -e "$O/corpus/$t.data" ] && traces+=("$t")
done
[ ${#traces[@]} -gt 0 ] || skip examples "no corpus traces: make tests links them"

for t in "${traces[@]}"; do
	w=$work/$t
	mkdir -p "$w"
	if ! "$CAP" -q --names perf -i "$O/corpus/$t.data" -o "$work/$t.srb" 2>"$w/cap.err"; then
		fail "$t/ring" "$(cat "$w/cap.err")"
		continue
	fi
	"$PR" -f report "$work/$t.srb" >"$w/report" 2>&1
	"$PR" -f chrome -o "$w/chrome.json" "$work/$t.srb" 2>&1
	sym=$($CHK pick "$w/report") || { fail "$t/pick" "$sym"; continue; }
	thr=$($CHK threshold "$w/chrome.json" "$sym") || { fail "$t/threshold" "$thr"; continue; }
	thr_dlf=$thr
	hosts=(read capture)
	if [ $have_perf = 1 ]; then
		# the dlfilter host reads perf's branches: its ring, and the
		# report and slices of that ring, are what its plugins see
		if in_host dlf "$t" >/dev/null 2>"$w/dlf.err" &&
		   mv "$work/$t.dlf2.srb" "$work/$t.dlf.srb"; then
			"$PR" -f report "$work/$t.dlf.srb" >"$w/report.dlf" 2>&1
			"$PR" -f chrome -o "$w/chrome.dlf.json" "$work/$t.dlf.srb"
			if thr_dlf=$($CHK threshold "$w/chrome.dlf.json" "$sym"); then
				hosts+=(dlf)
			else
				fail "$t/dlf-threshold" "$thr_dlf"
			fi
		else
			skip "$t/dlf" "perf cannot decode this trace: $(head -n1 "$w/dlf.err")"
		fi
	else
		skip "$t/dlf" "no perf"
	fi
	nret=$("$PR" --types return "$work/$t.srb" | wc -l)
	ncall=$("$PR" --types call "$work/$t.srb" | wc -l)
	for h in "${hosts[@]}"; do
		s= th=$thr
		[ "$h" = dlf ] && s=.dlf th=$thr_dlf
		in_host "$h" "$t" "$PL/callcount.so:out=$w/cc.$h" \
			"$PL/latency.so:sym=$sym,out=$w/lat.$h" \
			"$PL/slow.so:sym=$sym,ns=$th,out=$w/slow.$h" \
			"$PL/test-auto.so:n=10,out=$w/auto.$h" \
			"$PL/tee.so:ring=$w/tee.$h.srb,types=call,return" \
			>"$w/run.$h" 2>&1
		rc=$?
		[ $rc = 0 ] || { fail "$t/$h/run" "exit $rc: $(head -c 800 "$w/run.$h")"; continue; }
		check "$t/$h/callcount-is-report" $CHK calls "$w/cc.$h" "$w/report$s"
		check "$t/$h/latency-is-report" $CHK latency "$w/lat.$h" "$w/report$s" "$w/chrome$s.json" "$sym"
		check "$t/$h/slow-is-chrome" $CHK slow "$w/slow.$h" "$w/chrome$s.json" "$sym" "$th"
		# tee: the calls and returns, with the definitions that name them
		"$PR" -f jsonl "$w/tee.$h.srb" >"$w/tee.$h.jsonl" 2>&1
		"$PR" -f jsonl --types call,return,process,thread,thread_exit,dso,symbol \
			"$work/$t$s.srb" >"$w/want$s.jsonl" 2>&1
		check "$t/$h/tee-is-types" $CHK jsonl "$w/tee.$h.jsonl" "$w/want$s.jsonl"
		# strace_on_call/return by name; "call" disabled at the 10th
		want="calls $((ncall < 10 ? ncall : 10)) returns $nret events 0"
		if [ "$h" = dlf ]; then
			r=$("$PR" --types return "$work/$t.dlf.srb" | wc -l)
			c=$("$PR" --types call "$work/$t.dlf.srb" | wc -l)
			want="calls $((c < 10 ? c : 10)) returns $r events 0"
		fi
		if [ "$(cat "$w/auto.$h")" = "$want" ]; then
			pass "$t/$h/auto-bound-and-disabled"
		else
			fail "$t/$h/auto-bound-and-disabled" "got '$(cat "$w/auto.$h")', want '$want'"
		fi
	done
	# the reader's filters: its plugins get the events --sym (and, with
	# threads, --tid) keep (handed over a run of kept events at a time),
	# which -f report with the same filter counts too; and not all of them
	filters=("--sym $sym")
	tid=$("$PR" -f jsonl --types call "$work/$t.srb" | python3 -c '
import collections, json, sys
c = collections.Counter(json.loads(l)["tid"] for l in sys.stdin)
print(c.most_common()[-1][0] if len(c) > 1 else "")')
	[ -n "$tid" ] && filters+=("--tid $tid")
	for f in "${filters[@]}"; do
		n=${f%% *}
		n=${n#--}
		# shellcheck disable=SC2086
		"$PR" -f none $f --plugin "$PL/callcount.so:out=$w/cc.$n" "$work/$t.srb" &&
			"$PR" -f report $f "$work/$t.srb" >"$w/report.$n" 2>&1
		check "$t/read-$n-filter/callcount-is-report" $CHK calls "$w/cc.$n" "$w/report.$n"
		if cmp -s "$w/cc.$n" "$w/cc.read"; then
			fail "$t/read-$n-filter/kept-fewer" "the plugin saw every event: $f kept all"
		else
			pass "$t/read-$n-filter/kept-fewer"
		fi
	done
	# one binary, one answer: ptrace-capture's plugins saw its ring's
	# events, the reader's saw the ring
	for f in cc lat slow auto; do
		if cmp -s "$w/$f.read" "$w/$f.capture"; then
			pass "$t/$f-capture-is-read"
		else
			fail "$t/$f-capture-is-read" "$(diff "$w/$f.read" "$w/$f.capture" | head -5)"
		fi
	done
	# decoded by 2 threads at once, handed over from both: the threads'
	# events interleave otherwise, each thread's in order
	"$CAP" -q --names perf -j2 -i "$O/corpus/$t.data" --no-ring \
		--plugin "$PL/callcount.so:out=$w/cc.j2" \
		--plugin "$PL/slow.so:sym=$sym,ns=$thr,out=$w/slow.j2" 2>"$w/j2.err"
	if cmp -s "$w/cc.read" "$w/cc.j2" &&
	   cmp -s <(sort "$w/slow.read") <(sort "$w/slow.j2"); then
		pass "$t/capture-j2-is-read"
	else
		fail "$t/capture-j2-is-read" "$(diff "$w/cc.read" "$w/cc.j2" | head -5)" "$(cat "$w/j2.err")"
	fi
	if [ -e "$work/$t.dlf.srb" ]; then
		"$PR" -f none --plugin "$PL/callcount.so:out=$w/cc.dlfread" "$work/$t.dlf.srb"
		if cmp -s "$w/cc.dlf" "$w/cc.dlfread"; then
			pass "$t/callcount-dlf-is-read"
		else
			fail "$t/callcount-dlf-is-read" "$(diff "$w/cc.dlf" "$w/cc.dlfread" | head -5)"
		fi
	fi
done

# --- a plugin that stops ----------------------------------------------------
if [ ${#traces[@]} -gt 0 ]; then
	t=${traces[0]}
	w=$work/stop
	mkdir -p "$w"
	sum=$("$PR" -f raw "$work/$t.srb" | md5sum)
	"$PR" -f none --plugin "$PL/test-stop.so:n=5,out=$w/read" "$work/$t.srb" 2>"$w/err"
	rc=$?
	if [ $rc = 0 ] && [ "$(cat "$w/read")" = "calls 5 returns 0 events 0" ] &&
	   [ "$("$PR" -f raw "$work/$t.srb" | md5sum)" = "$sum" ]; then
		pass "stop/read"
	else
		fail "stop/read" "exit $rc, '$(cat "$w/read" 2>/dev/null)': $(cat "$w/err")"
	fi
	# the decode goes on: the ring holds every event
	"$CAP" -q --names perf -i "$O/corpus/$t.data" -o "$w/cap.srb" \
		--plugin "$PL/test-stop.so:n=5,out=$w/cap" 2>"$w/err"
	rc=$?
	if [ $rc = 0 ] && [ "$(cat "$w/cap")" = "calls 5 returns 0 events 0" ] &&
	   "$PR" -f raw "$w/cap.srb" | cmp -s - <("$PR" -f raw "$work/$t.srb"); then
		pass "stop/capture"
	else
		fail "stop/capture" "exit $rc, '$(cat "$w/cap" 2>/dev/null)': $(cat "$w/err")"
	fi
	if [ $have_perf = 1 ] && [ -e "$work/$t.dlf.srb" ]; then
		perfdl script -i "$O/corpus/$t.data" --itrace=b --dlfilter "$lib" \
			--dlarg names=perf --dlarg "ring=$w/dlf.srb" \
			--dlarg "plugin=$PL/test-stop.so:n=5,out=$w/dlf" \
			>/dev/null 2>"$w/err"
		rc=$?
		if [ $rc = 0 ] && [ "$(cat "$w/dlf")" = "calls 5 returns 0 events 0" ] &&
		   [ "$("$PR" -f raw "$w/dlf.srb" | wc -c)" = "$("$PR" -f raw "$work/$t.dlf.srb" | wc -c)" ]; then
			pass "stop/dlf"
		else
			fail "stop/dlf" "exit $rc, '$(cat "$w/dlf" 2>/dev/null)': $(cat "$w/err")"
		fi
	fi
fi

# --- bad plugins ------------------------------------------------------------
"$PR" --generate 1000 -o "$work/gen.srb" --mode flight >/dev/null 2>&1
[ -e "$work/gen.srb" ] || fail "bad/setup" "ptrace-read --generate made no ring"
# dlopen blocked on a FIFO for a writer; a plugin cut short inside a
# segment died of SIGBUS in dlopen (blamed on the ring by ptrace-read,
# exit 135 and a ring left by ptrace-capture); test-bus's constructor
# raises one inside dlopen, as a file cut short meanwhile would
mkfifo "$work/fifo.so"
head -c 4096 "$PL/callcount.so" >"$work/short.so"
bad_cases=(
	"fifo|$work/fifo.so|plugin $work/fifo.so: cannot load it: it is a FIFO"
	"device|/dev/zero|plugin /dev/zero: cannot load it: it is a character device"
	"short|$work/short.so|plugin $work/short.so: the file is cut short (4096 bytes"
	"bus|$PL/test-bus.so|plugin $PL/test-bus.so: its load died of a bus error"
	"missing|$PL/nothere.so|cannot load it"
	"noversion|$PL/test-noversion.so|exports no strace_plugin_api_version"
	"oldversion|$PL/test-oldversion.so|built for plugin API version 101"
	"noinit|$PL/test-noinit.so|exports no strace_plugin_init"
	"initfail|$PL/test-initfail.so|its init failed"
	"badpattern|$PL/test-badpattern.so|pattern 'cal' matches no event type"
	"teeargs|$PL/tee.so|where to? give ring=PATH"
)
for c in "${bad_cases[@]}"; do
	IFS='|' read -r name spec msg <<<"$c"
	timeout 20 "$PR" -f none --plugin "$spec" "$work/gen.srb" >"$work/bad.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -qF "$msg" "$work/bad.out" &&
	   ! grep -q "seq\|pid=" "$work/bad.out"; then
		pass "bad/$name/read"
	else
		fail "bad/$name/read" "exit $rc (want 2): $(head -c 500 "$work/bad.out")"
	fi
	[ ${#traces[@]} -gt 0 ] || continue
	rm -f "$work/bad.srb"
	timeout 20 "$CAP" -q -i "$O/corpus/${traces[0]}.data" -o "$work/bad.srb" \
		--plugin "$spec" >"$work/bad.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -qF "$msg" "$work/bad.out" && [ ! -e "$work/bad.srb" ]; then
		pass "bad/$name/capture"
	else
		fail "bad/$name/capture" "exit $rc (want 2), ring left: $([ -e "$work/bad.srb" ] && echo yes || echo no): $(head -c 500 "$work/bad.out")"
	fi
	[ $have_perf = 1 ] || continue
	PERFDL_TIMEOUT=20 perfdl script -i "$O/corpus/${traces[0]}.data" --itrace=b --dlfilter "$lib" \
		--dlarg "ring=$work/bad.srb" --dlarg "plugin=$spec" >"$work/bad.out" 2>&1
	rc=$?
	if [ $rc != 0 ] && grep -qF "$msg" "$work/bad.out" && [ ! -e "$work/bad.srb" ]; then
		pass "bad/$name/dlf"
	else
		fail "bad/$name/dlf" "perf exit $rc (want non-zero), ring left: $([ -e "$work/bad.srb" ] && echo yes || echo no): $(head -c 500 "$work/bad.out")"
	fi
done
"$PR" -f none "$work/gen.srb" >"$work/bad.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "give them with --plugin" "$work/bad.out"; then
	pass "bad/none-without-plugin"
else
	fail "bad/none-without-plugin" "exit $rc: $(cat "$work/bad.out")"
fi
"$CAP" -i "$O/corpus/${traces[0]:-x}.data" --no-ring >"$work/bad.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "give them with --plugin" "$work/bad.out"; then
	pass "bad/no-ring-without-plugin"
else
	fail "bad/no-ring-without-plugin" "exit $rc: $(cat "$work/bad.out")"
fi

# --- a plugin named without a '/', in the current directory -----------------
# (dlopen looks a bare name up in the library path, never here: it was
# "cannot load it")
mkdir -p "$work/cwd"
cp "$PL/test-auto.so" "$work/cwd/mine.so"
(cd "$work/cwd" && timeout 20 "$PR" -f none --plugin "mine.so:n=1,out=$work/cwd/out" \
	"$work/gen.srb") >"$work/cwd/err" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^calls 1 returns" "$work/cwd/out" 2>/dev/null; then
	pass "bare-name-in-cwd"
else
	fail "bare-name-in-cwd" "exit $rc: $(head -c 300 "$work/cwd/err")"
fi

# --- a plugin that registers 8000 callbacks ----------------------------------
# Each on() once rebuilt the whole table (O(registrations x types)): 8000
# took 17 s. Now init's registrations are built once, at the end of the
# load (a second is plenty; 5 s is only the hang guard). Every callback
# runs once per call event, in registration order.
ncall=$(( $("$PR" -f raw --types call "$work/gen.srb" | wc -c) / 32 ))
t0=$(date +%s%N)
timeout 5 "$PR" -f none --plugin "$PL/test-many.so:n=8000,out=$work/many.out" \
	"$work/gen.srb" >"$work/many.err" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $rc = 0 ] && [ $ncall -gt 0 ] &&
   [ "$(cat "$work/many.out")" = "calls $((ncall * 8000)) returns 0 events 0" ]; then
	pass "many/8000-callbacks-read"
	echo "($T: 8000 registrations loaded and run in $ms ms)"
else
	fail "many/8000-callbacks-read" "exit $rc (124: over 5 s) after $ms ms, '$(cat "$work/many.out" 2>/dev/null)' (want calls $((ncall * 8000)) returns 0 events 0): $(head -c 300 "$work/many.err")"
fi
if [ ${#traces[@]} -gt 0 ]; then
	t=${traces[0]}
	ncall=$(( $("$PR" -f raw --types call "$work/$t.srb" | wc -c) / 32 ))
	timeout 20 "$CAP" -q --names perf -i "$O/corpus/$t.data" --no-ring \
		--plugin "$PL/test-many.so:n=8000,out=$work/many.out" >"$work/many.err" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ $ncall -gt 0 ] &&
	   [ "$(cat "$work/many.out")" = "calls $((ncall * 8000)) returns 0 events 0" ]; then
		pass "many/8000-callbacks-capture"
	else
		fail "many/8000-callbacks-capture" "exit $rc, '$(cat "$work/many.out" 2>/dev/null)' (want calls $((ncall * 8000)) returns 0 events 0): $(head -c 300 "$work/many.err")"
	fi
fi

# --- a plugin that crashes in a following reader ------------------------------
# The writer waits for two readers (lossless); one runs a plugin that
# dereferences NULL at its 100000th event. The other must get every event,
# and the writer must finish.
N=3000000
w=$work/crash
mkdir -p "$w"
ring=/dev/shm/e2e_plugins_$$.srb
rm -f "$ring"
"$PR" --generate $N -o "$ring" --readers 2 --capacity 65536 >"$w/gen.out" 2>&1 &
gen=$!
pids+=($gen)
"$PR" --follow --timeout 10000 -f none --plugin "$PL/test-crash.so:n=100000" "$ring" \
	>"$w/crash.out" 2>&1 &
crash=$!
pids+=($crash)
"$PR" --follow --timeout 10000 -f raw "$ring" 2>"$w/other.err" | wc -c >"$w/other.bytes" &
other=$!
pids+=($other)
wait $crash
crc=$?
wait $gen
grc=$?
wait $other
orc=$("$PR" -f raw "$ring" 2>/dev/null | wc -c) # (the ring wrapped: not all)
bytes=$(cat "$w/other.bytes")
rm -f "$ring"
if [ $crc -ne 0 ] && [ $grc = 0 ] && [ "$bytes" -ge $((N * 32)) ] &&
   ! grep -q lost "$w/other.err"; then
	pass "crash/others-lose-nothing"
else
	fail "crash/others-lose-nothing" "crashing reader exit $crc (want a crash), writer exit $grc, other reader $bytes bytes (want >= $((N * 32))): $(cat "$w/gen.out" "$w/other.err" | head -c 600)"
fi

# --- load and unload at run time -------------------------------------------
w=$work/ctl
mkdir -p "$w"
mkfifo "$w/ctl" "$w/ack"
exec 4<>"$w/ack"
ring=/dev/shm/e2e_plugins_ctl_$$.srb
rm -f "$ring"
"$PR" --generate 4000000000 -o "$ring" --readers 1 --capacity 65536 >/dev/null 2>&1 &
gen=$!
pids+=($gen)
"$PR" --follow --timeout 10000 -f none --control "fifo:$w/ctl,$w/ack" "$ring" \
	>"$w/reader.out" 2>&1 &
reader=$!
pids+=($reader)
# cmd COMMAND WANT: send, then read the answer's lines up to ack or err
cmd() {
	local c=$1 want=$2 got="" line
	echo "$c" >"$w/ctl"
	while read -r -t 20 line <&4; do
		got="$got$line;"
		case $line in ack | err*) break ;; esac
	done
	case $got in
	$want) pass "control/$3" ;;
	*) fail "control/$3" "'$c' answered '$got', want '$want'" ;;
	esac
}
cmd "load $PL/test-auto.so:n=10,out=$w/a1" "ack;" load
cmd "list" "test-auto $PL/test-auto.so *;ack;" list
cmd "disable return" "ack;" disable
cmd "enable return" "ack;" enable
cmd "enable bogus*" "err pattern 'bogus*' matches no event type*" enable-bad
cmd "load $PL/nothere.so" "err plugin $PL/nothere.so: cannot load it*" load-missing
cmd "load $PL/test-auto.so" "err*loaded already*" load-twice
cmd "load $work/fifo.so" "err plugin $work/fifo.so: cannot load it: it is a FIFO*" load-fifo
cmd "load $work/short.so" "err plugin $work/short.so: the file is cut short*" load-short
sleep 0.5 # events meanwhile: returns, with "return" enabled again
cmd "unload test-auto" "ack;" unload
if grep -q "^calls 10 returns [1-9]" "$w/a1" 2>/dev/null; then
	pass "control/fini-at-unload"
else
	fail "control/fini-at-unload" "after unload: '$(cat "$w/a1" 2>/dev/null)'"
fi
cmd "load $PL/test-auto.so n=3 out=$w/a2" "ack;" reload
sleep 0.5 # events meanwhile
cmd "unload test-auto" "ack;" unload-again
if grep -q "^calls 3 returns [1-9]" "$w/a2" 2>/dev/null; then
	pass "control/reload-is-fresh"
else
	fail "control/reload-is-fresh" "after the second unload: '$(cat "$w/a2" 2>/dev/null)'"
fi
cmd "unload test-auto" "err no plugin named test-auto*" unload-missing
cmd "frobnicate" "err unknown command 'frobnicate'*" unknown
cmd "list" "ack;" list-empty
# 2000 bytes whose tail, after the first 1023, is a load: nothing loads
long=$(printf '%*s' 1023 '' | tr ' ' x)"load $PL/test-auto.so:n=1,out=$w/tail"
long=$(printf '%-2000s' "$long")
cmd "$long" "err a line longer than 1023 bytes: dropped whole, not run*" long-line
cmd "list" "ack;" long-line-tail-not-run
# a NUL: its whole line answered by an err, and the next command runs
printf 'list\0unload test-auto\n' >"$w/ctl"
got=""
read -r -t 20 got <&4
case $got in
"err a line with a NUL byte: dropped whole, not run"*) pass "control/nul-line" ;;
*) fail "control/nul-line" "a line with a NUL answered '$got'" ;;
esac
cmd "list" "ack;" after-nul-line
# bytes without an end: given up after 1 MiB (cat then dies of SIGPIPE)
cat /dev/zero >"$w/ctl" 2>/dev/null &
zero=$!
pids+=($zero)
# gone PID SECONDS: whether PID ended within SECONDS (else killed)
gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	return 1
}
if gone $zero 20 && grep -q "more than 1048576 bytes without a line end: not a stream of commands" "$w/reader.out"; then
	pass "control/endless-given-up"
else
	fail "control/endless-given-up" "the reader still reads zeros after 20 s: $(head -c 300 "$w/reader.out")"
fi
kill -TERM $reader
if gone $reader 10; then
	wait $reader
	rrc=$?
else
	rrc="none: SIGTERM did not end it in 10 s"
fi
kill $gen 2>/dev/null
wait $gen 2>/dev/null
rm -f "$ring"
exec 4<&-
if [ "$rrc" = 0 ] || [ "$rrc" = 3 ]; then
	pass "control/reader-ends"
else
	fail "control/reader-ends" "exit $rrc: $(head -c 500 "$w/reader.out")"
fi

# --control that is no FIFO: refused (/dev/zero was read forever)
for c in /dev/zero "$work/gen.srb"; do
	timeout -k 2 10 "$PR" --follow -f none --control "$c" "$work/gen.srb" >"$work/ctl.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -qF -- "--control $c: not a FIFO" "$work/ctl.out"; then
		pass "control/not-a-fifo-${c##*/}"
	else
		fail "control/not-a-fifo-${c##*/}" "exit $rc (want 2; 124, 137: it ran on): $(head -c 300 "$work/ctl.out")"
	fi
done

# a control FIFO others may write into: refused (whoever writes it loads
# plugins, code, into the reader)
mkfifo -m 622 "$work/open.ctl"
chmod 622 "$work/open.ctl"
timeout -k 2 10 "$PR" --follow -f none --control "$work/open.ctl" "$work/gen.srb" >"$work/ctl.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -qF "others may write into it" "$work/ctl.out"; then
	pass "control/others-may-write"
else
	fail "control/others-may-write" "exit $rc (want 2): $(head -c 300 "$work/ctl.out")"
fi

echo "($T: $nfail failed)"
finish
