#!/usr/bin/env bash
# The output ring on a file system that fills up (a 256 KiB tmpfs, mounted
# here: root only, else SKIP): ptrace-capture -i and the dlfilter each stop
# with a message naming the ring and ENOSPC, exit non-zero, and do not die
# of SIGBUS; what the dlfilter wrote before reads back to its end. The
# viewer formats writing there (ptrace-read -f uftrace -o DIR, -f chrome,
# -f fxt) stop the same way, naming the file.
T=ring-full-fs
. "$(dirname "$0")/lib.sh"
cd "$top"
bin=$O/bin
lib=$top/$O/lib/libstrace_dlf.so
data=$O/corpus/sort.data

if [ ! -e "$data" ]; then
	echo "FAIL: ring-full-fs/input ($data missing: make tests links the corpus)"
	exit 1
fi
mnt=$work/mnt
err=$work/err # not on the full file system
mkdir "$mnt"
if ! mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null; then
	echo "SKIP: ring-full-fs/all (mounting a small tmpfs needs root)"
	exit 0
fi
ring=$(mktemp -u /dev/shm/ring-full-fs.XXXXXX).srb # the views' input
on_exit() { umount "$mnt"; rm -f "$ring"; }
# a crash, not an error: killed by SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV
crashed() { case $1 in 132 | 134 | 135 | 136 | 139) return 0 ;; esac; return 1; }

"$bin/ptrace-capture" -q -i "$data" -o "$mnt/c.srb" 2>"$err"
rc=$?
if [ $rc -eq 1 ] && grep -q "cannot write the ring $mnt/c.srb: No space left on device" "$err" &&
	[ ! -e "$mnt/c.srb" ]; then
	pass "capture (exit 1: $(cat "$err"))"
else
	fail capture "exit $rc (want 1, a message, the ring removed): $(cat "$err")"
fi

# the viewer formats, from a ring off the full file system, with 16 KiB
# left on it (less than any view of the trace takes, however small the
# trace)
if "$bin/ptrace-capture" -q -i "$data" -o "$ring" 2>"$err"; then
	head -c $((240 * 1024)) /dev/zero >"$mnt/filler" 2>/dev/null
	for f in uftrace chrome fxt; do
		"$bin/ptrace-read" -f $f -o "$mnt/view.$f" "$ring" 2>"$err"
		rc=$?
		if [ $rc -eq 1 ] && grep -q "$mnt/view.$f.*write failed.*No space left on device\|$mnt/view.$f.*No space left on device.*write failed" "$err"; then
			pass "view-$f (exit 1: $(cat "$err"))"
		else
			fail "view-$f" "exit $rc (want 1 and a message naming the file): $(cat "$err")"
		fi
		rm -rf "$mnt/view.$f"
	done
	rm -f "$mnt/filler"
else
	fail view-input "ptrace-capture into $ring: $(cat "$err")"
fi
rm -f "$ring"

if command -v perf >/dev/null; then
	. "$top/tests/e2e/perfdl.inc"
	perfdl script -i "$data" --itrace=b --dlfilter "$lib" --dlarg "ring=$mnt/d.srb" \
		>/dev/null 2>"$err"
	rc=$?
	if [ $rc -ne 0 ] && ! crashed $rc &&
		grep -q "cannot write to the ring $mnt/d.srb: No space left on device" "$err"; then
		pass "dlfilter (perf exit $rc: $(grep -m1 'cannot write' "$err"))"
	else
		fail dlfilter "perf exit $rc (want an error exit, not a signal): $(head -3 "$err")"
	fi
	raw=$(mktemp)
	"$bin/ptrace-read" -f raw -o "$raw" "$mnt/d.srb" 2>"$err"
	rc=$?
	n=$(wc -c < "$raw")
	rm -f "$raw"
	# the ring ends with the batch that could not be written, as a lost
	# event (flags 5): the read says so and exits 3
	if [ "$rc" -eq 3 ] && [ "$n" -gt 0 ] &&
		grep -q "$mnt/d.srb: the ring records [0-9]* lost events" "$err"; then
		pass "dlfilter-ring-reads ($((n / 32)) events up to where the space ran out, then the loss: exit 3)"
	else
		fail dlfilter-ring-reads "ptrace-read exit $rc (want 3), $n bytes: $(cat "$err")"
	fi
	"$bin/ptrace-read" -f jsonl --types lost "$mnt/d.srb" 2>/dev/null | tail -1 > "$err"
	if grep -q '"type":"lost".*"flags":5' "$err"; then
		pass "dlfilter-ring-ends-with-write-loss"
	else
		fail dlfilter-ring-ends-with-write-loss "$(cat "$err")"
	fi
else
	echo "SKIP: ring-full-fs/dlfilter (perf not installed)"
fi
finish
