#!/usr/bin/env bash
# tests/view/e2e-uftrace-dir.sh - ptrace-read -f uftrace -o DIR writes a
# uftrace data directory that Debian's uftrace (0.13) reads, judged by
# uftrace itself on corpus traces (docs/viewing.md, "The uftrace data
# directory"). Per trace (programs with threads, signals, exceptions,
# longjmp, a C++ and an OCaml runtime, stacks deeper than 1024; variants
# with a PT overflow, corrupt trace data, per-CPU recording,
# a flight ring that lost its oldest events):
#   dir:      ptrace-read exits 0 and writes info, task.txt, sid-*.map, the
#             .sym files and one TID.dat per thread
#   replay, report, graph, info, dump --chrome: each exits 0 with nothing
#             on stderr and real content (the Chrome JSON parses, its B
#             and E events pair up)
#   tree:     uftrace replay's call tree (names, depths, order, per
#             thread) equals ptrace-read -f tree's
#   report:   uftrace report's calls per function equal ptrace-read -f
#             report's
# And: the read-side filters (--tid, --sym, --dso) shape the directory as
# they shape -f tree, and uftrace's own filters (--tid, -F) on a whole
# directory agree with ours; gaps show as ptrace-read:* events where they
# happened; a ring of sample events (every type, odd names) is read as
# well; a longjmp keeps its depth (uftrace's fixup of that name is
# avoided); a directory is replaced, not mixed, when written again, and a
# non-empty directory of other files is refused.
# SKIP only when uftrace is not installed.
T=uftrace-dir
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top" || exit 1
B=$O/bin

if ! command -v uftrace >/dev/null; then
	skip all "uftrace is not installed: apt-get install uftrace"
	exit 0
fi
# uftrace looks for ./uftrace.data and writes nothing: run it elsewhere
uft() { (cd "$work" && uftrace "$@"); }
# uftrace's replay shows 1024 levels unless told (-D): the deepest it takes
DEEP="-D 65534"

