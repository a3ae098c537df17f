"""memcached's debugging and administration commands on Tern's memcached
port (`stats cachedump`, `stats sizes` and `sizes_enable` / `sizes_disable`,
`stats detail`, `lru_crawler`,
`cache_memlimit`, `me`), compared with Debian's memcached 1.6: error lines byte for byte,
dumps line for line once the values that depend on the clock, the CAS
counter and LRU order are normalised. And pymemcache's own integration
suite, run against Tern. Skipped without memcached (the comparisons) or
without pymemcache's tests (the suite)."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servers import start_memcached, start_tern, tern_bin

HAVE_MEMCACHED = shutil.which("memcached") is not None or os.path.exists("/usr/bin/memcached")


@pytest.fixture(scope="module")
def tern():
    srv = start_tern(tern_bin(), 2)
    yield srv.memcache_port()
    srv.stop()


@pytest.fixture(scope="module")
def memcached():
    if not HAVE_MEMCACHED:
        pytest.skip("memcached not installed")
    srv = start_memcached()
    yield srv.port
    srv.stop()


def session(port, lines):
    """The raw reply to each line (with its data block), on one connection."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    out = []
    try:
        for line in lines:
            s.sendall(line + b"\r\n")
            buf = b""
            if line.endswith(b"noreply"):
                out.append(buf)
                continue
            # Every reply here ends with a CRLF line; a dump (and `stats
            # sizes`, not its _enable / _disable) ends with END.
            sizes = line.startswith(b"stats sizes") and not line.startswith(b"stats sizes_")
            while not (buf.endswith(b"\r\n") and (not buf.startswith((b"ITEM", b"key=", b"STAT" if sizes else b"ITEM"))
                                                   or buf.endswith(b"END\r\n"))):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
            out.append(buf)
    finally:
        s.close()
    return out


NORMALISE = [
    (re.compile(rb"exp=\d+"), b"exp=T"),
    (re.compile(rb"la=\d+"), b"la=T"),
    (re.compile(rb"cas=\d+"), b"cas=N"),
    (re.compile(rb"; [1-9]\d* s\]"), b"; T s]"),
]


def normalise(reply):
    for pattern, repl in NORMALISE:
        reply = pattern.sub(repl, reply)
    # Tern lists items in keyspace order, memcached in LRU order.
    body, end = (reply[:-5], reply[-5:]) if reply.endswith(b"END\r\n") else (reply, b"")
    sep = b"\n" if body.startswith(b"key=") else b"\r\n"
    return b"".join(sorted(l + sep for l in body.split(sep) if l)) + end


SETUP = [
    b"flush_all",
    b"set a 5 0 3\r\nabc",
    b"set bb 0 100 5\r\nhello",
    b"set mid 0 0 2000\r\n" + b"m" * 2000,
    b"set big 0 0 600000\r\n" + b"x" * 600000,
    b"get a",
]

LINES = [
    b"stats cachedump 1 0",
    b"stats cachedump 39 0",
    b"stats cachedump 2 0",
    b"stats cachedump 63 0",
    b"stats cachedump 1 0 extra",
    b"stats cachedump",
    b"stats cachedump 1",
    b"stats cachedump x y",
    b"stats cachedump -1 0",
    b"stats cachedump 64 0",
    b"stats sizes",
    b"lru_crawler metadump all",
    b"lru_crawler metadump hash",
    b"lru_crawler metadump 1,16",
    b"lru_crawler metadump 2",
    b"lru_crawler metadump 0",
    b"lru_crawler metadump x",
    b"lru_crawler metadump",
    b"lru_crawler metadump all extra",
    b"lru_crawler",
    b"lru_crawler foo",
    b"lru_crawler crawl all",
    b"lru_crawler crawl 64",
    b"lru_crawler tocrawl x",
    b"lru_crawler tocrawl 10",
    b"lru_crawler sleep 2000000",
    b"lru_crawler sleep 100",
    b"lru_crawler enable",
    b"me a",
    b"me big",
    b"cache_memlimit 100",
    b"cache_memlimit 7",
    b"cache_memlimit 1000000001",
    b"cache_memlimit 4294967296",
    b"cache_memlimit x",
    b"cache_memlimit -1",
    b"cache_memlimit 10 20",
    b"cache_memlimit",
    b"cache_memlimit 1 2 3",
    b"cache_memlimit 64 noreply",
    b"version",
    # stats detail: per-prefix counters, dumped in memcached's bucket order.
    b"stats detail dump",
    b"stats detail",
    b"stats detail foo",
    b"stats detail on",
    b"set user:1 0 0 1\r\nx",
    b"set sess:9 0 0 1\r\nx",
    b"set abc:3 0 0 1\r\nx",
    b"set ab:3 0 0 1\r\nx",
    b"set :x 0 0 1\r\nx",
    b"add user:1 0 0 1\r\nx",
    b"get user:1 user:2 sess:1 k:1 x:1 nocolon",
    b"gat 10 sess:9",
    b"touch user:1 10",
    b"delete user:1",
    b"delete zz:1",
    b"mg sess:9 v",
    b"ms q:1 1\r\nx",
    b"md q:1",
    b"stats detail dump",
    b"stats detail off",
    b"set user:5 0 0 1\r\nx",
    b"stats detail dump",
    b"stats reset",
    b"stats detail dump",
]


