#!/usr/bin/env bash
# scripts/demo.sh - `make demo`: the main job on a bundled example. A small
# C program (scripts/demo.c: qsort with a callback, recursion, a few libc
# calls) is run under QEMU by ptsynth, which records its exact control flow
# as real Intel PT packets in a perf.data (this machine has no PT);
# ptrace-capture decodes that into a shared ring; ptrace-read prints it.
# Then perf's own decoder is shown on the same file, for comparison.
# Everything stays in $O/demo/: the program, its recording (demo.data), the
# ring (demo.srb) and the views of the trace (Perfetto FXT, Chrome JSON,
# folded stacks, a flame graph, a uftrace directory); where to open each
# is printed.
# Env: O = build directory.
set -eu
O=${O:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/$O/bin
for b in ptrace-read ptrace-capture ptsynth; do
	[ -x "$bin/$b" ] || { echo "demo: $bin/$b is missing; run 'make demo'" >&2; exit 1; }
done
# the program, its recording and its ring stay where the views go: the
# README's commands read them afterwards, and the views name the program
# by this path
dir=$top/$O/demo
ring=$dir/demo.srb
mkdir -p "$dir"
rm -rf "$dir/demo" "$dir/demo.data" "$dir/demo.truth" "$dir/demo.srb" \
	"$dir"/demo.*.pt "$dir/demo.sideband" "$dir/demo.fxt" "$dir/demo.json" \
	"$dir/demo.folded" "$dir/demo.uftrace" "$dir/demo.svg" "$dir/demo.info"
flow=$(mktemp)
trap 'rm -f "$flow"' EXIT

# -g: source lines, inlined functions and line coverage come from DWARF
cc -O1 -g -o "$dir/demo" "$top/scripts/demo.c"
echo "== ptsynth -o demo.data -- ./demo      (QEMU -> Intel PT packets -> perf.data)"
"$bin/ptsynth" -o "$dir/demo.data" --truth "$dir/demo.truth" -- "$dir/demo"
grep '^# thread' "$dir/demo.truth"
echo
echo "== ptrace-capture --coverage -i demo.data -o $ring"
"$bin/ptrace-capture" --coverage -i "$dir/demo.data" -o "$ring"
echo
echo "== ptrace-read --types 'call,return,jump,syscall' $ring | grep -A12 ' main>'"
"$bin/ptrace-read" --types 'call,return,jump,syscall' "$ring" > "$flow"
grep -m1 -A12 'to=0x[0-9a-f]* <main>' "$flow" || head -n 13 "$flow"
echo "... $(wc -l < "$flow") flow events"
echo
echo "== ptrace-read -f jsonl --types call $ring | grep cmp_int | head -n 2"
"$bin/ptrace-read" -f jsonl --types call "$ring" | grep cmp_int | head -n 2
echo
echo "== perf script --itrace=b on the same file (perf's decoder), calls into main's callees"
perf script -i "$dir/demo.data" --itrace=b -F ip,sym,addr 2>/dev/null | grep -m3 ' cmp_int' || true
echo
echo "== ptrace-read --stat $ring"
"$bin/ptrace-read" --stat "$ring"
echo
echo "== ptrace-read -f report --sym main $ring | head -n 12   (where main's time went)"
"$bin/ptrace-read" -f report --sym main "$ring" | head -n 12
echo
echo "== ptrace-read -f tree --sym main --depth 3 $ring | head -n 25"
"$bin/ptrace-read" -f tree --sym main --depth 3 "$ring" | head -n 25
echo
echo "== ptrace-read -f tree --inline --srcline --sym main --depth 3 $ring | head -n 12   (inlined functions and source lines, from DWARF)"
"$bin/ptrace-read" -f tree --inline --srcline --sym main --depth 3 "$ring" | head -n 12
echo
echo "== ptrace-read -f coverage $ring | grep -A 11 \"/demo'\"   (the lines that ran, per function, as gcov -f)"
"$bin/ptrace-read" -f coverage "$ring" | grep -A 11 "/demo'" || true
"$bin/ptrace-read" -f lcov -o "$dir/demo.info" "$ring"
echo
echo "== ptrace-read -f folded --sym main $ring | sort -k2 -n -r | head -n 5   (for speedscope)"
"$bin/ptrace-read" -f folded --sym main "$ring" | sort -t' ' -k2 -n -r | head -n 5
echo
# The views, kept after the demo: build/demo/ (O), opened where people look.
out=$dir
echo "== ptrace-capture -i demo.data --view $O/demo/demo.fxt   (decode and write a timeline in one step)"
"$bin/ptrace-capture" -q -i "$dir/demo.data" --view "$out/demo.fxt"
"$bin/ptrace-read" -f chrome -o "$out/demo.json" "$ring"
"$bin/ptrace-read" -f uftrace -o "$out/demo.uftrace" "$ring"
"$bin/ptrace-read" -f folded -o "$out/demo.folded" "$ring"
"$bin/ptrace-read" -f svg -o "$out/demo.svg" "$ring"
if command -v uftrace >/dev/null; then
	echo "== uftrace replay -d $O/demo/demo.uftrace -F main -D 3 | head -n 12   (uftrace reads our directory)"
	uftrace replay -d "$out/demo.uftrace" --no-pager -F main -D 3 2>/dev/null | head -n 12 || true
fi
echo
ls -l "$out" | sed 1d
cat <<MSG

The recording and the ring stay for your own commands:
  $O/demo/demo.data     perf script -i $O/demo/demo.data --itrace=b
                        $O/bin/ptrace-capture -i $O/demo/demo.data -o NEW.srb
  $O/demo/demo.srb      $O/bin/ptrace-read -f tree --sym main $O/demo/demo.srb
                        (report, folded, --types, -f jsonl: docs/man/ptrace-read.1)

Open the trace where you look at timelines (docs/viewing.md):
  $O/demo/demo.fxt      Perfetto UI: https://ui.perfetto.dev -> Open trace file
  $O/demo/demo.json     Perfetto UI, chrome://tracing (Load), or https://speedscope.app
  $O/demo/demo.svg      a web browser: a flame graph (hover, click to zoom, search);
                           -f svg --flame time for the frames in time order
  $O/demo/demo.folded   https://speedscope.app (collapsed stacks, one per line)
  $O/demo/demo.uftrace  uftrace replay / report / graph -d $O/demo/demo.uftrace,
                           uftrace dump --chrome -d $O/demo/demo.uftrace > demo-uftrace.json
  $O/demo/demo.info     genhtml -o html $O/demo/demo.info (lcov's HTML report of the
                           lines that ran; lcov --extract ... '*/demo.c' for the program's own)

Plugins (README, docs/plugins.md) are in $O/plugins/: callcount.so, latency.so,
slow.so, tee.so, found by name, e.g.
  $O/bin/ptrace-read -f none --plugin callcount $O/demo/demo.srb
MSG
