#!/usr/bin/env bash
# tests/stack/e2e-ocaml-exc.sh - OCaml exceptions as events, from both
# producers: ptrace-capture -i (fast walker and libipt's block decoder)
# and the dlfilter under the real perf, on the corpus OCaml program (tries
# left normally, raised to from deep recursion, re-raised).
# tests/stack/exccheck.py checks that the tries nest, that every raise goes
# to the innermost open try's handler, and that the three rings hold the
# same exception events.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
lib=$O/lib/libstrace_dlf.so
data=$O/corpus/ocaml.data
if [ ! -e "$data" ]; then
	if ! command -v ocamlopt >/dev/null; then
		echo "SKIP: ocaml-exc/all (no ocamlopt)"
		exit 0
	fi
	echo "FAIL: ocaml-exc/all ($data missing: make tests)"
	exit 1
fi
. tests/e2e/perfdl.inc
work=$(mktemp -d /tmp/ocamlexc.XXXXXX)
trap 'rm -rf "$work"' EXIT
rings=()
for dec in fast reference; do
	"$cap" -q --decoder $dec -i "$data" -o "$work/$dec.srb" 2>"$work/err" ||
		{ echo "FAIL: ocaml-exc/capture-$dec ($(head -1 "$work/err"))"; exit 1; }
	rings+=("$dec")
done
if command -v perf >/dev/null; then
	perfdl script -i "$data" --itrace=b --dlfilter "$lib" \
		--dlarg "ring=$work/dlfilter.srb" >/dev/null 2>"$work/err" ||
		{ echo "FAIL: ocaml-exc/dlfilter ($(tail -1 "$work/err"))"; exit 1; }
	rings+=(dlfilter)
fi
for r in "${rings[@]}"; do
	"$rd" -f jsonl --types 'exc_*' "$work/$r.srb" >"$work/$r.jsonl" ||
		{ echo "FAIL: ocaml-exc/read-$r"; exit 1; }
done
# the fast walker's ring first, the others compared with it
args=()
for r in "${rings[@]}"; do args+=("$work/$r.jsonl"); done
if python3 tests/stack/exccheck.py "${args[@]}" >"$work/out" 2>&1; then
	echo "PASS: ocaml-exc/events ($(tr '\n' ' ' <"$work/out")in ${rings[*]})"
else
	echo "FAIL: ocaml-exc/events ($(tr '\n' ' ' <"$work/out"))"
	exit 1
fi
