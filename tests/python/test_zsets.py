"""Sorted-set commands as a redis-py user calls them, after redis-py's own
sorted-set tests (test_commands.py, `test_z*`), at RESP2 and RESP3 (where
scores are doubles and WITHSCORES replies are [member, score] pairs)."""

import pytest
import redis


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, r, r3):
    return r if request.param == 2 else r3


def resp3(c):
    return c.connection_pool.connection_kwargs.get("protocol") == 3


def pairs(c, reply):
    """A WITHSCORES reply as (member, score) tuples in either protocol
    (RESP2 scores that redis-py leaves as strings are read as floats)."""
    return [(p[0], float(p[1])) for p in reply]


def test_zadd(c):
    mapping = {"a1": 1.0, "a2": 2.0, "a3": 3.0}
    assert c.zadd("a", mapping) == 3
    assert pairs(c, c.zrange("a", 0, -1, withscores=True)) == [("a1", 1.0), ("a2", 2.0), ("a3", 3.0)]
    # Errors when both nx and xx are set, or when incr has several pairs.
    with pytest.raises(redis.DataError):
        c.zadd("a", mapping, nx=True, xx=True)
    with pytest.raises(redis.DataError):
        c.zadd("a", mapping, incr=True)


def test_zadd_nx_xx_ch_gt_lt(c):
    assert c.zadd("a", {"a1": 1}) == 1
    assert c.zadd("a", {"a1": 99, "a2": 2}, nx=True) == 1
    assert pairs(c, c.zrange("a", 0, -1, withscores=True)) == [("a1", 1.0), ("a2", 2.0)]
    assert c.zadd("a", {"a1": 99, "a3": 3}, xx=True) == 0
    assert pairs(c, c.zrange("a", 0, -1, withscores=True)) == [("a2", 2.0), ("a1", 99.0)]
    assert c.zadd("a", {"a1": 100, "a2": 2, "a4": 4}, ch=True) == 2
    assert c.zadd("a", {"a1": 1, "a2": 5}, gt=True, ch=True) == 1
    assert c.zadd("a", {"a1": 1, "a2": 9}, lt=True, ch=True) == 1
    assert c.zscore("a", "a1") == 1.0
    assert c.zscore("a", "a2") == 5.0
    with pytest.raises(redis.ResponseError, match="GT, LT, and/or NX"):
        c.execute_command("ZADD", "a", "GT", "LT", 1, "x")


def test_zadd_incr(c):
    assert c.zadd("a", {"a1": 1}) == 1
    assert c.zadd("a", {"a1": 4.5}, incr=True) == 5.5
    assert c.zadd("a", {"a1": 1}, incr=True, nx=True) is None
    assert c.zadd("a", {"a9": 1}, incr=True, xx=True) is None
    assert c.zadd("a", {"a1": -1}, incr=True, gt=True) is None


