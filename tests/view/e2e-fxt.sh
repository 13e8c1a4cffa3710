#!/usr/bin/env bash
# tests/view/e2e-fxt.sh - ptrace-read -f fxt (cli/view/fmt_fxt.c), judged by
# tests/view/fxtcheck.py (an FXT reader written from the specification,
# apart from the writer; strict mode) and compared with -f chrome:
#   - corpus traces (recurse, threads, exceptions, signals, ocaml; the
#     overflow, drop and corrupt variants for gaps, errors and losses): the
#     FXT is valid (record sizes, interned strings and threads, begin/end
#     nesting per thread); its slices are the Chrome JSON's, line for line;
#     their count is the frames strace_stack made (the lines of -f tree);
#     a model of Perfetto's importer (fxtperfetto.py) drops none; its
#     instants are the JSON's; its kernel objects name the threads;
#   - filters (--tid, --sym, --time) apply to both alike;
#   - losses: a flight ring that overwrote its oldest events, --generate's
#     every event type (lost, overflow, error ...), a reader that fell
#     behind a flight ring (lost events of its own): valid output;
#   - index reuse: more threads (300) and names (40000) than FXT's tables
#     hold (255, 32767): every reference resolves (fxtmany.py);
#   - an empty ring, a ring of definitions only: valid, no slices;
#   - standard output is the same file as -o.
T=e2e-fxt
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
PR=$top/$O/bin/ptrace-read
CAP=$top/$O/bin/ptrace-capture
V=$top/tests/view
R=/dev/shm/e2e_fxt_$$
on_exit() { rm -f "$R"_*; }

if ! command -v python3 >/dev/null; then
	skip all "python3 is needed for fxtcheck.py"
	exit 0
fi
for b in "$PR" "$CAP"; do
	[ -x "$b" ] || { fail build "$b is missing: run make"; exit 1; }
done

# read NAME RING WANT_RC ARGS...: -f fxt and -f chrome of RING (with ARGS)
# into $work/NAME.fxt and $work/NAME.json; both must exit WANT_RC
read_both() {
	local name=$1 ring=$2 want=$3 rc1 rc2
	shift 3
	"$PR" -f fxt -o "$work/$name.fxt" "$@" "$ring" 2>"$work/$name.err"; rc1=$?
	"$PR" -f chrome -o "$work/$name.json" "$@" "$ring" 2>>"$work/$name.err"; rc2=$?
	if [ $rc1 -ne "$want" ] || [ $rc2 -ne "$want" ]; then
		fail "$name/read" "fxt exit $rc1, chrome exit $rc2, wanted $want:" "$(head -c 600 "$work/$name.err")"
		return 1
	fi
	return 0
}

# valid NAME: fxtcheck.py (strict) accepts $work/NAME.fxt
valid() {
	local name=$1
	if python3 "$V/fxtcheck.py" "$work/$name.fxt" >"$work/$name.chk" 2>&1; then
		pass "$name/valid ($(grep -o '[0-9]* records' "$work/$name.chk"), $(grep -o '[0-9]* slices on [0-9]* threads' "$work/$name.chk"))"
		return 0
	fi
	fail "$name/valid" "$(head -n 20 "$work/$name.chk")"
	return 1
}

# same NAME: the FXT's slices are the Chrome JSON's (in ticks of 1 ns;
# slicesclose.py: the JSON's times may be a few ns later); prints how many
same() {
	local name=$1 n
	python3 "$V/fxtcheck.py" --slices "$work/$name.fxt" 2>/dev/null | LC_ALL=C sort >"$work/$name.fs"
	if ! python3 "$V/chromeslices.py" --ticks-per-second 1000000000 "$work/$name.json" 2>"$work/$name.cserr" |
		LC_ALL=C sort >"$work/$name.cs" || [ -s "$work/$name.cserr" ]; then
		fail "$name/slices-equal-chrome" "chromeslices.py: $(head -n 5 "$work/$name.cserr")"
		return 1
	fi
	n=$(wc -l <"$work/$name.fs")
	if python3 "$V/slicesclose.py" "$work/$name.cs" "$work/$name.fs" >"$work/$name.diff"; then
		pass "$name/slices-equal-chrome ($(tail -n 1 "$work/$name.diff"))"
		return 0
	fi
	fail "$name/slices-equal-chrome" "$(wc -l <"$work/$name.cs") in the JSON, $n in the FXT:" "$(head -n 10 "$work/$name.diff")"
	return 1
}

# perfetto NAME: a model of Perfetto's importer (fxtperfetto.py) stacks
# the slices without dropping or truncating one
perfetto() {
	local name=$1
	if python3 "$V/fxtperfetto.py" "$work/$name.fxt" >/dev/null 2>"$work/$name.pf"; then
		pass "$name/perfetto-nesting"
	else
		fail "$name/perfetto-nesting" "$(head -n 5 "$work/$name.pf")"
	fi
}

