#!/usr/bin/env bash
# ptrace-capture -i on recordings of programs that really fork and exec,
# made by `ptsynth --ptrace` (ptrace single-stepping every process, no
# QEMU; docs/ptsynth.md "--ptrace"): per-CPU recordings of several
# processes as perf record -e intel_pt//u -- CMD writes them, with the
# processes' real fork/exec/exit order. Workloads:
#   fork     tests/corpus/fork.c: forks a child that runs on in its image
#            and one that execs the corpus's recurse; waits for both
#   sh       /bin/sh -c 'recurse; exec fptr': a shell forks and execs
#            one program, then execs another itself (its pid, new image)
#   threads  the corpus's threads (clone, 4 threads) under --ptrace
#   signals  the corpus's signals (handlers, a recovered SIGSEGV: signal
#            delivery between single steps)
# Checks per workload:
#   perf:      perf 6.1 decodes it without errors, one flow per thread
#              of the truth, a FORK record per new process and a
#              COMM|EXEC per exec
#   fast, reference: ptrace-capture's flow equals perf script
#              --itrace=b's per thread (addresses; tests/e2e/cmpperf.py),
#              the fast path's times within a timing period of perf's
#   truth:     with --all-branches every taken branch of the truth is
#              there, in order (tests/e2e/cmptruth.py)
#   events:    a process definition per process, a thread_exit per thread
# SKIP if ptrace is not allowed here (the reason is printed).
T=capture-ptrace
. "$(dirname "$0")/lib.sh"

for t in ptsynth ptrace-capture ptrace-read; do
	[ -x "$bin/$t" ] || { echo "SKIP: capture-ptrace/all ($bin/$t missing: make tests)"; exit 0; }
