"""Server commands: INFO, CONFIG, COMMAND, TIME."""

import re
import time

import pytest
import redis

from conftest import against_redis


def test_info_sections(server, r):
    info = r.info()
    for field in ("redis_version", "redis_mode", "os", "arch_bits", "process_id", "run_id", "tcp_port",
                  "uptime_in_seconds", "connected_clients", "used_memory", "total_connections_received",
                  "total_commands_processed", "keyspace_hits", "keyspace_misses", "role"):
        assert field in info, field
    assert info["tcp_port"] == server.port
    assert info["redis_mode"] == "standalone"
    assert info["role"] == "master"
    assert re.fullmatch(r"[0-9a-f]{40}", info["run_id"])
    assert info["connected_clients"] >= 1
    assert info["process_id"] == server.proc.pid


def test_info_single_section(server, r):
    srv = r.info("server")
    assert srv["tcp_port"] == server.port
    assert "used_memory" not in srv
    assert "connected_clients" in r.info("clients")
    assert "used_memory" in r.info("memory")
    assert "total_commands_processed" in r.info("stats")
    assert r.info("nosuchsection") == {}
    raw = r.execute_command("INFO", "server", "clients")
    assert "# Server" in str(raw) or "tcp_port" in raw


def test_info_raw_format(raw):
    reply = raw.roundtrip("INFO", "server")
    header, _, body = reply.partition(b"\r\n")
    assert header.startswith(b"$")
    assert int(header[1:]) == len(body) - 2
    assert body.startswith(b"# Server\r\n")
    assert b"\r\nredis_version:" in body
    # RESP3 sends INFO as a verbatim string.
    raw.roundtrip("HELLO", "3")
    assert raw.roundtrip("INFO", "server").startswith(b"=")


def test_info_keyspace(r):
    assert r.info("keyspace") == {}
    r.set("a", 1)
    r.set("b", 1, ex=100)
    r.execute_command("SELECT", 3)
    r.set("c", 1)
    r.execute_command("SELECT", 0)
    ks = r.info("keyspace")
    assert ks["db0"]["keys"] == 2
    assert ks["db0"]["expires"] == 1
    assert ks["db3"]["keys"] == 1
    assert "db1" not in ks


def test_info_stats_hits_misses(r):
    r.config_resetstat()
    r.set("a", 1)
    r.get("a")
    r.get("a")
    r.get("missing")
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 2
    assert stats["keyspace_misses"] == 1
    assert r.config_resetstat() is True
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 0
    assert stats["keyspace_misses"] == 0


def test_info_everything(r):
    info = r.info("everything")
    assert "redis_version" in info and "keyspace_hits" in info
    assert "redis_version" in r.info("all")
    assert "redis_version" in r.info("default")


def test_config_get(server, r):
    assert r.config_get("port") == {"port": str(server.port)}
    assert r.config_get("databases") == {"databases": "16"}
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    assert r.config_get("nosuchparam") == {}
    got = r.config_get("max*")
    assert "maxmemory" in got and "maxclients" in got
    assert all(k.startswith("max") for k in got)
    both = r.config_get("hz", "timeout")
    assert set(both) == {"hz", "timeout"}
    everything = r.config_get("*")
    assert len(everything) > 10


def test_config_set(r):
    old = r.config_get("hz")["hz"]
    try:
        assert r.config_set("hz", "50") is True
        assert r.config_get("hz") == {"hz": "50"}
    finally:
        r.config_set("hz", old)
    old_policy = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        assert r.config_set("maxmemory-policy", "allkeys-lru") is True
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
    finally:
        r.config_set("maxmemory-policy", old_policy)
    old_timeout = r.config_get("timeout")["timeout"]
    try:
        # Several parameters at once (7.0+), applied together.
        assert r.execute_command("CONFIG", "SET", "hz", "20", "timeout", "300") in (True, "OK")
        assert r.config_get("hz", "timeout") == {"hz": "20", "timeout": "300"}
    finally:
        r.execute_command("CONFIG", "SET", "hz", old, "timeout", old_timeout)


