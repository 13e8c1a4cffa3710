#!/usr/bin/env bash
# tests/view/e2e-hostile-names.sh - names that would inject into a terminal
# or split a line (ESC sequences, newline, CR, DEL, a C1 CSI, bad UTF-8 in
# symbols, a thread, a DSO path, source files, mapping paths) are shown by
# the views' one rule (view_put_clean(), cli/view/fmt_names.c: a '?' for
# each such byte, every other byte as it is):
#   - text, -F, tree, report (by function, thread, DSO), folded and svg
#     of a ring made by tests/view/hostile_ring have none of those bytes,
#     show the names escaped (not dropped), keep good UTF-8 byte for byte,
#     and a name never splits a line (every folded stack has its count,
#     every tree line its thread column);
#   - -f coverage and lcov of an object and a source file named so
#     (cc -g): the same, and every lcov line is a record;
#   - JSON lines and chrome escape as JSON does: the names read back whole;
#   - ptrace-read's messages (a coverage object without a line table) and
#     ptrace-capture's warnings (a mapping whose file is gone, in a
#     perf.data made by ptsynth --wrap) show the path escaped, on one line.
# No corpus: the ring, the object and the recording are made here.
T=hostile-names
. "$(dirname "$0")/../e2e/lib.sh"

tool=$top/$O/tests/hostile_ring
read=$bin/ptrace-read
if [ ! -x "$tool" ]; then
	fail build "$tool missing: make tests builds it"
	finish
	exit
fi

# bytes a terminal takes as controls: ESC, CR, DEL, 0xff (bad UTF-8) and
# 0x9b (a C1 CSI; no good character of these names has it)
bad_bytes() { LC_ALL=C tr -cd '\033\r\177\377\233' <"$1" | wc -c; }
esc=$(printf 'esc?[31mred?[0m')
utf8=$(printf 'utf8_\303\251_ok')

"$tool" "$work/h.srb" || fail ring "hostile_ring failed"

# view NAME WANT ARGS...: ptrace-read ARGS into $work/NAME.out: exit 0,
# no control byte in its output nor messages, WANT (a name escaped) in it
view() {
	local name=$1 want=$2 rc
	shift 2
	timeout 30 "$read" "$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(bad_bytes "$work/$name.out")" -eq 0 ] &&
		[ "$(bad_bytes "$work/$name.err")" -eq 0 ] &&
		LC_ALL=C grep -qF -- "$want" "$work/$name.out"; then
		pass "$name"
	else
		fail "$name" "exit $rc, $(bad_bytes "$work/$name.out") control bytes, want '$want'" \
			"$(head -c 400 "$work/$name.out" | cat -v)"
	fi
}
view text "<$esc>" "$work/h.srb"
view fields "$esc (/tmp/lib?[2J?evil?.so)" -F tid,comm,type,from,to,sym,dso "$work/h.srb"
view tree "$esc() {" -f tree "$work/h.srb"
view report "  $esc" -f report "$work/h.srb"
view report-thread "4242 thr?[5m??name" -f report --by thread "$work/h.srb"
view report-dso "/tmp/lib?[2J?evil?.so" -f report --by dso "$work/h.srb"
view folded "main;$esc;clear?[2J?[H 1000" -f folded "$work/h.srb"
view svg "$esc" -f svg "$work/h.srb"
for v in text tree report folded svg; do
	LC_ALL=C grep -qF "$utf8" "$work/$v.out" || fail "$v/utf8-kept" "no '$utf8'"
done

# a newline in a name splits no line
n=$(grep -vc ' [0-9][0-9]*$' "$work/folded.out")
[ "$n" -eq 0 ] && pass folded/count-on-every-line ||
	fail folded/count-on-every-line "$n lines without a count"
