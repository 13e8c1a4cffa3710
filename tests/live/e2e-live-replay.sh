#!/usr/bin/env bash
# tests/live/e2e-live-replay.sh - live capture end to end without PT
# hardware: a real program's execution encoded as PT by ptsynth (a
# perf.data), replayed through the whole live path by live_replay (fake
# kernel -> pt_backend/capture rings, thread following, -w perf.data writer),
# must decode to the same result as the recording itself:
#   - perf script --itrace=b on both files: identical branches;
#   - ptrace-capture -i on both files: identical events. The default -w
#     attrs are perf's per-thread ones, without PERF_SAMPLE_TIME, so that
#     file is timeless (times 0, as perf treats it) and events are compared
#     without their time; with sideband time (LIVE_REPLAY_TIME) the times
#     must be equal too, except where MTC timing needs the TSC/CTC ratio,
#     which -w records from this machine's CPUID, not the recording's.
# Programs: /bin/true (dynamic, ld.so + libc), corpus threads (new threads
# followed through FORK records), corpus recurse. AUX areas of 16 KiB and
# 8 KiB (perf's minimum for full trace): the data wraps many times.
T=live-replay
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
SYNTH=$O/bin/ptsynth
REPLAY=$O/tests/live_replay
CAPTURE=$O/bin/ptrace-capture
READ=$O/bin/ptrace-read

for tool in "$SYNTH" "$REPLAY" "$CAPTURE" "$READ"; do
	if [ ! -x "$tool" ]; then
		echo "SKIP: live-replay/all (missing $tool)"
		exit 0
	fi
done
if ! command -v qemu-x86_64 >/dev/null || ! command -v perf >/dev/null; then
	echo "SKIP: live-replay/all (needs qemu-x86_64 and perf)"
	exit 0
fi

events() { # perf.data -> events text (ptrace-read), or nothing on failure
	"$CAPTURE" -q --names perf -i "$1" -o "$1.srb" >/dev/null 2>"$1.err" &&
		"$READ" "$1.srb"
}

