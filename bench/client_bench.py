#!/usr/bin/env python3
"""tern-client against the Python clients it replaces, same servers, one run.

    python3 bench/client_bench.py                    # everything, 4 runs x 5,000 ops x 10 threads
    python3 bench/client_bench.py --ops 2000 --runs 1 --only memcache
    python3 bench/client_bench.py --results bench/RESULTS.md   # also append the tables there

The workload is the one of meta-memcache-py's multi-get pull request
(shared/reference/seeds/002_*): 10 Python threads sharing one client, a
200-key space of which 160 keys are populated before each phase, values of
80-250 B (95%) or 100 KB (5%), the garbage collector off. Each operation is
timed on its own phase: SET (a random populated key), GET (any key: ~80%
hits), MULTI_GET(5) (five random keys) and DELETE (any key; the keys are
populated again before the next phase).

Compared, in one run:
- memcached and Tern's memcache port: tern_client.CacheClient,
  meta-memcache (whose socket and meta commands are meta-memcache-socket's
  Rust; given a 256 KiB read buffer, as its default 4 KiB one takes seconds
  per 100 KB value) and pymemcache (a PooledClient, noreply off so that
  its writes wait for the answer like the others');
- redis-server and Tern's RESP port: tern_client.Redis and redis-py with
  hiredis;
- a pool of four tern-server processes: MULTI_GET of 100 keys through
  tern_client.CacheClient(servers=...) and meta-memcache's HashRing pool.

The peers are installed from PyPI into bench/.venv-client (created on first
use) together with ./python; tern-server is the release build (built when
missing); memcached and redis-server are the system's. Servers listen on
127.0.0.1 on free ports and are stopped by PID. The servers and the client
share the machine's cores: on a small machine the numbers are noisy.
TERN_SERVER=<binary> uses another tern-server (a debug build only to try
the script out).
"""

import argparse
import datetime
import gc
import os
import platform
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "bench", ".venv-client")
TERN_SERVER = os.environ.get("TERN_SERVER") or os.path.join(ROOT, "target", "release", "tern-server")
PEERS = [
    "meta-memcache==4.3.0",
    "meta-memcache-socket==0.3.1",
    "pymemcache==4.0.0",
    "redis[hiredis]==6.4.0",
]
STARTED = []


# ---- environment -----------------------------------------------------------


