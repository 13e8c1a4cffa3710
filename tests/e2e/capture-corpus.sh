#!/usr/bin/env bash
# ptrace-capture -i against perf's own decoder and the ground truth, for
# every program of the corpus (tests/corpus/corpus.sh: traces made by
# ptsynth, cached under $O/corpus), in the variants default, noretcomp
# (no return compression), overflow (an injected PT overflow) and percpu
# (a per-CPU recording on 2 CPUs, threads migrating: ptsynth --per-cpu).
# Per trace:
#   fast:      the flow events equal perf script --itrace=b's, per thread,
#              same-symbol jumps dropped (addresses, symbols, order), and
#              times never go backwards and stay within one timing-packet
#              period of perf's (traces with timing packets)
#   reference: libipt's block decoder gives the same events as the fast path
#              (and as perf), times aside
#   all:       with --all-branches every taken branch of the truth is there
#   bitwise:   walking one TNT bit at a time (no cache of recorded runs)
#              gives the very same ring
#   pieces:    (percpu) decoding each CPU's stream 4 KiB at a time gives the
#              same ring as the default 256 KiB pieces
#   split:     (one thread) -j 2 cutting its trace at PSBs into 4 KiB
#              pieces gives the very same ring
T=capture-corpus
. "$(dirname "$0")/lib.sh"

corpus=$top/tests/corpus/corpus.sh
names=$(O=$O "$corpus" list)

# The fields of our JSON lines for the fast/reference comparison, thread
# by thread. Left out: the TIME_EXACT and INDIRECT flags (how the decoder
# learnt a value, not what happened) and the time: the reference takes
# times from libipt, which runs up to one timing packet ahead after an
# indirect branch (the fast path's times are checked against perf's
# above); so in a per-CPU recording, where the CPUs' events are merged by
# time, two threads' events may interleave otherwise.
flow() {
	python3 -c '
import json, sys
out = []
for line in open(sys.argv[1]):
    e = json.loads(line)
    e.pop("seq", None)
    e.pop("time", None)
    f = e.pop("flags", 0) & ~0x18
    if f:
        e["flags"] = f
    out.append((e.get("tid", 0), json.dumps(e, sort_keys=True)))
for _, line in sorted(out, key=lambda x: x[0]):
    print(line)' "$1"
}

# same_ring CHECK TAG OPTIONS...: ptrace-capture with OPTIONS makes the
# very ring (as JSON lines) that it made with none
same_ring() {
	local check=$1 tag=$2 ring=$work/$name.$2.srb
	shift 2
	if "$bin/ptrace-capture" -q --names perf "$@" -i "$data" -o "$ring" 2>"$work/err" &&
		"$bin/ptrace-read" -f jsonl "$ring" >"$work/$name.$tag.jsonl" &&
		cmp -s "$work/$name.fast.jsonl" "$work/$name.$tag.jsonl"; then
		pass "$name/$check"
	else
		fail "$name/$check" "$(cat "$work/err")" \
			"$(diff "$work/$name.fast.jsonl" "$work/$name.$tag.jsonl" | head -6)"
	fi
}

# same_types TYPES: ptrace-capture --types TYPES makes the events of those
# types that it made with none, with the same times and flags (the walker
# does not make the others; ring positions aside)
same_types() {
	local ring=$work/$name.types.srb
	if "$bin/ptrace-capture" -q --names perf --types "$1" -i "$data" -o "$ring" 2>"$work/err" &&
		"$bin/ptrace-read" -f jsonl "$ring" | flow_only >"$work/$name.types.jsonl" &&
		"$bin/ptrace-read" -f jsonl --types "$1" "$work/$name.fast.srb" | flow_only >"$work/$name.typed.jsonl" &&
		[ -s "$work/$name.types.jsonl" ] &&
		cmp -s "$work/$name.typed.jsonl" "$work/$name.types.jsonl"; then
		pass "$name/types-same-events"
	else
		fail "$name/types-same-events" "$(cat "$work/err")" \
			"$(diff "$work/$name.typed.jsonl" "$work/$name.types.jsonl" | head -6)"
	fi
}

# JSON lines on stdin: the events but names, without their ring positions
flow_only() {
	python3 -c 'import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] in ("symbol", "dso", "thread", "process", "syscall_name"):
        continue
    e.pop("seq", None)
    print(json.dumps(e, sort_keys=True))'
}

# threads JSONL: how many threads made calls or returns
threads() {
	python3 -c 'import json, sys
print(len({e.get("tid") for e in map(json.loads, open(sys.argv[1]))
           if e["type"] in ("call", "return")}))' "$1"
}

