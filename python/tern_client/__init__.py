"""Tern's client: two front doors over one Rust core (tern-client).

``Redis`` follows redis-py (bytes in and out, ``decode_responses``,
``pipeline()``, ``execute_command``); ``CacheClient`` follows meta-memcache
over the memcached meta protocol (``get``, ``multi_get``/``get_many``,
``set``/``add``/``replace``/``cas``, leases and stale-while-revalidate).
Either talks to one server (``host``, ``port``) or to a pool
(``servers=[(host, port), ...]``) spread by a ring that places keys as
meta-memcache (``hashing="md5"``, the default) or libmemcached's ketama
(``hashing="ketama"``) does. Multi-key calls send one batch per server,
all servers at once. The GIL is released while waiting on the network,
so threads sharing one client overlap their I/O.
"""

from . import exceptions
from ._core import Item, MetaCore, RespCore
from .exceptions import (
    AuthenticationError,
    ConnectionError,
    DataError,
    InvalidResponse,
    PoolExhaustedError,
    RedisError,
    ResponseError,
    ServerDownError,
    TernError,
    TimeoutError,
    WatchError,
)

__all__ = [
    "Redis",
    "StrictRedis",
    "Pipeline",
    "CacheClient",
    "Item",
    "exceptions",
    "TernError",
    "RedisError",
    "ConnectionError",
    "TimeoutError",
    "AuthenticationError",
    "ServerDownError",
    "PoolExhaustedError",
    "ResponseError",
    "InvalidResponse",
    "DataError",
    "WatchError",
]


def _ok(reply):
    return reply is not None and reply in (b"OK", "OK")


def _pairs_to_dict(reply):
    if isinstance(reply, dict):
        return reply
    it = iter(reply)
    return dict(zip(it, it))


class _Commands:
    """Commands built from arguments, shared by Redis (runs them now) and
    Pipeline (queues them). ``_run(args, callback)`` does the one or the
    other."""

    def set(self, name, value, ex=None, px=None, nx=False, xx=False, keepttl=False, get=False, exat=None, pxat=None):
        args = ["SET", name, value]
        for flag, v in (("EX", ex), ("PX", px), ("EXAT", exat), ("PXAT", pxat)):
            if v is not None:
                if hasattr(v, "total_seconds"):
                    v = int(v.total_seconds() * (1000 if flag in ("PX", "PXAT") else 1))
                args += [flag, v]
        if nx:
            args.append("NX")
        if xx:
            args.append("XX")
        if keepttl:
            args.append("KEEPTTL")
        if get:
            args.append("GET")
            return self._run(args, None)
        return self._run(args, lambda r: True if _ok(r) else None)

    def get(self, name):
        return self._run(["GET", name], None)

    def mget(self, keys, *args):
        keys = [keys] if isinstance(keys, (bytes, str)) else list(keys)
        return self._run(["MGET", *keys, *args], None)

    def mset(self, mapping):
        args = ["MSET"]
        for k, v in mapping.items():
            args += [k, v]
        return self._run(args, _ok)

    def delete(self, *names):
        return self._run(["DEL", *names], None)

    def exists(self, *names):
        return self._run(["EXISTS", *names], None)

    def incr(self, name, amount=1):
        return self._run(["INCRBY", name, amount], None)

    incrby = incr

    def decr(self, name, amount=1):
        return self._run(["DECRBY", name, amount], None)

    decrby = decr

    def expire(self, name, time):
        if hasattr(time, "total_seconds"):
            time = int(time.total_seconds())
        return self._run(["EXPIRE", name, time], bool)

    def ttl(self, name):
        return self._run(["TTL", name], None)

    def pttl(self, name):
        return self._run(["PTTL", name], None)

    def hget(self, name, key):
        return self._run(["HGET", name, key], None)

    def hset(self, name, key=None, value=None, mapping=None, items=None):
        if key is None and not mapping and not items:
            raise DataError("'hset' with no key value pairs")
        args = ["HSET", name]
        if key is not None:
            args += [key, value]
        for k, v in (mapping or {}).items():
            args += [k, v]
        for p in items or ():
            args += list(p)
        return self._run(args, None)

    def hmget(self, name, keys, *args):
        keys = [keys] if isinstance(keys, (bytes, str)) else list(keys)
        return self._run(["HMGET", name, *keys, *args], None)

    def hgetall(self, name):
        return self._run(["HGETALL", name], _pairs_to_dict)

    def hdel(self, name, *keys):
        return self._run(["HDEL", name, *keys], None)

    def ping(self):
        return self._run(["PING"], lambda r: r in (b"PONG", "PONG"))

    def flushdb(self):
        return self._run(["FLUSHDB"], _ok)

    def flushall(self):
        return self._run(["FLUSHALL"], _ok)


