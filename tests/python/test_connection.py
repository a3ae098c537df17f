"""Connection commands: PING/ECHO, SELECT, HELLO/RESP3, CLIENT, AUTH."""

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import against_redis
from resp import RawConn
from helpers import wait_until

# CLIENT SETINFO and the lib-name/lib-ver fields arrived in Redis 7.2; the
# reference server installed here may be 7.0, so these are skipped against it.
needs_72 = pytest.mark.skipif(against_redis(), reason="Redis 7.2+ behaviour; reference server may be 7.0")


def test_ping_echo(r, raw):
    assert r.ping() is True
    assert r.echo("x y") == "x y"
    assert raw.roundtrip("PING") == b"+PONG\r\n"
    assert raw.roundtrip("PING", "") == b"$0\r\n\r\n"
    assert raw.roundtrip("PING", "hello") == b"$5\r\nhello\r\n"
    assert raw.roundtrip("PING", "a", "b") == b"-ERR wrong number of arguments for 'ping' command\r\n"
    assert raw.roundtrip("ECHO") == b"-ERR wrong number of arguments for 'echo' command\r\n"


def test_inline_commands(raw):
    raw.send(b"PING\r\n")
    assert raw.read_reply() == b"+PONG\r\n"
    raw.send(b"SET inline 'hello world'\r\n")
    assert raw.read_reply() == b"+OK\r\n"
    raw.send(b"GET inline\n")
    assert raw.read_reply() == b"$11\r\nhello world\r\n"


def test_unknown_command(r, raw):
    assert raw.roundtrip("NOSUCH", "a", "b") == b"-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' \r\n"
    # Redis 8: no "with args" part when there are none.
    assert raw.roundtrip("nosuch") == b"-ERR unknown command 'nosuch'\r\n"
    with pytest.raises(redis.ResponseError, match="^unknown command 'FOO'"):
        r.execute_command("FOO")


def test_select_raw(raw):
    assert raw.roundtrip("SELECT", "1") == b"+OK\r\n"
    assert raw.roundtrip("SET", "k", "db1") == b"+OK\r\n"
    assert raw.roundtrip("SELECT", "0") == b"+OK\r\n"
    assert raw.roundtrip("GET", "k") == b"$-1\r\n"
    assert raw.roundtrip("SELECT", "16") == b"-ERR DB index is out of range\r\n"
    assert raw.roundtrip("SELECT", "x") == b"-ERR value is not an integer or out of range\r\n"


def test_resp3_client(r3):
    assert r3.set("k", "v") is True
    assert r3.get("k") == "v"
    assert r3.get("missing") is None
    assert r3.incr("n") == 1
    assert r3.mget("k", "missing") == ["v", None]
    assert r3.exists("k") == 1
    assert r3.ttl("k") == -1
    info = r3.client_info()
    assert info["resp"] == "3"
    hello = r3.execute_command("HELLO")
    assert hello["proto"] == 3


def test_resp3_raw(raw):
    reply = raw.roundtrip("HELLO", "3")
    assert reply.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n")
    assert b"$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:" in reply
    assert reply.endswith(b"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n")
    assert raw.roundtrip("GET", "missing") == b"_\r\n"
    assert raw.roundtrip("SET", "k", "v") == b"+OK\r\n"
    assert raw.roundtrip("GET", "k") == b"$1\r\nv\r\n"
    assert raw.roundtrip("MGET", "k", "missing") == b"*2\r\n$1\r\nv\r\n_\r\n"
    assert raw.roundtrip("HELLO", "2").startswith(b"*14\r\n$6\r\nserver\r\n")
    assert raw.roundtrip("GET", "missing") == b"$-1\r\n"


