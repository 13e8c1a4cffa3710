#!/usr/bin/env bash
# ptrace-capture -i on a per-CPU recording of several processes: a parent
# that forks two children, one running on in the parent's image, one
# exec'ing another program, with CPU-wide switch records
# (have_sched_switch 3, as perf writes for root). ptsynth cannot trace a
# program that forks (docs/ptsynth.md), so the recording is made by
# build/bin/ptfork out of three ptsynth --per-cpu recordings: recurse
# (the parent), recurse again (the fork child) and fptr (the exec child).
# Checks:
#   perf:      perf 6.1 decodes it without errors, 3 processes, and shows
#              the fork, exec and CPU-wide switch records
#   fast, reference: ptrace-capture's flow equals perf script --itrace=b's
#              per thread (addresses; names: see decoder.md, one table
#              for all processes), the fast path's times within a timing
#              period of perf's
#   truth:     with --all-branches every taken branch of each process's
#              truth is there, in order
#   pieces:    4 KiB pieces give the same ring
#   events:    a process definition per child, thread_exit per thread
#   refusal:   the old "one process per file" refusal is gone
#   hostile:   a fork from an unknown parent, an exec with no mappings
#              after it, a switch to an unknown task: exit 0, a warning
#              naming it, decode errors (not a crash) where code is missing
#   dlfilter:  perf script --dlfilter gives ptrace-capture's flow
#              (tests/e2e/dlfilter-compare.sh on this recording; the
#              check of names against perf's own is skipped)
T=capture-fork
. "$(dirname "$0")/lib.sh"

for t in ptsynth ptfork ptrace-capture ptrace-read; do
	[ -x "$bin/$t" ] || { echo "SKIP: capture-fork/all ($bin/$t missing: make tests)"; exit 0; }
done
command -v perf >/dev/null && command -v qemu-x86_64 >/dev/null ||
	{ echo "SKIP: capture-fork/all (needs perf and qemu-x86_64)"; exit 0; }
recurse=$(ls "$top/$O"/corpus/bin/recurse-* 2>/dev/null | head -1)
fptr=$(ls "$top/$O"/corpus/bin/fptr-* 2>/dev/null | head -1)
[ -n "$recurse" ] && [ -n "$fptr" ] ||
	{ echo "SKIP: capture-fork/all (no corpus programs: make tests)"; exit 0; }

for r in p:$recurse c:$recurse e:$fptr; do
	"$bin/ptsynth" --per-cpu -o "$work/${r%%:*}.data" --truth "$work/${r%%:*}.truth" \
		-- "${r#*:}" >/dev/null 2>"$work/ps.err" ||
		{ fail build "ptsynth ${r#*:}: $(tail -2 "$work/ps.err")"; echo "0 passed, $nfail failed"; exit 1; }
done
data=$work/fork.data
if "$bin/ptfork" -o "$data" -t "$work/fork.truth" "$work/p.data" \
	fork:"$work/c.data" exec:"$work/e.data" 2>"$work/err"; then
	pass build
else
	fail build "$(cat "$work/err")"
	exit 1
fi
ppid=$(sed -n 's/^# pid \([0-9]*\).*/\1/p' "$work/p.truth")
cpid=$(sed -n 's/^# pid \([0-9]*\).*/\1/p' "$work/c.truth")
epid=$(sed -n 's/^# pid \([0-9]*\).*/\1/p' "$work/e.truth")

# --- perf's view ---------------------------------------------------------
perf script -i "$data" --itrace=be --ns -F tid,time,flags,ip,sym,dso,addr \
	>"$work/perf" 2>"$work/perf.err"
perf script -i "$data" --show-task-events --show-switch-events --itrace= \
	>"$work/tasks" 2>&1
n=$(awk '{print $1}' "$work/perf" | sort -u | grep -c .)
if [ "$n" = 3 ] && ! grep -q "instruction trace error" "$work/perf" &&
	grep -q "PERF_RECORD_FORK($cpid:$cpid):($ppid:$ppid)" "$work/tasks" &&
	grep -q "PERF_RECORD_FORK($epid:$epid):($ppid:$ppid)" "$work/tasks" &&
	grep -q "PERF_RECORD_COMM exec: fptr.*:$epid/$epid" "$work/tasks" &&
	grep -q "SWITCH_CPU_WIDE OUT.*next pid/tid: *$epid/$epid" "$work/tasks" &&
	perf script -i "$data" -D 2>/dev/null | grep -q "Have sched_switch *3"; then
	pass perf
else
	fail perf "threads $n; $(grep -m1 'trace error' "$work/perf")" "$(head -3 "$work/perf.err")"
fi
grep -v "instruction trace error" "$work/perf" >"$work/perf.b"

# --- ours ------------------------------------------------------------------
for dec in fast reference; do
	if ! "$bin/ptrace-capture" -q --names perf --decoder $dec -i "$data" -o "$work/$dec.srb" 2>"$work/err"; then
		fail $dec "ptrace-capture exit $?: $(cat "$work/err")"
		continue
	fi
	"$bin/ptrace-read" -f jsonl "$work/$dec.srb" >"$work/$dec.jsonl"
	t=--times
	[ $dec = reference ] && t=
	if python3 "$top/tests/e2e/cmpperf.py" "$work/perf.b" "$work/$dec.jsonl" \
		--addresses $t >"$work/out"; then
		pass "$dec-vs-perf"
	else
		fail "$dec-vs-perf" "$(head -12 "$work/out")"
	fi
