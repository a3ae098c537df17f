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

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

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

_Key = Union[bytes, str]
_Value = Union[bytes, bytearray, memoryview, str, int, float]
_Reply = Any

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


def _ok(reply: _Reply) -> bool:
    return reply is not None and reply in (b"OK", "OK")


def _pairs_to_dict(reply: _Reply) -> Dict[Any, Any]:
    if isinstance(reply, dict):
        return reply
    it = iter(reply)
    return dict(zip(it, it))


class _Commands:
    """Commands built from arguments, shared by Redis (runs them now) and
    Pipeline (queues them). ``_run(args, callback)`` does the one or the
    other."""

    def set(
        self,
        name: _Key,
        value: _Value,
        ex: Any = None,
        px: Any = None,
        nx: bool = False,
        xx: bool = False,
        keepttl: bool = False,
        get: bool = False,
        exat: Any = None,
        pxat: Any = None,
    ) -> Any:
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

    def get(self, name: _Key) -> Any:
        return self._run(["GET", name], None)

    def mget(self, keys: Union[_Key, Iterable[_Key]], *args: _Key) -> Any:
        keys = [keys] if isinstance(keys, (bytes, str)) else list(keys)
        return self._run(["MGET", *keys, *args], None)

    def mset(self, mapping: Mapping[_Key, _Value]) -> Any:
        args = ["MSET"]
        for k, v in mapping.items():
            args += [k, v]
        return self._run(args, _ok)

    def delete(self, *names: _Key) -> Any:
        return self._run(["DEL", *names], None)

    def exists(self, *names: _Key) -> Any:
        return self._run(["EXISTS", *names], None)

    def incr(self, name: _Key, amount: int = 1) -> Any:
        return self._run(["INCRBY", name, amount], None)

    incrby = incr

    def decr(self, name: _Key, amount: int = 1) -> Any:
        return self._run(["DECRBY", name, amount], None)

    decrby = decr

    def expire(self, name: _Key, time: Any) -> Any:
        if hasattr(time, "total_seconds"):
            time = int(time.total_seconds())
        return self._run(["EXPIRE", name, time], bool)

    def ttl(self, name: _Key) -> Any:
        return self._run(["TTL", name], None)

    def pttl(self, name: _Key) -> Any:
        return self._run(["PTTL", name], None)

    def hget(self, name: _Key, key: _Key) -> Any:
        return self._run(["HGET", name, key], None)

    def hset(
        self,
        name: _Key,
        key: Optional[_Key] = None,
        value: Optional[_Value] = None,
        mapping: Optional[Mapping[_Key, _Value]] = None,
        items: Optional[Sequence[Any]] = None,
    ) -> Any:
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

    def hmget(self, name: _Key, keys: Union[_Key, Iterable[_Key]], *args: _Key) -> Any:
        keys = [keys] if isinstance(keys, (bytes, str)) else list(keys)
        return self._run(["HMGET", name, *keys, *args], None)

    def hgetall(self, name: _Key) -> Any:
        return self._run(["HGETALL", name], _pairs_to_dict)

    def hdel(self, name: _Key, *keys: _Key) -> Any:
        return self._run(["HDEL", name, *keys], None)

    def ping(self) -> Any:
        return self._run(["PING"], lambda r: r in (b"PONG", "PONG"))

    def flushdb(self) -> Any:
        return self._run(["FLUSHDB"], _ok)

    def flushall(self) -> Any:
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

    def _run(self, args: List[Any], callback: Optional[Callable[[_Reply], Any]]) -> Any:
        reply = self.execute_command(*args)
        return callback(reply) if callback else reply

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> "Pipeline":
        return Pipeline(self, transaction)

    def close(self) -> None:
        """Connections are pooled and closed with the client; nothing to do."""

    def __enter__(self) -> "Redis":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


StrictRedis = Redis


class Pipeline(_Commands):
    """Commands queued and sent in one write (per server), their replies
    read in one pass. With ``transaction`` (the default, as in redis-py)
    they are wrapped in MULTI/EXEC, which over a pool needs all keys on one
    server."""

    def __init__(self, client: Redis, transaction: bool = True) -> None:
        self._client = client
        self._transaction = transaction
        self._stack = []

    def _run(self, args: List[Any], callback: Optional[Callable[[_Reply], Any]]) -> "Pipeline":
        self._stack.append((args, callback))
        return self

    def execute_command(self, *args: _Value, **options: Any) -> "Pipeline":
        return self._run(list(args), None)

    def __len__(self) -> int:
        return len(self._stack)

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.reset()

    def reset(self) -> None:
        self._stack = []

    def execute(self, raise_on_error: bool = True) -> List[Any]:
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

    def get_multi(self, keys: Iterable[_Key]) -> Dict[Any, bytes]:
        return self.get_many(keys)

    def set_many(self, values: Mapping[_Key, _Value], ttl: int = 0) -> List[Any]:
        """Stores each of {key: value}; the keys that failed to store."""
        return [k for k, v in values.items() if not self.set(k, v, ttl)]

    def delete_many(self, keys: Iterable[_Key]) -> bool:
        for k in keys:
            self.delete(k)
        return True

    def close(self) -> None:
        """Connections are pooled and closed with the client; nothing to do."""
