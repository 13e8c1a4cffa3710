#!/usr/bin/env python3
"""tests/stack/truthtree.py - the call tree of a program built with -pg,
from ptsynth's stack truth, in the form tests/stack/uftrace-tree.sh
prints uftrace's.

usage: truthtree.py TRUTH SIDEBAND

Per thread "# thread TID", then per frame of one of the program's own
functions (a function of the traced program's file that calls mcount,
elfsym.calls_mcount: a call, or a signal handler's entry), in order,
"DEPTH NAME": DEPTH is how many of the live frames (stacktruth.py's
rules) are the program's own functions. A function entered by a jump
(a tail call) makes no frame: uftrace, which sees mcount, would show it;
the -pg corpus programs make none.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfsym  # noqa: E402
import stacktruth  # noqa: E402


def tree(lines, img):
    """(depth, name) per call of an own function of one thread."""
    own = {}

    def is_own(a):
        if a not in own:
            own[a] = img.own(a) and img.calls_mcount(a)
        return own[a]

    depth = 0  # own frames live
    for ln, stack, killed, new in stacktruth.walk(lines):
        depth -= sum(1 for f in killed if is_own(f.target))
        if new is not None and is_own(new.target):
            yield depth, img.func(new.target)[0]
            depth += 1


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: truthtree.py TRUTH SIDEBAND\n")
        return 2
    try:
        threads, _ = stacktruth.read(sys.argv[1])
        img = elfsym.Image(sys.argv[2])
    except (OSError, ValueError) as e:
        sys.stderr.write("truthtree: %s\n" % e)
        return 1
    for tid, lines in threads.items():
        print("# thread %d" % tid)
        for d, name in tree(lines, img):
            print("%d %s" % (d, name))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
