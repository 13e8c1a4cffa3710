#!/usr/bin/env bash
# tests/bench/decoder.sh - decoding speed on the benchmark trace
# ($O/bench/bench.data, `make bench-trace`: ptsynth of `sort`, ~31M
# instructions), side by side in one run:
#   ptrace-capture -i, fast path            (ours)
#   bench_libipt_loop                       (the bare libipt loop: pt_blk_*
#                                            over an image section cache,
#                                            blocks and instructions
#                                            counted, nothing emitted or
#                                            named; tests/bench/
#                                            bench_libipt_loop.c)
#   bench_libipt_loop --callback            (the same, code read through
#                                            a callback as the reference
#                                            reads it: no libipt block
#                                            cache)
#   ptrace-capture -i --decoder reference   (libipt's block decoder,
#                                            the same events as ours)
#   perf script --itrace=b > /dev/null      (perf's decoder, printing)
#   perf script --itrace=b --dlfilter libdlf_null.so  (perf's decoder, a
#                                            dlfilter that drops everything)
# and the fast path with -j 2, with --decoder bitwise (no cache of TNT
# runs), with no event kept (--types lost), on a small trace (the fixed
# cost), dd writing as many bytes as its events into tmpfs (the output's
# own cost), and the fast path with a reader following the ring it writes
# (ptrace-read -f raw --follow -o /dev/null, started first: the pipeline).
# BENCH_REPS rounds (default 5), the commands taking turns; the median
# CPU time (task-clock: the machine may be shared) and the median wall
# time of each are reported, and for the baselines also the ratio to the
# fast path within each round. Also peak
# memory of the fast path, and a profile of where its time goes (perf
# record on cpu-clock). With $O/bench/big.data (make bench-trace: the
# same sort on 4x the input), issue 17's rows again on that trace, in
# the same rounds: the pipeline warm and cold, the archive, no output,
# -j 2 with no output, the bare libipt loop and perf's null dlfilter.
# Prints a markdown section on stdout.
set -eu
O=${O:-build}
REPS=${BENCH_REPS:-5} # ratios of noisy times: more runs than for the rings
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
data=$O/bench/bench.data
cap=$O/bin/ptrace-capture
null=$O/bench/libdlf_null.so
bare=$O/bench/bench_libipt_loop
for f in "$data" "$cap" "$null" "$bare"; do
	[ -e "$f" ] || { echo "decoder bench: $f missing; run 'make bench'" >&2; exit 1; }
done
tmp=$(mktemp -d)
ring=/dev/shm/decbench_$$.srb
trap 'rm -rf "$tmp" "$ring"' EXIT
# the persistent block cache (docs/cache.md) of this bench: warmed below,
# so the rows are warm unless they say --no-cache
export XDG_CACHE_HOME=$tmp/cache

# one run of "$@": its task-clock seconds and wall seconds
once() {
	rm -f "$ring"
	local t0=$(date +%s.%N) wall cpu
	perf stat -x, -e task-clock -o "$tmp/stat" -- "$@" >/dev/null 2>"$tmp/err" ||
		{ echo "decoder bench: failed: $* ($(tail -n1 "$tmp/err"))" >&2; exit 1; }
	wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.6f", b - a }')
	cpu=$(awk -F, '/task-clock/ { printf "%.6f", $1 / 1000 }' "$tmp/stat")
	echo "$cpu $wall"
}

pt_bytes=$(stat -L -c %s "$data")
# the number of branches perf reports (its unit of work)
branches=$(perf script -i "$data" --itrace=b -F ip 2>/dev/null | wc -l)
rm -f "$ring"
summary=$("$cap" -i "$data" -o "$ring" 2>&1 >/dev/null | grep " branches, " | tail -1)
events=$(echo "$summary" | grep -o '[0-9]* events' | cut -d' ' -f1)
ptmb=$(echo "$summary" | grep -o '[0-9.]* MB of PT' | cut -d' ' -f1)
# the bare loop must decode the whole trace: its instructions beside the
# generator's (ptsynth's truth file), and its errors
"$bare" "$data" >/dev/null 2>"$tmp/bare" ||
	{ echo "decoder bench: $bare $data failed: $(tail -n1 "$tmp/bare")" >&2; exit 1; }
