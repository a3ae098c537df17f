"""Helpers for test_hostile.py: raw sockets with a deadline on every read,
the server's resident memory, and the check run after every hostile case.

A case runs inside `with target.case():`. On entry nothing happens beyond
what `Target` did at start-up (sentinel keys written through RESP, RSS
baseline taken). On exit what the case changed with `config_set` is put
back, and, if the case itself passed, it is followed by the same three
checks, whatever it did:

  1. a fresh RESP connection gets +PONG (and a fresh memcached connection
     gets VERSION), and no connection of the case is left on the server;
  2. the server's VmRSS is back under `baseline + RSS_SLACK`, polled for up
     to RSS_SETTLE seconds;
  3. the sentinel keys written before the case still hold their values.
"""

import contextlib
import os
import resource
import shutil
import socket
import time

from resp import RawConn
from servers import start_memcached

# Every read of every socket in the suite gives up after this long.
IO_TIMEOUT = 10.0
# Resident memory a case may leave behind, over the baseline taken when the
# server started. The cases push 7 MB to 100 MB through the server (1M-arg
# commands, 100 MB lines, 5,000 connections, 200 MB of unread replies); what
# stays resident afterwards is the allocator's cached pages and per-thread
# caches, a few MB. 64 MB is well above that noise and below the transient
# peak of the large cases, so a case that keeps its buffers fails.
RSS_SLACK = 64 << 20
# How long freed memory may take to leave RSS: tern-server's jemalloc purges
# dirty pages over 2 s (dirty_decay_ms:2000) from a background thread;
# three times that leaves room for a loaded 2-core machine.
RSS_SETTLE = 6.0


def raise_nofile(want):
    """Raises this process's open-files limit (servers started afterwards
    inherit it); returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def rss(pid):
    """The process's resident set size in bytes (VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


