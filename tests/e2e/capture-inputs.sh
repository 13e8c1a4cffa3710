#!/usr/bin/env bash
# ptrace-capture -i on inputs that are not what they should be: a FIFO (or
# a directory) given as the perf.data, a FIFO where the recording names an
# ELF file, a FIFO where a binary's .gnu_debuglink points, a perf.data cut
# short while it is decoded. None may block (each run is under `timeout`,
# and a run it kills is a failure) or crash.
T=capture-inputs
. "$(dirname "$0")/lib.sh"
corpus=$top/tests/corpus/corpus.sh

# decode DATA NAME [opts]: ptrace-capture under a timeout -> $work/NAME.srb,
# its events in $work/NAME.jsonl, stderr in $work/NAME.err; its status.
decode() {
	local data=$1 name=$2
	shift 2
	rm -f "$work/$name.srb" "$work/$name.jsonl"
	timeout 30 "$bin/ptrace-capture" -q "$@" -i "$data" -o "$work/$name.srb" \
		2>"$work/$name.err"
	local rc=$?
	[ $rc -eq 124 ] && echo "(killed after 30 s: it hung)" >>"$work/$name.err"
	[ -f "$work/$name.srb" ] &&
		"$bin/ptrace-read" -f jsonl "$work/$name.srb" >"$work/$name.jsonl" \
			2>>"$work/$name.err"
	return $rc
}

# A FIFO as the perf.data is read as perf's pipe mode (capture-pipe.sh);
# one that carries something else is refused, the message naming it; a
# directory likewise.
mkfifo "$work/fifo.data"
(head -c 4096 /dev/urandom >"$work/fifo.data" &)
decode "$work/fifo.data" fifo
rc=$?
[ $rc -eq 1 ] && grep -q "fifo.data: not perf.data in pipe mode" "$work/fifo.err" &&
	pass input-fifo-not-perf-refused || fail input-fifo-not-perf-refused "exit $rc: $(cat "$work/fifo.err")"
mkdir "$work/dir.data"
decode "$work/dir.data" dir
rc=$?
[ $rc -eq 1 ] && grep -q "dir.data: a directory, not a perf.data file" "$work/dir.err" &&
	pass input-directory-refused || fail input-directory-refused "exit $rc: $(cat "$work/dir.err")"

# A program whose .symtab is in a separate debug file in its .debug/, found
# through its .gnu_debuglink (perf's search: beside the program first).
exe=$(O=$O "$corpus" bin fptr) || { fail build; exit 1; }
mkdir -p "$work/.debug"
cp "$exe" "$work/dl"
(cd "$work" && objcopy --only-keep-debug dl .debug/dl.dbg &&
	strip --strip-all dl && objcopy --add-gnu-debuglink=.debug/dl.dbg dl) ||
	{ fail debuglink-setup "objcopy/strip failed"; exit 1; }
"$bin/ptsynth" -o "$work/dl.data" -- "$work/dl" >/dev/null 2>&1 ||
	{ fail debuglink-trace "ptsynth failed"; exit 1; }
if decode "$work/dl.data" dl.clean && grep -q '"name":"cmp_int"' "$work/dl.clean.jsonl"; then
	pass debuglink-symbols
else
	fail debuglink-symbols "no cmp_int from .debug/dl.dbg: $(cat "$work/dl.clean.err")"
fi
# A FIFO with the link's name beside the program: skipped, not opened; the
# search goes on to .debug/ and the events are the same.
mkfifo "$work/dl.dbg"
decode "$work/dl.data" dl.fifo
rc=$?
if [ $rc -eq 0 ] && cmp -s "$work/dl.clean.jsonl" "$work/dl.fifo.jsonl"; then
	pass debuglink-fifo-skipped
else
	fail debuglink-fifo-skipped "exit $rc: $(cat "$work/dl.fifo.err")"
fi

# The program the recording maps replaced by a FIFO: a warning naming it,
# decode errors where the trace went into it, no hang.
cp "$exe" "$work/elf"
"$bin/ptsynth" -o "$work/elf.data" -- "$work/elf" >/dev/null 2>&1 ||
	{ fail elf-fifo-trace "ptsynth failed"; exit 1; }
rm -f "$work/elf"
mkfifo "$work/elf"
decode "$work/elf.data" elf
rc=$?
if [ $rc -eq 3 ] && grep -q "cannot read $work/elf: not a regular file" "$work/elf.err" &&
	grep -q '"type":"error"' "$work/elf.jsonl"; then
	pass mmap-path-fifo
else
	fail mmap-path-fifo "exit $rc: $(cat "$work/elf.err")"
fi

