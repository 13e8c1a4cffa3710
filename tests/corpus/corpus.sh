#!/usr/bin/env bash
# tests/corpus/corpus.sh - build the test corpus and its PT traces, cached
# under $O/corpus/ by a hash of their inputs.
#
#   corpus.sh list                 names of the corpus programs
#   corpus.sh stack-list           those with a stack truth in the standard set
#   corpus.sh bin NAME             build NAME, print the program's path
#   corpus.sh trace NAME VARIANT   trace NAME, print the trace directory
#   corpus.sh bench                the benchmark trace, print its directory
#   corpus.sh bench-big            the same program on 4x the input (the
#                                  bench's bigger trace), likewise
#   corpus.sh link                 trace the standard set and link each as
#                                  $O/corpus/NAME[-VARIANT].{data,truth,sideband}
#                                  (what `make tests` does for other tests;
#                                  NAME-stack.* for the stack-list)
#
# A trace directory holds trace.data (perf.data), trace.truth,
# trace.sideband, trace.TID.pt (see docs/ptsynth.md) and env (a hash of
# the traced program's environment's variable names and lengths). Variants:
#   default    return compression, timing packets, PSB every 4096 bytes
#   noretcomp  --no-retcomp
#   notiming   --no-timing
#   psb256     --psb-period 256
#   overflow   --overflow 5000 --overflow-len 3000
#   cyc        --cyc (CYC packets)     tsconly  --mtc-period 0 (no MTC)
#   drop       --drop 3000:37          corrupt  --corrupt 2500
#   percpu     --per-cpu (2 CPUs, threads migrate every 3rd syscall)
#   stack      --stack (RSP in the truth; QEMU's -d cpu, several times slower)
#   times      --truth-times (the time of every branch in the truth)
#   cyctimes   --cyc --truth-times
# Cache keys: a program's key hashes its source, its build command and the
# compiler's version; a trace's key hashes the program file, its arguments
# and input files, the ptsynth binary and the options: their bytes, not
# their paths, so a copy of the corpus under another $O is still valid
# (CI's sanitizer pass decodes the release pass's traces: .ci/run). Remove $O/corpus to
# start afresh. Traced programs run in $O/corpus/run (what they write,
# such as the gmon.out of a -pg program, stays there) as ./NAME, their
# inputs under ./input, with RUN_ENV as their whole environment: what a
# program sees of its path, its arguments and its environment is then the
# same whoever runs this, from whichever clone, build or make (ld.so and
# libc walk those strings, whose lengths shift the stack), so its trace is
# the same bytes everywhere, and a test that damages it at a given packet
# hits the same one in every clone (tests/decoder/e2e-damage-diff.sh,
# tests/view/e2e-fxt.sh).
set -euo pipefail
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
src=tests/corpus
out=$O/corpus
PTSYNTH=${PTSYNTH:-$O/bin/ptsynth}
mkdir -p "$out/bin" "$out/traces" "$out/input" "$out/run"

NAMES="static staticpie dynpie recurse fptr tailcall inline longjmp exceptions signals threads plt ocaml ls sort gzip pgqsort pgtree"

