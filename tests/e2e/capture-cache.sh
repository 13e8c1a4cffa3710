#!/usr/bin/env bash
# The persistent block and symbol cache (docs/cache.md) changes no event:
# for every program of the corpus (default traces), ptrace-capture -i
# makes the very ring (as JSON lines) with --no-cache, with an empty cache
# (cold: it writes one file per ELF object with a build-id), and with the
# cache it wrote (warm: every object's file read and used, none written
# again); -j 2 on a warm cache too (threads sharing the files). Then, on
# one trace, each way a cache file can be wrong - stale (the program
# changed: its mtime), damaged (a flipped byte, cut short, empty,
# garbage, a FIFO or a directory in its place), a cache directory that
# cannot be made - gives the same ring, and a wrong file is rewritten
# good (the next run leaves it alone).
T=capture-cache
. "$(dirname "$0")/lib.sh"

corpus=$top/tests/corpus/corpus.sh

# ring TAG CACHEHOME [OPTIONS]: decode $data with XDG_CACHE_HOME=CACHEHOME
# into $work/TAG.jsonl
ring() {
	local tag=$1 home=$2
	shift 2
	rm -f "$work/$tag.srb"
	XDG_CACHE_HOME=$home "$bin/ptrace-capture" -q "$@" -i "$data" \
		-o "$work/$tag.srb" 2>"$work/$tag.err" &&
		"$bin/ptrace-read" -f jsonl "$work/$tag.srb" >"$work/$tag.jsonl"
}

# same TAG: TAG's ring equals the --no-cache one
same() {
	cmp -s "$work/none.jsonl" "$work/$1.jsonl"
}

# JSONL by thread, in each thread's order, without the ring's sequence;
# then the definitions of names (the thread that first needs one
# defines it), without thread and time
bythread() {
	python3 -c '
import json, sys
rows, defs = [], set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    e.pop("seq", None)
    if e["type"] in ("symbol", "dso"):
        for k in ("tid", "time", "comm"):
            e.pop(k, None)
        defs.add(json.dumps(e, sort_keys=True))
        continue
    rows.append((e.get("tid", 0), json.dumps(e, sort_keys=True)))
for _, r in sorted(rows, key=lambda x: x[0]):
    print(r)
print("\n".join(sorted(defs)))' "$1"
}

# the cache files' names, sizes and change times
files() { (cd "$1/strace" 2>/dev/null && stat -c '%n %s %Z.%z' -- *.blocks 2>/dev/null | sort); }

for name in $(O=$O "$corpus" list); do
	if ! dir=$(O=$O "$corpus" trace "$name" default 2>"$work/err"); then
		fail "$name" "corpus.sh trace $name default failed: $(tail -3 "$work/err")"
		continue
	fi
	data=$dir/trace.data
	home=$work/home-$name
	if ! ring none "$work/unused" --no-cache; then
		fail "$name/no-cache" "$(cat "$work/none.err")"
		continue
	fi
	[ -e "$work/unused" ] && fail "$name/no-cache-writes-nothing" "$(ls -R "$work/unused")"
	if ring cold "$home" && same cold && [ -n "$(files "$home")" ]; then
		pass "$name/cold-same-ring"
	else
		fail "$name/cold-same-ring" "$(cat "$work/cold.err")" \
			"files: $(files "$home" | wc -l)" \
			"$(diff "$work/none.jsonl" "$work/cold.jsonl" | head -6)"
	fi
	before=$(files "$home")
	sleep 0.01
	if ring warm "$home" && same warm && [ "$(files "$home")" = "$before" ]; then
		pass "$name/warm-same-ring-nothing-written"
	else
		fail "$name/warm-same-ring-nothing-written" "$(cat "$work/warm.err")" \
			"before: $before" "after: $(files "$home")" \
			"$(diff "$work/none.jsonl" "$work/warm.jsonl" | head -6)"
	fi
	# threads (or one thread's pieces) decoded by two: each thread's
	# events the same (how the threads interleave in the ring varies)
	if ring warmj "$home" -j 2 --piece-bytes 4096 &&
		cmp -s <(bythread "$work/none.jsonl") <(bythread "$work/warmj.jsonl"); then
		pass "$name/warm-j2-same-ring"
	else
		fail "$name/warm-j2-same-ring" "$(cat "$work/warmj.err")" \
			"$(diff <(bythread "$work/none.jsonl") <(bythread "$work/warmj.jsonl") | head -6)"
	fi
