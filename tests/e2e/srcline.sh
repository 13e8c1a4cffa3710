#!/usr/bin/env bash
# tests/e2e/srcline.sh - ptrace-read -F ...,srcline (the DWARF layer,
# decoder/dwarf.c, through cli/srcline.c) judged by binutils' addr2line
# and by perf script's srcline, on the -O2 -g corpus program
# tests/corpus/inline.c (static functions inlined three deep): every
# from_srcline of the JSON lines equals `addr2line -e DSO ADDR` at that
# branch's address in its object, and every srcline of the text lines
# equals perf script -F ip,srcline --full-source-path's for the branch
# samples both print (perf writes the file's base name unless told
# --full-source-path). Without srcline, -F output is unchanged (the
# golden manifest); a line not known prints nothing, like perf.
# One named exception: in a DWARF 5 line table, binutils 2.40 (and perf,
# which runs addr2line) names the unit's primary file (entry 0) for the
# rows before a sequence's first DW_LNS_set_file, where the file register
# is 1 (DWARF 5, 6.2.2: its initial value); libdw and readelf name entry
# 1 (glibc's ld.so: dl-find_object.h:95 at 0x38c0, addr2line says
# dl-find_object.c:95). Those are counted apart ("file0"): the same line
# number, another file, at most 1 in 20.
T=srcline
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1

data=$O/corpus/inline.data
if [ ! -e "$data" ]; then
	fail all "no $data: run make tests"
	finish
	exit
fi
if ! "$bin/ptrace-capture" -q -i "$data" -o "$work/i.srb" 2>"$work/err" ||
	! "$bin/ptrace-read" --types dso "$work/i.srb" >"$work/dsos" 2>>"$work/err" ||
	! "$bin/ptrace-read" -f jsonl -F from,dso,srcline "$work/i.srb" >"$work/ours.jsonl" 2>>"$work/err" ||
	! "$bin/ptrace-read" -F from,srcline "$work/i.srb" >"$work/ours.txt" 2>>"$work/err"; then
	fail all "ptrace-capture or ptrace-read: $(head -c 300 "$work/err")"
	finish
	exit
fi

if ! command -v addr2line >/dev/null || ! command -v readelf >/dev/null; then
	skip addr2line "addr2line/readelf not installed: binutils"
else
	out=$(python3 - "$work/dsos" "$work/ours.jsonl" <<'PY'
import json, re, subprocess, sys
dsos = {}
for l in open(sys.argv[1]):
    m = re.search(r'start=0x([0-9a-f]+) path="([^"]*)"', l)
    if m:
        dsos[m.group(2)] = int(m.group(1), 16)
def text_base(path):
    # the first executable PT_LOAD, from its page (as ld.so maps it)
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    for l in out.splitlines():
        f = l.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            return int(f[2], 16) - (int(f[1], 16) & 4095)
    return None
want = {}
for l in open(sys.argv[2]):
    e = json.loads(l)
    s = e.get("from_srcline")
    if not s:
        continue
    path = e["from_dso"]
    if path not in dsos:
        continue
    want.setdefault(path, {})[int(e["from"], 16) - dsos[path]] = s
def same_but_file0(a, b):
    # the same line, another file name: BFD's DWARF 5 file 0 (above)
    return a.rsplit(":", 1)[-1] == b.rsplit(":", 1)[-1] and a != b
n = bad = file0 = 0
msgs = []
for path, offs in want.items():
    base = text_base(path)
    addrs = sorted(offs)
    out = subprocess.run(["addr2line", "-e", path] + ["%#x" % (a + base) for a in addrs],
                         capture_output=True, text=True).stdout.splitlines()
    for a, l in zip(addrs, out):
        l = re.sub(r" \(discriminator \d+\)$", "", l)
        n += 1
        if same_but_file0(l, offs[a]):
            file0 += 1
        elif l != offs[a]:
            bad += 1
            if len(msgs) < 5:
                msgs.append("%s %#x: ours %s, addr2line %s" % (path, a + base, offs[a], l))
print(n, bad, file0, len(want), "; ".join(msgs))
PY
)
	read -r n bad file0 nobj msg <<<"$out"
	if [ "${n:-0}" -gt 0 ] && [ "$bad" -eq 0 ] && [ $((file0 * 20)) -le "$n" ]; then
		pass "addr2line ($n distinct branch addresses in $nobj objects: $((n - file0)) srclines equal addr2line's, $file0 its DWARF 5 file 0)"
	else
		fail addr2line "$out"
	fi
	# the program's own code among them
	c=$(grep -c '"from_srcline":"[^"]*tests/corpus/inline.c:' "$work/ours.jsonl")
	check "program-lines ($c branches from inline.c with its line)" test "$c" -gt 20
