#!/usr/bin/env python3
"""TLS: Tern against redis-server (Debian's, built with OpenSSL), same
client (Debian's `redis-benchmark --tls`, and Python's ssl for the idle
connections), same certificates, alternating pairs. Prints one table.

    python3 bench/tls.py                       # 3 pairs, the defaults below
    python3 bench/tls.py --pairs 5 --get-n 4000000
    python3 bench/tls.py --tern target/release/tern-server --redis /usr/bin/redis-server

Per pair, each server (Tern with one worker) starts fresh on CPU 0, the
client runs on CPU 1, both on 127.0.0.1 only, TLS only (`--port 0
--tls-port P`), with mutual TLS (Redis's default `tls-auth-clients yes`):

- GET at pipeline 16, 50 connections, 100,000 keys of 32 bytes (set
  first): server CPU µs per GET = the server's utime+stime from
  /proc/<pid>/stat over the run / GETs;
- new TLS connections per second: `redis-benchmark -k 0` (a new
  connection, a full handshake, one PING, close), 50 at a time; with the
  server CPU µs per connection. OpenSSL 3.0's client handshake costs the
  client core more than Tern's server side costs the server's, so that
  rate is the client's; the same storm from a rustls client
  (crates/tern-server/examples/tls_connect.rs, 8 threads, no resumption)
  is measured too, the server's rate;
- RSS per idle TLS connection: `--idle` connections, each handshaken and
  one PING answered, then left idle 3 s (both servers give idle read
  buffers back after 2 s); (RSS after - RSS before) / connections.

Every server is stopped by its PID, and killed if a run outlives
--limit seconds. Needs openssl, redis-benchmark, redis-cli and taskset;
builds tern-server and the storm client (release) first unless --no-build.
"""

import argparse
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TCK = os.sysconf("SC_CLK_TCK")


