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

# --stat of something that is not a ring: exit 1, the file named
printf 'hello' > "$work/notring"
"$PR" --stat "$work/notring" > /dev/null 2> "$work/err"; rc=$?
check stat_bad_file_exit_1 [ $rc -eq 1 ]
check stat_bad_file_named grep -q "$work/notring" "$work/err"

finish
