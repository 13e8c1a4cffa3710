#!/usr/bin/env bash
# tests/stack/e2e-inline.sh - ptrace-read --inline (inlined functions as
# frames, docs/stacks.md "Inlined frames") judged by tools we did not
# write:
#   - addr2line: on the inline corpus program (tests/corpus/inline.c,
#     -O2 -g), every call and tail call inside the program is a frame of
#     -f tree whose inlined frames between it and its caller are the
#     chain `addr2line -a -i -f -e BIN ADDR` gives at the call's address,
#     names and order, call by call; -f folded's chains are those chains;
#     every inlined frame of the program (leaves too) with the inlined
#     frames around it begins the chain at the address that opened it
#     (-f chrome's category names it) (tests/stack/inlinecheck.py);
#   - the frames that are not inline stay as they were: -f folded with the
#     `_[i]` frames taken out (their time given back to the frame under
#     them) equals -f folded without --inline, byte for byte, on the
#     inline program and the -pg programs;
#   - the viewer formats: -f fxt (fxtcheck.py) and -f chrome
#     (chromeslices.py) are valid, with as many frames marked inlined as
#     the tree; uftrace replay reads -f uftrace and shows them by name;
#   - uftrace: on the -pg programs (where uftrace sees every function),
#     -f tree --inline cut down to the program's functions equals
#     `uftrace replay`'s tree (as tests/stack/e2e-uftrace.sh judges -f
#     tree without --inline).
T=inline
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top" || exit 1

for tool in addr2line nm python3; do
	if ! command -v "$tool" >/dev/null; then
		skip all "$tool not installed: scripts/install-deps test"
		finish
	fi
done

# folded stacks without the inlined frames, summed per stack
uninline() {
	awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); s = ""
		for (i = 1; i <= k; i++) { sub(/ $/, "", f[i]); if (f[i] !~ /_\[i\]$/) s = s (s == "" ? "" : ";") f[i] }
		sum[s] += n }
		END { for (s in sum) print s, sum[s] }' | LC_ALL=C sort
}

if ! prog=$(tests/corpus/corpus.sh bin inline 2>"$work/err"); then
	fail inline/addr2line "corpus.sh bin inline: $(head -c 300 "$work/err")"
elif [ ! -e "$O/corpus/inline.data" ]; then
	fail inline/addr2line "no $O/corpus/inline.data: run make tests"
else
	"$bin/ptrace-capture" -q -i "$O/corpus/inline.data" -o "$work/inline.srb" 2>"$work/err" &&
		"$bin/ptrace-read" -f text "$work/inline.srb" >"$work/text" 2>>"$work/err" &&
		"$bin/ptrace-read" --inline -f tree "$work/inline.srb" >"$work/tree" 2>>"$work/err" &&
		"$bin/ptrace-read" --inline -f folded "$work/inline.srb" >"$work/folded" 2>>"$work/err" &&
		"$bin/ptrace-read" -f folded "$work/inline.srb" >"$work/folded0" 2>>"$work/err" &&
		"$bin/ptrace-read" --inline -f chrome -o "$work/i.json" "$work/inline.srb" 2>>"$work/err" ||
		fail inline/read "$(head -c 300 "$work/err")"
	if out=$(python3 tests/stack/inlinecheck.py "$prog" "$work/text" "$work/tree" "$work/folded" "$work/i.json" 2>&1); then
		pass "inline/addr2line ($out)"
	else
		fail inline/addr2line "$out"
	fi
	n=$(grep -c ' (inlined)()' "$work/tree")
	if [ "$n" -gt 0 ] && cmp -s <(uninline <"$work/folded") <(uninline <"$work/folded0"); then
		pass "inline/others-unchanged ($n inlined frames in the tree; folded without them: the same $(wc -l <"$work/folded0") stacks and times)"
	else
		fail inline/others-unchanged "$n inlined frames; $(diff <(uninline <"$work/folded") <(uninline <"$work/folded0") | head -4 | tr '\n' ' ')"
	fi
fi

