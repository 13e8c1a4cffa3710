#!/usr/bin/env bash
# tests/e2e/capture-archive.sh - record here, decode there (issue 32,
# part 3). A program with its own shared library (built here) and the
# corpus threads program, copied to a folder of their own, are recorded by
# ptsynth; every object the recording maps has its build-id in the
# perf.data (perf buildid-list, each equal to readelf -n of the file).
# The ring decoded in place is the reference. 'ptrace-capture -i perf.data
# --archive B.tar' bundles it (GNU tar lists and extracts it, its files
# equal to the originals); the program's folder is then moved away, and
#   - -i B.tar gives the reference ring byte for byte (ptrace-read -f
#     jsonl), reading nothing of the recorded paths nor /usr/lib/debug
#     (strace), and leaves nothing in $TMPDIR;
#   - -i perf.data --symfs ROOT (the extracted bundle) gives it too, and
#     perf script --symfs ROOT gives perf's own branches of the recording
#     made in place;
#   - an object of another build (at its path, under --symfs, in a
#     bundle) is refused with a message that names the file and both
#     build-ids; perf's build-id cache supplies the right one;
#   - hostile bundles (a member that leaves the folder by '..' or an
#     absolute name, a symbolic link, a hard link, an object of another
#     build, a tar cut short, garbage, a tar that is no bundle) are
#     refused with exit 1 and a message, and leave no ring and nothing in
#     $TMPDIR.
# A bundle made with objects missing is partial (exit 3, MANIFEST lines
# 'missing'). The -w perf.data of a live session (live_replay: ptsynth's
# recording through the fake kernel) is bundled and decoded the same way.
T=capture-archive
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
B=$top/$O/bin
for tool in "$B/ptsynth" "$B/ptrace-capture" "$B/ptrace-read"; do
	[ -x "$tool" ] || { echo "SKIP: $T/all (no $tool: run make tests)"; exit 0; }
done
if ! command -v qemu-x86_64 >/dev/null || ! command -v gcc >/dev/null; then
	echo "SKIP: $T/all (needs qemu-x86_64 for ptsynth and gcc)"
	exit 0
fi
# our temporary folders, an empty build-id cache, a home of our own
# (perf's ~/.debug, $HOME/.debug debug files): nothing of this machine's
export TMPDIR=$work/tmp PERF_BUILDID_DIR=$work/bidcache HOME=$work/home
mkdir -p "$TMPDIR" "$PERF_BUILDID_DIR" "$HOME"
has_perf=$(command -v perf >/dev/null && echo 1)

events() { "$B/ptrace-read" -f jsonl "$1"; }
tmp_empty() { [ -z "$(ls -A "$TMPDIR")" ]; }
# decode TAG ARGS...: ptrace-capture -q --no-cache ARGS -o TAG.srb; its
# exit status in $rc, its messages in $work/TAG.err, events in TAG.jsonl
decode() {
	local tag=$1
	shift
	rm -f "$work/$tag.srb" "$work/$tag.jsonl"
	"$B/ptrace-capture" -q --no-cache "$@" -o "$work/$tag.srb" 2>"$work/$tag.err"
	rc=$?
	[ -e "$work/$tag.srb" ] && events "$work/$tag.srb" >"$work/$tag.jsonl"
}

# --- the programs, in a folder of their own -----------------------------
app=$work/app
mkdir -p "$app"
cat >"$app/libdemo.c" <<'EOF'
int demo_mix(int x) { return x * 31 + 7; }
int demo_sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += demo_mix(i); return s; }
EOF
cat >"$app/demo.c" <<'EOF'
#include <stdio.h>
int demo_sum(int n);
int main(void) { printf("%d\n", demo_sum(50)); return 0; }
EOF
(cd "$app" && gcc -O1 -shared -fPIC -o libdemo.so libdemo.c &&
	gcc -O1 -o demo demo.c -L. -ldemo -Wl,-rpath,'$ORIGIN') ||
	{ fail build "gcc could not build the demo"; exit 1; }
threads=$(tests/corpus/corpus.sh bin threads 2>/dev/null) && cp "$threads" "$app/threads" ||
	{ fail build "no corpus program threads"; exit 1; }
record() { # NAME PROG: $work/NAME.data, recorded in $app (as corpus.sh does)
	(cd "$app" && env -i PATH=/usr/bin:/bin "$B/ptsynth" -o "$work/$1.data" -- "./$2" \
		>"$work/$1.out" 2>"$work/$1.synth") ||
		{ fail "$1/record" "$(tail -3 "$work/$1.synth")"; return 1; }
}
record demo demo && record threads threads || exit 1

