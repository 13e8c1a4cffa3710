#!/usr/bin/env bash
# tests/e2e/follow-pipelines.sh - the product's main use: a writer and
# readers following the same ring at the same time. For each writer
#   capture    ptrace-capture -q -i TRACE.data -o RING   (archive: the file
#              grows, its capacity doubling from 4096 events)
#   dlfilter   perf script --itrace=b --dlfilter libstrace_dlf.so
#              --dlarg ring=RING                         (archive, likewise)
#   capture-wait  ptrace-capture -q -i TRACE.data -o RING --wait-readers 3
#              --capacity 4096 (no --mode: lossless, as with readers it
#              is by default; the decoder waits for the slowest reader and
#              the ring wraps; compared with an archive decode's events)
#   lossless   ptrace-read --generate N --readers 3 --capacity 4096 (the
#              writer waits for the slowest reader; the ring wraps)
#   flight     ptrace-read --generate N --mode flight --readers 3 with a
#              capacity above N (nothing is overwritten: no loss expected)
# three readers are started first and seen waiting for the ring to appear
# (--follow --timeout), then the writer runs, then the readers are waited
# for:
#   jsonl   ptrace-read -f jsonl --follow -o FILE RING         (keeps up)
#   text    ptrace-read -f text --follow RING | slowcat        (falls far
#           behind: slowcat reads random chunks with random short sleeps,
#           so the reader reads positions long after the archive grew
#           past them, or the lossless writer waits for it)
#   raw     ptrace-read -f raw --follow -o FILE RING           (no
#           formatting: the fastest, the most often caught up)
# Checks per run: the writer exits 0 with nothing on stderr; each reader
# exits 0 with nothing on stderr (no "events lost"); each reader's output
# equals, byte for byte, what plain ptrace-read prints from the finished
# ring in the same format (for the generator: from a ring of the same N
# events written with nobody reading, since a lossless ring that wrapped
# keeps only its newest events; the generator is deterministic).
# Each pipeline runs FOLLOW_RUNS times (default 3): the bugs this catches
# are timing-dependent. Names: follow-pipelines/WRITER/TRACE/runK/CHECK.
#
# Traces: $O/corpus/sort.data (28.8k events: the archive doubles 3 times)
# and $O/corpus/exceptions.data with all branches (139k events: 6
# doublings), from `make tests`. Env: O (build dir), FOLLOW_RUNS,
# FOLLOW_TRACES (space-separated NAME or FILE.data, ":all" appended for
# all branches, e.g. "build/bench/bench.data sort:all"), FOLLOW_N (events
# the generator writes), FOLLOW_SLOW_S (seconds slowcat sleeps at most).
# Takes 15-20 s here, in build/ and in build/san (make check
# SAN=address,undefined) alike.
T=follow-pipelines
. "$(dirname "$0")/lib.sh"
cd "$top"
PR=$top/$O/bin/ptrace-read
CAP=$top/$O/bin/ptrace-capture
lib=$top/$O/lib/libstrace_dlf.so
R=/dev/shm/e2e_pipes_$$
pids=() # this run's readers, slowcat and writer
on_exit() { # (then lib.sh removes $work)
	# only those still running as our children (a pid may be reused)
	for p in "${pids[@]+"${pids[@]}"}"; do
		[ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = $$ ] && kill -9 "$p" 2>/dev/null
	done
	for p in "${pids[@]+"${pids[@]}"}"; do wait "$p" 2>/dev/null; done
	rm -f "$R"_*
}
trap 'exit 130' INT TERM
for need in "$PR" "$CAP"; do
	[ -x "$need" ] || { echo "FAIL: $T/build ($need missing)"; exit 1; }
done
command -v python3 >/dev/null || { skip "all (needs python3)"; exit 0; }

RUNS=${FOLLOW_RUNS:-3}
SLOW_S=${FOLLOW_SLOW_S:-0.5}
TRACES=${FOLLOW_TRACES:-sort exceptions:all}
N=${FOLLOW_N:-100000}
# seconds a run's writer and readers may take before they count as hung
LIMIT=60
ldd "$PR" 2>/dev/null | grep -q libasan && LIMIT=300
TO=30000 # ms a reader waits for the ring to appear (--timeout)
READERS="jsonl text raw"

