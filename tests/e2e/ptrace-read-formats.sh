#!/usr/bin/env bash
# tests/e2e/ptrace-read-formats.sh - generate sample events, read them back
# as raw, JSON lines and text, and check each against ground truth:
#   raw   byte-exact against the events region of the ring file itself;
#   jsonl every field against the raw record, decoded independently with
#         the type table parsed from include/strace/event.h;
#   text  the same events as the JSON, line by line;
#   ring  a saved file read again gives identical JSON lines, names included;
# plus --types filters, --list-types and docs/events.md coverage.
T=ptrace-read-formats
. "$(dirname "$0")/lib.sh"
cd "$top"
PR="$top/$O/bin/ptrace-read"
ring=/dev/shm/e2e_formats_$$.srb
on_exit() { rm -f "$ring"; }

if [ ! -x "$PR" ]; then
	echo "FAIL: $T/build ($PR missing)"
	exit 1
fi
if ! command -v python3 >/dev/null; then
	echo "SKIP: $T/all (python3 is needed to check JSON)"
	exit 0
fi

N=20000
check generate "$PR" --generate $N -o "$ring"
"$PR" -f raw -o "$work/raw" "$ring"; rc=$?
check raw_exit [ $rc -eq 0 ]
"$PR" -f jsonl -o "$work/jsonl" "$ring"; rc=$?
check jsonl_exit [ $rc -eq 0 ]
"$PR" "$ring" > "$work/text"; rc=$?
check text_exit [ $rc -eq 0 ]

# raw == the ring's events region: header | strings | events[capacity],
# so the events start capacity * 32 bytes before the end of the file
"$PR" --stat "$ring" > "$work/stat"
cap=$(awk '/^capacity:/ { print $2 }' "$work/stat")
fsize=$(stat -c %s "$ring")
start=$((fsize - cap * 32))
tail -c +$((start + 1)) "$ring" | head -c $((N * 32)) > "$work/region"
check raw_size [ "$(stat -c %s "$work/raw")" -eq $((N * 32)) ]
check raw_byte_exact cmp -s "$work/raw" "$work/region"

cat > "$work/check.py" <<'EOF'
import json, re, struct, sys

hdr = open("include/strace/event.h").read()
types = {}
for m in re.finditer(r'X\((\w+), (\d+), "(\w+)", (\w+), "(\w*)", (\w+), '
                     r'"(\w*)", (\w+),', hdr):
    types[int(m[2])] = (m[3], m[5], m[6], m[7], m[8])
reasons = {}
for m in re.finditer(r'X\((\w+), (\d+), "(\w+)"\)', hdr):
    reasons[int(m[2])] = m[3]
