"""Geospatial commands as a redis-py user calls them, after redis-py's own
geo tests (test_commands.py, `test_geo*`), at RESP2 and RESP3."""

import pytest
import redis

SICILY = (13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, r, r3):
    return r if request.param == 2 else r3


def test_geosearch(c):
    c.geoadd("Sicily", SICILY)
    assert c.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km", sort="ASC") == ["Catania", "Palermo"]
    assert c.geosearch("Sicily", member="Palermo", width=400, height=400, unit="km", sort="DESC") == ["Catania", "Palermo"]
    assert c.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km", count=1) == ["Catania"]
    reply = c.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km", sort="ASC",
                        withdist=True, withcoord=True, withhash=True)
    assert [p[0] for p in reply] == ["Catania", "Palermo"]
    assert reply[0][1] == 56.4413
    assert reply[0][2] == 3479447370796909
    assert reply[0][3] == pytest.approx((15.087267458438873, 37.50266842333162))
    assert c.geosearch("nokey", longitude=15, latitude=37, radius=200, unit="km") == []


def test_geosearchstore(c):
    c.geoadd("Sicily", SICILY)
    assert c.geosearchstore("dst", "Sicily", longitude=15, latitude=37, radius=200, unit="km") == 2
    assert c.zrange("dst", 0, -1) == ["Palermo", "Catania"]
    assert c.geosearchstore("dst", "Sicily", longitude=15, latitude=37, radius=200, unit="km", storedist=True) == 2
    assert [round(s, 4) for _, s in c.zrange("dst", 0, -1, withscores=True)] == [56.4413, 190.4424]


def test_georadius_and_bymember(c):
    c.geoadd("Sicily", SICILY)
    assert c.georadius("Sicily", 15, 37, 200, unit="km", sort="ASC") == ["Catania", "Palermo"]
    assert c.georadius("Sicily", 15, 37, 200, unit="km", store="dst") == 2
    assert c.georadius("Sicily", 15, 37, 200, unit="km", store_dist="dst2") == 2
    assert c.zcard("dst") == 2 and c.zcard("dst2") == 2
    assert c.georadiusbymember("Sicily", "Palermo", 100, unit="km") == ["Palermo"]
    reply = c.georadiusbymember("Sicily", "Palermo", 200, unit="km", withdist=True, sort="ASC")
    assert reply == [["Palermo", 0.0], ["Catania", 166.2742]]


def test_geosearch_errors(c):
    c.geoadd("Sicily", SICILY)
    with pytest.raises(redis.ResponseError, match="could not decode requested zset member"):
        c.geosearch("Sicily", member="nope", radius=1, unit="km")
    with pytest.raises(redis.ResponseError, match="the ANY argument requires COUNT argument"):
        c.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "ANY")
    with pytest.raises(redis.ResponseError, match="exactly one of BYRADIUS and BYBOX"):
        c.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "ASC", "DESC")
    c.set("str", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.geosearch("str", longitude=15, latitude=37, radius=200, unit="km")
