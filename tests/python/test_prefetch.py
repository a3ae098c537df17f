"""prefetch-batch-max-size as a redis-py user sees it: pipelines of multi-key
commands answer as a plain dict model says, with prefetching off, at its
default and at small odd sizes, at 1 and 2 worker threads."""

import random

import pytest
import redis

from conftest import against_redis, start_server

# None: the default (16). Redis 7 does not know the directive.
SIZES = [None] if against_redis() else ["0", None, "1", "3"]


@pytest.fixture(scope="module", params=[(t, s) for t in (1, 2) for s in SIZES], ids=lambda p: f"t{p[0]}-{p[1] or 'default'}")
def sized(request):
    threads, size = request.param
    srv = start_server(threads, [] if size is None else ["--prefetch-batch-max-size", size])
    yield srv
    srv.stop()


def model_run(model, cmd, args):
    """What Redis answers for one command, on a dict of str -> str | dict."""
    if cmd == "MGET":
        return [model[k] if isinstance(model.get(k), str) else None for k in args]
    if cmd == "MSET":
        for k, v in zip(args[::2], args[1::2]):
            model[k] = v
        return True
    if cmd == "MSETNX":
        if any(k in model for k in args[::2]):
            return False
        for k, v in zip(args[::2], args[1::2]):
            model[k] = v
        return True
    if cmd in ("DEL", "UNLINK"):
        n = 0
        for k in args:
            if k in model:
                del model[k]
                n += 1
        return n
    if cmd in ("EXISTS", "TOUCH"):
        return sum(1 for k in args if k in model)
    if cmd == "HSET":
        if isinstance(model.get(args[0]), str):
            return "WRONGTYPE"
        h = model.setdefault(args[0], {})
        new = args[1] not in h
        h[args[1]] = args[2]
        return int(new)
    raise AssertionError(cmd)


def test_pipelines_match_a_model(sized):
    c = sized.client()
    c.flushall()
    rng = random.Random(7)
    model = {}
    for _ in range(40):
        pipe = c.pipeline(transaction=False)
        expected = []
        for _ in range(rng.randint(1, 30)):
            keys = [f"k{rng.randint(0, 60)}" for _ in range(rng.randint(1, 40))]
            cmd = rng.choice(["MGET", "MGET", "MSET", "MSETNX", "DEL", "UNLINK", "EXISTS", "TOUCH", "HSET"])
            if cmd in ("MSET", "MSETNX"):
                args = [x for k in keys for x in (k, str(rng.randint(0, 999)))]
            elif cmd == "HSET":
                args = [keys[0], "f", "v"]
            else:
                args = keys
            pipe.execute_command(cmd, *args)
            expected.append(model_run(model, cmd, args))
        got = pipe.execute(raise_on_error=False)
        for want, have in zip(expected, got):
            if want == "WRONGTYPE":
                assert isinstance(have, redis.ResponseError) and str(have).startswith("WRONGTYPE")
            elif isinstance(want, bool):
                # MSET's OK and MSETNX's 1/0, as redis-py turns them into booleans.
                assert have is want
            else:
                assert have == want
        assert len(got) == len(expected)
    c.close()


def test_mget_of_many_keys_in_order(sized):
    c = sized.client()
    c.flushall()
    keys = [f"m{i}" for i in range(2000)]
    c.mset({k: f"v{i}" for i, k in enumerate(keys) if i % 3})
    got = c.mget(keys + keys[:5])
    assert got == [None if i % 3 == 0 else f"v{i}" for i in range(2000)] + [None, "v1", "v2", None, "v4"]
    assert c.exists(*keys) == sum(1 for i in range(2000) if i % 3)
    assert c.delete(*keys, *keys) == sum(1 for i in range(2000) if i % 3)
    c.close()


def check_replies(expected, got):
    """A pipeline's replies against the model's: "WRONGTYPE" and "ERR"
    (an integer error) stand for those errors, a float for a score."""
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        if want == "WRONGTYPE":
            assert isinstance(have, redis.ResponseError) and str(have).startswith("WRONGTYPE")
        elif want == "ERR":
            # redis-py drops the "ERR " of "ERR hash value is not an integer".
            assert isinstance(have, redis.ResponseError) and "not an integer" in str(have)
        elif isinstance(want, float):
            assert float(have) == want
        else:
            assert have == want


