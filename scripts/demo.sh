#!/usr/bin/env bash
# scripts/demo.sh - `make demo`: write sample events into a shared ring,
# read them back (text and JSON, first lines), save them to a file and read
# that again, and show the ring's state. Env: O = build directory.
set -eu
O=${O:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
bin="$top/$O/bin/ptrace-read"
[ -x "$bin" ] || { echo "demo: $bin is missing; run 'make' first" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ptrace-demo.XXXXXX")
ring=/dev/shm/strace_demo_$$.srb
trap 'rm -rf "$dir" "$ring"' EXIT

echo "== ptrace-read --generate 100000 -o $ring"
"$bin" --generate 100000 -o "$ring"
echo
echo "== ptrace-read $ring | head -n 40    (text: seq time tid/thread type operands)"
"$bin" "$ring" > "$dir/all.txt"
head -n 40 "$dir/all.txt"
echo "... $(wc -l < "$dir/all.txt") lines"
echo
echo "== ptrace-read -f jsonl --types 'call,ret*' $ring | head -n 5"
"$bin" -f jsonl --types 'call,ret*' "$ring" > "$dir/calls.jsonl"
head -n 5 "$dir/calls.jsonl"
echo
echo "== ptrace-read -f ring -o saved.srb $ring; ptrace-read saved.srb | sed -n 30,34p"
"$bin" -f ring -o "$dir/saved.srb" "$ring"
"$bin" "$dir/saved.srb" | sed -n 30,34p
echo
echo "== ptrace-read --stat $ring"
"$bin" --stat "$ring"
