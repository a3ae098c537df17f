"""Fixtures: the real tern-server binary on an ephemeral port, driven by redis-py.

The server is started with `--port 0`; its start-up log names the port it got
(`... port=NNNN.`), which is read from its stdout with a deadline instead of
sleeping. Every server is stopped by its PID when its fixture ends.

Environment:
  TERN_BIN           the server binary (default: target/debug/tern-server)
  TERN_TEST_AGAINST  `redis` runs the suite against the reference redis-server
                     instead, to check that a test asserts Redis's behaviour.
"""

import os
import shutil

import pytest

from resp import RawConn
from servers import start_redis, start_tern, tern_bin

def against_redis():
    return os.environ.get("TERN_TEST_AGAINST", "") == "redis"


def start_server(threads, extra=()):
    if against_redis():
        return start_redis(shutil.which("redis-server") or "redis-server", extra)
    binary = tern_bin()
    if not os.path.exists(binary):
        pytest.exit(f"{binary} not found: run `cargo build` first or set TERN_BIN", returncode=2)
    return start_tern(binary, threads, extra)


@pytest.fixture(scope="session", params=[1, 2], ids=["t1", "t2"])
def server(request):
    srv = start_server(request.param)
    yield srv
    srv.stop()


@pytest.fixture
def r(server):
    """A redis-py client (RESP2, decoded replies) on a freshly flushed server."""
    c = server.client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def rb(server):
    """Like `r`, with raw bytes replies."""
    c = server.client(decode_responses=False)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def r3(server):
    """A RESP3 client (HELLO 3 at connect)."""
    c = server.client(protocol=3)
    c.flushall()
    yield c
    c.close()


@pytest.fixture(scope="session")
def auth_server():
    srv = start_server(1, ["--requirepass", "s3cret"])
    yield srv
    srv.stop()


@pytest.fixture
def raw(server):
    conn = RawConn(server.port)
    assert conn.roundtrip("FLUSHALL") == b"+OK\r\n"
    yield conn
    conn.close()
