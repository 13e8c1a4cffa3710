#!/usr/bin/env bash
# tests/e2e/messages.sh - what a new user sees after the usual mistakes:
# each check runs the mistake and checks the text on the screen and the
# exit status (issue 12, item 7). The texts are the ones the user reads,
# so a change to a message changes this test on purpose.
# Env: O (build dir).
T=messages
. "$(dirname "$0")/lib.sh"
cd "$top"
cap=$top/$O/bin/ptrace-capture
rd=$top/$O/bin/ptrace-read
lib=$top/$O/lib/libstrace_dlf.so
data=$top/$O/corpus/threads.data
# has NAME RC WANT_RC FILE TEXT...: exit status and every text in FILE
has() {
	local name=$1 rc=$2 want=$3 file=$4 t
	shift 4
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, want $want" "$(cat "$file")"
		return
	fi
	for t in "$@"; do
		if ! grep -qF -- "$t" "$file"; then
			fail "$name" "no '$t' in:" "$(cat "$file")"
			return
		fi
	done
	pass "$name"
}
for b in "$cap" "$rd" "$data"; do
	[ -e "$b" ] || { echo "FAIL: messages/build ($b missing: make tests)"; exit 1; }
done
out=$work/out

# -i of something that is not a perf.data file
"$cap" -i /dev/null -o "$work/a.srb" 2>"$out"
has input-device $? 1 "$out" "ptrace-capture: -i /dev/null: a character device, not a perf.data file: give the file that 'perf record -o FILE' wrote"
[ -e "$work/a.srb" ] && fail input-device-ring-left "$work/a.srb"
"$cap" -i "$work" -o "$work/a.srb" 2>"$out"
has input-directory $? 1 "$out" "-i $work: a directory, not a perf.data file" "e.g. perf.data in that directory"

# the ring's path from $STRACE_RING: an existing file, a missing directory
touch "$work/exists.srb"
STRACE_RING=$work/exists.srb "$cap" -q -i "$data" 2>"$out"
has strace-ring-exists $? 1 "$out" "ptrace-capture: cannot create the ring $work/exists.srb (from \$STRACE_RING): a file is there already, and a ring is never written over one: remove it, or name a new file with -o PATH (or in \$STRACE_RING)"
STRACE_RING=$work/nodir/x.srb "$cap" -q -i "$data" 2>"$out"
has strace-ring-no-dir $? 1 "$out" "cannot create the ring $work/nodir/x.srb (from \$STRACE_RING): the directory $work/nodir does not exist: create it"
"$cap" -q -i "$data" -o "$work/nodir/x.srb" 2>"$out"
has output-no-dir $? 1 "$out" "cannot create the ring $work/nodir/x.srb (-o): the directory $work/nodir does not exist"

# a directory the user cannot write to: the directory is the problem
mkdir "$work/ro" && chmod 0555 "$work/ro"
chmod 0755 "$work"
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$rd" --generate 10 -o "$work/ro/g.srb" 2>"$out"
	has generate-unwritable-dir $? 1 "$out" "ptrace-read: cannot create the ring $work/ro/g.srb (-o): you cannot create files in $work/ro (Permission denied): name a ring in a directory you can write to"
	grep -q "0600" "$out" && fail generate-unwritable-dir-no-mode-hint "$(cat "$out")"
else
	echo "SKIP: messages/generate-unwritable-dir (needs root to run as another user)"
fi

# -f ring into a file system that fills up: no --capacity hint (refused
# with -f ring)
"$cap" -q -i "$data" -o "$work/t.srb" 2>/dev/null
"$rd" --generate 100000 -o "$work/big.srb" >/dev/null # 3.2 MB of events
mnt=$work/small
mkdir "$mnt"
if mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null; then
	"$rd" -f ring -o "$mnt/x.srb" "$work/big.srb" 2>"$out"
	has save-ring-no-space $? 1 "$out" "ptrace-read: cannot write the ring $mnt/x.srb: No space left on device: $mnt has no room for more" "write the ring elsewhere with -o PATH"
	grep -q -- "--capacity" "$out" && fail save-ring-no-capacity-hint "$(cat "$out")"
	umount "$mnt"
else
	echo "SKIP: messages/save-ring-no-space (mounting a small tmpfs needs root)"
fi

# --types: a pattern that names nothing; -symbol, the help's own example
"$cap" --types calls -i "$data" -o "$work/b.srb" 2>"$out"
has types-typo $? 2 "$out" "ptrace-capture: --types: 'calls' matches no event type (ptrace-read --list-types lists them)"
"$cap" --help | grep -q -- "--types PATTERNS  keep only these event types (call,ret\*,-symbol)"
has types-help-example $? 0 /dev/null
"$cap" -q --types=-symbol -i "$data" -o "$work/c.srb" 2>"$out"
rc=$?
nsym=$("$rd" --types symbol "$work/c.srb" | wc -l)
named=$("$rd" --types call "$work/c.srb" | grep -c '<main')
if [ $rc -eq 0 ] && [ "$nsym" -eq 0 ] && [ "$named" -gt 0 ]; then
	pass "types-minus-symbol (no symbol events; calls still named: $named name main)"
else
	fail types-minus-symbol "exit $rc, $nsym symbol events, $named calls naming main"
fi

