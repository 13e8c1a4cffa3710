#!/usr/bin/env python3
"""tests/stack/stacktruth.py - the true call stack at every call, from a
ptsynth stack truth (`ptsynth --stack`: truth v2, "stack 1"; docs/ptsynth.md
7 and 8). Stdlib only.

usage: stacktruth.py TRUTH     one line per call, per thread (below)
       import stacktruth       read(), walk(), stacks() for other checks

The stack pointer is the judge; nothing pairs calls with returns. Every
truth line carries SP, RSP at its target (after a call's push, after a
return's pop, after a longjmp; for `syscall` RSP at the syscall, for
`async` at the interrupted instruction). Per thread, in order:

1. A frame is a call: its site (FROM, the call instruction), its target
   (TO) and its slot (the call line's SP: where the return address went).
   A frame is live while RSP <= its slot.
2. Every line with SP kills the live frames whose slot is below SP: a
   return, a longjmp, a C++ exception's landing (libgcc returns into the
   landing pad), an OCaml raise, a handler's return all move RSP above
   the slots they leave. Slots shrink from the outermost frame inwards,
   so the frames killed are always the innermost ones.
3. A call first kills what lies at or below its slot (RSP before the call
   was slot + 8: a frame whose return address it overwrites is gone),
   then pushes its frame.
4. Signal handlers: the kernel enters them without a call. Their frame
   is a signal frame, slot = RSP at the handler's first instruction (the
   return address to the signal restorer), live while RSP <= it, like any
   other. A handler is entered by a `resume` line (after an `async`: a
   fault or a signal between two instructions) or by a `sysret` to
   somewhere else than the instruction after its syscall with RSP below
   the syscall's (a signal delivered as the syscall returned). Its site
   is where the interrupted code resumes: the async line's FROM, or the
   syscall's FROM + 2. A `sysret` elsewhere with RSP not below is the
   return from a handler (rt_sigreturn): rule 2 only. Not modelled: an
   alternate signal stack (sigaltstack) or any other stack switch, which
   rule 2 would take for a return past every frame.
5. Frames whose call came before the trace began are not known: every
   thread's stack starts empty at its `begin` line. Returns to such
   frames kill nothing; they are counted per thread ("unseen returns").
   Lines with SP 0 (not known: QEMU's log ended between an instruction
   and its register dump) kill nothing.

Output: "# thread TID calls N signal-frames S max-depth D unseen-returns
U", then per call "INDEX ADDR... SITE TARGET" (hex): INDEX counts the
thread's calls from 0; ADDR is the site of each live frame, outermost
first, a signal frame as "sig:ADDR"; then the call's own site and target.
Branches inside an injected gap ("# gap begin".."# gap end") are real
executed branches and count here (no decoder can see them).
"""
import sys


class Frame:
    __slots__ = ("site", "target", "slot", "signal", "line")

    def __init__(self, site, target, slot, signal, line):
        self.site, self.target, self.slot = site, target, slot
        self.signal, self.line = signal, line

    def label(self):
        return ("sig:%x" if self.signal else "%x") % self.site


def read(path):
    """{tid: [(lineno, from, to, kind, sp)]} in order, and the header
    lines. Raises ValueError unless the file is a stack truth."""
    threads, header, tid = {}, [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#"):
                w = line.split()
                if line.startswith("# section thread"):
                    tid = int(w[3])
                    threads.setdefault(tid, [])
                elif tid is None:
                    header.append(line.rstrip("\n"))
                continue
            w = line.split()
            if len(w) != 4:
                raise ValueError("%s:%d: not a stack truth line (ptsynth --stack): %s"
                                 % (path, n, line.strip()))
            threads[tid].append((n, int(w[0], 16), int(w[1], 16), w[2], int(w[3], 16)))
    if not any(h.startswith("# options") and " stack 1" in h for h in header):
        raise ValueError("%s: no '# options ... stack 1': not made with --stack" % path)
    return threads, header


def walk(lines):
    """Apply the rules to one thread's lines. Yields, per line, (line,
    stack, killed, new): stack is the live frames after the line (a list
    owned by walk, outermost first), killed the frames it ended
    (innermost first), new the frame it pushed or None."""
    stack = []
    last_syscall = None  # (from, sp) of the last syscall line
    interrupted = None   # from of the last async line
    for ln in lines:
        _, frm, to, kind, sp = ln
        killed, new = [], None
        if sp:
            limit = sp + 8 if kind == "call" else sp
            while stack and stack[-1].slot < limit:
                killed.append(stack.pop())
        if kind == "call" and sp:
            new = Frame(frm, to, sp, False, ln)
        elif kind == "resume" and sp and interrupted is not None:
            new = Frame(interrupted, to, sp, True, ln)
        elif kind == "sysret" and sp and last_syscall is not None:
            sfrom, ssp = last_syscall
            if to != sfrom + 2 and ssp and sp < ssp:
                new = Frame(sfrom + 2, to, sp, True, ln)
        if kind == "syscall":
            last_syscall = (frm, sp)
        elif kind == "async":
            interrupted = frm
        if new:
            stack.append(new)
        yield ln, stack, killed, new


def stacks(lines):
    """Per call of one thread: (index, line, [labels of the live frames],
    site, target)."""
    i = 0
    for ln, stack, _, new in walk(lines):
        if ln[3] == "call" and new is not None:
            yield i, ln, [f.label() for f in stack[:-1]], ln[1], ln[2]
            i += 1


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: stacktruth.py TRUTH\n")
        return 2
    try:
        threads, _ = read(sys.argv[1])
    except (OSError, ValueError) as e:
        sys.stderr.write("stacktruth: %s\n" % e)
        return 1
    out = sys.stdout
    out.write("# stacktruth of %s: frames called before the trace began "
              "are not known (each thread's stack starts empty)\n" % sys.argv[1])
    for tid, lines in threads.items():
        ncalls = nsig = depth = unseen = 0
        for ln, stack, killed, new in walk(lines):
            depth = max(depth, len(stack))
            ncalls += ln[3] == "call" and new is not None
            nsig += new is not None and new.signal
            unseen += ln[3] == "return" and not killed and ln[4] != 0
        out.write("# thread %d calls %d signal-frames %d max-depth %d "
                  "unseen-returns %d\n" % (tid, ncalls, nsig, depth, unseen))
        for i, _, labels, site, target in stacks(lines):
            out.write("%d %s%x %x\n" % (i, "".join(a + " " for a in labels),
                                         site, target))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
