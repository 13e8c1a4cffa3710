#!/usr/bin/env bash
# tests/view/e2e-view-judges.sh - the two judges of our viewer outputs,
# run on hand-made fixtures (docs/viewing-tests.md):
#   FXT:     fxtcheck.py accepts fxtgen.py's valid trace, and its slices are
#            those chromeslices.py reads from fixtures/nested.json; it
#            rejects each broken file naming the bad record's byte offset;
#            --lenient accepts what the specification lets a reader skip.
#   browser: speedscope in headless Chromium loads the Chrome JSON (nested
#            X, B/E, i, M; also without its closing ']') and the folded
#            stacks and shows their names; it rejects nameless E events
#            (speedscope leaves their frames open), a file that is no
#            profile, a name that is not there; a blank PNG is judged blank.
# Screenshots stay in $O/tests/view/ for a person to look at.
T=e2e-view-judges
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
V=tests/view
shots=$O/tests/view
mkdir -p "$shots"

if ! command -v python3 >/dev/null; then
	skip fxt "python3 is needed"
else
	# --- FXT -----------------------------------------------------------
	if python3 $V/fxtgen.py "$work/fxt" >"$work/gen.out" 2>&1; then
		pass fxt/fxtgen
	else
		fail fxt/fxtgen "$(cat "$work/gen.out")"
	fi
	if python3 $V/fxtcheck.py "$work/fxt/good.fxt" >"$work/good.out" 2>&1; then
		pass fxt/good-accepted
	else
		fail fxt/good-accepted "$(cat "$work/good.out")"
	fi
	# every record, event and argument type parsed; the unknown ones skipped
	if grep -q 'unknown, skipped: argument type 13 x1, event type 11 x1, record type 11 x1, trace info type 5 x1;' "$work/good.out" &&
		grep -q 'thread 102 "worker-thread" of 100' "$work/good.out"; then
		pass fxt/good-summary
	else
		fail fxt/good-summary "$(cat "$work/good.out")"
	fi
	python3 $V/fxtcheck.py --dump "$work/fxt/good.fxt" >"$work/dump" 2>/dev/null
	if [ "$(wc -l <"$work/dump")" -eq 22 ] &&
		grep -qx '20500 100 101 B fn cmp' "$work/dump" &&
		grep -qx '35000 100 101 E - -' "$work/dump" &&
		grep -qx '5000 100 102 X fn worker_loop 90000' "$work/dump" &&
		grep -qx '50000 100 101 I fn marker' "$work/dump" &&
		grep -qx '102000 100 103 I fn tmp-two' "$work/dump"; then
		pass fxt/dump
	else
		fail fxt/dump "$(head -n 30 "$work/dump")"
	fi
	# the same slices from the FXT file and from the Chrome JSON
	python3 $V/fxtcheck.py --slices "$work/fxt/good.fxt" >"$work/fxt.slices" 2>/dev/null
	python3 $V/chromeslices.py $V/fixtures/nested.json >"$work/json.slices"
	if [ -s "$work/fxt.slices" ] && diff -u "$work/json.slices" "$work/fxt.slices" >"$work/diff"; then
		pass fxt/slices-equal-chrome-json
	else
		fail fxt/slices-equal-chrome-json "$(cat "$work/diff")"
	fi
	python3 $V/chromeslices.py $V/fixtures/nested-unterminated.json >"$work/unterm.slices"
	if cmp -s "$work/json.slices" "$work/unterm.slices"; then
		pass slices/unterminated-json
	else
		fail slices/unterminated-json "$(diff "$work/json.slices" "$work/unterm.slices")"
	fi
	# the comparison sees a slice 1 us off, and unbalanced B/E
	sed 's/"ts": 30, "dur": 5/"ts": 31, "dur": 4/' $V/fixtures/nested.json >"$work/moved.json"
	python3 $V/chromeslices.py "$work/moved.json" >"$work/moved.slices"
	if ! cmp -s "$work/moved.slices" "$work/fxt.slices" &&
		grep -qx '100 101 31000 35000 2 cmp' "$work/moved.slices"; then
		pass slices/diff-sees-a-moved-slice
	else
		fail slices/diff-sees-a-moved-slice
	fi
	sed 's/"ph": "B", "pid": 100, "tid": 102, "ts": 40/"ph": "E", "pid": 100, "tid": 102, "ts": 40/' \
		$V/fixtures/nested.json >"$work/unbalanced.json"
	if ! python3 $V/chromeslices.py "$work/unbalanced.json" >/dev/null 2>"$work/unb.err" &&
		grep -q 'no open B' "$work/unb.err"; then
		pass slices/unbalanced-json-rejected
	else
		fail slices/unbalanced-json-rejected "$(cat "$work/unb.err")"
	fi
	# each broken file: rejected, the first error at the bad record's offset
	while IFS=$'\t' read -r file off text; do
		name=fxt/rejects-${file%.fxt}
		out=$(python3 $V/fxtcheck.py "$work/fxt/$file" 2>&1)
		rc=$?
		first=$(printf '%s\n' "$out" | grep -m1 ': byte offset ')
		if [ $rc -eq 1 ] && printf '%s\n' "$first" | grep -qF "byte offset $off " &&
			printf '%s\n' "$first" | grep -qF "$text" &&
			printf '%s\n' "$out" | grep -qF "the first at byte offset $off"; then
			pass "$name"
		else
			fail "$name" "exit $rc, wanted byte offset $off and '$text':" "$out"
		fi
	done <"$work/fxt/cases.txt"
	# --lenient: what a reader may skip is accepted; undefined refs are not
	ok=1
	for f in trailing-word padding reserved-bits end-name-mismatch; do
		python3 $V/fxtcheck.py --lenient "$work/fxt/bad-$f.fxt" >"$work/len.out" 2>&1 || { ok=0; cat "$work/len.out"; }
	done
	python3 $V/fxtcheck.py --lenient "$work/fxt/bad-undefined-string.fxt" >/dev/null 2>&1 && ok=0
	if [ $ok = 1 ]; then pass fxt/lenient; else fail fxt/lenient; fi
	if python3 $V/fxtcheck.py /nonexistent.fxt >/dev/null 2>&1; [ $? -eq 2 ]; then
		pass fxt/unreadable-file-exit-2
	else
		fail fxt/unreadable-file-exit-2
	fi
