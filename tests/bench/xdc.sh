#!/usr/bin/env bash
# tests/bench/xdc.sh - ours beside libxdc (nyx-fuzz/libxdc, the fastest
# public Intel PT decoder: kAFL's and Nyx's) on the real recordings of
# libxdc's experiments, by their own method: each trace repeated to 64 MB
# (their tools/grow.py), decoded by one process, CPU time of the whole
# process; the fixed costs (start, page cache, image) removed by also
# timing one copy of the trace:
#   MB/s = (bytes of 64 MB file - bytes of one copy) / (cpu64 - cpu1)
#
#   tests/bench/xdc.sh EXPERIMENTS LIBXDC_DIR [OUT.md]
#
# EXPERIMENTS: a checkout of nyx-fuzz/libxdc_experiments (test_data/);
# LIBXDC_DIR: libxdc built outside this tree (`make libxdc.a` there: its
# libxdc.h and libxdc.a; it links Capstone 4, as we do). Writes a markdown
# table to OUT.md (default: stdout); `make bench` includes it in
# docs/performance.md when XDC_EXPERIMENTS and LIBXDC_DIR are set.
#
# Ours: ptrace-capture --pt with the page dump as --raw sections, one
# thread, (a) --types lost: decoded, no event made (the walker makes
# none the type filter drops); (b) every event made and handed to a
# consumer that takes each, a plugin with an empty callback for every
# type (--no-ring --plugin test-empty.so: issue 34's measure); (c) the
# default ring written (on tmpfs, every event kept); with BENCH_XDC_REPS
# alternating rounds (default 5), the median of each.
set -eu
if [ $# -lt 2 ] || [ ! -d "$1/test_data" ] || [ ! -f "$2/libxdc.a" ]; then
	echo "usage: $0 EXPERIMENTS LIBXDC_DIR [OUT.md]   (a checkout of nyx-fuzz/libxdc_experiments; libxdc built there with make libxdc.a)" >&2
	exit 2
fi
src=$(cd "$1/test_data" && pwd)
xdc=$(cd "$2" && pwd)
out=${3:-}
O=${O:-build}
REPS=${BENCH_XDC_REPS:-5}
top=$(cd "$(dirname "$0")/../.." && pwd)
cap=$top/$O/bin/ptrace-capture
empty=$top/$O/plugins/test-empty.so
[ -x "$cap" ] || { echo "xdc: $cap is missing: run make" >&2; exit 2; }
[ -f "$empty" ] || { echo "xdc: $empty is missing: run make $O/plugins/test-empty.so" >&2; exit 2; }
tmp=$(mktemp -d)
ring=/dev/shm/xdc-bench-$$.ring
trap 'rm -rf "$tmp" "$ring"' EXIT
export XDG_CACHE_HOME=$tmp/cache # the block cache: the bench's own

cc -O2 -std=c11 -I"$xdc" "$top/tests/bench/bench_libxdc.c" "$xdc/libxdc.a" \
	-l:libcapstone.so.4 -flto -o "$tmp/bench_libxdc" ||
	{ echo "xdc: cannot build the libxdc harness against $xdc" >&2; exit 2; }

# CPU seconds (user + system) of a command, to the microsecond
cpu() {
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if r.returncode:
    sys.exit("xdc: failed (%d): %s\n%s" % (r.returncode, " ".join(sys.argv[1:]), r.stderr.decode()[-500:]))
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.6f" % (u.ru_utime + u.ru_stime))' "$@"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# rates BYTES CPU1 CPU64 CPU1 CPU64...: the median MB/s of the pairs
rates() {
	local d=$1
	shift
	while [ $# -ge 2 ]; do
		awk -v a="$1" -v b="$2" -v d="$d" 'BEGIN { printf "%.1f\n", d / 1e6 / (b - a) }'
		shift 2
	done | median
}

{
echo "| recording | PT bytes | libxdc MB/s | ours MB/s, no output | ours ÷ libxdc | ours MB/s, every event to a plugin | ours ÷ libxdc | ours MB/s, ring written | ours ÷ libxdc |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$tmp/table"
# NAME:PAGE_CACHE:TRACE:BASE:END (the ranges of their run_eval.py)
for rec in \
	Unzip:data:trace:0x400000:0x427000 \
	foo:data:trace:0x7ffff7819000:0x7ffff79ca000 \
	mruby:data:trace:0x400000:0x4b6000 \
	qemu:page_cache:trace1:0x555555554000:0x555555d60000 \
	avscript_32:page_cache:failed_trace_12709_1:0x1000:0xfffff000; do
	IFS=: read -r name pc trace base end <<<"$rec"
	d=$src/$name
	[ -s "$d/$trace" ] || { echo "xdc: $d/$trace is missing" >&2; continue; }
	one=$d/$trace
	big=$tmp/$name.64M
	python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb") as f:
    n = 0
    while n < 64 << 20:
        f.write(d); n += len(d)' "$one" "$big"
	b1=$(stat -c %s "$one")
	b64=$(stat -c %s "$big")
	mapfile -t raws < <("$top/tests/external/xdc_pages.py" "$d/$pc.addr" "$d/$pc.dump")
	x=() n=() p=() w=()
	for ((i = 0; i < REPS; i++)); do
		for f in "$one" "$big"; do
			x+=("$(cpu "$tmp/bench_libxdc" "$f" "$d/$pc.addr" "$d/$pc.dump" "$base" "$end")")
			n+=("$(cpu "$cap" -q --pt "$f" "${raws[@]}" --types lost -o "$ring")")
			rm -f "$ring"
			p+=("$(cpu "$cap" -q --pt "$f" "${raws[@]}" --no-ring --plugin "$empty")")
			w+=("$(cpu "$cap" -q --pt "$f" "${raws[@]}" -o "$ring")")
			rm -f "$ring"
		done
	done
	# MB/s of each round's pair (one copy, 64 MB), the median of the rounds
	rx=$(rates $((b64 - b1)) "${x[@]}")
	rn=$(rates $((b64 - b1)) "${n[@]}")
	rp=$(rates $((b64 - b1)) "${p[@]}")
	rw=$(rates $((b64 - b1)) "${w[@]}")
	ratio() { awk -v a="$1" -v b="$rx" 'BEGIN { printf "%.2f", a / b }'; }
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$b1" "$rx" \
		"$rn" "$(ratio "$rn")" "$rp" "$(ratio "$rp")" "$rw" "$(ratio "$rw")" >>"$tmp/table"
	echo "  xdc: $name done" >&2
	rm -f "$big"
done
# (not "> /dev/stdout": where stdout is a file, that truncates it)
if [ -n "$out" ]; then cat "$tmp/table" >"$out"; else cat "$tmp/table"; fi
