#!/usr/bin/env bash
# tests/external/kafl-traces.sh EXPERIMENTS [OUTDIR] - real Intel PT
# recordings of kAFL, from nyx-fuzz/libxdc_experiments, as an external
# judge of the fast walker: libipt (`--decoder reference`) decodes each
# one too, and every taken branch, gap and error must be the same. Not
# part of make check (the recordings are not ours to ship: AGPL, and
# fetched); `make kafl-traces XDC_EXPERIMENTS=DIR` runs it.
#
# EXPERIMENTS: a checkout of https://github.com/nyx-fuzz/libxdc_experiments
# (its test_data/ holds each recording's PT stream and a page dump of its
# code: NAME.addr, the page addresses as little-endian 64-bit words, and
# NAME.dump, the 4 KiB pages in that order). OUTDIR (default: a new
# temporary directory, kept) gets the rings and the branch lists.
#
# The recordings: Unzip, foo, mruby and qemu are 64-bit code; avscript_32
# is a 32-bit Windows program (MODE.Exec 32-bit in every PSB+). The
# kernel, kafl_eval and infinite_loop recordings are not in the
# repository's files (Git LFS) and are left out.
#
# Prints one line per recording and decoder and a summary line; exits 0
# unless it cannot run: it is a judge, not a gate.
set -u
if [ $# -lt 1 ] || [ ! -d "$1/test_data" ]; then
	echo "usage: $0 EXPERIMENTS [OUTDIR]   (EXPERIMENTS: a checkout of nyx-fuzz/libxdc_experiments, with test_data/)" >&2
	exit 2
fi
src=$(cd "$1/test_data" && pwd)
out=${2:-$(mktemp -d /tmp/kafl-traces.XXXXXX)}
mkdir -p "$out" && out=$(cd "$out" && pwd)
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/$O/bin
[ -x "$bin/ptrace-capture" ] && [ -x "$bin/ptrace-read" ] || {
	echo "kafl-traces: no $bin/ptrace-capture or ptrace-read: run make first" >&2
	exit 2
}

# the events of a ring as lines, without their sequence numbers and the
# INDIRECT and TIME_EXACT flags (how the decoder learnt a value, not what
# happened: tests/e2e/capture-corpus.sh does the same)
events() {
	"$bin/ptrace-read" -f jsonl "$1" | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    e.pop("seq", None)
    f = e.pop("flags", 0) & ~0x18
    if f:
        e["flags"] = f
    print(json.dumps(e, sort_keys=True))'
}

same=0 differ=0 missing=0
printf '%-12s %-9s %10s %7s %s\n' recording decoder branches errors result
# NAME:PAGE_CACHE:TRACE
for rec in Unzip:data:trace foo:data:trace mruby:data:trace \
	qemu:page_cache:trace1 avscript_32:page_cache:failed_trace_12709_1; do
	IFS=: read -r name pc trace <<<"$rec"
	d=$src/$name
	if [ ! -s "$d/$trace" ] || [ ! -s "$d/$pc.addr" ] || [ ! -s "$d/$pc.dump" ]; then
		printf '%-12s %-9s %10s %7s %s\n' "$name" - - - "missing from $d"
		missing=$((missing + 1))
		continue
	fi
	mapfile -t raws < <("$top/tests/external/xdc_pages.py" "$d/$pc.addr" "$d/$pc.dump")
	for dec in reference fast; do
		"$bin/ptrace-capture" --decoder "$dec" --all-branches --pt "$d/$trace" \
			"${raws[@]}" -o "$out/$name.$dec.ring" 2>"$out/$name.$dec.err"
		events "$out/$name.$dec.ring" >"$out/$name.$dec.txt"
		nb=$(grep -c '"type": "\(jump\|call\|return\|syscall\|sysret\|interrupt\)"' "$out/$name.$dec.txt")
		ne=$(grep -c '"type": "error"' "$out/$name.$dec.txt")
		res=
		if [ "$dec" = fast ]; then
			if cmp -s "$out/$name.reference.txt" "$out/$name.fast.txt"; then
				res="same as libipt"
				same=$((same + 1))
			else
				res="differs from libipt at event $(cmp "$out/$name.reference.txt" "$out/$name.fast.txt" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p') (diff $out/$name.reference.txt $out/$name.fast.txt)"
				differ=$((differ + 1))
			fi
		fi
		printf '%-12s %-9s %10s %7s %s\n' "$name" "$dec" "$nb" "$ne" "$res"
	done
done
echo "kafl-traces: $same same, $differ differ, $missing missing (outputs in $out)"