# Call trees of uftrace replay and ptrace-read -f tree (one layout), per
# thread (threads in tid order): "# thread TID", then "DEPTH NAME" per
# entry in order, DEPTH counted by the blocks open; comments (gaps,
# "began before the trace") and uftrace's ".nofixup" suffix left out.
# tree_norm ours|uftrace: our tree adds "()" to every name; uftrace's to
# those that do not end with ')'.
tree_norm() {
	# (a tab in a name is a ? in a .sym file, as in our views: uftrace
	# cuts names at tabs; the normalized lines are tab-separated)
	tr '\t' ' ' | awk -v who="$1" '
/^#/ { next }
{
	if (!match($0, /\[ *[0-9]+\] \| /)) next
	head = substr($0, 1, RSTART + RLENGTH - 1); body = substr($0, RSTART + RLENGTH)
	sub(/^.*\[ */, "", head); sub(/\].*$/, "", head); tid = head + 0
	sub(/^ +/, "", body)
	if (!(tid in depth)) { depth[tid] = 0; n[tid] = 0 }
	if (body ~ /^} \/\* .* \*\/$/) { depth[tid]--; next }
	if (body ~ /^\/\*/) next
	late = body ~ /\/\* began before the trace \*\/$/
	if (body ~ /\) \{( \/\*.*\*\/)?$/) { o = 1; sub(/ \{( \/\*.*\*\/)?$/, "", body) }
	else if (body ~ /\);( \/\*.*\*\/)?$/) { o = 0; sub(/;( \/\*.*\*\/)?$/, "", body) }
	else next
	if (who == "ours" || body ~ /[^)]\(\)$/) sub(/\(\)$/, "", body)
	sub(/\.nofixup$/, "", body)
	printf "%d\t%d\t%d\t%s\t%d\n", tid, ++n[tid], depth[tid], body, late
	if (o) depth[tid]++
}' | sort -t"$(printf '\t')" -k1,1n -k2,2n | awk -F'\t' '
	# a frame found late ("began before the trace", where we found it)
	# is at the start of the thread in the uftrace data, around all
	# that came before its end: those found later outside those found
	# earlier, and each line deeper by the ones found after it
	function flush(   i, j, after) {
		if (!cnt) return
		print "# thread " last
		j = 0
		for (i = cnt; i >= 1; i--) if (lt[i]) print j++ " " nm[i]
		after = 0
		for (i = cnt; i >= 1; i--) { dd[i] = dp[i] + after; after += lt[i] }
		for (i = 1; i <= cnt; i++) if (!lt[i]) print dd[i] " " nm[i]
		cnt = 0
	}
	$1 != last { flush(); last = $1 }
	{ cnt++; dp[cnt] = $3; nm[cnt] = $4; lt[cnt] = $5 }
	END { flush() }'
}
# "NAME<TAB>CALLS" per function name (calls of same-named functions
# summed, as uftrace keys its rows by name), sorted; from our report
# (fixed columns: calls at 27-36, the name under "Function", after the
# DSO column when names repeat in DSOs) or uftrace's
# "report -f call" (calls at 1-12, the name from 15)
report_norm() {
	tr '\t' ' ' | case $1 in
	ours) awk 'NR == 1 { at = index($0, "Function") } NR > 2 { s[substr($0, at)] += substr($0, 27, 10) }
		END { for (k in s) printf "%s\t%d\n", k, s[k] }' ;;
	uftrace) awk 'NR > 2 { n = substr($0, 15); sub(/\.nofixup$/, "", n); s[n] += substr($0, 1, 12) }
		END { for (k in s) printf "%s\t%d\n", k, s[k] }' ;;
	esac | LC_ALL=C sort
}
# "NAME<TAB>TOTAL<TAB>SELF<TAB>CALLS<TAB>SLACK" per function name (ns,
# summed over same-named rows), from a report with total and self times:
# ours, or uftrace's "report -f total,self,call" (the same fixed columns:
# 1-12, 13-24, 25-36; uftrace leaves a time of 0 blank). A figure shown
# in us is exact to the ns, one in ms to the us: SLACK sums each row's
# resolution, what two truncations may differ by.
times_norm() {
	tr '\t' ' ' | awk '
	function ns(f,  v, u) { if (split(f, x, " ") < 2) return 0; v = x[1]; u = x[2]
		return u == "s" ? v * 1e9 : u == "ms" ? v * 1e6 : u == "us" ? v * 1e3 : v }
	function res(f) { return f ~ / s$/ ? 1e6 : f ~ /ms$/ ? 1e3 : 1 }
	NR == 1 { at = index($0, "Function") }
	NR > 2 {
		n = substr($0, at); sub(/\.nofixup$/, "", n)
		a = substr($0, 1, 12); b = substr($0, 13, 12)
		t[n] += ns(a); s[n] += ns(b); c[n] += substr($0, 25, 12) + 0
		sl[n] += res(a) > res(b) ? res(a) : res(b)
	}
	END { for (k in t) printf "%s\t%.0f\t%.0f\t%d\t%.0f\n", k, t[k], s[k], c[k], sl[k] }' |
		LC_ALL=C sort
}
# first lines of a difference, on one line
difference() { diff "$1" "$2" | head -${3:-6} | tr '\n' '|' | cut -c1-600; }

# run NAME CMD...: CMD exits 0 and writes nothing on stderr; its stdout
# in $work/NAME.out
run() {
	local name=$1
	shift
	"$@" >"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	if [ $rc -ne 0 ] || [ -s "$work/$name.err" ]; then
		echo "exit $rc: $(head -c 400 "$work/$name.err" | tr '\n' '|')"
		return 1
	fi
	return 0
}

