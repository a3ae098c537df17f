"""RDB snapshots: SAVE then a restart gives back every type, TTL, hash field
TTL and memcached flags/CAS; files written by Debian's redis-server 7.0 and
by the current Redis (hash field TTLs included) load in Tern; Tern's files
pass redis-check-rdb and load in redis-server (7.0 for plain types, the
current Redis for hash field TTLs, skipped when absent);
SHUTDOWN SAVE/NOSAVE and the save at SIGTERM when a schedule is set."""

import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager

import pytest

from resp import RawConn
from servers import redis_unstable, start_redis, start_tern, tern_bin

REDIS70 = shutil.which("redis-server") or "/usr/bin/redis-server"
CHECK70 = shutil.which("redis-check-rdb") or "/usr/bin/redis-check-rdb"
FAR = 4_000_000_000_000  # ms since the epoch, year 2096


def tern(d, *extra, threads=2):
    binary = tern_bin()
    if not os.path.exists(binary):
        pytest.skip(f"{binary} not built")
    return start_tern(binary, threads, ["--dir", str(d), "--save", "", *extra])


def populate(c, field_ttls=False):
    """Every type in both its encodings, TTLs, two databases."""
    c.set("str", "hello")
    c.set("int", 12345)
    c.set("neg", -7)
    c.set("bigint", 2**62)
    c.set("long", "x" * 300)
    c.set("packme", "ab" * 200)
    c.set("ttl", "v", px=FAR - int(time.time() * 1000))
    c.execute_command("PEXPIREAT", "ttl", FAR)
    c.rpush("list", "a", "1", "-5", "100000", "x" * 100)
    c.rpush("biglist", *[f"e{i}" * (i % 7 + 1) for i in range(3000)])
    c.sadd("intset", 1, 2, 300, -70000, 2**40)
    c.sadd("set", "a", "b", "c")
    c.sadd("bigset", *[f"m{i}" for i in range(500)])
    c.zadd("zset", {"a": 1, "b": 2.5, "c": -0.125, "d": float("inf")})
    c.zadd("bigzset", {f"m{i}": i / 3 for i in range(300)})
    c.hset("hash", mapping={"a": "1", "b": "hello"})
    c.hset("bighash", mapping={f"f{i}": f"v{i}" * 3 for i in range(700)})
    c.hset("longval", mapping={"f": "y" * 100})
    if field_ttls:
        c.hset("hx", mapping={"f1": "v1", "f2": "v2", "f3": "v3"})
        c.execute_command("HPEXPIREAT", "hx", FAR, "FIELDS", 2, "f1", "f3")
        c.hset("bighx", mapping={f"f{i}": i for i in range(600)})
        c.execute_command("HPEXPIREAT", "bighx", FAR + 5, "FIELDS", 3, "f1", "f7", "f500")
    c.execute_command("SELECT", 3)
    c.set("in3", "three")
    c.execute_command("SELECT", 0)


def snapshot(server, dbs=(0, 3), field_ttls=False):
    out = {}
    for db in dbs:
        c = server.client(decode_responses=False, db=db)
        for k in sorted(c.keys("*")):
            t = c.type(k)
            if t == b"string":
                v = c.get(k)
            elif t == b"list":
                v = c.lrange(k, 0, -1)
            elif t == b"set":
                v = sorted(c.smembers(k))
            elif t == b"zset":
                v = c.zrange(k, 0, -1, withscores=True)
            else:
                v = sorted(c.hgetall(k).items())
                if field_ttls:
                    fields = [f for f, _ in v]
                    v = (v, c.execute_command("HPEXPIRETIME", k, "FIELDS", len(fields), *fields))
            out[(db, k)] = (t, v, c.execute_command("PEXPIRETIME", k))
        c.close()
    return out


def encodings(server):
    c = server.client(decode_responses=False)
    enc = {k: c.object("encoding", k) for k in c.keys("*")}
    c.close()
    return enc


def mc(port, *lines):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    f = s.makefile("rb")
    out = []
    for line, want_end in lines:
        s.sendall(line)
        got = b""
        while not got.endswith(want_end):
            chunk = f.readline()
            if not chunk:
                break
            got += chunk
        out.append(got)
    s.close()
    return out