check() { # name prog aux-bytes time-compare(full|notime) ptsynth-options...
	local name=$1 prog=$2 aux=$3 tcmp=$4; shift 4
	local d=$work/$name
	mkdir -p "$d"
	if ! "$SYNTH" "$@" -o "$d/orig.data" -- "$prog" >"$d/synth.log" 2>&1; then
		fail "$name/ptsynth ($(tail -1 "$d/synth.log"))"
		return
	fi
	if ! "$REPLAY" "$d/orig.data" "$d/rep.data" "$aux" 2>"$d/replay.log"; then
		fail "$name/replay ($(tail -1 "$d/replay.log"))"
		return
	fi
	if ! LIVE_REPLAY_TIME=1 "$REPLAY" "$d/orig.data" "$d/rept.data" "$aux" \
		"$d/live.srb" 2>"$d/replayt.log"; then
		fail "$name/replay-time ($(tail -1 "$d/replayt.log"))"
		return
	fi
	# perf's decoder: same branches, thread by thread (without sample
	# times perf decodes each thread's queue on its own; the order in which
	# it prints the threads is not part of the trace)
	perf script -i "$d/orig.data" --itrace=b -F tid,ip,addr 2>/dev/null |
		sort -s -n -k1,1 >"$d/orig.perf"
	if perf script -i "$d/rep.data" --itrace=b -F tid,ip,addr 2>/dev/null |
		sort -s -n -k1,1 >"$d/rep.perf" &&
		[ -s "$d/orig.perf" ] && cmp -s "$d/orig.perf" "$d/rep.perf"; then
		pass "$name/perf-script-same-branches ($(wc -l <"$d/orig.perf") branches)"
	else
		fail "$name/perf-script-same-branches"
	fi
	# our decoder: same events
	events "$d/orig.data" >"$d/orig.txt"
	events "$d/rep.data" >"$d/rep.txt"
	events "$d/rept.data" >"$d/rept.txt"
	# without the time column; and without the time-exact flag (0x10),
	# which depends on the timing information the file records
	notime() {
		cut -d' ' -f1,3- "$1" | perl -pe \
			's/ flags=0x([0-9a-f]+)$/my $v = hex($1) & ~0x10; $v ? sprintf(" flags=0x%x", $v) : ""/e'
	}
	notime "$d/orig.txt" >"$d/orig.nt"
	notime "$d/rep.txt" >"$d/rep.nt"
	notime "$d/rept.txt" >"$d/rept.nt"
	if [ -s "$d/orig.nt" ] && cmp -s "$d/orig.nt" "$d/rep.nt"; then
		pass "$name/capture-i-same-events ($(wc -l <"$d/orig.txt") events)"
	else
		fail "$name/capture-i-same-events ($(diff "$d/orig.nt" "$d/rep.nt" | head -3 | tr '\n' ' '))"
	fi
	# decoded live (as ptrace-capture -p does): the same events as
	# ptrace-capture -i on the recording, thread by thread (the live
	# session sees each thread's records in that thread's ring, so the
	# threads' definitions interleave differently)
	"$READ" "$d/live.srb" >"$d/live.txt" 2>/dev/null
	# (a symbol is defined once, by the first thread that needs it: the
	# definitions are compared as a set)
	pertid() {
		notime "$1" | cut -d' ' -f2- | grep -v '^[^ ]* symbol ' | sort -s -k1,1
		notime "$1" | cut -d' ' -f3- | grep '^symbol ' | sort
	}
	pertid "$d/orig.txt" >"$d/orig.pt"
	pertid "$d/live.txt" >"$d/live.pt"
	if [ -s "$d/orig.pt" ] && cmp -s "$d/orig.pt" "$d/live.pt"; then
		pass "$name/live-decoded-same-events"
	else
		fail "$name/live-decoded-same-events ($(diff "$d/orig.pt" "$d/live.pt" | head -3 | tr '\n' ' '))"
	fi
	# with the persistent block cache (docs/cache.md), cold then warm:
	# the same events as decoded live without it
	if [ -n "${CACHE_CHECK:-}" ]; then
		local k ok=1
		for k in cold warm; do
			rm -f "$d/live-$k.srb"
			LIVE_REPLAY_CACHE=$d/cache LIVE_REPLAY_TIME=1 "$REPLAY" "$d/orig.data" \
				"$d/rep-$k.data" "$aux" "$d/live-$k.srb" 2>"$d/replay-$k.log" &&
				"$READ" "$d/live-$k.srb" >"$d/live-$k.txt" 2>/dev/null &&
				pertid "$d/live-$k.txt" >"$d/live-$k.pt" &&
				cmp -s "$d/live.pt" "$d/live-$k.pt" || ok=0
		done
		if [ $ok = 1 ] && ls "$d/cache/"*.blocks >/dev/null 2>&1; then
			pass "$name/live-decoded-cache-cold-warm-same-events"
		else
			fail "$name/live-decoded-cache-cold-warm-same-events ($(ls "$d/cache" 2>&1 | head -3 | tr '\n' ' ') $(tail -1 "$d/replay-warm.log"))"
		fi
	fi
	if [ "$tcmp" = full ]; then
		if [ -s "$d/orig.txt" ] && cmp -s "$d/orig.txt" "$d/rept.txt"; then
			pass "$name/capture-i-same-events-and-times"
		else
			fail "$name/capture-i-same-events-and-times ($(diff "$d/orig.txt" "$d/rept.txt" | head -3 | tr '\n' ' '))"
		fi
	else
		if [ -s "$d/orig.nt" ] && cmp -s "$d/orig.nt" "$d/rept.nt"; then
			pass "$name/capture-i-same-events-timed-file"
		else
			fail "$name/capture-i-same-events-timed-file"
		fi
	fi
}

threads=$(tests/corpus/corpus.sh bin threads 2>/dev/null)
recurse=$(tests/corpus/corpus.sh bin recurse 2>/dev/null)

check true-tsc /bin/true 16384 full --mtc-period 0
check true-mtc /bin/true 16384 notime
check true-notiming /bin/true 8192 full --no-timing
check true-noretcomp-psb256 /bin/true 8192 full --mtc-period 0 --no-retcomp --psb-period 256
# 135 KB of PT: -w cuts AUXTRACE records at PSBs
check ls /bin/ls 16384 full --mtc-period 0
if [ -n "$threads" ] && [ -x "$threads" ]; then
	CACHE_CHECK=1 check threads "$threads" 16384 full --mtc-period 0
else
	fail "threads (corpus program did not build)"
fi
if [ -n "$recurse" ] && [ -x "$recurse" ]; then
	check recurse "$recurse" 8192 full --mtc-period 0
else
	fail "recurse (corpus program did not build)"
fi
finish
