#!/usr/bin/env python3
"""ptxedcmp.py - compare ptrace-capture's events with ptxed's expected
listing of one libipt test case (see tests/external/libipt-suite.sh).

usage: ptxedcmp.py LST ORG EXP EVENTS.jsonl
prints one line: CLASS<TAB>first difference (or "-")

Both sides become one sequence of tokens:
  BR from to     a taken branch in continuous flow
  BEGIN to       the flow starts (trace start, enable, after an overflow or
                 an error, a sysret)
  END            the flow stops (disable, syscall to an untraced kernel)
  ASYNC to       an asynchronous transfer (interrupt, TSX abort)
  OVF            an overflow
  ERROR          a decode error
  PTW payload    a ptwrite's payload (ptxed's "[ptwrite: ...]", our
                 ptwrite event), in its place among the branches
ptxed lists each instruction it decodes: an instruction whose successor in
the listing is not at its address plus its length (from pttc's yasm
listing) is a taken branch. The last instruction before a gap may have
branched too (ptxed lists no successor): ours may have a BR from it
there, or not. "to" is "?" when ptxed shows no instruction after the
event (it matches any address). An END at either end of a sequence is
dropped (ptxed says [end of trace] only sometimes), and a BEGIN right
before an OVF or an ERROR (no instruction ran: ptxed lists none, we say
where the trace began). A window in which no branch was taken (a BEGIN
then an END) is skipped where the other side has none: ptxed lists one
only when an instruction ran in it, we give one whenever the trace says
where it began.
"""
import json
import re
import sys


def hexints(e):
    """Our JSON writes addresses as "0x..." strings: make them numbers."""
    return {k: int(v, 16) if isinstance(v, str) and v.startswith("0x")
            and k not in ("path", "name", "comm") and not k.endswith("_sym")
            else v for k, v in e.items()}

INSN = re.compile(r'^(\? )?([0-9a-f]{16})\b')
EVENT = re.compile(r'^\[(?:[0-9a-f]{16}\s+)?(.*)\]')


# enum strace_decode_error (include/strace/decoder.h)
DE = {4200 + i: n for i, n in enumerate(
    ['BASE', 'NOSYNC', 'BADPKT', 'NOMAP', 'BADINSN', 'NOTNT', 'NOTIP',
     'NOIP', 'DESYNC', 'LOOP', 'EMIT', 'NOCAPSTONE', 'RETCOMP', 'PEBS',
     'NEWER'])}


def lengths(lst, org):
    """address -> instruction length, from yasm's listing."""
    out = {}
    for line in open(lst, errors='replace'):
        m = re.match(r'^\s*\d+\s+([0-9A-F]{8})\s+([0-9A-F]+)\s+\S', line)
        if m:
            out[org + int(m.group(1), 16)] = len(m.group(2)) // 2
    return out


def ptxed_tokens(exp, lens):
    toks = []
    prev = None     # (address, length) of the previous instruction
    fill = None     # index of a token waiting for the next instruction
    for line in open(exp, errors='replace'):
        line = line.rstrip('\n')
        m = INSN.match(line)
        if m:
            a = int(m.group(2), 16)
            if fill is not None:
                toks[fill][1] = a
            elif prev is None:
                toks.append(['BEGIN', a])
            elif a != prev[0] + prev[1]:
                toks.append(['BR', prev[0], a])
            fill = None
            prev = (a, lens.get(a, 0))
            continue
        m = EVENT.match(line)
        if not m:
            continue  # --stat lines and the like
        ev = m.group(1)
        mm = re.match(r'ptwrite: ([0-9a-f]+)', ev)
        if mm:
            # data, not a stop: the flow goes on. Before the first
            # instruction of a resumed flow it came before the resume
            if fill is not None:
                toks.insert(fill, ['PTW', int(mm.group(1), 16)])
                fill += 1
            else:
                toks.append(['PTW', int(mm.group(1), 16)])
            continue
        flow = []
        if 'error' in ev:
            flow = [['ERROR'], ['BEGIN', None]]
        elif ev.startswith('disabled') or ev.startswith('end of trace'):
            flow = [['END']]
        elif ev.startswith('enabled') or ev.startswith('resumed'):
            flow = [['BEGIN', None]]
        elif ev.startswith('overflow'):
            flow = [['OVF'], ['BEGIN', None]]
        elif re.match(r'interrupt(,|$)', ev):
            # the asynchronous branch, "[interrupt]" (libipt's newer
            # ptxed also prints what event trace tells: "[interrupt 14,
            # cr2: ...]" of a CFE.INTR, "[interrupts enabled]" of a
            # MODE.Exec: informational, as [iret], [trig 1a] are)
            mm = re.search(r'to: ([0-9a-f]+)', ev)
            flow = [['ASYNC', int(mm.group(1), 16) if mm else None]]
        if not flow:
            continue  # informational: exec mode, tsx, cbr, vmcs, ...
        if prev is not None:
            # the last instruction listed before the flow stops: ptxed
            # does not show whether it branched (no successor is listed)
            toks.append(['BR?', prev[0]])
        toks.extend(flow)
        prev = None
        fill = len(toks) - 1 if toks[-1][0] in ('BEGIN', 'ASYNC') else None
    if prev is not None:
        toks.append(['BR?', prev[0]])
    return toks


