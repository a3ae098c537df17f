"""HyperLogLog as a redis-py user calls it."""

import pytest
import redis


def test_pfadd_pfcount_pfmerge(r):
    assert r.pfadd("h", "a", "b", "c") == 1
    assert r.pfadd("h", "a") == 0
    assert r.pfcount("h") == 3
    assert r.pfadd("h2", *("x%d" % i for i in range(1000))) == 1
    # Within HyperLogLog's error (0.81% standard error), union included.
    assert abs(r.pfcount("h2") - 1000) <= 40
    assert abs(r.pfcount("h", "h2") - 1003) <= 40
    assert r.pfmerge("m", "h", "h2") is True
    assert r.pfcount("m") == r.pfcount("h", "h2")
    assert r.pfcount("missing") == 0


def test_an_hll_is_a_string_in_redis_format(rb):
    rb.pfadd("h", "a")
    # Sparse: the header, then XZERO / VAL / XZERO opcodes.
    assert rb.get("h")[:5] == b"HYLL\x01" and rb.strlen("h") == 21
    rb.pfadd("d", *("e%d" % i for i in range(3000)))
    assert rb.get("d")[:5] == b"HYLL\x00" and rb.strlen("d") == 12304
    blob = rb.get("d")
    rb.set("copy", blob)
    assert rb.pfcount("copy") == rb.pfcount("d")


def test_not_an_hll_and_corrupt_hlls(r):
    r.set("s", "not an hll")
    with pytest.raises(redis.ResponseError, match="Key is not a valid HyperLogLog string value"):
        r.pfadd("s", "a")
    r.set("c", b"HYLL\x01" + b"\x00" * 10 + b"\x80" + b"\x7f\xfe")
    with pytest.raises(redis.ResponseError, match="Corrupted HLL object detected"):
        r.pfcount("c")
    r.hset("hash", "f", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE Operation against a key"):
        r.pfcount("hash")


def test_hll_sparse_max_bytes_is_acted_on(r):
    r.config_set("hll-sparse-max-bytes", 40)
    try:
        r.pfadd("h", *"abcdefgh")
        assert r.strlen("h") == 12304
    finally:
        r.config_set("hll-sparse-max-bytes", 3000)
    r.pfadd("h2", *"abcdefgh")
    assert r.strlen("h2") < 100
