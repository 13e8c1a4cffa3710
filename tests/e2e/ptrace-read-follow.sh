#!/usr/bin/env bash
# tests/e2e/ptrace-read-follow.sh - live reading: --follow with a writer
# that starts after the reader, --timeout, several readers, flight-recorder
# losses counted exactly, a writer killed mid-stream ("writer gone"), a
# reader killed while a lossless writer waits for it.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
PR="$top/$O/bin/ptrace-read"
T=ptrace-read-follow
tmp=$(mktemp -d)
R=/dev/shm/e2e_follow_$$
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p" 2>/dev/null; done
	exec 7>&- 2>/dev/null
	rm -rf "$tmp"; rm -f "$R"_*
}
trap cleanup EXIT
nfail=0
pass() { echo "PASS: $T/$1"; }
fail() { echo "FAIL: $T/$1"; [ $# -gt 1 ] && echo "  $2" >&2; nfail=$((nfail + 1)); }
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "command failed: $*"; fi; }
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
"$PR" --follow --timeout 20000 -o "$tmp/f1" "$R"_1 2> "$tmp/f1.err" &
rpid=$!; pids+=($rpid)
sleep 0.3
"$PR" --generate $N -o "$R"_1 --readers 1 --timeout 20000 --capacity 4096; grc=$?
wait $rpid; rc=$?
check follow_writer_after_reader_gen_exit [ $grc -eq 0 ]
check follow_writer_after_reader_exit [ $rc -eq 0 ]
if seq_ok "$tmp/f1" $N; then pass follow_gets_every_event; else
	fail follow_gets_every_event "$(wc -l < "$tmp/f1") lines, want $N; $(cat "$tmp/f1.err")"; fi

# 2. --timeout on a ring that never appears: exit 1, the file named
start=$(date +%s%N)
"$PR" --follow --timeout 300 "$R"_never > /dev/null 2> "$tmp/t.err"; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check timeout_exit_1 [ $rc -eq 1 ]
check timeout_names_file grep -q "$R"_never "$tmp/t.err"
check timeout_in_time [ $ms -ge 300 -a $ms -lt 5000 ]
"$PR" "$R"_never > /dev/null 2> "$tmp/t2.err"; rc=$?
check missing_without_follow_exit_1 [ $rc -eq 1 ]
check missing_says_follow grep -q -- "--follow" "$tmp/t2.err"

# 3. two readers, --readers 2: both see every event (JSON lines)
N=100000
for i in a b; do
	"$PR" -f jsonl --follow --timeout 20000 -o "$tmp/r_$i" "$R"_3 &
	pids+=($!)
done
sleep 0.2
"$PR" --generate $N -o "$R"_3 --readers 2 --timeout 20000 --capacity 1024; grc=$?
wait "${pids[-1]}"; rcb=$?; wait "${pids[-2]}"; rca=$?
check two_readers_exit [ $grc -eq 0 -a $rca -eq 0 -a $rcb -eq 0 ]
check two_readers_same_events cmp -s "$tmp/r_a" "$tmp/r_b"
check two_readers_count [ "$(wc -l < "$tmp/r_a")" -eq $N ]

# 4. flight recorder, nobody reading while it was written: a reader that
# attaches afterwards starts at the oldest event still there (it lost
# nothing: it was not attached) and reads the newest CAP events in order
N=100000; CAP=1024
"$PR" --generate $N -o "$R"_4 --mode flight --capacity $CAP; grc=$?
"$PR" -o "$tmp/fl" "$R"_4 2> "$tmp/fl.err"; rc=$?
check flight_gen_exit [ $grc -eq 0 ]
check flight_late_reader_exit_0 [ $rc -eq 0 ]
if awk -v n=$N -v cap=$CAP 'NR == 1 { first = $1 } $1 != first + NR - 1 || ($4 == "lost" && / flags=0x1$/) { bad = 1 }
	END { exit bad || NR != cap || first + NR != n }' "$tmp/fl"; then
	pass flight_late_reader_gets_newest
else
	fail flight_late_reader_gets_newest "$(head -2 "$tmp/fl"; tail -1 "$tmp/fl"; wc -l < "$tmp/fl")"
fi

# 4b. flight recorder with a reader following at the same time: every
# position is either read or counted lost, exactly once, in order, and
# the summary says how many were lost
N=3000000; CAP=1024
"$PR" --follow --timeout 20000 -f jsonl -o "$tmp/fl2" "$R"_4b 2> "$tmp/fl2.err" &
rpid=$!; pids+=($rpid)
"$PR" --generate $N -o "$R"_4b --mode flight --capacity $CAP --readers 1 --timeout 20000
wait $rpid; rc=$?
if python3 - "$tmp/fl2" $N <<'EOF'
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
print(sum(o["count"] for o in map(json.loads, open(sys.argv[1])) if o["type"] == "lost" and o.get("flags") == 1))' "$tmp/fl2")
if [ "$lost" -gt 0 ]; then
	check flight_live_exit_3 [ $rc -eq 3 ]
	check flight_live_summary_count grep -q "^ptrace-read: $R""_4b: $lost events lost" "$tmp/fl2.err"
else
	echo "SKIP: $T/flight_live_exit_3 (the reader kept up: nothing was lost)"
fi

# 5. writer killed mid-stream: readers get every committed event, then a
# clean "writer gone"
"$PR" --generate 1000000 -o "$R"_5 --capacity 4096 2> "$tmp/w5.err" &
wpid=$!; pids+=($wpid)
# it fills the ring, then waits for a reader that never comes, and says so
# once, a second into the wait
wait_stat "$R"_5 '/^committed:/ && $2 >= 4096 { ok = 1 } END { exit !ok }'
for _ in $(seq 100); do grep -q 'no reader has attached' "$tmp/w5.err" && break; sleep 0.05; done
check lossless_wait_says_why grep -q "$R""_5: the lossless ring is full and no reader has attached: waiting for one (attach it with 'ptrace-read --follow" "$tmp/w5.err"
{ kill -9 $wpid; wait $wpid; } 2>/dev/null
check lossless_wait_said_once [ "$(grep -c 'lossless ring is full' "$tmp/w5.err")" -eq 1 ]
committed=$("$PR" --stat "$R"_5 | awk '/^committed:/ { print $2 }')
timeout 20 "$PR" --follow -o "$tmp/wg" "$R"_5 2> "$tmp/wg.err"; rc=$?
check writer_gone_exit_3 [ $rc -eq 3 ]
check writer_gone_message grep -q "writer gone" "$tmp/wg.err"
check writer_gone_names_committed grep -q "it holds $committed committed events.* $committed read, 0 lost" "$tmp/wg.err"
if [ -n "$committed" ] && [ "$committed" -gt 0 ] && seq_ok "$tmp/wg" "$committed"; then
	pass writer_gone_every_committed_event
else
	fail writer_gone_every_committed_event "committed=$committed, read $(wc -l < "$tmp/wg")"
fi
check writer_gone_stat_dead grep -q "^writers: *0 live, 1 dead" <("$PR" --stat "$R"_5)

# 6. a reader killed while a lossless writer waits for it: the writer goes
# on. The reader writes into a pipe nobody reads, so it stalls and the
# ring fills; then it is killed.
mkfifo "$tmp/stuck"
exec 7<> "$tmp/stuck" # held open, never read: the reader's writes stall
"$PR" --follow --timeout 20000 "$R"_6 > "$tmp/stuck" 2>/dev/null &
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
"$PR" -f raw "$R"_7 > "$tmp/p7" 2> "$tmp/p7.err"; rc=$?
n=$(($(stat -c %s "$tmp/p7") / 32))
if [ $rc -eq 3 ] && grep -q "a writer is still writing this ring: the output holds the $n events there were" "$tmp/p7.err" &&
	grep -q -- "--follow" "$tmp/p7.err" && [ "$n" -gt 0 ] && [ "$n" -lt 3000000 ]; then
	pass "partial_read_says_so ($n events)"
else
	fail partial_read_says_so "exit $rc, $n events: $(cat "$tmp/p7.err")"
fi
wait $gpid

[ $nfail -eq 0 ]
