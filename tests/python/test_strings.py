"""String commands as a redis-py user calls them."""

import time

import pytest
import redis

from helpers import wait_until


def test_set_get(r):
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.get("missing") is None
    assert r.set("k", "") is True
    assert r.get("k") == ""


def test_binary_values(rb):
    blob = bytes(range(256)) * 4
    rb.set(b"bin\x00key", blob)
    assert rb.get(b"bin\x00key") == blob
    assert rb.strlen(b"bin\x00key") == 1024


def test_set_ex_px(r):
    r.set("k", "v", ex=100)
    assert 99 <= r.ttl("k") <= 100
    r.set("k", "v", px=100000)
    assert 99000 <= r.pttl("k") <= 100000
    r.set("k", "v")
    assert r.ttl("k") == -1


def test_set_exat_pxat(r):
    at = int(time.time()) + 1000
    r.set("k", "v", exat=at)
    assert r.expiretime("k") == at
    r.set("k", "v", pxat=at * 1000 + 123)
    assert r.pexpiretime("k") == at * 1000 + 123


def test_set_px_expires(r):
    r.set("k", "v", px=30)
    wait_until(lambda: r.get("k") is None)
    assert r.exists("k") == 0


def test_set_nx_xx(r):
    assert r.set("k", "1", nx=True) is True
    assert r.set("k", "2", nx=True) is None
    assert r.get("k") == "1"
    assert r.set("k", "3", xx=True) is True
    assert r.get("k") == "3"
    assert r.set("other", "x", xx=True) is None
    assert r.exists("other") == 0


def test_set_keepttl(r):
    r.set("k", "v", ex=100)
    r.set("k", "w", keepttl=True)
    assert r.get("k") == "w"
    assert 90 <= r.ttl("k") <= 100
    r.set("k", "x")
    assert r.ttl("k") == -1


def test_set_get_option(r):
    assert r.set("k", "a", get=True) is None
    assert r.set("k", "b", get=True) == "a"
    assert r.get("k") == "b"
    # NX and GET together (allowed since 7.0): returns the old value, does not write.
    assert r.set("k", "c", nx=True, get=True) == "b"
    assert r.get("k") == "b"
    assert r.set("new", "c", xx=True, get=True) is None
    assert r.exists("new") == 0


def test_set_errors(r):
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "NX", "XX")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "EX", "10", "PX", "100")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "KEEPTTL", "EX", "10")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "BOGUS")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "EX")
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'set' command$"):
        r.set("k", "v", ex=0)
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'set' command$"):
        r.execute_command("SET", "k", "v", "PX", "-5")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("SET", "k", "v", "EX", "1.5")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'set' command$"):
        r.execute_command("SET", "k")
    assert r.exists("k") == 0


def test_mget_mset(r):
    assert r.mset({"a": "1", "b": "2", "c": "3"}) is True
    assert r.mget("a", "b", "missing", "c") == ["1", "2", None, "3"]
    assert r.mget(["a"]) == ["1"]
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'mset' command$"):
        r.execute_command("MSET", "a", "1", "b")


def test_msetnx(r):
    assert r.msetnx({"a": "1", "b": "2"}) is True
    assert r.msetnx({"b": "x", "c": "3"}) is False
    assert r.mget("a", "b", "c") == ["1", "2", None]


def test_mset_clears_ttl(r):
    r.set("a", "1", ex=100)
    r.mset({"a": "2"})
    assert r.ttl("a") == -1


def test_incr_decr(r):
    assert r.incr("n") == 1
    assert r.incr("n", 10) == 11
    assert r.incrby("n", -20) == -9
    assert r.decr("n") == -10
    assert r.decrby("n", 5) == -15
    assert r.get("n") == "-15"
    r.set("n", "  1")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.incr("n")
    r.set("n", "abc")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.incr("n")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.incrby("x", "1.5")


def test_incr_overflow(r):
    r.set("n", str(2**63 - 1))
    with pytest.raises(redis.ResponseError, match="^increment or decrement would overflow$"):
        r.incr("n")
    r.set("n", str(-(2**63)))
    with pytest.raises(redis.ResponseError, match="^increment or decrement would overflow$"):
        r.decr("n")
    assert r.get("n") == str(-(2**63))
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.incrby("n", str(2**63))
    # DECRBY of LLONG_MIN cannot be negated.
    with pytest.raises(redis.ResponseError, match="^decrement would overflow$"):
        r.decrby("z", str(-(2**63)))