bare_sum=$(tail -n1 "$tmp/bare")
bare_insns=$(echo "$bare_sum" | grep -o '[0-9]* instructions' | cut -d' ' -f1)
bare_blocks=$(echo "$bare_sum" | grep -o '[0-9]* blocks' | cut -d' ' -f1)
bare_errors=$(echo "$bare_sum" | grep -o '[0-9]* errors' | cut -d' ' -f1)
truth_insns=-
if [ -e "$O/bench/bench.truth" ]; then
	truth_insns=$(head -c 65536 "$O/bench/bench.truth" |
		awk '/^# thread [0-9]+ instructions/ { n += $5; t = 1 } END { if (t) print n; else print "-" }')
fi
if [ "$bare_insns" = "$truth_insns" ]; then
	bare_check="the same as the generator's ($truth_insns)"
else
	bare_check="**not** the generator's $truth_insns"
	echo "decoder bench: the bare libipt loop decoded $bare_insns instructions, the trace has $truth_insns" >&2
fi

# the commands, by name
cmd_fast=("$cap" -q -i "$data" -o "$ring")
cmd_bare=("$bare" "$data")
cmd_barecb=("$bare" --callback "$data")
cmd_fastj=("$cap" -q -j 2 -i "$data" -o "$ring")
# -j scaling with the output out of the way (no event kept)
cmd_nooutj=("$cap" -q -j 2 --types lost -i "$data" -o "$ring")
cmd_bitw=("$cap" -q --decoder bitwise -i "$data" -o "$ring")
# the decode with no output: every event filtered out by type (there are
# no lost events), so the sink drops them and the ring stays empty
cmd_noout=("$cap" -q --types lost -i "$data" -o "$ring")
# the output alone: the events' bytes written into a fresh tmpfs file in
# 64 KiB writes, as the archive ring's batches go in
outmb=$(( (events * 32 + 65535) / 65536 ))
cmd_ddout=(dd if=/dev/zero of="$ring" bs=64k count=$outmb status=none)
# the fixed cost: the whole command on a small trace (the plt program, a
# few KB of PT: process start, ring creation, ELF and symbol tables)
small=$(O=$O tests/corpus/corpus.sh trace plt default)/trace.data
cmd_fixed=("$cap" -q -i "$small" -o "$ring")
cmd_fixednc=("$cap" -q --no-cache -i "$small" -o "$ring")
cmd_fastnc=("$cap" -q --no-cache -i "$data" -o "$ring")
# warm the cache: every object of both traces (the benchmark trace's
# by the decode that gave its summary above)
rm -f "$ring"
"${cmd_fixed[@]}" && rm -f "$ring" ||
	{ echo "decoder bench: cannot warm the cache" >&2; exit 1; }
cmd_ref=("$cap" -q --decoder reference -i "$data" -o "$ring")
cmd_perfp=(perf script -i "$data" --itrace=b)
cmd_perfn=(perf script -i "$data" --itrace=b --dlfilter "$null")
# the pipeline people run: a reader started first, following the ring as
# the capture writes it (ptrace-read -f raw --follow -o /dev/null); timed
# from the reader's start to the end of both. With --wait-readers the ring
# is lossless (its pages reused); the archive (fresh pages) beside it.
rd=$O/bin/ptrace-read
# pipe_scripts NAME DATA: $tmp/NAME.sh (the pipeline), NAMEa.sh (with the
# archive), NAMEnc.sh (the block cache off: the cold cost of every block),
# NAMEn.sh (the decode with no output, through the same shell: the wall
# ratio's yardstick, whose shell starts as the pipeline's does)
pipe_scripts() {
	cat >"$tmp/$1.sh" <<EOF
#!/bin/sh
"$rd" -f raw --follow -o /dev/null "$ring" &
"$cap" -q -i "$2" -o "$ring" --wait-readers 1 || exit 1
wait \$! || exit 1
EOF
	sed 's/ --wait-readers 1//' "$tmp/$1.sh" >"$tmp/${1}a.sh"
	sed 's/ --wait-readers 1/ --wait-readers 1 --no-cache/' "$tmp/$1.sh" >"$tmp/${1}nc.sh"
	printf '#!/bin/sh\n"%s" -q -i "%s" -o "%s" --types lost || exit 1\n' \
		"$cap" "$2" "$ring" >"$tmp/${1}n.sh"
	chmod +x "$tmp/$1.sh" "$tmp/${1}a.sh" "$tmp/${1}nc.sh" "$tmp/${1}n.sh"
}
pipe_scripts pipe "$data"
cmd_pipe=("$tmp/pipe.sh")
cmd_pipea=("$tmp/pipea.sh")
cmd_pipenc=("$tmp/pipenc.sh")
cmd_pipen=("$tmp/pipen.sh")

