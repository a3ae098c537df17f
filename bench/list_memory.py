#!/usr/bin/env python3
"""Bytes per list element: 1M lists × 10 elements × 16 B, loaded by
tern-bench (RPUSH of the 10 elements, each key once, pipeline 16), into
Tern, redis-server-unstable and Debian's redis-server 7.0, one after the
other (a fresh server each). Reports INFO `used_memory` and the process's
RSS (VmRSS from /proc) after the load minus before it, divided by the 10M
elements; the key names (`memtier-N`) and per-key overhead are included,
as a user would see them.

Then `list-compress-depth`: one list of 10,000 elements `element:NNNNNNNN`
(16 B, pushed 500 at a time) at depth 0 and at depth 1, and MEMORY USAGE
key SAMPLES 0 of each, on every server.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/list_memory.py [--keys 1000000]
"""
import argparse
import os
import socket
import subprocess

from datatypes import BENCH, SERVERS, start, stop

ELEMS = 10


def request(port, *words):
    """One command's reply: a simple reply's line, or a bulk string's text."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(("*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(w), w) for w in words)).encode())
        buf = b""
        while b"\r\n" not in buf:
            buf += s.recv(65536)
        head, rest = buf.split(b"\r\n", 1)
        if head[:1] != b"$":
            return head.decode()
        n = int(head[1:])
        while len(rest) < n + 2:
            rest += s.recv(65536)
        return rest[:n].decode()


def info(port, field):
    for line in request(port, "INFO", "memory").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":")[1])
    raise RuntimeError(field + " not in INFO")


def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def run(server, keys):
    p, port = start(server)
    try:
        used0, rss0 = info(port, "used_memory"), rss(p.pid)
        cmd = "RPUSH __key__" + " __data__" * ELEMS
        subprocess.run(["taskset", "-c", "1", str(BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
                        "--key-minimum", "1", "--key-maximum", str(keys), "-d", "16", "--pipeline", "16",
                        "--command", cmd, "--command-key-pattern", "P", "-n", "allkeys"],
                       check=True, capture_output=True, timeout=1200)
        n = int(request(port, "DBSIZE")[1:])
        llen = request(port, "LLEN", "memtier-1")
        enc = request(port, "OBJECT", "ENCODING", "memtier-1")
        if n != keys or llen != ":%d" % ELEMS:
            raise RuntimeError(f"{server}: {n} keys, LLEN {llen}")
        used, r = info(port, "used_memory") - used0, rss(p.pid) - rss0
        return used / (keys * ELEMS), r / (keys * ELEMS), enc.lstrip("+")
    finally:
        stop(p)


def compress_usage(server):
    p, port = start(server)
    try:
        out = []
        for depth in (0, 1):
            request(port, "CONFIG", "SET", "list-compress-depth", str(depth))
            key = f"depth{depth}"
            for c in range(0, 10_000, 500):
                request(port, "RPUSH", key, *(f"element:{i:08d}" for i in range(c, c + 500)))
            out.append(int(request(port, "MEMORY", "USAGE", key, "SAMPLES", "0")[1:]))
        return out
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--servers", default=",".join(SERVERS))
    a = ap.parse_args()
    print("| server | encoding | used_memory B/element | RSS B/element |")
    print("|---|---|---:|---:|")
    for s in a.servers.split(","):
        if not os.path.exists(SERVERS[s][0]):
            continue
        used, r, enc = run(s, a.keys)
        print(f"| {s} | {enc} | {used:.1f} | {r:.1f} |", flush=True)
    print()
    print("| server | MEMORY USAGE, depth 0 | depth 1 | depth 1 / depth 0 |")
    print("|---|---:|---:|---:|")
    for s in a.servers.split(","):
        if os.path.exists(SERVERS[s][0]):
            d0, d1 = compress_usage(s)
            print(f"| {s} | {d0:,} | {d1:,} | {d1 / d0:.2f} |", flush=True)


if __name__ == "__main__":
    main()
