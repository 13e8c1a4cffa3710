#!/usr/bin/env bash
# tests/view/e2e-svg.sh - ptrace-read -f svg (cli/view/fmt_svg.c), the flame
# graph a browser opens by itself, judged by tests/view/svgcheck.py
# against the text views of the same ring (docs/viewing.md, "SVG flame
# graph"):
#   - on corpus traces (threads, an overflow, corrupt data, C++ and OCaml
#     exceptions, signals, longjmp, deep recursion, a per-CPU recording, a
#     flight ring that lost its start) and on sample events (odd names:
#     quotes, a tab, <, >, &, UTF-8): the SVG is well-formed XML;
#     --flame merged is -f folded's stacks, weight for weight, box for
#     stack prefix, callees in the order of names, widths to 0.01 px;
#     --flame time nests each box in its caller's time and holds the
#     frames of -f tree, thread by thread, name and duration; both with
#     --min-width 0 (every box) and the default (the subtitle counts what
#     it left out);
#   - the filters (--sym, --no-sym, --tid, --time, --dso) and --weight
#     calls shape it as they shape -f folded and -f tree;
#   - 457,000 frames (1M sample events) give an SVG of a few MB;
#   - bad option values are usage errors (exit 2) that say what is taken;
#   - ptrace-capture --view NAME.svg, NAME.folded and NAME.uftrace write
#     what ptrace-read writes;
#   - headless Chromium (tests/view/svg-check.js, through
#     browser-check.sh --svg): the frames are drawn, hover, click to zoom,
#     undo, reset and search work, nothing is fetched. The screenshots
#     stay in $O/tests/view/ (VIEW_SVG_DOC_SHOT=docs/viewing-svg.png
#     refreshes the one of docs/viewing.md).
# SKIP: the browser checks when Chromium or node is missing; everything
# when python3 is.
T=svg
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read
judge=tests/view/svgcheck.py
shots=$O/tests/view
mkdir -p "$shots"

if ! command -v python3 >/dev/null; then
	echo "SKIP: $T/all (python3 is needed)"
	exit 0
fi

# judge NAME RING [FILTERS...]: the four SVGs of RING against -f folded
# and -f tree with the same filters
judge() {
	local name=$1 r=$2 m
	shift 2
	if ! "$rd" -f folded "$@" -o "$work/$name.folded" "$r" 2>"$work/err" ||
		! "$rd" -f tree "$@" -o "$work/$name.tree" "$r" 2>>"$work/err"; then
		fail "$name/read" "$(head -2 "$work/err")"
		return
	fi
	for m in 0 default; do
		local mw=() arg=0.1
		[ $m = 0 ] && mw=(--min-width 0) arg=0
		if "$rd" -f svg "${mw[@]}" "$@" -o "$work/$name.m$m.svg" "$r" 2>"$work/err" &&
			python3 $judge merged "$work/$name.m$m.svg" "$work/$name.folded" \
				--min-width $arg >"$work/out" 2>&1; then
			pass "$name/merged-min-width-$m ($(cut -c5- "$work/out"))"
		else
			fail "$name/merged-min-width-$m" "$(head -3 "$work/err")" "$(head -c 600 "$work/out")"
		fi
		if "$rd" -f svg --flame time "${mw[@]}" "$@" -o "$work/$name.t$m.svg" "$r" 2>"$work/err" &&
			python3 $judge time "$work/$name.t$m.svg" "$work/$name.tree" \
				--min-width $arg >"$work/out" 2>&1; then
			pass "$name/time-min-width-$m ($(cut -c5- "$work/out"))"
		else
			fail "$name/time-min-width-$m" "$(head -3 "$work/err")" "$(head -c 600 "$work/out")"
		fi
	done
}