done
if [ -f "$work/fast.jsonl" ]; then
	# the old refusal is gone: several processes, and each has its flow
	if [ "$(python3 -c 'import json,sys
print(len({e["tid"] for e in map(json.loads, open(sys.argv[1])) if e["type"] == "call"}))' "$work/fast.jsonl")" = 3 ]; then
		pass no-refusal
	else
		fail no-refusal "not 3 threads with calls"
	fi
	defs=$(python3 -c 'import json,sys
ev = [json.loads(l) for l in open(sys.argv[1])]
procs = sorted({e["pid"] for e in ev if e["type"] == "process"})
exits = sorted((e["tid"], e["pid"]) for e in ev if e["type"] == "thread_exit")
print(" ".join(map(str, procs)), "|", " ".join("%d/%d" % x for x in exits))' "$work/fast.jsonl")
	want="$(echo $ppid $cpid $epid | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//') | $(for p in $ppid $cpid $epid; do echo $p/$p; done | sort -n | tr '\n' ' ' | sed 's/ $//')"
	if [ "$defs" = "$want" ]; then
		pass events
	else
		fail events "process and thread_exit: '$defs', want '$want'"
	fi
	"$bin/ptrace-capture" -q --names perf --piece-bytes 4096 -i "$data" -o "$work/p.srb" 2>"$work/err" &&
		"$bin/ptrace-read" -f jsonl "$work/p.srb" >"$work/p.jsonl"
	if cmp -s "$work/fast.jsonl" "$work/p.jsonl"; then
		pass small-pieces-same-ring
	else
		fail small-pieces-same-ring "$(cat "$work/err")" "$(diff "$work/fast.jsonl" "$work/p.jsonl" | head -4)"
	fi
fi
"$bin/ptrace-capture" -q --names perf --all-branches -i "$data" -o "$work/all.srb" 2>"$work/err" &&
	"$bin/ptrace-read" -f jsonl "$work/all.srb" >"$work/all.jsonl"
if python3 "$top/tests/e2e/cmptruth.py" "$work/fork.truth" "$work/all.jsonl" >"$work/out"; then
	pass all-branches-vs-truth
else
	fail all-branches-vs-truth "$(head -8 "$work/out")"
fi

# --- hostile sideband ------------------------------------------------------
for h in unknown-parent:"forked from pid 4000000" \
	exec-no-maps:"pid $epid execs, but no MMAP record" \
	unknown-tid:"runs pid 4000001, of which the recording has no mappings"; do
	what=${h%%:*} msg=${h#*:}
	"$bin/ptfork" --hostile "$what" -o "$work/h.data" "$work/p.data" \
		fork:"$work/c.data" exec:"$work/e.data" 2>"$work/err" ||
		{ fail "hostile-$what" "ptfork: $(cat "$work/err")"; continue; }
	for dec in fast reference; do
		rm -f "$work/h.srb"
		"$bin/ptrace-capture" --names perf --decoder $dec -i "$work/h.data" -o "$work/h.srb" 2>"$work/err"
		rc=$?
		# (exit 3: decoded, with code lost)
		if { [ $rc -eq 0 ] || [ $rc -eq 3 ]; } && grep -q "$msg" "$work/err" &&
			"$bin/ptrace-read" -f jsonl "$work/h.srb" >"$work/h.jsonl" 2>/dev/null; then
			case $what,$rc in
			unknown-parent,0) ok=1 ;; # the child maps its own program
			*,3) grep -q '"type":"error"' "$work/h.jsonl" && ok=1 || ok=0 ;;
			*) ok=0 ;;
			esac
			if [ $ok = 1 ]; then
				pass "hostile-$what-$dec"
			else
				fail "hostile-$what-$dec" "exit $rc: no error event where code is missing, or exit 0 with one"
			fi
		else
			fail "hostile-$what-$dec" "exit $rc" "$(cat "$work/err")"
		fi
	done
done

# --- the dlfilter ------------------------------------------------------------
if [ -e "$top/$O/lib/libstrace_dlf.so" ]; then
	DLF_TRACES=$data O=$O bash "$top/tests/e2e/dlfilter-compare.sh" >"$work/dlf" 2>&1
	grep '^\(PASS\|FAIL\)' "$work/dlf" | grep -v "perfnames\|dlfilter-args" |
		sed 's/^\(PASS\|FAIL\): dlfilter-fork\//\1: capture-fork\/dlfilter-/' >"$work/dlf.res"
	cat "$work/dlf.res"
	nfail=$((nfail + $(grep -c '^FAIL' "$work/dlf.res")))
	grep -q perfnames "$work/dlf" &&
		echo "note: capture-fork/dlfilter-perfnames not checked (one name table for all processes)"
fi

finish
