"""MULTI/EXEC, WATCH and pipelines through redis-py."""

import pytest
import redis


def test_transaction_pipeline(r):
    with r.pipeline(transaction=True) as p:
        p.set("a", 1).incr("a").get("a").mget("a", "missing")
        assert p.execute() == [True, 2, "2", ["2", None]]


def test_transaction_runtime_error_does_not_abort(r):
    r.set("s", "abc")
    with r.pipeline(transaction=True) as p:
        p.set("a", 1).incr("s").incr("a")
        res = p.execute(raise_on_error=False)
    assert res[0] is True
    assert isinstance(res[1], redis.ResponseError)
    assert str(res[1]) == "value is not an integer or out of range"
    assert res[2] == 2
    assert r.get("a") == "2"


def test_transaction_queue_error_aborts(r):
    with r.pipeline(transaction=True) as p:
        p.set("a", 1)
        p.execute_command("NOSUCHCOMMAND", "x")
        p.set("b", 2)
        with pytest.raises(redis.ResponseError):
            p.execute()
    assert r.exists("a", "b") == 0


def test_transaction_arity_error_aborts(raw):
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("SET", "a", "1") == b"+QUEUED\r\n"
    assert raw.roundtrip("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert raw.roundtrip("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    assert raw.roundtrip("EXISTS", "a") == b":0\r\n"


def test_multi_exec_raw(raw):
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("SET", "a", "1") == b"+QUEUED\r\n"
    assert raw.roundtrip("INCR", "a") == b"+QUEUED\r\n"
    assert raw.roundtrip("EXEC") == b"*2\r\n+OK\r\n:2\r\n"
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("EXEC") == b"*0\r\n"


def test_multi_errors(raw):
    assert raw.roundtrip("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert raw.roundtrip("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert raw.roundtrip("WATCH", "x") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    assert raw.roundtrip("SET", "a", "1") == b"+QUEUED\r\n"
    assert raw.roundtrip("DISCARD") == b"+OK\r\n"
    assert raw.roundtrip("EXISTS", "a") == b":0\r\n"
    assert raw.roundtrip("WATCH") == b"-ERR wrong number of arguments for 'watch' command\r\n"


def test_watch_conflict_raises_watch_error(server, r):
    other = server.client()
    r.set("w", 1)
    with r.pipeline(transaction=True) as p:
        p.watch("w")
        assert p.get("w") == "1"
        other.set("w", 2)
        p.multi()
        p.set("w", 100)
        with pytest.raises(redis.WatchError):
            p.execute()
    assert r.get("w") == "2"
    other.close()


def test_watch_unchanged_commits(r):
    r.set("w", 1)
    with r.pipeline(transaction=True) as p:
        p.watch("w")
        p.multi()
        p.incr("w")
        assert p.execute() == [2]


def test_watch_missing_key_then_created(server, r):
    other = server.client()
    with r.pipeline(transaction=True) as p:
        p.watch("nk")
        other.set("nk", "x")
        p.multi()
        p.set("nk", "mine")
        with pytest.raises(redis.WatchError):
            p.execute()
    assert r.get("nk") == "x"
    other.close()


def test_watch_flushall_and_expire_touch_key(server, r):
    other = server.client()
    r.set("w", 1)
    with r.pipeline(transaction=True) as p:
        p.watch("w")
        other.flushall()
        p.multi()
        p.set("w", 5)
        with pytest.raises(redis.WatchError):
            p.execute()
    r.set("w", 1)
    with r.pipeline(transaction=True) as p:
        p.watch("w")
        other.expire("w", 100)
        p.multi()
        p.set("w", 5)
        with pytest.raises(redis.WatchError):
            p.execute()
    other.close()


def test_unwatch(server, r):
    other = server.client()
    r.set("w", 1)
    with r.pipeline(transaction=True) as p:
        p.watch("w")
        other.set("w", 2)
        p.unwatch()
        p.multi()
        p.set("w", 3)
        assert p.execute() == [True]
    assert r.get("w") == "3"
    other.close()


def test_transaction_helper_retries_on_conflict(server, r):
    other = server.client()
    r.set("counter", 10)
    calls = []

    def work(pipe):
        value = int(pipe.get("counter"))
        calls.append(value)
        if len(calls) == 1:
            # A concurrent writer changes the watched key between WATCH and EXEC.
            other.incr("counter", 5)
        pipe.multi()
        pipe.set("counter", value * 2)

    result = r.transaction(work, "counter")
    assert calls == [10, 15]
    assert result == [True]
    assert r.get("counter") == "30"
    other.close()


def test_transaction_helper_value_from_callable(r):
    r.set("a", 3)

    def work(pipe):
        v = int(pipe.get("a"))
        pipe.multi()
        pipe.set("a", v + 1)
        return v

    assert r.transaction(work, "a", value_from_callable=True) == 3
    assert r.get("a") == "4"


def test_plain_pipeline(r):
    with r.pipeline(transaction=False) as p:
        for i in range(500):
            p.set(f"k{i}", i)
        for i in range(500):
            p.incr(f"k{i}")
        p.get("k499")
        res = p.execute()
    assert res[:500] == [True] * 500
    assert res[500:1000] == list(range(1, 501))
    assert res[-1] == "500"


def test_plain_pipeline_errors_in_place(r):
    r.set("s", "abc")
    with r.pipeline(transaction=False) as p:
        p.set("a", 1).incr("s").get("a")
        res = p.execute(raise_on_error=False)
    assert res[0] is True
    assert isinstance(res[1], redis.ResponseError)
    assert res[2] == "1"


def test_multi_select_inside(server, raw):
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("SELECT", "2") == b"+QUEUED\r\n"
    assert raw.roundtrip("SET", "in2", "v") == b"+QUEUED\r\n"
    assert raw.roundtrip("EXEC") == b"*2\r\n+OK\r\n+OK\r\n"
    # The SELECT inside EXEC sticks to the connection.
    assert raw.roundtrip("GET", "in2") == b"$1\r\nv\r\n"
    assert server.client(db=2).get("in2") == "v"