# capture NAME DATA [OPTIONS]: the ring of a recording
capture() {
	local name=$1 data=$2
	shift 2
	# (exit 3: decoded, with code lost to decode errors)
	"$cap" -q -i "$data" "$@" -o "$work/$name.srb" 2>"$work/err"
	local rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
		fail "$name/capture" "exit $rc: $(head -2 "$work/err")"
		return 1
	fi
}

# --- corpus traces ----------------------------------------------------------
for spec in threads:default threads:overflow threads:corrupt threads:percpu \
	exceptions:default ocaml:default signals:default longjmp:default \
	recurse:default recurse:overflow; do
	p=${spec%%:*} v=${spec#*:}
	[ "$p" = ocaml ] && ! command -v ocamlopt >/dev/null &&
		{ echo "SKIP: $T/ocaml (no ocamlopt)"; continue; }
	if ! dir=$(tests/corpus/corpus.sh trace "$p" "$v" 2>"$work/err"); then
		fail "$p-$v/trace" "$(tail -1 "$work/err")"
		continue
	fi
	capture "$p-$v" "$dir/trace.data" && judge "$p-$v" "$work/$p-$v.srb"
done
threads=$(tests/corpus/corpus.sh trace threads default)/trace.data
# a flight ring that overwrote its oldest events: threads begin inside
# their calls (frames found late)
capture threads-flight "$threads" --mode flight --capacity 1024 &&
	judge threads-flight "$work/threads-flight.srb"
# sample events: every type, odd names, gaps, seeds
"$rd" --generate 20000 -o "$work/sample.srb" >/dev/null 2>"$work/err" ||
	fail sample/generate "$(head -2 "$work/err")"
judge sample "$work/sample.srb"

# --- filters ----------------------------------------------------------------
r=$work/threads-default.srb
tid=$("$rd" -f report --by thread "$r" | awk 'NR == 4 { print $(NF - 1) }')
judge sym "$r" --sym main
judge no-sym "$r" --no-sym 'pthread_*'
judge tid "$r" --tid "$tid"
judge time "$r" --time 25%-75%
judge dso "$r" --dso libc.so.6
if "$rd" -f folded --weight calls -o "$work/calls.folded" "$r" &&
	"$rd" -f svg --weight calls --min-width 0 -o "$work/calls.svg" "$r" &&
	python3 $judge merged "$work/calls.svg" "$work/calls.folded" --min-width 0 >"$work/out" 2>&1 &&
	grep -q 'data-unit="calls"' "$work/calls.svg"; then
	pass "weight-calls ($(cut -c5- "$work/out"))"
else
	fail weight-calls "$(head -c 600 "$work/out")"
fi

# --- a big trace: bounded output --------------------------------------------
# 1M sample events: 457,000 frames, whose boxes would be 77 MB of SVG
"$rd" --generate 1000000 --capacity 2097152 -o "$work/big.srb" >/dev/null 2>"$work/err" ||
	fail big/generate "$(head -2 "$work/err")"
for fl in merged time; do
	"$rd" -f svg --flame $fl -o "$work/big-$fl.svg" "$work/big.srb" 2>"$work/err"
	rc=$?
	size=$(stat -c %s "$work/big-$fl.svg" 2>/dev/null || echo 0)
	left=$(grep -o '[0-9]* frames\? narrower than 0.1 px left out' "$work/big-$fl.svg" | cut -d' ' -f1)
	if [ $rc -eq 0 ] && [ "$size" -gt 0 ] && [ "$size" -lt $((8 * 1024 * 1024)) ] &&
		[ "${left:-0}" -gt 0 ] &&
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/big-$fl.svg"; then
		pass "big-$fl ($size bytes, well-formed, $left frames left out)"
	else
		fail "big-$fl" "exit $rc, $size bytes, left out: '${left:-}'" "$(head -2 "$work/err")"
	fi
done

# --- usage errors -------------------------------------------------------------
# bad ARGS... -- TEXT: exit 2 and TEXT on stderr
bad() {
	local args=() text rc
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	text=$2
	"$rd" "${args[@]}" "$r" >/dev/null 2>"$work/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$text" "$work/err"; then
		pass "usage: ${args[*]} (exit 2: $(head -1 "$work/err"))"
	else
		fail "usage: ${args[*]}" "exit $rc, want 2 and '$text':" "$(head -3 "$work/err")"
	fi
}
bad -f svg --flame sideways -- "--flame: 'sideways': merged (the stacks merged) or time"
bad -f svg --min-width -1 -- "--min-width: '-1' is not a number of pixels from 0 to 100"
bad -f svg --min-width 0.1px -- "--min-width: '0.1px' is not a number"
bad -f svg --min-width 101 -- "--min-width: '101' is not a number"
bad -f svg --min-width nan -- "--min-width: 'nan' is not a number"
bad -f folded --flame time -- "--flame and --min-width go with -f svg"
bad -f chrome --min-width 1 -- "--flame and --min-width go with -f svg"
bad -f svg --flame time --weight calls -- "--weight calls goes with --flame merged"
bad -f svgz -- "-f: unknown format 'svgz' (text, jsonl, raw, ring, none, tree, report, folded, chrome, fxt, uftrace, svg, lcov, coverage)"

# --- ptrace-capture --view ------------------------------------------------------
export STRACE_RING=$work/default.srb
"$rd" -f svg -o "$work/rd.svg" "$r" && "$rd" -f folded -o "$work/rd.folded" "$r"
if "$cap" -q -i "$threads" --view "$work/v.svg" 2>"$work/err" &&
	"$cap" -q -i "$threads" --view "$work/v.folded" 2>>"$work/err" &&
	"$cap" -q -i "$threads" --view "$work/v.uftrace" 2>>"$work/err" &&
	cmp -s "$work/v.svg" "$work/rd.svg" && cmp -s "$work/v.folded" "$work/rd.folded" &&
	[ -s "$work/v.uftrace/info" ] && [ ! -e "$STRACE_RING" ]; then
	pass "capture-view (.svg and .folded as ptrace-read writes them, a .uftrace directory, no ring left)"
else
	fail "capture-view" "$(head -3 "$work/err")"
fi
# (a name of no view: e2e-chrome.sh, capture-view-bad-name)
unset STRACE_RING

# --- a real browser ---------------------------------------------------------------
# the share of main in the folded stacks: what the search must say
want=$(python3 -c '
import sys
t = m = 0
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    t += int(w)
    if "main" in stack.split(";"):
        m += int(w)
print("%.2f" % (100.0 * m / t))' "$work/rd.folded")
for fl in merged time; do
	svg=$work/rd.svg
	[ $fl = time ] && svg=$work/threads-default.tdefault.svg
	tests/view/browser-check.sh --svg "$svg" "$shots/svg-$fl.png" main --expect-match "$want" \
		>"$work/br.out" 2>&1
	case $? in
	0) pass "browser-$fl ($(head -c 700 "$work/br.out" | tr '\n' ' '))" ;;
	77) echo "SKIP: $T/browser-$fl ($(tail -1 "$work/br.out"))" ;;
	*) fail "browser-$fl" "$(head -c 800 "$work/br.out")" ;;
	esac
done
tests/view/browser-check.sh --svg "$work/sample.mdefault.svg" "$shots/svg-sample.png" \
	'std::vector<int, std::allocator<int> >::push_back(int const&)' >"$work/br.out" 2>&1
case $? in
0) pass "browser-odd-names ($(head -c 400 "$work/br.out" | tr '\n' ' '))" ;;
77) echo "SKIP: $T/browser-odd-names ($(tail -1 "$work/br.out"))" ;;
*) fail "browser-odd-names" "$(head -c 800 "$work/br.out")" ;;
esac
if [ -n "${VIEW_SVG_DOC_SHOT:-}" ] && [ -s "$shots/svg-merged.png" ]; then
	cp "$shots/svg-merged.png" "$VIEW_SVG_DOC_SHOT"
fi
finish
