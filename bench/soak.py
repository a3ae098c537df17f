#!/usr/bin/env python3
"""Soak: an hour of mixed load with random disconnects and hostile clients,
RSS sampled over time. Not part of the test command.

    python3 bench/soak.py                        # 3600 s against target/release/tern-server
    python3 bench/soak.py --seconds 300 --out /tmp/soak   # a short run

What runs, against one tern-server (2 workers, both ports, loopback only,
stopped by PID at the end):

- `--clients` load threads, each with its own connections, sending pipelines
  of 1..32 mixed commands over a bounded keyspace (`--keys` string keys and
  as many memcached ones, values of 16 B..4 KB, `--keys`/200 hashes of up to
  200 fields, so steady-state memory is bounded): SET/GET/MGET/MSET, INCR,
  APPEND (capped), HSET/HGETALL/HDEL, EXPIRE/TTL, DEL/UNLINK, SCAN, MULTI/EXEC,
  and memcached set/get/mg/ms/delete/incr on the memcached port. Every reply
  is read and checked for well-formedness; a connection is dropped and
  reopened at random (about 1 in 200 pipelines), sometimes half-way through
  writing a pipeline or inside MULTI.
- One hostile thread, once per `--hostile-every` seconds, picks one of:
  random bytes, a huge declared bulk length then disconnect, a 4 MB
  unterminated line, a `*200000` multibulk of tiny arguments, a
  pathological SCAN MATCH / KEYS glob, a client that stops reading replies
  (output buffer limit), malformed memcached lines, a memcached binary
  header. After each, the server must still answer PING.
- A sampler records the server's RSS, used_memory, keys and ops every
  `--sample` seconds to `<out>.csv`, and draws `<out>.svg` at the end.

Flatness is judged after `--warmup` seconds: the run passes when every later
RSS sample is within 10% of the median of those samples. The summary line is
printed and, with --results, appended to bench/RESULTS.md.
"""

