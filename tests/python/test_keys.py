"""Generic key commands: deletion, expiry, renaming, iteration, databases."""

import time

import pytest
import redis

from conftest import against_redis

from helpers import wait_until


def test_delete_exists(r):
    r.mset({"a": "1", "b": "2", "c": "3"})
    assert r.exists("a", "a", "missing", "b") == 3
    assert r.delete("a", "b", "missing") == 2
    assert r.exists("a", "b", "c") == 1
    assert r.unlink("c", "c") == 1
    assert r.delete("nothing") == 0
    r.set("t", "1")
    assert r.touch("t", "t", "missing") == 2


def test_type(r):
    r.set("s", "v")
    r.set("i", 1)
    assert r.type("s") == "string"
    assert r.type("i") == "string"
    assert r.type("missing") == "none"


def test_ttl_pttl(r):
    assert r.ttl("missing") == -2
    assert r.pttl("missing") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.expiretime("k") == -1
    assert r.pexpiretime("k") == -1
    assert r.expiretime("missing") == -2
    assert r.pexpiretime("missing") == -2


def test_expire_family(r):
    r.set("k", "v")
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.pexpire("k", 200000) is True
    assert 199000 <= r.pttl("k") <= 200000
    at = int(time.time()) + 1000
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.pexpireat("k", at * 1000 + 5) is True
    assert r.pexpiretime("k") == at * 1000 + 5
    assert r.expire("missing", 100) is False
    assert r.pexpireat("missing", at * 1000) is False


def test_expire_in_past_deletes(r):
    r.set("k", "v")
    assert r.expire("k", -1) is True
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.pexpireat("k", 1) is True
    assert r.get("k") is None
    r.set("k", "v")
    assert r.expire("k", 0) is True
    assert r.exists("k") == 0


def test_expire_nx_xx_gt_lt(r):
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False
    assert r.expire("k", 100, gt=True) is False  # no TTL counts as infinite
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.expire("k", 200, xx=True) is True
    assert r.expire("k", 100, gt=True) is False
    assert r.expire("k", 300, gt=True) is True
    assert r.expire("k", 400, lt=True) is False
    assert r.expire("k", 50, lt=True) is True
    assert 40 <= r.ttl("k") <= 50
    r.set("p", "v")
    assert r.pexpire("p", 100000, lt=True) is True
    assert r.pexpire("p", 50000, xx=True) is True


def test_expire_option_errors(r):
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match="^NX and XX, GT or LT options at the same time are not compatible$"):
        r.execute_command("EXPIRE", "k", 10, "NX", "XX")
    with pytest.raises(redis.ResponseError, match="^NX and XX, GT or LT options at the same time are not compatible$"):
        r.execute_command("EXPIRE", "k", 10, "NX", "GT")
    with pytest.raises(redis.ResponseError, match="^GT and LT options at the same time are not compatible$"):
        r.execute_command("EXPIRE", "k", 10, "GT", "LT")
    with pytest.raises(redis.ResponseError, match="^Unsupported option FOO$"):
        r.execute_command("EXPIRE", "k", 10, "FOO")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("EXPIRE", "k", "ten")
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'expire' command$"):
        r.execute_command("EXPIRE", "k", str(2**62))
    with pytest.raises(redis.ResponseError, match=r"^invalid expire time in 'pexpire' command$"):
        r.execute_command("PEXPIRE", "k", str(2**63 - 1))
    assert r.ttl("k") == -1


def test_key_expires(r):
    r.set("k", "v")
    r.pexpire("k", 30)
    wait_until(lambda: r.exists("k") == 0)
    assert r.ttl("k") == -2


def test_persist(r):
    r.set("k", "v", ex=100)
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    assert r.persist("missing") is False


def test_rename(r):
    r.set("a", "1", ex=100)
    assert r.rename("a", "b") is True
    assert r.exists("a") == 0
    assert r.get("b") == "1"
    assert 90 <= r.ttl("b") <= 100
    r.set("c", "2")
    assert r.rename("c", "b") is True
    assert r.get("b") == "2"
    assert r.ttl("b") == -1
    assert r.rename("b", "b") is True
    assert r.get("b") == "2"
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.rename("missing", "x")


def test_renamenx(r):
    r.mset({"a": "1", "b": "2"})
    assert r.renamenx("a", "b") is False
    assert r.renamenx("a", "c") is True
    assert r.mget("a", "b", "c") == [None, "2", "1"]
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.renamenx("missing", "x")


