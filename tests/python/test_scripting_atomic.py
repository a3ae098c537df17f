"""Scripts are atomic across workers: a script's reads and writes are never
interleaved with another client's command, on any worker, whether its keys
are declared or not, and scripts on several workers never deadlock.

Each test hammers the same keys from several connections (spread over the
server's two workers) with scripts and plain commands at once, then checks
that no update was lost: every script does a read-modify-write (GET, then
SET of the value plus one) that a command slipping in between would undo.
"""

import threading

import pytest

from conftest import start_server

ROUNDS = 300

# Declared keys: a counter bumped by INCR, and a read-modify-write.
DECLARED = """
redis.call('INCR', KEYS[1])
local x = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('SET', KEYS[2], x + 1)
return x
"""

# The same on keys the script names itself (BullMQ-style), one per shard
# it may land on: the script must take them as it goes and stay atomic.
UNDECLARED = """
redis.call('INCR', 'c')
for _, k in ipairs({'rmw', 'x{1}', 'x{2}', 'x{3}'}) do
  local v = tonumber(redis.call('GET', k) or '0')
  redis.call('SET', k, v + 1)
end
return 1
"""


@pytest.fixture(scope="module")
def srv():
    s = start_server(2)
    yield s
    s.stop()


def hammer(srv, workers):
    errors = []

    def run(fn):
        c = srv.client()
        try:
            for _ in range(ROUNDS):
                fn(c)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    threads = [threading.Thread(target=run, args=(fn,)) for fn in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a client is stuck: scripts deadlocked"
    assert not errors, errors


def test_declared_keys_script_loses_no_update(srv):
    r = srv.client()
    r.flushall()
    declared = r.register_script(DECLARED)
    hammer(srv, [
        lambda c: declared(keys=["c", "rmw"], client=c),
        lambda c: declared(keys=["c", "rmw"], client=c),
        lambda c: c.incr("c"),
        lambda c: c.incr("rmw"),
    ])
    assert int(r.get("c")) == 3 * ROUNDS
    assert int(r.get("rmw")) == 3 * ROUNDS


def test_undeclared_keys_script_loses_no_update(srv):
    r = srv.client()
    r.flushall()
    undeclared = r.register_script(UNDECLARED)
    declared = r.register_script(DECLARED)
    hammer(srv, [
        lambda c: undeclared(client=c),
        lambda c: undeclared(client=c),
        # A declared-key script touching the same keys from the other side.
        lambda c: declared(keys=["x{3}", "rmw"], client=c),
        lambda c: c.incr("x{1}"),
        lambda c: c.mset({"unrelated{1}": 1, "unrelated{2}": 2}),
        lambda c: c.incr("c"),
    ])
    assert int(r.get("c")) == 3 * ROUNDS
    assert int(r.get("rmw")) == 3 * ROUNDS
    assert int(r.get("x{1}")) == 3 * ROUNDS
    assert int(r.get("x{2}")) == 2 * ROUNDS
    assert int(r.get("x{3}")) == 3 * ROUNDS


def test_scripts_inside_exec_and_outside_do_not_deadlock(srv):
    r = srv.client()
    r.flushall()

    def in_exec(c):
        p = c.pipeline(transaction=True)
        p.eval(UNDECLARED, 0)
        p.incr("c")
        p.execute()

    hammer(srv, [in_exec, lambda c: c.eval(UNDECLARED, 0), lambda c: c.incr("x{2}")])
    assert int(r.get("c")) == 3 * ROUNDS
    assert int(r.get("x{2}")) == 3 * ROUNDS


def test_script_kill_from_another_worker(srv):
    """SCRIPT KILL from a connection on another worker stops a script that
    has not written, and refuses one that has (UNKILLABLE)."""
    import redis as redispy

    busy = "local t = os.clock() while os.clock() - t < 5 do end return 'not killed'"
    result = {}

    def run_script(body):
        c = srv.client()
        try:
            result["reply"] = c.eval(body, 0)
        except redispy.ResponseError as e:
            result["reply"] = str(e)
        finally:
            c.close()

    def kill_until(expected):
        """SCRIPT KILL until it answers "OK" or `expected` (None if it never
        does), from three threads, each try on a new connection: one made
        while the script runs is taken by the worker that is free (a worker
        busy with the script accepts none), and a try that landed on the
        script's own worker just waits for the script to end."""
        found = []

        def keep_killing():
            for _ in range(300):
                if found:
                    return
                k = srv.client()
                try:
                    k.execute_command("SCRIPT", "KILL")
                    found.append("OK")
                except redispy.ResponseError as e:
                    if str(e).startswith(expected):
                        found.append(expected)
                finally:
                    k.close()
                threading.Event().wait(0.01)

        threads = [threading.Thread(target=keep_killing) for _ in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=15)
        return found[0] if found else None

    # A kill is answered once the script is past the threshold (or over),
    # as in Redis: the write script has written long before 300 ms.
    r = srv.client()
    r.config_set("busy-reply-threshold", 300)
    try:
        killed_and_refused(run_script, kill_until, busy, result)
    finally:
        r.config_set("busy-reply-threshold", 5000)
    assert r.get("w") == "1"
    try:
        r.execute_command("SCRIPT", "KILL")
        raise AssertionError("SCRIPT KILL with nothing running")
    except redispy.ResponseError as e:
        assert str(e).startswith("NOTBUSY")


def killed_and_refused(run_script, kill_until, busy, result):
    t = threading.Thread(target=run_script, args=(busy,))
    t.start()
    assert kill_until("never") == "OK"
    t.join(timeout=10)
    assert result["reply"].startswith("Script killed by user with SCRIPT KILL...")

    writes = "redis.call('set', 'w', '1') local t = os.clock() while os.clock() - t < 1 do end return 'done'"
    t = threading.Thread(target=run_script, args=(writes,))
    t.start()
    assert kill_until("UNKILLABLE") == "UNKILLABLE"
    t.join(timeout=10)
    assert result["reply"] == "done"