# check_dir TAG DIR RING [PTRACE-READ FILTERS...]: uftrace reads DIR (made
# from RING with the filters) and agrees with ptrace-read's views
check_dir() {
	local tag=$1 d=$2 ring=$3 why
	shift 3
	# what uftrace needs
	local ntid nmap nsym
	ntid=$(ls "$d" | grep -c '^[0-9]*\.dat$')
	nmap=$(ls "$d" | grep -c '^sid-.*\.map$')
	nsym=$(ls "$d" | grep -c '\.sym$')
	if [ -s "$d/info" ] && [ -s "$d/task.txt" ] && [ "$ntid" -gt 0 ] &&
		[ "$nmap" -gt 0 ] && [ "$nsym" -gt 0 ] &&
		[ "$(grep -c '^TASK ' "$d/task.txt")" = "$ntid" ]; then
		pass "$tag/dir ($ntid threads, $nmap session(s), $nsym .sym files)"
	else
		fail "$tag/dir" "$(ls "$d" | tr '\n' ' ')"
	fi
	# each command exits 0, says nothing on stderr, and shows something
	if why=$(run replay uft replay -d "$d" --no-pager $DEEP) &&
		[ "$(grep -c '\] | ' "$work/replay.out")" -gt 20 ]; then
		pass "$tag/replay ($(grep -c '\] | ' "$work/replay.out") lines)"
	else
		fail "$tag/replay" "${why:-$(head -5 "$work/replay.out")}"
	fi
	if why=$(run report uft report -d "$d" $DEEP -f call) &&
		[ "$(wc -l <"$work/report.out")" -gt 5 ]; then
		pass "$tag/report ($(($(wc -l <"$work/report.out") - 2)) functions)"
	else
		fail "$tag/report" "${why:-$(head -5 "$work/report.out")}"
	fi
	if why=$(run graph uft graph -d "$d" $DEEP) &&
		grep -q 'FUNCTION CALL GRAPH' "$work/graph.out" &&
		[ "$(grep -c '(.*[0-9]) ' "$work/graph.out")" -gt 5 ]; then
		pass "$tag/graph ($(wc -l <"$work/graph.out") lines)"
	else
		fail "$tag/graph" "${why:-$(head -5 "$work/graph.out")}"
	fi
	if why=$(run info uft info -d "$d") && grep -q 'number of tasks *: [1-9]' "$work/info.out"; then
		pass "$tag/info"
	else
		fail "$tag/info" "${why:-$(head -20 "$work/info.out")}"
	fi
	if why=$(run chrome uft dump --chrome -d "$d" $DEEP) &&
		why=$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
b = sum(1 for e in ev if e.get("ph") == "B")
e = sum(1 for e in ev if e.get("ph") == "E")
if b == 0 or b != e:
    sys.exit("%d B and %d E events" % (b, e))
print("%d events, %d slices" % (len(ev), b))' "$work/chrome.out" 2>&1); then
		pass "$tag/dump-chrome ($why)"
	else
		fail "$tag/dump-chrome" "$why"
	fi
	# uftrace's tree and report are ours
	"$B/ptrace-read" -f tree "$@" "$ring" 2>/dev/null | tree_norm ours >"$work/ours.tree"
	tree_norm uftrace <"$work/replay.out" >"$work/uft.tree"
	local n
	n=$(grep -vc '^#' "$work/ours.tree")
	if [ "$n" -gt 20 ] && cmp -s "$work/ours.tree" "$work/uft.tree"; then
		pass "$tag/tree-equals-ours ($n entries, $(grep -c '^#' "$work/ours.tree") thread(s), depth 0..$(awk '!/^#/ && $1 > m { m = $1 } END { print m + 0 }' "$work/ours.tree"))"
	else
		fail "$tag/tree-equals-ours" "ours $n entries, uftrace's $(grep -vc '^#' "$work/uft.tree");" \
			"$(difference "$work/ours.tree" "$work/uft.tree")"
	fi
	"$B/ptrace-read" -f report "$@" "$ring" 2>/dev/null | report_norm ours >"$work/ours.report"
	report_norm uftrace <"$work/report.out" >"$work/uft.report"
	n=$(wc -l <"$work/ours.report")
	if [ "$n" -gt 5 ] && cmp -s "$work/ours.report" "$work/uft.report"; then
		pass "$tag/report-calls-equal-ours ($n functions, $(awk -F'\t' '{ s += $2 } END { print s }' "$work/ours.report") calls)"
	else
		fail "$tag/report-calls-equal-ours" "$(difference "$work/ours.report" "$work/uft.report")"
	fi
	# the total and self times too, name by name, within what the two
	# reports' truncation to their units may differ by; traces with gaps
	# or without their start included (a frame that began before the
	# trace, found by a return, begins at the thread's first event in
	# both: the export moves its entry there, cli/view/fmt_uftrace.c). With
	# a filter, the self times differ by definition: ours leave out every
	# callee's time, uftrace's only the callees written, so only totals
	# and calls are compared then.
	if why=$(run times uft report -d "$d" $DEEP -f total,self,call); then
		"$B/ptrace-read" -f report "$@" "$ring" 2>/dev/null | times_norm >"$work/ours.times"
		times_norm <"$work/times.out" >"$work/uft.times"
		local bad
		bad=$(join -t "$(printf '\t')" -a 1 -a 2 -e x -o 0,1.2,1.3,1.4,1.5,2.2,2.3,2.4,2.5 \
			"$work/ours.times" "$work/uft.times" | awk -F'\t' '
			function abs(x) { return x < 0 ? -x : x }
			$2 == "x" || $6 == "x" || $4 != $8 || abs($2 - $6) > $5 + $9 ||
			(!filtered && abs($3 - $7) > $5 + $9) { print $1 ": ours " $2 " " $3 " " $4 ", uftrace " $6 " " $7 " " $8 }' filtered=$(($# > 0)) | head -3)
		if [ -z "$bad" ] && [ "$(wc -l <"$work/ours.times")" -gt 5 ]; then
			pass "$tag/report-times-equal-ours ($(wc -l <"$work/ours.times") functions: total$([ $# -gt 0 ] || echo ", self") and calls)"
		else
			fail "$tag/report-times-equal-ours" "${bad:-too few rows}"
		fi
	else
		fail "$tag/report-times-equal-ours" "uftrace report -f total,self,call: $why"
	fi
}

# make TAG DATA [CAPTURE OPTIONS]: the ring and the directory of a trace
make_dir() {
	local tag=$1 data=$2
	shift 2
	if [ ! -e "$data" ]; then
		fail "$tag" "no $data: run make tests"
		return 1
	fi
	# (exit 3: decoded, with code lost to decode errors)
	"$B/ptrace-capture" -q "$@" -i "$data" -o "$work/$tag.srb" 2>"$work/err"
	local rc=$?
	if { [ $rc -ne 0 ] && [ $rc -ne 3 ]; } ||
		! "$B/ptrace-read" -f uftrace -o "$work/$tag.d" "$work/$tag.srb" 2>"$work/err"; then
		fail "$tag/ptrace-read" "$(head -c 400 "$work/err")"
		return 1
	fi
	if [ -s "$work/err" ]; then
		fail "$tag/ptrace-read" "stderr: $(head -c 400 "$work/err")"
		return 1
	fi
	return 0
}

# --- the corpus -----------------------------------------------------------
for p in recurse threads exceptions signals pgqsort longjmp ocaml threads-percpu; do
	[ "$p" = ocaml ] && [ ! -e "$O/corpus/ocaml.data" ] && ! command -v ocamlopt >/dev/null &&
		{ skip "$p" "no OCaml compiler: the corpus has no OCaml trace"; continue; }
	make_dir "$p" "$O/corpus/$p.data" && check_dir "$p" "$work/$p.d" "$work/$p.srb"
done
# info: the recording's command line, host, kernel and CPUs, as the
# perf.data header has them (perf report --header-only reads the same)
for p in pgqsort threads-percpu; do
	[ -e "$work/$p.d/info" ] || continue
	uft info -d "$work/$p.d" >"$work/info.out" 2>&1
	perf report -i "$O/corpus/$p.data" --header-only 2>/dev/null >"$work/hdr.out"
	want_cmd=$(sed -n 's/^# cmdline : //p' "$work/hdr.out" | sed 's/ *$//')
	want_host=$(sed -n 's/^# hostname : //p' "$work/hdr.out")
	want_cpus="$(sed -n 's/^# nrcpus online : //p' "$work/hdr.out") / $(sed -n 's/^# nrcpus avail : //p' "$work/hdr.out")"
	if [ -n "$want_cmd" ] && grep -q "^# cmdline *: $want_cmd\$" "$work/info.out" &&
		grep -q "^# hostname *: $want_host\$" "$work/info.out" &&
		grep -q "^# number of cpus *: $want_cpus (online / possible)" "$work/info.out"; then
		pass "$p/info-is-the-recordings (cmdline '$want_cmd', host $want_host, cpus $want_cpus)"
	else
		fail "$p/info-is-the-recordings" "want '$want_cmd' $want_host $want_cpus" "$(grep 'cmdline\|hostname\|cpus' "$work/info.out" | tr '\n' '|')"
	fi
done

# gaps: PT overflows, corrupt trace data (decode errors)
for v in threads:overflow recurse:overflow exceptions:corrupt signals:corrupt threads:corrupt; do
	p=${v%:*} var=${v#*:}
	if ! dir=$(O=$O tests/corpus/corpus.sh trace "$p" "$var" 2>"$work/err"); then
		fail "$p-$var" "corpus.sh trace $p $var: $(tail -c 300 "$work/err")"
		continue
	fi
	make_dir "$p-$var" "$dir/trace.data" || continue
	check_dir "$p-$var" "$work/$p-$var.d" "$work/$p-$var.srb"
	# where the trace has a hole, replay says so at that depth
	gaps=$("$B/ptrace-read" --types 'overflow,error,lost' "$work/$p-$var.srb" | grep -c .)
	shown=$(grep -c '/\* ptrace-read:\(overflow\|error-.*\|lost-.*\) \*/' "$work/replay.out")
	if [ "$gaps" -gt 0 ] && [ "$shown" -gt 0 ] && [ "$shown" -le "$gaps" ] &&
		grep -q '^EVENT: 1000000 ptrace-read:' "$work/$p-$var.d/events.txt"; then
		pass "$p-$var/gaps-shown ($gaps gap events, $shown shown by replay: $(grep -o 'ptrace-read:[a-z_-]*' "$work/replay.out" | sort -u | tr '\n' ' '))"
	else
		# (the damaged traces are the same bytes in every clone:
		# tests/corpus/corpus.sh runs every program in one environment)
		fail "$p-$var/gaps-shown" "$gaps gap events, $shown shown"
	fi
done
# a flight ring that overwrote its oldest events: threads begin inside
# their calls (ROOT frames, written once the frames above them left)
make_dir threads-flight "$O/corpus/threads.data" --mode flight --capacity 1024 &&
	check_dir threads-flight "$work/threads-flight.d" "$work/threads-flight.srb"

# ptrace-read's sample events (--generate): every type, names with
# quotes, a tab, UTF-8, C++ parameters, code outside every DSO, gaps of
# every kind, losses of the ring on thread 0, stack seeds
if "$B/ptrace-read" --generate 40000 -o "$work/gen.srb" >/dev/null 2>"$work/err" &&
	"$B/ptrace-read" -f uftrace -o "$work/gen.d" "$work/gen.srb" 2>"$work/err"; then
	check_dir generated "$work/gen.d" "$work/gen.srb"
	n=$(grep -c '^EVENT: ' "$work/gen.d/events.txt" 2>/dev/null)
	shown=$(grep -o 'ptrace-read:[a-z_-]*' "$work/replay.out" | sort -u | grep -c .)
	if [ "${n:-0}" -ge 3 ] && [ "$shown" = "$n" ]; then
		pass "generated/gaps-shown ($n kinds of gap, each shown by replay)"
	else
		fail "generated/gaps-shown" "events.txt: ${n:-none}, shown: $shown"
	fi
else
	fail generated "$(head -c 300 "$work/err")"
fi

# --- deep stacks: recurse goes deeper than the depth field's 1024 ------------
if [ -e "$work/recurse.d/info" ]; then
	max=$(od -An -tu2 -j32 -N2 "$work/recurse.d/info" | tr -d ' ')
	deepest=$(awk '!/^#/ && $1 > m { m = $1 } END { print m + 0 }' <("$B/ptrace-read" -f tree "$work/recurse.srb" | tree_norm ours))
	if [ "$deepest" -ge 1024 ] && [ "$max" = $((deepest + 1)) ]; then
		pass "recurse/deeper-than-1024 (frames down to depth $deepest, max_stack $max)"
	else
		fail "recurse/deeper-than-1024" "deepest $deepest, max_stack $max"
	fi
fi

# --- filters ---------------------------------------------------------------
# ours: the directory of a filtered read equals the filtered tree
filtered() {
	local tag=$1 ring=$2
	shift 2
	rm -rf "$work/$tag.d"
	if "$B/ptrace-read" -f uftrace "$@" -o "$work/$tag.d" "$ring" 2>"$work/err"; then
		check_dir "$tag" "$work/$tag.d" "$ring" "$@"
	else
		fail "$tag" "$(head -c 300 "$work/err")"
	fi
}
if [ -e "$work/threads.srb" ]; then
	tid=$(ls "$work/threads.d" | grep '^[0-9]*\.dat$' | sed 's/\.dat//' | sort -n | sed -n 2p)
	filtered threads-tid "$work/threads.srb" --tid "$tid"
	got=$(ls "$work/threads-tid.d" | grep '\.dat$' | tr '\n' ' ')
	if [ "$got" = "$tid.dat " ]; then
		pass "threads-tid/one-thread ($got)"
	else
		fail "threads-tid/one-thread" "$got"
	fi
	# uftrace's --tid on the whole directory: the same tree
	if run rtid uft replay -d "$work/threads.d" --no-pager --tid "$tid" &&
		cmp -s <(tree_norm uftrace <"$work/rtid.out") <("$B/ptrace-read" -f tree --tid "$tid" "$work/threads.srb" | tree_norm ours); then
		pass "threads/uftrace-tid-equals-ours"
	else
		fail "threads/uftrace-tid-equals-ours" "$(head -c 300 "$work/rtid.err")"
	fi
fi
if [ -e "$work/pgqsort.srb" ]; then
	filtered pgqsort-sym "$work/pgqsort.srb" --sym main
	# uftrace's -F on the whole directory: the same subtrees
	if run rsym uft replay -d "$work/pgqsort.d" --no-pager --match glob -F main &&
		[ "$(tree_norm uftrace <"$work/rsym.out" | grep -vc '^#')" -gt 20 ] &&
		cmp -s <(tree_norm uftrace <"$work/rsym.out") <("$B/ptrace-read" -f tree --sym main "$work/pgqsort.srb" | tree_norm ours); then
		pass "pgqsort/uftrace-F-equals-ours-sym ($(tree_norm uftrace <"$work/rsym.out" | grep -vc '^#') entries)"
	else
		fail "pgqsort/uftrace-F-equals-ours-sym" "$(head -c 300 "$work/rsym.err")"
	fi
	filtered pgqsort-no-sym "$work/pgqsort.srb" --no-sym '_dl*,_mcount'
fi
if [ -e "$work/exceptions.srb" ]; then
	# --dso keeps frames whose callers it leaves out: uftrace's depths
	# count the frames written, the tree's the frames of the stack; the
	# names and their order are the same
	rm -rf "$work/exc-dso.d"
	if "$B/ptrace-read" -f uftrace --dso 'libstdc++*' -o "$work/exc-dso.d" "$work/exceptions.srb" 2>"$work/err" &&
		run rdso uft replay -d "$work/exc-dso.d" --no-pager &&
		[ "$(tree_norm uftrace <"$work/rdso.out" | grep -vc '^#')" -gt 10 ] &&
		cmp -s <(tree_norm uftrace <"$work/rdso.out" | cut -d' ' -f2-) \
			<("$B/ptrace-read" -f tree --dso 'libstdc++*' "$work/exceptions.srb" | tree_norm ours | cut -d' ' -f2-); then
		pass "exceptions-dso/names-and-order-equal-ours ($(tree_norm uftrace <"$work/rdso.out" | grep -vc '^#') entries)"
	else
		fail "exceptions-dso/names-and-order-equal-ours" "$(head -c 300 "$work/err" "$work/rdso.err" 2>/dev/null)"
	fi
fi

# uftrace's own -t, -C, -N and -D on the whole directory: the tree and
# the calls per function ours give with the same flags (uftrace matches
# -C and -N as regexes: plain names here)
same_filter() {
	local tag=$1 ring=$2 d=$3 n
	shift 3
	if run rflt uft replay -d "$d" --no-pager $DEEP "$@" &&
		run rfltr uft report -d "$d" $DEEP -f call "$@" &&
		n=$(tree_norm uftrace <"$work/rflt.out" | grep -vc '^#') && [ "$n" -gt 0 ] &&
		"$B/ptrace-read" -f tree "$@" "$ring" 2>"$work/err" | tree_norm ours >"$work/ours.flt" &&
		cmp -s <(tree_norm uftrace <"$work/rflt.out") "$work/ours.flt" &&
		cmp -s <(report_norm uftrace <"$work/rfltr.out") \
			<("$B/ptrace-read" -f report "$@" "$ring" 2>/dev/null | report_norm ours); then
		pass "$tag/uftrace-$(echo "$*" | tr ' ' '_')-equals-ours ($n entries, of $(tree_norm ours <"$work/ours.tree.all" | grep -vc '^#'); report calls too)"
	else
		fail "$tag/uftrace-$(echo "$*" | tr ' ' '_')-equals-ours" \
			"$(difference <(tree_norm uftrace <"$work/rflt.out") "$work/ours.flt")" "$(head -c 300 "$work/err" "$work/rflt.err")"
	fi
}
for t in pgqsort recurse threads; do
	[ -e "$work/$t.srb" ] || continue
	"$B/ptrace-read" -f tree "$work/$t.srb" >"$work/ours.tree.all"
	case $t in
	pgqsort) sets="-t+1us -C+cmp_rec -C+strcmp+-t+100ns -N+qsort -D+4 -N+main+-D+6" ;;
	recurse) sets="-t+2us -C+down -D+40 -N+fib" ;;
	threads) sets="-t+1us -C+work -N+work" ;;
	esac
	for s in $sets; do
		# shellcheck disable=SC2046
		same_filter "$t" "$work/$t.srb" "$work/$t.d" $(echo "$s" | tr "+" " ")
	done