hash() { sha256sum | cut -c1-16; }
# The traced programs' whole environment (and ptsynth's, which passes it
# on through QEMU): a trace made under make (MAKEFLAGS, MAKELEVEL, SAN=...)
# or from a longer path (PWD, OLDPWD) would run other instructions.
RUN_ENV=(PATH=/usr/bin:/bin)
# The shape of that environment (names and lengths), kept beside each
# trace ("env"): two traces made in one shape ran the same instructions.
env_shape() { env -i "${RUN_ENV[@]}" env | awk '{ i = index($0, "="); if (i) print substr($0, 1, i) length($0) }' | LC_ALL=C sort | hash; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$top/$1" ;; esac; }
# run_link NAME PROG: $out/run/NAME, a link to PROG, made atomically (two
# variants of one program may be traced at once)
run_link() {
	ln -sfn "$(abs "$2")" "$out/run/.$1.$$" && mv -fT "$out/run/.$1.$$" "$out/run/$1"
}

# The build command of each program (from sources in $src).
build_cmd() {
	case $1 in
	static) echo "gcc -O1 -static -o @OUT@ $src/static.c" ;;
	staticpie) echo "gcc -O1 -static-pie -fPIE -o @OUT@ $src/static.c" ;;
	dynpie) echo "gcc -O1 -fPIE -pie -o @OUT@ $src/static.c" ;;
	recurse) echo "gcc -O1 -fno-optimize-sibling-calls -o @OUT@ $src/recurse.c" ;;
	fptr) echo "gcc -O1 -o @OUT@ $src/fptr.c" ;;
	fork) echo "gcc -O1 -o @OUT@ $src/fork.c" ;; # not in NAMES: --ptrace only
	tailcall) echo "gcc -O2 -o @OUT@ $src/tailcall.c" ;;
	# -O2 -g: static functions inlined three deep, for DWARF (issue 36)
	inline) echo "gcc -O2 -g -o @OUT@ $src/inline.c" ;;
	# not in NAMES: tests/e2e/srcline.sh traces it for uftrace's --srcline
	pginline) echo "gcc -O2 -g -pg -fno-omit-frame-pointer -o @OUT@ $src/inline.c" ;;
	longjmp) echo "gcc -O1 -o @OUT@ $src/longjmp.c" ;;
	exceptions) echo "g++ -O1 -o @OUT@ $src/exceptions.cpp" ;;
	signals) echo "gcc -O1 -o @OUT@ $src/signals.c" ;;
	threads) echo "gcc -O1 -pthread -o @OUT@ $src/threads.c" ;;
	plt) echo "gcc -O1 -fno-builtin -Wl,-z,lazy -o @OUT@ $src/plt.c" ;;
	ocaml) echo "ocamlfind-less @OUT@ $src/exceptions.ml" ;;
	# -pg: mcount at every function entry, for uftrace (tests/stack/)
	pgqsort) echo "gcc -O1 -pg -fno-omit-frame-pointer -o @OUT@ $src/pg_qsort.c" ;;
	pgtree) echo "gcc -O1 -pg -fno-omit-frame-pointer -o @OUT@ $src/pg_tree.c" ;;
	*) return 1 ;;
	esac
}

# Inputs of the Debian-binary entries, made deterministic here.
make_inputs() {
	local d=$out/input
	[ -e "$out/run/input" ] || ln -s ../input "$out/run/input" 2>/dev/null ||
		[ -e "$out/run/input" ]
	if [ ! -e "$d/.done" ]; then
		mkdir -p "$d/lsdir/sub"
		for f in alpha beta gamma delta; do echo "$f" >"$d/lsdir/$f.txt"; done
		awk 'BEGIN { s = 7; for (i = 0; i < 100; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "line %d %d\n", s % 1000, i } }' >"$d/sort.txt"
		awk 'BEGIN { for (i = 0; i < 60; i++) printf "the quick brown fox %d jumps over the lazy dog %d\n", i, i * i }' >"$d/gzip.txt"
		awk 'BEGIN { s = 11; for (i = 0; i < 5000; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%d %s record-%d\n", s % 100000, (s % 3 ? "x" : "y"), i } }' >"$d/bench.txt"
		touch "$d/.done"
	fi
}

