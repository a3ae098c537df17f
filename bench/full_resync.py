#!/usr/bin/env python3
"""A full resynchronisation under load (issue 45): a master of `--keys`
keys of 100 B on CPU 0 gains a fresh, empty replica on CPU 1 while
tern-bench (CPU 1) reads from the master.

For each server (master and replica the same binary; Tern and Debian's
redis-server 7.0 alternate, `--repeats` times each):

  quiet    GET of random keys, 20 connections, pipeline 1, for `--secs`;
  syncing  the same load while a replica started empty is told REPLICAOF:
           the load runs for the time the last sync took (the first
           sync's load runs `--secs`), so that its p99.9 is the master's
           under a sync rather than diluted by quiet time after it;
  to serving  seconds from REPLICAOF until the replica's link is up with
           no sync in progress (it serves reads: no -LOADING);
  (the replica runs at nice 19, `--replica-nice`, so that tern-bench
  beside it measures the master rather than its own wait for CPU 1);
  extra memory  in one more sync after those (its latency shown apart:
           reading smaps_rollup stalls the server, see bench/bgsave.py),
           the most the proportional set size (Pss) of the master
           and its children (Redis's fork) rose above its value before
           REPLICAOF, sampled every 20 ms, in MiB and as a share of INFO
           `used_memory` (the dataset). Both servers sync diskless with
           no delay (`repl-diskless-sync yes`, `-delay 0`).

Reports medians: ops/s, p99.9 quiet and syncing and their ratio, the
time to serving, the extra memory.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/full_resync.py [--keys 5000000] [--repeats 3] [--secs 10]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import datatypes
from bgsave import bench, info, pss
from datatypes import SERVERS, stop
from datatypes import start as start_server
from list_memory import request


NICE = 19


def synced(port):
    """The replica's link is up and no sync is in progress."""
    try:
        r = request(port, "INFO", "replication")
    except OSError:
        return False
    return "master_link_status:up" in r and "master_sync_in_progress:0" in r


def fill(port, keys):
    subprocess.run(["taskset", "-c", "1", str(datatypes.BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
                    "--key-minimum", "1", "--key-maximum", str(keys), "-d", "100", "--ratio", "1:0",
                    "--key-pattern", "P:P", "-n", "allkeys", "--pipeline", "50"],
                   check=True, capture_output=True, timeout=1800)


def gets(port, keys, secs, out):
    """GET-only load: a sync is read under."""
    return bench(port, keys, secs, out, ratio="0:1")


def one_sync(server, master, mport, keys, secs, out, d, sample):
    """A fresh replica told REPLICAOF under the load: (load result,
    seconds to serving, peak extra Pss of the master if `sample`)."""
    rdir = tempfile.mkdtemp(dir=d)
    # The replica shares CPU 1 with tern-bench: at the lowest priority,
    # so that the client's latency is the master's, not its own wait for
    # the CPU while the replica loads (a replica has a machine of its own).
    rp, rport = start_server(["nice", "-n", str(NICE)] + SERVERS[server], extra=["--dir", rdir], cpus="1")
    try:
        base = pss(master.pid)
        state = {"peak": base, "stop": False}

        def sampler():
            while sample and not state["stop"]:
                state["peak"] = max(state["peak"], pss(master.pid))
                time.sleep(0.02)

        th = threading.Thread(target=sampler)
        th.start()
        res = {}
        load = threading.Thread(target=lambda: res.setdefault("r", gets(mport, keys, secs, out)))
        load.start()
        time.sleep(0.2)
        t0 = time.monotonic()
        reply = request(rport, "REPLICAOF", "127.0.0.1", str(mport))
        if not reply.startswith("+"):
            raise RuntimeError(reply)
        while not synced(rport):
            if time.monotonic() - t0 > 900:
                raise RuntimeError(f"{server}: no sync in 900 s")
            time.sleep(0.01)
        took = time.monotonic() - t0
        load.join()
        state["stop"] = True
        th.join()
        n = int(request(rport, "DBSIZE").lstrip(":"))
        if n != keys:
            raise RuntimeError(f"{server}: the replica has {n} keys of {keys}")
        return res["r"], took, state["peak"] - base
    finally:
        stop(rp)
        shutil.rmtree(rdir, ignore_errors=True)


def run(server, keys, secs, repeats):
    d = tempfile.mkdtemp(prefix="resync-")
    extra = ["--dir", d, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]
    p, port = start_server(server, extra=extra, cpus="0")
    try:
        fill(port, keys)
        used = int(info(port, "used_memory", "memory"))
        out = os.path.join(d, "bench.json")
        quiet, syncing, took = [], [], []
        load_secs = secs
        for _ in range(repeats):
            quiet.append(gets(port, keys, secs, out))
            r, t, _ = one_sync(server, p, port, keys, load_secs, out, d, False)
            syncing.append(r)
            took.append(t)
            load_secs = max(1, int(t))
        sampled = one_sync(server, p, port, keys, load_secs, out, d, True)
        return quiet, syncing, took, sampled, used
    finally:
        stop(p)
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=5_000_000)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--servers", default="tern,redis-7.0")
    ap.add_argument("--replica-nice", type=int, default=19, help="the replica's nice value (0: as the client)")
    a = ap.parse_args()
    global NICE
    NICE = a.replica_nice
    print("| server | quiet ops/s | quiet p99.9 ms | syncing ops/s | syncing p99.9 ms (runs) | p99.9 syncing / quiet | "
          "to serving s (runs) | sampled run: p99.9 ms, to serving s | master extra MiB | of used_memory |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    med = lambda runs, i: statistics.median(r[i] for r in runs)
    for s in a.servers.split(","):
        quiet, syncing, took, (sr, st, m), used = run(s, a.keys, a.secs, a.repeats)
        each = " / ".join(f"{r[2]:.3f}" for r in syncing)
        ts = " / ".join(f"{t:.2f}" for t in took)
        print(f"| {s} | {med(quiet, 0):,.0f} | {med(quiet, 2):.3f} | {med(syncing, 0):,.0f} | {med(syncing, 2):.3f} ({each}) | "
              f"{med(syncing, 2) / med(quiet, 2):.2f} | {statistics.median(took):.2f} ({ts}) | {sr[2]:.3f}, {st:.2f} | {m / 2**20:.0f} | "
              f"{100 * m / used:.1f}% |", flush=True)


if __name__ == "__main__":
    main()