# instants NAME: the FXT's instant events are the JSON's "i" events
instants() {
	local name=$1
	python3 "$V/fxtcheck.py" --dump "$work/$name.fxt" 2>/dev/null |
		awk '$4 == "I" { print $1, $2, $3, $5 }' | LC_ALL=C sort >"$work/$name.fi"
	python3 - "$work/$name.json" >"$work/$name.ci" 2>"$work/$name.cierr" <<'EOF'
import json, sys
from fractions import Fraction
from decimal import Decimal
for e in json.load(open(sys.argv[1]), parse_float=Decimal):
    if e.get("ph") == "i":
        print(round(Fraction(e["ts"]) * 1000), e["pid"], e["tid"], e["cat"])
EOF
	LC_ALL=C sort -o "$work/$name.ci" "$work/$name.ci"
	if cmp -s "$work/$name.fi" "$work/$name.ci"; then
		echo "$(wc -l <"$work/$name.fi")"
		return 0
	fi
	echo "differ: $(wc -l <"$work/$name.fi") in the FXT, $(wc -l <"$work/$name.ci") in the JSON: $(diff "$work/$name.ci" "$work/$name.fi" | head -n 4 | tr '\n' ' ')$(tail -n 1 "$work/$name.cierr")"
	return 1
}

# frames RING ARGS...: the frames strace_stack makes, one line each in
# -f tree (a leaf, or the closing line of a frame with callees)
frames() {
	local ring=$1
	shift
	"$PR" -f tree "$@" "$ring" 2>/dev/null |
		grep -cE '\(\);( /\* began before the trace \*/)?$|\} /\* .* \*/$'
}

# names NAME: every thread the JSON names is a kernel object of the FXT,
# with its process
names() {
	python3 - "$work/$1.json" "$work/$1.chk" 2>"$work/$1.nerr" <<'EOF' || { tail -n 1 "$work/$1.nerr"; return 1; }
import json, sys
summary = open(sys.argv[2]).read()
bad = [f'thread {e["tid"]} "{e["args"]["name"]}" of {e["pid"]}'
       for e in json.load(open(sys.argv[1]))
       if e.get("ph") == "M" and e["name"] == "thread_name"
       and f'thread {e["tid"]} "{e["args"]["name"]}" of {e["pid"]}' not in summary]
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
}

# trace NAME DATA: capture DATA, then every check of one trace; GAPS=1:
# it must have instants
trace() {
	local name=$1 data=$2 n f out
	rm -f "$R"_t
	# (exit 3: decoded, with code lost to decode errors)
	"$CAP" -q -i "$data" -o "$R"_t 2>"$work/$name.caperr"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
		fail "$name/capture" "exit $rc: $(head -c 400 "$work/$name.caperr")"
		return
	fi
	read_both "$name" "$R"_t 0 || return
	valid "$name"
	same "$name"
	perfetto "$name"
	n=$(wc -l <"$work/$name.fs")
	f=$(frames "$R"_t)
	if [ "$n" -gt 0 ] && [ "$n" -eq "$f" ]; then
		pass "$name/slices-are-the-frames ($n)"
	else
		fail "$name/slices-are-the-frames" "$n slices, -f tree shows $f frames"
	fi
	# (the damaged variants are the same bytes in every clone:
	# tests/corpus/corpus.sh runs every program in one environment)
	if out=$(instants "$name") && { [ "${GAPS:-0}" = 0 ] || [ "$out" -gt 0 ]; }; then
		pass "$name/instants-equal-chrome ($out)"
	else
		fail "$name/instants-equal-chrome" "$out"
	fi
	if out=$(names "$name"); then
		pass "$name/thread-names"
	else
		fail "$name/thread-names" "not in the FXT: $out"
	fi
}

# --- corpus traces ----------------------------------------------------------
for n in recurse threads exceptions signals ocaml; do
	if [ -e "$O/corpus/$n.data" ]; then
		trace "$n" "$O/corpus/$n.data"
	else
		skip "$n" "$O/corpus/$n.data missing: make tests links the corpus"
	fi
done
if grep -q 'on 4 threads' "$work/threads.chk" 2>/dev/null; then
	pass threads/four-threads
elif [ -e "$O/corpus/threads.data" ]; then
	fail threads/four-threads "$(cat "$work/threads.chk")"
