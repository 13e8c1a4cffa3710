#!/usr/bin/env bash
# tests/e2e/install.sh - `make install` into a DESTDIR, then use what was
# installed as a third party would:
#  - the layout: libstrace.so.VERSION with its .so.MAJOR and .so links, the
#    static library, the public headers, the .pc, the man pages, the
#    dlfilter where perf looks for it; no internal archive;
#  - libstrace.so exports exactly the functions its headers declare;
#  - every installed header compiles alone as C11 and as C++17;
#  - docs/examples/reader.c (installed) and the example of libstrace(3)
#    build with pkg-config, dynamically and statically (and from a plain
#    PREFIX install, running without LD_LIBRARY_PATH), run on a ring
#    that ptrace-capture wrote, and print the calls that ptrace-read
#    prints, with the same names;
#  - one version everywhere: the tools' --version, the .pc, the man pages,
#    the library's strace_version();
#  - perf lists the installed dlfilter and runs it by its name alone.
# Env: O (build dir).
T=install
. "$(dirname "$0")/lib.sh"
cd "$top"
# (not lib.sh's check: this one takes a status)
check() { # NAME COND-STATUS [DETAIL]
	if [ "$2" -eq 0 ]; then pass "$1${3:+ ($3)}"; else fail "$1${3:+ ($3)}"; fi
}

dest=$work/dest
prefix=/usr/local
version=$(sed -n 's/^#define STRACE_VERSION "\(.*\)"$/\1/p' include/strace/version.h)
major=${version%%.*}

if ! make -s --no-print-directory O="$O" DESTDIR="$dest" PREFIX=$prefix install \
	>"$work/install.log" 2>&1; then
	fail "make-install (make install failed: $(tail -3 "$work/install.log"))"
	exit 1
fi
root=$dest$prefix
libdir=$root/lib