def save(server):
    c = server.client()
    assert c.save()
    c.close()


@contextmanager
def up(server):
    """`server` for the block, stopped when it ends however it ends."""
    try:
        yield server
    finally:
        server.stop()


def saved(server, fill, field_ttls=False):
    """Runs `fill(client)` on `server`, SAVEs and stops it: what it held
    just before the save (see `snapshot`)."""
    with up(server):
        c = server.client()
        fill(c)
        want = snapshot(server, field_ttls=field_ttls)
        save(server)
        c.close()
    return want


def reloaded(server, field_ttls=False):
    """What `server`, started on a saved file, holds (see `snapshot`) and
    the encodings of its keys in db 0; the server is stopped after."""
    with up(server):
        return snapshot(server, field_ttls=field_ttls), encodings(server)


def populate_with_mc(server, field_ttls=False):
    """`populate`, plus a memcached item with flags."""

    def fill(c):
        populate(c, field_ttls=field_ttls)
        mc(server.memcache_port(), (b"set mc1 5 0 3\r\nabc\r\n", b"\r\n"))

    return fill


def test_save_and_restart_keep_everything(tmp_path):
    a = tern(tmp_path)
    try:
        c = a.client()
        before_save = c.lastsave()
        populate(c, field_ttls=True)
        mp = a.memcache_port()
        mc(mp, (b"set mc1 3735928559 0 3\r\nabc\r\n", b"\r\n"), (b"set mc2 7 0 5\r\n12345\r\n", b"\r\n"))
        gets = mc(mp, (b"gets mc1 mc2\r\n", b"END\r\n"))[0]
        info = c.info("persistence")
        assert info["rdb_changes_since_last_save"] > 0
        assert info["rdb_saves"] == 0
        save(a)
        info = c.info("persistence")
        assert (info["rdb_saves"], info["rdb_changes_since_last_save"], info["rdb_last_bgsave_status"]) == (1, 0, "ok")
        assert c.lastsave() >= before_save
        want, enc = snapshot(a, field_ttls=True), encodings(a)
        c.close()
    finally:
        a.stop()
    assert (tmp_path / "dump.rdb").exists()
    assert not list(tmp_path.glob("temp-*.rdb"))
    with up(tern(tmp_path)) as b:
        assert snapshot(b, field_ttls=True) == want
        assert encodings(b) == enc
        # Flags and CAS ids as they were.
        assert mc(b.memcache_port(), (b"gets mc1 mc2\r\n", b"END\r\n"))[0] == gets
        c = b.client()
        info = c.info("persistence")
        assert info["rdb_last_load_keys_loaded"] == len(want)
        assert info["rdb_changes_since_last_save"] == 0
        c.close()


def test_compression_and_checksum_switches(tmp_path):
    sizes = {}
    for comp in ("yes", "no"):
        d = tmp_path / comp
        d.mkdir()
        want = saved(tern(d, "--rdbcompression", comp, "--rdbchecksum", comp), lambda c: c.set("packme", "ab" * 5000))
        data = (d / "dump.rdb").read_bytes()
        sizes[comp] = len(data)
        assert (data[-8:] == b"\0" * 8) == (comp == "no")
        assert reloaded(tern(d))[0] == want
    assert sizes["yes"] < sizes["no"] - 5000


def test_redis70_file_loads_in_tern(tmp_path):
    if not os.path.exists(REDIS70):
        pytest.skip("no redis-server")
    rd = tmp_path / "redis"
    rd.mkdir()
    # Redis 7.0's own small-list and small-set encodings come along.
    want = saved(start_redis(REDIS70, ["--dir", str(rd)]), populate)
    td = tmp_path / "tern"
    td.mkdir()
    shutil.copy(rd / "dump.rdb", td / "dump.rdb")
    got, enc = reloaded(tern(td))
    assert got == want
    assert enc[b"hash"] == b"listpack"
    assert enc[b"bighash"] == b"hashtable"