# slowcat SEED BUDGET_S: cat in random chunks of 256 B..8 KiB with random
# sleeps of up to 3 ms, until BUDGET_S seconds were slept (then at full
# speed, so that a run takes bounded time)
cat >"$work/slowcat.py" <<'EOF'
import random, sys, time
rnd, budget = random.Random(int(sys.argv[1])), float(sys.argv[2])
fin, fout = sys.stdin.buffer, sys.stdout.buffer
slept = 0.0
while True:
    b = fin.read1(rnd.randint(256, 8192) if slept < budget else 1 << 16)
    if not b:
        break
    fout.write(b)
    if slept < budget and rnd.random() < 0.5:
        fout.flush()
        d = rnd.uniform(0, 0.003)
        time.sleep(d)
        slept += d
fout.flush()
EOF

# how a process ended, for a failure message
ended() {
	case $1 in
	0) echo "exit 0" ;;
	124) echo "still running after ${LIMIT} s: killed" ;;
	13[0-9] | 14[0-9]) echo "killed by SIG$(kill -l $(($1 - 128)))" ;;
	*) echo "exit $1" ;;
	esac
}

# wait_for PID DEADLINE: the exit status of PID, or 124 if it is still
# running at DEADLINE ($SECONDS), when it is killed
wait_for() {
	while kill -0 "$1" 2>/dev/null; do
		if [ $SECONDS -ge "$2" ]; then
			kill -9 "$1" 2>/dev/null
			wait "$1" 2>/dev/null
			return 124
		fi
		sleep 0.02
	done
	wait "$1" 2>/dev/null
}

# waiting PID: the reader PID is ptrace-read, sleeping in its wait for the
# ring to appear (its first open failed; it waits on an inotify watch of
# the directory, or sleeps)
pr_exe=$(readlink -f "$PR")
waiting() {
	local nr
	[ "$(readlink /proc/"$1"/exe 2>/dev/null)" = "$pr_exe" ] || return 1
	read -r nr _ </proc/"$1"/syscall 2>/dev/null || return 1
	# clock_nanosleep, nanosleep, poll (the directory's inotify watch),
	# ppoll
	[ "$nr" = 230 ] || [ "$nr" = 35 ] || [ "$nr" = 7 ] || [ "$nr" = 271 ]
}

# differ FORMAT GOT WANT: 0 if the files are equal, byte for byte; else 1
# and where they first differ, for a failure message
differ() {
	local fmt=$1 got=$2 want=$3 c at n
	cmp -s "$got" "$want" && return 0
	c=$(cmp "$got" "$want" 2>&1 | head -n1)
	if [ "$fmt" = raw ]; then
		at=$(echo "$c" | sed -n 's/.* byte \([0-9]*\).*/\1/p')
		n="$(($(stat -c %s "$got") / 32)) events, want $(($(stat -c %s "$want") / 32))"
		[ -n "$at" ] && case $c in
		*EOF*) n="$n; one ends after event $(((at - 1) / 32))" ;;
		*) n="$n; from event $(((at - 1) / 32)) on (byte $at) they differ" ;;
		esac
		echo "$n"
		return 1
	fi
	case $c in
	*"which is empty") at=1 ;;
	*EOF*) at=$(($(echo "$c" | sed -n 's/.*, line \([0-9]*\)$/\1/p') + 1)) ;;
	*) at=$(echo "$c" | sed -n 's/.*, line \([0-9]*\)$/\1/p') ;;
	esac
	echo "$(wc -l <"$got") lines, want $(wc -l <"$want"); first difference at line $at:"
	echo "got:  $(sed -n "${at}p" "$got" | cut -c1-200)"
	echo "want: $(sed -n "${at}p" "$want" | cut -c1-200)"
	return 1
}

# read_all RING DIR PREFIX: DIR/PREFIX.{jsonl,text,raw} from the finished RING
read_all() {
	"$PR" -f jsonl -o "$2/$3.jsonl" "$1" 2>"$2/$3.err" &&
		"$PR" -f text -o "$2/$3.text" "$1" 2>>"$2/$3.err" &&
		"$PR" -f raw -o "$2/$3.raw" "$1" 2>>"$2/$3.err"
}

