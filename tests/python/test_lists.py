"""List commands as a redis-py user calls them, after redis-py's own list
tests (test_commands.py), in RESP2 and RESP3, and the blocking pops with
real clients on several connections (so, at 2 threads, across workers)."""

import threading
import time

import pytest
import redis

from conftest import against_redis
from helpers import wait_until

# LMPOP/BLMPOP are Redis 7.0; the reference server installed here is 7.0.


def blocked_clients(c):
    return c.info("clients")["blocked_clients"]


def test_push_pop_len_range(r):
    assert r.rpush("l", "1", "2") == 2
    assert r.lpush("l", "0") == 3
    assert r.lrange("l", 0, -1) == ["0", "1", "2"]
    assert r.llen("l") == 3
    assert r.llen("nokey") == 0
    assert r.lpushx("nokey", "a") == 0
    assert r.rpushx("l", "3", "4") == 5
    assert r.lpop("l") == "0"
    assert r.rpop("l") == "4"
    assert r.lpop("l", 2) == ["1", "2"]
    assert r.rpop("l", 5) == ["3"]
    assert r.exists("l") == 0
    assert r.lpop("nokey") is None
    assert r.lpop("nokey", 3) is None


def test_resp3_replies(r3):
    assert r3.rpush("l", "a", "b") == 2
    assert r3.lpop("nokey", 2) is None
    assert r3.lrange("l", 0, -1) == ["a", "b"]
    assert r3.blpop(["nokey"], timeout=0.01) is None
    assert list(r3.blpop(["nokey", "l"], timeout=0.01)) == ["l", "a"]
    assert r3.lmpop(2, "nokey", "l", direction="RIGHT", count=3) == ["l", ["b"]]


def test_index_set_insert(r):
    r.rpush("l", "a", "b", "c")
    assert r.lindex("l", 0) == "a"
    assert r.lindex("l", -1) == "c"
    assert r.lindex("l", 3) is None
    assert r.lset("l", 1, "B") is True
    with pytest.raises(redis.ResponseError, match="index out of range"):
        r.lset("l", 9, "x")
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.lset("nokey", 0, "x")
    assert r.linsert("l", "before", "B", "ab") == 4
    assert r.linsert("l", "after", "c", "d") == 5
    assert r.linsert("l", "after", "zz", "x") == -1
    assert r.linsert("nokey", "after", "a", "x") == 0
    assert r.lrange("l", 0, -1) == ["a", "ab", "B", "c", "d"]


def test_rem_trim_pos(r):
    r.rpush("l", "a", "b", "a", "c", "a")
    assert r.lrem("l", -1, "a") == 1
    assert r.lrem("l", 0, "a") == 2
    assert r.lrange("l", 0, -1) == ["b", "c"]
    r.rpush("p", "a", "b", "c", "1", "2", "3", "c", "c")
    assert r.lpos("p", "c") == 2
    assert r.lpos("p", "c", rank=2) == 6
    assert r.lpos("p", "c", rank=-1) == 7
    assert r.lpos("p", "c", count=0) == [2, 6, 7]
    assert r.lpos("p", "c", count=2, rank=-1) == [7, 6]
    assert r.lpos("p", "c", maxlen=2) is None
    assert r.lpos("p", "x") is None
    with pytest.raises(redis.ResponseError, match="RANK can't be zero"):
        r.lpos("p", "c", rank=0)
    assert r.ltrim("p", 1, -2) is True
    assert r.lrange("p", 0, -1) == ["b", "c", "1", "2", "3", "c"]
    assert r.ltrim("p", 5, 1) is True
    assert r.exists("p") == 0


