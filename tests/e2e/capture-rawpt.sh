#!/usr/bin/env bash
# ptrace-capture --pt: a raw PT stream with the code named by --raw/--elf.
#  - ptsynth's raw stream of a corpus program (PREFIX.TID.pt), its
#    mappings given as --raw (as the sideband lists them) and as --elf:
#    the same events as `ptrace-capture -i` of the same perf.data, but
#    times and TIME_EXACT (0x10): the raw stream has no perf time
#    conversion and no TSC/CTC ratio (times are the trace's TSC, MTC is
#    not used); fast, reference and bitwise decoders, -j 2.
#  - an instruction that spans two adjacent --raw sections (hand-made
#    code and PT): every decoder follows it.
#  - bad input: a missing file, overlapping sections, bad --raw syntax,
#    a range past the file's end, a trace without PSB, a FIFO, a non-ELF
#    --elf: exit 1 or 2, a message naming the problem, no ring left.
T=capture-rawpt
. "$(dirname "$0")/lib.sh"
corpus=$top/$O/corpus

# events of a ring without seq, time and TIME_EXACT, nor thread_exit
# (perf.data's EXIT record: a raw trace has no sideband to say it), nor
# the process's name (-i has the COMM record's, the name the program ran
# as; a raw trace names none, and --pt takes the first file's)
events() {
	"$bin/ptrace-read" -f jsonl "$1" | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] == "thread_exit":
        continue
    e.pop("seq", None); e.pop("time", None); e.pop("comm", None)
    if e["type"] == "process":
        e.pop("name", None)
    if "flags" in e:
        e["flags"] &= ~0x10
        if not e["flags"]:
            del e["flags"]
    print(json.dumps(e, sort_keys=True))'
}

