#!/usr/bin/env python3
"""Runs the core benchmark set against tern, redis-server and memcached, side by side.

    python3 bench/run.py                      # scaled for a 2-core machine, 3 repeats, all servers
    python3 bench/run.py --full               # the specs' own connection counts and durations
    python3 bench/run.py --specs get-100B,mget-100B-2keys --servers tern,redis --repeats 1
    python3 bench/run.py loadgen              # tern-bench vs redis-benchmark on one core

Every server is pinned to the same CPU (--server-cpu, default 0) and the load generator to
another (--client-cpu, default 1); persistence is off; the dataset is preloaded with the
spec's own preload command and checked (DBSIZE, or memcached's curr_items) before measuring;
servers are stopped by PID. Within a dataset every server is up at once and the runs
alternate between them, repeat after repeat, so the medians see the same machine state.
A workload a server cannot run (its preload or its command gets error replies) is n/a:
tern-bench counts error replies as errors, never as operations.

The markdown table is printed and, with --results (default bench/RESULTS.md), appended there
with the date, machine, commit and exact command.
"""

import argparse
import datetime
import json
import os
import platform
import random
import shlex
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPECS = os.path.join(ROOT, "..", "shared", "bench", "specs")
TERN_SERVER = os.path.join(ROOT, "target", "release", "tern-server")
TERN_BENCH = os.path.join(ROOT, "target", "release", "tern-bench")
CLK_TCK = os.sysconf("SC_CLK_TCK")
# Every server this run started, so that an error stops them too (by PID).
STARTED = []

# The core set: the table of shared/bench/README.md.
CORE = [
    "5Mkeys-string-mget-100B-2keys",
    "5Mkeys-string-mget-100B-5keys",
    "5Mkeys-string-mget-100B-5keys-pipeline-10",
    "5Mkeys-string-mget-100B-10keys",
    "5Mkeys-string-mget-100B-20keys",
    "5Mkeys-string-mget-100B-30keys-pipeline-10",
    "5Mkeys-string-mget-100B-100keys",
    "5Mkeys-string-mget-10B-100keys-pipeline-10",
    "5Mkeys-string-mget-512B-5keys-pipeline-10",
    "5Mkeys-string-mget-1KiB-5keys",
    "5Mkeys-string-mset-100B-100keys",
    "1Mkeys-string-setget2000c-1KiB-pipeline-10",
    "1Mkeys-string-setget2000c-1KiB-pipeline-16",
    "3Mkeys-string-mixed-20-80-with-512B-values-pipeline-10-2000_conns",
    "100Kkeys-load-hash-50-fields-with-10B-values",
    "100Kkeys-hash-hgetex-50-fields-10B-values",
    "100Kkeys-hash-htll-50-fields-10B-values",
    "1Mkeys-string-get-100B-pipeline-10",
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def ensure_tools():
    missing = [p for b, p in [("redis-server", "redis-server"), ("redis-benchmark", "redis-tools"),
                              ("memcached", "memcached")] if not shutil.which(b)]
    if missing:
        log("installing", " ".join(missing))
        subprocess.run(["apt-get", "update", "-q"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-q"] + sorted(set(missing)), check=True)
    for b in ["redis-server", "memcached"]:
        # The Debian packages start a system service; it would share the server CPU.
        subprocess.run(["service", b, "stop"], capture_output=True)


def build():
    log("building tern-server and tern-bench (release)")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "tern-server", "-p", "tern-bench"],
                   cwd=ROOT, check=True)


def free_port():
    while True:
        p = random.randint(20000, 40000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
                return p
            except OSError:
                continue


class Server:
    def __init__(self, kind, cpu, tern_threads):
        self.kind = kind
        self.port = free_port()
        self.resp_port = self.port
        if kind in ("tern", "tern-mc"):
            # tern-mc is tern measured through its memcached listener, beside memcached.
            mc_port = free_port()
            cmd = [TERN_SERVER, "--port", str(self.port), "--threads", str(tern_threads), "--save", "",
                   "--appendonly", "no", "--memcache-port", str(mc_port)]
        elif kind == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
                   "--bind", "127.0.0.1", "--protected-mode", "no"]
        else:
            cmd = ["memcached", "-u", "root" if os.geteuid() == 0 else os.environ.get("USER", "nobody"),
                   "-p", str(self.port), "-U", "0", "-l", "127.0.0.1", "-t", "1",
                   "-m", "16384", "-c", "8192"]
        self.cmd = ["taskset", "-c", str(cpu)] + cmd
        if kind == "tern-mc":
            self.port = mc_port
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        STARTED.append(self)
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"{kind} did not start: {' '.join(self.cmd)}")
                time.sleep(0.05)

    @property
    def memcache(self):
        return self.kind in ("memcached", "tern-mc")

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def request(self, line, port=None, end=b"\r\n"):
        with socket.create_connection(("127.0.0.1", port or self.port), timeout=10) as s:
            s.sendall(line)
            data = b""
            while not data.endswith(end):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            return data.decode(errors="replace")

    def keys(self):
        if self.kind == "tern-mc":
            return int(self.request(b"DBSIZE\r\n", self.resp_port).strip().lstrip(":"))
        if self.memcache:
            for line in self.request(b"stats\r\n", end=b"END\r\n").splitlines():
                if line.startswith("STAT curr_items "):
                    return int(line.split()[2])
            return -1
        return int(self.request(b"DBSIZE\r\n").strip().lstrip(":"))

    def stop(self):
        if self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def spec_info(name):
    path = os.path.join(SPECS, f"memtier_benchmark-{name}.yml")
    info = json.loads(sh([TERN_BENCH, "--spec", path, "--phase", "info"]))
    info["path"] = path
    info["short"] = name
    return info