# --tid of a thread the recording does not have
"$cap" -i "$data" --tid 1 -o "$work/d.srb" 2>"$out"
rc=$?
tids=$("$rd" -f jsonl --types thread,process "$work/t.srb" | python3 -c '
import json, sys
print(" ".join(sorted({str(json.loads(l)["tid"]) for l in sys.stdin})))')
has tid-unknown $rc 1 "$out" "ptrace-capture: $data: the recording has no thread 1; its threads are " ": give --tid one of them"
for t in $tids; do
	grep -q "$t (" "$out" || fail "tid-unknown-lists-$t" "$(cat "$out")"
done
[ -e "$work/d.srb" ] && fail tid-unknown-ring-left "$work/d.srb"

# a process that does not exist; no Intel PT here: both, and status 4
if [ ! -e /sys/bus/event_source/devices/intel_pt ]; then
	"$cap" -p 999999 -o "$work/e.srb" 2>"$out"
	has pid-missing-and-no-pt $? 1 "$out" "ptrace-capture: no process with pid 999999" "ptrace-capture: also, Intel PT is not available on this machine"
	"$cap" -o "$work/f.srb" -- true 2>"$out"
	has no-pt-status-4 $? 4 "$out" "ptrace-capture: Intel PT is not available"
else
	echo "SKIP: messages/pid-missing-and-no-pt (this machine has Intel PT)"
fi
"$cap" --frobnicate 2>"$out"
has usage-status-2 $? 2 "$out" "ptrace-capture: unrecognized option '--frobnicate'"
"$rd" --frobnicate 2>"$out"
has read-usage-names-program $? 2 "$out" "ptrace-read: unrecognized option '--frobnicate'"
grep -q "$O/bin/ptrace-read" "$out" && fail read-usage-no-path "$(cat "$out")"

# --follow of a ring that never comes: said once, after a second
timeout 2 "$rd" --follow "$work/typo.srb" 2>"$out"
has follow-waits-and-says $? 124 "$out" "ptrace-read: $work/typo.srb: no such ring yet: waiting for a writer to create it (Ctrl-C stops; --timeout MS gives up)"
[ "$(wc -l <"$out")" -eq 1 ] || fail follow-says-once "$(cat "$out")"

# the dlfilter without --itrace=b
if command -v perf >/dev/null; then
	. tests/e2e/perfdl.inc
	perfdl script -i "$data" --dlfilter "$lib" --dlarg ring="$work/g.srb" \
		>/dev/null 2>"$out"
	rc=$?
	nerr=$("$rd" --types error "$work/g.srb" | wc -l)
	has dlfilter-no-itrace-b $rc 0 "$out" "libstrace_dlf: perf gave " "branch samples, none of them a return or a jump" "run perf script with --itrace=b"
	[ "$nerr" -eq 0 ] || fail dlfilter-no-itrace-b-no-errors "$nerr error events"
	perfdl script -i "$data" --itrace=i100 --dlfilter "$lib" \
		--dlarg ring="$work/h.srb" >/dev/null 2>"$out"
	has dlfilter-instructions $? 0 "$out" "libstrace_dlf: perf gave no branch samples" "run perf script with --itrace=b"
	perfdl script -i "$data" --itrace=b --dlfilter "$lib" \
		--dlarg ring="$work/i.srb" >/dev/null 2>"$out"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q "itrace" "$out"; then
		pass dlfilter-itrace-b-quiet
	else
		fail dlfilter-itrace-b-quiet "exit $rc" "$(cat "$out")"
	fi
else
	echo "SKIP: messages/dlfilter (perf not installed)"
fi

# the Makefile asks pkg-config only when it builds, not while it is read
# (make demo and make check install Capstone first)
cat >"$work/pkg-config" <<EOF
#!/bin/sh
echo "\$*" >>"$work/pkg-config.log"
exit 1
EOF
chmod +x "$work/pkg-config"
make -n --no-print-directory PKG_CONFIG="$work/pkg-config" deps-test >/dev/null 2>&1
if [ ! -s "$work/pkg-config.log" ]; then
	pass makefile-no-pkg-config-when-read
else
	fail makefile-no-pkg-config-when-read "called: $(cat "$work/pkg-config.log")"
fi

# the progress line on a terminal: done, speed, events so far, time left
# (the decode held back by a slow reader of a small lossless ring, so
# that it lasts past the line's first second)
if command -v script >/dev/null; then
	rm -f "$work/prog.srb"
	script -qec "'$cap' --mode lossless --capacity 4096 --wait-readers 1 -i '$top/$O/corpus/exceptions.data' -o '$work/prog.srb'" \
		/dev/null >"$work/prog.out" 2>&1 &
	spid=$!
	"$rd" --follow --timeout 20000 "$work/prog.srb" 2>/dev/null | { sleep 1.5; cat >/dev/null; }
	wait $spid
	if tr '\r' '\n' <"$work/prog.out" | grep -qE '^\[=+ *\] +[0-9]+% [0-9.]+ MB/s, [0-9]+ events, [0-9]+ s left'; then
		pass "progress-line ($(tr '\r' '\n' <"$work/prog.out" | grep -E 'events, [0-9]+ s left' | tail -1 | sed 's/^.*\] *//'))"
	else
		fail progress-line "$(tr '\r' '\n' <"$work/prog.out" | head -5)"
	fi
else
	echo "SKIP: messages/progress-line (script(1) is needed for a terminal)"
fi

finish
