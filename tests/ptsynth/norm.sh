#!/usr/bin/env bash
# tests/ptsynth/norm.sh - normalize branch lists for comparison.
#
#   norm.sh truth FILE.truth   -> "TID FROM TO CLASS" lines + "# count TID N"
#   norm.sh blk   ptblk-output -> the same from ptblk's output
#   norm.sh perf  FILE.data    -> the same from perf script --itrace=b / i1i
#
# CLASS: call return jump cond syscall start end. Lines are grouped by
# thread (stable sort on TID), in execution order within a thread. Branches
# inside an injected gap ("# gap begin" .. "# gap end") are dropped from
# the truth: no decoder can see them.
set -eu
mode=$1 file=$2
# counts first (sorted), then branches grouped by thread, order kept
sortout() {
	local t
	t=$(mktemp)
	cat >"$t"
	grep '^#' "$t" | sort || true
	grep -v '^#' "$t" | sort -s -k1,1 || true
	rm -f "$t"
}
case $mode in
truth|blk)
	awk '
	/^# thread / { n = $5; if ($6 == "lost") n -= $7; print "# count", $3, n; next }
	/^# section thread / { tid = $4; next }
	/^# gap begin/ { gap = 1; next }
	/^# gap end/ { gap = 0; if ($5 != "") print tid, 0, $5, "start"; next }
	/^# overflow resume/ { print tid, 0, $4, "start"; next }
	/^#/ { next }
	{
		if (gap) next
		k = $3
		if (k == "begin" || k == "sysret" || k == "resume") k = "start"
		if (k == "async") k = "end"
		print tid, $1, $2, k
	}' "$file" | sortout
	;;
perf)
	{
	perf script -i "$file" --itrace=i1i -F tid 2>/dev/null |
		awk '{ c[$1]++ } END { for (t in c) print "# count", t, c[t] }'
	perf script -i "$file" --itrace=b -F tid,ip,addr,flags 2>/dev/null | awk '
	{
		tid = $1; to = $NF; from = $(NF - 2)
		f = ""
		for (i = 2; i <= NF - 3; i++) f = f " " $i
		if (f ~ /tr strt/) k = "start"
		else if (f ~ /tr end/) k = (f ~ /syscall/) ? "syscall" : "end"
		else if (f ~ /syscall/) k = "syscall"
		else if (f ~ /call/) k = "call"
		else if (f ~ /return/) k = "return"
		else if (f ~ /jcc/) k = "cond"
		else if (f ~ /jmp/) k = "jump"
		else k = f
		print tid, from, to, k
	}'
	} | sortout
	;;
*) echo "usage: norm.sh truth|blk|perf FILE" >&2; exit 2 ;;
esac
