"""The memcached text and meta protocols, through real clients: pymemcache
(text protocol) and meta-memcache (meta protocol, its Rust socket core,
batched multi_get), plus the cross-protocol view from redis-py.

The memcache port is read from the server's start-up log
(`... memcache port=NNNN.`). With TERN_TEST_AGAINST=memcached the same
client tests run against Debian's memcached binary instead, to check that a
test asserts memcached's behaviour.
"""

import os
import socket

import pytest
from meta_memcache import (
    CacheClient,
    Key,
    LeasePolicy,
    RecachePolicy,
    ServerAddress,
    SetMode,
    StalePolicy,
    connection_pool_factory_builder,
)
from pymemcache.client.base import Client as PyClient
from pymemcache.exceptions import MemcacheClientError, MemcacheIllegalInputError, MemcacheServerError, MemcacheUnknownCommandError

from conftest import against_redis
from helpers import wait_until
from servers import start_memcached

AGAINST_MEMCACHED = os.environ.get("TERN_TEST_AGAINST", "") == "memcached"


@pytest.fixture(scope="module")
def memcached():
    """Debian's memcached, when the suite runs against it."""
    srv = start_memcached()
    yield srv.port
    srv.stop()


@pytest.fixture
def mc_port(request, server):
    if against_redis():
        pytest.skip("redis-server has no memcached protocol")
    if AGAINST_MEMCACHED:
        port = request.getfixturevalue("memcached")
    else:
        port = server.memcache_port()
    # Wait for the flush's reply: with noreply it could still be in flight
    # on one worker while the test's first write runs on another.
    c = PyClient(("127.0.0.1", port))
    assert c.flush_all(noreply=False) is True
    c.close()
    return port


@pytest.fixture
def py(mc_port):
    # Replies awaited, so that a later read on another connection (RESP,
    # meta) sees the write.
    c = PyClient(("127.0.0.1", mc_port), connect_timeout=2, timeout=2, default_noreply=False)
    yield c
    c.close()


@pytest.fixture
def meta(mc_port):
    pool = connection_pool_factory_builder(recv_timeout=2)
    c = CacheClient.cache_client_from_servers(servers=[ServerAddress(host="127.0.0.1", port=mc_port)], connection_pool_factory_fn=pool)
    yield c


# -- pymemcache (text protocol) -------------------------------------------

def test_py_set_get_delete(py):
    assert py.set("a", b"1") is True
    assert py.get("a") == b"1"
    assert py.get("missing") is None
    assert py.get_many(["a", "missing", "b"]) == {"a": b"1"}
    py.set_many({"b": b"2", "c": b"3"})
    assert py.get_many(["a", "b", "c"]) == {"a": b"1", "b": b"2", "c": b"3"}
    assert py.delete("a", noreply=False) is True
    assert py.delete("a", noreply=False) is False
    assert py.get("a") is None


def test_py_flags_add_replace_append(py):
    py.set("f", b"v", flags=42)
    assert py.get("f", default=None) == b"v"
    assert py.raw_command(b"get f").startswith(b"VALUE f 42 1")
    assert py.add("f", b"x", noreply=False) is False
    assert py.add("g", b"x", noreply=False) is True
    assert py.replace("missing", b"x", noreply=False) is False
    assert py.replace("g", b"y", noreply=False) is True
    assert py.append("g", b"z", noreply=False) is True
    assert py.prepend("g", b"<", noreply=False) is True
    assert py.get("g") == b"<yz"
    assert py.append("missing", b"z", noreply=False) is False


def test_py_cas(py):
    py.set("c", b"1")
    value, cas = py.gets("c")
    assert value == b"1"
    assert py.cas("c", b"2", cas) is True
    assert py.cas("c", b"3", cas) is False
    assert py.get("c") == b"2"
    assert py.cas("missing", b"x", cas) is None
    got = py.gets_many(["c", "missing"])
    assert list(got) == ["c"] and got["c"][0] == b"2"


def test_py_incr_decr_touch(py):
    py.set("n", b"10")
    assert py.incr("n", 5) == 15
    assert py.decr("n", 100) == 0
    assert py.incr("missing", 1) is None
    py.set("s", b"abc")
    with pytest.raises(MemcacheClientError):
        py.incr("s", 1)
    assert py.touch("n", 100, noreply=False) is True
    assert py.touch("missing", 100, noreply=False) is False
    # memcached pads a shorter decr result with spaces, in place.
    assert py.get("n") == b"0 "


def test_py_expiry(py):
    py.set("e", b"x", expire=-1)
    assert py.get("e") is None
    py.set("e", b"x", expire=1)
    assert py.get("e") == b"x"
    wait_until(lambda: py.get("e") is None, timeout=5)


def test_py_errors(py):
    with pytest.raises(MemcacheIllegalInputError):
        py.set("k" * 251, b"x")
    with pytest.raises(MemcacheUnknownCommandError):
        py.raw_command(b"bogus", b"\r\n")
    assert py.version() == b"1.6.18"


def test_py_stats_flush(py):
    py.set("a", b"1")
    py.get("a")
    stats = py.stats()
    assert stats[b"cmd_get"] >= 1 and stats[b"curr_items"] >= 1
    assert b"item_size_max" in py.stats("settings")
    assert py.flush_all(noreply=False) is True
    assert py.get("a") is None


