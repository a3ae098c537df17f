"""SORT and SORT_RO as a redis-py user calls them, after redis-py's own
test_sort_* tests (test_commands.py), at RESP2 and RESP3."""

import pytest
import redis


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, r, r3):
    return r if request.param == 2 else r3


def test_sort_basic_limited_desc_alpha(c):
    c.rpush("a", "3", "2", "1", "4")
    assert c.sort("a") == ["1", "2", "3", "4"]
    assert c.sort("a", start=1, num=2) == ["2", "3"]
    assert c.sort("a", desc=True) == ["4", "3", "2", "1"]
    c.rpush("w", "e", "c", "b", "d", "a")
    assert c.sort("w", alpha=True) == ["a", "b", "c", "d", "e"]
    with pytest.raises(redis.ResponseError, match="can't be converted into double"):
        c.sort("w")


def test_sort_by_and_get(c):
    c.mset({"score:1": "8", "score:2": "3", "score:3": "5"})
    c.mset({"user:1": "u1", "user:2": "u2", "user:3": "u3"})
    c.rpush("a", "3", "2", "1")
    assert c.sort("a", by="score:*") == ["2", "3", "1"]
    assert c.sort("a", get="user:*") == ["u1", "u2", "u3"]
    assert c.sort("a", get=("user:*", "#")) == ["u1", "1", "u2", "2", "u3", "3"]
    assert c.sort("a", by="score:*", get=["#", "missing:*"]) == ["2", None, "3", None, "1", None]
    assert c.sort("a", by="nosort") == ["3", "2", "1"]
    assert c.sort("a", get=("user:*", "#"), groups=True) == [("u1", "1"), ("u2", "2"), ("u3", "3")]


def test_sort_hash_fields(c):
    c.hset("h:1", mapping={"w": "3", "name": "one"})
    c.hset("h:2", mapping={"w": "1", "name": "two"})
    c.sadd("s", "1", "2")
    assert c.sort("s", by="h:*->w", get="h:*->name") == ["two", "one"]


def test_sort_store_and_sort_ro(c):
    c.rpush("a", "2", "3", "1")
    assert c.sort("a", store="sorted") == 3
    assert c.lrange("sorted", 0, -1) == ["1", "2", "3"]
    assert c.sort_ro("a") == ["1", "2", "3"]
    assert c.sort_ro("a", by="nosort", desc=True) == ["1", "3", "2"]
    assert c.sort("missing", store="sorted") == 0
    assert c.exists("sorted") == 0
    c.set("str", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.sort("str")
