#!/usr/bin/env bash
# tests/decoder/e2e-ptwrite.sh - ptwrite payloads (PTW packets) through the
# three producers and the views (issue 33, part 4).
#
# The unit test's ptwrite_payloads cases (test_decoder_errata, exported as
# e2e-errata.sh does: 4- and 8-byte payloads, with and without IP) wrapped
# in a perf.data whose intel_pt event has the ptw bit (ptsynth --ptw):
#   - perf script --itrace=bew --dlfilter libstrace_dlf.so gives the same
#     ptwrite events (IP, payload, IP flag; perf keeps no size) as
#     ptrace-capture -i, in the same order among the branches;
#   - perf script --itrace=w prints the payloads that -f text shows;
#   - -f chrome has one instant (cat ptwrite) per event, with its ip and
#     payload, and loads as JSON; -f fxt one instant each, judged by
#     fxtcheck.py (and fxtperfetto.py: Perfetto's import keeps them);
#   - ptrace-capture -i --types ptwrite on a recording without the ptw bit
#     asks for them too; without it, none.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$O/bin" 2>/dev/null && pwd || echo "$O/bin")
T=$(cd "$O/tests" 2>/dev/null && pwd || echo "$O/tests")
L=$(cd "$O/lib" 2>/dev/null && pwd || echo "$O/lib")
W=$(mktemp -d /tmp/ptwrite.XXXXXX)
[ -n "${KEEP:-}" ] && echo "work $W (kept)" >&2 || trap 'rm -rf "$W"' EXIT
fails=0
lib=$L/libstrace_dlf.so
. "$top/tests/e2e/perfdl.inc" # perfdl: perf with a sanitizer build's runtime