fi
# gaps, errors, losses of the trace: ptsynth's variants
for tv in threads:overflow recurse:overflow exceptions:overflow signals:drop threads:corrupt; do
	n=${tv%:*} var=${tv#*:}
	if d=$(O=$O tests/corpus/corpus.sh trace "$n" "$var" 2>"$work/corpus.err") && [ -e "$d/trace.data" ]; then
		GAPS=1 trace "$n-$var" "$d/trace.data"
	else
		skip "$n-$var" "corpus.sh trace $n $var failed: $(tail -n 1 "$work/corpus.err")"
	fi
done

# --- filters -----------------------------------------------------------------
if [ -e "$O/corpus/threads.data" ]; then
	rm -f "$R"_th
	"$CAP" -q -i "$O/corpus/threads.data" -o "$R"_th 2>/dev/null
	tid=$(awk '{ print $2 }' "$work/threads.fs" | sort -n | uniq | sed -n 2p)
	if [ -n "$tid" ] && read_both tid "$R"_th 0 --tid "$tid" && valid tid && same tid; then
		if [ -s "$work/tid.fs" ] && awk -v t="$tid" '$2 != t { bad = 1 } END { exit bad }' "$work/tid.fs" &&
			[ "$(wc -l <"$work/tid.fs")" -lt "$(wc -l <"$work/threads.fs")" ] &&
			[ "$(wc -l <"$work/tid.fs")" -eq "$(frames "$R"_th --tid "$tid")" ]; then
			pass "tid/only-thread-$tid"
		else
			fail "tid/only-thread-$tid" "$(awk '{ print $2 }' "$work/tid.fs" | sort | uniq -c | tr '\n' ' ')"
		fi
	fi
	# --time: the middle of the trace (perf seconds)
	if read_both time "$R"_th 0 --time 25%-75% && valid time && same time; then
		n=$(wc -l <"$work/time.fs")
		if [ "$n" -gt 0 ] && [ "$n" -lt "$(wc -l <"$work/threads.fs")" ]; then
			pass "time/fewer-slices ($n)"
		else
			fail "time/fewer-slices" "$n slices"
		fi
	fi
	# --time START,END (perf seconds): every slice of both within the
	# window, the frames open at its ends cut there
	lo=$(awk 'NR == 1 || $3 < m { m = $3 } END { print m }' "$work/threads.fs")
	hi=$(awk '$4 > m { m = $4 } END { print m }' "$work/threads.fs")
	a=$(((lo * 3 + hi) / 4)) b=$(((lo + hi * 3) / 4))
	secs() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
	if read_both window "$R"_th 0 --time "$(secs $a),$(secs $b)" && valid window && same window; then
		out=$(awk -v a="$a" -v b="$b" '$3 < a || $4 > b { bad++ } $3 == a { at_a++ } $4 == b { at_b++ }
			END { printf "%d %d %d", bad, at_a, at_b }' "$work/window.fs")
		set -- $out
		if [ -s "$work/window.fs" ] && [ "$1" = 0 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ]; then
			pass "window/slices-inside ($(wc -l <"$work/window.fs") slices in $a..$b ns; $2 cut at its start, $3 at its end)"
		else
			fail "window/slices-inside" "outside, cut at start, cut at end: $out"
		fi
	fi
fi
if [ -e "$O/corpus/recurse.data" ]; then
	rm -f "$R"_rc
	"$CAP" -q -i "$O/corpus/recurse.data" -o "$R"_rc 2>/dev/null
	if read_both sym "$R"_rc 0 --sym fib && valid sym && same sym; then
		# fib(16) calls itself 3192 times; nothing else is shown
		if awk '$6 != "fib" { bad = 1 } END { exit bad || NR != 3193 }' "$work/sym.fs"; then
			pass "sym/only-fib (3193 calls)"
		else
			fail "sym/only-fib" "$(awk '{ print $5, $6 }' "$work/sym.fs" | sort | uniq -c | head -n 5 | tr '\n' ' ')"
		fi
	fi
fi

# --- losses ------------------------------------------------------------------
# a flight ring too small for the trace: its oldest events overwritten (the
# stacks begin in the middle)
if [ -e "$O/corpus/threads.data" ]; then
	rm -f "$R"_fl
	if "$CAP" -q -i "$O/corpus/threads.data" -o "$R"_fl --mode flight --capacity 1024 2>"$work/fl.err"; then
		read_both flight "$R"_fl 0 && valid flight && same flight && perfetto flight
	else
		fail flight/capture "$(head -c 300 "$work/fl.err")"
	fi
fi
# every event type of the table, lost, overflow and error among them, in
# a flight ring that wrapped many times
rm -f "$R"_gen
if "$PR" --generate 200000 --mode flight --capacity 4096 -o "$R"_gen 2>"$work/gen.err"; then
	if read_both generate "$R"_gen 0 && valid generate && same generate && perfetto generate; then
		if out=$(instants generate) && [ "$out" -gt 0 ]; then
			pass "generate/instants-equal-chrome ($out)"
		else
			fail generate/instants-equal-chrome "$out"
		fi
	fi
else
	fail generate/ring "$(head -c 300 "$work/gen.err")"
fi
# a reader that falls behind a flight ring: lost events of its own (on
# thread 0), exit 3; both outputs stay valid
for f in fxt chrome; do
	rm -f "$R"_fol
	"$PR" --generate 3000000 --mode flight --capacity 4096 -o "$R"_fol --readers 1 --timeout 20000 >/dev/null 2>"$work/fol-gen.err" &
	gen=$!
	ext=$f
	[ $f = chrome ] && ext=json
	"$PR" -f $f --follow --timeout 20000 -o "$work/follow.$ext" "$R"_fol 2>"$work/follow-$f.err"
	echo $? >"$work/follow-$f.rc"
	wait $gen
done
if [ "$(cat "$work/follow-fxt.rc")" = 3 ] && grep -q 'events lost' "$work/follow-fxt.err" && valid follow; then
	if python3 "$V/fxtcheck.py" --dump "$work/follow.fxt" 2>/dev/null | grep -q '^0 0 0 I gap lost$'; then
		pass follow/reader-lost-instants
	else
		fail follow/reader-lost-instants "no lost instant on thread 0"
	fi
elif [ "$(cat "$work/follow-fxt.rc")" = 0 ]; then
	skip follow/fxt "the reader lost nothing this time"
else
	fail follow/fxt "exit $(cat "$work/follow-fxt.rc"):" "$(head -c 400 "$work/follow-fxt.err")"
fi
if [ "$(cat "$work/follow-chrome.rc")" = 3 ] && python3 "$V/chromeslices.py" "$work/follow.json" >/dev/null 2>"$work/follow.cserr"; then
	pass follow/chrome-json-valid
elif [ "$(cat "$work/follow-chrome.rc")" = 0 ]; then
	skip follow/chrome "the reader lost nothing this time"
else
	fail follow/chrome-json-valid "exit $(cat "$work/follow-chrome.rc"): $(head -n 3 "$work/follow.cserr")"
fi

# --- index reuse; empty rings ---------------------------------------------
lib=$top/$O/lib/libstrace.so
many() { # RING [THREADS NAMES ROUNDS]: fxtmany.py, under ASan's runtime when lib is built with it
	local asan
	python3 "$V/fxtmany.py" "$lib" "$@" 2>"$work/many.err" && return 0
	grep -q 'ASan runtime' "$work/many.err" || return 1
	rm -f "$1"
	asan=$(${CC:-gcc} -print-file-name=libasan.so)
	LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0 python3 "$V/fxtmany.py" "$lib" "$@" 2>"$work/many.err"
}
if [ ! -e "$lib" ]; then
	skip reuse "$lib missing"
elif want=$(many "$R"_many); then
	if read_both reuse "$R"_many 0 && valid reuse && same reuse && perfetto reuse; then
		s=$(grep -o 'string [0-9]*' "$work/reuse.chk" | cut -d' ' -f2)
		t=$(grep -o 'thread [0-9]*)' "$work/reuse.chk" | tr -dc 0-9)
		if [ "$(wc -l <"$work/reuse.fs")" -eq "$want" ] && [ "${s:-0}" -gt 32767 ] && [ "${t:-0}" -gt 255 ] &&
			grep -q 'on 300 threads' "$work/reuse.chk" && out=$(names reuse); then
			pass "reuse/indexes-redefined ($want slices, $s string records, $t thread records)"
		else
			fail reuse/indexes-redefined "want $want slices, more than 32767 string and 255 thread records:" "$(cat "$work/reuse.chk")" "$out"
		fi
	fi
	rm -f "$R"_defs
	if many "$R"_defs 0 0 0 >/dev/null && read_both defs "$R"_defs 0 && valid defs && same defs; then
		pass defs/no-slices
	fi
else
	fail reuse/ring "$(tail -n 3 "$work/many.err")"
fi
rm -f "$R"_empty
if "$PR" --generate 0 -o "$R"_empty 2>"$work/empty.err" && read_both empty "$R"_empty 0 && valid empty && same empty; then
	if grep -q ' 0 slices' "$work/empty.chk"; then
		pass empty/no-slices
	else
		fail empty/no-slices "$(cat "$work/empty.chk")"
	fi
fi

# --- standard output --------------------------------------------------------
if [ -e "$R"_rc ]; then
	"$PR" -f fxt "$R"_rc >"$work/stdout.fxt" 2>/dev/null
	if cmp -s "$work/stdout.fxt" "$work/recurse.fxt"; then
		pass stdout-equals-file
	else
		fail stdout-equals-file "$(cmp "$work/stdout.fxt" "$work/recurse.fxt" 2>&1)"
	fi
fi
finish
