"""Scripts that misbehave cost nothing else, and scripts' writes persist as
one unit: a script that allocates without end, recurses without end or
returns a table that holds itself gets an error and the server carries on;
an AOF holds a script's (and a transaction's) writes between MULTI and
EXEC, and a restart replays them."""

import glob
import os

import pytest

from conftest import start_server
from resp import RawConn


@pytest.fixture(scope="module")
def srv():
    s = start_server(2)
    yield s
    s.stop()


def test_a_script_that_allocates_without_end_gets_an_error(srv):
    r = srv.client()
    with pytest.raises(Exception, match="not enough memory"):
        r.eval("local s = 'x' while true do s = s .. s end", 0)
    assert r.eval("return 'still here'", 0) == "still here"


def test_endless_recursion_and_self_holding_tables(srv):
    r = srv.client()
    with pytest.raises(Exception, match="stack overflow"):
        r.eval("local function f(n) return f(n + 1) + 1 end return f(1)", 0)
    # As Redis: arrays nested as deep as the stack allows, then the error
    # (read raw: a client's parser may not recurse that deep).
    c = RawConn(srv.port)
    try:
        c.cmd("EVAL", "local t = {} t[1] = t return t", "0")
        raw = b""
        while not raw.endswith(b"\r\n-ERR reached lua stack limit\r\n"):
            chunk = c.sock.recv(65536)
            assert chunk, raw[-80:]
            raw += chunk
    finally:
        c.close()
    assert raw.endswith(b"-ERR reached lua stack limit\r\n") and raw.count(b"*1\r\n") > 7000, raw[-80:]
    assert r.ping()


def aof_text(directory):
    files = sorted(glob.glob(os.path.join(directory, "appendonlydir", "*.incr.aof")))
    return b"".join(open(f, "rb").read() for f in files)


def test_a_scripts_writes_reach_the_aof_as_one_transaction(tmp_path):
    s = start_server(2, ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(tmp_path)])
    try:
        r = s.client()
        r.eval("redis.call('SET', KEYS[1], 'a') redis.call('INCR', KEYS[2]) return 1", 2, "k1", "k2")
        r.eval("return redis.call('SET', KEYS[1], 'alone')", 1, "k3")
        p = r.pipeline(transaction=True)
        p.set("t1", "x")
        p.set("t2", "y")
        p.execute()
        text = aof_text(str(tmp_path))
    finally:
        s.stop()
    # Two writes: wrapped; one write: as it is.
    script = text.index(b"k1")
    assert text.rindex(b"MULTI", 0, script) < script < text.index(b"EXEC", script)
    assert text.index(b"k2") < text.index(b"EXEC", script)
    alone = text.index(b"k3")
    assert text.rfind(b"MULTI", 0, alone) < text.index(b"EXEC", script) < alone
    exec_at = text.index(b"t1")
    assert text.rindex(b"MULTI", 0, exec_at) > alone
    assert text.index(b"t2") < text.index(b"EXEC", exec_at)
    s = start_server(2, ["--appendonly", "yes", "--dir", str(tmp_path)])
    try:
        r = s.client()
        assert r.mget("k1", "k2", "k3", "t1", "t2") == ["a", "1", "alone", "x", "y"]
    finally:
        s.stop()