n=$(tail -n +2 "$work/tree.out" | grep -vc '\[  4242\] | ')
[ "$n" -eq 0 ] && pass tree/one-line-a-frame || fail tree/one-line-a-frame "$n lines split"
n=$(tail -n +3 "$work/report.out" | grep -vc '^ *[0-9][0-9.]* us ')
[ "$n" -eq 0 ] && pass report/one-line-a-row || fail report/one-line-a-row "$n lines split"
n=$(grep -vc '^[0-9]' "$work/text.out")
[ "$n" -eq 0 ] && pass text/one-line-an-event || fail text/one-line-an-event "$n lines split"

# JSON lines and chrome escape as JSON: the names read back whole
if command -v python3 >/dev/null; then
	"$read" -f jsonl "$work/h.srb" >"$work/h.jsonl" &&
		"$read" -f chrome -o "$work/h.json" "$work/h.srb" &&
		python3 - "$work/h.jsonl" "$work/h.json" <<'EOF' && pass json-escaped || fail json-escaped
import json, sys
names = {json.loads(l).get("name") for l in open(sys.argv[1])}
assert "esc\x1b[31mred\x1b[0m" in names and "new\nline 99" in names, names
c = json.load(open(sys.argv[2]))
ev = c["traceEvents"] if isinstance(c, dict) else c
assert any(e.get("name") == "esc\x1b[31mred\x1b[0m" for e in ev)
EOF
else
	skip json-escaped "no python3"
fi

# coverage: an object and its source file named with controls
src=$(printf '%s/src\033[31m\nx.c' "$work")
obj=$(printf '%s/obj\033[2J\r\nx' "$work")
printf 'int f(int x) { return x * 3; }\nint main(void) { return f(2); }\n' >"$src"
if command -v nm >/dev/null && cc -g -O0 -o "$obj" "$src" 2>/dev/null; then
	main=$(nm "$obj" | awk '$3 == "main" { print "0x" $1 }')
	"$tool" "$work/cov.srb" "$obj" "$main" 16 || fail cov-ring "hostile_ring failed"
	view coverage "src?[31m?x.c:2" -f coverage "$work/cov.srb"
	LC_ALL=C grep -qF "obj?[2J??x'" "$work/coverage.out" ||
		fail coverage/object-path "$(cat -v "$work/coverage.out")"
	view lcov "SF:$work/src?[31m?x.c" -f lcov "$work/cov.srb"
	n=$(grep -Evc '^(TN:|SF:|FN:|FNDA:|FNF:|FNH:|DA:|LF:|LH:|end_of_record$)' "$work/lcov.out")
	[ "$n" -eq 0 ] && pass lcov/records || fail lcov/records "$n lines no record"
else
	skip coverage "no nm, or cc -g failed"
fi

# ptrace-read's message names the object escaped, on one line
"$tool" "$work/nope.srb" "$(printf '%s/nope\033[31m\nx' "$work")" 0x1000 16
"$read" -f coverage "$work/nope.srb" >/dev/null 2>"$work/nope.err"
if grep -q "nope?\[31m?x: ran, but has no line table" "$work/nope.err" &&
	[ "$(bad_bytes "$work/nope.err")" -eq 0 ]; then
	pass read-message-escaped
else
	fail read-message-escaped "$(cat -v "$work/nope.err")"
fi

# ptrace-capture's warning about a mapping whose file is gone
code=$(printf 'code\033[2J\r\nx')
cp "$tool" "$work/$code"
printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\043' >"$work/psb.pt"
if (cd "$work" && "$bin/ptsynth" --wrap psb.pt -o w.data -- "./$code") >/dev/null 2>&1; then
	rm -f "$work/$code"
	timeout 30 "$bin/ptrace-capture" -q -i "$work/w.data" -o "$work/w.srb" 2>"$work/w.err"
	if grep -q "cannot read .*/code?\[2J??x (No such file or directory): code there cannot be decoded" "$work/w.err" &&
		[ "$(bad_bytes "$work/w.err")" -eq 0 ] && [ "$(wc -l <"$work/w.err")" -eq 1 ]; then
		pass capture-warning-escaped
	else
		fail capture-warning-escaped "$(cat -v "$work/w.err")"
	fi
else
	fail capture-warning-escaped "ptsynth --wrap failed"
fi
finish