done

# --time: the frames that overlap the window, clipped to it. uftrace's
# --time-range on the whole directory shows the entries inside it; the
# directory ptrace-read writes with --time holds the same entries after
# its start, and at its start the frames open then (begun before it):
# uftrace replays it with their callers around every entry
window_check() {
	local tag=$1 ring=$2 d=$3 a b n open
	"$B/ptrace-read" -f tree --time 0%-100% "$ring" >"$work/w0.tree"
	run wall uft replay -d "$d" --no-pager $DEEP -f tid,time || { fail "$tag/time-window" "replay"; return; }
	n=$(grep -c '\] *[0-9.]* | ' "$work/wall.out")
	a=$(grep '\] *[0-9.]* | ' "$work/wall.out" | sed -n "$((n * 2 / 5))p" | awk '{ print $3 }')
	b=$(grep '\] *[0-9.]* | ' "$work/wall.out" | sed -n "$((n * 3 / 5))p" | awk '{ print $3 }')
	# entries: "TID TIME NAME" of the lines that enter a frame
	entries() { sed -n 's/^ *\[ *\([0-9]*\)\] *\([0-9.]*\) | *\([^ ].*\)\(() {\|();\)$/\1 \2 \3/p'; }
	rm -rf "$work/win.d"
	if ! "$B/ptrace-read" -f uftrace --time "$a,$b" -o "$work/win.d" "$ring" 2>"$work/err" ||
		! run wr uft replay -d "$d" --no-pager $DEEP -f tid,time --time-range="$a~$b" ||
		! run ww uft replay -d "$work/win.d" --no-pager $DEEP -f tid,time; then
		fail "$tag/time-window" "$(head -c 300 "$work/err" "$work/wr.err" "$work/ww.err")"
		return
	fi
	entries <"$work/wr.out" | awk -v a="$a" '$2 != a' >"$work/wr.ent"
	entries <"$work/ww.out" | awk -v a="$a" '$2 != a' >"$work/ww.ent"
	open=$(entries <"$work/ww.out" | awk -v a="$a" '$2 == a' | grep -c .)
	n=$(grep -c . "$work/wr.ent")
	if [ "$n" -gt 10 ] && cmp -s "$work/wr.ent" "$work/ww.ent" && [ "$open" -gt 0 ] &&
		! grep -q ' [0-9.]* | ' <(awk -v b="$b" '$3 > b' "$work/ww.out" | grep '\] *[0-9.]* | '); then
		pass "$tag/time-window-equals-uftrace-time-range ($a..$b: $n entries inside, $open frames open at its start, clipped)"
	else
		fail "$tag/time-window-equals-uftrace-time-range" "$n entries, $open open; $(difference "$work/wr.ent" "$work/ww.ent")"
	fi
	# the views agree: every frame of -f tree --time within the window
	n=$("$B/ptrace-read" -f tree --time "$a,$b" "$ring" | grep -c '\] | ')
	if [ "$n" -gt 10 ] && [ "$n" -lt "$(grep -c '\] | ' "$work/w0.tree")" ]; then
		pass "$tag/time-window-cuts-the-tree ($n of $(grep -c '\] | ' "$work/w0.tree") lines)"
	else
		fail "$tag/time-window-cuts-the-tree" "$n lines"
	fi
}
[ -e "$work/pgqsort.srb" ] && window_check pgqsort "$work/pgqsort.srb" "$work/pgqsort.d"
[ -e "$work/threads.srb" ] && window_check threads "$work/threads.srb" "$work/threads.d"

