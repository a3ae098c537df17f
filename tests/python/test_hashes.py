"""Hash commands as a redis-py user calls them, after redis-py's own hash
tests (test_commands.py / test_hash.py), including field expiration."""

import shutil
import time

import pytest
import redis
from redis.commands.core import HashDataPersistOptions

import differential
from conftest import against_redis
from helpers import wait_until
from servers import tern_bin

# Field expiration, HGETDEL/HGETEX/HSETEX and HSCAN NOVALUES are Redis 7.4 /
# 8.0; the reference server installed here is 7.0.
needs_74 = pytest.mark.skipif(against_redis(), reason="Redis 7.4+ command; reference server may be 7.0")


def test_hset_hget_hgetall(r):
    assert r.hset("h", "a", "1") == 1
    assert r.hset("h", mapping={"b": "2", "c": "3"}) == 2
    assert r.hset("h", "a", "10", mapping={"d": "4"}) == 1
    assert r.hset("h", items=["e", "5", "f", "6"]) == 2
    assert r.hget("h", "a") == "10"
    assert r.hget("h", "zz") is None
    assert r.hget("nokey", "a") is None
    assert r.hgetall("h") == {"a": "10", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}
    assert r.hgetall("nokey") == {}
    with pytest.raises(redis.DataError):
        r.hset("h")


def test_hmset_hmget(r):
    with pytest.warns(DeprecationWarning):
        assert r.hmset("h", {"a": "1", "b": "2"}) is True
    assert r.hmget("h", "a", "zz", "b") == ["1", None, "2"]
    assert r.hmget("h", ["b", "a"]) == ["2", "1"]
    assert r.hmget("nokey", "a", "b") == [None, None]


def test_hsetnx_hexists_hlen_hstrlen(r):
    assert r.hsetnx("h", "a", "1") == 1
    assert r.hsetnx("h", "a", "2") == 0
    assert r.hget("h", "a") == "1"
    assert r.hexists("h", "a") is True
    assert r.hexists("h", "b") is False
    assert r.hlen("h") == 1
    assert r.hlen("nokey") == 0
    r.hset("h", "long", "0123456789")
    assert r.hstrlen("h", "long") == 10
    assert r.hstrlen("h", "zz") == 0


def test_hdel_removes_key_with_last_field(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert r.hdel("h", "a", "zz") == 1
    assert r.hdel("h", "b", "c") == 2
    assert r.exists("h") == 0
    assert r.hdel("nokey", "a") == 0


def test_hincrby_hincrbyfloat(r):
    assert r.hincrby("h", "n") == 1
    assert r.hincrby("h", "n", 41) == 42
    assert r.hincrby("h", "n", -50) == -8
    assert r.hincrbyfloat("h", "f") == 1.0
    assert r.hincrbyfloat("h", "f", 1.5) == 2.5
    assert r.hincrbyfloat("h", "n", 0.5) == -7.5
    r.hset("h", "s", "abc")
    with pytest.raises(redis.ResponseError, match="hash value is not an integer"):
        r.hincrby("h", "s", 1)
    with pytest.raises(redis.ResponseError, match="hash value is not a float"):
        r.hincrbyfloat("h", "s", 1)
    r.hset("h", "big", str(2**63 - 1))
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        r.hincrby("h", "big", 1)


def test_hkeys_hvals_order(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert r.hkeys("h") == ["a", "b", "c"]
    assert r.hvals("h") == ["1", "2", "3"]
    assert r.hkeys("nokey") == []


def test_hrandfield(r):
    assert r.hrandfield("nokey") is None
    assert r.hrandfield("nokey", 2) == []
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})
    assert r.hrandfield("h") in "abcde"
    assert len(r.hrandfield("h", 2)) == 2
    assert len(set(r.hrandfield("h", 3))) == 3
    assert sorted(r.hrandfield("h", 10)) == ["a", "b", "c", "d", "e"]
    # Negative counts repeat fields.
    assert len(r.hrandfield("h", -10)) == 10
    pairs = r.hrandfield("h", 2, withvalues=True)
    assert len(pairs) == 4
    for f, v in zip(pairs[::2], pairs[1::2]):
        assert r.hget("h", f) == v
    assert r.hrandfield("h", 0) == []


def test_hrandfield_resp3_pairs(r3):
    r3.hset("h", mapping={"a": "1"})
    assert r3.hrandfield("h", 1, withvalues=True) == [["a", "1"]]
    assert r3.hgetall("h") == {"a": "1"}


