"""tern_client (python/): both front doors against tern-server, redis-server
and memcached, over one server and over pools, with threads.

The package is built and installed by scripts/test.sh (`pip install
./python`); run alone, this module is skipped when it is not installed.
"""

import os
import shutil
import socket
import threading
import time

import pytest

from servers import start_memcached, start_redis, start_tern, tern_bin

tern_client = pytest.importorskip("tern_client", reason="pip install ./python first (scripts/test.sh does)")


@pytest.fixture(scope="module")
def tern():
    srv = start_tern(tern_bin(), 2)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def redis_srv():
    binary = shutil.which("redis-server")
    if not binary:
        pytest.skip("redis-server not installed")
    srv = start_redis(binary)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def memcached_srv():
    if not (shutil.which("memcached") or os.path.exists("/usr/bin/memcached")):
        pytest.skip("memcached not installed")
    srv = start_memcached()
    yield srv
    srv.stop()


@pytest.fixture(params=["tern", "redis"])
def resp_port(request):
    srv = request.getfixturevalue("tern" if request.param == "tern" else "redis_srv")
    return srv.port


@pytest.fixture(params=["tern", "memcached"])
def mc_port(request):
    if request.param == "tern":
        return request.getfixturevalue("tern").memcache_port()
    return request.getfixturevalue("memcached_srv").port


@pytest.fixture
def r(resp_port):
    c = tern_client.Redis(port=resp_port, host="127.0.0.1")
    c.flushall()
    return c


@pytest.fixture
def mc(mc_port):
    return tern_client.CacheClient("127.0.0.1", mc_port)


# ---- Redis ---------------------------------------------------------------


def test_strings(r):
    assert r.set("k", b"v\x00\xff") is True
    assert r.get("k") == b"v\x00\xff"
    assert r.get(b"missing") is None
    assert r.set("k", "x", nx=True) is None
    assert r.set("new", "x", xx=True) is None
    assert r.set("k", "y", xx=True) is True
    assert r.set("e", 1, ex=100) is True
    assert 99 <= r.ttl("e") <= 100
    assert r.set("p", 2.5, px=50_000) is True
    assert r.get("p") == b"2.5"
    assert 49_000 <= r.pttl("p") <= 50_000
    assert r.ttl("k") == -1
    assert r.expire("k", 10) is True
    assert r.expire("nope", 10) is False
    assert r.incr("n") == 1
    assert r.incr("n", 41) == 42
    assert r.decr("n", 2) == 40
    assert r.mset({"a": 1, b"b": b"2"}) is True
    assert r.mget(["a", "b", "missing", "a"]) == [b"1", b"2", None, b"1"]
    assert r.mget("a", "b") == [b"1", b"2"]
    assert r.delete("a", "b", "missing") == 2
    assert r.exists("a", "k") == 1
    big = os.urandom(100_000)
    r.set("big", big)
    assert r.get("big") == big


def test_hashes(r):
    assert r.hset("h", "f", "v") == 1
    assert r.hset("h", mapping={"g": 1, "h": b"\xff"}) == 2
    assert r.hget("h", "f") == b"v"
    assert r.hget("h", "nope") is None
    assert r.hmget("h", ["f", "nope", "g"]) == [b"v", None, b"1"]
    assert r.hgetall("h") == {b"f": b"v", b"g": b"1", b"h": b"\xff"}
    assert r.hgetall("none") == {}


def test_unknown_options_are_refused():
    with pytest.raises(TypeError):
        tern_client.Redis(retry_on_timeout=True)
    with pytest.raises(ValueError):
        tern_client.CacheClient(hashing="crc32")


def test_errors_are_typed(r):
    r.set("s", "x")
    with pytest.raises(tern_client.ResponseError, match="WRONGTYPE"):
        r.hget("s", "f")
    with pytest.raises(tern_client.ResponseError, match="not an integer"):
        r.incr("s")
    with pytest.raises(tern_client.DataError):
        r.set("k", True)
    assert issubclass(tern_client.ResponseError, tern_client.RedisError)
    # The connection is fine after an error reply.
    assert r.get("s") == b"x"


def test_execute_command_and_decode(resp_port):
    r = tern_client.Redis(host="127.0.0.1", port=resp_port, decode_responses=True)
    r.flushall()
    assert r.execute_command("SET", "k", "é") == "OK"
    assert r.get("k") == "é"
    assert r.mget(["k", "x"]) == ["é", None]
    assert r.execute_command("STRLEN", "k") == 2
    assert r.execute_command("PING") == "PONG"
    assert r.ping() is True
    r.hset("h", "a", "1")
    assert r.hgetall("h") == {"a": "1"}
    r.execute_command("SET", "bin", b"\xff")
    with pytest.raises(UnicodeDecodeError):
        r.get("bin")


