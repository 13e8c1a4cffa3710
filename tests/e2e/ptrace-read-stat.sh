#!/usr/bin/env bash
# tests/e2e/ptrace-read-stat.sh - ptrace-read --stat: header, counts, string
# table entries, writers and readers, against what the test itself did and
# against the events read back.
T=ptrace-read-stat
. "$(dirname "$0")/lib.sh"
cd "$top"
PR="$top/$O/bin/ptrace-read"
R=/dev/shm/e2e_stat_$$
pids=()
on_exit() { # (then lib.sh removes $work)
	for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p" 2>/dev/null; done
	exec 7>&- 2>/dev/null
	rm -f "$R"_*
}
[ -x "$PR" ] || { echo "FAIL: $T/build ($PR missing)"; exit 1; }
field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }' "$work/stat"; }

N=12345
"$PR" --generate $N -o "$R"_a --capacity 16384
"$PR" --stat "$R"_a > "$work/stat"; rc=$?
check stat_exit_0 [ $rc -eq 0 ]
check stat_names_ring [ "$(field ring)" = "$R"_a ]
check stat_mode [ "$(field mode)" = lossless ]
check stat_capacity [ "$(field capacity | cut -d' ' -f1)" = 16384 ]
check stat_committed [ "$(field committed)" = $N ]
check stat_reserved [ "$(field reserved)" = $N ]
check stat_file_size [ "$(field file-size | cut -d' ' -f1)" = "$(stat -c %s "$R"_a)" ]
check stat_writers_closed [ "$(field writers)" = "0 live, 0 dead, 1 closed" ]
check stat_closed [ "$(field closed)" = yes ]
check stat_no_readers [ "$(field readers)" = "0 live, 0 dead" ]
check stat_created_by [ -n "$(field created | grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2} .* by pid [0-9]+')" ]

