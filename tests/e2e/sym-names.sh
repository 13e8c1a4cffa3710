#!/usr/bin/env bash
# tests/e2e/sym-names.sh - `ptrace-read --sym` takes the names people type
# and a function's other names: on corpus rings made by ptrace-capture and
# by the dlfilter (names=plain), for every function that ran and has
# aliases (nm judges the aliases themselves: tests/unit/
# test_decoder_image.c, aliases_as_nm), `-f report --sym ALIAS` prints
# what `--sym NAME` prints, byte for byte, and so does ALIAS without its
# @VERSION; the names people type (free, qsort, printf, malloc, write,
# exit) select their function; a --sym or --tid that matches nothing says so on stderr and
# the read still exits 0.
T=sym-names
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1
rd=$O/bin/ptrace-read
lib=$top/$O/lib/libstrace_dlf.so

rings=()
for t in pgqsort plt; do
	data=$O/corpus/$t.data
	if [ ! -e "$data" ]; then
		fail "$t (no $data: run make tests)"
		continue
	fi
	if "$O/bin/ptrace-capture" -q -i "$data" -o "$work/$t.srb" 2>"$work/err"; then
		rings+=("$t")
	else
		fail "$t/capture" "$(head -c 300 "$work/err")"
	fi
	if command -v perf >/dev/null; then
		. "$top/tests/e2e/perfdl.inc"
		if perfdl script -i "$data" --itrace=b --dlfilter "$lib" \
			--dlarg "ring=$work/$t-dlf.srb" >/dev/null 2>"$work/err"; then
			rings+=("$t-dlf")
		else
			fail "$t-dlf/perf" "$(head -c 300 "$work/err")"
		fi
	else
		echo "SKIP: sym-names/$t-dlf (no perf: the dlfilter's ring is not made)"
	fi
done

for r in "${rings[@]}"; do
	ring=$work/$r.srb
	# "NAME ALIAS" for each function that ran (a report row), whose name
	# is that of one symbol of the ring (ld.so and libc both have a
	# memcpy), and has an alias that names no other symbol
	"$rd" -f report "$ring" >"$work/$r.report" 2>/dev/null
	"$rd" -f jsonl --types symbol "$ring" 2>/dev/null | python3 -c '
import json, sys
ran = set(l.split()[-1] for l in open(sys.argv[1]) if l[:1] == " "
          and l.split()[-1] not in ("Function", "=" * 20))
syms = [json.loads(l) for l in sys.stdin]
names = {}
for s in syms:
    for n in [s["name"]] + s.get("aliases", []):
        names.setdefault(n, set()).add(s["start"])
for s in syms:
    if s["name"] not in ran or names[s["name"]] != {s["start"]}:
        continue
    for a in s.get("aliases", []):
        if names[a] == {s["start"]}:
            print(s["name"], a)
' "$work/$r.report" >"$work/$r.pairs"
	n=$(wc -l <"$work/$r.pairs")
	if [ "$n" -lt 3 ]; then
		fail "$r/aliases" "only $n aliases of functions that ran (want 3 or more)"
		continue
	fi
	bad=0
	while read -r name alias; do
		"$rd" -f report --sym "$name" "$ring" >"$work/want" 2>&1
		for a in "$alias" "${alias%%@*}"; do
			"$rd" -f report --sym "$a" "$ring" >"$work/got" 2>&1
			if ! cmp -s "$work/want" "$work/got"; then
				[ $bad -lt 3 ] && echo "  --sym $a: $(diff "$work/want" "$work/got" | head -3 | tr '\n' ' ')"
				bad=$((bad + 1))
			fi
		done
	done <"$work/$r.pairs"
	if [ $bad -eq 0 ]; then
		pass "$r/alias-is-name ($n aliases of functions that ran, each as written and without @VERSION, select what the function's name does; e.g. $(head -n1 "$work/$r.pairs"))"
	else
		fail "$r/alias-is-name" "$bad of $n aliases select otherwise"
	fi
	# names people type
	typed="malloc printf write exit"
	case $r in pgqsort*) typed="qsort free malloc" ;; esac
	for s in $typed; do
		if "$rd" -f report --sym "$s" "$ring" 2>"$work/err" | grep -q " $s\$" &&
			[ ! -s "$work/err" ]; then
			pass "$r/typed-$s"
		else
			fail "$r/typed-$s" "no row $s under --sym $s: $(head -c 200 "$work/err")"
		fi
	done
	# matching nothing is said
	for f in "--sym no_such_function" "--tid 4000000000"; do
		# shellcheck disable=SC2086
		"$rd" -f report $f "$ring" >"$work/out" 2>"$work/err"
		rc=$?
		if [ $rc -eq 0 ] && grep -qe "${f%% *} ${f#* } matched nothing" "$work/err"; then
			pass "$r/unmatched${f%% *} (rc 0: $(head -n1 "$work/err"))"
		else
			fail "$r/unmatched${f%% *}" "rc $rc, stderr: $(head -c 200 "$work/err")"
		fi
	done
done
echo "sym-names: $nfail failed"
finish