# the bigger trace (make bench-trace: the same sort on 4x the input), for
# issue 17's rows on a trace at least 4x bigger: the pipeline warm and
# cold, the archive, no output, -j 2 with no output, and the baselines
big=$O/bench/big.data
bignames=
if [ -e "$big" ]; then
	pipe_scripts bpipe "$big"
	cmd_bpipe=("$tmp/bpipe.sh")
	cmd_bpipenc=("$tmp/bpipenc.sh")
	cmd_bpipen=("$tmp/bpipen.sh")
	cmd_bfast=("$cap" -q -i "$big" -o "$ring")
	cmd_bnoout=("$cap" -q --types lost -i "$big" -o "$ring")
	cmd_bnooutj=("$cap" -q -j 2 --types lost -i "$big" -o "$ring")
	cmd_bbare=("$bare" "$big")
	cmd_bperfn=(perf script -i "$big" --itrace=b --dlfilter "$null")
	bignames="bpipe bpipen bpipenc bfast bnoout bnooutj bbare bperfn"
	# one decode warms the cache with the blocks only this trace enters
	# and gives its summary
	rm -f "$ring"
	"$cap" -i "$big" -o "$ring" >/dev/null 2>"$tmp/bsum" ||
		{ echo "decoder bench: cannot decode $big: $(tail -n1 "$tmp/bsum")" >&2; exit 1; }
	rm -f "$ring"
	big_sum=$(grep " branches, " "$tmp/bsum" | tail -1)
	big_bytes=$(stat -L -c %s "$big")
	big_branches=$(perf script -i "$big" --itrace=b -F ip 2>/dev/null | wc -l)
	big_events=$(echo "$big_sum" | grep -o '[0-9]* events' | cut -d' ' -f1)
	big_ptmb=$(echo "$big_sum" | grep -o '[0-9.]* MB of PT' | cut -d' ' -f1)
	"$bare" "$big" >/dev/null 2>"$tmp/bbare" ||
		{ echo "decoder bench: $bare $big failed: $(tail -n1 "$tmp/bbare")" >&2; exit 1; }
	big_insns=$(tail -n1 "$tmp/bbare" | grep -o '[0-9]* instructions' | cut -d' ' -f1)
	big_errors=$(tail -n1 "$tmp/bbare" | grep -o '[0-9]* errors' | cut -d' ' -f1)
fi

# REPS rounds, each running every command twice in a row (the first run a
# warm-up, not measured), so that all of them meet the machine's speed of
# the moment (on this VM it changes by half from minute to minute); the
# bare loop runs right after the fast path. Every
# CPU and wall time is kept; the medians are reported, and each
# baseline's CPU time over the fast path's of the same round
declare -A ac aw
names="fast bare barecb pipe pipen pipea pipenc fastj nooutj bitw noout ddout fixed fixednc fastnc ref perfp perfn $bignames"
for ((i = 0; i < REPS; i++)); do
	for n in $names; do
		declare -n cmd=cmd_$n
		# each runs once unmeasured first: what ran before a command
		# moves its time on this VM (the bench trace's pipeline took
		# up to 5 ms more wall time after the libipt loop than after
		# itself), and the figures are of the commands, not of their
		# neighbours
		once "${cmd[@]}" >/dev/null
		read -r cpu wall < <(once "${cmd[@]}")
		ac[$n]="${ac[$n]:-} $cpu"
		aw[$n]="${aw[$n]:-} $wall"
		unset -n cmd
	done
