#!/usr/bin/env bash
# tests/e2e/dso-offsets.sh - objdump judges "[dso]+0xOFF", the name of code
# no symbol holds: OFF is in the object's own (ELF virtual) addresses, as
# objdump --start-address and addr2line take them. For every call, jump
# and return of corpus rings whose source has such a name, objdump -d of
# that DSO at OFF shows that instruction (call, jmp or j*, ret), and a
# direct call or jump goes where the event says its target is (the
# target's OFF, when it is named so in the same DSO). The rings are
# decoded with perf's names (--names perf), which leave libgcc's and
# PLT code unnamed, and with ours.
T=dso-offsets
. "$(dirname "$0")/lib.sh"
cd "$top" || exit 1

if ! command -v objdump >/dev/null; then
	echo "SKIP: dso-offsets/all (objdump not installed: binutils)"
	exit 0
fi
for p in exceptions:perf exceptions:plain threads:perf dynpie:perf; do
	name=${p%%:*} names=${p#*:}
	data=$O/corpus/$name.data
	if [ ! -e "$data" ]; then
		fail "$p (no $data: run make tests)"
		continue
	fi
	if ! "$O/bin/ptrace-capture" -q --names "$names" -i "$data" -o "$work/$p.srb" 2>"$work/err" ||
		! "$O/bin/ptrace-read" --types dso "$work/$p.srb" >"$work/$p.dsos" 2>>"$work/err" ||
		! "$O/bin/ptrace-read" --types call,jump,return "$work/$p.srb" >"$work/$p.flow" 2>>"$work/err"; then
		fail "$p (ptrace-capture or ptrace-read: $(head -c 300 "$work/err"))"
		continue
	fi
	# "TYPE DSO OFF TODSO TOOFF" per distinct branch whose source is named
	# [DSO]+0xOFF (the target's DSO and OFF, or - -)
	awk '{
		t = $4; fd = fo = td = to = "-"
		for (i = 5; i <= NF; i++) {
			# ([plt0] names a symbol, not a DSO)
			if ($i !~ /^<\[.*\]\+0x[0-9a-f]+>$/ || $i ~ /^<\[plt0\]/) continue
			x = $i; sub(/^<\[/, "", x); sub(/>$/, "", x)
			d = x; sub(/\]\+0x.*$/, "", d); o = x; sub(/^.*\]\+0x/, "", o)
			if ($(i - 1) ~ /^from=/) { fd = d; fo = o } else { td = d; to = o }
		}
		if (fd != "-") print t, fd, fo, td, to
	}' "$work/$p.flow" | sort -u >"$work/$p.named"
	n=0 bad=0 direct=0 msg=""
	while read -r type dso off tdso toff; do
		path=$(awk -v b="$dso" '{ for (i = 1; i <= NF; i++) if ($i ~ /^path="/) { p = $i; sub(/^path="/, "", p); sub(/"$/, "", p); n = p; sub(/^.*\//, "", n); if (n == b) { print p; exit } } }' "$work/$p.dsos")
		[ -n "$path" ] && [ -r "$path" ] || { bad=$((bad + 1)); msg="$msg $dso: no readable path;"; continue; }
		n=$((n + 1))
		insn=$(objdump -d --no-show-raw-insn --start-address=0x$off --stop-address=$(printf '0x%x' $((0x$off + 16))) "$path" |
			awk -v a="$off" '/^ *[0-9a-f]+:\t/ { x = $1; sub(/:$/, "", x) } x == a { $1 = ""; print; exit }')
		case $type:$insn in
		call:" call"* | return:" ret"* | jump:" jmp"* | jump:" j"* | jump:" notrack jmp"* | jump:" bnd jmp"*) ;;
		*)
			bad=$((bad + 1))
			[ ${#msg} -lt 400 ] && msg="$msg $type at [$dso]+0x$off: objdump '${insn:-no instruction there}';"
			continue
			;;
		esac
		# a direct branch: objdump's target is the event's
		if [ "$tdso" = "$dso" ] && [[ $insn =~ ^\ (call|jmp)\ +([0-9a-f]+)\ \< ]]; then
			direct=$((direct + 1))
			if [ "$(printf '%x' $((0x${BASH_REMATCH[2]})))" != "$(printf '%x' $((0x$toff)))" ]; then
				bad=$((bad + 1))
				[ ${#msg} -lt 400 ] && msg="$msg $type at [$dso]+0x$off: objdump goes to ${BASH_REMATCH[2]}, the event to [$tdso]+0x$toff;"
			fi
		fi
	done <"$work/$p.named"
	if [ "$bad" -eq 0 ] && [ "$n" -gt 0 ]; then
		pass "$p ($n branches from code named [dso]+0xOFF: objdump shows each there, $direct direct ones going where the event goes)"
	elif [ "$n" -eq 0 ] && [ "$bad" -eq 0 ]; then
		pass "$p (no branch from code without a symbol: nothing named [dso]+0xOFF)"
	else
		fail "$p ($bad of $((n + bad)) wrong:$msg)"
	fi
done
finish
