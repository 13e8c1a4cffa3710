#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/fuzz/perf_cut.py - a perf.data with less PT in it, for fuzz seeds.

usage: perf_cut.py [-r] [-s SKIP] IN.data OUT.data BYTES

Writes IN.data to OUT.data with the data of its AUXTRACE records cut to
BYTES in all (give or take 7: what moves keeps its 8-byte alignment):
the record that crosses BYTES keeps what fits, those after it keep
their headers and no data. -r: BYTES of each record. -s SKIP: a
record's data begins at its first PSB at or after byte SKIP (a record
without one keeps none), so that a later part of the run is kept.

Nothing else changes: the other records, the attributes and the feature
sections are the same bytes, and every file offset into what moved is
moved (the header's, the feature table's, the attributes' id lists',
the AUXTRACE index's). A whole perf.data gives a shorter recording of
the same run, which perf and ptrace-capture -i read whole; a fuzz input
damaged somewhere keeps its damage: the records are followed as far as
they are whole, and offsets that point nowhere are left as they are.

Why: a fuzz input's time is mostly its PT's decode, about linear in its
bytes (docs/testing.md, "A fuzz seed"). A whole /usr/bin/true run is
9 KiB of PT, 8,756 branches, 3 ms an input under the sanitizers; a KiB
or two of it, from its start or from a later PSB, reach most of the same
code.
"""
import bisect
import struct
import sys

AUXTRACE = 71
FEAT_AUXTRACE = 18


def u64(b, off):
    return struct.unpack_from('<Q', b, off)[0] if off + 8 <= len(b) else None


PSB = b'\x02\x82' * 8


def cut(b, budget, per_record=False, skip=0):
    """b's bytes with its PT cut (see the module's comment): budget bytes
    in all, or in each AUXTRACE record (per_record); skip > 0: a record's
    data starts at its first PSB at or after skip (none: no data)."""
    if len(b) < 104 or b[:8] != b'PERFILE2':
        raise ValueError('not a perf.data')
    attr_size, ao, asz, do, dsz, eo, esz = (u64(b, o) for o in
                                            (16, 24, 32, 40, 48, 56, 64))
    end = min(do + dsz, len(b))
    cuts = []  # (where the bytes cut begin, how many), in file order
    fields = []  # (offset of a u64 field, its new value)
    p, left = do, budget
    while p + 8 <= end:
        typ, _, size = struct.unpack_from('<IHH', b, p)
        if size < 8 or p + size > end:
            break
        if typ != AUXTRACE:
            p += size
            continue
        n = u64(b, p + 8)
        if size < 24 or p + size + n > end:
            break
        data = p + size
        drop = 0
        if skip:
            at = b.find(PSB, data + skip, data + n)
            drop = n if at < 0 else (at - data) // 8 * 8
        if per_record:
            left = budget
        keep = min(n - drop, left)
        keep += (n - drop - keep) % 8  # what moves stays 8-byte aligned
        left -= min(keep, left)
        if drop:
            cuts.append((data, drop))
            fields.append((p + 16, u64(b, p + 16) + drop))  # its offset
        if drop + keep < n:
            cuts.append((data + drop + keep, n - drop - keep))
        if drop + keep < n or drop:
            fields.append((p + 8, keep))
        p += size + n
    starts = [c[0] for c in cuts]
    removed = [0]
    for _, n in cuts:
        removed.append(removed[-1] + n)

    def moved(o):
        """Where what lay at offset o lies now."""
        return o - removed[bisect.bisect_right(starts, o)]

    out = bytearray(b)
    for off, v in fields:
        struct.pack_into('<Q', out, off, v)

    def fix(at, value):
        """The offset at `at` (of b) is value: make it point to where
        value's byte lies now."""
        if at + 8 <= len(b) and value is not None and value <= len(b):
            struct.pack_into('<Q', out, at, moved(value))

    fix(24, ao)
    if esz:
        fix(56, eo)
    if do + dsz <= len(b):
        struct.pack_into('<Q', out, 48, moved(do + dsz) - do)
    for k in range(asz // attr_size if 16 <= attr_size and ao <= len(b)
                   else 0):
        ids = ao + (k + 1) * attr_size - 16
        fix(ids, u64(b, ids))
    bits = int.from_bytes(b[72:104], 'little')
    table = do + dsz
    feats = [f for f in range(256) if bits >> f & 1]
    for i, f in enumerate(feats):
        at = table + 16 * i
        off, size = u64(b, at), u64(b, at + 8)
        fix(at, off)
        if (f != FEAT_AUXTRACE or size is None or size < 8 or
                off + size > len(b)):
            continue
        for k in range(min(u64(b, off), (size - 8) // 16)):
            at = off + 8 + 16 * k
            fix(at, u64(b, at))
    # the bytes cut go last, from the end back
    for start, n in reversed(cuts):
        del out[start:start + n]
    return bytes(out)


def main():
    args, per_record, skip = sys.argv[1:], False, 0
    while args[:1] in (['-r'], ['-s']):
        if args[0] == '-r':
            per_record, args = True, args[1:]
        elif len(args) > 1:
            skip, args = int(args[1]), args[2:]
        else:
            break
    if len(args) != 3:
        sys.exit('usage: perf_cut.py [-r] [-s SKIP] IN.data OUT.data BYTES')
    with open(args[0], 'rb') as f:
        b = f.read()
    try:
        out = cut(b, int(args[2]), per_record, skip)
    except ValueError as e:
        sys.exit('perf_cut.py: %s: %s' % (args[0], e))
    with open(args[1], 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
