#!/usr/bin/env bash
# tests/e2e/ptrace-read-follow.sh - live reading: --follow with a writer
# that starts after the reader, --timeout, several readers, flight-recorder
# losses counted exactly, a writer killed mid-stream ("writer gone"), a
# reader killed while a lossless writer waits for it.
T=ptrace-read-follow
. "$(dirname "$0")/lib.sh"
cd "$top"
PR="$top/$O/bin/ptrace-read"
R=/dev/shm/e2e_follow_$$
pids=()
on_exit() { # (then lib.sh removes $work)
	for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p" 2>/dev/null; done
	exec 7>&- 2>/dev/null
	rm -f "$R"_*
}
[ -x "$PR" ] || { echo "FAIL: $T/build ($PR missing)"; exit 1; }

# wait_stat RING AWK-CONDITION: until --stat output satisfies it (20 s)
wait_stat() {
	for _ in $(seq 400); do
		"$PR" --stat "$1" 2>/dev/null | awk "$2" && return 0
		sleep 0.05
	done
	return 1
}

# seq column of text output must be 0..n-1 with nothing missing
seq_ok() { awk -v n="$2" '$1 != NR - 1 { bad = 1 } END { exit bad || NR != n }' "$1"; }

# 1. the reader starts first and waits for the ring to appear
N=200000
"$PR" --follow --timeout 20000 -o "$work/f1" "$R"_1 2> "$work/f1.err" &
rpid=$!; pids+=($rpid)
sleep 0.3
"$PR" --generate $N -o "$R"_1 --readers 1 --timeout 20000 --capacity 4096; grc=$?
wait $rpid; rc=$?
check follow_writer_after_reader_gen_exit [ $grc -eq 0 ]
check follow_writer_after_reader_exit [ $rc -eq 0 ]
if seq_ok "$work/f1" $N; then pass follow_gets_every_event; else
	fail follow_gets_every_event "$(wc -l < "$work/f1") lines, want $N; $(cat "$work/f1.err")"; fi

# 2. --timeout on a ring that never appears: exit 1, the file named
start=$(date +%s%N)
"$PR" --follow --timeout 300 "$R"_never > /dev/null 2> "$work/t.err"; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check timeout_exit_1 [ $rc -eq 1 ]
check timeout_names_file grep -q "$R"_never "$work/t.err"
check timeout_in_time [ $ms -ge 300 -a $ms -lt 5000 ]
"$PR" "$R"_never > /dev/null 2> "$work/t2.err"; rc=$?
check missing_without_follow_exit_1 [ $rc -eq 1 ]
check missing_says_follow grep -q -- "--follow" "$work/t2.err"

# 3. two readers, --readers 2: both see every event (JSON lines)
N=100000
for i in a b; do
	"$PR" -f jsonl --follow --timeout 20000 -o "$work/r_$i" "$R"_3 &
	pids+=($!)
done
sleep 0.2
"$PR" --generate $N -o "$R"_3 --readers 2 --timeout 20000 --capacity 1024; grc=$?
wait "${pids[-1]}"; rcb=$?; wait "${pids[-2]}"; rca=$?
check two_readers_exit [ $grc -eq 0 -a $rca -eq 0 -a $rcb -eq 0 ]
check two_readers_same_events cmp -s "$work/r_a" "$work/r_b"
check two_readers_count [ "$(wc -l < "$work/r_a")" -eq $N ]

# 4. flight recorder, nobody reading while it was written: a reader that
# attaches afterwards starts at the oldest event still there (it lost
# nothing: it was not attached) and reads the newest CAP events in order
N=100000; CAP=1024
"$PR" --generate $N -o "$R"_4 --mode flight --capacity $CAP; grc=$?
"$PR" -o "$work/fl" "$R"_4 2> "$work/fl.err"; rc=$?
check flight_gen_exit [ $grc -eq 0 ]
check flight_late_reader_exit_0 [ $rc -eq 0 ]
if awk -v n=$N -v cap=$CAP 'NR == 1 { first = $1 } $1 != first + NR - 1 || ($4 == "lost" && / flags=0x1$/) { bad = 1 }
	END { exit bad || NR != cap || first + NR != n }' "$work/fl"; then
	pass flight_late_reader_gets_newest
else
	fail flight_late_reader_gets_newest "$(head -2 "$work/fl"; tail -1 "$work/fl"; wc -l < "$work/fl")"
fi

# 4b. flight recorder with a reader following at the same time: every
# position is either read or counted lost, exactly once, in order, and
# the summary says how many were lost
N=3000000; CAP=1024
"$PR" --follow --timeout 20000 -f jsonl -o "$work/fl2" "$R"_4b 2> "$work/fl2.err" &
rpid=$!; pids+=($rpid)
"$PR" --generate $N -o "$R"_4b --mode flight --capacity $CAP --readers 1 --timeout 20000
wait $rpid; rc=$?
if python3 - "$work/fl2" $N <<'EOF'
import json, sys
nxt, lost, got = 0, 0, 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["type"] == "lost" and o.get("flags") == 1:
        assert o["first"] == nxt, (o, nxt)
        nxt += o["count"]; lost += o["count"]
    else:
        assert o["seq"] == nxt, (o, nxt)
        nxt += 1; got += 1