def test_config_set_memory_units(r):
    try:
        assert r.config_set("maxmemory", "1mb") is True
        assert r.config_get("maxmemory") == {"maxmemory": "1048576"}
    finally:
        r.config_set("maxmemory", "0")


def test_config_set_errors(r):
    with pytest.raises(redis.ResponseError, match=r"^Unknown option or number of arguments for CONFIG SET - 'nosuch'$"):
        r.config_set("nosuch", "1")
    with pytest.raises(redis.ResponseError,
                       match=r"^CONFIG SET failed \(possibly related to argument 'hz'\) - argument couldn't be parsed into an integer$"):
        r.config_set("hz", "abc")
    with pytest.raises(redis.ResponseError,
                       match=r"^CONFIG SET failed \(possibly related to argument 'databases'\) - can't set immutable config$"):
        r.config_set("databases", "8")
    with pytest.raises(redis.ResponseError,
                       match=r"^CONFIG SET failed \(possibly related to argument 'hz'\) - duplicate parameter$"):
        r.execute_command("CONFIG", "SET", "hz", "10", "hz", "20")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'config\|set' command$"):
        r.execute_command("CONFIG", "SET", "hz")
    with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'BOGUS'. Try CONFIG HELP.$"):
        r.execute_command("CONFIG", "BOGUS")


def test_command_count_info(r):
    count = r.command_count()
    assert isinstance(count, int) and count > 20
    get, set_, missing = plain(r).execute_command("COMMAND", "INFO", "get", "set", "nosuchcmd")
    assert missing is None
    name, arity, flags, first, last, step = get[:6]
    assert (name, arity, first, last, step) == ("get", 2, 1, 1, 1)
    assert set(flags) >= {"readonly", "fast"}
    assert set_[0] == "set" and set_[1] == -3
    assert "write" in set_[2]
    assert len(get) == 10


def test_command_raw(raw):
    reply = raw.roundtrip("COMMAND", "INFO", "get")
    assert reply.startswith(b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n")
    assert raw.roundtrip("COMMAND", "INFO", "nosuchcmd") == b"*1\r\n$-1\r\n"
    count = raw.roundtrip("COMMAND", "COUNT")
    assert count.startswith(b":")
    everything = raw.roundtrip("COMMAND")
    assert everything.startswith(b"*" + count[1:-2] + b"\r\n")


def plain(r):
    """Drops redis-py's COMMAND reply parser, which only fits bare COMMAND."""
    r.response_callbacks.pop("COMMAND", None)
    return r


def test_command_docs(r):
    docs = plain(r).execute_command("COMMAND", "DOCS", "get")
    assert docs[0] == "get"
    entry = dict(zip(docs[1][::2], docs[1][1::2]))
    if not against_redis():  # summaries were reworded in 7.2
        assert entry["summary"] == "Returns the string value of a key."
    assert entry["since"] == "1.0.0"
    assert entry["group"] == "string"


def test_command_docs_raw(raw):
    assert raw.roundtrip("COMMAND", "DOCS", "nosuchcmd") == b"*0\r\n"
    reply = raw.roundtrip("COMMAND", "DOCS", "echo")
    assert reply.startswith(b"*2\r\n$4\r\necho\r\n")
    assert b"$7\r\nsummary\r\n$38\r\nReturns the given string.\r\n" in reply or b"$7\r\nsummary\r\n" in reply


def test_command_getkeys(r):
    keys = plain(r).execute_command("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2")
    assert keys == ["a", "b"]
    with pytest.raises(redis.ResponseError, match="^The command has no key arguments$"):
        r.execute_command("COMMAND", "GETKEYS", "ECHO", "x")
    with pytest.raises(redis.ResponseError, match="^Invalid command specified$"):
        r.execute_command("COMMAND", "GETKEYS", "NOSUCH", "a")
    with pytest.raises(redis.ResponseError, match="^Invalid number of arguments specified for command$"):
        r.execute_command("COMMAND", "GETKEYS", "GET", "a", "b")


def test_command_list(r):
    names = plain(r).execute_command("COMMAND", "LIST")
    assert {"get", "set", "multi", "exec", "client", "config"} <= set(names)
    assert sorted(r.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "mse*")) == ["mset", "msetex", "msetnx"]


