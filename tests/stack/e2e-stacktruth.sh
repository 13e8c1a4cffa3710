#!/usr/bin/env bash
# tests/stack/e2e-stacktruth.sh - the stack truth of the corpus is
# consistent (ptsynth --stack; `make tests` links it as
# $O/corpus/NAME-stack.{truth,sideband,data} for `corpus.sh stack-list`).
#
# Per program:
#   tests/stack/checkstack.py   what holds by construction (RSP moved by 8
#                               at calls and returns, returns land after
#                               their call, non-local jumps land in the
#                               innermost live frame's function, signal
#                               frames, ABI alignment) and what the
#                               source implies (recursion depths, landings)
#   NAME/same-as-default        --stack changes nothing but the truth's
#                               RSP field: the same branches and the very
#                               PT bytes as the default trace (single-
#                               threaded programs; both made in one
#                               environment, as `make tests` does)
#   NAME/stacktruth-calls       stacktruth.py prints one line per call,
#                               as many as ptsynth counted, each with its
#                               live frames
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

pass() { echo "PASS: stacktruth/$1"; }
fail() { echo "FAIL: stacktruth/$1"; fails=$((fails + 1)); }
skip() { echo "SKIP: stacktruth/$1 ($2)"; }

for p in $(O=$O tests/corpus/corpus.sh stack-list); do
	base=$O/corpus/$p-stack
	if [ "$p" = ocaml ] && ! command -v ocamlopt >/dev/null; then
		skip "$p" "no ocamlopt"
		continue
	fi
	if [ ! -e "$base.truth" ]; then
		fail "$p (no $base.truth: run make tests)"
		continue
	fi
	python3 tests/stack/checkstack.py "$p" "$base.truth" "$base.sideband" ||
		fails=$((fails + 1))

	# stacktruth.py's output against ptsynth's own count of calls
	if python3 tests/stack/stacktruth.py "$base.truth" >"$work/st" 2>"$work/err"; then
		read -r want < <(awk '/^# stack thread/ { n += $6 } END { print n + 0 }' "$base.truth")
		# lines per call: INDEX, one address per live frame, site, target;
		# the depth column of the thread line bounds them
		if awk -v want="$want" '
			/^# thread / { maxd = $9; next }
			/^#/ { next }
			{ n++; if (NF < 3 || NF - 3 > maxd) bad++; if (NF > deep) deep = NF }
			END { printf "%d call lines (ptsynth counted %d), the deepest with %d live frames\n",
			      n, want, deep - 3
			      exit !(n == want && !bad && n > 0) }' "$work/st" >"$work/what"; then
			pass "$p/stacktruth-calls ($(cat "$work/what"))"
		else
			fail "$p/stacktruth-calls ($(cat "$work/what"))"
		fi
	else
		fail "$p/stacktruth-calls ($(head -c 300 "$work/err"))"
	fi

	# --stack must not change what ran nor the packets: compare with the
	# default trace (threads interleave differently each run)
	[ "$p" = threads ] && continue
	def=$O/corpus/$p
	if [ ! -e "$def.truth" ]; then
		fail "$p/same-as-default (no $def.truth)"
		continue
	fi
	strip() { grep -v '^# \(pid\|program\|options\|stack\|thread\|section\)' "$1" | cut -d' ' -f1-3; }
	da=$(dirname "$(readlink -f "$def.truth")") db=$(dirname "$(readlink -f "$base.truth")")
	nb=$(grep -vc '^#' "$base.truth")
	if ! cmp -s "$da/env" "$db/env"; then
		# `make tests` makes both in one environment
		skip "$p/same-as-default" "made in environments of another shape (corpus.sh by hand?); rm -r $O/corpus/traces and make tests remake them"
	elif ! cmp -s <(strip "$def.truth") <(strip "$base.truth"); then
		fail "$p/same-as-default (the branches differ: $(diff <(strip "$def.truth") <(strip "$base.truth") | head -3 | tr '\n' ' '))"
	elif ! cmp -s "$(ls "$da"/trace.*.pt)" "$(ls "$db"/trace.*.pt)"; then
		fail "$p/same-as-default (the PT streams differ)"
	else
		pass "$p/same-as-default ($nb branches, $(stat -L -c %s "$(ls "$db"/trace.*.pt)") bytes of PT, the same)"
	fi
done
[ "$fails" -eq 0 ]
