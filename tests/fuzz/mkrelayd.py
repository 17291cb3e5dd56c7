#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mkrelayd.py DIR: the seed corpus of relayd_fuzz.c, relayd's answers to
what the harness has lrb-record ask (two CPUs, two packets each, a
beacon of CPU 0, the end), as lttng-relayd 2.13 gives them: a session
that goes well, by either consumer's path; one whose end waits a round
for relayd to write; a long output path; a refused session; an older
relayd. Each file: the harness's mode byte, then the answers
(big-endian, as relayd.h lays them out)."""
import os
import struct
import sys

OK = 10


def status(code=OK):
    return struct.pack('>I', code)


def session(path=b'/srv/lttng-traces/host/fz-20261128-120000', code=OK):
    return struct.pack('>QII', 7, code, len(path)) + path


def opening(path=b'/srv/lttng-traces/host/fz-20261128-120000'):
    out = struct.pack('>II', 2, 13) + session(path) + status()
    for handle in (1, 2, 3):                    # metadata, cpu0, cpu1
        out += struct.pack('>QI', handle, OK)
    return out + status()                       # STREAMS_SENT


def packets():
    out = status() + status()                   # first packets: indexes
    out += status() + status(0)                 # cpu0: index, written
    out += status() + status(0)                 # cpu1
    out += status() + status(0)                 # beacon of cpu0
    return out


def ending(rounds=1):
    out = b''
    for r in range(rounds):
        pending = 1 if r < rounds - 1 else 0
        out += status() + status()              # BEGIN, QUIESCENT
        out += status(pending) + status(0)      # DATA_PENDING per CPU
        out += status(pending)                  # END_DATA_PENDING
    return out + status() * 3                   # CLOSE_STREAM x 3


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    seeds = {
        'mmap-ok': b'\0' + opening() + packets() + ending(),
        'read-ok': b'\1' + opening() + packets() + ending(),
        'mmap-pending': b'\0' + opening() + packets() + ending(3),
        'long-path': b'\0' + opening(b'/' + b'p' * 4095) + packets() +
                     ending(),
        'refused': b'\0' + struct.pack('>II', 2, 13) + session(code=12),
        'old-relayd': b'\0' + struct.pack('>II', 2, 4),
    }
    for name, data in seeds.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data)


main()
