#!/usr/bin/env bash
# tests/e2e/ptrace-read-errors.sh - bad input: truncated, zero-length,
# wrong-magic, wrong-version and random-byte ring files, header fields out
# of range, garbage events, a damaged string table, a symlink, a directory,
# usage errors. Each must give its exit code and a clear message naming
# the file, never a crash (run it with O=build/san for the sanitizers).
T=ptrace-read-errors
. "$(dirname "$0")/lib.sh"
cd "$top"
PR="$top/$O/bin/ptrace-read"
R=/dev/shm/e2e_errors_$$
on_exit() { rm -f "$R"_*; }
[ -x "$PR" ] || { echo "FAIL: $T/build ($PR missing)"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: $T/all (python3 is needed to damage files)"; exit 0; }

# expect NAME RC PATTERN ARGS...: exit code RC, stderr matching PATTERN
# (extended regex, "" for none), no crash or sanitizer report, no hang
expect() {
	local name=$1 want=$2 pat=$3 rc; shift 3
	# a hang (a hostile lock word used to cause one) is a failure too
	timeout 60 "$PR" "$@" > "$work/out" 2> "$work/err"; rc=$?
	if [ $rc -ne "$want" ]; then
		fail "$name" "exit $rc, want $want: $(head -c 600 "$work/err")"
	elif grep -qE 'Sanitizer|runtime error|Segmentation|core dumped' "$work/err"; then
		fail "$name" "$(head -c 1500 "$work/err")"
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" "$work/err"; then
		fail "$name" "message does not match '$pat': $(cat "$work/err")"
	else
		pass "$name"
	fi
}

"$PR" --generate 5000 -o "$R"_good --capacity 8192 || { echo "FAIL: $T/generate"; exit 1; }
cp "$R"_good "$work/good.srb"
good=$work/good.srb

# the header layout (events/ring_layout.h, struct ring_hdr): magic at 0,
# u32 version at 8, header_size 12, event_size 16, mode 20, u64 capacity
# 24, strings_offset 32, strings_size 40, events_offset 48, file_size 56.
# Check it against what --stat says before relying on it.
cap=$("$PR" --stat "$good" | awk '/^capacity:/ { print $2 }')
if ! python3 - "$good" "$cap" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read(64)
magic, ver, hs, es, mode, cap = struct.unpack_from("<8sIIIIQ", b, 0)
assert magic == b"STRACERB" and ver == 2 and es == 32 and cap == int(sys.argv[2]), (magic, ver, es, cap)
EOF
then
	echo "FAIL: $T/header_layout (struct ring_hdr changed: update this test)"
	exit 1
fi

# damage FILE: python expression on bytearray b
damage() {
	cp "$good" "$work/$1"
	python3 - "$work/$1" "$2" <<'EOF'
import random, struct, sys
p, expr = sys.argv[1], sys.argv[2]
b = bytearray(open(p, "rb").read())
def u32(off, v): struct.pack_into("<I", b, off, v)
def u64(off, v): struct.pack_into("<Q", b, off, v)
exec(expr)
open(p, "wb").write(b)
EOF
}

# --- files that are not rings --------------------------------------------
: > "$work/empty"
expect zero_length 1 "$work/empty: .*(truncated|not a ring)" "$work/empty"
head -c 100 "$good" > "$work/short"
expect truncated_header 1 "$work/short: .*truncated" "$work/short"
head -c $(( $(stat -c %s "$good") / 2 )) "$good" > "$work/half"
expect truncated_events 1 "$work/half: .*truncated" "$work/half"
damage badmagic 'b[0] ^= 0xff'
expect wrong_magic 1 "$work/badmagic: .*magic" "$work/badmagic"
damage badversion 'u32(8, 99)'
expect wrong_version 1 "$work/badversion: .*version" "$work/badversion"
for seed in 1 2 3 4 5; do
	python3 -c "import random,sys; random.seed($seed); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(65536 * $seed)))" > "$work/random$seed"
	expect random_bytes_$seed 1 "$work/random$seed: " "$work/random$seed"
done
# random bytes after a valid magic and version
damage randhdr 'random.seed(7); b[12:16384] = bytes(random.getrandbits(8) for _ in range(16384 - 12))'
expect random_header_fields 1 "$work/randhdr: " "$work/randhdr"

# --- header fields out of range --------------------------------------------
damage cap_not_pow2 'u64(24, 1000)'
expect capacity_not_power_of_two 1 "$work/cap_not_pow2: .*(corrupt|truncated)" "$work/cap_not_pow2"
damage cap_huge 'u64(24, 1 << 62)'
expect capacity_huge 1 "$work/cap_huge: .*(corrupt|truncated)" "$work/cap_huge"
damage cap_zero 'u64(24, 0)'
expect capacity_zero 1 "$work/cap_zero: .*corrupt" "$work/cap_zero"
damage evsize 'u32(16, 64)'
expect event_size 1 "$work/evsize: .*(corrupt|version)" "$work/evsize"
damage hdrsize 'u32(12, 12)'
expect header_size 1 "$work/hdrsize: .*corrupt" "$work/hdrsize"
damage stroff 'u64(32, 1 << 40)'
expect strings_offset_outside 1 "$work/stroff: .*(corrupt|truncated)" "$work/stroff"
damage strsize 'u64(40, (1 << 64) - 8)'
expect strings_size_wraps 1 "$work/strsize: .*(corrupt|truncated)" "$work/strsize"
damage evoff 'u64(48, 8)'
expect events_offset_overlaps 1 "$work/evoff: .*corrupt" "$work/evoff"
# the library takes the size from the file itself, never from this field
damage fsize 'u64(56, 1 << 50)'
expect file_size_field_not_trusted 0 "" "$work/fsize"
damage mode 'u32(20, 7)'
expect mode_unknown 1 "$work/mode: .*corrupt" "$work/mode"

# --- damage that still reads: garbage events, a broken string table -------
# every event slot random: each is shown (unknown types too), none crashes
damage garbage_events 'random.seed(9); evoff = struct.unpack_from("<Q", b, 48)[0]; n = 5000 * 32; b[evoff:evoff + n] = bytes(random.getrandbits(8) for _ in range(n))'
for f in text jsonl; do
	expect garbage_events_$f 0 "" -f $f "$work/garbage_events"
	if [ "$(wc -l < "$work/out")" -ne 5000 ]; then fail garbage_events_${f}_count "$(wc -l < "$work/out") lines"; else pass garbage_events_${f}_count; fi
done
if python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$work/out"; then
	pass garbage_events_valid_json
else
	fail garbage_events_valid_json
fi
# the first string entry's header damaged: events read, names are not
# trusted, a warning names the file
damage badstrings 'so = struct.unpack_from("<Q", b, 32)[0]; b[so + 6] ^= 0xff; b[so + 7] ^= 0xff'
expect damaged_string_table 0 "$work/badstrings: warning: the string table is damaged" -f jsonl "$work/badstrings"
if grep -q '"name":null' "$work/out" && ! grep -q '_sym"' "$work/out"; then
	pass damaged_string_table_no_names
else
	fail damaged_string_table_no_names "$(grep -m2 symbol "$work/out")"
fi

# --- hostile files: the lock, a sparse file --------------------------------
# The lock word (u64 at 392: start time << 22 | pid) names its holder as
# the slot tables do; a holder that is not that process is taken over, a
# live one that keeps it is waited for 3 s at most, then named.
# (struct ring_hdr: the tail line at 384, the lock after tail.)
lockexp() { # NAME RC PATTERN MAX_SECONDS WORD
	local t0=$(date +%s%N) ms
	damage "$1" "u64(392, $5)"
	expect "$1" "$2" "$3" "$work/$1"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $ms -lt $(($4 * 1000)) ] && pass "$1_in_time" || fail "$1_in_time" "$ms ms"
}
lockexp lock_word_1 0 "" 2 1
lockexp lock_word_ffffffff 0 "" 2 0xffffffff
# a pid of ours with another start time: the holder died, its pid reused
lockexp lock_pid_reused 0 "" 2 "(12345 << 22) | $$"
# kthreadd with its real start time: alive forever, never lets go
kst=$(awk '{ print $22 }' /proc/2/stat 2>/dev/null)
if [ -n "$kst" ]; then
	lockexp lock_live_holder 1 "$work/lock_live_holder: cannot attach a reader to the ring: the ring's lock stayed held by another live process; that process is stopped or stuck" 8 "($kst << 22) | 2"
	"$PR" --stat "$work/lock_live_holder" > "$work/out" 2>&1
	grep -q "^lock: *held by pid 2" "$work/out" && pass lock_live_holder_stat || fail lock_live_holder_stat "$(cat "$work/out")"