fi

# --- browser ---------------------------------------------------------------
# browser NAME WANT_RC PROFILE NAME...: browser-check.sh exits WANT_RC
browser() {
	local name=$1 want=$2 profile=$3 out rc
	shift 3
	out=$(bash $V/browser-check.sh "$profile" "$shots/$name.png" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 77 ]; then
		skip "browser/$name" "$(printf '%s' "$out" | tail -n 1)"
		return 77
	fi
	if [ $rc -eq "$want" ]; then
		pass "browser/$name"
		[ "${VERBOSE:-0}" = 1 ] && printf '  %s\n' "$out"
	else
		fail "browser/$name" "exit $rc, wanted $want:" "$out"
	fi
	return 0
}
if browser chrome-json 0 $V/fixtures/nested.json main qsort cmp worker_loop io_wait; then
	browser folded 0 $V/fixtures/stacks.folded main qsort cmp init
	browser chrome-json-unterminated 0 $V/fixtures/nested-unterminated.json main qsort cmp io_wait
	browser nameless-end-rejected 1 $V/fixtures/end-without-name.json outer inner
	browser not-a-profile-rejected 1 $V/fixtures/not-a-profile.txt main
	browser missing-name-rejected 1 $V/fixtures/stacks.folded main no_such_function
	# 600 functions: the sandwich table shows ~30 rows at a time
	python3 -c 'import sys
for i in range(600): sys.stdout.write("main;mid%d;f%04d %d\n" % (i % 7, i, i + 1))' >"$work/many.folded"
	browser many-functions 0 "$work/many.folded" f0000 f0599 f0300 mid6
	node -e '
const { PNG } = require(process.argv[1] + "/node_modules/pngjs");
const p = new PNG({ width: 320, height: 200 }); p.data.fill(255);
require("fs").writeFileSync(process.argv[2], PNG.sync.write(p));' "$top/$V" "$work/white.png"
	if ! node $V/browser-check.js --png-stats "$work/white.png" >/dev/null &&
		node $V/browser-check.js --png-stats "$shots/chrome-json.png" >/dev/null; then
		pass browser/blank-png-rule
	else
		fail browser/blank-png-rule
	fi
fi
finish
