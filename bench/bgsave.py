#!/usr/bin/env python3
"""What a background save costs while clients write (issue 18): Tern's
snapshot without fork beside redis-server-unstable's fork, one after the
other, each server fresh and pinned to CPU 0 (`--server-cpus`), tern-bench
on CPU 1.

For each server: load `--keys` keys of 100 B, then `--repeats` pairs of
runs of `--secs` seconds of SET:GET 1:1 over the same keys (20
connections, pipeline 1), alternating:

  quiet   no save;
  saving  BGSAVE issued again as soon as the previous one ends, so the
          whole run is under a save (it starts once the first save is in
          progress);

then one more saving run, "memory sampled", for the peak extra memory:
the most the proportional set size (Pss from smaps_rollup) of the
server and its children (Redis's fork) rose above its value before the
run, sampled every 20 ms, as bytes and as a share of INFO `used_memory`.
Reading smaps_rollup walks the server's page tables under its memory-map
lock, which stalls the server's own mmap/munmap and page faults for the
walk (milliseconds at millions of keys): the latency of that run is
shown, but the saving runs that give the latency figures do not sample.

Reports ops/s and tern-bench's p99 and p99.9 latency (medians of the
runs, each run's p99.9 in brackets) and the saving p99.9 over the quiet
one; for the saving runs the saves completed and their mean duration.

    cargo build --release -p tern-server -p tern-bench
    python3 bench/bgsave.py [--keys 1000000] [--secs 10] [--servers tern,redis-unstable]

With --load, instead: the time a server takes from its start to its first
PONG (Redis answers -LOADING until then, Tern does not accept before) on
one RDB file of `--keys` keys of 100 B, written by redis-server-unstable
(DEBUG POPULATE, then SAVE); servers alternate, `--repeats` runs each,
median reported. The servers are not pinned (`--load-cpus`).

    python3 bench/bgsave.py --load --keys 5000000 [--repeats 3]
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

import datatypes
from datatypes import SERVERS, free_port, stop
from datatypes import start as start_server
from list_memory import request


def pss(pid):
    """Pss of `pid` and its descendants, in bytes."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
            for t in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{t}/children").read().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def info(port, field, section="all"):
    for line in request(port, "INFO", section).splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    raise RuntimeError(field)


def bench(port, keys, secs, out, ratio="1:1"):
    """`ratio` (SET:GET) of random keys, 20 connections, pipeline 1:
    (ops/s, p99, p99.9)."""
    subprocess.run(["taskset", "-c", "1", str(datatypes.BENCH), "-p", str(port), "-t", "1", "-c", "20", "--hide-histogram",
                    "--key-minimum", "1", "--key-maximum", str(keys), "-d", "100", "--ratio", ratio,
                    "--key-pattern", "R:R", "--test-time", str(secs), "--json-out-file", out],
                   check=True, capture_output=True, timeout=secs + 120)
    t = json.load(open(out))["ALL STATS"]["Totals"]
    p = t["Percentile Latencies"]
    return t["Ops/sec"], p["p99.00"], p["p99.90"]


def under_save(port, pid, keys, secs, out, sample):
    """One `secs` run of the load with BGSAVE issued again as soon as the
    previous one ends (the load starts once the first is in progress);
    (ops/s, p99, p99.9), saves completed, their mean seconds, and the peak
    Pss of the server and its children if `sample`."""
    state = {"peak": pss(pid) if sample else 0, "saves": 0, "took": [], "stop": False}
    started = threading.Event()

    def saver():
        while not state["stop"]:
            before = int(info(port, "rdb_saves", "persistence"))
            t0 = time.monotonic()
            reply = request(port, "BGSAVE")
            if not reply.startswith("+"):
                raise RuntimeError(reply)
            while int(info(port, "rdb_bgsave_in_progress", "persistence")) or int(info(port, "rdb_saves", "persistence")) == before:
                started.set()
                if sample:
                    state["peak"] = max(state["peak"], pss(pid))
                time.sleep(0.02)
            started.set()
            state["saves"] += 1
            state["took"].append(time.monotonic() - t0)

    th = threading.Thread(target=saver)
    th.start()
    started.wait(60)
    try:
        result = bench(port, keys, secs, out)
    finally:
        state["stop"] = True
        th.join()
    mean = sum(state["took"]) / max(1, len(state["took"]))
    return result, state["saves"], mean, state["peak"]


def run(server, keys, secs, cpus, repeats):
    d = tempfile.mkdtemp(prefix="bgsave-")
    p, port = start_server(server, extra=["--dir", d], cpus=cpus)
    try:
        subprocess.run(["taskset", "-c", "1", str(datatypes.BENCH), "-p", str(port), "-t", "1", "-c", "50", "--hide-histogram",
                        "--key-minimum", "1", "--key-maximum", str(keys), "-d", "100", "--ratio", "1:0",
                        "--key-pattern", "P:P", "-n", "allkeys", "--pipeline", "50"],
                       check=True, capture_output=True, timeout=1200)
        used = int(info(port, "used_memory", "memory"))
        out = os.path.join(d, "bench.json")
        quiet, saving, saves, took = [], [], 0, []
        for _ in range(repeats):
            quiet.append(bench(port, keys, secs, out))
            r, n, mean, _ = under_save(port, p.pid, keys, secs, out, sample=False)
            saving.append(r)
            saves += n
            took += [mean] * n
        base = pss(p.pid)
        r, n, mean, peak = under_save(port, p.pid, keys, secs, out, sample=True)
        return quiet, saving, saves, statistics.mean(took) if took else 0.0, (r, n, mean), peak - base, used
    finally:
        stop(p)