# --- build-ids: perf buildid-list, judged by readelf -n ------------------
for p in demo threads; do
	if [ -z "$has_perf" ]; then skip "$p/buildid-list (perf is not installed)"; continue; fi
	bad="" n=0
	while read -r id path; do
		case $path in /*) ;; *) continue ;; esac
		got=$(readelf -n "$path" 2>/dev/null | sed -n 's/.*Build ID: *//p')
		[ "$id" = "$got" ] || bad="$bad $path($id vs $got)"
		n=$((n + 1))
	done < <(perf buildid-list -i "$work/$p.data" 2>/dev/null)
	want=3; [ $p = demo ] && want=4 # (the program, [libdemo,] ld.so, libc)
	if [ -z "$bad" ] && [ $n -eq $want ]; then
		pass "$p/buildid-list ($n objects, each readelf's build-id)"
	else
		fail "$p/buildid-list" "$n objects (want $want);$bad"
	fi
done

# --- the reference: decoded in place -------------------------------------
for p in demo threads; do
	decode $p.ref -i "$work/$p.data"
	[ $rc -eq 0 ] && [ -s "$work/$p.ref.jsonl" ] ||
		fail "$p/in-place" "exit $rc: $(head -c 400 "$work/$p.ref.err")"
done
if [ -n "$has_perf" ]; then
	perf script -i "$work/demo.data" --itrace=b -F ip,sym,symoff,dso,addr \
		>"$work/demo.perf" 2>/dev/null
fi

# --- bundle, judged by GNU tar -------------------------------------------
for p in demo threads; do
	"$B/ptrace-capture" -i "$work/$p.data" --archive "$work/$p.tar" 2>"$work/$p.arc.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "wrote $work/$p.tar" "$work/$p.arc.err" &&
		[ -z "$(ls "$work" | grep "$p.tar.tmp")" ]; then
		pass "$p/archive ($(stat -c %s "$work/$p.tar") bytes)"
	else
		fail "$p/archive" "exit $rc: $(cat "$work/$p.arc.err")"
	fi
done
list=$(tar -tvf "$work/demo.tar" 2>&1)
miss=""
for m in demo/perf.data demo/MANIFEST demo/HOST "demo/root$app/demo" \
	"demo/root$app/libdemo.so" demo/root/usr/lib/x86_64-linux-gnu/libc.so.6; do
	grep -q " $m\$" <<<"$list" || miss="$miss $m"
done
if [ -z "$miss" ] && ! grep -qv '^[-d]' <<<"$list"; then
	pass "gnu-tar-lists ($(wc -l <<<"$list") members, files and folders only)"
else
	fail gnu-tar-lists "missing:$miss" "$list"
fi
mkdir -p "$work/x"
if tar -xf "$work/demo.tar" -C "$work/x" 2>"$work/tar.err" &&
	cmp -s "$work/x/demo/perf.data" "$work/demo.data" &&
	cmp -s "$work/x/demo/root$app/demo" "$app/demo" &&
	cmp -s "$work/x/demo/root$app/libdemo.so" "$app/libdemo.so" &&
	cmp -s "$work/x/demo/root/usr/lib/x86_64-linux-gnu/libc.so.6" \
		/usr/lib/x86_64-linux-gnu/libc.so.6; then
	pass "gnu-tar-extracts (perf.data and objects equal to the originals)"
else
	fail gnu-tar-extracts "$(cat "$work/tar.err")"
fi
if grep -q "^object	$(readelf -n "$app/libdemo.so" | sed -n 's/.*Build ID: *//p')	$(stat -c %s "$app/libdemo.so")	$app/libdemo.so\$" \
	"$work/x/demo/MANIFEST" && grep -q '^recorded-on: ptsynth$' "$work/x/demo/HOST" &&
	grep -q '^bundled-cpu: ' "$work/x/demo/HOST"; then
	pass "manifest-and-host (build-id, size and path of each object; the machines)"
else
	fail manifest-and-host "$(cat "$work/x/demo/MANIFEST" "$work/x/demo/HOST")"
fi

# --- the objects moved away: decode there ---------------------------------
mv "$app" "$work/app.away"
decode demo.gone -i "$work/demo.data"
if [ $rc -eq 3 ] && grep -q "cannot read $app/demo" "$work/demo.gone.err"; then
	pass "moved-away (in place: exit 3, '$app/demo' cannot be read)"
else
	fail moved-away "exit $rc: $(head -c 400 "$work/demo.gone.err")"
