#!/usr/bin/env bash
# tests/stack/uftrace-tree.sh - the call tree of a program built with -pg,
# as uftrace (0.13) records it natively, normalized for comparison with
# the truth's (tests/stack/truthtree.py) and, later, with a decoded one.
#
# usage: uftrace-tree.sh [--libcall] PROG [ARGS...]
# (UFTRACE_REPLAY_ARGS in the environment: filters for uftrace replay)
#
# Output, per thread (in the order the threads first appear): "# thread
# TID", then one line per entry of one of the program's own functions
# (those that call mcount), in order: "DEPTH NAME", DEPTH the number of
# the program's own functions open around it (library calls, the PLT and
# mcount are not counted: `--no-libcall`). With --libcall, also the
# library functions the program calls through its PLT (uftrace's
# default: qsort, printf...), counted in the depths. The program runs in a
# temporary directory (uftrace.data and a gmon.out, if any, go there);
# its own output goes to stderr.
set -eu
libcall=--no-libcall
[ "${1:-}" = --libcall ] && { libcall=; shift; }
[ $# -ge 1 ] || { echo "usage: uftrace-tree.sh [--libcall] PROG [ARGS...]" >&2; exit 2; }
command -v uftrace >/dev/null || { echo "uftrace-tree: uftrace not installed (Debian: uftrace)" >&2; exit 1; }
prog=$(command -v "$1") || { echo "uftrace-tree: $1: no such program" >&2; exit 1; }
prog=$(readlink -f "$prog")
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && uftrace record $libcall -d data "$prog" "$@" >&2) ||
	{ echo "uftrace-tree: uftrace record failed" >&2; exit 1; }
# " [ 1234] |   name() {", "name();", "} /* name */"; "-f tid": no times
# (UFTRACE_REPLAY_ARGS: replay's own filters, e.g. "-C cmp_rec")
# shellcheck disable=SC2086
uftrace replay -d "$tmp/data" --no-pager $libcall ${UFTRACE_REPLAY_ARGS:-} -f tid | awk '
/^#/ { next }
{
	if (!match($0, /^ *\[ *[0-9]+\] \| /)) next
	head = substr($0, 1, RLENGTH); body = substr($0, RLENGTH + 1)
	gsub(/[^0-9]/, "", head); tid = head
	sub(/^ +/, "", body)
	if (!(tid in depth)) { order[++nt] = tid; depth[tid] = 0; n[tid] = 0 }
	if (body ~ /^} \/\* .* \*\/$/) { depth[tid]--; next }
	if (body ~ /^\/\*/) next
	open_ = body ~ /\(\) \{$/
	if (!open_ && body !~ /\(\);$/) next
	sub(/\(\) \{$|\(\);$/, "", body)
	out[tid, ++n[tid]] = depth[tid] " " body
	if (open_) depth[tid]++
}
END {
	for (i = 1; i <= nt; i++) {
		t = order[i]; print "# thread " t
		for (k = 1; k <= n[t]; k++) print out[t, k]
	}
}'
