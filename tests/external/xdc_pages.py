#!/usr/bin/env python3
# tests/external/xdc_pages.py ADDR DUMP - ptrace-capture --raw arguments
# for a page cache of libxdc's experiments (nyx-fuzz/libxdc_experiments'
# test_data): ADDR holds the page addresses as little-endian 64-bit words,
# DUMP the 4 KiB pages in that order. Runs of pages adjacent both in the
# dump and in memory become one section; a page listed twice is taken
# once (its first copy). One argument per line ("--raw", then
# "DUMP:OFFSET-SIZE@0xADDR"), for mapfile or xargs -d '\n'. Used by
# tests/external/kafl-traces.sh and tests/bench/xdc.sh.
import struct
import sys

if len(sys.argv) != 3:
    sys.exit("usage: xdc_pages.py ADDR DUMP")
a = open(sys.argv[1], 'rb').read()
addrs = struct.unpack('<%dQ' % (len(a) // 8), a)
seen, runs = set(), []
for i, ad in enumerate(addrs):
    if ad in seen:
        continue
    seen.add(ad)
    if runs and runs[-1][2] + runs[-1][1] == ad and runs[-1][0] + runs[-1][1] == i * 4096:
        runs[-1][1] += 4096
    else:
        runs.append([i * 4096, 4096, ad])
for off, size, ad in runs:
    print('--raw')
    print('%s:%d-%d@0x%x' % (sys.argv[2], off, size, ad))