def test_stats_count_meta_commands_and_refused_stores(py, mc_port):
    """`stats` has memcached's rusage, connection, meta, refused-store and
    byte counters, in memcached's order, and they move as memcached's do."""
    order = ["pid", "rusage_user", "rusage_system", "max_connections", "total_connections", "rejected_connections",
             "cmd_touch", "cmd_meta", "get_hits", "touch_misses", "store_too_large", "store_no_memory",
             "bytes_read", "bytes_written", "limit_maxbytes", "accepting_conns", "threads"]
    names = [k.decode() for k in py.stats()]
    assert [n for n in names if n in order] == order
    before = py.stats()
    s = socket.create_connection(("127.0.0.1", mc_port), timeout=5)
    try:
        s.sendall(b"ms mk 1\r\nx\r\nmg mk v\r\nme mk\r\nme nokey\r\nmn\r\n")
        got = b""
        while not got.endswith(b"MN\r\n"):
            got += s.recv(4096)
        assert got.startswith(b"HD\r\nVA 1\r\nx\r\nME mk ") and got.endswith(b"EN\r\nMN\r\n"), got
    finally:
        s.close()
    with pytest.raises(MemcacheServerError, match="too large"):
        py.set("big", b"x" * (2 << 20))
    after = py.stats()
    # memcached's `cmd_meta` counts `me` (its first meta command) only.
    assert after[b"cmd_meta"] - before[b"cmd_meta"] == 2
    assert after[b"store_too_large"] - before[b"store_too_large"] == 1
    # pymemcache closes its connection after the error, so only part of
    # the refused data may have been read.
    assert after[b"bytes_read"] > before[b"bytes_read"] + 50
    assert after[b"accepting_conns"] == 1


@pytest.mark.skipif(AGAINST_MEMCACHED, reason="Tern's policy decides it; memcached's default is on")
def test_stats_settings_evictions_follow_the_policy(py, r):
    # Under `noeviction` a full cache refuses writes, as memcached's -M
    # does, and says so; a policy that evicts says `on`.
    assert py.stats("settings")[b"evictions"] == b"off"
    r.config_set("maxmemory-policy", "allkeys-lru")
    try:
        assert py.stats("settings")[b"evictions"] == b"on"
    finally:
        r.config_set("maxmemory-policy", "noeviction")


# -- meta-memcache (meta protocol) ----------------------------------------

def test_meta_set_get_delete(meta):
    assert meta.set("k", "value", ttl=100) is True
    assert meta.get("k") == "value"
    assert meta.get("missing") is None
    assert meta.set(Key("bin\x01key"), b"raw", ttl=0) is True
    assert meta.get(Key("bin\x01key")) == b"raw"
    assert meta.delete("k") is True
    assert meta.get("k") is None


def test_meta_multi_get(meta):
    keys = [f"mk{i}" for i in range(100)]
    for i, k in enumerate(keys[:60]):
        assert meta.set(k, i, ttl=0)
    got = meta.multi_get(keys)
    assert len(got) == 100
    for i, k in enumerate(keys):
        assert got[Key(k)] == (i if i < 60 else None)


def test_meta_cas_and_modes(meta):
    assert meta.set("c", 1, ttl=0)
    value, cas = meta.get_cas("c")
    assert value == 1 and cas
    assert meta.set("c", 2, ttl=0, cas_token=cas) is True
    assert meta.set("c", 3, ttl=0, cas_token=cas) is False
    assert meta.get("c") == 2
    assert meta.set("c", 9, ttl=0, set_mode=SetMode.ADD) is False
    assert meta.set("new", 9, ttl=0, set_mode=SetMode.ADD) is True
    assert meta.set("none", 9, ttl=0, set_mode=SetMode.REPLACE) is False


def test_meta_delta_and_touch(meta):
    assert meta.delta("n", 1) is False
    assert meta.delta_initialize_and_get("n", 5, initial_value=10, initial_ttl=100) == 10
    assert meta.delta_and_get("n", 5) == 15
    assert meta.delta("n", -20) is True
    # memcached pads a shorter result with spaces, in place.
    assert meta.get("n") == "0 "
    assert meta.touch("n", 100) is True
    assert meta.touch("missing", 100) is False


def test_meta_lease_and_stale(meta):
    policy = LeasePolicy(miss_retries=1, miss_retry_wait=0.001, wait_backoff_factor=1, miss_max_retry_wait=0.001)
    # The first client to miss wins the lease (an empty stub is created).
    assert meta.get_or_lease("lease", policy) is None
    value, cas = meta.get_cas("lease")
    assert meta.set("lease", "filled", ttl=100, cas_token=cas) is True
    assert meta.get("lease") == "filled"
    # Invalidate marks stale; the stale value is still served.
    assert meta.set("st", "old", ttl=100)
    assert meta.invalidate("st") is True
    # The first reader of a stale item wins the recache: a miss for it.
    assert meta.get("st", recache_policy=RecachePolicy()) is None


def test_meta_stale_policy_set(meta):
    assert meta.set("sp", "v1", ttl=100)
    _, cas = meta.get_cas("sp")
    assert meta.set("sp", "v2", ttl=100)
    # An older CAS with the stale policy is accepted but marked stale.
    assert meta.set("sp", "late", ttl=100, cas_token=cas, stale_policy=StalePolicy(mark_stale_on_cas_mismatch=True)) is True


# -- cross-protocol -------------------------------------------------------

def test_cross_protocol(r, py, meta):
    if AGAINST_MEMCACHED:
        pytest.skip("memcached has no RESP")
    py.set("shared", b"from-memcache", flags=3)
    assert r.get("shared") == "from-memcache"
    assert r.type("shared") == "string"
    r.set("fromresp", "hello")
    assert py.get("fromresp") == b"hello"
    r.set("num", 41)
    assert py.incr("num", 1) == 42
    assert r.get("num") == "42"
    py.set("ttl", b"x", expire=100)
    assert 99 <= r.ttl("ttl") <= 100
    r.delete("shared")
    assert py.get("shared") is None