fi
for p in demo threads; do
	decode $p.bundle -i "$work/$p.tar"
	if [ $rc -eq 0 ] && cmp -s "$work/$p.bundle.jsonl" "$work/$p.ref.jsonl" && tmp_empty; then
		pass "$p/bundle-equals-in-place ($(wc -l <"$work/$p.ref.jsonl") events, byte for byte)"
	else
		fail "$p/bundle-equals-in-place" "exit $rc: $(head -c 400 "$work/$p.bundle.err"); in \$TMPDIR: $(ls "$TMPDIR")"
	fi
done
if command -v strace >/dev/null; then
	# after the bundle is opened (the program's own libraries are loaded
	# before), no recorded path and nothing of /usr/lib/debug is looked at
	rm -f "$work/st.srb"
	strace -f -e trace=%file -o "$work/strace.txt" \
		"$B/ptrace-capture" -q --no-cache -i "$work/demo.tar" -o "$work/st.srb" 2>/dev/null
	{ cut -f4 "$work/x/demo/MANIFEST" | grep '^/' | sort -u | sed 's/.*/"&"/'
	  echo '"/usr/lib/debug'; } >"$work/recorded.pat"
	seen=$(sed -n "\|$work/demo.tar|,\$p" "$work/strace.txt" |
		grep -F -f "$work/recorded.pat" | head -3)
	if [ -s "$work/strace.txt" ] && [ -z "$seen" ] && cmp -s <(events "$work/st.srb") "$work/demo.ref.jsonl"; then
		pass "bundle-reads-only-the-bundle (strace: no recorded path, no /usr/lib/debug)"
	else
		fail bundle-reads-only-the-bundle "$seen"
	fi
else
	skip "bundle-reads-only-the-bundle (strace is not installed)"
fi
decode demo.symfs -i "$work/demo.data" --symfs "$work/x/demo/root"
if [ $rc -eq 0 ] && cmp -s "$work/demo.symfs.jsonl" "$work/demo.ref.jsonl"; then
	pass "symfs-equals-in-place"
else
	fail symfs-equals-in-place "exit $rc: $(head -c 400 "$work/demo.symfs.err")"
fi
if [ -n "$has_perf" ]; then
	perf script -i "$work/x/demo/perf.data" --symfs "$work/x/demo/root" --itrace=b \
		-F ip,sym,symoff,dso,addr >"$work/demo.perf.symfs" 2>/dev/null
	perf script -i "$work/x/demo/perf.data" --itrace=b \
		-F ip,sym,symoff,dso,addr >"$work/demo.perf.gone" 2>/dev/null
	if [ -s "$work/demo.perf" ] && cmp -s "$work/demo.perf" "$work/demo.perf.symfs" &&
		! cmp -s "$work/demo.perf" "$work/demo.perf.gone"; then
		pass "perf-script-symfs ($(wc -l <"$work/demo.perf") branches as in place; without --symfs they differ)"
	else
		fail perf-script-symfs "$(diff "$work/demo.perf" "$work/demo.perf.symfs" | head -5)"
	fi
else
	skip "perf-script-symfs (perf is not installed)"
fi

# --- another build is refused; the build-id cache supplies the right one --
want_id=$(readelf -n "$work/app.away/demo" | sed -n 's/.*Build ID: *//p')
other_id=$(readelf -n /bin/true | sed -n 's/.*Build ID: *//p')
mkdir -p "$app"
cp /bin/true "$app/demo"
cp "$work/app.away/libdemo.so" "$app/"
decode wrong -i "$work/demo.data"
if [ $rc -eq 1 ] && [ ! -e "$work/wrong.srb" ] &&
	grep -q "the file $app/demo is another build" "$work/wrong.err" &&
	grep -q "$want_id" "$work/wrong.err" && grep -q "$other_id" "$work/wrong.err"; then
	pass "wrong-build-refused ($(head -c 150 "$work/wrong.err")...)"
else
	fail wrong-build-refused "exit $rc: $(cat "$work/wrong.err")"
fi
cp -a "$work/x/demo/root" "$work/badroot"
cp /bin/true "$work/badroot$app/demo"
decode wrongsymfs -i "$work/demo.data" --symfs "$work/badroot"
if [ $rc -eq 1 ] && [ ! -e "$work/wrongsymfs.srb" ] &&
	grep -q "the file $work/badroot$app/demo, read for the recording's $app/demo, is another build" "$work/wrongsymfs.err"; then
	pass "symfs-wrong-build-refused"
else
	fail symfs-wrong-build-refused "exit $rc: $(cat "$work/wrongsymfs.err")"