done

# --- the dlfilter's own cache files ----------------------------------------
# perf script --dlfilter with no-cache, cold and warm: the same ring; the
# warm run decodes no block (0 block misses) and writes nothing; a damaged
# file is rebuilt
lib=$top/$O/lib/libstrace_dlf.so
. "$top/tests/e2e/perfdl.inc"
dlf() { # TAG CACHEHOME [DLARGS]
	local tag=$1 home=$2
	shift 2
	rm -f "$work/$tag.srb"
	XDG_CACHE_HOME=$home perfdl script -i "$data" --itrace=b --dlfilter "$lib" \
		--dlarg "ring=$work/$tag.srb" --dlarg stats "$@" >/dev/null 2>"$work/$tag.err" &&
		"$bin/ptrace-read" -f jsonl "$work/$tag.srb" >"$work/$tag.jsonl"
}
if command -v perf >/dev/null; then
	for name in plt threads pgqsort; do
		data=$(O=$O "$corpus" trace "$name" default)/trace.data
		home=$work/dlf-$name
		if ! dlf none "$work/unused" --dlarg no-cache || ! dlf cold "$home" ||
			! dlf warm "$home"; then
			fail "dlfilter/$name" "$(cat "$work/none.err" "$work/cold.err" "$work/warm.err" | tail -5)"
			continue
		fi
		n=$(ls "$home"/strace/*.10000.blocks 2>/dev/null | wc -l)
		if same cold && same warm && [ "$n" -ge 2 ] &&
			grep -q " 0 block misses" "$work/warm.err" &&
			grep -q "$n DSO files read, 0 rebuilt (stale or damaged), 0 written" "$work/warm.err"; then
			pass "dlfilter/$name/cold-warm-same-ring"
		else
			fail "dlfilter/$name/cold-warm-same-ring" "$n files" "$(grep libstrace_dlf "$work/warm.err")" \
				"$(diff "$work/none.jsonl" "$work/warm.jsonl" | head -6)"
		fi
		f=$(ls "$home"/strace/*.10000.blocks | head -1)
		printf '\x55' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") / 2 )) conv=notrunc status=none
		if dlf bad "$home" && same bad &&
			grep -q "1 rebuilt (stale or damaged), 1 written" "$work/bad.err"; then
			pass "dlfilter/$name/damaged-rebuilt"
		else
			fail "dlfilter/$name/damaged-rebuilt" "$(grep libstrace_dlf "$work/bad.err")"
		fi
	done
else
	echo "SKIP: capture-cache/dlfilter (no perf)"
fi

# --- wrong cache files, on one trace ------------------------------------
name=threads
dir=$(O=$O "$corpus" trace $name default) || { fail "$name/trace"; exit 1; }
data=$dir/trace.data
# the program as the trace names it (its MMAP2 record): the file the
# decode reads, which a copied corpus (CI's sanitizer pass decodes the
# release pass's traces) keeps under the build that recorded it
prog=$(O=$O "$corpus" bin $name)
recorded=$(strings -n 8 "$data" | grep -m1 -x "/.*/$(basename "$prog")")
[ -n "$recorded" ] && prog=$recorded
home=$work/bad
ring none "$work/unused" --no-cache
ring cold "$home"
good=$(files "$home")
n=$(printf '%s\n' "$good" | grep -c blocks)
[ "$n" -ge 2 ] || fail "files" "expected a cache file per object (the program, libc, ld.so): $good"

# damage DESCRIPTION COMMAND: run COMMAND on every cache file, decode,
# expect the same ring and every file written good again
damage() {
	local what=$1 cmd=$2 f
	for f in "$home"/strace/*.blocks; do
		bash -c "$cmd" _ "$f" || { fail "$what" "could not damage $f"; return; }
	done
	if ! ring bad "$home"; then
		fail "$what" "$(cat "$work/bad.err")"
	elif ! same bad; then
		fail "$what" "$(diff "$work/none.jsonl" "$work/bad.jsonl" | head -6)"
	elif [ "$(files "$home" | awk '{ print $1, $2 }')" != "$(printf '%s\n' "$good" | awk '{ print $1, $2 }')" ]; then
		fail "$what" "not rewritten:" "$(files "$home")" "good: $good"
	else
		after=$(files "$home")
		sleep 0.01
		ring bad2 "$home"
		if same bad2 && [ "$(files "$home")" = "$after" ]; then
			pass "$what"
		else
			fail "$what" "the rewritten files were not used as they are: $(files "$home")"
		fi
	fi
}
damage flipped-byte 'printf "\x55" | dd of="$1" bs=1 seek=$(( $(stat -c %s "$1") / 2 )) conv=notrunc status=none'
damage flipped-header-byte 'printf "\x7f" | dd of="$1" bs=1 seek=9 conv=notrunc status=none'
damage cut-short 'truncate -s $(( $(stat -c %s "$1") / 3 )) "$1"'
damage cut-in-header 'truncate -s 40 "$1"'
damage empty ': >"$1"'
damage garbage 'head -c 70000 /dev/urandom >"$1"'
damage fifo 'rm "$1" && mkfifo "$1"'
# a directory in a file's place cannot be renamed over: it stays, and
# the decode still gives the same ring (a warning says the file could
# not be written)
for f in "$home"/strace/*.blocks; do rm "$f" && mkdir "$f"; done
if ring dirs "$home" && same dirs; then
	pass directory-in-place
else
	fail directory-in-place "$(cat "$work/dirs.err")"
fi
find "$home/strace" -mindepth 1 -type d -exec rmdir {} +
ring cold "$home"
good=$(files "$home")

# stale: the program changed (its mtime): its file is rebuilt, the
# others are used as they are
if [ -n "$prog" ] && [ -f "$prog" ]; then
	touch -r "$prog" "$work/saved-mtime"
	touch -d '2001-02-03 04:05:06' "$prog"
	before=$(files "$home")
	ring stale "$home"
	touch -r "$work/saved-mtime" "$prog"
	changed=$(diff <(echo "$before") <(files "$home") | grep -c '^>')
	if same stale && [ "$changed" = 1 ]; then
		pass stale-program-rebuilt
	else
		fail stale-program-rebuilt "changed files: $changed (expected the program's only)" \
			"$(diff "$work/none.jsonl" "$work/stale.jsonl" | head -6)"
	fi
else
	fail stale-program-rebuilt "no program for $name: '$prog'"
fi

# four decodes at once on an empty cache, each writing every object's
# file (a file of its own, renamed over the others'): the same rings, and
# files that the next decode uses as they are
home=$work/concurrent
pids=()
for k in 1 2 3 4; do
	ring conc$k "$home" & pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
for k in 1 2 3 4; do same conc$k || ok=0; done
after=$(files "$home")
ring conc5 "$home" || ok=0
if [ $ok = 1 ] && same conc5 && [ -n "$after" ] && [ "$(files "$home")" = "$after" ] &&
	[ -z "$(ls "$home/strace" | grep -v '\.blocks$')" ]; then
	pass concurrent-writers
else
	fail concurrent-writers "before: $after" "after: $(files "$home")" "$(ls "$home/strace")"
fi

# a cache directory that cannot be made: a warning naming it, the ring
# the same, exit 0
: >"$work/notadir"
if XDG_CACHE_HOME=$work/notadir "$bin/ptrace-capture" -i "$data" -o "$work/nd.srb" 2>"$work/nd.err" &&
	"$bin/ptrace-read" -f jsonl "$work/nd.srb" >"$work/nd.jsonl" && same nd &&
	grep -q "cannot write the block cache in $work/notadir/strace" "$work/nd.err"; then
	pass unwritable-dir-warns
else
	fail unwritable-dir-warns "$(cat "$work/nd.err")"
fi
# no HOME and no XDG_CACHE_HOME: no cache, no complaint
if env -u HOME -u XDG_CACHE_HOME "$bin/ptrace-capture" -q -i "$data" -o "$work/nh.srb" 2>"$work/nh.err" &&
	[ ! -s "$work/nh.err" ]; then
	pass no-home-no-cache
else
	fail no-home-no-cache "$(cat "$work/nh.err")"
fi
# Capstone is loaded on the first block the cache does not hold: a
# library of its name without its functions stands for a machine without
# it. Warm, nothing needs it (the same ring); cold, the decode says what
# is missing
mkdir -p "$work/nocs"
echo 'int not_capstone;' >"$work/nocs/x.c"
if ${CC:-cc} -shared -fPIC -o "$work/nocs/libcapstone.so.4" "$work/nocs/x.c" 2>"$work/nocs/err"; then
	ring cold "$home" # (the program's file is stale since its touch)
	LD_LIBRARY_PATH=$work/nocs ring nocs-warm "$home"
	if same nocs-warm && [ ! -s "$work/nocs-warm.err" ]; then
		pass no-capstone-warm-cache
	else
		fail no-capstone-warm-cache "$(cat "$work/nocs-warm.err")"
	fi
	LD_LIBRARY_PATH=$work/nocs ring nocs-cold "$work/nocs-home" --no-cache
	if grep -q "Capstone library cannot be loaded (install libcapstone4)" "$work/nocs-cold.err"; then
		pass no-capstone-says-so
	else
		fail no-capstone-says-so "$(cat "$work/nocs-cold.err")"
	fi
else
	fail no-capstone "cannot build a stand-in library: $(cat "$work/nocs/err")"
fi
# --- a cache no one else can redirect (docs/cache.md, "Whose directory") ---
# links planted at every file's final name and at its temporary's (the
# PID is the decode's own: exec keeps it) pointing at a file of ours
# that no one else may read: it is untouched, the files are rebuilt
ring cold "$work/names"
names=$(cd "$work/names/strace" && ls -- *.blocks)
home=$work/links
mkdir -p "$home/strace"
chmod 700 "$home/strace"
printf 'secret\n' >"$work/victim"
chmod 600 "$work/victim"
for f in $names; do ln -s "$work/victim" "$home/strace/$f"; done
rm -f "$work/links.srb"
XDG_CACHE_HOME=$home bash -c 'for f in $1; do ln -s "$2" "$3/$f.$$.tmp"; done; shift 3; exec "$@"' _ \
	"$names" "$work/victim" "$home/strace" "$bin/ptrace-capture" -q -i "$data" -o "$work/links.srb" 2>"$work/links.err" &&
	"$bin/ptrace-read" -f jsonl "$work/links.srb" >"$work/links.jsonl"
if [ "$(cat "$work/victim")" = secret ] && [ "$(stat -c %a "$work/victim")" = 600 ] && same links &&
	[ -z "$(find "$home/strace" -type l)" ] &&
	[ "$(find "$home/strace" -name '*.blocks' -type f -perm 600 | wc -l)" = "$(echo $names | wc -w)" ]; then
	pass links-not-followed
else
	fail links-not-followed "victim: $(head -c 40 "$work/victim" | od -c | head -2)" \
		"$(ls -l "$home/strace")" "$(cat "$work/links.err")"
fi

# a cache directory another user owns (root decoding with sudo -E's
# XDG_CACHE_HOME) or that others may write into: not used, one warning
# saying why and what to do, the same ring
if [ "$(id -u)" != 0 ]; then
	skip other-users-dir-refused "not root: cannot chown to nobody"
elif ! id nobody >/dev/null 2>&1; then
	skip other-users-dir-refused "no user nobody"
else
	mkdir -p "$work/other/strace"
	chown nobody "$work/other/strace"
	chmod 755 "$work/other/strace"
	if ring other "$work/other" && same other && [ -z "$(ls "$work/other/strace")" ] &&
		[ "$(grep -c 'warning: the block cache .* is not used: it belongs to uid' "$work/other.err")" = 1 ]; then
		pass other-users-dir-refused
	else
		fail other-users-dir-refused "$(cat "$work/other.err")" "$(ls -l "$work/other/strace")"
	fi
fi
mkdir -p "$work/gw/strace"
chmod 775 "$work/gw/strace"
if ring gw "$work/gw" && same gw && [ -z "$(ls "$work/gw/strace")" ] &&
	grep -q "is not used: others may write into it (mode 775); decoding without it (chmod go-w" "$work/gw.err"; then
	pass group-writable-dir-refused
else
	fail group-writable-dir-refused "$(cat "$work/gw.err")" "$(ls -l "$work/gw/strace")"
fi

# temporary files a killed decode left: of a dead PID, or older than an
# hour, removed by the next decode (a warm one, which writes nothing);
# a fresh one of a live process stays
home=$work/names
first=$(echo $names | cut -d' ' -f1)
dead=$(bash -c 'echo $$')
: >"$home/strace/$first.$dead.tmp"
: >"$home/strace/$first.1.tmp"
touch -d '2 hours ago' "$home/strace/$first.1.tmp"
: >"$home/strace/$first.$$.tmp"
ring stale-tmp "$home"
if same stale-tmp && [ ! -e "$home/strace/$first.$dead.tmp" ] && [ ! -e "$home/strace/$first.1.tmp" ] &&
	[ -e "$home/strace/$first.$$.tmp" ]; then
	pass stale-temporaries-removed
else
	fail stale-temporaries-removed "$(ls "$home/strace")"
fi
rm -f "$home/strace/$first.$$.tmp"
# --- the debug file in the key --------------------------------------------
# a stripped program whose .gnu_debuglink file is installed after the
# first decode (a -dbgsym package): the warm decode names its functions
# from it, as --no-cache does, not as the cold decode did without it
exe=$(O=$O "$corpus" bin fptr)
mkdir -p "$work/dbg/.debug"
cp "$exe" "$work/dbg/dl"
if ! (cd "$work/dbg" && objcopy --only-keep-debug dl .debug/dl.dbg &&
	strip --strip-all dl && objcopy --add-gnu-debuglink=.debug/dl.dbg dl) 2>"$work/dbg.err"; then
	fail debug-file-installed "objcopy/strip: $(cat "$work/dbg.err")"
elif ! "$bin/ptsynth" -o "$work/dbg.data" -- "$work/dbg/dl" >/dev/null 2>"$work/dbg.err"; then
	fail debug-file-installed "ptsynth: $(tail -3 "$work/dbg.err")"
else
	data=$work/dbg.data
	mv "$work/dbg/.debug/dl.dbg" "$work/dl.dbg.away"
	ring dbg-cold "$work/dbghome"
	mv "$work/dl.dbg.away" "$work/dbg/.debug/dl.dbg"
	ring dbg-warm "$work/dbghome"
	ring none "$work/unused" --no-cache
	cold_names=$(grep -c '"name":"cmp_int"' "$work/dbg-cold.jsonl")
	if same dbg-warm && [ "$cold_names" = 0 ] && grep -q '"name":"cmp_int"' "$work/none.jsonl"; then
		pass debug-file-installed
	else
		fail debug-file-installed "cmp_int named by the cold decode (no debug file): $cold_names" \
			"$(diff "$work/none.jsonl" "$work/dbg-warm.jsonl" | head -6)"
	fi
	# and removed again: the warm decode names as --no-cache does
	mv "$work/dbg/.debug/dl.dbg" "$work/dl.dbg.away"
	ring dbg-gone "$work/dbghome"
	ring none "$work/unused" --no-cache
	if same dbg-gone; then
		pass debug-file-removed
	else
		fail debug-file-removed "$(diff "$work/none.jsonl" "$work/dbg-gone.jsonl" | head -6)"
	fi
fi
finish
