"""What the differential suites of Lua scripting (test_scripting.py) and of
functions (test_functions.py) share, on top of acl_diff's harness: a list
of named cases, RESP2-then-RESP3 scripts, and Redis 8.4's wording of
Valkey 8.1's messages (REDIS_WORDING), turned into acl_diff.REDIS_EXPECT
entries by Cases.expect and Cases.reworded.
"""

import hashlib

import pytest

import acl_diff
from acl_diff import expect_redis, parse_script


def resp23(script):
    """`script` on connection a (RESP2), then every step again on a
    connection r3 that said HELLO 3 first."""
    lines = [l.strip() for l in script.strip("\n").splitlines() if l.strip() and not l.strip().startswith("# ")]
    return "\n".join(lines + ["@r3 ?HELLO 3"] + ["@r3 " + l for l in lines])


def bulk_array(items):
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


def status_array(lines):
    return b"*%d\r\n" % len(lines) + b"".join(b"+%s\r\n" % l for l in lines)


def sha1(body):
    return hashlib.sha1(body).hexdigest().encode()


# Valkey 8.1's words -> Redis 8.4's, with where Redis says so. Redis's
# source here is its tree of October 2024 (script_lua.c, script.c, eval.c,
# server.c, function_lua.c); these messages have not changed since Redis 7.0.
REDIS_WORDING = [
    (b"NOSCRIPT No matching script.", b"NOSCRIPT No matching script. Please use EVAL.",
     "server.c, createSharedObjects: shared.noscripterr"),
    (b"Unknown command called from script", b"Unknown Redis command called from script",
     "script.c, scriptVerifyCommandArity"),
    (b"Wrong number of args calling command from script", b"Wrong number of args calling Redis command from script",
     "script.c, scriptVerifyCommandArity"),
    (b"Command arguments must be strings or integers", b"Lua redis lib command arguments must be strings or integers",
     "script_lua.c, luaArgsToRedisArgv"),
    (b"Please specify at least one argument for this call",
     b"Please specify at least one argument for this redis lib call", "script_lua.c, luaArgsToRedisArgv"),
    (b"server.log() requires", b"redis.log() requires", "script_lua.c, luaLogCommand"),
    (b"server.set_repl() requires", b"redis.set_repl() requires", "script_lua.c, luaRedisSetReplCommand"),
    (b"server.setresp() requires", b"redis.setresp() requires", "script_lua.c, luaSetResp"),
    (b"passed to server.acl_check_cmd()", b"passed to redis.acl_check_cmd()",
     "script_lua.c, luaRedisAclCheckCmdPermissionsCommand"),
    (b"Script killed by user with SCRIPT KILL.", b"Script killed by user with SCRIPT KILL...",
     "script_lua.c, luaMaskCountHook"),
    (b"BUSY Valkey is busy", b"BUSY Redis is busy", "server.c, createSharedObjects: shared.slowevalerr"),
    (b"server.register_function", b"redis.register_function",
     "function_lua.c, luaRegisterFunction and its argument readers"),
    (b"Script killed by user with FUNCTION KILL.", b"Script killed by user with SCRIPT KILL...",
     "script_lua.c, luaMaskCountHook: the one message, for a function too"),
]


def reword(reply):
    """Redis's reply for Valkey's `reply`: REDIS_WORDING applied inside
    every simple string, error and bulk string (whose length is redone).
    Returns the reply and the reasons of the rewordings applied."""
    why = []

    def sub(text):
        for old, new, reason in REDIS_WORDING:
            if old in text:
                text = text.replace(old, new)
                why.append(reason)
        return text

    out, pos = [], 0
    while pos < len(reply):
        nl = reply.index(b"\r\n", pos)
        kind, head = reply[pos:pos + 1], reply[pos + 1:nl]
        if kind in b"$=" and int(head) >= 0:
            data = sub(reply[nl + 2:nl + 2 + int(head)])
            out.append(kind + b"%d\r\n%s\r\n" % (len(data), data))
            pos = nl + 4 + int(head)
        else:
            out.append(kind + (sub(head) if kind in b"+-" else head) + b"\r\n")
            pos = nl + 2
    return b"".join(out), why


# The cases of every Cases, by name: acl_diff.REDIS_EXPECT is shared by
# the suites run in one pytest process, and each one's entries are checked
# against its own cases when made (Cases.expect); the ACL suite checks the
# others against its own.
REGISTERED = set()


class Cases:
    """A suite's named cases, in order (`items`: (name, script) pairs, for
    pytest's parametrize), and their Redis expectations."""

    def __init__(self):
        self.items = []

    def case(self, name, script):
        assert name not in REGISTERED, "case %s is another suite's too" % name
        REGISTERED.add(name)
        self.items.append((name, script))

    def expect(self, name, line, valkey, redis, why):
        """acl_diff.expect_redis for a case defined above (a misspelt name
        would leave the entry unused)."""
        assert name in dict(self.items), name
        expect_redis(name, line, valkey, redis, why)

    def reworded(self, name, fragment, valkey):
        """Every line of case `name` containing `fragment` answers Valkey's
        `valkey` (bytes, or a function of the line) and Redis's rewording
        of it."""
        script = dict(self.items)[name]
        lines = [st[3] for st in parse_script(script) if fragment in st[3]]
        assert lines, "no line of %s contains %r" % (name, fragment)
        for line in lines:
            v = valkey(line) if callable(valkey) else valkey
            redis, why = reword(v)
            assert why, "nothing to reword in %r" % v
            self.expect(name, line, v, redis, "; ".join(why))


def pair_fixtures(against_valkey, reset):
    """The `threads` and `pair` fixtures of a suite: Tern with one worker
    and with two against valkey-server (or valkey against valkey), each
    case after the ACL suite's reset and `reset`."""
    params = ["valkey"] if against_valkey else [1, 2]

    @pytest.fixture(scope="module", params=params, ids=lambda t: f"t{t}" if t != "valkey" else "vv")
    def threads(request):
        return 1 if request.param == "valkey" else request.param

    @pytest.fixture(scope="module")
    def pair(threads):
        p = acl_diff.Pair(threads, against_valkey, extra_reset=reset)
        yield p
        p.stop()

    return threads, pair


def mark_known(request, name, threads, against_valkey, not_yet, one_worker_busy):
    """Marks a case that must fail on Tern (strict xfail): `not_yet` ones
    (what Tern lacks), and with one worker the `one_worker_busy` ones (with
    one worker nothing runs beside a busy script, where Redis serves its
    clients from the script's hook)."""
    if against_valkey:
        return
    if name in not_yet:
        request.applymarker(pytest.mark.xfail(reason=not_yet[name], strict=True))
    if name in one_worker_busy and threads == 1:
        request.applymarker(pytest.mark.xfail(reason=one_worker_busy[name], strict=True))