# --- a corpus trace, against -i ---------------------------------------
for name in recurse fptr; do
	sb=$corpus/$name.sideband
	if [ ! -f "$sb" ]; then
		echo "SKIP: capture-rawpt/$name (no $sb: make tests)"
		continue
	fi
	pid=$(awk '/^pid/ {print $2}' "$sb")
	pt=$(awk '/^thread/ {print $3; exit}' "$sb")
	raws=()
	while read -r kw s e off path; do
		[ "$kw" = mmap ] || continue
		raws+=(--raw "$path:0x$off-$(printf 0x%x $((16#$e - 16#$s)))@0x$s")
	done <"$sb"
	"$bin/ptrace-capture" -q -i "$corpus/$name.data" -o "$work/$name.i.srb" ||
		{ fail "$name-perf-data"; continue; }
	events "$work/$name.i.srb" >"$work/$name.i.txt"
	for dec in fast reference bitwise; do
		extra=(--decoder "$dec")
		[ "$dec" = reference ] && { "$bin/ptrace-capture" -q --decoder reference -i "$corpus/$name.data" -o "$work/$name.iref.srb" && events "$work/$name.iref.srb" >"$work/$name.iref.txt"; }
		ref=$work/$name.i.txt; [ "$dec" = reference ] && ref=$work/$name.iref.txt
		"$bin/ptrace-capture" -q "${extra[@]}" --pt "$pt" "${raws[@]}" --pid "$pid" \
			-o "$work/$name.$dec.srb" 2>"$work/$name.$dec.err" &&
			events "$work/$name.$dec.srb" >"$work/$name.$dec.txt" &&
			cmp -s "$ref" "$work/$name.$dec.txt" &&
			pass "$name-raw-$dec-equals-i" ||
			fail "$name-raw-$dec-equals-i" "$(cat "$work/$name.$dec.err")" \
				"$(diff "$ref" "$work/$name.$dec.txt" 2>&1 | head -5)"
	done
	"$bin/ptrace-capture" -q -j 2 --piece-bytes 4096 --pt "$pt" "${raws[@]}" --pid "$pid" \
		-o "$work/$name.j2.srb" && events "$work/$name.j2.srb" | cmp -s - "$work/$name.i.txt" &&
		pass "$name-raw-j2-equals-i" || fail "$name-raw-j2-equals-i"
	# the same code page by page, as a kAFL or Nyx page dump gives it:
	# hundreds of sections (a dso event each), the same other events
	pages=()
	while read -r kw s e off path; do
		[ "$kw" = mmap ] || continue
		for ((a = 16#$s; a < 16#$e; a += 4096)); do
			pages+=(--raw "$path:$(printf 0x%x $((16#$off + a - 16#$s)))-4096@$(printf 0x%x $a)")
		done
	done <"$sb"
	"$bin/ptrace-capture" -q --pt "$pt" "${pages[@]}" --pid "$pid" \
		-o "$work/$name.pages.srb" 2>"$work/$name.pages.err" &&
		events "$work/$name.pages.srb" | grep -v '"type": "dso"' |
		cmp -s - <(grep -v '"type": "dso"' "$work/$name.i.txt") &&
		pass "$name-raw-$((${#pages[@]} / 2))-pages-equals-i" ||
		fail "$name-raw-pages-equals-i" "$(cat "$work/$name.pages.err")"
done

# --elf: the program and its libraries by their PT_LOAD segments. ld.so
# and libc are shared objects loaded at a base; the program is given
# with its base too when it is a PIE. The symbols of the calls and
# returns are those of -i; DSO definitions differ (one per executable
# segment of each file, as the ELF says, not as the mmaps cut them).
sb=$corpus/recurse.sideband
if [ -f "$sb" ]; then
	pid=$(awk '/^pid/ {print $2}' "$sb")
	pt=$(awk '/^thread/ {print $3; exit}' "$sb")
	elfs=()
	while read -r kw s e off path; do
		[ "$kw" = mmap ] || continue
		# the load bias: the mapping's start minus the vaddr of the
		# PT_LOAD that holds its file offset
		bias=$(python3 - "$path" "$s" "$off" <<'PY'
import struct, sys
path, start, off = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
d = open(path, 'rb').read(65536)
etype = struct.unpack_from('<H', d, 16)[0]
phoff, = struct.unpack_from('<Q', d, 32)
phentsize, phnum = struct.unpack_from('<HH', d, 54)
for i in range(phnum):
    p_type, flags, p_off, vaddr, paddr, filesz = struct.unpack_from('<IIQQQQ', d, phoff + i * phentsize)
    if p_type == 1 and p_off <= off < p_off + filesz:
        print('' if etype == 2 else '@0x%x' % (start - (vaddr + off - p_off)))
        break
PY
)
		elfs+=(--elf "$path$bias")
	done <"$sb"
	if "$bin/ptrace-capture" -q --pt "$pt" "${elfs[@]}" --pid "$pid" -o "$work/elf.srb" 2>"$work/elf.err"; then
		events "$work/elf.srb" | grep -v '"type": "dso"' >"$work/elf.txt"
		grep -v '"type": "dso"' "$work/recurse.i.txt" >"$work/i-nodso.txt"
		cmp -s "$work/i-nodso.txt" "$work/elf.txt" && pass recurse-elf-equals-i ||
			fail recurse-elf-equals-i "$(diff "$work/i-nodso.txt" "$work/elf.txt" | head -5)"
	else
		fail recurse-elf-equals-i "$(cat "$work/elf.err")"
	fi
fi

# --- an instruction across two --raw sections -------------------------
# 0x1000 nop; 0x1001 call 0x100b (5 bytes, cut at 0x1003); 0x1006 nop;
# 0x1007 jmp *%rax (cut at 0x1008); 0x100b ret; 0x1010 hlt.
# PT: PSB+ (MODE.Exec 64-bit, FUP 0x1000), TNT taken (the ret), TIP 0x1010.
printf '\x90\xe8\x05\x00\x00\x00\x90\xff\xe0\xf4\xf4\xc3\xf4\xf4\xf4\xf4\xf4' >"$work/code.bin"
printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x99\x01\x7d\x00\x10\x00\x00\x00\x00\x02\x23\x06\x6d\x10\x10\x00\x00\x00\x00' >"$work/straddle.pt"
want='call 1001 100b
return 100b 1006
jump 1007 1010'
for dec in fast bitwise reference; do
	rm -f "$work/s.srb"
	"$bin/ptrace-capture" -q --all-branches --decoder "$dec" --pt "$work/straddle.pt" \
		--raw "$work/code.bin:0-3@0x1000" --raw "$work/code.bin:3-5@0x1003" \
		--raw "$work/code.bin:8@0x1008" -o "$work/s.srb" 2>"$work/s.err"
	got=$("$bin/ptrace-read" -f jsonl "$work/s.srb" 2>&1 | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] in ("call", "return", "jump", "error"):
        print(e["type"], "%x" % int(e.get("from", e.get("ip", "0x0")), 16), "%x" % int(e.get("to", "0x0"), 16))')
	# libipt's block decoder (the reference) reports the last branch
	# before the end of the trace without its successor (docs/decoder.md):
	# the final indirect jump is not in its events
	w=$want; [ "$dec" = reference ] && w=$(echo "$want" | head -2)
	[ "$got" = "$w" ] && pass "straddle-$dec" ||
		fail "straddle-$dec" "want: $w" "got: $got" "$(cat "$work/s.err")"
done

# --- bad input ----------------------------------------------------------
# bad NAME STATUS PATTERN ARGS...: ptrace-capture exits STATUS, its
# message matches PATTERN, no ring is left
bad() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	rm -f "$work/bad.srb"
	timeout 30 "$bin/ptrace-capture" -q "$@" -o "$work/bad.srb" 2>"$work/bad.err"
	rc=$?
	if [ $rc -eq "$want" ] && grep -q -- "$pat" "$work/bad.err" && [ ! -e "$work/bad.srb" ]; then
		pass "bad-$name"
	else
		fail "bad-$name" "exit $rc (want $want), ring left: $([ -e "$work/bad.srb" ] && echo yes || echo no)" "$(cat "$work/bad.err")"
	fi
}
c=$work/code.bin
bad missing-pt 1 "nope.pt: No such file or directory: check the path" --pt "$work/nope.pt" --raw "$c@0x1000"
bad missing-raw 1 "nope.bin: No such file or directory" --pt "$work/straddle.pt" --raw "$work/nope.bin@0x1000"
bad overlap 1 "overlaps --raw $c at 0x1008-0x1011" --pt "$work/straddle.pt" --raw "$c@0x1000" --raw "$c@0x1008"
bad raw-no-addr 2 "expected BIN\[:OFFSET\[-SIZE\]\]@ADDR" --pt "$work/straddle.pt" --raw "$c"
bad raw-bad-size 2 "expected BIN" --pt "$work/straddle.pt" --raw "$c:0x1-@0x1000"
bad raw-zero-size 2 "expected BIN" --pt "$work/straddle.pt" --raw "$c:0-0@0x1000"
bad raw-bad-addr 2 "expected BIN" --pt "$work/straddle.pt" --raw "$c@zz"
bad raw-past-end 1 "the file has 17 bytes" --pt "$work/straddle.pt" --raw "$c:4-20@0x1000"
# an ADDR whose section wraps around the end of the address space is
# told so (it was "past the end of the file", which it is not)
bad raw-wraps 1 "raw $c: 17 bytes at 0xfffffffffffffff8 wrap around the end of the 64-bit address space" \
	--pt "$work/straddle.pt" --raw "$c@0xfffffffffffffff8"
bad no-section 2 "--pt needs the code" --pt "$work/straddle.pt"
bad raw-without-pt 2 "go with --pt" --raw "$c@0x1000" -i "$work/x.data"
bad bad-cpu 2 "expected FAMILY/MODEL" --pt "$work/straddle.pt" --raw "$c@0x1000" --cpu 6
printf 'not a trace' >"$work/nopsb.pt"
bad no-psb 1 "no PSB packet in the file" --pt "$work/nopsb.pt" --raw "$c@0x1000"
: >"$work/empty.pt"
bad empty-pt 1 "the file is empty" --pt "$work/empty.pt" --raw "$c@0x1000"
mkfifo "$work/fifo.pt"
bad fifo-pt 1 "not a regular file" --pt "$work/fifo.pt" --raw "$c@0x1000"
bad elf-not-elf 1 "not a 64-bit ELF file" --pt "$work/straddle.pt" --elf "$c"
printf 'int main(void) { return 0; }\n' >"$work/nopie.c"
if cc -no-pie -o "$work/nopie" "$work/nopie.c" 2>/dev/null; then
	bad elf-exec-base 1 "drop @BASE" --pt "$work/straddle.pt" --elf "$work/nopie@0x1000"
else
	echo "SKIP: capture-rawpt/bad-elf-exec-base (cc -no-pie failed)"
fi
if cc -pie -fPIE -o "$work/pie" "$work/nopie.c" 2>/dev/null; then
	bad elf-wraps 1 "elf $work/pie: [0-9]* bytes at 0xfffffffffffff000 wrap around the end of the 64-bit address space" \
		--pt "$work/straddle.pt" --elf "$work/pie@0xfffffffffffff000"
else
	echo "SKIP: capture-rawpt/bad-elf-wraps (cc -pie failed)"
fi
finish
