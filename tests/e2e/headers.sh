#!/usr/bin/env bash
# tests/e2e/headers.sh - every public header (include/strace/*.h, what
# make install puts in $(PREFIX)/include/strace) compiles alone, as C11
# and as C++17, with warnings as errors: event.h says it is both.
# Env: INCDIR, the directory holding strace/ (default: the source's
# include/; tests/e2e/install.sh passes the installed one).
T=headers
. "$(dirname "$0")/lib.sh"
inc=${INCDIR:-$top/include}
for h in "$inc"/strace/*.h; do
	name=$(basename "$h")
	for lang in c11 c++17; do
		case $lang in
		c11) cc=${CC:-cc} src=$work/t.c std=-std=c11 ;;
		c++17) cc=${CXX:-c++} src=$work/t.cpp std=-std=c++17 ;;
		esac
		if ! command -v "$cc" >/dev/null 2>&1; then
			skip "$name/$lang" "no $cc"
			continue
		fi
		printf '#include <strace/%s>\nint main(void) { return 0; }\n' "$name" >"$src"
		if "$cc" $std -Wall -Wextra -pedantic -Werror -I"$inc" \
			-c -o "$work/t.o" "$src" 2>"$work/err"; then
			pass "$name/$lang"
		else
			fail "$name/$lang"
			head -5 "$work/err" | sed 's/^/  /'
		fi
	done
done
finish
