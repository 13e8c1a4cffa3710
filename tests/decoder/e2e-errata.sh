#!/usr/bin/env bash
# tests/decoder/e2e-errata.sh - the patterns of real Intel PT hardware
# (tests/unit/test_decoder_errata.c: asynchronous stops with BDM70's PSB+
# FUP, overflows, TSX, deferred TIPs, filter exits, ...) through the whole
# product and through perf's decoder.
#
# The unit test writes each case out (STRACE_ERRATA_EXPORT): its 64 bytes
# of code, its PT packets, its processor and the events the SDM says.
# Here each case becomes an ELF (the code at 0x1000) and a perf.data
# (ptsynth --wrap, with the processor as perf's CPUID header, so the
# errata are chosen as for a real recording), and:
#   - ptrace-capture -i, fast and reference decoders, gives the events
#     the unit test wrote (so the CPUID header reaches the walker, and
#     an aux-output event asks for the PEBS-via-PT records' events, the
#     intel_pt config's ptw bit for the ptwrite payloads');
#   - perf script --itrace=be gives the same transfers as ptrace-capture
#     --all-branches (--itrace=bew: and the same ptwrite payloads among
#     them, at the same IPs), where perf 6.1 decodes the case. Where it does not
#     (it has no workaround for that erratum, or reads the packets
#     otherwise), the case is a SKIP naming why; those stand in
#     docs/decoder.md too.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$O/bin" 2>/dev/null && pwd || echo "$O/bin")
T=$(cd "$O/tests" 2>/dev/null && pwd || echo "$O/tests")
W=$(mktemp -d /tmp/errata.XXXXXX)
[ -n "${KEEP:-}" ] && echo "work $W (kept)" >&2 || trap 'rm -rf "$W"' EXIT
fails=0

pass() { echo "PASS: e2e-errata/$1"; }
fail() { echo "FAIL: e2e-errata/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; fails=$((fails + 1)); }
skip() { echo "SKIP: e2e-errata/$1 ($2)"; }

# Where perf 6.1 does not give the SDM's transfers, and why.
perf_differs() {
	case $1 in
	apl12_*) echo "perf has no APL12 workaround: it resumes at the spurious FUP" ;;
	bdm64_*) echo "perf has no BDM64 workaround: a decode error at the abort" ;;
	skd007_*) echo "perf has no SKD007 workaround: it reads the OVF as CYC bytes" ;;
	skd010_*) echo "perf has no SKD010 workaround: it finds no FUP after the OVF" ;;
	skd022_*-1) echo "perf has no SKD022 workaround: an async disable at VMLAUNCH" ;;
	skl014_*) echo "perf has no SKL014 workaround: it walks on past the call" ;;
	ptwrite_while_off*) echo "perf drops a ptwrite while tracing is off (we keep it, where its FUP says)" ;;
	ptwrite_in_psb*) echo "perf stops at a PTW in a PSB+ (\"Unexpected packet\"); we pass over it" ;;
	ptwrite_in_resync*) echo "perf drops a ptwrite met while it resynchronises after a gap (libipt's newer ptxed reports it, ptxed-resync-nomap-ptw-fup, as we do)" ;;
	ptwrite_fup_missing*) echo "perf drops a PTW with IP and no FUP (\"Missing FUP after PTWRITE\"); we keep it without its IP" ;;
	pgd_at_mov_cr3*) echo "perf binds a TIP.PGD without IP to no MOV CR3" ;;
	filter_leave_*) echo "perf 6.1 misreads a TIP.PGD with IP after a direct call and a jcc" ;;
	mode_exec_far_*|mode_exec_same_*|mode_exec_bad_*) echo "perf 6.1 decodes an object's code in its ELF class (64-bit here) and takes no mode from MODE.Exec" ;;
	event_trace_bad_*) echo "perf 6.1 passes over EVDs that do not fit their CFE (libipt's newer ptxed reports them, as we do)" ;;
	trig_*) echo "perf 6.1 does not know TRIG (a bad packet for it)" ;;
	deferred_tip_two_*|error_at_the_packet_*) echo "a decode error (where the walker's queue of TNT bits names it): perf reports its errors its own way" ;;
	fup_inside_an_instruction-1) echo "a decode error: perf reports it at the syscall it walks to on the way to the FUP (0x1006), the walker where the walk stood; both begin again at the FUP and end at the same ret" ;;
	resync_*) echo "perf 6.1 resumes at the first IP packet after a gap and, when that one leads into missing code too, waits for the next PSB (libipt's ptxed --resync-on-error goes on to the next, as we do)" ;;
	esac
}

