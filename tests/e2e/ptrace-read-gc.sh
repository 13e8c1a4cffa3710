#!/usr/bin/env bash
# tests/e2e/ptrace-read-gc.sh - rings left behind (issue 12, item 9): the
# texts the user sees.
#  - ptrace-read --stat DIR and --stat (the default directory, through
#    $STRACE_RING): one line per file, its memory, mode, creation, state
#    (stale, live writer pid, another user's, not a ring, FIFO, symlink),
#    and a last line that sums the stale rings and names --gc.
#  - ptrace-read --gc [DIR]: each removed ring with its bytes, a total, what
#    was left and why; everything but the stale rings is still there; a
#    ring it cannot remove: a message naming it, exit 1.
#  - the last line of ptrace-capture's summary (-i, --pt) and of the
#    dlfilter's: where the ring is, how much it holds, in memory or on
#    disk, how to remove it.
# Everything happens in a temporary directory, but for two rings this test
# makes in /dev/shm (to see "in memory") and removes.
T=ptrace-read-gc
. "$(dirname "$0")/lib.sh"
cd "$top"
PR=$bin/ptrace-read
shm=/dev/shm/strace_$$_ptrace-read-gc.srb
pids=()
on_exit() { # (then lib.sh removes $work)
	for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p" 2>/dev/null; done
	chattr -i "$work/ro" 2>/dev/null
	rm -f "$shm" /dev/shm/ptrace-read-gc-$$.srb
}
# expect NAME FILE REGEX: some line of FILE matches REGEX entirely
expect() {
	if grep -qE "^$3\$" "$2"; then pass "$1"; else fail "$1" "no line matching: $3" "in:" "$(cat "$2")"; fi
}
# expect_last NAME FILE REGEX: the last line of FILE matches REGEX
expect_last() {
	if tail -n 1 "$2" | grep -qE "^$3\$"; then pass "$1"; else fail "$1" "last line not matching: $3" "in:" "$(cat "$2")"; fi
}
[ -x "$PR" ] || { echo "FAIL: $T/build ($PR missing)"; exit 1; }
# a path as an extended regular expression
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }
# bytes in the units ptrace-read prints
human() { awk -v b="$1" 'BEGIN { if (b < 1000) printf "%d B", b; else if (b < 1e6) printf "%.1f kB", b / 1e3; else if (b < 1e9) printf "%.1f MB", b / 1e6; else printf "%.1f GB", b / 1e9 }'; }
mem() { echo $(($(stat -c '%b * %B' "$1"))); }
WHEN='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}'

# --- a directory of every kind ------------------------------------------
D=$work/rings
mkdir -p "$D"
"$PR" --generate 1000 -o "$D/a.srb"
"$PR" --generate 100 --mode flight --capacity 1024 -o "$D/b.srb"
# live: the writer waits for a reader that never comes
"$PR" --generate 100 -o "$D/live.srb" --readers 1 --timeout 60000 &
wpid=$!; pids+=($wpid)
echo 'not a ring' > "$D/notes.txt"
head -c 20000 /dev/urandom > "$D/strace_1_junk.srb"
mkfifo "$D/strace_2_fifo.srb"
"$PR" --generate 10 -o "$work/target.srb"
ln -s "$work/target.srb" "$D/strace_3_link.srb"
others=0
if "$PR" --generate 10 -o "$D/nobody.srb" && chown nobody "$D/nobody.srb" 2>/dev/null; then
	others=1
else
	rm -f "$D/nobody.srb"
fi
# (until its writer is open: before, its creator alone keeps it)
for _ in $(seq 200); do
	"$PR" --stat "$D/live.srb" 2>/dev/null | grep -q '^writers: *1 live' && break
	sleep 0.05
done

"$PR" --stat "$D" > "$work/list" 2> "$work/err"; rc=$?
check stat_dir_exit_0 [ $rc -eq 0 ]
check stat_dir_quiet_stderr [ ! -s "$work/err" ]
expect stat_dir_header "$work/list" 'MEMORY +MODE +CREATED \(UTC\) +STATE +PATH'
expect stat_dir_stale "$work/list" "$(re "$(human "$(mem "$D/a.srb")")") +lossless +$WHEN +stale: writers closed +$(re "$D/a.srb")"
expect stat_dir_stale_flight "$work/list" "$(re "$(human "$(mem "$D/b.srb")")") +flight +$WHEN +stale: writers closed +$(re "$D/b.srb")"
expect stat_dir_live_writer "$work/list" "[0-9.]+ (B|kB|MB|GB) +lossless +$WHEN +live: writer $wpid +$(re "$D/live.srb")"
expect stat_dir_not_ring "$work/list" "[0-9.]+ (B|kB) +- +- +not a ring +$(re "$D/notes.txt")"
expect stat_dir_garbage "$work/list" "[0-9.]+ (B|kB) +- +- +not a ring +$(re "$D/strace_1_junk.srb")"
expect stat_dir_fifo "$work/list" "0 B +- +- +FIFO, not opened +$(re "$D/strace_2_fifo.srb")"
expect stat_dir_symlink "$work/list" "0 B +- +- +symlink, not followed +$(re "$D/strace_3_link.srb")"
if [ $others = 1 ]; then
	expect stat_dir_other_user "$work/list" "[0-9.]+ (B|kB|MB) +lossless +$WHEN +another user's \(nobody\) +$(re "$D/nobody.srb")"
