#!/usr/bin/env bash
# tests/decoder/e2e-damage-diff.sh - differential error detection (issue
# 38): every per-thread corpus trace damaged at DAMAGE_PER_KIND packets
# (default 50) for each kind of damage (a drop, a flipped byte, a flipped
# TNT bit, a packet cut short), each copy decoded by the fast walker and
# by libipt's block decoder, which must agree on whether there is an error
# before the end of the next PSB+; where the fast walker reports what
# libipt lets pass, the difference must be one of libipt's own and perf
# must report an error too (tests/decoder/damage_diff.c, docs/testing.md
# "Damaged traces"). Then the fuzz target's corpus, replayed with its
# mutants (tests/fuzz/fuzz_damage.c). The damage is chosen by packet; the
# corpus traces are the same in every clone (tests/corpus/corpus.sh) but
# the threads ones, whose threads QEMU may schedule otherwise in another
# build (docs/testing.md, "Damaged traces", class newer).
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
args=()
for f in "$O"/corpus/*.data; do
	[ -e "$f" ] || continue
	n=$(basename "$f" .data)
	# -stack: the default trace's very packets; -percpu: not one
	# thread's stream; the psb256 variants linked for the fuzz target
	# (tests/corpus/corpus.sh): their default traces are judged here,
	# and the replay below judges them (53 s more, release, if not)
	case $n in *-stack | *-percpu) continue ;; esac
	case $n in static-psb256 | plt-psb256 | recurse-psb256 | \
		threads-psb256 | exceptions-psb256) continue ;; esac
	args+=("$n=$f")
done
if [ ${#args[@]} -eq 0 ]; then
	echo "FAIL: damage-diff/corpus (no trace in $O/corpus: make tests makes them)"
	exit 1
fi
rc=0
"$O/tests/damage_diff" -n "${DAMAGE_PER_KIND:-50}" "${args[@]}" || rc=1
# the replay prints one PASS line per seed; an unexplained difference
# aborts it with the damage that shows it
O=$O "$O/tests/fuzz_damage" tests/fuzz/corpus/damage || rc=1
exit $rc