# --- layout ----------------------------------------------------------------
ok=0
[ -f "$libdir/libstrace.so.$version" ] && [ ! -L "$libdir/libstrace.so.$version" ] || ok=1
[ "$(readlink "$libdir/libstrace.so.$major")" = "libstrace.so.$version" ] || ok=1
[ "$(readlink "$libdir/libstrace.so")" = "libstrace.so.$major" ] || ok=1
[ -f "$libdir/libstrace.a" ] || ok=1
soname=$(readelf -d "$libdir/libstrace.so.$version" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libstrace.so.$major" ] || ok=1
check layout-library $ok "libstrace.so.$version, .so.$major -> it, .so -> .so.$major, SONAME $soname, libstrace.a"

internal=$(cd "$libdir" && ls libptperf.a libptcapture.a libptpipeline.a libstrace_decoder.a libstrace_dlfcore.a 2>/dev/null)
[ -z "$internal" ] && [ ! -e "$root/include/strace/decoder.h" ]
check no-internal-archives $? "${internal:-none installed}"

ok=0
for h in include/strace/*.h; do
	cmp -s "$h" "$root/include/strace/$(basename "$h")" || ok=1
done
check headers $ok "$(ls "$root/include/strace" | tr '\n' ' ')"

ok=0
for m in man1/ptrace-capture.1 man1/ptrace-read.1 man1/libstrace_dlf.1 man3/libstrace.3; do
	[ -f "$root/share/man/$m" ] || ok=1
done
check man-pages $ok

[ -x "$libdir/perf-core/dlfilters/libstrace_dlf.so" ]
check dlfilter-place $? "lib/perf-core/dlfilters/libstrace_dlf.so"

ok=0
for p in callcount latency slow tee; do
	[ -x "$libdir/strace/plugins/$p.so" ] || ok=1
done
check example-plugins $ok "$(ls "$libdir/strace/plugins" 2>/dev/null | tr '\n' ' ')"

# --plugin NAME: the installed commands find the installed plugins (from
# any directory), by name and by file name, with their arguments
"$root/bin/ptrace-read" --generate 2000 -o "$work/plug.srb" >/dev/null 2>&1
(cd / && "$root/bin/ptrace-read" -f none --plugin callcount "$work/plug.srb") >"$work/plug.out" 2>&1
rc1=$?
(cd / && "$root/bin/ptrace-read" -f none --plugin latency.so:sym=compute "$work/plug.srb") >"$work/plug2.out" 2>&1
rc2=$?
[ $rc1 -eq 0 ] && grep -q "parse_args" "$work/plug.out" && [ $rc2 -eq 0 ] && [ -s "$work/plug2.out" ]
check plugin-by-name $? "--plugin callcount, --plugin latency.so:sym=compute: $(head -c 120 "$work/plug.out" | tr '\n' ' ')"

# --- the library exports its API and nothing else --------------------------
# every function the installed headers declare (not the static inline ones,
# nor what a plugin exports: strace/plugin.h declares its init and fini)
grep -hE '^[a-z].*\bstrace_[a-z0-9_]+\(' "$root"/include/strace/*.h |
	grep -v '^static' | grep -oE '\bstrace_[a-z0-9_]+\(' | tr -d '(' |
	grep -vxE 'strace_plugin_(init|fini)' | sort -u >"$work/declared"
nm -D --defined-only "$libdir/libstrace.so.$version" | awk '$2 == "T" {print $3}' |
	sed 's/@.*//' | sort -u >"$work/exported"
if cmp -s "$work/declared" "$work/exported"; then
	pass "exports-are-the-api ($(wc -l <"$work/declared") functions)"
else
	fail "exports-are-the-api (declared, not exported: $(comm -23 "$work/declared" "$work/exported" | tr '\n' ' '); exported, not declared: $(comm -13 "$work/declared" "$work/exported" | tr '\n' ' '))"
fi
other=$(nm -D --defined-only "$libdir/libstrace.so.$version" | awk '$2 != "T" && $2 != "A" {print $3}')
[ -z "$other" ]
check no-other-symbols $? "${other:-only functions and the version node}"

# --- every installed header alone, C11 and C++17 ---------------------------
INCDIR=$root/include bash tests/e2e/headers.sh | sed 's/^\(PASS\|FAIL\|SKIP\): headers\//\1: install\/headers\//'

# --- pkg-config and the example, dynamic and static ------------------------
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
pc_version=$(pkg-config --modversion libstrace 2>&1)
[ "$pc_version" = "$version" ]
check pc-version $? "pkg-config --modversion libstrace: $pc_version"

ex=$root/share/doc/ptrace-toolkit/examples/reader.c
cc="${CC:-cc}"
san=
if nm "$libdir/libstrace.a" 2>/dev/null | grep -q __asan_; then
	# a sanitizer build (make SAN=...): its programs need the runtime
	cc="$cc -fsanitize=address,undefined"
	san=1
fi
if $cc -Wall -Wextra -Werror -o "$work/reader" "$ex" \
	$(pkg-config --cflags --libs libstrace) 2>"$work/cc.err"; then
	needed=$(readelf -d "$work/reader" | sed -n 's/.*NEEDED.*\[\(libstrace[^]]*\)\].*/\1/p')
	[ "$needed" = "libstrace.so.$major" ]
	check example-dynamic $? "NEEDED $needed"
else
	fail "example-dynamic ($(head -3 "$work/cc.err"))"
fi
if [ -n "$san" ]; then
	skip "example-static (a sanitizer build: ASan programs cannot be linked -static)"
elif $cc -static -Wall -Wextra -Werror -o "$work/reader-static" "$ex" \
	$(pkg-config --static --cflags --libs libstrace) 2>"$work/cc.err"; then
	! readelf -d "$work/reader-static" 2>/dev/null | grep -q NEEDED
	check example-static $? "no shared library needed"
else
	fail "example-static ($(head -3 "$work/cc.err"))"
fi
# the example printed in libstrace(3) builds too
awk '/^\.SH EXAMPLES/ {ex = 1} ex && /^\.in \+4n/ {on = 1; next} on && /^\.in$/ {exit} on' \
	"$root/share/man/man3/libstrace.3" |
	sed -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$work/man-example.c"
if $cc -Wall -Wextra -Werror -o "$work/man-example" "$work/man-example.c" \
	$(pkg-config --cflags --libs libstrace) 2>"$work/cc.err"; then
	pass "man-example-builds ($(wc -l <"$work/man-example.c") lines)"
else
	fail "man-example-builds ($(head -3 "$work/cc.err"))"
fi

# the example plugin: the headers alone, no library
pex=$root/share/doc/ptrace-toolkit/examples/plugin.c
if $cc -Wall -Wextra -Werror -shared -fPIC -o "$work/syscalls.so" "$pex" \
	$(pkg-config --cflags libstrace) 2>"$work/cc.err"; then
	! readelf -d "$work/syscalls.so" | grep -q 'NEEDED.*libstrace'
	check example-plugin-builds $? "needs no libstrace"
else
	fail "example-plugin-builds ($(head -3 "$work/cc.err"))"
fi

# --- run them on a ring ----------------------------------------------------
data=$O/corpus/recurse.data
if [ ! -f "$data" ]; then
	fail "run (no $data: run make tests first)"
	exit 1
fi
ring=$work/recurse.srb
"$root/bin/ptrace-capture" -q -i "$data" -o "$ring" || fail "capture (installed ptrace-capture failed)"
# what ptrace-read says the calls are: TID FROM_SYM -> TO_SYM
"$root/bin/ptrace-read" -f jsonl --types call "$ring" | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["tid"], e.get("from_sym", "?").split("+")[0], "->",
          e.get("to_sym", "?").split("+")[0])
