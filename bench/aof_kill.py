#!/usr/bin/env python3
"""Durability under kill -9 (issue 18's evidence; the test suite runs a
short form, tests/python/test_aof.py): writers record every acknowledged
SET, INCR, HSET and LPUSH with the time of its acknowledgement; tern-server
(`appendonly yes`) is killed with SIGKILL at a random moment, restarted on
the same directory, and every acknowledged write is checked. Repeated
`--kills` times on one growing dataset.

With `--fsync always` no acknowledged write may be lost; with `everysec`
the lost ones are counted, with the age (time from acknowledgement to the
kill) of the oldest lost one, which should stay within about 2 s. A start-up
failure ends the run.

    cargo build --release -p tern-server
    python3 bench/aof_kill.py [--kills 50] [--fsync always|everysec] [--writers 4] [--threads 2]
"""
import argparse
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from servers import Server  # noqa: E402


def start(binary, d, fsync, threads):
    argv = [binary, "--port", "0", "--threads", str(threads), "--dir", d, "--save", "", "--appendonly", "yes",
            "--appendfsync", fsync]
    return Server(argv).start()


def round_(srv, writers, acked, lock, tag, max_run):
    stop = threading.Event()

    def writer(w):
        c = srv.client(socket_timeout=5)
        i = 0
        try:
            while not stop.is_set():
                i += 1
                key = f"{tag}:{w}:{i}"
                c.set(key, i)
                now = time.monotonic()
                with lock:
                    acked["set"].append((key, str(i), now))
                n = c.incr(f"ctr{w}")
                with lock:
                    acked["incr"][w] = (n, time.monotonic())
                c.hset(f"h{w}", key, i)
                with lock:
                    acked["hset"].append((f"h{w}", key, str(i), time.monotonic()))
                n = c.lpush(f"l{w}", key)
                with lock:
                    acked["lpush"][w] = (n, time.monotonic())
        except Exception:
            pass

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    time.sleep(random.uniform(0.1, max_run))
    srv.proc.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    srv.proc.wait(timeout=10)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    return killed


def check(srv, acked, killed):
    """Lost acknowledged writes, and the age at the kill of the oldest."""
    c = srv.client()
    lost, oldest = 0, 0.0
    # Pipelined in chunks: the checks grow with every round.
    for i in range(0, len(acked["set"]), 1000):
        chunk = acked["set"][i:i + 1000]
        p = c.pipeline(transaction=False)
        for k, _, _ in chunk:
            p.get(k)
        for (k, v, at), got in zip(chunk, p.execute()):
            if got != v:
                lost += 1
                oldest = max(oldest, killed - at)
    for i in range(0, len(acked["hset"]), 1000):
        chunk = acked["hset"][i:i + 1000]
        p = c.pipeline(transaction=False)
        for h, f, _, _ in chunk:
            p.hget(h, f)
        for (h, f, v, at), got in zip(chunk, p.execute()):
            if got != v:
                lost += 1
                oldest = max(oldest, killed - at)
    for w, (n, at) in acked["incr"].items():
        if int(c.get(f"ctr{w}") or 0) < n:
            lost += 1
            oldest = max(oldest, killed - at)
    for w, (n, at) in acked["lpush"].items():
        if c.llen(f"l{w}") < n:
            lost += 1
            oldest = max(oldest, killed - at)
    c.close()
    return lost, oldest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--fsync", default="always", choices=["always", "everysec"])
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-run", type=float, default=2.0, help="longest time between start and kill, s")
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "tern-server"))
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="aof-kill-")
    acked = {"set": [], "incr": {}, "hset": [], "lpush": {}}
    lock = threading.Lock()
    total_lost, worst, total_checked = 0, 0.0, 0
    for k in range(a.kills):
        srv = start(a.binary, d, a.fsync, a.threads)
        killed = round_(srv, a.writers, acked, lock, k, a.max_run)
        srv = start(a.binary, d, a.fsync, a.threads)
        try:
            lost, oldest = check(srv, acked, killed)
        finally:
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait(timeout=10)
        checked = len(acked["set"])
        total_checked += checked
        # Lost writes are not counted again: the next round checks what
        # survived from here on.
        if lost:
            acked = {"set": [], "incr": {}, "hset": [], "lpush": {}}
        total_lost += lost
        worst = max(worst, oldest)
        print(f"kill {k + 1}/{a.kills}: {checked} acknowledged SETs (since the start or the last loss) checked, lost {lost}"
              + (f" (oldest {oldest:.3f} s before the kill)" if lost else ""), flush=True)
    print(f"appendfsync {a.fsync}: {a.kills} kills, {total_checked} SET checks, {total_lost} acknowledged writes lost, "
          f"oldest lost {worst:.3f} s before its kill; no start-up failure")
    if a.fsync == "always" and total_lost:
        sys.exit(1)


if __name__ == "__main__":
    main()