done
# median [SCALE FORMAT]: of the numbers on stdin, times SCALE (1), printed
# with FORMAT (%.3f)
median() { tr ' ' '\n' | grep . | sort -g | awk -v k="${1:-1}" -v f="${2:-%.3f}" '{ v[NR] = $1 * k } END { printf f, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for n in $names; do
	printf -v "$n" %s "$(echo "${ac[$n]}" | median)"
	printf -v "${n}w" %s "$(echo "${aw[$n]}" | median)"
done
# the fixed cost in ms, to the hundredth (the tables give ms)
fixed_ms=$(echo "${ac[fixed]}" | median 1000 %.2f)
secs3() { for v in $1; do printf ' %.3f' "$v"; done; }
walls_pipe=$(secs3 "${aw[pipe]}") walls_noout=$(secs3 "${aw[noout]}")
mfast=$fastw
mpipe=$pipew
# wratio A B: the median over the rounds of A's wall time over B's in the
# same round (pairs: the machine's speed of the moment cancels)
wratio() {
	paste -d' ' <(echo "${aw[$1]}" | tr ' ' '\n' | grep .) <(echo "${aw[$2]}" | tr ' ' '\n' | grep .) |
		awk '{ print $1 / ($2 > 0 ? $2 : 1e-9) }' | tr '\n' ' ' | median 1 %.2f
}
pipe_ratio=$(wratio pipe pipen)
walls_pipen=$(secs3 "${aw[pipen]}")
# a baseline's CPU time over the fast path's, round by round: "min-max"
paired() {
	paste -d' ' <(echo "${ac[$1]}" | tr ' ' '\n' | grep .) <(echo "${ac[fast]}" | tr ' ' '\n' | grep .) |
		awk '{ r = $1 / ($2 > 0 ? $2 : 1e-9); if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r }
		     END { printf "%.1f-%.1fx", lo, hi }'
}

# peak memory of the fast path: the process's own (anonymous) memory at
# its peak, sampled from /proc while it runs, beside the resident set
# (which also counts the mapped input and the output ring's pages)
# peak_mem DATA: "anon_kb rss_kb ring_kb" of ptrace-capture -i DATA
peak_mem() {
	local pid a r anon=0 rss=0
	rm -f "$ring"
	"$cap" -q -i "$1" -o "$ring" & pid=$!
	while kill -0 $pid 2>/dev/null; do
		read -r a r < <(awk '/^RssAnon/ { a = $2 } /^VmHWM/ { h = $2 } END { print a + 0, h + 0 }' /proc/$pid/status 2>/dev/null || echo "0 0")
		[ "${a:-0}" -gt "$anon" ] && anon=$a
		[ "${r:-0}" -gt "$rss" ] && rss=$r
		sleep 0.002
	done
	wait $pid
	echo "$anon $rss $(( $(stat -c %s "$ring") / 1024 ))"
}
read -r anon_kb rss_kb ring_kb < <(peak_mem "$data")
in_kb=$(( pt_bytes / 1024 ))
[ -z "$bignames" ] || read -r big_anon_kb big_rss_kb big_ring_kb < <(peak_mem "$big")

# where the time goes
rm -f "$ring"
perf record -q -e cpu-clock -F 5000 -o "$tmp/perf.data" -- "$cap" -q -i "$data" -o "$ring" >/dev/null 2>&1
perf report -i "$tmp/perf.data" --stdio --sort sym --percent-limit 2 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -12 >"$tmp/profile"

# where the pipeline's time goes beyond the decode with no output (issue
# 17's first target): perf's samples of both processes per symbol, 3 runs
# of each, on the bigger trace when there is one
prof_one() { # FILE CMD...: one run's "comm tag symbol<TAB>samples", added
	local f=$1
	shift
	rm -f "$ring"
	perf record -q -e cpu-clock -F 10000 -o "$tmp/p.data" -- "$@" \
		>/dev/null 2>&1 || return 1
	perf report -i "$tmp/p.data" --stdio --no-children --sort comm,sym \
		-n 2>/dev/null |
		awk '$1 ~ /%$/ && $2 ~ /^[0-9]+$/ && NF >= 5 {
			print $3 " " $4 " " $5 "\t" $2 }' >>"$f"
}
if [ -n "$bignames" ]; then
	ptrace_name="the bigger trace"
	pcmd=("$tmp/bpipe.sh") ncmd=("${cmd_bnoout[@]}")
else
	ptrace_name="the benchmark trace"
	pcmd=("$tmp/pipe.sh") ncmd=("${cmd_noout[@]}")
fi
: >"$tmp/ppipe.prof"
: >"$tmp/pnoout.prof"
for i in 1 2 3; do # in turn: the VM's speed drifts
	prof_one "$tmp/ppipe.prof" "${pcmd[@]}" || true
	prof_one "$tmp/pnoout.prof" "${ncmd[@]}" || true
done
# the symbols that take the most more, in ms a run (10 kHz: 0.1 ms a
# sample), and the whole difference
awk -F '\t' 'FNR == 1 { f++ } { v[$1, f] += $2; k[$1] = 1 }
	END {
		for (s in k) {
			a = v[s, 1] / 30; b = v[s, 2] / 30; tot += a - b
			printf "%s\t%.1f\t%.1f\t%+.1f\n", s, b, a, a - b
		}
		printf "TOTAL\t%.1f\n", tot > "/dev/stderr"
	}' "$tmp/ppipe.prof" "$tmp/pnoout.prof" 2>"$tmp/pdiff.total" |
	sort -t "$(printf '\t')" -k4,4 -g -r | head -8 |
	awk -F '\t' '{ split($1, w, " "); printf "| %s | `%s` | %s | %s | %s |\n", w[1], w[3], $2, $3, $4 }' >"$tmp/pdiff"