# run_pipeline NAME WRITER ARG EXPECT: one run. WRITER is capture, dlfilter
# or generate; ARG its trace ("FILE" or "FILE:all") or its options; EXPECT
# is "finished" (compare with the finished ring) or a directory holding
# ref.{jsonl,text,raw}.
run_pipeline() {
	local name=$1 writer=$2 arg=$3 expect=$4
	local w=$work/run ring=$R"_"${name//\//_} r rc wpid deadline
	local -A rpid=()
	pids=()
	rm -rf "$w"; mkdir -p "$w"; rm -f "$ring"

	# the readers, before the writer
	mkfifo "$w/fifo"
	python3 "$work/slowcat.py" "$((RANDOM * 32768 + RANDOM))" "$SLOW_S" \
		<"$w/fifo" >"$w/out.text" 2>"$w/slowcat.err" &
	local spid=$!; pids+=($spid)
	for r in $READERS; do
		if [ $r = text ]; then
			"$PR" -f text --follow --timeout $TO "$ring" \
				>"$w/fifo" 2>"$w/text.err" &
		else
			"$PR" -f $r --follow --timeout $TO -o "$w/out.$r" "$ring" \
				2>"$w/$r.err" &
		fi
		rpid[$r]=$!; pids+=($!)
	done
	# every reader must be waiting for the ring before the writer starts,
	# else it might only open the finished ring and follow nothing
	local ready=0
	for _ in $(seq 500); do
		ready=1
		for r in $READERS; do waiting ${rpid[$r]} || ready=0; done
		[ $ready = 1 ] && break
		sleep 0.02
	done
	[ $ready = 1 ] || echo "  $name: a reader was not seen waiting within 10 s; starting the writer anyway" >&2

	# the writer
	case $writer in
	capture)
		local extra=()
		case $arg in *:all) extra=(--all-branches) ;; esac
		"$CAP" -q "${extra[@]}" -i "${arg%:all}" -o "$ring" \
			>"$w/writer.out" 2>"$w/writer.err" &
		;;
	capture-wait)
		local extra=()
		case $arg in *:all) extra=(--all-branches) ;; esac
		"$CAP" -q "${extra[@]}" -i "${arg%:all}" -o "$ring" \
			--wait-readers 3 --capacity 4096 \
			>"$w/writer.out" 2>"$w/writer.err" &
		;;
	dlfilter)
		local extra=() envs=()
		case $arg in *:all) extra=(--dlarg all-branches) ;; esac
		# as perfdl (perfdl.inc) runs it, but with perf's own pid in $!
		[ -n "$preload" ] && envs=("ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "LD_PRELOAD=$preload")
		env "${envs[@]}" perf script -i "${arg%:all}" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$ring" "${extra[@]}" >"$w/writer.out" 2>"$w/writer.err" &
		;;
	generate)
		# shellcheck disable=SC2086
		"$PR" --generate $N -o "$ring" --readers 3 --timeout $TO $arg \
			>"$w/writer.out" 2>"$w/writer.err" &
		;;
	esac
	wpid=$!; pids+=($wpid)
	deadline=$((SECONDS + LIMIT))
	wait_for $wpid $deadline; rc=$?
	# a lossless writer held back a second by the slow reader says so
	# (once, by design): on a loaded machine that happens; nothing else
	# may be said
	grep -v "the lossless ring is full: waiting for the slowest reader" \
		"$w/writer.err" > "$w/writer.other" || true
	if [ $rc -eq 0 ] && [ ! -s "$w/writer.other" ] && [ ! -s "$w/writer.out" ]; then
		pass "$name/writer_exit"
	else
		fail "$name/writer_exit" "writer $(ended $rc); output: $(head -c 300 "$w/writer.out" "$w/writer.err")"
	fi

	# the readers end when the writer has closed the ring
	local -A rrc=()
	for r in $READERS; do
		wait_for ${rpid[$r]} $deadline; rrc[$r]=$?
	done
	wait_for $spid $deadline; rc=$?
	pids=() # all waited for
	[ $rc -eq 0 ] || echo "slowcat $(ended $rc)" >>"$w/text.err"
	cat "$w/slowcat.err" >>"$w/text.err"

	# what plain ptrace-read prints from the finished ring
	local want=$w/fin whose="the finished ring's"
	if [ "$expect" = finished ]; then
		read_all "$ring" "$w" fin || want=
	else
		want=$expect/ref
		whose="that of the same events written with nobody reading"
	fi

	for r in $READERS; do
		if [ ${rrc[$r]} -eq 0 ] && [ ! -s "$w/$r.err" ]; then
			pass "$name/${r}_exit"
		else
			local why=
			grep -q "lost" "$w/$r.err" && why=" (events lost)"
			fail "$name/${r}_exit" "reader $(ended ${rrc[$r]})$why; stderr: $(head -c 300 "$w/$r.err")"
		fi
		if [ -z "$want" ]; then
			fail "$name/${r}_equal" "reading the finished ring failed: $(head -c 300 "$w/fin.err")"
		else
			local d
			d=$(differ $r "$w/out.$r" "$want.$r")
			case $? in
			0) pass "$name/${r}_equal" ;;
			*) fail "$name/${r}_equal" "the output differs from $whose: ${d//$'\n'/$'\n'  }" ;;
			esac
		fi
	done
	rm -rf "$w"; rm -f "$ring"
}

