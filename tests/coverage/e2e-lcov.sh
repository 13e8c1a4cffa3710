#!/usr/bin/env bash
# tests/coverage/e2e-lcov.sh - line coverage from a trace (ptrace-capture
# --coverage, ptrace-read -f lcov and -f coverage), judged by gcov, lcov
# and genhtml:
#   - the inline corpus program (tests/corpus/inline.c, gcc -O2 -g) built
#     the same way with --coverage and run natively: the lines gcov counts
#     as executed are ours for the program's own source, and each
#     function's FNDA is gcov's count of its entries; ours names no line
#     as not run that gcov ran. Named differences, by the line table's
#     nature: gcov counts a function's entry on its declaration line and
#     never its braces; DWARF gives the prologue the line of `{` and the
#     epilogue that of `}`. So ours without brace-only lines, plus the
#     declaration lines of the functions entered (FNDA > 0), is compared.
#     Line 52 (puts("never")) is code gcc -O2 folds away without
#     --coverage (it proves total < 1000): in no line table of ours, not
#     run in gcov's;
#   - the branch records of the program's source (BRDA) are those its
#     ground truth gives (tests/coverage/brtruth.py: objdump's conditional
#     branches, perf's mapping, the truth's straight runs, addr2line's
#     lines), for inline and its -pg build;
#   - genhtml renders the program's record, with --branch-coverage too:
#     exit 0, nothing on stderr;
#     lcov --summary reads the whole tracefile (every object) without a
#     word on stderr;
#   - the same ranges whatever the decode: -j 1 and -j 4, PSBs every 256
#     bytes (segments decoded apart), a per-CPU recording: the same
#     tracefile, for inline and for threads;
#   - a ring decoded without --coverage: -f lcov says so, exit 1; a
#     filter with it is a usage error (exit 2); an
#     object without debug information (the static corpus program, no -g)
#     is named once on stderr and left out;
#   - without --coverage the ring is what it was (the golden manifest
#     covers every view; here: -f text is the same with and without).
T=e2e-lcov
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
PR=$top/$O/bin/ptrace-read
CAP=$top/$O/bin/ptrace-capture
R=/dev/shm/e2e_lcov_$$
on_exit() { rm -f "$R"_*; }

for b in "$PR" "$CAP"; do
	[ -x "$b" ] || { fail build "$b is missing: run make"; exit 1; }
done

# trace NAME VARIANT: the corpus trace's perf.data, or "" after a fail
trace() {
	local dir
	if ! dir=$(tests/corpus/corpus.sh trace "$1" "$2" 2>"$work/err"); then
		fail "trace/$1-$2" "$(tail -n 5 "$work/err")"
		return 1
	fi
	echo "$dir/trace.data"
}

# lcov_of NAME DATA ARGS...: decode DATA with --coverage ARGS into ring
# $R_NAME, its tracefile $work/NAME.info and (unless NOSUM=1) summary
# $work/NAME.cov
lcov_of() {
	local name=$1 data=$2
	shift 2
	rm -f "${R}_$name"
	if ! "$CAP" -q -i "$data" --coverage "$@" -o "${R}_$name" 2>"$work/$name.cerr"; then
		fail "$name/capture" "$(head -c 600 "$work/$name.cerr")"
		return 1
	fi
	if ! "$PR" -f lcov -o "$work/$name.info" "${R}_$name" 2>"$work/$name.err" ||
		! { [ "${NOSUM:-}" = 1 ] || "$PR" -f coverage "${R}_$name"; } >"$work/$name.cov" 2>"$work/$name.err2"; then
		fail "$name/read" "$(head -c 600 "$work/$name.err" "$work/$name.err2")"
		return 1
	fi
	return 0
}

inline=$(trace inline default) || exit 1
lcov_of inline "$inline" || exit 1
src=$top/tests/corpus/inline.c
# the program's record (its SF is the source's absolute path: the unit's
# directory joined, that of the clone that built the corpus program,
# which a build directory copied from another clone keeps: named here as
# this clone's, for genhtml to read)
awk -v src="$src" '/^SF:/ { on = ($0 ~ /\/tests\/corpus\/inline\.c$/); if (on) { print "TN:"; print "SF:" src; next } }
	on { print } /^end_of_record/ { on = 0 }' "$work/inline.info" >"$work/prog.info"
if ! grep -q "^DA:" "$work/prog.info"; then
	fail inline/record "no record of $src in the tracefile:" "$(grep '^SF:' "$work/inline.info" | head -5)"
fi

# --- gcov: the same source, the same flags, --coverage, run natively ---
if ! command -v gcc >/dev/null || ! command -v gcov >/dev/null; then
	skip gcov "gcc and gcov (Debian gcc) are needed"