# --- a longjmp keeps its depth ------------------------------------------------
# uftrace resets its stack at the entry of a function named longjmp (its
# recorder sees no returns from one); the ring has them. The longjmp
# corpus calls glibc's under another name: a copy of its ring with
# "_setjmp" renamed "longjmp" (same length, in the string table) has
# frames of that name, deep in the tree.
if [ -e "$work/longjmp.srb" ]; then
	python3 - "$work/longjmp.srb" "$work/lj.srb" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
# a string-table entry: len + 1 = 8, kind 52 (symbol), 0x5354, key, aux,
# then the name
pat = b"\x08\x00\x00\x004\x00TS"
n = 0
i = d.find(pat)
while i >= 0:
    if d[i + 24:i + 32] == b"_setjmp\x00":
        d[i + 24:i + 31] = b"longjmp"
        n += 1
    i = d.find(pat, i + 1)
open(sys.argv[2], "wb").write(d)
sys.exit(0 if n else 1)
EOF
	if [ $? -ne 0 ]; then
		fail "longjmp-fixup" "no _setjmp entry in the ring's string table"
	elif "$B/ptrace-read" -f uftrace -o "$work/lj.d" "$work/lj.srb" 2>"$work/err" &&
		grep -q ' T longjmp\.nofixup$' "$work/lj.d/"*.sym &&
		run lj uft replay -d "$work/lj.d" --no-pager &&
		grep -q ' longjmp\.nofixup()' "$work/lj.out"; then
		# depths: compare the indentation too, which the fixup moved
		ind() { sed -n 's/^.*\] | \( *\)\([^ ].*\)$/\1\2/p' | sed 's/longjmp\.nofixup/longjmp/; s/ *\/\* began before the trace \*\///'; }
		if cmp -s <(ind <"$work/lj.out") <("$B/ptrace-read" -f tree "$work/lj.srb" | ind); then
			pass "longjmp-fixup/depths-kept ($(grep -c 'longjmp\.nofixup()' "$work/lj.out") calls of longjmp.nofixup)"
		else
			fail "longjmp-fixup/depths-kept" "$(difference <(ind <"$work/lj.out") <("$B/ptrace-read" -f tree "$work/lj.srb" | ind))"
		fi
	else
		fail "longjmp-fixup" "$(head -c 300 "$work/err" "$work/lj.err" 2>/dev/null)"
	fi