def test_hello_errors(raw):
    assert raw.roundtrip("HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"
    assert raw.roundtrip("HELLO", "1") == b"-NOPROTO unsupported protocol version\r\n"
    assert raw.roundtrip("HELLO", "x") == b"-ERR Protocol version is not an integer or out of range\r\n"
    assert raw.roundtrip("HELLO", "3", "BOGUS") == b"-ERR Syntax error in HELLO option 'BOGUS'\r\n"


def test_hello_setname(r):
    flat = r.execute_command("HELLO", "2", "SETNAME", "via-hello")
    hello = dict(zip(flat[::2], flat[1::2]))
    assert hello["proto"] == 2
    assert hello["server"] == "redis"
    assert hello["mode"] == "standalone"
    assert r.client_getname() == "via-hello"


def test_client_setname_getname(r):
    assert r.client_getname() is None
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == "worker-1"
    with pytest.raises(redis.ResponseError, match="^Client names cannot contain spaces, newlines or special characters.$"):
        r.client_setname("bad name")
    assert r.client_setname("") is True
    assert r.client_getname() is None


def test_client_id_list_info(server, r):
    r.client_setname("lister")
    cid = r.client_id()
    assert isinstance(cid, int) and cid > 0
    mine = [c for c in r.client_list() if str(c["id"]) == str(cid)]
    assert len(mine) == 1
    me = mine[0]
    assert me["name"] == "lister"
    assert me["db"] == "0"
    assert me["cmd"] == "client|list"
    assert me["resp"] == "2"
    assert me["addr"].startswith("127.0.0.1:")
    assert me["laddr"] == "127.0.0.1:%d" % server.port
    info = r.client_info()
    assert str(info["id"]) == str(cid)
    assert info["cmd"] == "client|info"
    assert info["name"] == "lister"
    assert str(r.client_list(client_id=[cid])[0]["id"]) == str(cid)
    assert r.client_list(_type="normal")
    with pytest.raises(redis.ResponseError):
        r.execute_command("CLIENT", "LIST", "TYPE", "bogus")


@needs_72
def test_client_lib_info_from_redis_py(r):
    info = r.client_info()
    assert info["lib-name"] == "redis-py"
    assert info["lib-ver"] == redis.__version__


@needs_72
def test_client_setinfo(r):
    assert r.client_setinfo("lib-name", "mylib") is True
    assert r.client_setinfo("lib-ver", "1.2.3") is True
    info = r.client_info()
    assert info["lib-name"] == "mylib"
    assert info["lib-ver"] == "1.2.3"
    with pytest.raises(redis.ResponseError, match="^lib-name cannot contain spaces, newlines or special characters.$"):
        r.execute_command("CLIENT", "SETINFO", "lib-name", "bad name")
    with pytest.raises(redis.ResponseError, match="^Unrecognized option 'bogus'$"):
        r.execute_command("CLIENT", "SETINFO", "bogus", "x")


def test_client_kill(server, r):
    victim = server.client()
    victim.ping()
    vid = victim.client_id()
    assert r.client_kill_filter(_id=vid) == 1
    # redis-py reconnects transparently on the next command; the old
    # connection must be gone from CLIENT LIST.
    wait_until(lambda: all(str(c["id"]) != str(vid) for c in r.client_list()))
    assert r.client_kill_filter(_id=10**9) == 0
    with pytest.raises(redis.ResponseError, match="^No such client$"):
        r.client_kill("1.2.3.4:5")
    victim.close()


def test_client_kill_raw_connection_closes(server, r):
    conn = RawConn(server.port)
    cid = int(conn.roundtrip("CLIENT", "ID")[1:-2])
    addr = r.client_list(client_id=[cid])[0]["addr"]
    assert r.client_kill(addr) is True
    with pytest.raises(ConnectionError):
        conn.roundtrip("PING")
    conn.close()


def test_client_kill_skipme(r):
    assert r.client_kill_filter(_id=r.client_id(), skipme=True) == 0
    assert r.ping() is True


def test_client_errors(raw):
    assert raw.roundtrip("CLIENT", "BOGUS") == b"-ERR unknown subcommand 'BOGUS'. Try CLIENT HELP.\r\n"
    assert raw.roundtrip("CLIENT", "SETNAME") == b"-ERR wrong number of arguments for 'client|setname' command\r\n"
    assert raw.roundtrip("CLIENT") == b"-ERR wrong number of arguments for 'client' command\r\n"


def test_quit(raw):
    assert raw.roundtrip("QUIT") == b"+OK\r\n"
    with pytest.raises(ConnectionError):
        raw.roundtrip("PING")


def test_auth_required(auth_server):
    # AuthenticationError is a ConnectionError, which redis-py would retry.
    no_retry = Retry(NoBackoff(), 0)
    c = auth_server.client(retry=no_retry)
    with pytest.raises(redis.AuthenticationError):
        c.ping()
    c.close()
    good = auth_server.client(password="s3cret")
    assert good.ping() is True
    assert good.set("k", "v") is True
    good.close()
    with pytest.raises(redis.AuthenticationError):
        auth_server.client(password="wrong", retry=no_retry).ping()
    resp3 = auth_server.client(password="s3cret", protocol=3)
    assert resp3.get("k") == "v"
    resp3.close()


def test_auth_raw(auth_server):
    conn = RawConn(auth_server.port)
    assert conn.roundtrip("GET", "k") == b"-NOAUTH Authentication required.\r\n"
    assert conn.roundtrip("AUTH", "nope") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert conn.roundtrip("AUTH", "other", "s3cret") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert conn.roundtrip("AUTH", "s3cret") == b"+OK\r\n"
    assert conn.roundtrip("PING") == b"+PONG\r\n"
    conn.close()
    conn = RawConn(auth_server.port)
    assert conn.roundtrip("AUTH", "default", "s3cret") == b"+OK\r\n"
    conn.close()
    conn = RawConn(auth_server.port)
    assert conn.roundtrip("HELLO", "3", "AUTH", "default", "wrong") == (
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    )
    assert conn.roundtrip("HELLO", "3", "AUTH", "default", "s3cret").startswith(b"%7\r\n")
    assert conn.roundtrip("PING") == b"+PONG\r\n"
    conn.close()


def test_auth_without_password_configured(raw):
    assert raw.roundtrip("AUTH", "x") == (
        b"-ERR AUTH <password> called without any password configured for the default user. "
        b"Are you sure your configuration is correct?\r\n"
    )
    # The default user is `nopass` then: any password is accepted for it.
    assert raw.roundtrip("AUTH", "default", "x") == b"+OK\r\n"
    assert raw.roundtrip("AUTH", "other", "x") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


@needs_72
def test_hello_before_auth(auth_server):
    conn = RawConn(auth_server.port)
    assert conn.roundtrip("HELLO", "3") == (
        b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        b"HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
        b"select the RESP protocol version at the same time\r\n"
    )
    conn.close()


def test_resp3_types_raw(raw):
    raw.roundtrip("HELLO", "3")
    assert raw.roundtrip("CONFIG", "GET", "maxmemory") == b"%1\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"
    assert raw.roundtrip("INCRBYFLOAT", "f", "1.5") == b"$3\r\n1.5\r\n"
    assert raw.roundtrip("SET", "k", "v", "GET") == b"_\r\n"
    assert raw.roundtrip("OBJECT", "ENCODING", "missing") == b"_\r\n"
    assert raw.roundtrip("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("GET", "missing") == b"+QUEUED\r\n"
    assert raw.roundtrip("EXEC") == b"*1\r\n_\r\n"


def test_resp3_redis_py_parsing(r3):
    assert r3.config_get("maxmemory") == {"maxmemory": "0"}
    assert r3.incrbyfloat("f", 2.5) == 2.5
    r3.mset({"a": 1, "b": 2})
    assert sorted(r3.keys()) == ["a", "b", "f"]
    cursor, keys = r3.scan(0, count=100)
    assert cursor == 0 and sorted(keys) == ["a", "b", "f"]
    assert r3.lcs("a", "b", idx=True)["len"] == 0
    with r3.pipeline(transaction=True) as p:
        p.incr("a").get("missing")
        assert p.execute() == [2, None]


def test_client_reply_raw(raw):
    raw.cmd("CLIENT", "REPLY", "OFF")
    raw.cmd("SET", "a", "1")
    assert raw.roundtrip("CLIENT", "REPLY", "ON") == b"+OK\r\n"
    raw.cmd("CLIENT", "REPLY", "SKIP")
    raw.cmd("SET", "a", "2")
    assert raw.roundtrip("GET", "a") == b"$1\r\n2\r\n"


def test_reset_raw(raw):
    raw.roundtrip("HELLO", "3")
    assert raw.roundtrip("SELECT", "3") == b"+OK\r\n"
    assert raw.roundtrip("CLIENT", "SETNAME", "n") == b"+OK\r\n"
    assert raw.roundtrip("MULTI") == b"+OK\r\n"
    assert raw.roundtrip("RESET") == b"+RESET\r\n"
    # Back to RESP2, db 0, no name, no transaction.
    assert raw.roundtrip("GET", "missing") == b"$-1\r\n"
    assert raw.roundtrip("CLIENT", "GETNAME") == b"$-1\r\n"
    assert raw.roundtrip("EXEC") == b"-ERR EXEC without MULTI\r\n"
    info = raw.roundtrip("CLIENT", "INFO")
    assert b" db=0 " in info


def test_client_no_evict(r):
    assert r.execute_command("CLIENT", "NO-EVICT", "on") in (True, "OK")
    assert "e" in r.client_info()["flags"]
    assert r.execute_command("CLIENT", "NO-EVICT", "off") in (True, "OK")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("CLIENT", "NO-EVICT", "maybe")
