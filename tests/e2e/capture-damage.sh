#!/usr/bin/env bash
# ptrace-capture -i on damaged input: dropped and flipped PT bytes (decode
# resumes at the next PSB and loses nothing else, checked against the clean
# decode), a missing ELF file (a warning naming it, error events, the rest
# decoded), cut-off and garbage perf.data files, an out-of-range time
# conversion (a clear error naming the file, exit 1, never a crash).
T=capture-damage
. "$(dirname "$0")/lib.sh"

# decode DATA NAME [opts] -> $work/NAME.jsonl, stderr in $work/NAME.err;
# returns 0 for a decode into the ring, partial or not (exit 0 or 3: the
# exit status in $decode_rc), else ptrace-capture's exit status
decode() {
	local data=$1 name=$2
	shift 2
	rm -f "$work/$name.srb"
	"$bin/ptrace-capture" -q --names perf "$@" -i "$data" -o "$work/$name.srb" 2>"$work/$name.err"
	decode_rc=$?
	[ -f "$work/$name.srb" ] && "$bin/ptrace-read" -f jsonl "$work/$name.srb" >"$work/$name.jsonl"
	[ $decode_rc -eq 3 ] && return 0
	return $decode_rc
}
# partial NAME: the decode's exit status was 3 when the ring has error
# events (code lost), else 0
partial() {
	local want=0
	grep -q '"type":"error"' "$work/$1.jsonl" && want=3
	[ "$decode_rc" -eq $want ]
}

notimes() { # the JSON lines of a decode without their times
	sed -e 's/"time":[0-9]*,\{0,1\}//' -e 's/"flags":[0-9]*,\{0,1\}//' "$1"
}

# ptsynth runs the program as ./NAME in $work with a fixed environment:
# the trace, and so what the damage hits, is then the same on every
# machine (argv, the environment and the path shift the program's stack
# and ld.so's loops over them).
synth() { # synth NAME [ptsynth options] -- runs $work/$prog
	local name=$1
	shift
	(cd "$work" && env -i PATH=/usr/bin:/bin "$bin/ptsynth" "$@" \
		-o "$work/$name.data" -- "./$prog") >/dev/null 2>&1
}

# patch_records IN OUT WHAT: a copy of perf.data IN with its records
# changed: auxtrace-cpu0 gives every AUXTRACE buffer cpu 0 (a per-CPU
# recording); itrace-start-other-pid makes the first ITRACE_START name
# another process; time-shift:N puts N in AUXTRACE_INFO's time_shift;
# auxtrace-twice writes the first AUXTRACE record (and its data) twice;
# auxtrace-overlap splits it in two that overlap by 96 bytes.
patch_records() {
	python3 - "$@" <<'EOF'
import struct, sys
src, dst, what = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
asz, aoff, alen, off, size = struct.unpack_from("<QQQQQ", d, 16)
p, done = off, False
while p < off + size:
    typ, misc, sz = struct.unpack_from("<IHH", d, p)
    if typ == 71 and what in ("auxtrace-twice", "auxtrace-overlap"):
        aux, auxoff = struct.unpack_from("<QQ", d, p + 8)
        n = sz + aux
        if what == "auxtrace-twice":
            new = d[p:p + n] * 2
        else:  # two records, the second repeating the first's last 96 bytes
            cut, rec, data = aux // 16 * 8, d[p:p + sz], d[p + sz:p + n]
            a, b = bytearray(rec), bytearray(rec)
            struct.pack_into("<QQ", a, 8, cut, auxoff)
            struct.pack_into("<QQ", b, 8, aux - cut + 96, auxoff + cut - 96)
            new = a + data[:cut] + b + data[cut - 96:]
        d[p:p + n] = new
        n = len(new) - n
        # what lies past the data moves by n: the feature sections'
        # table and offsets, the attributes and their ids
        end = off + size
        moved = lambda at: at + n if at >= end else at
        struct.pack_into("<Q", d, 48, size + n)
        for k in range(sum(bin(b).count("1") for b in d[72:104])):
            t = end + n + 16 * k
            struct.pack_into("<Q", d, t, moved(struct.unpack_from("<Q", d, t)[0]))
        struct.pack_into("<Q", d, 24, moved(aoff))
        for a in range(moved(aoff) + asz - 16, moved(aoff) + alen, asz):
            struct.pack_into("<Q", d, a, moved(struct.unpack_from("<Q", d, a)[0]))
        break
    if typ == 71 and what == "auxtrace-cpu0":
        # PERF_RECORD_AUXTRACE: size, offset, reference, idx, tid, cpu
        struct.pack_into("<I", d, p + 8 + 32, 0)
    if typ == 70 and what.startswith("time-shift:"):
        # PERF_RECORD_AUXTRACE_INFO: type, reserved, priv[1] = time_shift
        struct.pack_into("<Q", d, p + 8 + 8 + 8, int(what.split(":")[1]))
    if typ == 12 and what == "itrace-start-other-pid" and not done:
        pid, tid = struct.unpack_from("<II", d, p + 8)  # ITRACE_START
        struct.pack_into("<II", d, p + 8, pid + 1, tid + 1)
        done = True
    if typ == 71:  # its AUX data follows the record
        p += struct.unpack_from("<Q", d, p + 8)[0]
    p += sz
open(dst, "wb").write(d)
EOF
}

