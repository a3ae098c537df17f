#!/usr/bin/env python3
"""Tail latency at 80% of peak throughput (issue 22): Tern beside
redis-server-unstable (and any other server in datatypes.SERVERS), a fresh
server per run, alternating which goes first.

Each server is pinned to CPU 0 (Tern with one worker) and tern-bench to
CPU 1 with 50 connections at pipeline 1, over 1M keys of 100 B loaded in
key order first. For each workload a run:
  1. measures the server's peak (no rate limit, `--secs`);
  2. then, on the same server, offers 80% of that peak, spread evenly over
     the connections (`tern-bench --rate-limiting`), and records p50, p99,
     p99.9 and max latency and the server's CPU µs per operation.
A second pass offers every server the same rate, 80% of the lowest median
peak, so that tails are compared at equal load too. Latency is counted from
each request's send (as memtier counts it). Medians of `--repeats`.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/tail_latency.py [--repeats 3] [--secs 10] [--workloads get,mixed]
"""
import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datatypes as d  # noqa: E402

KEYS = 1_000_000
CONNS = 50
WORKLOADS = {
    "get": ["--ratio", "0:1"],
    "mixed": ["--ratio", "1:10"],  # memtier's default mix
}


def bench(port, args, secs=None):
    """Runs tern-bench; the Totals line's ops/s, p50, p99, p99.9, max (ms)."""
    argv = ["taskset", "-c", "1", str(d.BENCH), "-p", str(port), "-t", "1", "-c", str(CONNS), "--hide-histogram",
            "--key-minimum", "1", "--key-maximum", str(KEYS), "-d", "100"] + args
    if secs:
        argv += ["--distinct-client-seed", "--test-time", str(secs)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=900).stdout
    for line in out.splitlines():
        if line.startswith("Totals"):
            f = line.split()
            return dict(ops=float(f[1]), p50=float(f[5]), p99=float(f[7]), p999=float(f[8]), max=float(f[9]))
    raise RuntimeError("no Totals line:\n" + out)


def run(server, workload, secs, rate=None):
    """One fresh server: load, then the peak run (when `rate` is None) and a
    run at `rate` requests/s in all (80% of this run's peak when None)."""
    p, port = d.start(server)
    try:
        bench(port, ["--ratio", "1:0", "--key-pattern", "P:P", "-n", "allkeys", "--pipeline", "50"])
        peak = None
        if rate is None:
            peak = bench(port, WORKLOADS[workload], secs)
            rate = 0.8 * peak["ops"]
        per_conn = max(1, round(rate / CONNS))
        a = d.cpu(p.pid)
        r = bench(port, WORKLOADS[workload] + ["--rate-limiting", str(per_conn)], secs)
        b = d.cpu(p.pid)
        r["cpu"] = (b - a) * 1e6 / (r["ops"] * secs)
        return peak, r
    finally:
        d.stop(p)


def med(rows, k):
    return statistics.median(x[k] for x in rows)


def table(title, results, servers, workloads, with_peak):
    print(f"\n{title}\n")
    head = "| workload | server | " + ("peak ops/s | " if with_peak else "") + \
        "offered ops/s | p50 ms | p99 ms | p99.9 ms | max ms | CPU µs/op |"
    print(head)
    print("|---|---|" + "---:|" * (head.count("|") - 3))
    for w in workloads:
        for s in servers:
            rows = results[(w, s)]
            peak = f"{med([x[0] for x in rows], 'ops'):,.0f} | " if with_peak else ""
            r = [x[1] for x in rows]
            print(f"| {w} | {s} | {peak}{med(r, 'ops'):,.0f} | {med(r, 'p50'):.3f} | {med(r, 'p99'):.3f} | "
                  f"{med(r, 'p999'):.3f} | {med(r, 'max'):.3f} | {med(r, 'cpu'):.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--servers", default="tern,redis-unstable")
    ap.add_argument("--workloads", default="get,mixed")
    a = ap.parse_args()
    servers = [s for s in a.servers.split(",") if s and Path(d.SERVERS[s][0]).exists()]
    workloads = a.workloads.split(",")
    own, same = {}, {}
    for rep in range(a.repeats):
        for w in workloads:
            for s in servers[rep % len(servers):] + servers[:rep % len(servers)]:
                peak, r = run(s, w, a.secs)
                own.setdefault((w, s), []).append((peak, r))
                print(w, s, "peak", round(peak["ops"]), "at 80%:", r, flush=True)
    rates = {w: 0.8 * min(med([x[0] for x in own[(w, s)]], "ops") for s in servers) for w in workloads}
    for rep in range(a.repeats):
        for w in workloads:
            for s in servers[rep % len(servers):] + servers[:rep % len(servers)]:
                _, r = run(s, w, a.secs, rates[w])
                same.setdefault((w, s), []).append((None, r))
                print(w, s, "same rate", round(rates[w]), r, flush=True)
    table("At 80% of each server's own peak", own, servers, workloads, True)
    table("At the same offered rate: 80% of the lower peak ("
          + ", ".join(f"{w} {rates[w]:,.0f}/s" for w in workloads) + ")", same, servers, workloads, False)


if __name__ == "__main__":
    main()