def our_tokens(jsonl, lens):
    toks = []
    evs = [json.loads(line, object_hook=hexints) for line in open(jsonl)]
    flow = ('call', 'return', 'jump', 'syscall', 'sysret', 'interrupt',
            'trace_begin', 'trace_end', 'overflow', 'error', 'ptwrite')
    evs = [e for e in evs if e['type'] in flow]
    for i, e in enumerate(evs):
        t = e['type']
        if t == 'ptwrite':
            toks.append(['PTW', e['payload']])
            continue
        if t == 'interrupt':
            # an asynchronous transfer after which tracing is off (a
            # FUP + TIP.PGD: the next flow event starts it again, or
            # none comes) is ptxed's [disabled]
            nxt = next((x['type'] for x in evs[i + 1:]
                        if x['type'] != 'ptwrite'), None)
            off = not e.get('to') or nxt in (None, 'trace_begin', 'sysret')
            # a start right before it at its source: no instruction ran
            if toks and toks[-1][0] == 'BEGIN' and toks[-1][1] == e['from']:
                toks.pop()
            toks.append(['END'] if off else ['ASYNC', e['to']])
            continue
        if t in ('call', 'return', 'jump'):
            # a call to the next instruction (the PIC idiom) is a call,
            # but no taken branch in a listing
            if e['to'] != e['from'] + lens.get(e['from'], -1):
                toks.append(['BR', e['from'], e['to']])
        elif t == 'syscall':
            toks.append(['BR', e['from'], e['to']] if e.get('to')
                        else ['END'])
        elif t == 'sysret':
            toks.append(['BEGIN', e['to']])
        elif t == 'trace_begin':
            toks.append(['BEGIN', e['ip']])
        elif t == 'trace_end':
            toks.append(['END'])
        elif t == 'overflow':
            toks.append(['OVF'])
        elif t == 'error':
            toks.append(['ERROR', e.get('flags', 0), e.get('offset', 0)])
    return toks


def normalize(toks):
    out = []
    for t in toks:
        if t[0] == 'END' and out and out[-1][0] == 'END':
            continue
        if t[0] in ('OVF', 'ERROR') and out and out[-1][0] == 'BEGIN':
            out.pop()  # no instruction ran in that window
        if t[0] in ('ASYNC', 'END') and out and out[-1][0] == 'BEGIN' and \
                out[-1][1] is None:
            # ptxed's start with no instruction before an asynchronous
            # transfer or a stop: ours is dropped where it is at the
            # transfer's source (our_tokens())
            out.pop()
            if t[0] == 'END':
                continue
        if t[0] == 'BEGIN' and out and out[-1][0] == 'BEGIN':
            if t[1] is None:
                continue  # [overflow] then [enabled], say: one start
            if out[-1][1] is None:
                out.pop()
        out.append(t)
    while out and out[0][0] == 'END':
        out.pop(0)
    while out and (out[-1][0] == 'END' or
                   (out[-1][0] == 'BEGIN' and out[-1][1] is None)):
        out.pop()
    return out


def same(x, y):
    if x[0] != y[0]:
        return False
    if x[0] == 'ERROR':
        return True
    return all(a is None or b is None or a == b
               for a, b in zip(x[1:], y[1:]))


def show(t):
    if t is None:
        return 'nothing'
    if t[0] == 'ERROR':
        return 'ERROR' + (' (%s at trace offset 0x%x)' % (
            DE.get(t[1], 'flags 0x%x' % t[1]), t[2]) if len(t) > 1 else '')
    return ' '.join([t[0]] + ['?' if a is None else '%x' % a
                              for a in t[1:]])


def main():
    lst, org, exp, jsonl = sys.argv[1:5]
    lens = lengths(lst, int(org, 0))
    want = normalize(ptxed_tokens(exp, lens))
    got = normalize(our_tokens(jsonl, lens))
    i = j = 0
    while i < len(want) or j < len(got):
        w = want[i] if i < len(want) else None
        g = got[j] if j < len(got) else None
        if w is not None and w[0] == 'BR?':
            if g is not None and g[0] == 'BR' and g[1] == w[1]:
                j += 1
            i += 1
            continue
        if w is not None and g is not None and same(w, g):
            i += 1
            j += 1
            continue
        # a window in which no branch was taken: ptxed shows it only when
        # an instruction ran in it, we always (the trace says where it
        # began); skipped on either side
        if g is not None and g[0] == 'BEGIN' and j + 1 < len(got) and \
                got[j + 1][0] == 'END':
            j += 2
            continue
        if g is not None and g[0] == 'BEGIN' and j + 1 == len(got):
            j += 1
            continue
        if w is not None and w[0] == 'BEGIN' and i + 1 < len(want) and \
                want[i + 1][0] in ('END', 'BR?') and \
                (i + 2 == len(want) or want[i + 1][0] == 'END' or
                 want[i + 2][0] == 'END'):
            i += 2 if want[i + 1][0] == 'END' else 3
            continue
        we = sum(t[0] == 'ERROR' for t in want)
        ge = sum(t[0] == 'ERROR' for t in got)
        cls = ('extra error' if ge > we else
               'missing error' if ge < we else 'branches differ')
        print('%s\ttoken %d: ptxed %s, ours %s' % (cls, j, show(w),
                                                   show(g)))
        return
    print('same\t-')


main()