corpus=$top/tests/corpus/corpus.sh
for prog in plt recurse; do
	exe=$(O=$O "$corpus" bin $prog) && cp "$exe" "$work/$prog" ||
		{ fail "$prog/build"; continue; }
	synth "$prog" || { fail "$prog/trace"; continue; }
	decode "$work/$prog.data" "$prog.clean"
	decode "$work/$prog.data" "$prog.clean.exact" --exact-times
	for dmg in "drop 3000:200" "drop 9000:40" "drop 15000:7" "drop 21000:1" \
		"corrupt 5000" "corrupt 7001" "corrupt 11003" "corrupt 17011" \
		"corrupt 23005"; do
		set -- $dmg
		kind=$1 arg=$2 off=${2%%:*}
		name=$prog-$kind-$off
		if ! synth "$name" --$kind "$arg"; then
			fail "$name" "ptsynth --$kind $arg failed"
			continue
		fi
		if ! decode "$work/$name.data" "$name"; then
			fail "$name" "ptrace-capture failed: $(cat "$work/$name.err")"
			continue
		fi
		if partial "$name"; then
			pass "$name/exit-$decode_rc ($(grep -c '"type":"error"' "$work/$name.jsonl") error events)"
		else
			fail "$name/exit-status" "exit $decode_rc, $(grep -c '"type":"error"' "$work/$name.jsonl") error events"
		fi
		# The reference decoder (libipt) survives the same damage, and
		# reports it when ours does.
		if decode "$work/$name.data" "$name.ref" --decoder reference &&
			{ ! grep -q '"type":"error"' "$work/$name.jsonl" ||
				grep -q '"type":"error"' "$work/$name.ref.jsonl"; }; then
			pass "$name/reference"
		else
			fail "$name/reference" "$(cat "$work/$name.ref.err")"
		fi
		# damage may meet a recorded TNT run where the bit-by-bit walk
		# would have failed: the cache must fail the same way
		if decode "$work/$name.data" "$name.bitwise" --decoder bitwise &&
			cmp -s "$work/$name.jsonl" "$work/$name.bitwise.jsonl"; then
			pass "$name/fast-equals-bitwise"
		else
			fail "$name/fast-equals-bitwise" \
				"$(diff "$work/$name.bitwise.jsonl" "$work/$name.jsonl" | head -6)"
		fi
		# Times spread between timing packets lean on the rate seen
		# before (at syscalls and gaps): the damage changes that history,
		# so the resume is judged on the packets' own times; the spread
		# decode must keep the same events in the same order.
		decode "$work/$name.data" "$name.exact" --exact-times
		if [ "$(notimes "$work/$name.jsonl")" = "$(notimes "$work/$name.exact.jsonl")" ]; then
			pass "$name/spread-same-events"
		else
			fail "$name/spread-same-events" "spreading the times changed the events" \
				"$(diff <(notimes "$work/$name.exact.jsonl") <(notimes "$work/$name.jsonl") | head -4)"
		fi
		if python3 "$top/tests/e2e/cmpdamage.py" "$work/$prog.clean.exact.jsonl" \
			"$work/$name.exact.jsonl" "$off" "$work/$name.ref.jsonl" >"$work/out"; then
			pass "$name"
		else
			fail "$name" "$(cat "$work/out")"
		fi
	done