def test_resp3_and_db(resp_port):
    r = tern_client.Redis(host="127.0.0.1", port=resp_port, protocol=3, db=2)
    r.flushall()
    r.hset("h", "f", "v")
    assert r.execute_command("HGETALL", "h") == {b"f": b"v"}
    assert r.hgetall("h") == {b"f": b"v"}
    assert tern_client.Redis(host="127.0.0.1", port=resp_port).get("h") is None


def test_pipeline(r):
    with r.pipeline(transaction=False) as p:
        p.set("a", 1).incr("a").get("a").hget("a", "x").mget(["a", "nope"])
        with pytest.raises(tern_client.ResponseError, match="WRONGTYPE"):
            p.execute()
    p = r.pipeline(transaction=False)
    p.set("a", 1).incr("a").hget("a", "x").get("a")
    res = p.execute(raise_on_error=False)
    assert res[:2] == [True, 2]
    assert isinstance(res[2], tern_client.ResponseError)
    assert res[3] == b"2"
    p = r.pipeline()
    p.set("t", "x").get("t").execute_command("INCR", "c")
    assert p.execute() == [True, b"x", 1]
    assert p.execute() == []


def test_same_answers_as_redis_py(resp_port):
    import redis

    ours = tern_client.Redis(host="127.0.0.1", port=resp_port)
    theirs = redis.Redis(host="127.0.0.1", port=resp_port)
    theirs.flushall()
    calls = [
        ("set", ("k", "v")),
        ("set", ("k", "w", None, None, True)),
        ("get", ("k",)),
        ("mget", (["k", "x"],)),
        ("incr", ("n", 5)),
        ("expire", ("n", 100)),
        ("ttl", ("n",)),
        ("hset", ("h", "f", "v")),
        ("hgetall", ("h",)),
        ("hmget", ("h", ["f", "g"])),
        ("delete", ("k", "n", "zz")),
    ]
    for name, args in calls:
        theirs.flushall()
        want = [getattr(theirs, n)(*a) for n, a in calls[: calls.index((name, args)) + 1]]
        theirs.flushall()
        got = [getattr(ours, n)(*a) for n, a in calls[: calls.index((name, args)) + 1]]
        assert got == want, name


def test_auth(tern):
    srv = start_tern(tern_bin(), 1, ["--requirepass", "s3cret"])
    try:
        with pytest.raises(tern_client.AuthenticationError):
            tern_client.Redis(host="127.0.0.1", port=srv.port, password="wrong").get("k")
        with pytest.raises(tern_client.ResponseError, match="NOAUTH"):
            tern_client.Redis(host="127.0.0.1", port=srv.port).get("k")
        ok = tern_client.Redis(host="127.0.0.1", port=srv.port, password="s3cret")
        assert ok.set("k", "v") and ok.get("k") == b"v"
        ok3 = tern_client.Redis(host="127.0.0.1", port=srv.port, password="s3cret", protocol=3)
        assert ok3.get("k") == b"v"
    finally:
        srv.stop()


# ---- CacheClient -----------------------------------------------------------


def test_cache_basics(mc):
    assert mc.set("a", b"1") is True
    assert mc.get("a") == b"1"
    assert mc.get("missing") is None
    assert mc.add("a", "x") is False
    assert mc.add("b", "x", ttl=100) is True
    assert mc.replace("nope", "x") is False
    assert mc.replace("b", "y") is True
    assert mc.append("b", "z") and mc.get("b") == b"yz"
    assert mc.set("c", "é", flags=5)
    item = mc.get_item("c", ttl=True)
    assert (item.value, item.flags, item.ttl) == ("é".encode(), 5, -1)
    assert mc.cas("c", "new", item.cas + 1000) is False
    assert mc.cas("c", "new", item.cas) is True
    assert mc.get("c") == b"new"
    assert mc.touch("c", 100) is True
    assert mc.touch("nope", 100) is False
    assert mc.delete("c") is True
    assert mc.delete("c") is False
    assert mc.incr("n") is None
    assert mc.incr("n", 5, initial=10) == 10
    assert mc.incr("n", 5) == 15
    assert mc.decr("n", 100) == 0
    big = os.urandom(100_000)
    assert mc.set(b"key with space", big)
    assert mc.get(b"key with space") == big
    with pytest.raises(tern_client.DataError):
        mc.get("x" * 300)