def ensure_venv(args):
    """Re-runs this script inside bench/.venv-client, creating it first."""
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", *PEERS])
    if not args.no_install:
        subprocess.check_call([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", os.path.join(ROOT, "python")])
    os.execv(py, [py, os.path.abspath(__file__), *sys.argv[1:], "--no-install"])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.01)


def spawn(argv, port, what):
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    STARTED.append(proc)
    wait_port(port, proc, what)
    return proc


def start_tern(threads):
    port, mc = free_port(), free_port()
    argv = [TERN_SERVER, "--port", str(port), "--memcache-port", str(mc), "--threads", str(threads), "--bind", "127.0.0.1", "--save", ""]
    proc = spawn(argv, port, "tern-server")
    wait_port(mc, proc, "tern-server's memcache port")
    return port, mc


def start_memcached():
    binary = shutil.which("memcached") or "/usr/bin/memcached"
    if not os.path.exists(binary):
        return None
    port = free_port()
    argv = [binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "1024", "-I", "2m"]
    if os.geteuid() == 0:
        argv += ["-u", "root"]
    spawn(argv, port, "memcached")
    return port


def start_redis():
    binary = shutil.which("redis-server")
    if not binary:
        return None
    port = free_port()
    spawn([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], port, "redis-server")
    return port


def stop_all():
    for p in STARTED:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in STARTED:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


# ---- clients ---------------------------------------------------------------
# Each adapter: set(k, v), get(k), multi_get(keys), delete(k).


class TernCache:
    name = "tern-client CacheClient"

    def __init__(self, servers):
        import tern_client

        self.c = tern_client.CacheClient(servers=servers, max_connections=16)
        self.set, self.get, self.delete = self.c.set, self.c.get, self.c.delete
        self.multi_get = self.c.multi_get


class MetaMemcache:
    name = "meta-memcache (+socket)"

    def __init__(self, servers):
        from meta_memcache import CacheClient, ServerAddress, connection_pool_factory_builder

        self.c = CacheClient.cache_client_from_servers(
            servers=[ServerAddress(h, p) for h, p in servers],
            # Its default 4 KiB read buffer makes a 100 KB get take seconds
            # (meta-memcache-socket 0.3.1, measured here: 2.9 s against
            # memcached); a buffer that holds the largest value is fair.
            connection_pool_factory_fn=connection_pool_factory_builder(max_pool_size=16, read_buffer_size=256 * 1024),
        )

    def set(self, k, v):
        return self.c.set(k, v, ttl=0)

    def get(self, k):
        return self.c.get(k)

    def multi_get(self, keys):
        return self.c.multi_get(keys)

    def delete(self, k):
        return self.c.delete(k)


class PyMemcache:
    name = "pymemcache"

    def __init__(self, servers):
        from pymemcache.client.base import PooledClient

        (h, p), = servers
        # noreply off: every client here waits for the server to answer.
        self.c = PooledClient((h, p), max_pool_size=16, no_delay=True, default_noreply=False)
        self.set, self.get, self.delete = self.c.set, self.c.get, self.c.delete

    def multi_get(self, keys):
        return self.c.get_many(keys)


class TernRedis:
    name = "tern-client Redis"

    def __init__(self, servers):
        import tern_client

        (h, p), = servers
        self.c = tern_client.Redis(host=h, port=p, max_connections=16)
        self.set, self.get, self.delete = self.c.set, self.c.get, self.c.delete
        self.multi_get = self.c.mget


class RedisPy:
    name = "redis-py (+hiredis)"

    def __init__(self, servers):
        import redis

        (h, p), = servers
        self.c = redis.Redis(host=h, port=p, max_connections=16)
        self.set, self.get, self.delete = self.c.set, self.c.get, self.c.delete
        self.multi_get = self.c.mget


# ---- workload --------------------------------------------------------------


def make_values(rng, n):
    big = 100 * 1024
    return [rng.randbytes(big) if rng.random() < 0.05 else rng.randbytes(rng.randint(80, 250)) for _ in range(n)]


def populate(client, keys, values):
    for k, v in zip(keys[:160], values):
        client.set(k, v)


def phase(client, op, keys, values, threads, ops, mget_size, seed):
    """Runs `ops` operations on each of `threads` threads; returns seconds."""
    barrier = threading.Barrier(threads + 1)
    errors = []

    def work(t):
        rng = random.Random(seed * 1000 + t)
        populated = keys[:160]
        fn = getattr(client, "multi_get" if op == "MULTI_GET" else op.lower())
        if op == "SET":
            batch = [(rng.choice(populated), values[rng.randrange(len(values))]) for _ in range(ops)]
        elif op == "MULTI_GET":
            batch = [rng.sample(keys, mget_size) for _ in range(ops)]
        else:
            batch = [rng.choice(keys) for _ in range(ops)]
        barrier.wait()
        try:
            if op == "SET":
                for k, v in batch:
                    fn(k, v)
            else:
                for a in batch:
                    fn(a)
        except Exception as e:
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in ts:
        t.join()
    took = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"{client.name} {op}: {errors[0]}")
    return took


def measure(client, ops_list, args, keys, values):
    """{op: (ops/s, us per request per thread)} over args.runs runs."""
    out = {}
    for op in ops_list:
        total = 0.0
        for run in range(args.runs):
            populate(client, keys, values)
            total += phase(client, op, keys, values, args.threads, args.ops, args.mget_size, run)
        n = args.runs * args.threads * args.ops
        out[op] = (n / total, total * args.threads / n * 1e6)
    return out


def table(title, results, baseline_names):
    """results: [(client name, {op: (rps, us)})]; speed-up against each baseline."""
    ops = list(results[0][1])
    lines = [f"**{title}**", "", "| client | " + " | ".join(f"{o} ops/s (µs/req)" for o in ops) + " |"]
    lines.append("|---|" + "---:|" * len(ops))
    for name, r in results:
        lines.append(f"| {name} | " + " | ".join(f"{r[o][0]:,.0f} ({r[o][1]:.1f})" for o in ops) + " |")
    ours = results[0]
    for name, r in results[1:]:
        if name in baseline_names:
            lines.append(f"| {ours[0]} / {name} | " + " | ".join(f"{ours[1][o][0] / r[o][0]:.2f}×" for o in ops) + " |")
    return "\n".join(lines) + "\n"


