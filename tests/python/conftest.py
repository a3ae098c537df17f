"""Fixtures: the real tern-server binary on an ephemeral port, driven by redis-py.

The server is started with `--port 0`; its start-up log names the port it got
(`... port=NNNN.`), which is read from its stdout with a deadline instead of
sleeping. Every server is stopped by its PID when its fixture ends.

Environment:
  TERN_BIN           the server binary (default: target/debug/tern-server)
  TERN_TEST_AGAINST  `redis` runs the suite against the reference redis-server
                     instead, to check that a test asserts Redis's behaviour.
"""

import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 20.0

# differential.py is a standalone script; its pytest wrapper is test_differential.py.
collect_ignore = ["differential.py"]


def tern_bin():
    return os.environ.get("TERN_BIN") or str(ROOT / "target" / "debug" / "tern-server")


def against_redis():
    return os.environ.get("TERN_TEST_AGAINST", "") == "redis"


class Server:
    """One server process; `port` is known once `start()` returns."""

    def __init__(self, argv, port=None, name="tern-server"):
        self.argv = argv
        self.port = port
        self.name = name
        self.proc = None
        self.lines = queue.Queue()
        self.log = []

    def start(self):
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        # The pipe is drained for the server's whole life so that its logging
        # can never block on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise RuntimeError(f"{self.name} did not report its port; log:\n" + "\n".join(self.log))
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.stop()
                raise RuntimeError(f"{self.name} exited at start-up; log:\n" + "\n".join(self.log))
            if self.port is None and "port=" in line:
                self.port = int(line.split("port=", 1)[1].split()[0].rstrip("."))
            if self.port is not None and "Ready to accept connections" in line:
                return self

    def _drain(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.log.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 10)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)


def free_port():
    # Only for redis-server, which cannot be told to pick its own port.
    for _ in range(50):
        port = random.randint(20000, 40000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")


def start_server(threads, extra=()):
    if against_redis():
        port = free_port()
        argv = [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no"]
        for i in range(0, len(extra), 2):
            argv += [extra[i], extra[i + 1]]
        return Server(argv, port=port, name="redis-server").start()
    binary = tern_bin()
    if not os.path.exists(binary):
        pytest.exit(f"{binary} not found: run `cargo build` first or set TERN_BIN", returncode=2)
    argv = [binary, "--port", "0", "--threads", str(threads), *extra]
    return Server(argv).start()


@pytest.fixture(scope="session", params=[1, 2], ids=["t1", "t2"])
def server(request):
    srv = start_server(request.param)
    yield srv
    srv.stop()


@pytest.fixture
def r(server):
    """A redis-py client (RESP2, decoded replies) on a freshly flushed server."""
    c = server.client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def rb(server):
    """Like `r`, with raw bytes replies."""
    c = server.client(decode_responses=False)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def r3(server):
    """A RESP3 client (HELLO 3 at connect)."""
    c = server.client(protocol=3)
    c.flushall()
    yield c
    c.close()


@pytest.fixture(scope="session")
def auth_server():
    srv = start_server(1, ["--requirepass", "s3cret"])
    yield srv
    srv.stop()


@pytest.fixture
def raw(server):
    conn = RawConn(server.port)
    assert conn.roundtrip("FLUSHALL") == b"+OK\r\n"
    yield conn
    conn.close()


class RawConn:
    """A plain socket speaking RESP, for asserting exact reply bytes."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def cmd(self, *parts):
        out = [b"*%d\r\n" % len(parts)]
        for p in parts:
            if isinstance(p, str):
                p = p.encode()
            elif isinstance(p, int):
                p = str(p).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(p), p))
        self.send(b"".join(out))

    def read_reply(self):
        """Returns the raw bytes of exactly one reply."""
        while True:
            end = _reply_end(self.buf, 0)
            if end is not None:
                reply, self.buf = self.buf[:end], self.buf[end:]
                return reply
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection; pending: %r" % self.buf)
            self.buf += chunk

    def roundtrip(self, *parts):
        self.cmd(*parts)
        return self.read_reply()


def _reply_end(buf, pos):
    """Index just past the RESP2/RESP3 value starting at `pos`, or None if incomplete."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None
    kind, head = buf[pos:pos + 1], buf[pos + 1:nl]
    after = nl + 2
    if kind in b"+-:_,#(":
        return after
    if kind in b"$=!":
        n = int(head)
        if n < 0:
            return after
        return after + n + 2 if len(buf) >= after + n + 2 else None
    if kind in b"*~>%|":
        n = int(head)
        if n < 0:
            return after
        if kind in b"%|":
            n *= 2
        for _ in range(n):
            after = _reply_end(buf, after)
            if after is None:
                return None
        if kind == b"|":
            return _reply_end(buf, after)
        return after
    raise ValueError("bad RESP type byte %r at %d in %r" % (kind, pos, buf))
