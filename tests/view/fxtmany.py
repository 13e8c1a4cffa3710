#!/usr/bin/env python3
"""fxtmany.py LIBSTRACE RING [THREADS NAMES ROUNDS] - a saved ring with more
threads and distinct function names than the FXT tables hold (255 thread
indexes, 32767 string indexes), written through libstrace (ctypes), for
the test of ptrace-read -f fxt's index reuse (tests/view/e2e-fxt.sh).

The ring (archive mode, created at RING, which must not exist) holds:
process 1000 "many"; THREADS threads (tids 1001..., "t-N"); NAMES symbols
fn_00000... of 16 bytes each and a "main"; then ROUNDS rounds in which
every thread in turn calls two functions, one inside the other:

  call main+4 -> fn_A; call fn_A+2 -> fn_B; return fn_B+8 -> fn_A+7;
  return fn_A+8 -> main+9

A and B walk through all the names, again and again, so indexes are
reused and names come back after they were pushed out. Each thread begins
with a trace_begin in main. Prints the number of frames strace_stack
makes of it: 2 per thread and round, and one main per thread.
Defaults: 300 threads, 40000 names, 150 rounds (180000 flow events).
"""

import ctypes as C
import struct
import sys

EV_TRACE_BEGIN, EV_CALL, EV_RETURN = 1, 16, 17
EV_PROCESS, EV_THREAD, EV_SYMBOL = 48, 49, 52
REASON_START = 1
RING_ARCHIVE = 2
PID, MAIN, BASE = 1000, 0x400000, 0x500000


class Opts(C.Structure):
    _fields_ = [("size", C.c_size_t), ("capacity", C.c_uint64),
                ("strings_size", C.c_uint64), ("mode", C.c_int),
                ("no_populate", C.c_int)]


class Definition(C.Structure):
    _fields_ = [("type", C.c_uint16), ("tid", C.c_uint32), ("time", C.c_uint64),
                ("a", C.c_uint64), ("key", C.c_uint64), ("aux", C.c_uint64),
                ("name", C.c_char_p)]


class Wbuf(C.Structure):
    """struct strace_wbuf, the first member of a writer (strace/ring.h)."""
    _fields_ = [("pos", C.c_void_p), ("end", C.c_void_p), ("err", C.c_int)]


def main(argv):
    if len(argv) not in (3, 6):
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    lib = C.CDLL(argv[1])
    path = argv[2].encode()
    threads, names, rounds = (int(x) for x in argv[3:6]) if len(argv) == 6 else (300, 40000, 150)
    ring, w = C.c_void_p(), C.c_void_p()
    o = Opts(C.sizeof(Opts), 0, 64 << 20, RING_ARCHIVE, 0)
    rc = lib.strace_ring_create(path, C.byref(o), C.byref(ring))
    if rc < 0:
        print(f"fxtmany: {argv[2]}: cannot create the ring ({rc})", file=sys.stderr)
        return 1
    if lib.strace_writer_open(ring, C.byref(w)) < 0:
        print("fxtmany: cannot open a writer", file=sys.stderr)
        return 1
    wb = Wbuf.from_address(w.value)
    pending = []

    def emit(etype, tid, time, a, b):
        pending.append(struct.pack("<HHIQQQ", etype, 0, tid, time, a, b))

    def drain():
        data = b"".join(pending)
        pending.clear()
        while data:
            room = (wb.end - wb.pos) // 32
            if room == 0:
                if lib.strace_writer_flush(w) < 0:
                    raise SystemExit("fxtmany: flush failed")
                continue
            n = min(room, len(data) // 32)
            C.memmove(wb.pos, data, n * 32)
            wb.pos += n * 32
            data = data[n * 32:]

    def define(etype, tid, a, key, aux, name):
        drain()
        d = Definition(etype, tid, 1, a, key, aux, name.encode())
        if lib.strace_writer_define(w, C.byref(d), None) < 0:
            raise SystemExit(f"fxtmany: cannot define {name}")

    define(EV_PROCESS, PID, PID, PID, 0, "many")
    define(EV_SYMBOL, PID, MAIN, MAIN, 64, "main")
    for i in range(names):
        define(EV_SYMBOL, PID, BASE + 16 * i, BASE + 16 * i, 16, f"fn_{i:05d}")
    for t in range(threads):
        define(EV_THREAD, PID + 1 + t, PID, PID + 1 + t, PID, f"t-{t}")
    time = 1000
    for t in range(threads):
        emit(EV_TRACE_BEGIN, PID + 1 + t, time, MAIN, REASON_START)
        time += 10
    k = 0
    for _ in range(rounds):
        for t in range(threads):
            tid = PID + 1 + t
            fa = BASE + 16 * (k % names)
            fb = BASE + 16 * ((k + 1) % names)
            k += 2
            emit(EV_CALL, tid, time, MAIN + 4, fa)
            emit(EV_CALL, tid, time + 10, fa + 2, fb)
            emit(EV_RETURN, tid, time + 20, fb + 8, fa + 7)
            emit(EV_RETURN, tid, time + 30, fa + 8, MAIN + 9)
            time += 40
        drain()
    drain()
    if lib.strace_writer_close(w) < 0:
        print("fxtmany: the last flush failed", file=sys.stderr)
        return 1
    lib.strace_ring_close(ring)
    print(2 * rounds * threads + threads)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
