"""DUMP and RESTORE: Tern's payloads equal Redis 8.4's byte for byte for the
same values (skipped when redis-server-unstable is absent), each server
restores the other's, and RESTORE's options and errors are Redis's."""

import random
import struct

import pytest
import redis

from crc64 import crc64
from servers import redis_unstable, start_redis


def fill(c):
    rnd = random.Random(7)
    c.set("s", "hello")
    c.set("i", 12345)
    c.set("neg", -300)
    c.set("big", 2**62)
    c.set("i12", "123456789012")
    c.set("z0", "0123")
    c.set("comp", "a" * 51)
    c.set("comp2", "abc" * 40 + "xyz" * 30)
    for n in range(40):
        c.set(f"rnd{n}", "".join(rnd.choice("ab ") for _ in range(rnd.randrange(15, 400))))
    c.rpush("l", "a", "1", "-5", "100000", "x" * 70)
    c.rpush("lbig", *[f"item-{i}" for i in range(2000)])
    c.sadd("si", 1, 5, 9, -70000)
    c.sadd("sl", "x", "y", "1")
    c.sadd("sh", *[f"m{i}" for i in range(200)])
    c.zadd("zl", {"a": 1, "b": 2.5, "c": 0.1, "d": -3e20, "e": float("inf")})
    c.zadd("zs", {f"m{i}": i / 7 for i in range(200)})
    c.hset("hl", mapping={"f": "v", "g": 1, "long": "q" * 50})
    c.hset("hx", mapping={"f1": "v1", "f2": "v2", "f3": "v3"})
    c.execute_command("HPEXPIREAT", "hx", 4_000_000_000_000, "FIELDS", 2, "f1", "f3")
    c.hset("hxbig", mapping={f"f{i}": i for i in range(600)})
    c.execute_command("HPEXPIREAT", "hxbig", 4_000_000_000_000, "FIELDS", 1, "f3")


# Keys whose bytes depend only on the value (a hashtable's order does not
# match Redis's, nor a large set's).
ORDERED = ["s", "i", "neg", "big", "i12", "z0", "comp", "comp2", "l", "lbig", "si", "sl", "zl", "zs", "hl", "hx"]


@pytest.fixture(scope="module")
def r8():
    p = redis_unstable()
    if not p.exists():
        pytest.skip("redis-server-unstable absent")
    srv = start_redis(str(p))
    yield srv
    srv.stop()


def test_dump_equals_redis_84(rb, r8):
    c8 = r8.client(decode_responses=False)
    c8.flushall()
    fill(rb)
    fill(c8)
    keys = ORDERED + [f"rnd{n}" for n in range(40)]
    for k in keys:
        assert rb.dump(k) == c8.dump(k), k
    # Each restores the other's, hashtables included.
    for k in sorted(c8.keys("*")):
        k = k.decode()
        ours, theirs = rb.dump(k), c8.dump(k)
        rb.restore(k + ":from8", 0, theirs)
        c8.restore(k + ":fromtern", 0, ours)
        assert rb.object("encoding", k + ":from8") == c8.object("encoding", k), k
        assert rb.dump(k + ":from8") == rb.dump(k) or k not in ORDERED, k
        assert c8.type(k + ":fromtern") == c8.type(k)
    assert rb.hpexpiretime("hx:from8", "f1", "f2", "f3") == [4_000_000_000_000, -1, 4_000_000_000_000]
    assert sorted(rb.smembers("sh:from8")) == sorted(c8.smembers("sh"))
    assert rb.hgetall("hxbig:from8") == c8.hgetall("hxbig")
    c8.close()


def test_restore_options_and_errors(rb):
    rb.set("src", "value")
    p = rb.dump("src")
    assert rb.dump("nokey") is None
    with pytest.raises(redis.ResponseError, match="^BUSYKEY Target key name already exists.$"):
        rb.restore("src", 0, p)
    rb.execute_command("RESTORE", "src", 0, p, "REPLACE")
    assert rb.restore("k", 0, p) == b"OK"
    assert rb.get("k") == b"value" and rb.ttl("k") == -1
    rb.restore("t", 5000, p)
    assert 4000 < rb.pttl("t") <= 5000
    rb.restore("a", 4_000_000_000_000, p, absttl=True)
    assert rb.pexpiretime("a") == 4_000_000_000_000
    # A deadline already passed: OK, and no key (an old one is removed).
    assert rb.restore("gone", 1, p, absttl=True) == b"OK"
    assert rb.exists("gone") == 0
    rb.restore("k", 1, p, absttl=True, replace=True)
    assert rb.exists("k") == 0
    rb.execute_command("RESTORE", "idle", 0, p, "IDLETIME", 1000)
    assert rb.object("idletime", "idle") >= 1000
    bad = bytearray(p)
    bad[-1] ^= 1
    for args, msg in [
        (("x", 0, bytes(bad)), "DUMP payload version or checksum are wrong"),
        (("x", 0, p[:1] + b"\x09" + p[2:-10] + p[-10:]), "DUMP payload version or checksum are wrong"),
        (("x", -1, p), "Invalid TTL value, must be >= 0"),
        (("x", "abc", p), "value is not an integer or out of range"),
        (("x", 0, p, "IDLETIME", -1), "Invalid IDLETIME value, must be >= 0"),
        (("x", 0, p, "FREQ", 256), "Invalid FREQ value, must be >= 0 and <= 255"),
        (("x", 0, p, "IDLETIME", 1, "FREQ", 1), "syntax error"),
        (("x", 0, p, "BOGUS"), "syntax error"),
        (("x", 0, b"\x00"), "DUMP payload version or checksum are wrong"),
    ]:
        with pytest.raises(redis.ResponseError, match=msg):
            rb.execute_command("RESTORE", *args)
    # A body that does not decode, under a good footer: Bad data format.
    body = b"\x04\x05\x01a"  # a hash claiming 5 fields, holding half of one
    payload = body + struct.pack("<H", 14)
    payload += struct.pack("<Q", crc64(payload))
    with pytest.raises(redis.ResponseError, match="Bad data format"):
        rb.execute_command("RESTORE", "x", 0, payload)
