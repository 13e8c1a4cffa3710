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
# -f tree --srcline is judged by uftrace replay --srcline, -f report
# --srcline (its Source:Line column) by gdb's declaration of each row's
# function and by the tree.
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

# -f tree --srcline: each function's line as uftrace replay --srcline
# shows it (where it is declared), on the program built -pg (uftrace
# records it natively; ptsynth traces the same binary)
if ! command -v uftrace >/dev/null; then
	skip tree-uftrace "uftrace not installed"
elif ! pgbin=$(tests/corpus/corpus.sh bin pginline 2>"$work/err") ||
	! pgdir=$(tests/corpus/corpus.sh trace pginline default 2>>"$work/err") ||
	! "$bin/ptrace-capture" -q -i "$pgdir/trace.data" -o "$work/pg.srb" 2>>"$work/err"; then
	fail tree-uftrace "the -pg build or its trace: $(head -c 300 "$work/err")"
else
	(cd "$work" && uftrace record --srcline -d uf "$(cd "$top" && realpath "$pgbin")" >/dev/null 2>&1 &&
		uftrace replay --srcline -d uf >uf.txt 2>&1)
	"$bin/ptrace-read" -f tree --srcline "$work/pg.srb" >"$work/tree.txt" 2>&1
	# "name() { /* FILE:LINE */" or "name(); /* ... */" -> name FILE:LINE
	pairs() { sed -n 's/^.*| *\([A-Za-z_][A-Za-z0-9_.]*\)()\( {\)\{0,1\};\{0,1\} \/\* \(.*:[0-9][0-9]*\) \*\/$/\1 \3/p' "$1" | sort -u; }
	pairs "$work/uf.txt" >"$work/uf.pairs"
	pairs "$work/tree.txt" >"$work/tree.pairs"
	both=$(join "$work/uf.pairs" "$work/tree.pairs" | wc -l)
	same=$(comm -12 "$work/uf.pairs" "$work/tree.pairs" | wc -l)
	if [ "$both" -gt 0 ] && [ "$both" -eq "$same" ] &&
		grep -q '^# DURATION     TID     FUNCTION \[SOURCE\]$' "$work/tree.txt"; then
		pass "tree-uftrace ($same functions both show: the same FILE:LINE as uftrace replay --srcline; $(wc -l <"$work/uf.pairs") in uftrace's, $(wc -l <"$work/tree.pairs") in ours)"
	else
		fail tree-uftrace "$both functions both show, $same the same" \
			"uftrace: $(head -5 "$work/uf.pairs" | tr '\n' ';')" "ours: $(head -5 "$work/tree.pairs" | tr '\n' ';')"
	fi
fi

# -f report --srcline: a Source:Line column after the function's name,
# the line where the function is declared (DW_AT_decl_file/line), judged
# by gdb: for each row's ELF name, its address (info address), the
# function whose block holds it (gdb.block_for_pc) and that symbol's
# symtab file and line, which gdb reads from the same DWARF attributes.
# perf's "??:0" (its SRCLINE_UNKNOWN) where no line is known, and for
# inlined rows; every line shown is also the tree's for that function.
# (Without libc6-dbg only the program's own rows have a line.)
"$bin/ptrace-read" -f report --srcline "$work/i.srb" >"$work/rep.txt" 2>&1
"$bin/ptrace-read" -f tree --srcline "$work/i.srb" >"$work/itree.txt" 2>&1
if ! command -v gdb >/dev/null; then
	skip report-gdb "gdb not installed"
elif [ "$(gdb -batch -nx -ex 'python print(6 * 7)' 2>/dev/null)" != 42 ]; then
	skip report-gdb "this gdb has no Python"
else
	cat >"$work/decl.py" <<'PY'
import gdb, os, re
gdb.execute("set pagination off")
def run(cmd):
    try:
        return gdb.execute(cmd, to_string=True)
    except gdb.error:
        return ""
for name in open(os.environ["NAMES"]).read().split():
    # the function at the ELF symbol's address (an alias too)
    m = re.search(r"(?:at address|is at) (0x[0-9a-f]+)", run("info address %s" % name))
    b = None
    if m:
        try:
            b = gdb.block_for_pc(int(m.group(1), 16))
        except RuntimeError:
            pass
    # out of inlined blocks to the function's own: the one in the file's
    while b is not None and b.superblock is not None and not b.superblock.is_static:
        b = b.superblock
    fn = b.function if b is not None else None
    if fn is not None and fn.symtab is not None and fn.line:
        print("DECL %s %s:%d" % (name, fn.symtab.filename, fn.line))
    # every function of that name (static ones of two files)
    f = None
    for l in run("info functions ^%s$" % re.escape(name)).splitlines():
        if l.startswith("File ") and l.endswith(":"):
            f = l[5:-1]
        elif f and re.match(r"\d+:", l) and not l.startswith("0:"):
            print("DECL %s %s:%s" % (name, f, l.split(":")[0]))