def settled(port):
    """memcached's cachedump lists its classes' COLD LRUs, which new items
    reach when its LRU maintainer moves them: wait for that. (A class with
    one small item may keep it HOT for good: class 16's `mid` is only
    compared through metadump, which walks every LRU.)"""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        dumps = session(port, [b"stats cachedump 1 0", b"stats cachedump 39 0"])
        if all(d.count(b"ITEM") == n for d, n in zip(dumps, (2, 1))):
            return
        time.sleep(0.05)
    raise AssertionError("memcached's items never reached its COLD LRUs")


def test_same_replies_as_memcached(tern, memcached):
    session(memcached, SETUP)
    session(tern, SETUP)
    settled(memcached)
    want = session(memcached, LINES)
    got = session(tern, LINES)
    diffs = [(l[:60], normalise(w), normalise(g)) for l, w, g in zip(LINES, want, got) if normalise(w) != normalise(g)]
    # `version` differs by design (Tern's memcached version string is the
    # same, so it must match too).
    assert not diffs, "\n".join("%r\n  memcached: %r\n  tern:      %r" % d for d in diffs)


def test_metadump_while_the_crawler_is_disabled(tern):
    # memcached stops its crawler thread asynchronously, so a metadump or a
    # crawl right after `lru_crawler disable` answers either this or "ERROR
    # an unknown error happened" there, by timing; Tern answers what
    # memcached does once the thread is gone.
    replies = session(tern, [b"lru_crawler disable", b"lru_crawler metadump all", b"lru_crawler crawl 1", b"lru_crawler enable"])
    assert replies == [b"OK\r\n", b"CLIENT_ERROR lru crawler disabled\r\n", b"CLIENT_ERROR lru crawler disabled\r\n", b"OK\r\n"]


def test_cache_memlimit_sets_maxmemory(server):
    c = server.client()
    port = server.memcache_port()
    assert session(port, [b"cache_memlimit 50"]) == [b"OK\r\n"]
    try:
        assert c.config_get("maxmemory") == {"maxmemory": str(50 << 20)}
        assert session(port, [b"stats settings"])[0].startswith(b"STAT maxbytes %d\r\n" % (50 << 20))
    finally:
        c.config_set("maxmemory", 0)


def test_pymemcache_integration_suite(tern):
    try:
        import pymemcache.test
    except ImportError:
        pytest.skip("pymemcache's tests are not installed")
    tests = Path(pymemcache.test.__file__).parent / "test_integration.py"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests), "-m", "integration",
         "--server", "127.0.0.1", "--port", str(tern)],
        cwd=tests.parent, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout.splitlines()[-1]


def test_shutdown_only_when_enabled(tern):
    # Off by default, whatever the mode, as memcached without -A.
    assert session(tern, [b"shutdown", b"shutdown graceful", b"shutdown x"]) == [b"ERROR: shutdown not enabled\r\n"] * 3
    srv = start_tern(tern_bin(), 1, ["--memcache-enable-shutdown", "yes"])
    try:
        port = srv.memcache_port()
        assert session(port, [b"shutdown x"]) == [b"CLIENT_ERROR invalid shutdown mode\r\n"]
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"shutdown\r\n")
        assert s.recv(100) == b""
        s.close()
        assert srv.proc.wait(timeout=10) == 0
    finally:
        srv.stop()


def test_shutdown_modes_as_memcached_a():
    if not HAVE_MEMCACHED:
        pytest.skip("memcached not installed")
    srv = start_memcached(extra=["-A"])
    try:
        assert session(srv.port, [b"shutdown x"]) == [b"CLIENT_ERROR invalid shutdown mode\r\n"]
    finally:
        srv.stop()


# memcached counts in `stats sizes` the items stored since `stats
# sizes_enable`, by 32-byte steps of their size; the status lines of
# `sizes_enable` / `sizes_disable` come without END.
SIZES = [
    b"flush_all",
    b"stats sizes",
    b"set a 0 0 1\r\nx",
    b"stats sizes_enable",
    b"stats sizes_enable",
    b"stats sizes",
    b"set b 0 0 10\r\n0123456789",
    b"set c 5 0 100\r\n" + b"y" * 100,
    b"set dd 0 0 10\r\n0123456789",
    b"stats sizes",
    b"delete b",
    b"stats sizes",
    b"set a 0 0 3\r\nxyz",
    b"ms m1 2000\r\n" + b"z" * 2000,
    b"stats sizes",
    b"stats sizes_disable",
    b"stats sizes_disable",
    b"stats sizes",
    b"stats sizes_disablex",
    b"stats SIZES_ENABLE",
    b"stats sizes_enable x",
    b"stats sizes x",
    b"set e 0 0 1\r\ne",
    b"stats sizes",
    b"stats sizes_disable",
    b"stats sizes",
]


def test_sizes_histogram_as_memcached(tern, memcached):
    want = session(memcached, SIZES)
    got = session(tern, SIZES)
    diffs = [(l[:60], w, g) for l, w, g in zip(SIZES, want, got) if w != g]
    assert not diffs, "\n".join("%r\n  memcached: %r\n  tern:      %r" % d for d in diffs)
    assert got[9] == b"STAT 96 2\r\nSTAT 192 1\r\nEND\r\n"