def test_pipelined_sorted_set_lookups_match_a_model(sized):
    """Pipelines of the commands that look up one member (each asks for
    the next ones' lines when they are in the same large sorted set), over
    two large sets, a small one, a string and absent keys, with members
    present and absent: every reply is the model's."""
    c = sized.client()
    c.flushall()
    rng = random.Random(17)
    sets = {"za": {}, "zb": {}, "zs": {}}
    for name, n in (("za", 600), ("zb", 300), ("zs", 20)):
        for i in range(n):
            sets[name][f"m{i}"] = float(rng.randint(0, 400))
        c.zadd(name, sets[name])
    c.set("str", "v")

    def rank(z, m):
        order = sorted(z.items(), key=lambda kv: (kv[1], kv[0].encode()))
        return [k for k, _ in order].index(m)

    for _ in range(30):
        pipe = c.pipeline(transaction=False)
        expected = []
        for _ in range(rng.randint(1, 40)):
            key = rng.choice(["za", "za", "za", "zb", "zs", "str", "nokey"])
            m = f"m{rng.randint(0, 700)}"
            cmd = rng.choice(["ZSCORE", "ZRANK", "ZREVRANK", "ZINCRBY", "ZADD", "ZREM"])
            z = sets.get(key)
            if key == "str":
                want = "WRONGTYPE"
            elif cmd == "ZSCORE":
                want = z[m] if z is not None and m in z else None
            elif cmd in ("ZRANK", "ZREVRANK"):
                if z is None or m not in z:
                    want = None
                else:
                    want = rank(z, m) if cmd == "ZRANK" else len(z) - 1 - rank(z, m)
            elif cmd == "ZINCRBY":
                z = sets.setdefault(key, {})
                z[m] = z.get(m, 0.0) + 2.0
                want = z[m]
            elif cmd == "ZADD":
                z = sets.setdefault(key, {})
                want = int(m not in z)
                z[m] = float(rng.randint(0, 400))
            else:
                want = int(z is not None and z.pop(m, None) is not None)
            if cmd == "ZINCRBY":
                args = [key, "2", m]
            elif cmd == "ZADD":
                args = [key, repr(sets[key][m]) if key != "str" else "1", m]
            else:
                args = [key, m]
            pipe.execute_command(cmd, *args)
            expected.append(want)
        check_replies(expected, pipe.execute(raise_on_error=False))
    for name in ("za", "zb", "zs"):
        assert c.zrange(name, 0, -1, withscores=True) == sorted(((k, v) for k, v in sets[name].items()),
                                                                 key=lambda kv: (kv[1], kv[0].encode()))
    c.close()


def test_pipelined_set_and_hash_lookups_match_a_model(sized):
    """Pipelines of the set and hash commands that name a member or field
    (stage 3 asks for its bucket in a large set or hash, for the pack's
    first lines in a small one), over large and small sets and hashes, an
    intset, a string and absent keys: every reply is the model's."""
    c = sized.client()
    c.flushall()
    rng = random.Random(23)
    sets = {"sa": {f"m{i}" for i in range(400)}, "ss": {f"m{i}" for i in range(20)}, "si": {str(i) for i in range(30)}}
    hashes = {"ha": {f"m{i}": f"v{i}" for i in range(700)}, "hs": {f"m{i}": f"v{i}" for i in range(20)}}
    for name, members in sets.items():
        c.sadd(name, *members)
    for name, fields in hashes.items():
        c.hset(name, mapping=fields)
    c.set("str", "v")
    for _ in range(30):
        pipe = c.pipeline(transaction=False)
        expected = []
        for _ in range(rng.randint(1, 40)):
            if rng.random() < 0.5:
                key = rng.choice(["sa", "sa", "ss", "si", "str", "nokey-s"])
                m = str(rng.randint(0, 40)) if key == "si" else f"m{rng.randint(0, 500)}"
                cmd = rng.choice(["SISMEMBER", "SADD", "SREM", "SMISMEMBER"])
                s = sets.get(key)
                if key == "str":
                    want = "WRONGTYPE"
                elif cmd == "SISMEMBER":
                    want = int(s is not None and m in s)
                elif cmd == "SMISMEMBER":
                    want = [int(s is not None and m in s), int(s is not None and "m1" in s)]
                elif cmd == "SADD":
                    s = sets.setdefault(key, set())
                    want = int(m not in s)
                    s.add(m)
                else:
                    want = int(s is not None and m in s)
                    if want:
                        s.discard(m)
                args = [key, m, "m1"] if cmd == "SMISMEMBER" else [key, m]
            else:
                key = rng.choice(["ha", "ha", "hs", "str", "nokey-h"])
                f = f"m{rng.randint(0, 800)}"
                cmd = rng.choice(["HGET", "HSET", "HEXISTS", "HDEL", "HINCRBY"])
                h = hashes.get(key)
                if key == "str":
                    want = "WRONGTYPE"
                elif cmd == "HGET":
                    want = h.get(f) if h is not None else None
                elif cmd == "HEXISTS":
                    want = int(h is not None and f in h)
                elif cmd == "HSET":
                    h = hashes.setdefault(key, {})
                    want = int(f not in h)
                    h[f] = "x"
                elif cmd == "HDEL":
                    want = int(h is not None and h.pop(f, None) is not None)
                else:
                    h = hashes.setdefault(key, {})
                    if f in h and not h[f].lstrip("-").isdigit():
                        want = "ERR"
                    else:
                        h[f] = str(int(h.get(f, "0")) + 3)
                        want = int(h[f])
                args = [key, f, "x"] if cmd == "HSET" else [key, f, "3"] if cmd == "HINCRBY" else [key, f]
            pipe.execute_command(cmd, *args)
            expected.append(want)
        check_replies(expected, pipe.execute(raise_on_error=False))
    for name, members in sets.items():
        assert set(c.smembers(name)) == members
    for name, fields in hashes.items():
        assert c.hgetall(name) == fields
    c.close()