def opt(args, *names):
    """Value of the last memtier option among names in an argument list."""
    val = None
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                val = args[i + 1]
            elif a.startswith(n + "="):
                val = a.split("=", 1)[1]
    return val


def memcache_shape(bench_args):
    """The memcache protocol a spec can be run with, or None when it has no memcached equivalent."""
    cmd = opt(bench_args, "--command")
    if cmd is None:
        return "memcache_text"  # plain SET:GET ratio
    if cmd.split()[0].upper() == "MGET":
        return "memcache_meta"  # N pipelined `mg` lines, as meta-memcache sends a multi-get
    return None


def scaled(args, full, test_time):
    """Extra options appended after a spec's own: fewer connections and a shorter run."""
    if full:
        return []
    t = int(opt(args, "-t", "--threads") or 4)
    c = int(opt(args, "-c", "--clients") or 50)
    return ["-t", "1", "-c", str(max(4, min(50, t * c // 8))), "--test-time", str(test_time)]


def preload_scaled(args, full):
    if full:
        return []
    t = int(opt(args, "-t", "--threads") or 4)
    c = int(opt(args, "-c", "--clients") or 50)
    # -n allkeys with P:P covers the range whatever the client count; plain -n N
    # counts per client, so that shape keeps its own count.
    if opt(args, "-n", "--requests") == "allkeys":
        return ["-t", "1", "-c", str(max(1, min(8, t * c)))]
    return []


def run_bench(spec_path, phase, server, extra, client_cpu):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = ["taskset", "-c", str(client_cpu), TERN_BENCH, "--spec", spec_path, "--phase", phase,
           "-s", "127.0.0.1", "-p", str(server.port), "--hide-histogram", "--json-out-file", out] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run(cmd, text=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # How busy the load generator's CPU was: near 100% means the client may be the limit.
    p.client_busy = ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) / max(time.time() - t0, 1e-9)
    try:
        with open(out) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = None
    finally:
        if os.path.exists(out):
            os.unlink(out)
    first_error = None
    for line in p.stdout.splitlines():
        if line.startswith("first error:"):
            first_error = line.split(":", 1)[1].strip()
    return doc, first_error, cmd, p


def measure(servers, specs, args):
    """results[spec][server] = list of per-run dicts, or a string saying why n/a."""
    results = {s["short"]: {} for s in specs}
    groups = {}
    for s in specs:
        # Specs with the same preload share one dataset (the 5M-key MGET specs name none).
        key = (s["dataset_name"] or (s["preload"] and "preload " + " ".join(s["preload"][:12])) or s["short"],
               json.dumps(s["preload"]))
        groups.setdefault(key, []).append(s)
    for (dataset, _), group in groups.items():
        # All servers hold the dataset at once when memory allows, so runs can alternate;
        # otherwise (e.g. 5M x 1KiB) they take turns, one server up at a time.
        per_server = (group[0]["keyspacelen"] or 0) * (int(opt(group[0]["preload"] or [], "--data-size", "-d") or 32) + 100)
        together = per_server * len(servers) < 0.6 * mem_available()
        for kinds in ([servers] if together else [[k] for k in servers]):
            log(f"== dataset {dataset} on {', '.join(kinds)}: {', '.join(s['short'] for s in group)}")
            measure_group(group, kinds, results, args)
    return results


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def measure_group(group, servers, results, args):
    if True:
        live = []
        for kind in servers:
            runnable = [s for s in group if kind not in ("memcached", "tern-mc") or memcache_shape(s["benchmark"])]
            if not runnable:
                for s in group:
                    results[s["short"]][kind] = "n/a (no memcached equivalent)"
                continue
            srv = Server(kind, args.server_cpu, args.tern_threads)
            first = group[0]
            proto = ["--protocol", "memcache_text"] if srv.memcache else []
            ok = True
            if first["preload"]:
                t0 = time.time()
                doc, err, cmd, p = run_bench(first["path"], "preload", srv,
                                             preload_scaled(first["preload"], args.full) + proto, args.client_cpu)
                tot = doc["ALL STATS"]["Totals"] if doc else None
                if not tot or tot["Errors"] or tot["Connection Errors"] or p.returncode:
                    why = err or (p.stderr.strip().splitlines() or ["preload failed"])[-1]
                    log(f"   {kind}: preload failed: {why}")
                    for s in group:
                        results[s["short"]][kind] = f"n/a (preload: {why[:60]})"
                    ok = False
                else:
                    n = srv.keys()
                    want = first["keyspacelen"]
                    lo, hi = int(opt(first["preload"], "--key-minimum") or 0), int(opt(first["preload"], "--key-maximum") or 0)
                    # memtier's -n allkeys over [min, max] writes max-min+1 keys; some specs
                    # quote max-min (the hash specs: 1..100001 and keyspacelen 100000).
                    if n != want and n != hi - lo + 1:
                        for s in group:
                            results[s["short"]][kind] = f"n/a (check: {n} keys, want {want})"
                        ok = False
                    log(f"   {kind}: preloaded {n} keys in {time.time() - t0:.1f}s")
            if ok:
                live.append((srv, runnable))
            else:
                srv.stop()
            for s in group:
                if s not in runnable and kind not in results[s["short"]]:
                    results[s["short"]][kind] = "n/a (no memcached equivalent)"
        for rep in range(args.repeats):
            for s in group:
                order = live[rep % len(live):] + live[:rep % len(live)] if live else []
                for srv, runnable in order:
                    if s not in runnable or isinstance(results[s["short"]].get(srv.kind), str):
                        continue
                    extra = scaled(s["benchmark"], args.full, args.test_time)
                    if srv.memcache:
                        extra += ["--protocol", memcache_shape(s["benchmark"])]
                    cpu0 = srv.cpu_seconds()
                    doc, err, cmd, p = run_bench(s["path"], "benchmark", srv, extra, args.client_cpu)
                    cpu = srv.cpu_seconds() - cpu0
                    tot = doc["ALL STATS"]["Totals"] if doc else None
                    if not tot or tot["Errors"] or tot["Count"] == 0:
                        why = err or (p.stderr.strip().splitlines() or ["no reply"])[-1]
                        results[s["short"]][srv.kind] = f"n/a ({why[:60]})"
                        log(f"   {s['short']} {srv.kind}: n/a: {why}")
                        continue
                    r = {"ops": tot["Ops/sec"], "p50": tot["Percentile Latencies"]["p50.00"],
                         "p99": tot["Percentile Latencies"]["p99.00"],
                         "cpu_us_per_op": cpu / tot["Count"] * 1e6, "client_busy": p.client_busy * 100,
                         "cmd": cmd}
                    results[s["short"]].setdefault(srv.kind, []).append(r)
                    log(f"   [{rep + 1}/{args.repeats}] {s['short']} {srv.kind}: {r['ops']:.0f} ops/s "
                        f"p50 {r['p50']:.3f} p99 {r['p99']:.3f} ms, {r['cpu_us_per_op']:.2f} cpu-us/op")
        for srv, _ in live:
            srv.stop()


def med(runs, k):
    return statistics.median(r[k] for r in runs)


def table(results, servers):
    """Three markdown tables: throughput with ratios, latency, and server CPU per operation."""
    pairs = [("tern", o) for o in servers if o not in ("tern", "tern-mc") and "tern" in servers]
    if "tern-mc" in servers and "memcached" in servers:
        pairs.append(("tern-mc", "memcached"))

    def cell(per, srv, fmt):
        v = per.get(srv, "n/a")
        return v if isinstance(v, str) else fmt(v)

    def md(head, rows):
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                         + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"

    ops, lat, cpu = [], [], []
    for name, per in results.items():
        r = [name] + [cell(per, s, lambda v: f"{med(v, 'ops'):,.0f}") for s in servers]
        for x, y in pairs:
            a, b = per.get(x), per.get(y)
            r.append(f"{med(a, 'ops') / med(b, 'ops'):.2f}" if isinstance(a, list) and isinstance(b, list) else "n/a")
        ops.append(r)
        lat.append([name] + [cell(per, s, lambda v: f"{med(v, 'p50'):.3f} / {med(v, 'p99'):.3f}") for s in servers])
        cpu.append([name] + [cell(per, s, lambda v: f"{med(v, 'cpu_us_per_op'):.2f} ({med(v, 'client_busy'):.0f}%)")
                             for s in servers])
    return ("**Throughput (ops/s, median)**\n\n"
            + md(["workload"] + list(servers) + [f"{a}/{b}" for a, b in pairs], ops)
            + "\n**Latency p50 / p99 (ms, median)**\n\n" + md(["workload"] + list(servers), lat)
            + "\n**Server CPU time per operation (µs, from /proc/<pid>/stat), and (in brackets) how busy "
              "tern-bench kept its CPU: near 100% the client, not the server, may be the limit**\n\n"
            + md(["workload"] + list(servers), cpu))


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model}, {os.cpu_count()} CPUs, {mem:.0f} GiB, {platform.system()} {platform.release()}"


def versions(servers):
    out = []
    if "tern" in servers:
        out.append(sh([TERN_SERVER, "--version"]).strip())
    if "redis" in servers:
        out.append(sh(["redis-server", "--version"]).split(" sha")[0])
    if "memcached" in servers:
        out.append(sh(["memcached", "-V"]).strip())
    return "; ".join(out)


def commit():
    try:
        return sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).strip()
    except subprocess.CalledProcessError:
        return "unknown"


def write_results(path, title, body):
    with open(path, "a") as f:
        f.write(f"\n## {title}\n\n{body}\n")
    log(f"appended to {path}")


def header(args, extra):
    return (f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n"
            f"- machine: {machine()}\n- commit: {commit()}\n- servers: {versions(args.servers)}\n"
            f"- command: `{' '.join(shlex.quote(a) for a in sys.argv)}`\n"
            f"- pinning: servers on CPU {args.server_cpu}, tern-bench on CPU {args.client_cpu}; "
            f"tern-server --threads {args.tern_threads}\n{extra}")


def cmd_suite(args):
    names = CORE
    if args.specs:
        wanted = args.specs.split(",")
        names = [n for n in CORE if any(w in n for w in wanted)]
    specs = [spec_info(n) for n in names]
    results = measure(args.servers, specs, args)
    scale = ("full size (the specs' own -t/-c/--test-time)" if args.full else
             f"scaled for 2 cores: 1 client thread, connections = spec's total / 8 clamped to 4..50, "
             f"--test-time {args.test_time}; key counts, value sizes, pipelines and commands as in the specs")
    body = header(args, f"- size: {scale}\n- repeats: {args.repeats} (medians); "
                        f"n/a = the server cannot run it (error replies are never counted)\n\n")
    body += table(results, args.servers) + "\n"
    print(body)
    if args.results:
        write_results(args.results, f"Core set, {'full' if args.full else 'scaled'} "
                                    f"({datetime.date.today()})", body)


def redis_benchmark_once(args, srv, test, pipe, n):
    rb = sh(["taskset", "-c", str(args.client_cpu), "redis-benchmark", "-p", str(srv.port),
             "-c", "50", "-n", str(n), "-P", str(pipe), "-t", test, "-d", "32", "-r", "100000", "--csv"])
    return float(rb.strip().splitlines()[-1].split(",")[1].strip('"'))


def tern_bench_once(args, srv, test, pipe, n):
    ratio = "1:0" if test == "set" else "0:1"
    fd, doc_path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    subprocess.run(["taskset", "-c", str(args.client_cpu), TERN_BENCH, "-p", str(srv.port), "-t", "1",
                    "-c", "50", "--pipeline", str(pipe), "-n", str(n // 50), "--ratio", ratio,
                    "-d", "32", "--key-minimum", "0", "--key-maximum", "99999",
                    "--key-prefix", "key:", "--distinct-client-seed", "--hide-histogram",
                    "--json-out-file", doc_path], check=True, capture_output=True)
    with open(doc_path) as f:
        tot = json.load(f)["ALL STATS"]["Totals"]
    os.unlink(doc_path)
    if tot["Errors"] or tot["Count"] != n // 50 * 50:
        raise RuntimeError(f"tern-bench run had errors or lost replies: {tot}")
    return tot["Ops/sec"]


def cmd_loadgen(args):
    """tern-bench vs redis-benchmark, both on one core against the same redis-server."""
    srv = Server("redis", args.server_cpu, 1)
    rows = ["| test | pipeline | conns | redis-benchmark ops/s | tern-bench ops/s | tern-bench/redis-benchmark |",
            "|---|---:|---:|---:|---:|---:|"]
    n = args.loadgen_requests
    try:
        for test in ["set", "get"]:
            for pipe in [1, 16]:
                rbs, tbs = [], []
                for _ in range(args.repeats):
                    rbs.append(redis_benchmark_once(args, srv, test, pipe, n))
                    tbs.append(tern_bench_once(args, srv, test, pipe, n))
                rb_ops, tb_ops = statistics.median(rbs), statistics.median(tbs)
                log(f"{test} P{pipe}: redis-benchmark {rb_ops:.0f}, tern-bench {tb_ops:.0f}")
                rows.append(f"| {test.upper()} | {pipe} | 50 | {rb_ops:,.0f} | {tb_ops:,.0f} | {tb_ops / rb_ops:.2f} |")
    finally:
        srv.stop()
    body = header(args, f"- {n} requests per test, 50 connections, 32-byte values, 100000 keys; "
                        f"both load generators single-threaded on the client CPU; median of {args.repeats} "
                        f"alternating runs each\n\n") + "\n".join(rows) + "\n"
    print(body)
    if args.results:
        write_results(args.results, f"Load generator check: tern-bench vs redis-benchmark "
                                    f"({datetime.date.today()})", body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="?", default="suite", choices=["suite", "loadgen"])
    ap.add_argument("--servers", default="tern,redis,memcached")
    ap.add_argument("--specs", help="comma-separated substrings of core spec names (default: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="run the specs at their own size")
    ap.add_argument("--test-time", type=int, default=10, help="seconds per scaled run")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--tern-threads", type=int, default=1)
    ap.add_argument("--loadgen-requests", type=int, default=2_000_000)
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"),
                    help="markdown file to append to ('' for none)")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    # A terminated run still stops its servers (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run(args)
    finally:
        for srv in STARTED:
            srv.stop()


def snapshot_binaries():
    """Runs copies: a concurrent `cargo build` must not swap the binaries mid-run."""
    global TERN_SERVER, TERN_BENCH
    d = tempfile.mkdtemp(prefix="tern-bench-run-")
    for name in ["tern-server", "tern-bench"]:
        shutil.copy2(os.path.join(ROOT, "target", "release", name), os.path.join(d, name))
    TERN_SERVER, TERN_BENCH = os.path.join(d, "tern-server"), os.path.join(d, "tern-bench")


def run(args):
    ensure_tools()
    if not args.no_build:
        build()
    snapshot_binaries()
    if args.what == "loadgen":
        cmd_loadgen(args)
    else:
        cmd_suite(args)


if __name__ == "__main__":
    main()