done
command -v perf >/dev/null || { echo "SKIP: capture-ptrace/all (needs perf)"; exit 0; }
corpus() { # the path of corpus program $1 (built if needed)
	local p
	p=$(O=$O "$top/tests/corpus/corpus.sh" bin "$1" 2>/dev/null) || return 1
	case $p in /*) echo "$p" ;; *) echo "$top/$p" ;; esac
}
fork=$(corpus fork) && recurse=$(corpus recurse) && fptr=$(corpus fptr) &&
	threads=$(corpus threads) && signals=$(corpus signals) ||
	{ echo "SKIP: capture-ptrace/all (cannot build the corpus programs)"; exit 0; }

# a missing program: a message, exit 1
if "$bin/ptsynth" --ptrace -o "$work/x.data" -- "$work/no-such-program" 2>"$work/err"; then
	fail missing-program "exit 0"
elif grep -q "no such program" "$work/err"; then
	pass missing-program
else
	fail missing-program "$(cat "$work/err")"
fi

check() { # NAME CMD...: record CMD and check the recording
	local n=$1 data=$work/$1.data truth=$work/$1.truth rc
	shift
	"$bin/ptsynth" --ptrace -v -o "$data" --truth "$truth" -- "$@" \
		>"$work/$n.out" 2>"$work/$n.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		if grep -q "under ptrace\|PTRACE_\|did not stop" "$work/$n.err"; then
			echo "SKIP: capture-ptrace/$n (ptrace not allowed here: $(tail -1 "$work/$n.err"))"
		else
			fail "$n-record" "ptsynth exit $rc: $(grep -v '^map\|undecodable' "$work/$n.err" | tail -3)"
		fi
		return
	fi
	grep '^ptrace:' "$work/$n.err" | sed "s/^/  $n: /"
	local pids tids epids
	pids=$(sed -n 's/^# process \([0-9]*\) .*/\1/p' "$truth" | sort -n | tr '\n' ' ')
	tids=$(sed -n 's/^# thread \([0-9]*\) .*/\1/p' "$truth" | sort -n | tr '\n' ' ')
	pass "$n-record"

	# --- perf's view ---------------------------------------------------
	perf script -i "$data" --itrace=be --ns -F tid,time,flags,ip,sym,dso,addr \
		>"$work/$n.perf" 2>"$work/$n.perf.err"
	perf script -i "$data" --show-task-events --itrace= >"$work/$n.tasks" 2>&1
	local ptids ok=1 why=
	ptids=$(awk '{print $1}' "$work/$n.perf" | sort -nu | tr '\n' ' ')
	grep -q "instruction trace error" "$work/$n.perf" &&
		ok=0 why="$(grep -m1 'trace error' "$work/$n.perf")"
	[ "$ptids" = "$tids" ] || ok=0 why="$why perf's threads '$ptids', truth's '$tids'"
	# the traced command's process: the truth's first (not the lowest
	# pid: pids wrap around)
	local first
	first=$(sed -n 's/^# process \([0-9]*\) .*/\1/p' "$truth" | head -n 1)
	for p in $pids; do
		[ "$p" = "$first" ] && continue
		grep -q "PERF_RECORD_FORK($p:$p):" "$work/$n.tasks" ||
			ok=0 why="$why no FORK of $p"
	done
	[ "$(grep -c 'PERF_RECORD_COMM exec' "$work/$n.tasks")" -ge "${EXECS:-1}" ] ||
		ok=0 why="$why fewer than ${EXECS:-1} COMM exec records"
	if [ $ok = 1 ]; then
		pass "$n-perf"
	else
		fail "$n-perf" "$why" "$(head -3 "$work/$n.perf.err")"
	fi
	grep -v "instruction trace error" "$work/$n.perf" >"$work/$n.perf.b"

	# --- ours ------------------------------------------------------------
	for dec in fast reference; do
		if ! "$bin/ptrace-capture" -q --names perf --decoder $dec -i "$data" \
			-o "$work/$n.$dec.srb" 2>"$work/err"; then
			fail "$n-$dec-vs-perf" "ptrace-capture exit $?: $(cat "$work/err")"
			continue
		fi
		"$bin/ptrace-read" -f jsonl "$work/$n.$dec.srb" >"$work/$n.$dec.jsonl"
		local t=--times
		[ $dec = reference ] && t=
		if python3 "$top/tests/e2e/cmpperf.py" "$work/$n.perf.b" \
			"$work/$n.$dec.jsonl" --addresses $t >"$work/out"; then
			pass "$n-$dec-vs-perf"
		else
			fail "$n-$dec-vs-perf" "$(head -12 "$work/out")"
		fi
	done
	if "$bin/ptrace-capture" -q --names perf --all-branches -i "$data" -o "$work/$n.all.srb" 2>"$work/err" &&
		"$bin/ptrace-read" -f jsonl "$work/$n.all.srb" >"$work/$n.all.jsonl" &&
		python3 "$top/tests/e2e/cmptruth.py" "$truth" "$work/$n.all.jsonl" >"$work/out"; then
		pass "$n-all-branches-vs-truth"
		sed "s/^/  $n: /" "$work/out"
	else
		fail "$n-all-branches-vs-truth" "$(cat "$work/err")" "$(head -8 "$work/out")"
	fi
	if [ -f "$work/$n.fast.jsonl" ]; then
		local defs want
		defs=$(python3 -c 'import json,sys
ev = [json.loads(l) for l in open(sys.argv[1])]
procs = sorted({e["pid"] for e in ev if e["type"] == "process"})
exits = sorted(e["tid"] for e in ev if e["type"] == "thread_exit")
print(" ".join(map(str, procs)), "|", " ".join(map(str, exits)))' "$work/$n.fast.jsonl")
		want="${pids% } | ${tids% }"
		if [ "$defs" = "$want" ]; then
			pass "$n-events"
		else
			fail "$n-events" "process and thread_exit: '$defs', want '$want'"
		fi
	fi
}

EXECS=2 check fork "$fork" "$recurse"
EXECS=3 check sh /bin/sh -c "$recurse; exec $fptr"
EXECS=1 check threads "$threads"
EXECS=1 check signals "$signals"

finish