def test_incr_keeps_ttl(r):
    r.set("n", "1", ex=100)
    r.incr("n")
    assert 90 <= r.ttl("n") <= 100


def test_incrbyfloat(r):
    assert r.incrbyfloat("f", 10.5) == 10.5
    assert r.incrbyfloat("f", 0.1) == pytest.approx(10.6)
    assert r.get("f") == "10.6"
    r.set("f", "5.0e3")
    assert r.incrbyfloat("f", "2.0e2") == 5200
    assert r.get("f") == "5200"
    r.set("f", "abc")
    with pytest.raises(redis.ResponseError, match="^value is not a valid float$"):
        r.incrbyfloat("f", 1)
    with pytest.raises(redis.ResponseError, match="^value is not a valid float$"):
        r.incrbyfloat("g", "x")
    r.set("f", "1")
    with pytest.raises(redis.ResponseError, match="^increment would produce NaN or Infinity$"):
        r.incrbyfloat("f", "inf")
    assert r.get("f") == "1"


def test_append_strlen(r):
    assert r.append("k", "Hello") == 5
    assert r.append("k", " World") == 11
    assert r.get("k") == "Hello World"
    assert r.strlen("k") == 11
    assert r.strlen("missing") == 0
    r.set("n", 12)
    assert r.append("n", "3") == 3
    assert r.incr("n") == 124


def test_getrange(r):
    r.set("k", "This is a string")
    assert r.getrange("k", 0, 3) == "This"
    assert r.getrange("k", -3, -1) == "ing"
    assert r.getrange("k", 0, -1) == "This is a string"
    assert r.getrange("k", 10, 100) == "string"
    assert r.getrange("k", 5, 3) == ""
    assert r.getrange("k", 100, 200) == ""
    assert r.getrange("k", -100, 3) == "This"
    assert r.getrange("missing", 0, -1) == ""
    r.set("n", 12345)
    assert r.getrange("n", 1, 2) == "23"
    assert r.execute_command("SUBSTR", "k", 0, 3) == "This"


def test_setrange(r):
    r.set("k", "Hello World")
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == "Hello Redis"
    assert r.setrange("pad", 5, "x") == 6
    assert r.get("pad") == "\x00\x00\x00\x00\x00x"
    assert r.setrange("empty", 3, "") == 0
    assert r.exists("empty") == 0
    assert r.setrange("k", 0, "") == 11
    with pytest.raises(redis.ResponseError, match="^offset is out of range$"):
        r.setrange("k", -1, "x")
    with pytest.raises(redis.ResponseError, match=r"^string exceeds maximum allowed size \(proto-max-bulk-len\)$"):
        r.setrange("k", 512 * 1024 * 1024, "x")


def test_getex(r):
    assert r.getex("missing") is None
    r.set("k", "v")
    assert r.getex("k") == "v"
    assert r.ttl("k") == -1
    assert r.getex("k", ex=100) == "v"
    assert 90 <= r.ttl("k") <= 100
    assert r.getex("k", px=50000) == "v"
    assert 40000 <= r.pttl("k") <= 50000
    at = int(time.time()) + 500
    assert r.getex("k", exat=at) == "v"
    assert r.expiretime("k") == at
    assert r.getex("k", pxat=at * 1000 + 7) == "v"
    assert r.pexpiretime("k") == at * 1000 + 7
    assert r.getex("k", persist=True) == "v"
    assert r.ttl("k") == -1
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'getex' command$"):
        r.getex("k", ex=0)
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("GETEX", "k", "EX", "10", "PERSIST")


def test_getdel(r):
    r.set("k", "v")
    assert r.getdel("k") == "v"
    assert r.exists("k") == 0
    assert r.getdel("k") is None


def test_getset_setnx_setex(r):
    assert r.getset("k", "1") is None
    assert r.getset("k", "2") == "1"
    assert r.setnx("k", "3") is False
    assert r.setnx("j", "3") is True
    assert r.setex("e", 100, "v") is True
    assert 90 <= r.ttl("e") <= 100
    assert r.psetex("p", 100000, "v") is True
    assert 90000 <= r.pttl("p") <= 100000
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'setex' command$"):
        r.setex("e", 0, "v")


