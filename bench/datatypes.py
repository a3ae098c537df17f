#!/usr/bin/env python3
"""Data-type workloads, Tern beside redis-server-unstable and Debian's
redis-server, alternating, in one run. Each server runs pinned to CPU 0 (Tern
with one worker), tern-bench to CPU 1, 50 connections; a fresh server per
run, loaded before it is measured. Prints ops/s and server CPU µs per
operation (utime+stime from /proc over the run, divided by the operations
tern-bench counted), medians, and Tern against the faster Redis.

Families (`--family`, several allowed; the issues whose evidence they are):

  lists   LPUSH and RPOP at pipelines 1 and 16, LRANGE 0 99 of 100-element
          lists, over 1,000 keys of 16-byte elements (issue 16)
  bits    SETBIT/GETBIT at pipeline 16 over 1M keys, BITCOUNT of a 1 MB
          bitmap (issue 21)
  hll     PFADD of 10 elements, PFCOUNT of 3 keys, over 100K HLLs (issue 21)
  sets    SADD, SISMEMBER, SMEMBERS of 100-member sets (1,000 of them),
          SINTER of two 10K-member sets (issue 17)
  wide    SISMEMBER and SADD of 100-member sets, HGET and HSET of 20-field
          hashes, ZSCORE and ZINCRBY of 50-member sorted sets, each over
          100K keys, beyond the caches (issue 17)
  zsets   ZADD, ZINCRBY, ZRANGE 0 99 WITHSCORES, ZRANK, ZMSCORE of 100 over
          one 1M-member sorted set, ZRANGEBYSCORE with LIMIT (issue 17)
  geo     GEOSEARCH BYRADIUS around a random member of a 1M-member geo index
          (about 30 members within 5 km), with COUNT 10 over 50 km, and
          BYBOX (issue 21)

    cargo build --release -p tern-server -p tern-bench
    python3 bench/datatypes.py --family lists [--repeats 3] [--secs 5]
    python3 bench/datatypes.py --family bits --workloads bitcount-1mb --tern-variant "--bitcount-simd no"
    python3 bench/datatypes.py --family sets --family zsets --pipeline 16

`--pipeline N` runs every chosen workload at pipeline N instead of its own
(rows named `<workload>@pN`): where pipeline 1 leaves the kernel's TCP path
most of each server's CPU, pipeline 16 shows what the command itself costs.
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

SERVERS = {
    "tern": [str(ROOT / "target/release/tern-server"), "--threads", "1"],
    "redis-unstable": [str(ROOT.parent / "shared/reference/bin/redis-server-unstable")],
    "redis-7.0": ["/usr/bin/redis-server"],
}


def W(cmd, pipeline=1, keys=1000, data=16, pre=(), load=None, extra=()):
    """A workload: `cmd` (a tern-bench template) measured at `pipeline` over
    keys 1..`keys`; `pre` are tern-bench templates run once per key first
    (with the same key range and data size); `load(sock)` writes whatever
    else the workload reads; `extra` are more tern-bench arguments."""
    return dict(cmd=cmd, pipeline=pipeline, keys=keys, data=data, pre=pre, load=load, extra=list(extra))


def members(prefix, n):
    return " ".join(f"{prefix}{i}" for i in range(n))


def fields(n):
    return " ".join(f"f{i} v{i}" for i in range(n))


def scored(n):
    return " ".join(f"{i} m{i}" for i in range(n))


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def send_all(sock, commands):
    """Writes `commands` pipelined and reads as many replies (none an error)."""
    buf = b"".join(resp(*c) for c in commands)
    sock.sendall(buf)
    f = sock.makefile("rb")
    for _ in commands:
        line = f.readline()
        if line.startswith(b"-"):
            raise RuntimeError(line.decode())
        if line[:1] in (b"$",) and int(line[1:]) >= 0:
            f.read(int(line[1:]) + 2)
        elif line[:1] == b"*":
            for _ in range(int(line[1:])):
                sub = f.readline()
                if sub[:1] == b"$" and int(sub[1:]) >= 0:
                    f.read(int(sub[1:]) + 2)


def load_bitmap(sock):
    # 1 MB of bytes with every bit pattern (a counting sequence), so that
    # BITCOUNT's popcount has real work.
    send_all(sock, [("SET", "bm", bytes(i * 131 % 256 for i in range(1 << 20)))])


def load_two_sets(sock):
    # Two 10K-member sets sharing half their members.
    for key, lo in (("s1", 0), ("s2", 5000)):
        for b in range(lo, lo + 10000, 1000):
            send_all(sock, [("SADD", key, *[f"m{i}" for i in range(b, b + 1000)])])


def load_big_zset(sock):
    # One sorted set of 1M members: member m<i> with score i (and ZADD's
    # and ZINCRBY's random members drawn from the same names).
    for b in range(1, 1_000_001, 1000):
        args = []
        for i in range(b, b + 1000):
            args += [i, f"m{i}"]
        send_all(sock, [("ZADD", "zbig", *args)])


def load_geo(sock):
    # One geo index of 1M members, m<i> at seeded random positions over
    # 40 x 25 degrees (about 1,000 members per square degree).
    import random
    rng = random.Random(21)
    for b in range(1, 1_000_001, 1000):
        args = []
        for i in range(b, b + 1000):
            args += ["%.6f" % rng.uniform(-10, 30), "%.6f" % rng.uniform(35, 60), f"m{i}"]
        send_all(sock, [("GEOADD", "geo", *args)])


HUNDRED = "RPUSH __key__" + " __data__" * 100
NUMERIC = ["--key-prefix", ""]
FAMILIES = {
    "lists": {
        "lpush-p1": W("LPUSH __key__ __data__"),
        "lpush-p16": W("LPUSH __key__ __data__", 16),
        # Enough that RPOP never runs dry: 800 requests of 100 elements per
        # connection, 4M elements over the 1,000 keys.
        "rpop-p1": W("RPOP __key__", pre=[(HUNDRED, 800)]),
        "rpop-p16": W("RPOP __key__", 16, pre=[(HUNDRED, 800)]),
        "lrange-100": W("LRANGE __key__ 0 99", pre=[(HUNDRED, 800)]),
    },
    "bits": {
        "setbit-p16": W("SETBIT __key__ 1000 1", 16, keys=1_000_000),
        "getbit-p16": W("GETBIT __key__ 1000", 16, keys=1_000_000, pre=[("SETBIT __key__ 1000 1", None)]),
        "bitcount-1mb": W("BITCOUNT bm", load=load_bitmap),
    },
    "hll": {
        # Ten different elements per request: a letter each before 8 random bytes.
        "pfadd-10": W("PFADD __key__" + "".join(f" {c}__data__" for c in "abcdefghij"), keys=100_000, data=8,
                      extra=["-R"]),
        "pfcount-3": W("PFCOUNT __key__ __key__ __key__", keys=100_000, data=8,
                       pre=[("PFADD __key__" + "".join(f" {c}__data__" for c in "abcdefghij"), None)], extra=["-R"]),
    },
    "sets": {
        # Members m0..m99 in each set; SADD adds one of 62² random names, so
        # the sets grow to about 3,500 members each (hashtable encoded).
        "sadd": W("SADD __key__ __data__", data=2, pre=[("SADD __key__ " + members("m", 100), None)], extra=["-R"]),
        "sismember": W("SISMEMBER __key__ m50", pre=[("SADD __key__ " + members("m", 100), None)]),
        # SADD of a member present: the sets stay at 100 members.
        "sadd-present": W("SADD __key__ m50", pre=[("SADD __key__ " + members("m", 100), None)]),
        "smembers-100": W("SMEMBERS __key__", pre=[("SADD __key__ " + members("m", 100), None)]),
        "sinter-10k": W("SINTER s1 s2", load=load_two_sets),
    },
    # Small aggregates over a keyspace that misses the caches: 100K keys,
    # each command on a random one (distinct seeds per connection).
    "wide": {
        "sismember-wide": W("SISMEMBER __key__ m50", keys=100_000, pre=[("SADD __key__ " + members("m", 100), None)],
                            extra=["--distinct-client-seed"]),
        "sadd-wide": W("SADD __key__ m50", keys=100_000, pre=[("SADD __key__ " + members("m", 100), None)],
                       extra=["--distinct-client-seed"]),
        "hget-wide": W("HGET __key__ f10", keys=100_000, pre=[("HSET __key__ " + fields(20), None)],
                       extra=["--distinct-client-seed"]),
        "hset-wide": W("HSET __key__ f10 x", keys=100_000, pre=[("HSET __key__ " + fields(20), None)],
                       extra=["--distinct-client-seed"]),
        "zscore-wide": W("ZSCORE __key__ m25", keys=100_000, pre=[("ZADD __key__ " + scored(50), None)],
                         extra=["--distinct-client-seed"]),
        "zincrby-wide": W("ZINCRBY __key__ 1 m25", keys=100_000, pre=[("ZADD __key__ " + scored(50), None)],
                          extra=["--distinct-client-seed"]),
    },
    "zsets": {
        "zadd": W("ZADD zbig __key__ m__key__", keys=1_000_000, load=load_big_zset, extra=NUMERIC),
        "zincrby": W("ZINCRBY zbig 1 m__key__", keys=1_000_000, load=load_big_zset, extra=NUMERIC),
        "zrange-100-withscores": W("ZRANGE zbig 0 99 WITHSCORES", load=load_big_zset),
        "zrank": W("ZRANK zbig m__key__", keys=1_000_000, load=load_big_zset, extra=NUMERIC),
        # 100 members drawn at random, a few absent (m0 and beyond 1M never are).
        "zmscore-100": W("ZMSCORE zbig" + " m__key__" * 100, keys=1_100_000, load=load_big_zset, extra=NUMERIC),
        "zrangebyscore-limit-10": W("ZRANGEBYSCORE zbig __key__ +inf LIMIT 0 10", keys=1_000_000,
                                    load=load_big_zset, extra=NUMERIC),
    },
    "geo": {
        "geosearch-radius-5km": W("GEOSEARCH geo FROMMEMBER m__key__ BYRADIUS 5 km", keys=1_000_000, load=load_geo,
                                  extra=NUMERIC),
        "geosearch-radius-50km-count-10": W("GEOSEARCH geo FROMMEMBER m__key__ BYRADIUS 50 km COUNT 10",
                                            keys=1_000_000, load=load_geo, extra=NUMERIC),
        "geosearch-box-10km-withdist": W("GEOSEARCH geo FROMMEMBER m__key__ BYBOX 10 10 km WITHDIST", keys=1_000_000,
                                         load=load_geo, extra=NUMERIC),
    },
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def bench(port, w, cmd, pipeline, secs=None, requests=None):
    """Measured for `secs`, or `requests` per connection in key order, or
    (neither) once per key by one connection."""
    conns = "1" if secs is None and requests is None else "50"
    args = ["taskset", "-c", "1", str(BENCH), "-p", str(port), "-t", "1", "-c", conns, "--hide-histogram",
            "--key-minimum", "1", "--key-maximum", str(w["keys"]), "-d", str(w["data"]), "--pipeline", str(pipeline),
            "--command", cmd] + w["extra"]
    if secs:
        args += ["--test-time", str(secs)]
    elif requests is None:
        args += ["--command-key-pattern", "P", "-n", "allkeys"]
    else:
        args += ["--command-key-pattern", "P", "-n", str(requests)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=900).stdout
    for line in out.splitlines():
        if line.startswith("Totals"):
            return float(line.split()[1])
    raise RuntimeError("no Totals line:\n" + out)


def start(server, extra=(), cpus="0"):
    """Starts `server` (a name in SERVERS, or the command that runs one)
    pinned to `cpus` (None: not pinned) on a free port; (process, port)
    once it accepts."""
    port = free_port()
    name, cmd = (server, SERVERS[server]) if isinstance(server, str) else (server[0], list(server))
    pin = ["taskset", "-c", cpus] if cpus else []
    argv = pin + cmd + ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    p = subprocess.Popen(argv + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p, port
        except OSError:
            if time.time() > deadline or p.poll() is not None:
                p.kill()
                raise RuntimeError(name + " did not start")
            time.sleep(0.02)


def stop(p):
    p.kill()
    p.wait()


def run(server, w, secs):
    p, port = start(server)
    try:
        if w["load"]:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                w["load"](sock)
        for cmd, requests in w["pre"]:
            bench(port, w, cmd, 16, requests=requests)
        a = cpu(p.pid)
        ops = bench(port, w, w["cmd"], w["pipeline"], secs=secs)
        b = cpu(p.pid)
        return ops, (b - a) * 1e6 / (ops * secs)
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", action="append", choices=list(FAMILIES), help="default: all")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--workloads", help="comma-separated names (default: every workload of the families)")
    ap.add_argument("--tern-variant", action="append", default=[], metavar="ARGS",
                    help='one more Tern server, started with these arguments (e.g. "--bitcount-simd no"), '
                         'alternating with the others; the ratios are still against the Redis servers')
    ap.add_argument("--tern-bin", action="append", default=[], metavar="NAME=PATH",
                    help="one more Tern server, another build (e.g. old=/tmp/tern-old), alternating with the others")
    ap.add_argument("--pipeline", type=int, help="run every workload at this pipeline depth instead of its own")
    a = ap.parse_args()
    for v in a.tern_variant:
        SERVERS["tern " + v] = SERVERS["tern"] + v.split()
    for v in a.tern_bin:
        name, path = v.split("=", 1)
        SERVERS["tern-" + name] = [path] + SERVERS["tern"][1:]
    workloads = {}
    for fam in a.family or FAMILIES:
        workloads.update(FAMILIES[fam])
    if a.workloads:
        workloads = {n: workloads[n] for n in a.workloads.split(",")}
    if a.pipeline:
        workloads = {f"{n}@p{a.pipeline}": dict(w, pipeline=a.pipeline) for n, w in workloads.items()}
    servers = [s for s in a.servers.split(",") if s and Path(SERVERS[s][0]).exists()]
    servers += ["tern " + v for v in a.tern_variant] + ["tern-" + v.split("=", 1)[0] for v in a.tern_bin]
    rows = {}
    for rep in range(a.repeats):
        for n, w in workloads.items():
            # Alternate which server goes first.
            for s in servers[rep % len(servers):] + servers[:rep % len(servers)]:
                r = run(s, w, a.secs)
                rows.setdefault((n, s), []).append(r)
                print(n, s, round(r[0]), round(r[1], 3), flush=True)
    print()
    # The ratios are the first Tern's: `tern` itself, else the first
    # --tern-bin or --tern-variant given.
    tern = next((s for s in servers if s.startswith("tern")), servers[0])
    print("| workload | " + " | ".join(f"{s} ops/s | {s} CPU µs/op" for s in servers)
          + f" | {tern}/faster ops | {tern}/best CPU per op |")
    print("|---|" + "---:|" * (2 * len(servers) + 2))
    for n in workloads:
        med = {s: (statistics.median(x[0] for x in rows[(n, s)]), statistics.median(x[1] for x in rows[(n, s)]))
               for s in servers}
        cells = " | ".join(f"{med[s][0]:,.0f} | {med[s][1]:.2f}" for s in servers)
        # Against the Redis servers; with none run, against the other builds.
        others = [s for s in servers if not s.startswith("tern")] or [s for s in servers if s != tern]
        fastest = max(med[s][0] for s in others)
        cheapest = min(med[s][1] for s in others)
        print(f"| {n} | {cells} | {med[tern][0] / fastest:.2f} | {med[tern][1] / cheapest:.2f} |")


if __name__ == "__main__":
    main()
