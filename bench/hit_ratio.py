#!/usr/bin/env python3
"""Issue 15's evidence: hit ratios under a memory limit, and throughput at it.

Hit ratio: `tern-bench --miss-set` reads keys (a GET that misses is followed
by the SET of its key, as a cache filled on demand), 1M distinct keys of
100 B through a limit that holds about a tenth of them, on three traces:

  zipf0.9   Zipf, alpha 0.9, over the 1M keys
  zipf1.1   Zipf, alpha 1.1
  scan      the zipf0.9 reads, and as many reads of one-time keys (a
            sequential scan over 1M fresh keys), interleaved

against Tern under each policy, redis-server under allkeys-lru and
allkeys-lfu, and memcached, all at the same `maxmemory` (memcached's -m),
one after another in one run. The miss ratio is over all GETs (the scan's
reads miss on every server alike).

Throughput at the limit (`--throughput`): SET:GET 1:10 with 1 KiB values
over more keys than fit, so every SET evicts; Tern vs redis-server.

RSS bound (`--rss`): 10x `maxmemory` of 1 KiB values written through Tern
under each policy; RSS must stay under 1.3 x maxmemory + the empty RSS.

Servers are started here on loopback ports and stopped by PID. Nothing is
installed. Example (what the RESULTS figures come from):

  cargo build --release -p tern-server -p tern-bench
  python3 bench/hit_ratio.py                       # all traces, all servers
  python3 bench/hit_ratio.py --traces zipf0.9 --servers tern --policies allkeys-s3fifo,allkeys-lru
  python3 bench/hit_ratio.py --throughput --maxmemory 256mb --pin
  python3 bench/hit_ratio.py --rss --maxmemory 100mb
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REDIS = os.path.join(os.path.dirname(ROOT), "shared", "reference", "bin", "redis-server-unstable")
TERN_POLICIES = [
    "allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-s3fifo", "allkeys-sieve",
]
TRACES = ["zipf0.9", "zipf1.1", "scan"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on {port}")


def mem_bytes(s):
    units = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30}
    s = s.lower()
    for u, m in units.items():
        if s.endswith(u):
            return int(s[: -len(u)]) * m
    return int(s)


def start(kind, policy, maxmemory, args):
    """Starts one server, in a fresh empty directory and with snapshots
    off, so that none starts with the keys another one saved (Tern's
    default save schedule writes ./dump.rdb after 60 s of writes, and
    every server loads ./dump.rdb at start); returns (process, port,
    protocol)."""
    port = free_port()
    if kind == "tern":
        cmd = [args.tern, "--port", str(port), "--threads", str(args.server_threads), "--maxmemory", str(maxmemory),
               "--maxmemory-policy", policy, "--save", "", "--appendonly", "no"]
        proto = "redis"
    elif kind == "redis":
        cmd = [args.redis, "--bind", "127.0.0.1", "--port", str(port),
               "--save", "", "--appendonly", "no", "--maxmemory", str(maxmemory), "--maxmemory-policy", policy]
        proto = "redis"
    else:
        cmd = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", str(args.server_threads),
               "-m", str(max(1, maxmemory >> 20))]
        if os.geteuid() == 0:
            cmd += ["-u", "root"]
        proto = "memcache_text"
    if args.pin:
        cmd = ["taskset", "-c", "0"] + cmd
    workdir = tempfile.mkdtemp(prefix="hit_ratio.")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
    proc.workdir = workdir
    wait_port(port, proc, kind)
    return proc, port, proto


def stop(proc):
    proc.kill()
    proc.wait()
    shutil.rmtree(proc.workdir, ignore_errors=True)


def bench(port, proto, extra, args):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [args.bench, "-p", str(port), "-P", proto, "--hide-histogram", "--json-out-file", out] + extra
    if args.pin:
        cmd = ["taskset", "-c", "1"] + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"tern-bench failed: {r.stderr}{r.stdout}")
    with open(out) as f:
        v = json.load(f)
    os.unlink(out)
    return v["ALL STATS"]


def trace_args(trace, args):
    # Each connection draws its own keys (else all would read the same
    # sequence and hit what another just set); the scan's keys are cut
    # into one share per connection, so each is read once.
    common = ["-t", "1", "-c", str(args.clients), "--pipeline", str(args.pipeline), "--miss-set", "--distinct-client-seed",
              "-d", "100", "--key-minimum", "1", "--key-maximum", str(args.keys),
              "-n", str(args.requests // args.clients)]
    alpha = "1.1" if trace == "zipf1.1" else "0.9"
    cmds = ["--command", "GET __key__", "--command-key-pattern", "Z", "--zipf-alpha", alpha]
    if trace == "scan":
        cmds += ["--command", "GET scan:__key__", "--command-key-pattern", "P"]
    return common + cmds


def hit_ratio(args):
    maxmemory = mem_bytes(args.maxmemory)
    servers = [s.strip() for s in args.servers.split(",")]
    configs = []
    if "tern" in servers:
        configs += [("tern", p) for p in args.policies.split(",")]
    if "redis" in servers:
        configs += [("redis", "allkeys-lru"), ("redis", "allkeys-lfu")]
    if "memcached" in servers and shutil.which("memcached"):
        configs += [("memcached", "-")]
    print(f"| trace | server | policy | GETs | miss ratio | evicted |")
    print(f"|---|---|---|---:|---:|---:|")
    for trace in args.traces.split(","):
        for kind, policy in configs:
            proc, port, proto = start(kind, policy, maxmemory, args)
            try:
                st = bench(port, proto, trace_args(trace, args), args)
                t = st["Totals"]
                gets = t["Hits"] + t["Misses"]
                evicted = info_field(port, "evicted_keys") if kind != "memcached" else mc_stat(port, "evictions")
                print(f"| {trace} | {kind} | {policy} | {gets} | {t['Misses'] / max(gets, 1):.4f} | {evicted} |", flush=True)
            finally:
                stop(proc)


def info_field(port, field):
    return info_field_section(port, "stats", field)


def info_field_section(port, section, field):
    """One field of an INFO section, read over a raw connection."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"*2\r\n$4\r\nINFO\r\n$%d\r\n%s\r\n" % (len(section), section.encode()))
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536)
        head, _, body = data.partition(b"\r\n")
        want = int(head[1:]) + 2
        while len(body) < want:
            body += s.recv(65536)
    for line in body.decode(errors="replace").split("\r\n"):
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    return -1