class Redis(RespCore, _Commands):
    """A redis-py-like client. The constructor takes redis-py's arguments
    (host, port, db, password, socket_timeout, socket_connect_timeout,
    decode_responses, username, protocol) and, keyword-only: servers,
    max_connections, pool_timeout, down_for / down_max (seconds a failed
    server is marked down, doubling up to down_max), hashing, reads_miss
    (a down server's reads are misses) and skip_writes (its writes are
    dropped). Timeouts default to 5 s (redis-py waits forever).

    get, mget, mset, delete and execute_command run in Rust; mget, mset and
    delete over a pool send one command per server, all at once.
    """

    def _run(self, args, callback):
        reply = self.execute_command(*args)
        return callback(reply) if callback else reply

    def pipeline(self, transaction=True, shard_hint=None):
        return Pipeline(self, transaction)

    def close(self):
        """Connections are pooled and closed with the client; nothing to do."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


StrictRedis = Redis


class Pipeline(_Commands):
    """Commands queued and sent in one write (per server), their replies
    read in one pass. With ``transaction`` (the default, as in redis-py)
    they are wrapped in MULTI/EXEC, which over a pool needs all keys on one
    server."""

    def __init__(self, client, transaction=True):
        self._client = client
        self._transaction = transaction
        self._stack = []

    def _run(self, args, callback):
        self._stack.append((args, callback))
        return self

    def execute_command(self, *args, **options):
        return self._run(list(args), None)

    def __len__(self):
        return len(self._stack)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.reset()

    def reset(self):
        self._stack = []

    def execute(self, raise_on_error=True):
        stack, self._stack = self._stack, []
        if not stack:
            return []
        replies = self._client._pipeline([a for a, _ in stack], self._transaction)
        out = []
        for (_, callback), reply in zip(stack, replies):
            if isinstance(reply, ResponseError):
                if raise_on_error:
                    raise reply
                out.append(reply)
            else:
                out.append(callback(reply) if callback else reply)
        return out


class CacheClient(MetaCore):
    """A meta-memcache-like client over the memcached meta protocol.

    ``CacheClient(host, port)`` or ``CacheClient(servers=[(host, port), ...])``,
    keyword-only: connect_timeout, timeout (seconds, default 5), max_connections,
    pool_timeout, down_for / down_max, hashing ("md5", meta-memcache's ring,
    or "ketama"), reads_miss (default True: a down server's reads are
    misses, as a cache wants), skip_writes.

    Values are bytes (str is stored as UTF-8, int as its digits) and come
    back as bytes. Keys that memcached would refuse (spaces, control or
    binary bytes) are sent base64-encoded.
    """

    def get_multi(self, keys):
        return self.get_many(keys)

    def set_many(self, values, ttl=0):
        """Stores each of {key: value}; the keys that failed to store."""
        return [k for k, v in values.items() if not self.set(k, v, ttl)]

    def delete_many(self, keys):
        for k in keys:
            self.delete(k)
        return True

    def close(self):
        """Connections are pooled and closed with the client; nothing to do."""