# bin NAME: print the path of the program to run (building it if needed)
cmd_bin() {
	local name=$1 cmd key f
	case $name in
	ls) echo /bin/ls; return ;;
	sort) echo /usr/bin/sort; return ;;
	gzip) echo /bin/gzip; return ;;
	esac
	cmd=$(build_cmd "$name") || { echo "corpus: unknown program $name" >&2; return 1; }
	if [ "$name" = ocaml ]; then
		key=$( { cat "$src/exceptions.ml"; echo "$cmd"; ocamlopt -version; } | hash)
	else
		key=$( { cat $(echo "$cmd" | grep -o "$src/[^ ]*"); echo "$cmd"; gcc --version | head -1; } | hash)
	fi
	f=$out/bin/$name-$key
	if [ ! -x "$f" ]; then
		if [ "$name" = ocaml ]; then
			local w=$out/bin/ocaml-build-$key.$$
			rm -rf "$w"; mkdir -p "$w"
			cp "$src/exceptions.ml" "$w/"
			(cd "$w" && ocamlopt -o prog exceptions.ml) >&2
			mv "$w/prog" "$f.tmp.$$"; rm -rf "$w"
		else
			${cmd//@OUT@/$f.tmp.$$} >&2
		fi
		mv "$f.tmp.$$" "$f"
	fi
	echo "$f"
}

# Arguments and input files of each entry (input/: $out/input, from the
# directory the programs run in).
prog_args() {
	case $1 in
	ls) echo "-1 -F input/lsdir" ;;
	sort) echo "-n input/sort.txt" ;;
	gzip) echo "-c -6 input/gzip.txt" ;;
	*) echo "" ;;
	esac
}

variant_opts() {
	case $1 in
	default) echo "" ;;
	noretcomp) echo "--no-retcomp" ;;
	notiming) echo "--no-timing" ;;
	psb256) echo "--psb-period 256" ;;
	overflow) echo "--overflow 5000 --overflow-len 3000" ;;
	cyc) echo "--cyc" ;;
	tsconly) echo "--mtc-period 0" ;;
	drop) echo "--drop 3000:37" ;;
	corrupt) echo "--corrupt 2500" ;;
	percpu) echo "--per-cpu" ;;
	stack) echo "--stack" ;;
	times) echo "--truth-times" ;;
	cyctimes) echo "--cyc --truth-times" ;;
	*) echo "corpus: unknown variant $1" >&2; return 1 ;;
	esac
}