else
	echo "SKIP: $T/stat_dir_other_user (cannot chown a file to nobody: not root)"
fi
stale_bytes=$(( $(mem "$D/a.srb") + $(mem "$D/b.srb") ))
expect_last stat_dir_total "$work/list" "2 stale rings hold $(re "$(human $stale_bytes)") on disk: 'ptrace-read --gc $(re "$D")' removes them"
check stat_dir_one_line_each [ "$(wc -l < "$work/list")" -eq $((9 + others)) ]

# --stat RING is as it was
"$PR" --stat "$D/a.srb" > "$work/one"
check stat_ring_unchanged grep -q '^writers: *0 live, 0 dead, 1 closed$' "$work/one"

# --- the default directory: $STRACE_RING's, default names only ----------
E=$work/default
mkdir -p "$E"
STRACE_RING=$E/strace_5_mine.srb "$PR" --stat > "$work/empty"; rc=$?
check stat_default_empty_exit_0 [ $rc -eq 0 ]
expect_last stat_default_empty "$work/empty" "no rings in $(re "$E") \(named strace_<pid>_<id>\.srb\)"
"$PR" --generate 10 -o "$E/strace_12_ab.srb"
"$PR" --generate 10 -o "$E/saved.srb"
STRACE_RING=$E/strace_5_mine.srb "$PR" --stat > "$work/dlist"
expect stat_default_lists_default_names "$work/dlist" ".* +stale: writers closed +$(re "$E/strace_12_ab.srb")"
check stat_default_skips_other_names [ "$(grep -c saved.srb "$work/dlist")" -eq 0 ]
expect_last stat_default_total "$work/dlist" "1 stale ring holds $(re "$(human "$(mem "$E/strace_12_ab.srb")")") on disk: 'ptrace-read --gc' removes it"
STRACE_RING=$E/strace_5_mine.srb "$PR" --gc > "$work/dgc"; rc=$?
check gc_default_exit_0 [ $rc -eq 0 ]
check gc_default_removed_default_name [ ! -e "$E/strace_12_ab.srb" ]
check gc_default_kept_saved_ring [ -e "$E/saved.srb" ]

# --- --gc DIR -----------------------------------------------------------
a_mem=$(mem "$D/a.srb") b_mem=$(mem "$D/b.srb")
"$PR" --gc "$D" > "$work/gc" 2> "$work/err"; rc=$?
check gc_exit_0 [ $rc -eq 0 ]
check gc_quiet_stderr [ ! -s "$work/err" ]
expect gc_removed_a "$work/gc" "removed $(re "$D/a.srb") \($(re "$(human "$a_mem")")\)"
expect gc_removed_b "$work/gc" "removed $(re "$D/b.srb") \($(re "$(human "$b_mem")")\)"
if [ $others = 1 ]; then
	left="left 6: 1 live, 1 another user's, 4 not rings"
else
	left="left 5: 1 live, 4 not rings"
fi
expect_last gc_total "$work/gc" "freed $(re "$(human $((a_mem + b_mem)))") on disk: 2 stale rings removed; $left \('ptrace-read --stat $(re "$D")' lists them\)"
check gc_removed_stale [ ! -e "$D/a.srb" ] && [ ! -e "$D/b.srb" ]
for f in live.srb notes.txt strace_1_junk.srb strace_2_fifo.srb strace_3_link.srb; do
	check "gc_kept_${f%%.*}" [ -e "$D/$f" ] || [ -L "$D/$f" ]
done
[ $others = 1 ] && check gc_kept_other_user [ -e "$D/nobody.srb" ]
check gc_kept_link_target [ -e "$work/target.srb" ]
"$PR" --gc "$D" > "$work/gc2"; rc=$?
check gc_again_exit_0 [ $rc -eq 0 ]
expect_last gc_again_nothing "$work/gc2" "no stale rings in $(re "$D"); $left \('ptrace-read --stat $(re "$D")' lists them\)"
# the writer gone (killed), its ring is stale: "writer died"
{ kill -9 $wpid; wait $wpid; } 2>/dev/null
"$PR" --stat "$D" > "$work/list2"
expect stat_writer_died "$work/list2" ".* +lossless +$WHEN +stale: writer died +$(re "$D/live.srb")"
"$PR" --gc "$D" > "$work/gc3"
expect gc_writer_died "$work/gc3" "removed $(re "$D/live.srb") \(.*\)"