# the viewer formats: fxtcheck.py (strict, from the FXT specification)
# and chromeslices.py (the Trace Event Format's nesting) accept them, and
# each has as many frames marked inlined as the tree; uftrace replay
# shows them by name (its .dat has no mark)
if [ -e "$work/inline.srb" ] && [ -s "$work/tree" ]; then
	V=tests/view
	n=$(grep -c ' (inlined)()' "$work/tree")
	if "$bin/ptrace-read" --inline -f fxt -o "$work/i.fxt" "$work/inline.srb" 2>"$work/err" &&
		python3 "$V/fxtcheck.py" "$work/i.fxt" >"$work/fchk" 2>&1; then
		nf=$(python3 "$V/fxtcheck.py" --dump "$work/i.fxt" 2>/dev/null | awk '$5 == "inlined" && $4 == "B"' | wc -l)
		check "inline/fxt (fxtcheck.py accepts it; $nf frames of category inlined, the tree $n)" [ "$nf" = "$n" ]
	else
		fail inline/fxt "$(tail -c 300 "$work/fchk" "$work/err" 2>/dev/null)"
	fi
	if "$bin/ptrace-read" --inline -f chrome -o "$work/i.json" "$work/inline.srb" 2>"$work/err" &&
		python3 "$V/chromeslices.py" "$work/i.json" >/dev/null 2>"$work/cerr"; then
		nc=$(python3 -c 'import json, sys
print(sum(1 for e in json.load(open(sys.argv[1])) if ",inlined," in e.get("cat", "")))' "$work/i.json")
		check "inline/chrome (chromeslices.py accepts it; $nc slices of category inlined, the tree $n)" [ "$nc" = "$n" ]
	else
		fail inline/chrome "$(tail -c 300 "$work/cerr" "$work/err" 2>/dev/null)"
	fi
	# --sym matches an inlined function by its name: its frames and
	# their callees (the filter keeps no table by its large ids)
	if "$bin/ptrace-read" --inline -f tree --sym clamp "$work/inline.srb" >"$work/sym" 2>"$work/err"; then
		a=$(grep -c ' clamp (inlined)()' "$work/tree")
		b=$(grep -c '| clamp (inlined)() {' "$work/sym")
		o=$(grep -c '|   odd_path();' "$work/sym")
		check "inline/sym (--sym clamp: $b clamp (inlined) frames at the top, as in the tree, $o calls under them)" \
			test "$a" -gt 0 -a "$a" = "$b" -a "$o" = "$b"
	else
		fail inline/sym "$(tail -c 300 "$work/err")"
	fi
	if ! command -v uftrace >/dev/null; then
		skip inline/uftrace "uftrace not installed: scripts/install-deps test"
	elif "$bin/ptrace-read" --inline -f uftrace -o "$work/uft" "$work/inline.srb" 2>"$work/err" &&
		uftrace replay -d "$work/uft" >"$work/ur" 2>"$work/err"; then
		a=$(grep -c ' clamp (inlined)()' "$work/tree")
		b=$(grep -c ' clamp()' "$work/ur")
		check "inline/uftrace (uftrace replay reads it: clamp $b times, the tree's clamp (inlined) $a)" test "$a" -gt 0 -a "$a" = "$b"
	else
		fail inline/uftrace "$(tail -c 300 "$work/err")"
	fi
fi

# own_tree: a -f tree on stdin cut down to the functions in $work/own,
# "DEPTH NAME" (tests/stack/e2e-uftrace.sh's)
own_tree() {
	awk -v own="$work/own" '
	BEGIN { while ((getline f < own) > 0) keep[f] = 1 }
	/^#/ { next }
	{
		if (!match($0, /\] \| /)) next
		body = substr($0, RSTART + RLENGTH); sub(/^ +/, "", body)
		if (body ~ /^} \/\* /) {
			name = body; sub(/^} \/\* /, "", name); sub(/ \*\/.*$/, "", name)
			if (name in keep) d--
			next
		}
		open_ = body ~ /\(\) \{/
		name = body; sub(/\(\).*$/, "", name)
		if (!(name in keep)) next
		print d + 0 " " name
		if (open_) d++
	}'
}
have_uftrace=1
command -v uftrace >/dev/null || have_uftrace=0
for p in pgqsort pgtree; do
	data=$O/corpus/$p.data
	if [ ! -e "$data" ] || ! prog=$(tests/corpus/corpus.sh bin "$p" 2>"$work/err"); then
		fail "$p/others-unchanged" "no $data or program: run make tests"
		continue
	fi
	if ! "$bin/ptrace-capture" -q -i "$data" -o "$work/$p.srb" 2>"$work/err" ||
		! "$bin/ptrace-read" --inline -f folded "$work/$p.srb" >"$work/f1" 2>>"$work/err" ||
		! "$bin/ptrace-read" -f folded "$work/$p.srb" >"$work/f0" 2>>"$work/err" ||
		! "$bin/ptrace-read" --inline -f tree "$work/$p.srb" >"$work/tree" 2>>"$work/err"; then
		fail "$p/others-unchanged" "$(head -c 300 "$work/err")"
		continue
	fi
	n=$(grep -c ' (inlined)()' "$work/tree")
	check "$p/others-unchanged ($n inlined frames; folded without them: the same $(wc -l <"$work/f0") stacks and times)" \
		cmp -s <(uninline <"$work/f1") <(uninline <"$work/f0")
	if [ $have_uftrace = 0 ]; then
		skip "$p/tree-vs-uftrace" "uftrace not installed: scripts/install-deps test"
		continue
	fi
	if ! tests/stack/uftrace-tree.sh "$prog" >"$work/uf" 2>"$work/err"; then
		fail "$p/tree-vs-uftrace" "uftrace-tree: $(tail -c 300 "$work/err")"
		continue
	fi
	awk '!/^#/ { print $2 }' "$work/uf" | sort -u >"$work/own"
	own_tree <"$work/tree" >"$work/ours"
	if [ "$(wc -l <"$work/ours")" -gt 50 ] && cmp -s <(grep -v '^#' "$work/uf") "$work/ours"; then
		pass "$p/tree-vs-uftrace (--inline, cut to the program's functions: the same $(wc -l <"$work/ours") entries, depths and order as uftrace replay)"
	else
		fail "$p/tree-vs-uftrace" "uftrace $(grep -vc '^#' "$work/uf"), ours $(wc -l <"$work/ours"): $(diff <(grep -v '^#' "$work/uf") "$work/ours" | head -4 | tr '\n' ' ')"
	fi
done
finish
