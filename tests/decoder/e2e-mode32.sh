#!/usr/bin/env bash
# tests/decoder/e2e-mode32.sh - 32-bit code (MODE.Exec CS.D) through the
# fast walker, judged by perf, libipt and the ground truth.
#
# tests/decoder/mode32.c built with gcc -m32 (PIE: its PLT calls and data
# go through __x86.get_pc_thunk.bx; direct and table-indirect calls, a
# switch's jump table, returns compressed and, past the 64-entry return
# stack and with ptsynth --no-retcomp, not) runs natively as a 32-bit
# process under ptsynth --ptrace, whose PSB+ and TIP.PGE say 32-bit code
# in their MODE.Exec. Then every taken branch of ptrace-capture
# --all-branches (fast, -j 2, and --decoder reference, libipt's block
# decoder) must be
#   - the truth ptsynth wrote, every branch in order (cmptruth.py);
#   - perf 6.1's `perf script --itrace=be` on the same perf.data, branch
#     for branch with the same addresses (cmpperf.py --all-branches
#     --addresses; perf decodes the objects as 32-bit code by their ELF
#     class; the symbol names are not compared: perf 6.1 names libc's
#     .plt entries (realloc@plt), which our image does not for 32-bit
#     objects), at times within a timing-packet period of perf's.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$O/bin" 2>/dev/null && pwd || echo "$O/bin")
W=$(mktemp -d /tmp/mode32.XXXXXX)
[ -n "${KEEP:-}" ] && echo "work $W (kept)" >&2 || trap 'rm -rf "$W"' EXIT
fails=0
lib=$(cd "$O" 2>/dev/null && pwd)/lib/libstrace_dlf.so
. "$top/tests/e2e/perfdl.inc"

pass() { echo "PASS: e2e-mode32/$1"; }
fail() { echo "FAIL: e2e-mode32/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; fails=$((fails + 1)); }
skip() { echo "SKIP: e2e-mode32/$1 ($2)"; }

for t in perf gcc python3; do
	if ! command -v $t >/dev/null 2>&1; then
		skip all "no $t"
		exit 0
	fi
done
for f in $B/ptsynth $B/ptrace-capture $B/ptrace-read; do
	if [ ! -x $f ]; then
		skip all "$f not built"
		exit 0
	fi
done
if ! gcc -m32 -O1 -fno-inline -o $W/mode32 $top/tests/decoder/mode32.c 2>$W/err; then
	skip all "gcc -m32 cannot build a 32-bit program (gcc-multilib: scripts/install-deps test): $(head -1 $W/err)"
	exit 0
fi
if ! $W/mode32 >/dev/null 2>&1; then
	skip all "this kernel does not run 32-bit programs"
	exit 0
fi
if [ "$(objdump -d $W/mode32 | grep -c 'call.*__x86.get_pc_thunk')" -lt 1 ]; then
	fail program "no call of __x86.get_pc_thunk.* in the 32-bit PIE"
fi

# run NAME PTSYNTH_OPTS...
run() {
	local n=$1 d=$W/$1
	shift
	if ! $B/ptsynth --ptrace "$@" -o $d.data --truth $d.truth -- $W/mode32 7 \
		>$d.out 2>$d.err; then
		if grep -q "under ptrace\|PTRACE_\|did not stop" $d.err; then
			skip "$n" "ptrace not allowed here: $(tail -1 $d.err)"
		else
			fail "$n/record" "$(tail -3 $d.err)"
		fi
		return
	fi
	# the PSB+s say 32-bit code: MODE.Exec with CS.D (perf's packet dump)
	if perf script -i $d.data -D 2>/dev/null | grep -q 'MODE.Exec.* 32$' &&
		! perf script -i $d.data -D 2>/dev/null | grep -q 'MODE.Exec.* 64$'; then
		pass "$n/mode-exec-32"
	else
		fail "$n/mode-exec-32" "no MODE.Exec 32 in perf's packet dump"
	fi
	perf script -i $d.data --itrace=be --ns -F tid,time,flags,ip,sym,dso,addr \
		>$d.perf 2>$d.perf.err
	if grep -q "instruction trace error" $d.perf; then
		fail "$n/perf" "$(grep -m1 'trace error' $d.perf)"
	fi
	local how
	for how in fast j2 reference; do
		local args=() t=--times
		case $how in
		j2) args=(-j 2) ;;
		reference) args=(--decoder reference) t= ;;
		esac
		if ! $B/ptrace-capture -q --names perf --all-branches "${args[@]}" \
			-i $d.data -o $d.$how.srb 2>$W/err ||
			! $B/ptrace-read -f jsonl $d.$how.srb >$d.$how.jsonl 2>>$W/err; then
			fail "$n/$how" "$(cat $W/err)"
			continue
		fi
		if python3 $top/tests/e2e/cmptruth.py $d.truth $d.$how.jsonl >$W/out; then
			pass "$n/$how-vs-truth"
			sed "s/^/  $n $how: /" $W/out
		else
			fail "$n/$how-vs-truth" "$(head -8 $W/out)"
		fi
		if python3 $top/tests/e2e/cmpperf.py $d.perf $d.$how.jsonl \
			--all-branches --addresses $t >$W/out; then
			pass "$n/$how-vs-perf"
			sed "s/^/  $n $how: /" $W/out
		else
			fail "$n/$how-vs-perf" "$(head -12 $W/out)"
		fi
	done
	# the dlfilter on the same perf.data: perf's branches (perf decodes
	# the objects by their ELF class, the dlfilter's continuity check
	# too), int $0x80 a syscall as in the walker; no discontinuity
	if [ -e "$lib" ]; then
		XDG_CACHE_HOME=$W/cache perfdl script -i $d.data --itrace=b \
			--dlfilter "$lib" --dlarg "ring=$d.dlf.srb" --dlarg all-branches \
			>$d.dlf.out 2>$d.dlf.err &&
			$B/ptrace-read -f jsonl $d.dlf.srb >$d.dlf.jsonl 2>>$d.dlf.err ||
			{ fail "$n/dlfilter" "$(tail -3 $d.dlf.err)"; return; }
		if python3 $top/tests/e2e/cmptruth.py $d.truth $d.dlf.jsonl >$W/out &&
			! grep -q '"type":"error"' $d.dlf.jsonl; then
			pass "$n/dlfilter-vs-truth"
			sed "s/^/  $n dlfilter: /" $W/out
		else
			fail "$n/dlfilter-vs-truth" "$(head -8 $W/out)" \
				"$(grep -m2 '"type":"error"' $d.dlf.jsonl)" "$(tail -2 $d.dlf.err)"
		fi
	else
		skip "$n/dlfilter" "$lib not built"
	fi
}

run retcomp --psb-period 1024
run no-retcomp --no-retcomp

[ $fails -eq 0 ]