pdiff_total=$(awk '{ print $2 }' "$tmp/pdiff.total")

r() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1fM", n / s / 1e6 }'; }
mbs() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s / 1e6 }'; }
x() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }
amdahl() { # no-output wall time with one thread, with -j 2: s, then the speedups expected
	awk -v a="$1" -v b="$2" 'BEGIN { v = 2 * b / a - 1; if (v < 0) v = 0; if (v > 1) v = 1; printf "a speedup of %.2f, a serial fraction s of %.2f%s; expected: ", a / b, v, (b >= a ? " (no gain in this run: at most 1)" : "");
		for (n = 4; n <= 16; n *= 2) printf "%s%.1fx on %d cores", (n > 4 ? ", " : ""), 1 / (v + (1 - v) / n), n }'
}

cat <<EOF
## Decoding: \`ptrace-capture -i\` (issue 4)

The benchmark trace (\`make bench-trace\`: ptsynth of \`sort\` on 5000
lines): $(awk -v b="$pt_bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }') of
perf.data holding $ptmb MB of PT, $branches taken branches (perf's
count) in $bare_insns instructions, $events events written by the fast
path (calls, returns, jumps between symbols, syscalls, symbol
definitions). Each command is timed as a whole process (start, reading
the perf.data, its image, the decode, its output). CPU seconds
(task-clock) and wall seconds are medians of $REPS rounds, each round
running every command in turn, twice in a row, the first run not
measured (what ran before a command moves its time on this VM);
branches/s and MB/s of PT are from
the CPU medians. The last column is each command's CPU time over the
fast path's: the ratio of the medians, then the least and greatest ratio
within one round.

| decoder | what it does | CPU s | wall s | branches/s | MB/s of PT | CPU time against the fast path (medians; within a round) |
|---|---|---:|---:|---:|---:|---:|
| \`ptrace-capture -i\` (fast path, ours) | decodes, and writes $events events with their symbols' names into the archive ring on tmpfs | $fast | $fastw | $(r "$branches" "$fast") | $(mbs "$pt_bytes" "$fast") | 1x |
| bare libipt loop (\`tests/bench/bench_libipt_loop.c\`) | libipt's block decoder over an image section cache (\`pt_blk_next\`, events drained and dropped): counts blocks and instructions; emits nothing, names nothing | $bare | $barew | $(r "$branches" "$bare") | $(mbs "$pt_bytes" "$bare") | $(x "$bare" "$fast") ($(paired bare)) |
| bare libipt loop, code through a callback (\`--callback\`) | the same loop, code read through a read callback (\`pt_image_set_callback\`) as the reference reads it: libipt then has no sections, so none of its block caches | $barecb | $barecbw | $(r "$branches" "$barecb") | $(mbs "$pt_bytes" "$barecb") | $(x "$barecb" "$fast") ($(paired barecb)) |
| \`ptrace-capture -i --decoder reference\` | libipt's block decoder, code read through a callback over our image, emitting the same events and names as the fast path | $ref | $refw | $(r "$branches" "$ref") | $(mbs "$pt_bytes" "$ref") | $(x "$ref" "$fast") ($(paired ref)) |
| \`perf script --itrace=b\`, null dlfilter | perf's own decoder makes a sample of each taken branch; the filter drops each at once (\`filter_event_early\`): nothing named, nothing printed | $perfn | $perfnw | $(r "$branches" "$perfn") | $(mbs "$pt_bytes" "$perfn") | $(x "$perfn" "$fast") ($(paired perfn)) |
| \`perf script --itrace=b > /dev/null\` | the same, every sample printed as a text line with its symbols | $perfp | $perfpw | $(r "$branches" "$perfp") | $(mbs "$pt_bytes" "$perfp") | $(x "$perfp" "$fast") ($(paired perfp)) |

The headline is the first baseline: **the bare libipt loop takes
$(x "$bare" "$fast") the CPU time of the fast path**, and the fast path emits and names
$events events where the loop does neither. The bare loop decoded $bare_insns instructions in
$bare_blocks blocks, $bare_check, with $bare_errors decode errors. It is
the floor for anything built on libipt's block decoder as libipt is
meant to be used. The reference decoder's $(x "$ref" "$fast") is no measure of
the walker against libipt: the reference reads code through a callback
over our image, which leaves libipt without its block caches, and the
bare loop reading code the same way takes $(x "$barecb" "$bare") as long as with the
section cache ($barecb s of the reference's $ref s, before any event is
made). What is left, about $(awk -v a="$ref" -v b="$barecb" 'BEGIN { printf "%.2f s", a - b }'), is the reference's own work: its
events, names and output.
Against perf, the null dlfilter row is the fair one (perf decodes and
makes its samples, but names and prints nothing): $(x "$perfn" "$fast").

Targets (issue 4): at least 10x the reference path ($(x "$ref" "$fast")) and 30x perf
with the null dlfilter ($(x "$perfn" "$fast")).

The same run, other ways of running the fast path, and the cost of its
output alone (rates by wall time here: -j 2 spends more CPU to finish
sooner):

| command | CPU s | wall s | branches/s (wall) | perf with the null dlfilter takes (wall) |
|---|---:|---:|---:|---:|
| ptrace-capture -i -j 2 (the trace cut at its PSBs, two threads) | $fastj | $fastjw | $(r "$branches" "$fastjw") | $(x "$perfnw" "$fastjw") as long |
| ptrace-capture -i (one thread) | $fast | $fastw | $(r "$branches" "$fastw") | $(x "$perfnw" "$fastw") as long |
| ptrace-capture -i --decoder bitwise (no cache of TNT runs) | $bitw | $bitww | $(r "$branches" "$bitww") | $(x "$perfnw" "$bitww") as long |
| ptrace-capture -i --types lost (decoded, no event kept) | $noout | $nooutw | $(r "$branches" "$nooutw") | $(x "$perfnw" "$nooutw") as long |
| ptrace-capture -i -j 2 --types lost | $nooutj | $nooutjw | $(r "$branches" "$nooutjw") | $(x "$perfnw" "$nooutjw") as long |
| dd of the events' $((outmb * 64 / 1024)) MiB into a fresh tmpfs file (the output alone) | $ddout | $ddoutw | - | - |
| ptrace-capture -i --no-cache (no block cache: every block through Capstone) | $fastnc | $fastncw | $(r "$branches" "$fastncw") | $(x "$perfnw" "$fastncw") as long |
| the small trace (plt): the fixed cost, warm block cache | $fixed | $fixedw | - | - |
| the small trace (plt) with --no-cache: the fixed cost, cold | $fixednc | $fixedncw | - | - |

The limit: 30x perf with the null dlfilter leaves
$(awk -v p="$perfn" 'BEGIN { printf "%.0f ms", p / 30 * 1000 }') of CPU for the whole command on this trace. Two costs
that are not decoding take more than that together here:

- the output: $events events of 32 bytes, written into fresh tmpfs
  pages, $(awk -v f="$ddout" 'BEGIN { printf "%.0f ms", f * 1000 }') for dd alone (the kernel allocates and clears
  each page). Any decoder that keeps this trace's events in a file pays
  it; a bounded ring reused while a reader drains it would not, but keeps
  no archive;
- the fixed cost: the same command on a trace of a few KB (the corpus's
  \`plt\`, $(stat -L -c %s "$small") bytes of perf.data) takes $(awk -v f="$fixednc" 'BEGIN { printf "%.0f ms", f * 1000 }') of CPU
  with no block cache: process start, the output ring created, the
  Capstone decode of every block the trace enters (about half a
  microsecond an instruction here), the ELF files' symbol tables (libc's
  from its debug file) and the replay of perf's symbol tree. With the
  persistent cache warm (issue 17, \`docs/cache.md\`: the block summaries
  and the symbol tables mapped from one file per object, and neither
  Capstone, the C++ runtime nor libunwind loaded) it takes $fixed_ms ms (the median of the rounds' CPU
  times, to the hundredth): process start,
  the ring, the files mapped, and the walk of its $(stat -L -c %s "$small") bytes. Target
  (issue 17): under 5 ms, $(awk -v f="$fixed_ms" 'BEGIN { print (f < 5) ? "met" : "**not met**" }').

Scaling with cores (issue 17): with no event kept, so that the output is
not what limits it, \`-j 2\` takes $nooutjw s against $nooutw s by wall
time on this VM's 2 cores: $(amdahl "$nooutw" "$nooutjw") (Amdahl's law, speedup = 1 / (s + (1 - s) / N); s is
start-up, the sideband, the symbols, cutting the trace and joining the
pieces). The workers spread the times of their segments; the merge that
puts their events in order and hands them to the sink runs on a third
thread (see \`docs/decoder.md\`, "Parallel decode", for its measured
share); the bigger trace below gives the same measure.

The walk itself: the fast path walks TNT bits through a cache of
recorded runs (libxdc's idea, with every call and return kept: see
\`docs/decoder.md\`); walking one bit at a time instead (\`--decoder
bitwise\`) costs $(x "$bitw" "$fast") the CPU time. With no event kept, the decode
takes $(awk -v a="$noout" -v f="$fixed" 'BEGIN { printf "%.0f ms", (a - f) * 1000 }') beyond the fixed cost, $(awk -v a="$noout" -v f="$fixed" -v b="$branches" 'BEGIN { printf "%.1f ns", (a - f) / b * 1e9 }') per taken branch.

## A reader following the capture (issues 10, 17)

The pipeline people run: \`ptrace-read -f raw --follow -o /dev/null RING\`
started first (it waits for the ring to appear), then \`ptrace-capture -i
-o RING --wait-readers 1\`, whose ring is then lossless by default: the
reader drains a bounded ring, and its pages are reused (the decode starts
at once, the ring keeping its events for the reader, which starts at the
first, however late it attaches; a direct writer publishes 2048 events at
a time, so that a reader keeping up with it writes its output in as many
pieces, not one every 256 events). Timed until both
have finished. Beside it, in the same rounds: the same with the archive
(no \`--wait-readers\`: a file that grows, fresh pages for every event),
the capture into an archive with nobody reading, and the decode with no
output at all (\`--types lost\`), also run through the same shell as the
pipeline's script (the yardstick of the wall ratio: the shell's start is
then in both). Wall seconds, median of $REPS rounds (all: pipeline$walls_pipe;
no output$walls_noout; no output through the shell$walls_pipen):

| command | wall s (median) | CPU s (median, both processes) | against no output |
|---|---:|---:|---:|
| ptrace-capture -i --types lost (no output at all) | $nooutw | $noout | 1x |
| the same through the shell, as the pipeline is run | $pipenw | $pipen | $(awk -v a="$pipenw" -v b="$nooutw" 'BEGIN { printf "%.2fx", a / b }') |
| ptrace-capture -i, archive, nobody reading | $mfast | $fast | $(awk -v a="$mfast" -v b="$nooutw" 'BEGIN { printf "%.2fx", a / b }') |
| **the pipeline: a following reader, lossless ring** | **$mpipe** | $pipe | **$(awk -v a="$mpipe" -v b="$nooutw" 'BEGIN { printf "%.2fx", a / b }')** |
| the same with the archive | $pipeaw | $pipea | $(awk -v a="$pipeaw" -v b="$nooutw" 'BEGIN { printf "%.2fx", a / b }') |
| the pipeline with \`--no-cache\` (every block through Capstone) | $pipencw | $pipenc | $(awk -v a="$pipencw" -v b="$nooutw" 'BEGIN { printf "%.2fx", a / b }') |

Issue 17's targets, on this pipeline with the block cache warm, CPU
time of both processes against the baselines' (medians of the same
rounds): perf with the null dlfilter takes **$(x "$perfn" "$pipe")** its time
(target 30x; with \`--no-cache\`: $(x "$perfn" "$pipenc")), the bare libipt
loop **$(x "$bare" "$pipe")** (target 10x; with \`--no-cache\`: $(x "$bare" "$pipenc")).

Target (issue 17): the pipeline under 1.2x the decode with no output
(wall, both through the shell; the median of the rounds' ratios):
**${pipe_ratio}x**, $(awk -v r="$pipe_ratio" 'BEGIN { print (r < 1.2) ? "**met**" : "**not met**" }'). The reader reads in place (no copy but to its output),
spins a few hundred polls when it has caught up, then polls, sleeping
20 us to 1 ms at a time, without asking the capture for wakes: a futex
wake costs the writer a system call and, in this VM, an interrupt to the
reader's idle CPU (wakes every 16384 events took the pipeline 6-8% more
time than polling).

Where the pipeline's time goes beyond the decode with no output, on
$ptrace_name: perf's samples (\`perf record -e cpu-clock -F 10000\`)
of both processes, 3 runs of each in turn, in ms a run. The pipeline
takes $pdiff_total ms more in all; the symbols that take the most more:

| process | symbol | no output | pipeline | more |
|---|---|---:|---:|---:|
$(cat "$tmp/pdiff")

The capture's sink (\`strace_sink_emit_batch\`: the symbol definitions and
the events' stores into the ring's slots) runs for every event here,
and for none with no output; the walk (\`tnt_run\`,
\`strace_dec_decode_range\`) is slower while the reader runs on the other
vCPU; \`_raw_spin_unlock_irqrestore\`, where it shows, is kernel time
that the VM's sampling puts where interrupts are enabled again (before
the reader polled, the capture's futex wakes of it were there).

Memory of the fast path: its own (anonymous) memory peaked at
$((anon_kb / 1024)) MiB (block cache, image, symbol tables, buffers);
its peak resident set was $((rss_kb / 1024)) MiB, which also counts the
pages of the mapped input ($((in_kb / 1024)) MiB) and of the output ring
(a $((ring_kb / 1024)) MiB archive file on tmpfs, the events themselves).
Target: under 64 MiB beyond the input.

Where the fast path's time goes (perf record -e cpu-clock, symbols above 2%):

\`\`\`
$(cat "$tmp/profile")
\`\`\`
EOF

[ -n "$bignames" ] || exit 0
bpipe_ratio=$(wratio bpipe bpipen)
cat <<EOF

### The same on a trace 4x bigger (issue 17)

\`make bench-trace\` also makes the same program on four times the
input (\`corpus.sh bench-big\`: sort of 20000 lines):
$(awk -v b="$big_bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }') of perf.data holding $big_ptmb MB of PT, $big_branches taken
branches (perf's count) in $big_insns instructions ($(x "$big_insns" "$bare_insns") the
benchmark trace's; the bare libipt loop's count, with $big_errors decode errors),
$big_events events written. In the same rounds as the rows above, CPU
and wall seconds, medians of $REPS:

| command | CPU s | wall s | CPU time against the pipeline's |
|---|---:|---:|---:|
| **the pipeline: a following reader, lossless ring, warm cache** | **$bpipe** | $bpipew | 1x |
| the pipeline with \`--no-cache\` (cold: every block through Capstone) | $bpipenc | $bpipencw | $(x "$bpipenc" "$bpipe") |
| ptrace-capture -i, archive, nobody reading | $bfast | $bfastw | $(x "$bfast" "$bpipe") |
| ptrace-capture -i --types lost (no output at all) | $bnoout | $bnooutw | $(x "$bnoout" "$bpipe") |
| the same through the shell, as the pipeline is run | $bpipen | $bpipenw | $(x "$bpipen" "$bpipe") |
| ptrace-capture -i -j 2 --types lost | $bnooutj | $bnooutjw | $(x "$bnooutj" "$bpipe") |
| bare libipt loop (\`pt_blk_next\` over an image section cache) | $bbare | $bbarew | $(x "$bbare" "$bpipe") |
| \`perf script --itrace=b\`, null dlfilter | $bperfn | $bperfnw | $(x "$bperfn" "$bpipe") |

Issue 17's targets on this trace: perf with the null dlfilter takes
**$(x "$bperfn" "$bpipe")** the pipeline's CPU time (target 30x; cold cache:
$(x "$bperfn" "$bpipenc")), the bare libipt loop **$(x "$bbare" "$bpipe")** (target 10x; cold:
$(x "$bbare" "$bpipenc")); the pipeline takes ${bpipe_ratio}x the wall time of the
decode with no output, both through the shell (the median of the rounds'
ratios; target under 1.2x: $(awk -v r="$bpipe_ratio" 'BEGIN { print (r < 1.2) ? "met" : "not met" }')). The walk alone (no output,
less the fixed cost): $(mbs "$(awk -v p="$big_ptmb" 'BEGIN { print p * 1e6 }')" "$(awk -v a="$bnoout" -v f="$fixed" 'BEGIN { print a - f }')") MB/s of PT, $(awk -v a="$bnoout" -v f="$fixed" -v b="$big_branches" 'BEGIN { printf "%.1f ns", (a - f) / b * 1e9 }') per taken
branch. \`-j 2\` with no output, by wall time on this VM's 2 cores:
$(amdahl "$bnooutw" "$bnooutjw").
Memory: the fast path's own (anonymous) memory peaked at
$((big_anon_kb / 1024)) MiB, its resident set at $((big_rss_kb / 1024)) MiB (with the mapped
input and the pages of its $((big_ring_kb / 1024)) MiB archive); target under 64 MiB
beyond the input.
EOF