# The perf.data changed while it is decoded. Deterministic: a lossless ring
# with no reader holds the decode when it is full (1024 events, far from
# the end of these traces); the file is changed then, and a reader lets
# the decode go on into the pages that changed.
#
# held NAME DATA ACTION [ptrace-capture options]: decode a copy of DATA,
# $work/NAME.data, running the shell command ACTION on it (as $f) while
# the decode is held; $rc is ptrace-capture's status, $rrc ptrace-read's.
held() {
	local name=$1 data=$2 action=$3 committed=
	shift 3
	cp "$data" "$work/$name.data"
	rm -f "$work/$name.srb"
	timeout 60 "$bin/ptrace-capture" -q --mode lossless --capacity 1024 "$@" \
		-i "$work/$name.data" -o "$work/$name.srb" 2>"$work/$name.err" &
	local pid=$!
	# the first events are in: the file is mapped and its records read
	for _ in $(seq 400); do
		committed=$("$bin/ptrace-read" --stat "$work/$name.srb" 2>/dev/null |
			awk '$1 == "committed:" { print $2 }')
		[ "${committed:-0}" -gt 0 ] && break
		sleep 0.05
	done
	f=$work/$name.data eval "$action"
	timeout 60 "$bin/ptrace-read" --follow -f jsonl "$work/$name.srb" \
		>"$work/$name.jsonl" 2>"$work/$name.read.err"
	rrc=$?
	wait $pid
	rc=$?
}

# Cut to nothing: the decode stops with a message naming the file, exit 1
# (not a death by SIGBUS, 135), and the ring it wrote ends properly: every
# writer closed (ptrace-read exits 0, no "writer gone"), the stream ending
# with a lost event.
shrink() { # shrink NAME DATA [ptrace-capture options]
	local name=$1 data=$2
	shift 2
	[ -e "$data" ] || { fail "$name" "$data missing: make tests links the corpus"; return; }
	held "$name" "$data" 'truncate -s 0 "$f"' "$@"
	if [ $rc -eq 1 ] && [ $rrc -eq 0 ] &&
		grep -q "$name.data: the file shrank while it was read" "$work/$name.err" &&
		tail -n 1 "$work/$name.jsonl" | grep -q '"type":"lost"'; then
		pass "$name"
	else
		fail "$name" "ptrace-capture exit $rc (135: SIGBUS): $(cat "$work/$name.err")" \
			"ptrace-read exit $rrc: $(cat "$work/$name.read.err")" \
			"last event: $(tail -n 1 "$work/$name.jsonl")"
	fi
}
shrink shrink-thread "$top/$O/corpus/ls.data"
shrink shrink-jobs "$top/$O/corpus/sort.data" -j 2 --piece-bytes 4096
# A per-CPU recording: ls's one AUX buffer given cpu 0 (ptsynth's own
# per-CPU traces have several buffers per CPU, which the decode joins into
# memory first, so a cut file would not be read again).
python3 - "$top/$O/corpus/ls.data" "$work/ls-cpu0.data" <<'EOF2'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", d, 40)  # the data section
p = off
while p < off + size:
    typ, misc, sz = struct.unpack_from("<IHH", d, p)
    if typ == 71:  # PERF_RECORD_AUXTRACE: size, offset, reference, idx, tid, cpu
        struct.pack_into("<I", d, p + 8 + 32, 0)
        p += struct.unpack_from("<Q", d, p + 8)[0]
    p += sz
open(sys.argv[2], "wb").write(d)
EOF2
shrink shrink-percpu "$work/ls-cpu0.data" --piece-bytes 4096

# Grown, and rewritten whole with another (bigger) recording, as perf
# record -o does: no crash; decoded to the end, exit 0 (3 when the bytes
# read anew lost code: error events), with a warning that the file was
# written to meanwhile.
changed() { # changed NAME ACTION
	held "$1" "$top/$O/corpus/ls.data" "$2"
	local want=0
	grep -q '"type":"error"' "$work/$1.jsonl" && want=3
	if [ $rc -eq $want ] && [ $rrc -eq 0 ] &&
		grep -q "$1.data was written to while it was read" "$work/$1.err"; then
		pass "$1"
	else
		fail "$1" "ptrace-capture exit $rc: $(cat "$work/$1.err")" \
			"ptrace-read exit $rrc: $(cat "$work/$1.read.err")"
	fi
}
changed grown 'head -c 1000000 /dev/zero >>"$f"'
# (exceptions.data: four times ls.data, whatever BUILD_ID adds to either)
changed rewritten 'cat "$top/$O/corpus/exceptions.data" >"$f"'

# A usage error names the program as every other message does (getopt
# used to print its full path)
"$bin/ptrace-capture" --frobnicate 2>"$work/usage.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "^ptrace-capture: unrecognized option '--frobnicate'" "$work/usage.err"; then
	pass usage-names-the-program
else
	fail usage-names-the-program "exit $rc: $(head -2 "$work/usage.err")"
fi

finish