def test_current_redis_file_with_field_ttls_loads_in_tern(tmp_path):
    r8 = redis_unstable()
    if not r8.exists():
        pytest.skip("redis-server-unstable absent")
    rd = tmp_path / "redis"
    rd.mkdir()
    want = saved(start_redis(str(r8), ["--dir", str(rd)]), lambda c: populate(c, field_ttls=True), field_ttls=True)
    td = tmp_path / "tern"
    td.mkdir()
    shutil.copy(rd / "dump.rdb", td / "dump.rdb")
    got, enc = reloaded(tern(td), field_ttls=True)
    assert got == want
    assert enc[b"hx"] == b"listpackex"


def test_tern_file_loads_in_redis70(tmp_path):
    if not os.path.exists(REDIS70):
        pytest.skip("no redis-server")
    t = tern(tmp_path)
    want = saved(t, populate_with_mc(t))
    data = (tmp_path / "dump.rdb").read_bytes()
    assert data[:9] == b"REDIS0010"
    check = subprocess.run([CHECK70, str(tmp_path / "dump.rdb")], capture_output=True, text=True)
    assert "RDB looks OK" in check.stdout, check.stdout
    assert reloaded(start_redis(REDIS70, ["--dir", str(tmp_path)]))[0] == want


def test_tern_file_with_field_ttls_loads_in_current_redis(tmp_path):
    r8 = redis_unstable()
    if not r8.exists():
        pytest.skip("redis-server-unstable absent")
    t = tern(tmp_path)
    want = saved(t, populate_with_mc(t, field_ttls=True), field_ttls=True)
    assert (tmp_path / "dump.rdb").read_bytes()[:9] == b"REDIS0012"
    # redis-check-rdb is redis-server started under that name.
    check_bin = tmp_path / "redis-check-rdb"
    check_bin.symlink_to(r8)
    check = subprocess.run([str(check_bin), str(tmp_path / "dump.rdb")], capture_output=True, text=True)
    assert "RDB looks OK" in check.stdout, check.stdout
    assert reloaded(start_redis(str(r8), ["--dir", str(tmp_path)]), field_ttls=True)[0] == want


def down(c, **kw):
    try:
        c.shutdown(**kw)
    except Exception:
        pass


def test_shutdown_save_and_nosave(tmp_path):
    f = tmp_path / "dump.rdb"
    a = tern(tmp_path, "--save", "3600 1")
    c = a.client()
    c.set("k", "1")
    down(c, nosave=True)
    a.proc.wait(timeout=10)
    assert not f.exists()
    a = tern(tmp_path, "--save", "3600 1")
    c = a.client()
    c.set("k", "2")
    down(c)
    a.proc.wait(timeout=10)
    assert f.exists()
    # No schedule: SHUTDOWN does not save, SHUTDOWN SAVE does.
    a = tern(tmp_path)
    c = a.client()
    assert c.get("k") == "2"
    c.set("k", "3")
    down(c)
    a.proc.wait(timeout=10)
    a = tern(tmp_path)
    c = a.client()
    assert c.get("k") == "2"
    c.set("k", "4")
    down(c, save=True)
    a.proc.wait(timeout=10)
    # SIGTERM saves when a schedule is set.
    a = tern(tmp_path, "--save", "3600 1")
    c = a.client()
    assert c.get("k") == "4"
    c.set("k", "5")
    c.close()
    a.stop()
    a = tern(tmp_path)
    try:
        assert a.client().get("k") == "5"
    finally:
        a.stop()