done

# A missing ELF file: a warning naming it; error events where the trace
# went into it; everything before that decodes as in the clean run.
exe=$(O=$O "$corpus" bin fptr)
cp "$exe" "$work/gone"
"$bin/ptsynth" -o "$work/gone.data" -- "$work/gone" >/dev/null 2>&1
decode "$work/gone.data" gone.clean
rm -f "$work/gone"
if decode "$work/gone.data" gone && grep -q "cannot read $work/gone" "$work/gone.err" &&
	grep -q '"type":"error"' "$work/gone.jsonl" &&
	grep -q '"flags":4203' "$work/gone.jsonl" && [ "$decode_rc" = 3 ]; then
	pass missing-elf/warned-and-error-events-exit-3
else
	fail missing-elf/warned-and-error-events-exit-3 "exit $decode_rc: $(head -3 "$work/gone.err")"
fi
# without -q: the summary counts them, and a line says the trace is
# partial, why, and what to do; --view still writes the view
rm -f "$work/gone.srb"
"$bin/ptrace-capture" -i "$work/gone.data" -o "$work/gone.srb" --view "$work/gone.json" 2>"$work/gone.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "unreadable mappings" "$work/gone.err" &&
	grep -q "the trace is partial: [0-9]* decode errors and 1 unreadable mappings lost code.*readable at their recorded paths.*exit status 3" "$work/gone.err" &&
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/gone.json"; then
	pass missing-elf/partial-said-view-written
else
	fail missing-elf/partial-said-view-written "exit $rc: $(cat "$work/gone.err")"
fi
python3 - "$work/gone.clean.jsonl" "$work/gone.jsonl" <<'EOF' >"$work/out" && pass missing-elf/prefix-intact || fail missing-elf/prefix-intact "$(cat "$work/out")"
import json, sys
def flow(p):
    return [(e["type"], e.get("from"), e.get("to")) for e in map(json.loads, open(p))
            if e["type"] in ("call", "return", "jump", "syscall", "sysret", "error")]
c, d = flow(sys.argv[1]), flow(sys.argv[2])
e = [i for i, x in enumerate(d) if x[0] == "error"][0]
print("%d events before the first error, the same as the clean run: %s" % (e, c[:e] == d[:e]))
sys.exit(0 if e > 0 and c[:e] == d[:e] else 1)
EOF

# Cut-off and garbage files: exit 1, a message naming the file, no crash.
size=$(stat -c %s "$work/plt.data")
for cut in 0 7 100 1000 $((size / 2)) $((size - 8)); do
	head -c $cut "$work/plt.data" >"$work/cut.data"
	decode "$work/cut.data" cut
	rc=$?
	if [ $rc -eq 1 ] && grep -q "cut.data" "$work/cut.err"; then
		pass "cut-$cut"
	else
		fail "cut-$cut" "exit $rc: $(cat "$work/cut.err")"
	fi
done
# The same trace as a per-CPU recording (its AUXTRACE buffer given a cpu,
# as perf record writes without --per-thread): decoded as one CPU's stream,
# its events those of the per-thread decode, after one cpu event (CPU 0)
# that says where the thread ran (the events numbered without it)
patch_records "$work/plt.data" "$work/percpu.data" auxtrace-cpu0
noseq() { grep -v '"type":"cpu"' "$1" | sed 's/"seq":[0-9]*,//'; }
if decode "$work/percpu.data" percpu &&
	[ "$(grep -c '"type":"cpu"' "$work/percpu.jsonl")" = 1 ] &&
	grep -q '"type":"cpu",.*"cpu":0' "$work/percpu.jsonl" &&
	[ "$(noseq "$work/percpu.jsonl")" = "$(noseq "$work/plt.clean.jsonl")" ]; then
	pass per-cpu-one-buffer
else
	fail per-cpu-one-buffer "$(cat "$work/percpu.err"; diff <(noseq "$work/plt.clean.jsonl") <(noseq "$work/percpu.jsonl") | head -5)"
