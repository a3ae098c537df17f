"""Set commands as a redis-py user calls them, after redis-py's own set
tests (test_commands.py), at RESP2 and RESP3 (where SMEMBERS, SINTER,
SUNION, SDIFF and SPOP with a count reply as sets)."""

import pytest
import redis


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, r, r3):
    return r if request.param == 2 else r3


def test_sadd_scard_smembers(c):
    assert c.sadd("a", "1", "2", "3") == 3
    assert c.sadd("a", "3", "4") == 1
    assert c.scard("a") == 4
    assert c.scard("nokey") == 0
    assert c.smembers("a") == {"1", "2", "3", "4"}
    assert c.smembers("nokey") == set()


def test_sismember_smismember(c):
    c.sadd("a", "1", "2", "3")
    assert c.sismember("a", "1")
    assert not c.sismember("a", "4")
    assert not c.sismember("nokey", "1")
    assert c.smismember("a", "1", "4", "3") == [1, 0, 1]
    assert c.smismember("a", ["1", "4"]) == [1, 0]


def test_srem_removes_an_emptied_set(c):
    c.sadd("a", "1", "2", "3", "4")
    assert c.srem("a", "5") == 0
    assert c.srem("a", "2", "4") == 2
    assert c.smembers("a") == {"1", "3"}
    assert c.srem("a", "1", "3") == 2
    assert c.exists("a") == 0


def test_sinter_sunion_sdiff(c):
    c.sadd("a", "1", "2", "3")
    assert c.sinter("a", "b") == set()
    c.sadd("b", "2", "3")
    assert c.sinter("a", "b") == {"2", "3"}
    assert c.sunion("a", "b") == {"1", "2", "3"}
    assert c.sdiff("a", "b") == {"1"}
    assert c.sdiff("b", "a") == set()
    assert c.sintercard(2, ["a", "b"]) == 2
    assert c.sintercard(2, ["a", "b"], limit=1) == 1
    assert c.sintercard(2, ["a", "nokey"]) == 0


def test_store_forms(c):
    c.sadd("a", "1", "2", "3")
    c.sadd("b", "2", "3", "x")
    assert c.sinterstore("c", "a", "b") == 2
    assert c.smembers("c") == {"2", "3"}
    assert c.sunionstore("c", "a", "b") == 4
    assert c.smembers("c") == {"1", "2", "3", "x"}
    assert c.sdiffstore("c", "a", "b") == 1
    assert c.smembers("c") == {"1"}
    assert c.sdiffstore("c", "a", "a") == 0
    assert c.exists("c") == 0


def test_smove(c):
    c.sadd("a", "a1", "a2")
    c.sadd("b", "b1", "b2")
    assert c.smove("a", "b", "a1")
    assert not c.smove("a", "b", "zz")
    assert c.smembers("a") == {"a2"}
    assert c.smembers("b") == {"b1", "b2", "a1"}
    assert c.smove("a", "new", "a2")
    assert c.exists("a") == 0
    assert c.smembers("new") == {"a2"}


def test_spop_and_srandmember(c):
    members = {"1", "2", "3"}
    c.sadd("a", *members)
    v = c.spop("a")
    assert v in members
    assert c.smembers("a") == members - {v}
    assert c.spop("nokey") is None
    c.sadd("b", *members)
    two = c.spop("b", 2)
    assert len(two) == 2 and set(two) <= members
    assert set(c.spop("b", 5)) == members - set(two)
    assert c.exists("b") == 0
    c.sadd("d", *members)
    assert c.srandmember("d") in members
    assert set(c.srandmember("d", 5)) == members
    picks = c.srandmember("d", -5)
    assert len(picks) == 5 and set(picks) <= members
    assert c.srandmember("nokey", 2) == []


def test_sscan(c):
    c.sadd("a", 1, 2, 3)
    cursor, members = c.sscan("a")
    assert cursor == 0
    assert set(members) == {"1", "2", "3"}
    _, members = c.sscan("a", match="1")
    assert members == ["1"]
    c.sadd("big", *("m%d" % i for i in range(300)))
    assert set(c.sscan_iter("big", count=20)) == {"m%d" % i for i in range(300)}


def test_wrongtype(c):
    c.set("s", "v")
    c.sadd("t", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.sadd("s", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.get("t")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.sunion("nokey", "s")
    assert c.type("t") == "set"
    assert c.object("encoding", "t") == "listpack"
    c.sadd("i", 1, 2)
    assert c.object("encoding", "i") == "intset"


@pytest.mark.parametrize("n", [300, 1000])
def test_srandmember_draws_every_member_alike(r, n):
    """Redis's "SRANDMEMBER histogram distribution - hashtable": a set past
    the listpack limits draws each member equally often (a chi-square
    statistic within six standard deviations of its mean; the check fails
    by chance about once in a billion runs). HRANDFIELD and RANDOMKEY draw
    from the same table."""
    r.sadd("s", *[f"m{i}" for i in range(n)])
    assert r.object("encoding", "s") == "hashtable"
    draws = r.srandmember("s", -200 * n)
    counts = {}
    for m in draws:
        counts[m] = counts.get(m, 0) + 1
    expect = len(draws) / n
    chi2 = sum((counts.get(f"m{i}", 0) - expect) ** 2 / expect for i in range(n))
    dof = n - 1
    assert chi2 < dof + 6 * (2 * dof) ** 0.5, chi2