def test_corrupt_file_stops_start_up(tmp_path):
    saved(tern(tmp_path), populate)
    f = tmp_path / "dump.rdb"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x40
    f.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="exited at start-up"):
        tern(tmp_path)
    f.write_bytes(bytes(data[: len(data) // 3]))
    with pytest.raises(RuntimeError, match="exited at start-up"):
        tern(tmp_path)


def wait_bgsave_done(c, saves, timeout=60):
    """Polls INFO until `rdb_saves` reaches `saves` with no save running."""
    deadline = time.monotonic() + timeout
    while True:
        info = c.info("persistence")
        if info["rdb_saves"] >= saves and info["rdb_bgsave_in_progress"] == 0:
            return info
        if info["rdb_last_bgsave_status"] == "err" and info["rdb_bgsave_in_progress"] == 0:
            return info
        assert time.monotonic() < deadline, info
        time.sleep(0.01)


def bgsave(server, *args):
    """BGSAVE's exact reply (redis-py turns it into True)."""
    r = RawConn(server.port)
    try:
        return r.roundtrip("BGSAVE", *args)
    finally:
        r.close()


def test_bgsave_is_point_in_time_while_writes_go_on(tmp_path):
    a = tern(tmp_path)
    try:
        c = a.client()
        populate(c, field_ttls=True)
        # Enough keys that the walk takes many slices, then writes race it.
        pipe = c.pipeline(transaction=False)
        for i in range(20_000):
            pipe.set(f"k{i}", i)
        pipe.execute()
        want = snapshot(a, field_ttls=True)
        assert bgsave(a) == b"+Background saving started\r\n"
        # Overwrite, delete and create keys while the save runs: none of
        # it may reach the file.
        pipe = c.pipeline(transaction=False)
        for i in range(0, 20_000, 3):
            pipe.set(f"k{i}", "changed")
            pipe.delete(f"k{i + 1}")
            pipe.set(f"new{i}", 1)
        pipe.rpush("list", "pushed")
        pipe.hset("hash", "a", "changed")
        pipe.execute()
        info = wait_bgsave_done(c, 1)
        assert (info["rdb_last_bgsave_status"], info["rdb_saves"]) == ("ok", 1)
        assert info["rdb_last_bgsave_time_sec"] >= 0 and info["rdb_current_bgsave_time_sec"] == -1
        c.close()
    finally:
        a.stop()
    assert not list(tmp_path.glob("temp-*.rdb"))
    assert reloaded(tern(tmp_path), field_ttls=True)[0] == want


def test_bgsave_replies_as_redis(tmp_path):
    a = tern(tmp_path)
    try:
        c = a.client()
        c.set("k", "v")
        assert bgsave(a, "now") == b"-ERR syntax error\r\n"
        assert bgsave(a, "SCHEDULE") == b"+Background saving started\r\n"
        # Once BGSAVE has replied, INFO shows the save running (or done),
        # never a stale "no save" that a poller would take for the end.
        info = c.info("persistence")
        assert info["rdb_bgsave_in_progress"] == 1 or info["rdb_saves"] >= 1, info
        wait_bgsave_done(c, 1)
        # Inside a transaction it is scheduled, and runs after EXEC.
        r = RawConn(a.port)
        assert r.roundtrip("MULTI") == b"+OK\r\n"
        assert r.roundtrip("BGSAVE") == b"+QUEUED\r\n"
        assert r.roundtrip("EXEC") == b"*1\r\n+Background saving scheduled\r\n"
        r.close()
        info = wait_bgsave_done(c, 2)
        assert info["rdb_last_bgsave_status"] == "ok"
        c.close()
    finally:
        a.stop()


def test_failed_bgsave_stops_writes_until_a_save_succeeds(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    a = tern(gone, "--save", "3600 1")
    try:
        c = a.client()
        c.set("k", "v")
        gone.rmdir()
        assert bgsave(a) == b"+Background saving started\r\n"
        info = wait_bgsave_done(c, 1)
        assert info["rdb_last_bgsave_status"] == "err"
        assert info["rdb_saves_consecutive_failures"] == 1
        for cmd in (("SET", "k", "w"), ("PING",)):
            with pytest.raises(Exception, match="^MISCONF Redis is configured to save RDB snapshots"):
                c.execute_command(*cmd)
        assert c.get("k") == "v"
        c.config_set("stop-writes-on-bgsave-error", "no")
        assert c.set("k", "w")
        c.config_set("stop-writes-on-bgsave-error", "yes")
        gone.mkdir()
        assert bgsave(a) == b"+Background saving started\r\n"
        info = wait_bgsave_done(c, 1)
        assert info["rdb_last_bgsave_status"] == "ok"
        assert c.set("k", "x") and c.ping()
        c.close()
    finally:
        a.stop()


def saver_policy(server):
    """(scheduling policy, nice) of the server's tern-saver thread, from
    /proc (stat fields 41 and 19)."""
    tasks = f"/proc/{server.proc.pid}/task"
    for t in os.listdir(tasks):
        if open(f"{tasks}/{t}/comm").read().strip() == "tern-saver":
            f = open(f"{tasks}/{t}/stat").read().rsplit(")", 1)[1].split()
            return int(f[38]), int(f[16])
    raise AssertionError("no tern-saver thread")


SCHED_OTHER, SCHED_IDLE = 0, 5


def test_the_saver_takes_sched_idle_or_its_nice_value(tmp_path):
    a = tern(tmp_path)
    try:
        c = a.client()
        c.set("k", "v")
        # Before its first save the saver runs as the process does: at the
        # nice the server inherited from whatever started the tests.
        assert saver_policy(a) == (SCHED_OTHER, os.nice(0))
        assert bgsave(a) == b"+Background saving started\r\n"
        assert wait_bgsave_done(c, 1)["rdb_last_bgsave_status"] == "ok"
        # On a machine busy with other work, an idle-class thread can wait
        # past the starvation guard's first check, and then goes on in the
        # normal class, which it logs; otherwise it stays SCHED_IDLE.
        if any("under SCHED_IDLE: it goes on at nice" in line for line in a.log):
            assert saver_policy(a)[0] == SCHED_OTHER
        else:
            assert saver_policy(a)[0] == SCHED_IDLE
        # Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that
        # allows nice 19; without either the saver stays where it is.
        import resource
        if os.geteuid() != 0 and resource.getrlimit(resource.RLIMIT_NICE)[0] < 1:
            return
        c.config_set("snapshot-sched-idle", "no")
        c.config_set("snapshot-nice", "7")
        assert bgsave(a) == b"+Background saving started\r\n"
        assert wait_bgsave_done(c, 2)["rdb_last_bgsave_status"] == "ok"
        assert saver_policy(a) == (SCHED_OTHER, 7 if os.geteuid() == 0 else 19)
        c.close()
    finally:
        a.stop()


def test_the_save_schedule_saves_in_the_background(tmp_path):
    a = tern(tmp_path, "--save", "1 2", "--hz", "100")
    try:
        c = a.client()
        c.set("a", 1)
        # One change: below the rule's two, nothing is saved.
        assert c.info("persistence")["rdb_saves"] == 0
        c.set("b", 2)
        info = wait_bgsave_done(c, 1, timeout=30)
        assert info["rdb_last_bgsave_status"] == "ok" and info["rdb_changes_since_last_save"] == 0
        c.close()
    finally:
        a.stop()
    b = tern(tmp_path)
    try:
        assert b.client().mget("a", "b") == ["1", "2"]
    finally:
        b.stop()


def test_flushall_with_a_schedule_saves_the_empty_keyspace(tmp_path):
    a = tern(tmp_path, "--save", "3600 1")
    try:
        c = a.client()
        c.set("k", "v")
        c.save()
        assert (tmp_path / "dump.rdb").stat().st_size > 0
        c.flushall()
        info = c.info("persistence")
        assert (info["rdb_saves"], info["rdb_changes_since_last_save"]) == (2, 0)
        c.close()
    finally:
        a.proc.kill()  # no save at exit: the file is FLUSHALL's
        a.proc.wait()
    b = tern(tmp_path)
    try:
        assert b.client().dbsize() == 0
    finally:
        b.stop()
    # Without a schedule FLUSHALL leaves the file alone.
    a = tern(tmp_path)
    try:
        c = a.client()
        c.set("k", "v")
        c.save()
        c.flushall()
        assert c.info("persistence")["rdb_saves"] == 1
    finally:
        a.stop()


def test_info_persistence_inside_a_transaction_after_a_write(tmp_path):
    # The change count is read without shard locks: EXEC holds the
    # written key's shard when INFO runs (the write is counted once EXEC
    # releases it).
    with up(tern(tmp_path)) as a:
        c = a.client()
        p = c.pipeline(transaction=True)
        p.set("k", "v")
        p.info("persistence")
        ok, info = p.execute()
        assert ok and info["rdb_changes_since_last_save"] in (0, 1)
        assert c.info("persistence")["rdb_changes_since_last_save"] == 1
        c.close()