def test_lcs(r):
    r.mset({"key1": "ohmytext", "key2": "mynewtext"})
    assert r.lcs("key1", "key2") == "mytext"
    assert r.lcs("key1", "key2", len=True) == 6
    assert r.lcs("key1", "missing") == ""
    res = r.lcs("key1", "key2", idx=True)
    assert res == ["matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]
    res = r.lcs("key1", "key2", idx=True, minmatchlen=4, withmatchlen=True)
    assert res == ["matches", [[[4, 7], [5, 8], 4]], "len", 6]
    with pytest.raises(redis.ResponseError, match="^If you want both the length and indexes, please just use IDX.$"):
        r.execute_command("LCS", "key1", "key2", "LEN", "IDX")


def test_object_encoding(r):
    r.set("i", "12345")
    r.set("e", "hello")
    r.set("big", "x" * 45)
    r.set("neg0", "-0")
    assert r.object("encoding", "i") == "int"
    assert r.object("encoding", "e") == "embstr"
    assert r.object("encoding", "big") == "raw"
    assert r.object("encoding", "neg0") == "embstr"
    r.append("e", "!")
    assert r.object("encoding", "e") == "raw"
    assert r.object("encoding", "missing") is None


def test_set_conditions(r):
    """Redis 8.4's compare-and-set: IFEQ/IFNE on the value, IFDEQ/IFDNE on
    its DIGEST (redis-py 6.4 has no keywords for them yet)."""
    r.set("k", "hello")
    assert r.execute_command("SET", "k", "v1", "IFEQ", "other") is None
    assert r.execute_command("SET", "k", "v1", "IFEQ", "hello") is True
    assert r.execute_command("SET", "k", "v2", "IFNE", "v1") is None
    # (redis-py reads SET's reply as a boolean, GET's old value too.)
    r.execute_command("SET", "k", "v2", "IFNE", "x", "GET")
    assert r.get("k") == "v2"
    digest = r.execute_command("DIGEST", "k")
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert r.execute_command("SET", "k", "v3", "IFDNE", digest) is None
    assert r.execute_command("SET", "k", "v3", "IFDEQ", digest.upper(), "EX", 100) is True
    assert r.get("k") == "v3" and 0 < r.ttl("k") <= 100
    with pytest.raises(redis.ResponseError, match="must be exactly 16 hexadecimal characters"):
        r.execute_command("SET", "k", "v", "IFDEQ", "abc")
    # A missing key: only the negative conditions hold.
    assert r.execute_command("SET", "new", "v", "IFEQ", "v") is None
    assert r.execute_command("SET", "new", "v", "IFNE", "v") is True
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SET", "k", "v", "NX", "IFEQ", "v")
    r.hset("h", "f", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.execute_command("SET", "h", "v", "IFNE", "v")


def test_digest_is_xxh3_of_the_string_form(r):
    r.set("k", "hello")
    assert r.execute_command("DIGEST", "k") == "9555e8555c62dcfd"
    r.set("n", 12345)
    assert r.execute_command("DIGEST", "n") == "f34099ede96b5581"
    r.append("g", "12345")
    assert r.execute_command("DIGEST", "g") == "f34099ede96b5581"
    assert r.execute_command("DIGEST", "missing") is None


def test_delex(r):
    r.set("k", "v")
    assert r.execute_command("DELEX", "k", "IFEQ", "w") == 0
    assert r.execute_command("DELEX", "k", "IFNE", "w") == 1
    assert r.exists("k") == 0
    assert r.execute_command("DELEX", "k") == 0
    r.hset("h", "f", "v")
    with pytest.raises(redis.ResponseError, match="Key should be of string type"):
        r.execute_command("DELEX", "h", "IFEQ", "v")
    assert r.execute_command("DELEX", "h") == 1
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match="Invalid condition"):
        r.execute_command("DELEX", "k", "IF", "v")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("DELEX", "k", "IFEQ")


def test_msetex(r):
    assert r.execute_command("MSETEX", 2, "a", "1", "b", "2", "EX", 100) == 1
    assert r.mget("a", "b") == ["1", "2"]
    assert 0 < r.ttl("b") <= 100
    assert r.execute_command("MSETEX", 2, "a", "3", "c", "4", "NX") == 0
    assert r.exists("c") == 0
    assert r.execute_command("MSETEX", 1, "a", "5", "XX", "KEEPTTL") == 1
    assert r.get("a") == "5" and 0 < r.ttl("a") <= 100
    with pytest.raises(redis.ResponseError, match="invalid numkeys value"):
        r.execute_command("MSETEX", 0, "a", "1")
    with pytest.raises(redis.ResponseError, match="wrong number of key-value pairs"):
        r.execute_command("MSETEX", 3, "a", "1", "b", "2")
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'msetex' command"):
        r.execute_command("MSETEX", 1, "a", "1", "PX", 0)