# string entries: one per distinct name the generated definitions use
"$PR" -f jsonl --types 'symbol,dso,thread,process' "$R"_a > "$work/defs"
want=$(python3 -c '
import json, sys
k = {"symbol": set(), "dso": set(), "thread": set(), "process": set()}
for l in open(sys.argv[1]):
    o = json.loads(l)
    who = o["tid"] if o["type"] == "thread" else o.get("pid", 0)
    k[o["type"]].add((who, o.get("name") or o.get("path")))
n = sum(len(v) for v in k.values())
print("%d entries (%d symbols, %d dsos, %d threads, %d processes, 0 syscall sites, 0 other)" %
      (n, len(k["symbol"]), len(k["dso"]), len(k["thread"]), len(k["process"])))
' "$work/defs")
got=$(field strings | sed 's/^[0-9]* of [0-9]* bytes, //')
if [ "$got" = "$want" ]; then pass stat_string_entries; else fail stat_string_entries "got '$got' want '$want'"; fi

# a live reader shows up with its pid: the writer waits for a second
# reader that never comes, so the first stays attached
"$PR" --generate 100 -o "$R"_b --readers 2 --timeout 20000 &
wpid=$!; pids+=($wpid)
"$PR" --follow --timeout 20000 "$R"_b > /dev/null &
rpid=$!; pids+=($rpid)
for _ in $(seq 100); do
	"$PR" --stat "$R"_b > "$work/stat" 2>/dev/null && [ "$(field readers)" = "1 live, 0 dead" ] && break
	sleep 0.05
done
check stat_live_reader [ "$(field readers)" = "1 live, 0 dead" ]
check stat_reader_pid grep -q "^reader: *pid $rpid live" "$work/stat"
check stat_live_writer [ "$(field writers)" = "1 live, 0 dead, 0 closed" ]
check stat_not_closed [ "$(field closed)" = no ]
{ kill -9 $rpid; wait $rpid; } 2>/dev/null
"$PR" --stat "$R"_b > "$work/stat"
check stat_dead_reader [ "$(field readers)" = "0 live, 1 dead" ]
{ kill -9 $wpid; wait $wpid; } 2>/dev/null
"$PR" --stat "$R"_b > "$work/stat"
check stat_dead_writer [ "$(field writers)" = "0 live, 1 dead, 0 closed" ]

# --- readers killed with SIGKILL (issue 37) ------------------------------
# More readers than a ring has slots are killed while they hold one (the
# OOM killer, a crashed follower): the next reader still opens and reads
# it all, --stat counts the dead as dead, and while the writer lives --gc
# keeps the ring.
D=$work/dead
mkdir -p "$D"
# kill_readers NAME RING N BATCH CMD...: N readers of RING (CMD), BATCH at
# a time started, seen attached (--stat: BATCH live, in 5 s), killed with
# SIGKILL; 0 when all N were
kill_readers() {
	local name=$1 ring=$2 n=$3 batch=$4 done=0 b k live
	shift 4
	while [ $done -lt $n ]; do
		b=$((n - done < batch ? n - done : batch))
		for k in $(seq $b); do "$@" > /dev/null & pids+=($!); done
		for _ in $(seq 250); do
			live=$("$PR" --stat "$ring" 2>/dev/null | awk '$1 == "readers:" { print $2 }')
			[ "$live" = $b ] && break
			sleep 0.02
		done
		for k in $(seq $b); do
			{ kill -9 "${pids[-1]}"; wait "${pids[-1]}"; } 2>/dev/null
			unset 'pids[-1]' # reaped: its pid may name another process soon
		done
		if [ "$live" != $b ]; then
			fail "$name" "$((done + 1)) to $((done + b)) of $n: $live live readers in $ring, not $b"
			return 1
		fi
		done=$((done + b))
	done
	pass "$name"
}

# a closed ring: each reader holds its slot while blocked writing its text
# into a FIFO nobody drains (this shell holds it open)
"$PR" --generate 5000 --mode flight -o "$D/closed.srb"
"$PR" "$D/closed.srb" > "$work/closed.want"
mkfifo "$work/fifo"
exec 8<>"$work/fifo"
to_fifo() { exec "$PR" "$D/closed.srb" > "$work/fifo"; }
kill_readers dead_readers_killed "$D/closed.srb" 65 13 to_fifo
"$PR" --stat "$D/closed.srb" > "$work/stat"
check dead_readers_counted [ "$(field readers)" = "0 live, 64 dead" ]
timeout 60 "$PR" "$D/closed.srb" > "$work/closed.got" 2> "$work/err"; rc=$?
if [ $rc -eq 0 ] && cmp -s "$work/closed.want" "$work/closed.got"; then
	pass dead_readers_slot_taken_back
else
	fail dead_readers_slot_taken_back "exit $rc" "$(head -c 300 "$work/err")"
fi
"$PR" --stat "$D/closed.srb" > "$work/stat"
check dead_readers_one_fewer [ "$(field readers)" = "0 live, 63 dead" ]

# a live writer, waiting for 2 readers: dead ones are not readers to it
"$PR" --generate 100 --mode flight -o "$D/live.srb" --readers 2 --timeout 30000 &
wpid=$!; pids+=($wpid)
for _ in $(seq 200); do
	"$PR" --stat "$D/live.srb" 2>/dev/null | grep -q '^writers: *1 live' && break
	sleep 0.05
done
# (one at a time: two at once would be the two it waits for)
kill_readers dead_followers_killed "$D/live.srb" 3 1 "$PR" --follow --timeout 30000 "$D/live.srb"
"$PR" --stat "$D/live.srb" > "$work/stat"
# (the writer judges them as they come: later ones take back their slots)
check dead_followers_counted [ -n "$(field readers | grep -E '^0 live, [1-9][0-9]* dead$')" ]
check dead_followers_writer_waits [ "$(field writers)" = "1 live, 0 dead, 0 closed" ]
"$PR" --gc "$D" > "$work/gc"; rc=$?
check dead_followers_gc_keeps_ring [ $rc -eq 0 -a -e "$D/live.srb" ]
check dead_followers_gc_says_live grep -q "left 1: 1 live" "$work/gc"
# two readers now: the writer writes, both read everything
for k in 1 2; do
	timeout 60 "$PR" --follow --timeout 10000 -f jsonl "$D/live.srb" > "$work/live.$k" &
	pids+=($!)
done
rc=0
for k in 1 2; do wait "${pids[-1]}" || rc=$?; unset 'pids[-1]'; done
timeout 30 tail --pid=$wpid -f /dev/null
"$PR" --stat "$D/live.srb" > "$work/stat"
check dead_followers_writer_closed [ "$(field writers)" = "0 live, 0 dead, 1 closed" ]
"$PR" -f jsonl "$D/live.srb" > "$work/live.want"
n=$(grep -c '"type"' "$work/live.want")
if [ $rc -eq 0 ] && [ "$n" -ge 100 ] && cmp -s "$work/live.want" "$work/live.1" &&
	cmp -s "$work/live.want" "$work/live.2"; then
	pass dead_followers_new_readers_read
else
	fail dead_followers_new_readers_read "exit $rc; $n events; $(wc -l < "$work/live.1") and $(wc -l < "$work/live.2") lines read"
fi
# every process gone: stale, dead readers or not
"$PR" --gc "$D" > "$work/gc"
check dead_readers_gc_removes_stale [ ! -e "$D/live.srb" -a ! -e "$D/closed.srb" ]
exec 8<&-

# --stat of something that is not a ring: exit 1, the file named
printf 'hello' > "$work/notring"
"$PR" --stat "$work/notring" > /dev/null 2> "$work/err"; rc=$?
check stat_bad_file_exit_1 [ $rc -eq 1 ]
check stat_bad_file_named grep -q "$work/notring" "$work/err"

finish
