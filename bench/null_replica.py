#!/usr/bin/env python3
"""A replica that applies nothing: it asks a master for a full
resynchronisation (diskless, `capa eof`), skips the RDB, then reads the
stream and throws it away, acknowledging the bytes read every second.
bench/replication.sh's `null` workload runs it where the real replica
would run, so that the cost of streaming alone (the master's work, the
kernel's on both sides) is told apart from the cost of applying.

    python3 bench/null_replica.py PORT [SECONDS]
"""
import socket
import sys
import time


def main():
    port, secs = int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 3600
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    buf = bytearray()

    def line():
        nonlocal buf
        while b"\n" not in buf:
            d = s.recv(1 << 16)
            if not d:
                sys.exit("closed by the master")
            buf += d
        i = buf.index(b"\n")
        l, buf = bytes(buf[:i]).rstrip(b"\r"), buf[i + 1:]
        return l

    for cmd in (b"*3\r\n$8\r\nREPLCONF\r\n$14\r\nlistening-port\r\n$1\r\n0\r\n",
                b"*5\r\n$8\r\nREPLCONF\r\n$4\r\ncapa\r\n$3\r\neof\r\n$4\r\ncapa\r\n$6\r\npsync2\r\n"):
        s.sendall(cmd)
        line()
    s.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
    reply = line()
    while not reply:
        reply = line()
    offset = int(reply.split()[2])
    head = line()
    while not head:
        head = line()
    if head.startswith(b"$EOF:"):
        mark = head[5:]
        while not buf.endswith(mark):
            d = s.recv(1 << 20)
            if not d:
                sys.exit("closed during the RDB")
            buf += d
            buf = buf[-len(mark):] if len(buf) > len(mark) else buf
    else:
        left = int(head[1:]) - len(buf)
        buf = bytearray()
        while left > 0:
            left -= len(s.recv(min(left, 1 << 20)))
    buf = bytearray()
    end = time.monotonic() + secs
    last = 0.0
    while time.monotonic() < end:
        now = time.monotonic()
        if now - last >= 1:
            last = now
            o = str(offset).encode()
            s.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n" % (len(o), o))
        d = s.recv(1 << 20)
        if not d:
            return
        offset += len(d)


if __name__ == "__main__":
    main()
