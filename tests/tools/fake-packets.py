#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fake-packets.py FILE CPU PACKET...: write the packets a fake cpu file
(tests/tools/fakecpu.c) is to deliver. Each PACKET is SIZE[:KIND]: a
packet of SIZE bytes (its packet_size; a header and no record), numbered
from 0 (packet_seq_num), of CPU; KIND badmagic gives it another magic.
N*SIZE stands for N such packets."""
import struct
import sys

MAGIC = 0xC1FC1FC1
HEADER = '<IIQQQQQQII'


def main():
    out, cpu = sys.argv[1], int(sys.argv[2])
    seq = 0
    with open(out, 'wb') as f:
        for arg in sys.argv[3:]:
            count, _, spec = arg.rpartition('*')
            size, _, kind = spec.partition(':')
            for _ in range(int(count or 1)):
                size = int(size)
                magic = 0xdeadbeef if kind == 'badmagic' else MAGIC
                hdr = struct.pack(HEADER, magic, 0, 1000 * seq,
                                  1000 * seq + 999, 64 * 8, size * 8, seq, 0,
                                  cpu, 64)
                f.write(hdr + bytes(size - len(hdr)))
                seq += 1


main()
