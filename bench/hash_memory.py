#!/usr/bin/env python3
"""Bytes per hash field: 100K hashes x 50 fields x 10-byte values, Tern beside
redis-server, measured as INFO memory `used_memory` after the load minus before.

The shape is the preload of the core-set hash workloads
(`100Kkeys-load-hash-50-fields-with-10B-values`): keys `memtier-N`, fields
`field:1`..`field:50`, values of 10 bytes. Each server is started here on a
free loopback port with default settings (no persistence) and stopped by its
PID; the load is one pipelined HSET per key, sent in batches.

    bench/hash_memory.py [--tern target/release/tern-server] [--redis redis-server]
                         [--keys 100000] [--fields 50] [--value-size 10]
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    def __init__(self, port):
        deadline = time.monotonic() + 10
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.send(encode(args))
        return self.reply()


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def used_memory(c):
    info = c.call("INFO", "memory").decode()
    for line in info.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory in INFO")


def load(c, keys, fields, value_size):
    value = b"v" * value_size
    batch = 500
    for start in range(0, keys, batch):
        n = min(batch, keys - start)
        parts = []
        for k in range(start, start + n):
            args = [b"HSET", b"memtier-%d" % k]
            for f in range(1, fields + 1):
                args.append(b"field:%d" % f)
                args.append(value)
            parts.append(encode(args))
        c.send(b"".join(parts))
        for _ in range(n):
            r = c.reply()
            if int(r) != fields:
                raise RuntimeError("HSET replied %r" % r)


def measure(name, argv, port, keys, fields, value_size):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = Conn(port)
        c.call("FLUSHALL")
        before = used_memory(c)
        t0 = time.monotonic()
        load(c, keys, fields, value_size)
        secs = time.monotonic() - t0
        after = used_memory(c)
        enc = c.call("OBJECT", "ENCODING", "memtier-0").decode()
        dbsize = int(c.call("DBSIZE"))
        assert dbsize == keys, dbsize
        per_field = (after - before) / (keys * fields)
        return {"server": name, "before": before, "after": after, "per_field": per_field,
                "per_key": (after - before) / keys, "encoding": enc, "load_secs": secs}
    finally:
        proc.terminate()
        proc.wait(10)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--tern", default=os.path.join(root, "target/release/tern-server"))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--fields", type=int, default=50)
    ap.add_argument("--value-size", type=int, default=10)
    a = ap.parse_args()

    rows = []
    p = free_port()
    rows.append(measure("tern", [a.tern, "--port", str(p), "--threads", "1", "--memcache-port", "0", "--save", ""], p, a.keys, a.fields, a.value_size))
    p = free_port()
    rows.append(measure("redis", [a.redis, "--port", str(p), "--save", "", "--appendonly", "no"], p, a.keys, a.fields, a.value_size))
    print("| server | encoding | used_memory before | after | bytes/key | bytes/field |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s | %d | %d | %.1f | %.2f |" % (r["server"], r["encoding"], r["before"], r["after"], r["per_key"], r["per_field"]))
    t, rd = rows
    print("\nTern / Redis bytes per field: %.3f" % (t["per_field"] / rd["per_field"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