fi
if [ -n "$has_perf" ]; then
	# perf's own build-id cache (perf buildid-cache -a) holds the recorded
	# build: taken, though the file at the path is another
	perf --buildid-dir "$work/perfcache" buildid-cache -a "$work/app.away/demo" 2>/dev/null
	PERF_BUILDID_DIR=$work/perfcache decode cache -i "$work/demo.data"
	if [ $rc -eq 0 ] && cmp -s "$work/cache.jsonl" "$work/demo.ref.jsonl"; then
		pass "buildid-cache-supplies-the-recorded-build"
	else
		fail buildid-cache-supplies-the-recorded-build "exit $rc: $(head -c 400 "$work/cache.err")"
	fi
else
	skip "buildid-cache-supplies-the-recorded-build (perf is not installed)"
fi
rm -rf "$app"

# --- a partial bundle: objects missing when it was made -------------------
"$B/ptrace-capture" -i "$work/demo.data" --archive "$work/partial.tar" 2>"$work/partial.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "$app/demo: not bundled" "$work/partial.err" &&
	tar -xOf "$work/partial.tar" partial/MANIFEST | grep -q "^missing	$want_id	-	$app/demo\$"; then
	pass "partial-bundle (exit 3, the missing objects said and in MANIFEST)"
else
	fail partial-bundle "exit $rc: $(cat "$work/partial.err")"
fi
decode partial -i "$work/partial.tar"
if [ $rc -eq 3 ] && grep -q "the bundle is partial: 2 objects" "$work/partial.err" && tmp_empty; then
	pass "partial-bundle-decodes-partial (exit 3)"
else
	fail partial-bundle-decodes-partial "exit $rc: $(head -c 400 "$work/partial.err")"
fi

# --- hostile and damaged bundles ------------------------------------------
refused() { # NAME PATTERN BUNDLE
	decode "h-$1" -i "$3"
	if [ $rc -eq 1 ] && grep -q -- "$2" "$work/h-$1.err" && [ ! -e "$work/h-$1.srb" ] && tmp_empty &&
		[ ! -e "$work/evil" ] && [ ! -e /tmp/capture-archive-evil ]; then
		pass "refused-$1 ($(head -c 200 "$work/h-$1.err"))"
	else
		fail "refused-$1" "exit $rc: $(cat "$work/h-$1.err"); in \$TMPDIR: $(ls "$TMPDIR")"
	fi
}
# (made by Python's tarfile: a tar writer that is not ours)
python3 - "$work" "$work/x/demo" "$app" <<'PY'
import io, os, sys, tarfile
work, src, app = sys.argv[1], sys.argv[2], sys.argv[3]
def bundle(name, extra=None, swap=None, manifest=None):
    with tarfile.open(os.path.join(work, name + ".tar"), "w", format=tarfile.USTAR_FORMAT) as t:
        for root, dirs, files in os.walk(src):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(root, f)
                arc = "demo/" + os.path.relpath(p, src)
                if swap and arc == swap[0]:
                    p = swap[1]
                if manifest and arc == "demo/MANIFEST":
                    data = manifest.encode()
                    ti = tarfile.TarInfo(arc); ti.size = len(data)
                    t.addfile(ti, io.BytesIO(data)); continue
                t.add(p, arcname=arc, recursive=False)
        if extra:
            extra(t)
def member(name, data=b"evil"):
    def add(t):
        ti = tarfile.TarInfo(name); ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    return add
def link(name, kind, target):
    def add(t):
        ti = tarfile.TarInfo(name); ti.type = kind; ti.linkname = target
        t.addfile(ti)
    return add
bundle("dotdot", member("demo/../../evil"))
bundle("absolute", member("/tmp/capture-archive-evil"))
bundle("symlink", link("demo/root/etc", tarfile.SYMTYPE, "/etc"))
bundle("hardlink", link("demo/root/passwd", tarfile.LNKTYPE, "/etc/passwd"))
# an object of another build (the manifest still the recording's)
obj = "demo/root" + app + "/demo"
bundle("swapped", swap=(obj, "/bin/true"))
# the same, the manifest rewritten to match it: the perf.data still names
# the recorded build
import subprocess, re
tid = re.search(r"Build ID: (\w+)", subprocess.run(["readelf", "-n", "/bin/true"], capture_output=True, text=True).stdout).group(1)
lines = open(os.path.join(src, "MANIFEST")).read().splitlines()
out = []
for l in lines:
    f = l.split("\t")
    if len(f) == 4 and f[0] == "object" and f[3] == app + "/demo":
        l = "\t".join(["object", tid, str(os.path.getsize("/bin/true")), f[3]])
    out.append(l)
