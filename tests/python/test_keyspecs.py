"""Tern's key specs against Redis 8.4's (`redis-server-unstable`).

For every command both servers have:
- COMMAND INFO's key-spec section, legacy key range (first, last, step) and
  flags (`movablekeys` is derived from the specs) are equal, and so are
  arity, ACL categories and tips (but for NOT_COMPARED);
- COMMAND GETKEYS and GETKEYSANDFLAGS answer byte for byte alike, in RESP2
  and RESP3, over representative argument vectors: optional keywords (SET
  with GET / EX, GETEX with PERSIST, HGETEX FIELDS, ...), several keys,
  key-count errors, wrong arity, commands without keys, unknown commands.

Every keyed Tern command must have argument vectors here, so a command added
to the table without them fails (this check needs no reference). The
comparisons are skipped when the reference binary is absent.
"""

import pytest

from resp import RawConn
from servers import redis_unstable, start_redis, start_tern, tern_bin

REDIS_UNSTABLE = redis_unstable()

needs_reference = pytest.mark.skipif(not REDIS_UNSTABLE.exists(), reason="no Redis 8 reference (TERN_REDIS8)")

# Command name -> argument vectors (after the name) to ask GETKEYS about.
VECTORS = {
    "sort": [["k"], ["k", "BY", "w_*", "GET", "#", "STORE", "d"], ["k", "LIMIT", "0", "1", "STORE", "a", "STORE", "b"], ["k", "GET", "store", "ALPHA"]],
    "sort_ro": [["k"], ["k", "BY", "w_*", "GET", "#"]],
    "lpush": [["l", "a"]], "rpush": [["l", "a", "b"]], "lpushx": [["l", "a"]], "rpushx": [["l", "a"]],
    "lpop": [["l"], ["l", "2"]], "rpop": [["l"], ["l", "2"]], "llen": [["l"]], "lrange": [["l", "0", "-1"]],
    "lindex": [["l", "0"]], "lset": [["l", "0", "v"]], "linsert": [["l", "BEFORE", "p", "v"]], "lrem": [["l", "0", "v"]],
    "ltrim": [["l", "0", "1"]], "lpos": [["l", "v", "RANK", "1"]], "lmove": [["a", "b", "LEFT", "RIGHT"]],
    "rpoplpush": [["a", "b"]], "lmpop": [["2", "a", "b", "LEFT", "COUNT", "2"]],
    "blpop": [["a", "b", "0"]], "brpop": [["a", "0"]], "blmove": [["a", "b", "LEFT", "RIGHT", "0"]],
    "brpoplpush": [["a", "b", "0"]], "blmpop": [["0", "2", "a", "b", "RIGHT"]],
    "sadd": [["s", "a", "b"]],
    "zadd": [["z", "1", "a"], ["z", "NX", "CH", "1", "a", "2", "b"]], "zincrby": [["z", "1", "a"]],
    "zrem": [["z", "a", "b"]], "zcard": [["z"]], "zscore": [["z", "a"]], "zmscore": [["z", "a", "b"]],
    "zrank": [["z", "a"], ["z", "a", "WITHSCORE"]], "zrevrank": [["z", "a"]], "zcount": [["z", "0", "1"]],
    "zlexcount": [["z", "-", "+"]], "zrange": [["z", "0", "-1"], ["z", "(1", "5", "BYSCORE", "LIMIT", "0", "1"]],
    "zrangestore": [["d", "z", "0", "-1"]], "zrevrange": [["z", "0", "1"]], "zrangebyscore": [["z", "0", "1"]],
    "zrevrangebyscore": [["z", "1", "0"]], "zrangebylex": [["z", "-", "+"]], "zrevrangebylex": [["z", "+", "-"]],
    "zremrangebyrank": [["z", "0", "1"]], "zremrangebyscore": [["z", "0", "1"]], "zremrangebylex": [["z", "-", "+"]],
    "zpopmin": [["z"], ["z", "2"]], "zpopmax": [["z", "2"]],
    "zmpop": [["1", "a", "MIN"], ["2", "a", "b", "MAX", "COUNT", "2"], ["3", "a", "MIN"], ["0", "a", "MIN"]],
    "bzpopmin": [["a", "0"], ["a", "b", "1.5"]], "bzpopmax": [["a", "b", "0"]],
    "bzmpop": [["0", "1", "a", "MIN"], ["0.5", "2", "a", "b", "MAX", "COUNT", "3"], ["0", "5", "a", "MIN"]],
    "geoadd": [["g", "1", "2", "m"], ["g", "NX", "CH", "1", "2", "m"]], "geopos": [["g", "m"]],
    "geodist": [["g", "a", "b", "km"]], "geohash": [["g", "a", "b"]],
    "georadius": [["g", "1", "2", "3", "km"], ["g", "1", "2", "3", "km", "STORE", "d"],
                  ["g", "1", "2", "3", "km", "STORE", "a", "STOREDIST", "b"], ["g", "1", "2", "3", "km", "COUNT", "1", "STOREDIST", "d"]],
    "georadius_ro": [["g", "1", "2", "3", "km", "WITHDIST"]],
    "georadiusbymember": [["g", "m", "3", "km"], ["g", "m", "3", "km", "STOREDIST", "d", "STORE", "e"]],
    "georadiusbymember_ro": [["g", "m", "3", "km", "ASC"]],
    "geosearch": [["g", "FROMMEMBER", "m", "BYRADIUS", "1", "km"]],
    "geosearchstore": [["d", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "1", "km", "STOREDIST"]],
    "zrandmember": [["z"], ["z", "2", "WITHSCORES"]], "zscan": [["z", "0", "MATCH", "a*"]],
    "zunion": [["2", "a", "b", "WEIGHTS", "1", "2"], ["3", "a"]], "zinter": [["1", "a"]], "zdiff": [["2", "a", "b"]],
    "zunionstore": [["d", "2", "a", "b"], ["d", "0", "a"]], "zinterstore": [["d", "1", "a"]], "zdiffstore": [["d", "2", "a", "b"]],
    "zintercard": [["2", "a", "b", "LIMIT", "1"], ["0", "a"]],
    "srem": [["s", "a"]],
    "scard": [["s"]],
    "sismember": [["s", "a"]],
    "smismember": [["s", "a", "b"]],
    "smembers": [["s"]],
    "srandmember": [["s"], ["s", "3"]],
    "spop": [["s"], ["s", "2"]],
    "smove": [["a", "b", "m"]],
    "sinter": [["a"], ["a", "b", "c"]],
    "sintercard": [["1", "a"], ["2", "a", "b", "LIMIT", "1"]],
    "sinterstore": [["d", "a", "b"]],
    "sunion": [["a", "b"]],
    "sunionstore": [["d", "a"], ["d", "a", "b"]],
    "sdiff": [["a", "b"]],
    "sdiffstore": [["d", "a", "b"]],
    "sscan": [["s", "0"], ["s", "0", "MATCH", "*", "COUNT", "5"]],
    "get": [["k"]],
    "set": [["k", "v"], ["k", "v", "GET"], ["k", "v", "IFEQ", "x"], ["k", "v", "ifdne", "x", "GET"], ["k", "v", "EX", "ifne"], ["k", "v", "EX", "10", "GET"], ["k", "v", "get", "nx"], ["k", "get"], ["k", "v", "KEEPTTL"], ["k", "v", "PX", "5", "XX"]],
    "setnx": [["k", "v"]],
    "setex": [["k", "10", "v"]],
    "psetex": [["k", "10", "v"]],
    "getset": [["k", "v"]],
    "getdel": [["k"]],
    "getex": [["k"], ["k", "EX", "10"], ["k", "PERSIST"], ["k", "PXAT", "1"]],
    "mget": [["a"], ["a", "b", "c"]],
    "mset": [["a", "1"], ["a", "1", "b", "2", "c", "3"], ["a", "1", "b"]],
    "msetnx": [["a", "1", "b", "2"]],
    "msetex": [["1", "a", "1"], ["2", "a", "1", "b", "2", "EX", "5"], ["2", "a", "1", "b"], ["3", "a", "1"], ["0", "a", "1"], ["x", "a", "1"]],
    "digest": [["k"]],
    "setbit": [["k", "7", "1"]],
    "getbit": [["k", "7"]],
    "bitcount": [["k"], ["k", "0", "-1", "BIT"]],
    "bitpos": [["k", "1"], ["k", "0", "2", "-1", "BYTE"]],
    "bitop": [["AND", "d", "a"], ["DIFF", "d", "a", "b", "c"], ["NOT", "d"]],
    "bitfield": [["k"], ["k", "GET", "u8", "0"], ["k", "SET", "u8", "0", "1"], ["k", "get", "set", "0"], ["k", "foo"], ["k", "OVERFLOW", "SAT", "GET", "i8", "#1"], ["k", "overflow"]],
    "bitfield_ro": [["k", "GET", "u8", "0"], ["k"]],
    "pfadd": [["h"], ["h", "a", "b"]],
    "pfcount": [["a"], ["a", "b", "c"]],
    "pfmerge": [["d"], ["d", "a", "b"]],
    "pfdebug": [["GETREG", "h"], ["SIMD", "ON"]],
    "delex": [["k"], ["k", "IFEQ", "v"], ["k", "ifdne", "0000000000000000"], ["k", "FOO", "v"], ["k", "IFEQ"]],
    "append": [["k", "v"]],
    "strlen": [["k"]],
    "getrange": [["k", "0", "-1"]],
    "substr": [["k", "0", "-1"]],
    "setrange": [["k", "0", "v"]],
    "incr": [["k"]],
    "decr": [["k"]],
    "incrby": [["k", "5"]],
    "decrby": [["k", "5"]],
    "incrbyfloat": [["k", "1.5"]],
    "lcs": [["a", "b"], ["a", "b", "LEN"], ["a", "b", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"]],
    "hset": [["h", "f", "v"], ["h", "f", "v", "g", "w"]],
    "hmset": [["h", "f", "v"]],
    "hsetnx": [["h", "f", "v"]],
    "hget": [["h", "f"]],
    "hmget": [["h", "f"], ["h", "f", "g", "i"]],
    "hgetall": [["h"]],
    "hdel": [["h", "f", "g"]],
    "hlen": [["h"]],
    "hexists": [["h", "f"]],
    "hstrlen": [["h", "f"]],
    "hincrby": [["h", "f", "1"]],
    "hincrbyfloat": [["h", "f", "1.5"]],
    "hkeys": [["h"]],
    "hvals": [["h"]],
    "hrandfield": [["h"], ["h", "2", "WITHVALUES"]],
    "hscan": [["h", "0"], ["h", "0", "MATCH", "*", "COUNT", "10", "NOVALUES"]],
    "hgetdel": [["h", "FIELDS", "1", "f"], ["h", "FIELDS", "2", "f", "g"]],
    "hgetex": [["h", "FIELDS", "1", "f"], ["h", "EX", "10", "FIELDS", "2", "f", "g"], ["h", "PERSIST", "FIELDS", "1", "f"]],
    "hsetex": [["h", "FIELDS", "1", "f", "v"], ["h", "FNX", "EX", "10", "FIELDS", "1", "f", "v"], ["h", "KEEPTTL", "FIELDS", "2", "f", "v", "g", "w"]],
    "hexpire": [["h", "10", "FIELDS", "1", "f"], ["h", "10", "NX", "FIELDS", "2", "f", "g"]],
    "hpexpire": [["h", "10", "FIELDS", "1", "f"]],
    "hexpireat": [["h", "10", "FIELDS", "1", "f"]],
    "hpexpireat": [["h", "10", "GT", "FIELDS", "1", "f"]],
    "httl": [["h", "FIELDS", "1", "f"]],
    "hpttl": [["h", "FIELDS", "2", "f", "g"]],
    "hexpiretime": [["h", "FIELDS", "1", "f"]],
    "hpexpiretime": [["h", "FIELDS", "1", "f"]],
    "hpersist": [["h", "FIELDS", "1", "f"]],
    "lpush": [["l", "a"], ["l", "a", "b"]],
    "rpush": [["l", "a"]],
    "lpushx": [["l", "a", "b"]],
    "rpushx": [["l", "a"]],
    "lpop": [["l"], ["l", "2"]],
    "rpop": [["l"], ["l", "2"]],
    "llen": [["l"]],
    "lrange": [["l", "0", "-1"]],
    "lindex": [["l", "0"]],
    "lset": [["l", "0", "v"]],
    "linsert": [["l", "BEFORE", "p", "v"]],
    "lrem": [["l", "0", "v"]],
    "ltrim": [["l", "0", "-1"]],
    "lpos": [["l", "v"], ["l", "v", "RANK", "-1", "COUNT", "0"]],
    "lmove": [["a", "b", "LEFT", "RIGHT"]],
    "rpoplpush": [["a", "b"]],
    "lmpop": [["1", "a", "LEFT"], ["2", "a", "b", "RIGHT", "COUNT", "2"], ["3", "a", "LEFT"], ["0", "a", "LEFT"]],
    "blpop": [["a", "0"], ["a", "b", "c", "1.5"]],
    "brpop": [["a", "b", "0"]],
    "blmove": [["a", "b", "LEFT", "RIGHT", "0"]],
    "brpoplpush": [["a", "b", "0"]],
    "blmpop": [["0", "1", "a", "LEFT"], ["0.5", "2", "a", "b", "RIGHT", "COUNT", "3"], ["0", "5", "a", "LEFT"]],
    "del": [["a"], ["a", "b", "c"]],
    "unlink": [["a"], ["a", "b"]],
    "exists": [["a"], ["a", "a", "b"]],
    "touch": [["a", "b"]],
    "type": [["k"]],
    "rename": [["a", "b"]],
    "renamenx": [["a", "b"]],
    "copy": [["a", "b"], ["a", "b", "DB", "1", "REPLACE"]],
    "move": [["k", "1"]],
    "dump": [["k"]],
    "restore": [["k", "0", "payload"], ["k", "0", "payload", "REPLACE", "ABSTTL", "IDLETIME", "5"]],
    "restore-asking": [["k", "0", "payload"], ["k", "0", "payload", "REPLACE"]],
    "migrate": [["h", "1", "k", "0", "5"], ["h", "1", "", "0", "5", "KEYS", "a", "b"], ["h", "1", "", "0", "5", "COPY", "AUTH", "keys", "KEYS", "a"],
                ["h", "1", "", "0", "5", "AUTH2", "u", "p", "REPLACE", "KEYS", "a", "b", "c"], ["h", "1", "k", "0", "5", "KEYS", "a"]],
    "expire": [["k", "10"], ["k", "10", "NX"]],
    "pexpire": [["k", "10", "GT"]],
    "expireat": [["k", "10"]],
    "pexpireat": [["k", "10", "LT"]],
    "ttl": [["k"]],
    "pttl": [["k"]],
    "expiretime": [["k"]],
    "pexpiretime": [["k"]],
    "persist": [["k"]],
    "object": [["encoding", "k"], ["freq", "k"], ["idletime", "k"], ["refcount", "k"], ["nosuch", "k"]],
    "memory": [["usage", "k"], ["usage", "k", "samples", "5"], ["nosuch", "k"]],
    "watch": [["a"], ["a", "b"]],
    "eval": [["return 1", "0"], ["return 1", "2", "a", "b", "arg"], ["return 1", "3", "a"], ["return 1", "-1", "a"]],
    "eval_ro": [["return 1", "1", "a"]],
    "evalsha": [["e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "2", "a", "b"]],
    "evalsha_ro": [["e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "1", "a", "x"]],
    "fcall": [["f", "2", "a", "b", "arg"], ["f", "0"], ["f", "5", "a"]],
    "fcall_ro": [["f", "1", "a"]],
    "spublish": [["ch", "msg"]],
    "ssubscribe": [["a"], ["a", "b"]],
    "sunsubscribe": [["a", "b"]],
    "xadd": [["s", "*", "f", "v"], ["s", "MAXLEN", "~", "10", "*", "f", "v"]],
    "xrange": [["s", "-", "+"], ["s", "-", "+", "COUNT", "1"]],
    "xrevrange": [["s", "+", "-"]],
    "xlen": [["s"]],
    "xdel": [["s", "1-0", "2-0"]],
    "xtrim": [["s", "MAXLEN", "0"]],
    "xsetid": [["s", "1-0"]],
    "xread": [["STREAMS", "a", "0"], ["COUNT", "1", "BLOCK", "0", "STREAMS", "a", "b", "0", "0"], ["STREAMS", "a", "b", "0"], ["STREAMS"]],
    "xreadgroup": [["GROUP", "g", "c", "STREAMS", "a", ">"], ["GROUP", "g", "c", "COUNT", "1", "STREAMS", "a", "b", ">", ">"], ["GROUP", "g", "c", "STREAMS", "a"]],
    "xgroup": [["create", "s", "g", "$"], ["setid", "s", "g", "0"], ["destroy", "s", "g"], ["createconsumer", "s", "g", "c"], ["delconsumer", "s", "g", "c"], ["nosuch", "s"]],
    "xack": [["s", "g", "1-0"]],
    "xpending": [["s", "g"], ["s", "g", "-", "+", "10"]],
    "xclaim": [["s", "g", "c", "0", "1-0"]],
    "xautoclaim": [["s", "g", "c", "0", "0"]],
    "xdelex": [["s", "IDS", "1", "1-0"]],
    "xackdel": [["s", "g", "ACKED", "IDS", "1", "1-0"]],
    "xinfo": [["stream", "s"], ["groups", "s"], ["consumers", "s", "g"], ["nosuch", "s"]],
}

# Lines that must be refused alike: no keys, wrong arity, unknown commands.
ERRORS = [
    ["get"],
    ["ping"],
    ["ping", "x"],
    ["time", "x"],
    ["client", "id"],
    ["object", "help"],
    ["config", "get", "x"],
    ["command", "info"],
    ["get", "a", "b"],
    ["mset", "a"],
    ["hgetex", "h", "f"],
    ["nosuchcommand", "k"],
    ["object", "nosuch"],
    ["memory", "stats"],
    ["memory", "nosuch"],
]


# (command, COMMAND INFO field) pairs not compared, and why.
NOT_COMPARED = {}
INFO_FIELDS = [(1, "arity"), (2, "flags"), (3, "first key"), (4, "last key"), (5, "step"), (6, "acl categories"), (7, "tips"), (8, "key specs")]


@pytest.fixture(scope="module")
def servers():
    redis = start_redis(str(REDIS_UNSTABLE))
    tern = start_tern(tern_bin(), 2)
    conns = {}
    try:
        for proto in (2, 3):
            rc, tc = RawConn(redis.port), RawConn(tern.port)
            if proto == 3:
                for c in (rc, tc):
                    c.roundtrip("HELLO", "3")
            conns[proto] = (rc, tc)
        yield redis, tern, conns
    finally:
        for rc, tc in conns.values():
            rc.close()
            tc.close()
        tern.stop()
        redis.stop()


def raw_pair(conns, proto, *args):
    rc, tc = conns[proto]
    return rc.roundtrip(*args), tc.roundtrip(*args)


def parsed(port, *args):
    """A reply parsed by redis-py's RESP2 reader, without its per-command
    reshaping (COMMAND INFO's fields stay positional)."""
    import redis

    r = redis.Redis(host="127.0.0.1", port=port, protocol=2)
    c = r.connection_pool.get_connection()
    try:
        c.send_command(*args)
        return c.read_response()
    finally:
        r.connection_pool.release(c)
        r.close()


def command_info(port, name):
    return parsed(port, "COMMAND", "INFO", name)[0]


def tern_commands(tern):
    """Every command and subcommand of Tern's table, as full names."""
    return sorted(n.decode() for n in parsed(tern.port, "COMMAND", "LIST"))


def test_every_keyed_command_has_vectors():
    tern = start_tern(tern_bin(), 1)
    try:
        keyed = [name for name in tern_commands(tern) if command_info(tern.port, name)[8]]
    finally:
        tern.stop()
    missing = [n for n in keyed if n.split("|")[0] not in VECTORS]
    assert not missing, "add GETKEYS argument vectors for: %s" % missing


@needs_reference
def test_command_info_equals_redis(servers):
    redis, tern, _ = servers
    compared = 0
    for name in tern_commands(tern):
        ri = command_info(redis.port, name)
        if ri is None:
            continue
        ti = command_info(tern.port, name)
        for i, field in INFO_FIELDS:
            if (name, field) not in NOT_COMPARED:
                assert ti[i] == ri[i], (name, field, ti[i], ri[i])
        compared += 1
    assert compared > 100


@needs_reference
@pytest.mark.parametrize("proto", [2, 3])
def test_getkeys_equal_redis(servers, proto):
    _, _, conns = servers
    checked = 0
    for name, vectors in VECTORS.items():
        for v in vectors:
            for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
                line = ["COMMAND", sub, name, *v]
                want, got = raw_pair(conns, proto, *line)
                assert got == want, (line, got, want)
                checked += 1
    for v in ERRORS:
        for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
            line = ["COMMAND", sub, *v]
            want, got = raw_pair(conns, proto, *line)
            assert got == want, (line, got, want)
    assert checked > 200
