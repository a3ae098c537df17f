"""Sentinel: Debian's redis-server 7.0 running as three Sentinels monitors a
Tern master with two Tern replicas, finds the replicas through INFO and the
other Sentinels through the `__sentinel__:hello` channel, and when the master
is killed promotes a replica (REPLICAOF NO ONE, CONFIG REWRITE, CLIENT KILL in
one transaction) and points the other at it, which resumes with a partial
resynchronisation. redis-py's Sentinel client
keeps writing through the failover, and no write that both replicas had
acknowledged (WAIT) is lost."""

import os
import shutil
import signal
import threading
import time

import pytest
import redis
from redis.sentinel import Sentinel

from helpers import wait_until
from servers import Server, free_port, start_tern, tern_bin

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"

pytestmark = pytest.mark.skipif(not os.path.exists(REDIS), reason="no redis-server for Sentinel")


def start_sentinel(tmp_path, i, master_port):
    port = free_port()
    conf = tmp_path / f"sentinel-{i}.conf"
    conf.write_text(
        f"port {port}\nbind 127.0.0.1\ndir {tmp_path}\n"
        f"sentinel monitor mym 127.0.0.1 {master_port} 2\n"
        "sentinel down-after-milliseconds mym 1000\n"
        "sentinel failover-timeout mym 20000\n"
        "sentinel parallel-syncs mym 2\n"
    )
    return Server([REDIS, str(conf), "--sentinel"], port=port, name="redis-sentinel", ready="Sentinel ID is").start()


def start_tern_node(tmp_path, name, extra=()):
    """A Tern instance with a config file of its own (CONFIG REWRITE)."""
    conf = tmp_path / f"{name}.conf"
    conf.write_text('save ""\n')
    srv = start_tern(tern_bin(), 2, ["--repl-diskless-sync-delay", "0", "--save", "", *extra], conf=str(conf))
    srv.conf = conf
    return srv


def role(srv):
    return srv.client().execute_command("ROLE")


def test_sentinel_fails_over_a_killed_tern_master_while_a_client_writes(tmp_path):
    master = start_tern_node(tmp_path, "a")
    nodes = [master]
    sentinels = []
    stop = threading.Event()
    try:
        for name in ("b", "c"):
            nodes.append(start_tern_node(tmp_path, name, ["--replicaof", "127.0.0.1", str(master.port)]))
        m = master.client()
        wait_until(lambda: m.info("replication")["connected_slaves"] == 2, timeout=10, interval=0.02)
        sentinels = [start_sentinel(tmp_path, i, master.port) for i in range(3)]
        s0 = sentinels[0].client()
        # The replicas from the master's INFO, the other Sentinels from
        # the hello messages they publish through the Tern instances.
        wait_until(lambda: int(dict(zip(*[iter(s0.execute_command("SENTINEL", "MASTER", "mym"))] * 2))["num-other-sentinels"]) == 2
                   and len(s0.execute_command("SENTINEL", "REPLICAS", "mym")) == 2, timeout=30, interval=0.1)

        # A client writing through Sentinel's view of the master: a write
        # counts as safe once WAIT says every replica it has took it.
        sent = Sentinel([("127.0.0.1", s.port) for s in sentinels], socket_timeout=0.5)
        safe, errors = [], []

        def writer():
            w = sent.master_for("mym", socket_timeout=0.5, decode_responses=True)
            i = 0
            while not stop.is_set():
                try:
                    w.set(f"k{i}", i)
                    reps = w.info("replication")["connected_slaves"]
                    if reps and w.execute_command("WAIT", reps, 1000) >= reps:
                        safe.append(i)
                    i += 1
                except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError) as e:
                    errors.append(type(e).__name__)
                    time.sleep(0.05)

        t = threading.Thread(target=writer)
        t.start()
        wait_until(lambda: len(safe) > 50, timeout=10, interval=0.02)
        before = len(safe)
        master.proc.send_signal(signal.SIGKILL)
        master.proc.wait(timeout=10)
        old_port = master.port

        def promoted():
            addr = s0.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mym")
            return addr and int(addr[1]) != old_port

        wait_until(promoted, timeout=60, interval=0.2)
        new_port = int(s0.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mym")[1])
        new = next(n for n in nodes[1:] if n.port == new_port)
        other = next(n for n in nodes[1:] if n.port != new_port)
        assert role(new)[0] == "master"
        wait_until(lambda: role(other)[:2] == ["slave", "127.0.0.1"] and role(other)[2] == new_port and role(other)[3] == "connected",
                   timeout=60, interval=0.2)
        # The other replica took the stream up from the new master where it
        # was (its stream is the old master's, with the same id and offsets).
        st = new.client().info("stats")
        assert (st["sync_full"], st["sync_partial_ok"]) == (0, 1), st
        # Writes go on, to the new master.
        wait_until(lambda: len(safe) > before + 50, timeout=30, interval=0.05)
        stop.set()
        t.join(timeout=10)
        c = new.client()
        missing = [i for i in safe if c.get(f"k{i}") != str(i)]
        assert not missing, missing[:10]
        # Sentinel's CONFIG REWRITE: the new master's file names no master,
        # the other's names the new one.
        assert "replicaof" not in new.conf.read_text()
        assert f"replicaof 127.0.0.1 {new_port}" in other.conf.read_text()
    finally:
        stop.set()
        for s in sentinels:
            s.stop()
        for n in nodes:
            n.stop()
