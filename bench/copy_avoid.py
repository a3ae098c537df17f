#!/usr/bin/env python3
"""GET of large values, copy avoidance on vs off (reply-copy-avoid-min-size 16kb vs 0).

Two tern-server release builds of the same binary run at once, pinned to CPU 0
(--threads 1); tern-bench on CPU 1. Each dataset is preloaded with
`--ratio 1:0 -n allkeys`; the GET runs (--ratio 0:1) alternate on/off, repeat after
repeat; medians of ops/s and server CPU µs/op (/proc/<pid>/stat utime+stime).
"""
import json, os, socket, statistics, subprocess, sys, tempfile, time

from run import free_port  # bench/run.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = f"{ROOT}/target/release/tern-server"
BENCH = f"{ROOT}/target/release/tern-bench"
NEW = os.environ.get("NEW", SERVER)
OLD = os.environ.get("OLD")
CLK = os.sysconf("SC_CLK_TCK")
REPEATS = int(os.environ.get("REPEATS", "5"))
SECS = int(os.environ.get("SECS", "5"))


class Srv:
    def __init__(self, name, binary, extra):
        self.name = name
        self.port = free_port()
        self.cmd = ["taskset", "-c", "0", binary, "--port", str(self.port), "--threads", "1", "--save", "",
                    "--appendonly", "no", "--memcache-port", "0"] + extra
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                break
            except OSError:
                assert time.time() < t and self.p.poll() is None
                time.sleep(0.05)

    def cpu(self):
        with open(f"/proc/{self.p.pid}/stat") as f:
            x = f.read().rsplit(")", 1)[1].split()
        return (int(x[11]) + int(x[12])) / CLK

    def stop(self):
        self.p.terminate()
        self.p.wait()


def bench(srv, args):
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = ["taskset", "-c", "1", BENCH, "-p", str(srv.port), "--hide-histogram", "--json-out-file", out] + args
    c0 = srv.cpu()
    subprocess.run(cmd, check=True, capture_output=True)
    cpu = srv.cpu() - c0
    with open(out) as f:
        tot = json.load(f)["ALL STATS"]["Totals"]
    os.unlink(out)
    assert tot["Errors"] == 0, tot
    return tot, cpu, cmd


def main():
    rows = []
    sizes = [(65536, 1000), (1 << 20, 100)]
    if os.environ.get("SIZES"):
        sizes = [x for x in sizes if str(x[0]) in os.environ["SIZES"].split(",")]
    pipes = [int(p) for p in os.environ.get("PIPES", "1,16").split(",")]
    for size, keys in sizes:
        srvs = [Srv("on", NEW, ["--reply-copy-avoid-min-size", "16kb"]), Srv("off", NEW, ["--reply-copy-avoid-min-size", "0"])]
        if OLD:
            srvs.append(Srv("before", OLD, []))
        common = ["-d", str(size), "--key-minimum", "1", "--key-maximum", str(keys), "--key-prefix", "k:"]
        for s in srvs:
            bench(s, ["-t", "1", "-c", "1", "--ratio", "1:0", "-n", "allkeys", "--key-pattern", "P:P"] + common)
        for pipe in pipes:
            runs = {s.name: [] for s in srvs}
            for rep in range(REPEATS):
                order = srvs[rep % len(srvs):] + srvs[:rep % len(srvs)]
                for s in order:
                    args = ["-t", "1", "-c", "4", "--pipeline", str(pipe), "--ratio", "0:1", "--test-time", str(SECS),
                            "--key-pattern", "R:R", "--distinct-client-seed"] + common
                    tot, cpu, cmd = bench(s, args)
                    r = (tot["Ops/sec"], cpu / tot["Count"] * 1e6)
                    runs[s.name].append(r)
                    print(f"{size} p{pipe} {s.name} rep{rep}: {r[0]:.0f} ops/s {r[1]:.2f} cpu-us/op", flush=True)
                    last_cmd = cmd
            for s in srvs:
                ops = statistics.median(r[0] for r in runs[s.name])
                us = statistics.median(r[1] for r in runs[s.name])
                rows.append((size, pipe, s.name, ops, us))
            print("cmd:", " ".join(last_cmd), flush=True)
        for s in srvs:
            print("server:", " ".join(s.cmd))
            s.stop()
    print("\n| value | pipeline | copy-avoid | ops/s (median) | server CPU µs/op (median) |")
    print("|---|---|---|---|---|")
    for size, pipe, name, ops, us in rows:
        print(f"| {size // 1024} KiB | {pipe} | {name} | {ops:,.0f} | {us:.2f} |")


if __name__ == "__main__":
    main()