# trace NAME VARIANT [extra ptsynth options...]
cmd_trace() {
	local name=$1 variant=$2; shift 2
	local prog args opts key dir run=()
	make_inputs
	prog=$(cmd_bin "$name")
	args=$(prog_args "$name")
	opts="$(variant_opts "$variant") $*"
	# -pg programs: glibc's profil() sends SIGPROF every 10 ms of CPU
	# time, a handler run at places that differ every run; blocked, it
	# never comes (gmon.out is still written)
	case $name in pg*) run=(--block-signal=PROF) ;; esac
	key=$( { sha256sum <"$prog"; sha256sum <"$PTSYNTH"; echo "$args|$opts|${run[*]}|${RUN_ENV[*]}"; [ -z "$args" ] || cat $out/input/*.txt; } | hash)
	dir=$out/traces/$name-$variant-$key
	# one recording of a trace at a time: tests that run at once
	# (tests/run.sh) may ask for the same one
	local lock
	exec {lock}>"$out/traces/.$name-$variant.lock"
	flock "$lock"
	if [ ! -e "$dir/done" ]; then
		# older keys of this trace are stale: keep the cache small
		for old in "$out/traces/$name-$variant-"*; do
			[ -d "$old" ] && [ "$old" != "$dir" ] && rm -rf "$old"
		done
		rm -rf "$dir"; mkdir -p "$dir"
		run_link "$name" "$prog"
		# shellcheck disable=SC2086
		(d=$(abs "$dir") && cd "$out/run" &&
			env -i "${run[@]}" "${RUN_ENV[@]}" "$(abs "$PTSYNTH")" $opts \
				-o "$d/trace.data" --truth "$d/trace.truth" \
				-- "./$name" $args >"$d/stdout" 2>"$d/stderr") ||
			{ cat "$dir/stderr" >&2; return 1; }
		env_shape >"$dir/env"
		touch "$dir/done"
	fi
	exec {lock}>&-
	echo "$dir"
}

# The standard set linked under $O/corpus: every program (default
# variant) and a few variants; the stack truth of the programs in STACK.
LINKED_EXTRA="static:notiming threads:noretcomp signals:psb256 longjmp:notiming threads:percpu recurse:percpu"
# the damage fuzz target's recordings (tests/fuzz/fuzz_damage.c)
LINKED_EXTRA="$LINKED_EXTRA static:psb256 plt:psb256 recurse:psb256 threads:psb256 exceptions:psb256"
STACK="static staticpie dynpie recurse fptr tailcall inline longjmp exceptions signals threads plt ocaml pgqsort pgtree"

cmd_link() {
	local jobs="" j p v d base
	for p in $NAMES; do
		[ "$p" = ocaml ] && ! command -v ocamlopt >/dev/null && continue
		jobs="$jobs $p:default"
	done
	jobs="$jobs $LINKED_EXTRA"
	for p in $STACK; do
		[ "$p" = ocaml ] && ! command -v ocamlopt >/dev/null && continue
		jobs="$jobs $p:stack"
	done
	# two at a time: QEMU and ptsynth are single-threaded
	echo $jobs | tr ' ' '\n' | xargs -P 2 -I{} sh -c \
		'p=${1%%:*}; v=${1#*:}; "$2" trace "$p" "$v" >/dev/null' sh {} "$0"
	for j in $jobs; do
		p=${j%%:*} v=${j#*:}
		d=$(cmd_trace "$p" "$v")
		base=$p; [ "$v" = default ] || base=$p-$v
		for ext in data truth sideband; do
			ln -sfn "${d#$out/}/trace.$ext" "$out/$base.$ext"
		done
	done
}

case ${1:-} in
list) echo "$NAMES" ;;
stack-list) echo "$STACK" ;;
link) cmd_link ;;
bin) cmd_bin "$2" ;;
trace) shift; cmd_trace "$@" ;;
bench | bench-big)
	# bench: sort of 5000 lines, a real workload of about 31M
	# instructions (with its truth); bench-big: sort of 20000 lines,
	# 4.7 times the instructions (no truth: it would be 0.5 GB)
	# (run as ./sort in $out/run, as cmd_trace runs the corpus)
	make_inputs
	name=bench input=bench.txt truth=(--truth)
	if [ "$1" = bench-big ]; then
		name=big input=bench-big.txt truth=()
		[ -e "$out/input/$input" ] ||
			awk 'BEGIN { s = 11; for (i = 0; i < 20000; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%d %s record-%d\n", s % 100000, (s % 3 ? "x" : "y"), i } }' >"$out/input/$input"
	fi
	key=$( { cat /usr/bin/sort "$PTSYNTH" "$out/input/$input" | sha256sum; echo "${RUN_ENV[*]}"; } | hash)
	mkdir -p "$O/bench"
	dir=$O/bench/$name-$key
	if [ ! -e "$dir/done" ]; then
		for old in "$O/bench/$name"-*; do
			[ -d "$old" ] && [ "$old" != "$dir" ] && rm -rf "$old"
		done
		rm -rf "$dir"; mkdir -p "$dir"
		run_link sort /usr/bin/sort
		d=$(abs "$dir")
		(cd "$out/run" && env -i "${RUN_ENV[@]}" "$(abs "$PTSYNTH")" \
			-o "$d/trace.data" ${truth[@]+"${truth[@]}" "$d/trace.truth"} -- \
			./sort -k2,2 -k1,1n "input/$input" >"$d/stdout" 2>"$d/stderr") ||
			{ cat "$dir/stderr" >&2; exit 1; }
		touch "$dir/done"
	fi
	for ext in data truth sideband; do
		[ -e "$dir/trace.$ext" ] &&
			ln -sfn "$(basename "$dir")/trace.$ext" "$O/bench/$name.$ext"
	done
	echo "$dir"
	;;
*) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