class Wire:
    """One TCP connection, raw bytes, a deadline on every read."""

    def __init__(self, port, timeout=IO_TIMEOUT):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()

    def send(self, data):
        """Sends everything; False if the server closed the connection first."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def read_until_close(self, timeout=IO_TIMEOUT):
        """Everything the server sends until it closes the connection; fails
        if it is still open after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        data, self.buf = self.buf, b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"connection still open after {timeout}s; got {data[:200]!r}")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return data
            except socket.timeout:
                continue
            if not chunk:
                return data
            data += chunk

    def read_until(self, suffix, timeout=IO_TIMEOUT):
        """Reads until what arrived ends with `suffix`; returns all of it.
        Fails if the server closes first or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while not self.buf.endswith(suffix):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {suffix!r} after {timeout}s; got {self.buf[-200:]!r}")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise AssertionError(f"closed before {suffix!r}; got {self.buf[-200:]!r}")
            self.buf += chunk
        data, self.buf = self.buf, b""
        return data


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        time.sleep(0.01)


class Target:
    """A started server plus what the after-case check needs."""

    SENTINELS = {
        b"hostile:sentinel:plain": b"value",
        b"hostile:sentinel:binary": bytes(range(256)) * 4,
        b"hostile:sentinel:large": os.urandom(300_000),
        b"hostile:sentinel:int": b"12345",
    }
    HASH = b"hostile:sentinel:hash"
    HASH_FIELDS = {b"f%d" % i: b"v%d" % i for i in range(20)}

    def __init__(self, srv, memcache=True, password=None):
        self.srv = srv
        self.password = password
        self.port = srv.port
        self.pid = srv.proc.pid
        self.mc_port = srv.memcache_port() if memcache else None
        self._restore = {}
        c = self.resp()
        try:
            for k, v in self.SENTINELS.items():
                assert c.roundtrip("SET", k, v) == b"+OK\r\n"
            c.cmd("HSET", self.HASH, *[x for kv in self.HASH_FIELDS.items() for x in kv])
            assert c.read_reply() == b":%d\r\n" % len(self.HASH_FIELDS)
        finally:
            c.close()
        self.baseline = rss(self.pid)

    def rss(self):
        return rss(self.pid)

    def resp(self):
        """A RESP connection, authenticated if the server wants a password."""
        c = RawConn(self.port)
        if self.password is not None:
            assert c.roundtrip("AUTH", self.password) == b"+OK\r\n"
        return c

    def info(self, section, field, conn=None):
        """An integer field of INFO (on `conn` if given, else on a
        connection of its own)."""
        c = conn or self.resp()
        try:
            reply = c.roundtrip("INFO", section)
        finally:
            if conn is None:
                c.close()
        for line in reply.split(b"\r\n"):
            if line.startswith(field.encode() + b":"):
                return int(line.split(b":", 1)[1])
        raise AssertionError(f"no {field} in INFO {section}")

    def config_set(self, name, value):
        """CONFIG SET, put back at the end of the case."""
        c = self.resp()
        try:
            old = c.roundtrip("CONFIG", "GET", name)
            parts = old.split(b"\r\n")
            assert parts[0] == b"*2", old
            self._restore.setdefault(name, parts[4])
            assert c.roundtrip("CONFIG", "SET", name, value) == b"+OK\r\n"
        finally:
            c.close()

    def connected_clients(self):
        return self.info("clients", "connected_clients")

    @contextlib.contextmanager
    def case(self):
        try:
            yield self
        finally:
            # Even after a failure: the next case may share the server.
            if self._restore and self.srv.proc.poll() is None:
                self._restore_config()
        self.check()

    def _restore_config(self):
        c = self.resp()
        try:
            for name, value in self._restore.items():
                assert c.roundtrip("CONFIG", "SET", name, value) == b"+OK\r\n"
            self._restore.clear()
        finally:
            c.close()

    def check(self):
        """The after-case checks (module docstring)."""
        assert self.srv.proc.poll() is None, "the server exited:\n" + "\n".join(self.srv.log[-20:])
        with Wire(self.port) as w:
            if self.password is None:
                w.send(b"PING\r\n")
                assert w.read_until(b"\r\n") == b"+PONG\r\n"
            else:
                w.send(b"AUTH %s\r\nPING\r\n" % self.password.encode())
                assert w.read_until(b"+PONG\r\n") == b"+OK\r\n+PONG\r\n"
        if self.mc_port is not None:
            with Wire(self.mc_port) as w:
                w.send(b"version\r\n")
                assert w.read_until(b"\r\n").startswith(b"VERSION ")
        c = self.resp()
        try:
            for k, v in self.SENTINELS.items():
                assert c.roundtrip("GET", k) == b"$%d\r\n%s\r\n" % (len(v), v), f"sentinel {k!r} changed"
            for f, v in self.HASH_FIELDS.items():
                assert c.roundtrip("HGET", self.HASH, f) == b"$%d\r\n%s\r\n" % (len(v), v)
            assert c.roundtrip("HLEN", self.HASH) == b":%d\r\n" % len(self.HASH_FIELDS)
        finally:
            c.close()
        # Only the INFO connection itself: the case's connections are gone.
        wait_for(lambda: self.connected_clients() == 1, RSS_SETTLE, "connections of the case still open")
        bound = self.baseline + RSS_SLACK
        deadline = time.monotonic() + RSS_SETTLE
        while True:
            now = self.rss()
            if now <= bound:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"RSS {now >> 20} MB after the case, bound {bound >> 20} MB "
                    f"(baseline {self.baseline >> 20} MB + {RSS_SLACK >> 20} MB)"
                )
            time.sleep(0.05)


def memcached_bin():
    return shutil.which("memcached") or ("/usr/bin/memcached" if os.path.exists("/usr/bin/memcached") else None)


def start_memcached_with(*extra):
    """memcached on a free loopback port with extra flags."""
    return start_memcached(memcached_bin(), extra)