# a ring that cannot be removed: a message naming it, exit 1
mkdir -p "$work/ro"
"$PR" --generate 10 -o "$work/ro/stuck.srb"
if chattr +i "$work/ro" 2>/dev/null; then
	"$PR" --gc "$work/ro" > "$work/gcro" 2> "$work/err"; rc=$?
	check gc_cannot_remove_exit_1 [ $rc -eq 1 ]
	expect gc_cannot_remove_message "$work/err" "ptrace-read: $(re "$work/ro/stuck.srb"): cannot remove the stale ring: Operation not permitted; the directory does not let you remove it \(permissions, sticky bit, read-only or immutable file system\): remove it as a user who may"
	expect_last gc_cannot_remove_total "$work/gcro" "no stale ring removed; 1 could not be removed \(see above\)"
	check gc_cannot_remove_kept [ -e "$work/ro/stuck.srb" ]
	# usable still: nothing marked it removed
	"$PR" "$work/ro/stuck.srb" > /dev/null 2>&1
	check gc_cannot_remove_still_readable [ $? -eq 0 ]
	chattr -i "$work/ro"
else
	echo "SKIP: $T/gc_cannot_remove (chattr +i does not work here)"
fi
"$PR" --gc "$work/nothere" > /dev/null 2> "$work/err"; rc=$?
check gc_no_dir_exit_1 [ $rc -eq 1 ]
expect gc_no_dir_message "$work/err" "ptrace-read: $(re "$work/nothere"): cannot list the directory: No such file or directory; pass the directory that holds the rings \(by default the directory of \\\$STRACE_RING, else /dev/shm\)"
"$PR" --stat --gc > /dev/null 2> "$work/err"; rc=$?
check stat_and_gc_usage_exit_2 [ $rc -eq 2 ]
expect stat_and_gc_usage_message "$work/err" "ptrace-read: --stat lists the rings, --gc removes the stale ones: give one"

# --- ptrace-capture's last summary line ---------------------------------
data=$top/$O/corpus/recurse.data
if [ ! -f "$data" ]; then
	echo "SKIP: $T/capture (no $data: make tests)"
else
	C=$bin/ptrace-capture
	ring_line() { # PATH WHERE GC
		local gc=""
		[ "$3" = gc ] && gc=" or 'ptrace-read --gc'"
		echo "ptrace-capture: ring: $(re "$1") \($(re "$(awk -v b="$(mem "$1")" 'BEGIN { printf "%.1f", b / 1e6 }') MB $2"); read it with 'ptrace-read RING', remove it with rm$(re "$gc") once done\)"
	}
	"$C" -i "$data" -o "$work/c.srb" > /dev/null 2> "$work/cerr"; rc=$?
	check capture_exit_0 [ $rc -eq 0 ]
	expect_last capture_ring_on_disk "$work/cerr" "$(ring_line "$work/c.srb" "on disk" no)"
	check capture_summary_before [ "$(grep -c branches "$work/cerr")" -eq 1 ]
	"$C" -q -i "$data" -o "$work/cq.srb" > /dev/null 2> "$work/cerr"
	check capture_quiet_no_ring_line [ ! -s "$work/cerr" ]
	# the default path, in /dev/shm: in memory, and --gc would see it
	STRACE_RING=$shm "$C" -i "$data" > "$work/cout" 2> "$work/cerr"
	expect_last capture_ring_in_memory "$work/cerr" "$(ring_line "$shm" "in memory" gc)"
	rm -f "$shm"
	"$C" -i "$data" -o /dev/shm/ptrace-read-gc-$$.srb > /dev/null 2> "$work/cerr"
	expect_last capture_named_ring_in_memory "$work/cerr" "$(ring_line /dev/shm/ptrace-read-gc-$$.srb "in memory" no)"
	rm -f /dev/shm/ptrace-read-gc-$$.srb
	# --pt: the raw stream of the same trace, its code as --raw
	sb=$top/$O/corpus/recurse.sideband
	raws=()
	while read -r kw s e off path; do
		[ "$kw" = mmap ] || continue
		raws+=(--raw "$path:0x$off-$(printf 0x%x $((16#$e - 16#$s)))@0x$s")
	done < "$sb"
	pt=$(awk '/^thread/ {print $3; exit}' "$sb")
	"$C" --pt "$pt" "${raws[@]}" -o "$work/pt.srb" > /dev/null 2> "$work/cerr"; rc=$?
	check capture_pt_exit_0 [ $rc -eq 0 ]
	expect_last capture_pt_ring_line "$work/cerr" "$(ring_line "$work/pt.srb" "on disk" no)"
	# the dlfilter's end of run, with its summary (stats)
	lib=$top/$O/lib/libstrace_dlf.so
	if command -v perf > /dev/null && [ -f "$lib" ]; then
		. "$top/tests/e2e/perfdl.inc"
		perfdl script -i "$data" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$work/d.srb" --dlarg stats > /dev/null 2> "$work/derr"
		expect_last dlfilter_ring_line "$work/derr" "$(ring_line "$work/d.srb" "on disk" no | sed 's/^ptrace-capture/libstrace_dlf/')"
	else
		echo "SKIP: $T/dlfilter_ring_line (no perf)"
	fi
fi

finish