def test_cache_multi_get(mc):
    mc.set("k1", "1")
    mc.set("k3", "3")
    keys = ["k1", "k2", "k3", b"k1", "k4"]
    assert mc.multi_get(keys) == {"k1": b"1", "k2": None, "k3": b"3", b"k1": b"1", "k4": None}
    assert mc.get_many(keys) == {"k1": b"1", "k3": b"3", b"k1": b"1"}
    assert mc.get_many([]) == {}


def test_cache_leases_and_stale_while_revalidate(mc):
    mc.delete("L")
    first = mc.get_item("L", lease_ttl=30)
    assert first.win and first.value == b""
    second = mc.get_item("L", lease_ttl=30)
    assert second.lease_pending and not second.win
    assert mc.set("L", "v1", cas=first.cas)
    assert mc.get("L") == b"v1"
    assert mc.invalidate("L", stale_ttl=30)
    a = mc.get_item("L", lease_ttl=30)
    b = mc.get_item("L", lease_ttl=30)
    assert (a.value, a.stale, a.win) == (b"v1", True, True)
    assert b.stale and b.lease_pending and not b.win
    assert mc.set("L", "v2", cas=a.cas, invalidate=True)
    c = mc.get_item("L")
    assert (c.value, c.stale) == (b"v2", False)


def test_cache_interoperates_with_pymemcache(mc_port):
    from pymemcache.client.base import Client

    pm = Client(("127.0.0.1", mc_port))
    ours = tern_client.CacheClient("127.0.0.1", mc_port)
    assert pm.set("from-pm", b"\x00abc", noreply=False)
    assert ours.get("from-pm") == b"\x00abc"
    ours.set("from-us", b"xyz", flags=3)
    assert pm.get("from-us") == b"xyz"


# ---- pools -----------------------------------------------------------------


@pytest.fixture(scope="module")
def terns():
    srvs = [start_tern(tern_bin(), 1) for _ in range(4)]
    yield srvs
    for s in srvs:
        s.stop()


def test_ring_matches_uhashring():
    from uhashring import HashRing

    servers = [("127.0.0.1", 11211 + i) for i in range(5)]
    names = [f"{h}:{p}" for h, p in servers]
    ours_md5 = tern_client.CacheClient(servers=servers)
    ours_ketama = tern_client.CacheClient(servers=servers, hashing="ketama")
    md5 = HashRing(sorted(names))
    ketama = HashRing(names, hash_fn="ketama")
    for i in range(3000):
        key = f"key:{i}:{'x' * (i % 17)}"
        assert names[ours_md5.server_index(key)] == md5.get_node(key), key
        assert names[ours_ketama.server_index(key)] == ketama.get_node(key), key


def test_pool_places_keys_as_meta_memcache_does(terns):
    from meta_memcache import CacheClient, ServerAddress, connection_pool_factory_builder

    servers = [("127.0.0.1", s.memcache_port()) for s in terns]
    theirs = CacheClient.cache_client_from_servers(
        servers=[ServerAddress(h, p) for h, p in servers],
        connection_pool_factory_fn=connection_pool_factory_builder(),
    )
    ours = tern_client.CacheClient(servers=servers)
    singles = [tern_client.CacheClient(h, p) for h, p in servers]
    keys = [f"placed:{i}" for i in range(200)]
    for k in keys:
        theirs.set(k, b"v", ttl=100)
    for k in keys:
        holders = [i for i, s in enumerate(singles) if s.get(k) is not None]
        assert holders == [ours.server_index(k)], k
    got = ours.multi_get(keys + ["absent"])
    assert all(got[k] is not None for k in keys) and got["absent"] is None
    assert len(got) == len(keys) + 1