bundle("consistent-swap", swap=(obj, "/bin/true"), manifest="\n".join(out) + "\n")
# a tar of files that is no bundle
with tarfile.open(os.path.join(work, "nobundle.tar"), "w", format=tarfile.USTAR_FORMAT) as t:
    t.add(os.path.join(src, "perf.data"), arcname="perf.data")
PY
refused dotdot "unsafe name" "$work/dotdot.tar"
refused absolute "unsafe name" "$work/absolute.tar"
refused symlink "is a symbolic link" "$work/symlink.tar"
refused hardlink "is a hard link" "$work/hardlink.tar"
refused swapped "the bundle's copy of $app/demo .* has build-id $other_id, its MANIFEST says $want_id" "$work/swapped.tar"
refused consistent-swap "the bundle's $app/demo (demo/root$app/demo) has build-id $other_id, but its recording names $want_id" "$work/consistent-swap.tar"
size=$(stat -c %s "$work/demo.tar")
head -c $((size / 2)) "$work/demo.tar" >"$work/cut.tar"
refused truncated "the bundle is truncated" "$work/cut.tar"
# cut at a member's end: no end blocks
python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
n = len(b)
while n >= 512 and not any(b[n - 512:n]): n -= 512
open(sys.argv[2], "wb").write(b[:n])' "$work/demo.tar" "$work/noend.tar"
refused no-end "before the blocks that end a tar" "$work/noend.tar"
head -c 65536 /dev/urandom >"$work/garbage.tar"
refused garbage "not a perf.data file (bad magic); give a perf.data that perf record wrote, or a bundle" "$work/garbage.tar"
refused not-a-bundle "not a bundle of ptrace-capture --archive" "$work/nobundle.tar"
decode h-symfs -i "$work/demo.tar" --symfs "$work/x/demo/root"
if [ $rc -eq 2 ] && grep -q "brings its own objects" "$work/h-symfs.err" && tmp_empty; then
	pass "bundle-with-symfs-is-a-usage-error"
else
	fail bundle-with-symfs-is-a-usage-error "exit $rc: $(cat "$work/h-symfs.err")"
fi

# --- usage -------------------------------------------------------------------
"$B/ptrace-capture" --archive "$work/l.tar" -- /bin/true 2>"$work/u.err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "give -w FILE" "$work/u.err"; then
	pass "live-archive-needs-w"
else
	fail live-archive-needs-w "exit $rc: $(cat "$work/u.err")"
fi
"$B/ptrace-capture" -i "$work/demo.data" --archive "$work/o.tar" -o "$work/o.srb" 2>"$work/u.err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "only bundles the recording" "$work/u.err" && [ ! -e "$work/o.tar" ]; then
	pass "archive-with-o-is-a-usage-error"
else
	fail archive-with-o-is-a-usage-error "exit $rc: $(cat "$work/u.err")"
fi

# --- the -w perf.data of a live session (fake kernel) -----------------------
REPLAY=$top/$O/tests/live_replay
if [ -x "$REPLAY" ] && [ -n "$has_perf" ]; then
	mkdir -p "$app"
	cp "$work/app.away/threads" "$app/"
	record live threads &&
		"$REPLAY" "$work/live.data" "$work/w.data" 16384 2>"$work/replay.err" ||
		fail "live-w/replay" "$(tail -3 "$work/replay.err")"
	nobj=$(perf buildid-list -i "$work/w.data" 2>/dev/null | grep -c ' /')
	decode w.ref -i "$work/w.data"
	"$B/ptrace-capture" -q -i "$work/w.data" --archive "$work/w.tar" 2>"$work/w.arc.err"
	arc=$?
	rm -rf "$app"
	decode w.bundle -i "$work/w.tar"
	if [ "$nobj" -ge 3 ] && [ $arc -eq 0 ] && [ $rc -eq 0 ] && [ -s "$work/w.ref.jsonl" ] &&
		cmp -s "$work/w.bundle.jsonl" "$work/w.ref.jsonl"; then
		pass "live-w-bundle ($nobj objects named by -w's BUILD_ID; $(wc -l <"$work/w.ref.jsonl") events)"
	else
		fail live-w-bundle "objects $nobj, archive exit $arc, decode exit $rc: $(cat "$work/w.arc.err" "$work/w.bundle.err" | head -c 400)"
	fi
else
	skip "live-w-bundle (no live_replay or no perf)"
fi
finish
