#!/usr/bin/env python3
"""What 10,000 clients blocked at once cost an idle Tern, and how late their
timeouts fire at each `hz` (issue 16).

Starts the given tern-server (2 workers by default), connects 10,000 clients
each in `BLPOP idle:N <t>` (half waiting forever, half with a one-hour
timeout), waits until INFO counts them all blocked, lets the work that
activity leaves behind finish (idle read buffers are given back after 2 s),
then reads each worker thread's CPU time (utime+stime) and voluntary context
switches (each wake-up from epoll is one) from /proc/<pid>/task/*/ over 10 s.
Then, with the 10,000 still blocked, for hz 1, 10 and 100 (CONFIG SET): 50
more clients send `BLPOP lat:N 0.05` at once; each one's lateness is the
time to its null reply minus 50 ms (median and max reported).

    cargo build --release -p tern-server
    python3 bench/idle_blocked.py [--binary target/release/tern-server] [--clients 10000]
"""
import argparse
import os
import resource
import selectors
import socket
import statistics
import time
from pathlib import Path

from datatypes import start, stop

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def req(*words):
    return ("*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(w), w) for w in words)).encode()


def ask(port, *words):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(req(*words))
        buf = b""
        while b"\r\n" not in buf:
            buf += s.recv(65536)
        head, rest = buf.split(b"\r\n", 1)
        if head[:1] != b"$":
            return head.decode()
        n = int(head[1:])
        while len(rest) < n + 2:
            rest += s.recv(65536)
        return rest[:n].decode()


def info_field(port, field):
    """An INFO clients field; None if this build has no such field."""
    for line in ask(port, "INFO", "clients").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":")[1])
    return None


def workers(pid):
    """{thread name: (cpu seconds, voluntary context switches)} of the worker threads."""
    out = {}
    for t in Path(f"/proc/{pid}/task").iterdir():
        name = (t / "comm").read_text().strip()
        if not name.startswith("tern-worker"):
            continue
        f = (t / "stat").read_text().rsplit(")", 1)[1].split()
        vol = next(int(l.split()[1]) for l in (t / "status").read_text().splitlines() if l.startswith("voluntary_ctxt_switches"))
        out[name] = ((int(f[11]) + int(f[12])) / TICK, vol)
    return out


def process_cpu(pid):
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def lateness(port, n=50, secs=0.05):
    sel = selectors.DefaultSelector()
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    sent = {}
    for i, c in enumerate(conns):
        sent[c] = time.monotonic()
        c.sendall(req("BLPOP", f"lat:{i}", str(secs)))
        sel.register(c, selectors.EVENT_READ)
    late = []
    while len(late) < n:
        for key, _ in sel.select(timeout=5):
            c = key.fileobj
            data = c.recv(64)
            took = time.monotonic() - sent[c]
            if data != b"*-1\r\n":
                raise RuntimeError(f"unexpected reply {data!r}")
            late.append((took - secs) * 1000)
            sel.unregister(c)
    for c in conns:
        c.close()
    return statistics.median(late), max(late), min(late)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(ROOT / "target/release/tern-server"))
    ap.add_argument("--clients", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--secs", type=int, default=10)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = a.clients + 1000
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(need, soft), hard), hard))
    p, port = start([a.binary], ["--threads", str(a.threads), "--maxclients", str(a.clients + 500), "--hz", "10"], cpus=None)
    try:
        clients = []
        for i in range(a.clients):
            c = socket.create_connection(("127.0.0.1", port))
            c.sendall(req("BLPOP", f"idle:{i}", "0" if i % 2 == 0 else "3600"))
            clients.append(c)
        while info_field(port, "blocked_clients") != a.clients:
            time.sleep(0.05)
        print(f"{a.clients} clients blocked; total_blocking_keys {info_field(port, 'total_blocking_keys')}")
        # Work left by the activity (idle read buffers are released after 2 s).
        time.sleep(3)
        w0, p0 = workers(p.pid), process_cpu(p.pid)
        time.sleep(a.secs)
        w1, p1 = workers(p.pid), process_cpu(p.pid)
        print(f"| over {a.secs} s | CPU ms | wake-ups |")
        print("|---|---:|---:|")
        for name in sorted(w0):
            print(f"| {name} | {(w1[name][0] - w0[name][0]) * 1000:.0f} | {w1[name][1] - w0[name][1]} |")
        print(f"| whole process | {(p1 - p0) * 1000:.0f} | |")
        print()
        print("| hz | median lateness ms | max | min |")
        print("|---:|---:|---:|---:|")
        for hz in (1, 10, 100):
            ask(port, "CONFIG", "SET", "hz", str(hz))
            med, mx, mn = lateness(port)
            print(f"| {hz} | {med:.2f} | {mx:.2f} | {mn:.2f} |", flush=True)
        for c in clients:
            c.close()
    finally:
        stop(p)


if __name__ == "__main__":
    main()
