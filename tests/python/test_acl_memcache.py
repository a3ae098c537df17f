"""ACL users on the memcached port (Tern only: memcached has no ACL, so
there is no reference to compare with; these assert the behaviour chosen
here, and fail until Tern has users).

Authentication is memcached's text-protocol one (`memcached -Y`): the first
command must be a `set` of any key whose data is `<username> <password>`,
checked as AUTH checks them; `STORED` on success, `CLIENT_ERROR
authentication failure` for a wrong password, a disabled or a missing
user (one message for all three, as AUTH's WRONGPASS), and `CLIENT_ERROR
unauthenticated` for any other command before it (then the rest of what
was sent with it is dropped, as memcached does). A server whose `default`
user is on with nopass needs no authentication, as on the RESP port.

A command refused by the user's rules. memcached has no such refusal;
the closest is a CLIENT_ERROR (the client asked for something it may not
do, and the connection stays usable, as after `CLIENT_ERROR bad data
chunk`), carrying Redis's NOPERM text so that it reads as the RESP port's
refusal and names the same command (the Redis command the memcached one
runs as: set -> set, get/gets -> get, delete -> del, flush_all ->
flushall):

    CLIENT_ERROR NOPERM User <name> has no permissions to run the '<cmd>' command
    CLIENT_ERROR NOPERM No permissions to access a key

The refused command's data block is consumed with it (no stray ERROR for
the data line); the refusal is in ACL LOG, as a RESP refusal is.
"""

import os
import socket

import pytest
from pymemcache.client.base import Client as PyClient
from pymemcache.exceptions import MemcacheClientError

from servers import start_tern, tern_bin

AGAINST_VALKEY = os.environ.get("TERN_ACL_AGAINST", "") == "valkey"
pytestmark = pytest.mark.skipif(AGAINST_VALKEY, reason="Tern only: valkey has no memcached port")

READ_TIMEOUT = 5.0

CONF = """requirepass s3cret
user alice on >secret ~* +@all
user reader on >rpw ~user:* +@read
user writer on >wpw ~user:* +@read +@write -flushall
user off1 off >secret ~* +@all
user np on nopass ~np:* +@all
"""