' >"$work/want"
ncalls=$(wc -l <"$work/want")
for r in reader reader-static; do
	[ -x "$work/$r" ] || continue
	if LD_LIBRARY_PATH=$libdir "$work/$r" "$ring" >"$work/$r.out" 2>"$work/$r.err"; then
		# TIME TID THREAD FROM -> TO: compare TID FROM -> TO, offsets cut
		awk '{f = $4; t = $6; sub(/\+.*/, "", f); sub(/\+.*/, "", t); print $2, f, "->", t}' \
			"$work/$r.out" >"$work/$r.calls"
		if [ "$ncalls" -gt 100 ] && cmp -s "$work/want" "$work/$r.calls"; then
			pass "$r-on-a-ring ($ncalls calls, named as ptrace-read names them)"
		else
			fail "$r-on-a-ring ($ncalls calls wanted; first difference: $(diff "$work/want" "$work/$r.calls" | head -3 | tr '\n' ' '))"
		fi
		grep -q "^libstrace    $version\$" "$work/$r.err"
		check $r-library-version $? "$(grep libstrace "$work/$r.err")"
	else
		fail "$r-on-a-ring (exit $?: $(head -3 "$work/$r.err"))"
	fi
done
# the example plugin in the installed ptrace-read: system calls per thread
if [ -e "$work/syscalls.so" ]; then
	"$root/bin/ptrace-read" -f none --plugin "$work/syscalls.so" "$ring" \
		>"$work/plugin.out" 2>&1
	awk '{print $1, $3}' "$work/plugin.out" | sort >"$work/plugin.counts"
	"$root/bin/ptrace-read" --types syscall "$ring" |
		awk '{split($3, t, "/"); n[t[1]]++} END {for (k in n) print k, n[k]}' |
		sort >"$work/plugin.want"
	[ -s "$work/plugin.want" ] && cmp -s "$work/plugin.counts" "$work/plugin.want"
	check example-plugin-runs $? "$(head -c 300 "$work/plugin.out")"
fi
if [ -x "$work/man-example" ]; then
	LD_LIBRARY_PATH=$libdir "$work/man-example" "$ring" >"$work/man.out" 2>&1
	[ "$(wc -l <"$work/man.out")" -eq "$ncalls" ]
	check man-example-runs $? "$(wc -l <"$work/man.out") of $ncalls calls"
fi

# --- the issue's own case: make install PREFIX=DIR (no DESTDIR), then a
# program built with pkg-config runs without LD_LIBRARY_PATH (the .pc
# adds an rpath for a library directory the loader does not search) -----
pfx=$work/prefix
if make -s --no-print-directory O="$O" PREFIX="$pfx" install >"$work/install2.log" 2>&1 &&
	PKG_CONFIG_PATH=$pfx/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR= \
		$cc -Wall -Wextra -Werror -o "$work/reader-pfx" "$ex" \
		$(PKG_CONFIG_PATH=$pfx/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR= pkg-config --cflags --libs libstrace) \
		2>"$work/cc.err" &&
	env -u LD_LIBRARY_PATH "$work/reader-pfx" "$ring" >"$work/pfx.out" 2>"$work/pfx.err" &&
	[ "$(wc -l <"$work/pfx.out")" -eq "$ncalls" ]; then
	pass "prefix-runs-without-ld-library-path ($(PKG_CONFIG_PATH=$pfx/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR= pkg-config --libs libstrace))"
