#!/usr/bin/env python3
"""Bytes per sorted-set member (issue 17): 100K sorted sets × 100 members
(compact, `listpack`) and one sorted set of 10M members (`skiplist`), loaded
into Tern, redis-server-unstable and Debian's redis-server 7.0, one after the
other (a fresh server each). Members are `member:NNNNNNNN` (15 B) with
scores spread over [0, 1e6) with fractions, so that they are doubles, not
small integers. Loaded with ZADD of 100 members (the 10M set: 1,000 members)
per command, pipelined. Reports INFO `used_memory` and the process's RSS
(VmRSS from /proc) after the load minus before it, divided by the members;
key names and per-key overhead are included, as a user would see them.

    cargo build --release -p tern-server
    python3 bench/zset_memory.py [--sets 100000] [--big 10000000] [--servers tern,redis-unstable]
"""
import argparse
import os
import socket

from datatypes import SERVERS, send_all, start, stop
from list_memory import info, request, rss


def score(i):
    return "%.3f" % ((i * 2654435761) % 1_000_003 + (i % 997) / 997)


def load(port, keys, members, per_cmd, batch):
    """ZADDs `members` members into each of `keys` keys, `per_cmd` members
    per command and `batch` commands per pipelined write."""
    with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
        cmds = []
        for k in keys:
            for c in range(0, members, per_cmd):
                args = ["ZADD", k]
                for i in range(c, min(members, c + per_cmd)):
                    args += [score(i), "member:%08d" % i]
                cmds.append(args)
                if len(cmds) == batch:
                    send_all(sock, cmds)
                    cmds = []
        if cmds:
            send_all(sock, cmds)


def measure(server, keys, members, per_cmd, batch):
    p, port = start(server)
    try:
        used0, rss0 = info(port, "used_memory"), rss(p.pid)
        load(port, keys, members, per_cmd, batch)
        card = request(port, "ZCARD", keys[0])
        enc = request(port, "OBJECT", "ENCODING", keys[0]).lstrip("+")
        if card != ":%d" % members:
            raise RuntimeError(f"{server}: ZCARD {card}")
        total = len(keys) * members
        used, r = info(port, "used_memory") - used0, rss(p.pid) - rss0
        return used / total, r / total, enc
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--big", type=int, default=10_000_000)
    ap.add_argument("--servers", default=",".join(SERVERS))
    a = ap.parse_args()
    servers = [s for s in a.servers.split(",") if os.path.exists(SERVERS[s][0])]
    print("| workload | server | encoding | used_memory B/member | RSS B/member |")
    print("|---|---|---|---:|---:|")
    for s in servers:
        used, r, enc = measure(s, ["zset:%d" % k for k in range(a.sets)], 100, 100, 100)
        print(f"| {a.sets:,} × 100 | {s} | {enc} | {used:.1f} | {r:.1f} |", flush=True)
    for s in servers:
        used, r, enc = measure(s, ["bigzset"], a.big, 1000, 10)
        print(f"| 1 × {a.big:,} | {s} | {enc} | {used:.1f} | {r:.1f} |", flush=True)


if __name__ == "__main__":
    main()
