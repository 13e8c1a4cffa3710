#!/usr/bin/env bash
# tests/e2e/fields.sh - ptrace-read -F/--fields, judged by perf script -F
# on the same perf.data: the calls and returns of corpus traces (decoded
# with perf's names, --names perf) as "tid from sym+off (dso) => to
# sym+off (dso)" equal perf script -F tid,ip,sym,symoff,dso,addr line by
# line (per thread, in order); on a per-CPU recording, with their CPU
# (cpu events), from ptrace-capture and from the dlfilter; JSON lines
# carry the chosen keys in the order given; bad lists are usage errors
# naming the field.
T=fields
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
B=$O/bin

for p in pgqsort threads exceptions; do
	data=$O/corpus/$p.data
	if [ ! -e "$data" ]; then
		fail "$p" "no $data: run make tests"
		continue
	fi
	if ! "$B/ptrace-capture" -q --names perf -i "$data" -o "$work/$p.srb" 2>"$work/err"; then
		fail "$p/capture" "$(head -c 300 "$work/err")"
		continue
	fi
	if ! command -v perf >/dev/null; then
		skip "$p/perf-script" "perf is not installed"
		continue
	fi
	# per thread, in order (the ring and perf order threads differently)
	"$B/ptrace-read" -F tid,from,sym,offset,dso,to --types call,return "$work/$p.srb" 2>"$work/err" |
		tr -s ' ' | sort -s -k1,1n >"$work/ours"
	perf script -i "$data" --itrace=b -F tid,ip,sym,symoff,dso,addr,flags 2>/dev/null |
		awk '$2 == "call" || $2 == "return"' |
		sed -E 's/^ *([0-9]+) +(call|return) +/\1 /' | tr -s ' ' | sort -s -k1,1n >"$work/perf"
	n=$(wc -l <"$work/ours")
	if [ "$n" -gt 100 ] && [ ! -s "$work/err" ] && cmp -s "$work/ours" "$work/perf"; then
		pass "$p/calls-and-returns-equal-perf-script ($n lines, $(cut -d' ' -f1 "$work/ours" | sort -u | wc -l) threads)"
	else
		fail "$p/calls-and-returns-equal-perf-script" "ours $n lines, perf's $(wc -l <"$work/perf")" \
			"$(diff "$work/ours" "$work/perf" | head -4 | cut -c1-300)"
	fi
done

# cpu: a per-CPU recording's events carry their CPU (cpu events where a
# thread moves), from ptrace-capture and from the dlfilter: -F
# tid,cpu,... equals perf script -F tid,cpu,... line by line
data=$O/corpus/threads-percpu.data
lib=$O/lib/libstrace_dlf.so
if [ -e "$data" ] && command -v perf >/dev/null; then
	. tests/e2e/perfdl.inc
	perf script -i "$data" --itrace=b -F tid,cpu,ip,sym,symoff,dso,addr,flags 2>/dev/null |
		awk '$3 == "call" || $3 == "return"' |
		sed -E 's/^ *([0-9]+) +(\[[0-9]+\]) +(call|return) +/\1 \2 /' | tr -s ' ' |
		sort -s -k1,1n >"$work/perf.cpu"
	"$B/ptrace-capture" -q --names perf -i "$data" -o "$work/pc.srb" 2>"$work/err"
	(cd "$work" && perfdl script -i "$top/$data" --itrace=b --dlfilter "$top/$lib" \
		--dlarg ring="$work/dl.srb" --dlarg names=perf >/dev/null 2>"$work/dl.err")
	for who in pc dl; do
		"$B/ptrace-read" -F tid,cpu,from,sym,offset,dso,to --types call,return "$work/$who.srb" 2>/dev/null |
			tr -s ' ' | sort -s -k1,1n >"$work/$who.cpu"
		n=$(wc -l <"$work/$who.cpu")
		moves=$("$B/ptrace-read" --types cpu "$work/$who.srb" 2>/dev/null | wc -l)
		if [ "$n" -gt 100 ] && [ "$moves" -gt 1 ] && cmp -s "$work/$who.cpu" "$work/perf.cpu"; then
			pass "percpu/$who-cpu-equals-perf-script ($n calls and returns, $moves cpu events, CPUs $(grep -o '\[[0-9]*\]' "$work/$who.cpu" | sort -u | tr -d '\n'))"
		else
			fail "percpu/$who-cpu-equals-perf-script" "$n lines, $moves cpu events" \
				"$(diff "$work/$who.cpu" "$work/perf.cpu" | head -4 | cut -c1-200)" "$(head -c 300 "$work/dl.err")"
		fi
	done
	# a per-thread recording: no CPU (perf's is -1 there too)
	if "$B/ptrace-read" -F cpu,type --types call "$work/threads.srb" 2>/dev/null | grep -qv '^\[-\] '; then
		fail "per-thread-cpu-not-known" "$("$B/ptrace-read" -F cpu,type --types call "$work/threads.srb" | sort | uniq -c | head -3)"
	else
		pass "per-thread-cpu-not-known ([-])"
	fi
fi

# JSON lines: the keys chosen, in order; symbols and DSOs beside each address
r=$work/pgqsort.srb
if [ -e "$r" ] && "$B/ptrace-read" -f jsonl -F type,tid,comm,pid,from,to,sym,offset,dso,flags,time,seq \
	--types call "$r" >"$work/j" 2>"$work/err" && python3 - "$work/j" >"$work/out" 2>&1 <<'PY'
import json, sys
want = ["type", "tid", "comm", "pid", "from", "from_sym", "from_dso", "to", "to_sym",
        "to_dso", "flags", "time", "seq"]
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if list(e) != want or e["type"] != "call" or not e["from"].startswith("0x"):
        sys.exit("keys %s" % list(e))
    n += 1
print("%d lines, keys %s" % (n, ",".join(want)))
sys.exit(0 if n > 100 else 1)
PY
then
	pass "jsonl-keys-in-order ($(cat "$work/out"))"
else
	fail "jsonl-keys-in-order" "$(head -c 300 "$work/out" "$work/err" 2>/dev/null)"
fi

# usage errors: exit 2, the field named
usage() {
	local name=$1 pat=$2 rc
	shift 2
	"$B/ptrace-read" "$@" >/dev/null 2>"$work/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$pat" "$work/err"; then
		pass "usage-$name"
	else
		fail "usage-$name" "exit $rc: $(head -2 "$work/err")"
	fi
}
if [ -e "$r" ]; then
	usage unknown "'cpus' is no field: seq, time" -F time,cpus "$r"
	usage twice "'tid' is given twice" -F tid,time,tid "$r"
	usage sym-alone "give from or to too" -F sym,dso "$r"
	usage offset-without-sym "give sym too" -F from,offset "$r"
	usage with-a-view "-F chooses the fields of the lines of -f text or jsonl" -f tree -F tid "$r"
fi
finish
