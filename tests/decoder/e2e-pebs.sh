#!/usr/bin/env bash
# tests/decoder/e2e-pebs.sh - PEBS-via-PT (issue 33): what Tremont and
# Gracemont cores write into the trace for perf record -e
# intel_pt//u,cycles/aux-output/u, put into corpus traces.
#
# pebs_insert puts a record (BBP, BIPs, ..., BEP; after a TIP every
# other one a BEP with its IP bit and a FUP) after every 7th TNT or TIP
# packet of a corpus program's raw stream; the flow is unchanged. Then:
#   - ptrace-capture --pt (fast, bit by bit, -j 2): exactly the events of
#     the stream without them (--all-branches: every taken branch);
#   - --types pebs,pebs_item: one pebs event per record;
#   - the reference decoder (libipt 2.0.5 knows no BBP): error events that
#     name PEBS-via-PT, and no other;
#   - the static program's streams wrapped into perf.data (ptsynth --wrap,
#     the records' one with a cycles/aux-output/u event): perf script
#     gives the same branches for both, and dumps the same BBP, BIP and
#     BEP packets our packet layer reads (pebs_insert --dump);
#     ptrace-capture -i the same events for both but the records', which
#     the aux-output event asks for: their IPs are perf's PEBS samples'.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/$O/bin
T=$top/$O/tests
corpus=$top/$O/corpus
W=$(mktemp -d /tmp/e2e-pebs.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "work $W (kept)" >&2; else trap 'rm -rf "$W"' EXIT; fi
pass() { echo "PASS: e2e-pebs/$1"; }
fail() { echo "FAIL: e2e-pebs/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; }
skip() { echo "SKIP: e2e-pebs/$1 ($2)"; }

for f in $B/ptrace-capture $B/ptrace-read $B/ptsynth $T/pebs_insert; do
	if [ ! -x "$f" ]; then
		skip all "$f not built: make tests"
		exit 0
	fi
done

# decode NAME PT ARGS...: ptrace-capture --pt of the corpus program's
# code (raws) into $W/NAME.srb, its JSON lines without seq in
# $W/NAME.jsonl; stderr in $W/NAME.err
decode() {
	local name=$1 pt=$2
	shift 2
	rm -f "$W/$name.srb"
	"$B/ptrace-capture" -q --pt "$pt" "${raws[@]}" "$@" -o "$W/$name.srb" 2>"$W/$name.err" &&
		"$B/ptrace-read" -f jsonl "$W/$name.srb" | sed 's/"seq":[0-9]*,//' >"$W/$name.jsonl"
}
count() { # count TYPE JSONL
	grep -c "\"type\":\"$1\"" "$2"
}
flow() { # the flow's events of JSONL
	grep -E '"type":"(call|return|jump|syscall|sysret)"' "$1"
}
# the events of JSONL but the records' and the symbol definitions (a
# pebs event may name a symbol first)
nopebs() {
	grep -v -E '"type":"(pebs|pebs_item|symbol)"' "$1"
}

for name in static recurse fptr tailcall plt; do
	sb=$corpus/$name.sideband
	if [ ! -f "$sb" ]; then
		skip "$name" "no $sb: make tests"
		continue
	fi
	pt=$(awk '/^thread/ {print $3; exit}' "$sb")
	raws=()
	while read -r kw s e off path; do
		[ "$kw" = mmap ] || continue
		raws+=(--raw "$path:0x$off-$(printf 0x%x $((16#$e - 16#$s)))@0x$s")
	done <"$sb"
	if ! out=$("$T/pebs_insert" "$pt" "$W/$name.pebs.pt" 7); then
		fail "$name-insert" "$out"
		continue
	fi
	recs=${out%% *}
	if ! decode "$name.clean" "$pt" --all-branches; then
		fail "$name-clean" "$(cat "$W/$name.clean.err")"
		continue
	fi
	jumps=$(count jump "$W/$name.clean.jsonl")
	for dec in fast bitwise; do
		if decode "$name.$dec" "$W/$name.pebs.pt" --all-branches --decoder $dec &&
			cmp -s "$W/$name.clean.jsonl" "$W/$name.$dec.jsonl"; then
			pass "$name-$dec-same-branches ($recs records, $jumps jumps)"
		else
			fail "$name-$dec-same-branches" "$(cat "$W/$name.$dec.err")" \
				"$(diff "$W/$name.clean.jsonl" "$W/$name.$dec.jsonl" | head -5)"
		fi
	done
	if decode "$name.j2" "$W/$name.pebs.pt" --all-branches -j 2 --piece-bytes 4096 &&
		cmp -s "$W/$name.clean.jsonl" "$W/$name.j2.jsonl"; then
		pass "$name-j2-same-branches"
	else
		fail "$name-j2-same-branches" "$(diff "$W/$name.clean.jsonl" "$W/$name.j2.jsonl" | head -5)"
	fi
	# asked for: one pebs event per record, and the flow's events as
	# they were (with the packets' times: spread, the events held
	# between two timing packets are at most 4096, and the records'
	# events take their share, so a long interval may be cut elsewhere)
	if decode "$name.ev" "$W/$name.pebs.pt" --all-branches --exact-times \
		--types 'pebs,pebs_item,call,return,jump,syscall,sysret' &&
		decode "$name.exact" "$pt" --all-branches --exact-times &&
		[ "$(count pebs "$W/$name.ev.jsonl")" = "$recs" ] &&
		cmp -s <(flow "$W/$name.ev.jsonl") <(flow "$W/$name.exact.jsonl"); then
		pass "$name-pebs-events ($recs)"
	else
		fail "$name-pebs-events" "$(count pebs "$W/$name.ev.jsonl") pebs events, $recs records" "$(cat "$W/$name.ev.err")"
	fi
	# the reference: it cannot, and says so
	if decode "$name.ref" "$W/$name.pebs.pt" --all-branches --decoder reference; then
		errs=$(count error "$W/$name.ref.jsonl")
		named=$(grep -c '"error":"pebs"' "$W/$name.ref.jsonl")
		if [ "$errs" -ge 1 ] && [ "$errs" = "$named" ]; then
			pass "$name-reference-names-pebs-via-pt ($errs errors, $(count jump "$W/$name.ref.jsonl") of $jumps jumps)"
		else
			fail "$name-reference-names-pebs-via-pt" "$errs errors, $named of them pebs" \
				"$(grep '"type":"error"' "$W/$name.ref.jsonl" | head -3)"
		fi
	else
		fail "$name-reference-names-pebs-via-pt" "$(cat "$W/$name.ref.err")"
	fi
done

# --- through perf.data, and perf as the judge -------------------------
sb=$corpus/static.sideband
if [ ! -f "$sb" ] || [ ! -f "$W/static.pebs.pt" ]; then
	skip perf "no static corpus trace"
	exit 0
fi
pt=$(awk '/^thread/ {print $3; exit}' "$sb")
prog=$(awk '/^mmap/ {print $5; exit}' "$sb")
recs=$(grep -c '"type":"pebs"' "$W/static.ev.jsonl")
if ! "$B/ptsynth" --wrap "$pt" -o "$W/clean.data" -- "$prog" 2>"$W/err" ||
	! "$B/ptsynth" --wrap "$W/static.pebs.pt" --aux-output -o "$W/pebs.data" -- "$prog" 2>>"$W/err"; then
	fail wrap "$(cat "$W/err")"
	exit 0
fi
# capture DATA NAME ARGS...: ptrace-capture -i into NAME.jsonl (no seq)
capture() {
	local data=$1 name=$2
	shift 2
	rm -f "$W/$name.srb"
	"$B/ptrace-capture" -q --names perf "$@" -i "$data" -o "$W/$name.srb" 2>"$W/$name.err"
	capture_rc=$?
	[ -f "$W/$name.srb" ] && "$B/ptrace-read" -f jsonl "$W/$name.srb" | sed 's/"seq":[0-9]*,//' >"$W/$name.jsonl"
}
capture "$W/clean.data" i.clean --all-branches
capture "$W/pebs.data" i.pebs --all-branches
if [ "$(count pebs "$W/i.pebs.jsonl")" = "$recs" ] &&
	cmp -s <(nopebs "$W/i.pebs.jsonl") <(nopebs "$W/i.clean.jsonl"); then
	pass "i-same-branches-and-the-records ($recs pebs events: the aux-output event asks for them)"
else
	fail "i-same-branches-and-the-records" "$(count pebs "$W/i.pebs.jsonl") pebs events, $recs records" \
		"$(diff <(nopebs "$W/i.clean.jsonl") <(nopebs "$W/i.pebs.jsonl") | head -5)" "$(cat "$W/i.pebs.err")"
fi
capture "$W/pebs.data" i.ref --all-branches --decoder reference
if [ "$capture_rc" = 3 ] && grep -q '"error":"pebs"' "$W/i.ref.jsonl"; then
	pass "i-reference-partial-names-pebs-via-pt"
else
	fail "i-reference-partial-names-pebs-via-pt" "exit $capture_rc" "$(cat "$W/i.ref.err")"
fi
if ! command -v perf >/dev/null 2>&1; then
	skip perf "no perf"
	exit 0
fi
perf script -i "$W/clean.data" --itrace=be -F ip,addr,flags >"$W/perf.clean" 2>&1
perf script -i "$W/pebs.data" --itrace=be -F ip,addr,flags >"$W/perf.pebs" 2>&1
if [ -s "$W/perf.clean" ] && cmp -s "$W/perf.clean" "$W/perf.pebs"; then
	pass "perf-same-branches ($(wc -l <"$W/perf.clean") lines)"
else
	fail "perf-same-branches" "$(diff "$W/perf.clean" "$W/perf.pebs" | head -5)"
fi
# perf's dump of the packets against our packet layer's reading
perf script -i "$W/pebs.data" -D 2>/dev/null | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.match(r"^\.\s+([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*((?:BBP|BIP|BEP) .*)$", l.rstrip())
    if m:
        print(m.group(1), re.sub(r"\s+", " ", m.group(2)))' >"$W/perf.dump"
"$T/pebs_insert" --dump "$W/static.pebs.pt" >"$W/ours.dump"
if [ -s "$W/perf.dump" ] && cmp -s "$W/perf.dump" "$W/ours.dump"; then
	pass "perf-dumps-the-packets-we-read ($(wc -l <"$W/ours.dump") BBP, BIP, BEP)"
else
	fail "perf-dumps-the-packets-we-read" "$(diff "$W/perf.dump" "$W/ours.dump" | head -5)"
fi
# perf's PEBS samples (--itrace=o) and our pebs events: the same IPs
perf script -i "$W/pebs.data" --itrace=o -F ip 2>/dev/null | awk '{print $1}' >"$W/perf.ips"
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "pebs":
        print("%x" % int(e["ip"], 16))' "$W/i.pebs.jsonl" >"$W/our.ips"
if [ -s "$W/perf.ips" ] && cmp -s "$W/perf.ips" "$W/our.ips"; then
	pass "pebs-events-as-perfs-samples ($(wc -l <"$W/our.ips"))"
else
	fail "pebs-events-as-perfs-samples" "$(diff "$W/perf.ips" "$W/our.ips" | head -5)"
fi
true