else
	echo "SKIP: $T/lock_live_holder (no /proc/2/stat)"
fi
# A sparse file whose header claims 1 GiB of events: reading it takes no
# more memory than what is read, and adds no pages to the file.
damage sparse 'u64(24, 1 << 25)'
expect sparse_claim_refused_when_short 1 "$work/sparse: .*truncated" --stat "$work/sparse"
truncate -s $(( $(python3 -c "import struct; print(struct.unpack_from('<Q', open('$work/sparse','rb').read(64), 48)[0])") + (1 << 30) )) "$work/sparse"
cp --sparse=always "$work/sparse" "$R"_sparse
before=$(stat -c %b "$R"_sparse)
for a in "stat --stat" "jsonl -f jsonl"; do
	set -- $a
	if /usr/bin/time -f %M -o "$work/rss" "$PR" "${@:2}" "$R"_sparse > /dev/null 2> "$work/err" &&
	   [ "$(tail -1 "$work/rss")" -lt 65536 ]; then
		pass "sparse_reads_small_$1"
	else
		fail "sparse_reads_small_$1" "max RSS $(tail -1 "$work/rss") KiB: $(cat "$work/err")"
	fi
done
after=$(stat -c %b "$R"_sparse)
[ $((after - before)) -lt 8192 ] && pass sparse_file_not_filled || fail sparse_file_not_filled "$before -> $after blocks"

