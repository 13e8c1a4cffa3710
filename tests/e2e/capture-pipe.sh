#!/usr/bin/env bash
# tests/e2e/capture-pipe.sh - perf's pipe mode (issue 32, part 4):
# 'perf inject -i FILE -o -' (what 'perf record -o -' writes) piped into
# 'ptrace-capture -i -', written to a file, or through a FIFO, gives the
# ring of 'ptrace-capture -i FILE' (its events, byte for byte as JSON
# lines) on corpus traces: one thread, threads, a per-CPU recording, C++
# exceptions. A stream cut short, garbage, an empty stream and hostile
# records are refused with a message and exit 1, and leave no file
# behind.
T=capture-pipe
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
B=$O/bin
if ! command -v perf >/dev/null; then
	echo "SKIP: $T/all (perf is not installed: it writes the pipe-mode streams)"
	exit 0
fi
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"

events() { "$B/ptrace-read" -f jsonl "$1"; }

for p in pgqsort threads threads-percpu exceptions; do
	data=$O/corpus/$p.data
	[ -e "$data" ] || { fail "$p" "no $data: run make tests"; continue; }
	"$B/ptrace-capture" -q -i "$data" -o "$work/$p.srb" 2>"$work/err" ||
		{ fail "$p/file" "$(cat "$work/err")"; continue; }
	events "$work/$p.srb" >"$work/$p.want"
	# stdin
	perf inject -i "$data" -o - 2>/dev/null |
		"$B/ptrace-capture" -q -i - -o "$work/$p.stdin.srb" 2>"$work/err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s <(events "$work/$p.stdin.srb") "$work/$p.want"; then
		pass "$p/stdin-equals-file ($(wc -l <"$work/$p.want") events)"
	else
		fail "$p/stdin-equals-file" "exit $rc: $(head -c 300 "$work/err")"
	fi
	# a file perf wrote in pipe mode
	perf inject -i "$data" -o - >"$work/$p.pipe.data" 2>/dev/null
	"$B/ptrace-capture" -q -i "$work/$p.pipe.data" -o "$work/$p.pf.srb" 2>"$work/err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s <(events "$work/$p.pf.srb") "$work/$p.want"; then
		pass "$p/pipe-file-equals-file"
	else
		fail "$p/pipe-file-equals-file" "exit $rc: $(head -c 300 "$work/err")"
	fi
done

# the header in two writes (a pipe's read may return less than asked)
rm -f "$work/split.srb"
{ head -c 5 "$work/pgqsort.pipe.data"; sleep 0.3; tail -c +6 "$work/pgqsort.pipe.data"; } |
	"$B/ptrace-capture" -q -i - -o "$work/split.srb" 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && cmp -s <(events "$work/split.srb") "$work/pgqsort.want"; then
	pass "header-split-equals-file"
else
	fail "header-split-equals-file" "exit $rc: $(head -c 300 "$work/err")"
fi

# a FIFO that perf writes into
rm -f "$work/fifo"
mkfifo "$work/fifo"
(perf inject -i "$O/corpus/threads.data" -o - >"$work/fifo" 2>/dev/null &)
timeout 60 "$B/ptrace-capture" -q -i "$work/fifo" -o "$work/fifo.srb" 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && cmp -s <(events "$work/fifo.srb") "$work/threads.want"; then
	pass "fifo-equals-file"
else
	fail "fifo-equals-file" "exit $rc: $(head -c 300 "$work/err")"
fi

# refused: a stream cut short, garbage, nothing; no ring and no copy left
size=$(stat -c %s "$work/pgqsort.pipe.data")
refused() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" 2>"$work/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$pat" "$work/err" && [ ! -e "$work/$name.srb" ] &&
		[ -z "$(ls "$TMPDIR")" ]; then
		pass "refused-$name ($(head -c 160 "$work/err"))"
	else
		fail "refused-$name" "exit $rc: $(cat "$work/err"); left: $(ls "$TMPDIR")"
	fi
}
refused cut "the stream ended inside a record" sh -c \
	"head -c $((size - 100)) '$work/pgqsort.pipe.data' | '$B/ptrace-capture' -q -i - -o '$work/cut.srb'"
refused garbage "not perf.data in pipe mode" sh -c \
	"head -c 4096 /dev/urandom | '$B/ptrace-capture' -q -i - -o '$work/garbage.srb'"
refused empty "not perf.data in pipe mode" sh -c \
	"'$B/ptrace-capture' -q -i - -o '$work/empty.srb' </dev/null"
# hostile: an AUXTRACE record that claims 3 GB of data and ends; an attr
# whose size is no multiple of 8
python3 - "$work/pgqsort.pipe.data" "$work/h1.data" "$work/h2.data" <<'PY'
import struct, sys
head = open(sys.argv[1], "rb").read(16)
aux = struct.pack("<IHH", 71, 0, 48) + struct.pack("<QQQIIII", 3 << 30, 0, 0, 0, 1, 0, 0)
open(sys.argv[2], "wb").write(head + aux + bytes(100))
attr = struct.pack("<IHH", 64, 0, 8 + 68) + struct.pack("<II", 1, 68) + bytes(60)
open(sys.argv[3], "wb").write(head + attr)
PY
refused huge-auxtrace "the stream ended inside a record" sh -c \
	"'$B/ptrace-capture' -q -i - -o '$work/huge-auxtrace.srb' <'$work/h1.data'"
refused odd-attr "malformed perf.data record" sh -c \
	"'$B/ptrace-capture' -q -i - -o '$work/odd-attr.srb' <'$work/h2.data'"
finish
