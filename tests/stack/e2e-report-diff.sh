#!/usr/bin/env bash
# tests/stack/e2e-report-diff.sh - ptrace-read -f report --diff OLD NEW
# (docs/stacks.md, "Comparing two runs") judged by uftrace report --diff
# (0.13) of uftrace's own recordings of the same -pg corpus programs
# (tests/corpus/pg_*.c), as tests/stack/e2e-uftrace.sh judges the tree:
# our rings from ptsynth's traces of them under QEMU ($O/corpus/NAME.data,
# made by `make tests`), uftrace's from running them natively. Pairs:
# pgqsort then pgtree and back (two programs: most functions in one run
# only, main in both), and pgqsort against another run of itself
# (pgqsort-stack.data; uftrace: a second recording).
#   rows:     the program's own functions (those uftrace shows without its
#             library calls), in uftrace's order by calls (--sort calls,
#             uftrace -s call): the calls of both runs and their change
#             equal uftrace's
#   presence: a run without the function shows "-" for its times where
#             uftrace does, and the time's change has uftrace's sign
#             (from its colored output: 0.13 inverts the sign of a time's
#             change when it writes no colors)
#   layout:   the header and rule lines are uftrace's, and the calls
#             column and the names sit where uftrace's do, for each
#             --diff-policy (compact, full, percent, full,percent)
#   reports:  every row (library functions, system calls too) holds what
#             -f report of each ring says of that name, with the filters
#             (--sym, --time, --dso, --machine-stack) applied to both rings
#   same-ring: a ring against itself changes nothing
#   sorted:   by the size of the change of --sort's figure (no-abs: by
#             the change), largest first
#   errors:   OLD or NEW missing or not a ring: RING's message, exit 1;
#             --diff with another format, a bad --diff-policy, --by
#             thread: exit 2; -o over OLD refused; -o FILE is stdout's
# SKIP only when uftrace is not installed.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
T=report-diff
rd=$top/$O/bin/ptrace-read
cap=$top/$O/bin/ptrace-capture
fails=0
pass() { echo "PASS: $T/$1"; }
fail() { echo "FAIL: $T/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; fails=$((fails + 1)); }

if ! command -v uftrace >/dev/null; then
	echo "SKIP: $T/all (uftrace not installed: scripts/install-deps test)"
	exit 0
fi
for f in "$rd" "$cap" "$O/corpus/pgqsort.data" "$O/corpus/pgtree.data" "$O/corpus/pgqsort-stack.data"; do
	[ -e "$f" ] || { echo "FAIL: $T/build ($f missing: make tests)"; exit 1; }
done
work=$(mktemp -d /tmp/report-diff.XXXXXX)
trap 'rm -rf "$work"' EXIT

# our rings; uftrace's recordings (the program's own functions: no
# library calls, no schedule events), in $work (gmon.out goes there)
for r in pgqsort pgtree pgqsort-stack; do
	if ! "$cap" -q -i "$O/corpus/$r.data" -o "$work/$r.srb" 2>"$work/err"; then
		echo "FAIL: $T/build (ptrace-capture -i $O/corpus/$r.data: $(head -c 300 "$work/err"))"
		exit 1
	fi
done
for u in pgqsort:qsort1 pgqsort:qsort2 pgtree:tree; do
	p=${u%%:*}
	if ! prog=$(O=$O tests/corpus/corpus.sh bin "$p" 2>"$work/err") ||
		! prog=$(readlink -f "$prog") ||
		! (cd "$work" && uftrace record --no-libcall --no-sched --no-event \
			-d "${u#*:}.uf" "$prog" >/dev/null 2>"$work/err"); then
		echo "FAIL: $T/build (uftrace record $p: $(head -c 300 "$work/err"))"
		exit 1
	fi
done
uft() { (cd "$work" && uftrace "$@" --color=yes) | sed 's/\x1b\[[0-9;]*m//g'; }
# first lines of a difference, on one line
difference() { diff "$1" "$2" | head -${3:-6} | tr '\n' '|' | cut -c1-600; }

# The rows of a full diff (ours or uftrace's; the same fixed columns), in
# order: "NAME<TAB>BASE-CALLS<TAB>NEW-CALLS<TAB>CHANGE<TAB>BASE-TIME<TAB>
# NEW-TIME<TAB>SIGN" (a time "-" or "t", the sign of the total's change),
# with a file of names: only those
full_rows() {
	awk -v keep="${1:-}" '
	BEGIN { if (keep != "") { while ((getline f < keep) > 0) k[f] = 1; cut = 1 } }
	/^#/ { next }
	++h <= 2 { next }
	{
		t = substr($0, 4, 35); c = substr($0, 80, 32); name = substr($0, 115)
		if (cut && !(name in k)) next
		split(c, n, " ")
		d = substr(t, 25, 11); gsub(/ /, "", d)
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, n[1], n[2], n[3],
			substr(t, 1, 10) ~ /-$/ ? "-" : "t", substr(t, 13, 10) ~ /-$/ ? "-" : "t",
			d ~ /^\+/ ? "+" : d ~ /^-/ ? "-" : "0"
	}'
}

# rows, presence: uftrace's diff of its recordings UA, UB; ours of rings
# RA, RB
check_pair() {
	local tag=$1 ua=$2 ub=$3 ra=$4 rb=$5 n1 n2 nb
	uft report -d "$ua" --diff "$ub" --diff-policy full -s call >"$work/u.full" 2>"$work/err"
	if ! "$rd" -f report --diff "$work/$ra" --diff-policy full --sort calls "$work/$rb" >"$work/o.full" 2>>"$work/err" ||
		[ "$(grep -vc '^#' "$work/u.full")" -lt 4 ]; then
		fail "$tag/run" "$(head -c 400 "$work/err")"
		return
	fi
	full_rows <"$work/u.full" >"$work/u.rows"
	cut -f1 "$work/u.rows" >"$work/names"
	full_rows "$work/names" <"$work/o.full" >"$work/o.rows"
	n1=$(awk -F'\t' '$3 == 0' "$work/u.rows" | wc -l)
	n2=$(awk -F'\t' '$2 == 0' "$work/u.rows" | wc -l)
	nb=$(awk -F'\t' '$2 && $3' "$work/u.rows" | wc -l)
	if cmp -s <(cut -f1-4 "$work/u.rows") <(cut -f1-4 "$work/o.rows"); then
		pass "$tag/rows ($(wc -l <"$work/u.rows") functions, $n1 only in the base, $n2 only in the new run, $nb in both: calls and changes as uftrace's, in its order)"
	else
		fail "$tag/rows" "uftrace | ours: $(difference <(cut -f1-4 "$work/u.rows") <(cut -f1-4 "$work/o.rows"))"
	fi
	# the sign of a time's change only where one run lacks the function
	# (the two runs' times are QEMU's and the machine's)
	presence() { awk -F'\t' -v OFS='\t' '{ if ($2 && $3) $7 = "."; print $1, $5, $6, $7 }' "$1"; }
	if cmp -s <(presence "$work/u.rows") <(presence "$work/o.rows"); then
		pass "$tag/presence (\"-\" for a run without the function, and the sign of its change, as uftrace's)"
	else
		fail "$tag/presence" "uftrace | ours: $(difference <(presence "$work/u.rows") <(presence "$work/o.rows"))"
	fi
}
check_pair qsort-tree qsort1.uf tree.uf pgqsort.srb pgtree.srb
cp "$work/names" "$work/names.qt"
check_pair tree-qsort tree.uf qsort1.uf pgtree.srb pgqsort.srb
check_pair qsort-qsort qsort1.uf qsort2.uf pgqsort.srb pgqsort-stack.srb

# layout: the header and the rule as uftrace's; the calls column (from
# the end of the rule's third column back) and the names where uftrace
# has them
for pol in compact full percent full,percent; do
	uft report -d qsort1.uf --diff tree.uf --diff-policy "$pol" -s call >"$work/u.lay" 2>"$work/err"
	"$rd" -f report --diff "$work/pgqsort.srb" --diff-policy "$pol" --sort calls "$work/pgtree.srb" >"$work/o.lay" 2>>"$work/err"
	grep -v '^#' "$work/u.lay" | head -2 >"$work/u.head"
	grep -v '^#' "$work/o.lay" | head -2 >"$work/o.head"
	cols() {
		awk -v keep="$work/names.qt" '
		BEGIN { while ((getline f < keep) > 0) k[f] = 1 }
		/^#/ { next }
		++h == 1 { at = index($0, "Function"); next }
		h == 2 { n = split($0, r, /   /); e = at - 4; w = length(r[n - 1]); next }
		{ name = substr($0, at); if (name in k) print name "\t" substr($0, e - w + 1, w) }' "$1"
	}
	if ! cmp -s "$work/u.head" "$work/o.head"; then
		fail "layout/$pol" "uftrace | ours: $(difference "$work/u.head" "$work/o.head")"
	elif cmp -s <(cols "$work/u.lay") <(cols "$work/o.lay") && [ ! -s "$work/err" ] &&
		[ "$(cols "$work/o.lay" | wc -l)" -gt 5 ]; then
		pass "layout/$pol (uftrace's header and rule; its calls column and names on $(cols "$work/o.lay" | wc -l) rows)"
	else
		fail "layout/$pol" "$(head -c 300 "$work/err")" "uftrace | ours: $(difference <(cols "$work/u.lay") <(cols "$work/o.lay"))"
	fi
done

# reports: each row of our full diff is -f report's of that name in each
# ring (calls summed over same-named rows, times where one row has it;
# "-" for none or 0), filters on both rings
report_of() {
	"$rd" -f report "$@" | awk '
	NR == 1 { at = index($0, "Function"); next }
	NR == 2 { next }
	{
		n = substr($0, at); c[n] += substr($0, 27, 10); k[n]++
		t[n] = substr($0, 1, 12); s[n] = substr($0, 13, 12)
	}
	END {
		for (n in c) {
			tt = t[n]; ss = s[n]; sub(/^ +/, "", tt); sub(/^ +/, "", ss)
			if (k[n] > 1) tt = ss = "*"
			if (tt == "0.000 us") tt = "-"
			if (ss == "0.000 us") ss = "-"
			printf "%s\t%d\t%s\t%s\n", n, c[n], tt, ss
		}
	}'
}
for f in "" "--sym main" "--time 20%-70%" "--dso libc.so.6" "--machine-stack" "--no-sym mcount,_mcount"; do
	tag=${f:-none}
	# shellcheck disable=SC2086
	if ! report_of $f "$work/pgqsort.srb" >"$work/ra" 2>"$work/err" ||
		! report_of $f "$work/pgtree.srb" >"$work/rb" 2>>"$work/err" ||
		! "$rd" -f report $f --diff "$work/pgqsort.srb" --diff-policy full "$work/pgtree.srb" >"$work/d" 2>>"$work/err"; then
		fail "reports/$tag" "$(head -c 400 "$work/err")"
		continue
	fi
	# ours from the diff: NAME, base calls, time, self; the new run's
	awk '/^#/ { next } ++h <= 2 { next }
	{
		name = substr($0, 115); split(substr($0, 80, 32), n, " ")
		bt = substr($0, 4, 10); nt = substr($0, 16, 10); bs = substr($0, 42, 10); ns = substr($0, 54, 10)
		gsub(/^ +/, "", bt); gsub(/^ +/, "", nt); gsub(/^ +/, "", bs); gsub(/^ +/, "", ns)
		printf "%s\t%d\t%s\t%s\t%d\t%s\t%s\n", name, n[1], bt, bs, n[2], nt, ns
	}' "$work/d" | LC_ALL=C sort >"$work/dd"
	LC_ALL=C join -t"$(printf '\t')" -a1 -a2 -e 0 -o 0,1.2,1.3,1.4,2.2,2.3,2.4 \
		<(LC_ALL=C sort "$work/ra") <(LC_ALL=C sort "$work/rb") |
		awk -F'\t' -v OFS='\t' '{ for (i = 3; i <= 7; i++) if (i != 5 && $i == "0") $i = "-"; print }' >"$work/jj"
	# a "*" (a name on two rows) matches any time
	bad=$(awk -F'\t' 'NR == FNR { w[$1] = $0; next }
		{
			if (!($1 in w)) { print "not in the reports: " $1; next }
			split(w[$1], x, "\t")
			for (i = 2; i <= 7; i++) if (x[i] != $i && x[i] != "*") { print $0 " | reports: " w[$1]; break }
			delete w[$1]
		}
		END { for (n in w) print "not in the diff: " n }' "$work/jj" "$work/dd" | head -4 | tr '\n' '|')
	nchg=$(awk -F'\t' '$2 && $5 && $2 != $5' "$work/dd" | wc -l)
	if [ -z "$bad" ] && [ -s "$work/dd" ] && [ ! -s "$work/err" ]; then
		pass "reports/$tag ($(wc -l <"$work/dd") rows as -f report gives them, $nchg with calls in both runs that differ)"
	else
		fail "reports/$tag" "${bad:-$(head -c 300 "$work/err")}"
	fi
done

# a ring against itself: nothing changed
"$rd" -f report --diff "$work/pgqsort.srb" "$work/pgqsort.srb" >"$work/same" 2>"$work/err"
rc=$?
bad=$(awk '/^#/ { next } ++h <= 2 { next }
	{ n++ } substr($0, 1, 42) !~ /^ +0 us +0 us +\+0$/ { print; exit }
	END { if (n < 100) print "only " n " rows" }' "$work/same")
if [ $rc = 0 ] && [ -z "$bad" ] && [ ! -s "$work/err" ]; then
	pass "same-ring (every row 0 us, 0 us, +0: $(grep -vc '^#' "$work/same") lines)"
else
	fail same-ring "exit $rc: ${bad:-$(head -c 300 "$work/err")}"
fi

# sorted: by the size of the change of the figure sorted by, largest
# first; no-abs: by the change
for s in total self calls; do
	for pol in abs no-abs; do
		"$rd" -f report --diff "$work/pgqsort.srb" --sort $s --diff-policy $pol "$work/pgtree.srb" >"$work/s" 2>"$work/err"
		bad=$(awk -v key=$s -v pol=$pol '
		function ns(f, x) { if (f ~ /^ *0 us$/) return 0; split(f, x, " ")
			return x[2] == "s" ? x[1] * 1e9 : x[2] == "ms" ? x[1] * 1e6 : x[1] * 1e3 }
		/^#/ { next } ++h <= 2 { next }
		{
			v = key == "total" ? ns(substr($0, 4, 11)) : key == "self" ? ns(substr($0, 18, 11)) : substr($0, 32, 11) + 0
			if (pol == "abs" && v < 0) v = -v
			if (n++ && v > last + 0.5) { print NR ": " $0; exit }
			last = v
		}
		END { if (n < 20) print "only " n " rows" }' "$work/s")
		if [ -z "$bad" ] && [ ! -s "$work/err" ]; then
			pass "sorted/$s-$pol ($(grep -vc '^#' "$work/s") lines)"
		else
			fail "sorted/$s-$pol" "${bad:-$(head -c 300 "$work/err")}"
		fi
	done
done

# errors: OLD or NEW as RING would be, with RING's message
echo "not a ring" >"$work/text"
for bad in "$work/missing.srb" "$work/text" "$work"; do
	"$rd" -f report "$bad" >/dev/null 2>"$work/want"
	want=$?
	"$rd" -f report --diff "$bad" "$work/pgtree.srb" >"$work/out" 2>"$work/got"
	rc1=$?
	"$rd" -f report --diff "$work/pgtree.srb" "$bad" >>"$work/out" 2>"$work/got2"
	rc2=$?
	if [ "$want" = 1 ] && [ "$rc1" = 1 ] && [ "$rc2" = 1 ] && [ ! -s "$work/out" ] &&
		cmp -s "$work/want" "$work/got" && cmp -s "$work/want" "$work/got2"; then
		pass "errors/ring-$(basename "$bad") (exit 1 as OLD and as NEW: $(head -c 160 "$work/want"))"
	else
		fail "errors/ring-$(basename "$bad")" "exit $rc1 (OLD), $rc2 (NEW), want $want" "$(cat "$work/want" "$work/got" "$work/got2" | head -c 600)"
	fi
done
usage() {
	local name=$1 text=$2
	shift 2
	"$rd" "$@" >"$work/out" 2>"$work/got"
	local rc=$?
	if [ $rc = 2 ] && grep -qF -- "$text" "$work/got" && [ ! -s "$work/out" ]; then
		pass "errors/$name (exit 2: $(head -1 "$work/got"))"
	else
		fail "errors/$name" "exit $rc, want 2 and '$text'" "$(head -c 400 "$work/got")"
	fi
}
a=$work/pgqsort.srb b=$work/pgtree.srb
usage format-tree "--diff compares the reports of two rings: give -f report" -f tree --diff "$a" "$b"
usage format-none-given "give -f report" --diff "$a" "$b"
usage format-jsonl "give -f report" -f jsonl --diff "$a" "$b"
usage policy-bad "--diff-policy: 'fast' is none of" -f report --diff "$a" --diff-policy full,fast "$b"
usage policy-alone "--diff-policy goes with --diff" -f report --diff-policy full "$b"
usage by-thread "compare --by function or dso" -f report --by thread --diff "$a" "$b"
usage no-ring "which ring?" -f report --diff "$a"
cp "$a" "$work/keep.srb"
"$rd" -f report --diff "$a" -o "$a" "$b" 2>"$work/got"
rc=$?
if [ $rc = 1 ] && cmp -s "$a" "$work/keep.srb" && grep -qF "the output is the ring being read" "$work/got"; then
	pass "errors/output-over-old (exit 1, OLD kept)"
else
	fail "errors/output-over-old" "exit $rc" "$(head -c 300 "$work/got")"
fi
"$rd" -f report --diff "$a" "$b" >"$work/stdout" 2>/dev/null
"$rd" -f report --diff "$a" -o "$work/file" "$b" >"$work/none" 2>&1
rc=$?
if [ $rc = 0 ] && [ ! -s "$work/none" ] && cmp -s "$work/stdout" "$work/file" && [ -s "$work/file" ]; then
	pass "output-file (-o FILE holds what standard output shows)"
else
	fail "output-file" "exit $rc" "$(head -c 300 "$work/none")"
fi
[ "$fails" -eq 0 ]
