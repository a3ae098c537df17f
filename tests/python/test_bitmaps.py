"""Bitmaps as a redis-py user calls them: a bitmap is a string."""

import pytest
import redis

from conftest import against_redis


def test_setbit_getbit_share_the_string(r):
    assert r.setbit("flags", 7, 1) == 0
    assert r.setbit("flags", 7, 1) == 1
    assert r.get("flags") == "\x01"
    assert r.getbit("flags", 7) == 1 and r.getbit("flags", 1000) == 0
    r.append("flags", "A")
    assert r.getbit("flags", 9) == 1
    r.setrange("flags", 0, "\x80")
    assert r.getbit("flags", 0) == 1 and r.getbit("flags", 7) == 0
    with pytest.raises(redis.ResponseError, match="bit offset is not an integer or out of range"):
        r.setbit("flags", 4294967296, 1)
    with pytest.raises(redis.ResponseError, match="bit is not an integer or out of range"):
        # (redis-py's setbit sends any true value as 1.)
        r.execute_command("SETBIT", "flags", 0, 2)


def test_bitmaps_stay_in_their_item(r):
    """A bitmap too long to be embstr is kept beside its key, and SETBIT
    and BITFIELD change it there: it costs what the same bytes written by
    SET cost, before and after, and reads back the same."""
    assert r.setbit("bm:1", 1000, 1) == 0
    r.set("bm:2", b"\0" * 125 + b"\x80")
    assert r.object("encoding", "bm:1") == r.object("encoding", "bm:2") == "raw"
    size = r.memory_usage("bm:2")
    assert r.memory_usage("bm:1") == size
    assert r.setbit("bm:2", 3, 1) == 0 and r.setbit("bm:2", 3, 1) == 1
    assert r.execute_command("BITFIELD", "bm:2", "INCRBY", "u8", 16, 7) == [7]
    assert r.memory_usage("bm:2") == size
    assert r.getbit("bm:2", 3) == 1 and r.getbit("bm:2", 1000) == 1
    assert r.bitcount("bm:2") == 5 and r.strlen("bm:2") == 126
    # A change that grows it still works (and moves it to a buffer).
    assert r.setbit("bm:2", 2000, 1) == 0 and r.strlen("bm:2") == 251
    assert r.bitcount("bm:2") == 6


def test_bitcount_and_bitpos_ranges(r):
    r.set("s", "foobar")
    assert r.bitcount("s") == 26
    assert r.bitcount("s", 1, 1) == 6
    assert r.bitcount("s", 5, 30, mode="BIT") == 17
    assert r.bitcount("missing") == 0
    r.set("b", b"\xff\xf0\x00")
    assert r.bitpos("b", 0) == 12
    assert r.bitpos("b", 1, 2) == -1
    assert r.bitpos("b", 0, 7, 11, mode="BIT") == -1
    assert r.bitpos("missing", 0) == 0 and r.bitpos("missing", 1) == -1


@pytest.mark.skipif(against_redis(), reason="bitcount-simd is Tern's own directive")
def test_bitcount_simd_switch_changes_no_count(r):
    # Lengths around the AVX2 kernel's blocks (32 and 512 bytes), ranges
    # that start and end mid-byte: the same counts with the switch either way.
    data = bytes(i * 131 % 256 for i in range(5000))
    r.set("bm", data)
    ranges = [(0, -1, "BYTE"), (1, 1040, "BYTE"), (3, 4097, "BIT"), (13, 39990, "BIT"), (-600, -2, "BYTE")]
    counts = {}
    for simd in ("yes", "no"):
        assert r.config_set("bitcount-simd", simd)
        assert r.config_get("bitcount-simd") == {"bitcount-simd": simd}
        counts[simd] = [r.bitcount("bm")] + [r.bitcount("bm", s, e, mode=m) for s, e, m in ranges]
    bits = "".join(f"{b:08b}" for b in data)
    assert counts["yes"][0] == bits.count("1")
    assert counts["yes"][3] == bits[3:4098].count("1")
    assert counts["yes"] == counts["no"]
    with pytest.raises(redis.ResponseError, match="bitcount-simd"):
        r.config_set("bitcount-simd", "maybe")
    r.config_set("bitcount-simd", "yes")


@pytest.mark.skipif(against_redis(), reason="bitcount-alternate-scan is Tern's own directive")
def test_bitcount_alternate_scan_changes_no_count(r):
    # Over 256 KiB each count reads in the other order from the last: the
    # same count, counted again and again, with ranges cut mid-byte, and
    # with the switch off.
    data = bytes(i * 131 % 251 for i in range(600 * 1024 + 7))
    r.set("bm", data)
    whole = sum(bin(b).count("1") for b in data)
    part = sum(bin(b).count("1") for b in data[1:-1]) + bin(data[0] & 0x0F).count("1")
    for on in ("yes", "no"):
        assert r.config_set("bitcount-alternate-scan", on)
        assert r.config_get("bitcount-alternate-scan") == {"bitcount-alternate-scan": on}
        for _ in range(3):
            assert r.bitcount("bm") == whole
            assert r.bitcount("bm", 4, len(data) * 8 - 9, mode="BIT") == part
    r.config_set("bitcount-alternate-scan", "yes")


def test_bitop_every_operation(rb):
    rb.set("a", b"\x0f\xf0")
    rb.set("b", b"\xff")
    rb.set("c", b"\x01\x02\x03")
    want = {
        "AND": b"\x01\x00\x00", "OR": b"\xff\xf2\x03", "XOR": b"\xf1\xf2\x03", "DIFF": b"\x00\xf0\x00",
        "DIFF1": b"\xf0\x02\x03", "ANDOR": b"\x0f\x00\x00", "ONE": b"\xf0\xf2\x03",
    }
    for op, result in want.items():
        assert rb.bitop(op, "dst", "a", "b", "c") == 3, op
        assert rb.get("dst") == result, op
    assert rb.bitop("NOT", "dst", "a") == 2 and rb.get("dst") == b"\xf0\x0f"
    assert rb.bitop("AND", "dst", "none1", "none2") == 0 and rb.exists("dst") == 0
    with pytest.raises(redis.ResponseError, match="BITOP DIFF must be called with at least two source keys"):
        rb.bitop("DIFF", "dst", "a")


def test_bitfield_overflow_modes(r):
    bf = r.bitfield("bf")
    assert bf.set("i8", 0, 100).incrby("i8", 0, 100).get("i8", 0).execute() == [0, -56, -56]
    res = (r.bitfield("bf").overflow("SAT").incrby("i8", 0, 100).overflow("FAIL").incrby("i8", 0, 100)
           .overflow("WRAP").incrby("i8", 0, 100).execute())
    assert res == [44, None, -112]
    assert r.bitfield("bf").set("u4", "#3", 15).get("u4", "#3").execute() == [0, 15]
    # 0x90: u8 144, and bits 3..6 (1000) as i4: -8.
    assert r.bitfield_ro("bf", "u8", 0, items=[("i4", 3)]) == [144, -8]
    r.hset("h", "f", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.bitfield("h").get("u8", 0).execute()