else
	mkdir -p "$work/gcov"
	cp "$src" "$work/gcov/inline.c"
	if ! (cd "$work/gcov" && gcc -O2 -g --coverage -o inl inline.c && ./inl >/dev/null &&
		gcov -o . inl-inline.gcda >/dev/null 2>&1) || [ ! -f "$work/gcov/inline.c.gcov" ]; then
		fail gcov/build "gcc --coverage or gcov failed"
	else
		# executed: count > 0; not executed: #####
		awk -F: '{ c = $1; gsub(/ /, "", c); l = $2 + 0 } c ~ /^[0-9]+$/ && c > 0 && l > 0 { print l }' \
			"$work/gcov/inline.c.gcov" | sort -n >"$work/gcov.ran"
		awk -F: '{ c = $1; gsub(/ /, "", c) } c == "#####" { print $2 + 0 }' \
			"$work/gcov/inline.c.gcov" | sort -n >"$work/gcov.not"
		# ours: DA lines that ran, but brace-only lines, and the
		# declaration lines of the functions entered
		awk -F'[:,]' -v src="$src" '
			FNR == NR { brace[FNR] = ($0 ~ /^[ \t]*[{}][ \t]*$/); next }
			/^FN:/ { decl[$3] = $2 }
			/^FNDA:/ { if ($2 > 0) print decl[$3] }
			/^DA:/ { if ($3 > 0 && !brace[$2]) print $2 }' \
			"$src" "$work/prog.info" | sort -nu >"$work/ours.ran"
		if cmp -s "$work/ours.ran" "$work/gcov.ran"; then
			pass "gcov/executed-lines ($(wc -l <"$work/ours.ran") lines, as gcov counts them)"
		else
			fail gcov/executed-lines "ours (<) and gcov's (>) differ:" \
				"$(diff "$work/ours.ran" "$work/gcov.ran" | head -20)"
		fi
		# no line ours calls not run that gcov ran
		awk -F'[:,]' '/^DA:/ && $3 == 0 { print $2 }' "$work/prog.info" | sort -n >"$work/ours.not"
		both=$(comm -12 "$work/ours.not" "$work/gcov.ran" | tr '\n' ' ')
		if [ -z "$both" ]; then
			pass "gcov/not-run ($(wc -l <"$work/ours.not") lines not run; gcov's: $(tr '\n' ' ' <"$work/gcov.not"))"
		else
			fail gcov/not-run "lines ours calls not run that gcov ran: $both"
		fi
		# FNDA: gcov's count on each function's declaration line
		bad=$(awk -F'[:,]' '
			FNR == NR { c = $1; gsub(/ /, "", c); cnt[$2 + 0] = c; next }
			/^FN:/ { decl[$3] = $2 }
			/^FNDA:/ { n++; if (cnt[decl[$3]] != $2) printf "%s: ours %s, gcov %s; ", $3, $2, cnt[decl[$3]] }
			END { if (!n) print "no FNDA records" }' \
			"$work/gcov/inline.c.gcov" "$work/prog.info")
		if [ -z "$bad" ]; then
			pass "gcov/function-entries ($(grep -c '^FNDA:' "$work/prog.info") functions, FNDA = gcov's calls)"
		else
			fail gcov/function-entries "$bad"
		fi
	fi
fi

# --- branch records: those the ground truth gives (brtruth.py: objdump's
# conditional branches, perf's mapping, the truth's runs, addr2line) ---
# brjudge NAME: NAME's trace decoded with --coverage; its source's BRDA
# lines against the truth's
brjudge() {
	local name=$1 data dir bin
	data=$(trace "$name" default) || return
	dir=$(dirname "$data")
	bin=$(tests/corpus/corpus.sh bin "$name") || { fail "branches/$name" "no program"; return; }
	[ "$name" = inline ] || lcov_of "$name" "$data" || return
	if ! python3 tests/coverage/brtruth.py "$bin" "$data" "$dir/trace.truth" inline.c \
		>"$work/$name.brtruth" 2>"$work/$name.brerr"; then
		fail "branches/$name" "$(head -c 600 "$work/$name.brerr")"
		return
	fi
	awk '/^SF:.*\/tests\/corpus\/inline\.c$/ { on = 1 } on && /^BRDA:/ { print }
		/^end_of_record/ { on = 0 }' "$work/$name.info" >"$work/$name.brours"
	if [ -s "$work/$name.brtruth" ] && cmp -s "$work/$name.brtruth" "$work/$name.brours"; then
		pass "branches/$name ($(wc -l <"$work/$name.brours") branch records, $(grep -c ',1$' "$work/$name.brours") ways taken: the truth's)"
	else
		fail "branches/$name" "ours (>) and the truth's (<) differ:" \
			"$(diff "$work/$name.brtruth" "$work/$name.brours" | head -20)"
	fi
}
if ! command -v objdump >/dev/null || ! command -v addr2line >/dev/null ||
	! command -v perf >/dev/null; then
	skip branches "objdump, addr2line (binutils) and perf are needed"
else
	brjudge inline
	brjudge pginline
fi

# --- genhtml and lcov read what we wrote ---
if ! command -v genhtml >/dev/null || ! command -v lcov >/dev/null; then
	skip genhtml "genhtml and lcov (Debian lcov) are needed"
else
	if genhtml -q -o "$work/html" "$work/prog.info" >"$work/genhtml.out" 2>"$work/genhtml.err" &&
		[ ! -s "$work/genhtml.err" ] && [ -f "$work/html/index.html" ]; then
		pass "genhtml/renders (exit 0, no warning)"
	else
		fail genhtml/renders "$(head -c 800 "$work/genhtml.err")"
	fi
	if genhtml -q --branch-coverage -o "$work/htmlb" "$work/prog.info" >"$work/genhtmlb.out" 2>"$work/genhtmlb.err" &&
		[ ! -s "$work/genhtmlb.err" ] && grep -q 'Branches' "$work/htmlb/index.html"; then
		pass "genhtml/branches (--branch-coverage: exit 0, no warning)"
	else
		fail genhtml/branches "$(head -c 800 "$work/genhtmlb.err")"
	fi
	# docs/viewing.md's picture: LCOV_DOC_SHOT=docs/viewing-lcov.png
	if [ -n "${LCOV_DOC_SHOT:-}" ] && command -v chromium >/dev/null; then
		timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--window-size=900,1100 --screenshot="$work/shot.png" \
			"file://$work/htmlb/corpus/inline.c.gcov.html" >/dev/null 2>&1
		[ -s "$work/shot.png" ] && cp "$work/shot.png" "$LCOV_DOC_SHOT"
	fi
	if lcov --summary "$work/inline.info" >"$work/summary.out" 2>"$work/summary.err" &&
		[ ! -s "$work/summary.err" ] && grep -q "lines" "$work/summary.out"; then
		pass "lcov/summary ($(grep 'lines' "$work/summary.out" | head -1 | sed 's/^ *//'))"
	else
		fail lcov/summary "$(head -c 800 "$work/summary.err")"
	fi
fi

# --- -f coverage: the per-function summary agrees with the tracefile ---
if grep -q "^Function 'main' (.*/tests/corpus/inline.c:48, entered 1)" "$work/inline.cov" &&
	grep -A1 "^Function 'leaf'" "$work/inline.cov" | grep -q "^Lines executed:100.00% of "; then
	pass "coverage/summary (main entered once, leaf's lines all ran)"
else
	fail coverage/summary "$(grep -A1 "^Function" "$work/inline.cov" | head -20)"
fi

# --- the same ranges, however the decode runs ---
# (inline's variants ran the same instructions; threads' are recordings of
# their own, whose threads QEMU schedules otherwise, the lazy binding's
# calls with them (docs/testing.md): for threads, -j 4 against -j 1 of
# each recording)
for prog in inline threads; do
	base=
	for v in default psb256 percpu; do
		[ "$prog" = threads ] && base=
		data=$(trace "$prog" "$v") || continue
		for j in 1 4; do
			name=$prog-$v-j$j
			NOSUM=1 lcov_of "$name" "$data" -j "$j" || continue
			if [ -z "$base" ]; then
				base=$name
				continue
			fi
			if cmp -s "$work/$base.info" "$work/$name.info"; then
				pass "same/$name (as $base: $(grep -c '^DA:.*,1$' "$work/$name.info") lines ran)"
			else
				fail "same/$name" "differs from $base:" \
					"$(diff "$work/$base.info" "$work/$name.info" | head -10)"
			fi
		done
	done
done

# --- no coverage in the ring; no debug information ---
rm -f "${R}_plain"
"$CAP" -q -i "$inline" -o "${R}_plain" 2>"$work/plain.cerr"
"$PR" -f lcov "${R}_plain" >"$work/plain.out" 2>"$work/plain.err"
rc=$?
if [ $rc -eq 1 ] && [ ! -s "$work/plain.out" ] && grep -q "no coverage: decode with ptrace-capture --coverage" "$work/plain.err"; then
	pass "no-coverage (exit 1: $(head -1 "$work/plain.err"))"
else
	fail no-coverage "exit $rc:" "$(head -c 400 "$work/plain.err")"
fi
"$PR" -f lcov --tid 1 "${R}_inline" >/dev/null 2>"$work/usage.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "read the whole ring once" "$work/usage.err"; then
	pass "usage (a filter with -f lcov: exit 2)"
else
	fail usage "exit $rc:" "$(head -c 400 "$work/usage.err")"
fi
if cmp -s <("$PR" "${R}_plain" 2>&1) <("$PR" "${R}_inline" 2>&1); then
	pass "events-unchanged (-f text with and without --coverage)"
else
	fail events-unchanged "--coverage changed the events"
fi
if static=$(trace static default) && lcov_of static "$static"; then
	bin=$(tests/corpus/corpus.sh bin static)
	n=$(grep -c "$(basename "$bin").*no line table" "$work/static.err")
	if [ "$n" = 1 ] && ! grep -q "^SF:" "$work/static.info"; then
		pass "no-debuginfo (named once, left out: $(grep -m1 'no line table' "$work/static.err"))"
	else
		fail no-debuginfo "named $n times:" "$(head -c 600 "$work/static.err")"
	fi
fi
finish