def test_redis_pool_splits_multi_key_commands(terns):
    servers = [("127.0.0.1", s.port) for s in terns]
    pool = tern_client.Redis(servers=servers)
    singles = [tern_client.Redis(host=h, port=p) for h, p in servers]
    keys = [f"k{i}" for i in range(100)]
    pool.mset({k: k for k in keys[::2]})
    assert pool.mget(keys) == [k.encode() if i % 2 == 0 else None for i, k in enumerate(keys)]
    for k in keys[::2]:
        assert [i for i, s in enumerate(singles) if s.get(k)] == [pool.server_index(k)]
    p = pool.pipeline(transaction=False)
    for k in keys[:10]:
        p.get(k)
    assert p.execute() == [k.encode() if i % 2 == 0 else None for i, k in enumerate(keys[:10])]
    together = [k for k in keys if pool.server_index(k) == pool.server_index(keys[0])][:3]
    t = pool.pipeline()
    for k in together:
        t.set(k, "t")
    assert t.execute() == [True] * len(together)
    apart = pool.pipeline()
    apart.set(keys[0], 1)
    apart.set(next(k for k in keys if pool.server_index(k) != pool.server_index(keys[0])), 1)
    with pytest.raises(tern_client.DataError, match="one server"):
        apart.execute()
    assert pool.delete(*keys) == 50 + len([k for k in together if int(k[1:]) % 2])


# ---- threads, the GIL, failures --------------------------------------------


def test_threads_share_clients(resp_port, mc_port):
    r = tern_client.Redis(host="127.0.0.1", port=resp_port, max_connections=4)
    mc = tern_client.CacheClient("127.0.0.1", mc_port, max_connections=4)
    errors = []

    def work(t):
        try:
            for i in range(300):
                k = f"t{t}:{i % 13}"
                v = f"{t}-{i}".encode()
                r.set(k, v)
                mc.set(k, v)
                assert r.mget([k, "absent"]) == [v, None]
                assert mc.multi_get([k, "absent"]) == {k: v, "absent": None}
        except Exception as e:  # reported below, with the thread's number
            errors.append((t, repr(e)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _slow_server(delay):
    """A RESP server in this process answering every request with +OK after
    `delay` seconds, one thread per connection. It can only answer while a
    client call is in flight if that call released the GIL."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)

    def conn(s):
        with s:
            while s.recv(65536):
                time.sleep(delay)
                s.sendall(b"+OK\r\n")

    def accept():
        while True:
            try:
                s, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=conn, args=(s,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return ls


def test_gil_is_released_while_waiting():
    ls = _slow_server(0.3)
    try:
        r = tern_client.Redis(host="127.0.0.1", port=ls.getsockname()[1], max_connections=10)
        threads = [threading.Thread(target=r.execute_command, args=("PING",)) for _ in range(10)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Ten 0.3 s calls one after another would take 3 s.
        assert time.monotonic() - start < 1.5
    finally:
        ls.close()


def test_timeout_and_down():
    ls = _slow_server(2.0)
    try:
        r = tern_client.Redis(host="127.0.0.1", port=ls.getsockname()[1], socket_timeout=0.2, down_for=30)
        with pytest.raises(tern_client.TimeoutError) as e:
            r.get("k")
        assert isinstance(e.value, TimeoutError)
        with pytest.raises(tern_client.ServerDownError):
            r.get("k")
    finally:
        ls.close()


def test_killed_server_is_a_miss_for_the_cache_and_an_error_for_redis():
    srvs = [start_tern(tern_bin(), 1) for _ in range(3)]
    try:
        mc_servers = [("127.0.0.1", s.memcache_port()) for s in srvs]
        cache = tern_client.CacheClient(servers=mc_servers, down_for=30)
        red = tern_client.Redis(servers=[("127.0.0.1", s.port) for s in srvs], down_for=30)
        keys = [f"k{i}" for i in range(60)]
        for k in keys:
            cache.set(k, k)
            red.set(k, k)
        victim = 2
        srvs[victim].proc.kill()
        srvs[victim].proc.wait()
        got = cache.multi_get(keys)
        for k in keys:
            assert (got[k] is None) == (cache.server_index(k) == victim), k
        with pytest.raises(tern_client.ConnectionError):
            cache.set(next(k for k in keys if cache.server_index(k) == victim), "x")
        with pytest.raises(tern_client.ConnectionError):
            red.mget(keys)
        live = [k for k in keys if red.server_index(k) != victim]
        assert red.mget(live) == [k.encode() for k in live]
        lenient = tern_client.Redis(servers=[("127.0.0.1", s.port) for s in srvs], reads_miss=True, skip_writes=True)
        assert lenient.mget(keys) == [None if red.server_index(k) == victim else k.encode() for k in keys]
        assert lenient.mset({k: "new" for k in keys}) is True
        assert lenient.get(keys[0]) == (None if red.server_index(keys[0]) == victim else b"new")
    finally:
        for s in srvs:
            s.stop()