def build_file(keys, d):
    """`d`/dump.rdb with `keys` keys of 100 B, written by redis-server-unstable."""
    p, port = start_server("redis-unstable", extra=["--dir", d, "--enable-debug-command", "local"], cpus="0,1")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=600) as s:
            f = s.makefile("rb")
            for cmd in (["DEBUG", "POPULATE", str(keys), "key", "100"], ["SAVE"]):
                s.sendall(datatypes.resp(*cmd))
                line = f.readline()
                if not line.startswith(b"+"):
                    raise RuntimeError(line)
    finally:
        stop(p)
    return os.path.join(d, "dump.rdb")


def cpu_secs(pid):
    """User + system CPU seconds of `pid`, all its threads."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def time_load(server, d, cpus):
    """Seconds from the start of `server` on `d`/dump.rdb to its first PONG,
    the CPU seconds it used by then, and its DBSIZE."""
    port = free_port()
    argv = ["taskset", "-c", cpus] + SERVERS[server] + ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", d]
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.monotonic() - t0 < 600:
            if p.poll() is not None:
                raise RuntimeError(f"{server} exited while loading")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        took = time.monotonic() - t0
                        cpu = cpu_secs(p.pid)
                        return took, cpu, request(port, "DBSIZE")
            except OSError:
                pass
            time.sleep(0.005)
        raise RuntimeError(f"{server} did not load in 600 s")
    finally:
        stop(p)


def load_main(a):
    d = tempfile.mkdtemp(prefix="rdbload-")
    try:
        path = build_file(a.keys, d)
        servers = [s for s in a.servers.split(",") if os.path.exists(SERVERS[s][0])]
        took = {s: [] for s in servers}
        cpu = {s: [] for s in servers}
        for _ in range(a.repeats):
            for s in servers:
                t, c, n = time_load(s, d, a.load_cpus)
                if int(n.lstrip(":")) != a.keys:
                    raise RuntimeError(f"{s} loaded {n} keys of {a.keys}")
                took[s].append(t)
                cpu[s].append(c)
        print(f"file: {os.path.getsize(path) / 2**20:.0f} MiB, {a.keys:,} keys")
        print("| server | start to PONG, runs s | median s | of redis-unstable | CPU s, runs | median CPU s |")
        print("|---|---|---:|---:|---|---:|")
        ref = statistics.median(took["redis-unstable"]) if "redis-unstable" in took else None
        for s in servers:
            m = statistics.median(took[s])
            runs = " / ".join(f"{t:.2f}" for t in took[s])
            cpus = " / ".join(f"{t:.2f}" for t in cpu[s])
            ratio = f"{m / ref:.2f}" if ref else ""
            print(f"| {s} | {runs} | {m:.2f} | {ratio} | {cpus} | {statistics.median(cpu[s]):.2f} |", flush=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--servers", default="tern,redis-unstable")
    ap.add_argument("--server-cpus", default="0", help="the CPUs the server (and its saver thread or fork) may use")
    ap.add_argument("--tern-bin", help="the tern-server to run (default: this tree's release build)")
    ap.add_argument("--bench-bin", help="the tern-bench to run (default: this tree's release build)")
    ap.add_argument("--tern-alt", help="another tern-server, run as a third server 'tern-alt' (a build to compare with)")
    ap.add_argument("--alt-args", default="", help="extra arguments for tern-alt (e.g. '--snapshot-nice 0' with --tern-alt set to this tree's build)")
    ap.add_argument("--load", action="store_true", help="time loading an RDB file at start instead")
    ap.add_argument("--repeats", type=int, default=3, help="runs per server (quiet and saving alternate); medians reported")
    ap.add_argument("--load-cpus", default="0,1", help="--load: the CPUs the servers may use")
    a = ap.parse_args()
    if a.tern_bin:
        SERVERS["tern"] = [a.tern_bin] + SERVERS["tern"][1:]
    if a.bench_bin:
        datatypes.BENCH = a.bench_bin
    if a.tern_alt:
        SERVERS["tern-alt"] = [a.tern_alt] + SERVERS["tern"][1:] + a.alt_args.split()
        a.servers += ",tern-alt"
    if a.load:
        return load_main(a)
    print("| server | run | ops/s | p99 ms | p99.9 ms | p99.9 / quiet | saves | mean save s | peak extra memory | of used_memory |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    med = lambda runs, i: statistics.median(r[i] for r in runs)
    for s in a.servers.split(","):
        if not os.path.exists(SERVERS[s][0]):
            continue
        quiet, saving, saves, mean, sampled, extra, used = run(s, a.keys, a.secs, a.server_cpus, a.repeats)
        q9 = med(quiet, 2)
        each = lambda runs, i: " / ".join(f"{r[i]:.3f}" for r in runs)
        print(f"| {s} | quiet | {med(quiet, 0):,.0f} | {med(quiet, 1):.3f} | {med(quiet, 2):.3f} ({each(quiet, 2)}) | | | | | |")
        print(f"| {s} | saving | {med(saving, 0):,.0f} | {med(saving, 1):.3f} | {med(saving, 2):.3f} ({each(saving, 2)}) | "
              f"{med(saving, 2) / q9:.2f} | {saves} | {mean:.2f} | | |")
        print(f"| {s} | saving, memory sampled | {sampled[0][0]:,.0f} | {sampled[0][1]:.3f} | {sampled[0][2]:.3f} | "
              f"{sampled[0][2] / q9:.2f} | {sampled[1]} | {sampled[2]:.2f} | {extra / 2**20:.1f} MiB | {100 * extra / used:.1f}% |", flush=True)


if __name__ == "__main__":
    main()