def test_copy(r):
    r.set("a", "1", ex=100)
    assert r.copy("a", "b") is True
    assert r.get("b") == "1"
    assert 90 <= r.ttl("b") <= 100
    r.set("c", "x")
    assert r.copy("a", "c") is False
    assert r.get("c") == "x"
    assert r.copy("a", "c", replace=True) is True
    assert r.get("c") == "1"
    assert r.copy("missing", "d") is False
    assert r.copy("a", "a", destination_db=3) is True
    r.execute_command("SELECT", 3)
    assert r.get("a") == "1"
    r.execute_command("SELECT", 0)
    with pytest.raises(redis.ResponseError, match="^source and destination objects are the same$"):
        r.copy("a", "a")
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        r.copy("a", "z", destination_db=16)
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("COPY", "a", "z", "BOGUS")


def test_move(server, r):
    r.set("k", "v", ex=100)
    assert r.move("k", 1) is True
    assert r.exists("k") == 0
    r1 = server.client(db=1)
    assert r1.get("k") == "v"
    assert 90 <= r1.ttl("k") <= 100
    r.set("k", "other")
    assert r.move("k", 1) is False
    assert r.get("k") == "other"
    assert r.move("missing", 1) is False
    with pytest.raises(redis.ResponseError, match="^source and destination objects are the same$"):
        r.move("k", 0)
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        r.move("k", 16)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("MOVE", "k", "one")
    r1.close()


def test_keys_glob(r):
    r.mset({"hello": 1, "hallo": 2, "hxllo": 3, "hllo": 4, "heeello": 5, "h*": 6, "other": 7})
    assert sorted(r.keys("h?llo")) == ["hallo", "hello", "hxllo"]
    assert sorted(r.keys("h*llo")) == ["hallo", "heeello", "hello", "hllo", "hxllo"]
    assert sorted(r.keys("h[ae]llo")) == ["hallo", "hello"]
    assert sorted(r.keys("h[^e]llo")) == ["hallo", "hxllo"]
    assert sorted(r.keys("h[a-b]llo")) == ["hallo"]
    assert r.keys("h\\*") == ["h*"]
    assert len(r.keys()) == 7
    assert r.keys("nomatch*") == []


def test_scan_iter(r):
    r.mset({f"user:{i}": i for i in range(200)})
    r.mset({f"item:{i}": i for i in range(50)})
    assert sorted(r.scan_iter()) == sorted([f"user:{i}" for i in range(200)] + [f"item:{i}" for i in range(50)])
    got = list(r.scan_iter(match="item:*", count=7))
    assert sorted(got) == sorted(f"item:{i}" for i in range(50))
    assert len(list(r.scan_iter(_type="string"))) == 250
    assert list(r.scan_iter(_type="list")) == []


def test_scan_raw(r):
    r.mset({f"k{i}": i for i in range(20)})
    cursor, keys = r.scan(0, count=1000)
    assert cursor == 0
    assert len(keys) == 20
    with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
        r.execute_command("SCAN", "abc")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SCAN", 0, "COUNT", 0)
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SCAN", 0, "BOGUS", 1)


def test_scan_sees_keys_present_throughout(r):
    r.mset({f"stable:{i}": i for i in range(300)})
    seen = set()
    cursor = 0
    n = 0
    while True:
        cursor, keys = r.scan(cursor, count=10)
        seen.update(keys)
        # Churn during the scan must not hide keys present from start to end.
        r.set(f"churn:{n}", n)
        n += 1
        if cursor == 0:
            break
    assert {f"stable:{i}" for i in range(300)} <= seen


def test_randomkey_dbsize(r):
    assert r.randomkey() is None
    assert r.dbsize() == 0
    r.mset({"a": 1, "b": 2})
    assert r.randomkey() in ("a", "b")
    assert r.dbsize() == 2


def test_flushdb_flushall(server, r):
    r1 = server.client(db=1)
    r.set("a", 1)
    r1.set("b", 1)
    assert r.flushdb() is True
    assert r.dbsize() == 0
    assert r1.dbsize() == 1
    r.set("a", 1)
    assert r.flushall() is True
    assert r1.dbsize() == 0
    assert r.dbsize() == 0
    r.set("a", 1)
    assert r.flushdb(asynchronous=True) is True
    assert r.execute_command("FLUSHALL", "SYNC") is True
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("FLUSHALL", "BOGUS")
    r1.close()


def test_swapdb(server, r):
    r1 = server.client(db=1)
    r.set("zero", 0)
    r1.set("one", 1)
    assert r.swapdb(0, 1) is True
    assert r.get("one") == "1"
    assert r.get("zero") is None
    assert r1.get("zero") == "0"
    assert r.swapdb(0, 0) is True
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        r.swapdb(0, 16)
    with pytest.raises(redis.ResponseError, match="^invalid first DB index$"):
        r.execute_command("SWAPDB", "x", 1)
    with pytest.raises(redis.ResponseError, match="^invalid second DB index$"):
        r.execute_command("SWAPDB", 1, "y")
    r1.close()