PY
	out=$(python3 - "$work/dsos" "$work/rep.txt" "$work/itree.txt" "$work" <<'PY'
import os, re, subprocess, sys
paths = {}
for l in open(sys.argv[1]):
    m = re.search(r'path="([^"]*)"', l)
    if m:
        paths[os.path.basename(m.group(1))] = m.group(1)
lines = open(sys.argv[2]).read().splitlines()
head = lines[0]
if not head.endswith("Source:Line") or "DSO" not in head:
    print("0 0 0 0 0 header: %s" % head)
    sys.exit()
dcol = head.index("DSO")
rows = {}
for l in lines[2:]:
    f = l[dcol:].split()
    if len(f) == 3:
        rows.setdefault(f[0], []).append((f[1], f[2]))
tree = set()
for l in open(sys.argv[3]):
    m = re.search(r"\| *(\S+)\(\)(?: \{|;) /\* (.*:\d+) \*/$", l)
    if m:
        tree.add((m.group(1), m.group(2)))
n = bad = unknown = gdbonly = nottree = nojudge = 0
msgs = []
for dso, rs in rows.items():
    if dso not in paths:
        continue
    names = os.path.join(sys.argv[4], "names")
    open(names, "w").write("\n".join(r[0] for r in rs))
    env = dict(os.environ, NAMES=names)
    out = subprocess.run(["gdb", "-batch", "-nx", "-iex", "set debuginfod enabled off", "-x", os.path.join(sys.argv[4], "decl.py"), paths[dso]],
                         capture_output=True, text=True, env=env).stdout
    decl = {}
    for l in out.splitlines():
        if l.startswith("DECL "):
            decl.setdefault(l.split()[1], set()).add(l.split()[2])
    for name, src in rs:
        if src == "??:0":
            unknown += 1
            if name in decl:
                gdbonly += 1
                if len(msgs) < 5:
                    msgs.append("%s %s: ours ??:0, gdb %s" % (dso, name, decl[name]))
            continue
        n += 1
        if (name, src) not in tree:
            nottree += 1
        if name not in decl:
            nojudge += 1
        elif src not in decl[name]:
            bad += 1
            if len(msgs) < 5:
                msgs.append("%s %s: ours %s, gdb %s" % (dso, name, src, sorted(decl.get(name, ()))))
print(n, bad, unknown, gdbonly, nottree, nojudge, "; ".join(msgs))
PY
)
	read -r n bad unknown gdbonly nottree nojudge msg <<<"$out"
	if [ "${n:-0}" -ge 3 ] && [ "$bad" -eq 0 ] && [ "$gdbonly" -eq 0 ] && [ "$nottree" -eq 0 ] &&
		[ $((nojudge * 10)) -le "$n" ] &&
		grep -q ' main  *tests/corpus/inline\.c:48$' "$work/rep.txt" &&
		grep -q ' leaf  *tests/corpus/inline\.c:10$' "$work/rep.txt"; then
		pass "report-gdb ($n rows with a Source:Line: $((n - nojudge)) equal gdb's declaration of the function, $nojudge gdb finds no function of that name for; all the tree's; $unknown ??:0, gdb knows none of them)"
	else
		fail report-gdb "$out"
	fi
fi
# inlined rows have no line of their own; --by thread and dso: no column
"$bin/ptrace-read" -f report --srcline --inline "$work/i.srb" >"$work/repi.txt" 2>&1
ni=$(grep -c ' (inlined)  *??:0$' "$work/repi.txt")
check "report-inline ($ni inlined rows, each ??:0)" \
	sh -c "[ $ni -gt 0 ] && ! grep -q ' (inlined)  *[^?]*:[0-9]*\$' '$work/repi.txt'"
for by in thread dso; do
	"$bin/ptrace-read" -f report --by $by "$work/i.srb" >"$work/by.txt" 2>&1
	"$bin/ptrace-read" -f report --by $by --srcline "$work/i.srb" >"$work/bys.txt" 2>&1
	check "report-by-$by (--srcline: the report as without it, $(wc -l <"$work/by.txt") lines)" \
		cmp -s "$work/by.txt" "$work/bys.txt"
done

# a DSO that is not there or has no debug information: no line, no error
check "no-debuginfo (the ld.so/libc lines only when their debug files are)" \
	"$bin/ptrace-read" -F from,srcline "$work/i.srb" -o /dev/null

# the DWARF tables kept in the cache (docs/cache.md): a cold run writes
# them, a warm one reads them, both print what --no-cache prints; a cache
# directory others may write into is not used (one warning)
mkdir -p "$work/dc"
XDG_CACHE_HOME=$work/dc "$bin/ptrace-read" -f tree --inline --srcline "$work/i.srb" >"$work/dc1.txt" 2>&1
XDG_CACHE_HOME=$work/dc "$bin/ptrace-read" -f tree --inline --srcline "$work/i.srb" >"$work/dc2.txt" 2>&1
XDG_CACHE_HOME=$work/dc "$bin/ptrace-read" --no-cache -f tree --inline --srcline "$work/i.srb" >"$work/dc0.txt" 2>&1
nd=$(ls "$work/dc/strace" 2>/dev/null | grep -c '\.dwarf$')
check "dwarf-cache ($nd tables written cold; warm and --no-cache print the same)" \
	sh -c "[ $nd -ge 2 ] && cmp -s '$work/dc0.txt' '$work/dc1.txt' && cmp -s '$work/dc0.txt' '$work/dc2.txt'"
mkdir -p "$work/gw/strace" && chmod 777 "$work/gw/strace"
XDG_CACHE_HOME=$work/gw "$bin/ptrace-read" -f tree --inline --srcline "$work/i.srb" >"$work/gw.txt" 2>"$work/gw.err"
check "dwarf-cache-refused ($(head -c 120 "$work/gw.err"))" \
	sh -c "[ \$(grep -c 'is not used: others may write into it' '$work/gw.err') -eq 1 ] &&
		[ -z \"\$(ls '$work/gw/strace')\" ] && cmp -s '$work/dc0.txt' '$work/gw.txt'"
finish