assert len(types) >= 28 and len(reasons) >= 11, "cannot parse event.h"
# error codes: value -> (name, text), from include/strace/error.h
eh = re.sub(r'\\\n', '\n', open("include/strace/error.h").read())
codes = {}
for m in re.finditer(r'X\((\w+), (\d+), "(\w+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)', eh):
    codes[int(m[2])] = (m[3], "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m[4])))
assert len(codes) >= 40, "cannot parse error.h"

raw = open(sys.argv[1], "rb").read()
lines = open(sys.argv[2], encoding="utf-8").read().splitlines()
text = open(sys.argv[3], encoding="utf-8").read().splitlines()
errors = []
def err(msg):
    errors.append(msg)
    if len(errors) > 10:
        print("\n".join(errors)); sys.exit(1)

if len(raw) != 32 * len(lines):
    err("raw has %d records, jsonl %d lines" % (len(raw) // 32, len(lines)))
objs = []
for i, line in enumerate(lines):
    try:
        objs.append(json.loads(line))
    except ValueError as e:
        err("line %d is not JSON: %s: %r" % (i, e, line))
syms, dsos, seen = {}, {}, set()
n_err = [0]
for o in objs:
    if o["type"] == "symbol":
        syms.setdefault(o["name"], set()).add(int(o["start"], 16))
    if o["type"] == "dso":
        dsos.setdefault(o["path"].rsplit("/", 1)[-1], set()).add(int(o["start"], 16))

def sym_ok(s, addr):
    m = re.fullmatch(r"(.*?)(?:\+0x([0-9a-f]+))?", s, re.S)
    name, off = m[1], int(m[2] or "0", 16)
    if name.startswith("[") and name.endswith("]"):
        return addr - off in dsos.get(name[1:-1], ())
    return addr - off in syms.get(name, ())

for i, o in enumerate(objs):
    t, fl, tid, tm, a, b = struct.unpack_from("<HHIQQQ", raw, 32 * i)
    name, an, ak, bn, bk = types[t]
    seen.add(name)
    want = {"seq": i, "type": name, "tid": tid, "time": tm}
    if fl:
        want["flags"] = fl
    if fl and name == "error" and fl in codes:
        want["error"] = codes[fl][0]
    for n, k, v in ((an, ak, a), (bn, bk, b)):
        if not n:
            continue
        if k in ("ADDR", "HEX"):
            want[n] = "0x%x" % v  # strings: exact beyond 2^53
        elif k == "DEC":
            want[n] = v
        elif k == "REASON":
            want[n] = reasons.get(v, "unknown")
        elif k == "BLOCK":
            want[n] = {"insns": v >> 32, "bytes": v & 0xffffffff}
        elif k == "STR":
            if not isinstance(o.get(n), str):
                err("seq %d: %s is not a resolved string: %r" % (i, n, o.get(n)))
            want[n] = o.get(n)
        if k == "ADDR" and n + "_sym" in o:
            if not sym_ok(o[n + "_sym"], v):
                err("seq %d: %s_sym %r does not name 0x%x" % (i, n, o[n + "_sym"], v))
            want[n + "_sym"] = o[n + "_sym"]
    if "comm" in o:
        want["comm"] = o["comm"]
    if o != want:
        err("seq %d: got %r want %r" % (i, o, want))

missing = set(t[0] for v, t in types.items() if v != 0) - seen
if missing:
    err("types never generated: %s" % sorted(missing))
n_sym = sum(1 for o in objs for k in o if k.endswith("_sym"))
if n_sym < len(objs) // 4:
    err("only %d addresses have names" % n_sym)
if not any(s.startswith("[") for o in objs for k, s in o.items() if k.endswith("_sym")):
    err("no DSO fallback name seen")

# text: same events, same numbers and names (control bytes shown as '?')
def textform(s):
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in s)
if len(text) != len(objs):
    err("text has %d lines, jsonl %d" % (len(text), len(objs)))
for i, (line, o) in enumerate(zip(text, objs)):
    f = line.split(" ")
    tidf = f[2].split("/", 1)
    if int(f[0]) != o["seq"] or int(tidf[0]) != o["tid"] or \
       f[1] != "%d.%09d" % (o["time"] // 10**9, o["time"] % 10**9):
        err("text line %d: %r vs %r" % (i, line, o))
    if "comm" in o and (len(tidf) < 2 or tidf[1] != textform(o["comm"])):
        err("text line %d: thread name %r vs %r" % (i, line, o["comm"]))
    rest = line.split(None, 3)[3] if len(line.split(None, 3)) > 3 else ""
    if not rest.startswith(o["type"]):
        err("text line %d: type %r vs %r" % (i, line, o["type"]))
    for k, v in o.items():
        if k.endswith("_sym"):
            base = k[:-4]
            frag = "%s=%s <%s>" % (base, o[base], textform(v))
            if frag not in line:
                err("text line %d: %r lacks %r" % (i, line, frag))
    if "error" in o:
        nm, txt = codes[o["flags"]]
        frag = " code=%s (0x%x): %s" % (nm.upper(), o["flags"], txt)
        if not line.endswith(frag):
            err("text line %d: %r does not end in %r" % (i, line, frag))
        n_err[0] += 1
if errors:
    print("\n".join(errors)); sys.exit(1)
if not n_err[0]:
    err("no error event with a named code")
print("checked %d events, %d names, %d named error codes" % (len(objs), n_sym, n_err[0]))
EOF
if out=$(python3 "$work/check.py" "$work/raw" "$work/jsonl" "$work/text" 2>&1); then
	pass jsonl_matches_raw_and_text
	echo "  $out" >&2
else
	fail jsonl_matches_raw_and_text "$out"
fi

# --no-comm drops thread names; --from-end on a closed ring reads nothing
"$PR" --no-comm -f jsonl "$ring" | head -n 100 > "$work/nocomm"
check no_comm_json bash -c '[ -s "$0" ] && ! grep -q "\"comm\"" "$0"' "$work/nocomm"
check no_comm_text bash -c '"$0" --no-comm "$1" | head -n 100 | awk "\$3 ~ /\// { bad = 1 } END { exit bad }"' "$PR" "$ring"
check from_end_empty [ "$("$PR" --from-end "$ring" | wc -l)" -eq 0 ]

# -f ring: a saved file, read again later, gives the same JSON, names too
"$PR" -f ring -o "$work/saved.srb" "$ring"; rc=$?
check save_ring_exit [ $rc -eq 0 ]
cp "$work/saved.srb" "$work/copied.srb"
rm -f "$ring" # the names must come from the saved file alone
"$PR" -f jsonl -o "$work/jsonl2" "$work/copied.srb"; rc=$?
check saved_read_exit [ $rc -eq 0 ]
check saved_jsonl_identical cmp -s "$work/jsonl" "$work/jsonl2"
check saved_has_names grep -q '"from_sym":"main' "$work/jsonl2"
check saved_stat_archive grep -q '^mode: *archive' <("$PR" --stat "$work/copied.srb")
check save_refuses_existing_file bash -c '! "$0" -f ring -o "$1" "$1" 2>/dev/null' "$PR" "$work/copied.srb"
# a save whose last batch makes the archive grow (65536 events fill it;
# closing the writer then touched the header where the mapping had been
# before it moved: SIGSEGV)
"$PR" --generate 65636 -o "$work/big.srb" && "$PR" -f ring -o "$work/bigsaved.srb" "$work/big.srb"; rc=$?
check save_ring_grown_at_close [ $rc -eq 0 ]
check save_ring_grown_all_read [ "$("$PR" -f raw "$work/bigsaved.srb" | wc -c)" -eq $((65636 * 32)) ]

# --types: inclusion, globs, exclusion; the counts come from the JSON above
count_types() { python3 -c '
import json, sys, fnmatch
inc = sys.argv[2].split(",")
n = 0
for line in open(sys.argv[1]):
    t = json.loads(line)["type"]
    pos = [p for p in inc if not p.startswith("-")]
    ok = any(fnmatch.fnmatchcase(t, p) for p in pos) if pos else True
    if any(fnmatch.fnmatchcase(t, p[1:]) for p in inc if p.startswith("-")):
        ok = False
    n += ok
print(n)' "$work/jsonl" "$1"; }
for pat in 'call,ret*' '-block' '-block,-inst_*,-mem_*' 'trace_*,lost' 'symbol'; do
	want=$(count_types "$pat")
	got=$("$PR" -f jsonl --types "$pat" "$work/copied.srb" | wc -l)
	types_got=$("$PR" -f jsonl --types "$pat" "$work/copied.srb" | python3 -c '
import json, sys; print(",".join(sorted(set(json.loads(l)["type"] for l in sys.stdin))))')
	if [ "$got" -eq "$want" ] && [ "$want" -gt 0 ]; then
		pass "types_${pat//[^a-z_]/_}"
	else
		fail "types_${pat//[^a-z_]/_}" "--types '$pat': $got lines ($types_got), want $want"
	fi
done
"$PR" --types 'call,nosuchtype' "$work/copied.srb" > /dev/null 2> "$work/err"; rc=$?
check types_bad_pattern_exit_2 [ $rc -eq 2 ]
check types_bad_pattern_named grep -q "'nosuchtype' matches no event type" "$work/err"
"$PR" --types '' "$work/copied.srb" > /dev/null 2>&1; rc=$?
check types_empty_exit_2 [ $rc -eq 2 ]

# --list-types lists exactly the table of event.h; docs/events.md has them
python3 - "$PR" > "$work/lt" 2>&1 <<'EOF'
import re, subprocess, sys
hdr = open("include/strace/event.h").read()
want = {m[2]: m[1] for m in re.finditer(r'X\(\w+, (\d+), "(\w+)",', hdr)}
want.pop("pad", None)
out = subprocess.run([sys.argv[1], "--list-types"], capture_output=True, text=True).stdout
got = {l.split()[1]: l.split()[0] for l in out.splitlines()[1:]}
doc = open("docs/events.md").read()
bad = [n for n in want if "`%s`" % n not in doc]
if got != want or bad:
    print("list-types:", got, "want:", want, "undocumented:", bad); sys.exit(1)
EOF
check list_types_is_the_table [ $? -eq 0 ]
check docs_cover_every_type [ ! -s "$work/lt" ]

finish