else
	fail "prefix-runs-without-ld-library-path ($(tail -2 "$work/install2.log" "$work/cc.err" "$work/pfx.err" 2>/dev/null | tr '\n' ' '))"
fi
if grep -q -- '-rpath' <(make -s --no-print-directory -n O="$O" PREFIX=/usr install 2>/dev/null | grep libstrace.pc.in); then
	fail "no-rpath-for-usr (PREFIX=/usr gets an rpath in the .pc)"
else
	pass "no-rpath-for-usr"
fi

# --- one version everywhere -------------------------------------------------
ok=0 seen=""
for t in ptrace-capture ptrace-read; do
	v=$("$root/bin/$t" --version)
	seen="$seen$v; "
	[ "$v" = "$t (ptrace toolkit) $version" ] || ok=1
done
for m in "$root"/share/man/man*/*; do
	grep -q "^\.TH .* \"ptrace toolkit $version\"" "$m" || { ok=1; seen="$seen$(basename "$m"): $(head -1 "$m"); "; }
	if grep -q '@[A-Z]*@' "$m"; then ok=1; seen="$seen$(basename "$m") has a placeholder; "; fi
done
check one-version $ok "$seen"

# SEE ALSO names only pages that make install installs
ok=0
for m in "$root"/share/man/man*/*; do
	for ref in $(awk '/^\.SH SEE ALSO/ {on = 1; next} /^\.SH/ {on = 0} on' "$m" |
		sed -n 's/^\.BR \([a-z_-]*\) (\([0-9]\)).*/\1.\2/p'); do
		[ -f "$root/share/man/man${ref##*.}/$ref" ] || { ok=1; echo "  $(basename "$m") names $ref, not installed"; }
	done
	# documents the pages name are installed
	for doc in $(grep -o "$prefix/share/doc/ptrace-toolkit/[a-z/_.-]*" "$m" | sed 's/[.,]$//' | sort -u); do
		[ -e "$dest$doc" ] || { ok=1; echo "  $(basename "$m") names $doc, not installed"; }
	done
done
check see-also-installed $ok

# --- perf finds the dlfilter where it was installed -------------------------
if command -v perf >/dev/null; then
	exec_path=$libdir/perf-core
	lib=$exec_path/dlfilters/libstrace_dlf.so # what perfdl.inc preloads for
	. tests/e2e/perfdl.inc
	PERF_EXEC_PATH=$exec_path perfdl script --list-dlfilters 2>&1 | grep -q 'libstrace_dlf.so'
	check perf-lists-dlfilter $? "PERF_EXEC_PATH=$prefix/lib/perf-core perf script --list-dlfilters"
	(cd "$work" && PERF_EXEC_PATH=$exec_path perfdl script -i "$top/$data" --itrace=b \
		--dlfilter libstrace_dlf.so --dlarg ring="$work/dlf.srb" >"$work/dlf.out" 2>&1)
	n=$("$root/bin/ptrace-read" --types call "$work/dlf.srb" 2>/dev/null | wc -l)
	[ "$n" -eq "$ncalls" ]
	check perf-runs-dlfilter-by-name $? "--dlfilter libstrace_dlf.so: $n calls, ptrace-capture $ncalls"
else
	skip "perf-dlfilter (no perf)"
fi

# --- make uninstall removes what make install put there ----------------------
if make -s --no-print-directory O="$O" DESTDIR="$dest" PREFIX=$prefix uninstall \
	>"$work/uninstall.log" 2>&1; then
	left=$(find "$dest" -type f -o -type l | sed "s|^$dest||")
	[ -z "$left" ]
	check uninstall-removes-all $? "${left:-nothing left}"
else
	check uninstall-removes-all 1 "$(tail -3 "$work/uninstall.log")"
fi

finish
