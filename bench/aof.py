#!/usr/bin/env python3
"""What the append-only file costs (issue 18): SET throughput and server CPU
per operation with `appendonly yes` and `appendfsync everysec` / `always`,
Tern beside redis-server-unstable with the same settings, on the same disk,
one after the other in one run. Each server fresh, pinned to `--server-cpus`
(Tern with `--threads` workers), tern-bench on CPU 1, 50 connections at
pipeline 1 (so under `always` every reply waits for an fsync, and what one
fsync serves is what the server gathered meanwhile), 100-byte values over
`--keys` keys, `--secs` seconds. A run without AOF gives each server's
baseline.

Prints the disk's fdatasync time first (what one fsync per write would
allow), then ops/s, server CPU µs per operation (utime+stime of every thread,
from /proc, over the run), the AOF's size at the end, and Tern against
Redis.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/aof.py [--secs 5] [--keys 100000] [--dir /path/on/the/disk/to/test]
"""
import argparse
import os
import shutil
import tempfile

from datatypes import BENCH, SERVERS, cpu, start, stop
import subprocess


def bench(port, keys, secs, pipeline=1):
    args = ["taskset", "-c", "1", str(BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
            "--key-minimum", "1", "--key-maximum", str(keys), "-d", "100", "--pipeline", str(pipeline),
            "--command", "SET __key__ __data__", "--test-time", str(secs)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=secs + 300).stdout
    for line in out.splitlines():
        if line.startswith("Totals"):
            return float(line.split()[1])
    raise RuntimeError("no Totals line:\n" + out)


def fsync_ms(parent, n=200):
    """The disk's fsync of a 100-byte append, median, in ms: without
    grouping, `always` could not acknowledge more than 1000/this writes
    a second."""
    import statistics
    import time
    d = tempfile.mkdtemp(prefix="fsync-", dir=parent)
    try:
        with open(os.path.join(d, "f"), "ab") as f:
            took = []
            for _ in range(n):
                f.write(b"x" * 100)
                f.flush()
                t = time.perf_counter()
                os.fdatasync(f.fileno())
                took.append((time.perf_counter() - t) * 1000)
        return statistics.median(took)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def aof_size(d):
    total = 0
    for root, _, files in os.walk(d):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def run(server, fsync, keys, secs, cpus, threads, parent, pipeline=1):
    d = tempfile.mkdtemp(prefix="aof-", dir=parent)
    extra = ["--dir", d]
    if server.startswith("tern"):
        extra += ["--threads", str(threads)]
    if fsync:
        extra += ["--appendonly", "yes", "--appendfsync", fsync]
    else:
        extra += ["--appendonly", "no"]
    p, port = start(server, extra=extra, cpus=cpus)
    try:
        a = cpu(p.pid)
        ops = bench(port, keys, secs, pipeline)
        b = cpu(p.pid)
        return ops, (b - a) * 1e6 / (ops * secs), aof_size(d)
    finally:
        stop(p)
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--server-cpus", default="0")
    ap.add_argument("--threads", type=int, default=1, help="Tern's workers")
    ap.add_argument("--dir", default=None, help="where the AOF directories go (the disk under test)")
    ap.add_argument("--servers", default="tern,redis-unstable")
    ap.add_argument("--tern-alt", help="another tern-server, run as the server 'tern-alt' (a build to compare with)")
    ap.add_argument("--alt-args", default="", help="extra arguments for tern-alt (e.g. '--aof-prealloc-size 0' with --tern-alt set to this tree's build)")
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=1, help="runs per server, alternating; medians reported")
    ap.add_argument("--fsyncs", default="off,everysec,always", help="the appendfsync settings to run (off: no AOF)")
    a = ap.parse_args()
    servers = a.servers.split(",")
    if a.tern_alt:
        SERVERS["tern-alt"] = [a.tern_alt] + a.alt_args.split()
        servers.append("tern-alt")
    ms = fsync_ms(a.dir)
    print(f"fdatasync of a 100-byte append on this disk: {ms:.3f} ms (one at a time: at most {1000 / ms:.0f} writes/s)")
    print(f"{'fsync':10} {'server':15} {'ops/s':>10} {'cpu us/op':>10} {'aof bytes':>12}")
    import statistics
    for fsync in [None if f == "off" else f for f in a.fsyncs.split(",")]:
        got = {s: [] for s in servers}
        # Servers alternate run by run; medians per server.
        for rep in range(a.repeats):
            for s in servers:
                got[s].append(run(s, fsync, a.keys, a.secs, a.server_cpus, a.threads, a.dir, a.pipeline))
                ops, us, size = got[s][-1]
                print(f"{fsync or 'off':10} {s:15} {ops:10.0f} {us:10.2f} {size:12d}   run {rep + 1}", flush=True)
        med = {s: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for s, v in got.items()}
        for s in servers:
            print(f"{fsync or 'off':10} {s:15} {med[s][0]:10.0f} {med[s][1]:10.2f} {'':12}   median of {a.repeats}", flush=True)
        for s in servers:
            if s.startswith("tern") and "redis-unstable" in med:
                t, r = med[s], med["redis-unstable"]
                print(f"{fsync or 'off':10} {s + '/redis':15} {t[0] / r[0]:10.2f}x {t[1] / r[1]:9.2f}x   (medians)")

if __name__ == "__main__":
    main()