fi

# --- the directory --------------------------------------------------------------
if [ -e "$work/threads.srb" ]; then
	# written again over a uftrace directory: replaced, no file left over
	"$B/ptrace-read" -f uftrace --tid "$tid" -o "$work/threads.d" "$work/threads.srb" 2>"$work/err"
	if [ $? -eq 0 ] && [ "$(ls "$work/threads.d" | grep -c '\.dat$')" = 1 ] &&
		run again uft replay -d "$work/threads.d" --no-pager; then
		pass "rewrite-replaces-the-directory"
	else
		fail "rewrite-replaces-the-directory" "$(cat "$work/err") $(ls "$work/threads.d" | tr '\n' ' ')"
	fi
	mkdir -p "$work/other"
	echo keep >"$work/other/notes.txt"
	if ! "$B/ptrace-read" -f uftrace -o "$work/other" "$work/threads.srb" 2>"$work/err" &&
		grep -q 'not empty' "$work/err" && [ "$(wc -l <"$work/err")" = 1 ] &&
		[ "$(ls "$work/other")" = notes.txt ]; then
		pass "refuses-a-directory-of-other-files ($(cat "$work/err"))"
	else
		fail "refuses-a-directory-of-other-files" "$(cat "$work/err") $(ls "$work/other" | tr '\n' ' ')"
	fi
	# -o names a file: one message, exit 1
	"$B/ptrace-read" -f uftrace -o "$work/other/notes.txt" "$work/threads.srb" 2>"$work/err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q 'notes.txt: not a directory' "$work/err"; then
		pass "a-file-as-o-is-refused ($(cat "$work/err"))"
	else
		fail "a-file-as-o-is-refused" "exit $rc: $(cat "$work/err")"
	fi
fi

finish
