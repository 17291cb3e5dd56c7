#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fake-relayd.py PORTFILE PATH_HEX: one session of lttng-relayd's
control protocol (tools/lrb-record/relayd.h), every command answered as
relayd answers it when all goes well, on 127.0.0.1: CREATE_SESSION with
the output path PATH_HEX (hexadecimal bytes, any), DATA_PENDING and
END_DATA_PENDING with "nothing pending". The data connection is read and
dropped. Writes "CONTROL_PORT DATA_PORT" to PORTFILE once listening, and
ends when the control connection closes. For the tests of what
lrb-record does with relayd's answers (tests/tools/test-relayd.sh)."""
import os
import socket
import struct
import sys
import threading

CMD_ADD_STREAM, CMD_CREATE_SESSION, CMD_VERSION = 1, 2, 5
CMD_SEND_METADATA, CMD_DATA_PENDING, CMD_END_DATA_PENDING = 6, 8, 11
LTTNG_OK = 10


def listener():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    s.listen(1)
    return s


def drain(s):
    c, _ = s.accept()
    while c.recv(65536):
        pass


def main():
    path = bytes.fromhex(sys.argv[2])
    ctl, dat = listener(), listener()
    threading.Thread(target=drain, args=(dat,), daemon=True).start()
    with open(sys.argv[1] + '.tmp', 'w') as f:
        f.write('%d %d' % (ctl.getsockname()[1], dat.getsockname()[1]))
    os.rename(sys.argv[1] + '.tmp', sys.argv[1])
    c, _ = ctl.accept()

    def get(n):
        b = b''
        while len(b) < n:
            r = c.recv(n - len(b))
            if not r:
                sys.exit(0)
            b += r
        return b

    handle = 0
    while True:
        _, size, cmd, _ = struct.unpack('>QQII', get(24))
        get(size)
        if cmd == CMD_VERSION:
            c.sendall(struct.pack('>II', 2, 13))
        elif cmd == CMD_CREATE_SESSION:
            c.sendall(struct.pack('>QII', 1, LTTNG_OK, len(path)) + path)
        elif cmd == CMD_ADD_STREAM:
            handle += 1
            c.sendall(struct.pack('>QI', handle, LTTNG_OK))
        elif cmd == CMD_SEND_METADATA:
            pass
        elif cmd in (CMD_DATA_PENDING, CMD_END_DATA_PENDING):
            c.sendall(struct.pack('>I', 0))
        else:
            c.sendall(struct.pack('>I', LTTNG_OK))


main()
