#!/usr/bin/env bash
# tests/plugins/e2e-capture-threads.sh - ptrace-capture's plugins when it
# decodes threads in parallel (-j 2): every decoding thread hands its
# batches over through the ring's tap, one at a time under the host's
# lock, while the others write the ring and add names. Run by make check,
# and under ThreadSanitizer by make check-ring SAN=thread (CI's third
# pass), where a data race fails the run.
#   - callcount, slow and tee at once, in the capture's process, on traces
#     of several threads: exit 0, and callcount's answer equals that of
#     ptrace-read --plugin on the ring of a one-thread decode;
#   - tee's ring holds each thread's events in that thread's order.
# Traces: $O/corpus, else build/corpus (check-ring makes no corpus of its
# own; the release build's serves).
T=capture-threads
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
CAP=$O/bin/ptrace-capture
PR=$O/bin/ptrace-read
PL=$O/plugins

for b in "$CAP" "$PR" "$PL/callcount.so" "$PL/slow.so" "$PL/tee.so"; do
	[ -e "$b" ] || { fail build "$b is missing: run make tests"; exit 1; }
done
corpus=$O/corpus
[ -e "$corpus/threads.data" ] || corpus=build/corpus
ran=0
for t in threads threads-percpu signals; do
	data=$corpus/$t.data
	[ -e "$data" ] || continue
	ran=1
	w=$work/$t
	mkdir -p "$w"
	if ! "$CAP" -q -j 2 -i "$data" --no-ring \
		--plugin "$PL/callcount.so:out=$w/cc" \
		--plugin "$PL/slow.so:ns=1000,out=$w/slow" \
		--plugin "$PL/tee.so:ring=$w/tee.srb" >"$w/out" 2>&1; then
		fail "$t/run" "$(head -c 2000 "$w/out")"
		continue
	fi
	[ -s "$w/out" ] && { fail "$t/quiet" "$(head -c 2000 "$w/out")"; continue; }
	pass "$t/run"
	"$CAP" -q -i "$data" -o "$w/one.srb" 2>"$w/err" &&
		"$PR" -f none --plugin "$PL/callcount.so:out=$w/cc.read" "$w/one.srb" 2>>"$w/err"
	if cmp -s "$w/cc" "$w/cc.read"; then
		pass "$t/callcount-is-one-thread-read"
	else
		fail "$t/callcount-is-one-thread-read" "$(diff "$w/cc" "$w/cc.read" | head -5)" "$(cat "$w/err")"
	fi
	# per thread, the same events in the same order
	for r in tee one; do
		"$PR" -f jsonl --types '-process,-thread,-dso,-symbol' "$w/$r.srb" |
			python3 -c '
import json, sys
by = {}
for line in sys.stdin:
    e = json.loads(line)
    e.pop("seq", None)
    by.setdefault(e["tid"], []).append(json.dumps(e, sort_keys=True))
for tid in sorted(by):
    print(tid, len(by[tid]))
    print("\n".join(by[tid]))
' >"$w/$r.bythread"
	done
	if [ -s "$w/one.bythread" ] && cmp -s "$w/tee.bythread" "$w/one.bythread"; then
		pass "$t/tee-threads-in-order"
	else
		fail "$t/tee-threads-in-order" "$(diff "$w/tee.bythread" "$w/one.bythread" | head -4)"
	fi
done
[ $ran = 1 ] || echo "SKIP: $T/all (no corpus trace of threads: make tests)"
echo "($T: $nfail failed)"
finish