import argparse
import datetime
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TERN = os.path.join(ROOT, "target", "release", "tern-server")


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Reader:
    """Reads whole RESP replies or memcached lines off a socket."""

    def __init__(self, sock):
        self.s = sock
        self.buf = b""

    def _fill(self):
        b = self.s.recv(1 << 16)
        if not b:
            raise ConnectionError("closed")
        self.buf += b

    def line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                ln, self.buf = self.buf[:i], self.buf[i + 2 :]
                return ln
            self._fill()

    def take(self, n):
        while len(self.buf) < n:
            self._fill()
        b, self.buf = self.buf[:n], self.buf[n:]
        return b

    def reply(self):
        ln = self.line()
        t, rest = ln[:1], ln[1:]
        if t in (b"+", b"-", b":"):
            return ln
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            b = self.take(n + 2)
            assert b.endswith(b"\r\n"), "bulk without CRLF"
            return b[:-2]
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise AssertionError(f"bad reply type {ln[:40]!r}")

    def mc_reply(self):
        """One memcached reply: lines up to END for get, else one line."""
        ln = self.line()
        if ln.startswith(b"VALUE "):
            n = int(ln.split()[3])
            self.take(n + 2)
            while True:
                ln = self.line()
                if ln == b"END":
                    return b"END"
                if ln.startswith(b"VALUE "):
                    self.take(int(ln.split()[3]) + 2)
        if ln.startswith(b"VA "):
            self.take(int(ln.split()[1]) + 2)
        return ln


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ops = 0
        self.disconnects = 0
        self.hostile = {}
        self.errors = []

    def add(self, n=1, disc=0):
        with self.lock:
            self.ops += n
            self.disconnects += disc


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def load_thread(a, port, mcport, stats, stop, seed):
    rnd = random.Random(seed)
    key = lambda: b"soak:%d" % rnd.randrange(a.keys)
    hkey = lambda: b"soakh:%d" % rnd.randrange(a.keys // 200 + 1)
    val = lambda: os.urandom(rnd.choice((16, 64, 100, 512, 1024, 4096)) // 2).hex().encode()
    s = connect(port)
    r = Reader(s)
    m = connect(mcport)
    mr = Reader(m)
    while not stop.is_set():
        try:
            if rnd.random() < 0.2:
                # memcached port
                n = rnd.randint(1, 16)
                out = []
                for _ in range(n):
                    c = rnd.random()
                    k = b"mc:%d" % rnd.randrange(a.keys)
                    if c < 0.35:
                        v = val()
                        out.append(b"set %s %d %d %d\r\n%s\r\n" % (k, rnd.randrange(1 << 16), rnd.choice((0, 0, 5, 60)), len(v), v))
                    elif c < 0.7:
                        out.append(b"get %s %s\r\n" % (k, b"mc:%d" % rnd.randrange(a.keys)))
                    elif c < 0.8:
                        out.append(b"mg %s v f t c\r\n" % k)
                    elif c < 0.9:
                        out.append(b"delete %s\r\n" % k)
                    else:
                        out.append(b"incr %s 1\r\n" % k)
                m.sendall(b"".join(out))
                for _ in range(n):
                    mr.mc_reply()
                stats.add(n)
                continue
            n = rnd.randint(1, 32)
            cmds = []
            for _ in range(n):
                c = rnd.random()
                if c < 0.25:
                    cmds.append(resp(b"SET", key(), val(), *((b"EX", rnd.randint(1, 120)) if rnd.random() < 0.3 else ())))
                elif c < 0.45:
                    cmds.append(resp(b"GET", key()))
                elif c < 0.52:
                    cmds.append(resp(b"MGET", *[key() for _ in range(rnd.randint(2, 50))]))
                elif c < 0.56:
                    kv = []
                    for _ in range(rnd.randint(2, 10)):
                        kv += [key(), val()]
                    cmds.append(resp(b"MSET", *kv))
                elif c < 0.60:
                    cmds.append(resp(b"INCR", b"soakn:%d" % rnd.randrange(1000)))
                elif c < 0.63:
                    # APPEND grows a value; keep it bounded by deleting first now and then.
                    k = b"soaka:%d" % rnd.randrange(1000)
                    cmds.append(resp(b"APPEND", k, val()) if rnd.random() < 0.9 else resp(b"DEL", k))
                elif c < 0.72:
                    cmds.append(resp(b"HSET", hkey(), b"f%d" % rnd.randrange(200), val()[:256]))
                elif c < 0.75:
                    cmds.append(resp(b"HGETALL", hkey()))
                elif c < 0.78:
                    cmds.append(resp(b"HDEL", hkey(), b"f%d" % rnd.randrange(200)))
                elif c < 0.82:
                    cmds.append(resp(b"EXPIRE", key(), rnd.randint(1, 60)))
                elif c < 0.85:
                    cmds.append(resp(b"TTL", key()))
                elif c < 0.90:
                    cmds.append(resp(rnd.choice((b"DEL", b"UNLINK")), key()))
                elif c < 0.93:
                    cmds.append(resp(b"SCAN", rnd.randrange(1 << 20), b"COUNT", 50))
                else:
                    cmds.append(resp(b"EXISTS", key(), key()))
            data = b"".join(cmds)
            if rnd.random() < 0.005:
                # Vanish mid-pipeline, sometimes mid-command, sometimes in MULTI.
                cut = rnd.randrange(len(data))
                s.sendall((resp(b"MULTI") if rnd.random() < 0.5 else b"") + data[:cut])
                s.close()
                s = connect(port)
                r = Reader(s)
                stats.add(0, 1)
                continue
            if rnd.random() < 0.05:
                data = resp(b"MULTI") + data + resp(b"EXEC")
                s.sendall(data)
                for _ in range(n + 2):
                    x = r.reply()
                    if isinstance(x, bytes) and x.startswith(b"-"):
                        raise AssertionError(f"error reply {x[:80]!r}")
            else:
                s.sendall(data)
                for _ in range(n):
                    x = r.reply()
                    if isinstance(x, bytes) and x.startswith(b"-") and not x.startswith(b"-WRONGTYPE") and not x.startswith(b"-ERR value is not"):
                        raise AssertionError(f"error reply {x[:80]!r}")
            stats.add(n)
        except Exception as e:  # a failure is recorded, the thread reconnects
            if stop.is_set():
                break
            with stats.lock:
                stats.errors.append(f"{time.strftime('%H:%M:%S')} load: {e!r}"[:200])
            for c in (s, m):
                try:
                    c.close()
                except OSError:
                    pass
            s, m = connect(port), connect(mcport)
            r, mr = Reader(s), Reader(m)


def hostile_once(kind, port, mcport, rnd):
    """One hostile client; returns when it is done (the server may close it)."""

    def blast(p, data, read=True):
        try:
            with connect(p) as s:
                s.settimeout(10)
                s.sendall(data)
                if read:
                    try:
                        s.recv(1 << 16)
                    except OSError:
                        pass
        except OSError:
            pass

    if kind == "random-bytes":
        blast(rnd.choice((port, mcport)), os.urandom(rnd.randint(1, 1 << 20)))
    elif kind == "huge-bulk-then-close":
        blast(port, b"*2\r\n$3\r\nSET\r\n$536870000\r\nabc", read=False)
    elif kind == "unterminated-line":
        blast(rnd.choice((port, mcport)), b"x" * (4 << 20))
    elif kind == "many-args":
        blast(port, b"*200000\r\n$6\r\nEXISTS\r\n" + b"$1\r\nx\r\n" * 199999)
    elif kind == "pathological-glob":
        blast(port, resp(b"SCAN", 0, b"MATCH", b"*?" * 5000 + b"b", b"COUNT", 200) + resp(b"KEYS", b"a*" * 30 + b"b" + b"[" * 100))
    elif kind == "slow-reader":
        try:
            with connect(port) as s:
                s.settimeout(10)
                s.sendall(resp(b"SET", b"soak:big", b"x" * (1 << 20)))
                s.recv(100)
                # Pipeline GETs of 1 MB and never read: the output limit closes us.
                for _ in range(64):
                    s.sendall(resp(b"GET", b"soak:big") * 8)
        except OSError:
            pass
    elif kind == "mc-malformed":
        blast(mcport, rnd.choice((b"set x 0 0 -5\r\n", b"get " + b"k" * 300 + b"\r\n", b"mg\r\n", b"ms k 99999999999999999999\r\n", b"set x 0 0 3\r\nabcdef\r\n", b"cas\r\n")))
    elif kind == "mc-binary":
        blast(mcport, b"\x80\x00\x00\x03" + b"\x00" * 8 + b"\x00\x00\x00\x03" + b"\x00" * 12 + b"foo", read=False)


HOSTILE = ["random-bytes", "huge-bulk-then-close", "unterminated-line", "many-args", "pathological-glob", "slow-reader", "mc-malformed", "mc-binary"]


def hostile_thread(a, port, mcport, stats, stop):
    rnd = random.Random(7)
    while not stop.wait(a.hostile_every):
        kind = rnd.choice(HOSTILE)
        hostile_once(kind, port, mcport, rnd)
        ok = False
        try:
            with connect(port) as s:
                s.sendall(resp(b"PING"))
                ok = Reader(s).reply() == b"+PONG"
        except OSError:
            pass
        with stats.lock:
            stats.hostile[kind] = stats.hostile.get(kind, 0) + 1
            if not ok:
                stats.errors.append(f"{time.strftime('%H:%M:%S')} no PONG after {kind}")


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


def info(port):
    with connect(port) as s:
        s.sendall(resp(b"INFO"))
        txt = Reader(s).reply().decode()
    return dict(ln.split(":", 1) for ln in txt.split("\r\n") if ":" in ln)


def svg(samples, path, warmup):
    w, h, pad = 900, 360, 50
    t_max = max(x[0] for x in samples) or 1
    r_max = max(x[1] for x in samples) * 1.1 or 1

    def pt(t, r):
        return pad + (w - 2 * pad) * t / t_max, h - pad - (h - 2 * pad) * r / r_max

    rss = " ".join("%.1f,%.1f" % pt(t, r) for t, r, *_ in samples)
    used = " ".join("%.1f,%.1f" % pt(t, u / 1024) for t, _, u, *_ in samples)
    wx = pt(warmup, 0)[0]
    ticks = "".join(
        f'<text x="{pad - 5}" y="{pt(0, v)[1]:.0f}" text-anchor="end" font-size="11">{v / 1024:.0f} MB</text>'
        for v in [r_max * i / 5 for i in range(6)]
    )
    with open(path, "w") as f:
        f.write(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">'
            f'<rect width="{w}" height="{h}" fill="white"/>{ticks}'
            f'<line x1="{wx:.0f}" y1="{pad}" x2="{wx:.0f}" y2="{h - pad}" stroke="#aaa" stroke-dasharray="4"/>'
            f'<polyline fill="none" stroke="#c33" stroke-width="1.5" points="{rss}"/>'
            f'<polyline fill="none" stroke="#36c" stroke-width="1.5" points="{used}"/>'
            f'<text x="{pad}" y="20" font-size="13">tern-server soak: RSS (red) and used_memory (blue) over {t_max:.0f} s; warm-up ends at the dashed line</text>'
            "</svg>"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=TERN)
    p.add_argument("--seconds", type=int, default=3600)
    p.add_argument("--warmup", type=int, default=600)
    p.add_argument("--sample", type=float, default=10.0)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--hostile-every", type=float, default=5.0)
    p.add_argument("--out", default="/tmp/tern-soak")
    p.add_argument("--results", default=None, help="append the summary to this markdown file")
    a = p.parse_args()
    a.warmup = min(a.warmup, a.seconds // 3)

    argv = [a.bin, "--port", "0", "--memcache-port", "11211", "--threads", "2", "--bind", "127.0.0.1",
            "--client-output-buffer-limit", "normal 32mb 16mb 10", "--maxclients", "1000", "--save", ""]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    port = mcport = None
    for raw in proc.stdout:
        ln = raw.decode(errors="replace")
        if "memcache port=" in ln:
            mcport = int(ln.split("memcache port=")[1].split(".")[0])
        elif "port=" in ln and port is None:
            port = int(ln.split("port=")[1].split(".")[0])
        if "Ready to accept" in ln:
            break
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    print(f"tern-server pid {proc.pid} port {port} memcache {mcport}", flush=True)

    stats, stop = Stats(), threading.Event()
    threads = [threading.Thread(target=load_thread, args=(a, port, mcport, stats, stop, i), daemon=True) for i in range(a.clients)]
    threads.append(threading.Thread(target=hostile_thread, args=(a, port, mcport, stats, stop), daemon=True))
    for t in threads:
        t.start()
    samples = []
    start = time.monotonic()
    csv = open(a.out + ".csv", "w")
    csv.write("seconds,rss_kb,used_memory,keys,ops,disconnects\n")
    try:
        while time.monotonic() - start < a.seconds:
            time.sleep(a.sample)
            if proc.poll() is not None:
                stats.errors.append("server exited")
                break
            t = time.monotonic() - start
            inf = info(port)
            keys = sum(int(v.split("keys=")[1].split(",")[0]) for k, v in inf.items() if k.startswith("db"))
            row = (round(t), rss_kb(proc.pid), int(inf["used_memory"]), keys, stats.ops, stats.disconnects)
            samples.append(row)
            csv.write(",".join(map(str, row)) + "\n")
            csv.flush()
            print("t=%5ds rss=%7.1f MB used=%7.1f MB keys=%7d ops=%9d errors=%d" % (row[0], row[1] / 1024, row[2] / 2**20, row[3], row[4], len(stats.errors)), flush=True)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    svg(samples, a.out + ".svg", a.warmup)
    after = [r for t, r, *_ in samples if t >= a.warmup]
    med = statistics.median(after) if after else 0
    worst = max((abs(r - med) / med for r in after), default=0) if med else 0
    flat = bool(after) and worst <= 0.10 and not stats.errors
    dur = samples[-1][0] if samples else 0
    summary = (
        f"soak {dur} s, {a.clients} load clients over {a.keys} keys, hostile case every {a.hostile_every:g} s "
        f"({', '.join(f'{k} {v}' for k, v in sorted(stats.hostile.items()))}): {stats.ops} ops "
        f"({stats.ops / max(dur, 1):.0f}/s), {stats.disconnects} abrupt disconnects; RSS after {a.warmup} s warm-up: "
        f"median {med / 1024:.1f} MB, min {min(after, default=0) / 1024:.1f}, max {max(after, default=0) / 1024:.1f}, "
        f"largest deviation {worst * 100:.1f}% -> {'FLAT' if flat else 'NOT FLAT'}; errors: {len(stats.errors)}"
    )
    print(summary)
    for e in stats.errors[:20]:
        print("  ", e)
    if a.results:
        with open(a.results, "a") as f:
            f.write(f"\n### Soak ({datetime.date.today()})\n\n`python3 bench/soak.py --seconds {a.seconds}` (release build, 2 workers): {summary}. "
                    f"Samples: `{a.out}.csv`, plot `{a.out}.svg`.\n")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