def test_zcard_zcount_zlexcount(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    assert c.zcard("a") == 3
    assert c.zcard("nokey") == 0
    assert c.zcount("a", "-inf", "+inf") == 3
    assert c.zcount("a", 1, 2) == 2
    assert c.zcount("a", "(1", 2) == 1
    assert c.zcount("a", 10, 20) == 0
    c.zadd("l", {"a": 0, "b": 0, "c": 0, "d": 0})
    assert c.zlexcount("l", "-", "+") == 4
    assert c.zlexcount("l", "[b", "[d") == 3
    assert c.zlexcount("l", "(b", "(d") == 1


def test_zincrby(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    assert c.zincrby("a", 1, "a2") == 3.0
    assert c.zincrby("a", 5, "a3") == 8.0
    assert c.zscore("a", "a2") == 3.0
    assert c.zscore("a", "a3") == 8.0
    assert c.zincrby("a", 0.25, "new") == 0.25
    with pytest.raises(redis.ResponseError, match="not a valid float"):
        c.zincrby("a", "x", "a1")


def test_zmscore_zscore(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3.5})
    assert c.zmscore("a", ["a1", "a2", "a3", "a4"]) == [1.0, 2.0, 3.5, None]
    assert c.zmscore("nokey", ["a1"]) == [None]
    assert c.zscore("a", "a3") == 3.5
    assert c.zscore("a", "a9") is None
    assert c.zscore("nokey", "a1") is None


def test_zpopmin_zpopmax(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    # Without a count, RESP3 replies one flat [member, score].
    one = c.zpopmax("a")
    assert (one == ["a3", 3.0]) if resp3(c) else (pairs(c, one) == [("a3", 3.0)])
    assert pairs(c, c.zpopmax("a", count=2)) == [("a2", 2.0), ("a1", 1.0)]
    assert c.exists("a") == 0
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    one = c.zpopmin("a")
    assert (one == ["a1", 1.0]) if resp3(c) else (pairs(c, one) == [("a1", 1.0)])
    assert pairs(c, c.zpopmin("a", count=2)) == [("a2", 2.0), ("a3", 3.0)]
    assert c.zpopmin("a") == []


def test_zmpop(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    res = c.zmpop("2", ["b", "a"], min=True, count=2)
    assert res[0] == "a" and pairs(c, res[1]) == [("a1", 1.0), ("a2", 2.0)]
    with pytest.raises(redis.DataError):
        c.zmpop("2", ["b", "a"], count=2)
    c.zadd("b", {"b1": 10, "ab": 9, "b3": 8})
    res = c.zmpop("2", ["b", "a"], max=True)
    assert res[0] == "b" and pairs(c, res[1]) == [("b1", 10.0)]
    assert c.zmpop("1", ["nokey"], min=True) is None


def test_zrandmember(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5})
    assert c.zrandmember("a") is not None
    assert len(c.zrandmember("a", 2)) == 2
    # With scores: [member, score] pairs.
    got = c.zrandmember("a", 2, True)
    assert len(got) == (2 if resp3(c) else 4)
    # Positive count: distinct members, at most the set.
    assert len(c.zrandmember("a", 10)) == 5
    # Negative count: that many, with repeats.
    assert len(c.zrandmember("a", -10)) == 10
    assert c.zrandmember("nokey") is None
    assert c.zrandmember("nokey", 3) == []


def test_zrange(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    assert c.zrange("a", 0, 1) == ["a1", "a2"]
    assert c.zrange("a", 1, 2) == ["a2", "a3"]
    assert c.zrange("a", 0, 2, desc=True) == ["a3", "a2", "a1"]
    assert pairs(c, c.zrange("a", 0, 1, withscores=True)) == [("a1", 1.0), ("a2", 2.0)]
    assert pairs(c, c.zrange("a", 1, 2, withscores=True)) == [("a2", 2.0), ("a3", 3.0)]
    # custom score cast function
    assert [tuple(p) for p in c.zrange("a", 0, 1, withscores=True, score_cast_func=int)] == [("a1", 1), ("a2", 2)]
    # byscore, bylex, limits
    assert c.zrange("a", 2, 3, byscore=True) == ["a2", "a3"]
    assert c.zrange("a", 3, 2, byscore=True, desc=True) == ["a3", "a2"]
    assert c.zrange("a", "-inf", "+inf", byscore=True, offset=1, num=1) == ["a2"]
    with pytest.raises(redis.DataError):
        c.zrange("a", 0, 1, byscore=True, bylex=True)
    with pytest.raises(redis.DataError):
        c.zrange("a", 0, 1, offset=1)
    c.zadd("l", {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0})
    assert c.zrange("l", "[aaa", "(g", bylex=True) == ["b", "c", "d", "e", "f"]
    assert c.zrange("l", "[f", "+", bylex=True) == ["f", "g"]
    assert c.zrange("l", "+", "[f", desc=True, bylex=True) == ["g", "f"]
    assert c.zrange("l", "-", "+", bylex=True, offset=3, num=2) == ["d", "e"]


def test_zrangestore(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    assert c.zrangestore("b", "a", 0, 1)
    assert c.zrange("b", 0, -1) == ["a1", "a2"]
    assert c.zrangestore("b", "a", 1, 2)
    assert pairs(c, c.zrange("b", 0, -1, withscores=True)) == [("a2", 2.0), ("a3", 3.0)]
    assert c.zrangestore("b", "a", 2, 1, byscore=True, offset=0, num=1, desc=True) == 1
    assert c.zrange("b", 0, -1) == ["a2"]
    c.zadd("l", {"a": 0, "b": 0, "c": 0})
    assert c.zrangestore("b", "l", "[b", "+", bylex=True) == 2
    assert c.zrange("b", 0, -1) == ["b", "c"]
    assert c.zrangestore("b", "nokey", 0, -1) == 0
    assert c.exists("b") == 0


def test_zrangebylex_zrevrangebylex(c):
    c.zadd("a", {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0})
    assert c.zrangebylex("a", "-", "[c") == ["a", "b", "c"]
    assert c.zrangebylex("a", "-", "(c") == ["a", "b"]
    assert c.zrangebylex("a", "[aaa", "(g") == ["b", "c", "d", "e", "f"]
    assert c.zrangebylex("a", "[f", "+") == ["f", "g"]
    assert c.zrangebylex("a", "-", "+", start=3, num=2) == ["d", "e"]
    assert c.zrevrangebylex("a", "[c", "-") == ["c", "b", "a"]
    assert c.zrevrangebylex("a", "(c", "-") == ["b", "a"]
    assert c.zrevrangebylex("a", "(g", "[aaa") == ["f", "e", "d", "c", "b"]
    assert c.zrevrangebylex("a", "+", "[f") == ["g", "f"]
    assert c.zrevrangebylex("a", "+", "-", start=3, num=2) == ["d", "c"]


def test_zrangebyscore_zrevrangebyscore(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5})
    assert c.zrangebyscore("a", 2, 4) == ["a2", "a3", "a4"]
    assert c.zrangebyscore("a", 2, 4, start=1, num=2) == ["a3", "a4"]
    assert pairs(c, c.zrangebyscore("a", 2, 4, withscores=True)) == [("a2", 2.0), ("a3", 3.0), ("a4", 4.0)]
    assert c.zrevrangebyscore("a", 4, 2) == ["a4", "a3", "a2"]
    assert c.zrevrangebyscore("a", 4, 2, start=1, num=2) == ["a3", "a2"]
    assert pairs(c, c.zrevrangebyscore("a", 4, 2, withscores=True)) == [("a4", 4.0), ("a3", 3.0), ("a2", 2.0)]


def test_zrank_zrevrank(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5})
    assert c.zrank("a", "a1") == 0
    assert c.zrank("a", "a2") == 1
    assert c.zrank("a", "a6") is None
    rank, score = c.zrank("a", "a3", withscore=True)
    assert (rank, float(score)) == (2, 3.0)
    assert c.zrank("a", "a6", withscore=True) is None
    assert c.zrevrank("a", "a1") == 4
    assert c.zrevrank("a", "a2") == 3
    assert c.zrevrank("a", "a6") is None
    rank, score = c.zrevrank("a", "a3", withscore=True)
    assert (rank, float(score)) == (2, 3.0)


def test_zrem_and_zremrange(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5})
    assert c.zrem("a", "a2") == 1
    assert c.zrem("a", "a2") == 0
    assert c.zrem("a", "a1", "a9") == 1
    assert c.zremrangebyrank("a", 0, 0) == 1
    assert c.zrange("a", 0, -1) == ["a4", "a5"]
    c.zadd("b", {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5})
    assert c.zremrangebyscore("b", 2, 4) == 3
    assert c.zrange("b", 0, -1) == ["a1", "a5"]
    assert c.zremrangebyscore("b", 2, 4) == 0
    c.zadd("l", {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0})
    assert c.zremrangebylex("l", "-", "[c") == 3
    assert c.zremrangebylex("l", "[f", "+") == 2
    assert c.zremrangebylex("l", "[f", "+") == 0
    assert c.zrange("l", 0, -1) == ["d", "e"]


def test_zrevrange(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    assert c.zrevrange("a", 0, 1) == ["a3", "a2"]
    assert c.zrevrange("a", 1, 2) == ["a2", "a1"]
    assert pairs(c, c.zrevrange("a", 0, 1, withscores=True)) == [("a3", 3.0), ("a2", 2.0)]


def test_zscan_and_iter(c):
    c.zadd("a", {"a": 1, "b": 2, "c": 3})
    cursor, members = c.zscan("a")
    assert cursor == 0
    assert set(members) == {("a", 1), ("b", 2), ("c", 3)}
    _, members = c.zscan("a", match="a")
    assert set(members) == {("a", 1)}
    big = {f"m{i}": i for i in range(500)}
    c.zadd("big", big)
    assert c.object("encoding", "big") == "skiplist"
    assert dict(c.zscan_iter("big", count=37)) == {k: float(v) for k, v in big.items()}


def test_wrong_type(c):
    c.set("s", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.zadd("s", {"a": 1})
    c.zadd("z", {"a": 1})
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.get("z")
    assert c.type("z") == "zset"


def test_zunion_zunionstore(c):
    c.zadd("a", {"a1": 1, "a2": 1, "a3": 1})
    c.zadd("b", {"a1": 2, "a2": 2, "a3": 2})
    c.zadd("c", {"a1": 6, "a3": 5, "a4": 4})
    assert c.zunion(["a", "b", "c"]) == ["a2", "a4", "a3", "a1"]
    assert pairs(c, c.zunion(["a", "b", "c"], withscores=True)) == [("a2", 3.0), ("a4", 4.0), ("a3", 8.0), ("a1", 9.0)]
    assert pairs(c, c.zunion(["a", "b", "c"], aggregate="MAX", withscores=True)) == [("a2", 2.0), ("a4", 4.0), ("a3", 5.0), ("a1", 6.0)]
    assert pairs(c, c.zunion({"a": 1, "b": 2, "c": 3}, withscores=True)) == [("a2", 5.0), ("a4", 12.0), ("a3", 20.0), ("a1", 23.0)]
    assert c.zunionstore("d", ["a", "b", "c"], aggregate="MIN") == 4
    assert pairs(c, c.zrange("d", 0, -1, withscores=True)) == [("a1", 1.0), ("a2", 1.0), ("a3", 1.0), ("a4", 4.0)]


def test_zinter_zinterstore_zintercard(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 1})
    c.zadd("b", {"a1": 2, "a2": 2, "a3": 2})
    c.zadd("c", {"a1": 6, "a3": 5, "a4": 4})
    assert c.zinter(["a", "b", "c"]) == ["a3", "a1"]
    assert pairs(c, c.zinter(["a", "b", "c"], withscores=True)) == [("a3", 8.0), ("a1", 9.0)]
    assert pairs(c, c.zinter({"a": 1, "b": 2, "c": 3}, withscores=True)) == [("a3", 20.0), ("a1", 23.0)]
    assert c.zinterstore("d", ["a", "b", "c"], aggregate="MAX") == 2
    assert pairs(c, c.zrange("d", 0, -1, withscores=True)) == [("a3", 5.0), ("a1", 6.0)]
    assert c.zintercard(3, ["a", "b", "c"]) == 2
    assert c.zintercard(3, ["a", "b", "c"], limit=1) == 1


def test_zdiff_zdiffstore(c):
    c.zadd("a", {"a1": 1, "a2": 2, "a3": 3})
    c.zadd("b", {"a1": 1, "a2": 2})
    assert c.zdiff(["a", "b"]) == ["a3"]
    # redis-py leaves ZDIFF's RESP2 reply flat.
    got = c.zdiff(["a", "b"], withscores=True)
    assert got == ([["a3", 3.0]] if resp3(c) else ["a3", "3"])
    assert c.zdiffstore("out", ["a", "b"]) == 1
    assert c.zrange("out", 0, -1) == ["a3"]