fi

if ! command -v perf >/dev/null; then
	skip perf "perf not installed: linux-perf"
else
	perf script -i "$data" --itrace=b -F ip,srcline --full-source-path 2>/dev/null >"$work/perf.txt"
	out=$(python3 - "$work/perf.txt" "$work/ours.txt" <<'PY'
import re, sys
def pairs(path, ipre):
    # ip -> srcline: a branch's line, then "  FILE:LINE" when known
    d = {}
    last = None
    for l in open(path):
        l = l.rstrip("\n")
        if l.startswith("  ") and last is not None and not re.match(r"^ +[0-9a-f]+$", l):
            d.setdefault(last, set()).add(l.strip())
            continue
        m = re.match(ipre, l)
        last = int(m.group(1), 16) if m else None
    return d
perf = pairs(sys.argv[1], r"^ *([0-9a-f]+)\s*$")
ours = pairs(sys.argv[2], r"^([0-9a-f]+)\b")
n = bad = file0 = 0
msgs = []
for ip, s in ours.items():
    if ip not in perf:
        continue
    n += 1
    if len(s) == 1 and len(perf[ip]) == 1 and \
            next(iter(s)).rsplit(":", 1)[-1] == next(iter(perf[ip])).rsplit(":", 1)[-1] and s != perf[ip]:
        file0 += 1
    elif s != perf[ip]:
        bad += 1
        if len(msgs) < 5:
            msgs.append("%x: ours %s, perf %s" % (ip, sorted(s), sorted(perf[ip])))
print(n, bad, file0, len(perf), len(ours), "; ".join(msgs))
PY
)
	read -r n bad file0 np no msg <<<"$out"
	if [ "${n:-0}" -gt 0 ] && [ "$bad" -eq 0 ] && [ $((file0 * 20)) -le "$n" ]; then
		pass "perf ($n branch addresses both print a srcline for: $((n - file0)) the same, $file0 perf's DWARF 5 file 0; perf $np, ours $no)"
	else
		fail perf "$out"
	fi
fi

# --srcline: the text and JSON lines as without it, plus the keys; the
# same lines as -F's
"$bin/ptrace-read" "$work/i.srb" >"$work/plain.txt"
"$bin/ptrace-read" --srcline "$work/i.srb" >"$work/src.txt"
"$bin/ptrace-read" -f jsonl --srcline "$work/i.srb" >"$work/src.jsonl"
c=$(grep -c ' from_srcline=[^ ]*/tests/corpus/inline.c:[0-9]*' "$work/src.txt")
check "text-plus-keys ($c text lines from inline.c with from_srcline; the rest as without --srcline)" \
	sh -c "[ $c -gt 20 ] && sed 's/ [a-z]*_srcline=[^ ]*//g' '$work/src.txt' | cmp -s - '$work/plain.txt'"
# (-F from is operand a whatever its name: a symbol event's start too)
na=$(grep -c '"from_srcline":' "$work/src.jsonl")
nb=$(grep -o '"[a-z]*_srcline":"[^"]*"' "$work/src.jsonl" | sed 's/^"[a-z]*_srcline"://' | sort -u | wc -l)
nc=$( { grep -o '"[a-z]*_srcline":"[^"]*"' "$work/src.jsonl"; grep -o '"from_srcline":"[^"]*"' "$work/ours.jsonl"; } | sed 's/^"[a-z]*_srcline"://' | sort -u | wc -l)
check "jsonl ($na JSON lines with from_srcline; every line -F from,srcline gives among their $nb distinct ones)" \
	test "$na" -gt 20 -a "$nb" -eq "$nc"

# a DSO that is not there or has no debug information: no line, no error
check "no-debuginfo (the ld.so/libc lines only when their debug files are)" \
	"$bin/ptrace-read" -F from,srcline "$work/i.srb" -o /dev/null
finish
