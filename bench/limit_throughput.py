#!/usr/bin/env python3
"""Throughput at the memory limit (issue 15): SET:GET 1:10 with 1 KiB values
against a full cache, so that every SET of a new key evicts. Tern under each
eviction policy beside redis-server-unstable (and Debian's redis-server)
with `allkeys-lru` at the same `maxmemory`, alternating, a fresh server per
run. Each server is pinned to `--server-cpus` (default CPU 0; Tern with
`--threads` workers, default one), tern-bench to CPU 1 with 50 connections; the cache is first filled past the limit (2x
`maxmemory` of SETs in key order), then measured for `--secs` over uniform
random keys from a range 10x what fits. Prints ops/s, the server's CPU µs
per operation (utime+stime from /proc over the run), the evictions during
the run and the GET hit ratio, medians of `--repeats`.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/limit_throughput.py [--repeats 3] [--secs 8] [--pipeline 1,16]
    python3 bench/limit_throughput.py --threads 2 --server-cpus 0,1  # Tern's default workers
"""
import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datatypes as d  # noqa: E402

VALUE = 1024


def info(port, section):
    out = subprocess.run(["redis-cli", "-p", str(port), "info", section], capture_output=True, text=True, timeout=30).stdout
    return dict(line.split(":", 1) for line in out.replace("\r", "").splitlines() if ":" in line)


def bench(port, keys, pipeline, secs=None, fill=None):
    args = ["taskset", "-c", "1", str(d.BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
            "--key-minimum", "1", "--key-maximum", str(keys), "-d", str(VALUE), "--pipeline", str(pipeline)]
    if fill:
        args += ["--ratio", "1:0", "--key-pattern", "P:P", "-n", str(fill)]
    else:
        args += ["--ratio", "1:10", "--key-pattern", "R:R", "--distinct-client-seed", "--test-time", str(secs)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=900).stdout
    for line in out.splitlines():
        if line.startswith("Totals"):
            return float(line.split()[1])
    raise RuntimeError("no Totals line:\n" + out)


def run(server, policy, maxmemory, pipeline, secs, cpus="0"):
    p, port = d.start(server, ["--maxmemory", str(maxmemory), "--maxmemory-policy", policy], cpus=cpus)
    try:
        fits = maxmemory // VALUE
        keys = 10 * fits
        # 2x what fits, spread over the connections, in key order.
        bench(port, keys, 16, fill=2 * fits // 50)
        s0 = info(port, "stats")
        a = d.cpu(p.pid)
        ops = bench(port, keys, pipeline, secs=secs)
        b = d.cpu(p.pid)
        s1 = info(port, "stats")
        ev = int(s1["evicted_keys"]) - int(s0["evicted_keys"])
        hits = int(s1["keyspace_hits"]) - int(s0["keyspace_hits"])
        misses = int(s1["keyspace_misses"]) - int(s0["keyspace_misses"])
        used = int(info(port, "memory")["used_memory"])
        return ops, (b - a) * 1e6 / (ops * secs), ev, hits / max(1, hits + misses), used
    finally:
        d.stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=int, default=8)
    ap.add_argument("--maxmemory", type=int, default=64 << 20)
    ap.add_argument("--pipeline", default="1,16")
    ap.add_argument("--policies", default="allkeys-lru,allkeys-s3fifo", help="Tern's policies")
    ap.add_argument("--servers", default="redis-unstable,redis-7.0", help="reference servers (allkeys-lru)")
    ap.add_argument("--threads", type=int, default=1, help="Tern's workers")
    ap.add_argument("--server-cpus", default="0", help="the CPUs every server may use")
    args = ap.parse_args()
    d.SERVERS["tern"] = [x for x in d.SERVERS["tern"] if x not in ("--threads", "1")] + ["--threads", str(args.threads)]
    runs = [("tern", pol) for pol in args.policies.split(",")]
    runs += [(s, "allkeys-lru") for s in args.servers.split(",") if s and (s != "redis-7.0" or Path("/usr/bin/redis-server").exists())]
    rows = {}
    for pipeline in [int(x) for x in args.pipeline.split(",")]:
        for _ in range(args.repeats):
            for server, pol in runs:
                r = run(server, pol, args.maxmemory, pipeline, args.secs, args.server_cpus)
                print(pipeline, server, pol, *[round(x, 3) for x in r], flush=True)
                rows.setdefault((pipeline, server, pol), []).append(r)
    print()
    print("| pipeline | server | policy | ops/s | CPU µs/op | evicted during run | GET hit ratio | used_memory |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for (pipeline, server, pol), rs in rows.items():
        med = [statistics.median(r[i] for r in rs) for i in range(5)]
        print(f"| {pipeline} | {server} | {pol} | {med[0]:,.0f} | {med[1]:.2f} | {med[2]:,.0f} | {med[3]:.3f} | {med[4]:,.0f} |")


if __name__ == "__main__":
    main()
