#!/usr/bin/env bash
# tests/e2e/syscall-names.sh - strace(1) judges the names of system calls:
# each corpus program below runs natively under strace, as ptsynth ran
# it for its trace (in $O/corpus/run, PATH alone in the environment,
# standard output a file), and `ptrace-read -f report` of its trace must
# count each system call it names ("[syscall write]") as often as strace
# does, or less where the same call is also made at a site we cannot
# name; what strace counts that we do not name is execve (it made the
# process the trace begins in) and, call for call, our "[syscall]" rows:
# the sites whose code does not say the number with a `mov $N, %eax`
# (decoder/sysnr.c).
T=syscall-names
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1

if ! command -v strace >/dev/null; then
	echo "SKIP: syscall-names/all (strace not installed: scripts/install-deps test)"
	exit 0
fi
for p in recurse dynpie static staticpie fptr tailcall plt longjmp; do
	data=$O/corpus/$p.data
	if [ ! -e "$data" ]; then
		fail "$p (no $data: run make tests)"
		continue
	fi
	# strace's count per system call name, "COUNT NAME" sorted by name
	if ! (cd "$O/corpus/run" && env -i PATH=/usr/bin:/bin strace -f -qq \
		-o "$work/$p.strace" "./$p" >"$work/$p.stdout" 2>&1); then
		fail "$p/strace (the program failed under strace: $(head -c 300 "$work/$p.strace"))"
		continue
	fi
	awk '{ l = $0; sub(/^[0-9]+ +/, "", l)
		if (match(l, /^[a-z_0-9]+\(/)) print substr(l, 1, RLENGTH - 1) }' \
		"$work/$p.strace" | sort | uniq -c | awk '{ print $2, $1 }' >"$work/$p.theirs"
	# ours: the [syscall NAME] rows of the report, "[syscall]" as "?"
	if ! "$O/bin/ptrace-capture" -q -i "$data" -o "$work/$p.srb" 2>"$work/err" ||
		! "$O/bin/ptrace-read" -f report "$work/$p.srb" >"$work/$p.report" 2>>"$work/err"; then
		fail "$p (ptrace-capture or ptrace-read: $(head -c 300 "$work/err"))"
		continue
	fi
	awk 'NR == 1 { at = index($0, "Function") } NR > 2 && substr($0, at) ~ /^\[syscall/ {
		n = substr($0, at); sub(/^\[syscall ?/, "", n); sub(/\]$/, "", n)
		print (n == "" ? "?" : n), substr($0, 27, 10) + 0 }' "$work/$p.report" |
		sort >"$work/$p.ours"
	verdict=$(awk '
		FNR == NR { theirs[$1] = $2; next }
		{ ours[$1] = $2 }
		END {
			unnamed = ours["?"] + 0; named = 0; exact = 0; n = 0; bad = ""
			for (k in ours) {
				if (k == "?") continue
				n++
				named += ours[k]
				if (ours[k] > theirs[k] + 0) bad = bad " " k ": ours " ours[k] ", strace " theirs[k] + 0 ";"
				else if (ours[k] == theirs[k]) exact++
			}
			missing = 0
			for (k in theirs)
				if (k != "execve") missing += theirs[k] - ours[k]
			if (missing != unnamed) bad = bad " strace counts " missing " calls we do not name, we have " unnamed " [syscall];"
			if (named == 0) bad = bad " no system call named;"
			if (bad != "") print "BAD" bad
			else print named " calls named, of " n " system calls " exact " counted as strace counts them; " unnamed " [syscall], as many as strace counts beyond"
		}' "$work/$p.theirs" "$work/$p.ours")
	case $verdict in
	BAD*) fail "$p (${verdict#BAD })" ;;
	*) pass "$p ($verdict)" ;;
	esac
done
finish