def sh(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def make_certs(d):
    """An EC P-256 CA, a server certificate for 127.0.0.1 and a client one."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    sh(["openssl", "req", "-x509", *ec, "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt", "-days", "7", "-subj", "/CN=bench CA"])
    for name, ext in [("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")]:
        sh(["openssl", "req", *ec, "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", f"/CN={name}"])
        Path(f"{d}/{name}.ext").write_text(ext)
        sh(["openssl", "x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
            "-CAcreateserial", "-out", f"{d}/{name}.crt", "-days", "7", "-extfile", f"{d}/{name}.ext"])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, kind, binary, certs, limit, cpu):
        self.kind, self.certs = kind, certs
        self.port = free_port()
        tls = ["--tls-cert-file", f"{certs}/server.crt", "--tls-key-file", f"{certs}/server.key",
               "--tls-ca-cert-file", f"{certs}/ca.crt"]
        argv = [binary, "--port", "0", "--tls-port", str(self.port), "--bind", "127.0.0.1", "--save", "", *tls]
        argv += ["--threads", "1"] if kind == "tern" else ["--appendonly", "no"]
        self.dir = tempfile.mkdtemp(prefix=f"tls-bench-{kind}-")
        self.proc = subprocess.Popen(["taskset", "-c", str(cpu), *argv], cwd=self.dir,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid  # taskset execs the server: the same process
        self.watchdog = threading.Timer(limit, self.proc.kill)
        self.watchdog.start()
        deadline = time.monotonic() + 20
        while self.cli("PING") != "PONG":
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"{kind} did not start")
            time.sleep(0.05)

    def tls_args(self):
        c = self.certs
        return ["--tls", "--cacert", f"{c}/ca.crt", "--cert", f"{c}/client.crt", "--key", f"{c}/client.key"]

    def cli(self, *cmd):
        r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.port), *self.tls_args(), *cmd],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip()

    def cpu(self):
        f = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / TCK  # utime, stime (fields 14, 15)

    def rss(self):
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        self.watchdog.cancel()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def bench(srv, cpu, *args):
    """Runs redis-benchmark on `cpu`; returns its requests per second."""
    argv = ["taskset", "-c", str(cpu), "redis-benchmark", "-h", "127.0.0.1", "-p", str(srv.port), *srv.tls_args(), "-q", *args]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    rates = [float(l.split(":")[1].split()[0]) for l in out.replace("\r", "\n").splitlines()
             if "requests per second" in l and ":" in l]
    if not rates:
        raise RuntimeError(f"redis-benchmark printed no rate: {out[-500:]}")
    return rates[-1]


def idle_rss(srv, n, certs):
    """RSS bytes per idle TLS connection (handshaken, one PING answered)."""
    ctx = ssl.create_default_context(cafile=f"{certs}/ca.crt")
    ctx.load_cert_chain(f"{certs}/client.crt", f"{certs}/client.key")
    time.sleep(3)
    before = srv.rss()
    conns = []
    try:
        for _ in range(n):
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", srv.port), timeout=10), server_hostname="127.0.0.1")
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            assert s.recv(16) == b"+PONG\r\n"
            conns.append(s)
        time.sleep(3)  # idle: read buffers given back after 2 s
        return (srv.rss() - before) / n
    finally:
        for s in conns:
            s.close()


def one(kind, binary, a):
    srv = Server(kind, binary, a.certs, a.limit, a.server_cpu)
    try:
        c = a.client_cpu
        bench(srv, c, "-t", "set", "-P", "16", "-c", "50", "-n", "100000", "-r", "100000", "-d", "32")
        t0 = srv.cpu()
        get_rate = bench(srv, c, "-t", "get", "-P", "16", "-c", "50", "-n", str(a.get_n), "-r", "100000", "-d", "32")
        get_cpu = (srv.cpu() - t0) / a.get_n * 1e6
        t0 = srv.cpu()
        conn_rate = bench(srv, c, "-t", "ping_mbulk", "-k", "0", "-c", "50", "-n", str(a.conns_n))
        conn_cpu = (srv.cpu() - t0) / a.conns_n * 1e6
        t0 = srv.cpu()
        out = subprocess.run(["taskset", "-c", str(c), a.storm, "--port", str(srv.port), "--ca", f"{a.certs}/ca.crt",
                              "--cert", f"{a.certs}/client.crt", "--key", f"{a.certs}/client.key",
                              "-n", str(a.conns_n), "--threads", "8"], capture_output=True, text=True, timeout=600).stdout.split()
        storm_rate, failed = float(out[1]), int(out[3])
        if failed:
            raise RuntimeError(f"{kind}: {failed} storm connections failed")
        storm_cpu = (srv.cpu() - t0) / a.conns_n * 1e6
        rss = idle_rss(srv, a.idle, a.certs)
    finally:
        srv.stop()
    row = dict(get_rate=get_rate, get_cpu=get_cpu, conn_rate=conn_rate, conn_cpu=conn_cpu,
               storm_rate=storm_rate, storm_cpu=storm_cpu, rss=rss)
    print(f"  {kind:5s} GET p16 {get_rate:>9,.0f}/s {get_cpu:6.3f} µs/op | conns (redis-benchmark) {conn_rate:>6,.0f}/s "
          f"{conn_cpu:6.1f} µs | conns (rustls) {storm_rate:>6,.0f}/s {storm_cpu:6.1f} µs | idle RSS {rss:>7,.0f} B/conn",
          file=sys.stderr, flush=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tern", default=str(ROOT / "target" / "release" / "tern-server"))
    p.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--get-n", type=int, default=2_000_000)
    p.add_argument("--conns-n", type=int, default=4_000)
    p.add_argument("--idle", type=int, default=1000)
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--limit", type=float, default=600, help="seconds a server may live")
    p.add_argument("--storm", default=str(ROOT / "target" / "release" / "examples" / "tls_connect"))
    p.add_argument("--no-build", action="store_true")
    a = p.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "-p", "tern-server", "--bin", "tern-server", "--example", "tls_connect"],
                       cwd=ROOT, check=True)
    for tool in ("openssl", "redis-benchmark", "redis-cli", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found")
    d = tempfile.mkdtemp(prefix="tls-bench-certs-")
    a.certs = d
    try:
        make_certs(d)
        rows = {"tern": [], "redis": []}
        for i in range(a.pairs):
            print(f"pair {i + 1}/{a.pairs}", file=sys.stderr, flush=True)
            rows["tern"].append(one("tern", a.tern, a))
            rows["redis"].append(one("redis", a.redis, a))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    med = {k: {m: statistics.median(r[m] for r in v) for m in v[0]} for k, v in rows.items()}
    t, r = med["tern"], med["redis"]
    ver = subprocess.run([a.redis, "--version"], capture_output=True, text=True).stdout.split()
    print(f"\nmedians of {a.pairs} alternating pairs; Tern {a.tern} (1 worker), {' '.join(ver[:3])}; "
          f"server CPU {a.server_cpu}, client CPU {a.client_cpu}\n")
    print("| measure | Tern | redis-server | Tern / Redis | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| GET p16 over TLS, ops/s | {t['get_rate']:,.0f} | {r['get_rate']:,.0f} | {t['get_rate'] / r['get_rate']:.2f} | |")
    print(f"| GET p16 over TLS, server CPU µs/op | {t['get_cpu']:.3f} | {r['get_cpu']:.3f} | {t['get_cpu'] / r['get_cpu']:.2f} | ≤ 0.7 |")
    print(f"| new TLS connections/s, redis-benchmark -k 0 (client-bound) | {t['conn_rate']:,.0f} | {r['conn_rate']:,.0f} | {t['conn_rate'] / r['conn_rate']:.2f} | |")
    print(f"| server CPU µs per new TLS connection, redis-benchmark | {t['conn_cpu']:.1f} | {r['conn_cpu']:.1f} | {t['conn_cpu'] / r['conn_cpu']:.2f} | |")
    print(f"| new TLS connections/s, rustls client (tls_connect) | {t['storm_rate']:,.0f} | {r['storm_rate']:,.0f} | {t['storm_rate'] / r['storm_rate']:.2f} | ≥ 1.5 |")
    print(f"| server CPU µs per new TLS connection, rustls client | {t['storm_cpu']:.1f} | {r['storm_cpu']:.1f} | {t['storm_cpu'] / r['storm_cpu']:.2f} | |")
    print(f"| RSS per idle TLS connection, bytes | {t['rss']:,.0f} | {r['rss']:,.0f} | {t['rss'] / r['rss']:.2f} | ≤ 1 |")


if __name__ == "__main__":
    main()
