#!/usr/bin/env python3
"""List workloads, Tern beside redis-server-unstable and Debian's redis-server,
alternating, in one run: LPUSH and RPOP at pipeline 1 and 16, LRANGE 0 99 of
100-element lists. Each server runs pinned to CPU 0 (Tern with one worker),
tern-bench to CPU 1, 50 connections over 1,000 keys, 16-byte elements; a fresh
server per run. Prints ops/s and server CPU µs per operation (utime+stime from
/proc over the run, divided by the operations tern-bench counted), medians.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/lists.py [--repeats 3] [--secs 5]
"""
import argparse
import os
import socket
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "target/release/tern-bench"
TICK = os.sysconf("SC_CLK_TCK")
KEYS = 1000

SERVERS = {
    "tern": [str(ROOT / "target/release/tern-server"), "--threads", "1"],
    "redis-unstable": [str(ROOT.parent / "shared/reference/bin/redis-server-unstable")],
    "redis-7.0": ["/usr/bin/redis-server"],
}

# name -> (preload command or None, measured command, pipeline)
WORKLOADS = {
    "lpush-p1": (None, "LPUSH __key__ __data__", 1),
    "lpush-p16": (None, "LPUSH __key__ __data__", 16),
    "rpop-p1": ("RPUSH __key__" + " __data__" * 100, "RPOP __key__", 1),
    "rpop-p16": ("RPUSH __key__" + " __data__" * 100, "RPOP __key__", 16),
    "lrange-100": ("RPUSH __key__" + " __data__" * 100, "LRANGE __key__ 0 99", 1),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def bench(port, cmd, pipeline, secs=None, requests=None):
    args = ["taskset", "-c", "1", str(BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
            "--key-minimum", "1", "--key-maximum", str(KEYS), "-d", "16", "--pipeline", str(pipeline),
            "--command", cmd]
    args += ["--test-time", str(secs)] if secs else ["--command-key-pattern", "P", "-n", str(requests)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600).stdout
    for line in out.splitlines():
        if line.startswith("Totals"):
            return float(line.split()[1])
    raise RuntimeError("no Totals line:\n" + out)


def start(server, extra=(), cpus="0"):
    """Starts `server` pinned to `cpus` on a free port; (process, port) once it accepts."""
    port = free_port()
    argv = ["taskset", "-c", cpus] + SERVERS[server] + ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    p = subprocess.Popen(argv + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p, port
        except OSError:
            if time.time() > deadline or p.poll() is not None:
                p.kill()
                raise RuntimeError(server + " did not start")
            time.sleep(0.02)


def stop(p):
    p.kill()
    p.wait()


def run(server, workload, secs):
    p, port = start(server)
    try:
        pre, cmd, pipeline = WORKLOADS[workload]
        if pre:
            # Enough that RPOP never runs dry: 800 requests of 100 elements
            # per connection, 4M elements over the 1,000 keys.
            bench(port, pre, 16, requests=800)
        a = cpu(p.pid)
        ops = bench(port, cmd, pipeline, secs=secs)
        b = cpu(p.pid)
        return ops, (b - a) * 1e6 / (ops * secs)
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    a = ap.parse_args()
    servers = [s for s in a.servers.split(",") if Path(SERVERS[s][0]).exists()]
    rows = {}
    for _ in range(a.repeats):
        for w in a.workloads.split(","):
            for s in servers:
                r = run(s, w, a.secs)
                rows.setdefault((w, s), []).append(r)
                print(w, s, round(r[0]), round(r[1], 3), flush=True)
    print()
    print("| workload | " + " | ".join(f"{s} ops/s | {s} CPU µs/op" for s in servers)
          + " | tern/faster ops | tern/best CPU per op |")
    print("|---|" + "---:|" * (2 * len(servers) + 2))
    for w in a.workloads.split(","):
        med = {s: (statistics.median(x[0] for x in rows[(w, s)]), statistics.median(x[1] for x in rows[(w, s)]))
               for s in servers}
        cells = " | ".join(f"{med[s][0]:,.0f} | {med[s][1]:.2f}" for s in servers)
        others = [s for s in servers if s != "tern"]
        fastest = max(med[s][0] for s in others)
        cheapest = min(med[s][1] for s in others)
        print(f"| {w} | {cells} | {med['tern'][0] / fastest:.2f} | {med['tern'][1] / cheapest:.2f} |")


if __name__ == "__main__":
    main()