def test_move_and_mpop(r):
    r.rpush("a", "1", "2", "3")
    assert r.rpoplpush("a", "b") == "3"
    assert r.lmove("a", "b", "LEFT", "RIGHT") == "1"
    assert r.lrange("b", 0, -1) == ["3", "1"]
    assert r.lmove("b", "b") == "3"
    assert r.lrange("b", 0, -1) == ["1", "3"]
    assert r.lmove("nokey", "b") is None
    assert r.lmpop(2, "nokey", "b", direction="LEFT") == ["b", ["1"]]
    assert r.lmpop(1, "nokey", direction="LEFT") is None
    r.set("s", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.lmove("b", "s")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.lpush("s", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.get("b")


@pytest.mark.skipif(against_redis(), reason="OBJECT ENCODING thresholds are checked against Redis 8.4 by test_differential")
def test_encoding_and_generic_commands(r):
    r.config_set("list-max-listpack-size", 3)
    try:
        r.rpush("l", "a", "b", "c")
        assert r.object("encoding", "l") == "listpack"
        r.rpush("l", "d")
        assert r.object("encoding", "l") == "quicklist"
        r.rpop("l", 3)
        assert r.object("encoding", "l") == "listpack"
    finally:
        r.config_set("list-max-listpack-size", -2)
    assert r.type("l") == "list"
    assert r.copy("l", "l2") is True
    assert r.rename("l2", "l3") is True
    assert r.expire("l3", 100) is True
    assert [k for k in r.scan_iter(_type="list")] and set(r.scan_iter(_type="list")) == {"l", "l3"}
    assert r.delete("l", "l3") == 2


def test_a_list_moving_into_and_out_of_its_item(r):
    """A small list is kept in its key's item, a larger one apart; pushes,
    pops and the other edits move it between the two (both ways, past the
    2 KB of elements the item holds) under a TTL, a rename, COPY and
    DUMP/RESTORE, and it reads the same as a model throughout."""
    import random
    rng = random.Random(5)
    model = []
    r.rpush("q", "seed")
    model.append("seed")
    r.expire("q", 1000)
    crossings, was_big = 0, False
    for step in range(1500):
        op = rng.random()
        if op < 0.35:
            vals = [("v%d-" % step) + "x" * rng.randrange(0, 90) for _ in range(rng.randrange(1, 4))]
            if rng.random() < 0.5:
                r.lpush("q", *vals)
                model[:0] = reversed(vals)
            else:
                r.rpush("q", *vals)
                model.extend(vals)
        elif op < 0.65 and len(model) > 1:
            n = rng.randrange(1, min(len(model), 4))
            if rng.random() < 0.5:
                assert r.lpop("q", n) == model[:n]
                del model[:n]
            else:
                assert r.rpop("q", n) == model[-n:][::-1]
                del model[-n:]
        elif op < 0.72 and model:
            i = rng.randrange(len(model))
            r.lset("q", i, "set%d" % step)
            model[i] = "set%d" % step
        elif op < 0.77 and model:
            pivot = model[rng.randrange(len(model))]
            assert r.linsert("q", "AFTER", pivot, "ins%d" % step) == len(model) + 1
            model.insert(model.index(pivot) + 1, "ins%d" % step)
        elif op < 0.80 and len(model) > 2:
            r.ltrim("q", 1, -2)
            model = model[1:-1]
        elif op < 0.83:
            r.rename("q", "q2")
            r.rename("q2", "q")
        elif op < 0.86:
            assert r.copy("q", "qc", replace=True) is True
            assert r.lrange("qc", 0, -1) == model
        elif op < 0.88:
            d = r.dump("q")
            r.restore("qr", 0, d, replace=True)
            assert r.lrange("qr", 0, -1) == model
        assert r.llen("q") == len(model)
        big = sum(len(v) + 2 for v in model) > 2048
        crossings += big != was_big
        was_big = big
        if step % 7 == 0:
            assert r.lrange("q", 0, -1) == model
            if model:
                i = rng.randrange(len(model))
                assert r.lindex("q", i) == model[i]
                assert r.lindex("q", i - len(model)) == model[i]
            assert r.object("encoding", "q") == "listpack"
            assert 990 <= r.ttl("q") <= 1000
    assert r.lrange("q", 0, -1) == model
    # Past the item's bound and back, several times.
    assert crossings >= 4, crossings
    assert r.type("q") == "list"


def test_blocking_pop_served_by_another_connection(server, r):
    consumers = [server.client() for _ in range(4)]
    got = [None] * len(consumers)

    def consume(i):
        got[i] = consumers[i].brpop(["q"], timeout=10)

    threads = []
    for i in range(len(consumers)):
        t = threading.Thread(target=consume, args=(i,))
        t.start()
        threads.append(t)
        # Each one blocks before the next, so the order is known.
        wait_until(lambda: blocked_clients(r) == i + 1)
    assert r.rpush("q", "0", "1", "2", "3") == 4
    for t in threads:
        t.join(10)
    # BRPOP takes from the tail: the first to wait gets the last element.
    assert [tuple(g) for g in got] == [("q", str(3 - i)) for i in range(4)]
    assert blocked_clients(r) == 0
    for c in consumers:
        c.close()


def test_blocking_timeout_and_unblock(server, r):
    c = server.client()
    t0 = time.monotonic()
    assert c.blpop(["nokey"], timeout=0.1) is None
    assert time.monotonic() - t0 >= 0.1
    assert c.blmove("nokey", "d", 0.05, "LEFT", "LEFT") is None
    assert c.blmpop(0.05, 1, "nokey", direction="LEFT") is None
    cid = c.client_id()
    out = {}

    def wait():
        try:
            out["v"] = c.blpop(["q"], timeout=0)
        except redis.ResponseError as e:
            out["e"] = str(e)

    t = threading.Thread(target=wait)
    t.start()
    wait_until(lambda: blocked_clients(r) == 1)
    assert any(cl["id"] == str(cid) and "b" in cl["flags"] for cl in r.client_list())
    assert r.client_unblock(cid, error=True) == 1
    t.join(10)
    assert out == {"e": "UNBLOCKED client unblocked via CLIENT UNBLOCK"}
    assert r.client_unblock(cid) == 0
    c.close()


def test_blocking_in_multi_does_not_block(r):
    p = r.pipeline(transaction=True)
    p.blpop(["nokey"], timeout=0)
    p.brpoplpush("nokey", "d", timeout=0)
    assert p.execute() == [None, None]