fi
# An AUXTRACE record written twice (per thread and per CPU): its bytes
# are decoded once, and the repeat is told as a repeat, never as a gap
# ("18446744073709527904 bytes of AUX data missing": the overlap as an
# unsigned gap, and every event twice)
for k in plt:plt.clean percpu:percpu; do
	patch_records "$work/${k%%:*}.data" "$work/${k%%:*}-twice.data" auxtrace-twice
	decode "$work/${k%%:*}-twice.data" "${k%%:*}-twice"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$work/${k#*:}.jsonl" "$work/${k%%:*}-twice.jsonl" &&
		grep -q ": [0-9]* bytes of AUX data at offset 0x0 were in the trace before (an AUXTRACE record written twice, or two that overlap): decoded once, the repeat skipped" "$work/${k%%:*}-twice.err" &&
		! grep -q "missing" "$work/${k%%:*}-twice.err"; then
		pass "auxtrace-twice/${k%%:*}"
	else
		fail "auxtrace-twice/${k%%:*}" "exit $rc: $(cat "$work/${k%%:*}-twice.err")" \
			"events: $(wc -l <"$work/${k%%:*}-twice.jsonl") against $(wc -l <"$work/${k#*:}.jsonl")"
	fi
done
# Two AUXTRACE records whose data overlap: the repeated bytes are skipped
# and the rest joins the first, so the decode is the clean one
patch_records "$work/plt.data" "$work/overlap.data" auxtrace-overlap
decode "$work/overlap.data" overlap
rc=$?
if [ $rc -eq 0 ] && cmp -s "$work/plt.clean.jsonl" "$work/overlap.jsonl" &&
	grep -q ": 96 bytes of AUX data at offset 0x[0-9a-f]* were in the trace before" "$work/overlap.err" &&
	! grep -q "missing" "$work/overlap.err"; then
	pass auxtrace-overlap
else
	fail auxtrace-overlap "exit $rc: $(cat "$work/overlap.err")" \
		"$(diff "$work/plt.clean.jsonl" "$work/overlap.jsonl" | head -4)"
fi
# A per-CPU recording that names two processes (one ITRACE_START made to
# name another pid, with nothing else about it): no longer refused (a
# command that forks is decoded, tests/e2e/capture-fork.sh); the other
# process owns no trace here, so the events are the clean ones.
prog=plt
synth plt.percpu --per-cpu
patch_records "$work/plt.percpu.data" "$work/twoproc.data" itrace-start-other-pid
decode "$work/plt.percpu.data" onepercpu
decode "$work/twoproc.data" twoproc
rc=$?
[ $rc -eq 0 ] && cmp -s "$work/onepercpu.jsonl" "$work/twoproc.jsonl" &&
	pass per-cpu-two-processes-decoded ||
	fail per-cpu-two-processes-decoded "exit $rc: $(cat "$work/twoproc.err")" \
		"$(diff "$work/onepercpu.jsonl" "$work/twoproc.jsonl" | head -4)"
# An AUXTRACE_INFO time_shift of 64 or more: no conversion can use it (a
# shift by 64 is undefined: UBSan's report in the SAN build, wrong times
# in the release build; 0x10005 was read as 5). Refused, naming the file,
# the field, its value and its offset.
for shift in 64 65541; do
	patch_records "$work/plt.data" "$work/shift$shift.data" time-shift:$shift
	decode "$work/shift$shift.data" shift$shift
	rc=$?
	if [ $rc -eq 1 ] && grep -q "shift$shift.data: AUXTRACE_INFO's time_shift is $shift (at file offset 0x" \
		"$work/shift$shift.err" && ! grep -q "runtime error" "$work/shift$shift.err"; then
		pass time-shift-$shift-refused
	else
		fail time-shift-$shift-refused "exit $rc: $(head -5 "$work/shift$shift.err")"
	fi
done
head -c 100000 /dev/urandom >"$work/random.data"
decode "$work/random.data" random
rc=$?
[ $rc -eq 1 ] && grep -q "not a perf.data file" "$work/random.err" && pass garbage-file ||
	fail garbage-file "exit $rc: $(cat "$work/random.err")"
decode "$work/nonexistent.data" none
rc=$?
[ $rc -eq 1 ] && grep -q "nonexistent.data" "$work/none.err" && pass missing-file ||
	fail missing-file "exit $rc: $(cat "$work/none.err")"
finish
