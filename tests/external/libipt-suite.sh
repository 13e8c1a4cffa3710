#!/usr/bin/env bash
# tests/external/libipt-suite.sh LIBIPT_SRC [OUTDIR] - libipt's test suite
# as an external judge of our decoders. Not part of make check (it needs
# libipt's source); `make libipt-suite LIBIPT_SRC=DIR` runs it.
#
# LIBIPT_SRC: a tree of libipt (v2.0.5 is what Debian 12 ships: `git -C
# REPO archive v2.0.5 | tar -x -C DIR`). OUTDIR (default: a new temporary
# directory, kept) gets pttc's build, one folder per case and cpu with
# pttc's outputs and ours, and results.tsv.
#
# For every test/src/*.ptt and every `; cpu F/M` line in it (once without
# a cpu when it has none), as libipt's script/test.bash runs the suite:
# pttc turns the annotated assembly into NAME.pt, NAME.bin and ptxed's
# expected listing (NAME-ptxed[-cpu_F_M].exp); we decode NAME.pt with
#   ptrace-capture --all-branches --types '*' --decoder fast|reference --pt NAME.pt
#                  --raw NAME.bin@ORG [--raw of opt:ptxed] [--cpu F/M]
# and tests/external/ptxedcmp.py compares the taken branches, gaps and
# errors with the listing. Classes: same, branches differ, extra error,
# missing error, ours failed (ptrace-capture exited non-zero), not
# comparable (no ptxed expectation, a listing ptxed prints no
# instructions in, a ptxed configuration we do not take).
#
# Prints a table and a summary line per decoder. Exit 0 unless the script
# itself fails (no pttc, no ptrace-capture): it is a judge, not a gate.
set -u
if [ $# -lt 1 ] || [ ! -d "$1/test/src" ]; then
	echo "usage: $0 LIBIPT_SRC [OUTDIR]   (LIBIPT_SRC: a libipt source tree, with test/src/*.ptt)" >&2
	exit 2
fi
src=$(cd "$1" && pwd)
out=${2:-$(mktemp -d /tmp/libipt-suite.XXXXXX)}
mkdir -p "$out" && out=$(cd "$out" && pwd)
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/$O/bin
cmp=$top/tests/external/ptxedcmp.py
die() { echo "libipt-suite: $*" >&2; exit 2; }

[ -x "$bin/ptrace-capture" ] && [ -x "$bin/ptrace-read" ] ||
	die "no $bin/ptrace-capture or ptrace-read: run make first"
command -v cmake >/dev/null || die "cmake is missing: apt-get install -y cmake"
command -v yasm >/dev/null || die "yasm is missing (pttc assembles with it): apt-get install -y yasm"

# pttc (ptxed needs Intel XED, which Debian does not package: the expected
# listings pttc writes are what we compare with)
pttc=$out/build/bin/pttc
if [ ! -x "$pttc" ]; then
	echo "building pttc in $out/build ..." >&2
	cmake -S "$src" -B "$out/build" -DPTTC=ON -DCMAKE_BUILD_TYPE=Release \
		>"$out/build.log" 2>&1 &&
		make -C "$out/build" -j2 pttc >>"$out/build.log" 2>&1 ||
		die "building pttc failed: see $out/build.log"
fi

# The sections ptxed would see, as --raw arguments without overlaps:
# ptxed adds them in order, and a later one replaces what it overlaps.
# Arguments: BIN ORG [ptxed raw args: FILE[:FROM[-TO]]:BASE]...
sections() {
	python3 - "$@" <<'PY'
import os, sys
secs = []  # [path, offset, size, addr]
def add(path, off, size, addr):
    global secs
    end = addr + size
    kept = []
    for p, o, s, a in secs:
        e = a + s
        if e <= addr or a >= end:
            kept.append([p, o, s, a]); continue
        if a < addr:
            kept.append([p, o, addr - a, a])
        if e > end:
            kept.append([p, o + (end - a), e - end, end])
    secs = kept + [[path, off, size, addr]]
b, org = sys.argv[1], int(sys.argv[2], 0)
add(b, 0, os.path.getsize(b), org)
for arg in sys.argv[3:]:
    f, base = arg.rsplit(':', 1)
    off, size = 0, None
    if ':' in f:
        p, r = f.rsplit(':', 1)
        try:
            if '-' in r:
                x, y = r.split('-'); off = int(x, 0); size = int(y, 0) - off
            else:
                off = int(r, 0)
            f = p
        except ValueError:
            pass
    if size is None:
        size = os.path.getsize(f) - off
    add(f, off, size, int(base, 0))
for p, o, s, a in sorted(secs, key=lambda x: x[3]):
    print('--raw\n%s:0x%x-0x%x@0x%x' % (p, o, s, a))
PY
}

results=$out/results.tsv
: >"$results"
for ptt in "$src"/test/src/*.ptt; do
	base=$(basename "$ptt" .ptt)
	cpus=$(sed -n 's/[ \t]*;[ \t]*cpu[ \t][ \t]*\(.*\)[ \t]*/\1/p' "$ptt")
	popts=$(sed -n 's/[ \t]*;[ \t]*opt:ptxed[ \t][ \t]*\(.*\)[ \t]*/\1/p' "$ptt")
	org=$(grep -i '^org' "$ptt" | sed 's/org *//' | head -1)
	for cpu in ${cpus:-none}; do
		tag=$base; [ "$cpu" != none ] && tag=$base-cpu_${cpu//\//_}
		dir=$out/cases/$tag
		rm -rf "$dir" && mkdir -p "$dir"
		cd "$dir" || die "cannot enter $dir"
		cpuopt=(); [ "$cpu" != none ] && cpuopt=(--cpu "$cpu")
		row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$base" "$cpu" "$1" "$2" "$3" "$4" >>"$results"; }
		if ! "$pttc" "${cpuopt[@]}" "$ptt" >pttc.out 2>pttc.err; then
			row "not comparable" "not comparable" "pttc failed: $(head -1 pttc.err)" ""
			continue
		fi
		exp=$(ls ./*-ptxed*.exp 2>/dev/null | head -1)
		note=""
		case " $popts " in *" --filter:"*) note="ptxed's address filter config not given to us";; esac
		if [ -z "$exp" ]; then
			row "not comparable" "not comparable" "no ptxed expectation (ptdump only)" ""
			continue
		fi
		if [[ " $popts " == *" --quiet "* ]]; then
			row "not comparable" "not comparable" "ptxed --quiet: its listing shows no instructions" ""
			continue
		fi
		if [[ " $popts " == *" --cpu "* ]]; then
			row "not comparable" "not comparable" "ptxed $popts: a configuration error is what it expects" ""
			continue
		fi
		[ -n "$org" ] || { row "not comparable" "not comparable" "no org directive" ""; continue; }
		extra=()
		set -- $popts
		while [ $# -gt 0 ]; do
			[ "$1" = --raw ] && [ $# -gt 1 ] && { extra+=("$2"); shift; }
			shift
		done
		mapfile -t raws < <(sections "$base.bin" "$org" "${extra[@]+"${extra[@]}"}")
		classes=() diffs=()
		for dec in fast reference; do
			rm -f "$dec.srb"
			# (--types '*' keeps every type, and asks for the
			# ptwrite payloads, which ptxed lists)
			"$bin/ptrace-capture" -q --names perf --all-branches --decoder "$dec" \
				--types '*' --pt "$base.pt" "${raws[@]}" "${cpuopt[@]}" \
				-o "$dec.srb" >"$dec.out" 2>"$dec.err"
			rc=$?
			if [ $rc -ne 0 ]; then
				classes+=("ours failed")
				diffs+=("exit $rc: $(head -1 "$dec.err")")
				continue
			fi
			"$bin/ptrace-read" -f jsonl "$dec.srb" >"$dec.jsonl" 2>>"$dec.err"
			r=$(python3 "$cmp" "$base.lst" "$org" "$exp" "$dec.jsonl" 2>>"$dec.err") ||
				r=$'judge failed\t'"$(tail -1 "$dec.err")"
			classes+=("${r%%$'\t'*}")
			diffs+=("${r#*$'\t'}")
		done
		d="fast: ${diffs[0]}"
		[ "${diffs[1]}" != "${diffs[0]}" ] && d+="; reference: ${diffs[1]}"
		[ "${classes[0]}${classes[1]}" = samesame ] && d="-"
		row "${classes[0]}" "${classes[1]}" "$d" "$note"
	done
done

# The table and the summary.
cd "$out" || exit 2
printf '%-44s %-8s %-16s %-16s %s\n' case cpu fast reference "first difference / note"
sort -t$'\t' -k1,1 -k2,2V "$results" | while IFS=$'\t' read -r c cpu f r d n; do
	printf '%-44s %-8s %-16s %-16s %s%s\n' "$c" "$cpu" "$f" "$r" "$d" "${n:+ ($n)}"
done
for col in 3 4; do
	name=fast; [ $col = 4 ] && name=reference
	total=$(wc -l <"$results")
	summary=$(cut -f$col "$results" | sort | uniq -c | sort -rn |
		awk '{n=$1; $1=""; sub(/^ /,""); printf "%s%d %s", sep, n, $0; sep=", "}')
	echo "$name: $total cases: $summary"
done
echo "results: $results; each case's files under $out/cases/"
exit 0
