#!/usr/bin/env bash
# tests/stack/e2e-uftrace.sh - uftrace, natively, and ptsynth's stack
# truth, under QEMU, give the -pg corpus programs (tests/corpus/pg_*.c)
# the same call tree: tests/stack/uftrace-tree.sh against
# tests/stack/truthtree.py on $O/corpus/NAME-stack.{truth,sideband}
# (linked by `make tests`); and uftrace is the judge of our call tree:
# `ptrace-read -f tree` of the program's trace, cut down to the
# program's own functions, equals `uftrace replay`'s, also with -C and
# -N on both sides. Running under QEMU must not change a
# deterministic program's own call sequence. Also: no run leaves a
# gmon.out (glibc's gcrt writes one at exit) in the source tree.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

pass() { echo "PASS: uftrace/$1"; }
fail() { echo "FAIL: uftrace/$1"; fails=$((fails + 1)); }

if ! command -v uftrace >/dev/null; then
	echo "SKIP: uftrace/all (uftrace not installed: scripts/install-deps test)"
	exit 0
fi
ob=$O; case $ob in /*) ;; *) ob=$top/$O ;; esac
# own_tree: a -f tree on stdin cut down to the functions in $work/own (the
# program's own, those uftrace shows), "DEPTH NAME", depths counted among
# them
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
gmons() { find "$top" -path "$ob" -prune -o -name gmon.out -print | sort; }
before=$(gmons)
for p in pgqsort pgtree; do
	base=$O/corpus/$p-stack
	if ! prog=$(O=$O tests/corpus/corpus.sh bin "$p" 2>"$work/err"); then
		fail "$p (corpus.sh bin: $(head -c 300 "$work/err"))"
		continue
	fi
	if [ ! -e "$base.truth" ]; then
		fail "$p (no $base.truth: run make tests)"
		continue
	fi
	if ! tests/stack/uftrace-tree.sh "$prog" >"$work/uf" 2>"$work/err"; then
		fail "$p/uftrace-tree ($(tail -c 300 "$work/err"))"
		continue
	fi
	if ! python3 tests/stack/truthtree.py "$base.truth" "$base.sideband" >"$work/tt" 2>"$work/err"; then
		fail "$p/truthtree ($(tail -c 300 "$work/err"))"
		continue
	fi
	what=$(awk '/^#/ { nt++; next }
		{ n++; f[$2] = 1; if ($1 > d) d = $1; if ($1 == 0) top_[$2]++ }
		END { for (k in f) nf++; printf "%d thread(s), %d entries of %d functions, depth 0..%d, %s at depth 0 %d time(s)", nt, n, nf, d, "main", top_["main"] }' "$work/uf")
	if [ "$(grep -c '^#' "$work/uf")" = 1 ] && [ "$(grep -vc '^#' "$work/uf")" -gt 50 ] &&
		[ "$(grep -c '^0 ' "$work/uf")" = 1 ] && grep -q '^0 main$' "$work/uf"; then
		pass "$p/uftrace-tree ($what)"
	else
		fail "$p/uftrace-tree ($what; want 1 thread, main alone at depth 0, > 50 entries)"
	fi
	if cmp -s <(grep -v '^#' "$work/uf") <(grep -v '^#' "$work/tt"); then
		pass "$p/uftrace-vs-truth (the same $(grep -vc '^#' "$work/tt") entries and depths)"
	else
		fail "$p/uftrace-vs-truth (uftrace $(grep -vc '^#' "$work/uf"), truth $(grep -vc '^#' "$work/tt") entries; first difference: $(diff <(grep -v '^#' "$work/uf") <(grep -v '^#' "$work/tt") | head -4 | tr '\n' ' '))"
	fi
	# our call tree (ptrace-read -f tree) of the program's default trace,
	# cut down to the functions uftrace shows (the program's own, those
	# that call mcount), depths counted among them
	data=$O/corpus/$p.data
	if ! "$O/bin/ptrace-capture" -q -i "$data" -o "$work/$p.srb" 2>"$work/err" ||
		! "$O/bin/ptrace-read" -f tree "$work/$p.srb" >"$work/tree" 2>>"$work/err"; then
		fail "$p/tree-vs-uftrace (ptrace-capture or ptrace-read: $(head -c 300 "$work/err"))"
		continue
	fi
	awk '!/^#/ { print $2 }' "$work/uf" | sort -u >"$work/own"
	own_tree <"$work/tree" >"$work/ours"
	if [ "$(wc -l <"$work/ours")" -gt 50 ] &&
		cmp -s <(grep -v '^#' "$work/uf") "$work/ours"; then
		pass "$p/tree-vs-uftrace (ptrace-read -f tree cut to the program's functions: the same $(wc -l <"$work/ours") entries, depths and order as uftrace replay)"
	else
		fail "$p/tree-vs-uftrace (uftrace $(grep -vc '^#' "$work/uf"), ours $(wc -l <"$work/ours") entries; first difference: $(diff <(grep -v '^#' "$work/uf") "$work/ours" | head -4 | tr '\n' ' ')"
	fi
	# -C (the callers of a function) and -N (not a function, nor its
	# callees) on uftrace's own recording: its replay with the filter
	# and our -f tree with the same, cut the same way (-D and -t are
	# judged on our export, e2e-uftrace-dir.sh: uftrace's depths here
	# count the program's functions only, and its times are native)
	case $p in pgqsort) filts="-C_cmp_rec -N_cmp_rec" ;; *) filts="-C_square -N_walk" ;; esac
	for f in $filts; do
		f=${f/_/ }
		# shellcheck disable=SC2086
		if UFTRACE_REPLAY_ARGS="$f" tests/stack/uftrace-tree.sh "$prog" >"$work/ufc" 2>"$work/err" &&
			"$O/bin/ptrace-read" -f tree $f "$work/$p.srb" 2>>"$work/err" | own_tree >"$work/oursc" &&
			[ "$(wc -l <"$work/oursc")" -gt 2 ] &&
			cmp -s <(grep -v '^#' "$work/ufc") "$work/oursc"; then
			pass "$p/filter-vs-uftrace ($f: the same $(wc -l <"$work/oursc") entries as uftrace replay $f of its own recording)"
		else
			fail "$p/filter-vs-uftrace ($f: uftrace $(grep -vc '^#' "$work/ufc"), ours $(wc -l <"$work/oursc") entries: $(diff <(grep -v '^#' "$work/ufc") "$work/oursc" | head -4 | tr '\n' ' ') $(head -c 200 "$work/err"))"
		fi
	done
	# the library functions too: uftrace shows the calls through the
	# program's PLT (its default) by the names people type, the
	# function open while it runs (qsort holds cmp_rec). Ours: the tree
	# of the trace decoded with --names plain, cut to the program's own
	# functions and to the frames of uftrace's library functions whose
	# caller is code of the program (nm names it). uftrace names a
	# library function as the program called it (__monstartup), ours
	# by the name people type of its aliases (monstartup): both sides
	# name a libc function by the first of its aliases nm -D lists
	if ! tests/stack/uftrace-tree.sh --libcall "$prog" >"$work/ufl" 2>"$work/err"; then
		fail "$p/libcalls-vs-uftrace (uftrace-tree --libcall: $(tail -c 300 "$work/err"))"
		continue
	fi
	if ! "$O/bin/ptrace-capture" -q --names plain -i "$data" -o "$work/$p-plain.srb" 2>"$work/err" ||
		! "$O/bin/ptrace-read" -f tree "$work/$p-plain.srb" >"$work/treep" 2>>"$work/err"; then
		fail "$p/libcalls-vs-uftrace (ptrace-capture --names plain or ptrace-read: $(head -c 300 "$work/err"))"
		continue
	fi
	nm --defined-only "$prog" | awk '{ print $3 }' | sort -u >"$work/exe"
	libc=$(ldd "$prog" | awk '$1 ~ /^libc\.so/ { print $3 }')
	nm -D --defined-only "$libc" | awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $1, $3 }' |
		sort -k1,1 -k2,2 | awk '$1 != a { a = $1; c = $2 } { print $2, c }' >"$work/alias"
	canon() { awk -v al="$work/alias" 'BEGIN { while ((getline l < al) > 0) { split(l, x, " "); c[x[1]] = x[2] } }
		/^#/ { print; next } { print $1, ($2 in c) ? c[$2] : $2 }'; }
	canon <"$work/ufl" >"$work/uflc"
	mv "$work/uflc" "$work/ufl"
	awk '!/^#/ { print $2 }' "$work/ufl" | sort -u >"$work/libset"
	awk -v own="$work/own" -v lib="$work/libset" -v exe="$work/exe" -v al="$work/alias" '
	BEGIN {
		while ((getline f < own) > 0) mine[f] = 1
		while ((getline f < lib) > 0) shown[f] = 1
		while ((getline f < exe) > 0) prog[f] = 1
		while ((getline l < al) > 0) { split(l, x, " "); c[x[1]] = x[2] }
	}
	/^#/ { next }
	{
		if (!match($0, /\] \| /)) next
		body = substr($0, RSTART + RLENGTH); sub(/^ +/, "", body)
		if (body ~ /^} \/\* /) { if (kept[n--]) d--; next }
		open_ = body ~ /\(\) \{/
		name = body; sub(/\(\).*$/, "", name)
		if (!(name in mine) && (name in c)) name = c[name]
		k = (name in mine) || ((name in shown) && n > 0 && (stack[n] in prog))
		if (k) print d + 0 " " name
		if (open_) { stack[++n] = name; kept[n] = k; if (k) d++ }
	}' "$work/treep" >"$work/oursl"
	nlib=$(awk -v own="$work/own" 'BEGIN { while ((getline f < own) > 0) m[f] = 1 } !/^#/ && !($2 in m) { n++ } END { print n + 0 }' "$work/ufl")
	if [ "$nlib" -gt 0 ] && cmp -s <(grep -v '^#' "$work/ufl") "$work/oursl"; then
		pass "$p/libcalls-vs-uftrace (the same $(wc -l <"$work/oursl") entries, $nlib of library functions: $(awk -v own="$work/own" 'BEGIN { while ((getline f < own) > 0) m[f] = 1 } !/^#/ && !($2 in m) { s[$2] = 1 } END { for (k in s) printf "%s ", k }' "$work/ufl"))"
	else
		fail "$p/libcalls-vs-uftrace (uftrace $(grep -vc '^#' "$work/ufl") entries, $nlib of library functions; ours $(wc -l <"$work/oursl"); first difference: $(diff <(grep -v '^#' "$work/ufl") "$work/oursl" | head -4 | tr '\n' ' ')"
	fi
done
after=$(gmons)
if [ "$before" = "$after" ]; then
	pass "no-gmon-out-in-source-tree (the corpus's runs write theirs in $O/corpus/run$([ -e "$O/corpus/run/gmon.out" ] && echo ", there now"))"
else
	fail "no-gmon-out-in-source-tree (new: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' '))"
fi
[ "$fails" -eq 0 ]