# --- archive writers on corpus traces --------------------------------------
traces=()
for t in $TRACES; do
	f=${t%:all}
	case $f in *.data) ;; *) f=$O/corpus/$f.data ;; esac
	label=$(basename "${f%.data}")
	case $t in *:all) label=$label-all; f=$f:all ;; esac
	if [ -e "${f%:all}" ]; then
		traces+=("$label=$f")
	else
		skip "$label (${f%:all} missing: make tests builds the corpus)"
	fi
done

havep=1
if ! command -v perf >/dev/null; then
	havep=0
	skip "dlfilter (needs perf)"
elif [ ! -e "$lib" ]; then
	havep=0
	fail "dlfilter/build" "$lib missing"
else
	. "$top/tests/e2e/perfdl.inc" # $preload for a sanitizer build
fi

for t in "${traces[@]+"${traces[@]}"}"; do
	# the events of an archive decode, for the lossless ring that wraps
	cref=$work/cref
	rm -rf "$cref"; mkdir -p "$cref"
	f=${t#*=} extra=()
	case $f in *:all) extra=(--all-branches) ;; esac
	"$CAP" -q "${extra[@]}" -i "${f%:all}" -o "$R"_cref 2>"$cref/cap.err" &&
		read_all "$R"_cref "$cref" ref || fail "capture-wait/${t%%=*}/reference" "$(head -c 300 "$cref/cap.err" "$cref/ref.err")"
	rm -f "$R"_cref
	for k in $(seq "$RUNS"); do
		run_pipeline "capture/${t%%=*}/run$k" capture "${t#*=}" finished
		[ -s "$cref/ref.raw" ] && run_pipeline "capture-wait/${t%%=*}/run$k" capture-wait "${t#*=}" "$cref"
		[ $havep = 1 ] && run_pipeline "dlfilter/${t%%=*}/run$k" dlfilter "${t#*=}" finished
	done
done

# --- with --wait-readers and no --mode, the ring is lossless ------------------
if [ ${#traces[@]} -gt 0 ]; then
	t=${traces[0]#*=}
	rm -f "$R"_wait
	"$PR" --follow --timeout $TO -f raw -o /dev/null "$R"_wait 2>/dev/null &
	wr=$!
	"$CAP" -q -i "${t%:all}" -o "$R"_wait --wait-readers 1 2>"$work/wait.err"
	wait $wr
	mode=$("$PR" --stat "$R"_wait 2>&1 | awk '$1 == "mode:" {print $2}')
	if [ "$mode" = lossless ]; then
		pass "capture-wait/lossless-by-default"
	else
		fail "capture-wait/lossless-by-default" "mode '$mode': $(head -c 300 "$work/wait.err")"
	fi
	rm -f "$R"_wait
fi

# --- the generator: lossless (wraps, waits) and flight (big enough) ---------
ref=$work/ref
mkdir -p "$ref"
if "$PR" --generate "$N" -o "$R"_ref 2>"$ref/gen.err" && read_all "$R"_ref "$ref" ref; then
	rm -f "$R"_ref
	fcap=1
	while [ $fcap -lt $((N + 4096)) ]; do fcap=$((fcap * 2)); done
	for k in $(seq "$RUNS"); do
		run_pipeline "generate-lossless/n$N/run$k" generate "--capacity 4096" "$ref"
		run_pipeline "generate-flight/n$N/run$k" generate "--mode flight --capacity $fcap" finished
	done
else
	fail "generate/reference" "$(cat "$ref/gen.err" "$ref/ref.err" 2>/dev/null | head -c 300)"
fi

finish