@needs_74
def test_hscan(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    cursor, data = r.hscan("h")
    assert cursor == 0
    assert data == {"a": "1", "b": "2", "c": "3"}
    _, data = r.hscan("h", match="a")
    assert data == {"a": "1"}
    _, keys = r.hscan("h", no_values=True)
    assert sorted(keys) == ["a", "b", "c"]
    assert r.hscan("nokey") == (0, {})


@needs_74
def test_hscan_iter_large_hash(r):
    r.hset("h", mapping={f"f{i}": str(i) for i in range(1000)})
    assert r.object("encoding", "h") == "hashtable"
    seen = dict(r.hscan_iter("h", count=37))
    assert len(seen) == 1000
    assert seen["f500"] == "500"
    assert sorted(r.hscan_iter("h", match="f99?", no_values=True)) == [f"f99{i}" for i in range(10)]


def test_encoding_and_config(r):
    r.hset("small", "a", "1")
    assert r.object("encoding", "small") == "listpack"
    assert r.config_get("hash-max-listpack-entries") == {"hash-max-listpack-entries": "512"}
    assert r.config_get("hash-max-ziplist-value") == {"hash-max-ziplist-value": "64"}
    try:
        r.config_set("hash-max-listpack-entries", 2)
        r.hset("h", mapping={"a": "1", "b": "2"})
        assert r.object("encoding", "h") == "listpack"
        r.hset("h", "c", "3")
        assert r.object("encoding", "h") == "hashtable"
        r.hset("v", "a", "x" * 65)
        assert r.object("encoding", "v") == "hashtable"
    finally:
        r.config_set("hash-max-listpack-entries", 512)


@needs_74
def test_wrongtype(r):
    r.set("s", "x")
    r.hset("h", "a", "1")
    for call in (
        lambda: r.hset("s", "a", "1"),
        lambda: r.hget("s", "a"),
        lambda: r.hgetall("s"),
        lambda: r.hexpire("s", 10, "a"),
        lambda: r.httl("s", "a"),
        lambda: r.hgetex("s", "a"),
        lambda: r.hsetex("s", "a", "b"),
        lambda: r.get("h"),
        lambda: r.incr("h"),
    ):
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
            call()


def test_generic_commands(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.type("h") == "hash"
    assert r.copy("h", "h2") is True
    r.hset("h2", "a", "x")
    assert r.hget("h", "a") == "1"
    assert r.rename("h2", "h3") is True
    assert r.hgetall("h3") == {"a": "x", "b": "2"}
    assert r.move("h3", 1) is True
    assert r.exists("h3") == 0
    assert list(r.scan_iter(_type="hash")) == ["h"]
    assert r.expire("h", 100) is True
    assert r.ttl("h") == 100
    assert r.delete("h") == 1


# ---- field expiration (Redis 7.4 / 8.0) ----


@needs_74
def test_hexpire_family(r):
    r.hset("h", mapping={"f1": "v1", "f2": "v2", "f3": "v3"})
    assert r.hexpire("nokey", 10, "a", "b") == [-2, -2]
    assert r.hexpire("h", 100, "f1", "zz") == [1, -2]
    assert r.hexpire("h", 100, "f1", "f2", nx=True) == [0, 1]
    assert r.hexpire("h", 200, "f1", "f3", xx=True) == [1, 0]
    assert r.hpexpire("h", 150_000, "f1", "f2", gt=True) == [0, 1]
    assert r.hpexpire("h", 120_000, "f1", "f2", "f3", lt=True) == [1, 1, 1]
    at = int(time.time()) + 1000
    assert r.hexpireat("h", at, "f1") == [1]
    assert r.hexpiretime("h", "f1") == [at]
    assert r.hpexpireat("h", at * 1000 + 5, "f1") == [1]
    assert r.hpexpiretime("h", "f1", "zz") == [at * 1000 + 5, -2]
    assert 0 < r.httl("h", "f2")[0] <= 120
    assert 0 < r.hpttl("h", "f2")[0] <= 120_000
    assert r.hpersist("h", "f1", "f1", "zz") == [1, -1, -2]
    assert r.httl("h", "f1") == [-1]
    assert r.hexpire("h", 0, "f1") == [2]
    assert r.hexists("h", "f1") is False
    with pytest.raises(redis.ResponseError, match="invalid expire time, must be >= 0"):
        r.hexpire("h", -1, "f2")


@needs_74
def test_hset_discards_field_ttl_and_hincrby_keeps_it(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hexpire("h", 100, "a", "b")
    r.hset("h", "a", "5")
    assert r.hincrby("h", "b", 1) == 3
    assert r.httl("h", "a", "b") == [-1, 100]
    assert r.object("encoding", "h") == "listpackex"


@needs_74
def test_fields_expire_lazily_and_actively(r):
    def counts():
        st = r.info("stats")
        return st["expired_subkeys"], st["expired_subkeys_active"]
    all0, active0 = counts()
    r.hset("h", mapping={"keep": "1", "gone": "2"})
    r.hpexpire("h", 20, "gone")
    wait_until(lambda: r.hget("h", "gone") is None)
    assert r.hgetall("h") == {"keep": "1"}
    assert r.hlen("h") == 1
    # Only the background cycle touches this one; DBSIZE does not look it up.
    r.hset("bg", mapping={"a": "1", "b": "2"})
    r.hpexpire("bg", 20, "a", "b")
    wait_until(lambda: r.dbsize() == 1)
    assert r.exists("bg") == 0
    assert r.type("bg") == "none"
    # Three fields expired; the two of "bg" by the active cycle ("gone" by
    # whichever came first, the cycle or the HGET).
    all1, active1 = counts()
    assert all1 - all0 == 3
    assert active1 - active0 in (2, 3)
    r.config_resetstat()
    assert counts() == (0, 0)


@needs_74
def test_hgetdel(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert r.hgetdel("h", "a", "zz") == ["1", None]
    assert r.hgetall("h") == {"b": "2", "c": "3"}
    assert r.hgetdel("h", "b", "c") == ["2", "3"]
    assert r.exists("h") == 0
    assert r.hgetdel("nokey", "a") == [None]


@needs_74
def test_hgetex(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.hgetex("h", "a", "zz") == ["1", None]
    assert r.httl("h", "a") == [-1]
    assert r.hgetex("h", "a", ex=100) == ["1"]
    assert r.httl("h", "a") == [100]
    assert r.hgetex("h", "a", px=50_000) == ["1"]
    assert 0 < r.hpttl("h", "a")[0] <= 50_000
    assert r.hgetex("h", "a", persist=True) == ["1"]
    assert r.httl("h", "a") == [-1]
    assert r.hgetex("h", "a", "b", pxat=1) == ["1", "2"]
    assert r.exists("h") == 0
    assert r.hgetex("nokey", "a") == [None]


@needs_74
def test_hsetex(r):
    assert r.hsetex("h", "a", "1") == 1
    assert r.hsetex("h", mapping={"a": "2", "b": "3"}, ex=100) == 1
    assert r.httl("h", "a", "b") == [100, 100]
    assert r.hsetex("h", "a", "4", keepttl=True) == 1
    assert r.httl("h", "a") == [100]
    assert r.hsetex("h", "a", "5") == 1
    assert r.httl("h", "a") == [-1]
    assert r.hsetex("h", mapping={"a": "x", "c": "y"}, data_persist_option=HashDataPersistOptions.FNX) == 0
    assert r.hsetex("h", mapping={"c": "y", "d": "z"}, data_persist_option=HashDataPersistOptions.FNX) == 1
    assert r.hsetex("h", mapping={"a": "x", "e": "y"}, data_persist_option=HashDataPersistOptions.FXX) == 0
    assert r.hsetex("h", mapping={"a": "x", "c": "y"}, data_persist_option=HashDataPersistOptions.FXX, px=5000) == 1
    assert r.hgetall("h") == {"a": "x", "b": "3", "c": "y", "d": "z"}
    assert r.hsetex("nokey", "a", "1", data_persist_option=HashDataPersistOptions.FXX) == 0
    assert r.exists("nokey") == 0
    assert r.hsetex("past", "a", "1", exat=1) == 1
    assert r.exists("past") == 0


@needs_74
def test_field_commands_errors(r):
    r.hset("h", "a", "1")
    with pytest.raises(redis.ResponseError, match="Parameter `numFields` should be greater than 0"):
        r.execute_command("HEXPIRE", "h", 10, "FIELDS", 0, "a")
    with pytest.raises(redis.ResponseError, match="The `numfields` parameter must match the number of arguments"):
        r.execute_command("HTTL", "h", "FIELDS", 2, "a")
    with pytest.raises(redis.ResponseError, match="Mandatory argument FIELDS is missing"):
        r.execute_command("HPERSIST", "h", "FIELD", 1, "a")
    with pytest.raises(redis.ResponseError, match="Number of fields must be a positive integer"):
        r.execute_command("HGETDEL", "h", "FIELDS", -1, "a")
    with pytest.raises(redis.ResponseError, match="Only one of FXX or FNX"):
        r.execute_command("HSETEX", "h", "FNX", "FXX", "FIELDS", 1, "a", "b")
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'hpexpire' command"):
        r.execute_command("HPEXPIRE", "h", 2**48, "FIELDS", 1, "a")


# ---- raw replies against the reference redis-server (commands Redis 7.0 has) ----

HASH_CASES = [
    ("hash-basic", r"""
        HSET h a 1 b 2 c 3
        HSET h a 10 d 4 d 5
        HSET h a
        HMSET h e 6
        HMSET h e
        HSETNX h a x
        HSETNX h z 26
        HGET h a
        HGET h nope
        HGET nokey a
        HMGET h a nope b
        HMGET nokey a b
        %HGETALL h
        HGETALL nokey
        ~HKEYS h
        ~HVALS h
        HLEN h
        HLEN nokey
        HEXISTS h a
        HEXISTS h nope
        HSTRLEN h a
        HSTRLEN h nope
        HDEL h a nope b
        HDEL nokey a
        HSET 'bin\x00k' 'f\x00' 'v\r\n'
        HGET 'bin\x00k' 'f\x00'
    """),
    ("hash-incr", r"""
        HINCRBY h n 5
        HINCRBY h n -7
        HINCRBY h n x
        HINCRBY h n 9223372036854775807
        HSET h s abc
        HINCRBY h s 1
        HINCRBYFLOAT h s 1
        HINCRBYFLOAT h f 1.5
        HINCRBYFLOAT h f -0.1
        HINCRBYFLOAT h f abc
        HINCRBYFLOAT h f inf
        HINCRBYFLOAT h f 1e5000
        HINCRBYFLOAT h f 3.0e3
        HSET h big 1e4930
        HINCRBYFLOAT h big 1e4930
        HGET h f
    """),
    ("hash-wrongtype", r"""
        SET s x
        HSET h a 1
        HSET s a 1
        HGET s a
        HGETALL s
        HINCRBY s a 1
        HRANDFIELD s
        HSCAN s 0
        GET h
        APPEND h x
        INCR h
        MGET h s
        TYPE h
    """),
    ("hash-encoding", r"""
        HSET h a 1
        OBJECT ENCODING h
        CONFIG SET hash-max-listpack-entries 2
        HSET h b 2
        OBJECT ENCODING h
        HSET h c 3
        OBJECT ENCODING h
        HDEL h a b c
        EXISTS h
        CONFIG SET hash-max-listpack-entries 512
        CONFIG SET hash-max-ziplist-value 3
        HSET v a 123
        OBJECT ENCODING v
        HSET v b 1234
        OBJECT ENCODING v
        HSET w abcd 1
        OBJECT ENCODING w
        CONFIG SET hash-max-listpack-value 64
    """),
    ("hash-randfield-scan", r"""
        HRANDFIELD nokey
        HRANDFIELD nokey 3
        HSET h a 1 b 2 c 3
        HRANDFIELD h 0
        HRANDFIELD h 3
        HRANDFIELD h 10 WITHVALUES
        ?HRANDFIELD h
        ?HRANDFIELD h -5
        ?HRANDFIELD h -5 WITHVALUES
        HRANDFIELD h 1 WITHVALUE
        HRANDFIELD h 1 WITHVALUES x
        HRANDFIELD h x
        HSCAN h 0
        HSCAN h 0 MATCH b*
        HSCAN h 0 COUNT 0
        HSCAN h 0 COUNT x
        HSCAN h 0 foo
        HSCAN h x
        HSCAN nokey 0 COUNT 0
        HSCAN h 0 MATCH
    """),
    ("hash-generic", r"""
        HSET h a 1 b 2
        COPY h h2
        HSET h2 a x
        HGET h a
        RENAME h2 h3
        %HGETALL h3
        MOVE h3 1
        EXISTS h3
        SCAN 0 TYPE hash
        EXPIRE h 100
        TTL h
        DEL h
        EXISTS h
    """),
]


@pytest.fixture(scope="module")
def pair():
    if shutil.which("redis-server") is None or against_redis():
        pytest.skip("redis-server not on PATH")
    p = differential.Pair(tern_bin(), threads=2)
    yield p
    p.stop()


@pytest.mark.parametrize("name,text", HASH_CASES, ids=[c[0] for c in HASH_CASES])
def test_same_raw_replies_as_redis(pair, name, text):
    diffs = pair.compare(name, text)
    assert not diffs, "\n" + differential.format_diffs(name, diffs)