def exchange(port, data):
    """Sends `data`, half-closes, returns every byte until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                return out
            out += b


def creds(user, password):
    data = f"{user} {password}".encode()
    return b"set auth 0 0 %d\r\n%s\r\n" % (len(data), data)


@pytest.fixture(scope="module", params=[1, 2], ids=["t1", "t2"])
def tern(request, tmp_path_factory):
    binary = tern_bin()
    if not os.path.exists(binary):
        pytest.exit(f"{binary} not found: run `cargo build` first or set TERN_BIN", returncode=2)
    conf = tmp_path_factory.mktemp("acl-mc") / "tern.conf"
    conf.write_text(CONF)
    srv = start_tern(binary, request.param, conf=str(conf))
    yield srv
    srv.stop()


@pytest.fixture
def mc(tern):
    r = tern.client(password="s3cret")
    r.flushall()
    r.acl_log_reset()
    r.close()
    return tern.memcache_port()


def test_unauthenticated_refused(mc):
    assert exchange(mc, b"get foo\r\n") == b"CLIENT_ERROR unauthenticated\r\n"
    assert exchange(mc, b"flush_all\r\n") == b"CLIENT_ERROR unauthenticated\r\n"


def test_user_authenticates(mc):
    got = exchange(mc, creds("alice", "secret") + b"set k 0 0 1\r\nv\r\nget k\r\n")
    assert got == b"STORED\r\nSTORED\r\nVALUE k 0 1\r\nv\r\nEND\r\n"


def test_default_user_authenticates(mc):
    got = exchange(mc, creds("default", "s3cret") + b"get k\r\n")
    assert got == b"STORED\r\nEND\r\n"


@pytest.mark.parametrize("user,password", [("alice", "wrong"), ("off1", "secret"), ("nosuch", "secret")])
def test_bad_credentials(mc, user, password):
    # A failed attempt leaves the connection open for another.
    got = exchange(mc, creds(user, password) + creds("alice", "secret") + b"get k\r\n")
    assert got == b"CLIENT_ERROR authentication failure\r\nSTORED\r\nEND\r\n"


def test_nopass_user(mc):
    got = exchange(mc, creds("np", "anything") + b"set np:1 0 0 1\r\nx\r\nget np:1\r\n")
    assert got == b"STORED\r\nSTORED\r\nVALUE np:1 0 1\r\nx\r\nEND\r\n"


def test_read_only_user(mc, tern):
    r = tern.client(password="s3cret")
    r.set("user:x", "old")
    got = exchange(mc, creds("reader", "rpw") + b"get user:x\r\nset user:x 0 0 3\r\nnew\r\nget user:x\r\n")
    assert got == (b"STORED\r\nVALUE user:x 0 3\r\nold\r\nEND\r\n"
                   b"CLIENT_ERROR NOPERM User reader has no permissions to run the 'set' command\r\n"
                   b"VALUE user:x 0 3\r\nold\r\nEND\r\n")
    assert r.get("user:x") == "old"
    log = r.acl_log()
    assert [(e["reason"], e["object"], e["username"]) for e in log] == [("command", "set", "reader")]
    r.close()


def test_key_outside_patterns(mc, tern):
    r = tern.client(password="s3cret")
    r.set("other", "v")
    got = exchange(mc, creds("writer", "wpw") + b"get other\r\nset other 0 0 1\r\nx\r\n"
                   b"get user:a other\r\nset user:a 0 0 1\r\ny\r\nget user:a\r\n")
    assert got == (b"STORED\r\n"
                   b"CLIENT_ERROR NOPERM No permissions to access a key\r\n"
                   b"CLIENT_ERROR NOPERM No permissions to access a key\r\n"
                   b"CLIENT_ERROR NOPERM No permissions to access a key\r\n"
                   b"STORED\r\nVALUE user:a 0 1\r\ny\r\nEND\r\n")
    assert r.get("other") == "v"
    assert {(e["reason"], e["object"]) for e in r.acl_log()} == {("key", "other")}
    r.close()


def test_flush_all_needs_flushall(mc, tern):
    r = tern.client(password="s3cret")
    r.set("user:k", "v")
    got = exchange(mc, creds("writer", "wpw") + b"flush_all\r\n")
    assert got == b"STORED\r\nCLIENT_ERROR NOPERM User writer has no permissions to run the 'flushall' command\r\n"
    assert r.get("user:k") == "v"
    assert exchange(mc, creds("alice", "secret") + b"flush_all\r\n") == b"STORED\r\nOK\r\n"
    assert r.get("user:k") is None
    r.close()


def test_delete_needs_write(mc, tern):
    r = tern.client(password="s3cret")
    r.set("user:d", "v")
    got = exchange(mc, creds("reader", "rpw") + b"delete user:d\r\n")
    assert got == b"STORED\r\nCLIENT_ERROR NOPERM User reader has no permissions to run the 'del' command\r\n"
    assert r.get("user:d") == "v"
    r.close()


def test_pymemcache(mc):
    c = PyClient(("127.0.0.1", mc), timeout=READ_TIMEOUT, connect_timeout=READ_TIMEOUT)
    try:
        # memcached answers the credentials `set` even under noreply.
        assert c.set("auth", b"reader rpw", noreply=False) is True
        assert c.get("user:none") is None
        with pytest.raises(MemcacheClientError):
            c.set("user:x", b"v", noreply=False)
        # pymemcache drops its connection after a CLIENT_ERROR; that the
        # server's side stays usable is test_read_only_user's.
    finally:
        c.close()


def test_hardened_default_off(tmp_path):
    """No requirepass: `default` off is what makes the port ask."""
    conf = tmp_path / "tern.conf"
    conf.write_text("user default off\nuser alice on >secret ~* +@all\n")
    srv = start_tern(tern_bin(), 1, conf=str(conf))
    try:
        mc = srv.memcache_port()
        assert exchange(mc, b"get foo\r\n") == b"CLIENT_ERROR unauthenticated\r\n"
        assert exchange(mc, creds("default", "x")) == b"CLIENT_ERROR authentication failure\r\n"
        assert exchange(mc, creds("alice", "secret") + b"get foo\r\n") == b"STORED\r\nEND\r\n"
    finally:
        srv.stop()
