#!/usr/bin/env python3
"""The queue workload of issue 16: 50 producers LPUSH and 50 consumers BRPOP
on a few queues, Tern beside redis-server-unstable and Debian's redis-server
7.0, one after the other in one run (a fresh server each). The server runs
pinned to CPU 0 (Tern with one worker); two tern-bench processes, one with
the 50 producer connections and one with the 50 consumer connections, share
CPU 1. 16-byte elements, BRPOP with a 1 s timeout over the same queues.

Prints, per server: pushes/s, pops/s, server CPU µs per operation (its
utime+stime from /proc over the run, divided by pushes + pops), and the
load generators' own CPU use over the run (from wait4's rusage): near
100% of CPU 1 means they, not the server, set the pace.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/list_queue.py [--repeats 3] [--secs 5] [--queues 4]
"""
import argparse
import os
import statistics
import subprocess

from datatypes import BENCH, SERVERS, cpu, start, stop


def bench_args(port, secs, queues, command):
    return ["taskset", "-c", "1", str(BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
            "--key-minimum", "1", "--key-maximum", str(queues), "-d", "16", "--pipeline", "1",
            "--test-time", str(secs), "--command", command]


def totals(out):
    for line in out.splitlines():
        if line.startswith("Totals"):
            return float(line.split()[1])
    raise RuntimeError("no Totals line:\n" + out)


def run(server, secs, queues):
    p, port = start(server)
    try:
        a = cpu(p.pid)
        procs = [subprocess.Popen(bench_args(port, secs, queues, c), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                 for c in ("LPUSH __key__ __data__", "BRPOP __key__ 1")]
        outs, load = [], 0.0
        for b in procs:
            outs.append(b.stdout.read())
            _, _, ru = os.wait4(b.pid, 0)
            b.returncode = 0
            load += ru.ru_utime + ru.ru_stime
        b_cpu = cpu(p.pid)
        pushes, pops = totals(outs[0]), totals(outs[1])
        return pushes, pops, (b_cpu - a) * 1e6 / ((pushes + pops) * secs), load / secs
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--queues", type=int, default=4)
    ap.add_argument("--servers", default=",".join(SERVERS))
    a = ap.parse_args()
    servers = [s for s in a.servers.split(",") if os.path.exists(SERVERS[s][0])]
    rows = {}
    for _ in range(a.repeats):
        for s in servers:
            r = run(s, a.secs, a.queues)
            rows.setdefault(s, []).append(r)
            print(s, *(round(x, 3) for x in r), flush=True)
    print()
    print("| server | pushes/s | pops/s | server CPU µs/op | load generators' CPU |")
    print("|---|---:|---:|---:|---:|")
    for s in servers:
        m = [statistics.median(x[i] for x in rows[s]) for i in range(4)]
        print(f"| {s} | {m[0]:,.0f} | {m[1]:,.0f} | {m[2]:.2f} | {m[3] * 100:.0f}% |")


if __name__ == "__main__":
    main()