def test_select_databases(server):
    c = server.client(db=5)
    c.set("k", "five")
    assert server.client(db=0).get("k") is None
    assert server.client(db=5).get("k") == "five"
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        c.execute_command("SELECT", 16)
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        c.execute_command("SELECT", -1)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        c.execute_command("SELECT", "abc")
    c.flushall()
    c.close()


def test_object_subcommands(r):
    r.set("k", "v")
    assert r.object("idletime", "k") >= 0
    assert r.object("refcount", "k") >= 1
    with pytest.raises(redis.ResponseError, match="^unknown subcommand 'bogus'. Try OBJECT HELP.$"):
        r.execute_command("OBJECT", "bogus", "k")


def test_wrongtype(r):
    r.hset("hash", "f", "v")
    msg = "^WRONGTYPE Operation against a key holding the wrong kind of value$"
    with pytest.raises(redis.ResponseError, match=msg):
        r.get("hash")
    with pytest.raises(redis.ResponseError, match=msg):
        r.incr("hash")
    with pytest.raises(redis.ResponseError, match=msg):
        r.append("hash", "x")
    assert r.mget("hash") == [None]
    assert r.type("hash") == "hash"
    r.set("str", "v")
    with pytest.raises(redis.ResponseError, match=msg):
        r.hget("str", "f")
    assert r.set("hash", "now a string") is True
    assert r.get("hash") == "now a string"


@pytest.mark.skipif(against_redis(), reason="Redis 7.0 has no subexpiry and estimates avg_ttl from samples")
def test_info_keyspace_avg_ttl_and_subexpiry(r):
    """INFO keyspace's `avg_ttl` is the mean time to live (ms) of the keys
    that have one (Redis estimates it from active expiry's samples; Tern's
    is exact) and `subexpiry` counts the hashes with fields that have a
    TTL."""
    def db0():
        return r.info("keyspace")["db0"]

    r.set("plain", "v")
    assert db0()["avg_ttl"] == 0 and db0()["subexpiry"] == 0
    r.set("a", "v", px=100_000)
    r.set("b", "v", px=200_000)
    assert 148_000 <= db0()["avg_ttl"] <= 150_000
    r.persist("b")
    assert 98_000 <= db0()["avg_ttl"] <= 100_000
    r.delete("a")
    assert db0()["avg_ttl"] == 0
    r.hset("h", mapping={"f": "1", "g": "2"})
    r.execute_command("HEXPIRE", "h", 100, "FIELDS", 2, "f", "g")
    r.hset("i", "f", "1")
    r.execute_command("HPEXPIRE", "i", 100_000, "FIELDS", 1, "f")
    assert db0()["subexpiry"] == 2
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "f")
    assert db0()["subexpiry"] == 2
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "g")
    assert db0()["subexpiry"] == 1
    r.delete("i")
    assert db0()["subexpiry"] == 0
    # A field's TTL running out takes the hash off the count too.
    r.hset("j", mapping={"f": "1", "g": "2"})
    r.execute_command("HPEXPIRE", "j", 1, "FIELDS", 1, "f")
    assert db0()["subexpiry"] == 1
    while r.hexists("j", "f"):
        pass
    assert db0()["subexpiry"] == 0


@pytest.mark.skipif(against_redis(), reason="Redis 7.0 frees a SYNC flush inline; Redis 8 runs it as a blocking lazy flush")
def test_flush_sync_frees_in_the_background_while_its_client_waits(r):
    """FLUSHALL and FLUSHDB SYNC run as Redis 8 runs them: the data is
    detached at once and freed on the lazyfree thread while the client
    waits for its `+OK` (the worker's other clients go on); inside MULTI
    the flush is done inline."""
    before = r.info("memory")["lazyfreed_objects"]
    r.mset({f"k{i}": "v" for i in range(1000)})
    assert r.execute_command("FLUSHALL", "SYNC") is True
    assert r.dbsize() == 0
    assert r.info("memory")["lazyfreed_objects"] > before
    r.mset({f"k{i}": "v" for i in range(10)})
    assert r.execute_command("FLUSHDB", "SYNC") is True
    assert r.dbsize() == 0
    # Nothing detached: the reply still comes (after the frees before it).
    assert r.execute_command("FLUSHDB", "SYNC") is True
    mid = r.info("memory")["lazyfreed_objects"]
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.execute_command("FLUSHALL", "SYNC")
    assert p.execute() == [True, True]
    assert r.info("memory")["lazyfreed_objects"] == mid
    assert r.info("clients")["blocked_clients"] == 0


def test_a_client_gone_during_its_flush_sync_leaves_nothing_behind(server, r):
    import socket
    r.mset({f"k{i}": "x" * 100 for i in range(20000)})
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"FLUSHALL SYNC\r\n")
    s.close()
    while r.dbsize() != 0:
        pass
    while r.info("clients")["blocked_clients"] != 0:
        pass
    assert r.ping()