def test_time(r):
    secs, micros = r.time()
    assert abs(secs + micros / 1e6 - time.time()) < 5
    assert 0 <= micros < 1_000_000


def test_dbsize_lastsave(r):
    r.mset({"a": 1, "b": 2})
    assert r.dbsize() == 2
    if against_redis():
        return
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'dbsize' command$"):
        r.execute_command("DBSIZE", "x")


@pytest.mark.skipif(against_redis(), reason="starts tern-server with its own arguments")
def test_config_file_and_overrides(tmp_path):
    from servers import Server, tern_bin

    conf = tmp_path / "tern.conf"
    conf.write_text("# a redis.conf-style file\nport 0\nhz 20\ntimeout 7\nsave \"\"\nappendonly no\n")
    srv = Server([tern_bin(), str(conf), "--threads", "1", "--timeout", "9"]).start()
    try:
        c = srv.client()
        assert c.config_get("hz") == {"hz": "20"}
        # Command-line directives come after the file and win.
        assert c.config_get("timeout") == {"timeout": "9"}
        assert c.config_get("appendonly") == {"appendonly": "no"}
        c.close()
    finally:
        srv.stop()


@pytest.mark.skipif(against_redis(), reason="starts tern-server with its own arguments")
def test_bad_directive_stops_startup(tmp_path):
    import subprocess

    from servers import tern_bin

    out = subprocess.run([tern_bin(), "--port", "0", "--hz", "abc"], capture_output=True, timeout=20)
    assert out.returncode != 0
    assert b"hz" in out.stdout + out.stderr


def test_shutdown():
    from conftest import start_server

    from redis.backoff import NoBackoff
    from redis.retry import Retry

    srv = start_server(1)
    # Without retries: redis-py would otherwise reconnect to a server that is gone.
    c = srv.client(retry=Retry(NoBackoff(), 0))
    c.set("k", "v")
    # redis-py treats the dropped connection as success and returns None.
    assert c.shutdown(nosave=True) is None
    assert srv.proc.wait(timeout=10) == 0


def test_info_eventloop_and_main_thread_fields(r):
    """Redis 7.2's event-loop figures (turns, their time, the part in
    commands, and their rates) and the main thread's CPU (Tern's: the
    worker that answers INFO) are there and move as the server works."""
    before = r.info("stats")
    for i in range(50):
        r.set(f"k{i}", "v")
    after = r.info("stats")
    assert after["eventloop_cycles"] > before["eventloop_cycles"]
    assert after["eventloop_duration_sum"] > before["eventloop_duration_sum"]
    assert after["eventloop_duration_cmd_sum"] >= before["eventloop_duration_cmd_sum"]
    assert after["eventloop_duration_cmd_sum"] <= after["eventloop_duration_sum"] + 1000
    for k in ("instantaneous_eventloop_cycles_per_sec", "instantaneous_eventloop_duration_usec"):
        assert isinstance(after[k], int) and after[k] >= 0
    cpu = r.info("cpu")
    assert 0 <= cpu["used_cpu_user_main_thread"] <= cpu["used_cpu_user"] + 0.01
    assert 0 <= cpu["used_cpu_sys_main_thread"] <= cpu["used_cpu_sys"] + 0.01
    mem = r.info("memory")
    for k in ("mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves", "mem_cluster_links",
              "active_defrag_running"):
        assert mem[k] == 0
