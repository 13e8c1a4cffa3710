#!/usr/bin/env bash
# ptrace-capture -i on inputs that are not what they should be: a FIFO (or
# a directory) given as the perf.data, a FIFO where the recording names an
# ELF file, a FIFO where a binary's .gnu_debuglink points. None may block:
# each run is under `timeout`, and a run it kills is a failure.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/$O/bin
corpus=$top/tests/corpus/corpus.sh
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "work $work (kept)" >&2; else trap 'rm -rf "$work"' EXIT; fi
fails=0
pass() { echo "PASS: capture-inputs/$1"; }
fail() { echo "FAIL: capture-inputs/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; fails=$((fails + 1)); }

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

# A FIFO as the perf.data: refused at once, the message naming it (open()
# of a FIFO waits for a writer forever); a directory likewise.
mkfifo "$work/fifo.data"
decode "$work/fifo.data" fifo
rc=$?
[ $rc -eq 1 ] && grep -q "fifo.data: not a regular file" "$work/fifo.err" &&
	pass input-fifo-refused || fail input-fifo-refused "exit $rc: $(cat "$work/fifo.err")"
mkdir "$work/dir.data"
decode "$work/dir.data" dir
rc=$?
[ $rc -eq 1 ] && grep -q "dir.data: not a regular file" "$work/dir.err" &&
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
if [ $rc -eq 0 ] && grep -q "cannot read $work/elf: not a regular file" "$work/elf.err" &&
	grep -q '"type":"error"' "$work/elf.jsonl"; then
	pass mmap-path-fifo
else
	fail mmap-path-fifo "exit $rc: $(cat "$work/elf.err")"
fi

[ "$fails" -eq 0 ]