for trace in $(for n in $names; do for v in default noretcomp overflow percpu; do echo $n/$v; done; done); do
	name=${trace/\//-}
	if ! dir=$(O=$O "$corpus" trace "${trace%/*}" "${trace#*/}" 2>"$work/err"); then
		fail "$name" "corpus.sh trace ${trace%/*} ${trace#*/} failed: $(tail -3 "$work/err")"
		continue
	fi
	data=$dir/trace.data
	truth=$dir/trace.truth
	timing=--times
	grep -q '^# options.*timing 0' "$truth" 2>/dev/null && timing=

	perf script -i "$data" --itrace=b --ns \
		-F tid,time,flags,ip,sym,dso,addr >"$work/$name.perf" 2>"$work/$name.perf.err"
	for dec in fast reference; do
		ring=$work/$name.$dec.srb
		if ! "$bin/ptrace-capture" --names perf --decoder $dec -i "$data" -o "$ring" 2>"$work/err"; then
			fail "$name/$dec" "ptrace-capture failed: $(cat "$work/err")"
			continue
		fi
		# the summary speaks English ("1 thread", not "1 threads")
		if grep -q ' 1 threads\| 1 CPUs' "$work/err"; then
			fail "$name/$dec-summary" "$(grep branches "$work/err")"
		fi
		# the summary's counters, for the comparison below
		sed -n 's/.*: \([0-9]*\) branches, [0-9]* events, \([0-9]*\) decode errors, \([0-9]*\) overflows.*/\1 \2 \3/p' \
			"$work/err" >"$work/$name.$dec.branches"
		"$bin/ptrace-read" -f jsonl "$ring" >"$work/$name.$dec.jsonl"
		t=$timing
		[ $dec = reference ] && t=
		python3 "$top/tests/e2e/cmpperf.py" "$work/$name.perf" \
			"$work/$name.$dec.jsonl" $t >"$work/out"
		case $? in
		0) pass "$name/$dec-vs-perf" ;;
		*) fail "$name/$dec-vs-perf" "$(head -20 "$work/out")" ;;
		esac
	done
	if [ -f "$work/$name.fast.jsonl" ] && [ -f "$work/$name.reference.jsonl" ]; then
		if diff <(flow "$work/$name.fast.jsonl") <(flow "$work/$name.reference.jsonl") >"$work/diff"; then
			pass "$name/fast-equals-reference"
		else
			fail "$name/fast-equals-reference" "$(head -6 "$work/diff")"
		fi
		# "branches" in the summary means the same in both decoders; but
		# the last branch before a gap (an overflow, an error) has no
		# successor in libipt, which then cannot tell whether a
		# conditional one was taken: one each may be missing there
		read -r fb ferr fovf <"$work/$name.fast.branches"
		read -r rb _ _ <"$work/$name.reference.branches"
		if [ -n "$fb" ] && [ -n "$rb" ] && [ "$rb" -le "$fb" ] &&
			[ $((fb - rb)) -le $((ferr + fovf)) ]; then
			pass "$name/branches-fast-equals-reference"
		else
			fail "$name/branches-fast-equals-reference" "fast '$fb' (errors+overflows ${ferr:-?}+${fovf:-?}), reference '$rb'"
		fi
	fi
	if [ -f "$work/$name.fast.jsonl" ]; then
		# the cache of recorded TNT runs changes nothing: the walk one
		# bit at a time gives the very same ring, times and flags too
		same_ring fast-equals-bitwise bitwise --decoder bitwise
		same_types call,return
		case ${trace#*/} in
		percpu)
			# the CPUs' streams decoded 4 KiB at a time and merged
			# as they go: the very same ring as in 256 KiB pieces
			same_ring small-pieces-same-ring pieces --piece-bytes 4096 ;;
		*)
			# one thread's trace cut at its PSBs into 4 KiB pieces,
			# decoded by two threads and joined: the same ring (with
			# several threads, the ring's order of threads varies)
			if [ "$(threads "$work/$name.fast.jsonl")" = 1 ]; then
				same_ring split-j2-same-ring split -j 2 --piece-bytes 4096
				# from 4 threads on the workers settle their
				# events for the merge and tell the sink which
				# addresses it named (decoder/parallel.c)
				same_ring split-j4-same-ring split4 -j 4 --piece-bytes 4096
			fi ;;
		esac
	fi
	if [ -f "$truth" ]; then
		ring=$work/$name.all.srb
		rm -f "$work/$name.all.jsonl"
		if ! "$bin/ptrace-capture" -q --names perf --all-branches -i "$data" -o "$ring" 2>"$work/err"; then
			fail "$name/all-branches-vs-truth" "ptrace-capture --all-branches failed: $(cat "$work/err")"
		elif ! "$bin/ptrace-read" -f jsonl "$ring" >"$work/$name.all.jsonl" 2>"$work/err"; then
			fail "$name/all-branches-vs-truth" "ptrace-read failed: $(cat "$work/err")"
		elif python3 "$top/tests/e2e/cmptruth.py" "$truth" "$work/$name.all.jsonl" >"$work/out"; then
			pass "$name/all-branches-vs-truth"
		else
			fail "$name/all-branches-vs-truth" "$(head -12 "$work/out")"
		fi
	fi
	rm -f "$work"/*.srb
done
finish