def mc_stat(port, name):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            data += s.recv(65536)
    for line in data.decode().split("\r\n"):
        if line.startswith(f"STAT {name} "):
            return int(line.split()[2])
    return -1


def throughput(args):
    maxmemory = mem_bytes(args.maxmemory)
    print("| server | policy | ops/s | evicted |")
    print("|---|---|---:|---:|")
    for kind, policy in [("tern", "allkeys-lru"), ("tern", "allkeys-s3fifo"), ("redis", "allkeys-lru")]:
        proc, port, proto = start(kind, policy, maxmemory, args)
        try:
            # Fill past the limit first, then measure with every SET evicting.
            bench(port, proto, ["-t", "1", "-c", "4", "--pipeline", "16", "-d", "1024", "--ratio", "1:0",
                                "--key-pattern", "P:P", "--key-maximum", str(4 * maxmemory // 1024), "-n", "allkeys"], args)
            st = bench(port, proto, ["-t", "1", "-c", str(args.clients), "--pipeline", str(args.pipeline), "-d", "1024",
                                     "--ratio", "1:10", "--key-maximum", str(4 * maxmemory // 1024),
                                     "--test-time", str(args.test_time)], args)
            print(f"| {kind} | {policy} | {st['Totals']['Ops/sec']:.0f} | {info_field(port, 'evicted_keys')} |", flush=True)
        finally:
            stop(proc)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def rss_bound(args):
    """Writes 10x maxmemory of 1 KiB values through Tern under each policy;
    the issue's bound is RSS <= 1.3 x maxmemory + the empty process's RSS."""
    maxmemory = mem_bytes(args.maxmemory)
    keys = 10 * maxmemory // 1024
    print("| policy | maxmemory | empty RSS | RSS after 10x | bound | used_memory | evicted |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for policy in args.policies.split(","):
        proc, port, proto = start("tern", policy, maxmemory, args)
        try:
            empty = rss_kb(proc.pid) * 1024
            bench(port, proto, ["-t", "1", "-c", "4", "--pipeline", "16", "-d", "1024", "--ratio", "1:0",
                                "--key-pattern", "P:P", "--key-maximum", str(keys), "-n", "allkeys"], args)
            after = rss_kb(proc.pid) * 1024
            bound = int(1.3 * maxmemory) + empty
            used = info_field_section(port, "memory", "used_memory")
            print(f"| {policy} | {maxmemory} | {empty} | {after} | {bound} | {used} | {info_field(port, 'evicted_keys')} |", flush=True)
        finally:
            stop(proc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern", default=os.path.join(ROOT, "target", "release", "tern-server"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "target", "release", "tern-bench"))
    ap.add_argument("--redis", default=REDIS if os.path.exists(REDIS) else "redis-server",
                    help="the redis-server binary (default: the current build in shared/reference/bin, else Debian's)")
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--maxmemory", default="16mb", help="about a tenth of 1M keys of 100 B at Tern's cost per key")
    ap.add_argument("--requests", type=int, default=4_000_000)
    # One request in flight per connection: a miss's SET lands before the
    # key is read again, so concurrent misses of one hot key are rare.
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--server-threads", type=int, default=1)
    ap.add_argument("--traces", default=",".join(TRACES))
    ap.add_argument("--servers", default="tern,redis,memcached")
    ap.add_argument("--policies", default=",".join(TERN_POLICIES))
    ap.add_argument("--throughput", action="store_true")
    ap.add_argument("--rss", action="store_true", help="RSS after writing 10x maxmemory (Tern, each policy)")
    ap.add_argument("--test-time", type=int, default=10)
    ap.add_argument("--pin", action="store_true", help="server on CPU 0, load generator on CPU 1")
    args = ap.parse_args()
    if args.rss:
        rss_bound(args)
    elif args.throughput:
        throughput(args)
    else:
        hit_ratio(args)


if __name__ == "__main__":
    main()