assert nxt == int(sys.argv[2]), (nxt, lost, got)
EOF
then pass flight_live_every_position_once; else fail flight_live_every_position_once "reader exit $rc"; fi
lost=$(python3 -c '
import json, sys
print(sum(o["count"] for o in map(json.loads, open(sys.argv[1])) if o["type"] == "lost" and o.get("flags") == 1))' "$work/fl2")
if [ "$lost" -gt 0 ]; then
	check flight_live_exit_3 [ $rc -eq 3 ]
	check flight_live_summary_count grep -q "^ptrace-read: $R""_4b: $lost events lost" "$work/fl2.err"
else
	echo "SKIP: $T/flight_live_exit_3 (the reader kept up: nothing was lost)"
fi

# 5. writer killed mid-stream: readers get every committed event, then a
# clean "writer gone"
"$PR" --generate 1000000 -o "$R"_5 --capacity 4096 2> "$work/w5.err" &
wpid=$!; pids+=($wpid)
# it fills the ring, then waits for a reader that never comes, and says so
# once, a second into the wait
wait_stat "$R"_5 '/^committed:/ && $2 >= 4096 { ok = 1 } END { exit !ok }'
for _ in $(seq 100); do grep -q 'no reader has attached' "$work/w5.err" && break; sleep 0.05; done
check lossless_wait_says_why grep -q "$R""_5: the lossless ring is full and no reader has attached: waiting for one (attach it with 'ptrace-read --follow" "$work/w5.err"
{ kill -9 $wpid; wait $wpid; } 2>/dev/null
check lossless_wait_said_once [ "$(grep -c 'lossless ring is full' "$work/w5.err")" -eq 1 ]
committed=$("$PR" --stat "$R"_5 | awk '/^committed:/ { print $2 }')
timeout 20 "$PR" --follow -o "$work/wg" "$R"_5 2> "$work/wg.err"; rc=$?
check writer_gone_exit_3 [ $rc -eq 3 ]
check writer_gone_message grep -q "writer gone" "$work/wg.err"
check writer_gone_names_committed grep -q "it holds $committed committed events.* $committed read, 0 lost" "$work/wg.err"
if [ -n "$committed" ] && [ "$committed" -gt 0 ] && seq_ok "$work/wg" "$committed"; then
	pass writer_gone_every_committed_event
else
	fail writer_gone_every_committed_event "committed=$committed, read $(wc -l < "$work/wg")"
fi
check writer_gone_stat_dead grep -q "^writers: *0 live, 1 dead" <("$PR" --stat "$R"_5)

# 6. a reader killed while a lossless writer waits for it: the writer goes
# on. The reader writes into a pipe nobody reads, so it stalls and the
# ring fills; then it is killed.
mkfifo "$work/stuck"
exec 7<> "$work/stuck" # held open, never read: the reader's writes stall
"$PR" --follow --timeout 20000 "$R"_6 > "$work/stuck" 2>/dev/null &
rpid=$!; pids+=($rpid)
"$PR" --generate 2000000 -o "$R"_6 --readers 1 --timeout 20000 --capacity 1024 &
wpid=$!; pids+=($wpid)
# the reader is attached and stalled, the ring full: the writer waits
wait_stat "$R"_6 '/^readers:/ && $2 == 1 { r = 1 } /^committed:/ && $2 >= 1024 { c = 1 } END { exit !(r && c) }'
sleep 0.2
if kill -0 $wpid 2>/dev/null; then
	{ kill -9 $rpid; wait $rpid; } 2>/dev/null
	for _ in $(seq 100); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $wpid 2>/dev/null; then
		fail reader_killed_writer_continues "writer still waiting 10 s after its reader died"
	else
		wait $wpid; rc=$?
		check reader_killed_writer_continues [ $rc -eq 0 ]
	fi
else
	fail reader_killed_writer_continues "the writer did not wait for the stalled reader"
fi

# 7. a ring whose writer still writes, read without --follow: what was
# there, and a word that it is partial (exit 3), with the count
"$PR" --generate 3000000 -o "$R"_7 --capacity 4096 >/dev/null 2>&1 &
gpid=$!; pids+=($gpid)
# (a lossless ring waits, full, for its first reader)
wait_stat "$R"_7 '/^committed:/ && $2 >= 4096 { ok = 1 } END { exit !ok }'
"$PR" -f raw "$R"_7 > "$work/p7" 2> "$work/p7.err"; rc=$?
n=$(($(stat -c %s "$work/p7") / 32))
if [ $rc -eq 3 ] && grep -q "a writer is still writing this ring: the output holds the $n events there were" "$work/p7.err" &&
	grep -q -- "--follow" "$work/p7.err" && [ "$n" -gt 0 ] && [ "$n" -lt 3000000 ]; then
	pass "partial_read_says_so ($n events)"
else
	fail partial_read_says_so "exit $rc, $n events: $(cat "$work/p7.err")"
fi
wait $gpid

finish