for t in perf cc python3; do
	if ! command -v $t >/dev/null 2>&1; then
		skip all "no $t"
		exit 0
	fi
done
# capture ARGS...: ptrace-capture decoded into the ring (exit 0, or 3 when
# it lost code: decode errors); its exit status in $capture_rc
capture() {
	$B/ptrace-capture "$@"
	capture_rc=$?
	[ $capture_rc -eq 0 ] || [ $capture_rc -eq 3 ]
}
for f in $B/ptsynth $B/ptrace-capture $B/ptrace-read $T/test_decoder_errata; do
	if [ ! -x $f ]; then
		skip all "$f not built"
		exit 0
	fi
done

mkdir -p $W/cases
if ! STRACE_ERRATA_EXPORT=$W/cases $T/test_decoder_errata >$W/unit.out 2>&1; then
	fail export "$(grep -v '^PASS' $W/unit.out | head -10)"
fi
n=0
for pt in $W/cases/*.pt; do
	c=$(basename "$pt" .pt)
	n=$((n + 1))
	d=$W/cases/$c
	python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
print('.text\n.globl _start\n_start:\n.byte ' + ','.join(str(x) for x in b))
" "$d.code" >"$d.s"
	if ! cc -nostdlib -static -no-pie -Wl,-Ttext=0x1000 -Wl,--build-id \
		-o "$d.elf" "$d.s" 2>"$W/err"; then
		fail "$c/elf" "$(cat $W/err)"
		continue
	fi
	cpu=$(cat "$d.cpu") cpuid=
	case $cpu in
	unknown) ;;
	GenuineIntel*) cpuid="--cpuid $cpu" ;;
	*) IFS=/ read -r f m s <<<"$cpu"; cpuid="--cpuid GenuineIntel,$f,$m,${s:-0}" ;;
	esac
	# the case's flags: 1 all branches, 2 the PEBS-via-PT records as
	# events (the recording asks for them: an aux-output event), 4 the
	# ptwrite payloads (intel_pt/ptw,fup_on_ptw/u: perf synthesizes
	# them with --itrace=w, among the branches)
	flags=$(cat "$d.flags") all= aux= ptw= itrace=be fields=ip,addr,flags
	[ $((flags & 1)) = 1 ] && all=--all-branches
	[ $((flags & 2)) = 2 ] && aux=--aux-output
	[ $((flags & 4)) = 4 ] && ptw=--ptw itrace=bew fields=$fields,synth
	if ! $B/ptsynth --wrap "$pt" $cpuid $aux $ptw -o "$d.data" -- "$d.elf" 2>"$W/err"; then
		fail "$c/wrap" "$(cat $W/err)"
		continue
	fi
	for dec in fast reference; do
		rm -f "$d.srb"
		if ! capture -q --names perf --decoder $dec $all -i "$d.data" -o "$d.srb" 2>"$W/err" ||
			! $B/ptrace-read -f jsonl "$d.srb" >"$d.$dec.jsonl" 2>>"$W/err"; then
			fail "$c/$dec-as-the-sdm-says" "$(cat $W/err)"
			continue
		fi
		ref=
		[ $dec = reference ] && ref=--reference
		# libipt 2.0.5 cannot read event trace and TRIG packets:
		# the reference says so, in an error that names them
		if [ $dec = reference ] &&
			{ [ "${c#event_trace}" != "$c" ] || [ "${c#trig}" != "$c" ]; }; then
			if grep -q '"type":"error".*"error":"newer"' "$d.$dec.jsonl"; then
				pass "$c/$dec-names-newer-packets"
			else
				fail "$c/$dec-names-newer-packets" "$(grep '"error"' "$d.$dec.jsonl" | head -3)"
			fi
		elif [ $dec = reference ] && [ "${c#ptwrite_}" != "$c" ] && [ "$c" != ptwrite_payloads-3 ]; then
			# (the unit test checks ptwrite_payloads' third case
			# with the reference too)
			skip "$c/$dec-as-the-sdm-says" "libipt 2.0.5 binds a PTW without IP to the next ptwrite instruction, which the case's code has none of, and takes a PTW in a PSB+ or one without its FUP as a desync"
		elif [ $dec = reference ] && [ "${c#mode_exec_bad_status}" != "$c" ]; then
			skip "$c/$dec-as-the-sdm-says" "libipt 2.0.5's block decoder reports the bad status update elsewhere (bad_packet at the jz, its event lost)"
		elif [ $dec = reference ] && [ "${c#mode_exec_binds}" != "$c" ]; then
			skip "$c/$dec-as-the-sdm-says" "libipt 2.0.5 binds a MODE.Exec to a TIP only (its newer event decoder to the FUP after it too)"
		elif [ $dec = reference ] && { [ "${c#deferred_tip_two}" != "$c" ] || [ "${c#error_at_the_packet}" != "$c" ]; }; then
			skip "$c/$dec-as-the-sdm-says" "libipt 2.0.5 fails at the same packet, and reports it its own way (no trace_begin before a desync; a trace_end after)"
		elif [ $dec = reference ] && [ "$c" = fup_inside_an_instruction-1 ]; then
			skip "$c/$dec-as-the-sdm-says" "libipt 2.0.5 does not check a PSB+'s FUP against its walk: it takes the address and fails at the next packet (a desync at the TIP.PGD)"
		elif [ $dec = reference ] && [ "${c#resync_}" != "$c" ]; then
			skip "$c/$dec-as-the-sdm-says" "libipt 2.0.5's block decoder waits for the next PSB after a gap (its newer ptxed --resync-on-error does not)"
		elif [ $dec = reference ] && [ "${c#pebs}" != "$c" ]; then
			# nor PEBS-via-PT: the reference says so, in an error
			# that names them
			if grep -q '"type":"error".*"error":"pebs"' "$d.$dec.jsonl"; then
				pass "$c/$dec-names-pebs-via-pt"
			else
				fail "$c/$dec-names-pebs-via-pt" "$(grep '"error"' "$d.$dec.jsonl" | head -3)"
			fi
		elif [ "${c#skl014}" != "$c" ]; then
			# the unit test has no code after the call's target; the
			# ELF's page does (perf walks on there too). Without the
			# filter's ranges, SKL014 is seen only where the walk
			# runs into no code: the unit test checks that
			skip "$c/$dec-as-the-sdm-says" "the ELF maps code after the call's target, where the unit test has none"
		elif python3 $top/tests/decoder/errata_cmp.py want "$d.want" "$d.$dec.jsonl" $ref >$W/out; then
			pass "$c/$dec-as-the-sdm-says"
		else
			fail "$c/$dec-as-the-sdm-says" "$(cat $W/out)"
		fi
	done
	why=$(perf_differs "$c")
	if [ -n "$why" ]; then
		skip "$c/same-as-perf" "$why"
		continue
	fi
	rm -f "$d.srb"
	perf script -i "$d.data" --itrace=$itrace -F $fields >"$d.perf" 2>&1
	if ! $B/ptrace-capture -q --names perf --all-branches -i "$d.data" -o "$d.srb" 2>"$W/err" ||
		! $B/ptrace-read -f jsonl "$d.srb" >"$d.all.jsonl"; then
		fail "$c/same-as-perf" "$(cat $W/err)"
	elif python3 $top/tests/decoder/errata_cmp.py perf "$d.perf" "$d.all.jsonl" >$W/out; then
		pass "$c/same-as-perf"
	else
		fail "$c/same-as-perf" "$(cat $W/out)" "$(grep '=>' "$d.perf" | head -8)"
	fi
done
[ $n -ge 20 ] || fail count "only $n cases written out"

# The CPUID header chooses the errata: the APL12 trace on a processor
# without APL12 (Skylake client) is not valid there, and the decode says
# so (DESYNC at the TIP.PGE), while Goldmont's decodes it cleanly
c=$W/cases/apl12_ovf_fup_then_pge-1
for cpuid in GenuineIntel,6,92,9 GenuineIntel,6,142,10; do
	rm -f $c.cpu.data $c.cpu.srb
	if ! $B/ptsynth --wrap $c.pt --cpuid $cpuid -o $c.cpu.data -- $c.elf 2>$W/err ||
		! capture -q --names perf -i $c.cpu.data -o $c.cpu.srb 2>$W/err ||
		! $B/ptrace-read -f jsonl $c.cpu.srb >$c.cpu.jsonl 2>$W/err; then
		fail "cpuid-chooses-errata/$cpuid" "$(cat $W/err)"
		continue
	fi
	errors=$(grep -c '"type":"error"' $c.cpu.jsonl)
	case $cpuid,$errors,$capture_rc in
	GenuineIntel,6,92,9,0,0 | GenuineIntel,6,142,10,[1-9]*,3) pass "cpuid-chooses-errata/$cpuid (exit $capture_rc)" ;;
	*) fail "cpuid-chooses-errata/$cpuid" "$errors error events" "$(grep -v '"symbol"' $c.cpu.jsonl | head -8)" ;;
	esac
done
exit $((fails > 0))