def compare(title, port, classes, args, keys, values):
    """One table: every client of `classes` on the server at `port`, the
    first against each of the others."""
    if port is None:
        return f"{title}: server not installed, skipped\n"
    res = []
    for cls in classes:
        res.append((cls.name, measure(cls([("127.0.0.1", port)]), ["SET", "GET", "MULTI_GET", "DELETE"], args, keys, values)))
        print(f"  {title}: {cls.name} done", file=sys.stderr)
    return table(title, res, {c.name for c in classes[1:]})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", type=int, default=5000, help="operations per thread per run (default 5000)")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--threads", type=int, default=10)
    ap.add_argument("--mget-size", type=int, default=5)
    ap.add_argument("--pool-keys", type=int, default=100, help="keys per multi-get over the 4-server pool")
    ap.add_argument("--tern-threads", type=int, default=2, help="tern-server --threads")
    ap.add_argument("--only", choices=["memcache", "redis", "pool"], action="append")
    ap.add_argument("--results", help="append the tables to this markdown file")
    ap.add_argument("--note", default="", help="a sentence to print under the heading (e.g. how noisy the machine was)")
    ap.add_argument("--no-install", action="store_true", help="do not reinstall ./python into the venv")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    ensure_venv(args)
    if not os.path.exists(TERN_SERVER):
        subprocess.check_call(["cargo", "build", "--release", "-p", "tern-server"], cwd=ROOT)
    only = set(args.only or ["memcache", "redis", "pool"])
    gc.disable()
    rng = random.Random(args.seed)
    keys = [f"bench:key:{i}" for i in range(200)]
    values = make_values(rng, 160)
    out = []
    try:
        tern_port, tern_mc = start_tern(args.tern_threads)
        if "memcache" in only:
            caches = (TernCache, MetaMemcache, PyMemcache)
            for label, port in (("memcached", start_memcached()), ("tern memcache port", tern_mc)):
                out.append(compare(f"memcache protocol, {label}", port, caches, args, keys, values))
        if "redis" in only:
            for label, port in (("redis-server", start_redis()), ("tern", tern_port)):
                out.append(compare(f"RESP, {label} (MULTI_GET is MGET)", port, (TernRedis, RedisPy), args, keys, values))
        if "pool" in only:
            servers = [("127.0.0.1", start_tern(1)[1]) for _ in range(4)]
            pool_keys = [f"pool:key:{i}" for i in range(1000)]
            pool_values = make_values(random.Random(args.seed + 1), len(pool_keys))
            res = []
            for cls in (TernCache, MetaMemcache):
                c = cls(servers)
                for k, v in zip(pool_keys, pool_values):
                    c.set(k, v if len(v) < 1000 else v[:200])
                took = 0.0
                for run in range(args.runs):
                    took += phase(c, "MULTI_GET", pool_keys, pool_values, args.threads, max(1, args.ops // 10), args.pool_keys, run)
                n = args.runs * args.threads * max(1, args.ops // 10)
                res.append((cls.name, {f"MULTI_GET({args.pool_keys})": (n / took, took * args.threads / n * 1e6)}))
                print(f"  pool: {cls.name} done", file=sys.stderr)
            out.append(table(f"4 tern-server processes (memcache ports), pooled by meta-memcache's ring, {args.pool_keys}-key multi-get of 1,000 keys of ~80-250 B", res, {MetaMemcache.name}))
    finally:
        stop_all()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = (
        f"## tern-client vs Python clients ({datetime.date.today()})\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; commit {commit}; "
        f"{args.runs} runs × {args.ops} ops × {args.threads} threads per cell; servers and clients share the CPUs.\n\n"
        f"`python3 bench/client_bench.py {shlex.join(a for a in sys.argv[1:] if a != '--no-install')}`\n"
    )
    if args.note:
        head += f"\n{args.note}\n"
    text = head + "\n" + "\n".join(out)
    print(text)
    if args.results:
        with open(args.results, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