# --- paths -----------------------------------------------------------------
ln -s "$good" "$work/link.srb"
expect symlink_refused 1 "$work/link.srb: .*symbolic link" "$work/link.srb"
expect symlink_refused_stat 1 "$work/link.srb: .*symbolic link" --stat "$work/link.srb"
expect directory 1 "$work: " "$work"
expect char_device 1 "/dev/null: " /dev/null
expect missing 1 "$work/nothere: .*(No such file|--follow)" "$work/nothere"
expect generate_over_existing 1 "cannot create the ring $good \(-o\): a file is there already, and a ring is never written over one: remove it" --generate 10 -o "$good"
expect generate_through_symlink 1 "cannot create the ring $work/link.srb \(-o\): " --generate 10 -o "$work/link.srb"
expect generate_bad_dir 1 "cannot create the ring $work/nodir/x.srb \(-o\): the directory $work/nodir does not exist" --generate 10 -o "$work/nodir/x.srb"
expect output_bad_dir 1 "$work/nodir/out: " -o "$work/nodir/out" "$good"
expect save_bad_dir 1 "cannot create the ring $work/nodir/s.srb \(-o\): the directory $work/nodir does not exist" -f ring -o "$work/nodir/s.srb" "$good"
expect output_is_the_ring 1 "$good: the output is the ring being read" -o "$good" "$good"
expect output_is_the_ring_raw 1 "the output is the ring being read" -f raw -o "$work/../$(basename "$work")/good.srb" "$good"
cmp -s "$good" "$R"_good && pass good_file_untouched || fail good_file_untouched "a failed command changed the ring"

# a ring cut short while a reader follows it: a message, not a crash
"$PR" --generate 1000 -o "$R"_bus --readers 2 --timeout 20000 2> /dev/null &
wpid=$!
for _ in $(seq 100); do [ -e "$R"_bus ] && break; sleep 0.05; done
"$PR" --follow "$R"_bus > /dev/null 2> "$work/bus.err" &
rpid=$!
for _ in $(seq 400); do # until the reader is attached
	"$PR" --stat "$R"_bus 2>/dev/null | grep -q '^readers: *1 live' && break
	sleep 0.05
done
truncate -s 0 "$R"_bus
wait $rpid; rc=$?
{ kill -9 $wpid; wait $wpid; } 2>/dev/null
if [ $rc -eq 1 ] && grep -q "$R""_bus: the ring file was truncated" "$work/bus.err"; then
	pass truncated_while_following
else
	fail truncated_while_following "exit $rc: $(cat "$work/bus.err")"
fi

# --- usage -----------------------------------------------------------------
expect usage_no_ring 2 "which ring" 
expect usage_two_rings 2 "one ring at a time" "$good" "$good"
expect usage_unknown_option 2 "^ptrace-read: unrecognized option '--frobnicate'" --frobnicate "$good"
expect usage_bad_format 2 "unknown format 'xml'" -f xml "$good"
expect usage_bad_mode 2 "unknown mode" --generate 1 --mode fast -o "$R"_x
expect usage_capacity_not_pow2 2 "not a power of two" --generate 1 --capacity 1000 -o "$R"_x
expect usage_bad_number 2 "not a number" --generate 12abc -o "$R"_x
expect usage_timeout_number 2 "not a number" --follow --timeout soon "$good"
expect usage_gen_opts_alone 2 "go with --generate" --readers 2 "$good"
expect usage_ring_needs_output 2 "give it with -o" -f ring "$good"
expect usage_min_time_unit 2 "'10 sec' is not a duration" -f tree -t "10 sec" "$good"
expect usage_caller_flat 2 "shape the stack views" -C main "$good"
expect usage_min_time_flat 2 "shape the stack views" --min-time 1us "$good"
# filters that leave nothing say so; the read still succeeds
expect time_after_trace 0 "--time 9000,9001 matched nothing" -f tree --time 9000,9001 "$good"
expect time_after_trace_empty 0 "the filters left none of the trace's [0-9]+ frames" -f report --time 9000,9001 "$good"
expect min_time_longer_than_all 0 "none lasted --min-time" -f folded -t 1000s "$good"
expect caller_unmatched 0 "--caller no_such_fn matched nothing" -f chrome -o "$work/c.json" -C no_such_fn "$good"
expect usage_diff_needs_report 2 "--diff compares the reports of two rings: give -f report" --diff "$good" "$good"
expect usage_diff_policy_alone 2 "--diff-policy goes with --diff" -f report --diff-policy full "$good"
expect diff_old_missing 1 "^ptrace-read: $work/nope.srb: cannot open the ring: No such file" -f report --diff "$work/nope.srb" "$good"
expect diff_same_ring 0 "" -f report --diff "$good" "$good"
expect help_exit_0 0 "" --help
grep -q "Exit status" "$work/out" && pass help_documents_exit_codes || fail help_documents_exit_codes

finish
