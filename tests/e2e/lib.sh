# SPDX-License-Identifier: MIT
# tests/e2e/lib.sh - what every e2e script begins with: the build
# directory, a work directory removed at exit, and the PASS:/FAIL:/SKIP:
# lines and exit status that tests/run.sh counts.
#
# A script names its checks and sources this file first:
#
#   T=capture-cache
#   . "$(dirname "$0")/../e2e/lib.sh"
#
# and then has
#   O        the build directory (default build), exported
#   top      the repository's root (the script cds there itself if it
#            wants relative paths)
#   bin      $top/$O/bin
#   work     a fresh directory under ${TMPDIR:-/tmp}, removed at exit;
#            KEEP=1 keeps it and says where it is
#   nfail    the FAIL: lines so far
#   pass NAME              "PASS: T/NAME"
#   fail NAME [DETAIL...]  "FAIL: T/NAME", then each DETAIL indented on a
#                          line of its own
#   skip NAME [WHY]        "SKIP: T/NAME (WHY)"
#   check NAME CMD...      pass NAME when CMD succeeds, else fail it
#   finish                 the script's last command: exit status 0 when
#                          nothing failed
# A script that leaves more than $work behind (readers to kill, rings in
# /dev/shm, a mount) defines on_exit(): it runs at exit, before $work is
# removed.
set -u
O=${O:-build}
export O
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$top/$O/bin
nfail=0

pass() { echo "PASS: $T/$1"; }
fail() {
	echo "FAIL: $T/$1"
	shift
	[ $# -gt 0 ] && printf '  %s\n' "$@"
	nfail=$((nfail + 1))
}
skip() {
	if [ $# -gt 1 ]; then echo "SKIP: $T/$1 ($2)"; else echo "SKIP: $T/$1"; fi
}
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}
finish() { [ "$nfail" -eq 0 ]; }

e2e_exit() {
	if declare -F on_exit >/dev/null; then on_exit; fi
	if [ -n "${KEEP:-}" ]; then
		echo "work $work (kept)" >&2
	else
		rm -rf "$work"
	fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/$T.XXXXXX") || exit 1
trap e2e_exit EXIT