pass() { echo "PASS: e2e-ptwrite/$1"; }
fail() { echo "FAIL: e2e-ptwrite/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; fails=$((fails + 1)); }
skip() { echo "SKIP: e2e-ptwrite/$1 ($2)"; }

for t in perf cc python3; do
	if ! command -v $t >/dev/null 2>&1; then
		skip all "no $t"
		exit 0
	fi
done
for f in $B/ptsynth $B/ptrace-capture $B/ptrace-read $T/test_decoder_errata $L/libstrace_dlf.so; do
	if [ ! -e $f ]; then
		skip all "$f not built"
		exit 0
	fi
done

mkdir -p $W/cases
STRACE_ERRATA_EXPORT=$W/cases $T/test_decoder_errata >$W/unit.out 2>&1 ||
	fail export "$(grep -v '^PASS' $W/unit.out | head -5)"

# ours.py JSONL: the ptwrite events and branches, one a line, as perf
# prints them (the ptwrite: "ptwrite IP payload ip-flag")
cat >$W/ours.py <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    t = e["type"]
    if t == "ptwrite":
        print("ptwrite %s %s %d" % (e["ip"], e["payload"],
                                    1 if e.get("flags", 0) & 0x100 else 0))
    elif t in ("call", "return", "jump", "syscall"):
        print("%s %s %s" % (t, e["from"], e["to"]))
EOF

n=0
for c in ptwrite_payloads-2 ptwrite_payloads-3; do
	d=$W/cases/$c
	[ -f $d.pt ] || { fail "$c/exported"; continue; }
	n=$((n + 1))
	python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
print('.text\n.globl _start\n_start:\n.byte ' + ','.join(str(x) for x in b))
" "$d.code" >"$d.s"
	if ! cc -nostdlib -static -no-pie -Wl,-Ttext=0x1000 -Wl,--build-id \
		-o "$d.elf" "$d.s" 2>"$W/err" ||
		! $B/ptsynth --wrap "$d.pt" --ptw -o "$d.data" -- "$d.elf" 2>"$W/err" ||
		! $B/ptsynth --wrap "$d.pt" -o "$d.noptw.data" -- "$d.elf" 2>"$W/err"; then
		fail "$c/wrap" "$(cat $W/err)"
		continue
	fi
	# -i: asked for by the recording's ptw bit
	if ! $B/ptrace-capture -q --all-branches -i "$d.data" -o "$d.i.srb" 2>"$W/err" ||
		! $B/ptrace-read -f jsonl "$d.i.srb" >"$d.i.jsonl"; then
		fail "$c/capture" "$(cat $W/err)"
		continue
	fi
	want=$(grep -c '"type":"ptwrite"' "$d.i.jsonl")
	nperf=$(perf script -i "$d.data" --itrace=w 2>/dev/null | grep -c 'payload:')
	if [ "$want" -ge 1 ] && [ "$want" = "$nperf" ]; then
		pass "$c/capture-as-many-as-perf ($want)"
	else
		fail "$c/capture-as-many-as-perf" "ours $want, perf $nperf"
	fi
	# the payloads as perf prints them, in -f text
	perf script -i "$d.data" --itrace=w -F synth 2>/dev/null |
		sed -n 's/.*payload: \(0x[0-9a-f]*\).*/\1/p' >$d.perf.payloads
	$B/ptrace-read --types ptwrite "$d.i.srb" |
		sed -n 's/.* payload=\(0x[0-9a-f]*\).*/\1/p' >$d.text.payloads
	if [ -s $d.perf.payloads ] && cmp -s $d.perf.payloads $d.text.payloads; then
		pass "$c/text-payloads-as-perf"
	else
		fail "$c/text-payloads-as-perf" "perf: $(tr '\n' ' ' <$d.perf.payloads)" "ours: $(tr '\n' ' ' <$d.text.payloads)"
	fi
	# the dlfilter: the same events from perf's samples
	rm -f "$d.dlf.srb"
	if ! perfdl script -i "$d.data" --itrace=bew --dlfilter "$lib" \
		--dlarg ring="$d.dlf.srb" >/dev/null 2>"$W/err" ||
		! $B/ptrace-read -f jsonl "$d.dlf.srb" >"$d.dlf.jsonl"; then
		fail "$c/dlfilter" "$(cat $W/err)"
	else
		python3 $W/ours.py "$d.i.jsonl" >"$d.i.list"
		python3 $W/ours.py "$d.dlf.jsonl" >"$d.dlf.list"
		if grep -q ptwrite "$d.i.list" && cmp -s "$d.i.list" "$d.dlf.list"; then
			pass "$c/dlfilter-same-as-capture"
		else
			fail "$c/dlfilter-same-as-capture" "$(diff "$d.i.list" "$d.dlf.list" | head -6)"
		fi
	fi
	# Chrome JSON: it loads, and has the instants
	if ! $B/ptrace-read -f chrome -o "$d.json" "$d.i.srb" 2>"$W/err"; then
		fail "$c/chrome" "$(cat $W/err)"
	elif python3 - "$d.json" "$d.i.jsonl" >$W/out 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
inst = [(e["args"]["ip"], e["args"]["payload"]) for e in d
        if e.get("cat") == "ptwrite" and e["ph"] == "i"]
want = [(e["ip"], e["payload"]) for e in map(json.loads, open(sys.argv[2]))
        if e["type"] == "ptwrite"]
if inst != want or not want:
    print("chrome", inst, "want", want)
    sys.exit(1)
EOF
	then
		pass "$c/chrome-instants"
	else
		fail "$c/chrome-instants" "$(cat $W/out)"
	fi
	# FXT: valid, one instant per event
	if ! $B/ptrace-read -f fxt -o "$d.fxt" "$d.i.srb" 2>"$W/err"; then
		fail "$c/fxt" "$(cat $W/err)"
	else
		got=$(python3 $top/tests/view/fxtcheck.py --dump "$d.fxt" 2>/dev/null | grep -c ' I ptwrite ptwrite$')
		if python3 $top/tests/view/fxtcheck.py "$d.fxt" >$W/out 2>&1 &&
			python3 $top/tests/view/fxtperfetto.py "$d.fxt" >>$W/out 2>&1 &&
			[ "$got" = "$want" ]; then
			pass "$c/fxt-instants ($got)"
		else
			fail "$c/fxt-instants" "$got instants, want $want" "$(tail -3 $W/out)"
		fi
	fi
	# no ptw bit: none by default, --types asks for them
	if $B/ptrace-capture -q -i "$d.noptw.data" -o "$d.n.srb" 2>"$W/err" &&
		$B/ptrace-capture -q --types 'ptwrite,call,return,syscall' -i "$d.noptw.data" -o "$d.t.srb" 2>>"$W/err"; then
		none=$($B/ptrace-read -f jsonl "$d.n.srb" | grep -c '"type":"ptwrite"')
		asked=$($B/ptrace-read -f jsonl "$d.t.srb" | grep -c '"type":"ptwrite"')
		if [ "$none" = 0 ] && [ "$asked" = "$want" ]; then
			pass "$c/types-asks"
		else
			fail "$c/types-asks" "without the ptw bit: $none, with --types: $asked, want 0 and $want"
		fi
	else
		fail "$c/types-asks" "$(cat $W/err)"
	fi
done
[ $n = 2 ] || fail count "only $n cases"
exit $((fails > 0))
