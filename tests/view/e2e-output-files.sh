#!/usr/bin/env bash
# tests/view/e2e-output-files.sh - every file a command writes as its
# output (ptrace-read -o in each format, lcov, a uftrace directory,
# ptrace-capture --view) is made 0600 (a uftrace directory 0700), as
# rings are, and never written through a symbolic link: a link at -o's
# path is refused with a message saying so, and the file it points to is
# untouched. An existing regular file of ours is emptied and made 0600;
# -o /dev/null still works.
T=output-files
. "$(dirname "$0")/../e2e/lib.sh"
cd "$top"
cap=$O/bin/ptrace-capture
rd=$O/bin/ptrace-read

data=$O/corpus/plt.data
[ -e "$data" ] || { fail setup "no corpus trace $data (make tests)"; finish; }
XDG_CACHE_HOME=$work/cache "$cap" -q --coverage -i "$data" -o "$work/r.srb" 2>"$work/cap.err" ||
	{ fail setup "ptrace-capture: $(cat "$work/cap.err")"; finish; }

printf 'keep me\n' >"$work/victim"
chmod 600 "$work/victim"

for fmt in text jsonl tree report folded chrome fxt svg lcov; do
	# a fresh file: 0600, with the view in it
	out=$work/out.$fmt
	if "$rd" -f $fmt -o "$out" "$work/r.srb" 2>"$work/$fmt.err" && [ -s "$out" ] &&
		[ "$(stat -c %a "$out")" = 600 ]; then
		pass "$fmt/mode-0600"
	else
		fail "$fmt/mode-0600" "mode $(stat -c %a "$out" 2>&1)" "$(cat "$work/$fmt.err")"
	fi
	# an old file of ours, 0644: emptied, written, made 0600
	printf 'old contents, longer than nothing at all\n' >"$work/old.$fmt"
	chmod 644 "$work/old.$fmt"
	if "$rd" -f $fmt -o "$work/old.$fmt" "$work/r.srb" 2>"$work/$fmt.err" &&
		cmp -s "$out" "$work/old.$fmt" && [ "$(stat -c %a "$work/old.$fmt")" = 600 ]; then
		pass "$fmt/old-file-replaced-0600"
	else
		fail "$fmt/old-file-replaced-0600" "mode $(stat -c %a "$work/old.$fmt")" "$(cat "$work/$fmt.err")"
	fi
	# a link at -o's path: refused, what it points to untouched
	ln -sf "$work/victim" "$work/link.$fmt"
	"$rd" -f $fmt -o "$work/link.$fmt" "$work/r.srb" >/dev/null 2>"$work/$fmt.err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(cat "$work/victim")" = "keep me" ] &&
		grep -q "link.$fmt: is a symbolic link: an output is never written through one" "$work/$fmt.err"; then
		pass "$fmt/link-refused"
	else
		fail "$fmt/link-refused" "exit $rc, victim now: $(head -c 60 "$work/victim")" "$(cat "$work/$fmt.err")"
		printf 'keep me\n' >"$work/victim"
	fi
done
check dev-null "$rd" -f tree -o /dev/null "$work/r.srb"

# a uftrace directory: 0700, its files 0600; a link at -o refused
if "$rd" -f uftrace -o "$work/u" "$work/r.srb" 2>"$work/u.err" && [ -e "$work/u/info" ] &&
	[ "$(stat -c %a "$work/u")" = 700 ] &&
	[ -z "$(find "$work/u" -type f ! -perm 600)" ]; then
	pass uftrace/modes
else
	fail uftrace/modes "$(ls -la "$work/u" 2>&1)" "$(cat "$work/u.err")"
fi
mkdir -p "$work/elsewhere"
ln -s "$work/elsewhere" "$work/ulink"
"$rd" -f uftrace -o "$work/ulink" "$work/r.srb" >/dev/null 2>"$work/ul.err"
rc=$?
if [ $rc -ne 0 ] && [ -z "$(ls "$work/elsewhere")" ] && grep -q "is a symbolic link" "$work/ul.err"; then
	pass uftrace/link-refused
else
	fail uftrace/link-refused "exit $rc: $(ls "$work/elsewhere")" "$(cat "$work/ul.err")"
fi

# ptrace-capture --view: ptrace-read writes it, 0600; through a link, not
XDG_CACHE_HOME=$work/cache "$cap" -q -i "$data" --view "$work/v.json" 2>"$work/v.err"
if [ "$(stat -c %a "$work/v.json" 2>&1)" = 600 ]; then
	pass capture-view/mode-0600
else
	fail capture-view/mode-0600 "$(stat -c %a "$work/v.json" 2>&1)" "$(cat "$work/v.err")"
fi
ln -s "$work/victim" "$work/vlink.json"
XDG_CACHE_HOME=$work/cache "$cap" -q -i "$data" --view "$work/vlink.json" 2>"$work/vl.err"
rc=$?
if [ $rc -ne 0 ] && [ "$(cat "$work/victim")" = "keep me" ] && grep -q "is a symbolic link" "$work/vl.err"; then
	pass capture-view/link-refused
else
	fail capture-view/link-refused "exit $rc" "$(cat "$work/vl.err")"
fi
finish
